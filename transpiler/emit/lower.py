"""Typed model -> view model (plain data) for the Jinja templates.

Every operation becomes one annotated `let` (cuTile Rust needs the type of every rank- or
dtype-changing value), in source order, so the Tile IR keeps cuTile Python's op order. fold.py then
writes the temporaries read once where they are read, where no type is needed (pure ops only: their
position does not matter to the Tile IR's normal form, N7).
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass, field, replace

from ..diagnostics import fail
from ..model.ir import (RMW_OPS, FLOAT_DTYPES, GENERIC_DTYPES, INT_DTYPES, NARROW_INT_DOMAIN, ArrayTy, array_root, Assign, Break, Continue, Eval, Expr, For, If, Kernel, Lit, Name, Op,
                        Param, TileTy, TupleExpr, While)
from ..model.walk import all_stmts, assigned_names, walk_exprs
from .fold import fold_temporaries, reuse_equal_values
from .steps import step_names
from .derived_names import VIEW_LOCALS, extent_names, rename_locals, rename_rebound_constants

GENERIC = GENERIC_DTYPES  # rank-0 values of a generic dtype stay rank-0 tiles (no scalar cast exists for them)
RUST_KEYWORDS = {
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for", "if", "impl",
    "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "Self", "static",
    "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn",
    "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized", "virtual",
    "yield", "try", "gen",
}
CMP = {"<": "LessThan", "<=": "LessThanOrEqual", ">": "GreaterThan", ">=": "GreaterThanOrEqual",
       "==": "Equal", "!=": "NotEqual"}


_RANK0_UNWRAP = re.compile(r"tile_to_scalar\((\w+)\)")  # a rank-0 tile read as a scalar


@dataclass
class EntryView:
    name: str
    generics: list[str]
    params: list[str]
    body: list[str]
    hints: str
    source_line: int
    variant: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    unsafe: bool = False  # takes raw pointers
    tiles: dict[str, list[str]] = field(default_factory=dict)  # checked output -> its tile shape (const exprs)
    pointer_arrays: list[str] = field(default_factory=list)  # arrays passed as pointer + shape + strides
    # Triton pointers the entry only reads: taken as a `&Tensor` of the argument's span (see span_inputs)
    span_inputs: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)  # the named steps (steps.py) the body calls


def _core_names() -> frozenset[str]:
    """cutile::core's functions and the tuple structs it brings into scope: names a generated body cannot bind."""
    from ..rules import RULES_DIR
    lines = [line for f in ("rust_reserved_names.txt", "rust_reserved_types.txt")
             for line in (RULES_DIR / f).read_text().splitlines()]
    return frozenset(l.strip() for l in lines if l.strip() and not l.startswith("#"))


# cutile 0.5 implements its launcher's `KernelArgs` for tuples of at most 64 arguments
MAX_LAUNCH_ARGS = 64
CORE_NAMES = _core_names() | step_names()  # a generated module's named steps too (steps.py)


def rust_ident(name: str) -> str:
    """Python names that are Rust keywords or cutile::core functions get a trailing `_` (and `_`, which Rust
    reserves for discarding a value, becomes `__`)."""
    return name + "_" if name == "_" or name in RUST_KEYWORDS or name in CORE_NAMES or name in GENERIC else name


def dim_list(shape) -> str:
    """Shape dimensions as Rust const expressions (names mapped like every other identifier)."""
    return ", ".join(d if d.lstrip("-").isdigit() else rust_ident(d) for d in shape)


def rust_type(ty: TileTy) -> str:
    if ty.is_scalar and ty.dtype not in GENERIC:
        return ty.dtype
    return f"Tile<{ty.dtype}, {{ [{dim_list(ty.shape)}] }}>"


def shape_macro(shape: tuple[str, ...]) -> str:
    return f"shape![{dim_list(shape)}]"


def _f32_overflows(v: float) -> bool:
    """A finite value that rounds past f32's range (rustc rejects such an f32 literal: `literal out of
    range`); IEEE rounding, numpy and cuTile Python make it ±inf."""
    try:
        struct.pack("<f", v)
        return False
    except OverflowError:
        return True


def _float_lit(v: float, wide: bool = False) -> str:
    """A float literal for an f32 (or, `wide`, f64) Rust value: ±inf where the value overflows it."""
    v = float(v)
    if v != v:
        return "f32::NAN"
    if not wide and _f32_overflows(v):
        v = math.copysign(float("inf"), v)
    if v in (float("inf"), float("-inf")):
        return "f32::INFINITY" if v > 0 else "f32::NEG_INFINITY"
    r = repr(float(v))
    return r if ("." in r or "e" in r) else r + ".0"


class _Scope(dict):
    """A block's variables (name -> type) and the Rust names of those that hide an enclosing one (aliases)."""
    def __init__(self, *args):
        super().__init__(*args)
        self.aliases: dict[str, str] = {}


