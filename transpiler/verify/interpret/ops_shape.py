"""Shape ops (reshape, broadcast, permute, cat, extract), iota, block ids and counts, reductions and scans with
their regions, and the matrix multiply-accumulates (mmaf, mmai).

A reduction combines halves pairwise (a tree, as a GPU does; an odd leftover is carried to the next level)
and a scan runs element by element; both run their region vectorized over the other dimensions. mmaf
multiplies in f64 and rounds once to the accumulator's type (tf32 operands were rounded where the IR
converted them with `ftof`).
"""

from __future__ import annotations

import re

import numpy as np

from .syntax import head, op, refs, result_types, unknown
from .values import InterpretError, np_dtype


def _args(env, op_):
    return [np.asarray(env[r]) for r in refs(head(op_))]


@op("reshape")
def _reshape(m, op_, env):
    (x,) = _args(env, op_)
    return [np.reshape(x, result_types(op_)[0].shape)]


@op("broadcast")
def _broadcast(m, op_, env):
    (x,) = _args(env, op_)
    shape = result_types(op_)[0].shape
    if x.ndim != len(shape):
        raise unknown(op_, f"broadcasts rank {x.ndim} to rank {len(shape)}")
    return [np.broadcast_to(x, shape)]


@op("permute")
def _permute(m, op_, env):
    (x,) = _args(env, op_)
    perm = re.search(r"\[([\d,\s]+)\]", head(op_))
    if not perm:
        raise unknown(op_, "has no permutation")
    return [np.transpose(x, [int(p) for p in perm.group(1).split(",")])]


@op("cat")
def _cat(m, op_, env):
    xs = _args(env, op_)
    dim = re.search(r"dim\s*=\s*(\d+)", head(op_))
    if not dim:
        raise unknown(op_, "has no dim")
    return [np.concatenate(xs, axis=int(dim.group(1)))]


@op("extract")
def _extract(m, op_, env):
    names = refs(head(op_))
    x = np.asarray(env[names[0]])
    idx = [int(np.asarray(env[r])) for r in names[1:]]
    shape = result_types(op_)[0].shape
    if len(idx) != x.ndim or len(shape) != x.ndim:
        raise unknown(op_, "has indices that do not match the rank")
    sl = tuple(slice(i * s, (i + 1) * s) for i, s in zip(idx, shape))
    r = x[sl]
    if r.shape != shape:
        raise InterpretError(f"`extract` at {idx} of {x.shape} is out of bounds")
    return [r]


@op("iota")
def _iota(m, op_, env):
    ty = result_types(op_)[0]
    if len(ty.shape) != 1:
        raise unknown(op_, "is not rank 1")
    return [np.arange(ty.shape[0]).astype(np_dtype(ty.elem))]


@op("get_tile_block_id")
def _block_id(m, op_, env):
    return [np.array(v, np.int32) for v in m.block]


@op("get_num_tile_blocks")
def _num_blocks(m, op_, env):
    return [np.array(v, np.int32) for v in m.grid]


# ------------------------------------------------------------------------------------------ reductions

def _dim(op_) -> int:
    d = re.search(r"\bdim\s*=\s*(\d+)", op_.text)
    if not d:
        raise unknown(op_, "has no dim")
    return int(d.group(1))


def _combine(m, op_, env, lhs: list, rhs: list) -> list:
    exit_ = m.call_region(op_.regions[0], env, lhs + rhs)
    if exit_.kind != "yield":
        raise InterpretError(f"`{op_.name}` region ended with `{exit_.kind}`")
    return [np.asarray(v) for v in exit_.values]


