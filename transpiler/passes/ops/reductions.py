"""Reductions family: reductions of a tile along axes (sum, max, min, prod; cuTile Python's argmax is refused,
Triton's is composed from reductions: tl_argmax) and scans (cumsum)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ...diagnostics import fail
from ...model.ir import Expr, Lit, Name, Op, TileTy, TupleExpr, is_generic
from ..type_rules import is_float, is_int, retype_generic
from .registry import handler

if TYPE_CHECKING:
    from ..infer import Infer


def _axes(e: Op, x: Expr) -> list[int]:
    axis = e.args[1]
    rank = len(x.ty.shape)
    if axis is None:
        return list(range(rank))
    items = axis.items if isinstance(axis, TupleExpr) else (axis,)
    if not all(isinstance(a, Lit) and isinstance(a.value, int) and -rank <= a.value < rank for a in items):
        raise fail(e.rule, "`axis` must be integer literals within the tile's rank", e.pos)
    return sorted({a.value % rank for a in items})


def _axis(e: Op, x: Expr) -> int:
    axis = e.args[1]
    if axis is None or not (isinstance(axis, Lit) and isinstance(axis.value, int)):
        raise fail(e.rule, "reductions need an integer literal `axis` (reducing all axes is not supported yet)", e.pos)
    rank = len(x.ty.shape)
    if not -rank <= axis.value < rank:
        raise fail(e.rule, f"axis {axis.value} out of range for a rank-{rank} tile", e.pos)
    return axis.value % rank


_NARROW_SUM = {"bool": "u32", "i8": "i32", "i16": "i32", "u8": "u32", "u16": "u32"}


@handler("reduce_sum", "reduce_max", "reduce_min", "reduce_prod")
def reduce(infer: Infer, e: Op) -> Expr:
    x = infer.expr(e.args[0])
    if e.op == "reduce_sum" and e.rule == "TTR-SUM" and x.ty.dtype in _NARROW_SUM:
        # Triton's tl.sum accumulates integers narrower than 32 bits in int32 (uint32 for unsigned ones and int1,
        # which Triton counts as unsigned: a sum of a mask is the count of its true elements)
        x = infer.to_dtype(x, _NARROW_SUM[x.ty.dtype])
    axes = _axes(e, x)
    kd = e.attr("keepdims")
    keep = isinstance(kd, Lit) and kd.value is True
    # several axes: a chain of reductions, each later axis shifted down by those already reduced
    r, shape = x, list(x.ty.shape)
    for n, axis in enumerate(axes):
        ax = axis - n
        shape.pop(ax)
        r = Op(e.op, (r,), e.pos, (("axis", ax),), e.rule, TileTy(x.ty.dtype, tuple(shape)))
    if keep:
        kshape = tuple("1" if i in axes else d for i, d in enumerate(x.ty.shape))
        return Op("reshape", (r,), e.pos, rule=e.rule, ty=TileTy(x.ty.dtype, kshape))
    return r


@handler("typed")
def typed(infer: Infer, e: Op) -> Expr:
    """A value already inferred, inside an expression a handler composes (tl_argmax)."""
    return e.args[0]


@handler("tl_argmax", "tl_argmin")
def tl_argmax(infer: Infer, e: Op) -> Expr:
    """Triton's argmax/argmin (and `tl.max(..., return_indices=True)`'s index): the first index whose element
    equals the axis' max (min), the last one with `tie_break_left=False`; int32 like Triton's. cuTile Rust has
    no two-operand reduce, so it is a reduce of the indices the comparison selects: exact wherever the axis
    holds no NaN."""
    x = infer.expr(e.args[0])
    axis = _axis(e, x)
    rank, pos = len(x.ty.shape), e.pos
    t = Op("typed", (x,), pos)
    best = Op("reduce_max" if e.op == "tl_argmax" else "reduce_min", (t, Lit(axis, pos)), pos,
              (("keepdims", Lit(True, pos)),), e.rule)
    hit = Op("cmp", (t, best), pos, (("pred", "=="),), e.rule)
    n = x.ty.shape[axis]
    dim = lambda d: Lit(int(d), pos) if d.lstrip("-").isdigit() else Name(d, pos)  # noqa: E731
    index = Op("arange", (dim(n), None), pos, (), e.rule)
    if rank > 1:  # the axis' indices along that axis, 1 elsewhere (broadcast by the select)
        index = Op("reshape", (index, TupleExpr(tuple(dim(n) if i == axis else Lit(1, pos) for i in range(rank)),
                                                pos)), pos, (), e.rule)
    left = e.attr("tie_break_left")
    left = not (isinstance(left, Lit) and left.value is False)
    sentinel = Lit(2**31 - 1 if left else -1, pos)
    chosen = Op("where", (hit, index, sentinel), pos, (), e.rule)
    kd = e.attr("keepdims")
    return infer.expr(Op("reduce_min" if left else "reduce_max", (chosen, Lit(axis, pos)), pos,
                         (("keepdims", kd if kd is not None else Lit(False, pos)),), e.rule))


@handler("tl_gather")
def tl_gather(infer: Infer, e: Op) -> Expr:
    """Triton's `tl.gather(src, index, axis)`: `out[p] = src[p with its axis coordinate index[p]]` (index and src of
    one rank, equal extents off the axis). cuTile Rust has no in-register gather, so it is a one-hot selection:
    with a new dimension J of src's axis extent inserted before the axis, `index == j` picks, for every output
    element, the one J position it reads, and a sum over J of the selected bits (zero elsewhere) is those bits.
    Floats go through the bits of their float32 value (exact: f16/bf16 widen exactly; a sum of one integer and
    zeros is that integer), so -0.0 and infinities are kept; an index outside the axis gives 0 (undefined in
    Triton)."""
    src, index = infer.expr(e.args[0]), infer.expr(e.args[1])
    pos = e.pos
    if isinstance(index.ty, TileTy) and is_generic(index.ty.dtype):
        retype_generic(infer.k, index.ty.dtype, "i32")  # loaded from a pointer: an index pointer holds integers
    if not (isinstance(src.ty, TileTy) and isinstance(index.ty, TileTy)) or not src.ty.shape \
            or len(src.ty.shape) != len(index.ty.shape) or not is_int(index.ty.dtype):
        raise fail(e.rule, "`tl.gather` takes a tile and an integer index tile of the same rank", pos)
    axis = _axis(replace(e, args=(e.args[0], e.args[2])), src)
    rank, dt = len(src.ty.shape), src.ty.dtype
    if dt in ("bool", "f64", "i64", "u64") or (not is_float(dt) and not is_int(dt)):
        raise fail(e.rule, f"`tl.gather` of {dt} tiles is not supported (16- and 32-bit floats and integers of up "
                   "to 32 bits are)", pos)
    dim = lambda d: Lit(int(d), pos) if d.isdigit() else Name(d, pos)  # noqa: E731

    def shape(dims):
        return TupleExpr(tuple(dim(d) for d in dims), pos)
    s, i = src.ty.shape, index.ty.shape
    n = s[axis]
    # src: its axis is J (a size-1 axis after it); index: a size-1 J before its axis; j: J's positions
    src_j = Op("reshape", (Op("typed", (src,), pos), shape(s[:axis] + (n, "1") + s[axis + 1:])), pos, (), e.rule)
    idx_j = Op("reshape", (Op("typed", (index,), pos), shape(i[:axis] + ("1", i[axis]) + i[axis + 1:])), pos, (),
               e.rule)
    j = Op("reshape", (Op("arange", (dim(n), None), pos, (), e.rule),
                       shape(("1",) * axis + (n, "1") + ("1",) * (rank - axis - 1))), pos, (), e.rule)
    hit = Op("cmp", (idx_j, j), pos, (("pred", "=="),), e.rule)
    if is_float(dt):
        f32 = Op("dtype", (), pos, (("dtype", "f32"),))
        i32 = Op("dtype", (), pos, (("dtype", "i32"),))
        bits = Op("bitcast", (Op("astype", (src_j, f32), pos, rule=e.rule), i32), pos, rule=e.rule)
    else:
        bits = src_j
    picked = Op("reduce_sum", (Op("where", (hit, bits, Lit(0, pos)), pos, (), e.rule), Lit(axis, pos)), pos,
                (("keepdims", Lit(False, pos)),), e.rule)
    got = infer.expr(picked)
    if is_float(dt):
        got = infer.expr(Op("bitcast", (Op("typed", (infer.to_dtype(got, "i32"),), pos),
                                        Op("dtype", (), pos, (("dtype", "f32"),))), pos, rule=e.rule))
    return infer.to_dtype(got, dt)


@handler("cumsum")
def cumsum(infer: Infer, e: Op) -> Op:
    x = infer.expr(e.args[0])
    if e.rule == "TTR-CUMSUM" and isinstance(x.ty, TileTy) and x.ty.dtype in _NARROW_SUM:
        # as tl.sum: Triton's tl.cumsum scans integers narrower than 32 bits in int32 (uint32 for unsigned ones and
        # int1: a scan of a mask counts its true elements)
        x = infer.to_dtype(x, _NARROW_SUM[x.ty.dtype])
    if e.args[1] is None and e.rule == "TTR-CUMSUM":  # Triton's default axis
        e = replace(e, args=(e.args[0], Lit(0, e.pos)) + tuple(e.args[2:]))
    axis = _axis(e, x)
    rev = e.attr("reverse")
    if isinstance(rev, Name) and rev.id in infer.consts:
        rev = infer.flag_value(rev)  # a constexpr flag: each variant scans its own way
    if rev is not None and not (isinstance(rev, Lit) and isinstance(rev.value, (bool, int))):
        # never read as False where it is not (a run-time flag would pick the direction per launch)
        raise fail(e.rule or "CT101", "`reverse=` of a scan must be True, False or a constant flag", e.pos)
    return Op("cumsum", (x,), e.pos, (("axis", axis), ("reverse", bool(rev is not None and rev.value))),
              e.rule, x.ty)


@handler("argmax")
def argmax(infer: Infer, e: Op):
    raise fail("CT107", "ct.argmax/argmin lower to a two-operand reduce in cuTile Python; cuTile Rust 0.5 "
               "has no such reduce, so no port with the same Tile IR exists", e.pos)


# ------------------------------------------------------------------------ reductions and scans with an operator

_NAMED_REDUCE = {"add": "reduce_sum", "mul": "reduce_prod", "max": "reduce_max", "min": "reduce_min"}
# an int1 tile's and / or / xor as a reduction of its i32 widening (0 or 1): min, max, sum's parity
_BOOL_REDUCE = {"and": "reduce_min", "land": "reduce_min", "min": "reduce_min", "or": "reduce_max",
                "lor": "reduce_max", "max": "reduce_max", "xor": "reduce_sum"}


def _refuse(e: Op, what: str, why: str):
    return fail(e.rule, f"a {what} with the combining operator `{e.attr('combine')}` {why}", e.pos)


def _literal(e: Op, attr: str, keyword: str) -> Lit:
    """A flag of the call, which must be a literal True / False here (never read as False where it is not)."""
    v = e.attr(attr)
    if v is None:
        return Lit(False, e.pos)
    if not (isinstance(v, Lit) and isinstance(v.value, bool)):
        raise fail(e.rule, f"`{keyword}=` must be True or False", e.pos)
    return v


def _operand(infer: Infer, e: Op) -> Expr:
    x = infer.expr(e.args[0])
    if not isinstance(x.ty, TileTy):
        raise fail(e.rule, "a reduction or scan takes a tile", e.pos)
    if is_generic(x.ty.dtype) and e.attr("combine") in ("and", "or", "xor"):
        infer.demand_int(x)  # a bitwise operator: the array holds integers
        x = infer.expr(e.args[0])
    return x


def _widened(x: Expr, pos) -> Op:
    """An int1 tile as i32 (0 or 1)."""
    return Op("astype", (Op("typed", (x,), pos), Op("dtype", (), pos, (("dtype", "i32"),))), pos, rule="TTR-CAST")


@handler("tl_reduce")
def tl_reduce(infer: Infer, e: Op) -> Expr:
    """`tl.reduce(x, axis, f)` of f's operator (frontend/combine.py), with an identity exact for it: the named
    reductions (their identities are cuTile Rust's own per type), an int1 tile's logic as a reduction of its
    0/1 widening, and `|` / `^` of integers as cuTile Rust's closure reduce, whose identity (0, whatever it is
    given) is theirs; `&` of integers is `~(~x | ...)`. No narrow-integer widening: Triton's combine keeps the
    operand's type (unlike tl.sum)."""
    x = _operand(infer, e)
    op, dt, pos = e.attr("combine"), x.ty.dtype, e.pos
    kd = _literal(e, "keepdims", "keep_dims")
    axis = e.args[1]

    def named(name: str, v: Expr) -> Expr:
        return infer.expr(Op(name, (v, axis), pos, (("keepdims", kd),), e.rule))
    if dt == "bool":
        if op not in _BOOL_REDUCE:
            raise _refuse(e, "reduction of an int1 tile", "is not ported (Triton computes it in int1, whose + and * "
                          "the port has no exact form for)")
        r = named(_BOOL_REDUCE[op], _widened(x, pos))
        if op == "xor":  # the count's parity
            r = infer.expr(Op("bitand", (Op("typed", (r,), pos), Lit(1, pos)), pos, rule=e.rule))
        return infer.expr(Op("cmp", (Op("typed", (r,), pos), Lit(0, pos)), pos, (("pred", "!="),), e.rule))
    if op in ("land", "lor") and is_generic(dt):
        raise _refuse(e, "reduction of an array's elements", "takes int1 tiles (Triton's logical and / or): convert "
                      "them first (`x.to(tl.int1)` or `x != 0`)")
    if op in ("land", "lor"):
        raise _refuse(e, f"reduction of a {dt} tile", "gives int1 values (Triton's logical and / or), not the "
                      "operand's type; Triton refuses it as well")
    if op in _NAMED_REDUCE:
        return named(_NAMED_REDUCE[op], Op("typed", (x,), pos))
    if is_float(dt):
        raise _refuse(e, f"reduction of a {dt} tile", "needs integer or int1 operands")
    rank = len(x.ty.shape)
    if rank != 1 or not (axis is None or (isinstance(axis, Lit) and axis.value in (0, -1))):
        raise _refuse(e, f"reduction of a rank-{rank} tile along an axis", "is ported for rank-1 tiles only: cuTile "
                      "Rust 0.5.0's closure reduce (the only one with | and ^) reduces dim 0 into a scalar whatever "
                      "its dim")
    inner = Op("invert", (Op("typed", (x,), pos),), pos, rule=e.rule) if op == "and" else Op("typed", (x,), pos)
    inner = infer.expr(inner)
    r = Op("reduce_closure", (inner,), pos, (("combine", "xor" if op == "xor" else "or"),), e.rule, TileTy(dt, ()))
    if op == "and":
        r = infer.expr(Op("invert", (Op("typed", (r,), pos),), pos, rule=e.rule))
    if isinstance(kd, Lit) and kd.value is True:
        return Op("reshape", (r,), pos, rule=e.rule, ty=TileTy(dt, ("1",)))
    return r


