"""Triton element accesses at tile-aligned offsets -> tensor views and partitions (issue 12, item 2).

A Triton load or store addresses elements `base + offsets` under a mask; the port makes one address per
element (pointer tiles). Where the offsets are, per tile axis, `(T * BLOCK + arange(0, BLOCK)) * stride`
(plus whole `index * stride` terms), the mask is `axis index < bound` per axis and `other` a constant, the
same elements are one tile of a partition view: view of shape `bound` and those strides, tile BLOCK, index
T, `other` the padding. cuTile lowers that with TMA, which is what Triton's own GEMMs get (a persistent
GEMM went from 0.22 to 1.07 of Triton's speed: results/experiments/triton_gemm_views.md).

The pass proves the two accesses touch the same elements, or leaves the access alone:
- offsets, tile indices and bounds are integer polynomials over atoms: kernel parameters, constants,
  loop variables and names assigned once where the access sees them; `arange` atoms mark tile axes;
- the scalar part of the offsets divides exactly into tile index x BLOCK x stride per axis; what is left
  must be `index * stride` terms over one scalar argument each (an axis of extent 1, unbounded);
- the mask is a conjunction of `arange + x < bound` (one per axis, coefficient 1), with `bound` minus the
  axis start loop-invariant (the view is made once); an axis without one is unbounded;
- `other` is absent or a constant a padding mode has (0, -0.0, inf, -inf, nan);
- the array is only loaded from, or only stored to, in the kernel (no order between the two kinds of
  access of one array is needed then; stores of an array written more than once keep their token chain);
- the innermost stride is 1: a literal, or a scalar argument a hidden bool constant says is 1 in this
  launch (Param.unit_of: Triton specializes integer arguments equal to 1 as well). The access keeps its
  element path for other strides, under that constant.

Outputs (issue 37, in every kernel, with or without a dot): a pointer that is only stored to, every store the
tile at the program's own index of one view (per view axis `tl.program_id(axis)`, or 0 on an axis the launch
has one program on, its extent cut to one tile; a literal unit stride; at most 3 axes), or an unmasked scalar
store at `base + tl.program_id(0)`, becomes a `store` of the cuTile Python form at that index: ownership.py
makes it a checked `&mut Tensor` partition, and the C symbol makes the view from the pointer's span
(Param.view). Any other stored pointer keeps its element stores, with the reason (Param.unowned).
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..diagnostics import fail
from ..model.dump import expr_text
from ..model.walk import all_stmts, sub_exprs, walk_exprs
from .ownership import assigned_once, block_axis
from ..model.ir import RMW_OPS, FLOAT_DTYPES, ArrayTy, Assign, Continue, Eval, For, If, Kernel, Lit, Name, Op, Param, TileTy, TupleExpr, While

MAX_VIEW_RANK = 5  # a TMA tensor map has at most 5 dimensions
UNBOUNDED = 2**31 - 1  # the extent of a view axis Triton does not mask (i32: cuTile's shape type)
# the element types Tile IR's view reductions add (atomic_red_view_tko): the ones Triton's atomic_add takes
REDUCIBLE = ("i32", "i64", "u32", "u64", "f16", "bf16", "f32", "f64")
DTYPES = REDUCIBLE + ("i8", "i16", "u8", "u16", "f8e4m3fn", "f8e5m2", "bool")  # concrete (not a generic E)
PADDING = {0.0: "padding::Zero", math.inf: "padding::PosInf", -math.inf: "padding::NegInf"}

Poly = dict  # monomial (sorted tuple of atom keys) -> integer coefficient


def _norm(p: Poly) -> Poly:
    return {m: c for m, c in p.items() if c}


def _add(a: Poly, b: Poly, sign: int = 1) -> Poly:
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, 0) + sign * c
    return _norm(out)


def _mul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for m1, c1 in a.items():
        for m2, c2 in b.items():
            m = tuple(sorted(m1 + m2))
            out[m] = out.get(m, 0) + c1 * c2
    return _norm(out)


def _const(c: int) -> Poly:
    return {(): c} if c else {}


def _atom(key: str) -> Poly:
    return {(key,): 1}


def _contains(mono: tuple, sub: tuple) -> bool:
    rest = list(mono)
    for a in sub:
        if a not in rest:
            return False
        rest.remove(a)
    return True


def _minus(mono: tuple, sub: tuple) -> tuple:
    rest = list(mono)
    for a in sub:
        rest.remove(a)
    return tuple(rest)


def _arange_key(block: str, axis: int) -> str:
    return f"@{axis}@{block}"  # axis counted from the last (broadcasting aligns shapes at the right)


def _arange_of(key: str) -> tuple[int, str]:
    _, axis, block = key.split("@", 2)
    return int(axis), block


class _NotAffine(Exception):
    pass


# ---------------------------------------------------------------------------------- where names are

def _index(stmts, chain: tuple, defs: dict, loops: dict, locs: dict) -> None:
    """Every statement's location (the chain of (block, index) from the kernel body down), each name's
    assignments and each loop variable's loop."""
    for i, s in enumerate(stmts):
        loc = chain + (i,)
        locs[id(s)] = loc
        if isinstance(s, Assign):
            for t in s.targets:
                defs.setdefault(t, []).append((s, loc))
        elif isinstance(s, For):
            defs.setdefault(s.var, []).append((s, loc))
            loops.setdefault(s.var, []).append((s, loc))
            _index(s.body, loc + ("body",), defs, loops, locs)
        elif isinstance(s, While):
            _index(s.body, loc + ("body",), defs, loops, locs)
        elif isinstance(s, If):
            _index(s.body, loc + ("then",), defs, loops, locs)
            _index(s.orelse, loc + ("else",), defs, loops, locs)


def _before(def_loc: tuple, use_loc: tuple) -> bool:
    """A statement at `def_loc` runs before the one at `use_loc` in a block that encloses it (so its
    value is in scope there and, assigned once, the same)."""
    n = len(def_loc)
    return len(use_loc) >= n and use_loc[:n - 1] == def_loc[:n - 1] and use_loc[n - 1] > def_loc[n - 1]


def _exclusive(a: tuple, b: tuple) -> bool:
    """Statements in the two arms of one `if` (one runs, or the other, in one pass through it: only a loop around
    the `if` takes a path from one to the other)."""
    for x, y in zip(a, b):
        if x != y:
            return {x, y} == {"then", "else"}
    return False


def _order(loc: tuple) -> tuple:
    """A location as a key in program order."""
    return tuple(x if isinstance(x, int) else (1 if x == "else" else 0) for x in loc)


def _encloses(loop_loc: tuple, use_loc: tuple) -> bool:
    return len(use_loc) > len(loop_loc) and use_loc[:len(loop_loc)] == loop_loc


