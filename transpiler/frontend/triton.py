"""Triton frontend: LibCST source -> the same typed model the cuTile Python frontend produces.

Triton's meaning ends here (DESIGN.md, "Two frontends, one model"):
- `//` and `%` are C's truncating division and remainder: the model ops `truncdiv` / `truncmod`.
- Pointers do not exist in the model. A pointer parameter is a flat array (rank 1, elements addressed by
  offset from its base); a pointer value `base + offsets` is carried as its integer offsets, so pointer
  arithmetic, loop-advanced pointers (`ptrs += BLOCK_K * stride`) and `[:, None]` broadcasts are integer
  tile arithmetic the passes already type. `tl.load` / `tl.store` / atomics become element accesses
  (`gather` / `scatter` / `atomic_*` with `flat=True`) of the base array at those offsets, with Triton's mask.
- `tl.load(..., other=v)` is the masked load followed by a select (Triton's `other` is a value, not padding),
  and `tl.store` converts the value to the pointer's element type, as Triton does.
- `tl.constexpr` parameters are compile-time constants (const generics); their type (int, bool, float)
  comes from their default and the literal values launch sites and autotune configs give.

Fail-closed like the cuTile frontend: anything not understood is a diagnostic with a code and position.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import libcst as cst

from ..diagnostics import Diagnostic, TranspileError, fail
from ..model.walk import sub_exprs
from ..model.ir import (RMW_OPS, DOT_PRECISIONS, Assign, Break, Continue, Eval, Expr, If, Lit, Name, Op, Param, Pos,
                        TupleExpr)
from ..rules import RuleTable, load, triton_dtype_queries
from .common import FileResult, Converter, arm_then, name_text, node_code, one_line, parse_source, walk_nodes
from .helper_returns import static_false
from . import pointer_arms, ptx
from .combine import combine_operator, pair_selection
from .pointer_arms import ArmBases
from .module_config import UNDECIDED
from .module_consts import module_const_value
from .module_strings import call_value
from .constexpr_arms import split_constexpr_arms
from .platform import NO_FACT, platform_value

TL = "triton.language"
# integer operators Triton computes on Python ints (constexprs) when it compiles
_INT_FOLDS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "//": lambda a, b: a // b,
              "%": lambda a, b: a % b}
# the Triton version the port targets (rules/triton_dir_3.6.txt, rules/triton_language_3.6.txt): module-level tests
# of `triton.__version__` are decided for it
TRITON_VERSION = "3.6.0"
VERSION_PARSERS = frozenset({"packaging.version.parse", "packaging.version.Version", "pkg_resources.parse_version"})


@functools.lru_cache(maxsize=1)
def triton_namespace() -> frozenset[str]:
    """rules/triton_dir_3.6.txt: every attribute of Triton 3.6's `triton` and `triton.language`."""
    from ..rules import RULES_DIR
    lines = (RULES_DIR / "triton_dir_3.6.txt").read_text().splitlines()
    return frozenset(ln.strip() for ln in lines if ln.strip() and not ln.startswith("#"))


@functools.lru_cache(maxsize=1)
def libdevice_shim_rule() -> tuple[frozenset[str], str]:
    """rules/triton_compat.toml's libdevice shim: (libdevice's homes across Triton versions, the module a shim is
    ported as)."""
    import tomllib

    from ..rules import RULES_DIR
    data = tomllib.loads((RULES_DIR / "triton_compat.toml").read_text())["libdevice_shim"]
    return frozenset(data["homes"]), data["ported_as"]


