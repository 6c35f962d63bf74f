"""Specialization: constant branches whose arms differ in types or structure become variants.

`infer` raises SplitNeeded for such an `if`; this pass makes one kernel per arm, with the branch
resolved and the arm's predicate recorded, and infers each again (so nested splits work too).
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..diagnostics import TranspileError, fail
from ..model.ir import GENERIC_DTYPES, INT_DOMAIN, MAX_ELEMENT_GENERICS, Assign, Eval, For, If, Kernel, Lit, Name, Op, Stmt, TupleExpr, Variant, While, is_generic
from .dce import eliminate_dead_code
from .domains import integer_domains, pointer_domains
from .fma import element_split, split_point
from .infer import Infer, classify_params, optional_value_flags
from .type_rules import (STATIC_ASSERT, HoistNeeded, RestrictDtypes, RetypeArray, SplitNeeded, SplitOnChoice, SplitOnConst,
                         SplitOnDtype, Require, UnifyDims, UnifyElements, WidenCarried)
from .entry_dtypes import (choices, dtype_split_point, entry_suffix, is_cast_refusal, per_entry_groups, refusing_arm,
                           with_choice)
from ..model.walk import first_const_if, if_at, replace_if, rewrite_at
from .predicates import decides, predicate_text, variant_slug
from .ranks import rank_split, settle_ranks, varying_arrays

# (a cuTile Python kernel whose FMA fusion crosses constant `if`s needs a variant per arm to match cuTile Python's
# folded IR: liger's GRPO loss, 4 loss types x 3 flags, takes 22)
MAX_VARIANTS = 32
# a Triton kernel's dtype and string constexprs multiply its entries (liger's RMSNorm backward: 3 casting modes x
# 3 dtypes x 2 flags = 29 entries); Triton compiles each such specialization separately too
MAX_VARIANTS_TRITON = 32
VARIANT_BUDGET = "CT123"  # (warning) a constant `if` cuTile Python fuses across, left unsplit past MAX_VARIANTS
# inference retries a variant after each rewrite it asks for (a retyped array, merged generics, a widened
# offset); every rewrite makes progress, and this bounds a bug that would not (the corpus needs < 100)
MAX_SPECIALIZE_STEPS = 1000


def _variant_slug(kernel: Kernel, pred: str) -> str:
    """A predicate in an entry name; a dtype constant's choice by its dtype (`acc_dtype_f32`)."""
    m = re.fullmatch(r"(\w+) == (\d+)", pred)
    if m and m.group(1) in kernel.dtype_consts:
        return f"{variant_slug(m.group(1))}_{dict(kernel.strings)[m.group(1)][int(m.group(2))]}"
    return variant_slug(pred)


def _declared_before(stmts: tuple[Stmt, ...], node: If, decl: Assign) -> tuple[Stmt, ...]:
    """`stmts` with `decl` inserted right before the `if` `node`."""
    return rewrite_at(stmts, node, lambda s: (decl, s))


def order_split_point(kernel: Kernel) -> If | None:
    """A constant `if` whose folding changes which arrays cuTile Python orders by tokens: it folds the `if`
    before its token-order pass, so a write in one arm (an atomic into `dc` under `if REDUCE_HEADS:`) orders
    nothing in the other arm's specialization (there, `dc`'s only access may be a parallel loop store). One
    entry with both arms would chain the same tokens in both; a variant per arm chains what Python does."""
    from ..emit.lower import ordered_arrays
    whole = ordered_arrays(kernel.body, set(), True)

    return first_const_if(kernel.body, lambda s: any(
        ordered_arrays(replace_if(kernel.body, s, take), set(), True) != whole for take in (True, False))) \
        if whole else None


def _is_i64_cast(e) -> bool:
    """`astype(x, i64)` as _widened_to_i64 writes it: widening again changes nothing."""
    return isinstance(e, Op) and e.op == "astype" and len(e.args) == 2 and isinstance(e.args[1], Op) \
        and e.args[1].op == "dtype" and dict(e.args[1].attrs).get("dtype") == "i64"


def _starts_widened(stmts: tuple[Stmt, ...], name: str) -> bool:
    """The body begins with `name = astype(name, i64)` (a parameter widened from the entry on)."""
    return bool(stmts) and isinstance(stmts[0], Assign) and stmts[0].targets == (name,) and _is_i64_cast(stmts[0].value)


