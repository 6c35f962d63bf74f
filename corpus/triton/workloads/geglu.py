"""GeGLU with the tanh approximation of GELU: c = gelu_tanh(a) * b, tiled over (rows, column blocks), and
the backward pass."""
import triton
import triton.language as tl

from .utils import gelu_tanh, tanh, tile_offsets_2d


@triton.jit
def geglu_fwd_kernel(a_ptr, b_ptr, c_ptr, n_rows, n_cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs, mask = tile_offsets_2d(n_rows, n_cols, BLOCK_M, BLOCK_N)
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(c_ptr + offs, (gelu_tanh(a) * b).to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def geglu_bwd_kernel(dc_ptr, a_ptr, b_ptr, da_ptr, db_ptr, n_rows, n_cols,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs, mask = tile_offsets_2d(n_rows, n_cols, BLOCK_M, BLOCK_N)
    dc = tl.load(dc_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    k = 0.7978845608028654
    t = tanh(k * (a + 0.044715 * a * a * a))
    dgelu = 0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * a * a)
    tl.store(da_ptr + offs, (dc * b * dgelu).to(da_ptr.dtype.element_ty), mask=mask)
    tl.store(db_ptr + offs, (dc * gelu_tanh(a)).to(db_ptr.dtype.element_ty), mask=mask)


def geglu(a, b):
    import torch

    c = torch.empty_like(a)
    geglu_fwd_kernel[(triton.cdiv(a.shape[0], 4), triton.cdiv(a.shape[1], 256))](a, b, c, a.shape[0], a.shape[1],
                                                                                 BLOCK_M=4, BLOCK_N=256)
    return c


def geglu_bwd(dc, a, b):
    import torch

    n_rows, n_cols = a.shape
    da = torch.empty_like(a)
    db = torch.empty_like(b)
    grid = lambda META: (triton.cdiv(n_rows, META["BLOCK_M"]), triton.cdiv(n_cols, META["BLOCK_N"]))
    geglu_bwd_kernel[grid](dc, a, b, da, db, n_rows, n_cols, BLOCK_M=4, BLOCK_N=256)
    return da, db
