"""Shape and dtype inference: untyped model -> typed model with every implicit step made explicit.

Every expression gets a type. Python's implicit behaviour becomes explicit ops, the way cuTile
Python lowers it: dtype promotion (`convert`), rank extension and broadcasting (`reshape`,
`broadcast`), literals spread over tiles (`splat` for floats, a splat `const_tile` for ints),
`keepdims` (`reshape` after the reduce). Constant branches whose arms type-check alike stay one
`if` on the const generic; arms that differ raise `SplitNeeded`, and `specialize` makes variants.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from ..diagnostics import TranspileError, fail
from ..model.walk import all_stmts
from ..model.ir import (FLOAT_DTYPES, GENERIC_DTYPES, INT_DTYPES, ArrayTy, is_generic, Assign, Break, Continue, Eval, Expr, For, If, Kernel, Lit,
                        Name, Op, Param, Pos, Stmt, TileTy, TupleExpr, While)
from .predicates import decides

ARRAY_USES = {"load", "store", "num_tiles", "dtype_of", "shape_of", "array_dim", "gather", "scatter", "atomic_add",
              "atomic_max", "atomic_min", "atomic_xchg"}
WRITE_OPS = {"store", "scatter", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg"}
POINTER_OPS = {"gather", "scatter", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg"}
INT_CONTEXT_OPS = {"cdiv", "bid", "num_blocks", "floordiv"}


class SplitNeeded(Exception):
    def __init__(self, node: If, exact: bool = False):
        self.node = node
        self.exact = exact  # split on this very `if` (not on an enclosing constant one)


class SplitOnConst(Exception):
    """A constant choice that changes the program's structure: a ct.Constant[bool] as `check_bounds=FLAG`,
    a condition on a ct.Constant[float]. One variant per truth value of `name` (a predicate text; see
    specialize.py), the choice then read from the variant's predicates."""
    def __init__(self, name: str):
        self.name = name


class SplitOnDtype(Exception):
    """A condition on the element type (`if x.dtype == ct.float32:`) that this entry's element types do not
    decide: one entry for E = `dtype` and one for the others, each with the condition folded (cuTile
    Python folds it per specialization)."""
    def __init__(self, dtype: str):
        self.dtype = dtype


class UnifyElements(Exception):
    """Two dtype generics meet (`x + w` of tiles loaded from arrays typed E and E2, a store of one into the
    other, a comparison of their dtypes): their arrays share one element type (`keep`) from now on."""
    def __init__(self, keep: str, merge: str):
        self.keep, self.merge = sorted((keep, merge), key=GENERIC_DTYPES.index)


def unify_generics(a: str, b: str) -> None:
    if a != b and is_generic(a) and is_generic(b):
        raise UnifyElements(a, b)


def _unify_types(a, b) -> None:
    """Raises UnifyElements when two types differ only in their dtype generics."""
    if isinstance(a, TileTy) and isinstance(b, TileTy) and a.shape == b.shape:
        unify_generics(a.dtype, b.dtype)
    if isinstance(a, ArrayTy) and isinstance(b, ArrayTy) and a.rank == b.rank:
        unify_generics(a.dtype, b.dtype)


def _is_float(dt: str) -> bool:
    return dt in FLOAT_DTYPES or is_generic(dt)


def _is_int(dt: str) -> bool:
    return dt in INT_DTYPES


def _walk_exprs(stmts):
    for s in stmts:
        if isinstance(s, (Assign, Eval)):
            yield from _sub(s.value)
        elif isinstance(s, For):
            for e in (s.start, s.stop, s.step):
                yield from _sub(e)
            yield from _walk_exprs(s.body)
        elif isinstance(s, If):
            yield from _sub(s.cond)
            yield from _walk_exprs(s.body)
            yield from _walk_exprs(s.orelse)
        elif isinstance(s, While):
            yield from _sub(s.cond)
            yield from _walk_exprs(s.body)


def _sub(e):
    yield e
    if isinstance(e, Op):
        for a in e.args:
            if a is not None:
                yield from _sub(a)
        for _, v in e.attrs:
            if isinstance(v, (Op, Name, Lit, TupleExpr)):
                yield from _sub(v)
    elif isinstance(e, TupleExpr):
        for a in e.items:
            yield from _sub(a)


def classify_params(k: Kernel) -> Kernel:
    """Unannotated parameters: arrays if used as arrays (with the rank they are used at), else scalars."""
    ranks: dict[str, int] = {}
    int_names: set[str] = set()
    pointer_arrays: set[str] = set()
    for e in _walk_exprs(k.body):
        if isinstance(e, Op) and e.op in ARRAY_USES and e.args and isinstance(e.args[0], Name):
            name = e.args[0].id
            ranks.setdefault(name, 0)
            for key in ("index", "shape"):
                idx = {"index": 1, "shape": 2}[key]
                v = e.args[idx] if len(e.args) > idx else None
                if isinstance(v, TupleExpr):
                    ranks[name] = max(ranks[name], len(v.items))
                elif v is not None and key == "index" and e.op in ("load", "store"):
                    ranks[name] = max(ranks[name], 1)
            if e.op in POINTER_OPS and e.attr("flat"):  # Triton offsets: integers, whatever they are built from
                int_names.update(x.id for x in _sub(e.args[1]) if isinstance(x, Name))
            if e.op in POINTER_OPS:
                pointer_arrays.add(name)
                idx = e.args[1]
                ranks[name] = max(ranks[name], len(idx.items) if isinstance(idx, TupleExpr) else 1)
            if e.op in ("load", "store") and len(e.args) > 1:
                idx = e.args[1]
                for it in (idx.items if isinstance(idx, TupleExpr) else (idx,)):
                    for x in _sub(it):
                        if isinstance(x, Name):
                            int_names.add(x.id)
        if isinstance(e, Op) and e.op in INT_CONTEXT_OPS:
            for a in e.args:
                if isinstance(a, Name):
                    int_names.add(a.id)
    for s in all_stmts(k.body):
        if isinstance(s, For):
            for e in (s.start, s.stop, s.step):
                for x in _sub(e):
                    if isinstance(x, Name):
                        int_names.add(x.id)
    int_names |= _int_evidence(k, int_names)
    flags = _condition_only(k)
    params = []
    for p in k.params:
        if p.flat:  # a Triton pointer: rank 1 by construction, its element type a generic until inferred
            params.append(replace(p, dtype=p.dtype or "E"))
        elif p.kind == "unknown" or p.kind == "array":
            if p.name in ranks:
                # a 0-d tensor read by `ct.gather(a, ())` keeps rank 0: its pointer is the element
                rank = 0 if p.name in pointer_arrays and ranks[p.name] == 0 else max(ranks[p.name], 1)
                params.append(replace(p, kind="array", dtype=p.dtype or "E", rank=rank,
                                      pointer=p.name in pointer_arrays))
            elif p.kind == "array":
                raise fail("CT104", f"array parameter `{p.name}` is never loaded or stored, so its rank is unknown", p.pos)
            else:
                dt = "i32" if p.name in int_names else "bool" if p.name in flags else "f32"
                params.append(replace(p, kind="scalar", dtype=dt))
        else:
            params.append(p)
    return replace(k, params=tuple(params))


def _condition_only(k: Kernel) -> set[str]:
    """Names read only as truth values (`if flag:`, `while flag:`, `a if flag else b`, `not`/`and`/`or` of
    them): an unannotated parameter used this way is a bool, as cuTile Python types a Python `True`."""
    conds: list = []

    def tests(e) -> None:
        if isinstance(e, Name):
            conds.append(e)
        elif isinstance(e, Op) and e.op in ("not", "and", "or"):
            for a in e.args:
                tests(a)

    for s in all_stmts(k.body):
        if isinstance(s, (If, While)):
            tests(s.cond)
    for e in _walk_exprs(k.body):
        if isinstance(e, Op) and e.op == "ifexp":
            tests(e.args[0])
    cond_ids = {id(n) for n in conds}
    other = {e.id for e in _walk_exprs(k.body) if isinstance(e, Name) and id(e) not in cond_ids}
    return {n.id for n in conds} - other


ARITH_OPS = {"add", "sub", "mul", "floordiv", "mod", "truncdiv", "truncmod", "cmp", "ifexp", "maximum", "minimum", "neg", "bitand", "bitor",
             "bitxor", "shl", "shr", "invert", "and", "or", "not"}
INT_SOURCES = {"bid", "num_blocks", "cdiv", "arange", "num_tiles", "array_dim"}


def _int_evidence(k: Kernel, seeds: set[str]) -> set[str]:
    """Names that hold integers: grouped with int literals, block ids, loop variables or index positions.

    Unannotated scalar parameters have no declared type; the evidence decides i32 (else f32)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        parent[find(a)] = find(b)

    def leaves(e, out: list) -> None:
        if isinstance(e, Name):
            out.append(e.id)
        elif isinstance(e, Lit) and isinstance(e.value, int) and not isinstance(e.value, bool):
            out.append("#int")
        elif isinstance(e, Op) and e.op in INT_SOURCES:
            out.append("#int")
        elif isinstance(e, Op) and e.op in ARITH_OPS:
            for a in e.args:
                if a is not None:
                    leaves(a, out)

    groups: list[list[str]] = []
    for s in all_stmts(k.body):
        if isinstance(s, Assign) and len(s.targets) == 1:
            ls = [s.targets[0]]
            leaves(s.value, ls)
            groups.append(ls)
        elif isinstance(s, Assign) and k.frontend == "triton" and isinstance(s.value, TupleExpr) \
                and len(s.value.items) == len(s.targets):  # `offs, mask = helper(...)` (a Triton helper's tuple)
            for t, v in zip(s.targets, s.value.items):
                ls = [t]
                leaves(v, ls)
                groups.append(ls)
        if isinstance(s, For):
            groups.append([s.var, "#int"])
    for e in _walk_exprs(k.body):
        if isinstance(e, Op) and e.op in ARITH_OPS:
            ls: list = []
            leaves(e, ls)
            groups.append(ls)
    for g in groups:
        for x in g[1:]:
            union(g[0], x)
    for name in seeds:
        union(name, "#int")
    root = find("#int")
    return {n for n in parent if not n.startswith("#") and find(n) == root}


class RetypeArray(Exception):
    """An array's elements are used as integers (indices, bit operations) or receive integer tiles."""

    def __init__(self, name: str, dtype: str):
        self.name, self.dtype = name, dtype


