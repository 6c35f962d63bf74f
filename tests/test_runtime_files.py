"""The runtime a generated package carries is plain code (transpiler/runtime/): copied verbatim under the version
header, with what varies per crate rendered beside it (`_crate.py`); its constants agree with the tables the
crate's `abi.rs` is rendered from."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from transpiler.emit import ffi
from transpiler.emit.render import runtime_file
from transpiler.runtime import RUNTIME_DIR, fastlaunch_digest_of


def test_runtime_files_are_plain_code():
    for p in RUNTIME_DIR.iterdir():
        if p.suffix in (".py", ".c", ".rs"):
            text = p.read_text(encoding="utf-8")
            # no Jinja left (a Rust format string's `{{` is not Jinja: an expression tag names a variable)
            assert not re.search(r"\{%|\{\{\s*[a-z_][\w.]*\s*(\|[^}]*)?\}\}", text), p
            assert "@generated" not in text, p  # the header is added when copied
    compile((RUNTIME_DIR / "_runtime.py").read_text(encoding="utf-8"), "_runtime.py", "exec")


def test_the_c_fast_path_agrees_with_the_abi_tables():
    c = (RUNTIME_DIR / "_fastlaunch.c").read_text(encoding="utf-8")
    assert int(re.search(r"#define FIRE_WORDS (\d+)", c).group(1)) == ffi.FIRE_WORDS


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    """A generated crate of one small kernel (no compile check)."""
    from transpiler.pipeline import run, write_outputs
    root = tmp_path_factory.mktemp("runtime_files")
    (root / "src").mkdir()
    (root / "src" / "k.py").write_text(
        "import cuda.tile as ct\n\n\n@ct.kernel\ndef twice(x, y, T: ct.Constant[int]):\n"
        "    ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(T,)) * 2)\n")
    write_outputs(run([root / "src"], root / "out")[1])
    return root / "out"


def test_a_package_carries_the_runtime_verbatim(out):
    pkg = out / "python" / "cutile_ports"
    for name, at in (("_runtime.py", pkg), ("_fastlaunch.c", pkg), ("abi.rs", out / "src")):
        text = (at / name).read_text(encoding="utf-8")
        assert text == runtime_file(name)
        assert text.split("\n", 1)[1] == (RUNTIME_DIR / name).read_text(encoding="utf-8")
    crate = (pkg / "_crate.py").read_text(encoding="utf-8")
    assert f'FASTLAUNCH_DIGEST = "{fastlaunch_digest_of((pkg / "_fastlaunch.c").read_text(encoding="utf-8"))}"' in crate
    assert f"FIRE_WORDS = {ffi.FIRE_WORDS}" in crate
    tables = (out / "src" / "abi_tables.rs").read_text(encoding="utf-8")  # abi.rs includes it
    assert f"pub const CUTILE_MAX_RANK: usize = {ffi.MAX_RANK};" in tables and 'include!("abi_tables.rs");' in text


def test_a_build_carries_the_digest_of_its_own_source(tmp_path):
    """A hand-edited `_fastlaunch.c` builds with another digest: the runtime (which expects its `_crate.py`'s) does
    not load it. (A C compiler and Python's headers are required, as for the fast path's other tests.)"""
    from transpiler.verify.toolchain import build_fastlaunch
    probe = ("import importlib.machinery as m, importlib.util as u, sys; l = m.ExtensionFileLoader('_fastlaunch', "
             "sys.argv[1]); mod = u.module_from_spec(u.spec_from_file_location('_fastlaunch', sys.argv[1], loader=l)); "
             "l.exec_module(mod); print(mod.DIGEST)")
    digests = []
    for i, text in enumerate((runtime_file("_fastlaunch.c"), runtime_file("_fastlaunch.c") + "/* edited */\n")):
        src, so = tmp_path / f"{i}" / "_fastlaunch.c", tmp_path / f"{i}" / "_fastlaunch.abi3.so"
        src.parent.mkdir()
        src.write_text(text)
        why = build_fastlaunch(src, so)
        assert why is None, why
        out = subprocess.run([sys.executable, "-c", probe, str(so)], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == fastlaunch_digest_of(text)
        digests.append(out.stdout.strip())
    assert digests[0] != digests[1]


def test_a_routed_triton_launch_binds_arguments_as_python_does(out):
    """`_triton_args` binds a launch's arguments per call from the kernel's parameters read once: the same names
    and values as `inspect.Signature.bind_partial` plus the defaults (keywords that are no parameter, launch
    options such as `num_warps`, left out), and the same refusals with the same messages."""
    import inspect

    from test_abi import load_package
    rt = load_package(out)._runtime

    def kernel(x_ptr, y_ptr, n, BLOCK=128, FLAG=False):
        pass

    def reference(args, kwargs):
        sig = inspect.signature(kernel)
        named = dict(sig.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in sig.parameters}).arguments)
        return {**{n: p.default for n, p in sig.parameters.items() if p.default is not inspect.Parameter.empty},
                **named}

    calls = [((1, 2, 3), {}), ((1, 2), {"n": 3, "BLOCK": 64}), ((1,), {"y_ptr": 2, "n": 3, "num_warps": 4}),
             ((1, 2, 3, 256, True), {}), ((), {"x_ptr": 1, "y_ptr": 2, "n": 3, "FLAG": True, "num_stages": 2})]
    for args, kwargs in calls:
        for _ in range(2):  # the first call reads the parameters, the second uses what it kept
            assert rt._triton_args(None, kernel, {}, args, kwargs) == reference(args, kwargs)
    for args, kwargs in [((1, 2, 3, 4, 5, 6), {}), ((1, 2, 3), {"n": 4})]:
        with pytest.raises(TypeError) as mine:
            rt._triton_args(None, kernel, {}, args, kwargs)
        with pytest.raises(TypeError) as python:
            reference(args, kwargs)
        assert str(mine.value) == str(python.value)
    assert rt._triton_args(None, kernel, {"FLAG": lambda named: named["n"] > 2}, (1, 2, 3), {}, {"BLOCK": 32}) == \
        {"x_ptr": 1, "y_ptr": 2, "n": 3, "BLOCK": 32, "FLAG": True}  # the config, then the heuristics

    def starred(x_ptr, *rest, n=4):  # not only positional-or-keyword parameters: Python's own binding
        pass
    assert rt._triton_args(None, starred, {}, (1, 2, 3), {"n": 5}) == {"x_ptr": 1, "rest": (2, 3), "n": 5}


def test_every_runtime_file_ships_in_the_package():
    """An installed tool (a wheel, pre-commit's own environment) has every file it copies into a crate."""
    import fnmatch
    import tomllib
    root = RUNTIME_DIR.parent.parent
    setup = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "transpiler.runtime" in setup["packages"]
    patterns = setup["package-data"].get("transpiler.runtime", [])
    for p in RUNTIME_DIR.iterdir():
        if p.is_file() and p.suffix != ".py" and not p.name.startswith("."):
            assert any(fnmatch.fnmatch(p.name, pat) for pat in patterns), p.name
