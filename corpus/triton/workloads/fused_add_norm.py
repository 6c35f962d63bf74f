"""Fused residual add + RMSNorm, as serving stacks call it between layers: h = x + alpha * residual (the
residual is None on the first layer), written back for the next layer when asked (`h_out` may be None), then
y = h * rsqrt(mean(h^2) + eps) * w, where a weightless norm passes w = None. Optional pointers are tested with
`is None` in the kernel: Triton compiles one specialization per None pattern."""
import triton
import triton.language as tl


@triton.jit
def fused_add_rms_norm_kernel(x_ptr, res_ptr, h_out_ptr, w_ptr, y_ptr, stride, n_cols, eps,
                              ALPHA: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x_ptr += row * stride
    h = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    if res_ptr is not None:
        res_ptr += row * stride  # an int64 offset inside the branch: the pointer keeps its type
        r = tl.load(res_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        if ALPHA != 1.0:
            r = r * ALPHA
        h = h + r
    if h_out_ptr is not None:
        tl.store(h_out_ptr + row * stride + cols, h.to(h_out_ptr.dtype.element_ty), mask=mask)
    rstd = tl.rsqrt(tl.sum(h * h, axis=0) / n_cols + eps)
    y = h * rstd
    if w_ptr is None:
        out = y
    else:
        out = y * tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * stride + cols, out.to(y_ptr.dtype.element_ty), mask=mask)


def fused_add_rms_norm(x, residual=None, weight=None, eps=1e-6, alpha=1.0, write_sum=True):
    import torch

    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    h_out = torch.empty_like(x) if write_sum else None
    fused_add_rms_norm_kernel[(n_rows,)](x, residual, h_out, weight, y, x.stride(0), n_cols, eps,
                                         ALPHA=alpha, BLOCK_N=triton.next_power_of_2(n_cols))
    return y, h_out
