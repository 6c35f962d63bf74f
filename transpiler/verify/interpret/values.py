"""Types and values of the Tile IR interpreter: element types as numpy dtypes, tiles as numpy arrays, pointer
tiles as byte addresses into a flat memory of named buffers, tensor and partition views.

Every tile is a numpy array (a scalar `tile<i32>` is a 0-d array). Integers are stored signed (Tile IR
integers are signless; an op's `signed`/`unsigned` word picks the reading), i1 as bool, bf16 and the f8 types
as ml_dtypes' types, tf32 as float32 whose mantissa was rounded to 10 bits where it was made.
"""

from __future__ import annotations

import re
from functools import lru_cache
from dataclasses import dataclass, field

import numpy as np

from .errors import InterpretError  # noqa: F401 - re-exported: the interpreter's modules import it from here

try:
    import ml_dtypes
except ImportError:  # bf16/f8 tiles then fail with a message naming the type
    ml_dtypes = None


_INT = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64}
_FLOAT = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "tf32": np.float32}
_ML = {"bf16": "bfloat16", "f8E4M3FN": "float8_e4m3fn", "f8E5M2": "float8_e5m2"}


@lru_cache(maxsize=None)
def np_dtype(elem: str):
    """The numpy dtype holding a Tile IR element type."""
    if elem in _INT:
        return np.dtype(_INT[elem])
    if elem in _FLOAT:
        return np.dtype(_FLOAT[elem])
    if elem in _ML:
        if ml_dtypes is None:
            raise InterpretError(f"element type {elem} needs ml_dtypes (the `verify` extra)")
        return np.dtype(getattr(ml_dtypes, _ML[elem]))
    raise InterpretError(f"unknown element type {elem!r}")


def is_float(elem: str) -> bool:
    return elem in _FLOAT or elem in _ML


def bits(elem: str) -> int:
    if elem == "i1":
        return 1
    return np_dtype(elem).itemsize * 8


@dataclass(frozen=True)
class TileType:
    shape: tuple[int, ...]
    elem: str  # i32, f16, ...; `ptr<f32>` for a pointer tile
    kind: str = "tile"  # tile | token | tensor_view | partition_view

    @property
    def pointee(self) -> str | None:
        m = re.fullmatch(r"ptr<(.+)>", self.elem)
        return m.group(1) if m else None


_TILE = re.compile(r"tile<(.*)>$")


@lru_cache(maxsize=None)
def parse_type(text: str) -> TileType:
    """`tile<16x16xf32>`, `tile<i32>`, `tile<16xptr<f16>>`, `token`, `tensor_view<...>`, `partition_view<...>`."""
    text = text.strip()
    if text == "token":
        return TileType((), "", "token")
    if text.startswith(("tensor_view<", "partition_view<")):
        return TileType((), "", text.split("<", 1)[0])
    m = _TILE.match(text)
    if not m:
        raise InterpretError(f"unknown type {text!r}")
    inner = m.group(1)
    dims = []
    while True:
        d = re.match(r"(\d+)x", inner)
        if not d:
            break
        dims.append(int(d.group(1)))
        inner = inner[d.end():]
    return TileType(tuple(dims), inner)


@dataclass
class Buffer:
    name: str
    base: int  # byte address of element 0
    data: np.ndarray  # 1-d, the array's own dtype (bytes viewed as needed)

    @property
    def nbytes(self) -> int:
        return self.data.nbytes


