"""Module-level configuration: the arm of a module-level `if` that the port takes.

Libraries pick a kernel helper by configuration at import time:

    if os.environ.get("FAST_OPS", "0") == "1":
        @triton.jit
        def exp(x): return fast_expf(x)
    else:
        @triton.jit
        def exp(x): return tl.exp(x)

The port is made once, on any machine, and must not depend on the environment it was made in (deterministic
output), so a condition is decided as the library decides it with no variable set: `os.environ.get(K, D)` and
`os.getenv(K, D)` read their default `D` (None without one), then literals, module constants, comparisons,
`not` / `and` / `or`, `str` methods such as `.lower()` and `hasattr(<module>, "name")` of the language the
port targets (Triton 3.6's namespace: rules/triton_dir_3.6.txt) decide the arm; a name imported from another
module of the package has the value that module gives it. Platform facts (platform.py: `torch.version.hip`,
`torch.cuda.get_device_capability()[0] >= 8`) are decided where every GPU a port can run on agrees, and a call
of the package's own function that only returns such a value (`get_available_device()`, also under `@cache`
and inside a `try`) has it. A `try` takes its body (the import it tries succeeds with the Triton the port
targets). A condition that reads anything else (the GPU's name, arguments, other calls) is not decided: the
definitions under it are not read, so a kernel using one gets a diagnostic at the use, never a guessed
definition."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import libcst as cst

from .blocks import block_statements
from .platform import NO_FACT

UNDECIDED = object()  # a condition (or a value) the port cannot decide statically
_ENV_READS = ("os.environ.get", "os.getenv", "environ.get", "getenv")
_STR_METHODS = {"lower": str.lower, "upper": str.upper, "strip": str.strip, "casefold": str.casefold}
_COMPARE = {
    cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b,
    cst.Is: lambda a, b: a is b, cst.IsNot: lambda a, b: a is not b,
    cst.In: lambda a, b: a in b, cst.NotIn: lambda a, b: a not in b,
    cst.LessThan: lambda a, b: a < b, cst.LessThanEqual: lambda a, b: a <= b,
    cst.GreaterThan: lambda a, b: a > b, cst.GreaterThanEqual: lambda a, b: a >= b,
}


def config_value(node: cst.BaseExpression, dotted: Callable[[cst.BaseExpression], str | None],
                 const: Callable[[cst.BaseExpression], object | None], names: Mapping[str, object],
                 has_attr: Callable[[str, str], bool | None] = lambda module, name: None,
                 platform: Callable[[cst.BaseExpression], object] = lambda n: NO_FACT,
                 function: Callable[[cst.Call], object] = lambda n: UNDECIDED) -> object:
    """The value of a configuration expression with no environment variable set, or UNDECIDED.
    `dotted` resolves a name through the module's imports, `const` evaluates a numeric constant, `names`
    holds the configuration values of module-level names assigned before (and of names imported from the
    package), `has_attr(module, name)` answers `hasattr` of a module the port knows (None: unknown),
    `platform(n)` the value of a platform fact (platform.py; NO_FACT: none), `function(call)` the value a call
    of one of the package's own functions returns (UNDECIDED: not known)."""
    def value(n: cst.BaseExpression) -> object:
        if isinstance(n, cst.Name):
            if n.value == "None":
                return None
            if n.value in names:
                return names[n.value]
        if isinstance(n, (cst.Name, cst.Attribute, cst.Call)):
            fact = platform(n)
            if fact is not NO_FACT:
                return fact
        if isinstance(n, cst.Subscript) and len(n.slice) == 1 and isinstance(n.slice[0].slice, cst.Index):
            seq, i = value(n.value), value(n.slice[0].slice.value)  # `get_device_capability()[0]`
            if isinstance(seq, (tuple, str)) and isinstance(i, int) and not isinstance(i, bool) \
                    and -len(seq) <= i < len(seq):
                return seq[i]
            return UNDECIDED
        if isinstance(n, cst.IfExp):
            test = value(n.test)
            return UNDECIDED if test is UNDECIDED else value(n.body if test else n.orelse)
        if isinstance(n, cst.SimpleString):
            return n.evaluated_value
        if isinstance(n, (cst.Tuple, cst.List, cst.Set)):
            items = [value(e.value) for e in n.elements if not isinstance(e, cst.StarredElement)]
            return UNDECIDED if len(items) != len(n.elements) or UNDECIDED in items else tuple(items)
        if isinstance(n, cst.UnaryOperation) and isinstance(n.operator, cst.Not):
            v = value(n.expression)
            return UNDECIDED if v is UNDECIDED else not v
        if isinstance(n, cst.BooleanOperation):
            a = value(n.left)
            if a is UNDECIDED:
                return UNDECIDED
            if isinstance(n.operator, cst.And):
                return value(n.right) if a else a
            return a if a else value(n.right)
        if isinstance(n, cst.Comparison):
            left = value(n.left)
            for target in n.comparisons:
                right = value(target.comparator)
                test = _COMPARE.get(type(target.operator))
                if left is UNDECIDED or right is UNDECIDED or test is None:
                    return UNDECIDED
                try:
                    if not test(left, right):
                        return False
                except TypeError:
                    return UNDECIDED
                left = right
            return True
        if isinstance(n, cst.Call):
            return call(n)
        v = const(n)
        return UNDECIDED if v is None else v

    def call(n: cst.Call) -> object:
        func = n.func
        if any(a.star or a.keyword is not None for a in n.args):
            return UNDECIDED
        if dotted(func) in ("hasattr", "builtins.hasattr") and len(n.args) == 2 \
                and isinstance(n.args[1].value, cst.SimpleString):
            module = dotted(n.args[0].value)
            known = has_attr(module, n.args[1].value.evaluated_value) if module else None
            return UNDECIDED if known is None else known
        if dotted(func) in _ENV_READS or (isinstance(func, cst.Attribute) and func.attr.value == "get"
                                          and dotted(func.value) in ("os.environ", "environ")):
            if not n.args or len(n.args) > 2 or not isinstance(n.args[0].value, cst.SimpleString):
                return UNDECIDED
            return value(n.args[1].value) if len(n.args) == 2 else None
        if isinstance(func, cst.Attribute) and func.attr.value in _STR_METHODS and not n.args:
            s = value(func.value)
            return _STR_METHODS[func.attr.value](s) if isinstance(s, str) else UNDECIDED
        if isinstance(func, cst.Name) and func.value in ("int", "bool", "str", "float") and len(n.args) == 1:
            v = value(n.args[0].value)
            if v is UNDECIDED:
                return UNDECIDED
            try:
                return {"int": int, "bool": bool, "str": str, "float": float}[func.value](v)
            except (TypeError, ValueError):
                return UNDECIDED
        return function(n)

    return value(node)


