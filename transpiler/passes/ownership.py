"""Output ownership: which written arrays can be a checked, disjoint `&mut Tensor` split.

An array gets the checked form when every access to it is a `ct.store` at exactly the block's own
tile index, `(ct.bid(0), ..., ct.bid(r-1))`, with one tile shape, and its rank is at most 3: then
each block writes only its own tile, the launcher's partition grid is the tile grid, and rustc
plus cuTile Rust check the disjointness. Everything else that is written (persistent loops,
computed, offset or constant indices, loads of the output) keeps the unchecked in-kernel
partition, and the reason is recorded. A Triton pointer reaches here as such a store where passes/views.py
proved every store of it is its program's own tile of one view; else it is written element by element.
"""

from __future__ import annotations

from dataclasses import replace

from ..model.ir import RMW_OPS, Assign, Eval, For, If, Kernel, Lit, Name, Op, TupleExpr, While, array_root
from ..model.walk import all_stmts, assigned_names, sub_exprs, walk_exprs


def block_axis(e, bound: dict) -> int | None:
    if isinstance(e, Name) and e.id in bound:
        e = bound[e.id]
    if isinstance(e, Op) and e.op == "bid" and isinstance(e.args[0], Lit):
        return e.args[0].value
    return None


def assigned_once(kernel: Kernel) -> dict:
    """Each name assigned exactly once in the kernel (never a loop variable) -> its value."""
    counts: dict[str, int] = {}
    for s in all_stmts(kernel.body):
        if isinstance(s, Assign):
            for t in s.targets:
                counts[t] = counts.get(t, 0) + 1
        if isinstance(s, For):
            counts[s.var] = counts.get(s.var, 0) + 2
    return {s.targets[0]: s.value for s in all_stmts(kernel.body)
            if isinstance(s, Assign) and len(s.targets) == 1 and counts.get(s.targets[0]) == 1}


def own_tile_index(index, bound: dict) -> bool:
    """A store index that is exactly the block's own tile, (ct.bid(0), ..., ct.bid(r-1)) (`tl.program_id`
    in a Triton kernel), each axis the id itself or a name assigned it once."""
    return [block_axis(i, bound) for i in index] == list(range(len(index)))


def analyze_outputs(kernel: Kernel) -> Kernel:
    bound = assigned_once(kernel)
    stores: dict[str, list[Op]] = {}
    other_uses: set[str] = set()
    element_writes: set[str] = set()
    view_atomics: set[str] = set()
    view_writes: set[str] = set()
    in_loop: set[str] = set()
    sliced: set[str] = set()
    for s in all_stmts(kernel.body):
        exprs = []
        if isinstance(s, (Assign, Eval)):
            exprs = [s.value]
        elif isinstance(s, For):
            exprs = [s.start, s.stop, s.step]
        elif isinstance(s, (If, While)):
            exprs = [s.cond]
        for root in exprs:
            for e in sub_exprs(root):
                if isinstance(e, Op) and e.op == "store":
                    stores.setdefault(array_root(e.args[0]), []).append(e)
                elif isinstance(e, Op) and e.op in ("scatter", *RMW_OPS):
                    if isinstance(e.args[0], Name):  # else a pointer loaded from memory: no parameter's array
                        element_writes.add(array_root(e.args[0]))
                elif isinstance(e, Op) and e.op == "view_store" and isinstance(e.args[0], Name) \
                        and array_root(e.args[0]) not in element_writes:
                    view_writes.add(array_root(e.args[0]))  # a Triton tile store through a view of a raw pointer
                elif isinstance(e, Op) and e.op == "view_atomic_add":
                    view_atomics.add(array_root(e.args[0]))
                elif isinstance(e, Op) and e.args and isinstance(e.args[0], Name) and e.op in (
                        "load", "load_advanced", "num_tiles", "array_dim", "shape_of", "array_slice"):
                    other_uses.add(array_root(e.args[0]))
                    if e.op == "array_slice":
                        sliced.add(array_root(e.args[0]))
    outputs = []
    for p in kernel.params:
        if p.kind == "array" and p.name in element_writes:
            why = "written element by element (scatter/atomics) through a raw pointer"
            outputs.append((p.name, "unchecked", f"{why}: {p.unowned}" if p.unowned else why))
            continue
        if p.kind == "array" and p.name in view_writes:
            why = "written by tiles through a view the kernel makes from a raw pointer"
            outputs.append((p.name, "unchecked", f"{why}: {p.unowned}" if p.unowned else why))
            continue
        if p.kind == "array" and p.name in view_atomics:
            outputs.append((p.name, "unchecked", "updated by atomic adds through a tiled view (the atomic_red_view_tko "
                            "of an in-kernel partition)"))
            continue
        if p.kind != "array" or p.name not in stores:
            continue
        reason = ""
        ops = stores[p.name]
        if p.pointer and p.name in sliced:
            reason = "the array is sliced (Array.slice), so it is a raw pointer and its views are made in the kernel"
        elif p.pointer:
            reason = "the array is also accessed element by element (gather/scatter), so it is a raw pointer"
        elif p.rank > 3:
            reason = "rank above 3 (launch grids have 3 axes)"
        elif p.name in other_uses:
            reason = "the array is also read in the kernel (data or shape)"
        elif len({op.args[2].ty.shape for op in ops}) != 1:
            reason = "stores use different tile shapes"
        elif any(op.attr("latency") is not None or op.attr("allow_tma") is False for op in ops):
            reason = "a store carries a hint (latency=, allow_tma=), which a checked `&mut Tensor` store drops"
        else:
            for op in ops:
                if not own_tile_index(op.args[1].items, bound):
                    reason = "a store index is not the block's own tile index (ct.bid(0), ..., ct.bid(r-1))"
                    break
        if reason:
            outputs.append((p.name, "unchecked", reason))
        else:
            outputs.append((p.name, "checked", "every block stores only the tile at its own block index"))
    return replace(kernel, outputs=tuple(outputs), span_inputs=tuple(sorted(span_inputs(kernel))))


READ_ONLY_ACCESSES = frozenset({"gather", "view_load"})


def span_inputs(kernel: Kernel) -> set[str]:
    """The Triton pointers the kernel only reads, each named only as the pointer of a gather or a tile view's
    load of its own element type: the port takes them as a `&Tensor` of the argument's span (the launcher passes
    its address, extent and unit stride, as for a raw pointer and its extents) and reads through `*const`
    pointers made from it, so the entry takes no raw pointer for them. Optional pointers (None: a null
    address), host descriptors, placeholders and pointers read as another element type keep the raw pointer."""
    if kernel.frontend != "triton":
        return set()
    optional = {p.given_of for p in kernel.params if p.given_of}
    assigned = assigned_names(kernel.body)
    names: dict[str, int] = {}  # every mention of a name
    reads: dict[str, int] = {}  # mentions as the pointer of a read of its own element type
    for e in walk_exprs(kernel.body):
        if isinstance(e, Name):
            names[e.id] = names.get(e.id, 0) + 1
        elif isinstance(e, Op) and e.op in READ_ONLY_ACCESSES and e.args and isinstance(e.args[0], Name) \
                and e.attr("flat") and not e.attr("elem"):
            reads[e.args[0].id] = reads.get(e.args[0].id, 0) + 1
    return {p.name for p in kernel.params
            if p.kind == "array" and p.flat and p.pointer and not p.view and not p.descriptor and not p.unused
            and p.name not in optional and p.name not in assigned and names.get(p.name, 0) == reads.get(p.name, 0)}

