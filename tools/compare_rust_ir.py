#!/usr/bin/env python3
"""Did a change of the emitter change any Tile IR? Compares the Rust side's normalized IR of two verify runs.

Each run keeps its IR with `CUTILE_TRANSPILE_KEEP_IR=DIR` (and `CUTILE_TRANSPILE_NO_VERDICT_CACHE=1`, so
that every check compiles), e.g. before and after a change, over the same sources:
    CUTILE_TRANSPILE_NO_VERDICT_CACHE=1 CUTILE_TRANSPILE_KEEP_IR=/tmp/ir_before cutile-transpile corpus -o /tmp/a --verify
    (change the emitter)
    CUTILE_TRANSPILE_NO_VERDICT_CACHE=1 CUTILE_TRANSPILE_KEEP_IR=/tmp/ir_after cutile-transpile corpus -o /tmp/b --verify
    python tools/compare_rust_ir.py /tmp/ir_before /tmp/ir_after
Triton entries count too (they have no cuTile Python side to compare with). Exit 1 when anything differs.
usage: python tools/compare_rust_ir.py BEFORE AFTER
"""

from __future__ import annotations

import difflib
import sys
from collections import defaultdict
from pathlib import Path


def load(d: Path) -> dict[str, list[str]]:
    """entry.dtype -> the normalized IR of its checks (sorted: the check numbers differ between runs)."""
    checks = defaultdict(list)
    for p in sorted(d.glob("*.rust.normalized")):
        checks[p.name.rsplit(".", 3)[0]].append(p.read_text())
    return {k: sorted(v) for k, v in checks.items()}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    before, after = (load(Path(a)) for a in argv)
    if not before:
        print(f"no *.rust.normalized under {argv[0]}", file=sys.stderr)
        return 2
    bad = 0
    for key in sorted(set(before) | set(after)):
        b, a = before.get(key), after.get(key)
        if b == a:
            continue
        bad += 1
        if b is None or a is None:
            print(f"{key}: only in {'after' if b is None else 'before'}")
        elif len(a) != len(b):
            print(f"{key}: {len(b)} checks before, {len(a)} after")
        else:
            for x, y in zip(b, a):
                if x != y:
                    print(f"{key}: IR changed")
                    sys.stdout.writelines(difflib.unified_diff(x.splitlines(True), y.splitlines(True), "before", "after"))
                    break
    n = sum(len(v) for v in before.values())
    print(f"{len(before)} entry/dtype pairs ({n} checks): {bad} changed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
