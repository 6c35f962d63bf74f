#!/usr/bin/env python3
"""No-op run benchmark: `cutile-transpile SRC -o OUT` again with nothing changed (the pre-commit case).

Generates N small cuTile Python kernel files (each different, so no two share a cache entry) in a new
temporary folder (so the file cache misses them), runs once cold (that run fills the cache and writes OUT), then times the
no-op rerun, a new process each time, and prints the figures.
usage: python tools/bench_noop.py [N ...] [--repeat R] [--no-compile-check] [--keep DIR]   (default N: 100 2000)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

KERNEL = '''import cuda.tile as ct


@ct.kernel
def scale_{i}(a, b, TILE: ct.Constant[int]):
    x = ct.load(a, index=(ct.bid(0),), shape=(TILE,))
    ct.store(b, index=(ct.bid(0),), tile=x * {i})
'''

# Python writes bytecode for the tool's modules, as a user's environment does (one that sets
# PYTHONDONTWRITEBYTECODE would recompile the whole tool in every process)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def generate(src: Path, n: int) -> None:
    src.mkdir(parents=True)
    for i in range(n):
        (src / f"k{i:05d}.py").write_text(KERNEL.format(i=i + 1))


def transpile(src: Path, out: Path, extra: list[str], env: dict) -> float:
    cmd = [sys.executable, "-m", "transpiler.cli", str(src), "-o", str(out), "-q", *extra]
    t = time.perf_counter()
    res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    took = time.perf_counter() - t
    if res.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed (rc {res.returncode}):\n{res.stdout[-2000:]}{res.stderr[-2000:]}")
    return took


def bench(n: int, repeat: int, extra: list[str], base: Path) -> None:
    src, out = base / f"src{n}", base / f"out{n}"
    env = ENV  # the user's cache: the sources are new (a new folder), so the first run misses it
    generate(src, n)
    cold = transpile(src, out, extra, env)
    snapshot = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    times = [transpile(src, out, extra, env) for _ in range(repeat)]
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    same = "unchanged" if after == snapshot else "CHANGED (a no-op run must not write)"
    print(f"{n:>6} files: cold {cold:7.2f} s   no-op median {statistics.median(times):6.3f} s "
          f"(min {min(times):.3f}, max {max(times):.3f}, {repeat} runs)   OUT {same}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", nargs="*", type=int, default=[100, 2000])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-compile-check", action="store_true", help="pass --no-compile-check to every run")
    ap.add_argument("--keep", type=Path, help="work in this (new) folder and leave it there")
    a = ap.parse_args()
    extra = ["--no-compile-check"] if a.no_compile_check else []
    subprocess.run([sys.executable, "-c", "import transpiler.cli"], cwd=ROOT, env=ENV, check=True)  # bytecode
    if a.keep:
        a.keep.mkdir(parents=True)
        for n in a.n:
            bench(n, a.repeat, extra, a.keep)
        return
    with tempfile.TemporaryDirectory() as tmp:
        for n in a.n:
            bench(n, a.repeat, extra, Path(tmp))


if __name__ == "__main__":
    main()
