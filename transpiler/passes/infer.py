"""Shape and dtype inference: untyped model -> typed model with every implicit step made explicit.

Every expression gets a type. Python's implicit behaviour becomes explicit ops, the way cuTile
Python lowers it: dtype promotion (`convert`), rank extension and broadcasting (`reshape`,
`broadcast`), literals spread over tiles (`splat` for floats, a splat `const_tile` for ints),
`keepdims` (`reshape` after the reduce). Constant branches whose arms type-check alike stay one
`if` on the const generic; arms that differ raise `SplitNeeded`, and `specialize` makes variants.

This module walks the model: statements, names, literals, constant folding, and the conversions every op
shares (`to_dtype`, `to_shape`, `coerce_pair`, `promote`). Each op is typed by its handler in `ops/`, one
module per family, through the registry `ops.HANDLERS` that `Infer.expr` dispatches on.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from ..diagnostics import TranspileError, fail
from ..model.walk import all_stmts, sub_exprs, walk_exprs
from ..model.ir import (RMW_OPS, FLOAT_DTYPES, INT_DOMAIN, INT_DTYPES, ArrayTy, NoneTy, array_root, is_generic, Assign, Break, Continue, Eval, Expr, For, If, Kernel, Lit,
                        Name, Op, Pos, Stmt, TileTy, TupleExpr, While)
from .predicates import closed_value, decides
from . import ops  # the op handlers, by family (their modules register them on import)
from .type_rules import (ARRAY_USES, COMPILE_ERROR, HoistNeeded, INT_CONTEXT_OPS, MAX_TILE_RANK, POINTER_OPS,
                        Require, RetypeArray, SHAPE_ONLY_OPS, STATIC_ASSERT, SplitNeeded, SplitOnChoice,
                        SplitOnConst, SplitOnDtype, UnifyDims, WRITE_OPS, WidenCarried, broadcast_shapes,
                        check_int_range, is_float, is_int, promote, retype_generic, unify_generics, unify_types)


def _assigned_names(stmts) -> set[str]:
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, Assign):
            out.update(s.targets)
        elif isinstance(s, For):
            out.add(s.var)
            out |= _assigned_names(s.body)
        elif isinstance(s, If):
            out |= _assigned_names(s.body) | _assigned_names(s.orelse)
        elif isinstance(s, While):
            out |= _assigned_names(s.body)
    return out


def _outer_writes(e) -> list:
    """The write ops (stores, atomics) of an expression in evaluation order, not those inside another one's
    arguments (that one runs them)."""
    if isinstance(e, Op) and e.op in WRITE_OPS:
        return [e]
    out = []
    if isinstance(e, Op):
        for a in e.args:
            if a is not None:
                out += _outer_writes(a)
    elif isinstance(e, TupleExpr):
        for a in e.items:
            out += _outer_writes(a)
    return out




def _views_assigned(stmts) -> set[str]:
    """Names assigned an `Array.slice` view anywhere in `stmts`."""
    return {s.targets[0] for s in all_stmts(stmts) if isinstance(s, Assign) and len(s.targets) == 1
            and isinstance(s.value, Op) and s.value.op == "array_slice"}


def slice_roots(k: Kernel) -> dict[str, str]:
    """Each local assigned an `Array.slice` view -> the kernel parameter it was cut from (through views of
    views)."""
    views: dict[str, str] = {}
    for s in all_stmts(k.body):
        if isinstance(s, Assign) and len(s.targets) == 1 and isinstance(s.value, Op) \
                and s.value.op == "array_slice" and s.value.args and isinstance(s.value.args[0], Name):
            views[s.targets[0]] = s.value.args[0].id
    out = {}
    for v in views:
        r, seen = views[v], {v}
        while r in views and r not in seen:
            seen.add(r)
            r = views[r]
        out[v] = r
    return out


def optional_value_flags(k: Kernel) -> list:
    """The hidden constants (Param.given_of) that say whether a Triton constexpr or scalar parameter was given
    (not None), as opposed to a pointer's: each splits the kernel into a variant per value."""
    return [p for p in k.params if p.given_of and p.kind == "const"
            and (t := k.param(p.given_of)) is not None and t.kind != "array"]


def classify_params(k: Kernel) -> Kernel:
    """Unannotated parameters: arrays if used as arrays (with the rank they are used at), else scalars."""
    ranks: dict[str, int] = {}
    int_names: set[str] = set()
    pointer_arrays: set[str] = set()
    roots = slice_roots(k)
    for e in walk_exprs(k.body):
        if isinstance(e, Op) and e.op == "array_slice" and e.args and isinstance(e.args[0], Name):
            # a sliced array is a raw pointer with its shape and strides (the view's base is offset from it)
            pointer_arrays.add(roots.get(e.args[0].id, e.args[0].id))
            int_names.update(x.id for a in e.args[2:] if a is not None for x in sub_exprs(a) if isinstance(x, Name))
        if isinstance(e, Op) and e.op in ARRAY_USES and e.args and isinstance(e.args[0], Name):
            name = roots.get(e.args[0].id, e.args[0].id)
            ranks.setdefault(name, 0)
            for key in ("index", "shape"):
                idx = {"index": 1, "shape": 2}[key]
                v = e.args[idx] if len(e.args) > idx else None
                if isinstance(v, TupleExpr):
                    ranks[name] = max(ranks[name], len(v.items))
                elif v is not None and key == "index" and e.op in ("load", "store", "view_atomic_add"):
                    ranks[name] = max(ranks[name], 1)
            if e.op in POINTER_OPS and e.attr("flat"):  # Triton offsets: integers, whatever they are built from
                int_names.update(x.id for x in sub_exprs(e.args[1]) if isinstance(x, Name))
            if e.op in POINTER_OPS:
                pointer_arrays.add(name)
                idx = e.args[1]
                ranks[name] = max(ranks[name], len(idx.items) if isinstance(idx, TupleExpr) else 1)
            if e.op in ("load", "store", "view_atomic_add", "load_advanced") and len(e.args) > 1:
                idx = e.args[1]
                for it in (idx.items if isinstance(idx, TupleExpr) else (idx,)):
                    for x in sub_exprs(it):
                        if isinstance(x, Name):
                            int_names.add(x.id)
        if isinstance(e, Op) and e.op in ("desc_load", "desc_store"):  # a descriptor's shape, strides, offsets
            int_names.update(x.id for a in e.args[1:4] for x in sub_exprs(a) if isinstance(x, Name))
        if isinstance(e, Op) and e.op in INT_CONTEXT_OPS:
            for a in e.args:
                if isinstance(a, Name):
                    int_names.add(a.id)
    for s in all_stmts(k.body):
        if isinstance(s, For):
            for e in (s.start, s.stop, s.step):
                for x in sub_exprs(e):
                    if isinstance(x, Name):
                        int_names.add(x.id)
    # a where's choices are ints only where its result is used as one itself (offsets, bounds: `direct`), not
    # where arithmetic merely groups it with ints (liger's `temperature = tl.where(adv > 0, POS, NEG)` of float
    # constexprs, then `temperature * (coef - 1.0)`, stays float)
    must = _must_be_int(k) if k.frontend == "triton" else set()
    int_names |= must
    direct = set(int_names)
    int_names |= _int_evidence(k, int_names)
    while (chosen := _where_choices_int(k, direct) - direct):
        direct |= chosen
        int_names |= chosen
        int_names |= _int_evidence(k, int_names)
    flags = _condition_only(k)
    # `softcap = softcap.to(tl.float32)`: a parameter converted to a float in place is a float (the wrapper
    # converts an int argument; typed i32, a float argument would be refused)
    float_self = {s.targets[0] for s in all_stmts(k.body) if isinstance(s, Assign) and len(s.targets) == 1
                  and isinstance(s.value, Op) and s.value.op == "astype" and isinstance(s.value.args[0], Name)
                  and s.value.args[0].id == s.targets[0] and isinstance(s.value.args[1], Op)
                  and s.value.args[1].attr("dtype") in FLOAT_DTYPES} if k.frontend == "triton" else set()
    named = {e.id for e in walk_exprs(k.body) if isinstance(e, Name)} | {
        t for s in all_stmts(k.body) if isinstance(s, Assign) for t in s.targets}
    params = []
    for p in k.params:
        if k.frontend != "triton" and p.kind in ("unknown", "array") and not p.dtype and p.name not in named:
            # never named: an array of any dtype and rank (or a scalar) the kernel never touches (Param.unused)
            params.append(replace(p, kind="array", dtype="f32", rank=1, unused=True))
        elif p.flat:  # a Triton pointer: rank 1 by construction, its element type a generic until inferred
            params.append(replace(p, dtype=p.dtype or "E"))
        elif p.kind == "unknown" or p.kind == "array":
            if p.name in ranks:
                # a 0-d tensor read by `ct.gather(a, ())` keeps rank 0: its pointer is the element
                rank = 0 if p.name in pointer_arrays and ranks[p.name] == 0 else max(ranks[p.name], 1)
                params.append(replace(p, kind="array", dtype=(p.dtype if p.kind == "array" else "") or "E", rank=rank,
                                      pointer=p.name in pointer_arrays))
            elif p.kind == "array":
                raise fail("CT104", f"array parameter `{p.name}` is never loaded or stored, so its rank is unknown", p.pos)
            else:
                # (p.dtype: the int32 a launch site passes, frontend/triton.py int_args)
                dt = "f32" if p.name in float_self else "i32" if p.name in int_names else \
                    "bool" if p.name in flags else p.dtype or "f32"
                params.append(replace(p, kind="scalar", dtype=dt))
        elif p.kind == "const" and p.const_type == "float" and p.name in must:
            # a constexpr guessed a float (`1.0 / C`: frontend/triton._float_use) that is an offset or a bound:
            # an int in every launch Triton compiles
            params.append(replace(p, const_type="int"))
        else:
            params.append(p)
    return replace(k, params=tuple(params))


# ops whose integer result says every value operand is an integer (Triton promotes an integer meeting a float to
# the float): the operand positions that make the value (a where's choices, not its condition)
VALUE_OPERANDS = {**{op: None for op in ("add", "sub", "mul", "neg", "maximum", "minimum", "floordiv", "mod",
                                         "truncdiv", "truncmod", "cdiv", "abs", "hint")},
                  **{op: (0,) for op in SHAPE_ONLY_OPS}, "where": (1, 2), "ifexp": (1, 2)}


def _value_names(e, out: set) -> None:
    """The names whose values an integer `e` is computed from by VALUE_OPERANDS (not through a conversion, a
    comparison or a load: `ptr + x.to(tl.int32)` says nothing of `x`)."""
    if isinstance(e, Name):
        out.add(e.id)
    elif isinstance(e, TupleExpr):
        for it in e.items:
            _value_names(it, out)
    elif isinstance(e, Op) and e.op in VALUE_OPERANDS:
        pick = VALUE_OPERANDS[e.op]
        for i, a in enumerate(e.args):
            if a is not None and (pick is None or i in pick):
                _value_names(a, out)


def _must_be_int(k: Kernel) -> set[str]:
    """Names that hold integers in every Triton specialization that compiles: a pointer's offsets, an index, a
    range bound, an operand of `//` or `tl.cdiv`, and, backwards through assignments, every value operand of an
    integer (`upper = tl.minimum(lower + 1, W_in - 1)` as an offset makes `W_in` an int, whatever float it meets
    elsewhere: `W_in - 1.0` is an int converted)."""
    sinks: set[str] = set()
    for e in walk_exprs(k.body):
        if not isinstance(e, Op):
            continue
        if e.op in POINTER_OPS and e.attr("flat") and len(e.args) > 1:
            _value_names(e.args[1], sinks)
        elif e.op in ("load", "store", "view_atomic_add", "load_advanced") and len(e.args) > 1:
            _value_names(e.args[1], sinks)
        elif e.op == "array_slice":
            for a in e.args[2:]:
                _value_names(a, sinks)
        elif e.op in ("desc_load", "desc_store"):
            for a in e.args[1:4]:
                _value_names(a, sinks)
        elif e.op in ("cdiv", "floordiv", "truncdiv"):
            for a in e.args:
                _value_names(a, sinks)
    for s in all_stmts(k.body):
        if isinstance(s, For):
            for e in (s.start, s.stop, s.step):
                _value_names(e, sinks)
    defs: dict[str, list] = {}
    for s in all_stmts(k.body):
        if isinstance(s, Assign) and len(s.targets) == 1:
            defs.setdefault(s.targets[0], []).append(s.value)
        elif isinstance(s, Assign) and isinstance(s.value, TupleExpr) and len(s.value.items) == len(s.targets):
            for t, v in zip(s.targets, s.value.items):
                defs.setdefault(t, []).append(v)
    must: set[str] = set()
    todo = list(sinks)
    while todo:
        n = todo.pop()
        if n in must:
            continue
        must.add(n)
        for v in defs.get(n, ()):
            more: set[str] = set()
            _value_names(v, more)
            todo.extend(more - must)
    return must


def _where_choices_int(k: Kernel, ints: set[str]) -> set[str]:
    """The names a `tl.where` chooses between where its result holds integers (`stride = tl.where(is_q, q_stride,
    k_stride)` used in offsets): Triton promotes an integer meeting a float to the float, so an integer result
    chose between integers. (Directed: an integer chosen with a float says nothing of the float.)"""
    def chosen(e) -> set[str]:
        if isinstance(e, Name):
            return {e.id}
        if isinstance(e, Op) and e.op == "where" and len(e.args) == 3:  # (nested: a choice among several)
            return chosen(e.args[1]) | chosen(e.args[2])
        return set()
    out: set[str] = set()
    for s in all_stmts(k.body):
        if isinstance(s, Assign) and len(s.targets) == 1 and s.targets[0] in ints and isinstance(s.value, Op) \
                and s.value.op == "where":
            out |= chosen(s.value) - {s.targets[0]}
    return out


