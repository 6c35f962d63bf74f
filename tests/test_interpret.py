"""The Tile IR interpreter (transpiler/verify/interpret): its ops on hand-written Tile IR and value-changing
edits of ports caught. Every Triton corpus port with reference cases interpreted and equal to Triton's numbers:
tests/test_triton.py (it shares the verified Triton corpus, built once per test worker).

The mutant tests compile entries with cuTile Rust (the irdump helper) and need the verification
toolchain; the op tests need numpy (and ml_dtypes) only.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import requires_toolchain
from transpiler.verify.interpret.machine import Machine, parse_entry
from transpiler.verify.interpret.values import InterpretError, Memory, round_tf32

# out[i] = x[i] + y[i] for i < n, one block of 8 lanes per 8 elements (a Triton vector add, as cuTile Rust
# lowers it: pointer tiles, a mask, `other`)
VECTOR_ADD = """entry @add(%x: tile<ptr<f32>>, %y: tile<ptr<f32>>, %o: tile<ptr<f32>>, %n: tile<i32>) {
  %b:3 = get_tile_block_id : tile<i32>
  %c8 = constant <i32: 8> : tile<i32>
  %base = muli %b#0, %c8 : tile<i32>
  %r = reshape %base : tile<i32> -> tile<1xi32>
  %bb = broadcast %r : tile<1xi32> -> tile<8xi32>
  %i = iota : tile<8xi32>
  %offs = addi %bb, %i : tile<8xi32>
  %nr = reshape %n : tile<i32> -> tile<1xi32>
  %nb = broadcast %nr : tile<1xi32> -> tile<8xi32>
  %mask = cmpi less_than %offs, %nb, signed : tile<8xi32> -> tile<8xi1>
  %xr = reshape %x : tile<ptr<f32>> -> tile<1xptr<f32>>
  %xb = broadcast %xr : tile<1xptr<f32>> -> tile<8xptr<f32>>
  %xp = offset %xb, %offs : tile<8xptr<f32>>, tile<8xi32> -> tile<8xptr<f32>>
  %yr = reshape %y : tile<ptr<f32>> -> tile<1xptr<f32>>
  %yb = broadcast %yr : tile<1xptr<f32>> -> tile<8xptr<f32>>
  %yp = offset %yb, %offs : tile<8xptr<f32>>, tile<8xi32> -> tile<8xptr<f32>>
  %zero = constant <f32: 0.000000e+00> : tile<8xf32>
  %xv, %t1 = load_ptr_tko weak %xp, %mask, %zero token=%tok : tile<8xptr<f32>>, tile<8xi1>, tile<8xf32> -> tile<8xf32>, token
  %yv, %t2 = load_ptr_tko weak %yp, %mask, %zero token=%tok : tile<8xptr<f32>>, tile<8xi1>, tile<8xf32> -> tile<8xf32>, token
  %s = addf %xv, %yv : tile<8xf32>
  %or = reshape %o : tile<ptr<f32>> -> tile<1xptr<f32>>
  %ob = broadcast %or : tile<1xptr<f32>> -> tile<8xptr<f32>>
  %op = offset %ob, %offs : tile<8xptr<f32>>, tile<8xi32> -> tile<8xptr<f32>>
  %t3 = store_ptr_tko weak %op, %s, %mask token=%tok : tile<8xptr<f32>>, tile<8xf32>, tile<8xi1> -> token
  return
}
"""


def run_add(text: str, n: int = 13, grid: int = 2):
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    mem = Memory()
    args = [np.array(mem.add(name, a)) for name, a in (("x", x), ("y", y), ("o", np.full(n, np.nan, np.float32)))]
    Machine(mem, (grid, 1, 1)).run(parse_entry(text.replace("token=%tok", "token=%t0").replace(
        "%b:3 =", "%t0 = make_token : token\n  %b:3 =")), args + [np.array(n, np.int32)])
    return x, y, mem.buffers[2].data


def test_masked_pointer_loads_and_stores():
    x, y, out = run_add(VECTOR_ADD)
    assert np.array_equal(out, x + y)


def test_an_access_outside_the_array_is_an_error():
    """Without its mask the tail lanes read past `x`: an error (never another array's bytes); so is a mask
    off by one (`<=`), which reads one element too many."""
    with pytest.raises(InterpretError, match="out of bounds"):
        run_add(VECTOR_ADD.replace("%xp, %mask, %zero token", "%xp, %zero token").replace(
            "tile<8xptr<f32>>, tile<8xi1>, tile<8xf32> -> tile<8xf32>, token\n  %yv", "tile<8xptr<f32>>, tile<8xf32> -> tile<8xf32>, token\n  %yv", 1))
    with pytest.raises(InterpretError, match="out of bounds"):
        run_add(VECTOR_ADD.replace("cmpi less_than ", "cmpi less_than_or_equal "))


def test_an_unknown_op_is_an_error_naming_it():
    with pytest.raises(InterpretError, match="`frobnicate`"):
        run_add(VECTOR_ADD.replace("%s = addf %xv, %yv", "%s = frobnicate %xv, %yv"))


def test_an_unknown_attribute_is_an_error():
    with pytest.raises(InterpretError, match="predicate"):
        run_add(VECTOR_ADD.replace("cmpi less_than ", "cmpi roughly "))


LOOP_REDUCE = """entry @k(%x: tile<ptr<f32>>, %o: tile<ptr<f32>>) {
  %t0 = make_token : token
  %tv = make_tensor_view %x, shape = [12, 4], strides = [4, 1] : tile<i32> -> tensor_view<12x4xf32, strides=[4,1]>
  %pv = make_partition_view %tv : partition_view<tile=(8x4), padding_value = neg_inf, tensor_view<12x4xf32, strides=[4,1]>>
  %c0 = constant <i32: 0> : tile<i32>
  %c1 = constant <i32: 1> : tile<i32>
  %c2 = constant <i32: 2> : tile<i32>
  %init = constant <f32: 0xFF800000> : tile<4xf32>
  %for:2 = for %i in (%c0 to %c2, step %c1) : tile<i32> iter_values(%acc = %init, %t = %t0) -> (tile<4xf32>, token) {
    %tile, %tk = load_view_tko weak %pv[%i, %c0] token = %t0 : partition_view<tile=(8x4), padding_value = neg_inf, tensor_view<12x4xf32, strides=[4,1]>>, tile<i32> -> tile<8x4xf32>, token
    %m = reduce %tile dim=0 identities=[0xFF800000 : f32] : tile<8x4xf32> -> tile<4xf32>
    (%lhs: tile<f32>, %rhs: tile<f32>) {
      %mx = maxf %lhs, %rhs : tile<f32>
      yield %mx : tile<f32>
    }
    %n = maxf %acc, %m : tile<4xf32>
    continue %n, %t : tile<4xf32>, token
  }
  %cs = scan %for#0 dim=0 reverse=false identities=[0.000000e+00 : f32] : tile<4xf32> -> tile<4xf32>
  (%a: tile<f32>, %b: tile<f32>) {
    %s = addf %a, %b : tile<f32>
    yield %s : tile<f32>
  }
  %ov = make_tensor_view %o, shape = [4], strides = [1] : tile<i32> -> tensor_view<4xf32, strides=[1]>
  %op = make_partition_view %ov : partition_view<tile=(4), tensor_view<4xf32, strides=[1]>>
  %st = store_view_tko weak %cs, %op[%c0] token = %t0 : tile<4xf32>, partition_view<tile=(4), tensor_view<4xf32, strides=[1]>>, tile<i32> -> token
  return
}
"""


def test_views_padding_loops_reductions_and_scans():
    """Column maxima over a 12x4 view in two 8-row tiles (the second padded with -inf), carried through a
    `for`, then a running sum; a wrong padding (zero) changes the result where every value is negative."""
    x = -np.abs(np.random.default_rng(2).standard_normal((12, 4)).astype(np.float32)) - 1

    def run(text):
        mem = Memory()
        args = [np.array(mem.add("x", x)), np.array(mem.add("o", np.zeros(4, np.float32)))]
        Machine(mem, (1, 1, 1)).run(parse_entry(text), args)
        return mem.buffers[1].data
    assert np.allclose(run(LOOP_REDUCE), np.cumsum(x.max(axis=0)))
    assert not np.allclose(run(LOOP_REDUCE.replace("padding_value = neg_inf", "padding_value = zero")),
                           np.cumsum(x.max(axis=0)))


def test_atomics_run_in_block_order():
    """Each of 3 blocks exchanges its id into one slot and stores the value it saw: blocks run in x order, so
    block b sees b - 1 (block 0 sees the initial value)."""
    text = """entry @k(%p: tile<ptr<i32>>, %q: tile<ptr<i32>>) {
  %t0 = make_token : token
  %b:3 = get_tile_block_id : tile<i32>
  %r = reshape %p : tile<ptr<i32>> -> tile<1xptr<i32>>
  %v = reshape %b#0 : tile<i32> -> tile<1xi32>
  %old, %t1 = atomic_rmw_tko acq_rel device %r, xchg, %v token=%t0 : tile<1xptr<i32>>, tile<1xi32> -> tile<1xi32>, token
  %qr = reshape %q : tile<ptr<i32>> -> tile<1xptr<i32>>
  %qo = offset %qr, %v : tile<1xptr<i32>>, tile<1xi32> -> tile<1xptr<i32>>
  %t2 = store_ptr_tko weak %qo, %old token=%t0 : tile<1xptr<i32>>, tile<1xi32> -> token
  return
}
"""
    mem = Memory()
    args = [np.array(mem.add("p", np.array([-7], np.int32))), np.array(mem.add("q", np.zeros(3, np.int32)))]
    Machine(mem, (3, 1, 1)).run(parse_entry(text), args)
    assert mem.buffers[1].data.tolist() == [-7, 0, 1] and mem.buffers[0].data.tolist() == [2]


def test_view_reductions_add_each_in_bounds_lane():
    """`atomic_red_view_tko` (a Triton port's relaxed `tl.atomic_add` of a view tile, passes/views.py): 4 blocks
    add 1 + block id into tile (block % 2) of a 10-element view in tiles of 8: every element of the first tile
    gets 1 + 3 (blocks 0 and 2), of the second 2 + 4; the lanes past the view's end are dropped (the array's
    guard elements keep their value). A wrong mode (`addf` read as exchange) would leave one block's value."""
    text = """entry @k(%p: tile<ptr<f32>>) {
  %t0 = make_token : token
  %b:3 = get_tile_block_id : tile<i32>
  %c2 = constant <i32: 2> : tile<i32>
  %i = remi %b#0, %c2 signed : tile<i32>
  %c1 = constant <i32: 1> : tile<i32>
  %s = addi %b#0, %c1 : tile<i32>
  %f = itof %s signed : tile<i32> -> tile<f32>
  %fr = reshape %f : tile<f32> -> tile<1xf32>
  %v = broadcast %fr : tile<1xf32> -> tile<8xf32>
  %tv = make_tensor_view %p, shape = [10], strides = [1] : tile<i32> -> tensor_view<10xf32, strides=[1]>
  %pv = make_partition_view %tv : partition_view<tile=(8), tensor_view<10xf32, strides=[1]>>
  %t1 = atomic_red_view_tko relaxed device %pv[%i], addf, %v token = %t0 : tile<8xf32>, partition_view<tile=(8), tensor_view<10xf32, strides=[1]>>, tile<i32> -> token
  return
}
"""
    mem = Memory()
    data = np.zeros(16, np.float32)
    data[10:] = -1.0  # past the view: untouched
    args = [np.array(mem.add("p", data))]
    Machine(mem, (4, 1, 1)).run(parse_entry(text), args)
    assert mem.buffers[0].data.tolist() == [4.0] * 8 + [6.0] * 2 + [-1.0] * 6


INT8_MMA = """entry @k(%a: tile<ptr<i8>>, %b: tile<ptr<i8>>, %o: tile<ptr<i32>>) {
  %t0 = make_token : token
  %c0 = constant <i32: 0> : tile<i32>
  %av = make_tensor_view %a, shape = [4, 64], strides = [64, 1] : tile<i32> -> tensor_view<4x64xi8, strides=[64,1]>
  %ap = make_partition_view %av : partition_view<tile=(4x64), tensor_view<4x64xi8, strides=[64,1]>>
  %bv = make_tensor_view %b, shape = [64, 4], strides = [4, 1] : tile<i32> -> tensor_view<64x4xi8, strides=[4,1]>
  %bp = make_partition_view %bv : partition_view<tile=(64x4), tensor_view<64x4xi8, strides=[4,1]>>
  %x, %t1 = load_view_tko weak %ap[%c0, %c0] token = %t0 : partition_view<tile=(4x64), tensor_view<4x64xi8, strides=[64,1]>>, tile<i32> -> tile<4x64xi8>, token
  %y, %t2 = load_view_tko weak %bp[%c0, %c0] token = %t0 : partition_view<tile=(64x4), tensor_view<64x4xi8, strides=[4,1]>>, tile<i32> -> tile<64x4xi8>, token
  %acc = constant <i32: 7> : tile<4x4xi32>
  %r = mmai %x, %y, %acc signed signed : tile<4x64xi8>, tile<64x4xi8>, tile<4x4xi32>
  %ov = make_tensor_view %o, shape = [4, 4], strides = [4, 1] : tile<i32> -> tensor_view<4x4xi32, strides=[4,1]>
  %op = make_partition_view %ov : partition_view<tile=(4x4), tensor_view<4x4xi32, strides=[4,1]>>
  %st = store_view_tko weak %r, %op[%c0, %c0] token = %t0 : tile<4x4xi32>, partition_view<tile=(4x4), tensor_view<4x4xi32, strides=[4,1]>>, tile<i32> -> token
  return
}
"""


def test_int8_mma_accumulates_exactly_in_int32():
    """mmai of int8 operands (Triton's int8 `tl.dot`): products summed onto the int32 accumulator exactly (a row
    and a column of -128: 64 * 2^14); `unsigned` reads an operand's bytes as uint8."""
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (4, 64)).astype(np.int8)
    b = rng.integers(-128, 128, (64, 4)).astype(np.int8)
    a[0, :], b[:, 0] = -128, -128

    def run(text):
        mem = Memory()
        args = [np.array(mem.add(n, v)) for n, v in (("a", a), ("b", b), ("o", np.zeros((4, 4), np.int32)))]
        Machine(mem, (1, 1, 1)).run(parse_entry(text), args)
        return mem.buffers[2].data.reshape(4, 4)
    want = a.astype(np.int64) @ b.astype(np.int64) + 7
    assert want[0, 0] == 64 * 128 * 128 + 7
    assert np.array_equal(run(INT8_MMA), want)
    unsigned = a.view(np.uint8).astype(np.int64) @ b.astype(np.int64) + 7
    assert np.array_equal(run(INT8_MMA.replace("signed signed", "unsigned signed")), unsigned)


