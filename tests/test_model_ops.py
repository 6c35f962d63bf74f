"""Model ops that no frontend emits yet: `truncdiv` and `truncmod`, C's integer division and remainder
(rounding toward zero, the remainder with the dividend's sign), for the Triton frontend; `floordiv` and
`mod` keep Python's meaning. The kernels are models built by hand: inference, lowering, and a crate with
them that compiles."""

from __future__ import annotations

import dataclasses
import textwrap

import pytest

from conftest import requires_toolchain
from transpiler.diagnostics import TranspileError
from transpiler.emit.lower import lower_kernel
from transpiler.model.ir import Assign, Eval, Kernel, Lit, Name, Op, Param, Pos, TupleExpr
from transpiler.pipeline import translate_kernel

P = Pos("trunc.py", 4, 0)


def op(name: str, *args, rule: str = "") -> Op:
    return Op(name, args, P, rule=rule)


def trunc_kernel(dtype: str = "i32", divisor: int = -3) -> Kernel:
    """q = x / divisor + n / 2 and r = x % n + n % 5 in C: tile by literal, tile by scalar, scalar by literal."""
    idx = TupleExpr((op("bid", Lit(0, P), rule="CTR-BID"),), P)
    params = (Param("x", "array", P, dtype=dtype, rank=1), Param("q", "array", P, dtype=dtype, rank=1),
              Param("r", "array", P, dtype=dtype, rank=1), Param("n", "scalar", P, dtype=dtype),
              Param("BLOCK", "const", P, const_type="int"))
    x, n = Name("x", P), Name("n", P)
    body = (Assign(("t",), op("load", x, idx, TupleExpr((Name("BLOCK", P),), P), rule="CTR-LOAD"), P),
            Eval(op("store", Name("q", P), idx, op("add", op("truncdiv", Name("t", P), Lit(divisor, P)),
                                                    op("truncdiv", n, Lit(2, P))), rule="CTR-STORE"), P),
            Eval(op("store", Name("r", P), idx, op("add", op("truncmod", Name("t", P), n),
                                                    op("truncmod", n, Lit(5, P))), rule="CTR-STORE"), P))
    return Kernel("trunc", "trunc", "trunc.py", P, params, body)


def test_truncdiv_and_truncmod_lower_to_divi_toward_zero_and_remi():
    (v,) = translate_kernel(trunc_kernel())
    body = "\n".join(lower_kernel(v).body)
    assert body.count("rounding::Zero)") == 2 and body.count("remi(") == 2, body
    # C's meaning only: none of the floor division / Python remainder sequence
    assert "NegativeInf" not in body and "cmpi(" not in body and "select(" not in body, body


def test_truncdiv_on_unsigned_and_64_bit_integers():
    for dt in ("u32", "i64"):
        (v,) = translate_kernel(trunc_kernel(dt, divisor=3))
        body = "\n".join(lower_kernel(v).body)
        assert f"Tile<{dt}, {{ [] }}> = divi(" in body and "rounding::Zero)" in body, body


def test_truncdiv_and_truncmod_refuse_float_operands():
    for o in ("truncdiv", "truncmod"):
        k = trunc_kernel("f32")
        load, store_q, store_r = k.body
        q, idx, _ = store_q.value.args
        k = dataclasses.replace(k, body=(load, Eval(op("store", q, idx, op(o, Name("t", P), Lit(2, P))), P), store_r))
        with pytest.raises(TranspileError) as err:
            translate_kernel(k)
        assert err.value.diagnostic.code == "CT101" and f"`{o}`" in err.value.diagnostic.message


def test_truncdiv_types_an_unannotated_parameter_as_an_integer():
    k = trunc_kernel()
    k = dataclasses.replace(k, params=tuple(dataclasses.replace(p, kind="unknown", dtype="") if p.name == "n" else p
                                            for p in k.params))
    (v,) = translate_kernel(k)
    assert next(p for p in v.params if p.name == "n").dtype == "i32"


@requires_toolchain
def test_a_crate_with_truncdiv_and_truncmod_compiles(tmp_path, monkeypatch):
    """The hand-built kernel goes through the whole pipeline in place of a source file's kernel, and
    `cargo check` of the crate passes (the kernel would be reported `error`, CT007, if its Rust did not
    compile)."""
    import transpiler.frontend.source as frontend
    from transpiler.pipeline import run
    src = tmp_path / "src"
    src.mkdir()
    (src / "trunc.py").write_text(textwrap.dedent("""\
        import cuda.tile as ct

        @ct.kernel
        def trunc(x, q, r, n: int, BLOCK: ct.Constant[int]):
            ct.store(q, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(BLOCK,)))
        """))
    real = frontend.parse_file

    def parse_file(path, display, **kw):
        fr = real(path, display, **kw)
        (k,) = fr.kernels
        model = trunc_kernel()
        fr.kernels = [dataclasses.replace(k, params=tuple(dataclasses.replace(p, pos=q.pos) for p, q in
                                                          zip(model.params, k.params)), body=model.body)]
        return fr
    monkeypatch.setattr(frontend, "parse_file", parse_file)
    result, outputs = run([src], tmp_path / "out", use_cache=False, compile_check="on")
    (k,) = result.kernels
    assert k.status == "translated", [d.text() for d in k.diagnostics]
    kernel_rs = next(text for path, text in outputs.items() if path.name == "kernel.rs")
    assert kernel_rs.count("rounding::Zero)") == 2 and kernel_rs.count("remi(") == 2, kernel_rs
