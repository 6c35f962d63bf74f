"""Elementwise family: arithmetic, division and remainder, comparisons and logic, unary math, bitwise ops,
dtype conversion and select. Binary operands are promoted and broadcast to one type (`Infer.coerce_pair`).

Division and remainder come in two meanings, fixed per model op: `floordiv` / `mod` round toward negative
infinity and give the divisor's sign (Python, cuTile), `truncdiv` / `truncmod` round toward zero and give
the dividend's sign (C, Triton)."""

from __future__ import annotations

import math
import struct

from typing import TYPE_CHECKING

from ...diagnostics import fail
from ...model.ir import Expr, Lit, Name, Op, TileTy, is_generic
from ..type_rules import RestrictDtypes, RetypeArray, UnifyElements, is_float, is_int, retype_generic
from .registry import handler

if TYPE_CHECKING:
    from ..infer import Infer


@handler("astype")
def astype(infer: Infer, e: Op) -> Expr:
    x = infer.expr(e.args[0])
    dt = infer.dtype_arg(e.args[1])
    if not isinstance(x.ty, TileTy):
        raise fail(e.rule, "astype needs a tile", e.pos)
    wide = infer.widened_dtype(dt)  # `m.to(counts_ptr.dtype.element_ty)` of an integer pointer: i64
    attrs = (("element_of", dt),) if wide != dt else ()  # (in Triton a value of the pointer's type: domains.py)
    if x.ty.dtype == wide and not attrs:
        return x  # (an integer pointer's type: a convert even of an i64, which the Rust lowers to nothing)
    return Op("convert", (x,), e.pos, attrs, rule=e.rule, ty=TileTy(wide, x.ty.shape))


