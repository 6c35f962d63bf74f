"""The Rust-direct example (examples/rust_direct) builds against a generated crate: a Rust program depends on
the port by path and launches a kernel through cuTile Rust, with no C ABI and no Python."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import requires_toolchain

ROOT = Path(__file__).resolve().parent.parent


@requires_toolchain
def test_the_rust_direct_example_checks_against_the_ported_corpus_kernel(tmp_path):
    from transpiler.verify.toolchain import cargo_env
    (tmp_path / "src").mkdir()
    shutil.copy(ROOT / "corpus/cutile/vector_add.py", tmp_path / "src")
    res = subprocess.run([sys.executable, "-m", "transpiler.cli", "src", "-o", "rust", "-q", "--crate-name", "corpus"],
                         cwd=tmp_path,
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr
    example = tmp_path / "examples" / "rust_direct"
    shutil.copytree(ROOT / "examples/rust_direct", example, ignore=shutil.ignore_patterns("target", "Cargo.lock"))
    # the headers come from `cutile-transpile env`, as the README says (no hand-set CUDA_TOOLKIT_PATH)
    exports = subprocess.run([sys.executable, "-m", "transpiler.cli", "env"], capture_output=True, text=True,
                             timeout=300)
    assert exports.returncode == 0, exports.stderr
    env = {k: v for k, v in cargo_env().items() if k != "CUDA_TOOLKIT_PATH"}
    for line in exports.stdout.splitlines():
        key, _, value = line.removeprefix("export ").partition("=")
        env[key] = value.strip("'")
    res = subprocess.run(["cargo", "check", "--release", "--quiet"], cwd=example, env=env, capture_output=True, text=True,
                         timeout=1800)
    assert res.returncode == 0, res.stderr[-4000:]
