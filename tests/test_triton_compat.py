"""Version-compat idioms of Triton libraries at module level (issue 34): `try` statements decided for Triton 3.6
(frontend/module_try.py), libdevice shims chosen by a vendor query (rules/triton_compat.toml, CT122), decorators
that replace a jit function by a module's function of the same name, libdevice.pow of an integer exponent, and
64-bit constants beyond int32. Numbers: tests/fixtures/triton_unseen/compat_try.py and compat_libm.py
(tools/triton_reference.py); the package form: tests/fixtures/triton_unseen/compat_shim."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from conftest import ROOT, requires_toolchain
from transpiler.frontend.source import parse_file
from transpiler.frontend.module_try import tried_statements, try_outcome
from transpiler.pipeline import kernel_result, run

FIXTURES = ROOT / "tests" / "fixtures" / "triton_unseen"
HEAD = "import triton\nimport triton.language as tl\n"
ALIASES = {"tl": "triton.language", "triton": "triton"}


def _dotted(node):
    if isinstance(node, cst.Name):
        return ALIASES.get(node.value, node.value)
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def _try(body: str) -> cst.Try:
    (stmt,) = cst.parse_module(textwrap.dedent(body)).body
    return stmt


@pytest.mark.parametrize("body, raises", [
    ("try:\n    f = tl.uint_to_uniform_float\nexcept AttributeError:\n    pass\n", None),
    ("try:\n    f = tl.no_such_function\nexcept AttributeError:\n    pass\n", "AttributeError"),
    ("try:\n    from triton.language.extra.cuda.libdevice import tanh\nexcept ImportError:\n    pass\n", None),
    ("try:\n    from triton.language.math import tanh\nexcept ImportError:\n    pass\n", "ImportError"),  # 3.x: none
    ("try:\n    import triton.language.no_such_module\nexcept ImportError:\n    pass\n", "ModuleNotFoundError"),
    ("try:\n    f = tl.math.tanh\nexcept AttributeError:\n    pass\n", "AttributeError"),
])
def test_a_try_body_is_run_in_thought_with_triton_3_6(body, raises):
    out = try_outcome(tuple(_try(body).body.body), _dotted)
    assert out.decided and out.raises == raises


@pytest.mark.parametrize("body", [
    "try:\n    shim = backend.get_module()\nexcept ImportError:\n    shim = tl.math\n",  # the library's own call
    "try:\n    f = tl.extra.libdevice.tanh\nexcept AttributeError:\n    pass\n",  # a submodule `import triton` leaves unbound
    "try:\n    from mylib.fast import tanh\nexcept ImportError:\n    pass\n",  # no Triton module
])
def test_what_triton_3_6_cannot_tell_is_not_decided(body):
    assert tried_statements(_try(body), _dotted) is None


def test_the_handler_that_catches_the_error_runs_after_the_statements_before_it():
    stmt = _try("""
    try:
        a = 1
        f = tl.no_such_function
        b = 2
    except ImportError:
        c = 3
    except (KeyError, AttributeError):
        d = 4
    finally:
        e = 5
    """)
    runs = tried_statements(stmt, _dotted)
    assert [r.body[0].targets[0].target.value for r in runs] == ["a", "d", "e"]
    # an error no handler catches: the module fails to import, nothing is decided
    assert tried_statements(_try("try:\n    f = tl.nope\nexcept ImportError:\n    pass\n"), _dotted) is None


def _package(tmp_path: Path, shim_module: str, kernel: str) -> tuple[Path, Path]:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "shim.py").write_text(textwrap.dedent(shim_module))
    (pkg / "k.py").write_text(HEAD + "from pkg.shim import libm\n\n" + textwrap.dedent(kernel))
    return pkg, pkg / "k.py"


SHIM = """
import triton
from pkg import vendor

try:
    libm = vendor.math_module()
except ImportError:
    try:
        libm = triton.language.extra.libdevice
    except AttributeError:
        libm = triton.language.math
"""
KERNEL = """
tanh = libm.tanh


