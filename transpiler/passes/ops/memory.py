"""Memory family: array access in its two forms. By tile through a view and its partition (load, store,
num_tiles), or by element through pointer tiles with a mask (gather, scatter, atomics)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ...diagnostics import TranspileError, fail
from ...model.ir import INT_DOMAIN, ArrayTy, Expr, Lit, Name, Op, TileTy, TupleExpr, array_root, is_generic
from ..type_rules import RestrictDtypes, RetypeArray, UnifyElements, is_float, is_int, promote, retype_generic, unify_generics
from .registry import handler

if TYPE_CHECKING:
    from ..infer import Infer


def latency_value(infer: Infer, lat: Expr, e: Op) -> int | str:
    """A `latency=` hint: an integer literal, or a choice between literals on constants that cuTile
    Python decides at compile time (`lat = 3 if BLOCK <= 1024 else 6`), which becomes a derived const
    generic (its name is returned)."""
    v = lat
    for _ in range(8):  # through names assigned once / module constants
        if isinstance(v, Name) and v.id in infer.single_defs:
            v = infer.single_defs[v.id]
        elif isinstance(v, Name) and v.id in infer.literals:
            v = infer.literals[v.id]
        else:
            break
    if isinstance(v, Lit) and isinstance(v.value, int) and not isinstance(v.value, bool):
        return v.value
    p = infer.consts.get(v.id) if isinstance(v, Name) else None
    if p is not None and p.kind == "const" and p.const_type == "int":
        return p.name  # a ct.Constant[int] is the const generic itself: Latency::<NAME>
    if (isinstance(v, Op) and v.op == "ifexp" and infer.is_const(v.args[0])
            and all(isinstance(a, Lit) and isinstance(a.value, int) and not isinstance(a.value, bool)
                    for a in v.args[1:])):
        from ..predicates import variant_slug, predicate_text
        cond = predicate_text(v.args[0])
        name = f"LATENCY_{v.args[1].value}_IF_{variant_slug(cond).upper()}_ELSE_{v.args[2].value}"
        infer.derived[name] = f"({v.args[1].value} if ({cond}) else {v.args[2].value})"
        return name
    raise fail(e.rule, "`latency` must be an integer literal (or a choice between literals on constants)",
               e.pos)


def _widens_to(v: Expr, target: str, pos) -> bool:
    """A float value that converts to `target` without loss in every specialization (f16/bf16/E to f32):
    cuTile Python casts it implicitly where it is stored (implicit_cast: promote(src, dst) == dst)."""
    src = v.ty.dtype
    if src == target or not (is_float(src) and is_float(target)) or is_generic(target):
        return False
    try:
        return promote(src, target, pos) == target
    except TranspileError:
        return False


# dtypes cuTile Python's promote_dtypes pairs with no other dtype (rules/promotion_cutile_python.toml)
_PROMOTES_ALONE = ("tf32", "f8e4m3fn", "f8e5m2")


def _lossless(src: str, dst: str, pos) -> bool:
    """cuTile Python's implicit cast test (_is_implicit_cast_ok): promote_dtypes(src, dst) == dst, where its
    promote_dtypes refuses the pairs the port's table promotes anyway (f16 with bf16, tf32 or an f8 dtype with
    another dtype, integers of mixed signedness)."""
    if src == dst:
        return True
    if src in _PROMOTES_ALONE or dst in _PROMOTES_ALONE or {src, dst} == {"f16", "bf16"} \
            or is_int(src) and is_int(dst) and src[0] != dst[0]:
        return False
    try:
        return promote(src, dst, pos) == dst
    except TranspileError:
        return False


def _partner_cast(infer: Infer, v: Expr, generic: str, e: Op) -> Expr:
    """A tile the kernel converted to one generic (`lse.astype(Out.dtype)`) stored into an array of another
    (`LSE`): cuTile Python casts it implicitly where promote(tile dtype, array dtype) is the array's dtype, so
    the two arrays need not share a dtype (f16 output, f32 LSE). The arrays keep their generics, the store
    converts, and the array's generic becomes a partner of the tile's (specialize.py marks it, Param.partner):
    it is exported at that dtype or f32 only, the lossless casts. Any other tile of another generic merges the
    two (UnifyElements), as a value loaded from one array and stored into another."""
    if not (infer.k.frontend != "triton" and is_generic(generic) and isinstance(v.ty, TileTy)
            and is_generic(v.ty.dtype) and v.ty.dtype != generic and infer.explicitly_converted(v)):
        return v
    return Op("convert", (v,), e.pos, (("implicit", True),), ty=TileTy(generic, v.ty.shape))


def _padding_mode(infer: Infer, e: Op) -> str:
    """The Rust padding of a load's `padding_mode=` (a ct.PaddingMode member; none given: padding::None)."""
    pad = infer.literal_of(e.attr("padding_mode"))
    if pad is None:
        return "padding::None"
    if not (isinstance(pad, Op) and pad.op == "enum"):
        raise fail(e.rule, "`padding_mode` must be a ct.PaddingMode member", e.pos)
    return pad.attr("value")


def _cast_into_generic(infer: Infer, v: Expr, generic: str, e: Op, refusal: str) -> Expr:
    """A float tile of a concrete dtype (f16, bf16) stored into an array of element type `generic`: cuTile
    Python converts it where that is lossless for the specialization (bf16 into bf16: nothing, into f32: a
    widening) and refuses the others (bf16 into f16). Converted here where it is lossless for every dtype the
    generic may take in this entry; where only for some, the entry is for those (E's dtypes, RestrictDtypes;
    another generic first joins E); where for none, refused."""
    _require_implicit_cast(infer, v.ty.dtype, generic, e, refusal)
    return infer.to_dtype(v, generic)


def _require_implicit_cast(infer: Infer, src: str, dst: str, e: Op, refusal: str) -> None:
    """Returns where cuTile Python's implicit cast of `src` to `dst` is lossless in every dtype `dst` may take
    in this entry; RestrictDtypes (after UnifyElements for a generic other than E) where only in some; refused
    where in none."""
    if not is_generic(dst):
        if not _lossless(src, dst, e.pos):
            raise fail(e.rule, refusal, e.pos)
        return
    dts = infer.k.variant.dtypes if dst == "E" else infer.all_dtypes
    ok = tuple(d for d in dts if _lossless(src, d, e.pos))
    if dts and ok == tuple(dts):
        return
    if not ok:
        # no exported dtype takes it (bf16 where only f16 is exported): the arrays are of the value's own dtype,
        # a specialization cuTile Python compiles (retype_generic fixes only the dtypes an array may be fixed to)
        retype_generic(infer.k, dst, src)
        raise fail(e.rule, refusal, e.pos)
    if dst != "E":
        raise UnifyElements("E", dst)
    raise RestrictDtypes(ok)