def _root_name(node: cst.BaseExpression) -> str | None:
    """`shim` of `shim.tanh` (the name an attribute chain starts from)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


TRITON_DTYPES = {
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16",
    "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "int1": "bool", "float8e4nv": "f8e4m3fn", "float8e5": "f8e5m2",
    "fp16": "f16", "bf16": "bf16", "fp32": "f32", "fp64": "f64",
}
# decorators that wrap a @triton.jit function without changing its body (configs are the launcher's)
WRAPPERS = ("triton.autotune", "triton.heuristics", "triton.runtime.autotune", "triton.runtime.heuristics",
            "triton.runtime.autotuner.autotune", "triton.runtime.autotuner.heuristics")
JIT = ("triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit")
MEMORY_CALLS = {f"{TL}.load", f"{TL}.store", f"{TL}.atomic_add", f"{TL}.atomic_max", f"{TL}.atomic_min",
                f"{TL}.atomic_xchg", f"{TL}.atomic_cas", f"{TL}.atomic_and", f"{TL}.atomic_or", f"{TL}.atomic_xor"}
HINT_CALLS = {f"{TL}.multiple_of", f"{TL}.max_contiguous", f"{TL}.max_constancy"}
# calls that only inform Triton's compiler (or its checker): no statement in the port
# (`tl.debug_barrier` orders a block's threads around in-place updates; a tile block has no threads to order, and
# the accesses of an array that is read and written are ordered by memory tokens, as cuTile Python orders them)
# (PDL's `gdc_wait` / `gdc_launch_dependents` order a grid after the previous one on the stream only when launched
# with programmatic dependent launch; the port's launches are plain stream-ordered, where both are no-ops)
NO_OP_CALLS = {f"{TL}.static_assert", f"{TL}.device_assert", f"{TL}.static_print", f"{TL}.device_print",
               f"{TL}.assume", f"{TL}.debug_barrier", f"{TL}.extra.cuda.gdc_wait",
               f"{TL}.extra.cuda.gdc_launch_dependents"}
# a `tl.static_range` of literal bounds is unrolled up to this many trips (Philox's rounds: 10); a longer one
# stays a loop (the Rust would grow with it)
MAX_UNROLLED_TRIPS = 32
# the name of the marker `raise` that ends a helper path without a `return` (helper_returns.py)
FALLS_THROUGH = "__helper_falls_through__"
INT_ONLY_NAMES = ("range", "builtins.range", f"{TL}.range", f"{TL}.static_range", f"{TL}.arange", f"{TL}.cdiv",
                  f"{TL}.program_id", f"{TL}.num_programs")
# atomic `sem=` / `scope=` values: cuTile Rust's ordering and scope markers
SEMANTICS = {"acq_rel": "ordering::AcqRel", "acquire": "ordering::Acquire", "release": "ordering::Release",
             "relaxed": "ordering::Relaxed"}
SCOPES = {"gpu": "scope::Device", "cta": "scope::TileBlock", "sys": "scope::System"}
# where a launch chooses them (a constexpr): the marker every other choice is a weaker form of
STRONGEST = {"sem": "ordering::AcqRel", "scope": "scope::System"}


# a dtype constant whose launch sites give no literal dtype takes one of these (one entry each)
DTYPE_CONST_DEFAULT = ("bf16", "f16", "f32")


class _DtypeName(str):
    """A `tl.float32`-like value at a launch site (the model's dtype name)."""


# Triton 3.6 dtypes with no cuTile Rust type (rules/triton_surface.toml refuses them as values in a kernel)
UNPORTED_TRITON_DTYPES = frozenset({"float8e4b15", "float8e4b8", "float8e5b16"})


def _host_call_name(value: cst.BaseExpression, home: cst.CSTNode) -> str | None:
    """The function a launch argument is the result of: `f(...)` itself, or a local of the launching function
    `home` assigned once, from `f(...)` (`dt = f(x)`, then `DTYPE=dt`). None for anything else."""
    if isinstance(value, cst.Name) and isinstance(home, cst.FunctionDef):
        sources = [n.value for n in walk_nodes(home) if isinstance(n, cst.Assign)
                   for t in n.targets if isinstance(t.target, cst.Name) and t.target.value == value.value]
        value = sources[0] if len(sources) == 1 else None
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
        return value.func.value
    return None


def _returns(node: cst.CSTNode) -> list[cst.Return]:
    """The `return` statements of a function body (not of functions or lambdas defined inside it)."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Return):
            out.append(n)
        elif not isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) or n is node:
            stack.extend(n.children)
    return out


@dataclass(frozen=True)
class _Desc:
    """A tensor descriptor while a kernel converts (`tl.make_tensor_descriptor`): a view of a pointer parameter
    with its extents, strides (the last 1) and block shape; `desc.load` / `desc.store` are its tile accesses."""
    base: str
    shape: tuple
    strides: tuple
    block: tuple
    padding: str
    pos: Pos
    # the element offset of the base from the pointer parameter (`A = A + bos * H * BT`, then a descriptor of A):
    # a scalar, the view made at the access from the offset pointer (passes/views.py descriptor)
    base_offset: Expr | None = None


@dataclass(frozen=True)
class _BlockPtr:
    """A block pointer while a kernel converts (`tl.make_block_ptr`, `tl.advance`): the source expressions of its
    base, shape, strides, offsets and block shape. A name holding one keeps them in locals (`<name>_bp_base`,
    `<name>_bp_off0`, ...), so an advance in a loop is a carried offset; a load or store through it is the
    element access Triton's own lowering makes (offsets + arange per axis times the strides, masked by
    `0 <= index < shape` on the `boundary_check` axes)."""
    base: object  # cst expression of a pointer
    shape: tuple
    strides: tuple
    offsets: tuple
    block: tuple


@dataclass(frozen=True)
class _Cast:
    """The base of a pointer parameter read as another element type (`p.to(tl.pointer_type(tl.int32))`): the
    same buffer, its offsets counting elements of `elem` (a model dtype)."""
    param: str
    elem: str

    def __str__(self) -> str:
        return f"{self.param}_as_{self.elem}"


@dataclass(frozen=True)
class _Addr:
    """The base of a pointer loaded from memory or computed (`tl.load(table + i).to(tl.pointer_type(T))`): an
    int64 address (a model Name holding it, once the pointer is assigned) and its element type `elem`."""
    addr: Expr
    elem: str

    def __str__(self) -> str:
        return f"{self.addr.id if isinstance(self.addr, Name) else 'addr'}_as_{self.elem}"


@dataclass(frozen=True)
class _Ptr:
    """A pointer value while a kernel converts: its base (a parameter's name, a parameter read as another element
    type `_Cast`, or an address `_Addr`) and its element offsets (None: the base itself). Never part of the
    model: statements store the offsets, memory calls read both."""
    base: "str | _Cast | _Addr"
    offsets: Expr | None
    pos: Pos


class _ArmChoice:
    """The pointer names an `if` (runtime condition, kernel level) binds to pointers into different tensors on its two
    paths: after it, each is a pointer chosen at run time (pointer_arms.py) whose arms are the two paths' bindings
    under the `if`'s condition, held in a local (`<name>_then`) before the `if`; the offsets are one local both paths
    assign (the name's own, or a new one each arm ends by assigning); a choice made inside an arm (an `elif` chain)
    has its condition locals set false on the other path. Only names read after the `if` are chosen, and only
    between bindings defined on both paths (ptr_live). Refused (poisoned, read after the `if`: CT100) where that is
    not exact: in a loop for a name bound before the `if` (a loop carries one binding), an address loaded in one
    arm, or an arm ending in a jump."""

    def __init__(self, conv, cond, start, then, other, pos, runtime: bool, live: tuple, arm_start: set, read_after):
        self.conv, self.cond, self.start, self.then, self.other, self.pos = conv, cond, start, then, other, pos
        self.runtime, self.live, self.arm_start, self.read_after = runtime, live, arm_start, read_after
        self.sel: str | None = None
        self.appended: tuple[list, list] = ([], [])
        self.defined: tuple[set, set] = (set(), set())

    def _condition(self, name: str):
        if not self.runtime:  # a constant: the same wherever it is read (the `if` stays the test it is)
            rules = set(self.conv.rules_used)
            truth = self.conv._truth(self.cond, self.pos)
            self.conv.rules_used.intersection_update(rules)  # (recorded where an access reads it: rules_of)
            return truth
        if self.sel is None:
            self.sel = self.conv._fresh_arm_local(f"{name}_then")
        return Name(self.sel, self.pos)

    def _allowed(self, name: str, bt, be, models: tuple) -> bool:
        if bt is None or be is None or bt[0] == be[0] or not self.read_after(name):
            return False  # (a name never read after the `if` needs no choice: the port stays as it was)
        if not all(m in live for m, live in zip(models, self.live)):  # bound on both paths
            return False
        if self.conv.loops and (name in self.start[1] or name in self.start[0]):
            return False
        start = self.start[1].get(self.start[0].get(name, name), (None,))[0]
        # an arm's loaded address (in a local only that path assigns) is not known on the other path (an arm's own
        # choice is: its condition locals are set false there, _define_elsewhere)
        return all(not isinstance(b, _Addr) or b == start for b in (bt[0], be[0]))

    def _define_elsewhere(self, bases: tuple) -> None:
        """The condition locals a choice made inside one arm reads (`elif` chains: the inner `if`'s), assigned false
        at the end of the other arm, so the choice is defined on both paths (its arms are masked off there by this
        `if`'s condition)."""
        for side, base in enumerate(bases):
            if isinstance(base, ArmBases):
                made = {n for c, _ in base.arms for n in pointer_arms.names_in(c)} & (self.conv.arm_locals
                                                                                       - self.arm_start)
                for n in sorted(made - self.defined[1 - side]):
                    self.defined[1 - side].add(n)
                    self.appended[1 - side].append(Assign((n,), Lit(False, self.pos), self.pos))

    def bound(self, name: str) -> bool:
        """A name new in both arms (one offsets local): chosen by the condition."""
        bt, be = self.then[1].get(name), self.other[1].get(name)
        if not self._allowed(name, bt, be, (name, name)) or bt[1] != be[1] or bt[1] is None:
            return False
        cond = self._condition(name)
        base = pointer_arms.chosen_bases(self.conv, cond, bt[0], be[0], self.pos)
        self._define_elsewhere((bt[0], be[0]))
        self.conv.ptr_vars[name] = (base, bt[1])
        self.conv.ptr_live.add(name)
        return True

    def rebound(self, name: str, mt: str, me: str) -> bool:
        """A name an arm rebinds to another tensor (its model names differ per path): a new model name whose
        offsets each arm assigns at its end."""
        bt, be = self.then[1].get(mt), self.other[1].get(me)
        if not self._allowed(name, bt, be, (mt, me)):
            return False
        conv = self.conv
        fresh = conv._fresh_arm_local(f"{name}_chosen")
        cond = self._condition(name)
        base = pointer_arms.chosen_bases(conv, cond, bt[0], be[0], self.pos)
        self._define_elsewhere((bt[0], be[0]))
        for appended, (b, off) in zip(self.appended, (bt, be)):
            appended.append(Assign((fresh,), Name(off, self.pos) if off is not None else Lit(0, self.pos), self.pos))
        conv.ptr_alias[name] = fresh
        conv.ptr_vars[fresh] = (base, fresh)
        conv.ptr_live.add(fresh)
        return True

    def statements(self, body: tuple, orelse: tuple) -> list:
        if self.sel is None and not any(self.appended):
            return [If(self.cond, body, orelse, self.pos)]
        if any(arm and isinstance(arm[-1], (Break, Continue)) for arm, extra in
               zip((body, orelse), self.appended) if extra):
            raise fail("CT100", "an `if` arm that binds a pointer into another tensor ends in a jump: the pointer "
                       "after the `if` is not chosen by its condition alone", self.pos)
        arms = (body + tuple(self.appended[0]), orelse + tuple(self.appended[1]))
        if self.sel is None:
            return [If(self.cond, *arms, self.pos)]
        return [Assign((self.sel,), self.conv._truth(self.cond, self.pos), self.pos), If(Name(self.sel, self.pos), *arms,
                                                                                        self.pos)]


def parse_triton_source(source: str, display: str, depth_limit: int, path: Path | None = None,
                        exact_positions: bool = True) -> FileResult:
    """The `@triton.jit` kernels of one source (frontend/source.py adds a module's cuTile Python kernels)."""
    return parse_source(source, display, load("triton"), depth_limit, path, exact_positions,
                        converter=_TritonConverter)


class _TritonConverter(Converter):
    discards_helper_results = True
    language = "triton"
    helper_returns_rewritten = True
    split_returning_ifs = True

    def _copy_arg(self, name: str, arg, pos: Pos) -> list:
        """A pointer argument whose parameter the helper advances (`state_ptr = state_ptr + h * stride`): a
        pointer local (its offsets) holding the argument's."""
        if isinstance(arg, _Ptr):
            local = self.local(name, pos)  # the helper's own name (never the kernel parameter it points into)
            # a parameter the helper only recasts (`p = p.to(tl.pointer_type(T))`) has no offsets to carry
            kept = arg.offsets is None and name in self._helper_cast_only()
            self.ptr_vars[local] = (arg.base, None if kept else local)
            self._live(local)
            self.subst[-1][name] = Name(local, pos)
            return [Assign((local,), arg.offsets if arg.offsets is not None else Lit(0, pos), pos)]
        if isinstance(arg, _BlockPtr):
            # a block pointer argument the helper advances (`k_ptrs = tl.advance(k_ptrs, ...)`): the helper's own
            # block pointer (its parts in its locals) starting from the argument's
            return self._assign_block_ptr(name, arg, pos)
        return super()._copy_arg(name, arg, pos)

    def _helper_cast_only(self) -> set[str]:
        """The innermost inlined helper's names that are only ever assigned pointer casts (_cast_only_names)."""
        if not self.inlining:
            return set()
        name = self.inlining[-1]
        fn = self.info.helpers.get(name) or self.info.kernels.get(name)
        return _cast_only_names(self.info.helper_home.get(name) or self, fn) if fn is not None else set()

    def _procedure_returns(self, stmts: list) -> list:
        """`return _fill_int8(...)` where `_fill_int8` returns nothing (the helper dispatches to procedures in
        constexpr `if` arms): the call as a statement, then a bare `return`; bare returns that end the helper
        (the last statement, or the last of an arm of a final `if`) are dropped. A helper left with no
        `return` is then a procedure, inlined where it is called as a statement."""
        if not any(isinstance(n, cst.Return) for st in stmts for n in walk_nodes(st)):
            return stmts
        conv = self

        def procedure_return(line) -> bool:
            return isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 \
                and isinstance(line.body[0], cst.Return) and isinstance(call := line.body[0].value, cst.Call) \
                and isinstance(call.func, cst.Name) and conv._is_procedure(call.func.value, ())

        class Split(cst.CSTTransformer):
            def leave_SimpleStatementLine(self, node, updated):
                if procedure_return(updated):
                    call = updated.body[0].value
                    return cst.FlattenSentinel([cst.SimpleStatementLine([cst.Expr(call)]),
                                                cst.SimpleStatementLine([cst.Return(None)])])
                return updated

            def visit_FunctionDef(self, node):
                return False

        # (a statement without such a return is kept as it is: a rebuilt node has no source position)
        stmts = [st.visit(Split()) if any(procedure_return(n) for n in walk_nodes(st)) else st for st in stmts]
        stmts = [x for st in stmts for x in (st.nodes if isinstance(st, cst.FlattenSentinel) else [st])]
        return _drop_tail_returns(stmts)

    def _is_procedure(self, name: str, active: tuple) -> bool:
        """A helper that returns no value on any path (a `return` of a call to another such helper included)."""
        fn = self.info.helpers.get(name)
        if fn is None or name in active:
            return False
        for n in walk_nodes(fn.body):
            if isinstance(n, cst.Return) and n.value is not None:
                v = n.value
                if not (isinstance(v, cst.Call) and isinstance(v.func, cst.Name)
                        and self._is_procedure(v.func.value, active + (name,))):
                    return False
        return True

    def _split_at_returning_if(self, s: cst.If, rest: list, before: list) -> list:
        truth = self._pointer_truth(s.test)  # `if not out_ptr: return`: the None test
        return super()._split_at_returning_if(s.with_changes(test=truth) if truth is not s.test else s, rest, before)

    # ------------------------------------------------------------------ module scan
    def _decorators(self, fn: cst.FunctionDef) -> list[cst.Decorator]:
        """fn's decorators, outermost first: those a module-level `fn = triton.jit(fn)` and the wrappings after it
        apply (`_scan_call_decorators`) above the ones written with `@`."""
        return getattr(self, "call_decorators", {}).get(fn.name.value, []) + list(fn.decorators)

    def _scan_call_decorators(self, module: cst.Module) -> None:
        """`f = triton.jit(f, do_not_specialize=...)`, then `f = triton.heuristics({...})(f)` (or autotune) at the
        module's top level after `def f` (unsloth's cross_entropy_loss, rope_embedding): the decorator syntax
        written as calls, which Python runs alike (`@d def f` is `f = d(f)`), so f is a kernel whose decorators
        are those calls, the later one outermost (a wrapping before the jit is below it: CT112, as with `@`)."""
        self.call_decorators: dict[str, list[cst.Decorator]] = {}
        defined: set[str] = set()
        for stmt in module.body:
            if isinstance(stmt, cst.FunctionDef):
                defined.add(stmt.name.value)
                self.call_decorators.pop(stmt.name.value, None)  # a new def: its own decorators only
                continue
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                dec = self._call_decorator(small, defined)
                if dec is not None:
                    name, d = dec
                    self.call_decorators[name] = [d] + self.call_decorators.get(name, [])

    def _call_decorator(self, small, defined: set[str]) -> tuple[str, cst.Decorator] | None:
        """(f, the decorator) of `f = triton.jit(f, **options)` or `f = wrapper(...)(f)` (triton.autotune,
        triton.heuristics, a library's autotuner); None for any other statement."""
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
                and isinstance(small.value, cst.Call) and small.value.args):
            return None
        name, call = small.targets[0].target.value, small.value
        first, rest = call.args[0], call.args[1:]
        if name not in defined or first.keyword is not None or first.star or \
                not (isinstance(first.value, cst.Name) and first.value.value == name):
            return None
        if self.dotted(call.func) in JIT:
            options = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) if i == len(rest) - 1 else a
                       for i, a in enumerate(rest)]
            return name, cst.Decorator(cst.Call(call.func, options) if options else call.func)
        if not rest and isinstance(call.func, cst.Call):
            d = cst.Decorator(call.func)
            if self.dotted(call.func.func) in WRAPPERS or self._library_autotuner(d):
                return name, d
        return None

    def _jit_target(self, d: cst.Decorator) -> bool:
        return self.dotted(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) in JIT

    def _kernel_decorator(self, fn: cst.FunctionDef) -> cst.Decorator | None:
        for d in self._decorators(fn):
            if self._jit_target(d):
                return d
        return None

    def _wrappers(self, fn: cst.FunctionDef) -> list[cst.Decorator]:
        out = []
        for d in self._decorators(fn):
            target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
            if self.dotted(target) in WRAPPERS or self._library_autotuner(d):
                out.append(d)
        return out

    def _library_autotuner(self, d: cst.Decorator) -> bool:
        """`@lib_autotune(configs=[triton.Config(...), ...], key=[...])`: a library's own autotuner (a cache in
        front of `triton.autotune`, a subclass of its Autotuner). It picks among the configs as triton.autotune
        does, so it is read as one; the router recognizes the Autotuner subclass it makes at run time."""
        call = d.decorator
        if not isinstance(call, cst.Call) or self.dotted(call.func) in JIT:
            return False
        keys = {a.keyword.value for a in call.args if a.keyword is not None}
        configs = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "configs"), None)
        if configs is None or "key" not in keys:
            return False
        elements = configs.elements if isinstance(configs, (cst.List, cst.Tuple)) else \
            [cst.Element(configs.elt)] if isinstance(configs, cst.ListComp) else None
        return elements is not None and all(
            isinstance(el.value, cst.Call) and self.dotted(el.value.func) == "triton.Config" for el in elements)

    def scan_module(self, module: cst.Module) -> None:
        # imports under module-level `if` / `try` (libdevice's home moved between Triton versions): every
        # branch's names are read; they name the same functions
        # (a `try` decided for Triton 3.6, module_try.py: only what it runs, read once the plain imports are)
        for stmt in module.body:
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    self._scan_small(small)
        for stmt in module.body:
            if isinstance(stmt, (cst.If, cst.Try)):
                runs = self._tried(stmt) if isinstance(stmt, cst.Try) else None
                for node in (n for part in ((stmt,) if runs is None else runs) for n in walk_nodes(part)):
                    if isinstance(node, (cst.Import, cst.ImportFrom)):
                        self._scan_small(node)
        self._scan_call_decorators(module)
        self._scan_top_level(module)
        self._scan_libdevice_shims(module)
        self._scan_function_aliases(module)
        self.desc_hooks = _hook_block_shapes(module)
        self.desc_launches: dict[str, dict[str, list]] = {}
        self.launch_calls: dict[str, list[tuple[int, str]]] = {}  # kernel -> (argument index, host function)
        self.jit_functions = dict(self.info.kernels)
        # a forwarding function of an undecided arm (_scan_function_aliases): a helper here and in importers
        self.jit_functions.update(self.arm_helpers)
        self.info.helpers.update(self.arm_helpers)
        launched: set[str] = set()
        called: set[str] = set()
        for stmt in module.body:
            for node in walk_nodes(stmt):
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Subscript) \
                        and isinstance(node.func.value, cst.Name) and node.func.value.value in self.info.kernels:
                    launched.add(node.func.value.value)
                    self._scan_grid_launch(node, stmt)
                elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name) \
                        and node.func.value in self.info.kernels and isinstance(stmt, cst.FunctionDef) \
                        and stmt.name.value in self.info.kernels:
                    called.add(node.func.value)
        for name, fn in list(self.info.kernels.items()):
            if name in launched or self._wrappers(fn):
                continue
            # a @triton.jit function another one calls, or one that returns a value, is a device helper
            returns_value = any(isinstance(n, cst.Return) and n.value is not None for n in walk_nodes(fn.body))
            if name in called or returns_value:
                del self.info.kernels[name]
                self.info.helpers[name] = fn
        for name, fn in self.info.kernels.items():
            self._scan_configs(name, fn)

    def _scan_function_aliases(self, module: cst.Module) -> None:
        """`fast_tanh = libdevice.tanh` at module level, also in the arms of `if`s the tool cannot decide
        (`if Version(triton.__version__) >= ...: ... else: fast_tanh = tl.math.tanh`): the name is an alias of
        a Triton function where every assignment of it names the same rule. Arms naming another GPU vendor's
        library (`tl.extra.intel`, `tl.extra.hip`) are not taken on the NVIDIA GPUs the port runs on; a name
        also bound any other way (a def, an import, another value) is no alias. One exception: a `@triton.jit`
        function of an undecided arm that only forwards its parameters to the Triton operation the other arms
        name (`triton_cast = tl.cast` / `def triton_cast(x, dtype): return x.to(dtype)`: unsloth's utils) is
        the name, as a helper (`arm_helpers`): every call it accepts is ported alike whichever arm Python
        takes (the same model op), and a call only the alias would accept is refused."""
        from .blocks import block_statements
        from .module_config import taken_arm
        found: dict[str, list[str | None]] = {}
        other: set[str] = set()
        arm_defs: dict[str, list[cst.FunctionDef]] = {}
        env_of: dict[str, set[str]] = {}  # alias -> the environment variables whose defaults chose it
        assumed_of: dict[str, str] = {}  # alias -> the assumption it is ported by (a libdevice shim's)

        def visit(stmts, in_arm: bool = False, env: tuple[str, ...] = ()) -> None:
            for st in stmts:
                taken = taken_arm(st, self._config_test) if isinstance(st, cst.If) else None
                if taken is not None:  # a decided configuration `if` (module_config.py): the arm it takes
                    visit(taken, in_arm, env + self._env_reads(st.test))
                elif isinstance(st, cst.If):
                    visit(block_statements(st.body), True)
                    if isinstance(st.orelse, cst.If):
                        visit((st.orelse,), True)
                    elif isinstance(st.orelse, cst.Else):
                        visit(block_statements(st.orelse.body), True)
                elif isinstance(st, cst.Try) and (runs := self._tried(st)) is not None:
                    visit(runs, in_arm, env)  # decided for Triton 3.6 (module_try.py): what runs
                elif isinstance(st, cst.Try):
                    visit(block_statements(st.body), in_arm)
                    for part in (*st.handlers, st.orelse, st.finalbody):
                        if part is not None:
                            visit(block_statements(part.body), in_arm)
                elif isinstance(st, cst.FunctionDef) and in_arm:
                    arm_defs.setdefault(st.name.value, []).append(st)
                elif isinstance(st, (cst.FunctionDef, cst.ClassDef)):
                    other.add(st.name.value)
                elif isinstance(st, cst.SimpleStatementLine):
                    for small in st.body:
                        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                            [small.target] if isinstance(small, (cst.AnnAssign, cst.AugAssign)) else []
                        for t in targets:
                            if not isinstance(t, cst.Name):
                                continue
                            chosen = self._configured_function(small.value) \
                                if isinstance(small, cst.Assign) and len(targets) == 1 else None
                            if chosen is not None:
                                found.setdefault(t.value, []).append(self.dotted(chosen[0]))
                                env_of.setdefault(t.value, set()).update(env + chosen[1])
                                root = _root_name(chosen[0])
                                if root in self.info.assumed:  # `tanh = shim.tanh`: the shim's assumption
                                    assumed_of[t.value] = self.info.assumed[root]
                            else:
                                other.add(t.value)
        visit(module.body)
        vendors = tuple(f"{TL}.extra.{v}." for v in ("intel", "hip", "amd"))
        self.arm_helpers: dict[str, cst.FunctionDef] = {}
        for name, targets in sorted(found.items()):
            if name in other or name in self.info.kernels or name in self.info.helpers or name in self.info.consts:
                continue
            targets = [t for t in targets if not (t and t.startswith(vendors))]
            rules = [self.rules.lookup(t) if t else None for t in targets]
            # one Triton function named by every binding, ported or refused with its reason (REFUSED)
            one_refused = len(set(targets)) == 1 and targets[0] in REFUSED and not arm_defs.get(name)
            if not (targets and None not in rules and len({r.id for r in rules}) == 1) and not one_refused:
                continue
            defs = arm_defs.get(name, [])
            if not defs:
                self.info.aliases[name] = sorted(targets)[0]
                if env_of.get(name):
                    self.info.configured_by[name] = tuple(sorted(env_of[name]))
                if name in assumed_of:
                    self.info.assumed[name] = assumed_of[name]
            elif len(defs) == 1 and self._forwards_to(defs[0], rules[0]):
                self.arm_helpers[name] = defs[0]

    def _tried(self, stmt: cst.Try) -> tuple | None:
        """The statements a module-level `try` runs under Triton 3.6 (module_try.py), None where not decided. Where
        its body raises, the names a handler binds are noted (`handler_bound`: a kernel using one bound to None is
        told why)."""
        from .blocks import block_statements
        from .module_try import try_outcome, tried_statements
        runs = tried_statements(stmt, self.dotted)
        out = try_outcome(tuple(block_statements(stmt.body)), self.dotted) if runs is not None else None
        if out is not None and out.raises is not None:
            failing = block_statements(stmt.body)[out.index]
            failing = failing.body[0] if isinstance(failing, cst.SimpleStatementLine) else failing  # (no comment)
            why = (f"the `try` at line {self.pos(stmt).line} raises {out.raises} under Triton 3.6, the version the "
                   f"port targets (`{node_code(failing).strip()}`), and its handler binds it")
            bound = self.__dict__.setdefault("handler_bound", {})
            for st in runs[out.index:]:
                for small in st.body if isinstance(st, cst.SimpleStatementLine) else ():
                    for t in small.targets if isinstance(small, cst.Assign) else ():
                        if isinstance(t.target, cst.Name):
                            bound[t.target.value] = why
        return runs

    def _undecided_tries(self, stmts) -> Iterator[cst.Try]:
        """The module-level `try` statements the module runs (through decided `if`s and `try`s) that module_try.py
        cannot decide."""
        from .blocks import block_statements
        from .module_config import taken_arm
        for st in stmts:
            if isinstance(st, cst.If) and (arm := taken_arm(st, self._config_test)) is not None:
                yield from self._undecided_tries(arm)
            elif isinstance(st, cst.Try):
                runs = self._tried(st)
                if runs is None:
                    yield st
                yield from self._undecided_tries(block_statements(st.body) if runs is None else runs)

    def _scan_libdevice_shims(self, module: cst.Module) -> None:
        """`try: shim = backend.get_math_module() / except ImportError: shim = triton.language.extra.libdevice`
        (fallbacks of older Triton versions nested in the handler): a name the try body binds by the library's
        own code and every handler binds to a libdevice home of some Triton version (rules/triton_compat.toml) is
        libdevice, by the assumption that the vendor query gives NVIDIA's (said in a CT122 warning where used).
        A name any handler binds to anything else, or that the module binds elsewhere, stays unknown."""
        from .blocks import block_statements
        from .module_try import bound_values
        homes, ported_as = libdevice_shim_rule()
        for st in self._undecided_tries(module.body):
            body = list(block_statements(st.body))
            for stmt in body:
                for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                    if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                            and isinstance(small.targets[0].target, cst.Name) and isinstance(small.value, cst.Call)):
                        continue
                    name = small.targets[0].target.value
                    handlers = [h for part in (*st.handlers, st.orelse) if part is not None
                                for h in block_statements(part.body)]
                    candidates = bound_values(handlers, name)
                    everywhere = bound_values(module.body, name)
                    if not candidates or len(everywhere) != len(candidates) + 1 \
                            or not all(self._bound_module(c, name) in homes for c in candidates):
                        continue
                    self.info.aliases[name] = ported_as
                    self.info.assumed[name] = (
                        f"`{name}` is taken as Triton's libdevice (`{ported_as}`): its module binds it at import by "
                        f"`{node_code(small.value).strip()}` ({self.info.path}:{self.pos(small).line}), which the port "
                        "cannot evaluate, and else to libdevice of one Triton version or another; the port assumes "
                        "the call gives NVIDIA's libdevice (the functions mean the same in every libdevice)")

    def _inline(self, fn: cst.FunctionDef, call: cst.Call, bound: list | None, pos: Pos, as_stmt: bool) -> Expr:
        foreign = [d for d in self._foreign_decorators(fn, list(fn.decorators))
                   if fn.name.value not in self.info.decorator_keeps]
        if foreign:
            raise fail("CT112", f"helper `{fn.name.value}` is wrapped by `@{node_code(foreign[0].decorator).strip()}` "
                       "above `@triton.jit`: the decorator receives the function at import and may return another "
                       "one, which the port cannot tell; call the function the decorator chooses directly (or "
                       "remove the decorator)", pos)
        return super()._inline(fn, call, bound, pos, as_stmt)

    def _foreign_decorators(self, fn: cst.FunctionDef, decorators: list | None = None) -> list[cst.Decorator]:
        """The decorators above a jit function's `@triton.jit` that are no launcher wrapper (autotune, heuristics,
        a library's autotuner): each receives the JITFunction and may return anything."""
        decorators = self._decorators(fn) if decorators is None else decorators
        above = decorators[:next((i for i, d in enumerate(decorators) if self._jit_target(d)), 0)]
        wrappers = self._wrappers(fn)
        return [d for d in above if d not in wrappers]

    def _scan_substituted_helpers(self) -> None:
        """`@use_math_module @triton.jit def div_rn(x, y): ...`: a decorator that returns the function of the same
        name of a Triton module where the module has one (`getattr(module, fn.__name__, fn)`, also through the
        package's functions it calls: _substitute_module), else the function itself. Decided for Triton 3.6's
        modules: the name is that module's function (an alias; a libdevice shim's assumption goes with it), or
        the helper it is (`decorator_keeps`). A helper under any other decorator is refused where it is called
        (CT112: what the decorator returns is not known)."""
        from .module_try import triton_modules
        for name, fn in list(getattr(self, "jit_functions", {}).items()):
            if not any(fn is t for t in getattr(self, "top_statements", ())):
                continue
            foreign = self._foreign_decorators(fn)
            if len(foreign) != 1 or not isinstance(foreign[0].decorator, cst.Name):
                continue
            found = self._substitute_module(foreign[0].decorator.value)
            if found is None:
                continue
            module, assumed = found
            has = triton_modules().attribute(module, name)
            if has is False:
                self.info.decorator_keeps.add(name)
            elif has:
                self.info.aliases[name] = f"{module}.{name}"
                for table in (self.info.helpers, self.info.kernels, self.jit_functions):
                    table.pop(name, None)
                if assumed:
                    self.info.assumed[name] = assumed

    def _substitute_module(self, decorator: str) -> tuple[str, str | None] | None:
        """(the Triton module, the assumption it is known by) where the module-level function `decorator` (of this
        module or imported from the package) returns a module's function of its argument's name; else None."""
        fn, conv = self._module_function(decorator), self
        if fn is None and (home := self._imported_home(decorator)) is not None and isinstance(home[0], _TritonConverter):
            conv, fn = home[0], home[0]._module_function(home[1])
        if fn is None or len(fn.params.params) != 1:
            return None
        return conv._substitute_in(fn, {}, 0)

    def _substitute_in(self, fn: cst.FunctionDef, bound: dict[str, tuple[str, str | None]], depth: int):
        """_substitute_module's search of fn's body: `getattr(M, <the argument's __name__>, ...)` with M a Triton
        module (a module-level name of this module, or a parameter `bound` to one by the call that got here),
        also inside the package functions fn calls with such a module (`use_backend(shim)(fn)`, 3 deep)."""
        from .module_try import triton_modules
        modules = triton_modules().modules

        def module_of(node: cst.BaseExpression) -> tuple[str, str | None] | None:
            if not isinstance(node, cst.Name):
                return None
            if node.value in bound:
                return bound[node.value]
            d = self.dotted(node)
            return (d, self.info.assumed.get(node.value)) if d in modules else None

        names_of = {t.target.value for n in walk_nodes(fn) if isinstance(n, cst.Assign) for t in n.targets
                    if isinstance(t.target, cst.Name) and isinstance(n.value, cst.Attribute)
                    and n.value.attr.value == "__name__"}
        for n in walk_nodes(fn):
            if not isinstance(n, cst.Call) or not isinstance(n.func, cst.Name) or any(a.keyword or a.star for a in n.args):
                continue
            if self.dotted(n.func) in ("getattr", "builtins.getattr") and len(n.args) in (2, 3):
                key = n.args[1].value
                if (isinstance(key, cst.Attribute) and key.attr.value == "__name__") or \
                        (isinstance(key, cst.Name) and key.value in names_of):
                    found = module_of(n.args[0].value)
                    if found is not None:
                        return found
            inner = self._module_function(n.func.value) if depth < 3 else None
            if inner is not None and len(inner.params.params) == len(n.args):
                passed = {p.name.value: m for p, a in zip(inner.params.params, n.args)
                          if (m := module_of(a.value)) is not None}
                if passed and (found := self._substitute_in(inner, passed, depth + 1)) is not None:
                    return found
        return None

    def _bound_module(self, node: cst.CSTNode, name: str) -> str | None:
        """The dotted module a binding of `name` (bound_values) names: `x = triton.language.math`,
        `import triton.language.math as x`, `from triton.language.extra import libdevice as x`."""
        if isinstance(node, (cst.Name, cst.Attribute)):
            return self.dotted(node)
        if isinstance(node, cst.Import):
            return next((name_text(a.name) for a in node.names if a.asname and a.asname.name.value == name), None)
        if isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative:
            return next((f"{name_text(node.module)}.{name_text(a.name)}" for a in node.names
                         if (a.asname.name.value if a.asname else name_text(a.name)) == name), None)
        return None

    def _configured_function(self, value: cst.BaseExpression) -> tuple[cst.BaseExpression, tuple[str, ...]] | None:
        """The function a module-level assignment names, and the environment variables that chose it: a name or
        attribute (`exp = tl.exp`), the arm a decided conditional expression takes (`exp = tldevice.fast_expf if
        os.environ.get("FAST", "0") == "1" else tl.exp`), or what a call of the module's own configuration
        function returns (`exp = get_exp()`, module_config.returned_expression). None for any other value."""
        from .module_config import returned_expression
        env: tuple[str, ...] = ()
        for _ in range(8):
            if isinstance(value, (cst.Name, cst.Attribute)):
                return value, env
            if isinstance(value, cst.IfExp):
                test = self._config_test(value.test)
                if test is UNDECIDED:
                    return None
                env += self._env_reads(value.test)
                value = value.body if test else value.orelse
            elif isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Name) \
                    and (fn := self._module_function(value.func.value)) is not None \
                    and (expr := returned_expression(fn, self.dotted)) is not None:
                value = expr
            else:
                return None
        return None

    def _env_reads(self, test: cst.BaseExpression) -> tuple[str, ...]:
        """The environment variables a decided configuration test reads, through the module's configuration
        names and functions (module_config.env_reads)."""
        from .module_config import env_reads, returned_expression

        def behind(n: cst.BaseExpression) -> cst.BaseExpression | None:
            if isinstance(n, cst.Name):
                values = [small.value for st in getattr(self, "top_statements", ()) if isinstance(st, cst.SimpleStatementLine)
                          for small in st.body if isinstance(small, cst.Assign) and len(small.targets) == 1
                          and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == n.value]
                return values[-1] if values else None
            if isinstance(n, cst.Call) and not n.args and isinstance(n.func, cst.Name):
                fn = self._module_function(n.func.value)
                return returned_expression(fn, self.dotted) if fn is not None else None
            return None
        return env_reads(test, self.dotted, behind)

    def _forwards_to(self, fn: cst.FunctionDef, rule) -> bool:
        """fn forwards its n parameters to an operation ported as `rule` is: the same model op, the same first
        n parameters (`x.to(dtype)` and `tl.cast(x, dtype)` are both TTR-*'s `astype` of (x, dtype))."""
        own = self._forwarded_rule(fn)
        n = len(fn.params.params)
        return own is not None and own.op == rule.op and list(own.params[:n]) == list(rule.params[:n]) \
            and len(own.params) >= n

    def _forwarded_rule(self, fn: cst.FunctionDef):
        """The rule of the Triton operation a `@triton.jit` function only forwards its parameters to, in order
        (`def f(x, dtype): return tl.cast(x, dtype)`, or the method form `return x.to(dtype)`), else None."""
        ps = fn.params
        if not self._jit_target_only(fn) or ps.posonly_params or ps.kwonly_params or ps.star_kwarg \
                or not isinstance(ps.star_arg, cst.MaybeSentinel) or any(p.default is not None for p in ps.params):
            return None
        names = [p.name.value for p in ps.params]
        from .blocks import block_statements
        body = [b for b in block_statements(fn.body) if not (
            isinstance(b, cst.SimpleStatementLine) and len(b.body) == 1 and isinstance(b.body[0], cst.Expr)
            and isinstance(b.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))]  # past a docstring
        ret = body[0].body[0] if len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) \
            and len(body[0].body) == 1 else None
        call = ret.value if isinstance(ret, cst.Return) else None
        if not isinstance(call, cst.Call) or any(a.keyword is not None or a.star for a in call.args):
            return None
        args = [a.value.value if isinstance(a.value, cst.Name) else None for a in call.args]
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and names \
                and func.value.value == names[0] and args == names[1:]:
            return self.rules.lookup(f"method:{func.attr.value}")
        d = self.dotted(func)
        if d and d.startswith(f"{TL}.") and args == names:
            return self.rules.lookup(d)
        return None

    def _jit_target_only(self, fn: cst.FunctionDef) -> bool:
        """fn's one decorator is `@triton.jit` (no options, no wrapper)."""
        return len(fn.decorators) == 1 and not isinstance(fn.decorators[0].decorator, cst.Call) \
            and self._jit_target(fn.decorators[0])

    def _scan_small(self, small: cst.BaseSmallStatement) -> None:
        super()._scan_small(small)
        self._scan_computed_constant(small)

    def _scan_computed_constant(self, small: cst.BaseSmallStatement) -> None:
        """`_SHIFT = tl.constexpr(_SIZE.value.bit_length() - 1)`: a module constant computed by a Python expression
        the base evaluator does not know (module_consts.py evaluates it as Python would). Also records which names
        are bound to a `tl.constexpr(...)` object, the only ones with a `.value`."""
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            target, value = small.targets[0].target, small.value
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            target, value = small.target, small.value
        else:
            return
        if not isinstance(target, cst.Name):
            return
        name = target.value
        wrapped = self.__dict__.setdefault("constexpr_objects", set())
        is_object = isinstance(value, cst.Call) and self.dotted(value.func) == f"{TL}.constexpr"
        if name in self.info.consts or name in self.info.aliases or name in self.info.type_aliases:
            (wrapped.add if is_object and name in self.info.consts else wrapped.discard)(name)
            return
        found = self._module_const(value)
        if found is None:
            wrapped.discard(name)
            return
        self.info.consts[name] = found
        getattr(self, "config_names", {}).pop(name, None)
        (wrapped.add if is_object else wrapped.discard)(name)

    def _module_const(self, node: cst.BaseExpression) -> object | None:
        """The value module_consts.py computes for a module-level expression (None: not known)."""
        return module_const_value(node, self.info.consts, lambda n: n in self.__dict__.get("constexpr_objects", ()),
                                  self.dotted, TL)

    def resolve_imports(self, module, path, display, loaded) -> None:
        super().resolve_imports(module, path, display, loaded)
        # a module constant computed from an imported one (`_PAD = tl.constexpr(PAD_ID)` after
        # `from .consts import PAD_ID`): known now that the import is
        for stmt in module.body:
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target, value = small.targets[0].target, small.value
                elif isinstance(small, cst.AnnAssign) and small.value is not None:
                    target, value = small.target, small.value
                else:
                    continue
                if not isinstance(target, cst.Name) or target.value in self.info.consts:
                    continue
                found = self._eval_const(value)
                if found is None:
                    found = self._module_const(value)
                if isinstance(found, (bool, int, float)) and not isinstance(found, _DtypeName):
                    self.info.consts[target.value] = found
                    getattr(self, "config_names", {}).pop(target.value, None)
        # a sibling module's alias of a Triton function (`from .utils import fast_tanh`) or libdevice shim
        shims_imported = False
        for target, names in self._imports_from_files(module, path):
            home = loaded.get(target)
            for name, local in names if home is not None else ():
                alias = home.info.aliases.get(name, "")
                if alias.startswith(f"{TL}.") and (self.rules.lookup(alias) is not None or alias in REFUSED
                                                   or name in home.info.assumed) \
                        and local not in self.info.helpers:
                    self.info.aliases[local] = alias
                    if name in home.info.configured_by:
                        self.info.configured_by[local] = home.info.configured_by[name]
                    if name in home.info.assumed:  # a libdevice shim (or an alias of its function)
                        self.info.assumed[local] = home.info.assumed[name]
                        shims_imported = True
        if shims_imported:  # `tanh = shim.tanh` names a Triton function now that `shim` is known
            self._scan_function_aliases(module)
        self._scan_substituted_helpers()
        # a plain function of a sibling module (`from .fp8_utils import fp8_dtype_to_triton`): a launch site may
        # pass its result (_returned_dtypes)
        self.imported_functions = {}
        for target, names in self._imports_from_files(module, path):
            home = loaded.get(target)
            for name, local in names if home is not None else ():
                fn = home._module_function(name)
                if fn is not None:
                    self.imported_functions[local] = (home, fn)
        # a @triton.jit function of a sibling module is a helper here, whatever it is there
        for target, names in self._imports_from_files(module, path):
            home = loaded.get(target)
            if home is None:
                continue
            for name, local in names:
                fn = getattr(home, "jit_functions", {}).get(name)
                if fn is not None and local not in self.info.helpers:
                    self.info.helpers[local] = fn
                    self.info.helper_home[local] = home
                    self.info.aliases.pop(local, None)

    def _scan_grid_launch(self, call: cst.Call, home: cst.CSTNode) -> None:
        """`kernel[grid](a, b, BLOCK=1024)`: the literal constants a launch site passes (by position or name),
        and which arguments are floats (literals, or locals of the launching function `home` assigned one)."""
        name = call.func.value.value
        fn = self.info.kernels[name]
        names = [p.name.value for p in fn.params.params]
        lits: dict[int, object] = {}
        float_locals = {t.target.value for n in walk_nodes(home) if isinstance(n, cst.Assign)
                        for t in n.targets if isinstance(t.target, cst.Name)
                        and isinstance(self._eval_const(n.value), float)} if isinstance(home, cst.FunctionDef) else set()
        int_locals = _int_locals(home) if isinstance(home, cst.FunctionDef) else set()
        for i, a in enumerate(call.args):
            if a.star:
                return
            idx = names.index(a.keyword.value) if a.keyword and a.keyword.value in names else (
                i if a.keyword is None else None)
            if idx is None:
                continue
            v = self._eval_const(a.value)
            if isinstance(v, float) or (isinstance(a.value, cst.Name) and a.value.value in float_locals):
                self.info.float_args.setdefault(name, set()).add(idx)
            elif _int_valued(a.value, int_locals):
                self.info.int_args.setdefault(name, set()).add(idx)
            if isinstance(v, (int, float, bool, str)):
                lits[idx] = v
            elif (called := _host_call_name(a.value, home)) is not None:
                # `FP8_DTYPE=fp8_dtype_to_triton(dtype)`: a host function's result, read when the kernel is built
                # (the function may be imported: `_kernel` resolves it after the imports)
                self.launch_calls.setdefault(name, []).append((idx, called))
        self._scan_launch_descriptors(name, fn, call, home, lits)
        self.info.launches.setdefault(name, []).append(lits)

    def _scan_launch_descriptors(self, name: str, fn: cst.FunctionDef, call: cst.Call, home: cst.CSTNode,
                                 lits: dict) -> None:
        """`kernel[grid](a_desc, ..., BLOCK_M=128)` where the launching function made `a_desc =
        TensorDescriptor.from_tensor(a, [BLOCK_M, block_k])` (or `TensorDescriptor(base, shape, strides,
        block)`): per block extent, the kernel constexpr the launch passes the same expression for (a link),
        or its literal value (kept under a key past the parameters, for the hidden constant: `_kernel`)."""
        names = [p.name.value for p in fn.params.params]
        constexprs = {p.name.value for p in fn.params.params if self._is_constexpr(p.annotation)}
        texts: dict[str, str] = {}  # expression text -> the constexpr it is passed for
        bound: dict[str, cst.BaseExpression] = {}
        for i, a in enumerate(call.args):
            key = a.keyword.value if a.keyword else (names[i] if i < len(names) else None)
            if key in names:
                bound[key] = a.value
                if key in constexprs:
                    texts.setdefault(node_code(a.value).strip(), key)
        assigned = _single_assignments(home) if isinstance(home, cst.FunctionDef) else {}
        for key, value in bound.items():
            if key in constexprs:
                continue
            block = _descriptor_block(self, value, assigned)
            if block is None:
                continue
            evidence = []
            for el in block:
                v = self._eval_const(el)
                text = node_code(el).strip()
                if isinstance(v, int) and not isinstance(v, bool):  # a literal: its value (equal literals are no tie)
                    evidence.append(("value", v))
                elif text in texts:
                    evidence.append(("link", texts[text]))
                else:
                    evidence.append(None)
            self.desc_launches.setdefault(name, {}).setdefault(key, []).append(
                (tuple(evidence), len(self.info.launches.get(name, []))))

    def _scan_configs(self, name: str, fn: cst.FunctionDef) -> None:
        """`@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4), ...])`: each config is a
        specialization the port must have (the router autotunes over the same configs)."""
        names = [p.name.value for p in fn.params.params]
        for d in self._wrappers(fn):
            if not isinstance(d.decorator, cst.Call):
                continue
            for a in d.decorator.args:
                key = a.keyword.value if a.keyword else None
                if key not in ("configs", None) or not isinstance(a.value, (cst.List, cst.Tuple)):
                    continue
                for el in a.value.elements:
                    c = el.value
                    if not (isinstance(c, cst.Call) and self.dotted(c.func) in ("triton.Config",)
                            and c.args and isinstance(c.args[0].value, cst.Dict)):
                        continue
                    lits = {}
                    for item in c.args[0].value.elements:
                        if isinstance(item, cst.DictElement) and isinstance(item.key, cst.SimpleString) \
                                and item.key.evaluated_value in names:
                            v = self._eval_const(item.value)
                            if isinstance(v, (int, float, bool)):
                                lits[names.index(item.key.evaluated_value)] = v
                    self.info.launches.setdefault(name, []).append(lits)

    def _eval_const(self, node: cst.BaseExpression) -> object | None:
        # `NAME: tl.constexpr = tl.constexpr(0)`: the value itself
        if isinstance(node, cst.Call) and self.dotted(node.func) in (f"{TL}.constexpr",) and len(node.args) == 1:
            return self._eval_const(node.args[0].value)
        fact = self._platform_truth(node)
        if fact is not None:
            return fact
        newer = self._version_test(node)
        if newer is not None:
            return newer
        d = self.dotted(node) if isinstance(node, (cst.Attribute, cst.Name)) else None
        if d and d.startswith(f"{TL}.") and d[len(TL) + 1:] in TRITON_DTYPES:
            return _DtypeName(TRITON_DTYPES[d[len(TL) + 1:]])  # `ACC=tl.float32`: a dtype constant's value
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and self._module_function(node.func.value):
            return self._module_string(node)
        if isinstance(node, cst.IfExp) and getattr(self, "top_statements", None) is not None:
            # `_FP8 = tl.float8e4b8 if is_gfx942() else tl.float8e4nv`: the arm the configuration takes
            # (module_config.py: platform facts, the package's configuration functions, constants)
            test = self._config_test(node.test)
            return None if test is UNDECIDED else self._eval_const(node.body if test else node.orelse)
        return super()._eval_const(node)

    def _module_function(self, name: str) -> cst.FunctionDef | None:
        """A plain function of this module's top level (no decorator: not a kernel), defined before here."""
        defs = [st for st in getattr(self, "top_statements", ()) if isinstance(st, cst.FunctionDef)
                and st.name.value == name]
        return defs[-1] if defs and not self._decorators(defs[-1]) else None

    def _returned_dtypes(self, name: str) -> tuple[str, ...]:
        """The model dtypes a host function of this module (or one imported from a sibling) returns, where every
        `return` of it names a `tl` dtype literally (`return tl.float8e4nv`; a `raise` ends the others): the
        values a launch site passing its result may give. Formats with no cuTile Rust type (tl.float8e4b15,
        AMD's float8e4b8) have no entry: the wrapper refuses them. () where any return is something else."""
        conv, fn = self, self._module_function(name)
        if fn is None:
            conv, fn = getattr(self, "imported_functions", {}).get(name, (None, None))
        if fn is None:
            return ()
        out = []
        for ret in _returns(fn.body):
            if ret.value is None:
                return ()
            d = conv.dotted(ret.value) if isinstance(ret.value, (cst.Attribute, cst.Name)) else None
            if not (d and d.startswith(f"{TL}.") and d[len(TL) + 1:] in TRITON_DTYPES.keys() | UNPORTED_TRITON_DTYPES):
                return ()
            if d[len(TL) + 1:] in TRITON_DTYPES:
                out.append(_DtypeName(TRITON_DTYPES[d[len(TL) + 1:]]))
        return tuple(out)

    def _module_string(self, call: cst.Call) -> str | None:
        """`_generate_softplus(1)` at module level: the string the module's own function builds
        (module_strings.py reads its body; nothing of it runs); None where it is not a string known so."""
        args, kwargs = [], {}
        for a in call.args:
            v = self._eval_const(a.value)
            if a.star or v is None or isinstance(v, _DtypeName):
                return None
            if a.keyword is None:
                args.append(v)
            else:
                kwargs[a.keyword.value] = v
        value = call_value(self._module_function(call.func.value), args, kwargs, self.info.consts,
                           self._module_function)
        return value if isinstance(value, str) and value is not UNDECIDED else None

    def _version_test(self, node: cst.BaseExpression) -> bool | None:
        """`version.parse(triton.__version__) >= version.parse("3.0.0")` (packaging's `parse` / `Version`,
        `pkg_resources.parse_version`): a test of the Triton version, decided for the version the port targets
        (TRITON_VERSION); None for any other expression or a version string that is not plain numbers."""
        if not (isinstance(node, cst.Comparison) and len(node.comparisons) == 1):
            return None
        op = type(node.comparisons[0].operator).__name__

        def version(n) -> tuple | None:
            if not (isinstance(n, cst.Call) and len(n.args) == 1 and n.args[0].keyword is None
                    and self.dotted(n.func) in VERSION_PARSERS):
                return None
            a = n.args[0].value
            text = TRITON_VERSION if self.dotted(a) == "triton.__version__" else \
                a.evaluated_value if isinstance(a, cst.SimpleString) else None
            if not isinstance(text, str) or not re.fullmatch(r"\d+(\.\d+)*", text.strip()):
                return None
            parts = tuple(int(x) for x in text.strip().split("."))
            return parts + (0,) * (4 - len(parts))
        a, b = version(node.left), version(node.comparisons[0].comparator)
        compare = {"GreaterThanEqual": a >= b, "GreaterThan": a > b, "LessThanEqual": a <= b, "LessThan": a < b,
                   "Equal": a == b, "NotEqual": a != b} if a is not None and b is not None else {}
        return compare.get(op)

    def _has_attr(self, module: str, name: str) -> bool | None:
        """`hasattr(triton.language, "gather")` (a feature test of the Triton version): decided for Triton 3.6,
        the version the port targets."""
        if module in ("triton", TL):
            return f"{module}.{name}" in triton_namespace()
        return None

    def _returned_value(self, call: cst.Call, world: dict, seen: set[str] | None) -> object:
        """`tl.constexpr(x)` in a configuration value (`PREC = tl.constexpr("ieee" if IS_NPU else "tf32x3")`):
        the value of x, as Triton unwraps it."""
        if self.dotted(call.func) == f"{TL}.constexpr" and len(call.args) == 1 and call.args[0].keyword is None:
            return self._config_in(call.args[0].value, world, seen)
        return super()._returned_value(call, world, seen)

    def _platform_truth(self, node: cst.BaseExpression) -> bool | None:
        """`bool(F)`, `not F`, `F is None`, `F is not None` of a platform fact F (rules/platform.toml, e.g.
        `torch.version.hip`): its truth on the NVIDIA GPUs a port runs on; None where `node` is none of these."""
        def fact(n: cst.BaseExpression) -> object:
            return platform_value(n, self.dotted, None)  # a fact of every GPU
        if isinstance(node, cst.Call) and self.dotted(node.func) in ("bool", "builtins.bool") and len(node.args) == 1:
            v = fact(node.args[0].value)
            return None if v is NO_FACT else bool(v)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            v = fact(node.expression)
            return None if v is NO_FACT else not v
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1 \
                and isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot)) \
                and isinstance(node.comparisons[0].comparator, cst.Name) and node.comparisons[0].comparator.value == "None":
            v = fact(node.left)
            return None if v is NO_FACT else (v is None) == isinstance(node.comparisons[0].operator, cst.Is)
        return None

    def misplaced_diag(self, fn: cst.FunctionDef) -> Diagnostic:
        return Diagnostic("error", "CT113", f"kernel `{fn.name.value}` is not defined at the top level of the "
                          "module: only module-level `@triton.jit` functions are translated", self.pos(fn))

    # ------------------------------------------------------------------ kernels
    def _check_signature(self, fn: cst.FunctionDef, dec: cst.Decorator | None) -> None:
        name = fn.name.value
        wrappers = self._wrappers(fn)
        self.host_decorators = []
        decorators = self._decorators(fn)
        jit_at = next((i for i, d in enumerate(decorators) if d is dec), len(decorators))
        for i, d in enumerate(decorators):
            if d is dec or d in wrappers:
                continue
            if i < jit_at:
                # above `@triton.jit`: applied to the JITFunction, a host-side wrapper (a launch cache, a library
                # tuner): the kernel's device code is unchanged, so it is ported; launches through the wrapper
                # are routed only where the router knows it (else they warn, or refuse with strict=True)
                self.host_decorators.append(d)
                continue
            raise fail("CT112", f"kernel `{name}` has the decorator `@{node_code(d.decorator)}` below `@triton.jit`: "
                       "it changes the function Triton compiles, and its effect cannot be translated", self.pos(d))
        if not name.isascii():
            raise fail("CT114", f"kernel name `{name}` is not ASCII: its C symbol `cutile_{name}` and Rust entry "
                       "need an ASCII identifier", self.pos(fn.name))
        ps = fn.params
        if ps.posonly_params or ps.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or ps.kwonly_params \
                or ps.star_kwarg:
            raise fail("CT100", "kernels with position-only, *args, keyword-only or **kwargs parameters are not "
                       "supported", self.pos(ps))

    def _hints(self, dec):
        return ()  # num_warps / num_stages are Triton's schedule: tileiras chooses its own (triton.md §3)

    def dotted(self, node: cst.BaseExpression) -> str | None:
        # `import triton.language.core as core`: triton.language re-exports core's names (`core.static_range`,
        # `core.reshape`, `core.int32` are tl's); and standard's where tl has the name (`from
        # triton.language.standard import zeros_like` is `tl.zeros_like`; `standard.reduce_or`, not in tl, stays)
        d = super().dotted(node)
        if d and d.startswith(f"{TL}.core."):
            return f"{TL}.{d[len(TL) + 6:]}"
        if d and d.startswith(f"{TL}.standard.") and "." not in (leaf := d[len(TL) + 10:]) \
                and f"{TL}.{leaf}" in triton_namespace():
            return f"{TL}.{leaf}"
        return d

    def is_dtype_literal(self, node: cst.BaseExpression) -> bool:
        """`tl.float32`, `tl.bfloat16`, ...: a Triton dtype named literally."""
        d = self.dotted(node) or ""
        return d.startswith(f"{TL}.") and d[len(TL) + 1:] in TRITON_DTYPES

    def _is_constexpr(self, ann: cst.Annotation | None) -> bool:
        return ann is not None and self.dotted(ann.annotation) in (f"{TL}.constexpr", "triton.language.core.constexpr")

    def kernel(self, fn: cst.FunctionDef):
        # constexpr locals chosen by the arms of a constexpr `if` and sizing tiles: the rest of the kernel in each
        # arm, the name replaced by the arm's value (constexpr_arms.py); decided with this kernel's constexprs
        saved = getattr(self, "const_params", set()), getattr(self, "_current_fn", None), getattr(self, "inlining", [])
        self.const_params = {p.name.value for p in fn.params.params if self._is_constexpr(p.annotation)}
        self._current_fn, self.inlining = fn, []  # (a kernel that failed mid-helper leaves its helper stack)
        try:
            split = split_constexpr_arms(self, fn, self._stand_in_pos)
        finally:
            self.const_params, self._current_fn, self.inlining = saved
        return super().kernel(split if split is not None else fn)

    def _kernel(self, fn: cst.FunctionDef):
        self.configured_uses: dict[tuple[str, str], tuple] = {}  # see _note_configured
        self.assumed_uses: dict[tuple[str, str], tuple] = {}  # (module, name) -> (ModuleInfo.assumed's text, pos)
        self.ptr_vars: dict[str, tuple[str, str | None]] = {}
        # a kernel-level pointer name rebound to another tensor (`p_dq = dq2 + ...` after `p_dq = dq + ...`): its
        # model name from then on (each binding its own offsets local); names an `if` rebinds on one path only
        # read as the older or the newer tensor depending on the path: refused where read after it
        self.ptr_alias: dict[str, str] = {}
        self.ptr_poisoned: dict[str, str] = {}
        self.addr_locals: set[str] = set()  # locals holding a loaded pointer's address (_Addr)
        self.arm_locals: set[str] = set()  # locals an access through a pointer chosen at run time made (pointer_arms)
        self.given_names: dict[str, str] = {}  # pointer parameter -> its hidden `is given` constant
        self.string_locals: set[str] = set()  # locals holding a cache-modifier string (see small)
        self.desc_vars: dict[str, _Desc] = {}  # name -> the tensor descriptor it holds
        self.block_vars: dict[str, _BlockPtr] = {}  # name -> the block pointer it holds (its parts in locals)
        # names the arms of an `if` give block pointers of different block shapes: refused where read after it
        self.block_poisoned: set[str] = set()
        self.block_depth: dict[str, int] = {}  # name -> how many helpers deep its block pointer was bound
        self.helper_values: dict[str, object] = {}  # `__bp_<n>` -> a part of a block pointer a helper returned
        self.block_tags: set[str] | None = None  # names block-pointer accesses may not take (read on first use)
        self.pointer_params = _pointer_params(self, fn)
        # pointer parameters the kernel's top level rebinds to a loaded value, constexprs it rebinds to a run-time
        # value: that value from then on
        self.value_rebinds = _value_rebinds(self, fn)
        self.value_alias: dict[str, str] = {}
        self.seed_params: set[str] = set()  # scalar parameters a random function takes as its seed: integers
        self._host_descriptor_params(fn)
        launches = self.info.launches.get(fn.name.value, [])
        names = [p.name.value for p in fn.params.params]
        self.constexpr_types = {}
        self.string_consts: dict[str, tuple[str, ...]] = {}
        self.dtype_consts: list[str] = []
        used_as_dtype = _dtype_params(self, fn)
        for i, p in enumerate(fn.params.params):
            if self._is_constexpr(p.annotation):
                seen = [lits[i] for lits in launches if i in lits]
                if p.default is not None:
                    seen.append(self._eval_const(p.default))
                if names[i] in used_as_dtype:
                    # a dtype constant: a string constant over dtype names (the launch sites' literals, else
                    # the float dtypes), one entry per dtype
                    literal = {v for v in seen if isinstance(v, _DtypeName)} | {
                        d for j, called in getattr(self, "launch_calls", {}).get(fn.name.value, []) if j == i
                        for d in self._returned_dtypes(called)}
                    self.string_consts[names[i]] = tuple(sorted(str(v) for v in literal or DTYPE_CONST_DEFAULT))
                    self.dtype_consts.append(names[i])
                    self.constexpr_types[names[i]] = "int"
                    continue
                kinds = {type(v) for v in seen if v is not None}
                strings = _string_comparands(fn, names[i], self.info.helpers) | {v for v in seen if isinstance(v, str)}
                if not strings and _precision_param(fn, names[i]):
                    strings = set(DOT_PRECISIONS)  # no launch says which: each precision Triton 3.6 takes
                if strings or str in kinds or _string_keyword(fn, names[i]):
                    self.string_consts[names[i]] = tuple(sorted(strings))
                    kinds = {int}
                if not kinds and _float_use(fn, names[i]):
                    kinds = {float}  # no literal value anywhere: `1.0 - beta`, `eps == 0.0` say it is a float
                self.constexpr_types[names[i]] = "bool" if kinds == {bool} else "float" if float in kinds else "int"
        reassigned = _assigned_names(fn.body) - set(self.value_rebinds)
        # constexpr and scalar parameters the kernel itself tests against None (`if W is not None:`): Triton
        # specializes a None argument as a constant, so each test is a compile-time fact; here a hidden bool
        # constant per parameter (Param.given_of), one structural variant per value (passes/specialize.py)
        self.optional_values = {t[0].value for node in walk_nodes(fn.body) for t in [_none_test(node)]
                                if t is not None and isinstance(t[0], cst.Name) and t[0].value in names
                                and t[0].value not in self.pointer_params and t[0].value not in reassigned
                                and t[0].value not in self.string_consts}
        self.offset_names = {}
        self.cast_only = _cast_only_names(self, fn)
        taken = self._function_locals(fn)
        for p in self.pointer_params:
            off = f"{p}_off"
            while off in taken:
                off += "_"
            self.offset_names[p] = off
            self.ptr_vars[p] = (p, off if p in reassigned else None)
        # the pointer bindings (model names) defined on the path being converted: an `if` chooses between two only
        # where each is (ptr_vars also keeps a binding one arm of an earlier `if` made)
        self.ptr_live: set[str] = set(self.ptr_vars)
        k = super()._kernel(fn)
        # pointer parameters reassigned in the kernel (`X += row * stride`) start at offset 0
        pre = tuple(Assign((self.offset_names[p],), Lit(0, k.pos), k.pos)
                    for p in names if p in self.pointer_params and p in reassigned)
        launches = tuple(tuple((n, self.string_consts[n].index(v) if n in self.string_consts and isinstance(v, str)
                                else v) for n, v in lits) for lits in k.launches)
        # a launch site's literal for an optional constexpr: whether it is given (None: its value is left to the
        # defaults, which no entry of that variant reads)
        launches = tuple(tuple((n, v) for n, v in lits if not (n in self.given_names and v is None))
                         + tuple((self.given_names[n], int(v is not None)) for n, v in lits
                                 if n in self.given_names and n in self.optional_values)
                         for lits in launches)
        given = tuple(Param(flag, "const", self.pos(fn.name), const_type="bool", given_of=ptr)
                      for ptr, flag in sorted(self.given_names.items()))
        # a seed is an integer (Triton asserts it): an int argument is int32 where it fits, as Triton types it
        params = tuple(replace(p, kind="scalar", dtype="i32") if p.kind == "unknown" and p.name in self.seed_params
                       else p for p in k.params)
        notes = tuple(("CT112", f"the decorator `@{node_code(d.decorator)}` above `@triton.jit` is a host-side "
                       "wrapper: the port is the kernel's device code; a launch through the wrapper is routed only "
                       "where the router recognizes it (else it runs Triton with a warning, or is refused with "
                       "strict=True); its tuning configurations, if any, are not read", self.pos(d))
                      for d in getattr(self, "host_decorators", ()))
        notes += self._configured_notes()
        notes += tuple(("CT122", text, pos) for _, (text, pos) in sorted(self.__dict__.get("assumed_uses", {}).items()))
        k = replace(k, params=params + given, body=pre + k.body, frontend="triton", launches=launches,
                    strings=tuple(sorted(self.string_consts.items())), dtype_consts=tuple(self.dtype_consts),
                    notes=notes, pointer_offsets=tuple(sorted({off for _, off in self.ptr_vars.values() if off})))
        _check_no_pointer_left(k.body)
        return k

    def _optional_function_param(self, func: cst.BaseExpression) -> str | None:
        """The kernel's constexpr parameter a call names (directly, or through a helper's parameter it was passed
        to) where the kernel tests it against None (optional_values): a function the launch may pass."""
        if not isinstance(func, cst.Name):
            return None
        name = func.value
        for frame in reversed(getattr(self, "subst", None) or []):  # a helper's parameter: what it was passed
            if name in frame:
                bound = frame[name]
                if not isinstance(bound, Name):
                    return None
                name = bound.id
                break
        return name if name in getattr(self, "optional_values", ()) and name in self.constexpr_types else None

    def _note_configured(self, name: str, pos: Pos) -> None:
        """A call of a function alias the module chose by environment variables (ModuleInfo.configured_by): the
        port follows their defaults (module_config.py), which the kernel's warning says (_configured_notes)."""
        uses = self.__dict__.setdefault("configured_uses", {})
        uses.setdefault((self.info.path, name), (self.info.configured_by[name], self.info.aliases.get(name, name), pos))

    def _configured_notes(self) -> tuple:
        return tuple(("CT118", f"`{name}` is `{target}`, the function its module chooses "
                      f"when {' and '.join(f'`{v}`' for v in env)} {'is' if len(env) == 1 else 'are'} not set: the "
                      "port is made for the defaults and never reads the environment (setting "
                      f"{'it' if len(env) == 1 else 'them'} changes what Triton runs, not the port)", pos)
                     for (_, name), (env, target, pos) in sorted(self.__dict__.get("configured_uses", {}).items()))

    def _host_descriptor_params(self, fn: cst.FunctionDef) -> None:
        """Parameters passed a host-made tensor descriptor (`TensorDescriptor(base, shape, strides, block_shape)`
        made by the launcher): the descriptor's base pointer is the parameter (a Triton pointer); its extents and
        strides (the last must be 1) are hidden i32 scalars, its block extents hidden int constants, all read
        by the Python wrapper from the descriptor object at launch (Param.desc_of). A block extent that every
        autotune `pre_hook` (`nargs["x_desc"].block_shape = [nargs["BLOCK_M"], ...]`), else every launch site
        (`TensorDescriptor.from_tensor(x, [BLOCK_M, ...])` launched with `BLOCK_M=BLOCK_M`), sets to one of the
        kernel's constexprs is that constexpr instead: the wrapper checks the launch's block shape equals it."""
        self.desc_parts: dict[str, tuple] = {}
        self.desc_hidden: list[Param] = []
        found = _host_descriptors(self, fn)
        if not found:
            return
        kernel = fn.name.value
        names = [p.name.value for p in fn.params.params]
        constexprs = {p.name.value for p in fn.params.params if self._is_constexpr(p.annotation)}
        taken = self._function_locals(fn) | set(names)
        pos = self.pos(fn.name)

        def fresh(base: str) -> str:
            while base in taken:
                base += "_"
            taken.add(base)
            return base
        launches = self.info.launches.get(kernel, [])
        for name in [n for n in names if n in found]:
            rank = found[name]
            if rank < 1 or rank > 5:
                raise fail("TTR-DESC", f"`{name}` is used as a tensor descriptor of several ranks (or of rank "
                           f"{rank}): a host descriptor has one rank, 1 to 5", self.pos(fn))
            hooks = [e for e in getattr(self, "desc_hooks", {}).get(name, []) if len(e) == rank]
            sites = [(e, i) for e, i in getattr(self, "desc_launches", {}).get(kernel, {}).get(name, [])
                     if len(e) == rank]
            evidence = hooks or [e for e, _ in sites]
            extents = tuple(fresh(f"{name}_extent{i}") for i in range(rank))
            strides = tuple(fresh(f"{name}_pitch{i}") for i in range(rank - 1))
            block = []
            for i in range(rank):
                seen = {e[i] for e in evidence}
                link = next(iter(seen)) if len(seen) == 1 else None
                if link is not None and link[0] == "link" and link[1] in constexprs:
                    block.append(link[1])
                    continue
                hidden = fresh(f"{name}_block{i}")
                block.append(hidden)
                self.desc_hidden.append(Param(hidden, "const", pos, const_type="int", desc_of=name))
                if not hooks:  # a launch site's literal block extent: that launch's value of the constant
                    for e, index in sites:
                        if e[i] is not None and e[i][0] == "value" and index < len(launches):
                            launches[index][("desc", hidden)] = e[i][1]
            self.desc_hidden += [Param(n, "scalar", pos, dtype="i32", desc_of=name) for n in extents + strides]
            self.desc_parts[name] = (extents, strides, tuple(block))
            self.pointer_params.add(name)
            self.desc_vars[name] = _Desc(name, tuple(Name(n, pos) for n in extents),
                                         tuple(Name(n, pos) for n in strides), tuple(Name(n, pos) for n in block),
                                         "padding::Zero", pos)

    def _param(self, p: cst.Param) -> Param:
        name = p.name.value
        if self._is_constexpr(p.annotation):
            return Param(name, "const", self.pos(p), const_type=self.constexpr_types.get(name, "int"))
        if name in getattr(self, "desc_parts", {}):
            return Param(name, "array", self.pos(p), rank=1, pointer=True, flat=True, descriptor=self.desc_parts[name])
        if name in self.pointer_params:
            return Param(name, "array", self.pos(p), rank=1, pointer=True, flat=True)
        ann = p.annotation.annotation if p.annotation else None
        if isinstance(ann, cst.Name) and ann.value in ("int", "float", "bool"):
            return Param(name, "scalar", self.pos(p), dtype={"int": "i32", "float": "f32", "bool": "bool"}[ann.value])
        names = [q.name.value for q in self._current_fn.params.params]
        if names.index(name) in self.info.float_args.get(self._current_fn.name.value, ()):
            return Param(name, "scalar", self.pos(p), dtype="f32")  # a launch site passes a float: fp32, as Triton
        if names.index(name) in self.info.int_args.get(self._current_fn.name.value, ()):
            # a launch site passes an int: int32, as Triton (unless the kernel uses it as an array or a flag:
            # passes/infer.classify_params)
            return Param(name, "unknown", self.pos(p), dtype="i32")
        return Param(name, "unknown", self.pos(p))

    def _params(self, fn: cst.FunctionDef) -> list[Param]:
        own = [self._param(p) for p in fn.params.params]
        if not getattr(self, "desc_hidden", None):
            return own
        # a host descriptor's hidden parts after the kernel's own parameters: per descriptor its extents and
        # strides (scalars), then the block constants
        order = {n: i for i, n in enumerate(p.name.value for p in fn.params.params)}
        hidden = sorted(self.desc_hidden, key=lambda q: (order[q.desc_of], q.kind == "const"))
        params = own + hidden
        # a launch site's literal block extent (keyed by the hidden constant's name while scanning): its index
        for lits in self.info.launches.get(fn.name.value, []):
            for key in [k for k in lits if isinstance(k, tuple)]:
                v = lits.pop(key)
                lits[next(i for i, q in enumerate(params) if q.name == key[1])] = v
        return params

    # ------------------------------------------------------------------ statements
    def small(self, s: cst.BaseSmallStatement, last: bool = False):
        self.current_small = s  # (read by _bound_each_iteration)
        target = s.targets[0].target if isinstance(s, cst.Assign) and len(s.targets) == 1 else \
            s.target if isinstance(s, cst.AnnAssign) and s.value is not None else None
        if isinstance(target, cst.Name) and _is_string_choice(s.value):
            # `MOD: tl.constexpr = ".cg" if STREAMING else ""`: a cache modifier chosen at compile time, a hint
            # the port does not use (tl.load / tl.store ignore `cache_modifier=`); the name holds no value here
            self.string_locals.add(target.value)
            return self._flush([])
        if isinstance(s, cst.Expr) and isinstance(s.value, cst.Call) and self.dotted(s.value.func) in HINT_CALLS:
            # `tl.multiple_of(offs, 16)` as a statement: a hint whose value is dropped (Triton's returns the
            # hinted value, unused here), so nothing
            return self._flush([])
        if isinstance(s, cst.AnnAssign) and isinstance(target, cst.Name) and self.subst \
                and self._is_constexpr(s.annotation) and self._bound_once(target.value):
            value = self.expr(s.value)
            if isinstance(value, Lit) and not self.pending:
                # `_dim: tl.constexpr = dim` in a helper whose `dim` is a literal argument: a Python value when
                # Triton compiles, read as that literal (`x.shape[_dim]`, `axis=_dim`)
                self.subst[-1][target.value] = value
                return []
            return self._flush([Assign((self.local(target.value, pos := self.pos(s)),), value, pos, one_line(s))])
        if isinstance(s, cst.Expr) and isinstance(s.value, cst.Call) \
                and self.dotted(s.value.func) == f"{TL}.inline_asm_elementwise":
            # asm called for its effect alone (PDL's griddepcontrol, dropped: ptx.py): its statements, its value unread
            self.expr(s.value)
            return self._flush([])
        if isinstance(s, cst.Raise) and id(s) in self._fall_through_pos and self._fall_through_pos[id(s)][0] is s:
            # the end of a helper without a `return` (helper_returns.py): its name, for the entry's diagnostic
            helper = s.exc.args[0].value.evaluated_value
            pos = self._fall_through_pos[id(s)][1]
            return self._flush([Eval(Op("compile_error", (), pos, (("helper", helper), ("text", "")), "TTR-RAISE"),
                                     pos, f"(helper {helper} reaches its end without a return)")])
        if isinstance(s, cst.Raise):  # reached only where Triton's compilation fails: no entry there
            text = node_code(s.exc).strip() if s.exc is not None else "raise"
            return self._flush([Eval(Op("compile_error", (), self.pos(s), (("text", text),), "TTR-RAISE"),
                                     self.pos(s), one_line(s))])
        pos = self.pos(s)
        if isinstance(s, cst.Assign) and len(s.targets) == 1 and isinstance(s.targets[0].target, cst.Name) \
                and isinstance(s.value, cst.Name) and s.value.value == "None":
            # `mask = None` / `b_g = None` in the arm of a constexpr `if` (the other arm computes it): Triton
            # compiles each arm apart, and a None value can only be passed as an absent `mask=` / `other=`,
            # tested (`is None`) or left unread there. The name holds a None value (model.ir.NoneTy) that has no
            # Rust value; inference refuses any other read of it (that specialization has no entry)
            target = s.targets[0].target.value
            self._not_ptr_target(target, pos)
            return self._flush([Assign((self.local(target, pos),), Op("none_value", (), pos), pos, one_line(s))])
        if isinstance(s, cst.Assign) and not self.subst and len(s.targets) == 1 \
                and isinstance(s.targets[0].target, cst.Name) \
                and self.value_rebinds.get(s.targets[0].target.value) is s:
            # `cache_indices = tl.load(cache_indices + bid)`: the pointer read, then the name is the value (a local
            # of its own: the parameter keeps its name)
            name = s.targets[0].target.value
            value = self.expr(s.value)
            local = self._fresh_arm_local(f"{name}_value")
            self.value_alias[name] = local
            return self._flush([Assign((local,), value, pos, one_line(s))])
        if isinstance(s, cst.Assign) and len(s.targets) == 1 and isinstance(s.targets[0].target, cst.Name):
            value = self.expr(s.value)
            if isinstance(value, _Ptr):
                return self._flush(self._assign_ptr(s.targets[0].target.value, value, pos, one_line(s)))
            if isinstance(value, _BlockPtr):
                return self._flush(self._assign_block_ptr(s.targets[0].target.value, value, pos))
            if isinstance(s.targets[0].target, cst.Name) and self._block_var(s.targets[0].target.value) is not None:
                raise fail("TTR-BLOCKPTR", f"`{s.targets[0].target.value}` holds a block pointer and is assigned "
                           "another value", pos)
            if isinstance(value, _Desc):
                name = s.targets[0].target.value
                value = self._desc_snapshot(name, value, pos)
                if name in self.desc_vars and self.desc_vars[name] != value:
                    # (the same statement converted again, in each arm after an early `return`, is the same one)
                    raise fail("TTR-DESC", f"`{name}` is assigned a tensor descriptor and another value: a name "
                               "holding a descriptor is assigned once in a ported kernel; give each descriptor its "
                               "own name", pos)
                self.desc_vars[name] = value
                return self._flush([])
            if isinstance(s.targets[0].target, cst.Name) and s.targets[0].target.value in self.desc_vars:
                raise fail("TTR-DESC", f"`{s.targets[0].target.value}` holds a tensor descriptor and is assigned "
                           "another value", pos)
            self._not_ptr_target(s.targets[0].target.value, pos)
            return self._flush([Assign((self.local(s.targets[0].target.value, pos),), value, pos, one_line(s))])
        if isinstance(s, cst.Assign) and len(s.targets) == 1 and _pointer_tuple(self, s):
            return self._flush(self._assign_pointer_tuple(s, pos))
        if isinstance(s, cst.Assign) and len(s.targets) == 1 and isinstance(s.targets[0].target, (cst.Tuple, cst.List)) \
                and isinstance(s.value, cst.Call) \
                and all(isinstance(t.value, cst.Name) for t in s.targets[0].target.elements):
            return self._flush(self._assign_returned_tuple(s, pos))
        if isinstance(s, cst.AugAssign) and isinstance(s.target, cst.Name):
            cur = self.expr(s.target)
            if isinstance(cur, _Ptr):
                if not isinstance(s.operator, (cst.AddAssign, cst.SubtractAssign)):
                    raise fail("CT100", "only `+=` and `-=` apply to a pointer", pos)
                value = self._ptr_add(cur, self.expr(s.value), pos, subtract=isinstance(s.operator, cst.SubtractAssign))
                return self._flush(self._assign_ptr(s.target.value, value, pos, one_line(s)))
            if isinstance(s.operator, cst.AddAssign):
                added = self.expr(s.value)
                if isinstance(added, _Ptr):
                    # `t_ptr += t_base` where `t_ptr` held offsets: an int plus a pointer is a pointer (Triton's
                    # `__radd__`); the name's offsets become the sum, the pointer's base its own from here
                    return self._flush(self._assign_ptr(s.target.value, self._ptr_add(added, cur, pos), pos,
                                                        one_line(s)))
                # (converted once: the value's pending statements and fresh names are made here only)
                value = self._binop("+", cur, added, pos)
                return self._flush([Assign((self.local(s.target.value, pos),), value, pos, one_line(s))])
        if isinstance(s, cst.Assert):
            # Triton 3.6 compiles a Python `assert` as `tl.device_assert(test, msg)` (code_generator.visit_Assert),
            # constexpr conditions included, and device_assert emits nothing unless the kernel is compiled with
            # debug (TRITON_DEBUG=1 or `debug=True`): no statement, as device_assert
            return []
        if isinstance(s, cst.Expr) and isinstance(s.value, cst.Call) and self.dotted(s.value.func) in NO_OP_CALLS:
            if self.dotted(s.value.func) == f"{TL}.static_assert" and static_false(s):
                # `tl.static_assert(False, "unsupported")` in a constexpr arm: as a raise, Triton compiles no
                # kernel where it is reached
                return self._flush([Eval(Op("compile_error", (), self.pos(s), (("text", node_code(s.value).strip()),),
                                            "TTR-RAISE"), self.pos(s), one_line(s))])
            return []
        return super().small(s, last)

    def _assign_pointer_tuple(self, s: cst.Assign, pos: Pos) -> list:
        """`x_ptr, w_ptr, n = q_ptr, qw_ptr, n_q` (no target read by a value, _pointer_tuple): every value first,
        then each name bound as its own assignment would bind it."""
        pairs = _tuple_pairs(s.targets[0].target, s.value)
        values = [self.expr(v) for _, v in pairs]
        out: list = []
        for (name, _), value in zip(pairs, values):
            if isinstance(value, _Ptr):
                out += self._assign_ptr(name, value, pos, one_line(s) if not out else "")
            elif isinstance(value, (_BlockPtr, _Desc)):
                raise fail("CT100", "a block pointer or tensor descriptor in a tuple assignment", pos)
            else:
                self._not_ptr_target(name, pos)
                out.append(Assign((self.local(name, pos),), value, pos, one_line(s) if not out else ""))
        return out

    def _assign_returned_tuple(self, s: cst.Assign, pos: Pos) -> list:
        """`ptrs, mask = tile_ptrs(q_ptr + off, ...)`: a helper's returned tuple, whose pointers are bound as a
        pointer assignment binds them (the other items as values)."""
        names = [t.value.value for t in s.targets[0].target.elements]
        value = self.expr(s.value)
        if not (isinstance(value, TupleExpr) and len(value.items) == len(names)
                and any(isinstance(x, _Ptr) for x in value.items)):
            return [Assign(self._targets(s.targets[0].target), value, pos, one_line(s))]
        out: list = []
        for name, item in zip(names, value.items):
            text = "" if out else one_line(s)
            if isinstance(item, _Ptr):
                out += self._assign_ptr(name, item, pos, text)
            elif isinstance(item, (_BlockPtr, _Desc)):
                raise fail("CT100", "a block pointer or tensor descriptor in a returned tuple", pos)
            else:
                self._not_ptr_target(name, pos)
                out.append(Assign((self.local(name, pos),), item, pos, text))
        return out

    def _not_ptr_target(self, name: str, pos: Pos) -> None:
        model = self._model_name(name)
        if model in self.ptr_vars:
            raise fail("CT100", f"`{name}` holds a pointer and is assigned a non-pointer value: a name keeps one "
                       "kind in a ported kernel", pos)

    def _model_name(self, name: str) -> str:
        for scope in reversed(self.subst):
            if name in scope and isinstance(scope[name], Name):
                return scope[name].id
        if self.subst and self.renames:  # a helper's new local: its prefixed name (`local`), never a kernel's
            return self.renames[-1][0] + name
        return self.ptr_alias.get(name, name) if not self.subst else name

    def _assign_ptr(self, target: str, value: _Ptr, pos: Pos, text: str = "") -> list:
        model = self._model_name(target)
        if not self.subst and target in self.ptr_poisoned:
            del self.ptr_poisoned[target]  # bound anew: one tensor again
        pre: list = []
        if isinstance(value.base, ArmBases):  # a pointer chosen at run time: the choice made here, in locals
            pre, arms = self._stable_arms(target, value.base, pos)
            value = _Ptr(arms, value.offsets, value.pos)
        if isinstance(value.base, _Addr) and not isinstance(value.base.addr, Name):
            # a loaded (or computed) address: held in a local, so each access reads the value it had here (a
            # name already holding such a pointer of that element type keeps its local: the address is a value)
            held = self.ptr_vars.get(model, (None,))[0]
            if isinstance(held, _Addr) and isinstance(held.addr, Name) and held.elem == value.base.elem:
                base = held
            else:
                taken = self._function_locals(self._current_fn) | set(self.ptr_vars) | \
                    set(self.offset_names.values()) | self.addr_locals
                local = f"{target}_addr"
                while local in taken:
                    local += "_"
                self.addr_locals.add(local)
                base = _Addr(Name(local, pos), value.base.elem)
            pre = [Assign((base.addr.id,), value.base.addr, pos, text)]
            value, text = _Ptr(base, value.offsets, value.pos), ""
        return pre + self._bind_ptr(target, model, value, pos, text)

    def _bound_each_iteration(self, target: str) -> bool:
        """A pointer name bound to another tensor at the top level of a (non-nested) `for` body, never read in the body
        before it (nor by its own value): each iteration reads the binding it makes, so it is a new model name as
        outside loops (`src_ptr = k_pe_ptr + ...` in a second loop after `src_ptr = kv_c_ptr + ...` in a first).
        After the loop the name reads that binding, which exists only where the loop ran: read there, refused."""
        bodies = getattr(self, "loop_bodies", [])
        stmt = getattr(self, "current_small", None)
        if len(self.loops) != 1 or len(bodies) != 1 or not isinstance(stmt, cst.Assign):
            return False
        lines = list(bodies[0].body) if isinstance(bodies[0], cst.IndentedBlock) else []
        at = next((i for i, line in enumerate(lines) if isinstance(line, cst.SimpleStatementLine)
                   and len(line.body) == 1 and line.body[0] is stmt), None)
        if at is None:
            return False
        return not any(isinstance(n, cst.Name) and n.value == target for x in lines[:at] + [stmt.value] for n in walk_nodes(x))

    def _bind_ptr(self, target: str, model: str, value: _Ptr, pos: Pos, text: str) -> list:
        local_base = not isinstance(value.base, str)  # a cast or loaded pointer: a new binding of the name
        if model in self.ptr_vars and self.ptr_vars[model][0] != value.base and not self.subst \
                and (not self.loops or self._bound_each_iteration(target)) \
                and (model not in self.offset_names or local_base):
            # a kernel-level name rebound to a pointer into another tensor, outside loops: a new model name
            # (the tensor is known where each binding is read)
            taken = self._function_locals(self._current_fn) | set(self.ptr_vars) | set(self.offset_names.values())
            fresh = f"{target}_{value.base}"
            while fresh in taken:
                fresh += "_"
            self.ptr_alias[target] = fresh
            self.ptr_vars[fresh] = (value.base, fresh)
            self._live(fresh)
            return [Assign((fresh,), value.offsets if value.offsets is not None else Lit(0, pos), pos, text)]
        recast = self.subst and local_base and not self.loops and target in self._helper_cast_only()
        if model in self.ptr_vars and self.ptr_vars[model][0] != value.base and not recast:
            raise fail("CT100", f"pointer `{target}` is given a pointer into another tensor (`{value.base}`, "
                       f"before `{self.ptr_vars[model][0]}`): a ported pointer keeps one base", pos)
        if model in self.ptr_vars and model in self.offset_names:  # a pointer parameter advanced in place
            off = self.offset_names[model]
            self.ptr_vars[model] = (value.base, off)
            self._live(model)
            return [Assign((off,), value.offsets if value.offsets is not None else Lit(0, pos), pos, text)]
        local = self.local(target, pos)
        self.ptr_vars[local] = (value.base, None if recast and value.offsets is None else local)
        self._live(local)
        if self.subst and target in self.subst[-1]:  # a helper's local: its name now reads the pointer
            self.subst[-1][target] = Name(local, pos)
        return [Assign((local,), value.offsets if value.offsets is not None else Lit(0, pos), pos, text)]

    def for_stmt(self, s: cst.For):
        it = s.iter
        d = self.dotted(it.func) if isinstance(it, cst.Call) else None
        if d == f"{TL}.static_range":
            unrolled = self._static_range_unrolled(s)
            if unrolled is not None:
                return unrolled
        if d in (f"{TL}.range", f"{TL}.static_range"):
            # tl.range's pipelining keywords are schedule hints (tileiras schedules on its own); a static_range
            # that _static_range_unrolled leaves is a loop here with the same values
            args = [a for a in it.args if a.keyword is None]
            s = s.with_changes(iter=it.with_changes(func=cst.Name("range"), args=args))
            it, d = s.iter, "range"
        if d in ("range", "builtins.range") and len(it.args) == 3 and isinstance(s.target, cst.Name):
            step = self._eval_const(it.args[2].value)
            if isinstance(step, int) and not isinstance(step, bool) and step < 0:
                s = self._counting_down(s, -step)
            elif self._sign(it.args[2].value) == -1:
                neg = it.args[2].value  # the step's size: `BS` of `-BS`, else `-(step)`
                minus = isinstance(neg, cst.UnaryOperation) and isinstance(neg.operator, cst.Minus)
                s = self._counting_down(s, f"({node_code(neg.expression)})" if minus else f"(-({node_code(neg)}))")
        bodies = self.__dict__.setdefault("loop_bodies", [])
        bodies.append(s.body)  # (read by _bound_each_iteration)
        live = set(getattr(self, "ptr_live", ()))
        try:
            return super().for_stmt(s)
        finally:
            bodies.pop()
            self.ptr_live = live  # a binding the body makes is not defined where the loop runs no iteration

    def while_stmt(self, s: cst.While):
        live = set(getattr(self, "ptr_live", ()))
        try:
            return super().while_stmt(s)
        finally:
            self.ptr_live = live

    def _live(self, model: str) -> None:
        if hasattr(self, "ptr_live"):
            self.ptr_live.add(model)

    def _static_range_unrolled(self, s: cst.For) -> list | None:
        """`for i in tl.static_range(a, b, c)` with literal bounds (after a helper's constexpr arguments are
        substituted: Philox's `n_rounds`) as Triton compiles it: the body once per value, `i = value` first
        where the body reads `i`. tileiras does not unroll a loop of constant trips (the 10 Philox rounds of
        `tl.rand` stayed a loop, about three times Triton's instructions per draw). Left a loop: bounds that
        are not literals (a kernel constexpr is a const generic here), more than MAX_UNROLLED_TRIPS trips,
        a `break` / `continue` / `return` in the body, an `else`."""
        it = s.iter
        if s.orelse is not None or not isinstance(s.target, cst.Name) or any(a.keyword is not None for a in it.args) \
                or not 1 <= len(it.args) <= 3:
            return None
        if any(isinstance(n, (cst.Break, cst.Continue, cst.Return)) for n in walk_nodes(s.body)):
            return None
        pending = self.pending
        self.pending = []
        try:
            bounds = [self.expr(a.value) for a in it.args]
            clean = not self.pending
        finally:
            self.pending = pending
        if not clean or not all(isinstance(b, Lit) and type(b.value) is int for b in bounds) \
                or (len(bounds) == 3 and bounds[2].value == 0):
            return None
        trips = range(*(b.value for b in bounds))
        if len(trips) > MAX_UNROLLED_TRIPS:
            return None
        name = s.target.value
        reads = any(isinstance(n, cst.Name) and n.value == name for n in walk_nodes(s.body))
        out: list = []
        for value in trips:
            if reads:
                first = cst.parse_statement(f"{name} = {value}\n")
                for n in walk_nodes(first):  # no source position: the loop's own
                    self._stand_in_pos[id(n)] = (n, s)
                out += self.stmts([first], False)
            out += self.block(s.body)
        return out

    def _sign(self, node: cst.BaseExpression, depth: int = 0) -> int | None:
        """The sign of a loop step wherever the kernel compiles (1, -1; None: not known, or zero): an int
        constant; a constexpr the function also uses as a tile size (`tl.arange(0, BS)`: Triton compiles only
        where it is a positive power of two), in a kernel or a helper; `-x`, `x * y`, `x + y` of those; a local
        assigned once from one (`step = -BS`)."""
        v = self._eval_const(node)
        if isinstance(v, int) and not isinstance(v, bool):
            return (v > 0) - (v < 0) or None
        if depth > 8:
            return None
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            a = self._sign(node.expression, depth + 1)
            return -a if a else None
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Add)):
            a, b = self._sign(node.left, depth + 1), self._sign(node.right, depth + 1)
            if not a or not b:
                return None
            return a * b if isinstance(node.operator, cst.Multiply) else (a if a == b else None)
        if isinstance(node, cst.Name):
            return self._name_sign(node.value, depth)
        return None

    def _bound_once(self, name: str) -> bool:
        """`name` has one binding in the function converted now (its parameters included)."""
        _, fn = self._innermost_fn()
        if any(p.name.value == name for p in fn.params.params):
            return False
        return len([n for n in walk_nodes(fn.body) if isinstance(n, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For))
                    and any(isinstance(t, cst.Name) and t.value == name for t in _bound_targets(n))]) == 1

    def _innermost_fn(self) -> tuple["_TritonConverter", cst.FunctionDef]:
        """The function whose statements are converted now (an inlined helper's, else the kernel's), with the
        converter of its module (a helper may come from another)."""
        if self.inlining:
            name = self.inlining[-1]
            fn = self.info.helpers.get(name) or self.info.kernels.get(name)
            if fn is not None:
                return self.info.helper_home.get(name) or self, fn
        return self, self._current_fn

    def _name_sign(self, name: str, depth: int) -> int | None:
        home, fn = self._innermost_fn()
        params = {p.name.value for p in fn.params.params}
        if name in params:
            sized = any(isinstance(n, cst.Call) and home.dotted(n.func) == f"{TL}.arange" and len(n.args) == 2
                        and home._eval_const(n.args[0].value) == 0 and isinstance(n.args[1].value, cst.Name)
                        and n.args[1].value.value == name for n in walk_nodes(fn))
            return 1 if sized else None
        bound = [n for n in walk_nodes(fn.body) if isinstance(n, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For))
                 and any(isinstance(t, cst.Name) and t.value == name for t in _bound_targets(n))]
        if len(bound) == 1 and isinstance(bound[0], (cst.Assign, cst.AnnAssign)) and bound[0].value is not None \
                and not (isinstance(bound[0], cst.Assign) and len(bound[0].targets) != 1):
            return self._sign(bound[0].value, depth + 1)
        return None

    def _counting_down(self, s: cst.For, step: int | str) -> cst.For:
        """`for t in range(a, b, -s)` as the port's loops count up: `for i in range(0, (a - b + s - 1) // s)`
        with `t = a - i * s` first in the body (no iteration when a <= b, as in Python)."""
        start, stop = (node_code(a.value) for a in s.iter.args[:2])
        i = f"{s.target.value}_step"
        taken = {n.value for n in walk_nodes(self._innermost_fn()[1]) if isinstance(n, cst.Name)}
        while i in taken:
            i += "_"
        less = step - 1 if isinstance(step, int) else f"{step} - 1"
        count = cst.parse_expression(f"range(0, (({start}) - ({stop}) + {less}) // {step})")
        first = cst.parse_statement(f"{s.target.value} = ({start}) - {i} * {step}\n")
        body = s.body.with_changes(body=[first] + list(s.body.body))
        target = cst.Name(i)
        loop = s.with_changes(target=target, iter=count, body=body)
        # the rewritten nodes have no source position: a diagnostic on one points at the loop it came from
        for node, source in ((loop, s), (body, s.body), (target, s.target), (count, s.iter), (first, s)):
            for n in ([node] if node is loop or node is body else walk_nodes(node)):
                self._stand_in_pos[id(n)] = (n, source)
        return loop

    @property
    def _stand_in_pos(self) -> dict:
        """id(rewritten node) -> (the node, the source node whose position it takes)."""
        if "_stand_ins" not in self.__dict__:
            self._stand_ins: dict = {}
        return self._stand_ins

    @property
    def _fall_through_pos(self) -> dict:
        """id(the marker that ends a helper path without a `return`) -> (the marker, the call's position)."""
        if "_fall_throughs" not in self.__dict__:
            self._fall_throughs: dict = {}
        return self._fall_throughs

    def pos(self, node: cst.CSTNode) -> Pos:
        found = self._stand_in_pos.get(id(node))
        return super().pos(found[1] if found is not None and found[0] is node else node)

    # ------------------------------------------------------------------ expressions
    def expr(self, node: cst.BaseExpression):
        if isinstance(node, cst.Name) and node.value in self.string_locals and not self.subst:
            raise fail("CT100", f"`{node.value}` holds a string (a cache modifier): only `cache_modifier=` / "
                       "`eviction_policy=` of tl.load / tl.store take one", self.pos(node))
        test = _none_test(node)
        if test is not None:
            return self._given(test[0], test[1], self.pos(node))
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1 \
                and isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot)):
            # `dtype is tl.bfloat16`: Triton's dtypes are compared by identity as by value (one object per
            # dtype), so `is` / `is not` between dtypes is `==` / `!=`; any other `is` stays refused
            pos = self.pos(node)
            a, b = self.expr(node.left), self.expr(node.comparisons[0].comparator)
            if not (self._is_dtype_value(a) or self._is_dtype_value(b)):
                raise fail("CT100", "`is` / `is not` compares dtypes or tests None only", pos)
            op = "==" if isinstance(node.comparisons[0].operator, cst.Is) else "!="
            return self._op(f"operator:{op}", (a, b), pos, (("pred", op),))
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and self.string_consts:
            # `reduction == "mean"` of a string constexpr: its index in the kernel's list of strings
            l, c = node.left, node.comparisons[0]
            pair = (l, c.comparator) if isinstance(c.comparator, cst.SimpleString) else (c.comparator, l)
            name = pair[0].value if isinstance(pair[0], cst.Name) else None
            if name is not None and any(name in scope for scope in self.subst):
                # a helper's parameter bound to the kernel's string constexpr (`_activate(x, ACTIVATION)`)
                bound = self.expr(pair[0])
                name = bound.id if isinstance(bound, Name) else None
            if name in self.string_consts \
                    and isinstance(pair[1], cst.SimpleString) and isinstance(c.operator, (cst.Equal, cst.NotEqual)):
                pos = self.pos(node)
                op = "==" if isinstance(c.operator, cst.Equal) else "!="
                if pair[1].evaluated_value not in self.string_consts[name]:
                    # a string no launch gives (a helper's other arm): the constant never equals it
                    return Lit(op == "!=", pos)
                index = self.string_consts[name].index(pair[1].evaluated_value)
                return self._op(f"operator:{op}", (Name(name, pos), Lit(index, pos)), pos, (("pred", op),))
        if isinstance(node, cst.BooleanOperation) and not self._const_test(node):
            # `and` / `or` of runtime scalars: Triton's logical and / or of booleans (tensors refuse them)
            op = "&" if isinstance(node.operator, cst.And) else "|"
            pos = self.pos(node)
            a, b = self.expr(node.left), self.expr(node.right)
            return self._op(f"operator:{op}", (self._truth(a, pos), self._truth(b, pos)), pos)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not) \
                and not self._const_test(node.expression):
            pos = self.pos(node)  # `not flag` of a runtime scalar: Triton's logical not
            return self._op("operator:^", (self._truth(self.expr(node.expression), pos), Lit(True, pos)), pos)
        if isinstance(node, cst.IfExp):
            pos = self.pos(node)
            test, a, b = self.expr(node.test), self.expr(node.body), self.expr(node.orelse)
            if isinstance(a, _Ptr) or isinstance(b, _Ptr):
                # `p = x + i * s if last else x + j * s`: pointers into one tensor, chosen by a condition: the
                # chosen offsets; pointers into different tensors: a pointer chosen at run time (pointer_arms.py)
                if not (isinstance(a, _Ptr) and isinstance(b, _Ptr)):
                    raise fail("CT100", "a conditional expression choosing between a pointer and a value", pos)
                if a.base != b.base or isinstance(a.base, ArmBases):
                    return self._chosen_pointer(test, a, b, pos, tile=False)
                zero = Lit(0, pos)
                return _Ptr(a.base, Op("ifexp", (test, a.offsets if a.offsets is not None else zero,
                                                 b.offsets if b.offsets is not None else zero), pos), pos)
            return Op("ifexp", (test, a, b), pos)
        if isinstance(node, cst.Name) and node.value == "__ptr_offsets__" and self.subst \
                and node.value in self.subst[-1]:
            # a pointer's offsets while it is indexed (subscript): the offsets themselves, also where they are a
            # local named as the pointer (`p[:, None]` of a pointer variable `p`), never the pointer again
            return self.subst[-1][node.value]
        if isinstance(node, cst.Name) and node.value in self.helper_values:
            return self.helper_values[node.value]
        if isinstance(node, cst.Name) and node.value in self.desc_vars:
            return self.desc_vars[node.value]
        if isinstance(node, cst.Name) and self._block_var(node.value) is not None:
            if node.value in self.block_poisoned:
                raise fail("TTR-BLOCKPTR", f"`{node.value}` holds a block pointer of another block shape depending "
                           "on the arm the `if` before took: a ported block pointer has one block shape (give each "
                           "its own name)", self.pos(node))
            return self.block_vars[node.value]
        if isinstance(node, cst.Name) and not self.subst and node.value in self.value_alias:
            return Name(self.value_alias[node.value], self.pos(node))  # rebound to a value (_value_rebinds)
        if isinstance(node, cst.Name) and node.value not in ("True", "False"):
            e = super().expr(node)
            if isinstance(e, Name) and not self.subst and e.id in self.ptr_poisoned:
                raise fail("CT100", f"`{e.id}` points into {self.ptr_poisoned[e.id]} depending on the path the `if` "
                           "before took: a ported pointer reads one tensor (give each binding its own name)",
                           e.pos)
            if isinstance(e, Name) and not self.subst and e.id in self.ptr_alias:
                e = Name(self.ptr_alias[e.id], e.pos)
            if isinstance(e, Name) and e.id in self.ptr_vars:
                base, off = self.ptr_vars[e.id]
                if not self.subst and node.value in self.cast_only:
                    off = None  # only ever assigned casts of pointers (`w = w.to(tl.pointer_type(T))`): no offsets
                return _Ptr(base, Name(off, e.pos) if off is not None else None, e.pos)
            return e
        return super().expr(node)

    def _given(self, node: cst.BaseExpression, given: bool, pos: Pos):
        """`ptr is not None` (`given`) / `ptr is None`: a hidden bool constant per pointer parameter (Param.given_of),
        as Triton decides the test at compile time (a None argument is specialized as a constant). The same for
        a constexpr or scalar parameter the kernel tests (optional_values): there, each value of the constant
        is a structural variant, and the variant where it is None refuses any other read of the parameter."""
        ptr = self.expr(node)
        if isinstance(ptr, Name) and ptr.id == "None":  # a helper's `None` default: decided here
            return Lit(not given, pos)
        if isinstance(ptr, Lit) and not isinstance(ptr.value, str):  # a helper given a literal: never None
            return Lit(given, pos)
        params = {p.name.value for p in self._current_fn.params.params}
        if isinstance(ptr, Name) and ptr.id not in params:
            # a local (`mask = None` in one constexpr arm): decided per specialization by inference
            return Op("is_none", (ptr,), pos, (("given", given),))
        base = ptr.base if isinstance(ptr, _Ptr) and ptr.base in self.pointer_params else \
            ptr.id if isinstance(ptr, Name) and ptr.id in self.optional_values else None
        if isinstance(ptr, Name) and ptr.id in self.string_consts:
            raise fail("CT100", f"`{node_code(node).strip()}`: a string or dtype constexpr tested against None is not "
                       "supported (its value is an index into the strings the launch sites give)", pos)
        if base is None and isinstance(ptr, Name) and ptr.id not in self.pointer_params \
                and ptr.id not in _assigned_names(self._current_fn.body):
            # a helper's test of a constexpr or scalar the kernel itself never tests: the port takes a number
            # for it (the launcher refuses None there), so the test is decided
            return Lit(given, pos)
        if base is None:
            test = "is not None" if given else "is None"
            raise fail("CT100", f"`{node_code(node).strip()} {test}`: only a parameter of the kernel (a pointer, a "
                       "constexpr or a scalar it does not reassign) may be tested against None", pos)
        name = self.given_names.get(base)
        if name is None:
            taken = self._function_locals(self._current_fn) | {p.name.value for p in self._current_fn.params.params}
            name = f"{base.upper()}_IS_GIVEN"  # a const generic: upper case, as Rust names them
            while name in taken or name in self.given_names.values():
                name += "_"
            self.given_names[base] = name
        flag = Name(name, pos)
        return flag if given else Op("not", (flag,), pos, rule="CTR-CMP")

    def _pointer_truth(self, test: cst.BaseExpression) -> cst.BaseExpression:
        """`if bias_ptr:` / `if not bias_ptr:` on a pointer parameter: Python's truth of an optional pointer is
        `bias_ptr is not None` (Triton decides it at compile time, as it decides the None test)."""
        if isinstance(test, cst.Name) and test.value in self.pointer_params and not self.subst:
            return cst.Comparison(test, [cst.ComparisonTarget(cst.IsNot(), cst.Name("None"))])
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._pointer_truth(test.expression)
            if inner is not test.expression:
                return cst.Comparison(test.expression, [cst.ComparisonTarget(cst.Is(), cst.Name("None"))])
        if isinstance(test, cst.BooleanOperation):
            left, right = self._pointer_truth(test.left), self._pointer_truth(test.right)
            if left is not test.left or right is not test.right:
                return test.with_changes(left=left, right=right)
        return test

    def if_stmt(self, s: cst.If) -> list:
        """`if ptr is not None:` where `ptr` is a helper's `None` default: only the arm Triton compiles."""
        truth = self._pointer_truth(s.test)
        if truth is not s.test:
            s = s.with_changes(test=truth)
        static = self._type_truth(s.test)
        if static is not None:  # `if isinstance(M, tl.tensor) and M.dtype.is_ptr():` only the arm Triton compiles
            if static:
                return list(self.block(s.body))
            if isinstance(s.orelse, cst.If):
                return self.if_stmt(s.orelse)
            return list(self.block(s.orelse.body)) if isinstance(s.orelse, cst.Else) else []
        test = _none_test(s.test)
        if test is None or not (isinstance(v := self.expr(test[0]), Name) and v.id == "None"):
            return self._if_arms(s)
        if not test[1]:  # `None is None`
            return list(self.block(s.body))
        if isinstance(s.orelse, cst.If):
            return self.if_stmt(s.orelse)
        return list(self.block(s.orelse.body)) if isinstance(s.orelse, cst.Else) else []

    def inline_helper(self, fn: cst.FunctionDef, call: cst.Call, home=None):
        """A helper's block pointer names are its own (Python scopes them): none of the caller's is visible by
        name in it, and none of its own outlives it (one it returns is converted by _helper_result), so a
        helper's `_ret0` never reads another helper's."""
        saved = (dict(self.block_vars), set(self.block_poisoned), dict(self.block_depth))
        try:
            return super().inline_helper(fn, call, home)  # its arguments are read with the caller's names
        finally:
            self.block_vars, self.block_poisoned, self.block_depth = saved

    def _block_var(self, name: str) -> _BlockPtr | None:
        """The block pointer `name` holds in the function being converted (a caller's is not visible in a
        helper it inlines)."""
        if name in self.block_vars and self.block_depth.get(name, 0) == len(self.subst):
            return self.block_vars[name]
        return None

    def _helper_result(self, value: cst.BaseExpression):
        """A helper returning a block pointer (`return tl.make_block_ptr(base, (T,), (HV,), (offset,), (BLK,),
        (0,))`): its parts are the helper's expressions, read in the caller after the helper's names are gone, so
        each is converted here and stands in the block pointer as a name the caller reads it by (`__bp_<n>`); a
        block dimension that is a constant or a constexpr is written as itself (block shapes are compared as
        written)."""
        result = super()._helper_result(value)
        if not isinstance(result, _BlockPtr):
            return result

        def bound(part: cst.BaseExpression) -> cst.BaseExpression:
            v = self.expr(part)
            if isinstance(v, Lit) and type(v.value) is int:
                return cst.Integer(str(v.value))
            if isinstance(v, Name) and v.id in self.const_params:
                return cst.Name(v.id)
            token = f"__bp_{len(self.helper_values)}"
            self.helper_values[token] = v
            return cst.Name(token)
        return _BlockPtr(bound(result.base), *(tuple(bound(x) for x in part)
                                               for part in (result.shape, result.strides, result.offsets, result.block)))

    def stmts(self, stmts: list, top: bool) -> list:
        """A constant `if` whose arms bind a block pointer name to blocks of different shapes that the statements
        after it read (`p_h` a [BV, BK] block if STATE_V_FIRST else a [BK, BV] one): the statements after it
        follow each arm (one copy per arm, as Python runs them), so each copy reads the block its arm made."""
        for i, st in enumerate(stmts):
            if isinstance(st, cst.If) and self._const_test(st.test) and self._shape_split(st, stmts[i + 1:]):
                return super().stmts(list(stmts[:i]) + [_with_rest(st, list(stmts[i + 1:]))], top)
        return super().stmts(stmts, top)

    def _shape_split(self, s: cst.If, rest: list) -> bool:
        """Every arm of `s` binds some name to `tl.make_block_ptr(...)` at its top level, not all with the same
        block shape (as written), and `rest` reads the name."""
        arms, node = [], s
        while True:
            arms.append(list(node.body.body))
            if isinstance(node.orelse, cst.If):
                node = node.orelse
                continue
            arms.append(list(node.orelse.body.body) if isinstance(node.orelse, cst.Else) else [])
            break
        shapes: list[dict[str, str]] = []
        for arm in arms:
            bound: dict[str, str] = {}
            for st in arm:
                for small in st.body if isinstance(st, cst.SimpleStatementLine) else ():
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                            and isinstance(small.targets[0].target, cst.Name):
                        v = small.value
                        made = isinstance(v, cst.Call) and self.dotted(v.func) == f"{TL}.make_block_ptr"
                        block = _arg(v, 4, "block_shape") if made else None
                        bound[small.targets[0].target.value] = node_code(block).strip() if block is not None else "?"
            shapes.append(bound)
        read: set[str] = set()  # names read in `rest` before it binds them again at its top level
        rebound: set[str] = set()
        for st in rest:
            targets = {t.target.value for small in (st.body if isinstance(st, cst.SimpleStatementLine) else ())
                       if isinstance(small, cst.Assign) for t in small.targets if isinstance(t.target, cst.Name)}
            values = [small.value for small in st.body if isinstance(small, cst.Assign)] \
                if isinstance(st, cst.SimpleStatementLine) and targets else [st]
            read |= {n.value for v in values for n in walk_nodes(v) if isinstance(n, cst.Name)} - rebound
            rebound |= targets
        common = set.intersection(*(set(b) for b in shapes)) & read
        return any(len({b[name] for b in shapes}) > 1 and any(b[name] != "?" for b in shapes) for name in common)

    def _if_arms(self, s: cst.If) -> list:
        """The base `if`, each arm starting from the pointer bindings before it; a kernel-level pointer name an
        arm rebinds to another tensor reads the older or the newer tensor after the `if` depending on the path
        taken: refused where read after it (ptr_poisoned)."""
        if self.subst:
            return super().if_stmt(s)
        pos = self.pos(s)
        cond = self.expr(s.test)
        pre, self.pending = self.pending, []
        start = (dict(self.ptr_alias), dict(self.ptr_vars), dict(self.ptr_poisoned))
        live, arm_start = set(self.ptr_live), set(self.arm_locals)
        blocks = dict(self.block_vars)  # each arm binds block pointers from the bindings before the `if`
        body = tuple(self.block(s.body))
        then = (self.ptr_alias, self.ptr_vars, self.ptr_poisoned)
        then_live, self.ptr_live = self.ptr_live, set(live)
        then_blocks, self.block_vars = self.block_vars, dict(blocks)
        self.ptr_alias, self.ptr_vars, self.ptr_poisoned = dict(start[0]), dict(start[1]), dict(start[2])
        if isinstance(s.orelse, cst.If):
            orelse = tuple(self.if_stmt(s.orelse))
        elif isinstance(s.orelse, cst.Else):
            orelse = tuple(self.block(s.orelse.body))
        else:
            orelse = ()
        other = (self.ptr_alias, self.ptr_vars, self.ptr_poisoned)
        other_live = self.ptr_live
        self.ptr_live = then_live & other_live
        for name in set(then_blocks) & set(self.block_vars):  # the same block shape: one binding after the `if`
            if [node_code(b) for b in then_blocks[name].block] != [node_code(b) for b in self.block_vars[name].block]:
                self.block_poisoned.add(name)
        self.block_vars = {**then_blocks, **self.block_vars}
        self.ptr_vars = {**then[1], **other[1]}  # offsets locals are distinct per binding
        self.ptr_alias = dict(start[0])
        self.ptr_poisoned = {**then[2], **other[2]}
        # (a constant `if` is a specialization: its condition stays the test it is, each variant one binding)
        chosen = _ArmChoice(self, cond, start, then, other, pos, runtime=not self._const_test(s.test),
                            live=(then_live, other_live), arm_start=arm_start,
                            read_after=lambda name: self._read_after(s, name))
        for name in sorted(set(then[0]) | set(other[0]) | set(start[0])):  # (sorted: the new locals' names)
            a, b = then[0].get(name), other[0].get(name)
            if a == b:
                if a is not None:
                    self.ptr_alias[name] = a
                continue
            if chosen.rebound(name, a or name, b or name):
                continue
            # a base is a parameter's name or a loaded address (_Addr): sorted by its text
            tensors = sorted({str(self.ptr_vars[m][0]) for m in (a or name, b or name) if m in self.ptr_vars})
            self.ptr_poisoned[name] = " or ".join(f"`{t}`" for t in tensors)
        for name in sorted(set(then[1]) & set(other[1]) - set(then[0]) - set(other[0])):
            if then[1][name] != other[1][name] and not chosen.bound(name):
                # bound in both arms to pointers that differ otherwise (each arm its own local): one tensor per path
                self.ptr_poisoned[name] = " or ".join(sorted({f"`{then[1][name][0]}`", f"`{other[1][name][0]}`"}))
        self.pending = pre
        return self._flush(chosen.statements(body, orelse))

    def _read_after(self, s: cst.If, name: str) -> bool:
        """`name` appears in the kernel's source after the `if` `s` (source order: a walk of the kernel's body; in a
        loop: anywhere, a later iteration reads it; an `if` the conversion rewrote: yes)."""
        if self.loops:
            return True
        order = self.__dict__.setdefault("_source_walks", {}).get(id(self._current_fn))
        if order is None:
            order = self._source_walks[id(self._current_fn)] = _preorder(self._current_fn.body)
        index, names = order
        if id(s) not in index:
            return True
        end = index[id(s)] + sum(1 for _ in _preorder_nodes(s)) - 1
        return any(i > end for i in names.get(name, []))

    def _fall_through_end(self, fn: cst.FunctionDef, pos: Pos):
        """A helper path that reaches the end returns None in Triton, which compiles no kernel that uses the
        result: the path ends in a compile error (CT103 where an entry reaches it; where only constant tests
        that no entry takes lead there, it is folded away)."""
        def end():
            marker = cst.Raise(cst.Call(cst.Name(FALLS_THROUGH), [cst.Arg(cst.SimpleString(repr(fn.name.value)))]))
            self._fall_through_pos[id(marker)] = (marker, pos)
            return cst.SimpleStatementLine([marker])
        return end

    def _decide_now(self, test: cst.BaseExpression) -> bool | None:
        """`Y is None` / `Y is not None` in an inlined helper, where `Y` is bound to `None` (its default), or to a
        literal, a constexpr parameter or a computed value (never None: the port's constants are numbers)."""
        t = _none_test(test)
        if t is None or not isinstance(t[0], cst.Name):  # a name only: reading it converts nothing
            return None
        v = self.expr(t[0])
        if isinstance(v, Name) and v.id == "None":
            return not t[1]
        if isinstance(v, Name) and v.id in self.optional_values:  # decided per variant (see _given)
            return None
        if isinstance(v, Lit) or (isinstance(v, Name) and v.id in self.const_params) \
                or not isinstance(v, (Name, _Ptr)):  # a computed value (`tl.cdiv(K, BK)`) is never None
            return t[1]
        return None

    def _const_test(self, e: cst.BaseExpression) -> bool:
        """Besides constants, `ptr is None` is decided at compile time, and so is a constexpr local."""
        if _none_test(e) is not None:
            return True
        if isinstance(e, cst.Name) and self._constexpr_local(e.value):
            return True
        if isinstance(e, cst.BooleanOperation):
            return self._const_test(e.left) and self._const_test(e.right)
        if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Not):
            return self._const_test(e.expression)
        return super()._const_test(e)

    def _constexpr_local(self, name: str) -> bool:
        """`SHOULD_PERMUTE: tl.constexpr = PERMUTE_X or PERMUTE_Y`, the one binding of `name` in the function being
        converted, its value a test of constants: Triton requires a value annotated tl.constexpr to be known when
        it compiles, so a test of the name is a compile-time one too (`ANY: tl.constexpr = SHOULD_PERMUTE or FUSE`
        is `or` of constants, not a runtime `|`)."""
        active = self.__dict__.setdefault("_constexpr_locals_active", set())
        if name in active or getattr(self, "_current_fn", None) is None:
            return False
        home, fn = self._innermost_fn()
        bound = [n for n in walk_nodes(fn.body) if isinstance(n, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For))
                 and any(isinstance(t, cst.Name) and t.value == name for t in _bound_targets(n))]
        if not (len(bound) == 1 and isinstance(bound[0], cst.AnnAssign) and bound[0].value is not None
                and home._is_constexpr(bound[0].annotation)):
            return False
        active.add(name)
        try:
            return home._const_test(bound[0].value)
        finally:
            active.discard(name)

    def _truth(self, e, pos: Pos):
        """A condition operand as a boolean (comparisons already are; a number is compared with zero)."""
        if isinstance(e, Op) and (e.op in ("cmp", "bitand", "bitor", "not", "dtype_in") or (e.op == "bitxor")):
            return e
        if isinstance(e, Lit) and isinstance(e.value, bool):
            return e
        return self._op("operator:!=", (e, Lit(0, pos)), pos, (("pred", "!="),))

    def _binop(self, op, a, b, pos: Pos):
        if isinstance(a, _Ptr) or isinstance(b, _Ptr):
            if op == "+":
                return self._ptr_add(a, b, pos) if isinstance(a, _Ptr) else self._ptr_add(b, a, pos)
            if op == "-" and isinstance(a, _Ptr) and not isinstance(b, _Ptr):
                return self._ptr_add(a, b, pos, subtract=True)
            raise fail("CT100", f"pointer arithmetic `{op}` is not supported (only pointer + offsets and pointer - "
                       "offsets)", pos)
        if op == "**":
            # `2 ** (width - 1)` of constexprs: a Python int when Triton compiles (infer folds it once its operands
            # are known numbers, a dtype's width included); Triton refuses `**` of tensors
            self.rules_used.add("TTR-POW")
            if isinstance(a, Lit) and isinstance(b, Lit) and all(type(x.value) is int for x in (a, b)) \
                    and 0 <= b.value <= 128:
                return Lit(a.value ** b.value, pos)
            return Op("const_pow", (a, b), pos, (), "TTR-POW")
        if isinstance(a, Lit) and isinstance(b, Lit) and type(a.value) is int and type(b.value) is int \
                and op in _INT_FOLDS and not (op in ("//", "%") and b.value == 0):
            # integer literals (a helper's constexpr arguments: `BLOCK // (2 * STRIDE)` at `(x, 256, 8)`): Python
            # ints when Triton compiles, so the result is one too (a literal tile extent, not a derived constant)
            return Lit(_INT_FOLDS[op](a.value, b.value), pos)
        return super()._binop(op, a, b, pos)

    def _ptr_add(self, p: _Ptr, offs, pos: Pos, subtract: bool = False) -> _Ptr:
        if isinstance(offs, _Ptr):
            raise fail("CT100", "a pointer added to a pointer", pos)
        if subtract:
            offs = self._op("operator:neg", (offs,), pos) if p.offsets is None else offs
        if p.offsets is None:
            return _Ptr(p.base, offs, pos)
        return _Ptr(p.base, self._op("operator:-" if subtract else "operator:+", (p.offsets, offs), pos), pos)

    def _chosen_pointer(self, cond, a: _Ptr, b: _Ptr, pos: Pos, tile: bool) -> _Ptr:
        """`tl.where(c, x_ptr, y_ptr)` / `x_ptr if c else y_ptr`: a pointer chosen at run time (pointer_arms.py), its
        arms' conditions over `c` as a bool (Triton's `c != 0` of a number), its offsets selected per lane."""
        for p in (a, b):
            for _, base in pointer_arms.arms_of(p.base):
                if isinstance(base, _Addr) and not isinstance(base.addr, Name):
                    raise fail("CT100", "a pointer chosen at run time between pointers loaded in the same expression "
                               "is not supported (assign the loaded pointer to a name first)", pos)
        if a.base == b.base and not isinstance(a.base, ArmBases):  # one tensor: the offsets chosen
            return _Ptr(a.base, pointer_arms.selected_offsets(self, cond, a.offsets, b.offsets, pos, tile), pos)
        stem = str(pointer_arms.arms_of(a.base)[0][1])
        truth = self._arm_operand(self._truth(cond, pos), f"{stem}_chosen", pos)  # computed once
        offsets = pointer_arms.selected_offsets(self, cond, a.offsets, b.offsets, pos, tile)
        return _Ptr(pointer_arms.chosen_bases(self, truth, a.base, b.base, pos), offsets, pos)

    def _fresh_arm_local(self, stem: str) -> str:
        taken = self._function_locals(self._current_fn) | set(self.ptr_vars) | set(self.offset_names.values()) | \
            self.addr_locals | self.arm_locals
        local = stem
        while local in taken:
            local += "_"
        self.arm_locals.add(local)
        return local

    def _stable_arms(self, target: str, base: ArmBases, pos: Pos) -> tuple[list, ArmBases]:
        """The arms of a pointer assigned to `target`, each condition held in a local (`<target>_in_<base>`) so an
        access reads the choice made here; conditions already held so are kept."""
        pre, arms = [], []
        for cond, b in base.arms:
            if not pointer_arms.stable(cond, self.arm_locals):
                local = self._fresh_arm_local(f"{target}_in_{b}")
                pre.append(Assign((local,), cond, pos))
                cond = Name(local, pos)
            arms.append((cond, b))
        return pre, ArmBases(tuple(arms))

    def subscript(self, node: cst.Subscript):
        if isinstance(node.value, cst.Attribute) and node.value.attr.value in ("shape", "block_shape", "strides") \
                and isinstance(node.value.value, cst.Name) and node.value.value.value in self.desc_vars \
                and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            parts = self.expr(node.value) if isinstance(self.expr(node.value.value), _Desc) else None
            if isinstance(parts, TupleExpr):  # `w_desc.shape[0]`: one part of a descriptor
                i = self._eval_const(node.slice[0].slice.value)
                if not (isinstance(i, int) and not isinstance(i, bool) and -len(parts.items) <= i < len(parts.items)):
                    raise fail("TTR-DESC", f"`{node_code(node).strip()}`: the index must be a constant within the "
                               f"descriptor's rank {len(parts.items)}", self.pos(node))
                return parts.items[i]
        base = self.expr(node.value)
        if isinstance(base, _Ptr):
            if base.offsets is None:
                raise fail("CT100", "indexing a pointer parameter with `[...]` (broadcast the offsets instead)",
                           self.pos(node))
            inner = node.with_changes(value=cst.Name("__ptr_offsets__"))
            self.subst.append({"__ptr_offsets__": base.offsets})
            try:
                offs = super().subscript(inner)
            finally:
                self.subst.pop()
            return _Ptr(base.base, offs, base.pos)
        return super().subscript(node)

    def _is_dtype_value(self, e) -> bool:
        """A dtype-valued model expression: `tl.float16`, `x.dtype`, a dtype constexpr (the frontend's view; a
        local holding a dtype is known to inference only)."""
        return (isinstance(e, Op) and e.op in ("dtype", "dtype_of")) or (isinstance(e, Name)
                                                                        and e.id in self.dtype_consts)

    def _dtype_query(self, node: cst.Call, pos: Pos):
        """`<dtype>.is_fp16()` and Triton's other dtype predicates (rules/triton_dtypes.toml): the test that the
        dtype is one of those the predicate accepts, decided per entry by inference (infer.dtype_cond_value)."""
        name = node.func.attr.value
        if node.args:
            raise fail("TTR-DTYPE-QUERY", f"`.{name}()` takes no arguments", pos)
        self.rules_used.add("TTR-DTYPE-QUERY")
        subject = self.expr(node.func.value)
        if isinstance(subject, (_Ptr, _Desc, _BlockPtr, TupleExpr)):
            raise fail("TTR-DTYPE-QUERY", f"`.{name}()` of a value that is not a dtype (a pointer's element type "
                       "is `p.dtype.element_ty`)", pos)
        return Op("dtype_in", (subject,), pos, (("dtypes", triton_dtype_queries().predicates[name]),
                                                ("query", name)), "TTR-DTYPE-QUERY")

    def attribute(self, node: cst.Attribute):
        pos = self.pos(node)
        if node.attr.value in triton_dtype_queries().widths:
            # `x.dtype.primitive_bitwidth`: an integer of the dtype, a constant per entry (infer folds it)
            subject = self.expr(node.value)
            if isinstance(subject, (_Ptr, _Desc, _BlockPtr, TupleExpr)):
                raise fail("TTR-DTYPE-QUERY", f"`.{node.attr.value}` of a value that is not a dtype (a pointer's "
                           "element type is `p.dtype.element_ty`)", pos)
            self.rules_used.add("TTR-DTYPE-QUERY")
            return Op("dtype_attr", (subject,), pos, (("attr", node.attr.value),), "TTR-DTYPE-QUERY")
        if node.attr.value == "value" and not (self.dotted(node) or "").startswith(f"{TL}."):
            # `DTYPE.value`: a constexpr's value (Triton unwraps a dtype constexpr so: `dtype_ = dtype.value`); a
            # local or parameter holding a dtype is known as one to inference only, which refuses it elsewhere
            subject = self.expr(node.value)
            if self._is_dtype_value(subject) or (isinstance(subject, Name) and subject.id != "None"):
                return subject
        if node.attr.value == "scalar" and isinstance(node.value, cst.Attribute) \
                and node.value.attr.value in ("type", "dtype"):
            # `x.type.scalar`: a tile's element type (its block type's scalar); a dtype's scalar is itself
            base = self.expr(node.value.value)
            if not isinstance(base, (_Ptr, _Desc, _BlockPtr, TupleExpr)):
                return base if node.value.attr.value == "dtype" and self._is_dtype_value(base) \
                    else Op("dtype_of", (base,), pos)
        d = self.dotted(node)
        if d and d.startswith(f"{TL}."):
            leaf = d[len(TL) + 1:]
            if leaf in TRITON_DTYPES:
                return Op("dtype", (), pos, (("dtype", TRITON_DTYPES[leaf]),))
            raise fail("CT101", f"`{d}` is not supported", pos)
        # `desc.type.block_type.element_ty`: the element type of a tensor descriptor's blocks (its tensor's)
        if node.attr.value == "element_ty" and isinstance(node.value, cst.Attribute) \
                and node.value.attr.value == "block_type" and isinstance(node.value.value, cst.Attribute) \
                and node.value.value.attr.value == "type":
            base = self.expr(node.value.value.value)
            if isinstance(base, _Desc):
                return Op("dtype_of", (Name(base.base, pos),), pos)
            raise fail("CT100", "`.type.block_type.element_ty` of a value that is not a tensor descriptor", pos)
        # `x_ptr.dtype.element_ty` (or `x_ptr.type.element_ty`: a pointer's type is its dtype): the element type
        # of the tensor a pointer points into; `x.type.element_ty` of a tile: its block type's, x's dtype
        if node.attr.value == "element_ty" and isinstance(node.value, cst.Attribute) \
                and node.value.attr.value in ("dtype", "type"):
            base = self.expr(node.value.value)
            if isinstance(base, _BlockPtr):  # a block pointer's elements: its base pointer's
                base = self.expr(base.base)
            if isinstance(base, _Ptr) and isinstance(base.base, ArmBases):  # chosen at run time: the arms' type
                base = _Ptr(base.base.arms[0][1], None, base.pos)  # (one type: Triton's where and phi require it)
            if isinstance(base, _Ptr) and not isinstance(base.base, str):  # a cast or loaded pointer: its type
                return Op("dtype", (), pos, (("dtype", base.base.elem),))
            if isinstance(base, _Ptr):
                return Op("dtype_of", (Name(base.base, pos),), pos)
            if node.value.attr.value == "type" and not isinstance(base, (_Desc, TupleExpr)):
                return Op("dtype_of", (base,), pos)
            raise fail("CT100", f"`.{node.value.attr.value}.element_ty` of a value that is not a pointer", pos)
        if node.attr.value == "dtype":
            base = self.expr(node.value)
            if isinstance(base, _Desc):  # `c_desc.dtype`: the element type of the descriptor's tensor
                return Op("dtype_of", (Name(base.base, pos),), pos)
            if isinstance(base, _Ptr):
                raise fail("CT100", "the dtype of a pointer itself; use `.dtype.element_ty`", pos)
            return Op("dtype_of", (base,), pos)
        if node.attr.value in ("shape", "block_shape", "strides"):
            base = self.expr(node.value)
            if isinstance(base, _Desc):  # `desc.shape[0]`, `desc.block_shape`: the descriptor's own parts
                return TupleExpr({"shape": base.shape, "block_shape": base.block,
                                  "strides": base.strides + (Lit(1, pos),)}[node.attr.value], pos)
            if node.attr.value != "shape":
                return super().attribute(node)
            if isinstance(base, _Ptr):
                raise fail("CT100", "`.shape` of a pointer", pos)
            return Op("shape_of", (base,), pos)  # a tile's shape, where a shape is expected (infer.shape_dims)
        if node.attr.value == "numel":  # `x.numel`: a tile's element count (a constexpr in Triton)
            base = self.expr(node.value)
            if isinstance(base, (_Ptr, _Desc, _BlockPtr)):
                raise fail("CT100", "`.numel` of a pointer or descriptor (only a tile's `.numel` is a constexpr)", pos)
            return Op("numel_of", (base,), pos)
        if node.attr.value == "T":  # `x.T`: the transpose of a 2-D tensor
            rule = self.rules.lookup(f"{TL}.trans")
            self.rules_used.add(rule.id)
            return Op("permute", (self.expr(node.value), TupleExpr((Lit(1, pos), Lit(0, pos)), pos)), pos, (),
                      rule.id)
        return super().attribute(node)

    def call(self, node: cst.Call):
        pos = self.pos(node)
        func = node.func
        if isinstance(func, cst.Name) and func.value in self.info.configured_by:
            self._note_configured(func.value, pos)
        if isinstance(func, cst.Attribute) and (root := _root_name(func)) in getattr(self, "handler_bound", {}) \
                and root not in self.kernel_locals and getattr(self, "config_names", {}).get(root, UNDECIDED) is None:
            raise fail("CT101", f"`{root}` is None: {self.handler_bound[root]} to None, so `{node_code(func).strip()}` "
                       "does not exist there (a kernel for another Triton build or GPU vendor)", pos)
        if (root := _root_name(func)) in self.info.assumed and root not in self.kernel_locals:
            self.__dict__.setdefault("assumed_uses", {}).setdefault((self.info.path, self.info.assumed[root]), (self.info.assumed[root], pos))
        if (fn_param := self._optional_function_param(func)) is not None:
            # `SCORE_MOD(qk, ...)` under `if SCORE_MOD is not None:`: a function passed as a constexpr has no port
            # (its body is the caller's, unknown here); the variant that calls it has no entry, and a launch
            # passing a function is refused (the None variant never runs in its place)
            return Op("compile_error", (), pos, (("text", fn_param), ("kind", "function_constexpr")), "TTR-RAISE")
        if (inlined := self.module_helper(node)) is not None:
            return inlined
        d = self.dotted(func)
        if isinstance(func, cst.Name) and func.value in self.info.kernels and func.value not in self.info.aliases \
                and func.value != self.current:
            return self.inline_helper(self.info.kernels[func.value], node)
        if isinstance(func, cst.Attribute) and func.attr.value in triton_dtype_queries().predicates:
            return self._dtype_query(node, pos)
        if d in (f"{TL}.constexpr", f"{TL}.core.constexpr") and len(node.args) == 1 and node.args[0].keyword is None:
            # `tl.constexpr(v)` in a kernel: the value, known at compile time (`tl.constexpr(torch.version.hip is
            # not None)`: a platform fact, rules/platform.toml)
            fact = self._platform_truth(node.args[0].value)
            return Lit(fact, pos) if fact is not None else self.expr(node.args[0].value)
        if isinstance(func, cst.Name) and func.value == ptx.REGISTER_READ and id(node) in self._stand_in_pos:
            # an asm input read as the register's type (only in the source ptx.py writes: `_inline_asm`)
            x, dt = (self.expr(a.value) for a in node.args)
            return Op("bitcast", (x, dt), pos, (("register", True),), "TTR-INLINE-ASM")
        if isinstance(func, cst.Name) and func.value == ptx.OPAQUE and id(node) in self._stand_in_pos:
            # an asm's float arithmetic: never contracted with the code around it (passes/fma.py)
            inner = self.expr(node.args[0].value)
            return replace(inner, rule="TTR-INLINE-ASM") if isinstance(inner, Op) else inner
        if d in RANDOM_CALLS:
            return self._random(d, node, pos)
        if self.info.path == LIBDEVICE_LIBRARY and isinstance(func, cst.Name) and func.value in LIBDEVICE_INTRINSICS:
            return self._libdevice_intrinsic(func.value, node, pos)
        if _math_name(d) in LIBDEVICE_PORTS and _math_name(d) != d and (self.rules.lookup(d) or _NO_RULE).id \
                == "TTR-LIBDEVICE-PORT":  # (tl.math has no log1p: only the homes Triton has)
            return self._libdevice(_math_name(d), node, pos)
        if d in MEMORY_CALLS:
            return self._memory(d, node, pos)
        if isinstance(func, cst.Attribute) and func.attr.value == "is_ptr" and not node.args \
                and isinstance(func.value, cst.Attribute) and func.value.attr.value in ("dtype", "type"):
            # `x.dtype.is_ptr()`: a pointer's type is a pointer type; a tile's or scalar's element type is not
            base = self.expr(func.value.value)
            return Lit(isinstance(base, (_Ptr, _BlockPtr)), pos)
        if d in ("isinstance", "builtins.isinstance") and isinstance(func, cst.Name) and len(node.args) == 2:
            return self._isinstance(node, pos)
        if d in ("len", "builtins.len") and isinstance(func, cst.Name) and len(node.args) == 1:
            arg = node.args[0].value
            v = self.tuple_vars[arg.value] if isinstance(arg, cst.Name) and arg.value in self.tuple_vars \
                else self.expr(arg)
            if isinstance(v, TupleExpr):
                return Lit(len(v.items), pos)
            raise fail("CT101", "`len(...)` of a value that is not a tuple known here: a constexpr tuple parameter "
                       "has no cuTile Rust form (its const generics are integers and bools); pass its length and "
                       "items as separate constexprs", pos)
        if d in (f"{TL}.maximum", f"{TL}.minimum") and any(a.keyword is not None and a.keyword.value == "propagate_nan"
                                                          for a in node.args):
            return self._nan_minmax(d, node, pos)
        if d == f"{TL}.where" and len(node.args) == 3 and all(a.keyword is None and not a.star for a in node.args):
            # (converted here, as the rule would, so a pointer chosen between two tensors is seen: pointer_arms.py)
            c, x, y = (self.expr(a.value) for a in node.args)
            if isinstance(x, _Ptr) or isinstance(y, _Ptr):
                if not (isinstance(x, _Ptr) and isinstance(y, _Ptr)):
                    raise fail("TTR-WHERE", "`tl.where` choosing between a pointer and a value", pos)
                return self._chosen_pointer(c, x, y, pos, tile=True)
            return self._rule_call(self.rules.lookup(d), [c, x, y], pos)
        if d == f"{TL}.pointer_type":
            raise fail("TTR-PTRCAST", "`tl.pointer_type(...)` is supported as the target of a pointer cast only "
                       "(`p.to(tl.pointer_type(T))`, `tl.cast(p, tl.pointer_type(T))`)", pos)
        if d == f"{TL}.make_tensor_descriptor":
            return self._descriptor(node, pos)
        if d == f"{TL}.make_block_ptr":
            return self._make_block_ptr(node, pos)
        if d == f"{TL}.advance":
            return self._advance(node, pos)
        if isinstance(func, cst.Attribute) and func.attr.value in ("load", "store") and \
                isinstance(func.value, cst.Name) and func.value.value in self.desc_vars:
            return self._desc_access(self.desc_vars[func.value.value], func.attr.value, node, pos)
        if isinstance(func, cst.Attribute) and func.attr.value in ("load", "store") and \
                isinstance(func.value, cst.Call) and self.dotted(func.value.func) == f"{TL}.make_tensor_descriptor":
            # `tl.make_tensor_descriptor(...).load([...])`: the descriptor used where it is made
            return self._desc_access(self._descriptor(func.value, self.pos(func.value)), func.attr.value, node, pos)
        if d in HINT_CALLS:
            return self.expr(_arg(node, 0, "input"))
        if d == f"{TL}.arange":
            return self._arange(node, pos)
        if d in (f"{TL}.sigmoid",):
            x = self.expr(_arg(node, 0, "x"))
            return self._sigmoid(x, pos)
        if isinstance(func, cst.Attribute) and func.attr.value == "sigmoid" and not (d or "").startswith(TL):
            return self._sigmoid(self.expr(func.value), pos)
        if d == f"{TL}.clamp":
            return self._clamp(node, pos)
        if d in (f"{TL}.dot",):
            return self._dot(node, pos)
        is_trans = d in (f"{TL}.trans", f"{TL}.permute") or (
            isinstance(func, cst.Attribute) and func.attr.value in ("trans", "permute") and not (d or "").startswith(TL))
        if is_trans:
            # `tl.trans(x, 1, 0)` or the method `x.trans(1, 0)` (whose dotted name is `x.trans`, not Triton's)
            function = (d or "").startswith(f"{TL}.")
            x = self.expr(_arg(node, 0, "input")) if function else self.expr(func.value)
            dims = [self.expr(a.value) for a in (node.args[1:] if function else node.args)]
            if len(dims) == 1 and isinstance(dims[0], TupleExpr):
                dims = list(dims[0].items)
            if not dims:  # Triton: no permutation given is the (1, 0) transpose of a 2-D tensor
                dims = [Lit(1, pos), Lit(0, pos)]
            rule = self.rules.lookup(f"{TL}.trans")
            self.rules_used.add(rule.id)
            return Op("permute", (x, TupleExpr(tuple(dims), pos)), pos, (), rule.id)
        if d in ("min", "max", "builtins.min", "builtins.max"):
            rule = self.rules.lookup(f"{TL}.{'minimum' if d.endswith('min') else 'maximum'}")
            return self._rule_call(rule, list(node.args), pos)
        if d and d.startswith(f"{TL}.") and d[len(TL) + 1:] in TRITON_DTYPES and len(node.args) == 1 \
                and node.args[0].keyword is None:
            # `tl.float32(0.0)`: the value as that dtype (a typed scalar, as Triton's dtype call makes it)
            rule = self.rules.lookup(f"{TL}.cast")
            return self._rule_call(rule, [self.expr(node.args[0].value), self.attribute(func)], pos)
        if d == f"{TL}.split" or (isinstance(func, cst.Attribute) and func.attr.value == "split"
                                  and not (d or "").startswith(f"{TL}.")):
            # `a, b = tl.split(x)`: the two halves of x's last dimension (of size 2), each without it
            rule = self.rules.lookup(f"{TL}.split")
            self.rules_used.add(rule.id)
            if len(node.args) != 1 or node.args[0].keyword is not None:
                raise fail(rule.id, "`tl.split` takes one tile", pos)
            x = self.expr(node.args[0].value) if d == f"{TL}.split" else self.expr(func.value)
            return TupleExpr(tuple(Op("split_half", (x,), pos, (("index", i),), rule.id) for i in (0, 1)), pos)
        if d == f"{TL}.join":
            # `tl.join(a, b)`: a and b stacked on a new last dimension of 2 (the inverse of `tl.split`)
            rule = self.rules.lookup(f"{TL}.join")
            self.rules_used.add(rule.id)
            if len(node.args) != 2 or any(a.keyword is not None for a in node.args):
                raise fail(rule.id, "`tl.join` takes two tiles", pos)
            return Op("join_pair", (self.expr(node.args[0].value), self.expr(node.args[1].value)), pos, (), rule.id)
        if d in (f"{TL}.fma", f"{TL}.math.fma"):
            x, y, z = (self.expr(_arg(node, i, k)) for i, k in enumerate(("x", "y", "z")))
            self.rules_used.add("TTR-FMA")
            return self._op("operator:+", (self._op("operator:*", (x, y), pos), z), pos)
        if _libdevice_name(d) in LIBDEVICE_RN:
            return self._libdevice_rn(_libdevice_name(d), node, pos)
        if _libdevice_name(d) == "pow":
            return self._libdevice_pow(node, pos)
        if (_libdevice_name(d) in LIBDEVICE_CLASSES or _libdevice_name(d) in LIBDEVICE_BITCASTS) \
                and (_arg(node, 0, "arg0") is None or len(node.args) != 1):
            raise fail("CT101", f"`libdevice.{_libdevice_name(d)}` takes one operand", pos)
        if _libdevice_name(d) in LIBDEVICE_CLASSES:
            return self._libdevice_class(_libdevice_name(d), node, pos)
        if _libdevice_name(d) in LIBDEVICE_BITCASTS:
            # the operand as the dtype libdevice's function takes (Triton refuses another; a value loaded through a
            # pointer of any dtype is a generic the bitcast could not size), then its bits as the result's
            self.rules_used.add("TTR-LIBDEVICE-BITS")
            src, dst = (Op("dtype", (), pos, (("dtype", t),)) for t in LIBDEVICE_BITCASTS[_libdevice_name(d)])
            x = self._op(f"{TL}.cast", (self.expr(_arg(node, 0, "arg0")), src), pos)
            return self._op("method:to(bitcast=True)", (x, dst), pos)
        if d in FUNCTIONAL_OPERATORS:
            # `tl.add(x, y)`, `tl.fdiv(x, y, ieee_rounding=False)`: the operator (sanitize_overflow only matters
            # under Triton's sanitizer; fdiv's approximate division is the IEEE one, within its error bound)
            x, y = _arg(node, 0, "x"), _arg(node, 1, "y")
            if x is None or y is None:
                raise fail("TTR-FUNCTIONAL-OPS", f"`{d}` takes two operands (x, y)", pos)
            return self._binop(FUNCTIONAL_OPERATORS[d], self.expr(x), self.expr(y), pos)
        if _math_name(d) in ("div_rn", "trunc", "round", "rint", "nearbyint") and _math_name(d) != d:
            return self._exact_math(_math_name(d), node, pos)
        if d in (f"{TL}.zeros_like", f"{TL}.full_like") and node.args and node.args[0].keyword is None:
            # `tl.zeros_like(x)` is `tl.zeros(x.shape, dtype=x.dtype)` (and `full_like` alike): both forms are read
            x = node.args[0].value
            rest = [a for a in node.args[1:] if not (a.keyword and a.keyword.value == "dtype")]
            dtype = next((a.value for a in node.args[1:] if a.keyword and a.keyword.value == "dtype"),
                         cst.Attribute(x, cst.Name("dtype")))
            if d.endswith("zeros_like") and rest:
                raise fail("TTR-ZEROS", "`tl.zeros_like` takes a tile (and `dtype=`)", pos)
            shape = cst.Attribute(x, cst.Name("shape"))
            name = "zeros" if d.endswith("zeros_like") else "full"
            rule = self.rules.lookup(f"{TL}.{name}")
            return self._rule_call(rule, [cst.Arg(shape)] + rest + [cst.Arg(dtype, keyword=cst.Name("dtype"))], pos)
        if isinstance(func, cst.Name) and func.value == "float" and d == "float" and len(node.args) == 1 \
                and node.args[0].keyword is None:
            v = node.args[0].value
            if isinstance(v, cst.SimpleString) and str(v.evaluated_value).strip().lower() in \
                    ("inf", "+inf", "-inf", "nan", "infinity", "-infinity"):
                return Lit(float(v.evaluated_value), pos)  # `float("-inf")`: a Python float constant
            if not isinstance(v, cst.SimpleString):  # `float(BT)`: the value as a float32 (Triton's float)
                f32 = Op("dtype", (), pos, (("dtype", "f32"),))
                self.rules_used.add("TTR-CAST")
                return Op("astype", (self.expr(v), f32), pos, rule="TTR-CAST")
        if d == f"{TL}.cast" or (isinstance(func, cst.Attribute) and func.attr.value in ("to", "cast")
                                  and not (d or "").startswith(f"{TL}.")):
            target = self._pointer_type_target(d, node)
            if target is not None:
                return self._pointer_cast(d, func, node, target, pos)
            converted = self._cast_keywords(d, func, node, pos)
            if converted is not None:
                return converted
        if isinstance(func, cst.Attribute) and func.attr.value in ("sum", "max", "min", "argmax", "argmin") and \
                not (d or "").startswith(f"{TL}."):
            return self._reduction(f"method:{func.attr.value}", [cst.Arg(func.value)] + list(node.args), pos)
        if d in (f"{TL}.sum", f"{TL}.max", f"{TL}.min", f"{TL}.argmax", f"{TL}.argmin"):
            return self._reduction(d, list(node.args), pos)
        # a tensor method (`x.exp()`), not a module function (`tl.exp`, `triton.cdiv`)
        if (d or "").startswith("math.") and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.value.value == "math" and "math" not in self.kernel_locals:
            if d == "math.sqrt" and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
                # `scale = 1.0 / math.sqrt(HEAD_DIM)`: Triton's Python float of constexprs; the port's launcher
                # computes the same f64 (sqrt rounds exactly, so f64 then f32 is the f32 Triton gets)
                return Op("const_sqrt", (self.expr(node.args[0].value),), pos, rule="TTR-MATH-SQRT")
            # Python's math module: Triton evaluates it on constexprs when it compiles (a Python float)
            raise fail("CT101", f"`{d}(...)` of Python's math module is evaluated by Triton on constants at compile "
                       "time; the port does not evaluate it: pass the value as a constexpr computed on the host, or "
                       "use the tl function on a tile", pos)
        is_method = isinstance(func, cst.Attribute) and not (d or "").startswith("triton.")
        if is_method and self.rules.lookup(f"method:{func.attr.value}") is None \
                and func.attr.value in METHOD_FORMS:
            # `x.exp()`: Triton's tensor member of `tl.exp`, the function with the tensor as its first argument
            node = node.with_changes(func=cst.Attribute(self._tl_module(), cst.Name(func.attr.value)),
                                     args=[cst.Arg(func.value)] + list(node.args))
            return self.call(node)
        if is_method and func.attr.value in ("load", "store", "atomic_add") and isinstance(func.value, cst.Name) \
                and not self.subst and func.value.value in {p.name.value for p in self._current_fn.params.params} \
                and func.value.value not in self.desc_vars:
            # a host TensorDescriptor passed as an argument, used in a way _host_descriptors does not read (offsets
            # not a list literal, an atomic through it)
            raise fail("TTR-DESC", f"`{func.value.value}.{func.attr.value}(...)` of a tensor descriptor made on the "
                       "host (triton.tools.tensor_descriptor.TensorDescriptor) is not supported in this form: a host "
                       "descriptor is read through `.load([o0, ...])` / `.store([o0, ...], v)` with the offsets "
                       "written as a list", pos)
        combining = _COMBINING.get(d or "") or (_COMBINING.get(f"method:{func.attr.value}") if is_method else None)
        if combining is not None and ((d or "").startswith(f"{TL}.") or is_method):
            return self._combining(combining, node, is_method, pos)
        if d == f"{TL}.softmax" or (is_method and func.attr.value == "softmax"):
            return self._softmax(node, is_method, pos)
        if d == f"{TL}.inline_asm_elementwise":
            return self._inline_asm(node, pos)
        if d in (f"{TL}.sort", f"{TL}.topk") and node.args and node.args[0].keyword is None \
                and (cat := self._order_free_cat(node.args[0].value)) is not None:
            rule = self.rules.lookup(d)
            return self._rule_call(rule, [cat] + list(node.args[1:]), pos)
        refusal = REFUSED.get(d or "") or (REFUSED.get(f"method:{func.attr.value}") if is_method else None)
        if refusal is not None and ((d or "").startswith(f"{TL}.") or is_method):
            raise fail("CT101", f"`{d if not is_method else 'method ' + func.attr.value}` is not supported: "
                       f"{refusal}", pos)
        if d in (f"{TL}.reshape", f"{TL}.view") or (is_method and func.attr.value in ("reshape", "view")):
            # `tl.reshape(x, H, D)` / `x.reshape(H, D)`: the shape as varargs is the shape as a tuple
            first = 0 if is_method else 1
            dims = [a for a in node.args[first:] if a.keyword is None]
            if len(dims) > 1:
                shape = cst.Arg(cst.Tuple([cst.Element(a.value) for a in dims]))
                rest = [a for a in node.args[first:] if a.keyword is not None]
                node = node.with_changes(args=list(node.args[:first]) + [shape] + rest)
        return super().call(node)

    def _order_free_cat(self, node: cst.BaseExpression):
        """`tl.cat(a, b, can_reorder=True)` as the tile `tl.sort` / `tl.topk` sorts: Triton leaves the order of the
        concatenation open (it may reorder), but a sort's result does not depend on it, so a and b joined in order
        is exact there (elsewhere tl.cat stays refused). None where `node` is not such a call."""
        if not (isinstance(node, cst.Call) and self.dotted(node.func) == f"{TL}.cat"):
            return None
        keys = ("input", "other", "can_reorder")
        given = {}
        for i, a in enumerate(node.args):
            key = a.keyword.value if a.keyword is not None else (keys[i] if i < len(keys) and not a.star else None)
            if key not in keys or key in given:
                return None
            given[key] = a.value
        reorder = given.get("can_reorder")
        if not ({"input", "other"} <= set(given) and isinstance(reorder, cst.Name) and reorder.value == "True"):
            return None  # (Triton asserts can_reorder: refused with tl.cat's reason)
        pos = self.pos(node)
        parts = TupleExpr((self.expr(given["input"]), self.expr(given["other"])), pos)
        return Op("cat", (parts, Lit(0, pos)), pos, (), "TTR-SORT")

    def _random(self, d: str, node: cst.Call, pos: Pos):
        """`tl.rand(seed, offsets)` and the other random functions: Triton's own definition of the function,
        written again in rules/triton_random.py, inlined with the call's arguments as a helper of that module
        (its names, its positions), so the Philox rounds are the model's elementwise integer ops."""
        rule = self.rules.lookup(d)
        self.rules_used.add(rule.id)
        names = [p for p in rule.params]
        for a in node.args:
            if a.star:
                raise fail(rule.id, f"star arguments of `{d}` are not supported", self.pos(a))
            if a.keyword is not None and a.keyword.value not in names:
                raise fail(rule.id, f"`{d}` takes {', '.join(names)}; not `{a.keyword.value}=`", self.pos(a))
        required = [p for p in names if p != "n_rounds"]
        given = len([a for a in node.args if a.keyword is None]) + len(
            [a for a in node.args if a.keyword is not None and a.keyword.value in required])
        if given < len(required) or len(node.args) > len(names):
            raise fail(rule.id, f"`{d}` takes {', '.join(required)} (and n_rounds=)", pos)
        seed = _arg(node, 0, "seed") if "seed" in names else None
        if seed is not None and isinstance(seed, cst.Name):
            value = self.expr(seed)
            if isinstance(value, Name):
                self.seed_params.add(value.id)
        library = _random_library(self.rules)
        try:
            return self.inline_helper(library.info.helpers[d[len(TL) + 1:]], node, library)
        except TranspileError as err:  # said at the call, with the line of Triton's definition it failed in
            at = err.diagnostic.pos
            if at.path != RANDOM_LIBRARY:
                raise
            raise fail(err.diagnostic.code, f"{err.diagnostic.message} (in `{d}`, {at})", pos) from None

    def _libdevice(self, name: str, node: cst.Call, pos: Pos):
        """`tl.erf(x)` (any of its homes) and the other libdevice functions of rules/triton_libdevice.py: libdevice's
        own sequence of operations for the function (its FTZ arm, as Triton links it), written again there and
        inlined with the call's argument as a helper of that module (its names, its positions)."""
        self.rules_used.add("TTR-LIBDEVICE-PORT")
        if len(node.args) != 1 or node.args[0].star or (node.args[0].keyword is not None
                                                         and node.args[0].keyword.value not in ("x", "arg0")):
            raise fail("TTR-LIBDEVICE-PORT", f"`{name}` takes one tensor", pos)
        library = _library(self.rules, LIBDEVICE_LIBRARY)
        call = node.with_changes(args=[node.args[0].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)])
        try:
            return self.inline_helper(library.info.helpers[name], call, library)
        except TranspileError as err:  # said at the call, with the line of the port it failed in
            at = err.diagnostic.pos
            if at.path != LIBDEVICE_LIBRARY:
                raise
            raise fail(err.diagnostic.code, f"{err.diagnostic.message} (in `{name}`, {at})", pos) from None

    def _libdevice_intrinsic(self, name: str, node: cst.Call, pos: Pos):
        """The operations of rules/triton_libdevice.py that Triton's language has no name for (that file's
        docstring): `_fma_rn_ftz(a, b, c)` (fma.rn.ftz.f32), `_add_rz_ftz(a, b)` (add.rz.ftz.f32),
        `_ex2_approx_ftz(x)` (ex2.approx.ftz.f32) and
        `_float32_only(x, name, nv_name)` (x, whose float32 form alone is ported: ops/elementwise.libdevice_f32)."""
        args = [a.value for a in node.args]
        if any(a.keyword is not None or a.star for a in node.args) or len(args) != LIBDEVICE_INTRINSICS[name]:
            raise fail("TTR-LIBDEVICE-PORT", f"`{name}` takes {LIBDEVICE_INTRINSICS[name]} arguments", pos)
        ftz = (("flush_to_zero", Lit(True, pos)),)
        if name == "_fma_rn_ftz":
            return Op("fma", tuple(self.expr(a) for a in args), pos, ftz, "TTR-LIBDEVICE-PORT")
        if name == "_add_rz_ftz":
            zero = Op("enum", (), pos, (("value", "rounding::Zero"),))
            return Op("add", tuple(self.expr(a) for a in args), pos, ftz + (("rounding_mode", zero),),
                      "TTR-LIBDEVICE-PORT")
        if name == "_rcp_approx_ftz":  # 1 / d as div.approx.ftz (d = 1 * rcp.approx(d): tools/libdevice_sass.py)
            approx = Op("enum", (), pos, (("value", "rounding::Approx"),))
            return Op("truediv", (Lit(1.0, pos), self.expr(args[0])), pos, ftz + (("rounding_mode", approx),),
                      "TTR-LIBDEVICE-PORT")
        if name == "_ex2_approx_ftz":
            return Op("exp2", (self.expr(args[0]),), pos, ftz, "TTR-LIBDEVICE-PORT")
        fn, nv = (str(a.evaluated_value) for a in args[1:])
        return Op("libdevice_f32", (self.expr(args[0]),), pos, (("name", fn), ("nv_name", nv)),
                  "TTR-LIBDEVICE-PORT")

    def _softmax(self, node: cst.Call, is_method: bool, pos: Pos):
        """`tl.softmax(x, dim=None, keep_dims=False, ieee_rounding=False)` / `x.softmax(...)`, as Triton's
        standard library writes it: `num = exp(x - max(x, dim))`, then `num / sum(num, dim)` (dim None is 0).
        The max and the sum keep their dimension here; Triton's `keep_dims=False` broadcasts the same only where
        the reduced dimension is the first (dim 0), so another dim needs `keep_dims=True` (else refused). The
        division is IEEE (`ieee_rounding=True`); Triton's default approximate division (div.full.f32, within
        2 ulp) rounds at most that much differently."""
        self.rules_used.add("TTR-SOFTMAX")
        args = ([cst.Arg(node.func.value)] if is_method else []) + list(node.args)
        keys = ("x", "dim", "keep_dims", "ieee_rounding")
        given: dict = {}
        for i, a in enumerate(args):
            if a.star:
                raise fail("TTR-SOFTMAX", "star arguments are not supported", self.pos(a))
            key = a.keyword.value if a.keyword is not None else (keys[i] if i < len(keys) else None)
            if key not in keys or key in given:
                raise fail("TTR-SOFTMAX", f"`tl.softmax` takes {', '.join(keys)}", self.pos(a))
            given[key] = a.value
        if "x" not in given:
            raise fail("TTR-SOFTMAX", "`tl.softmax` needs a tile", pos)
        for flag in ("keep_dims", "ieee_rounding"):
            v = given.get(flag)
            if v is not None and not (isinstance(v, cst.Name) and v.value in ("True", "False")):
                raise fail("TTR-SOFTMAX", f"`{flag}=` of `tl.softmax` must be True or False", self.pos(v))
        dim = given.get("dim")
        dim = cst.Integer("0") if dim is None or _is_none(dim) else dim
        keep = isinstance(given.get("keep_dims"), cst.Name) and given["keep_dims"].value == "True"
        if not keep and not (isinstance(dim, cst.Integer) and int(dim.value) == 0):
            raise fail("TTR-SOFTMAX", "`tl.softmax` over a dimension other than 0 needs `keep_dims=True` (Triton "
                       "subtracts the row maximum without its dimension, which broadcasts along the wrong axis)", pos)
        tl_mod = self._tl_module()
        call = lambda f, *a: cst.Call(cst.Attribute(tl_mod, cst.Name(f)), [cst.Arg(x) for x in a] + [  # noqa: E731
            cst.Arg(cst.Name("True"), keyword=cst.Name("keep_dims"))] if f in ("max", "sum") else [cst.Arg(x) for x in a])
        x = self._pending_local(self._block_local("softmax"), given["x"])
        shifted = cst.BinaryOperation(x, cst.Subtract(), call("max", x, dim))
        num = self._pending_local(self._block_local("softmax_num"), call("exp", shifted))
        return self.expr(cst.BinaryOperation(num, cst.Divide(), call("sum", num, dim)))

    def _inline_asm(self, node: cst.Call, pos: Pos):
        """`tl.inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack)` of the PTX subset ptx.py lowers:
        the asm's registers become locals of Triton expressions (queued before the statement, as softmax's are),
        converted here like the kernel's own source, so nothing downstream knows it was asm. The asm and the
        constraints are strings known now: literals, or module constants (also built by the module's own
        functions: module_strings.py). Whether the asm is pure changes nothing: the subset has no side effect
        (the only impure instructions it takes, PDL's griddepcontrol and `bar.sync 0`, are dropped: ptx.DROPPED)."""
        rule = self.rules.lookup(f"{TL}.inline_asm_elementwise")
        self.rules_used.add(rule.id)
        given: dict = {}
        for i, a in enumerate(node.args):
            key = a.keyword.value if a.keyword is not None else (rule.params[i] if i < len(rule.params) else None)
            if a.star or key not in rule.params or key in given:
                raise fail(rule.id, f"`tl.inline_asm_elementwise` takes {', '.join(rule.params)}", self.pos(a))
            given[key] = a.value
        missing = [k for k in ("asm", "constraints", "args", "dtype") if k not in given]
        if missing:
            raise fail(rule.id, f"`tl.inline_asm_elementwise` needs {', '.join(missing)}", pos)
        asm, constraints = (self._known_string(given[k], k, rule.id) for k in ("asm", "constraints"))
        pack = self._eval_const(given["pack"]) if "pack" in given else 1
        if not isinstance(pack, int) or isinstance(pack, bool):
            raise fail(rule.id, "`pack=` of `tl.inline_asm_elementwise` must be a constant integer",
                       self.pos(given["pack"]))
        values = given["args"]
        if not isinstance(values, (cst.List, cst.Tuple)) \
                or any(isinstance(e, cst.StarredElement) for e in values.elements):
            raise fail(rule.id, "`args=` of `tl.inline_asm_elementwise` must be a list of the values", self.pos(values))
        dtype = given["dtype"]
        many = isinstance(dtype, (cst.Tuple, cst.List))
        dtypes = [self.dotted(e.value) for e in dtype.elements] if many else [self.dotted(dtype)]
        names = [d[len(TL) + 1:] if d and d.startswith(f"{TL}.") and d[len(TL) + 1:] in TRITON_DTYPES else None
                 for d in dtypes]
        if None in names:
            raise fail(rule.id, "`dtype=` of `tl.inline_asm_elementwise` must name Triton dtypes (`tl.float32`)",
                       self.pos(dtype))
        canonical = {v: k for k, v in TRITON_DTYPES.items() if not k.startswith(("fp", "bf1"))}
        out_dtypes = [canonical[TRITON_DTYPES[n]] for n in names]
        inputs: list = []
        immediate = ptx.immediate_inputs(constraints)
        for i, e in enumerate(values.elements):  # each argument once, in a local where it is an expression
            v = e.value
            c = self.expr(v) if i in immediate else None
            if isinstance(c, Lit) and isinstance(c.value, int) and not isinstance(c.value, bool):
                inputs.append(c.value)  # an `n` constraint's literal, written into the asm (else read as a value)
                continue
            local = v if isinstance(v, cst.Name) else self._pending_local(self._block_local("asm_in"), v)
            inputs.append(local.value)
        try:
            lowered = ptx.lower(asm, constraints, inputs, out_dtypes, pack, node_code(self._tl_module()), self._block_local)
        except ptx.PtxRefusal as err:
            raise fail(rule.id, f"inline PTX assembly: {err}", self.pos(given["asm"])) from None
        for name, text in lowered.statements:
            self._pending_local(name, self._asm_node(text, node))
        outs = [self.expr(self._asm_node(t, node)) if t is not None else Lit(0, pos)  # never written: undefined
                for t in lowered.outputs]
        return TupleExpr(tuple(outs), pos) if many else outs[0]

    def _asm_node(self, text: str, call: cst.Call) -> cst.BaseExpression:
        """Triton source ptx.py wrote, parsed, each node at the position of the asm call (its diagnostics')."""
        expr = cst.parse_expression(text)
        for n in walk_nodes(expr):
            self._stand_in_pos[id(n)] = (n, call)
        return expr

    def _known_string(self, node: cst.BaseExpression, what: str, code: str) -> str:
        """A string argument known when the kernel is translated: a literal or a module constant."""
        value = node.evaluated_value if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)) else \
            self._eval_const(node)
        if isinstance(node, cst.Name) and node.value in self.kernel_locals:
            value = None
        if not isinstance(value, str):
            raise fail(code, f"`{what}=` of `tl.inline_asm_elementwise` must be a string known when the kernel is "
                       "translated (a literal, or a module constant built from literals)", self.pos(node))
        return value

    def _libdevice_rn(self, name: str, node: cst.Call, pos: Pos) -> Op:
        """libdevice's arithmetic with the rounding named (`mul_rn(a, b)`, add_rn, sub_rn, div_rn, fma_rn, and `fma`,
        which is fma_rn): one PTX instruction each (mul.rn.ftz.f32, ...: Triton links libdevice with __CUDA_FTZ =
        1), which no compiler contracts. Inference (ops/elementwise.libdevice_rn) makes it the Tile IR op with
        nearest-even rounding, flush_to_zero on float32 (not float64), and the FMA pass leaves it apart."""
        rule = "TTR-LIBDEVICE-RN"
        self.rules_used.add(rule)
        arity = 3 if name in ("fma", "fma_rn") else 2
        if any(a.star for a in node.args) or len(node.args) != arity:
            raise fail(rule, f"`libdevice.{name}` takes {arity} arguments", pos)
        args = tuple(self.expr(_arg(node, i, f"arg{i}")) for i in range(arity))
        if any(a is None for a in args):
            raise fail(rule, f"`libdevice.{name}` takes its arguments as arg0, arg1{', arg2' if arity == 3 else ''}",
                       pos)
        return Op("libdevice_rn", args, pos, (("op", LIBDEVICE_RN[name]), ("name", name)), rule)

    def _lit(self, v: object, pos: Pos) -> Expr:
        if isinstance(v, _DtypeName):  # `_FP8 = tl.float8e4nv` at module level (or the arm a configuration takes)
            return Op("dtype", (), pos, (("dtype", str(v)),))
        return super()._lit(v, pos)

    def _type_truth(self, test: cst.BaseExpression) -> bool | None:
        """The value of a condition made of type tests Triton decides when it compiles (`isinstance(x, tl.tensor)`,
        `x.dtype.is_ptr()`, combined by `and` / `or` / `not`), None for any other condition."""
        def is_type_test(n: cst.BaseExpression) -> bool:
            return isinstance(n, cst.Call) and (
                (isinstance(n.func, cst.Name) and n.func.value == "isinstance")
                or (isinstance(n.func, cst.Attribute) and n.func.attr.value == "is_ptr"))

        if isinstance(test, cst.BooleanOperation):
            a, b = self._type_truth(test.left), self._type_truth(test.right)
            if a is None or b is None:
                return None
            return (a and b) if isinstance(test.operator, cst.And) else (a or b)
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            v = self._type_truth(test.expression)
            return None if v is None else not v
        if is_type_test(test):
            v = self.expr(test)
            return v.value if isinstance(v, Lit) and isinstance(v.value, bool) else None
        return None

    def _isinstance(self, node: cst.Call, pos: Pos) -> Lit:
        """`isinstance(x, tl.tensor)` / `isinstance(x, tl.constexpr)` in a kernel (a helper serving both): a literal
        or constexpr parameter is a constexpr; a pointer is a tensor. A run-time int parameter is not decided:
        Triton specializes an int argument equal to 1 as a constexpr, so the answer depends on the launch."""
        cls = self.dotted(node.args[1].value) if isinstance(node.args[1].value, (cst.Name, cst.Attribute)) else None
        kinds = {f"{TL}.tensor": "tensor", f"{TL}.core.tensor": "tensor", f"{TL}.constexpr": "constexpr",
                 f"{TL}.core.constexpr": "constexpr"}
        if cls not in kinds:
            raise fail("CT101", "`isinstance(x, C)` is ported for C = tl.tensor or tl.constexpr only", pos)
        v = self.expr(node.args[0].value)
        if isinstance(v, Lit) or (isinstance(v, Name) and v.id in getattr(self, "constexpr_types", {})):
            return Lit(kinds[cls] == "constexpr", pos)
        optional = isinstance(v, _Ptr) and isinstance(v.base, str) and v.base in getattr(self, "given_names", {})
        if isinstance(v, (_Ptr, _BlockPtr, _Desc)) and not optional:  # (an optional pointer may be None)
            return Lit(kinds[cls] == "tensor", pos)
        raise fail("CT101", "`isinstance` of a run-time value that is not a pointer: Triton specializes an int "
                   "argument equal to 1 as a constexpr, so whether it is a `tl.tensor` depends on the launch; test a "
                   "constexpr flag instead", pos)

    def _nan_minmax(self, d: str, node: cst.Call, pos: Pos) -> Op:
        """`tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)`: on floats Triton's arith.maximumf (a NaN operand
        gives NaN), Tile IR's maxf with propagate_nan (`nan::Enabled`); `PropagateNan.NONE` is the default maxnumf
        (the other operand). On integers Triton ignores it."""
        kw = next(a for a in node.args if a.keyword is not None and a.keyword.value == "propagate_nan")
        mode = self.dotted(kw.value) if isinstance(kw.value, (cst.Name, cst.Attribute)) else None
        if mode not in (f"{TL}.PropagateNan.ALL", f"{TL}.PropagateNan.NONE", f"{TL}.core.PropagateNan.ALL",
                        f"{TL}.core.PropagateNan.NONE"):
            raise fail("CT100", "`propagate_nan=` takes `tl.PropagateNan.ALL` or `tl.PropagateNan.NONE`", self.pos(kw))
        op = self._rule_call(self.rules.lookup(d), [a for a in node.args if a is not kw], pos)
        return replace(op, attrs=op.attrs + (("nan", True),)) if mode.endswith(".ALL") else op

    def _libdevice_pow(self, node: cst.Call, pos: Pos) -> Expr:
        """`libdevice.pow(x, y)`. With y a Python int n >= 1 (an int32 operand, so Triton calls __nv_powif on
        float32, __nv_powi on float64): libdevice's square-and-multiply, r = 1; per bit of n from the lowest: r = r * x
        where the bit is set, then x = x * x, each multiplication mul.rn (ftz on float32: libdevice's __CUDA_FTZ
        arm), unrolled here for n known (1 * x included: it flushes a subnormal x as libdevice does). Any other
        exponent is __nv_powf's (a float): cuTile Rust's pow of the float operands (TTR-POWF: within the function's
        error bound, not libdevice's last bits); a Python int below 1 is refused (__nv_powif's 1 / r and x ** 0)."""
        rule = "TTR-LIBDEVICE-RN"
        exponent = _arg(node, 1, "arg1")
        if exponent is None or _arg(node, 0, "arg0") is None or len(node.args) != 2:
            raise fail("CT101", "`libdevice.pow` takes two operands", pos)
        n = self._eval_const(exponent)
        if type(n) is int and not 1 <= n < 2**31:
            raise fail("CT101", f"`libdevice.pow` of the integer exponent {n}: __nv_powif's square-and-multiply is "
                       "ported for n >= 1 only; write 1.0 / (x * x) or a float exponent", pos)
        if type(n) is not int:
            self.rules_used.add("TTR-POWF")
            return Op("pow", (self.expr(_arg(node, 0, "arg0")), self.expr(exponent)), pos, (), "TTR-POWF")
        self.rules_used.add(rule)
        x = self.expr(_arg(node, 0, "arg0"))

        def mul(a: Expr, b: Expr) -> Op:
            return Op("libdevice_rn", (a, b), pos, (("op", "mul"), ("name", "mul_rn")), rule)
        r: Expr = Lit(1.0, pos)
        while True:
            if n & 1:
                r = mul(r, x)
            n >>= 1
            if n == 0:
                return r
            x = mul(x, x)

    def _libdevice_class(self, name: str, node: cst.Call, pos: Pos) -> Expr:
        """libdevice's `isnan`, `isinf`, `finitef`, `isfinited`: Triton's int32 result, 1 where the float is NaN,
        infinite or finite, else 0, from the comparisons that classify it (NaN is the one value unequal to itself;
        |x| of an infinity equals +inf, of a finite float is below it, and of NaN compares false)."""
        self.rules_used.add("TTR-LIBDEVICE-CLASS")
        x = self.expr(_arg(node, 0, "arg0"))
        inf = Lit(float("inf"), pos)
        kind = LIBDEVICE_CLASSES[name]
        if kind == "isnan":
            test = self._op("operator:!=", (x, x), pos, (("pred", "!="),))
        else:
            pred = "==" if kind == "isinf" else "<"
            test = self._op(f"operator:{pred}", (self._op(f"{TL}.abs", (x,), pos), inf), pos, (("pred", pred),))
        bit = self._op(f"{TL}.where", (test, Lit(1, pos), Lit(0, pos)), pos)
        return self._op(f"{TL}.cast", (bit, Op("dtype", (), pos, (("dtype", "i32"),))), pos)

    def _exact_math(self, name: str, node: cst.Call, pos: Pos):
        """libdevice functions cuTile Rust has no op for, composed exactly from ops it has: `div_rn` is IEEE
        division (Triton's `/` on floats); `trunc` is ceil below zero, floor above; `round` (half away from
        zero) is trunc plus the sign where the dropped fraction is at least 0.5 (x - trunc(x) is exact); `rint` /
        `nearbyint` (half to even) step only past 0.5, or at 0.5 from an odd trunc (t - 2 floor(t / 2) is exact for
        an integral t): -0.0, NaN and infinities come out as libdevice gives them."""
        self.rules_used.add("TTR-LIBDEVICE-EXACT")
        x = self.expr(_arg(node, 0, "x" if name != "div_rn" else "x"))
        if name == "div_rn":
            return self._op("operator:/", (x, self.expr(_arg(node, 1, "y"))), pos)
        below = self._op("operator:<", (x, Lit(0.0, pos)), pos, (("pred", "<"),))
        t = self._op(f"{TL}.where", (below, self._op(f"{TL}.ceil", (x,), pos), self._op(f"{TL}.floor", (x,), pos)), pos)
        if name == "trunc":
            return t
        frac = self._op(f"{TL}.abs", (self._op("operator:-", (x, t), pos),), pos)
        step = self._op(f"{TL}.where", (below, Lit(-1.0, pos), Lit(1.0, pos)), pos)
        if name in ("rint", "nearbyint"):
            halved = self._op(f"{TL}.floor", (self._op("operator:*", (t, Lit(0.5, pos)), pos),), pos)
            odd = self._op("operator:!=", (self._op("operator:-", (t, self._op("operator:*", (halved, Lit(2.0, pos)), pos)), pos),
                                           Lit(0.0, pos)), pos, (("pred", "!="),))
            past = self._op("operator:>", (frac, Lit(0.5, pos)), pos, (("pred", ">"),))
            at = self._op("operator:==", (frac, Lit(0.5, pos)), pos, (("pred", "=="),))
            half = self._op("operator:|", (past, self._op("operator:&", (at, odd), pos)), pos)
        else:
            half = self._op("operator:>=", (frac, Lit(0.5, pos)), pos, (("pred", ">="),))
        return self._op(f"{TL}.where", (half, self._op("operator:+", (t, step), pos), t), pos)

    def _pointer_type_target(self, d: str | None, node: cst.Call):
        """The `tl.pointer_type(...)` call a cast converts to (`x.to(tl.pointer_type(T))`, `tl.cast(x, ...)`)."""
        if _pointer_cast_operand(self, node) is None:
            return None
        return _arg(node, 1 if d == f"{TL}.cast" else 0, "dtype")

    def _pointer_cast(self, d: str | None, func, node: cst.Call, target: cst.Call, pos: Pos) -> _Ptr:
        """`p.to(tl.pointer_type(T))` (TTR-PTRCAST): a pointer parameter read as elements of T (the same buffer,
        offsets counting T's elements: Tile IR's ptr_to_ptr), or an int64 address (`tl.load(table + i)`, the
        host's `t.data_ptr()` values) as a pointer to T (int_to_ptr). T is a literal tl dtype."""
        rule = "TTR-PTRCAST"
        self.rules_used.add(rule)
        keys = {a.keyword.value for a in node.args if a.keyword is not None} - {"dtype"}
        if keys:
            raise fail(rule, f"`{', '.join(sorted(keys))}=` of a pointer cast is not supported", pos)
        args = [a for a in target.args]
        elem = self.dotted(args[0].value) if len(args) == 1 and args[0].keyword is None else None
        leaf = elem[len(TL) + 1:] if elem and elem.startswith(f"{TL}.") else None
        if leaf not in TRITON_DTYPES or TRITON_DTYPES[leaf] in ("bool", "f64"):
            raise fail(rule, f"`{node_code(target).strip()}`: the element type of a cast pointer must be a tl dtype "
                       "named literally (tl.float16, tl.int32, ...; not a dtype constexpr or `p.dtype.element_ty`, "
                       "which the port would have to resolve per launch)", pos)
        dt = TRITON_DTYPES[leaf]
        value = self.expr(_arg(node, 0, "input") if d == f"{TL}.cast" else func.value)
        if isinstance(value, _Ptr):
            if value.offsets is not None:
                raise fail(rule, "a pointer advanced by offsets and then cast to another element type is not "
                           "supported (the offsets count the old elements): cast the pointer first, then add "
                           "offsets counted in the new element type", pos)
            base = value.base
            if isinstance(base, ArmBases):  # chosen at run time: each arm's tensor read as T
                arms = tuple((c, _Addr(b.addr, dt) if isinstance(b, _Addr) else _Cast(getattr(b, "param", b), dt))
                             for c, b in base.arms)
                return _Ptr(ArmBases(arms), None, pos)
            if isinstance(base, _Addr):
                return _Ptr(_Addr(base.addr, dt), None, pos)
            param = base.param if isinstance(base, _Cast) else base
            return _Ptr(_Cast(param, dt), None, pos)
        if isinstance(value, (_BlockPtr, _Desc)):
            raise fail(rule, "a block pointer or tensor descriptor cast to a pointer type", pos)
        # an address: int64 (checked by inference, which makes an integer table int64)
        return _Ptr(_Addr(value, dt), None, pos)

    def _cast_keywords(self, d: str | None, func, node: cst.Call, pos: Pos):
        """`x.to(dt, ...)` / `tl.cast(x, dt, ...)` with `bitcast=True` (the bits reinterpreted: rule TTR-BITCAST) or
        `fp_downcast_rounding="rtne"` (what a conversion does anyway; "rtz" is refused); None: neither keyword
        needs handling here (the conversion's own rule reads the call)."""
        keyword = {a.keyword.value: a for a in node.args if a.keyword is not None}
        rounding, flag = keyword.get("fp_downcast_rounding"), keyword.get("bitcast")
        if rounding is not None:
            mode = rounding.value.evaluated_value if isinstance(rounding.value, cst.SimpleString) else \
                None if _is_none(rounding.value) else "?"
            if mode not in (None, "rtne"):
                raise fail("TTR-TO", f"`fp_downcast_rounding={node_code(rounding.value).strip()}`: only round to nearest "
                           "even (\"rtne\", the default) is supported", self.pos(rounding))
        if flag is not None and not (isinstance(flag.value, cst.Name) and flag.value.value in ("True", "False")):
            raise fail("TTR-BITCAST", "`bitcast=` must be True or False", self.pos(flag))
        bits = flag is not None and flag.value.value == "True"
        if rounding is None and not bits:
            return None
        rest = [a for a in node.args if a is not rounding and a is not flag]
        if bits:
            rule = self.rules.lookup("method:to(bitcast=True)")
        else:
            rule = self.rules.lookup(f"{TL}.cast" if d == f"{TL}.cast" else f"method:{func.attr.value}")
        return self._rule_call(rule, rest if d == f"{TL}.cast" else [cst.Arg(func.value)] + rest, pos)

    def _reduction(self, source: str, args: list, pos: Pos):
        """`tl.sum(x, axis=..., keep_dims=...)`: Triton's reductions (`keep_dims` is cuTile's `keepdims`;
        sums of integers narrower than 32 bits accumulate in int32, as Triton's `sum` does)."""
        rule = self.rules.lookup(source)
        fixed, indices, tie_left = [], False, None
        sum_dtype = next((a.value for a in args if a.keyword is not None and a.keyword.value == "dtype"
                          and source.endswith("sum") and not _is_none(a.value)), None)
        if sum_dtype is not None:
            # `tl.sum(x, axis, dtype=tl.float32)`: Triton casts the input to dtype, then sums
            args = [a for a in args if a.keyword is None or a.keyword.value != "dtype"]
            at = next((i for i, a in enumerate(args) if (a.keyword is None and not a.star)
                       or (a.keyword is not None and a.keyword.value == "input")), None)
            if at is None:
                raise fail(rule.id, f"`{source}` without its input", pos)
            cast = cst.Call(cst.Attribute(args[at].value, cst.Name("to")), [cst.Arg(sum_dtype)])
            for n in (cast, cast.func, cast.func.attr, cast.args[0]):  # (new nodes: the input's position)
                self._stand_in_pos[id(n)] = (n, args[at].value)
            args = args[:at] + [args[at].with_changes(value=cast)] + args[at + 1:]
        for a in args:
            if a.keyword is not None and a.keyword.value == "keep_dims":
                a = a.with_changes(keyword=cst.Name("keepdims"))
            if a.keyword is not None and a.keyword.value == "return_indices" and source.endswith(("max", "min")) \
                    and isinstance(a.value, cst.Name) and a.value.value == "True":
                indices = True  # `v, i = tl.max(x, 0, return_indices=True)`: the value and tl.argmax's index
                continue
            if a.keyword is not None and a.keyword.value in ("return_indices", "dtype", "propagate_nan"):
                v = a.value
                if not (isinstance(v, cst.Name) and v.value in ("False", "None")):
                    raise fail(rule.id, f"`{a.keyword.value}=` of `{source}` is not supported yet", self.pos(a))
                continue
            if a.keyword is not None and a.keyword.value == "return_indices_tie_break_left":
                tie_left = a.value
                continue
            fixed.append(a)
        # the rule knows `keepdims` (cuTile's spelling) through the cuTile handler's attribute name
        rule = replace(rule, defaults=tuple(sorted(dict(rule.defaults, keepdims="false").items())))
        value = self._rule_call(rule, fixed, pos)
        if not indices:
            return value
        arg = f"{TL}.arg{source[-3:]}"
        tie = [cst.Arg(tie_left, keyword=cst.Name("tie_break_left"))] if tie_left is not None else []
        return TupleExpr((value, self._reduction(arg, fixed + tie, pos)), pos)

    def _combining(self, name: str, node: cst.Call, is_method: bool, pos: Pos):
        """`tl.reduce(x, axis, combine_fn, keep_dims)` / `tl.associative_scan(x, axis, combine_fn, reverse)` and
        the forms with Triton's own combining function (tl.reduce_or, tl.xor_sum, tl.cumprod; method forms too):
        a `tl_reduce` / `tl_scan` of the operator the function computes (frontend/combine.py); the passes pick
        the cuTile Rust op whose identity is exact for it, or refuse."""
        scan = name in ("associative_scan", "cumprod")
        rule = self.rules.lookup(f"{TL}.{'associative_scan' if scan else 'reduce'}")
        self.rules_used.add(rule.id)
        params = {"reduce": ("input", "axis", "combine_fn", "keep_dims"),
                  "reduce_or": ("input", "axis", "keep_dims"), "xor_sum": ("input", "axis", "keep_dims"),
                  "associative_scan": ("input", "axis", "combine_fn", "reverse"),
                  "cumprod": ("input", "axis", "reverse")}[name]
        given = ([cst.Arg(node.func.value)] if is_method else []) + list(node.args)
        bound: dict[str, cst.BaseExpression] = {}
        for i, a in enumerate(given):
            key = a.keyword.value if a.keyword is not None else (params[i] if i < len(params) else None)
            if a.star or key not in params or key in bound:
                raise fail(rule.id, f"cannot match the arguments of `{name}` (it takes {', '.join(params)})",
                           self.pos(a))
            bound[key] = a.value
        if "input" not in bound:
            raise fail(rule.id, f"`{name}` takes a tile", pos)
        fn = bound.get("combine_fn")
        if isinstance(fn, cst.IfExp):
            # `combine_fn=(f if FLAG else g)`: the call with f if FLAG else the call with g (a constexpr choice)
            arm = lambda f: node.with_changes(args=[a.with_changes(value=f) if a.value is fn else a  # noqa: E731
                                                    for a in node.args])
            return self.expr(cst.IfExp(test=fn.test, body=arm(fn.body), orelse=arm(fn.orelse)))
        if isinstance(bound["input"], cst.Tuple) and name == "reduce" and len(bound["input"].elements) == 2 \
                and fn is not None and not any(isinstance(el, cst.StarredElement) for el in bound["input"].elements):
            return self._pair_reduce(bound, fn, rule.id, pos)
        if isinstance(bound["input"], cst.Tuple):
            raise fail(rule.id, f"`{name}` of a tuple of tiles (a multi-operand {'scan' if scan else 'reduction'}) "
                       "is not ported: cuTile Rust 0.5's reduce and scan take one tile", pos)
        if name in ("reduce", "associative_scan"):
            if fn is None:
                raise fail(rule.id, f"`{name}` takes a combining function (`combine_fn`)", pos)
            operator = self._combine_operator(fn, rule.id, pos)
        else:
            operator = {"reduce_or": "or", "xor_sum": "xor", "cumprod": "mul"}[name]
        x = self.expr(bound["input"])
        axis = bound.get("axis")
        if scan:
            axis_e = self.expr(axis) if axis is not None else Lit(0, pos)  # associative_scan's axis is required
            rev = self.expr(bound["reverse"]) if "reverse" in bound else Lit(False, pos)
            return Op("tl_scan", (x, axis_e), pos, (("combine", operator), ("reverse", rev)), rule.id)
        axis_e = None if axis is None or (isinstance(axis, cst.Name) and axis.value == "None") else self.expr(axis)
        kd = self.expr(bound["keep_dims"]) if "keep_dims" in bound else Lit(False, pos)
        return Op("tl_reduce", (x, axis_e), pos, (("combine", operator), ("keepdims", kd)), rule.id)

    def _pair_reduce(self, bound: dict, fn: cst.BaseExpression, code: str, pos: Pos) -> TupleExpr:
        """`tl.reduce((v, i), axis, f)` where f selects a whole (value, index) pair by a total preorder (an argmax
        or argmin: frontend/combine.pair_selection): the two results, each a `tl_pair_reduce` (passes/ops/
        reductions.py: the best value, the first (or last) index holding it, and that element's value)."""
        found, home = self._combine_function(fn, code, pos)
        try:
            direction, nan, tie = pair_selection(found, home.dotted)
        except ValueError as why:
            raise fail(code, f"`tl.reduce` of a tuple of tiles (a multi-operand reduction) is ported for an argmax / "
                       f"argmin combine only, and `{found.name.value}` is not one: {why}", pos) from None
        v, i = (self.expr(el.value) for el in bound["input"].elements)
        axis = bound.get("axis")
        axis_e = None if axis is None or (isinstance(axis, cst.Name) and axis.value == "None") else self.expr(axis)
        kd = self.expr(bound["keep_dims"]) if "keep_dims" in bound else Lit(False, pos)
        attrs = (("direction", direction), ("nan", nan), ("tie", tie), ("keepdims", kd))
        return TupleExpr(tuple(Op("tl_pair_reduce", (v, i, axis_e), pos, attrs + (("part", part),), code)
                               for part in (0, 1)), pos)

    def _combine_function(self, fn: cst.BaseExpression, code: str, pos: Pos):
        """The @triton.jit function `fn` names (this module's, imported, or `module.f`) and its module's converter."""
        key = self.dotted(fn) if isinstance(fn, (cst.Name, cst.Attribute)) else None
        local = fn.value if isinstance(fn, cst.Name) else None
        if isinstance(fn, cst.Attribute) and isinstance(fn.value, cst.Name):  # `utils.reduce_all`
            local = f"{fn.value.value}.{fn.attr.value}"
        found = self.info.kernels.get(local) if local else None
        home = self
        if found is None and local in self.info.helpers:
            found, home = self.info.helpers[local], self.info.helper_home.get(local) or self
        if found is None:
            raise fail(code, f"the combining function `{key or cst.Module([]).code_for_node(fn)}` is not a @triton.jit "
                       "function of this module or one it imports, so its operator is not known", pos)
        return found, home

    def _combine_operator(self, fn: cst.BaseExpression, code: str, pos: Pos) -> str:
        """The operator of a combining function named by `fn` (this module's, imported, or `module.f`)."""
        found, home = self._combine_function(fn, code, pos)
        try:
            return combine_operator(found, home.dotted)
        except ValueError as why:
            raise fail(code, f"the combining function `{found.name.value}` is not ported: {why}", pos) from None

    def _arange(self, node: cst.Call, pos: Pos):
        start = _arg(node, 0, "start")
        end = _arg(node, 1, "end")
        if start is None or end is None:
            raise fail("TTR-ARANGE", "`tl.arange(start, end)` needs both bounds", pos)
        s, e = self.expr(start), self.expr(end)
        if isinstance(s, Lit) and s.value == 0:
            size = e
        else:
            size = self._op("operator:-", (e, s), pos)
        rule = self.rules.lookup(f"{TL}.arange")
        self.rules_used.add(rule.id)
        iota = Op("arange", (size, None), pos, (), rule.id)
        if isinstance(s, Lit) and s.value == 0:
            return iota
        return self._op("operator:+", (iota, s), pos)

    def _sigmoid(self, x, pos: Pos):
        # Triton's own definition (language/standard.py): 1 / (1 + exp(-x))
        self.rules_used.add("TTR-SIGMOID")
        neg = self._op("operator:neg", (x,), pos)
        ex = self._op(f"{TL}.exp", (neg,), pos)
        den = self._op("operator:+", (Lit(1, pos), ex), pos)
        return self._op("operator:/", (Lit(1, pos), den), pos)

    def _clamp(self, node: cst.Call, pos: Pos):
        x, lo, hi = (self.expr(_arg(node, i, k)) for i, k in enumerate(("x", "min", "max")))
        self.rules_used.add("TTR-CLAMP")
        return self._op(f"{TL}.minimum", (self._op(f"{TL}.maximum", (x, lo), pos), hi), pos)

    def _dot(self, node: cst.Call, pos: Pos):
        rule = self.rules.lookup(f"{TL}.dot")
        self.rules_used.add(rule.id)
        a, b = self.expr(_arg(node, 0, "input")), self.expr(_arg(node, 1, "other"))
        acc = _arg(node, 2, "acc")
        precision = "tf32"  # Triton's default for float32 operands (TRITON_F32_DEFAULT unset)
        out_dtype = ""
        for arg in node.args:
            key = arg.keyword.value if arg.keyword else None
            if key in ("out_dtype",):
                v = self.expr(arg.value)
                if isinstance(v, Name) and v.id in self.dtype_consts:
                    # a dtype constexpr (`out_dtype=ACC_DTYPE`): one entry per dtype it may name; the mma/matmul
                    # handlers check each against the operands (an entry whose type is not the accumulation
                    # type is dropped: the launcher refuses that dtype)
                    out_dtype = v
                    continue
                # float32 (float operands) and int32 (int8 operands) are the defaults Triton's dot accumulates in;
                # the matmul/mma handlers check the operands give that type
                if not (isinstance(v, Op) and v.op == "dtype" and v.attr("dtype") in ("f32", "i32")):
                    raise fail(rule.id, "`tl.dot(out_dtype=...)` other than float32 / int32 is not supported yet",
                               self.pos(arg))
                out_dtype = v.attr("dtype")
            elif key == "input_precision" and not _is_none(arg.value):
                v = arg.value
                if isinstance(v, cst.Name) and v.value in self.string_consts and not self.subst:
                    # a string constexpr (`DOT_PRECISION: tl.constexpr = "tf32x3"`): chosen per entry (one per
                    # string it may hold; infer reads the entry's choice)
                    precision = Name(v.value, self.pos(arg))
                    continue
                chosen = self._precision_choice(v.value) if isinstance(v, cst.Name) else None
                if chosen is not None:  # `ip: tl.constexpr = "ieee" if PREC == 2 else "tf32"`: per entry
                    precision = chosen
                    continue
                known = self._module_precision(v.value) if isinstance(v, cst.Name) else None
                if known is None and isinstance(v, cst.Name):  # a module constant that is None: the default
                    continue
                if isinstance(known, str):  # a module constant (`PRECISION = tl.constexpr("ieee")`)
                    v = cst.SimpleString(repr(known))
                precision = DOT_PRECISIONS.get(v.evaluated_value) if isinstance(v, cst.SimpleString) else None
                if precision is None:
                    raise fail(rule.id, f"`input_precision` must be one of {', '.join(map(repr, DOT_PRECISIONS))} "
                               "(Triton 3.6 on NVIDIA) or None", self.pos(arg))
            elif key == "allow_tf32" and not _is_none(arg.value):
                v = self._eval_const(arg.value)
                if not isinstance(v, bool):
                    raise fail(rule.id, "`allow_tf32` must be True or False", self.pos(arg))
                precision = "tf32" if v else "ieee"
            elif key in ("input_precision", "allow_tf32", "max_num_imprecise_acc", None, "input", "other", "acc"):
                continue
            else:
                raise fail(rule.id, f"keyword `{key}` of `tl.dot` is not supported", self.pos(arg))
        if acc is None or (isinstance(acc, cst.Name) and acc.value == "None"):
            # Triton's dot without an accumulator: a zero f32 accumulator (integers: int32)
            return Op("matmul", (a, b), pos, (("accumulator", "f32"), ("out_dtype", out_dtype),
                                              ("precision", precision)), rule.id)
        return Op("mma", (a, b, self.expr(acc)), pos, (("out_dtype", out_dtype), ("precision", precision)), rule.id)

    def _precision_choice(self, name: str) -> Op | None:
        """`dot_ip: tl.constexpr = "ieee" if DOT_PRECISION == 2 else "tf32"`, the one binding of a local of the
        function being converted: a choice between precisions (nested choices too) on a test of constants, which
        Triton makes when it compiles: a conditional expression the dot's handler decides per entry."""
        home, fn = self._innermost_fn()
        bound = [n for n in walk_nodes(fn.body) if isinstance(n, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For))
                 and any(isinstance(t, cst.Name) and t.value == name for t in _bound_targets(n))]
        if not (len(bound) == 1 and isinstance(bound[0], cst.AnnAssign) and bound[0].value is not None
                and home._is_constexpr(bound[0].annotation)):
            return None

        def choice(e: cst.BaseExpression):
            if isinstance(e, cst.SimpleString):
                return Lit(DOT_PRECISIONS[e.evaluated_value], self.pos(e)) \
                    if e.evaluated_value in DOT_PRECISIONS else None
            if isinstance(e, cst.IfExp) and home._const_test(e.test):
                a, b = choice(e.body), choice(e.orelse)
                if a is not None and b is not None:
                    return Op("ifexp", (self.expr(e.test), a, b), self.pos(e), (("const", True),))
            return None
        found = choice(bound[0].value)
        return found if isinstance(found, Op) else None

    # ------------------------------------------------------------------ block pointers
    def _module_precision(self, name: str) -> object:
        """The string a module-level name gives `input_precision=`: a constant, or a configuration value decided
        for the port's platform (`tl.constexpr("ieee" if IS_NPU else "tf32x3")`, IS_NPU read from the package);
        None for None; UNDECIDED where it is not known here."""
        known = self._eval_const(cst.Name(name))
        if known is not None:
            return known
        return self.config_of(name)

    def _make_block_ptr(self, node: cst.Call, pos: Pos) -> _BlockPtr:
        """`tl.make_block_ptr(base, shape, strides, offsets, block_shape, order)` (`order` is a layout hint)."""
        self.rules_used.add("TTR-BLOCKPTR")
        keys = ("base", "shape", "strides", "offsets", "block_shape", "order")
        values: dict = {}
        for i, a in enumerate(node.args):
            key = a.keyword.value if a.keyword else (keys[i] if i < len(keys) else None)
            if key not in keys or a.star:
                raise fail("TTR-BLOCKPTR", f"argument `{key or i}` of `tl.make_block_ptr` is not supported",
                           self.pos(a))
            values[key] = a.value
        if any(k not in values for k in keys[:5]):
            raise fail("TTR-BLOCKPTR", "`tl.make_block_ptr` needs base, shape, strides, offsets and block_shape",
                       pos)

        def items(key):
            v = values[key]
            if not isinstance(v, (cst.List, cst.Tuple)) or any(isinstance(e, cst.StarredElement) for e in v.elements):
                raise fail("TTR-BLOCKPTR", f"`{key}` of `tl.make_block_ptr` must be a tuple", self.pos(v))
            return tuple(e.value for e in v.elements)
        shape, strides, offsets, block = (items(k) for k in ("shape", "strides", "offsets", "block_shape"))
        if not (len(shape) == len(strides) == len(offsets) == len(block)) or not shape:
            raise fail("TTR-BLOCKPTR", "shape, strides, offsets and block_shape must have one entry per axis", pos)
        return _BlockPtr(values["base"], shape, strides, offsets, block)

    def _advance(self, node: cst.Call, pos: Pos) -> _BlockPtr:
        """`tl.advance(p, (d0, d1))`: the same block pointer at offsets + deltas."""
        self.rules_used.add("TTR-BLOCKPTR")
        bp = self.expr(_arg(node, 0, "base"))
        deltas = _arg(node, 1, "offsets")
        if not isinstance(bp, _BlockPtr):
            raise fail("TTR-BLOCKPTR", "`tl.advance` of a value that is not a block pointer", pos)
        if not isinstance(deltas, (cst.List, cst.Tuple)) or len(deltas.elements) != len(bp.offsets):
            raise fail("TTR-BLOCKPTR", "`tl.advance` takes one offset per axis of the block pointer", pos)
        offsets = tuple(cst.BinaryOperation(o, cst.Add(), e.value) for o, e in zip(bp.offsets, deltas.elements))
        return replace(bp, offsets=offsets)

    def _assign_block_ptr(self, target: str, bp: _BlockPtr, pos: Pos) -> list:
        """`p = tl.make_block_ptr(...)` / `p = tl.advance(p, ...)`: its parts into `p`'s locals (all computed
        before any is assigned: an advance reads the old offsets)."""
        old = self._block_var(target)
        if old is not None and [node_code(b) for b in old.block] != [node_code(b) for b in bp.block]:
            raise fail("TTR-BLOCKPTR", f"`{target}` is given block pointers of different block shapes", pos)
        self.block_poisoned.discard(target)  # bound again: one block shape from here on
        parts = [("base", bp.base)] + [(f"shape{i}", v) for i, v in enumerate(bp.shape)] + \
            [(f"stride{i}", v) for i, v in enumerate(bp.strides)] + [(f"off{i}", v) for i, v in enumerate(bp.offsets)]
        # an advance keeps the base, shape and strides (`p_bp_base = p_bp_base` would only add carried values)
        temps = [(f"{target}_bp_new_{k}", f"{target}_bp_{k}", v) for k, v in parts
                 if not (old is not None and isinstance(v, cst.Name) and v.value == f"{target}_bp_{k}")]
        out: list = []
        finals = {final for _, final, _ in temps}
        if not any(isinstance(n, cst.Name) and n.value in finals - {final} for _, final, v in temps for n in walk_nodes(v)):
            # no part reads another's old value (an advance adds to each offset alone): each assigned in place,
            # so an advance in a loop is `p_bp_off1 = p_bp_off1 + BLOCK_K`, the carried offset views.py proves
            for _, final, v in temps:
                out += self.small(cst.Assign([cst.AssignTarget(cst.Name(final))], v))
        else:
            for new, _, v in temps:
                out += self.small(cst.Assign([cst.AssignTarget(cst.Name(new))], v))
            for new, final, _ in temps:
                out += self.small(cst.Assign([cst.AssignTarget(cst.Name(final))], cst.Name(new)))
        self.block_depth[target] = len(self.subst)
        self.block_vars[target] = _BlockPtr(cst.Name(f"{target}_bp_base"),
                                            *(tuple(cst.Name(f"{target}_bp_{k}{i}") for i in range(len(bp.shape)))
                                              for k in ("shape", "stride", "off")), bp.block)
        return out

    def _bound_axes(self, v) -> list | None:
        """The axes a name holds that is given as `boundary_check=` (a helper's parameter or a local constexpr:
        a tuple of ints, an int, None: []); None where `v` is no such name."""
        if not isinstance(v, cst.Name) or self._eval_const(v) is not None:
            return None
        e = self.expr(v)
        if isinstance(e, Name) and e.id == "None":
            return []
        items = e.items if isinstance(e, TupleExpr) else (e,)
        if not all(isinstance(x, Lit) for x in items):
            return None
        return [x.value for x in items]

    def _block_access(self, d: str, leaf: str, bp: _BlockPtr, node: cst.Call, pos: Pos):
        """`tl.load(p, boundary_check=(0, 1), padding_option="zero")` / `tl.store(p, v, boundary_check=...)`
        through a block pointer: the element access with Triton's mask (`0 <= index < shape` per checked axis)
        and padding (`"zero"`: 0, `"nan"`: NaN, none: the masked lanes are undefined, as in Triton)."""
        if leaf not in ("load", "store"):
            raise fail("TTR-BLOCKPTR", f"`tl.{leaf}` through a block pointer is not supported", pos)
        keys = ("pointer", "boundary_check", "padding_option", "cache_modifier", "eviction_policy", "volatile") \
            if leaf == "load" else ("pointer", "value", "boundary_check", "cache_modifier", "eviction_policy")
        values: dict = {}
        for i, a in enumerate(node.args):
            key = a.keyword.value if a.keyword else (keys[i] if i < len(keys) else None)
            if key not in keys:
                raise fail("TTR-BLOCKPTR", f"argument `{key or i}` of `tl.{leaf}` through a block pointer is not "
                           "supported", self.pos(a))
            values[key] = a.value
        rank = len(bp.shape)
        checked: list[int] = []
        bound = self._bound_axes(values.get("boundary_check"))
        if bound is not None:  # a name a helper is given the axes by (`boundary_check=k_bound`): its value
            axes = bound
            if axes:
                if any(not isinstance(x, int) or isinstance(x, bool) or not 0 <= x < rank for x in axes):
                    raise fail("TTR-BLOCKPTR", "`boundary_check` must list axes of the block pointer",
                               self.pos(values["boundary_check"]))
                checked = sorted(set(axes))
        elif "boundary_check" in values and not _is_none_or_empty(values["boundary_check"]):
            v = values["boundary_check"]
            elems = v.elements if isinstance(v, (cst.List, cst.Tuple)) else None
            axes = [self._eval_const(e.value) for e in elems] if elems is not None else [self._eval_const(v)]
            if any(not isinstance(x, int) or isinstance(x, bool) or not 0 <= x < rank for x in axes):
                raise fail("TTR-BLOCKPTR", "`boundary_check` must list axes of the block pointer", self.pos(v))
            checked = sorted(set(axes))
        tl_ = self._tl_module()

        def spread(e, axis):  # an axis' indices broadcast over the block: x[:, None] ...
            if rank == 1:
                return e
            idx = [cst.SubscriptElement(cst.Index(cst.Name("None"))) if i != axis else
                   cst.SubscriptElement(cst.Slice(None, None)) for i in range(rank)]
            return cst.Subscript(e, idx)
        # each axis' indices and the mask are locals (`p_rows0`, `p_mask`), computed once per access
        ptr_arg = _arg(node, 0, "pointer")
        tag = self._block_local(ptr_arg.value if isinstance(ptr_arg, cst.Name) else "block_ptr")
        index = []
        for axis, (o, b) in enumerate(zip(bp.offsets, bp.block)):
            value = cst.BinaryOperation(o, cst.Add(), cst.Call(cst.Attribute(tl_, cst.Name("arange")),
                                                                [cst.Arg(cst.Integer("0")), cst.Arg(b)]))
            index.append(self._pending_local(f"{tag}_idx{axis}", value))
        offs = None
        for axis in range(rank):
            term = cst.BinaryOperation(spread(index[axis], axis), cst.Multiply(), bp.strides[axis])
            offs = term if offs is None else cst.BinaryOperation(offs, cst.Add(), term)
        mask = None
        for axis in checked:
            i = index[axis]
            both = cst.BinaryOperation(
                cst.Comparison(i, [cst.ComparisonTarget(cst.GreaterThanEqual(), cst.Integer("0"))]), cst.BitAnd(),
                cst.Comparison(i, [cst.ComparisonTarget(cst.LessThan(), bp.shape[axis])]))
            term = spread(both, axis)
            mask = term if mask is None else cst.BinaryOperation(mask, cst.BitAnd(), term)
        if mask is not None:
            mask = self._pending_local(f"{tag}_mask", mask)
        args = [cst.Arg(cst.BinaryOperation(bp.base, cst.Add(), offs))]
        if leaf == "store":
            if "value" not in values:
                raise fail("TTR-BLOCKPTR", "`tl.store` needs a value", pos)
            args.append(cst.Arg(values["value"]))
        if mask is not None:
            args.append(cst.Arg(mask, keyword=cst.Name("mask")))
        padding = values.get("padding_option")
        if leaf == "load" and padding is not None and not _is_none(padding):
            text = padding.evaluated_value if isinstance(padding, cst.SimpleString) else None
            if text not in ("", "zero", "nan"):
                raise fail("TTR-BLOCKPTR", '`padding_option` must be "zero" or "nan"', self.pos(padding))
            if text and mask is not None:
                other = cst.Float("0.0") if text == "zero" else cst.Call(cst.Name("float"), [cst.Arg(cst.SimpleString('"nan"'))])
                args.append(cst.Arg(other, keyword=cst.Name("other")))
        for key in ("cache_modifier", "eviction_policy"):
            if key in values:
                args.append(cst.Arg(values[key], keyword=cst.Name(key)))
        call = cst.Call(cst.Attribute(tl_, cst.Name(leaf)), args)
        try:
            return self._memory(d, call, pos)
        except TranspileError as err:  # the access is built here: point at the source call
            p = err.diagnostic.pos
            if (p.line, p.col) == (1, 1):
                err.diagnostic = replace(err.diagnostic, pos=pos)
            raise

    def _block_local(self, name: str) -> str:
        """A fresh local name for the parts of one block-pointer access (`p_k_at`, `p_k_at2`, ...)."""
        if self.block_tags is None:  # the kernel's own names, read once per kernel, then the stems given out
            self.block_tags = self._function_locals(self._current_fn) | \
                {p.name.value for p in self._current_fn.params.params}
        tag, n = f"{name}_at", 1
        while tag in self.block_tags:
            n += 1
            tag = f"{name}_at{n}"
        self.block_tags.add(tag)
        return tag

    def _pending_local(self, name: str, value: cst.BaseExpression) -> cst.Name:
        """`name = value` queued before the statement being converted (an access's indices and mask)."""
        # `small` flushes what is pending before the assignment (`self.pending += ...` would queue that twice)
        self.pending = self.small(cst.Assign([cst.AssignTarget(cst.Name(name))], value))
        return cst.Name(name)

    def _tl_module(self) -> cst.BaseExpression:
        """An expression naming `triton.language` in this module (`tl`, or `triton.language`)."""
        local = next((k for k, v in sorted(self.info.aliases.items()) if v == TL), None)
        if local is not None:
            return cst.Name(local)
        base = next((k for k, v in sorted(self.info.aliases.items()) if v == "triton"), None)
        if base is None:
            raise fail("TTR-BLOCKPTR", "block pointers need `triton.language` imported in the module", Pos(self.info.path, 1, 1))
        return cst.Attribute(cst.Name(base), cst.Name("language"))

    def _desc_snapshot(self, name: str, desc: _Desc, pos: Pos) -> _Desc:
        """The descriptor `name` with its base offset, and each extent or stride that reads a name the kernel
        assigns (`T = eos - bos` of a parameter T), as locals assigned here, once: the port makes the view where
        the descriptor is read (passes/views.py), from the values they had where it was made, whatever is
        assigned between. Each local is named by the descriptor and part (the same in each arm converted)."""
        assigned = _assigned_names(self._current_fn.body) | set(self.ptr_vars) | set(self.offset_names.values())
        locals_ = self.__dict__.setdefault("desc_part_locals", {})

        def snapshot(part: str, e):
            if e is None or not any(isinstance(n, Name) and n.id in assigned for n in sub_exprs(e)):
                return e
            local = locals_.get((name, part)) or locals_.setdefault((name, part), self._fresh_arm_local(f"{name}_{part}"))
            self.pending.append(Assign((local,), e, pos))
            return Name(local, pos)
        return replace(desc, base_offset=snapshot("base_offset", desc.base_offset),
                       shape=tuple(snapshot(f"shape{i}", e) for i, e in enumerate(desc.shape)),
                       strides=tuple(snapshot(f"stride{i}", e) for i, e in enumerate(desc.strides)))

    def _descriptor(self, node: cst.Call, pos: Pos) -> _Desc:
        """`tl.make_tensor_descriptor(base, shape=[...], strides=[..., 1], block_shape=[...])`."""
        rule = self.rules.lookup(f"{TL}.make_tensor_descriptor")
        self.rules_used.add(rule.id)
        keys = ("base", "shape", "strides", "block_shape", "padding_option")
        values: dict = {}
        for i, a in enumerate(node.args):
            key = a.keyword.value if a.keyword else (keys[i] if i < len(keys) else None)
            if key not in keys:
                raise fail(rule.id, f"argument `{key or i}` of `tl.make_tensor_descriptor` is not supported",
                           self.pos(a))
            values[key] = a.value
        if any(k not in values for k in keys[:4]):
            raise fail(rule.id, "`tl.make_tensor_descriptor` needs base, shape, strides and block_shape", pos)
        base = self.expr(values["base"])
        if not (isinstance(base, _Ptr) and isinstance(base.base, str) and base.base in self.pointer_params):
            raise fail(rule.id, "the descriptor's base must be a pointer parameter, or one advanced by a scalar "
                       "offset (`A + bos * stride`)", pos)

        def items(key):
            v = values[key]
            if not isinstance(v, (cst.List, cst.Tuple)):
                raise fail(rule.id, f"`{key}` must be a list", self.pos(v))
            return [e.value for e in v.elements]
        shape, strides, block = items("shape"), items("strides"), items("block_shape")
        if not (len(shape) == len(strides) == len(block)) or not shape:
            raise fail(rule.id, "shape, strides and block_shape must have the same length", pos)
        if self._eval_const(strides[-1]) != 1:
            raise fail(rule.id, "the last stride must be 1 (as Triton requires)", self.pos(strides[-1]))
        padding = "padding::Zero"
        if "padding_option" in values:
            v = values["padding_option"]
            if not (isinstance(v, cst.SimpleString) and v.evaluated_value in ("zero", "nan")):
                raise fail(rule.id, "`padding_option` must be \"zero\" or \"nan\"", self.pos(v))
            padding = "padding::Zero" if v.evaluated_value == "zero" else "padding::Nan"
        return _Desc(base.base, tuple(self.expr(x) for x in shape), tuple(self.expr(x) for x in strides[:-1]),
                     tuple(self.expr(x) for x in block), padding, pos, base.offsets)

    def _desc_access(self, desc: _Desc, method: str, node: cst.Call, pos: Pos):
        """`desc.load([o0, o1])` / `desc.store([o0, o1], value)`: the tile at those element offsets (each a
        multiple of its block extent: passes/views.py proves it or refuses the kernel)."""
        rule = self.rules.lookup(f"{TL}.make_tensor_descriptor")
        self.rules_used.add(rule.id)  # (a host descriptor's access is the rule's too)
        if not node.args or not isinstance(node.args[0].value, (cst.List, cst.Tuple)):
            raise fail(rule.id, f"`desc.{method}` takes a list of offsets", pos)
        offsets = tuple(self.expr(e.value) for e in node.args[0].value.elements)
        if len(offsets) != len(desc.block):
            raise fail(rule.id, f"{len(offsets)} offsets for a descriptor of rank {len(desc.block)}", pos)
        head = (Name(desc.base, pos), TupleExpr(desc.shape, pos), TupleExpr(desc.strides + (Lit(1, pos),), pos),
                TupleExpr(offsets, pos))
        attrs = (("block", TupleExpr(desc.block, pos)), ("padding", desc.padding)) + (
            (("base_offset", desc.base_offset),) if desc.base_offset is not None else ())
        if method == "load":
            if len(node.args) != 1:
                raise fail(rule.id, "`desc.load` takes the offsets only", pos)
            return Op("desc_load", head, pos, attrs, rule.id)
        if len(node.args) != 2:
            raise fail(rule.id, "`desc.store` takes the offsets and the value", pos)
        return Op("desc_store", head + (self.expr(node.args[1].value),), pos, attrs, rule.id)

    def _memory(self, d: str, node: cst.Call, pos: Pos):
        leaf = d[len(TL) + 1:]
        rule = self.rules.lookup(d)
        if rule is None:
            raise fail("CT101", f"`{d}` is not supported yet", pos)
        self.rules_used.add(rule.id)
        ptr = self.expr(_arg(node, 0, "pointer"))
        if isinstance(ptr, _BlockPtr):
            return self._block_access(d, leaf, ptr, node, pos)
        if not isinstance(ptr, _Ptr):
            raise fail(rule.id, f"`tl.{leaf}` of a value that is not a pointer into a kernel argument (a pointer "
                       "loaded from memory must be cast: `tl.load(table + i).to(tl.pointer_type(T))`; pointers "
                       "computed otherwise are not supported)", pos)
        known = {"load": ("pointer", "mask", "other", "boundary_check", "padding_option", "cache_modifier",
                          "eviction_policy", "volatile"),
                 "store": ("pointer", "value", "mask", "boundary_check", "cache_modifier", "eviction_policy")}
        known["atomic_cas"] = ("pointer", "cmp", "val", "sem", "scope")  # (no mask: Triton's takes none)
        keys = known.get(leaf, ("pointer", "val", "mask", "sem", "scope"))
        values: dict[str, cst.BaseExpression] = {}
        for i, a in enumerate(node.args):
            key = a.keyword.value if a.keyword else (keys[i] if i < len(keys) else None)
            if key is None or key not in keys:
                raise fail(rule.id, f"argument `{key or i}` of `tl.{leaf}` is not supported", self.pos(a))
            values[key] = a.value
        for key in ("boundary_check", "padding_option"):
            if key in values and not _is_none_or_empty(values[key]):
                raise fail(rule.id, f"`{key}=` applies to block pointers (`tl.make_block_ptr`), not to a pointer tile", pos)
        if "volatile" in values and not (isinstance(values["volatile"], cst.Name) and values["volatile"].value == "False"):
            raise fail(rule.id, "`volatile=True` loads are not supported yet", pos)
        mask = self.expr(values["mask"]) if "mask" in values and not _is_none(values["mask"]) else None
        if isinstance(mask, _Ptr):
            raise fail(rule.id, "a pointer used as a mask", pos)
        other = value = None
        if leaf == "load":
            other = values.get("other")
            other = self.expr(other) if other is not None and not _is_none(other) else None
        elif leaf == "store":
            value = self.expr(values["value"])
        elif leaf not in RMW_OPS:
            raise fail(rule.id, f"`tl.{leaf}` is not supported yet", pos)
        memory = []
        for key, table, what in (("sem", SEMANTICS, "memory_order"), ("scope", SCOPES, "memory_scope")):
            if leaf not in ("load", "store") and key in values and not _is_none(values[key]):
                chosen = self._memory_choice(values[key], table, STRONGEST[key], rule.id, key)
                if chosen is not None:
                    memory.append((what, Op("enum", (), pos, (("value", chosen),))))
        if leaf not in ("load", "store"):
            value = self.expr(values["val"])
        if leaf == "atomic_cas":  # the compared value rides after the stored one (ops/memory.atomic_cas)
            value = TupleExpr((value, self.expr(values["cmp"])), pos)
        if isinstance(ptr.base, ArmBases):
            return self._arms_access(leaf, rule, ptr, mask, other, value, memory, pos)
        return self._access(leaf, rule, ptr, mask, other, value, memory, pos)

    def _memory_choice(self, v: cst.BaseExpression, table: dict, strongest: str, rule: str, key: str) -> str | None:
        """The ordering or scope marker of an atomic's `sem=` / `scope=`: a literal, or a constant known now (a
        module constant; None: Triton's default). A constexpr parameter chosen by the launch (`sem=ATOMIC_SEM`)
        takes the strongest marker, which every weaker choice allows (an acq_rel atomic is a correct relaxed one)."""
        value = v.evaluated_value if isinstance(v, cst.SimpleString) else self._eval_const(v)
        if isinstance(value, str) and value in table:
            return table[value]
        if isinstance(v, cst.Name) and v.value in self.const_params and value is None:
            return strongest
        if isinstance(v, cst.Name) and value is None and v.value in self.info.consts and self.info.consts[v.value] is None:
            return None
        raise fail(rule, f"`{key}=` must be one of {', '.join(sorted(table))} (a literal or a constant)", self.pos(v))

    def _access(self, leaf: str, rule, ptr: _Ptr, mask, other, value, memory: list, pos: Pos) -> Op:
        """One element access of a pointer into one base (`tl.load`, `tl.store`, an atomic), its operands converted."""
        offsets = ptr.offsets if ptr.offsets is not None else Lit(0, pos)
        attrs: list = [("flat", True)]
        if isinstance(ptr.base, _Addr):  # a loaded pointer: its address as a pointer to its element type
            base = Op("int_to_ptr", (ptr.base.addr,), pos, (("dtype", ptr.base.elem),), "TTR-PTRCAST")
        elif isinstance(ptr.base, _Cast):  # a parameter read as another element type
            base = Name(ptr.base.param, pos)
            attrs.append(("elem", ptr.base.elem))
        else:
            base = Name(ptr.base, pos)
        if mask is not None:
            attrs.append(("mask", mask))
        if leaf == "load":
            if other is not None:
                attrs.append(("other", other))
            return Op("gather", (base, TupleExpr((offsets,), pos)), pos, tuple(sorted(attrs, key=lambda kv: kv[0])),
                      rule.id)
        if leaf == "store":
            return Op("scatter", (base, TupleExpr((offsets,), pos), value), pos,
                      tuple(sorted(attrs, key=lambda kv: kv[0])), rule.id)
        return Op(leaf, (base, TupleExpr((offsets,), pos), value), pos,
                  tuple(sorted(attrs + memory, key=lambda kv: kv[0])), rule.id)

    def _arms_access(self, leaf: str, rule, ptr: _Ptr, mask, other, value, memory: list, pos: Pos):
        """An access through a pointer chosen at run time (pointer_arms.py): one access per arm, its condition and-ed
        into the mask (a masked-off lane touches no memory); a load's or atomic's values are the chosen arm's,
        selected lane by lane. The offsets, mask and stored value every arm reads are computed once, before the
        statement; a store's arms before the last are statements there too (each lane is stored by one arm)."""
        offsets = self._arm_operand(ptr.offsets, f"{leaf}_offsets", pos)
        mask = self._arm_operand(mask, f"{leaf}_mask", pos)
        value = self._arm_operand(value, f"{leaf}_value", pos)
        ops = []
        for cond, base in ptr.base.arms:
            self.rules_used |= pointer_arms.rules_of(cond)
            arm_mask = cond if mask is None else pointer_arms.both(self, mask, cond, pos)
            ops.append((cond, self._access(leaf, rule, _Ptr(base, offsets, pos), arm_mask, other, value, memory, pos)))
        if leaf == "store":
            self.pending.extend(Eval(op, pos) for _, op in ops[:-1])
            return ops[-1][1]
        chosen = ops[-1][1]
        for cond, op in reversed(ops[:-1]):
            chosen = self._op(f"{TL}.where", (cond, op, chosen), pos)
        return chosen

    def _arm_operand(self, e, stem: str, pos: Pos):
        """An operand every arm of an access reads: a local computed once (a name or literal as it is)."""
        if e is None or isinstance(e, (Name, Lit)):
            return e
        local = self._fresh_arm_local(stem)
        self.pending.append(Assign((local,), e, pos))
        return Name(local, pos)


