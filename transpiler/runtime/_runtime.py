"""Calling the Rust ports: the C-ABI mirror, argument checks, library loading and launch routing.

Everything here mirrors `src/abi.rs` of the crate; `tests` compare the two layouts through
`cutile_abi_layout`. Arguments are checked before the library is called, and the library checks them
again before it touches the GPU.
"""

from __future__ import annotations

import ctypes
import hashlib
import inspect
import json
import math
import operator
import os
import struct
import sys
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

# what varies per crate, and the ABI's tables (rendered from transpiler/emit/ffi.py, the tables abi.rs is
# rendered from): the package's `_crate.py`
from ._crate import (ABI_DIGEST, CAI_DTYPES, CODES, CRATE, DL_DTYPES, DTYPES, FASTLAUNCH_DIGEST, FIRE_WORDS, GENERICS,
                     MAX_RANK, TORCH_DTYPES)

CRATE_DIR = Path(__file__).resolve().parents[2]
ABI_VERSION = 2  # 2: `cutile_hint_next`
LIBRARY_ENV = "CUTILE_RS_LIB"
FASTLAUNCH_ENV = "CUTILE_RS_FASTLAUNCH"  # the compiled fast path's file; "0" or "off": none
BACKEND_ENV = "CUTILE_BACKEND"
BACKENDS = ("python", "cutile-rs")


class CutileTensor(ctypes.Structure):
    """`abi::CutileTensor`: a borrowed device tensor (strides in elements)."""
    _fields_ = [("ptr", ctypes.c_void_p), ("ndim", ctypes.c_int32), ("shape", ctypes.c_int64 * MAX_RANK),
                ("strides", ctypes.c_int64 * MAX_RANK), ("dtype", ctypes.c_int32)]


# ------------------------------------------------------------------------------------------ errors

class CutileRsError(RuntimeError):
    """A call into the Rust ports failed; `code` is the ABI code name (None for checks made in Python)."""

    def __init__(self, message: str, code: str | None = None):
        super().__init__(f"{code}: {message}" if code else message)
        self.code = code


class ArgumentError(CutileRsError, ValueError):
    """An argument has the wrong rank, shape, strides, alignment, value or device."""


class ArgumentTypeError(CutileRsError, TypeError):
    """An argument has the wrong type or dtype, or lives in host memory."""


class LibraryError(CutileRsError):
    """The shared library is missing, stale or does not match this package."""


# -------------------------------------------------------------------------------------- kernel specs

@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # array | scalar | const
    rank: int = 0
    dtype: str = ""  # arrays: E or a dtype; scalars: i32 | f32 | bool
    const_type: str = ""  # consts: int | bool | float
    output: bool = False
    flat: bool = False  # a Triton pointer: any tensor; its elements are addressed by offset from its base
    domain: tuple[str, ...] = ()  # the dtypes its generic may take (empty: the kernel's dtypes)
    # an optional Triton pointer, constexpr or scalar (None allowed): the hidden constant that says if it was given
    given: str = ""
    ranks: tuple[int, ...] = ()  # a rank that depends on a constant: the ranks its entries take (Entry.ranks)
    dtypes: tuple[str, ...] = ()  # a dtype that differs per entry: the dtypes its entries take (Entry.array_dtypes)
    # never read by the kernel (an empty placeholder): any array (its descriptor passed unchecked), or a scalar
    # or None (a null descriptor)
    unused: bool = False
    # read only under a constant condition (manifest `read_when`): the condition over the constants, as keyword
    # arguments; where it is false the array is unused for that launch (passed as a null descriptor, unchecked)
    read_when: Callable[..., bool] | None = None


@dataclass(frozen=True)
class Entry:
    name: str
    predicates: tuple[str, ...]
    selects: Callable[..., bool]  # the predicates over the constants, as keyword arguments
    dtypes: tuple[str, ...] = ()  # the element types E may have in this entry (empty: any)
    ranks: tuple[tuple[str, int], ...] = ()  # (array, rank) where its rank depends on a constant
    # (array, dtype) where its dtype differs per entry: entries of the same constants differ in it
    array_dtypes: tuple[tuple[str, str], ...] = ()

    def takes(self, consts: dict, element: str | None) -> bool:
        return self.selects(**consts) and (not self.dtypes or element in self.dtypes)

    def takes_arrays(self, arrays: dict) -> bool:
        return all(arrays[n].dtype == d for n, d in self.array_dtypes if n in arrays)


@dataclass(frozen=True)
class KernelSpec:
    name: str
    symbol: str
    source: str  # relative to the crate
    source_sha256: str
    params: tuple[Param, ...]
    dtypes: tuple[str, ...]
    entries: tuple[Entry, ...]
    closure: tuple[str, ...] = ()  # a factory's kernel: its last constants are values of its closure
    language: str = "cutile-python"  # "triton": launched as `kernel[grid](...)`
    strings: dict = field(default_factory=dict)  # string constants: name -> the strings, indexed by the port
    dtype_consts: tuple = ()  # string constants whose strings are dtype names: given a tl or torch dtype
    packed: str = ""  # the symbol's packed form (`cutilepk_<kernel>`, ffi.rs), which the compiled fast path calls
    # Triton parameters passed a host-made tensor descriptor: name -> (its extents' parameters, its strides'
    # (but the last, which is 1), its block extents' (each a hidden constant or a constexpr of the kernel),
    # whether each block extent is a hidden constant); the wrapper reads them from the descriptor object
    descriptors: dict = field(default_factory=dict)
    # the entry hints the port was verified with (its decorator's): (Tile IR name, or `sm_NN:` and the name,
    # value); a launch of a `replace_hints` copy asking for others passes them to the symbol (`kernel_hints`)
    hints: tuple = ()
    # the combinations of the generics' dtypes (E, E2, ... in order) the port exports, where it exports fewer than
    # every one (more than two generics); empty: every combination of `dtypes`
    combinations: tuple = ()

    @property
    def source_path(self) -> Path:
        return (CRATE_DIR / self.source).resolve()


@dataclass
class DeviceArray:
    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements
    dtype: str
    device: int | None  # None: not known from the object itself
    keepalive: object = None
    readonly: bool = False


@dataclass
class Plan:
    """A checked launch: what is passed to the symbol (no GPU touched yet)."""
    spec: KernelSpec
    consts: dict
    entry: int
    element_type: str | None
    arrays: dict = field(default_factory=dict)  # name -> DeviceArray
    c_args: list = field(default_factory=list)
    grid: tuple[int, int, int] = (1, 1, 1)
    device: int = 0
    stream: int = 0
    # launch hints (occupancy, num_ctas, num_worker_warps; 0: the entry's own) that replace the entry's for
    # this call (`cutile_hint_next`); None: the entry's own
    hints: tuple[int, int, int] | None = None


# ----------------------------------------------------------------------------------- array adapters

_KDL_CUDA = 2


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(strides))


_TORCH_BY_DTYPE: dict = {}


def _torch_array(obj, name: str) -> DeviceArray:
    if not obj.is_cuda:
        raise ArgumentTypeError(f"`{name}` is a torch tensor on {obj.device}; the Rust ports take CUDA tensors")
    dtype = _TORCH_BY_DTYPE.get(obj.dtype)
    if dtype is None:
        dtype = TORCH_DTYPES.get(str(obj.dtype))
        if dtype is None:
            raise ArgumentTypeError(f"`{name}` has dtype {obj.dtype}, which the ABI has no code for")
        _TORCH_BY_DTYPE[obj.dtype] = dtype
    return DeviceArray(obj.data_ptr(), tuple(obj.shape), obj.stride(), dtype, obj.get_device(), obj)


_I64 = (-2**63, 2**63 - 1)
_PTR_MAX = 2**64 - 1
_DL_DEVICE_NAMES = {1: "host memory", 3: "pinned host memory", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 9: "VPI",
                    10: "ROCm", 11: "pinned ROCm host memory", 12: "an extension device", 13: "CUDA managed memory",
                    14: "oneAPI"}


