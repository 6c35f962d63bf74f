"""cuTile Python frontend: LibCST source -> typed model (untyped expressions, resolved names).

Fail-closed: every construct it does not understand raises a TranspileError with a code and the
source position; a file's other kernels are still translated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..diagnostics import Diagnostic, TranspileError, fail
from ..model.ir import (Assign, Continue, Eval, Expr, For, If, Kernel, Lit, Name, Op, Param, Pos, Stmt, TupleExpr,
                        While)
from ..rules import RuleTable, load

CT = "cuda.tile"
DTYPE_NAMES = {
    "float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "tfloat32": "tf32",
    "int32": "i32", "int64": "i64", "int16": "i16", "int8": "i8", "uint32": "u32", "uint8": "u8",
    "bool_": "bool", "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2",
}
ROUNDING = {"RN": "NearestEven", "RZ": "Zero", "RM": "NegativeInf", "RP": "PositiveInf", "FULL": "Full",
            "APPROX": "Approx"}
PADDING = {"ZERO": "Zero", "NEG_INF": "NegInf", "POS_INF": "PosInf", "NAN": "Nan", "NEG_ZERO": "NegZero"}
MATH_CONSTS = {"math.inf": math.inf, "math.pi": math.pi, "math.e": math.e, "math.nan": math.nan}
BINOPS = {cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.FloorDivide: "//",
          cst.Modulo: "%", cst.BitAnd: "&", cst.BitOr: "|", cst.BitXor: "^", cst.Power: "**",
          cst.MatrixMultiply: "@", cst.LeftShift: "<<", cst.RightShift: ">>"}
CMPOPS = {cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">", cst.GreaterThanEqual: ">=",
          cst.Equal: "==", cst.NotEqual: "!="}
AUG = {cst.AddAssign: "+", cst.SubtractAssign: "-", cst.MultiplyAssign: "*", cst.DivideAssign: "/",
       cst.FloorDivideAssign: "//", cst.ModuloAssign: "%", cst.BitAndAssign: "&", cst.BitOrAssign: "|",
       cst.BitXorAssign: "^", cst.LeftShiftAssign: "<<", cst.RightShiftAssign: ">>"}


@dataclass
class ModuleInfo:
    path: str
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> qualified name
    type_aliases: dict[str, str] = field(default_factory=dict)  # C -> "int" for ct.Constant[int]
    consts: dict[str, object] = field(default_factory=dict)
    helpers: dict[str, cst.FunctionDef] = field(default_factory=dict)
    kernels: dict[str, cst.FunctionDef] = field(default_factory=dict)
    launches: dict[str, list[dict[int, object]]] = field(default_factory=dict)


@dataclass
class FileResult:
    path: str
    kernels: list[Kernel]
    failures: list[tuple[str, Pos, Diagnostic]]  # (kernel name, kernel position, diagnostic)
    diagnostics: list[Diagnostic]  # file-level


def parse_file(path: Path, display: str, rules: RuleTable | None = None) -> FileResult:
    rules = rules or load()
    try:
        source = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        return FileResult(display, [], [], [Diagnostic("error", "CT002", f"cannot read file: {e}", Pos(display, 1, 1))])
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as e:
        return FileResult(display, [], [], [Diagnostic("error", "CT001", f"syntax error: {e.message}",
                                                       Pos(display, e.raw_line, e.raw_column + 1))])
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    info = ModuleInfo(display)
    conv = _Converter(info, positions, rules, Path(display).stem)
    conv.scan_module(wrapper.module)
    kernels, failures = [], []
    for name, fn in info.kernels.items():
        try:
            kernels.append(conv.kernel(fn))
        except TranspileError as e:
            failures.append((name, conv.pos(fn), e.diagnostic))
    return FileResult(display, kernels, failures, [])


class _Converter:
    def __init__(self, info: ModuleInfo, positions, rules: RuleTable, module_name: str):
        self.info = info
        self.positions = positions
        self.rules = rules
        self.module_name = module_name
        self.pending: list[Stmt] = []
        self.subst: list[dict[str, Expr]] = []
        self.inline_counter = 0
        self.renames: list[tuple[str, dict]] = []
        self.rules_used: set[str] = set()

    # ------------------------------------------------------------------ module scan
    def pos(self, node: cst.CSTNode) -> Pos:
        try:
            p = self.positions[node].start
            return Pos(self.info.path, p.line, p.column + 1)
        except KeyError:
            return Pos(self.info.path, 1, 1)

    def dotted(self, node: cst.BaseExpression) -> str | None:
        if isinstance(node, cst.Name):
            return self.info.aliases.get(node.value, node.value)
        if isinstance(node, cst.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr.value}" if base else None
        return None

    def scan_module(self, module: cst.Module) -> None:
        for stmt in module.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self._scan_small(small)
            elif isinstance(stmt, cst.FunctionDef):
                if self._is_kernel(stmt):
                    self.info.kernels[stmt.name.value] = stmt
                else:
                    self.info.helpers[stmt.name.value] = stmt
        for node in _walk(module):
            if isinstance(node, cst.Call) and self.dotted(node.func) == f"{CT}.launch":
                self._scan_launch(node)

    def _scan_small(self, small: cst.BaseSmallStatement) -> None:
        if isinstance(small, cst.Import):
            for a in small.names:
                full = _name_text(a.name)
                if a.asname:
                    self.info.aliases[a.asname.name.value] = full
                else:
                    self.info.aliases[full.split(".")[0]] = full.split(".")[0]
        elif isinstance(small, cst.ImportFrom) and small.module is not None and not isinstance(small.names, cst.ImportStar):
            mod = _name_text(small.module)
            for a in small.names:
                local = a.asname.name.value if a.asname else _name_text(a.name)
                self.info.aliases[local] = f"{mod}.{_name_text(a.name)}"
        elif isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            name = small.targets[0].target.value
            ctype = self._constant_annotation(small.value)
            if ctype:
                self.info.type_aliases[name] = ctype
                return
            d = self.dotted(small.value) if isinstance(small.value, (cst.Name, cst.Attribute)) else None
            if d and d.startswith(f"{CT}."):
                self.info.aliases[name] = d  # e.g. ZERO = ct.PaddingMode.ZERO
                return
            value = self._eval_const(small.value)
            if value is not None:
                self.info.consts[name] = value
        elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
            value = self._eval_const(small.value)
            if value is not None:
                self.info.consts[small.target.value] = value

    def _constant_annotation(self, node: cst.BaseExpression) -> str | None:
        """`ct.Constant[int]` (or an alias of it) -> 'int'."""
        if isinstance(node, cst.Name) and node.value in self.info.type_aliases:
            return self.info.type_aliases[node.value]
        if isinstance(node, cst.Subscript) and self.dotted(node.value) == f"{CT}.Constant":
            el = node.slice[0].slice
            if isinstance(el, cst.Index) and isinstance(el.value, cst.Name) and el.value.value in ("int", "bool", "float"):
                return el.value.value
        if self.dotted(node) == f"{CT}.Constant":
            return "int"
        return None

    def _eval_const(self, node: cst.BaseExpression) -> object | None:
        """Module-level constant expressions: literals, math constants, arithmetic on them."""
        if isinstance(node, cst.Integer):
            return int(node.value.replace("_", ""), 0)
        if isinstance(node, cst.Float):
            return float(node.value.replace("_", ""))
        if isinstance(node, cst.Name):
            if node.value in ("True", "False"):
                return node.value == "True"
            return self.info.consts.get(node.value)
        d = self.dotted(node)
        if d in MATH_CONSTS:
            return MATH_CONSTS[d]
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            v = self._eval_const(node.expression)
            return -v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
        if isinstance(node, cst.BinaryOperation):
            a, b = self._eval_const(node.left), self._eval_const(node.right)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                op = BINOPS.get(type(node.operator))
                try:
                    return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b,
                            "//": lambda: a // b, "**": lambda: a ** b}[op]()
                except (KeyError, ZeroDivisionError):
                    return None
        if isinstance(node, cst.Call) and self.dotted(node.func) in ("math.log", "math.sqrt", "math.log2", "builtins.float", "float"):
            args = [self._eval_const(a.value) for a in node.args]
            if all(isinstance(a, (int, float, str)) for a in args) and args:
                fn = {"math.log": math.log, "math.sqrt": math.sqrt, "math.log2": math.log2}.get(self.dotted(node.func), float)
                try:
                    return fn(*args)
                except (TypeError, ValueError):
                    return None
        if isinstance(node, cst.SimpleString) and self.dotted(node) is None:
            return node.evaluated_value
        return None

    def _is_kernel(self, fn: cst.FunctionDef) -> bool:
        return self._kernel_decorator(fn) is not None

    def _kernel_decorator(self, fn: cst.FunctionDef) -> cst.Decorator | None:
        for d in fn.decorators:
            target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
            if self.dotted(target) == f"{CT}.kernel":
                return d
        return None

    def _scan_launch(self, call: cst.Call) -> None:
        args = [a.value for a in call.args]
        if len(args) < 4 or not isinstance(args[2], cst.Name) or args[2].value not in self.info.kernels:
            return
        kargs = args[3]
        if not isinstance(kargs, (cst.Tuple, cst.List)):
            return
        lits = {}
        for i, el in enumerate(kargs.elements):
            v = self._eval_const(el.value)
            if isinstance(v, (int, float, bool)):
                lits[i] = v
        self.info.launches.setdefault(args[2].value, []).append(lits)

    # ------------------------------------------------------------------ kernels
    def kernel(self, fn: cst.FunctionDef) -> Kernel:
        self.rules_used = set()
        dec = self._kernel_decorator(fn)
        hints = self._hints(dec)
        params = []
        for p in fn.params.params:
            ctype = self._constant_annotation(p.annotation.annotation) if p.annotation else None
            if ctype:
                params.append(Param(p.name.value, "const", self.pos(p), const_type=ctype))
            elif p.annotation is None:
                params.append(Param(p.name.value, "unknown", self.pos(p)))
            else:
                ann = p.annotation.annotation
                if isinstance(ann, cst.Name) and ann.value in ("int", "float", "bool"):
                    dt = {"int": "i32", "float": "f32", "bool": "bool"}[ann.value]
                    params.append(Param(p.name.value, "scalar", self.pos(p), dtype=dt))
                else:
                    dotted = self.dotted(ann) or ""
                    if dotted in (f"{CT}.Array",):
                        params.append(Param(p.name.value, "array", self.pos(p)))
                    else:
                        raise fail("CT106", f"unsupported annotation on parameter `{p.name.value}`", self.pos(p.annotation))
        if fn.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or fn.params.kwonly_params or fn.params.star_kwarg:
            raise fail("CT100", "kernels with *args, keyword-only or **kwargs parameters are not supported", self.pos(fn.params))
        body = tuple(self.block(fn.body, top=True))
        launches = []
        for lits in self.info.launches.get(fn.name.value, []):
            launches.append(tuple(sorted((params[i].name, v) for i, v in lits.items()
                                         if i < len(params) and params[i].kind == "const")))
        return Kernel(name=fn.name.value, module=self.module_name, path=self.info.path, pos=self.pos(fn),
                      params=tuple(params), body=body, hints=hints,
                      launches=tuple(sorted(set(launches), key=repr)), rules_used=tuple(sorted(self.rules_used)))

    def _hints(self, dec: cst.Decorator | None) -> tuple[tuple[str, int], ...]:
        if dec is None or not isinstance(dec.decorator, cst.Call):
            return ()
        out = []
        for a in dec.decorator.args:
            key = a.keyword.value if a.keyword else None
            v = self._eval_const(a.value)
            if key in ("occupancy", "num_ctas") and isinstance(v, int):
                out.append(("num_cta_in_cga" if key == "num_ctas" else key, v))
            else:
                raise fail("CT102", f"unsupported kernel decorator argument `{key}`", self.pos(a))
        return tuple(sorted(out))

    # ------------------------------------------------------------------ statements
    def block(self, body: cst.BaseSuite, top: bool = False) -> list[Stmt]:
        stmts = body.body if isinstance(body, cst.IndentedBlock) else [body]
        return self.stmts(list(stmts), top)

    def _is_return_guard(self, s) -> bool:
        """`if cond: ...; return` (the arm ends in a bare return and has no other; no else)."""
        if not isinstance(s, cst.If) or s.orelse is not None or not isinstance(s.body, cst.IndentedBlock):
            return False
        body = s.body.body
        last = body[-1] if body else None
        if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)
                and last.body[-1].value is None):
            return False
        inner = [n for b in body for n in _walk(b) if isinstance(n, cst.Return)]
        return len(inner) == 1

    def stmts(self, stmts: list, top: bool) -> list[Stmt]:
        out: list[Stmt] = []
        for i, s in enumerate(stmts):
            if top and self._is_return_guard(s):
                # `if c: return` at the kernel's top level: the rest of the kernel runs in the else arm
                # (cuTile Rust allows no nested `return`; the normalizer compares both forms, rule N15)
                cond = self.expr(s.test)
                pre, self.pending = self.pending, []
                body = s.body.body
                last = body[-1]
                trimmed = list(body[:-1])
                if len(last.body) > 1:
                    trimmed.append(last.with_changes(body=last.body[:-1]))
                arm = tuple(self.stmts(trimmed, top=False))
                rest = tuple(self.stmts(stmts[i + 1:], top=True))
                self.pending = pre
                out.extend(self._flush([If(cond, arm, rest, self.pos(s))]))
                return out
            if isinstance(s, cst.SimpleStatementLine):
                for small in s.body:
                    out.extend(self.small(small, last=top and i == len(stmts) - 1))
            elif isinstance(s, cst.SimpleStatementSuite):
                for small in s.body:
                    out.extend(self.small(small))
            elif isinstance(s, cst.For):
                out.extend(self.for_stmt(s))
            elif isinstance(s, cst.If):
                out.extend(self.if_stmt(s))
            elif isinstance(s, cst.While):
                out.extend(self.while_stmt(s))
            else:
                raise fail("CT100", f"unsupported statement `{type(s).__name__}` in a kernel", self.pos(s))
        return out

    def _flush(self, stmts: list[Stmt]) -> list[Stmt]:
        out = self.pending + stmts
        self.pending = []
        return out

    def small(self, s: cst.BaseSmallStatement, last: bool = False) -> list[Stmt]:
        pos = self.pos(s)
        if isinstance(s, cst.Pass):
            return []
        if isinstance(s, cst.Expr):
            if isinstance(s.value, (cst.SimpleString, cst.ConcatenatedString)):
                return []  # docstring
            return self._flush([Eval(self.expr(s.value), pos)])
        if isinstance(s, cst.Assign):
            if len(s.targets) != 1:
                raise fail("CT100", "chained assignment is not supported", pos)
            targets = self._targets(s.targets[0].target)
            return self._flush([Assign(targets, self.expr(s.value), pos)])
        if isinstance(s, cst.AnnAssign) and s.value is not None:
            return self._flush([Assign(self._targets(s.target), self.expr(s.value), pos)])
        if isinstance(s, cst.AugAssign):
            op = AUG.get(type(s.operator))
            if op is None or not isinstance(s.target, cst.Name):
                raise fail("CT100", "unsupported augmented assignment", pos)
            value = self._binop(op, self.expr(s.target), self.expr(s.value), pos)
            return self._flush([Assign((self.local(s.target.value, pos),), value, pos)])
        if isinstance(s, cst.Return) and s.value is None and last:
            return []
        if isinstance(s, cst.Continue):
            return self._flush([Continue(pos)])
        if isinstance(s, cst.Break):
            raise fail("CT107", "`break` is not supported: cuTile Python splits the loop around it, which has no "
                       "cuTile Rust form with the same Tile IR", pos)
        if isinstance(s, cst.Return):
            raise fail("CT107", "early `return` in a kernel is not supported yet (cuTile Rust only allows "
                       "`return` at the top level; the rewrite changes the Tile IR)", pos)
        raise fail("CT100", f"unsupported statement `{type(s).__name__}` in a kernel", pos)

    def _targets(self, t: cst.BaseAssignTargetExpression) -> tuple[str, ...]:
        if isinstance(t, cst.Name):
            return (self.local(t.value, self.pos(t)),)
        if isinstance(t, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) for e in t.elements):
            return tuple(self.local(e.value.value, self.pos(e)) for e in t.elements)
        raise fail("CT100", "assignment target must be a name or a tuple of names", self.pos(t))

    def for_stmt(self, s: cst.For) -> list[Stmt]:
        pos = self.pos(s)
        if s.orelse is not None or s.asynchronous is not None:
            raise fail("CT100", "`for ... else` and `async for` are not supported", pos)
        if not isinstance(s.target, cst.Name):
            raise fail("CT100", "the loop variable must be a plain name", self.pos(s.target))
        it = s.iter
        if not (isinstance(it, cst.Call) and self.dotted(it.func) in ("range", "builtins.range")):
            raise fail("CT100", "only `for ... in range(...)` loops are supported", self.pos(it))
        args = [self.expr(a.value) for a in it.args]
        if not 1 <= len(args) <= 3 or any(a.keyword for a in it.args):
            raise fail("CT100", "range() takes 1 to 3 positional arguments", self.pos(it))
        zero, one = Lit(0, pos), Lit(1, pos)
        start, stop, step = (zero, args[0], one) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else one)
        var = self.local(s.target.value, pos)
        pre = self.pending
        self.pending = []
        body = tuple(self.block(s.body))
        self.pending = pre
        return self._flush([For(var, start, stop, step, body, pos)])

    def while_stmt(self, s: cst.While) -> list[Stmt]:
        pos = self.pos(s)
        if s.orelse is not None:
            raise fail("CT100", "`while ... else` is not supported", pos)
        cond = self.expr(s.test)
        if self.pending:
            raise fail("CT100", "the condition of a `while` cannot call a helper", pos)
        body = tuple(self.block(s.body))
        return [While(cond, body, pos)]

    def if_stmt(self, s: cst.If) -> list[Stmt]:
        pos = self.pos(s)
        cond = self.expr(s.test)
        pre = self.pending
        self.pending = []
        body = tuple(self.block(s.body))
        if isinstance(s.orelse, cst.If):
            orelse = tuple(self.if_stmt(s.orelse))
        elif isinstance(s.orelse, cst.Else):
            orelse = tuple(self.block(s.orelse.body))
        else:
            orelse = ()
        self.pending = pre
        return self._flush([If(cond, body, orelse, pos)])

    # ------------------------------------------------------------------ expressions
    def expr(self, node: cst.BaseExpression) -> Expr:
        pos = self.pos(node)
        if isinstance(node, cst.Integer):
            return Lit(int(node.value.replace("_", ""), 0), pos)
        if isinstance(node, cst.Float):
            return Lit(float(node.value.replace("_", "")), pos)
        if isinstance(node, cst.Name):
            if node.value in ("True", "False"):
                return Lit(node.value == "True", pos)
            for scope in reversed(self.subst):
                if node.value in scope:
                    return scope[node.value]
            if node.value in self.info.consts:
                return self._lit(self.info.consts[node.value], pos)
            d = self.info.aliases.get(node.value)
            if d and d.startswith(f"{CT}.") and d[len(CT) + 1:].split(".")[0] in (set(DTYPE_NAMES) | {"PaddingMode", "RoundingMode"}):
                return self._ct_value(d, pos)
            return Name(node.value, pos)
        if isinstance(node, cst.Attribute):
            return self.attribute(node)
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, cst.Minus):
                inner = self.expr(node.expression)
                if isinstance(inner, Lit) and not isinstance(inner.value, bool):
                    return Lit(-inner.value, pos)
                return self._op("operator:neg", (inner,), pos)
            if isinstance(node.operator, cst.Not):
                return Op("not", (self.expr(node.expression),), pos, rule="CTR-CMP")
            if isinstance(node.operator, cst.Plus):
                return self.expr(node.expression)
            if isinstance(node.operator, cst.BitInvert):
                return self._op("operator:~", (self.expr(node.expression),), pos)
            raise fail("CT100", "unsupported unary operator", pos)
        if isinstance(node, cst.BinaryOperation):
            op = BINOPS.get(type(node.operator))
            return self._binop(op, self.expr(node.left), self.expr(node.right), pos)
        if isinstance(node, cst.Comparison):
            if len(node.comparisons) != 1:
                raise fail("CT100", "chained comparisons are not supported", pos)
            c = node.comparisons[0]
            op = CMPOPS.get(type(c.operator))
            if op is None:
                raise fail("CT100", f"unsupported comparison operator", self.pos(c))
            return self._op(f"operator:{op}", (self.expr(node.left), self.expr(c.comparator)), pos, (("pred", op),))
        if isinstance(node, cst.BooleanOperation):
            kind = "and" if isinstance(node.operator, cst.And) else "or"
            return Op(kind, (self.expr(node.left), self.expr(node.right)), pos, rule="CTR-CMP")
        if isinstance(node, cst.IfExp):
            return Op("ifexp", (self.expr(node.test), self.expr(node.body), self.expr(node.orelse)), pos)
        if isinstance(node, (cst.Tuple, cst.List)):
            return TupleExpr(tuple(self.expr(e.value) for e in node.elements), pos)
        if isinstance(node, cst.Call):
            return self.call(node)
        if isinstance(node, cst.Subscript):
            return self.subscript(node)
        if isinstance(node, cst.SimpleString) and node.evaluated_value in ("C", "F"):
            return Lit(node.evaluated_value, pos)  # memory order of ct.load(order=...)
        if isinstance(node, cst.SimpleString):
            raise fail("CT100", "string values are not supported in kernels", pos)
        raise fail("CT100", f"unsupported expression `{type(node).__name__}`", pos)

    def _lit(self, v: object, pos: Pos) -> Expr:
        if isinstance(v, (int, float, bool)):
            return Lit(v, pos)
        raise fail("CT100", "module constant of unsupported type", pos)

    def _binop(self, op: str | None, a: Expr, b: Expr, pos: Pos) -> Expr:
        if op is None:
            raise fail("CT100", "unsupported binary operator", pos)
        if f"operator:{op}" not in self.rules.by_source:
            raise fail("CT100", f"operator `{op}` is not supported yet", pos)
        return self._op(f"operator:{op}", (a, b), pos)

    def _op(self, source: str, args: tuple, pos: Pos, attrs: tuple = ()) -> Op:
        rule = self.rules.lookup(source)
        if rule is None:
            raise fail("CT101", f"no rule for `{source}`", pos)
        self.rules_used.add(rule.id)
        return Op(rule.op, args, pos, tuple(attrs), rule.id)

    def attribute(self, node: cst.Attribute) -> Expr:
        pos = self.pos(node)
        d = self.dotted(node)
        if d and d.startswith(f"{CT}."):
            return self._ct_value(d, pos)
        if d in MATH_CONSTS:
            return Lit(MATH_CONSTS[d], pos)
        if node.attr.value == "dtype":
            return Op("dtype_of", (self.expr(node.value),), pos)
        if node.attr.value == "shape":
            return Op("shape_of", (self.expr(node.value),), pos)
        raise fail("CT100", f"unsupported attribute `.{node.attr.value}`", pos)

    def _ct_value(self, d: str, pos: Pos) -> Expr:
        """A cuda.tile dtype or enum member used as a value."""
        leaf = d[len(CT) + 1:]
        if leaf in DTYPE_NAMES:
            return Op("dtype", (), pos, (("dtype", DTYPE_NAMES[leaf]),))
        if leaf.startswith("RoundingMode.") and leaf.split(".")[1] in ROUNDING:
            return Op("enum", (), pos, (("value", "rounding::" + ROUNDING[leaf.split(".")[1]]),))
        if leaf.startswith("PaddingMode.") and leaf.split(".")[1] in PADDING:
            return Op("enum", (), pos, (("value", "padding::" + PADDING[leaf.split(".")[1]]),))
        raise fail("CT101", f"`{d}` is not supported", pos)

    def subscript(self, node: cst.Subscript) -> Expr:
        pos = self.pos(node)
        base = self.expr(node.value)
        items = []
        for el in node.slice:
            s = el.slice
            if isinstance(s, cst.Slice) and s.lower is None and s.upper is None and s.step is None:
                items.append(":")
            elif isinstance(s, cst.Index) and isinstance(s.value, cst.Name) and s.value.value == "None":
                items.append("None")
            elif isinstance(s, cst.Index) and isinstance(s.value, cst.Integer) and isinstance(base, Op) and base.op == "shape_of":
                return Op("array_dim", (base.args[0],), pos, (("dim", int(s.value.value)),))
            else:
                raise fail("CT100", "only `[:, None]`-style tile indexing is supported", self.pos(el))
        return Op("index_none", (base,), pos, (("pattern", tuple(items)),), rule="CTR-RESHAPE")

    def call(self, node: cst.Call) -> Expr:
        pos = self.pos(node)
        func = node.func
        fd = self.dotted(func) if isinstance(func, cst.Attribute) else None
        modules = set(self.info.aliases.values()) | {"math", "builtins"}
        if isinstance(func, cst.Attribute) and (fd is None or (fd.split(".")[0] not in modules
                                                                and not fd.startswith(f"{CT}."))):
            # method call on a value: t.astype(...), t.reshape(...)
            src = f"method:{func.attr.value}"
            rule = self.rules.lookup(src)
            if rule is None:
                raise fail("CT101", f"method `.{func.attr.value}()` is not supported", pos)
            receiver = self.expr(func.value)
            return self._rule_call(rule, [receiver] + [a for a in node.args], pos, receiver_given=True)
        d = self.dotted(func)
        if d in ("float", "builtins.float") and len(node.args) == 1:
            v = self._eval_const(node.args[0].value)
            if isinstance(v, str) and v.strip().lower() in ("inf", "+inf", "-inf", "nan", "infinity", "-infinity"):
                return Lit(float(v), pos)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return Lit(float(v), pos)
        if isinstance(func, cst.Name) and func.value in self.info.helpers and func.value not in self.info.aliases:
            return self.inline_helper(self.info.helpers[func.value], node)
        if d in ("min", "max", "builtins.min", "builtins.max"):
            rule = self.rules.lookup(f"{CT}.{'minimum' if d.endswith('min') else 'maximum'}")
            return self._rule_call(rule, list(node.args), pos)
        rule = self.rules.lookup(d or "")
        if rule is None:
            raise fail("CT101", f"call to `{d or _code(node.func)}` has no rule (unsupported API or unknown function)", pos)
        return self._rule_call(rule, list(node.args), pos)

    def _rule_call(self, rule, args: list, pos: Pos, receiver_given: bool = False) -> Op:
        self.rules_used.add(rule.id)
        values: dict[str, Expr] = {}
        params = list(rule.params)
        pi = 0
        for a in args:
            if isinstance(a, cst.Arg):
                if a.star:
                    raise fail("CT100", "star arguments are not supported", self.pos(a))
                if a.keyword is not None:
                    key = a.keyword.value
                    if key not in params and rule.default(key) is None:
                        raise fail(rule.id, f"keyword `{key}` of `{rule.source[0]}` is not supported", self.pos(a))
                    values[key] = self.expr(a.value)
                    continue
                value = self.expr(a.value)
            else:
                value = a
            if pi >= len(params):
                if rule.op in ("permute", "transpose"):
                    values.setdefault("axes_extra", TupleExpr((), pos))
                    values["axes_extra"] = TupleExpr(values["axes_extra"].items + (value,), pos)
                    continue
                raise fail(rule.id, f"too many arguments for `{rule.source[0]}`", pos)
            values[params[pi]] = value
            pi += 1
        ordered = tuple(values.get(p) for p in params)
        attrs = tuple(sorted((k, v) for k, v in values.items() if k not in params))
        return Op(rule.op, ordered, pos, attrs, rule.id)

    def inline_helper(self, fn: cst.FunctionDef, call: cst.Call) -> Expr:
        """Inline a plain helper: its assignments become statements with renamed locals."""
        pos = self.pos(call)
        self.inline_counter += 1
        prefix = f"_{fn.name.value.lstrip('_')}{self.inline_counter}_"
        names = [p.name.value for p in fn.params.params]
        if len(call.args) > len(names) or any(a.keyword and a.keyword.value not in names for a in call.args):
            raise fail("CT100", f"cannot match the arguments of helper `{fn.name.value}`", pos)
        bind: dict[str, Expr] = {}
        for i, a in enumerate(call.args):
            key = a.keyword.value if a.keyword else names[i]
            bind[key] = self.expr(a.value)
        for p in fn.params.params:
            if p.name.value not in bind:
                if p.default is None:
                    raise fail("CT100", f"missing argument `{p.name.value}` for helper `{fn.name.value}`", pos)
                bind[p.name.value] = self.expr(p.default)
        stmts = [st for st in (fn.body.body if isinstance(fn.body, cst.IndentedBlock) else [])
                 if not (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1
                         and isinstance(st.body[0], cst.Expr) and isinstance(st.body[0].value, cst.SimpleString))]
        last = stmts[-1] if stmts else None
        ret = last.body[-1] if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 else None
        if not (isinstance(ret, cst.Return) and ret.value is not None):
            raise fail("CT100", f"helper `{fn.name.value}` must end with `return <expr>`", pos)
        if sum(isinstance(n, cst.Return) for st in stmts for n in _walk(st)) != 1:
            raise fail("CT107", f"helper `{fn.name.value}` returns early; only one final `return` is supported",
                       pos)
        self.subst.append(bind)
        self.renames.append((prefix, bind))
        try:
            pre, self.pending = self.pending, []
            body = self.stmts(stmts[:-1], top=False)
            self.pending = pre + body
            result = self.expr(ret.value)
        finally:
            self.subst.pop()
            self.renames.pop()
        return result

    def local(self, name: str, pos: Pos) -> str:
        """The model name of an assigned Python name: locals of an inlined helper get a unique prefix."""
        if not self.renames:
            return name
        prefix, bind = self.renames[-1]
        bind[name] = Name(prefix + name, pos)
        return prefix + name


def _name_text(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_name_text(node.value)}.{node.attr.value}"
    return ""


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)
