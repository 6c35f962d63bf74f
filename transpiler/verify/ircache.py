"""A content-keyed cache of the irdump helper's output (the Tile IR bytecode of one job), off unless
CUTILE_TRANSPILE_IR_CACHE names its folder (the test suite turns it on, one folder per run: the same
fixtures are transpiled and verified by several tests into different OUT folders, and each would compile
byte-identical Rust entries again).

A job's key is a SHA-256 of everything its bytecode depends on:
- the exact bytes of the Rust file the helper parses (the helper reads that one file: `build_modules` in
  irdump/src/main.rs parses it with syn and takes the module's item; the cuTile modules it uses are compiled
  into the helper). The helper is not handed the caller's file: it reads a snapshot of the bytes that were
  hashed (a file named by their digest, written when the job is submitted), so an edit made while a
  verification runs can never store the bytecode of other bytes under this key;
- every other field of the job (module, entry, generics, strides, target: all of it but `out` and `file`);
- the helper binary's own bytes (a rebuilt helper, a new cutile, a stand-in helper of a test: another key);
- the environment variables the compiler reads (`CUTILE_*` but this tool's own `CUTILE_TRANSPILE_*`,
  `TILE_IR_*`, `CUDA_TOOLKIT_PATH`, `CUDA_HOME`).
Only successful jobs are stored; a failed or crashed job is compiled again next time. An entry is the
bytecode behind a header holding its SHA-256: an entry whose checksum does not match (a torn or corrupt
file) is a miss. Entries are written to a private temporary file and renamed into place (os.replace), so
concurrent writers (pytest-xdist workers, the pool's threads) never leave a partial entry; two writers of
one key write the same bytes. Jobs that ask for more than the bytecode (`ir_text_out`) or name no file are
never cached.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

ENV = "CUTILE_TRANSPILE_IR_CACHE"
MAGIC = b"cutile-transpile-ir-cache 1\n"
_ENV_PREFIXES = ("CUTILE_", "TILE_IR_")
_ENV_NAMES = ("CUDA_TOOLKIT_PATH", "CUDA_HOME")

_binary_digests: dict[tuple, str] = {}
_binary_lock = threading.Lock()


def cache_folder() -> Path | None:
    folder = os.environ.get(ENV)
    return Path(folder) if folder else None


def binary_digest(exe: Path) -> str:
    """SHA-256 of the helper binary, read again whenever its path, size, inode or mtime change."""
    st = os.stat(exe)
    stamp = (str(exe), st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
    with _binary_lock:
        if stamp not in _binary_digests:
            h = hashlib.sha256()
            with open(exe, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            _binary_digests[stamp] = h.hexdigest()
        return _binary_digests[stamp]


def compiler_env(environ=None) -> dict[str, str]:
    environ = os.environ if environ is None else environ
    return {k: v for k, v in sorted(environ.items())
            if (k.startswith(_ENV_PREFIXES) and not k.startswith("CUTILE_TRANSPILE_")) or k in _ENV_NAMES}


def cacheable(job: dict) -> bool:
    return isinstance(job.get("file"), str) and isinstance(job.get("out"), str) and "ir_text_out" not in job


def job_digest(binary: str, source: str, job: dict, env: dict[str, str]) -> str:
    """The key of `job` whose file's bytes have the SHA-256 `source`, compiled by the helper whose binary
    has the SHA-256 `binary`, under the compiler's environment `env` (compiler_env)."""
    fields = {k: v for k, v in job.items() if k not in ("out", "file")}
    h = hashlib.sha256(MAGIC)
    for part in (binary.encode(), source.encode(),
                 json.dumps(fields, sort_keys=True).encode(), json.dumps(env, sort_keys=True).encode()):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def _entry(folder: Path, key: str) -> Path:
    return folder / key[:2] / f"{key}.bc"


def load(folder: Path, key: str) -> bytes | None:
    """The cached bytecode of `key`, or None (absent, unreadable, or not matching its checksum)."""
    try:
        data = _entry(folder, key).read_bytes()
    except OSError:
        return None
    head, sep, rest = data.partition(b"\n")
    if not sep or len(head) != 64 + len(MAGIC) - 1:
        return None
    if head[:len(MAGIC) - 1] + b"\n" != MAGIC:
        return None
    digest, payload = head[len(MAGIC) - 1:], rest
    if hashlib.sha256(payload).hexdigest().encode() != digest or not payload:
        return None
    return payload


def store(folder: Path, key: str, payload: bytes) -> None:
    path = _entry(folder, key)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(MAGIC[:-1] + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass  # a cache that cannot be written only costs time


class Snapshots:
    """The Rust files the helpers read, as the bytes that were hashed: one file per digest in `folder`."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.lock = threading.Lock()
        self.made: set[str] = set()

    def take(self, path: str) -> tuple[str, str] | None:
        """(digest of the file's bytes, path of their snapshot), or None where the file cannot be read."""
        try:
            data = Path(path).read_bytes()
        except OSError:
            return None
        digest = hashlib.sha256(data).hexdigest()
        snap = self.folder / f"{digest}.rs"
        with self.lock:
            if digest not in self.made:
                tmp = snap.with_name(f".{snap.name}.tmp")
                tmp.write_bytes(data)
                os.replace(tmp, snap)
                self.made.add(digest)
        return digest, str(snap)