def _as_int(value):
    """`value` as an int if it is an integer (numpy ints included; not bool, float or str), else None."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        return None
    try:
        return operator.index(value)
    except Exception:  # noqa: BLE001 - a broken __index__ of a foreign object
        return None


def _index(value, what: str) -> int:
    """An integer field of an array protocol, within int64: ctypes would silently wrap anything larger."""
    v = _as_int(value)
    if v is None:
        raise ArgumentTypeError(f"{what} must be an int, got {value!r}")
    if not _I64[0] <= v <= _I64[1]:
        raise ArgumentError(f"{what} is {v}, beyond int64")
    return v


def _dims(value, what: str) -> tuple[int, ...]:
    """A shape or strides tuple of ints, rank at most MAX_RANK."""
    if not isinstance(value, (tuple, list)):
        raise ArgumentTypeError(f"{what} must be a tuple of ints, got {value!r}")
    if len(value) > MAX_RANK:
        raise ArgumentError(f"{what} has {len(value)} entries; descriptors carry at most rank {MAX_RANK}")
    return tuple(_index(v, f"{what}[{i}]") for i, v in enumerate(value))


def _pointer(value, what: str) -> int:
    if value is None:
        return 0
    v = _as_int(value)
    if v is None:
        raise ArgumentTypeError(f"{what} must be an int, got {value!r}")
    if not 0 <= v <= _PTR_MAX:
        raise ArgumentError(f"{what} is {v}, not a 64-bit address")
    return v


def _cai_array(obj, name: str) -> DeviceArray | None:
    try:
        cai = getattr(obj, "__cuda_array_interface__", None)
    except Exception as e:  # noqa: BLE001 - a property of a foreign object that raises
        raise ArgumentTypeError(f"`{name}`: reading __cuda_array_interface__ failed: {type(e).__name__}: {e}") from None
    if cai is None:
        return None
    what = f"`{name}`: __cuda_array_interface__"
    if not isinstance(cai, dict):
        raise ArgumentTypeError(f"{what} must be a dict, got {type(cai).__name__}")
    for key in ("shape", "typestr", "data"):
        if key not in cai:
            raise ArgumentTypeError(f"{what} has no {key!r}")
    typestr = cai["typestr"]
    dtype = CAI_DTYPES.get(typestr) if isinstance(typestr, str) else None
    if dtype is None:
        raise ArgumentTypeError(f"`{name}` has typestr {typestr!r}, which the ABI has no code for")
    if cai.get("mask") is not None:
        raise ArgumentTypeError(f"`{name}` has a mask; masked arrays are not supported")
    shape = _dims(cai["shape"], f"{what} shape")
    if any(d < 0 for d in shape):
        raise ArgumentError(f"`{name}` has negative dimensions {shape}")
    size = DTYPES[dtype][1]
    if cai.get("strides") is None:
        strides = _contiguous(shape)
    else:
        byte_strides = _dims(cai["strides"], f"{what} strides")
        if len(byte_strides) != len(shape):
            raise ArgumentError(f"`{name}` has {len(byte_strides)} strides for {len(shape)} dimensions")
        if any(s % size for s in byte_strides):
            raise ArgumentError(f"`{name}` has byte strides {byte_strides} that are not whole "
                                f"{size}-byte elements")
        strides = tuple(s // size for s in byte_strides)
    data = cai["data"]
    if not isinstance(data, (tuple, list)) or len(data) != 2:
        raise ArgumentTypeError(f"{what} data must be a (pointer, read_only) pair, got {data!r}")
    ptr = _pointer(data[0], f"{what} data pointer")
    if not isinstance(data[1], (bool, int)) and _as_int(data[1]) is None:
        raise ArgumentTypeError(f"{what} data read-only flag must be a bool, got {data[1]!r}")
    return DeviceArray(ptr, shape, strides, dtype, None, obj, bool(data[1]))


def _dlpack_array(obj, name: str) -> DeviceArray:
    try:
        device = obj.__dlpack_device__()
    except Exception as e:  # noqa: BLE001 - a foreign producer
        raise ArgumentTypeError(f"`{name}`: __dlpack_device__() failed: {type(e).__name__}: {e}") from None
    if not isinstance(device, (tuple, list)) or len(device) != 2:
        raise ArgumentTypeError(f"`{name}`: __dlpack_device__() must return (device_type, device_id), got {device!r}")
    dev_type, dev_id = (_index(v, f"`{name}`: DLPack device") for v in device)
    if dev_type != _KDL_CUDA:
        kind = _DL_DEVICE_NAMES.get(dev_type, "not a CUDA device")
        raise ArgumentTypeError(f"`{name}` lives on DLPack device type {dev_type} ({kind}); "
                                "the Rust ports take CUDA device arrays")
    try:
        capsule = obj.__dlpack__()
    except Exception as e:  # noqa: BLE001
        raise ArgumentTypeError(f"`{name}`: __dlpack__() failed: {type(e).__name__}: {e}") from None
    valid = ctypes.pythonapi.PyCapsule_IsValid
    valid.restype, valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
    if not valid(capsule, b"dltensor"):
        raise ArgumentTypeError(f"`{name}`: __dlpack__() did not return a live DLPack capsule named 'dltensor' "
                                f"(got {type(capsule).__name__}; a consumed capsule is named 'used_dltensor')")
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    address = get(capsule, b"dltensor")
    if not address:
        raise ArgumentTypeError(f"`{name}`: the DLPack capsule holds a null tensor")
    t = _DLTensor.from_address(address)
    dtype = DL_DTYPES.get((t.dtype.code, t.dtype.bits)) if t.dtype.lanes == 1 else None
    if dtype is None:
        raise ArgumentTypeError(f"`{name}` has a DLPack dtype the ABI has no code for")
    if not 0 <= t.ndim <= MAX_RANK:
        raise ArgumentError(f"`{name}` has DLPack ndim {t.ndim}; descriptors carry rank 0 to {MAX_RANK}")
    if t.ndim and not t.shape:
        raise ArgumentTypeError(f"`{name}`: the DLPack tensor has a null shape")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if any(d < 0 for d in shape):
        raise ArgumentError(f"`{name}` has negative dimensions {shape}")
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else _contiguous(shape)
    ptr = (t.data or 0) + t.byte_offset if t.data else 0
    if ptr > _PTR_MAX:
        raise ArgumentError(f"`{name}`: DLPack data pointer plus byte offset is past the 64-bit address space")
    return DeviceArray(ptr, shape, strides, dtype, dev_id, (obj, capsule))


def as_device_array(obj, name: str) -> DeviceArray:
    """A torch tensor, an object with `__cuda_array_interface__`, or a DLPack producer on a CUDA device.
    A malformed protocol object raises ArgumentError/ArgumentTypeError, never a bare Python error."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):  # the common case, without the generic protocols
        return _torch_array(obj, name)
    arr = _cai_array(obj, name)
    if arr is not None:
        return arr
    if hasattr(obj, "__dlpack_device__") and hasattr(obj, "__dlpack__"):
        return _dlpack_array(obj, name)
    raise ArgumentTypeError(f"`{name}` is a {type(obj).__name__}: pass a CUDA torch tensor or an object with "
                            "__cuda_array_interface__ or __dlpack__ on a CUDA device (host arrays are refused)")


_DIMS = ctypes.c_int64 * MAX_RANK


def descriptor(arr: DeviceArray) -> CutileTensor:
    return CutileTensor(arr.ptr or None, len(arr.shape), _DIMS(*arr.shape), _DIMS(*arr.strides), DTYPES[arr.dtype][0])


# ----------------------------------------------------------------------------------------- planning

_GRID_LIMITS = (2**31 - 1, 65535, 65535)  # CUDA's grid limits, as `abi::grid`


def _grid(grid) -> tuple[int, int, int]:
    if isinstance(grid, (str, bytes)) or not hasattr(grid, "__iter__"):
        raise ArgumentTypeError(f"grid must be a tuple of 1 to 3 ints, got {grid!r}")
    try:
        items = tuple(grid)
    except Exception:  # noqa: BLE001 - a foreign iterable that fails
        raise ArgumentTypeError(f"grid must be a tuple of 1 to 3 ints, got {grid!r}") from None
    if not 1 <= len(items) <= 3:
        raise ArgumentError(f"grid must be 1 to 3 positive ints, got {grid!r}")
    dims = []
    for i, g in enumerate(items):
        d = _as_int(g)
        if d is None:
            raise ArgumentTypeError(f"grid must be a tuple of 1 to 3 ints, got {grid!r}")
        if not 1 <= d <= _GRID_LIMITS[i]:
            raise ArgumentError(f"grid dimension {i} is {d}, outside 1..={_GRID_LIMITS[i]} (grid {grid!r})")
        dims.append(d)
    return tuple(dims) + (1,) * (3 - len(dims))


def _stream_handle(stream) -> int:
    """The raw CUstream of a torch stream, a `__cuda_stream__` object or an int handle (None: 0, the legacy
    default stream)."""
    if stream is None:
        return 0
    if isinstance(stream, int) and not isinstance(stream, bool):
        handle, what = stream, "stream handle"
    elif hasattr(stream, "__cuda_stream__"):
        try:
            pair = stream.__cuda_stream__()
        except Exception as e:  # noqa: BLE001 - a foreign stream object
            raise ArgumentTypeError(f"__cuda_stream__() failed: {type(e).__name__}: {e}") from None
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ArgumentTypeError(f"__cuda_stream__() must return (version, handle), got {pair!r}")
        handle, what = pair[1], "__cuda_stream__() handle"
    elif hasattr(stream, "cuda_stream"):
        handle, what = stream.cuda_stream, "cuda_stream"
    elif hasattr(stream, "handle"):
        handle, what = stream.handle, "stream handle"
    else:
        raise ArgumentTypeError(f"cannot take a CUDA stream handle from {type(stream).__name__}")
    value = _as_int(handle)
    if value is None:
        raise ArgumentTypeError(f"{what} must be an int, got {handle!r}")
    handle = value
    if not 0 <= handle <= _PTR_MAX:
        raise ArgumentError(f"{what} is {handle}, not a 64-bit CUstream handle")
    return handle


