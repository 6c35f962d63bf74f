"""Partial sums of a 2-D array along a constant axis (the first stage of a split reduction).

AXIS == 0 sums each (BM, BN) tile over its rows into a (1, BN) tile; AXIS == 1 sums over its
columns into a (BM, 1) tile. The arms give tiles of different shapes, so the port has one entry
per structural variant, selected by the AXIS value.
"""
import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def partial_sum(x, partial, AXIS: ConstInt, BM: ConstInt, BN: ConstInt):
    bm = ct.bid(0)
    bn = ct.bid(1)
    t = ct.load(x, index=(bm, bn), shape=(BM, BN), padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
    if AXIS == 0:
        r = ct.sum(t, axis=0, keepdims=True)
    else:
        r = ct.sum(t, axis=1, keepdims=True)
    ct.store(partial, index=(bm, bn), tile=r.astype(partial.dtype))


def launch(x, partial, axis):
    import torch

    grid = (ct.cdiv(x.shape[0], 64), ct.cdiv(x.shape[1], 128), 1)
    ct.launch(torch.cuda.current_stream(), grid, partial_sum, (x, partial, 0, 64, 128))
    ct.launch(torch.cuda.current_stream(), grid, partial_sum, (x, partial, 1, 64, 128))
