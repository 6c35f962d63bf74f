"""An array whose rank depends on a constant: a rank per entry.

cuTile Python fixes an array parameter's rank per specialization (the argument's `ndim`). A kernel may index
one array with as many entries as one constant's branch wants (TileGym's `LOSS`: `(row, chunk)` where
`reduction == NONE`, `row` elsewhere; `Bias`: four entries for a vector or matrix bias, one for ALiBi). Each
specialization then sees the array at one rank. `classify_params` gives every array the largest rank it is
indexed with; for an array indexed with several ranks, `specialize` asks here for the constant `if` whose
arms use it at different ranks (`rank_split`) and makes a variant per arm, and each variant takes the rank
its live uses have (`settle_ranks`): one C symbol then selects the entry, and the array's rank with it.

An array indexed with several ranks in one variant (both live: under a runtime `if`, or unconditionally)
keeps the largest, and inference refuses the other accesses as before (ops/memory.py, `_rank_mismatch`).
A variant that leaves the array unused keeps the largest rank too (cuTile Python compiles an unused array
of any rank; verification compiles it at that rank).
"""

from __future__ import annotations

from dataclasses import replace

from ..diagnostics import TranspileError
from ..model.ir import Assign, For, If, Kernel, Name, Op, Stmt, TupleExpr, While
from .type_rules import ARRAY_USES
from ..model.walk import sub_exprs, walk_exprs
from .predicates import decides

# accesses whose index says the array's rank (a `num_tiles`/`array_dim` axis is a number, not an index)
_INDEXED = ARRAY_USES - {"num_tiles", "array_dim", "dtype_of", "shape_of"}


def use_ranks(stmts: tuple[Stmt, ...], arrays: set[str]) -> dict[str, set[int]]:
    """Each array of `arrays` -> the numbers of index entries its accesses in `stmts` have."""
    out: dict[str, set[int]] = {}
    for e in walk_exprs(stmts):
        if isinstance(e, Op) and e.op in _INDEXED and len(e.args) > 1 and isinstance(e.args[0], Name) \
                and e.args[0].id in arrays and e.args[1] is not None:
            idx = e.args[1]
            out.setdefault(e.args[0].id, set()).add(len(idx.items) if isinstance(idx, TupleExpr) else 1)
    return out


def varying_arrays(k: Kernel) -> set[str]:
    """The array parameters `k` indexes with more than one number of entries (not views: a view's rank is
    its own)."""
    views = {s.value.args[0].id for s in _all(k.body) if isinstance(s, Assign) and isinstance(s.value, Op)
             and s.value.op == "array_slice" and s.value.args and isinstance(s.value.args[0], Name)}
    arrays = {p.name for p in k.params if p.kind in ("array", "unknown") and not p.flat} - views
    return {n for n, rs in use_ranks(k.body, arrays).items() if len(rs) > 1}


def _all(stmts):
    for s in stmts:
        yield s
        if isinstance(s, If):
            yield from _all(s.body)
            yield from _all(s.orelse)
        elif isinstance(s, (For, While)):
            yield from _all(s.body)


def condition_constants(k: Kernel) -> set[str]:
    """The constant parameters a condition may be decided by: int and bool constants the body never assigns
    (inference folds an `if` on them where the variant's predicates decide it, `Infer.decided_arm`)."""
    assigned = {t for s in _all(k.body) if isinstance(s, Assign) for t in s.targets}
    assigned |= {s.var for s in _all(k.body) if isinstance(s, For)}
    return {p.name for p in k.params if p.kind == "const" and p.const_type != "float"} - assigned


def constant_condition(s: If, consts: set[str]) -> str | None:
    """The predicate text of a condition on constants only, else None."""
    from .predicates import predicate_text
    names = {x.id for x in sub_exprs(s.cond) if isinstance(x, Name)}
    if not names <= consts:
        return None
    try:
        return predicate_text(s.cond)
    except TranspileError:
        return None


def _live(stmts: tuple[Stmt, ...], preds: tuple[str, ...], consts: set[str]) -> tuple[Stmt, ...]:
    """`stmts` with every `if` the predicates decide replaced by its taken arm (as inference folds it)."""
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, If):
            text = constant_condition(s, consts)
            taken = decides(preds, text) if text is not None and preds else None
            if taken is not None:
                out.extend(_live(s.body if taken else s.orelse, preds, consts))
            else:
                out.append(replace(s, body=_live(s.body, preds, consts), orelse=_live(s.orelse, preds, consts)))
        elif isinstance(s, (For, While)):
            out.append(replace(s, body=_live(s.body, preds, consts)))
        else:
            out.append(s)
    return tuple(out)


def rank_split(k: Kernel, preds: tuple[str, ...], varying: set[str]) -> tuple[If, str] | None:
    """A constant `if` of `k.body` (and its predicate text) to split on so that the arrays of `varying` indexed
    with several ranks in this variant's live code have fewer in the arms' variants: the first, in source
    order, where each arm narrows every such array's ranks; else the first where one arm narrows one; None
    where no constant `if` does (the ranks do not depend on a constant inference folds)."""
    from ..model.walk import if_at, replace_if
    consts = condition_constants(k)
    live = _live(k.body, preds, consts)
    whole = {n: rs for n, rs in use_ranks(live, varying).items() if len(rs) > 1}
    if not whole:
        return None
    fallback = None
    for s in _all(live):
        text = constant_condition(s, consts) if isinstance(s, If) else None
        source = if_at(k.body, s.pos) if text is not None else None
        if source is None:
            continue
        every, some = True, False
        for take, pred in ((True, text), (False, f"not ({text})")):
            arm = use_ranks(_live(replace_if(live, s, take), preds + (pred,), consts), set(whole))
            every = every and all(arm.get(n, set()) < rs for n, rs in whole.items())
            some = some or any(arm.get(n, set()) < rs for n, rs in whole.items())
        if every:
            return source, text
        if some and fallback is None:
            fallback = (source, text)
    return fallback


def settle_ranks(k: Kernel, preds: tuple[str, ...], varying: set[str]) -> Kernel:
    """`k` with each array of `varying` at the one rank its live uses have (none: the rank it has, the
    largest; several: the largest too, and inference refuses the others)."""
    live = use_ranks(_live(k.body, preds, condition_constants(k)), varying)
    params = []
    for p in k.params:
        if p.name in varying and len(live.get(p.name, ())) == 1:
            rank = next(iter(live[p.name]))
            p = replace(p, rank=rank if rank or p.pointer else 1)  # as classify_params ranks a 0-d access
        params.append(p)
    return k if tuple(params) == k.params else replace(k, params=tuple(params))
