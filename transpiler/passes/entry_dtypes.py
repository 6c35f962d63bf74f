"""An array whose element type depends on a constant: a dtype per entry.

cuTile Python fixes an array parameter's dtype per specialization (the argument's `dtype`), and a store converts
a tile to it only where that is lossless (`promote(tile, array) == array`). A kernel may store into one array
tiles of a dtype that a constant's branch picks (TileGym's `INTER_BF16`: `astype(q, bfloat16)` in one arm, the
f32 tile in the other; `OUTPUT_DTYPE == 0/1/2`: f32, f16 or bf16). Each specialization then takes the array at
the dtypes its stores convert to losslessly: bf16 or f32 in the `INTER_BF16` one, f32 in the other.

`specialize` first infers the variants as before, where an array one variant fixes (an f32 tile stored) is
fixed in all; a constant `if` whose arms write tiles of different concrete float dtypes into one array is split
(`dtype_split_point`: the whole kernel fixed the array before the branch was folded). Where two variants then
fix an array to different dtypes, or a variant fixes it and the variants write tiles of different concrete
dtypes into it (`per_entry_groups`), the array is per-entry instead: `specialize` infers every variant once per
dtype of each group (arrays typed and written alike in every variant share one dtype, so four `INTER_BF16`
outputs make two choices, not sixteen), and keeps the choices inference accepts (an implicit cast cuTile Python
refuses, f32 into bf16, drops that choice of that variant, `is_cast_refusal`, after a split on the constant
`if` around the refused write, `refusing_arm`). An entry is then a structural variant at one dtype of each
group; where a variant takes several, it has one entry per dtype (named `..._q_out_bf16`), and the C symbol
and the wrapper select it by the constants and the array's dtype (manifest: the param's `dtypes`, the entry's
`array_dtypes`; docs/output.md). Where that makes more entries than a port keeps (CT108), every entry takes
one dtype again, as before. An array one variant fixes and another does not write (f32 statistics) stays
fixed in all.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from ..diagnostics import TranspileError
from ..model.ir import FLOAT_DTYPES, ArrayTy, For, If, Kernel, Name, Op, TileTy, While, is_generic
from ..model.walk import first_const_if, walk_exprs
from .predicates import decides

# the refusal messages of an implicit cast into an array of a concrete dtype (ops/memory.py: a store, a scatter,
# an atomic add, a padding value): a dtype choice of a per-entry array that cuTile Python refuses too
_CAST_REFUSAL = "into an array of dtype"


# the ops that write a tile into an array: the argument that holds the tile
_WRITES = {"store": 2, "view_atomic_add": 2, "scatter": 3}


def _writes(stmts):
    """(array parameter, the written tile) of every write in `stmts`."""
    for e in walk_exprs(stmts):
        if isinstance(e, Op) and e.op in _WRITES and len(e.args) > _WRITES[e.op] and isinstance(e.args[0], Name) \
                and isinstance(e.args[0].ty, ArrayTy) and isinstance(e.args[_WRITES[e.op]], (Name, Op)):
            yield (e.args[0].ty.root or e.args[0].id), e.args[_WRITES[e.op]]


def _implicit_source(tile) -> str | None:
    """The dtype a written tile had before the write's implicit conversion (a `convert` without a rule: an
    `astype` has its rule), or its own; None where that is no concrete float dtype."""
    if isinstance(tile, Op) and tile.op == "convert" and not tile.rule and isinstance(tile.args[0].ty, TileTy):
        tile = tile.args[0]
    dt = tile.ty.dtype if isinstance(tile.ty, TileTy) else None
    return dt if dt in FLOAT_DTYPES else None


def write_sources(k: Kernel) -> dict[str, frozenset[str | None]]:
    """Each array a typed variant writes -> the dtypes of its written tiles before the implicit conversion (None:
    not a concrete float dtype)."""
    out: dict[str, set[str | None]] = {}
    for array, tile in _writes(k.body):
        out.setdefault(array, set()).add(_implicit_source(tile))
    return {a: frozenset(s) for a, s in out.items()}


def dtype_split_point(typed: Kernel) -> If | None:
    """A constant `if` of a typed variant whose arms write tiles of different concrete float dtypes into one
    array (`astype(q, bfloat16)` in one, the f32 tile in the other: the array was fixed to f32 before the
    branch was folded). cuTile Python folds the `if`, so each specialization takes the array at the dtypes its
    own arm's tiles convert to; a variant per arm lets `per_entry_groups` see that."""
    def splits(s: If) -> bool:
        then, other = (write_sources(replace(typed, body=b)) for b in (s.body, s.orelse))
        return any(None not in then[a] | other[a] and then[a] != other[a] for a in set(then) & set(other))
    return first_const_if(typed.body, splits)