def _widened_to_i64(stmts: tuple[Stmt, ...], name: str) -> tuple[Stmt, ...]:
    """Every assignment to `name` converted to int64 (see infer.WidenCarried)."""
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, Assign) and s.targets == (name,) and not _is_i64_cast(s.value):
            i64 = Op("dtype", (), s.pos, (("dtype", "i64"),))
            out.append(replace(s, value=Op("astype", (s.value, i64), s.pos, rule="TTR-CAST")))
        elif isinstance(s, Assign) and name in s.targets and isinstance(s.value, TupleExpr) \
                and len(s.value.items) == len(s.targets):  # `i_d, i_t = a, b`: the item assigned to it
            i = s.targets.index(name)
            item = s.value.items[i]
            if not _is_i64_cast(item):
                i64 = Op("dtype", (), item.pos, (("dtype", "i64"),))
                items = list(s.value.items)
                items[i] = Op("astype", (item, i64), item.pos, rule="TTR-CAST")
                s = replace(s, value=replace(s.value, items=tuple(items)))
            out.append(s)
        elif isinstance(s, (For, While)):
            out.append(replace(s, body=_widened_to_i64(s.body, name)))
        elif isinstance(s, If):
            out.append(replace(s, body=_widened_to_i64(s.body, name), orelse=_widened_to_i64(s.orelse, name)))
        else:
            out.append(s)
    return tuple(out)


def _spread_generics(k: Kernel) -> Kernel:
    """Each array of a generic element type gets its own generic (E, E2, ... in parameter order; the arrays
    past the last share it): infer merges those whose elements meet (UnifyElements)."""
    arrays = [p.name for p in k.params if p.kind == "array" and is_generic(p.dtype)]
    own = {n: GENERIC_DTYPES[min(i, len(GENERIC_DTYPES) - 1)] for i, n in enumerate(arrays)}
    return replace(k, params=tuple(replace(p, dtype=own[p.name]) if p.name in own else p for p in k.params))


def _merge_generics(k: Kernel, groups: list[set[str]]) -> Kernel:
    """The arrays of each group share one generic; the generics are then renamed E, E2, ... by their first
    array in parameter order (so names never depend on the order merges happened in)."""
    dtype = {p.name: p.dtype for p in k.params if p.kind == "array" and is_generic(p.dtype)}
    for group in groups:
        shared = {dtype[n] for n in group if n in dtype}
        keep = min(shared, key=GENERIC_DTYPES.index, default=None)
        dtype = {n: keep if g in shared else g for n, g in dtype.items()}
    names: dict[str, str] = {}
    for p in k.params:
        if p.name in dtype and dtype[p.name] not in names:
            names[dtype[p.name]] = GENERIC_DTYPES[len(names)]
    # a Triton pointer of integers makes its whole group one (their loads are all widened)
    ints = {names[dtype[p.name]] for p in k.params if p.name in dtype and p.domain == INT_DOMAIN}
    return replace(k, params=tuple(
        replace(p, dtype=names[dtype[p.name]], domain=INT_DOMAIN if names[dtype[p.name]] in ints else p.domain)
        if p.name in dtype else p for p in k.params))


def _partner_groups(k: Kernel) -> list[set[str]]:
    """The groups of arrays whose generic is a partner of another's (Param.partner), in generic order."""
    of = {p.name: p.dtype for p in k.params if p.kind == "array" and is_generic(p.dtype)}
    partnered = {of[p.name] for p in k.params if p.partner and p.name in of and of.get(p.partner, of[p.name]) != of[p.name]}
    return [_sharing(k, g) for g in GENERIC_DTYPES if g in partnered]


def _within_bounds(k: Kernel) -> bool:
    """At most MAX_ELEMENT_GENERICS generics besides one partner (model.ir.element_combinations)."""
    partners = _partner_groups(k)
    own = [g for g in GENERIC_DTYPES if _sharing(k, g) and _sharing(k, g) not in partners]
    return len(own) <= MAX_ELEMENT_GENERICS and len(partners) <= 1


def _with_partners(k: Kernel, partners: dict[str, str]) -> Kernel:
    """The arrays of `partners` (name -> the array whose generic theirs is a partner of) marked so."""
    return replace(k, params=tuple(replace(p, partner=partners[p.name]) if p.name in partners else p
                                   for p in k.params))