RANDOM_CALLS = {f"{TL}.{n}" for n in ("randint", "randint4x", "rand", "rand4x", "philox", "philox_impl",
                                      "uint_to_uniform_float")}
RANDOM_LIBRARY = "rules/triton_random.py"  # shown in the positions of its inlined code


LIBDEVICE_LIBRARY = "rules/triton_libdevice.py"
_NO_RULE = type("_NoRule", (), {"id": None})()
# libdevice functions that rules/triton_libdevice.py ports (by their name in any of their homes, MATH_HOMES)
LIBDEVICE_PORTS = frozenset({"erf", "log1p", "expm1", "tanh"})
# that file's own operations and their number of arguments (_TritonConverter._libdevice_intrinsic)
LIBDEVICE_INTRINSICS = {"_fma_rn_ftz": 3, "_add_rz_ftz": 2, "_ex2_approx_ftz": 1, "_rcp_approx_ftz": 1,
                        "_float32_only": 3}


def _random_library(rules: RuleTable) -> _TritonConverter:
    """rules/triton_random.py read as a Triton module (its functions are helpers), once per rule table."""
    return _library(rules, RANDOM_LIBRARY)


def _library(rules: RuleTable, path: str) -> _TritonConverter:
    """A Triton module of rules/ (triton_random.py, triton_libdevice.py) read as a Triton module (its functions
    are helpers), once per rule table."""
    found = _LIBRARIES.get((id(rules), path))
    if found is None or found[0] is not rules:
        import ast

        from ..rules import RULES_DIR
        from .common import LazyPositions, ModuleInfo
        name = path.split("/")[-1]
        source = (RULES_DIR / name).read_text()
        module, tree = cst.parse_module(source), ast.parse(source)
        conv = _TritonConverter(ModuleInfo(path), LazyPositions.of(module, tree, source, True), rules,
                                name[:-len(".py")])
        conv.scan_module(module)
        found = _LIBRARIES[(id(rules), path)] = (rules, conv)
    return found[1]


