"""Persistent GEMM with grouped (swizzled) tile ordering, C = A @ B. A fixed number of blocks (about one per
SM) walk all output tiles with a grid-stride loop; the linear tile id is mapped to (pid_m, pid_n) so that
GROUP_M consecutive row-tiles share the same column sweep, which keeps B tiles L2-resident. Models the
persistent/stream-K style GEMMs used for large decode/prefill projections."""
import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def persistent_gemm_kernel(A, B, C, BM: ConstInt, BN: ConstInt, BK: ConstInt, GROUP_M: ConstInt):
    M = A.shape[0]
    N = B.shape[1]
    num_pid_m = ct.cdiv(M, BM)
    num_pid_n = ct.cdiv(N, BN)
    num_tiles = num_pid_m * num_pid_n
    num_k = ct.num_tiles(A, axis=1, shape=(BM, BK))
    num_pid_in_group = GROUP_M * num_pid_n
    for tile_id in range(ct.bid(0), num_tiles, ct.num_blocks(0)):
        group_id = tile_id // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        local = tile_id % num_pid_in_group
        pid_m = first_pid_m + local % group_size_m
        pid_n = local // group_size_m
        acc = ct.zeros((BM, BN), dtype=ct.float32)
        for k in range(num_k):
            a = ct.load(A, index=(pid_m, k), shape=(BM, BK), padding_mode=ct.PaddingMode.ZERO)
            b = ct.load(B, index=(k, pid_n), shape=(BK, BN), padding_mode=ct.PaddingMode.ZERO)
            acc = ct.mma(a, b, acc)
        ct.store(C, index=(pid_m, pid_n), tile=acc.astype(C.dtype))


def persistent_matmul(A, B, C, num_sms):
    import torch

    grid = (num_sms, 1, 1)
    ct.launch(torch.cuda.current_stream(), grid, persistent_gemm_kernel, (A, B, C, 128, 128, 64, 8))
    ct.launch(torch.cuda.current_stream(), grid, persistent_gemm_kernel, (A, B, C, 64, 128, 32, 4))