def _pointer_device(ptr: int) -> int | None:
    """The device that owns `ptr`, asked from the driver (None without one)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    ordinal = ctypes.c_int(-1)
    rc = cuda.cuPointerGetAttribute(ctypes.byref(ordinal), ctypes.c_int(9), ctypes.c_uint64(ptr))
    if rc != 0:
        raise ArgumentTypeError(f"pointer {ptr:#x} is not CUDA device memory (driver error {rc})")
    return ordinal.value


_CHECKED: dict = {}  # layout key -> what a fully checked earlier call with that layout established


def plan(spec: KernelSpec, args, grid, stream=None) -> Plan:
    """Checks a launch of `spec` with `ct.launch`'s arguments and builds the call, without calling it.

    Everything but the data pointers and scalar values is fixed by the arrays' shapes, strides, dtypes and
    devices, the constants and the grid; a repeated layout reuses the result of its first full check."""
    args = tuple(args)
    if len(args) != len(spec.params):
        raise ArgumentTypeError(f"{spec.name} takes {len(spec.params)} arguments "
                                f"({', '.join(p.name for p in spec.params)}), got {len(args)}")
    unread = _unread(spec, args)
    for p, a in zip(spec.params, args):
        if p.kind == "array" and a is None and not p.given and not p.unused and p.name not in unread:
            raise ArgumentTypeError(f"`{p.name}` is None: the kernel reads it without testing `{p.name} is None`")
    # an optional pointer passed as None is not an array: a null descriptor, its hidden constant 0 (so for an
    # optional scalar: any value, its hidden constant 0); an unused parameter given None or a scalar: a null one;
    # an array these constants leave unread: a null one, whatever it is (the entry never touches it)
    absent = tuple(p.name for p, a in zip(spec.params, args)
                   if p.name in unread
                   or (p.given or p.unused) and (a is None or (p.unused and isinstance(a, (bool, int, float)))))
    arrays = {p.name: (_unused if p.unused else _flat if p.flat else _same)(as_device_array(a, p.name))
              for p, a in zip(spec.params, args) if p.kind == "array" and p.name not in absent}
    key = None
    if all(a.device is not None for a in arrays.values()):
        try:
            key = (spec.symbol, tuple(grid), absent,
                   tuple((a.shape, tuple(a.strides), a.dtype, a.device, a.readonly) for a in arrays.values()),
                   tuple((type(a), a) for p, a in zip(spec.params, args) if p.kind == "const"))
            known = _CHECKED.get(key)
        except Exception:  # noqa: BLE001 - an unhashable or odd grid or constant: the full check reports it
            key, known = None, None
    else:
        known = None
    if known is None:
        known = _check_layout(spec, args, arrays, grid)
        if key is not None:
            if len(_CHECKED) >= 4096:  # many layouts (e.g. varying sequence lengths): start over
                _CHECKED.clear()
            _CHECKED[key] = known
    consts, entry, element, device, grid3, templates = known
    for p in spec.params:  # pointers change from call to call (an unused one is never read: any, null too)
        if p.kind == "array" and p.name in arrays and not p.unused:
            _data_pointer(p.name, arrays[p.name].ptr, DTYPES[arrays[p.name].dtype][1])
    out = Plan(spec, consts, entry, element, arrays, grid=grid3, device=device, stream=_stream_handle(stream))
    for p, a in zip(spec.params, args):
        if p.kind == "array" and p.name not in arrays:
            out.c_args.append(None)  # a null descriptor: the optional pointer is not given
        elif p.kind == "array":
            d = CutileTensor.from_buffer_copy(templates[p.name])
            d.ptr = arrays[p.name].ptr
            out.c_args.append(ctypes.pointer(d))
        elif p.kind == "const":
            if p.const_type == "float":
                out.c_args.append(ctypes.c_double(consts[p.name]))
            else:
                out.c_args.append(ctypes.c_int64(consts[p.name]))
        else:
            out.c_args.append(_scalar(p, 0 if p.name in absent else a))
    # whether each optional constexpr or scalar was given: arguments after the kernel's own, in their order
    out.c_args += [ctypes.c_int64(consts[p.given]) for p in spec.params if p.kind != "array" and p.given]
    if len(spec.entries) > 1:
        out.c_args.append(ctypes.c_int32(entry))
    out.c_args += [ctypes.c_int64(g) for g in out.grid]
    out.c_args += [ctypes.c_int32(out.device), ctypes.c_void_p(out.stream or None)]
    return out


def _unread(spec: KernelSpec, args: tuple) -> frozenset:
    """The arrays read only under a constant condition (Param.read_when) that the call's constants make false:
    the entry compiled for them never touches the array, so any argument (or None) is taken and not checked.
    A condition that cannot be evaluated on the arguments as given leaves the array read (checked)."""
    out = set()
    for p in spec.params:
        if p.read_when is None:
            continue
        consts = {q.name: a for q, a in zip(spec.params, args) if q.kind == "const"}
        try:
            if not p.read_when(**consts):
                out.add(p.name)
        except Exception:  # noqa: BLE001 - e.g. a constant of the wrong type: the full checks report it
            continue
    return frozenset(out)


def _data_pointer(name: str, ptr: int, size: int) -> int:
    """An array's data pointer, checked: not null, aligned to its `size`-byte elements (every call, also on a
    checked layout: pointers change from call to call)."""
    if not ptr:
        raise ArgumentError(f"`{name}` has a null data pointer")
    if ptr % size:
        raise ArgumentError(f"`{name}` at {ptr:#x} is not aligned to its {size}-byte elements")
    return ptr


def _scalar(p: Param, a):
    """A scalar argument as the C symbol takes it (f32, bool or i32), checked."""
    if p.dtype == "f32":
        if isinstance(a, (str, bytes)) or not hasattr(type(a), "__float__"):
            raise ArgumentTypeError(f"scalar `{p.name}` must be a float, got {a!r}")
        try:
            return ctypes.c_float(float(a))
        except (TypeError, ValueError, OverflowError) as e:
            raise ArgumentTypeError(f"scalar `{p.name}` must be a float, got {a!r}: {e}") from None
    if p.dtype == "bool":
        try:
            return ctypes.c_bool(bool(a))
        except Exception as e:  # noqa: BLE001 - e.g. a multi-element array
            raise ArgumentTypeError(f"scalar `{p.name}` must be a bool, got {a!r}: {e}") from None
    if not isinstance(a, int) or isinstance(a, bool):
        raise ArgumentTypeError(f"scalar `{p.name}` must be an int, got {a!r}")
    if not -2**31 <= a < 2**31:
        raise ArgumentError(f"scalar `{p.name}` = {a} does not fit i32")
    return ctypes.c_int32(a)


def _same(arr: DeviceArray) -> DeviceArray:
    return arr


def _unused(arr: DeviceArray) -> DeviceArray:
    """An argument the kernel never reads, of any dtype and rank: the empty f32 vector at its pointer that the
    port takes (the C symbol passes the same for any descriptor)."""
    return DeviceArray(arr.ptr, (0,), (1,), "f32", arr.device, arr.keepalive)


def _flat(arr: DeviceArray) -> DeviceArray:
    """A Triton pointer argument as the rank-1 span of elements it may address (its base pointer is all the
    kernel receives; the span lets the C symbol check that every offset fits the i32 index type)."""
    if any(s < 0 for s in arr.strides):
        raise ArgumentError(f"negative strides {arr.strides}")
    span = 0 if 0 in arr.shape else 1 + sum((n - 1) * s for n, s in zip(arr.shape, arr.strides))
    return DeviceArray(arr.ptr, (span,), (1,), arr.dtype, arr.device, arr.keepalive, arr.readonly)


def _spec_generics(spec: KernelSpec) -> list:
    """The kernel's dtype generics in order (E, E2, ...): the positions of a combination."""
    return [g for g in GENERICS if any(p.kind == "array" and p.dtype == g for p in spec.params)]


def _combination_domain(spec: KernelSpec, generic: str) -> tuple:
    """The dtypes a generic takes in the exported combinations (empty: no bounded set)."""
    if not spec.combinations:
        return ()
    i = _spec_generics(spec).index(generic)
    taken = [c[i] for c in spec.combinations]  # in the kernel's dtype order, then the others'
    return tuple(d for d in dict.fromkeys(list(spec.dtypes) + taken) if d in taken)


