"""Element-wise ops: constants, integer and float arithmetic, math functions, comparisons, select, conversions.

Floats are computed in their own type, one rounding per op (numpy's f16/f32 ops round to nearest-even, as
IEEE and the GPU do); `flush_to_zero` flushes f32 denormal inputs and results to zero. Integers wrap.
Attributes the interpreter does not model (a rounding mode other than nearest-even on an exact op, an
unknown predicate) are errors naming the op.
"""

from __future__ import annotations

import re
import struct

import numpy as np

from ..normalize import bits_to_float
from .syntax import head, op, refs, result_types, unknown, words, operand_types
from .values import InterpretError, bits, is_float, np_dtype, round_tf32

_SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _args(env, op_):
    return [env[r] for r in refs(head(op_))]


def _arr(x):
    return np.asarray(x)


# ------------------------------------------------------------------------------------------ constants

_CONST = re.compile(r"^<(\w+): (.+)>$")


@op("constant")
def _constant(m, op_, env):
    return [_constant_value(op_)]


def _constant_value(op_) -> np.ndarray:
    """A constant's tile, made once per op text (read-only: no op writes into its operands)."""
    key = op_.text
    found = _CONSTANTS.get(key)
    if found is None:
        found = _make_constant(op_)
        found.setflags(write=False)
        _CONSTANTS[key] = found
    return found


_CONSTANTS: dict[str, np.ndarray] = {}


def _make_constant(op_) -> np.ndarray:
    h = head(op_)
    c = _CONST.match(h)
    ty = result_types(op_)[0]
    if not c:
        raise unknown(op_, "has a constant the interpreter does not read")
    elem, raw = c.group(1), c.group(2).strip()
    dt = np_dtype(ty.elem)
    if raw.startswith("["):
        raise unknown(op_, "has a dense constant")
    if is_float(elem):
        if raw.lower().startswith("0x"):
            b = int(raw, 16)
            if elem in ("f32", "tf32"):
                value = struct.unpack("<f", struct.pack("<I", b))[0]
            elif elem == "f64":
                value = struct.unpack("<d", struct.pack("<Q", b))[0]
            elif elem in ("f16", "bf16"):
                value = bits_to_float(b, elem)
            else:
                value = np.array(b, np.uint8).view(dt)
        else:
            value = float(raw)
        with np.errstate(over="ignore"):
            return np.full(ty.shape, value, dtype=dt)
    if elem == "i1":
        return np.full(ty.shape, raw in ("1", "true"), dtype=np.bool_)
    v = int(raw, 0)
    width = bits(elem)
    v &= (1 << width) - 1
    if v >> (width - 1):
        v -= 1 << width
    return np.full(ty.shape, v, dtype=dt)


# ------------------------------------------------------------------------------------------ helpers

def _ftz(x, op_):
    if "flush_to_zero" in op_.text and x.dtype == np.float32:
        tiny = np.finfo(np.float32).tiny
        # a zero of x's sign (PTX's .ftz: "sign-preserving zero"; np.sign of a zero is +0, which lost -0's sign)
        return np.where(np.abs(x) < tiny, np.copysign(np.float32(0), x), x).astype(np.float32)
    return x


def _rounding(op_) -> str:
    m = re.search(r"rounding<(\w+)>", op_.text)
    return m.group(1) if m else "nearest_even"


def _as(x, signed: bool):
    x = _arr(x)
    if x.dtype == np.bool_:
        return x
    w = x.dtype.itemsize * 8
    return x.astype(_SIGNED[w] if signed else _UNSIGNED[w])  # same width: the bits are kept


def _back(x, dtype):
    x = _arr(x)
    return x.astype(dtype) if x.dtype != dtype else x


def _float_op(fn, exact=True):
    def impl(m, op_, env):
        xs = [_ftz(_arr(a), op_) for a in _args(env, op_)]
        if exact and _rounding(op_) not in ("nearest_even", "approx", "full"):
            raise unknown(op_, f"has rounding {_rounding(op_)} (not modelled)")
        with np.errstate(all="ignore"):
            r = fn(*xs)
        dt = np_dtype(result_types(op_)[0].elem)
        return [_ftz(_arr(r).astype(dt), op_)]
    return impl


