"""libdevice functions that cuTile Rust has no op for, as Triton computes them on NVIDIA GPUs.

Where a kernel calls one of the functions below (`tl.erf` / `tl.math.erf` / `libdevice.erf`, ...), the Triton
frontend inlines the function of the same name with the call's arguments, as it inlines a kernel's own helper
(rules/triton.toml, TTR-LIBDEVICE-PORT; transpiler/frontend/triton.py, `_libdevice`). Triton 3.6 lowers these
calls on NVIDIA GPUs to libdevice (triton/backends/nvidia/lib/libdevice.10.bc: `__nv_erff`, ...) and compiles
libdevice with `__nvvm_reflect("__CUDA_FTZ")` = 1 (NVIDIA's CUDAOptions.enable_reflect_ftz, on by default), so
every libdevice function takes its flush-to-zero arms. Each function here is the same sequence of operations as
that arm, with the same constants and the same rounding per operation:

- `_fma_rn_ftz(a, b, c)`: `llvm.nvvm.fma.rn.ftz.f` (PTX fma.rn.ftz.f32): Tile IR `fma` with nearest-even rounding
  and flush_to_zero (one rounding; subnormal inputs and results flushed to a zero of the same sign).
- `_add_rz_ftz(a, b)`: `llvm.nvvm.add.rz.ftz.f` (PTX add.rz.ftz.f32): Tile IR `addf` with rounding toward zero
  and flush_to_zero.
- `_rcp_approx_ftz(d)`: `rcp.approx.ftz.f32` (inline PTX in `__nv_tanhf`): Tile IR `divf(1, d)` with rounding
  approx and flush_to_zero (PTX div.approx computes a * rcp.approx(b); tileiras emits the one MUFU.RCP).
- `_ex2_approx_ftz(x)`: `llvm.nvvm.ex2.approx.ftz.f32` (PTX ex2.approx.ftz.f32): Tile IR `exp2` with
  flush_to_zero, which tileiras lowers to the same instruction (MUFU.EX2; docs/supported-triton.md says how that
  was checked).
- plain `*`, `+`, `-`, unary `-`, comparisons, `tl.where`, `tl.abs`, bitcasts and integer `&` / `|`: LLVM's
  fmul / fadd / fsub / fneg, fcmp (ordered), select, fabs, bitcast, and / or, without flush (Triton's kernels keep
  subnormals); Tile IR mulf / addf / subf / negf, cmpf (ordered), select, absf, bitcast, andi / ori.

libdevice branches where this file selects (`tl.where`): both arms are pure arithmetic without memory access, so
computing both and selecting gives the taken arm's value bit for bit. A plain multiply of libdevice's never feeds a
plain add or subtract here (which a compiler could contract into an fma on one side and not on the other): each
function says so where it multiplies. One multiply of ours does: expm1's `y - floor(y)` with y = x log2(e), whose
two uses keep the FMA pass (passes/fma.py) from fusing it, and which tileiras leaves apart too (FMUL, then FADD:
tools/libdevice_sass.py). Constants are the float32 values of libdevice's (exactly representable: checked by
tests/test_triton_libdevice.py); the intrinsics named `_...` exist only in this file.

Triton takes float32 and float64 for these functions (and refuses other dtypes at compile time); the float64
forms (`__nv_erf`, ...) are other sequences and are not ported: `_float32_only(x, ...)` is x where it is float32,
and restricts a kernel generic over its element type to float32 (other dtypes: no entry; a float64 or float16 x
itself: CT101).
"""
import triton
import triton.language as tl


