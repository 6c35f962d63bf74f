"""Element-type domains of Triton pointers: the dtypes a port may be launched with for each generic.

A Triton pointer is passed untyped and cast on the device (emit/lower.py), so its generic costs the C symbol
nothing and may range over any dtype for which the port computes what Triton computes. By default that is the
kernel's float dtypes. An integer pointer (INT_DOMAIN, set while typing) is widened to i64 as loaded (i32 only
where atomics update it). A pointer whose elements are only converted (`tl.load(p).to(tl.float32)`, a copy into another pointer) or only written
(stores convert to the pointer's type, in Triton as here) computes the same thing for every dtype: it takes
ANY_DOMAIN (fp8 scales and quantized outputs, i32 or i64 ids converted with `.to(tl.int64)`)."""

from __future__ import annotations

from dataclasses import replace

from ..model.ir import (RMW_OPS, ANY_DOMAIN, FLOAT_DTYPES, INT_DOMAIN, INT_DTYPES, NARROW_INT_DOMAIN, Assign, Eval, Kernel,
                        Lit, Name, Op, TileTy, TupleExpr, is_generic)
from ..model.walk import all_stmts, sub_exprs, walk_exprs

# ops that pass their tile operands through without computing on them (the value is the same for any dtype)
_CARRIERS = {"convert", "where", "reshape", "broadcast", "transpose", "permute", "expand_dims"}
_RMW = set(RMW_OPS)


def _computed_on(k: Kernel) -> set[str]:
    """The generics whose element values some op computes on (or updates in place: atomics)."""
    out: set[str] = set()
    for e in walk_exprs(k.body):
        if not isinstance(e, Op) or e.op in ("gather", "scatter", "store", "load"):
            continue  # a stored value is already converted to its pointer's type; indices and masks are not E
        if e.op in _RMW:
            out.add(e.args[0].ty.dtype)
        elif e.op == "convert" and e.attr("floats_only") and _generic(e.args[0]):
            # a conversion exact for float elements only (an emulation's float32 bits: ops/reductions._bits)
            out.add(e.args[0].ty.dtype)
        elif e.op == "where" and not _is_load(e.args[1]) and any(
                isinstance(a, Lit) and isinstance(a.value, float) and _generic(a, lit=True) for a in e.args[1:]):
            # Triton's select of an int tile and a float makes floats (a load's `other` is cast to the
            # pointer's type, in Triton as here)
            out.add(e.ty.dtype)
        elif e.op not in _CARRIERS:
            for a in e.args:
                out.update(x.ty.dtype for x in (a.items if isinstance(a, TupleExpr) else (a,)) if _generic(x))
    return out


def _is_load(e) -> bool:
    return isinstance(e, Op) and e.op == "gather"


def _generic(e, lit: bool = False) -> bool:
    return isinstance(e, (Name, Op) + ((Lit,) if lit else ())) and isinstance(e.ty, TileTy) and is_generic(e.ty.dtype)


def pointer_domains(variants: list[Kernel], dtypes: tuple[str, ...]) -> list[Kernel]:
    """Every variant with ANY_DOMAIN on the Triton pointers of a generic that no variant computes on; the narrow
    integers too on an integer pointer whose loaded values stay exact in them (_narrow_exact); the kernel's
    `dtypes` and int32 on a counter (_counters)."""
    computed = set().union(*(_computed_on(v) for v in variants))
    split = any(v.variant.dtypes for v in variants)
    if split:  # entries per dtype of E cover the kernel's dtypes only
        computed.add("E")
    first = variants[0]
    free = {p.dtype for p in first.params
            if p.flat and is_generic(p.dtype) and p.domain != INT_DOMAIN and p.dtype not in computed}
    # Tile IR's integer atomics take i32 (cuTile Rust refuses an i64 `atomic_rmw_tko` add)
    atomic_ints = {p.dtype for p in first.params if p.flat and p.domain == INT_DOMAIN} & set().union(
        *(_updated(v) for v in variants))
    narrow = {p.dtype for p in first.params if p.flat and is_generic(p.dtype) and p.domain == INT_DOMAIN
              and p.dtype not in atomic_ints and all(_narrow_exact(v, p.dtype) for v in variants)}
    counters = set() if split else set.intersection(*(_counters(v) for v in variants))

    def domain(p):
        if p.flat and p.dtype in free:
            return ANY_DOMAIN
        if p.flat and p.dtype in narrow:
            return INT_DOMAIN + NARROW_INT_DOMAIN
        if p.flat and p.dtype in counters and not p.domain:
            return tuple(dtypes) + ("i32",)
        return ("i32",) if p.flat and p.dtype in atomic_ints else p.domain
    return [replace(v, params=tuple(replace(p, domain=domain(p)) for p in v.params)) for v in variants]


