"""Module-level numeric constants a library computes with Python expressions:

    _PAGE_SHIFT = tl.constexpr(_PAGE_SIZE.value.bit_length() - 1)
    _SCALE = tl.constexpr(float(1 << 32))
    _BIG = tl.constexpr(2 ** 20)

The value is computed as Python computes it when the module is imported, by a small evaluator over literals and
the module's known constants (nothing is run: no eval). It knows the limits of a dtype (`torch.finfo(torch.float32).max`,
`np.iinfo(np.int8).min`: rules/triton_compat.toml),  Python's arithmetic, bit and comparison
operators on int/float/bool, the conditional expression, the builtins `int`, `float`, `bool`, `abs`, `min`,
`max`, `round`, `pow`, `int.bit_length()`, `tl.constexpr(x)` and its `.value` (of a name bound to a
`tl.constexpr(...)`, the only objects that have one), and Triton's `triton.next_power_of_2` / `triton.cdiv`.
Anything else (and anything Python would raise on) has no value here (None): the name stays unknown and a
kernel reading it gets the usual diagnostic at the use."""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Mapping

import libcst as cst

_MAX_SHIFT = 4096  # `1 << n` past this is no constant a kernel means; it would only cost memory
_MAX_POW_BITS = 4096

_BINARY: dict[type, Callable[[object, object], object]] = {
    cst.Add: operator.add, cst.Subtract: operator.sub, cst.Multiply: operator.mul, cst.Divide: operator.truediv,
    cst.FloorDivide: operator.floordiv, cst.Modulo: operator.mod, cst.BitAnd: operator.and_,
    cst.BitOr: operator.or_, cst.BitXor: operator.xor, cst.LeftShift: operator.lshift,
    cst.RightShift: operator.rshift, cst.Power: operator.pow,
}
_COMPARE = {cst.Equal: operator.eq, cst.NotEqual: operator.ne, cst.LessThan: operator.lt,
            cst.LessThanEqual: operator.le, cst.GreaterThan: operator.gt, cst.GreaterThanEqual: operator.ge}
_BUILTINS: dict[str, Callable] = {"int": int, "float": float, "bool": bool, "abs": abs, "min": min, "max": max,
                                  "round": round, "pow": pow}


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float))  # bool is an int, as in Python


def _next_power_of_2(n: int) -> int:
    # triton.next_power_of_2's bit smearing (0 for n <= 0): the same as verify/specs.py's
    return 0 if n <= 0 else 1 << (n - 1).bit_length()


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b  # triton.cdiv


_TRITON_FUNCS: dict[str, Callable] = {"triton.next_power_of_2": _next_power_of_2, "triton.cdiv": _cdiv}


def _too_big(op: type, a: object, b: object) -> bool:
    """An operation whose result Python would spend unbounded memory or time on."""
    if op is cst.LeftShift and isinstance(b, int):
        return b > _MAX_SHIFT or (isinstance(a, int) and a.bit_length() + b > _MAX_SHIFT)
    if op is cst.Power and isinstance(a, int) and isinstance(b, int) and b > 0:
        return max(a.bit_length(), 1) * b > _MAX_POW_BITS
    return False