def _int_op(fn, signed_default=True):
    def impl(m, op_, env):
        w = words(op_)
        signed = "unsigned" not in w if signed_default else "signed" in w
        xs = [_as(a, signed) for a in _args(env, op_)]
        dt = np_dtype(result_types(op_)[0].elem)
        with np.errstate(all="ignore"):
            r = fn(*xs, op_)
        return [_arr(r).astype(dt)]
    return impl


# ------------------------------------------------------------------------------------------ float

for _name, _fn in {"mulf": np.multiply, "divf": np.divide,
                   "negf": np.negative, "absf": np.abs, "remf": np.fmod}.items():
    op(_name)(_float_op(_fn))


@op("addf", "subf")
def _add_sub(m, op_, env):
    """Nearest-even (numpy's own rounding in the type), or toward zero for f32 (`add_rz`: libdevice's
    add.rz.ftz, rules/triton_libdevice.py)."""
    a, b = (_ftz(_arr(x), op_) for x in _args(env, op_))
    dt = np_dtype(result_types(op_)[0].elem)
    mode = _rounding(op_)
    if mode == "zero" and a.dtype == np.float32 and b.dtype == np.float32:
        return [_ftz(add_rz(a, b if op_.name == "addf" else -b), op_)]
    if mode not in ("nearest_even", "approx", "full"):
        raise unknown(op_, f"has rounding {mode} (not modelled)")
    with np.errstate(all="ignore"):
        r = np.add(a, b) if op_.name == "addf" else np.subtract(a, b)
    return [_ftz(_arr(r).astype(dt), op_)]


def add_rz(a, b):
    """a + b (float32) rounded toward zero. The f64 sum s and its exact error (TwoSum: a + b == s + err) give the
    exact sum's place against r = the nearest float32 of s: r - s is exact (r and s are within a float32 ulp), and
    where r != s it outweighs err (at least an f64 ulp of s against at most half of one). Where r is farther from
    zero than the exact sum, the float32 one ulp nearer zero is the truncation (r is within half an ulp)."""
    with np.errstate(all="ignore"):
        a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
        s = a64 + b64
        bb = s - a64
        err = (a64 - (s - bb)) + (b64 - bb)
        r = s.astype(np.float32)
        above = np.where(r.astype(np.float64) != s, r.astype(np.float64) - s, -err)  # sign of r - (a + b)
        over = np.isfinite(s) & (r != 0) & (np.sign(above) == np.sign(r))
        return np.where(over, np.nextafter(r, np.float32(0)), r).astype(np.float32)


@op("maxf", "minf")
def _maxmin_f(m, op_, env):
    a, b = (_ftz(_arr(x), op_) for x in _args(env, op_))
    nan = "propagate_nan" in op_.text
    fn = (np.maximum if nan else np.fmax) if op_.name == "maxf" else (np.minimum if nan else np.fmin)
    with np.errstate(all="ignore"):
        return [_ftz(fn(a, b).astype(a.dtype), op_)]


@op("fma")
def _fma(m, op_, env):
    a, b, c = (_ftz(_arr(x), op_) for x in _args(env, op_))
    dt = np_dtype(result_types(op_)[0].elem)
    if _rounding(op_) not in ("nearest_even", "approx", "full"):
        raise unknown(op_, f"has rounding {_rounding(op_)} (not modelled)")
    return [_ftz(fma_rn(a, b, c, dt), op_)]


def fma_rn(a, b, c, dt):
    """a*b + c rounded once to `dt` (f32, f16, bf16 operands), to nearest-even. The product of two such floats
    is exact in f64 (at most 2*24 significant bits); the sum is rounded to f64 *to odd* (the nearest-even sum
    s, moved one ulp toward the exact sum where that was inexact and s's last bit is even: Knuth's TwoSum gives
    the exact error), and a value rounded to odd with 53 bits rounds to a 24-bit (or narrower) format exactly as
    the exact value does (Boldo & Melquiond, "Emulation of FMA and correctly-rounded sums", 2008); a plain f64
    sum would round twice, which differs where the f64 sum falls on a midpoint of `dt`."""
    with np.errstate(all="ignore"):
        p = np.asarray(a, np.float64) * np.asarray(b, np.float64)
        c = np.asarray(c, np.float64)
        s = p + c
        bb = s - p
        err = (p - (s - bb)) + (c - bb)  # exact: p + c == s + err (no overflow: |p| <= 2^256)
        even = (s.view(np.int64) & 1) == 0
        fix = np.isfinite(s) & np.isfinite(err) & (err != 0) & even
        s = np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
        return np.asarray(s).astype(dt)


