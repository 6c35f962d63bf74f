"""Memory ops: tensor and partition views (tile loads with padding, stores of the in-bounds part), pointer
tiles over the flat memory (`offset`, masked gathers and scatters), atomics applied one element at a time in
C order (blocks run in a fixed order too), prints and asserts.

An unmasked access outside every array is an error (a wrong stride or a mask off by one shows up as such,
or as different numbers), never a read of whatever lies there.
"""

from __future__ import annotations

import re

import numpy as np

from .syntax import head, op, operand_types, refs, result_types, split_types, unknown
from .values import InterpretError, PartitionView, TensorView, np_dtype


def _value(env, item: str) -> int:
    item = item.strip()
    if item.startswith("%"):
        return int(np.asarray(env[item]))
    return int(item)


_VIEW_TYPE = re.compile(r"tensor_view<((?:[\d?]+x)*)([\w<>]+?)(?:, strides=\[([^\]]*)\])?>")


@op("make_tensor_view")
def _make_tensor_view(m, op_, env):
    h = head(op_)
    ptr = refs(h.split(",")[0])[0]
    shape_m = re.search(r"shape\s*=\s*\[([^\]]*)\]", h)
    strides_m = re.search(r"strides\s*=\s*\[([^\]]*)\]", h)
    _, types = split_types(op_.text)
    vt = _VIEW_TYPE.search(types.split("->")[-1])
    if not vt:
        raise unknown(op_, "has a view type the interpreter does not read")
    dims = [d for d in vt.group(1).split("x") if d]
    elem = vt.group(2)
    given_shape = [s for s in (shape_m.group(1).split(",") if shape_m else []) if s.strip()]
    given_strides = [s for s in (strides_m.group(1).split(",") if strides_m else []) if s.strip()]
    type_strides = [s.strip() for s in (vt.group(3) or "").split(",") if s.strip()]
    shape = _fill(dims, given_shape, env, op_)
    strides = _fill(type_strides, given_strides, env, op_) if type_strides else [_value(env, s) for s in given_strides]
    if len(strides) != len(shape):
        raise unknown(op_, "has strides that do not match its shape")
    base = int(np.asarray(env[ptr]))
    return [TensorView(base, elem, tuple(shape), tuple(strides))]


def _fill(static: list[str], given: list[str], env, op_) -> list[int]:
    """A view's extents: the type's static ones, `?` taken from the operand list (which lists either every
    extent or the dynamic ones only)."""
    if len(given) == len(static):
        return [_value(env, g) for g in given]
    dyn = iter(given)
    out = []
    for s in static:
        out.append(_value(env, next(dyn)) if s == "?" else int(s))
    if next(dyn, None) is not None:
        raise unknown(op_, "has more extents than its type")
    return out


@op("make_partition_view")
def _make_partition_view(m, op_, env):
    (tv,) = [env[r] for r in refs(head(op_))]
    _, types = split_types(op_.text)
    tile = re.search(r"tile=\(([\dx]+)\)", types)
    if not tile:
        raise unknown(op_, "has no tile shape")
    pad = re.search(r"padding_value\s*=\s*(\w+)", types)
    dim_map = re.search(r"dim_map\s*=\s*\[([\d,\s]*)\]", types)
    rest = re.sub(r"tile=\([\dx]+\)|padding_value\s*=\s*\w+|dim_map\s*=\s*\[[\d,\s]*\]|tensor_view<.*>", "",
                  types.split("partition_view<", 1)[1])
    if re.search(r"\w", rest):
        raise unknown(op_, f"has partition attributes the interpreter does not know ({rest.strip(' ,>')})")
    dm = tuple(int(d) for d in dim_map.group(1).split(",")) if dim_map else None
    return [PartitionView(tv, tuple(int(d) for d in tile.group(1).split("x")), pad.group(1) if pad else None, dm)]


_PADDING = {"zero": 0.0, "neg_zero": -0.0, "nan": np.nan, "pos_inf": np.inf, "neg_inf": -np.inf}


def _view_coords(pv: PartitionView, index: list[int]):
    """(addresses, in-bounds mask) of the tile at `index` of a partition view; tile dims map to view dims
    through dim_map (identity without one)."""
    tv = pv.view
    rank = len(tv.shape)
    if pv.dim_map is not None and pv.dim_map != tuple(range(rank)):
        raise InterpretError(f"partition view with dim_map {list(pv.dim_map)} (not modelled)")
    if len(index) != rank or len(pv.tile) != rank:
        raise InterpretError(f"partition index {index} for a rank-{rank} view")
    grids = np.meshgrid(*[np.arange(t) for t in pv.tile], indexing="ij")
    offset = np.zeros(pv.tile, np.int64)
    inb = np.ones(pv.tile, bool)
    for vdim in range(rank):
        c = index[vdim] * pv.tile[vdim] + grids[vdim]
        inb &= (c >= 0) & (c < tv.shape[vdim])
        offset += c.astype(np.int64) * tv.strides[vdim]
    size = np_dtype(tv.elem).itemsize
    return tv.base + offset * size, inb