def test_mulhii_is_the_unsigned_high_product():
    """Tile IR's mulhii has no signedness: tileiras lowers it to an unsigned multiply-high (Triton's
    `tl.umulhi`, Philox's rounds). i32 operands with the top bit set are read as unsigned; i64 ones too."""
    text = """entry @k(%p: tile<ptr<i32>>, %q: tile<ptr<i64>>) {
  %t0 = make_token : token
  %i = iota : tile<4xi32>
  %pr = reshape %p : tile<ptr<i32>> -> tile<1xptr<i32>>
  %pb = broadcast %pr : tile<1xptr<i32>> -> tile<4xptr<i32>>
  %pp = offset %pb, %i : tile<4xptr<i32>>, tile<4xi32> -> tile<4xptr<i32>>
  %x, %t1 = load_ptr_tko weak %pp token=%t0 : tile<4xptr<i32>> -> tile<4xi32>, token
  %c = constant <i32: -845247145> : tile<4xi32>
  %h = mulhii %x, %c : tile<4xi32>
  %t2 = store_ptr_tko weak %pp, %h token=%t1 : tile<4xptr<i32>>, tile<4xi32> -> token
  %qr = reshape %q : tile<ptr<i64>> -> tile<1xptr<i64>>
  %qb = broadcast %qr : tile<1xptr<i64>> -> tile<4xptr<i64>>
  %qp = offset %qb, %i : tile<4xptr<i64>>, tile<4xi32> -> tile<4xptr<i64>>
  %y, %t3 = load_ptr_tko weak %qp token=%t0 : tile<4xptr<i64>> -> tile<4xi64>, token
  %g = mulhii %y, %y : tile<4xi64>
  %t4 = store_ptr_tko weak %qp, %g token=%t3 : tile<4xptr<i64>>, tile<4xi64> -> token
  return
}
"""
    x = np.array([-1, 1 << 31 - 1, -(1 << 31), 123456789], np.int32)
    y = np.array([-1, 3, -(1 << 63), 1 << 40], np.int64)
    mem = Memory()
    args = [np.array(mem.add("p", x.copy())), np.array(mem.add("q", y.copy()))]
    Machine(mem, (1, 1, 1)).run(parse_entry(text), args)
    want32 = [(int(v) % 2**32 * 0xCD9E8D57) >> 32 for v in x]
    want64 = [(int(v) % 2**64) ** 2 >> 64 for v in y]
    assert mem.buffers[0].data.view(np.uint32).tolist() == want32
    assert mem.buffers[1].data.view(np.uint64).tolist() == want64


