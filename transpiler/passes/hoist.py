"""Loop-invariant code motion out of the one-trip loop of an inlined helper that returns early, as cuTile
Python's `hoist_loop_invariants` (_passes/code_motion.py) does it.

cuTile Python wraps the body of a helper with an early `return` in a `loop` that runs once (`return` is a
`break`, the body ends in one). Its code motion then moves, in program order, every statement of that loop's
body whose inputs are all defined before the loop (or by statements moved before it) out of the loop:
computations, loads of arrays the loop does not write (their memory token is the entry's, not the loop's),
and whole `for` loops and `if`s that only compute (one that loads carries the array's access token, which
is the one-trip loop's, so it stays). Only what writes memory, jumps, or
reads a value computed in the loop stays. Pure values may sit anywhere (the normalizer prints them where
they are used), but a load is ordered among the effects, so the port moves the same statements before its
`loop`, unchanged and in order.

What the model cannot move the same way (a statement that mixes a movable load with a value of the loop, or
that assigns a name the loop also assigns) is refused (CT107) rather than compared as something else.
"""

from __future__ import annotations

from dataclasses import replace

from ..diagnostics import fail
from ..model.ir import Assign, Break, Continue, Eval, For, If, Kernel, Name, Op, Stmt, TupleExpr, While
from ..model.walk import all_stmts, assigned_names, expr_names, stmt_exprs
from .dce import EFFECT_OPS

LOAD_OPS = frozenset({"load", "gather", "view_load", "desc_load"})


def hoist_once_loops(kernel: Kernel) -> Kernel:
    return replace(kernel, body=_block(kernel.body, False))


def _block(stmts, in_loop: bool) -> tuple[Stmt, ...]:
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, While) and s.once:
            if in_loop:  # the frontend refuses it: Python would move statements out of the enclosing loop too
                raise fail("CT107", "a helper that returns early, called in a loop, is not supported", s.pos)
            moved, kept = _hoist(s.body)
            out.extend(moved)
            out.append(replace(s, body=kept))
        elif isinstance(s, (For, While)):
            out.append(replace(s, body=_block(s.body, True)))
        elif isinstance(s, If):
            out.append(replace(s, body=_block(s.body, in_loop), orelse=_block(s.orelse, in_loop)))
        else:
            out.append(s)
    return tuple(out)


def _ops(e):
    if isinstance(e, TupleExpr):
        for i in e.items:
            yield from _ops(i)
    elif isinstance(e, Op):
        yield e
        for a in e.args:
            if a is not None:
                yield from _ops(a)
        for _, v in e.attrs:
            if isinstance(v, (Op, TupleExpr)):
                yield from _ops(v)


def _effect(op: Op) -> bool:
    return op.op in EFFECT_OPS or op.op.startswith(("atomic", "llm_", "view_store"))


def _array(op: Op) -> str | None:
    return op.args[0].id if op.args and isinstance(op.args[0], Name) else None


def _written(stmts) -> set[str] | None:
    """The arrays the statements write (None: one of them writes through an address of unknown origin)."""
    out: set[str] = set()
    for s in all_stmts(stmts):
        for e in stmt_exprs(s):
            for op in _ops(e):
                if _effect(op):
                    a = _array(op)
                    if a is None:
                        return None
                    out.add(a)
    return out


def _reads(s: Stmt) -> set[str]:
    out: set[str] = set()
    for t in all_stmts([s]):
        for e in stmt_exprs(t):
            expr_names(e, out)
    return out


def _movable(s: Stmt, written: set[str] | None, inside: set[str]) -> bool:
    """`s` may run before the loop: no effect, no jump out of it, no load of an array the loop writes, and
    nothing read that the loop computes."""
    if isinstance(s, (Break, Continue)):
        return False
    nested = isinstance(s, (For, While, If))
    for t in all_stmts([s]):
        for e in stmt_exprs(t):
            for op in _ops(e):
                if _effect(op) or (op.op in LOAD_OPS and (nested or written is None or _array(op) in written)):
                    return False
    if _jumps_out(s):
        return False
    return not (_reads(s) & inside)


