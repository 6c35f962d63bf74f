"""Depthwise causal 1-D convolution over time (Mamba-style short convolution), x laid out (batch, dim, seq):
each output step sums WIDTH taps of past inputs; the taps are unrolled with `tl.static_range`. Optional
SiLU activation."""
import triton
import triton.language as tl

from .utils import silu


@triton.jit
def causal_conv1d_kernel(x_ptr, w_ptr, bias_ptr, y_ptr, dim, seq_len, stride_b, stride_d,
                         WIDTH: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_T: tl.constexpr,
                         SILU: tl.constexpr):
    pid_b = tl.program_id(0)
    pid_d = tl.program_id(1)
    pid_t = tl.program_id(2)
    ch = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    ch_mask = ch < dim
    base = x_ptr + pid_b * stride_b + ch[:, None] * stride_d
    acc = tl.zeros((BLOCK_D, BLOCK_T), dtype=tl.float32)
    acc += tl.load(bias_ptr + ch, mask=ch_mask, other=0.0).to(tl.float32)[:, None]
    for j in tl.static_range(WIDTH):
        # tap j multiplies x[t - (WIDTH - 1 - j)]
        src = t - (WIDTH - 1 - j)
        w = tl.load(w_ptr + ch * WIDTH + j, mask=ch_mask, other=0.0).to(tl.float32)
        x = tl.load(base + src[None, :], mask=ch_mask[:, None] & (src[None, :] >= 0) & (src[None, :] < seq_len),
                    other=0.0).to(tl.float32)
        acc += w[:, None] * x
    if SILU:
        acc = silu(acc)
    out = y_ptr + pid_b * stride_b + ch[:, None] * stride_d + t[None, :]
    tl.store(out, acc.to(y_ptr.dtype.element_ty), mask=ch_mask[:, None] & (t[None, :] < seq_len))


def causal_conv1d(x, weight, bias, activation=True):
    import torch

    batch, dim, seq_len = x.shape
    width = weight.shape[1]
    y = torch.empty_like(x)
    grid = lambda META: (batch, triton.cdiv(dim, META["BLOCK_D"]), triton.cdiv(seq_len, META["BLOCK_T"]))
    if activation:
        causal_conv1d_kernel[grid](x, weight, bias, y, dim, seq_len, x.stride(0), x.stride(1), WIDTH=width,
                                   BLOCK_D=64, BLOCK_T=64, SILU=True)
    else:
        causal_conv1d_kernel[grid](x, weight, bias, y, dim, seq_len, x.stride(0), x.stride(1), WIDTH=4,
                                   BLOCK_D=64, BLOCK_T=64, SILU=False)
    return y
