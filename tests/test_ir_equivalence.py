"""Every corpus kernel: the generated crate builds and each entry's Tile IR equals cuTile Python's,
for every specialization and for f16, bf16 and f32 where the kernel is dtype-generic."""

from __future__ import annotations

import json

import pytest

from conftest import requires_toolchain

pytestmark = requires_toolchain

from conftest import CORPUS
from transpiler.frontend.source import parse_file

CORPUS_KERNELS = sorted(k.name for f in sorted((CORPUS / "cutile").rglob("*.py"))
                        for k in parse_file(f, f.name).kernels)


def test_corpus_is_what_we_claim(corpus_out):
    manifest = json.loads((corpus_out / "manifest.json").read_text())
    names = sorted(k["name"] for m in manifest["modules"] for k in m["kernels"])
    assert names == CORPUS_KERNELS
    assert len(names) >= 40


@pytest.mark.parametrize("kernel", CORPUS_KERNELS)
def test_kernel_equivalent(corpus_verdicts, kernel):
    v = next(v for v in corpus_verdicts if v.kernel == kernel)
    bad = [f"{c.entry} {c.spec} {c.dtype}: {c.verdict}\n{c.detail}" for c in v.checks if c.verdict != "equivalent"]
    assert v.verdict == "equivalent", v.reason + "\n".join(bad)
    dtypes = {c.dtype for c in v.checks}
    generic = any("E" in e["generics"] for e in _entries(kernel))
    second = any("E2" in e["generics"] for e in _entries(kernel))  # and E2's mixed checks
    # (three generics: every combination the symbol exports, manifest `element_combinations`)
    bounded = {"+".join(c) for c in _MANIFEST_COMBOS.get(kernel, []) if len(set(c)) > 1}
    # (two generics: every pair, each exported by the symbol: f16+bf16 ... f32+bf16)
    pairs = {f"{a}+{b}" for a in ("f16", "bf16", "f32") for b in ("f16", "bf16", "f32") if a != b}
    want = {"f16", "bf16", "f32"} | (bounded or pairs if second else set()) if generic else {"f32"}
    assert dtypes == want, dtypes
    # specialization coverage: every constant of every entry at two values at least, or the reason why not
    cov = v.coverage()
    for c in v.checks[0].spec:
        assert len(cov["values"][c]) >= 2 or any(u.startswith(c + " ") for u in v.unprobed), (c, cov)
    assert all("rejects" in why for why in v.unprobed.values()), v.unprobed


def _entries(kernel):
    return _MANIFEST_ENTRIES.get(kernel, [])


_MANIFEST_ENTRIES: dict = {}
_MANIFEST_COMBOS: dict = {}


@pytest.fixture(autouse=True, scope="module")
def _load_entries(corpus_out):
    manifest = json.loads((corpus_out / "manifest.json").read_text())
    for m in manifest["modules"]:
        for k in m["kernels"]:
            _MANIFEST_ENTRIES[k["name"]] = k["entries"]
            _MANIFEST_COMBOS[k["name"]] = k.get("element_combinations", [])


def test_both_output_forms_are_exercised(corpus_out):
    manifest = json.loads((corpus_out / "manifest.json").read_text())
    forms = {o["form"] for m in manifest["modules"] for k in m["kernels"] for e in k["entries"] for o in e["outputs"]}
    assert forms == {"checked", "unchecked"}


def test_structural_variants_are_each_verified(corpus_verdicts):
    v = next(v for v in corpus_verdicts if v.kernel == "partial_sum")
    assert {c.entry for c in v.checks} == {"partial_sum__axis_eq_0", "partial_sum__not_axis_eq_0"}
