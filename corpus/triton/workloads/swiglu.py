"""SwiGLU: c = silu(a) * b, and its backward (da, db written over the incoming a, b buffers' places)."""
import triton
import triton.language as tl

from .utils import load_row_f32, silu


@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, c_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    a = load_row_f32(a_ptr, row, stride, cols, n_cols, 0.0)
    b = tl.load(b_ptr + row * stride + cols, mask=cols < n_cols, other=0)
    c = silu(a).to(b.dtype) * b
    tl.store(c_ptr + row * stride + cols, c, mask=cols < n_cols)


@triton.jit
def swiglu_bwd_kernel(dc_ptr, a_ptr, b_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    dc = load_row_f32(dc_ptr, row, stride, cols, n_cols, 0.0)
    a = load_row_f32(a_ptr, row, stride, cols, n_cols, 0.0)
    b = load_row_f32(b_ptr, row, stride, cols, n_cols, 0.0)
    sig = tl.sigmoid(a)
    silu_a = a * sig
    db = dc * silu_a
    da = dc * b * (sig + silu_a * (1.0 - sig))
    tl.store(a_ptr + row * stride + cols, da.to(a_ptr.dtype.element_ty), mask=mask)
    tl.store(b_ptr + row * stride + cols, db.to(b_ptr.dtype.element_ty), mask=mask)


def swiglu_fwd(a, b):
    import torch

    n_cols = a.shape[-1]
    a2 = a.view(-1, n_cols)
    b2 = b.view(-1, n_cols)
    c = torch.empty_like(a2)
    swiglu_fwd_kernel[(a2.shape[0],)](a2, b2, c, c.stride(0), n_cols, BLOCK_N=triton.next_power_of_2(n_cols),
                                      num_warps=4)
    return c.view(*a.shape)


def swiglu_bwd(a, b, dc):
    n_cols = dc.shape[-1]
    dc2 = dc.view(-1, n_cols)
    a2 = a.view(-1, n_cols)
    b2 = b.view(-1, n_cols)
    swiglu_bwd_kernel[(dc2.shape[0],)](dc2, a2, b2, dc2.stride(0), n_cols, BLOCK_N=triton.next_power_of_2(n_cols))
    return a2.view(*a.shape), b2.view(*b.shape)
