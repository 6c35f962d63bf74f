"""Creation family: tiles made from nothing but a shape, a dtype and a fill (zeros, ones, full, arange)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ...diagnostics import fail
from ...model.ir import Expr, Lit, Op, TileTy, is_generic
from ..type_rules import check_int_range, is_float
from .registry import handler

if TYPE_CHECKING:
    from ..infer import Infer


def _filled(infer: Infer, e: Op, fill: Expr) -> Op:
    """A tile of `e`'s shape and dtype (args: shape, ..., dtype) holding `fill` everywhere."""
    shape = infer.shape_dims(e.args[0])
    dt = infer.dtype_arg(e.args[-1]) if e.args[-1] is not None else None
    if dt is None:
        raise fail(e.rule, "`dtype` is required", e.pos)
    wide = infer.widened_dtype(dt)  # (`tl.full((), 0, counts_ptr.dtype.element_ty)` of an integer pointer: i64)
    attrs = (("element_of", dt),) if wide != dt else ()  # (in Triton a value of the pointer's type: domains.py)
    dt = wide
    if isinstance(fill, Lit) and not (is_generic(dt) and fill.value != 0):
        # (a nonzero literal of the array dtype: the splat of the literal converted to E below, a conversion
        # of a constant that the verifier folds exactly)
        check_int_range(fill, dt)
        return Op("const_tile", (replace(fill, ty=TileTy(dt)),), e.pos, attrs, ty=TileTy(dt, shape), rule=e.rule)
    v = infer.expr(fill)
    if not (isinstance(v.ty, TileTy) and v.ty.is_scalar):
        raise fail(e.rule, "the fill value must be a scalar", e.pos)
    return Op("splat", (infer.to_dtype(v, dt),), e.pos, attrs, ty=TileTy(dt, shape), rule=e.rule)


@handler("zeros")
def zeros(infer: Infer, e: Op) -> Op:
    return _filled(infer, e, Lit(0, e.pos))


@handler("zero_of")
def zero_of(infer: Infer, e: Op) -> Expr:
    """A zero of a given type: the declaration before a constant `if` of a name only its arm defines
    (infer.HoistNeeded); never read where the arm does not run."""
    like = e.attr("like")
    ty = TileTy(infer.env[like].dtype if like else e.attr("dtype"), e.attr("shape"))
    if ty.is_scalar and not is_generic(ty.dtype):  # (a generic scalar is a rank-0 tile in the Rust)
        return infer.to_dtype(infer.expr(Lit(False if ty.dtype == "bool" else 0, e.pos)), ty.dtype)
    return Op("const_tile", (Lit(False if ty.dtype == "bool" else 0, e.pos, ty=TileTy(ty.dtype)),), e.pos,
              ty=ty, rule=e.rule)


@handler("ones")
def ones(infer: Infer, e: Op) -> Op:
    return _filled(infer, e, Lit(1, e.pos))


@handler("full")
def full(infer: Infer, e: Op) -> Op:
    return _filled(infer, replace(e, args=(e.args[0], e.args[2])), e.args[1])


@handler("arange")
def arange(infer: Infer, e: Op) -> Expr:
    (n,) = infer.shape_dims(e.args[0])
    dt = infer.dtype_arg(e.args[1]) if e.args[1] is not None else "i32"
    if dt in ("i32", "i64"):
        return Op("arange", (), e.pos, rule=e.rule, ty=TileTy(dt, (n,)))
    if not is_float(dt) or is_generic(dt):
        raise fail(e.rule, f"ct.arange with dtype {dt} is not supported", e.pos)
    base = Op("arange", (), e.pos, rule=e.rule, ty=TileTy("i32", (n,)))
    return Op("convert", (base,), e.pos, rule=e.rule, ty=TileTy(dt, (n,)))
