"""Reductions and scans with a combining function (`tl.reduce`, `tl.associative_scan`, tl.reduce_or, tl.xor_sum,
tl.cumprod): the operator a @triton.jit function computes (frontend/combine.py), ported with an identity exact for
it or refused with the reason; the fixture's numbers (tests/fixtures/triton_unseen/combine_fns.py) equal Triton's
through the Tile IR interpreter, and a wrong identity or a wrong operator in the Tile IR is caught by them."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from conftest import ROOT, requires_toolchain
from transpiler.frontend.combine import combine_operator, pair_selection
from transpiler.frontend.source import parse_file
from transpiler.pipeline import kernel_result

FIXTURE = ROOT / "tests" / "fixtures" / "triton_unseen" / "combine_fns.py"
HEAD = "import triton\nimport triton.language as tl\n\n\n"
DOTTED = {"tl.maximum": "triton.language.maximum", "tl.minimum": "triton.language.minimum",
          "tl.where": "triton.language.where", "max": "max", "tl.exp": "triton.language.exp"}


def _operator(body: str, params: str = "a, b") -> str:
    fn = cst.parse_module(f"def f({params}):\n    {body}\n").body[0]
    return combine_operator(fn, lambda node: DOTTED.get(cst.Module([]).code_for_node(node)))


@pytest.mark.parametrize("body, op", [
    ("return a + b", "add"), ("return b * a", "mul"), ("return (a & b)", "and"), ("return a | b", "or"),
    ("return a ^ b", "xor"), ("return a and b", "land"), ("return a or b", "lor"), ("return tl.maximum(a, b)", "max"),
    ("return tl.minimum(b, a)", "min"), ("return max(a, b)", "max"), ("return tl.where(a > b, a, b)", "max"),
    ("return tl.where(a >= b, a, b)", "max"), ("return tl.where(a < b, a, b)", "min"),
    ("return tl.where(b > a, a, b)", "min"), ("return tl.where(a < b, b, a)", "max"),
    ('"""doc"""\n    return a * b', "mul")])
def test_the_operator_of_a_combining_function(body, op):
    assert _operator(body) == op


@pytest.mark.parametrize("body, params, why", [
    ("return a + 2 * b", "a, b", "identity is not known"), ("return a - b", "a, b", "identity is not known"),
    ("return tl.where(a > b, b, b)", "a, b", "identity is not known"), ("return a + a", "a, b", "identity is not known"),
    ("return tl.exp(a) + b", "a, b", "identity is not known"),
    ("return a0 + b0, a1 + b1", "a0, a1, b0, b1", "two operands"), ("return (a + b, a)", "a, b", "tuple"),
    ("c = a + b\n    return c", "a, b", "one `return`")])
def test_a_combining_function_without_a_known_identity_is_refused(body, params, why):
    with pytest.raises(ValueError, match=why):
        _operator(body, params)


def _pair(body: str) -> tuple[str, str, str]:
    fn = cst.parse_module(f"def f(av, ai, bv, bi):\n    {body}\n").body[0]
    return pair_selection(fn, lambda node: DOTTED.get(cst.Module([]).code_for_node(node)))


KEEP = "\n    return tl.where(keep, av, bv), tl.where(keep, ai, bi)"


@pytest.mark.parametrize("body, found", [
    # torch's argmax: NaN first, ties to the first index (sglang's row argmax, written two ways)
    ("an, bn = av != av, bv != bv\n    keep = (an & ~bn) | ((an == bn) & ((av > bv) | (((av == bv) | an) & (ai < bi))))"
     + KEEP, ("max", "wins", "first")),
    ("an = av != av\n    bn = bv != bv\n    keep = (av > bv) or (an and not bn) or ((av == bv or (an and bn)) and ai < bi)"
     + KEEP, ("max", "wins", "first")),
    # NaN last: a NaN is kept only against a NaN
    ("an, bn = av != av, bv != bv\n    keep = (bn & ~an) | ((an == bn) & ((av < bv) | (((av == bv) | an) & (ai > bi))))"
     + KEEP, ("min", "loses", "last")),
    # no NaN ordering: a selection for numbers only (integer tiles; a float one is refused by the pass)
    ("keep = (av > bv) | ((av == bv) & (ai < bi))" + KEEP, ("max", "any", "first")),
    ("keep = (bv > av) | ((av == bv) & (ai > bi))" + KEEP, ("min", "any", "last")),
    # NaN tied with a NaN, but kept against a number only as the second operand: numbers only again
    ("an, bn = av != av, bv != bv\n    keep = (an & bn & (ai < bi)) | (av > bv) | ((av == bv) & (ai < bi))" + KEEP,
     ("max", "any", "first")),
])
def test_an_argmax_combine_of_value_index_pairs_is_read_by_its_cases(body, found):
    """frontend/combine.pair_selection: a combine of (value, index) pairs is read by evaluating it on every order
    relation of its operands; one that keeps a whole pair by a total preorder is an argmax / argmin."""
    assert _pair(body) == found


@pytest.mark.parametrize("body, why", [
    ("keep = av > bv" + KEEP, "not a selection"),  # ties to the second operand: depends on the tree
    ("keep = (av > bv) | ((av == bv) & (ai < bi))\n    return tl.where(keep, av, bv), tl.where(keep, bi, ai)",
     "the index of the other"),
    ("keep = (av > 0.5) | (ai < bi)" + KEEP, "outside what"),  # a constant: not an order of the operands
    ("keep = (av > ai)" + KEEP, "compares a value with an index"),
    ("return av + bv, ai", "outside what"),
])
def test_a_value_index_combine_that_is_no_argmax_is_refused(body, why):
    with pytest.raises(ValueError, match=why):
        _pair(body)


def _translate(tmp_path, body: str, files: dict | None = None):
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(HEAD + textwrap.dedent(text))
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent(body))
    fr = parse_file(path, "k.py")
    if fr.failures:
        return [d for _, _, d in fr.failures]
    results = [kernel_result(k, path, "k.py") for k in fr.kernels]
    bad = [d for kr in results for d in kr.diagnostics if kr.status != "translated"]
    # the Rust lines without the source lines written as comments
    return bad or "\n".join(line for kr in results for v in kr.manifest["views"] for line in v["body"]
                             if not line.strip().startswith("//"))


def test_an_imported_combining_function_and_its_operator(tmp_path):
    rust = _translate(tmp_path, """
    from .combiners import either


    @triton.jit
    def k(x_ptr, y_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.store(y_ptr, tl.reduce(tl.load(x_ptr + offs) > 0, 0, either).to(tl.int32))
    """, {"combiners.py": """
    @triton.jit
    def either(a, b):
        return a or b
    """})
    assert isinstance(rust, str), [d.message for d in rust]
    assert "reduce_max(" in rust and "reduce(" not in rust.replace("reduce_max(", "")


@pytest.mark.parametrize("call, code, words", [
    ("tl.cumprod(x, 0)", "TTR-SCAN", ["identity is 1", "compile_scan_op"]),
    ("tl.associative_scan(x, 0, _mx)", "TTR-SCAN", ["least value", "identity 0"]),
    ("tl.reduce(x, 0, _odd)", "TTR-REDUCE", ["`a - b`", "identity is not known"]),
    ("tl.reduce((x, x), 0, _mx)", "TTR-REDUCE", ["tuple of tiles"]),
    ("tl.reduce(x, 0, _nowhere)", "TTR-REDUCE", ["`_nowhere`", "not a @triton.jit function"]),
    # an argmax combine that does not order NaN, of a float tile: Triton's result with a NaN depends on its tree
    ("_index_of(x)", "TTR-REDUCE", ["does not order NaN"]),
    ("_index_of(x.to(tl.int32))", None, []),
    ("tl.reduce(x.to(tl.int32), 0, _bor)", None, []),
    ("tl.reduce(tl.reshape(x.to(tl.int32), (2, 8)), 1, _bor)", "TTR-REDUCE", ["rank-1 tiles only", "dim 0"]),
    ("tl.reduce(x, 0, _bor)", "TTR-REDUCE", ["needs integer or int1"]),
    ("tl.reduce(x.to(tl.int32), 0, _land)", "TTR-REDUCE", ["int1 values"])])
def test_refusals_name_the_reason(tmp_path, call, code, words):
    got = _translate(tmp_path, f"""
    @triton.jit
    def _mx(a, b):
        return tl.maximum(a, b)


    @triton.jit
    def _odd(a, b):
        return a - b


    @triton.jit
    def _bor(a, b):
        return a | b


    @triton.jit
    def _land(a, b):
        return a and b


    @triton.jit
    def _argmax(a, i, b, j):
        keep = (a > b) | ((a == b) & (i < j))
        return tl.where(keep, a, b), tl.where(keep, i, j)


    @triton.jit
    def _index_of(x):
        _, i = tl.reduce((x, tl.arange(0, 16)), 0, _argmax)
        return i | 0


    @triton.jit
    def k(x_ptr, y_ptr):
        x = tl.load(x_ptr + tl.arange(0, 16)).to(tl.float32)
        tl.store(y_ptr + tl.arange(0, 16) * 0, {call})
    """)
    if code is None:
        assert isinstance(got, str) and "|" in got, got
        return
    assert not isinstance(got, str), got
    (d,) = got
    assert d.code == code and all(w in d.message for w in words), d.message
    assert d.pos.line > 0 and d.pos.col > 0


def test_triton_spellings_of_or_and_xor(tmp_path):
    rust = _translate(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, z_ptr, N: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, N)).to(tl.int32)
        tl.store(y_ptr, x.reduce_or(0))
        tl.store(z_ptr, tl.xor_sum(x))
    """)
    assert isinstance(rust, str), [d.message for d in rust]
    assert rust.count("reduce(") == 2 and "| " in rust and "^ " in rust


