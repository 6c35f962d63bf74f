"""libdevice functions ported as libdevice computes them (rules/triton_libdevice.py; issue 34): `tl.erf` /
`tl.math.erf` / `libdevice.erf` / `x.erf()` as `__nv_erff`'s operations, rounded alike; `libdevice.log1p` as
`__nv_log1pf`'s, `libdevice.expm1` as `__nv_expm1f`'s.

- the constants of the ports are float32 values (written as decimals, read by Rust and by the frontend exactly);
- the interpreter's fma rounds once (a plain f64 sum would round twice) and flushes its inputs where the op says;
- the erf port, interpreted, stays within erff's documented error (CUDA Math API: 2 ulp) of the correctly rounded
  erf over normal float32 inputs (log1p, expm1: 1 ulp), and keeps libdevice's flush to zero: erf of a subnormal x is a zero of x's sign
  (fma.rn.ftz flushes x), not ~1.128 x (Triton's interpreter, which calls math.erf, gives the latter);
- the frontend: every home of erf is ported, float32 only (other dtypes of a generic E have no entry; a float64
  or float16 erf is refused, CT101).

The interpreter computes exp2 correctly rounded, where the GPU's ex2.approx.ftz.f32 (MUFU.EX2) may differ in the
last bits: the bound checked here is the port's arithmetic with an exact exp2, the GPU's numbers are libdevice's
own (same instructions: docs/supported-triton.md, "libdevice functions").
"""

from __future__ import annotations

import ast
import math
import textwrap
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, requires_toolchain
from transpiler.frontend.source import parse_file
from transpiler.verify.interpret.ops_arith import fma_rn

LIBRARY = ROOT / "rules" / "triton_libdevice.py"
HEAD = "import triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice\n\n\n"


def test_constants_of_the_ports_are_float32_values():
    floats = [n.value for n in ast.walk(ast.parse(LIBRARY.read_text()))
              if isinstance(n, ast.Constant) and isinstance(n.value, float)]
    assert len(floats) >= 14
    assert [v for v in floats if float(np.float32(v)) != v] == []


def _exact_f32(a, b, c) -> np.float32:
    v = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    f = np.float32(float(v))
    near = [f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf))]
    return min(near, key=lambda x: (abs(Fraction(float(x)) - v), int(np.array(x).view(np.int32)) & 1))


def test_fma_rounds_once():
    # (1 + 2^-23) 2^-24 * (1 - 2^-23) + (1 + 2^-23): the f64 sum is the f32 midpoint 1 + 3 * 2^-24 (the exact sum
    # is 2^-70 below it), which a second rounding takes to 1 + 2^-22; rounded once it is 1 + 2^-23
    a, b, c = np.float32((1 + 2.0 ** -23) * 2.0 ** -24), np.float32(1 - 2.0 ** -23), np.float32(1 + 2.0 ** -23)
    assert np.float32(np.float64(a) * np.float64(b) + np.float64(c)) == np.float32(1 + 2.0 ** -22)
    assert fma_rn(np.array([a]), np.array([b]), np.array([c]), np.float32)[0] == np.float32(1 + 2.0 ** -23)
    rng = np.random.default_rng(7)
    a = rng.standard_normal(3000).astype(np.float32)
    b = (rng.standard_normal(3000) * 2.0 ** rng.integers(-30, 30, 3000)).astype(np.float32)
    c = (rng.standard_normal(3000) * 2.0 ** rng.integers(-30, 30, 3000)).astype(np.float32)
    got = fma_rn(a, b, c, np.float32)
    assert all(got[i] == _exact_f32(a[i], b[i], c[i]) for i in range(3000))
    inf = np.float32(np.inf)
    special = fma_rn(np.array([inf, 0.0, 1.0], np.float32), np.array([1.0, inf, 1.0], np.float32),
                     np.array([1.0, 1.0, np.nan], np.float32), np.float32)
    assert special[0] == inf and np.isnan(special[1]) and np.isnan(special[2])


# ---------------------------------------------------------------------------------------------- frontend

def _parse(tmp_path: Path, body: str):
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent(body))
    return parse_file(path, "k.py")


def test_every_home_of_erf_is_the_port(tmp_path):
    fr = _parse(tmp_path, """
    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        y = tl.erf(x) + tl.math.erf(x) + libdevice.erf(x) + x.erf()
        tl.store(x_ptr + offs, y)
    """)
    assert not fr.failures, [d.message for _, _, d in fr.failures]