def _condition_only(k: Kernel) -> set[str]:
    """Names read only as truth values (`if flag:`, `while flag:`, `a if flag else b`, `not`/`and`/`or` of
    them): an unannotated parameter used this way is a bool, as cuTile Python types a Python `True`."""
    conds: list = []

    def tests(e) -> None:
        if isinstance(e, Name):
            conds.append(e)
        elif isinstance(e, Op) and e.op in ("not", "and", "or"):
            for a in e.args:
                tests(a)

    for s in all_stmts(k.body):
        if isinstance(s, (If, While)):
            tests(s.cond)
    for e in walk_exprs(k.body):
        if isinstance(e, Op) and e.op == "ifexp":
            tests(e.args[0])
    cond_ids = {id(n) for n in conds}
    other = {e.id for e in walk_exprs(k.body) if isinstance(e, Name) and id(e) not in cond_ids}
    return {n.id for n in conds} - other


ARITH_OPS = {"add", "sub", "mul", "floordiv", "mod", "truncdiv", "truncmod", "cmp", "ifexp", "maximum", "minimum", "neg",
             "bitand", "bitor", "bitxor", "shl", "shr", "invert", "and", "or", "not"}
BOOL_RESULTS = {"cmp", "and", "or", "not"}
SHAPE_ONLY = SHAPE_ONLY_OPS
INT_SOURCES = {"bid", "num_blocks", "cdiv", "arange", "num_tiles", "array_dim"}