@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, tanh(x) + libm.tanh(x))
"""


def test_a_libdevice_shim_is_libdevice_with_a_warning_naming_the_assumption(tmp_path):
    pkg, path = _package(tmp_path, SHIM, KERNEL)
    fr = parse_file(path, "pkg/k.py")
    assert not fr.failures, [d.message for _, _, d in fr.failures]
    (kern,) = fr.kernels
    kr = kernel_result(kern, path, "pkg/k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    (note,) = [d for d in kr.diagnostics if d.code == "CT122"]  # one per shim and kernel
    assert "vendor.math_module()" in note.message and "shim.py:6" in note.message and note.severity == "warning"


@pytest.mark.parametrize("other", ["pkg.fallback_math", "triton.language.extra.hip.libdevice"])
def test_a_shim_with_a_candidate_that_is_no_libdevice_stays_unknown(tmp_path, other):
    """A handler binding the name to a module of the library, or to another vendor's libdevice, leaves the name
    unknown: its uses are refused (CT101), never guessed."""
    shim = SHIM.replace("libm = triton.language.math", f"import {other} as libm")
    pkg, path = _package(tmp_path, shim, KERNEL)
    fr = parse_file(path, "pkg/k.py")
    ((name, _, diag),) = fr.failures
    assert diag.code == "CT101" and "tanh" in diag.message


DECORATED = """
def prefer(fn):
    return getattr(libm, fn.__name__, fn)


@prefer
@triton.jit
def rint(x):
    return tl.floor(x + 0.5)


@prefer
@triton.jit
def twice(x):
    return x * 2.0