def per_entry_groups(done: list[Kernel], dtypes: tuple[str, ...]) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """The arrays whose dtype differs per entry, in groups that take one dtype together, each with the dtypes to
    try (the ones variants fix first, then the tiles', then the kernel's): an array two variants fix to different
    dtypes, or one a variant fixes whose variants write tiles of different concrete float dtypes into it. Empty
    where there is none (f32 statistics an arm does not touch stay fixed in all)."""
    arrays = [p.name for p in done[0].params if p.kind == "array"]
    fixed: dict[str, list[str]] = {}
    for v in done:
        for p in v.params:
            if p.kind == "array" and not is_generic(p.dtype) and p.dtype not in fixed.setdefault(p.name, []):
                fixed[p.name].append(p.dtype)
    sources = [write_sources(v) for v in done]
    written = {n: [s[n] for s in sources if n in s] for n in arrays}
    chosen = [n for n in arrays if len(fixed.get(n, ())) > 1
              or (fixed.get(n) and len(set(written[n])) > 1 and not any(None in s for s in written[n]))]
    groups: dict[tuple, list[str]] = {}  # the arrays typed and written alike in every variant share a group
    for n in chosen:
        groups.setdefault(tuple((v.param(n).dtype, s.get(n)) for v, s in zip(done, sources)), []).append(n)
    out = []
    for names in groups.values():
        first = [d for n in names for d in fixed.get(n, [])]
        tiles = sorted({d for n in names for s in written[n] for d in s if d is not None})
        out.append((tuple(names), tuple(dict.fromkeys(first + tiles + list(dtypes)))))
    return tuple(out)


def refusing_arm(k: Kernel, pos, preds: tuple[str, ...]) -> If | None:
    """The outermost `if` on constants not decided by `preds` with an arm that holds the expression at `pos` (a
    write's refused implicit cast): splitting on it gives the other arm a variant of its own."""
    from .ranks import constant_condition, condition_constants
    consts = condition_constants(k)

    def walk(stmts) -> If | None:
        for s in stmts:
            if isinstance(s, If):
                text = constant_condition(s, consts)
                if text is not None and decides(preds, text) is None \
                        and any(getattr(e, "pos", None) == pos for e in walk_exprs(s.body + s.orelse)):
                    return s
                found = walk(s.body) or walk(s.orelse)
            elif isinstance(s, (For, While)):
                found = walk(s.body)
            else:
                found = None
            if found is not None:
                return found
        return None
    return walk(k.body)


def choices(groups) -> list[tuple[str, ...]]:
    """Every combination of the groups' dtypes (one per group, in group order)."""
    return list(itertools.product(*(dts for _, dts in groups)))


def with_choice(k: Kernel, groups, choice: tuple[str, ...]) -> Kernel:
    """`k` with each group's arrays at the dtype `choice` gives it."""
    dtype = {n: d for (names, _), d in zip(groups, choice) for n in names}
    return replace(k, params=tuple(replace(p, dtype=dtype[p.name], domain=()) if p.name in dtype else p
                                   for p in k.params))


def is_cast_refusal(err: TranspileError) -> bool:
    return _CAST_REFUSAL in err.diagnostic.message


def entry_suffix(k: Kernel, groups, several: set[str]) -> str:
    """The name part that tells a variant's dtype choice apart (`q_out_bf16`): one per group whose arrays take
    several dtypes across the entries (`several`), by its first array."""
    from .predicates import variant_slug
    return "__".join(f"{variant_slug(names[0])}_{k.param(names[0]).dtype}" for names, _ in groups if names[0] in several)