def _math(fn):
    def impl(m, op_, env):
        xs = [_ftz(_arr(a), op_) for a in _args(env, op_)]
        dt = np_dtype(result_types(op_)[0].elem)
        with np.errstate(all="ignore"):  # computed in f64, rounded once to the result type
            r = fn(*[x.astype(np.float64) for x in xs])
        return [_ftz(_arr(r).astype(dt), op_)]
    return impl


_MATH = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
         "rsqrt": lambda x: 1.0 / np.sqrt(x), "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "tan": np.tan,
         "sinh": np.sinh, "cosh": np.cosh, "pow": np.power, "fpowf": np.power, "ceil": np.ceil, "floor": np.floor,
         "round": np.rint, "atan2": np.arctan2, "erf": None}
for _name, _fn in _MATH.items():
    if _fn is not None:
        op(_name)(_math(_fn))


# ------------------------------------------------------------------------------------------ integer

op("addi")(_int_op(lambda a, b, o: a + b))
op("subi")(_int_op(lambda a, b, o: a - b))
op("muli")(_int_op(lambda a, b, o: a * b))
op("negi")(_int_op(lambda a, o: -a))
op("absi")(_int_op(lambda a, o: np.abs(a)))
op("andi")(_int_op(lambda a, b, o: a & b))
op("ori")(_int_op(lambda a, b, o: a | b))
op("xori")(_int_op(lambda a, b, o: a ^ b))


@op("maxi", "mini")
def _maxmin_i(m, op_, env):
    signed = "unsigned" not in words(op_)
    a, b = (_as(x, signed) for x in _args(env, op_))
    r = np.maximum(a, b) if op_.name == "maxi" else np.minimum(a, b)
    return [_arr(r).astype(np_dtype(result_types(op_)[0].elem))]


def _div_exact(a, b, signed, mode):
    """Integer division with a rounding mode; division by zero gives all ones (PTX), never an exception."""
    zero = b == 0
    bb = np.where(zero, 1, b)
    if not signed or mode == "negative_inf":
        q = a // bb
    else:
        q = _tdiv(a, bb)
        if mode == "positive_inf":
            q = q + ((a % bb != 0) & ((a < 0) == (bb < 0))).astype(a.dtype)
    if mode == "positive_inf" and not signed:
        q = q + (a % bb != 0).astype(a.dtype)
    return np.where(zero, np.array(-1).astype(a.dtype), q)


