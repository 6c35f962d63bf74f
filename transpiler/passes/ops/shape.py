"""Shape family: ops that rearrange a tile's elements or read shapes, without computing on the elements
(reshape, `[None, :]` indexing, expand_dims, broadcast_to, permute/transpose, cat, extract, item, and the
rank and dimensions of arrays and tiles)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace

from typing import TYPE_CHECKING

from ...diagnostics import fail
from ...model.ir import ArrayTy, Expr, Lit, Name, Op, TileTy, TupleExpr
from ..type_rules import unify_generics
from .registry import handler

if TYPE_CHECKING:
    from ..infer import Infer


@handler("reshape")
def reshape(infer: Infer, e: Op) -> Expr:
    x = infer.expr(e.args[0])
    shape = infer.shape_dims(e.args[1])
    if shape == x.ty.shape:
        return x
    if isinstance(x.ty, TileTy) and infer.element_count(x.ty.shape) != infer.element_count(shape):
        (la, na), (lb, nb) = infer.element_count(x.ty.shape), infer.element_count(shape)
        if not na and not nb:
            raise fail("CT104", f"a reshape of {la} elements ({', '.join(x.ty.shape)}) into {lb} "
                       f"({', '.join(shape)})", e.pos)
        # equal only for some constants (`(ROWS, BLOCK)` into `(ROWS, WARPS, 2, 16)`): a variant for those. The
        # factors both counts share are left out (a tile extent is never 0, so `ROWS * B == ROWS * W * 32` holds
        # exactly where `B == W * 32`): a later `if W == 4` is then decided by the predicate, not split into a
        # variant only ROWS = 0 could select
        ca, cb = Counter(na), Counter(nb)
        ra, rb = sorted((ca - cb).elements()), sorted((cb - ca).elements())
        g = math.gcd(la, lb)
        la, lb = la // g, lb // g
        if not ra and not rb:
            if la != lb:
                raise fail("CT104", f"a reshape of ({', '.join(x.ty.shape)}) into ({', '.join(shape)}): the element "
                           f"counts are never equal (their common factors times {la} and times {lb})", e.pos)
        else:
            count = lambda lit, atoms: " * ".join(([str(lit)] if lit != 1 or not atoms else [])  # noqa: E731
                                                  + [f"({a})" for a in atoms])
            infer.require(f"{count(la, ra)} == {count(lb, rb)}")
    return Op("reshape", (x,), e.pos, rule=e.rule, ty=TileTy(x.ty.dtype, shape))


@handler("index_none")
def index_none(infer: Infer, e: Op) -> Expr:
    x = infer.expr(e.args[0])
    pattern = e.attr("pattern")
    if not isinstance(x.ty, TileTy):
        raise fail("CT104", f"`[{', '.join(pattern)}]` indexes tiles and scalars, not an array ({x.ty})", e.pos)
    dims = list(x.ty.shape)
    if infer.k.frontend == "triton" and not dims and isinstance(x.ty, TileTy):
        # a scalar: Triton's `:` checks no dimension, and each `None` inserts one (the first splats the scalar):
        # `pid[:, None]` is a tile of shape (1)
        ones = tuple("1" for p in pattern if p == "None")
        return Op("reshape", (x,), e.pos, rule=e.rule, ty=TileTy(x.ty.dtype, ones)) if ones else x
    out, it = [], iter(dims)
    for p in pattern:
        out.append("1" if p == "None" else next(it, None))
    out.extend(it)
    if None in out:
        raise fail("CT104", "index has more `:` than the tile has dimensions", e.pos)
    return Op("reshape", (x,), e.pos, rule=e.rule, ty=TileTy(x.ty.dtype, tuple(out)))


@handler("expand_dims")
def expand_dims(infer: Infer, e: Op) -> Op:
    x = infer.expr(e.args[0])
    axis = e.args[1]
    if not (isinstance(axis, Lit) and isinstance(axis.value, int)):
        raise fail(e.rule, "`axis` must be an integer literal", e.pos)
    shape = list(x.ty.shape)
    shape.insert(axis.value % (len(shape) + 1), "1")
    return Op("reshape", (x,), e.pos, rule=e.rule, ty=TileTy(x.ty.dtype, tuple(shape)))


@handler("broadcast_to")
def broadcast_to(infer: Infer, e: Op) -> Expr:
    x = infer.expr(e.args[0])
    return infer.to_shape(x, infer.shape_dims(e.args[1]))


@handler("transpose", "permute")
def permute(infer: Infer, e: Op) -> Expr:
    x = infer.expr(e.args[0])
    rank = len(x.ty.shape)
    if rank == 0:
        raise fail(e.rule, "a transpose or permutation needs a tile of rank 1 or more (this one is a scalar)", e.pos)
    if e.op == "transpose":
        axes = [a.value if isinstance(a, Lit) else None for a in e.args[1:] if a is not None]
        if not axes:
            if rank != 2:
                raise fail(e.rule, "ct.transpose without axes needs a rank-2 tile", e.pos)
            axes = [0, 1]
        if len(axes) != 2 or None in axes:
            raise fail(e.rule, "ct.transpose axes must be two integer literals", e.pos)
        perm = list(range(rank))
        i, j = (a % rank for a in axes)
        perm[i], perm[j] = perm[j], perm[i]
    else:
        src = e.args[1]
        items = list(src.items) if isinstance(src, TupleExpr) else [src]
        extra = e.attr("axes_extra")
        if extra is not None:
            items += list(extra.items)
        if not all(isinstance(a, Lit) for a in items) or sorted(a.value % rank for a in items) != list(range(rank)):
            raise fail(e.rule, "ct.permute needs a permutation of integer literals", e.pos)
        perm = [a.value % rank for a in items]
    if perm == list(range(rank)):
        return x
    shape = tuple(x.ty.shape[p] for p in perm)
    return Op("permute", (x,), e.pos, (("perm", tuple(perm)),), e.rule, TileTy(x.ty.dtype, shape))


@handler("cat")
def cat(infer: Infer, e: Op) -> Op:
    tiles = e.args[0]
    if not isinstance(tiles, TupleExpr) or len(tiles.items) != 2:
        raise fail(e.rule, "ct.cat takes a tuple of exactly two tiles", e.pos)
    a, b = (infer.expr(t) for t in tiles.items)
    axis = e.args[1]
    if not (isinstance(axis, Lit) and isinstance(axis.value, int)):
        raise fail(e.rule, "`axis` must be an integer literal", e.pos)
    rank = len(a.ty.shape)
    ax = axis.value % rank
    unify_generics(a.ty.dtype, b.ty.dtype)
    if a.ty.dtype != b.ty.dtype or len(b.ty.shape) != rank or any(
            x != y for i, (x, y) in enumerate(zip(a.ty.shape, b.ty.shape)) if i != ax):
        raise fail(e.rule, f"cannot concatenate {a.ty} and {b.ty} along axis {ax}", e.pos)
    da, db = a.ty.shape[ax], b.ty.shape[ax]
    if da.isdigit() and db.isdigit():
        total = str(int(da) + int(db))
    else:  # a const generic computed by the launcher (stable Rust has no type-level arithmetic)
        total = f"{da}_ADD_{db}".upper()
        infer.derived[total] = f"(({infer.derived.get(da, da)}) + ({infer.derived.get(db, db)}))"
        total = infer.dim(total)
    shape = tuple(total if i == ax else d for i, d in enumerate(a.ty.shape))
    return Op("cat", (a, b), e.pos, (("axis", ax),), e.rule, TileTy(a.ty.dtype, shape))


@handler("extract")
def extract(infer: Infer, e: Op) -> Op:
    x = infer.expr(e.args[0])
    idx = e.args[1]
    items = idx.items if isinstance(idx, TupleExpr) else (idx,)
    if len(items) != len(x.ty.shape):
        raise fail(e.rule, "ct.extract needs one index per dimension", e.pos)
    index = TupleExpr(tuple(infer.scalar_int(i) for i in items), e.pos)
    shape = infer.shape_dims(e.args[2])
    return Op("extract", (x, index), e.pos, rule=e.rule, ty=TileTy(x.ty.dtype, shape))


@handler("split_half")
def split_half(infer: Infer, e: Op) -> Op:
    """One half of Triton's `tl.split(x)` (x's last dimension is 2): `extract` of that slice, reshaped without
    the dimension."""
    x = infer.expr(e.args[0])
    shape = x.ty.shape if isinstance(x.ty, TileTy) else ()
    if not shape or shape[-1] != "2":
        raise fail(e.rule, f"`tl.split` needs a tile whose last dimension is 2, got {x.ty}", e.pos)
    index = TupleExpr(tuple(infer.scalar_int(Lit(v, e.pos)) for v in [0] * (len(shape) - 1) + [e.attr("index")]),
                      e.pos)
    half = Op("extract", (x, index), e.pos, rule=e.rule, ty=TileTy(x.ty.dtype, shape[:-1] + ("1",)))
    return Op("reshape", (half,), e.pos, rule=e.rule, ty=TileTy(x.ty.dtype, shape[:-1]))


@handler("join_pair")
def join_pair(infer: Infer, e: Op) -> Op:
    """Triton's `tl.join(a, b)`: a and b (broadcast to one shape, one dtype) stacked on a new last dimension of
    2, i.e. each reshaped to [..., 1] and concatenated on that dimension."""
    a, b = infer.expr(e.args[0]), infer.expr(e.args[1])
    if not (isinstance(a.ty, TileTy) and isinstance(b.ty, TileTy)):
        raise fail(e.rule, "`tl.join` takes two tiles", e.pos)
    unify_generics(a.ty.dtype, b.ty.dtype)
    if a.ty.dtype != b.ty.dtype:
        raise fail(e.rule, f"`tl.join` of {a.ty.dtype} and {b.ty.dtype} tiles (Triton requires one dtype)", e.pos)
    shape = infer.broadcast(a.ty.shape, b.ty.shape, e.pos)
    if not shape:
        raise fail(e.rule, "`tl.join` of two scalars is not supported", e.pos)
    parts = tuple(Op("reshape", (infer.to_shape(x, shape),), e.pos, rule=e.rule, ty=TileTy(x.ty.dtype, shape + ("1",)))
                  for x in (a, b))
    return Op("cat", parts, e.pos, (("axis", len(shape)),), e.rule, TileTy(a.ty.dtype, shape + ("2",)))


@handler("interleave")
def interleave(infer: Infer, e: Op) -> Op:
    """Triton's `tl.interleave(a, b)`, as Triton defines it (language/standard.py): `tl.join(a, b)` reshaped to
    the last dimension doubled (`[a0, b0, a1, b1, ...]`); two scalars make a tile of 2."""
    j = join_pair(infer, replace(e, op="join_pair"))
    lead, n = j.ty.shape[:-2], j.ty.shape[-2]
    if n.isdigit():
        doubled = str(2 * int(n))
    elif n in infer.consts or n in infer.derived:  # (a derived extent: `BLOCK * 2`, doubled again)
        doubled = infer.derived_name(Op("mul", (Lit(2, e.pos), Name(n, e.pos)), e.pos, rule="TTR-MUL"))
    else:
        raise fail(e.rule, f"`tl.interleave` of tiles whose last dimension is `{n}` (computed from constants): "
                   "interleave tiles whose last dimension is a literal or a constexpr", e.pos)
    return Op("reshape", (j,), e.pos, rule=e.rule, ty=TileTy(j.ty.dtype, lead + (infer.dim(doubled),)))


@handler("item")
def item(infer: Infer, e: Op) -> Op:
    """A tile of one element as a scalar (rank 0)."""
    x = infer.expr(e.args[0])
    if x.ty.is_scalar:
        return x
    if any(d != "1" for d in x.ty.shape):
        raise fail(e.rule, ".item() needs a tile whose every dimension is 1", e.pos)
    return Op("item", (x,), e.pos, rule=e.rule, ty=TileTy(x.ty.dtype))


@handler("shape_rank")
def shape_rank(infer: Infer, e: Op) -> Expr:
    x = infer.expr(e.args[0])
    if isinstance(x.ty, ArrayTy):
        return Lit(x.ty.rank, e.pos, TileTy("i32"))
    if isinstance(x.ty, TileTy):
        return Lit(len(x.ty.shape), e.pos, TileTy("i32"))
    raise fail("CT100", "`len(<value>.shape)` needs an array or a tile", e.pos)


@handler("numel_of")
def numel_of(infer: Infer, e: Op) -> Expr:
    """Triton's `x.numel` of a tile of literal extents (Infer.const_int_expr folds the others into a derived
    constant, the product of the extents)."""
    found = infer.const_int_expr(e)
    if found is None or not found[0].isdigit():
        raise fail("CT105", "`.numel` of a value that is not a tile", e.pos)
    return Lit(int(found[0]), e.pos, TileTy("i32"))


@handler("array_dim")
def array_dim(infer: Infer, e: Op) -> Expr:
    x = infer.expr(e.args[0]) if infer.k.frontend == "triton" else None
    if x is not None and isinstance(x.ty, TileTy) and x.ty.shape:
        # `x.shape[0]` of a tile (a helper's tile argument): its static extent, a constant
        shape, dim = x.ty.shape, e.attr("dim")
        if not -len(shape) <= dim < len(shape):
            raise fail("CT104", f"`.shape[{dim}]` is out of range for a tile of rank {len(shape)}", e.pos)
        d = shape[dim % len(shape)]
        return Lit(int(d), e.pos, TileTy("i32")) if d.isdigit() else Name(d, e.pos, TileTy("i32"))
    arr = infer.array_param(e.args[0], "CT100")
    dim = e.attr("dim")
    if not -arr.ty.rank <= dim < arr.ty.rank:
        raise fail("CT104", f"`{arr.id}.shape[{dim}]` is out of range for rank {arr.ty.rank}", e.pos)
    return Op("array_dim", (arr,), e.pos, (("dim", dim % arr.ty.rank),), e.rule, TileTy("i32"))
