"""Triton accesses at tile-aligned offsets become tensor views + partitions in kernels with a dot
(passes/views.py): what is proven, what is refused (each mutant breaks one condition of the proof), the hidden
unit-stride constants, and `tl.dot`'s float32 precision."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from transpiler.frontend.source import parse_file
from transpiler.model.dump import expr_text
from transpiler.model.walk import walk_exprs
from transpiler.pipeline import run, translate_kernel, write_outputs
from transpiler.verify.specs import specializations

HEAD = "import triton\nimport triton.language as tl\n\n\n"

GEMM = """
@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * s_am + offs_k[None, :] * s_ak
    b_ptrs = b_ptr + offs_k[:, None] * s_bk + offs_n[None, :] * s_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BK), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BK) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * s_ak
        b_ptrs += BK * s_bk
    tl.store(c_ptr + offs_m[:, None] * s_cm + offs_n[None, :] * s_cn, acc,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
"""


def _kernel(tmp_path: Path, body: str):
    src = tmp_path / "k.py"
    src.write_text(HEAD + textwrap.dedent(body))
    fr = parse_file(src, "k.py")
    assert not fr.failures, [d.message for _, _, d in fr.failures]
    return translate_kernel(fr.kernels[0])


def _views(k) -> dict:
    """array -> (op, extents, strides, tile index, tile, padding, unit-stride constant) of its view accesses."""
    out = {}
    for e in walk_exprs(k.body):
        if getattr(e, "op", None) in ("view_load", "view_store"):
            text = lambda t: tuple(re.sub(r" : \w+", "", expr_text(x)) for x in t.items)  # noqa: E731
            out.setdefault(e.args[0].id, []).append(
                (e.op, text(e.args[1]), text(e.args[2]), text(e.args[3]), e.attr("tile"), e.attr("padding"),
                 e.attr("unit")))
    return out


def test_gemm_tiles_are_partition_tiles_of_views(tmp_path):
    k = _kernel(tmp_path, GEMM)[0]
    views = _views(k)
    # A's tile (pid_m, k) of an M x K view; the loop-advanced pointer's iteration is the K tile index
    assert views["a_ptr"] == [("view_load", ("%M", "%K"), ("%s_am", "%s_ak"), ("%pid_m", "%k"), ("BM", "BK"),
                               "padding::Zero", "s_ak_IS_1")]
    assert views["b_ptr"] == [("view_load", ("%K", "%N"), ("%s_bk", "%s_bn"), ("%k", "%pid_n"), ("BK", "BN"),
                               "padding::Zero", "s_bn_IS_1")]
    assert views["c_ptr"] == [("view_store", ("%M", "%N"), ("%s_cm", "%s_cn"), ("%pid_m", "%pid_n"),
                               ("BM", "BN"), "padding::Zero", "s_cn_IS_1")]
    flags = {p.name: p.unit_of for p in k.params if p.unit_of}
    assert flags == {"s_ak_IS_1": "s_ak", "s_bn_IS_1": "s_bn", "s_cn_IS_1": "s_cn"}
    assert all(p.kind == "const" and p.const_type == "bool" for p in k.params if p.unit_of)


def test_row_offsets_and_unmasked_axes(tmp_path):
    """A runtime row offset (`b * stride_b`) is an axis of extent 1; an axis no mask bounds is unbounded; a loop
    stepping by BLOCK_N walks the tile index `start_n / BLOCK_N`; a literal unit stride needs no constant."""
    body = """
    @triton.jit
    def attn_kernel(q_ptr, k_ptr, o_ptr, n_heads, seq_len, stride_b, stride_h, stride_s,
                    D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
        start_m = tl.program_id(0)
        bh = tl.program_id(1)
        b = bh // n_heads
        h = bh % n_heads
        base = b.to(tl.int64) * stride_b + h.to(tl.int64) * stride_h
        offs_m = start_m * BM + tl.arange(0, BM)
        offs_d = tl.arange(0, D)
        q = tl.load(q_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :], mask=offs_m[:, None] < seq_len,
                    other=0.0)
        acc = tl.zeros([BM, D], dtype=tl.float32)
        for start_n in range(0, seq_len, BN):
            cols = start_n + tl.arange(0, BN)
            kt = tl.load(k_ptr + base + cols[:, None] * stride_s + offs_d[None, :], mask=cols[:, None] < seq_len,
                         other=0.0)
            acc += tl.dot(q, tl.trans(kt)).sum(axis=1)[:, None] + tl.zeros([BM, D], dtype=tl.float32)
        tl.store(o_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :], acc, mask=offs_m[:, None] < seq_len)
    """
    k = _kernel(tmp_path, body)[0]
    views = _views(k)
    big = str(2**31 - 1)
    assert views["q_ptr"] == [("view_load", (big, big, "%seq_len", big),
                               ("%stride_b", "%stride_h", "%stride_s", "1"), ("%b", "%h", "%start_m", "0"),
                               ("1", "1", "BM", "D"), "padding::Zero", "")]
    (_, _, _, index, *_), = views["k_ptr"]
    assert index[2] == "truncdiv(%start_n, %BN)"
    assert not [p for p in k.params if p.unit_of]


# each breaks one condition of the proof: the access keeps its element path (the others may still be views)
MUTANTS = {
    "wrapped rows (`% M`)": ("offs_m = pid_m * BM + tl.arange(0, BM)",
                             "offs_m = (pid_m * BM + tl.arange(0, BM)) % M"),
    "misaligned tile start under a mask": ("offs_m = pid_m * BM + tl.arange(0, BM)",
                                           "offs_m = pid_m * 3 + tl.arange(0, BM)"),
    "a mask that is not a bound": ("mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BK), other=0.0",
                                   "mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BK) & (pid_n < 2), other=0.0"),
    "a lower bound": ("mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BK), other=0.0",
                      "mask=(offs_m[:, None] >= 1) & (offs_k[None, :] < K - k * BK), other=0.0"),
    "a scaled index in the mask": ("mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BK), other=0.0",
                                   "mask=(offs_m[:, None] * 2 < M) & (offs_k[None, :] < K - k * BK), other=0.0"),
    "a bound that moves with the loop": ("mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BK), other=0.0",
                                         "mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0"),
    "an advance that is not a tile": ("a_ptrs += BK * s_ak", "a_ptrs += 3"),
    "an advance a `continue` may skip": ("        acc = tl.dot(a, b, acc)\n",
                                         "        acc = tl.dot(a, b, acc)\n        if k == 2:\n            continue\n"),
    "a pointer assigned a third time": ("a_ptrs += BK * s_ak", "a_ptrs += BK * s_ak\n        a_ptrs = a_ptrs + 0"),
    "a broadcast row": ("a_ptrs = a_ptr + offs_m[:, None] * s_am + offs_k[None, :] * s_ak",
                        "a_ptrs = a_ptr + offs_m[:, None] * 0 + offs_k[None, :] * s_ak"),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_an_access_the_proof_does_not_cover_keeps_its_element_path(tmp_path, name):
    old, new = MUTANTS[name]
    assert old in GEMM
    k = _kernel(tmp_path, GEMM.replace(old, new, 1))[0]
    views = _views(k)
    assert "a_ptr" not in views, views.get("a_ptr")
    assert any(e.op == "gather" and e.args[0].id == "a_ptr" for e in walk_exprs(k.body) if hasattr(e, "op"))
    assert ("b_ptr" in views) == ("continue" not in name)  # the rest of the kernel is unaffected (B's advance
    # is skipped by the `continue` too)


def test_other_without_a_padding_mode_is_selected_after_a_zero_padded_tile(tmp_path):
    k = _kernel(tmp_path, GEMM.replace("(offs_k[None, :] < K - k * BK), other=0.0",
                                       "(offs_k[None, :] < K - k * BK), other=1.0", 1))[0]
    (view,) = [e for e in walk_exprs(k.body) if getattr(e, "op", "") == "view_load" and e.args[0].id == "a_ptr"]
    assert view.attr("padding") == "padding::Zero"
    (sel,) = [e for e in walk_exprs(k.body) if getattr(e, "op", "") == "where" and view in e.args]
    assert sel.args[1] is view and "1.0" in expr_text(sel.args[2])


def test_read_and_written_arrays_and_kernels_without_a_dot_keep_element_accesses(tmp_path):
    inplace = GEMM.replace("acc = tl.zeros((BM, BN), dtype=tl.float32)",
                           "acc = tl.load(c_ptr + offs_m[:, None] * s_cm + offs_n[None, :] * s_cn, "
                           "mask=(offs_m[:, None] < M) & (offs_n[None, :] < N), other=0.0).to(tl.float32)")
    (tmp_path / "a").mkdir()
    views = _views(_kernel(tmp_path / "a", inplace)[0])
    assert "c_ptr" not in views and "a_ptr" in views
    add = """
    @triton.jit
    def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
    """
    (tmp_path / "b").mkdir()
    assert _views(_kernel(tmp_path / "b", add)[0]) == {}


ROW_GRAD = """
@triton.jit
def row_grad_kernel(dy_ptr, dw_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    dy = tl.load(dy_ptr + row * stride + cols, mask=mask, other=0.0)
    tl.atomic_add(dw_ptr + cols, dy, mask=mask, sem="relaxed")
"""


@pytest.mark.parametrize("old, new, reduced", [
    ("", "", True),
    ('sem="relaxed"', 'sem="relaxed", scope="cta"', True),
    ("mask=mask, sem", "mask=cols < n_cols - 1, sem", True),  # another bound: another extent
    ('sem="relaxed"', 'sem="acq_rel"', False),  # the view reduction is relaxed only
    (', sem="relaxed"', "", False),  # Triton's default order is acq_rel
    ("    tl.atomic_add(", "    old = tl.atomic_add(", False),  # its old values are read
    ("dw_ptr + cols,", "dw_ptr + cols * 2,", False),  # no tile of a view with unit inner stride
    ('sem="relaxed")', 'sem="relaxed")\n    tl.store(dw_ptr + cols, dy, mask=mask)', False),  # stored too
])
def test_relaxed_atomic_adds_of_a_view_tile_are_view_reductions(tmp_path, old, new, reduced):
    """A statement `tl.atomic_add(ptr + tile offsets, v, mask, sem="relaxed")` becomes one view reduction of
    the tile (atomic_red_view_tko: bulk reductions, where Triton issues vector `red`s and the element path one
    scalar `red` per element), in kernels without a dot too; another order, a read of the old values, offsets
    that are no view tile or other accesses of the pointer keep the element atomics."""
    (k,) = _kernel(tmp_path, ROW_GRAD.replace(old, new) if old else ROW_GRAD)
    got = [(e.op, e.attr("reduce")) for e in walk_exprs(k.body)
           if getattr(e, "op", None) in ("view_store", "atomic_add")]
    views = _views(k)
    if reduced:
        assert ("view_store", "add") in got and "dy_ptr" not in views, got  # the load stays an element access
        (extents,) = {v[1] for v in views["dw_ptr"]}
        assert extents == (("%n_cols",) if not new.startswith("mask") else extents) and len(extents) == 1
    else:
        assert ("view_store", "add") not in got and ("atomic_add", None) in got, got


BLOCK_GEMM = """
@triton.jit
def bp_gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_p = tl.make_block_ptr(a_ptr, (M, K), (s_am, s_ak), (pid_m * BM, 0), (BM, BK), (1, 0))
    b_p = tl.make_block_ptr(b_ptr, (K, N), (s_bk, s_bn), (0, pid_n * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_p, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_p, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc)
        a_p = tl.advance(a_p, (0, BK))
        b_p = tl.advance(b_p, (BK, 0))
    c_p = tl.make_block_ptr(c_ptr, (M, N), (s_cm, s_cn), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    tl.store(c_p, acc, boundary_check=(0, 1))
"""


@pytest.mark.parametrize("old, new, viewed", [
    ("", "", {"a_ptr", "b_ptr", "c_ptr"}),
    ("for k in range(0, K, BK):", "for k in range(0, tl.cdiv(K, BK)):", {"a_ptr", "b_ptr", "c_ptr"}),
    # a start that may be negative (a scalar argument's multiple): Triton's `0 <= index` check is no view bound
    ("(pid_m * BM, 0), (BM, BK)", "(M * BM, 0), (BM, BK)", {"b_ptr", "c_ptr"}),
])
def test_block_pointer_accesses_are_views(tmp_path, old, new, viewed):
    """Block pointers (advanced in a loop of any step, boundary-checked on both ends) are the views their
    accesses address: `index >= 0` holds where the tile index is a sum of program ids and loop iterations, the
    advance is a carried offset (each part assigned in place), the iteration of `range(0, K, BK)` is
    `k / BK`. int8_gemm_kernel's loads went from byte gathers (sm_90 SASS: LDG.E.U8 x192 per thread) to TMA."""
    k = _kernel(tmp_path, BLOCK_GEMM.replace(old, new) if old else BLOCK_GEMM)[0]
    views = _views(k)
    assert set(views) == viewed, views
    if "a_ptr" in views:
        ((op, extents, _, index, tile, padding, unit),) = views["a_ptr"]
        assert (op, extents, tile, padding, unit) == ("view_load", ("%M", "%K"), ("BM", "BK"), "padding::Zero",
                                                      "s_ak_IS_1")
        assert index[0] == "%pid_m" and ("truncdiv(%k, %BK)" in index[1] or index[1] == "%k"), index


def test_unit_stride_constants_are_set_by_the_c_symbol_and_verified_both_ways(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(HEAD + textwrap.dedent(GEMM))
    out = tmp_path / "out"
    result, outputs = run([src], out)
    write_outputs(outputs)
    assert result.kernels[0].status == "translated"
    kernel = json.loads((out / "manifest.json").read_text())["modules"][0]["kernels"][0]
    assert {p["name"]: p.get("unit_of") for p in kernel["params"] if p.get("unit_of")} == \
        {"s_ak_IS_1": "s_ak", "s_bn_IS_1": "s_bn", "s_cn_IS_1": "s_cn"}
    ffi = next(out.glob("src/*/ffi.rs")).read_text()
    assert "let s_ak_IS_1: i64 = (s_ak == 1) as i64;" in ffi
    assert "s_ak_IS_1: i64," not in ffi.split("pub unsafe extern")[1].split(")")[0]  # not an argument
    wrappers = "".join(p.read_text() for p in out.glob("python/**/*.py"))
    assert "s_ak_IS_1" not in wrappers  # the wrapper neither takes nor computes them
    kernel_rs = next(out.glob("src/*/kernel.rs")).read_text()
    assert "if s_ak_IS_1 == 1i32 {" in kernel_rs and "load_view_tko(" in kernel_rs and "load_ptr_tko(" in kernel_rs
    # verification compiles each entry with all the constants 1 (views) and all 0 (element accesses)
    fr = parse_file(src, "k.py")
    specs, _, _ = specializations(translate_kernel(fr.kernels[0])[0], src)
    values = {tuple(sp[f] for f in ("s_ak_IS_1", "s_bn_IS_1", "s_cn_IS_1")) for sp in specs}
    assert values == {(0, 0, 0), (1, 1, 1)}


@pytest.mark.parametrize("keyword,converted", [("", True), (", input_precision='tf32'", True),
                                               (", allow_tf32=False", False), (", input_precision='ieee'", False),
                                               (", input_precision='tf32x3'", False),
                                               (", input_precision='bf16x6'", False)])
def test_float32_dot_operands_are_tf32_as_triton_computes_them(tmp_path, keyword, converted):
    variants = _kernel(tmp_path, GEMM.replace("acc = tl.dot(a, b, acc)", f"acc = tl.dot(a, b, acc{keyword})"))
    by_dtypes = {v.variant.dtypes: v for v in variants}
    tf32 = lambda v: [e for e in walk_exprs(v.body) if getattr(e, "op", "") == "convert" and e.ty.dtype == "tf32"]  # noqa: E731
    if converted:
        assert set(by_dtypes) == {("f32",), ("f16", "bf16")}
        assert len(tf32(by_dtypes[("f32",)])) == 2 and not tf32(by_dtypes[("f16", "bf16")])
    else:
        assert len(variants) == 1 and not tf32(variants[0])


def test_a_precision_that_is_not_a_literal_is_diagnosed(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(HEAD + textwrap.dedent(GEMM.replace("acc = tl.dot(a, b, acc)",
                                                       "acc = tl.dot(a, b, acc, input_precision='bf16x9')")))
    fr = parse_file(src, "k.py")
    (_, _, d), = fr.failures
    assert d.code == "TTR-DOT" and "input_precision" in d.message and d.pos.line > 4


DESC = """
@triton.jit
def desc_kernel(a_ptr, c_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, BM], strides=[BM, 1], block_shape=[BM, BM])
    off_m = tl.program_id(0) * BM
    acc = tl.zeros((BM, BM), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([off_m, k])
        acc = tl.dot(a, a.T, acc)
    c_desc.store([off_m, 0], acc.to(c_desc.dtype))
"""


def test_tensor_descriptors_are_views_indexed_by_tile(tmp_path):
    k = _kernel(tmp_path, DESC)[0]
    views = _views(k)
    assert views["a_ptr"] == [("view_load", ("%M", "%K"), ("%K", "1"), ("bid(0)", "truncdiv(%k, %BK)"),
                               ("BM", "BK"), "padding::Zero", "")]
    assert views["c_ptr"][0][:4] == ("view_store", ("%M", "%BM"), ("%BM", "1"), ("bid(0)", "0"))


@pytest.mark.parametrize("old,new,line,words", [
    ("a_desc.load([off_m, k])", "a_desc.load([off_m + 1, k])", 13, "multiple of the block extent BM"),
    ("strides=[K, 1], block_shape=[BM, BK]", "strides=[1, K], block_shape=[BM, BK]", 8, "last stride must be 1"),
    # a shape the kernel computes is kept where the descriptor is made (the view is made at the access from it);
    # a descriptor made in a loop is not (its value at the access is another iteration's)
    ("        a = a_desc.load([off_m, k])",
     "        b_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, k + BK], strides=[K, 1], block_shape=[BM, BK])\n"
     "        a = b_desc.load([off_m, k])", 13, "assigned once outside loops"),
])
def test_descriptor_accesses_the_port_cannot_prove_are_refused_at_their_position(tmp_path, old, new, line, words):
    src = tmp_path / "k.py"
    assert old in DESC
    src.write_text(HEAD + textwrap.dedent(DESC.replace(old, new, 1)))
    result, _ = run([src], tmp_path / "out")
    (kr,) = result.kernels
    assert kr.status == "unsupported"
    d = kr.diagnostics[0]
    assert d.code == "TTR-DESC" and words in d.message and d.pos.line == line, (d.code, d.message, d.pos)


def test_a_descriptor_shape_assigned_twice_before_it_is_made_takes_its_value_there(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(HEAD + textwrap.dedent(DESC.replace(
        "    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K]",
        "    kk = K * 2\n    kk = kk + 1\n    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, kk]", 1)))
    result, _ = run([src], tmp_path / "out")
    (kr,) = result.kernels
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]


def test_dot_out_dtype_is_the_type_it_accumulates_in(tmp_path):
    """`out_dtype=tl.int32` with int8 operands (and float32 with float ones) is the dot's own accumulator; another
    combination is refused at the dot."""
    body = """
    @triton.jit
    def i8_kernel(a_ptr, b_ptr, c_ptr, B: tl.constexpr):
        r = tl.arange(0, B)
        a = tl.load(a_ptr + r[:, None] * B + r[None, :]).to(tl.int8)
        b = tl.load(b_ptr + r[:, None] * B + r[None, :]).to(tl.int8)
        c = tl.dot(a, b, out_dtype=OUT)
        tl.store(c_ptr + r[:, None] * B + r[None, :], c)
    """
    (tmp_path / "ok").mkdir()
    k = _kernel(tmp_path / "ok", body.replace("OUT", "tl.int32"))[0]
    (mm,) = [e for e in walk_exprs(k.body) if getattr(e, "op", "") == "mma"]
    assert mm.ty.dtype == "i32" and mm.args[0].ty.dtype == "i8"
    src = tmp_path / "bad.py"
    src.write_text(HEAD + textwrap.dedent(body.replace("OUT", "tl.float32")))
    result, _ = run([src], tmp_path / "out")
    d = result.kernels[0].diagnostics[0]
    assert result.kernels[0].status == "unsupported" and d.code == "TTR-DOT" and "f32 with i8" in d.message
    assert d.pos.line == 11


@pytest.mark.parametrize("update, folded", [
    ("acc += tl.dot(a, b)", True),
    ("acc = tl.dot(a, b) + acc", True),
    ("acc = acc * 0.5 + tl.dot(a, b)", True),  # any accumulator value of the dot's type
    ("acc = tl.dot(a, b, acc)", True),  # already accumulating: as it was
    ("acc = acc + tl.dot(a, b, tl.full((BM, BN), 1.0, tl.float32))", False),  # a nonzero accumulator
    ("acc = acc - tl.dot(a, b)", False),
])
def test_an_add_of_a_dot_accumulates_in_the_dot(tmp_path, update, folded):
    """`acc += tl.dot(a, b)` is `acc = tl.dot(a, b, acc)`, as Triton's combine pass compiles it (one
    accumulator in the tensor cores, not a dot into zeros plus a tile add per step); a dot with a nonzero
    accumulator or a subtraction keeps its add."""
    body = GEMM.replace("acc = tl.dot(a, b, acc)", update)
    k = _kernel(tmp_path, body)[0]
    (mm,) = [e for e in walk_exprs(k.body) if getattr(e, "op", "") == "mma"]
    adds = [e for e in walk_exprs(k.body) if getattr(e, "op", "") in ("add", "sub") and e.ty is not None
            and e.ty.shape == mm.ty.shape and any(a is mm for a in e.args)]
    acc_in = mm.args[2]
    if folded:
        assert not adds and not (getattr(acc_in, "op", "") == "const_tile"), expr_text(mm)
    else:
        assert adds, expr_text(mm)
