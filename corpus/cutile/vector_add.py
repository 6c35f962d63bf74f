"""Elementwise vector add, one tile per block (the "hello world" of tile kernels)."""
import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def vector_add(a, b, c, TILE: ConstInt):
    bid = ct.bid(0)
    x = ct.load(a, index=(bid,), shape=(TILE,))
    y = ct.load(b, index=(bid,), shape=(TILE,))
    ct.store(c, index=(bid,), tile=x + y)


def launch(a, b, c):
    import torch

    grid = (ct.cdiv(a.shape[0], 1024), 1, 1)
    ct.launch(torch.cuda.current_stream(), grid, vector_add, (a, b, c, 1024))
