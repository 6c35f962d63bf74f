"""tools/coverage.py prints a library's figures and its blockers (without verification here: fast)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_coverage_tool_counts_kernels_and_ranks_blockers(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "ok.py").write_text("import cuda.tile as ct\n\n@ct.kernel\ndef good(x, z, T: ct.Constant[int]):\n"
                               "    t = ct.load(x, index=(ct.bid(0),), shape=(T,))\n"
                               "    ct.store(z, index=(ct.bid(0),), tile=t)\n")
    (lib / "bad.py").write_text("import cuda.tile as ct\n\n@ct.kernel\ndef b1(x, z, T: ct.Constant[int]):\n"
                                "    t = ct.load(x, index=(ct.bid(0),), shape=(T,))\n"
                                "    ct.store(z, index=(ct.bid(0),), tile=ct.cumprod(t, 0))\n\n"
                                "@ct.kernel\ndef b2(x, z, T: ct.Constant[int]):\n"
                                "    t = ct.load(x, index=(ct.bid(0),), shape=(T,))\n"
                                "    ct.store(z, index=(ct.bid(0),), tile=ct.insert(t, t, 0))\n")
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "coverage.py"), str(lib), "--json",
                          str(tmp_path / "c.json")], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    (m,) = json.loads((tmp_path / "c.json").read_text())
    assert (m["kernels"], m["translated"], m["compiling"]) == (3, 1, 1)
    assert m["blockers"] == [["CT101: call to `…` has no rule (unsupported API or unknown function)", 2]]
    assert "- translated: 1 (33%)" in res.stdout and "| 2 | CT101" in res.stdout


def test_coverage_tool_reports_a_run_that_ended_early(tmp_path):
    """A run that stops with an error document (here: OUT is a file) is reported as that error, not as a
    library of 0 kernels."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "ok.py").write_text("import cuda.tile as ct\n")
    out = tmp_path / "out"
    out.write_text("not a directory\n")
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "coverage.py"), str(lib), "--out", str(out),
                          "--json", str(tmp_path / "c.json")], capture_output=True, text=True, cwd=ROOT)
    (m,) = json.loads((tmp_path / "c.json").read_text())
    assert "error" in m and "kernels" not in m, m
