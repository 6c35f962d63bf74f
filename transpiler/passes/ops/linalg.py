"""Linear algebra family: matrix multiply-accumulate (mma with an explicit accumulator; matmul, whose
accumulator dtype follows the operands')."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...diagnostics import TranspileError, fail
from ...model.ir import DOT_PRECISIONS, Expr, Lit, Name, Op, TileTy, is_generic
from ..type_rules import RestrictDtypes, RetypeArray, SplitOnConst, SplitOnDtype, is_int, retype_generic, unify_generics
from .registry import handler

if TYPE_CHECKING:
    from ..infer import Infer

# the accumulator dtype cuTile Python's ct.matmul uses for each operand dtype
MATMUL_ACC = {"f16": "f16", "bf16": "f32", "f32": "f32", "tf32": "f32", "f8e4m3fn": "f32", "f8e5m2": "f32",
              "i8": "i32"}


def _precision(infer: Infer, e: Op) -> str:
    """The port's precision of a Triton dot ("tf32", "ieee", "bf16x3": DOT_PRECISIONS); a string constexpr is this
    entry's string (SplitOnChoice where not fixed yet)."""
    precision = e.attr("precision")
    while isinstance(precision, Op) and precision.op == "ifexp":
        # a precision chosen on a test of constants (frontend/triton._precision_choice): this entry's arm, one
        # entry per truth value where its predicates do not decide it
        from ..predicates import decides
        from ..predicates import predicate_text
        text = predicate_text(precision.args[0])
        taken = decides(infer.k.variant.predicates, text)
        if taken is None:
            raise SplitOnConst(text)
        precision = precision.args[1 if taken else 2]
        precision = precision.value if isinstance(precision, Lit) else precision
    if isinstance(precision, Name):
        chosen = infer.string_value(precision)
        if chosen not in DOT_PRECISIONS:
            raise fail("CT103", f"`input_precision={precision.id}` with {precision.id} = {chosen!r}: only "
                       f"{', '.join(map(repr, DOT_PRECISIONS))} are Triton 3.6's (NVIDIA)", e.pos)
        return DOT_PRECISIONS[chosen]
    if precision is None:  # Triton's default; cuTile Python's mma and matmul keep float32 operands as they are
        return "tf32" if infer.k.frontend == "triton" else "ieee"
    return precision


def _is_f32(infer: Infer, x: Expr) -> bool:
    """A float32 operand (E that may be float32: one entry for E = f32, SplitOnDtype)."""
    if not isinstance(x.ty, TileTy):
        return False
    dt = x.ty.dtype
    if dt == "E":
        allowed = infer.k.variant.dtypes
        if "f32" not in allowed:
            return False
        if tuple(allowed) != ("f32",):
            raise SplitOnDtype("f32")
        return True
    return dt == "f32"


def _tf32(infer: Infer, e: Op, x: Expr) -> Expr:
    """A Triton dot's float32 operand under its default `input_precision="tf32"`: converted to tf32, as
    Triton's tensor-core dot rounds it."""
    if _precision(infer, e) != "tf32" or not _is_f32(infer, x):
        return x
    return Op("convert", (x,), x.pos, rule=e.rule, ty=TileTy("tf32", x.ty.shape))


def _bf16_parts(e: Op, x: Expr) -> tuple[Expr, Expr]:
    """A float32 operand as Triton's bf16x3 splits it: hi = bf16(x), lo = bf16(x - hi)."""
    hi = Op("convert", (x,), x.pos, rule=e.rule, ty=TileTy("bf16", x.ty.shape))
    back = Op("convert", (hi,), x.pos, rule=e.rule, ty=TileTy(x.ty.dtype, x.ty.shape))
    rest = Op("sub", (x, back), x.pos, rule=e.rule, ty=x.ty)
    return hi, Op("convert", (rest,), x.pos, rule=e.rule, ty=TileTy("bf16", x.ty.shape))


