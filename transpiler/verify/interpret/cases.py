"""Numeric check of a Triton port: a recorded case (inputs, scalars, constants, grid, and the outputs Triton's
interpreter wrote) replayed through the port's entry Tile IR on the CPU, and the outputs compared.

A case is the `case` JSON stored in each reference file (`tests/fixtures/triton_refs/*.npz`, written by
tools/triton_reference.py); its inputs are rebuilt from their seeded specs by that tool's `make_inputs`. The
entry is selected and its generics computed the way `verify` compiles it (entries.select_entry, specs.verified_generics);
its arguments are the C ABI's for a Triton kernel: each pointer as its address in the interpreter's memory,
the rank-1 span of elements it may address (shape0 = elements, stride0 = 1) and the scalars in the Rust types
of the entry's signature.

Tolerances (`tolerance`): each output's own (atol, rtol) from the case (the ones Triton's interpreter was
checked against numpy with), integers exactly. The interpreter rounds each float op once in its type, as the
GPU does; what may differ from Triton's interpreter is only the order of a reduction, fused multiply-adds
and the f64 accumulation of mmaf, all within those tolerances at the corpus' sizes. One exception: an entry
whose IR rounds mma operands to tf32 (Triton's default `tl.dot` precision on the GPU, which the port keeps)
computes what Triton computes on a GPU, not what its interpreter computes (full f32): its float outputs are
compared within TF32_RTOL of the largest reference value (tf32 keeps 10 mantissa bits, a unit roundoff of
2^-11 per operand; over the corpus' dot products the error stays below 2e-3 of the largest output, while a
changed operator, mask or stride moves elements by far more).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .errors import InterpretError

ROOT = Path(__file__).resolve().parents[3]
REFERENCE_TOOL = ROOT / "tools" / "triton_reference.py"
DEFAULT_REFS = ROOT / "tests" / "fixtures" / "triton_refs"

_IR_DTYPE = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "i32", "int64": "i64",
             "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2", "int8": "i8", "uint8": "u8", "int16": "i16", "bool": "bool",
             "float8e4nv": "f8e4m3fn", "float8e5": "f8e5m2"}  # (a dtype constexpr names Triton's: `tl.float8e4nv`)
_SCALAR = {"i32": np.int32, "i64": np.int64, "f32": np.float32, "f64": np.float64, "bool": np.bool_}


@lru_cache(maxsize=1)
def reference_tool():
    """tools/triton_reference.py (numpy only when not run): its `make_inputs` rebuilds a case's inputs."""
    if not REFERENCE_TOOL.is_file():
        return None
    spec = importlib.util.spec_from_file_location("_cutile_transpile_triton_reference", REFERENCE_TOOL)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@dataclass
class Reference:
    case: dict
    outputs: dict[str, np.ndarray]
    path: Path
    inputs: dict[str, np.ndarray] | None = None  # a recorded case's inputs (else rebuilt from the seeded specs)
    stale: str = ""  # why a recorded case no longer applies (its source changed since): not replayed

    def make_inputs(self) -> dict[str, np.ndarray]:
        if self.inputs is not None:
            return {n: a.copy() for n, a in self.inputs.items()}
        tool = reference_tool()
        if tool is None:
            raise InterpretError("a seeded case needs tools/triton_reference.py (a checkout of cutile-transpile)")
        return tool.make_inputs(self.case)


MAX_PROGRAMS = 1 << 20  # a recorded grid past this is refused: the replay runs every program on the CPU


def read_reference(p: Path) -> Reference:
    """A case file (ValueError where it is malformed: a recorded case in OUT may have been edited by hand)."""
    with np.load(p, allow_pickle=False) as data:
        case = json.loads(str(data["case"]))
        outs = {k[len("out__"):]: data[k] for k in data.files if k.startswith("out__")}
        ins = {k[len("in__"):]: data[k] for k in data.files if k.startswith("in__")}
    if not isinstance(case, dict):
        raise ValueError("its case is not a JSON object")
    if case.get("recorded"):
        _check_recorded(case, ins, outs)
    return Reference(case, outs, p, ins if case.get("recorded") else None)


