"""cuTile Python's side of a check (the bytecode `export_kernel` writes) cached by content, in the folder of
verify/ircache.py and only where that cache is on (CUTILE_TRANSPILE_IR_CACHE: the test suite, one folder per
run). The suite verifies the same fixtures many times over (each mutant of the Rust side, each test's own OUT):
the Rust side changes, cuTile Python's does not, and its export was a fifth of a verification's CPU time.

A key covers everything the export reads:
- the bytes of every Python file the kernel's module can import from its own code: the whole top package
  (every `*.py` under it) for a package module, the folder's modules for a lone one. A helper or constant
  edited anywhere there is another key; files are read (hashed) at each lookup, never remembered;
- the kernel function: its file, qualified name and first line, its closure's values (a factory's kernel at
  one specialization) and the kernel's compiler options (`num_ctas`, `occupancy`, ...);
- the signature handed to the export (every parameter's kind, dtype, rank; constants' values; element types);
- cuTile Python's version and the environment variables its compiler reads (`CUDA_TILE_*`, `TILE_IR_*`).
This tool's own code is not in the key: the folder lives as long as one run of one checkout.
Only a successful export is stored (a refusal is cuTile Python's verdict and is asked again).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from . import ircache

MAGIC = b"cutile-transpile-python-export 1\n"


def _files(source: Path) -> list[Path]:
    from ..frontend.modules import package_root
    root, dotted = package_root(source)
    if "." in dotted:
        top = root / dotted.partition(".")[0]
        return sorted(p for p in top.rglob("*.py") if p.is_file())
    return sorted(p for p in source.parent.glob("*.py") if p.is_file())


def export_key(kernel_obj, params: list[dict], spec: dict, elements: dict[str, str]) -> str | None:
    """The key of one export (None: the kernel's files cannot be read, or the kernel is not a plain
    `@ct.kernel` of a function: nothing is cached)."""
    from importlib import metadata
    fn = getattr(kernel_obj, "_pyfunc", None)
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    source = Path(code.co_filename)
    if not source.is_file():  # a kernel made by exec() or the like: its code is in no file the key could read
        return None
    h = hashlib.sha256(MAGIC)

    def part(data: bytes) -> None:
        h.update(len(data).to_bytes(8, "little") + data)
    try:
        for f in _files(source):
            part(str(f).encode())
            part(f.read_bytes())
        closure = [c.cell_contents for c in (fn.__closure__ or ())]
        part(repr((str(source.resolve()), fn.__qualname__, code.co_firstlineno, code.co_freevars, closure,
                   getattr(kernel_obj, "_compiler_options", None))).encode())
        version = metadata.version("cuda-tile")
    except (OSError, ValueError, metadata.PackageNotFoundError):
        return None
    env = {k: v for k, v in sorted(os.environ.items()) if k.startswith(("CUDA_TILE", "TILE_IR_"))}
    part(json.dumps([params, spec, elements, version, env], sort_keys=True, default=repr).encode())
    return h.hexdigest()


def cached_export(export, kernel_obj, params: list[dict], spec: dict, elements: dict[str, str], out: Path) -> None:
    """`export(kernel_obj, params, spec, elements, out)`, answered from the cache where it holds the key."""
    folder = ircache.cache_folder()
    key = export_key(kernel_obj, params, spec, elements) if folder is not None else None
    if key is None:
        export(kernel_obj, params, spec, elements, out)
        return
    payload = ircache.load(folder, key)
    if payload is not None:
        out.write_bytes(payload)
        return
    export(kernel_obj, params, spec, elements, out)
    try:
        ircache.store(folder, key, out.read_bytes())
    except OSError:
        pass  # a cache that cannot be written only costs time