class Lowerer:
    def __init__(self, kernel: Kernel, extents: dict | None = None):
        self.k = kernel
        # each pointer's shape and stride parameters (derived_names.py: never one of the kernel's own names)
        self.extents = extents if extents is not None else pointer_extents(kernel)
        self.lines: list[str] = []
        self.indent = 1
        self.base, self.step = "t", 0  # temporaries' names (tmp)
        self.temps: set[str] = set()  # every name tmp gave (fold.py folds those read once)
        self.taken = _kernel_names(kernel) | RUST_KEYWORDS | CORE_NAMES | set(GENERIC)
        self.forms = {name: form for name, form, _ in kernel.outputs}
        self.consts = {p.name for p in kernel.params if p.kind == "const"}
        self.float_consts = {p.name for p in kernel.params if p.kind == "const" and p.const_type == "float"}
        self.float_consts |= {n for n, expr in kernel.derived if expr.startswith("float(")}  # folded floats
        # each block's variables and their types; `aliases`: the Rust names of values that took another type
        # than the same name in an enclosing block (see _alias)
        self.declared: list[_Scope] = [_Scope()]
        self.for_vars: list[str] = []  # the variables of the `for` loops being lowered, innermost last
        self.mutable = _mutable_vars(kernel.body)
        self.pointer_arrays: dict = {}
        self.span_inputs: dict = {}  # read-only Triton pointers taken as `&Tensor` spans (span_inputs)
        self.read_outputs: dict = {}  # checked Triton outputs the program also loads (its own tile, in place)
        self.view_base: dict[str, str] = {}  # such a pointer -> the `*mut` base its tile views are made from
        self.flat_base: dict[str, str] = {}  # Triton pointer -> its typed base pointer tile (cast once)
        self.cast_base: dict[tuple[str, str], str] = {}  # (Triton pointer, element type) -> its cast base
        self.int_kinds: dict[str, str] = {}  # generic that may be an integer -> its kind const (INT_KINDS)
        self.narrow_kinds: dict[str, list[str]] = {}  # such a generic -> the narrow integers it may be (u8, i16, bool)
        self.tensor_names: dict[str, str] = {}
        # each `Array.slice` view (by the local it is assigned to): its base pointer tile and its dimensions,
        # per axis (static: a const expression; else an i32 value, and whether a slice computed it)
        self.slices: dict[str, dict] = {}
        self.unsafe_entry = False
        self.steps: set[str] = set()  # named steps called (steps.py)
        self.hole: dict | None = None  # what an LLM fallback question is about (an `llm_hole` op), once lowered
        # a Triton port's checked output is stored without Tensor::store (see `store`), which chained its
        # stores' tokens: its stores are ordered here like any other array's
        self.ordered = ordered_arrays(kernel.body, {n for n, form in self.forms.items() if form == 'checked'}
                                       if kernel.frontend != "triton" else set(), kernel.frontend != "triton")

    # -------------------------------------------------------------- plumbing
    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)
        self.taken.update(_IDENT.findall(line))

    def tmp(self, prefix: str = "v", after: str | None = None) -> str:
        """A fresh name, derived from what the statement being lowered assigns: `offs_n_a`, `offs_n_b`, ... for
        values, `q_part` / `q_tok` / `q_shape` / `q_ptrs` for views, tokens, shapes and pointers. Unique in the
        entry: no temporary shadows a source name, a name the lowering fixed, or another temporary."""
        role = _TMP_ROLES.get(prefix)
        base = _base_name(after) if after is not None else self.base  # a view, a shape: named after its array
        n = 0
        while True:
            if role is None:
                self.step += 1
                name = f"{base}_{_letters(self.step)}"
            else:
                n += 1
                name = f"{base}_{role}{n if n > 1 else ''}"
            if name not in self.taken:
                self.taken.add(name)
                self.temps.add(name)
                return name

    def name_temps_after(self, name: str) -> None:
        """Temporaries from here on are named after `name` (a statement's target, an array, a loop variable)."""
        self.base, self.step = _base_name(name), 0

    def _shadows_outer(self, name: str, ty) -> bool:
        """A `let` of `name` at `ty` where an enclosing block's variable of that name and type is hidden by one of
        another type: the outer variable (an `if`'s or a loop's carried value) would never get this value."""
        found = [scope[name] for scope in reversed(self.declared) if name in scope]
        return len(found) > 1 and found[0] != ty and ty in found[1:]

    def _returns_to_outer(self, name: str, ty) -> bool:
        """`name` is an alias declared in this block (it took another type here) and `ty` is the type of the
        enclosing block's variable: the value goes to that variable (`b = transpose(b)` after `b = load(N, K)`)."""
        scopes = [scope for scope in reversed(self.declared) if name in scope]
        return (len(scopes) > 1 and scopes[0] is self.declared[-1] and name in scopes[0].aliases
                and scopes[1][name] == ty)

    def _alias(self, name: str, ty) -> str | None:
        """The Rust name for a value of `name` declared in this block at another type than an enclosing block's
        mutable `name`: a fresh one, so the enclosing variable stays reachable (a later assignment of its
        type in this block goes to it, and Rust shadowing would hide it). None where the plain name is right."""
        outer = next((scope[name] for scope in reversed(self.declared[:-1]) if name in scope), None)
        here = self.declared[-1]
        if outer is None or outer == ty or name not in self.mutable or (name in here and name not in here.aliases):
            return None
        n = 2
        while f"{name}_{n}" in self.taken:
            n += 1
        self.taken.add(f"{name}_{n}")
        return f"{name}_{n}"

    def rust_name(self, name: str) -> str:
        """The Rust name a source variable has here (its alias in the innermost block that declares it)."""
        n = rust_ident(name)
        for scope in reversed(self.declared):
            if n in scope:
                return scope.aliases.get(n, n)
        return n

    def lookup(self, name: str) -> TileTy | None:
        for scope in reversed(self.declared):
            if name in scope:
                return scope[name]
        return None

    # -------------------------------------------------------------- entry
    def entry(self) -> EntryView:
        k = self.k
        generics, params, tiles = [], [], {}
        for g in GENERIC_DTYPES:  # in order: the C symbol and the verifier pass them the same way
            if any(p.kind == "array" and p.dtype == g for p in k.params):
                generics.append(f"{g}: ElementType")
        for g in GENERIC_DTYPES:  # a Triton pointer's generic that may be an integer: its kind (see int_dispatch)
            domain = next((p.domain for p in k.params if p.kind == "array" and p.dtype == g and "i32" in p.domain), None)
            if domain is not None:
                self.int_kinds[g] = int_kind_name(g)
                self.narrow_kinds[g] = [d for d in NARROW_INT_DOMAIN if d in domain]
                generics.append(f"const {self.int_kinds[g]}: i32")
        for p in k.params:
            if p.kind == "const":
                # a ct.Constant[float] travels as its f32 bit pattern (stable Rust has no float const generics;
                # the launcher passes generics as strings): see float_const
                generics.append(f"const {rust_ident(p.name)}: i32")
        for name, _ in k.derived:
            generics.append(f"const {name}: i32")
        self.consts |= {name for name, _ in k.derived}
        pointer_views = []
        spans = set(k.span_inputs)
        for p in k.params:
            if p.name in spans:
                # only read: the argument's span as a tensor (its address, extent and unit stride), read through
                # `*const` pointers made from it, so rustc rejects a store through it and no raw pointer is taken
                params.append(f"{rust_ident(p.name)}: &Tensor<{p.dtype}, {{ [-1] }}>")
                self.span_inputs[p.name] = p
            elif p.kind == "array" and p.pointer:
                n = rust_ident(p.name)
                # a Triton pointer arrives untyped and is cast here, so the C symbol launches one host
                # function for every dtype (the launcher checks a pointer parameter's pointee against the
                # host type; the generics name the device type)
                params.append(f"{n}: *mut {'u8' if p.flat else p.dtype}")
                params += [f"{e}: i32" for e in self.extents[n][0] + self.extents[n][1]]
                self.pointer_arrays[p.name] = p
                if p.name in self._tile_accessed():
                    pointer_views.append(p)
            elif p.kind == "array":
                if self.forms.get(p.name) == "checked":
                    shape = self._slab_shape(p.name)
                    tiles[p.name] = list(shape)
                    params.append(f"{rust_ident(p.name)}: &mut Tensor<{p.dtype}, {{ [{dim_list(shape)}] }}>")
                else:
                    dims = ", ".join(["-1"] * p.rank)
                    params.append(f"{rust_ident(p.name)}: &Tensor<{p.dtype}, {{ [{dims}] }}>")
            elif p.kind == "scalar":
                params.append(f"{rust_ident(p.name)}: {p.dtype}")
        if len(params) > MAX_LAUNCH_ARGS:
            raise fail("CT107", f"`{k.name}` takes {len(params)} launch arguments in cuTile Rust (a pointer is three "
                       f"or more: itself, its extents and strides); cutile 0.5's launcher takes at most "
                       f"{MAX_LAUNCH_ARGS}: split the kernel, or pass several arrays as one stacked tensor", k.pos)
        casts = self._cast_accessed()
        flat_ops = self._flat_ops()
        for p in k.params:
            direct = p.name in flat_ops
            elems = sorted(dt for name, dt in casts if name == p.name)
            if p.name in self.span_inputs or (p.kind == "array" and p.view and direct):
                # a read-only span, or a checked output the program also reads (its own tile, updated in place:
                # passes/views.py): loads through `*const` pointers from the tensor's address
                self.name_temps_after(p.name)
                n = rust_ident(p.name)
                if p.name not in self.span_inputs:
                    self.read_outputs[p.name] = p
                if "gather" in flat_ops.get(p.name, ()):
                    self.flat_base[p.name] = self.tmp("typed")
                    self.emit(f"let {self.flat_base[p.name]}: PointerTile<*const {p.dtype}, {{ [] }}> = "
                              f"pointer_to_tile({n}.as_ptr());")
                if "view_load" in flat_ops.get(p.name, ()):
                    # a view's constructor takes a `*mut` base (cuTile Rust 0.5); the view is only loaded from
                    self.view_base[p.name] = self.tmp("base")
                    self.emit(f"let {self.view_base[p.name]}: PointerTile<*mut {p.dtype}, {{ [] }}> = "
                              f"get_tensor_base({n});")
            elif p.kind == "array" and p.flat and (direct or elems):
                self.name_temps_after(p.name)
                n, raw = rust_ident(p.name), self.tmp("raw")
                self.emit(f"let {raw}: PointerTile<*mut u8, {{ [] }}> = pointer_to_tile({n});")
                if direct:
                    self.flat_base[p.name] = self.tmp("typed")
                    self.emit(f"let {self.flat_base[p.name]}: PointerTile<*mut {p.dtype}, {{ [] }}> = ptr_to_ptr({raw});")
                for dt in elems:  # the parameter read as another element type (TTR-PTRCAST): the same buffer
                    self.cast_base[(p.name, dt)] = self.tmp(f"as_{dt}")
                    self.emit(f"let {self.cast_base[(p.name, dt)]}: PointerTile<*mut {dt}, {{ [] }}> = ptr_to_ptr({raw});")
        self.name_temps_after("view")
        self.tile_views()
        for p in pointer_views:  # tile loads/stores of a pointer array go through a view, as in cuTile Python
            n = rust_ident(p.name)
            self.tensor_names[p.name] = f"{n}_view"
            shape_t = ", ".join(["-1"] * p.rank)
            stride_t = ", ".join(["-1"] * (p.rank - 1) + ["1"])
            base = self.flat_base.get(p.name, f"pointer_to_tile({n})")
            self.emit(f"let {n}_base: PointerTile<*mut {p.dtype}, {{ [] }}> = {base};")
            self.emit(f"let {n}_dims: Shape<{{ [{shape_t}] }}> = Shape::<{{ [{shape_t}] }}> {{ dims: &[{', '.join(self.extents[n][0])}] }};")
            self.emit(f"let {n}_strides: Array<{{ [{stride_t}] }}> = Array::<{{ [{stride_t}] }}> {{ dims: &[{', '.join(self.extents[n][1][:p.rank - 1])}] }};")
            self.emit(f"let {n}_view: Tensor<{p.dtype}, {{ [{shape_t}] }}> = unsafe {{ make_tensor_view("
                      f"{n}_base, {n}_dims, {n}_strides, new_token_unordered()) }};")
        if self.ordered:
            # cuTile Python orders the accesses of an array that is read and written (or updated by atomics)
            # through tokens: a load after the array's last store, a store after its last access
            # (token_order.py); the same chains here, one `last access` and one `last store` token per array
            self.emit("let __tok_root: Token = new_token_unordered();")
            for name in sorted(self.ordered):
                n = rust_ident(name)
                self.emit(f"let mut {n}_tok_access: Token = __tok_root;")
                self.emit(f"let mut {n}_tok_store: Token = __tok_root;")
                self.mutable |= {f"{n}_tok_access", f"{n}_tok_store"}
        self.signature = (generics, params)  # what an LLM fallback question shows (hole below)
        self.block(k.body)
        self.unsafe_entry = bool(self.pointer_arrays)
        hints = ""
        if k.hints:
            # plain hints are written under the compile target (sm_90); with ct.ByTarget values (`sm_NN:key`)
            # each architecture gets its own group next to `default`, as cuTile Python writes them; the
            # normalizer compares the hints in force for the target (N4)
            groups: dict[str, list[str]] = {}
            for key, v in k.hints:
                target, _, name = key.rpartition(":")
                groups.setdefault(target or "default", []).append(f"{name} = {v}")
            if list(groups) == ["default"]:
                groups = {"sm_90": groups["default"]}
            hints = "optimization_hints = (" + " ".join(
                f"{t} = ({', '.join(v)},)," for t, v in sorted(groups.items(), key=lambda g: (g[0] != "default", g[0]))) + ")"
        return EntryView(name=k.entry_name, generics=generics, params=params, body=fold_temporaries(reuse_equal_values(self.lines, self.temps), self.temps), hints=hints,
                         source_line=k.pos.line, variant=list(k.variant.predicates),
                         outputs=[f"{n}: {form} ({why})" for n, form, why in k.outputs],
                         unsafe=self.unsafe_entry, tiles=tiles, pointer_arrays=list(self.pointer_arrays),
                         span_inputs=list(self.span_inputs),
                         steps=sorted(self.steps))

    def tile_views(self) -> None:
        """The tensor views a Triton pointer's tile accesses go through (passes/views.py), made once from
        parameters: each distinct (pointer, extents, strides) one view over the pointer's typed base."""
        self.views: dict = {}
        for e in walk_exprs(self.k.body):
            if not (isinstance(e, Op) and e.op in ("view_load", "view_store")) or e.attr("local_view"):
                continue
            key = view_key(e)
            if key in self.views:
                continue
            # `__`: reserved (no parameter starts with it), so no name of the kernel's is shadowed
            n = f"__{rust_ident(e.args[0].id)}_tv{len([k for k in self.views if k[0] == e.args[0].id])}"
            self.views[key] = n
            self.make_view(e, n)

    def make_view(self, e: Op, n: str) -> None:
        """`let n = make_tensor_view(...)`: the tensor view of a view access' pointer, extents and strides."""
        arr, dims, strides = e.args[0], e.args[1].items, e.args[2].items
        p = self.k.param(arr.id)
        rank = len(dims)
        shape_t = ", ".join(["-1"] * rank)
        stride_t = ", ".join(["-1"] * (rank - 1) + ["1"])
        dv = ", ".join(self.value(d) for d in dims)
        sv = ", ".join(self.value(st) for st in strides[:-1])
        self.emit(f"let {n}_dims: Shape<{{ [{shape_t}] }}> = Shape::<{{ [{shape_t}] }}> {{ dims: &[{dv}] }};")
        self.emit(f"let {n}_strides: Array<{{ [{stride_t}] }}> = Array::<{{ [{stride_t}] }}> {{ dims: &[{sv}] }};")
        base = self.view_base.get(arr.id) or self.flat_base[arr.id]
        if e.attr("base_offset") is not None:  # a descriptor of `A + offset` (passes/views.py descriptor)
            off = e.attr("base_offset")
            base = f"{n}_base"
            self.emit(f"let {base}: PointerTile<*mut {p.dtype}, {{ [] }}> = addptr_tile("
                      f"{self.view_base.get(arr.id) or self.flat_base[arr.id]}, {self.tile(off)});")
        self.emit("// unsafe: the view's extents and strides are the kernel's arguments, which Rust cannot check "
                  "against the memory")
        self.emit(f"let {n}: Tensor<{p.dtype}, {{ [{shape_t}] }}> = unsafe {{ make_tensor_view("
                  f"{base}, {n}_dims, {n}_strides, new_token_unordered()) }};")

    def view_access(self, e: Op) -> str | None:
        """A Triton access through its view: a partition tile at the tile index (the element access under
        the unit-stride constant's `else`, for strides other than 1). Returns a load's value."""
        arr, index, fallback = e.args[0], e.args[3], e.args[-1]
        if e.attr("local_view"):  # a descriptor whose shape the kernel computes: its view made here
            view = self.tmp("view", after=arr.id)
            self.make_view(e, view)
        else:
            view = self.views[view_key(e)]
        tile, flag = e.attr("tile"), e.attr("unit")
        ts = f"{{ [{dim_list(tile)}] }}"
        tma = "tma::Enabled"
        res = None
        if e.op == "view_load":
            res = self.tmp()
            self.emit(f"let mut {res}: {rust_type(e.ty)} = {self.zero(e.ty)};")
            self.mutable.add(res)
        if flag:
            self.emit(f"if {rust_ident(flag)} == 1i32 {{")
            self.indent += 1
            self.declared.append(_Scope())
        idx = ", ".join(self.value(i) for i in index.items)
        n = rust_ident(arr.id)
        dtype = arr.ty.dtype
        if e.op == "view_load":
            pv, t = self.tmp("pv", after=arr.id), self.tmp()
            self.emit(f"let {pv}: Partition<{dtype}, {ts}> = unsafe {{ make_partition_view(&{view}, "
                      f"{shape_macro(tile)}, {e.attr('padding')}, dim_map::Identity, get_tensor_token(&{view})) }};")
            self.emit(f"let {t}: Tile<{dtype}, {ts}> = load_view_tko(&{pv}, [{idx}], ordering::Weak, "
                      f"scope::TileBlock, None, {tma});")
            if tuple(tile) != tuple(e.ty.shape):
                self.emit(f"{res} = reshape({t}, {shape_macro(e.ty.shape)});")
            else:
                self.emit(f"{res} = {t};")
        else:
            value = e.args[4]
            v = self.tile(value)
            if tuple(tile) != tuple(value.ty.shape):
                r = self.tmp()
                self.emit(f"let {r}: Tile<{dtype}, {ts}> = reshape({v}, {shape_macro(tile)});")
                v = r
            pm = self.tmp("pm", after=arr.id)
            ordered = arr.id in self.ordered  # a program's stores to one address land in program order
            after = f"{n}_tok_access" if ordered else f"get_tensor_token(&{view})"
            if e.attr("reduce"):  # a relaxed atomic add of the tile (passes/views.py, reduction)
                is_float = dtype in FLOAT_DTYPES or (dtype in GENERIC and dtype not in self.int_kinds)
                store = (f"unsafe {{ atomic_red_view_raw(&{pm}, {v}, [{idx}], atomic::{'AddF' if is_float else 'Add'}, "
                         f"ordering::Relaxed, {e.attr('memory_scope')}, {f'Some({after})' if ordered else 'None'}) }}")
            else:
                store = (f"unsafe {{ store_view_tko_mut(&mut {pm}, {v}, [{idx}], ordering::Weak, scope::TileBlock, "
                         f"None, {tma}) }}")
            self.emit(f"let {'' if e.attr('reduce') else 'mut '}{pm}: PartitionMut<{dtype}, {ts}> = unsafe {{ "
                      f"make_partition_view_mut(&{view}, {shape_macro(tile)}, padding::None, {after}) }};")
            if e.attr("reduce") and ordered:
                tok = self.tmp("tok")
                self.emit(f"let {tok}: Token = {store};")
                self.emit(f"{n}_tok_access = {tok};")
                self.emit(f"{n}_tok_store = {tok};")
            elif e.attr("reduce"):
                self.emit(f"let _: Token = {store};")
            else:
                self.emit(f"{store};")
            if ordered and not e.attr("reduce"):
                tok = self.tmp("tok")
                self.emit(f"let {tok}: Token = get_partition_token_mut(&{pm});")
                self.emit(f"{n}_tok_access = {tok};")
                self.emit(f"{n}_tok_store = {tok};")
        if flag:
            self.declared.pop()
            self.indent -= 1
            self.emit("} else {")
            self.indent += 1
            self.declared.append(_Scope())
            if e.op == "view_load":
                self.emit(f"{res} = {self.value(fallback, allow_inline=True)};")
            else:
                call = self.op(fallback)
                if call is not None:
                    self.emit(f"let _ = {call};")
            self.declared.pop()
            self.indent -= 1
            self.emit("}")
        return res

    def _tile_accessed(self) -> set[str]:
        return {e.args[0].id for e in walk_exprs(self.k.body)
                if isinstance(e, Op) and e.op in ("load", "store", "num_tiles", "view_atomic_add", "load_advanced")
                and isinstance(e.args[0], Name)}

    def _flat_ops(self) -> dict[str, set[str]]:
        """Each Triton pointer read or written at its own element type: the ops that access it (gather, scatter,
        view_load, ...)."""
        out: dict[str, set[str]] = {}
        for e in walk_exprs(self.k.body):
            if isinstance(e, Op) and e.attr("flat") and e.args and isinstance(e.args[0], Name) and not e.attr("elem"):
                out.setdefault(e.args[0].id, set()).add(e.op)
        return out

    def _cast_accessed(self) -> set[tuple[str, str]]:
        """(pointer parameter, element type) of each access through a cast of the parameter (TTR-PTRCAST)."""
        return {(e.args[0].id, e.attr("elem")) for e in walk_exprs(self.k.body)
                if isinstance(e, Op) and e.attr("flat") and e.attr("elem") and e.args and isinstance(e.args[0], Name)}

    def slice_view(self, target: str, e: Op) -> None:
        """`target = a.slice(axis, start, stop)` as cuTile Python lowers it (Array.slice): the base pointer offset
        by `start * stride[axis]` (muli in i32, exti to i64, `offset`), the axis's extent `stop - start` stated
        non-negative (a constant where both bounds are), every other extent and every stride kept; the extents
        a slice computed are stated non-negative again in each view cut from it, as cuTile Python re-states the
        dynamic extents of every array value it makes. `a` is a raw-pointer parameter or a view of one."""
        arr, start, stop = e.args
        axis = e.attr("axis")
        root = array_root(arr)
        p = self.k.param(root)
        if p is None or not p.pointer or p.flat:
            raise fail("CT100", f"`{arr.id}.slice()`: the sliced array must be a kernel array parameter", e.pos)
        n = rust_ident(root)
        shapes, strides = self.extents[n]
        rank = p.rank
        if arr.id in self.slices:
            parent = self.slices[arr.id]
        else:
            parent = {"base": f"pointer_to_tile({n})", "dims": [("dyn", shapes[i], False) for i in range(rank)]}
        stride = strides[axis] if axis < rank - 1 else "1i32"  # cuTile Python's innermost stride is the constant 1
        lo, hi = self.value(start), self.value(stop)
        off, off_t, off64, base = (self.tmp(r, after=target) for r in ("off", "offt", "off64", "base"))
        if e.attr("const_start") and axis == rank - 1:
            # a constant start times the constant stride: cuTile Python keeps the `muli` of the two constants,
            # cuTile Rust folds scalar arithmetic on known values, not tile arithmetic
            one = self.tmp("one", after=target)
            self.emit(f"let {off}: Tile<i32, {{ [] }}> = scalar_to_tile({lo});")
            self.emit(f"let {one}: Tile<i32, {{ [] }}> = constant(1i32, shape![]);")
            self.emit(f"let {off_t}: Tile<i32, {{ [] }}> = {off} * {one};")
        else:
            self.emit(f"let {off}: i32 = {lo} * {stride};")
            self.emit(f"let {off_t}: Tile<i32, {{ [] }}> = scalar_to_tile({off});")
        self.emit(f"let {off64}: Tile<i64, {{ [] }}> = exti({off_t});")
        self.emit(f"let {base}: PointerTile<*mut {p.dtype}, {{ [] }}> = addptr_tile({parent['base']}, {off64});")
        dims = []
        for i, (kind, v, computed) in enumerate(parent["dims"]):
            if i == axis:
                if e.attr("extent") is not None:
                    dims.append(("static", rust_ident(e.attr("extent")) if not e.attr("extent").isdigit()
                                 else e.attr("extent"), False))
                    continue
                raw, ext = self.tmp("len", after=target), self.tmp("len", after=target)
                self.emit(f"let {raw}: i32 = {hi} - {lo};")
                self.emit(f"let {ext}: i32 = unsafe {{ assume_bounds_lower::<_, 0>({raw}) }};")
                dims.append(("dyn", ext, True))
            elif kind == "dyn" and computed:
                again = self.tmp("len", after=target)
                self.emit(f"let {again}: i32 = unsafe {{ assume_bounds_lower::<_, 0>({v}) }};")
                dims.append(("dyn", again, True))
            else:
                dims.append((kind, v, computed))
        shape_t = ", ".join("-1" if kind == "dyn" else v for kind, v, _ in dims)
        stride_t = ", ".join(["-1"] * (rank - 1) + ["1"])
        dv = ", ".join(v for kind, v, _ in dims if kind == "dyn")
        sv = ", ".join(strides[:rank - 1])
        view, dn, sn = self.tmp("view", after=target), self.tmp("dims", after=target), self.tmp("strides", after=target)
        self.emit(f"let {dn}: Shape<{{ [{shape_t}] }}> = Shape::<{{ [{shape_t}] }}> {{ dims: &[{dv}] }};")
        self.emit(f"let {sn}: Array<{{ [{stride_t}] }}> = Array::<{{ [{stride_t}] }}> {{ dims: &[{sv}] }};")
        self.emit(f"let {view}: Tensor<{p.dtype}, {{ [{shape_t}] }}> = unsafe {{ make_tensor_view("
                  f"{base}, {dn}, {sn}, new_token_unordered()) }};")
        self.slices[target] = {"base": base, "dims": dims, "view": view}
        self.tensor_names[target] = view
        self.unsafe_entry = True

    def tensor(self, arr: Name, as_ref: bool = True) -> str:
        """The tensor an array's tile accesses go through (`&name_view` for pointer arrays)."""
        if arr.id in self.tensor_names:
            return ("&" if as_ref else "") + self.tensor_names[arr.id]
        return rust_ident(arr.id)

    def _slab_shape(self, name: str) -> tuple[str, ...]:
        for e in walk_exprs(self.k.body):
            if isinstance(e, Op) and e.op == "store" and e.args[0].id == name:
                return e.args[2].ty.shape
        raise AssertionError(name)

    # -------------------------------------------------------------- statements
    def block(self, stmts) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s) -> None:
        self.name_temps_after(_stmt_base(s))
        if isinstance(s, (Assign, Eval)) and s.text and not (isinstance(s.value, Op) and s.value.op == "llm_fragment"):
            self.emit(f"// {s.text}")  # the source statement above its lowering, for a reviewer
        if isinstance(s, Assign) and isinstance(s.value, Op) and s.value.op == "array_slice":
            self.slice_view(s.targets[0], s.value)
            return
        if isinstance(s, Assign):
            name = rust_ident(s.targets[0])
            ty = s.value.ty
            prev = self.lookup(name)
            if prev is not None and prev == ty and name in self.mutable:
                self.emit(f"{self.rust_name(name)} = {self.value(s.value, allow_inline=True)};")
                return
            if self._returns_to_outer(name, ty):
                rhs = self.value(s.value, allow_inline=True)  # reads the alias
                del self.declared[-1][name], self.declared[-1].aliases[name]
                self.emit(f"{self.rust_name(name)} = {rhs};")
                return
            if self._shadows_outer(name, ty):
                raise fail("CT104", f"`{s.targets[0]}` takes another type inside this block and then its type outside "
                           "it again (`b = load(...)` of shape (N, K), then `b = transpose(b)`): the port would "
                           "declare a new variable instead of assigning the outer one; give the value of the "
                           "other type its own name", s.pos)
            rhs = self.value(s.value, allow_inline=True)
            mut = "mut " if name in self.mutable else ""
            alias = self._alias(name, ty)
            self.emit(f"let {mut}{alias or name}: {rust_type(ty)} = {rhs};")
            self.declared[-1][name] = ty
            self.declared[-1].aliases.pop(name, None)
            if alias:
                self.declared[-1].aliases[name] = alias
        elif isinstance(s, Eval):
            if s.value.op == "store":
                self.store(s.value)
            else:
                expr = self.op(s.value)
                if expr is None:  # the op emitted its own statements (a token-ordered scatter)
                    pass
                elif expr.startswith("tile_to_scalar(") and s.value.ty is not None:
                    self.emit(f"let _: {s.value.ty.dtype} = {expr};")  # an unused result still needs its type
                else:
                    self.emit(f"let _ = {expr};")
        elif isinstance(s, For):
            start, stop = self.value(s.start), self.value(s.stop)
            rng = f"{start}..{stop}"
            if not (isinstance(s.step, Lit) and s.step.value == 1):
                rng = f"({rng}).step_by({self.value(s.step)} as usize)"
            self.emit(f"for {rust_ident(s.var)} in {rng} {{")
            self.for_vars.append(s.var)
            self.nested(s.body, {rust_ident(s.var): TileTy(s.start.ty.dtype if s.start.ty else "i32")})
            self.for_vars.pop()
            self.emit("}")
        elif isinstance(s, While) and not s.once and not self.inline_cond(s.cond):
            # a condition that computes (`t >= lo and t < lo + n`): cuTile Python's `while` is a `loop` that
            # evaluates it at its top every iteration (`and`/`or` short-circuit as an `if` yielding an i1) and
            # breaks where it fails; cuTile Rust compiles `while { statements; cond } { body }` the same way
            self.emit("while {")
            self.indent += 1
            self.declared.append(_Scope())
            self.emit(self.short_circuit(s.cond))
            self.declared.pop()
            self.indent -= 1
            self.emit("} {")
            self.nested(s.body)
            self.emit("}")
        elif isinstance(s, While):
            self.emit("loop {" if s.once else f"while {self.cond_value(s.cond)} {{")
            self.nested(s.body)
            self.emit("}")
        elif isinstance(s, Continue):
            self.emit("continue;")
        elif isinstance(s, Break):
            self.emit("break;")
        elif isinstance(s, If):
            for name, ty in s.declares:
                # assigned in both arms: declared before the `if` (the initial value is dead)
                name = rust_ident(name)
                if self.lookup(name) == ty and name in self.mutable:
                    # already declared by an enclosing block (an `elif` is an `if` in the else arm of the
                    # first): a second `let` there would shadow it, and the arms' values would not leave it
                    continue
                zero = self.zero(ty)
                if ty.is_scalar and ty.dtype in GENERIC:  # an E scalar is a rank-0 tile
                    zero = f"constant({zero}, shape![])"
                self.mutable.add(name)
                alias = self._alias(name, ty)
                self.emit(f"let mut {alias or name}: {rust_type(ty)} = {zero};")
                self.declared[-1][name] = ty
                self.declared[-1].aliases.pop(name, None)
                if alias:
                    self.declared[-1].aliases[name] = alias
            if s.const:
                cond = self.const_cond(s.cond)
            elif isinstance(s.cond, Op) and s.cond.op in ("and", "or"):
                loop_vars = {rust_ident(v) for v in self.for_vars}
                if any(isinstance(x, Name) and rust_ident(x.id) in loop_vars
                       for c in _chain(s.cond, s.cond.op) if isinstance(c, Op) and c.op == "cmp" for x in c.args):
                    raise fail("CT100", f"`{s.cond.op}` in an `if` that compares a `for` loop's variable: cuTile "
                               "Python splits that loop at the comparison (loop splitting), which the port does "
                               "not do for an `and`/`or` condition", s.pos)
                cond = self.short_circuit(s.cond)  # `if a or b:` on runtime values, as cuTile Python lowers it
            else:
                cond = self.cond_value(s.cond, bind=True)
            self.emit(f"if {cond} {{")
            self.nested(s.body)
            if s.orelse:
                self.emit("} else {")
                self.nested(s.orelse)
            self.emit("}")

    def scope_entry(self, x: Expr) -> dict:
        """A value an LLM fallback unit reads: its Python and Rust names and its Rust type."""
        if isinstance(x, Lit):
            return {"python": repr(x.value), "rust": self.literal(x), "type": rust_type(x.ty)}
        n = rust_ident(x.id)
        if isinstance(x.ty, ArrayTy):
            decl = next((p for p in self.signature[1] if p.startswith(f"{n}:")), f"{n}: array")
            return {"python": x.id, "rust": n, "type": decl.split(":", 1)[1].strip()}
        if x.id in self.float_consts:
            return {"python": x.id, "rust": n, "type": "const i32 generic holding the f32 bit pattern of a float "
                                                        "constant (f32::from_bits is not available: use bitcast)"}
        if x.id in self.consts:
            return {"python": x.id, "rust": n, "type": "const i32 generic"}
        return {"python": x.id, "rust": n, "type": rust_type(x.ty)}

    def combine_closure(self, combine: str) -> str:
        """The closure of a reduce or scan: `|a, b| a | b` (its parameters fresh names: no kernel name is shadowed)."""
        lhs, rhs = self.tmp(), self.tmp()
        return f"|{lhs}, {rhs}| {lhs} {'^' if combine == 'xor' else '|'} {rhs}"

    def zero(self, ty: TileTy) -> str:
        dt = ty.dtype
        lit = {"f32": "0.0f32", "f64": "0.0f64", "bool": "false"}.get(dt)
        if lit is None:
            lit = f"0{dt}" if dt.startswith(("i", "u")) else f"{dt}::ZERO"
        return lit if ty.is_scalar else f"constant({lit}, {shape_macro(ty.shape)})"

    def nested(self, body, bound: dict | None = None) -> None:
        self.indent += 1
        self.declared.append(_Scope(bound or {}))
        self.block(body)
        self.declared.pop()
        self.indent -= 1

    def const_cond(self, e: Expr) -> str:
        if isinstance(e, Name):
            # Python truthiness: a bool constant is 0 or 1; an int constant is true when nonzero
            p = self.k.param(e.id)
            derived = dict(self.k.derived).get(e.id, "")
            is_int = (p is not None and p.const_type == "int") or (derived and not derived.startswith("(1 if "))
            return f"{rust_ident(e.id)} {'!= 0i32' if is_int else '== 1i32'}"
        if isinstance(e, Lit):
            return "true" if e.value else "false"
        if isinstance(e, Op) and e.op == "not" and isinstance(e.args[0], Name):
            return f"{rust_ident(e.args[0].id)} == 0i32"
        if isinstance(e, Op) and e.op == "not":
            return f"({self.const_cond(e.args[0])}) == false"
        if isinstance(e, Op) and e.op == "cmp":
            return f"{self.value(e.args[0])} {e.attr('pred')} {self.value(e.args[1])}"
        if isinstance(e, Op) and e.op in ("and", "or"):
            op = "&&" if e.op == "and" else "||"
            return f"({self.const_cond(e.args[0])}) {op} ({self.const_cond(e.args[1])})"
        raise fail("CT108", "unsupported constant condition", e.pos)

    # -------------------------------------------------------------- values
    def literal(self, e: Lit) -> str:
        dt = e.ty.dtype
        if dt == "bool":
            return "true" if e.value else "false"
        if dt in INT_DTYPES:
            if _wide_u32(e, dt):  # no u32 literal above i32::MAX: the int32 of its bits, bitcast
                name = self.tmp("c")
                self.emit(f"let {name}: u32 = tile_to_scalar({self.u32_const(e, ())});")
                return name
            if dt in ("i64", "u64") and not isinstance(e.value, float) and not -2**31 <= int(e.value) < 2**31:
                # a 64-bit scalar beyond i32 (`offset & 0xFFFFFFFF` of an i64): no literal outside a constant's value
                # (_int_lit), so the rank-0 constant tile's value, which the JIT reads at 64 bits
                c, name = self.tmp("c"), self.tmp("c")  # (the JIT needs the constant's type: a typed `let`)
                self.emit(f"let {c}: Tile<{dt}, {{ [] }}> = constant({_int_lit(e, dt, in_constant=True)}, shape![]);")
                self.emit(f"let {name}: {dt} = tile_to_scalar({c});")
                return name
            return _int_lit(e, dt)
        if dt in ("f32", "f64"):
            lit = _float_lit(float(e.value), wide=dt == "f64")
            if "::" in lit:
                # the JIT takes f32::INFINITY etc. only as a constant's value: a rank-0 constant tile
                return f"tile_to_scalar({self.special_const(lit, dt)})"
            return lit + dt
        # f16 / bf16 / E: no literal syntax; convert an f32 literal (the normalizer folds the ftof)
        name = self.tmp("c")
        lit = _float_lit(float(e.value))
        if "::" in lit and dt in GENERIC:  # ±inf / NaN as E: the JIT has no tile_to_scalar for a Tile<E>,
            f = self.tmp("c")               # so the f32 constant is converted as a scalar (ftof, folded: N8)
            self.emit(f"let {f}: f32 = tile_to_scalar({self.special_const(lit, 'f32')});")
            self.emit(f"let {name}: {dt} = convert_scalar({f});")
            return name
        if "::" in lit:  # ±inf / NaN
            self.emit(f"let {name}: {dt} = tile_to_scalar({self.special_const(lit, dt)});")
            return name
        self.emit(f"let {name}: {dt} = convert_scalar({lit}f32);")
        return name

    def u32_const(self, e: Lit, shape: tuple) -> str:
        """A uint32 constant tile above i32::MAX (Philox's constants): cuTile Rust 0.5.0 reads every integer
        literal as an i32 (compile_expression.rs, `base10_parse::<i32>`), so the int32 of the same bits,
        bitcast (the values are Triton's: bitcast keeps the bits)."""
        c, u = self.tmp("c"), self.tmp("c")
        ts = f"{{ [{dim_list(shape)}] }}"
        self.emit(f"let {c}: Tile<i32, {ts}> = constant({int(e.value) - 2**32}i32, {shape_macro(shape)});")
        self.emit(f"let {u}: Tile<u32, {ts}> = bitcast({c});")
        return u

    def special_const(self, lit: str, dt: str) -> str:
        """A rank-0 tile holding ±inf or NaN (`lit` is `f32::INFINITY` etc.). Only f32 and f64 have these
        constants in Rust (`E` has only ZERO): other float types convert the f32 one (an `ftof` of a
        constant, folded by the normalizer to the same constant cuTile Python writes)."""
        c = self.tmp("c")
        if lit == "f32::NAN":  # the JIT refuses a NaN constant ("Constant not supported"): the bits of the quiet
            wide = dt == "f64"  # NaN Python's float("nan") rounds to, bitcast (N18 folds it into that constant)
            bits, ity = ("0x7FF8000000000000i64", "i64") if wide else ("0x7FC00000i32", "i32")
            b = self.tmp("c")
            self.emit(f"let {b}: Tile<{ity}, {{ [] }}> = constant({bits}, shape![]);")
            self.emit(f"let {c}: Tile<{'f64' if wide else 'f32'}, {{ [] }}> = bitcast({b});")
            if dt in ("f32", "f64"):
                return c
            d = self.tmp("c")
            self.emit(f"let {d}: Tile<{dt}, {{ [] }}> = convert_tile({c});")
            return d
        if dt in ("f32", "f64"):
            self.emit(f"let {c}: Tile<{dt}, {{ [] }}> = constant({lit.replace('f32::', dt + '::')}, shape![]);")
            return c
        self.emit(f"let {c}: Tile<f32, {{ [] }}> = constant({lit}, shape![]);")
        d = self.tmp("c")
        self.emit(f"let {d}: Tile<{dt}, {{ [] }}> = convert_tile({c});")
        return d

    def float_const(self, e: Name) -> str:
        """A ct.Constant[float]: the const generic holds its f32 bits; `bitcast` gives the float (the JIT
        substitutes the generic, so this is a bitcast of an integer constant, folded by the normalizer into the
        float constant with those bits, N18), converted to the dtype it met (a weak constant, like a literal;
        the ftof of a constant is folded too, N8)."""
        dt = e.ty.dtype
        bits, f = self.tmp(), self.tmp()
        self.emit(f"let {bits}: Tile<i32, {{ [] }}> = scalar_to_tile({rust_ident(e.id)});")
        self.emit(f"let {f}: Tile<f32, {{ [] }}> = bitcast({bits});")
        if dt == "f32":
            c = self.tmp("c")
            self.emit(f"let {c}: f32 = tile_to_scalar({f});")
            return c
        if dt not in FLOAT_DTYPES and dt not in GENERIC:
            raise fail("CT106", f"the ct.Constant[float] `{e.id}` meets a {dt} value; only float uses are "
                       "supported", e.pos)
        d = self.tmp("c")
        self.emit(f"let {d}: Tile<{dt}, {{ [] }}> = convert_tile({f});")
        if dt in GENERIC:  # rank-0 values of E stay rank-0 tiles
            return d
        c = self.tmp("c")
        self.emit(f"let {c}: {dt} = tile_to_scalar({d});")
        return c

    def value(self, e: Expr, allow_inline: bool = False) -> str:
        if isinstance(e, Lit):
            return self.literal(e)
        if isinstance(e, Name) and e.id in self.float_consts:
            return self.float_const(e)
        if isinstance(e, Name):
            if e.id in self.consts and isinstance(e.ty, TileTy) and e.ty.is_scalar and e.ty.dtype in INT_DTYPES \
                    and e.ty.dtype != "i32":
                # a const generic (i32) taking another integer dtype, as cuTile Python types the constant
                # (`i64 * BLOCK`): Rust has no mixed-type arithmetic, so convert it (exti of a constant: folded)
                t, c = self.tmp(), self.tmp("c")
                self.emit(f"let {t}: Tile<i32, {{ [] }}> = scalar_to_tile({rust_ident(e.id)});")
                conv = self.scalar_result(Op("convert", (), e.pos, ty=e.ty), self.int_convert(t, "i32", e.ty.dtype, ()))
                self.emit(f"let {c}: {e.ty.dtype} = {conv};")
                return c
            return self.rust_name(e.id)
        if isinstance(e, Op):
            rhs = self.op(e)
            if allow_inline or rhs.isidentifier():  # already a typed binding: no copy
                return rhs
            name = self.tmp()
            self.emit(f"let {name}: {rust_type(e.ty)} = {rhs};")
            return name
        raise fail("CT100", "unsupported value", e.pos)

    def view(self, arr: Name, shape: tuple[str, ...], padding: str, order: tuple | None = None,
             token: str | None = None) -> str:
        name = self.tmp("pv", after=arr.id)
        a = self.tensor(arr)
        tok = token or f"get_tensor_token({a})"
        dim_map = f"const_array![{', '.join(map(str, order))}]" if order else "dim_map::Identity"
        self.emit(f"let {name}: Partition<{arr.ty.dtype}, {{ [{dim_list(shape)}] }}> = unsafe {{ "
                  f"make_partition_view({a}, {shape_macro(shape)}, {padding}, {dim_map}, {tok}) }};")
        return name

    def tile(self, e: Expr) -> str:
        """A rank-0 tile holding a scalar value (tile ops on scalars go through it; no Tile IR op)."""
        if isinstance(e, Lit) and e.ty.is_scalar and self.narrow_kinds.get(e.ty.dtype) and math.isfinite(e.value):
            # a literal as an integer pointer's generic that may be a narrow integer or a bool (`other=0`): its
            # int64 constant taken to the dtype's kind, as Triton casts it (a bool: `!= 0`, no float conversion)
            w, t = self.tmp(), self.tmp()
            self.emit(f"let {w}: Tile<i64, {{ [] }}> = constant({int(float(e.value))}i64, shape![]);")
            self.emit(f"let {t}: Tile<{e.ty.dtype}, {{ [] }}> = {{ {self._from_i64(w, e.ty.dtype, ())} }};")
            return t
        if isinstance(e, Lit) and e.ty.is_scalar and e.ty.dtype in GENERIC and not isinstance(e.value, bool):
            # a literal as E: its f32 constant as a rank-0 tile, converted (the ftof folds: N8). Not an E scalar
            # (`let c: E = convert_scalar(..)`): the JIT leaves E unresolved in a tile made from it, and a binary op
            # with that tile fails to compile
            lit = _float_lit(float(e.value))
            if "::" in lit:  # ±inf / NaN: the rank-0 f32 constant itself
                f32 = self.special_const(lit, "f32")
            else:
                f32 = self.tmp()
                self.emit(f"let {f32}: Tile<f32, {{ [] }}> = scalar_to_tile({lit}f32);")
            t = self.tmp()
            self.emit(f"let {t}: Tile<{e.ty.dtype}, {{ [] }}> = convert_tile({f32});")
            return t
        x = self.value(e)
        if not e.ty.is_scalar or (e.ty.dtype in GENERIC and not isinstance(e, Lit)):
            return x
        unwrapped = _RANK0_UNWRAP.fullmatch(x)
        if unwrapped:  # a rank-0 tile unwrapped into a scalar (scalar_result): the tile itself (the round trip
            return unwrapped.group(1)  # scalar_to_tile(tile_to_scalar(t)) leaves the scalar's type to infer)
        if e.ty.dtype in GENERIC:  # a converted literal: an E scalar
            t = self.tmp()
            self.emit(f"let {t}: Tile<{e.ty.dtype}, {{ [] }}> = scalar_to_tile({x});")
            return t
        t = self.tmp()
        self.emit(f"let {t}: Tile<{e.ty.dtype}, {{ [] }}> = scalar_to_tile({x});")
        return t

    def operand(self, e: Expr) -> str:
        """Operands of rank-0 values of a generic dtype must be tiles too (literals included)."""
        if e.ty is not None and e.ty.is_scalar and e.ty.dtype in GENERIC:
            return self.tile(e)
        return self.value(e)

    def scan_along(self, e: Op, x: str, scan) -> str:
        """`scan(tile)` (the scan expression along dim 0) applied along `e`'s axis. cuTile Rust 0.5.0 writes every
        scan along dim 0 whatever its `dim` (compile_scan_op's `.attr("dim", Attribute::i32(0))`): another axis is
        moved to the front and back."""
        axis = e.attr("axis")
        if axis == 0:
            return scan(x)
        shape = tuple(e.ty.shape)
        perm = (axis,) + tuple(i for i in range(len(shape)) if i != axis)
        inverse = tuple(perm.index(i) for i in range(len(shape)))
        moved = tuple(shape[i] for i in perm)
        t, u = self.tmp(), self.tmp()
        self.emit(f"let {t}: Tile<{e.ty.dtype}, {{ [{dim_list(moved)}] }}> = "
                  f"permute({x}, const_array![{', '.join(map(str, perm))}]);")
        self.emit(f"let {u}: Tile<{e.ty.dtype}, {{ [{dim_list(moved)}] }}> = {scan(t)};")
        return f"permute({u}, const_array![{', '.join(map(str, inverse))}])"

    def scalar_result(self, e: Op, expr: str) -> str:
        """Wrap a tile-op expression computed on rank-0 tiles back into a scalar."""
        if not e.ty.is_scalar or e.ty.dtype in GENERIC:
            return expr
        t = self.tmp()
        self.emit(f"let {t}: Tile<{e.ty.dtype}, {{ [] }}> = {expr};")
        return f"tile_to_scalar({t})"

    def inline_cond(self, e: Expr) -> bool:
        """Whether cond_value writes `e` inline (a `while` condition Rust re-evaluates every iteration)."""
        if isinstance(e, Op) and e.op == "cmp" and e.ty.is_scalar and all(isinstance(a, (Name, Lit)) for a in e.args):
            dt = e.args[0].ty.dtype
            return not ((e.attr("pred") == "!=" and dt in FLOAT_DTYPES) or dt in GENERIC)
        if isinstance(e, Op) and e.op in ("and", "or"):
            return all(self.inline_cond(a) for a in e.args)
        return isinstance(e, (Name, Lit))

    def short_circuit(self, e: Expr) -> str:
        """A runtime condition computed into statements, `and`/`or` short-circuiting the way cuTile Python
        lowers them: `a and b` is `if a { b } else { false }` (b's ops inside the `then` arm), `a or b` is
        `if a { true } else { b }` (the arm that does not compute yields a's known value, as Python folds it).
        Returns the bool value's name or literal."""
        if isinstance(e, Op) and e.op in ("and", "or") and len(_chain(e, e.op)) > 2:
            # `a or b or c` (one chain, however the model nests it): cuTile Python nests to the right,
            # `if a { true } else { if b { true } else { c } }`
            items = _chain(e, e.op)
            right = items[-1]
            for x in reversed(items[1:-1]):
                right = Op(e.op, (x, right), e.pos, rule=e.rule, ty=e.ty)
            e = Op(e.op, (items[0], right), e.pos, rule=e.rule, ty=e.ty)
        if isinstance(e, Op) and e.op in ("and", "or"):
            a = self.short_circuit(e.args[0])
            r = self.tmp()
            self.emit(f"let {r}: bool = if {a} {{")
            self.indent += 1
            self.declared.append(_Scope())
            if e.op == "or":
                self.emit("true")
                self.declared.pop()
                self.indent -= 1
                self.emit("} else {")
                self.indent += 1
                self.declared.append(_Scope())
            b = self.short_circuit(e.args[1])
            self.emit(b)
            self.declared.pop()
            self.indent -= 1
            if e.op == "and":
                self.emit("} else {")
                self.emit("    false")
            self.emit("};")
            return r
        if isinstance(e, Op) and e.op == "cmp" and e.ty.is_scalar:
            return self.value(e)
        if isinstance(e, (Name, Lit)) and isinstance(e.ty, TileTy) and e.ty.is_scalar and e.ty.dtype == "bool":
            return self.value(e)
        raise fail("CT100", "this loop condition is not supported: only comparisons of scalars joined by "
                   "`and`/`or` are", e.pos)

    def cond_value(self, e: Expr, bind: bool = False) -> str:
        """An inline boolean expression (a `while` re-evaluates it every iteration); `bind` allows
        computing it into variables first (an `if` condition is evaluated once)."""
        if bind:
            return self.value(e)
        if isinstance(e, Op) and e.op == "cmp" and e.ty.is_scalar and all(isinstance(a, (Name, Lit)) for a in e.args):
            dt = e.args[0].ty.dtype
            if (e.attr("pred") == "!=" and dt in FLOAT_DTYPES) or dt in GENERIC:
                # Python's float `!=` is unordered (true for NaN), Rust's scalar `!=` ordered, and an E scalar
                # (a rank-0 tile) has no Rust comparison operators: the cmpf needs statements, which an inline
                # loop condition cannot hold
                what = "a float `!=`" if e.attr("pred") == "!=" else "a comparison of the element type"
                raise fail("CT100", f"{what} in a loop condition: compute it into a variable at the end of "
                           "the loop body and test the variable", e.pos)
            return f"{self.value(e.args[0])} {e.attr('pred')} {self.value(e.args[1])}"
        if isinstance(e, Op) and e.op in ("and", "or"):
            op = "&&" if e.op == "and" else "||"
            return f"({self.cond_value(e.args[0])}) {op} ({self.cond_value(e.args[1])})"
        if isinstance(e, (Name, Lit)):
            return self.value(e)
        raise fail("CT100", "this loop condition is too complex: compute it into a variable at the end of the "
                   "loop body and test the variable", e.pos)

    def hints(self, e: Op) -> tuple[str, str]:
        lat = e.attr("latency")
        tma = e.attr("allow_tma")
        return (f"Some({lat})" if lat is not None else "None",
                "tma::Disabled" if tma is False else "tma::Enabled")

    def store(self, e: Op) -> None:
        arr, index, tile = e.args
        a = self.tensor(arr, as_ref=False)
        t = self.value(tile)
        if self.forms.get(array_root(arr)) == "checked":
            if self.k.frontend != "triton":
                self.emit(f"{a}.store({t});")
                return
            # a Triton store is a plain global store: `Tensor::store` would be a TMA store (store_tile_Nd's
            # tma::Enabled), which stages the tile through shared memory; this is store_tile_Nd with TMA off.
            # A descriptor's store is Triton's TMA store and keeps it (H100, host_desc_matmul f32 4096^3: 1868 µs
            # with TMA off, 728 with it, 723 as the raw view store before: results/experiments/triton_own_tile_tma.md)
            descriptor = bool(e.attr("descriptor"))
            shape = tile.ty.shape
            pid, pm = self.tmp(), self.tmp("pm")
            coords = ", ".join(f"{pid}.{i}" for i in range(len(shape)))
            ordered = array_root(arr) in self.ordered  # stored twice: the later store lands last
            n = rust_ident(array_root(arr))
            after = f"{n}_tok_access" if ordered else f"get_tensor_token({a})"
            self.emit(f"let {pid}: (i32, i32, i32) = get_tile_block_id();")
            what = "a descriptor's store, with TMA as Triton's" if descriptor else "Triton's plain store, no TMA"
            self.emit(f"// unsafe: a raw partition store ({what}) at the program's own block index, the tile of the "
                      "partition the launcher split")
            self.emit(f"let mut {pm}: PartitionMut<{arr.ty.dtype}, {{ [{dim_list(shape)}] }}> = unsafe {{ "
                      f"make_partition_view_mut({a}, {shape_macro(shape)}, padding::None, {after}) }};")
            self.emit(f"unsafe {{ store_view_tko_mut(&mut {pm}, {t}, [{coords}], ordering::Weak, scope::TileBlock, "
                      f"None, tma::{'Enabled' if descriptor else 'Disabled'}) }};")
            if ordered:
                tok = self.tmp("tok")
                self.emit(f"let {tok}: Token = get_partition_token_mut(&{pm});")
                self.emit(f"{n}_tok_access = {tok};")
                self.emit(f"{n}_tok_store = {tok};")
            return
        idx = ", ".join(self.value(i) for i in index.items)
        shape = tile.ty.shape
        pm = self.tmp("pm")
        lat, tma = self.hints(e)
        store = f"unsafe {{ store_view_tko_mut(&mut {pm}, {t}, [{idx}], ordering::Weak, scope::TileBlock, {lat}, {tma}) }}"
        if array_root(arr) in self.ordered:  # after the array's last access (see entry)
            n = rust_ident(array_root(arr))
            tok = self.tmp("tok")
            self.emit(f"let mut {pm}: PartitionMut<{arr.ty.dtype}, {{ [{dim_list(shape)}] }}> = unsafe {{ "
                      f"make_partition_view_mut({self.tensor(arr)}, {shape_macro(shape)}, padding::None, "
                      f"{n}_tok_access) }};")
            # the store's token is read back from the view (cuTile Rust 0.5.0's `store_view_tko_mut` value is
            # not the token: using it fails Tile IR verification)
            self.emit(f"{store};")
            self.emit(f"let {tok}: Token = get_partition_token_mut(&{pm});")
            self.emit(f"{n}_tok_access = {tok};")
            self.emit(f"{n}_tok_store = {tok};")
            return
        self.emit(f"let mut {pm}: PartitionMut<{arr.ty.dtype}, {{ [{dim_list(shape)}] }}> = "
                  f"unsafe {{ {a}.partition_full_mut({shape_macro(shape)}) }};")
        self.emit(f"{store};")

    def view_atomic_add(self, e: Op) -> None:
        """`a.tiled_view(shape).atomic_store_add(index, tile)`: cuTile Python's atomic_red_view_tko (relaxed,
        device scope, no bounds promise) on the array's partition of that tile shape."""
        arr, index, tile = e.args
        t = self.value(tile)
        idx = ", ".join(self.value(i) for i in index.items)
        shape = e.attr("shape")
        dt = arr.ty.dtype
        mode = "AddF" if dt in FLOAT_DTYPES or (dt in GENERIC and dt not in self.int_kinds) else "Add"
        pm = self.tmp("pm")
        ptype = f"PartitionMut<{dt}, {{ [{dim_list(shape)}] }}>"
        if arr.id in self.ordered:  # after the array's last access (see entry)
            n = rust_ident(arr.id)
            tok = self.tmp("tok")
            self.emit(f"let {pm}: {ptype} = unsafe {{ make_partition_view_mut({self.tensor(arr)}, "
                      f"{shape_macro(shape)}, padding::None, {n}_tok_access) }};")
            self.emit(f"let {tok}: Token = unsafe {{ atomic_red_view_raw(&{pm}, {t}, [{idx}], atomic::{mode}, "
                      f"ordering::Relaxed, scope::Device, Some({n}_tok_access)) }};")
            self.emit(f"{n}_tok_access = {tok};")
            self.emit(f"{n}_tok_store = {tok};")
            return
        a = self.tensor(arr, as_ref=False)
        self.emit(f"let {pm}: {ptype} = unsafe {{ {a}.partition_full_mut({shape_macro(shape)}) }};")
        self.emit(f"let _: Token = unsafe {{ atomic_red_view_raw(&{pm}, {t}, [{idx}], atomic::{mode}, "
                  f"ordering::Relaxed, scope::Device, None) }};")

    def op(self, e: Op) -> str:
        o = e.op
        a = e.args
        if o == "llm_fragment":  # an answer of the LLM fallback, proved equivalent before it was accepted
            model = "".join(c for c in str(e.attr("model")) if c.isprintable())
            self.emit(f"// cutile-transpile: llm-fallback {e.attr('hash')} (model: {model})")
            self.emit("// " + " ".join(str(e.attr("code")).split()))
            rust = e.attr("rust")
            return f"{{\n{rust}\n}}" if ";" in rust else rust
        if o == "llm_hole":  # the point an LLM fallback question is about: what is in scope there
            self.hole = {"scope": [self.scope_entry(x) for x in a], "before": list(self.lines),
                         "generics": list(self.signature[0]), "params": list(self.signature[1])}
            return None
        if o == "bid":
            return f"get_tile_block_id().{a[0].value}"
        if o == "num_blocks":
            return f"get_num_tile_blocks().{a[0].value}"
        if o == "load":
            arr, index = a
            ordered = array_root(arr) in self.ordered
            n = rust_ident(array_root(arr))
            pv = self.view(arr, e.ty.shape, e.attr("padding"), e.attr("order"),
                           token=f"{n}_tok_store" if ordered else None)
            idx = ", ".join(self.value(i) for i in index.items)
            lat, tma = self.hints(e)
            call = f"load_view_tko(&{pv}, [{idx}], ordering::Weak, scope::TileBlock, {lat}, {tma})"
            if not ordered:
                return call
            # the view's token is the load's result token once it has loaded (cuTile Rust updates it)
            res, tok = self.tmp(), self.tmp("tok")
            self.emit(f"let {res}: {rust_type(e.ty)} = {call};")
            self.emit(f"let {tok}: Token = get_partition_token(&{pv});")
            self.emit(f"{n}_tok_access = join_tokens(&[{n}_tok_access, {tok}]);")
            return res
        if o == "load_advanced":
            arr, index = a
            if arr.id in self.ordered:
                raise fail(e.rule, "load_advanced_indexing of an array the kernel also writes is not supported yet "
                           "(its token order)", e.pos)
            shape = e.ty.shape
            idx = ", ".join(self.value(i) for i in index.items)  # the index first, as cuTile Python evaluates it
            gv = self.tmp("pv", after=arr.id)
            self.emit(f"let {gv}: GatherScatterView<{arr.ty.dtype}, {{ [{dim_list(shape)}] }}, {e.attr('sparse_dim')}> "
                      f"= unsafe {{ make_gather_scatter_view({self.tensor(arr)}, {shape_macro(shape)}, "
                      f"{e.attr('padding')}) }};")
            lat, tma = self.hints(e)
            res, tok = self.tmp(), self.tmp("tok")
            inb = ", ".join(["false"] * len(shape))
            self.emit(f"let ({res}, {tok}): ({rust_type(e.ty)}, Token) = unsafe {{ load_view_raw(&{gv}, ({idx}), None, "
                      f"ordering::Weak, scope::TileBlock, {tma}, {lat}, [{inb}], {shape_macro(shape)}) }};")
            return res
        if o == "view_atomic_add":
            self.view_atomic_add(e)
            return None
        if o == "num_tiles":
            pv = self.view(a[0], e.attr("shape"), "padding::None")
            return f"num_tiles(&{pv}, {e.attr('axis')}i32)"
        if o == "const_tile":
            v = a[0]
            dt = e.ty.dtype
            if dt in ("f32", "f64"):
                lit = _float_lit(float(v.value), wide=dt == "f64")
                if lit == "f32::NAN":  # no NaN constant in the JIT: the rank-0 bitcast one, broadcast
                    return self.scalar_result(e, self.bcast(self.special_const(lit, dt), dt, e.ty.shape))
                lit = lit.replace("f32::", f"{dt}::") if "::" in lit else lit + dt
            elif dt in FLOAT_DTYPES or dt in GENERIC:
                if float(v.value) != 0.0:
                    raise fail("CT104", f"a constant {dt} tile with a non-zero value has no Rust literal form", e.pos)
                lit = f"{dt}::ZERO"
            elif dt == "bool":
                if not v.value and self.k.frontend != "triton":
                    raise fail("CT107", "a constant `False` tile: cuTile Rust 0.5.0 encodes constant(false) as true "
                               "(compile_expression.rs encode_literal_bytes); build the mask from a comparison", e.pos)
                if not v.value:
                    # cuTile Rust 0.5.0 encodes constant(false) as true (compile_expression.rs
                    # encode_literal_bytes: any literal but "0" is 0xFF): false is true xor true (a Triton port
                    # has no cuTile Python Tile IR to match; cuTile Python's own constant(false) keeps CT107)
                    t = self.tmp()
                    self.emit(f"let {t}: Tile<bool, {{ [{dim_list(e.ty.shape)}] }}> = "
                              f"constant(true, {shape_macro(e.ty.shape)});")
                    return self.scalar_result(e, f"xori({t}, {t})")
                lit = "true"
            elif _wide_u32(v, dt):
                return self.scalar_result(e, self.u32_const(v, e.ty.shape))
            else:
                lit = _int_lit(v, dt, in_constant=dt in ("i64", "u64"))
                if lit.startswith("("):  # i32::MIN: `constant` takes a literal only, so MIN + 1 minus one
                    one_less, one = lit[1:-1].split(" - ")
                    return self.scalar_result(e, f"constant({one_less}, {shape_macro(e.ty.shape)}) - "
                                                 f"constant({one}, {shape_macro(e.ty.shape)})")
            # a 0-d constant bound to a scalar: the rank-0 tile's value (no Tile IR op of its own)
            return self.scalar_result(e, f"constant({lit}, {shape_macro(e.ty.shape)})")
        if o == "splat":
            src = a[0]
            if e.ty.is_scalar and e.ty.dtype not in GENERIC and src.ty == e.ty:
                return self.value(src)  # `ct.full((), n)`: the value itself, as in cuTile Python
            if src.ty.dtype in GENERIC and (not isinstance(src, Lit) or (self.narrow_kinds.get(src.ty.dtype)
                                                                         and math.isfinite(src.value))):
                return self.bcast(self.tile(src), src.ty.dtype, e.ty.shape)
            wide = src.ty.dtype == "f64"
            if isinstance(src, Lit) and src.ty.dtype not in INT_DTYPES and src.ty.dtype != "bool" \
                    and "::" in _float_lit(float(src.value), wide):
                # f32::INFINITY etc. are not accepted as call arguments by the JIT; a rank-0 constant is
                c = self.special_const(_float_lit(float(src.value), wide), src.ty.dtype)
                return self.bcast(c, src.ty.dtype, e.ty.shape)
            return f"broadcast_scalar({self.value(src)}, {shape_macro(e.ty.shape)})"
        if o == "convert":
            src = a[0]
            if src.ty == e.ty:  # (`x.to(p.dtype.element_ty)` of an i64 value: its type already)
                return self.value(src)
            if not isinstance(src, Lit) and self.may_be_int(src.ty.dtype) and self.may_be_int(e.ty.dtype) \
                    and (src.ty.dtype in self.int_kinds or e.ty.dtype in self.int_kinds) and src.ty.dtype != e.ty.dtype:
                return self.scalar_result(e, self.int_dispatch(self.tile(src), src.ty.dtype, e.ty.dtype, e.ty.shape))
            if _int_kind(src.ty.dtype) and _int_kind(e.ty.dtype) and isinstance(src, Lit) and e.ty.is_scalar \
                    and e.ty.dtype != "bool" and not isinstance(src.value, bool):
                return self.literal(Lit(src.value, src.pos, e.ty))  # a constant: folded, as in cuTile Python
            if _int_kind(src.ty.dtype) and _int_kind(e.ty.dtype):
                # cuTile Rust's convert has no integer <-> integer (or bool) form: the op cuTile Python emits
                step = self.convert_step(src.ty, e)
                if step:
                    return f"{step}({self.value(src)})"
                return self.scalar_result(e, self.int_convert(self.tile(src), src.ty.dtype, e.ty.dtype, e.ty.shape, e))
            if e.ty.is_scalar and (src.ty.dtype in GENERIC or e.ty.dtype in GENERIC) and not isinstance(src, Lit):
                return self.scalar_result(e, f"convert_tile({self.tile(src)})")
            if e.ty.is_scalar and e.ty.dtype in GENERIC and isinstance(src, Lit):
                # a literal as E: an E scalar (convert_scalar), held as a rank-0 tile like every E value
                return f"scalar_to_tile({self.literal(Lit(src.value, src.pos, e.ty))})"
            if e.ty.is_scalar:
                return f"convert_scalar({self.value(src)})"
            return f"convert_tile({self.value(src)})"
        if o == "bitcast":
            return self.scalar_result(e, f"bitcast({self.tile(a[0])})")
        if o == "reshape":  # to shape (): a scalar, as `.item()` gives it
            return self.scalar_result(e, f"reshape({self.tile(a[0])}, {shape_macro(e.ty.shape)})")
        if o == "broadcast":
            return f"broadcast({self.tile(a[0])}, {shape_macro(e.ty.shape)})"
        if o in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
            return self.scalar_result(e, f"{o}({self.value(a[0])}, {e.attr('axis')}i32)")
        if o == "mma":
            if a[2].ty.dtype == "i32":  # int8 (uint8) operands: Tile IR's mmai, each operand's signedness
                modes = ", ".join(f"signedness::{'Unsigned' if x.ty.dtype.startswith('u') else 'Signed'}" for x in a[:2])
                return f"mmai({self.value(a[0])}, {self.value(a[1])}, {self.value(a[2])}, {modes})"
            return f"mmaf({self.value(a[0])}, {self.value(a[1])}, {self.value(a[2])})"
        if o == "fma":
            modes = f"rounding::{e.attr('rounding') or 'NearestEven'}, ftz::{'Enabled' if e.attr('ftz') else 'Disabled'}"
            if e.ty.is_scalar and e.ty.dtype not in GENERIC:
                x, y, z = (self.tile(v) for v in a)
                return self.scalar_result(e, f"fma({x}, {y}, {z}, {modes})")
            x, y, z = (self.operand(v) for v in a)
            return f"fma({x}, {y}, {z}, {modes})"
        if o in ("add", "sub", "mul") and e.attr("rounding"):
            # ct.add(x, y, rounding_mode=..., flush_to_zero=...): the explicit-mode op
            x, y = self.tile(a[0]), self.tile(a[1])
            ftz = "ftz::Enabled" if e.attr("ftz") else "ftz::Disabled"
            return self.scalar_result(e, f"{o}f({x}, {y}, rounding::{e.attr('rounding')}, {ftz})")
        if o in ("add", "sub", "mul", "div"):
            sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[o]
            return f"{self.operand(a[0])} {sym} {self.operand(a[1])}"
        if o == "neg":
            if e.ty.is_scalar and e.ty.dtype in GENERIC:  # an E scalar is a rank-0 tile already: the tile op
                return f"negf({self.tile(a[0])})"
            if e.ty.is_scalar:
                # Rust has no unary minus on runtime values here: negate the rank-0 tile (same negf/negi op)
                x = self.value(a[0])
                t = self.tmp()
                self.emit(f"let {t}: Tile<{e.ty.dtype}, {{ [] }}> = scalar_to_tile({x});")
                neg = "negf" if (e.ty.dtype in FLOAT_DTYPES or e.ty.dtype in GENERIC) else "negi"
                extra = "" if neg == "negf" else ", overflow::None"
                n = self.tmp()
                self.emit(f"let {n}: Tile<{e.ty.dtype}, {{ [] }}> = {neg}({t}{extra});")
                return f"tile_to_scalar({n})"
            if e.ty.dtype in FLOAT_DTYPES or e.ty.dtype in GENERIC:
                return f"negf({self.value(a[0])})"
            return f"negi({self.value(a[0])}, overflow::None)"
        if o in ("pow", "atan2"):
            if e.ty.is_scalar:
                return self.scalar_result(e, f"{o}({self.tile(a[0])}, {self.tile(a[1])})")
            return f"{o}({self.value(a[0])}, {self.value(a[1])})"
        if o in ("exp", "log", "log2", "tanh", "exp2", "sqrt", "rsqrt", "abs", "floor", "ceil", "sin", "cos", "tan",
                 "sinh", "cosh"):
            if e.ty.is_scalar:
                inner = Op(o, (a[0],), e.pos, e.attrs, e.rule, e.ty)
                return self.scalar_result(e, self._unary(inner, self.tile(a[0])))
            return self._unary(e, self.value(a[0]))
        if o in ("maximum", "minimum"):
            # Triton's propagate_nan=ALL on floats: a NaN operand gives NaN (maxf's propagate_nan)
            nan = "nan::Enabled" if e.attr("nan") else "nan::Disabled"
            if e.ty.is_scalar and (e.ty.dtype in GENERIC or (e.attr("nan") and e.ty.dtype in FLOAT_DTYPES)):
                x, y = self.tile(a[0]), self.tile(a[1])  # an E scalar is a rank-0 tile: the tile op
                op = f"{'maxf' if o == 'maximum' else 'minf'}({x}, {y}, {nan}, ftz::Disabled)"
                return op if e.ty.dtype in GENERIC else self.scalar_result(e, op)
            x, y = self.value(a[0]), self.value(a[1])
            if e.ty.is_scalar:
                return f"{'max' if o == 'maximum' else 'min'}({x}, {y})"
            if e.ty.dtype in FLOAT_DTYPES or e.ty.dtype in GENERIC:
                return f"{'maxf' if o == 'maximum' else 'minf'}({x}, {y}, {nan}, ftz::Disabled)"
            return f"{'maxi' if o == 'maximum' else 'mini'}({x}, {y})"
        if o == "where":
            if e.ty.is_scalar:
                c, x, y = (self.tile(v) for v in a)
                return self.scalar_result(e, f"select({c}, {x}, {y})")
            return f"select({self.value(a[0])}, {self.value(a[1])}, {self.value(a[2])})"
        if o == "cdiv":
            if e.ty.is_scalar:
                return f"ceil_div({self.value(a[0])}, {self.value(a[1])})"
            return f"divi({self.value(a[0])}, {self.value(a[1])}, rounding::PositiveInf)"
        if o in ("view_load", "view_store"):
            return self.view_access(e)
        if o in ("gather", "scatter", *RMW_OPS):
            return self.pointer_op(e)
        if o == "arange":
            return f"iota({shape_macro(e.ty.shape)})"
        if o in ("floordiv", "mod") and self.scalar_i32(e) and not (o == "mod" and self.known_divisor(e)):
            # Python's `//` and `%` on i32 scalars: one named step (the same ops, inlined by cuTile Rust)
            step = "py_floordiv_i32" if o == "floordiv" else "py_mod_i32"
            self.steps.add(step)
            return f"{step}({self.value(a[0])}, {self.value(a[1])})"
        if o in ("floordiv", "mod", "truncdiv", "truncmod", "bitand", "bitor", "bitxor", "shl", "shr"):
            x, y = self.tile(a[0]), self.tile(a[1])
            if o == "floordiv":
                return self.scalar_result(e, f"divi({x}, {y}, rounding::NegativeInf)")
            if o == "mod":
                return self.modulo(e, x, y)
            if o == "truncdiv":  # C's `/`: rounds toward zero
                return self.scalar_result(e, f"divi({x}, {y}, rounding::Zero)")
            if o == "truncmod":  # C's `%`: the dividend's sign
                return self.scalar_result(e, f"remi({x}, {y})")
            sym = {"bitand": "&", "bitor": "|", "bitxor": "^", "shl": "<<", "shr": ">>"}[o]
            return self.scalar_result(e, f"{x} {sym} {y}")
        if o == "mulhi":  # both operands tiles of the result's shape (the literal one a constant tile)
            return self.scalar_result(e, f"mulhii({self.tile(a[0])}, {self.tile(a[1])})")
        if o == "invert":
            x = self.tile(a[0])
            dt = e.ty.dtype
            ones = "true" if dt == "bool" else f"-1{dt}" if not dt.startswith("u") else f"-1i{dt[1:]}"
            c = self.tmp()
            self.emit(f"let {c}: Tile<{dt if not dt.startswith('u') else 'i' + dt[1:]}, "
                      f"{{ [{dim_list(e.ty.shape)}] }}> = constant({ones}, {shape_macro(e.ty.shape)});")
            if dt.startswith("u"):  # no negative unsigned literal: all ones as the signed type's -1, bitcast
                c, signed = self.tmp(), c
                self.emit(f"let {c}: Tile<{dt}, {{ [{dim_list(e.ty.shape)}] }}> = bitcast({signed});")
            return self.scalar_result(e, f"xori({x}, {c})")
        if o == "permute":
            return f"permute({self.value(a[0])}, const_array![{', '.join(map(str, e.attr('perm')))}])"
        if o == "cat":
            return f"cat({self.value(a[0])}, {self.value(a[1])}, {e.attr('axis')}i32)"
        if o == "extract":
            x = self.value(a[0])
            idx = ", ".join(f"scalar_to_tile({self.value(i)})" for i in a[1].items)
            return f"extract({x}, [{idx}])"
        if o == "cumsum":
            rev = "reverse::Reverse" if e.attr("reverse") else "reverse::Forward"
            zero = self.zero(TileTy(e.ty.dtype))
            return self.scan_along(e, self.value(a[0]), lambda t: f"scan_sum({t}, 0i32, {rev}, {zero})")
        if o == "reduce_closure":
            # cuTile Rust 0.5.0's closure reduce: a rank-1 tile into a scalar, typed by rustc as its operand
            # (`-> Tile<E, S>`), so the scalar is reshaped to rank 0 for rustc (the same type in Tile IR)
            x, src = self.value(a[0]), a[0].ty
            t = self.tmp()
            self.emit(f"let {t}: Tile<{src.dtype}, {{ [{dim_list(src.shape)}] }}> = "
                      f"reduce({x}, 0i32, {self.zero(TileTy(src.dtype))}, {self.combine_closure(e.attr('combine'))});")
            return self.scalar_result(e, f"reshape({t}, shape![])")
        if o == "scan_closure":
            rev = "reverse::Reverse" if e.attr("reverse") else "reverse::Forward"
            zero, closure = self.zero(TileTy(e.ty.dtype)), self.combine_closure(e.attr("combine"))
            return self.scan_along(e, self.value(a[0]), lambda t: f"scan({t}, 0i32, {rev}, {zero}, {closure})")
        if o == "item":
            return self.scalar_result(e, f"reshape({self.value(a[0])}, shape![])")
        if o == "truediv":
            x, y = self.tile(a[0]), self.tile(a[1])
            ftz = "ftz::Enabled" if e.attr("ftz") else "ftz::Disabled"
            return self.scalar_result(e, f"divf({x}, {y}, rounding::{e.attr('rounding')}, {ftz})")
        if o == "isnan":
            x = self.value(a[0])
            return f"cmpf({x}, {x}, predicate::NotEqual, cmp_ordering::Unordered)"
        if o == "ifexp":
            if e.attr("const"):
                cond = self.const_cond(a[0])
            else:
                cond = self.value(a[0])
            if e.ty.is_scalar and e.ty.dtype in GENERIC:
                x, y = self.tile(a[1]), self.tile(a[2])
            else:
                x, y = self.value(a[1]), self.value(a[2])
            return f"if {cond} {{ {x} }} else {{ {y} }}"
        if o == "array_dim" and a[0].id in self.slices:  # a view's extent: the value its slice made
            kind, v, _ = self.slices[a[0].id]["dims"][e.attr("dim")]
            return v if kind == "dyn" else f"({v})"
        if o == "array_dim":
            arr = a[0]
            t = self.tmp("shape", after=arr.id)
            dims = ", ".join(["-1"] * arr.ty.rank)
            self.emit(f"let {t}: Shape<{{ [{dims}] }}> = {rust_ident(arr.id)}.shape();")
            return f"{t}[{e.attr('dim')}]"
        if o == "cmp":
            pred = e.attr("pred")
            dt = a[0].ty.dtype
            if e.ty.is_scalar and ((pred == "!=" and dt in FLOAT_DTYPES) or dt in GENERIC):
                # Python's `!=` is true for NaN: cuTile Python compares unordered, Rust's `!=` on scalars ordered;
                # and an E scalar is a rank-0 tile, which has no Rust comparison operators
                order = "Unordered" if pred == "!=" else "Ordered"
                tx = self.tile(a[0])
                return self.scalar_result(e, f"cmpf({tx}, {self.tile(a[1])}, predicate::{CMP[pred]}, "
                                             f"cmp_ordering::{order})")
            x, y = self.value(a[0]), self.value(a[1])
            if e.ty.is_scalar:
                return f"{x} {pred} {y}"
            if dt in FLOAT_DTYPES or dt in GENERIC:
                order = "Unordered" if pred == "!=" else "Ordered"
                return f"cmpf({x}, {y}, predicate::{CMP[pred]}, cmp_ordering::{order})"
            return f"cmpi({x}, {y}, predicate::{CMP[pred]})"
        if o in ("and", "or", "not"):
            raise fail("CT100", "`and`/`or`/`not` are only supported in constant conditions", e.pos)
        raise fail(e.rule or "CT101", f"no Rust lowering for `{o}`", e.pos)

    def may_be_int(self, dt: str) -> bool:
        return _int_kind(dt) or dt in self.int_kinds

    def int_dispatch(self, x: str, src: str, dst: str, shape: tuple) -> str:
        """A conversion where one side is a Triton pointer's generic that may be an integer (i32 or i64) and the
        other may be one too: cuTile Rust's `convert` has no integer <-> integer form, so the generic's kind (a
        const generic the launcher sets from the dtype: 8 i64, 4 i32, 0 a float) picks the form. The JIT folds
        the branch on a constant and compiles only the taken one."""
        ts = f"{{ [{dim_list(shape)}] }}"
        r = self.tmp()
        if src in self.int_kinds:  # the source's kind first: to i64 (exti from i32), or a float's own convert
            kind = self.int_kinds[src]
            a, wa = self._arm_let("i64", f"bitcast({x})", ts)
            b, nb = self._arm_let("i32", f"bitcast({x})", ts)
            c, wc = self._arm_let("i64", f"exti({nb})", ts)
            f, vf = self._arm_let(dst, f"convert_tile({x})", ts)
            arms = [f"if {kind} == 8i32 {{ {a}{self._from_i64(wa, dst, shape)} }}",
                    f"if {kind} == 4i32 {{ {b}{c}{self._from_i64(wc, dst, shape)} }}"]
            for d in self.narrow_kinds[src]:  # widened by the narrow type's own signedness (u8, bool: zero)
                n, nn = self._arm_let(d, f"convert_tile({x})", ts)  # (the identity conversion: no op)
                w, nw = self._arm_let("i64", f"exti({nn})", ts)
                arms.append(f"if {kind} == {INT_KINDS[d]}i32 {{ {n}{w}{self._from_i64(nw, dst, shape)} }}")
            self.emit(f"let {r}: Tile<{dst}, {ts}> = {' else '.join(arms)} else {{ {f}{vf} }};")
        elif src == "u32" and dst in self.int_kinds:
            # a uint32 tile (Triton's random integers) stored into an int pointer: its bits as int32 (a bitcast,
            # as Triton's same-width cast), zero-extended to int64 (and narrowed from there, as a narrow pointer's
            # store converts it); a float pointer's elements convert it
            kind = self.int_kinds[dst]
            a, wa = self._arm_let("i64", f"exti({x})", ts)
            b, nb = self._arm_let(dst, f"bitcast({wa})", ts)
            c, nc = self._arm_let(dst, f"bitcast({x})", ts)
            f, vf = self._arm_let(dst, f"convert_tile({x})", ts)
            arms = [f"if {kind} == 8i32 {{ {a}{b}{nb} }}", f"if {kind} == 4i32 {{ {c}{nc} }}"]
            for d in self.narrow_kinds[dst]:
                arms.append(f"if {kind} == {INT_KINDS[d]}i32 {{ {a}{self._narrowed(wa, d, dst, ts, shape)} }}")
            self.emit(f"let {r}: Tile<{dst}, {ts}> = {' else '.join(arms)} else {{ {f}{vf} }};")
        else:  # a concrete integer (or bool) into a generic that may be one
            wide = self.tmp()
            to_i64 = x if src == "i64" else f"bitcast({x})" if src == "u64" else f"exti({x})"
            self.emit(f"let {wide}: Tile<i64, {ts}> = {to_i64};")
            self.emit(f"let {r}: Tile<{dst}, {ts}> = {{ {self._from_i64(wide, dst, shape)} }};")
        return r

    def _arm_let(self, ty: str, expr: str, ts: str) -> tuple[str, str]:
        """`let _vN: Tile<ty, ts> = expr; ` and its name: every value in a branch arm is typed by its `let`
        (the JIT infers no type there)."""
        n = self.tmp()
        return f"let {n}: Tile<{ty}, {ts}> = {expr}; ", n

    def _from_i64(self, w: str, dst: str, shape: tuple) -> str:
        """Rust block statements and tail turning the i64 tile `w` into `dst` (a concrete type or a generic of
        int_kinds)."""
        ts = f"{{ [{dim_list(shape)}] }}"
        if dst == "i64":
            return w
        if dst == "bool":
            z, nz = self._arm_let("i64", f"constant(0i64, {shape_macro(shape)})", ts)
            c, nc = self._arm_let("bool", f"cmpi({w}, {nz}, predicate::NotEqual)", ts)
            return f"{z}{c}{nc}"
        if _int_kind(dst):  # narrowing: exact for values that fit (ids, counts, offsets); see README
            t, nt = self._arm_let(dst, f"trunci({w}, overflow::NoSignedWrap)", ts)
            return f"{t}{nt}"
        if dst not in self.int_kinds:
            f, nf = self._arm_let(dst, f"convert_tile({w})", ts)
            return f"{f}{nf}"
        kind = self.int_kinds[dst]
        a, na = self._arm_let(dst, f"bitcast({w})", ts)
        t, nt = self._arm_let("i32", f"trunci({w}, overflow::NoSignedWrap)", ts)
        b, nb = self._arm_let(dst, f"bitcast({nt})", ts)
        f, nf = self._arm_let(dst, f"convert_tile({w})", ts)
        arms = [f"if {kind} == 8i32 {{ {a}{na} }}", f"if {kind} == 4i32 {{ {t}{b}{nb} }}"]
        arms += [f"if {kind} == {INT_KINDS[d]}i32 {{ {self._narrowed(w, d, dst, ts, shape)} }}"
                 for d in self.narrow_kinds[dst]]
        return f"{' else '.join(arms)} else {{ {f}{nf} }}"

    def _narrowed(self, w: str, d: str, dst: str, ts: str, shape: tuple) -> str:
        """Rust block statements and tail turning the i64 tile `w` into the generic `dst` holding the narrow
        integer `d` as Triton's store converts to it: its low bits (wrapping, exact for every value) or, for a
        bool, `!= 0`."""
        if d == "bool":
            z, nz = self._arm_let("i64", f"constant(0i64, {shape_macro(shape)})", ts)
            c, nc = self._arm_let(d, f"cmpi({w}, {nz}, predicate::NotEqual)", ts)
            pre = z
        else:  # (cuTile Rust writes no trunci without an overflow flag: the value is brought into range first)
            if d == "u8":  # the low byte
                k, nk = self._arm_let("i64", f"constant(255i64, {shape_macro(shape)})", ts)
                m, low = self._arm_let("i64", f"{w} & {nk}", ts)
                pre = k + m
            else:  # the low 16 bits, sign-extended
                k, nk = self._arm_let("i64", f"constant(48i64, {shape_macro(shape)})", ts)
                h, nh = self._arm_let("i64", f"{w} << {nk}", ts)
                m, low = self._arm_let("i64", f"{nh} >> {nk}", ts)
                pre = k + h + m
            flag = "NoUnsignedWrap" if d.startswith("u") else "NoSignedWrap"
            c, nc = self._arm_let(d, f"trunci({low}, overflow::{flag})", ts)
        # typed as the generic by the JIT's identity conversion (no op; Tile IR has no bitcast of i1)
        b, nb = self._arm_let(dst, f"convert_tile({nc})", ts)
        return f"{pre}{c}{b}{nb}"

    def convert_step(self, src: TileTy, e: Op) -> str | None:
        """The named step that converts a scalar of `src` to `e`'s scalar type, where one writes exactly the ops
        `int_convert` gives (`i64_from_i32`: scalar_to_tile, exti, tile_to_scalar), else None."""
        if not (src.is_scalar and e.ty.is_scalar):
            return None
        step = f"{e.ty.dtype}_from_{src.dtype}"
        expected = {"i64_from_i32": "exti(x)", "i32_from_i64": "trunci(x, overflow::NoSignedWrap)"}.get(step)
        if expected is None or self.int_convert("x", src.dtype, e.ty.dtype, (), e) != expected:
            return None
        self.steps.add(step)
        return step

    def int_convert(self, x: str, src: str, dst: str, shape: tuple, e: Op | None = None) -> str:
        """Integer/bool conversions as cuTile Python encodes them (_ir2bytecode.convert_dtype): to bool
        `x != 0` (cmpi), widening and from bool `exti` (signedness of the source, inferred alike by cuTile
        Rust); narrowing (`trunci` without overflow flags) and same-width sign changes have no form (CT120)."""
        if dst == "bool":
            z = self.tmp()
            self.emit(f"let {z}: Tile<{src}, {{ [{dim_list(shape)}] }}> = constant(0{src}, {shape_macro(shape)});")
            return f"cmpi({x}, {z}, predicate::NotEqual)"
        sbits, dbits = _int_bits(src), _int_bits(dst)
        if src == "bool" or sbits < dbits:
            return f"exti({x})"
        pos = e.pos if e is not None else self.k.pos
        if sbits > dbits and (self.k.frontend == "triton" or (e is not None and e.attr("truncate"))):
            # Triton's narrowing (and a Triton loop bound, see Infer, For): exact for values that fit (Triton
            # wraps the others; no-signed-wrap leaves them undefined); there is no cuTile Python IR to match
            # (an unsigned destination: no unsigned wrap, exact for the values 0 .. 2^bits - 1 it holds)
            flag = "NoUnsignedWrap" if dst.startswith("u") else "NoSignedWrap"
            return f"trunci({x}, overflow::{flag})"
        if sbits == dbits and self.k.frontend == "triton":  # Triton reinterprets the bits (int32 <-> uint32)
            return f"bitcast({x})"
        if sbits > dbits:
            raise fail("CT120", f"a narrowing conversion {src} -> {dst}: cuTile Python emits `trunci` without "
                       "overflow flags, which cuTile Rust 0.5.0 cannot write (`convert` has no int -> int form, "
                       "and `trunci(x, overflow::None)` fails to serialize: missing attribute 'overflow'); keep "
                       "the value in the wider type", pos)
        raise fail("CT120", f"a conversion {src} -> {dst} (same width, other signedness): cuTile Python emits no "
                   "op for it and cuTile Rust has only `bitcast`, which is an op", pos)

    def bcast(self, name: str, elem: str, shape: tuple) -> str:
        """A rank-0 tile spread over `shape` (reshape to all-ones, then broadcast)."""
        if not shape:
            return name
        ones = ("1",) * len(shape)
        r, t = self.tmp(), self.tmp()
        self.emit(f"let {r}: Tile<{elem}, {{ [{dim_list(ones)}] }}> = reshape({name}, {shape_macro(ones)});")
        if tuple(shape) == ones:  # no identity broadcast (cuTile Python writes none)
            return r
        self.emit(f"let {t}: Tile<{elem}, {{ [{dim_list(shape)}] }}> = broadcast({r}, {shape_macro(shape)});")
        return t

    def u64_scalar(self, name: str) -> str:
        """An i32 scalar sign-extended to a rank-0 u64 tile (index math is 64-bit and unsigned)."""
        t, u = self.tmp(), self.tmp()
        self.emit(f"let {t}: Tile<i32, {{ [] }}> = scalar_to_tile({name});")
        self.emit(f"let {u}: Tile<u64, {{ [] }}> = exti({t});")
        return u

    def pointer_op(self, e: Op) -> str:
        """gather / scatter / atomics: the pointer-tile chain cuTile Python builds (64-bit unsigned index
        math, per-dimension bounds masks, offsets summed in dimension order)."""
        arr, index, mask = e.args[0], e.args[1], e.args[2]
        shape = e.ty.shape if e.ty is not None else e.args[3].ty.shape
        ts = f"{{ [{dim_list(shape)}] }}"
        address = isinstance(arr, Op) and arr.op == "int_to_ptr"
        if address:  # a pointer loaded from memory (TTR-PTRCAST): no parameter, no extents
            p = Param("__address", "array", arr.pos, dtype=arr.attr("dtype"), rank=1, pointer=True, flat=True)
            n = "__address"
        else:
            p = self.pointer_arrays.get(arr.id) or self.span_inputs.get(arr.id) or self.read_outputs[arr.id]
            n = rust_ident(arr.id)
        # a read-only span, or an output's own tile read in place: `*const`
        pk = "*const" if not address and (arr.id in self.span_inputs or arr.id in self.read_outputs) else "*mut"
        if e.attr("elem"):  # the parameter read as another element type: its cast base stands for the array
            p = replace(p, dtype=e.attr("elem"))
        bounds, offs = [], []
        for d, it in enumerate(index.items):
            src = self.tile(it)
            if e.attr("flat"):  # a Triton pointer: the element offsets as computed (i32 or i64), no bounds
                offs.append(src)
                continue
            u = self.tmp()
            # an i64 index is used as is by cuTile Python (unsigned compares): a u64 view of the same bits
            # (`bitcast` i64 -> i64, an identity); an i32 index is sign-extended
            widen = "bitcast" if it.ty.dtype in ("i64", "u64") else "exti"
            self.emit(f"let {u}: Tile<u64, {{ [{dim_list(it.ty.shape)}] }}> = {widen}({src});")
            if it.ty.shape != shape:
                ext = ("1",) * (len(shape) - len(it.ty.shape)) + it.ty.shape
                if ext != it.ty.shape:
                    r = self.tmp()
                    self.emit(f"let {r}: Tile<u64, {{ [{dim_list(ext)}] }}> = reshape({u}, {shape_macro(ext)});")
                    u = r
                if ext != shape:
                    b = self.tmp()
                    self.emit(f"let {b}: Tile<u64, {ts}> = broadcast({u}, {shape_macro(shape)});")
                    u = b
            if e.attr("check_bounds", True):
                nb = self.bcast(self.u64_scalar(self.extents[n][0][d]), "u64", shape)
                m = self.tmp()
                self.emit(f"let {m}: Tile<bool, {ts}> = cmpi({u}, {nb}, predicate::LessThan);")
                bounds.append(m)
            if d == p.rank - 1:
                st = self.tmp()
                self.emit(f"let {st}: Tile<u64, {ts}> = constant(1u64, {shape_macro(shape)});")
            else:
                st = self.bcast(self.u64_scalar(self.extents[n][1][d]), "u64", shape)
            o = self.tmp()
            self.emit(f"let {o}: Tile<u64, {ts}> = {u} * {st};")
            offs.append(o)
        # masks and offsets of the dimensions combined in dimension order (no bounds masks: check_bounds=False)
        cur_m = bounds[0] if bounds else None
        cur_o = offs[0] if offs else None  # None: a 0-d array, whose base pointer is the element
        for d in range(1, len(offs)):
            if bounds:
                nm = self.tmp()
                self.emit(f"let {nm}: Tile<bool, {ts}> = {cur_m} & {bounds[d]};")
                cur_m = nm
            no = self.tmp()
            self.emit(f"let {no}: Tile<u64, {ts}> = {cur_o} + {offs[d]};")
            cur_o = no
        base_shape: tuple = ()
        if address:
            addr = arr.args[0]
            base_shape = tuple(addr.ty.shape)
            pt = self.tmp("p")
            self.emit(f"let {pt}: PointerTile<*mut {p.dtype}, {{ [{dim_list(base_shape)}] }}> = "
                      f"int_to_ptr({self.tile(addr)});")
        elif e.attr("elem"):
            pt = self.cast_base[(p.name, e.attr("elem"))]
        elif p.name in self.flat_base:
            pt = self.flat_base[p.name]
        else:
            pt = self.tmp("p")
            self.emit(f"let {pt}: PointerTile<*mut {p.dtype}, {{ [] }}> = pointer_to_tile({n});")
        if base_shape and tuple(shape) != base_shape:  # a tile of addresses broadcast to the access's shape
            ext = ("1",) * (len(shape) - len(base_shape)) + base_shape
            if ext != base_shape:
                pr = self.tmp("p")
                self.emit(f"let {pr}: PointerTile<{pk} {p.dtype}, {{ [{dim_list(ext)}] }}> = reshape_ptr({pt}, {shape_macro(ext)});")
                pt = pr
            pb = self.tmp("p")
            self.emit(f"let {pb}: PointerTile<{pk} {p.dtype}, {ts}> = broadcast_ptr({pt}, {shape_macro(shape)});")
            pt = pb
        elif shape and not base_shape:
            ones = ("1",) * len(shape)
            pr, pb = self.tmp("p"), self.tmp("p")
            self.emit(f"let {pr}: PointerTile<{pk} {p.dtype}, {{ [{dim_list(ones)}] }}> = reshape_ptr({pt}, {shape_macro(ones)});")
            if tuple(shape) == ones:  # no identity broadcast (cuTile Python writes none)
                pt = pr
            else:
                self.emit(f"let {pb}: PointerTile<{pk} {p.dtype}, {ts}> = broadcast_ptr({pr}, {shape_macro(shape)});")
                pt = pb
        if cur_o is None:
            ptrs = pt
        else:
            ptrs = self.tmp("p")
            self.emit(f"let {ptrs}: PointerTile<{pk} {p.dtype}, {ts}> = addptr_tile({pt}, {cur_o});")
        if mask is not None:
            # a scalar mask (`mask=pid > 0`) is a Rust bool: the access takes a bool tile of its shape
            um = self.bcast(self.tile(mask), "bool", tuple(shape)) if mask.ty.is_scalar else self.value(mask)
            if cur_m is None:
                cur_m = um
            else:
                nm = self.tmp()
                self.emit(f"let {nm}: Tile<bool, {ts}> = {cur_m} & {um};")
                cur_m = nm
        lat = f"Latency::<{e.attr('latency', 0)}>"
        cur_m = "None" if cur_m is None else f"Some({cur_m})"
        ordered = (n if address else arr.id) in self.ordered
        access, store = f"{n}_tok_access", f"{n}_tok_store"
        if e.op == "gather":
            # a padding of a tile of rank >= 2 as a select after the load: cuTile Rust 0.5.0 reshapes a scalar
            # padding to rank 1 before broadcasting it (compile_cuda_tile_op.rs, load_ptr_tko), which is
            # invalid Tile IR there; normalizer rule N20 folds the select back into the load's padding
            select_pad = e.args[3] is not None and cur_m != "None" and len(shape) >= 2
            pad = "None" if e.args[3] is None or select_pad else f"Some({self.value(e.args[3])})"
            res, tok = self.tmp(), self.tmp("tok")
            if pk == "*const" and arr.id in self.read_outputs:
                self.emit("// unsafe: the program's own tile of the output, read through its address before the "
                          "store (ordered by the tokens), at offsets Rust cannot bound")
            elif pk == "*const":
                self.emit("// unsafe: the addresses are the kernel's offsets from the tensor's start, which Rust "
                          "cannot bound")
            self.emit(f"let ({res}, {tok}): (Tile<{p.dtype}, {ts}>, Token) = unsafe {{ load_ptr_tko({ptrs}, "
                      f"ordering::Weak, None::<scope::TileBlock>, {cur_m}, {pad}, "
                      f"{f'Some({store})' if ordered else 'None'}, {lat}) }};")
            if ordered:
                self.emit(f"{access} = join_tokens(&[{access}, {tok}]);")
            if select_pad:
                padt, sel = self.bcast(self.tile(e.args[3]), p.dtype, tuple(shape)), self.tmp()
                self.emit(f"let {sel}: Tile<{p.dtype}, {ts}> = select({cur_m[5:-1]}, {res}, {padt});")
                res = sel
            return self.scalar_result(e, res)
        value = self.tile(e.args[3])
        if e.op == "scatter":
            call = (f"unsafe {{ store_ptr_tko({ptrs}, {value}, ordering::Weak, None::<scope::TileBlock>, "
                    f"{cur_m}, {f'Some({access})' if ordered else 'None'}, {lat}) }}")
            if not ordered:
                return call
            tok = self.tmp("tok")
            self.emit(f"let {tok}: Token = {call};")
            self.emit(f"{access} = {tok};")
            self.emit(f"{store} = {tok};")
            return None
        is_float = p.dtype in FLOAT_DTYPES or (p.dtype in GENERIC and p.dtype not in self.int_kinds)  # an int pointer: i32
        unsigned = p.dtype.startswith("u")
        res, tok = self.tmp(), self.tmp("tok")
        order = f"{e.attr('memory_order', 'ordering::AcqRel')}, {e.attr('memory_scope', 'scope::Device')}"
        if e.op == "atomic_cas":
            cmp = self.tile(e.args[4])
            self.emit(f"let ({res}, {tok}): (Tile<{p.dtype}, {ts}>, Token) = unsafe {{ atomic_cas_tko({ptrs}, {cmp}, "
                      f"{value}, {order}, {cur_m}, {f'Some({access})' if ordered else 'None'}) }};")
        else:
            mode = {"atomic_add": "AddF" if is_float else "Add", "atomic_xchg": "Xchg",
                    "atomic_max": "Umax" if unsigned else "Max", "atomic_min": "Umin" if unsigned else "Min",
                    "atomic_and": "And", "atomic_or": "Or", "atomic_xor": "Xor"}[e.op]
            def call(mode: str) -> str:
                return (f"unsafe {{ atomic_rmw_tko({ptrs}, {value}, atomic::{mode}, {order}, {cur_m}, "
                        f"{f'Some({access})' if ordered else 'None'}) }}")
            typed = f"(Tile<{p.dtype}, {ts}>, Token)"
            rmw = call(mode)
            if e.op == "atomic_add" and p.dtype in self.int_kinds and any(d in FLOAT_DTYPES for d in p.domain):
                # a counter that may be int32 or a float (passes/domains._counters): the add of its dtype's kind
                # (each arm's value typed by its `let`: the JIT infers no type in a branch)
                arms = []
                for m in ("Add", "AddF"):
                    r, t = self.tmp(), self.tmp("tok")
                    arms.append(f"let ({r}, {t}): {typed} = {call(m)}; ({r}, {t})")
                rmw = f"if {self.int_kinds[p.dtype]} == 4i32 {{ {arms[0]} }} else {{ {arms[1]} }}"
            self.emit(f"let ({res}, {tok}): {typed} = {rmw};")
        if ordered:
            self.emit(f"{access} = {tok};")
            self.emit(f"{store} = {tok};")
        return self.scalar_result(e, res)

    def _unary(self, e: Op, x: str) -> str:
        o = e.op
        ftz = "ftz::Enabled" if e.attr("ftz") else "ftz::Disabled"
        if o == "exp2":
            return f"exp2({x}, {ftz})"
        if o == "sqrt":
            return f"sqrt({x}, rounding::{e.attr('rounding') or 'NearestEven'}, {ftz})"
        if o in ("exp", "tanh") and e.attr("rounding"):
            return f"unsafe {{ {o}_with_rounding({x}, rounding::{e.attr('rounding')}) }}"
        if o == "rsqrt":
            return f"rsqrt({x}, {ftz})"
        if o == "abs":
            return f"absf({x})" if (e.ty.dtype in FLOAT_DTYPES or e.ty.dtype in GENERIC) else f"absi({x})"
        return f"{o}({x})"

    @staticmethod
    def scalar_i32(e: Op) -> bool:
        return all(v.ty is not None and v.ty.is_scalar and v.ty.dtype == "i32" for v in (e, *e.args[:2]))

    def known_divisor(self, e: Op) -> bool:
        """A literal or ct.Constant divisor: cuTile Python folds the sign test (see modulo)."""
        divisor = e.args[1].args[0] if isinstance(e.args[1], Op) and e.args[1].op == "const_tile" else e.args[1]
        p = self.k.param(divisor.id) if isinstance(divisor, Name) else None
        return isinstance(divisor, Lit) or (p is not None and p.kind == "const")

    def modulo(self, e: Op, x: str, y: str) -> str:
        """Python's `%` (result takes the divisor's sign), op for op as cuTile Python lowers it."""
        dt, shape = e.ty.dtype, e.ty.shape
        tt = f"Tile<{dt}, {{ [{dim_list(shape)}] }}>"
        bt = f"Tile<bool, {{ [{dim_list(shape)}] }}>"
        names = [self.tmp() for _ in range(8)]
        r, z, c1, c2, x1, c3, m, s = names
        self.emit(f"let {r}: {tt} = remi({x}, {y});")
        self.emit(f"let {z}: {tt} = constant(0{dt}, {shape_macro(shape)});")
        self.emit(f"let {c1}: {bt} = cmpi({r}, {z}, predicate::LessThan);")
        divisor = e.args[1].args[0] if isinstance(e.args[1], Op) and e.args[1].op == "const_tile" else e.args[1]
        const_div = (isinstance(divisor, Name) and e.ty.is_scalar and self.k.param(divisor.id) is not None
                     and self.k.param(divisor.id).kind == "const")
        if isinstance(divisor, Lit) and divisor.value >= 0 and e.ty.is_scalar:
            # cuTile Python folds the sign test of a literal divisor to `false` and keeps `xori c1, false`;
            # cuTile Rust 0.5.0 encodes constant(false) as true, so the identity xori is left out
            # (normalizer rule N13 drops it on the Python side).
            self.emit(f"let {x1}: {bt} = {c1};")
        elif const_div:
            # a ct.Constant divisor: cuTile Python knows its value and folds the sign test as for a literal;
            # the const `if` on the generic is decided when cuTile Rust compiles the entry
            self.emit(f"let {c2}: {bt} = constant(true, {shape_macro(shape)});")
            self.emit(f"let {x1}: {bt} = if {self.rust_name(divisor.id)} >= 0i32 {{ {c1} }} else {{ xori({c1}, {c2}) }};")
        else:
            if isinstance(divisor, Lit) and e.ty.is_scalar:
                self.emit(f"let {c2}: {bt} = constant(true, {shape_macro(shape)});")
            else:
                self.emit(f"let {c2}: {bt} = cmpi({y}, {z}, predicate::LessThan);")
            self.emit(f"let {x1}: {bt} = xori({c1}, {c2});")
        self.emit(f"let {c3}: {bt} = cmpi({r}, {z}, predicate::NotEqual);")
        self.emit(f"let {m}: {bt} = andi({x1}, {c3});")
        self.emit(f"let {s}: {tt} = {r} + {y};")
        return self.scalar_result(e, f"select({m}, {s}, {r})")


