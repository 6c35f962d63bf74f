"""FlashAttention-style prefill attention, O = softmax(Q K^T * scale [+ causal mask]) V, for Q/O of shape
(batch, q_heads, seq, head_dim) and K/V of shape (batch, kv_heads, seq, head_dim) with grouped-query
attention (QUERY_GROUP q-heads share one kv-head). Each block owns BM query rows of one (batch, head); it
streams BN-row K/V tiles, keeps the running row max / sum in the exp2 domain (online softmax), rescales the
f32 accumulator, and with CAUSAL stops at the diagonal tile and masks above it with arange + where."""
import cuda.tile as ct

ConstInt = ct.Constant[int]
ConstBool = ct.Constant[bool]

LOG2E = 1.4426950408889634


@ct.kernel
def flash_attn_fwd_kernel(Q, K, V, O, qk_scale: float, BM: ConstInt, BN: ConstInt, D: ConstInt,
                          QUERY_GROUP: ConstInt, CAUSAL: ConstBool):
    pid_m = ct.bid(0)
    bh = ct.bid(1)
    num_q_heads = Q.shape[1]
    batch = bh // num_q_heads
    head = bh % num_q_heads
    kv_head = head // QUERY_GROUP
    seq_kv = K.shape[2]
    scale = qk_scale * LOG2E
    q = ct.load(Q, index=(batch, head, pid_m, 0), shape=(1, 1, BM, D), padding_mode=ct.PaddingMode.ZERO)
    q = q.reshape((BM, D))
    offs_m = pid_m * BM + ct.arange(BM, dtype=ct.int32)
    m_i = ct.full((BM, 1), -float("inf"), dtype=ct.float32)
    l_i = ct.zeros((BM, 1), dtype=ct.float32)
    acc = ct.zeros((BM, D), dtype=ct.float32)
    num_kv_tiles = ct.cdiv(seq_kv, BN)
    if CAUSAL:
        num_kv_tiles = min(num_kv_tiles, ct.cdiv((pid_m + 1) * BM, BN))
    for j in range(num_kv_tiles):
        k = ct.load(K, index=(batch, kv_head, j, 0), shape=(1, 1, BN, D), padding_mode=ct.PaddingMode.ZERO)
        s = ct.mma(q, ct.transpose(k.reshape((BN, D))), ct.zeros((BM, BN), dtype=ct.float32))
        offs_n = j * BN + ct.arange(BN, dtype=ct.int32)
        mask = offs_n[None, :] < seq_kv
        if CAUSAL:
            mask = mask & (offs_m[:, None] >= offs_n[None, :])
        s = ct.where(mask, s * scale, -float("inf"))
        m_new = ct.maximum(m_i, ct.max(s, axis=1, keepdims=True))
        p = ct.exp2(s - m_new)
        alpha = ct.exp2(m_i - m_new)
        l_i = l_i * alpha + ct.sum(p, axis=1, keepdims=True)
        v = ct.load(V, index=(batch, kv_head, j, 0), shape=(1, 1, BN, D), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(p.astype(V.dtype), v.reshape((BN, D)), acc * alpha)
        m_i = m_new
    out = ct.truediv(acc, l_i, rounding_mode=ct.RoundingMode.APPROX, flush_to_zero=True)
    ct.store(O, index=(batch, head, pid_m, 0), tile=out.reshape((1, 1, BM, D)).astype(O.dtype))


def flash_attention(Q, K, V, O, qk_scale):
    import torch

    grid = (ct.cdiv(Q.shape[2], 128), Q.shape[0] * Q.shape[1], 1)
    ct.launch(torch.cuda.current_stream(), grid, flash_attn_fwd_kernel, (Q, K, V, O, qk_scale, 128, 64, 128, 1, True))
    ct.launch(torch.cuda.current_stream(), grid, flash_attn_fwd_kernel, (Q, K, V, O, qk_scale, 128, 64, 128, 4, False))
    grid = (ct.cdiv(Q.shape[2], 64), Q.shape[0] * Q.shape[1], 1)
    ct.launch(torch.cuda.current_stream(), grid, flash_attn_fwd_kernel, (Q, K, V, O, qk_scale, 64, 64, 64, 8, True))