class _Analysis:
    def __init__(self, k: Kernel):
        self.k = k
        self.defs: dict = {}
        self.loops: dict = {}
        self.locs: dict = {}
        _index(k.body, (), self.defs, self.loops, self.locs)
        self.params = {p.name: p for p in k.params}
        self.table: dict[str, object] = {}  # atom key -> its model expression (or a loop counter's parts)
        self.named: dict = {}  # polynomial of a name assigned once -> the name (to render it back)
        self.derived = dict(k.derived)
        self.strict = False  # expanding a reaching assignment: names assigned once only
        # the reaching assignments being expanded, innermost last: (name, where): in `x = x + d` (a pointer moved
        # to its row, `c += pid * stride`), `x` is read where that assignment is, its value there the one
        # reaching it
        self.expanding: list[tuple[str, tuple]] = []

    # ------------------------------------------------------------------ polynomials of expressions
    def poly(self, e, u: tuple) -> Poly:
        if isinstance(e, Lit):
            if isinstance(e.value, bool) or not isinstance(e.value, int):
                raise _NotAffine
            return _const(e.value)
        if isinstance(e, Name):
            return self.name(e, u)
        if not isinstance(e, Op) or not isinstance(e.ty, TileTy) or e.ty.dtype not in ("i32", "i64"):
            raise _NotAffine
        a = e.args
        if e.op in ("add", "sub"):
            return _add(self.poly(a[0], u), self.poly(a[1], u), 1 if e.op == "add" else -1)
        if e.op == "mul":
            return _mul(self.poly(a[0], u), self.poly(a[1], u))
        if e.op == "neg":
            return _add({}, self.poly(a[0], u), -1)
        if e.op in ("splat", "broadcast"):
            return self.poly(a[0], u)  # broadcasting keeps axes counted from the last
        if e.op == "const_tile" and a and isinstance(a[0], Lit) and type(a[0].value) is int:
            return _const(a[0].value)  # a constant spread over the tile (a block pointer's base 0, its stride 1)
        if e.op == "reshape":
            return _reshaped(self.poly(a[0], u), a[0].ty.shape, e.ty.shape)
        if e.op == "convert" and isinstance(a[0].ty, TileTy) and a[0].ty.dtype == "i32":
            return self.poly(a[0], u)  # i32 -> i64 keeps the value
        if e.op == "arange" and len(e.ty.shape) == 1:
            return _atom(_arange_key(e.ty.shape[0], -1))
        if e.ty.is_scalar and e.ty.dtype == "i32" and self.stable(e, u):
            key = "#" + expr_text(e)
            self.table[key] = e
            return _atom(key)
        raise _NotAffine

    def name(self, e: Name, u: tuple) -> Poly:
        p = self.params.get(e.id)
        if p is not None and p.kind in ("scalar", "const") and (p.kind == "const" and p.const_type == "int"
                                                                 or p.dtype == "i32"):
            self.table[e.id] = Name(e.id, e.pos, TileTy("i32"))
            return _atom(e.id)
        defs = self.defs.get(e.id, [])
        if e.id in self.loops and all(isinstance(d, For) for d, _ in defs):
            return self.loop_var(e, u)
        if len(defs) == 1 and isinstance(defs[0][0], Assign) and _before(defs[0][1], u):
            value = defs[0][0].value
            if isinstance(value.ty, TileTy) and value.ty.is_scalar and not _polynomial(value):
                if value.ty.dtype != "i32":
                    raise _NotAffine
                self.table[e.id] = Name(e.id, e.pos, value.ty)  # `b = bh // H`: the name is the atom
                return _atom(e.id)
            p = self.poly(value, u)
            if isinstance(value.ty, TileTy) and value.ty.is_scalar and value.ty.dtype == "i32":
                self.named[_key(p)] = (Name(e.id, e.pos, value.ty), defs[0][1])
            return p
        if e.id in self.derived:
            return self.derived_poly(e)
        if len(defs) > 1 and self.strict and self.expanding and self.expanding[-1][0] == e.id:
            return self.reaching(e, self.expanding[-1][1], defs)
        if len(defs) > 1 and not self.strict:
            try:
                return self.reaching(e, u, defs)
            except _NotAffine:
                if len(defs) != 2:
                    raise
            return self.carried(e, u, defs)
        raise _NotAffine

    def reaching(self, e: Name, u: tuple, defs: list) -> Poly:
        """A name assigned more than once, at an access one assignment reaches on every path (`cols` of
        two loops): that assignment's value, over names assigned once (so evaluated at `u` the same)."""
        cands = [(s, loc) for s, loc in defs if isinstance(s, Assign) and _before(loc, u)]
        if not cands or any(not isinstance(s, Assign) for s, _ in defs):
            raise _NotAffine
        d, dloc = max(cands, key=lambda c: _order(c[1]))
        for s, loc in defs:
            if loc == dloc:
                continue
            if _order(loc) < _order(dloc):
                continue  # before the reaching one, which runs after it on every path to u
            if _order(loc) < _order(u) and not _exclusive(loc, u):
                raise _NotAffine  # between the two
            # after u: it reaches u only around a loop that encloses both and not the reaching assignment
            for _, lloc in (x for ls in self.loops.values() for x in ls):
                if _encloses(lloc, u) and _encloses(lloc, loc) and not _encloses(lloc, dloc):
                    raise _NotAffine
        strict, self.strict = self.strict, True
        self.expanding.append((e.id, dloc))
        try:
            return self.poly(d.value, u)
        finally:
            self.strict = strict
            self.expanding.pop()

    def derived_poly(self, e: Name) -> Poly:
        """A derived constant (`BLOCK_K * SPLIT_K`, computed by the host): its polynomial over constants
        where it is one, else the constant itself."""
        import ast
        def walk(n):
            if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
                return _const(n.value)
            if isinstance(n, ast.Name) and n.id in self.params and self.params[n.id].kind == "const" \
                    and self.params[n.id].const_type == "int":
                self.table[n.id] = Name(n.id, e.pos, TileTy("i32"))
                return _atom(n.id)
            if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub, ast.Mult)):
                a, b = walk(n.left), walk(n.right)
                return _mul(a, b) if isinstance(n.op, ast.Mult) else _add(a, b, 1 if isinstance(n.op, ast.Add) else -1)
            raise _NotAffine
        try:
            return walk(ast.parse(self.derived[e.id], mode="eval").body)
        except (_NotAffine, SyntaxError):
            self.table[e.id] = Name(e.id, e.pos, TileTy("i32"))
            return _atom(e.id)

    def loop_var(self, e: Name, u: tuple) -> Poly:
        """A loop variable seen in its loop: `start + step * i` with `i` the iteration (an atom)."""
        inside = [(s, loc) for s, loc in self.loops[e.id] if _encloses(loc, u)]
        if len(inside) != 1 or not (isinstance(e.ty, TileTy) and e.ty.dtype == "i32"):
            raise _NotAffine
        loop, loc = inside[0]
        start, step = self.poly(loop.start, loc), self.poly(loop.step, loc)
        if start == {} and step == _const(1):
            self.table[e.id] = Name(e.id, e.pos, TileTy("i32"))
            return _atom(e.id)
        key = "~" + e.id
        self.table[key] = ("iteration", Name(e.id, e.pos, TileTy("i32")), start, step)
        return _add(start, _mul(step, _atom(key)))

    def carried(self, e: Name, u: tuple, defs: list) -> Poly:
        """A pointer advanced by a loop: assigned once before the loop and once in its body as
        `p = p + step` (step loop-invariant): at an access in the body, `start + i * step` (i + 1 past
        the advance)."""
        (d0, loc0), (d1, loc1) = defs
        if not (isinstance(d0, Assign) and isinstance(d1, Assign)) or len(loc1) < 3 or loc1[-2] != "body":
            raise _NotAffine
        loop_loc = loc1[:-2]
        loop = next((s for ls in self.loops.values() for s, loc in ls if loc == loop_loc), None)
        if loop is None or not _before(loc0, loop_loc) or not _encloses(loop_loc, u):
            raise _NotAffine
        if len(self.defs.get(loop.var, [])) != 1 or _continues(loop.body):
            raise _NotAffine  # (a `continue` would skip the advance on some iterations)
        unit_loop = isinstance(loop.start, Lit) and loop.start.value == 0 and isinstance(loop.step, Lit) \
            and loop.step.value == 1
        v = d1.value
        if not (isinstance(v, Op) and v.op in ("add", "sub") and isinstance(v.args[0], Name) and v.args[0].id == e.id):
            if not (isinstance(v, Op) and v.op == "add" and isinstance(v.args[1], Name) and v.args[1].id == e.id):
                raise _NotAffine
            v = Op("add", (v.args[1], v.args[0]), v.pos, ty=v.ty)
        step = self.poly(v.args[1], loop_loc)
        if any(a.startswith("@") for m in step for a in m):
            raise _NotAffine  # a per-element advance
        if v.op == "sub":
            step = _add({}, step, -1)
        if unit_loop:
            self.table[loop.var] = Name(loop.var, loop.pos, TileTy("i32"))
            i = _atom(loop.var)
        else:  # `range(a, b, s)` (a block pointer advanced in `range(0, K, BLOCK_K)`): the iteration (var - a) / s
            start, lstep = self.poly(loop.start, loop_loc), self.poly(loop.step, loop_loc)
            if any(not _invariant(self, a) for p in (start, lstep) for m in p for a in m) or not lstep:
                raise _NotAffine
            key = "~" + loop.var
            self.table[key] = ("iteration", Name(loop.var, loop.pos, TileTy("i32")), start, lstep)
            i = _atom(key)
        if u[len(loop_loc) + 1] > loc1[-1]:
            i = _add(i, _const(1))
        return _add(self.poly(d0.value, loop_loc), _mul(step, i))

    def stable(self, e, u: tuple) -> bool:
        """Every name in `e` has, at `u`, the value it has where `e` is written (so `e` may be evaluated
        again at `u`)."""
        if isinstance(e, Lit):
            return True
        if isinstance(e, Name):
            if e.id in self.params:
                return True
            defs = self.defs.get(e.id, [])
            if e.id in self.loops and all(isinstance(d, For) for d, _ in defs):
                return sum(1 for _, loc in self.loops[e.id] if _encloses(loc, u)) == 1
            return len(defs) == 1 and _before(defs[0][1], u)
        if isinstance(e, Op):
            return all(a is None or self.stable(a, u) for a in e.args) and not any(
                isinstance(v, (Name, Op)) for _, v in e.attrs)
        if isinstance(e, TupleExpr):
            return all(self.stable(i, u) for i in e.items)
        return False

    # ------------------------------------------------------------------ masks
    def bounds(self, m, u: tuple) -> list[Poly]:
        """A mask as a conjunction of `q < 0` (the polynomials q); raises where it is not one."""
        if isinstance(m, Name):
            defs = self.defs.get(m.id, [])
            if len(defs) == 1 and isinstance(defs[0][0], Assign) and _before(defs[0][1], u):
                return self.bounds(defs[0][0].value, u)
            raise _NotAffine
        if not isinstance(m, Op):
            raise _NotAffine
        if m.op == "bitand":
            return self.bounds(m.args[0], u) + self.bounds(m.args[1], u)
        if m.op == "broadcast":
            return self.bounds(m.args[0], u)
        if m.op == "reshape":
            return [_reshaped(q, m.args[0].ty.shape, m.ty.shape) for q in self.bounds(m.args[0], u)]
        if m.op == "cmp":
            left, right = self.poly(m.args[0], u), self.poly(m.args[1], u)
            pred = m.attr("pred")
            if pred == "<":
                return [_add(left, right, -1)]
            if pred == "<=":
                return [_add(_add(left, right, -1), _const(-1))]
            if pred == ">":
                return [_add(right, left, -1)]
            if pred == ">=":
                return [_add(_add(right, left, -1), _const(-1))]
        raise _NotAffine


