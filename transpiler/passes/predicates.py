"""Which way a variant's predicates decide a constant condition.

A variant is recorded as predicate texts over the kernel's constants (specialize.py). A later `if` on the
same constants is folded by cuTile Python; here it must be folded too, or the kernel splits again on a
question already answered (`not (not (HAS_W))`, then `HAS_W` once more) and the variants multiply into
contradictions. The texts match exactly in the common case; otherwise the answer is computed: every
assignment of the constants the condition reads that satisfies the predicates gives the same truth value.
"""

from __future__ import annotations

import ast
import itertools
import math

MAX_ASSIGNMENTS = 4096  # beyond this the question stays open (the kernel splits, which is always sound)


def decides(preds: tuple[str, ...], text: str) -> bool | None:
    """True or False when `preds` fix the truth of the condition `text`, else None."""
    if text in preds:
        return True
    if f"not ({text})" in preds:
        return False
    return _implied(preds, text)


def _parse(text: str) -> ast.expr | None:
    """The condition's tree when every atom is a constant, a name or a comparison of one name with
    literals (the candidate values below are complete only for those), else None."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None

    def ok(n: ast.AST) -> bool:
        if isinstance(n, ast.BoolOp):
            return all(ok(v) for v in n.values)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            return ok(n.operand)
        if isinstance(n, ast.Name) or _number(n) is not None:
            return True
        if isinstance(n, ast.Compare):
            items = [n.left, *n.comparators]
            return (sum(isinstance(x, ast.Name) for x in items) == 1
                    and all(isinstance(x, ast.Name) or _number(x) is not None for x in items))
        return False
    return tree if ok(tree) else None


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
            name = next(x.id for x in items if isinstance(x, ast.Name))
            out.setdefault(name, set()).update(v for x in items if (v := _number(x)) is not None)
    return out


def _candidates(lits: set) -> list:
    """One value in every region the literals cut the real line into (and 0, 1 for truthiness). Reals, not
    integers, whatever the literals: a ct.Constant[float] compared with `0` can be 0.5 (for an int constant
    the extra values only leave more questions open, which is sound)."""
    pts = sorted({float(v) for v in lits} | {0.0, 1.0})
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
    for t in [goal, *relevant]:
        for n, vs in _literals(t).items():
            lits.setdefault(n, set()).update(vs)
    order = sorted(names)
    values = [_candidates(lits.get(n, set())) for n in order]
    if math.prod(len(v) for v in values) > MAX_ASSIGNMENTS:
        return None
    code = [compile(ast.Expression(t), "<predicate>", "eval") for t in relevant]
    goal_code = compile(ast.Expression(goal), "<predicate>", "eval")
    seen: set[bool] = set()
    for combo in itertools.product(*values):
        env = dict(zip(order, combo))
        if all(eval(c, {"__builtins__": {}}, env) for c in code):
            seen.add(bool(eval(goal_code, {"__builtins__": {}}, env)))
            if len(seen) > 1:
                return None
    return seen.pop() if len(seen) == 1 else None