def _store_partners(k: Kernel, variants: list[Kernel]) -> dict[str, str]:
    """The arrays a tile converted to another array's generic is stored into (memory._partner_cast: a store
    whose implicit cast the port writes as a convert marked `implicit`) -> the first array of that generic."""
    from ..model.ir import TileTy
    from ..model.walk import walk_exprs
    first = {}
    for p in k.params:
        if p.kind == "array" and is_generic(p.dtype):
            first.setdefault(p.dtype, p.name)
    found = {}
    for v in variants:
        for e in walk_exprs(v.body):
            if isinstance(e, Op) and e.op in ("store", "scatter") and isinstance(e.args[0], Name):
                value = e.args[-1]
                while isinstance(value, Op) and value.op in _PASS_THROUGH:
                    value = value.args[0]
                if isinstance(value, Op) and value.op == "convert" and value.attr("implicit") \
                        and isinstance(value.args[0].ty, TileTy) and value.args[0].ty.dtype in first:
                    for n in _sharing(k, e.args[0].ty.dtype):
                        found[n] = first[value.args[0].ty.dtype]
    return found


def _bounded_groups(k: Kernel, variants: list[Kernel]) -> tuple[list[set[str]], dict[str, str]]:
    """More groups of generic arrays than a port keeps (MAX_ELEMENT_GENERICS besides one partner group): the
    first partner group keeps its generic, the others join their partner's (their stores then convert
    nothing). Of the others, a state read in f32 (_state_group) becomes a partner of E where no partner is
    kept; the groups with an array of the largest rank (activations, outputs) share E; the others (weights,
    biases, statistics: where mixed precision puts another dtype) keep their own generics where that is few
    enough, else share E2. Where all groups have that rank, the first keeps E and the others share E2.
    Returns the groups to merge and the arrays that become partners (name -> partner array)."""
    partnered = _partner_groups(k)
    of = {p.name: p for p in k.params}
    joined = [g | _sharing(k, of[of[next(iter(g))].partner].dtype) for g in partnered[1:]]
    groups = [_sharing(k, g) for g in GENERIC_DTYPES if _sharing(k, g) and _sharing(k, g) not in partnered]
    for g in joined:
        groups = [x for x in groups if not x & g] + [set().union(g, *[x for x in groups if x & g])]
    groups.sort(key=lambda g: min(list(of).index(n) for n in g))
    rank = {p.name: p.rank for p in k.params}
    top = max(rank[n] for g in groups for n in g)
    state = None if partnered else _state_group(k, variants, [g for g in groups if any(rank[n] == top for n in g)])
    if state is not None and len(groups) > MAX_ELEMENT_GENERICS:
        groups.remove(state)
    else:
        state = None
    merged, partners = _rank_groups(groups, rank), {}
    if state is not None:
        activations = min(merged[0], key=list(of).index)
        partners = {n: activations for n in state}
    return merged, partners


def _rank_groups(groups: list[set[str]], rank: dict[str, int]) -> list[set[str]]:
    if len(groups) <= MAX_ELEMENT_GENERICS:
        return groups
    top = max(rank[n] for g in groups for n in g)
    high = [g for g in groups if any(rank[n] == top for n in g)]
    low = [g for g in groups if g not in high]
    if not (high and low):
        high, low = groups[:1], groups[1:]
    if 1 + len(low) <= MAX_ELEMENT_GENERICS:
        return [set().union(*high)] + low
    return [set().union(*high), set().union(*low)]


# ops that pass a tile's elements through unchanged (an index array's loaded value reshaped before its astype)
_PASS_THROUGH = {"reshape", "broadcast", "transpose", "permute", "expand_dims"}