def test_tf32_rounding_keeps_ten_mantissa_bits():
    x = np.array([1 + 2 ** -10, 1 + 2 ** -11 + 2 ** -20, 1 + 2 ** -12, -3.0], np.float32)
    assert round_tf32(x).tolist() == [1 + 2 ** -10, 1 + 2 ** -10, 1.0, -3.0]


# ------------------------------------------------------------------------------------------ the corpus

# value-changing edits of generated ports (kernel, mutation operator, site): an operator swapped, a mask off by
# one, a mask dropped, a block id on the wrong axis, a constant pinned (a stride/extent fixed)
MUTANTS = [("add_kernel", "binop", 0), ("softmax_kernel", "enum_predicate", 0), ("layer_norm_fwd_kernel", "mask_drop", 0),
           ("matmul_kernel", "block_id_axis", 0), ("rms_norm_fwd_kernel", "fn_swap", 0), ("embedding_kernel", "enum_predicate", 0),
           ("transpose_kernel", "mask_drop", 0)]


@requires_toolchain
def test_value_changing_edits_of_ports_are_caught(triton_out, tmp_path):
    import shutil
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    import interpret_mutants as tool
    from transpiler.verify import mutants as M
    src, _ = triton_out
    out = tmp_path / "rust"
    shutil.copytree(src, out)
    shutil.copytree(src.parent / "corpus", tmp_path / "corpus")  # the sources, for the heuristics
    pool = M.generate(out, sorted({k for k, _, _ in MUTANTS}))
    chosen = []
    for kernel, op, n in MUTANTS:
        sites = [mu for mu in pool if mu.kernel == kernel and mu.op == op and mu.cls == "value"]
        assert sites, (kernel, op)
        chosen.append(sites[n])
    results = tool.run_rounds(out, chosen, log=lambda *_: None)
    missed = [f"{r['outcome']}: {r['edit']}" for r in results if r["outcome"] != "killed"]
    assert not missed, "\n".join(missed)


