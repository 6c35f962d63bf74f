"""The host layer's part of verification: what each C symbol launches is what the Tile IR diff verified.

`verify` proves entry X with generics G equals the Python kernel at specialization S; this checks that the
C ABI layer (`ffi.rs`, `abi.rs`) maps a call's arguments to that X, G, grid and output partitions, and passes
the entry the values it takes. For every kernel, specialization and element type verified, the symbol is
called in dry-run mode (`cutile_dry_run`, `cutile_last_plan`) with descriptors built here from the manifest
and the ABI's documented layout (not by the generated wrapper); the plan it reports must equal the reference
computed the way `verify_output` computes what it compiles (entry selected by the predicates, derived
constants, `generic_params`, generic order, a float constant as the i32 of its f32 bits). A difference is a
`different` verdict naming the field (tests/test_host_layer.py runs the same functions and adds cuTile
Python's and the wrapper's view of the call).
"""

from __future__ import annotations

import ctypes
import json
import re
import struct

from ..config import DTYPES
from ..emit.ffi import INTEROP
from ..emit.lower import rust_ident
from .specs import (INT_KINDS, const_value, generic_value, domain_checks, dtype_checks, element_types, entry_params, entry_values, kernel_generics, predicates_hold,
                    twin_entries, verified_generics)

# the ABI's dtype codes as README documents them (not read from the generated code)
DTYPE_CODES = {n: code for n, (code, _, _) in DTYPES.items()}  # the ABI's table (emit/ffi.py)
BLOCKS = (3, 2, 1)  # blocks per axis of a checked output: grid axes are told apart
FREE_GRID = (3, 2)  # the grid of a kernel without a checked output (the symbol passes it through)
BASE_PTR = 0x7F0000000000


class _MaxRank(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("ndim", ctypes.c_int32), ("shape", ctypes.c_int64 * 8),
                ("strides", ctypes.c_int64 * 8), ("dtype", ctypes.c_int32)]


# ------------------------------------------------------------------------------------ the reference

def has_entry(kernel: dict, consts: dict, dtype: str) -> bool:
    """Whether an entry takes these constants and element types (else the symbol must refuse them: an implicit
    conversion cuTile Python refuses there too, see passes/infer.RestrictDtypes)."""
    e_type = dtype.split("+")[0]
    return any(predicates_hold(e["predicates"], consts) and e_type in e.get("dtypes", (e_type,))
               for e in kernel["entries"])


def selected_entries(kernel: dict, consts: dict, dtype: str) -> list[dict]:
    """The entry the predicates and E's dtype select, with its twins (entries that an array's dtype selects among,
    specs.twin_entries): each is verified, and the symbol must launch each for its arrays' dtypes."""
    e_type = dtype.split("+")[0]
    first = next(e for e in kernel["entries"] if predicates_hold(e["predicates"], consts) and e_type in e.get("dtypes", (e_type,)))
    return twin_entries(kernel["entries"], first)


def reference(kernel: dict, consts: dict, dtype: str, grid: tuple, any_dtype: bool = False,
              entry: dict | None = None) -> dict:
    """What `verify_output` compiled and diffed for this specialization and dtype: the entry the predicates
    select (or `entry`, one of its twins), the generics in the entry's order (derived constants,
    `generic_params`, `E` as the dtype), the tile of each checked output, and the grid given (cuTile Python
    launches the grid it is given)."""
    e_type = dtype.split("+")[0]  # an entry of some dtypes only is selected by E's (verify/run.py `select_entry`)
    entry = entry or next(e for e in kernel["entries"]
                          if predicates_hold(e["predicates"], consts) and (e_type in e.get("dtypes", (e_type,)) or any_dtype))
    values = entry_values(kernel, entry, consts)
    forms = {o["array"]: o["form"] for o in entry["outputs"]}
    return {
        "entry": entry["name"],
        # a Triton entry is no function of one element type `T` (its dtype generics are in `generics`)
        "element_type": dtype.split("+")[0] if "E" in entry["generics"] and not is_triton(kernel) else None,
        "generic_names": list(entry["generics"]),
        # exactly the generics verify compiled the entry with (a float constant as the i32 of its f32 bits)
        "generics": verified_generics(kernel, entry, consts, dtype),
        "grid": list(grid) + [1] * (3 - len(grid)),
        "partitions": {a: [const_value(d, values) for d in dims] for a, dims in entry.get("tiles", {}).items()
                       if forms.get(a) == "checked"},
    }


def _free_extent(rank: int) -> int:
    """The extent of each axis of an array that is no partitioned output: 48, or less where 48^rank elements
    would pass the i32 index range the symbol checks (a rank-6 state: 35^6 < 2^31)."""
    extent = 48
    while extent > 1 and extent ** rank >= 2 ** 31:
        extent -= 1
    return extent


