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

OUT is usually committed, so a journal found there may come from a cloned repository: it carries a MAC keyed
with a per-user secret (`guard.user_key`, kept outside OUT) over its operations and OUT's real path, and one
that does not verify is refused, never applied. Every path it names goes through `guard.inside` (no link
followed).
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import os
import re
import shutil
import stat
import time
from contextlib import contextmanager
from pathlib import Path

from .guard import (OutputError, UnsafePath, check_journal_ops, check_own_paths, dangling_link, inside, key_dir,
                    lock_timeout, lstat, no_link, user_key)
from .guard import describe as _describe

LOCK = ".cutile-transpile.lock"
JOURNAL = ".cutile-transpile.journal"
STAGING = ".cutile-transpile.staging"
_EPHEMERAL_KEY = os.urandom(32)
_OLD_TEMP = re.compile(r"^\..+\.tmp\d+$")  # per-file temp names of earlier versions (`.kernel.rs.tmp123`)


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
            link = dangling_link(out)
            if link is not None:
                raise OutputError(f"{link}: is a symbolic link to {os.readlink(link)}, which does not exist: create "
                                  "that folder, or remove the link") from None
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
        timeout = lock_timeout()
    deadline = time.monotonic() + timeout
    waited = False
    while True:
        ensure_dir(out)
        try:
            fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except FileNotFoundError:
            continue  # OUT went away between the two calls
        except OSError as e:
            if e.errno == errno.ELOOP:
                no_link(out, LOCK)  # raises, naming the link
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


def _journal_mac(key: bytes, out: Path, ops: list[dict]) -> str:
    """Binds the operations to this OUT (its real path) and to this user's secret."""
    body = json.dumps(ops, sort_keys=True, separators=(",", ":"))
    msg = b"cutile-transpile journal 1\0" + os.path.realpath(out).encode() + b"\0" + body.encode()
    return hmac.new(key, msg, hashlib.sha256).hexdigest()


def _read_journal(out: Path) -> list[dict]:
    """The operations of OUT's journal, once its MAC verifies; otherwise a clear error, nothing applied."""
    journal = out / JOURNAL
    fix = (f"it was not applied and nothing was changed. If no cutile-transpile run was interrupted here, "
           f"delete {journal} and {out / STAGING}; otherwise compare OUT with its manifest before deleting them")
    try:
        fd = os.open(journal, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
        ops = doc["ops"]
        check_journal_ops(ops)
        mac = doc.get("mac")
    except (OSError, ValueError, KeyError, TypeError, AttributeError, UnsafePath) as e:
        if isinstance(e, OSError) and e.errno == errno.ELOOP:
            no_link(out, JOURNAL)
        raise OutputError(f"{journal}: an interrupted run left a journal that cannot be read ({e}); {fix}") from None
    key = user_key()
    if key is None or not isinstance(mac, str) or not hmac.compare_digest(mac, _journal_mac(key, out, ops)):
        why = (f"the key that verifies journals cannot be read ({key_dir() / 'journal.key'})" if key is None
               else "it was not written by cutile-transpile for this output directory (a journal committed to a "
                    "repository, copied from elsewhere, or left by another user)")
        raise OutputError(f"{journal}: refusing an unverified journal: {why}; {fix}")
    return ops


def _remove_own(out: Path, name: str) -> None:
    """Removes the tool's own temporary `name` in OUT: a link there is removed, never followed."""
    p = out / name
    st = lstat(p)
    if st is None:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(p)
    else:
        p.unlink()


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
    return os.path.lexists(out / JOURNAL)


def recover(out: Path) -> str | None:
    """At start (under the lock): refuse links at the tool's own paths, finish a committed journal (one
    that verifies), drop an uncommitted staging folder and the temp files of earlier versions. Returns what
    was done, for a message."""
    msg = None
    check_own_paths(out)
    journal = out / JOURNAL
    if os.path.lexists(journal):
        ops = _read_journal(out)
        no_link(out, STAGING)
        for op in ops:  # every path checked before any is touched
            inside(out, op["path"])
        try:
            _apply(out, ops)
            msg = f"{out}: finished the update an interrupted run had committed ({len(ops)} files)"
        except OSError as e:
            _rollback(out, ops)
            msg = f"{out}: rolled back an interrupted update ({_describe(e)})"
        journal.unlink()
    for name in (STAGING, f"{JOURNAL}.tmp"):
        try:
            _remove_own(out, name)
        except OSError:
            pass
    for d in (out, out / "src", out / "python" / "cutile_ports", *sorted((out / "src").glob("*/"))):
        if d.is_dir() and (d == out or not d.is_symlink()):
            for p in d.iterdir():
                if _OLD_TEMP.match(p.name) and p.is_file() and not p.is_symlink():
                    p.unlink()
    return msg


def commit(out: Path, changes: dict[Path, str | None], fault=None) -> None:
    """Applies `changes` (path -> new content, or None to remove) to OUT as one transaction.
    `fault(step)` is a test hook called at each step (it may raise or kill the process)."""
    if not changes:
        return
    staging = out / STAGING
    ops = []
    for path in changes:  # every path checked before anything is staged
        inside(out, path.relative_to(out).as_posix())
    key = user_key()
    try:
        _remove_own(out, STAGING)
        (staging / "new").mkdir(parents=True)
        (staging / "old").mkdir()
        for i, (path, content) in enumerate(sorted(changes.items(), key=lambda pc: pc[0].as_posix())):
            rel = path.relative_to(out).as_posix()
            op = {"path": rel, "new": None, "old": None}
            if content is not None:
                op["new"] = f"new/{i}"
                with open(staging / op["new"], "w", encoding="utf-8", newline="") as f:
                    f.write(content)
            if path.is_file():  # not a link: `inside` refused those
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
        _remove_own(out, tmp.name)
        # a process-lifetime key where the cache cannot hold one: this run's journal then cannot be finished
        # by another run after a crash (refused with a clear error), but it is never applied unverified
        mac = _journal_mac(key or _EPHEMERAL_KEY, out, ops)
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644), "w",
                       encoding="utf-8") as f:
            json.dump({"ops": ops, "mac": mac}, f)
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
        target = inside(out, op["path"])
        if op["new"]:
            src = staging / op["new"]
            if not os.path.lexists(src):
                continue  # applied before an interruption
            if src.is_symlink():
                raise UnsafePath(f"{src}: a staged file is a symbolic link")
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
        try:
            target = inside(out, op["path"])
            if op["old"] and (staging / op["old"]).exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staging / op["old"], target)
            elif not op["old"] and op["new"] and target.is_file() and not (staging / op["new"]).exists():
                target.unlink()  # a file this run created
                _remove_empty_parents(out, target.parent)
        except (OSError, OutputError):
            continue  # best effort: the error that started the rollback is reported


def _remove_empty_parents(out: Path, d: Path) -> None:
    while d != out and out in d.parents:
        try:
            d.rmdir()
        except OSError:
            return
        d = d.parent
