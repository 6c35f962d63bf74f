"""The operator a combining function of `tl.reduce` / `tl.associative_scan` computes.

A combining function is ported only as the operator it is (`a * b`: a product), never as its text: the reduce
and scan ops need the operator's identity, and cuTile Rust 0.5.0's closure forms write identity 0 whatever
identity they are given (cutile-compiler's compile_reduce_op / compile_scan_op), so the passes choose a form
whose identity is exact for each operator (passes/ops/reductions.py). A function whose operator is not one
of these is refused: its identity is not known, and a guessed one would change the result.
"""

from __future__ import annotations

import math
from typing import Callable

import libcst as cst

TL = "triton.language"

# `a OP b` (either order: every one of these commutes)
BINARY = {cst.Add: "add", cst.Multiply: "mul", cst.BitAnd: "and", cst.BitOr: "or", cst.BitXor: "xor"}
# `a and b` / `a or b`: Triton's logical_and / logical_or (int1 results: of int1 tiles only, where they are & and |)
BOOLEAN = {cst.And: "land", cst.Or: "lor"}
CALLS = {f"{TL}.maximum": "max", f"{TL}.minimum": "min", "max": "max", "min": "min", "builtins.max": "max",
         "builtins.min": "min"}
# `tl.where(a CMP b, a, b)`: the first operand kept where CMP holds (max for > and >=, min for < and <=)
KEEPS_FIRST = {cst.GreaterThan: "max", cst.GreaterThanEqual: "max", cst.LessThan: "min", cst.LessThanEqual: "min"}


def combine_operator(fn: cst.FunctionDef, dotted: Callable[[cst.BaseExpression], str | None]) -> str:
    """The operator (add, mul, and, or, xor, max, min) `fn(a, b)` computes; raises ValueError saying why not.
    `dotted` names a called function as its module sees it (`tl.maximum` -> triton.language.maximum)."""
    params = fn.params
    if len(params.params) != 2 or params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.kwonly_params \
            or params.star_kwarg is not None or params.posonly_params:
        raise ValueError("it must take exactly two operands (a tuple of tiles, a multi-operand reduction, is not "
                         "ported)")
    a, b = (p.name.value for p in params.params)
    body = [st for st in _statements(fn.body) if not _docstring(st)]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1 \
            or not isinstance(body[0].body[0], cst.Return) or body[0].body[0].value is None:
        raise ValueError("its body must be one `return` of an expression of its two operands")
    value = _unparen(body[0].body[0].value)
    if isinstance(value, cst.Tuple):
        raise ValueError("it returns a tuple (a multi-operand reduction), which is not ported")
    found = _operator(value, a, b, dotted)
    if found is None:
        raise ValueError(f"it computes `{cst.Module([]).code_for_node(value)}`, whose identity is not known (the "
                         "port takes `a + b`, `a * b`, `a & b`, `a | b`, `a ^ b`, `a and b`, `a or b`, "
                         "`tl.maximum(a, b)`, `tl.minimum(a, b)`, `tl.where(a > b, a, b)` and `tl.where(a < b, a, b)`)")
    return found


def _operator(v: cst.BaseExpression, a: str, b: str, dotted) -> str | None:
    if isinstance(v, cst.BinaryOperation) and type(v.operator) in BINARY and _pair(v.left, v.right, a, b):
        return BINARY[type(v.operator)]
    if isinstance(v, cst.BooleanOperation) and _pair(v.left, v.right, a, b):
        return BOOLEAN[type(v.operator)]
    if isinstance(v, cst.Call) and len(v.args) == 2 and all(x.keyword is None and not x.star for x in v.args) \
            and dotted(v.func) in CALLS and _pair(v.args[0].value, v.args[1].value, a, b):
        return CALLS[dotted(v.func)]
    if isinstance(v, cst.Call) and dotted(v.func) == f"{TL}.where" and len(v.args) == 3 \
            and all(x.keyword is None and not x.star for x in v.args):
        test, first, second = (_unparen(x.value) for x in v.args)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
                and type(test.comparisons[0].operator) in KEEPS_FIRST:
            left, right = _unparen(test.left), _unparen(test.comparisons[0].comparator)
            # where(l CMP r, l, r): l where CMP holds; where(l CMP r, r, l): the other one
            if _pair(left, right, a, b) and _pair(first, second, a, b) and _name(left) == _name(first):
                return KEEPS_FIRST[type(test.comparisons[0].operator)]
            if _pair(left, right, a, b) and _pair(first, second, a, b) and _name(left) == _name(second):
                return {"max": "min", "min": "max"}[KEEPS_FIRST[type(test.comparisons[0].operator)]]
    return None


