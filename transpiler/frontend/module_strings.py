"""Module-level strings built by the module's own Python functions, evaluated without running them.

Libraries build an inline-asm string once, at import, from a template:

    def _generate_softplus(num_pack):
        template = "...${out_reg}, ${in_reg}..."
        out_str = ""
        for i in range(num_pack):
            out_str += "{" + template.format(out_reg=i, in_reg=i + num_pack) + "}\\n"
        return " ".join(out_str.split("\\n"))

    s_softplus: tl.constexpr = tl.constexpr(_generate_softplus(1))

`call_value` reads such a function's body as data: assignments to names (and `+=`), `for` over range / a string /
a list / a tuple, `if`, `return`; literals, f-strings, `+ - * // %` on numbers, `+` and `*` on strings, comparisons,
`and` / `or` / `not`, conditional expressions, indexing and slicing, list / tuple literals, comprehensions and
generator expressions (one `for`, `if`s), the builtins range, len, str, int, float, and the string methods below.
Nothing of the function is executed as Python: no attribute other than those methods, no other call than the
module's own functions of this form, no import, no `while`. Anything else makes the value UNDECIDED, as does a
run longer than MAX_STEPS or a string longer than MAX_CHARS (a template is a few lines)."""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping

import libcst as cst

from .module_config import UNDECIDED

MAX_STEPS = 20000
MAX_CHARS = 1 << 16
MAX_DEPTH = 8  # nested calls of the module's functions
_STR_METHODS = {"join", "split", "rsplit", "replace", "strip", "lstrip", "rstrip", "upper", "lower", "format",
                "startswith", "endswith", "splitlines", "count", "find"}
_LIST_METHODS = {"append", "extend"}
_BUILTINS = {"range", "len", "str", "int", "float", "list", "tuple", "min", "max", "abs"}
_BINOPS = {cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b,
           cst.FloorDivide: lambda a, b: a // b, cst.Modulo: lambda a, b: a % b}
_AUG = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply}
_COMPARE = {cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b, cst.LessThan: lambda a, b: a < b,
            cst.LessThanEqual: lambda a, b: a <= b, cst.GreaterThan: lambda a, b: a > b,
            cst.GreaterThanEqual: lambda a, b: a >= b, cst.In: lambda a, b: a in b, cst.NotIn: lambda a, b: a not in b}


class _Undecided(Exception):
    pass


class _Return(Exception):
    def __init__(self, value):
        self.value = value


def call_value(fn: cst.FunctionDef, args: list, kwargs: dict, names: Mapping[str, object],
               function: Callable[[str], cst.FunctionDef | None] = lambda name: None) -> object:
    """What `fn(*args, **kwargs)` returns, or UNDECIDED. `names` are the module's constants, `function(name)` one
    of the module's functions by name (None: not one)."""
    run = _Run(names, function)
    try:
        return run.call(fn, list(args), dict(kwargs), 0)
    except (_Undecided, RecursionError):
        return UNDECIDED
    except (TypeError, ValueError, IndexError, KeyError, ZeroDivisionError, OverflowError, AttributeError):
        return UNDECIDED  # what Python would raise at import: no value


