"""What inference and its op handlers (`ops/`) share, below both: the op sets inference reasons about, dtype
predicates and cuTile Python's promotion, integer literal ranges, broadcasting, and the exceptions by which a
handler asks `specialize` to split, restrict, unify or retype a variant (raised while typing, caught there).
"""

from __future__ import annotations

from ..diagnostics import fail
from ..model.ir import (RMW_OPS, FLOAT_DTYPES, GENERIC_DTYPES, INT_DTYPES, ArrayTy, Expr, If, Kernel, Lit, Pos,
                        TileTy, is_generic)
from ..rules import load_promotion

ARRAY_USES = {"load", "store", "num_tiles", "dtype_of", "shape_of", "array_dim", "gather", "scatter", *RMW_OPS,
              "view_atomic_add", "load_advanced"}
WRITE_OPS = {"view_store", "store", "view_atomic_add", "scatter", *RMW_OPS}
POINTER_OPS = {"gather", "scatter", *RMW_OPS}
INT_CONTEXT_OPS = {"cdiv", "bid", "num_blocks", "floordiv", "truncdiv", "truncmod"}
SHAPE_ONLY_OPS = {"index_none", "reshape", "expand_dims", "broadcast_to", "permute", "transpose"}


# the message of a Triton `raise` reached in a specialization (ops/control.py, compile_error)
COMPILE_ERROR = "Triton raises"
STATIC_ASSERT = "ct.static_assert fails:"  # a cuTile Python specialization its static assertion refuses
# a Triton specialization that calls a function passed as a constexpr (`SCORE_MOD(qk)`): not ported
FUNCTION_CONSTEXPR = "a function passed as a constexpr is not ported:"


class SplitNeeded(Exception):
    def __init__(self, node: If, exact: bool = False, cond: Expr | None = None):
        self.node = node
        self.exact = exact  # split on this very `if` (not on an enclosing constant one)
        # the condition over the kernel's constants only (locals bound once to constant expressions expanded:
        # `if K % GROUP_CTA == 0` with `GROUP_CTA = GROUP * N_PER_CTA`), as a variant's predicate reads it
        self.cond = node.cond if cond is None else cond


class HoistNeeded(Exception):
    """A Triton name that one arm of a constant `if` defines and that is read later only where the same
    condition holds (`if USE_G: p_g = g + i` ... `if USE_G: b = tl.load(p_g)`): Triton folds both `if`s, so the
    read never happens where the name is undefined. Rather than a variant per truth value (2^n entries for n
    such flags), the name is declared before the `if` with a zero of its type (never read where the condition
    is false) and stays one entry with a runtime `if` on the constant."""
    def __init__(self, node: If, name: str, ty: TileTy):
        self.node, self.name, self.ty = node, name, ty


class SplitOnConst(Exception):
    """A constant choice that changes the program's structure: a ct.Constant[bool] as `check_bounds=FLAG`,
    a condition on a ct.Constant[float]. One variant per truth value of `name` (a predicate text; see
    specialize.py), the choice then read from the variant's predicates."""
    def __init__(self, name: str):
        self.name = name
        self.nested = False  # raised by an `if` on constant arithmetic (Infer.if_stmt)


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


class UnifyDims(Exception):
    """Two tile dimensions that must be equal (mma's M, N, K) are different constant names or expressions
    (`LOAD_BLOCK_N` and `BLOCK_N`, set equal by the host; `LOAD_BLOCK_N_ADD_LOAD_BLOCK_N` of a ct.cat):
    cuTile Python compiles the kernel only for specializations whose values are equal (its shapes are numbers)
    and refuses the others. The variant is inferred again with `name` standing for `target` in every tile
    shape and the predicate `pred` (their values equal); the launcher refuses constants where it fails."""
    def __init__(self, name: str, target: str, pred: str):
        self.name, self.target, self.pred = name, target, pred


class Require(Exception):
    """A fact about the constants without which the kernel does not compile (a reshape whose element counts are
    equal only for some values: `(ROWS, BLOCK)` to `(ROWS, WARPS, 2, 16)`): Triton and cuTile Python compile it
    only where it holds, so the variant takes it as a predicate and the launcher refuses other constants."""
    def __init__(self, pred: str):
        self.pred = pred


def unify_generics(a: str, b: str) -> None:
    if a != b and is_generic(a) and is_generic(b):
        raise UnifyElements(a, b)


