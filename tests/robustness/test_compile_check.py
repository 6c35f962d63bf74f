"""One kernel whose Rust does not compile never breaks the others: it is reported `error` (CT007) with
rustc's message at the kernel's Python position and left out with its C symbol and wrapper."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import transpiler.pipeline as pipeline
from conftest import requires_toolchain
from transpiler.verify.compile_check import RustError, attribute, compile_errors

KERNEL = '''import cuda.tile as ct


@ct.kernel
def {name}(a, b, TILE: ct.Constant[int]):
    x = ct.load(a, index=(ct.bid(0),), shape=(TILE,))
    ct.store(b, index=(ct.bid(0),), tile=x {op} x)
'''


def sources(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "one.py").write_text(KERNEL.format(name="good_a", op="+") + KERNEL.format(name="bad", op="*").split("\n", 2)[2])
    (src / "two.py").write_text(KERNEL.format(name="good_b", op="-"))
    return src


def break_entry(monkeypatch, entry: str, where: str = "kernel.rs"):
    """Renders as usual, then puts a type error into the body of one entry (or the C symbol of a kernel)."""
    real = pipeline.render_crate

    def render(out, plan, answers=None, crate=None):
        outputs = real(out, plan, answers, crate)
        fresh = any(k["name"] == entry and not k.get("stale") for m in plan for k in m.kernels)
        for path, text in outputs.items():
            if not fresh and where == "kernel.rs":
                break  # a port kept from an earlier run compiled then: it is not broken
            if path.name == where:
                pat = rf"(pub (?:unsafe )?(?:extern \"C\" )?fn {re.escape(entry)}\b.*?\) (?:-> i32 )?\{{\n)"
                new = re.sub(pat, r'\1let _broken: i32 = "not an i32";\n', text, count=1, flags=re.S)
                assert new != text or entry not in text
                outputs[path] = new
        return outputs
    monkeypatch.setattr(pipeline, "render_crate", render)


def test_attribution_to_entries_symbols_and_modules():
    kernel = ("//! header\n#[cutile::module]\npub mod m_kernels {\n    use cutile::core::*;\n\n"
              "    /// Port of `a`.\n    #[cutile::entry()]\n    pub fn a() {\n        x\n    }\n\n"
              "    /// Port of `b`.\n    /// Output.\n    #[cutile::entry()]\n    pub fn b() {\n        y\n    }\n}\n")
    ffi = "use x;\n\n/// `k` (a.py:1)\n#[unsafe(no_mangle)]\npub unsafe extern \"C\" fn cutile_k(\n) {}\nfn launch_k() {}\n"
    files = {"src/m/kernel.rs": kernel, "src/m/ffi.rs": ffi, "src/lib.rs": "pub mod abi;\n\npub mod m {\n    pub mod ffi;\n}\n"}
    at = lambda f, line: attribute(RustError(f, line, ""), files)  # noqa: E731
    assert at("src/m/kernel.rs", 9) == ("m", "a")
    assert at("src/m/kernel.rs", 14) == ("m", "b")  # the attribute line of b belongs to b
    assert at("src/m/kernel.rs", 2) == ("m", None)  # module level
    assert at("src/m/ffi.rs", 8) == ("m", "cutile_k")
    assert at("src/m/ffi.rs", 1) == ("m", None)
    assert at("src/lib.rs", 5) == ("m", None)
    assert at("src/abi.rs", 3) == (None, None)


@requires_toolchain
def test_a_kernel_that_does_not_compile_is_left_out(tmp_path, monkeypatch):
    src = sources(tmp_path)
    out = tmp_path / "out"
    break_entry(monkeypatch, "bad")
    result, outputs = pipeline.run([src], out, compile_check="on")
    status = {k.name: k.status for k in result.kernels}
    assert status == {"good_a": "translated", "bad": "error", "good_b": "translated"}
    bad = next(k for k in result.kernels if k.name == "bad")
    d = bad.diagnostics[-1]
    assert d.code == "CT007" and d.pos.line == bad.line and d.pos.path.endswith("one.py")
    assert "mismatched types" in d.message and "src/one/kernel.rs" in d.message
    text = "".join(outputs.values())
    assert "fn bad" not in text and "cutile_bad" not in text and "SPEC_bad" not in text
    assert "pub fn good_a" in text and "cutile_good_b" in text
    files = {p.relative_to(out).as_posix(): c for p, c in outputs.items() if p.suffix in (".rs", ".toml")}
    assert compile_errors(files, "test-left-out") == []  # the rest of the crate compiles


@requires_toolchain
def test_a_broken_c_symbol_takes_its_kernel_out(tmp_path, monkeypatch):
    src = sources(tmp_path)
    break_entry(monkeypatch, "cutile_good_b", where="ffi.rs")
    result, outputs = pipeline.run([src], tmp_path / "out", compile_check="on")
    assert {k.name: k.status for k in result.kernels} == {"good_a": "translated", "bad": "translated",
                                                          "good_b": "error"}
    man = json.loads(outputs[tmp_path / "out" / "manifest.json"])
    assert [m["op"] for m in man["modules"]] == ["one"]  # the module with nothing left is not in the crate


@requires_toolchain
def test_an_earlier_port_takes_the_place_of_a_new_one_that_does_not_compile(tmp_path, monkeypatch):
    src = sources(tmp_path)
    out = tmp_path / "out"
    _, outputs = pipeline.run([src], out, compile_check="on")
    pipeline.write_outputs(outputs)
    before = (out / "src/one/kernel.rs").read_text()
    (src / "one.py").write_text((src / "one.py").read_text().replace("x * x", "x * x * x"))
    break_entry(monkeypatch, "bad")
    result, outputs = pipeline.run([src], out, compile_check="on")
    assert next(k for k in result.kernels if k.name == "bad").status == "error"
    man = json.loads(outputs[out / "manifest.json"])
    kept = next(k for m in man["modules"] for k in m["kernels"] if k["name"] == "bad")
    assert kept["stale"] is True
    new = outputs[out / "src/one/kernel.rs"]
    old_bad = before[before.index("/// Port of `bad`"):]
    assert old_bad.split("\n    }\n")[0] in new  # the earlier entry, byte for byte


@requires_toolchain
def test_cli_reports_and_exits_1(tmp_path, monkeypatch):
    """Through the CLI entry point in this process (the breakage is injected with monkeypatch)."""
    from typer.testing import CliRunner
    from transpiler.cli import transpile_app
    src = sources(tmp_path)
    break_entry(monkeypatch, "bad")
    res = CliRunner().invoke(transpile_app, [str(src), "-o", str(tmp_path / "out"), "--compile-check"])
    assert res.exit_code == 1
    assert "[CT007]" in res.output and "bad: error" in res.output
    assert "good_a: translated" in res.output
    assert "pub fn good_a" in (tmp_path / "out/src/one/kernel.rs").read_text()


def test_no_toolchain_is_a_warning_or_an_error(tmp_path, monkeypatch):
    from transpiler.verify import compile_check
    from transpiler.verify.toolchain import ToolchainError

    def missing():
        raise ToolchainError("cargo not found")
    monkeypatch.setattr(compile_check, "cargo_env", missing)
    src = sources(tmp_path)
    result, outputs = pipeline.run([src], tmp_path / "out", compile_check="auto")
    assert outputs and any(d.code == "CT006" for d in result.file_diagnostics)
    with pytest.raises(pipeline.CompileFailure, match="cannot be compile-checked"):
        pipeline.run([src], tmp_path / "out", compile_check="on")