@handler("tl_scan")
def tl_scan(infer: Infer, e: Op) -> Expr:
    """`tl.associative_scan(x, axis, f, reverse)` of f's operator. cuTile Rust 0.5.0's scan writes identity 0
    whatever it is given (compile_scan_op), so only operators whose identity 0 is are ported: + (scan_sum), `|`
    and `^` of integers (the closure scan; `&` as `~(~x | ...)`), and an int1 tile's logic as a running count of
    its 0/1 widening. `*` (tl.cumprod), max and min have other identities and are refused."""
    x = _operand(infer, e)
    op, dt, pos = e.attr("combine"), x.ty.dtype, e.pos
    axis = _axis(e, x)
    rev = _literal(e, "reverse", "reverse")

    def cumsum(v: Expr) -> Expr:
        return infer.expr(Op("cumsum", (v, Lit(axis, pos)), pos, (("reverse", rev),), e.rule))
    if dt == "bool" and op in _BOOL_REDUCE:
        if op in ("or", "lor", "max"):  # true from the first true element on: a running count above 0
            return infer.expr(Op("cmp", (Op("typed", (cumsum(_widened(x, pos)),), pos), Lit(0, pos)), pos,
                                 (("pred", "!="),), e.rule))
        if op == "xor":  # the running count's parity
            count = Op("typed", (cumsum(_widened(x, pos)),), pos)
            return infer.expr(Op("cmp", (Op("bitand", (count, Lit(1, pos)), pos, rule=e.rule), Lit(0, pos)), pos,
                                 (("pred", "!="),), e.rule))
        # and: true until the first false element, a running count of the false ones equal to 0
        falses = Op("where", (Op("typed", (x,), pos), Lit(0, pos), Lit(1, pos)), pos, rule=e.rule)
        return infer.expr(Op("cmp", (Op("typed", (cumsum(falses),), pos), Lit(0, pos)), pos, (("pred", "=="),),
                             e.rule))
    if op == "add" and dt != "bool":
        return cumsum(Op("typed", (x,), pos))
    if op in ("mul", "max", "min"):
        identity = {"mul": "1", "max": "the type's least value (-inf for floats)",
                    "min": "the type's greatest value (+inf for floats)"}[op]
        raise _refuse(e, "scan", f"is not ported: its identity is {identity}, and cuTile Rust 0.5.0's scan writes "
                      "identity 0 whatever identity it is given (cutile-compiler compile_scan_op), which would seed "
                      "the scan wrongly")
    if dt == "bool" or is_float(dt) or op in ("land", "lor"):
        raise _refuse(e, f"scan of a {dt} tile", "is not ported (int1 scans take and / or / xor / max / min; "
                      "integer scans take + | ^ &; float scans take +)")
    inner = Op("invert", (Op("typed", (x,), pos),), pos, rule=e.rule) if op == "and" else Op("typed", (x,), pos)
    inner = infer.expr(inner)
    r = Op("scan_closure", (inner,), pos, (("combine", "xor" if op == "xor" else "or"), ("axis", axis),
                                           ("reverse", rev.value)), e.rule, x.ty)
    if op == "and":
        return infer.expr(Op("invert", (Op("typed", (r,), pos),), pos, rule=e.rule))
    return r


