"""What OUT holds now, read from its `manifest.json`, and which files in OUT are generated.

A file counts as generated only if the manifest lists it (with the SHA-256 of the content written) and it
still starts with the `@generated` header. A listed file whose content no longer has that hash was edited
by hand and is refused like a file without the header.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

MANIFEST = "manifest.json"
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
FIXED_FILES = ("Cargo.toml", "src/lib.rs", "src/abi.rs", "src/abi_tables.rs", "python/cutile_ports/__init__.py",
               "python/cutile_ports/_runtime.py", "python/cutile_ports/_crate.py", "python/cutile_ports/_fastlaunch.c")


class ManifestError(Exception):
    """`manifest.json` exists but is not a manifest this tool can read."""


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def module_files(op: str) -> list[str]:
    return [f"src/{op}/kernel.rs", f"src/{op}/ffi.rs", f"python/cutile_ports/{op}.py"]


@dataclass
class OutState:
    modules: dict[str, dict] = field(default_factory=dict)  # source (relative to OUT) -> module record
    files: dict[str, str | None] = field(default_factory=dict)  # generated file -> sha256 (None: not recorded)
    exists: bool = False
    crate: str = ""  # the crate's name (kept by later runs unless --crate-name changes it)


def _check(cond: bool, what: str) -> None:
    if not cond:
        raise ManifestError(what)


def validate(doc) -> None:
    """The parts of a manifest this tool relies on; raises ManifestError naming the first problem."""
    _check(isinstance(doc, dict), "not a JSON object")
    _check(isinstance(doc.get("crate"), str) and bool(_IDENT.match(doc["crate"])), "`crate` is not a crate name")
    mods = doc.get("modules")
    _check(isinstance(mods, list), "`modules` is not a list")
    for i, m in enumerate(mods):
        _check(isinstance(m, dict), f"modules[{i}] is not an object")
        _check(isinstance(m.get("op"), str) and bool(_IDENT.match(m["op"])), f"modules[{i}].op is not a name")
        _check(isinstance(m.get("source"), str) and m["source"] != "", f"modules[{i}].source is not a path")
        _check(isinstance(m.get("module"), str), f"modules[{i}].module is missing")
        ks = m.get("kernels")
        _check(isinstance(ks, list), f"modules[{i}].kernels is not a list")
        for j, k in enumerate(ks):
            _check(isinstance(k, dict) and isinstance(k.get("name"), str), f"modules[{i}].kernels[{j}] has no name")
            es = k.get("entries")
            _check(isinstance(es, list) and all(isinstance(e, dict) and isinstance(e.get("name"), str) for e in es),
                   f"modules[{i}].kernels[{j}].entries is not a list of entries")
            _check(isinstance(k.get("params", []), list), f"modules[{i}].kernels[{j}].params is not a list")
            _check(k.get("views") is None or isinstance(k["views"], list), f"modules[{i}].kernels[{j}].views")
    files = doc.get("files")
    _check(files is None or (isinstance(files, dict) and all(isinstance(v, str) for v in files.values())),
           "`files` is not a table of hashes")
    for rel in files or {}:  # the writer removes listed files: they must lie inside OUT
        _check(_plain(rel), f"`files` lists a path outside the output directory: {rel!r}")
    for i, m in enumerate(mods):  # verify reads the module's Rust file
        _check(m.get("rust") is None or _plain(m["rust"]), f"modules[{i}].rust is not a path inside the output "
                                                           "directory")


def _plain(rel) -> bool:
    from .guard import UnsafePath, plain_parts
    try:
        plain_parts(rel)
    except UnsafePath:
        return False
    return True


_MEMO: dict[tuple, dict] = {}  # (path, mtime, size) -> the validated manifest: a run reads it more than once


def load_manifest(out: Path) -> dict | None:
    """The validated manifest of OUT, or None where there is none. Treat the result as read-only."""
    from .guard import UnsafePath, inside
    try:
        path = inside(out, MANIFEST)
    except UnsafePath as e:
        raise ManifestError(str(e)) from None
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ManifestError(f"{path}: cannot be read ({e})") from None
    key = (os.path.realpath(path), st.st_mtime_ns, st.st_size, st.st_ino)
    if key in _MEMO:
        return _MEMO[key]
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ManifestError(f"{path}: cannot be read as JSON ({e})") from None
    try:
        validate(doc)
    except ManifestError as e:
        raise ManifestError(f"{path}: not a cutile-transpile manifest: {e}") from None
    _MEMO.clear()
    _MEMO[key] = doc
    return doc


def read_state(out: Path | None) -> OutState:
    if out is None or not out.is_dir():
        return OutState()
    doc = load_manifest(out)
    if doc is None:
        return OutState(exists=False)
    modules = {m["source"]: m for m in doc["modules"]}
    if isinstance(doc.get("files"), dict):
        files: dict[str, str | None] = dict(doc["files"])
    else:  # written by an earlier version: the files it always writes, hashes unknown
        files = {f: None for f in FIXED_FILES}
        for m in doc["modules"]:
            files.update({f: None for f in module_files(m["op"])})
    return OutState(modules, files, True, doc["crate"])
