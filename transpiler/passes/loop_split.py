"""Loop splitting as cuTile Python runs it last (_passes/loop_split.py), so that the port has its Tile IR.

A `for` loop of step 1 whose body holds exactly one `if` on a comparison (`<`, `<=`, `>`, `>=`) of the loop
variable with a value the loop does not change becomes two loops: one up to the split point, where the
comparison's outcome is known and the `if` is replaced by the arm it takes, and one from there on with the
other arm. `j <= x` and `j > x` split at `x + 1`; the first loop stops at `min(stop, split)` and the second
starts at `max(start, split)`. An arm that ends the iteration (`continue`) also drops what follows the `if`.
Both loops carry every value the original loop carries (cuTile Python clones it whole), so a value only one
arm updates is assigned to itself in the other loop.

Only where the split point is a runtime value (a block id, an array extent, a loaded value, a scalar
argument, or arithmetic on one): cuTile Rust 0.5.0 folds `min`/`max` of compile-time constants (cuTile
Python keeps `mini`/`maxi`), and a loop whose constant range it finds empty gets an unordered `assume
bounded` that fails to compile. Such loops stay whole (and verify `different` where cuTile Python splits).
"""

from __future__ import annotations

from dataclasses import replace

from ..model.ir import RMW_OPS, Assign, Continue, For, If, Kernel, Lit, Name, Op, Stmt, TileTy, While
from ..model.walk import all_stmts, assigned_names

FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
# the arm the first loop (below the split point) keeps: then for j < x, else for j >= x
FIRST_KEEPS_THEN = {"<": True, "<=": True, ">": False, ">=": False}
ADD_ONE = {"<": False, "<=": True, ">": True, ">=": False}


RUNTIME_OPS = frozenset({"bid", "load", "load_advanced", "gather", "item", "array_dim", "num_tiles"})
MEMORY_OPS = frozenset({"load", "load_advanced", "gather", "store", "scatter", *RMW_OPS, "view_atomic_add"})


def split_loops(kernel: Kernel) -> Kernel:
    params = {p.name for p in kernel.params}
    defs: dict[str, list] = {}
    for s in all_stmts(kernel.body):
        if isinstance(s, Assign):
            for t in s.targets:
                defs.setdefault(t, []).append(s.value)
    scalars = {p.name for p in kernel.params if p.kind == "scalar"}
    counter = iter(range(1 << 30))
    ctx = (counter, lambda e: _runtime(e, defs, scalars, set()))
    return replace(kernel, body=_block(kernel.body, params, *ctx))


def _runtime(e, defs: dict, scalars: set[str], seen: set[str]) -> bool:
    """`e` certainly depends on a value known only when the kernel runs (never for a compile-time constant)."""
    if isinstance(e, Name):
        if e.id in scalars:
            return True
        if e.id in seen or e.id not in defs:
            return False
        seen.add(e.id)
        return any(_runtime(v, defs, scalars, seen) for v in defs[e.id])
    if isinstance(e, Op):
        return e.op in RUNTIME_OPS or any(a is not None and _runtime(a, defs, scalars, seen) for a in e.args)
    return False


def _block(stmts, defined: set[str], counter, runtime) -> tuple[Stmt, ...]:
    """`defined`: the names declared where the block starts (a loop carries those it assigns)."""
    out: list[Stmt] = []
    defined = set(defined)
    for s in stmts:
        if isinstance(s, For):
            s = replace(s, body=_block(s.body, defined | {s.var}, counter, runtime))
            out += _split(s, defined, counter, runtime) or [s]
        elif isinstance(s, While):
            out.append(replace(s, body=_block(s.body, defined, counter, runtime)))
        elif isinstance(s, If):
            out.append(replace(s, body=_block(s.body, defined, counter, runtime),
                               orelse=_block(s.orelse, defined, counter, runtime)))
            defined |= {n for n, _ in s.declares}  # first assigned in both arms: declared after the if
        else:
            out.append(s)
            if isinstance(s, Assign):
                defined |= set(s.targets)
    return tuple(out)