def _check_layout(spec: KernelSpec, args: tuple, arrays: dict, grid) -> tuple:
    """The checks that depend on layout, dtypes, constants and grid (not on data pointers): returns the
    constants, entry, element type, device, grid and a descriptor template (pointer 0) per array."""
    consts, elements = {}, {}  # generic (E, E2, ...) -> (first array, its dtype)
    domains = {}  # generic -> the dtypes it may take
    for p, a in zip(spec.params, args):
        if p.kind != "array" and p.given:  # an optional constexpr or scalar: None is a value of its own
            consts[p.given] = int(a is not None)
            if a is None:
                if p.kind == "const":  # no entry of this variant reads it
                    consts[p.name] = 0.0 if p.const_type == "float" else 0
                continue
        if p.kind == "const":
            if p.const_type == "float":  # a Python float (or int): passed as a double, checked finite in f32
                if isinstance(a, bool) or not isinstance(a, (int, float)):
                    raise ArgumentTypeError(f"constant `{p.name}` must be float, got {a!r}")
                try:
                    f = float(a)
                    ok = math.isfinite(f) and math.isfinite(struct.unpack("<f", struct.pack("<f", f))[0])
                except (OverflowError, struct.error):
                    ok = False
                if not ok:
                    raise ArgumentError(f"constant `{p.name}` = {a!r} is not a finite f32 value")
                consts[p.name] = f
                continue
            if isinstance(a, bool) or (p.const_type == "bool" and isinstance(a, int)):
                consts[p.name] = int(bool(a)) if p.const_type == "bool" else int(a)
            elif isinstance(a, int) and p.const_type == "int":
                consts[p.name] = a
            else:
                raise ArgumentTypeError(f"constant `{p.name}` must be {p.const_type}, got {a!r}")
            if not -2**31 <= consts[p.name] < 2**31:
                raise ArgumentError(f"constant `{p.name}` = {a} does not fit i32")
        elif p.kind == "array":
            if p.given:
                consts[p.given] = int(p.name in arrays)
            if p.name not in arrays:
                continue
            arr = arrays[p.name]
            if len(arr.shape) not in (p.ranks or (p.rank,)):
                raise ArgumentError(f"`{p.name}` has rank {len(arr.shape)}; {spec.name} takes rank "
                                    f"{' or '.join(map(str, p.ranks or (p.rank,)))}")
            if any(s < 0 for s in arr.strides):
                raise ArgumentError(f"`{p.name}` has negative strides {arr.strides}")
            if p.output and not p.flat and any(s == 0 and n > 1 for s, n in zip(arr.strides, arr.shape)):
                raise ArgumentError(f"output `{p.name}` has zero strides {arr.strides} (overlapping writes)")
            if p.output and arr.readonly:
                raise ArgumentError(f"output `{p.name}` is read-only")
            if p.dtype in GENERICS:
                domains.setdefault(p.dtype, p.domain or _combination_domain(spec, p.dtype) or spec.dtypes)
                first = elements.setdefault(p.dtype, (p.name, arr.dtype))
                if arr.dtype != first[1]:
                    raise ArgumentTypeError(f"`{p.name}` is {arr.dtype} but `{first[0]}` is {first[1]}: "
                                            f"they share the element type {p.dtype}")
            elif arr.dtype not in (p.dtypes or (p.dtype,)):
                raise ArgumentTypeError(f"`{p.name}` is {arr.dtype}; {spec.name} takes "
                                        f"{' or '.join(p.dtypes or (p.dtype,))}")
    for generic in GENERICS:  # in the order the C symbol checks them
        if generic in elements and elements[generic][1] not in domains[generic]:
            first = elements[generic]
            raise ArgumentTypeError(f"`{first[0]}` is {first[1]}; the port of {spec.name} takes "
                                    f"{', '.join(domains[generic])}")
    if spec.combinations:  # a bounded set: the generics' dtypes together must be one the port exports
        generics = _spec_generics(spec)
        combo = tuple(elements[g][1] if g in elements else None for g in generics)
        if combo not in spec.combinations:
            raise ArgumentTypeError(
                f"{spec.name}: " + ", ".join(f"`{elements[g][0]}` is {elements[g][1]} ({g})" for g in generics
                                             if g in elements)
                + "; the port takes these combinations only: "
                + "; ".join(", ".join(c) for c in spec.combinations))
    element = elements.get("E")
    devices = {a.device if a.device is not None else _pointer_device(a.ptr) for a in arrays.values()}
    devices.discard(None)
    if len(devices) > 1:
        raise ArgumentError(f"{spec.name}: arrays on several devices {sorted(devices)}")
    taking = [i for i, e in enumerate(spec.entries) if e.takes(consts, element[1] if element else None)]
    if not taking:
        raise ArgumentError(f"{spec.name}: no variant for the constants {consts}")
    # an array whose dtype differs per entry: the entry of these constants for its dtype
    entry = next((i for i in taking if spec.entries[i].takes_arrays(arrays)), None)
    if entry is None:  # the arrays of one dtype group at other dtypes, or at several: each entry's dtypes named
        def wrong(i):
            return [n for n, d in spec.entries[i].array_dtypes if n in arrays and arrays[n].dtype != d]
        given = ", ".join(f"`{n}` is {arrays[n].dtype}" for n in wrong(min(taking, key=lambda i: len(wrong(i)))))
        wanted = " or ".join(dict.fromkeys(", ".join(f"`{n}` {d}" for n, d in spec.entries[i].array_dtypes)
                                           for i in taking))
        raise ArgumentTypeError(f"{given}; with the constants {consts} {spec.name} takes {wanted}")
    for name, rank in spec.entries[entry].ranks:  # the rank these constants select
        if name in arrays and len(arrays[name].shape) != rank:
            raise ArgumentError(f"`{name}` has rank {len(arrays[name].shape)}; {spec.name} takes rank {rank} "
                                f"with the constants {consts}")
    templates = {name: bytes(descriptor(DeviceArray(0, a.shape, a.strides, a.dtype, a.device)))
                 for name, a in arrays.items()}
    return (consts, entry, element[1] if element else None, devices.pop() if devices else 0, _grid(grid),
            templates)


# ------------------------------------------------------------------------------------------ library

_LIB = None


def library_candidates() -> list[Path]:
    name = {"darwin": f"lib{CRATE}.dylib", "win32": f"{CRATE}.dll"}.get(sys.platform, f"lib{CRATE}.so")
    if os.environ.get(LIBRARY_ENV):
        return [Path(os.environ[LIBRARY_ENV])]
    roots = [CRATE_DIR / "target"]
    if os.environ.get("CARGO_TARGET_DIR"):
        roots.insert(0, Path(os.environ["CARGO_TARGET_DIR"]))
    return [r / profile / name for r in roots for profile in ("release", "debug")]


def load_library(path: str | os.PathLike | None = None) -> ctypes.CDLL:
    """Loads the crate's shared library (`$CUTILE_RS_LIB`, else `target/{release,debug}` next to the crate)
    and checks that it is the build of this package's crate (ABI version and digest)."""
    global _LIB
    if _LIB is not None and path is None:
        return _LIB
    candidates = [Path(path)] if path else library_candidates()
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        raise LibraryError(f"the shared library of `{CRATE}` was not found (looked at "
                           f"{', '.join(str(c) for c in candidates)}): run `cargo build --release` in {CRATE_DIR}, "
                           f"or set {LIBRARY_ENV}")
    lib = ctypes.CDLL(str(found))
    try:
        version, digest = lib.cutile_abi_version, lib.cutile_crate_digest
    except AttributeError:
        raise LibraryError(f"{found} is not a cutile-transpile crate library") from None
    version.restype, digest.restype = ctypes.c_uint32, ctypes.c_char_p
    if version() != ABI_VERSION or digest().decode() != ABI_DIGEST:
        raise LibraryError(f"{found} was built from other generated code (ABI {version()}, digest "
                           f"{digest().decode()}; this package expects {ABI_VERSION}, {ABI_DIGEST}): rebuild it "
                           f"with `cargo build --release` in {CRATE_DIR}")
    lib.cutile_last_error.restype = ctypes.c_char_p
    lib.cutile_last_plan.restype = ctypes.c_char_p
    lib.cutile_dry_run.restype, lib.cutile_dry_run.argtypes = ctypes.c_int32, [ctypes.c_int32]
    lib.cutile_prepare_next.restype, lib.cutile_prepare_next.argtypes = None, [ctypes.c_int32]
    lib.cutile_hint_next.restype, lib.cutile_hint_next.argtypes = ctypes.c_int32, [ctypes.c_int32] * 3
    lib.cutile_take_prepared.restype, lib.cutile_take_prepared.argtypes = ctypes.c_void_p, []
    lib.cutile_release_prepared.restype, lib.cutile_release_prepared.argtypes = None, [ctypes.c_void_p]
    lib.cutile_prepared_matches.restype = ctypes.c_int32
    lib.cutile_prepared_matches.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    if path is None:
        _LIB = lib
    return lib


def abi_layout(lib: ctypes.CDLL) -> dict:
    """The descriptor layout as the library sees it, next to this module's mirror."""
    out = (ctypes.c_uint64 * 8)()
    lib.cutile_abi_layout.restype = ctypes.c_size_t
    lib.cutile_abi_layout(out, ctypes.c_size_t(8))
    rust = dict(zip(("size", "align", "ptr", "ndim", "shape", "strides", "dtype", "max_rank"), list(out)))
    py = {"size": ctypes.sizeof(CutileTensor), "align": ctypes.alignment(CutileTensor),
          **{f: getattr(CutileTensor, f).offset for f in ("ptr", "ndim", "shape", "strides", "dtype")},
          "max_rank": MAX_RANK}
    return {"rust": rust, "python": py}


_SYMBOLS: dict = {}


def invoke(p: Plan, lib: ctypes.CDLL | None = None) -> None:
    """Calls the symbol of a plan; a non-zero code becomes an exception with the library's message."""
    lib = lib or load_library()
    fn = _SYMBOLS.get((id(lib), p.spec.symbol))
    if fn is None:
        try:
            fn = getattr(lib, p.spec.symbol)
        except AttributeError:
            raise LibraryError(f"{p.spec.symbol} is missing from the library: rebuild it") from None
        fn.restype = ctypes.c_int32
        _SYMBOLS[(id(lib), p.spec.symbol)] = fn
    if p.hints is not None:  # for this call only (the symbol takes them, see abi.rs)
        rc = lib.cutile_hint_next(*p.hints)
        if rc != 0:
            _raise_code(p.spec, lib, rc)
        try:
            rc = fn(*p.c_args)
        except BaseException:
            lib.cutile_hint_next(0, 0, 0)  # not reached: no later call may take them
            raise
    else:
        rc = fn(*p.c_args)
    if rc != 0:
        _raise_code(p.spec, lib, rc)


