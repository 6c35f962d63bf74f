"""Seeded dropout as used in training-time attention/MLP outputs: each element's keep decision comes from a
stateless integer hash of (global element index, seed) built with *, ^ and >>, compared against the
threshold p * 2^23, and kept values are scaled by 1/(1-p). Recomputing the same hash in the backward pass
regenerates the mask without storing it. dropout_add_residual_kernel is the fused 2-D form
out = residual + dropout(x) used after attention / MLP blocks."""
import cuda.tile as ct

ConstInt = ct.Constant[int]


def _keep_mask(offs, seed, p):
    h = (offs + seed) * 668265261
    h = h ^ (h >> 15)
    h = h * 374761393
    h = h ^ (h >> 13)
    h = h * 1103515245
    h = h ^ (h >> 16)
    r = h & 8388607
    return r.astype(ct.float32) >= p * 8388608.0


@ct.kernel
def dropout_kernel(x, y, p: float, seed: int, BLOCK: ConstInt):
    pid = ct.bid(0)
    offs = pid * BLOCK + ct.arange(BLOCK, dtype=ct.int32)
    keep = _keep_mask(offs, seed, p)
    v = ct.load(x, index=(pid,), shape=(BLOCK,)).astype(ct.float32)
    out = ct.where(keep, v / (1.0 - p), 0.0)
    ct.store(y, index=(pid,), tile=out.astype(y.dtype))


@ct.kernel
def dropout_add_residual_kernel(x, residual, out, p: float, seed: int, BM: ConstInt, BN: ConstInt):
    pm = ct.bid(0)
    pn = ct.bid(1)
    n = x.shape[1]
    rows = pm * BM + ct.arange(BM, dtype=ct.int32)
    cols = pn * BN + ct.arange(BN, dtype=ct.int32)
    offs = rows[:, None] * n + cols[None, :]
    keep = _keep_mask(offs, seed, p)
    v = ct.load(x, index=(pm, pn), shape=(BM, BN)).astype(ct.float32)
    r = ct.load(residual, index=(pm, pn), shape=(BM, BN)).astype(ct.float32)
    res = r + ct.where(keep, v * (1.0 / (1.0 - p)), 0.0)
    ct.store(out, index=(pm, pn), tile=res.astype(out.dtype))


def dropout(x_flat, y_flat, p, seed, x, residual, out):
    import torch

    grid = (ct.cdiv(x_flat.shape[0], 1024), 1, 1)
    ct.launch(torch.cuda.current_stream(), grid, dropout_kernel, (x_flat, y_flat, p, seed, 1024))
    grid = (ct.cdiv(x.shape[0], 16), ct.cdiv(x.shape[1], 128), 1)
    ct.launch(torch.cuda.current_stream(), grid, dropout_add_residual_kernel, (x, residual, out, p, seed, 16, 128))