_LIBRARIES: dict[tuple, tuple] = {}


def _surface() -> tuple[frozenset[str], dict[str, str]]:
    """rules/triton_surface.toml: Triton's tensor members that are its functions applied to the tensor, and
    each refused name with its reason (tests/test_triton_surface.py checks the whole namespace)."""
    import fnmatch
    import tomllib

    from ..rules import RULES_DIR
    data = tomllib.loads((RULES_DIR / "triton_surface.toml").read_text())
    names = [l.strip() for l in (RULES_DIR / "triton_language_3.6.txt").read_text().splitlines()
             if l.strip() and not l.startswith("#")]
    ruled = {src for r in tomllib.loads((RULES_DIR / "triton.toml").read_text())["rule"] for src in r["source"]}
    refused: dict[str, str] = {}
    for group in data["refused"]:
        for n in names:
            if any(fnmatch.fnmatchcase(n, pat) for pat in group["names"]) and n not in refused:
                leaf = n.rsplit(".", 1)[-1]
                homes = [n] + ([f"{TL}.extra.cuda.libdevice.{leaf}", f"{TL}.math.{leaf}"]
                               if n.startswith(f"{TL}.extra.libdevice.") else [])  # the function's other homes
                for home in homes:
                    if home not in ruled:
                        refused.setdefault(home, group["reason"])
    return frozenset(data["frontend"]["method_forms"]), refused