def promote(a: str, b: str, pos: Pos) -> str:
    if a == b:
        return a
    if _is_float(a) and _is_float(b):
        unify_generics(a, b)
        if is_generic(a) or is_generic(b):
            generic, other = (a, b) if is_generic(a) else (b, a)
            if other in ("f32", "f64"):
                return other  # E ranges over f16, bf16, f32: widening to f32 is exact for all of them
            raise fail("CT104", f"cannot decide the promotion of the array dtype {generic} with {other} for every "
                       "specialization; add an explicit astype", pos)
        order = ["f8e4m3fn", "f8e5m2", "f16", "bf16", "tf32", "f32", "f64"]
        if {a, b} == {"f16", "bf16"}:
            return "f32"
        return max(a, b, key=order.index)
    if _is_float(a) and not _is_float(b):
        return a
    if _is_float(b):
        return b
    if a == "bool":
        return b
    if b == "bool":
        return a
    order = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"]
    return max(a, b, key=order.index)


def int_range(dt: str) -> tuple[int, int]:
    bits = int(dt[1:])
    return (0, 2**bits - 1) if dt.startswith("u") else (-2**(bits - 1), 2**(bits - 1) - 1)


def check_int_range(e: Lit, dt: str) -> None:
    """An integer literal that takes an integer dtype must fit it: cuTile Python raises "Integer constant
    ... is out of range of int32" (ops_utils._promote_dtype_and_loosely_typed_constant); the Rust literal
    would not compile (`literal out of range`)."""
    if _is_int(dt) and isinstance(e.value, int) and not isinstance(e.value, bool):
        lo, hi = int_range(dt)
        if not lo <= e.value <= hi:
            raise fail("CT121", f"integer constant {e.value} is out of range of {dt} [{lo}, {hi}] (cuTile Python "
                       f"rejects it too); use a wider dtype (`astype(ct.int64)`) or a constant that fits", e.pos)


def broadcast_shapes(a: tuple, b: tuple, pos: Pos) -> tuple:
    n = max(len(a), len(b))
    a = ("1",) * (n - len(a)) + tuple(a)
    b = ("1",) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == y or y == "1":
            out.append(x)
        elif x == "1":
            out.append(y)
        else:
            raise fail("CT104", f"shapes ({', '.join(a)}) and ({', '.join(b)}) cannot be broadcast together", pos)
    return tuple(out)


