"""Walks over model statements that several stages share, and the rewrites of one `if` in a body."""

from __future__ import annotations

from dataclasses import replace

from .ir import Assign, Eval, For, If, Lit, Name, Op, Stmt, TupleExpr, While


def sub_exprs(e):
    """An expression and every expression inside it (an op's arguments and expression attrs, a tuple's items)."""
    yield e
    if isinstance(e, Op):
        for a in e.args:
            if a is not None:
                yield from sub_exprs(a)
        for _, v in e.attrs:
            if isinstance(v, (Op, Name, Lit, TupleExpr)):
                yield from sub_exprs(v)
    elif isinstance(e, TupleExpr):
        for a in e.items:
            yield from sub_exprs(a)


def all_stmts(stmts):
    """Every statement, those in nested blocks too, in order (a block's own statements after its head)."""
    for s in stmts:
        yield s
        if isinstance(s, (For, While)):
            yield from all_stmts(s.body)
        elif isinstance(s, If):
            yield from all_stmts(s.body)
            yield from all_stmts(s.orelse)


def assigned_names(stmts) -> set[str]:
    """The names the statements assign, in nested blocks too (loop variables included)."""
    out: set[str] = set()
    for s in all_stmts(stmts):
        if isinstance(s, Assign):
            out.update(s.targets)
        elif isinstance(s, For):
            out.add(s.var)
    return out


def first_const_if(stmts, splits) -> If | None:
    """The first constant `if` (outer before inner, in program order) for which `splits(node)` holds: where a
    pass splits a kernel into a variant per arm."""
    for s in stmts:
        if isinstance(s, If) and s.const and splits(s):
            return s
        for block in (s.body, s.orelse) if isinstance(s, If) else (s.body,) if isinstance(s, (For, While)) else ():
            found = first_const_if(block, splits)
            if found is not None:
                return found
    return None

def walk_exprs(stmts):
    """Every expression of the statements and of those in nested blocks, each with its sub-expressions."""
    for s in stmts:
        if isinstance(s, (Assign, Eval)):
            yield from sub_exprs(s.value)
        elif isinstance(s, For):
            for e in (s.start, s.stop, s.step):
                yield from sub_exprs(e)
            yield from walk_exprs(s.body)
        elif isinstance(s, If):
            yield from sub_exprs(s.cond)
            yield from walk_exprs(s.body)
            yield from walk_exprs(s.orelse)
        elif isinstance(s, While):
            yield from sub_exprs(s.cond)
            yield from walk_exprs(s.body)


def stmt_exprs(s) -> list:
    """The expressions a statement itself holds (not those of its nested blocks)."""
    if isinstance(s, (Assign, Eval)):
        return [s.value]
    if isinstance(s, For):
        return [s.start, s.stop, s.step]
    if isinstance(s, (If, While)):
        return [s.cond]
    return []


def expr_names(e, out: set[str]) -> None:
    """Adds the names an expression reads to `out`."""
    if isinstance(e, Name):
        out.add(e.id)
    elif isinstance(e, TupleExpr):
        for i in e.items:
            expr_names(i, out)
    elif isinstance(e, Op):
        for a in e.args:
            if a is not None:
                expr_names(a, out)
        for _, v in e.attrs:
            if isinstance(v, (Name, Op, TupleExpr)):
                expr_names(v, out)


def rewrite_at(stmts: tuple[Stmt, ...], node: If, make) -> tuple[Stmt, ...]:
    """`stmts` with the `if` `node` (found by identity, at any depth) replaced by the statements `make(node)`."""
    out: list[Stmt] = []
    for s in stmts:
        if s is node:
            out.extend(make(s))
        elif isinstance(s, (For, While)):
            out.append(replace(s, body=rewrite_at(s.body, node, make)))
        elif isinstance(s, If):
            out.append(replace(s, body=rewrite_at(s.body, node, make), orelse=rewrite_at(s.orelse, node, make)))
        else:
            out.append(s)
    return tuple(out)


def replace_if(stmts: tuple[Stmt, ...], node: If, take_then: bool) -> tuple[Stmt, ...]:
    """`stmts` with the constant `if` `node` folded to one arm."""
    return rewrite_at(stmts, node, lambda s: s.body if take_then else s.orelse)


def if_at(stmts: tuple[Stmt, ...], pos) -> If | None:
    """The source `if` at `pos` (one per position: a helper inlined twice has two, and is not split)."""
    found = []

    def walk(ss):
        for s in ss:
            if isinstance(s, If):
                if s.pos == pos:
                    found.append(s)
                walk(s.body)
                walk(s.orelse)
            elif isinstance(s, (For, While)):
                walk(s.body)
    walk(stmts)
    return found[0] if len(found) == 1 else None