# ops exact on a narrow integer's value (u8, i16, bool, which the port widens to int64 as loaded, where Triton keeps
# the narrow type): they move, compare, select, bit-combine or reduce it without wrapping, or take it as offsets or
# as a value a store or an atomic converts; of them, _WIDENED give a value Triton holds in 32 bits or more (sums
# accumulate in int32 / uint32; an atomic's old value is its own pointer's), or no integer
_WIDENED = {"cmp", "reduce_sum", "cumsum", "truediv", "gather", "scatter", "store", "load"} | _RMW
_EXACT_NARROW = _CARRIERS | _WIDENED | {"bitand", "bitor", "bitxor", "shr", "maximum", "minimum", "reduce_max",
                                        "reduce_min", "splat", "broadcast_to", "cat", "extract", "item"}
# integer arithmetic that wraps in a narrow type unless an operand of 32 bits or more (not a literal: Triton types
# a Python int as the other operand's type) makes Triton compute it there
_PROMOTED = {"add", "sub", "mul", "div", "floordiv", "mod", "truncdiv", "truncmod", "cdiv", "shl"}
# of them, these never leave a narrow type's range dividing by a literal other than -1
_DIVISIONS = {"floordiv", "mod", "truncdiv", "truncmod"}
_NARROW_TYPES = ("bool", "i8", "u8", "i16", "u16")
_WIDE_INTS = ("i32", "i64", "u32", "u64")


def _narrow_exact(k: Kernel, generic: str) -> bool:
    """Whether the integer pointer `generic`'s loaded values (widened to int64 as loaded) compute here what Triton
    computes on them in a narrow type: nothing that could wrap in 8 or 16 bits reads them (a value derived from
    them by moving, selecting, bit-combining or dividing by a literal counts as them). Conversions to floats are
    exact (Triton's uitofp and sitofp of the narrow value are the int64 one's)."""
    tainted: set[str] = set()
    memo: dict[int, bool] = {}

    def narrow(e) -> bool:
        if isinstance(e, Name):
            return e.id in tainted
        if isinstance(e, TupleExpr):
            return any(narrow(x) for x in e.items)
        if not isinstance(e, Op):
            return False
        if id(e) not in memo:
            memo[id(e)] = _narrow_op(e)
        return memo[id(e)]

    def _narrow_op(e: Op) -> bool:
        if (isinstance(e.ty, TileTy) and e.ty.dtype == generic) or e.attr("element_of") == generic:
            return True  # (a value made in its type, `tl.full(.., p.dtype.element_ty)`, is one in Triton)
        if e.op in _WIDENED or (isinstance(e.ty, TileTy) and e.ty.dtype in FLOAT_DTYPES) or promoted(e):
            return False
        if e.op == "convert" and isinstance(e.ty, TileTy) and e.ty.dtype in _WIDE_INTS \
                and not any(isinstance(a.ty, TileTy) and a.ty.dtype == generic for a in e.args):
            return False  # `.to(tl.int32)` of a widened value: Triton's is as wide (not the load's own widening)
        return any(narrow(a) for a in _operands(e))

    def promoted(e: Op) -> bool:  # computed by Triton in an operand's type of 32 bits or more
        return e.op in _PROMOTED and any(not narrow(a) and not _literal(a, k) and isinstance(a.ty, TileTy)
                                         and a.ty.dtype not in _NARROW_TYPES for a in _operands(e))
    for _ in range(64):  # names bound to them, to a fixed point (loops carry them)
        more = {t for s in all_stmts(k.body) if isinstance(s, Assign) and narrow(s.value) for t in s.targets}
        if more <= tainted:
            break
        tainted |= more
        memo.clear()
    for e in walk_exprs(k.body):
        if isinstance(e, Op) and e.op == "convert" and e.attr("element_of") == generic \
                and not all(narrow(a) or a.ty.dtype == "bool" for a in e.args):
            return False  # `x.to(p.dtype.element_ty)`: Triton wraps x into the narrow type, the port keeps it
        if not isinstance(e, Op) or e.op in _EXACT_NARROW or not any(narrow(a) for a in _operands(e)):
            continue
        divided = e.op in _DIVISIONS and _literal_value(e.args[1]) not in (None, -1, 0)
        if not divided and not promoted(e):
            return False
    return True