# a Triton pointer generic's kind: the value of the `__E_INT` const generic its port takes (int_dispatch), which
# the C symbol sets from the dtype (`abi::int_kind`, rendered from this table): the integer it holds (0: a float)
INT_KINDS = {"i64": 8, "i32": 4, "i16": 2, "u8": 1, "bool": -1}


def int_kind_name(generic: str) -> str:
    """The const generic holding a Triton pointer generic's kind (reserved: parameters cannot start with `__`)."""
    return f"__{generic}_INT"


def _int_kind(dt: str) -> bool:
    return dt in INT_DTYPES or dt == "bool"


def _int_bits(dt: str) -> int:
    return 1 if dt == "bool" else int(dt[1:])


def _wide_u32(e: Lit, dt: str) -> bool:
    return dt == "u32" and not isinstance(e.value, float) and 2**31 <= int(e.value) < 2**32


def _int_lit(e: Lit, dt: str, in_constant: bool = False) -> str:
    """An integer literal of `dt`. `in_constant`: the value of a `constant(..)` op, which the JIT reads at its
    own width (an i64 beyond i32 verified: tests/robustness/test_rust_build_classes.py k_i64_tile_const)."""
    if isinstance(e.value, float) and not math.isfinite(e.value):
        raise fail("CT121", f"the constant {e.value} has no {dt} value", e.pos)
    v = int(e.value)
    bits = _int_bits(dt)
    lo, hi = (0, 2**bits - 1) if dt.startswith("u") else (-2**(bits - 1), 2**(bits - 1) - 1)
    if not lo <= v <= hi:
        raise fail("CT121", f"integer constant {v} is out of range of {dt} [{lo}, {hi}] (cuTile Python rejects it "
                   "too); use a wider dtype or a constant that fits", e.pos)
    if in_constant and dt == "u64" and v >= 2**63:
        # the JIT parses a constant's digits as an i64 for a u64 tile (compile_expression.rs encode_literal_bytes,
        # `unwrap_or(0)`): past i64::MAX it would silently be 0
        raise fail("CT121", f"the u64 constant {v} has no Rust form: cuTile Rust 0.5.0 reads a u64 constant's digits "
                   "as an i64 and takes 0 for one past i64::MAX; write it as an int64 constant and bitcast", e.pos)
    if not -2**31 <= v < 2**31 and not in_constant:
        # (a u32 one is written as its int32 bits, bitcast: Lowering.u32_const)
        raise fail("CT121", f"the {dt} constant {v} has no Rust form: cuTile Rust 0.5.0 reads every integer literal "
                   "as an i32 (compile_expression.rs, `base10_parse::<i32>`, a panic for a wider one)",
                   e.pos)
    if v == -2**31:  # that reading takes `-2147483648` as the negation of 2147483648, past i32: a panic
        return f"(-2147483647{dt} - 1{dt})"
    return f"{v}{dt}"


