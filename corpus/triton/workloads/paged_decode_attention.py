"""Decode attention (one query token per sequence) over a paged KV cache with grouped-query heads. The KV
cache is (num_pages, PAGE_SIZE, n_kv_heads, HEAD_DIM); each sequence's block table row lists its pages. One
program per (sequence, query head) walks the pages, loading the page number (a scalar read from memory) to
set the base of each K/V tile."""
import triton
import triton.language as tl


@triton.jit
def paged_decode_kernel(q_ptr, k_cache_ptr, v_cache_ptr, block_table_ptr, seq_lens_ptr, o_ptr, sm_scale,
                        stride_qb, stride_qh, stride_bt, stride_page, stride_tok, stride_kvh,
                        N_KV_GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, PAGE_SIZE: tl.constexpr):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    kv_head = head // N_KV_GROUP
    seq_len = tl.load(seq_lens_ptr + seq)
    offs_d = tl.arange(0, HEAD_DIM)
    offs_t = tl.arange(0, PAGE_SIZE)
    q = tl.load(q_ptr + seq * stride_qb + head * stride_qh + offs_d).to(tl.float32) * sm_scale

    m_i = -float("inf")
    l_i = 0.0
    acc = tl.zeros([HEAD_DIM], dtype=tl.float32)
    n_pages = tl.cdiv(seq_len, PAGE_SIZE)
    for page_idx in range(0, n_pages):
        page = tl.load(block_table_ptr + seq * stride_bt + page_idx).to(tl.int64)
        kv_off = page * stride_page + kv_head * stride_kvh + offs_t[:, None] * stride_tok + offs_d[None, :]
        tok_mask = (page_idx * PAGE_SIZE + offs_t) < seq_len
        k = tl.load(k_cache_ptr + kv_off, mask=tok_mask[:, None], other=0.0).to(tl.float32)
        s = tl.sum(k * q[None, :], axis=1)
        s = tl.where(tok_mask, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=0))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new)
        v = tl.load(v_cache_ptr + kv_off, mask=tok_mask[:, None], other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        m_i = m_new
    out = acc / l_i
    tl.store(o_ptr + seq * stride_qb + head * stride_qh + offs_d, out.to(o_ptr.dtype.element_ty))


def paged_decode(q, k_cache, v_cache, block_table, seq_lens, sm_scale):
    import torch

    batch, n_heads, head_dim = q.shape
    n_kv_heads = k_cache.shape[2]
    o = torch.empty_like(q)
    paged_decode_kernel[(batch, n_heads)](q, k_cache, v_cache, block_table, seq_lens, o, sm_scale,
                                          q.stride(0), q.stride(1), block_table.stride(0), k_cache.stride(0),
                                          k_cache.stride(1), k_cache.stride(2), N_KV_GROUP=n_heads // n_kv_heads,
                                          HEAD_DIM=head_dim, PAGE_SIZE=16)
    return o
