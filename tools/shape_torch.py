"""A shape-only stand-in for the few torch calls the case builders of tools/gpu_cases.py make.

`python3 tools/gpu_cases.py` builds every configuration with it (no torch, no GPU, no memory): tensors carry a
shape and a dtype and nothing else, so byte and FLOP counts, per-build sizes and the memory a run needs can be
checked where torch is missing. Values are meaningless: `int()` of a tensor is 0 and comparisons give bool
tensors of the broadcast shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class DType:
    name: str
    itemsize: int
    is_floating_point: bool

    def __repr__(self) -> str:
        return f"shape_torch.{self.name}"


float32 = DType("float32", 4, True)
float16 = DType("float16", 2, True)
bfloat16 = DType("bfloat16", 2, True)
int32 = DType("int32", 4, False)
int64 = DType("int64", 8, False)
bool_ = DType("bool", 1, False)


def _broadcast(a: tuple, b: tuple) -> tuple:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise ValueError(f"shapes {a} and {b} do not broadcast")
        out.append(max(x, y))
    return tuple(out)


class Tensor:
    def __init__(self, shape, dtype: DType):
        self.shape, self.dtype = tuple(int(s) for s in shape), dtype

    def numel(self) -> int:
        return math.prod(self.shape)

    def element_size(self) -> int:
        return self.dtype.itemsize

    def __repr__(self) -> str:
        return f"Tensor({self.shape}, {self.dtype.name})"

    def __int__(self) -> int:
        return 0

    # element-wise and in-place: the shape stays or broadcasts
    def _binary(self, other, dtype=None):
        shape = _broadcast(self.shape, other.shape) if isinstance(other, Tensor) else self.shape
        return Tensor(shape, dtype or self.dtype)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __floordiv__ = _binary

    def __lt__(self, other):
        return self._binary(other, bool_)

    __le__ = __gt__ = __ge__ = __eq__ = __ne__ = __lt__
    __hash__ = object.__hash__

    def __setitem__(self, index, value) -> None:
        pass

    def _same(self, *args, **kwargs):
        return self

    mul_ = add_ = masked_fill_ = zero_ = contiguous = _same

    def to(self, dtype):
        return Tensor(self.shape, dtype)

    def float(self):
        return self.to(float32)

    def long(self):
        return self.to(int64)

    def mean(self, dim):
        return Tensor(self.shape[:dim] + self.shape[dim + 1:], self.dtype)

    def var(self, dim, correction=1):
        return self.mean(dim)

    def sum(self, dim=None):
        return Tensor(() if dim is None else self.shape[:dim] + self.shape[dim + 1:], self.dtype)


def _shape(shape) -> tuple:
    return tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)


def randn(shape, generator=None, device=None, dtype=float32):
    return Tensor(_shape(shape), dtype)


rand = randn


def randint(low, high, shape, generator=None, device=None, dtype=int64):
    return Tensor(_shape(shape), dtype)


def randperm(n, generator=None, device=None, dtype=int64):
    return Tensor((n,), dtype)


def full(shape, value, device=None, dtype=float32):
    return Tensor(_shape(shape), dtype)


def zeros(shape, device=None, dtype=float32):
    return Tensor(_shape(shape), dtype)


def cos(t):
    return Tensor(t.shape, t.dtype)


sin = rsqrt = cos


def log_softmax(t, dim):
    return Tensor(t.shape, t.dtype)


softmax = log_softmax


def cumsum(t, dim):
    return Tensor(t.shape, t.dtype)


def logsumexp(t, dim):
    return t.mean(dim)


def bincount(t, minlength=0):
    return Tensor((minlength,), int64)


class _Sorted:
    def __init__(self, t):
        self.values, self.indices = Tensor(t.shape, t.dtype), Tensor(t.shape, int64)


def sort(t, dim=-1, descending=False):
    return _Sorted(t)