def _check_recorded(case: dict, ins: dict, outs: dict) -> None:
    kinds = {"id": str, "kernel": str, "source": str, "source_sha256": str, "inputs": list, "args": list,
             "scalars": dict, "constexprs": dict, "grid": list, "outputs": dict}
    for key, kind in kinds.items():
        if not isinstance(case.get(key), kind):
            raise ValueError(f"`{key}` is missing or not a {kind.__name__}")
    grid = case["grid"]
    if not (1 <= len(grid) <= 3) or not all(isinstance(g, int) and g >= 0 for g in grid) \
            or int(np.prod(grid)) > MAX_PROGRAMS:
        raise ValueError(f"grid {grid} is not 1 to 3 sizes of at most {MAX_PROGRAMS} programs in all")
    for spec in case["inputs"]:
        if not isinstance(spec, dict) or spec.get("name") not in ins or spec.get("name") not in outs:
            raise ValueError("an input without its arrays before and after the launch")
        if ins[spec["name"]].shape != outs[spec["name"]].shape or ins[spec["name"]].ndim != 1:
            raise ValueError(f"`{spec['name']}`'s arrays before and after differ in shape")
    for name, meta in case["outputs"].items():
        tol = meta.get("tol") if isinstance(meta, dict) else None
        if name not in outs or not isinstance(tol, list) or len(tol) != 2 \
                or not all(isinstance(t, (int, float)) for t in tol):
            raise ValueError(f"output `{name}` has no array or no (atol, rtol)")


def load_references(folder: Path) -> dict[tuple[str, str], list[Reference]]:
    """(module stem, kernel name) -> its cases, in file name order."""
    refs: dict[tuple[str, str], list[Reference]] = {}
    for p in sorted(Path(folder).glob("*.npz")):
        ref = read_reference(p)
        refs.setdefault((ref.case["module"].rsplit(".", 1)[-1], ref.case["kernel"]), []).append(ref)
    return refs


# ------------------------------------------------------------------------------------------ the launch

def entry_signature(kernel_rs: str, entry: str) -> list[tuple[str, str]]:
    """(name, Rust type) of each parameter of `entry` in a generated kernel.rs."""
    m = re.search(rf"pub (?:unsafe )?fn {re.escape(entry)}\s*(?:<.*?>)?\s*\((.*?)\)\s*\{{", kernel_rs, re.S)
    if not m:
        raise InterpretError(f"entry `{entry}` not found in kernel.rs")
    out, depth, part = [], 0, ""
    for ch in m.group(1) + ",":  # commas inside a type (`Tensor<E, { [1, B] }>`) do not end a parameter
        depth += ch in "<{[(" and 1 or (-1 if ch in ">}])" else 0)
        if ch == "," and depth == 0:
            if part.strip():
                name, ty = (x.strip() for x in part.split(":", 1))
                out.append((name, ty))
            part = ""
        else:
            part += ch
    return out


def _view_args(param: dict, ty: str, case: dict, base: int, bound: dict) -> list:
    """A Triton output taken as a checked partition of a view of its elements (passes/views.py): the values
    the C symbol passes for it (abi::triton_view, Param::Partition): the address, the view's extents and
    strides, the tile, the strides again. The view's expressions read the scalars, constants and grid."""
    grid = list(case["grid"]) + [1] * (3 - len(case["grid"]))
    env = {**{k: v for k, v in bound.items() if isinstance(v, (int, np.integer))}, **case["constexprs"],
           **{f"__grid{i}": g for i, g in enumerate(grid)}}
    tile = re.search(r"\{\s*\[(.*)\]\s*\}", ty)
    try:
        ev = lambda src: int(eval(compile(src.strip(), "<view>", "eval"), {"__builtins__": {}}, dict(env)))  # noqa: E731
        extents = [ev(x) for x in param["view"]["extents"]]
        strides = [ev(x) for x in param["view"]["strides"]]
        tiles = [ev(x) for x in tile.group(1).split(",")] if tile else []
    except Exception as e:  # a name the case does not set
        raise InterpretError(f"the view of `{param['name']}` is not one the interpreter can pass ({e})") from None
    i32 = lambda v: np.array(v, np.int32)  # noqa: E731
    return ([np.array(base, np.int64)] + [i32(v) for v in extents] + [i32(v) for v in strides]
            + [i32(v) for v in tiles] + [i32(v) for v in strides])


