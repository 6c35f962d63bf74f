"""OUT is a transaction, and a port is removed only when its removal is proved.

Every test builds its own small source tree (kernels written here), runs the CLI or the writer, and
compares OUT file by file with the tree it must equal: the old one, or the new one.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import requires_toolchain

KERNEL = '''import cuda.tile as ct


@ct.kernel
def {name}(a, b, TILE: ct.Constant[int]):
    x = ct.load(a, index=(ct.bid(0),), shape=(TILE,))
    ct.store(b, index=(ct.bid(0),), tile=x {op} x)
'''
NAMES = ["alpha", "beta", "gamma", "delta", "eps", "zeta"]
LOCK = ".cutile-transpile.lock"


def cli(*args, cwd=None, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "transpiler.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, **(env or {})}, timeout=timeout)


def write_sources(src: Path, op: str = "+", names=NAMES) -> Path:
    src.mkdir(parents=True, exist_ok=True)
    for n in names:
        (src / f"{n}.py").write_text(KERNEL.format(name=f"k_{n}", op=op))
    return src


def tree(out: Path) -> dict[str, str]:
    """Every file of OUT (but the lock) with its hash."""
    if not out.exists():
        return {}
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file() and p.name != LOCK}


@pytest.fixture()
def old_new(tmp_path):
    """(src, out): OUT holds the port of the `+` sources; `expected_new` is the tree the `*` sources give."""
    src = write_sources(tmp_path / "src", "+")
    out = tmp_path / "work" / "out"
    assert cli(src, "-o", out, "-q").returncode == 0
    old = tree(out)
    ref_src = write_sources(tmp_path / "ref" / "src", "*")
    ref_out = tmp_path / "ref" / "work" / "out"
    assert cli(ref_src, "-o", ref_out, "-q").returncode == 0
    new = tree(ref_out)
    # the two trees differ in every module, so a mix is visible; same path depth, so headers agree
    assert old.keys() == new.keys() and sum(old[k] != new[k] for k in old) >= 2 * len(NAMES) + 3
    write_sources(src, "*")
    return src, out, old, new


WRITER = r'''
import os, signal, sys
from pathlib import Path
from transpiler.pipeline import run, write_outputs
kill_at, seen = int(sys.argv[3]), []
def fault(step):
    seen.append(step)
    if len(seen) == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
result, outputs = run([Path(sys.argv[1])], Path(sys.argv[2]))
write_outputs(outputs, fault=fault)
print(" ".join(seen))
'''


def run_writer(src, out, kill_at):
    return subprocess.run([sys.executable, "-c", WRITER, str(src), str(out), str(kill_at)], capture_output=True,
                          text=True)


def test_kill_at_every_kind_of_moment_leaves_old_or_new(old_new):
    """kill -9 while staging, right before and after the commit point, and while applying: after the next
    start's recovery OUT is entirely the old tree (before the commit point) or entirely the new one."""
    from transpiler.output.transaction import recover
    src, out, old, new = old_new
    import shutil
    probe = out.parent.parent / "probe" / "out"  # same depth: same relative source paths, same crate name
    shutil.copytree(out, probe)
    steps = run_writer(src, probe, 10 ** 6).stdout.split()
    assert tree(probe) == new
    assert steps.count("journal") == 1 and steps.count("stage") >= 15 and steps.count("apply") >= 15
    commit_at = steps.index("journal") + 1
    moments = sorted({1, 2, commit_at // 2, commit_at - 1, commit_at, commit_at + 1, commit_at + 2,
                      (commit_at + len(steps)) // 2, len(steps)})
    for kill_at in moments:
        assert tree(out) == old
        res = run_writer(src, out, kill_at)
        assert res.returncode == -signal.SIGKILL, (kill_at, res.stderr)
        recover(out)
        after = tree(out)
        want = old if kill_at <= commit_at else new
        assert after == want, (kill_at, steps[kill_at - 1], sorted(k for k in want if after.get(k) != want[k]))
        assert not [p for p in out.rglob("*") if "tmp" in p.name or "staging" in p.name or "journal" in p.name]
        if after == new:  # back to the old tree for the next moment
            write_sources(src, "+")
            assert cli(src, "-o", out, "-q").returncode == 0 and tree(out) == old
            write_sources(src, "*")


def test_kill_of_the_cli_at_random_times(old_new, tmp_path):
    """The real command killed at random moments (seeded) of a cold run: never a mix once the next run starts."""
    from transpiler.output.transaction import recover
    src, out, old, new = old_new
    rng = random.Random(1234)
    for trial in range(4):
        env = {**os.environ, "CUTILE_TRANSPILE_CACHE": str(tmp_path / f"cache{trial}")}
        p = subprocess.Popen([sys.executable, "-m", "transpiler.cli", str(src), "-o", str(out), "-q"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.2, 2.5))
        p.send_signal(signal.SIGKILL)
        p.wait()
        recover(out)
        assert tree(out) in (old, new), f"trial {trial}: a mixed tree"
        if tree(out) == new:
            write_sources(src, "+")
            assert cli(src, "-o", out, "-q").returncode == 0
            write_sources(src, "*")


@pytest.mark.parametrize("where", ["stage", "apply"])
def test_a_failed_write_leaves_out_as_it_was(old_new, where):
    """ENOSPC while staging, a read-only file while applying: OUT is the old tree, nothing is left behind, and
    the message says so (exit 2, no 'internal error')."""
    import errno
    from transpiler.pipeline import run, write_outputs
    from transpiler.output.transaction import OutputError
    src, out, old, new = old_new
    calls = []

    def fault(step):
        if step == where:
            calls.append(step)
            if len(calls) == 5:
                raise OSError(errno.ENOSPC if where == "stage" else errno.EROFS, os.strerror(
                    errno.ENOSPC if where == "stage" else errno.EROFS), str(out / "src"))

    _, outputs = run([src], out)
    with pytest.raises(OutputError, match="as it was"):
        write_outputs(outputs, fault=fault)
    assert tree(out) == old
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == sorted([LOCK, ".gitignore"])


def test_out_on_a_full_filesystem(tmp_path):
    """A real ENOSPC where a small tmpfs can be mounted (root in a container that allows it)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (the fault-injected writer test covers ENOSPC)")
    try:
        src = write_sources(tmp_path / "src", "+", names=[f"kernel_number_{i}" for i in range(40)])
        res = cli(src, "-o", mnt / "out")
        assert res.returncode == 2 and "internal error" not in res.stderr, res.stderr
        assert "No space left" in res.stderr and "as it was" in res.stderr
        assert tree(mnt / "out") == {} and not [p for p in mnt.rglob("*") if p.name != LOCK and p.is_file()]
    finally:
        subprocess.run(["umount", str(mnt)])


WAITER = r'''
import sys, time
from pathlib import Path
from transpiler.output.transaction import locked
with locked(Path(sys.argv[1])):
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
'''


def test_a_second_run_waits_for_the_lock_or_gives_up(old_new):
    src, out, old, new = old_new
    holder = subprocess.Popen([sys.executable, "-c", WAITER, str(out), "4"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    res = cli(src, "-o", out, env={"CUTILE_TRANSPILE_LOCK_TIMEOUT": "1"})
    assert res.returncode == 2 and "another cutile-transpile run" in res.stderr
    assert tree(out) == old
    res = cli(src, "-o", out, "-q", env={"CUTILE_TRANSPILE_LOCK_TIMEOUT": "60"})  # waits, then runs
    holder.wait()
    assert res.returncode == 0, res.stderr
    assert tree(out) == new


def test_concurrent_runs_of_two_source_trees_never_mix(tmp_path):
    """Two runs of different sources into one OUT: the result is exactly one of the two trees."""
    a = write_sources(tmp_path / "a" / "src", "+")
    b = write_sources(tmp_path / "b" / "src", "*")
    out = tmp_path / "x" / "out"
    for _ in range(2):
        ps = [subprocess.Popen([sys.executable, "-m", "transpiler.cli", str(s), "-o", str(out), "-q"],
                               stderr=subprocess.PIPE, text=True) for s in (a, b)]
        assert [p.wait() for p in ps] == [0, 0]
        got = tree(out)
        # both sources are in one OUT (a run keeps ports it did not prove gone): every module is whole and
        # the manifest lists every file with the hash it has
        man = json.loads((out / "manifest.json").read_text())
        assert set(man["files"]) == set(got) - {"manifest.json"}
        for rel, h in man["files"].items():
            assert got[rel] == h, rel


def test_runs_racing_on_a_fresh_out_all_succeed(tmp_path):
    """Runs started together on an OUT that does not exist yet: creating OUT is not an error for the
    second, and a run that leaves OUT empty (no kernels) removes it only under the lock, so a run that
    was waiting makes it again instead of writing into a removed folder."""
    a = write_sources(tmp_path / "a" / "src", "+")
    empty = tmp_path / "e" / "src"
    empty.mkdir(parents=True)
    (empty / "not_a_kernel.py").write_text("x = 1\n")
    for trial in range(5):
        out = tmp_path / f"x{trial}" / "deep" / "out"
        srcs = [empty, a, empty, a, empty, empty]
        ps = [subprocess.Popen([sys.executable, "-m", "transpiler.cli", str(s), "-o", str(out), "-q"],
                               stderr=subprocess.PIPE, text=True) for s in srcs]
        errs = [p.communicate()[1] for p in ps]
        assert [p.returncode for p in ps] == [0] * len(srcs), errs
        got = tree(out)
        man = json.loads((out / "manifest.json").read_text())
        assert set(man["files"]) == set(got) - {"manifest.json"} and man["files"]
        for rel, h in man["files"].items():
            assert got[rel] == h, rel


# ------------------------------------------------------------------ deletion only when proved


def cli_ok(*args, **kw):
    res = cli(*args, **kw)
    assert res.returncode == 0, res.stderr
    return res


def test_kernel_filter_keeps_every_other_port(old_new):
    src, out, old, new = old_new
    res = cli(src, "-o", out, "--kernel", "k_beta")
    assert res.returncode == 0, res.stderr
    after = tree(out)
    changed = {k for k in after if after[k] != old.get(k)}
    # the ABI digest is in abi_tables.rs and _crate.py (abi.rs and _runtime.py are the same in every crate)
    assert changed == {"src/beta/kernel.rs", "python/cutile_ports/beta.py", "manifest.json", "src/abi_tables.rs",
                       "python/cutile_ports/_crate.py"}, changed
    for n in NAMES:
        if n != "beta":
            for f in (f"src/{n}/kernel.rs", f"src/{n}/ffi.rs", f"python/cutile_ports/{n}.py"):
                assert after[f] == old[f], f
    assert after["src/beta/kernel.rs"] == new["src/beta/kernel.rs"]


def test_kernel_filter_naming_nothing_is_an_error(old_new):
    src, out, old, _ = old_new
    for name in ("no_such_kernel", ""):
        res = cli(src, "-o", out, "--kernel", name)
        assert res.returncode == 2 and "--kernel" in res.stderr, res.stderr
    assert tree(out) == old


def test_fail_on_error_keeps_the_ports_it_did_not_reach(old_new):
    src, out, old, _ = old_new
    (src / "beta.py").write_text(KERNEL.format(name="k_beta", op="+").replace("x + x", "print(x)"))
    res = cli(src, "-o", out, "--fail-on-error")
    assert res.returncode == 1
    after = tree(out)
    for n in NAMES:
        assert after[f"src/{n}/kernel.rs"] == old[f"src/{n}/kernel.rs"] or n == "alpha", n


@pytest.mark.parametrize("breakage", ["syntax", "unreadable", "decode"])
def test_a_source_that_cannot_be_read_or_parsed_keeps_its_ports(old_new, breakage):
    src, out, old, new = old_new
    f = src / "gamma.py"
    if breakage == "syntax":
        f.write_text(f.read_text() + "\ndef broken(:\n")
    elif breakage == "unreadable":
        f.unlink()
        f.symlink_to(f)  # a symlink loop: cannot be read, even by root
    else:
        f.write_bytes(b"\xff\xfe\x00garbage\xc3")
    res = cli(src, "-o", out)
    assert res.returncode == 1 and "internal error" not in res.stderr, res.stderr
    assert "CT005" in res.stderr  # says the earlier ports are kept
    after = tree(out)
    for name in ("src/gamma/kernel.rs", "src/gamma/ffi.rs", "python/cutile_ports/gamma.py"):
        assert after[name] == old[name]
    assert after["src/alpha/kernel.rs"] == new["src/alpha/kernel.rs"]  # the others moved on


def test_a_kernel_that_now_fails_keeps_its_port_but_is_not_routed(old_new):
    src, out, old, _ = old_new
    f = src / "delta.py"
    f.write_text(KERNEL.format(name="k_delta", op="+").replace("x + x", "print(x)") +
                 KERNEL.format(name="k_delta2", op="*").split("\n", 2)[2])
    res = cli(src, "-o", out)
    assert res.returncode == 1 and "CT005" in res.stderr
    man = json.loads((out / "manifest.json").read_text())
    mod = next(m for m in man["modules"] if m["op"] == "delta")
    kept = next(k for k in mod["kernels"] if k["name"] == "k_delta")
    assert kept["stale"] is True and kept["source_sha256"] != mod["source_sha256"]
    assert "pub fn k_delta<" in (out / "src/delta/kernel.rs").read_text()
    assert "pub fn k_delta2<" in (out / "src/delta/kernel.rs").read_text()


def test_removal_only_when_proved(old_new):
    """A kernel removed from a parsed source and a deleted source lose their ports; a source not given in
    this run keeps them."""
    src, out, old, _ = old_new
    (src / "eps.py").write_text("import cuda.tile as ct\n")  # parsed, no kernel left
    (src / "zeta.py").unlink()  # the source is gone
    cli_ok(src, "-o", out, "-q")
    after = tree(out)
    assert not any(k.startswith(("src/eps/", "src/zeta/")) or k.endswith(("/eps.py", "/zeta.py")) for k in after)
    cli_ok(src / "alpha.py", "-o", out, "-q")  # a run over one file keeps the ports of the others
    assert {k for k in tree(out) if k.startswith("src/")} == {k for k in after if k.startswith("src/")}


def test_user_files_and_copies_of_generated_files_are_never_touched(old_new):
    src, out, old, _ = old_new
    copy = out / "python/cutile_ports/my_copy.py"
    copy.write_text((out / "python/cutile_ports/alpha.py").read_text())  # header kept
    mine = out / "src/mine.rs"
    mine.write_text("// mine\n")
    (src / "alpha.py").unlink()  # alpha's ports go; the copy of one of them stays
    cli_ok(src, "-o", out, "-q")
    assert copy.is_file() and mine.read_text() == "// mine\n"
    assert not (out / "python/cutile_ports/alpha.py").exists()


def test_hand_edited_generated_files_are_refused_unless_forced(old_new):
    src, out, old, new = old_new
    k = out / "src/beta/kernel.rs"
    k.write_text(k.read_text().replace("Do not edit", "Do not edit (edited anyway)"))
    edited = tree(out)
    res = cli(src, "-o", out)
    assert res.returncode == 1 and "[CT004]" in res.stderr and "edited by hand" in res.stderr
    assert tree(out) == edited  # nothing written at all
    res = cli(src, "-o", out, "--check")
    assert res.returncode == 1 and "CT004" in res.stderr
    cli_ok(src, "-o", out, "-q", "--force")
    assert tree(out) == new


def test_files_not_in_the_manifest_are_refused(old_new):
    """A header alone does not make a file generated: without the manifest's word it is the user's."""
    src, out, old, _ = old_new
    (out / "manifest.json").unlink()
    res = cli(src, "-o", out)
    assert res.returncode == 1 and "[CT003]" in res.stderr
    cli_ok(src, "-o", out, "-q", "--force")


# ------------------------------------------------------------------ environment and input errors


def test_environment_errors_are_clear(tmp_path):
    src = write_sources(tmp_path / "src", "+", names=["alpha"])
    f = tmp_path / "file"
    f.write_text("precious")
    for target in (f, f / "sub"):
        res = cli(src, "-o", target)
        assert res.returncode == 2 and "internal error" not in res.stderr, res.stderr
    assert f.read_text() == "precious"
    res = cli(src, "-o", tmp_path / "o1", "--report", tmp_path)
    assert res.returncode == 2 and "--report" in res.stderr and not (tmp_path / "o1").exists()
    res = cli(src, "-o", tmp_path / "o1", "--report", f / "r.md")
    assert res.returncode == 2 and not (tmp_path / "o1").exists()
    res = cli(src, "-o", tmp_path / "o2", "--format", "json", "--report", tmp_path)
    assert res.returncode == 2 and json.loads(res.stdout)["error"]
    (tmp_path / "o3" / "src" / "abi.rs").mkdir(parents=True)  # a folder where a generated file goes
    res = cli(src, "-o", tmp_path / "o3")
    assert res.returncode == 2 and "a directory is in the way" in res.stderr and "internal error" not in res.stderr
    assert sorted(p.name for p in (tmp_path / "o3").iterdir()) == [LOCK, "src"]


@pytest.mark.parametrize("content", ["{not json", "", "[]", '{"modules": 5}', '{"crate": 5, "modules": []}',
                                     '{"crate": "x", "modules": [{"op": 1}]}', "null", '"just a string"',
                                     # a listed file outside OUT: the writer would remove it
                                     '{"crate": "out", "modules": [], "files": {"../victim.py": ""}}'])
def test_a_corrupt_manifest_is_a_clear_error_everywhere(old_new, content):
    src, out, old, _ = old_new
    (out / "manifest.json").write_text(content)
    victim = out.parent / "victim.py"
    victim.write_text("# @generated by cutile-transpile\n")
    for args in ((src, "-o", out), ("verify", out), ("build", out)):
        t0 = time.monotonic()
        res = cli(*args)
        assert res.returncode == 2 and "internal error" not in res.stderr and "manifest" in res.stderr, (args, res)
        assert time.monotonic() - t0 < 30  # build refuses before running cargo
    cli_ok(src, "-o", out, "-q", "--force")
    assert victim.is_file()


def test_symlink_loops_and_odd_files_do_not_stop_the_run(tmp_path):
    src = write_sources(tmp_path / "src", "+", names=["alpha"])
    (src / "loop.py").symlink_to(src / "loop.py")
    (src / "dangling.py").symlink_to(src / "nope.py")
    (src / "up").symlink_to(src)
    res = cli(src, "-o", tmp_path / "out", "--format", "json")
    assert res.returncode == 1 and "internal error" not in res.stderr
    doc = json.loads(res.stdout)
    assert doc["summary"]["translated"] == 1
    assert res.stderr.count("[CT002]") == 2


# ------------------------------------------------------------------ names and determinism


def test_output_does_not_depend_on_path_spelling(tmp_path, monkeypatch):
    for d, op in (("a", "+"), ("b", "-")):
        (tmp_path / "src" / d).mkdir(parents=True)
        (tmp_path / "src" / d / "ops.py").write_text(KERNEL.format(name="vector_add", op=op))
    cli_ok("src/a", "src/b", "-o", "x1/out", "-q", cwd=tmp_path)
    cli_ok(tmp_path / "src/b", "src/a", "-o", "x2/out", "-q", cwd=tmp_path)
    cli_ok("b", "../src/a", "-o", "../x3/out", "-q", cwd=tmp_path / "src")
    trees = [tree(tmp_path / f"x{i}/out") for i in (1, 2, 3)]
    assert trees[0] == trees[1] == trees[2]


def test_rustfmt_config_in_the_working_directory_is_ignored(tmp_path):
    src = write_sources(tmp_path / "src", "+", names=["alpha"])
    cache = {"CUTILE_TRANSPILE_CACHE": str(tmp_path / "cache")}
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "rustfmt.toml").write_text("hard_tabs = true\nmax_width = 60\n")
    cli_ok(src, "-o", tmp_path / "x1" / "out", "-q", cwd=tmp_path / "w", env=cache)
    cli_ok(src, "-o", tmp_path / "x2" / "out", "-q", cwd=tmp_path, env=cache)
    cli_ok(src, "-o", tmp_path / "x3" / "out", "-q", cwd=tmp_path, env={"CUTILE_TRANSPILE_CACHE": str(tmp_path / "c2")})
    t = [tree(tmp_path / f"x{i}" / "out") for i in (1, 2, 3)]
    assert t[0] == t[1] == t[2]
    assert "\t" not in (tmp_path / "x1/out/src/lib.rs").read_text()


def test_missing_rustfmt_is_a_clear_error(tmp_path):
    src = write_sources(tmp_path / "src", "+", names=["alpha"])
    env = {"PATH": "/usr/bin:/bin", "CUTILE_TRANSPILE_CACHE": str(tmp_path / "cache")}
    res = cli(src, "-o", tmp_path / "out", env=env)
    assert res.returncode == 2 and "rustfmt not found" in res.stderr
    assert not (tmp_path / "out").exists()


RESERVED_SOURCES = ["abi", "lib", "class", "__init__", "_runtime", "_crate", "_fastlaunch", "launch", "set_backend", "route",
                    "type", "fn", "self", "crate", "super", "mod", "cutile", "std", "core", "import"]


def reserved_tree(tmp_path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    for n in RESERVED_SOURCES:
        (src / f"{n}.py").write_text(KERNEL.format(name=f"vadd_{n.strip('_')}" + "_p" * n.startswith("_"), op="+"))
    # F10: names that clash again after the first disambiguation
    (src / "a.py").write_text(KERNEL.format(name="k", op="+") + KERNEL.format(name="k_b", op="*").split("\n", 2)[2]
                              + KERNEL.format(name="b_k", op="-").split("\n", 2)[2])
    (src / "b.py").write_text(KERNEL.format(name="k", op="+"))
    (src / "c.py").write_text(KERNEL.format(name="abi_layout", op="+"))
    # kernel names that are Rust keywords, cutile::core functions, the generic `E`, or whose launcher struct
    # (UpperCamel of the entry name) would clash with what cuTile Rust's module macro imports
    body = "".join(KERNEL.format(name=n, op="+").split("\n", 2)[2] for n in KERNEL_NAMES)
    (src / "names.py").write_text("import cuda.tile as ct\n" + body)
    return src


KERNEL_NAMES = ["type", "self", "crate", "Self", "E", "stream", "context", "arc", "_rt", "mod", "fn", "load",
                "grid", "super", "foo_bar", "foo__bar", "fooBar"]


def test_reserved_and_clashing_names_get_their_own_modules(tmp_path):
    src = reserved_tree(tmp_path)
    out = tmp_path / "out"
    cli_ok(src, "-o", out, "-q")
    man = json.loads((out / "manifest.json").read_text())
    ops = [m["op"] for m in man["modules"]]
    assert len(ops) == len(set(ops)) == len(RESERVED_SOURCES) + 4
    from transpiler.output.names import reserved_ops
    assert not set(ops) & reserved_ops()
    symbols = [k["symbol"] for m in man["modules"] for k in m["kernels"]]
    entries = [e["name"] for m in man["modules"] for k in m["kernels"] for e in k["entries"]]
    assert len(symbols) == len(set(symbols)) and len(entries) == len(set(entries))
    assert "cutile_abi_layout" not in symbols
    # the Python package imports and registers every kernel
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import cutile_ports as p; "
            "print(len(p._runtime.REGISTRY), callable(p.launch), callable(p.set_backend), callable(p.route))")
    res = subprocess.run([sys.executable, "-c", code, str(out / "python")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == [str(len(symbols)), "True", "True", "True"]


@requires_toolchain
def test_reserved_and_clashing_names_compile(tmp_path):
    src = reserved_tree(tmp_path)
    res = cli(src, "-o", tmp_path / "out", "--compile-check", env={"CUTILE_TRANSPILE_COMPILE_CHECK": "1"})
    assert res.returncode == 0, res.stderr
    assert "CT007" not in res.stderr and "CT006" not in res.stderr
    man = json.loads((tmp_path / "out" / "manifest.json").read_text())
    names = next(m for m in man["modules"] if m["op"] == "names")
    assert sorted(k["name"] for k in names["kernels"]) == sorted(KERNEL_NAMES)


def test_a_stale_port_is_not_routed(old_new):
    """The port kept for a kernel that now fails carries the hash of the source it came from, so the router
    sends launches of the changed kernel to cuTile Python; the module's other kernels are still routed."""
    src, out, old, _ = old_new
    f = src / "delta.py"
    f.write_text(KERNEL.format(name="k_delta", op="+").replace("x + x", "print(x)") +
                 KERNEL.format(name="k_delta2", op="*").split("\n", 2)[2])
    assert cli(src, "-o", out).returncode == 1
    code = ("import sys, hashlib; sys.path.insert(0, sys.argv[1]); import cutile_ports as p; "
            "r = p._runtime.REGISTRY; h = hashlib.sha256(open(sys.argv[2], 'rb').read()).hexdigest(); "
            "print(*sorted(f'{k[1]}={s.source_sha256 == h}' for k, s in r.items() if 'delta' in k[1]))")
    res = subprocess.run([sys.executable, "-c", code, str(out / "python"), str(f)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["k_delta2=True", "k_delta=False"]


def test_out_that_vanishes_between_checks_is_not_called_a_file(tmp_path, monkeypatch):
    """A run that empties OUT removes it; one racing it must see "missing" (and create it), never "a file"
    (exists() then is_dir() with the removal between them did; the race test above caught it)."""
    from transpiler.output import transaction
    f = tmp_path / "f"
    f.write_text("")
    assert transaction.is_non_directory(f) and not transaction.is_non_directory(tmp_path)
    assert not transaction.is_non_directory(tmp_path / "missing")
    assert not transaction.is_non_directory(f / "below_a_file")
    out = tmp_path / "out"
    real_mkdir, calls = Path.mkdir, []

    def racing_mkdir(self, *a, **kw):  # another run creates OUT and removes it again first
        calls.append(self)
        if len(calls) == 1:
            real_mkdir(self, *a, **kw)
            self.rmdir()
            raise FileExistsError(str(self))
        return real_mkdir(self, *a, **kw)
    monkeypatch.setattr(Path, "mkdir", racing_mkdir)
    assert transaction.ensure_dir(out) is True and out.is_dir() and len(calls) == 2


def test_a_batch_with_an_out_of_line_module_is_not_formatted_file_by_file(monkeypatch):
    """lib.rs declares `pub mod x;`: rustfmt would look for x.rs and reject the whole batch, which was then
    formatted one process per file (2 s of a library run). Such a file is formatted from stdin alone."""
    from transpiler.emit import render
    calls = []
    real = render._rustfmt
    monkeypatch.setattr(render, "_rustfmt", lambda exe, code: calls.append(code) or real(exe, code))
    codes = ["pub mod abi;\npub mod ops {\n    pub mod kernel;\n}\n"] + [f"fn f{i}() {{ let x = {i}; }}\n" for i in range(20)]
    out = render._rustfmt_batch(render.shutil.which("rustfmt"), codes)
    assert calls == codes[:1]
    assert out[0].startswith("pub mod abi;") and out[1] == "fn f0() {\n    let x = 0;\n}\n"
