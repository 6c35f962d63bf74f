"""A repository the user clones cannot make the tool reach outside OUT (docs/security.md).

OUT is usually committed, so everything in it (the journal, the manifest, links) is attacker-controlled.
Each test plants what a hostile repository could ship (the repros of ../shared/repros/reliability-attacks)
and checks that the file outside OUT is untouched and the error says what to do.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

KERNEL = '''import cuda.tile as ct


@ct.kernel
def {name}(a, b, TILE: ct.Constant[int]):
    x = ct.load(a, index=(ct.bid(0),), shape=(TILE,))
    ct.store(b, index=(ct.bid(0),), tile=x {op} x)
'''
JOURNAL = ".cutile-transpile.journal"
STAGING = ".cutile-transpile.staging"
ROOT = Path(__file__).resolve().parents[2]
# the checkout these tests belong to, whatever the working directory
PYTHONPATH = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])


def cli(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "transpiler.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": PYTHONPATH, **(env or {})}, timeout=300)


def port(root: Path, name: str = "k_add", op: str = "+", out: str = "rust") -> tuple[Path, Path]:
    """A source tree with one kernel and its port (no compile check: these tests are about files)."""
    src = root / "src"
    src.mkdir(parents=True, exist_ok=True)
    (src / "k.py").write_text(KERNEL.format(name=name, op=op))
    res = cli(src, "-o", root / out, "-q", "--no-compile-check")
    assert res.returncode == 0, res.stderr
    return src, root / out


def snapshot(d: Path) -> dict[str, bytes | str]:
    """Every entry under `d` (links as their target, not followed)."""
    found = {}
    for p in sorted(d.rglob("*")):
        rel = p.relative_to(d).as_posix()
        found[rel] = f"-> {os.readlink(p)}" if p.is_symlink() else (p.read_bytes() if p.is_file() else "dir")
    return found


@pytest.fixture()
def victim(tmp_path) -> Path:
    """The user's files outside OUT."""
    v = tmp_path / "victim"
    v.mkdir()
    (v / "secret.txt").write_text("do not touch\n")
    (v / "notes.md").write_text("mine\n")
    return v


