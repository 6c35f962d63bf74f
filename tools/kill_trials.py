"""kill -9 trials of real runs: OUT must be entirely the old tree or entirely the new one once the next run
starts (recovery). Prints the figures; exit 1 on any mixed tree.

    python3 tools/kill_trials.py [--trials 30] [--seed 1] [--corpus corpus]

The old tree is the port of the corpus; the new sources are the corpus with a comment line added to every
file (so every module's wrapper and the manifest change). Each trial kills a cold run (private cache, so the
write phase lands at an unpredictable moment) after a random delay.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def tree(out: Path) -> dict[str, str]:
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file() and p.name != ".cutile-transpile.lock"}


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "transpiler.cli", *map(str, args), "-q"], capture_output=True,
                          text=True, env={**os.environ, "CUTILE_TRANSPILE_COMPILE_CHECK": "0", **(env or {})})


def main() -> int:
    from transpiler.output.transaction import recover
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--corpus", type=Path, default=ROOT / "corpus")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    base = Path(tempfile.mkdtemp(prefix="kill-trials-"))
    try:
        old_src, new_src = base / "old" / "src", base / "new" / "src"
        shutil.copytree(args.corpus, old_src)
        shutil.copytree(args.corpus, new_src)
        for f in new_src.rglob("*.py"):
            f.write_text("# changed\n" + f.read_text())
        refs = {}
        for name, s in (("old", old_src), ("new", new_src)):
            assert cli(s, "-o", base / name / "out").returncode in (0, 1)
            refs[name] = tree(base / name / "out")
        work_src = base / "work" / "src"
        out = base / "work" / "out"
        counts = {"old": 0, "new": 0, "mixed": 0}
        t0 = time.monotonic()
        for trial in range(args.trials):
            shutil.rmtree(work_src, ignore_errors=True)
            shutil.copytree(old_src, work_src)
            shutil.rmtree(out, ignore_errors=True)
            cli(work_src, "-o", out)
            shutil.rmtree(work_src)
            shutil.copytree(new_src, work_src)
            env = {**os.environ, "CUTILE_TRANSPILE_COMPILE_CHECK": "0",
                   "CUTILE_TRANSPILE_CACHE": str(base / f"cache{trial}")}
            p = subprocess.Popen([sys.executable, "-m", "transpiler.cli", str(work_src), "-o", str(out), "-q"],
                                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            delay = rng.uniform(0.1, 4.0)
            time.sleep(delay)
            p.send_signal(signal.SIGKILL)
            p.wait()
            recover(out)
            got = tree(out)
            kind = "old" if got == refs["old"] else "new" if got == refs["new"] else "mixed"
            counts[kind] += 1
            print(f"trial {trial:3d}: killed after {delay:.2f} s -> {kind}", flush=True)
            shutil.rmtree(base / f"cache{trial}", ignore_errors=True)
        print(f"{args.trials} trials (seed {args.seed}) in {time.monotonic() - t0:.0f} s: {counts}")
        return 1 if counts["mixed"] else 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