# ------------------------------------------------------------------------------------------------- numbers

@pytest.fixture(scope="module")
def fixture_out(tmp_path_factory):
    from transpiler.pipeline import run, write_outputs
    out = tmp_path_factory.mktemp("combine") / "rust"
    _, outputs = run([FIXTURE], out, use_cache=False)
    write_outputs(outputs)
    return out


def _checks(out, kernel: str, texts: dict | None = None):
    import json
    import tempfile
    from pathlib import Path
    from transpiler.verify.interpret.driver import numeric_checks
    from transpiler.verify.toolchain import cargo_env, irdump_binary
    manifest = json.loads((out / "manifest.json").read_text())
    items = [(m, k) for m in manifest["modules"] for k in m["kernels"] if k["name"] == kernel]
    with tempfile.TemporaryDirectory() as tmp:
        return items, numeric_checks(out, items, irdump_binary(cargo_env()), Path(tmp), ir_texts=texts)


@requires_toolchain
@pytest.mark.parametrize("kernel", ["row_flags_kernel", "products_kernel", "int_bits_kernel", "running_flags_kernel"])
def test_fixture_numbers_equal_tritons(fixture_out, kernel):
    _, found = _checks(fixture_out, kernel)
    assert found[kernel] and all(r.verdict == "numbers_match" for r in found[kernel]), \
        [(r.case, r.verdict, r.detail) for r in found[kernel]]