def _raise_code(spec: KernelSpec, lib: ctypes.CDLL, rc: int):
    message = (lib.cutile_last_error() or b"").decode(errors="replace")
    code = CODES.get(rc, f"code {rc}")
    cls = (ArgumentTypeError if code in ("CUTILE_ERR_DTYPE", "CUTILE_ERR_DTYPE_MISMATCH") else
           CutileRsError if code in ("CUTILE_ERR_DEVICE", "CUTILE_ERR_LAUNCH", "CUTILE_ERR_PANIC") or rc not in CODES
           else ArgumentError)
    raise cls(f"{spec.name}: {message}", code)


def dry_run(p: Plan, lib: ctypes.CDLL | None = None) -> dict:
    """Calls the symbol of a plan in the library's dry-run mode (`cutile_dry_run`): it runs every check and
    computes the launch on the path a real call takes, then returns before the driver. Returns what it would
    have launched: `{"symbol", "entry", "kernel_fn", "element_type", "generics", "grid", "partitions", "params",
    "device", "stream"}` (generics as strings, in the entry's order; partitions: the tile shape of each checked
    output; params: each entry parameter's name and the values passed for it, `[type, value]`, a float as its
    bits). A failed check raises as `invoke` does. Needs no GPU."""
    lib = lib or load_library()
    previous = lib.cutile_dry_run(1)
    try:
        invoke(p, lib)
        text = lib.cutile_last_plan() or b""
    finally:
        lib.cutile_dry_run(previous)
    if not text:
        raise CutileRsError(f"{p.spec.symbol} returned success in dry-run mode without recording a launch")
    return json.loads(text.decode())


def explain(kernel, kernel_args, grid, stream=None) -> dict:
    """What a routed `ct.launch(stream, grid, kernel, kernel_args)` would launch in Rust: the `route` plan,
    run through the symbol in dry-run mode (`dry_run`); nothing reaches the GPU."""
    return dry_run(route(kernel, kernel_args, grid, stream))


_ACCEL: dict = {}  # "module": the compiled fast path (`_fastlaunch.c`), or None where there is none


def fastlaunch():
    """The compiled fast path (`_fastlaunch.abi3.so`, built by `cutile-transpile build` next to the library,
    or `$CUTILE_RS_FASTLAUNCH`), or None: no such file, a build of another source (digest), or not loadable.
    Without it the same steps run in Python."""
    if "module" in _ACCEL:
        return _ACCEL["module"]
    _HOT.clear()  # (re)loaded: what the C routing knows was made for the module before
    _HOT_LAYOUTS.clear()
    _STATE["route"] = None
    setting = os.environ.get(FASTLAUNCH_ENV, "")
    module = None
    if setting.lower() not in ("0", "off", "none"):
        paths = [Path(setting)] if setting else [c.with_name("_fastlaunch.abi3.so") for c in library_candidates()]
        for path in paths:
            if not path.is_file():
                continue
            try:
                import importlib.machinery
                import importlib.util
                loader = importlib.machinery.ExtensionFileLoader("_fastlaunch", str(path))
                m = importlib.util.module_from_spec(importlib.util.spec_from_file_location("_fastlaunch", path,
                                                                                           loader=loader))
                loader.exec_module(m)
            except (ImportError, OSError):
                continue
            if getattr(m, "DIGEST", None) == FASTLAUNCH_DIGEST:
                module = m
                break
    _ACCEL["module"] = module
    return module


def call(spec: KernelSpec, args, grid, stream=None, kernel=None, hints=None) -> None:
    """Checks and launches one kernel port (asynchronously, on `stream`).

    A launch whose arrays are CUDA torch tensors takes the fast path: its layout (shapes, strides, dtypes,
    devices, constants, grid) is looked up among the layouts this thread launched before, whose full check
    (`plan`) passed; the call then only checks and patches what changes from call to call (data pointers,
    their alignment, scalar values, the stream) into the descriptors it keeps, and calls the symbol. With the
    compiled fast path, the symbol keeps its first launch of a layout (a prepared launch, abi.rs), which a
    repeat fires with the new pointers and scalars; and a `ct.launch` of `kernel` (the kernel object routed
    here) with that layout is routed in C from then on (`_HOT`).

    `hints` (`kernel_hints`: a `replace_hints` copy of the kernel asking for other compiler hints than the
    port's entry has) are passed to the symbol, which compiles the entry with them. A layout launched with
    hints is kept apart from the same layout without them (or with others), its repeats ask the symbol for
    them again (a prepared launch keeps the entry compiled with them), and it is not routed in C."""
    torch = sys.modules.get("torch")
    if torch is not None:
        keyer = _KEYERS.get(spec.symbol)
        if keyer is None:
            keyer = _KEYERS[spec.symbol] = _layout_keyer(spec, fastlaunch())
        key = keyer(args, grid, torch.Tensor)
        if key is not None and hints is not None:
            key = ("hints", hints, key)
        if key is not None:
            try:
                calls = _FAST.calls
            except AttributeError:
                calls = _FAST.calls = {}
            try:
                fast = calls.get(key)
            except Exception:  # noqa: BLE001 - an unhashable or odd constant or grid: the full check reports it
                fast = key = None
            if fast is not None:
                rc = fast.run(args, stream)
                if rc != 0:
                    _raise_code(spec, fast.lib, rc)
                return
            p = plan(spec, args, grid, stream)
            p.hints = hints
            lib = load_library()
            if key is None:
                invoke(p, lib)
                return
            record = None
            if fastlaunch() is not None:  # keep the checked launch for repeats of this layout (abi.rs)
                lib.cutile_prepare_next(1)
                try:
                    invoke(p, lib)
                finally:
                    record = lib.cutile_take_prepared()
            else:
                invoke(p, lib)
            if len(calls) >= 4096:  # many layouts (e.g. varying sequence lengths): start over
                calls.clear()
            fast = calls[key] = _FastCall(p, lib, record)  # a layout the library accepted too
            if fast.fire is not None and kernel is not None and not spec.closure and hints is None:
                _hot(kernel, spec, key, fast, torch.Tensor)
            return
    p = plan(spec, args, grid, stream)
    p.hints = hints
    invoke(p)


_FAST = threading.local()  # per thread: the descriptors a fast call patches belong to one thread

# id(kernel) -> (kernel, symbol, kinds, torch.Tensor): the kernels `route` of the compiled fast path routes;
# layout key -> (layout, words, _FastCall) of a prepared launch (shared by threads: a prepared launch is
# patched in a copy of its words and fired with the GIL held)
_HOT: dict = {}
_HOT_LAYOUTS: dict = {}


def _hot(kernel, spec: KernelSpec, key, fast, tensor_type) -> None:
    """Lets `route` of the compiled fast path launch `kernel` with this layout (a prepared launch)."""
    if len(_HOT_LAYOUTS) >= 4096:  # as `calls`
        _HOT_LAYOUTS.clear()
    _HOT_LAYOUTS[key] = (*fast.fire, fast)
    _HOT[id(kernel)] = (kernel, spec.symbol, _param_kinds(spec), tensor_type)
    _STATE["route"] = fastlaunch().route


_KEYERS: dict = {}  # symbol -> its layout key function (`_layout_keyer`)


_KIND_CODES = {"array": 0, "optional": 1, "scalar": 2, "const": 3, "optional_scalar": 4}  # `key` of _fastlaunch.c


def _param_kinds(spec: KernelSpec) -> bytes:
    """The kind of each parameter, as `key` and `route` of _fastlaunch.c read them (one byte each)."""
    return bytes(_KIND_CODES["optional" if p.kind == "array" and p.given else
                             "optional_scalar" if p.kind == "scalar" and p.given else p.kind] for p in spec.params)


def _layout_keyer(spec: KernelSpec, accel=None):
    """The function giving the layout of a launch whose arrays are all torch tensors (None: another kind of
    argument): the symbol, the grid, then per array its shape, strides, dtype and device (a tuple of them, or
    None, for an optional array), per constant its type and value, per optional scalar whether it is None.
    Written out for this kernel's parameters
    (compiled once), so that a launch spends no Python operation on looping over them."""
    if accel is not None:  # the same key, computed in C
        kinds, symbol, c_key = _param_kinds(spec), spec.symbol, accel.key
        return lambda args, grid, T: c_key(symbol, kinds, args, grid, T)
    n, lines, key = len(spec.params), [], [repr(spec.symbol), "grid"]
    names = [f"a{i}" for i in range(n)]
    for i, p in enumerate(spec.params):
        a = names[i]
        if p.kind == "array" and p.given:
            lines.append(f"    if {a} is not None and not (type({a}) is T or isinstance({a}, T)): return None")
            key.append(f"(({a}.shape, {a}.stride(), {a}.dtype, {a}.get_device()) if {a} is not None else None)")
        elif p.kind == "array":
            lines.append(f"    if not (type({a}) is T or isinstance({a}, T)): return None")
            key += [f"{a}.shape", f"{a}.stride()", f"{a}.dtype", f"{a}.get_device()"]
        elif p.kind == "const":
            key += [f"type({a})", a]
        elif p.given:  # an optional scalar: None selects another entry
            key.append(f"({a} is None)")
    unpack = f"    {', '.join(names)}{',' if n == 1 else ''} = args\n" if n else ""
    src = (f"def layout_key(args, grid, T):\n    if len(args) != {n}: return None\n{unpack}"
           + "".join(line + "\n" for line in lines) + f"    return ({', '.join(key)},)\n")
    scope: dict = {}
    exec(compile(src, f"<layout key of {spec.symbol}>", "exec"), scope)  # noqa: S102 - our own source, above
    return scope["layout_key"]


