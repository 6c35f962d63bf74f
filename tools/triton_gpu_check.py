"""Runs every Triton corpus case on a GPU with Triton and with its cuTile Rust port, compares and times them.

    tools/device_gpu_check.sh --script tools/triton_gpu_check.py --crate rust --results results/triton_h200
    tools/device_gpu_check.sh --script tools/triton_gpu_check.py --crate rust --results results/triton_real --sizes real

The cases are those of tools/triton_reference.py (`--sizes tiny`, the default: `cases()`, inputs with seeds,
argument order, scalars, constexprs, grid, outputs) or of tools/triton_real_cases.py (`--sizes real`:
`real_cases()`, the same kernels at the sizes training and serving code launches). Tiny cases build their inputs
with the reference tool's numpy generator and move them to the GPU; real cases build them on the GPU with torch
(same init kinds, a seeded torch generator; numpy on the host is too slow at these sizes); both sides get copies of
one pristine set. The unchanged launch `kernel[grid](*args, **constexprs)` runs once with the backend "python" (real
Triton) and once with the backend "cutile-rs" (strict: routed to the Rust port by `cutile_ports`), each on a fresh
copy. An autotuned kernel is launched as the reference tool launches it: the function under the Autotuner with the
case's constexprs as the config, on both sides (plus the matching `triton.Config`'s num_warps/num_stages, which only
Triton reads; a case's `options` likewise). Outputs (in-place ones too) are compared by the relative Frobenius error
over finite values; NaN/inf positions must agree, integers exactly (tiny cases on the host with numpy, real ones on
the GPU with torch: the same measure). Times: GPU time from CUDA events around one launch queued behind
`torch.cuda._sleep`, median of `--runs` interleaved runs after warm-up, outputs restored from the pristine inputs
before each run (outside the timed region); speed = t_triton / t_rust (above 1: the port is faster). Rates: TB/s
from tools/throughput.py's minimal-traffic byte count, TFLOP/s for tl.dot kernels (2 M N K; attention 4 B H S S D,
halved when causal). Writes `<results>.md` and `<results>.json` (tools/gpu_summary.py prints its summary); exits 1
when a case is incorrect (a kernel without a port is reported, not failed).
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

from throughput import case_bytes, case_flops, fmt_rate, rates  # noqa: E402 - pure
from triton_reference import INT_POISON, cases, fp8_e4m3_decode, make_inputs  # noqa: E402 - numpy only
from triton_real_cases import real_cases  # noqa: E402 - pure

TOLERANCE = {"float32": 1e-4, "float16": 5e-3, "bfloat16": 2e-2, "float8_e4m3fn": 2.0 ** -4}
DOT_TOLERANCE = 2e-2  # kernels with tl.dot: Triton's fp32 dot is tf32 by default, the port's may be full f32
SLEEP_CYCLES = 1_000_000  # about 0.5 ms: covers the host time of either launch path
WARMUP = 3
SIZES = {"tiny": cases, "real": real_cases}
DEFAULT_RUNS = {"tiny": 20, "real": 10}  # a real launch runs 0.1-5 ms: fewer runs give a steady median
CHUNK = 1 << 24  # elements per float64 slice of the GPU compare (128 MiB)


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


def launch_options(c: dict, autotuned: dict) -> dict:
    """Triton launch options: the autotune config's, then the case's own (`options`, real cases)."""
    return {**autotuned, **c.get("options", {})}


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


def select(cs: list[dict], k: str, part: str) -> list[dict]:
    """The cases whose id contains k, then part "I/N" of them: every N-th from the I-th (1-based)."""
    i, n = (int(x) for x in part.split("/"))
    if not 1 <= i <= n:
        raise ValueError(f"--part {part}: want I/N with 1 <= I <= N")
    return [c for c in cs if k in c["id"]][i - 1::n]


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


TORCH_DTYPES = {"float32": "float32", "float16": "float16", "bfloat16": "bfloat16", "int32": "int32",
                "int64": "int64", "int8": "int8", "uint8": "uint8", "int16": "int16", "bool": "bool",
                "float8_e4m3fn": "float8_e4m3fn"}


def torch_inputs(torch, c: dict) -> dict:
    """The case's inputs built on the GPU with torch (real sizes): the init kinds of make_inputs, drawn from a
    torch generator seeded with the case's seed, in spec order. Not the numpy draws: both sides get copies of
    this one set, and real cases compare Triton with the port, not with a numpy reference."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(c["seed"])
    dev, f32, out = "cuda", torch.float32, {}
    for spec in c["inputs"]:
        shape, dt, init = tuple(spec["shape"]), getattr(torch, TORCH_DTYPES[spec["dtype"]]), spec["init"]
        kind, is_int = init["kind"], spec["dtype"].startswith(("int", "uint"))
        if kind == "randn":
            a = torch.randn(shape, generator=gen, device=dev, dtype=f32) * init.get("scale", 1.0)
        elif kind == "uniform":
            a = torch.rand(shape, generator=gen, device=dev, dtype=f32) * (init["hi"] - init["lo"]) + init["lo"]
        elif kind == "randint":
            a = torch.randint(init["lo"], init["hi"], shape, generator=gen, device=dev, dtype=torch.int64)
            if "ignore" in init:
                a.view(-1)[::init["every"]] = init["ignore"]
        elif kind == "zeros" or kind == "addresses":  # addresses: filled per side (fill_address_tables)
            a = torch.zeros(shape, device=dev, dtype=torch.int64 if is_int else f32)
        elif kind == "full":
            a = torch.full(shape, init["value"], device=dev, dtype=f32)
        elif kind == "poison":
            a = torch.full(shape, INT_POISON if is_int else float("nan"), device=dev,
                           dtype=torch.int64 if is_int else f32)
        elif kind == "given":
            a = torch.tensor(init["values"], device=dev).reshape(shape)
        elif kind == "log_softmax":
            a = torch.log_softmax(torch.randn(shape, generator=gen, device=dev, dtype=f32) * init.get("scale", 1.0), -1)
        elif kind == "rows_of_randperm":
            perm = torch.randperm(init["size"], generator=gen, device=dev)
            a = perm.repeat(-(-math.prod(shape) // perm.numel()))[:math.prod(shape)].reshape(shape)
        elif kind == "bincount":
            a = torch.bincount(out[init["of"]].reshape(-1).long(), minlength=init["minlength"])
        elif kind == "moe_sorted_ids":
            a = moe_sorted_ids_torch(torch, out[init["of"]].reshape(-1).long(), shape[0], init["n_experts"],
                                     init["block_size"])
        else:
            raise ValueError(f"unknown init kind {kind!r}")
        out[spec["name"]] = a.to(dt).contiguous()
    return out


def moe_sorted_ids_torch(torch, ids, length: int, n_experts: int, block_size: int):
    """triton_reference._moe_sorted on the GPU: slot ids grouped by expert (stable), each expert's segment padded
    to a multiple of block_size with the padding id n_slots, then padding to `length`."""
    counts = torch.bincount(ids, minlength=n_experts)
    padded = (counts + block_size - 1) // block_size * block_size
    starts = torch.cumsum(padded, 0) - padded
    order = torch.argsort(ids, stable=True)
    first_of_expert = torch.cumsum(counts, 0) - counts
    rank = torch.arange(ids.numel(), device=ids.device) - first_of_expert[ids[order]]
    a = torch.full((length,), ids.numel(), device=ids.device, dtype=torch.int64)
    a[starts[ids[order]] + rank] = order
    return a


def fill_address_tables(c: dict, tensors: dict) -> None:
    """Each `addresses` input set to the data_ptr() of the tensors it lists: of this side's copies."""
    for spec in c["inputs"]:
        if spec["init"]["kind"] == "addresses":
            t = tensors[spec["name"]]
            for i, n in enumerate(spec["init"]["of"]):
                t.view(-1)[i] = tensors[n].data_ptr()


def descriptors(c: dict, tensors: dict) -> dict:
    """The case's host tensor descriptors over this side's tensors (TensorDescriptor.from_tensor)."""
    if not c.get("descriptors"):
        return {}
    from triton.tools.tensor_descriptor import TensorDescriptor
    return {n: TensorDescriptor.from_tensor(tensors[d["base"]], list(d["block"])) for n, d in c["descriptors"].items()}


def as_float(torch, t):
    return t.float() if t.dtype in (torch.float16, torch.bfloat16, torch.float8_e4m3fn) else t


def compare_gpu(torch, ref, got, tol: float) -> tuple[bool, float, str]:
    """`compare` on the GPU (real sizes): the same measure, float64 sums over slices of CHUNK elements."""
    if tuple(ref.shape) != tuple(got.shape):
        return False, math.inf, f"shapes differ {tuple(ref.shape)} vs {tuple(got.shape)}"
    a, b = ref.reshape(-1), got.reshape(-1)
    if not (a.is_floating_point() or a.dtype == torch.float8_e4m3fn):
        bad = int((a != b).sum())
        return bad == 0, bad / max(a.numel(), 1), f"{bad} of {a.numel()} integers differ" if bad else ""
    diff2 = norm2 = 0.0
    for i in range(0, a.numel(), CHUNK):
        x, y = as_float(torch, a[i:i + CHUNK]).double(), as_float(torch, b[i:i + CHUNK]).double()
        na, nb = torch.isnan(x), torch.isnan(y)
        if not torch.equal(na, nb):
            return False, math.inf, f"NaN positions differ ({int(na.sum())} vs {int(nb.sum())} NaNs in a slice)"
        inf = torch.isinf(x) | torch.isinf(y)
        if not torch.equal(x[inf], y[inf]):
            return False, math.inf, "infinities differ in position or sign"
        fin = ~(na | inf)
        diff2 += float(torch.where(fin, x - y, 0.0).square().sum())
        norm2 += float(torch.where(fin, x, 0.0).square().sum())
    diff, norm = math.sqrt(diff2), math.sqrt(norm2)
    err = diff / norm if norm > 0 else (0.0 if diff == 0 else math.inf)
    return err <= tol, err, "" if err <= tol else f"error {err:.2e} above {tol:.1e}"


def untouched_gpu(torch, before, after) -> bool:
    if tuple(before.shape) != tuple(after.shape):
        return False
    a, b = as_float(torch, before), as_float(torch, after)
    same = a == b
    if a.is_floating_point():
        same |= torch.isnan(a) & torch.isnan(b)
    return bool(same.all())


def to_numpy(torch, t, dtype: str) -> np.ndarray:
    if dtype == "float8_e4m3fn":
        return fp8_e4m3_decode(t.view(torch.uint8).cpu().numpy())
    return (t.float() if t.dtype == torch.bfloat16 else t).cpu().numpy()


def run_case(torch, tl, ports, c: dict, runs: int, on_gpu: bool = False) -> dict:
    """One case on both sides; `on_gpu` (real sizes): inputs built with torch and outputs compared on the GPU."""
    import triton
    if hasattr(triton, "set_allocator"):  # device-side tensor descriptors need scratch memory (Triton >= 3.4)
        triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    kernel, opts = launchable(getattr(importlib.import_module(c["module"]), c["kernel"]), c["constexprs"])
    opts = launch_options(c, opts)
    pristine = torch_inputs(torch, c) if on_gpu else gpu_inputs(torch, c)
    sides = {"triton": "python", "rust": "cutile-rs"}
    tensors = {s: {n: t.clone() for n, t in pristine.items()} for s in sides}
    calls = {}
    for side in sides:
        fill_address_tables(c, tensors[side])
        args, consts = launch_args(c, {**tensors[side], **descriptors(c, tensors[side])}, tl)

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
        tol = tolerance(c, n, dot)
        if on_gpu:
            good, err, why = compare_gpu(torch, tensors["triton"][n], tensors["rust"][n], tol)
            left = untouched_gpu(torch, pristine[n], tensors["triton"][n])
        else:
            ref, got = (to_numpy(torch, tensors[s][n], meta["dtype"]) for s in sides)
            good, err, why = compare(ref, got, tol)
            left = untouched(to_numpy(torch, pristine[n], meta["dtype"]), ref)
        if meta.get("untouched"):  # every store of this launch is masked off: both sides must leave it as it was
            kept = untouched_gpu(torch, pristine[n], tensors["rust"][n]) if on_gpu else \
                untouched(to_numpy(torch, pristine[n], meta["dtype"]), to_numpy(torch, tensors["rust"][n], meta["dtype"]))
            good, why = left and kept, "" if left and kept else \
                "the case expects this output untouched: " + ("the port wrote it" if left else "Triton wrote it")
        elif left:
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
        if on_gpu:
            good, err, why = compare_gpu(torch, tensors["triton"][n], tensors["rust"][n], tolerance(c, n, dot))
        else:
            ref, got = (to_numpy(torch, tensors[s][n], meta["dtype"]) for s in sides)
            good, err, why = compare(ref, got, tolerance(c, n, dot))
        if not good:
            res["outputs"][n].update(ok=False, after_timing={"error": err, "why": why})
            res.update(ok=False, detail=(res["detail"] + f"; {n} after the timed launches: {why}").strip("; "))
    us = {s: statistics.median(a.elapsed_time(b) for a, b in ev) * 1e3 for s, ev in events.items()}
    res.update(t_triton_us=us["triton"], t_rust_us=us["rust"], speed=us["triton"] / us["rust"],
               host_triton_us=statistics.median(host_us["triton"]), host_rust_us=statistics.median(host_us["rust"]),
               **side_rates(c, us["triton"], us["rust"]))
    ports.set_backend("python")
    del tensors, pristine, calls
    if on_gpu:
        torch.cuda.empty_cache()  # the next real case needs the memory back
    return res


def side_rates(c: dict, t_triton_us: float, t_rust_us: float) -> dict:
    """triton_tbps / rust_tbps (and _tflops for tl.dot kernels) of the two timings."""
    out = {}
    for side, t in (("triton", t_triton_us), ("rust", t_rust_us)):
        r = rates(c, t)
        out[f"{side}_tbps"] = r["tbps"]
        if r["tflops"] is not None:
            out[f"{side}_tflops"] = r["tflops"]
    return out


# ------------------------------------------------------------------------------------------ report

def fmt(x, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def row(r: dict) -> str:
    status = r["status"] + (f": {r['detail']}" if r.get("detail") else "")
    status = status.replace("|", "\\|").replace("\n", " ")
    return (f"| {r['module']} | {r['kernel']} | {r['case']} | {r['dtype']} | {status} | {fmt(r.get('error'), '.2e')} "
            f"| {fmt(r.get('tolerance'), '.1e')} | {fmt(r.get('t_triton_us'), '.1f')} | {fmt(r.get('t_rust_us'), '.1f')} "
            f"| {fmt(r.get('speed'), '.3f')} | {fmt_rate(r.get('triton_tbps'), r.get('triton_tflops'))} "
            f"| {fmt_rate(r.get('rust_tbps'), r.get('rust_tflops'))} |")


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
              "| module | kernel | case | dtype | result | rel. error | tol | triton µs | rust µs | speed "
              "| triton rate | rust rate |", "|---|---|---|---|---|---|---|---|---|---|---|---|"] + [row(r) for r in results]
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


def write_results(out: Path, results: list[dict], info: dict, opts) -> dict:
    """`<out>.md` and `<out>.json` of the results so far; returns their summary."""
    summary = summarize(results)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".md").write_text(report(results, summary, info, opts.runs))
    out.with_suffix(".json").write_text(json.dumps({"versions": info, "runs": opts.runs, "sizes": opts.sizes,
                                                    "part": opts.part, "summary": summary, "results": results},
                                                   indent=1, default=str) + "\n")
    return summary


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--crate", default="rust", help="the generated crate (with manifest.json and python/cutile_ports)")
    ap.add_argument("--results", default="results/triton_h200", help="output path without suffix")
    ap.add_argument("--sizes", choices=sorted(SIZES), default="tiny",
                    help="tiny: tools/triton_reference.py's cases (launch-bound, checked in CI); real: "
                         "tools/triton_real_cases.py's (the sizes models launch; Triton vs the port only)")
    ap.add_argument("--runs", type=int, default=None, help="timed runs per case (default: 20 tiny, 10 real)")
    ap.add_argument("-k", default="", help="only cases whose id contains this")
    ap.add_argument("--part", default="1/1", help="I/N: only every N-th case from the I-th (1-based), to split a run "
                                                  "across calls of the GPU machine's time limit")
    ap.add_argument("--report", type=Path, help="`cutile-transpile --format json` output: diagnostics of unported kernels")
    opts = ap.parse_args(argv)
    opts.runs = opts.runs or DEFAULT_RUNS[opts.sizes]
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
    todo = select(SIZES[opts.sizes](), opts.k, opts.part)
    print(f"{len(todo)} {opts.sizes} cases, {opts.runs} timed runs each", flush=True)
    print(f"{'kernel':<28} {'case':<34} {'result':<10} {'error':>9} {'triton us':>10} "
          f"{'rust us':>9} {'speed':>7}", flush=True)
    info, out, results = versions(torch, triton, crate), Path(opts.results), []
    summary = summarize(results)
    for c in todo:
        r = {"id": c["id"], "module": c["module"].rsplit(".", 1)[1], "kernel": c["kernel"], "case": c["case"],
             "dtype": main_dtype(c), "shapes": {i["name"]: i["shape"] for i in c["inputs"]},
             "sizes": opts.sizes, "bytes": case_bytes(c), "flops": case_flops(c)}
        rec = ported.get((str(module_file(c).resolve()), c["kernel"]))
        if rec is None or rec.get("abi") is False:
            why = diags.get((module_file(c).name, c["kernel"])) or ("not in manifest.json" if rec is None
                                                                   else "no C-ABI symbol")
            r.update(status="not ported", detail=why)
        else:
            try:
                r.update(run_case(torch, tl, cutile_ports, c, opts.runs, on_gpu=opts.sizes == "real"))
                r["status"] = "ok" if r["ok"] else "FAIL"
            except Exception as e:  # noqa: BLE001 - one failing case must not stop the others
                tb = traceback.format_exc().strip().splitlines()
                r.update(status="FAIL", detail=f"{type(e).__name__}: {str(e)[:300]}", traceback=tb[-6:])
                try:
                    cutile_ports.set_backend("python")
                    torch.cuda.synchronize()
                    torch.cuda.empty_cache()
                except Exception:  # noqa: BLE001 - a sticky CUDA error: the next cases will report it
                    pass
        results.append(r)
        print(f"{r['kernel']:<28} {r['case']:<34} {r['status']:<10} {fmt(r.get('error'), '9.2e')} "
              f"{fmt(r.get('t_triton_us'), '10.1f')} {fmt(r.get('t_rust_us'), '9.1f')} {fmt(r.get('speed'), '7.3f')}"
              f"  {fmt_rate(r.get('triton_tbps'), r.get('triton_tflops'))} / "
              f"{fmt_rate(r.get('rust_tbps'), r.get('rust_tflops'))}"
              f"{'  ' + r['detail'] if r.get('detail') else ''}", flush=True)
        summary = write_results(out, results, info, opts)  # after each case: a run cut off keeps what it did
    print(json.dumps({k: v for k, v in summary.items() if k != "kernel_speed"}))
    return 1 if summary["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