@requires_toolchain
@pytest.mark.parametrize("edit", [
    # a wrong identity: 1 seeds the xor (0 is its identity), the case's values make the difference show
    ("identities=[0] : tile<16xi64> -> tile<i64> \n  (%reduce_lhs: tile<i64>, %reduce_rhs: tile<i64>) {\n    %35 = xori",
     "identities=[1] : tile<16xi64> -> tile<i64> \n  (%reduce_lhs: tile<i64>, %reduce_rhs: tile<i64>) {\n    %35 = xori"),
    # a wrong operator: the reversed or-scan as an xor-scan
    ("ori %arg21, %arg22", "xori %arg21, %arg22")])
def test_a_wrong_identity_or_operator_is_caught(fixture_out, edit):
    from transpiler.verify.interpret.cases import check_case, entry_signature
    from transpiler.verify.interpret.driver import references_for
    texts: dict = {}
    items, found = _checks(fixture_out, "int_bits_kernel", texts)
    (case_id,) = texts
    old, new = edit
    assert texts[case_id].count(old) == 1, texts[case_id]
    (module, kernel), = items
    (ref,) = references_for(fixture_out, module, kernel, None)
    sig = entry_signature((fixture_out / module["rust"]).read_text(), found["int_bits_kernel"][0].entry)
    assert check_case(texts[case_id], kernel, sig, ref).verdict == "numbers_match"
    assert check_case(texts[case_id].replace(old, new), kernel, sig, ref).verdict == "numbers_differ"
