"""Runtime code a generated package carries verbatim (the files here are copied into OUT with a version header):
`_runtime.py`, the Python side of the C ABI, `_fastlaunch.c`, its compiled fast path, and `abi.rs`, what the crate's
C symbols share. What varies per crate is rendered beside them (`templates/python/_crate.py.j2`,
`templates/abi_tables.rs.j2`, which `abi.rs` includes)."""

from __future__ import annotations

import hashlib
from pathlib import Path

RUNTIME_DIR = Path(__file__).resolve().parent


def fastlaunch_digest_of(source: str) -> str:
    """The digest a build of the fast path's C source carries (`-DFASTLAUNCH_DIGEST`, passed by `cutile-transpile
    build`) and the runtime expects (`_crate.py`): a build of another source is never loaded."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]
