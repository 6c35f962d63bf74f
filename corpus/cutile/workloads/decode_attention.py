"""Split-KV (flash-decoding) attention for the decode phase: one new query token per sequence attends to a
(batch, kv_heads, max_seq, head_dim) KV cache whose valid length comes from an int32 seq_lens array. Each
block handles one (sequence, kv-head, KV split) and all GROUP query heads that share the kv-head (GQA), so
the GROUP x BN score tile goes through ct.mma; it writes an f32 partial output and its log2-sum-exp. The
combine kernel merges the NUM_SPLITS partials of each (sequence, head) with weights exp2(lse_s - max)."""
import cuda.tile as ct

ConstInt = ct.Constant[int]

LOG2E = 1.4426950408889634


@ct.kernel
def decode_attn_split_kv_kernel(Q, K, V, seq_lens, O_part, lse_part, sm_scale: float, BN: ConstInt,
                                D: ConstInt, GROUP: ConstInt, NUM_SPLITS: ConstInt):
    b = ct.bid(0)
    kv_head = ct.bid(1)
    split = ct.bid(2)
    seq_len = ct.load(seq_lens, index=(b,), shape=()).item()
    num_tiles = ct.cdiv(seq_len, BN)
    tiles_per_split = ct.cdiv(num_tiles, NUM_SPLITS)
    t_start = split * tiles_per_split
    t_end = min(t_start + tiles_per_split, num_tiles)
    scale = sm_scale * LOG2E
    q = ct.load(Q, index=(b, kv_head, 0), shape=(1, GROUP, D)).reshape((GROUP, D))
    m_i = ct.full((GROUP, 1), -float("inf"), dtype=ct.float32)
    l_i = ct.zeros((GROUP, 1), dtype=ct.float32)
    acc = ct.zeros((GROUP, D), dtype=ct.float32)
    for j in range(t_start, t_end):
        k = ct.load(K, index=(b, kv_head, j, 0), shape=(1, 1, BN, D), padding_mode=ct.PaddingMode.ZERO)
        s = ct.mma(q, ct.transpose(k.reshape((BN, D))), ct.zeros((GROUP, BN), dtype=ct.float32))
        offs_n = j * BN + ct.arange(BN, dtype=ct.int32)
        s = ct.where(offs_n[None, :] < seq_len, s * scale, -float("inf"))
        m_new = ct.maximum(m_i, ct.max(s, axis=1, keepdims=True))
        p = ct.exp2(s - m_new)
        alpha = ct.exp2(m_i - m_new)
        l_i = l_i * alpha + ct.sum(p, axis=1, keepdims=True)
        v = ct.load(V, index=(b, kv_head, j, 0), shape=(1, 1, BN, D), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(p.astype(V.dtype), v.reshape((BN, D)), acc * alpha)
        m_i = m_new
    out = ct.where(l_i > 0.0, acc / l_i, 0.0)
    lse = m_i + ct.log2(l_i)
    ct.store(O_part, index=(b, kv_head, split, 0), tile=out.reshape((1, GROUP, 1, D)))
    ct.store(lse_part, index=(b, kv_head, split), tile=lse.reshape((1, GROUP, 1)))


@ct.kernel
def decode_attn_combine_kernel(O_part, lse_part, O, NUM_SPLITS: ConstInt, D: ConstInt):
    b = ct.bid(0)
    head = ct.bid(1)
    lse = ct.load(lse_part, index=(b, head, 0), shape=(1, 1, NUM_SPLITS)).reshape((NUM_SPLITS, 1))
    o = ct.load(O_part, index=(b, head, 0, 0), shape=(1, 1, NUM_SPLITS, D)).reshape((NUM_SPLITS, D))
    lse_max = ct.max(lse, axis=0, keepdims=True)
    w = ct.exp2(lse - lse_max)
    num = ct.sum(o * w, axis=0, keepdims=True)
    den = ct.sum(w, axis=0, keepdims=True)
    ct.store(O, index=(b, head, 0), tile=(num / den).reshape((1, 1, D)).astype(O.dtype))


def decode_attention(Q, K, V, seq_lens, O_part, lse_part, O, sm_scale):
    import torch

    grid = (Q.shape[0], K.shape[1], 8)
    ct.launch(torch.cuda.current_stream(), grid, decode_attn_split_kv_kernel,
              (Q, K, V, seq_lens, O_part, lse_part, sm_scale, 64, 128, 8, 8))
    grid = (Q.shape[0], K.shape[1], 16)  # one block per split
    ct.launch(torch.cuda.current_stream(), grid, decode_attn_split_kv_kernel,
              (Q, K, V, seq_lens, O_part, lse_part, sm_scale, 128, 64, 16, 16))
    grid = (Q.shape[0], Q.shape[1], 1)
    ct.launch(torch.cuda.current_stream(), grid, decode_attn_combine_kernel, (O_part, lse_part, O, 8, 128))
    ct.launch(torch.cuda.current_stream(), grid, decode_attn_combine_kernel, (O_part, lse_part, O, 16, 64))