def case_spec(kernel: dict, case: dict, source: Path | None = None) -> dict:
    """The constants of the launch, as the port's Python wrapper computes them: the case's constexprs (a string
    as its index in the kernel's `strings`, a dtype constant by its dtype name), the hidden ones (whether an
    optional pointer was given, whether a stride is 1), the others at the manifest's first specialization."""
    base = dict(kernel["specializations"][0]) if kernel["specializations"] else {}
    bound = _bound(kernel, case)
    strings = kernel.get("strings", {})
    heuristics = heuristic_constants(source, kernel["name"], {**bound, **case["constexprs"]}) if source else {}
    spec = {}
    for p in kernel["params"]:
        if p["kind"] != "const":
            continue
        name = p["name"]
        if p.get("given_of") and p["given_of"] not in bound:  # an optional constexpr: None or a value
            target = p["given_of"]
            if target in case["constexprs"] or target in heuristics:
                v = case["constexprs"][target] if target in case["constexprs"] else heuristics[target]
                spec[name] = int(v is not None)
            elif name in base:
                spec[name] = base[name]
        elif p.get("given_of"):
            spec[name] = int(bound.get(p["given_of"]) is not None)
        elif p.get("unit_of"):
            spec[name] = int(bound.get(p["unit_of"]) == 1)
        elif p.get("desc_of"):  # a host descriptor's hidden block extent: the case's block shape
            owner = next(q for q in kernel["params"] if q["name"] == p["desc_of"])
            spec[name] = case["descriptors"][_desc_arg(kernel, case, owner["name"])]["block"][
                owner["descriptor"][2].index(name)]
        elif name in case["constexprs"] or name in heuristics:
            v = case["constexprs"][name] if name in case["constexprs"] else heuristics[name]
            if name in kernel.get("dtype_consts", ()):
                v = _IR_DTYPE.get(v, v)
            if name in strings:
                v = strings[name].index(v) if v in strings[name] else len(strings[name])
            if v is None and p.get("given"):  # an optional constexpr passed as None: no entry there reads it
                v = 0.0 if p.get("const_type") == "float" else 0
            spec[name] = int(v) if isinstance(v, bool) else v
        elif name in base:
            spec[name] = base[name]
    return spec


def heuristic_constants(source: Path, kernel: str, args: dict) -> dict:
    """The constants `@triton.heuristics({...})` computes for this launch: each lambda of the decorator, read
    from the source (no triton needed) and called with the launch's arguments (arrays by name)."""
    import ast
    try:
        tree = ast.parse(Path(source).read_text())
    except (OSError, SyntaxError):
        return {}
    out: dict = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.FunctionDef) and node.name == kernel):
            continue
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and getattr(deco.func, "attr", getattr(deco.func, "id", "")) == "heuristics" \
                    and deco.args and isinstance(deco.args[0], ast.Dict):
                for k, v in zip(deco.args[0].keys, deco.args[0].values):
                    if not isinstance(k, ast.Constant) or not isinstance(v, ast.Lambda):
                        raise InterpretError(f"a `triton.heuristics` entry the interpreter cannot read: {ast.unparse(v)}")
                    fn = eval(compile(ast.Expression(v), str(source), "eval"),  # noqa: S307 - the kernel's own source
                              {"__builtins__": {"min": min, "max": max, "abs": abs, "int": int, "bool": bool}})
                    try:
                        out[k.value] = fn({**args, **out})
                    except Exception as e:  # noqa: BLE001 - a heuristic on tensors' attributes, say
                        raise InterpretError(f"heuristic `{k.value}` could not be computed (not modelled): {e}") from e
    return out


def _desc_arg(kernel: dict, case: dict, param: str) -> str:
    """The case's argument for a kernel parameter (a host descriptor's name in `case["descriptors"]`)."""
    runtime = [p["name"] for p in kernel["params"] if p["kind"] != "const" and not p.get("desc_of")]
    return case["args"][runtime.index(param)]