def _mutants_tool():
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    import interpret_mutants as tool
    return tool


def test_mutant_campaign_sees_the_arms_of_lower_case_constants():
    """The hidden unit-stride flags (`stride_cn_IS_1`) are lower case: an edit in their `== 0` arm is run only
    by a case with a non-unit stride (it was counted as run, and survived, when no case had one)."""
    from transpiler.verify import mutants as M
    tool = _mutants_tool()
    text = ("#[cutile::entry()]\n    pub unsafe fn k(\n        x: i32,\n    ) {\n"
            "        if stride_cn_IS_1 == 1i32 {\n            a();\n        } else {\n            b();\n        }\n"
            "    }\n")
    site = text.index("b();")
    mu = M.Mutant("k:x:0", "src/k.rs", "k", "k", "delete_store_ptr", "value", site, site + 4, "b();", "", "", 8)
    assert [c for c, _, _ in tool.const_ifs(text, *M.entries_of(text)["k"])] == [("stride_cn_IS_1", "==", 1)]
    assert not tool.runs_at_some_case(mu, text, [{"stride_cn_IS_1": 1}])
    assert tool.runs_at_some_case(mu, text, [{"stride_cn_IS_1": 1}, {"stride_cn_IS_1": 0}])


def test_mutant_campaign_leaves_equivalent_mutants_out_of_the_rate():
    tool = _mutants_tool()
    rs = [{"outcome": o, "family": "operator swap", "kernel": "k"} for o in
          ["killed"] * 8 + ["rejected", "survived", "equivalent", "unexercised", "ordering_only"]]
    fig = tool.figures(rs)
    assert (fig["caught"], fig["exercised"]) == (9, 10)
    assert fig["catch_rate"] == 0.9 and abs(fig["catch_rate_with_equivalent"] - 9 / 11) < 1e-12


