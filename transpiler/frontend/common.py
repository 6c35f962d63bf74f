"""What both frontends share: reading a source file, LibCST -> model conversion (`Converter`, which reads
cuTile Python and which the Triton frontend extends), helper inlining, import resolution and positions.

Neither frontend imports the other: `frontend/source.py` picks one per file, `frontend/cutile_python.py` and
`frontend/triton.py` both build on this module.

Fail-closed: every construct it does not understand raises a TranspileError with a code and the
source position; a file's other kernels are still translated.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
import contextlib
import dataclasses
import functools
import io
import math
import re
import sys
import threading
import tokenize
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import libcst as cst
from libcst.metadata import CodePosition, CodeRange
from libcst.metadata.position_provider import PositionProvidingCodegenState

from ..diagnostics import Diagnostic, TranspileError, fail
from ..model.walk import assigned_names
from ..model.ir import (Assign, Break, Continue, Eval, Expr, For, If, Kernel, Lit, Name, Op, Param, Pos, Stmt, TupleExpr,
                        While)
from ..rules import CUDA_TILE_VERSION, RuleTable, cuda_tile_has
from .blocks import block_statements
from .helper_returns import ReturnShapeError, single_return
from .module_config import UNDECIDED, config_value, returned_expression, taken_statements
from .platform import gpu_worlds, platform_value

CT = "cuda.tile"
DTYPE_NAMES = {
    "float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "tfloat32": "tf32",
    "int32": "i32", "int64": "i64", "int16": "i16", "int8": "i8", "uint32": "u32", "uint8": "u8",
    "bool_": "bool", "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2",
}
# numpy dtypes are dtypes to cuTile Python too (`ct.astype(x, np.float32)`: foreign_dtype_object_to_native)
NUMPY_DTYPES = {n: DTYPE_NAMES[n] for n in ("float16", "float32", "float64", "int8", "int16", "int32", "int64",
                                            "uint8", "uint32", "bool_")}
# torch's too (`ct.arange(n, dtype=torch.int32)`; verification without torch: verify/stubs.py)
TORCH_DTYPES = {**NUMPY_DTYPES, "bfloat16": "bf16", "bool": "bool"}
ROUNDING = {"RN": "NearestEven", "RZ": "Zero", "RM": "NegativeInf", "RP": "PositiveInf", "FULL": "Full",
            "APPROX": "Approx"}
_COMPARE = {cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b, cst.LessThan: lambda a, b: a < b,
            cst.LessThanEqual: lambda a, b: a <= b, cst.GreaterThan: lambda a, b: a > b,
            cst.GreaterThanEqual: lambda a, b: a >= b}
# names of cuda.tile's private modules that cuda.tile itself exports (the same objects)
PRIVATE_REEXPORTS = {f"{CT}._numeric_semantics": frozenset({"RoundingMode", "PaddingMode"})}
PADDING = {"ZERO": "Zero", "NEG_INF": "NegInf", "POS_INF": "PosInf", "NAN": "Nan", "NEG_ZERO": "NegZero"}
# memory_order= / memory_scope= of the atomics (cuTile Rust 0.5.0 has no cluster scope; WEAK is not atomic)
MEMORY_ORDER = {"RELAXED": "Relaxed", "ACQUIRE": "Acquire", "RELEASE": "Release", "ACQ_REL": "AcqRel"}
MEMORY_SCOPE = {"BLOCK": "TileBlock", "DEVICE": "Device", "SYS": "System"}
# the "value" of a procedure helper's call statement (its statements were inlined)
PROCEDURE_DONE = Lit(None, Pos("", 0, 0))
_WRITES = {"view_store", "store", "view_atomic_add", "scatter", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg",
           "desc_store", "compile_error", "llm_hole"}


def _pure(e) -> bool:
    """No write (store, scatter, atomic) and no compile-time refusal anywhere in the expression."""
    if isinstance(e, Op):
        return e.op not in _WRITES and all(_pure(a) for a in e.args) \
            and all(_pure(v) for _, v in e.attrs if isinstance(v, (Op, TupleExpr)))
    if isinstance(e, TupleExpr):
        return all(_pure(i) for i in e.items)
    return True

# `@ct.kernel(...)` hints -> the Tile IR entry hint they set (cuTile Python's names on the left)
ENTRY_HINTS = {"occupancy": "occupancy", "num_ctas": "num_cta_in_cga", "num_worker_warps": "num_worker_warps_per_cta"}
MATH_CONSTS = {"math.inf": math.inf, "math.pi": math.pi, "math.e": math.e, "math.nan": math.nan}
BINOPS = {cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.FloorDivide: "//",
          cst.Modulo: "%", cst.BitAnd: "&", cst.BitOr: "|", cst.BitXor: "^", cst.Power: "**",
          cst.MatrixMultiply: "@", cst.LeftShift: "<<", cst.RightShift: ">>"}
CMPOPS = {cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">", cst.GreaterThanEqual: ">=",
          cst.Equal: "==", cst.NotEqual: "!="}
AUG = {cst.AddAssign: "+", cst.SubtractAssign: "-", cst.MultiplyAssign: "*", cst.DivideAssign: "/",
       cst.FloorDivideAssign: "//", cst.ModuloAssign: "%", cst.BitAndAssign: "&", cst.BitOrAssign: "|",
       cst.BitXorAssign: "^", cst.LeftShiftAssign: "<<", cst.RightShiftAssign: ">>"}


@dataclass
class ModuleInfo:
    path: str
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> qualified name
    type_aliases: dict[str, str] = field(default_factory=dict)  # C -> "int" for ct.Constant[int]
    consts: dict[str, object] = field(default_factory=dict)
    helpers: dict[str, cst.FunctionDef] = field(default_factory=dict)
    kernels: dict[str, cst.FunctionDef] = field(default_factory=dict)
    launches: dict[str, list[dict[int, object]]] = field(default_factory=dict)
    # Triton: the parameters (by index) a launch site passes a float for (a literal, or a local of the
    # launching function assigned one): Triton types a scalar argument by its Python value
    float_args: dict[str, set[int]] = field(default_factory=dict)
    # Triton: the parameters (by index) a launch site passes an int for (`x.shape[-1]`, `x.stride(0)`, a local
    # computed from those, an `int`-annotated parameter of the launching function): typed int32, as Triton types
    # a Python int that fits
    int_args: dict[str, set[int]] = field(default_factory=dict)
    # helpers imported from sibling modules: local name -> the converter of the module defining it
    helper_home: dict[str, "Converter"] = field(default_factory=dict)
    # modules of the package imported as names (`from mylib import tlx`, `from . import utils as u`): their
    # helpers are called as `tlx.program_id(0)`; local name -> the converter of that module
    module_aliases: dict[str, "Converter"] = field(default_factory=dict)
    # Triton: a function alias chosen at import by environment variables (`exp = tl.exp` in the arm
    # `os.environ.get("FAST", "0") == "1"` does not take): alias name -> the variables, decided by their defaults
    configured_by: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Triton: a name ported by an assumption about a value chosen at import that the port cannot compute (a
    # libdevice shim, rules/triton_compat.toml): name -> the assumption, said in a CT122 warning where it is used
    assumed: dict[str, str] = field(default_factory=dict)
    # Triton: jit functions under a decorator that returns them unchanged (a same-name substitute the Triton
    # module lacks: triton._TritonConverter._scan_substituted_helpers)
    decorator_keeps: set[str] = field(default_factory=set)


@dataclass
class FileResult:
    path: str
    kernels: list[Kernel]
    failures: list[tuple[str, Pos, Diagnostic]]  # (kernel name, kernel position, diagnostic)
    diagnostics: list[Diagnostic]  # file-level
    also: dict[str, list[Diagnostic]] = field(default_factory=dict)  # a failed kernel's other blockers
    # with llm_units: per kernel, the assignments a later pass may reject, for the LLM fallback to turn into
    # units (fallback/units.py `unit_at`): (start, end) positions, target, code, reads, context
    sites: dict[str, list[dict]] = field(default_factory=dict)


class SourceDecodeError(ValueError):
    """A source file whose bytes cannot be decoded as CPython would (PEP 263 cookie, BOM, else UTF-8)."""

    def __init__(self, message: str, line: int = 1, col: int = 1):
        super().__init__(message)
        self.line = line
        self.col = col


def decode_source(data: bytes) -> str:
    """Source bytes -> text, as CPython decodes a module: a UTF-8 BOM or a PEP 263 coding cookie on one of
    the first two lines, else UTF-8. Newlines are normalized to `\\n` (like `open()` in text mode).
    Raises SourceDecodeError (a ValueError) with the position of the problem."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as e:  # unknown encoding in the cookie, or a BOM with a non-UTF-8 cookie
        line = data[:data.find(b"coding")].count(b"\n") + 1 if b"coding" in data[:400] else 1
        raise SourceDecodeError(str(e), min(line, 2)) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        bad = data[e.start:e.start + 1]
        if encoding in ("utf-8", "utf-8-sig"):
            msg = (f"byte 0x{bad.hex()} on line {line} is not UTF-8 and no encoding is declared "
                   f"(declare one on line 1 or 2, e.g. `# -*- coding: latin-1 -*-`, see PEP 263, or save the "
                   f"file as UTF-8)")
        else:
            msg = f"byte 0x{bad.hex()} on line {line} is not valid {encoding} (the declared encoding): {e.reason}"
        raise SourceDecodeError(msg, line, col) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _parsed_sibling(target: Path):
    """(source, LibCST module, CPython tree) of a package module another file imports from, or None when it
    cannot be read or parsed. Files of one package import the same modules (its utils, its config): a worker
    parses each once per run instead of once per importing file (a cold run over a serving engine's package
    spent most of its time re-parsing the same large modules). Keyed by the file's size and modification
    time, so an edit between runs is seen; the trees are immutable, so sharing them is safe."""
    try:
        st = target.stat()
    except OSError:
        return None
    return _parse_cached(str(target), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=96)
def _parse_cached(target: str, _mtime_ns: int, _size: int):
    try:
        source = read_source(target)
        return source, cst.parse_module(source), ast.parse(source)
    except Exception:  # noqa: BLE001 - an unreadable or unparsable sibling
        return None


def read_source(path: str | Path) -> str:
    """The text of a Python source file, decoded as CPython decodes it (see `decode_source`).
    Raises OSError when the file cannot be read, SourceDecodeError (a ValueError) when it cannot be decoded."""
    return decode_source(Path(path).read_bytes())


# Nesting limits. CPython itself refuses deeper code (`too many nested parentheses` past 200 levels; a
# RecursionError "during ast construction" for a sum of a few thousand terms): such files get CT001.
MAX_SOURCE_DEPTH = 3000  # syntax-tree depth beyond which a file is not handed to LibCST (its native parser
#                          overflows the stack near 10k); CT001, like CPython's own limit
MAX_KERNEL_DEPTH = 1100  # model depth (statements + expressions, after inlining helpers) the passes accept; CT116
_PASS_FRAMES_PER_LEVEL = 3  # Python frames the deepest passes (FMA fusion, lowering) use per nesting level
MAX_TILE_DIM = 2 ** 30  # the largest power of two a const generic (i32) holds
_DEEP_STACK = 512 * 1024 * 1024
_DEEP_RECURSION = 200_000
_CPYTHON_RECURSION = 1000  # CPython's default recursion limit
_deep_lock = threading.Lock()
_tls = threading.local()


