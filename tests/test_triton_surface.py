"""Triton's whole `triton.language` (3.6: rules/triton_language_3.6.txt, generated once from the wheel's sources)
against the rules: each public function, tensor method and libdevice function has a rule (rules/triton.toml),
is read by the frontend, or is refused with a reason (rules/triton_surface.toml) that its CT101 says."""

from __future__ import annotations

import fnmatch
import textwrap
import tomllib

from conftest import ROOT
from transpiler.frontend import triton as T
from transpiler.frontend.source import parse_file

RULES = ROOT / "rules"
NAMES = [l.strip() for l in (RULES / "triton_language_3.6.txt").read_text().splitlines()
         if l.strip() and not l.startswith("#")]
SURFACE = tomllib.loads((RULES / "triton_surface.toml").read_text())


def _ruled() -> set[str]:
    rules = tomllib.loads((RULES / "triton.toml").read_text())["rule"]
    return {s for r in rules for s in r["source"]} | T.MEMORY_CALLS | T.HINT_CALLS | T.NO_OP_CALLS


def _homes(name: str) -> set[str]:
    leaf = name.rsplit(".", 1)[-1]
    if name.startswith(f"{T.TL}.extra.libdevice."):
        return {name, f"{T.TL}.extra.cuda.libdevice.{leaf}", f"{T.TL}.math.{leaf}"}
    return {name}


def test_every_triton_language_name_has_a_rule_or_a_reason():
    ruled = _ruled()
    frontend = set(SURFACE["frontend"]["names"]) | {f"method:{m}" for m in SURFACE["frontend"]["method_forms"]}
    missing = [n for n in NAMES if not (_homes(n) & ruled) and n not in frontend and n not in T.REFUSED]
    assert not missing, missing
    assert len(NAMES) > 390  # the list is the whole namespace, not a sample
    # a refusal never shadows a rule, and every refusal pattern names something
    assert not [n for n in T.REFUSED if n in ruled]
    for group in SURFACE["refused"]:
        assert all(any(fnmatch.fnmatchcase(n, p) for n in NAMES) for p in group["names"]), group["names"]
        assert len(group["reason"]) > 40


def test_frontend_names_are_read_by_the_frontend():
    src = (ROOT / "transpiler" / "frontend" / "triton.py").read_text()
    for n in SURFACE["frontend"]["names"]:
        leaf = n.rsplit(".", 1)[-1].split(":")[-1]
        assert leaf in T.TRITON_DTYPES or f'"{leaf}"' in src or f"{leaf}_like" in src or f".{leaf}" in src, n
    for m in SURFACE["frontend"]["method_forms"]:
        assert m in T.METHOD_FORMS and any(f"{T.TL}.{m}" in r for r in _ruled()), m


def test_a_refused_name_says_why_and_a_method_form_is_its_function(tmp_path):
    path = tmp_path / "k.py"
    path.write_text("import triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice\n\n\n"
                    + textwrap.dedent("""
    @triton.jit
    def refused(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, libdevice.erfinv(tl.load(x_ptr + offs)))


    @triton.jit
    def method_form(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK) + triton.cdiv(n, BLOCK)  # a module function is no method
        tl.store(x_ptr + offs, tl.load(x_ptr + offs).exp().sqrt())
    """))
    fr = parse_file(path, "k.py")
    (failure,) = [d for _, _, d in fr.failures]
    assert failure.code == "CT101" and T.REFUSED[f"{T.TL}.extra.libdevice.erfinv"] in failure.message
    assert [k.name for k in fr.kernels] == ["method_form"]


def test_reductions_with_a_combining_function_are_ruled_not_refused():
    """tl.reduce / tl.associative_scan and Triton's own forms of them have rules (TTR-REDUCE, TTR-SCAN): the passes
    port the combining function's operator or refuse it with the reason (tests/test_combine_fns.py)."""
    ruled = _ruled()
    for n in ("reduce", "associative_scan", "reduce_or", "xor_sum", "cumprod"):
        assert {f"{T.TL}.{n}", f"method:{n}"} <= ruled and f"{T.TL}.{n}" not in T.REFUSED, n


def test_flip_sort_and_topk_are_ruled_and_the_empty_sort_method_is_refused(tmp_path):
    """tl.flip, tl.sort and tl.topk have rules (TTR-FLIP, TTR-SORT, TTR-TOPK: emulations with the ops cuTile Rust
    has, checked by their numbers in tests/fixtures/triton_unseen/flips.py); `x.flip(dim)` is Triton's member
    form, but Triton 3.6's `x.sort()` is an empty stub (it gives None), so that method is refused with the reason."""
    ruled = _ruled()
    for n in ("flip", "sort", "topk"):
        assert f"{T.TL}.{n}" in ruled and f"{T.TL}.{n}" not in T.REFUSED, n
    assert "method:flip" in ruled and "method:sort" not in ruled and "empty stub" in T.REFUSED["method:sort"]
    assert f"{T.TL}.bitonic_merge" in T.REFUSED
    path = tmp_path / "k.py"
    path.write_text("import triton\nimport triton.language as tl\n\n\n" + textwrap.dedent("""
    @triton.jit
    def stub_sort(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs).sort())
    """))
    (failure,) = [d for _, _, d in parse_file(path, "k.py").failures]
    assert failure.code == "CT101" and "empty stub" in failure.message
