"""Runs every Triton corpus case on a GPU with Triton and with its cuTile Rust port, compares and times them.

    tools/device_gpu_check.sh --script tools/triton_gpu_check.py --crate rust --results results/triton_h200

The cases are those of tools/triton_reference.py (`cases()`: inputs with seeds, argument order, scalars,
constexprs, grid, outputs). Per case the inputs are built with the tool's own numpy generator and moved to
the GPU; the unchanged launch `kernel[grid](*args, **constexprs)` runs once with the backend "python" (real
Triton) and once with the backend "cutile-rs" (strict: routed to the Rust port by `cutile_ports`), each on a
fresh copy. An autotuned kernel is launched as the reference tool launches it: the function under the
Autotuner with the case's constexprs as the config, on both sides (plus the matching `triton.Config`'s
num_warps/num_stages, which only Triton reads). Outputs (in-place ones too) are compared by the relative
Frobenius error over finite values; NaN/inf positions must agree, integers exactly. Times: GPU time from
CUDA events around one launch queued behind `torch.cuda._sleep`, median of `--runs` interleaved runs after
warm-up, outputs restored from the pristine inputs before each run (outside the timed region); speed =
t_triton / t_rust (above 1: the port is faster). Writes `<results>.md` and `<results>.json`; exits 1 when
a case is incorrect (a kernel without a port is reported, not failed).
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import math
import platform
import statistics
import sys
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for _p in (ROOT, ROOT / "tools"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from triton_reference import cases, fp8_e4m3_decode, make_inputs  # noqa: E402 - numpy only

TOLERANCE = {"float32": 1e-4, "float16": 5e-3, "bfloat16": 2e-2, "float8_e4m3fn": 2.0 ** -4}
DOT_TOLERANCE = 2e-2  # kernels with tl.dot: Triton's fp32 dot is tf32 by default, the port's may be full f32
SLEEP_CYCLES = 1_000_000  # about 0.5 ms: covers the host time of either launch path
WARMUP = 3


# ------------------------------------------------------------------------------------------ pure parts

def module_file(c: dict) -> Path:
    return ROOT / (c["module"].replace(".", "/") + ".py")


def uses_dot(c: dict) -> bool:
    try:
        return "tl.dot(" in module_file(c).read_text()
    except OSError:
        return False


def tolerance(c: dict, out: str, dot: bool) -> float:
    """Relative Frobenius tolerance of one output: per dtype, looser for tl.dot kernels and where the case's
    own (atol, rtol) is looser; 0 for integers."""
    meta = c["outputs"][out]
    if meta["dtype"] not in TOLERANCE:
        return 0.0
    return max(TOLERANCE[meta["dtype"]], DOT_TOLERANCE if dot else 0.0, float(meta["tol"][1]))


def compare(ref: np.ndarray, got: np.ndarray, tol: float) -> tuple[bool, float, str]:
    """(ok, relative Frobenius error over finite values, why not ok)."""
    if ref.shape != got.shape:
        return False, math.inf, f"shapes differ {ref.shape} vs {got.shape}"
    if ref.dtype.kind in "iub":
        bad = int(np.count_nonzero(ref != got))
        return bad == 0, bad / max(ref.size, 1), f"{bad} of {ref.size} integers differ" if bad else ""
    a, b = ref.astype(np.float64), got.astype(np.float64)
    na, nb = np.isnan(a), np.isnan(b)
    if not np.array_equal(na, nb):
        return False, math.inf, f"NaN positions differ ({int(na.sum())} vs {int(nb.sum())} NaNs)"
    inf = np.isinf(a) | np.isinf(b)
    if not np.array_equal(a[inf], b[inf]):
        return False, math.inf, "infinities differ in position or sign"
    fin = ~(na | inf)
    diff, norm = float(np.linalg.norm(a[fin] - b[fin])), float(np.linalg.norm(a[fin]))
    err = diff / norm if norm > 0 else (0.0 if diff == 0 else math.inf)
    return err <= tol, err, "" if err <= tol else f"error {err:.2e} above {tol:.1e}"


def untouched(before: np.ndarray, after: np.ndarray) -> bool:
    return before.shape == after.shape and bool(np.all((before == after) | (np.isnan(before) & np.isnan(after))
                                                       if before.dtype.kind == "f" else before == after))


def launch_args(c: dict, tensors: dict, tl=None) -> tuple[list, dict]:
    """Positional arguments and constexpr keywords, as tools/triton_reference.py's `run_case` builds them."""
    args = [tensors[n] if n in tensors else c["scalars"][n] for n in c["args"]]
    consts = {k: (getattr(tl, v) if k.endswith("DTYPE") and tl is not None else v) for k, v in c["constexprs"].items()}
    return args, consts


