"""RMSNorm forward y = x * rsqrt(mean(x^2) + eps) * (offset + w) (offset = 1 for Gemma-style weights), and
backward: dx per row, dw accumulated across rows with fp32 atomics."""
import triton
import triton.language as tl

from .utils import load_row_f32


@triton.jit
def rms_norm_fwd_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, x_stride, y_stride, n_cols, eps,
                        OFFSET: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    x = load_row_f32(x_ptr, row, x_stride, cols, n_cols, 0.0)
    w = load_row_f32(w_ptr, 0, 0, cols, n_cols, 0.0)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    y = x * rstd * (OFFSET + w)
    tl.store(y_ptr + row * y_stride + cols, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def rms_norm_bwd_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_ptr, stride, n_cols,
                        OFFSET: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    dy = load_row_f32(dy_ptr, row, stride, cols, n_cols, 0.0)
    x = load_row_f32(x_ptr, row, stride, cols, n_cols, 0.0)
    w = load_row_f32(w_ptr, 0, 0, cols, n_cols, 0.0) + OFFSET
    rstd = tl.load(rstd_ptr + row)
    xhat = x * rstd
    wdy = w * dy
    dx = rstd * (wdy - xhat * (tl.sum(wdy * xhat, axis=0) / n_cols))
    tl.store(dx_ptr + row * stride + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
    tl.atomic_add(dw_ptr + cols, dy * xhat, mask=mask, sem="relaxed")


def rms_norm(x, weight, eps=1e-6, gemma=False):
    import torch

    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    rstd = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    BLOCK_N = triton.next_power_of_2(n_cols)
    if gemma:
        rms_norm_fwd_kernel[(n_rows,)](x, weight, y, rstd, x.stride(0), y.stride(0), n_cols, eps,
                                       OFFSET=1.0, BLOCK_N=BLOCK_N)
    else:
        rms_norm_fwd_kernel[(n_rows,)](x, weight, y, rstd, x.stride(0), y.stride(0), n_cols, eps,
                                       OFFSET=0.0, BLOCK_N=BLOCK_N)
    return y, rstd


def rms_norm_bwd(dy, x, weight, rstd):
    import torch

    n_rows, n_cols = x.shape
    dx = torch.empty_like(x)
    dw = torch.zeros(n_cols, dtype=torch.float32, device=x.device)
    rms_norm_bwd_kernel[(n_rows,)](dy, x, weight, rstd, dx, dw, x.stride(0), n_cols,
                                   OFFSET=0.0, BLOCK_N=triton.next_power_of_2(n_cols))
    return dx, dw.to(weight.dtype)


@triton.jit
def rms_norm_rows_kernel(X_ptr, X_row_stride, Y_ptr, Y_row_stride, W_ptr, RSTD_ptr, RSTD_row_stride, n_cols, eps,
                         BLOCK_SIZE: tl.constexpr):
    # written the way liger-kernel writes its row kernels: each pointer moved to the program's row first, the
    # row's statistic stored at a strided slot (a column of a wider buffer)
    row_idx = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    X_ptr += row_idx * X_row_stride
    Y_ptr += row_idx * Y_row_stride
    X_row = tl.load(X_ptr + col_offsets, mask=mask, other=0.0).to(tl.float32)
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(X_row * X_row, axis=0) / n_cols + eps)
    tl.store(RSTD_ptr + row_idx * RSTD_row_stride, rstd)
    tl.store(Y_ptr + col_offsets, (X_row * rstd * W_row).to(Y_ptr.dtype.element_ty), mask=mask)


def rms_norm_rows(x, weight, stats, eps=1e-6):
    """`stats[:, 0]` gets each row's 1/rms (a column of the caller's statistics buffer)."""
    import torch

    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    rms_norm_rows_kernel[(n_rows,)](x, x.stride(0), y, y.stride(0), weight, stats, stats.stride(0), n_cols, eps,
                                    BLOCK_SIZE=triton.next_power_of_2(n_cols))
    return y
