"""Embedding lookup for a padded decode batch: the grid covers the captured (padded) batch size, programs
past the live rows return at once; the token id read from memory sets the base of the row copied, and
padding tokens produce zero rows."""
import triton
import triton.language as tl


@triton.jit
def embedding_kernel(ids_ptr, weight_ptr, out_ptr, n_rows, hidden, weight_stride, out_stride, pad_id,
                     BLOCK_H: tl.constexpr):
    row = tl.program_id(0)
    if row >= n_rows:
        return
    token = tl.load(ids_ptr + row).to(tl.int64)
    is_pad = token == pad_id
    for h in range(0, hidden, BLOCK_H):
        cols = h + tl.arange(0, BLOCK_H)
        mask = cols < hidden
        vec = tl.load(weight_ptr + token * weight_stride + cols, mask=mask & (not is_pad), other=0.0)
        tl.store(out_ptr + row * out_stride + cols, vec, mask=mask)


def embed(ids, weight, padded_batch, pad_id=-1):
    import torch

    n_rows = ids.shape[0]
    hidden = weight.shape[1]
    out = torch.empty((padded_batch, hidden), dtype=weight.dtype, device=weight.device)
    embedding_kernel[(padded_batch,)](ids, weight, out, n_rows, hidden, weight.stride(0), out.stride(0), pad_id,
                                      BLOCK_H=512)
    return out
