"""Mixture-of-experts routing: count tokens per expert (atomics), lay the (token, k) slots out grouped by
expert with each expert's segment padded to a multiple of BLOCK_SIZE (one program per expert, stable order
via a prefix sum), then gather the hidden states into the sorted order through the loaded token ids."""
import triton
import triton.language as tl


@triton.jit
def moe_count_kernel(topk_ids_ptr, counts_ptr, n_slots, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_slots
    expert = tl.load(topk_ids_ptr + offs, mask=mask, other=0)
    tl.atomic_add(counts_ptr + expert, tl.full([BLOCK], 1, dtype=tl.int32), mask=mask)


@triton.jit
def moe_align_kernel(topk_ids_ptr, counts_ptr, sorted_ids_ptr, expert_offsets_ptr, n_slots, n_experts,
                     BLOCK_SIZE: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK: tl.constexpr):
    expert = tl.program_id(0)
    experts = tl.arange(0, BLOCK_E)
    counts = tl.load(counts_ptr + experts, mask=experts < n_experts, other=0)
    padded = tl.cdiv(counts, BLOCK_SIZE) * BLOCK_SIZE
    ends = tl.cumsum(padded, axis=0)
    end = tl.sum(tl.where(experts == expert, ends, 0), axis=0)
    count = tl.sum(tl.where(experts == expert, padded, 0), axis=0)
    start = end - count
    tl.store(expert_offsets_ptr + expert + 1, end)
    if expert == 0:
        tl.store(expert_offsets_ptr, 0)
    # fill this expert's segment with the padding id, then place its slots in order
    for i in range(start, end, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        tl.store(sorted_ids_ptr + offs, tl.full([BLOCK], 0, dtype=tl.int32) + n_slots, mask=offs < end)
    pos = start
    for i in range(0, n_slots, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        ids = tl.load(topk_ids_ptr + offs, mask=offs < n_slots, other=-1)
        hit = (ids == expert).to(tl.int32)
        dst = pos + tl.cumsum(hit, axis=0) - 1
        tl.store(sorted_ids_ptr + dst, offs, mask=hit == 1)
        pos += tl.sum(hit, axis=0)


@triton.jit
def moe_permute_kernel(x_ptr, sorted_ids_ptr, out_ptr, n_slots, hidden, TOP_K: tl.constexpr,
                       BLOCK_H: tl.constexpr):
    row = tl.program_id(0)
    slot = tl.load(sorted_ids_ptr + row)
    cols = tl.arange(0, BLOCK_H)
    valid = slot < n_slots
    token = tl.where(valid, slot // TOP_K, 0)  # padding slots read row 0 and write zeros
    for h in range(0, hidden, BLOCK_H):
        c = h + cols
        x = tl.load(x_ptr + token.to(tl.int64) * hidden + c, mask=c < hidden, other=0.0)
        tl.store(out_ptr + row.to(tl.int64) * hidden + c, tl.where(valid, x, 0.0), mask=c < hidden)


def moe_align(topk_ids, hidden_states, n_experts, block_size=64):
    import torch

    n_tokens, top_k = topk_ids.shape
    n_slots = n_tokens * top_k
    counts = torch.zeros(n_experts, dtype=torch.int32, device=topk_ids.device)
    moe_count_kernel[(triton.cdiv(n_slots, 256),)](topk_ids, counts, n_slots, BLOCK=256)
    max_padded = n_slots + n_experts * (block_size - 1)
    sorted_ids = torch.empty(max_padded, dtype=torch.int32, device=topk_ids.device)
    expert_offsets = torch.empty(n_experts + 1, dtype=torch.int32, device=topk_ids.device)
    moe_align_kernel[(n_experts,)](topk_ids, counts, sorted_ids, expert_offsets, n_slots, n_experts,
                                   BLOCK_SIZE=64, BLOCK_E=triton.next_power_of_2(n_experts), BLOCK=256)
    total = expert_offsets[-1].item()
    permuted = torch.empty((total, hidden_states.shape[1]), dtype=hidden_states.dtype, device=hidden_states.device)
    moe_permute_kernel[(total,)](hidden_states, sorted_ids, permuted, n_slots, hidden_states.shape[1], TOP_K=2,
                                 BLOCK_H=1024)
    return sorted_ids, expert_offsets, permuted
