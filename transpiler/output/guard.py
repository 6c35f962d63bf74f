"""Keeping the tool inside OUT: OUT is usually committed, so whatever it holds (the journal, the manifest,
links) may come from a repository the user cloned and is untrusted input (threat model: docs/security.md).

Every path the tool reads, writes, renames or removes in OUT goes through `inside`: a plain relative path
(no `..`, no absolute path) whose every component, from OUT down, is checked with `lstat` not to be a
symbolic link. OUT itself may be a link: the user named it.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path


class OutputError(Exception):
    """OUT cannot be used (not a folder, read-only, full, locked, ...): a clear error, exit 2."""


class UnsafePath(OutputError):
    """A path read from OUT leaves OUT, or reaches a symbolic link inside OUT."""


def describe(e: OSError) -> str:
    name = errno.errorcode.get(e.errno or 0, "")
    where = f": {e.filename}" if e.filename else ""
    return f"{e.strerror or e}{where}" + (f" ({name})" if name else "")


def plain_parts(rel: str) -> tuple[str, ...]:
    """The components of `rel`, a relative path that stays inside the folder it is relative to."""
    parts = rel.split("/") if isinstance(rel, str) else []
    if not parts or rel.startswith("/") or "\\" in rel or "\0" in rel or any(p in ("", ".", "..") for p in parts):
        raise UnsafePath(f"not a plain relative path inside the output directory: {rel!r}")
    return tuple(parts)


def _link_error(out: Path, path: Path) -> UnsafePath:
    return UnsafePath(f"{path}: is a symbolic link inside the output directory {out}; cutile-transpile follows no "
                      "link inside OUT (a cloned repository could point it anywhere): replace it with a real "
                      "folder or file, or remove it")


def lstat(path: Path) -> os.stat_result | None:
    """The path's own status (a link's, not its target's); None where nothing is there."""
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def inside(out: Path, rel: str) -> Path:
    """OUT/rel, after checking that no component of it below OUT is a symbolic link (components that do
    not exist yet are made by the tool itself as real folders)."""
    path = out
    for part in plain_parts(rel):
        path = path / part
        st = lstat(path)
        if st is None:
            return out.joinpath(*plain_parts(rel))
        if stat.S_ISLNK(st.st_mode):
            raise _link_error(out, path)
    return path


def no_link(out: Path, name: str) -> bool:
    """A name of the tool's own directly in OUT (lock, journal, staging) is not a link; True if it exists."""
    path = out / name
    st = lstat(path)
    if st is None:
        return False
    if stat.S_ISLNK(st.st_mode):
        raise _link_error(out, path)
    return True


# the folders and files every run reads or writes, checked at the start of every command: a link there is
# refused before the translation, not after it (a `.gitignore` of the user's own may be a link: it is
# touched only when the manifest lists it, and then checked like any listed file)
OWN_PATHS = ("src", "python", "python/cutile_ports", "manifest.json", "Cargo.toml", "llm-cache")


def check_own_paths(out: Path) -> None:
    for rel in OWN_PATHS:
        inside(out, rel)


def dangling_link(path: Path) -> Path | None:
    """`path` or one of its parents, where that is a symbolic link to nothing."""
    for p in (path, *path.parents):
        if os.path.islink(p) and not os.path.exists(p):
            return p
    return None


def lock_timeout() -> float:
    """CUTILE_TRANSPILE_LOCK_TIMEOUT (seconds a run waits for another run on OUT), 300 by default."""
    text = os.environ.get("CUTILE_TRANSPILE_LOCK_TIMEOUT", "300")
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value >= 0:  # also refuses nan
        raise OutputError(f"CUTILE_TRANSPILE_LOCK_TIMEOUT={text!r} is not a number of seconds (e.g. 300, or 0 to "
                          "give up at once)")
    return value


_KEY_NAME = "journal.key"


def key_dir() -> Path:
    """Where the per-user secret lives: the user's state folder, not the cache (a run that sets
    CUTILE_TRANSPILE_CACHE differently, or a cleaned cache, must still finish a crashed run's journal)."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "cutile-transpile"


def user_key() -> bytes | None:
    """The per-user secret that binds a journal to the working copy that wrote it (created 0600, in a 0700
    folder); None where it cannot be kept (a journal then cannot be verified after a crash)."""
    d = key_dir()
    key = d / _KEY_NAME
    for _ in range(3):
        try:
            fd = os.open(key, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            pass
        except OSError:
            return None
        else:
            with os.fdopen(fd, "rb") as f:
                data = f.read()
            if len(data) >= 32:
                return data
            return None
        try:  # written in full under a temporary name, then linked into place: a reader never sees half
            d.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = d / f".{_KEY_NAME}.{os.getpid()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(32))
                f.flush()
                os.fsync(f.fileno())
            try:
                os.link(tmp, key)
            except FileExistsError:
                pass  # another run made it first: read that one
            finally:
                tmp.unlink(missing_ok=True)
        except OSError:
            return None
    return None


_SAFE_OP = {"new": re.compile(r"^new/\d+$"), "old": re.compile(r"^old/\d+$")}


def check_journal_ops(ops) -> None:
    """The journal's operations have the form the tool writes: every name in them stays inside OUT."""
    if not isinstance(ops, list):
        raise UnsafePath("`ops` is not a list")
    for op in ops:
        if not isinstance(op, dict) or set(op) != {"path", "new", "old"}:
            raise UnsafePath(f"not an operation of this tool: {op!r}"[:300])
        plain_parts(op["path"])
        for field, form in _SAFE_OP.items():
            if op[field] is not None and not (isinstance(op[field], str) and form.match(op[field])):
                raise UnsafePath(f"`{field}` is not a staged file name: {op[field]!r}"[:300])