@handler("reduce_closure", "scan_closure")
def closure(infer: Infer, e: Op) -> Op:
    """A closure reduce or scan made by tl_reduce / tl_scan, typed again (its operand's type, rank 0 reduced)."""
    x = infer.expr(e.args[0])
    return replace(e, args=(x,), ty=TileTy(x.ty.dtype, () if e.op == "reduce_closure" else x.ty.shape))


# ------------------------------------------------------------------ tl.flip, tl.sort, tl.topk
# cuTile Rust 0.5 has no reversal, sort or cross-lane shuffle of a tile. Each is written with ops it has: an element
# of the result is picked from the source by a one-hot selection over a new dimension (as tl_gather), which costs
# the extent times the tile's elements (a CT119 warning at the call says so); a flip of a literal extent of at most
# FLIP_CUT_MAX is cut and joined in reverse order instead (extract and cat: no arithmetic).
FLIP_CUT_MAX = 8
QUADRATIC = "CT119"


def _quadratic_note(infer: Infer, e: Op, what: str, n: str) -> None:
    lacks = "reversal" if what == "`tl.flip`" else "sort"
    infer.notes.append((QUADRATIC, f"{what} is emulated with a one-hot selection: it computes {n} values for each "
                        f"element (quadratic in the extent {n}), as cuTile Rust 0.5 has no {lacks} or shuffle of a "
                        "tile", e.pos))


