"""Runs every corpus kernel on a GPU with cuTile Python and with its Rust port, compares and times them.

    python3 tools/gpu_check.py --crate rust --results results/gpu_h200

For every case in tools/gpu_cases.py (each corpus kernel, at least two shapes, each dtype its port
takes) the same inputs go once through cuTile Python's `ct.launch` and once through the unchanged
`ct.launch` call with the backend set to "cutile-rs" (strict: a kernel without a current port fails).
Outputs are compared within per-dtype tolerances (the relative Frobenius error over finite values; NaN
positions must agree; integers exactly). Times are GPU times from CUDA events around one launch,
queued behind a short `torch.cuda._sleep` so host overhead stays out, after warm-up; the median of
`--runs` interleaved runs per backend (fewer, at least MIN_RUNS, where they would take more than
TIMING_BUDGET_S: f32 GEMM and attention launches take 0.1-0.3 s each). The speed ratio is
t_python / t_rust (above 1: Rust is faster).

Compilation and the correctness runs happen in `--workers` processes in parallel; then, after all of
them are done (a barrier), the processes time one after another (a lock), so nothing else runs on the GPU
while one measures. A worker frees each configuration once it is checked and builds it again (same seeds,
same inputs) for its timing, whose outputs are compared once more, so the GPU holds only the configurations
being checked or timed (tools/gpu_cases.py's docstring gives the bound). Every result carries the launch's
minimal traffic in bytes and, for matmul-like and attention kernels, its FLOPs, and the achieved TB/s and
TFLOP/s of both sides; configurations of a real-size shape are marked `real` and summarised apart.
Writes `<results>.md` and `<results>.json`.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import math
import multiprocessing as mp
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

TOLERANCE = {"f32": 1e-5, "f16": 2e-3, "bf16": 1e-2}  # by output dtype; same IR on both sides, so loose
SLEEP_CYCLES = 400_000  # about 0.2 ms at H200 clocks: the launch is queued before the GPU reaches it
TIMING_BUDGET_S = 2.0  # per configuration: slow launches (f32 GEMM, 0.1-0.3 s) get fewer runs ...
MIN_RUNS = 5  # ... but never fewer than this (their medians barely move)
COMPARE_CHUNK = 1 << 24  # elements per step of the output compare (gpu_cases.COMPARE_SCRATCH budgets it)


def throughput(nbytes: int, flops: int, ms: float) -> dict:
    """Achieved rates of one launch of `ms` milliseconds: TB/s of its minimal traffic (gpu_cases.launch_bytes)
    and, where the case counts FLOPs, TFLOP/s (10**12 per second, not 2**40)."""
    if not ms or ms <= 0 or ms != ms:
        return {}
    out = {"tbps": nbytes / ms / 1e9}
    if flops:
        out["tflops"] = flops / ms / 1e9
    return out


def timed_runs(runs: int, warm_s: float) -> int:
    """Interleaved runs per backend for a configuration whose python+rust pair of launches took `warm_s`
    seconds in the warm-up: `runs`, fewer where they would exceed TIMING_BUDGET_S, at least MIN_RUNS."""
    fit = int(TIMING_BUDGET_S / warm_s) if warm_s > 0 else runs
    return max(min(MIN_RUNS, runs), min(runs, fit))


def rate_cell(r: dict) -> str:
    """The table's throughput cell: TFLOP/s where FLOPs are counted, else TB/s, cuTile Python / Rust."""
    if "python_tflops" in r and "rust_tflops" in r:
        return f"{r['python_tflops']:.1f} / {r['rust_tflops']:.1f} TFLOP/s"
    if "python_tbps" in r and "rust_tbps" in r:
        return f"{r['python_tbps']:.2f} / {r['rust_tbps']:.2f} TB/s"
    return "-"


