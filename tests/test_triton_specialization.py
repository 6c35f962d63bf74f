"""Triton's compile-time specializations that real kernels rely on, made explicit in the port:
- a pointer argument may be None, and `if ptr is not None:` is decided at compile time (one hidden const
  generic per tested pointer, set by the C symbol and the wrapper from the argument);
- so may a constexpr or scalar argument the kernel tests against None: an entry per None-ness (the hidden
  constant is a C argument after the kernel's own; the entry where it is None refuses any other read);
- conditions on float constexprs (`if BETA != 0.0:`) are host-computed int generics, not entry splits;
- a pointer whose offsets become int64 inside a branch keeps one (int64) offset variable;
- a specialization Triton could not compile either (a name left undefined by a constexpr `elif` chain) has no
  entry, and the launcher refuses its constants."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from conftest import requires_toolchain
from test_abi import FakeCudaArray, load_package
from transpiler.pipeline import run, write_outputs

HEAD = "import triton\nimport triton.language as tl\n\n\n"

OPTIONAL = """
@triton.jit
def scale_kernel(x_ptr, y_ptr, w_ptr, b_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    if w_ptr is not None:
        x = x * tl.load(w_ptr + offs, mask=m, other=1.0).to(tl.float32)
    if b_ptr is None:
        y = x
    else:
        b_ptr += pid.to(tl.int64) * BLOCK
        y = x + tl.load(b_ptr + tl.arange(0, BLOCK), mask=m, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, y, mask=m)
"""


def _port(tmp_path, body: str, name: str = "k.py"):
    tmp_path.mkdir(parents=True, exist_ok=True)
    src = tmp_path / name
    src.write_text(HEAD + textwrap.dedent(body))
    out = tmp_path / "out"
    result, outputs = run([src], out)
    write_outputs(outputs)
    if not (out / "manifest.json").exists():  # nothing translated
        return result, out, []
    manifest = json.loads((out / "manifest.json").read_text())
    return result, out, manifest["modules"][0]["kernels"] if manifest["modules"] else []


@pytest.fixture(scope="module")
def optional(tmp_path_factory):
    result, out, kernels = _port(tmp_path_factory.mktemp("optional"), OPTIONAL)
    assert result.kernels[0].status == "translated", [d.message for d in result.kernels[0].diagnostics]
    return out, kernels[0]


def test_none_tests_are_hidden_const_generics_not_variants(optional):
    out, k = optional
    assert [e["name"] for e in k["entries"]] == ["scale_kernel"]  # one entry: the `if` folds on the generic
    params = {p["name"]: p for p in k["params"]}
    assert params["w_ptr"]["given"] == "W_PTR_IS_GIVEN" and params["b_ptr"]["given"] == "B_PTR_IS_GIVEN"
    assert params["W_PTR_IS_GIVEN"]["given_of"] == "w_ptr" and params["W_PTR_IS_GIVEN"]["const_type"] == "bool"
    assert "given" not in params["x_ptr"]  # read unconditionally: required
    rust = (out / "src" / "k" / "kernel.rs").read_text()
    assert "if W_PTR_IS_GIVEN == 1i32 {" in rust and "if B_PTR_IS_GIVEN == 0i32 {" in rust
    # the offset advanced by an int64 inside the branch is int64 from its start (no type change, no split)
    assert "let mut b_ptr_off: i64 = 0i64;" in rust


def test_the_c_symbol_takes_a_null_descriptor_for_an_optional_pointer(optional):
    out, _ = optional
    ffi = (out / "src" / "k" / "ffi.rs").read_text()
    assert "let w_ptr = abi::optional_tensor_arg(" in ffi and "let x_ptr = abi::tensor_arg(" in ffi
    assert "let W_PTR_IS_GIVEN: i64 = w_ptr.given as i64;" in ffi
    assert "W_PTR_IS_GIVEN: i64," not in ffi  # not an argument of the symbol
    abi = (out / "src" / "abi.rs").read_text()
    assert "pub unsafe fn optional_tensor_arg(" in abi and "if arg.given && arg.dtype != dtype" in abi


def test_the_wrapper_sets_the_hidden_constants_from_none(optional):
    out, _ = optional
    pkg = load_package(out)
    rt, spec = pkg._runtime, pkg.k.SPEC_scale_kernel
    assert [p.name for p in spec.params] == ["x_ptr", "y_ptr", "w_ptr", "b_ptr", "n", "BLOCK"]
    x, y, w = (FakeCudaArray((64,), ptr=0x7F0000000000 + 4096 * i) for i in range(3))
    plan = rt.plan(spec, (x, y, w, None, 64, 16), (4,))
    assert plan.consts == {"BLOCK": 16, "W_PTR_IS_GIVEN": 1, "B_PTR_IS_GIVEN": 0}
    assert plan.c_args[3] is None  # a null descriptor
    assert rt.plan(spec, (x, y, None, w, 64, 16), (4,)).consts["B_PTR_IS_GIVEN"] == 1
    with pytest.raises(rt.ArgumentTypeError, match="`x_ptr` is None: the kernel reads it without testing"):
        rt.plan(spec, (None, y, w, None, 64, 16), (4,))


def test_float_constexpr_conditions_are_host_flags(tmp_path):
    result, out, (k,) = _port(tmp_path, """
    @triton.jit
    def loss_kernel(x_ptr, y_ptr, BETA: tl.constexpr, DELTA: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        if BETA != 0.0:
            x = x * BETA
        if DELTA > 1.5:
            x = tl.minimum(x, DELTA)
        tl.store(y_ptr + offs, x)

    def loss(x, y):
        loss_kernel[(1,)](x, y, BETA=0.1, DELTA=2.0, BLOCK=128)
    """)
    assert result.kernels[0].status == "translated"
    (entry,) = k["entries"]  # no split per truth value
    assert entry["derived"] == {"F_BETA_NE_0_P_0": "(1 if (BETA != 0.0) else 0)",
                                "F_DELTA_GT_1_P_5": "(1 if (DELTA > 1.5) else 0)"}
    ffi = (out / "src" / "k" / "ffi.rs").read_text()
    # computed from the float's value (not its f32 bits, which the entries take)
    assert "let BETA__value: f64 = BETA;" in ffi
    assert "(if (BETA__value != 0.0f64) { 1i64 } else { 0i64 })," in ffi
    assert "(if (DELTA__value > 1.5f64) { 1i64 } else { 0i64 })," in ffi
    rust = (out / "src" / "k" / "kernel.rs").read_text()
    assert "if F_BETA_NE_0_P_0 != 0i32 {" in rust and "if F_DELTA_GT_1_P_5 != 0i32 {" in rust


def test_variants_triton_cannot_compile_have_no_entry(tmp_path):
    result, _, (k,) = _port(tmp_path, """
    @triton.jit
    def mode_kernel(x_ptr, y_ptr, MODE: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        if MODE == 0:
            y = x * 2.0
        elif MODE == 1:
            y = x + 1.0
        tl.store(y_ptr + offs, y)
    """)
    assert result.kernels[0].status == "translated"
    (warning,) = result.kernels[0].diagnostics  # said, so a typo in one arm is not silent
    assert warning.severity == "warning" and warning.code == "CT103" and "`y` is not defined" in warning.message
    assert "not (MODE == 1) and not (MODE == 0)" in warning.message and warning.pos.line == 14
    preds = [e["predicates"] for e in k["entries"]]
    # MODE 0 and 1 have entries; with any other MODE `y` is undefined (Triton refuses it too): no entry
    assert len(preds) == 2 and all(any("MODE == " in p and not p.startswith("not") for p in ps) for ps in preds)
    # a name undefined in every specialization is still an error
    result, _, _ = _port(tmp_path / "b", """
    @triton.jit
    def bad_kernel(x_ptr, MODE: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        if MODE == 0:
            y = 1.0
        tl.store(x_ptr + offs, z)
    """)
    assert result.kernels[0].status == "unsupported" and result.kernels[0].diagnostics[0].code == "CT103"


OPTIONAL_VALUES = """
@triton.jit
def cap_kernel(x_ptr, y_ptr, n, scale, CAP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    if scale is not None:
        x = x * scale
    y = tl.minimum(x, CAP) if CAP is not None else x
    tl.store(y_ptr + offs, y, mask=m)

def cap(x, y, n):
    cap_kernel[(1,)](x, y, n, 0.5, CAP=6.0, BLOCK=128)
"""


@pytest.fixture(scope="module")
def optional_values(tmp_path_factory):
    result, out, kernels = _port(tmp_path_factory.mktemp("optional_values"), OPTIONAL_VALUES)
    assert result.kernels[0].status == "translated", [d.message for d in result.kernels[0].diagnostics]
    return out, kernels[0]


def test_none_tests_of_constexprs_and_scalars_are_variants(optional_values):
    """`scale is not None` (a scalar) and `... if CAP is not None else x` (a constexpr): Triton compiles a kernel
    per None-ness; so does the port, an entry per value of each hidden constant, each test folded."""
    out, k = optional_values
    assert [e["predicates"] for e in k["entries"]] == [
        ["CAP_IS_GIVEN", "SCALE_IS_GIVEN"], ["CAP_IS_GIVEN", "not (SCALE_IS_GIVEN)"],
        ["not (CAP_IS_GIVEN)", "SCALE_IS_GIVEN"], ["not (CAP_IS_GIVEN)", "not (SCALE_IS_GIVEN)"]]
    params = {p["name"]: p for p in k["params"]}
    assert params["scale"]["given"] == "SCALE_IS_GIVEN" and params["CAP"]["given"] == "CAP_IS_GIVEN"
    assert params["CAP_IS_GIVEN"]["given_of"] == "CAP" and params["CAP_IS_GIVEN"]["const_type"] == "bool"
    # the launch site's CAP=6.0 says it is given
    assert {"CAP": 6.0, "CAP_IS_GIVEN": 1}.items() <= k["specializations"][0].items()
    rust = (out / "src" / "k" / "kernel.rs").read_text()
    given = rust[rust.index("fn cap_kernel__cap_is_given__scale_is_given"):rust.index("fn cap_kernel__cap_is_given__not")]
    absent = rust[rust.index("fn cap_kernel__not_cap_is_given__not_scale_is_given"):]
    assert "IS_GIVEN == " not in rust  # decided per entry, not tested in the Rust
    body = lambda entry: entry.split(") {", 1)[1]  # noqa: E731  (after the signature, whose types have braces)
    assert "scalar_to_tile(CAP)" in given and "scale" in body(given)
    assert "scalar_to_tile(CAP)" not in absent and " scale" not in body(absent).split("// tl.store")[0]


def test_the_c_symbol_takes_the_given_flags_after_the_kernels_arguments(optional_values):
    out, _ = optional_values
    ffi = (out / "src" / "k" / "ffi.rs").read_text()
    sig = ffi[ffi.index("pub unsafe extern \"C\" fn cutile_cap_kernel("):]
    sig = sig[:sig.index(")")]
    names = [a.split(":")[0].strip() for a in sig.split("(", 1)[1].split(",") if a.strip()]
    assert names[:8] == ["x_ptr", "y_ptr", "n", "scale", "CAP", "BLOCK", "SCALE_IS_GIVEN", "CAP_IS_GIVEN"]
    assert 'let SCALE_IS_GIVEN = abi::flag(SCALE_IS_GIVEN, "SCALE_IS_GIVEN")?;' in ffi
    assert ".given as i64" not in ffi  # not a descriptor's


def test_the_wrapper_passes_none_for_a_constexpr_or_scalar(optional_values):
    out, _ = optional_values
    pkg = load_package(out)
    rt, spec = pkg._runtime, pkg.k.SPEC_cap_kernel
    x, y = (FakeCudaArray((64,), ptr=0x7F0000000000 + 4096 * i) for i in range(2))
    plan = rt.plan(spec, (x, y, 64, 0.5, 6.0, 128), (1,))
    assert plan.consts == {"CAP": 6.0, "BLOCK": 128, "SCALE_IS_GIVEN": 1, "CAP_IS_GIVEN": 1} and plan.entry == 0
    plan = rt.plan(spec, (x, y, 64, None, None, 128), (1,))
    assert plan.consts == {"CAP": 0.0, "BLOCK": 128, "SCALE_IS_GIVEN": 0, "CAP_IS_GIVEN": 0} and plan.entry == 3
    # the scalar's and the constant's placeholders, then the flags, then the entry
    assert [getattr(a, "value", a) for a in plan.c_args[2:9]] == [64, 0.0, 0.0, 128, 0, 0, 3]
    assert rt.plan(spec, (x, y, 64, 2.0, None, 128), (1,)).entry == 2
    with pytest.raises(rt.ArgumentTypeError, match="scalar `scale` must be a float"):
        rt.plan(spec, (x, y, 64, "a", None, 128), (1,))


def test_the_layout_key_tells_a_none_scalar_apart(optional_values, tmp_path, monkeypatch):
    """None selects another entry: the layout key holds whether an optional scalar is None (not its value),
    in Python and in the compiled fast path alike."""
    import types

    from transpiler.verify.glue import BASE_PTR, FakeTensor
    from transpiler.verify.toolchain import build_fastlaunch
    fake = types.ModuleType("torch")
    fake.Tensor = FakeTensor
    monkeypatch.setitem(sys.modules, "torch", fake)
    out, _ = optional_values
    pkg = load_package(out)
    rt, spec = pkg._runtime, pkg.k.SPEC_cap_kernel
    keys = [rt._layout_keyer(spec)]
    so = tmp_path / "_fastlaunch.abi3.so"
    if build_fastlaunch(out / "python" / "cutile_ports" / "_fastlaunch.c", so) is None:
        monkeypatch.setenv(rt.FASTLAUNCH_ENV, str(so))
        rt._ACCEL.clear()
        if rt.fastlaunch() is not None:
            keys.append(rt._layout_keyer(spec, rt.fastlaunch()))
    T, x = FakeTensor, FakeTensor((8,), "f32", BASE_PTR)
    for key in keys:
        assert key((x, x, 3, 0.5, None, 16), (1,), T) == key((x, x, 5, 2.0, None, 16), (1,), T)
        assert key((x, x, 3, 0.5, None, 16), (1,), T) != key((x, x, 3, None, None, 16), (1,), T)
        assert key((x, x, 3, None, None, 16), (1,), T) != key((x, x, 3, None, 1.0, 16), (1,), T)
    assert len(keys) == 2  # CI has a C compiler and Python's headers
    for args in [(x, x, 3, 0.5, None, 16), (x, x, 3, None, 2.0, 16)]:
        assert keys[0](args, (1,), T) == keys[1](args, (1,), T)
    rt._ACCEL.clear()


@requires_toolchain
def test_the_symbol_launches_the_entry_of_the_none_ness(optional_values, tmp_path):
    """The built library in dry-run mode: the plan's C arguments select the entry of each None-ness, and the
    fast call of a layout with a None scalar passes its placeholder, not the call's argument."""
    from test_abi import built_library
    from transpiler.verify.glue import FakeTensor
    out, _ = optional_values
    pkg = load_package(out)
    rt, spec = pkg._runtime, pkg.k.SPEC_cap_kernel
    lib = rt.load_library(built_library(out, tmp_path / "lib"))
    x, y = (FakeCudaArray((64,), ptr=0x7F0000000000 + 4096 * i) for i in range(2))
    for args, entry, cap_given, scale_given in [((0.5, 6.0), "cap_kernel__cap_is_given__scale_is_given", "1", "1"),
                                                 ((None, 6.0), "cap_kernel__cap_is_given__not_scale_is_given", "1", "0"),
                                                 ((0.5, None), "cap_kernel__not_cap_is_given__scale_is_given", "0", "1"),
                                                 ((None, None), "cap_kernel__not_cap_is_given__not_scale_is_given", "0", "0")]:
        launched = rt.dry_run(rt.plan(spec, (x, y, 64, *args, 128), (1,)), lib)
        assert launched["entry"] == entry
        names = [g.split(":")[0].strip().removeprefix("const ") for g in next(
            e for e in json.loads((out / "manifest.json").read_text())["modules"][0]["kernels"][0]["entries"]
            if e["name"] == entry)["generics"]]
        generics = dict(zip(names, launched["generics"]))
        assert (generics["CAP_IS_GIVEN"], generics["SCALE_IS_GIVEN"]) == (cap_given, scale_given)
    plan = rt.plan(spec, (x, y, 64, None, None, 128), (1,))
    fast = rt._FastCall(plan, lib)
    assert [part[0] for part in fast.parts[:4]] == ["array", "array", "scalar", "fixed"]  # `scale` is None here
    previous = lib.cutile_dry_run(1)
    try:
        t = [FakeTensor((64,), "f32", 0x7F0000000000 + 4096 * i) for i in range(2)]
        assert fast.run((*t, 32, None, None, 128), None) == 0
        launched = json.loads(lib.cutile_last_plan())
    finally:
        lib.cutile_dry_run(previous)
    assert launched["entry"] == "cap_kernel__not_cap_is_given__not_scale_is_given"


def test_interpreter_cases_pass_none_as_the_wrapper_does(optional_values):
    """A recorded case with `scale` and `CAP` None: the constants the wrapper would compute (flags 0, CAP's
    placeholder), and the entry's arguments (scale's placeholder)."""
    import numpy as np

    from transpiler.verify.interpret.cases import case_spec, launch_args
    from transpiler.verify.interpret.values import Memory
    out, k = optional_values
    case = {"constexprs": {"CAP": None, "BLOCK": 128}, "args": ["x", "y", "n", "scale"],
            "inputs": [{"name": "x", "dtype": "float32"}, {"name": "y", "dtype": "float32"}],
            "scalars": {"n": 64, "scale": None}}
    spec = case_spec(k, case)
    assert {n: spec[n] for n in ("CAP", "BLOCK", "CAP_IS_GIVEN", "SCALE_IS_GIVEN")} == {
        "CAP": 0.0, "BLOCK": 128, "CAP_IS_GIVEN": 0, "SCALE_IS_GIVEN": 0}
    case["constexprs"]["CAP"], case["scalars"]["scale"] = 6.0, 0.5
    assert {n: case_spec(k, case)[n] for n in ("CAP", "CAP_IS_GIVEN", "SCALE_IS_GIVEN")} == {
        "CAP": 6.0, "CAP_IS_GIVEN": 1, "SCALE_IS_GIVEN": 1}
    case["scalars"]["scale"] = None
    arrays = {"x": np.zeros(64, np.float32), "y": np.zeros(64, np.float32)}
    values = launch_args(k, [("n", "i32"), ("scale", "f32")], case, arrays, Memory())
    assert [float(v) for v in values] == [64.0, 0.0]


def test_a_none_parameter_read_outside_its_test_has_no_entry_there(tmp_path):
    """`W` tested, then read unconditionally: Triton cannot compile W=None; the port has no entry for it (a
    warning says so) and the launcher refuses None."""
    result, out, (k,) = _port(tmp_path, """
    @triton.jit
    def win_kernel(x_ptr, W: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        if W is not None:
            x = x + 1.0
        tl.store(x_ptr + offs, x * W)
    """)
    (kr,) = result.kernels
    assert kr.status == "translated" and [e["predicates"] for e in k["entries"]] == [["W_IS_GIVEN"]]
    (warning,) = kr.diagnostics
    assert warning.code == "CT103" and "`W` is None here (W_IS_GIVEN false)" in warning.message
    pkg = load_package(out)
    rt, spec = pkg._runtime, pkg.k.SPEC_win_kernel
    x = FakeCudaArray((64,), ptr=0x7F0000000000)
    assert rt.plan(spec, (x, 2, 16), (1,)).consts["W_IS_GIVEN"] == 1
    with pytest.raises(rt.ArgumentError, match="no variant for the constants"):
        rt.plan(spec, (x, None, 16), (1,))
    # the same where the read is a tile shape
    result, _, (k,) = _port(tmp_path / "shape", """
    @triton.jit
    def win_kernel(x_ptr, W: tl.constexpr):
        offs = tl.arange(0, W)
        x = tl.load(x_ptr + offs)
        if W is None:
            x = x * 2.0
        tl.store(x_ptr + offs, x)
    """)
    assert [e["predicates"] for e in k["entries"]] == [["W_IS_GIVEN"]]
    assert [d.code for d in result.kernels[0].diagnostics] == ["CT103"]


def test_none_test_of_a_reassigned_parameter_is_diagnosed(tmp_path):
    """A parameter the kernel reassigns is no longer the argument: its None test is refused (fail closed)."""
    result, _, _ = _port(tmp_path, """
    @triton.jit
    def k(x_ptr, scale, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        scale = scale * 2.0
        if scale is not None:
            x = x * scale
        tl.store(x_ptr + offs, x)
    """)
    (kr,) = result.kernels
    assert kr.status == "unsupported"
    d = kr.diagnostics[0]
    assert d.code == "CT100" and "`scale is not None`" in d.message and "does not reassign" in d.message
    assert d.pos.line == 11
    # nor is a string constexpr's (its value is an index into the launch sites' strings)
    result, _, _ = _port(tmp_path / "s", """
    @triton.jit
    def k(x_ptr, MODE: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        if MODE is not None and MODE == "double":
            x = x * 2.0
        tl.store(x_ptr + offs, x)

    def f(x):
        k[(1,)](x, MODE="double", BLOCK=16)
    """)
    (kr,) = result.kernels
    assert kr.status == "unsupported" and kr.diagnostics[0].code == "CT100"
    assert "a string or dtype constexpr tested against None" in kr.diagnostics[0].message


def test_dtype_constexprs_are_one_entry_per_dtype(tmp_path):
    """`ACC: tl.constexpr` passed `tl.float32` / `tl.int32` and used as a dtype: an entry per dtype the launch
    sites give (the float dtypes when none is literal); the router maps tl and torch dtypes to its index."""
    result, out, (k,) = _port(tmp_path, """
    @triton.jit
    def acc_kernel(x_ptr, y_ptr, ACC: tl.constexpr, OUT_DTYPE: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        acc = tl.zeros([BLOCK], dtype=ACC) + tl.load(x_ptr + offs).to(ACC)
        tl.store(y_ptr + offs, acc.to(OUT_DTYPE))

    def accumulate(x, y, out_dtype):
        if x.is_floating_point():
            acc_kernel[(1,)](x, y, ACC=tl.float32, OUT_DTYPE=out_dtype, BLOCK=128)
        else:
            acc_kernel[(1,)](x, y, tl.int32, out_dtype, BLOCK=128)
    """)
    assert result.kernels[0].status == "translated", [d.message for d in result.kernels[0].diagnostics]
    assert k["strings"] == {"ACC": ["f32", "i32"], "OUT_DTYPE": ["bf16", "f16", "f32"]}
    assert k["dtype_consts"] == ["ACC", "OUT_DTYPE"]
    assert len(k["entries"]) == 6 and "acc_kernel__acc_i32__out_dtype_bf16" in {e["name"] for e in k["entries"]}
    rust = (out / "src" / "k" / "kernel.rs").read_text()
    assert "let mut acc: Tile<i32, { [BLOCK] }>" in rust or "let acc: Tile<i32, { [BLOCK] }>" in rust
    pkg = load_package(out)
    rt, spec = pkg._runtime, pkg.k.SPEC_acc_kernel
    assert spec.dtype_consts == ("ACC", "OUT_DTYPE")

    class TlDtype:  # what `tl.float32` is: its `name` is Triton's short name
        def __init__(self, name):
            self.name = name

    named = {"x_ptr": 1, "y_ptr": 2, "ACC": TlDtype("int32"), "OUT_DTYPE": "torch.bfloat16", "BLOCK": 128}
    assert rt._triton_values(spec, named)[2:4] == (1, 0)
    named["OUT_DTYPE"] = TlDtype("fp16")
    assert rt._triton_values(spec, named)[3] == 1
    named["OUT_DTYPE"] = TlDtype("fp64")  # no entry: an index past the strings, refused by the entry choice
    assert rt._triton_values(spec, named)[3] == 3


def test_scalar_arguments_are_typed_by_the_launch_sites(tmp_path):
    """Triton types an unannotated scalar by its Python value: a float a launch site passes (a literal, or a
    local assigned one) makes the parameter f32; `x = x.to(tl.float32)` says the same."""
    result, _, (k,) = _port(tmp_path, """
    @triton.jit
    def scale_kernel(x_ptr, n, scale, cap, HAS_CAP: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        if HAS_CAP:
            cap = cap.to(tl.float32)
            x = tl.minimum(x, cap)
        tl.store(x_ptr + offs, x + offs * scale, mask=offs < n)  # int * scale: i32 without the launch site

    def scaled(x, cap=None):
        s = 0.5
        scale_kernel[(1,)](x, x.numel(), s, cap, HAS_CAP=cap is not None, BLOCK=128)
    """)
    assert result.kernels[0].status == "translated", [d.message for d in result.kernels[0].diagnostics]
    types = {p["name"]: p["dtype"] for p in k["params"] if p["kind"] == "scalar"}
    assert types == {"n": "i32", "scale": "f32", "cap": "f32"}


def test_a_helpers_none_default_is_decided_at_conversion(tmp_path):
    """A jit helper's pointer parameter defaulting to None: a kernel that leaves it out gets only the arm Triton
    compiles (the other arm would add to None); a kernel that passes its own pointer gets the hidden test."""
    result, out, kernels = _port(tmp_path, """
    @triton.jit
    def _row(x_ptr, offs, mask, b_ptr=None):
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        if b_ptr is not None:
            x += tl.load(b_ptr + offs, mask=mask, other=0.0)
        return x

    @triton.jit
    def with_bias(x_ptr, y_ptr, b_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, _row(x_ptr, offs, offs < n, b_ptr), mask=offs < n)

    @triton.jit
    def without_bias(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, _row(x_ptr, offs, offs < n), mask=offs < n)
    """)
    assert [k.status for k in result.kernels] == ["translated", "translated"]
    params = {k["name"]: [p["name"] for p in k["params"]] for k in kernels}
    assert "B_PTR_IS_GIVEN" in params["with_bias"] and not any("GIVEN" in p for p in params["without_bias"])
    rust = (out / "src" / "k" / "kernel.rs").read_text()
    without = rust[rust.index("fn without_bias"):]
    assert without.count("load_ptr_tko(") == 1 and "IS_GIVEN" not in without


@requires_toolchain
def test_verification_compiles_every_dtype_entry_and_skips_constants_without_one(tmp_path):
    """`--verify` of a kernel with a dtype constant no launch site gives literally (each dtype is compiled) and
    a launch site whose constants have no entry (skipped: Triton cannot compile them either), not an
    internal error."""
    from transpiler.verify.run import verify_output
    result, out, (k,) = _port(tmp_path, """
    @triton.jit
    def acc_kernel(x_ptr, y_ptr, dtype: tl.constexpr, MODE: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs).to(tl.float32)
        if MODE == 0:
            y = x * 2.0
        elif MODE == 1:
            y = x + 1.0
        tl.store(y_ptr + offs, y.to(dtype))

    def run(x, y, d):
        acc_kernel[(1,)](x, y, d, MODE=2, BLOCK=128)
        acc_kernel[(1,)](x, y, d, MODE=0, BLOCK=128)
    """)
    (v,) = verify_output(out)
    assert v.verdict == "compiled", (v.reason, [c.detail[:300] for c in v.checks])
    assert {c.entry for c in v.checks} == {e["name"] for e in k["entries"]} and len(k["entries"]) == 6


@requires_toolchain
def test_a_loaded_generic_meeting_a_dtype_constant_is_decided_per_entry(tmp_path):
    """`dy * x.to(X_DTYPE)`: with X_DTYPE = bf16 the product is bf16 where dy is bf16 and f32 where it is f16 or
    f32 (Triton's promotion), so the entry splits on dy's dtype; with f32 every dtype gives f32 (one entry).
    dy's pointer keeps the float dtypes (the entries cover no other), and every entry compiles."""
    from transpiler.verify.run import verify_output
    result, out, (k,) = _port(tmp_path, """
    @triton.jit
    def bwd_kernel(dy_ptr, x_ptr, dw_ptr, n, X_DTYPE: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n
        dy = tl.load(dy_ptr + offs, mask=m, other=0.0)
        x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
        dw = dy * (x * 0.5).to(X_DTYPE)
        tl.store(dw_ptr + offs, dw.to(tl.float32), mask=m)
    """)
    assert result.kernels[0].status == "translated", [d.message for d in result.kernels[0].diagnostics]
    assert {e["name"] for e in k["entries"]} == {
        "bwd_kernel__x_dtype_f32", "bwd_kernel__x_dtype_bf16__e_bf16", "bwd_kernel__x_dtype_bf16__e_f16_f32",
        "bwd_kernel__x_dtype_f16__e_f16", "bwd_kernel__x_dtype_f16__e_bf16_f32"}
    assert next(p for p in k["params"] if p["name"] == "dy_ptr").get("domain") is None  # the kernel's floats
    (v,) = verify_output(out)
    assert v.verdict == "compiled", (v.reason, [c.detail[:300] for c in v.checks if c.verdict != "compiled"])


def _flags_kernel(n: int) -> str:
    """A kernel whose `n` flags each change a value's type (one entry per combination)."""
    params = ", ".join(f"o{i}_ptr" for i in range(n))
    flags = ", ".join(f"F{i}: tl.constexpr" for i in range(n))
    body = "".join(f"""
    if F{i}:
        y{i} = x.to(tl.float16)
    else:
        y{i} = x.to(tl.float32)
    tl.store(o{i}_ptr + offs, y{i}, mask=offs < n)""" for i in range(n))
    return f"""
@triton.jit
def flags_kernel(x_ptr, {params}, n, {flags}, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n){body}
"""


def test_triton_kernels_may_have_up_to_32_entries(tmp_path):
    """Triton's constexprs multiply entries faster than cuTile Python's constants (dtype and string constexprs, each a
    separate Triton compile too): up to 32 structural variants are ported, more are refused with CT108."""
    result, _, kernels = _port(tmp_path / "five", _flags_kernel(5))
    assert result.kernels[0].status == "translated", [d.message for d in result.kernels[0].diagnostics]
    assert len(kernels[0]["entries"]) == 32
    result, _, _ = _port(tmp_path / "six", _flags_kernel(6))
    assert result.kernels[0].status == "unsupported"
    assert result.kernels[0].diagnostics[0].code == "CT108" and "32" in result.kernels[0].diagnostics[0].message
