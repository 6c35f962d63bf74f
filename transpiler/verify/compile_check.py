"""Does the generated crate compile? `cargo check` of a copy of it, with every rustc error attributed to
the entry, C symbol or module it falls in, so one kernel whose Rust does not compile can be left out and
the rest of the crate still builds.

The copy lives under the cache (`check/<crate>-<hash of OUT>`), so checks are incremental; the verdict is
memoized on the exact files (and cargo's version), so an unchanged crate is not checked again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .toolchain import ToolchainError, cache_dir, cargo_env

FORMAT = 2  # 2: `cargo check --release` (a memo of the dev-profile check is not reused)
_ENTRY = re.compile(r"^\s*pub (?:unsafe )?fn (\w+)")
_SYMBOL = re.compile(r'extern "C" fn (\w+)\s*\(')
_LIB_MOD = re.compile(r"^pub mod (\w+) \{")


class CheckUnavailable(Exception):
    """cargo or the CUDA headers are missing, or cargo failed before reaching the crate."""


@dataclass(frozen=True)
class RustError:
    file: str  # relative to the crate root
    line: int
    message: str  # rustc's rendered message

    def as_json(self) -> dict:
        return {"file": self.file, "line": self.line, "message": self.message}


def cargo_version(env: dict) -> str:
    try:
        return subprocess.run(["cargo", "--version"], capture_output=True, text=True, env=env).stdout.strip()
    except OSError:
        return ""


def compile_errors(files: dict[str, str], tag: str, status=None) -> list[RustError]:
    """rustc errors of the crate made of `files` (path relative to the crate -> content). `status(text)`
    hears of each crate cargo has checked (the first check of the `cutile` crate takes minutes)."""
    try:
        env = cargo_env()
    except ToolchainError as e:
        raise CheckUnavailable(str(e)) from None
    env.pop("CARGO_BUILD_TARGET_DIR", None)
    h = hashlib.sha256(f"{FORMAT}|{cargo_version(env)}".encode())
    for rel in sorted(files):
        h.update(rel.encode() + b"\0" + files[rel].encode() + b"\0")
    memo = cache_dir() / "compile-check" / f"{h.hexdigest()}.json"
    try:
        return [RustError(**e) for e in json.loads(memo.read_text())]
    except (OSError, ValueError, TypeError):
        pass
    crate = cache_dir() / "check" / tag
    _sync(crate, files)
    os.utime(crate)
    _prune(crate.parent, keep=crate)
    # --release: the profile verification and `cutile-transpile build` build with, in the same target directory,
    # so the build scripts and proc macros of cuTile Rust (most of a cold check) are built once for both
    cmd = ["cargo", "check", "--release", "--message-format", "json", "--quiet", "--manifest-path",
           str(crate / "Cargo.toml")]
    try:
        res = _run_cargo(cmd, env, status)
    except OSError as e:
        raise CheckUnavailable(f"cargo could not run: {e}") from None
    errors = []
    for line in res.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") != "compiler-message" or msg.get("message", {}).get("level") not in ("error",
                                                                                                     "error: internal compiler error"):
            continue
        m = msg["message"]
        if m.get("message", "").startswith("aborting due to"):
            continue
        span = next((s for s in m.get("spans", []) if s.get("is_primary")), None) or (m.get("spans") or [None])[0]
        file = span["file_name"] if span else ""
        target = Path(msg.get("manifest_path", "")).parent
        if span and os.path.isabs(file):
            try:
                file = os.path.relpath(file, target)
            except ValueError:
                pass
        errors.append(RustError(file.replace(os.sep, "/"), span["line_start"] if span else 0,
                                (m.get("rendered") or m.get("message", "")).strip()))
    if res.returncode != 0 and not errors:
        tail = "\n".join(res.stderr.strip().splitlines()[-15:])
        raise CheckUnavailable(f"cargo check failed before checking the crate:\n{tail}")
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo.with_name(f".{memo.name}.{os.getpid()}")
        tmp.write_text(json.dumps([e.as_json() for e in errors]))
        os.replace(tmp, memo)
    except OSError:
        pass
    return errors


def _run_cargo(cmd: list[str], env: dict, status) -> subprocess.CompletedProcess:
    """cargo, captured; with `status`, its JSON lines are read as they come to count the crates checked."""
    if status is None:
        return subprocess.run(cmd, capture_output=True, text=True, env=env)
    import threading
    import time
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)
    reader.start()
    lines, done = [], 0
    for line in proc.stdout:
        lines.append(line)
        if '"reason":"compiler-artifact"' in line:
            done += 1
            status(f"compile check: {done} crates checked ({time.monotonic() - t0:.0f} s)")
    proc.wait()
    reader.join()
    return subprocess.CompletedProcess(cmd, proc.returncode, "".join(lines), "".join(err))


KEEP_CHECK_CRATES = 16


def _prune(root: Path, keep: Path) -> None:
    """The check copies of the OUTs used least recently go (sources only; the target folder is shared)."""
    import shutil
    try:
        dirs = sorted((d for d in root.iterdir() if d.is_dir() and d != keep), key=lambda d: d.stat().st_mtime,
                      reverse=True)
    except OSError:
        return
    for d in dirs[KEEP_CHECK_CRATES - 1:]:
        shutil.rmtree(d, ignore_errors=True)


def _sync(crate: Path, files: dict[str, str]) -> None:
    """Writes changed files only (cargo's incremental check keys on mtimes) and removes the rest of src/."""
    for rel, content in files.items():
        p = crate / rel
        try:
            if p.read_text() == content:
                continue
        except OSError:
            pass
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)
    if (crate / "src").is_dir():
        for p in sorted((crate / "src").rglob("*"), reverse=True):
            rel = p.relative_to(crate).as_posix()
            if p.is_file() and rel not in files:
                p.unlink()
            elif p.is_dir() and not any(p.iterdir()):
                p.rmdir()


def _blocks(text: str, pattern: re.Pattern) -> list[tuple[int, str | None]]:
    """(first line, name) of each item: an item starts with its doc comment and is named by the first
    entry / symbol definition in it."""
    blocks: list[list] = []
    prev_doc = False
    for i, line in enumerate(text.splitlines(), 1):
        doc = line.strip().startswith("///")
        if doc and not prev_doc:
            blocks.append([i, None])
        prev_doc = doc
        m = pattern.search(line)
        if m and blocks and blocks[-1][1] is None:
            blocks[-1][1] = m.group(1)
    return [(b[0], b[1]) for b in blocks]


def attribute(error: RustError, files: dict[str, str]) -> tuple[str | None, str | None]:
    """(op, entry or C symbol) the error falls in; (op, None) for a module-level error; (None, None) when it
    is outside every module (a bug in the shared code)."""
    parts = error.file.split("/")
    if len(parts) == 3 and parts[0] == "src" and parts[2] in ("kernel.rs", "ffi.rs"):
        pattern = _ENTRY if parts[2] == "kernel.rs" else _SYMBOL
        found = None
        for start, name in _blocks(files.get(error.file, ""), pattern):
            if start <= error.line:
                found = name
        return parts[1], found
    if error.file == "src/lib.rs":
        found = None
        for i, line in enumerate(files.get(error.file, "").splitlines(), 1):
            if i > error.line:
                break
            m = _LIB_MOD.match(line)
            if m:
                found = m.group(1)
        return found, None
    return None, None