def _dim_value(d: str, pos) -> Expr:
    """A tile extent as an i32 value (a literal, or the constant / derived const generic it names)."""
    if d.isdigit():
        return Lit(int(d), pos)
    return Op("typed", (Name(d, pos, TileTy("i32")),), pos)


def _dim(d: str, pos) -> Expr:
    """A tile extent as a shape's item (read by infer.shape_dims)."""
    return Lit(int(d), pos) if d.isdigit() else Name(d, pos)


def _dims(ds, pos) -> TupleExpr:
    return TupleExpr(tuple(_dim(d, pos) for d in ds), pos)


def _literal_axis(e: Op, arg: Expr, rank: int, what: str) -> int:
    if not (isinstance(arg, Lit) and isinstance(arg.value, int) and not isinstance(arg.value, bool)
            and -rank <= arg.value < rank):
        raise fail(e.rule, f"`dim` of `{what}` must be an integer literal within the tile's rank {rank}", e.pos)
    return arg.value % rank


def _bits(infer: Infer, x: Expr, rule: str) -> tuple[Expr, "callable"]:
    """x (typed) as integers holding its bits, and the function taking such integers back to x's dtype. Floats go
    through their float32 value (f16, bf16, f8 widen exactly; f64 through its own 64 bits), so -0.0, infinities
    and NaN are kept; bool is 0 or 1. A sum of one such integer and zeros is that integer. A pointer's generic
    goes through float32 too, so its conversion is marked `floats_only`: the generic then ranges over float
    dtypes only (passes/domains.py; an int32 array's values past 2**24 would round), unless the kernel uses its
    values as integers (then it is an integer type here, and needs no conversion)."""
    dt, pos = x.ty.dtype, x.pos

    def dtype(d):
        return Op("dtype", (), pos, (("dtype", d),))
    if dt == "bool":
        return infer.to_dtype(x, "i32"), lambda v: infer.to_dtype(v, "bool")
    if not is_float(dt):
        return x, lambda v: v
    wide = "f64" if dt == "f64" else "f32"
    ity = "i64" if wide == "f64" else "i32"
    widened = infer.to_dtype(x, wide)
    if is_generic(dt) and isinstance(widened, Op) and widened.op == "convert":
        widened = replace(widened, attrs=widened.attrs + (("floats_only", True),))
    bits = infer.expr(Op("bitcast", (Op("typed", (widened,), pos), dtype(ity)), pos, rule=rule))

    def back(v):
        f = infer.expr(Op("bitcast", (Op("typed", (infer.to_dtype(v, ity),), pos), dtype(wide)), pos, rule=rule))
        return infer.to_dtype(f, dt)
    return bits, back


