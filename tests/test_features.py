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


@requires_toolchain
def test_package_modules_verify_with_their_imports(tmp_path):
    """Modules of a package import each other (relative, absolute, sub-package): verification imports each
    by its dotted name with the package root on the path, as the user's environment would."""
    res = cli(FIXTURES / "package", "-o", tmp_path / "out", "--verify", "--format", "json")
    doc = json.loads(res.stdout)
    got = {k["name"]: k["verify"] for k in doc["kernels"]}
    assert got == {"scale_rows": "equivalent", "center_rows": "equivalent"}, doc
    assert res.returncode == 0


def test_package_root_and_dotted_name():
    from transpiler.verify.run import package_root
    root, dotted = package_root(FIXTURES / "package" / "mylib" / "ops" / "norm.py")
    assert root == (FIXTURES / "package").resolve() and dotted == "mylib.ops.norm"
    root, dotted = package_root(FIXTURES / "features" / "ops.py")  # a folder without __init__.py
    assert root == (FIXTURES / "features").resolve() and dotted == "ops"