def _converted_only(variants: list[Kernel]) -> dict[str, str]:
    """The generics whose arrays are only read (load, gather), every value read from them only converted (by
    the kernel's own astype) to one concrete dtype, in every variant: generic -> that dtype."""
    from ..model.ir import ArrayTy, TileTy, TupleExpr
    found: dict[str, set[str]] = {}
    bad: set[str] = set()

    def tile_generic(x) -> str | None:
        return x.ty.dtype if isinstance(x, (Name, Op, Lit)) and isinstance(x.ty, TileTy) and is_generic(x.ty.dtype) \
            else None

    def visit(e, root: bool) -> None:
        if isinstance(e, TupleExpr):
            for x in e.items:
                if tile_generic(x):  # an index or a shape operand of another dtype's op
                    bad.add(tile_generic(x))
                visit(x, False)
            return
        if root and tile_generic(e):  # a loop bound or a condition of the array's dtype
            bad.add(tile_generic(e))
        if not isinstance(e, Op):
            return
        for a in e.args:
            if a is None:
                continue
            items = a.items if isinstance(a, TupleExpr) else (a,)
            for x in items:
                if isinstance(x, (Name, Op)) and isinstance(x.ty, ArrayTy) and is_generic(x.ty.dtype) \
                        and e.op not in ("load", "gather"):
                    bad.add(x.ty.dtype)  # stored, scattered, updated (atomics), or read some other way
                g = tile_generic(x)
                if g is None or e.op in _PASS_THROUGH:
                    continue
                if e.op == "convert" and isinstance(e.ty, TileTy) and not is_generic(e.ty.dtype) \
                        and not e.attr("implicit"):
                    found.setdefault(g, set()).add(e.ty.dtype)
                else:
                    bad.add(g)
            visit(a, False)
        for _, v in e.attrs:
            if isinstance(v, (Op, Name, Lit, TupleExpr)):
                if tile_generic(v):
                    bad.add(tile_generic(v))
                visit(v, False)

    def walk(stmts) -> None:
        for s in stmts:
            if isinstance(s, Assign):
                visit(s.value, False)  # the name's uses are the ops that read it
            elif isinstance(s, Eval):
                visit(s.value, True)
            elif isinstance(s, For):
                for e in (s.start, s.stop, s.step):
                    visit(e, True)
                walk(s.body)
            elif isinstance(s, If):
                visit(s.cond, True)
                walk(s.body)
                walk(s.orelse)
            elif isinstance(s, While):
                visit(s.cond, True)
                walk(s.body)
    for v in variants:
        walk(v.body)
    return {g: next(iter(d)) for g, d in sorted(found.items()) if g not in bad and len(d) == 1}


def _index_generics(variants: list[Kernel]) -> dict[str, str]:
    """The generics of arrays that hold integers for the kernel: their arrays are only read, and every value
    read from them is only converted to one integer dtype (`ct.load(Starts, ...).astype(ct.int32)`: start
    offsets, lengths), in every variant. Such an array's dtype never meets the float arrays' (cuTile Python
    specializes on it apart), so it must not share a float array's generic; it is fixed to that integer dtype
    (the astype is then a no-op, in cuTile Python as here; a narrowing conversion from a wider integer has no
    cuTile Rust form, CT120). Generic -> the integer dtype."""
    from ..model.ir import INT_DTYPES
    return {g: d for g, d in _converted_only(variants).items() if d in INT_DTYPES}


def _state_group(k: Kernel, variants: list[Kernel], groups: list[set[str]]) -> set[str] | None:
    """Of `groups`, the first whose arrays are only read to be converted to f32 (_converted_only), in the tiles
    an f32 array of their rank is written in: a state or accumulator read in f32 next to activations of
    another dtype (a recurrent kernel's StateIn, its StateOut fixed to f32). Its dtype meets no other array's,
    so any is right for cuTile Python; merged with the activations it would be exported at theirs only."""
    from ..model.ir import TileTy
    from ..model.walk import walk_exprs
    to_f32 = {g for g, d in _converted_only(variants).items() if d == "f32"}
    dtype = {p.name: p.dtype for p in k.params if p.kind == "array"}
    loaded: dict[str, set] = {}
    written: set = set()
    for v in variants:
        for e in walk_exprs(v.body):
            if not (isinstance(e, Op) and e.args and isinstance(e.args[0], Name) and e.args[0].id in dtype):
                continue
            shape_of = e.ty if e.op == "load" else e.args[2].ty if e.op == "store" and len(e.args) > 2 else None
            if isinstance(shape_of, TileTy) and e.op == "load":
                loaded.setdefault(e.args[0].id, set()).add(shape_of.shape)
            elif isinstance(shape_of, TileTy) and dtype[e.args[0].id] == "f32":
                written.add(shape_of.shape)
    for g in groups:
        if all(dtype[n] in to_f32 and loaded.get(n, set()) & written for n in g):
            return g
    return None


def _array_dtypes(k: Kernel, per_entry: frozenset[str] = frozenset()) -> tuple:
    return tuple((p.name, p.dtype, p.domain) for p in k.params if p.kind == "array" and p.name not in per_entry)


def _sharing(k: Kernel, generic: str) -> set[str]:
    return {p.name for p in k.params if p.kind == "array" and p.dtype == generic}