def _bf16x3(infer: Infer, e: Op, a: Expr, b: Expr, acc: Expr) -> Op | None:
    """`input_precision="bf16x3"` of float32 operands: three bf16 tensor-core products accumulated in float32,
    the small ones first (a_lo*b_hi, a_hi*b_lo, then a_hi*b_hi; a_lo*b_lo is dropped), as Triton 3.6 decomposes
    it on NVIDIA; None for other operands (Triton ignores the precision of a 16-bit dot)."""
    if _precision(infer, e) != "bf16x3" or not (_is_f32(infer, a) and _is_f32(infer, b)):
        return None
    (a_hi, a_lo), (b_hi, b_lo) = _bf16_parts(e, a), _bf16_parts(e, b)
    r = acc
    for x, y in ((a_lo, b_hi), (a_hi, b_lo), (a_hi, b_hi)):
        r = Op("mma", (x, y, r), e.pos, rule=e.rule, ty=acc.ty)
    return r


def _check_out_dtype(infer: Infer, e: Op, a: Expr, acc: str) -> None:
    """Triton's `tl.dot(out_dtype=...)`: only the type the dot accumulates in anyway (float32 for float operands,
    int32 for int8 ones) is supported. A dtype constexpr (`out_dtype=ACC_DTYPE`) is that type in some entries:
    the others have no entry (CT103 drops the specialization; the launcher refuses its dtype)."""
    want = e.attr("out_dtype")
    if isinstance(want, Name):
        chosen = infer.dtype_value(want)  # SplitOnChoice where the entry does not fix it yet
        natural = "i32" if is_int(a.ty.dtype) else "f32"
        if chosen != natural or acc != natural:
            raise fail("CT103", f"`tl.dot(out_dtype={want.id})` with {want.id} = {chosen} and {a.ty.dtype} operands, "
                       f"which accumulate in {natural}: only the accumulation type is ported", e.pos)
        return
    if want and want != acc:
        raise fail(e.rule, f"`tl.dot(out_dtype=...)` {want} with {a.ty.dtype} operands accumulating in {acc} is not "
                   "supported yet", e.pos)


def int8_operands(infer: Infer, generic: str) -> None:
    """Triton's dot of a pointer's elements that must accumulate in int32: Triton compiles that only where the
    pointer holds int8 (its dot takes int8 as its only integer operand, and an int32 result from float operands
    is a compile error: an `out_dtype=tl.int32` dot of floats, an int32 accumulator carried through a loop that
    a float dot's result would make float32). RetypeArray fixes every array of the generic to int8 (the C symbol
    and the wrapper refuse other dtypes)."""
    p = next((q for q in infer.k.params if q.kind == "array" and q.flat and q.dtype == generic and not q.domain),
             None)
    if p is not None:
        raise RetypeArray(p.name, "i8", group=True)


def _triton_int_dot(infer: Infer, e: Op, a: Expr, acc: str | None) -> None:
    """A Triton dot whose result must be int32 (`out_dtype=tl.int32`, or an int32 `acc`): its operands are int8
    (their generic is fixed to it); `tl.dot(a, b, acc)` of an int32 accumulator needs `out_dtype=tl.int32`
    (Triton asserts the accumulator's type is out_dtype, float32 by default), and int8 operands an int32
    accumulator (their dot is int32)."""
    want = e.attr("out_dtype")
    dt = a.ty.dtype
    if isinstance(want, Name):
        return  # a dtype constexpr: each entry's dtype is checked by _check_out_dtype
    if acc is not None and acc == "i32" and want != "i32":
        raise fail(e.rule, "`tl.dot(a, b, acc)` with an int32 accumulator needs `out_dtype=tl.int32` (Triton asserts "
                   "that the accumulator's dtype is out_dtype, float32 by default)", e.pos)
    if is_generic(dt) and (want == "i32" or acc == "i32"):
        int8_operands(infer, dt)
    if is_int(dt) and dt != "i8":
        raise fail(e.rule, f"`tl.dot` of {dt} operands: Triton's dot takes int8 as its only integer operand type",
                   e.pos)
    if dt == "i8" and acc is not None and acc != "i32":
        raise fail(e.rule, f"`tl.dot` of int8 operands accumulates in int32, not in the {acc} accumulator", e.pos)


