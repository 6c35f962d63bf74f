"""Helpers that return from more than one place, rewritten to one final `return` before they are inlined.

    def pick(x, FLAG: tl.constexpr):            def pick(x, FLAG: tl.constexpr):
        if FLAG:                                    if FLAG:
            return x * 2              ->                _ret0 = x * 2
        return x + 1                                else:
                                                        _ret0 = x + 1
                                                    return _ret0

An `if` whose arm returns takes the statements after it into each arm that falls through, so every path ends
by assigning the result names, and the helper ends with one `return` of them. A test the inliner decides now
(`Y is None` for a `None` default) keeps only its taken arm, so paths may return tuples of different lengths
there (`return a, b` for one call, `return a, b, c` for another). A `return` inside a loop stays unsupported."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from .blocks import block_statements


class ReturnShapeError(Exception):
    """The helper's returns cannot become one result (a path without a value, a loop, tuples of other lengths)."""


# the statements after an `if` go into each arm that falls through: nested arms that fall through multiply
# them, so the rewrite stops past this many statements instead of growing exponentially
MAX_REWRITTEN_STATEMENTS = 4000


def static_false(s) -> bool:
    """`tl.static_assert(False, ...)` (an expression statement): a path that fails Triton's compilation."""
    call = s.value if isinstance(s, cst.Expr) else None
    return isinstance(call, cst.Call) and isinstance(call.func, (cst.Attribute, cst.Name)) \
        and (call.func.attr.value if isinstance(call.func, cst.Attribute) else call.func.value) == "static_assert" \
        and bool(call.args) and call.args[0].keyword is None and isinstance(call.args[0].value, cst.Name) \
        and call.args[0].value.value == "False"


def single_return(stmts: list, decide: Callable[[cst.BaseExpression], bool | None], taken_names: set[str],
                  end: Callable[[], cst.CSTNode] | None = None) -> list:
    """`stmts` (a helper's body) with every path assigning the result and one final `return` of it. `decide`
    gives a test's value when the inliner knows it now (else None); `taken_names` are names the helper uses.
    `end` (else a path reaching the end is refused): the statement a path that reaches the end without a
    `return` ends in instead, one that fails the compilation of every specialization that reaches it (Triton's
    helper returns None there: `if dtype.is_floating(): return ...` with no final `return`, reached by no
    dtype the port takes)."""
    base = "_ret"
    while any(n.startswith(base) for n in taken_names):
        base = "_" + base
    budget = [MAX_REWRITTEN_STATEMENTS]
    lowered, arity = _lower(list(stmts), decide, base, budget, end)
    if arity is None:
        raise ReturnShapeError("every path raises")
    names = [cst.Name(f"{base}{j}") for j in range(arity)]
    value = names[0] if arity == 1 else cst.Tuple([cst.Element(n) for n in names])
    return lowered + [cst.SimpleStatementLine([cst.Return(value)])]


def _lower(stmts: list, decide, base: str, budget: list, end=None) -> tuple[list, int]:
    budget[0] -= len(stmts)
    if budget[0] < 0:
        raise ReturnShapeError(f"its returns would copy more than {MAX_REWRITTEN_STATEMENTS} statements into the "
                               "arms; return once, at the end")
    for i, st in enumerate(stmts):
        if isinstance(st, cst.SimpleStatementLine) and any(isinstance(s, cst.Raise) or static_false(s)
                                                            for s in st.body):
            return stmts[:i + 1], None  # a path Triton refuses to compile: it returns nothing, any arity fits
        if isinstance(st, cst.SimpleStatementLine) and any(isinstance(s, cst.Return) for s in st.body):
            at = next(j for j, s in enumerate(st.body) if isinstance(s, cst.Return))
            value = st.body[at].value
            if value is None:
                raise ReturnShapeError("a path returns no value")
            arity = len(value.elements) if isinstance(value, cst.Tuple) else 1
            if isinstance(value, cst.Tuple) and any(isinstance(e, cst.StarredElement) for e in value.elements):
                raise ReturnShapeError("a returned tuple has a starred element")
            target = cst.Name(f"{base}0") if arity == 1 else cst.Tuple(
                [cst.Element(cst.Name(f"{base}{j}")) for j in range(arity)])
            assign = cst.Assign([cst.AssignTarget(target)], value)
            return stmts[:i] + [st.with_changes(body=list(st.body[:at]) + [assign])], arity
        if isinstance(st, cst.If) and _holds_return(st):
            rest = stmts[i + 1:]
            taken = decide(st.test)
            if taken is not None:
                lowered, arity = _lower(_arm(st, taken) + rest, decide, base, budget, end)
                return stmts[:i] + lowered, arity
            body, a1 = _lower(list(block_statements(st.body)) + rest, decide, base, budget, end)
            orelse, a2 = _lower(_arm(st, False) + rest, decide, base, budget, end)
            if a1 != a2 and None not in (a1, a2):
                raise ReturnShapeError(f"its paths return {a1} and {a2} values")
            new = st.with_changes(body=cst.IndentedBlock(body), orelse=cst.Else(cst.IndentedBlock(orelse)))
            return stmts[:i] + [new], a1 if a1 is not None else a2
        if isinstance(st, (cst.For, cst.While, cst.With)) and _holds_return(st):
            raise ReturnShapeError("it returns from inside a loop")
    if end is not None:
        return stmts + [end()], None
    raise ReturnShapeError("a path reaches the end without a `return`")


def _arm(st: cst.If, taken: bool) -> list:
    if taken:
        return list(block_statements(st.body))
    if isinstance(st.orelse, cst.If):
        return [st.orelse]
    if isinstance(st.orelse, cst.Else):
        return list(block_statements(st.orelse.body))
    return []


def _holds_return(node: cst.CSTNode) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Return):
            return True
        if isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and n is not node:
            continue
        stack.extend(n.children)
    return False