_SCALAR_KINDS = {"i32": 0, "f32": 1, "bool": 2}  # `run` of _fastlaunch.c
_FALLBACK = -1  # `run` of _fastlaunch.c did not launch (an argument it does not judge, or CUTILE_FIRE_MISS)


def _word(a) -> int:
    """A ctypes argument of a plan as its 8-byte word in a symbol's packed form (`cutilepk_<name>`)."""
    if a is None:
        return 0
    if isinstance(a, (ctypes.c_float, ctypes.c_double)):
        fmt = "<f" if isinstance(a, ctypes.c_float) else "<d"
        return int.from_bytes(struct.pack(fmt, a.value).ljust(8, b"\0"), "little")
    if isinstance(a, ctypes.c_void_p):
        return a.value or 0
    return int(a.value) & 0xFFFFFFFFFFFFFFFF  # integers (two's complement) and bools


def _hinted(fn, lib: ctypes.CDLL, hints: tuple):
    """The symbol `fn` asking for launch hints before each call (`cutile_hint_next`, see `invoke`)."""
    hint = lib.cutile_hint_next

    def call(*args):
        rc = hint(*hints)
        if rc != 0:
            return rc
        try:
            return fn(*args)
        except BaseException:
            hint(0, 0, 0)
            raise
    return call


class _FastCall:
    """A checked launch layout: the symbol and the arguments that stay the same (descriptors of this layout,
    constants, entry, grid, device, as ctypes objects: no conversion per call). `run(args, stream)` fills in
    the rest (data pointers, checked; scalars; the stream) and calls the symbol; it is written out for this
    layout (compiled once), so that a launch spends no Python operation on looping over the parameters."""

    def __init__(self, p: Plan, lib: ctypes.CDLL, record: int | None = None):
        self.spec, self.lib, self.record, self.fire = p.spec, lib, None, None
        fn = lib[p.spec.symbol]  # its own function object (no argument types: ctypes objects go as they are)
        fn.restype = ctypes.c_int32
        if p.hints is not None:  # every call of the symbol asks for the launch's hints (see `invoke`)
            fn = _hinted(fn, lib, p.hints)
        # each argument but the stream: ("array", descriptor, element size, name) | ("scalar", param) | ("fixed", a)
        self.parts = []
        for i, a in enumerate(p.c_args[:-1]):
            param = p.spec.params[i] if i < len(p.spec.params) else None
            if param is not None and param.kind == "array" and a is not None:
                desc = CutileTensor.from_buffer_copy(a.contents)  # kept alive with this layout
                self.parts.append(("array", desc, DTYPES[p.arrays[param.name].dtype][1], param.name))
            elif param is not None and param.kind == "scalar" and not (param.given and not p.consts[param.given]):
                self.parts.append(("scalar", param))  # (an optional one passed as None: fixed, as the key says)
            else:
                self.parts.append(("fixed", a))
        self.run = self._python(fn)
        accel = fastlaunch()
        # (not the packed symbol with launch hints: the C code calls it without asking for them)
        packed = getattr(lib, p.spec.packed, None) if p.spec.packed and p.hints is None else None
        if any(part[0] == "scalar" and part[1].dtype not in _SCALAR_KINDS for part in self.parts):
            accel = None  # a scalar the C code does not write: the Python `run`
        values = self._value_parts()
        if accel is not None and record and len(values) <= FIRE_WORDS and self._takes(p, values, record):
            self.record = record
            fire = ctypes.cast(lib.cutile_fire, ctypes.c_void_p).value
            self.run = self._compiled(accel, fire, self.run, values, record)
        elif accel is not None and packed is not None:
            self.run = self._compiled(accel, ctypes.cast(packed, ctypes.c_void_p).value, self.run,
                                      list(enumerate(self.parts)))
        if record and self.record is None:
            lib.cutile_release_prepared(record)

    def __del__(self):
        record, self.record = getattr(self, "record", None), None
        if record:
            try:
                self.lib.cutile_release_prepared(record)
            except Exception:  # noqa: BLE001 - at interpreter exit: the process frees it
                pass

    def _value_parts(self) -> list:
        """(index, part) of the parts that are value words of a prepared launch: every array (a None one too)
        and scalar."""
        params = self.spec.params
        return [(i, part) for i, part in enumerate(self.parts)
                if part[0] in ("array", "scalar") or (i < len(params) and params[i].kind == "array")]

    def _takes(self, p: Plan, values: list, record: int) -> bool:
        """Whether the prepared launch takes this layout's value words as `run` writes them: the words of the
        launch it was prepared from must be the ones this plan gives (`cutile_prepared_matches`)."""
        words = []
        for i, part in values:
            words.append(_word(p.c_args[i]) if part[0] == "scalar" else
                         p.arrays[part[3]].ptr if part[0] == "array" else 0)
        buf = (ctypes.c_uint64 * max(len(words), 1))(*words)
        return self.lib.cutile_prepared_matches(record, buf, len(words)) == 1

    def _python(self, fn):
        """`run` in Python, written out for this layout."""
        scope = {"fn": fn, "_data_pointer": _data_pointer, "_scalar": _scalar, "_stream_handle": _stream_handle,
                 "c_void_p": ctypes.c_void_p, "_PTR_MAX": _PTR_MAX}
        body, call = [], []
        params = self.spec.params
        for i, part in enumerate(self.parts):
            if part[0] == "array":
                _, desc, size, name = part
                scope[f"d{i}"], scope[f"r{i}"], scope[f"n{i}"] = desc, ctypes.byref(desc), name
                if i < len(params) and params[i].unused:  # never read: any pointer, null too (as `plan` takes it)
                    body.append(f"    d{i}.ptr = args[{i}].data_ptr()\n")
                else:
                    body.append(f"    p = args[{i}].data_ptr()\n"
                                f"    d{i}.ptr = p if p and not p % {size} else _data_pointer(n{i}, p, {size})\n")
                call.append(f"r{i}")
            elif part[0] == "scalar":
                scope[f"s{i}"] = part[1]
                call.append(f"_scalar(s{i}, args[{i}])")
            else:
                scope[f"c{i}"] = part[1]
                call.append(f"c{i}")
        src = ("def run(args, stream):\n" + "".join(body)
               + "    h = getattr(stream, 'cuda_stream', None) if stream is not None else 0\n"
               + "    h = c_void_p((h if type(h) is int and 0 <= h <= _PTR_MAX else _stream_handle(stream)) or None)\n"
               + f"    return fn({', '.join(call + ['h'])})\n")
        exec(compile(src, f"<fast launch of {self.spec.symbol}>", "exec"), scope)  # noqa: S102 - our own source
        return scope["run"]

    def _compiled(self, accel, fn: int, python_run, parts: list, record: int | None = None):
        """`run` through the compiled fast path: the symbol's packed form with the words of `parts` (every
        argument), patched in C, or with a prepared launch (`record`), `cutile_fire` with the value words
        (`parts`: `_value_parts`); an argument the C code does not judge, or a value the prepared launch does
        not take, takes the Python `run`, which calls the symbol (the full check)."""
        words, arrays, scalars = [], [], []
        for i, part in parts:
            w = len(words)
            if part[0] == "array":
                arrays.append(struct.pack("<QIIII", ctypes.addressof(part[1]), i, part[2], w, 0))
                words.append(ctypes.addressof(part[1]))
            elif part[0] == "scalar":
                scalars.append(struct.pack("<IIII", i, w, _SCALAR_KINDS[part[1].dtype], 0))
                words.append(0)
            else:
                words.append(_word(part[1]))  # (with a record: an optional array passed as None, 0)
        if not record:
            words.append(0)  # the stream
        layout = struct.pack("<QQIIII", fn, record or 0, len(words), len(arrays), len(scalars),
                             0 if record else len(words) - 1)
        layout += b"".join(arrays) + b"".join(scalars)
        buffer, run_c = bytearray(struct.pack(f"<{len(words)}Q", *words)), accel.run
        if record:
            self.fire = (layout, buffer)  # what `route` of the compiled fast path runs

        def run(args, stream):
            rc = run_c(layout, buffer, args, stream)
            return python_run(args, stream) if rc == _FALLBACK else rc
        return run

# ------------------------------------------------------------------------------------------ routing

REGISTRY: dict[tuple[str, str], KernelSpec] = {}  # (resolved source path, kernel name) -> spec
_ROUTES: dict[int, tuple[object, KernelSpec | None, str]] = {}
_STATE = {"backend": "python", "strict": False, "original": None, "route": None}


def register(*specs: KernelSpec) -> None:
    for s in specs:
        REGISTRY[(str(s.source_path), s.name)] = s


