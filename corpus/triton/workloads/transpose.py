"""Index-math kernels: a 2-D transpose over a flat index (row = i // n_cols, col = i % n_cols) and a
circular shift along the last axis (torch.roll), where the source column is (col - shift) % n, C-style, so
negative remainders are wrapped with `tl.where`."""
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_rows * n_cols
    # offs indexes the output (n_cols, n_rows)
    out_row = offs // n_rows
    out_col = offs % n_rows
    x = tl.load(x_ptr + out_col * n_cols + out_row, mask=mask)
    tl.store(y_ptr + offs, x, mask=mask)


@triton.jit
def roll_kernel(x_ptr, y_ptr, n_rows, n_cols, shift, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    src = (cols - shift) % n_cols
    src = tl.where(src < 0, src + n_cols, src)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * n_cols + src[None, :], mask=mask)
    tl.store(y_ptr + rows[:, None] * n_cols + cols[None, :], x, mask=mask)


def transpose(x):
    import torch

    n_rows, n_cols = x.shape
    y = torch.empty((n_cols, n_rows), dtype=x.dtype, device=x.device)
    transpose_kernel[(triton.cdiv(n_rows * n_cols, 1024),)](x, y, n_rows, n_cols, BLOCK=1024)
    return y


def roll(x, shift):
    import torch

    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    grid = (triton.cdiv(n_rows, 16), triton.cdiv(n_cols, 128))
    roll_kernel[grid](x, y, n_rows, n_cols, shift, BLOCK_M=16, BLOCK_N=128)
    return y