def _int_evidence(k: Kernel, seeds: set[str]) -> set[str]:
    """Names that hold integers: grouped with int literals, block ids, loop variables or index positions.

    Unannotated scalar parameters have no declared type; the evidence decides i32 (else f32)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        parent[find(a)] = find(b)

    def leaves(e, out: list, top: bool = True) -> None:
        if isinstance(e, Name):
            out.append(e.id)
        elif isinstance(e, Lit) and isinstance(e.value, int) and not isinstance(e.value, bool):
            out.append("#int")
        elif isinstance(e, Op) and e.op in INT_SOURCES:
            out.append("#int")
        elif isinstance(e, Op) and e.op in BOOL_RESULTS and not top:
            return  # `x * (cols == target)`: a comparison's operands meet each other, not the bool it makes
        elif isinstance(e, Op) and e.op in SHAPE_ONLY and e.args and e.args[0] is not None:
            leaves(e.args[0], out, top)  # `rows[:, None] < n_rows`: the same values, reshaped
        elif isinstance(e, Op) and e.op in ARITH_OPS:
            for a in e.args:
                if a is not None:
                    leaves(a, out, False)

    groups: list[list[str]] = []
    for s in all_stmts(k.body):
        if isinstance(s, Assign) and len(s.targets) == 1:
            ls = [s.targets[0]]
            leaves(s.value, ls, False)  # `mask = cols < n`: mask is a bool, not one of the ints compared
            groups.append(ls)
        elif isinstance(s, Assign) and k.frontend == "triton" and isinstance(s.value, TupleExpr) \
                and len(s.value.items) == len(s.targets):  # `offs, mask = helper(...)` (a Triton helper's tuple)
            for t, v in zip(s.targets, s.value.items):
                ls = [t]
                leaves(v, ls, False)
                groups.append(ls)
        if isinstance(s, For):
            groups.append([s.var, "#int"])
    scalars = {p.name for p in k.params if p.kind == "unknown"}
    for e in walk_exprs(k.body):
        if k.frontend == "triton" and isinstance(e, Op) and e.op == "astype" and len(e.args) > 1 \
                and isinstance(e.args[0], Name) and e.args[0].id in scalars and isinstance(e.args[1], Op) \
                and e.args[1].attr("dtype") in INT_DTYPES:
            # `row_stride.to(tl.int64)`: a scalar parameter widened to an integer is one (a stride, a count)
            # where nothing says it is a float
            groups.append([e.args[0].id, "#int"])
        if isinstance(e, Op) and e.op in ARITH_OPS:
            ls: list = []
            leaves(e, ls)
            groups.append(ls)
    for g in groups:
        for x in g[1:]:
            union(g[0], x)
    for name in seeds:
        union(name, "#int")
    root = find("#int")
    ints = {n for n in parent if not n.startswith("#") and find(n) == root}
    if k.frontend == "triton":
        # Triton types a scalar argument by its value; a name an op meets with a float literal
        # (`1.0 - label_smoothing`) is a float there, though the mixed arithmetic around it (`n_cols * lse`)
        # joins it to integers. Only its own integer uses (offsets, range bounds) make it an int then.
        floats = {a.id for e in walk_exprs(k.body) if isinstance(e, Op) and e.op in ARITH_OPS - BOOL_RESULTS
                  and any(isinstance(x, Lit) and isinstance(x.value, float) for x in e.args)
                  for a in e.args if isinstance(a, Name)}
        # likewise a name an op meets with a local that holds a float computed from a float literal or a float
        # conversion (`tl.rand(seed, offs) > p`: the draw is `float32(bits) * 4.66e-10`), directly or copied
        held = _float_locals(k)
        floats |= {a.id for e in walk_exprs(k.body) if isinstance(e, Op) and e.op in ARITH_OPS
                   and any(isinstance(x, Name) and x.id in held for x in e.args)
                   for a in e.args if isinstance(a, Name) and a.id not in held}
        # and a name an arithmetic op meets with an expression that is a float in Triton whatever it is
        # given (`cols.to(tl.float32) * step + shift`: `step` and `shift` are floats, as the scale is)
        floats |= {a.id for e in walk_exprs(k.body) if isinstance(e, Op) and e.op in ARITH_OPS - BOOL_RESULTS
                   and any(isinstance(x, Op) and _float_valued(x, held) for x in e.args)
                   for a in e.args if isinstance(a, Name) and a.id not in held}
        ints -= floats - seeds
    return ints


# ops whose result is a float in Triton whatever their operands (`/` is a true division; the math functions
# take floats only)
FLOAT_RESULT_OPS = {"div", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "sin", "cos", "tan", "sinh", "cosh",
                    "pow", "atan2", "sigmoid",
                    "floor", "ceil", "libdevice", "exact_math"}


def _float_valued(e, held: set[str]) -> bool:
    """An expression that is a float in every Triton specialization: a float literal or conversion, a float-only
    op, a name of `held` (_float_locals), or arithmetic or a choice with such an operand (Triton promotes an
    integer meeting a float to the float)."""
    if isinstance(e, Lit):
        return isinstance(e.value, float)
    if isinstance(e, Name):
        return e.id in held
    if not isinstance(e, Op):
        return False
    if e.op == "astype":
        return len(e.args) > 1 and isinstance(e.args[1], Op) and e.args[1].attr("dtype") in FLOAT_DTYPES
    if e.op in FLOAT_RESULT_OPS:
        return True
    if e.op in ("add", "sub", "mul", "neg", "maximum", "minimum", "abs") or e.op in SHAPE_ONLY_OPS:
        return any(_float_valued(a, held) for a in e.args if a is not None)
    if e.op in ("where", "ifexp") and len(e.args) == 3:
        return _float_valued(e.args[1], held) or _float_valued(e.args[2], held)
    return False


def _float_locals(k: Kernel) -> set[str]:
    """Names every assignment of which is a float made from a float literal and a conversion to a float dtype
    (`x.to(tl.float32) * 0.5`), or a copy of such a name."""
    defs: dict[str, list] = {}
    for s in all_stmts(k.body):
        if isinstance(s, Assign):
            for t in s.targets:
                defs.setdefault(t, []).append(s.value if len(s.targets) == 1 else None)

    def made_float(v) -> bool:
        if isinstance(v, Op) and v.op == "astype" and len(v.args) > 1 and isinstance(v.args[1], Op) \
                and v.args[1].op == "dtype" and v.args[1].attr("dtype") in FLOAT_DTYPES:
            return True
        return isinstance(v, Op) and v.op in ("add", "sub", "mul", "div") and any(
            isinstance(x, Lit) and isinstance(x.value, float) for x in v.args) and any(
            made_float(x) for x in v.args if not isinstance(x, Lit))

    held: set[str] = set()
    while True:
        more = {n for n, vs in defs.items()
                if all(made_float(v) or (isinstance(v, Name) and v.id in held) for v in vs)} - held
        if not more:
            return held
        held |= more


class Infer:
    def __init__(self, kernel: Kernel, dtypes: tuple[str, ...] = ()):
        self.k = kernel
        # warnings the typing gives (code, message, position): an emulation's cost, said at its call
        self.notes: list[tuple] = []
        # the element types every generic is exported for (E's in this entry: kernel.variant.dtypes)
        self.all_dtypes = tuple(dtypes) or kernel.variant.dtypes
        self.consts = {p.name: p for p in kernel.params if p.kind == "const"}
        self.env: dict[str, object] = {}
        self.sources: dict[str, str] = {}
        # names holding a tile the kernel converted to a generic dtype itself (`x.astype(Out.dtype)`): a store of
        # one into an array of another generic is an implicit cast, not a meeting of the two (explicitly_converted)
        self.converted: set[str] = set()
        # the integer pointers whose widened loads each name's value is computed from (ops/memory.int_pointer_roots;
        # a union over the name's assignments)
        self.int_roots: dict[str, set[str]] = {}
        # names assigned once, from a Python number: cuTile Python keeps them as (weakly typed) constants
        counts: dict[str, int] = {}
        for s in all_stmts(kernel.body):
            for t in (s.targets if isinstance(s, Assign) else (s.var,) if isinstance(s, For) else ()):
                counts[t] = counts.get(t, 0) + 1
        self.once = {n for n, c in counts.items() if c == 1}
        self.arm_only: dict[str, If] = {}  # names defined in one arm of a constant `if` only
        self.mma_pairs: set[tuple[str, str]] = set()  # Kernel.mma_pairs
        # (Triton) that `if`, whether its then-arm defines the name, and the name's type there (HoistNeeded)
        self.arm_only_defs: dict[str, tuple[If, bool, object]] = {}
        # (Triton) the constant conditions known where inference is: (predicate text, truth) per enclosing arm
        self.const_facts: list[tuple[str, bool]] = []
        # the value of each name assigned exactly once (`check_bounds = not ALIGNED`), or only by copies of one
        # statement (the frontend copies what follows an early `return` in a constant arm into both arms)
        self.single_defs = {s.targets[0]: s.value for s in all_stmts(kernel.body)
                            if isinstance(s, Assign) and len(s.targets) == 1 and s.targets[0] in self.once}
        copies: dict[str, list[Assign]] = {}
        # names every assignment of which is a dtype (`elem_ty = p.dtype.element_ty` in each arm of an `if`): bound
        # anew at each assignment, as Triton's tracing binds a constexpr (see if_stmt for the arms)
        dtype_defs: dict[str, list] = {}
        for st in all_stmts(kernel.body):
            for t in (st.targets if isinstance(st, Assign) else (st.var,) if isinstance(st, For) else ()):
                dtype_defs.setdefault(t, []).append(isinstance(st, Assign) and len(st.targets) == 1
                                                    and isinstance(st.value, Op) and (
                                                        st.value.op in ("dtype", "dtype_of")
                                                        or kernel.frontend == "triton" and (
                                                            self._dtype_number_op(st.value)
                                                            or self._is_dtype_test(st.value))))
        self.dtype_names = {n for n, flags in dtype_defs.items() if all(flags)}
        if kernel.frontend == "triton":  # (Triton) `ACC = tl.float32` in one arm, `ACC = x_dtype` in the other
            self.dtype_names = _dtype_copies(kernel, self.dtype_names | set(kernel.dtype_consts))
        for st in all_stmts(kernel.body):
            for t in (st.targets if isinstance(st, Assign) else (st.var,) if isinstance(st, For) else ()):
                copies.setdefault(t, []).append(st)
        for name, defs in copies.items():
            first = defs[0]
            if len(defs) > 1 and all(isinstance(d, Assign) and len(d.targets) == 1 and d.pos == first.pos
                                     and d.value == first.value for d in defs):
                self.single_defs[name] = first.value
        self.literals: dict[str, Expr] = {}
        self.derived: dict[str, str] = {}
        self.derived_floats: set[str] = set()  # derived float constants (their expression is `float(...)`)
        self.dim_aliases = dict(kernel.dim_aliases)  # see UnifyDims
        # Triton dots of a pointer's elements (generic operands), in typing order: (generic, result shape); a loop
        # or an `if` reads those of its body (_check_int_carried)
        self.dots: list[tuple[str, tuple[str, ...]]] = []
        for p in kernel.params:
            if p.kind == "array":
                self.env[p.name] = ArrayTy(p.dtype, p.rank)
            elif p.kind == "scalar":
                self.env[p.name] = TileTy(p.dtype)
            elif p.kind == "const":
                self.env[p.name] = TileTy({"int": "i32", "bool": "i32", "float": "f32"}[p.const_type])
        # a Triton constexpr or scalar parameter passed as None in this variant (optional_values): it holds no
        # value; any read but its None test refuses the variant (Triton compiles no kernel that computes with it)
        self.absent = {p.given_of for p in optional_value_flags(kernel)
                       if decides(kernel.variant.predicates, p.name) is False}
        for name in self.absent:
            self.env[name] = NoneTy()
            self.consts.pop(name, None)
        # those hidden constants read as the literal this variant fixes
        self.value_flags = {p.name: decides(kernel.variant.predicates, p.name) for p in optional_value_flags(kernel)}

    def _note_int_roots(self, name: str, v: Expr) -> None:
        if self.k.frontend != "triton" or not isinstance(v.ty, TileTy) or v.ty.dtype != "i64":
            return
        from .ops.memory import int_pointer_roots
        roots = int_pointer_roots(self, v)
        if roots:
            self.int_roots[name] = self.int_roots.get(name, set()) | roots

    def note_dot(self, dtype: str, shape: tuple[str, ...]) -> None:
        if self.k.frontend == "triton" and is_generic(dtype):
            self.dots.append((dtype, tuple(shape)))

    def _rebound(self, targets) -> None:
        """`NT = tl.cdiv(T, BT)` where NT is a constexpr parameter (legal Python): from here on NT is that runtime
        value, typed as such (the emitter names it `NT_`: derived_names.rename_rebound_constants), not the
        weakly typed constant (`i_n * NT` of an i64 `i_n` widens the i32 local)."""
        for t in targets:
            if t in self.consts:
                del self.consts[t]
                self.literals.pop(t, None)
                self.derived.pop(t, None)

    def explicitly_converted(self, e: Expr) -> bool:
        """A tile of a generic dtype that the kernel converted to it itself (`ct.astype(x, Out.dtype)`, through
        reshapes and broadcasts, or a name last assigned one)."""
        while isinstance(e, Op) and e.op in ("reshape", "broadcast", "transpose", "permute", "expand_dims") and e.args:
            e = e.args[0]
        if isinstance(e, Name):
            return e.id in self.converted
        return isinstance(e, Op) and e.op == "convert" and bool(e.rule) and isinstance(e.ty, TileTy) \
            and is_generic(e.ty.dtype) and isinstance(e.args[0].ty, TileTy) and e.args[0].ty.dtype != e.ty.dtype

    def source_array(self, e: Expr) -> str | None:
        """The generic-dtype array an expression's values come straight from (loads, items, reshapes)."""
        if isinstance(e, Name):
            return self.sources.get(e.id)
        if isinstance(e, Op) and e.op in ("load", "load_advanced", "gather", *RMW_OPS) \
                and e.ty is not None and is_generic(e.ty.dtype):
            return array_root(e.args[0])
        if isinstance(e, Op) and e.op in ("item", "reshape", "broadcast", "splat", "add", "sub", "mul", "maximum",
                                          "minimum", "where", "ifexp", "neg", "floordiv", "mod", "truncdiv", "truncmod",
                                          "cdiv", "floor", "div", "convert") and e.args:
            for a in e.args:
                if isinstance(a, (Name, Op)) and a.ty is not None and is_generic(getattr(a.ty, "dtype", "")):
                    found = self.source_array(a)
                    if found:
                        return found
        return None

    def demand_int(self, e: Expr) -> None:
        """`e` is used as an integer; if it is a generic-dtype array's element, that array holds integers."""
        if isinstance(e.ty, TileTy) and is_generic(e.ty.dtype):
            src = self.source_array(e)
            if src:
                raise RetypeArray(src, "i32")
            if self.k.frontend == "triton":
                # (made in a pointer's element type, not loaded: `tl.full((), 0, p.dtype.element_ty)`)
                retype_generic(self.k, e.ty.dtype, "i32")

    def widened_dtype(self, dt: str) -> str:
        """The dtype a value made in element type `dt` (`x.to(p.dtype.element_ty)`, `tl.full(..., p.dtype...)`)
        is computed in: i64 for a Triton pointer of integers (INT_DOMAIN), whose loads are widened to i64
        (ops/memory._widened) so that the values meet in one type whatever width the caller passes."""
        if self.k.frontend == "triton" and is_generic(dt) and any(
                p.flat and p.dtype == dt and p.domain == INT_DOMAIN for p in self.k.params):
            return "i64"
        return dt

    def run(self) -> Kernel:
        body = tuple(self.block(self.k.body))
        notes = self.k.notes + tuple(n for n in dict.fromkeys(self.notes) if n not in self.k.notes)
        return replace(self.k, body=body, derived=tuple(self.derived.items()), mma_pairs=tuple(sorted(self.mma_pairs)),
                       notes=notes)

    # truncdiv / truncmod (Triton's `//` and `%` on constexprs) are computed as Python's floor forms: the same
    # for the non-negative values constant arithmetic meets (tile sizes, head dims); a negative operand differs
    _CONST_OPS = {"add": ("+", "ADD"), "sub": ("-", "SUB"), "mul": ("*", "MUL"), "floordiv": ("//", "DIV"),
                  "mod": ("%", "MOD"), "cdiv": (None, "CDIV"), "truncdiv": ("//", "DIV"), "truncmod": ("%", "MOD"),
                  "bitand": ("&", "AND"), "bitor": ("|", "OR"), "bitxor": ("^", "XOR")}

    def const_int_expr(self, e: Expr, depth: int = 0) -> tuple[str, str] | None:
        """(Python expression, generic name) of integer arithmetic on int constants and literals, which
        cuTile Python folds at compile time; Rust gets it as a const generic computed by the launcher."""
        if isinstance(e, Lit) and isinstance(e.value, int) and not isinstance(e.value, bool):
            return str(e.value), str(e.value)
        if isinstance(e, Name) and e.id in self.consts and self.consts[e.id].const_type in ("int", "bool"):
            return e.id, e.id
        if isinstance(e, Name) and e.id in self.derived and depth < 16:
            return self.derived[e.id], e.id  # a derived constant again (`BLOCK * 2`, doubled by interleave)
        if isinstance(e, Name) and e.id in self.literals:
            return self.const_int_expr(self.literals[e.id])
        if isinstance(e, Name) and e.id in self.single_defs and depth < 16:
            # a name bound once to constant arithmetic (`N = C * H`) is a compile-time value in Python too
            return self.const_int_expr(self.single_defs[e.id], depth + 1)
        if isinstance(e, Op) and e.op == "ifexp" and len(e.args) == 3:
            # `pad_hd if pad_rope_hd == 0 else pad_rope_hd`: a choice between constants on a constant comparison
            c, a, b = e.args
            if not (isinstance(c, Op) and c.op == "cmp" and len(c.args) == 2 and c.attr("pred") in self._CMP_WORDS):
                return None
            x, y = self.const_int_expr(c.args[0], depth), self.const_int_expr(c.args[1], depth)
            a, b = self.const_int_expr(a, depth), self.const_int_expr(b, depth)
            if None in (x, y, a, b):
                return None
            pred = c.attr("pred")
            return (f"(({a[0]}) if (({x[0]}) {pred} ({y[0]})) else ({b[0]}))",
                    f"{a[1]}_IF_{x[1]}_{self._CMP_WORDS[pred]}_{y[1]}_ELSE_{b[1]}")
        if isinstance(e, Op) and e.op == "numel_of" and len(e.args) == 1:
            # Triton's `x.numel`: the tile's element count, the product of its (constant) extents
            ty = self.expr(e.args[0]).ty
            if not isinstance(ty, TileTy):
                return None
            dims = [self.dim(d) for d in ty.shape]
            if all(d.isdigit() for d in dims):
                return str(math.prod(int(d) for d in dims)), str(math.prod(int(d) for d in dims))
            return ("(" + " * ".join(f"({self.dim_value(d)})" for d in dims) + ")",
                    "NUMEL_" + "_MUL_".join(dims))
        if isinstance(e, Op) and e.op == "array_dim" and len(e.args) == 1 and self.k.frontend == "triton":
            # Triton's `x.shape[0]` of a tile: its extent, a constexpr (`(d.shape[0] // 2, 2)` as a shape)
            ty = self.expr(e.args[0]).ty
            if not (isinstance(ty, TileTy) and -len(ty.shape) <= e.attr("dim") < len(ty.shape)):
                return None
            d = self.dim(ty.shape[e.attr("dim") % len(ty.shape)])
            if d.isdigit() or (d in self.consts and self.consts[d].const_type == "int"):
                return d, d
            return (f"({self.dim_value(d)})", d) if d in self.derived else None
        if isinstance(e, Op) and e.op in self._CONST_FUNCS and len(e.args) == 1:
            # Triton's constexpr functions (`triton.next_power_of_2(K)`): evaluated on constants when it compiles
            a = self.const_int_expr(e.args[0], depth)
            fn, word = self._CONST_FUNCS[e.op]
            return None if a is None else (f"{fn}({a[0]})", f"{word}_{a[1]}")
        if isinstance(e, Op) and e.op == "neg" and len(e.args) == 1:  # `-WINDOW_SIZE`: a Python int too
            a = self.const_int_expr(e.args[0], depth)
            return None if a is None else (f"(-({a[0]}))", f"NEG_{a[1]}")
        if isinstance(e, Op) and e.op == "const_pow" and len(e.args) == 2 and isinstance(e.args[1], Lit) \
                and not isinstance(e.args[0], Lit) \
                and type(e.args[1].value) is int and 0 <= e.args[1].value <= self._MAX_INT_POWER:
            # `BLOCK ** 2`: an int to a small non-negative literal power is an int in Python, its product (of
            # literals, `2 ** 3` is folded by the op's handler)
            a, n = self.const_int_expr(e.args[0], depth), e.args[1].value
            if a is None:
                return None
            return ("(" + " * ".join([f"({a[0]})"] * n) + ")" if n else "1"), f"{a[1]}_POW_{n}"
        if isinstance(e, Op) and e.op in self._CONST_OPS and len(e.args) == 2:
            a, b = self.const_int_expr(e.args[0], depth), self.const_int_expr(e.args[1], depth)
            if a is None or b is None:
                return None
            sym, word = self._CONST_OPS[e.op]
            expr = f"(-(-({a[0]}) // ({b[0]})))" if e.op == "cdiv" else f"(({a[0]}) {sym} ({b[0]}))"
            return expr, f"{a[1]}_{word}_{b[1]}"
        return None

    _MAX_INT_POWER = 8  # `C ** n` of an int constant is written as n factors up to here

    # model op -> (the function of verify/specs.py's and emit/ffi.py's constant expressions, the derived name's word)
    _CONST_FUNCS = {"next_power_of_2": ("next_power_of_2", "NPO2"), "log2_floor": ("log2_floor", "LOG2")}

    _CMP_WORDS = {"==": "EQ", "!=": "NE", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE"}

    # `ct.truediv(1.0, D)` too: cuTile Python folds any arithmetic on two constants, whatever its rounding mode
    _FLOAT_OPS = {"add": ("+", "ADD"), "sub": ("-", "SUB"), "mul": ("*", "MUL"), "div": ("/", "DIV"),
                  "truediv": ("/", "DIV")}

    def const_float_expr(self, e: Expr) -> tuple[str, str, bool] | None:
        """(Python expression, generic name, reads a constant) of float arithmetic on constants and literals
        (`1.0 - beta`, `eps / n_cols`), which cuTile Python folds in Python's float (f64) at compile time;
        Rust gets the result as a float const generic computed by the launcher in f64."""
        if isinstance(e, Lit) and isinstance(e.value, (int, float)) and not isinstance(e.value, bool):
            if isinstance(e.value, float) and not math.isfinite(e.value):
                return None
            return repr(e.value), re.sub(r"[^A-Za-z0-9]", "_", repr(e.value).replace(".", "P").replace("-", "N")), False
        if isinstance(e, Name) and e.id in self.consts and self.consts[e.id].const_type in ("int", "float"):
            return e.id, e.id, True
        if isinstance(e, Name) and e.id in self.derived:
            return self.derived[e.id], e.id, True
        if isinstance(e, Name) and e.id in self.literals:
            return self.const_float_expr(self.literals[e.id])
        if isinstance(e, Name) and e.id in self.single_defs and not self._depth_exceeded(e):
            found = self.const_float_expr(self.single_defs[e.id])  # `N = C * H; inv = 1.0 / N`
            return None if found is None else (found[0], e.id.upper(), True)
        if isinstance(e, Op) and e.op == "neg" and len(e.args) == 1:
            a = self.const_float_expr(e.args[0])
            return None if a is None else (f"(-({a[0]}))", f"NEG_{a[1]}", a[2])
        if isinstance(e, Op) and e.op == "const_sqrt" and len(e.args) == 1:  # `math.sqrt(HEAD_DIM)` (Triton)
            a = self.const_float_expr(e.args[0])
            return None if a is None else (f"sqrt({a[0]})", f"SQRT_{a[1]}", a[2])
        if isinstance(e, Op) and e.op == "const_pow" and len(e.args) == 2 and self._float_power(e):
            # `HEAD_DIM ** -0.5`: Python's float pow of constants when Triton compiles (f64, then f32)
            a, b = self.const_float_expr(e.args[0]), self.const_float_expr(e.args[1])
            if a is None or b is None:
                return None
            return f"pow({a[0]}, {b[0]})", f"{a[1]}_POW_{b[1]}", a[2] or b[2]
        if isinstance(e, Op) and e.op in self._FLOAT_OPS and len(e.args) == 2:
            a, b = self.const_float_expr(e.args[0]), self.const_float_expr(e.args[1])
            if a is None or b is None:
                return None
            sym, word = self._FLOAT_OPS[e.op]
            return f"(({a[0]}) {sym} ({b[0]}))", f"{a[1]}_{word}_{b[1]}", a[2] or b[2]
        return None

    def _float_power(self, e: Op) -> bool:
        """`a ** b` of constants is a Python float whatever their values: an operand is a float (a literal, a float
        constant, a derived float) or the exponent a negative int literal. An int to an int constant's power is an
        int or a float by the exponent's sign: no one type for every specialization (refused)."""
        base, exp = e.args
        def is_float(x: Expr) -> bool:
            return any((isinstance(y, Lit) and isinstance(y.value, float)) or self.is_float_const(y)
                       or (isinstance(y, Op) and y.op in ("div", "truediv", "const_sqrt")) for y in sub_exprs(x))
        negative = isinstance(exp, Lit) and type(exp.value) is int and exp.value < 0 or (
            isinstance(exp, Op) and exp.op == "neg" and isinstance(exp.args[0], Lit) and type(exp.args[0].value) is int)
        return is_float(base) or is_float(exp) or negative

    def _depth_exceeded(self, e: Name) -> bool:
        """Guards the resolution of names bound once against a cycle (`x = x * 2` at the top level)."""
        seen, v = set(), e
        while isinstance(v, Name) and v.id in self.single_defs:
            if v.id in seen:
                return True
            seen.add(v.id)
            v = self.single_defs[v.id]
        return any(isinstance(x, Name) and x.id in seen for x in sub_exprs(v))

    def derived_float_name(self, e: Expr) -> str | None:
        """A float constant folded from constants, as a derived generic (`float(...)` marks its type)."""
        if not isinstance(e, Op):
            return None
        found = self.const_float_expr(e)
        if found is None or not found[2]:
            return None  # arithmetic on literals only is folded here (see _arith)
        expr, name, _ = found
        reads_float = any(isinstance(x, Name) and (self.is_float_const(x)) for x in sub_exprs(e)) or any(
            isinstance(x, Lit) and isinstance(x.value, float) for x in sub_exprs(e)) or any(
            isinstance(x, Op) and x.op in ("div", "truediv", "const_sqrt") for x in sub_exprs(e)) or any(
            isinstance(x, Op) and x.op == "const_pow" and self._float_power(x) for x in sub_exprs(e))
        if not reads_float:
            return None  # integer arithmetic: derived_name's business
        name = "F_" + name.upper()
        self.derived[name] = f"float({expr})"
        self.derived_floats.add(name)
        return name

    def derived_name(self, e: Expr) -> str | None:
        found = self.const_int_expr(e)
        # a name bound once to constant arithmetic (`FLAT = TILE_M * TILE_N`) is that arithmetic
        if found is None or isinstance(e, Lit) or (isinstance(e, Name) and e.id in self.consts):
            return None
        if isinstance(e, Op) and e.op == "numel_of" and found[0].isdigit():
            return None  # a literal element count (ops/shape.numel_of)
        if isinstance(e, Name) and found[0].strip() == e.id:
            return None
        expr, name = found
        if expr == name and name in self.consts:  # a name bound to a constant parameter (`M = BM`): that parameter
            return name
        name = name.upper().replace("-", "NEG")
        if name[:1].isdigit():  # `1 - N`: a Rust identifier cannot start with a digit
            name = "C" + name
        self.derived[name] = expr
        return name

    # ---------------------------------------------------------------- statements
    def block(self, stmts) -> list[Stmt]:
        out = []
        for s in stmts:
            # values an op reads more than once (hoist) are bound just before the assignment or expression
            # statement that holds the op; elsewhere (a loop's bounds, a condition) they are not bound
            self.hoisted = [] if isinstance(s, (Assign, Eval)) else None
            done = self.stmt(s)
            if self.hoisted and done and getattr(done[0], "text", ""):  # the source line above all it computes
                self.hoisted[0] = replace(self.hoisted[0], text=done[0].text)
                done[0] = replace(done[0], text="")
            out.extend(self.hoisted or ())
            self.hoisted = None
            out.extend(done)
        return out

    def hoist(self, v: Expr) -> Expr:
        """`v` bound to a fresh name before the statement being inferred (an op that reads it several times
        computes it once), or `v` itself where nothing can be bound here or it is already a name or literal."""
        if isinstance(v, (Name, Lit)) or getattr(self, "hoisted", None) is None or not isinstance(v.ty, TileTy):
            return v
        if not hasattr(self, "_taken"):  # every name the kernel binds anywhere, so a fresh one never shadows one
            self._taken = {p.name for p in self.k.params} | _assigned_names(self.k.body)
        n = 0
        while f"hoisted_{n}" in self.env or f"hoisted_{n}" in self._taken:
            n += 1
        name = f"hoisted_{n}"
        self.env[name] = v.ty
        self.hoisted.append(Assign((name,), v, v.pos, ""))
        return Name(name, v.pos, v.ty)

    def stmt(self, s: Stmt) -> list[Stmt]:
        if isinstance(s, Assign) and len(s.targets) == 1 and isinstance(s.value, Op) and s.value.op == "none_value":
            # a Triton `mask = None`: no Rust value; the name reads as an absent mask / other, or `is None`
            self.env[s.targets[0]] = NoneTy()
            self.sources.pop(s.targets[0], None)
            self.literals.pop(s.targets[0], None)
            return []
        if isinstance(s, Assign):
            if len(s.targets) == 1 and s.targets[0] in self.once and (self.is_weak(s.value)
                                                                       or self._is_flag_expr(s.value)):
                # substituted at every use, like cuTile Python does (a flag expression such as
                # `check_bounds = not ALIGNED` stays a compile-time constant)
                self.literals[s.targets[0]] = s.value
                return []
            if self.k.frontend == "triton" and len(s.targets) == 1 \
                    and (s.targets[0] in self.once or s.targets[0] in self.dtype_names) \
                    and (self._dtype_number_op(s.value) or self._is_dtype_test(s.value)):
                # `bits: tl.constexpr = x.dtype.primitive_bitwidth`, `is_half = x.dtype.is_fp16()`: Triton's
                # compile-time values, substituted at their uses (decided per entry there)
                self.literals[s.targets[0]] = s.value
                return []
            value = s.value
            if len(s.targets) == 1 and isinstance(value, Op) and value.op == "ifexp" \
                    and (chosen := self.dtype_cond_value(value.args[0])) is not None \
                    and all(isinstance(a, Op) and a.op in ("dtype", "dtype_of")
                            or self.k.frontend == "triton" and self.dtype_value(a) is not None  # a dtype local
                            for a in value.args[1:]):
                # `dt = ct.tfloat32 if A.dtype == ct.float32 else A.dtype`: the dtype this entry takes
                s = replace(s, value=self.literal_of(value.args[1] if chosen else value.args[2]))
            if len(s.targets) == 1 and (s.targets[0] in self.once or s.targets[0] in self.dtype_names) \
                    and (isinstance(s.value, Op) and s.value.op in ("dtype", "dtype_of", "enum")
                         or self.k.frontend == "triton" and isinstance(s.value, Name)
                         and (s.value.id in self.k.dtype_consts or self.dtype_value(s.value) is not None)):
                # (Triton: `acc_dtype = DTYPE` of a dtype constexpr, `ACC = x_dtype` of a dtype local)
                s = replace(s, value=self.literal_of(s.value))
                # `x_dtype = x.dtype`, `zero_pad = ct.PaddingMode.ZERO`: compile-time values in cuTile Python,
                # substituted at their uses
                self.literals[s.targets[0]] = s.value
                return []
            v = self.expr(s.value)
            if len(s.targets) == 1 and s.targets[0] in self.once and isinstance(v, Lit) and self.is_weak(v):
                # `third = 1.0 / 3.0`: folded to a Python number, weakly typed where it is used
                self.literals[s.targets[0]] = Lit(v.value, v.pos)
                return []
            if self.k.frontend == "triton" and len(s.targets) == 1 and s.targets[0] in self.once \
                    and isinstance(v, Name) and isinstance(s.value, Op) and s.value.op == "array_dim" \
                    and (v.id in self.consts or v.id in self.derived):
                # `M: tl.constexpr = x.shape[0]` of a tile: that constant, substituted at every use
                self.literals[s.targets[0]] = v
                return []
            if len(s.targets) == 1 and s.targets[0] in self.once and isinstance(v, Name) \
                    and v.id in self.derived_floats:
                # `inv_n = 1.0 / n_cols`: a Python float at compile time, weakly typed where it is used
                # (`f16_tile * inv_n` stays f16), as cuTile Python folds it
                self.literals[s.targets[0]] = s.value
                return []
            if len(s.targets) == 1 and isinstance(v, Op) and v.op == "array_slice":
                t = s.targets[0]
                if any(p.name == t for p in self.k.params):
                    raise fail("CT100", f"`{t}` is a kernel parameter: assign the `Array.slice` view to a new "
                               "name", s.pos)
                if t in self.env and not isinstance(self.env[t], ArrayTy):
                    raise fail("CT100", f"`{t}` holds a tile or scalar and is assigned an `Array.slice` view here: "
                               "give the view its own name", s.pos)
                self.env[t] = v.ty
                self.sources.pop(t, None)
                return [Assign(s.targets, v, s.pos, s.text)]
            if len(s.targets) == 1:
                if isinstance(v.ty, ArrayTy) or v.ty is None:
                    raise fail("CT100", "only tiles and scalars can be assigned to variables", s.pos)
                if isinstance(self.env.get(s.targets[0]), ArrayTy):
                    raise fail("CT100", f"`{s.targets[0]}` holds an `Array.slice` view and is assigned a tile or "
                               "scalar here: give the value its own name", s.pos)
                self.env[s.targets[0]] = v.ty
                self._rebound(s.targets)
                self._note_int_roots(s.targets[0], v)
                src = self.source_array(v)
                if src:
                    self.sources[s.targets[0]] = src
                else:
                    self.sources.pop(s.targets[0], None)
                if self.explicitly_converted(v):
                    self.converted.add(s.targets[0])
                else:
                    self.converted.discard(s.targets[0])
                return [Assign(s.targets, v, s.pos, s.text)]
            if not isinstance(v, TupleExpr) or len(v.items) != len(s.targets):
                raise fail("CT100", "tuple unpacking needs a tuple of the same length on the right", s.pos)
            out = []
            for i, (t, item) in enumerate(zip(s.targets, v.items)):
                self.env[t] = item.ty
                self._note_int_roots(t, item)
                src = self.source_array(item)  # (as for one target: `start, end = 0, seq_len` of a loaded length)
                if src:
                    self.sources[t] = src
                else:
                    self.sources.pop(t, None)
                out.append(Assign((t,), item, s.pos, s.text if i == 0 else ""))
            self._rebound(s.targets)
            return out
        if isinstance(s, Eval):
            v = self.expr(s.value)
            if not (isinstance(v, Op) and (v.op in WRITE_OPS or v.op == "llm_hole")):
                # an op the port writes as several atomics (a float atomic max): each one a statement, in order;
                # what combines their old values is discarded with the value
                writes = _outer_writes(v)
                if not writes:
                    raise fail("CT100", "expression statement has no effect (only stores, scatters and atomics)",
                               s.pos)
                return [Eval(w, s.pos, s.text if i == 0 else "") for i, w in enumerate(writes)]
            return [Eval(v, s.pos, s.text)]
        if isinstance(s, For):
            start, stop, step = (self.scalar_int(e) for e in (s.start, s.stop, s.step))
            negated = (isinstance(s.step, Op) and s.step.op == "neg") or (
                isinstance(step, Name) and self.derived.get(step.id, "").startswith("(-("))  # `-STEP`: folded
            if isinstance(step, Lit) and step.value <= 0 or isinstance(step, Op) and step.op == "neg" or negated:
                # the port's loop is a Rust range, `(start..stop).step_by(step)`: it only counts up
                raise fail("CT104", "a `range` with a negative or zero step is not supported (the port's loops count "
                           "up); loop over `range(n)` and index with `last - i`", s.step.pos)
            # loops run over i32: cuTile Rust 0.5 gives a loop's step (and a unit step) type i32 whatever the
            # bounds' type, which tileiras rejects for i64 bounds ("all of {lowerBound, upperBound, step} have
            # same type", seen on the H200). A Triton loop over int64 bounds (ids widened as loaded) counts in
            # i32: the bounds are truncated, exact while they fit i32 (offsets past 2^31 elements do not)
            var_ty = "i32"
            if self.k.frontend == "triton":
                # (the same for any other integer bound or step: an int64 step, `tl.num_programs(0).to(tl.int64)`,
                # and Triton's uint32 loop over `tl.minimum(n, tl.sum(mask))` (a bool sum is uint32), which
                # counts the same while its bounds are below 2**31)
                start, stop, step = (Op("convert", (b,), b.pos, (("truncate", True),), ty=TileTy("i32"))
                                     if isinstance(b.ty, TileTy) and b.ty.dtype in INT_DTYPES and b.ty.dtype != "i32"
                                     and b.ty.is_scalar else b for b in (start, stop, step))
            for b in (start, stop, step):
                if b.ty.dtype != var_ty and b is not step or step.ty.dtype != "i32":
                    raise fail("CT104", f"a `range` bound of type {b.ty.dtype}: the port's loops run over i32 (cuTile "
                               "Rust 0.5 types a loop's step i32, which tileiras refuses with i64 bounds); convert "
                               "the bounds to int32 (`.astype(ct.int32)`)", b.pos)
            before, sources, dots = dict(self.env), dict(self.sources), len(self.dots)
            self.env[s.var] = TileTy(var_ty)
            body = tuple(self.block(s.body))
            self._check_views_in_loop(before, body, s.pos)
            # the loop variable is not carried (Triton's visit_For leaves it out of the loop's carries, and the
            # Rust `for` binds its own): a name of another type before the loop (`i_t = load(..).to(int64)`) is
            # neither checked against it nor changed by it
            carried = {k: v for k, v in before.items() if k != s.var}
            self._check_carried(carried, self.env, s.pos, "loop", sources, self.dots[dots:])
            self.env = {k: (before[k] if k == s.var else v) for k, v in self.env.items() if k in before}
            return [For(s.var, start, stop, step, body, s.pos)]
        if isinstance(s, If):
            return self.if_stmt(s)
        if isinstance(s, While):
            cond = self.truth(self.expr(s.cond), "a `while` condition")
            before, sources, dots = dict(self.env), dict(self.sources), len(self.dots)
            body = tuple(self.block(s.body))
            self._check_views_in_loop(before, body, s.pos)
            self._check_carried(before, self.env, s.pos, "loop", sources, self.dots[dots:])
            self.env = {k: v for k, v in self.env.items() if k in before}
            return [replace(s, cond=cond, body=body)]
        if isinstance(s, (Continue, Break)):
            return [s]
        raise fail("CT100", "unsupported statement", s.pos)

    def _check_views_in_loop(self, before: dict, body, pos: Pos) -> None:
        """A view assigned in a loop body must be new there (each iteration makes its own)."""
        again = _views_assigned(body) & set(before)
        if again:
            raise fail("CT100", f"the `Array.slice` view `{sorted(again)[0]}` is assigned before a loop and again in "
                       "its body: cuTile Rust views are not carried by loops; give the view in the loop its own "
                       "name", pos)

    def _check_carried(self, before: dict, after: dict, pos: Pos, what: str, sources: dict | None = None,
                       dots=()) -> None:
        for name, ty in before.items():
            unify_types(ty, after.get(name))
            self._check_widened({name: ty}, after)
            self._check_int_carried(ty, after.get(name), dots)
            new = after.get(name)
            if self.k.frontend != "triton" and sources and name in sources and isinstance(ty, TileTy) \
                    and isinstance(new, TileTy) and is_generic(ty.dtype) and new.dtype == "f32" \
                    and ty.shape == new.shape:
                # a value loaded from a generic array that the loop makes f32 (`acc = ct.load(a); acc += f32`):
                # cuTile Python compiles that loop only where the array holds f32 (a carried value keeps its type)
                raise RetypeArray(sources[name], "f32")
            self._check_generic_carried(ty, after.get(name))
            self._check_float_carried(name, ty, after.get(name))
            if after.get(name) != ty:
                raise fail("CT104", f"`{name}` changes type inside the {what} ({ty} -> {after.get(name)}); "
                           "cuTile Rust carries values with a fixed type", pos)

    def _check_int_carried(self, before, after, dots=()) -> None:
        """A Triton integer (`total = 0`) that a loop or an arm adds a pointer's loaded values to: Triton refuses a
        carried value that changes type, so that pointer holds integers (RetypeArray gives it the int domain).
        Likewise a float32 (`m = float('-inf')`) that an arm sets to a pointer's loaded value: Triton compiles it
        only where that pointer holds float32 (the launcher refuses the other dtypes). And an int32 accumulator
        that a loop or an arm adds a dot of pointers' elements to (`acc += tl.dot(a, b)`, `dots`: the dots of
        its body), which that dot would make float32: Triton compiles it only where those pointers hold int8
        (whose dot is int32), so they take int8 (linalg.int8_operands)."""
        if self.k.frontend == "triton" and isinstance(before, TileTy) and before.dtype == "i32" \
                and isinstance(after, TileTy) and after.dtype == "f32" and before.shape == after.shape and before.shape:
            from .ops.linalg import int8_operands
            for generic, shape in dots:
                if shape == before.shape:
                    int8_operands(self, generic)
        if self.k.frontend == "triton" and isinstance(before, TileTy) and before.dtype in INT_DTYPES \
                and isinstance(after, TileTy) and is_generic(after.dtype):
            p = next((q for q in self.k.params if q.flat and q.dtype == after.dtype), None)
            if p is not None and p.domain != INT_DOMAIN:
                raise RetypeArray(p.name, before.dtype)
            if p is not None and before.dtype == "i32" and before.shape == after.shape:
                # an atomic's old value of a pointer of integers (its loads are widened to int64; Tile IR's
                # integer atomics take int32): an int32 that a loop sets to it (`slots = tl.where(m, start + c,
                # slots)`) keeps its type where that pointer holds int32, the one dtype its atomics take
                raise RetypeArray(p.name, "i32", exact=True)
        # (either way: a float32 that a loop sets to a loaded value, or a loaded value (`b_l = tl.load(p_L)`)
        # that a loop sets to float32 (`b_l = b_l * alpha + tl.sum(b_s, 1)`))
        for concrete, generic in ((before, after), (after, before)):
            if self.k.frontend == "triton" and isinstance(concrete, TileTy) and concrete.dtype == "f32" \
                    and isinstance(generic, TileTy) and is_generic(generic.dtype) and concrete.shape == generic.shape:
                p = next((q for q in self.k.params if q.flat and q.dtype == generic.dtype), None)
                if p is not None and p.domain != INT_DOMAIN:
                    raise RetypeArray(p.name, "f32", group=True)

    def _check_float_carried(self, name: str, before, after) -> None:
        """A Triton float (`total = tl.sum(x)`) that a loop or an arm sets to a value loaded from a pointer typed as
        integers by a guess (`tl.load(p) == pid`: a comparison with an int, which Triton makes in float for a float
        pointer): Triton requires the carried value's type, so that pointer holds this float dtype itself."""
        if self.k.frontend != "triton" or not (isinstance(before, TileTy) and isinstance(after, TileTy)) \
                or not is_float(before.dtype) or is_generic(before.dtype) or after.dtype != "i64" \
                or before.shape != after.shape:
            return
        for root in sorted(self.int_roots.get(name, ())):
            p = self.k.param(root)
            if p is not None and p.flat and p.domain == INT_DOMAIN and is_generic(p.dtype):
                raise RetypeArray(root, before.dtype, exact=True)

    def _check_generic_carried(self, before, after) -> None:
        """A cuTile Python value of a concrete dtype that a loop or an arm makes one of an array's element type
        (`total = ct.zeros((1,), dtype=ct.int32)` plus a count loaded from an array, `g = 0.0` then a loaded
        value): cuTile Python requires the same type on every path ("has changed its type inside a loop", "depends
        on path taken"), so it compiles only the specializations where the generic is that dtype; the arrays of
        that generic take it (inference then runs again and checks the types with it)."""
        if self.k.frontend == "triton" or not (isinstance(before, TileTy) and isinstance(after, TileTy)) \
                or before.shape != after.shape or is_generic(before.dtype) == is_generic(after.dtype):
            return
        generic, concrete = (before.dtype, after.dtype) if is_generic(before.dtype) else (after.dtype, before.dtype)
        retype_generic(self.k, generic, concrete)

    def _check_widened(self, before: dict, after: dict, split: "SplitNeeded | None" = None) -> None:
        """WidenCarried for a Triton int32 value that `after` has as int64."""
        for name, ty in before.items():
            if self.k.frontend == "triton" and isinstance(ty, TileTy) and ty.dtype == "i32" \
                    and after.get(name) == TileTy("i64", ty.shape):
                raise WidenCarried(name, split)

    def if_stmt(self, s: If) -> list[Stmt]:
        by_dtype = self.dtype_cond_value(s.cond)
        if by_dtype is not None:
            return list(self.block(s.body if by_dtype else s.orelse))
        if self.is_float_cond(s.cond):
            if self.k.frontend != "triton":
                return list(self.block(s.body if self.float_cond_value(s.cond) else s.orelse))
            s = replace(s, cond=self.float_flag(s.cond))
        taken = self.decided_arm(s)
        if taken is not None:
            return list(self.block(taken))
        if self.k.frontend != "triton" and not self.is_const(s.cond) and self._const_arith_cond(s.cond):
            # `if NUM_PAGES == 1:` where `NUM_PAGES = BLOCK_N // LOAD_BLOCK_N` (bound once, maybe a helper's
            # argument): a compile-time value in cuTile Python, which folds the `if`; a variant per truth value
            try:
                folded = self.bool_const_value(s.cond)
            except SplitOnConst as split:
                split.nested = True  # an enclosing constant `if` splits first (see below)
                raise
            if isinstance(folded, Lit) and isinstance(folded.value, bool):
                return list(self.block(s.body if folded.value else s.orelse))
        cond = self.expr(s.cond)
        if isinstance(cond, Lit) and isinstance(cond.value, bool):
            # decided at compile time (`if not EVEN and j >= n` where EVEN holds): cuTile Python folds it
            return list(self.block(s.body if cond.value else s.orelse))
        const = self.is_const_cond(s)
        before, dots = dict(self.env), len(self.dots)
        literals_before = dict(self.literals)
        then_env = None  # the then-arm's names, once it is typed (read where the else arm fails)
        fact = self._fact_text(s) if const else None
        try:
            body = tuple(self._block_under(s.body, fact, True))
            env_then = then_env = self.env
            self.env = dict(before)
            # a dtype name each arm binds (`elem_ty = p.dtype.element_ty`): the else arm starts from the one before
            # the `if`, and after it the name is known only where both arms leave the same dtype
            literals_then = dict(self.literals)
            for n in self.dtype_names:
                self.literals.pop(n, None)
                if n in literals_before:
                    self.literals[n] = literals_before[n]
            orelse = tuple(self._block_under(s.orelse, fact, False))
            env_else = self.env
            for n in self.dtype_names & set(self.literals):
                if not _same_dtype(literals_then.get(n), self.literals[n]):
                    del self.literals[n]
        except SplitNeeded as inner:
            if const and not inner.exact:
                raise self.split_needed(s)  # split the outermost constant `if` first: predicates read top-down
            raise
        except SplitOnConst as inner:
            if const and inner.nested:
                raise self.split_needed(s) from None  # the same for an `if` on constant arithmetic in an arm
            raise
        except TranspileError as err:
            if const and err.diagnostic.message.startswith((COMPILE_ERROR, STATIC_ASSERT)):
                raise self.split_needed(s, exact=True) from None  # a Triton `raise` in one arm: that arm's variant is dropped
            undefined = re.match(r"`([^`]+)` is not defined$", err.diagnostic.message)
            if const and err.diagnostic.code == "CT103" and undefined and then_env is not None \
                    and undefined.group(1) in then_env and undefined.group(1) not in before:
                # a name one arm defines and the other reads (the rest of a kernel after a `return` in an arm runs
                # inside both arms, with a later `if` on the same constant reading what the first arm defined):
                # folded, each arm is its own variant, where the inner `if` is decided by the variant's predicates
                raise self.split_needed(s) from None
            if const and err.diagnostic.code == "CT103" and undefined and then_env is None \
                    and undefined.group(1) not in before and undefined.group(1) in _assigned(s.orelse):
                # the same the other way: the then arm (a copy of the rest after a `return` in the else arm) reads,
                # under a later `if` on the same constant, what the else arm defines
                raise self.split_needed(s) from None
            raise
        # names assigned in only one arm (and not before) are local to that arm
        names = {n for n in set(env_then) | set(env_else) if n in before or (n in env_then and n in env_else)}
        if s.returns and not const:
            # the then arm ends in the source's `return` and the else arm is the rest of the kernel, so nothing
            # follows this `if`: a name both arms define (`req_row`, a tile in the returning arm and a scalar in
            # the rest) is each arm's own; Triton never merges them (the rest is not an arm there)
            names = {n for n in names if n in before}
            env_else = {n: t for n, t in env_else.items() if n in before}
        for n in sorted(names):
            unify_types(env_then.get(n), env_else.get(n))
        same = all(env_then.get(n) == env_else.get(n) for n in names)
        views = (_views_assigned(body) | _views_assigned(orelse)) & names
        if views and const:
            raise self.split_needed(s, exact=True)  # cuTile Python folds the `if`: each arm's view is its variant's
        if views:
            raise fail("CT100", f"the `Array.slice` view `{sorted(views)[0]}` is assigned in both arms of a runtime "
                       "`if` (or before it and in an arm), so it may be read after the `if`: cuTile Rust views are "
                       "not carried out of an `if`; give each arm's view its own name and slice where it is used",
                       s.pos)
        if const:
            # a name only one arm of a constant `if` defines: cuTile Python folds the `if`, so a later use
            # under the same flag is fine there; here a use after it splits the kernel on this `if`
            for n in (set(env_then) ^ set(env_else)) - set(before):
                self.arm_only.setdefault(n, s)
                self.arm_only_defs.setdefault(n, (s, n in env_then, (env_then if n in env_then else env_else)[n]))
        if const and same:
            # a value both arms widen to int64 (`w += off.to(tl.int64)` in each, a pointer's offsets): int64 from
            # the start, as after a runtime `if` (a constant parameter rebound there is a new local)
            consts = {p.name for p in self.k.params if p.kind == "const"}
            self._check_widened({n: t for n, t in before.items() if n not in consts}, env_then)
            if any(n in before and env_then[n] != before[n] for n in names):
                # both arms rebind a name with another type than it had (`x_q = round(x_q).to(tl.int8)` in each
                # arm of `if IS_HIP`): an arm's new declaration does not outlive it, so a use after the `if`
                # would read the old value; cuTile Python folds the `if`: each arm is its variant
                raise self.split_needed(s)
        if const and not same:
            # an offset widened in an arm: int64 throughout, no split. A parameter cast in an arm
            # (`if LONG: n = n.to(tl.int64)`) cannot be int64 from the start: that arm is its own variant
            params = {p.name for p in self.k.params}
            for env in (env_then, env_else):
                self._check_widened({n: t for n, t in before.items() if n not in params}, env, self.split_needed(s))
            raise self.split_needed(s)
        if not const:
            body, orelse, env_then, env_else = self._widened_offsets(names - set(before), body, orelse, env_then,
                                                                     env_else, s.pos)
            cond = self.truth(cond, "an `if` condition")
            self._check_carried(before, env_then, s.pos, "if", dots=self.dots[dots:])
            self._check_carried(before, env_else, s.pos, "else", dots=self.dots[dots:])
            for n in sorted(names - set(before)):
                # a name both arms define, with another type in each (`mask = True` / `mask = offs < N`):
                # one declaration cannot hold both (the second arm's would shadow it and its value stay there);
                # Triton and cuTile Python refuse it too (mismatched types between the then and else blocks)
                if env_then.get(n) != env_else.get(n):
                    self._check_int_carried(env_then.get(n), env_else.get(n), self.dots[dots:])
                    self._check_int_carried(env_else.get(n), env_then.get(n), self.dots[dots:])
                    raise fail("CT104", f"`{n}` has another type in each arm of the if ({env_then.get(n)} / "
                               f"{env_else.get(n)}); cuTile Rust declares a value with one type", s.pos)
        self.env = {n: env_then[n] for n in names}
        declares = tuple(sorted((n, env_then[n]) for n in names if n not in before))
        if const and not self.is_const(s.cond):  # `if ANY:` of constexpr locals: the test of the constants
            cond = self.expr(self.split_needed(s).cond)
        return [If(cond, body, orelse, s.pos, const=const, declares=declares, returns=s.returns)]

    def _widened_offsets(self, new: set, body: tuple, orelse: tuple, env_then: dict, env_else: dict, pos: Pos):
        """A pointer's offsets both arms of a runtime `if` bind at two integer widths (`p = a_ptr + offs_i32` /
        `p = b_ptr + off_i64 + offs`, a pointer chosen per path): Triton's pointer has one type, so the narrower
        arm's offsets are widened at its end (exact) and the name is declared with the wider type."""
        for n in sorted(new & set(self.k.pointer_offsets)):
            a, b = env_then.get(n), env_else.get(n)
            if not (isinstance(a, TileTy) and isinstance(b, TileTy) and a != b and a.shape == b.shape
                    and a.dtype in INT_DTYPES and b.dtype in INT_DTYPES):
                continue
            wide = a if int(a.dtype[1:]) >= int(b.dtype[1:]) else b
            widen = Assign((n,), Op("convert", (Name(n, pos, a if wide is b else b),), pos, ty=wide), pos)
            if wide is a:
                orelse, env_else = orelse + (widen,), {**env_else, n: wide}
            else:
                body, env_then = body + (widen,), {**env_then, n: wide}
        return body, orelse, env_then, env_else

    def truth(self, cond: Expr, what: str) -> Expr:
        """A runtime condition as a bool scalar, the way cuTile Python tests it: an integer `n` is
        `n != 0` (cmpi); a float would be truncated to i1 (ftoi), which has no cuTile Rust form."""
        if not (isinstance(cond.ty, TileTy) and cond.ty.is_scalar):
            raise fail("CT104", f"{what} must be a scalar", cond.pos)
        if cond.ty.dtype in ("bool", "i1"):
            return cond
        if is_int(cond.ty.dtype):
            zero = Lit(0, cond.pos, TileTy(cond.ty.dtype))
            return Op("cmp", (cond, zero), cond.pos, (("pred", "!="),), "CTR-CMP", TileTy("bool"))
        raise fail("CT104", f"{what} is a {cond.ty.dtype} value: cuTile Python truncates it to a bool (ftoi, so 0.5 "
                   "is false), which has no cuTile Rust form; write the comparison you mean (`x != 0.0`), or "
                   "annotate a flag parameter `: bool`", cond.pos)

    def _is_flag_expr(self, e: Expr) -> bool:
        """`not ALIGNED`, `A and not B`: booleans over ct.Constant[bool] parameters only."""
        if isinstance(e, Name):
            return e.id in self.consts and self.consts[e.id].const_type == "bool"
        if isinstance(e, Op) and e.op in ("not", "and", "or"):
            return all(self._is_flag_expr(a) for a in e.args)
        return False

    def literal_of(self, e: Expr | None) -> Expr | None:
        """A keyword's value through the names bound once to a compile-time value (`padding_mode=zero_pad`)."""
        for _ in range(32):
            if not (isinstance(e, Name) and e.id in self.literals):
                break
            e = self.literals[e.id]
        return e

    def _fact_text(self, s: If) -> str | None:
        """(Triton) the predicate text of a constant `if`'s condition, for HoistNeeded; None where it has none."""
        if self.k.frontend != "triton":
            return None
        from .predicates import predicate_text
        try:
            return predicate_text(self.split_needed(s).cond)
        except TranspileError:
            return None

    def _block_under(self, stmts, fact: str | None, truth: bool):
        """The statements of one arm of a constant `if`, with its condition known while they are typed."""
        if fact is None:
            return list(self.block(stmts))
        self.const_facts.append((fact, truth))
        try:
            return list(self.block(stmts))
        finally:
            self.const_facts.pop()

    def _raise_hoist(self, name: str) -> None:
        """HoistNeeded where `name`, defined in one arm of a constant `if` only, is read under that arm's
        condition (Triton kernels; cuTile Python folds the `if`, and its Tile IR is compared as folded)."""
        node, then_arm, ty = self.arm_only_defs.get(name, (None, True, None))
        if node is None or not isinstance(ty, TileTy) or is_generic(ty.dtype) and not any(
                p.kind == "array" and p.dtype == ty.dtype for p in self.k.params):
            return  # (a generic is declared by the array it belongs to: specialize.HoistNeeded's handler)
        fact = self._fact_text(node)
        if fact is not None and (fact, then_arm) in self.const_facts \
                and self._only_under(self.k.body, name, (fact, then_arm), ()):
            raise HoistNeeded(node, name, ty)

    def _only_under(self, stmts, name: str, fact: tuple[str, bool], held: tuple) -> bool:
        """Every assignment and every read of `name` in `stmts` is inside an arm where `fact` holds (`held`:
        the arms around `stmts`): the declaration before the `if` is then never read where the arm did not run
        (a read elsewhere is a specialization Triton cannot compile: split on, as before, so the launcher refuses
        it), and one declaration of the arm's type serves every assignment."""
        def mentions(*exprs) -> bool:
            return any(isinstance(x, Name) and x.id == name for e in exprs for x in sub_exprs(e))
        for s in stmts:
            if isinstance(s, (Assign, Eval)):
                if fact not in held and (isinstance(s, Assign) and name in s.targets or mentions(s.value)):
                    return False
            elif isinstance(s, For):
                if s.var == name or fact not in held and mentions(s.start, s.stop, s.step) \
                        or not self._only_under(s.body, name, fact, held):
                    return False
            elif isinstance(s, While):
                if fact not in held and mentions(s.cond) or not self._only_under(s.body, name, fact, held):
                    return False
            elif isinstance(s, If):
                text = self._fact_text(s)
                if fact not in held and mentions(s.cond) \
                        or not self._only_under(s.body, name, fact, held + ((text, True),)) \
                        or not self._only_under(s.orelse, name, fact, held + ((text, False),)):
                    return False
        return True

    def split_needed(self, node: If, exact: bool = False) -> SplitNeeded:
        """A split on the constant `if` `node`, its condition over the kernel's constants."""
        def expand(e: Expr, depth: int = 0) -> Expr:
            if depth > 32:
                return e
            if isinstance(e, Name) and e.id not in self.consts and e.id in self.single_defs:
                return expand(self.single_defs[e.id], depth + 1)
            if isinstance(e, Op):
                return replace(e, args=tuple(expand(a, depth + 1) for a in e.args))
            return e
        return SplitNeeded(node, exact, expand(node.cond))

    def bool_const_value(self, e: Expr, depth: int = 0) -> Expr:
        """A boolean over bool constants (`not ALIGNED`, through names assigned once) as a literal of this
        variant; anything else is returned as it is (the caller refuses it)."""
        if depth > 32:
            return e
        if isinstance(e, Lit):
            return e
        if isinstance(e, Name) and e.id in self.consts and self.consts[e.id].const_type == "bool":
            return self.flag_value(e)
        if isinstance(e, Name) and e.id in self.single_defs:
            v = self.bool_const_value(self.single_defs[e.id], depth + 1)
            return v if isinstance(v, Lit) else e
        if isinstance(e, Op) and e.op in ("not", "and", "or"):
            vals = [self.bool_const_value(a, depth + 1) for a in e.args]
            if all(isinstance(v, Lit) and isinstance(v.value, bool) for v in vals):
                b = [v.value for v in vals]
                out = (not b[0]) if e.op == "not" else (all(b) if e.op == "and" else any(b))
                return Lit(out, e.pos)
        if isinstance(e, Op) and e.op == "cmp" and len(e.args) == 2:
            # a comparison of int constant arithmetic (`cdiv(N, T) * T != N`): cuTile Python folds it at
            # compile time; here each truth value is a variant (the host evaluates the text on the constants)
            a, b = (self.const_int_expr(x) for x in e.args)
            if a is not None and b is not None:
                text = f"({a[0]}) {e.attr('pred')} ({b[0]})"
                if not re.search(r"[A-Za-z_]", text):  # literals only (`2 == 3` of a helper called with 2)
                    try:
                        return Lit(bool(eval(text, {"__builtins__": {}})), e.pos)
                    except ArithmeticError:
                        return e  # `x // 0`: cuTile Python fails to compile it; the caller refuses it
                taken = decides(self.k.variant.predicates, text)
                if taken is None:
                    raise SplitOnConst(text)
                return Lit(taken, e.pos)
        return e

    def _const_arith_cond(self, e: Expr) -> bool:
        """A condition whose every comparison is between integer constant arithmetic (names bound once to
        it included) and whose other atoms are bool constants: cuTile Python decides it at compile time."""
        if isinstance(e, Op) and e.op in ("not", "and", "or"):
            return all(self._const_arith_cond(a) for a in e.args)
        if isinstance(e, Op) and e.op == "cmp" and len(e.args) == 2:
            return all(self.const_int_expr(a) is not None for a in e.args)
        return isinstance(e, Name) and e.id in self.consts and self.consts[e.id].const_type == "bool"

    def is_const_cond(self, s: If) -> bool:
        """The condition of `s` is decided when the kernel compiles: a test of constants, or (Triton) of locals
        bound once to tests of constants (`SHOULD_PERMUTE: tl.constexpr = PX or PY`, `ANY: tl.constexpr =
        SHOULD_PERMUTE or FUSE`: Triton folds `if ANY:`), which split_needed expands into the constants' test
        (where `PX` holds, `if ANY:` is decided true)."""
        if self.is_const(s.cond):
            return True
        return self.k.frontend == "triton" and self.is_const(self.split_needed(s).cond)

    def decided_arm(self, s: If):
        """The arm of a constant `if` this variant's predicates decide (cuTile Python folds it), else None."""
        preds = self.k.variant.predicates
        if not self.is_const_cond(s):
            return None
        from .predicates import predicate_text
        try:
            text = predicate_text(self.split_needed(s).cond)  # locals bound to constant tests expanded
        except TranspileError:
            return None
        # (no predicates yet: only a condition of literals alone, `8 == 1` of a helper's literal arguments)
        taken = decides(preds, text) if preds else closed_value(text)
        return None if taken is None else (s.body if taken else s.orelse)

    def string_value(self, e: Name) -> str:
        """The string a string constexpr (Kernel.strings) holds in this entry; SplitOnChoice where the entry's
        predicates do not fix it yet (one entry per string)."""
        choices = dict(self.k.strings)[e.id]
        taken = [i for i in range(len(choices)) if f"{e.id} == {i}" in self.k.variant.predicates]
        if not taken:
            raise SplitOnChoice(e.id, len(choices))
        return choices[taken[0]]

    def dtype_value(self, e: Expr) -> str | None:
        """The dtype a dtype-valued expression names (`ct.float32`, `x.dtype`, a local holding one), else None."""
        if isinstance(e, Name) and e.id in self.literals:
            return self.dtype_value(self.literals[e.id])
        if isinstance(e, Name) and e.id in self.k.dtype_consts:
            choices = dict(self.k.strings)[e.id]
            taken = [i for i in range(len(choices)) if f"{e.id} == {i}" in self.k.variant.predicates]
            if not taken:
                raise SplitOnChoice(e.id, len(choices))
            return choices[taken[0]]
        if isinstance(e, Op) and e.op == "dtype":
            return e.attr("dtype")
        if isinstance(e, Op) and e.op == "dtype_of":
            ty = self.expr(e.args[0]).ty
            return ty.dtype if isinstance(ty, (ArrayTy, TileTy)) else None
        return None

    def dtype_cond_value(self, e: Expr) -> bool | None:
        """The value of a condition on dtypes (`x.dtype == ct.float32`, `not`, `and`, `or` of such) in this
        entry; None when `e` is not one. The element type E equals a dtype only in an entry of that dtype
        alone (Variant.dtypes): elsewhere SplitOnDtype makes one."""
        if isinstance(e, Name) and e.id in self.literals:  # `is_half = x.dtype.is_fp16()`, bound once
            return self.dtype_cond_value(self.literals[e.id])
        if isinstance(e, Op) and e.op == "dtype_in":  # `x.dtype.is_floating()` (Triton: rules/triton_dtypes.toml)
            return self.per_entry(self.dtype_query_subject(e), lambda d: d in e.attr("dtypes"))
        if isinstance(e, Op) and e.op == "cmp" and e.attr("pred") in ("==", "!=") \
                and any(isinstance(a, Lit) and a.value in (0, False) for a in e.args) \
                and any(isinstance(a, Name) and a.id in self.literals for a in e.args):
            # `if is_half:` of `is_half = x.dtype.is_fp16()` (the frontend tests a name's truth as `!= 0`)
            v = self.dtype_cond_value(next(a for a in e.args if isinstance(a, Name)))
            if v is not None:
                return v if e.attr("pred") == "!=" else not v
        if isinstance(e, Op) and e.op == "cmp" and any(self._dtype_number_op(self.literal_of(a)) for a in e.args):
            # `x.dtype.primitive_bitwidth == 16`: a number of the dtype compared with a constant
            a, b = (self.dtype_number(x) for x in e.args)
            if a is None or b is None:
                return None
            return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[e.attr("pred")]
        if isinstance(e, Op) and e.op == "not":
            v = self.dtype_cond_value(e.args[0])
            return None if v is None else not v
        if isinstance(e, Op) and e.op == "bitxor" and any(isinstance(a, Lit) and a.value is True for a in e.args):
            # Triton's `not c` of a condition: `c ^ True`
            rest = [a for a in e.args if not (isinstance(a, Lit) and a.value is True)]
            if not rest:
                return False  # `True ^ True` (`not True` of a condition known here)
            v = self.dtype_cond_value(rest[0])
            return None if v is None else not v
        if isinstance(e, Op) and e.op in ("and", "or", "bitand", "bitor"):  # Triton's frontend: `or` is `|`
            a, b = (self.dtype_cond_value(x) for x in e.args)
            if a is None or b is None:
                return None
            return (a and b) if e.op in ("and", "bitand") else (a or b)
        if not (isinstance(e, Op) and e.op == "cmp" and e.attr("pred") in ("==", "!=")):
            return None
        a, b = self.dtype_value(e.args[0]), self.dtype_value(e.args[1])
        if a is None or b is None:
            return None
        same = a == b
        unify_generics(a, b)  # `x.dtype == w.dtype`: true in every port, once they share one generic
        if a != b and (is_generic(a) or is_generic(b)):
            generic, t = (a, b) if is_generic(a) else (b, a)
            unify_generics("E", generic)  # the entries' dtypes (Variant.dtypes) are E's
            allowed = self.k.variant.dtypes
            if t not in allowed:
                same = False
            elif allowed == (t,):
                same = True
            else:
                raise SplitOnDtype(t)
        return same if e.attr("pred") == "==" else not same

    def per_entry(self, dt: str, of):
        """`of(dt)` in this entry: for a generic, the value every element type the entry's E may take gives,
        else one entry per element type (SplitOnDtype on the first whose value differs from another's)."""
        if not is_generic(dt):
            return of(dt)
        unify_generics("E", dt)  # the entries' dtypes (Variant.dtypes) are E's
        allowed = self.k.variant.dtypes
        if not allowed:
            raise fail("CT108", "a query of an element type whose dtypes this entry does not list", self.k.pos)
        if len(allowed) == 1:
            return of(allowed[0])
        values = set()
        for d in allowed:
            try:
                values.add(of(d))
            except TranspileError:  # (a width the dtype lacks: refused in its own entry only)
                raise SplitOnDtype(d) from None
        if len(values) == 1:
            return values.pop()
        raise SplitOnDtype(allowed[0])

    def dtype_query_subject(self, e: Op) -> str:
        """The dtype a Triton dtype query (`dtype_in`, `dtype_attr`) asks about; refused where its subject is not
        a dtype."""
        dt = self.dtype_value(e.args[0])
        if dt is None:
            what = e.attr("query") and f"`.{e.attr('query')}()`" or f"`.{e.attr('attr')}`"
            raise fail(e.rule, f"{what} of a value that is not a dtype (`x.dtype`, `p.dtype.element_ty`, a dtype "
                       "constexpr or a name bound to one)", e.pos)
        return dt

    def dtype_attr_value(self, e: Op) -> int:
        """`x.dtype.primitive_bitwidth` (and Triton's other integer attributes of a dtype) in this entry."""
        from ..rules import triton_dtype_queries
        table = triton_dtype_queries().widths[e.attr("attr")]

        def of(d: str):
            if d not in table:
                raise fail(e.rule, f"`{e.attr('attr')}` of {d}: Triton's {d} has no such attribute", e.pos)
            return table[d]
        return self.per_entry(self.dtype_query_subject(e), of)

    @staticmethod
    def _is_dtype_test(e: Expr) -> bool:
        """A Triton dtype predicate (`x.dtype.is_fp16()`), or `not` / `and` / `or` of such."""
        if isinstance(e, Op) and e.op == "dtype_in":
            return True
        return isinstance(e, Op) and e.op in ("not", "and", "or", "bitand", "bitor") \
            and all(Infer._is_dtype_test(a) for a in e.args)

    @staticmethod
    def _dtype_number_op(e: Expr) -> bool:
        """An integer expression over a dtype attribute or a `**` (Triton's constexpr arithmetic, folded here)."""
        return isinstance(e, Op) and (e.op in ("dtype_attr", "const_pow") or (e.op in Infer._NUMBER_OPS or e.op == "neg")
                                      and any(Infer._dtype_number_op(a) for a in e.args))

    # Python's int arithmetic on compile-time numbers (Triton's constexpr operators), for dtype_number
    _NUMBER_OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
                   "floordiv": lambda a, b: a // b, "truncdiv": lambda a, b: a // b, "shl": lambda a, b: a << b,
                   "shr": lambda a, b: a >> b, "bitand": lambda a, b: a & b, "bitor": lambda a, b: a | b,
                   "const_pow": lambda a, b: a ** b}

    def dtype_number(self, e: Expr, depth: int = 0) -> int | None:
        """The Python int a compile-time integer expression over literals and dtype attributes has in this
        entry (`2 ** (x.dtype.primitive_bitwidth - 1) - 1`); None where it reads anything else."""
        if depth > 32:
            return None
        if isinstance(e, Lit) and type(e.value) is int:
            return e.value
        if isinstance(e, Name) and e.id in self.literals:
            return self.dtype_number(self.literals[e.id], depth + 1)
        if isinstance(e, Op) and e.op == "dtype_attr":
            return self.dtype_attr_value(e)
        if isinstance(e, Op) and e.op == "neg" and len(e.args) == 1:
            a = self.dtype_number(e.args[0], depth + 1)
            return None if a is None else -a
        if isinstance(e, Op) and e.op in self._NUMBER_OPS and len(e.args) == 2:
            a, b = (self.dtype_number(x, depth + 1) for x in e.args)
            if a is None or b is None or (e.op == "const_pow" and not 0 <= b <= 128) \
                    or (e.op in ("floordiv", "truncdiv") and b == 0) or (e.op in ("shl", "shr") and not 0 <= b <= 128):
                return None
            if e.op == "truncdiv":  # Triton's `//` of constexprs is Python's, but the model's is C's: same sign only
                if (a < 0) != (b < 0):
                    return None
            return self._NUMBER_OPS[e.op](a, b)
        return None

    def flag_value(self, flag: Name) -> Lit:
        """The value of a bool constant in this variant (SplitOnConst when the variant does not fix it)."""
        taken = decides(self.k.variant.predicates, flag.id)
        if taken is None:
            raise SplitOnConst(flag.id)
        return Lit(taken, flag.pos)

    def is_float_const(self, e: Expr) -> bool:
        return isinstance(e, Name) and ((e.id in self.consts and self.consts[e.id].const_type == "float")
                                        or e.id in self.derived_floats)

    def is_float_cond(self, e: Expr) -> bool:
        """A condition over constants that reads a ct.Constant[float] (`if beta == 0.0:`). cuTile Python decides
        it at compile time; the Rust entry holds the float only as its bits (a const generic i32), so there is
        no const-generic condition form: such an `if` splits the kernel into variants on the condition (the
        host evaluates the predicate on the float's value, as Python does)."""
        def leaves(x):
            if isinstance(x, Op) and x.op in ("cmp", "not", "and", "or"):
                for a in x.args:
                    yield from leaves(a)
            else:
                yield x
        items = list(leaves(e))
        return any(self.is_float_const(x) for x in items) and all(
            isinstance(x, Lit) or (isinstance(x, Name) and (x.id in self.consts or x.id in self.derived
                                                            or x.id in self.literals)) for x in items)

    def float_flag(self, e: Expr) -> Expr:
        """A Triton float-constant condition as a derived int generic that the host sets (1: it holds), tested
        by a const-generic `if`: a port with several such conditions keeps one entry (cuTile ports split
        instead, to fold the branch as cuTile Python's IR has it)."""
        from .predicates import variant_slug, predicate_text
        text = predicate_text(e)
        name = "F_" + variant_slug(text).upper()
        while name in self.consts or (name in self.derived and self.derived[name] != f"(1 if ({text}) else 0)"):
            name += "_"
        self.derived[name] = f"(1 if ({text}) else 0)"
        self.env[name] = TileTy("i32")
        return Op("cmp", (Name(name, e.pos), Lit(0, e.pos)), e.pos, (("pred", "!="),), "TTR-CMP")

    def float_cond_value(self, e: Expr) -> bool:
        """The truth of a float-constant condition in this variant (SplitOnConst on its text when the
        variant's predicates do not decide it)."""
        from .predicates import predicate_text
        text = predicate_text(e)
        taken = decides(self.k.variant.predicates, text)
        if taken is None:
            raise SplitOnConst(text)
        return taken

    def is_none_name(self, e: Expr) -> bool:
        """A name bound to None here (`mask = None`, see NoneTy)."""
        return isinstance(e, Name) and e.id not in self.literals and isinstance(self.env.get(e.id), NoneTy)

    def is_const(self, e: Expr) -> bool:
        if isinstance(e, Lit):
            return True
        if isinstance(e, Name):
            if self.is_float_const(e):
                return False  # its value is not known to the Rust const generics as a number
            # (a name bound once to constant arithmetic, `inner_stage = 4 - STAGE`, is decided per variant by
            # the `_const_arith_cond` path of if_stmt: its predicate reads the constants, not the local)
            return e.id in self.consts or e.id in self.derived
        if isinstance(e, Op) and e.op in ("cmp", "not", "and", "or"):
            return all(self.is_const(a) for a in e.args)
        if isinstance(e, Op) and self.const_int_expr(e) is not None:
            return True  # constant arithmetic (`if STAGE & 1:`, Triton's `N % BLOCK_N`): folded at compile time
        return isinstance(e, Op) and e.op == "is_none"  # decided at compile time

    # ---------------------------------------------------------------- expressions
    def scalar_int(self, e: Expr) -> Expr:
        t = self.expr(e)
        self.demand_int(t)
        if not (isinstance(t.ty, TileTy) and t.ty.is_scalar and is_int(t.ty.dtype)):
            raise fail("CT104", f"expected an integer scalar, got {t.ty}", e.pos)
        return t

    def dim(self, d: str) -> str:
        """The name a tile dimension has in this variant (UnifyDims: another one of equal value)."""
        seen = set()
        while d in self.dim_aliases and d not in seen:
            seen.add(d)
            d = self.dim_aliases[d]
        return d

    def dim_value(self, d: str) -> str:
        """A tile dimension as a Python expression over the kernel's constants (a predicate's side)."""
        return self.derived.get(d, d)

    def require(self, pred: str) -> None:
        """Raises Require unless this variant's predicates already decide `pred` true."""
        if decides(self.k.variant.predicates, pred) is not True:
            raise Require(pred)

    def element_count(self, shape: tuple) -> tuple[int, tuple[str, ...]]:
        """A shape's element count as (the product of its literal factors, its other factors sorted): the product
        of the dimensions' expressions flattened over `*` (`BM_MUL_BN` is BM * BN; `N // L * L` is N // L and L)."""
        import ast
        lit, atoms = 1, []

        def walk(n) -> None:
            nonlocal lit
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
                walk(n.left)
                walk(n.right)
            elif isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
                lit *= n.value
            else:
                atoms.append(ast.unparse(n))
        for d in shape:
            d = self.dim(d)
            try:
                walk(ast.parse(d if d.isdigit() else self.dim_value(d), mode="eval").body)
            except SyntaxError:
                atoms.append(d)
        return lit, tuple(sorted(atoms))

    def unify_dims(self, pairs, what: str, pos) -> None:
        """Each (a, b) of dimensions that must be equal: where they are different constants, UnifyDims (the
        variant takes them as equal, as the specializations cuTile Python compiles have them); different
        literals fail."""
        for a, b in pairs:
            a, b = self.dim(a), self.dim(b)
            if a == b:
                continue
            if a.isdigit() and b.isdigit():
                raise fail("CT104", what, pos)
            # the name that stays: a literal, else a kernel constant, else (both derived or both constants) `b`
            rank = lambda d: 0 if d.isdigit() else 1 if d in self.consts else 2  # noqa: E731
            name, target = (a, b) if rank(b) <= rank(a) else (b, a)
            raise UnifyDims(name, target, f"{self.dim_value(name)} == {self.dim_value(target)}")

    def broadcast(self, a: tuple, b: tuple, pos) -> tuple:
        """The broadcast shape of `a` and `b`. Two different constants in one dimension (`BK` and `BV` where the
        host passes equal values: `x[BT, BV] + tl.trans(k)[BT, BK]`) are legal only where their values are
        equal, as both Triton and cuTile Python compile the kernel with numbers: UnifyDims (the variant takes
        them as equal; the launcher refuses other values). Different literals fail as before."""
        try:
            return broadcast_shapes(a, b, pos)
        except TranspileError as err:
            n = max(len(a), len(b))
            pa, pb = ("1",) * (n - len(a)) + tuple(a), ("1",) * (n - len(b)) + tuple(b)
            pairs = [(x, y) for x, y in zip(pa, pb) if x != y and "1" not in (x, y)]
            if not pairs or any(x.isdigit() and y.isdigit() for x, y in pairs):
                raise
            self.unify_dims(pairs[:1], err.diagnostic.message, pos)
            raise

    def shape_dims(self, e: Expr) -> tuple[str, ...]:
        if isinstance(e, Op) and e.op == "shape_of":  # `tl.zeros(x.shape, ...)`: x's tile shape
            ty = self.expr(e.args[0]).ty
            if not isinstance(ty, TileTy):
                raise fail("CT105", "`.shape` of a value that is not a tile", e.pos)
            return ty.shape
        items = e.items if isinstance(e, TupleExpr) else (e,)
        out = []
        for it in items:
            if isinstance(it, Lit) and isinstance(it.value, int) and not isinstance(it.value, bool):
                out.append(str(it.value))
            elif isinstance(it, Name) and it.id in self.consts and self.consts[it.id].const_type == "int":
                out.append(it.id)
            elif isinstance(it, Name) and it.id in self.literals and isinstance(self.literals[it.id], Lit):
                out.extend(self.shape_dims(self.literals[it.id]))
            elif isinstance(it, Op) and it.op == "numel_of" and (self.const_int_expr(it) or ("",))[0].isdigit():
                out.append(self.const_int_expr(it)[0])  # `x.numel` of a tile of literal extents
            elif self.derived_name(it) is not None:
                out.append(self.derived_name(it))
            elif isinstance(it, Name) and it.id in self.derived and it.id not in self.env:
                out.append(it.id)  # a derived constant another tile's extent is (`NUMEL_ROWS_MUL_HALF`: tl.gather's)
            elif any(isinstance(x, Name) and x.id in self.absent for x in sub_exprs(it)):
                self.expr(it)  # a Triton constexpr passed as None here: this variant has no entry (CT103)
                raise fail("CT103", "a tile shape reads a parameter that is None here", it.pos)
            elif self.is_float_const(it):
                raise fail("CT105", f"the ct.Constant[float] `{it.id}` is used as a tile shape: shapes must be "
                           "integers (ct.Constant[int] parameters or integer literals)", it.pos)
            else:
                raise fail("CT105", "tile shapes must be integer literals or ct.Constant[int] parameters "
                           "(arithmetic on constants has no stable-Rust const-generic form)", it.pos)
        return tuple(self.dim(d) for d in out)

    def dtype_arg(self, e: Expr) -> str:
        dt = self.dtype_value(e)
        if dt is None:
            raise fail("CT102", "dtype must be a ct dtype (ct.float32, ...) or `<array>.dtype`", e.pos)
        return dt

    def expr(self, e: Expr) -> Expr:
        if isinstance(e, Lit):
            if isinstance(e.value, str):
                raise fail("CT100", "string values are only supported as `order=`", e.pos)
            if isinstance(e.value, bool):
                return replace(e, ty=TileTy("bool"))
            if isinstance(e.value, int):
                # cuTile Python types an integer constant by its value (typing_support.dtype_of_constant_scalar)
                if not -2**63 <= e.value < 2**64:
                    raise fail("CT121", f"integer constant {e.value} is out of range of every integer type "
                               "(cuTile Python rejects it too); write it as a float (`1e40`) if a float is meant",
                               e.pos)
                return replace(e, ty=TileTy("i32" if -2**31 <= e.value < 2**31 else
                                            "i64" if e.value < 2**63 else "u64"))
            return replace(e, ty=TileTy("f32"))
        if isinstance(e, Name):
            if self.value_flags.get(e.id) is not None:
                return self.expr(Lit(self.value_flags[e.id], e.pos))
            if e.id in self.literals:
                return self.expr(self.literals[e.id])
            if e.id not in self.env:
                if e.id in self.arm_only:
                    self._raise_hoist(e.id)
                    raise self.split_needed(self.arm_only[e.id], exact=True)
                raise fail("CT103", f"`{e.id}` is not defined", e.pos)
            if isinstance(self.env[e.id], NoneTy) and e.id in self.absent:
                flag = next(p.name for p in optional_value_flags(self.k) if p.given_of == e.id)
                raise fail("CT103", f"`{e.id}` is None here ({flag} false): Triton compiles no kernel that computes "
                           f"with it; a None parameter is only tested with `is None` / `is not None`", e.pos)
            if isinstance(self.env[e.id], NoneTy):
                # Triton compiles no kernel that computes with None (this specialization has no entry)
                raise fail("CT103", f"`{e.id}` is None here: a name bound to None is read only as the `mask=` or "
                           "`other=` of tl.load / tl.store, or tested with `is None` / `is not None`", e.pos)
            return replace(e, ty=self.env[e.id])
        if isinstance(e, TupleExpr):
            items = tuple(self.expr(i) for i in e.items)
            return replace(e, items=items)
        if isinstance(e, Op):
            if self.k.frontend == "triton" and self._dtype_number_op(e):
                n = self.dtype_number(e)  # `2 ** (x.dtype.primitive_bitwidth - 1) - 1`: a Python int per entry
                if n is not None:
                    return self.expr(Lit(n, e.pos))
            derived = self.derived_name(e)
            if derived is not None:  # arithmetic on constants: folded, like cuTile Python does
                return Name(derived, e.pos, TileTy("i32"))
            derived = self.derived_float_name(e)
            if derived is not None:  # float arithmetic on constants: folded in f64 by the launcher
                return Name(derived, e.pos, TileTy("f32"))
            fn = ops.HANDLERS.get(e.op)
            if fn is None:
                raise fail(e.rule or "CT101", f"operation `{e.op}` is not supported here", e.pos)
            out = fn(self, e)
            ty = getattr(out, "ty", None)
            if isinstance(ty, TileTy) and len(ty.shape) > MAX_TILE_RANK:
                raise fail("CT107", f"a tile of rank {len(ty.shape)}: cuTile Rust 0.5 has tiles of rank at most "
                           f"{MAX_TILE_RANK} (cutile-macro shadow_dispatch MAX_RANK)", e.pos)
            return out
        raise fail("CT100", "unsupported expression", e.pos)

    # conversions ---------------------------------------------------------
    def is_weak(self, e: Expr) -> bool:
        """Python numbers (and constant choices between them) take the dtype of what they meet."""
        if isinstance(e, Lit):
            return isinstance(e.value, (int, float)) and not isinstance(e.value, bool)
        if isinstance(e, Name):
            # constants are Python values at compile time: weakly typed like literals
            # (a ct.Constant[float] too: `f16_tile * eps` converts eps to f16 at compile time)
            return e.id in self.literals or (e.id in self.consts and self.consts[e.id].const_type in ("int", "float")) \
                or e.id in self.derived
        return (isinstance(e, Op) and e.op == "ifexp" and self.is_const(e.args[0])
                and all(self.is_weak(a) for a in e.args[1:]))

    def promote_in_entry(self, a: str, b: str, pos: Pos) -> str:
        """`promote`; for Triton, E meeting a float type whose promotion depends on E's dtype (`dy * x.to(X_DTYPE)`
        with E = bf16 or f16) is decided per entry: the one result every dtype E has here gives, else one entry
        for E = that type and one for the others (SplitOnDtype)."""
        try:
            return promote(a, b, pos)
        except TranspileError:
            if self.k.frontend != "triton" or "E" not in (a, b) or not self.k.variant.dtypes:
                raise
            other = b if a == "E" else a
            results = {promote(d, other, pos) for d in self.k.variant.dtypes}
            if len(results) == 1:
                return results.pop()
            if other in self.k.variant.dtypes:
                raise SplitOnDtype(other) from None
            raise

    def to_dtype(self, e: Expr, dt: str) -> Expr:
        if isinstance(e.ty, TileTy) and e.ty.dtype == dt:
            return e
        if isinstance(e, Lit):
            check_int_range(e, dt)
            return replace(e, ty=TileTy(dt))
        if isinstance(e, Name) and self.is_weak(e) and is_int(dt) and not self.is_float_const(e):
            return replace(e, ty=TileTy(dt))
        if self.is_float_const(e) and is_float(dt) and e.ty.is_scalar:
            # a weakly typed float constant takes the float dtype it meets (the emitter converts its f32 value;
            # the normalizer folds that conversion of a constant, as cuTile Python writes the constant in `dt`)
            return replace(e, ty=TileTy(dt))
        if isinstance(e, Op) and e.op == "ifexp" and e.attr("const") and self.is_weak(e):
            return replace(e, args=(e.args[0],) + tuple(self.to_dtype(a, dt) for a in e.args[1:]), ty=TileTy(dt))
        return Op("convert", (e,), e.pos, ty=TileTy(dt, e.ty.shape))

    def to_shape(self, e: Expr, shape: tuple) -> Expr:
        if e.ty.shape == tuple(shape):
            return e
        if e.ty.is_scalar:
            if isinstance(e, Lit) and is_int(e.ty.dtype):
                return Op("const_tile", (e,), e.pos, ty=TileTy(e.ty.dtype, tuple(shape)))
            return Op("splat", (e,), e.pos, ty=TileTy(e.ty.dtype, tuple(shape)))
        cur = e
        if len(cur.ty.shape) < len(shape):
            ext = ("1",) * (len(shape) - len(cur.ty.shape)) + cur.ty.shape
            cur = Op("reshape", (cur,), e.pos, ty=TileTy(cur.ty.dtype, ext))
            if ext == tuple(shape):
                return cur
        return Op("broadcast", (cur,), e.pos, ty=TileTy(cur.ty.dtype, tuple(shape)))

    def coerce_pair(self, a: Expr, b: Expr, pos: Pos, float_result: bool = False,
                    compare: bool = False) -> tuple[Expr, Expr, TileTy]:
        for x in (a, b):
            if not isinstance(x.ty, TileTy):
                raise fail("CT104", f"operand of type {x.ty} is not a tile or scalar", x.pos)
        la, lb = self.is_weak(a), self.is_weak(b)
        if self.k.frontend == "triton" and la != lb and (b if la else a).ty.dtype == "bool" \
                and is_int((a if la else b).ty.dtype) and not compare:
            # Triton: a Python int (int32) is of a higher kind than an int1 tensor, so it takes part in the
            # promotion (`mask * 1`, `tl.where(c, x != y, 0)` are int32), unlike a float's or an int's kind
            # (a comparison's truth is the same either way: `flag != 0` stays one of bools)
            la = lb = False
        if la and not lb:
            dt = b.ty.dtype if (is_float(b.ty.dtype) or is_int(a.ty.dtype)) else "f32"
        elif lb and not la:
            dt = a.ty.dtype if (is_float(a.ty.dtype) or is_int(b.ty.dtype)) else "f32"
        else:
            dt = self.promote_in_entry(a.ty.dtype, b.ty.dtype, pos)
        if float_result and not is_float(dt):
            dt = "f32"
        shape = self.broadcast(a.ty.shape, b.ty.shape, pos)
        a2 = self.to_shape(self.to_dtype(a, dt), shape)
        b2 = self.to_shape(self.to_dtype(b, dt), shape)
        return a2, b2, TileTy(dt, shape)

    def array_param(self, e: Expr, rule: str) -> Name:
        """`e` as the kernel's array parameter it names (a handler's array operand)."""
        if isinstance(e, Op) and e.op == "array_slice":
            raise fail(rule, "an `Array.slice` view is supported as a variable (`v = a.slice(...)`), not inline",
                       e.pos)
        if isinstance(e, Name) and e.id not in self.env:
            self.expr(e)  # a view only one arm of a constant `if` makes: split there (else: not defined)
        if not isinstance(e, Name) or not isinstance(self.env.get(e.id), ArrayTy):
            raise fail(rule, "the first argument must be an array parameter of the kernel (or an `Array.slice` "
                       "view of one)", e.pos)
        return replace(e, ty=self.env[e.id])