def _bound(kernel: dict, case: dict) -> dict:
    """Runtime parameter name -> the case's value: an array's name, a scalar's value, None. A host descriptor
    (`case["descriptors"]`: TensorDescriptor.from_tensor(base, block)) binds its base array, and its hidden
    extents and strides (Param.desc_of) the base's shape and (contiguous) strides."""
    runtime = [p for p in kernel["params"] if p["kind"] != "const" and not p.get("desc_of")]
    if len(runtime) != len(case["args"]):
        raise InterpretError(f"the case passes {len(case['args'])} arguments, the kernel takes {len(runtime)}")
    arrays = {i["name"] for i in case["inputs"]}
    descs = case.get("descriptors", {})
    out = {}
    for p, a in zip(runtime, case["args"]):
        if p.get("descriptor"):
            if a not in descs:
                raise InterpretError(f"`{p['name']}` is a host tensor descriptor; the case passes `{a}`")
            base = descs[a]["base"]
            shape = next(i["shape"] for i in case["inputs"] if i["name"] == base)
            strides = [int(np.prod(shape[i + 1:])) for i in range(len(shape))]
            extents, pitches, _ = p["descriptor"]
            if len(extents) != len(shape):
                raise InterpretError(f"`{p['name']}` has rank {len(extents)}; the case's `{base}` {len(shape)}")
            out[p["name"]] = base
            out.update(zip(extents, shape))
            out.update(zip(pitches, strides))
        else:
            out[p["name"]] = a if p["kind"] == "array" and a in arrays else case["scalars"].get(a)
    return out


def case_dtype(kernel: dict, case: dict) -> str:
    """The element type of each dtype generic (`+`-joined in generic order), from the arrays the case passes."""
    from ..specs import kernel_generics
    dtypes = {i["name"]: i["dtype"] for i in case["inputs"]}
    chosen: dict[str, str] = {}
    by_name = {p["name"]: p for p in kernel["params"]}
    for name, a in _bound(kernel, case).items():
        if by_name[name]["kind"] == "array" and a is not None:
            chosen.setdefault(by_name[name]["dtype"], _IR_DTYPE[dtypes[a]])
    generics = kernel_generics(kernel)
    return "+".join(chosen.get(g, "f32") for g in generics) if generics else "f32"


def launch_args(kernel: dict, signature: list[tuple[str, str]], case: dict, arrays: dict[str, np.ndarray],
                memory: Memory) -> list:
    """The entry's arguments for the case, in signature order (arrays added to `memory`)."""
    bound = {next(p.get("rust_name", p["name"]) for p in kernel["params"] if p["name"] == n): v
             for n, v in _bound(kernel, case).items()}
    optional = {p.get("rust_name", p["name"]) for p in kernel["params"] if p["kind"] == "scalar" and p.get("given")}
    by_rust = {p.get("rust_name", p["name"]): p for p in kernel["params"]}
    bases: dict[str, int] = {}
    tool = reference_tool()
    tables = set(tool.address_tables(case)) if hasattr(tool, "address_tables") else set()
    for name, a in arrays.items():
        if name not in tables:
            bases[name] = memory.add(name, a)
    if tables:  # tables of addresses (`t.data_ptr()` values): the interpreter's addresses of the arrays they list
        tool.fill_addresses(case, arrays, lambda n: bases[n])
        for name in sorted(tables):
            bases[name] = memory.add(name, arrays[name])
    values: list = []
    for name, ty in signature:
        ext = re.fullmatch(r"(\w+)_(shape|stride)(\d+)", name)
        if ty.startswith("&mut Tensor") and bound.get(name) is not None and by_rust[name].get("view"):
            kinds = {p["name"]: p["kind"] for p in kernel["params"]}
            scalars = {n: v for n, v in _bound(kernel, case).items() if kinds[n] == "scalar"}
            values += _view_args(by_rust[name], ty, case, bases[bound[name]], scalars)
        elif ty.startswith("&Tensor") and bound.get(name) is not None and by_rust[name].get("flat"):
            # a Triton pointer the entry only reads, as the `&Tensor` of its span: address, extent, unit stride
            values += [np.array(bases[bound[name]], np.int64), np.array(arrays[bound[name]].size, np.int32),
                       np.array(1, np.int32)]
        elif ty.startswith(("*mut", "*const")):  # None: a null pointer (the kernel never reads it)
            values.append(np.array(bases[bound[name]] if bound[name] is not None else 0, np.int64))
        elif ext and ext.group(1) in bound:
            arr = arrays.get(bound[ext.group(1)]) if bound[ext.group(1)] is not None else None
            size = 0 if arr is None else arr.size
            values.append(np.array(size if ext.group(2) == "shape" else int(arr is not None), np.int32))
        elif name in bound and ty in _SCALAR:
            # an optional scalar passed as None: any value (its variant never reads it)
            values.append(np.array(0 if bound[name] is None and name in optional else bound[name], _SCALAR[ty]))
        else:
            raise InterpretError(f"entry parameter `{name}: {ty}` is not one the interpreter can pass")
    return values