class Infer:
    def __init__(self, kernel: Kernel):
        self.k = kernel
        self.consts = {p.name: p for p in kernel.params if p.kind == "const"}
        self.env: dict[str, object] = {}
        self.sources: dict[str, str] = {}
        # names assigned once, from a Python number: cuTile Python keeps them as (weakly typed) constants
        counts: dict[str, int] = {}
        for s in all_stmts(kernel.body):
            for t in (s.targets if isinstance(s, Assign) else (s.var,) if isinstance(s, For) else ()):
                counts[t] = counts.get(t, 0) + 1
        self.once = {n for n, c in counts.items() if c == 1}
        self.arm_only: dict[str, If] = {}  # names defined in one arm of a constant `if` only
        # the value of each name assigned exactly once (`check_bounds = not ALIGNED`)
        self.single_defs = {s.targets[0]: s.value for s in all_stmts(kernel.body)
                            if isinstance(s, Assign) and len(s.targets) == 1 and s.targets[0] in self.once}
        self.literals: dict[str, Expr] = {}
        self.derived: dict[str, str] = {}
        self.derived_floats: set[str] = set()  # derived float constants (their expression is `float(...)`)
        for p in kernel.params:
            if p.kind == "array":
                self.env[p.name] = ArrayTy(p.dtype, p.rank)
            elif p.kind == "scalar":
                self.env[p.name] = TileTy(p.dtype)
            elif p.kind == "const":
                self.env[p.name] = TileTy({"int": "i32", "bool": "i32", "float": "f32"}[p.const_type])

    def source_array(self, e: Expr) -> str | None:
        """The generic-dtype array an expression's values come straight from (loads, items, reshapes)."""
        if isinstance(e, Name):
            return self.sources.get(e.id)
        if isinstance(e, Op) and e.op in ("load", "gather", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg") \
                and e.ty is not None and is_generic(e.ty.dtype):
            return e.args[0].id
        if isinstance(e, Op) and e.op in ("item", "reshape", "broadcast", "splat", "add", "sub", "mul", "maximum",
                                          "minimum", "where", "ifexp", "neg", "floordiv", "mod", "cdiv", "floor", "div",
                                          "convert") and e.args:
            for a in e.args:
                if isinstance(a, (Name, Op)) and a.ty is not None and is_generic(getattr(a.ty, "dtype", "")):
                    found = self.source_array(a)
                    if found:
                        return found
        return None

    def demand_int(self, e: Expr) -> None:
        """`e` is used as an integer; if it is a generic-dtype array's element, that array holds integers."""
        if isinstance(e.ty, TileTy) and is_generic(e.ty.dtype):
            src = self.source_array(e)
            if src:
                raise RetypeArray(src, "i32")

    def run(self) -> Kernel:
        body = tuple(self.block(self.k.body))
        return replace(self.k, body=body, derived=tuple(self.derived.items()))

    # truncdiv / truncmod (Triton's `//` and `%` on constexprs) are computed as Python's floor forms: the same
    # for the non-negative values constant arithmetic meets (tile sizes, head dims); a negative operand differs
    _CONST_OPS = {"add": ("+", "ADD"), "sub": ("-", "SUB"), "mul": ("*", "MUL"), "floordiv": ("//", "DIV"),
                  "mod": ("%", "MOD"), "cdiv": (None, "CDIV"), "truncdiv": ("//", "DIV"), "truncmod": ("%", "MOD")}

    def const_int_expr(self, e: Expr, depth: int = 0) -> tuple[str, str] | None:
        """(Python expression, generic name) of integer arithmetic on int constants and literals, which
        cuTile Python folds at compile time; Rust gets it as a const generic computed by the launcher."""
        if isinstance(e, Lit) and isinstance(e.value, int) and not isinstance(e.value, bool):
            return str(e.value), str(e.value)
        if isinstance(e, Name) and e.id in self.consts and self.consts[e.id].const_type in ("int", "bool"):
            return e.id, e.id
        if isinstance(e, Name) and e.id in self.literals:
            return self.const_int_expr(self.literals[e.id])
        if isinstance(e, Name) and e.id in self.single_defs and depth < 16:
            # a name bound once to constant arithmetic (`N = C * H`) is a compile-time value in Python too
            return self.const_int_expr(self.single_defs[e.id], depth + 1)
        if isinstance(e, Op) and e.op in self._CONST_OPS and len(e.args) == 2:
            a, b = self.const_int_expr(e.args[0], depth), self.const_int_expr(e.args[1], depth)
            if a is None or b is None:
                return None
            sym, word = self._CONST_OPS[e.op]
            expr = f"(-(-({a[0]}) // ({b[0]})))" if e.op == "cdiv" else f"(({a[0]}) {sym} ({b[0]}))"
            return expr, f"{a[1]}_{word}_{b[1]}"
        return None

    _FLOAT_OPS = {"add": ("+", "ADD"), "sub": ("-", "SUB"), "mul": ("*", "MUL"), "div": ("/", "DIV")}

    def const_float_expr(self, e: Expr) -> tuple[str, str, bool] | None:
        """(Python expression, generic name, reads a constant) of float arithmetic on constants and literals
        (`1.0 - beta`, `eps / n_cols`), which cuTile Python folds in Python's float (f64) at compile time;
        Rust gets the result as a float const generic computed by the launcher in f64."""
        if isinstance(e, Lit) and isinstance(e.value, (int, float)) and not isinstance(e.value, bool):
            if isinstance(e.value, float) and not math.isfinite(e.value):
                return None
            return repr(e.value), re.sub(r"[^A-Za-z0-9]", "_", repr(e.value).replace(".", "P").replace("-", "N")), False
        if isinstance(e, Name) and e.id in self.consts and self.consts[e.id].const_type in ("int", "float"):
            return e.id, e.id, True
        if isinstance(e, Name) and e.id in self.derived:
            return self.derived[e.id], e.id, True
        if isinstance(e, Name) and e.id in self.literals:
            return self.const_float_expr(self.literals[e.id])
        if isinstance(e, Name) and e.id in self.single_defs and not self._depth_exceeded(e):
            found = self.const_float_expr(self.single_defs[e.id])  # `N = C * H; inv = 1.0 / N`
            return None if found is None else (found[0], e.id.upper(), True)
        if isinstance(e, Op) and e.op == "neg" and len(e.args) == 1:
            a = self.const_float_expr(e.args[0])
            return None if a is None else (f"(-({a[0]}))", f"NEG_{a[1]}", a[2])
        if isinstance(e, Op) and e.op in self._FLOAT_OPS and len(e.args) == 2:
            a, b = self.const_float_expr(e.args[0]), self.const_float_expr(e.args[1])
            if a is None or b is None:
                return None
            sym, word = self._FLOAT_OPS[e.op]
            return f"(({a[0]}) {sym} ({b[0]}))", f"{a[1]}_{word}_{b[1]}", a[2] or b[2]
        return None

    def _depth_exceeded(self, e: Name) -> bool:
        """Guards the resolution of names bound once against a cycle (`x = x * 2` at the top level)."""
        seen, v = set(), e
        while isinstance(v, Name) and v.id in self.single_defs:
            if v.id in seen:
                return True
            seen.add(v.id)
            v = self.single_defs[v.id]
        return any(isinstance(x, Name) and x.id in seen for x in _sub(v))

    def derived_float_name(self, e: Expr) -> str | None:
        """A float constant folded from constants, as a derived generic (`float(...)` marks its type)."""
        if not isinstance(e, Op):
            return None
        found = self.const_float_expr(e)
        if found is None or not found[2]:
            return None  # arithmetic on literals only is folded here (see _arith)
        expr, name, _ = found
        reads_float = any(isinstance(x, Name) and (self.is_float_const(x)) for x in _sub(e)) or any(
            isinstance(x, Lit) and isinstance(x.value, float) for x in _sub(e)) or any(
            isinstance(x, Op) and x.op == "div" for x in _sub(e))
        if not reads_float:
            return None  # integer arithmetic: derived_name's business
        name = "F_" + name.upper()
        self.derived[name] = f"float({expr})"
        self.derived_floats.add(name)
        return name

    def derived_name(self, e: Expr) -> str | None:
        found = self.const_int_expr(e)
        # a name bound once to constant arithmetic (`FLAT = TILE_M * TILE_N`) is that arithmetic
        if found is None or isinstance(e, Lit) or (isinstance(e, Name) and e.id in self.consts):
            return None
        if isinstance(e, Name) and found[0].strip() == e.id:
            return None
        expr, name = found
        name = name.upper().replace("-", "NEG")
        if name[:1].isdigit():  # `1 - N`: a Rust identifier cannot start with a digit
            name = "C" + name
        self.derived[name] = expr
        return name

    # ---------------------------------------------------------------- statements
    def block(self, stmts) -> list[Stmt]:
        out = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s: Stmt) -> list[Stmt]:
        if isinstance(s, Assign):
            if len(s.targets) == 1 and s.targets[0] in self.once and (self._is_weak(s.value)
                                                                       or self._is_flag_expr(s.value)):
                # substituted at every use, like cuTile Python does (a flag expression such as
                # `check_bounds = not ALIGNED` stays a compile-time constant)
                self.literals[s.targets[0]] = s.value
                return []
            if len(s.targets) == 1 and s.targets[0] in self.once and isinstance(s.value, Op) \
                    and s.value.op in ("dtype", "dtype_of"):
                # `x_dtype = x.dtype`: a dtype is a compile-time value in cuTile Python, substituted at its uses
                self.literals[s.targets[0]] = s.value
                return []
            v = self.expr(s.value)
            if len(s.targets) == 1 and s.targets[0] in self.once and isinstance(v, Lit) and self._is_weak(v):
                # `third = 1.0 / 3.0`: folded to a Python number, weakly typed where it is used
                self.literals[s.targets[0]] = Lit(v.value, v.pos)
                return []
            if len(s.targets) == 1 and s.targets[0] in self.once and isinstance(v, Name) \
                    and v.id in self.derived_floats:
                # `inv_n = 1.0 / n_cols`: a Python float at compile time, weakly typed where it is used
                # (`f16_tile * inv_n` stays f16), as cuTile Python folds it
                self.literals[s.targets[0]] = s.value
                return []
            if len(s.targets) == 1:
                if isinstance(v.ty, ArrayTy) or v.ty is None:
                    raise fail("CT100", "only tiles and scalars can be assigned to variables", s.pos)
                self.env[s.targets[0]] = v.ty
                src = self.source_array(v)
                if src:
                    self.sources[s.targets[0]] = src
                else:
                    self.sources.pop(s.targets[0], None)
                return [Assign(s.targets, v, s.pos)]
            if not isinstance(v, TupleExpr) or len(v.items) != len(s.targets):
                raise fail("CT100", "tuple unpacking needs a tuple of the same length on the right", s.pos)
            out = []
            for t, item in zip(s.targets, v.items):
                self.env[t] = item.ty
                out.append(Assign((t,), item, s.pos))
            return out
        if isinstance(s, Eval):
            v = self.expr(s.value)
            if not (isinstance(v, Op) and v.op in WRITE_OPS):
                raise fail("CT100", "expression statement has no effect (only stores, scatters and atomics)", s.pos)
            return [Eval(v, s.pos)]
        if isinstance(s, For):
            start, stop, step = (self.scalar_int(e) for e in (s.start, s.stop, s.step))
            for b in (start, stop, step):
                if b.ty.dtype != "i32":
                    raise fail("CT104", f"a `range` bound of type {b.ty.dtype}: loops run over i32 (the loop "
                               "variable of the port is an i32); keep the bounds within int32", b.pos)
            before = dict(self.env)
            self.env[s.var] = TileTy("i32")
            body = tuple(self.block(s.body))
            self._check_carried(before, self.env, s.pos, "loop")
            self.env = {k: v for k, v in self.env.items() if k in before}
            return [For(s.var, start, stop, step, body, s.pos)]
        if isinstance(s, If):
            return self.if_stmt(s)
        if isinstance(s, While):
            cond = self.truth(self.expr(s.cond), "a `while` condition")
            before = dict(self.env)
            body = tuple(self.block(s.body))
            self._check_carried(before, self.env, s.pos, "loop")
            self.env = {k: v for k, v in self.env.items() if k in before}
            return [While(cond, body, s.pos)]
        if isinstance(s, (Continue, Break)):
            return [s]
        raise fail("CT100", "unsupported statement", s.pos)

    def _check_carried(self, before: dict, after: dict, pos: Pos, what: str) -> None:
        for name, ty in before.items():
            _unify_types(ty, after.get(name))
            if after.get(name) != ty:
                raise fail("CT104", f"`{name}` changes type inside the {what} ({ty} -> {after.get(name)}); "
                           "cuTile Rust carries values with a fixed type", pos)

    def if_stmt(self, s: If) -> list[Stmt]:
        by_dtype = self.dtype_cond_value(s.cond)
        if by_dtype is not None:
            return list(self.block(s.body if by_dtype else s.orelse))
        if self.is_float_cond(s.cond):
            return list(self.block(s.body if self.float_cond_value(s.cond) else s.orelse))
        taken = self.decided_arm(s)
        if taken is not None:
            return list(self.block(taken))
        cond = self.expr(s.cond)
        const = self.is_const(s.cond)
        before = dict(self.env)
        try:
            body = tuple(self.block(s.body))
            env_then = self.env
            self.env = dict(before)
            orelse = tuple(self.block(s.orelse))
            env_else = self.env
        except SplitNeeded as inner:
            if const and not inner.exact:
                raise SplitNeeded(s)  # split the outermost constant `if` first: predicates read top-down
            raise
        # names assigned in only one arm (and not before) are local to that arm
        names = {n for n in set(env_then) | set(env_else) if n in before or (n in env_then and n in env_else)}
        for n in sorted(names):
            _unify_types(env_then.get(n), env_else.get(n))
        same = all(env_then.get(n) == env_else.get(n) for n in names)
        if const:
            # a name only one arm of a constant `if` defines: cuTile Python folds the `if`, so a later use
            # under the same flag is fine there; here a use after it splits the kernel on this `if`
            for n in (set(env_then) ^ set(env_else)) - set(before):
                self.arm_only.setdefault(n, s)
        if const and not same:
            raise SplitNeeded(s)
        if not const:
            cond = self.truth(cond, "an `if` condition")
            self._check_carried(before, env_then, s.pos, "if")
            self._check_carried(before, env_else, s.pos, "else")
        self.env = {n: env_then[n] for n in names}
        declares = tuple(sorted((n, env_then[n]) for n in names if n not in before))
        return [If(cond, body, orelse, s.pos, const=const, declares=declares, returns=s.returns)]

    def truth(self, cond: Expr, what: str) -> Expr:
        """A runtime condition as a bool scalar, the way cuTile Python tests it: an integer `n` is
        `n != 0` (cmpi); a float would be truncated to i1 (ftoi), which has no cuTile Rust form."""
        if not (isinstance(cond.ty, TileTy) and cond.ty.is_scalar):
            raise fail("CT104", f"{what} must be a scalar", cond.pos)
        if cond.ty.dtype in ("bool", "i1"):
            return cond
        if _is_int(cond.ty.dtype):
            zero = Lit(0, cond.pos, TileTy(cond.ty.dtype))
            return Op("cmp", (cond, zero), cond.pos, (("pred", "!="),), "CTR-CMP", TileTy("bool"))
        raise fail("CT104", f"{what} is a {cond.ty.dtype} value: cuTile Python truncates it to a bool (ftoi, so 0.5 "
                   "is false), which has no cuTile Rust form; write the comparison you mean (`x != 0.0`), or "
                   "annotate a flag parameter `: bool`", cond.pos)

    def _is_flag_expr(self, e: Expr) -> bool:
        """`not ALIGNED`, `A and not B`: booleans over ct.Constant[bool] parameters only."""
        if isinstance(e, Name):
            return e.id in self.consts and self.consts[e.id].const_type == "bool"
        if isinstance(e, Op) and e.op in ("not", "and", "or"):
            return all(self._is_flag_expr(a) for a in e.args)
        return False

    def bool_const_value(self, e: Expr, depth: int = 0) -> Expr:
        """A boolean over bool constants (`not ALIGNED`, through names assigned once) as a literal of this
        variant; anything else is returned as it is (the caller refuses it)."""
        if depth > 32:
            return e
        if isinstance(e, Lit):
            return e
        if isinstance(e, Name) and e.id in self.consts and self.consts[e.id].const_type == "bool":
            return self.flag_value(e)
        if isinstance(e, Name) and e.id in self.single_defs:
            v = self.bool_const_value(self.single_defs[e.id], depth + 1)
            return v if isinstance(v, Lit) else e
        if isinstance(e, Op) and e.op in ("not", "and", "or"):
            vals = [self.bool_const_value(a, depth + 1) for a in e.args]
            if all(isinstance(v, Lit) and isinstance(v.value, bool) for v in vals):
                b = [v.value for v in vals]
                out = (not b[0]) if e.op == "not" else (all(b) if e.op == "and" else any(b))
                return Lit(out, e.pos)
        return e

    def decided_arm(self, s: If):
        """The arm of a constant `if` this variant's predicates decide (cuTile Python folds it), else None."""
        preds = self.k.variant.predicates
        if not preds or not self.is_const(s.cond):
            return None
        from .specialize import predicate_text
        try:
            text = predicate_text(s.cond)
        except TranspileError:
            return None
        taken = decides(preds, text)
        return None if taken is None else (s.body if taken else s.orelse)

    def dtype_value(self, e: Expr) -> str | None:
        """The dtype a dtype-valued expression names (`ct.float32`, `x.dtype`, a local holding one), else None."""
        if isinstance(e, Name) and e.id in self.literals:
            return self.dtype_value(self.literals[e.id])
        if isinstance(e, Op) and e.op == "dtype":
            return e.attr("dtype")
        if isinstance(e, Op) and e.op == "dtype_of":
            ty = self.expr(e.args[0]).ty
            return ty.dtype if isinstance(ty, (ArrayTy, TileTy)) else None
        return None

    def dtype_cond_value(self, e: Expr) -> bool | None:
        """The value of a condition on dtypes (`x.dtype == ct.float32`, `not`, `and`, `or` of such) in this
        entry; None when `e` is not one. The element type E equals a dtype only in an entry of that dtype
        alone (Variant.dtypes): elsewhere SplitOnDtype makes one."""
        if isinstance(e, Op) and e.op == "not":
            v = self.dtype_cond_value(e.args[0])
            return None if v is None else not v
        if isinstance(e, Op) and e.op in ("and", "or"):
            a, b = (self.dtype_cond_value(x) for x in e.args)
            if a is None or b is None:
                return None
            return (a and b) if e.op == "and" else (a or b)
        if not (isinstance(e, Op) and e.op == "cmp" and e.attr("pred") in ("==", "!=")):
            return None
        a, b = self.dtype_value(e.args[0]), self.dtype_value(e.args[1])
        if a is None or b is None:
            return None
        same = a == b
        unify_generics(a, b)  # `x.dtype == w.dtype`: true in every port, once they share one generic
        if a != b and (is_generic(a) or is_generic(b)):
            generic, t = (a, b) if is_generic(a) else (b, a)
            unify_generics("E", generic)  # the entries' dtypes (Variant.dtypes) are E's
            allowed = self.k.variant.dtypes
            if t not in allowed:
                same = False
            elif allowed == (t,):
                same = True
            else:
                raise SplitOnDtype(t)
        return same if e.attr("pred") == "==" else not same

    def flag_value(self, flag: Name) -> Lit:
        """The value of a bool constant in this variant (SplitOnConst when the variant does not fix it)."""
        taken = decides(self.k.variant.predicates, flag.id)
        if taken is None:
            raise SplitOnConst(flag.id)
        return Lit(taken, flag.pos)

    def is_float_const(self, e: Expr) -> bool:
        return isinstance(e, Name) and ((e.id in self.consts and self.consts[e.id].const_type == "float")
                                        or e.id in self.derived_floats)

    def is_float_cond(self, e: Expr) -> bool:
        """A condition over constants that reads a ct.Constant[float] (`if beta == 0.0:`). cuTile Python decides
        it at compile time; the Rust entry holds the float only as its bits (a const generic i32), so there is
        no const-generic condition form: such an `if` splits the kernel into variants on the condition (the
        host evaluates the predicate on the float's value, as Python does)."""
        def leaves(x):
            if isinstance(x, Op) and x.op in ("cmp", "not", "and", "or"):
                for a in x.args:
                    yield from leaves(a)
            else:
                yield x
        items = list(leaves(e))
        return any(self.is_float_const(x) for x in items) and all(
            isinstance(x, Lit) or (isinstance(x, Name) and (x.id in self.consts or x.id in self.derived
                                                            or x.id in self.literals)) for x in items)

    def float_cond_value(self, e: Expr) -> bool:
        """The truth of a float-constant condition in this variant (SplitOnConst on its text when the
        variant's predicates do not decide it)."""
        from .specialize import predicate_text
        text = predicate_text(e)
        taken = decides(self.k.variant.predicates, text)
        if taken is None:
            raise SplitOnConst(text)
        return taken

    def is_const(self, e: Expr) -> bool:
        if isinstance(e, Lit):
            return True
        if isinstance(e, Name):
            if self.is_float_const(e):
                return False  # its value is not known to the Rust const generics as a number
            return e.id in self.consts or e.id in self.derived
        if isinstance(e, Op) and e.op in ("cmp", "not", "and", "or"):
            return all(self.is_const(a) for a in e.args)
        return False

    # ---------------------------------------------------------------- expressions
    def scalar_int(self, e: Expr) -> Expr:
        t = self.expr(e)
        self.demand_int(t)
        if not (isinstance(t.ty, TileTy) and t.ty.is_scalar and _is_int(t.ty.dtype)):
            raise fail("CT104", f"expected an integer scalar, got {t.ty}", e.pos)
        return t

    def shape_dims(self, e: Expr) -> tuple[str, ...]:
        items = e.items if isinstance(e, TupleExpr) else (e,)
        out = []
        for it in items:
            if isinstance(it, Lit) and isinstance(it.value, int) and not isinstance(it.value, bool):
                out.append(str(it.value))
            elif isinstance(it, Name) and it.id in self.consts and self.consts[it.id].const_type == "int":
                out.append(it.id)
            elif isinstance(it, Name) and it.id in self.literals and isinstance(self.literals[it.id], Lit):
                out.extend(self.shape_dims(self.literals[it.id]))
            elif self.derived_name(it) is not None:
                out.append(self.derived_name(it))
            elif self.is_float_const(it):
                raise fail("CT105", f"the ct.Constant[float] `{it.id}` is used as a tile shape: shapes must be "
                           "integers (ct.Constant[int] parameters or integer literals)", it.pos)
            else:
                raise fail("CT105", "tile shapes must be integer literals or ct.Constant[int] parameters "
                           "(arithmetic on constants has no stable-Rust const-generic form)", it.pos)
        return tuple(out)

    def dtype_arg(self, e: Expr) -> str:
        dt = self.dtype_value(e)
        if dt is None:
            raise fail("CT102", "dtype must be a ct dtype (ct.float32, ...) or `<array>.dtype`", e.pos)
        return dt

    def expr(self, e: Expr) -> Expr:
        if isinstance(e, Lit):
            if isinstance(e.value, str):
                raise fail("CT100", "string values are only supported as `order=`", e.pos)
            if isinstance(e.value, bool):
                return replace(e, ty=TileTy("bool"))
            if isinstance(e.value, int):
                # cuTile Python types an integer constant by its value (typing_support.dtype_of_constant_scalar)
                if not -2**63 <= e.value < 2**64:
                    raise fail("CT121", f"integer constant {e.value} is out of range of every integer type "
                               "(cuTile Python rejects it too); write it as a float (`1e40`) if a float is meant",
                               e.pos)
                return replace(e, ty=TileTy("i32" if -2**31 <= e.value < 2**31 else
                                            "i64" if e.value < 2**63 else "u64"))
            return replace(e, ty=TileTy("f32"))
        if isinstance(e, Name):
            if e.id in self.literals:
                return self.expr(self.literals[e.id])
            if e.id not in self.env:
                if e.id in self.arm_only:
                    raise SplitNeeded(self.arm_only[e.id], exact=True)
                raise fail("CT103", f"`{e.id}` is not defined", e.pos)
            return replace(e, ty=self.env[e.id])
        if isinstance(e, TupleExpr):
            items = tuple(self.expr(i) for i in e.items)
            return replace(e, items=items)
        if isinstance(e, Op):
            derived = self.derived_name(e)
            if derived is not None:  # arithmetic on constants: folded, like cuTile Python does
                return Name(derived, e.pos, TileTy("i32"))
            derived = self.derived_float_name(e)
            if derived is not None:  # float arithmetic on constants: folded in f64 by the launcher
                return Name(derived, e.pos, TileTy("f32"))
            fn = getattr(self, "op_" + e.op, None)
            if fn is None:
                raise fail(e.rule or "CT101", f"operation `{e.op}` is not supported here", e.pos)
            return fn(e)
        raise fail("CT100", "unsupported expression", e.pos)

    # conversions ---------------------------------------------------------
    def _is_weak(self, e: Expr) -> bool:
        """Python numbers (and constant choices between them) take the dtype of what they meet."""
        if isinstance(e, Lit):
            return isinstance(e.value, (int, float)) and not isinstance(e.value, bool)
        if isinstance(e, Name):
            # constants are Python values at compile time: weakly typed like literals
            # (a ct.Constant[float] too: `f16_tile * eps` converts eps to f16 at compile time)
            return e.id in self.literals or (e.id in self.consts and self.consts[e.id].const_type in ("int", "float")) \
                or e.id in self.derived
        return (isinstance(e, Op) and e.op == "ifexp" and self.is_const(e.args[0])
                and all(self._is_weak(a) for a in e.args[1:]))

    def to_dtype(self, e: Expr, dt: str) -> Expr:
        if isinstance(e.ty, TileTy) and e.ty.dtype == dt:
            return e
        if isinstance(e, Lit):
            check_int_range(e, dt)
            return replace(e, ty=TileTy(dt))
        if isinstance(e, Name) and self._is_weak(e) and _is_int(dt) and not self.is_float_const(e):
            return replace(e, ty=TileTy(dt))
        if self.is_float_const(e) and _is_float(dt) and e.ty.is_scalar:
            # a weakly typed float constant takes the float dtype it meets (the emitter converts its f32 value;
            # the normalizer folds that conversion of a constant, as cuTile Python writes the constant in `dt`)
            return replace(e, ty=TileTy(dt))
        if isinstance(e, Op) and e.op == "ifexp" and e.attr("const") and self._is_weak(e):
            return replace(e, args=(e.args[0],) + tuple(self.to_dtype(a, dt) for a in e.args[1:]), ty=TileTy(dt))
        return Op("convert", (e,), e.pos, ty=TileTy(dt, e.ty.shape))

    def to_shape(self, e: Expr, shape: tuple) -> Expr:
        if e.ty.shape == tuple(shape):
            return e
        if e.ty.is_scalar:
            if isinstance(e, Lit) and _is_int(e.ty.dtype):
                return Op("const_tile", (e,), e.pos, ty=TileTy(e.ty.dtype, tuple(shape)))
            return Op("splat", (e,), e.pos, ty=TileTy(e.ty.dtype, tuple(shape)))
        cur = e
        if len(cur.ty.shape) < len(shape):
            ext = ("1",) * (len(shape) - len(cur.ty.shape)) + cur.ty.shape
            cur = Op("reshape", (cur,), e.pos, ty=TileTy(cur.ty.dtype, ext))
            if ext == tuple(shape):
                return cur
        return Op("broadcast", (cur,), e.pos, ty=TileTy(cur.ty.dtype, tuple(shape)))

    def coerce_pair(self, a: Expr, b: Expr, pos: Pos, float_result: bool = False) -> tuple[Expr, Expr, TileTy]:
        for x in (a, b):
            if not isinstance(x.ty, TileTy):
                raise fail("CT104", f"operand of type {x.ty} is not a tile or scalar", x.pos)
        la, lb = self._is_weak(a), self._is_weak(b)
        if la and not lb:
            dt = b.ty.dtype if (_is_float(b.ty.dtype) or _is_int(a.ty.dtype)) else "f32"
        elif lb and not la:
            dt = a.ty.dtype if (_is_float(a.ty.dtype) or _is_int(b.ty.dtype)) else "f32"
        else:
            dt = promote(a.ty.dtype, b.ty.dtype, pos)
        if float_result and not _is_float(dt):
            dt = "f32"
        shape = broadcast_shapes(a.ty.shape, b.ty.shape, pos)
        a2 = self.to_shape(self.to_dtype(a, dt), shape)
        b2 = self.to_shape(self.to_dtype(b, dt), shape)
        return a2, b2, TileTy(dt, shape)

    # ops -------------------------------------------------------------------
    def op_bid(self, e: Op) -> Op:
        axis = e.args[0]
        if not (isinstance(axis, Lit) and axis.value in (0, 1, 2)):
            raise fail(e.rule, "the axis of ct.bid / ct.num_blocks must be 0, 1 or 2", e.pos)
        return replace(e, args=(replace(axis, ty=TileTy("i32")),), ty=TileTy("i32"))

    op_num_blocks = op_bid

    def _array(self, e: Expr, rule: str) -> Name:
        if not isinstance(e, Name) or not isinstance(self.env.get(e.id), ArrayTy):
            raise fail(rule, "the first argument must be an array parameter of the kernel", e.pos)
        return replace(e, ty=self.env[e.id])

    def _index(self, e: Expr | None, rank: int, rule: str, pos: Pos) -> TupleExpr:
        if e is None:
            raise fail(rule, "missing `index`", pos)
        items = e.items if isinstance(e, TupleExpr) else (e,)
        if len(items) != rank:
            raise fail(rule, f"index has {len(items)} entries, the array has rank {rank}", e.pos)
        return TupleExpr(tuple(self.scalar_int(i) for i in items), e.pos)

    def latency_value(self, lat: Expr, e: Op) -> int | str:
        """A `latency=` hint: an integer literal, or a choice between literals on constants that cuTile
        Python decides at compile time (`lat = 3 if BLOCK <= 1024 else 6`), which becomes a derived const
        generic (its name is returned)."""
        v = lat
        for _ in range(8):  # through names assigned once / module constants
            if isinstance(v, Name) and v.id in self.single_defs:
                v = self.single_defs[v.id]
            elif isinstance(v, Name) and v.id in self.literals:
                v = self.literals[v.id]
            else:
                break
        if isinstance(v, Lit) and isinstance(v.value, int) and not isinstance(v.value, bool):
            return v.value
        p = self.consts.get(v.id) if isinstance(v, Name) else None
        if p is not None and p.kind == "const" and p.const_type == "int":
            return p.name  # a ct.Constant[int] is the const generic itself: Latency::<NAME>
        if (isinstance(v, Op) and v.op == "ifexp" and self.is_const(v.args[0])
                and all(isinstance(a, Lit) and isinstance(a.value, int) and not isinstance(a.value, bool)
                        for a in v.args[1:])):
            from .specialize import _slug, predicate_text
            cond = predicate_text(v.args[0])
            name = f"LATENCY_{v.args[1].value}_IF_{_slug(cond).upper()}_ELSE_{v.args[2].value}"
            self.derived[name] = f"({v.args[1].value} if ({cond}) else {v.args[2].value})"
            return name
        raise fail(e.rule, "`latency` must be an integer literal (or a choice between literals on constants)",
                   e.pos)

    def _hint_attrs(self, e: Op) -> tuple:
        lat = e.attr("latency")
        tma = e.attr("allow_tma")
        out = []
        if lat is not None:
            out.append(("latency", self.latency_value(lat, e)))
        if tma is not None:
            if not (isinstance(tma, Lit) and isinstance(tma.value, bool)):
                raise fail(e.rule, "`allow_tma` must be True or False", e.pos)
            out.append(("allow_tma", tma.value))
        return tuple(out)

    def op_load(self, e: Op) -> Op:
        arr = self._array(e.args[0], e.rule)
        rank = arr.ty.rank
        index = self._index(e.args[1], rank, e.rule, e.pos)
        if e.args[2] is None:
            raise fail(e.rule, "missing `shape`", e.pos)
        scalar = isinstance(e.args[2], TupleExpr) and not e.args[2].items
        shape = ("1",) * rank if scalar else self.shape_dims(e.args[2])
        if len(shape) != rank:
            raise fail(e.rule, f"tile shape has rank {len(shape)}, the array has rank {rank}", e.pos)
        pad = e.attr("padding_mode")
        padding = "padding::None"
        if pad is not None:
            if not (isinstance(pad, Op) and pad.op == "enum"):
                raise fail(e.rule, "`padding_mode` must be a ct.PaddingMode member", e.pos)
            padding = pad.attr("value")
        order = e.attr("order")
        attrs = (("padding", padding),) + self._hint_attrs(e)
        if order is not None:
            items = order.items if isinstance(order, TupleExpr) else ()
            if isinstance(order, Lit) and order.value == "F" and rank == 2:
                perm = (1, 0)
            elif items and all(isinstance(i, Lit) and isinstance(i.value, int) for i in items) \
                    and sorted(i.value for i in items) == list(range(rank)):
                perm = tuple(i.value for i in items)
            else:
                raise fail(e.rule, "`order` must be a permutation of integer literals", e.pos)
            if perm != tuple(range(rank)):
                attrs += (("order", perm),)
        load = Op("load", (arr, index), e.pos, attrs, e.rule, TileTy(arr.ty.dtype, shape))
        if scalar:
            return Op("item", (load,), e.pos, rule=e.rule, ty=TileTy(arr.ty.dtype))
        return load

    def op_store(self, e: Op) -> Op:
        arr = self._array(e.args[0], e.rule)
        rank = arr.ty.rank
        index = self._index(e.args[1], rank, e.rule, e.pos)
        if e.args[2] is None:
            raise fail(e.rule, "missing `tile`", e.pos)
        tile = self.expr(e.args[2])
        if not isinstance(tile.ty, TileTy):
            raise fail(e.rule, "`tile` must be a tile", e.pos)
        if tile.ty.is_scalar and rank:
            if self._is_weak(tile):
                tile = self.to_dtype(tile, arr.ty.dtype)
            tile = Op("reshape", (tile,), e.pos, rule=e.rule, ty=TileTy(tile.ty.dtype, ("1",) * rank))
        if len(tile.ty.shape) != rank:
            raise fail(e.rule, f"stored tile has rank {len(tile.ty.shape)}, the array has rank {rank} "
                       "(reshape the tile first)", e.pos)
        if tile.ty.dtype != arr.ty.dtype and self._widens_to(tile, arr.ty.dtype, e.pos):
            tile = self.to_dtype(tile, arr.ty.dtype)  # cuTile Python's implicit cast (lossless widening)
        unify_generics(tile.ty.dtype, arr.ty.dtype)
        if tile.ty.dtype != arr.ty.dtype:
            if is_generic(arr.ty.dtype) and (_is_int(tile.ty.dtype) or tile.ty.dtype == "bool" or tile.ty.dtype == "f32"):
                # an integer output, or an f32 one (cuTile Python only casts losslessly on store: an array
                # that receives f32 tiles without astype must itself be f32)
                raise RetypeArray(arr.id, tile.ty.dtype)
            raise fail(e.rule, f"storing a {tile.ty.dtype} tile into an array of dtype {arr.ty.dtype}; "
                       "write `.astype(<array>.dtype)` (cuTile Python only allows lossless implicit casts, "
                       "which depend on the specialization)", e.pos)
        attrs = self._hint_attrs(e)
        return Op("store", (arr, index, tile), e.pos, attrs, e.rule, None)

    @staticmethod
    def _widens_to(v: Expr, target: str, pos) -> bool:
        """A float value that converts to `target` without loss in every specialization (f16/bf16/E to f32):
        cuTile Python casts it implicitly where it is stored (implicit_cast: promote(src, dst) == dst)."""
        src = v.ty.dtype
        if src == target or not (_is_float(src) and _is_float(target)) or is_generic(target):
            return False
        try:
            return promote(src, target, pos) == target
        except TranspileError:
            return False

    def op_num_tiles(self, e: Op) -> Op:
        arr = self._array(e.args[0], e.rule)
        axis = e.args[1]
        if not (isinstance(axis, Lit) and isinstance(axis.value, int)):
            raise fail(e.rule, "`axis` must be an integer literal", e.pos)
        shape = self.shape_dims(e.args[2])
        return Op("num_tiles", (arr,), e.pos, (("axis", axis.value % arr.ty.rank), ("shape", shape)), e.rule,
                  TileTy("i32"))

    def _creation(self, e: Op, fill: Expr) -> Op:
        shape = self.shape_dims(e.args[0])
        dt = self.dtype_arg(e.args[-1]) if e.args[-1] is not None else None
        if dt is None:
            raise fail(e.rule, "`dtype` is required", e.pos)
        if isinstance(fill, Lit):
            if is_generic(dt) and fill.value != 0:
                raise fail(e.rule, f"only zero-filled tiles of the array dtype {dt} have a Rust form "
                           "that gives the same Tile IR (E::ZERO); use a concrete dtype", e.pos)
            check_int_range(fill, dt)
            return Op("const_tile", (replace(fill, ty=TileTy(dt)),), e.pos, ty=TileTy(dt, shape), rule=e.rule)
        v = self.expr(fill)
        if not (isinstance(v.ty, TileTy) and v.ty.is_scalar):
            raise fail(e.rule, "the fill value must be a scalar", e.pos)
        return Op("splat", (self.to_dtype(v, dt),), e.pos, ty=TileTy(dt, shape), rule=e.rule)

    def op_zeros(self, e: Op) -> Op:
        return self._creation(e, Lit(0, e.pos))

    def op_ones(self, e: Op) -> Op:
        return self._creation(e, Lit(1, e.pos))

    def op_full(self, e: Op) -> Op:
        return self._creation(replace(e, args=(e.args[0], e.args[2])), e.args[1])

    def op_astype(self, e: Op) -> Expr:
        x = self.expr(e.args[0])
        dt = self.dtype_arg(e.args[1])
        if not isinstance(x.ty, TileTy):
            raise fail(e.rule, "astype needs a tile", e.pos)
        if x.ty.dtype == dt:
            return x
        return Op("convert", (x,), e.pos, rule=e.rule, ty=TileTy(dt, x.ty.shape))

    def op_reshape(self, e: Op) -> Expr:
        x = self.expr(e.args[0])
        shape = self.shape_dims(e.args[1])
        if shape == x.ty.shape:
            return x
        return Op("reshape", (x,), e.pos, rule=e.rule, ty=TileTy(x.ty.dtype, shape))

    def op_index_none(self, e: Op) -> Expr:
        x = self.expr(e.args[0])
        pattern = e.attr("pattern")
        dims = list(x.ty.shape)
        out, it = [], iter(dims)
        for p in pattern:
            out.append("1" if p == "None" else next(it, None))
        out.extend(it)
        if None in out:
            raise fail("CT104", "index has more `:` than the tile has dimensions", e.pos)
        return Op("reshape", (x,), e.pos, rule=e.rule, ty=TileTy(x.ty.dtype, tuple(out)))

    def _axes(self, e: Op, x: Expr) -> list[int]:
        axis = e.args[1]
        rank = len(x.ty.shape)
        if axis is None:
            return list(range(rank))
        items = axis.items if isinstance(axis, TupleExpr) else (axis,)
        if not all(isinstance(a, Lit) and isinstance(a.value, int) and -rank <= a.value < rank for a in items):
            raise fail(e.rule, "`axis` must be integer literals within the tile's rank", e.pos)
        return sorted({a.value % rank for a in items})

    def _axis(self, e: Op, x: Expr) -> int:
        axis = e.args[1]
        if axis is None or not (isinstance(axis, Lit) and isinstance(axis.value, int)):
            raise fail(e.rule, "reductions need an integer literal `axis` (reducing all axes is not supported yet)", e.pos)
        rank = len(x.ty.shape)
        if not -rank <= axis.value < rank:
            raise fail(e.rule, f"axis {axis.value} out of range for a rank-{rank} tile", e.pos)
        return axis.value % rank

    def _reduce(self, e: Op) -> Expr:
        x = self.expr(e.args[0])
        axes = self._axes(e, x)
        kd = e.attr("keepdims")
        keep = isinstance(kd, Lit) and kd.value is True
        # several axes: a chain of reductions, each later axis shifted down by those already reduced
        r, shape = x, list(x.ty.shape)
        for n, axis in enumerate(axes):
            ax = axis - n
            shape.pop(ax)
            r = Op(e.op, (r,), e.pos, (("axis", ax),), e.rule, TileTy(x.ty.dtype, tuple(shape)))
        if keep:
            kshape = tuple("1" if i in axes else d for i, d in enumerate(x.ty.shape))
            return Op("reshape", (r,), e.pos, rule=e.rule, ty=TileTy(x.ty.dtype, kshape))
        return r

    op_reduce_sum = op_reduce_max = op_reduce_min = op_reduce_prod = _reduce

    def op_mma(self, e: Op) -> Op:
        a, b, acc = (self.expr(x) for x in e.args)
        unify_generics(a.ty.dtype, b.ty.dtype)
        sa, sb, sc = a.ty.shape, b.ty.shape, acc.ty.shape
        if len(sa) < 2 or len(sa) != len(sb) or len(sc) != len(sa) or sa[-1] != sb[-2] or sc[-2:] != (sa[-2], sb[-1]):
            raise fail(e.rule, f"mma shapes do not match: {a.ty} x {b.ty} + {acc.ty}", e.pos)
        return Op("mma", (a, b, acc), e.pos, rule=e.rule, ty=acc.ty)

    MATMUL_ACC = {"f16": "f16", "bf16": "f32", "f32": "f32", "tf32": "f32", "f8e4m3fn": "f32", "f8e5m2": "f32",
                  "i8": "i32"}

    def op_matmul(self, e: Op) -> Expr:
        a, b = self.expr(e.args[0]), self.expr(e.args[1])
        unify_generics(a.ty.dtype, b.ty.dtype)
        if a.ty.dtype != b.ty.dtype:
            raise fail(e.rule, f"ct.matmul operands have different dtypes ({a.ty.dtype}, {b.ty.dtype})", e.pos)
        dt = a.ty.dtype
        if dt not in self.MATMUL_ACC and e.attr("accumulator") != "f32":
            raise fail("CT104", f"ct.matmul's accumulator depends on the element type ({dt}): f16 accumulates in "
                       "f16, bf16 in f32; cast the operands with astype, or use ct.mma with an explicit accumulator",
                       e.pos)
        sa, sb = a.ty.shape, b.ty.shape
        if len(sa) < 2 or len(sa) != len(sb) or sa[-1] != sb[-2] or sa[:-2] != sb[:-2]:
            raise fail(e.rule, f"matmul shapes do not match: {a.ty} x {b.ty}", e.pos)
        acc_ty = TileTy(self.MATMUL_ACC.get(dt, "f32"), sa[:-1] + (sb[-1],))
        if e.attr("accumulator") == "f32":  # Triton's tl.dot: float32 (int8: int32) whatever the operands
            acc_ty = TileTy("i32" if _is_int(dt) else "f32", acc_ty.shape)
        acc = Op("const_tile", (Lit(0, e.pos, TileTy(acc_ty.dtype)),), e.pos, rule=e.rule, ty=acc_ty)
        r = Op("mma", (a, b, acc), e.pos, rule=e.rule, ty=acc_ty)
        if acc_ty.dtype != dt and e.attr("accumulator") != "f32":
            return Op("convert", (r,), e.pos, rule=e.rule, ty=TileTy(dt, acc_ty.shape))
        return r

    def _unary_float(self, e: Op) -> Op:
        x = self.expr(e.args[0])
        if not _is_float(x.ty.dtype):
            x = self.to_dtype(x, "f32")
        ftz = e.attr("flush_to_zero")
        attrs = (("ftz", bool(isinstance(ftz, Lit) and ftz.value)),)
        rounding = self._rounding(e)
        if rounding is not None:
            # exp and tanh take FULL and APPROX (f32 only, cuTile Python checks); sqrt any IEEE mode
            allowed = ("Full", "Approx") if e.op in ("exp", "tanh") else ("NearestEven", "Zero", "NegativeInf",
                                                                          "PositiveInf", "Approx")
            if rounding not in allowed:
                raise fail(e.rule, f"`rounding_mode={rounding}` is not supported for `{e.op}`", e.pos)
            attrs += (("rounding", rounding),)
        return Op(e.op, (x,), e.pos, attrs, e.rule, x.ty)

    op_exp = op_exp2 = op_log = op_log2 = op_sqrt = op_rsqrt = op_tanh = _unary_float

    def op_abs(self, e: Op) -> Op:
        x = self.expr(e.args[0])
        return Op("abs", (x,), e.pos, rule=e.rule, ty=x.ty)

    def op_neg(self, e: Op) -> Op:
        x = self.expr(e.args[0])
        return Op("neg", (x,), e.pos, rule=e.rule, ty=x.ty)

    def _minmax(self, e: Op) -> Op:
        a, b = self.expr(e.args[0]), self.expr(e.args[1])
        a, b, ty = self.coerce_pair(a, b, e.pos)
        return Op(e.op, (a, b), e.pos, rule=e.rule, ty=ty)

    op_maximum = op_minimum = _minmax

    def op_where(self, e: Op) -> Op:
        c = self.expr(e.args[0])
        a, b = self.expr(e.args[1]), self.expr(e.args[2])
        a, b, ty = self.coerce_pair(a, b, e.pos)
        shape = broadcast_shapes(c.ty.shape, ty.shape, e.pos)
        a, b = self.to_shape(a, shape), self.to_shape(b, shape)
        c = self.to_shape(c, shape)
        return Op("where", (c, a, b), e.pos, rule=e.rule, ty=TileTy(ty.dtype, shape))

    def op_cdiv(self, e: Op) -> Op:
        a, b = self.expr(e.args[0]), self.expr(e.args[1])
        self.demand_int(a)
        self.demand_int(b)
        a, b, ty = self.coerce_pair(a, b, e.pos)
        if not _is_int(ty.dtype):
            raise fail(e.rule, "ct.cdiv needs integer operands", e.pos)
        return Op("cdiv", (a, b), e.pos, rule=e.rule, ty=ty)

    def _arith(self, e: Op) -> Op:
        a, b = self.expr(e.args[0]), self.expr(e.args[1])
        if isinstance(a, Lit) and isinstance(b, Lit):
            v = {"add": lambda: a.value + b.value, "sub": lambda: a.value - b.value,
                 "mul": lambda: a.value * b.value, "div": lambda: a.value / b.value}[e.op]()
            return self.expr(Lit(v, e.pos))  # Python folds arithmetic on constants
        if e.op == "floordiv":
            raise fail(e.rule, "`//` is not supported yet", e.pos)
        a, b, ty = self.coerce_pair(a, b, e.pos, float_result=(e.op == "div"))
        if ty.is_scalar and not _is_int(ty.dtype) and all(self._is_weak(x) or (isinstance(x, Op) and x.op == "convert"
                                                                            and self._is_weak(x.args[0])) for x in (a, b)):
            raise fail("CT107", "float arithmetic on constants: cuTile Python folds it into one literal at compile "
                       "time, which a const generic cannot reproduce in cuTile Rust; precompute it (e.g. pass "
                       "1/N as a runtime float)", e.pos)
        return Op(e.op, (a, b), e.pos, self._float_modes(e, ty), e.rule, ty)

    def _rounding(self, e: Op) -> str | None:
        """The `rounding_mode=` of a call as a cuTile Rust mode name (None: not given, or `None`)."""
        mode = e.attr("rounding_mode")
        if mode is None or (isinstance(mode, Name) and mode.id == "None"):
            return None
        if not (isinstance(mode, Op) and mode.op == "enum" and str(mode.attr("value")).startswith("rounding::")):
            raise fail(e.rule, "`rounding_mode` must be a ct.RoundingMode member", e.pos)
        return mode.attr("value").split("::")[1]

    def _float_modes(self, e: Op, ty) -> tuple:
        """`rounding_mode=` / `flush_to_zero=` of a functional form (ct.add(x, y, ...)): attrs `rounding` and
        `ftz` when they differ from the operator's (nearest-even, no flush); float operands only."""
        rounding, ftz = self._rounding(e) or "NearestEven", e.attr("flush_to_zero")
        if ftz is not None and not (isinstance(ftz, Lit) and isinstance(ftz.value, bool)):
            raise fail(e.rule, "`flush_to_zero` must be True or False", e.pos)
        flush = bool(ftz is not None and ftz.value)
        if rounding == "NearestEven" and not flush:
            return ()
        if not _is_float(ty.dtype):
            raise fail(e.rule, "`rounding_mode` / `flush_to_zero` apply to float operands only", e.pos)
        return (("ftz", flush), ("rounding", rounding))

    op_add = op_sub = op_mul = op_div = op_floordiv = _arith

    def op_cmp(self, e: Op) -> Op:
        a, b = self.expr(e.args[0]), self.expr(e.args[1])
        for x, y in ((a, b), (b, a)):
            if isinstance(x.ty, TileTy) and is_generic(x.ty.dtype) and isinstance(y.ty, TileTy) and _is_int(y.ty.dtype) \
                    and not isinstance(y, Lit):
                self.demand_int(x)
        a, b, ty = self.coerce_pair(a, b, e.pos)
        return Op("cmp", (a, b), e.pos, e.attrs, e.rule, TileTy("bool", ty.shape))

    def op_not(self, e: Op) -> Op:
        x = self.expr(e.args[0])
        return Op("not", (x,), e.pos, rule=e.rule, ty=TileTy("bool"))

    def op_and(self, e: Op) -> Op:
        a, b = self.expr(e.args[0]), self.expr(e.args[1])
        return Op(e.op, (a, b), e.pos, rule=e.rule, ty=TileTy("bool"))

    op_or = op_and


