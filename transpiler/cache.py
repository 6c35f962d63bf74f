"""Content-keyed cache of per-file results, so unchanged kernels are not processed again.

The key covers everything that shapes a file's output: the tool version, the rule tables and the
templates (`tool_digest`), the path as displayed, the file's bytes and the nearest pyproject.toml
(specializations) and the package modules it imports from (helpers, constants). Entries are JSON files under `$CUTILE_TRANSPILE_CACHE/files` (default
`~/.cache/cutile-transpile`); a corrupt or unreadable entry is ignored and recomputed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

from .diagnostics import Diagnostic
from .model.ir import Pos

FORMAT = 2  # 2: the entry views live in each result's manifest record


def _dir() -> Path:
    return _dir_for(os.environ.get("CUTILE_TRANSPILE_CACHE"), os.environ.get("XDG_CACHE_HOME"),
                    os.environ.get("HOME"))


@functools.lru_cache(maxsize=8)
def _dir_for(*env) -> Path:  # read once per run for every file (the environment is its key)
    from .verify.toolchain import cache_dir
    return cache_dir() / "files"


class RealPaths:
    """Real paths and nearest pyproject.toml files for one run: a file that is not a link is resolved through
    its folder's real path, found once per folder (most sources share a few folders)."""

    def __init__(self):
        self._dirs: dict[str, str] = {}
        self._reals: dict[str, str] = {}
        self._pyprojects: dict[str, bytes] = {}
        self._rels: dict[tuple[str, str], str] = {}

    def rel(self, path, out) -> str:
        """`path` relative to `out`, both resolved (`pipeline.source_rel`)."""
        key = (os.fspath(path), os.fspath(out))
        r = self._rels.get(key)
        if r is None:
            r = self._rels[key] = os.path.relpath(self.real(path), self.real(out)).replace(os.sep, "/")
        return r

    def real(self, path) -> str:
        key = os.fspath(path)
        r = self._reals.get(key)
        if r is None:
            s = os.path.abspath(key)
            parent, name = os.path.split(s)
            if not name or os.path.islink(s):
                r = os.path.realpath(s)
            else:
                d = self._dirs.get(parent)
                if d is None:
                    d = self._dirs[parent] = os.path.realpath(parent)
                r = os.path.join(d, name)
            self._reals[key] = r
        return r

    def pyproject(self, path: Path) -> bytes:
        """The bytes of the pyproject.toml nearest above `path` (b"" when there is none)."""
        d = os.path.dirname(self.real(path))
        data = self._pyprojects.get(d)
        if data is None:
            data = self._pyprojects[d] = _nearest_pyproject(Path(d) / "-")
        return data


def _nearest_pyproject(path: Path) -> bytes:
    for parent in path.resolve().parents:
        pp = parent / "pyproject.toml"
        if pp.is_file():
            try:
                return pp.read_bytes()
            except OSError:
                return b""
    return b""


def file_key(path: Path, display: str, paths: RealPaths | None = None) -> str | None:
    """`paths`: the run's memo of real paths (one per call otherwise)."""
    from .emit.render import tool_digest
    try:
        data = path.read_bytes()
    except OSError:
        return None
    pyproject = paths.pyproject(path) if paths is not None else _nearest_pyproject(path)
    h = hashlib.sha256()
    for part in (str(FORMAT).encode(), tool_digest().encode(), display.encode(), data, pyproject,
                 *_imported(path, data)):
        h.update(len(part).to_bytes(8, "little") + part)
    return h.hexdigest()


def _imported(path: Path, data: bytes) -> list[bytes]:
    """Path and bytes of each package module the file imports from (their helpers and constants are
    inlined into its kernels, so a change there changes its output)."""
    if b"import" not in data:
        return []
    from .frontend.modules import imported_files
    out = []
    for f in imported_files(path, data.decode("utf-8", errors="replace")):
        try:
            out += [str(f).encode(), f.read_bytes()]
        except OSError:
            out += [str(f).encode(), b""]
    return out


def _diag(d: dict) -> Diagnostic:
    return Diagnostic(d["severity"], d["code"], d["message"], Pos(d["path"], d["line"], d["col"]))