# (mantissa bits, smallest normal exponent, largest exponent, largest finite value) of the float dtypes a
# typed constant (`ct.float16(0.0)`) may name
_FLOAT_FORMATS = {"f16": (10, -14, 15, 65504.0), "bf16": (7, -126, 127, 3.3895313892515355e38),
                  "f32": (23, -126, 127, 3.4028234663852886e38), "f64": (52, -1022, 1023, 1.7976931348623157e308),
                  "f8e4m3fn": (3, -6, 8, 448.0), "f8e5m2": (2, -14, 15, 57344.0)}


def _exact_in(value, dtype: str) -> bool:
    """`value` (a Python number) is exactly a normal (or zero) value of `dtype`: the typed constant then has
    that value whatever rounding it went through."""
    import math
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if is_int(dtype):
        from ..type_rules import int_range
        lo, hi = int_range(dtype)
        return float(value).is_integer() and lo <= value <= hi
    if dtype not in _FLOAT_FORMATS or not math.isfinite(value):
        return False
    if value == 0:
        return math.copysign(1.0, value) > 0  # +0.0 only (a -0.0 padding would need its sign kept)
    bits, emin, emax, top = _FLOAT_FORMATS[dtype]
    m, ex = math.frexp(abs(float(value)))  # value = m * 2**ex, 0.5 <= m < 1
    scaled = m * 2 ** (bits + 1)
    return scaled.is_integer() and emin <= ex - 1 <= emax and abs(value) <= top


def _typed_padding(infer: Infer, pad: Expr, arr: Name, e: Op) -> Expr | None:
    """`padding_value=ct.float16(0.0)` (a number as a dtype's constant: astype of a literal): cuTile Python
    casts that constant implicitly to the array's dtype (lossless only, as a store). Taken where the number is
    exactly a value of the named dtype (no rounding to mirror): it is then the number itself in the array's
    dtype. None where `pad` is not of that form."""
    pad = infer.literal_of(pad)
    if not (isinstance(pad, Op) and pad.op == "astype" and len(pad.args) == 2 and isinstance(pad.args[0], Lit)
            and isinstance(pad.args[1], Op) and pad.args[1].op == "dtype"):
        return None
    value, dtype = pad.args[0].value, pad.args[1].attr("dtype")
    if not _exact_in(value, dtype):
        raise fail(e.rule, f"`padding_value` {dtype} constant {value!r} is not exactly a value of {dtype} "
                   "(the port mirrors no rounding of a typed constant); write a number", e.pos)
    refusal = (f"`padding_value` of dtype {dtype} into an array of dtype {arr.ty.dtype}: cuTile Python only "
               "allows lossless implicit casts")
    _require_implicit_cast(infer, dtype, arr.ty.dtype, e, refusal)
    return Lit(value, pad.pos)


# ------------------------------------------------------------------- by tile: views and partitions

def _rank_mismatch(infer: Infer, arr: Name, entries: int, what: str) -> str:
    """The diagnostic of an access with `entries` indices into `arr`; where the kernel indexes the array with
    as many entries elsewhere, no constant separates the ranks in this variant (an array whose rank depends
    on a constant, TileGym's `LOSS`: (BT, V) for one reduction, (BT,) for the others, has an entry per rank,
    passes/ranks.py): the ranks depend on a runtime value, or both are live under the same constants."""
    from ..type_rules import ARRAY_USES
    from ...model.walk import walk_exprs
    seen = set()
    for x in walk_exprs(infer.k.body):
        if isinstance(x, Op) and x.op in ARRAY_USES and len(x.args) > 1 and isinstance(x.args[0], Name) \
                and x.args[0].id == arr.id and x.args[1] is not None and x.op not in ("num_tiles", "array_dim"):
            seen.add(len(x.args[1].items) if isinstance(x.args[1], TupleExpr) else 1)
    msg = f"{what}, the array has rank {arr.ty.rank}"
    if entries in seen and len(seen) > 1:
        msg += (f"; `{arr.id}` is indexed with {' and '.join(map(str, sorted(seen)))} entries in different places "
                "that no constant separates (a runtime condition, or both live under the same constants): cuTile "
                "Python fixes an array's rank per launch, and the port takes one rank per entry")
    return msg


def _array_and_index(infer: Infer, e: Op, operand: str) -> tuple[Name, TupleExpr]:
    """The array and the typed tile index of a load or store (args: array, index, `operand`)."""
    arr = infer.array_param(e.args[0], e.rule)
    rank, idx = arr.ty.rank, e.args[1]
    if idx is None:
        raise fail(e.rule, "missing `index`", e.pos)
    items = idx.items if isinstance(idx, TupleExpr) else (idx,)
    if len(items) != rank:
        raise fail(e.rule, _rank_mismatch(infer, arr, len(items), f"index has {len(items)} entries"), idx.pos)
    index = TupleExpr(tuple(infer.scalar_int(i) for i in items), idx.pos)
    if e.args[2] is None:
        raise fail(e.rule, f"missing `{operand}`", e.pos)
    return arr, index


def _hint_attrs(infer: Infer, e: Op) -> tuple:
    lat = e.attr("latency")
    tma = e.attr("allow_tma")
    out = []
    if lat is not None:
        out.append(("latency", latency_value(infer, lat, e)))
    if tma is not None:
        tma = infer.bool_const_value(tma)  # a ct.Constant[bool] (or a boolean of them): a variant per value
        if not (isinstance(tma, Lit) and isinstance(tma.value, bool)):
            raise fail(e.rule, "`allow_tma` must be True or False (or a boolean of ct.Constant[bool])", e.pos)
        out.append(("allow_tma", tma.value))
    return tuple(out)


