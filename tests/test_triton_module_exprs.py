"""Module-level values a Triton library computes with Python at import (tests/fixtures/triton_unseen/
module_exprs.py, env_choice/): numeric constants evaluated as Python evaluates them (module_consts.py), and
function aliases chosen by environment variables, ported for an unset environment with a CT118 warning."""

from __future__ import annotations

import shutil

import libcst as cst
import pytest

from conftest import ROOT
from transpiler.frontend.source import parse_file
from transpiler.frontend.module_consts import module_const_value
from transpiler.pipeline import kernel_result, run

FIXTURES = ROOT / "tests" / "fixtures" / "triton_unseen"


class _Constexpr:  # what `tl.constexpr(v)` is to Python: an object with `.value`
    def __init__(self, value):
        self.value = value


_EXPRS = ["_P.value.bit_length() - 1", "float(1 << 32)", "1.0 / float(1 << 32)", "2 ** 20", "2 ** -3", "-2 ** 2",
          "max(abs(-_P.value), int(3.9)) - 1", "min(7, _N, 3.5)", "(_N | 0x30) ^ 5 & 3", "~_N >> 1", "round(2.5)",
          "int(-7 / 2)", "-7 // 2", "-7 % 3", "7.5 % -2", "_N if _N > 3 else -_N", "0 < _N <= 12 and _N",
          "not _N or 4", "pow(3, 4)", "abs(-0.0)", "1e308 * 10", "(0x7F + 1) << 3", "True + True", "2 ** 0.5"]
_NONE = ["_N.value", "1 / 0", "(-8) ** 0.5", "1 << 100000", "2 ** 100000", "_N.bit_length", "(1.5).bit_length()",
         "open('x')", "len('ab')", "_UNKNOWN + 1", "'a' * 3", "min()", "1 >> -1"]


@pytest.mark.parametrize("text", _EXPRS)
def test_a_module_constant_is_what_python_computes(text):
    """module_const_value of an expression over a constexpr object `_P` (64) and a plain int `_N` (12) is the
    value Python gives the same text: same type, same bits."""
    want = eval(text, {"__builtins__": {"float": float, "int": int, "abs": abs, "max": max, "min": min, "round": round,
                                        "pow": pow}, "_P": _Constexpr(64), "_N": 12})  # noqa: S307 - our own table
    got = module_const_value(cst.parse_expression(text), {"_P": 64, "_N": 12}, lambda n: n == "_P",
                             lambda n: n.value if isinstance(n, cst.Name) else None, "triton.language")
    assert type(got) is type(want) and (got == want or repr(got) == repr(want)), (text, got, want)


@pytest.mark.parametrize("text", _NONE)
def test_a_module_expression_python_refuses_or_cannot_bound_has_no_value(text):
    """A plain int's `.value`, a zero division, a complex power, a huge shift, an unknown name or builtin: no
    value (the kernel reading the name gets CT103 at the use, never a guess)."""
    got = module_const_value(cst.parse_expression(text), {"_P": 64, "_N": 12}, lambda n: n == "_P",
                             lambda n: n.value if isinstance(n, cst.Name) else None, "triton.language")
    assert got is None, (text, got)


