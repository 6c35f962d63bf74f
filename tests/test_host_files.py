"""Host-code files of a large package are not parsed with LibCST: `_may_define_kernels` says, from CPython's
tree, which files cannot hold a `@ct.kernel` (every decorator's root is a builtin or an import from outside
cuda and the package). The check must never lose a kernel: decorators reached through aliases of cuda.tile,
sibling modules of the package, assignments or parameters keep the file on the full path."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from transpiler.frontend import common
from transpiler.frontend.cutile_python import may_define_kernels as _may_define_kernels
from transpiler.frontend.source import parse_file

KERNEL = textwrap.dedent("""
    @{deco}
    def scale(x, y, B: ct.Constant[int]):
        t = ct.load(x, index=(ct.bid(0),), shape=(B,))
        ct.store(y, index=(ct.bid(0),), tile=t * 2)
""")


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in files.items():
        (pkg / name).write_text(textwrap.dedent(text))
    return pkg


def _may(pkg: Path, name: str) -> bool:
    path = pkg / name
    return _may_define_kernels(ast.parse(path.read_text()), path)


HOST = """
    import functools
    from dataclasses import dataclass
    import torch

    @dataclass
    class Config:
        n: int = 1

        @property
        def twice(self):
            return 2 * self.n

    @functools.lru_cache(maxsize=None)
    def table(n):
        return list(range(n))

    @torch.compile
    def host(x):
        return x + 1
"""


def test_host_code_is_skipped(tmp_path):
    pkg = _package(tmp_path, {"host.py": HOST, "plain.py": "def f():\n    return 1\n"})
    assert not _may(pkg, "host.py")
    assert not _may(pkg, "plain.py")
    assert parse_file(pkg / "host.py", "host.py").kernels == []


@pytest.mark.parametrize("files, deco", [
    ({"k.py": "import cuda.tile as ct\n" + KERNEL}, "ct.kernel"),
    ({"k.py": "import cuda.tile as ct\nfrom cuda.tile import kernel\n" + KERNEL}, "kernel"),
    ({"k.py": "import cuda.tile as ct\nfrom cuda.tile import kernel as kern\n" + KERNEL}, "kern"),
    # an alias of cuda.tile.kernel made in a sibling module of the package, imported relatively or absolutely
    ({"aliases.py": "import cuda.tile as ct\nkern = ct.kernel\n",
      "k.py": "import cuda.tile as ct\nfrom .aliases import kern\n" + KERNEL}, "kern"),
    ({"aliases.py": "import cuda.tile\nfrom cuda.tile import kernel as kern\n",
      "k.py": "import cuda.tile as ct\nfrom pkg.aliases import kern\n" + KERNEL}, "kern"),
    # an alias assigned in the file itself
    ({"k.py": "import cuda.tile as ct\nkern = ct.kernel\n" + KERNEL}, "kern"),
])
def test_a_kernel_is_never_skipped(tmp_path, files, deco):
    files = {name: text.replace("{deco}", deco) for name, text in files.items()}
    pkg = _package(tmp_path, files)
    assert _may(pkg, "k.py")
    assert [k.name for k in parse_file(pkg / "k.py", "k.py").kernels] == ["scale"]


def test_the_skip_is_what_keeps_host_files_off_libcst(tmp_path, monkeypatch):
    """A mutant that always skips loses the kernels above; one that never skips parses host files: here
    LibCST's parse is made to fail, and the host file still comes back clean (it was not parsed)."""
    pkg = _package(tmp_path, {"host.py": HOST})

    def refuse(*a, **k):
        raise AssertionError("LibCST parsed a host file")
    monkeypatch.setattr(common.cst, "parse_module", refuse)
    fr = parse_file(pkg / "host.py", "host.py")
    assert fr.kernels == [] and fr.failures == [] and fr.diagnostics == []