@triton.jit
def erf(x):
    """`__nv_erff` (libdevice.10.bc, FTZ arm). |x| >= 1.00295997 (0x3F8060FE): t = |x|, a degree-6 polynomial p(t)
    (Horner, fma), r = fma(p, -t, -t), erf = copysign(1 - 2^r, x); below: t = x*x, p(t) with the other
    coefficients, erf = fma(p, x, x). (`x * x` only feeds an fma's factor; `1.0 - e` adds no product.)"""
    x = _float32_only(x, "erf", "__nv_erf")
    ax = tl.abs(x)
    big = ax >= 1.002959966659546
    t = tl.where(big, ax, x * x)
    p = _fma_rn_ftz(tl.where(big, 1.6425845387857407e-05, 8.483494457323104e-05), t,
                    tl.where(big, -0.0004680210549850017, -0.0008213091641664505))
    p = _fma_rn_ftz(p, t, tl.where(big, 0.0052647641859948635, 0.005213488824665546))
    p = _fma_rn_ftz(p, t, tl.where(big, -0.034303076565265656, -0.026868773624300957))
    p = _fma_rn_ftz(p, t, tl.where(big, 0.1532936990261078, 0.11284004896879196))
    p = _fma_rn_ftz(p, t, tl.where(big, 0.9163130521774292, -0.37612664699554443))
    p = _fma_rn_ftz(p, t, tl.where(big, 0.6282998323440552, 0.12837915122509003))
    s = tl.where(big, -t, x)
    r = _fma_rn_ftz(p, s, s)
    e = _ex2_approx_ftz(r)
    sign = x.to(tl.int32, bitcast=True) & -2147483648
    tail = ((1.0 - e).to(tl.int32, bitcast=True) | sign).to(tl.float32, bitcast=True)
    y = tl.where(big, tail, r)
    return y


@triton.jit
def log1p(x):
    """`__nv_log1pf` (libdevice.10.bc, FTZ arm). u = x + 1 rounded toward zero; e = the exponent bits of u / 0.75
    (an int32 multiple of 2^23); m = x scaled by 2^-e (an integer subtraction on the bits) + (2^-e / 4 - 1), so
    that 1 + x = 2^e (1 + m); log1p = e ln2 + m - m^2/2 + ... (a degree-9 polynomial in m, Horner with fma).
    x = +inf or NaN, and x < -1 (the bits, unsigned, at least those of +inf; as int32 at least those of -1.0
    plus one ulp): fma(x, inf, inf); x = -0.0: -0.0. (`e * 2^-23` is exact and feeds an fma's factor; `m * p`
    feeds an fma's factor; `m + fma(...)` adds no product.)"""
    x = _float32_only(x, "log1p", "__nv_log1p")
    u = _add_rz_ftz(x, 1.0)
    e = (u.to(tl.int32, bitcast=True) - 1061158912) & -8388608
    m = (x.to(tl.int32, bitcast=True) - e).to(tl.float32, bitcast=True)
    s = (1082130432 - e).to(tl.float32, bitcast=True)
    m = _fma_rn_ftz(0.25, s, -1.0) + m
    fe = e.to(tl.float32) * 1.1920928955078125e-07
    p = _fma_rn_ftz(-0.04534861445426941, m, 0.10546888411045074)
    p = _fma_rn_ftz(p, m, -0.13229703903198242)
    p = _fma_rn_ftz(p, m, 0.14491446316242218)
    p = _fma_rn_ftz(p, m, -0.16641564667224884)
    p = _fma_rn_ftz(p, m, 0.199888676404953)
    p = _fma_rn_ftz(p, m, -0.2500019669532776)
    p = _fma_rn_ftz(p, m, 0.33333510160446167)
    p = _fma_rn_ftz(p, m, -0.5)
    q = _fma_rn_ftz(m * p, m, m)
    r = _fma_rn_ftz(fe, 0.6931471824645996, q)
    bits = x.to(tl.int32, bitcast=True)
    special = (bits < 0) | (bits >= 2139095040)
    r = tl.where(special & (bits >= -1082130431), _fma_rn_ftz(x, float("inf"), float("inf")), r)
    y = tl.where(special & (x == 0.0), x, r)
    return y


