#!/usr/bin/env python3
"""Transpile-time benchmark: prints per-kernel and whole-corpus figures, cold and warm.

cold: a fresh `cutile-transpile SRC -o OUT` process with an empty cache (everything recomputed);
warm: the pipeline called again in the same process without the file cache;
no-op: 100 kernel files, nothing changed, a new process each time (the pre-commit case);
library: a generated package of at least 100 files (copies of the sources as sub-packages, each file made
unique so no copy is a cache hit), cold, on the cores this machine has.
usage: python tools/bench_transpile.py [SRC ...]   (default: corpus/)
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from transpiler.frontend.source import parse_file  # noqa: E402
from transpiler.emit.lower import lower_kernel  # noqa: E402
from transpiler.pipeline import collect_sources, run, translate_kernel  # noqa: E402


# Timed runs use the environment a user has: Python writes bytecode for the tool's modules (an environment
# that sets PYTHONDONTWRITEBYTECODE would recompile the whole tool in every process); one untimed run first
# writes it.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def main() -> None:
    srcs = [Path(a) for a in sys.argv[1:]] or [ROOT / "corpus"]
    files = collect_sources(srcs, None)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rust"
        cold = []
        for i in range(3):  # an empty cache each time: every file parsed, translated and formatted
            # the compile check is timed on its own below (an empty cache would rebuild cutile's dependencies)
            env = {**ENV, "CUTILE_TRANSPILE_CACHE": str(Path(tmp) / f"cache{i}"),
                   "CUTILE_TRANSPILE_COMPILE_CHECK": "0"}
            if i == 0:  # untimed: writes the tool's bytecode
                subprocess.run([sys.executable, "-m", "transpiler.cli", *map(str, srcs), "-o", str(out), "-q"],
                               check=False, cwd=ROOT, env={**env, "CUTILE_TRANSPILE_CACHE": str(Path(tmp) / "warm")})
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "transpiler.cli", *map(str, srcs), "-o", str(out), "-q"], check=False,
                           cwd=ROOT, env=env)
            cold.append(time.perf_counter() - t0)
        run(srcs, out, use_cache=False)  # warm-up (imports, rustfmt memo)
        warm = []
        for _ in range(5):
            t0 = time.perf_counter()
            run(srcs, out, use_cache=False)
            warm.append(time.perf_counter() - t0)
    print(f"{'kernel':32} {'source':36} {'ms (median of 5)':>16}")
    total_kernels = 0
    for f in files:
        fr = parse_file(f, f.as_posix())
        for k in fr.kernels:
            times = []
            for _ in range(5):
                t0 = time.perf_counter()
                for v in translate_kernel(k):
                    lower_kernel(v)
                times.append(time.perf_counter() - t0)
            total_kernels += 1
            print(f"{k.name:32} {f.relative_to(ROOT).as_posix() if f.is_relative_to(ROOT) else f.name:36} "
                  f"{statistics.median(times) * 1e3:16.2f}")
    print(f"\nwhole corpus: {len(files)} files, {total_kernels} kernels")
    print(f"  cold (new process, empty cache, incl. rustfmt + writes): median {statistics.median(cold) * 1e3:.0f} ms "
          f"(min {min(cold) * 1e3:.0f}, max {max(cold) * 1e3:.0f})")
    print(f"  warm (in process, no file cache, rustfmt memoized):    median {statistics.median(warm) * 1e3:.0f} ms "
          f"(min {min(warm) * 1e3:.0f}, max {max(warm) * 1e3:.0f})")
    noop_100(files)
    library_cold(srcs)
    compile_check(srcs)


def library_cold(srcs: list[Path], min_files: int = 100) -> None:
    """A library-sized package, cold: the sources copied as sub-packages until there are `min_files` files,
    relative imports intact, each file given a unique comment so that no copy is a cache hit."""
    from transpiler.frontend.source import parse_file as parse
    with tempfile.TemporaryDirectory() as tmp:
        lib = Path(tmp) / "lib"
        lib.mkdir()
        (lib / "__init__.py").write_text("")
        n_files = n_kernels = copy = 0
        while n_files < min_files:
            pkg = lib / f"part{copy:02d}"
            pkg.mkdir()
            (pkg / "__init__.py").write_text("")
            for src in srcs:
                for f in sorted(src.rglob("*.py")):
                    dst = pkg / src.name / f.relative_to(src)
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    dst.write_text(f.read_text() + f"\n# library copy {copy}\n")
                    if f.name != "__init__.py":
                        n_files += 1
                        n_kernels += len(parse(dst, dst.name).kernels)
            for d in pkg.rglob("*"):
                if d.is_dir() and not (d / "__init__.py").exists():
                    (d / "__init__.py").write_text("")
            copy += 1
        times, cpu = [], []
        for i in range(5):
            env = {**ENV, "CUTILE_TRANSPILE_CACHE": str(Path(tmp) / f"cache{i}"),
                   "CUTILE_TRANSPILE_COMPILE_CHECK": "0"}
            cmd = [sys.executable, "-m", "transpiler.cli", str(lib), "-o", str(Path(tmp) / f"out{i}"), "-q"]
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(cmd, check=False, cwd=ROOT, env=env)
            times.append(time.perf_counter() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the run, its workers and rustfmt
            cpu.append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
    print(f"\nlibrary of {n_files} files, {n_kernels} kernels ({copy} copies of the sources as sub-packages), "
          f"cold on {os.cpu_count()} cores: median {statistics.median(times) * 1e3:.0f} ms "
          f"(min {min(times) * 1e3:.0f}, max {max(times) * 1e3:.0f}), new process and empty cache each time; "
          f"CPU (user + system, all processes) median {statistics.median(cpu) * 1e3:.0f} ms")


def compile_check(srcs: list[Path]) -> None:
    """The compile check on its own: cargo check of the corpus crate with cutile's dependencies already built
    (the shared cache), first when the crate is new, then the memoized verdict of an unchanged crate."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rust"
        env = {**os.environ, "CUTILE_TRANSPILE_COMPILE_CHECK": "1"}
        cmd = [sys.executable, "-m", "transpiler.cli", *map(str, srcs), "-o", str(out), "-q"]
        subprocess.run(cmd + ["--no-compile-check"], check=False, cwd=ROOT, env=env)
        times = []
        for _ in range(2):
            t0 = time.perf_counter()
            res = subprocess.run(cmd, check=False, cwd=ROOT, env=env, capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
    if res.returncode != 0:
        print(f"\ncompile check did not run cleanly: {res.stderr.strip()[-500:]}")
        return
    print(f"\ncompile check of the corpus crate: first {times[0] * 1e3:.0f} ms (cargo check), unchanged crate "
          f"{times[1] * 1e3:.0f} ms (memoized verdict)")


def noop_100(files: list[Path]) -> None:
    """The pre-commit case: nothing changed in 100 kernel files; a new process each time."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        for i in range(100):
            f = files[i % len(files)]
            (src / f"k{i:03d}_{f.name}").write_text(f.read_text())
        out = Path(tmp) / "rust"
        cmd = [sys.executable, "-m", "transpiler.cli", str(src), "-o", str(out), "-q", "--no-compile-check"]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=False, cwd=ROOT, env=ENV)
        first = time.perf_counter() - t0
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=False, cwd=ROOT, env=ENV)
            times.append(time.perf_counter() - t0)
    print(f"\n100 kernel files: first run {first * 1e3:.0f} ms (cache as left by earlier runs); "
          f"no-op re-run median {statistics.median(times) * 1e3:.0f} ms (min {min(times) * 1e3:.0f}, "
          f"max {max(times) * 1e3:.0f}), new process each time")


if __name__ == "__main__":
    main()