@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, twice(rint(x)))
"""


def test_a_same_name_decorator_gives_the_modules_function_where_it_has_one(tmp_path):
    pkg, path = _package(tmp_path, SHIM, DECORATED)
    (kern,) = parse_file(path, "pkg/k.py").kernels
    kr = kernel_result(kern, path, "pkg/k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    body = "\n".join(line for v in kr.manifest["views"] for line in v["body"] if not line.strip().startswith("//"))
    # libdevice's rint (half to even: TTR-LIBDEVICE-EXACT compares the fraction with 0.5), not `floor(x + 0.5)`;
    # `twice` is its own body (libdevice has none of that name)
    assert "absf(" in body and "predicate::Equal" in body, body


def test_a_helper_under_an_unknown_decorator_is_refused(tmp_path):
    text = DECORATED.replace("return getattr(libm, fn.__name__, fn)", "return fn if libm else None")
    pkg, path = _package(tmp_path, SHIM, text)
    fr = parse_file(path, "pkg/k.py")
    if fr.kernels:
        kr = kernel_result(fr.kernels[0], path, "pkg/k.py")
        assert kr.status != "translated"
        diag = next(d for d in kr.diagnostics if d.severity == "error")
    else:
        ((_, _, diag),) = fr.failures
    assert diag.code == "CT112" and "@prefer" in diag.message


def _one(tmp_path: Path, body: str):
    path = tmp_path / "k.py"
    path.write_text(HEAD + "from triton.language.extra import libdevice\n\n" + textwrap.dedent(body))
    fr = parse_file(path, "k.py")
    if fr.failures:
        return None, fr.failures[0][2]
    (kern,) = fr.kernels
    return kernel_result(kern, path, "k.py"), None


@pytest.mark.parametrize("exponent, form", [("3", "powi"), ("1", "powi"), ("2.0", "pow"), ("n", "pow"),
                                            ("-2", "refused"), ("0", "refused")])
def test_libdevice_pow_of_a_literal_positive_integer_is_powi_and_of_another_exponent_pow(tmp_path, exponent, form):
    """A literal int exponent n >= 1 is __nv_powif's multiplications; a float or run-time one Tile IR's pow of the
    float operands (within powf's error bound: numbers in tests/fixtures/triton_unseen/libdevice_math.py); a
    literal integer below 1 is refused."""
    kr, diag = _one(tmp_path, f"""
    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        tl.store(x_ptr + offs, libdevice.pow(x, {exponent}))
    """)
    if form == "refused":
        diag = diag or next(d for d in kr.diagnostics if d.severity == "error")
        assert diag.code == "CT101" and f"integer exponent {exponent}" in diag.message
        return
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    body = "\n".join(line for v in kr.manifest["views"] for line in v["body"] if not line.strip().startswith("//"))
    # n - 1 + popcount - 1 + 1 multiplications (1 * x first), each flushing on float32
    muls = body.count("rounding::NearestEven, ftz::Enabled")
    assert (muls, "pow(" in body) == ({"3": 3, "1": 1}[exponent], False) if form == "powi" else (0, True), body


@requires_toolchain
def test_wide_64_bit_scalar_constants_are_typed_rank_0_constants(tmp_path):
    kr, _ = _one(tmp_path, """
    @triton.jit
    def k(x_ptr, off, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        wide = off.to(tl.int64)
        tl.store(x_ptr + offs, (wide & 0xFFFFFFFF) + (wide >> 32) + offs)
    """)
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    body = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    assert "Tile<i64, { [] }> = constant(4294967295i64, shape![]);" in body


def test_a_u64_constant_past_i64_is_refused(tmp_path):
    kr, diag = _one(tmp_path, """
    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs).to(tl.uint64)
        tl.store(x_ptr + offs, x & 0xFFFFFFFFFFFFFFF0)
    """)
    diag = diag or next(d for d in kr.diagnostics if d.severity == "error")
    assert diag.code == "CT121" and "i64::MAX" in diag.message


@requires_toolchain
def test_the_compat_shim_package_translates_and_compiles(tmp_path):
    """tests/fixtures/triton_unseen/compat_shim: absolute imports through the package's `utils/__init__.py`, a try
    body that raises under 3.6, a shim and a same-name decorator in other modules."""
    pkg = tmp_path / "compat_shim"
    shutil.copytree(FIXTURES / "compat_shim", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    result, _ = run([pkg], tmp_path / "out", use_cache=False, compile_check="on")
    bad = {k.name: [d.text() for d in k.diagnostics] for k in result.kernels if k.status != "translated"}
    assert not bad and len(result.kernels) == 4, bad
    warned = {k.name for k in result.kernels if any(d.code == "CT122" for d in k.diagnostics)}
    assert warned == {"squash_tanh_kernel", "rms_round_kernel", "preferred_kernel"}


@pytest.mark.parametrize("expr, value", [
    ("torch.finfo(torch.float32).max", 3.4028234663852886e38), ("torch.finfo(torch.float16).min", -65504.0),
    ("torch.finfo(torch.bfloat16).eps", 2.0 ** -7), ("np.finfo(np.float64).tiny", 2.0 ** -1022),
    ("torch.finfo(torch.half).smallest_normal", 2.0 ** -14), ("torch.iinfo(torch.int8).min", -128),
    ("torch.iinfo(torch.uint8).max", 255), ("np.iinfo(np.int64).max", 2 ** 63 - 1), ("torch.iinfo(torch.long).bits", 64),
    ("torch.finfo(torch.complex64).max", None), ("torch.finfo(np.float32).max", None), ("torch.iinfo(torch.float32).max", None),
])
def test_dtype_limits_are_module_constants(expr, value):
    from transpiler.frontend.module_consts import module_const_value
    aliases = {"torch": "torch", "np": "numpy"}

    def dotted(node):
        if isinstance(node, cst.Name):
            return aliases.get(node.value, node.value)
        if isinstance(node, cst.Attribute):
            base = dotted(node.value)
            return f"{base}.{node.attr.value}" if base else None
        return None
    got = module_const_value(cst.parse_expression(expr), {}, lambda n: False, dotted, "triton.language")
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("mode, flag, count", [("tl.PropagateNan.ALL", "nan::Enabled", 2),
                                               ("tl.PropagateNan.NONE", "nan::Disabled", 1), ("True", None, 0)])
def test_propagate_nan_all_is_maxf_with_nan_propagation(tmp_path, mode, flag, count):
    """Numbers: tests/fixtures/triton_unseen/propagate_nan.py (a NaN operand kept, or dropped)."""
    kr, diag = _one(tmp_path, f"""
    @triton.jit
    def k(x_ptr, lim, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        tl.store(x_ptr + offs, tl.minimum(x, lim, propagate_nan={mode}) + tl.maximum(lim, 0.0, propagate_nan={mode}))
    """)
    if flag is None:
        diag = diag or next(d for d in kr.diagnostics if d.severity == "error")
        assert diag.code == "CT100" and "PropagateNan" in diag.message
        return
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    body = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    # the scalar maximum: a rank-0 maxf where it propagates NaN, else the scalar `max`
    assert body.count("minf(") == 1 and body.count(flag) == count, body


@pytest.mark.parametrize("body", [
    "    if torch.version.hip:\n        return True\n    else:\n        return False\n",
    "    if torch.version.hip:\n        return True\n    return False\n",
])
def test_a_dtype_chosen_by_a_platform_function_is_the_nvidia_arm(tmp_path, body):
    """`_FP8 = tl.float8e4b8 if is_gfx942() else tl.float8e4nv` with `is_gfx942` an `if` on torch.version.hip
    (rules/platform.toml): the NVIDIA arm, float8e4nv (e4m3fn); numbers: compat_try.fp8_bits_kernel."""
    path = tmp_path / "k.py"
    path.write_text("import torch\n" + HEAD + "\n\ndef is_gfx942():\n" + body + textwrap.dedent("""

    _FP8 = tl.float8e4b8 if is_gfx942() else tl.float8e4nv


    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        bits = tl.load(x_ptr + offs).to(tl.uint8)
        tl.store(y_ptr + offs, bits.to(_FP8, bitcast=True).to(tl.float32))
    """))
    (kern,) = parse_file(path, "k.py").kernels
    kr = kernel_result(kern, path, "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    body = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    assert "Tile<f8e4m3fn," in body, body


def test_a_name_a_failed_import_binds_to_none_is_refused_with_the_reason(tmp_path):
    """`try: from triton.language.extra.intel import libdevice / except ImportError: libdevice = None` (a kernel
    for another vendor's Triton): under Triton 3.6 the handler runs, and a kernel calling `libdevice.div_rn` is
    told so."""
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent("""
    try:
        from triton.language.extra.intel import libdevice  # an XPU build
    except ImportError:
        libdevice = None


    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, libdevice.div_rn(tl.load(x_ptr + offs), 3.0))
    """))
    ((_, _, diag),) = parse_file(path, "k.py").failures
    assert diag.code == "CT101" and "`libdevice` is None" in diag.message and "ModuleNotFoundError" in diag.message
    assert "`from triton.language.extra.intel import libdevice`" in diag.message, diag.message


@pytest.mark.parametrize("test, ok", [
    ("isinstance(m_ptr, tl.tensor) and m_ptr.dtype.is_ptr()", True),  # a pointer: the load arm only
    ("isinstance(BLOCK, tl.constexpr)", True), ("not isinstance(m_ptr, tl.constexpr)", True),
    ("isinstance(n, tl.tensor)", False),  # an int argument of 1 is a constexpr in Triton: not decided
])
def test_type_tests_triton_decides_when_it_compiles(tmp_path, test, ok):
    """Numbers: compat_try.device_count_rows_kernel (the row count read from a device tensor)."""
    kr, diag = _one(tmp_path, f"""
    @triton.jit
    def k(x_ptr, m_ptr, n, BLOCK: tl.constexpr):
        if {test}:
            m = tl.load(m_ptr)
        else:
            m = m_ptr
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2.0, mask=offs < m + n)
    """)
    if not ok:
        diag = diag or next(d for d in kr.diagnostics if d.severity == "error")
        assert diag.code == "CT101" and "equal to 1 as a constexpr" in diag.message
        return
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]


def test_len_of_a_tuple_and_of_a_constexpr_tuple(tmp_path):
    kr, _ = _one(tmp_path, """
    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * len((1, 2, 3)))
    """)
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    assert any("3i32" in line or "3.0f32" in line for v in kr.manifest["views"] for line in v["body"])
    kr, diag = _one(tmp_path, """
    @triton.jit
    def k(x_ptr, SIZES: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * len(SIZES))
    """)
    diag = diag or next(d for d in kr.diagnostics if d.severity == "error")
    assert diag.code == "CT101" and "constexpr tuple" in diag.message
