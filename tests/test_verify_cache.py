"""Verification is incremental: a verdict is reused only while nothing it depends on changed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import requires_toolchain

KERNEL = '''import cuda.tile as ct


@ct.kernel
def {name}(x, y, TILE: ct.Constant[int]):
    bid = ct.bid(0)
    ct.store(y, index=(bid,), tile=ct.load(x, index=(bid,), shape=(TILE,)) {op} 2)
'''


def verify(root: Path) -> tuple[dict, str]:
    res = subprocess.run([sys.executable, "-m", "transpiler.cli", "verify", "out", "--format", "json"], cwd=root,
                         capture_output=True, text=True, timeout=900)
    doc = json.loads(res.stdout)
    return {k["name"]: k["verify"] for k in doc["kernels"]}, res.stderr


def verify_text(root: Path) -> str:
    res = subprocess.run([sys.executable, "-m", "transpiler.cli", "verify", "out"], cwd=root, capture_output=True,
                         text=True, timeout=900)
    return res.stderr


@requires_toolchain
def test_unchanged_kernels_reuse_their_verdicts_and_a_hand_edit_is_seen(tmp_path, monkeypatch):
    monkeypatch.delenv("CUTILE_TRANSPILE_NO_VERDICT_CACHE")  # conftest turns it off for the other tests
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "scale.py").write_text(KERNEL.format(name="scale", op="*"))
    (root / "src" / "shift.py").write_text(KERNEL.format(name="shift", op="+"))
    res = subprocess.run([sys.executable, "-m", "transpiler.cli", "src", "-o", "out", "-q"], cwd=root,
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr
    first = verify_text(root)
    assert "compiling" in first and "cached" not in first
    again = verify_text(root)
    assert "2 of 2 kernels unchanged" in again and "compiling" not in again and "building" not in again
    assert verify(root)[0] == {"scale": "equivalent", "shift": "equivalent"}

    # a hand edit of one port (a mutant: `*` becomes `+`) is verified again, alone, and is `different`
    rs = root / "out/src/scale/kernel.rs"
    text = rs.read_text()
    mul = "y_a * broadcast_scalar(y_b, shape![TILE])"
    assert text.count(mul) == 1
    rs.write_text(text.replace(mul, mul.replace(" * ", " + ")))
    text = verify_text(root)
    assert "1 of 2 kernels unchanged" in text and "scale: different" in text
    assert verify(root)[0] == {"scale": "different", "shift": "equivalent"}  # cached, `different` too
    # a changed source re-verifies its kernels only
    subprocess.run([sys.executable, "-m", "transpiler.cli", "src", "-o", "out", "-q", "--force"], cwd=root,
                   capture_output=True, text=True, timeout=900)
    (root / "src" / "shift.py").write_text(KERNEL.format(name="shift", op="-"))
    res = subprocess.run([sys.executable, "-m", "transpiler.cli", "src", "-o", "out", "-q"], cwd=root,
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr
    text = verify_text(root)
    assert "1 of 2 kernels unchanged" in text and "shift: equivalent" in text and "scale: equivalent" in text
    assert "2 kernels: 2 equivalent, 0 different, 0 not verified" in text  # the main command's summary

    # every long step reports how far it is (the CLI shows it on a terminal only)
    from transpiler.verify.run import verify_output
    monkeypatch.setenv("CUTILE_TRANSPILE_NO_VERDICT_CACHE", "1")
    seen: list[str] = []
    verdicts = verify_output(root / "out", progress=seen.append)
    assert [v.verdict for v in verdicts] == ["equivalent", "equivalent"]
    assert any(s.startswith("exporting with cuTile Python: kernel 2/2") for s in seen), seen
    n = sum(len(v.checks) for v in verdicts)
    assert any(f"cuTile Rust: {n}/{n} entries compiled (" in s for s in seen), seen  # irdump, beside the exports


@requires_toolchain
def test_build_after_verify_reuses_its_build_and_leaves_git_clean(tmp_path):
    """`build` after `verify`: the same target directory, profile and settings, so cargo compiles nothing."""
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "scale.py").write_text(KERNEL.format(name="scale", op="*"))
    run = lambda *a: subprocess.run([sys.executable, "-m", "transpiler.cli", *a], cwd=root,  # noqa: E731
                                    capture_output=True, text=True, timeout=900)
    assert run("src", "-o", "out", "-q", "--verify").returncode == 0
    git = lambda *a: subprocess.run(["git", *a], cwd=root, capture_output=True, text=True, check=True)  # noqa: E731
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "ports")
    res = run("build", "out")
    assert res.returncode == 0, res.stderr
    assert "Compiling out" not in res.stderr  # verify's build, reused
    crate = json.loads((root / "out/manifest.json").read_text())["crate"]
    assert crate == "src"  # named after the source package (the folder given), not OUT
    assert (root / f"out/target/release/lib{crate}.so").is_file()
    # the package's compiled fast path, next to the library, a build of the package's own source
    fast = root / "out/target/release/_fastlaunch.abi3.so"
    assert fast.is_file() and f"built {fast.relative_to(root)}" in res.stderr
    probe = ("import importlib.machinery as m, importlib.util as u, sys; l = m.ExtensionFileLoader('_fastlaunch', "
             "sys.argv[1]); mod = u.module_from_spec(u.spec_from_file_location('_fastlaunch', sys.argv[1], loader=l)); "
             "l.exec_module(mod); print(mod.DIGEST)")
    digest = subprocess.run([sys.executable, "-c", probe, str(fast)], capture_output=True, text=True, check=True)
    crate_py = (root / "out/python/cutile_ports/_crate.py").read_text()  # what the runtime reads of the crate
    assert f'FASTLAUNCH_DIGEST = "{digest.stdout.strip()}"' in crate_py
    assert git("status", "--porcelain", "-uall").stdout == ""  # OUT/.gitignore keeps target/ out


def test_the_fast_path_build_fails_soft(tmp_path, monkeypatch):
    """`build_fastlaunch` without a working C compiler (failing, or `$CC` naming nothing), or without Python's
    headers, says why and writes nothing (`build` then prints it as a note; the package runs the same steps in
    Python)."""
    from transpiler.verify import toolchain
    src, dst = tmp_path / "_fastlaunch.c", tmp_path / "_fastlaunch.abi3.so"
    src.write_text("int x(void) { return 0; }\n")
    monkeypatch.setenv("CC", "/bin/false")
    assert "failed" in toolchain.build_fastlaunch(src, dst)
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    assert "could not run" in toolchain.build_fastlaunch(src, dst)
    monkeypatch.delenv("CC")
    monkeypatch.setattr(toolchain.shutil, "which", lambda name: None)
    assert toolchain.build_fastlaunch(src, dst) == "no C compiler (cc)"
    monkeypatch.undo()
    monkeypatch.setattr("sysconfig.get_paths", lambda: {"include": str(tmp_path)})
    assert "no Python headers" in toolchain.build_fastlaunch(src, dst)
    assert list(tmp_path.iterdir()) == [src]  # no library, no temporary file


def test_a_users_own_gitignore_in_out_is_left_alone(tmp_path):
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "scale.py").write_text(KERNEL.format(name="scale", op="*"))
    (root / "out").mkdir()
    (root / "out" / ".gitignore").write_text("mine\n")
    res = subprocess.run([sys.executable, "-m", "transpiler.cli", "src", "-o", "out", "-q", "--no-compile-check"],
                         cwd=root, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr
    assert (root / "out" / ".gitignore").read_text() == "mine\n"
    assert ".gitignore" not in json.loads((root / "out/manifest.json").read_text())["files"]


@requires_toolchain
def test_verify_and_the_main_command_print_one_json_schema(corpus_out):
    """`verify OUT --format json` has the main command's keys, per kernel and in the summary."""
    res = subprocess.run([sys.executable, "-m", "transpiler.cli", "verify", str(corpus_out), "--format", "json",
                          "--kernel", "vector_add"], capture_output=True, text=True, timeout=1800)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    (k,) = doc["kernels"]
    assert set(k) == {"name", "source", "line", "frontend", "status", "entries", "verify", "verified_at",
                      "checks", "diagnostics"}
    assert k["status"] == "translated" and k["verify"] == "equivalent" and k["checks"] and k["line"] > 1
    assert set(doc["summary"]) == {"kernels", "translated", "fallback", "unsupported", "error", "equivalent",
                                   "compiled", "numbers_match", "numbers_differ", "different", "not_verified",
                                   "file_errors"}
