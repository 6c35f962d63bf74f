"""Names the lowering derives from a kernel's parameters, kept apart from the kernel's own names.

A pointer parameter `src` arrives in Rust as `src` plus its extents `src_shape0`, `src_stride0`, ... and a tile
view of it is made from locals `src_base`, `src_dims`, `src_strides`, `src_view` (emit/lower.py). A kernel may
have its own `src_stride0` (a parameter, or a local): the derived name then takes trailing `_`s until it is free,
so the Rust binds each name once. Extents are entry parameters, so the C symbol (emit/ffi.py) labels them with
the same names: both call `extent_names` with the parameters alone. Locals that still collide (with an extent
or a view local) are renamed by `rename_locals` before lowering.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace

from ..model.ir import Assign, For, If, Kernel, Name
from ..model.walk import all_stmts, assigned_names

VIEW_LOCALS = ("base", "dims", "strides", "view", "tok_access", "tok_store")


def _free(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def extent_names(params: list[tuple[str, int]], own: set[str]) -> dict[str, tuple[list[str], list[str]]]:
    """Each pointer's (rust name, rank) -> its shape and stride parameters' names, none of them in `own` (the
    rust names of every parameter) nor another pointer's."""
    taken = set(own)
    out = {}
    for n, rank in params:
        shapes = [_free(f"{n}_shape{i}", taken) for i in range(rank)]
        strides = [_free(f"{n}_stride{i}", taken) for i in range(rank)]
        out[n] = (shapes, strides)
    return out


def rename_locals(kernel: Kernel, reserved: set[str], rust_ident) -> Kernel:
    """The kernel with every local (an assigned name that is no parameter) whose Rust name is in `reserved`
    renamed to a free one (trailing `_`s); reads, loop variables and an `if`'s declared names follow."""
    params = {p.name for p in kernel.params}
    locals_ = sorted(n for n in assigned_names(kernel.body) if n not in params)
    for s in all_stmts(kernel.body):
        if isinstance(s, If):
            locals_ += [n for n, _ in s.declares if n not in params and n not in locals_]
    taken = {rust_ident(n) for n in params} | {rust_ident(n) for n in locals_} | set(reserved)
    mapping = {}
    for n in locals_:
        if rust_ident(n) in reserved:
            mapping[n] = _free(n + "_", taken)
    if not mapping:
        return kernel
    return replace(kernel, body=tuple(_renamed(s, mapping) for s in kernel.body))


def _renamed(node, mapping: dict[str, str]):
    if isinstance(node, tuple):
        return tuple(_renamed(x, mapping) for x in node)
    if not is_dataclass(node):
        return node
    if isinstance(node, Name):
        return replace(node, id=mapping.get(node.id, node.id))
    changes = {f.name: _renamed(getattr(node, f.name), mapping) for f in fields(node)
               if f.name not in ("pos", "ty", "attrs")}
    if isinstance(node, Assign):
        changes["targets"] = tuple(mapping.get(t, t) for t in node.targets)
    elif isinstance(node, For):
        changes["var"] = mapping.get(node.var, node.var)
    elif isinstance(node, If):
        changes["declares"] = tuple((mapping.get(n, n), t) for n, t in node.declares)
    return replace(node, **changes)


def rename_rebound_constants(kernel: Kernel, rust_ident) -> Kernel:
    """`S = i == j + 1` where `S` is a constexpr parameter (legal Python): a const generic cannot be rebound
    by `let`, so from that statement on the local is `S_` (reads before it still read the constant). Only a
    top-level rebinding is renamed this way; one inside a loop or an `if` is refused (a read at the loop's head
    would mean either)."""
    from ..diagnostics import fail
    consts = {p.name for p in kernel.params if p.kind == "const"}
    for s in kernel.body:
        if not isinstance(s, Assign):
            nested = (assigned_names([s]) & consts) - {s.var if isinstance(s, For) else ""}
            if nested:
                raise fail("CT100", f"constexpr `{sorted(nested)[0]}` is assigned inside a block: a constant "
                           "cannot be rebound there in the port; give the local another name", s.pos)
    body = list(kernel.body)
    taken = {rust_ident(n) for n in assigned_names(body) | {p.name for p in kernel.params}}
    for i, s in enumerate(body):
        hit = [t for t in s.targets if t in consts] if isinstance(s, Assign) else []
        for c in hit:
            new = _free(c + "_", taken)
            rest = tuple(_renamed(x, {c: new}) for x in body[i + 1:])
            body = body[:i] + [replace(body[i], targets=tuple(new if t == c else t for t in body[i].targets))] \
                + list(rest)
            consts.discard(c)
    return replace(kernel, body=tuple(body))
