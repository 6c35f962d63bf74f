"""Runs inside the user's own Python process under `cutile-transpile record` (copied beside a `sitecustomize.py`,
so it must import nothing of the tool: numpy, the standard library, and triton where the user's code imports it).

When `triton.runtime.interpreter` is imported (TRITON_INTERPRET=1), `InterpretedFunction.run` is wrapped: each
launch of a kernel the generated crate ports (`config["kernels"]`: [source path, kernel name]) is snapshotted,
every tensor argument's memory before and after the launch, with its scalars, constants and grid, and written to
`config["cases"]` as one `.npz` per distinct launch, named by a SHA-256 of its content. verify replays them
through the port's Tile IR (transpiler/verify/interpret). A launch that cannot be replayed faithfully is skipped
with one line on stderr saying why (never a wrong reference).

The interpreter is also made to compute what the GPU computes where Triton 3.x's interpreter does not
(`fidelity_patches`, which tools/triton_reference.py applies too): a Python float argument is an fp32 scalar, a
downcast to fp8e4nv rounds to nearest even and saturates, a runtime loop bound reads a scalar argument's element.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import inspect
import json
import os
import sys
from pathlib import Path

_CONFIG: dict = {}
_SEEN: dict[tuple[str, str], int] = {}  # (source, kernel) -> launches recorded by this process
_DTYPES = {"float32": "<f4", "float16": "<f2", "float64": "<f8", "int8": "i1", "uint8": "u1", "int16": "<i2",
           "int32": "<i4", "int64": "<i8", "uint16": "<u2", "uint32": "<u4", "uint64": "<u8", "bool": "?",
           "float8_e4m3fn": "u1", "float8_e5m2": "u1"}  # f8: raw bytes (the check decodes them)
# Triton's interpreter computes bfloat16 on raw bits: its outputs are not a reference for a port
_NOT_REFERENCE = {"bfloat16": "Triton's interpreter does not compute bfloat16 as the GPU does"}


def _say(msg: str) -> None:
    print(f"cutile-transpile record: {msg}", file=sys.stderr)


def install(config_path: str) -> None:
    _CONFIG.update(json.loads(Path(config_path).read_text()))
    # (the source's real path, kernel name) -> the source as the manifest names it (relative to OUT)
    _CONFIG["wanted"] = {(os.path.realpath(path), name): rel for path, name, rel in _CONFIG["kernels"]}
    sys.meta_path.insert(0, _PatchOnImport())


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Patches triton's interpreter right after it is imported (importing triton here would cost every Python
    process the command starts a second, and fail where triton is not installed)."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "triton.runtime.interpreter":
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            spec = finder.find_spec(fullname, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader)
                return spec
        return None


class _Loader(importlib.abc.Loader):
    def __init__(self, inner):
        self.inner = inner

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        try:
            _patch(module)
        except (AttributeError, ImportError) as e:  # another triton's interpreter: the command runs unrecorded
            _say(f"this triton's interpreter is not one the recorder knows ({e}); nothing is recorded")


def fp8_e4m3_decode(bits):
    """e4m3fn bits -> float64 values (NaN for 0x7F/0xFF)."""
    import numpy as np
    b = np.asarray(bits).astype(np.int64)
    sign = np.where(b & 0x80, -1.0, 1.0)
    exp = (b >> 3) & 0xF
    man = b & 0x7
    val = np.where(exp == 0, man / 8.0 * 2.0 ** -6, (1 + man / 8.0) * 2.0 ** (exp - 7))
    val = np.where((exp == 15) & (man == 7), np.nan, val)
    return sign * val


def fp8_e4m3_encode(x):
    """float -> e4m3fn bits, round to nearest (ties to the even code), saturating at +-448, NaN -> 0x7F (the GPU's
    cvt.rn.satfinite)."""
    import numpy as np
    values = fp8_e4m3_decode(np.arange(0x7F))  # the finite non-negative codes, increasing
    x = np.asarray(x)
    mag = np.minimum(np.abs(x), 448.0)
    hi = np.clip(np.searchsorted(values, mag), 1, 0x7E)
    lo = hi - 1
    dlo, dhi = mag - values[lo], values[hi] - mag
    code = np.where((dlo < dhi) | ((dlo == dhi) & (lo % 2 == 0)), lo, hi)
    code = np.where(np.isnan(x), 0x7F, code | np.where(np.signbit(x), 0x80, 0))
    return code.astype(np.uint8)


def fidelity_patches(interp) -> None:
    """Triton's interpreter made to compute what the GPU computes where Triton 3.x's does not (also used by
    tools/triton_reference.py, which wrote the corpus' references)."""
    import numpy as np
    import triton.language as tl

    orig_cvt = interp._implicit_cvt

    def implicit_cvt(arg):  # a Python float reaches the kernel as an fp32 scalar, as on the GPU
        if isinstance(arg, float):
            return tl.tensor(interp.TensorHandle(np.array([arg], dtype=np.float32), tl.float32), tl.float32)
        return orig_cvt(arg)

    interp._implicit_cvt = implicit_cvt
    orig_convert = interp._convert_float

    def convert_float(input, input_dtype, output_dtype, rounding_mode):
        # the interpreter's downcast adds the rounding bit to the mantissa without carrying into the exponent
        # (127.9 -> fp8e4nv gives 64, not 128) and rounds ties up; encode e4m3fn here, RNE, saturating to +-448
        # like the GPU's cvt.rn.satfinite
        if output_dtype == tl.float8e4nv and input_dtype.primitive_bitwidth > 8:
            return fp8_e4m3_encode(np.asarray(input).astype(np.float64))
        return orig_convert(input, input_dtype, output_dtype, rounding_mode)

    interp._convert_float = convert_float
    # a scalar argument is a one-element array in the interpreter, and its `__index__` (a runtime loop bound,
    # `range(start, n, step)`) is `int(array)`, which numpy 2.x refuses for arrays of rank > 0: its one element
    orig_set_attr = interp._LangPatchScope.set_attr

    def set_attr(self, obj, name, value):
        if name == "__index__" and obj is tl.tensor:
            value = lambda t: int(np.asarray(t.handle.data).reshape(-1)[0])  # noqa: E731
        return orig_set_attr(self, obj, name, value)

    interp._LangPatchScope.set_attr = set_attr


def _patch(interp) -> None:
    fidelity_patches(interp)
    orig_run = interp.InterpretedFunction.run

    def run(self, *args, grid, warmup, **kwargs):
        launch = None if warmup else _begin(self.fn, args, kwargs, grid)
        result = orig_run(self, *args, grid=grid, warmup=warmup, **kwargs)
        if launch is not None:
            try:
                _finish(launch)
            except Exception as e:  # noqa: BLE001 - a case not written (a full disk): said, the run goes on
                _say(f"a launch of `{self.fn.__name__}` not recorded: {type(e).__name__}: {e}")
        return result

    interp.InterpretedFunction.run = run


# ------------------------------------------------------------------------------------------ one launch

def _dtype_name(t) -> str:
    d = getattr(t, "dtype", None)
    name = getattr(d, "name", None) if not hasattr(d, "is_floating_point") else None
    text = str(name or d)
    return text.removeprefix("torch.")


def _span(t) -> tuple[int, int]:
    """(address, elements) of the memory a tensor argument may address: from its first element to its last."""
    shape = tuple(int(s) for s in t.shape)
    strides = tuple(int(s) for s in t.stride())
    if any(s < 0 for s in strides):
        raise _Skip("a tensor with a negative stride")
    n = 0 if any(d == 0 for d in shape) else 1 + sum((d - 1) * s for d, s in zip(shape, strides))
    return int(t.data_ptr()), n


def _read(t, n: int, dtype: str):
    """The `n` elements from the tensor's first one, as a numpy array (a copy)."""
    import numpy as np
    if type(t).__module__.startswith("torch"):
        import torch
        flat = torch.as_strided(t.detach(), (n,), (1,), t.storage_offset()).cpu().contiguous()
        raw = flat.view(torch.uint8).numpy().tobytes() if n else b""
    else:  # an object in host memory with `data_ptr()` (a numpy-backed tensor)
        import ctypes
        size = n * np.dtype(_DTYPES[dtype]).itemsize
        raw = ctypes.string_at(int(t.data_ptr()), size) if size else b""
    return np.frombuffer(raw, dtype=_DTYPES[dtype]).copy()


class _Skip(Exception):
    pass


def _constexpr(v):
    import triton.language as tl
    if isinstance(v, tl.dtype):
        for name in ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                     "uint16", "uint32", "uint64", "float8e4nv", "float8e5", "int1"):
            if getattr(tl, name, None) == v:
                return name
        raise _Skip(f"a dtype constant {v}")
    if isinstance(v, tl.constexpr):
        v = v.value
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if hasattr(v, "item") and not hasattr(v, "data_ptr"):  # a numpy scalar
        return v.item()
    raise _Skip(f"a constant of type {type(v).__name__}")