METHOD_FORMS, REFUSED = _surface()
# Triton's reductions and scans with a combining function (frontend/combine.py), by name and method name
_COMBINING = {f"{TL}.{n}": n for n in ("reduce", "associative_scan", "reduce_or", "xor_sum", "cumprod")} | \
    {f"method:{n}": n for n in ("reduce", "associative_scan", "reduce_or", "xor_sum", "cumprod")}
MATH_HOMES = (f"{TL}.", f"{TL}.math.", f"{TL}.extra.libdevice.", f"{TL}.extra.cuda.libdevice.")
LIBDEVICE_HOMES = (f"{TL}.extra.libdevice.", f"{TL}.extra.cuda.libdevice.")
# libdevice's round-to-nearest arithmetic (TTR-LIBDEVICE-RN) and the model op each is; `tl.div_rn`, `tl.math.div_rn`
# and `tl.fma` are Triton's own (div.rn.f32, fma.rn.f32: no flush) and keep their rules
LIBDEVICE_RN = {"add_rn": "add", "sub_rn": "sub", "mul_rn": "mul", "div_rn": "truediv", "fma_rn": "fma",
                "fma": "fma"}


# libdevice's float classes (Triton: an int32 1 or 0) -> the test that gives 1 (finitef and isfinited: finite)
LIBDEVICE_CLASSES = {"isnan": "isnan", "isinf": "isinf", "finitef": "finite", "isfinited": "finite"}
# libdevice's reinterpretations of bits -> (the operand's dtype, the result's); the unsigned 32-bit forms stay
# refused (rules/triton_surface.toml): the ports have no uint32 arrays
LIBDEVICE_BITCASTS = {"float_as_int": ("f32", "i32"), "int_as_float": ("i32", "f32"),
                      "double_as_longlong": ("f64", "i64"), "longlong_as_double": ("i64", "f64")}
