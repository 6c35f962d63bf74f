"""Bucketed relative-position attention bias: bias[h, i, j] = table[h, bucket(j - i)] with
bucket(r) = clamp(r // BUCKET_WIDTH + N_BUCKETS // 2, 0, N_BUCKETS - 1). Triton's integer `//` truncates
toward zero (C semantics), so the buckets are symmetric around r = 0: -BUCKET_WIDTH < r < BUCKET_WIDTH all
land in the middle bucket."""
import triton
import triton.language as tl


@triton.jit
def rel_pos_bias_kernel(table_ptr, out_ptr, q_len, k_len, N_BUCKETS: tl.constexpr, BUCKET_WIDTH: tl.constexpr,
                        BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_q = tl.program_id(0)
    pid_k = tl.program_id(1)
    head = tl.program_id(2)
    qi = pid_q * BLOCK_Q + tl.arange(0, BLOCK_Q)
    kj = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    rel = kj[None, :] - qi[:, None]
    bucket = rel // BUCKET_WIDTH + N_BUCKETS // 2
    bucket = tl.minimum(tl.maximum(bucket, 0), N_BUCKETS - 1)
    bias = tl.load(table_ptr + head * N_BUCKETS + bucket)
    mask = (qi[:, None] < q_len) & (kj[None, :] < k_len)
    out = out_ptr + head.to(tl.int64) * q_len * k_len + qi[:, None] * k_len + kj[None, :]
    tl.store(out, bias, mask=mask)


def rel_pos_bias(table, q_len, k_len):
    import torch

    n_heads = table.shape[0]
    out = torch.empty((n_heads, q_len, k_len), dtype=table.dtype, device=table.device)
    grid = (triton.cdiv(q_len, 32), triton.cdiv(k_len, 64), n_heads)
    rel_pos_bias_kernel[grid](table, out, q_len, k_len, N_BUCKETS=32, BUCKET_WIDTH=8, BLOCK_Q=32, BLOCK_K=64)
    return out
