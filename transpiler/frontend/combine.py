"""The operator a combining function of `tl.reduce` / `tl.associative_scan` computes.

A combining function is ported only as the operator it is (`a * b`: a product), never as its text: the reduce
and scan ops need the operator's identity, and cuTile Rust 0.5.0's closure forms write identity 0 whatever
identity they are given (cutile-compiler's compile_reduce_op / compile_scan_op), so the passes choose a form
whose identity is exact for each operator (passes/ops/reductions.py). A function whose operator is not one
of these is refused: its identity is not known, and a guessed one would change the result.
"""

from __future__ import annotations

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