def _identities(op_, n: int, xs: list) -> list[np.ndarray]:
    """The `identities=[v : type, ...]` of a reduce or scan (`[v]`: the operand's type), as 0-d arrays."""
    from .values import np_dtype as dt
    found = re.search(r"identities\s*=\s*\[(.*?)\]", op_.text)
    items = [i.strip() for i in found.group(1).split(",")] if found else []
    if len(items) != n:
        raise unknown(op_, "has identities the interpreter does not read")
    out = []
    for item, x in zip(items, xs):
        raw, _, elem = (v.strip() for v in item.rpartition(":"))
        if not raw:  # no type: the operand's
            raw = elem
        kind = dt(elem) if _ else x.dtype
        if raw.lower().startswith("0x"):
            width = kind.itemsize
            out.append(np.array(int(raw, 16), {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[width]).view(kind))
        elif raw in ("true", "false"):
            out.append(np.array(raw == "true"))
        else:
            out.append(np.array(float(raw) if kind.kind == "f" or kind.kind == "V" else int(raw)).astype(kind))
    return out


def _with_identity(m, op_, env, xs: list) -> list:
    """The first element of the combined dimension combined with the identity (a no-op for a true identity; a
    wrong one shows, as it would in a GPU's padded tree or a scan's seed)."""
    ids = _identities(op_, len(xs), xs)
    first = _combine(m, op_, env, [np.broadcast_to(i, x[..., 0].shape) for i, x in zip(ids, xs)],
                     [x[..., 0] for x in xs])
    out = []
    for x, f in zip(xs, first):
        x = np.array(x)
        x[..., 0] = f
        out.append(x)
    return out


@op("reduce")
def _reduce(m, op_, env):
    names = refs(op_.text.split(" dim")[0])
    xs = [np.moveaxis(np.asarray(env[r]), _dim(op_), -1) for r in names]
    if len(op_.regions) != 1 or len(op_.regions[0].args) != 2 * len(xs):
        raise unknown(op_, "has a region the interpreter does not read")
    xs = _with_identity(m, op_, env, xs)
    while xs[0].shape[-1] > 1:
        n = xs[0].shape[-1]
        h = n // 2
        combined = _combine(m, op_, env, [x[..., :h] for x in xs], [x[..., h:2 * h] for x in xs])
        combined = [np.broadcast_to(c, xs[0][..., :h].shape) for c in combined]
        xs = [np.concatenate([c, x[..., 2 * h:]], axis=-1) if n % 2 else c for c, x in zip(combined, xs)]
    types = result_types(op_)
    return [x[..., 0].reshape(t.shape).astype(np_dtype(t.elem)) for x, t in zip(xs, types)]


@op("scan")
def _scan(m, op_, env):
    names = refs(op_.text.split(" dim")[0])
    dim = _dim(op_)
    reverse = re.search(r"reverse\s*=\s*true", op_.text) is not None
    xs = [np.moveaxis(np.asarray(env[r]), dim, -1) for r in names]
    if len(op_.regions) != 1 or len(op_.regions[0].args) != 2 * len(xs):
        raise unknown(op_, "has a region the interpreter does not read")
    n = xs[0].shape[-1]
    if reverse:  # the seed goes to the element the scan starts from
        xs = [x[..., ::-1] for x in _with_identity(m, op_, env, [x[..., ::-1] for x in xs])]
    else:
        xs = _with_identity(m, op_, env, xs)
    order = range(n - 1, -1, -1) if reverse else range(n)
    outs = [np.empty(x.shape, x.dtype) for x in xs]
    acc = None
    for i in order:
        cur = [x[..., i] for x in xs]
        acc = cur if acc is None else _combine(m, op_, env, acc, cur)
        for o, a in zip(outs, acc):
            o[..., i] = a
    types = result_types(op_)
    return [np.moveaxis(o, -1, dim).astype(np_dtype(t.elem)) for o, t in zip(outs, types)]


# ------------------------------------------------------------------------------------------ mma

@op("mmaf")
def _mmaf(m, op_, env):
    a, b, c = _args(env, op_)
    ty = result_types(op_)[0]
    with np.errstate(all="ignore"):
        r = np.matmul(a.astype(np.float64), b.astype(np.float64)) + c.astype(np.float64)
    return [r.astype(np_dtype(ty.elem))]


@op("mmai")
def _mmai(m, op_, env):
    a, b, c = _args(env, op_)
    words = re.findall(r"\b(signed|unsigned)\b", head(op_))
    if len(words) < 2:
        raise unknown(op_, "has no signedness of its operands")
    a = a.astype(np.int64) if words[0] == "signed" else a.astype(np.uint8 if a.itemsize == 1 else a.dtype).astype(np.int64)
    b = b.astype(np.int64) if words[1] == "signed" else b.astype(np.uint8 if b.itemsize == 1 else b.dtype).astype(np.int64)
    ty = result_types(op_)[0]
    return [(np.matmul(a, b) + c.astype(np.int64)).astype(np_dtype(ty.elem))]
