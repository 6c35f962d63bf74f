"""A constant condition only the Rust has is probed on both sides (verify/run.py `_rust_condition_probes`):
cuTile Rust folds `if TILE == 512 { ... }` away at every specialization the manifest lists, so a port wrong
at TILE = 512 alone verified `equivalent` (shared/repros/verifier-holes N03/N04)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import CORPUS, requires_toolchain
from transpiler.pipeline import run, write_outputs

pytestmark = requires_toolchain

OLD = "        let c_a: Tile<E, { [TILE] }> = x + y;"


@pytest.mark.parametrize("cond", ["TILE == 512i32", "TILE > 2048i32"])
def test_a_rust_only_constant_condition_is_probed(tmp_path, cond):
    from transpiler.verify.run import verify_output
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(CORPUS / "cutile" / "vector_add.py", src / "vector_add.py")
    out = tmp_path / "rust"
    write_outputs(run([src], out, compile_check=False)[1])
    kernel_rs = out / "src" / "vector_add" / "kernel.rs"
    text = kernel_rs.read_text()
    assert text.count(OLD) == 1
    kernel_rs.write_text(text.replace(OLD, OLD.replace("let c_a", "let mut c_a")
                                      + f"\n        if {cond} {{\n            c_a = x - y;\n        }}"))
    (v,) = verify_output(out)
    assert v.verdict == "different", (v.verdict, v.reason, v.unprobed)
    bad = [c for c in v.checks if c.verdict == "different"]
    assert bad and all(c.probe and cond.split()[0] in c.probe for c in bad), [(c.spec, c.probe) for c in bad]
