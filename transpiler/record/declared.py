"""Cases declared in pyproject.toml, for `cutile-transpile record -o OUT` without a command:

    [[tool.cutile-transpile.cases]]
    source = "kernels/softmax.py"          # relative to the pyproject.toml
    kernel = "softmax_kernel"
    grid = [4]
    seed = 0                               # optional (default 0)
    args = { x = { shape = [4, 100], dtype = "float32" }, y = { shape = [4, 100], dtype = "float32", init = "zeros" },
             n_cols = 100, BLOCK = 128 }

Each array is drawn from numpy's default_rng(seed), in the order the args are written: `init` = "randn" (floats'
default; `scale`), "uniform" (`lo`, `hi`), "randint" (integers' default, `lo` = 0, `hi` = 16, high exclusive),
"zeros", "ones", "arange". Numbers, booleans and strings are passed as they are (a string naming a Triton dtype,
"float16", for a constexpr of dtype type). The cases run through `declared_runner.py` in a child process
(numpy and triton needed there, no torch: arrays are host memory), under the same recorder as a user's command.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..config import tomllib


class DeclaredError(Exception):
    pass


_INITS = {"randn", "uniform", "randint", "zeros", "ones", "arange"}


def load_declared(project: Path) -> list[dict]:
    """The declared cases of a pyproject.toml, checked, with `source` made absolute."""
    try:
        data = tomllib.loads(project.read_text())
    except (OSError, UnicodeDecodeError) as e:
        raise DeclaredError(f"cannot read {project}: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise DeclaredError(f"{project}: {e}") from None
    cases = data.get("tool", {}).get("cutile-transpile", {}).get("cases", [])
    if not isinstance(cases, list) or not cases:
        raise DeclaredError(f"{project} declares no [[tool.cutile-transpile.cases]]; give a command to run instead "
                            "(`cutile-transpile record -o OUT -- pytest tests/`)")
    out = []
    for i, c in enumerate(cases, 1):
        where = f"{project}: case {i}"
        if not isinstance(c, dict):
            raise DeclaredError(f"{where}: not a table")
        unknown = set(c) - {"source", "kernel", "grid", "seed", "args"}
        if unknown:
            raise DeclaredError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        for key, kind in (("source", str), ("kernel", str), ("grid", list), ("args", dict)):
            if not isinstance(c.get(key), kind):
                raise DeclaredError(f"{where}: `{key}` must be a {kind.__name__}")
        if not (1 <= len(c["grid"]) <= 3) or not all(isinstance(g, int) and g >= 1 for g in c["grid"]):
            raise DeclaredError(f"{where}: `grid` must be 1 to 3 positive integers")
        if not isinstance(c.get("seed", 0), int):
            raise DeclaredError(f"{where}: `seed` must be an integer")
        source = (project.parent / c["source"]).resolve()
        if not source.is_file():
            raise DeclaredError(f"{where}: no file {source}")
        for name, v in c["args"].items():
            if isinstance(v, dict):
                shape = v.get("shape")
                if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
                    raise DeclaredError(f"{where}: `{name}.shape` must be a list of sizes")
                if not isinstance(v.get("dtype"), str):
                    raise DeclaredError(f"{where}: `{name}.dtype` must be a dtype name (\"float32\")")
                if v.get("init", "randn") not in _INITS:
                    raise DeclaredError(f"{where}: `{name}.init` must be one of {', '.join(sorted(_INITS))}")
            elif not isinstance(v, (bool, int, float, str)):
                raise DeclaredError(f"{where}: `{name}` must be a number, a string or an array table")
        out.append({**c, "source": str(source), "seed": c.get("seed", 0)})
    return out


def declared_command(out: Path, project: Path | None) -> list[str]:
    """The command that runs the declared cases: the runner, with the checked cases as JSON on its command line."""
    project = project or Path("pyproject.toml")
    cases = load_declared(project)
    return [sys.executable, str(Path(__file__).with_name("declared_runner.py")), json.dumps(cases)]