def launch_shape(kernel: dict, consts: dict, dtype: str = "f32", entry: dict | None = None) -> tuple[dict, tuple]:
    """Array shapes and a grid that pass the symbol's checks: a checked output spans BLOCKS tiles."""
    if is_triton(kernel):
        shapes, grid, _, _ = triton_launch(kernel, consts, dtype, entry)
        return shapes, grid
    taken = any(predicates_hold(e["predicates"], consts) for e in kernel["entries"])
    # constants no entry takes (the symbol must refuse them, verify/run.refused_specialization): the call is
    # made with the first entry's layout
    ref = reference(kernel, consts, dtype, (1,), any_dtype=not has_entry(kernel, consts, dtype),
                    entry=entry if entry is not None or taken else kernel["entries"][0])
    shapes, grid = {}, FREE_GRID
    entry = next(e for e in kernel["entries"] if e["name"] == ref["entry"])
    for p in entry_params(kernel, entry):  # an array whose rank depends on a constant: the entry's rank
        if p["kind"] == "array":
            tile = ref["partitions"].get(p["name"])
            shapes[p["name"]] = [t * BLOCKS[i] for i, t in enumerate(tile)] if tile else [_free_extent(p["rank"])] * p["rank"]
            if p.get("unused"):  # never read: the symbol passes an empty vector whatever it is given
                shapes[p["name"]] = [0]
            if tile:
                grid = BLOCKS[:len(tile)]
    return shapes, grid


def array_dtype(p: dict, dtype: str, kernel: dict) -> str:
    """The dtype of array `p` (a parameter as the entry takes it, specs.entry_params) in the check `dtype`."""
    return element_types(kernel, dtype).get(p["dtype"], p["dtype"])


def kernel_dtypes(kernel: dict) -> list[str]:
    """The element types verify checks the kernel at (f32 only where no array is typed E), with the mixed
    ones of a kernel with several dtype generics (`f16+f32`: E is f16, E2 f32)."""
    if not kernel_generics(kernel):
        return ["f32"]
    return dtype_checks([d for d in kernel["dtypes"] if d in DTYPE_CODES], len(kernel_generics(kernel)), True,
                        kernel.get("element_combinations")) + domain_checks(kernel)


def mismatches(label: str, got: dict, ref: dict, symbol: str) -> list[str]:
    """Where a launch plan differs from the reference, each difference named."""
    out = []
    if got.get("symbol") != symbol:
        out.append(f"{label}: planned by `{got.get('symbol')}`, not `{symbol}`")
    if got.get("entry") != ref["entry"]:
        out.append(f"{label}: launches entry `{got.get('entry')}`; verified `{ref['entry']}`")
    if got.get("element_type") != ref["element_type"]:
        out.append(f"{label}: element type {got.get('element_type')}; verified {ref['element_type']}")
    gens = got.get("generics", [])
    if len(gens) != len(ref["generics"]):
        out.append(f"{label}: {len(gens)} generics {gens}; verified {len(ref['generics'])} {ref['generics']}")
    for i, (name, want, have) in enumerate(zip(ref["generic_names"], ref["generics"], gens)):
        if want != have:
            out.append(f"{label}: generic `{name}` (#{i}) is {have} in the launch; verified with {want}")
    if got.get("grid") != ref["grid"]:
        out.append(f"{label}: grid {got.get('grid')}; the call asked for {ref['grid']}")
    if got.get("partitions") != ref["partitions"]:
        out.append(f"{label}: output partitions {got.get('partitions')}; verified tiles {ref['partitions']}")
    return out


# ------------------------------------------------------------------------------ Triton's symbols

def is_triton(kernel: dict) -> bool:
    return kernel.get("frontend") == "triton"


def c_params(params: list[dict]) -> list[dict]:
    """The parameters in the order the C symbol takes them (emit/ffi.py): the kernel's own, without the hidden
    constants it computes itself (whether an optional pointer was given, whether a stride is 1), then the
    flags that say whether an optional constexpr or scalar was given."""
    flags = [q for p in params if p["kind"] != "array" and p.get("given")
             for q in params if q.get("given_of") == p["name"]]
    return [p for p in params if not p.get("given_of") and not p.get("unit_of")] + flags


def _absent_generics(kernel: dict, entry: dict, consts: dict, generics: list[str]) -> list[str]:
    """A dtype generic whose every array is an optional pointer passed as None types nothing the entry reads:
    the symbol launches it at the first dtype it takes (abi::element_type), whatever dtype the check is at."""
    arrays = [p for p in entry_params(kernel, entry) if p["kind"] == "array"]
    out = list(generics)
    for i, g in enumerate(entry["generics"]):
        typed = [p for p in arrays if p["dtype"] == g]
        if typed and all(p.get("given") and not consts.get(p["given"], 1) for p in typed):
            first = (typed[0].get("domain") or kernel["dtypes"])[0]
            out[i] = first
            if f"__{g}_INT" in entry["generics"]:
                out[entry["generics"].index(f"__{g}_INT")] = str(INT_KINDS.get(first, 0))
    return out


