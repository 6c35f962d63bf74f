"""Dead code elimination as cuTile Python runs it before token ordering and FMA fusion (_passes/dce.py).

cuTile Python keeps an op only if it writes memory or its result reaches one that does: an unused load
(`ct.load`, `ct.gather`) or computation vanishes, and so does an `if` left with nothing to do. cuTile Rust
keeps every load it is given, so the port must not contain them. Here a value is live when its name is
read by an effect, a condition or a loop bound, or by the assignment of a live name (per name, coarser than
Python's per-definition dataflow), and stores, scatters and atomics are never removed.
"""

from __future__ import annotations

from dataclasses import replace

from ..model.ir import RMW_OPS, Assign, For, If, Kernel, Op, Stmt, TupleExpr, While
from ..model.walk import all_stmts, expr_names, stmt_exprs

# llm_hole: the point the LLM fallback asks about keeps the values it reads (transpiler/fallback/units.py)
EFFECT_OPS = frozenset({"store", "scatter", *RMW_OPS, "view_atomic_add", "llm_hole"})




def _has_effect(e) -> bool:
    if isinstance(e, TupleExpr):
        return any(_has_effect(i) for i in e.items)
    if isinstance(e, Op):
        return e.op in EFFECT_OPS or e.op.startswith("atomic") or any(
            _has_effect(a) for a in e.args if a is not None)
    return False


def _live(stmts) -> set[str]:
    """Names whose values reach an effect: read by a store/scatter/atomic, a condition or a loop bound, or
    by the assignment of a live name (to a fixed point; a variable only its own update reads is dead)."""
    stmts = list(all_stmts(stmts))
    live: set[str] = set()
    for s in stmts:
        if isinstance(s, Assign) and not _has_effect(s.value):
            continue
        for e in stmt_exprs(s):
            expr_names(e, live)
    while True:
        before = len(live)
        for s in stmts:
            if isinstance(s, Assign) and set(s.targets) & live:
                expr_names(s.value, live)
        if len(live) == before:
            return live


def _prune(stmts, live: set[str]) -> tuple[Stmt, ...]:
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, Assign) and not (set(s.targets) & live) and not _has_effect(s.value):
            continue
        if isinstance(s, If):
            body, orelse = _prune(s.body, live), _prune(s.orelse, live)
            if not body and not orelse and not _has_effect(s.cond) and not s.returns:
                continue
            s = replace(s, body=body, orelse=orelse, declares=tuple(d for d in s.declares if d[0] in live))
        elif isinstance(s, (For, While)):
            s = replace(s, body=_prune(s.body, live))
        out.append(s)
    return tuple(out)


def _reads(stmts) -> set[str]:
    out: set[str] = set()
    for s in all_stmts(stmts):
        for e in stmt_exprs(s):
            expr_names(e, out)
    return out


def _narrow_declares(stmts, after: set[str]) -> tuple[Stmt, ...]:
    """An `if`'s declared names (first assigned in both arms) that nothing after the `if` reads stay local to
    each arm: cuTile Python's `if` yields only values read after it (the arm of an early return and the rest of
    the kernel, split into an `if`, yield nothing). `after`: the names read after these statements."""
    out: list[Stmt] = []
    stmts = list(stmts)
    for i, s in enumerate(stmts):
        rest = _reads(stmts[i + 1:]) | after
        if isinstance(s, If):
            s = replace(s, body=_narrow_declares(s.body, rest), orelse=_narrow_declares(s.orelse, rest),
                        declares=tuple(d for d in s.declares if d[0] in rest))
        elif isinstance(s, (For, While)):
            # the next iteration runs the body again: what it reads is read after any of its statements
            s = replace(s, body=_narrow_declares(s.body, _reads([s]) | rest))
        out.append(s)
    return tuple(out)


def eliminate_dead_code(kernel: Kernel) -> Kernel:
    body = kernel.body
    for _ in range(1000):  # each round removes at least one statement or stops
        new = _prune(body, _live(body))
        if _count(new) == _count(body):
            break
        body = new
    return replace(kernel, body=_narrow_declares(body, set()))


def _count(stmts) -> int:
    n = 0
    for s in stmts:
        n += 1
        if isinstance(s, (For, While)):
            n += _count(s.body)
        elif isinstance(s, If):
            n += _count(s.body) + _count(s.orelse)
    return n
