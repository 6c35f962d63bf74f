"""Coverage of a kernel library: how many kernels translate, compile and verify, and what blocks the rest.

  python3 tools/coverage.py LIB [LIB ...] [--verify] [--json FILE] [--out DIR]

Runs `cutile-transpile LIB -o DIR --format json` (with `--verify --compile-check` when asked) once per
library and prints, per library: kernels found / translated / compiling / equivalent / different /
not verified, the blockers ranked by the kernels they block (code and the message's first words; a kernel
counts once per distinct blocker it reports), the verification failures ranked the same way, and the time.
Verification imports each module, so a library whose host code needs packages that are not installed
(torch, triton) reports those kernels not verified; the figure then says so.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _blocker(d: dict) -> str:
    msg = re.sub(r"`[^`]*`", "`…`", d["message"].split("\n")[0])
    return f"{d['code']}: {msg[:90]}"


def measure(lib: Path, out: Path, verify: bool) -> dict:
    cmd = [sys.executable, "-m", "transpiler.cli", str(lib), "-o", str(out), "--format", "json", "-q"]
    cmd += ["--verify", "--compile-check"] if verify else ["--no-compile-check"]
    t0 = time.monotonic()
    res = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - t0
    try:
        doc = json.loads(res.stdout)
    except json.JSONDecodeError:
        return {"library": str(lib), "error": (res.stderr or res.stdout)[-2000:], "seconds": seconds}
    if doc.get("error"):  # the run ended early (an environment or internal error): say so, with its stderr
        return {"library": str(lib), "error": f"{doc['error']}\n{res.stderr[-2000:]}", "seconds": seconds}
    kernels = doc.get("kernels", [])
    s = doc.get("summary", {})
    blockers: collections.Counter = collections.Counter()
    failures: collections.Counter = collections.Counter()
    for k in kernels:
        errs = [d for d in k["diagnostics"] if d["severity"] == "error"]
        if k["status"] not in ("translated", "fallback"):
            for b in sorted({_blocker(d) for d in errs}):
                blockers[b] += 1
        elif verify and k.get("verify") != "equivalent":
            for b in sorted({_blocker(d) for d in errs if d["code"] in ("CT200", "CT201")}):
                failures[b] += 1
    compiling = sum(1 for k in kernels if k["status"] == "translated"
                    and not any(d["code"] == "CT007" for d in k["diagnostics"]))
    return {"library": str(lib), "kernels": len(kernels), "translated": s.get("translated", 0),
            # completed by the LLM fallback from answers cached in DIR (proved; never counted as rule output)
            "fallback": s.get("fallback", 0),
            "compiling": compiling, "equivalent": s.get("equivalent", 0), "different": s.get("different", 0),
            "not_verified": sum(1 for k in kernels if k["status"] == "translated" and k.get("verify") == "not_verified"),
            "verified": verify, "blockers": blockers.most_common(), "verify_failures": failures.most_common(),
            "per_kernel": [{"source": k["source"], "name": k["name"], "status": k["status"],
                            "verify": k.get("verify"),
                            "errors": [_blocker(d) for d in k["diagnostics"] if d["severity"] == "error"]}
                           for k in kernels],
            "seconds": round(seconds, 1)}


def report(m: dict) -> str:
    if "error" in m:
        return f"## {m['library']}\n\nthe run failed after {m['seconds']:.1f} s:\n{m['error']}\n"
    n = m["kernels"] or 1
    pct = lambda x: f"{x} ({100 * x / n:.0f}%)"  # noqa: E731
    lines = [f"## {m['library']}", "",
             f"- kernels found: {m['kernels']}",
             f"- translated: {pct(m['translated'])}",
             *([f"- completed by the LLM fallback: {pct(m['fallback'])}"] if m.get("fallback") else []),
             f"- compiling: {pct(m['compiling'])}" + ("" if m["verified"] else " (not checked: run with --verify)")]
    if m["verified"]:
        lines += [f"- equivalent: {pct(m['equivalent'])}", f"- different: {m['different']}",
                  f"- not verified (translated): {m['not_verified']}"]
    lines += [f"- time: {m['seconds']} s", "", "| kernels blocked | blocker |", "|---|---|"]
    lines += [f"| {c} | {b} |" for b, c in m["blockers"]] or ["| 0 | - |"]
    if m["verified"] and m["verify_failures"]:
        lines += ["", "| kernels | verification result |", "|---|---|"]
        lines += [f"| {c} | {b} |" for b, c in m["verify_failures"]]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("libs", nargs="+", type=Path)
    ap.add_argument("--verify", action="store_true", help="also compile-check and verify (slow: builds the crate)")
    ap.add_argument("--json", type=Path, help="write the figures as JSON here")
    ap.add_argument("--out", type=Path, help="output folder (default: a temporary one per library)")
    a = ap.parse_args(argv)
    results = []
    for lib in a.libs:
        with tempfile.TemporaryDirectory(prefix="cutile-coverage-") as tmp:
            out = (a.out / lib.name) if a.out else Path(tmp) / "out"
            m = measure(lib, out, a.verify)
        results.append(m)
        print(report(m))
    if a.json:
        a.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
