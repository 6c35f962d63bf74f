"""Which way a variant's predicates decide a constant condition.

A variant is recorded as predicate texts over the kernel's constants (specialize.py). A later `if` on the
same constants is folded by cuTile Python; here it must be folded too, or the kernel splits again on a
question already answered (`not (not (HAS_W))`, then `HAS_W` once more) and the variants multiply into
contradictions. The texts match exactly in the common case; otherwise the answer is computed: every
assignment of the constants the condition reads that satisfies the predicates gives the same truth value.

An atom compares one constant, or an expression of one constant, with literals. An affine expression
(`4 - STAGE == 1`, a helper's `STAGE` bound to `4 - STAGE` at the call) is solved for the constant
(`STAGE == 3`), so the candidate values below stay complete. A constant under `&` or `%` with literal
operands (`STAGE & 1`, `N % 16 == 0`) is an integer whose atoms repeat with the period of their masks and
moduli: every integer within one period beyond the literals on both sides stands for all the others.
"""

from __future__ import annotations

import ast
import itertools
import math
import re

from ..diagnostics import fail
from ..model.ir import Expr, Lit, Name, Op

MAX_ASSIGNMENTS = 4096  # beyond this the question stays open (the kernel splits, which is always sound)


def decides(preds: tuple[str, ...], text: str) -> bool | None:
    """True or False when `preds` fix the truth of the condition `text`, else None."""
    if text in preds:
        return True
    if f"not ({text})" in preds:
        return False
    closed = closed_value(text)
    if closed is not None:  # literals only (`8 == 1`: a helper's constexpr bound to a literal): its own truth
        return closed
    return _implied(preds, text)


_CLOSED_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
                  ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b, ast.BitAnd: lambda a, b: a & b,
                  ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b}
_CLOSED_CMPS = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
                ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b}


def closed_value(text: str) -> bool | None:
    """The truth of a condition over integer literals alone (comparisons, `and`/`or`/`not`, integer arithmetic),
    as Python computes it when Triton compiles (constexprs are Python ints); None where it names a constant or
    takes another form."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None

    def value(n: ast.AST):
        if isinstance(n, ast.Constant) and type(n.value) in (int, bool):
            return n.value
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.Not)):
            v = value(n.operand)
            return None if v is None else (-v if isinstance(n.op, ast.USub) else not v)
        if isinstance(n, ast.BinOp) and type(n.op) in _CLOSED_BINOPS:
            a, b = value(n.left), value(n.right)
            if a is None or b is None or isinstance(n.op, (ast.FloorDiv, ast.Mod)) and b == 0:
                return None
            return _CLOSED_BINOPS[type(n.op)](a, b)
        if isinstance(n, ast.BoolOp):
            vals = [value(v) for v in n.values]
            if None in vals:
                return None
            return all(vals) if isinstance(n.op, ast.And) else any(vals)
        if isinstance(n, ast.Compare) and all(type(o) in _CLOSED_CMPS for o in n.ops):
            items = [value(x) for x in [n.left, *n.comparators]]
            if None in items:
                return None
            return all(_CLOSED_CMPS[type(o)](a, b) for o, a, b in zip(n.ops, items, items[1:]))
        return None
    v = value(tree)
    return None if v is None else bool(v)


def _parse(text: str) -> ast.expr | None:
    """The condition's tree, affine atoms solved for their constant (see the module's doc), when every atom
    is a constant, a name, an expression of one name (below) or a comparison of one such expression with
    literals (the candidate values are complete only for those), else None."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None

    def ok(n: ast.AST) -> ast.expr | None:
        if isinstance(n, ast.BoolOp):
            vals = [ok(v) for v in n.values]
            return None if None in vals else ast.BoolOp(n.op, vals)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            v = ok(n.operand)
            return None if v is None else ast.UnaryOp(n.op, v)
        if isinstance(n, ast.Name) or _number(n) is not None:
            return n
        if isinstance(n, ast.Compare):
            items = [n.left, *n.comparators]
            exprs = [x for x in items if _number(x) is None]
            if len(exprs) != 1 or _one_name(exprs[0]) is None or any(type(o) not in _FLIP for o in n.ops):
                return None
            if isinstance(exprs[0], ast.Name) or _periods(exprs[0]):
                return n
            return _solved(n) if len(n.ops) == 1 else None
        if _one_name(n) is None:
            return None
        # `STAGE & 1`, `N - 5`: its truth, an affine one solved as `N - 5 != 0`
        return n if _periods(n) else _solved(ast.Compare(n, [ast.NotEq()], [ast.Constant(0)]))
    return ok(tree)