_READS = ("gather", "load", "load_advanced")
_WRITES = ("scatter", "store", *RMW_OPS, "view_atomic_add")


def view_key(e: Op) -> tuple:
    """What makes two view accesses share one tensor view: the pointer, the extents and the strides."""
    from ..model.dump import expr_text
    return (e.args[0].id, tuple(expr_text(d) for d in e.args[1].items), tuple(expr_text(s) for s in e.args[2].items))


def _access_key(a) -> str | None:
    """The array an access goes to, for token order: a parameter (or the one a view was cut from); every pointer
    loaded from memory (TTR-PTRCAST) as one array `__address` (they may alias one another)."""
    if isinstance(a, Op) and a.op == "int_to_ptr":
        return "__address"
    return array_root(a) if isinstance(a, Name) else None


def ordered_arrays(body, checked: set[str], parallel_loop_stores: bool = False) -> set[str]:
    """Arrays whose accesses need token order to match cuTile Python: written, and also read or updated by
    an atomic, or written more than once (two stores, or one in a loop: a program's stores to one address
    land in program order in cuTile Python and Triton; unordered, Tile IR may let the earlier store win,
    seen on the GPU; N17 compares it). Arrays stored through a checked `&mut Tensor` partition are left to
    cuTile Rust (they are not read). `parallel_loop_stores` (cuTile Python): a loop's only access to an
    array, a tile store indexed by the loop variable, writes a new tile each trip and is not chained
    (cuTile Python's token_order pass, `_get_parallel_stores`)."""
    from ..model.walk import walk_exprs
    ops: dict[str, set[str]] = {}
    for e in walk_exprs(body):
        if isinstance(e, Op) and e.op in _READS + _WRITES and e.args and _access_key(e.args[0]):
            ops.setdefault(_access_key(e.args[0]), set()).add(e.op)
    writes = _write_counts(body, parallel_loop_stores)
    return {a for a, kinds in ops.items()
            if a not in checked and kinds & set(_WRITES) and (kinds - {"scatter", "store"} or writes.get(a, 0) > 1)}