def test_reviewed_equivalent_mutants_are_still_generated(triton_out):
    """Each reviewed equivalent edit names a mutant the translated corpus still has, with the same text: a
    retranslation that moves it away makes the entry stale (it no longer applies, and the mutant would be
    counted as a survivor again), so the list is re-reviewed."""
    from transpiler.verify import mutants as M
    tool = _mutants_tool()
    out, _ = triton_out
    kernels = {mid.split("__")[0].split(":")[0] for mid in tool.REVIEWED_EQUIVALENT}
    pool = {mu.id: mu for mu in M.generate(out, sorted(kernels)) if mu.cls == "value"}
    for mid, (old, new, _) in tool.REVIEWED_EQUIVALENT.items():
        assert mid in pool and (pool[mid].old, pool[mid].new) == (old, new), mid


def test_references_only_for_the_source_they_were_recorded_from(tmp_path):
    """A user's kernel that shares a corpus kernel's module stem and name is not compared with the corpus'
    numbers; the corpus source itself (same bytes, anywhere) is."""
    from transpiler.verify.interpret.driver import references_for
    root = Path(__file__).resolve().parents[1]
    (tmp_path / "softmax.py").write_bytes((root / "corpus/triton/workloads/softmax.py").read_bytes())
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "softmax.py").write_text("# a user's own softmax\n")
    kernel = {"name": "softmax_kernel", "frontend": "triton"}
    out = tmp_path / "out"
    out.mkdir()
    assert len(references_for(out, {"source": "../softmax.py"}, kernel, None)) == 4
    assert references_for(out, {"source": "../other/softmax.py"}, kernel, None) == []


