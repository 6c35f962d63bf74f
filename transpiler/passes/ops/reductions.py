"""Reductions family: reductions of a tile along axes (sum, max, min, prod; cuTile Python's argmax is refused,
Triton's is composed from reductions: tl_argmax) and scans (cumsum)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ...diagnostics import fail
from ...model.ir import Expr, Lit, Name, Op, TileTy, TupleExpr, is_generic
from ..infer import is_float, is_int, retype_generic
from . import handler

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