# Triton's functional forms of the operators
FUNCTIONAL_OPERATORS = {f"{TL}.add": "+", f"{TL}.sub": "-", f"{TL}.mul": "*", f"{TL}.fdiv": "/", f"{TL}.math.fdiv": "/"}


def _libdevice_name(d: str | None) -> str | None:
    """`tl.extra.cuda.libdevice.mul_rn` -> `mul_rn` (a libdevice function's name, in either home); else None."""
    for home in LIBDEVICE_HOMES:
        if d and d.startswith(home) and "." not in d[len(home):]:
            return d[len(home):]
    return None


def _math_name(d: str | None) -> str | None:
    """`tl.extra.libdevice.round` -> `round` (the function's name in any of its homes); else `d` itself."""
    for home in MATH_HOMES:
        if d and d.startswith(home) and "." not in d[len(home):]:
            return d[len(home):]
    return d




def _is_string_choice(node: cst.BaseExpression) -> bool:
    """A string literal, or a conditional expression choosing between such (`".cg" if STREAMING else ""`)."""
    if isinstance(node, cst.IfExp):
        return _is_string_choice(node.body) and _is_string_choice(node.orelse)
    return isinstance(node, (cst.SimpleString, cst.ConcatenatedString))


def _arg(node: cst.Call, index: int, keyword: str):
    for a in node.args:
        if a.keyword is not None and a.keyword.value == keyword:
            return a.value
    positional = [a for a in node.args if a.keyword is None]
    return positional[index].value if index < len(positional) else None