# cuTile Python's mma accumulator dtypes per operand dtype (cuda/tile/_datatype.py _mma_supported_dtypes)
MMA_ACC_DTYPES = {"f8e4m3fn": ("f16", "f32"), "f8e5m2": ("f16", "f32"), "f16": ("f16", "f32"), "bf16": ("f32",),
                  "f32": ("f32",), "tf32": ("f32",), "f64": ("f64",), "i8": ("i32",), "u8": ("i32",)}


def _mma_accumulator(infer: Infer, e: Op, x: str, acc: str) -> None:
    """cuTile Python refuses an accumulator dtype its operands' dtype does not take (`ct.mma` of bfloat16 into a
    bfloat16 accumulator): refused where both are concrete; where they are the element type E, this entry is
    for the dtypes of E that cuTile Python compiles (the C symbol refuses the others, as cuTile Python does)."""
    if not is_generic(x) and not is_generic(acc):
        if x in MMA_ACC_DTYPES and acc not in MMA_ACC_DTYPES[x]:
            raise fail(e.rule or "CT107", f"ct.mma of {x} operands accumulates in {' or '.join(MMA_ACC_DTYPES[x])}, "
                       f"not in {acc}: cuTile Python refuses this kernel too", e.pos)
        return
    if {g for g in (x, acc) if is_generic(g)} != {"E"}:
        # another element type: the C symbol exports the dtype combinations where cuTile Python compiles the pair
        # (mma_pairs_compile), where the kernel's combinations are a bounded list (three generics or more)
        infer.mma_pairs.add((x, acc))
        return
    dts = infer.k.variant.dtypes
    ok = tuple(d for d in dts if (acc if acc != "E" else d) in MMA_ACC_DTYPES.get(x if x != "E" else d, (acc if acc != "E" else d,)))
    if dts and ok != tuple(dts):
        if not ok:
            raise fail(e.rule or "CT107", f"ct.mma of these operands into this accumulator compiles at none of the "
                       f"element types {', '.join(dts)} (cuTile Python refuses it)", e.pos)
        raise RestrictDtypes(ok)


def mma_pairs_compile(pairs, combination: dict[str, str]) -> bool:
    """Whether cuTile Python compiles every `ct.mma` (operand dtype, accumulator dtype) of `pairs` where the
    dtype generics take the dtypes of `combination` (generic -> dtype)."""
    for x, acc in pairs:
        dx, dacc = combination.get(x, x), combination.get(acc, acc)
        if dx in MMA_ACC_DTYPES and dacc not in MMA_ACC_DTYPES[dx]:
            return False
    return True


@handler("mma")
def mma(infer: Infer, e: Op) -> Op:
    a, b, acc = (infer.expr(x) for x in e.args)
    unify_generics(a.ty.dtype, b.ty.dtype)
    if infer.k.frontend == "triton" and isinstance(a.ty, TileTy) and isinstance(acc.ty, TileTy):
        _triton_int_dot(infer, e, a, acc.ty.dtype)
        infer.note_dot(a.ty.dtype, acc.ty.shape)
    if a.ty.dtype != b.ty.dtype:
        _same_operand_dtypes(infer, a.ty.dtype, b.ty.dtype)
    if infer.k.frontend != "triton" and a.ty.dtype != b.ty.dtype:
        if {a.ty.dtype, b.ty.dtype} != {"i8", "u8"}:
            raise fail(e.rule, f"ct.mma operands have different dtypes ({a.ty.dtype}, {b.ty.dtype})", e.pos)
    a, b = _tf32(infer, e, a), _tf32(infer, e, b)
    if infer.k.frontend != "triton":
        _mma_accumulator(infer, e, a.ty.dtype, acc.ty.dtype)
    _check_out_dtype(infer, e, a, acc.ty.dtype)
    sa, sb, sc = a.ty.shape, b.ty.shape, acc.ty.shape
    mismatch = f"mma shapes do not match: {a.ty} x {b.ty} + {acc.ty}"
    if len(sa) < 2 or len(sa) != len(sb) or len(sc) != len(sa):
        raise fail(e.rule, mismatch, e.pos)
    # dimensions equal only by the constants' values (`LOAD_BLOCK_N` and `BLOCK_N`): a variant where they are
    # (infer.UnifyDims); different literals fail
    try:
        infer.unify_dims([(sb[-2], sa[-1]), (sa[-2], sc[-2]), (sb[-1], sc[-1])], mismatch, e.pos)
    except TranspileError as err:
        raise fail(e.rule, mismatch, e.pos) from err
    return _bf16x3(infer, e, a, b, acc) or Op("mma", (a, b, acc), e.pos, rule=e.rule, ty=acc.ty)


