"""The frontend never crashes on input: encodings, deep nesting, recursive helpers, odd kernel definitions and
tile shapes each give a diagnostic with a position and a code, and the file's other kernels still translate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from transpiler.frontend.source import parse_file
from transpiler.frontend.common import (SourceDecodeError, decode_source, kernel_depth_limit, read_source, run_deep)

LOAD = "    x = ct.load(a, index=(ct.bid(0),), shape=(TILE,))\n"
STORE = "    ct.store(b, index=(ct.bid(0),), tile={})\n"


def kernel(name: str, body: str = LOAD + STORE.format("x"), sig: str = "a, b, TILE: ct.Constant[int]",
           deco: str = "@ct.kernel\n", head: str = "def") -> str:
    return f"{deco}{head} {name}({sig}):\n{body}"


GOOD = kernel("good")


def module(*parts: str, prelude: str = "") -> str:
    return "import cuda.tile as ct\n" + prelude + "\n\n".join(parts)


def parse(tmp_path: Path, text: str | bytes, name: str = "k.py"):
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return parse_file(p, name)


def codes(fr) -> dict[str, str]:
    """kernel name -> code of its failure."""
    return {name: d.code for name, _, d in fr.failures}


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUTILE_TRANSPILE_CACHE=str(cwd / ".cache"))
    return subprocess.run([sys.executable, "-c", "from transpiler.cli import main; main()", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


# ------------------------------------------------------------------------------------------- encodings

def test_pep263_latin1_source_is_decoded(tmp_path):
    text = "# -*- coding: latin-1 -*-\nimport cuda.tile as ct\n# café\n" + GOOD
    fr = parse(tmp_path, text.encode("latin-1"))
    assert not fr.diagnostics and [k.name for k in fr.kernels] == ["good"]
    assert "café" in read_source(tmp_path / "k.py")


def test_bom_and_crlf(tmp_path):
    p = tmp_path / "k.py"
    p.write_bytes(b"\xef\xbb\xbf" + module(GOOD).replace("\n", "\r\n").encode())
    assert read_source(p) == module(GOOD)
    assert [k.name for k in parse_file(p, "k.py").kernels] == ["good"]


def test_non_utf8_without_cookie_is_ct002_at_the_bad_line(tmp_path):
    fr = parse(tmp_path, b"import cuda.tile as ct\n# caf\xe9\n" + GOOD.encode())
    (d,) = fr.diagnostics
    assert (d.code, d.pos.line, d.pos.col) == ("CT002", 2, 6)
    assert "0xe9" in d.message and "PEP 263" in d.message
    with pytest.raises(SourceDecodeError) as e:
        read_source(tmp_path / "k.py")
    assert isinstance(e.value, ValueError) and e.value.line == 2


def test_unknown_cookie_and_binary(tmp_path):
    with pytest.raises(SourceDecodeError):
        decode_source(b"# coding: no-such-codec\nx = 1\n")
    fr = parse(tmp_path, bytes(range(256)) * 16, "binary.py")
    assert [d.code for d in fr.diagnostics] in (["CT002"], ["CT001"])


def test_cli_json_document_with_undecodable_source(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src/latin1.py").write_bytes(b"import cuda.tile as ct\n# caf\xe9\n")
    (tmp_path / "src/good.py").write_text(module(GOOD))
    res = cli("src", "-o", "out", "--format", "json", cwd=tmp_path)
    doc = json.loads(res.stdout)  # one document, even with a file that cannot be decoded
    assert [k["name"] for k in doc["kernels"] if k["status"] == "translated"] == ["good"]
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr


# ------------------------------------------------------------------------------------------ deep input

def deep_sum(n: int) -> str:
    return module(kernel("deep", LOAD + "    y = " + " + ".join(["x"] * n) + "\n" + STORE.format("y")), GOOD)


def deep_parens(n: int) -> str:
    return module(kernel("deep", LOAD + "    y = " + "(" * n + "x" + " + x)" * n + "\n" + STORE.format("y")), GOOD)


@pytest.mark.parametrize("n", [400, 1000])
def test_long_sum_is_a_kernel_diagnostic_or_translated(tmp_path, n):
    """CPython compiles these: never a crash; past what the passes can take here, CT116 for that kernel only."""
    fr = parse(tmp_path, deep_sum(n))
    assert not fr.diagnostics and "good" in [k.name for k in fr.kernels]
    if n + 1 > kernel_depth_limit():
        assert codes(fr) == {"deep": "CT116"}
        assert fr.failures[0][2].pos.line == 6  # the deep assignment


def test_long_sum_translates_in_a_deep_context(tmp_path):
    from transpiler.emit.lower import lower_kernel
    from transpiler.pipeline import translate_kernel

    def whole():
        fr = parse(tmp_path, deep_sum(400))
        return [lower_kernel(v).name for k in fr.kernels for v in translate_kernel(k)]

    assert sorted(run_deep(whole)) == ["deep", "good"]
    assert sys.getrecursionlimit() < 10_000  # restored


@pytest.mark.parametrize("text", [deep_sum(10_000), deep_parens(10_000), deep_parens(1000)])
def test_beyond_cpython_limits_is_ct001(tmp_path, text):
    fr = parse(tmp_path, text)
    assert [d.code for d in fr.diagnostics] == ["CT001"] and not fr.kernels


def test_deep_via_helpers_is_ct116(tmp_path):
    """Each helper is shallow, the inlined kernel is not."""
    helpers = "".join(f"def h{i}(x):\n    return h{i + 1}(x) + x\n\n" for i in range(1200)) + "def h1200(x):\n    return x\n\n"
    fr = parse(tmp_path, module(kernel("deep", LOAD + STORE.format("h0(x)")), GOOD, prelude=helpers))
    assert codes(fr) == {"deep": "CT116"} and [k.name for k in fr.kernels] == ["good"]


def test_cli_deep_inputs(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src/flat500.py").write_text(deep_sum(500))
    (tmp_path / "src/paren10000.py").write_text(deep_parens(10_000))
    res = cli("src", "-o", "out", "--format", "json", cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    doc = json.loads(res.stdout)
    assert "Traceback" not in res.stderr and "internal error" not in res.stdout
    assert {k["name"] for k in doc["kernels"] if k["status"] == "translated"} >= {"good"}


# ---------------------------------------------------------------------------------- recursive helpers

REC = "def rec(x, n):\n    return rec(x, n - 1)\n\n"
MUTUAL = "def ma(x):\n    return mb(x)\n\ndef mb(x):\n    return ma(x)\n\n"


def test_recursive_helpers_are_per_kernel_ct110(tmp_path):
    fr = parse(tmp_path, module(kernel("k_rec", LOAD + STORE.format("rec(x, 3)")),
                                kernel("k_mut", LOAD + STORE.format("ma(x)")),
                                kernel("k_self", LOAD + "    k_self(a, b, TILE)\n" + STORE.format("x")),
                                GOOD, prelude=REC + MUTUAL))
    assert codes(fr) == {"k_rec": "CT110", "k_mut": "CT110", "k_self": "CT110"}
    assert [k.name for k in fr.kernels] == ["good"]
    msg = {name: d.message for name, _, d in fr.failures}
    assert "ma -> mb -> ma" in msg["k_mut"] and "`rec` calls itself" in msg["k_rec"]


def test_cli_recursive_helper_does_not_abort_the_run(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src/rec.py").write_text(module(kernel("k_rec", LOAD + STORE.format("rec(x, 3)")), prelude=REC))
    (tmp_path / "src/good.py").write_text(module(GOOD))
    res = cli("src", "-o", "out", cwd=tmp_path)
    assert res.returncode == 1 and "[CT110]" in res.stderr and "RecursionError" not in res.stderr
    assert (tmp_path / "out/src/good/kernel.rs").exists()


# ------------------------------------------------------------------------------ odd kernel definitions

@pytest.mark.parametrize("src, code", [
    (kernel("k", head="async def"), "CT111"),
    (kernel("k", deco="@ct.kernel\n@functools.lru_cache\n"), "CT112"),  # below: it changes what cuTile compiles
    (kernel("k_é"), "CT114"),
    (kernel("k", sig="a, b, /, TILE: ct.Constant[int]"), "CT100"),
])
def test_odd_definitions(tmp_path, src, code):
    fr = parse(tmp_path, module(src, GOOD, prelude="import functools\n"))
    name = fr.failures[0][0] if fr.failures else None
    assert codes(fr) == {name: code} and [k.name for k in fr.kernels] == ["good"]
    if code == "CT100":
        assert "position-only" in fr.failures[0][2].message


def test_a_decorator_above_the_kernel_is_translated(tmp_path):
    """A decorator above `@ct.kernel` (a library's `@experimental_kernel` tag) wraps the kernel object, not what
    cuTile Python compiles: the kernel is translated (verification checks that the module's name is still
    that kernel, tests/test_features.py); below `@ct.kernel` it is refused (CT112, above)."""
    fr = parse(tmp_path, module(kernel("k", deco="@functools.lru_cache\n@ct.kernel\n"), GOOD,
                                prelude="import functools\n"))
    assert not fr.failures and sorted(k.name for k in fr.kernels) == ["good", "k"]


def test_nested_kernel_is_ct113(tmp_path):
    """A kernel in a class, or in a block of a function, is CT113; one a factory function defines directly
    is translated (its closure values are constants) unless what it reads from the factory cannot be one."""
    nested = "class Make:\n" + "".join("    " + line + "\n" for line in kernel("k_nested").splitlines())
    fr = parse(tmp_path, module(nested, GOOD))
    assert codes(fr) == {"k_nested": "CT113"} and [k.name for k in fr.kernels] == ["good"]
    assert fr.failures[0][2].pos.line == 4  # the `def` of the nested kernel
    in_block = "def make(flag):\n    if flag:\n" + "".join("        " + line + "\n" for line in
                                                          kernel("k_nested").splitlines())
    assert codes(parse(tmp_path, module(in_block + "    return k_nested\n", GOOD))) == {"k_nested": "CT113"}
    reads_helper = "def make(n):\n    def helper(t):\n        return t\n" + "".join(
        "    " + line + "\n" for line in kernel("k_nested", "    helper(a)\n    return\n").splitlines())
    assert codes(parse(tmp_path, module(reads_helper + "    return k_nested\n", GOOD))) == {"k_nested": "CT113"}
    factory = "def make(occ: int):\n" + "".join("    " + line + "\n" for line in
                                                kernel("k_nested", deco="@ct.kernel(occupancy=occ)\n").splitlines())
    fr = parse(tmp_path, module(factory + "    return k_nested\n", GOOD))
    assert codes(fr) == {"k_nested": "CT102"}  # a decorator hint from the factory: one value per port


def test_locals_shadowing_module_names(tmp_path):
    shadow_import = kernel("k_ct", "    ct = 5\n    x = a\n    return\n")
    const = kernel("k_const", "    BLOCK = 2\n    x = ct.load(a, index=(ct.bid(0),), shape=(BLOCK,))\n"
                   + STORE.format("x"))
    fr = parse(tmp_path, module(shadow_import, const, prelude="BLOCK = 64\n"))
    assert codes(fr) == {"k_ct": "CT100"}
    (k,) = fr.kernels  # the local BLOCK (2), not the module's 64, is the tile size
    assert "64" not in repr(k.body) and "BLOCK" in repr(k.body)


# ----------------------------------------------------------------------------------------- tile shapes

@pytest.mark.parametrize("dims", ["(0,)", "(3,)", "(-64,)", "(64, 48)", "(2147483648,)"])
def test_literal_tile_dims_must_be_positive_powers_of_two(tmp_path, dims):
    body = f"    x = ct.load(a, index=(ct.bid(0),), shape={dims})\n" + STORE.format("x")
    fr = parse(tmp_path, module(kernel("k", body, sig="a, b"), GOOD))
    assert codes(fr) == {"k": "CT105"}
    assert [k.name for k in fr.kernels] == ["good"]


def test_tile_dims_from_module_constants_and_creation(tmp_path):
    body = "    t = ct.zeros((W, 8), dtype=ct.float32)\n    ct.store(b, index=(ct.bid(0), 0), tile=t)\n"
    fr = parse(tmp_path, module(kernel("k", body, sig="b"), prelude="W = 12\n"))
    assert codes(fr) == {"k": "CT105"} and "12" in fr.failures[0][2].message


def test_module_constants_that_cannot_be_evaluated(tmp_path):
    """`2 ** 10 ** 10` must not hang, `10.0 ** 400` must not raise OverflowError."""
    fr = parse(tmp_path, module(GOOD, prelude="HUGE = 2 ** 10 ** 10\nBIG = 10.0 ** 400\n"))
    assert [k.name for k in fr.kernels] == ["good"] and not fr.diagnostics


# ---------------------------------------------------------------------------------- the whole odd set

ODD = {
    "k_print.py": kernel("k_print", LOAD + "    print(x)\n" + STORE.format("x")),
    "k_async.py": kernel("k_async", head="async def"),
    "k_rec.py": kernel("k_rec", LOAD + STORE.format("rec(x, 3)")),
    "k_zero.py": kernel("k_zero", "    x = ct.load(a, index=(ct.bid(0),), shape=(0,))\n" + STORE.format("x"), "a, b"),
    "k_neg.py": kernel("k_neg", "    x = ct.load(a, index=(ct.bid(0),), shape=(-64,))\n" + STORE.format("x"), "a, b"),
    "k_é.py": kernel("k_é"),
    "k_posonly.py": kernel("k_posonly", sig="a, b, /, TILE: ct.Constant[int]"),
    "k_match.py": kernel("k_match", LOAD + "    match TILE:\n        case 1:\n            pass\n" + STORE.format("x")),
}


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_cli_odd_directory(tmp_path, fmt):
    src = tmp_path / "src"
    src.mkdir()
    for name, text in ODD.items():
        (src / name).write_text(module(text, prelude=REC))
    (src / "good.py").write_text(module(GOOD))
    (src / "latin1.py").write_bytes(b"import cuda.tile as ct\n# caf\xe9\n")
    res = cli("src", "-o", "out", "--format", fmt, cwd=tmp_path)
    assert res.returncode == 1 and "internal error" not in res.stderr + res.stdout and "CT900" not in res.stderr
    if fmt == "json":
        doc = json.loads(res.stdout)
        status = {k["name"]: (k["status"], [d["code"] for d in k["diagnostics"]]) for k in doc["kernels"]}
        assert status["good"] == ("translated", [])
        assert all(s == "unsupported" and c and "CT900" not in c for n, (s, c) in status.items() if n != "good")
        assert len(status) == len(ODD) + 1


def _lazy_vs_full(src: str) -> int:
    import ast

    import libcst as cst

    from transpiler.frontend import common as F
    module = cst.parse_module(src)
    full = F._positions(module)
    lazy = F.LazyPositions.of(module, ast.parse(src), src)
    assert isinstance(lazy, F.LazyPositions)
    # the statements' texts are the source from the first statement on (the launch scan filters on them)
    texts = [lazy.statement_text(i) for i in range(len(module.body))]
    assert "".join(texts) == "".join(src.splitlines(keepends=True)[lazy.starts[0] - 1:]) if texts else True
    lazy.prefer(list(module.body)[1::2])  # preferred statements are tried first: the positions do not change
    checked = 0
    for stmt in reversed(module.body):  # asked out of order, as the converter does
        for n in F.walk_nodes(stmt):
            if n in full:
                assert lazy[n] == full[n], (type(n).__name__, lazy[n], full[n])
                checked += 1
    return checked


def test_lazy_positions_are_libcst_positions():
    """Positions computed one top-level statement at a time are the ones LibCST's PositionProvider gives for
    the whole module: on the corpus and fixtures, and on layouts that move lines (comments and blank lines
    before decorators, a module header, semicolons, continuation lines, CRLF, tabs)."""
    root = Path(__file__).resolve().parents[2]
    files = sorted([*(root / "corpus").rglob("*.py"), *(root / "tests" / "fixtures").rglob("*.py")])
    assert sum(_lazy_vs_full(f.read_text()) for f in files) > 10_000
    odd = ("#!/usr/bin/env python\n# header\n\n\nimport cuda.tile as ct\nA = 1; B = 2\n\n# about k\n\n"
           "@ct.kernel\n# between\n@ct.kernel\ndef k(x,\n      y):\n\tv = ct.load(x, index=(0,), \\\n"
           "\t    shape=(4,))\n\tct.store(y, index=(0,), tile=v)\nif A:\n    C = 3\n# trailing\n")
    assert _lazy_vs_full(odd) > 30
    assert _lazy_vs_full(odd.replace("\n", "\r\n")) > 30