@triton.jit
def expm1(x):
    """`__nv_expm1f` (libdevice.10.bc, FTZ arm). t = x log2(e) rounded to an integer (`llvm.nvvm.round.f`, PTX
    cvt.rni: to nearest, ties to even; 0 where |x| < 0.41), r = x - t ln2 (two fmas, ln2 split in two), a degree-5
    polynomial in r (Horner, fma), expm1 = fma(q, 2^t, 2^t - 1) with 2^t = ex2.approx.ftz(t) (t = 128 computed as
    2^127, then doubled); 2^t > 2^128: +inf, t < -25: -1, x = +-0: x + x. Tile IR has no round-to-integer op:
    rint(y) is written exactly from floor (d = y - floor(y) is exact; up where d > 0.5, or d = 0.5 and floor(y)
    odd), equal to cvt.rni's except that rint of y in (-0.5, 0) is +0 here (-0 there), a t that |x| < 0.41 has
    replaced by 0 anyway. (`x * log2(e)` feeds the rounding and one subtraction of floor (its two uses keep it a
    multiply); `2.0 * floor(f * 0.5)` may be fused into an fma, exact either way; `r * p` feeds an fma's factor.)"""
    x = _float32_only(x, "expm1", "__nv_expm1")
    y = x * 1.4426950216293335
    f = tl.floor(y)
    d = y - f
    odd = (f - 2.0 * tl.floor(f * 0.5)) != 0.0
    t = tl.where((d > 0.5) | ((d == 0.5) & odd), f + 1.0, f)
    t = tl.where(tl.abs(x) < 0.4099999964237213, 0.0, t)
    j = tl.where(t == 128.0, 127.0, t)
    e = _ex2_approx_ftz(j)
    nt = -t
    r = _fma_rn_ftz(nt, 0.693145751953125, x)
    r = _fma_rn_ftz(nt, 1.428606765330187e-06, r)
    p = _fma_rn_ftz(0.0013879507314413786, r, 0.008382412604987621)
    p = _fma_rn_ftz(p, r, 0.04166783019900322)
    p = _fma_rn_ftz(p, r, 0.1666639745235443)
    p = _fma_rn_ftz(p, r, 0.4999999403953552)
    q = _fma_rn_ftz(r * p, r, r)
    u = _fma_rn_ftz(q, e, e - 1.0)
    u = tl.where(t == 128.0, u + u, u)
    u = tl.where(j > 128.0, float("inf"), u)
    u = tl.where(j < -25.0, -1.0, u)
    v = tl.where(x == 0.0, x + x, u)
    return v


@triton.jit
def tanh(x):
    """`__nv_tanhf` (libdevice.10.bc, FTZ arm). |x| >= 0.6: s = 1 - 2 / (1 + 2^(2 |x| log2(e))) with
    2^z = ex2.approx.ftz and 1 / d = rcp.approx.ftz (libdevice's inline PTX), 1 where |x| >= 9.0109, the sign of x
    copied; below: t = x*x, a degree-4 polynomial (Horner, fma), tanh = fma(p, x, x). (`|x| * 2 log2(e)` feeds
    ex2, `x * x` an fma's factor, `e + 1.0` adds no product.)"""
    x = _float32_only(x, "tanh", "__nv_tanh")
    ax = tl.abs(x)
    big = ax >= 0.6000000238418579
    e = _ex2_approx_ftz(ax * 2.885390043258667)
    rc = _rcp_approx_ftz(e + 1.0)
    s = tl.where(ax >= 9.010913848876953, 1.0, _fma_rn_ftz(rc, -2.0, 1.0))
    sign = x.to(tl.int32, bitcast=True) & -2147483648
    tail = (s.to(tl.int32, bitcast=True) | sign).to(tl.float32, bitcast=True)
    t = x * x
    p = _fma_rn_ftz(0.01573968306183815, t, -0.05230396240949631)
    p = _fma_rn_ftz(p, t, 0.13315297663211823)
    p = _fma_rn_ftz(p, t, -0.33332768082618713)
    p = _fma_rn_ftz(p, t, 0.0)
    y = tl.where(big, tail, _fma_rn_ftz(p, x, x))
    return y