# every command reads OUT's journal: the ordinary run, verify, build, and the pre-commit hook's --check
COMMANDS = {
    "run": lambda src, out: [src, "-o", out, "--no-compile-check"],
    "verify": lambda src, out: ["verify", out],
    "build": lambda src, out: ["build", out],
    "check": lambda src, out: [src, "-o", out, "--check", "--no-compile-check"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_planted_journal_naming_files_outside_out_moves_nothing(tmp_path, victim, command):
    """N-A1: a journal shipped in OUT whose `new` names a file outside OUT: the file stays where it is."""
    src, out = port(tmp_path)
    (out / JOURNAL).write_text(json.dumps({"ops": [{"path": "loot/secret.txt", "new": str(victim / "secret.txt"),
                                                    "old": None}]}))
    before = snapshot(out)
    bin_ = tmp_path / "bin"
    fake_cargo(bin_)  # `build` reaches the journal without a toolchain
    res = cli(*COMMANDS[command](src, out), env=fake_build_env(tmp_path, bin_))
    assert res.returncode != 0
    assert (victim / "secret.txt").read_text() == "do not touch\n"
    assert not (out / "loot").exists() and snapshot(out) == before
    if command != "check":  # --check reads no journal: it says to run again, which then refuses it
        assert "journal" in res.stderr and "not applied" in res.stderr and "internal error" not in res.stderr


def test_a_journal_the_tool_did_not_write_is_refused(tmp_path, victim):
    """A well-formed journal (staged names, a path inside OUT) without this user's MAC is not applied: the
    file it would replace keeps its content, and the run says to delete the journal after checking."""
    src, out = port(tmp_path)
    (out / STAGING / "new").mkdir(parents=True)
    (out / STAGING / "new" / "0").write_text("attacker text\n")
    planted = {"ops": [{"path": "Cargo.toml", "new": "new/0", "old": None}], "mac": "0" * 64}
    (out / JOURNAL).write_text(json.dumps(planted))
    before = snapshot(out)
    res = cli(src, "-o", out, "--no-compile-check")
    assert res.returncode == 2
    assert "refusing an unverified journal" in res.stderr and f"delete {out / JOURNAL}" in res.stderr
    assert snapshot(out) == before  # nothing applied, nothing removed (the staging folder neither)
    # deleting it, as the message says, gives a working run again
    (out / JOURNAL).unlink()
    assert cli(src, "-o", out, "-q", "--no-compile-check").returncode == 0


def test_a_journal_from_another_out_is_refused_and_its_own_is_finished(tmp_path):
    """The MAC binds a journal to the OUT it was written for: a crashed run's journal finishes that OUT, and
    the same journal copied into another OUT (a repository that commits one) is refused there."""
    import shutil
    from transpiler.output.transaction import recover
    src, out = port(tmp_path / "a")
    _, other = port(tmp_path / "b")
    (src / "k.py").write_text(KERNEL.format(name="k_add", op="*"))
    writer = ("import os, signal, sys\nfrom pathlib import Path\nfrom transpiler.pipeline import run, write_outputs\n"
              "def fault(step):\n    if step == 'journal': os.kill(os.getpid(), signal.SIGKILL)\n"
              "result, outputs = run([Path(sys.argv[1])], Path(sys.argv[2]))\nwrite_outputs(outputs, fault=fault)\n")
    # killed right after the journal is written: renamed into place by hand (the commit point)
    res = subprocess.run([sys.executable, "-c", writer, str(src), str(out)], capture_output=True, text=True)
    assert res.returncode == -signal.SIGKILL, res.stderr
    os.replace(out / f"{JOURNAL}.tmp", out / JOURNAL)
    for name in (JOURNAL, STAGING):
        (shutil.copytree if name == STAGING else shutil.copy2)(out / name, other / name)
    before_other = snapshot(other)
    res = cli(tmp_path / "b" / "src", "-o", other, "--no-compile-check")
    assert res.returncode == 2 and "refusing an unverified journal" in res.stderr
    assert snapshot(other) == before_other
    assert "finished the update" in (recover(out) or "")
    assert "x * x" in (out / "src" / "k" / "kernel.rs").read_text()


def test_a_verified_journal_still_follows_no_link(tmp_path, victim):
    """N-A2, even with a MAC that verifies (a link planted after a crash): the link is refused, nothing
    outside OUT is written or removed."""
    from transpiler.output.guard import user_key
    from transpiler.output.transaction import _journal_mac
    src, out = port(tmp_path)
    os.symlink(victim, out / "evil")
    (out / STAGING / "new").mkdir(parents=True)
    (out / STAGING / "new" / "0").write_text("attacker text\n")
    ops = [{"path": "evil/notes.md", "new": "new/0", "old": None},
           {"path": "evil/secret.txt", "new": None, "old": None}]
    (out / JOURNAL).write_text(json.dumps({"ops": ops, "mac": _journal_mac(user_key(), out, ops)}))
    res = cli(src, "-o", out, "--no-compile-check")
    assert res.returncode == 2 and "symbolic link" in res.stderr and "evil" in res.stderr
    assert (victim / "notes.md").read_text() == "mine\n" and (victim / "secret.txt").exists()


def test_a_manifest_entry_under_a_link_deletes_nothing(tmp_path):
    """N-A3: a manifest listing `evil/kernel.rs` (no hash) where `evil` links to another project's port."""
    _, other = port(tmp_path / "other", name="other_add")
    theirs = snapshot(other)
    src, out = port(tmp_path / "mine")
    os.symlink(other / "src" / "k", out / "evil")
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["files"]["evil/kernel.rs"] = ""
    (out / "manifest.json").write_text(json.dumps(manifest))
    (src / "k.py").write_text(KERNEL.format(name="k_add", op="*"))  # a run that writes
    res = cli(src, "-o", out, "--no-compile-check")
    assert res.returncode == 2 and f"{out / 'evil'}: is a symbolic link" in res.stderr
    assert snapshot(other) == theirs


@pytest.mark.parametrize("field", ["files", "rust"])
def test_a_manifest_path_leaving_out_is_refused(tmp_path, field):
    src, out = port(tmp_path)
    manifest = json.loads((out / "manifest.json").read_text())
    if field == "files":
        manifest["files"]["../victim.txt"] = ""
    else:
        manifest["modules"][0]["rust"] = "/etc/passwd"
    (out / "manifest.json").write_text(json.dumps(manifest))
    res = cli(src, "-o", out, "--no-compile-check")
    assert res.returncode == 2 and "not a cutile-transpile manifest" in res.stderr
    assert ("outside the output directory" if field == "files" else "not a path inside the output") in res.stderr


def test_a_link_at_the_lock_creates_nothing_outside_out(tmp_path, victim):
    """N-A4: a dangling link planted at the lock file: refused, nothing created where it points."""
    src, out = port(tmp_path)
    (out / ".cutile-transpile.lock").unlink()
    os.symlink(victim / "created_by_lock", out / ".cutile-transpile.lock")
    res = cli(src, "-o", out, "--no-compile-check")
    assert res.returncode == 2 and ".cutile-transpile.lock: is a symbolic link" in res.stderr
    assert sorted(p.name for p in victim.iterdir()) == ["notes.md", "secret.txt"]


@pytest.mark.parametrize("name", [f"{JOURNAL}.tmp", STAGING])
def test_a_link_at_the_tools_temporary_names_is_removed_not_followed(tmp_path, victim, name):
    """N-A4: a link at journal.tmp (dangling) or at the staging folder (to a real folder): the run removes
    the link and writes its own; the folder it pointed to is untouched."""
    src, out = port(tmp_path)
    os.symlink(victim if name == STAGING else victim / "created_by_journal", out / name)
    mine = snapshot(victim)
    (src / "k.py").write_text(KERNEL.format(name="k_add", op="*"))
    res = cli(src, "-o", out, "-q", "--no-compile-check")
    assert res.returncode == 0, res.stderr
    assert snapshot(victim) == mine
    assert not os.path.lexists(out / name) and "x * x" in (out / "src" / "k" / "kernel.rs").read_text()


@pytest.mark.parametrize("folder", ["python", "src", "python/cutile_ports"])
def test_a_linked_folder_of_out_is_refused(tmp_path, victim, folder):
    """N-A5: OUT/src or OUT/python as a link: the crate is not written where it points."""
    import shutil
    src, out = port(tmp_path)
    shutil.rmtree(out / folder)
    os.symlink(victim, out / folder)
    res = cli(src, "-o", out, "--no-compile-check")
    assert res.returncode == 2 and f"{out / folder}: is a symbolic link" in res.stderr
    assert sorted(p.name for p in victim.iterdir()) == ["notes.md", "secret.txt"]


def test_a_linked_target_folder_is_refused_by_build(tmp_path, victim):
    """`build` copies the library into OUT/target/release: a link there is refused before cargo runs."""
    src, out = port(tmp_path)
    os.symlink(victim, out / "target")
    bin_ = tmp_path / "bin"
    fake_cargo(bin_)
    res = cli("build", out, env=fake_build_env(tmp_path, bin_))
    assert res.returncode == 2 and f"{out / 'target'}: is a symbolic link" in res.stderr
    assert sorted(p.name for p in victim.iterdir()) == ["notes.md", "secret.txt"]


def test_out_as_a_link_is_the_users_choice(tmp_path):
    """OUT itself may be a link (the user named it): the run writes where it points."""
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "out")
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.py").write_text(KERNEL.format(name="k_add", op="+"))
    res = cli(src, "-o", tmp_path / "out", "-q", "--no-compile-check")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "real" / "src" / "k" / "kernel.rs").is_file()