def _order(e: Op, rank: int) -> tuple[int, ...]:
    """The axis permutation of a load's or store's `order=` ("C" and the identity: none)."""
    order = e.attr("order")
    if order is None or isinstance(order, Lit) and order.value == "C":
        return tuple(range(rank))
    items = order.items if isinstance(order, TupleExpr) else ()
    if isinstance(order, Lit) and order.value == "F" and rank == 2:
        return (1, 0)
    if items and all(isinstance(i, Lit) and isinstance(i.value, int) for i in items) \
            and sorted(i.value for i in items) == list(range(rank)):
        return tuple(i.value for i in items)
    raise fail(e.rule, "`order` must be a permutation of integer literals", e.pos)


@handler("load")
def load(infer: Infer, e: Op) -> Op:
    arr, index = _array_and_index(infer, e, "shape")
    rank = arr.ty.rank
    scalar = isinstance(e.args[2], TupleExpr) and not e.args[2].items
    shape = ("1",) * rank if scalar else infer.shape_dims(e.args[2])
    if len(shape) != rank:
        raise fail(e.rule, f"tile shape has rank {len(shape)}, the array has rank {rank}", e.pos)
    padding = _padding_mode(infer, e)
    attrs = (("padding", padding),) + _hint_attrs(infer, e)
    perm = _order(e, rank)
    if perm != tuple(range(rank)):
        attrs += (("order", perm),)
    load = Op("load", (arr, index), e.pos, attrs, e.rule, TileTy(arr.ty.dtype, shape))
    if scalar:
        return Op("item", (load,), e.pos, rule=e.rule, ty=TileTy(arr.ty.dtype))
    return load


@handler("store")
def store(infer: Infer, e: Op) -> Op:
    arr, index = _array_and_index(infer, e, "tile")
    rank = arr.ty.rank
    tile = infer.expr(e.args[2])
    if not isinstance(tile.ty, TileTy):
        raise fail(e.rule, "`tile` must be a tile", e.pos)
    if tile.ty.is_scalar and rank:
        if infer.is_weak(tile):
            tile = infer.to_dtype(tile, arr.ty.dtype)
        tile = Op("reshape", (tile,), e.pos, rule=e.rule, ty=TileTy(tile.ty.dtype, ("1",) * rank))
    if len(tile.ty.shape) != rank:
        raise fail(e.rule, f"stored tile has rank {len(tile.ty.shape)}, the array has rank {rank} "
                   "(reshape the tile first)", e.pos)
    if tile.ty.dtype != arr.ty.dtype and _widens_to(tile, arr.ty.dtype, e.pos):
        tile = infer.to_dtype(tile, arr.ty.dtype)  # cuTile Python's implicit cast (lossless widening)
    tile = _partner_cast(infer, tile, arr.ty.dtype, e)
    unify_generics(tile.ty.dtype, arr.ty.dtype)
    if tile.ty.dtype != arr.ty.dtype:
        if is_generic(arr.ty.dtype) and (is_int(tile.ty.dtype) or tile.ty.dtype == "bool" or tile.ty.dtype == "f32"):
            # an integer output, or an f32 one (cuTile Python only casts losslessly on store: an array
            # that receives f32 tiles without astype must itself be f32)
            raise RetypeArray(array_root(arr), tile.ty.dtype)
        refusal = (f"storing a {tile.ty.dtype} tile into an array of dtype {arr.ty.dtype}; "
                   "write `.astype(<array>.dtype)` (cuTile Python only allows lossless implicit casts, "
                   "which depend on the specialization)")
        if not (is_generic(arr.ty.dtype) and is_float(tile.ty.dtype) and not is_generic(tile.ty.dtype)):
            raise fail(e.rule, refusal, e.pos)
        tile = _cast_into_generic(infer, tile, arr.ty.dtype, e, refusal)
    if _order(e, rank) != tuple(range(rank)):
        raise fail(e.rule, "a store with a permuted `order` has no cuTile Rust 0.5.0 form: cuTile Python stores "
                   "through a partition view with that dim_map, and cuTile Rust's mutable partition views "
                   "(make_partition_view_mut, PartitionMut) take none (the identity order is supported)", e.pos)
    attrs = _hint_attrs(infer, e)
    return Op("store", (arr, index, tile), e.pos, attrs, e.rule, None)


@handler("view_atomic_add")
def view_atomic_add(infer: Infer, e: Op) -> Op:
    """`a.tiled_view(shape).atomic_store_add(index, tile)`: the tile added, element by element, atomically
    (relaxed, device scope) into the view's tile at `index` (cuTile Python's atomic_red_view_tko)."""
    arr, index = _array_and_index(infer, e, "tile")
    rank = arr.ty.rank
    shape = infer.shape_dims(e.args[3])
    if len(shape) != rank:
        raise fail(e.rule, f"the view's tile shape has rank {len(shape)}, the array has rank {rank}", e.pos)
    tile = infer.expr(e.args[2])
    if not isinstance(tile.ty, TileTy):
        raise fail(e.rule, "the update must be a tile or a scalar", e.pos)
    dt = arr.ty.dtype
    if not is_generic(dt) and dt not in ("i32", "i64", "u32", "u64", "f16", "bf16", "f32", "f64"):
        raise fail(e.rule, f"an atomic add into an array of {dt} (cuTile adds 32- and 64-bit integers and f16, "
                   "bf16, f32, f64)", e.pos)
    if infer.is_weak(tile):
        tile = infer.to_dtype(tile, dt)  # a number: the array's type
    # broadcast, then the implicit cast, in cuTile Python's order
    tile = infer.to_shape(tile, shape)
    if tile.ty.dtype != dt and _widens_to(tile, dt, e.pos):
        tile = infer.to_dtype(tile, dt)  # cuTile Python's implicit cast (lossless)
    unify_generics(tile.ty.dtype, dt)
    if tile.ty.dtype != dt:
        if is_generic(dt) and (is_int(tile.ty.dtype) or tile.ty.dtype == "f32"):
            raise RetypeArray(arr.id, tile.ty.dtype)
        raise fail(e.rule, f"adding a {tile.ty.dtype} tile into an array of dtype {dt}; write "
                   "`.astype(<array>.dtype)` (cuTile Python only allows lossless implicit casts)", e.pos)
    return Op("view_atomic_add", (arr, index, tile), e.pos, (("shape", tuple(shape)),), e.rule, None)


