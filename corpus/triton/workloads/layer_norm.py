"""LayerNorm forward and backward. Forward saves per-row mean and rstd. Backward writes dx and, per
program (a group of rows), fp32 partial sums of dw and db; a second kernel reduces the partials."""
import triton
import triton.language as tl

from .utils import load_row_f32


@triton.jit
def layer_norm_fwd_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, n_cols, eps,
                          BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = load_row_f32(x_ptr, row, stride, cols, n_cols, 0.0)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = xc * rstd * w + b
    tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def layer_norm_bwd_dx_kernel(dx_ptr, dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dw_part_ptr, db_part_ptr,
                             stride, n_rows, n_cols, ROWS_PER_PROGRAM: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dw_acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    db_acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    row_start = pid * ROWS_PER_PROGRAM
    row_end = tl.minimum(row_start + ROWS_PER_PROGRAM, n_rows)
    for row in range(row_start, row_end):
        x = load_row_f32(x_ptr, row, stride, cols, n_cols, 0.0)
        dy = load_row_f32(dy_ptr, row, stride, cols, n_cols, 0.0)
        mean = tl.load(mean_ptr + row)
        rstd = tl.load(rstd_ptr + row)
        xhat = tl.where(mask, (x - mean) * rstd, 0.0)
        wdy = w * dy
        c1 = tl.sum(xhat * wdy, axis=0) / n_cols
        c2 = tl.sum(wdy, axis=0) / n_cols
        dx = (wdy - (xhat * c1 + c2)) * rstd
        tl.store(dx_ptr + row * stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
        dw_acc += dy * xhat
        db_acc += dy
    tl.store(dw_part_ptr + pid * n_cols + cols, dw_acc, mask=mask)
    tl.store(db_part_ptr + pid * n_cols + cols, db_acc, mask=mask)


@triton.jit
def layer_norm_bwd_dwdb_kernel(dw_part_ptr, db_part_ptr, dw_ptr, db_ptr, n_parts, n_cols,
                               BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    dw = tl.zeros([BLOCK_P, BLOCK_N], dtype=tl.float32)
    db = tl.zeros([BLOCK_P, BLOCK_N], dtype=tl.float32)
    for p in range(0, n_parts, BLOCK_P):
        parts = p + tl.arange(0, BLOCK_P)
        mask = (parts[:, None] < n_parts) & (cols[None, :] < n_cols)
        offs = parts[:, None] * n_cols + cols[None, :]
        dw += tl.load(dw_part_ptr + offs, mask=mask, other=0.0)
        db += tl.load(db_part_ptr + offs, mask=mask, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(dw, axis=0).to(dw_ptr.dtype.element_ty), mask=cols < n_cols)
    tl.store(db_ptr + cols, tl.sum(db, axis=0).to(db_ptr.dtype.element_ty), mask=cols < n_cols)


def layer_norm_fwd(x, weight, bias, eps=1e-5):
    import torch

    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    BLOCK_N = triton.next_power_of_2(n_cols)
    layer_norm_fwd_kernel[(n_rows,)](x, y, weight, bias, mean, rstd, x.stride(0), n_cols, eps,
                                     BLOCK_N=BLOCK_N, num_warps=8)
    return y, mean, rstd


def layer_norm_bwd(dy, x, weight, mean, rstd):
    import torch

    n_rows, n_cols = x.shape
    dx = torch.empty_like(x)
    rows_per_program = 16
    n_parts = triton.cdiv(n_rows, rows_per_program)
    dw_part = torch.empty((n_parts, n_cols), dtype=torch.float32, device=x.device)
    db_part = torch.empty((n_parts, n_cols), dtype=torch.float32, device=x.device)
    layer_norm_bwd_dx_kernel[(n_parts,)](dx, dy, x, weight, mean, rstd, dw_part, db_part, x.stride(0), n_rows,
                                         n_cols, ROWS_PER_PROGRAM=16, BLOCK_N=triton.next_power_of_2(n_cols))
    dw = torch.empty_like(weight)
    db = torch.empty_like(weight)
    grid = lambda META: (triton.cdiv(n_cols, META["BLOCK_N"]),)
    layer_norm_bwd_dwdb_kernel[grid](dw_part, db_part, dw, db, n_parts, n_cols, BLOCK_P=32, BLOCK_N=128)
    return dx, dw, db