def _same_operand_dtypes(infer: Infer, da: str, db: str) -> None:
    """An operand of an array's element type meeting one of a concrete dtype (`ct.mma(p.astype(ct.float16), v,
    acc)`, `tl.dot(b_a, b_x)` with b_x computed in float32): cuTile Python's mma and Triton's dot take operands of
    one dtype (int8 with uint8, and Triton's fp8 pairs, aside), so the kernel compiles only where that array is of
    that dtype; its arrays take it (RetypeArray), and the C symbol refuses the others."""
    if is_generic(da) != is_generic(db) and isinstance(da, str) and isinstance(db, str):
        generic, concrete = (da, db) if is_generic(da) else (db, da)
        if not concrete.startswith("f8"):
            retype_generic(infer.k, generic, concrete)


@handler("matmul")
def matmul(infer: Infer, e: Op) -> Expr:
    a, b = infer.expr(e.args[0]), infer.expr(e.args[1])
    unify_generics(a.ty.dtype, b.ty.dtype)
    if a.ty.dtype != b.ty.dtype:
        _same_operand_dtypes(infer, a.ty.dtype, b.ty.dtype)
        raise fail(e.rule, f"ct.matmul operands have different dtypes ({a.ty.dtype}, {b.ty.dtype})", e.pos)
    dt = a.ty.dtype
    triton = e.attr("accumulator") == "f32"
    if triton and isinstance(a.ty, TileTy):
        _triton_int_dot(infer, e, a, None)
    a, b = _tf32(infer, e, a), _tf32(infer, e, b)  # Triton's tl.dot: a float32 (int8: int32) result, whatever the operands
    if dt not in MATMUL_ACC and not triton:
        raise fail("CT104", f"ct.matmul's accumulator depends on the element type ({dt}): f16 accumulates in "
                   "f16, bf16 in f32; cast the operands with astype, or use ct.mma with an explicit accumulator",
                   e.pos)
    sa, sb = a.ty.shape, b.ty.shape
    mismatch = f"matmul shapes do not match: {a.ty} x {b.ty}"
    if len(sa) < 2 or len(sa) != len(sb):
        raise fail(e.rule, mismatch, e.pos)
    # K (and batch) dimensions equal only by the constants' values (`BK` and `BV` the host sets equal): a
    # variant where they are (infer.UnifyDims); different literals fail
    try:
        infer.unify_dims([(sa[-1], sb[-2]), *zip(sa[:-2], sb[:-2])], mismatch, e.pos)
    except TranspileError as err:
        raise fail(e.rule, mismatch, e.pos) from err
    acc_ty = TileTy(MATMUL_ACC.get(dt, "f32"), sa[:-1] + (sb[-1],))
    if triton:
        acc_ty = TileTy("i32" if is_int(dt) else "f32", acc_ty.shape)
        _check_out_dtype(infer, e, a, acc_ty.dtype)
        infer.note_dot(dt, acc_ty.shape)
    acc = Op("const_tile", (Lit(0, e.pos, TileTy(acc_ty.dtype)),), e.pos, rule=e.rule, ty=acc_ty)
    r = _bf16x3(infer, e, a, b, acc) or Op("mma", (a, b, acc), e.pos, rule=e.rule, ty=acc_ty)
    if acc_ty.dtype != dt and not triton:
        return Op("convert", (r,), e.pos, rule=e.rule, ty=TileTy(dt, acc_ty.shape))
    return r