def _import_kernel_module(path: Path):
    name = "gpu_check_" + "_".join(path.relative_to(ROOT).with_suffix("").parts)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _configs(cases, ports, only: list[str] | None) -> list[dict]:
    out = []
    for ci, case in enumerate(cases):
        if only and case.kernel not in only:
            continue
        spec = ports.get((str((ROOT / case.path).resolve()), case.kernel))
        default = spec.dtypes if spec is not None and spec.dtypes else ("f32",)
        for shape in case.shapes:
            for dt in case.dtypes_of(shape, default):
                out.append({"case": ci, "path": case.path, "kernel": case.kernel, "shape": shape, "dtype": dt,
                            "real": shape in case.real})
    return out


def _compare(torch, ref, got, dtype: str) -> tuple[bool, float, str]:
    if ref.dtype.is_floating_point:
        # in chunks: f64 copies of a whole real-size output (and their masks) would take gigabytes per worker
        ref_flat, got_flat = ref.reshape(-1), got.reshape(-1)
        diff_sq = ref_sq = 0.0
        for start in range(0, ref_flat.numel(), COMPARE_CHUNK):
            a, b = ref_flat[start:start + COMPARE_CHUNK].double(), got_flat[start:start + COMPARE_CHUNK].double()
            nan_a, nan_b = torch.isnan(a), torch.isnan(b)
            if not torch.equal(nan_a, nan_b):
                return False, math.inf, (f"NaN positions differ ({int(torch.isnan(ref).sum())} vs "
                                         f"{int(torch.isnan(got).sum())})")
            fin = torch.isfinite(a) & torch.isfinite(b)
            if not torch.equal(a[~fin & ~nan_a], b[~fin & ~nan_b]):
                return False, math.inf, "infinities differ"
            a, b = a[fin], b[fin]
            diff_sq += float(torch.sum((a - b) ** 2))
            ref_sq += float(torch.sum(a * a))
        err = math.sqrt(diff_sq) / max(math.sqrt(ref_sq), 1e-30)  # relative Frobenius error over finite values
        tol = {torch.float16: TOLERANCE["f16"], torch.bfloat16: TOLERANCE["bf16"]}.get(ref.dtype, TOLERANCE["f32"])
        return err <= tol, err, ""
    same = torch.equal(ref, got)
    return same, 0.0 if same else float((ref != got).sum()), "" if same else "integer outputs differ"


