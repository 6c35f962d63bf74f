"""Grouped (ragged) GEMM as used by Mixture-of-Experts FFNs and multi-LoRA serving: rows of A are grouped
contiguously by expert, group g owns rows [offsets[g], offsets[g+1]) and multiplies them by its own weight
B[g]. moe_grouped_gemm_kernel reads a per-row-tile expert id (rows padded to BM per expert, as produced by
MoE token alignment) and multiplies by an nn.Linear-layout weight W[e] of shape (N, K), i.e. with a
transposed operand."""
import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def moe_grouped_gemm_kernel(A, W, C, tile_expert_ids, BM: ConstInt, BN: ConstInt, BK: ConstInt):
    pid_m = ct.bid(0)
    pid_n = ct.bid(1)
    expert = ct.load(tile_expert_ids, index=(pid_m,), shape=(1,)).item()
    num_k = ct.num_tiles(A, axis=1, shape=(BM, BK))
    acc = ct.zeros((BM, BN), dtype=ct.float32)
    for k in range(num_k):
        a = ct.load(A, index=(pid_m, k), shape=(BM, BK), padding_mode=ct.PaddingMode.ZERO)
        w = ct.load(W, index=(expert, pid_n, k), shape=(1, BN, BK), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, ct.transpose(w.reshape((BN, BK))), acc)
    ct.store(C, index=(pid_m, pid_n), tile=acc.astype(C.dtype))


def grouped_matmul(W, A_sorted, C_sorted, tile_expert_ids):
    import torch

    grid = (tile_expert_ids.shape[0], ct.cdiv(W.shape[1], 128), 1)
    ct.launch(torch.cuda.current_stream(), grid, moe_grouped_gemm_kernel,
              (A_sorted, W, C_sorted, tile_expert_ids, 64, 128, 64))
