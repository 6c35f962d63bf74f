"""FMA fusion, as cuTile Python's `rewrite_patterns` pass does it (cuTile Rust never fuses).

A float multiply whose only use is an add or subtract becomes `fma`:
`a*b + c` and `c + a*b` -> fma(a, b, c); `a*b - c` -> fma(a, b, -c); `c - a*b` -> fma(-a, b, c).
In the typed model an operand that is an `Op` has exactly one use (values used twice are
variables), so a nested multiply is always single-use. Integer multiplies are never fused.
"""

from __future__ import annotations

from dataclasses import replace

from ..model.ir import FLOAT_DTYPES, Assign, Eval, Expr, For, If, Kernel, Op, Stmt, TupleExpr, While


def _is_fmul(e: Expr) -> bool:
    return isinstance(e, Op) and e.op == "mul" and e.ty is not None and (e.ty.dtype in FLOAT_DTYPES or e.ty.dtype == "E")


def fuse(e: Expr) -> Expr:
    if isinstance(e, TupleExpr):
        return replace(e, items=tuple(fuse(i) for i in e.items))
    if not isinstance(e, Op):
        return e
    e = replace(e, args=tuple(fuse(a) if a is not None else None for a in e.args))
    if e.op == "add":
        a, b = e.args
        if _is_fmul(a):
            return Op("fma", (a.args[0], a.args[1], b), e.pos, rule="CTR-FMA", ty=e.ty)
        if _is_fmul(b):
            return Op("fma", (b.args[0], b.args[1], a), e.pos, rule="CTR-FMA", ty=e.ty)
    if e.op == "sub":
        a, b = e.args
        if _is_fmul(a):
            return Op("fma", (a.args[0], a.args[1], Op("neg", (b,), b.pos, ty=b.ty)), e.pos, rule="CTR-FMA", ty=e.ty)
        if _is_fmul(b):
            return Op("fma", (Op("neg", (b.args[0],), b.pos, ty=b.args[0].ty), b.args[1], a), e.pos,
                      rule="CTR-FMA", ty=e.ty)
    return e


def _stmts(stmts: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
    out = []
    for s in stmts:
        if isinstance(s, (Assign, Eval)):
            out.append(replace(s, value=fuse(s.value)))
        elif isinstance(s, For):
            out.append(replace(s, body=_stmts(s.body)))
        elif isinstance(s, If):
            out.append(replace(s, cond=fuse(s.cond), body=_stmts(s.body), orelse=_stmts(s.orelse)))
        elif isinstance(s, While):
            out.append(replace(s, cond=fuse(s.cond), body=_stmts(s.body)))
        else:
            out.append(s)
    return tuple(out)


def fuse_fma(kernel: Kernel) -> Kernel:
    return replace(kernel, body=_stmts(kernel.body))
