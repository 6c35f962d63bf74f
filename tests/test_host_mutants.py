"""A mutation campaign over the host layer (issue 36): hand-written edits of the generated `ffi.rs` and Python
wrappers that change what a launch runs while the kernels' Tile IR stays the same. Each is applied to another
corpus kernel of one copy of the corpus port, the copy is built once, and `verify`'s host-layer check
(verify/glue.py: the C symbol in dry-run mode and the wrapper's route, at every verified specialization and
dtype) must report every mutated kernel and no other. The manifest's own mutants are in
tests/test_manifest_trust.py; a mutant of `abi.rs` touches every kernel, so it is left to tests/test_abi.py.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import requires_toolchain
from test_abi import built_library, import_source, load_package

pytestmark = requires_toolchain


@dataclass(frozen=True)
class HostMutant:
    kernel: str
    path: str  # relative to OUT
    anchor: str  # the edits apply after the first occurrence of this text (the kernel's own code)
    edits: tuple[tuple[str, str], ...]  # (old, new): each old is replaced once, the first after the previous one
    what: str


def _ffi(op: str, kernel: str, old: str, new: str, what: str, launch: bool = False) -> HostMutant:
    anchor = f"fn launch_{kernel}" if launch else f"fn cutile_{kernel}("
    return HostMutant(kernel, f"src/{op}/ffi.rs", anchor, ((old, new),), what)


def _wrapper(op: str, kernel: str, edits: tuple, what: str) -> HostMutant:
    return HostMutant(kernel, f"python/cutile_ports/{op}.py", f"SPEC_{kernel} = ", edits, what)


MUTANTS = (
    _ffi("vector_add", "vector_add", "TILE.to_string()", "(TILE * 2).to_string()", "a generic doubled"),
    _ffi("batched_gemm", "bmm_tn_kernel", "BM.to_string(),", "BN.to_string(),", "BN passed for BM"),
    _ffi("cross_entropy", "cross_entropy_fwd_kernel", "IGNORE_INDEX.to_string()", "(IGNORE_INDEX + 1).to_string()",
         "an integer constant off by one"),
    _ffi("decode_attention", "decode_attn_split_kv_kernel", "[1i64, GROUP, 1i64]", "[1i64, GROUP / 2, 1i64]",
         "an output partition half as tall"),
    _ffi("dropout", "dropout_kernel", 'abi::Param::F32("p", p)', 'abi::Param::F32("p", 1.0 - p)',
         "a scalar changed on its way to the entry", launch=True),
    HostMutant("flash_attn_fwd_kernel", "src/flash_attention/ffi.rs", "fn cutile_flash_attn_fwd_kernel(",
               (("0 if (CAUSAL != 0) => 0,", "0 if (CAUSAL != 0) => 1,"),
                ("1 if (!(CAUSAL != 0)) => 1,", "1 if (!(CAUSAL != 0)) => 0,")),
               "the not-causal entry launched for CAUSAL=1 and the causal one for CAUSAL=0"),
    _ffi("geglu", "geglu_fwd_kernel", "launch_geglu_fwd_kernel::<f32, f32>(",
         "launch_geglu_fwd_kernel::<cutile::half::bf16, f32>(", "f32 arrays launched as bf16"),
    _ffi("gelu", "bias_gelu_kernel", "HAS_BIAS.to_string()", "(1 - HAS_BIAS).to_string()", "a flag negated"),
    _ffi("grouped_gemm", "moe_grouped_gemm_kernel", 'abi::tile_shape([BM, BN], "C")', 'abi::tile_shape([BN, BM], "C")',
         "an output partition transposed"),
    _ffi("gemm", "gemm_kernel", "BK.to_string(),", "(BK * 2).to_string(),", "the K tile doubled"),
    _ffi("kl_div", "kl_div_kernel", "LOG_TARGET.to_string()", "0i64.to_string()", "a flag pinned to 0"),
    _ffi("layer_norm", "layer_norm_fwd", 'abi::Param::F32("eps", eps)', 'abi::Param::F32("eps", eps * 2.0)',
         "eps doubled", launch=True),
    _ffi("matmul", "matmul", "grid: __grid,", "grid: (__grid.1, __grid.0, __grid.2),", "grid axes swapped",
         launch=True),
    _ffi("mla_decode", "mla_decode_kernel", 'abi::Param::F32("sm_scale", sm_scale)',
         'abi::Param::F32("sm_scale", -sm_scale)', "a float scalar negated", launch=True),
    _ffi("moe_permute", "moe_permute_rows_kernel", "BLOCK_M.to_string(), BLOCK_D.to_string()",
         "BLOCK_D.to_string(), BLOCK_M.to_string()", "two generics in swapped order"),
    _ffi("persistent_gemm", "persistent_gemm_kernel", "GROUP_M.to_string()", "(GROUP_M + 1).to_string()",
         "the group size off by one"),
    _ffi("swiglu", "swiglu_bwd_kernel", 'abi::tile_shape([BM, BN], "dup")', 'abi::tile_shape([BM, BN / 2], "dup")',
         "one of two outputs' partition halved"),
    _ffi("workloads_rms_norm", "rms_norm_fwd_kernel", "HAS_RESIDUAL.to_string()", "(1 - HAS_RESIDUAL).to_string()",
         "a flag negated"),
    _ffi("attention_sinks", "attn_sinks_fwd_kernel", "D.to_string(),", "(D / 2).to_string(),",
         "the head size halved in the causal entry"),
    _ffi("softmax", "row_softmax", "BLOCK_N.to_string()", "(BLOCK_N / 2).to_string()", "the row tile halved"),
    _wrapper("dropout", "dropout_add_residual_kernel",
             (("(x, residual, out, p, seed, BM, BN)", "(x, residual, out, p, seed, BN, BM)"),),
             "the wrapper passes two constants in swapped order"),
    _wrapper("partial_reduce", "partial_sum",
             (("(AXIS == 0)),", "(not (AXIS == 0))),"), ("(not (AXIS == 0))),", "(AXIS == 0)),")),
             "the wrapper's entry predicates swapped"),
    _wrapper("cross_entropy", "cross_entropy_bwd_kernel",
             (("(logits, labels, lse, dloss, dlogits,", "(logits, labels, dloss, lse, dlogits,"),),
             "the wrapper passes two arrays in swapped order"),
    _wrapper("decode_attention", "decode_attn_combine_kernel",
             (("(O_part, lse_part, O, NUM_SPLITS, D)", "(O_part, lse_part, O, D, NUM_SPLITS)"),),
             "the wrapper passes two constants in swapped order"),
    _wrapper("geglu", "geglu_bwd_kernel", (("dgate_up, BM, BN)", "dgate_up, BM * 2, BN)"),),
             "the wrapper doubles a constant"),
)


def apply(out: Path, m: HostMutant) -> None:
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


def host_problems(out: Path, lib_path: Path) -> dict[str, list[str]]:
    """What verify's host-layer check (verify/run.py `_check_host_layer`) reports for each cuTile Python kernel
    of OUT built into `lib_path`."""
    from transpiler.verify.glue import fake_torch, symbol_mismatches, wrapper_mismatches
    manifest = json.loads((out / "manifest.json").read_text())
    pkg = load_package(out)
    rt = pkg._runtime
    lib = rt.load_library(lib_path)
    rt._LIB = lib
    found = {}
    for m in manifest["modules"]:
        source = import_source((out / m["source"]).resolve())
        kernel_rs = (out / m["rust"]).read_text()
        for k in m["kernels"]:
            if k.get("frontend") == "triton" or not k.get("symbol"):
                continue
            try:
                problems = symbol_mismatches(lib, k, kernel_rs)
                with fake_torch():
                    problems += wrapper_mismatches(rt, lib, k, getattr(source, k["name"]),
                                                   getattr(getattr(pkg, m["op"]), k["name"]), kernel_rs)
            except (LookupError, ValueError, OSError, AttributeError) as e:  # as verify counts them: different
                problems = [f"the host layer could not be checked: {type(e).__name__}: {e}"]
            found[k["name"]] = problems
    return found


@pytest.fixture(scope="module")
def mutated(corpus_out, tmp_path_factory):
    """A copy of the corpus port with every mutant applied (each to its own kernel), built."""
    base = tmp_path_factory.mktemp("host_mutants")
    out = base / "rust"
    shutil.copytree(corpus_out, out, ignore=shutil.ignore_patterns("target"))
    shutil.copytree(corpus_out.parent / "corpus", base / "corpus")  # the sources, where the headers point
    for m in MUTANTS:
        apply(out, m)
    return out, built_library(out, base / "lib")


def test_the_campaign_is_one_mutant_per_kernel_and_each_edit_applies(corpus_out):
    assert len(MUTANTS) >= 20 and len({m.kernel for m in MUTANTS}) == len(MUTANTS)
    assert len({m.path.split("/")[0] for m in MUTANTS}) == 2  # the C ABI layer and the wrappers
    for m in MUTANTS:
        text = (corpus_out / m.path).read_text()
        at = text.index(m.anchor)
        for old, new in m.edits:
            assert old != new and old in text[at:], (m.kernel, old)


def test_every_host_mutant_is_reported_and_nothing_else(mutated):
    out, lib = mutated
    found = host_problems(out, lib)
    missed = [f"{m.kernel}: {m.what}" for m in MUTANTS if not found.get(m.kernel)]
    assert not missed, "host mutants verify would pass as equivalent:\n" + "\n".join(missed)
    mutated_kernels = {m.kernel for m in MUTANTS}
    extra = {k: p[:2] for k, p in found.items() if p and k not in mutated_kernels}
    assert not extra, f"kernels reported without a mutant: {extra}"
    assert len(found) > len(mutated_kernels)  # unmutated kernels were checked too
