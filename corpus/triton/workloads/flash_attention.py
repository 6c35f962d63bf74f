"""Flash attention forward, (batch, heads, seq, head_dim) layout: one program per (query block, batch*head),
online softmax in base 2 (scores pre-scaled by log2(e)), optional causal mask, log-sum-exp saved for the
backward pass."""
import triton
import triton.language as tl

from .utils import LOG2E


@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, sm_scale, n_heads, seq_len,
                    stride_b, stride_h, stride_s,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, IS_CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // n_heads
    h = bh % n_heads
    base = b.to(tl.int64) * stride_b + h.to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)

    q = tl.load(q_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :], mask=offs_m[:, None] < seq_len,
                other=0.0)
    qk_scale = sm_scale * LOG2E
    m_i = tl.full([BLOCK_M], -float("inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

    if IS_CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, seq_len)
    else:
        hi = seq_len
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        kv_mask = cols[:, None] < seq_len
        k = tl.load(k_ptr + base + cols[:, None] * stride_s + offs_d[None, :], mask=kv_mask, other=0.0)
        qk = tl.dot(q, tl.trans(k)) * qk_scale
        valid = cols[None, :] < seq_len
        if IS_CAUSAL:
            valid = valid & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(valid, qk, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        alpha = tl.math.exp2(m_i - m_new)
        p = tl.math.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + base + cols[:, None] * stride_s + offs_d[None, :], mask=kv_mask, other=0.0)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new

    acc = acc / l_i[:, None]
    row_mask = offs_m < seq_len
    tl.store(lse_ptr + bh * seq_len + offs_m, (m_i + tl.math.log2(l_i)) / LOG2E, mask=row_mask)
    tl.store(o_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=row_mask[:, None])


def attention(q, k, v, causal, sm_scale):
    import torch

    batch, n_heads, seq_len, head_dim = q.shape
    o = torch.empty_like(q)
    lse = torch.empty((batch, n_heads, seq_len), device=q.device, dtype=torch.float32)
    grid = lambda META: (triton.cdiv(seq_len, META["BLOCK_M"]), batch * n_heads)
    if causal:
        attn_fwd_kernel[grid](q, k, v, o, lse, sm_scale, n_heads, seq_len, q.stride(0), q.stride(1), q.stride(2),
                              HEAD_DIM=head_dim, BLOCK_M=128, BLOCK_N=64, IS_CAUSAL=True, num_warps=8, num_stages=3)
    else:
        attn_fwd_kernel[grid](q, k, v, o, lse, sm_scale, n_heads, seq_len, q.stride(0), q.stride(1), q.stride(2),
                              HEAD_DIM=head_dim, BLOCK_M=128, BLOCK_N=64, IS_CAUSAL=False, num_warps=8, num_stages=3)
    return o, lse
