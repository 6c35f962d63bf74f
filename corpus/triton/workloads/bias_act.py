"""Bias add + ReLU over a 2-D activation, tiled; `@triton.heuristics` decides whether the tiles divide the
shape evenly, and the even specialisation drops the bounds masks."""
import triton
import triton.language as tl


@triton.heuristics({
    "EVEN_M": lambda args: args["n_rows"] % args["BLOCK_M"] == 0,
    "EVEN_N": lambda args: args["n_cols"] % args["BLOCK_N"] == 0,
})
@triton.jit
def bias_relu_kernel(x_ptr, bias_ptr, y_ptr, n_rows, n_cols, stride,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, EVEN_M: tl.constexpr, EVEN_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs = rows[:, None] * stride + cols[None, :]
    if EVEN_M and EVEN_N:
        x = tl.load(x_ptr + offs).to(tl.float32)
        bias = tl.load(bias_ptr + cols).to(tl.float32)
        y = tl.maximum(x + bias[None, :], 0.0)
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty))
    else:
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        bias = tl.load(bias_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        y = tl.maximum(x + bias[None, :], 0.0)
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def bias_relu(x, bias):
    import torch

    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    grid = lambda META: (triton.cdiv(n_rows, META["BLOCK_M"]), triton.cdiv(n_cols, META["BLOCK_N"]))
    bias_relu_kernel[grid](x, bias, y, n_rows, n_cols, x.stride(0), BLOCK_M=32, BLOCK_N=128)
    return y