class Memory:
    """Flat byte-addressed memory: each array a buffer at its own base address, far from the others, so an
    address outside every buffer (a wrong stride, a mask off by one) is an error, never another array's data."""

    SPACING = 1 << 40

    def __init__(self):
        self.buffers: list[Buffer] = []

    def add(self, name: str, array: np.ndarray) -> int:
        base = (len(self.buffers) + 1) * self.SPACING
        self.buffers.append(Buffer(name, base, np.ascontiguousarray(array).reshape(-1)))
        return base

    # addresses from int_to_ptr inside no array are moved here (below 0): an access there is not modelled
    FOREIGN = -(1 << 62)

    def foreign(self, addr: np.ndarray) -> np.ndarray:
        """`addr` (int_to_ptr's operand) with every address that lies in no array made a foreign one."""
        a = np.asarray(addr, np.int64)
        owner = (a // self.SPACING) - 1
        inside = np.zeros(a.shape, bool)
        for i, buf in enumerate(self.buffers):
            inside |= (owner == i) & (a - buf.base < buf.nbytes) & (a >= buf.base)
        return np.where(inside, a, self.FOREIGN)

    def _locate(self, addr: np.ndarray, elem: str, what: str) -> list[tuple[Buffer, np.ndarray, np.ndarray]]:
        """(buffer, positions in addr, element indices) per buffer the addresses fall in."""
        dt = np_dtype(elem)
        out = []
        flat = addr.reshape(-1).astype(np.int64)
        owner = (flat // self.SPACING) - 1
        if not flat.size:
            return out
        if (flat < self.FOREIGN // 2).any():
            raise InterpretError(f"{what}: an address loaded from memory (int_to_ptr) lies in no array the case "
                                 "passes: the interpreter cannot read it (not modelled)")
        lo, hi = int(owner.min()), int(owner.max())
        groups = [(lo, np.arange(flat.size))] if lo == hi else [(b, np.nonzero(owner == b)[0]) for b in np.unique(owner)]
        for b_index, pos in groups:
            if not 0 <= b_index < len(self.buffers):
                raise InterpretError(f"{what}: address {int(flat[pos[0]]):#x} is outside every array")
            buf = self.buffers[int(b_index)]
            off = flat[pos] - buf.base
            bad = (off < 0) | (off + dt.itemsize > buf.nbytes) | (off % dt.itemsize != 0)
            if bad.any():
                i = int(off[np.argmax(bad)])
                raise InterpretError(f"{what}: byte offset {i} of `{buf.name}` ({buf.nbytes} bytes, {elem} elements) "
                                     "is out of bounds or misaligned")
            out.append((buf, pos, off // dt.itemsize))
        return out

    def _view(self, buf: Buffer, elem: str) -> np.ndarray:
        return buf.data.view(np.uint8).view(np_dtype(elem))

    def load(self, addr: np.ndarray, elem: str, mask: np.ndarray | None, other) -> np.ndarray:
        dt = np_dtype(elem)
        result = np.zeros(addr.shape, dt) if other is None else np.array(np.broadcast_to(other, addr.shape), dt)
        live = np.ones(addr.shape, bool) if mask is None else np.broadcast_to(mask, addr.shape)
        flat_res = result.reshape(-1)
        pos_live = np.nonzero(live.reshape(-1))[0]
        if pos_live.size:
            for buf, pos, idx in self._locate(addr.reshape(-1)[pos_live], elem, "load"):
                flat_res[pos_live[pos]] = self._view(buf, elem)[idx]
        return result

    def store(self, addr: np.ndarray, elem: str, values: np.ndarray, mask: np.ndarray | None) -> None:
        values = np.broadcast_to(np.asarray(values).astype(np_dtype(elem)), addr.shape).reshape(-1)
        live = np.ones(addr.shape, bool) if mask is None else np.broadcast_to(mask, addr.shape)
        pos_live = np.nonzero(live.reshape(-1))[0]
        if not pos_live.size:
            return
        for buf, pos, idx in self._locate(addr.reshape(-1)[pos_live], elem, "store"):
            # in element order: of two lanes writing one element, the later wins (a defined order)
            self._view(buf, elem)[idx] = values[pos_live[pos]]

    def element_refs(self, addr: np.ndarray, elem: str, what: str) -> list[tuple[np.ndarray, int]]:
        """(element view, index) of each address in C order: atomics are applied one at a time."""
        refs: list = [None] * addr.size
        for buf, pos, idx in self._locate(addr.reshape(-1), elem, what):
            view = self._view(buf, elem)
            for p, i in zip(pos.tolist(), idx.tolist()):
                refs[p] = (view, i)
        return refs


@dataclass
class TensorView:
    base: int  # byte address
    elem: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements


@dataclass
class PartitionView:
    view: TensorView
    tile: tuple[int, ...]
    padding: str | None  # zero, nan, neg_inf, pos_inf, ... or None (undefined: read as zero)
    dim_map: tuple[int, ...] | None = None
    extra: dict = field(default_factory=dict)


def round_tf32(x: np.ndarray) -> np.ndarray:
    """f32 -> tf32 (10 mantissa bits), nearest-even, as cvt.rna.tf32 would within ties: kept as f32."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    finite = np.isfinite(np.asarray(x, np.float32))
    lsb = (b >> 13) & 1
    r = ((b + 0xFFF + lsb) >> 13) << 13
    out = np.where(finite, r, b).astype(np.uint32)
    return out.view(np.float32)