def specialize(kernel: Kernel, dtypes: tuple[str, ...] = ()) -> list[Kernel]:
    """Typed kernels, one per structural variant (a single one when nothing needs splitting). An array has one
    element type in every variant: the C symbol and the wrapper pass it the same way to each entry. One that
    a variant fixes (f32 statistics, i32 counts) and another leaves open (it does not touch the array) is
    fixed in all of them. Except where variants fix it to different dtypes, or one fixes it and another stores
    a converted tile of a concrete dtype into it: then each entry has its own dtype for it (entry_dtypes.py).
    `dtypes`: the element types E is exported for (a variant whose FMA fusion depends on E gets one entry per
    such dtype, see fma.element_split)."""
    from ..verify.specs import DEFAULT_DTYPES
    dtypes = tuple(dtypes) or tuple(DEFAULT_DTYPES)
    base = _spread_generics(classify_params(kernel))
    groups: tuple = ()  # the arrays of a dtype per entry (entry_dtypes.py), with the dtypes each group may take
    unchosen = None  # the base before the groups' arrays were given a dtype (None: no groups tried yet)
    for _ in range(2 * len(base.params) + 3):
        try:
            done = _variants(kernel, base, tuple(dtypes), groups)
        except TranspileError as err:
            if not groups or err.diagnostic.code != "CT108":
                raise
            # more entries than a port keeps once per dtype: one dtype in every entry, as without the groups
            groups, base = (), unchosen
            continue
        if not groups and unchosen is None and kernel.frontend != "triton":
            groups = per_entry_groups(done, dtypes)
            if groups:  # inferred again, once per dtype of each group (concrete in the base: never a generic
                # that the others are merged or bounded with)
                unchosen, base = base, _merge_generics(with_choice(base, groups, choices(groups)[0]), [])
                continue
        per_entry = frozenset(n for names, _ in groups for n in names)
        fixed: dict[str, set[str]] = {}
        for v in done:
            for p in v.params:
                if p.kind == "array" and not is_generic(p.dtype) and p.name not in per_entry:
                    fixed.setdefault(p.name, set()).add(p.dtype)
        for name, dts in sorted(fixed.items()):
            if len(dts) > 1:
                raise fail("CT104", f"array `{name}` has a different element type in each variant "
                           f"({', '.join(sorted(dts))}); the C symbol passes one", kernel.pos)
        # arrays that share a generic in one variant share it in all (the C symbol reads one per group), and
        # an array a variant fixes (f32 statistics) is fixed in all
        shared = [_sharing(v, g) for v in done for g in GENERIC_DTYPES if len(_sharing(v, g)) > 1]
        ints = {p.name for v in done for p in v.params if p.domain == INT_DOMAIN}
        merged = _merge_generics(replace(base, params=tuple(replace(q, domain=INT_DOMAIN) if q.name in ints else q
                                                            for q in base.params)), shared)
        settled = _merge_generics(replace(merged, params=tuple(
            replace(q, dtype=next(iter(fixed[q.name]))) if q.name in fixed else q for q in merged.params)), [])
        if not all(_array_dtypes(v, per_entry) == _array_dtypes(settled, per_entry) for v in done):
            base = settled
            continue
        index = _index_generics(done) if kernel.frontend != "triton" else {}
        if index:  # integer arrays next to float ones (see _index_generics): fixed to their integer dtype
            base = _merge_generics(replace(settled, params=tuple(
                replace(q, dtype=index[q.dtype]) if q.kind == "array" and q.dtype in index else q
                for q in settled.params)), [])
            continue
        if kernel.frontend == "triton":
            return pointer_domains(done, dtypes)
        # arrays stored a tile converted to another array's generic: partners of that array (Param.partner)
        settled = _with_partners(settled, _store_partners(settled, done))
        if _within_bounds(settled):
            # every variant was inferred with these groups: nothing to infer again
            return integer_domains([_with_partners(v, {p.name: p.partner for p in settled.params if p.partner})
                                    for v in done], dtypes)
        bounded, partners = _bounded_groups(settled, done)
        base = _merge_generics(_with_partners(settled, partners), bounded)
    raise fail("CT104", "the arrays' element types do not settle across the variants", kernel.pos)


def _merge_element_splits(kernel: Kernel, done: list[Kernel], dtypes: tuple[str, ...]) -> list[Kernel]:
    """Triton variants of the same predicates split by E's dtypes (a float32 dot's tf32 rounding) that came out
    the same typed kernel (the dot's operands were then fixed to int8, ops/linalg.int8_operands): one entry
    for the union of their dtypes (none: every dtype)."""
    out: list[Kernel] = []
    for v in done:
        same = next((i for i, w in enumerate(out) if w.variant.predicates == v.variant.predicates
                     and w.variant.dtypes and v.variant.dtypes
                     and replace(w, variant=Variant("")) == replace(v, variant=Variant(""))), None)
        if same is None:
            out.append(v)
            continue
        union = set(out[same].variant.dtypes) | set(v.variant.dtypes)
        elements = () if union >= set(dtypes) else tuple(d for d in dtypes if d in union)
        preds = v.variant.predicates
        name = "__".join([_variant_slug(kernel, p) for p in preds] + (["e_" + "_".join(elements)] if elements else []))
        out[same] = replace(v, variant=Variant(name, preds, elements))
    return out