def run_deep(fn, *args, **kwargs):
    """Run `fn(*args, **kwargs)` in a thread with a large stack (512 MiB) and a raised recursion limit
    (restored before the call returns), so recursive code survives deeply nested input. Exceptions propagate
    to the caller. Calls are serialized (the recursion limit is process-wide)."""
    result: list = []
    error: list = []

    def target(limit: int, old_limit: int) -> None:
        _tls.deep = True
        try:
            sys.setrecursionlimit(limit)
            result.append(fn(*args, **kwargs))
        except BaseException as e:  # noqa: BLE001 - re-raised in the calling thread
            error.append(e)
        finally:
            sys.setrecursionlimit(old_limit)

    nested = getattr(_tls, "deep", False)  # called from a run_deep thread, which holds the lock
    with contextlib.nullcontext() if nested else _deep_lock:
        old_limit = sys.getrecursionlimit()
        old_stack = threading.stack_size()
        limit = max(old_limit, _DEEP_RECURSION // 10)
        try:
            for size in (_DEEP_STACK, 256 * 1024 * 1024, 64 * 1024 * 1024):
                try:
                    threading.stack_size(size)
                    limit = max(old_limit, _DEEP_RECURSION * size // _DEEP_STACK)
                    break
                except (ValueError, RuntimeError):
                    continue
            thread = threading.Thread(target=target, args=(limit, old_limit), name="cutile-transpile-deep")
            thread.start()
        finally:
            threading.stack_size(old_stack)
        thread.join()
    if error:
        raise error[0]
    return result[0]


def kernel_depth_limit() -> int:
    """The deepest kernel the passes can handle in the calling context: MAX_KERNEL_DEPTH, lowered when the
    recursion limit in force leaves less room (the passes run in the caller's thread)."""
    room = sys.getrecursionlimit() - _stack_depth() - 100
    return max(16, min(MAX_KERNEL_DEPTH, room // _PASS_FRAMES_PER_LEVEL))


def _stack_depth() -> int:
    f, n = sys._getframe(), 0
    while f is not None:
        f, n = f.f_back, n + 1
    return n


def _ast_depth(tree: ast.AST) -> int:
    """Depth of a Python syntax tree, measured without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, d = stack.pop()
        if d > deepest:
            deepest = d
        stack.extend((child, d + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _precheck(source: str, display: str) -> tuple[Diagnostic | None, ast.Module | None]:
    """What CPython says about the source (its syntax errors and nesting limits), before LibCST sees it,
    and CPython's tree (its statement lines place the lazy positions, `LazyPositions`).
    Runs at the top of a `run_deep` thread: the parse gets the default recursion limit (1000), so its
    limit on nesting is the one `python3 file.py` has, whatever the caller's stack and limit."""
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(_CPYTHON_RECURSION)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source, filename=display)
    except SyntaxError as e:
        msg = e.msg or "invalid syntax"
        return Diagnostic("error", "CT001", f"syntax error: {msg}", Pos(display, max(e.lineno or 1, 1),
                                                                             max(e.offset or 1, 1))), None
    except (RecursionError, MemoryError) as e:
        return Diagnostic("error", "CT001", f"syntax error: code nested too deeply for CPython's parser "
                          f"({type(e).__name__}: {e}); split the expression into several assignments",
                          Pos(display, 1, 1)), None
    except ValueError as e:  # null bytes (Python < 3.12)
        return Diagnostic("error", "CT001", f"syntax error: {e}", Pos(display, 1, 1)), None
    finally:
        sys.setrecursionlimit(limit)
    depth = _ast_depth(tree)
    if depth > MAX_SOURCE_DEPTH:
        line = 1
        for node in ast.walk(tree):  # the first statement whose subtree is that deep
            if isinstance(node, ast.stmt) and _ast_depth(node) > MAX_SOURCE_DEPTH // 2:
                line = node.lineno
                break
        return Diagnostic("error", "CT001", f"syntax error: code nested {depth} levels deep (at most "
                          f"{MAX_SOURCE_DEPTH}); split the expression into several assignments",
                          Pos(display, line, 1)), None
    return None, tree


def parse_source(source: str, display: str, rules: RuleTable, depth_limit: int,
                 path: Path | None = None, exact_positions: bool = True, converter: type | None = None,
                 llm_units: bool = False, may_define_kernels=None) -> FileResult:
    """One source converted by `converter` (None: cuTile Python's `Converter`). `may_define_kernels(tree, path)`
    (cuTile Python's): False skips a file that cannot define a kernel before LibCST parses it."""
    diag, tree = _precheck(source, display)
    if diag is not None:
        return FileResult(display, [], [], [diag])
    if may_define_kernels is not None and path is not None and tree is not None \
            and not may_define_kernels(tree, path):
        return FileResult(display, [], [], [])
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as e:
        return FileResult(display, [], [], [Diagnostic("error", "CT001", f"syntax error: {e.message}",
                                                       Pos(display, e.raw_line, e.raw_column + 1))])
    except (RecursionError, MemoryError) as e:
        return FileResult(display, [], [], [Diagnostic("error", "CT001", f"syntax error: code nested too deeply "
                                                       f"to parse ({type(e).__name__})", Pos(display, 1, 1))])
    info = ModuleInfo(display)
    conv = (converter or Converter)(info, LazyPositions.of(module, tree, source, exact_positions), rules,
                                     Path(display).stem)
    conv.llm_units = llm_units
    loaded = {path.resolve(): conv} if path is not None else {}
    conv.import_context = (path, display, loaded) if path is not None else None
    conv.scan_module(module)
    if path is not None:
        conv.resolve_imports(module, path, display, loaded)
        if converter is None:  # cuTile Python's kernels (Triton's frontend reads `@triton.jit` its own way)
            conv.adopt_imported_kernel_decorators()
    kernels, failures, also = [], [], {}
    for name, fn in info.kernels.items():
        try:
            k = conv.kernel(fn)
            depth, where = model_depth(k)
            if depth > depth_limit:
                raise fail("CT116", f"kernel `{name}` nests {depth} levels deep (statements and expressions, "
                           f"helpers inlined); at most {depth_limit} are supported here: split the expression "
                           f"into several assignments", where)
            kernels.append(k)
        except TranspileError as e:
            failures.append((name, conv.pos(fn), e.diagnostic))
            if getattr(e, "also", None):
                also[name] = e.also
        except RecursionError:
            failures.append((name, conv.pos(fn), Diagnostic(
                "error", "CT116", f"kernel `{name}` nests too deeply to translate (helpers inlined); split the "
                "expression into several assignments", conv.pos(fn))))
    for name, fn in conv.misplaced:
        failures.append((name, conv.pos(fn), conv.misplaced_diag(fn)))
    return FileResult(display, kernels, failures, [], also, conv.unit_sites)


def model_depth(k: Kernel) -> tuple[int, Pos]:
    """Nesting depth of a kernel's model (statements and expressions), measured without recursion, and the
    position of the innermost statement that reaches it."""
    deepest, where, stack = 0, k.pos, [(s, 1) for s in k.body]
    while stack:
        node, d = stack.pop()
        if d > deepest:
            deepest = d
            if not isinstance(node, (Op, Name, Lit, TupleExpr)):
                where = node.pos
        if isinstance(node, (Assign, Eval)):
            stack.append((node.value, d + 1))
        elif isinstance(node, For):
            stack.extend((e, d + 1) for e in (node.start, node.stop, node.step, *node.body))
        elif isinstance(node, While):
            stack.extend((e, d + 1) for e in (node.cond, *node.body))
        elif isinstance(node, If):
            stack.extend((e, d + 1) for e in (node.cond, *node.body, *node.orelse))
        elif isinstance(node, Op):
            stack.extend((a, d + 1) for a in node.args if a is not None)
            stack.extend((v, d + 1) for _, v in node.attrs if isinstance(v, (Op, Name, Lit, TupleExpr)))
        elif isinstance(node, TupleExpr):
            stack.extend((i, d + 1) for i in node.items)
    return deepest, where


class Converter:
    discards_helper_results = False  # a helper call statement whose returned values are unused (Triton)

    def __init__(self, info: ModuleInfo, positions, rules: RuleTable, module_name: str):
        self.info = info
        self.positions = positions
        self.rules = rules
        self.module_name = module_name
        self.pending: list[Stmt] = []
        self.subst: list[dict[str, Expr]] = []
        self.inline_counter = 0
        self.renames: list[tuple[str, dict]] = []
        self.rules_used: set[str] = set()
        self.inlining: list[str] = []  # helpers being inlined, outermost first (recursion is refused)
        self.current: str = ""  # the kernel being converted
        self.kernel_locals: set[str] = set()  # its parameters and assigned names (they shadow module constants)
        self.misplaced: list[tuple[str, cst.FunctionDef]] = []  # @ct.kernel functions not at module level
        # kernels a module-level factory function defines and returns: kernel -> (factory, closure constants)
        self.factories: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {}
        # (file, shown path, modules loaded) while the package's modules are read: a module-level `if` may test a
        # name imported from one of them (`from .hardware import HAS_GATHER`)
        self.import_context: tuple[Path, str, dict] | None = None
        self.procedure_call = False  # the call being converted is a statement: a helper may return nothing
        self.recovered: list[Diagnostic] = []  # the blockers of the kernel being converted, in order
        # `v = a.tiled_view(shape, padding_mode=...)`: v's loads and stores are ct.load/ct.store of `a` with that
        # shape and padding (cuTile Python's tiled view is the same aggregate, TiledViewValue)
        self.tiled_views: dict[str, tuple[cst.BaseExpression, cst.BaseExpression, cst.Arg | None]] = {}
        # `idx = (a, b + c)` assigned once in the kernel body: its items are locals `idx_0`, `idx_1`, computed
        # there, and `idx` reads as the tuple of them (an index passed through a variable)
        self.tuple_vars: dict[str, TupleExpr] = {}
        self.assign_counts: dict[str, int] = {}
        self.helper_counts: list[dict[str, int]] = []  # the same per helper being inlined (innermost last)
        # --llm-fallback: an assignment the rules reject becomes an `llm_unit` placeholder (transpiler/fallback)
        self.llm_units = False
        self.unit_sites: dict[str, list[dict]] = {}
        self.value_units: dict[int, Expr] = {}  # id(value node) -> the unit's name (_with_value_units)

    # ------------------------------------------------------------------ module scan
    def pos(self, node: cst.CSTNode) -> Pos:
        try:
            p = self.positions[node].start
            return Pos(self.info.path, p.line, p.column + 1)
        except KeyError:
            return Pos(self.info.path, 1, 1)

    def _source_order(self, node: cst.CSTNode) -> tuple[int, int]:
        p = getattr(self.positions, "exact", self.positions.get)(node)  # never a deferred stand-in
        return (p.start.line, p.start.column) if p is not None else (0, 0)

    def dotted(self, node: cst.BaseExpression) -> str | None:
        if isinstance(node, cst.Name):
            return self.info.aliases.get(node.value, node.value)
        if isinstance(node, cst.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr.value}" if base else None
        return None

    def _scan_top_level(self, module: cst.Module) -> None:
        """Imports, constants and aliases of the module's top level; its functions as kernels or helpers. A
        module-level `if` contributes the arm its configuration takes with no environment variable set
        (module_config.py); a `try` its body."""
        self.config_names: dict[str, object] = {}
        self.top_statements: list[cst.CSTNode] = []
        for stmt in taken_statements(module.body, self._config_test, self._tried):
            self.top_statements.append(stmt)
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self._scan_small(small)
            elif isinstance(stmt, cst.FunctionDef):
                if self._is_kernel(stmt):
                    self.info.kernels[stmt.name.value] = stmt
                else:
                    self.info.helpers[stmt.name.value] = stmt

    def adopt_imported_kernel_decorators(self) -> None:
        """Top-level functions decorated with an alias of cuda.tile.kernel that a sibling module defines
        (`from .aliases import kern`; `@kern`) are kernels: the top-level scan ran before the imports were
        resolved and took them for helpers. Kernels stay in source order."""
        late = [fn for fn in self.info.helpers.values() if any(fn is t for t in self.top_statements)
                and self._is_kernel(fn)]
        if not late:
            return
        for fn in late:
            del self.info.helpers[fn.name.value]
            self.info.kernels[fn.name.value] = fn
        order = sorted(self.info.kernels.items(), key=lambda kv: self._source_order(kv[1]))
        self.info.kernels.clear()
        self.info.kernels.update(order)

    def scan_module(self, module: cst.Module) -> None:
        self._scan_top_level(module)
        top = {id(stmt) for stmt in self.top_statements}
        launches, misplaced = [], []
        lazy = isinstance(self.positions, LazyPositions)
        if lazy:
            self.positions.prefer(list(self.info.kernels.values()) + list(self.info.helpers.values()))
        # a launch is `<...>.launch(...)` or a name imported as cuda.tile.launch; a nested kernel has a
        # decorator line naming `kernel` the same ways: statements whose text has neither are not walked
        # (most of a module's text is kernel bodies, which have neither)
        launch_words = {"launch"} | {local for local, full in self.info.aliases.items() if full == f"{CT}.launch"}
        kernel_words = {"kernel"} | {local for local, full in self.info.aliases.items() if full == f"{CT}.kernel"}
        for i, stmt in enumerate(module.body):
            if lazy:
                text = self.positions.statement_text(i)
                if isinstance(stmt, cst.FunctionDef):  # from the `def` on: a kernel's own decorator is no hit
                    at = text.find(f"def {stmt.name.value}")
                    text = text[at:] if at >= 0 else text
                decorated = "@" in text and any(w in d for d in _DECORATOR_LINE.findall(text) for w in kernel_words)
                if not decorated and not any(w in text for w in launch_words):
                    continue
            for node in walk_nodes(stmt):
                if isinstance(node, cst.Call) and self.dotted(node.func) == f"{CT}.launch":
                    launches.append(node)
                elif isinstance(node, cst.FunctionDef) and id(node) not in top and self._is_kernel(node):
                    misplaced.append(node)
                else:
                    continue
                if lazy:
                    self.positions.hint(node, i)
        for node in sorted(launches, key=self._source_order):  # the walk is not in source order
            self._scan_launch(node)
        misplaced = sorted(misplaced, key=self._source_order)
        # the same kernel defined in the arm of a module-level `if` the port does not take (module_config.py)
        configured = {id(n) for stmt in module.body if isinstance(stmt, (cst.If, cst.Try)) for n in walk_nodes(stmt)
                      if isinstance(n, cst.FunctionDef)}
        misplaced = [n for n in misplaced if not (id(n) in configured and n.name.value in self.info.kernels)]
        for node in misplaced:
            factory = next((t for t in module.body if isinstance(t, cst.FunctionDef)
                            and isinstance(t.body, cst.IndentedBlock) and any(b is node for b in t.body.body)), None)
            closure = _closure_constants(factory, node) if factory is not None else None
            name = node.name.value
            if closure is None or name in self.info.kernels or name in self.info.helpers:
                self.misplaced.append((name, node))
            else:
                self.info.kernels[name] = node
                self.factories[name] = (factory.name.value, closure)

    def resolve_imports(self, module: cst.Module, path: Path, display: str, loaded: dict) -> None:
        """`from .utils import gelu, LOG2E` (or `from mypkg.utils import ...`): helpers, constants, type
        aliases and cuda.tile aliases of sibling modules of the package become usable here, each helper
        inlined in its own module's context (its names, its positions in diagnostics). Modules that
        cannot be read or parsed, and names they do not define, stay unresolved (the use is diagnosed)."""
        for target, names in self._imports_from_files(module, path):
            home = self._sibling(target, path, display, loaded)
            if home is None:
                continue
            for name, local in names:
                hi = home.info
                if name not in hi.helpers and name not in hi.consts:
                    sub = self._submodule_file(target, name)  # `from mylib import tlx`: a module of the package
                    if sub is not None and (conv := self._sibling(sub, path, display, loaded)) is not None:
                        self.info.module_aliases[local] = conv
                        # its helpers under `local.name`, the key a call `local.name(...)` is read by
                        for h, fn in conv.info.helpers.items():
                            self.info.helpers[f"{local}.{h}"] = fn
                            self.info.helper_home[f"{local}.{h}"] = conv.info.helper_home.get(h, conv)
                        continue
                if name in hi.helpers:
                    self.info.helpers[local] = hi.helpers[name]
                    self.info.helper_home[local] = hi.helper_home.get(name, home)
                elif name in hi.consts:
                    self.info.consts[local] = hi.consts[name]
                elif name in hi.type_aliases:
                    self.info.type_aliases[local] = hi.type_aliases[name]
                elif name in hi.aliases and hi.aliases[name].startswith(f"{CT}."):
                    self.info.aliases[local] = hi.aliases[name]
                    continue
                else:
                    continue
                self.info.aliases.pop(local, None)

    @staticmethod
    def _submodule_file(package_init: Path, name: str) -> Path | None:
        """`<package>/<name>.py` (or its `__init__.py`) when `package_init` is a package's `__init__.py`."""
        if package_init.name != "__init__.py" or not name.isidentifier():
            return None
        for cand in (package_init.parent / f"{name}.py", package_init.parent / name / "__init__.py"):
            if cand.is_file():
                return cand.resolve()
        return None

    @staticmethod
    def _imports_from_files(module: cst.Module, path: Path):
        """(the module file, [(name, local name)]) of each top-level `from M import a as b` whose module is a
        file of the package (relative, or absolute under the package root)."""
        from .modules import module_file
        for stmt in module.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar):
                    continue
                mod = name_text(small.module) if small.module is not None else ""
                target = module_file(path, len(small.relative), mod)
                if target is None and small.relative and not mod:  # `from . import utils`: the package itself
                    init = path.resolve().parent
                    for _ in range(len(small.relative) - 1):
                        init = init.parent
                    target = init / "__init__.py" if (init / "__init__.py").is_file() else None
                if target is not None:
                    yield target, [(name_text(a.name), a.asname.name.value if a.asname else name_text(a.name))
                                   for a in small.names]

    def _sibling(self, target: Path, path: Path, display: str, loaded: dict) -> "Converter | None":
        if target in loaded:
            return loaded[target]
        if len(loaded) > 64:
            return None
        loaded[target] = None  # an import cycle resolves to nothing
        parsed = _parsed_sibling(target)
        if parsed is None:  # an unreadable sibling only leaves its names unresolved
            return None
        source, module, tree = parsed
        import os
        shown = os.path.normpath(os.path.join(os.path.dirname(display),
                                              os.path.relpath(target, path.resolve().parent)))
        exact = not isinstance(self.positions, _DeferredPositions)
        conv = type(self)(ModuleInfo(Path(shown).as_posix()), LazyPositions.of(module, tree, source, exact),
                          self.rules, target.stem)
        conv.import_context = (target, shown, loaded)
        conv.scan_module(module)
        conv.resolve_imports(module, target, shown, loaded)
        loaded[target] = conv
        return conv

    def misplaced_diag(self, fn: cst.FunctionDef) -> Diagnostic:
        return Diagnostic("error", "CT113", f"kernel `{fn.name.value}` is not defined at the top level of the "
                          "module (inside a function, class or block): only module-level `@ct.kernel` functions "
                          "are translated, and those a module-level factory function defines in its body that read "
                          "only values of the factory (no function, class or import of it)", self.pos(fn))

    def _scan_small(self, small: cst.BaseSmallStatement) -> None:
        if isinstance(small, cst.Import):
            for a in small.names:
                full = name_text(a.name)
                if a.asname:
                    self.info.aliases[a.asname.name.value] = full
                else:
                    self.info.aliases[full.split(".")[0]] = full.split(".")[0]
        elif isinstance(small, cst.ImportFrom) and small.module is not None and not isinstance(small.names, cst.ImportStar):
            mod = name_text(small.module)
            for a in small.names:
                local = a.asname.name.value if a.asname else name_text(a.name)
                name = name_text(a.name)
                # the module cuda.tile re-exports these from: the same objects (`ct.RoundingMode is ...`)
                self.info.aliases[local] = f"{CT}.{name}" if name in PRIVATE_REEXPORTS.get(mod, ()) else f"{mod}.{name}"
        elif isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            name = small.targets[0].target.value
            ctype = self._constant_annotation(small.value)
            if ctype:
                self.info.type_aliases[name] = ctype
                return
            d = self.dotted(small.value) if isinstance(small.value, (cst.Name, cst.Attribute)) else None
            if d and d.startswith(f"{CT}."):
                self.info.aliases[name] = d  # e.g. ZERO = ct.PaddingMode.ZERO
                return
            value = self._eval_const(small.value)
            if value is not None:
                self.info.consts[name] = value
            else:  # `FAST = os.getenv("FAST", "0") == "1"`: a configuration value for module-level `if`s only
                self.config_names[name] = self._config_test(small.value)
        elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
            value = self._eval_const(small.value)
            if value is not None:
                self.info.consts[small.target.value] = value

    def _config_test(self, node: cst.BaseExpression) -> object:
        """A configuration value (module_config.py). One that reads a fact depending on the GPU
        (platform.py) is evaluated on every GPU a port can run on and decided only where all agree."""
        worlds = gpu_worlds()
        seen: set[str] = set()
        first = self._config_in(node, worlds[0], seen)
        if not seen or first is UNDECIDED:
            return first
        for world in worlds[1:]:
            v = self._config_in(node, world, None)
            if v is UNDECIDED or type(v) is not type(first) or v != first:
                return UNDECIDED
        return first

    def _config_in(self, node: cst.BaseExpression, world: dict, seen: set[str] | None) -> object:
        return config_value(node, self.dotted, self._eval_const, _ConfigNames(self), self._has_attr,
                            platform=lambda n: platform_value(n, self.dotted, world, seen),
                            function=lambda call: self._returned_value(call, world, seen))

    def _returned_value(self, call: cst.Call, world: dict, seen: set[str] | None) -> object:
        """The value a call of a module-level function of the package returns (`get_available_device()`), where
        the function takes no argument and only returns a configuration expression (returned_expression)."""
        if call.args or not isinstance(call.func, cst.Name):
            return UNDECIDED
        name = call.func.value
        defs = [st for st in getattr(self, "top_statements", ()) if isinstance(st, cst.FunctionDef) and st.name.value == name]
        if not defs:
            home = self._imported_home(name)
            if home is None or not isinstance(home[0], Converter):
                return UNDECIDED
            chain = _tls.__dict__.setdefault("following", set())  # a name modules import from each other
            link = (self.info.path, name)
            if link in chain:
                return UNDECIDED
            chain.add(link)
            try:
                return home[0]._returned_value(call.with_changes(func=cst.Name(home[1])), world, seen)
            finally:
                chain.discard(link)
        bound: dict[str, list] = {}
        _bound_names(self.top_statements, bound)
        expr = returned_expression(defs[0], self.dotted, lambda t: self._config_in(t, world, seen)) \
            if len(bound.get(name, ())) == 1 else None
        evaluating = self.__dict__.setdefault("_evaluating", set())
        if expr is None or name in evaluating:
            return UNDECIDED
        evaluating.add(name)
        try:
            return self._config_in(expr, world, seen)
        finally:
            evaluating.discard(name)

    def _has_attr(self, module: str, name: str) -> bool | None:
        """`hasattr(module, name)` in the language the port targets (None: not known here)."""
        return None

    def _tried(self, stmt: cst.Try) -> tuple | None:
        """The statements a module-level `try` runs in the language the port targets (None: its body)."""
        return None

    def config_of(self, name: str) -> object:
        """The configuration value of a module-level name (a constant, a configuration value, or one imported
        from another module of the package), UNDECIDED where there is none."""
        names = getattr(self, "config_names", {})
        if name in names:
            return names[name]
        if name in self.info.consts:
            return self.info.consts[name]
        home = self._imported_home(name)
        return home[0].config_of(home[1]) if home is not None else UNDECIDED

    def _imported_home(self, name: str) -> tuple["Converter", str] | None:
        """The module of the package a name is imported from (its converter) and the name there."""
        if self.import_context is None or not hasattr(self, "top_statements"):
            return None
        path, display, loaded = self.import_context
        if not hasattr(self, "_config_imports"):  # read once per module, not once per undecided name
            self._config_imports = {}
            for target, imported in self._imports_from_files(cst.Module(body=self.top_statements), path):
                for source_name, local in imported:
                    self._config_imports.setdefault(local, (target, source_name))
        if name not in self._config_imports:
            return None
        target, source_name = self._config_imports[name]
        home = self._sibling(target, path, display, loaded)
        return (home, source_name) if home is not None else None

    def _constant_annotation(self, node: cst.BaseExpression) -> str | None:
        """`ct.Constant[int]` (or an alias of it) -> 'int'."""
        if isinstance(node, cst.Name) and node.value in self.info.type_aliases:
            return self.info.type_aliases[node.value]
        if isinstance(node, cst.Subscript) and self.dotted(node.value) == f"{CT}.Constant":
            el = node.slice[0].slice
            if isinstance(el, cst.Index) and isinstance(el.value, cst.Name) and el.value.value in ("int", "bool", "float"):
                return el.value.value
        if self.dotted(node) == f"{CT}.Constant":
            return "int"
        return None

    def _eval_const(self, node: cst.BaseExpression) -> object | None:
        """Module-level constant expressions: literals, math constants, arithmetic on them."""
        if isinstance(node, cst.Integer):
            return int(node.value.replace("_", ""), 0)
        if isinstance(node, cst.Float):
            return float(node.value.replace("_", ""))
        if isinstance(node, cst.Name):
            if node.value in ("True", "False"):
                return node.value == "True"
            return self.info.consts.get(node.value)
        d = self.dotted(node)
        if d in MATH_CONSTS:
            return MATH_CONSTS[d]
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            v = self._eval_const(node.expression)
            return -v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
        if isinstance(node, cst.BinaryOperation):
            a, b = self._eval_const(node.left), self._eval_const(node.right)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                op = BINOPS.get(type(node.operator))
                if op == "**" and (abs(b) > 1024 or abs(a) > 2 ** 64):
                    return None  # `2 ** 10 ** 10` would never finish
                try:
                    return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b,
                            "//": lambda: a // b, "**": lambda: a ** b}[op]()
                except (KeyError, ZeroDivisionError, OverflowError, ValueError):
                    return None
        if isinstance(node, cst.Call) and self.dotted(node.func) in ("math.log", "math.sqrt", "math.log2", "builtins.float", "float"):
            args = [self._eval_const(a.value) for a in node.args]
            if all(isinstance(a, (int, float, str)) for a in args) and args:
                fn = {"math.log": math.log, "math.sqrt": math.sqrt, "math.log2": math.log2}.get(self.dotted(node.func), float)
                try:
                    return fn(*args)
                except (TypeError, ValueError):
                    return None
        if isinstance(node, cst.SimpleString) and self.dotted(node) is None:
            return node.evaluated_value
        return None

    def _is_kernel(self, fn: cst.FunctionDef) -> bool:
        return self._kernel_decorator(fn) is not None

    def _kernel_decorator(self, fn: cst.FunctionDef) -> cst.Decorator | None:
        for d in fn.decorators:
            target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
            if self.dotted(target) == f"{CT}.kernel":
                return d
        return None

    def _scan_launch(self, call: cst.Call) -> None:
        args = [a.value for a in call.args]
        if len(args) < 4 or not isinstance(args[2], cst.Name) or args[2].value not in self.info.kernels:
            return
        kargs = args[3]
        if not isinstance(kargs, (cst.Tuple, cst.List)):
            return
        lits = {}
        for i, el in enumerate(kargs.elements):
            v = self._eval_const(el.value)
            if isinstance(v, (int, float, bool)):
                lits[i] = v
        self.info.launches.setdefault(args[2].value, []).append(lits)

    # ------------------------------------------------------------------ kernels
    def kernel(self, fn: cst.FunctionDef) -> Kernel:
        """The kernel's model, or TranspileError with its first blocker, the others in `also`: a statement
        that fails is recorded and the next one converted, so one run reports every blocker it can see."""
        self.recovered = []
        try:
            k = self._kernel(fn)
        except TranspileError as e:
            raise self._blockers(e.diagnostic) from None
        except Exception:  # noqa: BLE001 - state left by a recovered failure: report that failure
            if self.recovered:
                raise self._blockers(None) from None
            raise
        if self.recovered:
            raise self._blockers(None)
        return k

    def _blockers(self, last: Diagnostic | None) -> TranspileError:
        found = list(dict.fromkeys(self.recovered + ([last] if last is not None else [])))
        err = TranspileError(found[0].code, found[0].message, found[0].pos)
        err.also = found[1:]
        return err

    def _kernel(self, fn: cst.FunctionDef) -> Kernel:
        # per-kernel state starts empty: a kernel that failed mid-way must not leak into the next one
        self.rules_used = set()
        self.inlining, self.inlining_keys = [], []
        self.pending, self.subst, self.renames, self.procedure_call = [], [], [], False
        self.tiled_views = {}
        self.tuple_vars = {}
        self.assign_counts = _assign_counts(fn)
        # `break` in a `for`: the loops being converted (their flag; None for a `while`), the flags used
        self.loops: list[str | None] = []
        self.broken: set[str] = set()
        self.broken_names: list[str] = []
        self.exits: list[int] = []  # inlined helpers that return early: the loop depth of their one-trip loop
        self.returning: list[tuple[str, str]] = []  # for loops with a `return`: (their returned flag, break flag)
        self.top_before: list[Stmt] = []  # top-level statements before the `if` whose arm is being converted
        self.current = fn.name.value
        self._current_fn = fn
        dec = self._kernel_decorator(fn)
        self._check_signature(fn, dec)
        self.kernel_locals = self._function_locals(fn)
        factory, closure = self.factories.get(fn.name.value, ("", ()))
        self.kernel_locals |= {n for n, _ in closure}
        hints = self._hints(dec)
        params = self._params(fn)
        # the factory's values the kernel reads: compile-time constants to cuTile Python, so constants here
        # (the router reads them from the kernel's closure at launch)
        params += [Param(n, "const", self.pos(fn.name), const_type=t) for n, t in closure]
        self.const_params = {p.name for p in params if p.kind == "const"}
        self.array_params = {p.name for p in params if p.kind in ("array", "unknown")}
        body = tuple(self.block(fn.body, top=True))
        launches = []
        for lits in self.info.launches.get(fn.name.value, []):
            launches.append(tuple(sorted((params[i].name, v) for i, v in lits.items()
                                         if i < len(params) and params[i].kind == "const")))
        return Kernel(name=fn.name.value, module=self.module_name, path=self.info.path, pos=self.pos(fn),
                      params=tuple(params), body=body, hints=hints,
                      factory=factory, closure=tuple(n for n, _ in closure),
                      launches=tuple(sorted(set(launches), key=repr)), rules_used=tuple(sorted(self.rules_used)))

    def _params(self, fn: cst.FunctionDef) -> list[Param]:
        """The kernel's parameters as the model has them (cuTile: from their annotations)."""
        params = []
        for p in fn.params.params:
            ctype = self._constant_annotation(p.annotation.annotation) if p.annotation else None
            if ctype:
                params.append(Param(p.name.value, "const", self.pos(p), const_type=ctype))
            elif p.annotation is None:
                params.append(Param(p.name.value, "unknown", self.pos(p)))
            else:
                ann = p.annotation.annotation
                if isinstance(ann, cst.Name) and ann.value in ("int", "float", "bool"):
                    dt = {"int": "i32", "float": "f32", "bool": "bool"}[ann.value]
                    params.append(Param(p.name.value, "scalar", self.pos(p), dtype=dt))
                else:
                    dotted = self.dotted(ann) or ""
                    if dotted in (f"{CT}.Array",):
                        params.append(Param(p.name.value, "array", self.pos(p)))
                    elif self._host_type_annotation(ann, dotted):
                        params.append(Param(p.name.value, "unknown", self.pos(p)))
                    else:
                        raise fail("CT106", f"unsupported annotation on parameter `{p.name.value}`", self.pos(p.annotation))
        return params

    def _host_type_annotation(self, ann: cst.BaseExpression, dotted: str) -> bool:
        """`x: torch.Tensor`: a class of another library, which cuTile Python reads as no annotation at all
        (only `Annotated[...]` metadata such as ct.Constant changes a parameter)."""
        root = ann
        while isinstance(root, cst.Attribute):
            root = root.value
        return isinstance(root, cst.Name) and root.value in self.info.aliases and "." in dotted \
            and not dotted.startswith(("cuda.", "typing.", "typing_extensions.", "builtins."))

    def _check_signature(self, fn: cst.FunctionDef, dec: cst.Decorator | None) -> None:
        """What makes a kernel untranslatable before its body is read: async, foreign decorators, a name
        with no C symbol, parameters that are not plain positional ones."""
        name = fn.name.value
        if fn.asynchronous is not None:
            raise fail("CT111", f"kernel `{name}` is `async def`: cuTile kernels are plain functions (cuTile "
                       "Python cannot launch a coroutine)", self.pos(fn))
        # a decorator above `@ct.kernel` receives the kernel object (TileGym's `@experimental_kernel` tags it
        # for a warning at launch): the kernel's code is the same, routing finds the port by the object's
        # function, and verification checks that the module's name is still that kernel. One below it
        # changes the function cuTile Python compiles.
        below = fn.decorators[fn.decorators.index(dec) + 1:] if dec in fn.decorators else fn.decorators
        for d in below:
            if d is not dec:
                raise fail("CT112", f"kernel `{name}` has the decorator `@{node_code(d.decorator)}` below "
                           "`@ct.kernel`: its effect cannot be translated (cuTile Python compiles the "
                           "function it returns)", self.pos(d))
        if not name.isascii():
            raise fail("CT114", f"kernel name `{name}` is not ASCII: its C symbol `cutile_{name}` and Rust entry "
                       "need an ASCII identifier", self.pos(fn.name))
        ps = fn.params
        if ps.posonly_params or not isinstance(ps.posonly_ind, cst.MaybeSentinel):
            raise fail("CT100", "kernels with position-only parameters (`/`) are not supported",
                       self.pos(ps.posonly_ind if isinstance(ps.posonly_ind, cst.CSTNode) else ps))
        if ps.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or ps.kwonly_params or ps.star_kwarg:
            raise fail("CT100", "kernels with *args, keyword-only or **kwargs parameters are not supported", self.pos(ps))

    def _function_locals(self, fn: cst.FunctionDef) -> set[str]:
        """Names local to a function (parameters and assigned names, as Python scopes them); refuses
        those that shadow an import, helper or kernel of the module."""
        names = {p.name.value: p.name for p in fn.params.params}
        later: dict[str, list] = {}  # other binding nodes: the first in source order is looked up only for a message
        for node in walk_nodes(fn.body):
            targets = []
            if isinstance(node, cst.AssignTarget):
                targets = [node.target]
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, (cst.For, cst.NamedExpr)):
                targets = [node.target]
            while targets:
                t = targets.pop()
                if isinstance(t, cst.Name):
                    if t.value not in names:
                        names[t.value] = t
                    else:
                        later.setdefault(t.value, []).append(t)
                elif isinstance(t, (cst.Tuple, cst.List)):
                    targets.extend(e.value for e in t.elements)
                elif isinstance(t, cst.StarredElement):
                    targets.append(t.value)
        # a name the function calls: a local of that name would make the call read the local (Python's scoping),
        # where a reader (and the call's resolution) expects the module's function
        called = {n.func.value for n in walk_nodes(fn.body) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)}
        for name, node in names.items():
            if name in self.info.aliases:
                what = f"the import of `{self.info.aliases[name]}`"
            elif (name in self.info.helpers or name in self.info.kernels) and name in called:
                what = f"the module-level function `{name}`"
            else:
                continue  # never called here: every use reads the local, as in Python
            node = min([node] + later.get(name, []), key=self._source_order)  # the walk is not in source order
            raise fail("CT100", f"`{name}` in kernel `{fn.name.value}` shadows {what}: rename the local",
                       self.pos(node))
        return set(names)

    def _hints(self, dec: cst.Decorator | None) -> tuple[tuple[str, int], ...]:
        if dec is None or not isinstance(dec.decorator, cst.Call):
            return ()
        out = []
        for a in dec.decorator.args:
            key = a.keyword.value if a.keyword else None
            if key == "opt_level":
                # tileiras' optimization level: cuTile Rust compiles at 3, cuTile Python's default too
                levels = {v for _, v in self._by_target(a.value, key)}
                if levels != {3}:
                    raise fail("CT102", f"`opt_level={node_code(a.value)}`: the ports are compiled at tileiras' level 3 "
                               "(cuTile Rust 0.5.0 takes the level at launch, not from the kernel); only "
                               "opt_level=3, the default, is supported", self.pos(a))
                continue
            ir_key = ENTRY_HINTS.get(key or "")
            if ir_key is None:
                raise fail("CT102", f"unsupported kernel decorator argument `{key}` (supported: "
                           f"{', '.join(sorted(ENTRY_HINTS))})", self.pos(a))
            for target, v in self._by_target(a.value, key):
                out.append((ir_key if target == "default" else f"{target}:{ir_key}", v))
        return tuple(sorted(out))

    def _by_target(self, node: cst.BaseExpression, key: str) -> list[tuple[str, int]]:
        """An entry hint's value: an int (every target), or `ct.ByTarget(sm_90=2, default=1)`."""
        v = self._eval_const(node)
        if isinstance(v, int) and not isinstance(v, bool):
            return [("default", v)]
        if isinstance(node, cst.Call) and self.dotted(node.func) == f"{CT}.ByTarget":
            out = []
            for a in node.args:
                t = a.keyword.value if a.keyword else None
                tv = self._eval_const(a.value)
                if not (t and (t == "default" or re.fullmatch(r"sm_\d+[a-z]?", t)) and isinstance(tv, int)
                        and not isinstance(tv, bool)):
                    raise fail("CT102", f"`{key}=ct.ByTarget(...)` takes `sm_NN=<int>` and `default=<int>` "
                               "keywords", self.pos(a))
                out.append((t, tv))
            return out
        raise fail("CT102", f"kernel decorator argument `{key}` must be an integer or ct.ByTarget(...)", self.pos(node))

    # ------------------------------------------------------------------ statements
    def block(self, body: cst.BaseSuite, top: bool = False) -> list[Stmt]:
        stmts = body.body if isinstance(body, cst.IndentedBlock) else [body]
        return self.stmts(list(stmts), top)

    def _is_return_guard(self, s) -> bool:
        """`if cond: ...; return` (the arm ends in a bare return and has no other; no else)."""
        if not isinstance(s, cst.If) or s.orelse is not None or not isinstance(s.body, cst.IndentedBlock):
            return False
        body = s.body.body
        if not _ends_in_return(list(body)):
            return False
        inner = [n for b in body for n in walk_nodes(b) if isinstance(n, cst.Return)]
        return len(inner) == 1

    def _for_with_return(self, s: cst.For, before: list[Stmt], rest: list) -> list[Stmt]:
        """cuTile Python's rewrite of `return` in a `for` (for_loop_return.py, then for_loop_break.py): a
        `returned` flag carried after the loop's values, then the break flag; a `return` breaks with the
        values the iteration started with and `returned` set, and after the loop `if returned: return` (the
        rest of the kernel then runs in the else arm, as for a top-level return guard, rule N15)."""
        pos = self.pos(s)
        flag = self._break_flag()  # the break flag for_stmt will take: `returned` is named to sort before it
        returned = _returned_flag(flag)
        self.returning.append((returned, flag))
        try:
            loop = self.for_stmt(s)
        finally:
            self.returning.pop()
        if self.pending:
            raise fail("CT100", "the range of a loop with a `return` cannot call a helper", pos)
        # the values a return breaks with: the loop's carried names (assigned in it and before it)
        defined = {p.name.value for p in self._current_fn.params.params} | assigned_names(before)
        for_loop = next(x for x in loop if isinstance(x, For))
        carried = sorted(assigned_names(for_loop.body) & defined)
        saves = {n: f"{returned}_{n}" for n in carried}
        body = tuple(Assign((saves[n],), Name(n, pos), pos) for n in carried) + \
            _restore_at_returns(for_loop.body, returned, saves, pos)
        loop = [replace(for_loop, body=body) if x is for_loop else x for x in loop]
        after = tuple(self.stmts(list(rest), top=True))
        return [Assign((returned,), Lit(False, pos), pos)] + loop + [If(Name(returned, pos), (), after, pos,
                                                                         returns=True)]

    # Triton's ports are checked by compiling and by their numbers, not by Tile IR equality with cuTile Python:
    # an `if` whose arms return early is split at the top level (cuTile Python keeps refusing it)
    split_returning_ifs = False

    def _split_at_returning_if(self, s: cst.If, rest: list, before: list[Stmt]) -> list[Stmt]:
        cond = self.expr(s.test)
        pre, self.pending = self.pending, []
        if s.orelse is None:
            other = list(rest)
        elif isinstance(s.orelse, cst.Else):
            other = arm_then(list(s.orelse.body.body), list(rest))
        else:  # elif: itself an `if`
            other = [s.orelse] + list(rest)
        with self._top_prefix(before + pre):
            arm = tuple(self.stmts(arm_then(list(s.body.body), list(rest)), top=True))
            other_arm = tuple(self.stmts(other, top=True))
        self.pending = pre
        return self._flush([If(cond, arm, other_arm, self.pos(s))])

    # Triton helpers may return from `if` arms (helper_returns.py); cuTile Python's IR for those is a one-trip
    # loop that the verifier would report `different`, so its helpers keep one final `return`
    helper_returns_rewritten = False

    def _fall_through_end(self, fn: cst.FunctionDef, pos: Pos):
        """What ends a path of helper `fn` that reaches its end without a `return` (helper_returns.py); None:
        such a helper is refused."""
        return None

    def _decide_now(self, test: cst.BaseExpression) -> bool | None:
        """The value of an inlined helper's `if` test known before the model sees it (None: not known here; the
        model folds constant tests itself). See helper_returns.py."""
        return None

    def _const_test(self, e: cst.BaseExpression) -> bool:
        """A condition over constants only (ct.Constant parameters, module constants, literals)."""
        for n in walk_nodes(e):
            if isinstance(n, cst.Name) and n.value not in self.const_params and n.value not in self.info.consts \
                    and n.value not in ("True", "False"):
                return False
            if isinstance(n, (cst.Call, cst.Attribute, cst.Subscript)):
                return False
        return True

    @staticmethod
    def _holds_return(s: cst.CSTNode) -> bool:
        """A `return` below `s` (the arms of an `if`, the body of a loop), not inside a nested loop or function
        (a return there stays unsupported)."""
        stack = list(_children(s))
        while stack:
            n = stack.pop()
            if isinstance(n, cst.Return):
                return True
            if not isinstance(n, (cst.For, cst.While, cst.FunctionDef, cst.Lambda)):
                stack.extend(_children(n))
        return False

    @contextlib.contextmanager
    def _top_prefix(self, converted: list[Stmt]):
        """While the arms of a top-level `if` are converted as top-level code: the statements before it
        (a `return` in a loop there restores the values defined before, the ones in `top_before`)."""
        saved = self.top_before
        self.top_before = saved + list(converted)
        try:
            yield
        finally:
            self.top_before = saved

    def stmts(self, stmts: list, top: bool) -> list[Stmt]:
        out: list[Stmt] = []
        for i, s in enumerate(stmts):
            if top and isinstance(s, cst.If) and self._const_test(s.test) and self._holds_return(s):
                # a constant `if` whose arm returns early: cuTile Python folds the constant branch first, so
                # the return then stands at the top level; the rest of the kernel follows each arm (one copy
                # per arm) and the return is rewritten as a guard there
                cond = self.expr(s.test)
                pre, self.pending = self.pending, []
                rest = list(stmts[i + 1:])
                if s.orelse is None:
                    other = rest
                elif isinstance(s.orelse, cst.Else):
                    other = arm_then(list(s.orelse.body.body), rest)
                else:  # elif: itself an `if`
                    other = [s.orelse] + rest
                with self._top_prefix(out + pre):
                    arm = tuple(self.stmts(arm_then(list(s.body.body), rest), top=True))
                    other_arm = tuple(self.stmts(other, top=True))
                self.pending = pre
                out.extend(self._flush([If(cond, arm, other_arm, self.pos(s))]))
                return out
            if top and isinstance(s, cst.For) and self._holds_return(s.body):
                out.extend(self._for_with_return(s, self.top_before + out, stmts[i + 1:]))
                return out
            if top and self._is_return_guard(s):
                # `if c: return` at the kernel's top level: the rest of the kernel runs in the else arm
                # (cuTile Rust allows no nested `return`; the normalizer compares both forms, rule N15)
                cond = self.expr(s.test)
                pre, self.pending = self.pending, []
                arm = tuple(self.stmts(_without_final_return(list(s.body.body)), top=False))
                with self._top_prefix(out + pre):
                    rest = tuple(self.stmts(stmts[i + 1:], top=True))
                self.pending = pre
                out.extend(self._flush([If(cond, arm, rest, self.pos(s), returns=True)]))
                return out
            if top and self.split_returning_ifs and isinstance(s, cst.If) and self._holds_return(s):
                # (Triton) an `if` at the top level with a `return` somewhere in its arms (`if last: ...;
                # if done: return`): the rest of the kernel follows each arm that does not end in a return
                # (one copy per arm), and the arms are top-level code, where the returns become guards
                out.extend(self._split_at_returning_if(s, stmts[i + 1:], out))
                return out
            pending = list(self.pending)
            try:
                out.extend(self.stmt(s, last=top and i == len(stmts) - 1))
                if self.llm_units and not self.inlining and (site := self._unit_site(s)) is not None:
                    self.unit_sites.setdefault(self.current, []).append(site)  # a pass may reject it later
            except TranspileError as e:
                if self.inlining:  # inside a helper: the call in the kernel fails as a whole
                    raise
                unit = self._llm_unit(s, e.diagnostic) if self.llm_units else None
                valued = None
                if unit is None and self.llm_units:
                    self.pending = pending  # what the failed conversion left is dropped with it
                    valued = self._with_value_units(s, e.diagnostic, last=top and i == len(stmts) - 1)
                if valued is not None:
                    out.extend(valued)
                elif unit is None:
                    self.recovered.append(e.diagnostic)  # and the next statement is converted (see kernel())
                else:
                    self.pending = pending  # what the failed conversion left is dropped with it
                    out.extend(self._flush([unit]))
        return out

    MAX_VALUE_UNITS = 4  # per statement

    def _with_value_units(self, s, diag: Diagnostic, last: bool) -> list[Stmt] | None:
        """A statement the rules reject in one of its values (a store's tile, a call's argument, an `if`'s or a
        `while`'s condition), converted with each rejected value made a unit of its own: `llm_value_L_C =
        llm_unit(reads...)` before the statement, which reads that name where the value was. None where the
        rejection is not inside such a value (the statement's own form): the diagnostic stands."""
        from ..fallback.units import UNIT_CODES, unit_op
        before = list(self.pending)  # hoisted ahead of this statement: they stay ahead of its units
        units: list[Stmt] = []
        added: list[int] = []  # this call's substitutions only: a nested statement's call must not drop them
        try:
            while len(units) < self.MAX_VALUE_UNITS:
                if not (diag.code in UNIT_CODES or diag.code.startswith("CTR-")):
                    break
                node = self._rejected_value(s, diag)
                if node is None or id(node) in self.value_units:
                    break
                pos = self.pos(node)
                target = f"llm_value_{pos.line}_{pos.col}"
                while target in self.kernel_locals:
                    target += "_"
                reads = [n for n in _read_names(node) if n in self.kernel_locals]
                op = unit_op(f"{target} = {one_line(node, 10_000)}", tuple(Name(n, pos) for n in reads), diag, pos)
                units.append(Assign((target,), dataclasses.replace(op, attrs=op.attrs + self._unit_context(node)),
                                    pos))
                self.value_units[id(node)] = Name(target, pos)
                added.append(id(node))
                self.pending = []
                try:
                    converted = self.stmt(s, last=last)
                except TranspileError as e:
                    diag = e.diagnostic
                    continue
                self.pending = []
                return before + units + converted
            self.pending = before
            return None
        finally:
            for key in added:
                self.value_units.pop(key, None)

    def _rejected_value(self, s, diag: Diagnostic):
        """The value of statement `s` that holds the diagnostic's position: an argument of the call a statement
        line makes (not an array name, an index tuple, a literal), or the condition of an `if`/`while`."""
        if isinstance(s, (cst.If, cst.While)):
            values = [s.test]
        elif isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Expr) \
                and isinstance(s.body[0].value, cst.Call):
            values = [a.value for a in s.body[0].value.args]
        else:
            return None
        at = (diag.pos.line, diag.pos.col - 1)
        for v in values:
            if isinstance(v, (cst.Name, cst.Attribute, cst.Tuple, cst.List, cst.Integer, cst.Float, cst.SimpleString,
                              cst.ConcatenatedString, cst.FormattedString)):
                continue
            where = getattr(self.positions, "exact", self.positions.get)(v)
            if where is not None and (where.start.line, where.start.column) <= at <= (where.end.line, where.end.column):
                return v
        return None

    def _llm_unit(self, s, diag: Diagnostic) -> Assign | None:
        """The placeholder of a rejected assignment `x = ...` / `x: T = ...` / `x op= ...` (one statement on
        its line), for the LLM fallback to complete: it reads the kernel's names the statement reads."""
        from ..fallback.units import UNIT_CODES, unit_op
        site = self._unit_site(s)
        if site is None or not (diag.code in UNIT_CODES or diag.code.startswith("CTR-")):
            return None
        pos = self.pos(s)
        op = unit_op(site["code"], tuple(Name(n, pos) for n in site["reads"]), diag, pos)
        return Assign((site["target"],), dataclasses.replace(op, attrs=op.attrs + site["context"]), pos)

    def _unit_site(self, s) -> dict | None:
        """What a unit needs of an assignment alone on its line with one name as its target (else None)."""
        if not (isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1):
            return None
        small = s.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            target = small.targets[0].target
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)) and isinstance(small.target, cst.Name) and (
                not isinstance(small, cst.AnnAssign) or small.value is not None):
            target = small.target
        else:
            return None
        reads = [n for n in _read_names(small.value) if n in self.kernel_locals]
        if isinstance(small, cst.AugAssign):
            reads = [target.value] + [n for n in reads if n != target.value]
        where = self.positions.get(s)
        span = ((where.start.line, where.start.column + 1), (where.end.line, where.end.column + 1)) if where else None
        return {"target": target.value, "code": node_code(small).strip(), "reads": reads, "span": span,
                "context": self._unit_context(small)}

    def _unit_context(self, node: cst.CSTNode) -> tuple:
        """What an LLM needs to read a unit besides its values: the source of the module's functions it calls
        (and those they call, at most 8) and the module constants it reads."""
        helpers: dict[str, str] = {}
        todo = [node]
        while todo and len(helpers) < 8:
            for n in walk_nodes(todo.pop()):
                if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value not in helpers:
                    name = n.func.value
                    home = self.info.helper_home.get(name)
                    fn = (home.info if home is not None else self.info).helpers.get(name)
                    if fn is not None and name not in self.kernel_locals:
                        helpers[name] = node_code(fn).strip()
                        todo.append(fn)
        consts = [f"{n} = {self.info.consts[n]!r}" for n in _read_names(node)
                  if n in self.info.consts and n not in self.kernel_locals]
        return (("helpers", tuple(helpers.values())), ("constants", tuple(consts)))

    def stmt(self, s, last: bool) -> list[Stmt]:
        out: list[Stmt] = []
        if isinstance(s, cst.SimpleStatementLine):
            for small in s.body:
                out.extend(self.small(small, last=last))
        elif isinstance(s, cst.SimpleStatementSuite):
            for small in s.body:
                out.extend(self.small(small))
        elif isinstance(s, cst.For):
            out.extend(self.for_stmt(s))
        elif isinstance(s, cst.If):
            out.extend(self.if_stmt(s))
        elif isinstance(s, cst.While):
            out.extend(self.while_stmt(s))
        else:
            raise fail("CT100", f"unsupported statement `{type(s).__name__}` in a kernel", self.pos(s))
        return out

    def _flush(self, stmts: list[Stmt]) -> list[Stmt]:
        out = self.pending + stmts
        self.pending = []
        return out

    def small(self, s: cst.BaseSmallStatement, last: bool = False) -> list[Stmt]:
        pos = self.pos(s)
        if isinstance(s, cst.Pass):
            return []
        if isinstance(s, cst.Expr):
            if isinstance(s.value, (cst.SimpleString, cst.ConcatenatedString)):
                return []  # docstring
            v = s.value
            if isinstance(v, cst.Call) and self.dotted(v.func) == f"{CT}.static_assert":
                return self._flush(self._static_assert(v, pos))
            self.procedure_call = (isinstance(v, cst.Call) and isinstance(v.func, cst.Name)
                                   and v.func.value in self.info.helpers and v.func.value not in self.info.aliases)
            helper_call = self.procedure_call
            try:
                e = self.expr(v)
            finally:
                self.procedure_call = False
            if e is PROCEDURE_DONE:
                return self._flush([])  # the helper's statements are pending
            if self.discards_helper_results and helper_call and _pure(e):
                # a Triton helper called for its stores whose returned values are left unused
                # (`_row_backward(...)` returning `dY_row, normed`): its statements are pending, the values dropped
                return self._flush([])
            return self._flush([Eval(e, pos, one_line(s))])
        if isinstance(s, cst.Assign):
            if len(s.targets) != 1:
                raise fail("CT100", "chained assignment is not supported", pos)
            view = self._tiled_view(s.targets[0].target, s.value)
            if view:
                return []
            target = s.targets[0].target
            if isinstance(target, cst.Name) and isinstance(s.value, cst.Name) and s.value.value == "None":
                # `q_pe = None` before an optional value (`if BLOCK_R > 0: q_pe = ct.load(...)`): cuTile Python
                # compiles a read of it only where a later binding replaced the None, so the name has no value
                # until then (a read before it is undefined: CT103; `is None` tests are not supported)
                self.local(target.value, pos)
                return self._flush([])
            if isinstance(target, cst.Name) and target.value in self.tuple_vars:
                raise fail("CT100", f"tuple-valued `{target.value}` is assigned again", pos)
            if isinstance(target, cst.Name) and isinstance(s.value, cst.Tuple) and s.value.elements \
                    and not self.renames and not self.subst and self.assign_counts.get(target.value) == 1:
                return self._tuple_var(target.value, s, pos)
            if isinstance(target, cst.Name) and isinstance(s.value, cst.Tuple) and s.value.elements \
                    and self.renames and self.helper_counts and self.helper_counts[-1].get(target.value) == 1:
                return self._tuple_var(target.value, s, pos)  # the same in an inlined helper (bound once there)
            # the value first: a helper that rebinds its parameter (`scale = scale * C`) reads the argument
            value = self.expr(s.value)
            return self._flush([Assign(self._targets(s.targets[0].target), value, pos, one_line(s))])
        if isinstance(s, cst.AnnAssign) and s.value is not None:
            value = self.expr(s.value)
            return self._flush([Assign(self._targets(s.target), value, pos, one_line(s))])
        if isinstance(s, cst.AugAssign):
            op = AUG.get(type(s.operator))
            if op is None or not isinstance(s.target, cst.Name):
                raise fail("CT100", "unsupported augmented assignment", pos)
            value = self._binop(op, self.expr(s.target), self.expr(s.value), pos)
            return self._flush([Assign((self.local(s.target.value, pos),), value, pos, one_line(s))])
        if isinstance(s, cst.Return) and s.value is None and self.exits and self.exits[-1] == len(self.loops):
            return self._flush([Break(pos)])  # the `break` of an inlined helper's one-trip loop
        if isinstance(s, cst.Return) and s.value is None and last:
            return []
        if isinstance(s, cst.Continue):
            return self._flush([Continue(pos)])
        if isinstance(s, cst.Break):
            if not self.loops:
                raise fail("CT100", "`break` outside a loop", pos)
            if self.loops[-1] is None:  # a `while` is a Tile IR `loop`, which exits early in both
                return self._flush([Break(pos)])
            # cuTile Python's rewrite of `break` in a `for` (Tile IR `for` cannot exit early): a carried flag
            # set here, the iteration ended with `continue`, and every later iteration skipped at its top
            flag = self.loops[-1]
            self.broken.add(flag)
            return self._flush([Assign((flag,), Lit(True, pos), pos), Continue(pos)])
        if isinstance(s, cst.Return) and s.value is None and self.returning and not self.inlining \
                and self.loops and self.loops[-1] == self.returning[-1][1]:
            returned, flag = self.returning[-1]
            self.broken.add(flag)
            return self._flush([Assign((returned,), Lit(True, pos), pos), Assign((flag,), Lit(True, pos), pos),
                                Continue(pos)])
        if isinstance(s, cst.Return):
            raise fail("CT107", "early `return` in a kernel is not supported yet (cuTile Rust only allows "
                       "`return` at the top level; the rewrite changes the Tile IR)", pos)
        raise fail("CT100", f"unsupported statement `{type(s).__name__}` in a kernel", pos)

    def _tuple_var(self, name: str, s: cst.Assign, pos: Pos) -> list[Stmt]:
        """`idx = (a, b + c)`: each computed item assigned to its own local (`idx_1`, ...) where Python evaluates
        it, and `idx` read as the tuple of those locals and of the items read in place (numbers, names bound
        once)."""
        out: list[Stmt] = []
        items = []
        helper = bool(self.renames)  # in an inlined helper: its names, its counts, its locals' prefix
        counts = self.helper_counts[-1] if helper else self.assign_counts
        for i, el in enumerate(s.value.elements):
            if isinstance(el, cst.StarredElement):
                raise fail("CT100", "a starred item in a tuple is not supported", self.pos(el))
            if isinstance(el.value, (cst.Integer, cst.Float)) or (
                    isinstance(el.value, cst.Name) and counts.get(el.value.value, 0) <= 1):
                items.append(self.expr(el.value))  # a number, a parameter or a name bound once: read in place
                continue
            item = f"{name}_{i}"
            if helper and counts.get(item, 0) == 0:
                value = self.expr(el.value)
                item = self.local(item, pos)  # the helper's prefix makes it unique in the kernel
            else:
                if helper or item in self.kernel_locals or item in self.tuple_vars:
                    raise fail("CT100", f"tuple-valued `{name}`: its item's name `{item}` is taken in the "
                               f"{'helper' if helper else 'kernel'}", pos)
                value = self.expr(el.value)
            out += self._flush([Assign((item,), value, pos, "" if out else one_line(s))])
            items.append(Name(item, pos))
        if helper:
            self.renames[-1][1][name] = TupleExpr(tuple(items), pos)  # read through the helper's scope
        else:
            self.tuple_vars[name] = TupleExpr(tuple(items), pos)
        return out

    def _targets(self, t: cst.BaseAssignTargetExpression) -> tuple[str, ...]:
        if isinstance(t, cst.Name):
            return (self.local(t.value, self.pos(t)),)
        if isinstance(t, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) for e in t.elements):
            return tuple(self.local(e.value.value, self.pos(e)) for e in t.elements)
        raise fail("CT100", "assignment target must be a name or a tuple of names", self.pos(t))

    def for_stmt(self, s: cst.For) -> list[Stmt]:
        pos = self.pos(s)
        if s.orelse is not None or s.asynchronous is not None:
            raise fail("CT100", "`for ... else` and `async for` are not supported", pos)
        if not isinstance(s.target, cst.Name):
            raise fail("CT100", "the loop variable must be a plain name", self.pos(s.target))
        it = s.iter
        if not (isinstance(it, cst.Call) and self.dotted(it.func) in ("range", "builtins.range")):
            raise fail("CT100", "only `for ... in range(...)` loops are supported", self.pos(it))
        args = [self.expr(a.value) for a in it.args]
        if not 1 <= len(args) <= 3 or any(a.keyword for a in it.args):
            raise fail("CT100", "range() takes 1 to 3 positional arguments", self.pos(it))
        zero, one = Lit(0, pos), Lit(1, pos)
        start, stop, step = (zero, args[0], one) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else one)
        var = self.local(s.target.value, pos)
        pre = self.pending
        self.pending = []
        flag = self._break_flag()
        self.broken_names.append(flag)
        self.loops.append(flag)
        try:
            body = tuple(self.block(s.body))
        finally:
            self.loops.pop()
        self.pending = pre
        if flag not in self.broken:
            return self._flush([For(var, start, stop, step, body, pos)])
        skip = If(Name(flag, pos), (Continue(pos),), (), pos)
        return self._flush([Assign((flag,), Lit(False, pos), pos), For(var, start, stop, step, (skip,) + body, pos)])

    def _break_flag(self) -> str:
        """The name of a loop's `break` flag. cuTile Python carries the flag after the loop's own values;
        cuTile Rust carries a loop's values in the order of their names, so the flag gets a name after every
        name in the kernel and its helpers: one more leading `z` than any of them has."""
        names = set(self.kernel_locals)
        for fn in self.info.helpers.values():
            names.update(n.value for n in walk_nodes(fn) if isinstance(n, cst.Name))
        run = max((len(n) - len(n.lstrip("z")) for n in names), default=0)
        return "z" * (run + 1) + f"_break{len(self.broken_names)}"

    def while_stmt(self, s: cst.While) -> list[Stmt]:
        pos = self.pos(s)
        if s.orelse is not None:
            raise fail("CT100", "`while ... else` is not supported", pos)
        cond = self.expr(s.test)
        if self.pending:
            raise fail("CT100", "the condition of a `while` cannot call a helper", pos)
        self.loops.append(None)
        try:
            body = tuple(self.block(s.body))
        finally:
            self.loops.pop()
        return [While(cond, body, pos)]

    def if_stmt(self, s: cst.If) -> list[Stmt]:
        pos = self.pos(s)
        cond = self.expr(s.test)
        pre = self.pending
        self.pending = []
        body = tuple(self.block(s.body))
        if isinstance(s.orelse, cst.If):
            orelse = tuple(self.if_stmt(s.orelse))
        elif isinstance(s.orelse, cst.Else):
            orelse = tuple(self.block(s.orelse.body))
        else:
            orelse = ()
        self.pending = pre
        return self._flush([If(cond, body, orelse, pos)])

    # ------------------------------------------------------------------ expressions
    def expr(self, node: cst.BaseExpression) -> Expr:
        if self.value_units and (unit := self.value_units.get(id(node))) is not None:
            return unit  # a value the rules rejected, computed by an LLM unit before the statement
        pos = self.pos(node)
        if isinstance(node, cst.Integer):
            return Lit(int(node.value.replace("_", ""), 0), pos)
        if isinstance(node, cst.Float):
            return Lit(float(node.value.replace("_", "")), pos)
        if isinstance(node, cst.Name):
            if node.value in ("True", "False"):
                return Lit(node.value == "True", pos)
            if node.value in self.tiled_views and not self.subst:
                raise fail("CT101", f"tiled view `{node.value}` used as a value: only its .load(), .store() and "
                           ".num_tiles() are supported", pos)
            for scope in reversed(self.subst):
                if node.value in scope:
                    return scope[node.value]
            if node.value in self.tuple_vars and not self.renames:
                return replace(self.tuple_vars[node.value], pos=pos)
            if node.value in self.kernel_locals and not self.inlining:
                return Name(node.value, pos)  # a parameter or local of the kernel shadows a module-level name
            if node.value in self.info.consts:
                return self._lit(self.info.consts[node.value], pos)
            d = self.info.aliases.get(node.value)
            if d and d.startswith(f"{CT}.") and d[len(CT) + 1:].split(".")[0] in (set(DTYPE_NAMES) | {"PaddingMode", "RoundingMode", "MemoryOrder", "MemoryScope"}):
                return self._ct_value(d, pos)
            return Name(node.value, pos)
        if isinstance(node, cst.Attribute):
            return self.attribute(node)
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, cst.Minus):
                inner = self.expr(node.expression)
                if isinstance(inner, Lit) and not isinstance(inner.value, bool):
                    return Lit(-inner.value, pos)
                return self._op("operator:neg", (inner,), pos)
            if isinstance(node.operator, cst.Not):
                return Op("not", (self.expr(node.expression),), pos, rule="CTR-CMP")
            if isinstance(node.operator, cst.Plus):
                return self.expr(node.expression)
            if isinstance(node.operator, cst.BitInvert):
                return self._op("operator:~", (self.expr(node.expression),), pos)
            raise fail("CT100", "unsupported unary operator", pos)
        if isinstance(node, cst.BinaryOperation):
            op = BINOPS.get(type(node.operator))
            return self._binop(op, self.expr(node.left), self.expr(node.right), pos)
        if isinstance(node, cst.Comparison):
            if len(node.comparisons) != 1:
                raise fail("CT100", "chained comparisons are not supported", pos)
            c = node.comparisons[0]
            op = CMPOPS.get(type(c.operator))
            if op is None:
                raise fail("CT100", f"unsupported comparison operator `{node_code(c.operator).strip()}`", self.pos(c))
            return self._op(f"operator:{op}", (self.expr(node.left), self.expr(c.comparator)), pos, (("pred", op),))
        if isinstance(node, cst.BooleanOperation):
            kind = "and" if isinstance(node.operator, cst.And) else "or"
            return Op(kind, (self.expr(node.left), self.expr(node.right)), pos, rule="CTR-CMP")
        if isinstance(node, cst.IfExp):
            return Op("ifexp", (self.expr(node.test), self.expr(node.body), self.expr(node.orelse)), pos)
        if isinstance(node, (cst.Tuple, cst.List)):
            return TupleExpr(tuple(self.expr(e.value) for e in node.elements), pos)
        if isinstance(node, cst.Call):
            return self.call(node)
        if isinstance(node, cst.Subscript):
            return self.subscript(node)
        if isinstance(node, cst.SimpleString) and node.evaluated_value in ("C", "F"):
            return Lit(node.evaluated_value, pos)  # memory order of ct.load(order=...)
        if isinstance(node, cst.SimpleString):
            raise fail("CT100", "string values are not supported in kernels", pos)
        raise fail("CT100", f"unsupported expression `{type(node).__name__}`", pos)

    def _lit(self, v: object, pos: Pos) -> Expr:
        if isinstance(v, (int, float, bool)):
            return Lit(v, pos)
        raise fail("CT100", "module constant of unsupported type", pos)

    def _binop(self, op: str | None, a: Expr, b: Expr, pos: Pos) -> Expr:
        if op is None:
            raise fail("CT100", "unsupported binary operator", pos)
        if f"operator:{op}" not in self.rules.by_source:
            raise fail("CT100", f"operator `{op}` is not supported yet", pos)
        return self._op(f"operator:{op}", (a, b), pos)

    def _op(self, source: str, args: tuple, pos: Pos, attrs: tuple = ()) -> Op:
        rule = self.rules.lookup(source)
        if rule is None:
            raise fail("CT101", f"no rule for `{source}`", pos)
        self.rules_used.add(rule.id)
        return Op(rule.op, args, pos, tuple(attrs), rule.id)

    def attribute(self, node: cst.Attribute) -> Expr:
        pos = self.pos(node)
        d = self.dotted(node)
        if d and d.startswith(f"{CT}."):
            return self._ct_value(d, pos)
        if d in MATH_CONSTS:
            return Lit(MATH_CONSTS[d], pos)
        if d and d.startswith("numpy.") and d[len("numpy."):] in NUMPY_DTYPES:
            return Op("dtype", (), pos, (("dtype", NUMPY_DTYPES[d[len("numpy."):]]),))
        if d and d.startswith("torch.") and d[len("torch."):] in TORCH_DTYPES:
            return Op("dtype", (), pos, (("dtype", TORCH_DTYPES[d[len("torch."):]]),))
        if node.attr.value == "dtype":
            return Op("dtype_of", (self.expr(node.value),), pos)
        if node.attr.value == "shape":
            return Op("shape_of", (self.expr(node.value),), pos)
        raise fail("CT100", f"unsupported attribute `.{node.attr.value}`", pos)

    def _ct_value(self, d: str, pos: Pos) -> Expr:
        """A cuda.tile dtype or enum member used as a value."""
        leaf = d[len(CT) + 1:]
        if leaf in DTYPE_NAMES:
            return Op("dtype", (), pos, (("dtype", DTYPE_NAMES[leaf]),))
        if leaf.startswith("RoundingMode.") and leaf.split(".")[1] in ROUNDING:
            return Op("enum", (), pos, (("value", "rounding::" + ROUNDING[leaf.split(".")[1]]),))
        if leaf.startswith("PaddingMode.") and leaf.split(".")[1] in PADDING:
            return Op("enum", (), pos, (("value", "padding::" + PADDING[leaf.split(".")[1]]),))
        if leaf.startswith("MemoryOrder.") and leaf.split(".")[1] in MEMORY_ORDER:
            return Op("enum", (), pos, (("value", "ordering::" + MEMORY_ORDER[leaf.split(".")[1]]),))
        if leaf.startswith("MemoryScope.") and leaf.split(".")[1] in MEMORY_SCOPE:
            return Op("enum", (), pos, (("value", "scope::" + MEMORY_SCOPE[leaf.split(".")[1]]),))
        raise fail("CT101", f"`{d}` is not supported", pos)

    def _array_list_param(self, node: cst.BaseExpression) -> bool:
        """`node` names a parameter of the kernel (not a constant) in the kernel's own body: a list of arrays
        where it is measured with `len` or indexed (cuTile Python's only non-tile parameters with those)."""
        return isinstance(node, cst.Name) and not self.inlining and not self.subst \
            and node.value in getattr(self, "array_params", set())

    def subscript(self, node: cst.Subscript) -> Expr:
        pos = self.pos(node)
        if self._array_list_param(node.value):
            raise fail("CT100", _list_param_refusal(node.value.value, "index"), pos)
        base = self.expr(node.value)
        items = []
        for el in node.slice:
            s = el.slice
            if isinstance(s, cst.Slice) and s.lower is None and s.upper is None and s.step is None:
                items.append(":")
            elif isinstance(s, cst.Index) and isinstance(s.value, cst.Name) and s.value.value == "None":
                items.append("None")
            elif isinstance(s, cst.Index) and isinstance(base, Op) and base.op == "shape_of" and (
                    isinstance(s.value, cst.Integer) or isinstance(s.value, cst.UnaryOperation)
                    and isinstance(s.value.operator, cst.Minus) and isinstance(s.value.expression, cst.Integer)):
                v = s.value  # `x.shape[-1]` counts from the last dimension (the handler resolves it)
                dim = int(v.value) if isinstance(v, cst.Integer) else -int(v.expression.value)
                return Op("array_dim", (base.args[0],), pos, (("dim", dim),))
            elif isinstance(s, cst.Index) and isinstance(base, Op) and base.op == "shape_of" \
                    and isinstance(dim := self._const_index(s.value), int):
                # `x.shape[dim]` of a constant `dim` (a helper's constexpr argument, a constexpr local)
                return Op("array_dim", (base.args[0],), pos, (("dim", dim),))
            else:
                raise fail("CT100", "only `[:, None]`-style tile indexing is supported", self.pos(el))
        return Op("index_none", (base,), pos, (("pattern", tuple(items)),), rule="CTR-RESHAPE")

    def _const_index(self, node: cst.BaseExpression) -> int | None:
        """An index that is an integer when the kernel compiles (a literal once names are bound), else None."""
        try:
            v = self.expr(node)
        except TranspileError:
            return None
        return v.value if isinstance(v, Lit) and type(v.value) is int else None

    def _tiled_view(self, target, value) -> bool:
        """Records `v = a.tiled_view(tile_shape, padding_mode=...)` (no statement: the view is an alias)."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "tiled_view"):
            return False
        pos = self.pos(value)
        if not isinstance(target, cst.Name) or self.renames or self.subst:
            raise fail("CT101", "a tiled view is supported as a name assigned in the kernel body itself", pos)
        if target.value in self.tiled_views:
            raise fail("CT100", f"tiled view `{target.value}` is assigned twice", pos)
        self.tiled_views[target.value] = self._tiled_view_parts(value)
        return True

    def _tiled_view_parts(self, value: cst.Call) -> tuple:
        """The array, tile shape and padding argument of `a.tiled_view(tile_shape, padding_mode=...)`."""
        pos = self.pos(value)
        shape, padding = None, None
        for i, a in enumerate(value.args):
            key = a.keyword.value if a.keyword else ("tile_shape" if i == 0 else None)
            if a.star or key not in ("tile_shape", "padding_mode", "traversal_steps"):
                raise fail("CT101", "`tiled_view` takes tile_shape and padding_mode= here", self.pos(a))
            if key == "traversal_steps":
                if not (isinstance(a.value, cst.Name) and a.value.value == "None"):
                    raise fail("CT101", "`traversal_steps=` of a tiled view is not supported (cuTile Rust 0.5.0 "
                               "partitions have no step)", self.pos(a))
            elif key == "tile_shape":
                shape = a.value if isinstance(a.value, (cst.Tuple, cst.List)) else \
                    cst.Tuple([cst.Element(a.value)])
            else:
                padding = cst.Arg(a.value, keyword=cst.Name("padding_mode"))
        if shape is None:
            raise fail("CT100", "`tiled_view` needs a tile shape", pos)
        return (value.func.value, shape, padding)

    def _view_call(self, node: cst.Call, view: tuple, method: str, pos: Pos) -> Expr:
        """`v.load(index, ...)`, `v.store(index, tile, ...)`, `v.num_tiles(axis)`, `v.atomic_store_add(index,
        tile)` of a tiled view."""
        array, shape, padding = view
        keys = {"load": ("latency", "allow_tma", "check_bounds"), "store": ("latency", "allow_tma", "check_bounds"),
                "num_tiles": (), "atomic_store_add": ()}
        if method not in keys:
            raise fail("CT101", f"method `.{method}()` of a tiled view is not supported", pos)
        positional, keywords = [], []
        for a in node.args:
            if a.star:
                raise fail("CT100", "star arguments are not supported", self.pos(a))
            if a.keyword is None:
                positional.append(a)
            elif a.keyword.value not in keys[method]:
                raise fail("CT101", f"keyword `{a.keyword.value}` of a tiled view's `{method}` is not supported",
                           self.pos(a))
            elif a.keyword.value == "check_bounds":
                if not (isinstance(a.value, cst.Name) and a.value.value == "True"):
                    raise fail("CT101", "`check_bounds=False` on a tiled view is not supported (cuTile Rust 0.5.0 "
                               "views are always bounds-checked)", self.pos(a))
            else:
                keywords.append(a)
        want = {"load": 1, "store": 2, "num_tiles": 1, "atomic_store_add": 2}[method]
        if len(positional) != want:
            raise fail("CT100", f"a tiled view's `{method}` takes {want} positional argument"
                       f"{'s' if want > 1 else ''}", pos)
        rule = self.rules.lookup(f"{CT}.TiledView.{method}" if method.startswith("atomic_") else f"{CT}.{method}")
        args: list = [cst.Arg(array)] + positional
        if method.startswith("atomic_"):  # the view's tile shape: the update's, as the store's tile has it
            args += [cst.Arg(shape)]
        elif method == "load":
            args += [cst.Arg(shape)] + ([padding] if padding is not None else []) + keywords
        elif method == "num_tiles":
            args += [cst.Arg(shape)]
        else:
            args += keywords
        return self._rule_call(rule, args, pos)

    def module_helper(self, node: cst.Call) -> Expr | None:
        """`tlx.program_id(0)`: a helper of a module of the package imported by name (`from pkg import tlx`,
        `from . import utils as u`), inlined as an imported helper is; None for other calls."""
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.value.value in self.info.module_aliases:
            key = f"{func.value.value}.{func.attr.value}"
            if key in self.info.helpers:
                return self.inline_helper(self.info.helpers[key], node, self.info.helper_home[key])
        return None

    def call(self, node: cst.Call) -> Expr:
        pos = self.pos(node)
        func = node.func
        if (inlined := self.module_helper(node)) is not None:
            return inlined
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.value.value in self.tiled_views:
            return self._view_call(node, self.tiled_views[func.value.value], func.attr.value, pos)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) \
                and isinstance(func.value.func, cst.Attribute) and func.value.func.attr.value == "tiled_view":
            # `a.tiled_view(shape).store(...)`: a view used where it is made
            return self._view_call(node, self._tiled_view_parts(func.value), func.attr.value, pos)
        fd = self.dotted(func) if isinstance(func, cst.Attribute) else None
        # the modules imported, also where only a member was (`from triton import language as tl`: triton)
        modules = set(self.info.aliases.values()) | {v.split(".")[0] for v in self.info.aliases.values()} \
            | {"math", "builtins"}
        if isinstance(func, cst.Attribute) and (fd is None or (fd.split(".")[0] not in modules
                                                                and not fd.startswith(f"{CT}."))):
            # method call on a value: t.astype(...), t.reshape(...)
            src = f"method:{func.attr.value}"
            rule = self.rules.lookup(src)
            if rule is None:
                raise fail("CT101", f"method `.{func.attr.value}()` is not supported", pos)
            receiver = self.expr(func.value)
            return self._rule_call(rule, [receiver] + [a for a in node.args], pos, receiver_given=True)
        d = self.dotted(func)
        if d in ("float", "builtins.float") and len(node.args) == 1:
            v = self._eval_const(node.args[0].value)
            if isinstance(v, str) and v.strip().lower() in ("inf", "+inf", "-inf", "nan", "infinity", "-infinity"):
                return Lit(float(v), pos)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return Lit(float(v), pos)
        if isinstance(func, cst.Name) and func.value in self.info.helpers and func.value not in self.info.aliases:
            return self.inline_helper(self.info.helpers[func.value], node, self.info.helper_home.get(func.value))
        if isinstance(func, cst.Name) and func.value in self.info.kernels and func.value not in self.info.aliases:
            if func.value == self.current:
                raise fail("CT110", f"kernel `{func.value}` calls itself: recursion is not supported in cuTile "
                           "kernels", pos)
            raise fail("CT101", f"call to the kernel `{func.value}` from a kernel or helper: kernels cannot be "
                       "called, only launched (move the shared code into a helper function)", pos)
        if d and d.startswith(f"{CT}.") and d[len(CT) + 1:] in DTYPE_NAMES and len(node.args) == 1 \
                and node.args[0].keyword is None and not node.args[0].star:
            # `ct.float32(x)`: a dtype called on a value is `ct.astype(x, ct.float32)` in cuTile Python
            rule = self.rules.lookup(f"{CT}.astype")
            return self._rule_call(rule, [self.expr(node.args[0].value), self._ct_value(d, pos)], pos)
        fn = self.rules.functional.get(d or "")
        if fn is not None:
            return self._functional(d, fn, node, pos)
        if d in ("len", "builtins.len") and len(node.args) == 1 and isinstance(node.args[0].value, cst.Attribute) \
                and node.args[0].value.attr.value == "shape" and node.args[0].keyword is None:
            # `len(x.shape)`: the rank, a compile-time int in cuTile Python
            return Op("shape_rank", (self.expr(node.args[0].value.value),), pos)
        if d in ("len", "builtins.len") and len(node.args) == 1 and self._array_list_param(node.args[0].value):
            raise fail("CT100", _list_param_refusal(node.args[0].value.value, "len"), pos)
        if d in ("min", "max", "builtins.min", "builtins.max"):
            rule = self.rules.lookup(f"{CT}.{'minimum' if d.endswith('min') else 'maximum'}")
            return self._rule_call(rule, list(node.args), pos)
        rule = self.rules.lookup(d or "")
        if rule is None:
            if d and d.startswith(f"{CT}.") and not cuda_tile_has(d):
                # a name the cuTile Python release the ports are checked against does not define: the kernel
                # fails there too (AttributeError when it compiles), so no port could be proved equal to it
                raise fail("CT101", f"call to `{d}` has no rule: cuda.tile {CUDA_TILE_VERSION} has no `{d[len(CT) + 1:]}`, "
                           "so cuTile Python cannot compile this kernel either", pos)
            raise fail("CT101", f"call to `{d or node_code(node.func)}` has no rule (unsupported API or unknown function)", pos)
        return self._rule_call(rule, list(node.args), pos)

    def _functional(self, name: str, fn: dict, node: cst.Call, pos: Pos) -> Expr:
        """`ct.add(x, y)` is `x + y` (rules: [functional]); a mode keyword at its default is the operator."""
        args: list[Expr] = []
        modes: list[tuple[str, Expr]] = []
        for a in node.args:
            if a.star:
                raise fail("CT100", "star arguments are not supported", self.pos(a))
            if a.keyword is None:
                if modes:
                    raise fail("CT100", "positional argument after a keyword argument", self.pos(a))
                args.append(self.expr(a.value))
                continue
            key = a.keyword.value
            if key not in fn["keywords"]:
                raise fail("CT101", f"keyword `{key}` of `{name}` is not supported", self.pos(a))
            v = a.value
            if isinstance(v, cst.Name) and v.value == "None":
                continue  # rounding_mode=None: the default
            modes.append((key, self.expr(v)))
        if len(args) != fn["arity"]:
            raise fail("CT100", f"`{name}` takes {fn['arity']} positional argument{'s' if fn['arity'] > 1 else ''}, "
                       f"not {len(args)}", pos)
        op = fn["operator"]
        if fn["arity"] == 1:
            e = self._op(f"operator:{op}", (args[0],), pos)
        elif op in CMPOPS.values():
            e = self._op(f"operator:{op}", (args[0], args[1]), pos, (("pred", op),))
        else:
            e = self._binop(op, args[0], args[1], pos)
        if modes:
            e = Op(e.op, e.args, e.pos, tuple(sorted(e.attrs + tuple(modes), key=lambda kv: kv[0])), e.rule)
        return e

    def _rule_call(self, rule, args: list, pos: Pos, receiver_given: bool = False) -> Op:
        self.rules_used.add(rule.id)
        values: dict[str, Expr] = {}
        params = list(rule.params)
        pi = 0
        for a in args:
            if isinstance(a, cst.Arg):
                if a.star:
                    raise fail("CT100", "star arguments are not supported", self.pos(a))
                if a.keyword is not None:
                    key = a.keyword.value
                    if key not in params and rule.default(key) is None:
                        raise fail(rule.id, f"keyword `{key}` of `{rule.source[0]}` is not supported", self.pos(a))
                    values[key] = self.expr(a.value)
                    continue
                value = self.expr(a.value)
            else:
                value = a
            if pi >= len(params):
                if rule.op in ("permute", "transpose"):
                    values.setdefault("axes_extra", TupleExpr((), pos))
                    values["axes_extra"] = TupleExpr(values["axes_extra"].items + (value,), pos)
                    continue
                raise fail(rule.id, f"too many arguments for `{rule.source[0]}`", pos)
            values[params[pi]] = value
            pi += 1
        for key in ("shape", "size"):
            if key in values and key in params:
                self._check_tile_dims(values[key], rule)
        ordered = tuple(values.get(p) for p in params)
        attrs = tuple(sorted((k, v) for k, v in values.items() if k not in params))
        return Op(rule.op, ordered, pos, attrs, rule.id)

    def _check_tile_dims(self, e: Expr, rule) -> None:
        """Literal tile dimensions must be positive powers of two (cuTile's tile shapes)."""
        for it in (e.items if isinstance(e, TupleExpr) else (e,)):
            if isinstance(it, Lit) and isinstance(it.value, int) and not isinstance(it.value, bool):
                v = it.value
                if v <= 0 or v & (v - 1) or v > MAX_TILE_DIM:
                    why = "not positive" if v <= 0 else ("above 2**30" if v > MAX_TILE_DIM else "not a power of two")
                    raise fail("CT105", f"tile dimension {v} of `{rule.source[0]}` is {why}: tile dimensions "
                               "must be positive powers of two", it.pos)

    def inline_helper(self, fn: cst.FunctionDef, call: cst.Call, home: "Converter | None" = None) -> Expr:
        """Inline a plain helper: its assignments become statements with renamed locals. A helper of another
        module (`home`) reads that module's names; its arguments are read here first."""
        pos = self.pos(call)
        as_stmt, self.procedure_call = self.procedure_call, False  # the arguments are values
        if home is not None and home is not self:
            bound = [(a.keyword.value if a.keyword else None, self.expr(a.value)) for a in call.args]
            saved = (self.info, self.positions)
            self.info, self.positions = home.info, home.positions
            try:
                return self._inline(fn, call, bound, pos, as_stmt)
            finally:
                self.info, self.positions = saved
        return self._inline(fn, call, None, pos, as_stmt)

    def _inline(self, fn: cst.FunctionDef, call: cst.Call, bound: list | None, pos: Pos, as_stmt: bool) -> Expr:
        name = fn.name.value
        # a helper is itself by its module and name: a library's `tanh` calling libdevice's `tanh` (another module's
        # helper of the same name, rules/triton_libdevice.py) is no recursion
        helper_key = (self.info.path, name)
        keys = self.__dict__.setdefault("inlining_keys", [])
        if helper_key in keys:
            cycle = self.inlining[keys.index(helper_key):] + [name]
            how = "calls itself" if len(cycle) == 2 else f"calls itself through {' -> '.join(cycle)}"
            raise fail("CT110", f"helper `{name}` {how}: recursion is not supported in cuTile kernels (helpers "
                       "are inlined)", pos)
        self.inline_counter += 1
        prefix = f"_{fn.name.value.lstrip('_')}{self.inline_counter}_"
        names = [p.name.value for p in fn.params.params]
        if len(call.args) > len(names) or any(a.keyword and a.keyword.value not in names for a in call.args):
            raise fail("CT100", f"cannot match the arguments of helper `{fn.name.value}`", pos)
        bind: dict[str, Expr] = {}
        for i, a in enumerate(call.args):
            key = a.keyword.value if a.keyword else names[i]
            bind[key] = bound[i][1] if bound is not None else self.expr(a.value)
        for p in fn.params.params:
            if p.name.value not in bind:
                if p.default is None:
                    raise fail("CT100", f"missing argument `{p.name.value}` for helper `{fn.name.value}`", pos)
                bind[p.name.value] = self.expr(p.default)
        stmts = [st for st in block_statements(fn.body)  # `def exp(x): return tl.exp(x)` is one statement line
                 if not (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1
                         and isinstance(st.body[0], cst.Expr) and isinstance(st.body[0].value, cst.SimpleString))]
        stmts = self._procedure_returns(stmts)
        last = stmts[-1] if stmts else None
        ret = last.body[-1] if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 else None
        returns = sum(isinstance(n, cst.Return) for st in stmts for n in walk_nodes(st))
        procedure = returns == 0 or (returns == 1 and isinstance(ret, cst.Return) and ret.value is None)
        # a procedure that returns early (bare `return`s in `if` arms): cuTile Python runs a helper's body in a
        # loop that runs once, each `return` a `break` of it; the port writes the same loop (`loop { ... }`)
        exits = not procedure and not self.helper_returns_rewritten and all(n.value is None for st in stmts for n in walk_nodes(st) if isinstance(n, cst.Return))
        if exits:
            self._check_exits(fn, stmts, as_stmt, pos)
            if isinstance(ret, cst.Return):
                stmts = stmts[:-1]
            ret = None
        if procedure:
            # a procedure (stores, no value): its statements are inlined where it is called as a statement
            if not as_stmt:
                raise fail("CT100", f"helper `{fn.name.value}` returns no value, but its result is used", pos)
            if ret is not None and isinstance(ret, cst.Return):
                stmts = stmts[:-1]
            ret = None
        self.subst.append(bind)
        self.renames.append((prefix, bind))
        self.inlining.append(name)
        keys.append(helper_key)
        self.helper_counts.append(_assign_counts(fn))
        try:
            final = returns == 1 and isinstance(ret, cst.Return) and ret.value is not None
            if exits:
                pre, self.pending = self.pending, []
                copies = []
                for n in sorted(set(names) & _assigned_names(stmts), key=names.index):
                    arg = bind[n]
                    copies.extend(self._copy_arg(n, arg, pos))
                self.exits.append(len(self.loops))
                try:
                    body = self.stmts(stmts, top=False)
                finally:
                    self.exits.pop()
                self.pending = pre + copies + [While(Lit(True, pos), tuple(body) + (Break(pos),), pos, once=True)]
                return PROCEDURE_DONE
            if not procedure and not final and not self.helper_returns_rewritten:
                raise fail("CT107", f"helper `{fn.name.value}` returns early or from an `if`; only one final "
                           "`return` is supported (cuTile Python encodes such a helper as a one-trip loop, which "
                           "the port does not reproduce)", pos)
            if not procedure and not final:
                # returns in `if` arms (or a final `if` whose arms return): one result, assigned on every path
                used = {n.value for st in stmts for n in walk_nodes(st) if isinstance(n, cst.Name)}
                try:
                    stmts = single_return(stmts, self._decide_now, used, self._fall_through_end(fn, pos))
                except ReturnShapeError as err:
                    raise fail("CT107", f"helper `{fn.name.value}` cannot be inlined: {err} (a helper's paths must "
                               "each end in `return <expr>`, outside loops)", pos) from None
                ret = stmts[-1].body[-1]
            pre, self.pending = self.pending, []
            # a parameter the helper assigns (`A = A + c` in a loop) is a local from the entry on, holding
            # the argument: a loop then carries it like any other local
            copies = []
            for n in sorted(set(names) & _assigned_names(stmts), key=names.index):
                arg = bind[n]  # before `local` rebinds the name to the helper's local
                copies.extend(self._copy_arg(n, arg, pos))
            body = self.stmts(stmts[:-1] if ret is not None else stmts, top=False)
            self.pending = pre + copies + body
            result = self._helper_result(ret.value) if ret is not None else PROCEDURE_DONE
        finally:
            self.subst.pop()
            self.renames.pop()
            self.inlining.pop()
            keys.pop()
            self.helper_counts.pop()
        return result

    def _helper_result(self, value: cst.BaseExpression):
        """The value an inlined helper returns, converted while its names are bound."""
        return self.expr(value)

    def _static_assert(self, call: cst.Call, pos: Pos) -> list[Stmt]:
        """`ct.static_assert(cond, message)`: cuTile Python evaluates `cond` on the constants when it compiles
        a specialization and refuses one where it is false; it emits no IR. Here it is a constant `if` whose
        else arm is that refusal: a variant where the condition holds folds it away, one where it fails is
        dropped (the launcher refuses its constants), and a condition that always fails refuses the kernel."""
        self.rules_used.add("CTR-STATIC-ASSERT")
        args = list(call.args)
        if not args or len(args) > 2 or any(a.keyword is not None or a.star for a in args):
            raise fail("CTR-STATIC-ASSERT", "ct.static_assert takes a condition and an optional message, both "
                       "positional (as cuTile Python requires)", pos)
        test = args[0].value
        if not self._const_test(test):
            raise fail("CTR-STATIC-ASSERT", "the condition of ct.static_assert must be an expression over constants "
                       "(ct.Constant parameters, module constants, literals): cuTile Python evaluates it at compile "
                       "time", self.pos(test))
        message = args[1].value if len(args) == 2 else None
        text = node_code(message).strip() if message is not None else node_code(test).strip()
        now = self._static_value(test)  # over module constants and literals only: decided here
        cond = Lit(bool(now), pos) if now is not None else self.expr(test)
        refuse = Eval(Op("compile_error", (), pos, (("text", text), ("kind", "static_assert"), ("cond", cond)),
                         "CTR-STATIC-ASSERT"), pos)
        return [If(cond, (), (refuse,), pos)]

    def _static_value(self, node: cst.BaseExpression) -> object | None:
        """The value of an expression over module constants and literals (comparisons, `and`/`or`/`not`,
        integer arithmetic with `%`), else None."""
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            a, b = self._static_value(node.left), self._static_value(node.comparisons[0].comparator)
            fn = _COMPARE.get(type(node.comparisons[0].operator))
            return None if a is None or b is None or fn is None else fn(a, b)
        if isinstance(node, cst.BooleanOperation):
            a, b = self._static_value(node.left), self._static_value(node.right)
            if a is None or b is None:
                return None
            return (a and b) if isinstance(node.operator, cst.And) else (a or b)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            v = self._static_value(node.expression)
            return None if v is None else not v
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
            a, b = self._static_value(node.left), self._static_value(node.right)
            ok = all(isinstance(v, int) and not isinstance(v, bool) for v in (a, b))
            return a % b if ok and b != 0 else None
        if isinstance(node, cst.BinaryOperation):
            a, b = self._static_value(node.left), self._static_value(node.right)
            if a is None or b is None:
                return None
            return self._eval_const(node)
        return self._eval_const(node)

    def _copy_arg(self, name: str, arg: Expr, pos: Pos) -> list:
        """A helper parameter the helper assigns: a local holding the argument from the entry on."""
        return [Assign((self.local(name, pos),), arg, pos)]

    def _procedure_returns(self, stmts: list) -> list:
        """A frontend's rewrite of a helper's returns before it is inlined (none here; see the Triton one)."""
        return stmts

    def _check_exits(self, fn: cst.FunctionDef, stmts: list, as_stmt: bool, pos: Pos) -> None:
        """A helper whose bare `return`s become `break`s of a one-trip loop: called as a statement, outside any
        loop and any other such helper, its returns only in `if` arms whose tests are not constant."""
        name = fn.name.value
        if not as_stmt:
            raise fail("CT100", f"helper `{name}` returns no value, but its result is used", pos)
        if self.loops or self.exits:
            raise fail("CT107", f"helper `{name}` returns early and is called in a loop or in another helper that "
                       "returns early (cuTile Python moves its loads out of the enclosing loops too; the port only "
                       "does that for a call outside loops)", pos)
        for st in stmts:
            for n in walk_nodes(st):
                if isinstance(n, (cst.For, cst.While, cst.With)) and self._holds_return(n):
                    raise fail("CT107", f"helper `{name}` returns from inside a loop (not supported)", self.pos(n))
                if isinstance(n, cst.If) and self._const_test(n.test) and any(
                        self._holds_return(b) for b in (n.body, n.orelse) if b is not None):
                    raise fail("CT107", f"helper `{name}` returns early under a constant test (not supported; "
                               "return under a runtime test)", self.pos(n))

    def local(self, name: str, pos: Pos) -> str:
        """The model name of an assigned Python name: locals of an inlined helper get a unique prefix."""
        if not self.renames:
            return name
        prefix, bind = self.renames[-1]
        bind[name] = Name(prefix + name, pos)
        return prefix + name


def _list_param_refusal(name: str, how: str) -> str:
    """Why a list-of-arrays parameter (`len(As)`, `As[g]`) has no port."""
    what = f"`len({name})`" if how == "len" else f"indexing `{name}`"
    return (f"{what}: `{name}` is a list of arrays, which is not supported: cuTile Python passes it as a device "
            "table of int64 array descriptors (data pointer, shape, strides) and its length, and reads an element "
            "in the kernel (a load of its descriptor, int_to_ptr, make_tensor_view); the port's C ABI and Python "
            "wrapper pass each array as its own tensor and would have to build that table on the device")


def _assign_counts(fn: cst.FunctionDef) -> dict[str, int]:
    """How many times each name is bound in a function (a loop's target and an augmented assignment count 2)."""
    out: dict[str, int] = {}
    for node in walk_nodes(fn.body):
        targets, times = [], 1
        if isinstance(node, cst.AssignTarget):
            targets = [node.target]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
            targets, times = [node.target], 2
        while targets:
            t = targets.pop()
            if isinstance(t, cst.Name):
                out[t.value] = out.get(t.value, 0) + times
            elif isinstance(t, (cst.Tuple, cst.List)):
                targets.extend(e.value for e in t.elements)
    return out


def _assigned_names(stmts: list) -> set[str]:
    """The names a block of statements binds (assignments, augmented assignments, `for` targets)."""
    out: set[str] = set()
    for st in stmts:
        for node in walk_nodes(st):
            targets = []
            if isinstance(node, cst.AssignTarget):
                targets = [node.target]
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
                targets = [node.target]
            while targets:
                t = targets.pop()
                if isinstance(t, cst.Name):
                    out.add(t.value)
                elif isinstance(t, (cst.Tuple, cst.List)):
                    targets.extend(e.value for e in t.elements)
    return out


def _returned_flag(break_flag: str) -> str:
    """cuTile Python carries `returned` before the break flag: its name sorts just before the flag's."""
    return break_flag.replace("_break", "_areturned")


def _ends_in_return(stmts: list) -> bool:
    """The block's last statement is a bare `return`."""
    last = stmts[-1] if stmts else None
    return (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)
            and last.body[-1].value is None)


