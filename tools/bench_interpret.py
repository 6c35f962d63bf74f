#!/usr/bin/env python3
"""Interpreter benchmark: the bundled Triton corpus translated, then every kernel with reference cases
(tests/fixtures/triton_refs) interpreted through its port's Tile IR; prints the cases, their verdicts and the
interpreter's CPU seconds (the issue's budget for the whole corpus check: 180 s).
usage: python tools/bench_interpret.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", type=Path, help="translate into this folder and keep it")
    args = ap.parse_args()
    from transpiler.pipeline import run, write_outputs
    from transpiler.verify.interpret.driver import check_output
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-interpret-"))
    try:
        src = base / "corpus"
        shutil.copytree(ROOT / "corpus" / "triton", src / "triton", dirs_exist_ok=True)
        _, outputs = run([src / "triton"], base / "rust")
        write_outputs(outputs)
        t0, w0 = time.process_time(), time.perf_counter()
        results = check_output(base / "rust")
        cpu, wall = time.process_time() - t0, time.perf_counter() - w0
        got = [r for rs in results.values() for r in rs]
        slowest = max(got, key=lambda r: r.seconds)
        print(f"{len(got)} cases of {len(results)} kernels: {dict(Counter(r.verdict for r in got))}")
        print(f"interpreting: {sum(r.seconds for r in got):.1f} s CPU (slowest {slowest.case} {slowest.seconds:.1f} s); "
              f"with compiling the entries: {cpu:.1f} s CPU in this process, {wall:.1f} s wall")
        return 0 if all(r.verdict == "numbers_match" for r in got) else 1
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