def _begin(fn, args, kwargs, grid):
    """The launch's description and inputs, or None (not a ported kernel, enough recorded, or not replayable)."""
    try:
        source = os.path.realpath(inspect.getsourcefile(fn) or "")
    except TypeError:
        return None
    if (source, fn.__name__) not in _CONFIG["wanted"]:
        return None
    if _SEEN.get((source, fn.__name__), 0) >= _CONFIG["max_per_kernel"]:
        return None
    try:
        return _describe(fn, source, args, kwargs, grid)
    except _Skip as e:
        _say(f"a launch of `{fn.__name__}` not recorded: {e}")
    except Exception as e:  # noqa: BLE001 - the user's run goes on as without the recorder
        _say(f"a launch of `{fn.__name__}` not recorded: {type(e).__name__}: {e}")
    return None


def _describe(fn, source, args, kwargs, grid):
    sig = inspect.signature(fn)
    bound = sig.bind(*args, **{k: v for k, v in kwargs.items() if k in sig.parameters})
    bound.apply_defaults()
    params = bound.arguments
    constexprs = {name for name, p in sig.parameters.items() if "constexpr" in str(p.annotation)}
    g = grid(dict(params)) if callable(grid) else grid
    g = [int(x) for x in (g if isinstance(g, (tuple, list)) else (g,))]
    case = {"recorded": True, "kernel": fn.__name__, "source": _CONFIG["wanted"][(source, fn.__name__)],
            "source_sha256": hashlib.sha256(Path(source).read_bytes()).hexdigest(), "module": fn.__module__,
            "inputs": [], "args": [], "scalars": {}, "constexprs": {}, "grid": g, "outputs": {}}
    tensors, spans, size = {}, [], 0
    for name, v in params.items():
        if name in constexprs:
            case["constexprs"][name] = _constexpr(v)
            continue
        case["args"].append(name)
        if hasattr(v, "data_ptr"):
            dtype = _dtype_name(v)
            if dtype in _NOT_REFERENCE:
                raise _Skip(f"`{name}` is {dtype}: {_NOT_REFERENCE[dtype]}")
            if dtype not in _DTYPES:
                raise _Skip(f"`{name}` has the element type {dtype}")
            ptr, n = _span(v)
            item = _read_itemsize(dtype)
            for other, (p2, n2, i2) in zip(tensors, spans):
                if ptr < p2 + n2 * i2 and p2 < ptr + n * item:
                    raise _Skip(f"`{name}` and `{other}` share memory (the replay keeps each array apart)")
            tensors[name] = v
            spans.append((ptr, n, item))
            size += n * item
            case["inputs"].append({"name": name, "shape": [n], "dtype": dtype})
        elif v is None:
            continue  # an optional pointer not given: the name binds nothing
        elif isinstance(v, (bool, int, float)) or hasattr(v, "item"):
            case["scalars"][name] = v.item() if hasattr(v, "item") else v
        else:
            raise _Skip(f"`{name}` is a {type(v).__name__} (tensor descriptors and tuples are not recorded yet)")
    if size > _CONFIG["max_bytes"]:
        raise _Skip(f"its tensors hold {size} bytes, more than --max-bytes {_CONFIG['max_bytes']}")
    before = {name: _read(t, s[1], _dtype_name(t)) for (name, t), s in zip(tensors.items(), spans)}
    return case, tensors, spans, before, source


