"""Split-K GEMM for skinny decode-time projections (small M, large K): the K loop is divided into SPLIT
chunks, grid axis 2 selects the chunk, and each block writes an f32 partial tile P[split] = A[:, chunk] @
B[chunk, :]. A second kernel reduces the partials over the split axis and casts to the output dtype."""
import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def splitk_gemm_partial_kernel(A, B, P, k_tiles_per_split: int, BM: ConstInt, BN: ConstInt, BK: ConstInt):
    pid_m = ct.bid(0)
    pid_n = ct.bid(1)
    split = ct.bid(2)
    num_k = ct.num_tiles(A, axis=1, shape=(BM, BK))
    k_start = split * k_tiles_per_split
    k_end = min(k_start + k_tiles_per_split, num_k)
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for k in range(k_start, k_end):
        a = ct.load(A, index=(pid_m, k), shape=(BM, BK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, index=(k, pid_n), shape=(BK, BN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(P, index=(split, pid_m, pid_n), tile=acc.reshape((1, BM, BN)))


@ct.kernel
def splitk_reduce_kernel(P, C, BM: ConstInt, BN: ConstInt):
    pid_m = ct.bid(0)
    pid_n = ct.bid(1)
    num_splits = P.shape[0]
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for s in range(num_splits):
        part = ct.load(P, index=(s, pid_m, pid_n), shape=(1, BM, BN), padding_mode=ct.PaddingMode.ZERO)
        acc = acc + part.reshape((BM, BN))
    ct.store(C, index=(pid_m, pid_n), tile=acc.astype(C.dtype))


def splitk_matmul(A, B, P, C, k_tiles_per_split):
    import torch

    splits = P.shape[0]
    grid = (ct.cdiv(A.shape[0], 16), ct.cdiv(B.shape[1], 128), splits)
    ct.launch(torch.cuda.current_stream(), grid, splitk_gemm_partial_kernel,
              (A, B, P, k_tiles_per_split, 16, 128, 128))
    grid = (ct.cdiv(A.shape[0], 16), ct.cdiv(B.shape[1], 128), 1)
    ct.launch(torch.cuda.current_stream(), grid, splitk_reduce_kernel, (P, C, 16, 128))