def _write_counts(stmts, parallel_loop_stores: bool = False) -> dict[str, int]:
    """How many writes each array may receive along one path through `stmts` (2 for any in a loop body: at
    least two iterations, except a parallel loop store, see `ordered_arrays`; an `if` counts its busier arm)."""
    from ..model.walk import sub_exprs
    out: dict[str, int] = {}

    def add(counts: dict[str, int], times: int = 1) -> None:
        for a, n in counts.items():
            out[a] = out.get(a, 0) + n * times
    for st in stmts:
        heads = ((st.value,) if isinstance(st, (Assign, Eval)) else (st.start, st.stop, st.step)
                 if isinstance(st, For) else (st.cond,) if isinstance(st, (If, While)) else ())
        for e in (x for h in heads for x in sub_exprs(h)):
            if isinstance(e, Op) and e.op in _WRITES and e.args and _access_key(e.args[0]):
                add({_access_key(e.args[0]): 1})
        if isinstance(st, (For, While)):
            inner = _write_counts(st.body, parallel_loop_stores)
            parallel = _parallel_stores(st) if parallel_loop_stores and isinstance(st, For) else set()
            for a, n in inner.items():
                add({a: n}, 1 if a in parallel else 2)
        elif isinstance(st, If):
            arms = (_write_counts(st.body, parallel_loop_stores), _write_counts(st.orelse, parallel_loop_stores))
            add({a: max(arm.get(a, 0) for arm in arms) for a in set(arms[0]) | set(arms[1])})
    return out


