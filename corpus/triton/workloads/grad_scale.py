"""A norm-backward step written the way training kernels write it: the upstream gradient, in its own dtype,
times a recomputed activation cast back to the input dtype (`X_DTYPE`, passed from the host), so the
product's dtype is Triton's promotion of the two (f16 * f16 stays f16, f32 stays f32)."""
import triton
import triton.language as tl


@triton.jit
def grad_scale_kernel(dy_ptr, x_ptr, dx_ptr, stride, n_cols, X_DTYPE: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    dy = tl.load(dy_ptr + row * stride + cols, mask=mask, other=0.0)
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    dx = dy * (x * tl.sigmoid(x)).to(X_DTYPE)
    tl.store(dx_ptr + row * stride + cols, dx, mask=mask)


def grad_scale(dy, x):
    import torch

    n_rows, n_cols = x.shape
    dx = torch.empty_like(x)
    x_dtype = {torch.float16: tl.float16, torch.bfloat16: tl.bfloat16}.get(x.dtype, tl.float32)
    grad_scale_kernel[(n_rows,)](dy, x, dx, x.stride(0), n_cols, X_DTYPE=x_dtype,
                                 BLOCK_N=triton.next_power_of_2(n_cols))
    return dx
