"""Proof records: the answers this machine's own proofs accepted, kept outside OUT.

OUT/llm-cache is committed and shared, so a cloned repository or a branch can ship any entry it likes,
`"verdict": "accepted"` and a matching `verified` digest included: nothing in OUT can vouch for itself.
An accepted entry is therefore replayed as proved only when a record here says that this user's tool proved
that exact answer (question hash, model, Rust, type) for that exact kernel code (`verified`, the digest of
the rendered entries). Any other accepted entry is proved again in a staging crate before it counts, in
every mode (`--check` and the pre-commit hook included), and rejected when the proof fails; when the proof
cannot run, the kernel keeps the rules' diagnostic.

Records live in `$CUTILE_TRANSPILE_CACHE/llm-proofs/` (default `~/.cache/cutile-transpile`), a directory
only its owner may read or write (0700), one file (0600) per record, named by the digest of what it vouches
for. Only `prove.py`, after an `equivalent` verdict, writes one.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

RECORDS_DIR = "llm-proofs"


def _dir() -> Path:
    from ..verify.toolchain import cache_dir
    return cache_dir() / RECORDS_DIR


def record_id(entry: dict) -> str | None:
    """The digest an accepted entry's record is named by (None: the entry does not say what was proved)."""
    answer, verified = entry.get("answer"), entry.get("verified")
    if entry.get("verdict") != "accepted" or not isinstance(answer, dict) or not isinstance(verified, str):
        return None
    doc = {"hash": entry.get("hash"), "model": entry.get("model"), "rust": answer.get("rust"),
           "type": answer.get("type"), "verified": verified}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def proved_here(entry: dict) -> bool:
    """Whether this machine's proof accepted exactly this entry (its answer for its kernel code)."""
    rid = record_id(entry)
    if rid is None:
        return False
    path = _dir() / rid
    try:
        st = path.lstat()
    except OSError:
        return False
    # a regular file of this user that nobody else may write (a shared or planted cache is no evidence)
    return path.is_file() and not path.is_symlink() and st.st_uid == os.getuid() and not st.st_mode & 0o022


def remember(entry: dict) -> None:
    """Records that this machine's proof accepted `entry` (a record that cannot be written costs a proof)."""
    rid = record_id(entry)
    if rid is None:
        return
    d = _dir()
    try:
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(d, 0o700)
        fd = os.open(d / rid, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps({"hash": entry.get("hash"), "verified": entry.get("verified")}) + "\n")
    except OSError:
        pass
