"""Mutants of the generated Rust must be reported `different` (the check can fail), and
`cutile-transpile verify OUT` catches hand edits without regenerating."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

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
    ("src/dropout/kernel.rs", "let offs_a: i32 = pid * BLOCK;", "let offs_a: i32 = pid * 1024i32;", 1,
     "dropout_kernel", "dropout_kernel", "BLOCK"),
    ("src/gelu/kernel.rs", "if HAS_BIAS == 1i32 {", "if HAS_BIAS > -1i32 {", 1,
     "bias_gelu_kernel", "bias_gelu_kernel", "HAS_BIAS"),  # the bias added even when HAS_BIAS=0
    ("src/cross_entropy/kernel.rs", "let row_loss_a: bool = label == IGNORE_INDEX;", "let row_loss_a: bool = label == -100i32;",
     1, "cross_entropy_fwd_kernel", "cross_entropy_fwd_kernel", "IGNORE_INDEX"),
    # the not-causal entry's only specialization has QUERY_GROUP=4 (the causal entry keeps its generic)
    ("src/flash_attention/kernel.rs", "py_floordiv_i32(head, QUERY_GROUP);", "py_floordiv_i32(head, 4i32);", 2,
     "flash_attn_fwd_kernel", "flash_attn_fwd_kernel__not_causal", "QUERY_GROUP"),
]


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
    return out


@pytest.fixture(scope="module")
def mutant_verdicts(mutated):
    from transpiler.verify.run import verify_output
    return {v.kernel: v for v in verify_output(mutated)}


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


def test_verify_command_passes_on_fresh_output(corpus_out):
    res = subprocess.run([sys.executable, "-m", "transpiler.cli", "verify", str(corpus_out), "--kernel", "scaled_add",
                          "--format", "json"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert [k["verify"] for k in doc["kernels"]] == ["equivalent"]


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