def _jumps_out(s: Stmt) -> bool:
    """A `break`/`continue` of the enclosing loop below `s` (one inside a nested loop is that loop's)."""
    if isinstance(s, (Break, Continue)):
        return True
    if isinstance(s, If):
        return any(_jumps_out(t) for t in (*s.body, *s.orelse))
    return False


def _movable_loads(s: Stmt, written: set[str] | None, inside: set[str]) -> list[Op]:
    """Loads in `s` (a statement that stays) that cuTile Python would still move out of the loop: every value
    they read is defined before it (not in an `if` arm, whose ops never move one by one)."""
    if isinstance(s, If) or written is None:
        return []
    local = assigned_names([s]) if isinstance(s, (For, While)) else set()
    exprs = [e for t in ([s] if isinstance(s, (Assign, Eval)) else _loop_level(s)) for e in stmt_exprs(t)]
    out = []
    for e in exprs:
        for op in _ops(e):
            if op.op in LOAD_OPS and _array(op) not in written:
                reads: set[str] = set()
                expr_names(op, reads)
                if not (reads & (inside | local)):
                    out.append(op)
    return out


def _loop_level(s: Stmt):
    """`s` and the statements of its loop bodies, not those in `if` arms."""
    yield s
    if isinstance(s, (For, While)):
        for t in s.body:
            yield from _loop_level(t)


def _hoist(body) -> tuple[list[Stmt], tuple[Stmt, ...]]:
    """The statements moved before the loop and those that stay. A name that a statement staying in the loop
    assigns is never assigned before it (cuTile Rust would carry it through the loop, where cuTile Python's
    SSA values need not): a computation of such a name stays in the loop too (it is pure, its place does not
    matter), until no name is assigned on both sides."""
    pinned: set[str] = set()
    while True:
        order = _split(body, pinned)
        moved = [s for s, m in order if m]
        kept = [s for s, m in order if not m]
        conflict = _assigns(kept) & _assigns(moved)
        # a name a statement in the loop reads, assigned again by a later moved statement: moved, that
        # assignment would run before the reader (which must see the earlier value)
        seen: set[str] = set()
        for s, m in order:
            if m:
                conflict |= _assigns([s]) & seen
            else:
                seen |= _reads(s)
        if not conflict - pinned:
            return moved, tuple(kept)
        pinned |= conflict


def _split(body, pinned: set[str]) -> list[tuple[Stmt, bool]]:
    """The body's statements in order, each with whether it moves before the loop."""
    written = _written(body)
    inside: set[str] = set()  # names assigned by statements that stay in the loop
    order: list[tuple[Stmt, bool]] = []
    for s in body:
        assigns = _assigns([s])
        if _movable(s, written, inside):
            if not (assigns & (inside | pinned)):
                order.append((s, True))
                continue
            if _has_load(s):
                raise fail("CT107", "cuTile Python moves this load out of the one-trip loop of a helper that "
                           "returns early, but the loop assigns the same name elsewhere (give it another name)",
                           s.pos)
        elif _movable_loads(s, written, inside):
            raise fail("CT107", "cuTile Python moves a load of this statement out of the one-trip loop of a helper "
                       "that returns early, apart from the rest of the statement, which the port cannot do yet "
                       "(compute the load in a statement of its own)", s.pos)
        order.append((s, False))
        inside |= assigns
    return order


def _has_load(s: Stmt) -> bool:
    return any(op.op in LOAD_OPS for t in all_stmts([s]) for e in stmt_exprs(t) for op in _ops(e))


def _assigns(stmts) -> set[str]:
    out = assigned_names(stmts)
    for s in all_stmts(stmts):
        if isinstance(s, If):
            out |= {n for n, _ in s.declares}
    return out
