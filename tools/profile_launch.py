"""Where a routed launch's host time goes: each stage of the routed path timed alone, next to cuTile
Python's whole launch and the CUDA driver's floor. Needs a GPU, torch, cuTile Python and the port's library.

    python3 tools/profile_launch.py --crate rust [--results results/launch_profile_h200]

Every figure is the median over `--batches` batches of the ns per call of `--batch` calls back to back
(launches queued on one stream; a synchronize, not timed, ends each batch). Stages, outermost first:

- `python`: cuTile Python's `ct.launch`; `routed`: the same call through the backend switch;
- `spec_for`, `call`: the routing lookup alone; the port's `_runtime.call` (no routing);
- `layout_key`, `calls_get`: the layout key of the launch; its lookup among the checked layouts;
- `fast_run`: the checked layout's `run` (patching and the C call);
- `route_c`: the compiled fast path's `route` alone (what `launch` calls for a prepared layout);
- `fire_ctypes`: the prepared launch fired through ctypes with the words `fast_run` left (`cutile_fire`);
- `ctypes_floor`: a ctypes call of a symbol doing nothing (`cutile_abi_version`);
- per-tensor torch reads (`t.shape`, `t.stride()`, `t.dtype`, `t.get_device()`, `t.data_ptr()`,
  `torch._C._to_dlpack(t)`), timed in Python;
- `driver_floor_ns_by_words`: `cuLaunchKernel` of an empty kernel taking 4, 16 and 48 8-byte
  parameters, from C (tools/launch_floor.c, built with the machine's C compiler when it has one).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from bench_launch import CASES, load_case  # noqa: E402


def _ns(fn, torch, batch: int, batches: int, sync: bool = True) -> float:
    for _ in range(50):
        fn()
    if sync:
        torch.cuda.synchronize()
    per = []
    for _ in range(batches):
        t0 = time.perf_counter_ns()
        for _ in range(batch):
            fn()
        per.append((time.perf_counter_ns() - t0) / batch)
        if sync:
            torch.cuda.synchronize()
    return statistics.median(per)


def _driver_floor(words: int, batch: int, batches: int) -> float | None:
    """ns per cuLaunchKernel of an empty kernel with `words` u64 parameters (None: no C compiler)."""
    src = ROOT / "tools" / "launch_floor.c"
    exe = Path(tempfile.gettempdir()) / "launch_floor"
    cc = next((c for c in ("cc", "gcc", "clang") if subprocess.run(["which", c], capture_output=True).returncode == 0),
              None)
    if cc is None:
        return None
    cuda_inc = [f"-I{p}" for p in ("/usr/local/cuda/include",) if os.path.isdir(p)]
    r = subprocess.run([cc, "-O2", *cuda_inc, str(src), "-o", str(exe), "-ldl"], capture_output=True, text=True)
    if r.returncode != 0:
        print("launch_floor build failed:", r.stderr[-2000:], file=sys.stderr)
        return None
    r = subprocess.run([str(exe), str(words), str(batch), str(batches)], capture_output=True, text=True)
    if r.returncode != 0:
        print("launch_floor failed:", r.stdout[-500:], r.stderr[-2000:], file=sys.stderr)
        return None
    return float(r.stdout.split()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--crate", default="rust", type=Path)
    ap.add_argument("--results", type=Path)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--batches", type=int, default=30)
    ap.add_argument("--dtype", default="f32")
    args = ap.parse_args()

    import torch
    sys.path.insert(0, str(args.crate / "python"))
    import cuda.tile as ct
    import cutile_ports
    from cutile_ports import _runtime as rt

    python_launch = ct.launch
    cutile_ports.install()
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    stream = torch.cuda.current_stream()
    lib = rt.load_library()
    version = lib.cutile_abi_version
    rows = []
    B, N = args.batch, args.batches
    t = torch.empty(1 << 20, device=device)
    reads = {
        "t.shape": lambda: t.shape,
        "t.stride()": lambda: t.stride(),
        "t.dtype": lambda: t.dtype,
        "t.get_device()": lambda: t.get_device(),
        "t.data_ptr()": lambda: t.data_ptr(),
        "_to_dlpack(t)": lambda: torch._C._to_dlpack(t),
        "lambda: None": lambda: None,
    }
    torch_reads = {k: _ns(f, torch, B, N, sync=False) for k, f in reads.items()}
    for label, kernel_name, shape in CASES:
        kernel, launch, _ = load_case(kernel_name, shape, args.dtype, torch, device)
        spec, why = rt.spec_for(kernel)
        if spec is None:
            rows.append({"case": label, "error": why})
            continue
        a, grid = launch.args, launch.grid
        row = {"case": label}
        cutile_ports.set_backend("python")
        row["python"] = _ns(lambda: python_launch(stream, grid, kernel, a), torch, B, N)
        cutile_ports.set_backend("cutile-rs", strict=True)
        row["routed"] = _ns(lambda: ct.launch(stream, grid, kernel, a), torch, B, N)
        row["spec_for"] = _ns(lambda: rt.spec_for(kernel), torch, B, N, sync=False)
        row["call"] = _ns(lambda: rt.call(spec, a, grid, stream), torch, B, N)
        keyer = rt._KEYERS[spec.symbol]
        key = keyer(a, grid, torch.Tensor)
        calls = rt._FAST.calls
        row["layout_key"] = _ns(lambda: keyer(a, grid, torch.Tensor), torch, B, N, sync=False)
        row["calls_get"] = _ns(lambda: calls.get(key), torch, B, N, sync=False)
        fast = calls[key]
        row["fast_run"] = _ns(lambda: fast.run(a, stream), torch, B, N)
        if fast.fire is not None:  # a prepared launch: `cutile_fire` through ctypes with the words run left
            words = fast.fire[1]
            fire = lib.cutile_fire
            fire.restype, fire.argtypes = ctypes.c_int32, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
            buf = (ctypes.c_char * len(words)).from_buffer(words)
            addr, record, handle = ctypes.addressof(buf), fast.record, stream.cuda_stream
            row["fire_ctypes"] = _ns(lambda: fire(record, addr, handle), torch, B, N)
            row["words"] = len(words) // 8
            route = rt._STATE["route"]
            if route is not None and id(kernel) in rt._HOT:
                row["route_c"] = _ns(lambda: route(rt._HOT, rt._HOT_LAYOUTS, stream, grid, kernel, a), torch, B, N)
        row["ctypes_floor"] = _ns(version, torch, B, N, sync=False)
        cutile_ports.set_backend("python")
        rows.append(row)
        print(json.dumps(row), flush=True)
    floors = {n: _driver_floor(n, B, N) for n in (4, 16, 48)}
    doc = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "torch_reads_ns": torch_reads,
           "driver_floor_ns_by_words": floors, "rows": rows}
    text = json.dumps(doc, indent=2)
    if args.results:
        args.results.with_suffix(".json").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