def test_a_dangling_out_link_is_named(tmp_path):
    """N-M1: OUT a link to nothing: the message names the link and its target, at once."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.py").write_text(KERNEL.format(name="k_add", op="+"))
    os.symlink("nowhere/real", tmp_path / "out")
    t0 = time.monotonic()
    res = cli(src, "-o", "out", "--no-compile-check", cwd=tmp_path)
    assert res.returncode == 2
    assert "out: is a symbolic link to nowhere/real, which does not exist" in res.stderr
    assert "appearing" not in res.stderr and time.monotonic() - t0 < 60


@pytest.mark.parametrize("value", ["abc", "-1", "nan", ""])
def test_a_bad_lock_timeout_is_a_usage_error(tmp_path, value):
    """N-E1: CUTILE_TRANSPILE_LOCK_TIMEOUT that is not a number of seconds: exit 2 naming the variable."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.py").write_text(KERNEL.format(name="k_add", op="+"))
    res = cli(src, "-o", tmp_path / "out", "--no-compile-check", env={"CUTILE_TRANSPILE_LOCK_TIMEOUT": value})
    assert res.returncode == 2, res.stderr
    assert f"CUTILE_TRANSPILE_LOCK_TIMEOUT={value!r} is not a number of seconds" in res.stderr
    assert "internal error" not in res.stderr