def spec_for(kernel) -> tuple[KernelSpec | None, str]:
    """The port of a `@ct.kernel` (matched by source file and name; a changed source is refused)."""
    hit = _ROUTES.get(id(kernel))
    if hit is not None and hit[0] is kernel:
        return hit[1], hit[2]
    fn = _triton_parts(kernel)[0] or getattr(kernel, "_pyfunc", kernel)
    try:
        path = str(Path(inspect.getsourcefile(fn)).resolve())
        name = fn.__name__
    except (TypeError, AttributeError):
        return None, f"{kernel!r} is not a Python kernel"
    spec, why = REGISTRY.get((path, name)), ""
    if spec is None:
        why = f"`{name}` ({path}) has no Rust port in {CRATE_DIR}"
    elif hashlib.sha256(Path(path).read_bytes()).hexdigest() != spec.source_sha256:
        spec, why = None, f"{path} changed since its port was generated: regenerate with cutile-transpile"
    _ROUTES[id(kernel)] = (kernel, spec, why)
    return spec, why


# cuTile Python's compiler options that are entry hints -> their Tile IR names (the port's `spec.hints`), in the
# order `cutile_hint_next` takes them
_HINT_FIELDS = (("occupancy", "occupancy"), ("num_ctas", "num_cta_in_cga"),
                ("num_worker_warps", "num_worker_warps_per_cta"))
_KERNEL_HINTS: dict[int, tuple] = {}  # id(kernel) -> (kernel, spec, hints, why)


def _by_target(value) -> dict:
    """A compiler option's value per target (`default` for every other one): None is {}, an int {default: v},
    a `ct.ByTarget` its targets and its default (where it has one)."""
    if value is None:
        return {}
    if isinstance(value, int) and not isinstance(value, bool):
        return {"default": value}
    targets = getattr(value, "_by_target", None)
    if not isinstance(targets, dict):
        raise TypeError(f"{value!r}")
    out = {str(t): v for t, v in targets.items()}
    default = getattr(value, "_default", None)
    if isinstance(default, int) and not isinstance(default, bool):
        out["default"] = default
    return out


def kernel_hints(kernel, spec: KernelSpec) -> tuple[tuple[int, int, int] | None, str]:
    """The compiler hints a launched kernel object asks for where they differ from the port's entry
    (`kernel.replace_hints(num_ctas=2, occupancy=...)` returns a copy of the kernel with other hints, which
    cuTile Python compiles with): (occupancy, num_ctas, num_worker_warps), 0 for each the entry's own, or
    None where all are the entry's own; and "" or why the port cannot launch with them (then the kernel runs
    as a kernel without a port: cuTile Python with a warning, or an error in strict mode). The port never
    runs with other hints than the kernel object asks for."""
    hit = _KERNEL_HINTS.get(id(kernel))
    if hit is not None and hit[0] is kernel and hit[1] is spec:
        return hit[2], hit[3]
    hints, why = None, ""
    options = getattr(kernel, "_compiler_options", None)
    if options is not None and spec.language == "cutile-python":
        own: dict = {}
        for key, v in spec.hints:
            target, _, name = key.rpartition(":")
            own.setdefault(name, {})[target or "default"] = v
        asked = []
        try:
            for py, ir in _HINT_FIELDS:
                value = getattr(options, py, None)
                if _by_target(value) == own.get(ir, {}):
                    asked.append(0)
                elif isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    asked.append(value)
                else:  # None (cuTile's default) where the entry has a value, or per-target values
                    why = (f"`{spec.name}` is launched with {py}={value!r}; its port has the entry hints "
                           f"{dict(spec.hints) or 'none'} and takes another {py} only as one value for every "
                           "target")
                    break
            level = getattr(options, "opt_level", 3)
            if not why and _by_target(level) not in ({"default": 3}, {}):
                why = f"`{spec.name}` is launched with opt_level={level!r}; its port is compiled at level 3"
        except TypeError as e:
            why = f"`{spec.name}` is launched with compiler options the port does not read ({e})"
        if not why and any(asked):
            hints = tuple(asked)
    if len(_KERNEL_HINTS) >= 4096:
        _KERNEL_HINTS.clear()
    _KERNEL_HINTS[id(kernel)] = (kernel, spec, hints, why)
    return hints, why


def get_backend() -> str:
    return _STATE["backend"]


def set_backend(name: str, *, strict: bool = False) -> None:
    """"python" runs kernels with cuTile Python; "cutile-rs" routes `ct.launch` of ported kernels to Rust.
    With `strict`, a kernel without a (current) port raises instead of falling back to Python."""
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
    _STATE["backend"], _STATE["strict"] = name, strict
    if name == "cutile-rs":
        install()


def install() -> None:
    """Replaces `cuda.tile.launch` by `launch` (operator code calling `ct.launch(...)` is routed), and
    `kernel[grid]` of Triton kernels by `triton_launch` (where cuda.tile or triton is installed)."""
    try:
        import cuda.tile as ct
    except ImportError:
        ct = None
    if ct is not None and ct.launch is not launch:
        _STATE["original"] = ct.launch
        ct.launch = launch
    try:
        from triton.runtime.jit import KernelInterface
    except ImportError:
        return
    if not getattr(KernelInterface.__getitem__, "_cutile_rs", False):
        original = KernelInterface.__getitem__

        def __getitem__(self, grid):
            if _STATE["backend"] == "cutile-rs":
                return lambda *args, **kwargs: triton_launch(self, grid, args, kwargs)
            return original(self, grid)
        __getitem__._cutile_rs = True
        _STATE["triton_original"] = original
        KernelInterface.__getitem__ = __getitem__


def uninstall() -> None:
    try:
        import cuda.tile as ct
        if ct.launch is launch and _STATE["original"] is not None:
            ct.launch = _STATE["original"]
    except ImportError:
        pass
    if _STATE.get("triton_original") is not None:
        from triton.runtime.jit import KernelInterface
        KernelInterface.__getitem__ = _STATE.pop("triton_original")


# ------------------------------------------------------------------------------------------ Triton

_TUNED: dict = {}  # (id of an autotuned kernel, key values) -> the chosen config's constants


_PARTS: dict = {}  # id(kernel) -> (kernel, its parts): a routed launch reads them once per kernel object


def _triton_parts(kernel):
    """(Python function, heuristics, autotuner) of a Triton kernel object (JITFunction, under Heuristics and
    Autotuner wrappers); (None, {}, None) for anything else."""
    hit = _PARTS.get(id(kernel))
    if hit is not None and hit[0] is kernel:
        return hit[1]
    parts = _find_triton_parts(kernel)
    _PARTS[id(kernel)] = (kernel, parts)
    return parts


def _find_triton_parts(kernel):
    heuristics, tuner, obj = {}, None, kernel
    for _ in range(8):
        # a library's own autotuner subclasses Triton's (its class names are in the MRO)
        kinds = {c.__name__ for c in type(obj).__mro__}
        if "Autotuner" in kinds:
            tuner = obj
        elif "Heuristics" in kinds:
            heuristics.update(obj.values)
        fn = getattr(obj, "fn", None)
        if fn is None or not kinds & {"Autotuner", "Heuristics", "JITFunction", "InterpretedFunction"}:
            return None, {}, None
        if inspect.isfunction(fn):
            return fn, heuristics, tuner
        obj = fn
    return None, {}, None


_SIGNATURES: dict = {}  # id(fn) -> (fn, parameter names, their set, defaults, the signature where not plain)


def _triton_signature(fn) -> tuple:
    """A kernel function's parameters, read once: a routed launch binds its arguments to them per call."""
    hit = _SIGNATURES.get(id(fn))
    if hit is None or hit[0] is not fn:
        sig = inspect.signature(fn)
        plain = all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in sig.parameters.values())
        defaults = {n: p.default for n, p in sig.parameters.items() if p.default is not inspect.Parameter.empty}
        hit = _SIGNATURES[id(fn)] = (fn, tuple(sig.parameters), frozenset(sig.parameters), defaults,
                                     None if plain else sig)
    return hit


def _triton_args(spec: KernelSpec, fn, heuristics: dict, args: tuple, kwargs: dict, extra: dict | None = None):
    """Every parameter's value as Triton binds it: the call's arguments (keywords that are no parameter, such as
    `num_warps`, are launch options), the signature's defaults, then the autotuner's config and the heuristics
    (which see all of them). Binding refuses what `inspect.Signature.bind_partial` refuses, with its message."""
    _, names, known, defaults, sig = _triton_signature(fn)
    if sig is not None:  # not only positional-or-keyword parameters: Python's own binding
        named = dict(sig.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in known}).arguments)
    else:
        if len(args) > len(names):
            raise TypeError("too many positional arguments")
        named = dict(zip(names, args))
        for k, v in kwargs.items():
            if k in known:
                if k in named:
                    raise TypeError(f"multiple values for argument '{k}'")
                named[k] = v
    for name, value in defaults.items():
        if name not in named:
            named[name] = value
    named.update(extra or {})
    for name, f in heuristics.items():
        named[name] = f(named)
    return named