class _Run:
    def __init__(self, names: Mapping[str, object], function: Callable[[str], cst.FunctionDef | None]):
        self.names, self.function, self.steps = names, function, 0

    def tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise _Undecided

    def call(self, fn: cst.FunctionDef, args: list, kwargs: dict, depth: int) -> object:
        if depth > MAX_DEPTH or fn.asynchronous or fn.decorators:
            raise _Undecided
        params = fn.params
        if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.star_kwarg is not None \
                or params.posonly_params or params.kwonly_params:
            raise _Undecided
        local: dict[str, object] = {}
        for i, p in enumerate(params.params):
            name = p.name.value
            if i < len(args):
                local[name] = args[i]
            elif name in kwargs:
                local[name] = kwargs.pop(name)
            elif p.default is not None:
                local[name] = self.expr(p.default, {}, depth)
            else:
                raise _Undecided
        if len(args) > len(params.params) or kwargs:
            raise _Undecided
        try:
            self.block(fn.body, local, depth)
        except _Return as r:
            return r.value
        return None

    # ------------------------------------------------------------------------------------ statements
    def block(self, body, local: dict, depth: int) -> None:
        stmts = body.body if isinstance(body, cst.IndentedBlock) else [body]
        for st in stmts:
            self.statement(st, local, depth)

    def statement(self, st, local: dict, depth: int) -> None:
        self.tick()
        if isinstance(st, cst.SimpleStatementLine):
            for small in st.body:
                self.small(small, local, depth)
        elif isinstance(st, cst.SimpleStatementSuite):
            for small in st.body:
                self.small(small, local, depth)
        elif isinstance(st, cst.For) and st.orelse is None and not st.asynchronous:
            items = self.expr(st.iter, local, depth)
            if not isinstance(items, (range, str, list, tuple)):
                raise _Undecided
            for item in items:
                self.tick()
                self.bind(st.target, item, local)
                self.block(st.body, local, depth)
        elif isinstance(st, cst.If):
            node = st
            while node is not None:
                if isinstance(node, cst.Else):
                    self.block(node.body, local, depth)
                    break
                if self.expr(node.test, local, depth):
                    self.block(node.body, local, depth)
                    break
                node = node.orelse
        else:
            raise _Undecided

    def small(self, small, local: dict, depth: int) -> None:
        if isinstance(small, cst.Return):
            raise _Return(None if small.value is None else self.expr(small.value, local, depth))
        if isinstance(small, cst.Assign):
            value = self.expr(small.value, local, depth)
            for t in small.targets:
                self.bind(t.target, value, local)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self.bind(small.target, self.expr(small.value, local, depth), local)
        elif isinstance(small, cst.AugAssign) and type(small.operator) in _AUG and isinstance(small.target, cst.Name):
            old = self.name(small.target.value, local)
            self.bind(small.target, self.binop(_AUG[type(small.operator)], old,
                                               self.expr(small.value, local, depth)), local)
        elif isinstance(small, cst.Expr):
            if isinstance(small.value, cst.SimpleString):
                return  # a docstring
            self.expr(small.value, local, depth)  # `parts.append(x)`
        elif not isinstance(small, cst.Pass):
            raise _Undecided

    def bind(self, target, value, local: dict) -> None:
        if isinstance(target, cst.Name):
            local[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (tuple, list)) \
                and len(target.elements) == len(value) \
                and not any(isinstance(e, cst.StarredElement) for e in target.elements):
            for e, v in zip(target.elements, value):
                self.bind(e.value, v, local)
        else:
            raise _Undecided

    # ------------------------------------------------------------------------------------ expressions
    def name(self, name: str, local: dict) -> object:
        if name in local:
            return local[name]
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        if name in self.names:
            value = self.names[name]
            if isinstance(value, (bool, int, float, str)) or value is None:
                return value
        raise _Undecided

    def expr(self, n, local: dict, depth: int) -> object:
        self.tick()
        value = self._expr(n, local, depth)
        if isinstance(value, str) and len(value) > MAX_CHARS:
            raise _Undecided
        if isinstance(value, (list, tuple)) and len(value) > MAX_CHARS:
            raise _Undecided
        return value

    def _expr(self, n, local: dict, depth: int) -> object:
        if isinstance(n, cst.Name):
            return self.name(n.value, local)
        if isinstance(n, cst.Integer):
            return int(n.value.replace("_", ""), 0)
        if isinstance(n, cst.Float):
            return float(n.value.replace("_", ""))
        if isinstance(n, cst.SimpleString):
            if "b" in n.prefix.lower():
                raise _Undecided
            return n.evaluated_value
        if isinstance(n, cst.ConcatenatedString):
            left, right = self.expr(n.left, local, depth), self.expr(n.right, local, depth)
            if not isinstance(left, str) or not isinstance(right, str):
                raise _Undecided
            return left + right
        if isinstance(n, cst.FormattedString):
            return self.fstring(n, local, depth)
        if isinstance(n, (cst.Tuple, cst.List)):
            if any(isinstance(e, cst.StarredElement) for e in n.elements):
                raise _Undecided
            items = [self.expr(e.value, local, depth) for e in n.elements]
            return tuple(items) if isinstance(n, cst.Tuple) else items
        if isinstance(n, cst.BinaryOperation) and type(n.operator) in _BINOPS:
            return self.binop(type(n.operator), self.expr(n.left, local, depth), self.expr(n.right, local, depth))
        if isinstance(n, cst.UnaryOperation):
            v = self.expr(n.expression, local, depth)
            if isinstance(n.operator, cst.Not):
                return not v
            if isinstance(n.operator, cst.Minus) and isinstance(v, (int, float)):
                return -v
            raise _Undecided
        if isinstance(n, cst.BooleanOperation):
            a = self.expr(n.left, local, depth)
            if isinstance(n.operator, cst.And):
                return self.expr(n.right, local, depth) if a else a
            return a if a else self.expr(n.right, local, depth)
        if isinstance(n, cst.Comparison):
            left = self.expr(n.left, local, depth)
            for c in n.comparisons:
                right = self.expr(c.comparator, local, depth)
                test = _COMPARE.get(type(c.operator))
                if test is None or not test(left, right):
                    return False if test is not None else self._undecided()
                left = right
            return True
        if isinstance(n, cst.IfExp):
            return self.expr(n.body if self.expr(n.test, local, depth) else n.orelse, local, depth)
        if isinstance(n, cst.Subscript) and len(n.slice) == 1:
            seq = self.expr(n.value, local, depth)
            if not isinstance(seq, (str, list, tuple)):
                raise _Undecided
            s = n.slice[0].slice
            if isinstance(s, cst.Index):
                return seq[self._int(self.expr(s.value, local, depth))]
            bounds = [None if part is None else self._int(self.expr(part, local, depth))
                      for part in (s.lower, s.upper, s.step.value if isinstance(s.step, cst.BaseExpression) else None)]
            return seq[slice(*bounds)]
        if isinstance(n, (cst.GeneratorExp, cst.ListComp)):
            return self.comprehension(n, local, depth)
        if isinstance(n, cst.Call):
            return self.call_expr(n, local, depth)
        raise _Undecided

    def _undecided(self):
        raise _Undecided

    @staticmethod
    def _int(v) -> int:
        if not isinstance(v, int) or isinstance(v, bool):
            raise _Undecided
        return v

    def binop(self, op, a, b) -> object:
        if isinstance(a, bool) or isinstance(b, bool):
            raise _Undecided
        numbers = isinstance(a, (int, float)) and isinstance(b, (int, float))
        if op is cst.Add and (numbers or (isinstance(a, str) and isinstance(b, str))
                              or (isinstance(a, list) and isinstance(b, list))
                              or (isinstance(a, tuple) and isinstance(b, tuple))):
            return a + b
        if op is cst.Multiply and (isinstance(a, (str, list, tuple)) and isinstance(b, int)
                                   or isinstance(b, (str, list, tuple)) and isinstance(a, int)):
            count = b if isinstance(b, int) else a
            size = len(a) if isinstance(b, int) else len(b)
            if count * size > MAX_CHARS:
                raise _Undecided
            return a * b
        if numbers:
            value = _BINOPS[op](a, b)
            if isinstance(value, int) and abs(value) > 2 ** 64:
                raise _Undecided  # (no arithmetic of a template needs more; `x = x * x` in a loop would never end)
            return value
        raise _Undecided

    def fstring(self, n: cst.FormattedString, local: dict, depth: int) -> str:
        out = []
        for part in n.parts:
            if isinstance(part, cst.FormattedStringText):
                out.append(part.value.replace("{{", "{").replace("}}", "}"))
                continue
            value = self.expr(part.expression, local, depth)
            if part.conversion is not None and part.conversion not in ("s", "r"):
                raise _Undecided
            if part.conversion == "r":
                value = repr(value)
            spec = ""
            for piece in part.format_spec or ():
                if isinstance(piece, cst.FormattedStringText):
                    spec += piece.value
                else:
                    spec += str(self._plain(self.expr(piece.expression, local, depth)))
            out.append(format(self._plain(value), _small_spec(spec)))
        return "".join(out)

    @staticmethod
    def _plain(v):
        if not (isinstance(v, (bool, int, float, str)) or v is None):
            raise _Undecided
        return v

    def comprehension(self, n, local: dict, depth: int) -> list:
        f = n.for_in
        if f.inner_for_in is not None or f.asynchronous:
            raise _Undecided
        items = self.expr(f.iter, local, depth)
        if not isinstance(items, (range, str, list, tuple)):
            raise _Undecided
        inner = dict(local)
        out = []
        for item in items:
            self.tick()
            self.bind(f.target, item, inner)
            if all(self.expr(c.test, inner, depth) for c in f.ifs):
                out.append(self.expr(n.elt, inner, depth))
        return out

    def call_expr(self, n: cst.Call, local: dict, depth: int) -> object:
        if any(a.star for a in n.args):
            raise _Undecided
        args = [self.expr(a.value, local, depth) for a in n.args if a.keyword is None]
        kwargs = {a.keyword.value: self.expr(a.value, local, depth) for a in n.args if a.keyword is not None}
        func = n.func
        if isinstance(func, cst.Attribute):
            obj = self.expr(func.value, local, depth)
            method = func.attr.value
            if isinstance(obj, str) and method in _STR_METHODS:
                if method == "format":
                    return self.format(obj, args, kwargs)
                if method == "join":
                    if kwargs or len(args) != 1 or not all(isinstance(s, str) for s in args[0]):
                        raise _Undecided
                    return obj.join(args[0])
                if any(not isinstance(a, (str, int)) or isinstance(a, bool) for a in [*args, *kwargs.values()]):
                    raise _Undecided
                if method == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str) \
                        and len(obj) + (obj.count(args[0]) if args[0] else len(obj) + 1) * len(args[1]) > MAX_CHARS:
                    raise _Undecided
                result = getattr(obj, method)(*args, **kwargs)
                return result if not isinstance(result, list) else list(result)
            if isinstance(obj, list) and method in _LIST_METHODS and len(args) == 1 and not kwargs:
                if isinstance(func.value, cst.Name) and func.value.value not in local:
                    raise _Undecided  # a module-level list would change for the next caller
                obj.append(args[0]) if method == "append" else obj.extend(list(args[0]))
                if len(obj) > MAX_CHARS:
                    raise _Undecided
                return None
            raise _Undecided
        if not isinstance(func, cst.Name) or func.value in local:
            raise _Undecided
        name = func.value
        own = self.function(name)
        if own is not None:
            return self.call(own, args, kwargs, depth + 1)
        if name not in _BUILTINS or kwargs:
            raise _Undecided
        if name == "range":
            bounds = [self._int(a) for a in args]
            r = range(*bounds)
            if len(r) > MAX_CHARS:
                raise _Undecided
            return r
        if name in ("list", "tuple"):
            if len(args) != 1 or not isinstance(args[0], (range, str, list, tuple)):
                raise _Undecided
            return list(args[0]) if name == "list" else tuple(args[0])
        if any(not isinstance(a, (bool, int, float, str, list, tuple, range)) for a in args):
            raise _Undecided
        return {"len": len, "str": str, "int": int, "float": float, "min": min, "max": max, "abs": abs}[name](*args)

    def format(self, template: str, args: list, kwargs: dict) -> str:
        """`template.format(...)`: plain fields only (`{0}`, `{name}`, `{}`, with a format spec), never an
        attribute or an index of an argument."""
        for _, field, spec, _ in string.Formatter().parse(template):
            if field is not None and ("." in field or "[" in field or "{" in (spec or "")):
                raise _Undecided
            _small_spec(spec or "")
        for v in [*args, *kwargs.values()]:
            self._plain(v)
        return template.format(*args, **kwargs)


def _small_spec(spec: str) -> str:
    """A format spec whose widths and precisions are small (`{:>9999999999}` would be a huge string)."""
    if any(int(d) > 256 for d in re.findall(r"\d+", spec)):
        raise _Undecided
    return spec
