"""Compares the machine code of a libdevice port (rules/triton_libdevice.py) with Triton's own call, on the CPU.

    CUTILE_TRANSPILE_KEEP_IR=/tmp/ir python3 -m transpiler.cli K.py -o /tmp/o --verify   # keeps the port's bytecode
    TILEIRAS=$(python3 -c "import nvidia.cu13, os; print(os.path.join(nvidia.cu13.__path__[0], 'bin', 'tileiras'))") \
        /tmp/trit/bin/python tools/libdevice_sass.py erf /tmp/ir/erf_kernel__e_f32.f32.0.rust.tileirbc

Triton (its Python package, run with the Triton venv) compiles `y = libdevice.NAME(x)` for sm_90 without a GPU
(`triton.compile` with a GPUTarget: its LLVM links libdevice.10.bc with __CUDA_FTZ = 1, its ptxas assembles);
tileiras (NVIDIA's Tile IR assembler, the `nvidia-cuda-tileiras` wheel) compiles the port's Tile IR bytecode for
sm_90; cuobjdump (shipped with Triton) disassembles both. Between the load of x and the store of y, the float
instructions of each (FFMA / FADD / FMUL / MUFU / I2FP / F2I / FRND with their modifiers and immediate
constants; registers dropped) are listed and compared as multisets: the same operations, the same constants,
the same rounding and flush modifiers. Branches and selects, integer instructions and the order differ (the
port selects where libdevice branches; tileiras schedules on its own): read the two listings, printed side by
side, for those. Exits 1 where the multisets differ. Not a test (it needs both toolchains and Triton's
compiler); docs/supported-triton.md records what it showed for each port.
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FLOAT_OPS = ("FFMA", "FADD", "FMUL", "MUFU", "I2FP", "F2I", "FRND", "FSETP", "FMNMX")


def _tool(name: str) -> str:
    import triton
    found = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name
    return str(found) if found.exists() else (shutil.which(name) or name)


def _tileiras() -> str:
    """tileiras: $TILEIRAS, the `nvidia-cuda-tileiras` wheel of this Python, or the one on PATH."""
    import os
    if os.environ.get("TILEIRAS"):
        return os.environ["TILEIRAS"]
    try:
        import nvidia.cu13
        found = Path(nvidia.cu13.__path__[0]) / "bin" / "tileiras"
        if found.exists():
            return str(found)
    except ImportError:
        pass
    return shutil.which("tileiras") or "tileiras"


def sass(cubin: Path) -> list[str]:
    out = subprocess.run([_tool("cuobjdump"), "-sass", str(cubin)], capture_output=True, text=True, check=True).stdout
    lines = []
    for line in out.splitlines():
        m = re.match(r"\s+/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", line)
        if m:
            lines.append(m.group(1))
    return lines


def body(lines: list[str]) -> list[str]:
    """The instructions from the load of x to the store of y."""
    start = next(i for i, l in enumerate(lines) if "LDG" in l)
    end = max(i for i, l in enumerate(lines) if "STG" in l)
    return lines[start + 1:end]


def float_ops(lines: list[str]) -> collections.Counter:
    ops = collections.Counter()
    for l in lines:
        l = re.sub(r"^@!?P\d\s+", "", l)
        op = l.split()[0]
        if not op.startswith(FLOAT_OPS):
            continue
        if op.startswith("FADD") and l.endswith("-RZ"):  # |x| as x + -0 (fabs): the port writes |x| as a modifier
            continue
        operands = [o.strip().replace(".reuse", "") for o in l[len(op):].split(",")][1:]  # destination dropped
        consts = sorted(o.lstrip("-|").rstrip("|") for o in operands if not re.fullmatch(r"-?\|?(R\d+|RZ|PT|!?P\d)\|?", o))
        ops[f"{op} {' '.join(consts)}".strip()] += 1
    return ops


def triton_cubin(name: str, tmp: Path) -> Path:
    src = tmp / f"k_{name}.py"
    src.write_text(f"""import triton, triton.language as tl
from triton.language.extra import libdevice

@triton.jit
def k(x_ptr, y_ptr, n):
    i = tl.program_id(0) * 128 + tl.arange(0, 128)
    tl.store(y_ptr + i, libdevice.{name}(tl.load(x_ptr + i, mask=i < n)), mask=i < n)
""")
    sys.path.insert(0, str(tmp))
    mod = __import__(f"k_{name}")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    import triton
    c = triton.compile(ASTSource(fn=mod.k, signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"}, constexprs={}),
                       target=GPUTarget("cuda", 90, 32))
    out = tmp / f"triton_{name}.cubin"
    out.write_bytes(c.asm["cubin"])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", help="libdevice function (erf, log1p, ...)")
    ap.add_argument("port", type=Path, help="the port's Tile IR bytecode (.rust.tileirbc kept by verify)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        theirs = body(sass(triton_cubin(args.name, tmp)))
        ours_cubin = tmp / "port.cubin"
        subprocess.run([_tileiras(), "--gpu-name=sm_90", str(args.port), "-o", str(ours_cubin)], check=True)
        ours = body(sass(ours_cubin))
    width = max(len(l) for l in theirs) + 2
    print(f"{'Triton (libdevice)':<{width}}| port (tileiras)")
    for i in range(max(len(theirs), len(ours))):
        print(f"{theirs[i] if i < len(theirs) else '':<{width}}| {ours[i] if i < len(ours) else ''}")
    a, b = float_ops(theirs), float_ops(ours)
    if a == b:
        print(f"\nsame float instructions ({sum(a.values())}): " + "; ".join(f"{k} x{v}" for k, v in sorted(a.items())))
        return 0
    print("\nfloat instructions differ:")
    for k in sorted(set(a) | set(b)):
        if a[k] != b[k]:
            print(f"  {k}: Triton {a[k]}, port {b[k]}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
