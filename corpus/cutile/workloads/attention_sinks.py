"""Prefill attention with attention sinks, as in GPT-OSS: every head has a learned sink logit that joins
the softmax denominator but contributes no value, i.e. O = sum_j exp(s_j) v_j / (exp(sink) + sum_j
exp(s_j)). The online softmax simply starts from m = sink, l = 1 instead of m = -inf, l = 0. Layout is
(batch, heads, seq, head_dim); sinks are f32 per head. CAUSAL masks future keys and WINDOW > 0 adds the
banded sliding-window mask (and skips KV tiles left of the band) used by GPT-OSS's alternating layers."""
import cuda.tile as ct

ConstInt = ct.Constant[int]
ConstBool = ct.Constant[bool]

LOG2E = 1.4426950408889634


@ct.kernel
def attn_sinks_fwd_kernel(Q, K, V, sinks, O, qk_scale: float, BM: ConstInt, BN: ConstInt, D: ConstInt,
                          WINDOW: ConstInt, CAUSAL: ConstBool):
    pid_m = ct.bid(0)
    bh = ct.bid(1)
    num_heads = Q.shape[1]
    batch = bh // num_heads
    head = bh % num_heads
    seq_kv = K.shape[2]
    scale = qk_scale * LOG2E
    sink = ct.load(sinks, index=(head,), shape=()).item() * LOG2E
    q = ct.load(Q, index=(batch, head, pid_m, 0), shape=(1, 1, BM, D), padding_mode=ct.PaddingMode.ZERO)
    q = q.reshape((BM, D))
    offs_m = pid_m * BM + ct.arange(BM, dtype=ct.int32)
    m_i = ct.full((BM, 1), sink, dtype=ct.float32)
    l_i = ct.ones((BM, 1), dtype=ct.float32)
    acc = ct.zeros((BM, D), dtype=ct.float32)
    lo = 0
    hi = ct.cdiv(seq_kv, BN)
    if CAUSAL:
        hi = min(hi, ct.cdiv((pid_m + 1) * BM, BN))
    if WINDOW > 0:
        lo = max(0, (pid_m * BM - WINDOW + 1) // BN)
    for j in range(lo, hi):
        k = ct.load(K, index=(batch, head, j, 0), shape=(1, 1, BN, D), padding_mode=ct.PaddingMode.ZERO)
        s = ct.mma(q, ct.transpose(k.reshape((BN, D))), ct.zeros((BM, BN), dtype=ct.float32)) * scale
        offs_n = j * BN + ct.arange(BN, dtype=ct.int32)
        mask = offs_n[None, :] < seq_kv
        if CAUSAL:
            mask = mask & (offs_m[:, None] >= offs_n[None, :])
        if WINDOW > 0:
            mask = mask & (offs_m[:, None] - offs_n[None, :] < WINDOW)
        s = ct.where(mask, s, -float("inf"))
        m_new = ct.maximum(m_i, ct.max(s, axis=1, keepdims=True))
        p = ct.exp2(s - m_new)
        alpha = ct.exp2(m_i - m_new)
        l_i = l_i * alpha + ct.sum(p, axis=1, keepdims=True)
        v = ct.load(V, index=(batch, head, j, 0), shape=(1, 1, BN, D), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(p.astype(V.dtype), v.reshape((BN, D)), acc * alpha)
        m_i = m_new
    out = ct.truediv(acc, l_i, rounding_mode=ct.RoundingMode.APPROX, flush_to_zero=True)
    ct.store(O, index=(batch, head, pid_m, 0), tile=out.reshape((1, 1, BM, D)).astype(O.dtype))


def attention_with_sinks(Q, K, V, sinks, O, qk_scale):
    import torch

    grid = (ct.cdiv(Q.shape[2], 64), Q.shape[0] * Q.shape[1], 1)
    ct.launch(torch.cuda.current_stream(), grid, attn_sinks_fwd_kernel,
              (Q, K, V, sinks, O, qk_scale, 64, 64, 64, 0, True))
    ct.launch(torch.cuda.current_stream(), grid, attn_sinks_fwd_kernel,
              (Q, K, V, sinks, O, qk_scale, 64, 64, 64, 128, True))
    ct.launch(torch.cuda.current_stream(), grid, attn_sinks_fwd_kernel,
              (Q, K, V, sinks, O, qk_scale, 64, 64, 64, 0, False))