@handler("load_advanced")
def load_advanced(infer: Infer, e: Op) -> Op:
    """`ct.load_advanced_indexing(a, (idx, ct.Slice(start, n), ...))`: one axis (the sparse one) indexed by a
    1-D tile of element indices, each other axis a contiguous run of `n` elements from `start` (cuTile
    Python's gather_scatter_view load)."""
    arr = infer.array_param(e.args[0], e.rule)
    rank = arr.ty.rank
    idx = e.args[1]
    if not isinstance(idx, TupleExpr):
        raise fail(e.rule, "`indices` must be a tuple written in the call", e.pos)
    if rank < 2:
        raise fail(e.rule, "load_advanced_indexing needs an array of rank 2 or more (cuTile Python's rule)", e.pos)
    if len(idx.items) != rank:
        raise fail(e.rule, f"index has {len(idx.items)} entries, the array has rank {rank}", idx.pos)
    items, shape, sparse = [], [], None
    for d, it in enumerate(idx.items):
        if isinstance(it, Op) and it.op == "index_slice":
            if it.args[0] is None or it.args[1] is None:
                raise fail(it.rule, "`ct.Slice` takes a start and a length", it.pos)
            start = infer.scalar_int(it.args[0])
            if start.ty.dtype != "i32":
                raise fail(it.rule, f"a {start.ty.dtype} slice start (cuTile Rust's gather view takes i32 ones)",
                           it.pos)
            dims = infer.shape_dims(it.args[1])
            if len(dims) != 1:
                raise fail(it.rule, "a slice length must be one integer constant", it.pos)
            items.append(start)
            shape.append(dims[0])
            continue
        t = infer.expr(it)
        infer.demand_int(t)
        if not (isinstance(t.ty, TileTy) and len(t.ty.shape) == 1 and is_int(t.ty.dtype)):
            raise fail(e.rule, f"index at dim {d} must be a 1-D integer tile or a ct.Slice, got {t.ty}", it.pos)
        if t.ty.dtype != "i32":
            raise fail(e.rule, f"a {t.ty.dtype} sparse index tile (cuTile Rust's gather view takes i32)", it.pos)
        if sparse is not None:
            raise fail(e.rule, "exactly one index must be a 1-D tile (the sparse dim)", it.pos)
        sparse = d
        items.append(t)
        shape.append(t.ty.shape[0])
    if sparse is None:
        raise fail(e.rule, "exactly one index must be a 1-D tile (the sparse dim); none found", idx.pos)
    padding = _padding_mode(infer, e)
    attrs = (("padding", padding), ("sparse_dim", sparse)) + _hint_attrs(infer, e)
    return Op("load_advanced", (arr, TupleExpr(tuple(items), idx.pos)), e.pos, attrs, e.rule,
              TileTy(arr.ty.dtype, tuple(shape)))


@handler("index_slice")
def index_slice(infer: Infer, e: Op) -> Op:
    raise fail(e.rule, "`ct.Slice` is supported as an entry of load_advanced_indexing's index, written in the call",
               e.pos)


@handler("num_tiles")
def num_tiles(infer: Infer, e: Op) -> Op:
    arr = infer.array_param(e.args[0], e.rule)
    axis = e.args[1]
    if not (isinstance(axis, Lit) and isinstance(axis.value, int)):
        raise fail(e.rule, "`axis` must be an integer literal", e.pos)
    shape = infer.shape_dims(e.args[2])
    return Op("num_tiles", (arr,), e.pos, (("axis", axis.value % arr.ty.rank), ("shape", shape)), e.rule,
              TileTy("i32"))


@handler("array_slice")
def array_slice(infer: Infer, e: Op) -> Op:
    """`a.slice(axis, start, stop)`: a view of `a` (a kernel array or a view of one) from `start` to `stop` along
    `axis`, as cuTile Python makes it: the base pointer offset by `start * stride[axis]` (i32, widened to i64),
    the axis's extent `stop - start` (stated non-negative), the other extents and every stride kept. Where
    both bounds are compile-time constants the extent is a constant too (a static dimension of the view):
    attr `extent` names it (a literal, a ct.Constant[int] or a derived const generic)."""
    arr = infer.array_param(e.args[0], e.rule)
    axis, start, stop = e.args[1], e.args[2], e.args[3]
    if axis is None or start is None or stop is None:
        raise fail(e.rule, "`Array.slice` takes axis, start and stop", e.pos)
    if not (isinstance(axis, Lit) and isinstance(axis.value, int) and not isinstance(axis.value, bool)):
        raise fail(e.rule, "the `axis` of `Array.slice` must be an integer literal", axis.pos)
    rank = arr.ty.rank
    if not -rank <= axis.value < rank:
        raise fail(e.rule, f"`Array.slice` axis {axis.value} is out of range for rank {rank}", axis.pos)
    attrs: list = [("axis", axis.value % rank)]
    ca, cb = infer.const_int_expr(start), infer.const_int_expr(stop)
    if ca is not None and not arr.ty.root:
        # cuTile Python's dataflow carries the kernel array's 16-byte base alignment (checked at launch) through
        # a constant offset and states it on the view's pointer (`assume div_by<16>` after the `offset`); the
        # port's raw pointer has no such guarantee, so no port with the same Tile IR exists
        raise fail(e.rule, f"`{arr.id}.slice()` with a compile-time constant start: cuTile Python proves the view's "
                   "base pointer 16-byte aligned from the array's own alignment (`assume div_by<16>` on the offset "
                   "pointer), which the port's raw pointer cannot state; slice from a runtime start, or load with "
                   "an offset index instead", start.pos)
    if ca is not None:
        attrs.append(("const_start", True))
    if ca is not None and cb is not None:
        # cuTile Python types the extent as the constant `stop - start` (ArrayTy.shape): a static dimension
        if isinstance(start, Lit) and start.value == 0:
            extent = infer.shape_dims(stop)[0]
        else:
            extent = infer.shape_dims(Op("sub", (stop, start), e.pos, rule=e.rule))[0]
        attrs.append(("extent", extent))
    bounds = []
    for b in (start, stop):
        t = infer.scalar_int(b)
        if t.ty.dtype != "i32":
            raise fail(e.rule, f"`Array.slice` bounds of type {t.ty.dtype}: only int32 bounds are supported "
                       "(cuTile Python computes the offset in the bounds' type; the port's arrays index in i32)",
                       b.pos)
        bounds.append(t)
    root = array_root(arr)
    return Op("array_slice", (arr, bounds[0], bounds[1]), e.pos, tuple(attrs), e.rule,
              ArrayTy(arr.ty.dtype, rank, root=root))


# ------------------------------------------------------------- by element: pointer tiles and masks