def test_module_constants_computed_at_import_reach_the_kernel(tmp_path):
    """tests/fixtures/triton_unseen/module_exprs.py: the shift, mask, window and float scale the module computes
    are the kernel's constants (6, 63, 1024 and 2**-32 as f32)."""
    path = tmp_path / "module_exprs.py"
    shutil.copy(FIXTURES / "module_exprs.py", path)
    (k,) = parse_file(path, "module_exprs.py").kernels
    kr = kernel_result(k, path, "module_exprs.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    rust = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    for value in ("constant(6i64", "constant(63i64", "constant(1024i64", "2.3283064365386963e-10f32"):
        assert value in rust, value
    # `.value` of a name bound to a plain int is Python's AttributeError: no value, refused at the use
    path.write_text(path.read_text().replace("_PAGE = tl.constexpr(64)", "_PAGE = 64"))
    (k,) = parse_file(path, "module_exprs.py").kernels
    d = next(x for x in kernel_result(k, path, "module_exprs.py").diagnostics if x.severity == "error")
    assert d.code == "CT103" and "_PAGE_SHIFT" in d.message, d.text()


def test_functions_chosen_by_the_environment_follow_its_defaults_with_a_warning(tmp_path):
    """tests/fixtures/triton_unseen/env_choice: `exp`, `log2` (an `if` on os.environ.get) and `exp2` (a
    configuration function's conditional expression) imported by absolute name from a namespace folder of the
    package are the functions of an unset environment, and the kernel's CT118 warnings name each variable.
    A default that takes the other arm gives the other function."""
    pkg = tmp_path / "env_choice"
    shutil.copytree(FIXTURES / "env_choice", pkg)
    result, _ = run([pkg], tmp_path / "out", use_cache=False, compile_check="off")
    (kr,) = result.kernels
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    notes = sorted((d.severity, d.code, d.message.split("`")[1], d.message.split("`")[3], d.message.split("`")[5])
                   for d in kr.diagnostics)
    assert notes == [("warning", "CT118", "exp", "triton.language.exp", "ENV_CHOICE_FAST_OPS"),
                     ("warning", "CT118", "exp2", "triton.language.math.exp2", "ENV_CHOICE_FAST_EXP2"),
                     ("warning", "CT118", "log2", "triton.language.log2", "ENV_CHOICE_FAST_OPS")], notes
    assert all(d.pos.path.endswith("softplus_rows.py") and d.pos.line == 13 for d in kr.diagnostics)
    fast = pkg / "ops" / "fast.py"
    fast.write_text(fast.read_text().replace('"ENV_CHOICE_FAST_OPS", "0"', '"ENV_CHOICE_FAST_OPS", "1"'))
    result, _ = run([pkg], tmp_path / "out2", use_cache=False, compile_check="off")
    (kr,) = result.kernels
    assert "`exp` is `triton.language.extra.libdevice.fast_expf`" in "\n".join(d.message for d in kr.diagnostics)


def test_pow_of_constants_is_what_python_computes_and_of_a_tile_is_refused(tmp_path):
    """tests/fixtures/triton_unseen/const_pow.py: `HEAD_DIM ** -0.5` is a derived float whose f64 verify's Python
    and the C symbol's Rust compute as CPython's `**` does (then f32, as Triton rounds a Python float); literals
    fold; `BLOCK ** 2` is an int. `**` of a tile, and an int to an int constexpr's power (int or float by the
    sign), are refused at their position with TTR-POW."""
    import subprocess
    import struct

    from transpiler.emit.ffi import rust_const_expr
    from transpiler.verify.specs import const_value

    path = tmp_path / "k.py"
    src = (FIXTURES / "const_pow.py").read_text()
    path.write_text(src)
    (k,) = parse_file(path, "k.py").kernels
    kr = kernel_result(k, path, "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    derived = {n: e for en in kr.manifest["entries"] for n, e in en.get("derived", {}).items()}
    assert derived == {"F_HEAD_DIM_POW_N0P5": "float(pow(HEAD_DIM, -0.5))", "BLOCK_POW_2": "((BLOCK) * (BLOCK))"}
    rust = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    assert "0.125f32" in rust and "constant(1048576i32" in rust
    values = [1, 2, 3, 7, 48, 64, 80, 96, 100, 128, 192, 256, 576, 1000]
    for v in values:
        assert const_value("float(pow(HEAD_DIM, -0.5))", {"HEAD_DIM": v}) == v ** -0.5, v
        assert const_value("((BLOCK) * (BLOCK))", {"BLOCK": v}) == v ** 2, v
    if shutil.which("rustc") is not None:
        expr = rust_const_expr("float(pow(HEAD_DIM, -0.5))", {"HEAD_DIM"}, "float")
        lines = [f'println!("{{}}", {{ let HEAD_DIM: i64 = {v}i64; ({expr}).to_bits() }});' for v in values]
        (tmp_path / "m.rs").write_text("#![allow(non_snake_case, unused_braces, unused_parens)]\nfn main() {\n"
                                       + "\n".join(lines) + "\n}\n")
        subprocess.run(["rustc", "-O", "-o", str(tmp_path / "m"), str(tmp_path / "m.rs")], check=True, cwd=tmp_path)
        out = subprocess.run([str(tmp_path / "m")], check=True, capture_output=True, text=True).stdout.split()
        assert [int(x) for x in out] == [struct.unpack("<Q", struct.pack("<d", v ** -0.5))[0] for v in values]
    for old, new, at in (("sm_scale = HEAD_DIM ** -0.5", "sm_scale = q ** 2", "q ** 2"),
                         ("+ BLOCK ** 2", "+ 2 ** BLOCK", "2 ** BLOCK")):
        path.write_text(src.replace(old, new))
        (k,) = parse_file(path, "k.py").kernels
        d = next(x for x in kernel_result(k, path, "k.py").diagnostics if x.severity == "error")
        line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if at in t)
        assert d.code == "TTR-POW" and "tl.exp2" in d.message and d.pos.line == line, d.text()


def test_a_function_constexpr_called_under_its_none_test_ports_the_none_variant(tmp_path):
    """tests/fixtures/triton_unseen/optional_fn.py: `SCORE_FN: tl.constexpr = None` called only under `if SCORE_FN
    is not None:` has one entry, the None one (a CT103 warning says the other is not ported); the wrapper runs it
    for None and refuses a function or any other value (it never runs the None variant in their place)."""
    from test_abi import FakeCudaArray, load_package
    from transpiler.pipeline import write_outputs

    src = tmp_path / "optional_fn.py"
    shutil.copy(FIXTURES / "optional_fn.py", src)
    result, outputs = run([src], tmp_path / "out", use_cache=False, compile_check="off")
    write_outputs(outputs)
    (kr,) = result.kernels
    assert kr.status == "translated" and kr.entries == ["scored_rows_kernel__not_score_fn_is_given"], kr.entries
    (w,) = kr.diagnostics
    assert (w.severity, w.code, w.pos.line) == ("warning", "CT103", 14) and "`SCORE_FN` is called" in w.message
    pkg = load_package(tmp_path / "out")
    rt, spec = pkg._runtime, pkg.optional_fn.SPEC_scored_rows_kernel
    x, y = (FakeCudaArray((64,), ptr=0x7F0000000000 + 4096 * i) for i in range(2))
    plan = rt.plan(spec, (x, y, 64, 0.5, 256, None), (1,))
    assert plan.consts["SCORE_FN_IS_GIVEN"] == 0 and plan.entry == 0
    with pytest.raises(rt.ArgumentTypeError, match="constant `SCORE_FN` must be int, got <function"):
        rt.plan(spec, (x, y, 64, 0.5, 256, lambda s, o: s), (1,))
    with pytest.raises(rt.ArgumentError, match="no variant"):
        rt.plan(spec, (x, y, 64, 0.5, 256, 3), (1,))
