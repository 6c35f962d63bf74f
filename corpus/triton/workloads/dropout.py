"""Dropout driven by a seed: the keep mask is regenerated from (seed, element offset) with Philox in both
passes (the backward relaunches the forward kernel on dy), so nothing but the seed is saved for the backward."""
import triton
import triton.language as tl


@triton.jit
def dropout_fwd_kernel(x_ptr, out_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    keep = tl.rand(seed, offsets) > p
    out = tl.where(keep, x / (1 - p), 0.0)
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


def dropout(x, p, seed):
    import torch

    out = torch.empty_like(x)
    n = x.numel()
    dropout_fwd_kernel[(triton.cdiv(n, 1024),)](x, out, n, p, seed, BLOCK_SIZE=1024)
    return out


def dropout_bwd(dy, p, seed):
    import torch

    # the same seed regenerates the forward's keep mask: dx = dropout(dy)
    dx = torch.empty_like(dy)
    n = dy.numel()
    dropout_fwd_kernel[(triton.cdiv(n, 1024),)](dy, dx, n, p, seed, BLOCK_SIZE=1024)
    return dx
