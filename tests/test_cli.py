"""The command-line contract: formats, exit codes, diagnostics, safety and determinism."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS

UNSUPPORTED = '''import cuda.tile as ct


@ct.kernel
def returns_in_loop(x, y, n, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    while n > 0:
        if n > 3:
            return
        t = t * 2.0
    ct.store(y, index=(ct.bid(0),), tile=t)


@ct.kernel
def fine(x, y, T: ct.Constant[int]):
    ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(T,)))
'''


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "transpiler.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd)


def test_help_and_version():
    assert cli("--help").returncode == 0
    res = cli("--version")
    assert res.returncode == 0 and res.stdout.startswith("cutile-transpile ")


def test_usage_errors_exit_2(tmp_path):
    assert cli(CORPUS).returncode == 2  # no -o
    assert cli(tmp_path / "missing.py", "-o", tmp_path / "out").returncode == 2
    assert cli("--no-such-flag").returncode == 2
    res = cli(tmp_path, "-o", tmp_path)  # source inside output
    assert res.returncode == 2 and "inside the output directory" in res.stderr


def test_json_document(tmp_path):
    res = cli(CORPUS, "-o", tmp_path / "out", "--format", "json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["version"] == 1
    assert set(doc["summary"]) == {"kernels", "translated", "fallback", "unsupported", "error", "equivalent",
                                   "compiled", "numbers_match", "numbers_differ", "different", "not_verified",
                                   "file_errors"}
    k = doc["kernels"][0]
    assert set(k) == {"name", "source", "line", "frontend", "status", "entries", "verify", "verified_at",
                      "checks", "diagnostics"}
    assert k["verify"] is None and k["verified_at"] is None and k["checks"] == [] and k["status"] == "translated" and k["frontend"] == "cutile-python"
    assert doc["summary"]["translated"] == doc["summary"]["kernels"] >= 40


def test_unsupported_kernel_is_diagnosed_and_others_emitted(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(UNSUPPORTED)
    res = cli(src, "-o", tmp_path / "out")
    assert res.returncode == 1
    assert f"{src.as_posix()}:9:13: error: " in res.stderr and "[CT107]" in res.stderr
    assert "Traceback" not in res.stderr
    assert "^" in res.stderr  # caret under the source line
    rust = (tmp_path / "out/src/k/kernel.rs").read_text()
    assert "pub fn fine<" in rust and "returns_in_loop" not in rust
    doc = json.loads(cli(src, "-o", tmp_path / "out", "--format", "json").stdout)
    bad = next(k for k in doc["kernels"] if k["name"] == "returns_in_loop")
    assert bad["status"] == "unsupported"
    assert bad["diagnostics"] == [{"severity": "error", "code": "CT107", "message": bad["diagnostics"][0]["message"],
                                   "path": src.as_posix(), "line": 9, "col": 13}]


def test_github_format(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(UNSUPPORTED)
    res = cli(src, "-o", tmp_path / "out", "--format", "github")
    assert f"::error file={src.as_posix()},line=9,col=13,title=CT107::" in res.stderr


def test_syntax_error_and_non_kernel_files(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src/broken.py").write_text("def f(:\n")
    (tmp_path / "src/plain.py").write_text("x = 1\n")
    res = cli(tmp_path / "src", "-o", tmp_path / "out")
    assert res.returncode == 1
    assert "broken.py:1:" in res.stderr and "[CT001]" in res.stderr
    assert not (tmp_path / "out").exists()  # nothing to emit, nothing half-written


def test_fail_on_error_stops(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(UNSUPPORTED)
    doc = json.loads(cli(src, "-o", tmp_path / "out", "--format", "json", "--fail-on-error").stdout)
    assert [k["name"] for k in doc["kernels"]] == ["returns_in_loop"]


def test_kernel_filter(tmp_path):
    doc = json.loads(cli(CORPUS, "-o", tmp_path / "out", "--format", "json", "--kernel", "matmul").stdout)
    assert [k["name"] for k in doc["kernels"]] == ["matmul"]


def test_deterministic_and_order_independent(tmp_path):
    files = sorted((CORPUS / "cutile").rglob("*.py"))
    cli(*files, "-o", tmp_path / "a/rust")
    cli(*reversed(files), "-o", tmp_path / "b/rust")
    cli(CORPUS / "cutile", "-o", tmp_path / "c/rust", cwd=CORPUS.parent)
    a_root = tmp_path / "a/rust"
    for rel in sorted(p.relative_to(a_root) for p in a_root.rglob("*") if p.is_file()):
        a = (a_root / rel).read_bytes()
        assert a == (tmp_path / "b/rust" / rel).read_bytes(), rel
        assert a == (tmp_path / "c/rust" / rel).read_bytes(), rel
    text = (a_root / "src/matmul/kernel.rs").read_text()
    assert str(tmp_path) not in text and "@generated" in text.splitlines()[0]


def test_no_rewrite_when_unchanged_and_no_clobbering(tmp_path):
    out = tmp_path / "out"
    cli(CORPUS, "-o", out)
    rs = out / "src/matmul/kernel.rs"
    before = rs.stat().st_mtime_ns
    res = cli(CORPUS, "-o", out)
    assert rs.stat().st_mtime_ns == before and "0 files written" in res.stderr
    rs.write_text("// my own hand-written file\n")
    res = cli(CORPUS, "-o", out)
    assert res.returncode == 1 and "@generated" in res.stderr
    assert rs.read_text() == "// my own hand-written file\n"
    assert cli(CORPUS, "-o", out, "--force").returncode == 0
    assert "@generated" in rs.read_text()


def test_out_inside_src_is_skipped(tmp_path):
    import shutil
    src = tmp_path / "proj"
    shutil.copytree(CORPUS, src)
    assert cli(".", "-o", "rust", cwd=src).returncode == 0
    assert cli(".", "-o", "rust", cwd=src).returncode == 0  # generated files are not read back as sources
    assert (src / "rust/src/matmul/kernel.rs").is_file()


def test_markdown_report(tmp_path):
    fixtures = Path(__file__).resolve().parent / "fixtures" / "unsupported"
    res = cli(CORPUS, fixtures, "-o", tmp_path / "out", "--report", tmp_path / "report.md")
    assert res.returncode == 1
    text = (tmp_path / "report.md").read_text()
    assert text.startswith("# cutile-transpile report")
    assert "| kernel | source | status | verify | entries |" in text
    assert "## Unsupported constructs" in text and "| CT107 |" in text and "rank_by_runtime.py:12:31" in text
    assert "entry `partial_sum__axis_eq_0` for `AXIS == 0`" in text
    assert "output `c`: checked" in text
    assert "rules: CTR-ADD, CTR-BID, CTR-LOAD, CTR-STORE" in text


def test_ports_of_removed_sources_are_removed(tmp_path):
    import shutil
    src = tmp_path / "src"
    shutil.copytree(CORPUS / "cutile", src)
    out = tmp_path / "out"
    assert cli(src, "-o", out).returncode == 0
    assert (out / "src/matmul/kernel.rs").is_file()
    (src / "matmul.py").unlink()
    res = cli(src, "-o", out, "--check")
    assert res.returncode == 1 and "a/" in res.stdout and "matmul/kernel.rs" in res.stdout
    assert (out / "src/matmul/kernel.rs").is_file()  # --check writes nothing
    assert cli(src, "-o", out).returncode == 0
    assert not (out / "src/matmul").exists()
    assert "pub mod matmul" not in (out / "src/lib.rs").read_text()
    assert cli(src, "-o", out, "--check").returncode == 0


def test_help_lists_every_command_and_flags_take_no_value(tmp_path):
    res = cli("--help")
    assert res.returncode == 0
    assert "cutile-transpile verify OUT" in res.stdout and "cutile-transpile build OUT" in res.stdout
    assert "--verify  " in res.stdout and "<bool>" not in res.stdout  # a flag shows no value placeholder
    assert max(len(line) for line in res.stdout.splitlines()) <= 80
    (tmp_path / "k.py").write_text("x = 1\n")
    res = cli(str(tmp_path / "k.py"), "--verify", "true", "-o", str(tmp_path / "out"))
    assert res.returncode == 2 and "take no value" in res.stderr


def test_the_crate_is_named_after_the_source_package_and_keeps_its_name(tmp_path):
    pkg = tmp_path / "src" / "mylib" / "ops"
    pkg.mkdir(parents=True)
    (tmp_path / "src" / "mylib" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    shutil.copy(CORPUS / "cutile" / "vector_add.py", pkg)
    crate = lambda out: json.loads((out / "manifest.json").read_text())["crate"]  # noqa: E731
    for src in (tmp_path / "src", pkg, pkg / "vector_add.py"):  # the top package holding what is given
        out = tmp_path / f"out_{src.name}"
        assert cli(src, "-o", out, "-q", "--no-compile-check").returncode == 0
        assert crate(out) == "mylib"
    out = tmp_path / "out_src"
    assert cli(pkg, "-o", out, "-q", "--no-compile-check", "--crate-name", "kernels_rs").returncode == 0
    assert crate(out) == "kernels_rs" and 'name = "kernels_rs"' in (out / "Cargo.toml").read_text()
    assert cli(tmp_path / "src", "-o", out, "-q", "--no-compile-check").returncode == 0
    assert crate(out) == "kernels_rs"  # a later run keeps the name OUT has
    res = cli(pkg, "-o", out, "--crate-name", "core")
    assert res.returncode == 2 and "core_ports" in res.stderr and crate(out) == "kernels_rs"
