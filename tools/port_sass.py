"""SASS of a Triton kernel's cuTile Rust port next to Triton's own, without a GPU (a development aid).

    PYTHONPATH=$PWD python3 tools/port_sass.py OUT rms_norm_bwd_kernel --dtype f16+f16+f16+f32+f16+f32 \
        --spec '{"OFFSET": 0.0, "BLOCK_N": 4096}' --scalars '{"stride": 4096, "n_cols": 4096}' \
        --triton corpus/triton/workloads/rms_norm.py --sig '{"dy_ptr": "*fp16", ...}'

The port's entry (OUT: a crate cutile-transpile wrote) is compiled as the C symbol compiles it at a launch: its
raw pointers and i32 scalars get the `assume div_by` the launch's divisibility hints give (abi.rs
`specialization`: 16 for a pointer, the largest power of two up to 16 dividing an i32), written into a copy of
kernel.rs; then irdump (Tile IR bytecode), tileiras --gpu-name=sm_90 and cuobjdump -sass. Partitioned outputs
(`&mut Tensor`) get no shape/stride hints here (irdump takes none), so their stores may look narrower than
at a launch. With --triton, the kernel is compiled by Triton (an installed triton, no GPU: ASTSource for
sm_90) with pointers and the scalars divisible by 16 marked as Triton specializes them, a scalar equal to 1
made a constant (run by --triton-python, default this Python: the one with triton installed). Prints per side: instructions, registers, threads, spills and a histogram of the memory,
tensor-core and special-function instructions. Needs tileiras and cuobjdump (TILEIRAS, CUOBJDUMP or PATH).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
KINDS = r"(?:LDG|STG|REDG|ATOMG|LDS|STS|LDSM|LDGSTS|UTMALDG|UTMASTG|UTMAREDG|BAR|MUFU|HMMA|IMMA|HGMMA|IGMMA|SHFL|STL|LDL)"


def tool(name: str, env: str) -> str:
    found = os.environ.get(env) or shutil.which(name)
    if not found:
        raise SystemExit(f"{name} not found: set {env} or put it on PATH")
    return found


def div_hint(v: int) -> int:
    """abi.rs DivHint::from_value clamped at 16: the largest power of two dividing v (0: 16)."""
    return 16 if v == 0 else min(v & -v, 16)


def summary(cubin: Path) -> dict:
    dump = tool("cuobjdump", "CUOBJDUMP")
    sass = subprocess.run([dump, "-sass", str(cubin)], capture_output=True, text=True, check=True).stdout
    res = subprocess.run([dump, "-res-usage", str(cubin)], capture_output=True, text=True).stdout
    elf = subprocess.run([dump, "-elf", str(cubin)], capture_output=True, text=True).stdout
    threads = re.search(r"EIATTR_REQNTID\s+Format:\s+\w+\s+Value:\s+(0x[0-9a-f]+)", elf)
    regs = re.search(r"REG:(\d+)", res)
    ops = Counter(m.group(0) for m in re.finditer(rf"\b{KINDS}[A-Z0-9._]*", sass))
    return {"instructions": len(re.findall(r"^\s+/\*[0-9a-f]{4}\*/", sass, re.M)),
            "registers": int(regs.group(1)) if regs else None,
            "threads": int(threads.group(1), 16) if threads else None,
            "backward_branches": sum(1 for m in re.finditer(r"/\*([0-9a-f]+)\*/\s+(?:@!?P\d\s+)?BRA\s+0x([0-9a-f]+)", sass)
                                     if int(m.group(2), 16) < int(m.group(1), 16)),
            "ops": dict(sorted(ops.items()))}


def port(out: Path, kernel: str, dtype: str, spec: dict, scalars: dict, tmp: Path) -> dict:
    from transpiler.verify.entries import rust_rank, select_entry
    from transpiler.verify.specs import entry_params, verified_generics
    from transpiler.verify.toolchain import cargo_env, irdump_binary
    manifest = json.loads((out / "manifest.json").read_text())
    module, k = next((m, k) for m in manifest["modules"] for k in m["kernels"] if k["name"] == kernel)
    entry = select_entry(k["entries"], spec, dtype)
    text = (out / module["rust"]).read_text()
    start = text.index(f"pub unsafe fn {entry['name']}<")
    body = text.index(") {\n", start) + 4
    signature = text[start:body]
    hints = {n: 16 for n in re.findall(r"\b(\w+): \*mut u8", signature)}
    hints.update({n: div_hint(v) for n, v in scalars.items()
                  if isinstance(v, int) and re.search(rf"\b{n}: i32\b", signature) and div_hint(v) > 1})
    assumes = "".join(f"        let {n} = unsafe {{ assume_div_by::<_, {d}>({n}) }};\n" for n, d in hints.items())
    rust = tmp / "kernel.rs"
    rust.write_text(text[:body] + assumes + text[body:])
    strides = [[p.get("rust_name", p["name"]), [-1] * (rust_rank(p) - 1) + [1]]
               for p in entry_params(k, entry) if p["kind"] == "array"]
    job = {"file": str(rust), "module": module["module"], "entry": entry["name"],
           "generics": verified_generics(k, entry, spec, dtype), "strides": strides, "target": "sm_90",
           "out": str(tmp / "port.tileirbc"), "ir_text_out": str(tmp / "port.mlir")}
    done = subprocess.run([str(irdump_binary(cargo_env()))], input=json.dumps(job), capture_output=True, text=True)
    result = json.loads(done.stdout.splitlines()[-1]) if done.stdout.strip() else {"error": done.stderr[-500:]}
    if not result.get("ok"):
        raise SystemExit(f"irdump: {result.get('error')}")
    subprocess.run([tool("tileiras", "TILEIRAS"), "--gpu-name=sm_90", job["out"], "-o", str(tmp / "port.cubin")],
                   check=True)
    return {"hints": hints, **summary(tmp / "port.cubin")}


def triton_side(source: Path, kernel: str, sig: dict, spec: dict, scalars: dict, num_warps: int, tmp: Path) -> dict:
    import importlib
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    rel = source.resolve().relative_to(ROOT).with_suffix("")
    fn = getattr(importlib.import_module(".".join(rel.parts)), kernel)
    while not hasattr(fn, "arg_names"):
        fn = fn.fn
    sig = dict(sig)
    consts = dict(spec)
    for n, v in scalars.items():
        if isinstance(v, bool) or not isinstance(v, int):
            sig.setdefault(n, "fp32")
        elif v == 1:
            consts[n] = 1
        else:
            sig.setdefault(n, "i32")
    attrs = {(i,): [["tt.divisibility", 16]] for i, n in enumerate(fn.arg_names)
             if sig.get(n, "").startswith("*") or (isinstance(scalars.get(n), int) and scalars[n] % 16 == 0)}
    sig.update({n: "constexpr" for n in consts})
    src = ASTSource(fn=fn, signature=sig, constexprs={(fn.arg_names.index(n),): v for n, v in consts.items()},
                    attrs=attrs)
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": num_warps})
    (tmp / "triton.cubin").write_bytes(compiled.asm["cubin"])
    return summary(tmp / "triton.cubin")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="the generated crate")
    ap.add_argument("kernel")
    ap.add_argument("--dtype", default="f32", help="element types as verification names them (f16+f32+...)")
    ap.add_argument("--spec", default="{}", help="JSON: the constexprs (and hidden *_IS_1 constants)")
    ap.add_argument("--scalars", default="{}", help="JSON: the launch's scalar arguments (their hints)")
    ap.add_argument("--triton", type=Path, help="the Triton source file, to compile Triton's side too")
    ap.add_argument("--sig", default="{}", help="JSON: Triton pointer types (`*fp16`, ...) of the kernel's pointers")
    ap.add_argument("--num-warps", type=int, default=4)
    ap.add_argument("--triton-python", default=sys.executable, help="a Python with triton installed")
    ap.add_argument("--triton-only", action="store_true", help=argparse.SUPPRESS)  # the Triton side, in that Python
    a = ap.parse_args(argv)
    spec, scalars = json.loads(a.spec), json.loads(a.scalars)
    with tempfile.TemporaryDirectory(prefix="port-sass-") as d:
        tmp = Path(d)
        if a.triton_only:
            print(json.dumps({"triton": triton_side(a.triton, a.kernel, json.loads(a.sig), spec, scalars,
                                                    a.num_warps, tmp)}, indent=1))
            return 0
        print(json.dumps({"port": port(a.out, a.kernel, a.dtype, spec, scalars, tmp)}, indent=1))
        if a.triton:
            triton_spec = {k: v for k, v in spec.items() if not k.endswith("_IS_1")}
            cmd = [a.triton_python, __file__, str(a.out), a.kernel, "--triton-only", "--triton", str(a.triton),
                   "--sig", a.sig, "--spec", json.dumps(triton_spec), "--scalars", a.scalars,
                   "--num-warps", str(a.num_warps)]
            done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
            print(done.stdout or done.stderr[-2000:], end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