def _one_hot_pick(infer: Infer, e: Op, x: Expr, axis: int, m: str, hit: Op) -> Expr:
    """`out[.., k, ..] = x[.., i, ..]` for the one i where `hit` holds: x's axis is I (a size-1 axis K of extent
    `m` after it), `hit` broadcasts to (.., I, K, ..); a sum over I of the selected bits (zero elsewhere)."""
    pos, s = e.pos, x.ty.shape
    bits, back = _bits(infer, x, e.rule)
    src = Op("reshape", (Op("typed", (bits,), pos), _dims(s[:axis] + (s[axis], "1") + s[axis + 1:], pos)), pos, (),
             e.rule)
    picked = Op("reduce_sum", (Op("where", (hit, src, Lit(0, pos)), pos, (), e.rule), Lit(axis, pos)), pos,
                (("keepdims", Lit(False, pos)),), e.rule)
    out = back(infer.expr(picked))
    if out.ty.shape != s[:axis] + (m,) + s[axis + 1:]:
        raise fail("CT900", f"internal error: a one-hot selection of shape {out.ty.shape}", pos)
    return _moved(infer, x, out)


def _moved(infer: Infer, x: Expr, out: Expr) -> Expr:
    """`out`, made of x's own elements: where they are used as integers, the array x came from holds them (its
    generic is an integer: infer.demand_int traces a name to the array it was loaded from)."""
    src_array = infer.source_array(x) if is_generic(x.ty.dtype) else None
    if src_array:
        out = infer.hoist(out)
        if isinstance(out, Name):
            infer.sources[out.id] = src_array
    return out


def _positions(e: Op, n: str, rank: int, at: int) -> Op:
    """arange(n) along dimension `at` of a tile of rank `rank + 1` whose other dimensions are 1."""
    index = Op("arange", (_dim(n, e.pos), None), e.pos, (), e.rule)
    return Op("reshape", (index, _dims(("1",) * at + (n,) + ("1",) * (rank - at), e.pos)), e.pos, (), e.rule)


