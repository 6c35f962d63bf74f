"""Row softmax for long rows: a first pass over column blocks keeps a running max and a rescaled running
sum (online softmax), a second pass writes exp(x - max) / sum."""
import triton
import triton.language as tl


@triton.jit
def online_softmax_kernel(x_ptr, y_ptr, stride_row, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_row
    y_row = y_ptr + row * stride_row
    m = tl.full([BLOCK_N], -float("inf"), dtype=tl.float32)
    d = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in tl.range(0, n_cols, BLOCK_N, num_stages=2):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        # lanes that have seen only -inf keep a zero sum
        alpha = tl.where(m_new == -float("inf"), 0.0, tl.exp(m - m_new))
        d = d * alpha + tl.where(x == -float("inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    row_max = tl.max(m, axis=0)
    row_sum = tl.sum(tl.where(m == -float("inf"), 0.0, d * tl.exp(m - row_max)), axis=0)
    inv = 1.0 / row_sum
    for start in tl.range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - row_max) * inv
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x):
    import torch

    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    online_softmax_kernel[(n_rows,)](x, y, x.stride(0), n_cols, BLOCK_N=1024)
    return y