def test_locals_of_the_ports_never_take_a_kernel_pointers_name(tmp_path):
    """A kernel whose pointers are named like the ports' locals (`q`, `p`, `e`, lmdeploy's gated delta has a
    pointer `q`): the inlined locals are the port's own (prefixed), not a rebinding of the kernel's pointer."""
    fr = _parse(tmp_path, """
    @triton.jit
    def k(q, p, e, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(q + offs)
        tl.store(p + offs, libdevice.log1p(x) + libdevice.expm1(x) + tl.erf(x) + libdevice.tanh(x))
        tl.store(e + offs, x)
    """)
    assert not fr.failures, [d.message for _, _, d in fr.failures]


def test_expm1s_rounding_to_an_integer_subtracts_the_rounded_product(tmp_path):
    """rint(y) from floor needs d = y - floor(y) of the rounded y = x log2(e): the multiply is never fused into an
    fma with the subtraction (which would round x log2(e) - floor(y) once, and move ties)."""
    import re
    from transpiler.pipeline import run
    path = tmp_path / "k.py"
    path.write_text(KERNELS)
    result, outputs = run([path], tmp_path / "out", use_cache=False, compile_check="off")
    rust = next(text for f, text in outputs.items() if f.name == "kernel.rs")
    y = re.search(r"let (_expm1\d+_y): Tile<f32, \{ \[BLOCK\] \}> = _expm1\d+_x \* (\w+|broadcast_scalar\([^;]*\));", rust)
    assert y and re.search(rf"let _expm1\d+_d: Tile<f32, \{{ \[BLOCK\] \}}> = {y.group(1)} - _expm1\d+_f;", rust)


@pytest.mark.parametrize("dtype,words", [("tl.float64", "`erf` of float64 (libdevice's `__nv_erf`) is not ported"),
                                         ("tl.float16", "`erf` of f16: Triton takes float32 and float64")])
def test_erf_of_another_dtype_is_refused(tmp_path, dtype, words):
    from transpiler.pipeline import run
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent(f"""
    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.erf(tl.load(x_ptr + offs).to({dtype})).to(tl.float32))
    """))
    result, _ = run([path], tmp_path / "out", use_cache=False, compile_check="off")
    (k,) = result.kernels
    assert k.status != "translated" and any(d.code == "CT101" and words in d.message for d in k.diagnostics), \
        [d.text() for d in k.diagnostics]


# ---------------------------------------------------------------------------------------------- numbers

def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in float32 units in the last place (on the ordered integer line of the bit patterns)."""
    def key(v):
        i = v.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(key(got) - key(want))


KERNELS = HEAD + textwrap.dedent("""
    @triton.jit
    def erf_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, tl.math.erf(tl.load(x_ptr + offs, mask=mask)), mask=mask)


    @triton.jit
    def log1p_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, libdevice.log1p(tl.load(x_ptr + offs, mask=mask)), mask=mask)


    @triton.jit
    def expm1_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, libdevice.expm1(tl.load(x_ptr + offs, mask=mask)), mask=mask)


    @triton.jit
    def tanh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, libdevice.tanh(tl.load(x_ptr + offs, mask=mask)), mask=mask)
    """)


def _inputs(lo: float, hi: float, edges: list) -> np.ndarray:
    rng = np.random.default_rng(34)
    bits = rng.integers(0, 2 ** 32, 40000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    dense = rng.uniform(lo, hi, 40000).astype(np.float32)
    tiny = np.finfo(np.float32).tiny
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 10.0, -10.0, tiny, -tiny, 1e-45, -1e-45, 1e-40,
               -1e-40, 3e-39, -3e-39]
    for e in edges:  # a branch point of the function and its neighbours
        e = np.float32(e)
        special += [e, np.nextafter(e, np.float32(np.inf)), np.nextafter(e, np.float32(-np.inf))]
    return np.concatenate([np.array(special, np.float32), bits, dense])


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """The two kernels above translated, compiled (verify) and their f32 entries' Tile IR kept: name -> text."""
    import os
    from transpiler.pipeline import run, write_outputs
    from transpiler.verify.run import verify_output
    tmp = tmp_path_factory.mktemp("libdevice")
    (tmp / "ports.py").write_text(KERNELS)
    result, outputs = run([tmp / "ports.py"], tmp / "out", use_cache=False, compile_check="off")
    assert [k.status for k in result.kernels] == ["translated"] * 4
    write_outputs(outputs)
    old = os.environ.get("CUTILE_TRANSPILE_KEEP_IR")
    os.environ["CUTILE_TRANSPILE_KEEP_IR"] = str(tmp / "ir")
    try:
        verify_output(tmp / "out")
    finally:
        if old is None:
            del os.environ["CUTILE_TRANSPILE_KEEP_IR"]
        else:
            os.environ["CUTILE_TRANSPILE_KEEP_IR"] = old
    return {name: next(iter(sorted((tmp / "ir").glob(f"{name}__*.f32.*.rust.mlir")))).read_text()
            for name in ("erf_kernel", "log1p_kernel", "expm1_kernel", "tanh_kernel")}