def _pair(x, y, a: str, b: str) -> bool:
    return {_name(x), _name(y)} == {a, b}


def _name(x) -> str | None:
    x = _unparen(x)
    return x.value if isinstance(x, cst.Name) else None


def _unparen(x):
    return x.with_changes(lpar=[], rpar=[]) if isinstance(x, cst.BaseExpression) and getattr(x, "lpar", None) else x


def _statements(body) -> list:
    if isinstance(body, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=list(body.body))]
    return list(body.body)


def _docstring(st) -> bool:
    return isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Expr) \
        and isinstance(st.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


# ------------------------------------------------------------------ a (value, index) pair's selection
# `tl.reduce((v, i), axis, f)` where f(av, ai, bv, bi) keeps one of the two pairs whole: an argmax / argmin. Ported
# where f is exactly a selection by a total preorder (the larger value, or the smaller; NaN above or below every
# number, all NaN tied; ties to the smaller index, or the larger), which no reduction tree can change: two
# reductions give it (the best value, then the first index holding it). f is read by evaluating it, in the small
# language below, on every case of the order relations it can see (its operands compared with each other only),
# so agreeing on them is agreeing everywhere.
_CMP = {cst.Equal: lambda x, y: x == y, cst.NotEqual: lambda x, y: x != y, cst.LessThan: lambda x, y: x < y,
        cst.GreaterThan: lambda x, y: x > y, cst.LessThanEqual: lambda x, y: x <= y,
        cst.GreaterThanEqual: lambda x, y: x >= y}
_LOGIC = {cst.BitAnd: lambda x, y: x and y, cst.BitOr: lambda x, y: x or y, cst.BitXor: lambda x, y: x != y}
_VALUES = [(1.0, 2.0), (2.0, 1.0), (1.0, 1.0), (math.nan, 1.0), (1.0, math.nan), (math.nan, math.nan)]
_INDICES = [(0, 1), (1, 0)]


class _Tagged:
    """An operand of f: its number and which of the four it is (`v` or `i`, side `a` or `b`)."""
    def __init__(self, kind: str, side: str, number: float):
        self.kind, self.side, self.number = kind, side, number


def pair_selection(fn: cst.FunctionDef, dotted: Callable[[cst.BaseExpression], str | None]) -> tuple[str, str, str]:
    """(direction "max" / "min", NaN "wins" / "loses" / "any" (f is such a selection only where no NaN is met), tie
    "first" / "last") of a combining function of (value, index) pairs; raises ValueError saying why not."""
    params = fn.params
    if len(params.params) != 4 or params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.kwonly_params \
            or params.star_kwarg is not None or params.posonly_params:
        raise ValueError("it must take two (value, index) pairs: four operands")
    names = [p.name.value for p in params.params]
    body = [st for st in _statements(fn.body) if not _docstring(st)]
    runs = {}
    for vals in _VALUES:
        for idx in _INDICES:
            env = {names[0]: _Tagged("v", "a", vals[0]), names[1]: _Tagged("i", "a", idx[0]),
                   names[2]: _Tagged("v", "b", vals[1]), names[3]: _Tagged("i", "b", idx[1])}
            runs[(vals, idx)] = _run(body, env, dotted)
    for direction in ("max", "min"):
        for tie in ("first", "last"):
            for nan in ("wins", "loses", "any"):
                if all(side == _reference(direction, nan, tie, vals, idx) for (vals, idx), side in runs.items()
                       if nan != "any" or not any(map(math.isnan, vals))):
                    return direction, nan, tie
    raise ValueError("it is not a selection of the larger (or smaller) value with ties to one index, NaN above or "
                     "below every number (an argmax / argmin), which two reductions give exactly")


def _reference(direction: str, nan: str, tie: str, vals, idx) -> str:
    a, b = vals
    if math.isnan(a) or math.isnan(b):
        if math.isnan(a) and math.isnan(b):
            better = None
        else:
            better = "a" if math.isnan(a) == (nan == "wins") else "b"
    else:
        better = None if a == b else "a" if (a > b) == (direction == "max") else "b"
    if better is None:
        better = "a" if (idx[0] < idx[1]) == (tie == "first") else "b"
    return better


def _run(body: list, env: dict, dotted) -> str:
    """The side (a or b) f's result keeps, on these operands."""
    env = dict(env)
    for st in body:
        if not (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1):
            raise ValueError("its body must be assignments and one `return` of the pair")
        s = st.body[0]
        if isinstance(s, cst.Assign) and len(s.targets) == 1:
            target, value = s.targets[0].target, s.value
            if isinstance(target, cst.Name):
                env[target.value] = _eval(value, env, dotted)
                continue
            if isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple) \
                    and len(target.elements) == len(value.elements) \
                    and all(isinstance(t.value, cst.Name) for t in target.elements):
                got = [_eval(v.value, env, dotted) for v in value.elements]
                env.update({t.value.value: g for t, g in zip(target.elements, got)})
                continue
        if isinstance(s, cst.Return) and isinstance(s.value, cst.Tuple) and len(s.value.elements) == 2:
            v, i = (_eval(e.value, env, dotted) for e in s.value.elements)
            if not (isinstance(v, _Tagged) and isinstance(i, _Tagged) and v.kind == "v" and i.kind == "i"):
                raise ValueError("it must return one of the value operands and one of the index operands")
            if v.side != i.side:
                raise ValueError("it returns the value of one pair with the index of the other")
            return v.side
        raise ValueError(f"`{cst.Module([]).code_for_node(s)}` is not an assignment or the pair's `return`")
    raise ValueError("it has no `return` of the pair")