def _without_final_return(stmts: list) -> list:
    """The block without its final bare `return`."""
    last = stmts[-1]
    return stmts[:-1] + ([last.with_changes(body=last.body[:-1])] if len(last.body) > 1 else [])


def arm_then(arm: list, rest: list) -> list:
    """What runs when an arm of a folded constant `if` is taken: the arm, then the rest of the kernel, unless
    the arm ends in a `return` (the kernel ends there)."""
    return _without_final_return(arm) if _ends_in_return(arm) else arm + rest


def _restore_at_returns(stmts, returned: str, saves: dict[str, str], pos) -> tuple:
    """Before each `returned = True` (a return site), the carried names get their values at the top of the
    iteration back (cuTile Python's rewrite breaks with the loop's block arguments)."""
    out = []
    for st in stmts:
        if isinstance(st, Assign) and st.targets == (returned,):
            out += [Assign((n,), Name(saved, pos), pos) for n, saved in saves.items()]
        if isinstance(st, If):
            st = replace(st, body=_restore_at_returns(st.body, returned, saves, pos),
                         orelse=_restore_at_returns(st.orelse, returned, saves, pos))
        out.append(st)
    return tuple(out)


def name_text(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{name_text(node.value)}.{node.attr.value}"
    return ""


def _read_names(node: cst.CSTNode) -> list[str]:
    """The names an expression reads, in order, once each (an attribute's `.attr` and a keyword are not reads)."""
    nodes = list(walk_nodes(node))
    skip = {id(n.attr) for n in nodes if isinstance(n, cst.Attribute)}
    skip |= {id(n.keyword) for n in nodes if isinstance(n, cst.Arg) and n.keyword is not None}
    return list(dict.fromkeys(n.value for n in nodes if isinstance(n, cst.Name) and id(n) not in skip))


def one_line(node: cst.CSTNode, limit: int = 100) -> str:
    """A statement's source on one line (whitespace collapsed), cut at `limit` characters: a comment above
    its Rust."""
    text = " ".join(node_code(node).split())
    return text if len(text) <= limit else text[:limit - 2] + " …"


def node_code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


class _PositionTable:
    """What LibCST's PositionProvider computes (node -> syntactic CodeRange), without MetadataWrapper's
    extra visit of the whole tree: that visit was a quarter of a cold run."""
    def __init__(self) -> None:
        self._computed: dict = {}


class _ConfigNames(Mapping):
    """A module's configuration names as `config_value` reads them: assigned here before, or imported from
    another module of the package (read on first use)."""
    def __init__(self, conv: "Converter") -> None:
        self.conv = conv

    def __getitem__(self, name: str) -> object:
        value = self.conv.config_of(name)
        if value is UNDECIDED:
            raise KeyError(name)
        return value

    def __iter__(self):
        return iter(getattr(self.conv, "config_names", {}))

    def __len__(self) -> int:
        return len(getattr(self.conv, "config_names", {}))


def _positions(module: cst.Module) -> dict:
    table = _PositionTable()
    module._codegen(PositionProvidingCodegenState(default_indent=module.default_indent,
                                                  default_newline=module.default_newline, provider=table))
    return table._computed


def _bound_names(stmts, out: dict[str, list]) -> None:
    """Names the statements bind in their scope (not inside nested functions, classes or lambdas): name ->
    the values assigned to it (None where the binding is not an assignment of a value)."""
    for st in stmts:
        if isinstance(st, (cst.FunctionDef, cst.ClassDef)):
            out.setdefault(st.name.value, []).append(None)
            continue
        if isinstance(st, cst.SimpleStatementLine):
            for small in st.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        _bind_target(t.target, small.value, out)
                elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                    _bind_target(small.target, None, out)
                elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    for a in small.names:
                        local = a.asname.name.value if a.asname else name_text(a.name).split(".")[0]
                        out.setdefault(local, []).append(None)
            continue
        if isinstance(st, cst.For):
            _bind_target(st.target, None, out)
        if isinstance(st, cst.With):
            for item in st.items:
                if item.asname is not None:
                    _bind_target(item.asname.name, None, out)
        for block in (getattr(st, "body", None), getattr(st, "orelse", None), getattr(st, "finalbody", None)):
            if isinstance(block, cst.If):  # elif
                _bound_names([block], out)
                continue
            inner = getattr(block, "body", None)  # an IndentedBlock's statements; Else/Finally hold a block
            if isinstance(inner, cst.BaseSuite):
                inner = inner.body
            if isinstance(inner, (list, tuple)):
                _bound_names(inner, out)
        for handler in getattr(st, "handlers", ()) or ():
            _bound_names(handler.body.body, out)


def _bind_target(t, value, out: dict[str, list]) -> None:
    if isinstance(t, cst.Name):
        out.setdefault(t.value, []).append(value)
    elif isinstance(t, (cst.Tuple, cst.List)):
        values = value.elements if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(t.elements) \
            else [None] * len(t.elements)
        for el, v in zip(t.elements, values):
            _bind_target(el.value, v.value if v is not None else None, out)
    elif isinstance(t, cst.StarredElement):
        _bind_target(t.value, None, out)


def _value_kind(v) -> str:
    """bool, float or int: the Python type an assigned value has (int where it cannot be told)."""
    while isinstance(v, cst.UnaryOperation) and isinstance(v.operator, (cst.Minus, cst.Plus)):
        v = v.expression
    if isinstance(v, (cst.Comparison, cst.BooleanOperation)) or (
            isinstance(v, cst.UnaryOperation) and isinstance(v.operator, cst.Not)) or (
            isinstance(v, cst.Name) and v.value in ("True", "False")):
        return "bool"
    if isinstance(v, cst.Float) or (isinstance(v, cst.Call) and isinstance(v.func, cst.Name) and v.func.value == "float"):
        return "float"
    return "int"


def _closure_constants(factory: cst.FunctionDef, fn: cst.FunctionDef):
    """The factory's names that kernel `fn` (defined in its body) reads, with their constant types, or None
    when the kernel reads one that cannot be a constant (a function, class, import or a `*args`)."""
    scope: dict[str, list] = {}
    for p in factory.params.params:
        ann = p.annotation.annotation if p.annotation else None
        kind = ann.value if isinstance(ann, cst.Name) and ann.value in ("bool", "float") else "int"
        scope.setdefault(p.name.value, []).append(cst.Name("True") if kind == "bool" else
                                                  cst.Float("0.0") if kind == "float" else cst.Integer("0"))
    for star in (factory.params.star_arg, factory.params.star_kwarg):
        if isinstance(star, cst.Param):
            scope.setdefault(star.name.value, []).append(None)
    for p in factory.params.kwonly_params:
        scope.setdefault(p.name.value, []).append(cst.Integer("0"))
    _bound_names([b for b in factory.body.body if b is not fn], scope)
    local: dict[str, list] = {p.name.value: [] for p in fn.params.params}
    _bound_names(fn.body.body, local)
    skip = set()
    read: list[str] = []
    for node in walk_nodes(fn.body):
        if isinstance(node, cst.Attribute):
            skip.add(id(node.attr))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            skip.add(id(node.keyword))
        elif isinstance(node, cst.Name) and id(node) not in skip and node.value not in local \
                and node.value in scope and node.value not in read:
            read.append(node.value)
    out = []
    for name in sorted(read):
        values = scope[name]
        if any(v is None for v in values):
            return None
        kinds = {_value_kind(v) for v in values}
        out.append((name, kinds.pop() if len(kinds) == 1 else "int"))
    return tuple(out)


class LazyPositions:
    """`_positions(module)`, computed one top-level statement at a time when a node in it is first asked
    for: diagnostics and the model need the positions of kernels and helpers, not of the host code around
    them (most of a real module). A statement's first line comes from CPython's tree of the same source,
    less the blank and comment lines LibCST gives the statement. A node is looked for in the statement a
    hint names (`hint`), then in the preferred ones (kernels and helpers, `prefer`), then in the others; no
    walk of the whole module is needed to find a node's statement."""

    def __init__(self, module: cst.Module, starts: list[int], source: str) -> None:
        self.module, self.starts = module, starts
        self._lines = source.splitlines(keepends=True)
        self._computed: dict = {}
        self._done: set[int] = set()
        self._hints: dict[int, int] = {}
        self._preferred: list[int] = []

    @classmethod
    def of(cls, module: cst.Module, tree: ast.Module | None, source: str, exact: bool = True):
        starts = _statement_starts(module, tree) if tree is not None else None
        if starts is None:
            return _positions(module)
        return cls(module, starts, source) if exact else _DeferredPositions(module, starts, source, tree)

    def exact(self, node, default=None):
        return self.get(node, default)

    def statement_text(self, i: int) -> str:
        """The source of top-level statement `i` (its leading blank and comment lines included)."""
        end = self.starts[i + 1] - 1 if i + 1 < len(self.starts) else len(self._lines)
        return "".join(self._lines[self.starts[i] - 1:end])

    def hint(self, node, i: int) -> None:
        self._hints[id(node)] = i

    def prefer(self, statements) -> None:
        index = {id(stmt): i for i, stmt in enumerate(self.module.body)}
        self._preferred = [index[id(s)] for s in statements if id(s) in index]

    def get(self, node, default=None):
        try:
            return self[node]
        except KeyError:
            return default

    def __getitem__(self, node):
        found = self._computed.get(node)
        if found is not None:
            return found
        hinted = self._hints.get(id(node))
        for i in ([hinted] if hinted is not None else []) + self._preferred + list(range(len(self.module.body))):
            if i in self._done:
                continue
            self._done.add(i)
            state = PositionProvidingCodegenState(default_indent=self.module.default_indent,
                                                  default_newline=self.module.default_newline, provider=self)
            state.line = self.starts[i]
            self.module.body[i]._codegen(state)
            found = self._computed.get(node)
            if found is not None:
                return found
        raise KeyError(node)


class _DeferredPositions(LazyPositions):
    """Positions deferred: a node's position is a stand-in (line 0, a column unique to the node, so that
    distinct nodes stay distinct and one node converted twice keeps one), except a function's (a kernel's
    line is in the output): a top-level one's from CPython's tree, a nested one's computed. `exact` still computes one (the
    scan orders launch sites by it)."""

    def __init__(self, module: cst.Module, starts: list[int], source: str, tree: ast.Module) -> None:
        super().__init__(module, starts, source)
        self._defs: dict[int, CodeRange] = {}
        stmts, k = list(tree.body), 0
        for stmt in module.body:  # paired as in `_statement_starts`, which succeeded on these trees
            if isinstance(stmt, cst.FunctionDef):
                at = CodePosition(stmts[k].lineno, stmts[k].col_offset)
                self._defs[id(stmt)] = CodeRange(at, at)
            k += len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
        self._stand_ins: dict = {}

    def exact(self, node, default=None):
        return super().get(node, default)

    def __getitem__(self, node):
        found = self._defs.get(id(node))
        if found is None and isinstance(node, cst.FunctionDef):  # a factory's kernel: its line is output too
            return super().__getitem__(node)
        if found is None:
            found = self._stand_ins.get(node)
        if found is None:
            at = CodePosition(0, len(self._stand_ins))
            found = self._stand_ins[node] = CodeRange(at, at)
        return found


def _statement_starts(module: cst.Module, tree: ast.Module) -> list[int] | None:
    """The line each top-level LibCST statement's code starts on (its leading blank and comment lines
    included), from CPython's statement lines; None where the two trees do not pair up."""
    stmts = list(tree.body)
    starts, k = [], 0
    for stmt in module.body:
        n = len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
        if k + n > len(stmts):
            return None
        first = stmts[k]
        line = min([first.lineno] + [d.lineno for d in getattr(first, "decorator_list", [])])
        starts.append(line - len(stmt.leading_lines))
        k += n
    return starts if k == len(stmts) else None


_DECORATOR_LINE = re.compile(r"^[ \t]*@(.*)$", re.M)  # a decorator line (a matmul `a @ b` is mid-line)
_FIELDS: dict[type, tuple[str, ...]] = {}


# fields that hold only formatting (whitespace, comments, brackets, commas) or an operator token: no walk
# looks for those, and they were most of the nodes walked
_FORMATTING_FIELDS = frozenset({
    "lpar", "rpar", "leading_lines", "lines_after_decorators", "header", "footer", "comma", "semicolon", "newline",
    "trailing_whitespace", "equal", "colon", "lbracket", "rbracket", "lbrace", "rbrace", "operator", "dot", "star",
})


def _children(n: cst.CSTNode) -> list[cst.CSTNode]:
    """The child nodes of `n` from its dataclass fields, formatting and operator tokens left out. LibCST's
    `children` runs a visitor per node (most of a library's parse time); the fields give the same nodes, in
    field order (not always source order: the walks below collect sets, or sort by position where order
    matters)."""
    names = _FIELDS.get(type(n))
    if names is None:
        names = _FIELDS[type(n)] = tuple(f.name for f in dataclasses.fields(n) if f.name not in _FORMATTING_FIELDS
                                         and not f.name.startswith("whitespace"))
    out: list[cst.CSTNode] = []
    for name in names:
        v = getattr(n, name)
        if isinstance(v, cst.CSTNode):
            out.append(v)
        elif isinstance(v, (tuple, list)):
            out.extend(x for x in v if isinstance(x, cst.CSTNode))
    return out


def walk_nodes(node: cst.CSTNode):
    """Pre-order walk of a LibCST tree, without recursion (deep expressions)."""
    return iter(_subtree(node))


@functools.lru_cache(maxsize=4096)
def _subtree(node: cst.CSTNode) -> tuple[cst.CSTNode, ...]:
    """The nodes of a tree in pre-order, kept for the next walk: the scans of a module walk the same function
    bodies once per parameter (LibCST nodes are immutable and hash by identity; the cache holds them alive)."""
    out: list[cst.CSTNode] = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(_children(n)))
    return tuple(out)
