"""Stand-ins for the packages a kernel's module imports but this machine lacks (torch, triton, ...).

Verification imports each kernel's module to hand its `@ct.kernel` object to cuTile Python. A library's
modules usually import torch (and other host-side packages) at their top level, for host code that
verification never runs. So, during that import only, a top-level package no finder can import is
replaced by a stub module: every attribute is a stub class, calling one returns a new stub (or, given a
single function, that function: a stub decorator keeps what it decorates), a stub is false, empty and
compares as unequal. Kernels never see a stub: cuTile Python compiles the kernel's own code, and a module
constant a kernel reads that came from a stub (`BLOCK = torch.cuda.device_count()`) makes cuTile
Python's export fail, so that kernel is reported not verified, never equivalent by accident. Installed
packages are always the real ones; the stubs leave sys.modules after the import.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import types
from contextlib import contextmanager


class _StubMeta(type):
    """A stub is a class (so host code may subclass it: `class F(torch.autograd.Function)`)."""

    def __getattr__(cls, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        child = _StubMeta(name, (), {"_cutile_stub": True, "__qualname__": f"{cls.__qualname__}.{name}"})
        type.__setattr__(cls, name, child)
        return child

    def __call__(cls, *args, **kwargs):
        if "_cutile_stub" not in cls.__dict__:  # a class of the library's own that derives from a stub
            return type.__call__(cls, *args, **kwargs)
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], _StubMeta):
            return args[0]  # a stub decorator (`@torch.compile`, `@torch.library.custom_op(...)(f)`)
        return _StubMeta("result", (), {"_cutile_stub": True, "__qualname__": f"{cls.__qualname__}()"})

    def __bool__(cls) -> bool:
        return False

    def __iter__(cls):
        return iter(())

    def __len__(cls) -> int:
        return 0

    def __getitem__(cls, item):
        return cls

    def __or__(cls, other):
        return cls

    __ror__ = __or__

    def __eq__(cls, other) -> bool:
        return cls is other

    def __hash__(cls) -> int:
        return id(cls)

    def __lt__(cls, other) -> bool:
        return False

    __le__ = __gt__ = __ge__ = __lt__


# torch's dtypes as the numpy dtypes cuTile Python reads as the same dtype (a kernel may name `torch.int32`;
# cuTile Python converts a foreign dtype object to its own, numpy's and torch's alike)
_TORCH_DTYPES = {"float16": "float16", "float32": "float32", "float64": "float64", "int8": "int8",
                 "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "uint32": "uint32",
                 "bool": "bool", "bfloat16": "bfloat16"}


def _torch_dtype(name: str):
    import numpy as np
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(_TORCH_DTYPES[name])


class _StubModule(types.ModuleType):
    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if self.__name__ == "torch" and name in _TORCH_DTYPES:
            value = _torch_dtype(name)
            setattr(self, name, value)
            return value
        stub = _StubMeta(name, (), {"_cutile_stub": True, "__qualname__": f"{self.__name__}.{name}"})
        setattr(self, name, stub)
        return stub


def _importer_file() -> str:
    """The file of the code running the import statement (the first frame outside importlib and this file)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith("<frozen") and name != __file__ and "importlib" not in name:
            return name
        frame = frame.f_back
    return ""


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: reached only by a module no real finder has. Stubs a missing top-level package
    that the library's own code (a file under `root`) imports, and anything under a stubbed one. Never a
    standard-library module (their optional imports, `_winapi` and the like, must stay ImportErrors), never
    an import by installed code, never a missing submodule of a real package."""

    def __init__(self, root: str) -> None:
        self.root = os.path.join(os.path.realpath(root), "")
        self.stubbed: set[str] = set()

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        if top not in self.stubbed:
            if "." in fullname or top in sys.stdlib_module_names or top.startswith("_"):
                return None
            if not os.path.realpath(_importer_file()).startswith(self.root):
                return None
        self.stubbed.add(top)
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        mod = _StubModule(spec.name)
        mod.__path__ = []
        # newer than any minimum a library's host code asserts at import (`transformers>=5.3.0 is required`: TileGym's
        # model patches raise ImportError below it, and their kernels would never reach cuTile Python)
        mod.__version__ = "9999"
        return mod

    def exec_module(self, module) -> None:
        pass


@contextmanager
def missing_packages_stubbed(root):
    """Imports by the library's code (files under `root`) inside see a stub for each top-level package that is not installed; afterwards the stubs
    leave sys.modules (modules imported inside keep the stubs they bound) and the finder is removed."""
    finder = _StubFinder(str(root))
    sys.meta_path.append(finder)
    try:
        yield finder
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if n.partition(".")[0] in finder.stubbed]:
            if isinstance(sys.modules[name], _StubModule):
                del sys.modules[name]


def is_stub(value) -> bool:
    return isinstance(value, (_StubMeta, _StubModule))
