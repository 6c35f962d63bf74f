"""Runs TileGym's own operator functions on a GPU, once with cuTile Python and once routed to the Rust ports.

    tools/device_gpu_check.sh --script tools/tilegym_gpu_check.py --ports tg/python --results results/tilegym_h200

TileGym (installed unchanged, its autotuning off: TILEGYM_DISABLE_AUTOTUNE=1, so each call launches one fixed
configuration through `ct.launch`) is called through its operator functions (`tilegym.ops.cutile.*`). The same
call runs with the generated package's backend at "python" and at "cutile-rs" with `strict=True` (a launch of a
kernel without a current port raises: a case that passes ran every one of its launches on the ports). Outputs
are compared within per-dtype tolerances (relative Frobenius error); times are GPU times from CUDA events
around one operator call queued behind `torch.cuda._sleep` (host time stays out), the median of `--runs`
interleaved runs per backend, after warm-up. The host time per call (wall clock of the call, GPU idle) is
reported beside it. t_python / t_rust above 1: the ports are faster. Writes `<results>.md` and `<results>.json`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import sys
import time
import traceback
from pathlib import Path

os.environ.setdefault("TILEGYM_DISABLE_AUTOTUNE", "1")
TOLERANCE = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1e-2}
SLEEP_CYCLES = 400_000


def _cases(torch):
    """(operator, label, make) where make() returns a zero-argument call giving the output tensor(s)."""
    import importlib
    # the modules (tilegym.ops.cutile's namespace re-exports functions of the same names)
    attention_sink, bmm, matmul, rms_norm, silu_and_mul, softmax, swiglu = (
        importlib.import_module(f"tilegym.ops.cutile.{m}")
        for m in ("attention_sink", "bmm", "matmul", "rms_norm", "silu_and_mul", "softmax", "swiglu"))
    dev = "cuda"
    out = []
    for dt in (torch.float16, torch.bfloat16):
        n = str(dt).split(".")[1]
        for m, nn, k in ((4096, 4096, 4096), (8192, 8192, 8192)):
            for persistent in (False, True):
                def make(m=m, nn=nn, k=k, dt=dt, persistent=persistent):
                    a, b = torch.randn(m, k, device=dev, dtype=dt), torch.randn(k, nn, device=dev, dtype=dt)
                    return lambda: matmul.matmul(a, b, static_persistent=persistent)
                out.append(("matmul", f"{m}x{nn}x{k} {n} persistent={persistent}", make))
        for q, m, nn, k in ((16, 1024, 1024, 1024), (8, 2048, 2048, 2048)):
            for persistent in (False, True):
                def make(q=q, m=m, nn=nn, k=k, dt=dt, persistent=persistent):
                    a = torch.randn(q, m, k, device=dev, dtype=dt)
                    b = torch.randn(q, k, nn, device=dev, dtype=dt)
                    return lambda: bmm.bmm(a, b, static_persistent=persistent)
                out.append(("bmm", f"{q}x{m}x{nn}x{k} {n} persistent={persistent}", make))
        for rows, hidden in ((4096, 4096), (8192, 11008)):
            def make(rows=rows, hidden=hidden, dt=dt):
                x = torch.randn(rows, 2 * hidden, device=dev, dtype=dt)
                return lambda: silu_and_mul.silu_and_mul(x)
            out.append(("silu_and_mul", f"{rows}x{2 * hidden} {n}", make))

            def make_sw(rows=rows, hidden=hidden, dt=dt):
                a = torch.randn(rows, hidden, device=dev, dtype=dt, requires_grad=True)
                b = torch.randn(rows, hidden, device=dev, dtype=dt, requires_grad=True)
                g = torch.randn(rows, hidden, device=dev, dtype=dt)

                def call():
                    a.grad = b.grad = None
                    c = swiglu.swiglu(a, b)
                    c.backward(g)
                    return c, a.grad, b.grad
                return call
            out.append(("swiglu fwd+bwd", f"{rows}x{hidden} {n}", make_sw))
        for rows, cols in ((4096, 4096), (8192, 8192)):
            for tma in (False, True):
                def make(rows=rows, cols=cols, dt=dt, tma=tma):
                    x = torch.randn(rows, cols, device=dev, dtype=dt)
                    return lambda: softmax.softmax(x, use_tma=tma)
                out.append(("softmax", f"{rows}x{cols} {n} tma={tma}", make))
            for mode in (None, "static_persistent"):
                def make(rows=rows, cols=cols, dt=dt, mode=mode):
                    x = torch.randn(rows, cols, device=dev, dtype=dt)
                    w = torch.randn(cols, device=dev, dtype=dt)
                    return lambda: rms_norm.rms_norm(x, (cols,), w, 1e-6, mode=mode)
                out.append(("rms_norm", f"{rows}x{cols} {n} mode={mode}", make))
        for ctx, window in ((1024, None), (4096, None), (4096, 128)):
            def make(ctx=ctx, window=window, dt=dt):
                q = torch.randn(1, ctx, 8, 8, 64, device=dev, dtype=dt)
                k = torch.randn(1, ctx, 8, 64, device=dev, dtype=dt)
                v = torch.randn(1, ctx, 8, 64, device=dev, dtype=dt)
                sinks = torch.randn(64, device=dev, dtype=dt)
                return lambda: attention_sink.attention_sink(q, k, v, sinks, sm_scale=0.125, sliding_window=window)
            out.append(("attention_sink", f"1x{ctx}x8x8x64 {n} window={window}", make))
    return out


def _flat(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def _error(torch, ref, got) -> float:
    worst = 0.0
    for r, g in zip(_flat(ref), _flat(got)):
        r, g = r.detach().float(), g.detach().float()
        if r.shape != g.shape:
            return math.inf
        fin = torch.isfinite(r) & torch.isfinite(g)
        if not torch.equal(torch.isnan(r), torch.isnan(g)):
            return math.inf
        den = float(torch.linalg.vector_norm(r[fin])) or 1.0
        worst = max(worst, float(torch.linalg.vector_norm((r - g)[fin])) / den)
    return worst


def _gpu_ms(torch, call) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(SLEEP_CYCLES)
    start.record()
    call()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def _host_us(torch, call, n: int = 20) -> float:
    times = []
    for _ in range(n):
        torch.cuda.synchronize()
        t = time.perf_counter()
        call()
        times.append((time.perf_counter() - t) * 1e6)
    torch.cuda.synchronize()
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ports", required=True, help="the generated package's python/ folder (holds cutile_ports)")
    ap.add_argument("--results", required=True, help="write <results>.md and <results>.json")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--only", default="", help="run only operators whose name contains this")
    args = ap.parse_args()
    sys.path.insert(0, args.ports)
    import torch
    import tilegym  # noqa: F401  (its own backend registry)
    import cutile_ports as ports
    rows, failures = [], 0
    for op, label, make in _cases(torch):
        if args.only and args.only not in op:
            continue
        row = {"operator": op, "case": label}
        try:
            torch.manual_seed(0)
            call = make()
            ports.set_backend("python")
            ref = call()
            ports.set_backend("cutile-rs", strict=True)
            got = call()
            torch.cuda.synchronize()
            dtype = str(_flat(ref)[0].dtype).split(".")[1]
            row["error"] = _error(torch, ref, got)
            row["ok"] = row["error"] <= TOLERANCE.get(dtype, 1e-5)
            times = {"python": [], "rust": []}
            for name in ("python", "rust"):  # warm-up
                ports.set_backend("python" if name == "python" else "cutile-rs", strict=True)
                for _ in range(3):
                    call()
            for _ in range(args.runs):
                for name in ("python", "rust"):
                    ports.set_backend("python" if name == "python" else "cutile-rs", strict=True)
                    times[name].append(_gpu_ms(torch, call))
            for name in ("python", "rust"):
                ports.set_backend("python" if name == "python" else "cutile-rs", strict=True)
                row[f"host_us_{name}"] = _host_us(torch, call)
                row[f"t_{name}_ms"] = statistics.median(times[name])
            row["speed"] = row["t_python_ms"] / row["t_rust_ms"]
        except Exception as exc:  # a case that fails is reported, the others still run
            row["ok"] = False
            row["failure"] = f"{type(exc).__name__}: {exc}"[:600]
            traceback.print_exc()
        finally:
            ports.set_backend("python")
        failures += not row["ok"]
        print(json.dumps(row), flush=True)
        rows.append(row)
    per_op: dict[str, list[float]] = {}
    for r in rows:
        if r.get("ok") and "speed" in r:
            per_op.setdefault(r["operator"], []).append(r["speed"])
    geo = {op: math.exp(statistics.fmean(math.log(s) for s in v)) for op, v in per_op.items()}
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "python": platform.python_version(),
            "runs": args.runs, "cases": len(rows), "failed": failures, "geomean_by_operator": geo}
    Path(args.results + ".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    lines = [f"# TileGym's operators on the ports ({meta['gpu']})", "",
             f"- date: {meta['date']}; torch {meta['torch']}; {meta['runs']} interleaved runs per backend (median)",
             f"- cases: {len(rows)}, failed: {failures}", "",
             "| operator | geomean t_python/t_rust |", "|---|---|"]
    lines += [f"| {op} | {g:.3f} |" for op, g in sorted(geo.items())]
    lines += ["", "| operator | case | ok | rel. error | t_python ms | t_rust ms | speed | host µs python | host µs rust |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "failure" in r:
            lines.append(f"| {r['operator']} | {r['case']} | no | {r['failure'][:200]} | | | | | |")
        else:
            lines.append(f"| {r['operator']} | {r['case']} | {'yes' if r['ok'] else 'no'} | {r['error']:.2e} | "
                         f"{r['t_python_ms']:.4f} | {r['t_rust_ms']:.4f} | {r['speed']:.3f} | "
                         f"{r['host_us_python']:.1f} | {r['host_us_rust']:.1f} |")
    Path(args.results + ".md").write_text("\n".join(lines) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