def _read_itemsize(dtype: str) -> int:
    import numpy as np
    return np.dtype(_DTYPES[dtype]).itemsize


def _finish(launch) -> None:
    import numpy as np
    case, tensors, spans, before, source = launch
    after = {name: _read(t, s[1], _dtype_name(t)) for (name, t), s in zip(tensors.items(), spans)}
    for spec in case["inputs"]:  # every array is compared after the replay: a port must not write an input
        case["outputs"][spec["name"]] = {"dtype": spec["dtype"], "tol": _CONFIG["tolerance"].get(spec["dtype"], [0, 0])}
    h = hashlib.sha256(json.dumps(case, sort_keys=True).encode())
    for name in sorted(before):
        h.update(before[name].tobytes() + after[name].tobytes())
    digest = h.hexdigest()[:16]
    case["id"] = f"recorded-{digest}"
    folder = Path(_CONFIG["cases"])
    path = folder / f"{case['kernel']}-{digest}.npz"
    _SEEN[(source, case["kernel"])] = _SEEN.get((source, case["kernel"]), 0) + 1
    if path.exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{path.name}.{os.getpid()}.tmp"
    arrays = {f"in__{n}": a for n, a in before.items()}
    arrays.update({f"out__{n}": a for n, a in after.items()})
    with open(tmp, "wb") as f:
        np.savez_compressed(f, case=np.array(json.dumps(case, sort_keys=True)), **arrays)
    os.replace(tmp, path)  # whole files only, even when the command is interrupted
    _say(f"recorded a launch of `{case['kernel']}` ({path.name})")