# Triton types a Python float constant float32 where it is 0, infinite or of a magnitude within float32's normal
# range (else float64: semantic.to_tensor)
_F32_MIN_NORMAL, _F32_MAX = 2.0 ** -126, float.fromhex("0x1.fffffep+127")
_BITS = {"bool": 1, "i8": 8, "u8": 8, "i16": 16, "u16": 16, "i32": 32, "u32": 32, "i64": 64, "u64": 64,
         "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "f8e4m3fn": 8, "f8e5m2": 8}


@handler("bitcast")
def bitcast(infer: Infer, e: Op) -> Expr:
    """`ct.bitcast(x, dt)`, Triton's `x.to(dt, bitcast=True)`: the same bits read as `dt` (same width only)."""
    x = infer.expr(e.args[0])
    dt = infer.dtype_arg(e.args[1])
    if isinstance(x, Lit) and isinstance(x.value, int) and not isinstance(x.value, bool) and is_int(dt) \
            and -2**31 <= x.value < 2**31 and _BITS[dt] == 32:
        # a Python int (Triton's int32 scalar: `tl.philox(seed, offs, 0, 0, 0)`): its 32 bits as `dt`
        return Lit(x.value % 2**32 if dt.startswith("u") else x.value, x.pos, TileTy(dt))
    if isinstance(x, Lit) and isinstance(x.value, float) and _BITS.get(dt) == 32 and \
            (x.value == 0.0 or abs(x.value) == float("inf") or _F32_MIN_NORMAL <= abs(x.value) <= _F32_MAX):
        # a Python float (Triton's float32 scalar, the value rounded to it: `mul_rn(x, 0.25)` through inline asm)
        f32 = struct.unpack("<f", struct.pack("<f", x.value))[0]
        if dt == "f32":
            return Lit(f32, x.pos, TileTy("f32"))
        if dt in ("i32", "u32"):
            bits = struct.unpack("<I", struct.pack("<f", f32))[0]
            return Lit(bits if dt == "u32" or bits < 2**31 else bits - 2**32, x.pos, TileTy(dt))
    if not isinstance(x.ty, TileTy) or isinstance(x, Lit):
        raise fail(e.rule, "a bitcast needs a tile or a scalar value (not a Python constant)", e.pos)
    src = x.ty.dtype
    _narrow_loads(infer, x, dt)
    if e.attr("register") and is_generic(src) and not is_generic(dt):
        x = _register_input(infer, x, dt, e)
        src = x.ty.dtype
    if is_generic(src) and not is_generic(dt) and dt in _BITS and dt != "bool":
        x = _sized_generic(infer, x, dt, e)
        src = x.ty.dtype
    if is_generic(src) or is_generic(dt):
        raise fail(e.rule, f"a bitcast between {src} and {dt}: the element type is a generic whose width depends "
                   "on the caller's dtype; convert to a concrete type first", e.pos)
    if src not in _BITS or dt not in _BITS or _BITS[src] != _BITS[dt] or "bool" in (src, dt):
        raise fail(e.rule, f"a bitcast from {src} to {dt}: the bits are reinterpreted, so both types must have "
                   "the same width (bool has no bitcast)", e.pos)
    if src == dt:
        return x
    return Op("bitcast", (x,), e.pos, rule=e.rule, ty=TileTy(dt, x.ty.shape))


def _sized_generic(infer: Infer, x: Expr, dt: str, e: Op) -> Expr:
    """A bitcast of a value of a generic element type to `dt` (`x.to(tl.int32, bitcast=True)` of a loaded tile):
    Triton compiles it only where the element type has `dt`'s width. Where exactly one of the generic's dtypes has
    it, the value is that type: converted where it is the only one (nothing changes), else this entry is for it
    alone (RestrictDtypes: the others have no entry, as Triton cannot compile them). Where none or several have
    it, the value stays generic (refused by the caller: convert to a concrete type first)."""
    g = x.ty.dtype
    dts = infer.k.variant.dtypes if g == "E" else infer.all_dtypes
    same = [d for d in dts if _BITS.get(d) == _BITS[dt] and d != "bool"]
    if len(same) != 1:
        return x
    if tuple(dts) == (same[0],):
        return infer.to_dtype(x, same[0])
    if g != "E":
        raise UnifyElements("E", g)
    raise RestrictDtypes((same[0],))


def _register_input(infer: Infer, x: Expr, dt: str, e: Op) -> Expr:
    """An input of `tl.inline_asm_elementwise` (frontend/ptx.py) whose element type is a generic, read by the asm as
    `dt`: Triton compiles the asm only where the value fills its register exactly, which for a float generic is the
    float type of `dt`'s width (float32 for `.f32` and `.b32` reads). Where the generic is that type in every entry
    it is converted to it (nothing changes); where it is in some, this entry is for those alone (RestrictDtypes, as
    libdevice_f32 restricts); else refused. Read as an integer, the generic of a loaded array is an integer one
    (the array is retyped, as a bit operation on its elements retypes it)."""
    g = x.ty.dtype
    if is_int(dt) and _BITS[dt] in (32, 64):  # bits read as an integer: the array holds integers (int32 / int64)
        retype_generic(infer.k, g, f"i{_BITS[dt]}")
    want = dt if is_float(dt) else {32: "f32", 64: "f64"}.get(_BITS.get(dt, 0))
    dts = infer.k.variant.dtypes if g == "E" else infer.all_dtypes
    if want is not None and tuple(dts) == (want,):
        return infer.to_dtype(x, want)
    if want is not None and want in dts:
        if g != "E":
            raise UnifyElements("E", g)
        raise RestrictDtypes((want,))
    raise fail(e.rule, f"inline assembly reads a value of element type {'/'.join(dts) or g} as {dt}: convert it with "
               f"`.to(tl.{_TRITON_NAMES.get(want or dt, dt)})` first (Triton compiles the asm only for values that fill "
               "their register exactly)", e.pos)


_TRITON_NAMES = {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16", "i32": "int32",
                 "u32": "uint32", "i64": "int64", "u64": "uint64"}


def _narrow_loads(infer: Infer, x: Expr, dt: str) -> None:
    """A Triton bitcast to a 32-bit type of a value computed from an integer pointer's loads, which the port widens
    to int64 (ops/memory._widened): Triton compiles it only where those loads are 32-bit integers (an int64
    pointer makes the value int64, whose bitcast to a narrower type Triton refuses), so those pointers, and only
    they, are fixed to int32: their loads are int32, not widened (RetypeArray exact; the C symbol and the wrapper
    refuse other dtypes for them). A 16-bit target would fix them to int16, whose values the port would then
    compute on in int16: cuTile Rust 0.5 has no arithmetic operators on i16 tiles (refused)."""
    if infer.k.frontend != "triton" or not isinstance(x.ty, TileTy) or x.ty.dtype != "i64" \
            or _BITS.get(dt) not in (16, 32):
        return
    from .memory import int_pointer_roots
    roots = int_pointer_roots(infer, x)
    if roots and _BITS[dt] == 16:
        raise fail("TTR-BITCAST", f"a bitcast to {dt} of the elements of `{min(roots)}`: Triton compiles it only "
                   "for an int16 pointer, whose values the port would compute on in int16, and cuTile Rust 0.5 has "
                   "no arithmetic operators on i16 tiles", x.pos)
    if roots:
        raise RetypeArray(min(roots), "i32", exact=True)


def _rounding(e: Op) -> str | None:
    """The `rounding_mode=` of a call as a cuTile Rust mode name (None: not given, or `None`)."""
    mode = e.attr("rounding_mode")
    if mode is None or (isinstance(mode, Name) and mode.id == "None"):
        return None
    if not (isinstance(mode, Op) and mode.op == "enum" and str(mode.attr("value")).startswith("rounding::")):
        raise fail(e.rule, "`rounding_mode` must be a ct.RoundingMode member", e.pos)
    return mode.attr("value").split("::")[1]


def _no_full(e: Op, rounding: str) -> None:
    """cuTile Rust 0.5.0's addf/subf/mulf/divf take no `rounding::Full` (their rounding list stops at Approx: the
    bytecode writer then fails), where cuTile Python writes `rounding<full>` (IEEE-compliant division)."""
    if rounding == "Full":
        raise fail("CT107", "`rounding_mode=RoundingMode.FULL` on float arithmetic: cuTile Rust 0.5.0 cannot write "
                   "`rounding<full>` on addf/subf/mulf/divf (its rounding modes stop at APPROX); use the default "
                   "rounding (RN) if the port may differ in the last ulp, or keep this kernel in Python", e.pos)


def _float_modes(e: Op, ty) -> tuple:
    """`rounding_mode=` / `flush_to_zero=` of a functional form (ct.add(x, y, ...)): attrs `rounding` and
    `ftz` when they differ from the operator's (nearest-even, no flush); float operands only."""
    rounding, ftz = _rounding(e) or "NearestEven", e.attr("flush_to_zero")
    if ftz is not None and not (isinstance(ftz, Lit) and isinstance(ftz.value, bool)):
        raise fail(e.rule, "`flush_to_zero` must be True or False", e.pos)
    flush = bool(ftz is not None and ftz.value)
    if rounding == "NearestEven" and not flush:
        return ()
    _no_full(e, rounding)
    if not is_float(ty.dtype):
        raise fail(e.rule, "`rounding_mode` / `flush_to_zero` apply to float operands only", e.pos)
    return (("ftz", flush), ("rounding", rounding))


@handler("add", "sub", "mul", "div")
def arith(infer: Infer, e: Op) -> Op:
    a, b = infer.expr(e.args[0]), infer.expr(e.args[1])
    if isinstance(a, Lit) and isinstance(b, Lit):
        v = {"add": lambda: a.value + b.value, "sub": lambda: a.value - b.value,
             "mul": lambda: a.value * b.value, "div": lambda: a.value / b.value}[e.op]()
        return infer.expr(Lit(v, e.pos))  # Python folds arithmetic on constants
    a, b, ty = infer.coerce_pair(a, b, e.pos, float_result=(e.op == "div"))
    if ty.is_scalar and not is_int(ty.dtype) and all(infer.is_weak(x) or (isinstance(x, Op) and x.op == "convert"
                                                                        and infer.is_weak(x.args[0])) for x in (a, b)):
        raise fail("CT107", "float arithmetic on constants: cuTile Python folds it into one literal at compile "
                   "time, which a const generic cannot reproduce in cuTile Rust; precompute it (e.g. pass "
                   "1/N as a runtime float)", e.pos)
    return Op(e.op, (a, b), e.pos, _float_modes(e, ty), e.rule, ty)


@handler("truediv")
def truediv(infer: Infer, e: Op) -> Op:
    a, b = infer.expr(e.args[0]), infer.expr(e.args[1])
    if isinstance(a, Lit) and isinstance(b, Lit) and b.value:
        return infer.expr(Lit(a.value / b.value, e.pos))  # Python folds it, whatever the rounding mode
    a, b, ty = infer.coerce_pair(a, b, e.pos, float_result=True)
    ftz = e.attr("flush_to_zero")
    rounding = _rounding(e) or "NearestEven"
    _no_full(e, rounding)
    return Op("truediv", (a, b), e.pos, (("rounding", rounding), ("ftz", bool(isinstance(ftz, Lit) and ftz.value))),
              e.rule, ty)


@handler("floordiv")
def floordiv(infer: Infer, e: Op) -> Op:
    """Python's `//`: rounds toward negative infinity (floats: floor of the quotient)."""
    a, b = infer.expr(e.args[0]), infer.expr(e.args[1])
    a, b, ty = infer.coerce_pair(a, b, e.pos)
    if ty.dtype.startswith("u"):
        raise fail(e.rule, "`//` on unsigned integers: cuTile Python emits invalid Tile IR for it", e.pos)
    if is_float(ty.dtype):
        return Op("floor", (Op("div", (a, b), e.pos, rule=e.rule, ty=ty),), e.pos, (("ftz", False),), e.rule, ty)
    return Op("floordiv", (a, b), e.pos, rule=e.rule, ty=ty)


@handler("mod")
def mod(infer: Infer, e: Op) -> Op:
    """Python's `%`: the remainder takes the divisor's sign (integers only, so far)."""
    a, b = infer.expr(e.args[0]), infer.expr(e.args[1])
    infer.demand_int(a)
    a, b, ty = infer.coerce_pair(a, b, e.pos)
    if not is_int(ty.dtype):
        raise fail(e.rule, "`%` on floats is not supported yet", e.pos)
    return Op(e.op, (a, b), e.pos, rule=e.rule, ty=ty)


@handler("truncdiv", "truncmod")
def trunc_divmod(infer: Infer, e: Op) -> Op:
    """C's integer `/` and `%` (Triton's `//` and `%` on integers): the quotient rounds toward zero, the
    remainder takes the dividend's sign. Integer operands only: the float forms are not defined yet."""
    a, b = infer.expr(e.args[0]), infer.expr(e.args[1])
    infer.demand_int(a)
    infer.demand_int(b)
    a, b, ty = infer.coerce_pair(a, b, e.pos)
    if not is_int(ty.dtype):
        raise fail(e.rule or "CT101", f"`{e.op}` (C's integer division or remainder, rounding toward zero) of "
                   f"{ty.dtype} operands: only integer operands are supported", e.pos)
    return Op(e.op, (a, b), e.pos, rule=e.rule, ty=ty)


@handler("cdiv")
def cdiv(infer: Infer, e: Op) -> Op:
    a, b = infer.expr(e.args[0]), infer.expr(e.args[1])
    infer.demand_int(a)
    infer.demand_int(b)
    a, b, ty = infer.coerce_pair(a, b, e.pos)
    if not is_int(ty.dtype):
        raise fail(e.rule, "ct.cdiv needs integer operands", e.pos)
    return Op("cdiv", (a, b), e.pos, rule=e.rule, ty=ty)


@handler("next_power_of_2", "log2_floor")
def constexpr_function(infer: Infer, e: Op) -> Op:
    """Reached only where the argument is no constant (Infer.expr folds constant ones into a derived constant):
    Triton evaluates these on constexprs only."""
    name = {"next_power_of_2": "triton.next_power_of_2", "log2_floor": "tl.standard._log2"}[e.op]
    raise fail(e.rule or "CT101", f"`{name}` of a value that is not a constexpr: Triton evaluates it when it "
               "compiles, on constants only", e.pos)


@handler("maximum", "minimum")
def minmax(infer: Infer, e: Op) -> Op:
    a, b = infer.expr(e.args[0]), infer.expr(e.args[1])
    a, b, ty = infer.coerce_pair(a, b, e.pos)
    return Op(e.op, (a, b), e.pos, e.attrs, rule=e.rule, ty=ty)  # (`nan`: Triton's propagate_nan=ALL)


@handler("cmp")
def cmp(infer: Infer, e: Op) -> Op:
    a, b = infer.expr(e.args[0]), infer.expr(e.args[1])
    for x, y in ((a, b), (b, a)):
        if isinstance(x.ty, TileTy) and is_generic(x.ty.dtype) and isinstance(y.ty, TileTy) and is_int(y.ty.dtype) \
                and not isinstance(y, Lit):
            infer.demand_int(x)
    a, b, ty = infer.coerce_pair(a, b, e.pos, compare=True)
    return Op("cmp", (a, b), e.pos, e.attrs, e.rule, TileTy("bool", ty.shape))


@handler("where")
def where(infer: Infer, e: Op) -> Op:
    c = infer.expr(e.args[0])
    if e.rule == "TTR-WHERE" and isinstance(c.ty, TileTy) and c.ty.dtype not in ("bool", "i1"):
        # Triton converts a condition of another type to int1 (`x != 0`): a loaded int8 mask, say
        # (c is typed already: the comparison is made typed, not inferred again, which would re-read c's ops)
        c0, z, ty0 = infer.coerce_pair(c, infer.expr(Lit(0, c.pos)), c.pos)
        c = Op("cmp", (c0, z), c.pos, (("pred", "!="),), "TTR-CMP", TileTy("bool", ty0.shape))
    a, b = infer.expr(e.args[1]), infer.expr(e.args[2])
    a, b, ty = infer.coerce_pair(a, b, e.pos)
    shape = infer.broadcast(c.ty.shape, ty.shape, e.pos)
    a, b = infer.to_shape(a, shape), infer.to_shape(b, shape)
    c = infer.to_shape(c, shape)
    return Op("where", (c, a, b), e.pos, rule=e.rule, ty=TileTy(ty.dtype, shape))


@handler("not")
def logical_not(infer: Infer, e: Op) -> Op:
    x = infer.expr(e.args[0])
    if infer.k.frontend == "triton" and isinstance(x.ty, TileTy) and x.ty.is_scalar and is_int(x.ty.dtype):
        # `not USE_STATE or t0 >= W`: a constexpr flag (an int const generic) in a run-time condition is the
        # comparison `USE_STATE == 0`, a bool the condition's `|` / `&` take (Rust has no `not` of an integer)
        zero = Lit(0, e.pos, TileTy(x.ty.dtype))
        return Op("cmp", (x, zero), e.pos, (("pred", "=="),), e.rule, TileTy("bool"))
    return Op("not", (x,), e.pos, rule=e.rule, ty=TileTy("bool"))


@handler("and", "or")
def logical(infer: Infer, e: Op) -> Op:
    left = infer.bool_const_value(e.args[0]) if infer.is_const(e.args[0]) else e.args[0]
    if isinstance(left, Lit) and isinstance(left.value, bool) and not infer.is_const(e.args[1]):
        # `not EVEN_N and j >= start`: cuTile Python short-circuits the constant operand at compile time
        # (a variant per value): the runtime operand where it decides, else the constant's value
        decided = left.value if e.op == "or" else not left.value
        return infer.expr(left if decided else e.args[1])
    a, b = infer.expr(e.args[0]), infer.expr(e.args[1])
    return Op(e.op, (a, b), e.pos, rule=e.rule, ty=TileTy("bool"))


@handler("bitand", "bitor", "bitxor", "shl", "shr")
def bitwise(infer: Infer, e: Op) -> Op:
    a, b = infer.expr(e.args[0]), infer.expr(e.args[1])
    infer.demand_int(a)
    infer.demand_int(b)
    a, b, ty = infer.coerce_pair(a, b, e.pos)
    if is_float(ty.dtype):
        raise fail(e.rule, "bitwise operators need integer or boolean operands", e.pos)
    return Op(e.op, (a, b), e.pos, rule=e.rule, ty=ty)


@handler("mulhi")
def mulhi(infer: Infer, e: Op) -> Op:
    """`tl.umulhi(x, y)`: the high half of the double-width product, the operands read as unsigned (mulhii).
    Integer operands only, promoted to one type as Triton's binary operators promote them."""
    a, b = infer.expr(e.args[0]), infer.expr(e.args[1])
    infer.demand_int(a)
    infer.demand_int(b)
    a, b, ty = infer.coerce_pair(a, b, e.pos)
    if not is_int(ty.dtype):
        raise fail(e.rule, f"`tl.umulhi` needs integer operands (here {ty.dtype})", e.pos)
    return Op("mulhi", (a, b), e.pos, rule=e.rule, ty=ty)


@handler("invert")
def invert(infer: Infer, e: Op) -> Op:
    x = infer.expr(e.args[0])
    if is_float(x.ty.dtype):
        raise fail(e.rule, "`~` needs an integer or boolean operand", e.pos)
    return Op("invert", (x,), e.pos, rule=e.rule, ty=x.ty)


@handler("abs")
def absolute(infer: Infer, e: Op) -> Op:
    x = infer.expr(e.args[0])
    return Op("abs", (x,), e.pos, rule=e.rule, ty=x.ty)


@handler("fma")
def fma(infer: Infer, e: Op) -> Op:
    """A fused multiply-add written as one (the libdevice ports, rules/triton_libdevice.py: `_fma_rn_ftz`):
    a*b + c rounded once, with the call's flush_to_zero; float operands, of one type after coercion."""
    a, b, c = (infer.expr(x) for x in e.args)
    a, b, ty = infer.coerce_pair(a, b, e.pos)
    a, c, ty = infer.coerce_pair(a, c, e.pos)
    b = infer.to_shape(infer.to_dtype(b, ty.dtype), ty.shape)
    if not is_float(ty.dtype):
        raise fail(e.rule, "an fma takes float operands", e.pos)
    return Op("fma", (a, b, c), e.pos, _float_modes(e, ty) or (("ftz", False), ("rounding", "NearestEven")),
              e.rule, ty)


@handler("libdevice_rn")
def libdevice_rn(infer: Infer, e: Op) -> Op:
    """libdevice's round-to-nearest arithmetic (`mul_rn(a, b)`, add_rn, sub_rn, div_rn, fma_rn, fma: frontend
    `_libdevice_rn`): the operands promoted as Triton's extern calls promote them (as `a * b` would), then the op
    with nearest-even rounding and, on float32, flush_to_zero (libdevice's __CUDA_FTZ arm: mul.rn.ftz.f32; its
    float64 form flushes nothing). Triton refuses other dtypes when it compiles; an element type E that is float32
    in some entries restricts this entry to float32 (float64 is not among the entries' element types)."""
    args = [infer.expr(x) for x in e.args]
    a, b, ty = infer.coerce_pair(args[0], args[1], e.pos)
    if len(args) == 3:
        a, c, ty = infer.coerce_pair(a, args[2], e.pos)
        b = infer.to_shape(infer.to_dtype(b, ty.dtype), ty.shape)
        args = [a, b, c]
    else:
        args = [a, b]
    dt = ty.dtype
    if is_generic(dt):
        dts = infer.k.variant.dtypes if dt == "E" else infer.all_dtypes
        if len(dts) == 1 and dts[0] in ("f32", "f64"):
            dt = dts[0]
            args = [infer.to_dtype(x, dt) for x in args]
            ty = args[0].ty
        elif "f32" in dts:
            if dt != "E":
                raise UnifyElements("E", dt)
            raise RestrictDtypes(("f32",))
    if dt not in ("f32", "f64"):
        raise fail("CT101", f"`libdevice.{e.attr('name')}` of {'/'.join(dts) if is_generic(dt) else dt}: Triton "
                   "takes float32 and float64 here (it refuses other dtypes when it compiles); convert with "
                   "`.to(tl.float32)` first", e.pos)
    modes = (("ftz", dt == "f32"), ("rounding", "NearestEven"))
    return Op(e.attr("op"), tuple(args), e.pos, modes, e.rule, ty)


@handler("libdevice_f32")
def libdevice_f32(infer: Infer, e: Op) -> Expr:
    """The argument of a libdevice function of rules/triton_libdevice.py, which ports its float32 form only
    (`_float32_only`): x itself where it is float32; an element type E that is float32 only in some entries
    restricts this entry to float32 (RestrictDtypes: Triton refuses float16 / bfloat16 for these functions when
    it compiles, and float64's libdevice form is not ported, so no entry takes them); refused where E is never
    float32 here, or x is of another dtype."""
    x = infer.expr(e.args[0])
    dt = getattr(x.ty, "dtype", None)
    if dt == "f32":
        return x
    if dt is not None and is_generic(dt):
        dts = infer.k.variant.dtypes if dt == "E" else infer.all_dtypes
        if tuple(dts) == ("f32",):
            return infer.to_dtype(x, "f32")
        if "f32" in dts:
            if dt != "E":
                raise UnifyElements("E", dt)
            raise RestrictDtypes(("f32",))
        dt = "/".join(dts) or dt
    if dt == "f64":
        raise fail("CT101", f"`{e.attr('name')}` of float64 (libdevice's `{e.attr('nv_name')}`) is not ported: only "
                   "its float32 form is (rules/triton_libdevice.py); keep this kernel in Triton or compute in "
                   "float32", e.pos)
    raise fail("CT101", f"`{e.attr('name')}` of {dt}: Triton takes float32 and float64 here (it refuses other dtypes "
               "when it compiles: `ValueError: Expected dtype ['fp32', 'fp64']`); convert with `.to(tl.float32)` "
               "first", e.pos)


@handler("neg")
def neg(infer: Infer, e: Op) -> Op:
    x = infer.expr(e.args[0])
    return Op("neg", (x,), e.pos, rule=e.rule, ty=x.ty)


@handler("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "floor", "ceil", "sin", "cos", "tan", "sinh", "cosh")
def unary_float(infer: Infer, e: Op) -> Op:
    x = infer.expr(e.args[0])
    if not is_float(x.ty.dtype):
        x = infer.to_dtype(x, "f32")
    ftz = e.attr("flush_to_zero")
    attrs = (("ftz", bool(isinstance(ftz, Lit) and ftz.value)),)
    rounding = _rounding(e)
    if rounding is not None:
        # exp and tanh take FULL and APPROX (f32 only, cuTile Python checks); sqrt any IEEE mode
        allowed = ("Full", "Approx") if e.op in ("exp", "tanh") else ("NearestEven", "Zero", "NegativeInf",
                                                                      "PositiveInf", "Approx")
        if rounding not in allowed:
            raise fail(e.rule, f"`rounding_mode={rounding}` is not supported for `{e.op}`", e.pos)
        attrs += (("rounding", rounding),)
    return Op(e.op, (x,), e.pos, attrs, e.rule, x.ty)


@handler("pow", "atan2")
def binary_float(infer: Infer, e: Op) -> Op:
    """`pow(x, y)` (x to the float power y) and `atan2(x, y)` (the angle of (y, x): atan(x / y) in its quadrant),
    Tile IR's float ops. cuTile Python writes an integer exponent as fpowi (Tile IR 13.4), which cuTile Rust 0.5
    has no op for: refused there; and it computes neither of integer operands (Triton's libdevice neither)."""
    a, b = infer.expr(e.args[0]), infer.expr(e.args[1])
    if all(isinstance(x, Lit) and isinstance(x.value, (int, float)) and not isinstance(x.value, bool) for x in (a, b)):
        try:  # Python folds `2 ** 3` and `0.5 ** 2` on constants, as arith folds `2 * 3`
            v = a.value ** b.value if e.op == "pow" and abs(b.value) <= 1024 else \
                math.atan2(a.value, b.value) if e.op == "atan2" else None
        except (ArithmeticError, ValueError):
            v = None
        if isinstance(v, (int, float)):
            return infer.expr(Lit(v, e.pos))
    if infer.k.frontend != "triton":
        for x in (a, b):
            if isinstance(x.ty, TileTy) and is_int(x.ty.dtype) or (isinstance(x, Lit) and type(x.value) is int):
                what = "an integer exponent (cuTile Python's fpowi, which cuTile Rust 0.5 cannot write)" \
                    if e.op == "pow" and x is b else "an integer operand"
                raise fail(e.rule, f"`{e.op}` of {what}: give float operands (`2.0`, `.astype(ct.float32)`)", e.pos)
    a, b, ty = infer.coerce_pair(a, b, e.pos, float_result=True)
    if not is_float(ty.dtype):
        raise fail(e.rule, f"`{e.op}` of {ty.dtype} operands: float operands only", e.pos)
    return Op(e.op, (a, b), e.pos, rule=e.rule, ty=ty)


@handler("isnan")
def isnan(infer: Infer, e: Op) -> Op:
    x = infer.expr(e.args[0])
    return Op("isnan", (x,), e.pos, rule=e.rule, ty=TileTy("bool", x.ty.shape))


@handler("const_pow")
def const_pow(infer: Infer, e: Op) -> Expr:
    """Python's `**` in a Triton kernel, which Triton evaluates on constants when it compiles: of literals, folded
    here as Python computes it; of constexprs, Infer made it a derived constant before this is reached (an int to a
    small literal power, or a float power). A tile (or a runtime scalar) has no `**` in Triton: refused."""
    a, b = e.args
    if all(isinstance(x, Lit) and isinstance(x.value, (int, float)) and not isinstance(x.value, bool) for x in (a, b)):
        try:
            v = a.value ** b.value if not (type(b.value) is int and b.value > 4096) else None
        except (ArithmeticError, ValueError):
            v = None
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return infer.expr(Lit(v, e.pos))
    raise fail(e.rule or "CT100", "`**` of a value that is not a constant (a tile or a runtime scalar; or an int to "
               "an int constexpr's power, an int or a float by its sign): Triton evaluates `**` on constexprs only; for "
               "a tile use `tl.exp2(y * tl.log2(x))` or `libdevice.pow(x, y)`", e.pos)


@handler("const_sqrt")
def const_sqrt(infer: Infer, e: Op) -> Expr:
    """`math.sqrt(...)` in a Triton kernel (Python's math, evaluated by Triton when it compiles): of a literal,
    folded here; of constexprs, Infer.derived_float_name made it a derived constant before this is reached.
    Anything else (a tile, a runtime scalar) has no value at compile time: Triton refuses it too."""
    import math
    a = e.args[0]
    if isinstance(a, Lit) and isinstance(a.value, (int, float)) and not isinstance(a.value, bool) and a.value >= 0:
        return infer.expr(Lit(math.sqrt(a.value), e.pos))
    raise fail("CT101", "`math.sqrt(...)` of a value that is not a constexpr: Triton evaluates Python's math module "
               "on constants when it compiles; use `tl.sqrt` on a tile", e.pos)