def _interpret(ir_text: str, x: np.ndarray) -> np.ndarray:
    from transpiler.verify.interpret.machine import Machine, parse_entry
    from transpiler.verify.interpret.values import Memory
    block = int(ir_text.split("iota : tile<")[1].split("x")[0])
    n = x.size
    memory = Memory()
    bx, by = memory.add("x", x), memory.add("y", np.full(n, np.nan, np.float32))
    i32 = lambda v: np.array(v, np.int32)  # noqa: E731
    # x: a raw pointer and its span; y: the checked partition of its n elements (extent, stride, tile, stride)
    args = [np.array(bx, np.int64), i32(n), i32(1), np.array(by, np.int64), i32(n), i32(1), i32(block), i32(1), i32(n)]
    with np.errstate(all="ignore"):
        Machine(memory, (-(-n // block), 1, 1)).run(parse_entry(ir_text), args)
    return memory.buffers[1].data


@requires_toolchain
def test_erf_port_stays_within_erff_documented_error(ported):
    """The compiled port of `tl.math.erf`, interpreted over 80k float32 inputs: within 2 ulp of erf (CUDA's
    documented bound for erff), saturating to +-1, and libdevice's flush to zero: erf of a subnormal x (or a zero)
    is a zero of x's sign."""
    x = _inputs(-4.5, 4.5, [1.002959966659546, -1.002959966659546, 3.92, -3.92])
    got = _interpret(ported["erf_kernel"], x)
    tiny = np.finfo(np.float32).tiny
    normal = np.isfinite(x) & (np.abs(x) >= tiny)
    want = np.array([math.erf(float(v)) for v in x[normal]], np.float64).astype(np.float32)
    assert _ulps(got[normal], want).max() <= 2
    sub = np.isfinite(x) & (np.abs(x) < tiny)
    assert sub.sum() >= 8 and np.all(got[sub] == 0) and np.array_equal(np.signbit(got[sub]), np.signbit(x[sub]))
    assert np.array_equal(got[np.isinf(x)], np.sign(x[np.isinf(x)])) and np.all(np.isnan(got[np.isnan(x)]))


@requires_toolchain
def test_log1p_port_stays_within_log1pf_documented_error(ported):
    """The compiled port of `libdevice.log1p`: within 1 ulp of log1p (CUDA's bound for log1pf) for normal x > -1;
    -1 -> -inf, x < -1 -> NaN, +inf -> +inf, NaN -> NaN, -0.0 -> -0.0; a subnormal x -> +0 (libdevice's fma.rn.ftz
    flushes it: its m is flushed, and e * ln2 + (-0) is +0). Every op of __nv_log1pf rounds exactly (add.rz,
    integer ops, fma.rn, mul.rn, cvt.rn: no approximate instruction), so these are the GPU's numbers."""
    x = _inputs(-0.999, 10.0, [-1.0, 0.4142135623730951, -0.2928932188134524])
    got = _interpret(ported["log1p_kernel"], x)
    tiny = np.finfo(np.float32).tiny
    normal = np.isfinite(x) & (np.abs(x) >= tiny) & (x > -1)
    with np.errstate(all="ignore"):
        want = np.log1p(x[normal].astype(np.float64)).astype(np.float32)
    assert _ulps(got[normal], want).max() <= 1
    assert got[x == -1][0] == -np.inf and np.all(np.isnan(got[x < -1])) and np.all(np.isnan(got[np.isnan(x)]))
    assert np.all(got[x == np.inf] == np.inf)
    zeros = got[(x == 0)]
    assert np.array_equal(np.signbit(zeros), np.signbit(x[x == 0]))
    sub = np.isfinite(x) & (np.abs(x) < tiny) & (x != 0)
    assert sub.sum() >= 6 and np.all(got[sub] == 0) and not np.any(np.signbit(got[sub]))


@requires_toolchain
def test_expm1_port_stays_within_expm1f_documented_error(ported):
    """The compiled port of `libdevice.expm1`: within 1 ulp of expm1 (CUDA's bound for expm1f) for normal x up to
    the overflow; +inf past it (and for +inf), -1 below -17.4 (and for -inf), x + x for +-0, +0 for a subnormal x
    (flushed by the fmas); the branch t = 128 (x near 88.7) included. The rounding to an integer is composed
    from floor (exact), the other ops are libdevice's; exp2 is taken of integers only (exact in the interpreter,
    as MUFU.EX2 is at integers)."""
    x = _inputs(-20.0, 89.0, [0.4099999964237213, -0.4099999964237213, 88.0, 88.5, 88.72283935546875, 89.0,
                              -17.0, -18.0, 0.34657359, -0.34657359, 1.0397208])
    got = _interpret(ported["expm1_kernel"], x)
    tiny = np.finfo(np.float32).tiny
    with np.errstate(all="ignore"):
        want = np.expm1(x.astype(np.float64)).astype(np.float32)
    normal = np.isfinite(x) & (np.abs(x) >= tiny) & np.isfinite(want)
    assert _ulps(got[normal], want[normal]).max() <= 1
    assert np.all(got[np.isfinite(x) & ~np.isfinite(want)] == np.inf) and got[x == np.inf][0] == np.inf
    assert got[x == -np.inf][0] == -1 and np.all(np.isnan(got[np.isnan(x)]))
    assert np.array_equal(np.signbit(got[x == 0]), np.signbit(x[x == 0])) and np.all(got[x == 0] == 0)
    sub = np.isfinite(x) & (np.abs(x) < tiny) & (x != 0)
    assert sub.sum() >= 6 and np.all(got[sub] == 0) and not np.any(np.signbit(got[sub]))


@requires_toolchain
def test_tanh_port_stays_within_tanhf_documented_error(ported):
    """The compiled port of `libdevice.tanh`: within 2 ulp of tanh (CUDA's bound for tanhf; the interpreter's exp2
    and 1 / d round correctly where MUFU.EX2 / MUFU.RCP approximate), +-1 from |x| >= 9.0109 and for +-inf, odd,
    and a subnormal or zero x gives a zero of its sign (fma.rn.ftz flushes x)."""
    x = _inputs(-10.0, 10.0, [0.6000000238418579, -0.6000000238418579, 9.010913848876953, -9.010913848876953])
    got = _interpret(ported["tanh_kernel"], x)
    tiny = np.finfo(np.float32).tiny
    normal = np.isfinite(x) & (np.abs(x) >= tiny)
    want = np.tanh(x[normal].astype(np.float64)).astype(np.float32)
    assert _ulps(got[normal], want).max() <= 2
    assert np.array_equal(got[np.isinf(x)], np.sign(x[np.isinf(x)])) and np.all(np.isnan(got[np.isnan(x)]))
    assert np.all(np.abs(got[np.isfinite(x) & (np.abs(x) >= 9.010913848876953)]) == 1)
    sub = np.isfinite(x) & (np.abs(x) < tiny)
    assert sub.sum() >= 8 and np.all(got[sub] == 0) and np.array_equal(np.signbit(got[sub]), np.signbit(x[sub]))


def test_a_helper_named_like_the_libdevice_function_it_calls_is_not_recursion(tmp_path):
    """A library's `def tanh(x): return libdevice.tanh(x)` (fla's ops/utils/op.py): the inner call is libdevice's
    `tanh`, ported from rules/triton_libdevice.py, a helper of another module with the same name, not the helper
    itself (it was refused as recursion, CT110). A helper that does call itself is still refused."""
    from transpiler.frontend.source import parse_file
    from transpiler.pipeline import kernel_result
    head = ("import triton\nimport triton.language as tl\nimport triton.language.extra.libdevice as tldevice\n\n\n"
            "@triton.jit\ndef tanh(x):\n    return {body}\n\n\n"
            "@triton.jit\ndef k(x_ptr, y_ptr, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
            "    tl.store(y_ptr + offs, tanh(tl.load(x_ptr + offs)))\n")
    path = tmp_path / "k.py"
    path.write_text(head.format(body="tldevice.tanh(x.to(tl.float32))"))
    (k,) = parse_file(path, "k.py").kernels
    res = kernel_result(k, path, "k.py")
    assert res.status == "translated", [d.text() for d in res.diagnostics]
    path.write_text(head.format(body="tanh(x.to(tl.float32))"))
    fr = parse_file(path, "k.py")
    diags = [d for _, _, d in fr.failures] + [d for kk in fr.kernels for d in kernel_result(kk, path, "k.py").diagnostics]
    assert [d.code for d in diags if d.severity == "error"] == ["CT110"], [d.text() for d in diags]


# ------------------------------------------------------------------------------- round-to-nearest arithmetic

def _rust_of(tmp_path: Path, body: str) -> tuple:
    from transpiler.pipeline import run
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent(body))
    result, outputs = run([path], tmp_path / "out", use_cache=False, compile_check="off")
    return result.kernels, next((text for f, text in outputs.items() if f.name == "kernel.rs"), "")


@pytest.mark.parametrize("dtype,ftz", [("tl.float32", "Enabled"), ("tl.float64", "Disabled")])
def test_libdevice_rn_arithmetic_is_one_op_each_never_contracted(tmp_path, dtype, ftz):
    """`libdevice.mul_rn(a, b) + c` (unsloth's bit-exact NF4 scales): Triton compiles mul.rn.ftz.f32 then add.f32
    (mul.rn.f64, add.f64 for float64; checked with triton.compile for sm_90), which no compiler contracts; the port
    is mulf with nearest-even rounding, flush only on float32, and no fma. The same with add_rn after a plain
    multiply; a plain `a * b + c` still fuses (the control)."""
    kernels, rust = _rust_of(tmp_path, f"""
    @triton.jit
    def k(x_ptr, y_ptr, z_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        a = tl.load(x_ptr + offs).to({dtype})
        b = tl.load(y_ptr + offs).to({dtype})
        r = libdevice.mul_rn(a, b) + b
        r = libdevice.add_rn(a * r, b) - libdevice.mul_rn(r, b)
        r = libdevice.div_rn(r, a) + libdevice.sub_rn(r, b) * a
        tl.store(z_ptr + offs, (libdevice.fma_rn(r, a, b) + libdevice.fma(a, b, r)).to(tl.float32))

    @triton.jit
    def control(x_ptr, y_ptr, z_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        a = tl.load(x_ptr + offs).to({dtype})
        tl.store(z_ptr + offs, (a * a + a).to(tl.float32))
    """)
    assert all(k.status == "translated" for k in kernels), [d.text() for k in kernels for d in k.diagnostics]
    k_body, control = rust[rust.index("fn k<"):rust.index("fn control<")], rust[rust.index("fn control<"):]
    modes = f"rounding::NearestEven, ftz::{ftz})"
    for op, n in (("mulf", 2), ("addf", 1), ("subf", 1), ("divf", 1)):
        calls = _calls(k_body, op)
        assert len(calls) == n and all(c.endswith(modes) for c in calls), (op, k_body)
    # fma_rn and fma with their modes; `div + sub_rn(r, b) * a` is a plain multiply and add, which Triton fuses too
    # (its modes are nearest-even without flush: the float64 modes)
    fmas = _calls(k_body, "fma")
    assert len(fmas) == 3 and sum(c.endswith(modes) for c in fmas) == (2 if ftz == "Enabled" else 3), k_body
    assert _calls(control, "fma"), control


def _calls(text: str, name: str) -> list[str]:
    """Every call of the function `name` in the code of `text` (not its comments, the Python statements), whole (to
    its closing parenthesis; calls may be nested)."""
    import re
    text = "\n".join(line for line in text.splitlines() if not line.strip().startswith("//"))
    out = []
    for m in re.finditer(rf"(?<![A-Za-z0-9_]){name}\(", text):
        depth = 0
        for i in range(m.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                out.append(text[m.start():i + 1])
                break
    return out


@pytest.mark.parametrize("dtype", ["tl.float16", "tl.bfloat16"])
def test_libdevice_rn_arithmetic_of_another_dtype_is_refused(tmp_path, dtype):
    kernels, _ = _rust_of(tmp_path, f"""
    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs).to({dtype})
        tl.store(y_ptr + offs, libdevice.mul_rn(x, x).to(tl.float32))
    """)
    (k,) = kernels
    assert k.status != "translated" and any(
        d.code == "CT101" and "`libdevice.mul_rn` of" in d.message and "float32 and float64" in d.message
        for d in k.diagnostics), [d.text() for d in k.diagnostics]
