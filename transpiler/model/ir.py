"""The typed intermediate model: frozen dataclasses shared by every frontend and pass.

Types: a tile is `TileTy(dtype, shape)` where dtype is a concrete element type (`f32`, `i32`, ...)
or a dtype generic (`E`), and shape is a tuple of Rust const expressions (`"128"`, `"BM"`); a
scalar is a rank-0 tile. Arrays are `ArrayTy(dtype, rank)`. Expressions carry `ty=None` until the
inference pass fills it in.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Union

# Triton 3.6's `input_precision` values on NVIDIA (backends/nvidia/compiler.py) -> the port's: "tf32" rounds float32
# operands to tf32; "tf32x3" and "bf16x6" emulate an IEEE float32 product with several tensor-core products (the
# port computes in float32 itself); "bf16x3" is three bf16 products (a float32 operand split in a high and a low
# bf16 part, the low parts' product dropped), ported as those products
DOT_PRECISIONS = {"tf32": "tf32", "tf32x3": "ieee", "ieee": "ieee", "bf16x3": "bf16x3", "bf16x6": "ieee"}
FLOAT_DTYPES = ("f16", "bf16", "f32", "tf32", "f64", "f8e4m3fn", "f8e5m2")
INT_DTYPES = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
# dtype generics: the element types of the kernel's arrays. Arrays whose elements never meet without an
# `astype` get their own (`E`, `E2`, in parameter order of their first array). A port keeps at most
# MAX_ELEMENT_GENERICS (past it, classes are merged: passes/specialize._bounded_groups). The C symbol exports,
# and verify checks, the combinations `element_combinations` lists: with two generics every pair of the
# kernel's dtypes (3^2); with three, the 9 that two generics exported when the classes were merged by rank
# (largest-rank ones at one dtype, the others at one), and E over the kernel's dtypes with each other generic
# either E's dtype or MIXED_PARTNER (f16/bf16 activations with f32 statistics, partials, accumulators: what
# mixed precision does): 13, each verified (the C symbol checks the combination and monomorphizes its launch on
# E's type alone: emit/ffi.py); a fourth generic would make 21 checks.
# A partner generic (Param.partner: f32 state read next to f16 activations, an f32 LSE stored from a tile of the
# output's dtype) does not count: it takes its partner's dtype in every combination of the others, and also
# MIXED_PARTNER in the mixed-precision ones (each generic at E's dtype or MIXED_PARTNER): with three other
# generics 21 checks for a partner of E (an f32 state next to f16/bf16 activations, f32 or E's gates), 17 for a
# partner of another; 5 next to one generic, 11 or 13 next to two (a partner of E2 or of E)
GENERIC_DTYPES = tuple(["E"] + [f"E{i}" for i in range(2, 17)])
MAX_ELEMENT_GENERICS = 3
MIXED_PARTNER = "f32"
# Triton pointers are passed to the kernel untyped (`*mut u8`, cast on the device: emit/lower.py), so the C
# symbol does not monomorphize them: each keeps its own generic, and an integer one ranges over these
INT_DOMAIN = ("i32", "i64")
# and, where its loaded values are only moved, compared, bit-combined or widened by a wider operand (Triton computes
# on them in their own narrow type, which the port's widened values match only without wrapping: passes/domains.py),
# these too (torch.uint8 bytes, torch.int16, torch.bool masks: one byte, 0 or 1)
NARROW_INT_DOMAIN = ("u8", "i16", "bool")
# element-wise read-modify-writes through a pointer tile (Triton's atomics; cuTile Python's on arrays), each
# returning the old values: (array, indices, mask, value) and, for atomic_cas, the compared value after them
RMW_OPS = ("atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_and", "atomic_or", "atomic_xor",
           "atomic_cas")
# (a cuTile Python generic whose values meet only integers in arithmetic, a count table, takes the kernel's dtypes
# and these: passes/domains.integer_domains; its C symbol monomorphizes the launch on each)
# and one whose elements are only converted or written takes any dtype the C ABI carries (passes/domains.py)
ANY_DOMAIN = ("f16", "bf16", "f32", "i32", "i64", "f8e4m3fn", "f8e5m2")


def is_generic(dtype: str) -> bool:
    return dtype in GENERIC_DTYPES


def element_combinations(dtypes, high, partners=None) -> list[tuple[str, ...]]:
    """The dtype combinations (one per generic, in order E, E2, ...) a port exports for the kernel's `dtypes`;
    `high`: per generic, whether its arrays have the kernel's largest rank (activations, outputs). Up to two
    generics: every combination. Past two: what two generics exported (the largest-rank generics at one dtype,
    the others at one dtype: the two groups they were merged into), and E over `dtypes` with each other
    generic at E's dtype or MIXED_PARTNER; in E's dtype order. `partners`: per generic, the index of the
    generic it is a partner of (None: not a partner, see Param.partner): partners are left out of the rules
    above and take their partner's dtype, or MIXED_PARTNER where every other generic is at E's dtype or it."""
    partners = list(partners or [None] * len(high))
    if any(p is not None for p in partners):
        own = [i for i, p in enumerate(partners) if p is None]
        out = []
        for c in element_combinations(dtypes, [high[i] for i in own]):
            at = dict(zip(own, c))
            mixed = all(d in (c[0], MIXED_PARTNER) for d in c)
            options = [tuple(dict.fromkeys((at[p],) + ((MIXED_PARTNER,) if mixed else ())))
                       for p in partners if p is not None]
            for extra in itertools.product(*options):
                values = iter(extra)
                out.append(tuple(at[i] if i in at else next(values) for i in range(len(partners))))
        return out
    dtypes, high = list(dtypes), list(high)
    if len(high) <= 2:
        return list(itertools.product(dtypes, repeat=len(high)))
    if all(high) or not any(high):  # as the merge into two groups: E's, and the others'
        high = [True] + [False] * (len(high) - 1)
    two = [tuple(a if h else b for h in high) for a, b in itertools.product(dtypes, repeat=2)]
    mixed = [(e,) + rest for e in dtypes
             for rest in itertools.product(*[tuple(dict.fromkeys((e, MIXED_PARTNER)))] * (len(high) - 1))]
    return sorted(dict.fromkeys(two + mixed), key=lambda c: dtypes.index(c[0]))


@dataclass(frozen=True)
class Pos:
    path: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"

    @property
    def deferred(self) -> bool:
        """A stand-in the frontend gives while positions are deferred (line 0, a column unique to the source
        node): never shown; a run that would show one converts the file again with exact positions."""
        return self.line == 0


@dataclass(frozen=True)
class TileTy:
    dtype: str
    shape: tuple[str, ...] = ()

    @property
    def is_scalar(self) -> bool:
        return not self.shape

    def __str__(self) -> str:
        return f"Tile[{self.dtype}, ({', '.join(self.shape)})]" if self.shape else self.dtype


@dataclass(frozen=True)
class ArrayTy:
    dtype: str
    rank: int
    # a view (`Array.slice`) assigned to a local: the kernel parameter it was cut from (empty: a parameter)
    root: str = ""

    def __str__(self) -> str:
        return f"Array[{self.dtype}, {self.rank}{', view of ' + self.root if self.root else ''}]"


@dataclass(frozen=True)
class NoneTy:
    """The type of a name a Triton kernel binds to `None` on some path (`mask = None` in one arm of a constexpr
    `if`): it has no Rust value; it is read only as an absent `mask=` / `other=` of a load or store, or tested
    with `is None` (decided at compile time, as Triton decides it)."""

    def __str__(self) -> str:
        return "None"


def array_root(e: "Name") -> str:
    """The kernel parameter an array operand reads: itself, or the parameter a view (`Array.slice`) was cut from."""
    return e.ty.root if isinstance(e.ty, ArrayTy) and e.ty.root else e.id


Type = Union[TileTy, ArrayTy, None]


# ------------------------------------------------------------------------------------ expressions

@dataclass(frozen=True)
class Name:
    id: str
    pos: Pos
    ty: Type = None


@dataclass(frozen=True)
class Lit:
    value: Union[int, float, bool]
    pos: Pos
    ty: Type = None


@dataclass(frozen=True)
class Op:
    """A source operation resolved through a rule (`rule` is its stable id, `op` its model name)."""
    op: str
    args: tuple["Expr", ...]
    pos: Pos
    attrs: tuple[tuple[str, object], ...] = ()
    rule: str = ""
    ty: Type = None

    def attr(self, key: str, default: object = None) -> object:
        for k, v in self.attrs:
            if k == key:
                return v
        return default


@dataclass(frozen=True)
class TupleExpr:
    items: tuple["Expr", ...]
    pos: Pos
    ty: Type = None


Expr = Union[Name, Lit, Op, TupleExpr]


# ------------------------------------------------------------------------------------- statements

@dataclass(frozen=True)
class Assign:
    targets: tuple[str, ...]
    value: Expr
    pos: Pos
    text: str = ""  # the source statement, on one line (the emitter writes it above its lowering)


@dataclass(frozen=True)
class Eval:
    value: Expr
    pos: Pos
    text: str = ""


@dataclass(frozen=True)
class For:
    var: str
    start: Expr
    stop: Expr
    step: Expr
    body: tuple["Stmt", ...]
    pos: Pos


@dataclass(frozen=True)
class If:
    cond: Expr
    body: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...]
    pos: Pos
    const: bool = False  # condition depends only on compile-time constants
    declares: tuple[tuple[str, "TileTy"], ...] = ()  # first assigned in both arms, live after the if
    returns: bool = False  # the then arm is the source's `return` (kept when empty, as cuTile Python keeps it)


@dataclass(frozen=True)
class While:
    cond: Expr
    body: tuple["Stmt", ...]
    pos: Pos
    # the one-trip loop cuTile Python wraps around an inlined helper that returns early (`loop { ...; break }`,
    # each `return` a `break`; cond is the literal True): Rust `loop`
    once: bool = False


@dataclass(frozen=True)
class Continue:
    pos: Pos


@dataclass(frozen=True)
class Break:
    """Only in a `while` loop (a `for` loop's `break` is rewritten by the frontend: Tile IR `for` loops
    cannot exit early; a `while` is a Tile IR `loop`, which can)."""
    pos: Pos


Stmt = Union[Assign, Eval, For, If, While, Continue, Break]


# --------------------------------------------------------------------------------------- kernels

@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # array | scalar | const
    pos: Pos
    const_type: str = ""  # int | bool | float (kind == const)
    dtype: str = ""  # scalar dtype (kind == scalar) or array dtype (kind == array)
    rank: int = 0  # arrays
    pointer: bool = False  # arrays accessed by element (gather/scatter/atomics): a raw pointer + shape/strides
    flat: bool = False  # a Triton pointer: elements addressed by offset from the base (rank 1, any tensor crosses)
    # the element types a Triton pointer's generic may take (empty: the kernel's dtypes); INT_DOMAIN where its
    # elements are used as integers (they are widened to i64 as loaded: see passes/ops/memory.py)
    domain: tuple[str, ...] = ()
    # a hidden bool constant (no argument of its own): whether the Triton pointer `given_of` was given, i.e.
    # not None. Triton specializes a None argument as a constant, so `if X is not None:` is decided at compile
    # time; here it is this const generic, which the C symbol and the wrapper set from the argument. For a
    # constexpr or scalar `given_of` (passes/infer.optional_value_flags) each value is a structural variant,
    # and the C symbol takes the flag as an argument after the kernel's own
    given_of: str = ""
    # a hidden bool constant: whether the scalar argument `unit_of` is 1. Triton specializes an integer
    # argument equal to 1; an access whose innermost stride it is goes through a tensor view then
    # (passes/views.py). The C symbol sets it from the scalar's value
    unit_of: str = ""
    # a part of a host-made Triton tensor descriptor (`triton.tools.tensor_descriptor.TensorDescriptor`) passed
    # for the pointer parameter `desc_of`: a hidden scalar (an extent, a stride) or constant (a block extent)
    # that the Python wrapper reads from the descriptor object (the C symbol takes it as an argument)
    desc_of: str = ""
    # an array whose generic is a partner of the array named here (model.ir.element_combinations): its dtype is
    # that array's or MIXED_PARTNER, never a third. Either an array stored a tile converted to the other's
    # dtype (cuTile Python casts it implicitly, losslessly only: the same dtype, or f16/bf16 into f32), or an
    # input only read to be converted to f32 in the tiles an f32 array is written in (state in f32 next to
    # activations: passes/specialize._bounded_groups)
    partner: str = ""
    # a host descriptor parameter (the pointer param itself): (extents, strides but the last, block extents),
    # each the name of a parameter; a block extent is a hidden constant (desc_of) or a constexpr of the kernel
    # the launch's block shape must equal (the wrapper checks it)
    descriptor: tuple = ()
    # a parameter the kernel never names (TileGym passes an empty placeholder tensor of any dtype: an unquantized
    # call's scales): cuTile Python compiles it and never reads it. The port takes it as a rank-1 f32 array that
    # the C symbol fills with the argument's pointer alone (any dtype, any rank, null, or a null descriptor: the
    # wrapper passes one for a scalar or None), so its Tile IR is the same for every argument
    unused: bool = False
    # a Triton pointer every store of which is the tile at the program's own index (passes/views.py): the
    # port takes it as a checked `&mut Tensor` partition of this view of the pointer's elements, which the C
    # symbol makes from the argument's span: (extents, strides), Python expressions over the kernel's scalars,
    # constants and `__grid0`..`__grid2` (the launch grid)
    view: tuple = ()
    # a stored Triton pointer without a view: why (the manifest's reason for its raw pointer)
    unowned: str = ""


@dataclass(frozen=True)
class Variant:
    """One structural variant: the constant predicates that select it (empty: the only one), and the element
    types E may have in it (empty: any; an FMA that cuTile Python fuses only where an `astype` is a no-op
    makes an entry for that dtype, see passes/fma.py)."""
    name: str
    predicates: tuple[str, ...] = ()
    dtypes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Kernel:
    name: str
    module: str  # source module name (file stem)
    path: str
    pos: Pos
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    frontend: str = "cutile-python"
    hints: tuple[tuple[str, int], ...] = ()
    variant: Variant = field(default_factory=lambda: Variant(""))
    outputs: tuple[tuple[str, str, str], ...] = ()  # (array, form: checked|unchecked, reason)
    # Triton pointers the variant only reads, taken as `&Tensor` spans (passes/ownership.span_inputs)
    span_inputs: tuple[str, ...] = ()
    launches: tuple[tuple[tuple[str, object], ...], ...] = ()  # literal constant values per launch site
    rules_used: tuple[str, ...] = ()
    derived: tuple[tuple[str, str], ...] = ()  # const generics computed from others: (name, Python expression)
    factory: str = ""  # the module-level function that defines and returns this kernel (empty: module level)
    closure: tuple[str, ...] = ()  # the factory's values the kernel reads: its last const parameters
    # string-valued constants (a Triton `reduction: tl.constexpr` of "mean" / "sum"): each an int generic whose
    # value is the index of the string in this sorted list (the launcher maps the string to it)
    strings: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # string constants whose strings are dtype names (a Triton `ACC: tl.constexpr` passed `tl.float32` and used
    # as a dtype): the kernel has one entry per dtype (infer.SplitOnChoice); the launcher maps a tl or torch
    # dtype to its index
    dtype_consts: tuple[str, ...] = ()
    # specializations with no entry (Triton cannot compile them either): (the variant's predicates, why, where)
    dropped: tuple[tuple[tuple[str, ...], str, "Pos"], ...] = ()
    # tile dimensions this variant takes as equal (passes/infer.UnifyDims): (name, the name that stands for it
    # in every tile shape); the variant's predicates state the equality of their values
    dim_aliases: tuple[tuple[str, str], ...] = ()
    # what the frontend says of the kernel without refusing it: (code, message, where), reported as warnings
    notes: tuple[tuple[str, str, "Pos"], ...] = ()
    # (operand dtype, accumulator dtype) of each `ct.mma` whose pair involves a dtype generic other than E alone
    # (E2 operands into an E accumulator): the dtype combinations the C symbol exports are those where cuTile
    # Python takes every pair (pipeline.py; passes/ops/linalg.mma_pairs_compile)
    mma_pairs: tuple[tuple[str, str], ...] = ()
    # (Triton) the locals that hold a pointer's offsets (the frontend's pointer variables): their integer width is
    # the port's choice, not the source's (a Triton pointer has one type whatever its offsets' width)
    pointer_offsets: tuple[str, ...] = ()

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def optional(self, name: str) -> str:
        """The hidden constant that says whether pointer `name` was given (empty: the pointer is required)."""
        return next((p.name for p in self.params if p.given_of == name), "")

    @property
    def entry_name(self) -> str:
        return self.name + (f"__{self.variant.name}" if self.variant.name else "")
