"""Inclusive prefix sum along the rows of a 2-D tensor (e.g. cumulative sequence lengths, cumulative
routing weights): a block-wise `tl.cumsum` plus a running carry across column blocks, accumulated in fp32
(or int32 for integer inputs)."""
import triton
import triton.language as tl


@triton.jit
def row_cumsum_kernel(x_ptr, y_ptr, stride_x, stride_y, n_cols, ACC_DTYPE: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros([1], dtype=ACC_DTYPE)
    for start in tl.range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0).to(ACC_DTYPE)
        y = tl.cumsum(x, axis=0) + carry
        tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(x, axis=0)


def row_cumsum(x):
    import torch

    n_rows, n_cols = x.shape
    if x.dtype in (torch.int32, torch.int64):
        y = torch.empty_like(x)
        row_cumsum_kernel[(n_rows,)](x, y, x.stride(0), y.stride(0), n_cols, ACC_DTYPE=tl.int32, BLOCK_N=512)
    else:
        y = torch.empty(x.shape, dtype=torch.float32, device=x.device)
        row_cumsum_kernel[(n_rows,)](x, y, x.stride(0), y.stride(0), n_cols, ACC_DTYPE=tl.float32, BLOCK_N=512)
    return y
