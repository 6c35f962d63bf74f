"""How much of a generated crate Rust checks (issue 37): per frontend, the written outputs that are checked
`&mut Tensor` partitions against those written through raw pointers (with the manifest's reason, grouped), and
the entries that are safe `fn`s against `unsafe fn`s.

    python3 tools/ownership_report.py OUT [--markdown]

Reads OUT/manifest.json (each entry's `outputs`: form checked|unchecked, reason) and each module's kernel.rs
(`pub fn` / `pub unsafe fn` per entry)."""

from __future__ import annotations

import argparse
import collections
import json
import re
from pathlib import Path


def reason_group(reason: str) -> str:
    """The kind of access that keeps an output unchecked: the reason up to its first colon, without its example
    and with names replaced by `…`."""
    text = reason.split(": ", 1)[1] if reason.startswith("written element by element") and ": " in reason else reason
    text = re.sub(r"`[^`]*`", "`…`", re.split(r"[:;]", text, 1)[0])  # names vary per kernel: `stride_cn`
    return re.sub(r"\s*\(.*", "", text).strip()  # the example in parentheses (`(offsets ...)`)


def report(out: Path) -> dict:
    manifest = json.loads((out / "manifest.json").read_text())
    stats: dict = {}
    for m in manifest["modules"]:
        rust = (out / m["rust"]).read_text() if (out / m["rust"]).is_file() else ""
        for k in m["kernels"]:
            s = stats.setdefault(k.get("frontend", "cutile-python"), {
                "kernels": 0, "entries": 0, "safe": 0, "outputs": collections.Counter(),
                "reasons": collections.Counter()})
            s["kernels"] += 1
            for e in k["entries"]:
                s["entries"] += 1
                if re.search(rf"pub fn {re.escape(e['name'])}\b", rust):
                    s["safe"] += 1
                for o in e["outputs"]:
                    s["outputs"][o["form"]] += 1
                    if o["form"] != "checked":
                        s["reasons"][reason_group(o.get("reason", ""))] += 1
    return stats


def markdown(stats: dict) -> str:
    lines = []
    for frontend, s in sorted(stats.items()):
        n = sum(s["outputs"].values())
        checked = s["outputs"]["checked"]
        lines += [f"### {frontend}: {s['kernels']} kernels, {s['entries']} entries", "",
                  f"- outputs that are checked `&mut Tensor` partitions: {checked} of {n}"
                  f" ({100 * checked / n:.0f}%)" if n else "- no written outputs",
                  f"- safe entries (`pub fn`, no raw pointer): {s['safe']} of {s['entries']}"
                  f" ({100 * s['safe'] / s['entries']:.0f}%)" if s["entries"] else "- no entries", ""]
        if s["reasons"]:
            lines += ["| outputs | why not checked |", "|---|---|"]
            lines += [f"| {c} | {r} |" for r, c in s["reasons"].most_common()]
            lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    args = ap.parse_args()
    print(markdown(report(args.out)))


if __name__ == "__main__":
    main()
