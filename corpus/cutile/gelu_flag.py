"""GELU with a constant switch between the tanh approximation and a sigmoid-style one.

Both arms produce the same tile type, so the port keeps one entry and an `if APPROX == 1` on the
const generic (folded by both compilers).
"""
import cuda.tile as ct

ConstInt = ct.Constant[int]
ConstBool = ct.Constant[bool]

SQRT_2_OVER_PI = 0.7978845608028654


@ct.kernel
def gelu(x, y, TILE: ConstInt, APPROX: ConstBool):
    bid = ct.bid(0)
    t = ct.load(x, index=(bid,), shape=(TILE,)).astype(ct.float32)
    if APPROX:
        inner = SQRT_2_OVER_PI * (t + 0.044715 * t * t * t)
        g = 0.5 * t * (1.0 + ct.tanh(inner))
    else:
        g = t / (1.0 + ct.exp(-1.702 * t))
    ct.store(y, index=(bid,), tile=g.astype(y.dtype))
