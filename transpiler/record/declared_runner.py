"""Launches the cases declared in pyproject.toml (declared.py) under Triton's interpreter, as a plain script in the
child process `cutile-transpile record` starts (its recorder stores each launch). Imports nothing of the tool:
numpy and triton only. Arrays are numpy arrays in host memory behind a small tensor shim (`data_ptr()`, `stride()`,
a torch-like dtype), so torch is not needed.

    python declared_runner.py '<JSON list of cases>'
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

import numpy as np


class _Dtype:
    """A torch-like dtype: what Triton's interpreter reads of a tensor's `dtype`."""

    def __init__(self, name: str):
        self.name = name
        # what Triton's TensorDescriptor checks of its base's dtype
        self.itemsize = 1 if name in ("uint8", "float8_e4m3fn") else np.dtype(name).itemsize
        self.is_floating_point = name.startswith("float")

    def __str__(self):
        return f"torch.{self.name}"  # what the interpreter's pointer-type lookup reads

    __repr__ = __str__


# one object per dtype: Triton's specialisation code caches the type string by the dtype object's identity, so
# a short-lived dtype object whose address is reused would read back another dtype's string
_DTYPES: dict[str, _Dtype] = {}


class HostTensor:
    """A numpy array the interpreter sees as a tensor (also tools/triton_reference.py's)."""

    def __init__(self, array: np.ndarray, dtype: str):
        self.array = array
        self.dtype = _DTYPES.setdefault(dtype, _Dtype(dtype))
        self.shape = array.shape

    def data_ptr(self) -> int:
        return self.array.ctypes.data

    def stride(self, dim=None):
        st = tuple(s // self.array.itemsize for s in self.array.strides)
        return st if dim is None else st[dim]

    def element_size(self) -> int:
        return self.array.itemsize


def _array(spec: dict, rng) -> np.ndarray:
    shape, dtype, init = tuple(spec["shape"]), np.dtype(spec["dtype"]), spec.get("init")
    init = init or ("randint" if dtype.kind in "iub" else "randn")
    if init == "randn":
        a = rng.standard_normal(shape) * spec.get("scale", 1.0)
    elif init == "uniform":
        a = rng.uniform(spec.get("lo", 0.0), spec.get("hi", 1.0), shape)
    elif init == "randint":
        a = rng.integers(spec.get("lo", 0), spec.get("hi", 2 if dtype.kind == "b" else 16), shape)
    elif init == "zeros":
        a = np.zeros(shape)
    elif init == "ones":
        a = np.ones(shape)
    else:  # arange
        a = np.arange(int(np.prod(shape))).reshape(shape)
    return np.ascontiguousarray(a.astype(dtype))


def _kernel(source: str, name: str):
    """The kernel object of `source` (imported as part of its package, so relative imports work)."""
    path = Path(source).resolve()
    root, parts = path.parent, [path.stem]
    while (root / "__init__.py").is_file():
        parts.insert(0, root.name)
        root = root.parent
    sys.path.insert(0, str(root))
    module = importlib.import_module(".".join(parts))
    kernel = getattr(module, name)
    from triton.runtime.autotuner import Autotuner
    while isinstance(kernel, Autotuner):  # several configs need a GPU to choose: the case gives the constants
        kernel = kernel.fn
    return kernel


def main(argv: list[str]) -> int:
    os.environ.setdefault("TRITON_INTERPRET", "1")
    from triton.runtime import interpreter as interp
    import triton.language as tl
    # the arrays are host memory already: no device<->host copies (those go through torch storages)
    interp.GridExecutor._init_args_hst = lambda self, args, kwargs: (list(args), dict(kwargs))
    interp.GridExecutor._restore_args_dev = lambda self, *a, **k: None
    failed = 0
    for case in json.loads(argv[0]):
        rng = np.random.default_rng(case["seed"])
        args = {}
        for pname, v in case["args"].items():
            if isinstance(v, dict):
                args[pname] = HostTensor(_array(v, rng), v["dtype"])
            elif isinstance(v, str) and isinstance(getattr(tl, v, None), tl.dtype):
                args[pname] = getattr(tl, v)
            else:
                args[pname] = v
        try:
            _kernel(case["source"], case["kernel"])[tuple(case["grid"])](**args)
        except Exception as e:  # noqa: BLE001 - one case's failure is reported, the others still run
            print(f"cutile-transpile record: the declared case of `{case['kernel']}` failed under Triton's "
                  f"interpreter: {type(e).__name__}: {e}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