def _comparison(cond, loop: For, local: dict, changed: set[str]) -> tuple[str, object] | None:
    """(pred with the loop variable on the left, the other side) of a splittable condition."""
    if isinstance(cond, Name) and cond.id in local:
        cond = local[cond.id]
    if not (isinstance(cond, Op) and cond.op == "cmp" and cond.attr("pred") in FLIP):
        return None
    a, b = cond.args
    pred = cond.attr("pred")
    if isinstance(a, Name) and a.id == loop.var:
        other = b
    elif isinstance(b, Name) and b.id == loop.var:
        other, pred = a, FLIP[pred]
    else:
        return None
    if other.ty == TileTy("i32") and _invariant(other, loop.var, changed):  # the loop bounds' type
        return pred, other
    return None


def _invariant(e, var: str, changed: set[str]) -> bool:
    """A value the loop does not change: literals, names it does not assign, and pure ops on them (cuTile
    Python hoists those out of the loop before it splits; a load stays in it)."""
    if isinstance(e, Lit):
        return True
    if isinstance(e, Name):
        return e.id not in changed and e.id != var
    if isinstance(e, Op) and e.op not in MEMORY_OPS:
        return all(a is None or _invariant(a, var, changed) for a in e.args)
    return False


def _split(loop: For, defined: set[str], counter, runtime) -> list[Stmt] | None:
    if not (isinstance(loop.step, Lit) and loop.step.value == 1):
        return None
    changed = assigned_names(loop.body)
    # names bound once in the body to a comparison (`m = j < n; if m:`): cuTile Python follows the alias
    local = {s.targets[0]: s.value for s in loop.body if isinstance(s, Assign) and len(s.targets) == 1}
    found = [(s, c) for s in loop.body if isinstance(s, If) and not s.const
             for c in [_comparison(s.cond, loop, local, changed)] if c is not None]
    if len(found) != 1:  # cuTile Python splits only on exactly one such `if`
        return None
    node, (pred, bound) = found[0]
    if not runtime(bound):
        return None
    n = next(counter)
    pos = loop.pos
    i32 = TileTy("i32")
    pre: list[Stmt] = []
    split = bound
    if isinstance(bound, Op):  # a hoisted invariant: computed once before the loops
        pre.append(Assign((f"__split{n}_value",), bound, pos))
        split = Name(f"__split{n}_value", pos, bound.ty)
    if ADD_ONE[pred]:  # computed once, read by both bounds
        pre.append(Assign((f"__split{n}_at",), Op("add", (split, Lit(1, pos, i32)), pos, ty=i32), pos))
        split = Name(f"__split{n}_at", pos, i32)
    stop1, start2 = f"__split{n}_stop", f"__split{n}_start"
    pre.append(Assign((stop1,), Op("minimum", (loop.stop, split), pos, ty=i32), pos))
    pre.append(Assign((start2,), Op("maximum", (loop.start, split), pos, ty=i32), pos))
    types = {s.targets[0]: s.value.ty for s in all_stmts(loop.body) if isinstance(s, Assign) and len(s.targets) == 1}
    carried = [(c, types[c]) for c in sorted(changed & defined - {loop.var}) if c in types]
    first_then = FIRST_KEEPS_THEN[pred]
    first = replace(loop, stop=Name(stop1, pos, i32), body=_clone(loop.body, node, first_then, carried))
    second = replace(loop, start=Name(start2, pos, i32), body=_clone(loop.body, node, not first_then, carried))
    return pre + [first, second]


def _clone(body, node: If, take_then: bool, carried: list) -> tuple[Stmt, ...]:
    out: list[Stmt] = []
    for s in body:
        if s is node:
            arm = s.body if take_then else s.orelse
            ended = False
            for a in arm:
                out.append(a)
                if isinstance(a, Continue):
                    ended = True
                    break
            if ended:
                break
        else:
            out.append(s)
    kept = assigned_names(out)
    pos = node.pos
    # values the original loop carries and this copy no longer assigns: carried anyway, as in the clone
    # cuTile Python makes (the loop yields them unchanged)
    keep = [Assign((c,), Name(c, pos, ty), pos) for c, ty in carried if c not in kept]
    return tuple(keep) + tuple(out)
