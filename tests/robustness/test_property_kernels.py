"""Property-based test (issue 9, item 8): random well-formed cuTile Python kernels from the supported subset,
with a few invalid constructs mixed in, through the CLI. Per kernel: `translated`, or a diagnostic with a code
and a position; never an internal error (CT900), never a traceback; and never exit 0 with a crate that does
not compile (one `cargo check` per batch).

The strategy is `tools/property_kernels.py` (`kernels`), which also runs longer campaigns:
`python3 tools/property_kernels.py --seed N --count 500`. The CI run here is derandomized (the same kernels
every run): 2 batches of 30 kernels, 2 CLI runs, 2 cargo checks.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("hypothesis")

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("property_kernels", ROOT / "tools" / "property_kernels.py")
pk = importlib.util.module_from_spec(_spec)
sys.modules["property_kernels"] = pk
_spec.loader.exec_module(pk)

BATCHES = 2
PER_BATCH = 30


def _cargo_available() -> bool:
    try:
        from transpiler.verify.toolchain import cargo_env
        cargo_env()
        return True
    except Exception:  # noqa: BLE001 - no cargo or CUDA headers: the transpile half still runs
        return False


@pytest.fixture(scope="module")
def cases():
    return pk.draw_cases(BATCHES * PER_BATCH, derandomize=True)


def test_strategy_is_varied(cases):
    fams = {c.family for c in cases}
    assert len(cases) == BATCHES * PER_BATCH and len(fams) >= 6, fams
    assert sum(c.invalid is not None for c in cases) >= 3
    assert len({c.source for c in cases}) >= len(cases) - 2


def _fmt(o) -> str:
    return f"{o.module} [{', '.join(o.case.tags)}] status={o.status} codes={o.codes}\n  " + \
        "\n  ".join(p[:500] for p in o.problems) + "\n" + o.case.source


@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_kernels_translate_or_diagnose_and_compile(cases, batch, tmp_path):
    part = cases[batch * PER_BATCH:(batch + 1) * PER_BATCH]
    outs, info = pk.run_batch(part, tmp_path, cargo=_cargo_available())
    bad = [o for o in outs if o.problems]
    assert not info["global"], "\n".join(info["global"])
    assert not bad, "\n\n".join(_fmt(o) for o in bad)
    # invalid constructs are diagnosed, never translated; the well-formed kernels of this seed are all ported
    # (tools/property_kernels.py reports the ones other seeds find)
    accepted = [o for o in outs if o.notes]
    assert not accepted, "\n\n".join(f"{o.module}: {o.notes}\n{o.case.source}" for o in accepted)
    assert any(o.status == "translated" for o in outs)