def _tile_operand(infer: Infer, e: Op, what: str) -> Expr:
    x = infer.expr(e.args[0])
    if not isinstance(x.ty, TileTy) or not x.ty.shape:
        raise fail(e.rule, f"`{what}` takes a tile of rank 1 or more", e.pos)
    if len(x.ty.shape) >= 6:
        raise fail(e.rule, f"`{what}` of a rank-{len(x.ty.shape)} tile: its emulation adds a dimension, and cuTile "
                   "Rust 0.5 has tiles of rank at most 6; reshape the tile to fewer dimensions first", e.pos)
    return _moved(infer, x, x) if is_generic(x.ty.dtype) else infer.hoist(x)


def _flip_cut(infer: Infer, e: Op, x: Expr, axis: int, n: int) -> Expr:
    """x reversed along `axis` of literal extent n (a power of two): its two halves, each reversed, joined in the
    other order (extract and cat only)."""
    pos = e.pos
    if n == 1:
        return x
    half = n // 2
    parts = []
    for i in (1, 0):
        index = TupleExpr(tuple(Lit(i if d == axis else 0, pos) for d in range(len(x.ty.shape))), pos)
        shape = _dims(tuple(str(half) if d == axis else s for d, s in enumerate(x.ty.shape)), pos)
        part = infer.expr(Op("extract", (Op("typed", (x,), pos), index, shape), pos, (), e.rule))
        parts.append(Op("typed", (_flip_cut(infer, e, infer.hoist(part) if half > 1 else part, axis, half),), pos))
    return infer.expr(Op("cat", (TupleExpr(tuple(parts), pos), Lit(axis, pos)), pos, (), e.rule))


@handler("tl_flip")
def tl_flip(infer: Infer, e: Op) -> Expr:
    """Triton's `tl.flip(x, dim)` (language/standard.py): the elements in reverse order along `dim`, their bits
    unchanged. A literal extent of at most FLIP_CUT_MAX is cut and joined (extract, cat); another is the one-hot
    selection `out[j] = x[i]` where `i + j == N - 1`."""
    x = _tile_operand(infer, e, "tl.flip")
    rank = len(x.ty.shape)
    if e.args[1] is None or (isinstance(e.args[1], Lit) and e.args[1].value is None):
        # (standard.py's `static_assert(-len(x.shape) <= dim ...)` compares None: Triton 3.6 compiles no flip
        # without a dim, though its docstring and _get_flip_dim read None as the last one)
        raise fail(e.rule, "`tl.flip` needs `dim`: Triton 3.6 fails to compile it without one (its static_assert "
                   "compares None); pass the dimension, e.g. -1 for the last", e.pos)
    axis = _literal_axis(e, e.args[1], rank, "tl.flip")
    n = x.ty.shape[axis]
    if n.isdigit() and int(n) <= FLIP_CUT_MAX and int(n) & (int(n) - 1) == 0:
        return _moved(infer, x, _flip_cut(infer, e, x, axis, int(n)))
    pos = e.pos
    _quadratic_note(infer, e, "`tl.flip`", n)
    i, j = _positions(e, n, rank, axis), _positions(e, n, rank, axis + 1)
    total = Op("add", (Op("add", (i, j), pos, (), e.rule), Lit(1, pos)), pos, (), e.rule)
    hit = Op("cmp", (total, _dim_value(n, pos)), pos, (("pred", "=="),), e.rule)
    return _one_hot_pick(infer, e, x, axis, n, hit)


def _sort_key(infer: Infer, x: Expr, rule: str) -> Expr:
    """An integer whose order is x's: ints and bool as they are; a float's bits with the magnitude bits of the
    negative ones inverted (IEEE 754 totalOrder: -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN)."""
    pos = x.pos
    if x.ty.dtype == "bool":
        return infer.to_dtype(x, "i32")
    if not is_float(x.ty.dtype):
        return x
    bits, _ = _bits(infer, x, rule)
    bits = Op("typed", (infer.hoist(bits),), pos)
    magnitude = Lit(2**63 - 1 if bits.args[0].ty.dtype == "i64" else 2**31 - 1, pos)
    negative = Op("cmp", (bits, Lit(0, pos)), pos, (("pred", "<"),), rule)
    return infer.expr(Op("where", (negative, Op("bitxor", (bits, magnitude), pos, (), rule), bits), pos, (), rule))


