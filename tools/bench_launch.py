"""Host time of one kernel launch: cuTile Python against the routed Rust port, the port's C ABI called
directly, and CUDA graph replay. Needs a GPU, torch, cuTile Python and the port's shared library.

    python3 tools/bench_launch.py --crate rust --results results/launch_h200

For each case (vector_add at three sizes, and two kernels with more arguments), each mode is timed in
batches of `--batch` launches queued back to back on one stream (the batch ends with a synchronize that is
not timed, so the queue never fills and blocks): `queued` is the median host time per launch over
`--batches` batches. `synced` is the median of `--batches` single launches each followed by a synchronize
(the GPU time included). Modes:

- `python`: cuTile Python's `ct.launch(stream, grid, kernel, args)` (not through the backend switch);
- `routed`: the same call with the backend "cutile-rs" (the port, through `cutile_ports.install()`);
- `port`: what the port's Python function runs (`_runtime.call(spec, args, grid, stream)`): the argument
  checks and the C call, no routing;
- `port_checked`: the full argument check of every call (`_runtime.plan`, what a layout's first call
  does) and the C call;
- `abi`: the C symbol called through ctypes with a plan made once (`_runtime.invoke`): the C ABI, its
  checks and cuTile Rust's launcher, no Python checks;
- `abi_checks`: the same call in the library's dry-run mode: the C ABI's checks only (what `abi` spends
  before cuTile Rust's launcher);
- `graph_python`, `graph_routed`: `--graph` launches captured in one `torch.cuda.CUDAGraph` and
  replayed; per launch, the replay's host time and its synchronized time; the outputs of a replay are
  compared with the outputs of the same launches made directly, and the routed replay's outputs with cuTile
  Python's replay's (`same_outputs_as_python_replay`, `max_abs_diff_from_python_replay`). The capture tries torch's default error
  mode ("global") first, then "thread_local" and "relaxed"; the report names the mode when it was not the
  default.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from gpu_check import _import_kernel_module  # noqa: E402

# (case label, kernel, shape label in gpu_cases): vector_add at three sizes, then kernels with more arguments
CASES = (
    ("vector_add 4Ki", "vector_add", "4Ki"),
    ("vector_add 1Mi", "vector_add", "1Mi"),
    ("vector_add 16Mi", "vector_add", "16Mi"),
    ("row_softmax 16384x1024", "row_softmax", "16384x1024"),
    ("layer_norm_fwd_kernel", "layer_norm_fwd_kernel", None),
)


def _case(kernel: str, shape: str | None):
    from gpu_cases import CASES as ALL, _vector_add
    case = next(c for c in ALL if c.kernel == kernel)
    if kernel == "vector_add" and shape in ("4Ki", "1Mi"):
        n = {"4Ki": 4096, "1Mi": 1 << 20}[shape]
        return case, (lambda s, d, torch, gen, dev: _vector_add(_ctx(d, torch, gen, dev), n)), shape
    return case, case.build, shape or case.shapes[0]


def load_case(kernel_name: str, shape: str | None, dtype: str, torch, device):
    """The kernel object of a case, its launch (arguments and grid, seeded inputs) and its shape label."""
    case, build, shape = _case(kernel_name, shape)
    kernel = getattr(_import_kernel_module(ROOT / case.path), case.kernel)
    gen = torch.Generator(device=device)
    gen.manual_seed(20261203)
    return kernel, build(shape, dtype, torch, gen, device), shape


def _ctx(dtype, torch, gen, device):
    from gpu_cases import _Ctx
    return _Ctx(dtype, torch, gen, device)


def _median_us(xs) -> float:
    return statistics.median(xs) * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--crate", default="rust", type=Path)
    ap.add_argument("--results", type=Path, help="writes RESULTS.json and RESULTS.md")
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--graph", type=int, default=100)
    ap.add_argument("--dtype", default="f32")
    args = ap.parse_args()

    import torch
    sys.path.insert(0, str(args.crate / "python"))
    import cuda.tile as ct
    import cutile_ports
    from cutile_ports import _runtime as rt

    python_launch = ct.launch  # cuTile Python's own, before the switch wraps it
    cutile_ports.install()
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    stream = torch.cuda.current_stream()
    lib = rt.load_library()
    rows = []
    for label, kernel_name, shape in CASES:
        kernel, launch, shape = load_case(kernel_name, shape, args.dtype, torch, device)
        spec, why = rt.spec_for(kernel)
        if spec is None:
            rows.append({"case": label, "error": why})
            continue
        plan = rt.route(kernel, launch.args, launch.grid, stream)
        modes = {
            "python": (lambda: cutile_ports.set_backend("python"),
                       lambda: python_launch(stream, launch.grid, kernel, launch.args)),
            "routed": (lambda: cutile_ports.set_backend("cutile-rs", strict=True),
                       lambda: ct.launch(stream, launch.grid, kernel, launch.args)),
            "port": (lambda: None, lambda: rt.call(spec, launch.args, launch.grid, stream)),
            "port_checked": (lambda: None, lambda: rt.invoke(rt.plan(spec, launch.args, launch.grid, stream), lib)),
            "abi": (lambda: None, lambda: rt.invoke(plan, lib)),
            "abi_checks": (lambda: lib.cutile_dry_run(1), lambda: rt.invoke(plan, lib)),
        }
        row = {"case": label, "kernel": kernel_name, "shape": shape, "dtype": args.dtype}
        for mode, (setup, call) in modes.items():
            setup()
            try:
                for _ in range(20):  # warm-up: compile, caches
                    call()
                torch.cuda.synchronize()
                per_launch = []
                for _ in range(args.batches):
                    t0 = time.perf_counter()
                    for _ in range(args.batch):
                        call()
                    per_launch.append((time.perf_counter() - t0) / args.batch)
                    torch.cuda.synchronize()
                synced = []
                for _ in range(args.batches):
                    t0 = time.perf_counter()
                    call()
                    torch.cuda.synchronize()
                    synced.append(time.perf_counter() - t0)
                row[mode] = {"queued_us": _median_us(per_launch), "synced_us": _median_us(synced)}
            except Exception as e:  # noqa: BLE001 - one mode failing must not hide the others
                row[mode] = {"error": f"{type(e).__name__}: {e}"}
            finally:
                lib.cutile_dry_run(0)
        for mode, backend in (("graph_python", "python"), ("graph_routed", "cutile-rs")):
            errors = {}
            for capture_mode in ("global", "thread_local", "relaxed"):  # torch's default first
                try:
                    row[mode] = _graph(torch, ct, cutile_ports, backend, kernel, launch, args, capture_mode)
                    break
                except Exception as e:  # noqa: BLE001
                    errors[capture_mode] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
                    torch.cuda.synchronize()
            else:
                row[mode] = {"error": errors}
            if errors and "error" not in row[mode]:
                row[mode]["failed_modes"] = errors
        # the routed replay against cuTile Python's replay of the same launches, output by output
        py_out, rs_out = row["graph_python"].pop("outputs", None), row["graph_routed"].pop("outputs", None)
        if py_out is not None and rs_out is not None:
            row["graph_routed"]["same_outputs_as_python_replay"] = all(
                torch.equal(x, y) for x, y in zip(py_out, rs_out))
            row["graph_routed"]["max_abs_diff_from_python_replay"] = max(
                float((x.float() - y.float()).abs().max()) for x, y in zip(py_out, rs_out))
        cutile_ports.set_backend("python")
        rows.append(row)
        print(json.dumps(row), flush=True)
    doc = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0),
           "torch": torch.__version__, "cuda_tile": getattr(ct, "__version__", "?"),
           "python": platform.python_version(), "batch": args.batch, "batches": args.batches,
           "graph": args.graph, "fast_path": "compiled" if rt.fastlaunch() is not None else "python", "rows": rows}
    if args.results:
        args.results.with_suffix(".json").write_text(json.dumps(doc, indent=2))
        args.results.with_suffix(".md").write_text(_report(doc))
    print(_report(doc))
    return 0


def _graph(torch, ct, cutile_ports, backend, kernel, launch, args, capture_mode) -> dict:
    """`args.graph` launches captured in one CUDA graph (torch.cuda.graph, this capture error mode) and
    replayed: per launch, the replay's host time and synchronized time, and whether a replay writes what
    the same launches made directly wrote."""
    cutile_ports.set_backend(backend, strict=backend != "python")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up on a side stream, as torch's capture asks
        for _ in range(3):
            ct.launch(torch.cuda.current_stream(), launch.grid, kernel, launch.args)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, capture_error_mode=capture_mode):
        for _ in range(args.graph):
            ct.launch(torch.cuda.current_stream(), launch.grid, kernel, launch.args)
    outs = [launch.args[i].clone() for i in launch.outputs]
    for i in launch.outputs:
        launch.args[i].fill_(float("nan") if launch.args[i].is_floating_point() else -1)
    graph.replay()
    torch.cuda.synchronize()
    same = all(torch.equal(launch.args[i], o) for i, o in zip(launch.outputs, outs))
    replayed = [launch.args[i].clone() for i in launch.outputs]
    queued, synced = [], []
    for _ in range(args.batches):
        t0 = time.perf_counter()
        graph.replay()
        queued.append((time.perf_counter() - t0) / args.graph)
        torch.cuda.synchronize()
        synced.append((time.perf_counter() - t0) / args.graph)
    return {"queued_us": _median_us(queued), "synced_us": _median_us(synced), "replay_matches_direct": same,
            "capture_error_mode": capture_mode, "outputs": replayed}


def _report(doc: dict) -> str:
    modes = ("python", "routed", "port", "port_checked", "abi", "abi_checks", "graph_python", "graph_routed")
    out = [f"# Launch host time ({doc['date']}, {doc['gpu']}, torch {doc['torch']}, cuda-tile {doc['cuda_tile']})",
           "", f"Median µs per launch; queued: {doc['batches']} batches of {doc['batch']} launches back to back; "
           f"synced: one launch then a synchronize. Graphs: {doc['graph']} launches per replay. "
           f"The package's fast path: {doc.get('fast_path', 'python')}.", "",
           "| case | " + " | ".join(modes) + " | routed / python |", "|---" * (len(modes) + 2) + "|"]
    for r in doc["rows"]:
        cells = []
        for m in modes:
            v = r.get(m)
            cells.append("-" if v is None else ("error" if "error" in v else
                                                f"{v['queued_us']:.1f} / {v['synced_us']:.1f}"
                                                + (f" ({v['capture_error_mode']})" if v.get("failed_modes") else "")))
        ratio = "-"
        if "queued_us" in r.get("python", {}) and "queued_us" in r.get("routed", {}):
            ratio = f"{r['routed']['queued_us'] / r['python']['queued_us']:.2f}"
        out.append(f"| {r['case']} | " + " | ".join(cells) + f" | {ratio} |")
    out += ["", "Cells: queued / synced µs."]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
