"""Control family: the block's position in the launch grid and conditional expressions."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ...diagnostics import TranspileError, fail
from ...model.ir import Expr, Lit, Op, TileTy
from ..type_rules import COMPILE_ERROR, FUNCTION_CONSTEXPR, STATIC_ASSERT, SplitOnConst, unify_types
from .registry import handler

if TYPE_CHECKING:
    from ..infer import Infer


@handler("bid", "num_blocks")
def block_index(infer: Infer, e: Op) -> Op:
    axis = e.args[0]
    if not (isinstance(axis, Lit) and axis.value in (0, 1, 2)):
        raise fail(e.rule, "the axis of ct.bid / ct.num_blocks must be 0, 1 or 2", e.pos)
    return replace(e, args=(replace(axis, ty=TileTy("i32")),), ty=TileTy("i32"))


@handler("compile_error")
def compile_error(infer: Infer, e: Op) -> Expr:
    """A Triton `raise` reached in this specialization: Triton refuses to compile it, so it has no entry here
    either (a Triton variant that fails with CT103 is dropped and said, passes/specialize.py). A cuTile Python
    `ct.static_assert` whose condition fails in this specialization: cuTile Python refuses to compile it, and
    the variant is dropped the same way (CT117 where it fails for every specialization)."""
    if e.rule == "CTR-STATIC-ASSERT" and e.attr("kind") is None:
        raise fail(e.rule, "ct.static_assert is a statement: its result is not a value", e.pos)
    if e.attr("kind") == "static_assert":
        cond = e.attr("cond")
        if not infer.is_const(cond):
            raise fail(e.rule, "the condition of ct.static_assert must be decidable from the constants: "
                       "comparisons of ct.Constant parameters and literals, `and`, `or`, `not` (the port checks "
                       "it per specialization)", e.pos)
        raise fail("CT117", f"{STATIC_ASSERT} {e.attr('text')}", e.pos)
    if e.attr("helper"):  # a path of a helper without a final `return` that this entry takes
        dtypes = infer.k.variant.dtypes
        raise fail("CT103", f"{COMPILE_ERROR} helper `{e.attr('helper')}` reaching its end without a `return` "
                   f"(Triton returns None there) at compile time" + (
                       f", for element type {' or '.join(dtypes)}" if dtypes else ""), e.pos)
    if e.attr("kind") == "function_constexpr":  # the frontend's `FN(...)` of an optional function constexpr
        raise fail("CT103", f"{FUNCTION_CONSTEXPR} `{e.attr('text')}` is called", e.pos)
    raise fail("CT103", f"{COMPILE_ERROR} `{e.attr('text')}` at compile time", e.pos)


@handler("dtype_in")
def dtype_in(infer: Infer, e: Op) -> Expr:
    """`x.dtype.is_floating()` read as a value (Triton: a constexpr bool): decided in this entry."""
    return Lit(infer.dtype_cond_value(e), e.pos, TileTy("bool"))


@handler("dtype_attr")
def dtype_attr(infer: Infer, e: Op) -> Expr:
    """`x.dtype.primitive_bitwidth`: a Python int in this entry."""
    return infer.expr(Lit(infer.dtype_attr_value(e), e.pos))


@handler("is_none")
def is_none(infer: Infer, e: Op) -> Expr:
    """`x is None` (attr given=False) / `x is not None` (given=True) of a local a Triton kernel binds to None on some
    path: decided here, as Triton decides it when it compiles the specialization."""
    x = e.args[0]
    none = infer.is_none_name(x)
    if not none:
        infer.expr(x)  # defined here (else CT103, or the split of the constant `if` that defines it)
    return Lit(none != bool(e.attr("given")), e.pos, TileTy("bool"))


@handler("ifexp")
def ifexp(infer: Infer, e: Op) -> Expr:
    by_dtype = infer.dtype_cond_value(e.args[0])
    if by_dtype is not None:  # `a if x.dtype == ct.float32 else b`: folded per entry (the arms' types may differ)
        return infer.expr(e.args[1] if by_dtype else e.args[2])
    if infer.k.frontend == "triton" and infer.is_const(e.args[0]):
        # `s[None, :] if SCALE_ON_COLS else s[:, None]`: Triton evaluates a constexpr condition when it compiles,
        # and types only the arm taken. Where the entry's predicates decide it, that arm alone; where the arms
        # do not both type alike, one entry per truth value (SplitOnConst)
        from ..predicates import decides
        from ..predicates import predicate_text
        try:
            text = predicate_text(e.args[0])
        except TranspileError:
            text = None
        taken = decides(infer.k.variant.predicates, text) if text is not None else None
        if taken is not None:
            return infer.expr(e.args[1] if taken else e.args[2])
        if text is not None:
            env = dict(infer.env)
            try:
                a, b = infer.expr(e.args[1]), infer.expr(e.args[2])
                if a.ty != b.ty:
                    a, b, _ = infer.coerce_pair(a, b, e.pos)
                alike = a.ty == b.ty
            except TranspileError:
                alike = False
            infer.env = env
            if not alike:
                raise SplitOnConst(text)
    cond = infer.expr(e.args[0])
    a, b = infer.expr(e.args[1]), infer.expr(e.args[2])
    if a.ty != b.ty and infer.is_const(e.args[0]):
        # `l_i if not TRANS_QK else ct.sum(l_i, 0)` with arms of different shapes: cuTile Python folds the
        # constant condition and types only the arm it takes; so does this variant (split where undecided)
        folded = infer.bool_const_value(e.args[0])
        if isinstance(folded, Lit) and isinstance(folded.value, bool):
            return a if folded.value else b
    if a.ty != b.ty:
        a, b, _ = infer.coerce_pair(a, b, e.pos)
    unify_types(a.ty, b.ty)
    if isinstance(a, Lit) and isinstance(b, Lit) and a.ty.dtype != b.ty.dtype:
        dt = "f32" if "f32" in (a.ty.dtype, b.ty.dtype) else a.ty.dtype
        a, b = replace(a, ty=TileTy(dt)), replace(b, ty=TileTy(dt))
    if a.ty != b.ty:
        raise fail("CT104", f"the arms of a conditional expression have different types ({a.ty}, {b.ty})", e.pos)
    if infer.is_float_cond(e.args[0]):
        return a if infer.float_cond_value(e.args[0]) else b
    if infer.is_const(e.args[0]):
        return Op("ifexp", (cond, a, b), e.pos, (("const", True),), e.rule, a.ty)
    if not (isinstance(cond.ty, TileTy) and cond.ty.is_scalar):
        raise fail("CT104", "the condition of a conditional expression must be a scalar (use ct.where for tiles)", e.pos)
    cond = infer.truth(cond, "the condition of a conditional expression")
    return Op("ifexp", (cond, a, b), e.pos, (("const", False),), e.rule, a.ty)