def _sorted(infer: Infer, e: Op, x: Expr, descending: bool, m: str, what: str) -> Expr:
    """The first `m` elements of x sorted along its last dimension: each element's rank is the number of elements
    before it in the order (smaller, greater when descending; equal keys in index order, so the ranks are
    0 .. N-1 once each), then the element of rank k is picked for every k < m."""
    pos, rank = e.pos, len(x.ty.shape)
    s, axis = x.ty.shape, rank - 1
    n = s[axis]
    _quadratic_note(infer, e, f"`{what}`", n)
    key = Op("typed", (infer.hoist(_sort_key(infer, x, e.rule)),), pos)
    key_i = Op("reshape", (key, _dims(s[:axis] + (n, "1"), pos)), pos, (), e.rule)  # the element ranked: I
    key_j = Op("reshape", (key, _dims(s[:axis] + ("1", n), pos)), pos, (), e.rule)  # the ones compared with it: J
    earlier = Op("cmp", (_positions(e, n, rank, axis + 1), _positions(e, n, rank, axis)), pos,
                 (("pred", "<"),), e.rule)
    strict, weak = (">", ">=") if descending else ("<", "<=")
    before = Op("where", (earlier, Op("cmp", (key_j, key_i), pos, (("pred", weak),), e.rule),
                          Op("cmp", (key_j, key_i), pos, (("pred", strict),), e.rule)), pos, (), e.rule)
    ranks = Op("reduce_sum", (Op("where", (before, Lit(1, pos), Lit(0, pos)), pos, (), e.rule), Lit(axis + 1, pos)),
               pos, (("keepdims", Lit(False, pos)),), e.rule)
    ranks = Op("typed", (infer.hoist(infer.expr(ranks)),), pos)
    hit = Op("cmp", (Op("reshape", (ranks, _dims(s[:axis] + (n, "1"), pos)), pos, (), e.rule),
                     _positions(e, m, rank, axis + 1)), pos, (("pred", "=="),), e.rule)
    return _one_hot_pick(infer, e, x, axis, m, hit)


def _last_dim(e: Op, arg: Expr | None, rank: int, what: str) -> None:
    if arg is None or (isinstance(arg, Lit) and arg.value is None):
        return
    if not (isinstance(arg, Lit) and isinstance(arg.value, int) and arg.value in (rank - 1, -1)):
        raise fail(e.rule, f"`{what}` sorts along the last dimension only (Triton's static_assert: \"only minor "
                   "dimension is currently supported\"); `dim` must be None, -1 or the last dimension", e.pos)


def _flag(infer: Infer, e: Op, arg: Expr | None, what: str) -> bool:
    if isinstance(arg, Name) and arg.id in infer.consts:
        arg = infer.flag_value(arg)  # a constexpr flag: each variant sorts its own way
    if arg is None:
        return False
    if not (isinstance(arg, Lit) and isinstance(arg.value, (bool, int))):
        raise fail(e.rule, f"`descending=` of `{what}` must be True, False or a constexpr flag", e.pos)
    return bool(arg.value)


@handler("tl_sort")
def tl_sort(infer: Infer, e: Op) -> Expr:
    """Triton's `tl.sort(x, dim=None, descending=False)` (language/standard.py sort_impl): x sorted along its last
    dimension. Ties keep index order (equal keys have equal bits, so the values are Triton's). Floats are ordered
    by IEEE totalOrder: where Triton's compares would call them equal, -0.0 sorts before +0.0, and a NaN sorts
    past +inf (-NaN before -inf), where Triton's bitonic network copies or drops elements next to a NaN."""
    x = _tile_operand(infer, e, "tl.sort")
    _last_dim(e, e.args[1], len(x.ty.shape), "tl.sort")
    return _sorted(infer, e, x, _flag(infer, e, e.args[2], "tl.sort"), x.ty.shape[-1], "tl.sort")


@handler("tl_topk")
def tl_topk(infer: Infer, e: Op) -> Expr:
    """Triton's `tl.topk(x, k, dim=None)` (sort_impl with k, descending): the k largest elements of the last
    dimension, largest first, as the first k of `tl.sort(x, descending=True)`."""
    x = _tile_operand(infer, e, "tl.topk")
    _last_dim(e, e.args[2], len(x.ty.shape), "tl.topk")
    if e.args[1] is None:
        raise fail(e.rule, "`tl.topk` needs `k`", e.pos)
    (k,) = infer.shape_dims(e.args[1])
    n = x.ty.shape[-1]
    if k.isdigit() and (int(k) & (int(k) - 1) or (n.isdigit() and int(k) > int(n))):
        raise fail(e.rule, f"`tl.topk` of k={k} elements from an extent of {n}: k must be a power of two (Triton's "
                   "too) no larger than the extent", e.pos)
    return _sorted(infer, e, x, True, k, "tl.topk")


# ------------------------------------------------------------------ tl.reduce of a (value, index) pair
_INT_RANGE = {"i8": (-2**7, 2**7 - 1), "i16": (-2**15, 2**15 - 1), "i32": (-2**31, 2**31 - 1),
              "i64": (-2**63, 2**63 - 1), "u8": (0, 2**8 - 1), "u16": (0, 2**16 - 1), "u32": (0, 2**32 - 1),
              "u64": (0, 2**64 - 1)}


