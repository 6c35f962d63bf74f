"""Which specializations of a kernel get verified.

Constant values come, in order of preference, from:
1. literal arguments at `ct.launch(stream, grid, kernel, (...))` call sites in the source (a site whose
   constant arguments are all non-literal gives nothing, so it does not hide the table);
2. `[tool.cutile-transpile.specializations]` in the nearest pyproject.toml above the source:
   `<kernel> = [{BM = 64, BN = 64}, ...]` (a list of tables, one per specialization);
3. defaults: 64 for every `ct.Constant[int]`, both 0 and 1 for every `ct.Constant[bool]`.
Values missing from a launch site or table take the defaults. The element type E of the arrays is
verified for f16, bf16 and f32 (`dtypes = [...]` in the same pyproject section overrides it).
The pyproject section is read and validated by `transpiler.config` (once per file); names in a table row
that are not constants of the kernel are left out (config warns about them, CT015).
"""

from __future__ import annotations

import itertools
from pathlib import Path

from ..model.ir import Kernel

DEFAULT_INT = 64
DEFAULT_DTYPES = ("f16", "bf16", "f32")


def _pyproject_section(source: Path) -> dict:
    """The validated `[tool.cutile-transpile]` section (only its well-formed parts; see transpiler.config)."""
    from ..config import config_for
    return config_for(source)[0]


def const_value(expr: str, values: dict):
    """A constant expression (variant predicate, derived constant) over constant values, as Python does."""
    return eval(expr, {"__builtins__": {}}, dict(values))  # noqa: S307 - expressions from our own manifest


def predicates_hold(preds, values: dict) -> bool:
    try:
        return all(const_value(p, values) for p in preds)
    except Exception:  # noqa: BLE001 - a predicate over constants the values lack does not hold
        return False


def cover_variants(specs: list[dict], variants: list[tuple[str, ...]]) -> list[dict]:
    """Add specializations so that every structural variant is selected by at least one: values for the
    constants in the predicates are tried from the literals they compare with (and 0/1), starting from the
    first specialization. Variants that no such value selects stay uncovered (reported not_verified)."""
    import re
    out = list(specs)
    base = specs[0] if specs else {}

    for preds in variants:
        if any(predicates_hold(preds, s) for s in out):
            continue
        names = sorted({n for p in preds for n in re.findall(r"[A-Za-z_]\w*", p)} - {"not", "and", "or", "True", "False"})
        names = [n for n in names if n in base]
        lits = sorted({int(x) for p in preds for x in re.findall(r"-?\d+", p)} | {0, 1})
        candidates = sorted({v + d for v in lits for d in (-1, 0, 1)})
        found = None
        for combo in itertools.product(candidates, repeat=len(names)):
            values = {**base, **dict(zip(names, combo))}
            if predicates_hold(preds, values):
                found = values
                break
        if found is not None and found not in out:
            out.append(found)
    return out


def specializations(kernel: Kernel, source: Path) -> tuple[list[dict], list[str], str]:
    """(constant-value dicts, dtypes for E, where they came from)."""
    consts = [p for p in kernel.params if p.kind == "const"]
    section = _pyproject_section(source)
    dtypes = list(section.get("dtypes") or DEFAULT_DTYPES)
    literal = [dict(l) for l in kernel.launches if l]
    table = section.get("specializations", {}).get(kernel.name)
    if literal:
        rows, origin = literal, "launch sites"
    elif table:
        names = {p.name for p in consts}
        rows, origin = [{k: v for k, v in r.items() if k in names} for r in table], "pyproject.toml"
    else:
        rows, origin = [{}], "defaults"
    out = []
    for row in rows:
        missing = [p for p in consts if p.name not in row]
        choices = [[0, 1] if p.const_type == "bool" else [DEFAULT_INT] for p in missing]
        for combo in itertools.product(*choices):
            spec = dict(row)
            spec.update({p.name: v for p, v in zip(missing, combo)})
            for p in consts:
                if p.const_type == "bool":
                    spec[p.name] = int(bool(spec[p.name]))
            if spec not in out:
                out.append(spec)
    return out, dtypes, origin
