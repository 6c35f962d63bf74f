"""Cross entropy over a large vocabulary, forward and backward fused: one program per row computes the
logsumexp with an online pass over vocabulary blocks, writes the loss, then overwrites the logits with the
gradient (in place). Supports ignore_index and label smoothing; the mean reduction divides by the number of
non-ignored rows."""
import triton
import triton.language as tl


@triton.jit
def cross_entropy_kernel(logits_ptr, logits_stride, target_ptr, loss_ptr, n_cols, n_non_ignore,
                         ignore_index, label_smoothing, BLOCK_V: tl.constexpr, HAS_SMOOTHING: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + row * logits_stride
    target = tl.load(target_ptr + row)
    if target == ignore_index:
        for start in range(0, n_cols, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            tl.store(row_ptr + cols, tl.zeros([BLOCK_V], dtype=tl.float32).to(logits_ptr.dtype.element_ty),
                     mask=cols < n_cols)
        tl.store(loss_ptr + row, 0.0)
        return

    m = -float("inf")
    d = 0.0
    sum_x = 0.0  # sum of logits, for the smoothing term
    for start in range(0, n_cols, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(row_ptr + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
        if HAS_SMOOTHING:
            sum_x += tl.sum(tl.where(cols < n_cols, x, 0.0), axis=0)
    lse = m + tl.log(d)

    x_target = tl.load(row_ptr + target).to(tl.float32)
    loss = lse - x_target
    if HAS_SMOOTHING:
        eps = label_smoothing / n_cols
        loss = loss * (1.0 - label_smoothing) + (n_cols * lse - sum_x) * eps
    tl.store(loss_ptr + row, loss / n_non_ignore)

    for start in range(0, n_cols, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        mask = cols < n_cols
        x = tl.load(row_ptr + cols, mask=mask, other=-float("inf")).to(tl.float32)
        p = tl.exp(x - lse)
        if HAS_SMOOTHING:
            grad = p - (1.0 - label_smoothing) * (cols == target) - label_smoothing / n_cols
        else:
            grad = tl.where(cols == target, p - 1.0, p)
        tl.store(row_ptr + cols, (grad / n_non_ignore).to(logits_ptr.dtype.element_ty), mask=mask)


def cross_entropy_fwd_bwd(logits, target, ignore_index=-100, label_smoothing=0.0):
    import torch

    n_rows, vocab = logits.shape
    loss = torch.empty(n_rows, dtype=torch.float32, device=logits.device)
    n_non_ignore = (target != ignore_index).sum().item()
    BLOCK_V = min(4096, triton.next_power_of_2(vocab))
    if label_smoothing > 0.0:
        cross_entropy_kernel[(n_rows,)](logits, logits.stride(0), target, loss, vocab, n_non_ignore, ignore_index,
                                        label_smoothing, BLOCK_V=BLOCK_V, HAS_SMOOTHING=True, num_warps=16)
    else:
        cross_entropy_kernel[(n_rows,)](logits, logits.stride(0), target, loss, vocab, n_non_ignore, ignore_index,
                                        label_smoothing, BLOCK_V=BLOCK_V, HAS_SMOOTHING=False, num_warps=16)
    return loss.sum(), logits


@triton.jit
def token_logprob_kernel(LOGITS, INPUT_IDS, LOGP, L, N, BLOCK_N: tl.constexpr):
    # log_softmax(logits[b, l])[ids[b, l]] for RL losses, one program per (sequence, position), written the way
    # such kernels are: every pointer moved to the program's row first, the result at its (b, l) slot
    off_b = tl.program_id(0).cast(tl.int64)
    off_l = tl.program_id(1).cast(tl.int64)
    LOGITS += off_b * L * N + off_l * N
    INPUT_IDS += off_b * L + off_l
    LOGP += off_b * L + off_l
    m = float("-inf")
    d = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(LOGITS + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    idx = tl.load(INPUT_IDS)
    x_t = tl.load(LOGITS + idx).to(tl.float32)
    tl.store(LOGP, x_t - m - tl.log(d))


def token_logprob(logits, input_ids):
    import torch

    B, L, N = logits.shape
    logp = torch.empty((B, L), dtype=torch.float32, device=logits.device)
    token_logprob_kernel[(B, L)](logits, input_ids, logp, L, N, BLOCK_N=min(4096, triton.next_power_of_2(N)))
    return logp