def _tdiv(a, b):
    """Truncating signed division in the integer type (no float rounding for i64)."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q).astype(a.dtype)


@op("divi")
def _divi(m, op_, env):
    signed = "unsigned" not in words(op_)
    mode = _rounding(op_) if "rounding<" in op_.text else "zero"
    if mode not in ("zero", "negative_inf", "positive_inf"):
        raise unknown(op_, f"has rounding {mode}")
    a, b = (_as(x, signed) for x in _args(env, op_))
    with np.errstate(all="ignore"):
        q = _div_exact(a, b, signed, mode)
    return [_arr(q).astype(a.dtype).astype(np_dtype(result_types(op_)[0].elem))]


@op("remi")
def _remi(m, op_, env):
    signed = "unsigned" not in words(op_)
    a, b = (_as(x, signed) for x in _args(env, op_))
    with np.errstate(all="ignore"):
        bb = np.where(b == 0, 1, b)
        r = a - _tdiv(a, bb) * bb if signed else a % bb  # the sign of the dividend, as C
        r = np.where(b == 0, a, r)
    return [_arr(r).astype(a.dtype).astype(np_dtype(result_types(op_)[0].elem))]


@op("shli", "shri")
def _shift(m, op_, env):
    signed = "unsigned" not in words(op_)
    a, b = _args(env, op_)
    a = _as(a, signed if op_.name == "shri" else False)
    width = a.dtype.itemsize * 8
    s = _arr(b).astype(np.int64)
    big = (s < 0) | (s >= width)
    sc = np.where(big, 0, s).astype(a.dtype)
    with np.errstate(all="ignore"):
        if op_.name == "shli":
            r = np.where(big, 0, a << sc)
        else:
            fill = np.where(a < 0, -1, 0) if signed else 0
            r = np.where(big, fill, a >> sc)
    return [_arr(r).astype(a.dtype).astype(np_dtype(result_types(op_)[0].elem))]


@op("mulhii")
def _mulhi(m, op_, env):
    """The high half of the double-width product of the operands read as UNSIGNED integers: Tile IR's mulhii
    has no signedness attribute, and tileiras (13.x) lowers it to `nv_tileaa.mulhiui`, then `__nv_umulhi` /
    `llvm.nvvm.mulhi.ui` (the names in the binary), PTX `mul.hi.u32` -- Triton's `tl.umulhi`."""
    a, b = (_as(x, False) for x in _args(env, op_))
    width = a.dtype.itemsize * 8
    a, b = np.broadcast_arrays(a, b)
    if width > 32:
        hi = [(int(x) * int(y)) >> width for x, y in zip(a.reshape(-1), b.reshape(-1))]
        r = np.array(hi, dtype=np.uint64).reshape(a.shape)
    else:
        r = (a.astype(np.uint64) * b.astype(np.uint64)) >> np.uint64(width)  # exact: the product fits 64 bits
    return [_arr(r).astype(np_dtype(result_types(op_)[0].elem))]


# ------------------------------------------------------------------------------------------ comparisons

_CMP = {"equal": np.equal, "not_equal": np.not_equal, "less_than": np.less, "less_than_or_equal": np.less_equal,
        "greater_than": np.greater, "greater_than_or_equal": np.greater_equal}


@op("cmpi")
def _cmpi(m, op_, env):
    w = words(op_)
    pred = next((x for x in w if x in _CMP), None)
    if pred is None:
        raise unknown(op_, "has a predicate the interpreter does not know")
    signed = "unsigned" not in w
    a, b = (_as(x, signed) for x in _args(env, op_))
    return [_arr(_CMP[pred](a, b))]


@op("cmpf")
def _cmpf(m, op_, env):
    w = words(op_)
    pred = next((x for x in w if x in _CMP), None)
    if pred is None or not ({"ordered", "unordered"} & set(w)):
        raise unknown(op_, "has a predicate the interpreter does not know")
    a, b = (_arr(x) for x in _args(env, op_))
    with np.errstate(all="ignore"):
        r = _CMP[pred](a, b)
    if "unordered" in w:
        r = r | np.isnan(a) | np.isnan(b)
    elif pred == "not_equal":
        r = r & ~np.isnan(a) & ~np.isnan(b)  # ordered: false where either is NaN
    return [_arr(r)]


@op("select")
def _select(m, op_, env):
    c, a, b = _args(env, op_)
    return [np.where(_arr(c), _arr(a), _arr(b)).astype(_arr(a).dtype)]


# ------------------------------------------------------------------------------------------ conversions

@op("ftof")
def _ftof(m, op_, env):
    (x,) = _args(env, op_)
    x = _ftz(_arr(x), op_)
    src = operand_types(op_)[0].elem
    dst = result_types(op_)[0].elem
    mode = _rounding(op_)
    if mode not in ("nearest_even",):
        raise unknown(op_, f"has rounding {mode} (not modelled)")
    with np.errstate(all="ignore"):
        if dst == "tf32":
            return [round_tf32(x.astype(np.float32))]
        if src == "tf32":
            return [x.astype(np.float32).astype(np_dtype(dst))]
        r = x.astype(np.float64).astype(np_dtype(dst)) if dst in ("f8E4M3FN", "f8E5M2") else x.astype(np_dtype(dst))
    return [_ftz(r, op_)]


