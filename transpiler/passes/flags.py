"""Constants that select code: the ct.Constant parameters read by a constant condition (`if FLAG:`,
`x if CAUSAL else y`) of a typed kernel. Verification probes each such int constant at 0 as well as
at a nonzero value, so that both arms of the branch are compared (verify/specs.py)."""

from __future__ import annotations

from ..model.ir import If, Kernel, Lit, Name, Op
from ..model.walk import all_stmts, sub_exprs, walk_exprs


def _const_conditions(kernel: Kernel) -> list:
    """The conditions of constant `if`s and constant ternaries."""
    conds = [s.cond for s in all_stmts(kernel.body) if isinstance(s, If) and s.const]
    return conds + [e.args[0] for e in walk_exprs(kernel.body)
                    if isinstance(e, Op) and e.op == "ifexp" and e.attr("const")]


def condition_consts(kernel: Kernel) -> set[str]:
    consts = {p.name for p in kernel.params if p.kind == "const"}
    return {n.id for c in _const_conditions(kernel) for n in sub_exprs(c) if isinstance(n, Name) and n.id in consts}


def condition_comparands(kernels: list[Kernel]) -> dict[str, list[int]]:
    """Int constants a constant condition of the kernels (a port's variants) compares with a literal
    (`if HAS_BIAS == 1:`), with the values at and around that literal: zero and a nonzero value may both
    leave such a condition false, so verification also probes these (each arm is then compared)."""
    out: dict[str, set[int]] = {}
    for kernel in kernels:
        consts = {p.name for p in kernel.params if p.kind == "const" and p.const_type == "int"}
        for e in (e for c in _const_conditions(kernel) for e in sub_exprs(c)):
            if not (isinstance(e, Op) and e.op == "cmp" and len(e.args) == 2):
                continue
            a, b = e.args
            name, lit = (a, b) if isinstance(a, Name) else (b, a)
            if isinstance(name, Name) and name.id in consts and isinstance(lit, Lit) and type(lit.value) is int:
                out.setdefault(name.id, set()).update(v for v in (lit.value - 1, lit.value, lit.value + 1) if v >= 0)
        for _, expr in kernel.derived:  # a choice inside a derived constant (`FULL if HALF == 0 else HALF`)
            for name, value in _derived_comparisons(expr):
                if name in consts:
                    out.setdefault(name, set()).update(v for v in (value - 1, value, value + 1) if v >= 0)
    return {n: sorted(v) for n, v in sorted(out.items())}


def _derived_comparisons(expr: str) -> list[tuple[str, int]]:
    """(name, literal) of each comparison of a name with an integer literal in a derived constant's Python
    expression (infer.const_int_expr writes them)."""
    import ast
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.comparators) == 1:
            a, b = node.left, node.comparators[0]
            name, lit = (a, b) if isinstance(a, ast.Name) else (b, a)
            if isinstance(name, ast.Name) and isinstance(lit, ast.Constant) and type(lit.value) is int:
                out.append((name.id, lit.value))
    return out


def loop_bound_consts(kernel: Kernel) -> set[str]:
    """Int constants that set how often a loop runs (`range(cdiv(n_cols, BLOCK))`, through derived
    constants), but no tile shape: verification defaults them so that loops run several times (a loop of
    one trip is folded away by cuTile Rust and compared as another program)."""
    import re
    from ..model.ir import For, TileTy
    consts = {p.name for p in kernel.params if p.kind == "const" and p.const_type == "int"}
    derived = dict(kernel.derived)
    from ..model.ir import Assign
    assigned: dict[str, list] = {}
    for s in all_stmts(kernel.body):
        if isinstance(s, Assign) and len(s.targets) == 1:
            assigned.setdefault(s.targets[0], []).append(s.value)
    names: set[str] = set()
    todo = [e for s in all_stmts(kernel.body) if isinstance(s, For) for e in (s.start, s.stop, s.step)]
    while todo and len(names) < 256:
        for n in sub_exprs(todo.pop()):
            if isinstance(n, Name) and n.id not in names:
                names.add(n.id)
                if n.id in derived:
                    names |= set(re.findall(r"[A-Za-z_]\w*", derived[n.id]))
                todo.extend(assigned.get(n.id, ()))  # a local the bound is computed into
    shapes: set[str] = set()
    for e in walk_exprs(kernel.body):
        ty = getattr(e, "ty", None)
        if isinstance(ty, TileTy):
            for d in ty.shape:
                shapes |= set(re.findall(r"[A-Za-z_]\w*", str(d)))
    # a derived extent reads its constants too (`DV_CHUNK = BLOCK_D // DV_SPLITS`): defaulting DV_SPLITS
    # as a loop bound (4x the others) would make the tile empty, a program neither side compiles
    todo_shapes = [n for n in shapes if n in derived]
    while todo_shapes:
        for n in re.findall(r"[A-Za-z_]\w*", derived[todo_shapes.pop()]):
            if n not in shapes:
                shapes.add(n)
                if n in derived:
                    todo_shapes.append(n)
    return (names & consts) - shapes