def env_reads(node: cst.BaseExpression, dotted: Callable[[cst.BaseExpression], str | None],
              behind: Callable[[cst.BaseExpression], cst.BaseExpression | None] = lambda n: None,
              depth: int = 0) -> tuple[str, ...]:
    """The environment variables a configuration expression reads (`os.environ.get("K", ...)`, `os.getenv("K")`),
    sorted; through the expression `behind(n)` gives for a module-level name or a call of the package's own
    configuration function (the value it was assigned, the expression it returns). The port decides them by their
    defaults (config_value); a diagnostic names them."""
    found: set[str] = set()
    for n in _walk_expr(node):
        if isinstance(n, cst.Call) and n.args and isinstance(n.args[0].value, cst.SimpleString) and (
                dotted(n.func) in _ENV_READS or (isinstance(n.func, cst.Attribute) and n.func.attr.value == "get"
                                                and dotted(n.func.value) in ("os.environ", "environ"))):
            key = n.args[0].value.evaluated_value
            if isinstance(key, str):
                found.add(key)
        elif isinstance(n, (cst.Name, cst.Call)) and depth < 8:
            inner = behind(n)
            if inner is not None:
                found.update(env_reads(inner, dotted, behind, depth + 1))
    return tuple(sorted(found))


def _walk_expr(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _walk_expr(child)


_CACHE_DECORATORS = ("functools.cache", "functools.lru_cache")


def returned_expression(fn: cst.FunctionDef, dotted: Callable[[cst.BaseExpression], str | None],
                        decide: Callable[[cst.BaseExpression], object] | None = None) -> cst.BaseExpression | None:
    """The expression a configuration function returns: one without parameters (decorated at most by
    `functools.cache` / `lru_cache`) whose body, past its docstring, is `return EXPR` or a `try` whose body is
    (the query succeeds on the platform a port runs on: `try: return driver.active.get_current_target().backend
    except Exception: return "cpu"`), or an `if` that `decide` decides whose taken arm is (`if torch.version.hip:
    ... else: return False`). None for any other function."""
    p = fn.params
    if p.params or p.posonly_params or p.kwonly_params or not isinstance(p.star_arg, cst.MaybeSentinel) \
            or p.star_kwarg is not None or fn.asynchronous is not None:
        return None
    for dec in fn.decorators:
        d = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
        if dotted(d) not in _CACHE_DECORATORS:
            return None
    body = list(block_statements(fn.body))
    if body and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1 \
            and isinstance(body[0].body[0], cst.Expr) and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        body = body[1:]  # the docstring
    for _ in range(8):
        if len(body) == 1 and isinstance(body[0], cst.Try) and body[0].finalbody is None:
            body = list(block_statements(body[0].body))
        elif body and isinstance(body[0], cst.If) and decide is not None \
                and (arm := taken_arm(body[0], decide)) is not None:
            # `if torch.version.hip: ... else: return False` (or the `return` after the `if`): the arm taken
            body = list(arm) + body[1:]
        else:
            break
    # (the first statement returns: any after it never runs)
    if body and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1 \
            and isinstance(body[0].body[0], cst.Return) and body[0].body[0].value is not None \
            and (len(body) == 1 or decide is not None):
        return body[0].body[0].value
    return None


def taken_statements(body, decide: Callable[[cst.BaseExpression], object],
                     tried: Callable[[cst.Try], tuple | None] = lambda stmt: None) -> Iterator[cst.CSTNode]:
    """The module's top-level statements with each decided `if` replaced by the statements of its taken arm
    (recursively) and each `try` by the statements it runs (`tried`: module_try.py decides them for the Triton
    the port targets), else by its body; an undecided `if` is left out. `decide` gives a test's value
    (UNDECIDED when it cannot be decided)."""
    for stmt in body:
        if isinstance(stmt, cst.If):
            arm = taken_arm(stmt, decide)
            if arm is not None:
                yield from taken_statements(arm, decide, tried)
        elif isinstance(stmt, cst.Try):
            runs = tried(stmt)
            yield from taken_statements(block_statements(stmt.body) if runs is None else runs, decide, tried)
        else:
            yield stmt


def taken_arm(stmt: cst.If, decide) -> tuple | None:
    """The statements of the arm a decided `if` takes (empty: none), None where it is undecided."""
    v = decide(stmt.test)
    if v is UNDECIDED:
        return None
    if v:
        return block_statements(stmt.body)
    if isinstance(stmt.orelse, cst.If):
        return (stmt.orelse,)
    if isinstance(stmt.orelse, cst.Else):
        return block_statements(stmt.orelse.body)
    return ()