def launchable(kernel, consts: dict) -> tuple[object, dict]:
    """The kernel object to launch and Triton launch options: an Autotuner is unwrapped (its config is the
    case's constexprs, as in the reference tool) and the matching config's num_warps/num_stages kept."""
    opts = {}
    while type(kernel).__name__ == "Autotuner":
        for cfg in kernel.configs:
            if cfg.kwargs and all(consts.get(k) == v for k, v in cfg.kwargs.items()):
                opts = {k: getattr(cfg, k) for k in ("num_warps", "num_stages") if getattr(cfg, k, None) is not None}
                break
        kernel = kernel.fn
    return kernel, opts


def main_dtype(c: dict) -> str:
    dts = [i["dtype"] for i in c["inputs"]]
    return next((d for d in dts if d.startswith(("float", "bfloat"))), dts[0])


def ported_kernels(crate: Path) -> dict:
    """(resolved source path, kernel name) -> the manifest's kernel record."""
    doc = json.loads((crate / "manifest.json").read_text())
    return {(str((crate / m["source"]).resolve()), k["name"]): k for m in doc["modules"] for k in m["kernels"]}


def diagnostics(report: Path | None) -> dict:
    """(source file name, kernel name) -> the diagnostics of `cutile-transpile --format json` output."""
    if report is None:
        return {}
    doc = json.loads(report.read_text())
    return {(Path(k["source"]).name, k["name"]): "; ".join(f"{d.get('code')}: {d.get('message')}"
                                                         for d in k.get("diagnostics", [])) or k.get("status", "")
            for k in doc.get("kernels", [])}


