"""RoPE on interleaved complex pairs (Llama-4 style): q holds (re, im) pairs, the frequencies are stored as
(cos, sin) pairs per position and split with `tl.split`; q is rotated in place and its pairs joined back with
`tl.join`."""
import triton
import triton.language as tl


@triton.jit
def rope_complex_kernel(q_ptr, freqs_ptr, pos_ptr, q_stride, n_heads, HALF: tl.constexpr, BLOCK_H: tl.constexpr):
    t = tl.program_id(0)
    pos = tl.load(pos_ptr + t)
    d = tl.arange(0, HALF)
    f = tl.load(freqs_ptr + pos * (HALF * 2) + d[:, None] * 2 + tl.arange(0, 2)[None, :])
    cos, sin = tl.split(f)
    h = tl.arange(0, BLOCK_H)
    mask = (h < n_heads)[:, None]
    re_ptrs = q_ptr + t * q_stride + h[:, None] * (HALF * 2) + d[None, :] * 2
    re = tl.load(re_ptrs, mask=mask, other=0.0).to(tl.float32)
    im = tl.load(re_ptrs + 1, mask=mask, other=0.0).to(tl.float32)
    out_re = re * cos[None, :] - im * sin[None, :]
    out_im = re * sin[None, :] + im * cos[None, :]
    out = tl.join(out_re, out_im)  # back to (re, im) pairs: [BLOCK_H, HALF, 2]
    pair_ptrs = q_ptr + t * q_stride + h[:, None, None] * (HALF * 2) + d[None, :, None] * 2 + tl.arange(0, 2)[None, None, :]
    tl.store(pair_ptrs, out.to(q_ptr.dtype.element_ty), mask=mask[:, :, None])


def rope_complex(q, freqs, positions):
    n_tokens, n_heads, head_dim = q.shape
    rope_complex_kernel[(n_tokens,)](q, freqs, positions, q.stride(0), n_heads, HALF=head_dim // 2,
                                     BLOCK_H=triton.next_power_of_2(n_heads))
    return q
