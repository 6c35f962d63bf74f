"""Feature fixtures (one construct per kernel) verify `equivalent`; unsupported fixtures are diagnosed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import requires_toolchain

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "transpiler.cli", *map(str, args)], capture_output=True, text=True)


@requires_toolchain
def test_feature_fixtures_are_equivalent(tmp_path):
    res = cli(FIXTURES / "features", "-o", tmp_path / "out", "--verify", "--format", "json")
    doc = json.loads(res.stdout)
    bad = [(k["name"], k["status"], k["verify"], [d["message"][:300] for d in k["diagnostics"]])
           for k in doc["kernels"] if k["verify"] != "equivalent"]
    assert not bad and res.returncode == 0, bad
    assert doc["summary"]["equivalent"] >= 20


def test_unsupported_fixtures_are_diagnosed(tmp_path, snapshot):
    res = cli(FIXTURES / "unsupported", "-o", tmp_path / "out", "--format", "json")
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    diags = []
    for k in doc["kernels"]:
        assert k["status"] == "unsupported" and k["entries"] == [], k
        (d,) = k["diagnostics"]
        assert d["line"] >= 1 and d["col"] >= 1 and d["code"]
        diags.append(f"{Path(d['path']).name}:{d['line']}:{d['col']}: {d['code']}: {d['message']}")
    assert diags == snapshot