def test_the_run_leaves_git_status_clean(tmp_path):
    """N-L1: the lock file, cargo's Cargo.lock and a crashed run's journal are ignored by OUT's .gitignore."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=tmp_path, capture_output=True, text=True, check=True)
    git("init", "-q")
    src, out = port(tmp_path)
    assert (out / ".cutile-transpile.lock").exists()
    (out / "Cargo.lock").write_text("# made by cargo build\n")
    (out / JOURNAL).write_text("{}")
    (out / STAGING).mkdir()
    (out / STAGING / "x").write_text("")
    status = git("status", "--porcelain", "--untracked-files=all", "rust").stdout.splitlines()
    assert status and all(not any(n in line for n in (".cutile-transpile", "Cargo.lock")) for line in status), status


def test_the_key_is_kept_private(tmp_path):
    """The secret that signs journals lives outside OUT, readable by its user only."""
    import stat
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    port(tmp_path)  # the first run that writes makes the key
    src = tmp_path / "src"
    (src / "k.py").write_text(KERNEL.format(name="k_add", op="*"))
    assert cli(src, "-o", tmp_path / "rust", "-q", "--no-compile-check", env=env).returncode == 0
    key = tmp_path / "state" / "cutile-transpile" / "journal.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes()) == 32
    assert stat.S_IMODE(key.parent.stat().st_mode) & 0o077 == 0


def test_without_a_place_for_the_key_runs_still_write_and_journals_are_refused(tmp_path):
    """Where the key cannot be kept (XDG_STATE_HOME is a file), a run still writes (its journal is signed
    with a key of its own process), and a journal found later is refused, the message naming the key."""
    (tmp_path / "state").write_text("not a folder")
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    src, out = port(tmp_path)
    (src / "k.py").write_text(KERNEL.format(name="k_add", op="*"))
    assert cli(src, "-o", out, "-q", "--no-compile-check", env=env).returncode == 0
    assert "x * x" in (out / "src" / "k" / "kernel.rs").read_text()
    (out / JOURNAL).write_text(json.dumps({"ops": [], "mac": "0" * 64}))
    res = cli(src, "-o", out, "--no-compile-check", env=env)
    assert res.returncode == 2 and "journal.key" in res.stderr and "not applied" in res.stderr


FAKE_CARGO = r'''#!/bin/sh
# stands in for cargo as it treats two path crates with one name in one target directory: one fingerprint
# for both (cargo hashes a path package's identity without its path), so a build finds the other crate's
# artifacts "fresh" unless `cargo clean -p NAME` removed them. A build writes release/lib<crate>.so holding
# the manifest path it was given, then takes a second to finish (the window between build and copy).
for a; do [ "$prev" = --manifest-path ] && m=$a; [ "$prev" = -p ] && pkg=$a; prev=$a; done
crate=$(sed -n 's/^name = "\(.*\)"/\1/p' "$m" | head -n 1)
stamp="$CARGO_TARGET_DIR/release/.fingerprint-$crate"
if [ "$1" = clean ]; then rm -f "$CARGO_TARGET_DIR/release/.fingerprint-$pkg" "$CARGO_TARGET_DIR/release/lib$pkg.so"; exit 0; fi
mkdir -p "$CARGO_TARGET_DIR/release"
if [ ! -e "$stamp" ]; then echo "$m" > "$CARGO_TARGET_DIR/release/lib$crate.so"; touch "$stamp"; fi
sleep 1
'''


def fake_cargo(bin_: Path) -> None:
    bin_.mkdir(exist_ok=True)
    (bin_ / "cargo").write_text(FAKE_CARGO)
    (bin_ / "cargo").chmod(0o755)


def fake_build_env(tmp_path: Path, bin_: Path) -> dict[str, str]:
    cuda = tmp_path / "cuda"
    (cuda / "include").mkdir(parents=True, exist_ok=True)
    (cuda / "include" / "cuda.h").write_text("")
    env = {"PATH": f"{bin_}{os.pathsep}{os.environ['PATH']}", "CUDA_TOOLKIT_PATH": str(cuda), "CC": "false",
           "CUTILE_TRANSPILE_CACHE": str(tmp_path / "cache")}
    return env


def same_named_crates(tmp_path: Path) -> list[Path]:
    outs = []
    for x, op in (("a", "+"), ("b", "-")):
        src = tmp_path / x / "src"
        src.mkdir(parents=True)
        (src / "k.py").write_text(KERNEL.format(name="k_" + x, op=op))
        assert cli(src, "-o", tmp_path / x / "out", "-q", "--no-compile-check", "--crate-name", "same").returncode == 0
        outs.append(tmp_path / x / "out")
    return outs


def test_builds_of_two_crates_with_one_name_one_after_the_other(tmp_path):
    """N-G1, the part cargo causes: a, then b, then a again, built in one target directory: each build
    copies the library of its own crate, not the other's "fresh" one (cargo replaced by a stand-in)."""
    bin_ = tmp_path / "bin"
    fake_cargo(bin_)
    env = fake_build_env(tmp_path, bin_)
    a, b = same_named_crates(tmp_path)
    for out in (a, b, a):
        res = cli("build", out, env=env)
        assert res.returncode == 0, res.stderr
        assert (out / "target" / "release" / "libsame.so").read_text().strip() == str(out / "Cargo.toml")


def test_builds_of_two_crates_with_one_name_keep_their_own_library(tmp_path):
    """N-G1: two OUTs whose crates share a name, built at once in one target directory: each OUT gets the
    library built from its own crate (cargo replaced by a stand-in whose build takes a second)."""
    bin_ = tmp_path / "bin"
    fake_cargo(bin_)
    outs = same_named_crates(tmp_path)
    env = {**os.environ, "PYTHONPATH": PYTHONPATH, **fake_build_env(tmp_path, bin_)}
    procs = []
    for out in outs:
        procs.append(subprocess.Popen([sys.executable, "-m", "transpiler.cli", "build", str(out)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        time.sleep(0.3)  # b's build starts while a's is running, before a copies its library
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    for out in outs:
        assert (out / "target" / "release" / "libsame.so").read_text().strip() == str(out / "Cargo.toml")