def _param_pointer(infer: Infer, e: Op) -> Name:
    arr = infer.array_param(e.args[0], e.rule)
    if e.attr("elem"):  # a Triton pointer parameter cast to another element type (`p.to(tl.pointer_type(T))`)
        arr = replace(arr, ty=ArrayTy(e.attr("elem"), arr.ty.rank))
    if array_root(arr) != arr.id:
        raise fail(e.rule, f"element access (gather, scatter, atomics) through the `Array.slice` view `{arr.id}` "
                   "is not supported yet: index the array it was cut from", e.pos)
    return arr


def _indices(infer: Infer, e: Op, arr: Name) -> tuple:
    idx = e.args[1]
    items = idx.items if isinstance(idx, TupleExpr) else (idx,)
    if len(items) != arr.ty.rank:
        raise fail(e.rule, _rank_mismatch(infer, arr, len(items), f"{len(items)} index tiles"), e.pos)
    typed = []
    for it in items:
        t = infer.expr(it)
        infer.demand_int(t)
        if isinstance(t.ty, TileTy) and is_generic(t.ty.dtype) and not e.attr("flat"):
            # an index computed from an array's elements (counts, offsets): cuTile Python compiles only the
            # specializations where they are integers; the port's arrays of that generic are int32
            retype_generic(infer.k, t.ty.dtype, "i32")
        if e.attr("flat") and isinstance(t.ty, TileTy):
            t = _flat_offsets(infer, t)
        if not (isinstance(t.ty, TileTy) and t.ty.dtype in ("i32", "i64")):
            raise fail(e.rule, f"gather/scatter indices must be int32 or int64 tiles, got {t.ty}", it.pos)
        typed.append(t)
    shape: tuple = ()
    for t in typed:
        shape = infer.broadcast(shape, t.ty.shape, e.pos)
    return tuple(typed), shape


# Triton adds offsets of any integer type to a pointer (an int1 offset is 0 or 1); cuTile Rust indexes with i32 or
# i64: the narrower and unsigned ones are converted to the index type that holds all their values
_OFFSET_INDEX = {"bool": "i32", "i8": "i32", "i16": "i32", "u8": "i32", "u16": "i32", "u32": "i64", "u64": "i64"}


def _flat_offsets(infer: Infer, t: Expr) -> Expr:
    """A Triton pointer's offsets as an index tile: any integer type (`tl.cumsum(mask)` scans in uint32), converted
    to the index type that holds its values. (Offsets of a pointer's element type made that pointer an integer
    one, infer.demand_int; its values are computed in i64 then, infer.widened_dtype.)"""
    wide = _OFFSET_INDEX.get(t.ty.dtype)
    return infer.to_dtype(t, wide) if wide else t


def _mask(infer: Infer, e: Op, shape: tuple):
    m = e.attr("mask")
    if m is None or infer.is_none_name(m):  # Triton's `mask=None`, through a name bound to None
        return None
    mt = infer.expr(m)
    if infer.k.frontend == "triton" and isinstance(mt.ty, TileTy) and mt.ty.dtype != "bool":
        mt = _int1_mask(infer, mt)
    if mt.ty.dtype != "bool":
        raise fail(e.rule, "`mask` must be a boolean tile", e.pos)
    return infer.to_shape(mt, shape)


def _int1_mask(infer: Infer, mt: Expr) -> Expr:
    """A Triton mask typed an integer here: Triton compiles a load or store only with an int1 mask, so its values
    come from an int1 pointer (a torch.bool tensor: `tl.load(valid_ptr + i)` is int1 there) that this port
    types as an integer one (a pointer of a generic so used takes INT_DOMAIN, loaded widened). Its truth is
    `!= 0`, the same bits."""
    if is_generic(mt.ty.dtype):
        p = next((q for q in infer.k.params if q.kind == "array" and q.dtype == mt.ty.dtype), None)
        if p is not None and p.flat and p.domain != INT_DOMAIN:
            raise RetypeArray(p.name, "bool", group=True)
        return mt
    if not is_int(mt.ty.dtype):
        return mt
    m0, zero, ty = infer.coerce_pair(mt, infer.expr(Lit(0, mt.pos)), mt.pos)
    return Op("cmp", (m0, zero), mt.pos, (("pred", "!="),), "TTR-CMP", TileTy("bool", ty.shape))


def _address(infer: Infer, e: Op) -> Op:
    """A loaded pointer (`int_to_ptr` of an int64 address, TTR-PTRCAST) typed as a rank-1 array of its element
    type: an integer array the address is loaded from is made int64 (Triton casts only 64-bit integers to
    pointers; the host fills the table with `t.data_ptr()` values)."""
    ptr = e.args[0]
    src = ptr.args[0]
    for _ in range(16):  # through conversions and locals assigned once (`w_addr = w_ptr.to(tl.int64)`)
        if isinstance(src, Op) and src.op == "astype":
            src = src.args[0]
        elif isinstance(src, Name) and src.id in infer.single_defs:
            src = infer.single_defs[src.id]
        else:
            break
    scalar = infer.k.param(src.id) if isinstance(src, Name) else None
    if scalar is not None and scalar.kind == "scalar":
        # `w_ptr.to(tl.int64).to(tl.pointer_type(...))` of an address passed as a Python int: Triton types it
        # int64; the port's scalar arguments are int32 or float32, which hold no address
        raise fail(ptr.rule, f"`{src.id}` is an address passed as a scalar argument (an int64 in Triton): the port's "
                   "scalar arguments are int32 or float32; pass the tensor itself (or a table of addresses as an "
                   "int64 tensor) instead", ptr.pos)
    addr = infer.expr(ptr.args[0])
    if not isinstance(addr.ty, TileTy):
        raise fail(ptr.rule, "the address of a loaded pointer must be an int64 value", ptr.pos)
    table = _address_table(infer, addr, ptr.args[0])
    if table is not None:
        raise RetypeArray(table, "i64", exact=True)
    if addr.ty.dtype not in ("i64", "u64"):
        raise fail(ptr.rule, f"a {addr.ty.dtype} value cast to a pointer: the address must be int64 (Triton "
                   "casts only 64-bit integers to pointers)", ptr.pos)
    return Op("int_to_ptr", (addr,), ptr.pos, ptr.attrs, ptr.rule, ArrayTy(ptr.attr("dtype"), 1))