def _literal(e, k: Kernel) -> bool:
    """A Python number in the source (a literal, a constexpr, or a tile made of one): Triton gives it the type
    of the tensor it meets."""
    if isinstance(e, Op) and e.op in ("const_tile", "splat") and e.args:
        e = e.args[0]
    return isinstance(e, Lit) or (isinstance(e, Name) and ((k.param(e.id) is not None and k.param(e.id).kind == "const")
                                                           or e.id in dict(k.derived)))


def _literal_value(e):
    """The value of a literal (or a tile of one); None for anything else (a constexpr's value is not known)."""
    if isinstance(e, Op) and e.op in ("const_tile", "splat") and e.args:
        e = e.args[0]
    return e.value if isinstance(e, Lit) else None


def _operands(e: Op) -> list:
    return [x for a in e.args if a is not None for x in (a.items if isinstance(a, TupleExpr) else (a,))] + \
        [v for _, v in e.attrs if isinstance(v, (Name, Op, Lit, TupleExpr))]


def _counters(k: Kernel) -> set[str]:
    """The generics of Triton pointers that only an atomic add of a whole-number literal updates, its old value
    unused (`tl.atomic_add(count_ptr + i, 1)`): Triton adds the literal in the pointer's type, an int32 counter as
    exactly as a float one, so they take int32 besides the kernel's dtypes (the port picks the atomic's integer or
    float form by the dtype's kind: emit/lower.py)."""
    discarded = {id(s.value) for s in all_stmts(k.body) if isinstance(s, Eval)}
    found, other, skip = set(), set(), set()
    for e in walk_exprs(k.body):
        if not isinstance(e, Op) or id(e) in skip:
            continue
        if e.op == "atomic_add" and isinstance(e.args[0], Name) and is_generic(e.args[0].ty.dtype):
            value = e.args[3]
            lit = value.args[0] if isinstance(value, Op) and value.op == "splat" else value
            # (a whole number an f32 holds exactly: the port converts the literal from its f32 form)
            whole = isinstance(lit, Lit) and not isinstance(lit.value, bool) and float(lit.value).is_integer() \
                and abs(lit.value) <= 2 ** 24
            (found if whole and id(e) in discarded else other).add(e.args[0].ty.dtype)
            skip.update(id(x) for x in sub_exprs(value))  # (the literal made the counter's type)
            continue
        other.update(x.ty.dtype for x in [e, *_operands(e)] if isinstance(x.ty, TileTy) and is_generic(x.ty.dtype))
    return found - other


def _updated(k: Kernel) -> set[str]:
    """The generics of the arrays atomics update."""
    return {e.args[0].ty.dtype for e in walk_exprs(k.body) if isinstance(e, Op) and e.op in _RMW}