def _is_none(v) -> bool:
    return isinstance(v, cst.Name) and v.value == "None"


def _is_none_or_empty(v) -> bool:
    return _is_none(v) or (isinstance(v, (cst.Tuple, cst.List)) and not v.elements) or \
        (isinstance(v, cst.SimpleString) and v.evaluated_value == "")


# keywords of Triton calls whose value is a string (an atomic's ordering and scope, a memory access's cache hints)
STRING_KEYWORDS = ("sem", "scope", "cache_modifier", "eviction_policy")


def _string_keyword(fn: cst.FunctionDef, name: str) -> bool:
    """Whether `name` is passed as a string keyword of a call (`sem=ORDER`): a string constexpr."""
    return any(isinstance(n, cst.Arg) and n.keyword is not None and n.keyword.value in STRING_KEYWORDS
               and isinstance(n.value, cst.Name) and n.value.value == name for n in walk_nodes(fn.body))


def _string_comparands(fn: cst.FunctionDef, name: str, helpers: dict | None = None, depth: int = 4) -> set[str]:
    """The string literals `name` is compared with (`reduction == "mean"`), in `fn` and in the @triton.jit
    helpers it passes `name` to (`apply_activation(x, ACTIVATION)`, whose parameter is compared there)."""
    out = set()
    for n in walk_nodes(fn.body):
        if isinstance(n, cst.Comparison) and len(n.comparisons) == 1:
            l, r = n.left, n.comparisons[0].comparator
            for a, b in ((l, r), (r, l)):
                if isinstance(a, cst.Name) and a.value == name and isinstance(b, cst.SimpleString):
                    out.add(b.evaluated_value)
        if helpers and depth and isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value in helpers:
            helper = helpers[n.func.value]
            params = [p.name.value for p in helper.params.params]
            for i, a in enumerate(n.args):
                if not (isinstance(a.value, cst.Name) and a.value.value == name) or a.star:
                    continue
                target = a.keyword.value if a.keyword is not None else params[i] if i < len(params) else None
                if target in params:
                    out |= _string_comparands(helper, target, helpers, depth - 1)
    return out


def _with_rest(s: cst.If, rest: list) -> cst.If:
    """`if c: A elif d: B else: C` then R as `if c: A; R else: (if d: B; R else: C; R)` (an arm ending in a
    return does not run R)."""
    body = s.body.with_changes(body=arm_then(list(s.body.body), rest))
    if isinstance(s.orelse, cst.If):
        other = [_with_rest(s.orelse, rest)]
    elif isinstance(s.orelse, cst.Else):
        other = arm_then(list(s.orelse.body.body), rest)
    else:
        other = rest
    if not other:
        return s.with_changes(body=body, orelse=None)
    return s.with_changes(body=body, orelse=cst.Else(cst.IndentedBlock(body=other)))


def _bound_targets(node: cst.CSTNode) -> list:
    """The names an assignment or a loop binds (a tuple target's elements)."""
    if isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
    else:
        targets = [node.target]
    out = []
    for t in targets:
        out += [e.value for e in t.elements] if isinstance(t, (cst.Tuple, cst.List)) else [t]
    return out


def _precision_param(fn: cst.FunctionDef, name: str) -> bool:
    """`name` is passed as a dot's `input_precision=` (a string constexpr)."""
    return any(isinstance(n, cst.Arg) and n.keyword is not None and n.keyword.value == "input_precision"
               and isinstance(n.value, cst.Name) and n.value.value == name for n in walk_nodes(fn.body))


def _float_use(fn: cst.FunctionDef, name: str) -> bool:
    """`name` meets a float literal in arithmetic or a comparison (a float-valued constexpr)."""
    def is_name(x):
        return isinstance(x, cst.Name) and x.value == name
    for n in walk_nodes(fn.body):  # an integer-only use (`tl.cdiv(N, BLOCK)`, `range(N)`) says int: `1.0 / N` then converts
        if isinstance(n, cst.Call) and isinstance(n.func, (cst.Name, cst.Attribute)) and \
                _leaf(n.func) in ("cdiv", "range", "static_range", "arange", "program_id") and \
                any(is_name(a.value) for a in n.args):
            return False
    for n in walk_nodes(fn.body):
        if isinstance(n, cst.BinaryOperation) and (
                (is_name(n.left) and isinstance(n.right, cst.Float)) or (is_name(n.right) and isinstance(n.left, cst.Float))):
            return True
        if isinstance(n, cst.Comparison) and len(n.comparisons) == 1:
            l, r = n.left, n.comparisons[0].comparator
            if (is_name(l) and isinstance(r, cst.Float)) or (is_name(r) and isinstance(l, cst.Float)):
                return True
    return False


