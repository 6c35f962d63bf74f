"""Prints the summary of a GPU-check results JSON, so that figures quoted elsewhere (README) can be checked.

    python3 tools/gpu_summary.py results/triton_real.json [results/h200.json ...]
    python3 tools/gpu_summary.py --merge results/triton_real_1.json results/triton_real_2.json   (a split run)

Reads the JSON of tools/triton_gpu_check.py (results with `status`: ok / FAIL / not ported) or of
tools/gpu_check.py (results with `correct`), every key read defensively (older files lack the rate keys).
Prints: cases correct, the geometric mean speed over kernels (each kernel's speed the geometric mean over its
cases; as each tool counts it: triton_gpu_check over correct cases only, gpu_check over every timed case), the
slowest kernel, and per kernel its cases, speed and rates: every numeric result key ending in `_tbps` or
`_tflops` (e.g. triton_tbps / rust_tbps), geometric mean over the kernel's cases. Where results carry `real`
(gpu_check's real-size configurations among the others), the same figures over those alone follow.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

RATE_SUFFIXES = ("_tbps", "_tflops")


def geomean(xs) -> float:
    xs = [x for x in xs if isinstance(x, (int, float)) and x == x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def flavour(doc: dict) -> str:
    rs = doc.get("results") or []
    return "triton_gpu_check" if any("status" in r for r in rs) else "gpu_check"


def rows(doc: dict) -> list[dict]:
    """One uniform record per result: kernel, ported, correct, speed (None where it does not count), rates."""
    kind, out = flavour(doc), []
    for r in doc.get("results") or []:
        if kind == "triton_gpu_check":
            kernel = f"{r.get('module', '?')}.{r.get('kernel', '?')}"
            ported, correct = r.get("status") != "not ported", r.get("status") == "ok"
            speed = r.get("speed") if correct else None
        else:
            kernel = f"{r.get('path', '?')}::{r.get('kernel', '?')}"
            ported, correct = True, bool(r.get("correct"))
            speed = r.get("speed")
        rates = {k: v for k, v in r.items() if k.endswith(RATE_SUFFIXES) and isinstance(v, (int, float))}
        out.append({"kernel": kernel, "ported": ported, "correct": correct, "speed": speed, "rates": rates})
    return out


def summarize(doc: dict) -> dict:
    rs = rows(doc)
    kernels: dict[str, list[dict]] = {}
    for r in rs:
        kernels.setdefault(r["kernel"], []).append(r)
    per_kernel = {}
    for k, group in kernels.items():
        rate_keys = sorted({key for r in group for key in r["rates"]})
        per_kernel[k] = {"cases": len(group), "correct": sum(r["correct"] for r in group),
                         "speed": geomean(r["speed"] for r in group if r["speed"] is not None),
                         "rates": {key: geomean(r["rates"].get(key) for r in group) for key in rate_keys}}
    timed = sorted((v["speed"], k) for k, v in per_kernel.items() if v["speed"] == v["speed"])
    rate_keys = sorted({key for v in per_kernel.values() for key in v["rates"]})
    return {"flavour": flavour(doc), "sizes": doc.get("sizes"), "gpu": (doc.get("versions") or {}).get("gpu"),
            "cases": len(rs), "ported": sum(r["ported"] for r in rs), "correct": sum(r["correct"] for r in rs),
            "kernels": len(per_kernel), "timed_kernels": len(timed),
            "geomean_speed": geomean(v for v, _ in timed),
            "slowest": {"kernel": timed[0][1], "speed": timed[0][0]} if timed else None,
            "rates": {key: geomean(v["rates"].get(key) for v in per_kernel.values()) for key in rate_keys},
            "per_kernel": per_kernel, "file_summary": doc.get("summary") or {},
            "real": summarize({**doc, "results": [r for r in doc["results"] if r.get("real")], "summary": {}})
            if any(r.get("real") for r in doc.get("results") or []) and not all(r.get("real") for r in doc["results"])
            else None}


def _num(x, spec=".3f") -> str:
    return "-" if x is None or x != x else format(x, spec)


def render(s: dict, name: str = "") -> str:
    head = ", ".join(str(x) for x in (s["flavour"], s["sizes"], s["gpu"]) if x)
    lines = [f"{name}: {head}" if name else head,
             f"cases correct: {s['correct']}/{s['ported']} ported ({s['cases']} cases, {s['kernels']} kernels)",
             f"geomean speed over {s['timed_kernels']} kernels: {_num(s['geomean_speed'])}"]
    if s["slowest"]:
        lines.append(f"slowest kernel: {s['slowest']['kernel']} {_num(s['slowest']['speed'])}")
    if s["rates"]:
        lines.append("geomean over kernels: " + ", ".join(f"{k} {_num(v, '.3f')}" for k, v in s["rates"].items()))
    own = s["file_summary"].get("geomean_speed")
    if isinstance(own, (int, float)):
        lines.append(f"(the file's own summary: geomean speed {_num(own)})")
    if s["real"]:
        r = s["real"]
        lines.append(f"real-size configurations: {r['correct']}/{r['cases']} correct, geomean speed over "
                     f"{r['timed_kernels']} kernels {_num(r['geomean_speed'])}"
                     + (f", slowest {r['slowest']['kernel']} {_num(r['slowest']['speed'])}" if r["slowest"] else "")
                     + "".join(f", {k} {_num(v)}" for k, v in r["rates"].items()))
    rate_keys = sorted({k for v in s["per_kernel"].values() for k in v["rates"]})
    lines += ["", "| " + " | ".join(["kernel", "correct", "speed"] + rate_keys) + " |",
              "|" + "---|" * (3 + len(rate_keys))]
    for k, v in sorted(s["per_kernel"].items(), key=lambda kv: (kv[1]["speed"] != kv[1]["speed"], kv[1]["speed"])):
        cells = [k, f"{v['correct']}/{v['cases']}", _num(v["speed"])] + [_num(v["rates"].get(r)) for r in rate_keys]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+", type=Path, help="a results JSON of triton_gpu_check.py or gpu_check.py")
    ap.add_argument("--merge", action="store_true", help="one summary of all the files' results (the parts of a "
                                                         "run split with triton_gpu_check.py --part)")
    opts = ap.parse_args(argv)
    docs = [(str(p), json.loads(p.read_text())) for p in opts.results]
    if opts.merge:
        docs = [(" + ".join(n for n, _ in docs), merge(d for _, d in docs))]
    for name, doc in docs:
        sys.stdout.write(render(summarize(doc), name) + "\n")
    return 0


def merge(docs) -> dict:
    """The results of several files as one file's (versions and sizes of the first; no file summary)."""
    docs = list(docs)
    return {"versions": docs[0].get("versions"), "sizes": docs[0].get("sizes"),
            "results": [r for d in docs for r in d.get("results") or []]}


if __name__ == "__main__":
    sys.exit(main())