def _address_table(infer: Infer, typed: Expr, source: Expr) -> str | None:
    """The pointer parameter of a generic element type that an address is loaded from (directly, or through a
    local assigned once, converted or selected): it must hold int64 addresses."""
    if isinstance(typed.ty, TileTy) and is_generic(typed.ty.dtype):
        p = next((q for q in infer.k.params if q.kind == "array" and q.dtype == typed.ty.dtype), None)
        return p.name if p is not None else None
    e = source
    for _ in range(16):
        if isinstance(e, Name) and e.id in infer.single_defs:
            e = infer.single_defs[e.id]
        elif isinstance(e, Op) and e.op == "astype":
            e = e.args[0]
        else:
            break
    if isinstance(e, Op) and e.op == "gather" and isinstance(e.args[0], Name) and not e.attr("elem"):
        p = infer.k.param(e.args[0].id)
        if p is not None and p.kind == "array" and is_generic(p.dtype):
            return p.name
    return None


def _common(infer: Infer, e: Op):
    """The array, typed index tiles, their broadcast shape and the attrs every element access shares."""
    address = isinstance(e.args[0], Op) and e.args[0].op == "int_to_ptr"
    if address:  # a loaded pointer (TTR-PTRCAST)
        arr = _address(infer, e)
    else:
        arr = _param_pointer(infer, e)
    cb = e.attr("check_bounds")
    if cb is not None and not isinstance(cb, Lit):
        cb = infer.bool_const_value(cb)
    if cb is not None and not (isinstance(cb, Lit) and isinstance(cb.value, bool)):
        raise fail(e.rule, "`check_bounds` must be True or False (a literal or a module constant; a "
                   "ct.Constant[bool] that selects it is not supported yet)", e.pos)
    idx, shape = _indices(infer, e, arr)
    if address:  # a tile of addresses: a pointer each (the offsets spread over their shape)
        shape = infer.broadcast(shape, arr.args[0].ty.shape, e.pos)
        idx = tuple(infer.to_shape(t, shape) for t in idx)
    lat = e.attr("latency")
    lat = latency_value(infer, lat, e) if lat is not None else 0
    memory = []
    for key, kind, default in (("memory_order", "ordering::", "ordering::AcqRel"),
                               ("memory_scope", "scope::", "scope::Device")):
        v = infer.literal_of(e.attr(key))
        if v is None:
            continue
        if not (isinstance(v, Op) and v.op == "enum" and str(v.attr("value")).startswith(kind)):
            raise fail(e.rule, f"`{key}` must be a ct.{'MemoryOrder' if kind == 'ordering::' else 'MemoryScope'}"
                       " member that cuTile Rust 0.5.0 has (RELAXED, ACQUIRE, RELEASE, ACQ_REL; BLOCK, DEVICE, "
                       "SYS)", e.pos)
        if v.attr("value") != default:
            memory.append((key, v.attr("value")))
    if e.attr("flat"):  # a Triton pointer: no bounds (Triton's mask alone)
        cb = Lit(False, e.pos)
    elem = (("elem", e.attr("elem")),) if e.attr("elem") else ()
    # check_bounds=False: no per-dimension bounds mask (the caller's mask alone, if any), as cuTile Python
    attrs = ((("check_bounds", False),) if cb is not None and not cb.value else ()) + \
        (("latency", lat),) + tuple(memory) + elem
    return arr, idx, shape, attrs


def int_pointer(infer: Infer, arr: Name) -> bool:
    """A Triton pointer whose elements are integers of any width (its generic ranges over INT_DOMAIN)."""
    if not isinstance(arr, Name):  # a pointer loaded from memory: its own element type
        return False
    p = infer.k.param(arr.id)
    # a parameter read as another element type (TTR-PTRCAST) is typed as that: not widened
    return p is not None and p.flat and p.domain == INT_DOMAIN and is_generic(p.dtype) and arr.ty.dtype == p.dtype


def int_pointer_roots(infer: Infer, e) -> set[str]:
    """The integer pointers (int_pointer) whose widened loads a typed value is computed from: the pointers of
    the loads in it and those recorded for the names it reads (Infer.int_roots). A load's offsets and mask, and a
    select's condition, do not make its value's bits."""
    out: set[str] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Name):
            out |= infer.int_roots.get(x.id, set())
        elif isinstance(x, TupleExpr):
            stack.extend(x.items)
        elif isinstance(x, Op):
            if x.op in ("gather", "load"):
                if x.args and isinstance(x.args[0], Name) and int_pointer(infer, x.args[0]):
                    out.add(x.args[0].id)
                continue
            stack.extend(a for a in (x.args[1:] if x.op == "where" else x.args) if a is not None)
    return out


def _value(infer: Infer, e: Op, arr: Name, shape: tuple) -> Expr:
    v = infer.expr(e.args[2])
    if not isinstance(v.ty, TileTy):
        raise fail(e.rule, "the value must be a tile or a scalar", e.pos)
    if e.attr("flat"):  # Triton converts a stored (or atomic) value to the pointer's element type
        if is_generic(arr.ty.dtype) and not int_pointer(infer, arr) and not infer.is_weak(v) \
                and (is_int(v.ty.dtype) or v.ty.dtype == "bool"):
            raise RetypeArray(array_root(arr), v.ty.dtype)  # an integer output (counts, ids): its generic is an int one
        return infer.to_shape(infer.to_dtype(v, arr.ty.dtype), shape)
    v = _partner_cast(infer, v, arr.ty.dtype, e) if e.op == "scatter" else v
    unify_generics(v.ty.dtype, arr.ty.dtype)
    if v.ty.dtype != arr.ty.dtype:
        if infer.is_weak(v) or _widens_to(v, arr.ty.dtype, e.pos):
            v = infer.to_dtype(v, arr.ty.dtype)  # a weak literal, or cuTile Python's lossless implicit cast
        elif is_generic(arr.ty.dtype) and (is_int(v.ty.dtype) or v.ty.dtype == "f32"):
            raise RetypeArray(array_root(arr), v.ty.dtype)
        elif is_generic(arr.ty.dtype) and is_float(v.ty.dtype) and not is_generic(v.ty.dtype):
            v = _cast_into_generic(infer, v, arr.ty.dtype, e,
                                   f"a {v.ty.dtype} value into an array of dtype {arr.ty.dtype}; use astype")
        else:
            raise fail(e.rule, f"a {v.ty.dtype} value into an array of dtype {arr.ty.dtype}; use astype", e.pos)
    return infer.to_shape(v, shape)