@handler("tl_pair_reduce")
def tl_pair_reduce(infer: Infer, e: Op) -> Expr:
    """One result (`part` 0: the value, 1: the index) of `tl.reduce((v, i), axis, f)` where f keeps the pair with
    the larger (`direction` max) or smaller value, NaN above (`nan` wins) or below (loses) every number and all
    NaN tied, ties to the smaller (`tie` first) or larger index (frontend/combine.pair_selection). Such an f is a
    total preorder's selection, so Triton's result does not depend on its reduction tree, and two reductions give
    it: the best value (NaN, where one wins and the axis has one), the first (last) index of an element equal to
    it, and that element's own bits (-0.0 and a NaN's payload kept). `nan` any: f is such a selection for numbers
    only, so a float value tile is refused (Triton's result there depends on its tree)."""
    v, i = infer.expr(e.args[0]), infer.expr(e.args[1])
    pos = e.pos
    if isinstance(i.ty, TileTy) and is_generic(i.ty.dtype):
        retype_generic(infer.k, i.ty.dtype, "i32")  # loaded from a pointer: an index pointer holds integers
    if not (isinstance(v.ty, TileTy) and isinstance(i.ty, TileTy)) or not v.ty.shape or v.ty.shape != i.ty.shape \
            or not is_int(i.ty.dtype) or v.ty.dtype == "bool" or i.ty.dtype not in _INT_RANGE:
        raise fail(e.rule, "`tl.reduce` of a (value, index) pair takes two tiles of one shape, the second of "
                   f"integers (got {v.ty} and {i.ty})", pos)
    floats = is_float(v.ty.dtype)
    nan, top = e.attr("nan"), e.attr("direction") == "max"
    if floats and nan == "any":
        raise fail(e.rule, "`tl.reduce` of a (value, index) pair whose combine keeps the larger (smaller) value "
                   "but does not order NaN (NaN neither wins nor loses every comparison): Triton's result with a "
                   "NaN depends on its reduction tree; test NaN in the combine (`a != a`)", pos)
    rank = len(v.ty.shape)
    axis_arg = e.args[2]
    if axis_arg is None and rank == 1:
        axis_arg = Lit(0, pos)
    axis = _axis(replace(e, args=(e.args[0], axis_arg)), v)
    v, i = infer.hoist(v), infer.hoist(i)
    tv, ti = Op("typed", (v,), pos), Op("typed", (i,), pos)

    def reduce(name: str, x: Op) -> Op:
        return Op(name, (x, Lit(axis, pos)), pos, (("keepdims", Lit(True, pos)),), e.rule)
    best_of = "reduce_max" if top else "reduce_min"
    if floats:
        is_nan = Op("typed", (infer.hoist(infer.expr(Op("cmp", (tv, tv), pos, (("pred", "!="),), e.rule))),), pos)
        numbers = Op("where", (is_nan, Lit(float("-inf") if top else float("inf"), pos), tv), pos, (), e.rule)
        best = reduce(best_of, numbers)
        counted = reduce("reduce_max" if nan == "wins" else "reduce_min",
                         Op("where", (is_nan, Lit(1, pos), Lit(0, pos)), pos, (), e.rule))
        nan_best = Op("cmp", (counted, Lit(0, pos)), pos, (("pred", ">"),), e.rule)  # any NaN (wins) / all (loses)
        candidate = Op("where", (nan_best, is_nan, Op("cmp", (tv, best), pos, (("pred", "=="),), e.rule)), pos, (),
                       e.rule)
    else:
        best = Op("typed", (infer.hoist(infer.expr(reduce(best_of, tv))),), pos)
        candidate = Op("cmp", (tv, best), pos, (("pred", "=="),), e.rule)
    candidate = Op("typed", (infer.hoist(infer.expr(candidate)),), pos)
    low, high = _INT_RANGE[i.ty.dtype]
    first = e.attr("tie") == "first"
    index = infer.expr(reduce("reduce_min" if first else "reduce_max",
                              Op("where", (candidate, ti, Lit(high if first else low, pos)), pos, (), e.rule)))
    kd = e.attr("keepdims")
    keep = isinstance(kd, Lit) and kd.value is True
    out_shape = tuple(d for n, d in enumerate(v.ty.shape) if n != axis or keep)

    def result(r: Expr) -> Expr:
        return r if keep else Op("reshape", (r,), pos, rule=e.rule, ty=TileTy(r.ty.dtype, out_shape))
    if e.attr("part") == 1:
        return result(index)
    if not floats:  # the winner's value is the best value itself
        return result(infer.expr(best))
    # the element at that index: its bits (the candidates compare equal, but -0.0 and +0.0, or NaN payloads, differ)
    index = Op("typed", (infer.hoist(index),), pos)
    bits, back = _bits(infer, v, e.rule)
    at = Op("bitand", (candidate, Op("cmp", (ti, index), pos, (("pred", "=="),), e.rule)), pos, (), e.rule)
    lowest = -2**63 if bits.ty.dtype == "i64" else -2**31
    picked = infer.expr(reduce("reduce_max", Op("where", (at, Op("typed", (bits,), pos), Lit(lowest, pos)), pos, (),
                                                   e.rule)))
    return result(back(picked))