def triton_reference(ref: dict, kernel: dict, consts: dict, dtype: str, entry: dict) -> dict:
    """`reference` completed for a Triton symbol: the view it must pass for each checked output, and the dtype
    generics of optional pointers passed as None as the symbol launches them (`_absent_generics`)."""
    return {**ref, "views": triton_launch(kernel, consts, dtype, entry)[3],
            "generics": _absent_generics(kernel, entry, consts, ref["generics"])}


def _view_value(expr: str, env: dict) -> int:
    """A view's extent or stride (manifest `view`, passes/views.py) at the launch's scalars, constants and grid
    (LookupError: the expression reads a name the launch does not set; the host check then says so)."""
    try:
        return int(const_value(expr, env))
    except (NameError, TypeError, SyntaxError) as e:
        raise LookupError(f"a view's expression `{expr}` cannot be evaluated: {e}") from None


def _contiguous(extents: list[int]) -> list[int]:
    out, acc = [], 1
    for d in reversed(extents):
        out.insert(0, acc)
        acc *= max(d, 1)
    return out


def triton_launch(kernel: dict, consts: dict, dtype: str, entry: dict | None) -> tuple[dict, tuple, dict, dict]:
    """A Triton launch the symbol takes: shapes of the flat arrays (rank 1), the grid, the scalars and the
    view (extents, strides) of each checked output. An output view (abi::triton_view) must lie in its array
    and not overlap, and the grid must be its partition grid: a scalar that is a view's whole stride takes the
    contiguous stride of the axes inside it, the grid is iterated to the views' partition grid (an extent
    may read it), and each viewed array is twice as long as its view's span."""
    entry = entry or kernel["entries"][0]
    params = entry_params(kernel, entry)
    scalars = {p["name"]: scalar_value(kernel, p) for p in params if p["kind"] == "scalar"}
    for p in params:  # a stride the constants take as 1 (`stride_ak_IS_1`), or not
        if p.get("unit_of") in scalars:
            scalars[p["unit_of"]] = 1 if consts.get(p["name"]) else max(scalars[p["unit_of"]], 2)
    forms = {o["array"]: o["form"] for o in entry["outputs"]}
    views = {p["name"]: p["view"] for p in params
             if p["kind"] == "array" and p.get("view") and forms.get(p["name"]) == "checked"}
    values = entry_values(kernel, entry, consts)
    tiles = {a: [_view_value(d, values) for d in dims] for a, dims in entry.get("tiles", {}).items() if a in views}
    grid = FREE_GRID + (1,)

    def env() -> dict:
        return {**values, **scalars, **{f"__grid{i}": g for i, g in enumerate(grid)}}

    # a scalar an extent reads spans several tiles (`min(n, BLOCK)` then differs from `n`, and a grid axis
    # from its neighbours)
    read = sorted({n for v in views.values() for x in v["extents"] for n in re.findall(r"[A-Za-z_]\w*", x)} & set(scalars))
    span = 3 * max([t for dims in tiles.values() for t in dims] or [1]) + 1
    for i, name in enumerate(read):
        scalars[name] = span + i
    for name, view in views.items():  # strides that are a scalar: contiguous, innermost axis first
        extents = [_view_value(x, env()) for x in view["extents"]]
        for expr, stride in reversed(list(zip(view["strides"], _contiguous(extents)))):
            if expr in scalars and expr not in read:
                scalars[expr] = stride
    for _ in range(4):  # the grid the views split into (an extent may be the grid: a fixed point)
        wants = set()
        for name, view in views.items():
            extents = [_view_value(x, env()) for x in view["extents"]]
            want = [-(-e // t) if t else 1 for e, t in zip(extents, tiles.get(name, []))][:3]
            wants.add(tuple(want + [1] * (3 - len(want))))
        if len(wants) != 1 or next(iter(wants)) == grid:
            break
        grid = next(iter(wants))
    evaluated = {}
    for name, view in views.items():
        evaluated[name] = ([_view_value(x, env()) for x in view["extents"]],
                           [_view_value(x, env()) for x in view["strides"]])
    shapes = {}
    for p in params:
        if p["kind"] != "array":
            continue
        if p.get("unused"):
            shapes[p["name"]] = [0]
        elif p["name"] in evaluated:
            extents, strides = evaluated[p["name"]]
            # twice the view's span: a symbol making another view inside it is seen by what it passes
            shapes[p["name"]] = [2 * (1 + sum((e - 1) * s for e, s in zip(extents, strides) if e > 0))]
        else:
            shapes[p["name"]] = [_free_extent(p["rank"])] * p["rank"]
    if not views:
        grid = FREE_GRID
    return shapes, tuple(grid), scalars, evaluated


# ------------------------------------------------------------------ (a) the symbol, called directly

def c_call(kernel: dict, consts: dict, dtype: str, entry_index: int, entry: dict | None = None) -> tuple[list, tuple]:
    """The symbol's arguments, built from the manifest's parameter list and README's ABI (not the wrapper); the
    arrays at the dtypes `entry` takes (one whose dtype differs per entry, `array_dtypes`)."""
    shapes, grid = launch_shape(kernel, consts, dtype, entry)
    scalars = triton_launch(kernel, consts, dtype, entry)[2] if is_triton(kernel) else {}
    args, keep, ptr = [], [], BASE_PTR
    for p in c_params(entry_params(kernel, entry) if entry else kernel["params"]):
        if p["kind"] == "array" and p.get("given") and not consts.get(p["given"], 1):
            args.append(None)  # an optional pointer passed as None: null (abi::optional_tensor_arg)
            ptr += 1 << 24
        elif p["kind"] == "array":
            shape = shapes[p["name"]]
            strides, acc = [], 1
            for d in reversed(shape):
                strides.insert(0, acc)
                acc *= d
            d = _MaxRank(ptr, len(shape), (ctypes.c_int64 * 8)(*shape), (ctypes.c_int64 * 8)(*strides),
                         DTYPE_CODES[array_dtype(p, dtype, kernel)])
            keep.append(d)
            args.append(ctypes.pointer(d))
            ptr += 1 << 24
        elif p["kind"] == "scalar":
            v = scalars.get(p["name"], scalar_value(kernel, p))
            args.append({"f32": ctypes.c_float, "f64": ctypes.c_double, "bool": ctypes.c_bool,
                         "i64": ctypes.c_int64}.get(p["dtype"], ctypes.c_int32)(v))
        elif p.get("const_type") == "float":  # README: float constants as double
            args.append(ctypes.c_double(float(consts[p["name"]])))
        elif p.get("given_of"):  # whether an optional constexpr or scalar was given (1) or None (0)
            args.append(ctypes.c_int64(int(consts.get(p["name"], 1))))
        else:
            args.append(ctypes.c_int64(int(consts[p["name"]])))
    if len(kernel["entries"]) > 1:
        args.append(ctypes.c_int32(entry_index))
    g3 = list(grid) + [1] * (3 - len(grid))
    args += [ctypes.c_int64(g) for g in g3] + [ctypes.c_int32(0), ctypes.c_void_p(None)]
    return args, grid


def scalar_value(kernel: dict, p: dict):
    """The value a check passes for scalar parameter `p`: distinct for each scalar of the kernel (two scalars
    passed in swapped order must show), exact in every scalar type, and no fixed point of a slip such as
    `1 - x`, `-x`, `2 * x` or `1 / x` (0.5 was one of `1 - x`: tests/test_host_mutants.py)."""
    i = [q["name"] for q in kernel["params"] if q["kind"] == "scalar"].index(p["name"])
    if p["dtype"] == "bool":
        return i % 2 == 0
    return 0.625 + 0.25 * i if p["dtype"] in ("f32", "f64", "f16", "bf16") else 3 + i


def dry_call(lib, symbol: str, args: list) -> tuple[int, dict | None, str]:
    fn = getattr(lib, symbol)
    fn.restype = ctypes.c_int32
    lib.cutile_dry_run.restype = ctypes.c_int32
    lib.cutile_last_plan.restype = ctypes.c_char_p
    lib.cutile_last_error.restype = ctypes.c_char_p
    previous = lib.cutile_dry_run(1)
    try:
        rc = fn(*args)
        text = (lib.cutile_last_plan() or b"").decode()
        err = (lib.cutile_last_error() or b"").decode()
    finally:
        lib.cutile_dry_run(previous)
    return rc, (json.loads(text) if text else None), err


def entry_slots(kernel_rs: str, entry: str, arrays: dict, tiles: dict, scalars: dict) -> list:
    """What cuTile Rust passes to the entry `entry` of a generated kernel.rs, by the rules of the launcher its
    `#[cutile::module]` macro generates (cutile-macro 0.5.0): a raw pointer is its address; a `&Tensor` its pointer,
    shape and strides; a `&mut Tensor` (partitioned) those and its tile's shape and strides; a scalar its value
    (`x_shape0`, `x_stride0`: the shape and strides of pointer-accessed `x`). `arrays`: name -> (pointer, shape,
    strides); `tiles`: the partitions; `scalars`: name -> (type, value as the 8-byte slot holds it).
    `[[name, [[type, value], ...]], ...]`, as the dry run's `params` reports what the symbol passes."""
    m = re.search(rf"pub (?:unsafe )?fn {re.escape(entry)}\s*<.*?>\s*\((.*?)\)\s*\{{", kernel_rs, re.S)
    m = m or re.search(rf"pub (?:unsafe )?fn {re.escape(entry)}\s*\((.*?)\)\s*\{{", kernel_rs, re.S)
    if not m:
        raise LookupError(f"entry `{entry}` not found in kernel.rs")
    params, depth, cur = [], 0, ""
    for c in m.group(1):  # split at the commas outside <>, {}, [] and ()
        depth += (c in "<{[(") - (c in ">}])")
        if c == "," and depth == 0:
            params.append(cur)
            cur = ""
        else:
            cur += c
    out = []
    for param in [p for p in params + [cur] if p.strip()]:
        name, ty = (x.strip() for x in param.split(":", 1))
        # `x_stride0`, or `x_stride0_` where a parameter has that name (emit/derived_names.extent_names)
        extent = None if name in scalars else re.fullmatch(r"(\w+)_(shape|stride)(\d+)_*", name)
        if ty.startswith("*mut") or ty.startswith("*const"):
            slots = [["ptr", arrays[name][0]]]
        elif ty.startswith("&"):
            ptr, shape, strides = arrays[name]
            slots = [["ptr", ptr]] + [["i32", v] for v in list(shape) + list(strides)]
            if ty.startswith("&mut"):
                slots += [["i32", v] for v in list(tiles[name]) + list(strides)]
        elif extent and extent.group(1) in arrays:
            slots = [["i32", arrays[extent.group(1)][1 if extent.group(2) == "shape" else 2][int(extent.group(3))]]]
        else:
            slots = [list(scalars[name])]
            if slots[0][0] != ty:
                raise LookupError(f"scalar `{name}` is passed as {slots[0][0]}; the entry takes {ty}")
        out.append([name, slots])
    return out


SLOT_VALUES = {"i32": lambda v: v & 0xFFFFFFFF, "i64": lambda v: v & (2**64 - 1),
               "f32": lambda v: struct.unpack("<I", struct.pack("<f", v))[0],
               "f64": lambda v: struct.unpack("<Q", struct.pack("<d", v))[0], "bool": int}


def unread_arrays(kernel: dict, consts: dict) -> set[str]:
    """The arrays read only under a constant condition (manifest `read_when`) that `consts` make false: the
    symbol and the wrapper take any argument for them and pass the entry a placeholder (`placeholder`)."""
    out = set()
    for p in kernel["params"]:
        if p.get("read_when"):
            try:
                if not const_value(p["read_when"], consts):
                    out.add(p["name"])
            except Exception:  # noqa: BLE001 - a condition over constants the values lack: read
                continue
    return out


def placeholder(rank: int) -> tuple:
    """What the symbol passes for an unread array (abi::unread_arg): a null pointer, zero extents and strides."""
    return (0, [0] * rank, [0] * rank)


def passed_values(kernel: dict, args: list, ref: dict, unread: set[str] = frozenset()) -> tuple[dict, dict, dict]:
    """The arrays (pointer, shape, strides), output tiles and scalars of a `c_call`, by their Rust names (an
    array in `unread`: the symbol's placeholder at the rank the call passes)."""
    arrays, scalars = {}, {}
    views = ref.get("views", {})
    for p, a in zip(c_params(kernel["params"]), args):
        if p["kind"] == "array" and a is None:  # an optional pointer not given: null, no extents
            arrays[rust_ident(p["name"])] = (0, [0] * p["rank"], [0] * p["rank"])
        elif p["kind"] == "array":
            d = a.contents
            arrays[rust_ident(p["name"])] = placeholder(d.ndim) if p["name"] in unread else \
                (d.ptr, *views[p["name"]]) if p["name"] in views else (d.ptr, d.shape[:d.ndim], d.strides[:d.ndim])
        elif p["kind"] == "scalar":
            scalars[rust_ident(p["name"])] = (p["dtype"], SLOT_VALUES[p["dtype"]](a.value))
    return arrays, {rust_ident(n): t for n, t in ref["partitions"].items()}, scalars


def symbol_mismatches(lib, kernel: dict, kernel_rs: str | None = None) -> list[str]:
    """(a) for one kernel: every specialization and dtype, the symbol's dry run against the reference; with the
    generated `kernel_rs`, also the values it would pass against what the entry takes."""
    problems = []
    for consts in kernel["specializations"]:
        for dtype in kernel_dtypes(kernel):
            if not has_entry(kernel, consts, dtype):  # refused by every entry these constants select
                selected = [i for i, e in enumerate(kernel["entries"]) if predicates_hold(e["predicates"], consts)]
                # constants no entry takes: refused whichever entry the call names
                for index in selected or range(len(kernel["entries"])):
                    rc, got, err = dry_call(lib, kernel["symbol"], c_call(kernel, consts, dtype, index)[0])
                    if rc == 0:
                        problems.append(f"{kernel['name']} {consts} {dtype}: the symbol launches entry "
                                        f"`{kernel['entries'][index]['name']}` for "
                                        + ("element types no entry takes" if selected else "constants no entry takes"))
                continue
            for entry in selected_entries(kernel, consts, dtype):  # each twin at its arrays' dtypes
                _, grid = launch_shape(kernel, consts, dtype, entry)
                ref = reference(kernel, consts, dtype, grid, entry=entry)
                if is_triton(kernel):
                    ref = triton_reference(ref, kernel, consts, dtype, entry)
                index = [e["name"] for e in kernel["entries"]].index(ref["entry"])
                args, _ = c_call(kernel, consts, dtype, index, entry)
                label = f"{kernel['name']} {consts} {dtype}" + (f" {entry['array_dtypes']}" if "array_dtypes" in entry else "")
                rc, got, err = dry_call(lib, kernel["symbol"], args)
                if rc != 0 or got is None:
                    problems.append(f"{label}: the dry run returned {rc} ({err}) without a plan")
                    continue
                problems += mismatches(label, got, ref, kernel["symbol"])
                if kernel_rs is not None:
                    want = entry_slots(kernel_rs, ref["entry"],
                                       *passed_values(kernel, args, ref, unread_arrays(kernel, consts)))
                    if got.get("params") != want:
                        problems.append(f"{label}: passes {got.get('params')}; the entry takes {want}")
    return problems


# ------------------------------------------------------------------------ the generated Python wrapper

TORCH_NAMES = {n: torch for n, (torch, _, _) in INTEROP.items()}  # the wrapper's own table (emit/ffi.py)


class FakeTensor:
    """What the wrapper reads of a CUDA torch tensor (verification has no GPU, maybe no torch); never
    dereferenced."""

    def __init__(self, shape, dtype: str, ptr: int):
        self.shape, self.dtype, self.is_cuda, self._ptr = tuple(shape), TORCH_NAMES[dtype], True, ptr
        self.device = "cuda:0"
        strides, acc = [], 1
        for d in reversed(self.shape):
            strides.insert(0, acc)
            acc *= d
        self._strides = tuple(strides)

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._strides

    def get_device(self):
        return 0


def python_call(kernel: dict, consts: dict, dtype: str, entry: dict | None = None) -> tuple[tuple, tuple]:
    """The `ct.launch` arguments of the call: arrays, scalars and constants in the kernel's order; bool
    constants as Python bools, as launch sites pass them; the arrays at the dtypes `entry` takes."""
    shapes, grid = launch_shape(kernel, consts, dtype, entry)
    args, ptr = [], BASE_PTR
    for p in entry_params(kernel, entry) if entry else kernel["params"]:
        if p["kind"] == "array":
            args.append(FakeTensor(shapes[p["name"]], array_dtype(p, dtype, kernel), ptr))
            ptr += 1 << 24
        elif p["kind"] == "scalar":
            args.append(scalar_value(kernel, p))
        else:
            v = consts[p["name"]]
            args.append(bool(v) if p["const_type"] == "bool" else v)
    return tuple(args), grid


def wrapper_mismatches(rt, lib, kernel: dict, kobj, fn, kernel_rs: str) -> list[str]:
    """The generated wrapper (`rt`: the package's `_runtime`, whose library is `lib`) on the kernel's own
    arguments, both ways a user reaches a port: the route plan of a `ct.launch` of `kobj`, and the direct
    function `fn` (`cutile_ports.<op>.<kernel>`), each run through the symbol in dry-run mode. Each must
    launch the reference and pass the entry the call's arrays and scalars in their places (a wrapper passing
    two scalars in swapped order shows here). Needs a fake `torch` in sys.modules (see `fake_torch`)."""
    problems = []
    for consts in kernel["specializations"]:
        for dtype in kernel_dtypes(kernel):
            for entry in selected_entries(kernel, consts, dtype) if has_entry(kernel, consts, dtype) else [None]:
                problems += _wrapper_mismatches_at(rt, lib, kernel, kobj, fn, kernel_rs, consts, dtype, entry)
    return problems


def _wrapper_mismatches_at(rt, lib, kernel: dict, kobj, fn, kernel_rs: str, consts: dict, dtype: str,
                           entry: dict | None) -> list[str]:
    """wrapper_mismatches at one specialization, dtype and entry (its arrays at the entry's dtypes)."""
    problems = []
    args, grid = python_call(kernel, consts, dtype, entry)
    label = f"{kernel['name']} {consts} {dtype}" + (f" {entry['array_dtypes']}" if entry and "array_dtypes" in entry else "")
    if not has_entry(kernel, consts, dtype):  # the wrapper must refuse it (no entry takes it)
        for way, launch in (("routed ct.launch", lambda: rt.dry_run(rt.route(kobj, args, grid), lib)),
                            ("the Python wrapper's function", lambda: _dry_plan(lib, lambda: fn(*args, grid=grid)))):
            if fn is None and way.endswith("function"):
                continue
            try:
                launch()
            except Exception:  # noqa: BLE001 - the expected outcome
                continue
            problems.append(f"{label} ({way}): launches element types no entry takes")
        return problems
    ref = reference(kernel, consts, dtype, grid, entry=entry)
    unread = unread_arrays(kernel, consts)
    arrays = {rust_ident(p["name"]): placeholder(len(a.shape)) if p["name"] in unread else
              (a.data_ptr(), list(a.shape), list(a.stride()))
              for p, a in zip(kernel["params"], args) if p["kind"] == "array"}
    scalars = {rust_ident(p["name"]): (p["dtype"], SLOT_VALUES[p["dtype"]](a))
               for p, a in zip(kernel["params"], args) if p["kind"] == "scalar"}
    want = entry_slots(kernel_rs, ref["entry"], arrays, {rust_ident(n): t for n, t in ref["partitions"].items()},
                       scalars)
    for way, launch in (("routed ct.launch", lambda: rt.dry_run(rt.route(kobj, args, grid), lib)),
                        ("the Python wrapper's function", lambda: _dry_plan(lib, lambda: fn(*args, grid=grid)))):
        if fn is None and way.endswith("function"):
            continue
        try:
            got = launch()
        except Exception as e:  # noqa: BLE001 - the wrapper refusing a verified launch is a finding
            problems.append(f"{label} ({way}): refuses the call: {type(e).__name__}: {e}")
            continue
        problems += mismatches(f"{label} ({way})", got, ref, kernel["symbol"])
        if got.get("params") != want:
            problems.append(f"{label} ({way}): passes {got.get('params')}; the entry takes {want}")
    return problems


def _triton_signature(kernel: dict):
    """A function with the Triton kernel's own signature (what `kernel[grid](...)` binds its arguments to):
    the parameters a launch site passes, without the hidden constants the wrapper computes."""
    import inspect

    def kernel_fn(*args, **kwargs):  # never called: only its signature is read
        raise AssertionError("the signature stand-in was called")
    kernel_fn.__signature__ = inspect.Signature(
        [inspect.Parameter(p["name"], inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in kernel["params"]
         if not (p.get("given_of") or p.get("unit_of") or p.get("desc_of"))])
    return kernel_fn


def triton_python_call(kernel: dict, consts: dict, dtype: str, entry: dict) -> tuple[tuple, tuple]:
    """The arguments of a `kernel[grid](...)` launch of the point `c_call` makes: torch tensors (FakeTensor) at
    the same addresses, None for an optional pointer or value the constants say was not given, the scalars
    and constants in the kernel's order (a string constant as its string)."""
    shapes, grid, scalars, _ = triton_launch(kernel, consts, dtype, entry)
    args, ptr = [], BASE_PTR
    for p in entry_params(kernel, entry):
        if p.get("given_of") or p.get("unit_of") or p.get("desc_of"):
            continue
        absent = bool(p.get("given")) and not consts.get(p["given"], 1)
        if p["kind"] == "array":
            args.append(None if absent else FakeTensor(shapes[p["name"]], array_dtype(p, dtype, kernel), ptr))
            ptr += 1 << 24
        elif absent:
            args.append(None)
        elif p["kind"] == "scalar":
            args.append(scalars.get(p["name"], scalar_value(kernel, p)))
        elif p["name"] in kernel.get("strings", {}):
            strings = kernel["strings"][p["name"]]
            v = consts[p["name"]]
            args.append(strings[v] if v < len(strings) else "\x00 a string the kernel never compares with")
        else:
            v = consts[p["name"]]
            args.append(bool(v) if p.get("const_type") == "bool" else v)
    return tuple(args), grid


def triton_wrapper_mismatches(rt, lib, kernel: dict, spec, kernel_rs: str) -> list[str]:
    """The generated package's route of a Triton launch (`_runtime._triton_call`, what `kernel[grid](...)`
    runs once routed: Triton's argument binding, the hidden flags, the values in the symbol's order) at every
    point `symbol_mismatches` checks, run through the symbol in dry-run mode: it must launch the reference
    and pass the entry the call's arrays and scalars in their places. Kernels taking host tensor descriptors
    are checked at the symbol only (their descriptors need Triton's own class)."""
    if any(p.get("descriptor") for p in kernel["params"]):
        return []
    problems, fn = [], _triton_signature(kernel)
    for consts in kernel["specializations"]:
        for dtype in kernel_dtypes(kernel):
            if not has_entry(kernel, consts, dtype):
                continue  # the symbol's refusal is checked by symbol_mismatches
            for entry in selected_entries(kernel, consts, dtype):
                strings = kernel.get("strings", {})
                if any(consts.get(n, 0) >= len(v) for n, v in strings.items()):
                    continue  # a string constant no Python string gives (the symbol is checked there)
                args, grid = triton_python_call(kernel, consts, dtype, entry)
                ref = triton_reference(reference(kernel, consts, dtype, grid, entry=entry), kernel, consts, dtype, entry)
                for p in kernel["params"]:  # a constexpr passed as None: the wrapper launches 0 (never read)
                    name = p.get("rust_name", p["name"])
                    if p["kind"] == "const" and p.get("given") and not consts.get(p["given"], 1) \
                            and name in entry["generics"]:
                        ref["generics"][entry["generics"].index(name)] = generic_value(0, p.get("const_type", "int"))
                label = f"{kernel['name']} {consts} {dtype} (routed kernel[grid](...))"
                try:
                    got = _dry_plan(lib, lambda: rt._triton_call(spec, fn, {}, grid, args, {}))
                except Exception as e:  # noqa: BLE001 - the wrapper refusing a verified launch is a finding
                    problems.append(f"{label}: refuses the call: {type(e).__name__}: {e}")
                    continue
                problems += mismatches(label, got, ref, kernel["symbol"])
                named = {p["name"]: a for p, a in zip([q for q in entry_params(kernel, entry) if not (
                    q.get("given_of") or q.get("unit_of") or q.get("desc_of"))], args)}
                arrays = {}
                for p in kernel["params"]:
                    if p["kind"] != "array":
                        continue
                    a = named.get(p["name"])
                    arrays[rust_ident(p["name"])] = ((0, [0] * p["rank"], [0] * p["rank"]) if a is None else
                                                     (a.data_ptr(), *ref["views"][p["name"]]) if p["name"] in ref["views"]
                                                     else (a.data_ptr(), list(a.shape), list(a.stride())))
                scalars = {rust_ident(p["name"]): (p["dtype"], SLOT_VALUES[p["dtype"]](  # None: passed as 0
                    named[p["name"]] if named.get(p["name"]) is not None else 0))
                    for p in kernel["params"] if p["kind"] == "scalar"}
                want = entry_slots(kernel_rs, ref["entry"], arrays,
                                   {rust_ident(n): t for n, t in ref["partitions"].items()}, scalars)
                if got.get("params") != want:
                    problems.append(f"{label}: passes {got.get('params')}; the entry takes {want}")
    return problems


def unread_mismatches(lib, kernel: dict, rt=None, kobj=None) -> list[str]:
    """Arrays read only under a constant condition (manifest `read_when`), at every specialization and the
    first dtype: where the constants make it false, the symbol (and the wrapper's route of `kobj`, when given)
    must launch the verified plan with an empty int8 vector or a null descriptor (the symbol) / None (the
    wrapper) in its place, as cuTile Python does (TileGym's `torch.empty(0, dtype=torch.int8)`); where it is
    true, a rank-1 int8 array of another rank than the kernel's must be refused, so the checks stay."""
    problems = []
    names = [p["name"] for p in kernel["params"]]
    for consts in kernel["specializations"]:
        dtype = kernel_dtypes(kernel)[0]
        if not has_entry(kernel, consts, dtype):
            continue
        unread = unread_arrays(kernel, consts)
        for p in [q for q in kernel["params"] if q.get("read_when")]:
            label = f"{kernel['name']} {consts} {dtype}: `{p['name']}` (read only where `{p['read_when']}`)"
            wrong_rank = 2 if p["rank"] == 1 else 1
            entry = selected_entries(kernel, consts, dtype)[0]
            _, grid = launch_shape(kernel, consts, dtype, entry)
            ref = reference(kernel, consts, dtype, grid, entry=entry)
            index = [e["name"] for e in kernel["entries"]].index(ref["entry"])
            for what in ("an empty int8 vector", "a null descriptor"):
                args, _ = c_call(kernel, consts, dtype, index, entry)
                i = names.index(p["name"])
                if what == "a null descriptor":
                    args[i] = None
                else:
                    d = args[i].contents
                    d.ndim, d.dtype, d.shape[0], d.strides[0] = wrong_rank, 7, 0, 1  # 7: no dtype the ABI knows
                rc, got, err = dry_call(lib, kernel["symbol"], args)
                if p["name"] in unread and (rc != 0 or got is None):
                    problems.append(f"{label}: the symbol refuses {what} where it is unread: {rc} ({err})")
                elif p["name"] in unread:
                    problems += mismatches(f"{label}, {what}", got, ref, kernel["symbol"])
                elif rc == 0:
                    problems.append(f"{label}: the symbol takes {what} where the entry reads it")
            if rt is None or kobj is None:
                continue
            args, grid = python_call(kernel, consts, dtype, entry)
            args = list(args)
            args[names.index(p["name"])] = FakeTensor((0,) * wrong_rank, "i8", 0)
            try:
                got = rt.dry_run(rt.route(kobj, tuple(args), grid), lib)
            except Exception as e:  # noqa: BLE001 - refused: right where the entry reads it
                if p["name"] in unread:
                    problems.append(f"{label}: the wrapper refuses an empty int8 array where it is unread: "
                                    f"{type(e).__name__}: {e}")
                continue
            if p["name"] not in unread:
                problems.append(f"{label}: the wrapper takes an int8 array of rank {wrong_rank} where the entry reads it")
            else:
                problems += mismatches(f"{label} (routed ct.launch)", got, ref, kernel["symbol"])
    return problems


def _dry_plan(lib, call) -> dict:
    """What `call()` made the library launch, in dry-run mode."""
    previous = lib.cutile_dry_run(1)
    try:
        call()
        text = (lib.cutile_last_plan() or b"").decode()
    finally:
        lib.cutile_dry_run(previous)
    if not text:
        raise LookupError("no launch was recorded")
    return json.loads(text)


class fake_torch:
    """`with fake_torch():` the wrapper sees FakeTensor as torch.Tensor; the real module (if any) is back after."""

    def __enter__(self):
        import sys
        import types
        self._had = "torch" in sys.modules
        self._real = sys.modules.get("torch")
        fake = types.ModuleType("torch")
        fake.Tensor = FakeTensor
        sys.modules["torch"] = fake
        return fake

    def __exit__(self, *exc):
        import sys
        if self._had:
            sys.modules["torch"] = self._real
        else:
            sys.modules.pop("torch", None)
        return False