def _parallel_stores(loop: For) -> set[str]:
    """Arrays whose only access in the loop (its own statements, none nested) is one tile `store` with the
    loop variable as an index: cuTile Python does not chain such a store across trips."""
    from ..model.walk import sub_exprs, walk_exprs
    direct: dict[str, list[Op]] = {}
    nested: set[str] = set()
    for st in loop.body:
        exprs = [x for h in ((st.value,) if isinstance(st, (Assign, Eval)) else ()) for x in sub_exprs(h)]
        for e in exprs:
            if isinstance(e, Op) and e.op in _READS + _WRITES and e.args and isinstance(e.args[0], Name):
                direct.setdefault(array_root(e.args[0]), []).append(e)
        if not isinstance(st, (Assign, Eval)):
            nested |= {array_root(e.args[0]) for e in walk_exprs((st,))
                       if isinstance(e, Op) and e.op in _READS + _WRITES and e.args and isinstance(e.args[0], Name)}
    return {a for a, ops in direct.items()
            if a not in nested and len(ops) == 1 and ops[0].op == "store" and len(ops[0].args) > 1
            and isinstance(ops[0].args[1], TupleExpr)
            and any(isinstance(i, Name) and i.id == loop.var for i in ops[0].args[1].items)}


def _mutable_vars(body) -> set[str]:
    """Variables assigned again in a block nested below the one that declared them."""
    decl: dict[str, int] = {}
    mutable: set[str] = set()
    counter = [0]

    def walk(stmts, block_id: int, outer: set[int]) -> None:
        for s in stmts:
            if isinstance(s, Assign):
                n = rust_ident(s.targets[0])
                if n in decl and decl[n] in outer and decl[n] != block_id:
                    mutable.add(n)
                elif n not in decl or decl[n] not in outer | {block_id}:
                    decl[n] = block_id
            elif isinstance(s, For):
                counter[0] += 1
                decl[rust_ident(s.var)] = counter[0]
                walk(s.body, counter[0], outer | {block_id})
            elif isinstance(s, While):
                counter[0] += 1
                walk(s.body, counter[0], outer | {block_id})
            elif isinstance(s, If):
                for b in (s.body, s.orelse):
                    counter[0] += 1
                    walk(b, counter[0], outer | {block_id})

    walk(body, 0, set())
    return mutable


