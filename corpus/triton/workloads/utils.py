"""Device helpers shared by the workload kernels (inlined into every kernel that calls them)."""
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)  # a global a jit function reads must be a constexpr


@triton.jit
def silu(x):
    return x * tl.sigmoid(x)


@triton.jit
def tanh(x):
    # tanh(x) = 2 * sigmoid(2x) - 1, stable for large |x|
    return 2.0 * tl.sigmoid(2.0 * x) - 1.0


@triton.jit
def gelu_tanh(x):
    # 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1.0 + tanh(inner))


@triton.jit
def grouped_tile(pid, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Map a linear program id to (pid_m, pid_n) so that GROUP_M row tiles share their column tiles in L2."""
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pid_n = (pid % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def load_row_f32(ptr, row, stride, cols, n_cols, other):
    """One row's columns as fp32, masked past `n_cols`."""
    return tl.load(ptr + row * stride + cols, mask=cols < n_cols, other=other).to(tl.float32)


@triton.jit
def tile_offsets_2d(n_rows, n_cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Flat int64 offsets and bounds mask of the (program_id(0), program_id(1)) tile of a contiguous matrix."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    return rows[:, None].to(tl.int64) * n_cols + cols[None, :], mask