def unify_types(a, b) -> None:
    """Raises UnifyElements when two types differ only in their dtype generics."""
    if isinstance(a, TileTy) and isinstance(b, TileTy) and a.shape == b.shape:
        unify_generics(a.dtype, b.dtype)
    if isinstance(a, ArrayTy) and isinstance(b, ArrayTy) and a.rank == b.rank:
        unify_generics(a.dtype, b.dtype)


def is_float(dt: str) -> bool:
    return dt in FLOAT_DTYPES or is_generic(dt)


def is_int(dt: str) -> bool:
    return dt in INT_DTYPES


class RestrictDtypes(Exception):
    """A value cuTile Python converts to E only where the conversion is lossless (a bf16 tile stored into an
    array of element type E: bf16 or f32, never f16): this entry is for those element types of E alone; cuTile
    Python refuses the others, and so does the C symbol (no entry takes them)."""

    def __init__(self, dtypes: tuple[str, ...]):
        self.dtypes = dtypes


class SplitOnChoice(Exception):
    """A dtype constant (Kernel.dtype_consts) used as a dtype where the variant does not fix it: one variant per
    dtype it may name (predicates `NAME == index`)."""

    def __init__(self, name: str, count: int):
        self.name, self.count = name, count


class WidenCarried(Exception):
    """A Triton int32 value becomes int64 inside a loop or an `if` arm: a pointer's offsets (`X += row.to(tl.int64)
    * stride`). A Triton pointer keeps its type whatever its offsets' width (and Triton refuses any other
    value that changes type there), so the offsets are int64 from the start (specialize.py rewrites them)."""

    def __init__(self, name: str, split: "SplitNeeded | None" = None):
        self.name = name
        self.split = split  # the constant `if` it changes in (a variant per arm where it cannot be widened)


MAX_TILE_RANK = 6  # cuTile Rust 0.5's tile types exist for ranks 0..6 (cutile-macro shadow_dispatch.MAX_RANK)
# the dtypes an array of an element-type generic may be fixed to when a value must have one (retype_generic)
ARRAY_RETYPE_DTYPES = ("i32", "i64", "f16", "bf16", "f32", "f8e4m3fn", "f8e5m2")


class RetypeArray(Exception):
    """An array's elements are used as integers (indices, bit operations) or receive integer tiles. `group`:
    every array sharing its generic takes `dtype` (a generic whose values must have that one dtype)."""

    def __init__(self, name: str, dtype: str, group: bool = False, exact: bool = False):
        # exact: the array takes `dtype` itself, not a generic of its kind (a table of int64 addresses)
        self.name, self.dtype, self.group, self.exact = name, dtype, group, exact


def retype_generic(k: Kernel, generic: str, dtype: str) -> None:
    """Raises RetypeArray for the arrays of element type `generic`: the only specializations cuTile Python
    compiles are those where it is `dtype` (a value carried through a loop or an `if` must keep its type, an
    index must be an integer), so the port's arrays of that generic are `dtype` (the C symbol refuses others)."""
    arr = next((p.name for p in k.params if p.kind == "array" and p.dtype == generic), None)
    if arr is not None and dtype in ARRAY_RETYPE_DTYPES:
        raise RetypeArray(arr, dtype, group=True)


def promote(a: str, b: str, pos: Pos) -> str:
    """The dtype both operands of a binary op on `a` and `b` take: cuTile Python's promotion, a table in
    rules/promotion_cutile_python.toml."""
    if a == b:
        return a
    table = load_promotion("cutile_python")
    if is_generic(a) or is_generic(b):
        generic, other = (a, b) if is_generic(a) else (b, a)
        unify_generics(a, b)
        if not is_float(other):
            return generic  # a float meets an integer or bool
        if other in table.generic_exact:
            return other  # E ranges over f16, bf16, f32: widening to f32 is exact for all of them
        raise fail("CT104", f"cannot decide the promotion of the array dtype {generic} with {other} for every "
                   "specialization; add an explicit conversion (`astype` in cuTile Python, `.to()` in Triton)", pos)
    return table.result[(a, b)]


def int_range(dt: str) -> tuple[int, int]:
    bits = int(dt[1:])
    return (0, 2**bits - 1) if dt.startswith("u") else (-2**(bits - 1), 2**(bits - 1) - 1)


def check_int_range(e: Lit, dt: str) -> None:
    """An integer literal that takes an integer dtype must fit it: cuTile Python raises "Integer constant
    ... is out of range of int32" (ops_utils._promote_dtype_and_loosely_typed_constant); the Rust literal
    would not compile (`literal out of range`)."""
    if is_int(dt) and isinstance(e.value, int) and not isinstance(e.value, bool):
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