def _worker(wid: int, configs: list[dict], crate: str, runs: int, lock, barrier, queue) -> None:
    import torch
    sys.path.insert(0, str(Path(crate) / "python"))
    import cuda.tile as ct
    import cutile_ports
    from gpu_cases import CASES, launch_bytes

    cutile_ports.install()  # ct.launch now follows the backend setting
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    stream = torch.cuda.current_stream()

    def build(cfg):  # two builds from generators seeded alike: identical inputs, every time it is called
        case = CASES[cfg["case"]]
        out = []
        for _ in range(2):
            gen = torch.Generator(device=device)
            gen.manual_seed(20261130)
            out.append(case.build(cfg["shape"], cfg["dtype"], torch, gen, device))
        return out

    def run(backend: str, kernel, launch) -> None:
        cutile_ports.set_backend(backend, strict=True)
        if launch.reset:
            launch.reset()
        ct.launch(stream, launch.grid, kernel, launch.args)

    def release() -> None:  # hand the freed blocks back to the driver: the other workers need the memory
        torch.cuda.synchronize()
        torch.cuda.empty_cache()

    pending = []
    for cfg in configs:
        case = CASES[cfg["case"]]
        res = dict(cfg)
        lp = lr = before = None
        try:
            kernel = getattr(_import_kernel_module(ROOT / case.path), case.kernel)
            lp, lr = build(cfg)
            res.update(bytes=launch_bytes(lp), flops=lp.flops)
            if lp.reset:
                lp.reset()
            before = {i: lp.args[i].clone() for i in (*lp.outputs, *lp.untouched)}
            run("python", kernel, lp)
            run("cutile-rs", kernel, lr)
            torch.cuda.synchronize()
            ok, worst, why = True, 0.0, []
            def unchanged(t, i):
                same = (before[i] == t) | (before[i].isnan() & t.isnan()) if t.dtype.is_floating_point \
                    else before[i] == t
                return bool(same.all())

            for i in lp.outputs:  # an output the reference never wrote would compare poison with poison
                if unchanged(lp.args[i], i):
                    ok = False
                    why.append(f"arg {i}: cuTile Python left this output untouched")
            for i in lp.untouched:  # arrays a variant must not write, in either run
                for backend, launch in (("python", lp), ("cutile-rs", lr)):
                    if not unchanged(launch.args[i], i):
                        ok = False
                        why.append(f"arg {i}: {backend} wrote an array this launch must leave untouched")
            for i in lp.outputs:
                good, err, msg = _compare(torch, lp.args[i], lr.args[i], cfg["dtype"])
                ok &= good
                worst = max(worst, err)
                if msg:
                    why.append(f"arg {i}: {msg}")
            res.update(correct=ok, rel_err=worst, detail="; ".join(why))
            pending.append((res, kernel))
        except Exception as e:  # noqa: BLE001 - one failing case must not stop the others
            res.update(correct=False, rel_err=math.inf, detail=f"{type(e).__name__}: {e}",
                       traceback=traceback.format_exc())
            queue.put(res)
        # nothing stays alive between configurations: the timing rebuilds them (same seeds, same inputs), so
        # the GPU holds a few configurations at a time instead of every build of the run
        del lp, lr, before
        release()
    try:  # no correctness launch of another worker may overlap the timing
        barrier.wait(timeout=420)
    except Exception:  # noqa: BLE001 - a worker died: time anyway (the report says which cases are missing)
        pass
    with lock:  # only one process times at a time
        for res, kernel in pending:
            lp = lr = None
            try:
                lp, lr = build(res)
                times = {"python": [], "cutile-rs": []}
                host = {"python": [], "cutile-rs": []}
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(3):
                    run("python", kernel, lp)
                    run("cutile-rs", kernel, lr)
                torch.cuda.synchronize()
                n_runs = timed_runs(runs, (time.perf_counter() - t0) / 3)
                res["runs"] = n_runs
                for _ in range(n_runs):
                    for backend, launch in (("python", lp), ("cutile-rs", lr)):
                        cutile_ports.set_backend(backend, strict=True)
                        if launch.reset:
                            launch.reset()
                        torch.cuda._sleep(SLEEP_CYCLES)
                        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        start.record(stream)
                        t0 = time.perf_counter()  # the host time of the launch alone (not the reset)
                        ct.launch(stream, launch.grid, kernel, launch.args)
                        host[backend].append((time.perf_counter() - t0) * 1e6)
                        end.record(stream)
                        times[backend].append((start, end))
                torch.cuda.synchronize()
                for i in lp.outputs:  # the timed launches repeat a checked layout (the fast path): same outputs
                    good, err, msg = _compare(torch, lp.args[i], lr.args[i], res["dtype"])
                    if not good:
                        res.update(correct=False, rel_err=max(res.get("rel_err", 0.0), err),
                                   detail=(res.get("detail", "") + f" arg {i} after the timed launches: {msg}").strip())
                ms = {b: statistics.median(s.elapsed_time(e) for s, e in v) for b, v in times.items()}
                res.update(python_ms=ms["python"], rust_ms=ms["cutile-rs"], speed=ms["python"] / ms["cutile-rs"],
                           python_host_us=statistics.median(host["python"]),
                           rust_host_us=statistics.median(host["cutile-rs"]))
                for side, backend in (("python", "python"), ("rust", "cutile-rs")):
                    rates = throughput(res["bytes"], res["flops"], ms[backend])
                    res.update({f"{side}_{unit}": v for unit, v in rates.items()})
            except Exception as e:  # noqa: BLE001
                res.update(detail=(res.get("detail", "") + f" timing failed: {type(e).__name__}: {e}").strip())
            queue.put(res)
            del lp, lr
            release()
    cutile_ports.set_backend("python")