def _continues(stmts) -> bool:
    """A `continue` of this loop (not of a nested one) among the statements."""
    for s in stmts:
        if isinstance(s, Continue):
            return True
        if isinstance(s, If) and (_continues(s.body) or _continues(s.orelse)):
            return True
    return False


def _polynomial(e) -> bool:
    """An expression the polynomials look into (else a scalar name assigned it is an atom itself)."""
    return isinstance(e, (Name, Lit)) or (isinstance(e, Op) and (
        e.op in ("add", "sub", "mul", "neg") or (e.op == "convert" and e.args[0].ty.dtype == "i32")))


def _key(p: Poly) -> tuple:
    return tuple(sorted(p.items()))


def _reshaped(p: Poly, old: tuple, new: tuple) -> Poly:
    """The arange atoms of a tile reshaped by inserting or removing extent-1 axes follow their axes."""
    keep_old = [i for i, d in enumerate(old) if d != "1"]
    keep_new = [i for i, d in enumerate(new) if d != "1"]
    if [old[i] for i in keep_old] != [new[i] for i in keep_new]:
        raise _NotAffine
    where = {i - len(old): j - len(new) for i, j in zip(keep_old, keep_new)}
    out: Poly = {}
    for mono, c in p.items():
        atoms = []
        for a in mono:
            if a.startswith("@"):
                axis, block = _arange_of(a)
                if axis not in where:
                    raise _NotAffine
                a = _arange_key(block, where[axis])
            atoms.append(a)
        m = tuple(sorted(atoms))
        out[m] = out.get(m, 0) + c
    return _norm(out)


