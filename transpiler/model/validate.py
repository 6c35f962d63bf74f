"""Invariants of a typed model; violations are bugs in a pass, so they raise AssertionError."""

from __future__ import annotations

from .ir import RMW_OPS, ArrayTy, Assign, Break, Continue, Eval, Expr, For, If, Kernel, Lit, Name, Op, TileTy, TupleExpr, While


class ModelError(AssertionError):
    pass


def validate(k: Kernel) -> Kernel:
    """Checks: every expression is typed; names are defined before use; shapes are const expressions
    over the kernel's int constants or literals; stores write tiles of the array's rank and dtype."""
    consts = {p.name for p in k.params if p.kind == "const"} | {n for n, _ in k.derived}
    defined = {p.name for p in k.params} | {n for n, _ in k.derived}
    _block(k.body, set(defined), consts, k)
    for p in k.params:
        if p.kind not in ("array", "scalar", "const"):
            raise ModelError(f"parameter {p.name} has unresolved kind {p.kind}")
    return k


def _block(stmts, defined: set[str], consts: set[str], k: Kernel) -> None:
    for s in stmts:
        if isinstance(s, Assign):
            _expr(s.value, defined, consts)
            defined.update(s.targets)
        elif isinstance(s, Eval):
            _expr(s.value, defined, consts)
            if not (isinstance(s.value, Op) and s.value.op in ("store", "scatter", "view_store", *RMW_OPS, "view_atomic_add",
                                                                "llm_hole")):
                raise ModelError("expression statement that is not a store, scatter or atomic")
        elif isinstance(s, For):
            for e in (s.start, s.stop, s.step):
                _expr(e, defined, consts)
            _block(s.body, set(defined) | {s.var}, consts, k)
        elif isinstance(s, While):
            _expr(s.cond, defined, consts)
            _block(s.body, set(defined), consts, k)
        elif isinstance(s, (Continue, Break)):
            pass
        elif isinstance(s, If):
            _expr(s.cond, defined, consts)
            inner = defined | {n for n, _ in s.declares}
            _block(s.body, set(inner), consts, k)
            _block(s.orelse, set(inner), consts, k)
            defined.update(n for n, _ in s.declares)
        else:
            raise ModelError(f"unknown statement {type(s).__name__}")


def _expr(e: Expr, defined: set[str], consts: set[str]) -> None:
    if isinstance(e, TupleExpr):
        for i in e.items:
            _expr(i, defined, consts)
        return
    if e.ty is None and not (isinstance(e, Op) and e.op in ("store", "scatter", "view_store", "view_atomic_add")):
        raise ModelError(f"untyped expression at {e.pos}: {e}")
    if isinstance(e, Name) and e.id not in defined:
        raise ModelError(f"use of undefined name {e.id} at {e.pos}")
    if isinstance(e.ty, TileTy):
        for d in e.ty.shape:
            if not (d.isdigit() or d in consts):
                raise ModelError(f"shape dimension {d!r} is not a literal or a constant at {e.pos}")
    if isinstance(e, Op):
        for a in e.args:
            if a is not None:
                _expr(a, defined, consts)
        if e.op == "store":
            arr, _, tile = e.args
            if not isinstance(arr.ty, ArrayTy) or len(tile.ty.shape) != arr.ty.rank or tile.ty.dtype != arr.ty.dtype:
                raise ModelError(f"store of {tile.ty} into {arr.ty} at {e.pos}")
    elif not isinstance(e, (Lit, Name)):
        raise ModelError(f"unknown expression {type(e).__name__}")
