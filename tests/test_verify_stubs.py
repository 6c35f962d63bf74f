"""Verification imports a library's modules with its missing host-side packages (torch, ...) stubbed, for
that import only, and only for imports the library's own code makes (transpiler/verify/stubs.py)."""

from __future__ import annotations

import sys
import textwrap

import pytest

from transpiler.verify.run import _import_source
from transpiler.verify.stubs import is_stub

ABSENT = "cutile_transpile_absent_host_pkg"  # stands for torch on a machine without it


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


@pytest.fixture
def library(tmp_path, monkeypatch):
    """A package whose modules use a missing package the ways host code does, and an installed module (on
    sys.path, outside the package) that probes the same kind of missing package itself."""
    site = tmp_path / "site"
    _write(site / "installed_probe.py", f"""
        try:
            import {ABSENT}_2  # installed code: must see the real ImportError
            HAVE = True
        except ImportError:
            HAVE = False
    """)
    monkeypatch.syspath_prepend(str(site))
    _write(tmp_path / "src" / "hostlib" / "__init__.py", f"import {ABSENT} as torch\n")
    _write(tmp_path / "src" / "hostlib" / "ops.py", f"""
        import {ABSENT} as torch
        import {ABSENT}.nn.functional as F
        from {ABSENT}.library import custom_op
        import installed_probe
        try:
            import _winapi  # a standard-library module this platform lacks: never stubbed
            STDLIB_STUBBED = True
        except ImportError:
            STDLIB_STUBBED = False

        BLOCK = 64
        if torch.cuda.is_available():
            BLOCK = 128
        DTYPE = torch.float16

        @torch.no_grad()
        def host(x: torch.Tensor | None) -> torch.Tensor:
            return x

        @custom_op("hostlib::op", mutates_args=())
        def op(x):
            return x

        class Fn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

        for _ in torch.arange(3):
            BLOCK = 0

        from packaging import version
        if version.parse(torch.__version__) < version.parse("5.3.0"):  # a host-side minimum (TileGym's model patches)
            raise ImportError(f"{ABSENT}>=5.3.0 is required (got {{torch.__version__}})")
    """)
    yield tmp_path / "src" / "hostlib" / "ops.py"
    for name in [n for n in sys.modules if n.startswith(("hostlib", "installed_probe"))]:
        del sys.modules[name]


def test_a_missing_host_package_is_a_stub_during_the_import(library):
    mod = _import_source(library)
    assert mod.BLOCK == 64  # a stub is false and empty: module constants keep their plain values
    assert mod.host(5) == 5 and mod.op(6) == 6  # stub decorators hand the function back
    assert mod.Fn.forward(None, 7) == 7 and isinstance(mod.Fn(), mod.Fn)  # a subclass of a stub is a class
    assert is_stub(mod.DTYPE) and is_stub(mod.torch) and is_stub(mod.F)
    assert ABSENT not in sys.modules and not any(n.startswith(ABSENT + ".") for n in sys.modules)


def test_stubs_stay_out_of_the_standard_library_and_installed_code(library):
    mod = _import_source(library)
    assert mod.STDLIB_STUBBED is False
    assert mod.installed_probe.HAVE is False


def test_no_stub_outside_verification_imports(library):
    with pytest.raises(ImportError):
        __import__(ABSENT)


def test_a_torch_stub_names_its_dtypes_as_numpy_dtypes():
    """A kernel may name `torch.int32`; cuTile Python reads numpy's dtypes as the same dtypes, so a torch stub
    hands those out (anything else of torch stays a stub)."""
    import numpy as np

    from cuda.tile._cext import foreign_dtype_object_to_native
    from transpiler.verify.stubs import _StubModule
    torch = _StubModule("torch")
    assert str(foreign_dtype_object_to_native(torch.int32)) == "int32"
    assert str(foreign_dtype_object_to_native(torch.bfloat16)) == "bfloat16"
    assert torch.float16 == np.dtype("float16") and is_stub(torch.Tensor)
    assert is_stub(_StubModule("other").int32)  # only torch's names are dtypes
