"""Rotary position embedding applied in place to q and k laid out (tokens, heads, head_dim), rotate-half
convention: the two halves of each head are loaded separately and rotated with cos/sin rows picked by the
token's position."""
import triton
import triton.language as tl


@triton.jit
def _rotate_half(base, mask, cos, sin, HALF: tl.constexpr):
    x1 = tl.load(base, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(base + HALF, mask=mask, other=0.0).to(tl.float32)
    tl.store(base, (x1 * cos - x2 * sin).to(base.dtype.element_ty), mask=mask)
    tl.store(base + HALF, (x2 * cos + x1 * sin).to(base.dtype.element_ty), mask=mask)


@triton.jit
def rope_kernel(q_ptr, k_ptr, cos_ptr, sin_ptr, pos_ptr, q_token_stride, k_token_stride, cs_stride,
                n_q_heads, n_k_heads, HEAD_DIM: tl.constexpr, BLOCK_H: tl.constexpr):
    token = tl.program_id(0)
    pos = tl.load(pos_ptr + token)
    half = tl.arange(0, HEAD_DIM // 2)
    cos = tl.load(cos_ptr + pos * cs_stride + half).to(tl.float32)
    sin = tl.load(sin_ptr + pos * cs_stride + half).to(tl.float32)
    heads = tl.arange(0, BLOCK_H)
    head_offs = heads[:, None] * HEAD_DIM + half[None, :]
    _rotate_half(q_ptr + token * q_token_stride + head_offs, heads[:, None] < n_q_heads, cos, sin, HEAD_DIM // 2)
    _rotate_half(k_ptr + token * k_token_stride + head_offs, heads[:, None] < n_k_heads, cos, sin, HEAD_DIM // 2)


def apply_rope(q, k, cos, sin, positions):
    n_tokens, n_q_heads, head_dim = q.shape
    n_k_heads = k.shape[1]
    BLOCK_H = triton.next_power_of_2(max(n_q_heads, n_k_heads))
    rope_kernel[(n_tokens,)](q, k, cos, sin, positions, q.stride(0), k.stride(0), cos.stride(0),
                             n_q_heads, n_k_heads, HEAD_DIM=head_dim, BLOCK_H=BLOCK_H)
    return q, k


def apply_rope_llama(q, k, cos, sin, positions):
    n_tokens = q.shape[0]
    rope_kernel[(n_tokens,)](q, k, cos, sin, positions, q.stride(0), k.stride(0), cos.stride(0),
                             32, 8, HEAD_DIM=128, BLOCK_H=32)
    return q, k
