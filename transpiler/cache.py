"""Content-keyed cache of per-file results, so unchanged kernels are not processed again.

The key covers everything that shapes a file's output: the tool version, the rule tables and the
templates (`tool_digest`), the path as displayed, the file's bytes and the nearest pyproject.toml
(specializations) and the package modules it imports from (helpers, constants). Entries are JSON files under `$CUTILE_TRANSPILE_CACHE/files` (default
`~/.cache/cutile-transpile`); a corrupt or unreadable entry is ignored and recomputed.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from .diagnostics import Diagnostic
from .model.ir import Pos

FORMAT = 2  # 2: the entry views live in each result's manifest record


def _dir() -> Path:
    from .verify.toolchain import cache_dir
    return cache_dir() / "files"


def _nearest_pyproject(path: Path) -> bytes:
    for parent in path.resolve().parents:
        pp = parent / "pyproject.toml"
        if pp.is_file():
            try:
                return pp.read_bytes()
            except OSError:
                return b""
    return b""


def file_key(path: Path, display: str) -> str | None:
    from .emit.render import tool_digest
    try:
        data = path.read_bytes()
    except OSError:
        return None
    h = hashlib.sha256()
    for part in (str(FORMAT).encode(), tool_digest().encode(), display.encode(), data, _nearest_pyproject(path),
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
    from .pipeline import KernelResult
    try:
        doc = json.loads((_dir() / f"{key}.json").read_text())
        results = [KernelResult(r["name"], r["source"], r["line"], r["status"], entries=r["entries"],
                                diagnostics=[_diag(d) for d in r["diagnostics"]], manifest=r["manifest"],
                                frontend=r["frontend"]) for r in doc["results"]]
        return results, [_diag(d) for d in doc["diagnostics"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
