"""Batched GEMM with a transposed operand, as in attention score / context products over a batch of heads
and in batched LoRA. bmm_nt_kernel computes C[b] = A[b] @ Bt[b]^T where Bt is stored (batch, N, K) and
the loaded tile is transposed in registers with ct.transpose; bmm_tn_kernel computes C[b] = At[b]^T @ B[b]
where At is stored (batch, K, M) and is read transposed with ct.load(order=...). Grid axis 2 is the
batch index."""
import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def bmm_nt_kernel(A, Bt, C, BM: ConstInt, BN: ConstInt, BK: ConstInt):
    pid_m = ct.bid(0)
    pid_n = ct.bid(1)
    batch = ct.bid(2)
    num_k = ct.num_tiles(A, axis=2, shape=(1, BM, BK))
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for k in range(num_k):
        a = ct.load(A, index=(batch, pid_m, k), shape=(1, BM, BK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(Bt, index=(batch, pid_n, k), shape=(1, BN, BK), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a.reshape((BM, BK)), ct.transpose(b.reshape((BN, BK))), acc)
    ct.store(C, index=(batch, pid_m, pid_n), tile=acc.reshape((1, BM, BN)).astype(C.dtype))


@ct.kernel
def bmm_tn_kernel(At, B, C, BM: ConstInt, BN: ConstInt, BK: ConstInt):
    pid_m = ct.bid(0)
    pid_n = ct.bid(1)
    batch = ct.bid(2)
    num_k = ct.num_tiles(B, axis=1, shape=(1, BK, BN))
    acc = ct.zeros((1, BM, BN), dtype=ct.float32)
    for k in range(num_k):
        a = ct.load(At, index=(batch, pid_m, k), shape=(1, BM, BK), order=(0, 2, 1),
                    padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, index=(batch, k, pid_n), shape=(1, BK, BN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(batch, pid_m, pid_n), tile=acc.astype(C.dtype))


def bmm(A, Bt, C, At, B, C2):
    import torch

    grid = (ct.cdiv(A.shape[1], 64), ct.cdiv(Bt.shape[1], 64), A.shape[0])
    ct.launch(torch.cuda.current_stream(), grid, bmm_nt_kernel, (A, Bt, C, 64, 64, 32))
    grid = (ct.cdiv(At.shape[2], 64), ct.cdiv(B.shape[2], 128), At.shape[0])
    ct.launch(torch.cuda.current_stream(), grid, bmm_tn_kernel, (At, B, C2, 64, 128, 32))
