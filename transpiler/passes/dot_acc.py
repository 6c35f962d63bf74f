"""`acc += tl.dot(a, b)` accumulated in the dot, as Triton compiles it.

Triton's combine pass (lib/Dialect/Triton/Transforms/Combine.td, `CombineDotAdd*Pattern`) rewrites an add of a
dot whose accumulator is zero, `dot(a, b, 0) + c` or `c + dot(a, b, 0)`, into `dot(a, b, c)`: the tensor cores
accumulate into `c` itself. The port kept the add (`mma(a, b, 0)` then a tile add): a second accumulator tile
live across the loop (int8_gemm_kernel's `total` and its dot, 128x128 i32 each, REG:255 on sm_90) and one more
tile add per K step. Here the same rewrite, on Triton kernels only, where the add's type is the dot's (the
accumulator's dtype and shape). For integer dots the two forms are equal; for float dots the fused form is
the one Triton runs (its rounding: products accumulated into `c`, not summed first).
"""

from __future__ import annotations

from dataclasses import replace

from ..model.ir import Assign, Expr, For, If, Kernel, Lit, Op, While


def _zero(e: Expr) -> bool:
    """A tile of zeros: `tl.zeros` as inference leaves it (a const_tile of 0), or a literal 0 spread."""
    while isinstance(e, Op) and e.op in ("splat", "broadcast", "const_tile") and len(e.args) == 1:
        e = e.args[0]
    return isinstance(e, Lit) and not isinstance(e.value, bool) and e.value == 0


def _folded(e: Expr) -> Expr:
    """`add(c, mma(a, b, 0))` / `add(mma(a, b, 0), c)` -> `mma(a, b, c)`; anything else as it is."""
    if not (isinstance(e, Op) and e.op == "add" and len(e.args) == 2 and e.ty is not None):
        return e
    for dot, c in ((e.args[1], e.args[0]), (e.args[0], e.args[1])):
        if isinstance(dot, Op) and dot.op == "mma" and len(dot.args) == 3 and _zero(dot.args[2]) \
                and dot.ty == e.ty and getattr(c, "ty", None) == e.ty:
            return replace(dot, args=(dot.args[0], dot.args[1], c), pos=e.pos)
    return e


def _block(stmts) -> tuple:
    out = []
    for s in stmts:
        if isinstance(s, Assign):
            s = replace(s, value=_folded(s.value))
        elif isinstance(s, For):
            s = replace(s, body=_block(s.body))
        elif isinstance(s, While):
            s = replace(s, body=_block(s.body))
        elif isinstance(s, If):
            s = replace(s, body=_block(s.body), orelse=_block(s.orelse))
        out.append(s)
    return tuple(out)


def fold_dot_add(k: Kernel) -> Kernel:
    """The kernel with each statement `x = c + tl.dot(a, b)` (zero accumulator) as `x = tl.dot(a, b, c)`."""
    if k.frontend != "triton":
        return k
    return replace(k, body=_block(k.body))
