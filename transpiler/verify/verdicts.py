"""Verdicts cached by what they depend on, so re-verifying unchanged ports costs no build and no compile.

A kernel's key covers: the Rust of its module as it is on disk (kernel.rs and ffi.rs: hand edits count), its
manifest record (entries, specializations, dtypes, probes' inputs), its Python source with the modules and
pyproject.toml it reads (`cache.file_key`), this tool's code, rules and templates, the irdump helper, and the
versions of the toolchain (cutile, cuda-tile, tileiras, cargo). Only final verdicts are stored
(`equivalent`, `different`, `compiled`, `numbers_match`, `numbers_differ`: a Triton port's reference cases are
in the key too); `not_verified` depends on the environment and is tried again.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path

from ..output.guard import inside
from .toolchain import cache_dir

FINAL = ("equivalent", "different", "compiled", "numbers_match", "numbers_differ")


@lru_cache(maxsize=1)
def toolchain_identity() -> str:
    from importlib import metadata
    from ..emit.render import CUTILE_VERSION, tool_digest
    parts = [tool_digest(), CUTILE_VERSION]
    for dist in ("cuda-tile", "nvidia-cuda-tileiras"):
        try:
            parts.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{dist}=none")
    try:
        parts.append(subprocess.run(["cargo", "--version"], capture_output=True, text=True, timeout=60).stdout)
    except (OSError, subprocess.TimeoutExpired):
        parts.append("cargo=none")
    irdump = Path(__file__).resolve().parent / "irdump"
    for p in sorted(irdump.rglob("*")):
        if p.is_file() and "target" not in p.parts:
            parts.append(p.name + hashlib.sha256(p.read_bytes()).hexdigest())
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def kernel_key(out: Path, module: dict, kernel: dict, memo: dict | None = None) -> str | None:
    """The key of one kernel's verdict (None: something it depends on cannot be read; never cached).
    `memo` (one per verify run): what the kernels of one module share (its Rust, its source's key) is read
    and hashed once, not once per kernel."""
    mkey = (module["rust"], module["op"], module["source"])
    if memo is None:
        shared = _module_digest(out, module, None)
    elif mkey in memo:
        shared = memo[mkey]
    else:
        shared = memo[mkey] = _module_digest(out, module, memo.setdefault("paths", _real_paths()))
    if shared is None:
        return None
    h = hashlib.sha256(shared.encode())
    h.update(json.dumps(kernel, sort_keys=True).encode())
    if kernel.get("frontend") == "triton":
        from .interpret.driver import reference_digest
        h.update(reference_digest(out, module, kernel).encode())  # a Triton port's reference cases
    return h.hexdigest()


def _real_paths():
    from ..cache import RealPaths
    return RealPaths()


def _module_digest(out: Path, module: dict, paths) -> str | None:
    from ..cache import file_key
    h = hashlib.sha256(toolchain_identity().encode())
    op = module["op"]
    for rel in (module["rust"], f"src/{op}/ffi.rs"):
        try:
            h.update(rel.encode() + inside(out, rel).read_bytes())
        except OSError:
            h.update(rel.encode() + b"\0missing")
    src = (out / module["source"]).resolve()
    py = file_key(src, src.as_posix(), paths)
    if py is None:
        return None
    h.update(py.encode())
    return h.hexdigest()


def _path(key: str) -> Path:
    return cache_dir() / "verdicts" / key[:2] / f"{key}.json"


def load(key: str | None, make):
    """The cached verdict for `key` (built with `make(**fields)`), or None."""
    if key is None or os.environ.get("CUTILE_TRANSPILE_NO_VERDICT_CACHE"):
        return None
    try:
        data = json.loads(_path(key).read_text())
        return make(data)
    except (OSError, ValueError, TypeError, KeyError):
        return None


def store(key: str | None, verdict) -> None:
    if key is None or verdict.verdict not in FINAL:
        return
    path = _path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(asdict(verdict), sort_keys=True))
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written only costs time