def _versions(crate: Path) -> dict:
    import torch
    out = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
           "torch": torch.__version__, "python": platform.python_version()}
    try:
        out["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                       capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out["driver"] = "?"
    try:
        import importlib.metadata as md
        out["cuda-tile"] = md.version("cuda-tile")
    except Exception:  # noqa: BLE001
        out["cuda-tile"] = "?"
    tileiras = os.environ.get("CUTILE_TILEIRAS_PATH", "tileiras")
    try:
        v = subprocess.run([tileiras, "--version"], capture_output=True, text=True, timeout=30).stdout
        out["tileiras"] = next((l.strip() for l in v.splitlines() if "release" in l.lower()), v.strip()[-80:])
    except (OSError, subprocess.SubprocessError):
        out["tileiras"] = "?"
    manifest = json.loads((crate / "manifest.json").read_text())
    out["cutile (Rust)"] = manifest["cutile"]
    out["cutile-transpile"] = manifest["tool"]
    return out


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def _report(results: list[dict], versions: dict, runs: int) -> tuple[str, dict]:
    by_kernel: dict[str, list[dict]] = {}
    for r in results:
        by_kernel.setdefault(f"{r['path']}::{r['kernel']}", []).append(r)
    kernel_speed = {k: _geomean([r["speed"] for r in v if "speed" in r]) for k, v in by_kernel.items()}
    all_correct = all(r.get("correct") for r in results)
    finite = [s for s in kernel_speed.values() if s == s]
    # the same over the real-size configurations only (where launch overhead and a warm L2 do not count)
    real_speed = {k: _geomean([r["speed"] for r in v if "speed" in r and r.get("real")]) for k, v in by_kernel.items()}
    real_finite = [s for s in real_speed.values() if s == s]
    summary = {"configs": len(results), "correct": sum(bool(r.get("correct")) for r in results),
               "kernels": len(by_kernel), "geomean_speed": _geomean(finite),
               "min_kernel_speed": min(finite) if finite else float("nan"), "all_correct": all_correct,
               "real_configs": sum(bool(r.get("real")) for r in results), "real_kernels": len(real_finite),
               "real_geomean_speed": _geomean(real_finite),
               "min_real_kernel_speed": min(real_finite) if real_finite else float("nan")}
    lines = ["# GPU check: cuTile Python vs the cuTile Rust ports", "",
             "Generated by `tools/gpu_check.py`; speed = t_python / t_rust (GPU time, median of "
             f"{runs} interleaved runs each, CUDA events, after warm-up; fewer, at least {min(MIN_RUNS, runs)}, "
             f"where {runs} would take more than {TIMING_BUDGET_S:g} s, as for f32 GEMMs: `runs` in the JSON); "
             "above 1 means the port is faster. "
             "Throughput: TFLOP/s for matmul-like and attention kernels (useful FLOPs: 2 per multiply-add, "
             "masked attention pairs left out), else TB/s of the minimal traffic (every tensor argument's size "
             "once: inputs read once, outputs written once; `gpu_cases.launch_bytes`). Real: R marks the real-size "
             "shapes (`gpu_cases.py`: several times the 60 MB L2 moved, or about 100 us or more).", ""]
    lines += [f"- {k}: {v}" for k, v in versions.items()]
    lines += ["", f"**{summary['correct']}/{summary['configs']} configurations correct; "
                  f"geometric mean speed over {summary['kernels']} kernels: {summary['geomean_speed']:.3f}; "
                  f"slowest kernel: {summary['min_kernel_speed']:.3f}. At real size ({summary['real_configs']} "
                  f"configurations): geometric mean speed over {summary['real_kernels']} kernels "
                  f"{summary['real_geomean_speed']:.3f}; slowest kernel: {summary['min_real_kernel_speed']:.3f}.**", "",
              "| kernel | shape | real | dtype | correct | rel. error | python ms | rust ms | speed | "
              "throughput py / rs | host µs py / rs |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for k, rows in by_kernel.items():
        for r in rows:
            speed = f"{r['speed']:.3f}" if "speed" in r else "-"
            py = f"{r['python_ms']:.4f}" if "python_ms" in r else "-"
            rs = f"{r['rust_ms']:.4f}" if "rust_ms" in r else "-"
            hostt = f"{r['python_host_us']:.0f} / {r['rust_host_us']:.0f}" if "rust_host_us" in r else "-"
            ok = "yes" if r.get("correct") else f"**NO** {r.get('detail', '')}"
            real = "R" if r.get("real") else ""
            lines.append(f"| {r['kernel']} | {r['shape']} | {real} | {r['dtype']} | {ok} | {r.get('rel_err', 0):.2e} | "
                         f"{py} | {rs} | {speed} | {rate_cell(r)} | {hostt} |")
    lines += ["", "| kernel (file) | speed (geomean over its configurations) | speed at real size |", "|---|---|---|"]
    lines += [f"| {k} | {v:.3f} | {real_speed[k]:.3f} |" for k, v in sorted(kernel_speed.items())]
    return "\n".join(lines) + "\n", summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--crate", default=str(ROOT / "rust"), help="the generated crate (with python/cutile_ports)")
    ap.add_argument("--results", default=str(ROOT / "results" / "gpu_h200"), help="output path without suffix")
    ap.add_argument("--only", nargs="*", help="kernel names to run")
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--workers", type=int, default=8)
    args = ap.parse_args()
    crate = Path(args.crate).resolve()
    sys.path.insert(0, str(crate / "python"))
    import cutile_ports  # noqa: F401 - registers the ports
    from cutile_ports import _runtime
    from gpu_cases import CASES

    _runtime.load_library()  # fails early with a clear message if the library is missing or stale
    configs = _configs(CASES, _runtime.REGISTRY, args.only)
    print(f"{len(configs)} configurations of {len({c['kernel'] for c in configs})} kernels, "
          f"{args.workers} workers", flush=True)
    ctx = mp.get_context("spawn")
    lock, queue = ctx.Lock(), ctx.Queue()
    # spread each kernel's configurations over one worker (one JIT cache), kernels round-robin
    kernels = sorted({c["kernel"] for c in configs})
    shards = [[c for c in configs if kernels.index(c["kernel"]) % args.workers == w] for w in range(args.workers)]
    shards = [s for s in shards if s]
    barrier = ctx.Barrier(len(shards))
    procs = [ctx.Process(target=_worker, args=(w, s, str(crate), args.runs, lock, barrier, queue)) for w, s in
             enumerate(shards)]
    for p in procs:
        p.start()
    results = []
    while len(results) < len(configs):
        try:
            r = queue.get(timeout=30)
        except Exception:  # noqa: BLE001 - a worker died: stop waiting once none is alive
            if not any(p.is_alive() for p in procs):
                break
            continue
        results.append(r)
        mark = "ok" if r.get("correct") else "FAIL"
        print(f"[{len(results)}/{len(configs)}] {r['kernel']} {r['shape']} {r['dtype']}: {mark} "
              f"err={r.get('rel_err', 0):.1e} speed={r.get('speed', float('nan')):.3f} {r.get('detail', '')}",
              flush=True)
    for p in procs:
        p.join(timeout=60)
    done = {(r["kernel"], r["shape"], r["dtype"]) for r in results}
    for c in configs:
        if (c["kernel"], c["shape"], c["dtype"]) not in done:
            results.append({**c, "correct": False, "rel_err": math.inf, "detail": "worker died before this case"})
    order = {(c["kernel"], c["shape"], c["dtype"]): i for i, c in enumerate(configs)}
    results.sort(key=lambda r: order[(r["kernel"], r["shape"], r["dtype"])])
    versions = _versions(crate)
    text, summary = _report(results, versions, args.runs)
    out = Path(args.results)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".md").write_text(text)
    out.with_suffix(".json").write_text(json.dumps({"versions": versions, "summary": summary, "results": results},
                                                   indent=1, default=str) + "\n")
    print(text.split("\n| kernel |")[0])
    print(json.dumps(summary))
    return 0 if summary["all_correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