def _variants(kernel: Kernel, base: Kernel, dtypes: tuple[str, ...], groups: tuple = ()) -> list[Kernel]:
    # (kernel, predicates, element types E may have: empty is any); with per-entry dtype groups, one base per
    # choice of their dtypes (entry_dtypes.py)
    todo: list[tuple[Kernel, tuple[str, ...], tuple[str, ...]]] = \
        [(_merge_generics(with_choice(base, groups, c), []), (), ()) for c in choices(groups)] if groups \
        else [(base, (), ())]
    done: list[Kernel] = []
    refused: list[tuple[tuple[str, ...], TranspileError]] = []  # dtype choices cuTile Python refuses a store of

    limit = MAX_VARIANTS_TRITON if kernel.frontend == "triton" else MAX_VARIANTS

    def fork(*items) -> None:
        todo.extend(items)
        if len(todo) + len(done) > limit:
            raise fail("CT108", f"more than {limit} structural variants", kernel.pos)

    def split_on(s: SplitNeeded, k: Kernel, preds: tuple[str, ...], elements: tuple[str, ...]) -> None:
        """A variant per arm of the constant `if` of `s`, or its taken arm where the predicates decide it."""
        text = predicate_text(s.cond)
        taken = decides(preds, text)
        if taken is not None:  # already answered by this variant's predicates: fold, do not split
            todo.insert(0, (replace(k, body=replace_if(k.body, s.node, taken)), preds, elements))
            return
        fork(*((replace(k, body=replace_if(k.body, s.node, take)), preds + (pred,), elements)
               for take, pred in ((True, text), (False, f"not ({text})"))))
    # Triton variants whose constants leave a name undefined (`if MODE == 0: y = ... elif MODE == 1: y = ...`,
    # then `y` read with MODE == 2): Triton cannot compile that specialization either; the port has no entry
    # for it (the launcher refuses those constants) while another variant is ported
    undefined: list[tuple[tuple[str, ...], TranspileError]] = []
    restricted: list[tuple[Kernel, tuple[str, ...]]] = []  # (kernel, E's dtypes before a RestrictDtypes)
    varying = varying_arrays(kernel)  # arrays whose rank depends on a constant (ranks.py)
    steps = 0
    while todo:
        steps += 1
        if steps > MAX_SPECIALIZE_STEPS:  # a rewrite that keeps asking for itself: refuse, never hang
            raise fail("CT108", f"the kernel's variants did not settle in {MAX_SPECIALIZE_STEPS} steps", kernel.pos)
        k, preds, elements = todo.pop(0)
        # a Triton constexpr or scalar tested against None: a variant where it is given, one where it is None
        # (Triton compiles each apart); in the latter, inference refuses any other read of it (infer.absent)
        open_flag = next((p.name for p in optional_value_flags(k) if decides(preds, p.name) is None), None)
        if open_flag is not None:
            fork(*((k, preds + (pred,), elements) for pred in (open_flag, f"not ({open_flag})")))
            continue
        if varying:  # an array indexed with several ranks: a variant per arm of the constant that decides it
            split = rank_split(k, preds, varying)
            if split is not None:
                node, text = split
                fork(*((replace(k, body=replace_if(k.body, node, take)), preds + (pred,), elements)
                       for take, pred in ((True, text), (False, f"not ({text})"))))
                continue
            k = settle_ranks(k, preds, varying)
        try:  # Infer sees the element types E may have here (a condition on E is decided by them)
            typed = Infer(replace(k, variant=Variant("", preds, elements or dtypes)), dtypes).run()
        except TranspileError as err:
            if preds and ((kernel.frontend == "triton" and err.diagnostic.code == "CT103")
                          or err.diagnostic.message.startswith(STATIC_ASSERT)):
                undefined.append((preds, err))
                continue
            if groups and is_cast_refusal(err):  # this dtype choice is refused here (f32 stored into bf16)
                node = refusing_arm(k, err.diagnostic.pos, preds)
                if node is not None:  # in an arm of a constant `if`: the other arm's variant may take it
                    split_on(SplitNeeded(node), k, preds, elements)
                    continue
                refused.append((preds, err))
                continue
            raise
        except UnifyElements as u:  # the pending variants share the groups too (see specialize)
            group = [_sharing(k, u.keep) | _sharing(k, u.merge)]
            todo[:] = [(_merge_generics(k, group), preds, elements)] + [(_merge_generics(t, group), p, e)
                                                                       for t, p, e in todo]
            continue
        except WidenCarried as w:
            body = _widened_to_i64(k.body, w.name)
            param = k.param(w.name)
            if body == k.body and param is not None and param.kind == "scalar" and not _starts_widened(k.body, w.name):
                # a scalar parameter an arm makes int64 (`T = eos - bos` under a runtime test): int64 from the
                # entry on, as its other assignments already are (the i32 value converts exactly)
                i64 = Op("dtype", (), param.pos, (("dtype", "i64"),))
                body = (Assign((w.name,), Op("astype", (Name(w.name, param.pos), i64), param.pos, rule="TTR-CAST"),
                               param.pos),) + body
            if body == k.body and w.split is not None:
                # not widened (a helper's tuple result): it changes in an arm of a constant `if`, which Triton
                # folds, so each arm is its own variant with its own type
                split_on(w.split, k, preds, elements)
                continue
            if body == k.body:  # nothing assigns it alone (a helper's tuple result): not widened
                raise fail("CT104", f"`{w.name}` changes type from int32 to int64 inside a loop or an `if`", kernel.pos)
            todo.insert(0, (replace(k, body=body), preds, elements))
            continue
        except RetypeArray as r:  # (i8: Triton's int8 dot operands, fixed to int8: ops/linalg.int8_operands)
            p = k.param(r.name)
            if p is not None and p.flat and is_generic(p.dtype) and p.domain != INT_DOMAIN and not r.exact \
                    and (r.dtype == "bool" or r.dtype.startswith(("i", "u"))) and r.dtype != "i8":
                # a Triton pointer of integers keeps a generic (the caller's i32 or i64): `_widened` loads
                k = replace(k, params=tuple(replace(q, domain=INT_DOMAIN) if q.dtype == p.dtype else q
                                            for q in k.params))
                todo.insert(0, (k, preds, elements))
                continue
            if p is None or not is_generic(p.dtype):
                raise fail("CT104", f"array `{r.name}` is used both as {r.dtype} and as the kernel's element type",
                           kernel.pos)
            before = next((e for t, e in restricted if t is k), None)
            if before is not None:
                # E's dtypes were restricted for an implicit conversion into an array that is no longer E's:
                # inference derives the restriction again where it still holds
                elements = before
            # (an exact retype of an integer pointer, ops/elementwise._narrow_loads: that dtype only, not widened)
            k = replace(k, params=tuple(replace(q, dtype=r.dtype, domain=() if r.exact else q.domain)
                                        if q.name == r.name or r.group and q.dtype == p.dtype
                                        else q for q in k.params))
            todo.insert(0, (_merge_generics(k, []), preds, elements))
            continue
        except RestrictDtypes as r:  # an implicit conversion cuTile Python refuses for E's other dtypes
            if set(r.dtypes) >= set(elements or dtypes) or not r.dtypes:
                raise fail("CT108", "an element-type restriction that does not settle", kernel.pos)
            restricted.append((k, elements))
            todo.insert(0, (k, preds, tuple(r.dtypes)))
            continue
        except UnifyDims as u:
            # the only specializations cuTile Python compiles have the two dimensions equal: this variant takes
            # them so (one name in every tile shape) and says so in its predicates; the launcher refuses others
            if any(n == u.name for n, _ in k.dim_aliases):
                raise fail("CT108", f"tile dimension `{u.name}` is unified twice", kernel.pos)
            todo.insert(0, (replace(k, dim_aliases=k.dim_aliases + ((u.name, u.target),)),
                            preds + ((u.pred,) if u.pred not in preds else ()), elements))
            continue
        except Require as r:  # a fact the kernel compiles under only: this variant's predicate, refused otherwise
            if r.pred in preds:
                raise fail("CT108", f"the constants' condition `{r.pred}` does not settle", kernel.pos)
            todo.insert(0, (k, preds + (r.pred,), elements))
            continue
        except SplitOnDtype as s:
            rest = tuple(d for d in (elements or dtypes) if d != s.dtype)
            fork((k, preds, (s.dtype,)), (k, preds, rest))
            continue
        except SplitOnChoice as c:  # one variant per dtype a dtype constant may name
            fork(*((k, preds + (f"{c.name} == {i}",), elements) for i in range(c.count)))
            continue
        except SplitOnConst as s:
            fork(*((k, preds + (pred,), elements) for pred in (s.name, f"not ({s.name})")))
            continue
        except SplitNeeded as s:
            split_on(s, k, preds, elements)
            continue
        except HoistNeeded as h:  # declared before its `if` (a zero of its type): one entry, no split
            # a generic element type by the array it belongs to (merges and retypes of generics rename it)
            like = next((p.name for p in k.params if p.kind == "array" and p.dtype == h.ty.dtype), "")
            decl = Assign((h.name,), Op("zero_of", (), h.node.pos, (("dtype", h.ty.dtype), ("like", like),
                                                                      ("shape", h.ty.shape)), rule="TTR-HOIST"),
                          h.node.pos,
                          f"({h.name} is declared before the `if` that defines it: read only where that `if` holds)")
            body = _declared_before(k.body, h.node, decl)
            if body == k.body:  # the `if` was rewritten while typed (not found): a variant per arm instead
                split_on(SplitNeeded(h.node, exact=True), k, preds, elements)
            else:
                todo.insert(0, (replace(k, body=body), preds, elements))
            continue
        # FMA fusion across a constant `if` matches cuTile Python's IR (fma.py); a Triton port has no IR to match,
        # and the splits would multiply its entries
        at = (split_point(typed) or order_split_point(typed) or dtype_split_point(typed)) \
            if kernel.frontend != "triton" else None
        source = if_at(k.body, at.pos) if at is not None else None
        if source is not None:
            try:
                text = predicate_text(source.cond)
            except TranspileError:
                text = None
            if text is not None and decides(preds, text) is None:  # FMA fusion needs the branch folded, as cuTile Python has it (fma.py)
                if len(todo) + len(done) + 2 <= MAX_VARIANTS:
                    for take, pred in ((True, text), (False, f"not ({text})")):
                        todo.append((replace(k, body=replace_if(k.body, source, take)), preds + (pred,), elements))
                    continue
                # past the budget the `if` stays a constant `if` of one entry: said, so that a `different`
                # verdict there is not a mystery (fma.py guards the one-statement form of the fusion instead)
                typed = replace(typed, notes=typed.notes + ((VARIANT_BUDGET, (
                    f"the variant budget ({MAX_VARIANTS} entries) is spent: this constant `if` on `{text}` is not "
                    "split into entries; where cuTile Python fuses a multiply and an add across it, the port fuses "
                    "them only where one statement reads the product (a guarded fusion), and `--verify` says "
                    "`different` where it cannot"), source.pos),))
        live = eliminate_dead_code(typed)
        extra = next((g for g in GENERIC_DTYPES[1:] if _sharing(k, g) and element_split(live, dtypes, g)), None) \
            if kernel.frontend != "triton" else None
        if extra is not None:  # fusion that depends on E2: entries are per dtype of E only, so E2 becomes E
            todo.insert(0, (_merge_generics(k, [_sharing(k, "E") | _sharing(k, extra)]), preds, elements))
            continue
        if len(elements) != 1 and dtypes and kernel.frontend != "triton":
            t = element_split(live, elements or dtypes)
            if t is not None:
                rest = tuple(d for d in (elements or dtypes) if d != t)
                if not rest:  # the only dtype: this entry is that dtype's
                    elements = (t,)
                elif len(todo) + len(done) + 2 <= MAX_VARIANTS:
                    todo += [(k, preds, (t,)), (k, preds, rest)]
                    continue
        name = "__".join([_variant_slug(kernel, p) for p in preds] + (["e_" + "_".join(elements)] if elements else []))
        done.append(replace(typed, variant=Variant(name, preds, elements)))
    if undefined and not done:
        raise undefined[0][1]
    for preds, err in refused:  # a refusal at every choice is the kernel's own error, not a choice's
        if not any(set(preds) <= set(v.variant.predicates) or set(v.variant.predicates) <= set(preds) for v in done):
            raise err
    if groups:  # the entries of one variant at several dtypes of a group are named by them
        several = {names[0] for names, _ in groups if len({v.param(names[0]).dtype for v in done}) > 1}
        twins = [v.variant.name for v in done]
        done = [replace(v, variant=replace(v.variant, name="__".join(
            x for x in (v.variant.name, entry_suffix(v, groups, several)) if x))) if twins.count(v.variant.name) > 1
            else v for v in done]
    if kernel.frontend == "triton":
        done = _merge_element_splits(kernel, done, dtypes)
    # (once each: every dtype choice of a per-entry array meets the same static assertion)
    dropped = tuple(dict.fromkeys((preds, err.diagnostic.message, err.diagnostic.pos) for preds, err in undefined))
    return [replace(v, dropped=dropped) for v in done] if dropped else done

