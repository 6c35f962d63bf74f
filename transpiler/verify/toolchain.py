"""Locating what verification needs: CUDA headers, tileirdisasm, cargo, the irdump helper."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

IRDUMP_DIR = Path(__file__).resolve().parent / "irdump"


class ToolchainError(Exception):
    """A verification prerequisite is missing; the verdict is not_verified with this reason."""


def cache_dir() -> Path:
    base = os.environ.get("CUTILE_TRANSPILE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "cutile-transpile")
    return Path(base)


def nvidia_cu13() -> Path | None:
    try:
        import nvidia  # type: ignore
    except ImportError:
        return None
    for p in getattr(nvidia, "__path__", []):
        cand = Path(p) / "cu13"
        if (cand / "include" / "cuda.h").is_file():
            return cand
    return None


def cuda_toolkit() -> Path:
    env = os.environ.get("CUDA_TOOLKIT_PATH")
    if env and (Path(env) / "include" / "cuda.h").is_file():
        return Path(env)
    found = nvidia_cu13()
    if found and (found / "include" / "curand.h").is_file():
        return found
    raise ToolchainError("CUDA headers (cuda.h, curand.h) not found: install the `verify` extra "
                         "(nvidia-cuda-runtime, nvidia-curand) or set CUDA_TOOLKIT_PATH")


def tileirdisasm() -> str:
    env = os.environ.get("TILEIRDISASM")
    if env:
        return env
    found = nvidia_cu13()
    if found and (found / "bin" / "tileirdisasm").is_file():
        return str(found / "bin" / "tileirdisasm")
    exe = shutil.which("tileirdisasm")
    if exe:
        return exe
    raise ToolchainError("tileirdisasm not found: install the `verify` extra (nvidia-cuda-tileiras)")


def cargo_env() -> dict[str, str]:
    if shutil.which("cargo") is None:
        raise ToolchainError("cargo not found: install Rust (rustup) to build and verify the generated crate")
    env = dict(os.environ)
    env["CUDA_TOOLKIT_PATH"] = str(cuda_toolkit())
    env.setdefault("CARGO_TARGET_DIR", str(cache_dir() / "target"))
    env.setdefault("CUDA_RUST_DEBUG", "none")
    return env


OPT_LEVEL_ENV = "CUTILE_TRANSPILE_CRATE_OPT_LEVEL"


def crate_opt_level_args(manifest: Path, env: dict[str, str]) -> list[str]:
    """cargo's `--config` giving the generated crate's own code the optimization level CUTILE_TRANSPILE_CRATE_OPT_LEVEL
    names (unset: cargo's release level, 3). Only its host code (the C ABI, the launchers) is affected: the kernels
    are compiled by cuTile at run time, and the dependencies keep their build. 0 builds a crate about twice as fast
    where its host code's speed does not matter (the test suite, a CI that only verifies)."""
    level = env.get(OPT_LEVEL_ENV, "")
    if not level:
        return []
    if level not in ("0", "1", "2", "3", "s", "z"):
        raise ToolchainError(f"{OPT_LEVEL_ENV}={level!r}: expected 0, 1, 2, 3, s or z")
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        name = tomllib.loads(manifest.read_text())["package"]["name"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ToolchainError(f"cannot read the package name of {manifest}: {e}") from e
    if not isinstance(name, str) or not name.replace("-", "_").isidentifier():
        raise ToolchainError(f"{manifest}: unexpected package name {name!r}")
    value = f'"{level}"' if level in ("s", "z") else level
    return ["--config", f"profile.release.package.{name}.opt-level={value}"]


def cargo_build(manifest: Path, env: dict[str, str], short: bool = False,
                show: bool = False, progress=None, generated: bool = True) -> subprocess.CompletedProcess:
    """`cargo build --release` of a generated crate (`generated`: at CUTILE_TRANSPILE_CRATE_OPT_LEVEL; the irdump
    helper is not): quiet and captured, or (`show`) printing its progress, or captured while `progress(line)` hears
    of each crate cargo starts compiling."""
    cmd = ["cargo", "build", "--release", "--manifest-path", str(manifest)]
    if generated:
        cmd += crate_opt_level_args(manifest, env)
    if short:
        cmd += ["--message-format", "short"]
    if show:
        return subprocess.run(cmd, env=env)
    if progress is None:
        return subprocess.run(cmd + ["--quiet"], capture_output=True, text=True, env=env)
    import threading
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)
    reader.start()
    err: list[str] = []
    for line in proc.stderr:  # cargo's status lines (`Compiling x v1`), then the diagnostics
        err.append(line)
        if line.lstrip().startswith("Compiling "):
            progress(line.strip())
    proc.wait()
    reader.join()
    # the status lines are not part of the errors `_build_errors` reads
    errors = "".join(line for line in err if not line.lstrip().startswith(("Compiling ", "Finished ")))
    return subprocess.CompletedProcess(cmd, proc.returncode, "".join(out), errors)


@contextmanager
def crate_build_lock(env: dict[str, str], crate: str, crate_dir: Path, on_wait=None):
    """One build of a crate named `crate` at a time in a target directory, and never a build that reuses
    another crate's: cargo names the library after the crate alone (release/lib<crate>.so) and hashes a
    path package's identity without its path, so two OUTs whose crates share a name share one library and
    one fingerprint (the second build is "fresh" and keeps the first one's library). Under the lock, the
    crate's artifacts are cleaned when the last build of that name was another OUT's."""
    import fcntl
    locks = Path(env["CARGO_TARGET_DIR"]) / "cutile-transpile-locks"
    try:
        locks.mkdir(parents=True, exist_ok=True)
        fd = os.open(locks / f"{crate}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise ToolchainError(f"cannot create the build lock in {locks}: {e.strerror or e}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait:
                on_wait(f"waiting for another build of a crate named {crate} in {env['CARGO_TARGET_DIR']}")
            fcntl.flock(fd, fcntl.LOCK_EX)
        owner, me = locks / f"{crate}.owner", os.path.realpath(crate_dir)
        try:
            last = owner.read_text()
        except OSError:
            last = None
        if last != me:
            res = subprocess.run(["cargo", "clean", "--release", "-p", crate, "--manifest-path",
                                  str(Path(crate_dir) / "Cargo.toml")], capture_output=True, text=True, env=env)
            if res.returncode != 0:
                raise ToolchainError(f"cargo clean -p {crate} failed (another crate named {crate} was built in "
                                     f"{env['CARGO_TARGET_DIR']}):\n{res.stderr[-2000:]}")
            try:
                owner.write_text(me)
            except OSError:
                pass  # the next build of this name cleans again
        yield
    finally:
        os.close(fd)


def irdump_binary(env: dict[str, str]) -> Path:
    """The irdump helper, built from a copy of its sources in the cache (an installed package's folder is
    never written to). The copy and the binary are named by a digest of the sources: two versions of the
    tool sharing the cache (worktrees, upgrades) never rebuild or run each other's helper. The copy starts
    from the latest other helper's Cargo.lock, so the crates it shares with it are the builds already there."""
    import hashlib
    files = {rel: (IRDUMP_DIR / rel).read_bytes() for rel in ("Cargo.toml", "src/main.rs")}
    digest = hashlib.sha256(b"".join(rel.encode() + b"\0" + data + b"\0" for rel, data in files.items()))
    name = f"cutile-transpile-irdump-{digest.hexdigest()[:12]}"
    files["Cargo.toml"] = files["Cargo.toml"].replace(b'name = "cutile-transpile-irdump"',
                                                      f'name = "{name}"'.encode(), 1)
    src = cache_dir() / "irdump" / name
    for rel, data in files.items():
        dst = src / rel
        if not dst.is_file() or dst.read_bytes() != data:
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(data)
    lock = src / "Cargo.lock"
    if not lock.is_file():
        older = [p for p in [*src.parent.glob("*/Cargo.lock"), cache_dir() / "irdump-src" / "Cargo.lock"]
                 if p != lock and p.is_file()]
        if older:
            lock.write_bytes(max(older, key=lambda p: p.stat().st_mtime).read_bytes())
    exe = Path(env["CARGO_TARGET_DIR"]) / "release" / name
    # cargo locks the whole target directory while it builds, so even its no-op build of the helper waits
    # for any crate another process is building there (minutes). The helper is not built again while the
    # stamp of its last build holds: the same sources, Cargo.lock and target directory, and the binary
    # that build left (size and mtime)
    stamp = src / "built.stamp"
    if stamp.is_file() and stamp.read_text() == _irdump_stamp(src, exe):
        return exe
    res = cargo_build(src / "Cargo.toml", env, generated=False)
    if res.returncode != 0:
        raise ToolchainError(f"building the irdump helper failed:\n{res.stderr[-4000:]}")
    if not exe.is_file():
        raise ToolchainError(f"irdump helper missing at {exe}")
    try:
        tmp = stamp.with_name(f".{stamp.name}.{os.getpid()}")
        tmp.write_text(_irdump_stamp(src, exe))
        os.replace(tmp, stamp)
    except OSError:
        pass  # built again next time
    return exe


def _irdump_stamp(src: Path, exe: Path) -> str:
    """What the irdump helper's build depends on and what it left (see irdump_binary); "" where a part is
    missing (never equal to a written stamp)."""
    import hashlib
    import json
    try:
        files = {rel: hashlib.sha256((src / rel).read_bytes()).hexdigest()
                 for rel in ("Cargo.toml", "Cargo.lock", "src/main.rs")}
        st = exe.stat()
    except OSError:
        return ""
    return json.dumps({"files": files, "exe": str(exe), "size": st.st_size, "mtime_ns": st.st_mtime_ns},
                      sort_keys=True)


def disassemble(path: Path) -> str:
    res = subprocess.run([tileirdisasm(), str(path)], capture_output=True, text=True)
    if res.returncode != 0:
        raise ToolchainError(f"tileirdisasm failed on {path.name}: {res.stderr.strip()[:500]}")
    return res.stdout


def usable_cores() -> int:
    """The cores this process may run on (the affinity mask where there is one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def build_fastlaunch(src: Path, dst: Path) -> str | None:
    """Compiles the generated package's C fast path (`_fastlaunch.c`) against this Python's headers (stable
    ABI, any CPython >= 3.10 loads it) into `dst`, atomically. Returns None, or why it was not built (no C
    compiler, no Python headers, a compiler error): the package then runs the same steps in Python."""
    import shutil
    import sysconfig
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    include = sysconfig.get_paths().get("include")
    if not cc:
        return "no C compiler (cc)"
    if not include or not (Path(include) / "Python.h").is_file():
        return f"no Python headers (Python.h) in {include}"
    from ..runtime import fastlaunch_digest_of
    try:  # the build carries the digest of the very source it compiles: the runtime loads only its own source's
        digest = fastlaunch_digest_of(src.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        return f"cannot read {src}: {e}"
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
    try:
        res = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-std=c11", f"-I{include}", f'-DFASTLAUNCH_DIGEST="{digest}"',
                              str(src), "-o", str(tmp)], capture_output=True, text=True)
    except OSError as e:  # `$CC` names no program, or one that cannot run
        tmp.unlink(missing_ok=True)
        return f"{cc} could not run: {e}"
    if res.returncode != 0:
        tmp.unlink(missing_ok=True)
        return f"{cc} failed: {res.stderr.strip()[-2000:]}"
    os.replace(tmp, dst)
    return None