def _index(env, op_) -> tuple[str, list[int]]:
    m = re.search(r"(%[\w.\-#]+)\[([^\]]*)\]", head(op_))
    if not m:
        raise unknown(op_, "has no view index")
    return m.group(1), [_value(env, i) for i in m.group(2).split(",") if i.strip()]


@op("load_view_tko")
def _load_view(m, op_, env):
    name, index = _index(env, op_)
    pv = env[name]
    addr, inb = _view_coords(pv, index)
    fill = _PADDING.get(pv.padding or "zero")
    if fill is None:
        raise unknown(op_, f"has padding {pv.padding}")
    elem = pv.view.elem
    if elem.startswith("i") and fill != 0.0:
        raise unknown(op_, f"pads an integer view with {pv.padding}")
    tile = m.memory.load(addr, elem, inb, fill)
    ty = result_types(op_)[0]
    return [tile.reshape(ty.shape), None]


@op("store_view_tko")
def _store_view(m, op_, env):
    value = np.asarray(env[refs(head(op_))[0]])
    name, index = _index(env, op_)
    pv = env[name]
    addr, inb = _view_coords(pv, index)
    m.memory.store(addr, pv.view.elem, value.reshape(addr.shape), inb)
    return [None]


def _ptr_operands(op_, env, n_values: int):
    """(pointers, pointee, values..., mask or None, other or None) of a pointer load/store/atomic: which
    optional operand is which is read from the operand types (the mask is the i1 tile)."""
    names = refs(head(op_).split("token")[0])
    types = operand_types(op_)
    if len(names) != len(types):
        raise unknown(op_, "has operands the interpreter does not match with their types")
    ptr_t = types[0]
    if ptr_t.pointee is None:
        raise unknown(op_, "does not start with a pointer tile")
    ptrs = np.asarray(env[names[0]])
    rest = list(zip(names[1:], types[1:]))
    values = [np.asarray(env[n]) for n, _ in rest[:n_values]]
    rest = rest[n_values:]
    mask = other = None
    # (the mask first; an i1 pointer's padding is i1 too, but a padding comes only with a mask)
    if rest and rest[0][1].elem == "i1":
        mask = np.asarray(env[rest[0][0]])
        rest = rest[1:]
    if rest:
        other = np.asarray(env[rest[0][0]])
        rest = rest[1:]
    if rest:
        raise unknown(op_, "has more operands than the interpreter reads")
    return ptrs, ptr_t.pointee, values, mask, other


@op("load_ptr_tko")
def _load_ptr(m, op_, env):
    ptrs, elem, _, mask, other = _ptr_operands(op_, env, 0)
    return [m.memory.load(ptrs, elem, mask, other), None]


@op("store_ptr_tko")
def _store_ptr(m, op_, env):
    ptrs, elem, (values,), mask, _ = _ptr_operands(op_, env, 1)
    m.memory.store(ptrs, elem, values, mask)
    return [None]


@op("offset")
def _offset(m, op_, env):
    p, off = (np.asarray(env[r]) for r in refs(head(op_)))
    pointee = operand_types(op_)[0].pointee
    if pointee is None:
        raise unknown(op_, "offsets a non-pointer")
    size = np_dtype(pointee).itemsize if pointee != "i1" else 1
    return [(p.astype(np.int64) + off.astype(np.int64) * size).reshape(result_types(op_)[0].shape)]


# ------------------------------------------------------------------------------------------ atomics

def _rmw(mode: str, elem: str):
    f = np_dtype(elem)
    unsigned = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
    table = {
        "addf": lambda a, b: f.type(a + b), "addi": lambda a, b: f.type(a + b), "add": lambda a, b: f.type(a + b),
        "maxf": lambda a, b: f.type(max(a, b)), "minf": lambda a, b: f.type(min(a, b)),
        "max": lambda a, b: f.type(max(a, b)), "min": lambda a, b: f.type(min(a, b)),
        "umax": lambda a, b: f.type(max(a.astype(unsigned[f.itemsize * 8]), b.astype(unsigned[f.itemsize * 8]))),
        "umin": lambda a, b: f.type(min(a.astype(unsigned[f.itemsize * 8]), b.astype(unsigned[f.itemsize * 8]))),
        "and": lambda a, b: f.type(a & b), "or": lambda a, b: f.type(a | b), "xor": lambda a, b: f.type(a ^ b),
        "xchg": lambda a, b: f.type(b),
    }
    return table.get(mode)


