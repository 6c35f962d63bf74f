#!/usr/bin/env python3
"""Transpile-time benchmark: prints per-kernel and whole-corpus figures, cold and warm.

cold: a fresh `cutile-transpile SRC -o OUT` process (interpreter start and imports included);
warm: the pipeline called again in the same process (what a long-lived caller sees).
usage: python tools/bench_transpile.py [SRC ...]   (default: corpus/)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from transpiler.frontend.cutile_python import parse_file  # noqa: E402
from transpiler.emit.lower import lower_kernel  # noqa: E402
from transpiler.pipeline import collect_sources, run, translate_kernel  # noqa: E402


def main() -> None:
    srcs = [Path(a) for a in sys.argv[1:]] or [ROOT / "corpus"]
    files = collect_sources(srcs, None)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rust"
        cold = []
        for _ in range(3):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "transpiler.cli", *map(str, srcs), "-o", str(out), "-q"], check=False,
                           cwd=ROOT)
            cold.append(time.perf_counter() - t0)
        run(srcs, out)  # warm-up
        warm = []
        for _ in range(5):
            t0 = time.perf_counter()
            run(srcs, out)
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
    print(f"  cold (new process, incl. rustfmt + writes): median {statistics.median(cold) * 1e3:.0f} ms "
          f"(min {min(cold) * 1e3:.0f}, max {max(cold) * 1e3:.0f})")
    print(f"  warm (in process, incl. rustfmt):           median {statistics.median(warm) * 1e3:.0f} ms "
          f"(min {min(warm) * 1e3:.0f}, max {max(warm) * 1e3:.0f})")


if __name__ == "__main__":
    main()