# ------------------------------------------------------------------------------------------ compare

TF32_RTOL = 2e-3


def tolerance(meta: dict, want: np.ndarray, tf32: bool) -> tuple[float, float]:
    atol, rtol = meta["tol"]
    if tf32 and meta["dtype"].startswith(("float", "bfloat")) and want.size:
        finite = np.abs(want.astype(np.float64))[np.isfinite(want.astype(np.float64))]
        scale = float(finite.max()) if finite.size else 0.0
        return max(atol, TF32_RTOL * scale), max(rtol, TF32_RTOL)
    return atol, rtol


def first_difference(name: str, got: np.ndarray, want: np.ndarray, dtype: str, tol) -> str | None:
    """None when `got` matches `want` within (atol, rtol); else the first differing element, both values."""
    if dtype in ("float8_e4m3fn", "float8_e5m2"):  # raw bytes
        g, w = _fp8_values(got, dtype), _fp8_values(want, dtype)
    else:
        g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape:
        return f"`{name}`: shape {g.shape}, the reference {w.shape}"
    if w.dtype.kind in "iub" and not dtype.startswith("float8"):
        bad = g != w
    else:
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        atol, rtol = tol
        both_nan = np.isnan(g64) & np.isnan(w64)
        with np.errstate(invalid="ignore"):
            err = np.where(both_nan, 0.0, np.abs(g64 - w64))
            bad = ~(err <= atol + rtol * np.where(np.isnan(w64), 0.0, np.abs(w64)))
            bad &= ~((g64 == w64) & np.isinf(w64))
    if not bad.any():
        return None
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    return (f"`{name}`{list(idx)}: port {g[idx]!r}, Triton {w[idx]!r} ({int(bad.sum())} of {bad.size} elements "
            f"differ)")


def _fp8_values(a: np.ndarray, dtype: str) -> np.ndarray:
    tool = reference_tool()
    if dtype == "float8_e4m3fn" and tool is not None:
        return tool.fp8_e4m3_decode(a.view(np.uint8))
    import ml_dtypes
    return a.view(np.uint8).view(getattr(ml_dtypes, dtype)).astype(np.float64)


@dataclass
class CaseResult:
    case: str  # the case id
    verdict: str  # numbers_match | numbers_differ | not_interpreted
    detail: str = ""
    seconds: float = 0.0  # CPU seconds interpreting
    entry: str = ""  # the entry the case ran


def check_case(ir_text: str, kernel: dict, signature: list[tuple[str, str]], ref: Reference) -> CaseResult:
    """Run one case through the entry's Tile IR and compare every output with the reference."""
    import time
    t0 = time.process_time()  # CPU seconds: the interpreter's cost, whatever else runs on the machine
    case = ref.case
    try:
        arrays = ref.make_inputs()
        from .machine import Machine, parse_entry  # the interpreter (numpy, ml_dtypes) only where a case runs
        from .values import Memory
        memory = Memory()
        args = launch_args(kernel, signature, case, arrays, memory)
        Machine(memory, tuple(case["grid"])).run(parse_entry(ir_text), args)
    except InterpretError as e:
        return CaseResult(case["id"], "not_interpreted" if _unmodelled(str(e)) else "numbers_differ", str(e),
                          time.process_time() - t0)
    diffs = []
    for name, meta in case["outputs"].items():
        tol = tolerance(meta, ref.outputs[name], "tf32" in ir_text)
        d = first_difference(name, arrays[name], ref.outputs[name], meta["dtype"], tol)
        if d:
            diffs.append(d)
    return CaseResult(case["id"], "numbers_differ" if diffs else "numbers_match", "; ".join(diffs),
                      time.process_time() - t0)


def _unmodelled(message: str) -> bool:
    """An error of the interpreter's own limits (an op or attribute it does not model), not of the port."""
    return "not known to the interpreter" in message or "not modelled" in message or "does not read" in message \
        or "not one the interpreter" in message or "needs ml_dtypes" in message \
        or "the interpreter failed" in message


def ir_key(rust_file: Path, module: str, entry: str, generics: list[str]) -> str:
    h = hashlib.sha256(rust_file.read_bytes())
    h.update(json.dumps([module, entry, generics]).encode())
    return h.hexdigest()