def geomean(xs) -> float:
    xs = [x for x in xs if x == x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


# ------------------------------------------------------------------------------------------ GPU parts

def gpu_inputs(torch, c: dict) -> dict:
    dtypes = {i["name"]: i["dtype"] for i in c["inputs"]}
    out = {}
    for n, a in make_inputs(c).items():
        t = torch.from_numpy(a).cuda()
        out[n] = t.view(torch.float8_e4m3fn) if dtypes[n] == "float8_e4m3fn" else t
    return out


def to_numpy(torch, t, dtype: str) -> np.ndarray:
    if dtype == "float8_e4m3fn":
        return fp8_e4m3_decode(t.view(torch.uint8).cpu().numpy())
    return (t.float() if t.dtype == torch.bfloat16 else t).cpu().numpy()


def run_case(torch, tl, ports, c: dict, runs: int) -> dict:
    import triton
    if hasattr(triton, "set_allocator"):  # device-side tensor descriptors need scratch memory (Triton >= 3.4)
        triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    kernel, opts = launchable(getattr(importlib.import_module(c["module"]), c["kernel"]), c["constexprs"])
    pristine = gpu_inputs(torch, c)
    sides = {"triton": "python", "rust": "cutile-rs"}
    tensors = {s: {n: t.clone() for n, t in pristine.items()} for s in sides}
    calls = {}
    for side in sides:
        args, consts = launch_args(c, tensors[side], tl)

        def launch(args=args, consts=consts):
            kernel[tuple(c["grid"])](*args, **consts, **opts)  # the unchanged launch, routed by the backend

        def reset(t=tensors[side]):
            for n in c["outputs"]:
                t[n].copy_(pristine[n])
        calls[side] = (launch, reset)
    res = {"outputs": {}}
    for side, backend in sides.items():  # correctness (and JIT compilation) first
        ports.set_backend(backend, strict=True)
        calls[side][0]()
    ports.set_backend("python")
    torch.cuda.synchronize()
    dot, ok, worst = uses_dot(c), True, None  # worst: (err / tol, err, tol)
    for n, meta in c["outputs"].items():
        ref, got = (to_numpy(torch, tensors[s][n], meta["dtype"]) for s in sides)
        tol = tolerance(c, n, dot)
        good, err, why = compare(ref, got, tol)
        if untouched(to_numpy(torch, pristine[n], meta["dtype"]), ref):
            good, why = False, "Triton left this output untouched"
        res["outputs"][n] = {"ok": good, "error": err, "tolerance": tol, **({"why": why} if why else {})}
        ok &= good
        ratio = err / tol if tol else (0.0 if err == 0 else math.inf)
        if worst is None or ratio > worst[0]:
            worst = (ratio, err, tol)
    res.update(ok=ok, error=worst[1], tolerance=worst[2],
               detail="; ".join(f"{n}: {o['why']}" for n, o in res["outputs"].items() if "why" in o))
    # timing: interleaved, each launch behind a GPU sleep, outputs restored before each run
    for _ in range(WARMUP):
        for side, (launch, reset) in calls.items():
            ports.set_backend(sides[side], strict=True)
            reset()
            launch()
    torch.cuda.synchronize()
    events = {s: [] for s in sides}
    host_us = {s: [] for s in sides}
    for i in range(runs):
        for side in (list(sides) if i % 2 == 0 else list(sides)[::-1]):
            launch, reset = calls[side]
            reset()
            ports.set_backend(sides[side], strict=True)
            torch.cuda._sleep(SLEEP_CYCLES)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            t0 = time.perf_counter()
            launch()
            host_us[side].append((time.perf_counter() - t0) * 1e6)
            end.record()
            events[side].append((start, end))
    torch.cuda.synchronize()
    for n, meta in c["outputs"].items():  # the timed launches repeat a checked layout (the fast path): same outputs
        ref, got = (to_numpy(torch, tensors[s][n], meta["dtype"]) for s in sides)
        good, err, why = compare(ref, got, tolerance(c, n, dot))
        if not good:
            res["outputs"][n].update(ok=False, after_timing={"error": err, "why": why})
            res.update(ok=False, detail=(res["detail"] + f"; {n} after the timed launches: {why}").strip("; "))
    us = {s: statistics.median(a.elapsed_time(b) for a, b in ev) * 1e3 for s, ev in events.items()}
    res.update(t_triton_us=us["triton"], t_rust_us=us["rust"], speed=us["triton"] / us["rust"],
               host_triton_us=statistics.median(host_us["triton"]), host_rust_us=statistics.median(host_us["rust"]))
    ports.set_backend("python")
    return res


# ------------------------------------------------------------------------------------------ report

def fmt(x, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def row(r: dict) -> str:
    status = r["status"] + (f": {r['detail']}" if r.get("detail") else "")
    status = status.replace("|", "\\|").replace("\n", " ")
    return (f"| {r['module']} | {r['kernel']} | {r['case']} | {r['dtype']} | {status} | {fmt(r.get('error'), '.2e')} "
            f"| {fmt(r.get('tolerance'), '.1e')} | {fmt(r.get('t_triton_us'), '.1f')} | {fmt(r.get('t_rust_us'), '.1f')} "
            f"| {fmt(r.get('speed'), '.3f')} |")


def summarize(results: list[dict]) -> dict:
    by_kernel: dict[str, list[float]] = {}
    for r in results:
        if r["status"] == "ok":  # the speed of a port that computes something else means nothing
            by_kernel.setdefault(f"{r['module']}.{r['kernel']}", []).append(r["speed"])
    speed = {k: geomean(v) for k, v in by_kernel.items()}
    timed = sorted((v, k) for k, v in speed.items() if v == v)
    return {"cases": len(results), "ported": sum(r["status"] != "not ported" for r in results),
            "correct": sum(r["status"] == "ok" for r in results),
            "failed": [r["id"] for r in results if r["status"] == "FAIL"],
            "not_ported": sorted({f"{r['module']}.{r['kernel']}" for r in results if r["status"] == "not ported"}),
            "geomean_speed": geomean(speed.values()), "kernel_speed": speed,
            "slowest_kernels": [{"kernel": k, "speed": v} for v, k in timed[:5]]}


def report(results: list[dict], summary: dict, versions: dict, runs: int) -> str:
    lines = ["# Triton GPU check: Triton vs the cuTile Rust ports", "",
             "Generated by `tools/triton_gpu_check.py`; speed = t_triton / t_rust (GPU time, median of "
             f"{runs} interleaved runs, CUDA events behind a GPU sleep, after warm-up); above 1: the port is faster.",
             ""] + [f"- {k}: {v}" for k, v in versions.items()]
    lines += ["", f"**{summary['correct']}/{summary['ported']} ported cases correct ({summary['cases']} cases, "
              f"{len(summary['not_ported'])} kernels not ported); geometric mean speed over "
              f"{len(summary['kernel_speed'])} kernels (their correct cases): {summary['geomean_speed']:.3f}.**", "",
              "| module | kernel | case | dtype | result | rel. error | tol | triton µs | rust µs | speed |",
              "|---|---|---|---|---|---|---|---|---|---|"] + [row(r) for r in results]
    lines += ["", "| kernel | speed (geomean over its cases) |", "|---|---|"]
    lines += [f"| {k} | {v:.3f} |" for k, v in sorted(summary["kernel_speed"].items(), key=lambda kv: kv[1])]
    if summary["not_ported"]:
        lines += ["", "Not ported: " + ", ".join(f"`{k}`" for k in summary["not_ported"])]
    return "\n".join(lines) + "\n"


def versions(torch, triton, crate: Path) -> dict:
    doc = json.loads((crate / "manifest.json").read_text())
    return {"date": datetime.datetime.now().isoformat(timespec="seconds"), "gpu": torch.cuda.get_device_name(0),
            "torch": torch.__version__, "triton": triton.__version__, "python": platform.python_version(),
            "cutile (Rust)": doc.get("cutile", "?"), "cutile-transpile": doc.get("tool", "?")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--crate", default="rust", help="the generated crate (with manifest.json and python/cutile_ports)")
    ap.add_argument("--results", default="results/triton_h200", help="output path without suffix")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("-k", default="", help="only cases whose id contains this")
    ap.add_argument("--report", type=Path, help="`cutile-transpile --format json` output: diagnostics of unported kernels")
    opts = ap.parse_args(argv)
    crate = Path(opts.crate).resolve()
    sys.path.insert(0, str(crate / "python"))
    import torch
    import triton
    import triton.language as tl
    import cutile_ports
    from cutile_ports import _runtime

    _runtime.load_library()  # fails early when the library is missing or stale
    cutile_ports.install()  # `kernel[grid]` now follows the backend setting, on both sides
    ported, diags = ported_kernels(crate), diagnostics(opts.report)
    todo = [c for c in cases() if opts.k in c["id"]]
    print(f"{len(todo)} cases, {opts.runs} timed runs each", flush=True)
    print(f"{'kernel':<28} {'case':<34} {'result':<10} {'error':>9} {'triton us':>10} "
          f"{'rust us':>9} {'speed':>7}", flush=True)
    results = []
    for c in todo:
        r = {"id": c["id"], "module": c["module"].rsplit(".", 1)[1], "kernel": c["kernel"], "case": c["case"],
             "dtype": main_dtype(c), "shapes": {i["name"]: i["shape"] for i in c["inputs"]}}
        rec = ported.get((str(module_file(c).resolve()), c["kernel"]))
        if rec is None or rec.get("abi") is False:
            why = diags.get((module_file(c).name, c["kernel"])) or ("not in manifest.json" if rec is None
                                                                   else "no C-ABI symbol")
            r.update(status="not ported", detail=why)
        else:
            try:
                r.update(run_case(torch, tl, cutile_ports, c, opts.runs))
                r["status"] = "ok" if r["ok"] else "FAIL"
            except Exception as e:  # noqa: BLE001 - one failing case must not stop the others
                tb = traceback.format_exc().strip().splitlines()
                r.update(status="FAIL", detail=f"{type(e).__name__}: {str(e)[:300]}", traceback=tb[-6:])
                try:
                    cutile_ports.set_backend("python")
                    torch.cuda.synchronize()
                except Exception:  # noqa: BLE001 - a sticky CUDA error: the next cases will report it
                    pass
        results.append(r)
        print(f"{r['kernel']:<28} {r['case']:<34} {r['status']:<10} {fmt(r.get('error'), '9.2e')} "
              f"{fmt(r.get('t_triton_us'), '10.1f')} {fmt(r.get('t_rust_us'), '9.1f')} {fmt(r.get('speed'), '7.3f')}"
              f"{'  ' + r['detail'] if r.get('detail') else ''}", flush=True)
    summary = summarize(results)
    info = versions(torch, triton, crate)
    out = Path(opts.results)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".md").write_text(report(results, summary, info, opts.runs))
    out.with_suffix(".json").write_text(json.dumps({"versions": info, "runs": opts.runs, "summary": summary,
                                                    "results": results}, indent=1, default=str) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "kernel_speed"}))
    return 1 if summary["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