def store(key: str, results, diagnostics) -> None:
    doc = {
        "results": [{"name": r.name, "source": r.source, "line": r.line, "status": r.status, "entries": r.entries,
                     "diagnostics": [d.as_json() for d in r.diagnostics], "manifest": r.manifest,
                     "frontend": r.frontend} for r in results],
        "diagnostics": [d.as_json() for d in diagnostics],
    }
    target = _dir() / f"{key}.json"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}")
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, target)
    except OSError:
        pass  # a cache that cannot be written is just not used


def load(key: str):
    from .translate import KernelResult
    try:
        doc = json.loads((_dir() / f"{key}.json").read_text())
        results = [KernelResult(r["name"], r["source"], r["line"], r["status"], entries=r["entries"],
                                diagnostics=[_diag(d) for d in r["diagnostics"]], manifest=r["manifest"],
                                frontend=r["frontend"]) for r in doc["results"]]
        return results, [_diag(d) for d in doc["diagnostics"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


# ------------------------------------------------------------------ the crate of a run whose inputs did not change
# Rendering, formatting and compile-checking the crate is most of a run with nothing to translate (a no-op run).
# Its inputs are the old manifest, each file's cache key (its results are a function of it) and the run's
# settings; a run with the same inputs renders the same crate. The record holds each file's hash, so the files
# are read back from OUT, and only when OUT still holds exactly those bytes (else the crate is rendered again).
CRATE_FORMAT = 1


def crate_key(parts: list) -> str:
    """The digest of a run's crate inputs (strings, bytes or None, in a fixed order)."""
    from .emit.render import tool_digest
    h = hashlib.sha256()
    for part in (f"crate{CRATE_FORMAT}", tool_digest(), *parts):
        b = part if isinstance(part, bytes) else str(part).encode("utf-8", "surrogateescape")
        h.update(len(b).to_bytes(8, "little") + b)
    return h.hexdigest()


def _crate_record(out: Path) -> Path:
    return _dir().parent / "crates" / f"{hashlib.sha256(os.path.realpath(out).encode()).hexdigest()[:32]}.json"


class OnDisk(dict):
    """Files read back from OUT by `load_crate` (path -> content): each is exactly what OUT holds, so writing
    them changes nothing (`pipeline.plan_changes` takes that as read). Any change to the dict drops the mark."""

    def __init__(self, out: Path, files: dict[Path, str]):
        super().__init__(files)
        self.out: Path | None = out

    def _changed(name):
        def method(self, *a, **k):
            self.out = None
            return getattr(dict, name)(self, *a, **k)
        return method
    __setitem__ = _changed("__setitem__")
    __delitem__ = _changed("__delitem__")
    update = _changed("update")
    pop = _changed("pop")
    popitem = _changed("popitem")
    setdefault = _changed("setdefault")
    clear = _changed("clear")
    __ior__ = _changed("__ior__")
    del _changed


def load_crate(out: Path, key: str) -> OnDisk | None:
    """The files a run with inputs `key` renders for OUT (path -> content), read back from OUT, where a
    record of that run exists and OUT holds exactly its bytes; None otherwise. No link inside OUT is
    followed (`output.guard`): each folder is checked once, each file opened without following a link."""
    from .output.guard import UnsafePath, inside
    try:
        doc = json.loads(_crate_record(out).read_text())
        if doc.get("key") != key:
            return None
        for folder in sorted({rel.rpartition("/")[0] for rel in doc["files"]} - {""}):
            inside(out, folder)
        outputs = {}
        base = os.fspath(out)
        for rel, digest in doc["files"].items():
            data = _read_no_link(os.path.join(base, rel))
            if hashlib.sha256(data).hexdigest() != digest:
                return None
            outputs[out / rel] = data.decode("utf-8")
        return OnDisk(out, outputs)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, UnsafePath):
        return None


def _read_no_link(path: str) -> bytes:
    """The file's bytes; a link is not followed (OSError)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        chunks = [os.read(fd, os.fstat(fd).st_size + 1)]
        while chunks[-1]:
            chunks.append(os.read(fd, 1 << 20))
        return b"".join(chunks)
    finally:
        os.close(fd)


def store_crate(out: Path, key: str, outputs: dict[Path, str]) -> None:
    doc = {"key": key, "files": {p.relative_to(out).as_posix(): hashlib.sha256(c.encode("utf-8")).hexdigest()
                                 for p, c in outputs.items()}}
    target = _crate_record(out)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}")
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, target)
    except (OSError, ValueError):
        pass  # not remembered: the next run renders again