def _pointer_ops():
    """Element-wise memory access through pointer tiles: gather, scatter, atomics."""

    def _indices(self, e: Op, arr: Name) -> tuple:
        idx = e.args[1]
        items = idx.items if isinstance(idx, TupleExpr) else (idx,)
        if len(items) != arr.ty.rank:
            raise fail(e.rule, f"{len(items)} index tiles for an array of rank {arr.ty.rank}", e.pos)
        typed = []
        for it in items:
            t = self.expr(it)
            self.demand_int(t)
            if not (isinstance(t.ty, TileTy) and t.ty.dtype in ("i32", "i64")):
                raise fail(e.rule, f"gather/scatter indices must be int32 or int64 tiles, got {t.ty}", it.pos)
            typed.append(t)
        shape: tuple = ()
        for t in typed:
            shape = broadcast_shapes(shape, t.ty.shape, e.pos)
        return tuple(typed), shape

    def _mask(self, e: Op, shape: tuple):
        m = e.attr("mask")
        if m is None:
            return None
        mt = self.expr(m)
        if mt.ty.dtype != "bool":
            raise fail(e.rule, "`mask` must be a boolean tile", e.pos)
        return self.to_shape(mt, shape)

    def _common(self, e: Op):
        arr = self._array(e.args[0], e.rule)
        cb = e.attr("check_bounds")
        if cb is not None and not isinstance(cb, Lit):
            cb = self.bool_const_value(cb)
        if cb is not None and not (isinstance(cb, Lit) and isinstance(cb.value, bool)):
            raise fail(e.rule, "`check_bounds` must be True or False (a literal or a module constant; a "
                       "ct.Constant[bool] that selects it is not supported yet)", e.pos)
        idx, shape = self._indices(e, arr)
        lat = e.attr("latency")
        lat = self.latency_value(lat, e) if lat is not None else 0
        memory = []
        for key, kind, default in (("memory_order", "ordering::", "ordering::AcqRel"),
                                   ("memory_scope", "scope::", "scope::Device")):
            v = e.attr(key)
            if v is None:
                continue
            if not (isinstance(v, Op) and v.op == "enum" and str(v.attr("value")).startswith(kind)):
                raise fail(e.rule, f"`{key}` must be a ct.{'MemoryOrder' if kind == 'ordering::' else 'MemoryScope'}"
                           " member that cuTile Rust 0.5.0 has (RELAXED, ACQUIRE, RELEASE, ACQ_REL; BLOCK, DEVICE, "
                           "SYS)", e.pos)
            if v.attr("value") != default:
                memory.append((key, v.attr("value")))
        # check_bounds=False: no per-dimension bounds mask (the caller's mask alone, if any), as cuTile Python
        if e.attr("flat"):
            cb = Lit(False, e.pos)
        attrs = ((("check_bounds", False),) if cb is not None and not cb.value else ()) + \
            (("latency", lat),) + tuple(memory)
        return arr, idx, shape, attrs

    def op_gather(self, e: Op) -> Op:
        arr, idx, shape, attrs = self._common(e)
        mask = self._mask(e, shape)
        pad = e.attr("padding_value")
        pad = Lit(0, e.pos) if pad is None else pad
        if not self._is_weak(pad):
            raise fail(e.rule, "`padding_value` must be a number", e.pos)
        pad = self.to_dtype(self.expr(pad), arr.ty.dtype)
        if e.attr("flat"):
            return self._flat_load(e, arr, idx, shape, mask, attrs)
        if len(shape) >= 2:
            raise fail("CT107", "a gather producing a tile of rank >= 2: cuTile Rust 0.5.0 reshapes the scalar "
                       "padding to rank 1 before broadcasting it (compile_cuda_tile_op.rs, load_ptr_tko), which "
                       "is invalid Tile IR; gather rank-1 tiles (e.g. one row at a time)", e.pos)
        args = (arr, TupleExpr(idx, e.pos), mask, pad)
        return Op("gather", args, e.pos, attrs, e.rule, TileTy(arr.ty.dtype, shape))

    def _flat_load(self, e: Op, arr: Name, idx: tuple, shape: tuple, mask, attrs: tuple) -> Expr:
        """A Triton load: the masked element load, then `other` where the mask is false (Triton's `other` is
        a value of the result, so a select; masked-off elements without `other` are undefined in Triton)."""
        g = Op("gather", (arr, TupleExpr(idx, e.pos), mask, None), e.pos, attrs + (("flat", True),), e.rule,
               TileTy(arr.ty.dtype, shape))
        other = e.attr("other")
        if other is None or mask is None:
            return g
        o = self.expr(other)
        if not isinstance(o.ty, TileTy):
            raise fail(e.rule, "`other` must be a tile or a number", e.pos)
        o = self.to_shape(self.to_dtype(o, arr.ty.dtype) if (self._is_weak(o) or o.ty.dtype != arr.ty.dtype) else o,
                          shape)
        return Op("where", (mask, g, o), e.pos, rule=e.rule, ty=TileTy(arr.ty.dtype, shape))

    def _value(self, e: Op, arr: Name, shape: tuple) -> Expr:
        v = self.expr(e.args[2])
        if not isinstance(v.ty, TileTy):
            raise fail(e.rule, "the value must be a tile or a scalar", e.pos)
        unify_generics(v.ty.dtype, arr.ty.dtype)
        if e.attr("flat"):  # Triton converts a stored (or atomic) value to the pointer's element type
            return self.to_shape(self.to_dtype(v, arr.ty.dtype), shape)
        if v.ty.dtype != arr.ty.dtype:
            if self._is_weak(v) or self._widens_to(v, arr.ty.dtype, e.pos):
                v = self.to_dtype(v, arr.ty.dtype)  # a weak literal, or cuTile Python's lossless implicit cast
            elif is_generic(arr.ty.dtype) and (_is_int(v.ty.dtype) or v.ty.dtype == "f32"):
                raise RetypeArray(arr.id, v.ty.dtype)
            else:
                raise fail(e.rule, f"a {v.ty.dtype} value into an array of dtype {arr.ty.dtype}; use astype", e.pos)
        return self.to_shape(v, shape)

    def op_scatter(self, e: Op) -> Op:
        arr, idx, shape, attrs = self._common(e)
        value = self._value(e, arr, shape)
        mask = self._mask(e, shape)
        attrs += (("flat", True),) if e.attr("flat") else ()
        return Op("scatter", (arr, TupleExpr(idx, e.pos), mask, value), e.pos, attrs, e.rule, None)

    def _atomic(self, e: Op) -> Op:
        arr, idx, shape, attrs = self._common(e)
        value = self._value(e, arr, shape)
        mask = self._mask(e, shape)
        if e.op in ("atomic_max", "atomic_min") and not _is_int(arr.ty.dtype):
            raise fail(e.rule, "atomic max/min need an integer array (cuTile has no float atomic max/min)", e.pos)
        attrs += (("flat", True),) if e.attr("flat") else ()
        return Op(e.op, (arr, TupleExpr(idx, e.pos), mask, value), e.pos, attrs, e.rule,
                  TileTy(arr.ty.dtype, shape))

    def op_argmax(self, e: Op):
        raise fail("CT107", "ct.argmax/argmin lower to a two-operand reduce in cuTile Python; cuTile Rust 0.5 "
                   "has no such reduce, so no port with the same Tile IR exists", e.pos)

    return {k: v for k, v in locals().items() if k.startswith(("op_", "_"))}