@op("atomic_rmw_tko")
def _atomic_rmw(m, op_, env):
    h = head(op_)
    mode = re.search(r"%[\w.\-#]+,\s*(\w+),", h)
    if not mode:
        raise unknown(op_, "has no operation")
    fn = _rmw(mode.group(1), operand_types(op_)[0].pointee or "")
    if fn is None:
        raise unknown(op_, f"has the operation {mode.group(1)}, not modelled")
    op2 = type(op_)(op_.results, op_.name, op_.text.replace(f", {mode.group(1)},", ",", 1))
    ptrs, elem, (values,), mask, _ = _ptr_operands(op2, env, 1)
    values = np.broadcast_to(values, ptrs.shape).reshape(-1)
    live = np.ones(ptrs.size, bool) if mask is None else np.broadcast_to(mask, ptrs.shape).reshape(-1)
    old = np.zeros(ptrs.size, np_dtype(elem))
    refs_ = m.memory.element_refs(np.where(live, ptrs.reshape(-1), 0)[live], elem, "atomic") if live.any() else []
    it = iter(refs_)
    with np.errstate(all="ignore"):
        for i in range(ptrs.size):
            if not live[i]:
                continue
            view, k = next(it)
            old[i] = view[k]
            view[k] = fn(view[k], values[i])
    return [old.reshape(ptrs.shape), None]


@op("atomic_red_view_tko")
def _atomic_red_view(m, op_, env):
    """`atomic_red_view_tko ORDER SCOPE %view[%i, ...], MODE, %tile`: the tile reduced into the view's tile at
    the index, element by element in row-major order (out-of-bounds lanes dropped); it returns no old values."""
    found = re.search(r"\]\s*,\s*(\w+)\s*,\s*(%[\w.\-#]+)", head(op_))
    if not found:
        raise unknown(op_, "has no operation and value")
    name, index = _index(env, op_)
    pv = env[name]
    elem = pv.view.elem
    fn = _rmw(found.group(1), elem)
    if fn is None:
        raise unknown(op_, f"has the operation {found.group(1)}, not modelled")
    addr, inb = _view_coords(pv, index)
    values = np.asarray(env[found.group(2)]).reshape(-1)
    addr, live = addr.reshape(-1), inb.reshape(-1)
    if values.size != addr.size:
        raise unknown(op_, f"adds a tile of {values.size} elements into a view tile of {addr.size}")
    it = iter(m.memory.element_refs(addr[live], elem, "atomic") if live.any() else [])
    with np.errstate(all="ignore"):
        for i in range(addr.size):
            if live[i]:
                view, k = next(it)
                view[k] = fn(view[k], values[i])
    return [None]


@op("atomic_cas_tko")
def _atomic_cas(m, op_, env):
    """`atomic_cas_tko ORDER SCOPE %ptrs, %cmp, %val[, %mask] : ptr type, value type[, mask type]`: the compared
    and the new value share one type in the printed form, so the operands are read by position."""
    names = refs(head(op_).split("token")[0])
    types = operand_types(op_)
    if not (3 <= len(names) <= 4) or types[0].pointee is None:
        raise unknown(op_, "has operands the interpreter does not match with their types")
    ptrs, elem = np.asarray(env[names[0]]), types[0].pointee
    cmp, values = np.asarray(env[names[1]]), np.asarray(env[names[2]])
    mask = np.asarray(env[names[3]]) if len(names) == 4 else None
    cmp = np.broadcast_to(cmp, ptrs.shape).reshape(-1)
    values = np.broadcast_to(values, ptrs.shape).reshape(-1)
    live = np.ones(ptrs.size, bool) if mask is None else np.broadcast_to(mask, ptrs.shape).reshape(-1)
    old = np.zeros(ptrs.size, np_dtype(elem))
    it = iter(m.memory.element_refs(ptrs.reshape(-1)[live], elem, "atomic") if live.any() else [])
    for i in range(ptrs.size):
        if not live[i]:
            continue
        view, k = next(it)
        old[i] = view[k]
        if view[k] == cmp[i]:
            view[k] = values[i]
    return [old.reshape(ptrs.shape), None]


@op("print_tko", "print")
def _print(m, op_, env):
    return [None] * len(op_.results)


@op("assert")
def _assert(m, op_, env):
    cond = np.asarray(env[refs(head(op_))[0]])
    if not cond.all():
        raise InterpretError(f"assert failed in block {m.block}: `{op_.text}`")
    return [None] * len(op_.results)