# ---------------------------------------------------------------------------------- one access

def _plan(an: _Analysis, arr: Name, offsets, mask, shape: tuple, other, u: tuple):
    """(dims, strides, tile, index, padding, unit) of the view access equal to this element access."""
    total = an.poly(offsets, u)
    rank = len(shape)
    strides: dict[str, Poly] = {}
    scalar: Poly = {}
    for mono, c in total.items():
        ar = [a for a in mono if a.startswith("@")]
        if len(ar) > 1:
            raise _NotAffine
        if ar:
            strides[ar[0]] = _add(strides.get(ar[0], {}), {_minus(mono, (ar[0],)): c})
        else:
            scalar[mono] = c
    axes = {}
    for key in strides:
        axis, block = _arange_of(key)
        if axis in axes or not -rank <= axis < 0 or shape[axis] != block:
            raise _NotAffine
        axes[axis] = key
    if any(d != "1" and (i - rank) not in axes for i, d in enumerate(shape)) or not axes:
        raise _NotAffine  # an axis the offsets do not walk (a broadcast load)
    order = sorted(axes)  # tile axes, outermost first
    inner = axes[order[-1]]
    unit = ""
    if strides[inner] != _const(1):
        mono = list(strides[inner])
        if not (len(mono) == 1 and len(mono[0]) == 1 and strides[inner][mono[0]] == 1
                and an.params.get(mono[0][0]) is not None and an.params[mono[0][0]].kind == "scalar"):
            raise _NotAffine
        unit = mono[0][0]
    for key in (axes[a] for a in order):
        s = strides[key]
        if len(s) != 1 or next(iter(s.values())) <= 0 or any(a.startswith("@") for m in s for a in m):
            raise _NotAffine
    # the scalar part: tile index * BLOCK * stride per axis (inner axis last: its stride may be 1)
    index: dict[str, Poly] = {}
    for key in [axes[a] for a in order if axes[a] != inner] + [inner]:
        _, block = _arange_of(key)
        (smono, scoef), = strides[key].items()
        if block.isdigit():
            dmono, dcoef = smono, scoef * int(block)
        elif an.params.get(block) is not None and an.params[block].kind == "const":
            dmono, dcoef = tuple(sorted(smono + (block,))), scoef
            an.table[block] = Name(block, arr.pos, TileTy("i32"))
        else:
            raise _NotAffine
        t: Poly = {}
        for mono, c in list(scalar.items()):
            if _contains(mono, dmono) and c % dcoef == 0:
                t = _add(t, {_minus(mono, dmono): c // dcoef})
                del scalar[mono]
        index[key] = t
    # what is left: whole `index * stride` terms, one scalar argument as the stride of each
    extra: dict[str, Poly] = {}
    for mono, c in scalar.items():
        cands = {a for a in mono if an.params.get(a) is not None and an.params[a].kind == "scalar"}
        if len(cands) != 1 or mono.count(next(iter(cands))) != 1:
            raise _NotAffine
        s = cands.pop()
        extra[s] = _add(extra.get(s, {}), {_minus(mono, (s,)): c})
    if len(extra) + len(order) > MAX_VIEW_RANK:
        raise _NotAffine
    # the mask: `arange + x < bound` per axis -> the view's extent on that axis
    dims: dict[str, Poly | None] = {key: None for key in strides}
    for q in (an.bounds(mask, u) if mask is not None else []):
        keys = {a for m in q for a in m if a.startswith("@")}
        if len(keys) != 1:
            raise _NotAffine
        key = keys.pop()
        if key in index and _at_least_zero(an, q, key, index[key]):
            continue  # `T * B + arange >= 0` (a block pointer's boundary check) holds for every lane
        if key not in dims or dims[key] is not None or q.get((key,)) != 1 or \
                sum(1 for m in q if key in m) != 1:
            raise _NotAffine
        _, block = _arange_of(key)
        rest = _add(q, {(key,): 1}, -1)
        block_poly = _const(int(block)) if block.isdigit() else _atom(block)
        dim = _add(_mul(index[key], block_poly), rest, -1)  # arange < -rest  <=>  T*B + arange < T*B - rest
        if any(not _invariant(an, a) for m in dim for a in m):
            raise _NotAffine
        dims[key] = dim
    padding = "padding::Zero"
    if other is not None and mask is not None:
        padding = _padding(other)
    if any(not _invariant(an, a) for key in strides for m in strides[key] for a in m) or \
            any(not _invariant(an, s) for s in extra):
        raise _NotAffine
    lit = lambda v: Lit(v, arr.pos, TileTy("i32"))  # noqa: E731
    view_dims = [lit(UNBOUNDED) for _ in extra] + [
        lit(UNBOUNDED) if dims[axes[a]] is None else _render(an, dims[axes[a]], arr.pos) for a in order]
    view_strides = [Name(s, arr.pos, TileTy("i32")) for s in sorted(extra)] + [
        _render(an, strides[axes[a]], arr.pos) for a in order]
    tile = ("1",) * len(extra) + tuple(_arange_of(axes[a])[1] for a in order)
    idx = [_render(an, extra[s], arr.pos, u) for s in sorted(extra)] + \
        [_render(an, index[axes[a]], arr.pos, u) for a in order]
    return view_dims, view_strides, tile, idx, padding, unit


def _at_least_zero(an: _Analysis, q: Poly, key: str, index: Poly) -> bool:
    """Whether the mask conjunct `q < 0` is `T * B + arange >= 0` on the axis of `key` (q = -(T * B + arange)
    - 1, with T the access' tile index) and T is never negative: a sum of products, each of a positive
    coefficient and of program ids and loop iterations (never negative), whatever the launch."""
    _, block = _arange_of(key)
    block_poly = _const(int(block)) if block.isdigit() else _atom(block)
    start = _mul(index, block_poly)
    if _add(_add(q, {(key,): 1}), _add(start, _const(1))) != {}:
        return False
    return all(c > 0 and all(_never_negative(an, a) or a == block for a in mono) for mono, c in index.items())


def _never_negative(an: _Analysis, atom: str) -> bool:
    """A program id (`pid = tl.program_id(0)` or the id itself) or a loop's iteration count."""
    if atom.startswith("~"):
        return True  # (var - start) / step of a loop that runs from start up
    v = an.table.get(atom)
    if isinstance(v, Op) and v.op == "bid":
        return True
    defs = an.defs.get(atom, [])
    if atom in an.loops and all(isinstance(d, For) for d, _ in defs):
        loops = [s for s, _ in an.loops[atom]]
        return all(isinstance(s.start, Lit) and s.start.value >= 0 and isinstance(s.step, Lit) and s.step.value > 0
                   for s in loops)
    if len(defs) != 1 or not isinstance(defs[0][0], Assign):
        return False
    s = defs[0][0]
    value = s.value.items[s.targets.index(atom)] if isinstance(s.value, TupleExpr) and len(s.targets) > 1 \
        else s.value  # `i_t, i_bh = tl.program_id(0), tl.program_id(1)`
    return isinstance(value, Op) and value.op == "bid"


def _invariant(an: _Analysis, atom: str) -> bool:
    """An atom the kernel's first statement already knows (a parameter or constant)."""
    return atom in an.params or atom in an.derived


def _padding(other) -> str:
    while isinstance(other, Op) and other.op in ("splat", "broadcast", "convert", "const_tile") and len(other.args) == 1:
        other = other.args[0]
    if isinstance(other, Op) and other.op == "neg" and isinstance(other.args[0], Lit):
        other = Lit(-other.args[0].value, other.pos)
    if not isinstance(other, Lit) or isinstance(other.value, bool):
        raise _NotAffine
    v = float(other.value)
    if math.isnan(v):
        return "padding::Nan"
    if v == 0.0 and math.copysign(1.0, v) < 0:
        return "padding::NegZero"
    if v in PADDING:
        return PADDING[v]
    raise _NotAffine


def _render(an: _Analysis, p: Poly, pos, u: tuple | None = None):
    """A polynomial as i32 model arithmetic; at an access `u`, a name assigned the same value there is used
    as it is (`pid_m`, not its arithmetic again)."""
    named = an.named.get(_key(p))
    if u is not None and named is not None and _before(named[1], u):
        return named[0]
    i32 = TileTy("i32")
    terms = []
    for mono, c in sorted(p.items()):
        factors = [_atom_expr(an, a, pos) for a in mono]
        if c != 1 or not factors:
            factors.insert(0, Lit(c, pos, i32))
        t = factors[0]
        for f in factors[1:]:
            t = Op("mul", (t, f), pos, ty=i32)
        terms.append(t)
    if not terms:
        return Lit(0, pos, i32)
    out = terms[0]
    for t in terms[1:]:
        out = Op("add", (out, t), pos, ty=i32)
    return out


def _atom_expr(an: _Analysis, key: str, pos):
    v = an.table[key]
    if isinstance(v, tuple):  # a loop's iteration: (var - start) / step
        _, var, start, step = v
        if start:
            var = Op("sub", (var, _render(an, start, pos)), pos, ty=TileTy("i32"))
        return Op("truncdiv", (var, _render(an, step, pos)), pos, ty=TileTy("i32"))
    return v


# ---------------------------------------------------------------------------------- the pass

def _uses(body) -> dict[str, set[str]]:
    """Each Triton pointer's access ops (gather, scatter, atomics, view accesses of descriptors)."""
    out: dict[str, set[str]] = {}
    for e in walk_exprs(body):
        if isinstance(e, Op) and e.attr("flat") and e.args and isinstance(e.args[0], Name):
            out.setdefault(e.args[0].id, set()).add(e.op)
    return out


def _py(e) -> str:
    """A view extent or stride (i32 arithmetic over parameters and constants) as a Python expression."""
    if isinstance(e, Lit):
        return str(e.value)
    if isinstance(e, Name):
        return e.id
    if isinstance(e, Op) and e.op in ("add", "mul"):
        return f"({_py(e.args[0])} {'+' if e.op == 'add' else '*'} {_py(e.args[1])})"
    raise _NotAffine


def _own_tile(an: _Analysis, bound: dict, e: Op, u: tuple):
    """A Triton store (scatter) that writes exactly the tile at the program's own index of a partition view:
    ((extents, strides), tile, index), the index `(tl.program_id(0), ...)`, or why not (a string). An axis the
    offsets start at 0 (a row's columns, BLOCK covering the row) is the tile at program id 0 of an extent cut
    to one tile: the partition grid is 1 there, which the launch must be (each element written by one
    program)."""
    if not e.args[3].ty.shape:
        return _own_element(an, bound, e, u)
    try:
        dims, strides, tile, idx, _, unit = _plan(an, e.args[0], e.args[1].items[0], e.args[2], e.args[3].ty.shape,
                                                  None, u)
    except _NotAffine:
        return ("a store's offsets and mask are not provably one tile of a view (offsets `(T * BLOCK + "
                "arange(0, BLOCK)) * stride` per axis, mask `index < bound`)")
    if unit:
        return f"the innermost stride is the argument `{unit}`, 1 only in some launches"
    if len(tile) > 3:
        return "the view has more than 3 axes (a launch grid has 3)"
    extents, index = [], []
    for axis, (d, t, x) in enumerate(zip(dims, tile, idx)):
        unbounded = isinstance(d, Lit) and d.value == UNBOUNDED
        try:
            if block_axis(x, bound) == axis:
                # an axis Triton does not mask: the tiles of the launch's programs
                extents.append(f"(__grid{axis} * {t})" if unbounded else _py(d))
                index.append(x)
            elif isinstance(x, Lit) and x.value == 0:
                extents.append(t if unbounded else f"({_py(d)} if {_py(d)} < {t} else {t})")
                index.append(Op("bid", (Lit(axis, x.pos, TileTy("i32")),), x.pos, ty=TileTy("i32")))
            else:
                return (f"a store's tile index on view axis {axis} is not `tl.program_id({axis})` (each program "
                        "must write only its own tile)")
        except _NotAffine:
            return "a view extent is not a Python expression of the arguments"
    return (tuple(extents), tuple(_py(s) for s in strides)), tuple(tile), tuple(index)


def _own_element(an: _Analysis, bound: dict, e: Op, u: tuple):
    """A scalar store at the program's own element of a view of the grid, unmasked: `base + pid` (a row's
    statistic, `tl.store(Mean + row, mean)`), `base + pid * stride` (in a strided column), `base + pid0 * L +
    pid1` or `base + b * row_stride + g * col_stride` (a 2-D grid's (batch, position) or (row, group) entry):
    per program id axis 0..r-1 at most one term `pid_a * stride_a` (a scalar argument, a constant or 1), no
    other term. The view: the grid's extent on each axis, those strides, tiles of one element; where the last
    stride is not a literal 1, a unit axis after it (extent 1, the launch's one program on that axis)."""
    why = "a scalar store that is not at `base + tl.program_id(0)`, unmasked"
    if e.args[2] is not None:
        return why
    try:
        p = an.poly(e.args[1].items[0], u)
    except _NotAffine:
        return why
    axes: dict[int, tuple] = {}
    for mono, c in p.items():
        if c != 1 or len(mono) not in (1, 2):
            return why
        found = None
        for pid, rest in ((mono[0], mono[1:]), (mono[-1], mono[:-1])):
            index = _render(an, {(pid,): 1}, e.pos, u)
            axis = block_axis(index, bound)
            if axis is not None and all(r in an.params and an.params[r].kind in ("scalar", "const") for r in rest):
                found = (axis, index, rest[0] if rest else "1")
                break
        if found is None or found[0] in axes:
            return why
        axes[found[0]] = found[1:]
    if not axes or sorted(axes) != list(range(len(axes))):
        return why
    r = len(axes)
    extents = [f"(__grid{a} * 1)" for a in range(r)]
    strides = [axes[a][1] for a in range(r)]
    index = [axes[a][0] for a in range(r)]
    if strides[-1] != "1":
        if r == 3:
            return "a scalar store whose view has more than 3 axes (a launch grid has 3)"
        extents.append("1")
        strides.append("1")
        index.append(Op("bid", (Lit(r, e.pos, TileTy("i32")),), e.pos, ty=TileTy("i32")))
    return (tuple(extents), tuple(strides)), ("1",) * len(index), tuple(index)


def _own_descriptor_tile(an: _Analysis, bound: dict, e: Op, u: tuple):
    """A tensor descriptor's store (`c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], c)`) of the tile at the
    program's own index: per axis the offset is `tl.program_id(axis) * block`. The view is the descriptor's
    shape and strides (TMA clips a tile at the shape, as a partition store does). ((extents, strides), tile,
    index), or why not."""
    tile = e.attr("tile")
    if e.attr("base_offset") is not None:
        return "a descriptor of an offset base pointer"
    if len(tile) > 3:
        return "the view has more than 3 axes (a launch grid has 3)"
    index = []
    for axis, (off, block) in enumerate(zip(e.args[3].items, tile)):
        try:
            x = _render(an, _tile_of_offset(an, off, block, u), off.pos, u)
        except _NotAffine:
            x = None
        if x is None or block_axis(x, bound) != axis:
            return (f"a descriptor store's offset on axis {axis} is not `tl.program_id({axis}) * {block}` (each "
                    "program must write only its own tile)")
        index.append(x)
    names = {n.id for d in e.args[1].items + e.args[2].items for n in sub_exprs(d) if isinstance(n, Name)}
    if any(n not in an.params for n in names):  # (a parameter assigned before is snapshotted in a local)
        return "a descriptor's shape or strides computed in the kernel"
    try:
        view = (tuple(_py(d) for d in e.args[1].items), tuple(_py(st) for st in e.args[2].items))
    except _NotAffine:
        return "a view extent is not a Python expression of the arguments"
    return view, tuple(tile), tuple(index)


def own_tile_outputs(an: _Analysis, k: Kernel, uses: dict) -> tuple[dict, dict]:
    """The Triton pointers that are only stored to, every store the tile at the program's own index of one
    view: name -> (view, {id(store): (tile, index)}). Their stores become a checked `&mut Tensor` partition's
    (passes/ownership.py), the view made by the C symbol from the argument's span. Also, for each other
    stored pointer, why not."""
    bound = assigned_once(k)
    plans: dict[str, list] = {}
    refused: dict[str, str] = {}
    for s in all_stmts(k.body):
        if not isinstance(s, (Assign, Eval)):
            continue
        for e in sub_exprs(s.value):
            if isinstance(e, Op) and e.op == "view_store" and e.attr("offsets") and isinstance(e.args[0], Name):
                plan = _own_descriptor_tile(an, bound, e, an.locs[id(s)])
            elif not (isinstance(e, Op) and e.op == "scatter" and e.attr("flat") and isinstance(e.args[0], Name)):
                continue
            else:
                plan = "a store through the pointer cast to another element type" if e.attr("elem") else \
                    _own_tile(an, bound, e, an.locs[id(s)])
            if isinstance(plan, str):
                refused.setdefault(e.args[0].id, plan)
            else:
                plans.setdefault(e.args[0].id, []).append((e, plan))
    # loads of a stored pointer, each at the program's own tile of its view (an in-place update, `a = load(a_ptr
    # + offs); store(a_ptr + offs, f(a))`): read through the partition's tensor, the store ordered after them
    reads: dict[str, list] = {}
    for s in all_stmts(k.body):
        if isinstance(s, (Assign, Eval)):
            for e in sub_exprs(s.value):
                if isinstance(e, Op) and e.op == "gather" and e.attr("flat") and isinstance(e.args[0], Name) \
                        and not e.attr("elem") and e.ty is not None and e.ty.shape:
                    probe = Op("scatter", e.args[:3] + (e,), e.pos, e.attrs, e.rule, None)
                    reads.setdefault(e.args[0].id, []).append(_own_tile(an, bound, probe, an.locs[id(s)]))
    stores: dict[str, int] = {}
    gathers: dict[str, int] = {}  # every load, wherever it is (a load `reads` does not see keeps the raw pointer)
    for e in walk_exprs(k.body):
        if isinstance(e, Op) and (e.op == "scatter" or e.op == "view_store" and e.attr("offsets")) \
                and isinstance(e.args[0], Name):
            stores[e.args[0].id] = stores.get(e.args[0].id, 0) + 1
        elif isinstance(e, Op) and e.op == "gather" and e.args and isinstance(e.args[0], Name):
            gathers[e.args[0].id] = gathers.get(e.args[0].id, 0) + 1
    out = {}
    optional = {p.given_of for p in k.params if p.given_of}
    for name in uses:
        if name not in stores and uses[name] & set(RMW_OPS):
            refused[name] = "the pointer is updated by atomics"
    for name in stores:
        p = an.params.get(name)
        items = plans.get(name, [])
        if p is None or not p.flat:
            continue
        if name in optional:  # None in some launches: no tensor to split (the port takes a null pointer)
            refused[name] = "an optional pointer (Triton takes None for it)"
        elif uses.get(name, set()) - {"scatter", "view_store"} and not (
                uses[name] - {"scatter", "view_store"} == {"gather"} and _in_place(items, reads.get(name, []),
                                                                            gathers.get(name, 0))):
            other = uses[name] - {"scatter", "view_store"}
            refused[name] = ("the pointer is also read in the kernel" if other & {"gather", "view_load"} else
                             "the pointer is also updated by atomics")
        elif name not in refused and stores[name] != len(items):
            refused[name] = "a store the proof does not see (outside a statement's value)"
        elif name not in refused and len({plan[0] for _, plan in items}) != 1:
            refused[name] = "its stores address different views"
        if name not in refused:
            out[name] = (items[0][1][0], {id(e): plan[1:] for e, plan in items})
    return out, refused


def _in_place(items: list, reads: list, gathers: int) -> bool:
    """Whether every one of a stored pointer's `gathers` loads is among `reads` (each's own-tile plan, or why not)
    and is the tile its stores (`items`) write, at the program's own index of the same view: an in-place update
    of the program's own tile."""
    if not items or gathers == 0 or len(reads) != gathers:
        return False
    view, tile, index = items[0][1]
    key = (view, tile, tuple(expr_text(i) for i in index))
    return all(not isinstance(r, str) and (r[0], r[1], tuple(expr_text(i) for i in r[2])) == key for r in reads)


def _own_store(e: Op, tile: tuple, index: tuple) -> Op:
    """The scatter (or descriptor store) as a store of the tile at its own index (the mask, or the descriptor's
    shape, is the view's bound)."""
    value = e.args[4] if e.op == "view_store" else e.args[3]
    if tuple(value.ty.shape) != tile:
        value = Op("reshape", (value,), value.pos, ty=TileTy(value.ty.dtype, tile))
    arr = replace(e.args[0], ty=ArrayTy(value.ty.dtype, len(tile)))  # the view's rank, not the span's
    # a descriptor's store is Triton's TMA store: it stays one (emit/lower.py, `store`)
    attrs = (("descriptor", True),) if e.op == "view_store" else ()
    return Op("store", (arr, TupleExpr(index, e.pos), value), e.pos, attrs, e.rule, None)


def tile_views(k: Kernel, shared: frozenset = frozenset()) -> tuple[Kernel, set[str]]:
    """The kernel with its provable accesses as view accesses, and the scalars whose unit value they need.
    `shared`: outputs that keep their raw pointer (their entries do not agree on one view)."""
    if k.frontend != "triton":
        return k, set()
    an = _Analysis(k)
    uses = _uses(k.body)
    dots = any(isinstance(e, Op) and e.op in ("mma", "matmul") for e in walk_exprs(k.body))
    units: set[str] = set()
    own, refused = own_tile_outputs(an, k, uses)
    refused |= {n: "its entries store through different views (one C symbol makes the view)" for n in shared}
    own = {n: v for n, v in own.items() if n not in shared}
    own_stores = {i: plan for _, stores in own.values() for i, plan in stores.items()}

    def access(e, u):
        """`e` (a load: gather, or where(mask, gather, other); a store: scatter) as a view access, or None."""
        if id(e) in own_stores:  # the stored value's own accesses first (a descriptor's load in it)
            at = 4 if e.op == "view_store" else 3
            value = expr(e.args[at], u) if isinstance(e.args[at], Op) else e.args[at]
            return _own_store(replace(e, args=e.args[:at] + (value,) + e.args[at + 1:]), *own_stores[id(e)])
        if isinstance(e, Op) and e.op in ("view_load", "view_store") and e.attr("offsets"):
            return descriptor(an, e, u, uses)
        if not dots:
            # measured on the H200 (results/triton_h200.md): in kernels without a dot the views' set-up cost
            # more than TMA saved (an elementwise kernel of 4 us lost 0.3 to 0.5 us); GEMM-like ones gain 1.5-5x
            return None
        load = e
        other = None
        if isinstance(e, Op) and e.op == "where" and isinstance(e.args[1], Op) and e.args[1].op == "gather" \
                and e.args[1].args[2] == e.args[0]:
            load, other = e.args[1], e.args[2]
        if not (isinstance(load, Op) and load.op in ("gather", "scatter") and load.attr("flat")):
            return None
        if not isinstance(load.args[0], Name) or load.attr("elem"):
            return None  # a pointer loaded from memory, or a parameter read as another type (TTR-PTRCAST)
        arr = load.args[0]
        if uses.get(arr.id, set()) != {load.op}:
            return None  # loaded and stored (or updated by atomics): element accesses keep their order
        p = an.params.get(arr.id)
        if p is None or not p.flat:
            return None
        shape = load.ty.shape if load.op == "gather" else load.args[3].ty.shape
        try:
            dims, strides, tile, idx, padding, unit = _plan(an, arr, load.args[1].items[0], load.args[2], shape,
                                                            other, u)
        except _NotAffine:
            return None
        wrap = None
        if padding != "padding::Zero" and any(d not in FLOAT_DTYPES for d in p.domain):
            # a pointer that may hold integers has no such padding: zero padding, then Triton's select
            wrap, padding = e, "padding::Zero"
        if unit:
            units.add(unit)
        attrs = (("flat", True), ("padding", padding), ("tile", tile), ("unit", f"{unit}_IS_1" if unit else ""))
        head = (arr, TupleExpr(tuple(dims), e.pos), TupleExpr(tuple(strides), e.pos), TupleExpr(tuple(idx), e.pos))
        if load.op == "gather":
            view = Op("view_load", head + (e,), e.pos, attrs, load.rule, e.ty)
            return view if wrap is None else replace(wrap, args=(wrap.args[0], view, wrap.args[2]))
        return Op("view_store", head + (load.args[3], load), e.pos, attrs, load.rule, None)

    def reduction(e, u):
        """A statement `tl.atomic_add(ptr + offsets, value, mask=..., sem="relaxed")` (its old values unread)
        whose elements are one tile of a view: that tile added through the view (Tile IR's
        atomic_red_view_tko), which tileiras lowers to bulk reductions (TMA `cp.reduce.async.bulk`) where it
        can prove the view aligned, else to the per-element reductions the element access makes. Triton's
        own lowering is a vector `red.global.add.v4` per four elements; the element access of the port was
        one scalar `red` per element (rms_norm_bwd_kernel's dw, sm_90 SASS: REDG.E.ADD.F32 x32 per thread
        against Triton's REDG.E.ADD.F32x4 x8). Only relaxed order (the view reduction's one order) at device
        or block scope, and only where the pointer is accessed by these adds alone. Not behind `dots`: one
        reduction per tile replaces one per element, whatever the kernel computes."""
        if not (isinstance(e, Op) and e.op == "atomic_add" and e.attr("flat") and isinstance(e.args[0], Name)) \
                or e.attr("elem") or e.attr("memory_order") != "ordering::Relaxed" \
                or e.attr("memory_scope", "scope::Device") not in ("scope::Device", "scope::TileBlock"):
            return None
        arr = e.args[0]
        p = an.params.get(arr.id)
        if uses.get(arr.id, set()) != {"atomic_add"} or p is None or not p.flat \
                or (arr.ty.dtype not in REDUCIBLE and arr.ty.dtype in DTYPES):
            return None
        value = e.args[3]
        try:
            dims, strides, tile, idx, _, unit = _plan(an, arr, e.args[1].items[0], e.args[2], value.ty.shape,
                                                      None, u)
        except _NotAffine:
            return None
        if unit:
            units.add(unit)
        value = expr(value, u) if isinstance(value, Op) else value
        attrs = (("flat", True), ("memory_scope", e.attr("memory_scope", "scope::Device")), ("padding", "padding::None"),
                 ("reduce", "add"), ("tile", tile), ("unit", f"{unit}_IS_1" if unit else ""))
        head = (arr, TupleExpr(tuple(dims), e.pos), TupleExpr(tuple(strides), e.pos), TupleExpr(tuple(idx), e.pos))
        return Op("view_store", head + (value, e), e.pos, attrs, e.rule, None)

    def expr(e, u):
        if not isinstance(e, Op):
            return e
        v = access(e, u)
        if v is not None:
            return v
        args = tuple(expr(a, u) if isinstance(a, Op) else a for a in e.args)
        return replace(e, args=args) if args != e.args else e

    def block(stmts):
        out = []
        for s in stmts:
            u = an.locs[id(s)]
            if isinstance(s, Assign):
                s = replace(s, value=expr(s.value, u))
            elif isinstance(s, Eval):
                s = replace(s, value=reduction(s.value, u) or expr(s.value, u))
            elif isinstance(s, For):
                s = replace(s, body=tuple(block(s.body)))
            elif isinstance(s, While):
                s = replace(s, body=tuple(block(s.body)))
            elif isinstance(s, If):
                s = replace(s, body=tuple(block(s.body)), orelse=tuple(block(s.orelse)))
            out.append(s)
        return out

    body = tuple(block(k.body))
    params = tuple(replace(p, pointer=False, view=own[p.name][0]) if p.name in own else
                   replace(p, unowned=refused[p.name]) if p.name in refused else p for p in k.params)
    return replace(k, body=body, params=params), units


def _tile_of_offset(an: _Analysis, off, block: str, u: tuple) -> Poly:
    """A descriptor offset `T * block` (block a literal or a constexpr) as the tile index T, or _NotAffine."""
    p = an.poly(off, u)
    if block.isdigit():
        d, q = int(block), {}
        for mono, c in p.items():
            if c % d:
                raise _NotAffine
            q[mono] = c // d
        return q
    if an.params.get(block) is None or an.params[block].kind != "const":
        raise _NotAffine
    q = {}
    for mono, c in p.items():
        if block not in mono:
            raise _NotAffine
        q[_minus(mono, (block,))] = c
    an.table[block] = Name(block, off.pos, TileTy("i32"))
    return q


def descriptor(an: _Analysis, e: Op, u: tuple, uses: dict) -> Op:
    """A tensor descriptor's access (`desc.load([off_m, off_k])`): its element offsets as tile indices, each a
    multiple of the block extent on its axis (partition views index whole tiles; TMA itself would take any
    offset, so another offset is refused, not rounded)."""
    arr = e.args[0]
    kinds = uses.get(arr.id, set())
    if kinds & {"gather", "view_load"} and kinds - {"gather", "view_load"}:
        raise fail(e.rule, f"`{arr.id}` is both read and written: a descriptor's accesses are not ordered with the "
                   "kernel's other accesses of its tensor in the port yet", e.pos)
    local = False
    offset = e.attr("base_offset")  # an advanced base: the view made at the access, from the offset pointer
    for x in e.args[1].items + e.args[2].items + ((offset,) if offset is not None else ()):
        names = {n.id for n in sub_exprs(x) if isinstance(n, Name)}
        if any(n in an.params and n in an.defs for n in names):
            # a parameter the kernel assigns (`M = M - 1`): which value the descriptor saw depends on where it was
            # made, which the access does not know
            raise fail(e.rule, "a descriptor's shape or strides read a parameter the kernel assigns: give the new "
                       "value its own name", x.pos)
        if all(n in an.params or n in an.derived for n in names):
            continue
        # a shape computed in the kernel (`shape=[m_end, N]`, `m_end` from loaded sizes): the view is made at
        # the access, from the same values the descriptor was made with. So each name it reads is assigned
        # once, outside any loop (its value at the access is the one the descriptor saw), and nothing in it
        # reads memory (read again at the access)
        once = all(n in an.params or n in an.derived or (len(an.defs.get(n, ())) == 1 and n not in an.loops
                   and "body" not in an.defs[n][0][1]) for n in names)
        reads = any(isinstance(y, Op) and y.op in _MEMORY_OPS for y in sub_exprs(x))
        if not once or reads:
            raise fail(e.rule, "a descriptor's shape and strides must be arguments, constants or values assigned "
                       "once outside loops (the view is made from them where the descriptor is read); make the "
                       "descriptor once before the loop from such values, or write the access with pointers and a "
                       "mask", x.pos)
        local = True
    index = []
    for off, block in zip(e.args[3].items, e.attr("tile")):
        try:
            q = _tile_of_offset(an, off, block, u)
        except _NotAffine:
            raise fail(e.rule, f"this offset is not provably a multiple of the block extent {block} (the port "
                       "loads whole tiles of a partition view; a descriptor would take any offset, zero-filling "
                       "outside the shape): write this access with pointers and a mask, `tl.load(base + "
                       "rows[:, None] * stride + cols[None, :], mask=(rows[:, None] < n) & (cols[None, :] < k), "
                       "other=0)`, or keep the offsets multiples of the block", off.pos) from None
        index.append(_render(an, q, off.pos, u))
    attrs = tuple((k, v) for k, v in e.attrs if k != "offsets") + ((("local_view", True),) if local else ())
    return replace(e, args=e.args[:3] + (TupleExpr(tuple(index), e.args[3].pos),) + e.args[4:], attrs=attrs)


_MEMORY_OPS = frozenset({"gather", "load", "view_load", "desc_load", "scatter", "store", "view_store", "desc_store",
                         *RMW_OPS})


def with_views(variants: list[Kernel]) -> list[Kernel]:
    """Every entry's view accesses, and the hidden constants their unit strides need (one per scalar, the
    same parameters in every entry: the C symbol and the wrapper lay them out once per kernel)."""
    done = [tile_views(v) for v in variants]
    # a Triton output's view is the kernel's (one C symbol makes it): one view in every entry, or none
    views = {p.name: {d.param(p.name).view for d, _ in done} for p in variants[0].params if p.kind == "array"}
    differ = frozenset(n for n, vs in views.items() if len(vs) > 1)
    if differ:
        done = [tile_views(v, differ) for v in variants]
    units = sorted(set().union(*(u for _, u in done)))
    if not units:
        return [v for v, _ in done]
    taken = {p.name for p in variants[0].params}
    flags = []
    for s in units:
        name = f"{s}_IS_1"
        if name in taken:
            return variants  # a parameter already has the name: no views (rare; never a clash)
        flags.append(Param(name, "const", variants[0].pos, const_type="bool", unit_of=s))
    return [replace(v, params=v.params + tuple(flags)) for v, _ in done]
