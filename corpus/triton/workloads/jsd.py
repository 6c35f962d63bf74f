"""Generalised Jensen-Shannon divergence between a student's and a teacher's log-probabilities (beta
weights the mixture; beta = 0 is forward KL(P||Q), beta = 1 reverse KL), loss and gradient with respect to
the student's log-probabilities in one pass, per row."""
import triton
import triton.language as tl


@triton.jit
def jsd_kernel(x_ptr, y_ptr, loss_ptr, dx_ptr, stride, n_cols, n_rows, beta,
               BLOCK_N: tl.constexpr):
    # x: student log q, y: teacher log p
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride
    y_row = y_ptr + row * stride
    total = 0.0
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.load(y_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
        q = tl.exp(x)
        p = tl.exp(y)
        if beta == 0.0:  # forward KL: sum p (log p - log q)
            loss = tl.where(mask, p * (y - x), 0.0)
            dx = -p
        elif beta == 1.0:  # reverse KL: sum q (log q - log p)
            loss = tl.where(mask, q * (x - y), 0.0)
            dx = q * (x - y + 1.0)
        else:
            m = beta * p + (1.0 - beta) * q
            log_m = tl.log(m)
            loss = tl.where(mask, beta * p * (y - log_m) + (1.0 - beta) * q * (x - log_m), 0.0)
            dx = (1.0 - beta) * q * (x - log_m)
        total += tl.sum(loss, axis=0)
        tl.store(dx_ptr + row * stride + cols, (dx / n_rows).to(dx_ptr.dtype.element_ty), mask=mask)
    tl.store(loss_ptr + row, total / n_rows)


def jsd(student_logp, teacher_logp, beta=0.5):
    import torch

    n_rows, n_cols = student_logp.shape
    loss = torch.empty(n_rows, dtype=torch.float32, device=student_logp.device)
    dx = torch.empty_like(student_logp)
    BLOCK_N = min(8192, triton.next_power_of_2(n_cols))
    jsd_kernel[(n_rows,)](student_logp, teacher_logp, loss, dx, student_logp.stride(0), n_cols, n_rows, beta,
                          BLOCK_N=BLOCK_N)
    return loss.sum(), dx
