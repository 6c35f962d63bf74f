"""Row softmax: one program per row, the whole row in one block (BLOCK_N >= n_cols)."""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    y = num / den
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    import torch

    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    BLOCK_N = triton.next_power_of_2(n_cols)
    num_warps = 4 if BLOCK_N <= 2048 else 8
    softmax_kernel[(n_rows,)](y, x, x.stride(0), y.stride(0), n_cols, BLOCK_N=BLOCK_N, num_warps=num_warps)
    return y


@triton.jit
def row_normalize_kernel(out_ptr, in_ptr, row_stride, n_cols, BLOCK_N: tl.constexpr):
    # the split-K combine's last step: a row divided by its sum plus a small constant, in the input's own dtype
    # (a float literal meeting a rank-0 tile of the pointer's element type)
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * row_stride + cols, mask=mask, other=0.0)
    total = tl.sum(x, axis=0)
    tl.store(out_ptr + row * row_stride + cols, x / (total + 1e-6), mask=mask)
