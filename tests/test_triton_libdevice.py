"""libdevice functions ported as libdevice computes them (rules/triton_libdevice.py; issue 34): `tl.erf` /
`tl.math.erf` / `libdevice.erf` / `x.erf()` as `__nv_erff`'s operations, rounded alike.

- the constants of the ports are float32 values (written as decimals, read by Rust and by the frontend exactly);
- the interpreter's fma rounds once (a plain f64 sum would round twice) and flushes its inputs where the op says;
- the erf port, interpreted, stays within erff's documented error (CUDA Math API: 2 ulp) of the correctly rounded
  erf over normal float32 inputs, and keeps libdevice's flush to zero: erf of a subnormal x is a zero of x's sign
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
from transpiler.frontend.cutile_python import parse_file
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


def _erf_inputs() -> np.ndarray:
    rng = np.random.default_rng(34)
    bits = rng.integers(0, 2 ** 32, 60000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    dense = rng.uniform(-4.5, 4.5, 60000).astype(np.float32)
    edge = np.float32(1.002959966659546)  # __nv_erff's branch point, and its neighbours
    near = [np.nextafter(edge, np.float32(s * np.inf)) for s in (1, -1)] + [edge]
    special = np.array(near + [-x for x in near] + [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 3.9, 3.92,
                                                     10.0, np.finfo(np.float32).tiny, 1e-45, -1e-45, 1e-40, -1e-40],
                       np.float32)
    return np.concatenate([special, bits, dense])


@requires_toolchain
def test_erf_port_stays_within_erff_documented_error(tmp_path, monkeypatch):
    """The compiled port of `tl.math.erf` (exact_gelu.erf_kernel), interpreted over 120k float32 inputs."""
    from transpiler.pipeline import run, write_outputs
    from transpiler.verify.interpret.machine import Machine, parse_entry
    from transpiler.verify.interpret.values import Memory
    from transpiler.verify.run import verify_output
    monkeypatch.setenv("CUTILE_TRANSPILE_KEEP_IR", str(tmp_path / "ir"))
    src = tmp_path / "exact_gelu.py"
    text = (ROOT / "tests" / "fixtures" / "triton_unseen" / "exact_gelu.py").read_text()
    src.write_text(text.split("@triton.jit\ndef geglu_forward_kernel")[0])
    result, outputs = run([src], tmp_path / "out", use_cache=False, compile_check="off")
    assert [k.status for k in result.kernels] == ["translated"]
    write_outputs(outputs)
    verify_output(tmp_path / "out")
    (ir,) = sorted((tmp_path / "ir").glob("erf_kernel__*.f32.0.rust.mlir"))
    ir_text = ir.read_text()
    block = int(ir_text.split("iota : tile<")[1].split("x")[0])
    x = _erf_inputs()
    n = x.size
    memory = Memory()
    y = np.full(n, np.nan, np.float32)
    bx, by = memory.add("x", x), memory.add("y", y)
    i32 = lambda v: np.array(v, np.int32)  # noqa: E731
    args = [np.array(bx, np.int64), i32(n), i32(1), np.array(by, np.int64), i32(n), i32(1), i32(n)]
    Machine(memory, (-(-n // block), 1, 1)).run(parse_entry(ir_text), args)
    got = memory.buffers[1].data
    tiny = np.finfo(np.float32).tiny
    normal = np.isfinite(x) & (np.abs(x) >= tiny)
    want = np.array([math.erf(float(v)) for v in x[normal]], np.float64).astype(np.float32)
    assert _ulps(got[normal], want).max() <= 2
    # libdevice's flush to zero: a subnormal or zero x gives a zero of its sign
    sub = np.isfinite(x) & (np.abs(x) < tiny)
    assert sub.sum() >= 6 and np.all(got[sub] == 0) and np.array_equal(np.signbit(got[sub]), np.signbit(x[sub]))
    assert np.array_equal(got[np.isinf(x)], np.sign(x[np.isinf(x)])) and np.all(np.isnan(got[np.isnan(x)]))