_TMP_ROLES = {"pv": "part", "pm": "part", "tok": "tok", "shape": "shape", "p": "ptrs",
              "raw": "raw", "typed": "typed", "off": "off", "offt": "off_t", "off64": "off64", "base": "base",
              "len": "len", "view": "view", "dims": "dims", "strides": "strides", "one": "one"}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _chain(e, op: str) -> list:
    """The operands of a chain of one boolean operator (`a or b or c`, nested either way), in order."""
    if isinstance(e, Op) and e.op == op:
        return [x for a in e.args for x in _chain(a, op)]
    return [e]


def _stmt_base(s) -> str:
    """What a statement's temporaries are named after: its target, the array a store writes, the op of another
    expression statement, the loop variable; `cond` for a branch or a `while`."""
    if isinstance(s, Assign):
        return s.targets[0]
    if isinstance(s, Eval):
        a = s.value.args[0] if s.value.args else None
        if isinstance(a, Name) and isinstance(a.ty, ArrayTy):  # a store, scatter or atomic: the array written
            return a.id
        return s.value.op
    if isinstance(s, For):
        return s.var
    return "cond"


def _base_name(name: str) -> str:
    return name.strip("_").lower() or "t"


def _letters(i: int) -> str:
    """1 -> a, 26 -> z, 27 -> aa: a temporary's suffix."""
    out = ""
    while i > 0:
        i, r = divmod(i - 1, 26)
        out = chr(ord("a") + r) + out
    return out