# out[i] = (*table[g])[i] for the 4 lanes, g the block: a pointer loaded from a table of addresses (int_to_ptr),
# and a float buffer read as int32 words through ptr_to_ptr (the same bytes)
POINTER_TABLE = """entry @gather_rows(%t: tile<ptr<i64>>, %o: tile<ptr<f32>>, %w: tile<ptr<i32>>) {
  %b:3 = get_tile_block_id : tile<i32>
  %tp = offset %t, %b#0 : tile<ptr<i64>>, tile<i32> -> tile<ptr<i64>>
  %a, %t1 = load_ptr_tko weak %tp : tile<ptr<i64>> -> tile<i64>, token
  %p = int_to_ptr %a : tile<i64> -> tile<ptr<f32>>
  %pr = reshape %p : tile<ptr<f32>> -> tile<1xptr<f32>>
  %pb = broadcast %pr : tile<1xptr<f32>> -> tile<4xptr<f32>>
  %i = iota : tile<4xi32>
  %pp = offset %pb, %i : tile<4xptr<f32>>, tile<4xi32> -> tile<4xptr<f32>>
  %v, %t2 = load_ptr_tko weak %pp : tile<4xptr<f32>> -> tile<4xf32>, token
  %c4 = constant <i32: 4> : tile<i32>
  %base = muli %b#0, %c4 : tile<i32>
  %r = reshape %base : tile<i32> -> tile<1xi32>
  %bb = broadcast %r : tile<1xi32> -> tile<4xi32>
  %offs = addi %bb, %i : tile<4xi32>
  %or = reshape %o : tile<ptr<f32>> -> tile<1xptr<f32>>
  %ob = broadcast %or : tile<1xptr<f32>> -> tile<4xptr<f32>>
  %op = offset %ob, %offs : tile<4xptr<f32>>, tile<4xi32> -> tile<4xptr<f32>>
  %t3 = store_ptr_tko weak %op, %v : tile<4xptr<f32>>, tile<4xf32> -> token
  %wf = ptr_to_ptr %o : tile<ptr<f32>> -> tile<ptr<i32>>
  %wr = reshape %wf : tile<ptr<i32>> -> tile<1xptr<i32>>
  %wb = broadcast %wr : tile<1xptr<i32>> -> tile<4xptr<i32>>
  %wp = offset %wb, %offs : tile<4xptr<i32>>, tile<4xi32> -> tile<4xptr<i32>>
  %words, %t4 = load_ptr_tko weak %wp : tile<4xptr<i32>> -> tile<4xi32>, token
  %xr = reshape %w : tile<ptr<i32>> -> tile<1xptr<i32>>
  %xb = broadcast %xr : tile<1xptr<i32>> -> tile<4xptr<i32>>
  %xp = offset %xb, %offs : tile<4xptr<i32>>, tile<4xi32> -> tile<4xptr<i32>>
  %t5 = store_ptr_tko weak %xp, %words : tile<4xptr<i32>>, tile<4xi32> -> token
  return
}
"""


