"""Rotary position embedding (RoPE, rotate-half / GPT-NeoX layout) applied to query/key heads before
attention: out[:half] = x1*cos - x2*sin, out[half:] = x2*cos + x1*sin. rope_halves_kernel reads the two
halves of each head with two half-width tile loads and a per-token cos/sin row."""
import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def rope_halves_kernel(x, cos, sin, out, BH: ConstInt, HALF: ConstInt):
    tok = ct.bid(0)
    hb = ct.bid(1)
    x1 = ct.load(x, index=(tok, hb, 0), shape=(1, BH, HALF)).reshape((BH, HALF)).astype(ct.float32)
    x2 = ct.load(x, index=(tok, hb, 1), shape=(1, BH, HALF)).reshape((BH, HALF)).astype(ct.float32)
    c = ct.load(cos, index=(tok, 0), shape=(1, HALF)).astype(ct.float32)
    s = ct.load(sin, index=(tok, 0), shape=(1, HALF)).astype(ct.float32)
    o1 = x1 * c - x2 * s
    o2 = x2 * c + x1 * s
    ct.store(out, index=(tok, hb, 0), tile=o1.reshape((1, BH, HALF)).astype(out.dtype))
    ct.store(out, index=(tok, hb, 1), tile=o2.reshape((1, BH, HALF)).astype(out.dtype))


def rope(x, cos, sin, out):
    import torch

    grid = (x.shape[0], ct.cdiv(x.shape[1], 8), 1)
    ct.launch(torch.cuda.current_stream(), grid, rope_halves_kernel, (x, cos, sin, out, 8, 64))
