"""`cutile-transpile record -o OUT -- CMD...`: numeric cases for the Triton ports of OUT, taken from the user's own
runs. CMD (their tests, a script) runs under Triton's interpreter (TRITON_INTERPRET=1, on the CPU) with
`hook.py` loaded by a `sitecustomize.py` put first on PYTHONPATH; each launch of a kernel OUT ports is stored in
OUT/cases/ (inputs, scalars, constants, grid, and what Triton's interpreter wrote), and `verify` replays them
through the port's Tile IR. Without CMD, the cases declared in pyproject.toml (`[[tool.cutile-transpile.cases]]`,
see `declared.py`) are run the same way.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

CASES_DIR = "cases"  # in OUT
# (atol, rtol) per element type of a recorded array; the replay computes each op once in its type as the GPU does,
# Triton's interpreter in numpy: what may differ is the order of a reduction and fused multiply-adds
TOLERANCE = {"float32": [1e-5, 1e-4], "float64": [1e-12, 1e-10], "float16": [1e-3, 1e-2],
             "float8_e4m3fn": [0, 0], "float8_e5m2": [0, 0]}
MAX_PER_KERNEL = 4
MAX_BYTES = 64 << 20

_SITECUSTOMIZE = """\
# written by cutile-transpile record: loads its launch recorder, then the sitecustomize this one shadows
import os as _os
import sys as _sys

import _cutile_transpile_record_hook as _hook

_here = _os.path.dirname(_os.path.abspath(__file__))
_hook.install(_os.path.join(_here, "config.json"))
for _d in _sys.path:
    _f = _os.path.join(_d or ".", "sitecustomize.py")
    if _os.path.realpath(_d or ".") != _here and _os.path.isfile(_f):
        exec(compile(open(_f).read(), _f, "exec"), {"__name__": "sitecustomize", "__file__": _f})
        break
"""


class RecordError(Exception):
    pass


def ported_triton_kernels(out: Path) -> list[list[str]]:
    """[source's absolute path, kernel, source as the manifest names it] for each Triton kernel OUT ports."""
    try:
        manifest = json.loads((out / "manifest.json").read_text())
    except (OSError, ValueError) as e:
        raise RecordError(f"{out} is not an output of cutile-transpile (manifest.json: {e})") from None
    found = []
    for m in manifest.get("modules", []):
        for k in m.get("kernels", []):
            if k.get("frontend") == "triton":
                found.append([str((out / m["source"]).resolve()), k["name"], m["source"]])
    return found


def record(out: Path, command: list[str], max_per_kernel: int = MAX_PER_KERNEL, max_bytes: int = MAX_BYTES,
           log=print) -> int:
    """Run `command` with the recorder; returns its exit status. Cases land in OUT/cases/ as whole files."""
    from ..output.guard import OutputError, inside
    kernels = ported_triton_kernels(out)
    if not kernels:
        raise RecordError(f"{out} ports no Triton kernel: nothing to record")
    try:
        cases = inside(out, CASES_DIR)
    except OutputError as e:
        raise RecordError(str(e)) from None
    if cases.is_symlink() or (cases.exists() and not cases.is_dir()):
        raise RecordError(f"{cases} is not a folder")
    cases.mkdir(exist_ok=True)
    before = {p.name for p in cases.glob("*.npz")}
    with tempfile.TemporaryDirectory(prefix="cutile-record-") as tmp:
        shutil.copyfile(Path(__file__).with_name("hook.py"), Path(tmp) / "_cutile_transpile_record_hook.py")
        (Path(tmp) / "sitecustomize.py").write_text(_SITECUSTOMIZE)
        (Path(tmp) / "config.json").write_text(json.dumps({
            "kernels": kernels, "cases": str(cases.resolve()), "max_per_kernel": max_per_kernel,
            "max_bytes": max_bytes, "tolerance": TOLERANCE}))
        env = dict(os.environ, TRITON_INTERPRET="1",
                   PYTHONPATH=os.pathsep.join([tmp] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        try:
            rc = subprocess.call(command, env=env)
        except OSError as e:
            raise RecordError(f"cannot run {command[0]!r}: {e}") from None
    new = sorted({p.name for p in cases.glob("*.npz")} - before)
    by_kernel: dict[str, int] = {}
    for name in new:
        by_kernel[name.rsplit("-", 1)[0]] = by_kernel.get(name.rsplit("-", 1)[0], 0) + 1
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(by_kernel.items()))
    log(f"recorded {len(new)} new case{'s' * (len(new) != 1)} in {cases}" + (f" ({kinds})" if kinds else "")
        + f"; `cutile-transpile verify {out}` replays them")
    return rc