# ops that compute the same on integers as on floats, and whose port lowers to the integer op for an integer
# element type (verified: tests/test_passes.py, dtypes/count_table.py). Not `mul` (a mul feeding an add is fused
# into an `fma`, a float op: passes/fma.py), not maximum/minimum/neg/abs (lowered as float ops), not `truediv`,
# the math functions, `mma` or atomics (Tile IR's integer atomics take i32 only)
_INT_SAFE = {"load", "gather", "store", "scatter", "add", "sub", "cumsum", "reduce_sum", "reshape", "broadcast",
             "broadcast_to", "splat", "expand_dims", "permute", "transpose", "extract", "item", "cat"}
# the ops of _INT_SAFE that compute (a kernel that only moves values, a copy or a permutation, is left as it is)
_ARITHMETIC = {"add", "sub", "cumsum", "reduce_sum"}


def _meets(k: Kernel, generic: str) -> tuple[bool, bool]:
    """(integers, floats): whether the values of `generic` meet an integer in arithmetic (an integer literal
    taken as the generic: a padding value, an increment; a conversion to or from an integer type; and some
    arithmetic op on them) and whether they meet a float (a float literal, a float tile, a conversion to or from
    a float type, an op only floats have)."""
    ints = floats = computed = False
    for e in walk_exprs(k.body):
        if not isinstance(e, Op):
            continue
        operands = [x for a in e.args if a is not None for x in (a.items if isinstance(a, TupleExpr) else (a,))]
        operands += [v for _, v in e.attrs if isinstance(v, (Name, Op, Lit))]
        tiles = [x for x in operands if isinstance(x.ty, TileTy)]
        result = e.ty.dtype if isinstance(e.ty, TileTy) else None
        if not any(x.ty.dtype == generic for x in tiles) and result != generic:
            continue
        if e.op == "convert":
            other = tiles[0].ty.dtype if result == generic else result
            if result == generic and other in INT_DTYPES and not isinstance(tiles[0], Lit):
                # an integer value converted to the generic (`t + (bh - 7) % heads`): cuTile Python converts it
                # straight to a float E (itof) and the port's conversion into a domain that holds i64 widens
                # first (exti, itof): not the same Tile IR, so the generic stays float (test_readable_rust)
                floats = True
                continue
            ints |= other in INT_DTYPES
            floats |= other not in INT_DTYPES and other != generic
            continue
        floats |= e.op not in _INT_SAFE
        computed |= e.op in _ARITHMETIC
        for x in tiles:
            if isinstance(x, Lit) and x.ty.dtype == generic and not isinstance(x.value, bool):
                ints |= isinstance(x.value, int)
                floats |= isinstance(x.value, float)
            elif x.ty.dtype in FLOAT_DTYPES:
                floats = True
    return ints and computed, floats


def integer_domains(variants: list[Kernel], dtypes: tuple[str, ...]) -> list[Kernel]:
    """A cuTile Python generic whose values meet integers and never a float (`ct.gather(Counts, offs,
    padding_value=0)` summed and scattered back: a count table) computes the same thing on integers as on the
    kernel's dtypes, and callers pass int32 counts: its arrays take the kernel's dtypes and INT_DOMAIN (a kernel
    of that one generic; verify checks each added dtype: verify/specs.domain_checks)."""
    generics = {p.dtype for p in variants[0].params if p.kind == "array" and is_generic(p.dtype)}
    if len(generics) != 1 or any(p.domain for p in variants[0].params):
        return variants  # the C symbol launches a domain for a kernel of one generic (emit/ffi.py)
    found = set()
    for g in sorted(generics):
        meets = [_meets(v, g) for v in variants]
        if any(i for i, _ in meets) and not any(f for _, f in meets):
            found.add(g)
    if not found:
        return variants
    domain = tuple(dict.fromkeys(tuple(dtypes) + INT_DOMAIN))
    return [replace(v, params=tuple(replace(p, domain=domain) if p.kind == "array" and p.dtype in found else p
                                    for p in v.params)) for v in variants]
