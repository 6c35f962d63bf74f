#!/usr/bin/env python3
"""How long the generated Rust is against the Python it ports: code lines per Python line.

For each entry in OUT's `kernel.rs` files, the code lines of its body (no blank lines, no comments) against the
code lines of the Python kernel it ports (its body, without docstring, comments and blank lines; the doc comment
`Port of `name` (path:line)` says which). A kernel with two entries counts its Python lines twice. Prints the
ratio over all entries, the median entry and the longest entries, and how many `let`s are temporaries (a name the
source does not have) and how many of those are named by a counter.
usage: python tools/readability.py OUT [--top N]
"""

from __future__ import annotations

import argparse
import ast
import re
import statistics
import sys
from pathlib import Path

_PORT = re.compile(r"/// Port of `([^`]+)` \((.+):(\d+)\)\.")
_NUMBERED = re.compile(r"^_[a-z]+\d+$")  # `_v12`: a temporary named by a counter, not from the source
_LET = re.compile(r"^\s*let (?:mut )?([A-Za-z_][A-Za-z0-9_]*)")


def python_lines(path: Path, line: int) -> tuple[int, set[str]]:
    """Code lines of the function defined at `line` (its body) and the names it assigns."""
    src = path.read_text()
    tree = ast.parse(src)
    lines = src.splitlines()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.lineno <= line <= node.body[0].lineno:
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
                body = body[1:]  # the docstring
            if not body:
                return 0, set()
            code = 0
            for text in lines[body[0].lineno - 1:node.end_lineno]:
                t = text.strip()
                code += bool(t) and not t.startswith("#")
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            return code, names
    raise SystemExit(f"{path}:{line}: no function there")


def rust_entries(kernel_rs: Path):
    """(python file, line, kernel name, body code lines, let names) of each entry in a kernel.rs."""
    text = kernel_rs.read_text().splitlines()
    i = 0
    while i < len(text):
        m = _PORT.search(text[i])
        if not m:
            i += 1
            continue
        name, src, line = m.group(1), m.group(2), int(m.group(3))
        while not text[i].rstrip().endswith(") {"):  # the signature ends the line before the body
            i += 1
        i += 1
        code, lets = 0, []
        while text[i] != "    }":
            t = text[i].strip()
            if t and not t.startswith("//"):
                code += 1
                lm = _LET.match(text[i])
                if lm:
                    lets.append(lm.group(1))
            i += 1
        yield src, line, name, code, lets


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--top", type=int, default=5)
    args = ap.parse_args(argv)
    rows = []
    for kernel_rs in sorted(args.out.glob("src/*/kernel.rs")):
        for src, line, name, rust, lets in rust_entries(kernel_rs):
            py = (args.out / src).resolve()  # the doc comment's path is relative to OUT (the crate root)
            py_code, names = python_lines(py, line)
            temps = [n for n in lets if n not in names and n != "_"]
            opaque = [n for n in temps if _NUMBERED.match(n)]
            rows.append((name, py_code, rust, len(temps), len(lets), len(opaque)))
    if not rows:
        print(f"no entries under {args.out}/src", file=sys.stderr)
        return 1
    py_total, rust_total = sum(r[1] for r in rows), sum(r[2] for r in rows)
    temps, lets, opaque = sum(r[3] for r in rows), sum(r[4] for r in rows), sum(r[5] for r in rows)
    ratios = [r[2] / r[1] for r in rows if r[1]]
    print(f"{len(rows)} entries: {rust_total} Rust code lines for {py_total} Python lines = "
          f"{rust_total / py_total:.2f} per Python line (median entry {statistics.median(ratios):.2f})")
    print(f"lets: {lets}, of which {temps} are temporaries ({temps / max(lets, 1):.0%}), {opaque} of them named by "
          f"a counter (`_v12`) rather than after the source")
    for name, py_code, rust, *_ in sorted(rows, key=lambda r: -r[2] / max(r[1], 1))[:args.top]:
        print(f"  {name}: {rust} / {py_code} = {rust / max(py_code, 1):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