def _eval(e: cst.BaseExpression, env: dict, dotted):
    e = _unparen(e)
    if isinstance(e, cst.Name) and e.value in env:
        return env[e.value]
    if isinstance(e, cst.Comparison) and len(e.comparisons) == 1 and type(e.comparisons[0].operator) in _CMP:
        x, y = _eval(e.left, env, dotted), _eval(e.comparisons[0].comparator, env, dotted)
        if isinstance(x, bool) and isinstance(y, bool):
            return _CMP[type(e.comparisons[0].operator)](x, y)
        if isinstance(x, _Tagged) and isinstance(y, _Tagged) and x.kind == y.kind:
            return _CMP[type(e.comparisons[0].operator)](x.number, y.number)
        raise ValueError("it compares a value with an index, or with something else than an operand")
    if isinstance(e, cst.BinaryOperation) and type(e.operator) in _LOGIC:
        x, y = _eval(e.left, env, dotted), _eval(e.right, env, dotted)
        if isinstance(x, bool) and isinstance(y, bool):
            return _LOGIC[type(e.operator)](x, y)
    if isinstance(e, cst.BooleanOperation):
        x, y = _eval(e.left, env, dotted), _eval(e.right, env, dotted)
        if isinstance(x, bool) and isinstance(y, bool):
            return (x and y) if isinstance(e.operator, cst.And) else (x or y)
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, (cst.BitInvert, cst.Not)):
        x = _eval(e.expression, env, dotted)
        if isinstance(x, bool):
            return not x
    if isinstance(e, cst.Call) and dotted(e.func) == f"{TL}.where" and len(e.args) == 3 \
            and all(a.keyword is None and not a.star for a in e.args):
        c, x, y = (_eval(a.value, env, dotted) for a in e.args)
        if isinstance(c, bool):
            return x if c else y
    raise ValueError(f"`{cst.Module([]).code_for_node(e)}` is outside what an argmax combine is read in (its "
                     "operands, comparisons of two of them, &, |, ^, ~, and / or / not, tl.where)")