# host calls whose value is an int: tensor extents and strides, counts, Triton's host helpers
_INT_METHODS = {"stride", "size", "numel", "dim", "nelement", "element_size", "ndimension"}
_INT_FUNCTIONS = {"len", "int", "cdiv", "next_power_of_2", "triton.cdiv", "triton.next_power_of_2"}
_INT_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo, cst.LeftShift, cst.RightShift)
_INT_AUG_OPERATORS = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.FloorDivideAssign, cst.ModuloAssign)


def _fits_i32(e: cst.BaseExpression) -> bool:
    """Not a literal int (or power of literals) past int32, which Triton types int64."""
    try:
        v = eval(compile(cst.Module([]).code_for_node(e), "<default>", "eval"), {"__builtins__": {}}, {})
    except Exception:  # noqa: BLE001 - not a literal expression: not known to be large
        return True
    return not isinstance(v, int) or -2**31 <= v < 2**31


def _int_valued(e: cst.BaseExpression, ints: set[str]) -> bool:
    """A host expression whose value is a Python int: an int literal, `x.shape[i]`, `x.stride(0)`, `x.numel()`,
    `len(...)`, `triton.cdiv(...)`, `max`/`min` and integer arithmetic of those, or a name in `ints`."""
    if isinstance(e, cst.Integer):
        return _fits_i32(e)
    if isinstance(e, cst.Name):
        return e.value in ints
    if isinstance(e, cst.Subscript):  # `x.shape[-1]`, `x.stride()[0]`
        v = e.value
        return (isinstance(v, cst.Attribute) and v.attr.value == "shape") or (
            isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and v.func.attr.value in ("stride", "size")
            and not v.args)
    if isinstance(e, cst.Attribute):
        return e.attr.value == "ndim"
    if isinstance(e, cst.Call):
        f = e.func
        if isinstance(f, cst.Attribute) and f.attr.value in _INT_METHODS:
            return bool(e.args) or f.attr.value not in ("stride", "size")  # `x.size()` is a shape
        dotted = node_code(f).strip()
        if dotted in _INT_FUNCTIONS or (isinstance(f, cst.Attribute) and f.attr.value in ("cdiv", "next_power_of_2")):
            return True
        if dotted in ("max", "min") and len(e.args) > 1:
            return all(_int_valued(a.value, ints) for a in e.args if not a.star)
        return False
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, _INT_OPERATORS):
        return _int_valued(e.left, ints) and _int_valued(e.right, ints)
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Minus):
        return _int_valued(e.expression, ints)
    return False


def _int_locals(fn: cst.FunctionDef) -> set[str]:
    """The names a launching function only ever binds to ints (_int_valued): `B, N, H, D = qkv.shape`, `C = H * D`,
    `stride = x.stride(0)`, a `for` variable over `range(...)`, an `int`-annotated parameter of its own."""
    binds: dict[str, list] = {}
    for p in fn.params.params:
        ann = p.annotation.annotation if p.annotation else None
        # (a default past int32, `row_hi: int = 2**62`, is an int64 in Triton: not one the port's i32 takes)
        big = p.default is not None and not _fits_i32(p.default)
        binds.setdefault(p.name.value, []).append(
            "int" if isinstance(ann, cst.Name) and ann.value == "int" and not big else None)
    for node in walk_nodes(fn.body):
        if isinstance(node, cst.Assign):
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    binds.setdefault(t.target.value, []).append(node.value)
                elif isinstance(t.target, (cst.Tuple, cst.List)):
                    # `M, N = x.shape` (each an int), else each element of a tuple of the same length
                    shape = isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape"
                    parts = node.value.elements if isinstance(node.value, (cst.Tuple, cst.List)) and \
                        len(node.value.elements) == len(t.target.elements) else None
                    for i, el in enumerate(t.target.elements):
                        if isinstance(el.value, cst.Name):
                            binds.setdefault(el.value.value, []).append(
                                "int" if shape else parts[i].value if parts else None)
        elif isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name):
            binds.setdefault(node.target.value, []).append(node.value)
        elif isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):  # `n += k` (not `n /= 2`)
            binds.setdefault(node.target.value, []).append(
                node.value if isinstance(node.operator, _INT_AUG_OPERATORS) else None)
        elif isinstance(node, cst.For):
            ranged = isinstance(node.target, cst.Name) and isinstance(node.iter, cst.Call) \
                and node_code(node.iter.func).strip() == "range"
            for n in walk_nodes(node.target):  # (any other loop variable: not known)
                if isinstance(n, cst.Name):
                    binds.setdefault(n.value, []).append("int" if ranged else None)
        elif isinstance(node, (cst.NamedExpr, cst.AsName)):  # `(n := ...)`, `with ... as n`: not known
            for n in walk_nodes(node.target if isinstance(node, cst.NamedExpr) else node.name):
                if isinstance(n, cst.Name):
                    binds.setdefault(n.value, []).append(None)
    # the largest such set: a name bound from itself (`max_rows = max(max_rows, x.shape[0])`, `n += x.numel()`)
    # is an int where its other bindings are
    ints = {n for n, vs in binds.items() if None not in vs}
    while True:
        out = {n for n in ints if not all(v == "int" or _int_valued(v, ints) for v in binds[n])}
        if not out:
            return ints
        ints -= out


def _leaf(func: cst.BaseExpression) -> str:
    return func.value if isinstance(func, cst.Name) else func.attr.value


def _assigned_names(body) -> set[str]:
    out = set()
    for n in walk_nodes(body):
        if isinstance(n, cst.AssignTarget) and isinstance(n.target, cst.Name):
            out.add(n.target.value)
        elif isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name):
            out.add(n.target.value)
    return out


def _sum_leaves(conv: _TritonConverter, e) -> list[cst.Name]:
    """The names a pointer expression adds up (through `+`, `-`'s left side, `[...]` and hint calls)."""
    if isinstance(e, cst.Name):
        return [e]
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Add):
        return _sum_leaves(conv, e.left) + _sum_leaves(conv, e.right)
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Subtract):
        return _sum_leaves(conv, e.left)
    if isinstance(e, cst.Subscript):
        return _sum_leaves(conv, e.value)
    if isinstance(e, cst.Call) and conv.dotted(e.func) in HINT_CALLS and e.args:
        return _sum_leaves(conv, e.args[0].value)
    inner = _pointer_cast_operand(conv, e)
    if inner is not None:  # `p.to(tl.pointer_type(T))`: the pointer cast (an address loaded from memory: none)
        return _sum_leaves(conv, inner)
    return []


def _cast_only_names(conv: _TritonConverter, fn: cst.FunctionDef) -> set[str]:
    """Names every assignment of which is a pointer cast of a name (`W = W.to(tl.pointer_type(tl.uint8))`): a
    pointer read through one has no offsets (the cast of an advanced pointer is refused), in loops too."""
    ok: set[str] = set()
    bad: set[str] = set()
    for node in walk_nodes(fn.body):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            name = node.targets[0].target.value
            (ok if isinstance(_pointer_cast_operand(conv, node.value), cst.Name) else bad).add(name)
        elif isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.With, cst.NamedExpr)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else \
                [node.target] if not isinstance(node, cst.With) else [i.asname.name for i in node.items if i.asname]
            bad.update(n.value for t in targets for n in walk_nodes(t) if isinstance(n, cst.Name))
    return ok - bad


def _pointer_cast_operand(conv: _TritonConverter, e) -> cst.BaseExpression | None:
    """The operand of a pointer cast (`x.to(tl.pointer_type(T))`, `tl.cast(x, tl.pointer_type(T))`), else None."""
    if not isinstance(e, cst.Call):
        return None
    d = conv.dotted(e.func)
    is_fn = d == f"{TL}.cast"
    if not (is_fn or (isinstance(e.func, cst.Attribute) and e.func.attr.value in ("to", "cast")
                      and not (d or "").startswith(f"{TL}."))):
        return None
    target = _arg(e, 1 if is_fn else 0, "dtype")
    if not (isinstance(target, cst.Call) and conv.dotted(target.func) == f"{TL}.pointer_type"):
        return None
    return _arg(e, 0, "input") if is_fn else e.func.value


def _pointer_params(conv: _TritonConverter, fn: cst.FunctionDef, _active: tuple = (),
                    returned: int | None = None) -> set[str]:
    """Which parameters are pointers: Triton signatures do not say (unannotated parameters are pointers or
    scalars). A parameter is a pointer when a memory call's address is a sum that reaches it (through the
    locals it is assigned to, and through the jit helpers that return a pointer made of their arguments), it is
    never used as a number (multiplied, compared, a loop bound), and it is the one pointer of each such sum (a
    name with `ptr` in it, else the leftmost). `returned` (a helper's): its returned value is an address too (the
    `returned`-th of a tuple it returns; -1: the value itself), as its caller uses it as one."""
    params = [p.name.value for p in fn.params.params if not conv._is_constexpr(p.annotation)]
    int_used: set[str] = set()
    truth_used: set[str] = set()
    dtype_used: set[str] = set()
    assigns: dict[str, list] = {}
    picked: dict[tuple, int] = {}  # (name, id of a helper call) -> the element of its returned tuple the name takes
    roots: list = []
    if returned is not None:
        for node in walk_nodes(fn.body):
            if isinstance(node, cst.Return) and node.value is not None:
                value = node.value
                if returned >= 0 and isinstance(value, cst.Tuple) and returned < len(value.elements):
                    value = value.elements[returned].value
                roots.append(value if returned < 0 or isinstance(node.value, cst.Tuple) else None)
    for node in walk_nodes(fn.body):
        if isinstance(node, cst.Call):
            d = conv.dotted(node.func)
            if d in MEMORY_CALLS and node.args:
                roots.append(_arg(node, 0, "pointer"))
            elif d in (f"{TL}.make_tensor_descriptor", f"{TL}.make_block_ptr") and node.args:
                roots.append(_arg(node, 0, "base"))
            elif _is_helper_call(conv, node, _active):
                # a jit helper's pointer parameters: the arguments given for them are addresses here
                roots += _helper_args(conv, node, _pointer_params, _active + (fn.name.value,))
            elif d in INT_ONLY_NAMES:
                int_used.update(a.value.value for a in node.args if isinstance(a.value, cst.Name))
        elif isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, (cst.Add, cst.Subtract)):
            int_used.update(x.value for x in (node.left, node.right) if isinstance(x, cst.Name))
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Subtract) \
                and isinstance(node.right, cst.Name):
            int_used.add(node.right.value)
        elif isinstance(node, cst.Comparison) and _none_test(node) is None:
            int_used.update(x.value for x in [node.left] + [c.comparator for c in node.comparisons]
                            if isinstance(x, cst.Name))
        elif isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            assigns.setdefault(node.targets[0].target.value, []).append(node.value)
        elif isinstance(node, cst.Assign) and len(node.targets) == 1:
            for name, value in _tuple_pairs(node.targets[0].target, node.value):  # `x_ptr, w_ptr = q_ptr, qw_ptr`
                assigns.setdefault(name, []).append(value)
            if isinstance(node.targets[0].target, (cst.Tuple, cst.List)) and isinstance(node.value, cst.Call):
                for i, t in enumerate(node.targets[0].target.elements):  # `ptrs, mask = tile_ptrs(base, ...)`
                    if isinstance(t.value, cst.Name):
                        assigns.setdefault(t.value.value, []).append(node.value)
                        picked[(t.value.value, id(node.value))] = i
        elif isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
            assigns.setdefault(node.target.value, []).append(
                cst.BinaryOperation(node.target, cst.Add(), node.value))
        elif isinstance(node, cst.Attribute) and node.attr.value == "element_ty" \
                and isinstance(node.value, cst.Attribute) and node.value.attr.value in ("dtype", "type") \
                and isinstance(node.value.value, cst.Name):
            dtype_used.add(node.value.value.value)
        elif isinstance(node, cst.If) or isinstance(node, cst.While):
            if isinstance(node.test, cst.Name):
                truth_used.add(node.test.value)
    # a name tested by its truth (`if bias_ptr:`) is a number unless an address reaches it: then an optional
    # pointer, whose truth is `is not None` (_TritonConverter._pointer_truth)
    # (an address reaches it through the locals it is added into too: `if bias_ptr: ptrs = bias_ptr + offs`)
    reached: set[str] = set()
    todo = [n.value for r in roots if r is not None for n in _sum_leaves(conv, r)]
    while todo:
        n = todo.pop()
        if n not in reached:
            reached.add(n)
            todo += [x.value for a in assigns.get(n, []) for x in _sum_leaves(conv, a)]
    int_used |= truth_used - reached
    # the operand of a pointer cast is a pointer (an address loaded from memory is a call: not a name)
    cast_used = {x.value for node in walk_nodes(fn.body) for x in [_pointer_cast_operand(conv, node)]
                 if isinstance(x, cst.Name)}
    pointers: set[str] = {n for n in dtype_used | cast_used if n in params}
    def addressed_apart(name: str) -> bool:
        """Some binding of the local `name` other than a sum with itself adds names up (may be a pointer)."""
        return any(_sum_leaves(conv, a) for a in assigns.get(name, [])
                   if name not in (n.value for n in _sum_leaves(conv, a)))

    work = [(r, None) for r in roots]
    seen: set[int] = set()
    while work:
        e, owner = work.pop()
        index = picked.get((owner, id(e)), -1)
        if e is None or (id(e), index) in seen:
            continue
        seen.add((id(e), index))
        if isinstance(e, cst.Call) and _is_helper_call(conv, e, _active + (fn.name.value,)):
            # an address a jit helper returns (`ptrs, mask = tile_ptrs(q_ptr + off, ...)`): the arguments it is
            # made of are addresses as the helper's own roots would be
            work.extend((a, owner) for a in _helper_args(
                conv, e, lambda home, helper, active: _pointer_params(home, helper, active, returned=index),
                _active + (fn.name.value,)))
            continue
        if isinstance(e, cst.IfExp):  # a pointer chosen by a condition: each arm is an address
            work.extend([(e.body, owner), (e.orelse, owner)])
            continue
        if isinstance(e, cst.Call) and conv.dotted(e.func) == f"{TL}.where" and len(e.args) == 3:
            work.extend([(e.args[1].value, owner), (e.args[2].value, owner)])  # `tl.where(is_q, q_ptr, k_ptr)`
            continue
        leaves = [n.value for n in _sum_leaves(conv, e)]
        if owner in leaves and owner not in params and not addressed_apart(owner):
            # `t_ptr += t_base` where every other binding of the local `t_ptr` is offsets (`(k + offs) * stride`):
            # an int plus a pointer, so the pointer is among the other names added
            leaves = [n for n in leaves if n != owner]
        if any(n in pointers for n in leaves):
            chosen = [n for n in leaves if n in pointers]
        else:
            cands = [n for n in leaves if n not in int_used and (n in params or n in assigns)]
            # (`offs + X`: a local whose sums reach no parameter is offsets, never the sum's pointer)
            cands = [n for n in cands if _reaches_param(conv, n, params, assigns, int_used)] or cands
            # a local an access reads through is a pointer there, even where it is also used as a number (its
            # offsets compared before a pointer is added to them)
            cands = cands or [n for n in leaves if n in assigns and n not in params]
            cands.sort(key=lambda n: (0 if "ptr" in n.lower() else 1, leaves.index(n)))
            chosen = cands[:1]
        for n in chosen:
            if n not in pointers:
                pointers.add(n)
            work.extend((a, n) for a in assigns.get(n, []))
    return {n for n in pointers if n in params}


def _value_rebinds(conv: _TritonConverter, fn: cst.FunctionDef) -> dict:
    """Pointer parameters the kernel rebinds to a value they load (`idx = tl.load(idx + bid)`, a top-level statement,
    the name's only binding): name -> that assignment. Python reads the pointer up to it and the value after it, so
    the name is the pointer there and a local of its own from then on (straight-line code: exact). A parameter used
    as a number only after it is a pointer all the same (read up to the statement). Likewise a constexpr parameter
    the top level rebinds to a value computed at run time (its only binding): the constant up to it, a local after."""
    params = {p.name.value for p in fn.params.params if not conv._is_constexpr(p.annotation)}
    constexprs = {p.name.value for p in fn.params.params if conv._is_constexpr(p.annotation)}
    counts: dict[str, int] = {}
    for node in walk_nodes(fn.body):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For)):
            for t in _bound_targets(node) if not isinstance(node, cst.AssignTarget) else [node.target]:
                for n in walk_nodes(t):
                    if isinstance(n, cst.Name):
                        counts[n.value] = counts.get(n.value, 0) + 1
    found: dict = {}
    stmts = list(fn.body.body)
    for i, line in enumerate(stmts):
        if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(line.body[0], cst.Assign)):
            continue
        s = line.body[0]
        target = s.targets[0].target if len(s.targets) == 1 else None
        if isinstance(target, cst.Name) and target.value in constexprs and counts.get(target.value) == 1 \
                and _reads_runtime_name(s.value, params | set(counts) - constexprs):
            # `NC = min(NC, tl.cdiv(T - i_t * BT, BC))`: a constexpr rebound to a run-time value is a new variable
            # in Triton (the constant before the statement, the value after it)
            found[target.value] = s
            continue
        if not (isinstance(target, cst.Name) and target.value in params and counts.get(target.value) == 1
                and _loaded_value(conv, s.value)):
            continue
        name = target.value
        if name not in conv.pointer_params:
            head = fn.with_changes(body=fn.body.with_changes(body=stmts[:i + 1]))
            if name not in _pointer_params(conv, head):
                continue
            conv.pointer_params.add(name)
        found[name] = s
    return found


def _reads_runtime_name(e: cst.BaseExpression, runtime: set[str]) -> bool:
    """Whether `e` reads one of `runtime` (the kernel's run-time parameters and the names it assigns) other than
    as a called function: Triton computes it when the kernel runs, so it is no constexpr."""
    called = {id(n.func) for n in walk_nodes(e) if isinstance(n, cst.Call)}
    return any(isinstance(n, cst.Name) and n.value in runtime and id(n) not in called for n in walk_nodes(e))


def _loaded_value(conv: _TritonConverter, e: cst.BaseExpression) -> bool:
    """`tl.load(...)`, maybe converted (`.to(tl.int64)`): a value, never a pointer."""
    while isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute) and e.func.attr.value == "to" \
            and _pointer_cast_operand(conv, e) is None:
        e = e.func.value
    return isinstance(e, cst.Call) and conv.dotted(e.func) == f"{TL}.load"


def _preorder_nodes(node: cst.CSTNode):
    yield node
    for c in node.children:
        yield from _preorder_nodes(c)


def _preorder(body: cst.CSTNode) -> tuple[dict, dict]:
    """Each node's index in source order (id -> index), and the indexes of each name's occurrences."""
    index: dict[int, int] = {}
    names: dict[str, list] = {}
    for i, n in enumerate(_preorder_nodes(body)):
        index[id(n)] = i
        if isinstance(n, cst.Name):
            names.setdefault(n.value, []).append(i)
    return index, names


def _pointer_tuple(conv: _TritonConverter, s: cst.Assign) -> bool:
    """A tuple assignment of names (`a, b = x, y`) some value of which is a pointer (a pointer parameter or a name
    holding a pointer), no target read by any value (a swap would need the old values kept)."""
    pairs = _tuple_pairs(s.targets[0].target, s.value)
    if not pairs or len(pairs) != len(s.targets[0].target.elements):
        return False
    read = {n.value for _, v in pairs for n in walk_nodes(v) if isinstance(n, cst.Name)}
    if read & {name for name, _ in pairs}:
        return False
    pointers = set(conv.pointer_params) | set(conv.ptr_vars) | set(conv.ptr_alias)
    return any(isinstance(v, cst.Name) and v.value in pointers or any(
        n.value in pointers for n in _sum_leaves(conv, v)) for _, v in pairs)


def _tuple_pairs(target, value) -> list:
    """`a, b = x, y`: the (name, value) pairs of a tuple assignment of as many values as names."""
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))
            and len(target.elements) == len(value.elements)):
        return []
    return [(t.value.value, v.value) for t, v in zip(target.elements, value.elements) if isinstance(t.value, cst.Name)]


def _reaches_param(conv, name: str, params: list, assigns: dict, int_used: set, seen: frozenset = frozenset()) -> bool:
    """A name that may hold a pointer into a parameter: a parameter not used as a number, or a local one of whose
    values sums (or chooses, `tl.where` / `x if c else y`) such a name."""
    if name in params:
        return name not in int_used
    if name in seen:
        return False
    for v in assigns.get(name, []):
        if any(isinstance(c, cst.Call) and not _int_call(conv, c) for c in walk_nodes(v)):
            return True  # a value computed otherwise (a helper's result, a loaded pointer): it may be a pointer
        values = [v.body, v.orelse] if isinstance(v, cst.IfExp) else \
            [a.value for a in v.args[1:]] if isinstance(v, cst.Call) and conv.dotted(v.func) == f"{TL}.where" \
            and len(v.args) == 3 else [v]
        for x in values:
            if any(_reaches_param(conv, n.value, params, assigns, int_used, seen | {name})
                   for n in _sum_leaves(conv, x)):
                return True
    return False


INT_VALUED_CALLS = frozenset(f"{TL}.{n}" for n in ("arange", "program_id", "num_programs", "cdiv", "multiple_of",
                                                  "max_contiguous", "minimum", "maximum", "where"))


def _int_call(conv, c: cst.Call) -> bool:
    """A call whose value holds offsets, never a pointer (`tl.arange`, `tl.program_id`, `x.to(tl.int64)`, ...)."""
    if conv.dotted(c.func) in INT_VALUED_CALLS:
        return True
    if isinstance(c.func, cst.Attribute) and c.func.attr.value == "to" and c.args:
        d = conv.dotted(c.args[0].value) or ""
        return d.startswith(f"{TL}.") and TRITON_DTYPES.get(d[len(TL) + 1:], "").startswith(("i", "u"))
    return False


def _call_key(node: cst.Call) -> str | None:
    """The helper key of a call: `f(...)` -> "f", `mod.f(...)` -> "mod.f" (a module of the package by name)."""
    if isinstance(node.func, cst.Name):
        return node.func.value
    if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name):
        return f"{node.func.value.value}.{node.func.attr.value}"
    return None


def _is_helper_call(conv: _TritonConverter, node: cst.Call, active: tuple) -> bool:
    key = _call_key(node)
    return key is not None and key not in active and (key in conv.info.helpers or key in conv.info.kernels)


def _helper_args(conv: _TritonConverter, node: cst.Call, analysis, active: tuple) -> list:
    """The arguments of a jit helper call given for the parameters `analysis(home, helper, active)` finds in
    the helper (its pointers, its dtypes)."""
    name = _call_key(node)
    helper = conv.info.helpers.get(name) or conv.info.kernels[name]
    inner = analysis(conv.info.helper_home.get(name) or conv, helper, active)
    hp = [p.name.value for p in helper.params.params]
    out = []
    for i, a in enumerate(node.args):
        key = a.keyword.value if a.keyword else (hp[i] if i < len(hp) else None)
        if key in inner:
            out.append(a.value)
    return out


def _dtype_params(conv: _TritonConverter, fn: cst.FunctionDef, _active: tuple = ()) -> set[str]:
    """Parameters used as a dtype: `.to(P)`, `.cast(P)`, `tl.cast(x, P)`, `dtype=P`, `tl.zeros(shape, P)`,
    `tl.full(shape, v, P)`, or passed to a jit helper's parameter that is."""
    params = {p.name.value for p in fn.params.params}
    found: set[str] = set()
    queries = triton_dtype_queries()
    for node in walk_nodes(fn.body):
        # `P.is_fp16()`, `P.primitive_bitwidth`, `P.value.is_int()`, `P is tl.float16`: a dtype's queries
        if isinstance(node, cst.Attribute) and (node.attr.value in queries.predicates
                                                or node.attr.value in queries.widths):
            base = node.value.value if isinstance(node.value, cst.Attribute) and node.value.attr.value == "value" \
                else node.value
            if isinstance(base, cst.Name) and base.value in params:
                found.add(base.value)
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and _none_test(node) is None \
                and (isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot))
                     or any(_is_tl_dtype(conv, c) for c in (node.left, node.comparisons[0].comparator))):
            # `P is tl.float16`, `P == tl.bfloat16`
            found |= {c.value for c in (node.left, node.comparisons[0].comparator)
                      if isinstance(c, cst.Name) and c.value in params}
        if isinstance(node, cst.IfExp) and any(_is_tl_dtype(conv, c) for c in (node.body, node.orelse)):
            # `tl.float32 if P == tl.bfloat16 else P`: the other arm is a dtype too
            found |= {c.value for c in (node.body, node.orelse) if isinstance(c, cst.Name) and c.value in params}
        if not isinstance(node, cst.Call):
            continue
        d = conv.dotted(node.func)
        positional = [a.value for a in node.args if a.keyword is None]
        cands = [a.value for a in node.args if a.keyword is not None and a.keyword.value == "dtype"]
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("to", "cast") and positional \
                and not (d or "").startswith(f"{TL}."):
            cands.append(positional[0])
        for name, index in ((f"{TL}.cast", 1), (f"{TL}.zeros", 1), (f"{TL}.full", 2)):
            if d == name and len(positional) > index:
                cands.append(positional[index])
        if _is_helper_call(conv, node, _active):
            cands += _helper_args(conv, node, _dtype_params, _active + (fn.name.value,))
        found |= {c.value for c in cands if isinstance(c, cst.Name) and c.value in params}
    return found


def _is_tl_dtype(conv: _TritonConverter, node: cst.BaseExpression) -> bool:
    """`tl.float16` and Triton's other dtype names."""
    d = conv.dotted(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
    return bool(d) and d.startswith(f"{TL}.") and d[len(TL) + 1:] in TRITON_DTYPES


def _none_test(node: cst.BaseExpression) -> tuple[cst.BaseExpression, bool] | None:
    """`(x, True)` for `x is not None`, `(x, False)` for `x is None` (either side), else None."""
    if not (isinstance(node, cst.Comparison) and len(node.comparisons) == 1):
        return None
    c = node.comparisons[0]
    if not isinstance(c.operator, (cst.Is, cst.IsNot)):
        return None
    given = isinstance(c.operator, cst.IsNot)
    if _is_none(c.comparator):
        return node.left, given
    if _is_none(node.left):
        return c.comparator, given
    return None


def _check_no_pointer_left(body) -> None:
    """A pointer value that reached the model (an unsupported use) fails the kernel here, with its position."""
    stack = list(body)
    while stack:
        x = stack.pop()
        if isinstance(x, _Ptr):
            raise fail("CT100", f"a pointer into `{x.base}` used as a value (only addresses of tl.load / "
                       "tl.store / atomics, pointer arithmetic and pointer variables are supported)", x.pos)
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif hasattr(x, "__dataclass_fields__"):
            for f in x.__dataclass_fields__:
                stack.append(getattr(x, f))


def _drop_tail_returns(stmts: list) -> list:
    """A bare `return` that ends the body, or the last statement of an arm of the body's final `if`, returns as
    falling off the end does: dropped."""
    if not stmts:
        return stmts
    last = stmts[-1]
    if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Return) \
            and last.body[0].value is None:
        return _drop_tail_returns(stmts[:-1])
    if isinstance(last, cst.If):
        return stmts[:-1] + [_drop_tail_returns_if(last)]
    return stmts


def _drop_tail_returns_if(node: cst.If) -> cst.If:
    body = node.body.with_changes(body=_drop_tail_returns(list(node.body.body)) or [cst.SimpleStatementLine(
        [cst.Pass()])])
    orelse = node.orelse
    if isinstance(orelse, cst.If):
        orelse = _drop_tail_returns_if(orelse)
    elif isinstance(orelse, cst.Else):
        orelse = orelse.with_changes(body=orelse.body.with_changes(
            body=_drop_tail_returns(list(orelse.body.body)) or [cst.SimpleStatementLine([cst.Pass()])]))
    return node.with_changes(body=body, orelse=orelse)


def _hook_block_shapes(module: cst.Module) -> dict[str, list[tuple]]:
    """`nargs["w_desc"].block_shape = [BLOCK_N]` in a module-level function (an autotune config's `pre_hook`,
    which Triton runs before each launch of that config): parameter name -> per assignment, the evidence for
    each block extent: `("link", K)` where the value is the launch's constant `nargs["K"]` (directly or through
    a local assigned once), `("value", v)` for an integer literal, else None."""
    out: dict[str, list[tuple]] = {}
    for fn in module.body:
        if not isinstance(fn, cst.FunctionDef):
            continue
        local = _single_assignments(fn)

        def lookup(e, depth=0):
            if isinstance(e, cst.Subscript) and len(e.slice) == 1 and isinstance(e.slice[0].slice, cst.Index) \
                    and isinstance(e.slice[0].slice.value, cst.SimpleString):
                return e.slice[0].slice.value.evaluated_value
            if isinstance(e, cst.Name) and e.value in local and depth < 4:
                return lookup(local[e.value], depth + 1)
            return None
        for node in walk_nodes(fn.body):
            if not (isinstance(node, cst.Assign) and len(node.targets) == 1):
                continue
            t = node.targets[0].target
            if not (isinstance(t, cst.Attribute) and t.attr.value == "block_shape"):
                continue
            param = lookup(t.value)
            if not isinstance(param, str) or not isinstance(node.value, (cst.List, cst.Tuple)):
                continue
            evidence = []
            for el in node.value.elements:
                k = lookup(el.value)
                if isinstance(k, str):
                    evidence.append(("link", k))
                elif isinstance(el.value, cst.Integer):
                    evidence.append(("value", int(el.value.value, 0)))
                else:
                    evidence.append(None)
            out.setdefault(param, []).append(tuple(evidence))
    return out


def _single_assignments(fn: cst.FunctionDef) -> dict[str, cst.BaseExpression]:
    """Names a function assigns exactly once (by a plain `name = value`): name -> value."""
    seen: dict[str, list] = {}
    for node in walk_nodes(fn.body):
        if isinstance(node, cst.Assign):
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    seen.setdefault(t.target.value, []).append(node.value if len(node.targets) == 1 else None)
                elif isinstance(t.target, (cst.Tuple, cst.List)):  # `bm, bn = nargs["BM"], nargs["BN"]`
                    parts = node.value.elements if isinstance(node.value, (cst.Tuple, cst.List)) and \
                        len(node.value.elements) == len(t.target.elements) and len(node.targets) == 1 else None
                    for i, el in enumerate(t.target.elements):
                        if isinstance(el.value, cst.Name):
                            seen.setdefault(el.value.value, []).append(parts[i].value if parts else None)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)) and isinstance(node.target, cst.Name):
            seen.setdefault(node.target.value, []).append(None)
    return {k: v[0] for k, v in seen.items() if len(v) == 1 and v[0] is not None}


def _descriptor_block(conv: _TritonConverter, value: cst.BaseExpression, assigned: dict, depth: int = 0):
    """The block-shape elements of a host descriptor a launch passes: `TensorDescriptor(base, shape, strides,
    block_shape)` / `TensorDescriptor.from_tensor(t, block_shape)`, directly or through a local assigned once
    (`d = TensorDescriptor(...) if b is not None else None`: the descriptor arm). None where not one."""
    if depth > 4:
        return None
    if isinstance(value, cst.Name) and value.value in assigned:
        return _descriptor_block(conv, assigned[value.value], assigned, depth + 1)
    if isinstance(value, cst.IfExp):
        for arm in (value.body, value.orelse):
            found = _descriptor_block(conv, arm, assigned, depth + 1)
            if found is not None:
                return found
        return None
    if not isinstance(value, cst.Call):
        return None
    d = conv.dotted(value.func) or node_code(value.func).strip()
    if d.endswith("TensorDescriptor.from_tensor"):
        index = 1
    elif d.split(".")[-1].endswith("TensorDescriptor"):
        index = 3
    else:
        return None
    block = _arg(value, index, "block_shape")
    if isinstance(block, cst.Name) and block.value in assigned:
        block = assigned[block.value]
    if not isinstance(block, (cst.List, cst.Tuple)):
        return None
    return [el.value for el in block.elements]


def _host_descriptors(conv: _TritonConverter, fn: cst.FunctionDef) -> dict[str, int]:
    """The parameters a kernel uses as host-made tensor descriptors (`w_desc.load([0])`, `c_desc.store([m, n],
    v)`, directly or through a local assigned the parameter (`x_desc = X`)): name -> rank (the number of
    offsets). Pointers have no `.load` / `.store` methods in Triton, so such a call names a descriptor."""
    params = {p.name.value for p in fn.params.params if not conv._is_constexpr(p.annotation)}
    alias: dict[str, str] = {}
    for node in walk_nodes(fn.body):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and isinstance(node.value, cst.Name) and node.value.value in params:
            alias[node.targets[0].target.value] = node.value.value
    out: dict[str, int] = {}
    for node in walk_nodes(fn.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in ("load", "store") and isinstance(node.func.value, cst.Name) \
                and node.args and node.args[0].keyword is None and isinstance(node.args[0].value, (cst.List, cst.Tuple)):
            name = node.func.value.value
            root = name if name in params else alias.get(name)
            if root is not None:
                rank = len(node.args[0].value.elements)
                out[root] = rank if out.get(root, rank) == rank else -1  # -1: ranks that differ (refused)
    return out