_AFFINE = (ast.Add, ast.Sub, ast.Mult)
_PERIODIC = (ast.BitAnd, ast.Mod)
_FLIP = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE, ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}


def _one_name(n: ast.AST) -> str | None:
    """The one name of an expression made of it and literals with + - * (and & % by a non-negative literal:
    see _periods), else None."""
    if isinstance(n, ast.Name):
        return n.id
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        return _one_name(n.operand)
    if isinstance(n, ast.BinOp) and isinstance(n.op, _AFFINE):
        a, b = _one_name(n.left), _one_name(n.right)
        if (a is None) == (b is None):  # both literals (left to eval) or two names: not an atom here
            return None
        other = n.right if a is not None else n.left
        if a is None and b is None or _number(other) is None:
            return None
        return a or b
    if isinstance(n, ast.BinOp) and isinstance(n.op, _PERIODIC):
        # the operand an integer-affine expression: its residue repeats with the name's (`(N * 0.25) % 1` would
        # not repeat with the modulus' period)
        m, aff = _number(n.right), _affine(n.left)
        ok = isinstance(m, int) and m > 0 and aff is not None and all(isinstance(x, int) for x in aff[1:])
        return aff[0] if ok else None
    return None


def _affine(n: ast.AST) -> tuple[str, float, float] | None:
    """(name, a, b) when `n` is a*name + b built with + - * and literals, else None."""
    if isinstance(n, ast.Name):
        return n.id, 1, 0
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        inner = _affine(n.operand)
        return None if inner is None else (inner[0], -inner[1], -inner[2])
    if not (isinstance(n, ast.BinOp) and isinstance(n.op, _AFFINE)):
        return None
    left, right = _affine(n.left), _affine(n.right)
    lv, rv = _number(n.left), _number(n.right)
    if isinstance(n.op, ast.Mult):
        if left is not None and rv is not None:
            return left[0], left[1] * rv, left[2] * rv
        if right is not None and lv is not None:
            return right[0], right[1] * lv, right[2] * lv
        return None
    sign = 1 if isinstance(n.op, ast.Add) else -1
    if left is not None and rv is not None:
        return left[0], left[1], left[2] + sign * rv
    if right is not None and lv is not None:
        return right[0], sign * right[1], lv + sign * right[2]
    return None


def _solved(n: ast.Compare) -> ast.Compare | None:
    """`a*x + b OP c` (either side) as `x OP' (c - b) / a`, or None where it is not affine or a is 0."""
    left, op, right = n.left, n.ops[0], n.comparators[0]
    if type(op) not in _FLIP:  # `is`, `in`: not a comparison of numbers
        return None
    if _number(left) is not None:  # literal on the left: mirror
        left, right, op = right, left, _FLIP[type(op)]()
    aff, c = _affine(left), _number(right)
    if aff is None or c is None or aff[1] == 0 or type(op) not in _FLIP:
        return None
    name, a, b = aff
    v = (c - b) / a
    v = int(v) if float(v).is_integer() and all(isinstance(x, int) for x in (a, b, c)) else v
    if a < 0:
        op = _FLIP[type(op)]()
    return ast.Compare(ast.Name(name, ast.Load()), [op], [ast.Constant(v)])


def _number(n: ast.AST) -> float | int | None:
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        v = _number(n.operand)
        return None if v is None else -v
    if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
        return n.value if math.isfinite(n.value) else None
    if isinstance(n, ast.Constant) and isinstance(n.value, bool):
        return int(n.value)
    return None


def _names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _literals(tree: ast.AST) -> dict[str, set]:
    """The literals each name is compared with."""
    out: dict[str, set] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Compare):
            items = [n.left, *n.comparators]
            name = next(_one_name(x) for x in items if _number(x) is None)
            out.setdefault(name, set()).update(v for x in items if (v := _number(x)) is not None)
    return out


def _periods(tree: ast.AST) -> dict[str, int]:
    """Per name under `& m` or `% m`: a period of every such atom (the next power of two above a mask, the
    modulus), combined by lcm. Those names are integers (Python's & refuses floats, as cuTile does)."""
    out: dict[str, int] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.BinOp) and isinstance(n.op, _PERIODIC):
            name, m = _one_name(n.left), _number(n.right)
            if name is not None and isinstance(m, int) and m > 0:
                p = 1 << int(m).bit_length() if isinstance(n.op, ast.BitAnd) else int(m)
                out[name] = math.lcm(out.get(name, 1), p)
    return out