def _run_table(bad_row: int | None = None):
    rng = np.random.default_rng(3)
    rows = [rng.standard_normal(4 + i).astype(np.float32) for i in range(3)]
    mem = Memory()
    bases = [mem.add(f"x{i}", r) for i, r in enumerate(rows)]
    out, words = np.full(12, np.nan, np.float32), np.zeros(12, np.int32)
    o, w = mem.add("out", out), mem.add("words", words)
    table = np.array(bases, np.int64)
    if bad_row is not None:
        table[bad_row] = 12345  # an address in no array the case passes
    t = mem.add("table", table)
    Machine(mem, (3, 1, 1)).run(parse_entry(POINTER_TABLE), [np.array(t), np.array(o), np.array(w)])
    return rows, mem.buffers[3].data, mem.buffers[4].data


def test_pointers_loaded_from_a_table_of_addresses_and_cast_pointers():
    """A hand-computed reference: each block reads the row whose address its table entry holds; the output read
    back through a ptr_to_ptr cast to i32 gives the float bits."""
    rows, out, words = _run_table()
    want = np.concatenate([r[:4] for r in rows])
    assert np.array_equal(out, want)
    assert np.array_equal(words, want.view(np.int32))


def test_a_loaded_address_in_no_array_is_not_modelled():
    from transpiler.verify.interpret.cases import _unmodelled
    with pytest.raises(InterpretError, match="lies in no array") as e:
        _run_table(bad_row=1)
    assert _unmodelled(str(e.value))
