"""MoE permute (the step between moe_align and the grouped expert GEMM): copies each token's hidden row into
its expert-sorted slot. sorted_token_ids holds, per padded slot, the source token (or -1 in the padding of an
expert's last block); a 2-D gather reads BLOCK_M rows by id and BLOCK_D columns, so a padding slot and the
columns past the hidden size read 0."""
import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def moe_permute_rows_kernel(hidden, sorted_token_ids, permuted, BLOCK_M: ConstInt, BLOCK_D: ConstInt):
    rows = ct.load(sorted_token_ids, index=(ct.bid(0),), shape=(BLOCK_M,), padding_mode=ct.PaddingMode.ZERO)
    cols = ct.bid(1) * BLOCK_D + ct.arange(BLOCK_D, dtype=ct.int32)
    x = ct.gather(hidden, (rows[:, None], cols[None, :]), padding_value=0)
    ct.store(permuted, index=(ct.bid(0), ct.bid(1)), tile=x)


def moe_permute(hidden, sorted_token_ids, permuted):
    import torch

    grid = (ct.cdiv(sorted_token_ids.shape[0], 64), ct.cdiv(hidden.shape[1], 128), 1)
    ct.launch(torch.cuda.current_stream(), grid, moe_permute_rows_kernel, (hidden, sorted_token_ids, permuted, 64, 128))
