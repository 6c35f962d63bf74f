"""Batched GEMM: 3-D loads of one (BM, BK) / (BK, BN) slice per batch, reshaped to 2-D for the MMA."""
import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def batched_matmul(A, B, C, BM: ConstInt, BN: ConstInt, BK: ConstInt):
    bm = ct.bid(0)
    bn = ct.bid(1)
    batch = ct.bid(2)
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=2, shape=(1, BM, BK))):
        a = ct.load(A, index=(batch, bm, k), shape=(1, BM, BK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, index=(batch, k, bn), shape=(1, BK, BN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a.reshape((BM, BK)), b.reshape((BK, BN)), acc)
    out = acc.astype(C.dtype).reshape((1, BM, BN))
    ct.store(C, index=(batch, bm, bn), tile=out)


def launch(A, B, C):
    import torch

    grid = (ct.cdiv(A.shape[1], 64), ct.cdiv(B.shape[2], 64), A.shape[0])
    ct.launch(torch.cuda.current_stream(), grid, batched_matmul, (A, B, C, 64, 64, 32))