@op("itof")
def _itof(m, op_, env):
    (x,) = _args(env, op_)
    signed = "unsigned" not in words(op_)
    mode = _rounding(op_)
    if mode != "nearest_even":
        raise unknown(op_, f"has rounding {mode} (not modelled)")
    x = _as(x, signed)
    dst = np_dtype(result_types(op_)[0].elem)
    # integers to f64 are exact up to 2^53; i64 beyond that rounds twice (rare in kernels' index math)
    return [x.astype(np.float64).astype(dst) if x.dtype.itemsize < 8 else x.astype(dst)]


@op("ftoi")
def _ftoi(m, op_, env):
    (x,) = _args(env, op_)
    signed = "unsigned" not in words(op_)
    mode = _rounding(op_) if "rounding<" in op_.text else "zero"
    fn = {"zero": np.trunc, "nearest_even": np.rint, "negative_inf": np.floor, "positive_inf": np.ceil}.get(mode)
    if fn is None:
        raise unknown(op_, f"has rounding {mode}")
    ty = result_types(op_)[0].elem
    w = bits(ty)
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    with np.errstate(all="ignore"):
        v = fn(_arr(x).astype(np.float64))
        v = np.where(np.isnan(v), 0, np.clip(v, lo, hi))  # saturating, NaN -> 0 (cvt.rzi)
    return [_sat_int(v, _SIGNED[w] if signed else _UNSIGNED[w])]


def _sat_int(v, t):
    """Float values (already whole) to the integer type t, saturating (2^63 is not an i64), as signed storage."""
    info = np.iinfo(t)
    v = np.asarray(v, np.float64)
    out = np.zeros(v.shape, t)
    mid = (v > float(info.min)) & (v < float(info.max))
    out[mid] = v[mid].astype(t)
    out[v >= float(info.max)] = info.max
    out[v <= float(info.min)] = info.min
    return out.astype(_SIGNED[np.dtype(t).itemsize * 8])


@op("exti")
def _exti(m, op_, env):
    (x,) = _args(env, op_)
    w = words(op_)
    signed = "signed" in w and "unsigned" not in w
    if not ({"signed", "unsigned"} & set(w)):
        raise unknown(op_, "has no signedness")
    x = _arr(x)
    dst = np_dtype(result_types(op_)[0].elem)
    if x.dtype == np.bool_:
        return [np.where(x, -1 if signed else 1, 0).astype(dst)]
    return [_as(x, signed).astype(np.int64 if signed else np.uint64).astype(dst)]


@op("trunci")
def _trunci(m, op_, env):
    (x,) = _args(env, op_)
    dst = result_types(op_)[0].elem
    x = _arr(x)
    if dst == "i1":
        return [(x & 1).astype(np.bool_)]
    return [x.astype(np_dtype(dst))]  # numpy's integer narrowing wraps (keeps the low bits)


@op("bitcast")
def _bitcast(m, op_, env):
    (x,) = _args(env, op_)
    dst = result_types(op_)[0]
    if dst.pointee is not None or operand_types(op_)[0].pointee is not None:
        return [_arr(x).astype(np.int64)]
    return [np.ascontiguousarray(_arr(x)).view(np_dtype(dst.elem)).reshape(dst.shape)]


@op("int_to_ptr", "ptr_to_int", "ptr_to_ptr")
def _ptr_cast(m, op_, env):
    """Pointers are byte addresses: ptr_to_ptr keeps the address (an offset then counts the new pointee's
    size, see `offset`); int_to_ptr takes an address loaded from memory (a table the host filled with the
    arrays' addresses), which the interpreter can read only where it falls in one of its arrays: any other
    lane is made a foreign address, refused (not modelled) if it is ever accessed."""
    (x,) = _args(env, op_)
    dst = result_types(op_)[0]
    v = _arr(x).astype(np.int64)
    if op_.name == "int_to_ptr":
        v = m.memory.foreign(v)
    return [v if dst.pointee is not None else v.astype(np_dtype(dst.elem))]


@op("assume")
def _assume(m, op_, env):
    return [env[refs(head(op_))[-1]]]


@op("make_token", "join_tokens")
def _token(m, op_, env):
    return [None]