def _kernel_names(k: Kernel) -> set[str]:
    """Every name the kernel's Rust may use for its own values, so no temporary shadows one."""
    names = {p.name for p in k.params} | {n for n, _ in k.derived} | assigned_names(k.body)
    for s in all_stmts(k.body):
        if isinstance(s, If):
            names.update(n for n, _ in s.declares)
    out = set()
    for n in names:
        out |= {n, rust_ident(n)}
    for p in k.params:  # a pointer's shape and stride parameters
        out |= {f"{rust_ident(p.name)}_shape{i}" for i in range(8)} | {f"{rust_ident(p.name)}_stride{i}" for i in range(8)}
    for shapes, strides in pointer_extents(k).values():
        out.update(shapes + strides)
    return out


def pointer_extents(kernel: Kernel) -> dict[str, tuple[list[str], list[str]]]:
    """Each pointer parameter's shape and stride parameter names (the C symbol labels them the same way)."""
    return extent_names([(rust_ident(p.name), p.rank) for p in kernel.params if p.kind == "array" and p.pointer],
                        {rust_ident(p.name) for p in kernel.params})


def lower_kernel(kernel: Kernel) -> EntryView:
    extents = pointer_extents(kernel)
    # a local named like a derived name (`src_stride0`, `x_view`, ...) is renamed, so neither hides the other
    reserved = {e for shapes, strides in extents.values() for e in shapes + strides}
    reserved |= {f"{rust_ident(p.name)}_{s}" for p in kernel.params if p.kind == "array" for s in VIEW_LOCALS}
    kernel = rename_rebound_constants(kernel, rust_ident)
    return Lowerer(rename_locals(kernel, reserved, rust_ident), extents).entry()