def infer(kernel: Kernel) -> Kernel:
    return Infer(classify_params(kernel)).run()



def _assigned(stmts) -> set[str]:
    """The names statements assign (in nested blocks too)."""
    return {t for st in all_stmts(stmts) for t in (st.targets if isinstance(st, Assign) else
                                                   (st.var,) if isinstance(st, For) else ())}


def _dtype_copies(kernel: Kernel, names: set[str]) -> set[str]:
    """`names` with the names every assignment of which is a dtype or a copy of such a name (to a fixed point)."""
    defs: dict[str, list] = {}
    for st in all_stmts(kernel.body):
        for t in (st.targets if isinstance(st, Assign) else (st.var,) if isinstance(st, For) else ()):
            defs.setdefault(t, []).append(st.value if isinstance(st, Assign) and len(st.targets) == 1 else None)
    names = set(names)
    while True:
        more = {n for n, values in defs.items() if n not in names and all(
            isinstance(v, Op) and v.op in ("dtype", "dtype_of") or isinstance(v, Name) and v.id in names
            for v in values)}
        if not more:
            return names
        names |= more


def _same_dtype(a, b) -> bool:
    """Two dtype expressions (`ct.float16`, `p.dtype.element_ty`) that name the same dtype wherever they are."""
    if not (isinstance(a, Op) and isinstance(b, Op) and a.op == b.op and a.op in ("dtype", "dtype_of")):
        return False  # (a Triton dtype query or width bound in both arms: known in each arm only)
    if a.op == "dtype_of":
        return all(isinstance(x, Name) and isinstance(y, Name) and x.id == y.id for x, y in zip(a.args, b.args))
    return a.attrs == b.attrs