def _descriptor_values(spec: KernelSpec, named: dict) -> dict:
    """`named` with each host tensor descriptor (triton.tools.tensor_descriptor.TensorDescriptor: base, shape,
    strides, block_shape, padding) replaced by its base tensor and its parts under the port's parameter names.
    Refused: another object, another rank, a last stride that is not 1, padding other than "zero", a block
    extent unlike the kernel constexpr the port takes it as, a view that reaches past the base tensor."""
    if not spec.descriptors:
        return named
    named = dict(named)
    for name, (extents, strides, block, hidden) in spec.descriptors.items():
        d = named.get(name)
        if d is None:  # an unused optional descriptor: the pointer's own checks apply to None
            named.update({n: 0 for n in tuple(extents) + tuple(strides)})
            named.update({b: 1 for b, h in zip(block, hidden) if h})
            continue
        if not all(hasattr(d, a) for a in ("base", "shape", "strides", "block_shape")):
            raise ArgumentTypeError(f"{spec.name}: `{name}` must be a tensor descriptor "
                                    f"(triton.tools.tensor_descriptor.TensorDescriptor), got {type(d).__name__}")
        rank = len(extents)
        shape = _dims(list(d.shape), f"`{name}`.shape")
        pitch = _dims(list(d.strides), f"`{name}`.strides")
        blk = _dims(list(d.block_shape), f"`{name}`.block_shape")
        if not len(shape) == len(pitch) == len(blk) == rank:
            raise ArgumentError(f"{spec.name}: `{name}` is a descriptor of rank {len(shape)}; the kernel uses rank {rank}")
        if pitch[-1] != 1:
            raise ArgumentError(f"{spec.name}: `{name}` has strides {pitch}: the last must be 1")
        padding = getattr(d, "padding", "zero")
        if padding != "zero":
            raise ArgumentError(f"{spec.name}: `{name}` pads with {padding!r}: the port's descriptors pad with zeros only")
        if any(n <= 0 for n in shape) or any(s < 0 for s in pitch):
            raise ArgumentError(f"{spec.name}: `{name}` has shape {shape} and strides {pitch}")
        for i, (b, h, v) in enumerate(zip(block, hidden, blk)):
            if h:
                named[b] = v
                continue
            want = getattr(named.get(b), "value", named.get(b))
            if want != v:
                raise ArgumentError(f"{spec.name}: `{name}` has block shape {list(blk)}; the port takes its block "
                                    f"extent {i} as the constant `{b}` = {want!r} (no entry for other block shapes)")
        base = d.base
        arr = _flat(as_device_array(base, name))
        span = 1 + sum((n - 1) * s for n, s in zip(shape, pitch))
        if span > arr.shape[0]:
            raise ArgumentError(f"{spec.name}: `{name}` (shape {shape}, strides {pitch}) addresses {span} elements; "
                                f"its base tensor holds {arr.shape[0]}")
        named[name] = base
        named.update(zip(extents, shape))
        named.update(zip(strides, pitch))
    return named


def _triton_values(spec: KernelSpec, named: dict) -> tuple:
    named = _descriptor_values(spec, named)
    values = []
    for p in spec.params:
        if p.name not in named:
            raise ArgumentTypeError(f"{spec.name}: no value for `{p.name}`")
        v = getattr(named[p.name], "value", named[p.name]) if p.kind == "const" else named[p.name]
        if p.name in spec.dtype_consts:
            v = _dtype_name(v)
        if p.name in spec.strings:
            if not isinstance(v, str):
                raise ArgumentTypeError(f"{spec.name}: `{p.name}` must be a string, got {v!r}")
            # a string the kernel never compares with is unequal to each it does: the index past them
            strings = spec.strings[p.name]
            v = strings.index(v) if v in strings else len(strings)
        values.append(v)
    return tuple(values)


# tl dtype names (`str(tl.float32)` is "fp32"), numpy-style and torch names -> the port's dtype names
_DTYPE_NAMES = {"fp16": "f16", "float16": "f16", "half": "f16", "bf16": "bf16", "bfloat16": "bf16",
                "fp32": "f32", "float32": "f32", "float": "f32", "fp64": "f64", "float64": "f64",
                "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
                "fp8e4nv": "f8e4m3fn", "float8_e4m3fn": "f8e4m3fn", "fp8e5": "f8e5m2", "float8_e5m2": "f8e5m2"}


def _dtype_name(value):
    """A dtype constant's value (`tl.float32`, `torch.float32`, "float32") as the port names it."""
    text = str(getattr(value, "name", None) or value).removeprefix("torch.")
    return _DTYPE_NAMES.get(text, text)


def _current_stream():
    try:
        import torch
        return torch.cuda.current_stream()
    except Exception:  # noqa: BLE001 - no torch: the default stream
        return None


def _triton_call(spec, fn, heuristics, grid, args, kwargs, extra=None, hook=None):
    named = _triton_args(spec, fn, heuristics, args, kwargs, extra)
    if hook is not None:  # the config's `pre_hook`, run before the launch as Triton runs it (it may set the
        hook(named)       # block shapes of host descriptors)
    g = grid(named) if callable(grid) else grid
    call(spec, _triton_values(spec, named), g, _current_stream())


def _autotune(kernel, tuner, spec, fn, heuristics, grid, args, kwargs) -> tuple:
    """The config of `tuner.configs` the port runs fastest with (its constants and its `pre_hook`), timed on
    first use per `key` (as Triton autotunes), `reset_to_zero` arguments zeroed and `restore_value` ones
    restored around each trial, the config's `pre_hook` run before each launch."""
    named = _triton_args(spec, fn, {}, args, kwargs)
    key = (id(kernel),) + tuple(named.get(k) if not hasattr(named.get(k), "dtype") else str(named[k].dtype)
                                for k in getattr(tuner, "keys", ()))
    if key in _TUNED:
        return _TUNED[key]
    import torch
    reset = [named[n] for n in getattr(tuner, "reset_to_zero", None) or () if named.get(n) is not None]
    restore = [named[n] for n in getattr(tuner, "restore_value", None) or () if named.get(n) is not None]
    best, best_t, errors = None, None, []
    for cfg in tuner.configs:
        saved = [t.clone() for t in restore]
        try:
            times = []
            for _ in range(4):
                for t in reset:
                    t.zero_()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                _triton_call(spec, fn, heuristics, grid, args, kwargs, dict(cfg.kwargs), getattr(cfg, "pre_hook", None))
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end))
        except CutileRsError as e:
            errors.append(f"{cfg.kwargs}: {e}")
            continue
        finally:
            for t, s in zip(restore, saved):
                t.copy_(s)
        t = sorted(times)[len(times) // 2]
        if best_t is None or t < best_t:
            best, best_t = (dict(cfg.kwargs), getattr(cfg, "pre_hook", None)), t
    if best is None:
        raise LibraryError(f"{spec.name}: no autotune config runs on the port: {'; '.join(errors)}")
    _TUNED[key] = best
    return best


def triton_launch(kernel, grid, args, kwargs):
    """`kernel[grid](*args, **kwargs)` of a Triton kernel, following the backend setting."""
    spec, why = spec_for(kernel)
    if spec is not None:
        fn, heuristics, tuner = _triton_parts(kernel)
        extra, hook = _autotune(kernel, tuner, spec, fn, heuristics, grid, args, kwargs) if tuner is not None \
            else (None, None)
        return _triton_call(spec, fn, heuristics, grid, args, kwargs, extra, hook)
    if _STATE["strict"]:
        raise LibraryError(why)
    warnings.warn(f"cutile-rs backend: {why}; running it with Triton", RuntimeWarning, stacklevel=3)
    return _STATE["triton_original"](kernel, grid)(*args, **kwargs)


def python_launch(stream, grid, kernel, kernel_args):
    original = _STATE["original"]
    if original is None:
        import cuda.tile as ct
        original = ct.launch
    return original(stream, grid, kernel, kernel_args)


def with_closure(kernel, spec: KernelSpec, kernel_args) -> tuple:
    """`ct.launch`'s arguments and, for a kernel a factory function made, the closure values it reads (the
    port's last constants), read from the kernel object that was launched."""
    if not spec.closure:
        return kernel_args
    fn = getattr(kernel, "_pyfunc", kernel)
    try:
        cells = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__ or ())))
        return tuple(kernel_args) + tuple(cells[n] for n in spec.closure)
    except (AttributeError, KeyError, ValueError) as e:
        raise LibraryError(f"{spec.name}: cannot read the factory's values {spec.closure} from {kernel!r}: "
                           f"{type(e).__name__}: {e}") from None


def launch(stream, grid, kernel, kernel_args):
    """Drop-in for `ct.launch(stream, grid, kernel, kernel_args)`, following the backend setting."""
    if _STATE["backend"] == "cutile-rs":
        route = _STATE["route"]
        if route is not None:  # a kernel and layout launched before: routed and launched in C
            rc = route(_HOT, _HOT_LAYOUTS, stream, grid, kernel, kernel_args)
            if rc is not None:
                if rc:
                    _raise_code(spec_for(kernel)[0], load_library(), rc)
                return None
        spec, why = spec_for(kernel)
        if spec is not None:
            hints, why = kernel_hints(kernel, spec)
            if not why:
                return call(spec, with_closure(kernel, spec, kernel_args), grid, stream, kernel, hints)
        if _STATE["strict"]:
            raise LibraryError(why)
        warnings.warn(f"cutile-rs backend: {why}; running it with cuTile Python", RuntimeWarning, stacklevel=2)
    return python_launch(stream, grid, kernel, kernel_args)


def route(kernel, kernel_args, grid, stream=None) -> Plan:
    """What `launch` would call for this kernel and arguments (checked, not launched)."""
    spec, why = spec_for(kernel)
    if spec is None:
        raise LibraryError(why)
    hints, why = kernel_hints(kernel, spec)
    if why:
        raise LibraryError(why)
    p = plan(spec, with_closure(kernel, spec, kernel_args), grid, stream)
    p.hints = hints
    return p