def _candidates(lits: set, period: int | None = None) -> list:
    """One value in every region the literals cut the real line into (and 0, 1 for truthiness). Reals, not
    integers, whatever the literals: a ct.Constant[float] compared with `0` can be 0.5 (for an int constant
    the extra values only leave more questions open, which is sound). An integer under `&`/`%`: every
    integer from one period below the literals to one above (beyond, each atom repeats one of these)."""
    pts = sorted({float(v) for v in lits} | {0.0, 1.0})
    if period is not None:
        return list(range(math.floor(pts[0]) - period, math.ceil(pts[-1]) + period + 1))
    mids = [(a + b) / 2 for a, b in zip(pts, pts[1:])]
    return sorted(set(pts) | set(mids) | {pts[0] - 1.0, pts[-1] + 1.0})


def _implied(preds: tuple[str, ...], text: str) -> bool | None:
    goal = _parse(text)
    if goal is None:
        return None
    trees = [t for t in (_parse(p) for p in preds) if t is not None]  # ignoring a predicate is sound
    names = _names(goal)
    relevant: list[ast.expr] = []
    changed = True
    while changed:  # the predicates connected to the condition through shared names
        changed = False
        for t in trees:
            if t not in relevant and _names(t) & names:
                relevant.append(t)
                names |= _names(t)
                changed = True
    lits: dict[str, set] = {}
    periods: dict[str, int] = {}
    for t in [goal, *relevant]:
        for n, vs in _literals(t).items():
            lits.setdefault(n, set()).update(vs)
        for n, p in _periods(t).items():
            periods[n] = math.lcm(periods.get(n, 1), p)
    order = sorted(names)
    values = [_candidates(lits.get(n, set()), periods.get(n)) for n in order]
    if math.prod(len(v) for v in values) > MAX_ASSIGNMENTS:
        return None
    code = [compile(ast.fix_missing_locations(ast.Expression(t)), "<predicate>", "eval") for t in relevant]
    goal_code = compile(ast.fix_missing_locations(ast.Expression(goal)), "<predicate>", "eval")
    seen: set[bool] = set()
    try:
        for combo in itertools.product(*values):
            env = dict(zip(order, combo))
            if all(eval(c, {"__builtins__": {}}, env) for c in code):
                seen.add(bool(eval(goal_code, {"__builtins__": {}}, env)))
                if len(seen) > 1:
                    return None
    except (ArithmeticError, TypeError):  # an atom that does not evaluate for some candidate: leave it open
        return None
    return seen.pop() if len(seen) == 1 else None


# integer arithmetic on constants, as Infer.const_int_expr writes it (Python's operators)
_ARITH = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%", "cdiv": "", "truncdiv": "//",
          "truncmod": "%", "bitand": "&", "bitor": "|", "bitxor": "^"}


def predicate_text(e: Expr) -> str:
    """Python text of a constant condition (evaluated later against specialization values)."""
    if isinstance(e, Lit):
        return repr(e.value)
    if isinstance(e, Name):
        return e.id
    if isinstance(e, Op) and e.op == "cmp":
        return f"{predicate_text(e.args[0])} {e.attr('pred')} {predicate_text(e.args[1])}"
    if isinstance(e, Op) and e.op == "not":
        return f"not ({predicate_text(e.args[0])})"
    if isinstance(e, Op) and e.op in ("and", "or"):
        return f"({predicate_text(e.args[0])}) {e.op} ({predicate_text(e.args[1])})"
    if isinstance(e, Op) and e.op in _ARITH and len(e.args) == 2:  # Triton constexpr arithmetic (`N % BLOCK_N`)
        a, b = predicate_text(e.args[0]), predicate_text(e.args[1])
        return f"(-(-({a}) // ({b})))" if e.op == "cdiv" else f"(({a}) {_ARITH[e.op]} ({b}))"
    raise fail("CT108", "constant condition too complex to split into variants", e.pos)


def variant_slug(pred: str) -> str:
    s = pred.replace("==", " eq ").replace("!=", " ne ").replace("<=", " le ").replace(">=", " ge ")
    s = s.replace("<", " lt ").replace(">", " gt ").replace("-", " neg ").replace(".", " p ")
    s = s.replace("//", " div ").replace("%", " mod ").replace("*", " mul ").replace("+", " add ")
    s = s.replace("&", " band ").replace("|", " bor ").replace("^", " bxor ")
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")
