"""Bounded, seeded fuzzing of the corpus crate's C ABI (tools/fuzz_abi.py; longer runs: run that tool).

4,300 calls over every `cutile_*` symbol (valid calls per specialization, valid calls with one or two fields
mutated, random calls), made in a child process so that a crash fails this test instead of killing pytest:
- no crash, no caught panic (code 14), no code outside 0..14;
- every call that breaks one of README's checks gets the code of a check it breaks (never 0, 12 or 13);
- every call that breaks none reaches the device step (code 12 here, without a CUDA driver);
- each check's code is reached at least once, so the oracle and the generator stay meaningful.
Reuses test_abi's library build (the shared target directory makes the second cargo build a no-op).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from conftest import ROOT, requires_toolchain
from test_abi import built_library, driver_present

pytestmark = requires_toolchain

SEEDS = (1, 2)
CALLS_PER_SEED = 2150  # 50 per symbol per seed


def _fuzz_tool():
    spec = importlib.util.spec_from_file_location("fuzz_abi", ROOT / "tools" / "fuzz_abi.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_abi"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def corpus_library(corpus_out, tmp_path_factory) -> Path:
    return built_library(corpus_out, tmp_path_factory.mktemp("fuzzlib"))


def test_c_abi_fuzz(corpus_out, corpus_library):
    if driver_present():
        pytest.skip("a CUDA driver is present: valid calls would launch kernels on fake pointers")
    tool = _fuzz_tool()
    r = tool.fuzz(corpus_out, corpus_library, list(SEEDS), CALLS_PER_SEED, timeout=300)
    assert not r["crashes"], r["crashes"]
    assert r["calls"] == len(SEEDS) * CALLS_PER_SEED
    assert not r["violations"], r["violations"][:5]
    codes = r["codes"]
    assert set(codes) <= set(range(15)) and 14 not in codes and 0 not in codes and 13 not in codes, codes
    assert set(range(1, 13)) <= set(codes), f"every check's code is reached: {codes}"
    assert r["valid_calls"] >= r["symbols"] and codes[12] == r["valid_calls"]


def test_fuzz_oracle_catches_a_missing_check(corpus_out, corpus_library, tmp_path):
    """The oracle is not vacuous: against a manifest that claims no bool constants and no tile sizes, the
    library's refusals of bool constants other than 0/1 and of bad tile sizes are reported as violations."""
    import json
    import shutil
    if driver_present():
        pytest.skip("a CUDA driver is present")
    tool = _fuzz_tool()
    shutil.copytree(corpus_out / "src", tmp_path / "src")
    manifest = json.loads((corpus_out / "manifest.json").read_text())
    for m in manifest["modules"]:
        for k in m["kernels"]:
            for p in k["params"]:
                if p["const_type"] == "bool":
                    p["const_type"] = "int"
            for e in k["entries"]:
                e["tile_dims"], e["tiles"] = [], {}
                for o in e["outputs"]:
                    o["form"] = "unchecked"
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    r = tool.fuzz(tmp_path, corpus_library, [1], 2150, timeout=300)
    assert not r["crashes"]
    messages = " ".join(v["message"] for v in r["violations"])
    assert "tile sizes must be positive powers of two" in messages and "bool constant" in messages
