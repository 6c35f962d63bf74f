"""Constexpr locals chosen by the arms of a constexpr `if` (Triton):

    if IS_PER_TOKEN_A:
        TILE_SIZE_SCALE_A: tl.constexpr = TILE_M
    else:
        TILE_SIZE_SCALE_A: tl.constexpr = 1
    offs = tl.arange(0, TILE_SIZE_SCALE_A) + ...

Triton folds the `if` when it compiles, so the name is a constant wherever it is read, and may size a tile. A
port's tile shape is a literal or a const generic, never a local, so the statements after such an `if` are
moved into each of its arms, where the name is replaced by the value that arm gives it (`tl.arange(0, TILE_M)`,
`tl.arange(0, 1)`); the specialization then makes each arm its own entry, as it does for any constant branch
that changes types. Only where a name of this kind sizes a tile (an argument of a shape-taking function, or an
element of a list or tuple), or is a dtype (`dot_dtype = tl.float32` / `= tl.bfloat16`, then `.to(dot_dtype)`):
elsewhere the `if` converts as it is."""

from __future__ import annotations

import libcst as cst

from .common import walk_nodes

# Triton functions whose arguments include shapes or extents
SHAPE_FUNCTIONS = ("arange", "zeros", "full", "reshape", "view", "broadcast_to", "make_block_ptr",
                   "make_tensor_descriptor", "static_range", "expand_dims", "zeros_like", "full_like")


def split_constexpr_arms(conv, fn: cst.FunctionDef, stand_in: dict) -> cst.FunctionDef | None:
    """`fn` with the statements after each such `if` moved into its arms and the names replaced; None where
    no name qualifies. `stand_in` receives id(new node) -> (new node, the source node it takes its position
    from)."""
    names = _arm_constexprs(conv, fn)
    if not names:
        return None
    body = _split(conv, list(fn.body.body), names, stand_in)
    new = fn.with_changes(body=fn.body.with_changes(body=body))
    stand_in[id(new)] = (new, fn)
    stand_in[id(new.body)] = (new.body, fn.body)
    return new


def _constexpr_binding(conv, stmt: cst.BaseStatement) -> tuple[str, cst.BaseExpression] | None:
    """`X: tl.constexpr = value`, or `X = tl.float32` (a dtype, which Triton always knows when it compiles), as a
    statement of its own: (X, value)."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.AnnAssign):
        s = stmt.body[0]
        if isinstance(s.target, cst.Name) and s.value is not None and conv._is_constexpr(s.annotation):
            return s.target.value, s.value
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign):
        s = stmt.body[0]
        if len(s.targets) == 1 and isinstance(s.targets[0].target, cst.Name) and conv.is_dtype_literal(s.value):
            return s.targets[0].target.value, s.value
    return None


def _arm_constexprs(conv, fn: cst.FunctionDef) -> set[str]:
    """Names bound only as `X: tl.constexpr = ...` (or `X = <a dtype>`) statements directly in the arms of `if`s on
    constants at the function's top level (or in the `else` chain of one), more than once, and read where a
    tile's shape is given (or holding dtypes)."""
    arm_bound: dict[str, int] = {}
    dtypes: set[str] = set()  # names bound to a dtype (`X = tl.float32`: no annotation needed)

    def arms(s: cst.If):
        yield s.body.body
        if isinstance(s.orelse, cst.If):
            yield from arms(s.orelse)
        elif s.orelse is not None:
            yield s.orelse.body.body

    for stmt in fn.body.body:
        if isinstance(stmt, cst.If) and conv._const_test(stmt.test):
            for arm in arms(stmt):
                for inner in arm:
                    bound = _constexpr_binding(conv, inner)
                    if bound is not None:
                        arm_bound[bound[0]] = arm_bound.get(bound[0], 0) + 1
                        if conv.is_dtype_literal(bound[1]):
                            dtypes.add(bound[0])
    every: dict[str, int] = {}
    for node in walk_nodes(fn.body):
        if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for t in targets:
                for n in walk_nodes(t):
                    if isinstance(n, cst.Name):
                        every[n.value] = every.get(n.value, 0) + 1
    return {n for n, c in arm_bound.items() if c >= 2 and every.get(n) == c
            and (n in dtypes or _sizes_a_tile(conv, fn, n))}


