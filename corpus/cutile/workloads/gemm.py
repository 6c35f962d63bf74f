"""Plain tiled GEMM, C = A @ B (+ bias), the building block of every linear layer (QKV/O projections,
MLP up/down projections) in LLM inference. Each block owns one (BM, BN) output tile, walks the K dimension
in BK steps accumulating in f32 with ct.mma, optionally adds a per-column bias (HAS_BIAS) and casts back
to the output dtype."""
import cuda.tile as ct

ConstInt = ct.Constant[int]
ConstBool = ct.Constant[bool]


@ct.kernel
def gemm_kernel(A, B, C, bias, BM: ConstInt, BN: ConstInt, BK: ConstInt, HAS_BIAS: ConstBool):
    pid_m = ct.bid(0)
    pid_n = ct.bid(1)
    num_k = ct.num_tiles(A, axis=1, shape=(BM, BK))
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for k in range(num_k):
        a = ct.load(A, index=(pid_m, k), shape=(BM, BK), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, index=(k, pid_n), shape=(BK, BN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    if HAS_BIAS:
        bv = ct.load(bias, index=(pid_n,), shape=(BN,), padding_mode=ct.PaddingMode.ZERO)
        acc = acc + bv.astype(ct.float32)[None, :]
    ct.store(C, index=(pid_m, pid_n), tile=acc.astype(C.dtype))


def linear(A, B, C, bias):
    import torch

    grid = (ct.cdiv(A.shape[0], 128), ct.cdiv(B.shape[1], 128), 1)
    ct.launch(torch.cuda.current_stream(), grid, gemm_kernel, (A, B, C, bias, 128, 128, 64, False))
    grid = (ct.cdiv(A.shape[0], 64), ct.cdiv(B.shape[1], 64), 1)
    ct.launch(torch.cuda.current_stream(), grid, gemm_kernel, (A, B, C, bias, 64, 64, 32, True))
