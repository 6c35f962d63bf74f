"""Tiled GEMM C = A @ B: f32 accumulation over a K loop, cast to C's dtype on store."""
import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def matmul(A, B, C, BM: ConstInt, BN: ConstInt, BK: ConstInt):
    bm = ct.bid(0)
    bn = ct.bid(1)
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(BM, BK))):
        a = ct.load(A, index=(bm, k), shape=(BM, BK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, index=(k, bn), shape=(BK, BN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(bm, bn), tile=acc.astype(C.dtype))


def launch(A, B, C):
    import torch

    grid = (ct.cdiv(A.shape[0], 128), ct.cdiv(B.shape[1], 128), 1)
    ct.launch(torch.cuda.current_stream(), grid, matmul, (A, B, C, 128, 128, 64))
