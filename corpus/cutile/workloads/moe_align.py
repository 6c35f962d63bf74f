"""MoE token alignment (in the spirit of vLLM's moe_align_block_size): turns the router's flattened
(tokens * TOPK) expert ids into an expert-sorted, BLOCK_M-padded permutation for the grouped expert GEMM.
moe_expert_histogram_kernel counts assignments per expert with ct.atomic_add; moe_align_offsets_kernel
(one block) rounds each count up to BLOCK_M, takes the exclusive prefix sum with ct.cumsum to get each
expert's padded start row and the total; moe_sort_tokens_kernel claims a slot per assignment with an
atomic cursor per expert and scatters the source token index into sorted_token_ids."""
import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def moe_expert_histogram_kernel(topk_ids, expert_counts, BLOCK: ConstInt):
    offs = ct.bid(0) * BLOCK + ct.arange(BLOCK, dtype=ct.int32)
    ids = ct.gather(topk_ids, offs, padding_value=-1)
    ct.atomic_add(expert_counts, ids, 1)


@ct.kernel
def moe_align_offsets_kernel(expert_counts, expert_offsets, total_padded, E: ConstInt, BLOCK_M: ConstInt):
    counts = ct.load(expert_counts, index=(0,), shape=(E,), padding_mode=ct.PaddingMode.ZERO)
    padded = ct.cdiv(counts, BLOCK_M) * BLOCK_M
    incl = ct.cumsum(padded, axis=0)
    ct.store(expert_offsets, index=(0,), tile=incl - padded)
    ct.store(total_padded, index=(0,), tile=ct.sum(padded, axis=0).reshape((1,)))


@ct.kernel
def moe_sort_tokens_kernel(topk_ids, expert_offsets, expert_cursor, sorted_token_ids,
                           BLOCK: ConstInt, TOPK: ConstInt):
    offs = ct.bid(0) * BLOCK + ct.arange(BLOCK, dtype=ct.int32)
    ids = ct.gather(topk_ids, offs, padding_value=-1)
    slot = ct.atomic_add(expert_cursor, ids, 1)
    base = ct.gather(expert_offsets, ids)
    valid = ids >= 0
    ct.scatter(sorted_token_ids, base + slot, offs // TOPK, mask=valid)


def moe_align(topk_ids, expert_counts, expert_offsets, total_padded, expert_cursor, sorted_token_ids):
    import torch

    grid = (ct.cdiv(topk_ids.shape[0], 256), 1, 1)
    ct.launch(torch.cuda.current_stream(), grid, moe_expert_histogram_kernel, (topk_ids, expert_counts, 256))
    ct.launch(torch.cuda.current_stream(), (1, 1, 1), moe_align_offsets_kernel,
              (expert_counts, expert_offsets, total_padded, 64, 64))
    ct.launch(torch.cuda.current_stream(), grid, moe_sort_tokens_kernel,
              (topk_ids, expert_offsets, expert_cursor, sorted_token_ids, 256, 2))