def _flat_load(infer: Infer, e: Op, arr: Name, idx: tuple, shape: tuple, mask, attrs: tuple) -> Expr:
    """A Triton load: the masked element load, then `other` where the mask is false (Triton's `other` is a
    value of the result, so a select; masked-off elements without `other` are undefined in Triton)."""
    g = Op("gather", (arr, TupleExpr(idx, e.pos), mask, None), e.pos, attrs + (("flat", True),), e.rule,
           TileTy(arr.ty.dtype, shape))
    other = e.attr("other")
    if other is None or mask is None or infer.is_none_name(other):
        return _widened(infer, arr, g)
    o = infer.expr(other)
    if not isinstance(o.ty, TileTy):
        raise fail(e.rule, "`other` must be a tile or a number", e.pos)
    o = infer.to_shape(infer.to_dtype(o, arr.ty.dtype), shape)
    return _widened(infer, arr, Op("where", (mask, g, o), e.pos, rule=e.rule, ty=TileTy(arr.ty.dtype, shape)))


def _widened(infer: Infer, arr: Name, loaded: Expr) -> Expr:
    """The elements of an integer pointer (i32 or i64, one generic) as i64: index arithmetic on them then has
    one type whatever the caller passed (Triton's i32 arithmetic gives the same values where it does not
    overflow)."""
    return infer.to_dtype(loaded, "i64") if int_pointer(infer, arr) else loaded


@handler("gather")
def gather(infer: Infer, e: Op) -> Op:
    arr, idx, shape, attrs = _common(infer, e)
    mask = _mask(infer, e, shape)
    pad = e.attr("padding_value")
    pad = Lit(0, e.pos) if pad is None else pad
    pad = _typed_padding(infer, pad, arr, e) or pad
    if not infer.is_weak(pad):
        raise fail(e.rule, "`padding_value` must be a number", e.pos)
    pad = infer.to_dtype(infer.expr(pad), arr.ty.dtype)
    if e.attr("flat"):
        return _flat_load(infer, e, arr, idx, shape, mask, attrs)
    if len(shape) >= 2 and mask is None and not dict(attrs).get("check_bounds", True):
        # no mask to select the padding under (the port's form of a padded gather of rank >= 2)
        raise fail("CT107", "a gather producing a tile of rank >= 2 with `check_bounds=False` and no mask: "
                   "cuTile Rust 0.5.0 mis-shapes a padding there (compile_cuda_tile_op.rs, load_ptr_tko); "
                   "give a mask or keep the bounds check", e.pos)
    args = (arr, TupleExpr(idx, e.pos), mask, pad)
    return Op("gather", args, e.pos, attrs, e.rule, TileTy(arr.ty.dtype, shape))


@handler("scatter")
def scatter(infer: Infer, e: Op) -> Op:
    arr, idx, shape, attrs = _common(infer, e)
    value = _value(infer, e, arr, shape)
    mask = _mask(infer, e, shape)
    attrs += (("flat", True),) if e.attr("flat") else ()
    return Op("scatter", (arr, TupleExpr(idx, e.pos), mask, value), e.pos, attrs, e.rule, None)


@handler("atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_and", "atomic_or", "atomic_xor")
def atomic(infer: Infer, e: Op) -> Op:
    arr, idx, shape, attrs = _common(infer, e)
    if e.op in ("atomic_and", "atomic_or", "atomic_xor"):
        _bitwise_target(infer, e, arr)
    value = _value(infer, e, arr, shape)
    mask = _mask(infer, e, shape)
    attrs += (("flat", True),) if e.attr("flat") else ()
    if e.op in ("atomic_max", "atomic_min") and not is_int(arr.ty.dtype) and not int_pointer(infer, arr):
        return _float_atomic_extremum(infer, e, arr, TupleExpr(idx, e.pos), mask, value, shape, attrs)
    return Op(e.op, (arr, TupleExpr(idx, e.pos), mask, value), e.pos, attrs, e.rule, TileTy(arr.ty.dtype, shape))


def _bitwise_target(infer: Infer, e: Op, arr: Expr) -> None:
    """Triton's atomic and / or / xor take 32- and 64-bit integer elements (language/semantic.py refuses fp16,
    bf16 and anything narrower; a float of 32 bits has no bitwise atomic in Tile IR): a generic pointer they
    update holds integers: int32, which Tile IR's integer atomics take (an int64 one is refused by cuTile Rust),
    so a generic pointer is fixed to it (its values, the old ones returned, are int32 in every entry)."""
    if is_generic(arr.ty.dtype):
        raise RetypeArray(array_root(arr), "i32", exact=True)
    if not (is_int(arr.ty.dtype) or int_pointer(infer, arr)) or arr.ty.dtype in ("i8", "u8", "i16", "u16"):
        lang = "Triton's" if infer.k.frontend == "triton" else "Tile IR's"
        raise fail(e.rule, f"`{e.op}` of {arr.ty.dtype} elements: {lang} bitwise atomics take 32- and 64-bit "
                   "integers", e.pos)


@handler("atomic_cas")
def atomic_cas(infer: Infer, e: Op) -> Op:
    """`tl.atomic_cas(p, cmp, val)`: where the element equals cmp (bit for bit) it becomes val; every lane returns
    the old element. Triton's takes no mask and elements of 16, 32 or 64 bits; cmp and val are the pointer's
    element type (the port converts them, as Triton's MLIR requires them equal)."""
    val_cmp = e.args[2]
    arr, idx, shape, attrs = _common(infer, e)
    if is_generic(arr.ty.dtype) and all(isinstance(t, TileTy) and (is_int(t.dtype) or t.dtype == "bool")
                                        for t in (infer.expr(x).ty for x in val_cmp.items)):
        # a lock or a claimed slot of integers (`atomic_cas(p, 0, 1)`): int32, as _bitwise_target fixes it
        raise RetypeArray(array_root(arr), "i32", exact=True)
    value = _value(infer, replace(e, args=e.args[:2] + (val_cmp.items[0],)), arr, shape)
    cmp = _value(infer, replace(e, args=e.args[:2] + (val_cmp.items[1],)), arr, shape)
    if arr.ty.dtype in ("i8", "u8", "bool", "f8e4m3fn", "f8e5m2"):
        raise fail(e.rule, f"`tl.atomic_cas` of {arr.ty.dtype} elements: Triton's takes 16-, 32- or 64-bit ones",
                   e.pos)
    attrs += (("flat", True),) if e.attr("flat") else ()
    return Op("atomic_cas", (arr, TupleExpr(idx, e.pos), None, value, cmp), e.pos, attrs, e.rule,
              TileTy(arr.ty.dtype, shape))


