"""The host layer of Triton ports, checked as verify checks it (issue 36): each C symbol, called in dry-run mode
with descriptors built from the manifest (verify/glue.py), must launch the entry, generics (dtype generics,
integer kinds, given and unit-stride flags, float bits), grid and output views that verification compiled and
interpreted. Hand mutants of the generated `ffi.rs`, one per kernel and built into one crate, must each be
reported; the kernels left as generated must not."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from transpiler.pipeline import run, write_outputs
from transpiler.verify import glue

from conftest import requires_toolchain

REPO = Path(__file__).resolve().parent.parent
UNSEEN = REPO / "tests" / "fixtures" / "triton_unseen"
WORKLOADS = REPO / "corpus" / "triton" / "workloads"
SOURCES = [UNSEEN / "arm_defined_names.py", UNSEEN / "arm_forwarders.py", UNSEEN / "arm_rebinds.py",
           UNSEEN / "int8_matmul.py", UNSEEN / "host_descriptor_matmul.py", UNSEEN / "pointer_rows.py"]
# corpus modules, in a package of their own (persistent_matmul imports its tile order from `.utils`)
PACKAGE = [WORKLOADS / "__init__.py", WORKLOADS / "utils.py", WORKLOADS / "fused_add_norm.py",
           WORKLOADS / "persistent_matmul.py"]

# (module, kernel, the edit of its ffi.rs, what the report must name). Each changes what one launch runs while
# the crate still builds: only the glue check can see it (the Tile IR and the interpreter see the entries).
MUTANTS = [
    ("arm_forwarders", "widen_rows_kernel",  # the output view's row stride one past the scalar
     (r"&\[\(\(stride\) as i64\), 1i64\]", "&[((stride) as i64) + 1, 1i64]"), "passes"),
    ("arm_defined_names", "group_starts_kernel",  # the two entries swapped
     (r"0 if \(DECODE != 0\) => 0,\n(\s*)1 if \(!\(DECODE != 0\)\) => 1,",
      r"0 if (DECODE != 0) => 1,\n\g<1>1 if (!(DECODE != 0)) => 0,"), "launches entry"),
    ("int8_matmul", "int8_gemm_kernel",  # a unit-stride flag negated
     (r"\(stride_ak == 1\) as i64", "(stride_ak != 1) as i64"), "generic `stride_ak_IS_1`"),
    ("fused_add_norm", "fused_add_rms_norm_kernel",  # an optional pointer always taken as given
     (r"let RES_PTR_IS_GIVEN: i64 = res_ptr\.given as i64;", "let RES_PTR_IS_GIVEN: i64 = 1;"),
     "generic `RES_PTR_IS_GIVEN`"),
    ("host_descriptor_matmul", "host_desc_matmul_kernel",  # a descriptor's two extents swapped in the launch
     (r"a_desc_extent0,(\s*)a_desc_extent1,", r"a_desc_extent1,\g<1>a_desc_extent0,"), "passes"),
    ("arm_rebinds", "round_to_int8_kernel",  # the output view's extent not cut to the block
     (re.escape("&[(if (((n) as i64) < BLOCK) { ((n) as i64) } else { BLOCK })]"), "&[((n) as i64)]"), None),
]


# A mutant only the routed launch can show: the compiled fast path's prepared launch of int8_gemm_rowscale_kernel
# re-fired for any value of the strides its entries are specialized on being 1 (the symbol then never selects
# the general entry again: a unit-stride entry run on stride 7).
WRAPPER_MUTANTS = [
    ("int8_matmul", "int8_gemm_rowscale_kernel",
     (re.escape('pinned: &["stride_ak", "stride_bn", "stride_on"]'), "pinned: &[]"), "generic `stride_ak_IS_1`"),
]


def _mutate(out: Path, module: str, pattern: str, repl: str) -> None:
    (ffi,) = [p for p in out.rglob("ffi.rs") if p.parent.name == module]
    text = ffi.read_text()
    mutated, n = re.subn(pattern, repl, text, count=1)  # the first: another kernel of the module stays as it is
    assert n >= 1, f"the mutant of {module} no longer applies: {pattern}"
    ffi.write_text(mutated)


@pytest.fixture(scope="module")
def mutated(tmp_path_factory):
    """The sources translated, every kernel of MUTANTS edited in its ffi.rs, and the crate built once."""
    from test_abi import built_library
    base = tmp_path_factory.mktemp("triton_glue")
    src = base / "src"
    src.mkdir()
    for s in SOURCES:
        shutil.copy2(s, src / s.name)
    (src / "workloads").mkdir()
    for s in PACKAGE:
        shutil.copy2(s, src / "workloads" / s.name)
    out = base / "out"
    _, outputs = run([src], out, compile_check=False)
    write_outputs(outputs)
    for module, _, (pattern, repl), _ in MUTANTS + WRAPPER_MUTANTS:
        _mutate(out, module, pattern, repl)
    lib = built_library(out, base / "lib")
    return out, lib


def _problems(out: Path, lib_path: Path) -> dict[str, list[str]]:
    import ctypes
    lib = ctypes.CDLL(str(lib_path))
    manifest = json.loads((out / "manifest.json").read_text())
    found = {}
    for m in manifest["modules"]:
        kernel_rs = (out / m["rust"]).read_text()
        for k in m["kernels"]:
            found[k["name"]] = glue.symbol_mismatches(lib, k, kernel_rs)
    return found


@requires_toolchain
def test_every_triton_symbol_mutant_is_reported_and_the_others_are_not(mutated):
    out, lib = mutated
    found = _problems(out, lib)
    mutated_names = {kernel for _, kernel, _, _ in MUTANTS}
    clean = {name: p for name, p in found.items() if name not in mutated_names}
    assert len(clean) >= 4 and not any(clean.values()), {n: p[:2] for n, p in clean.items() if p}
    for _, kernel, _, says in MUTANTS:
        assert found[kernel], f"the mutant of {kernel} was not reported"
        assert says is None or any(says in p for p in found[kernel]), (kernel, found[kernel][:3])


@requires_toolchain
def test_verify_reports_a_triton_symbol_that_launches_another_view(mutated):
    """End to end: `verify` of the mutated output says `different` for the kernel whose ffi.rs passes another
    output view, naming the host layer (the Tile IR it compiled is the generated one)."""
    from transpiler.verify.run import verify_output
    out, _ = mutated
    (v,) = verify_output(out, ["widen_rows_kernel"], dtypes=["f32"])
    assert v.verdict == "different" and "host layer" in v.reason, (v.verdict, v.reason)


def test_a_triton_launch_takes_the_views_and_flags_its_constants_state():
    """Cargo-free: the launch the check builds for a Triton kernel. An output view whose row stride is a scalar
    gets that scalar as the contiguous stride, the grid its partition grid, and the array twice the view's span;
    a unit-stride flag sets its scalar to 1 (or not); an optional pointer passed as None is null, and a
    dtype generic only it types is launched at the first dtype the symbol takes."""
    kernel = {
        "name": "k", "frontend": "triton", "dtypes": ["f16", "bf16", "f32"], "symbol": "cutile_k",
        "params": [
            {"name": "x_ptr", "kind": "array", "dtype": "E", "rank": 1, "flat": True, "pointer": True,
             "domain": ["f16", "bf16", "f32"]},
            {"name": "w_ptr", "kind": "array", "dtype": "E2", "rank": 1, "flat": True, "pointer": True,
             "domain": ["f16", "bf16", "f32"], "given": "W_PTR_IS_GIVEN"},
            {"name": "y_ptr", "kind": "array", "dtype": "E", "rank": 1, "flat": True, "pointer": False,
             "domain": ["f16", "bf16", "f32"], "view": {"extents": ["(__grid0 * 1)", "BLOCK"], "strides": ["stride", "1"]}},
            {"name": "stride", "kind": "scalar", "dtype": "i32", "rank": 0},
            {"name": "s_x", "kind": "scalar", "dtype": "i32", "rank": 0},
            {"name": "BLOCK", "kind": "const", "const_type": "int", "dtype": "", "rank": 0},
            {"name": "s_x_IS_1", "kind": "const", "const_type": "bool", "dtype": "", "rank": 0, "unit_of": "s_x"},
            {"name": "W_PTR_IS_GIVEN", "kind": "const", "const_type": "", "dtype": "", "rank": 0, "given_of": "w_ptr"},
        ],
        "entries": [{"name": "k", "predicates": [], "generics": ["E", "E2", "BLOCK", "s_x_IS_1", "W_PTR_IS_GIVEN"],
                     "derived": {}, "generic_params": {}, "tiles": {"y_ptr": ["1", "BLOCK"]},
                     "outputs": [{"array": "y_ptr", "form": "checked"}]}],
        "specializations": [],
    }
    consts = {"BLOCK": 64, "s_x_IS_1": 1, "W_PTR_IS_GIVEN": 0}
    shapes, grid, scalars, views = glue.triton_launch(kernel, consts, "bf16", None)
    assert scalars == {"stride": 64, "s_x": 1}
    assert grid == (3, 1, 1) and views == {"y_ptr": ([3, 64], [64, 1])}
    assert shapes == {"x_ptr": [48], "w_ptr": [48], "y_ptr": [2 * 3 * 64]}
    assert glue.triton_launch(kernel, {**consts, "s_x_IS_1": 0}, "bf16", None)[2]["s_x"] != 1
    assert [p["name"] for p in glue.c_params(kernel["params"])] == ["x_ptr", "w_ptr", "y_ptr", "stride", "s_x", "BLOCK"]
    args, _ = glue.c_call(kernel, consts, "bf16", 0, kernel["entries"][0])
    assert args[1] is None  # w_ptr: not given
    ref = glue.reference(kernel, consts, "bf16", grid)
    assert ref["element_type"] is None and ref["partitions"] == {"y_ptr": [1, 64]}
    assert glue._absent_generics(kernel, kernel["entries"][0], consts, ref["generics"])[:2] == ["bf16", "f16"]
    # a view reading a name the launch does not set: a LookupError the host check reports, never a crash
    broken = {**kernel, "params": [{**p, "view": {"extents": ["n_rows"], "strides": ["1"]}} if p["name"] == "y_ptr"
                                   else p for p in kernel["params"]]}
    with pytest.raises(LookupError, match="n_rows"):
        glue.triton_launch(broken, consts, "bf16", None)


@requires_toolchain
def test_the_routed_triton_launch_is_checked_through_the_compiled_fast_path(mutated, monkeypatch):
    """The generated package's route of `kernel[grid](...)` (Triton's argument binding, None for optional
    pointers and values, the hidden flags), through the compiled fast path, which keeps a layout's first
    launch and re-fires it for later calls: every kernel as generated launches what was verified at every
    point, one after the other in one process; the kernel whose prepared launch ignores its unit-stride
    scalars (WRAPPER_MUTANTS) runs its unit-stride entry for a later stride of 7, and is reported."""
    from transpiler.verify.run import _generated_package, _spec_of
    from transpiler.verify.toolchain import build_fastlaunch
    out, lib = mutated
    fast = lib.with_name("_fastlaunch.abi3.so")
    assert build_fastlaunch(out / "python" / "cutile_ports" / "_fastlaunch.c", fast) is None
    monkeypatch.setenv("CUTILE_RS_FASTLAUNCH", str(fast))
    pkg = _generated_package(out)
    rt = pkg._runtime
    handle = rt._LIB = rt.load_library(lib)
    assert rt.fastlaunch() is not None
    manifest = json.loads((out / "manifest.json").read_text())
    symbol_mutated = {kernel for _, kernel, _, _ in MUTANTS}
    found = {}
    for m in manifest["modules"]:
        kernel_rs = (out / m["rust"]).read_text()
        for k in m["kernels"]:
            if k["name"] not in symbol_mutated:
                with glue.fake_torch():
                    found[k["name"]] = glue.triton_wrapper_mismatches(rt, handle, k, _spec_of(pkg, m, k), kernel_rs)
    (_, kernel, _, says), = WRAPPER_MUTANTS
    assert any(says in p for p in found.pop(kernel)), "the prepared launch's unit-stride repeat was not reported"
    # persistent_matmul_kernel as generated: launched at unit strides, then at strides of 7 and more
    assert "persistent_matmul_kernel" in found and len(found) >= 3
    assert not any(found.values()), {n: p[:2] for n, p in found.items() if p}