def _sizes_a_tile(conv, fn: cst.FunctionDef, name: str) -> bool:
    for node in walk_nodes(fn.body):
        inside = None
        if isinstance(node, cst.Call):
            d = conv.dotted(node.func) or ""
            if d.rsplit(".", 1)[-1] in SHAPE_FUNCTIONS:
                inside = node.args
        elif isinstance(node, (cst.List, cst.Tuple)):
            inside = node.elements
        if inside and any(isinstance(n, cst.Name) and n.value == name for a in inside for n in walk_nodes(a.value)):
            return True
    return False


def _split(conv, stmts: list, names: set[str], stand_in: dict) -> list:
    for i, s in enumerate(stmts):
        if not (isinstance(s, cst.If) and conv._const_test(s.test) and _binds_any(conv, s, names)):
            continue
        rest = stmts[i + 1:]
        if s.orelse is None:
            other = list(rest)
        elif isinstance(s.orelse, cst.If):
            other = [s.orelse] + rest  # an `elif`: an `if` of its own in the `else`, split in its turn
        else:
            other = list(s.orelse.body.body) + rest
        then_body = s.body.with_changes(body=_split(conv, _substituted(conv, list(s.body.body) + rest, names,
                                                                       stand_in), names, stand_in))
        else_stmts = _split(conv, _substituted(conv, other, names, stand_in), names, stand_in)
        else_body = cst.IndentedBlock(body=else_stmts or [cst.SimpleStatementLine([cst.Pass()])])
        orelse = cst.Else(body=else_body)
        new = s.with_changes(body=then_body, orelse=orelse)
        for node, source in ((new, s), (then_body, s.body), (orelse, s.orelse or s), (else_body, s.orelse or s)):
            stand_in[id(node)] = (node, source)
        return stmts[:i] + [new]
    return stmts


def _binds_any(conv, s: cst.If, names: set[str]) -> bool:
    arm = list(s.body.body) + (list(s.orelse.body.body) if isinstance(s.orelse, cst.Else) else
                               [s.orelse] if isinstance(s.orelse, cst.If) else [])
    for inner in arm:
        if isinstance(inner, cst.If):
            if _binds_any(conv, inner, names):
                return True
            continue
        bound = _constexpr_binding(conv, inner)
        if bound is not None and bound[0] in names:
            return True
    return False


def _substituted(conv, stmts: list, names: set[str], stand_in: dict) -> list:
    """The statements with each `X: tl.constexpr = v` of `names` dropped and X read as (v) after it."""
    env: dict[str, cst.BaseExpression] = {}
    out = []
    for s in stmts:
        bound = _constexpr_binding(conv, s)
        if bound is not None and bound[0] in names and not isinstance(s, cst.If):
            env[bound[0]] = _replace(bound[1], env, stand_in)
            continue
        out.append(_replace(s, env, stand_in) if env else s)
    return out


class _Replace(cst.CSTTransformer):
    def __init__(self, env: dict, stand_in: dict):
        super().__init__()
        self.env, self.stand_in = env, stand_in

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return self._keep(original, updated.with_changes(attr=original.attr))

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return self._keep(original, updated.with_changes(keyword=original.keyword))

    def leave_Param(self, original: cst.Param, updated: cst.Param) -> cst.Param:
        return original  # a lambda's or a nested function's own names

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        value = self.env.get(original.value)
        if value is None:
            return updated
        if isinstance(value, (cst.Name, cst.Integer, cst.Float, cst.Attribute)) or value.lpar:
            return value
        wrapped = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        self.stand_in[id(wrapped)] = (wrapped, value)
        return wrapped

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        return self._keep(original, result)

    def _keep(self, original, updated):
        if updated is not original and isinstance(updated, cst.CSTNode) and id(updated) not in self.stand_in:
            self.stand_in[id(updated)] = (updated, original)
        return updated


def _replace(node, env: dict, stand_in: dict):
    if not env:
        return node
    return node.visit(_Replace(env, stand_in))