def _float_atomic_extremum(infer: Infer, e: Op, arr: Name, idx: TupleExpr, mask, value: Expr, shape: tuple,
                           attrs: tuple) -> Expr:
    """A float `tl.atomic_max` / `tl.atomic_min`, as Triton 3.6 itself lowers it (language/semantic.py): cuTile
    Rust has integer atomic max/min only, and so has the hardware for f32. The f32 bits of a value with the sign
    bit clear order as signed int32, those with it set in reverse as uint32, so max is a signed `Max` on the
    int32 view where the value is non-negative and an unsigned `Umin` on the uint32 view where it is negative
    (min: `Min` and `Umax`); the old value is the bits of whichever ran. Triton supports f32 and f64 only (f16,
    bf16: a TypeError); the port supports f32, so a generic pointer is fixed to f32."""
    if not e.attr("flat"):
        raise fail(e.rule, "atomic max/min need an integer array (cuTile has no float atomic max/min)", e.pos)
    if is_generic(arr.ty.dtype):
        raise RetypeArray(array_root(arr), "f32", exact=True)
    if arr.ty.dtype != "f32":
        raise fail(e.rule, f"a float atomic max/min of {arr.ty.dtype}: Triton supports float32 (and float64, "
                   "which the port does not), through integer atomics on the value's bits", e.pos)
    pos_, rule = e.pos, e.rule
    value = infer.hoist(value)  # read four times: computed once
    ity, uty, bty = TileTy("i32", shape), TileTy("u32", shape), TileTy("bool", shape)
    ival = infer.hoist(Op("bitcast", (value,), pos_, rule=rule, ty=ity))
    uval = Op("bitcast", (value,), pos_, rule=rule, ty=uty)
    neg = Op("cmp", (ival, infer.to_shape(Lit(0, pos_, TileTy("i32")), shape)), pos_, (("pred", "<"),), rule, bty)
    nonneg = Op("cmp", (ival, infer.to_shape(Lit(0, pos_, TileTy("i32")), shape)), pos_, (("pred", ">="),), rule,
                bty)
    signed, unsigned = ("atomic_max", "atomic_min") if e.op == "atomic_max" else ("atomic_min", "atomic_max")

    def under(m):
        return m if mask is None else Op("bitand", (mask, m), pos_, rule=rule, ty=bty)
    base = tuple(a for a in attrs if a[0] != "elem")
    on_pos = Op(signed, (arr, idx, under(nonneg), ival), pos_, base + (("elem", "i32"),), rule, ity)
    on_neg = Op(unsigned, (arr, idx, under(neg), uval), pos_, base + (("elem", "u32"),), rule, uty)
    old = Op("where", (nonneg, on_pos, Op("bitcast", (on_neg,), pos_, rule=rule, ty=ity)), pos_, rule=rule, ty=ity)
    return Op("bitcast", (old,), pos_, rule=rule, ty=TileTy("f32", shape))


# ------------------------------------------------------------- Triton tensor descriptors: views

def _desc_head(infer: Infer, e: Op):
    """The pointer, extents, strides, element offsets and block of a `desc.load` / `desc.store` (i32: the
    view's shape type; passes/views.py turns the offsets into tile indices)."""
    arr = infer.array_param(e.args[0], e.rule)

    def i32(x):
        t = infer.scalar_int(x)
        return t if t.ty.dtype == "i32" else infer.to_dtype(t, "i32")
    dims, strides, offsets = (TupleExpr(tuple(i32(x) for x in t.items), t.pos) for t in e.args[1:4])
    block = infer.shape_dims(e.attr("block"))
    return arr, dims, strides, offsets, block


def _base_offset(infer: Infer, e: Op) -> tuple:
    """The attr of a descriptor made at an advanced base (`A + bos * stride`): its element offset, a scalar
    integer (a tile of offsets is no base: refused)."""
    off = e.attr("base_offset")
    if off is None:
        return ()
    t = infer.expr(off)
    if not (isinstance(t.ty, TileTy) and t.ty.is_scalar and (is_int(t.ty.dtype))):
        raise fail(e.rule, f"a descriptor's base advanced by a {t.ty} value: only a scalar integer offset "
                   "(`A + bos * stride`) makes a base", e.pos)
    return (("base_offset", t),)


@handler("desc_load")
def desc_load(infer: Infer, e: Op) -> Op:
    arr, dims, strides, offsets, block = _desc_head(infer, e)
    attrs = (("flat", True), ("padding", e.attr("padding")), ("tile", block), ("unit", ""), ("offsets", True)) \
        + _base_offset(infer, e)
    return Op("view_load", (arr, dims, strides, offsets, None), e.pos, attrs, e.rule, TileTy(arr.ty.dtype, block))


@handler("desc_store")
def desc_store(infer: Infer, e: Op) -> Op:
    arr, dims, strides, offsets, block = _desc_head(infer, e)
    v = infer.expr(e.args[4])
    what = f"storing a {v.ty} through a descriptor of block {list(block)}"
    if not isinstance(v.ty, TileTy) or len(v.ty.shape) != len(block):
        raise fail(e.rule, what, e.pos)
    # a block extent the host sets (a hidden constant) and the stored tile's literal or constexpr: equal only for
    # some constants, a variant for those (the launcher refuses the others), as for other shapes
    infer.unify_dims(list(zip(v.ty.shape, block)), what, e.pos)
    if v.ty.dtype != arr.ty.dtype:
        if is_generic(arr.ty.dtype) and (is_int(v.ty.dtype) or v.ty.dtype == "bool") and not infer.is_weak(v):
            raise RetypeArray(array_root(arr), v.ty.dtype)
        v = infer.to_dtype(v, arr.ty.dtype)  # Triton requires the descriptor's dtype; `.to(desc.dtype)` is usual
    attrs = (("flat", True), ("padding", "padding::Zero"), ("tile", block), ("unit", ""), ("offsets", True)) \
        + _base_offset(infer, e)
    return Op("view_store", (arr, dims, strides, offsets, v, None), e.pos, attrs, e.rule, None)
