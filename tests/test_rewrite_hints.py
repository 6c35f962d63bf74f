"""Diagnostics suggest a rewrite where one exists (rules/rewrites.toml), and every suggestion is proved here:
the example statement gets the diagnostic with the help, and the rewritten statement translates."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from transpiler.pipeline import run
from transpiler.rewrites import suggestion, table

TEMPLATE = '''import cuda.tile as ct


@ct.kernel
def k(x, y, n, T: ct.Constant[int]):
    i = ct.bid(0)
    a = ct.load(x, index=(i,), shape=(T,))
    b = i + 1
{body}
    ct.store(y, index=(i,), tile=a)
'''


def _port(tmp_path, body: str):
    src = tmp_path / "k.py"
    src.write_text(TEMPLATE.format(body="\n".join("    " + line for line in body.split("\n"))))
    result, _ = run([src], tmp_path / "out")
    (kernel,) = result.kernels
    return kernel


@pytest.mark.parametrize("row", table(), ids=[r["match"][:40] for r in table()])
def test_each_suggested_rewrite_is_given_and_translates(tmp_path, row):
    (tmp_path / "bad").mkdir()
    bad = _port(tmp_path / "bad", row["example"])
    assert bad.status == "unsupported"
    hits = [d for d in bad.diagnostics if d.code == row["code"] and d.help == row["help"]]
    assert hits, [(d.code, d.message, d.help) for d in bad.diagnostics]
    (tmp_path / "good").mkdir()
    good = _port(tmp_path / "good", row["rewritten"])
    assert good.status == "translated", [d.text() for d in good.diagnostics]


def test_a_misspelt_call_gets_the_closest_supported_name():
    msg = "call to `{}` has no rule (unsupported API or unknown function)"
    assert suggestion("CT101", msg.format("cuda.tile.exp_2")) == "did you mean `cuda.tile.exp2`?"
    assert suggestion("CT101", msg.format("cuda.tile.frobnicate")) is None  # nothing close: no guess
    assert suggestion("CT101", msg.format("mymodule.exp2")) is None  # another module's name is not a typo of ours
    # a real name that is not supported is not a typo of a supported one (liger-kernel calls `tl.sort`)
    assert suggestion("CT101", msg.format("cuda.tile.cumprod")) is None  # not `cuda.tile.cumsum`
    assert suggestion("CT101", msg.format("triton.language.sort")) is None  # not `triton.language.sqrt`
    assert suggestion("CT100", "chained comparisons are not supported").startswith("compare twice")
    assert suggestion("CT107", "chained comparisons are not supported") is None  # the code must match too


def test_the_help_is_printed_in_text_json_and_github_formats(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.py").write_text(TEMPLATE.format(body="    c = 0 < i < n"))
    cmd = [sys.executable, "-m", "transpiler.cli", str(src), "-o", str(tmp_path / "out"), "--no-compile-check"]
    text = subprocess.run(cmd, capture_output=True, text=True).stderr
    assert "error: chained comparisons are not supported [CT100]" in text
    assert "\n    help: compare twice and combine with `&`" in text
    doc = json.loads(subprocess.run([*cmd, "--format", "json"], capture_output=True, text=True).stdout)
    (diag,) = doc["kernels"][0]["diagnostics"]
    assert diag["help"].startswith("compare twice") and diag["code"] == "CT100"
    gh = subprocess.run([*cmd, "--format", "github"], capture_output=True, text=True).stderr
    assert "title=CT100::chained comparisons are not supported (help: compare twice" in gh