def _ops_batch2():
    """Ops beyond the first corpus: integer division/modulo, bitwise, shape ops, scans, items."""

    def op_arange(self, e: Op) -> Expr:
        (n,) = self.shape_dims(e.args[0])
        dt = self.dtype_arg(e.args[1]) if e.args[1] is not None else "i32"
        if dt in ("i32", "i64"):
            return Op("arange", (), e.pos, rule=e.rule, ty=TileTy(dt, (n,)))
        if not _is_float(dt) or is_generic(dt):
            raise fail(e.rule, f"ct.arange with dtype {dt} is not supported", e.pos)
        base = Op("arange", (), e.pos, rule=e.rule, ty=TileTy("i32", (n,)))
        return Op("convert", (base,), e.pos, rule=e.rule, ty=TileTy(dt, (n,)))

    def op_mod(self, e: Op) -> Op:
        a, b = self.expr(e.args[0]), self.expr(e.args[1])
        self.demand_int(a)
        a, b, ty = self.coerce_pair(a, b, e.pos)
        if not _is_int(ty.dtype):
            raise fail(e.rule, "`%` on floats is not supported yet", e.pos)
        return Op(e.op, (a, b), e.pos, rule=e.rule, ty=ty)

    def op_floordiv(self, e: Op) -> Op:
        a, b = self.expr(e.args[0]), self.expr(e.args[1])
        a, b, ty = self.coerce_pair(a, b, e.pos)
        if ty.dtype.startswith("u"):
            raise fail(e.rule, "`//` on unsigned integers: cuTile Python emits invalid Tile IR for it", e.pos)
        if _is_float(ty.dtype):
            return Op("floor", (Op("div", (a, b), e.pos, rule=e.rule, ty=ty),), e.pos, (("ftz", False),), e.rule, ty)
        return Op("floordiv", (a, b), e.pos, rule=e.rule, ty=ty)

    def _bitwise(self, e: Op) -> Op:
        a, b = self.expr(e.args[0]), self.expr(e.args[1])
        self.demand_int(a)
        self.demand_int(b)
        a, b, ty = self.coerce_pair(a, b, e.pos)
        if _is_float(ty.dtype):
            raise fail(e.rule, "bitwise operators need integer or boolean operands", e.pos)
        return Op(e.op, (a, b), e.pos, rule=e.rule, ty=ty)

    def op_invert(self, e: Op) -> Op:
        x = self.expr(e.args[0])
        if _is_float(x.ty.dtype):
            raise fail(e.rule, "`~` needs an integer or boolean operand", e.pos)
        return Op("invert", (x,), e.pos, rule=e.rule, ty=x.ty)

    def _permute(self, e: Op) -> Expr:
        x = self.expr(e.args[0])
        rank = len(x.ty.shape)
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

    def op_cat(self, e: Op) -> Op:
        tiles = e.args[0]
        if not isinstance(tiles, TupleExpr) or len(tiles.items) != 2:
            raise fail(e.rule, "ct.cat takes a tuple of exactly two tiles", e.pos)
        a, b = (self.expr(t) for t in tiles.items)
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
            self.derived[total] = f"(({self.derived.get(da, da)}) + ({self.derived.get(db, db)}))"
        shape = tuple(total if i == ax else d for i, d in enumerate(a.ty.shape))
        return Op("cat", (a, b), e.pos, (("axis", ax),), e.rule, TileTy(a.ty.dtype, shape))

    def op_extract(self, e: Op) -> Op:
        x = self.expr(e.args[0])
        idx = e.args[1]
        items = idx.items if isinstance(idx, TupleExpr) else (idx,)
        if len(items) != len(x.ty.shape):
            raise fail(e.rule, "ct.extract needs one index per dimension", e.pos)
        index = TupleExpr(tuple(self.scalar_int(i) for i in items), e.pos)
        shape = self.shape_dims(e.args[2])
        return Op("extract", (x, index), e.pos, rule=e.rule, ty=TileTy(x.ty.dtype, shape))

    def op_cumsum(self, e: Op) -> Op:
        x = self.expr(e.args[0])
        axis = self._axis(e, x)
        rev = e.attr("reverse")
        return Op("cumsum", (x,), e.pos, (("axis", axis), ("reverse", bool(isinstance(rev, Lit) and rev.value))),
                  e.rule, x.ty)

    def op_item(self, e: Op) -> Op:
        x = self.expr(e.args[0])
        if x.ty.is_scalar:
            return x
        if any(d != "1" for d in x.ty.shape):
            raise fail(e.rule, ".item() needs a tile whose every dimension is 1", e.pos)
        return Op("item", (x,), e.pos, rule=e.rule, ty=TileTy(x.ty.dtype))

    def op_expand_dims(self, e: Op) -> Op:
        x = self.expr(e.args[0])
        axis = e.args[1]
        if not (isinstance(axis, Lit) and isinstance(axis.value, int)):
            raise fail(e.rule, "`axis` must be an integer literal", e.pos)
        shape = list(x.ty.shape)
        shape.insert(axis.value % (len(shape) + 1), "1")
        return Op("reshape", (x,), e.pos, rule=e.rule, ty=TileTy(x.ty.dtype, tuple(shape)))

    def op_broadcast_to(self, e: Op) -> Expr:
        x = self.expr(e.args[0])
        return self.to_shape(x, self.shape_dims(e.args[1]))

    def op_truediv(self, e: Op) -> Op:
        a, b = self.expr(e.args[0]), self.expr(e.args[1])
        a, b, ty = self.coerce_pair(a, b, e.pos, float_result=True)
        ftz = e.attr("flush_to_zero")
        rounding = self._rounding(e) or "NearestEven"
        return Op("truediv", (a, b), e.pos, (("rounding", rounding), ("ftz", bool(isinstance(ftz, Lit) and ftz.value))),
                  e.rule, ty)

    def op_isnan(self, e: Op) -> Op:
        x = self.expr(e.args[0])
        return Op("isnan", (x,), e.pos, rule=e.rule, ty=TileTy("bool", x.ty.shape))

    def op_ifexp(self, e: Op) -> Expr:
        cond = self.expr(e.args[0])
        a, b = self.expr(e.args[1]), self.expr(e.args[2])
        if a.ty != b.ty:
            a, b, _ = self.coerce_pair(a, b, e.pos)
        _unify_types(a.ty, b.ty)
        if isinstance(a, Lit) and isinstance(b, Lit) and a.ty.dtype != b.ty.dtype:
            dt = "f32" if "f32" in (a.ty.dtype, b.ty.dtype) else a.ty.dtype
            a, b = replace(a, ty=TileTy(dt)), replace(b, ty=TileTy(dt))
        if a.ty != b.ty:
            raise fail("CT104", f"the arms of a conditional expression have different types ({a.ty}, {b.ty})", e.pos)
        if self.is_float_cond(e.args[0]):
            return a if self.float_cond_value(e.args[0]) else b
        if self.is_const(e.args[0]):
            return Op("ifexp", (cond, a, b), e.pos, (("const", True),), e.rule, a.ty)
        if not (isinstance(cond.ty, TileTy) and cond.ty.is_scalar):
            raise fail("CT104", "the condition of a conditional expression must be a scalar (use ct.where for tiles)", e.pos)
        cond = self.truth(cond, "the condition of a conditional expression")
        return Op("ifexp", (cond, a, b), e.pos, (("const", False),), e.rule, a.ty)

    def op_shape_rank(self, e: Op) -> Expr:
        x = self.expr(e.args[0])
        if isinstance(x.ty, ArrayTy):
            return Lit(x.ty.rank, e.pos, TileTy("i32"))
        if isinstance(x.ty, TileTy):
            return Lit(len(x.ty.shape), e.pos, TileTy("i32"))
        raise fail("CT100", "`len(<value>.shape)` needs an array or a tile", e.pos)

    def op_array_dim(self, e: Op) -> Op:
        arr = self._array(e.args[0], "CT100")
        dim = e.attr("dim")
        if not 0 <= dim < arr.ty.rank:
            raise fail("CT104", f"`{arr.id}.shape[{dim}]` is out of range for rank {arr.ty.rank}", e.pos)
        return Op("array_dim", (arr,), e.pos, e.attrs, e.rule, TileTy("i32"))

    return {k: v for k, v in locals().items() if k.startswith(("op_", "_"))}


for _name, _fn in list(_ops_batch2().items()) + list(_pointer_ops().items()):
    setattr(Infer, _name, _fn)
Infer.op_atomic_add = Infer.op_atomic_max = Infer.op_atomic_min = Infer.op_atomic_xchg = Infer._atomic
Infer.op_bitand = Infer.op_bitor = Infer.op_bitxor = Infer.op_shl = Infer.op_shr = Infer._bitwise
Infer.op_transpose = Infer.op_permute = Infer._permute
Infer.op_floor = Infer.op_ceil = Infer.op_sin = Infer.op_cos = Infer._unary_float


def infer(kernel: Kernel) -> Kernel:
    return Infer(classify_params(kernel)).run()
