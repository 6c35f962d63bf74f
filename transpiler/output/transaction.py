"""OUT as a transaction: a run leaves OUT exactly as it was or exactly as the new state.

Protocol (one run at a time, under an exclusive `flock` on `OUT/.cutile-transpile.lock`):
1. every new file is written into `OUT/.cutile-transpile.staging/` and every file about to be replaced or
   removed is hard-linked (or copied) there as a backup; nothing in OUT itself has changed yet;
2. the journal (`OUT/.cutile-transpile.journal`, the list of operations) is written and renamed into
   place: that rename is the commit point;
3. the operations are applied (renames and unlinks, no new space needed), then journal and staging go.
A run killed before 2 leaves only the staging folder, which the next start removes (OUT is old). A run
killed after 2 is finished by the next start, which replays the journal (OUT is new). If applying fails
(read-only file, a folder in the way), the backups are put back and OUT is as it was.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import time
from contextlib import contextmanager
from pathlib import Path

LOCK = ".cutile-transpile.lock"
JOURNAL = ".cutile-transpile.journal"
STAGING = ".cutile-transpile.staging"
_OLD_TEMP = re.compile(r"^\..+\.tmp\d+$")  # per-file temp names of earlier versions (`.kernel.rs.tmp123`)


class OutputError(Exception):
    """OUT cannot be used (not a folder, read-only, full, locked, ...): a clear error, exit 2."""


def _describe(e: OSError) -> str:
    name = errno.errorcode.get(e.errno or 0, "")
    where = f": {e.filename}" if e.filename else ""
    return f"{e.strerror or e}{where}" + (f" ({name})" if name else "")


def is_non_directory(path: Path) -> bool:
    """`path` exists and is not a folder, read with one stat (a concurrent run may remove an empty OUT
    between two checks: exists() then is_dir() would call it a file)."""
    try:
        return not stat.S_ISDIR(path.stat().st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False


def ensure_dir(out: Path) -> bool:
    """Creates OUT if needed (True when created); an existing file, or a parent that is a file, is an error."""
    for _ in range(100):  # a concurrent run may create or remove an empty OUT meanwhile
        if is_non_directory(out):
            raise OutputError(f"{out}: exists and is not a directory")
        if out.is_dir():
            return False
        try:
            out.mkdir(parents=True)
        except FileExistsError:
            continue  # created (or a file put there) by someone else: look again
        except OSError as e:
            raise OutputError(f"{out}: cannot create the output directory: {_describe(e)}") from None
        return True
    raise OutputError(f"{out}: keeps appearing and disappearing (other runs on it?)")


@contextmanager
def locked(out: Path, timeout: float | None = None, on_wait=None):
    """Exclusive lock on OUT for the whole run; a second run waits (with a message), then gives up.

    A run that created OUT and leaves it empty removes it with the lock file, while holding the lock; a
    run that was waiting then holds a lock on a removed file, so after each acquisition the lock file
    is checked to still be the one locked (same inode), and otherwise OUT and the lock are made again."""
    import fcntl
    if timeout is None:
        timeout = float(os.environ.get("CUTILE_TRANSPILE_LOCK_TIMEOUT", "300"))
    deadline = time.monotonic() + timeout
    waited = False
    while True:
        ensure_dir(out)
        try:
            fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:
            continue  # OUT went away between the two calls
        except OSError as e:
            raise OutputError(f"{out}: cannot create the lock file: {_describe(e)}") from None
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if not waited and on_wait:
                        on_wait(f"{out}: waiting for another cutile-transpile run on it to finish")
                    waited = True
                    if time.monotonic() >= deadline:
                        raise OutputError(f"{out}: another cutile-transpile run still holds {LOCK} after "
                                          f"{timeout:g} s (CUTILE_TRANSPILE_LOCK_TIMEOUT sets the wait)") from None
                    time.sleep(0.1)
            try:
                same = os.stat(out / LOCK).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            break
        os.close(fd)
    try:
        yield
    finally:
        os.close(fd)  # releases the lock; the file stays (a run removes it only with an OUT it created empty)


def remove_if_empty(out: Path) -> None:
    """Called under the lock by a run that created OUT: an OUT left with nothing but the lock goes away."""
    try:
        if [p.name for p in out.iterdir()] in ([], [LOCK]):
            (out / LOCK).unlink(missing_ok=True)
            out.rmdir()
    except OSError:
        pass


def _safe_rel(rel: str) -> Path:
    p = Path(rel)
    if p.is_absolute() or not p.parts or any(part in ("..", "") for part in p.parts):
        raise ValueError(f"unsafe path in the journal: {rel!r}")
    return p


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def pending(out: Path) -> bool:
    """An interrupted run left a committed journal that the next run will finish."""
    return (out / JOURNAL).is_file()


def recover(out: Path) -> str | None:
    """At start (under the lock): finish a committed journal, drop an uncommitted staging folder and the
    temp files of earlier versions. Returns what was done, for a message."""
    msg = None
    journal = out / JOURNAL
    if journal.exists():
        try:
            ops = json.loads(journal.read_text())["ops"]
            for op in ops:
                _safe_rel(op["path"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise OutputError(f"{journal}: an interrupted run left a journal that cannot be read ({e}); "
                              "inspect OUT and delete the journal") from None
        try:
            _apply(out, ops)
            msg = f"{out}: finished the update an interrupted run had committed ({len(ops)} files)"
        except OSError as e:
            _rollback(out, ops)
            msg = f"{out}: rolled back an interrupted update ({_describe(e)})"
        journal.unlink()
    for name in (STAGING, f"{JOURNAL}.tmp"):
        p = out / name
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        elif p.exists():
            p.unlink()
    for d in (out, out / "src", out / "python" / "cutile_ports", *sorted((out / "src").glob("*/"))):
        if d.is_dir():
            for p in d.iterdir():
                if _OLD_TEMP.match(p.name) and p.is_file():
                    p.unlink()
    return msg


def commit(out: Path, changes: dict[Path, str | None], fault=None) -> None:
    """Applies `changes` (path -> new content, or None to remove) to OUT as one transaction.
    `fault(step)` is a test hook called at each step (it may raise or kill the process)."""
    if not changes:
        return
    staging = out / STAGING
    ops = []
    try:
        if staging.exists():
            shutil.rmtree(staging)
        (staging / "new").mkdir(parents=True)
        (staging / "old").mkdir()
        for i, (path, content) in enumerate(sorted(changes.items(), key=lambda pc: pc[0].as_posix())):
            rel = path.relative_to(out).as_posix()
            op = {"path": rel, "new": None, "old": None}
            if content is not None:
                op["new"] = f"new/{i}"
                with open(staging / op["new"], "w", encoding="utf-8", newline="") as f:
                    f.write(content)
            if path.is_file():
                op["old"] = f"old/{i}"
                try:
                    os.link(path, staging / op["old"])
                except OSError:
                    shutil.copy2(path, staging / op["old"])
            ops.append(op)
            if fault:
                fault("stage")
        _fsync_files([staging / op["new"] for op in ops if op["new"]])
        _fsync_dir(staging / "new")
        tmp = out / f"{JOURNAL}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"ops": ops}, f)
            f.flush()
            os.fsync(f.fileno())
        if fault:
            fault("journal")
        os.replace(tmp, out / JOURNAL)  # the commit point
        _fsync_dir(out)
    except OSError as e:
        shutil.rmtree(staging, ignore_errors=True)
        try:
            (out / f"{JOURNAL}.tmp").unlink()
        except OSError:
            pass
        raise OutputError(f"{out}: cannot write the new files ({_describe(e)}); OUT was left as it was") from None
    try:
        _apply(out, ops, fault)
    except OSError as e:
        _rollback(out, ops)
        (out / JOURNAL).unlink()
        shutil.rmtree(staging, ignore_errors=True)
        raise OutputError(f"{out}: cannot update ({_describe(e)}); OUT was put back as it was") from None
    (out / JOURNAL).unlink()
    shutil.rmtree(staging, ignore_errors=True)


def _fsync_files(paths: list[Path]) -> None:
    """Every staged file on disk before the journal is written; fsyncs run in threads (each waits on the
    disk with the GIL released, and the file system commits them together: one at a time was most of the
    time a cold run spent writing)."""
    def sync(path: Path) -> None:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    if len(paths) < 2:
        for path in paths:
            sync(path)
        return
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(min(16, len(paths))) as pool:
        for _ in pool.map(sync, paths):  # re-raises the first OSError
            pass


def _apply(out: Path, ops: list[dict], fault=None) -> None:
    staging = out / STAGING
    for op in ops:
        target = out / _safe_rel(op["path"])
        if op["new"]:
            src = staging / op["new"]
            if not src.exists():
                continue  # applied before an interruption
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, target)
        elif target.is_file():
            target.unlink()
            _remove_empty_parents(out, target.parent)
        if fault:
            fault("apply")


def _rollback(out: Path, ops: list[dict]) -> None:
    staging = out / STAGING
    for op in reversed(ops):
        target = out / _safe_rel(op["path"])
        try:
            if op["old"] and (staging / op["old"]).exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staging / op["old"], target)
            elif not op["old"] and op["new"] and target.is_file() and not (staging / op["new"]).exists():
                target.unlink()  # a file this run created
                _remove_empty_parents(out, target.parent)
        except OSError:
            continue  # best effort: the error that started the rollback is reported


def _remove_empty_parents(out: Path, d: Path) -> None:
    while d != out and out in d.parents:
        try:
            d.rmdir()
        except OSError:
            return
        d = d.parent
