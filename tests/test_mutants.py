"""Mutants of the generated Rust must be reported `different` (the check can fail), and
`cutile-transpile verify OUT` catches hand edits without regenerating."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass

import pytest

from conftest import requires_toolchain

pytestmark = requires_toolchain

# (file, original text, mutated text, kernel that must become `different`)
MUTANTS = [
    ("src/vector_add/kernel.rs", "= x + y;", "= x - y;", "vector_add"),  # swap an arithmetic op
    ("src/softmax/kernel.rs", "padding::NegInf", "padding::Zero", "row_softmax"),  # change a padding mode
    ("src/matmul/kernel.rs", "acc = mmaf(a, b, acc);", "acc = acc;", "matmul"),  # drop the mmaf
    # change tile shapes: BN and BK swap places in the generic list (64x64x32 becomes 64x32x64)
    ("src/batched_matmul/kernel.rs", "const BN: i32, const BK: i32>", "const BK: i32, const BN: i32>",
     "batched_matmul"),
]


# Mutants that change one entry of a kernel (the kernel's other entries stay equivalent) and name the op that
# must show in the diff: (file, original text, mutated text, kernel, op in the diff)
ENTRY_MUTANTS = [
    # N5: a false fact on the block id (every block claims to be block 0)
    ("src/geglu/kernel.rs", "let pm: i32 = get_tile_block_id().0;\n",
     "let pm: i32 = get_tile_block_id().0;\n        let pm: i32 = unsafe { assume_bounds::<_, 0, 0>(pm) };\n",
     "geglu_fwd_kernel", "assume bounded<0, 0>"),
    # N5: a divisibility fact that is false for ragged lengths (causal entry only)
    ("src/flash_attention/kernel.rs", "let seq_kv: i32 = k_shape[2];\n",
     "let seq_kv: i32 = k_shape[2];\n        let seq_kv: i32 = unsafe { assume_div_by::<_, 64>(seq_kv) };\n",
     "flash_attn_fwd_kernel", "assume div_by<64>"),
    # N7: effects that are not loads or stores are still effects (compared in order, never erased)
    ("src/rope/kernel.rs", "let hb: i32 = get_tile_block_id().1;\n",
     "let hb: i32 = get_tile_block_id().1;\n        let _g: Token = unsafe { gdc_launch_dependents_tko(None) };\n",
     "rope_halves_kernel", "gdc_launch_dependents"),
    ("src/swiglu/kernel.rs", "let pn: i32 = get_tile_block_id().1;\n",
     "let pn: i32 = get_tile_block_id().1;\n        let _f: Token = unsafe { memory_fence_alias_tko(gate.token()) };\n",
     "swiglu_fwd_kernel", "memory_fence"),
    # an extra atomic write into the INPUT log_pred
    ("src/kl_div/kernel.rs", "            let lp: Tile<f32, { [1, BV] }> = convert_tile(lp);\n",
     "            let _pr: Partition<E, { [1, BV] }> = unsafe {\n"
     "                make_partition_view(log_pred, shape![1, BV], padding::None, dim_map::Identity, log_pred.token())\n"
     "            };\n"
     "            let _t: Token = unsafe {\n"
     "                atomic_red_view_raw(&_pr, lp, [row, j], atomic::AddF, ordering::Relaxed, scope::Device, None)\n"
     "            };\n            let lp: Tile<f32, { [1, BV] }> = convert_tile(lp);\n",
     "kl_div_kernel", "atomic_red"),
]


# A generic (or flag) replaced by the value of the kernel's launch specialization: every launch
# specialization stays equivalent, and only the coverage probe of that constant (a second value,
# specs.coverage_probes) tells it apart. (file, original, mutated, occurrence, kernel, entry, constant)
SPEC_MUTANTS = [
    ("src/dropout/kernel.rs", "broadcast_scalar(pid * BLOCK, shape![BLOCK])", "broadcast_scalar(pid * 1024i32, shape![BLOCK])", 1,
     "dropout_kernel", "dropout_kernel", "BLOCK"),
    ("src/gelu/kernel.rs", "if HAS_BIAS == 1i32 {", "if HAS_BIAS > -1i32 {", 1,
     "bias_gelu_kernel", "bias_gelu_kernel", "HAS_BIAS"),  # the bias added even when HAS_BIAS=0
    ("src/cross_entropy/kernel.rs", "let row_loss_a: bool = label == IGNORE_INDEX;", "let row_loss_a: bool = label == -100i32;",
     1, "cross_entropy_fwd_kernel", "cross_entropy_fwd_kernel", "IGNORE_INDEX"),
    # the not-causal entry's only specialization has QUERY_GROUP=4 (the causal entry keeps its generic)
    ("src/flash_attention/kernel.rs", "py_floordiv_i32(head, QUERY_GROUP);", "py_floordiv_i32(head, 4i32);", 2,
     "flash_attn_fwd_kernel", "flash_attn_fwd_kernel__not_causal", "QUERY_GROUP"),
]


# A mutation campaign over the host layer (issue 36): hand-written edits of the generated `ffi.rs` and Python
# wrappers that change what a launch runs while every kernel's Tile IR stays the same. Each mutates another kernel
# (none of the lists above); verify's host-layer check (verify/glue.py: the C symbol in dry-run mode and the
# wrapper's route, at every verified specialization and dtype) must make each `different`, and
# test_untouched_kernels_stay_equivalent / test_no_other_kernel_is_reported see that it reports no other. The
# manifest's mutants are in tests/test_manifest_trust.py; an `abi.rs` edit touches every kernel (tests/test_abi.py).
@dataclass(frozen=True)
class HostMutant:
    kernel: str
    path: str  # relative to OUT
    anchor: str  # the edits apply after the first occurrence of this text (the kernel's own code)
    edits: tuple[tuple[str, str], ...]  # (old, new): each old is replaced once, the first after the previous one
    what: str


def _ffi(op: str, kernel: str, old: str, new: str, what: str, fn: str = "") -> HostMutant:
    return HostMutant(kernel, f"src/{op}/ffi.rs", fn or f"fn cutile_{kernel}(", ((old, new),), what)


def _wrapper(op: str, kernel: str, edits: tuple, what: str) -> HostMutant:
    return HostMutant(kernel, f"python/cutile_ports/{op}.py", f"SPEC_{kernel} = ", edits, what)


HOST_MUTANTS = (
    _ffi("batched_gemm", "bmm_tn_kernel", "BM.to_string(),", "BN.to_string(),", "BN passed for BM"),
    _ffi("batched_gemm", "bmm_nt_kernel", "BK.to_string(),", "(BK / 2).to_string(),", "the K tile halved"),
    _ffi("decode_attention", "decode_attn_split_kv_kernel", "[1i64, GROUP, 1i64]", "[1i64, GROUP / 2, 1i64]",
         "an output partition half as tall"),
    _ffi("grouped_gemm", "moe_grouped_gemm_kernel", 'abi::tile_shape([BM, BN], "C")', 'abi::tile_shape([BN, BM], "C")',
         "an output partition transposed"),
    _ffi("gemm", "gemm_kernel", "BK.to_string(),", "(BK * 2).to_string(),", "the K tile doubled"),
    _ffi("gelu", "gelu_tanh_kernel", "launch_gelu_tanh_kernel::<f32, f32>(",
         "launch_gelu_tanh_kernel::<cutile::half::bf16, f32>(", "f32 arrays launched as bf16"),
    _ffi("mla_decode", "mla_decode_kernel", 'abi::Param::F32("sm_scale", sm_scale)',
         'abi::Param::F32("sm_scale", -sm_scale)', "a float scalar negated on its way to the entry",
         fn="fn launch_mla_decode_kernel"),
    _ffi("moe_permute", "moe_permute_rows_kernel", "BLOCK_M.to_string(), BLOCK_D.to_string()",
         "BLOCK_D.to_string(), BLOCK_M.to_string()", "two generics in swapped order"),
    _ffi("persistent_gemm", "persistent_gemm_kernel", "GROUP_M.to_string()", "(GROUP_M + 1).to_string()",
         "the group size off by one"),
    _ffi("swiglu", "swiglu_bwd_kernel", 'abi::tile_shape([BM, BN], "dup")', 'abi::tile_shape([BM, BN / 2], "dup")',
         "one of two outputs' partition halved"),
    _ffi("workloads_rms_norm", "rms_norm_fwd_kernel", "HAS_RESIDUAL.to_string()", "(1 - HAS_RESIDUAL).to_string()",
         "a flag negated"),
    _ffi("moe_align", "moe_expert_histogram_kernel", "BLOCK.to_string()", "(BLOCK * 2).to_string()",
         "the block doubled"),
    _ffi("moe_align", "moe_align_offsets_kernel", "BLOCK_M.to_string()]", "(BLOCK_M * 2).to_string()]",
         "the row block doubled"),
    _ffi("moe_align", "moe_sort_tokens_kernel", "TOPK.to_string()", "(TOPK + 1).to_string()", "top-k off by one"),
    _ffi("split_k_gemm", "splitk_gemm_partial_kernel", 'abi::Param::I32("k_tiles_per_split", k_tiles_per_split)',
         'abi::Param::I32("k_tiles_per_split", k_tiles_per_split + 1)', "an integer scalar off by one",
         fn="fn launch_splitk_gemm_partial_kernel"),
    _ffi("split_k_gemm", "splitk_reduce_kernel", "grid: __grid,", "grid: (__grid.1, __grid.0, __grid.2),",
         "grid axes swapped", fn="fn launch_splitk_reduce_kernel"),
    _ffi("workloads_layer_norm", "layer_norm_fwd_kernel", 'abi::Param::F32("eps", eps)',
         'abi::Param::F32("eps", eps * 2.0)', "eps doubled", fn="fn launch_layer_norm_fwd_kernel"),
    _ffi("workloads_softmax", "online_softmax_kernel", "BN.to_string()", "(BN / 2).to_string()", "the row tile halved"),
    _wrapper("attention_sinks", "attn_sinks_fwd_kernel",
             (("CAUSAL: (not (CAUSAL)) and (WINDOW > 0)),", "CAUSAL: (not (CAUSAL)) and (not (WINDOW > 0))),"),
              ("CAUSAL: (not (CAUSAL)) and (not (WINDOW > 0))),", "CAUSAL: (not (CAUSAL)) and (WINDOW > 0)),")),
             "the wrapper's predicates of two entries swapped (the windowed entry for WINDOW = 0)"),
    _wrapper("dropout", "dropout_add_residual_kernel",
             (("(x, residual, out, p, seed, BM, BN)", "(x, residual, out, p, seed, BN, BM)"),),
             "the wrapper passes two constants in swapped order"),
    _wrapper("cross_entropy", "cross_entropy_bwd_kernel",
             (("(logits, labels, lse, dloss, dlogits,", "(logits, labels, dloss, lse, dlogits,"),),
             "the wrapper passes two arrays in swapped order"),
    _wrapper("decode_attention", "decode_attn_combine_kernel",
             (("(O_part, lse_part, O, NUM_SPLITS, D)", "(O_part, lse_part, O, D, NUM_SPLITS)"),),
             "the wrapper passes two constants in swapped order"),
    _wrapper("geglu", "geglu_bwd_kernel", (("dgate_up, BM, BN)", "dgate_up, BM * 2, BN)"),),
             "the wrapper doubles a constant"),
    _wrapper("workloads_layer_norm", "layer_norm_bwd_dx_kernel",
             (("(x, dy, w, mean, rstd, dx,", "(x, dy, w, rstd, mean, dx,"),), "two arrays in swapped order"),
    _wrapper("workloads_layer_norm", "layer_norm_bwd_dwdb_kernel",
             (("(dw_partial, db_partial, dw, db, BM, BN)", "(db_partial, dw_partial, dw, db, BM, BN)"),),
             "two arrays in swapped order"),
    _wrapper("workloads_rms_norm", "rms_norm_bwd_kernel",
             (("(x, dy, w, rstd, dx, dw_partial, BM, BN)", "(x, dy, w, rstd, dx, dw_partial, BN, BM)"),),
             "two constants in swapped order"),
    _wrapper("workloads_softmax", "softmax_kernel", (("(x, y, BM, BN)", "(x, y, BM, BN * 2)"),),
             "the wrapper doubles a constant"),
)


def _apply_host(out, m: HostMutant) -> None:
    path = out / m.path
    text = path.read_text()
    at, spans = text.index(m.anchor), []
    for old, new in m.edits:  # found in the original text, in order (an edit never meets an earlier one's result)
        at = text.index(old, at)
        spans.append((at, old, new))
        at += len(old)
    for i, old, new in reversed(spans):
        text = text[:i] + new + text[i + len(old):]
    path.write_text(text)

def _replace_nth(text: str, old: str, new: str, nth: int) -> str:
    at = -1
    for _ in range(nth):
        at = text.index(old, at + 1)
    return text[:at] + new + text[at + len(old):]

def _copy(corpus_out, dst):
    """OUT copied with the corpus beside it, as conftest's corpus_out lays them out: the manifest and the
    generated Python package name their sources relative to OUT (../corpus/...), so both stay reachable."""
    shutil.copytree(corpus_out, dst)
    shutil.copytree(corpus_out.parent / "corpus", dst.parent / "corpus")
    return dst


@pytest.fixture(scope="module")
def mutated(corpus_out, tmp_path_factory):
    out = _copy(corpus_out, tmp_path_factory.mktemp("mutants") / "rust")
    for rel, old, new, *_ in MUTANTS + ENTRY_MUTANTS:
        p = out / rel
        text = p.read_text()
        assert old in text, (rel, old)
        p.write_text(text.replace(old, new, 1))
    for rel, old, new, nth, *_ in SPEC_MUTANTS:
        p = out / rel
        p.write_text(_replace_nth(p.read_text(), old, new, nth))
    for m in HOST_MUTANTS:
        _apply_host(out, m)
    return out


@pytest.fixture(scope="module")
def mutant_verdicts(mutated):
    from transpiler.verify.run import verify_output
    return {v.kernel: v for v in verify_output(mutated)}


# first in this file: the corpus crate is then the build other files left (cargo's no-op build), not the one
# of the mutated copy below, which has the crate's name (the build lock cleans it: a full build again)
def test_verify_command_passes_on_fresh_output(corpus_out):
    res = subprocess.run([sys.executable, "-m", "transpiler.cli", "verify", str(corpus_out), "--kernel", "scaled_add",
                          "--format", "json"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert [k["verify"] for k in doc["kernels"]] == ["equivalent"]


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m[3] for m in MUTANTS])
def test_mutant_is_different(mutant_verdicts, mutant):
    v = mutant_verdicts[mutant[3]]
    assert v.verdict == "different", v.reason
    # every launch specialization; a coverage probe may make a mutant equivalent (BN and BK swapped at BN = BK)
    assert all(c.verdict == "different" for c in v.checks if c.probe is None), \
        [(c.spec, c.dtype, c.verdict) for c in v.checks]
    assert any("-" in c.detail and "+" in c.detail for c in v.checks)


@pytest.mark.parametrize("mutant", ENTRY_MUTANTS, ids=[m[4] for m in ENTRY_MUTANTS])
def test_entry_mutant_is_different(mutant_verdicts, mutant):
    v = mutant_verdicts[mutant[3]]
    assert v.verdict == "different", v.reason
    assert any(c.verdict == "different" and mutant[4] in c.detail for c in v.checks), \
        [(c.spec, c.dtype, c.verdict, c.detail[:2000]) for c in v.checks]


@pytest.mark.parametrize("mutant", SPEC_MUTANTS, ids=[m[6] for m in SPEC_MUTANTS])
def test_hard_coded_generic_is_different(mutant_verdicts, mutant):
    """Only the probe of the constant differs: without coverage probes the mutant would verify."""
    *_, kernel, entry, const = mutant
    v = mutant_verdicts[kernel]
    assert v.verdict == "different", v.reason
    mine = [c for c in v.checks if c.entry == entry]
    bad = [c for c in mine if c.verdict != "equivalent"]
    assert bad and all(c.verdict == "different" and c.probe == const for c in bad), \
        [(c.spec, c.dtype, c.probe, c.verdict) for c in mine]
    assert all(c.verdict == "equivalent" for c in mine if c.probe is None)

def _mutated_kernels() -> set[str]:
    return {m[3] for m in MUTANTS + ENTRY_MUTANTS} | {m[4] for m in SPEC_MUTANTS} | {m.kernel for m in HOST_MUTANTS}


def test_the_host_campaign_is_one_mutant_per_kernel_and_each_edit_applies(corpus_out):
    kernels = [m.kernel for m in HOST_MUTANTS]
    assert len(kernels) >= 20 and len(set(kernels)) == len(kernels)
    assert not set(kernels) & ({m[3] for m in MUTANTS + ENTRY_MUTANTS} | {m[4] for m in SPEC_MUTANTS})
    assert {m.path.split("/")[0] for m in HOST_MUTANTS} == {"src", "python"}  # the C ABI layer and the wrappers
    for m in HOST_MUTANTS:
        text = (corpus_out / m.path).read_text()
        at = text.index(m.anchor)
        for old, new in m.edits:
            assert old != new and old in text[at:], (m.kernel, old)


@pytest.mark.parametrize("mutant", HOST_MUTANTS, ids=[m.kernel for m in HOST_MUTANTS])
def test_host_mutant_is_different(mutant_verdicts, mutant):
    """Only the host layer differs: every Tile IR check stays equivalent, the verdict is `different`."""
    v = mutant_verdicts[mutant.kernel]
    assert v.verdict == "different" and "host layer" in v.reason, (mutant.what, v.verdict, v.reason)
    assert all(c.verdict == "equivalent" for c in v.checks), [(c.entry, c.dtype, c.verdict) for c in v.checks]


def test_no_other_kernel_is_reported(mutant_verdicts):
    """Every kernel that no mutant touches stays equivalent: the checks above fail for the mutants only."""
    others = {k: (v.verdict, v.reason[:300]) for k, v in mutant_verdicts.items()
              if k not in _mutated_kernels() and v.verdict != "equivalent"}
    assert not others, others
    assert len(mutant_verdicts) > len(_mutated_kernels())


def test_untouched_kernels_stay_equivalent(mutant_verdicts):
    for name in ("scaled_add", "gelu", "layer_norm_fwd", "partial_sum", "rms_norm_fwd"):
        v = mutant_verdicts[name]
        assert v.verdict == "equivalent", (name, v.reason, [(c.entry, c.dtype, c.verdict, c.detail[:400]) for c in v.checks if c.verdict != "equivalent"])
        # each constant verified at two values at least, unless cuTile Python rejects every other one
        for c in v.checks[0].spec:
            assert len(v.coverage()["values"][c]) >= 2 or any(u.startswith(c + " ") for u in v.unprobed), \
                (name, c, v.coverage())


def test_verify_command_catches_hand_edit(mutated):
    res = subprocess.run([sys.executable, "-m", "transpiler.cli", "verify", str(mutated), "--kernel", "vector_add"],
                         capture_output=True, text=True)
    assert res.returncode == 1, res.stderr
    assert "vector_add: different" in res.stderr
    assert "-  %v" in res.stderr and "+  %v" in res.stderr  # the diff is shown


# Text-level mutants of the normalizer rules: each pair computes different values and must stay different.
_CONV = """entry @k(%arg0: tile<ptr<{t}>>, %arg1: tile<i32>, %arg2: tile<i32>) {{
  %c = constant <{st}: {v}> : tile<{st}>
  %e = {conv} : tile<{st}> -> tile<{t}>
  %r = store_ptr_tko weak %arg0, %e : tile<ptr<{t}>>, tile<{t}> -> token
  return
}}
"""
NORMALIZER_MUTANTS = [
    # N8: zero- vs sign-extension of a constant (-1 -> 4294967295 vs -1)
    (("i64", "i32", "-1", "exti %c signed"), ("i64", "i32", "-1", "exti %c unsigned")),
    # N8: signedness of int -> float of a constant
    (("f32", "i32", "-1", "itof %c signed"), ("f32", "i32", "-1", "itof %c unsigned")),
    # N8: rounding<zero> of 0.99999994 to f16 is 0.99951, nearest-even is 1.0
    (("f16", "f32", "0.99999994", "ftof %c"), ("f16", "f32", "0.99999994", "ftof %c rounding<zero>")),
    # N18: a float constant's bits one ulp apart (1e-6 and its successor) stay different after the bitcast fold
    (("f32", "i32", "897988541", "bitcast %c"), ("f32", "i32", "897988542", "bitcast %c")),
]


@pytest.mark.parametrize("pair", NORMALIZER_MUTANTS, ids=[p[1][3] for p in NORMALIZER_MUTANTS])
def test_normalizer_mutant_is_different(pair):
    from transpiler.verify.normalize import normalize
    names = ["out.ptr", "out.shape0", "out.stride0"]
    a, b = (normalize(_CONV.format(t=t, st=st, v=v, conv=c), names)[0] for t, st, v, c in pair)
    assert a != b