def module_const_value(node: cst.BaseExpression, names: Mapping[str, object], wrapped: Callable[[str], bool],
                       dotted: Callable[[cst.BaseExpression], str | None], tl: str) -> object | None:
    """The int / float / bool Python computes for `node` at import, or None. `names` holds the module's known
    constants (their plain values), `wrapped(name)` says whether a name is bound to a `tl.constexpr(...)` object
    (whose `.value` is its value), `dotted` resolves a name through the module's imports, `tl` is the dotted
    name of triton.language."""
    def value(n: cst.BaseExpression) -> object | None:
        if isinstance(n, cst.Integer):
            return int(n.value.replace("_", ""), 0)
        if isinstance(n, cst.Float):
            return float(n.value.replace("_", ""))
        if isinstance(n, cst.Name):
            if n.value in ("True", "False"):
                return n.value == "True"
            v = names.get(n.value)
            return v if _is_number(v) else None
        if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Call):
            return type_limit(n.value, n.attr.value, dotted)  # `torch.finfo(torch.float32).max`
        if isinstance(n, cst.Attribute) and n.attr.value == "value" and isinstance(n.value, cst.Name):
            return value(n.value) if wrapped(n.value.value) else None  # a plain int has no `.value`
        if isinstance(n, cst.UnaryOperation):
            v = value(n.expression)
            if v is None:
                return None
            if isinstance(n.operator, cst.Minus):
                return -v
            if isinstance(n.operator, cst.Plus):
                return +v
            if isinstance(n.operator, cst.BitInvert):
                return ~v if isinstance(v, int) else None
            if isinstance(n.operator, cst.Not):
                return not v
            return None
        if isinstance(n, cst.BinaryOperation):
            a, b = value(n.left), value(n.right)
            fn = _BINARY.get(type(n.operator))
            if a is None or b is None or fn is None or _too_big(type(n.operator), a, b):
                return None
            return _apply(fn, a, b)
        if isinstance(n, cst.BooleanOperation):
            a = value(n.left)
            if a is None:
                return None
            if isinstance(n.operator, cst.And):
                return value(n.right) if a else a
            return a if a else value(n.right)
        if isinstance(n, cst.Comparison):
            left = value(n.left)
            for target in n.comparisons:
                right, test = value(target.comparator), _COMPARE.get(type(target.operator))
                if left is None or right is None or test is None:
                    return None
                if not test(left, right):
                    return False
                left = right
            return True
        if isinstance(n, cst.IfExp):
            test = value(n.test)
            return None if test is None else value(n.body if test else n.orelse)
        if isinstance(n, cst.Call):
            return call(n)
        return None

    def call(n: cst.Call) -> object | None:
        if any(a.star or a.keyword is not None for a in n.args):
            return None
        args = [value(a.value) for a in n.args]
        if None in args:
            return None
        func = n.func
        if isinstance(func, cst.Attribute) and func.attr.value == "bit_length" and not n.args:
            v = value(func.value)
            return v.bit_length() if isinstance(v, int) else None  # a float has no bit_length
        d = dotted(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if d == f"{tl}.constexpr" and len(args) == 1:
            return args[0]
        if d in _TRITON_FUNCS and all(isinstance(a, int) for a in args):
            return _apply(_TRITON_FUNCS[d], *args)
        if isinstance(func, cst.Name) and func.value in _BUILTINS and args and d in (func.value, f"builtins.{func.value}"):
            if func.value == "pow" and (len(args) != 2 or _too_big(cst.Power, *args)):
                return None
            return _apply(_BUILTINS[func.value], *args)
        return None

    found = value(node)
    return found if _is_number(found) else None


def _apply(fn: Callable, *args) -> object | None:
    """fn(*args) as Python computes it, None where Python raises (a zero division, an overflow, a bad type)."""
    try:
        v = fn(*args)
    except (ArithmeticError, TypeError, ValueError):
        return None
    return None if isinstance(v, complex) else v  # `(-8) ** 0.5` is complex in Python: no kernel constant


_INFO_HOMES = ("torch", "numpy")


@functools.lru_cache(maxsize=1)
def _type_limits() -> tuple[dict, dict, dict]:
    """rules/triton_compat.toml's [finfo], [iinfo] and [dtype_spellings]."""
    import tomllib

    from ..rules import RULES_DIR
    data = tomllib.loads((RULES_DIR / "triton_compat.toml").read_text())
    return data["finfo"], data["iinfo"], data["dtype_spellings"]


def type_limit(call: cst.Call, attr: str, dotted: Callable[[cst.BaseExpression], str | None]) -> object | None:
    """`torch.finfo(torch.float32).max` (min, eps, tiny, smallest_normal, bits) and `torch.iinfo(torch.int8).min`
    (max, bits), also numpy's: the value torch / numpy give; None for anything else."""
    func = dotted(call.func) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
    if func is None or "." not in func or len(call.args) != 1 or call.args[0].keyword is not None:
        return None
    home, kind = func.rsplit(".", 1)
    arg = call.args[0].value
    dtype = dotted(arg) if isinstance(arg, (cst.Name, cst.Attribute)) else None
    if home not in _INFO_HOMES or kind not in ("finfo", "iinfo") or not dtype or not dtype.startswith(home + "."):
        return None
    finfo, iinfo, spellings = _type_limits()
    name = dtype[len(home) + 1:]
    name = spellings.get(name, name)
    if kind == "finfo" and name in finfo:
        f = finfo[name]
        limits = {"max": float.fromhex(f["max"]), "min": -float.fromhex(f["max"]), "eps": float.fromhex(f["eps"]),
                  "tiny": float.fromhex(f["tiny"]), "smallest_normal": float.fromhex(f["tiny"]),
                  "bits": {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}[name]}
        return limits.get(attr)
    if kind == "iinfo" and name in iinfo:
        bits, signed = iinfo[name]["bits"], iinfo[name]["signed"]
        lo, hi = (-2 ** (bits - 1), 2 ** (bits - 1) - 1) if signed else (0, 2 ** bits - 1)
        return {"min": lo, "max": hi, "bits": bits}.get(attr)
    return None
