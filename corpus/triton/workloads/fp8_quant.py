"""Per-row (per-token) dynamic FP8 quantisation: scale = max|x| / 448 (e4m3's largest finite value), q =
clamp(x / scale) cast to float8e4nv; scales are written for the dequantising GEMM."""
import triton
import triton.language as tl

FP8_E4M3_MAX = 448.0


@triton.jit
def fp8_row_quant_kernel(x_ptr, q_ptr, scale_ptr, stride_x, stride_q, n_cols, FP8_MAX: tl.constexpr,
                         BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    amax = tl.maximum(tl.max(tl.abs(x), axis=0), 1e-12)
    scale = amax / FP8_MAX
    q = tl.clamp(x / scale, -FP8_MAX, FP8_MAX)
    tl.store(q_ptr + row * stride_q + cols, q.to(tl.float8e4nv), mask=mask)
    tl.store(scale_ptr + row, scale)


def fp8_quantize_rows(x):
    import torch

    n_rows, n_cols = x.shape
    q = torch.empty((n_rows, n_cols), dtype=torch.float8_e4m3fn, device=x.device)
    scales = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    fp8_row_quant_kernel[(n_rows,)](x, q, scales, x.stride(0), q.stride(0), n_cols, FP8_MAX=FP8_E4M3_MAX,
                                    BLOCK_N=triton.next_power_of_2(n_cols))
    return q, scales
