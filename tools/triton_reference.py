"""CPU reference outputs of the Triton corpus (`corpus/triton/workloads`), computed with the Triton
interpreter (TRITON_INTERPRET=1) and checked against plain numpy implementations of the same math.

    /tmp/trit/bin/python tools/triton_reference.py            # run every case, check vs numpy, write npz files
    /tmp/trit/bin/python tools/triton_reference.py --check    # recompute, compare with the saved npz files
    /tmp/trit/bin/python tools/triton_reference.py -k softmax # only cases whose id contains "softmax"

Needs triton (3.9; block pointers, which 3.9 removed, need 3.6 with numpy < 2: the `block_ptr_ops` fixtures
were written with it) and numpy, not torch: tensors are numpy arrays behind a small shim that offers what the
interpreter reads (`data_ptr()`, a torch-like `dtype`); the interpreter's host<->device copies are skipped
because the arrays already live in host memory. `cases()` is importable without triton: it returns plain
data (module, kernel, input specs, scalars, constexprs, grid, output names, tolerances) so the same inputs
can be rebuilt elsewhere (e.g. on a GPU with torch, to compare the Triton kernel with its Rust port).

Input spec `init` kinds (all random draws from `numpy.random.default_rng(case["seed"])`, in spec order):
  randn(scale), uniform(lo, hi), randint(lo, hi) [high exclusive], zeros, full(value), poison (NaN for
  floats, -12345 for ints, True for bools), log_softmax(scale) (rows of log-probabilities of randn*scale), rows_of_randperm
  (a permutation of range(size) reshaped: page tables), and derived kinds computed from earlier inputs:
  bincount(of, minlength), moe_sorted_ids(of, n_experts, block_size) (sorted slot ids, padding = n_slots).
Reference tables keep bf16 out: the interpreter computes bf16 on raw bits (triton.md section 4).
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import math
import os
import sys
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "triton_refs"
PKG = "corpus.triton.workloads"
# kernels using constructs the transpiler does not support yet live outside the corpus (tests/fixtures)
NOT_YET_PKG, NOT_YET = "tests.fixtures.triton_not_yet", ()
# kernels of our own for constructs unseen libraries use (tests/fixtures/triton_unseen) that have numbers cases
# (issue 34): by module name here, or a case's `package`
UNSEEN_PKG, UNSEEN = "tests.fixtures.triton_unseen", ("int8_matmul", "pointer_tables", "float_atomics", "interleave",
                                                     "gather", "tile_numel", "python_assert", "false_tile", "int_bitcast",
                                                     "exact_gelu", "const_math", "varlen_shift",
                                                     "block_ptr_arms", "arm_flags", "carried_stats",
                                                     "dot_operand_dtypes", "inline_asm", "fast_math",
                                                     "int_min", "flag_conditions", "dot_precision",
                                                     "countdown_loops", "constexpr_functions", "block_ptr_helpers",
                                                     "arm_defined_names", "dtype_names", "sum_dtype", "host_dtype_fn",
                                                     "string_helper_choice", "bit_atomics", "pointer_rows",
                                                     "widened_arms", "rn_arithmetic", "call_jit",
                                                     "constexpr_locals", "arm_forwarders", "scalar_neg",
                                                     "combine_fns", "arm_rebinds", "dtype_predicates",
                                                     "pointer_choice", "round_half_even", "flips", "pair_reduce",
                                                     "carried_types", "pointer_sums", "const_dims", "literal_stages",
                                                     "loop_bounds", "compat_try", "propagate_nan", "compat_libm",
                                                     "scalar_typing", "precision_local", "narrow_ints", "bool_mask",
                                                     "standard_names", "helper_dispatch", "libdevice_math",
                                                     "functional_ops", "constexpr_rebind", "constexpr_arms",
                                                     "generic_bitcast")
# fixtures Triton's interpreter cannot run (it refuses inline asm: "inline_asm not supported in interpreter mode";
# libdevice's fast_* return nothing there; its maxnumf / minnumf propagate NaN as np.maximum does, where the GPU's
# max.f32 gives the other operand): their saved outputs are the numpy reference itself, written from the
# PTX manual's definition of each instruction or the precise function (`reference`), in the output's dtype; the
# port is still checked against them by the Tile IR interpreter
NUMPY_ONLY = ("inline_asm", "fast_math", "rn_arithmetic", "round_half_even", "compat_libm", "propagate_nan",
              "libdevice_math")
INT_POISON = -12345

TOL = {"float32": (1e-5, 1e-4), "float16": (2e-3, 4e-3), "int32": (0, 0), "int64": (0, 0), "int8": (0, 0),
       "uint8": (0, 0), "int16": (0, 0), "bool": (0, 0), "float8_e4m3fn": (2.0 ** -9, 2.0 ** -4)}


def _npo2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def inp(name, shape, dtype, kind, **params):
    return {"name": name, "shape": list(shape), "dtype": dtype, "init": {"kind": kind, **params}}


def case(module, kernel, name, inputs, args, grid, outputs, ref, scalars=None, constexprs=None, tol=None,
         descriptors=None, package=None, untouched=()):
    """One launch: `args` lists the kernel's runtime parameters in order, each the name of an input or of a
    scalar; constexprs go by keyword. `tol` maps output names to (atol, rtol) where the dtype default is not
    meant. `descriptors` names args that are host tensor descriptors: arg -> {"base": input, "block": [...]}
    (`TensorDescriptor.from_tensor(base, block)`: the input's shape and strides, zero padding); `package`: a
    module outside the corpus (tests/fixtures/triton_unseen); `untouched`: outputs this launch must leave as they
    were (every store masked off), which a GPU check otherwise reads as a launch that never ran."""
    cid = f"{module}__{kernel}__{name}"
    outs = {o: {"dtype": next(i["dtype"] for i in inputs if i["name"] == o),
                "tol": list((tol or {}).get(o) or TOL[next(i["dtype"] for i in inputs if i["name"] == o)]),
                **({"untouched": True} if o in untouched else {})}
            for o in outputs}
    pkg = package or (NOT_YET_PKG if module in NOT_YET else UNSEEN_PKG if module in UNSEEN else PKG)
    return {"id": cid, "module": f"{pkg}.{module}", "kernel": kernel, "case": name,
            "seed": zlib.crc32(cid.encode()) & 0x7FFFFFFF, "inputs": inputs, "args": list(args),
            "scalars": dict(scalars or {}), "constexprs": dict(constexprs or {}), "grid": list(grid),
            "outputs": outs, "ref": f"{module}.{kernel}", **({"descriptors": descriptors} if descriptors else {})}


def _row_cases(module, kernel, shapes, dtypes, make):
    return [make(module, kernel, f"{r}x{c}_{dt}", r, c, dt) for (r, c) in shapes for dt in dtypes]


def _rn_inputs(n: int) -> list[dict]:
    """x, y, z, w for rn_arithmetic: float32 values (exact in the case table), random in the first half, then rows
    whose products, sums, quotients or inputs are subnormal (below 2**-126: flushed to zero by libdevice)."""
    rng = np.random.default_rng(34)
    x, y, z, w = (rng.standard_normal(n).astype(np.float32) for _ in range(4))
    q = n // 2
    k = np.arange(1, n - q + 1, dtype=np.float32)
    x[q:] = np.where(k % 2 == 1, k * np.float32(1e-20), k * np.float32(3e-39))  # normal tiny / subnormal
    y[q:] = np.where(k % 2 == 1, np.float32(-1.5e-20), -k * np.float32(2e-39))
    z[q:] = np.where(k % 4 == 1, np.float32(0.0), k * np.float32(2e-39))
    w[q:] = np.where(k % 4 == 1, np.float32(1e20), np.float32(0.5))
    return [inp(name, [n], "float32", "given", values=[float(v) for v in a]) for name, a in zip("xyzw", (x, y, z, w))]


def _ftz32(v) -> np.ndarray:
    """float32 with subnormals flushed to a zero of the same sign (PTX .ftz on inputs and results)."""
    v = np.asarray(v, dtype=np.float32)
    return np.where(np.abs(v) < np.float32(2.0 ** -126), np.copysign(np.float32(0.0), v), v).astype(np.float32)


def _fma32(a, b, c) -> np.ndarray:
    """a*b + c of float32 values rounded once to float32 (nearest, ties to even), computed exactly."""
    from fractions import Fraction
    out = []
    for x, y, z in zip(*(np.asarray(v, dtype=np.float32).reshape(-1) for v in (a, b, c))):
        q = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        f = np.float32(float(q))
        near = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
        out.append(min(near, key=lambda t: (abs(Fraction(float(t)) - q), int(np.float32(t).view(np.int32)) & 1)))
    return np.array(out, dtype=np.float32)


def rms_norm_rows_args(r: int, c: int, dt: str, rs: int) -> tuple:
    """`case`'s arguments for rms_norm_rows_kernel on r x c rows, its statistic `rs` elements apart (shared with
    tools/triton_real_cases.py)."""
    return ("rms_norm", "rms_norm_rows_kernel", f"{r}x{c}_{dt}_rstd{rs}",
            [inp("x", [r, c], dt, "randn"), inp("y", [r, c], dt, "poison"), inp("w", [c], dt, "randn"),
             inp("rstd", [r * rs], "float32", "zeros")],
            ["x", "stride", "y", "stride", "w", "rstd", "rstd_stride", "n_cols", "eps"], [r], ["y", "rstd"], "",
            {"stride": c, "rstd_stride": rs, "n_cols": c, "eps": 1e-6}, {"BLOCK_SIZE": _npo2(c)})


def token_logprob_args(b: int, l: int, n: int, dt: str, blk: int) -> tuple:
    """`case`'s arguments for token_logprob_kernel over (b, l) programs and an n-token vocabulary (shared with
    tools/triton_real_cases.py)."""
    return ("cross_entropy", "token_logprob_kernel", f"{b}x{l}x{n}_{dt}_blk{blk}",
            [inp("logits", [b, l, n], dt, "randn", scale=2.0), inp("ids", [b, l], "int64", "randint", lo=0, hi=n),
             inp("logp", [b, l], "float32", "poison")],
            ["logits", "ids", "logp", "L", "N"], [b, l], ["logp"], "", {"L": l, "N": n}, {"BLOCK_N": blk})


def cases() -> list[dict]:
    out: list[dict] = []
    F = ["float32", "float16"]

    for n in (4096, 3001):
        for dt in F:
            out.append(case("vector_add", "add_kernel", f"n{n}_{dt}",
                            [inp("x", [n], dt, "randn"), inp("y", [n], dt, "randn"), inp("out", [n], dt, "poison")],
                            ["x", "y", "out", "n"], [_cdiv(n, 1024)], ["out"], "", {"n": n}, {"BLOCK_SIZE": 1024}))

    def softmax(m, k, name, r, c, dt):
        return case(m, k, name, [inp("x", [r, c], dt, "randn", scale=3.0), inp("y", [r, c], dt, "poison")],
                    ["y", "x", "stride", "stride", "n_cols"], [r], ["y"], "", {"stride": c, "n_cols": c},
                    {"BLOCK_N": _npo2(c)})
    out += _row_cases("softmax", "softmax_kernel", [(8, 256), (7, 1000)], F, softmax)

    def row_normalize(m, k, name, r, c, dt):
        return case(m, k, name, [inp("x", [r, c], dt, "uniform", lo=0.5, hi=1.5), inp("y", [r, c], dt, "poison")],
                    ["y", "x", "stride", "n_cols"], [r], ["y"], "", {"stride": c, "n_cols": c},
                    {"BLOCK_N": _npo2(c)})
    out += _row_cases("softmax", "row_normalize_kernel", [(6, 300)], F, row_normalize)

    def online(m, k, name, r, c, dt):
        return case(m, k, name, [inp("x", [r, c], dt, "randn", scale=3.0), inp("y", [r, c], dt, "poison")],
                    ["x", "y", "stride", "n_cols"], [r], ["y"], "", {"stride": c, "n_cols": c}, {"BLOCK_N": 1024})
    out += _row_cases("online_softmax", "online_softmax_kernel", [(4, 2048), (5, 3000)], F, online)
    # a row shorter than the block: the lanes past n_cols never see a value (their m stays -inf)
    out.append(online("online_softmax", "online_softmax_kernel", "3x700_float32", 3, 700, "float32"))

    def mm_inputs(M, N, K, dt, out_dt):
        return [inp("a", [M, K], dt, "randn"), inp("b", [K, N], dt, "randn"), inp("c", [M, N], out_dt, "poison")]

    # A, B and C stored transposed (`at` (K, M), `bt` (N, K), `ct` (N, M)): every inner stride is not 1, the
    # ports' `stride_*_IS_1 == 0` paths
    MM_T_ARGS = ["at", "bt", "ct", "M", "N", "K", "one", "M", "one", "K", "one", "M"]

    def mm_inputs_t(M, N, K, dt):
        return [inp("at", [K, M], dt, "randn"), inp("bt", [N, K], dt, "randn"), inp("ct", [N, M], dt, "poison")]

    gemm_tol = {"c": (2e-2, 1e-2)}
    for (M, N, K), cfg, act in [((64, 64, 64), (64, 64, 32, 4), ""), ((50, 70, 90), (32, 32, 32, 4), ""),
                                ((77, 130, 40), (32, 32, 32, 4), "leaky_relu")]:
        for dt in F:
            bm, bn, bk, gm = cfg
            out.append(case("matmul", "matmul_kernel", f"{M}x{N}x{K}_{dt}{'_' + act if act else ''}",
                            mm_inputs(M, N, K, dt, dt),
                            ["a", "b", "c", "M", "N", "K", "K", "one", "N", "one", "N", "one"],
                            [_cdiv(M, bm) * _cdiv(N, bn)], ["c"], "",
                            {"M": M, "N": N, "K": K, "one": 1},
                            {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": gm, "ACTIVATION": act},
                            tol=gemm_tol))
    out.append(case("matmul", "matmul_kernel", "40x48x72_float16_transposed", mm_inputs_t(40, 48, 72, "float16"),
                    MM_T_ARGS, [_cdiv(40, 32) * _cdiv(48, 32)], ["ct"], "", {"M": 40, "N": 48, "K": 72, "one": 1},
                    {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 4, "ACTIVATION": ""},
                    tol={"ct": gemm_tol["c"]}))

    for (M, N, K), sms in [((256, 160, 64), 3), ((200, 150, 96), 2)]:
        out.append(case("persistent_matmul", "persistent_matmul_kernel", f"{M}x{N}x{K}_sms{sms}",
                        mm_inputs(M, N, K, "float16", "float16"),
                        ["a", "b", "c", "M", "N", "K", "K", "one", "N", "one", "N", "one"], [sms], ["c"], "",
                        {"M": M, "N": N, "K": K, "one": 1},
                        {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "NUM_SMS": sms}, tol=gemm_tol))
    # f32 with A stored transposed (A's inner stride is not 1, B's and C's are)
    out.append(case("persistent_matmul", "persistent_matmul_kernel", "150x140x80_sms2_float32_at",
                    [inp("at", [80, 150], "float32", "randn")] + mm_inputs(150, 140, 80, "float32", "float32")[1:],
                    ["at", "b", "c", "M", "N", "K", "one", "M", "N", "one", "N", "one"], [2], ["c"], "",
                    {"M": 150, "N": 140, "K": 80, "one": 1},
                    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "NUM_SMS": 2}, tol=gemm_tol))
    out.append(case("persistent_matmul", "persistent_matmul_kernel", "140x130x72_sms2_transposed",
                    mm_inputs_t(140, 130, 72, "float16"), MM_T_ARGS, [2], ["ct"], "",
                    {"M": 140, "N": 130, "K": 72, "one": 1},
                    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "NUM_SMS": 2},
                    tol={"ct": gemm_tol["c"]}))

    def ln_fwd(m, k, name, r, c, dt):
        return case(m, k, name,
                    [inp("x", [r, c], dt, "randn", scale=2.0), inp("y", [r, c], dt, "poison"),
                     inp("w", [c], dt, "randn"), inp("b", [c], dt, "randn"), inp("mean", [r], "float32", "poison"),
                     inp("rstd", [r], "float32", "poison")],
                    ["x", "y", "w", "b", "mean", "rstd", "stride", "n_cols", "eps"], [r], ["y", "mean", "rstd"], "",
                    {"stride": c, "n_cols": c, "eps": 1e-5}, {"BLOCK_N": _npo2(c)})
    out += _row_cases("layer_norm", "layer_norm_fwd_kernel", [(8, 512), (9, 1000)], F, ln_fwd)

    def ln_bwd(m, k, name, r, c, dt):
        parts = _cdiv(r, 16)
        return case(m, k, name,
                    [inp("dx", [r, c], dt, "poison"), inp("dy", [r, c], dt, "randn"), inp("x", [r, c], dt, "randn"),
                     inp("w", [c], dt, "randn"), inp("mean", [r], "float32", "randn", scale=0.1),
                     inp("rstd", [r], "float32", "uniform", lo=0.5, hi=2.0),
                     inp("dw_part", [parts, c], "float32", "poison"), inp("db_part", [parts, c], "float32", "poison")],
                    ["dx", "dy", "x", "w", "mean", "rstd", "dw_part", "db_part", "stride", "n_rows", "n_cols"],
                    [parts], ["dx", "dw_part", "db_part"], "", {"stride": c, "n_rows": r, "n_cols": c},
                    {"ROWS_PER_PROGRAM": 16, "BLOCK_N": _npo2(c)})
    out += _row_cases("layer_norm", "layer_norm_bwd_dx_kernel", [(32, 512), (20, 700)], F, ln_bwd)

    def ln_dwdb(m, k, name, p, c, dt):
        return case(m, k, name,
                    [inp("dw_part", [p, c], "float32", "randn"), inp("db_part", [p, c], "float32", "randn"),
                     inp("dw", [c], dt, "poison"), inp("db", [c], dt, "poison")],
                    ["dw_part", "db_part", "dw", "db", "n_parts", "n_cols"], [_cdiv(c, 128)], ["dw", "db"], "",
                    {"n_parts": p, "n_cols": c}, {"BLOCK_P": 32, "BLOCK_N": 128})
    out += _row_cases("layer_norm", "layer_norm_bwd_dwdb_kernel", [(3, 512), (40, 1000)], F, ln_dwdb)

    for (r, c), off in [((8, 512), 0.0), ((9, 1000), 1.0)]:
        for dt in F:
            out.append(case("rms_norm", "rms_norm_fwd_kernel", f"{r}x{c}_{dt}_offset{off:g}",
                            [inp("x", [r, c], dt, "randn"), inp("w", [c], dt, "randn"), inp("y", [r, c], dt, "poison"),
                             inp("rstd", [r], "float32", "poison")],
                            ["x", "w", "y", "rstd", "stride", "stride", "n_cols", "eps"], [r], ["y", "rstd"], "",
                            {"stride": c, "n_cols": c, "eps": 1e-6}, {"OFFSET": off, "BLOCK_N": _npo2(c)}))

    def rms_bwd(m, k, name, r, c, dt):
        return case(m, k, name,
                    [inp("dy", [r, c], dt, "randn"), inp("x", [r, c], dt, "randn"), inp("w", [c], dt, "randn"),
                     inp("rstd", [r], "float32", "uniform", lo=0.5, hi=2.0), inp("dx", [r, c], dt, "poison"),
                     inp("dw", [c], "float32", "zeros")],
                    ["dy", "x", "w", "rstd", "dx", "dw", "stride", "n_cols"], [r], ["dx", "dw"], "",
                    {"stride": c, "n_cols": c}, {"OFFSET": 0.0, "BLOCK_N": _npo2(c)})
    out += _row_cases("rms_norm", "rms_norm_bwd_kernel", [(8, 512), (9, 1000)], F, rms_bwd)
    # pointers moved to the row (`X_ptr += row * stride`), the statistic in a strided column (stride 1 and 2)
    for (r, c), rs in [((8, 512), 1), ((9, 1000), 2)]:
        out += [case(*rms_norm_rows_args(r, c, dt, rs)) for dt in F]

    # optional pointers (None: the `is None` branches), a float-constexpr condition (ALPHA != 1.0)
    for (r, c), given, alpha in [((8, 512), ("res", "h_out", "w"), 1.0), ((9, 1000), ("w",), 1.0),
                                 ((6, 700), ("res",), 0.5)]:
        for dt in F:
            inputs = [inp("x", [r, c], dt, "randn")] + \
                [inp(n, [r, c], dt, "randn" if n == "res" else "poison") for n in ("res", "h_out") if n in given] + \
                ([inp("w", [c], dt, "randn")] if "w" in given else []) + [inp("y", [r, c], dt, "poison")]
            out.append(case("fused_add_norm", "fused_add_rms_norm_kernel",
                            f"{r}x{c}_{dt}_{'_'.join(given)}_alpha{alpha:g}", inputs,
                            ["x"] + [n if n in given else "none" for n in ("res", "h_out", "w")] +
                            ["y", "stride", "n_cols", "eps"], [r], [n for n in ("h_out",) if n in given] + ["y"], "",
                            {"none": None, "stride": c, "n_cols": c, "eps": 1e-6},
                            {"ALPHA": alpha, "BLOCK_N": _npo2(c)}))

    for (t, h, half) in [(5, 4, 32), (3, 6, 64)]:
        for dt in F:
            out.append(case("rope_complex", "rope_complex_kernel", f"t{t}_h{h}_half{half}_{dt}",
                            [inp("q", [t, h, 2 * half], dt, "randn"),
                             inp("freqs", [16, half, 2], "float32", "uniform", lo=-1.0, hi=1.0),
                             inp("pos", [t], "int32", "randint", lo=0, hi=16)],
                            ["q", "freqs", "pos", "q_stride", "n_heads"], [t], ["q"], "",
                            {"q_stride": h * 2 * half, "n_heads": h}, {"HALF": half, "BLOCK_H": _npo2(h)}))

    out += _row_cases("grad_scale", "grad_scale_kernel", [(4, 512), (7, 1000)], F, lambda m, k, name, r, c, dt: case(
        m, k, name, [inp("dy", [r, c], dt, "randn"), inp("x", [r, c], dt, "randn"), inp("dx", [r, c], dt, "poison")],
        ["dy", "x", "dx", "stride", "n_cols"], [r], ["dx"], "", {"stride": c, "n_cols": c},
        {"X_DTYPE": dt, "BLOCK_N": _npo2(c)}))
    # f32 gradients, the activation rounded to f16 (X_DTYPE): the product is f32
    out.append(case("grad_scale", "grad_scale_kernel", "5x700_float32_xf16",
                    [inp("dy", [5, 700], "float32", "randn"), inp("x", [5, 700], "float32", "randn"),
                     inp("dx", [5, 700], "float32", "poison")],
                    ["dy", "x", "dx", "stride", "n_cols"], [5], ["dx"], "", {"stride": 700, "n_cols": 700},
                    {"X_DTYPE": "float16", "BLOCK_N": 1024}))

    for (t, hq, hk, d) in [(5, 4, 2, 64), (3, 32, 8, 128)]:
        for dt in F:
            out.append(case("rope", "rope_kernel", f"t{t}_hq{hq}_hk{hk}_d{d}_{dt}",
                            [inp("q", [t, hq, d], dt, "randn"), inp("k", [t, hk, d], dt, "randn"),
                             inp("cos", [16, d // 2], "float32", "uniform", lo=-1.0, hi=1.0),
                             inp("sin", [16, d // 2], "float32", "uniform", lo=-1.0, hi=1.0),
                             inp("pos", [t], "int32", "randint", lo=0, hi=16)],
                            ["q", "k", "cos", "sin", "pos", "q_stride", "k_stride", "cs_stride", "hq", "hk"], [t],
                            ["q", "k"], "", {"q_stride": hq * d, "k_stride": hk * d, "cs_stride": d // 2, "hq": hq,
                                             "hk": hk},
                            {"HEAD_DIM": d, "BLOCK_H": _npo2(max(hq, hk))}))

    def swi_fwd(m, k, name, r, c, dt):
        return case(m, k, name, [inp("a", [r, c], dt, "randn", scale=2.0), inp("b", [r, c], dt, "randn"),
                                 inp("c", [r, c], dt, "poison")],
                    ["a", "b", "c", "stride", "n_cols"], [r], ["c"], "", {"stride": c, "n_cols": c},
                    {"BLOCK_N": _npo2(c)})
    out += _row_cases("swiglu", "swiglu_fwd_kernel", [(4, 512), (5, 1000)], F, swi_fwd)

    def swi_bwd(m, k, name, r, c, dt):
        return case(m, k, name, [inp("dc", [r, c], dt, "randn"), inp("a", [r, c], dt, "randn", scale=2.0),
                                 inp("b", [r, c], dt, "randn")],
                    ["dc", "a", "b", "stride", "n_cols"], [r], ["a", "b"], "", {"stride": c, "n_cols": c},
                    {"BLOCK_N": _npo2(c)})
    out += _row_cases("swiglu", "swiglu_bwd_kernel", [(4, 512), (5, 1000)], F, swi_bwd)

    def geg_fwd(m, k, name, r, c, dt):
        return case(m, k, name, [inp("a", [r, c], dt, "randn", scale=2.0), inp("b", [r, c], dt, "randn"),
                                 inp("c", [r, c], dt, "poison")],
                    ["a", "b", "c", "n_rows", "n_cols"], [_cdiv(r, 4), _cdiv(c, 256)], ["c"], "",
                    {"n_rows": r, "n_cols": c}, {"BLOCK_M": 4, "BLOCK_N": 256})
    out += _row_cases("geglu", "geglu_fwd_kernel", [(8, 512), (9, 1000)], F, geg_fwd)

    def geg_bwd(m, k, name, r, c, dt):
        return case(m, k, name, [inp("dc", [r, c], dt, "randn"), inp("a", [r, c], dt, "randn", scale=2.0),
                                 inp("b", [r, c], dt, "randn"), inp("da", [r, c], dt, "poison"),
                                 inp("db", [r, c], dt, "poison")],
                    ["dc", "a", "b", "da", "db", "n_rows", "n_cols"], [_cdiv(r, 4), _cdiv(c, 256)], ["da", "db"], "",
                    {"n_rows": r, "n_cols": c}, {"BLOCK_M": 4, "BLOCK_N": 256})
    out += _row_cases("geglu", "geglu_bwd_kernel", [(8, 512), (9, 1000)], F, geg_bwd)

    for (r, v), ls in [((4, 1000), 0.0), ((6, 5000), 0.1)]:
        for dt in F:
            # rows 0, 3, 6, ... get ignore_index
            out.append(case("cross_entropy", "cross_entropy_kernel", f"{r}x{v}_{dt}_ls{ls:g}",
                            [inp("logits", [r, v], dt, "randn", scale=2.0),
                             inp("target", [r], "int64", "randint", lo=0, hi=v, ignore=-100, every=3),
                             inp("loss", [r], "float32", "poison")],
                            ["logits", "stride", "target", "loss", "n_cols", "n_non_ignore", "ignore_index",
                             "label_smoothing"], [r], ["logits", "loss"], "",
                            {"stride": v, "n_cols": v, "n_non_ignore": r - _cdiv(r, 3), "ignore_index": -100,
                             "label_smoothing": ls},
                            {"BLOCK_V": min(4096, _npo2(v)), "HAS_SMOOTHING": ls > 0.0}))

    # a 2-D grid of (sequence, position) programs, each storing one element at `LOGP + b * L + l`
    for (b, l, n), blk in [((2, 3, 1000), 256), ((3, 5, 700), 1024)]:
        out += [case(*token_logprob_args(b, l, n, dt, blk)) for dt in F]

    for (b, h, s, d), causal, dt in [((1, 2, 128, 64), True, "float16"), ((2, 1, 100, 64), False, "float16"),
                                     ((1, 2, 200, 64), True, "float16"), ((1, 1, 90, 32), True, "float32"),
                                     ((1, 1, 70, 32), False, "float32")]:
        shp = [b, h, s, d]
        out.append(case("flash_attention", "attn_fwd_kernel",
                        f"b{b}h{h}s{s}d{d}_{'causal' if causal else 'full'}{'_' + dt if dt != 'float16' else ''}",
                        [inp("q", shp, dt, "randn"), inp("k", shp, dt, "randn"),
                         inp("v", shp, dt, "randn"), inp("o", shp, dt, "poison"),
                         inp("lse", [b, h, s], "float32", "poison")],
                        ["q", "k", "v", "o", "lse", "sm_scale", "n_heads", "seq_len", "sb", "sh", "ss"],
                        [_cdiv(s, 128), b * h], ["o", "lse"], "",
                        {"sm_scale": 1.0 / math.sqrt(d), "n_heads": h, "seq_len": s, "sb": h * s * d, "sh": s * d,
                         "ss": d},
                        {"HEAD_DIM": d, "BLOCK_M": 128, "BLOCK_N": 64, "IS_CAUSAL": causal},
                        tol={"o": (4e-3, 4e-3), "lse": (1e-4, 1e-4)}))

    for (bh, t, d), dt in [((2, 100, 32), "float16"), ((3, 128, 64), "float16"), ((1, 70, 32), "float32")]:
        shp = [bh, t, d]
        out.append(case("block_ptr_ops", "bp_attn_fwd_kernel", f"bh{bh}t{t}d{d}{'_' + dt if dt != 'float16' else ''}",
                        [inp("q", shp, dt, "randn"), inp("k", shp, dt, "randn"),
                         inp("v", shp, dt, "randn"), inp("o", shp, dt, "poison")],
                        ["q", "k", "v", "o", "T", "scale"], [_cdiv(t, 64), bh], ["o"], "",
                        {"T": t, "scale": 0.125}, {"D": d, "BT": 64, "BS": 32}, tol={"o": (4e-3, 4e-3)}))
    for (bh, t) in [(2, 300), (1, 64)]:
        for dt in F:
            out.append(case("block_ptr_ops", "chunk_local_cumsum_kernel", f"bh{bh}t{t}_{dt}",
                            [inp("s", [bh, t], dt, "randn"), inp("out", [bh, t], dt, "poison")],
                            ["s", "out", "T"], [_cdiv(t, 64), bh], ["out"], "", {"T": t}, {"BT": 64}))

    for (seq_lens, hq, hkv, d, n_pages) in [([37, 16, 5], 8, 2, 64, 12), ([50, 64], 4, 4, 128, 9)]:
        bsz = len(seq_lens)
        max_pages = max(_cdiv(s, 16) for s in seq_lens)
        for dt in F:
            out.append(case("paged_decode_attention", "paged_decode_kernel",
                            f"b{bsz}_hq{hq}_hkv{hkv}_d{d}_{dt}",
                            [inp("q", [bsz, hq, d], dt, "randn"),
                             inp("k_cache", [n_pages, 16, hkv, d], dt, "randn"),
                             inp("v_cache", [n_pages, 16, hkv, d], dt, "randn"),
                             inp("block_table", [bsz, max_pages], "int32", "rows_of_randperm", size=n_pages),
                             inp("seq_lens", [bsz], "int32", "given", values=seq_lens),
                             inp("o", [bsz, hq, d], dt, "poison")],
                            ["q", "k_cache", "v_cache", "block_table", "seq_lens", "o", "sm_scale", "sqb", "sqh",
                             "sbt", "spage", "stok", "skvh"], [bsz, hq], ["o"], "",
                            {"sm_scale": 1.0 / math.sqrt(d), "sqb": hq * d, "sqh": d, "sbt": max_pages,
                             "spage": 16 * hkv * d, "stok": hkv * d, "skvh": d},
                            {"N_KV_GROUP": hq // hkv, "HEAD_DIM": d, "PAGE_SIZE": 16}))

    for n_tokens, n_experts in [(50, 8), (24, 4)]:
        n_slots = n_tokens * 2
        topk = inp("topk_ids", [n_tokens, 2], "int32", "randint", lo=0, hi=n_experts)
        out.append(case("moe_align", "moe_count_kernel", f"t{n_tokens}_e{n_experts}",
                        [topk, inp("counts", [n_experts], "int32", "zeros")],
                        ["topk_ids", "counts", "n_slots"], [_cdiv(n_slots, 256)], ["counts"], "",
                        {"n_slots": n_slots}, {"BLOCK": 256}))
        max_padded = n_slots + n_experts * 63
        out.append(case("moe_align", "moe_align_kernel", f"t{n_tokens}_e{n_experts}",
                        [topk, inp("counts", [n_experts], "int32", "bincount", of="topk_ids", minlength=n_experts),
                         inp("sorted_ids", [max_padded], "int32", "poison"),
                         inp("expert_offsets", [n_experts + 1], "int32", "poison")],
                        ["topk_ids", "counts", "sorted_ids", "expert_offsets", "n_slots", "n_experts"], [n_experts],
                        ["sorted_ids", "expert_offsets"], "", {"n_slots": n_slots, "n_experts": n_experts},
                        {"BLOCK_SIZE": 64, "BLOCK_E": _npo2(n_experts), "BLOCK": 256}))
        for dt in F:
            hidden = 300 if n_tokens == 50 else 1100
            out.append(case("moe_align", "moe_permute_kernel", f"t{n_tokens}_e{n_experts}_h{hidden}_{dt}",
                            [topk, inp("x", [n_tokens, hidden], dt, "randn"),
                             inp("sorted_ids", [max_padded], "int32", "moe_sorted_ids", of="topk_ids",
                                 n_experts=n_experts, block_size=64),
                             inp("out", [max_padded, hidden], dt, "poison")],
                            ["x", "sorted_ids", "out", "n_slots", "hidden"], [max_padded], ["out"], "",
                            {"n_slots": n_slots, "hidden": hidden}, {"TOP_K": 2, "BLOCK_H": 1024}))

    for (M, N, K) in [(16, 64, 512), (30, 100, 700)]:
        for dt in F:
            out.append(case("split_k_gemm", "split_k_gemm_kernel", f"{M}x{N}x{K}_{dt}",
                            [inp("a", [M, K], dt, "randn"), inp("b", [K, N], dt, "randn"),
                             inp("c", [M, N], "float32", "zeros")],
                            ["a", "b", "c", "M", "N", "K", "K", "N", "N"], [_cdiv(M, 16) * _cdiv(N, 64), 4], ["c"], "",
                            {"M": M, "N": N, "K": K}, {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 128, "SPLIT_K": 4},
                            tol={"c": (1e-3, 1e-4)}))

    for (M, N, K) in [(128, 128, 128), (100, 200, 96)]:
        for dt in F:
            out.append(case("descriptor_gemm", "descriptor_gemm_kernel", f"{M}x{N}x{K}_{dt}",
                            [inp("x", [M, K], dt, "randn"), inp("w", [N, K], dt, "randn"),
                             inp("out", [M, N], dt, "poison")],
                            ["x", "w", "out", "M", "N", "K"], [_cdiv(M, 64), _cdiv(N, 64)], ["out"], "",
                            {"M": M, "N": N, "K": K}, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32},
                            tol={"out": (2e-2, 1e-2)}))

    for (r, c), beta in [((4, 1000), 0.5), ((3, 3000), 0.0), ((3, 700), 1.0)]:
        for dt in F:
            out.append(case("jsd", "jsd_kernel", f"{r}x{c}_{dt}_beta{beta:g}",
                            [inp("x", [r, c], dt, "log_softmax", scale=2.0), inp("y", [r, c], dt, "log_softmax",
                                                                                  scale=2.0),
                             inp("loss", [r], "float32", "poison"), inp("dx", [r, c], dt, "poison")],
                            ["x", "y", "loss", "dx", "stride", "n_cols", "n_rows", "beta"], [r], ["loss", "dx"], "",
                            {"stride": c, "n_cols": c, "n_rows": r, "beta": beta},
                            {"BLOCK_N": min(8192, _npo2(c))}, tol={"dx": (1e-6, 4e-3)}))

    def fp8(m, k, name, r, c, dt):
        return case(m, k, name, [inp("x", [r, c], dt, "randn", scale=3.0), inp("q", [r, c], "float8_e4m3fn", "zeros"),
                                 inp("scale", [r], "float32", "poison")],
                    ["x", "q", "scale", "stride", "stride", "n_cols"], [r], ["q", "scale"], "",
                    {"stride": c, "n_cols": c}, {"FP8_MAX": 448.0, "BLOCK_N": _npo2(c)})
    out += _row_cases("fp8_quant", "fp8_row_quant_kernel", [(4, 512), (5, 1000)], F, fp8)

    for n, p in [(4096, 0.1), (3001, 0.3)]:
        for dt in F:
            out.append(case("dropout", "dropout_fwd_kernel", f"n{n}_p{p:g}_{dt}",
                            [inp("x", [n], dt, "randn"), inp("out", [n], dt, "poison")],
                            ["x", "out", "n", "p", "seed"], [_cdiv(n, 1024)], ["out"], "",
                            {"n": n, "p": p, "seed": 1234}, {"BLOCK_SIZE": 1024}))

    # Philox: raw draws compared bit for bit (tolerance 0), a negative seed (its high key word all ones), 64-bit
    # offsets with a non-zero high word, fewer rounds than the default; row seeds beyond 32 bits
    exact = {"bits": (0, 0), "uniform": (0, 0), "mixed": (0, 0)}
    for n, seed in [(4096, 1234), (3001, -987654321)]:
        out.append(case("random_numbers", "random_draws_kernel", f"n{n}_seed{seed}",
                        [inp("bits", [n], "int32", "poison"), inp("uniform", [n], "float32", "poison")],
                        ["bits", "uniform", "n", "seed"], [_cdiv(n, 1024)], ["bits", "uniform"], "",
                        {"n": n, "seed": seed}, {"BLOCK": 1024}, tol=exact))
    for n, seed, rounds in [(1000, 42, 10), (777, 2024, 7)]:
        out.append(case("random_numbers", "random_streams_kernel", f"n{n}_seed{seed}_rounds{rounds}",
                        [inp("bits", [4 * n], "int32", "poison"), inp("uniform", [4 * n], "float32", "poison"),
                         inp("mixed", [n], "float32", "poison")],
                        ["bits", "uniform", "mixed", "n", "seed"], [_cdiv(n, 256)], ["bits", "uniform", "mixed"], "",
                        {"n": n, "seed": seed}, {"N_ROUNDS": rounds, "BLOCK": 256}, tol=exact))
    for (r, c), p in [((6, 512), 0.25), ((5, 1000), 0.5)]:
        for dt in F:
            out.append(case("random_numbers", "row_dropout_kernel", f"{r}x{c}_p{p:g}_{dt}",
                            [inp("x", [r, c], dt, "randn"), inp("seeds", [r], "int64", "randint", lo=-2**40, hi=2**40),
                             inp("out", [r, c], dt, "poison")],
                            ["x", "seeds", "out", "n_cols", "stride", "p"], [r], ["out"], "",
                            {"n_cols": c, "stride": c, "p": p}, {"BLOCK": _npo2(c)}))

    # even both ways, in one dimension only (either), neither: EVEN_M and EVEN_N each decide alone
    for (r, c), dts in [((64, 256), F), ((64, 300), ["float32"]), ((50, 256), ["float16"]), ((50, 300), ["float32"])]:
        for dt in dts:
            out.append(case("bias_act", "bias_relu_kernel", f"{r}x{c}_{dt}",
                            [inp("x", [r, c], dt, "randn"), inp("bias", [c], dt, "randn"),
                             inp("y", [r, c], dt, "poison")],
                            ["x", "bias", "y", "n_rows", "n_cols", "stride"], [_cdiv(r, 32), _cdiv(c, 128)], ["y"], "",
                            {"n_rows": r, "n_cols": c, "stride": c}, {"BLOCK_M": 32, "BLOCK_N": 128}))

    for (r, c), dt in [((3, 1000), "float32"), ((2, 1500), "float16"), ((4, 1500), "int32")]:
        acc = "int32" if dt == "int32" else "float32"
        init = ("randint", {"lo": -50, "hi": 50}) if dt == "int32" else ("randn", {})
        out.append(case("cumsum", "row_cumsum_kernel", f"{r}x{c}_{dt}",
                        [inp("x", [r, c], dt, init[0], **init[1]), inp("y", [r, c], acc, "poison")],
                        ["x", "y", "stride", "stride", "n_cols"], [r], ["y"], "", {"stride": c, "n_cols": c},
                        {"ACC_DTYPE": acc, "BLOCK_N": 512}, tol={"y": (1e-4, 1e-5)} if acc == "float32" else None))

    for (b, d, t), act, bt in [((2, 64, 100), True, 64), ((1, 100, 130), False, 32)]:
        for dt in F:
            out.append(case("causal_conv1d", "causal_conv1d_kernel",
                            f"b{b}d{d}t{t}_{dt}_{'silu' if act else 'id'}{'' if bt == 64 else f'_bt{bt}'}",
                            [inp("x", [b, d, t], dt, "randn"), inp("w", [d, 4], dt, "randn", scale=0.5),
                             inp("bias", [d], dt, "randn"), inp("y", [b, d, t], dt, "poison")],
                            ["x", "w", "bias", "y", "dim", "seq_len", "sb", "sd"],
                            [b, _cdiv(d, 64), _cdiv(t, bt)], ["y"], "",
                            {"dim": d, "seq_len": t, "sb": d * t, "sd": t},
                            {"WIDTH": 4, "BLOCK_D": 64, "BLOCK_T": bt, "SILU": act}))

    for n_rows, padded, hidden, bh in [(5, 8, 700, 512), (13, 16, 1024, 256)]:
        for dt in F:
            out.append(case("embedding", "embedding_kernel",
                            f"rows{n_rows}of{padded}_h{hidden}_{dt}{'' if bh == 512 else f'_bh{bh}'}",
                            [inp("ids", [n_rows], "int32", "randint", lo=0, hi=50, ignore=-1, every=4),
                             inp("weight", [50, hidden], dt, "randn"), inp("out", [padded, hidden], dt, "poison")],
                            ["ids", "weight", "out", "n_rows", "hidden", "hidden", "hidden", "pad_id"], [padded],
                            ["out"], "", {"n_rows": n_rows, "hidden": hidden, "pad_id": -1}, {"BLOCK_H": bh}))

    for (r, c), blk in [((64, 128), 1024), ((37, 91), 256)]:
        for dt in F:
            out.append(case("transpose", "transpose_kernel", f"{r}x{c}_{dt}{'' if blk == 1024 else f'_block{blk}'}",
                            [inp("x", [r, c], dt, "randn"), inp("y", [c, r], dt, "poison")],
                            ["x", "y", "n_rows", "n_cols"], [_cdiv(r * c, blk)], ["y"], "",
                            {"n_rows": r, "n_cols": c}, {"BLOCK": blk}))
    for (r, c), shift, (bm, bn) in [((16, 128), 5, (16, 128)), ((20, 100), -130, (16, 128)),
                                    ((20, 100), 250, (8, 64)), ((33, 300), 37, (8, 64))]:
        out.append(case("transpose", "roll_kernel", f"{r}x{c}_shift{shift}{'' if bn == 128 else f'_b{bm}x{bn}'}",
                        [inp("x", [r, c], "float32", "randn"), inp("y", [r, c], "float32", "poison")],
                        ["x", "y", "n_rows", "n_cols", "shift"], [_cdiv(r, bm), _cdiv(c, bn)], ["y"], "",
                        {"n_rows": r, "n_cols": c, "shift": shift}, {"BLOCK_M": bm, "BLOCK_N": bn}))

    # an int32 table stored into int64: the store's integer cast (sign extension)
    for (h, ql, kl), dt, out_dt in [((2, 40, 70), "float32", "float32"), ((3, 64, 128), "float32", "float32"),
                                    ((2, 33, 50), "int32", "int64")]:
        out.append(case("rel_pos_bias", "rel_pos_bias_kernel",
                        f"h{h}_q{ql}_k{kl}{'' if dt == 'float32' else f'_{dt}_to_{out_dt}'}",
                        [inp("table", [h, 32], dt, *(("randint",) if dt == "int32" else ("randn",)),
                             **({"lo": -1000, "hi": 1000} if dt == "int32" else {})),
                         inp("out", [h, ql, kl], out_dt, "poison")],
                        ["table", "out", "q_len", "k_len"], [_cdiv(ql, 32), _cdiv(kl, 64), h], ["out"], "",
                        {"q_len": ql, "k_len": kl}, {"N_BUCKETS": 32, "BUCKET_WIDTH": 8, "BLOCK_Q": 32, "BLOCK_K": 64}))

    # int8 operands accumulated in int32 (exact), ragged edges through the block pointers' boundary checks;
    # the row-scaled product written as float
    for (m, n, k), (bm, bn, bk) in [((70, 50, 100), (32, 32, 32)), ((64, 96, 64), (32, 32, 16))]:
        shape = f"{m}x{n}x{k}{'' if bk == 32 else f'_bk{bk}'}"
        out.append(case("int8_matmul", "int8_gemm_kernel", shape,
                        [inp("a", [m, k], "int8", "randint", lo=-128, hi=128),
                         inp("b", [k, n], "int8", "randint", lo=-128, hi=128), inp("c", [m, n], "int32", "poison")],
                        ["a", "b", "c", "M", "N", "K", "sak", "one", "sbk", "one", "scm", "one"],
                        [_cdiv(m, bm), _cdiv(n, bn)], ["c"], "",
                        {"M": m, "N": n, "K": k, "sak": k, "sbk": n, "scm": n, "one": 1},
                        {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}))
        for dt in F:
            out.append(case("int8_matmul", "int8_gemm_rowscale_kernel", f"{shape}_{dt}",
                            [inp("a", [m, k], "int8", "randint", lo=-128, hi=128),
                             inp("b", [k, n], "int8", "randint", lo=-128, hi=128),
                             inp("scale", [m], dt, "uniform", lo=1e-5, hi=2e-5), inp("out", [m, n], dt, "poison")],
                            ["a", "b", "scale", "out", "M", "N", "K", "sak", "one", "sbk", "one", "som", "one"],
                            [_cdiv(m, bm), _cdiv(n, bn)], ["out"], "",
                            {"M": m, "N": n, "K": k, "sak": k, "sbk": n, "som": n, "one": 1},
                            {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}))
    # host-made tensor descriptors (TensorDescriptor.from_tensor on the host, `desc.load` / `desc.store` in the
    # kernel): a weight block past the row's end reads zeros; matmul tiles clipped at the M / N edges, the K
    # tail zero-filled
    for (r, c), dt in [((6, 100), "float32"), ((5, 64), "float16")]:
        bn = _npo2(c)
        out.append(case("host_descriptor_norm", "host_desc_row_norm_kernel", f"{r}x{c}_{dt}",
                        [inp("x", [r, c], dt, "randn"), inp("out", [r, c], dt, "poison"), inp("w", [c], dt, "randn")],
                        ["x", "out", "w_desc", "stride", "eps"], [r], ["out"], "", {"stride": c, "eps": 1e-5},
                        {"BLOCK_N": bn}, descriptors={"w_desc": {"base": "w", "block": [bn]}}, package=UNSEEN_PKG))
    for (M, N, K), (bm, bn, bk) in [((64, 64, 64), (64, 64, 32)), ((70, 52, 40), (64, 32, 32))]:
        out.append(case("host_descriptor_matmul", "host_desc_matmul_kernel", f"{M}x{N}x{K}_float32",
                        [inp("a", [M, K], "float32", "randn"), inp("b", [K, N], "float32", "randn"),
                         inp("c", [M, N], "float32", "poison")],
                        ["a_desc", "b_desc", "c_desc", "K"], [_cdiv(M, bm), _cdiv(N, bn)], ["c"], "", {"K": K},
                        {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, tol={"c": (2e-2, 1e-2)},
                        descriptors={"a_desc": {"base": "a", "block": [bm, bk]},
                                     "b_desc": {"base": "b", "block": [bk, bn]},
                                     "c_desc": {"base": "c", "block": [bm, bn]}}, package=UNSEEN_PKG))
    # a descriptor whose extent the kernel loads: the rows past it read zeros
    for rows, n_valid in [(64, 37), (48, 48)]:
        out.append(case("descriptor_computed_shape", "desc_computed_shape_kernel", f"{rows}rows_{n_valid}valid",
                        [inp("x", [rows, 16], "float32", "randn"), inp("count", [1], "int32", "given", values=[n_valid]),
                         inp("out", [rows, 16], "float32", "poison")],
                        ["x", "count", "out"], [_cdiv(rows, 16)], ["out"], "", {}, {"D": 16, "BLOCK_M": 16},
                        package=UNSEEN_PKG))
    # descriptors of pointers advanced to each sequence's start (cu_seqlens), sequences shorter and longer than BT
    out.append(case("descriptor_advanced_base", "varlen_scale_kernel", "3seqs",
                    [inp("x", [37, 2, 16], "float32", "randn"), inp("y", [37, 2, 16], "float32", "poison"),
                     inp("cu", [4], "int32", "given", values=[0, 5, 29, 37])],
                    ["x", "y", "cu", "scale"], [2, 6], ["y"], "", {"scale": 0.5}, {"H": 2, "D": 16, "BT": 16},
                    package=UNSEEN_PKG))
    # tl.sum(..., dtype=): float16 rows summed in float32, int8 counts summed in int32
    out.append(case("sum_dtype", "row_sums_kernel", "4x300",
                    [inp("x", [4, 300], "float16", "randn", scale=4.0), inp("c", [4, 300], "int32", "randint", lo=0, hi=100),
                     inp("s", [4], "float32", "poison"), inp("k", [4], "int32", "poison")],
                    ["x", "c", "s", "k", "n_cols"], [4], ["s", "k"], "", {"n_cols": 300}, {"BLOCK": 512}))
    # pointer casts: a packed 4-bit buffer (passed as int32, read as uint8 and as int32 words)
    for n_words, out_dt in ((256, "float32"), (200, "float16")):
        out.append(case("pointer_tables", "dequant4_words_kernel", f"w{n_words}_{out_dt}",
                        [inp("w", [n_words], "int32", "randint", lo=-2 ** 31, hi=2 ** 31),
                         inp("scale", [_cdiv(n_words, 64)], "float32", "uniform", lo=0.5, hi=2.0),
                         inp("out", [n_words * 8], out_dt, "poison")],
                        ["w", "scale", "out", "n_words"], [_cdiv(n_words, 64)], ["out"], "",
                        {"n_words": n_words}, {"WORDS": 64}))
    for n_words in (256, 333):
        out.append(case("pointer_tables", "dequant4_bytes_kernel", f"w{n_words}",
                        [inp("w", [n_words], "int32", "randint", lo=-2 ** 31, hi=2 ** 31),
                         inp("out", [n_words * 8], "float32", "poison")],
                        ["w", "out", "n_bytes"], [_cdiv(n_words * 4, 256)], ["out"], "",
                        {"n_bytes": n_words * 4}, {"BLOCK": 256}))
    # pointer tables: per-group float pointers loaded from int64 tables the host fills with data_ptr() values
    for rows, n_cols, rows_dt in (((3, 1, 5), 40, "int32"), ((2, 4), 64, "int64")):
        groups = len(rows)
        xs = [inp(f"x{i}", [r, n_cols], "float32", "randn") for i, r in enumerate(rows)]
        ys = [inp(f"y{i}", [r, n_cols], "float32", "poison") for i, r in enumerate(rows)]
        out.append(case("pointer_tables", "grouped_row_scale_kernel", f"g{groups}c{n_cols}_{rows_dt}",
                        xs + ys + [inp("x_table", [groups], "int64", "addresses", of=[x["name"] for x in xs]),
                                   inp("y_table", [groups], "int64", "addresses", of=[y["name"] for y in ys]),
                                   inp("rows", [groups], rows_dt, "given", values=list(rows)),
                                   inp("scale", [groups], "float32", "uniform", lo=-2.0, hi=2.0)],
                        ["x_table", "y_table", "rows", "scale", "n_cols"], [groups], [y["name"] for y in ys], "",
                        {"n_cols": n_cols}, {"BLOCK": _npo2(n_cols)}))
    xs = [inp(f"x{i}", [3 + i], "float32", "randn") for i in range(3)]
    out.append(case("pointer_tables", "pointer_tile_kernel", "g3",
                    xs + [inp("table", [3], "int64", "addresses", of=[x["name"] for x in xs]),
                          inp("out", [3], "float32", "poison")],
                    ["table", "out", "n_groups"], [1], ["out"] + [x["name"] for x in xs], "",
                    {"n_groups": 3}, {"BLOCK": 4}))
    # float atomic max / min (integer atomics on the bits): non-negative values, signed values whose extrema
    # start from signed values (both the signed and the unsigned path), and the old value read back
    for n in (4096, 3001):
        out.append(case("float_atomics", "absmax_kernel", f"n{n}",
                        [inp("x", [n], "float32", "randn", scale=100.0), inp("amax", [1], "float32", "given", values=[0.0])],
                        ["x", "amax", "n"], [_cdiv(n, 512)], ["amax"], "", {"n": n}, {"BLOCK": 512}))
    for rows, n_cols in ((9, 200), (4, 64)):
        out.append(case("float_atomics", "col_extrema_kernel", f"{rows}x{n_cols}",
                        [inp("x", [rows, n_cols], "float32", "randn"), inp("mx", [n_cols], "float32", "randn"),
                         inp("mn", [n_cols], "float32", "randn")],
                        ["x", "mx", "mn", "n_cols"], [rows], ["mx", "mn"], "", {"n_cols": n_cols},
                        {"BLOCK": _npo2(n_cols)}, tol={"mx": (0, 0), "mn": (0, 0)}))
    out.append(case("float_atomics", "exchange_max_kernel", "n100",
                    [inp("x", [100], "float32", "randn"), inp("acc", [100], "float32", "randn"),
                     inp("old", [100], "float32", "poison")],
                    ["x", "acc", "old", "n"], [1], ["acc", "old"], "", {"n": 100}, {"BLOCK": 128},
                    tol={"acc": (0, 0), "old": (0, 0)}))
    for j, dt in ((3, "float32"), (0, "float16"), (7, "float32")):
        out.append(case("gather", "row_pick_kernel", f"j{j}_{dt}",
                        [inp("x", [8, 32], dt, "randn"), inp("y", [32], dt, "poison")],
                        ["x", "y", "j"], [1], ["y"], "", {"j": j}, {"BC": 8, "BK": 32}, tol={"y": (0, 0)}))
    for idx_dt in ("int32", "int64"):
        out.append(case("gather", "permute_kernel", f"n64_{idx_dt}",
                        [inp("x", [64], "float32", "randn"), inp("idx", [64], idx_dt, "randint", lo=0, hi=64),
                         inp("y", [64], "float32", "poison")],
                        ["x", "idx", "y"], [1], ["y"], "", {}, {"N": 64}, tol={"y": (0, 0)}))
    # a table gathered by a 2-D tile flattened to its element count (ROWS * COLS: a derived constant) and back
    for rows, cols in ((4, 8), (2, 32)):
        out.append(case("gather", "nibble_lookup_kernel", f"r{rows}c{cols}",
                        [inp("table", [16], "float32", "randn"), inp("q", [rows, cols], "int32", "randint", lo=0, hi=256),
                         inp("y", [rows, cols], "float32", "poison")],
                        ["table", "q", "y"], [1], ["y"], "", {}, {"ROWS": rows, "COLS": cols}, tol={"y": (0, 0)}))
    for n, dt in ((64, "float32"), (128, "float16")):
        out.append(case("interleave", "interleave_kernel", f"n{n}_{dt}",
                        [inp("a", [n], dt, "randn"), inp("b", [n], dt, "randn"), inp("y", [2 * n], dt, "poison")],
                        ["a", "b", "y"], [1], ["y"], "", {}, {"BLOCK": n}, tol={"y": (0, 0)}))
    out.append(case("interleave", "interleave_rows_kernel", "r4",
                    [inp("a", [4, 8], "float32", "randn"), inp("b", [4, 8], "float32", "randn"),
                     inp("y", [4, 16], "float32", "poison")],
                    ["a", "b", "y"], [1], ["y"], "", {}, {"ROWS": 4}, tol={"y": (0, 0)}))
    out.append(case("interleave", "interleave_halves_kernel", "h16",
                    [inp("x", [32], "float32", "randn"), inp("y", [64], "float32", "poison")],
                    ["x", "y"], [1], ["y"], "", {}, {"HALF": 16}, tol={"y": (0, 0)}))
    # tl.flip / tl.sort / tl.topk: a flip of a literal extent (cut and joined) and of constexpr extents (one-hot),
    # sorts and top-k of rows with duplicates (small integers, as floats too), both directions; int32 keys of
    # every size (past 2**24: a float32 would round them)
    for dt in ("float32", "float16"):
        out.append(case("flips", "rotate_pairs_kernel", f"r4d16_{dt}",
                        [inp("x", [4, 16], dt, "randn"), inp("cos", [16], dt, "randn"), inp("sin", [16], dt, "randn"),
                         inp("y", [4, 16], dt, "poison")],
                        ["x", "cos", "sin", "y"], [1], ["y"], "", {}, {"ROWS": 4, "D": 16, "HALF": 8}))
    out.append(case("flips", "rotate_vector_kernel", "d32",
                    [inp("x", [32], "float32", "randn"), inp("cos", [32], "float32", "randn"),
                     inp("sin", [32], "float32", "randn"), inp("y", [32], "float32", "poison")],
                    ["x", "cos", "sin", "y"], [1], ["y"], "", {}, {"D": 32}))
    for dt in ("float32", "float16"):
        out.append(case("flips", "reverse_quads_kernel", f"n64_{dt}",
                        [inp("x", [64], dt, "randn"), inp("y", [64], dt, "poison")],
                        ["x", "y"], [1], ["y"], "", {}, {"BLOCK": 64, "QUADS": 16}, tol={"y": (0, 0)}))
    for (r, c), dt in (((4, 8), "float32"), ((8, 4), "float16")):
        out.append(case("flips", "flip_2d_kernel", f"{r}x{c}_{dt}",
                        [inp("x", [r, c], dt, "randn")]
                        + [inp(o, [r, c], dt, "poison") for o in ("rows", "cols", "last")],
                        ["x", "rows", "cols", "last"], [1], ["rows", "cols", "last"], "", {}, {"R": r, "C": c},
                        tol={o: (0, 0) for o in ("rows", "cols", "last")}))
    for (r, c), dt, desc in (((4, 16), "float32", True), ((4, 16), "float32", False), ((2, 32), "float16", True)):
        out.append(case("flips", "sort_rows_kernel", f"{r}x{c}_{dt}_{'desc' if desc else 'asc'}",
                        [inp("x", [r, c], dt, "randint", lo=-6, hi=6), inp("up", [r, c], dt, "poison"),
                         inp("down", [r, c], dt, "poison")],
                        ["x", "up", "down"], [1], ["up", "down"], "", {}, {"R": r, "C": c, "DESC": desc},
                        tol={"up": (0, 0), "down": (0, 0)}))
    out.append(case("flips", "sort_rows_kernel", "4x16_float32_randn",
                    [inp("x", [4, 16], "float32", "randn", scale=100.0), inp("up", [4, 16], "float32", "poison"),
                     inp("down", [4, 16], "float32", "poison")],
                    ["x", "up", "down"], [1], ["up", "down"], "", {}, {"R": 4, "C": 16, "DESC": True},
                    tol={"up": (0, 0), "down": (0, 0)}))
    for (r, c, k), dt in (((4, 32, 4), "float32"), ((2, 16, 8), "float16"), ((4, 16, 16), "float32")):
        out.append(case("flips", "topk_rows_kernel", f"{r}x{c}k{k}_{dt}",
                        [inp("x", [r, c], dt, "randint", lo=-20, hi=20), inp("y", [r, k], dt, "poison")],
                        ["x", "y"], [1], ["y"], "", {}, {"R": r, "C": c, "K": k}, tol={"y": (0, 0)}))
    for (r, c, k), (lo, hi), desc in (((4, 16, 4), (-6, 6), False), ((2, 64, 8), (-2**31, 2**31), True)):
        out.append(case("flips", "int_rows_kernel", f"{r}x{c}k{k}_{'desc' if desc else 'asc'}",
                        [inp("x", [r, c], "int32", "randint", lo=lo, hi=hi), inp("up", [r, c], "int32", "poison"),
                         inp("top", [r, k], "int32", "poison"), inp("rev", [r, c], "int32", "poison")],
                        ["x", "up", "top", "rev"], [1], ["up", "top", "rev"], "", {},
                        {"R": r, "C": c, "K": k, "DESC": desc}))
    for n in (200, 128):
        out.append(case("flips", "streaming_topk_kernel", f"n{n}",
                        [inp("x", [n], "float32", "randn"), inp("y", [8], "float32", "poison")],
                        ["x", "y", "n"], [1], ["y"], "", {"n": n}, {"K": 8, "TILE": 64, "TILES": _cdiv(n, 64)},
                        tol={"y": (0, 0)}))
    out.append(case("flips", "sorted_gather_kernel", "n64",
                    [inp("idx", [64], "int32", "randint", lo=0, hi=40, ignore=-1, every=3),
                     inp("x", [40], "float32", "randn"), inp("order", [64], "int32", "poison"),
                     inp("y", [64], "float32", "poison")],
                    ["idx", "x", "order", "y"], [1], ["order", "y"], "", {}, {"WIDTH": 40, "BLOCK": 64},
                    tol={"y": (0, 0)}))
    # tl.reduce of a (value, index) pair by an argmax / argmin combine: NaN first (values above nan_above made NaN
    # in the kernel; 9.0: none), ties (small integers) to the first index; a column argmin keeping the last tie
    for (rows, cols), above, dt in (((4, 100), 1.5, "float32"), ((3, 64), 9.0, "float32"), ((4, 50), 2.0, "float16")):
        out.append(case("pair_reduce", "row_argmax_kernel", f"{rows}x{cols}_above{above}_{dt}",
                        [inp("x", [rows, cols], dt, "randn"), inp("v", [rows], dt, "poison"),
                         inp("i", [rows], "int32", "poison")],
                        ["x", "v", "i", "n_cols", "nan_above"], [rows], ["v", "i"], "",
                        {"n_cols": cols, "nan_above": above}, {"BLOCK": 128}, tol={"v": (0, 0)}))
    out.append(case("pair_reduce", "row_argmax_kernel", "4x64_ties",
                    [inp("x", [4, 64], "float32", "randint", lo=-3, hi=3), inp("v", [4], "float32", "poison"),
                     inp("i", [4], "int32", "poison")],
                    ["x", "v", "i", "n_cols", "nan_above"], [4], ["v", "i"], "", {"n_cols": 64, "nan_above": 9.0},
                    {"BLOCK": 64}, tol={"v": (0, 0)}))
    for dt in ("int32",):
        out.append(case("pair_reduce", "column_argmin_kernel", f"8x16_{dt}",
                        [inp("x", [8, 16], dt, "randint", lo=-3, hi=3), inp("v", [16], dt, "poison"),
                         inp("i", [16], "int32", "poison")],
                        ["x", "v", "i"], [1], ["v", "i"], "", {}, {"R": 8, "C": 16}, tol={"v": (0, 0)}))
    # a bitcast of loaded int32 words (the words pointers are fixed to int32; the index pointer keeps int32/int64)
    for n_words, idx_dt in ((256, "int64"), (200, "int32")):
        out.append(case("int_bitcast", "nibble_bits_kernel", f"w{n_words}_{idx_dt}",
                        [inp("w", [n_words], "int32", "randint", lo=-2 ** 31, hi=2 ** 31),
                         inp("idx", [n_words], idx_dt, "randint", lo=0, hi=n_words),
                         inp("zero", [_cdiv(n_words, 8)], "int32", "randint", lo=-2 ** 31, hi=2 ** 31),
                         inp("out", [n_words * 8], "float32", "poison")],
                        ["w", "idx", "zero", "out", "n_words"], [_cdiv(n_words, 64)], ["out"], "",
                        {"n_words": n_words}, {"WORDS": 64}))
    # `x.numel` (a tile's element count), a Python `assert` (dropped, as Triton without debug), a False tile
    for r, c in ((4, 8), (2, 16)):
        out.append(case("tile_numel", "flatten_mean_kernel", f"{r}x{c}",
                        [inp("x", [r * c], "float32", "randn"), inp("out", [r * c], "float32", "poison"),
                         inp("mean", [2], "float32", "poison")],
                        ["x", "out", "mean"], [1], ["out", "mean"], "", {}, {"R": r, "C": c}))
    for n in (100, 128):
        out.append(case("python_assert", "asserted_scale_kernel", f"n{n}",
                        [inp("x", [n], "float32", "randn"), inp("out", [n], "float32", "poison")],
                        ["x", "out", "n", "stride_x"], [_cdiv(n, 32)], ["out"], "", {"n": n, "stride_x": 1},
                        {"BLOCK": 32}))
    for n, groups in ((50, 3), (64, 0)):
        out.append(case("false_tile", "group_mask_kernel", f"n{n}g{groups}",
                        [inp("x", [n], "float32", "randn"), inp("out", [n], "float32", "poison")],
                        ["x", "out", "n", "n_groups"], [1], ["out"], "", {"n": n, "n_groups": groups},
                        {"GROUP": 4, "BLOCK": 64}))
    # the exact GELU: erf as libdevice's __nv_erff (rules/triton_libdevice.py); inputs on both sides of its branch
    # point |x| = 1.00296 and into the saturated tail (|x| > 3.92: erf = +-1)
    for n in (3001,):
        out.append(case("exact_gelu", "erf_kernel", f"n{n}", [inp("x", [n], "float32", "randn", scale=2.5),
                                                             inp("y", [n], "float32", "poison")],
                        ["x", "y", "n"], [_cdiv(n, 1024)], ["y"], "", {"n": n}, {"BLOCK": 1024}))
        for dt in F:
            out.append(case("exact_gelu", "geglu_forward_kernel", f"n{n}_{dt}",
                            [inp("x", [n], dt, "randn", scale=2.0), inp("g", [n], dt, "randn"),
                             inp("y", [n], dt, "poison")],
                            ["x", "g", "y", "n"], [_cdiv(n, 1024)], ["y"], "", {"n": n}, {"BLOCK": 1024}))
            out.append(case("exact_gelu", "gelu_backward_kernel", f"n{n}_{dt}",
                            [inp("dy", [n], dt, "randn"), inp("x", [n], dt, "randn", scale=2.0),
                             inp("dx", [n], dt, "poison")],
                            ["dy", "x", "dx", "n"], [_cdiv(n, 1024)], ["dx"], "", {"n": n}, {"BLOCK": 1024}))
    # tl.inline_asm_elementwise of the PTX subset (numpy references: NUMPY_ONLY): a generated softplus asm string
    # (inputs beyond its threshold 20 on both sides), PDL's griddepcontrol on and off, a mov around a dot, lop3 /
    # xor / shr and prmt with runtime selectors over whole int32 words
    for n, pdl in ((1000, False), (256, True)):
        out.append(case("inline_asm", "softplus_asm_kernel", f"n{n}{'_pdl' if pdl else ''}",
                        [inp("x", [n], "float32", "randn", scale=12.0), inp("y", [n], "float32", "poison")],
                        ["x", "y", "n"], [_cdiv(n, 256)], ["y"], "", {"n": n}, {"BLOCK": 256, "USE_PDL": pdl}))
    out.append(case("inline_asm", "dot_mov_kernel", "m16n32k16",
                    [inp("a", [16, 16], "float32", "randn"), inp("b", [16, 32], "float32", "randn"),
                     inp("c", [16, 32], "float32", "poison")],
                    ["a", "b", "c"], [1], ["c"], "", {}, {"M": 16, "N": 32, "K": 16}))
    out.append(case("inline_asm", "two_outputs_kernel", "n500",
                    [inp("x", [500], "float32", "randn", scale=3.0), inp("i", [500], "int32", "randint", lo=-50, hi=50),
                     inp("y", [500], "float32", "poison"), inp("k", [500], "int32", "poison")],
                    ["x", "i", "y", "k", "n"], [_cdiv(500, 256)], ["y", "k"], "", {"n": 500}, {"BLOCK": 256}))
    out.append(case("inline_asm", "const_operand_kernel", "n300",
                    [inp("x", [300], "float32", "randn", scale=3.0), inp("y", [300], "float32", "poison")],
                    ["x", "y", "n"], [_cdiv(300, 128)], ["y"], "", {"n": 300}, {"BLOCK": 128}, tol={"y": (0, 0)}))
    for n in (300, 128):
        words = [inp(w, [n], "int32", "randint", lo=-2 ** 31, hi=2 ** 31) for w in ("a", "b", "c")]
        out.append(case("inline_asm", "bit_ops_kernel", f"n{n}",
                        words + [inp(o, [n], "int32", "poison") for o in ("maj", "perm", "fld")],
                        ["a", "b", "c", "maj", "perm", "fld", "n"], [_cdiv(n, 128)], ["maj", "perm", "fld"], "", {"n": n},
                        {"BLOCK": 128}))
    # `1.0 / math.sqrt(HEAD_DIM)` of a constexpr (a derived constant of the launcher) and `math.sqrt(2.0)` folded;
    # head dims whose square root is not exact (96, 80) and one that is (64). The default f32 tolerance: the port
    # contracts `q * scale + c` into one fma as Triton's compiler does on the GPU (its interpreter rounds twice)
    for n, hd in ((1000, 96), (256, 64), (300, 80)):
        out.append(case("const_math", "scaled_rows_kernel", f"n{n}_d{hd}",
                        [inp("q", [n], "float32", "randn"), inp("out", [n], "float32", "poison")],
                        ["q", "out", "n"], [_cdiv(n, 256)], ["out"], "", {"n": n}, {"HEAD_DIM": hd, "BLOCK": 256}))
    # token shift over packed variable-length sequences (a tuple assignment widening `i_t` in one constant arm,
    # a `return` in the arm that defines `i_n`): fixed-length batches and packed sequences, f32 and f16
    lens = [5, 1, 9, 4]
    cu = [0] + [int(v) for v in np.cumsum(lens)]
    for D, BD, dt in ((8, 8, "float32"), (20, 32, "float16")):
        B, T = 3, 7
        fixed = [inp("x", [B * T * D], dt, "randn"), inp("y", [B * T * D], dt, "poison"),
                 inp("scale", [B], "float32", "uniform", lo=0.5, hi=2.0), inp("cu", [2], "int32", "given", values=[0, 0])]
        packed = [inp("x", [cu[-1] * D], dt, "randn"), inp("y", [cu[-1] * D], dt, "poison"),
                  inp("scale", [len(lens)], "float32", "uniform", lo=0.5, hi=2.0),
                  inp("cu", [len(cu)], "int32", "given", values=cu)]
        out.append(case("varlen_shift", "shift_tokens_kernel", f"fixed_d{D}_{dt}", fixed, ["x", "y", "scale", "cu", "T"],
                        [B, T], ["y"], "", {"T": T}, {"D": D, "BD": BD, "IS_VARLEN": False}))
        out.append(case("varlen_shift", "shift_tokens_kernel", f"packed_d{D}_{dt}", packed,
                        ["x", "y", "scale", "cu", "T"], [len(lens), max(lens)], ["y"], "", {"T": 0},
                        {"D": D, "BD": BD, "IS_VARLEN": True}))
        BT, nd = 4, _cdiv(D, BD // 2)
        chunks = [v for n, ln in enumerate(lens) for c in range(_cdiv(ln, BT)) for v in (n, c)]
        out.append(case("varlen_shift", "shift_chunks_kernel", f"fixed_d{D}_{dt}",
                        fixed + [inp("chunks", [2], "int32", "given", values=[0, 0])],
                        ["x", "y", "scale", "cu", "chunks", "T"], [nd * _cdiv(T, BT), B], ["y"], "", {"T": T},
                        {"D": D, "BD": BD // 2, "BT": BT, "ND": nd, "IS_VARLEN": False}))
        out.append(case("varlen_shift", "shift_chunks_kernel", f"packed_d{D}_{dt}",
                        packed + [inp("chunks", [len(chunks)], "int32", "given", values=chunks)],
                        ["x", "y", "scale", "cu", "chunks", "T"], [nd * (len(chunks) // 2), 1], ["y"], "", {"T": 0},
                        {"D": D, "BD": BD // 2, "BT": BT, "ND": nd, "IS_VARLEN": True}))
    # a block pointer of another block shape in each arm of a constant `if` (the state stored [V, K] or [K, V])
    for trans, dt in ((True, "float32"), (False, "float32"), (True, "float16")):
        K, V = 16, 40
        out.append(case("block_ptr_arms", "load_state_kernel", f"{'vk' if trans else 'kv'}_{dt}",
                        [inp("h0", [V, K] if trans else [K, V], dt, "randn"), inp("out", [K, V], dt, "poison")],
                        ["h0", "out"], [_cdiv(V, 16)], ["out"], "", {},
                        {"K": K, "V": V, "BK": 16, "BV": 16, "TRANSPOSED": trans}))
    # inputs switched by constexpr flags: a name defined under `if USE_X:` and read later under the same flag
    N, T, D = 3, 5, 20
    for flags, rev, dt in (((1, 1, 1, 1, 1), False, "float32"), ((0, 0, 0, 0, 0), True, "float16"),
                           ((1, 0, 1, 0, 1), True, "float32"), ((0, 1, 0, 1, 0), False, "float16")):
        use_g, use_gk, use_gv, use_h0, store_ht = (bool(f) for f in flags)
        out.append(case("arm_flags", "gated_scan_kernel", f"{''.join(map(str, flags))}_{'rev' if rev else 'fwd'}_{dt}",
                        [inp("x", [N, T, D], dt, "randn"), inp("g", [N, T], "float32", "uniform", lo=-0.5, hi=0.0),
                         inp("gk", [N, T, D], dt, "randn"), inp("gv", [N, T, D], dt, "randn"),
                         inp("o", [N, T, D], dt, "poison"), inp("h0", [N, D], dt, "randn"),
                         inp("ht", [N, D], "float32", "poison")],
                        ["x", "g", "gk", "gv", "o", "h0", "ht", "n_steps"], [N], ["o"] + (["ht"] if store_ht else []),
                        "", {"n_steps": T}, {"NT": T, "D": D, "BD": 32, "USE_G": use_g, "USE_GK": use_gk, "USE_GV": use_gv,
                                   "USE_H0": use_h0, "STORE_HT": store_ht, "REVERSE": rev}))
    # row sums and maxima loaded from memory and carried in float32 through a loop
    for n_cols, dt in ((100, "float32"), (64, "float16")):
        out.append(case("carried_stats", "resume_row_stats_kernel", f"c{n_cols}_{dt}",
                        [inp("x", [32, n_cols], dt, "randn"), inp("L", [32], "float32", "uniform", lo=0.5, hi=2.0),
                         inp("M", [32], "float32", "randn")],
                        ["x", "L", "M"], [32 // 8], ["L", "M"], "", {}, {"n_cols": n_cols, "BR": 8, "BC": 32}))
    # libdevice's approximate intrinsics, ported as the precise functions (NUMPY_ONLY: the interpreter has none)
    for n in (1000, 256):
        out.append(case("fast_math", "fast_features_kernel", f"n{n}",
                        [inp("x", [n], "float32", "uniform", lo=-6.0, hi=6.0), inp("cos", [n], "float32", "poison"),
                         inp("sin", [n], "float32", "poison"), inp("gate", [n], "float32", "poison")],
                        ["x", "cos", "sin", "gate", "n"], [_cdiv(n, 256)], ["cos", "sin", "gate"], "", {"n": n},
                        {"BLOCK": 256}))
    # constexpr locals of constexpr flags (`ANY: tl.constexpr = PERMUTED or SCALED`): a name defined under `if ANY:`
    # read under `if GATHER:`; every combination of the three flags
    perm = [5, 2, 7, 0, 3, 6, 1, 4]
    for flags in range(8):
        gather, scatter, scaled = (bool(flags & b) for b in (1, 2, 4))
        out.append(case("constexpr_locals", "routed_rows_kernel", f"g{int(gather)}s{int(scatter)}w{int(scaled)}",
                        [inp("x", [8, 16], "float32", "randn"), inp("idx", [8], "int32", "given", values=perm),
                         inp("w", [8], "float32", "uniform", lo=0.5, hi=2.0), inp("y", [8, 16], "float32", "zeros")],
                        ["x", "idx", "w", "y"], [8], ["y"], "", {},
                        {"D": 16, "GATHER": gather, "SCATTER": scatter, "SCALED": scaled}, tol={"y": (0.0, 0.0)}))
    # a name an undecided module-level `if` binds to tl.cast or to a function forwarding to x.to
    out.append(case("arm_forwarders", "widen_rows_kernel", "r3",
                    [inp("x", [3, 32], "float16", "randn"), inp("y", [3, 32], "float32", "poison")],
                    ["x", "y", "stride"], [3], ["y"], "", {"stride": 32}, {"BLOCK": 32}, tol={"y": (0.0, 0.0)}))
    for a_flag, b_flag, c_flag in ((0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)):
        out.append(case("constexpr_locals", "flagged_scale_kernel", f"a{a_flag}b{b_flag}c{c_flag}",
                        [inp("x", [16], "float32", "randn"), inp("y", [16], "float32", "poison")],
                        ["x", "y"], [1], ["y"], "", {},
                        {"D": 16, "A": bool(a_flag), "B": bool(b_flag), "C": bool(c_flag)}, tol={"y": (0.0, 0.0)}))
    # a loaded scalar negated (a rank-0 tile of the array's element type in the port)
    # (float32: Triton's tl.exp takes float32 and float64 only)
    out.append(case("scalar_neg", "neg_exp_rows_kernel", "r3",
                    [inp("loss", [3], "float32", "uniform", lo=0.0, hi=3.0), inp("x", [3, 16], "float32", "randn"),
                     inp("y", [3, 16], "float32", "poison")],
                    ["loss", "x", "y"], [3], ["y"], "", {}, {"BLOCK": 16}))
    # a kernel declared by `f = triton.jit(f, ...)` and `f = triton.heuristics({...})(f)` (EVEN: the heuristic's value,
    # which the heuristic sets again in Triton's run; the port's entry is chosen by it)
    for n_cols, block in ((32, 32), (20, 32)):
        out.append(case("call_jit", "scale_rows_kernel", f"c{n_cols}",
                        [inp("x", [3, n_cols], "float32", "randn"), inp("y", [3, n_cols], "float32", "poison")],
                        ["x", "y", "n_cols", "stride"], [3], ["y"], "", {"n_cols": n_cols, "stride": n_cols},
                        {"SCALE": 3, "BLOCK": block, "EVEN": n_cols == block}, tol={"y": (0.0, 0.0)}))
    # libdevice's _rn arithmetic (NUMPY_ONLY: the interpreter has no libdevice): float32, flushing subnormals, never
    # contracted; exact tolerances
    out.append(case("rn_arithmetic", "rn_ops_kernel", "n64", _rn_inputs(64) + [
                    inp(o, [64], "float32", "poison") for o in ("mul", "add", "sub", "div", "fma")],
                    ["x", "y", "z", "w", "mul", "add", "sub", "div", "fma", "n"], [2], ["mul", "add", "sub", "div", "fma"],
                    "", {"n": 64}, {"BLOCK": 32}, tol={o: (0.0, 0.0) for o in ("mul", "add", "sub", "div", "fma")}))
    # a constexpr flag inside a run-time condition
    for use_state in (True, False):
        out.append(case("flag_conditions", "window_start_kernel", f"state_{int(use_state)}",
                        [inp("x", [256], "float32", "randn"), inp("y", [256], "float32", "poison")],
                        ["x", "y", "W"], [4], ["y"], "", {"W": 100}, {"USE_STATE": use_state, "BLOCK": 64}))
    # reductions and scans with a combining function (frontend/combine.py): rows all / any nonzero (row 0 all
    # nonzero, row 1 all zero, rows 2 and 3 mixed; float32: the port reads a loaded array compared with 0 as
    # floats), products and the largest element, integer | ^ & and a reversed or-scan of values sharing their high
    # bits, running any / all / sum
    flags = [1] * 16 + [0] * 16 + [0, 2] * 8 + [3] * 15 + [0]
    for invert in (False, True):
        out.append(case("combine_fns", "row_flags_kernel", f"invert_{int(invert)}",
                        [inp("x", [4, 16], "float32", "given", values=flags), inp("all", [4], "int32", "poison"),
                         inp("any", [4], "int32", "poison")], ["x", "all", "any"], [1], ["all", "any"], "", {},
                        {"INVERT": invert, "N": 16}))
    out.append(case("combine_fns", "products_kernel", "n8",
                    [inp("x", [4, 8], "float32", "uniform", lo=0.5, hi=1.5), inp("col", [8], "float32", "poison"),
                     inp("all", [1], "float32", "poison"), inp("big", [1], "float32", "poison")],
                    ["x", "col", "all", "big"], [1], ["col", "all", "big"], "", {}, {"N": 8}))
    bits = [0x7F0 | (v * 37 % 16) for v in range(32)]
    out.append(case("combine_fns", "int_bits_kernel", "n16",
                    [inp("x", [32], "int32", "given", values=bits)] + [inp(o, [1], "int32", "poison")
                                                                       for o in ("or", "xor", "and")]
                    + [inp("scan", [2, 16], "int32", "poison")],
                    ["x", "or", "xor", "and", "scan"], [1], ["or", "xor", "and", "scan"], "", {}, {"N": 16}))
    out.append(case("combine_fns", "running_flags_kernel", "n16",
                    [inp("x", [16], "float32", "given", values=[1, 2, 0, 3, 1, 0, 0, 5, 1, 1, 0, 2, 9, 1, 0, 4])]
                    + [inp(o, [16], "int32", "poison") for o in ("seen", "clean")] + [inp("sums", [16], "float32", "poison")],
                    ["x", "seen", "clean", "sums"], [1], ["seen", "clean", "sums"], "", {}, {"N": 16}))
    # a name both arms of a constexpr `if` rebind to int8 (each arm its variant); a loop-carried guarded maximum
    for alt in (False, True):
        out.append(case("arm_rebinds", "round_to_int8_kernel", f"alt_{int(alt)}",
                        [inp("x", [64], "float32", "randn", scale=3.0), inp("xq", [64], "int8", "poison")],
                        ["x", "xq", "n"], [1], ["xq"], "", {"n": 64}, {"BLOCK": 64, "ALT_ROUND": alt}))
    # libdevice's tan, sinh, cosh, atan2, pow (float and literal int exponents) and fast_tanf / fast_powf /
    # fast_dividef (numpy reference: NUMPY_ONLY); y of both signs, so atan2 covers every quadrant
    for n in (200, 64):
        out.append(case("libdevice_math", "angle_math_kernel", f"n{n}",
                        [inp("x", [n], "float32", "uniform", lo=-2.5, hi=2.5),
                         inp("y", [n], "float32", "uniform", lo=-2.0, hi=2.0)]
                        + [inp(o, [n], "float32", "poison") for o in ("tan", "hyp", "ang", "pw", "fast")],
                        ["x", "y", "tan", "hyp", "ang", "pw", "fast", "n"], [_cdiv(n, 64)],
                        ["tan", "hyp", "ang", "pw", "fast"], "", {"n": n}, {"BLOCK": 64}))
    # libdevice's isnan / isinf / finitef (int32 1 or 0) and float_as_int / int_as_float: NaN, both infinities,
    # -0.0, subnormals, the largest finite floats
    # (NaN from a poisoned input: a NaN in the case table would not compare equal to itself when read back)
    specials = [1.0, float("inf"), float("-inf"), -0.0, 0.0, 1.0, -1.5, 1e-40, -1e-40, 3.4028235e38,
                -3.4028235e38, 2.5, -7.25, 1e-30, 65504.0, -0.125]
    out.append(case("libdevice_math", "float_class_kernel", "specials",
                    [inp("x", [16], "float32", "given", values=specials), inp("nan", [16], "float32", "poison"),
                     inp("cls", [16], "int32", "poison"), inp("bits", [16], "int32", "poison"),
                     inp("back", [16], "float32", "poison")],
                    ["x", "nan", "cls", "bits", "back", "n"], [1], ["cls", "bits", "back"], "", {"n": 16}, {"BLOCK": 16},
                    tol={"back": (0.0, 0.0)}))
    # a constexpr rebound to a run-time value (the chunk count clipped at the end; the last program's is 2 of 4,
    # a program past the end returns early and leaves its row)
    out.append(case("constexpr_rebind", "clipped_chunk_sum_kernel", "n600",
                    [inp("x", [600], "float32", "randn"), inp("y", [4, 64], "float32", "zeros")],
                    ["x", "y", "n"], [4], ["y"], "", {"n": 600}, {"BC": 64, "NC": 4}))
    # constexpr locals chosen by constexpr arms and sizing tiles: every combination of the two flags
    for per_row in (False, True):
        for per_col in (False, True):
            out.append(case("constexpr_arms", "scaled_tile_kernel", f"r{int(per_row)}c{int(per_col)}",
                            [inp("x", [100, 72], "float32", "randn"), inp("sa", [100], "float32", "uniform", lo=0.5,
                                                                            hi=2.0),
                             inp("sb", [72], "float32", "uniform", lo=0.5, hi=2.0),
                             inp("y", [100, 72], "float32", "poison")],
                            ["x", "sa", "sb", "y", "M", "N"], [4, 3], ["y"], "", {"M": 100, "N": 72},
                            {"TILE_M": 32, "TILE_N": 32, "PER_ROW": per_row, "PER_COL": per_col}))
    # a dtype chosen by constexpr arms (float32 or float16 dot operands)
    for precision in (0, 1):
        out.append(case("constexpr_arms", "gram_kernel", f"p{precision}",
                        [inp("a", [16, 16], "float32", "randn"), inp("c", [16, 16], "float32", "poison")],
                        ["a", "c"], [1], ["c"], "", {}, {"BLOCK": 16, "DOT_PRECISION": precision},
                        tol={"c": (2e-2, 1e-2) if precision == 0 else (1e-4, 1e-4)}))
    # a bitcast of a value loaded through a pointer of any dtype (float32 here: the one 32-bit float)
    out.append(case("generic_bitcast", "exponent_bits_kernel", "n300",
                    [inp("x", [300], "float32", "randn", scale=100.0), inp("e", [300], "int32", "poison"),
                     inp("s", [300], "float32", "poison")],
                    ["x", "e", "s", "n"], [3], ["e", "s"], "", {"n": 300}, {"BLOCK": 128}, tol={"s": (0.0, 0.0)}))
    # tl.add / tl.sub / tl.mul / tl.fdiv: the operators (Triton's interpreter runs them)
    out.append(case("functional_ops", "functional_axpby_kernel", "n300",
                    [inp("x", [300], "float32", "randn"), inp("y", [300], "float32", "randn"),
                     inp("out", [300], "float32", "poison")],
                    ["x", "y", "out", "alpha", "n"], [_cdiv(300, 128)], ["out"], "", {"alpha": 0.75, "n": 300},
                    {"BLOCK": 128}))
    # libdevice.rint / nearbyint: halves of both parities and signs, below-half and above-half fractions, -0.3
    # (-0.0), integers, 2**23 + 1 and beyond (already integral), infinities (numpy reference: NUMPY_ONLY)
    halves = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 0.50000006, -0.3, 3.7, -3.7, 7.0, -8.0, 8388609.0,
              1.0e10, -1.0e10, float("inf"), float("-inf"), 0.125, 0.375, -0.625, 31.875, -31.625, 12.5]
    out.append(case("round_half_even", "round_even_kernel", "n24",
                     [inp("x", [24], "float32", "given", values=halves), inp("r", [24], "float32", "poison"),
                      inp("q", [24], "int32", "poison")], ["x", "r", "q", "n"], [1], ["r", "q"], "", {"n": 24},
                     {"BLOCK": 32}))
    # names bound by try/except at import (frontend/module_try.py): tl.uint_to_uniform_float of Philox bits, two
    # handlers' helpers, an int64 offset split into 32-bit words with 0xFFFFFFFF (a negative one: both words set)
    for off in (123456789, -5):
        out.append(case("compat_try", "compat_noise_kernel", f"off{off}",
                        [inp("x", [200], "float32", "randn", scale=3.0), inp("u", [200], "float32", "poison"),
                         inp("s", [200], "float32", "poison"), inp("w", [200], "int64", "poison"),
                         inp("off", [1], "int64", "given", values=[off])],
                        ["x", "u", "s", "w", "off", "n", "seed"], [4], ["u", "s", "w"], "",
                        {"n": 200, "seed": 1234}, {"BLOCK": 64}, tol={"u": (0.0, 0.0)}))
    # the lowest float32 as the padding of a max (all negative: the padding must never win), capped at int8's top
    for name, lo, hi in (("negative", -500.0, -200.0), ("mixed", -500.0, 500.0)):
        out.append(case("compat_try", "lowest_padded_max_kernel", name,
                        [inp("x", [40], "float32", "uniform", lo=lo, hi=hi), inp("m", [1], "float32", "poison")],
                        ["x", "m", "n"], [1], ["m"], "", {"n": 40}, {"BLOCK": 64}))
    # a float8 dtype chosen at import by an environment default (e4m3fn): every byte but e4m3fn's NaN (0x7F, 0xFF)
    fp8_bytes = [b for b in range(256) if b & 0x7F != 0x7F]
    out.append(case("compat_try", "fp8_bits_kernel", "all_bytes",
                    [inp("x", [254], "int32", "given", values=fp8_bytes), inp("y", [254], "float32", "poison")],
                    ["x", "y", "n"], [1], ["y"], "", {"n": 254}, {"BLOCK": 256}, tol={"y": (0.0, 0.0)}))
    # a row count read from a device tensor behind isinstance / is_ptr tests
    out.append(case("compat_try", "device_count_rows_kernel", "m20",
                    [inp("x", [32], "float32", "randn"), inp("y", [32], "float32", "zeros"),
                     inp("m", [1], "int32", "given", values=[20])], ["x", "y", "m"], [1], ["y"], "", {},
                    {"BLOCK": 32}))
    # tl.minimum / tl.maximum with propagate_nan=ALL (NaN kept) and NONE (NaN dropped: the other operand)
    out.append(case("propagate_nan", "nan_clamp_kernel", "n64",
                    [inp("x", [64], "float32", "randn", scale=2.0), inp("keep", [64], "float32", "poison"),
                     inp("drop", [64], "float32", "poison")], ["x", "keep", "drop", "n", "limit"], [1],
                    ["keep", "drop"], "", {"n": 64, "limit": 1.5}, {"BLOCK": 64},
                    tol={"keep": (0.0, 0.0), "drop": (0.0, 0.0)}))
    # a libdevice shim (numpy reference: NUMPY_ONLY): tanh, a decorator's same-name rint (half to even) and its own
    # `twice`, pow(x, 3) + pow(x, 2) as __nv_powif's flushing products (1e-20: its square is subnormal, flushed),
    # x * rsqrt(mean(x^2) + 1)
    libm_x = [0.125, 0.375, -0.125, -0.625, 1e-20, -1e-20, 2.5, -3.25, 0.7, -0.9, 1.1, 4.0, -0.05, 0.3, 1.9, -2.2,
              0.0, 5.5, -5.5, 0.01, 3.3, -1.7, 0.45, -0.45, 2.0, -2.0, 0.8, 1.25, -1.25, 0.2, 6.0, -0.001]
    out.append(case("compat_libm", "libm_rows_kernel", "n32",
                    [inp("x", [32], "float32", "given", values=libm_x)]
                    + [inp(o, [32], "float32", "poison") for o in ("t", "r", "p", "q")],
                    ["x", "t", "r", "p", "q", "n"], [1], ["t", "r", "p", "q"], "", {"n": 32}, {"BLOCK": 32},
                    tol={"t": (1e-6, 1e-6), "r": (0.0, 0.0), "p": (0.0, 0.0), "q": (1e-6, 1e-5)}))
    # (no NaN in the table: the case table is compared as data, and NaN equals nothing)
    for name, vals in (("mixed", [1.0, float("inf"), 3.0, float("inf"), -2.0, 2.5, 0.5, -1.0]),
                       ("all_guarded", [float("inf")] * 8)):
        out.append(case("arm_rebinds", "lse_max_kernel", name,
                        [inp("lse", [8], "float32", "given", values=vals), inp("out", [1], "float32", "poison")],
                        ["lse", "out"], [1], ["out"], "", {}, {"N": 8}))
    # the int32 minimum as a literal (the sign bit of a float's bits)
    out.append(case("int_min", "sign_bits_kernel", "n64",
                    [inp("x", [64], "float32", "randn"), inp("y", [64], "int32", "poison"),
                     inp("z", [1], "int32", "poison")], ["x", "y", "z"], [1], ["y", "z"], "", {}, {"BLOCK": 64}))
    # a dot of a loaded tile with a float32 one: the loaded array is float32
    out.append(case("dot_operand_dtypes", "decayed_gram_kernel", "n16_k32",
                    [inp("a", [16, 32], "float32", "randn"), inp("out", [16, 16], "float32", "poison")],
                    ["a", "out"], [1], ["out"], "", {}, {"N": 16, "BK": 32}))
    # `input_precision=` a platform-decided module constant ("tf32x3") and a string constexpr: float32 products
    # (Triton's interpreter takes "tf32", "tf32x3" and "ieee" only; its tf32 is float32)
    for precision in ("ieee", "tf32x3"):
        out.append(case("dot_precision", "chain_kernel", precision,
                        [inp(n, [16, 16], "float32", "randn") for n in "abc"] + [inp("out", [16, 16], "float32", "poison")],
                        ["a", "b", "c", "out"], [1], ["out"], "", {}, {"N": 16, "PRECISION": precision}))
    # loops counting down by a tile size (a helper's `-BS`, the kernel's `step = -(2 * BS)`): n a multiple of BS,
    # one that is not, one block, and f16
    for n, bs, dt in ((64, 16, "float32"), (70, 16, "float32"), (9, 16, "float32"), (50, 8, "float16")):
        out.append(case("countdown_loops", "suffix_blocks_kernel", f"n{n}_bs{bs}_{dt}",
                        [inp("x", [3, n], dt, "randn"), inp("y", [3, n], dt, "poison"), inp("z", [3, n], dt, "zeros")],
                        ["x", "y", "z"], [3], ["y", "z"], "", {}, {"N": n, "BS": bs}))
    # triton.next_power_of_2 / tl.standard._log2 of constexprs: K below, at and above a power of two, GROUP 1
    # (GUARD: one program more than rows, returning early)
    for K, group, dt, guard in ((10, 8, "float32", True), (16, 5, "float32", False), (33, 1, "float16", True)):
        out.append(case("constexpr_functions", "pow2_rows_kernel", f"k{K}_g{group}_{dt}",
                        [inp("x", [3, K], dt, "randn"), inp("y", [3, K], dt, "poison")],
                        ["x", "y", "n_rows"], [4 if guard else 3], ["y"], "", {"n_rows": 3},
                        {"K": K, "GROUP": group, "GUARD": guard}))
    # block pointers a helper returns (over a base another helper computes), rows stored [ROWS, n] (PACKED) or
    # [n, ROWS]; a state block of another shape per constant arm read after the `if`
    for n, packed, dt in ((40, True, "float32"), (40, False, "float32"), (23, True, "float16")):
        shape = [3, n] if packed else [n, 3]
        out.append(case("block_ptr_helpers", "scaled_rows_kernel", f"n{n}_{'packed' if packed else 'strided'}_{dt}",
                        [inp("x", shape, dt, "randn"), inp("s", shape, dt, "randn"), inp("out", [3, n], dt, "poison")],
                        ["x", "s", "out", "n"], [3, _cdiv(n, 16)], ["out"], "", {"n": n},
                        {"ROWS": 3, "BLK": 16, "PACKED": packed}))
    for n, dt in ((40, "float32"), (32, "float16")):
        out.append(case("block_ptr_helpers", "block_sums_kernel", f"n{n}_{dt}",
                        [inp("x", [3, n], dt, "randn"), inp("out", [3, 16], "float32", "poison")],
                        ["x", "out"], [3], ["out"], "", {}, {"N": n, "BLK": 16}))
    for v_first, dt in ((True, "float32"), (False, "float32"), (True, "float16")):
        K, V = 16, 40
        out.append(case("block_ptr_helpers", "state_kernel", f"{'vk' if v_first else 'kv'}_{dt}",
                        [inp("h0", [V, K] if v_first else [K, V], dt, "randn"), inp("out", [K, V], dt, "poison")],
                        ["h0", "out"], [_cdiv(V, 16)], ["out"], "", {},
                        {"K": K, "V": V, "BK": 16, "BV": 16, "V_FIRST": v_first}))
    # a name the prefill arm defines (its extra programs return early), read under a later `if` on the same
    # constant; decode steps that emit and that do not
    for decode, start, name in ((False, 5, "prefill"), (True, 7, "decode_emit"), (True, 6, "decode_idle")):
        out.append(case("arm_defined_names", "group_starts_kernel", name,
                        [inp("start", [1], "int32", "given", values=[start]), inp("y", [3, 16], "float32", "zeros")],
                        ["start", "y", "n_groups", "ratio"], [3], ["y"], "", {"n_groups": 2, "ratio": 4},
                        {"DECODE": decode, "BLOCK": 8}, untouched=("y",) if name == "decode_idle" else ()))
    # bitwise atomics and compare-and-swap: bits set and cleared (tokens repeat), a parity, claimed slots
    for set_ in (True, False):
        out.append(case("bit_atomics", "token_bits_kernel", "set" if set_ else "clear",
                        [inp("ids", [300], "int32", "randint", lo=0, hi=640),
                         inp("words", [20], "int32", "randint", lo=-2 ** 31, hi=2 ** 31)],
                        ["ids", "words", "n"], [_cdiv(300, 128)], ["words"], "", {"n": 300},
                        {"SET": set_, "BLOCK": 128}))
    out.append(case("bit_atomics", "parity_kernel", "n500",
                    [inp("x", [500], "int32", "randint", lo=-2 ** 31, hi=2 ** 31), inp("acc", [8], "int32", "zeros")],
                    ["x", "acc", "n"], [_cdiv(500, 128)], ["acc"], "", {"n": 500}, {"LANES": 8, "BLOCK": 128}))
    out.append(case("bit_atomics", "claim_kernel", "4x64",
                    [inp("slots", [256], "int32", "randint", lo=0, hi=2), inp("ready", [4], "int32", "given", values=[1, 1, 1, 1]),
                     inp("old", [256], "int32", "poison")],
                    ["slots", "ready", "old"], [4], ["slots", "old"], "", {}, {"ORDER": "acquire", "BLOCK": 64}))
    # a string constexpr compared only in a helper: each activation it names
    for act in ("silu", "relu2"):
        out.append(case("string_helper_choice", "act_mul_kernel", act,
                        [inp("gate", [300], "float32", "randn", scale=2.0), inp("up", [300], "float32", "randn"),
                         inp("out", [300], "float32", "poison")],
                        ["gate", "up", "out", "n"], [_cdiv(300, 128)], ["out"], "", {"n": 300},
                        {"ACTIVATION": act, "BLOCK": 128}))
    # a dtype constant passed as a host function's result: the e4m3 entry, its bytes through a uint8 view (into
    # an int32 array, as its first case did, and into the uint8 array a caller passes)
    for name, qt in (("e4m3_n300", "int32"), ("e4m3_n300_u8", "uint8")):
        out.append(case("host_dtype_fn", "quant_bytes_kernel", name,
                        [inp("x", [300], "float32", "randn", scale=60.0), inp("q", [300], qt, "poison")],
                        ["x", "q", "scale", "n"], [_cdiv(300, 256)], ["q"], "", {"scale": 2.0, "n": 300},
                        {"OUT_DTYPE": "float8e4nv", "BLOCK": 256}))
    # a dtype name bound per constant arm: a float16 output in one, an int32 one in the other
    for to_a in (True, False):
        out.append(case("dtype_names", "scale_into_kernel", "to_a" if to_a else "to_b",
                        [inp("x", [50], "float32", "randn", scale=4.0), inp("a", [50], "float16", "poison"),
                         inp("b", [50], "int32", "poison")],
                        ["x", "a", "b", "n"], [4], ["a"] if to_a else ["b"], "", {"n": 50},
                        {"TO_A": to_a, "BLOCK": 16}))
    # dtype queries decided per specialization: a helper returning `float("-inf")` for floats (no final return),
    # `is_fp16() or is_bf16()` / `is_fp32()` / `primitive_bitwidth == 16` arms, `tl.full(value=, dtype=)` of a
    # dtype local with `2 ** (8 - 1) - 1`
    for dt in ("float32", "float16"):
        out.append(case("dtype_predicates", "running_max_kernel", f"n300_{dt}",
                        [inp("x", [300], dt, "randn"), inp("out", [3], "float32", "poison")],
                        ["x", "out", "n"], [3], ["out"], "", {"n": 300}, {"BLOCK": 128}))
        out.append(case("dtype_predicates", "widen_by_dtype_kernel", f"n200_{dt}",
                        [inp("x", [200], dt, "randn"), inp("out", [200], dt, "poison")],
                        ["x", "out", "n"], [4], ["out"], "", {"n": 200}, {"BLOCK": 64}))
    for dt in ("float32", "float16"):  # (the port's entries are the float dtypes: no int32 one to run)
        out.append(case("dtype_predicates", "masked_min_kernel", f"n300_{dt}",
                        [inp("x", [300], dt, "randn"), inp("out", [3], dt, "poison")],
                        ["x", "out", "n"], [3], ["out"], "", {"n": 300}, {"BLOCK": 128}))
    for dt in ("float32", "int32"):
        out.append(case("dtype_predicates", "fill_kernel", f"n100_{dt}", [inp("out", [100], dt, "poison")],
                        ["out", "n"], [4], ["out"], "", {"n": 100}, {"BLOCK": 32}))
    # a pointer per row, broadcast with [:, None]
    for dt in ("float32", "float16"):
        out.append(case("pointer_rows", "gather_rows_kernel", dt,
                        [inp("src", [10, 16], dt, "randn"), inp("out", [8, 16], dt, "poison"),
                         inp("pos", [8], "int32", "given", values=[3, 0, 9, 3, 5, 1, 8, 2])],
                        ["src", "out", "pos", "stride_s"], [1], ["out"], "", {"stride_s": 16},
                        {"BLOCK": 8, "D": 16}))
    # a pointer advanced by an int64 offset in both arms of a constant `if`
    for shared, dt in ((True, "float32"), (False, "float32"), (True, "float16")):
        out.append(case("widened_arms", "head_rows_kernel", f"{'shared' if shared else 'own'}_{dt}",
                        [inp("w", [2, 2 if shared else 4, 16], dt, "randn"), inp("out", [2, 4, 16], dt, "poison")],
                        ["w", "out", "H", "HV"], [4, 2], ["out"], "", {"H": 2, "HV": 4},
                        {"D": 16, "SHARED": shared}))
    # pointers chosen at run time: each tensor read and written only where its arm is chosen (outputs poisoned)
    for n_q, n_k in ((3, 3), (4, 2)):
        out.append(case("pointer_choice", "where_rows_kernel", f"q{n_q}k{n_k}",
                        [inp("q", [n_q, 24], "float32", "randn"), inp("k", [n_k, 24], "float32", "randn"),
                         inp("q_out", [n_q, 24], "float32", "poison"), inp("k_out", [n_k, 24], "float32", "poison")],
                        ["q", "k", "q_out", "k_out", "q_scale", "k_scale", "n_q"], [n_q + n_k], ["q_out", "k_out"],
                        "", {"q_scale": 2.0, "k_scale": -3.0, "n_q": n_q}, {"D": 24, "BLOCK": 32}))
    for dt in ("float32", "float16"):
        out.append(case("pointer_choice", "if_arms_kernel", dt,
                        [inp("a", [100], dt, "randn"), inp("b", [100], dt, "randn"),
                         inp("a_out", [100], dt, "poison"), inp("b_out", [100], dt, "poison")],
                        ["a", "b", "a_out", "b_out", "n"], [2, 2], ["a_out", "b_out"], "", {"n": 100},
                        {"BLOCK": 64}))
    out.append(case("pointer_choice", "ifexp_atomic_kernel", "n100",
                    [inp("x", [100], "float32", "randn"), inp("even_sum", [32], "float32", "zeros"),
                     inp("odd_sum", [32], "float32", "zeros")],
                    ["x", "even_sum", "odd_sum", "n"], [4], ["even_sum", "odd_sum"], "", {"n": 100}, {"BLOCK": 32}))
    for flag in (1, 0):
        out.append(case("pointer_choice", "rebound_in_arm_kernel", f"flag{flag}",
                        [inp("a", [30], "float32", "randn"), inp("b", [31], "float32", "randn"),
                         inp("out", [30], "float32", "poison")],
                        ["a", "b", "out", "flag", "n"], [1], ["out"], "", {"flag": flag, "n": 30}, {"BLOCK": 32}))
    out.append(case("pointer_choice", "lane_choice_kernel", "n30",
                    [inp("even", [15], "float32", "randn"), inp("odd", [15], "float32", "randn"),
                     inp("out", [30], "float32", "poison")],
                    ["even", "odd", "out", "n_out"], [1], ["out"], "", {"n_out": 30}, {"BLOCK": 32}))
    out.append(case("pointer_choice", "rebound_index_kernel", "r4",
                    [inp("x", [6, 16], "float32", "randn"), inp("idx", [4], "int32", "given", values=[5, 0, 3, 3]),
                     inp("out", [4, 16], "float32", "poison")],
                    ["x", "idx", "out"], [4], ["out"], "", {}, {"D": 16}))
    out.append(case("pointer_choice", "in_place_max_kernel", "n20",
                    [inp("vals", [20], "float32", "randn"), inp("idxs", [20], "int32", "randint", lo=0, hi=100),
                     inp("base_max", [1], "float32", "given", values=[0.25])],
                    ["vals", "idxs", "base_max", "n"], [1], ["vals", "idxs"], "", {"n": 20}, {"BLOCK": 32}))
    out.append(case("pointer_choice", "two_loops_kernel", "a40b25",
                    [inp("a", [40], "float32", "randn"), inp("b", [25], "float32", "randn"),
                     inp("out", [65], "float32", "poison")],
                    ["a", "b", "out"], [1], ["out"], "", {}, {"n_a": 40, "n_b": 25, "BLOCK": 16}))
    # a dot's precision chosen by a local constexpr on a constexpr ("tf32": the interpreter does not round)
    for prec in (2, 1):
        out.append(case("precision_local", "gram_kernel", f"prec{prec}",
                        [inp("a", [16, 32], "float32", "randn"), inp("c", [16, 16], "float32", "poison")],
                        ["a", "c"], [1], ["c"], "", {}, {"M": 16, "K": 32, "PREC": prec}))
    # unannotated scalars and int1 values typed as Triton types them (scalars by their Python values)
    out.append(case("scalar_typing", "resample_rows_kernel", "w10to16",
                    [inp("src", [3, 10], "float32", "randn"), inp("dst", [3, 16], "float32", "poison")],
                    ["src", "dst", "n_rows", "w_in", "w_out", "step", "shift"], [3, 1], ["dst"], "",
                    {"n_rows": 3, "w_in": 10, "w_out": 16, "step": 0.625, "shift": -0.25}, {"BLOCK": 16}))
    out.append(case("scalar_typing", "stack_two_kernel", "r2r3",
                    [inp("top", [2, 5], "float32", "randn"), inp("bottom", [3, 5], "float32", "randn"),
                     inp("out", [5, 5], "float32", "poison")],
                    ["top", "bottom", "out", "top_rows", "bottom_rows", "top_at", "bottom_at", "width"], [1, 2],
                    ["out"], "", {"top_rows": 2, "bottom_rows": 3, "top_at": 0, "bottom_at": 2, "width": 5},
                    {"BLOCK": 16}))
    # (float values: a pointer whose loaded values are compared takes the float dtypes, passes/domains.py)
    for dt in ("float32", "float16"):
        out.append(case("scalar_typing", "first_of_runs_kernel", dt,
                        [inp("sorted", [20], dt, "given", values=[1, 1, 2, 4, 4, 4, 5, 7, 7, 8, 9, 9, 9, 9, 11, 12,
                                                                  12, 15, 16, 16]),
                         inp("firsts", [20], dt, "poison")],
                        ["sorted", "firsts", "n"], [1], ["firsts"], "", {"n": 20}, {"BLOCK": 32}))
    for dt in ("int32", "int64"):
        out.append(case("scalar_typing", "split_lengths_kernel", dt,
                        [inp("lens", [6], dt, "given", values=[7, 3, 12, 5, 9, 4]), inp("shares", [6], dt, "poison")],
                        ["lens", "shares"], [1], ["shares"], "", {}, {"N": 6, "PARTS": 4, "RANK": 1}))
    out.append(case("scalar_typing", "step_flags_kernel", "n100",
                    [inp("x", [100], "float32", "randn"), inp("flags", [100], "int32", "poison")],
                    ["x", "flags", "n", "limit"], [4], ["flags"], "", {"n": 100, "limit": 0.25}, {"BLOCK": 32}))
    out.append(case("scalar_typing", "positive_ranks_kernel", "n50",
                    [inp("x", [50], "float32", "randn"), inp("out", [50], "float32", "poison"),
                     inp("rank", [50], "int32", "poison")],
                    ["x", "out", "rank", "n"], [1], ["out", "rank"], "", {"n": 50}, {"BLOCK": 64}))
    keep = [1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1, 1, 1, 0, 0, 0, 1, 1, 0, 1, 1, 0, 0, 1,
            1, 1, 0, 1]
    for dt in ("int32", "int64"):
        out.append(case("scalar_typing", "compact_kernel", f"n40_{dt}",
                        [inp("src", [40], "float32", "randn"), inp("keep", [40], "float32", "given", values=keep),
                         inp("counts", [3], dt, "given", values=[sum(keep[b:b + 16]) for b in (0, 16, 32)]),
                         inp("dst", [40], "float32", "poison")],
                        ["src", "keep", "counts", "dst", "n"], [3], ["dst"], "", {"n": 40},
                        {"BLOCK": 16, "BLOCKS": 4}))
    out.append(case("scalar_typing", "row_mean_kernel", "r4c10",
                    [inp("x", [4, 12], "float32", "randn"), inp("y", [4], "float32", "poison")],
                    ["x", "y", "row_stride", "count"], [4], ["y"], "", {"row_stride": 12, "count": 10},
                    {"BLOCK": 16}))
    out.append(case("pointer_choice", "elif_rows_kernel", "a2b3c2",
                    [inp("a", [2, 16], "float32", "randn"), inp("b", [3, 16], "float32", "randn"),
                     inp("c", [2, 16], "float32", "randn"), inp("out", [7, 16], "float32", "poison")],
                    ["a", "b", "c", "out", "n_a", "n_b"], [7], ["out"], "", {"n_a": 2, "n_b": 3}, {"D": 16}))
    # a name of another type before a loop that takes it as its variable; a tile/scalar name across an early return
    for from_table in (True, False):
        out.append(case("carried_types", "rebound_loop_var_kernel", f"table{int(from_table)}",
                        [inp("x", [6, 16], "float32", "randn"), inp("start", [3], "int32", "given", values=[5, 2, 4]),
                         inp("out", [3, 16], "float32", "poison")],
                        ["x", "start", "out"], [3], ["out"], "", {}, {"T": 4, "D": 16, "FROM_TABLE": from_table}))
    out.append(case("carried_types", "last_program_mean_kernel", "n100",
                    [inp("x", [100], "float32", "randn"), inp("acc", [3], "float32", "zeros")],
                    ["x", "acc", "n"], [4], ["acc"], "", {"n": 100}, {"BLOCK": 32}))
    # pointers formed from offsets, returned by helpers, tested by their truth
    out.append(case("pointer_sums", "gather_by_ids_kernel", "r3n20",
                    [inp("ids", [3, 20], "int32", "randint", lo=0, hi=50), inp("x", [50], "float32", "randn"),
                     inp("out", [3, 8], "float32", "poison")],
                    ["ids", "x", "out", "stride_ids"], [3], ["out"], "", {"stride_ids": 1}, {"n_ids": 20, "BLOCK": 8}))
    for bias in (True, False):
        out.append(case("pointer_sums", "scaled_rows_kernel", f"bias{int(bias)}",
                        [inp("x", [10, 12], "float32", "randn"), inp("scale", [12], "float32", "randn")]
                        + ([inp("bias", [12], "float32", "randn")] if bias else [])
                        + [inp("out", [10, 12], "float32", "poison")],
                        ["x", "scale", "bias" if bias else "none", "out", "n_rows", "n_cols", "stride"], [3], ["out"],
                        "", {"none": None, "n_rows": 10, "n_cols": 12, "stride": 12}, {"BLOCK_R": 4, "BLOCK_C": 16}))
    out.append(case("loop_bounds", "grid_stride_scale_kernel", "r7p3",
                    [inp("x", [7, 16], "float32", "randn"), inp("out", [7, 16], "float32", "poison")],
                    ["x", "out", "n_rows"], [3], ["out"], "", {"n_rows": 7}, {"D": 16}))
    out.append(case("loop_bounds", "valid_prefix_sum_kernel", "r3",
                    [inp("idx", [3, 16], "int32", "given", values=[0] * 10 + [-1] * 6 + [5] * 16 + [-1] * 16),
                     inp("x", [3, 16], "float32", "randn"), inp("out", [3], "float32", "poison")],
                    ["idx", "x", "out", "limit"], [3], ["out"], "", {"limit": 12}, {"BLOCK": 16}))
    out.append(case("loop_bounds", "loaded_length_sum_kernel", "r3",
                    [inp("lens", [3], "int32", "given", values=[5, 0, 20]), inp("x", [3, 24], "float32", "randn"),
                     inp("out", [3], "float32", "poison")],
                    ["lens", "x", "out", "stride"], [3], ["out"], "", {"stride": 24}, {"BLOCK": 8}))
    out.append(case("literal_stages", "walsh_rows_kernel", "r3",
                    [inp("x", [3, 16], "float32", "randn"), inp("out", [3, 16], "float32", "poison")],
                    ["x", "out", "stride"], [3], ["out"], "", {"stride": 16}, {"SCALE": 0.25}))
    out.append(case("const_dims", "row_col_means_kernel", "r4c8",
                    [inp("x", [4, 8], "float32", "randn"), inp("rows", [2, 4], "float32", "poison"),
                     inp("cols", [2, 8], "float32", "poison")],
                    ["x", "rows", "cols"], [1], ["rows", "cols"], "", {}, {"R": 4, "C": 8}))
    out.append(case("carried_types", "bucket_slots_kernel", "n30b4",
                    [inp("bucket", [30], "int32", "randint", lo=0, hi=4),
                     inp("cursor", [4], "int32", "given", values=[0, 100, 200, 300]),
                     inp("slots", [30], "int32", "poison")],
                    ["bucket", "cursor", "slots", "n"], [1], ["slots", "cursor"], "", {"n": 30},
                    {"NUM_BUCKETS": 4, "BLOCK": 32}))
    out.append(case("pointer_sums", "chosen_rows_kernel", "a3b2",
                    [inp("a", [3, 16], "float32", "randn"), inp("b", [2, 16], "float32", "randn"),
                     inp("out", [5, 16], "float32", "poison")],
                    ["a", "b", "out", "n_a"], [5], ["out"], "", {"n_a": 3}, {"D": 16}))
    out.append(case("carried_types", "first_program_totals_kernel", "n40",
                    [inp("x", [40], "float32", "randn"), inp("out", [41], "float32", "poison")],
                    ["x", "out", "n"], [41], ["out"], "", {"n": 40}, {"BLOCK": 64}))
    # narrow integer tensors: an fp8 quantizer's bytes into uint8, a torch.bool mask read and bools written, int16
    # ids and int16 results that wrap, an int32 (and a float32) counter bumped by `tl.atomic_add(p, 1)`
    out.append(case("narrow_ints", "fp8_bytes_kernel", "r4c40",
                    [inp("x", [4, 40], "float32", "randn", scale=30.0), inp("q", [4, 40], "uint8", "poison"),
                     inp("s", [4], "float32", "poison")],
                    ["x", "q", "s", "n_cols", "stride_x", "stride_q"], [4], ["q", "s"], "",
                    {"n_cols": 40, "stride_x": 40, "stride_q": 40}, {"BLOCK": 64}))
    out.append(case("narrow_ints", "keep_where_kernel", "n50",
                    [inp("x", [50], "float32", "randn"), inp("keep", [50], "bool", "randint", lo=0, hi=2),
                     inp("out", [50], "float32", "poison"), inp("pos", [50], "bool", "poison")],
                    ["x", "keep", "out", "pos", "n", "fill"], [2], ["out", "pos"], "", {"n": 50, "fill": -1.5},
                    {"BLOCK": 32}))
    out.append(case("narrow_ints", "id_rows_kernel", "ids9_rows40",
                    [inp("ids", [9], "int16", "randint", lo=0, hi=40), inp("table", [40, 24], "float32", "randn"),
                     inp("out", [9, 24], "float32", "poison"), inp("code", [9], "int16", "poison")],
                    ["ids", "table", "out", "code", "n_ids", "n_cols", "stride_t"], [9], ["out", "code"], "",
                    {"n_ids": 9, "n_cols": 24, "stride_t": 24}, {"BLOCK": 32}))
    for dt in ("int32", "float32"):
        out.append(case("narrow_ints", "bucket_count_kernel", f"n100_{dt}",
                        [inp("x", [100], "float32", "uniform", lo=0.0, hi=1.0), inp("count", [8], dt, "zeros")],
                        ["x", "count", "n", "n_buckets"], [2], ["count"], "", {"n": 100, "n_buckets": 8},
                        {"BLOCK": 64}))
    out.append(case("bool_mask", "masked_fill_kernel", "n40",
                    [inp("x", [40], "float32", "randn"), inp("valid", [40], "bool", "randint", lo=0, hi=2)],
                    ["x", "valid", "n"], [2], ["x"], "", {"n": 40}, {"BLOCK": 32}))
    # each mode's heads copied (scaled) through pointers a helper advances: the rows are the programs' own tiles
    for mode in (0, 1, 2):
        out.append(case("helper_dispatch", "copy_heads_kernel", f"h5n700_mode{mode}",
                        [inp("src", [5, 700], "float32", "randn"), inp("dst", [5, 700], "float32", "poison")],
                        ["src", "dst", "stride", "n"], [5], ["dst"], "", {"stride": 700, "n": 700},
                        {"MODE": mode, "BLOCK": 1024}))
    out.append(case("standard_names", "centered_rows_kernel", "r3c50",
                    [inp("x", [3, 50], "float32", "randn"), inp("y", [3, 50], "float32", "zeros")],
                    ["x", "y", "n_cols"], [3], ["y"], "", {"n_cols": 50}, {"BLOCK": 64}))
    return out


# ----------------------------------------------------------------------------------------------- inputs

def _np_dtype(name: str):
    return np.uint8 if name == "float8_e4m3fn" else np.dtype(name)


def make_inputs(c: dict) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(c["seed"])
    arrays: dict[str, np.ndarray] = {}
    for spec in c["inputs"]:
        shape, dt, init = tuple(spec["shape"]), spec["dtype"], spec["init"]
        kind = init["kind"]
        if kind == "randn":
            a = rng.standard_normal(shape) * init.get("scale", 1.0)
        elif kind == "uniform":
            a = rng.uniform(init["lo"], init["hi"], shape)
        elif kind == "randint":
            a = rng.integers(init["lo"], init["hi"], shape)
            if "ignore" in init:
                a.reshape(-1)[::init["every"]] = init["ignore"]
        elif kind == "zeros":
            a = np.zeros(shape)
        elif kind == "poison":
            kind_of = np.dtype(_np_dtype(dt)).kind
            a = np.full(shape, INT_POISON if kind_of in "iu" else True if kind_of == "b" else np.nan)
        elif kind == "given":
            a = np.array(init["values"]).reshape(shape)
        elif kind == "log_softmax":
            z = rng.standard_normal(shape) * init.get("scale", 1.0)
            z = z - z.max(axis=-1, keepdims=True)
            a = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
        elif kind == "rows_of_randperm":
            perm = rng.permutation(init["size"])
            a = np.resize(perm, int(np.prod(shape))).reshape(shape)
        elif kind == "bincount":
            a = np.bincount(arrays[init["of"]].reshape(-1), minlength=init["minlength"])
        elif kind == "addresses":
            # a table of the addresses of other inputs (`t.data_ptr()` values): zeros here, filled where the
            # arrays have addresses (fill_addresses: the Triton run; the Tile IR interpreter's memory)
            a = np.zeros(shape)
        elif kind == "moe_sorted_ids":
            ids = arrays[init["of"]].reshape(-1)
            a = np.full(shape, ids.size)
            srt, _ = _moe_sorted(ids, init["n_experts"], init["block_size"])
            a[:srt.size] = srt
        else:
            raise ValueError(f"unknown init kind {kind!r}")
        if dt == "float8_e4m3fn":
            arrays[spec["name"]] = np.zeros(shape, np.uint8)
        else:
            arrays[spec["name"]] = np.ascontiguousarray(np.asarray(a).astype(_np_dtype(dt)))
    return arrays


def fill_addresses(c: dict, arrays: dict[str, np.ndarray], address_of) -> None:
    """Each `addresses` input set to the addresses (`address_of(name)`) of the inputs it lists, in order."""
    for spec in c["inputs"]:
        if spec["init"]["kind"] == "addresses":
            arrays[spec["name"]][...] = np.array([address_of(n) for n in spec["init"]["of"]], np.int64).reshape(
                arrays[spec["name"]].shape)


def address_tables(c: dict) -> list[str]:
    return [spec["name"] for spec in c["inputs"] if spec.get("init", {}).get("kind") == "addresses"]


# ----------------------------------------------------------------------------------------------- numpy references

def _f(a):
    return np.asarray(a, dtype=np.float64)


def _moe_sorted(ids, n_experts, block_size):
    counts = np.bincount(ids, minlength=n_experts)
    padded = -(-counts // block_size) * block_size
    ends = np.cumsum(padded)
    out = np.full(int(ends[-1]), ids.size, dtype=np.int64)
    for e in range(n_experts):
        slots = np.nonzero(ids == e)[0]
        out[ends[e] - padded[e]: ends[e] - padded[e] + slots.size] = slots
    return out, np.concatenate([[0], ends])


def _philox(seed: int, c0, c1, c2, c3, rounds: int = 10) -> list[np.ndarray]:
    """Philox4x32 as Triton's random.py computes it: the counter words as uint32 (int32 bits kept), the key the
    seed's low and high 32 bits (a negative seed as its 64-bit two's complement), `rounds` rounds."""
    m32 = np.uint64(0xFFFFFFFF)
    c = [np.asarray(w).astype(np.int64).astype(np.uint64) & m32 for w in (c0, c1, c2, c3)]
    c = [np.broadcast_to(w, np.broadcast(*c).shape).copy() for w in c]
    k0 = np.uint64(seed & 0xFFFFFFFF)
    k1 = np.uint64((seed >> 32) & 0xFFFFFFFF)
    A, B = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    for _ in range(rounds):
        pa, pb = A * c[0], B * c[2]
        c = [(pb >> np.uint64(32)) ^ c[1] ^ k0, pb & m32, (pa >> np.uint64(32)) ^ c[3] ^ k1, pa & m32]
        k0 = (k0 + np.uint64(0x9E3779B9)) & m32
        k1 = (k1 + np.uint64(0xBB67AE85)) & m32
    return [w.astype(np.uint32) for w in c]


def _uniform(bits: np.ndarray) -> np.ndarray:
    """uint32 -> float32 in [0, 1): the bits as int32, x < 0 as -x - 1, times float32(4.6566127342e-10)."""
    x = bits.astype(np.uint32).view(np.int32).astype(np.int64)
    x = np.where(x < 0, ~x, x)
    return (x.astype(np.float32) * np.float32(4.6566127342e-10)).astype(np.float32)


def _philox_rand(seed: int, offsets: np.ndarray) -> np.ndarray:
    """tl.rand(seed, offsets) for int32 offsets: Philox4x32-10 on (offset, 0, 0, 0) keyed by the seed."""
    zero = np.zeros(np.shape(offsets), np.int64)
    return _uniform(_philox(seed, offsets, zero, zero, zero)[0])


def _umulhi(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = (np.asarray(x).astype(np.uint32).astype(object) for x in (a, b))
    return np.array((a * b) >> 32, dtype=np.uint64).astype(np.uint32)


def _tool_module(file: str):
    """A module of transpiler/record/ by its path (numpy only at import; the GPU machine has no transpiler
    installed): hook.py holds the fp8 codec and the interpreter's fidelity patches shared with `record`,
    declared_runner.py the HostTensor."""
    name = f"_cutile_transpile_{file}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "transpiler" / "record" / f"{file}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def _record_hook():
    return _tool_module("hook")


fp8_e4m3_decode = _record_hook().fp8_e4m3_decode
fp8_e4m3_encode = _record_hook().fp8_e4m3_encode


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _gelu_tanh(a):
    return 0.5 * a * (1.0 + np.tanh(0.7978845608028654 * (a + 0.044715 * a ** 3)))


def _layer_norm_ref(x, w, b, eps):
    mean = x.mean(axis=1)
    var = ((x - mean[:, None]) ** 2).mean(axis=1)
    rstd = 1.0 / np.sqrt(var + eps)
    return (x - mean[:, None]) * rstd[:, None] * w + b, mean, rstd


def _attention_ref(q, k, v, scale, causal):
    s = np.einsum("bhmd,bhnd->bhmn", q, k) * scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    lse = (m + np.log(p.sum(axis=-1, keepdims=True)))[..., 0]
    return np.einsum("bhmn,bhnd->bhmd", p / p.sum(axis=-1, keepdims=True), v), lse


def reference(c: dict, a: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The expected final value of each output, from the case's inputs (float64 math)."""
    s, k = {**c["scalars"], **c["constexprs"]}, c["ref"]
    x = {n: (_f(v) if v.dtype.kind == "f" else v) for n, v in a.items()}
    if k == "vector_add.add_kernel":
        return {"out": x["x"] + x["y"]}
    if k in ("softmax.softmax_kernel", "online_softmax.online_softmax_kernel"):
        z = np.exp(x["x"] - x["x"].max(axis=1, keepdims=True))
        return {"y": z / z.sum(axis=1, keepdims=True)}
    if k == "softmax.row_normalize_kernel":
        return {"y": x["x"] / (x["x"].sum(axis=1, keepdims=True) + 1e-6)}
    if k in ("matmul.matmul_kernel", "persistent_matmul.persistent_matmul_kernel"):
        r = (x["a"] if "a" in x else x["at"].T) @ (x["b"] if "b" in x else x["bt"].T)
        if s.get("ACTIVATION") == "leaky_relu":
            r = np.where(r >= 0, r, 0.01 * r)
        return {"c": r} if "c" in c["outputs"] else {"ct": r.T}
    if k == "layer_norm.layer_norm_fwd_kernel":
        y, mean, rstd = _layer_norm_ref(x["x"], x["w"], x["b"], s["eps"])
        return {"y": y, "mean": mean, "rstd": rstd}
    if k == "layer_norm.layer_norm_bwd_dx_kernel":
        xhat = (x["x"] - x["mean"][:, None]) * x["rstd"][:, None]
        wdy = x["w"] * x["dy"]
        n = s["n_cols"]
        c1, c2 = (xhat * wdy).sum(1, keepdims=True) / n, wdy.sum(1, keepdims=True) / n
        dx = (wdy - (xhat * c1 + c2)) * x["rstd"][:, None]
        rpp, n_rows = s["ROWS_PER_PROGRAM"], s["n_rows"]
        groups = [slice(i, min(i + rpp, n_rows)) for i in range(0, n_rows, rpp)]
        return {"dx": dx, "dw_part": np.stack([(x["dy"][g] * xhat[g]).sum(0) for g in groups]),
                "db_part": np.stack([x["dy"][g].sum(0) for g in groups])}
    if k == "layer_norm.layer_norm_bwd_dwdb_kernel":
        return {"dw": x["dw_part"].sum(0), "db": x["db_part"].sum(0)}
    if k == "rms_norm.rms_norm_fwd_kernel":
        rstd = 1.0 / np.sqrt((x["x"] ** 2).mean(axis=1) + s["eps"])
        return {"y": x["x"] * rstd[:, None] * (s["OFFSET"] + x["w"]), "rstd": rstd}
    if k == "rms_norm.rms_norm_rows_kernel":
        rstd = 1.0 / np.sqrt((x["x"] ** 2).mean(axis=1) + s["eps"])
        slots = np.zeros_like(x["rstd"])
        slots[::s["rstd_stride"]] = rstd
        return {"y": x["x"] * rstd[:, None] * x["w"], "rstd": slots}
    if k == "rms_norm.rms_norm_bwd_kernel":
        xhat = x["x"] * x["rstd"][:, None]
        wdy = (x["w"] + s["OFFSET"]) * x["dy"]
        dx = x["rstd"][:, None] * (wdy - xhat * (wdy * xhat).mean(axis=1, keepdims=True))
        return {"dx": dx, "dw": (x["dy"] * xhat).sum(0)}
    if k == "fused_add_norm.fused_add_rms_norm_kernel":
        h = x["x"] + s["ALPHA"] * x["res"] if "res" in x else x["x"]
        y = h / np.sqrt((h ** 2).mean(axis=1, keepdims=True) + s["eps"])
        return {"y": y * x["w"] if "w" in x else y, **({"h_out": h} if "h_out" in c["outputs"] else {})}
    if k == "rope_complex.rope_complex_kernel":
        f = x["freqs"][a["pos"]][:, None, :, :]  # (t, 1, half, 2): cos, sin
        re, im = x["q"][..., 0::2], x["q"][..., 1::2]
        q = np.empty_like(x["q"])
        q[..., 0::2] = re * f[..., 0] - im * f[..., 1]
        q[..., 1::2] = re * f[..., 1] + im * f[..., 0]
        return {"q": q}
    if k == "grad_scale.grad_scale_kernel":
        act = x["x"] * _sigmoid(x["x"])
        if c["constexprs"]["X_DTYPE"] == "float16":
            act = act.astype(np.float16).astype(np.float64)  # cast to X_DTYPE before the product
        return {"dx": x["dy"] * act}
    if k == "rope.rope_kernel":
        cos, sin = x["cos"][a["pos"]][:, None, :], x["sin"][a["pos"]][:, None, :]
        res = {}
        for n in ("q", "k"):
            h = x[n].shape[-1] // 2
            t1, t2 = x[n][..., :h], x[n][..., h:]
            res[n] = np.concatenate([t1 * cos - t2 * sin, t2 * cos + t1 * sin], axis=-1)
        return res
    if k == "swiglu.swiglu_fwd_kernel":
        silu = x["a"] * _sigmoid(x["a"])
        if c["outputs"]["c"]["dtype"] == "float16":
            silu = silu.astype(np.float16).astype(np.float64)  # the kernel rounds silu(a) to b's dtype first
        return {"c": silu * x["b"]}
    if k == "swiglu.swiglu_bwd_kernel":
        sig = _sigmoid(x["a"])
        silu = x["a"] * sig
        return {"a": x["dc"] * x["b"] * (sig + silu * (1 - sig)), "b": x["dc"] * silu}
    if k == "geglu.geglu_fwd_kernel":
        return {"c": _gelu_tanh(x["a"]) * x["b"]}
    if k == "geglu.geglu_bwd_kernel":
        av = x["a"]
        kk = 0.7978845608028654
        t = np.tanh(kk * (av + 0.044715 * av ** 3))
        dg = 0.5 * (1 + t) + 0.5 * av * (1 - t * t) * kk * (1 + 3 * 0.044715 * av * av)
        return {"da": x["dc"] * x["b"] * dg, "db": x["dc"] * _gelu_tanh(av)}
    if k == "cross_entropy.cross_entropy_kernel":
        lg, tgt, ls, nn = x["logits"], a["target"], s["label_smoothing"], s["n_non_ignore"]
        V = lg.shape[1]
        m = lg.max(axis=1, keepdims=True)
        lse = (m + np.log(np.exp(lg - m).sum(axis=1, keepdims=True)))[:, 0]
        p = np.exp(lg - lse[:, None])
        valid = tgt != s["ignore_index"]
        t = np.where(valid, tgt, 0)
        onehot = np.eye(V)[t]
        q = (1 - ls) * onehot + ls / V
        loss = (q * (lse[:, None] - lg)).sum(axis=1)
        grad = p - q
        return {"loss": np.where(valid, loss, 0.0) / nn, "logits": np.where(valid[:, None], grad, 0.0) / nn}
    if k == "cross_entropy.token_logprob_kernel":
        lg = x["logits"]
        m = lg.max(axis=2, keepdims=True)
        lse = (m + np.log(np.exp(lg - m).sum(axis=2, keepdims=True)))[..., 0]
        return {"logp": np.take_along_axis(lg, a["ids"][..., None], axis=2)[..., 0] - lse}
    if k == "block_ptr_ops.bp_attn_fwd_kernel":
        o, _ = _attention_ref(x["q"][None], x["k"][None], x["v"][None], s["scale"], False)
        return {"o": o[0]}
    if k == "int8_matmul.int8_gemm_kernel":
        return {"c": a["a"].astype(np.int64) @ a["b"].astype(np.int64)}
    if k == "int8_matmul.int8_gemm_rowscale_kernel":
        # the int32 product converted to float32 and scaled by the row's scale (float32, or float16 converted)
        prod = (a["a"].astype(np.int64) @ a["b"].astype(np.int64)).astype(np.float32).astype(np.float64)
        return {"out": prod * x["scale"].astype(np.float32).astype(np.float64)[:, None]}
    if k == "block_ptr_ops.chunk_local_cumsum_kernel":
        g = x["s"]
        out = np.zeros_like(g)
        for start in range(0, g.shape[1], s["BT"]):
            out[:, start:start + s["BT"]] = np.cumsum(g[:, start:start + s["BT"]], axis=1)
        return {"out": out}
    if k == "flash_attention.attn_fwd_kernel":
        o, lse = _attention_ref(x["q"], x["k"], x["v"], s["sm_scale"], s["IS_CAUSAL"])
        return {"o": o, "lse": lse}
    if k == "paged_decode_attention.paged_decode_kernel":
        q, kc, vc, bt, sl = x["q"], x["k_cache"], x["v_cache"], a["block_table"], a["seq_lens"]
        o = np.zeros_like(q)
        g = s["N_KV_GROUP"]
        for b in range(q.shape[0]):
            toks = np.arange(sl[b])
            pages, slot = bt[b][toks // 16], toks % 16
            for h in range(q.shape[1]):
                kk, vv = kc[pages, slot, h // g], vc[pages, slot, h // g]
                sc = kk @ q[b, h] * s["sm_scale"]
                p = np.exp(sc - sc.max())
                o[b, h] = p @ vv / p.sum()
        return {"o": o}
    if k == "moe_align.moe_count_kernel":
        return {"counts": np.bincount(a["topk_ids"].reshape(-1), minlength=a["counts"].size)}
    if k == "moe_align.moe_align_kernel":
        srt, offs = _moe_sorted(a["topk_ids"].reshape(-1), s["n_experts"], s["BLOCK_SIZE"])
        full = a["sorted_ids"].astype(np.int64).copy()
        full[:srt.size] = srt
        return {"sorted_ids": full, "expert_offsets": offs}
    if k == "moe_align.moe_permute_kernel":
        sid = a["sorted_ids"].astype(np.int64)
        valid = sid < s["n_slots"]
        rows = x["x"][np.where(valid, sid // s["TOP_K"], 0)]
        return {"out": np.where(valid[:, None], rows, 0.0)}
    if k == "split_k_gemm.split_k_gemm_kernel":
        return {"c": x["a"] @ x["b"]}
    if k == "descriptor_gemm.descriptor_gemm_kernel":
        return {"out": x["x"] @ x["w"].T}
    if k == "jsd.jsd_kernel":
        lq, lp, beta, n = x["x"], x["y"], s["beta"], s["n_rows"]
        q, p = np.exp(lq), np.exp(lp)
        if beta == 0.0:
            loss, dx = p * (lp - lq), -p
        elif beta == 1.0:
            loss, dx = q * (lq - lp), q * (lq - lp + 1)
        else:
            lm = np.log(beta * p + (1 - beta) * q)
            loss = beta * p * (lp - lm) + (1 - beta) * q * (lq - lm)
            dx = (1 - beta) * q * (lq - lm)
        return {"loss": loss.sum(axis=1) / n, "dx": dx / n}
    if k == "bit_atomics.token_bits_kernel":
        words = x["words"].astype(np.int64) & 0xFFFFFFFF
        for t in x["ids"][:s["n"]].astype(np.int64):
            b = 1 << (t % 32)
            words[t // 32] = words[t // 32] | b if s["SET"] else words[t // 32] & ~b & 0xFFFFFFFF
        return {"words": words.astype(np.uint32).view(np.int32)}
    if k == "bit_atomics.parity_kernel":
        acc = x["acc"].copy()
        for i, v in enumerate(x["x"][:s["n"]]):
            acc[i % s["LANES"]] ^= v
        return {"acc": acc}
    if k == "bit_atomics.claim_kernel":
        slots = x["slots"].copy()
        old = slots.copy()
        free = slots == 0
        slots[free] = np.arange(1, slots.size + 1, dtype=slots.dtype)[free]
        return {"slots": slots, "old": old}
    if k == "string_helper_choice.act_mul_kernel":
        g = x["gate"].astype(np.float64)
        a = g * _sigmoid(g) if s["ACTIVATION"] == "silu" else np.maximum(g, 0.0) ** 2
        return {"out": a * x["up"]}
    if k == "host_dtype_fn.quant_bytes_kernel":
        return {"q": fp8_e4m3_encode(np.clip(x["x"].astype(np.float32) * np.float32(s["scale"]), -448.0, 448.0))}
    if k == "fp8_quant.fp8_row_quant_kernel":
        amax = np.maximum(np.abs(x["x"]).max(axis=1), 1e-12)
        scale = amax / 448.0
        return {"q": fp8_e4m3_decode(fp8_e4m3_encode(x["x"] / scale[:, None])), "scale": scale}
    if k == "random_numbers.random_draws_kernel":
        n, seed = s["n"], s["seed"]
        offs = np.arange(n, dtype=np.int64)
        zero = np.zeros(n, np.int64)
        r = _philox(seed, offs, zero, zero, zero)[0]
        return {"bits": r.view(np.int32).astype(np.int64), "uniform": _uniform(r)}
    if k == "random_numbers.random_streams_kernel":
        n, seed, rounds = s["n"], s["seed"], s["N_ROUNDS"]
        offs = np.arange(n, dtype=np.int64)
        zero = np.zeros(n, np.int64)
        wide = (offs << 33) + offs
        words = _philox(seed, wide & 0xFFFFFFFF, wide >> 32, zero, zero, rounds)
        draws = _philox(seed, offs, zero, zero, zero, rounds)
        c = _philox(seed, offs, offs * 3, offs ^ 0x5555, offs + 7)
        mixed = _uniform(_umulhi(c[0], c[1]) ^ c[2] ^ c[3])
        return {"bits": np.stack(words, axis=1).reshape(-1).view(np.int32).astype(np.int64),
                "uniform": np.stack([_uniform(w) for w in draws], axis=1).reshape(-1),
                "mixed": mixed.astype(np.float32)}
    if k == "random_numbers.row_dropout_kernel":
        rows, cols = x["x"].shape
        keep = np.stack([_philox_rand(int(sd), np.arange(cols)) for sd in a["seeds"]]) > np.float32(s["p"])
        return {"out": np.where(keep, x["x"] / (1 - s["p"]), 0.0)}
    if k == "dropout.dropout_fwd_kernel":
        n = x["x"].size
        keep = _philox_rand(s["seed"], np.arange(n, dtype=np.int64)) > np.float32(s["p"])
        return {"out": np.where(keep, x["x"] / (1 - s["p"]), 0.0)}
    if k == "bias_act.bias_relu_kernel":
        return {"y": np.maximum(x["x"] + x["bias"], 0.0)}
    if k == "cumsum.row_cumsum_kernel":
        return {"y": np.cumsum(x["x"], axis=1)}
    if k == "causal_conv1d.causal_conv1d_kernel":
        xv, w = x["x"], x["w"]
        width, t = w.shape[1], xv.shape[2]
        pad = np.concatenate([np.zeros(xv.shape[:2] + (width - 1,)), xv], axis=2)
        y = x["bias"][None, :, None] + sum(w[None, :, j, None] * pad[:, :, j:j + t] for j in range(width))
        if s["SILU"]:
            y = y * _sigmoid(y)
        return {"y": y}
    if k == "embedding.embedding_kernel":
        ids, n_rows = a["ids"].astype(np.int64), s["n_rows"]
        out = x["out"].copy()
        out[:n_rows] = np.where((ids == s["pad_id"])[:, None], 0.0, x["weight"][np.where(ids >= 0, ids, 0)])
        return {"out": out}
    if k == "host_descriptor_norm.host_desc_row_norm_kernel":
        xv = x["x"]
        rstd = 1.0 / np.sqrt((xv * xv).mean(axis=1, keepdims=True) + s["eps"])
        return {"out": xv * rstd * x["w"][None, :]}
    if k == "descriptor_advanced_base.varlen_scale_kernel":
        y = x["y"].copy()  # rows of no program keep the poison: each sequence's rows are all written here
        for b, e in zip(a["cu"][:-1], a["cu"][1:]):
            y[b:e] = x["x"][b:e] * np.float32(s["scale"]) + np.float32(1.0)
        return {"y": y}
    if k == "sum_dtype.row_sums_kernel":
        return {"s": x["x"].astype(np.float64).sum(axis=1), "k": a["c"].astype(np.int64).sum(axis=1)}
    if k == "descriptor_computed_shape.desc_computed_shape_kernel":
        n = int(a["count"][0])
        return {"out": np.where(np.arange(x["x"].shape[0])[:, None] < n, 2 * x["x"], 0.0)}
    if k == "host_descriptor_matmul.host_desc_matmul_kernel":
        return {"c": x["a"] @ x["b"]}
    if k == "transpose.transpose_kernel":
        return {"y": x["x"].T}
    if k == "transpose.roll_kernel":
        return {"y": np.roll(x["x"], s["shift"], axis=1)}
    if k == "rel_pos_bias.rel_pos_bias_kernel":
        ql, kl, nb, bw = s["q_len"], s["k_len"], s["N_BUCKETS"], s["BUCKET_WIDTH"]
        rel = np.arange(kl)[None, :] - np.arange(ql)[:, None]
        bucket = np.clip(np.trunc(rel / bw).astype(np.int64) + nb // 2, 0, nb - 1)  # C-style truncating //
        return {"out": x["table"][:, bucket]}
    if k == "carried_types.rebound_loop_var_kernel":
        first = x["x"][a["start"]] if s["FROM_TABLE"] else np.repeat(x["x"][:1], 3, axis=0)
        return {"out": first + sum(x["x"][t] * (t + 1) for t in range(s["T"]))[None, :]}
    if k == "loop_bounds.grid_stride_scale_kernel":
        return {"out": x["x"] * np.arange(1, 8)[:, None]}
    if k == "loop_bounds.loaded_length_sum_kernel":
        return {"out": np.array([x["x"][r, :n].sum() for r, n in enumerate(a["lens"])])}
    if k == "loop_bounds.valid_prefix_sum_kernel":
        counts = np.minimum(12, (a["idx"] >= 0).sum(axis=1))
        return {"out": np.array([x["x"][r, :counts[r]].sum() for r in range(3)])}
    if k == "literal_stages.walsh_rows_kernel":
        h = np.array([[1.0]])
        for _ in range(4):
            h = np.block([[h, h], [h, -h]])
        return {"out": x["x"] @ h.T * s["SCALE"]}
    if k == "const_dims.row_col_means_kernel":
        xs = [x["x"], 2.0 * x["x"]]
        return {"rows": np.stack([v.mean(axis=1) for v in xs]), "cols": np.stack([v.mean(axis=0) * 8 for v in xs])}
    if k == "pointer_sums.gather_by_ids_kernel":
        ids, xs, out = a["ids"], x["x"], np.zeros((3, 8))
        for r in range(3):
            for c in range(3):
                for j in range(8):
                    if c * 8 + j < 20:
                        out[r, j] += xs[ids[r, c * 8 + j]] * (c + 1)
        return {"out": out}
    if k == "pointer_sums.chosen_rows_kernel":
        return {"out": np.concatenate([x["a"], x["b"]]) * 2.0}
    if k == "pointer_sums.scaled_rows_kernel":
        return {"out": x["x"] * x["scale"][None, :] + (x["bias"][None, :] if "bias" in x else 0.0)}
    if k == "carried_types.bucket_slots_kernel":
        b, cur = a["bucket"], a["cursor"].copy()
        slots = np.zeros(30, np.int32)
        for i in range(30):
            slots[i] = cur[b[i]]
            cur[b[i]] += 1
        return {"slots": slots, "cursor": cur}
    if k == "carried_types.last_program_mean_kernel":
        return {"acc": np.array([x["x"].sum(), 4.0, x["x"].sum() / 100])}
    if k == "carried_types.first_program_totals_kernel":
        return {"out": np.concatenate([[x["x"].sum()], x["x"] * 2.0])}
    if k == "narrow_ints.fp8_bytes_kernel":
        x32 = a["x"].astype(np.float32)
        scale = (np.maximum(np.abs(x32).max(axis=1), np.float32(1e-12)) / np.float32(448.0)).astype(np.float32)
        return {"q": fp8_e4m3_encode((x32 / scale[:, None]).astype(np.float64)), "s": scale}
    if k == "narrow_ints.keep_where_kernel":
        kept = np.where(a["keep"], x["x"], 0.0)
        return {"out": np.where(a["keep"], kept * 2.0, s["fill"]), "pos": kept > 0.0}
    if k == "narrow_ints.id_rows_kernel":
        ids = a["ids"].astype(np.int64)
        code = (ids * 2000 + np.arange(ids.size)).astype(np.int32).astype(np.int16)  # int16 wraps, as Triton's store
        return {"out": x["table"][ids], "code": code}
    if k == "narrow_ints.bucket_count_kernel":
        b = np.clip(a["x"].astype(np.float32) * np.float32(s["n_buckets"]), 0.0, s["n_buckets"] - 1.0).astype(np.int64)
        return {"count": np.bincount(b, minlength=s["n_buckets"])}
    if k == "bool_mask.masked_fill_kernel":
        return {"x": np.where(a["valid"], 0.0, x["x"])}
    if k == "helper_dispatch.copy_heads_kernel":
        return {"dst": x["src"] * (1.0, 2.0, 0.5)[s["MODE"]]}
    if k == "standard_names.centered_rows_kernel":
        c = x["x"] - x["x"].mean(axis=1, keepdims=True)
        return {"y": c / (np.abs(c).max(axis=1, keepdims=True) + 1.0)}
    if k == "precision_local.gram_kernel":
        return {"c": x["a"] @ x["a"].T}
    if k == "scalar_typing.resample_rows_kernel":
        cols = np.arange(s["w_out"], dtype=np.float32)
        at = np.minimum(np.maximum(cols * np.float32(s["step"]) + np.float32(s["shift"]), 0.0), s["w_in"] - 1.0)
        left = at.astype(np.int64)
        right = np.minimum(left + 1, s["w_in"] - 1)
        frac = at - left
        return {"dst": x["src"][:, left] * (1.0 - frac) + x["src"][:, right] * frac}
    if k == "scalar_typing.stack_two_kernel":
        return {"out": np.concatenate([x["top"], x["bottom"]])}
    if k == "scalar_typing.first_of_runs_kernel":
        firsts = x["firsts"].copy()
        v = x["sorted"]
        starts = [i for i in range(v.size) if i == 0 or v[i] != v[i - 1]]
        firsts[:len(starts)] = v[starts]
        return {"firsts": firsts}
    if k == "scalar_typing.split_lengths_kernel":
        shares, carry = [], 0
        for n in a["lens"].tolist():
            cur = n + carry
            share = cur // s["PARTS"] + int(cur % s["PARTS"] > s["RANK"])
            shares.append(share)
            rest = cur - share * s["PARTS"]
            carry = -((-rest) // 2) if rest < 0 else rest // 2  # C's division, toward zero
        return {"shares": np.array(shares)}
    if k == "scalar_typing.step_flags_kernel":
        return {"flags": np.where(x["x"].astype(np.float32) > np.float32(s["limit"]), 1, -1)}
    if k == "scalar_typing.positive_ranks_kernel":
        out = x["out"].copy()
        hit = x["x"] > 0
        out[:hit.sum()] = x["x"][hit]
        return {"out": out, "rank": np.cumsum(hit)}
    if k == "scalar_typing.compact_kernel":
        dst = x["dst"].copy()
        kept = x["src"][x["keep"] != 0]
        dst[:kept.size] = kept
        return {"dst": dst}
    if k == "scalar_typing.row_mean_kernel":
        return {"y": x["x"][:, :s["count"]].sum(axis=1) / s["count"]}
    if k == "pointer_choice.where_rows_kernel":
        return {"q_out": x["q"] * s["q_scale"] + x["q"].sum(axis=1, keepdims=True),
                "k_out": x["k"] * s["k_scale"] + x["k"].sum(axis=1, keepdims=True)}
    if k == "pointer_choice.if_arms_kernel":
        return {"a_out": x["a"] * 2.0 - 1.0, "b_out": x["b"] * 2.0 - 1.0}
    if k == "pointer_choice.ifexp_atomic_kernel":
        padded = np.concatenate([x["x"], np.zeros(28)]).reshape(4, 32)
        return {"even_sum": padded[0] + padded[2], "odd_sum": padded[1] + padded[3]}
    if k == "pointer_choice.rebound_in_arm_kernel":
        return {"out": x["b"][1:31] if s["flag"] > 0 else x["a"]}
    if k == "pointer_choice.lane_choice_kernel":
        return {"out": np.stack([x["even"], x["odd"]], axis=1).reshape(-1)}
    if k == "pointer_choice.elif_rows_kernel":
        rows = np.concatenate([x["a"], x["b"], x["c"]])
        return {"out": rows * np.arange(1, 8)[:, None]}
    if k == "pointer_choice.two_loops_kernel":
        return {"out": np.concatenate([x["a"] * 2.0, x["b"] + 1.0])}
    if k == "pointer_choice.rebound_index_kernel":
        return {"out": x["x"][a["idx"]]}
    if k == "pointer_choice.in_place_max_kernel":
        return {"vals": np.maximum(x["vals"], x["base_max"][0]),
                "idxs": np.where(x["vals"] >= x["base_max"][0], a["idxs"], -1)}
    if k == "pointer_tables.dequant4_words_kernel":
        j = np.arange(8)
        nib = (a["w"].astype(np.int64)[:, None] >> (4 * j)[None, :]) & 15
        scale = np.repeat(x["scale"], 64)[:a["w"].size]
        return {"out": ((nib - 8.0) * scale[:, None]).reshape(-1)}
    if k == "pointer_tables.dequant4_bytes_kernel":
        q = a["w"].view(np.uint8).astype(np.int64)
        return {"out": np.stack([(q >> 4) - 8.0, (q & 15) - 8.0], axis=1).reshape(-1)}
    if k == "pointer_tables.grouped_row_scale_kernel":
        groups = a["rows"].size
        return {f"y{i}": x[f"x{i}"] * x["scale"][i] for i in range(groups)}
    if k == "pointer_tables.pointer_tile_kernel":
        got = {"out": np.array([x[f"x{i}"][1] for i in range(3)])}
        for i in range(3):
            v = x[f"x{i}"].copy()
            v[0] += v[1]
            got[f"x{i}"] = v
        return got
    if k == "flips.rotate_pairs_kernel":
        sx = x["x"] * x["sin"]
        swapped = np.stack([sx[:, 1::2], -sx[:, 0::2]], axis=-1).reshape(sx.shape)
        return {"y": x["x"] * x["cos"] + swapped}
    if k == "flips.rotate_vector_kernel":
        sx = x["x"] * x["sin"]
        return {"y": x["x"] * x["cos"] + np.stack([sx[1::2], -sx[0::2]], axis=-1).reshape(-1)}
    if k == "flips.reverse_quads_kernel":
        return {"y": a["x"].reshape(-1, 4)[:, ::-1].reshape(-1)[::-1]}
    if k == "flips.flip_2d_kernel":
        return {"rows": a["x"][::-1], "cols": a["x"][:, ::-1], "last": a["x"][:, ::-1]}
    if k == "flips.sort_rows_kernel":
        up = np.sort(a["x"], axis=-1)
        return {"up": up, "down": up[:, ::-1] if s["DESC"] else up}
    if k == "flips.topk_rows_kernel":
        return {"y": np.sort(a["x"], axis=-1)[:, ::-1][:, :s["K"]]}
    if k == "flips.int_rows_kernel":
        up = np.sort(a["x"], axis=-1)
        return {"up": up[:, ::-1] if s["DESC"] else up, "top": up[:, ::-1][:, :s["K"]], "rev": a["x"][:, ::-1]}
    if k == "flips.streaming_topk_kernel":
        return {"y": np.sort(a["x"])[::-1][:8]}
    if k == "flips.sorted_gather_kernel":
        order = np.sort(np.where(a["idx"] >= 0, a["idx"], s["WIDTH"]))
        return {"order": order, "y": np.where(order < s["WIDTH"], a["x"][np.minimum(order, s["WIDTH"] - 1)], 0.0)}
    if k == "pair_reduce.row_argmax_kernel":
        v = np.where(x["x"] > s["nan_above"], np.nan, x["x"])
        i = np.argmax(v, axis=1)  # numpy's argmax: the first NaN, else the first of the largest
        return {"v": v[np.arange(v.shape[0]), i], "i": i}
    if k == "pair_reduce.column_argmin_kernel":
        rev = a["x"][::-1]
        i = a["x"].shape[0] - 1 - np.argmin(rev, axis=0)  # the last of the smallest
        return {"v": a["x"][i, np.arange(a["x"].shape[1])], "i": i}
    if k == "gather.row_pick_kernel":
        return {"y": x["x"][s["j"]]}
    if k == "gather.nibble_lookup_kernel":
        return {"y": x["table"][a["q"].astype(np.int64) & 15] * 2.0}
    if k == "gather.permute_kernel":
        return {"y": x["x"][a["idx"]]}
    if k == "interleave.interleave_kernel":
        return {"y": np.stack([x["a"], x["b"]], axis=-1).reshape(-1)}
    if k == "interleave.interleave_halves_kernel":
        return {"y": np.stack([x["x"], -x["x"]], axis=-1).reshape(-1)}
    if k == "interleave.interleave_rows_kernel":
        return {"y": np.stack([x["a"], 2 * x["b"]], axis=-1).reshape(4, 16)}
    if k == "float_atomics.absmax_kernel":
        return {"amax": np.maximum(x["amax"], np.abs(x["x"]).max() / 448.0).astype(np.float32)}
    if k == "float_atomics.col_extrema_kernel":
        return {"mx": np.maximum(x["mx"], x["x"].max(axis=0)), "mn": np.minimum(x["mn"], x["x"].min(axis=0))}
    if k == "float_atomics.exchange_max_kernel":
        return {"acc": np.maximum(x["acc"], x["x"]), "old": x["acc"]}
    if k == "int_bitcast.nibble_bits_kernel":
        n = a["w"].size
        offs = np.arange(n)
        w = a["w"].astype(np.int64)[a["idx"]]
        z = (a["zero"].astype(np.int64)[a["idx"] // 8] >> ((offs % 8) * 4)) & 15
        nib = (w[:, None] >> (4 * np.arange(8))[None, :]) & 15
        return {"out": (nib - z[:, None]).astype(np.float64).reshape(-1)}
    if k == "tile_numel.flatten_mean_kernel":
        return {"out": x["x"] * 2.0, "mean": np.array([x["x"].mean(), 64.0])}
    if k == "const_math.scaled_rows_kernel":  # f32 arithmetic as the kernel does it: one rounding per op
        scale = np.float32(1.0 / math.sqrt(c["constexprs"]["HEAD_DIM"]))
        return {"out": (x["q"].astype(np.float32) * scale + np.float32(math.sqrt(2.0))).astype(np.float64)}
    if k == "flag_conditions.window_start_kernel":
        t0 = (np.arange(x["x"].size) // 64) * 64
        late = t0 >= s["W"]
        if not s["USE_STATE"]:
            return {"y": x["x"] * 2}
        return {"y": np.where(late, x["x"] * 2, x["x"] + 1)}
    if k == "combine_fns.row_flags_kernel":
        nz = a["x"] != 0
        return {"all": nz.all(axis=1).astype(np.int64),
                "any": (nz.all(axis=1) if s["INVERT"] else nz.any(axis=1)).astype(np.int64)}
    if k == "combine_fns.products_kernel":
        return {"col": x["x"].prod(axis=0), "all": x["x"].prod().reshape(1), "big": x["x"].max().reshape(1)}
    if k == "combine_fns.int_bits_kernel":
        v = a["x"].astype(np.int64)
        head = v[:16]
        rows = v.reshape(2, 16)
        scan = np.bitwise_or.accumulate(rows[:, ::-1], axis=1)[:, ::-1]
        return {"or": np.bitwise_or.reduce(head).reshape(1), "xor": np.bitwise_xor.reduce(head).reshape(1),
                "and": np.bitwise_and.reduce(head).reshape(1), "scan": scan}
    if k == "combine_fns.running_flags_kernel":
        nz = a["x"] != 0
        return {"seen": np.logical_or.accumulate(nz).astype(np.int64),
                "clean": np.logical_and.accumulate(nz).astype(np.int64), "sums": np.cumsum(x["x"])}
    if k == "arm_rebinds.round_to_int8_kernel":  # float32 math; the int8 conversion truncates toward zero
        v = x["x"].astype(np.float32) * np.float32(2.0)
        v = np.floor(v + np.float32(0.5)) if s["ALT_ROUND"] else v * np.float32(0.5)
        return {"xq": np.trunc(v).astype(np.int64)}
    if k == "round_half_even.round_even_kernel":  # numpy's rint: round half to even, in float32
        v = a["x"].astype(np.float32)
        q = np.clip(np.rint(v * np.float32(4.0)), -127, 127).astype(np.int64)
        return {"r": np.rint(v), "q": q}
    if k == "compat_try.compat_noise_kernel":
        offs = np.arange(s["n"])
        v = a["x"].astype(np.float32)
        squashed = (v / (np.float32(1.0) + np.abs(v))) * np.float32(2.0)
        off = int(a["off"][0])
        low, high = off & 0xFFFFFFFF, (off >> 32) & 0xFFFFFFFF
        return {"u": _philox_rand(s["seed"], offs), "s": np.clip(squashed, 0.0, 1.0), "w": low + high * 3 + offs}
    if k == "compat_try.lowest_padded_max_kernel":
        return {"m": np.minimum(a["x"].astype(np.float32).max(), np.float32(127.0)).reshape(1)}
    if k == "propagate_nan.nan_clamp_kernel":  # np.minimum / maximum propagate NaN; fmin / fmax drop it
        v = a["x"].astype(np.float32)
        v = np.where(np.abs(v) > 2.0, np.float32(np.nan), v)
        lim = np.float32(s["limit"])
        return {"keep": np.maximum(np.minimum(v, lim), -lim), "drop": np.fmax(np.fmin(v, lim), -lim)}
    if k == "compat_try.device_count_rows_kernel":
        y = a["y"].astype(np.float32).copy()
        y[:20] = a["x"][:20].astype(np.float32) * np.float32(3.0)
        return {"y": y}
    if k == "compat_try.fp8_bits_kernel":
        return {"y": fp8_e4m3_decode(a["x"].astype(np.int64) & 0xFF)}
    if k == "compat_libm.libm_rows_kernel":  # float32; libdevice's products flush subnormals (mul.rn.ftz)
        v = a["x"].astype(np.float32)
        sq = _ftz32(v * v)
        cube = _ftz32(_ftz32(np.float32(1.0) * v) * sq)
        ms = np.float32((v.astype(np.float64) ** 2).sum() / s["n"])
        return {"t": np.tanh(v.astype(np.float64)), "r": np.rint(v * np.float32(4.0)) * np.float32(2.0),
                "p": cube + sq, "q": v / np.sqrt(np.float64(ms) + 1.0)}
    if k == "arm_rebinds.lse_max_kernel":
        v = a["lse"].astype(np.float32)
        v = np.where(np.isnan(v) | (v == np.inf), -np.inf, v)
        m = v.max()
        return {"out": np.array([0.0 if m == -np.inf else m], dtype=np.float32)}
    if k == "int_min.sign_bits_kernel":
        bits = a["x"].astype(np.float32).view(np.int32) & np.int32(-2**31)
        return {"y": bits.astype(np.int64), "z": bits[:1].astype(np.int64)}
    if k == "constexpr_locals.routed_rows_kernel":  # float32: one rounding where scaled
        xs, tok, rows = a["x"].astype(np.float32), a["idx"].astype(np.int64), np.arange(8)
        src = tok if s["GATHER"] else rows
        dst = tok if s["SCATTER"] else rows
        vals = xs[src] * (a["w"].astype(np.float32)[tok][:, None] if s["SCALED"] else np.float32(1.0))
        y = np.zeros_like(xs)
        y[dst] = vals
        return {"y": y}
    if k == "arm_forwarders.widen_rows_kernel":  # float16 widened exactly, doubled exactly
        return {"y": a["x"].astype(np.float16).astype(np.float32) * np.float32(2.0)}
    if k == "constexpr_locals.flagged_scale_kernel":
        return {"y": a["x"].astype(np.float32) * np.float32(2.0 if s["A"] or s["B"] or s["C"] else 1.0)}
    if k == "scalar_neg.neg_exp_rows_kernel":
        return {"y": x["x"] * np.exp(-x["loss"])[:, None]}
    if k == "call_jit.scale_rows_kernel":
        return {"y": a["x"].astype(np.float32) * np.float32(s["SCALE"])}  # one float32 rounding
    if k == "rn_arithmetic.rn_ops_kernel":  # float32 steps, libdevice's flushing each, the plain + - * not
        f32 = {n: a[n].astype(np.float32) for n in "xyzw"}
        fx, fy, fz, fw = (_ftz32(f32[n]) for n in "xyzw")
        return {"mul": _ftz32(fx * fy) + f32["z"], "add": _ftz32(fx + fy) * f32["w"],
                "sub": f32["z"] - _ftz32(fx - fy), "div": _ftz32(fx / fw),
                "fma": _ftz32(_fma32(fx, fy, _ftz32(_fma32(fz, fw, np.zeros_like(fz)))))}
    if k == "libdevice_math.angle_math_kernel":
        xx, yy = x["x"], x["y"]
        base = np.abs(yy) + 0.5
        return {"tan": np.tan(xx * 0.25), "hyp": np.sinh(xx) - 0.5 * np.cosh(yy), "ang": np.arctan2(xx, yy),
                "pw": base ** xx + base ** 1.5 + xx ** 3,
                "fast": np.tan(xx * 0.25) + np.sqrt(base) + xx / base}
    if k == "libdevice_math.float_class_kernel":
        f = np.where(np.arange(a["x"].size) % 5 == 0, a["nan"], a["x"]).astype(np.float32)
        bits = f.view(np.int32)
        return {"cls": np.isnan(f) * 1 + np.isinf(f) * 2 + np.isfinite(f) * 4, "bits": bits,
                "back": (bits & 0x7FFFFFFF).view(np.float32)}
    if k == "constexpr_rebind.clipped_chunk_sum_kernel":
        n, bc, nc = s["n"], s["BC"], s["NC"]
        xs, y = np.concatenate([x["x"], np.zeros(bc * nc * 4)]), x["y"].copy()
        for pid in range(4):
            start = pid * bc * nc
            if start >= n:
                continue
            chunks = min(nc, -(-(n - start) // bc))
            y[pid] = xs[start:start + chunks * bc].reshape(chunks, bc).sum(0) + chunks
        return {"y": y}
    if k == "constexpr_arms.scaled_tile_kernel":
        sa = x["sa"] if s["PER_ROW"] else np.full_like(x["sa"], x["sa"][0])
        sb = x["sb"] if s["PER_COL"] else np.full_like(x["sb"], x["sb"][0])
        return {"y": x["x"] * sa[:, None] * sb[None, :]}
    if k == "constexpr_arms.gram_kernel":
        return {"c": x["a"] @ x["a"].T}
    if k == "generic_bitcast.exponent_bits_kernel":
        bits = a["x"].astype(np.float32).view(np.int32)
        return {"e": (bits >> 23) & 0xFF, "s": (bits ^ (bits & 0x7FFFFFFF)).view(np.float32)}
    if k == "functional_ops.functional_axpby_kernel":
        den = np.abs(x["y"] - x["x"]) + 1.0
        return {"out": (x["x"] * s["alpha"] + x["y"]) / den + x["x"] / den}
    if k == "fast_math.fast_features_kernel":
        pos = np.exp(x["x"]) + 1.0
        return {"cos": np.cos(x["x"]), "sin": np.sin(x["x"]), "gate": np.log(pos) + 0.5 * np.log2(pos)}
    if k == "dot_operand_dtypes.decayed_gram_kernel":
        return {"out": x["a"] @ np.exp(-np.abs(x["a"])).T}
    if k == "carried_stats.resume_row_stats_kernel":  # online softmax statistics continued over the row
        m = np.maximum(x["M"], x["x"].max(axis=1))
        return {"L": x["L"] * np.exp(x["M"] - m) + np.exp(x["x"] - m[:, None]).sum(axis=1), "M": m}
    if k == "arm_flags.gated_scan_kernel":  # float64 math of the same recurrence
        n_, t_, _ = x["x"].shape
        o, ht = np.zeros_like(x["x"]), np.zeros((n_, x["x"].shape[2]))
        for n in range(n_):
            h = x["h0"][n].copy() if s["USE_H0"] else np.zeros(x["x"].shape[2])
            for t in (reversed(range(t_)) if s["REVERSE"] else range(t_)):
                if s["USE_G"]:
                    h = h * np.exp(x["g"][n, t])
                h = h + x["x"][n, t]
                if s["USE_GK"]:
                    h = h / (1.0 + np.exp(-x["gk"][n, t]))
                if s["USE_GV"]:
                    h = h * (1.0 + 0.5 * x["gv"][n, t])
                o[n, t] = h
            ht[n] = h
        return {"o": o, "ht": ht} if s["STORE_HT"] else {"o": o}
    if k == "widened_arms.head_rows_kernel":  # head h reads row h // (HV // H) where rows are shared
        return {"out": 2.0 * (np.repeat(x["w"], 2, axis=1) if s["SHARED"] else x["w"])}
    if k == "pointer_rows.gather_rows_kernel":
        return {"out": x["src"][a["pos"]] * 2.0}
    if k == "dtype_predicates.running_max_kernel":
        return {"out": np.array([x["x"][i:i + 128].max() for i in range(0, 300, 128)])}
    if k == "dtype_predicates.widen_by_dtype_kernel":  # f16: in f32, `* 2.0` then `+ 0.5` (16 bits); f32: `* 3.0`
        x32 = a["x"].astype(np.float32)
        if a["x"].dtype == np.float16:
            return {"out": (x32 * np.float32(2.0) + np.float32(0.5)).astype(np.float16).astype(np.float64)}
        return {"out": (x32 * np.float32(3.0)).astype(np.float64)}
    if k == "dtype_predicates.masked_min_kernel":
        return {"out": np.array([x["x"][i:i + 128].min() for i in range(0, 300, 128)])}
    if k == "dtype_predicates.fill_kernel":
        return {"out": np.full(100, 127.0)}
    if k == "dtype_names.scale_into_kernel":  # float to int32 rounds toward zero
        x32 = a["x"].astype(np.float32)
        return {"a": (x32 * 2.0).astype(np.float16).astype(np.float64)} if s["TO_A"] else \
            {"b": np.trunc(x32 * np.float32(3.0)).astype(np.float64)}
    if k == "arm_defined_names.group_starts_kernel":
        start, ratio, offs = int(a["start"][0]), s["ratio"], np.arange(16.0)
        if s["DECODE"]:
            return {"y": np.tile(offs if (start + 1) % ratio == 0 else 0.0 * offs, (3, 1))}
        first = ((start + ratio) // ratio) * ratio - 1
        return {"y": np.stack([offs + first + g * ratio for g in range(2)] + [0.0 * offs])}
    if k == "block_ptr_helpers.scaled_rows_kernel":  # rows in logical [ROWS, n] order
        rows = (lambda t: t if s["PACKED"] else t.T)
        return {"out": rows(x["x"]) * rows(x["s"])}
    if k == "block_ptr_helpers.block_sums_kernel":  # the row's blocks of 16, zero padded, summed
        n = s["N"]
        padded = np.zeros((3, _cdiv(n, 16) * 16))
        padded[:, :n] = x["x"]
        return {"out": padded.reshape(3, -1, 16).sum(1)}
    if k == "block_ptr_helpers.state_kernel":
        return {"out": (x["h0"].T if s["V_FIRST"] else x["h0"]) * 2.0 + 1.0}
    if k == "constexpr_functions.pow2_rows_kernel":  # levels = floor(log2(GROUP)), plus log2 of the block
        return {"y": x["x"] * (s["GROUP"].bit_length() - 1) + ((s["K"] - 1).bit_length())}
    if k == "countdown_loops.suffix_blocks_kernel":  # y: sums of a row's blocks from the last down to each
        n, bs = s["N"], s["BS"]
        nb = _cdiv(n, bs)
        blocks = np.zeros((x["x"].shape[0], nb * bs))
        blocks[:, :n] = x["x"]
        blocks = blocks.reshape(-1, nb, bs)
        y = np.flip(np.cumsum(np.flip(blocks, 1), 1), 1).reshape(-1, nb * bs)[:, :n]
        z = np.zeros_like(blocks)
        z[:, nb - 1::-2] = 2.0 * blocks[:, nb - 1::-2]
        return {"y": y, "z": z.reshape(-1, nb * bs)[:, :n]}
    if k == "dot_precision.chain_kernel":
        return {"out": x["a"] @ x["b"] @ x["c"]}
    if k == "block_ptr_arms.load_state_kernel":
        return {"out": (x["h0"].T if s["TRANSPOSED"] else x["h0"]) * 2.0}
    if k.startswith("varlen_shift."):  # f32 arithmetic, as the kernel does it, then the output's dtype
        D = c["constexprs"]["D"]
        if c["constexprs"]["IS_VARLEN"]:
            cu = a["cu"].astype(np.int64)
        else:
            cu = np.arange(0, a["x"].size // D + 1, s["T"])
        xs = a["x"].astype(np.float32).reshape(-1, D)
        y = np.zeros_like(xs)
        for n in range(cu.size - 1):
            seg = xs[cu[n]:cu[n + 1]]
            prev = np.concatenate([np.zeros((1, D), np.float32), seg[:-1]])
            y[cu[n]:cu[n + 1]] = (prev - seg) * a["scale"][n]
        return {"y": y.astype(a["y"].dtype).astype(np.float64).reshape(-1)}
    if k == "inline_asm.softplus_asm_kernel":  # setp.gt / @p mov / @!p mul, ex2, add, lg2, mul (ex2/lg2: exact here)
        v = x["x"]
        return {"y": np.where(v > 20.0, v, np.log2(np.exp2(v * 1.4426950408889634) + 1.0) * 0.6931471805599453)}
    if k == "inline_asm.dot_mov_kernel":  # mov.f32: the value itself
        return {"c": x["a"] @ x["b"] + 1.0}
    if k == "inline_asm.two_outputs_kernel":  # float32 steps as the asm's (rcp and fma rounded once), then int32
        f32 = np.float32
        v = x["x"].astype(f32)
        t = f32(1.0) / np.maximum(np.abs(v), f32(0.5))
        t = (t.astype(np.float64) * v + 1.0).astype(f32)  # fma: the exact product, one rounding
        y = np.tanh(t.astype(np.float64))
        q = np.floor(v * f32(10.0)).astype(np.int64) * 3 + a["i"].astype(np.int64)
        q = np.trunc(q / 2).astype(np.int64)  # div.s32 truncates
        return {"y": y, "k": np.abs(q) * 2}
    if k == "inline_asm.const_operand_kernel":  # each product rounded to float32, then the float32 sum
        v = x["x"].astype(np.float32)
        return {"y": (v * np.float32(0.1)) + (np.float32(0.3) * v)}
    if k == "inline_asm.bit_ops_kernel":
        a, b, cc = (x[w].astype(np.int64) & 0xFFFFFFFF for w in ("a", "b", "c"))  # the words' bits, unsigned
        lut, maj = 0xE8, np.zeros_like(a)
        for bit in range(32):  # lop3: bit i of d is bit (a_i * 4 + b_i * 2 + c_i) of the truth table
            idx = ((a >> bit) & 1) * 4 + ((b >> bit) & 1) * 2 + ((cc >> bit) & 1)
            maj |= ((lut >> idx) & 1) << bit
        maj = (maj ^ 0x80000000) >> 3  # xor.b32, then shr.u32 (logical)
        pair = a | (b << 32)  # prmt: bytes 0-3 of a, 4-7 of b
        perm = np.zeros_like(a)
        for i in range(4):
            nib = (cc >> (4 * i)) & 0xF
            byte = (pair >> ((nib & 7) * 8)) & 0xFF
            byte = np.where(nib & 8, np.where(byte & 0x80, 0xFF, 0), byte)  # the byte's sign bit, replicated
            perm |= byte << (8 * i)
        f = (a >> 3) & 0x1FF  # bfe.u32 f, a, 3, 9
        field = 0xFFF << 20
        f = (f & ~field & 0xFFFFFFFF) | ((b << 20) & field)  # bfi.b32 f, b, f, 20, 12
        fld = (f >> 8) & 0xFFFF
        fld = np.where(fld & 0x8000, fld - 0x10000, fld)  # bfe.s32 .., 8, 16: the field's sign bit extended
        signed = lambda w: np.where(w >= 2 ** 31, w - 2 ** 32, w)  # noqa: E731 (the int32 the kernel stores)
        return {"maj": signed(maj), "perm": signed(perm), "fld": fld}
    if k == "python_assert.asserted_scale_kernel":
        return {"out": x["x"] * 3.0}
    if k == "false_tile.group_mask_kernel":
        i = np.arange(s["n"])
        sel = np.zeros(s["n"], bool)
        for g in range(s["n_groups"]):
            sel |= (i >= g * 2 * s["GROUP"]) & (i < g * 2 * s["GROUP"] + s["GROUP"])
        return {"out": np.where(sel, x["x"], 0.0)}
    if k.startswith("exact_gelu."):
        erf = np.vectorize(math.erf, otypes=[np.float64])
        if k == "exact_gelu.erf_kernel":
            return {"y": erf(x["x"])}
        if k == "exact_gelu.geglu_forward_kernel":
            return {"y": 0.5 * x["x"] * (1.0 + erf(x["x"] * 0.7071067811865476)) * x["g"]}
        cdf = 0.5 * (1.0 + erf(x["x"] * 0.7071067811865476))
        pdf = np.exp(-0.5 * x["x"] ** 2) / math.sqrt(2 * math.pi)
        return {"dx": x["dy"] * (cdf + x["x"] * pdf)}
    raise KeyError(f"no numpy reference for {k}")


# ----------------------------------------------------------------------------------------------- interpreter

_TORCH_NAMES = {"float32": "float32", "float16": "float16", "int32": "int32", "int64": "int64",
                "uint8": "uint8", "int8": "int8", "int16": "int16", "bool": "bool", "float8_e4m3fn": "float8_e4m3fn"}


def HostTensor(array: np.ndarray, dtype_name: str):  # noqa: N802 - the tensor class's constructor
    """A numpy array seen by the interpreter as a tensor (one of the dtypes the reference tables allow)."""
    return _tool_module("declared_runner").HostTensor(array, _TORCH_NAMES[dtype_name])


_PATCHED = False


def _setup_interpreter():
    global _PATCHED
    os.environ["TRITON_INTERPRET"] = "1"
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    if _PATCHED:
        return
    from triton.runtime import interpreter as interp

    _record_hook().fidelity_patches(interp)
    # the arrays are host memory already: no device<->host copies (those go through torch storages)
    interp.GridExecutor._init_args_hst = lambda self, args, kwargs: (list(args), dict(kwargs))
    interp.GridExecutor._restore_args_dev = lambda self, *a, **k: None
    _PATCHED = True


def _launchable(kernel):
    from triton.runtime.autotuner import Autotuner
    # a multi-config autotuner needs a driver to benchmark: launch the function it wraps with one config
    while isinstance(kernel, Autotuner):
        kernel = kernel.fn
    return kernel


def run_case(c: dict) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Interpret the kernel on the case's inputs; returns (inputs before the launch, outputs after)."""
    if c["module"].rsplit(".", 1)[1] in NUMPY_ONLY:  # no interpreter run: the numpy reference, as the outputs' dtype
        arrays = make_inputs(c)
        want = reference(c, {n: v.copy() for n, v in arrays.items()})
        return arrays, {n: np.asarray(want[n]).reshape(arrays[n].shape).astype(arrays[n].dtype) for n in c["outputs"]}
    _setup_interpreter()
    import triton.language as tl

    arrays = make_inputs(c)
    fill_addresses(c, arrays, lambda n: arrays[n].ctypes.data)  # host addresses: the interpreter reads them
    before = {n: v.copy() for n, v in arrays.items()}
    dtypes = {i["name"]: i["dtype"] for i in c["inputs"]}
    tensors = {n: HostTensor(v, dtypes[n]) for n, v in arrays.items()}
    descs = {}
    for n, d in c.get("descriptors", {}).items():
        from triton.tools.tensor_descriptor import TensorDescriptor
        descs[n] = TensorDescriptor.from_tensor(tensors[d["base"]], list(d["block"]))
    args = [descs[n] if n in descs else tensors[n] if n in tensors else c["scalars"][n] for n in c["args"]]
    consts = {k: (getattr(tl, v) if k.endswith("DTYPE") else v) for k, v in c["constexprs"].items()}
    kernel = _launchable(getattr(importlib.import_module(c["module"]), c["kernel"]))
    kernel[tuple(c["grid"])](*args, **consts)
    return before, {n: arrays[n] for n in c["outputs"]}


def compare(c: dict, got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> tuple[float, bool]:
    worst, ok = 0.0, True
    for name, meta in c["outputs"].items():
        g = got[name]
        g = fp8_e4m3_decode(g) if meta["dtype"] == "float8_e4m3fn" else _f(g)
        w = _f(want[name])
        atol, rtol = meta["tol"]
        both_nan = np.isnan(g) & np.isnan(w)
        with np.errstate(invalid="ignore"):  # equal infinities are no error (their difference is NaN)
            err = np.where(both_nan | ((g == w) & np.isinf(w)), 0.0, np.abs(g - w))
        err = np.where(np.isnan(err), np.inf, err)
        worst = max(worst, float(err.max()) if err.size else 0.0)
        with np.errstate(invalid="ignore"):
            ok &= bool(np.all((err == 0.0) | (err <= atol + rtol * np.where(np.isnan(w), 0.0, np.abs(w)))))
    return worst, ok


def fixture_path(c: dict) -> Path:
    return FIXTURES / f"{c['module'].rsplit('.', 1)[1]}__{c['kernel']}__{c['case']}.npz"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="recompute and compare with the saved npz files")
    ap.add_argument("-k", default="", help="only cases whose id contains this")
    opts = ap.parse_args(argv)
    todo = [c for c in cases() if opts.k in c["id"]]
    if not opts.check:
        FIXTURES.mkdir(parents=True, exist_ok=True)
    failures = 0
    print(f"{'kernel':<30} {'case':<34} {'max_abs_err':>12}  status")
    for c in todo:
        try:
            before, got = run_case(c)
            err, ok = compare(c, got, reference(c, before))
            status = "ok" if ok else "MISMATCH"
            if opts.check:
                path = fixture_path(c)
                if not path.exists():
                    status = "MISSING"
                else:
                    saved = np.load(path)
                    same = all(np.array_equal(saved[f"out__{n}"], got[n], equal_nan=True) for n in c["outputs"])
                    same &= json.loads(str(saved["case"])) == c
                    status += "" if same else " CHANGED"
            elif ok:
                np.savez_compressed(fixture_path(c), case=json.dumps(c),
                                    **{f"out__{n}": v for n, v in got.items()})
        except Exception as e:  # report and go on with the other cases
            err, status = float("nan"), f"ERROR {type(e).__name__}: {str(e)[:150]}"
        failures += status != "ok"
        print(f"{c['kernel']:<30} {c['case']:<34} {err:>12.3g}  {status}", flush=True)
    print(f"{len(todo) - failures}/{len(todo)} cases ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
