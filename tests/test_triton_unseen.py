"""Triton on code written the way real libraries write it (issue 34): kernels of our own for each construct that
unseen libraries used (tests/fixtures/triton_unseen), translated and compiled; derived names that never collide
with a kernel's own (a property test over generated parameter and local names)."""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT, requires_toolchain
from transpiler.emit.ffi import kernel_ffi_view
from transpiler.frontend.source import parse_file
from transpiler.pipeline import kernel_result, run, translate_kernel

FIXTURES = ROOT / "tests" / "fixtures" / "triton_unseen"
HEAD = "import triton\nimport triton.language as tl\n\n\n"


def _kernels(tmp_path: Path, body: str, name: str = "k.py"):
    path = tmp_path / name
    path.write_text(HEAD + textwrap.dedent(body))
    fr = parse_file(path, name)
    assert not fr.failures, [d.message for _, _, d in fr.failures]
    return fr.kernels


def _translated_copy(tmp_path: Path, fixture: str, text: str | None = None):
    """The one kernel of a copy of tests/fixtures/triton_unseen/`fixture` (or of `text`), translated: its
    KernelResult, which must be `translated`."""
    path = tmp_path / "k.py"
    path.write_text((FIXTURES / fixture).read_text() if text is None else text)
    (k,) = parse_file(path, "k.py").kernels
    kr = kernel_result(k, path, "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    return kr


@requires_toolchain
def test_unseen_fixture_kernels_translate_and_compile(tmp_path):
    """Every fixture kernel translates, and its Rust compiles (a CT007 here is a bug of ours)."""
    result, _ = run([FIXTURES], tmp_path / "out", use_cache=False, compile_check="on")
    bad = {k.name: [d.text() for d in k.diagnostics] for k in result.kernels if k.status != "translated"}
    assert not bad, bad
    assert len(result.kernels) >= 6


# -------------------------------------------------------------------------------------- derived names

_SUFFIXES = ["_stride0", "_stride1", "_shape0", "_shape1", "_stride0_", "_base", "_view", "_dims", "_strides"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scalar=st.sampled_from(_SUFFIXES), local=st.sampled_from(_SUFFIXES), ptr=st.sampled_from(["src", "x_ptr", "a"]))
def test_derived_names_never_collide_with_the_kernels_own(tmp_path, scalar, local, ptr):
    """A scalar parameter and a local named like a pointer's derived names (`src_stride0`, `src_view`, ...):
    the entry binds each parameter name once, no local rebinds a parameter, and the C symbol labels the
    extents with the entry's own names (the compile-time hints are keyed by them)."""
    sp, lc = ptr + scalar, ptr + local
    (k,) = _kernels(tmp_path, f"""
    @triton.jit
    def k({ptr}, {sp}, out_ptr, BLOCK: tl.constexpr):
        {lc} = tl.program_id(0) * 2
        offs = tl.arange(0, BLOCK)
        row = tl.load({ptr} + {lc} * {sp} + offs)
        tl.store(out_ptr + {lc} + offs, row)
        tl.store({ptr} + offs + {sp}, row + 1)
    """)
    kr = kernel_result(k, tmp_path / "k.py", "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    ffi = kernel_ffi_view(kr.manifest, "", "k.py")
    for view in kr.manifest["views"]:
        names = [p.split(":")[0].strip() for p in view["params"]]
        assert len(names) == len(set(names)), names
        lets = {m.group(1) for line in view["body"] for m in [re.match(r"\s*let (?:mut )?(\w+)", line)] if m}
        assert not lets & (set(names) - {sp}), lets & set(names)  # the kernel's own rebinding of a parameter stays
        labels = re.findall(r'abi::Param::\w+\("(\w+)"', str(ffi))
        assert labels == names, (labels, names)


# -------------------------------------------------------------------------------------- rules

def _rust(tmp_path: Path, body: str) -> str:
    (k,) = _kernels(tmp_path, body)
    kr = kernel_result(k, tmp_path / "k.py", "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    return "\n".join(line for v in kr.manifest["views"] for line in v["body"] if not line.strip().startswith("//"))


def test_argmax_is_the_first_index_of_the_max(tmp_path):
    """tl.argmax: the max, the indices where x equals it, and the least of them (the greatest with
    tie_break_left=False); tl.max(..., return_indices=True) is the value and that index."""
    rust = _rust(tmp_path, """
    @triton.jit
    def k(x_ptr, v_ptr, i_ptr, j_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        v, i = tl.max(x, axis=0, return_indices=True)
        tl.store(v_ptr, v)
        tl.store(i_ptr, i)
        tl.store(j_ptr, tl.argmin(x, 0, tie_break_left=False))
    """)
    assert re.search(r"let v: [^;]*= reduce_max\(x, 0i32\).*\n(.*\n)*.*cmpf\(x, broadcast\(reshape\(v, shape!\[1\]\), "
                     r"shape!\[BLOCK\]\), predicate::Equal", rust), rust
    assert "constant(2147483647i32" in rust and "constant(-1i32" in rust
    assert re.search(r"Tile<i32, \{ \[\] \}> = reduce_min\(\w+, 0i32\)", rust)  # the first index
    assert re.search(r"reduce_min\(x, 0i32\)", rust) and re.search(r"Tile<i32, \{ \[\] \}> = reduce_max\(", rust)


def test_math_forms_real_libraries_use(tmp_path):
    """tl.cumsum without an axis scans axis 0; tl.reshape(x, H, D) is tl.reshape(x, (H, D)); libdevice's round
    is half away from zero, trunc toward zero, div_rn IEEE division."""
    rust = _rust(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, H: tl.constexpr, D: tl.constexpr):
        offs = tl.arange(0, H * D)
        x = tl.load(x_ptr + offs)
        c = tl.cumsum(x)
        r = tl.extra.libdevice.round(tl.div_rn(c, 3.0)) + tl.math.trunc(x)
        tl.store(y_ptr + tl.arange(0, H)[:, None] * D + tl.arange(0, D)[None, :], tl.reshape(r, H, D))
    """)
    assert "scan_sum(x, 0i32" in rust, rust
    assert ", shape![H, D])" in rust and "reshape(" in rust
    assert "ceil(" in rust and "floor(" in rust and "0.5" in rust


def test_math_sqrt_of_constexprs_is_a_derived_constant_and_of_a_tile_is_refused(tmp_path):
    """`1.0 / math.sqrt(HEAD_DIM)` (tests/fixtures/triton_unseen/const_math.py, numbers checked against Triton's
    interpreter in CI): a derived float constant whose f64 the launcher computes; `math.sqrt(2.0)` folds; math.sqrt
    of a tile and other math functions are refused with their position (Triton evaluates Python's math on
    constants only)."""
    k = _kernels(tmp_path, """
    import math


    @triton.jit
    def k(x_ptr, y_ptr, HEAD_DIM: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs) / math.sqrt(HEAD_DIM) + math.sqrt(2.0))
    """)[0]
    kr = kernel_result(k, tmp_path / "k.py", "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    derived = {n: e for en in kr.manifest["entries"] for n, e in en.get("derived", {}).items()}
    assert derived == {"F_SQRT_HEAD_DIM": "float(sqrt(HEAD_DIM))"}, derived
    rust = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    assert "1.4142135623730951" in rust
    for body, at, words in (("math.sqrt(x)", "math.sqrt", "not a constexpr"), ("x * math.log(BLOCK)", "math.log", "math.log")):
        path = tmp_path / "bad.py"
        path.write_text(HEAD + "import math\n\n\n@triton.jit\ndef bad(x_ptr, y_ptr, BLOCK: tl.constexpr):\n"
                        "    x = tl.load(x_ptr + tl.arange(0, BLOCK))\n"
                        f"    tl.store(y_ptr + tl.arange(0, BLOCK), {body})\n")
        (_, _, d), = parse_file(path, "bad.py").failures or [(None, None, None)]
        if d is None:  # refused when typed
            (bk,) = parse_file(path, "bad.py").kernels
            d = next(x for x in kernel_result(bk, path, "bad.py").diagnostics if x.severity == "error")
        col = path.read_text().splitlines()[10].index(at) + 1
        assert d.code == "CT101" and words in d.message and (d.pos.line, d.pos.col) == (11, col), (d.text(), body)


# -------------------------------------------------------------------------------------- idioms

def test_a_pointer_tested_by_its_truth_is_an_optional_pointer(tmp_path):
    """`if bias_ptr:` / `if not bias_ptr:` mean `is not None` / `is None` for a pointer parameter: the same
    model as the explicit test (a hidden IS_GIVEN constant), while a scalar flag tested by truth stays a number."""
    from transpiler.model.dump import dump_kernel

    def model(test_given: str, test_none: str) -> str:
        (k,) = _kernels(tmp_path, f"""
        @triton.jit
        def k(x_ptr, b_ptr, y_ptr, flag, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs)
            if {test_given}:
                x += tl.load(b_ptr + offs)
            if {test_none}:
                x = x * 2.0
            if flag:
                x = x + 1.0
            tl.store(y_ptr + offs, x)
        """)
        assert {p.name: p.kind for p in k.params}["flag"] != "array"
        # the source lines the dump quotes aside
        return "\n".join(line for line in dump_kernel(k).splitlines() if "if b_ptr" not in line and "if not" not in line)

    truthy = model("b_ptr", "not b_ptr")
    assert "B_PTR_IS_GIVEN" in truthy
    assert truthy == model("b_ptr is not None", "b_ptr is None")


def test_a_raise_in_a_constexpr_arm_drops_that_specialization(tmp_path):
    """A helper whose last constexpr arm raises (`else: raise ValueError(...)`) is inlined: Triton cannot
    compile the raising specialization, so the port has no entry there (said as a warning), and the others
    translate. A string the helper compares with and no launch gives (`"relu"` here) is a value a launch may
    give: it has its entry too."""
    (k,) = _kernels(tmp_path, """
    @triton.jit
    def _act(x, KIND: tl.constexpr):
        if KIND == "silu":
            return x * tl.sigmoid(x)
        elif KIND == "relu":
            return tl.maximum(x, 0.0)
        else:
            raise ValueError("unknown activation")


    @triton.jit
    def k(x_ptr, y_ptr, KIND: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, _act(tl.load(x_ptr + offs), KIND))


    def launch(x, y):
        k[(1,)](x, y, KIND="silu", BLOCK=128)
        k[(1,)](x, y, KIND="gelu", BLOCK=128)
    """)
    kr = kernel_result(k, tmp_path / "k.py", "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    (warning,) = [d for d in kr.diagnostics if d.code == "CT103"]
    assert warning.severity == "warning" and 'ValueError("unknown activation")' in warning.message
    # ("gelu", "relu", "silu"): "gelu" raises; the others are entries
    assert sorted(kr.entries) == ["k__kind_eq_1", "k__not_kind_eq_1__kind_eq_2"], kr.entries


def test_a_string_constexpr_chosen_for_a_cache_modifier(tmp_path):
    """`MOD: tl.constexpr = ".cg" if STREAMING else ""` then `tl.load(..., cache_modifier=MOD)`: a hint the
    port does not use, so the name holds nothing; read as a value it is refused with a reason."""
    body = """
    @triton.jit
    def k(x_ptr, y_ptr, STREAMING: tl.constexpr, BLOCK: tl.constexpr):
        MOD: tl.constexpr = ".cg" if STREAMING else ""
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, cache_modifier=MOD){}
    """
    _rust(tmp_path, body.format(")"))
    path = tmp_path / "bad.py"
    path.write_text(HEAD + textwrap.dedent(body.format(" + MOD)")))
    fr = parse_file(path, "bad.py")
    (failure,) = [d for _, _, d in fr.failures]
    assert failure.code == "CT100" and "holds a string" in failure.message


def test_a_constexpr_with_an_integer_use_is_an_int(tmp_path):
    """`n_cols: tl.constexpr` passed from a variable, used in `tl.cdiv(n_cols, BLOCK)` and in `1.0 / n_cols`:
    an int constant (the integer use decides; the float expression is folded on the host)."""
    rust = _rust(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, n_cols: tl.constexpr, BLOCK: tl.constexpr):
        inv = 1.0 / n_cols
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs) * inv + tl.cdiv(n_cols, BLOCK))
    """)
    assert "N_COLS_CDIV_BLOCK" in rust and "F_1P0_DIV_N_COLS" in rust


# ------------------------------------------------------------------------------- function aliases

def test_a_function_alias_chosen_at_import_is_resolved_only_where_every_arm_agrees(tmp_path):
    """`fast_tanh = libdevice.tanh` / `tl.math.tanh` in the arms of an undecidable module-level `if` (another
    vendor's arm left out) is libdevice's tanh; a name whose arms name different functions (`maybe_act`: tanh or sigmoid)
    is no alias, and a kernel calling it is refused with the name."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "utils.py").write_text((FIXTURES / "vendor_aliases" / "utils.py").read_text())
    (pkg / "k.py").write_text(HEAD.replace("\n\n\n", "\nfrom .utils import fast_tanh, maybe_act\n\n\n") + textwrap.dedent("""
    @triton.jit
    def uses_tanh(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, fast_tanh(tl.load(x_ptr + offs)))


    @triton.jit
    def uses_act(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, maybe_act(tl.load(x_ptr + offs)))
    """))
    fr = parse_file(pkg / "k.py", "pkg/k.py")
    assert [k.name for k in fr.kernels] == ["uses_tanh"]
    ((name, _, diag),) = fr.failures
    assert name == "uses_act" and diag.code == "CT101" and "maybe_act" in diag.message
    tanh = kernel_result(fr.kernels[0], pkg / "k.py", "pkg/k.py")
    body = "\n".join(line for v in tanh.manifest["views"] for line in v["body"] if not line.strip().startswith("//"))
    # libdevice's tanh: __nv_tanhf's sequence (rules/triton_libdevice.py), its rcp.approx.ftz a divf approx
    assert tanh.status == "translated" and "divf(" in body and "rounding::Approx, ftz::Enabled" in body, \
        tanh.diagnostics


def test_platform_facts_decide_module_constants(tmp_path):
    """A module constant computed from the platform (rules/platform.toml: a CUDA build of PyTorch) is known;
    one computed from anything else is not, and a kernel reading it is refused."""
    head = "import torch\n" + HEAD + "ON_ROCM = tl.constexpr(bool(torch.version.hip))\nNOT_ROCM = torch.version.hip is None\n" \
        "CUDA_VERSION = bool(torch.version.cuda)\n\n\n"
    body = """
    @triton.jit
    def {name}(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        if {flag}:
            x = x * 2.0
        tl.store(x_ptr + offs, x)
    """
    path = tmp_path / "k.py"
    path.write_text(head + "".join(textwrap.dedent(body.format(name=f"k_{f.lower()}", flag=f))
                                   for f in ("ON_ROCM", "NOT_ROCM", "CUDA_VERSION")))
    fr = parse_file(path, "k.py")
    results = {k.name: kernel_result(k, path, "k.py") for k in fr.kernels}
    assert results["k_cuda_version"].status != "translated"
    assert [d.code for d in results["k_cuda_version"].diagnostics] == ["CT103"]
    assert "CUDA_VERSION" in results["k_cuda_version"].diagnostics[0].message
    for name, doubled in (("k_on_rocm", False), ("k_not_rocm", True)):  # the `if` decided, as on the GPU
        assert results[name].status == "translated", results[name].diagnostics
        body = "\n".join(line for v in results[name].manifest["views"] for line in v["body"])
        assert ("2.0f32" in body) == doubled, body


# -------------------------------------------------------------------------------------- unseen libraries, round 2

def test_a_return_inside_an_if_arm_splits_the_kernel_there(tmp_path):
    """`if pid == last: ...; if start >= n: return; ...` (the return nested in an arm that does more) and
    `if ...: store; return / elif ...: return`: the rest of the kernel follows each arm that does not return;
    the stores after the `if` happen only on those paths."""
    rust = _rust(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, start_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        if pid == 3:
            start = tl.load(start_ptr)
            if start >= n:
                return
            tl.store(y_ptr + start, 1.0)
        elif pid == 4:
            return
        tl.store(x_ptr + pid, 2.0)
    """)
    assert "return" not in rust
    # the final store: once after the inner guard's else arm, once after the outer if's else arm (not for pid 4)
    assert rust.count("2.0f32") == 2, rust


def test_softmax_is_composed_as_triton_writes_it(tmp_path):
    """tl.softmax(x) / x.softmax(dim, keep_dims=True): exp(x - max) / sum, the argument evaluated once (a loaded
    argument is loaded once); a dim other than 0 without keep_dims is refused (Triton broadcasts it wrongly)."""
    rust = _rust(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr):
        r = tl.arange(0, R)
        c = tl.arange(0, C)
        p = tl.softmax(tl.load(x_ptr + r[:, None] * C + c[None, :]))
        tl.store(y_ptr + r[:, None] * C + c[None, :], p + tl.load(x_ptr + c).softmax(0))
    """)
    assert rust.count("load_ptr_tko") == 2, rust
    assert re.search(r"reduce_max\(softmax_at\w*, 0i32\)", rust) and "exp(" in rust and "reduce_sum(softmax_num" in rust
    path = tmp_path / "bad.py"
    path.write_text(HEAD + textwrap.dedent("""
    @triton.jit
    def k(x_ptr, R: tl.constexpr, C: tl.constexpr):
        offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
        tl.store(x_ptr + offs, tl.softmax(tl.load(x_ptr + offs), 1))
    """))
    fr = parse_file(path, "bad.py")
    (failure,) = [d for _, _, d in fr.failures]
    assert failure.code == "TTR-SOFTMAX" and "keep_dims=True" in failure.message


def test_member_imports_method_trans_and_negative_tile_steps(tmp_path):
    """`from triton import language as tl` names the module; `x.trans(1, 0)` transposes x (not its first
    argument: was a ZeroDivisionError); `range(K, 0, -BLOCK_K)` counts down where BLOCK_K is a tile size, and
    a negated constexpr that is no tile size stays refused."""
    src = "from triton import jit\nfrom triton import language as tl\n\n\n" + textwrap.dedent("""
    @jit
    def kern(x_ptr, y_ptr, K, R: tl.constexpr, C: tl.constexpr):
        r = tl.arange(0, R)
        c = tl.arange(0, C)
        x = tl.zeros((R, C), dtype=tl.float32)
        for k in range(K, 0, -C):
            x += tl.load(x_ptr + k + r[:, None] * C + c[None, :])
        tl.store(y_ptr + c[:, None] * R + r[None, :], x.trans(1, 0))


    @jit
    def bad(x_ptr, K, STEP: tl.constexpr):
        for k in range(K, 0, -STEP):
            tl.store(x_ptr + k, 1.0)
    """)
    path = tmp_path / "k.py"
    path.write_text(src)
    fr = parse_file(path, "k.py")
    assert [k.name for k in fr.kernels] == ["kern", "bad"]
    kr = kernel_result(fr.kernels[0], path, "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    body = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    assert "permute(x, const_array![1, 0])" in body and "k_step * C" in body.replace("(", "").replace(")", "")
    bad = kernel_result(fr.kernels[1], path, "k.py")
    assert bad.status != "translated" and "negative or zero step" in bad.diagnostics[0].message


def test_static_assert_false_in_a_constexpr_arm_is_a_raise(tmp_path):
    """A helper (with or without a value) whose last constexpr arm is `tl.static_assert(False, ...)`: no entry
    where Triton reaches it, the others translate."""
    (k,) = _kernels(tmp_path, (FIXTURES / "returns.py").read_text().split("import triton.language as tl\n", 1)[1])[-1:]
    kr = kernel_result(k, tmp_path / "k.py", "k.py")
    assert k.name == "policy_store_kernel" and kr.status == "translated", [d.text() for d in kr.diagnostics]
    assert any(d.code == "CT103" and "static_assert(False" in d.message for d in kr.diagnostics)
    assert len(kr.entries) == 2


def test_module_constants_from_imported_constants(tmp_path):
    """`_PAD = tl.constexpr(PAD_TOKEN_ID)` with PAD_TOKEN_ID imported from a sibling module: known (was `not
    defined`)."""
    fr = parse_file(FIXTURES / "imported_consts" / "fill.py", "imported_consts/fill.py")
    (k,) = fr.kernels
    kr = kernel_result(k, FIXTURES / "imported_consts" / "fill.py", "imported_consts/fill.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    body = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    assert re.search(r"convert_scalar\(-1\.0f32\)|-1i32", body) and "0.5f32" in body, body


def test_a_name_with_another_type_in_each_arm_is_refused(tmp_path):
    """`mask = True` in one arm, `mask = offs < n` in the other of a runtime `if` (Triton refuses mismatched types
    there): was declared as a bool scalar, the tile arm's declaration shadowing it, so the loads after used
    `false`. (Under a constexpr `if`, each arm is its own specialization: see the next test.)"""
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent("""
    @triton.jit
    def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        if n % BLOCK == 0:
            mask = True
        else:
            mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
    """))
    (k,) = parse_file(path, "k.py").kernels
    kr = kernel_result(k, path, "k.py")
    assert kr.status != "translated"
    assert [d.code for d in kr.diagnostics] == ["CT104"] and "another type in each arm" in kr.diagnostics[0].message


def test_a_constexpr_if_on_constexpr_arithmetic_is_a_specialization(tmp_path):
    """`if N % BLOCK == 0:` on constexprs is decided when Triton compiles: one entry per arm (the predicate is the
    arithmetic, checked by the launcher), so each arm may give `mask` its own type (`True` or a tile)."""
    rust = _rust(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, n, N: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        if N % BLOCK == 0:
            mask = True
        else:
            mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
    """)
    assert "let mask: bool = true;" in rust and "let mask: Tile<bool, { [BLOCK] }> = " in rust


def test_a_name_bound_to_none_is_an_absent_mask(tmp_path):
    """`mask = None` in a constexpr arm, then `tl.load(..., mask=mask)`: the load of that specialization has no
    mask (was CT103: `mask` not defined). A name bound to a mask before and to None in the arm reads the None
    there, not the older mask; `mask is None` is decided per specialization."""
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent("""
    @triton.jit
    def k(x_ptr, y_ptr, n, EVEN: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        mask = offs < n
        if EVEN:
            mask = None
        x = tl.load(x_ptr + offs, mask=mask, other=1.0)
        if mask is None:
            x = x * 2.0
        tl.store(y_ptr + offs, x, mask=mask)
    """))
    (k,) = parse_file(path, "k.py").kernels
    kr = kernel_result(k, path, "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    views = {v["name"]: "\n".join(v["body"]) for v in kr.manifest["views"]}
    even, odd = views["k__even"], views["k__not_even"]
    assert "Some(" not in even and even.count("None, None, None, Latency") == 1  # the load: no mask
    assert "Some(" in odd and "select(" in odd
    assert " * " in even.split("load_ptr_tko")[1] and " * " not in odd.split("load_ptr_tko")[1]


def test_a_name_bound_to_none_read_otherwise_is_refused(tmp_path):
    """A None value in arithmetic: Triton compiles no such kernel; refused (CT103) with what is allowed."""
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent("""
    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        scale = None
        tl.store(y_ptr + offs, tl.load(x_ptr + offs) * scale)
    """))
    (k,) = parse_file(path, "k.py").kernels
    kr = kernel_result(k, path, "k.py")
    assert kr.status != "translated"
    assert [d.code for d in kr.diagnostics] == ["CT103"] and "is None here" in kr.diagnostics[0].message


def test_dot_out_dtype_of_a_dtype_constexpr_keeps_the_accumulation_type(tmp_path):
    """`tl.dot(a, b, acc, out_dtype=ACC)` with ACC a dtype constexpr (was TTR-DOT): entries where ACC is float32
    (the float operands' accumulation type); ACC = bf16 / f16 have no entry (a bf16 accumulator would not be
    Triton's dot), said as dropped specializations."""
    path = FIXTURES / "dot_out_dtype.py"
    (k,) = parse_file(path, "dot_out_dtype.py").kernels
    kr = kernel_result(k, path, "dot_out_dtype.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    assert kr.entries and all("__acc_f32" in e for e in kr.entries), kr.entries


def test_a_helper_called_for_its_stores_drops_its_unused_results(tmp_path):
    """`_row(...)` as a statement, the helper storing and returning values (was CT100: expression statement has
    no effect): the stores are kept; a helper whose returned expression writes (an atomic) is not dropped."""
    rust = _rust(tmp_path, """
    @triton.jit
    def _row(x_ptr, y_ptr, offs):
        x = tl.load(x_ptr + offs)
        tl.store(y_ptr + offs, x * 2.0)
        return x, x + 1.0

    @triton.jit
    def _count(c_ptr, offs):
        return tl.atomic_add(c_ptr + offs, 1)

    @triton.jit
    def k(x_ptr, y_ptr, c_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        _row(x_ptr, y_ptr, offs)
        _count(c_ptr, offs)
    """)
    assert rust.count("make_partition_view_mut(y_ptr,") == 1 and "atomic_rmw" in rust  # (the tile of the one program: checked)


def test_a_helper_dispatching_to_procedures_and_advancing_its_pointer_params(tmp_path):
    """`return _store_scaled(...)` in constexpr arms, the callee returning nothing (was CT100: returns no value
    but its result is used), and the callee advancing its pointer parameters (`src_ptr = src_ptr + h * s`, was
    TTR-LOAD): every access reads the advanced pointer (no access at the bare `offs`). Each mode stores the
    program's own row (advanced or not): a checked partition in all three entries."""
    path = FIXTURES / "helper_dispatch.py"
    (k,) = parse_file(path, "helper_dispatch.py").kernels
    kr = kernel_result(k, path, "helper_dispatch.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    body = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    assert body.count("make_partition_view_mut(dst_ptr,") == 3 and body.count("load_ptr_tko(") == 3
    assert "store_ptr_tko(" not in body
    assert not re.search(r"addptr_tile\([^,()]+, offs\)", body)
    assert body.count("let _store_scaled") >= 4  # the scaled arms' advanced pointer locals


def test_a_host_tensor_descriptor_is_read_and_its_other_forms_refused(tmp_path):
    """`desc.load([m, k])` of a TensorDescriptor argument (was TTR-DESC: its block shape is set on the host): the
    base pointer with hidden extents and strides, its block (BM, BK) as the launch site ties it
    (tests/test_triton_host_descriptors.py). Offsets that are not a list literal are refused with TTR-DESC."""
    body = """
    @triton.jit
    def k(a_desc, y_ptr, BM: tl.constexpr, BK: tl.constexpr):
        a = a_desc.load(OFFS)
        offs = tl.arange(0, BM)[:, None] * BK + tl.arange(0, BK)[None, :]
        tl.store(y_ptr + offs, a)
    """
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent(body.replace("OFFS", "[tl.program_id(0) * BM, 0]")) + textwrap.dedent("""

    def launch(a, y):
        from triton.tools.tensor_descriptor import TensorDescriptor
        d = TensorDescriptor.from_tensor(a, [bm, bk])
        k[(4,)](d, y, BM=bm, BK=bk)
    """))
    (kernel,) = parse_file(path, "k.py").kernels
    desc = kernel.param("a_desc")
    assert desc.flat and desc.descriptor == (("a_desc_extent0", "a_desc_extent1"), ("a_desc_pitch0",), ("BM", "BK"))
    assert kernel_result(kernel, path, "k.py").status == "translated"
    path.write_text(HEAD + textwrap.dedent(body.replace("OFFS", "pos").replace("):\n", "):\n        pos = [0, 0]\n", 1)))
    fr = parse_file(path, "k.py")
    assert not fr.kernels and [d.code for _, _, d in fr.failures] == ["TTR-DESC"]
    assert "with the offsets written as a list" in fr.failures[0][2].message


def test_a_constexpr_conditional_expression_types_only_the_arm_taken(tmp_path):
    """`s[None, :] if ON_COLS else s[:, None]` with `s` a row or a column by ON_COLS (was CT104: shapes cannot
    be broadcast): one entry per truth value, each with the arm Triton takes."""
    path = FIXTURES / "constexpr_ifexp.py"
    (k,) = parse_file(path, "constexpr_ifexp.py").kernels
    kr = kernel_result(k, path, "constexpr_ifexp.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    views = {v["name"]: "\n".join(v["body"]) for v in kr.manifest["views"]}
    assert "let y_a: Tile<E2, { [1, BN] }> = reshape(s, shape![1, BN]);" in views["scale_by_rows_or_cols_kernel__on_cols"]
    assert "let y_a: Tile<E2, { [BM, 1] }> = reshape(s, shape![BM, 1]);" in views["scale_by_rows_or_cols_kernel__not_on_cols"]


def test_a_scalar_indexed_with_none_is_a_one_element_tile(tmp_path):
    """`pid_n[:, None]` of a scalar (was CT104: more `:` than dimensions): Triton's `:` checks no dimension and
    each `None` inserts one, so the result has shape (1) (`[None, None]`: (1, 1))."""
    rust = _rust(tmp_path, """
    @triton.jit
    def k(s_ptr, t_ptr, stride):
        pid = tl.program_id(0)
        offs = pid[:, None] * stride
        tl.store(s_ptr + offs, 1.0)
        tl.store(t_ptr + pid[None, None], 2.0)
    """)
    # `pid[:, None]` is the (1)-tile `offs`; `pid[None, None]` a (1, 1) reshape of the program id (folded into
    # the pointer tile's offsets, its one reader)
    assert "let offs: Tile<i32, { [1] }> = " in rust and re.search(r"reshape\(\w+, shape!\[1, 1\]\)", rust), rust


def test_an_arm_that_fixes_a_pointers_element_type(tmp_path):
    """A token taken from an integer in one arm and from another pointer in the other (that pointer then holds
    integers, widened as loaded), and a float('-inf') maximum an arm sets to loaded values (that pointer then
    holds float32): were CT104 (another type in each arm / changes type inside the if)."""
    path = FIXTURES / "arm_types.py"
    kernels = {k.name: k for k in parse_file(path, "arm_types.py").kernels}
    pick = kernel_result(kernels["pick_token_kernel"], path, "arm_types.py")
    best = kernel_result(kernels["running_max_kernel"], path, "arm_types.py")
    assert pick.status == best.status == "translated", [d.text() for d in pick.diagnostics + best.diagnostics]
    pick_body = "\n".join(line for v in pick.manifest["views"] for line in v["body"])
    best_body = "\n".join(line for v in best.manifest["views"] for line in v["body"])
    assert "let mut token_: i64 = 0i64;" in pick_body
    assert "PointerTile<*const f32, { [] }> = pointer_to_tile(x_ptr.as_ptr())" in best_body


def test_the_shape_of_a_tile_argument_is_its_static_extent(tmp_path):
    """`M: tl.constexpr = x.shape[0]` in a helper whose `x` is a tile (was CT100: the first argument must be an
    array parameter): the tile's extent, a constant."""
    rust = _rust(tmp_path, """
    @triton.jit
    def _row_sums(x):
        M: tl.constexpr = x.shape[0]
        return tl.sum(x, axis=1) + tl.zeros((M,), dtype=tl.float32)

    @triton.jit
    def k(x_ptr, y_ptr, BM: tl.constexpr, BN: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]).to(tl.float32)
        tl.store(y_ptr + tl.arange(0, BM), _row_sums(x))
    """)
    assert "constant(0.0f32, shape![BM])" in rust or "shape![BM]" in rust


def test_a_pointer_chosen_by_a_conditional_expression(tmp_path):
    """`p = x + (T - 1) if last else x + (i * BT + BT - 1)`, both arms into one tensor (was TTR-LOAD / CT100 'a
    pointer used as a value'): the chosen offsets. Arms into different tensors are a pointer chosen at run time
    (test_pointers_chosen_at_run_time_...); a choice between a pointer and a value is refused."""
    path = FIXTURES / "pointer_ifexp.py"
    (k,) = parse_file(path, "pointer_ifexp.py").kernels
    kr = kernel_result(k, path, "pointer_ifexp.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    body = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    assert "let p_last: i32 = if p_last_b { p_last_c } else { p_last_f };" in body
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent("""
    @triton.jit
    def k(x_ptr, z_ptr, y_ptr, n):
        p = x_ptr + 1 if n > 0 else n
        tl.store(y_ptr, tl.load(p))
    """))
    fr = parse_file(path, "k.py")
    diags = [d for _, _, d in fr.failures] or [d for k in fr.kernels for d in kernel_result(k, path, "k.py").diagnostics]
    assert [d.code for d in diags][:1] == ["CT100"] and "a pointer and a value" in diags[0].message


def test_dot_input_precision_from_a_string_constexpr(tmp_path):
    """`tl.dot(a, b, input_precision=DOT_PRECISION)` with `DOT_PRECISION: tl.constexpr = "tf32x3"` (was TTR-DOT):
    one entry per string it may hold; "tf32x3" computes in float32 (no tf32 rounding of the operands), "tf32"
    rounds them."""
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent("""
    @triton.jit
    def k(a_ptr, b_ptr, c_ptr, B: tl.constexpr, DOT_PRECISION: tl.constexpr = "tf32x3"):
        r = tl.arange(0, B)
        a = tl.load(a_ptr + r[:, None] * B + r[None, :]).to(tl.float32)
        b = tl.load(b_ptr + r[:, None] * B + r[None, :]).to(tl.float32)
        tl.store(c_ptr + r[:, None] * B + r[None, :], tl.dot(a, b, input_precision=DOT_PRECISION))

    def launch(a, b, c):
        k[(1,)](a, b, c, B=16, DOT_PRECISION="tf32")
        k[(1,)](a, b, c, B=16)
    """))
    (k,) = parse_file(path, "k.py").kernels
    kr = kernel_result(k, path, "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    views = {v["name"]: "\n".join(v["body"]) for v in kr.manifest["views"]}
    assert sorted(views) == ["k__dot_precision_eq_0", "k__dot_precision_eq_1"]  # "tf32", "tf32x3"
    assert "tf32" in views["k__dot_precision_eq_0"] and "tf32" not in views["k__dot_precision_eq_1"]


def test_a_pointer_name_rebound_to_another_tensor(tmp_path):
    """`p = dq + o` then `p = dq2 + o` (was CT100: a ported pointer keeps one base): each binding reads its own
    tensor. Rebound in one arm of an `if` and read after it, the tensor depends on the path: a pointer chosen at
    run time (pointer_choice.py); in a loop (which carries one binding) it is refused."""
    path = FIXTURES / "pointer_rebind.py"
    (k,) = parse_file(path, "pointer_rebind.py").kernels
    kr = kernel_result(k, path, "pointer_rebind.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    body = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    # each store is its program's own tile of the tensor its binding names: checked outputs, in program order
    views = dict(re.findall(r"let mut (\w+): PartitionMut<[^=]*= unsafe \{ make_partition_view_mut\((\w+),", body))
    stores = [(views[p], v) for p, v in re.findall(r"store_view_tko_mut\(&mut (\w+), (\w+),", body)]
    assert [t for t, _ in stores] == ["dq", "dq2", "dq"] and len({v for _, v in stores}) == 3, stores
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent("""
    @triton.jit
    def k(a_ptr, b_ptr, y_ptr, n, FLAG: tl.constexpr):
        p = a_ptr + 1
        for i in range(n):
            if i > 0:
                p = b_ptr + i
        tl.store(y_ptr, tl.load(p))
    """))
    fr = parse_file(path, "k.py")
    diags = [d for _, _, d in fr.failures] or [d for k in fr.kernels for d in kernel_result(k, path, "k.py").diagnostics]
    assert [d.code for d in diags] == ["CT100"] and "keeps one base" in diags[0].message


def _accesses(kr) -> list[tuple[str, str]]:
    """(operation, tensor) of each memory access of a translated kernel's Rust, in order."""
    body = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    ptrs, chains = {}, {}
    for name, expr in re.findall(r"let (\w+): PointerTile<[^=]*= ([^;]*);", body):
        typed = re.search(r"reshape_ptr\((\w+)_typed", expr)  # (folded into the chain's first call or not)
        if typed:
            ptrs[name] = typed.group(1)
        elif re.match(r"\w+\((\w+)[,)]", expr):
            chains[name] = re.match(r"\w+\((\w+)[,)]", expr).group(1)

    def root(p):
        while p not in ptrs and p in chains:
            p = chains[p]
        return ptrs.get(p)
    return [(op, root(p)) for op, p in re.findall(r"(load|store|atomic_rmw)_ptr_tko\(\s*(\w+)", body)]


def test_pointers_chosen_at_run_time_access_each_tensor_under_its_condition(tmp_path):
    """tests/fixtures/triton_unseen/pointer_choice.py (its numbers: the reference cases): a pointer chosen between two
    tensors (`tl.where`, the arms of an `if`, `x if c else y`) is one access per tensor, each masked by its arm's
    condition. An `if` whose arms each bind a new name to another tensor read only the else arm's tensor before (a
    wrong port, no diagnostic)."""
    src = (FIXTURES / "pointer_choice.py").read_text()
    path = tmp_path / "all.py"
    path.write_text(src)
    results = {k.name: kernel_result(k, path, "all.py") for k in parse_file(path, "all.py").kernels}
    assert len(results) == 9 and all(r.status == "translated" for r in results.values()), \
        {n: [d.text() for d in r.diagnostics] for n, r in results.items()}
    for kernel, want in (("where_rows_kernel", [("load", "q_ptr"), ("load", "k_ptr"), ("store", "q_out_ptr"),
                                                ("store", "k_out_ptr")]),
                         ("if_arms_kernel", [("load", "a_ptr"), ("load", "b_ptr"), ("store", "a_out_ptr"),
                                             ("store", "b_out_ptr")])):
        path = tmp_path / f"{kernel}.py"
        path.write_text(src)
        (k,) = [k for k in parse_file(path, path.name).kernels if k.name == kernel]
        kr = kernel_result(k, path, path.name)
        assert kr.status == "translated", [d.text() for d in kr.diagnostics]
        assert _accesses(kr) == want, _accesses(kr)
        body = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
        # each access masked by its own arm's condition (and the kernel's mask): four different masks
        masks = re.findall(r"_ptr_tko\(\s*\w+,[^;]*?Some\((\w+)\)", body.replace("\n", " "))
        assert len(masks) == 4 and len(set(masks)) == 4, masks


def test_scalars_a_where_chooses_for_offsets_are_integers_and_others_keep_their_type(tmp_path):
    """`stride = tl.where(is_q, q_stride, k_stride)` used in offsets: the strides are int32 (were float32, then
    TTR-LOAD 'indices must be int32 or int64'); a float chosen beside an integer (`tl.where(m, idx, fill)` stored
    as a float) says nothing of the float, and a scale multiplying a masked tile stays float32."""
    from transpiler.passes.infer import classify_params
    (k,) = _kernels(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, q_stride, k_stride, fill, scale, n, BLOCK: tl.constexpr):
        is_q = tl.program_id(0) < n
        stride = tl.where(is_q, q_stride, tl.where(n > 1, k_stride, 0))
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs * stride)
        y = tl.where(offs < n, x * scale, 0.0)
        tl.store(y_ptr + offs, tl.where(offs < n, offs, fill) + y)
    """)
    dtypes = {p.name: p.dtype for p in classify_params(k).params if p.kind == "scalar"}
    assert dtypes == {"q_stride": "i32", "k_stride": "i32", "fill": "f32", "scale": "f32", "n": "i32"}, dtypes


def test_a_binding_one_arm_made_is_never_chosen_from(tmp_path):
    """`p` bound in the arm of one `if` and rebound to another tensor in the arm of a later one: after the second
    `if`, `p` is defined on one path only (Python: unbound on the other), so it is no choice between two tensors
    (a choice would read the first binding where it was never made: CT103 in sglang's causal_conv1d)."""
    (k,) = _kernels(tmp_path, """
    @triton.jit
    def k(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        if n > 0:
            p = a_ptr + offs
            tl.store(y_ptr + offs, tl.load(p))
        if n > 1:
            p = b_ptr + offs
            tl.store(y_ptr + offs, tl.load(p))
    """)
    kr = kernel_result(k, tmp_path / "k.py", "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    assert _accesses(kr) == [("load", "a_ptr"), ("load", "b_ptr")], _accesses(kr)


@pytest.mark.parametrize("body, words", [
    ("    p = tl.where(n > 0, x_ptr, x_ptr.to(tl.pointer_type(tl.int32)))\n    tl.store(y_ptr, tl.load(p))",
     "need different conversions"),
    ("    p = tl.where(n > 0, x_ptr, n)\n    tl.store(y_ptr, tl.load(p))", "a pointer and a value"),
    # a pointer loaded in one arm: its address exists on that path only
    ("    if n > 0:\n        p = tl.load(x_ptr).to(tl.pointer_type(tl.float32))\n    else:\n        p = z_ptr\n"
     "    tl.store(y_ptr, tl.load(p))", "depending on the path"),
    # a loop body reading the name before binding it reads the previous iteration's tensor
    ("    p = x_ptr\n    for i in range(n):\n        tl.store(y_ptr + i, tl.load(p))\n        p = z_ptr + i",
     "keeps one base"),
    # a pointer parameter rebound to a value in an arm: after the `if`, pointer or value depending on the path
    ("    if n > 0:\n        x_ptr = tl.load(x_ptr)\n    tl.store(y_ptr, x_ptr)", "assigned a non-pointer value"),
])
def test_pointer_choices_the_port_refuses(tmp_path, body, words):
    path = tmp_path / "k.py"
    path.write_text(HEAD + "@triton.jit\ndef k(x_ptr, z_ptr, y_ptr, n):\n" + body + "\n")
    fr = parse_file(path, "k.py")
    diags = [d for _, _, d in fr.failures] or [d for k in fr.kernels for d in kernel_result(k, path, "k.py").diagnostics]
    assert diags and diags[0].code in ("CT100", "TTR-WHERE") and words in diags[0].message, [d.text() for d in diags]


def test_pythons_math_module_in_a_kernel_is_refused_saying_why(tmp_path):
    """`x / math.log(2 * D)`: Triton evaluates Python's math on constexprs when it compiles; refused at the call
    with what to write instead (was TTR-SQRT 'too many arguments' at 1:1: `math` was read as a tensor).
    `math.sqrt(2 * D)` is ported (a derived constant: test_math_sqrt_of_constexprs_...)."""
    path = tmp_path / "k.py"
    for fn, codes in (("log", ["CT101"]), ("sqrt", [])):
        path.write_text("import math\n" + HEAD + textwrap.dedent(f"""
        @triton.jit
        def k(x_ptr, y_ptr, D: tl.constexpr):
            offs = tl.arange(0, D)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs) / math.{fn}(2 * D))
        """))
        fr = parse_file(path, "k.py")
        diags = [d for _, _, d in fr.failures] or [d for k in fr.kernels for d in kernel_result(k, path, "k.py").diagnostics
                                                   if d.severity == "error"]
        assert [d.code for d in diags] == codes, (fn, [d.text() for d in diags])
        if codes:
            assert "Python's math module" in diags[0].message and diags[0].pos.line == 10  # the call, not 1:1


def test_a_reshape_equal_only_for_some_constants_is_a_variant_for_them(tmp_path):
    """tests/fixtures/triton_unseen/reshape_counts.py: `(ROWS, BLOCK)` into `(ROWS, WARPS, 2, 16)` gets one entry
    whose predicate is that the counts are equal (its C symbol refuses other constants: test_abi); a reshape of
    literal shapes with other counts is refused (CT104), where it failed cuTile Rust's JIT before."""
    fixture = FIXTURES / "reshape_counts.py"
    (k,) = parse_file(fixture, fixture.name).kernels
    kr = kernel_result(k, fixture, fixture.name)
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    assert kr.entries == ["lane_order_sum_kernel__block_eq_32_mul_warps"]  # ROWS, common to both counts, left out
    # the predicate decides a later `if` on the same constant: one entry (before, `ROWS * WARPS == ROWS * 4` left
    # `if WARPS == 4` open, and its `not` arm was an entry only ROWS = 0 selects, which no tile can have)
    (decided,) = _kernels(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, ROWS: tl.constexpr, WARPS: tl.constexpr):
        rows = tl.arange(0, ROWS)
        x = tl.load(x_ptr + rows[:, None] * WARPS + tl.arange(0, WARPS)[None, :])
        s = tl.sum(tl.sum(tl.reshape(x, (ROWS, 2, 2)), axis=2), axis=1)
        if WARPS == 4:
            s = s * 2.0
        tl.store(y_ptr + rows, s)
    """, name="decided.py")
    kr = kernel_result(decided, tmp_path / "decided.py", "decided.py")
    assert kr.status == "translated" and kr.entries == ["k__warps_eq_4"], (kr.entries, kr.diagnostics)
    # and verification has a specialization that selects that single entry (the defaults, 64, do not)
    from transpiler.verify.specs import predicates_hold
    (entry,) = kr.manifest["entries"]
    assert any(predicates_hold(entry["predicates"], s) for s in kr.manifest["specializations"]), kr.manifest
    (bad,) = _kernels(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr):
        x = tl.load(x_ptr + tl.arange(0, 64))
        tl.store(y_ptr + tl.arange(0, 32), tl.sum(tl.reshape(x, (2, 16)), axis=0))
    """)
    kr = kernel_result(bad, tmp_path / "k.py", "k.py")
    assert kr.status == "unsupported" and [d.code for d in kr.diagnostics] == ["CT104"]
    assert "a reshape of 64 elements (64) into 32 (2, 16)" in kr.diagnostics[0].message


def test_feature_tests_at_import_are_decided_for_triton_3_6(tmp_path):
    """`hasattr(triton.language, "gather")` (a Triton version feature) is decided for Triton 3.6, also through
    a chain of imports from other modules of the package (fixtures/triton_unseen/feature_tests): the helper of
    the arm Triton 3.6 takes is ported (x * 0.5, not the other arm's x * 0.25), and `make_desc` is
    tl.make_tensor_descriptor. A device query (`vendor() == "acme"`) stays undecided: a kernel calling the
    helper it guards is refused with its name."""
    pkg = tmp_path / "feature_tests"
    shutil.copytree(FIXTURES / "feature_tests", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    fr = parse_file(pkg / "kernels.py", "feature_tests/kernels.py")
    assert not fr.failures, [d.message for _, _, d in fr.failures]
    k, dot = fr.kernels
    res = kernel_result(k, pkg / "kernels.py", "feature_tests/kernels.py")
    body = "\n".join(line for v in res.manifest["views"] for line in v["body"])
    assert res.status == "translated" and "0.5f32" in body and "0.25f32" not in body, body
    # a platform fact every GPU agrees on (backend() through @functools.cache and a `try`, capability >= 8):
    # DOT_PRECISION is "tf32", the dot converts its f32 operands to tf32 (ieee would not)
    res = kernel_result(dot, pkg / "kernels.py", "feature_tests/kernels.py")
    body = "\n".join(line for v in res.manifest["views"] for line in v["body"])
    assert res.status == "translated" and "tf32" in body, [d.text() for d in res.diagnostics]
    ops = (pkg / "ops.py").read_text()
    (pkg / "ops.py").write_text(ops.replace('tl.constexpr("tf32")', 'tl.constexpr("ieee ")'))
    fr = parse_file(pkg / "kernels.py", "feature_tests/kernels.py")  # the arm taken is the tf32 one (mutant)
    assert [(name, d.code) for name, _, d in fr.failures] == [("square_tile_kernel", "TTR-DOT")]
    (pkg / "ops.py").write_text(ops)
    (pkg / "vendor.py").write_text(HEAD + "from .ops import vendor_scale\n\n\n" + textwrap.dedent("""
    @triton.jit
    def scaled(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, vendor_scale(tl.load(x_ptr + offs)))
    """))
    fr = parse_file(pkg / "vendor.py", "feature_tests/vendor.py")
    ((name, _, diag),) = fr.failures
    assert name == "scaled" and diag.code == "CT101" and "vendor_scale" in diag.message
    # a fact that differs between the GPUs a port runs on (capability 9: sm_90 only) is not decided
    (pkg / "vendor.py").write_text((pkg / "vendor.py").read_text().replace("vendor_scale", "hopper_scale"))
    fr = parse_file(pkg / "vendor.py", "feature_tests/vendor.py")
    ((name, _, diag),) = fr.failures
    assert name == "scaled" and diag.code == "CT101" and "hopper_scale" in diag.message


def test_platform_values_are_decided_where_every_gpu_agrees():
    """config_value over the GPUs of rules/platform.toml: a capability test true on all of them is decided, one
    true on some is not; the backend and a package function returning it (under a cache, in a try) are."""
    import libcst as cst
    from transpiler.frontend.common import Converter as _Converter
    from transpiler.frontend.module_config import UNDECIDED, returned_expression
    from transpiler.frontend.platform import gpu_worlds
    assert {w["torch.cuda.get_device_capability()"] for w in gpu_worlds()} >= {(8, 0), (9, 0), (10, 0), (12, 0)}
    conv = _Converter.__new__(_Converter)
    conv.info = type("I", (), {"aliases": {"torch": "torch", "triton": "triton"}, "consts": {}})()
    conv.config_names, conv.import_context = {}, None
    test = lambda text: conv._config_test(cst.parse_expression(text))
    assert test("torch.cuda.get_device_capability()[0] >= 8") is True
    assert test("torch.cuda.get_device_capability(0)[0] < 8") is False
    assert test("torch.cuda.get_device_capability()[0] == 9") is UNDECIDED
    assert test("torch.cuda.get_device_capability() >= (9, 0)") is UNDECIDED
    assert test("triton.runtime.driver.active.get_current_target().arch >= 80") is True
    assert test("triton.runtime.driver.active.get_current_target().arch == 90") is UNDECIDED
    assert test("'cuda' if triton.runtime.driver.active.get_current_target().backend == 'cuda' else 'x'") == "cuda"
    assert test("torch.cuda.get_device_name(0) == 'NVIDIA H200'") is UNDECIDED
    assert test("torch.cuda.get_device_capability(1, 2)[0] >= 8") is UNDECIDED  # not the device index form
    code = cst.Module([]).code_for_node
    dotted = lambda n: code(n) if code(n) == "functools.cache" else None
    fn = cst.parse_module('@functools.cache\ndef f():\n    """doc"""\n    try:\n        return X\n'
                          '    except Exception:\n        return "cpu"\n').body[0]
    assert code(returned_expression(fn, dotted)) == "X"
    for src in ("def f(x):\n    return X\n", "@other\ndef f():\n    return X\n",
                "def f():\n    y = 1\n    return X\n", "def f():\n    try:\n        return X\n    finally:\n        pass\n"):
        assert returned_expression(cst.parse_module(src).body[0], dotted) is None, src


def test_a_constexpr_if_on_a_local_constexpr_has_predicates_over_the_constants(tmp_path):
    """`if K % GROUP_CTA == 0` with `GROUP_CTA: tl.constexpr = GROUP * PER_CTA`: each variant's predicate is over
    K, GROUP and PER_CTA (the local expanded), so the C symbol selects an entry (before: the predicate named the
    local, the kernel got no C symbol and no specialization selected an entry)."""
    path = FIXTURES / "local_constexpr_if.py"
    fr = parse_file(path, "local_constexpr_if.py")
    (k,) = fr.kernels
    res = kernel_result(k, path, "local_constexpr_if.py")
    assert res.status == "translated" and not res.diagnostics, [d.text() for d in res.diagnostics]
    preds = sorted(p for e in res.manifest["entries"] for p in e["predicates"])
    assert preds == ["((K) % (((GROUP) * (PER_CTA)))) == 0", "not (((K) % (((GROUP) * (PER_CTA)))) == 0)"], preds
    assert res.manifest["abi"] is True  # a C symbol and a wrapper (False: CT109, no specialization selects)
    # and each entry is selected by a specialization the verifier checks (its predicates over the constants)
    for e in res.manifest["entries"]:
        assert any(all(eval(p, {}, dict(spec)) for p in e["predicates"])
                   for spec in res.manifest["specializations"]), (e["name"], res.manifest["specializations"])


# -------------------------------------------------------------------------------------- integer matmuls

_INT_DOT = """
@triton.jit
def k(a_ptr, b_ptr, c_ptr, K, B: tl.constexpr):
    r = tl.arange(0, B)
    acc = tl.zeros((B, B), dtype=tl.int32)
    for k0 in range(0, K, B):
        a = tl.load(a_ptr + r[:, None] * K + (k0 + r)[None, :])
        b = tl.load(b_ptr + (k0 + r)[:, None] * B + r[None, :])
        DOT
    tl.store(c_ptr + r[:, None] * B + r[None, :], acc)
"""


def _arrays(kr) -> dict[str, str]:
    return {p["name"]: p["dtype"] for p in kr.manifest["params"] if p["kind"] == "array"}


@pytest.mark.parametrize("dot", ["acc += tl.dot(a, b)", "acc = tl.dot(a, b, acc, out_dtype=tl.int32)",
                                 "acc += tl.dot(a, b, out_dtype=tl.int32)",
                                 "if k0 > 0:\n            acc += tl.dot(a, b)"])
def test_an_int32_dot_takes_int8_operands(tmp_path, dot):
    """A dot of pointers' elements that must be int32 (an int32 accumulator carried through the loop or an `if`,
    or `out_dtype=tl.int32`): Triton compiles it only where the pointers hold int8 (a float dot is float32, and
    the carried value cannot change type), so they are int8 (the launcher refuses other dtypes; the written
    pointer keeps its generic) and the dot is mmai with an int32 accumulator."""
    (k,) = _kernels(tmp_path, _INT_DOT.replace("DOT", dot))
    kr = kernel_result(k, tmp_path / "k.py", "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    assert _arrays(kr) == {"a_ptr": "i8", "b_ptr": "i8", "c_ptr": "E"}
    assert len(kr.entries) == 1  # no entry per float dtype (the float dot's tf32 split is moot)
    rust = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    assert re.search(r"mmai\(a, b, \w+, signedness::Signed, signedness::Signed\)", rust), rust
    assert "mmaf" not in rust


def test_a_float_dot_into_a_float_accumulator_keeps_the_float_dtypes(tmp_path):
    (k,) = _kernels(tmp_path, _INT_DOT.replace("dtype=tl.int32", "dtype=tl.float32").replace("DOT", "acc += tl.dot(a, b)"))
    kr = kernel_result(k, tmp_path / "k.py", "k.py")
    assert kr.status == "translated" and _arrays(kr)["a_ptr"] == "E", _arrays(kr)


@pytest.mark.parametrize("dot, words", [
    ("acc = tl.dot(a, b, acc)", "needs `out_dtype=tl.int32`"),  # Triton asserts acc's dtype == out_dtype (f32)
    ("acc += tl.dot(a.to(tl.uint8), b.to(tl.uint8))", "int8 as its only integer operand type"),
    ("acc += tl.dot(a.to(tl.int16), b.to(tl.int16))", "int8 as its only integer operand type"),
    ("acc += tl.dot(a, b).to(tl.float32)", "changes type inside the loop"),
])
def test_integer_dots_triton_refuses_are_refused_at_their_line(tmp_path, dot, words):
    path = tmp_path / "bad.py"
    path.write_text(HEAD + _INT_DOT.replace("DOT", dot))
    (k,) = parse_file(path, "bad.py").kernels
    kr = kernel_result(k, path, "bad.py")
    assert kr.status == "unsupported"
    (d,) = [d for d in kr.diagnostics if d.severity == "error"]
    assert words in d.message, d.message
    assert d.pos.line == (13 if "changes type" not in words else 10), d.pos


def test_a_counted_down_loop_is_diagnosed_at_the_loop(tmp_path):
    """`for k in range(K, 0, -B)` is rewritten to count up: a diagnostic about the loop points at it (was 1:1)."""
    path = tmp_path / "down.py"
    path.write_text(HEAD + _INT_DOT.replace("range(0, K, B)", "range(K, 0, -B)")
                    .replace("DOT", "acc += tl.load(a_ptr + r[:, None] * K + r[None, :]).to(tl.float32)"))
    (k,) = parse_file(path, "down.py").kernels
    kr = kernel_result(k, path, "down.py")
    (d,) = kr.diagnostics
    assert d.code == "CT104" and (d.pos.line, d.pos.col) == (10, 5), d.text()


def _diagnostics(tmp_path, body: str):
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent(body))
    fr = parse_file(path, "k.py")
    results = [kernel_result(k, path, "k.py") for k in fr.kernels]
    return {name: d for name, _, d in fr.failures}, results


def test_pointer_casts_and_loaded_pointers(tmp_path):
    """`p.to(tl.pointer_type(T))` reads the parameter's buffer as T (one `ptr_to_ptr` per element type, offsets
    counting T's elements); `tl.load(table + g).to(tl.pointer_type(T))` is an address held in a local and
    accessed through `int_to_ptr`; an integer table is made int64 (its values are addresses)."""
    failures, results = _diagnostics(tmp_path, """
    @triton.jit
    def k(w_ptr, table, rows_ptr, out_ptr, n, BLOCK: tl.constexpr):
        w_ptr = w_ptr.to(tl.pointer_type(tl.uint8))
        offs = tl.arange(0, BLOCK)
        words = tl.load(w_ptr.to(tl.pointer_type(tl.int32)) + offs, mask=offs < n, other=0)
        g = tl.program_id(0)
        base = tl.load(table + g).to(tl.pointer_type(tl.float16))
        x = tl.load(base + offs, mask=offs < n, other=0.0)
        tl.store(base + offs, x * 2, mask=offs < n)
        tl.store(out_ptr + offs, x.to(tl.float32) + words.to(tl.float32), mask=offs < n)
    """)
    assert not failures
    (kr,) = results
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    body = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    assert re.search(r"PointerTile<\*mut i32, \{ \[\] \}> = ptr_to_ptr\(w_ptr_raw\)", body)
    assert "PointerTile<*mut u8" in body and body.count("= ptr_to_ptr(w_ptr_raw)") == 1  # w's own type unused
    assert re.search(r"let base_addr: i64 = ", body)
    # the address as a pointer once: the load and the store read one pointer tile (an equal value is reused)
    assert body.count("PointerTile<*mut f16, { [] }> = int_to_ptr(") == 1
    (ptrs,) = re.findall(r"let (\w+): PointerTile<\*mut f16, \{ \[BLOCK\] \}> = ", body)
    assert re.search(rf"load_ptr_tko\(\s*{ptrs},", body) and re.search(rf"store_ptr_tko\(\s*{ptrs},", body), body
    params = {p["name"]: p for p in kr.manifest["params"]}
    assert params["table"]["dtype"] == "i64"  # an address table is int64, not a generic


@pytest.mark.parametrize("body, code, words", [
    ("""
    @triton.jit
    def k(table, out_ptr, DT: tl.constexpr):
        base = tl.load(table).to(tl.pointer_type(DT))
        tl.store(out_ptr, tl.load(base))
    """, "TTR-PTRCAST", "named literally"),
    ("""
    @triton.jit
    def k(x_ptr, out_ptr):
        w = (x_ptr + 4).to(tl.pointer_type(tl.int32))
        tl.store(out_ptr, tl.load(w))
    """, "TTR-PTRCAST", "cast the pointer first"),
    ("""
    @triton.jit
    def k(x_ptr, out_ptr):
        t = tl.pointer_type(tl.int32)
        tl.store(out_ptr, tl.load(x_ptr))
    """, "TTR-PTRCAST", "target of a pointer cast"),
    ("""
    @triton.jit
    def k(idx_ptr, out_ptr):
        a = tl.load(idx_ptr).to(tl.int32)
        base = a.to(tl.pointer_type(tl.float32))
        tl.store(out_ptr, tl.load(base))
    """, "TTR-PTRCAST", "must be int64"),
    ("""
    @triton.jit
    def k(p, out_ptr, n):
        acc = 0.0
        for i in range(n):
            acc += tl.load(p + i).to(tl.float32)
            p = p.to(tl.pointer_type(tl.uint8))
        tl.store(out_ptr, acc)
    """, "CT100", "keeps one base"),
])
def test_pointer_casts_the_port_refuses(tmp_path, body, code, words):
    failures, results = _diagnostics(tmp_path, body)
    diags = list(failures.values()) or [d for kr in results for d in kr.diagnostics]
    assert [d.code for d in diags] == [code], [d.text() for d in diags]
    assert words in diags[0].message


def test_a_helper_recasts_its_pointer_argument(tmp_path):
    """A helper that recasts its pointer parameter (`split_ptrs = split_ptrs.to(tl.pointer_type(tl.int64))`) and
    loads a peer's pointer from it, as symmetric-memory kernels do: the recast parameter has no offsets."""
    failures, results = _diagnostics(tmp_path, """
    @triton.jit
    def _peer_count(split_ptrs, rank, peer, WORLD: tl.constexpr):
        split_ptrs = split_ptrs.to(tl.pointer_type(tl.int64))
        peer_splits = tl.load(split_ptrs + peer).to(tl.pointer_type(tl.int64))
        offs = tl.arange(0, WORLD)
        return tl.sum(tl.load(peer_splits + offs, mask=offs < rank, other=0))

    @triton.jit
    def k(split_ptrs, out_ptr, rank, WORLD: tl.constexpr):
        peer = tl.program_id(0)
        tl.store(out_ptr + peer, _peer_count(split_ptrs, rank, peer, WORLD))
    """)
    assert not failures
    (kr,) = results
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    body = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    assert "PointerTile<*mut i64, { [] }> = ptr_to_ptr(split_ptrs_raw)" in body
    assert body.count("int_to_ptr(") == 1


# -------------------------------------------------------------------------------------- numbers of the fixtures

@requires_toolchain
def test_fixtures_with_reference_cases_match_triton_by_their_numbers(tmp_path):
    """Every fixture of tests/fixtures/triton_unseen that has reference cases (tools/triton_reference.py, Triton's
    interpreter) is ported, built, compiled to Tile IR and interpreted on each case by verify: every case
    matches (the corpus has its own test in test_triton.py; these fixtures are not in the corpus)."""
    import json
    from test_triton_refs import CASES, TOOL
    from transpiler.pipeline import write_outputs
    from transpiler.verify.run import verify_output
    modules = sorted({c["module"].rsplit(".", 1)[1] for c in CASES if c["module"].startswith(TOOL.UNSEEN_PKG)})
    assert {"float_atomics", "int8_matmul", "pointer_tables"} <= set(modules), modules
    src = tmp_path / "src"
    src.mkdir()
    for m in modules:
        shutil.copy(FIXTURES / f"{m}.py", src / f"{m}.py")  # the same bytes: verify compares with their cases
    result, outputs = run([src], tmp_path / "out")
    write_outputs(outputs)
    assert all(k.status == "translated" for k in result.kernels), \
        [(k.name, [d.text() for d in k.diagnostics]) for k in result.kernels]
    verdicts = verify_output(tmp_path / "out")
    cases = {c["id"] for c in CASES if c["module"].startswith(TOOL.UNSEEN_PKG)}
    checked = {c.entry: c.verdict for v in verdicts
               for c in v.checks if c.verdict in ("numbers_match", "numbers_differ", "not_interpreted")}
    assert set(checked) == cases, sorted(set(checked) ^ cases)
    bad = {k: v for k, v in checked.items() if v != "numbers_match"}
    assert not bad, json.dumps(bad, indent=1)


@pytest.mark.parametrize("op, on_bits, on_negative", [("atomic_max", "Max", "Umin"), ("atomic_min", "Min", "Umax")])
def test_a_float_atomic_extremum_is_two_integer_atomics_as_triton_lowers_it(tmp_path, op, on_bits, on_negative):
    """`tl.atomic_max` / `tl.atomic_min` of floats: Triton 3.6 (language/semantic.py) runs a signed atomic on the
    int32 view where the value's sign bit is clear and the unsigned opposite on the uint32 view where it is set;
    the port does the same, each under the caller's mask, the value computed once; the pointer is float32 (Triton
    refuses f16/bf16 there), so its generic is fixed."""
    (k,) = _kernels(tmp_path, f"""
    @triton.jit
    def k(x_ptr, m_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.{op}(m_ptr + offs, tl.load(x_ptr + offs) * 2.0, mask=offs < n)
    """)
    kr = kernel_result(k, tmp_path / "k.py", "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    rust = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    assert rust.count("atomic_rmw_tko(") == 2
    assert f"atomic::{on_bits}," in rust and f"atomic::{on_negative}," in rust
    assert "PointerTile<*mut i32" in rust and "PointerTile<*mut u32" in rust
    assert rust.count("convert_scalar(2.0f32)") == 1, rust  # the value once (bound before the atomics)
    assert rust.index("// tl.") < rust.index("bitcast("), rust  # the statement's comment above all it computes
    assert {p["name"]: p["dtype"] for p in kr.manifest["params"] if p["kind"] == "array"}["m_ptr"] == "f32"


def test_element_ty_through_the_type_of_a_pointer_or_a_tile(tmp_path):
    """`y_ptr.type.element_ty` is `y_ptr.dtype.element_ty` (a pointer's type is its dtype) and `x.type.element_ty`
    of a tile is x's dtype: conversions to them translate like the `.dtype` forms."""
    def body(expr):
        return f"""
    @triton.jit
    def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        t = x.to(tl.float32) * 2.0
        tl.store(y_ptr + offs, t.to({expr}), mask=offs < n)
    """
    for sub in "abcd":
        (tmp_path / sub).mkdir()
    via_dtype = _rust(tmp_path / "a", body("y_ptr.dtype.element_ty"))
    assert _rust(tmp_path / "b", body("y_ptr.type.element_ty")) == via_dtype
    assert _rust(tmp_path / "c", body("x.type.element_ty")) == _rust(tmp_path / "d", body("x.dtype"))


def test_a_local_named_like_a_module_function_is_the_local_unless_the_kernel_calls_that_name(tmp_path):
    """`sum = tl.sum(x, 0)` in a module that defines a host function `sum`: Python scopes `sum` as the kernel's
    local, so every use reads it (the host function is never reached); a kernel that also calls `scale(...)`
    while binding a local `scale` is refused (the call would read the local)."""
    (tmp_path / "a").mkdir()
    (k,) = _kernels(tmp_path / "a", """
    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        sum = tl.sum(x, axis=0)
        tl.store(y_ptr, sum)


    def sum(x):
        return x.sum()
    """)
    kr = kernel_result(k, tmp_path / "a" / "k.py", "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    (tmp_path / "b").mkdir()
    path = tmp_path / "b" / "k.py"
    path.write_text(HEAD + textwrap.dedent("""
    @triton.jit
    def scale(v):
        return v * 2.0


    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        scale = scale(x)
        tl.store(y_ptr + tl.arange(0, BLOCK), scale)
    """))
    fr = parse_file(path, "k.py")
    assert [(n, d.code) for n, _, d in fr.failures] == [("k", "CT100")], fr.failures
    assert "shadows the module-level function `scale`" in fr.failures[0][2].message


@requires_toolchain
def test_helpers_called_through_a_module_of_the_package(tmp_path):
    """`from pkg import lang` / `from . import lang as L`, then `lang.program_id(0)` and `L.load_scaled(ptrs, ...)`:
    the helpers of that module are inlined as directly imported ones are (a pointer passed through included), and
    the port compiles; a name the module does not define stays CT101."""
    pkg = tmp_path / "module_alias_pkg"
    shutil.copytree(FIXTURES / "module_alias_pkg", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    from transpiler.pipeline import write_outputs
    from transpiler.verify.run import verify_output
    result, outputs = run([pkg], tmp_path / "out")
    (k,) = result.kernels
    assert k.status == "translated", [d.text() for d in k.diagnostics]
    write_outputs(outputs)
    (v,) = verify_output(tmp_path / "out")
    assert v.verdict == "compiled", (v.verdict, v.reason)
    (pkg / "ops.py").write_text((pkg / "ops.py").read_text().replace("lang.program_id(0)", "lang.block_id(0)"))
    fr = parse_file(pkg / "ops.py", "module_alias_pkg/ops.py")
    ((name, _, diag),) = fr.failures
    assert diag.code == "CT101" and "block_id" in diag.message, diag.message


@pytest.mark.parametrize("test, taken", [
    ('version.parse(triton.__version__) >= version.parse("3.0.0")', "0.5"),
    ('version.parse(triton.__version__) < version.parse("3.10")', "0.5"),  # numeric, not string, order
    ('Version(triton.__version__) >= Version("3.7")', "0.25"),
])
def test_module_level_triton_version_tests_are_decided_for_3_6(tmp_path, test, taken):
    """`if version.parse(triton.__version__) >= version.parse("3.0.0"):` around two definitions of a helper (a
    library supporting several Triton versions): decided for Triton 3.6, the version the port targets; the arm
    taken is the helper ported."""
    src = HEAD + "from packaging import version\nfrom packaging.version import Version\n\n" + \
        f"NEW = {test}\n\n" + textwrap.dedent("""
    if NEW:
        @triton.jit
        def act(x):
            return x * 0.5
    else:
        @triton.jit
        def act(x):
            return x * 0.25


    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, act(tl.load(x_ptr + offs)))
    """)
    (tmp_path / "k.py").write_text(src)
    fr = parse_file(tmp_path / "k.py", "k.py")
    assert not fr.failures, [d.message for _, _, d in fr.failures]
    (k,) = fr.kernels
    kr = kernel_result(k, tmp_path / "k.py", "k.py")
    body = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    other = "0.25" if taken == "0.5" else "0.5"
    assert f"{taken}f32" in body and f"{other}f32" not in body, body


def test_a_library_decorator_above_triton_jit_is_a_host_wrapper_and_one_below_is_refused(tmp_path):
    """`@libentry()` (an op library's launch cache) above `@triton.jit` receives the compiled kernel object: the
    device code is the function's, so the kernel is ported with a CT112 warning saying how launches through it are
    routed; a decorator below `@triton.jit` changes the function Triton compiles: CT112 error."""
    path = tmp_path / "k.py"
    path.write_text(HEAD + "from .utils import libentry, trace\n\n\n" + textwrap.dedent("""
    @libentry()
    @triton.jit
    def above(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)


    @triton.jit
    @trace
    def below(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)
    """))
    result, _ = run([path], tmp_path / "out")
    got = {k.name: (k.status, [(d.severity, d.code) for d in k.diagnostics]) for k in result.kernels}
    assert got == {"above": ("translated", [("warning", "CT112")]), "below": ("unsupported", [("error", "CT112")])}, got
    below = next(k for k in result.kernels if k.name == "below")
    assert "below `@triton.jit`" in below.diagnostics[0].message and below.diagnostics[0].pos.line == 17


# -------------------------------------------------------------------------------------- unseen libraries, round 3

def _array_params(kr) -> dict:
    return {p["name"]: (p["dtype"], tuple(p.get("domain") or ())) for p in kr.manifest["params"]
            if p["kind"] == "array"}


def test_a_bitcast_of_loaded_words_fixes_only_their_pointers_to_int32(tmp_path):
    """`(v + 0x4B400000).to(tl.float32, bitcast=True)` of values loaded from integer pointers: Triton compiles it
    only for 32-bit loads, so those pointers are int32 (their loads not widened to int64); an integer pointer
    whose values only index keeps int32 and int64 (tests/fixtures/triton_unseen/int_bitcast.py has numbers)."""
    failures, results = _diagnostics(tmp_path, """
    @triton.jit
    def k(w_ptr, idx_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        row = tl.load(idx_ptr + offs)
        w = tl.load(w_ptr + row)
        v = (w >> 4) & 15
        tl.store(out_ptr + offs, (v + 0x4B400000).to(tl.float32, bitcast=True) - 12582912.0)
    """)
    assert not failures
    (kr,) = results
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    params = _array_params(kr)
    assert params["w_ptr"] == ("i32", ()), params
    assert params["idx_ptr"][1] == ("i32", "i64", "u8", "i16", "bool"), params  # (its values only index)
    body = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    assert re.search(r"\(w_a, w_tok\): \(Tile<i32, \{ \[BLOCK\] \}>, Token\)", body), body  # loaded as int32
    assert "Tile<i64" not in body.split("// w = ")[1].split("// tl.store")[0], body
    assert re.search(r"Tile<f32, \{ \[BLOCK\] \}> = bitcast\(", body), body


@pytest.mark.parametrize("body, code, words", [
    ("""
    @triton.jit
    def k(w_ptr, out_ptr, BLOCK: tl.constexpr):
        w = tl.load(w_ptr + tl.arange(0, BLOCK))
        tl.store(out_ptr + tl.arange(0, BLOCK), ((w >> 1) & 7).to(tl.float16, bitcast=True))
    """, "TTR-BITCAST", "int16"),
    ("""
    @triton.jit
    def k(x_ptr, out_ptr):
        x = tl.load(x_ptr + tl.arange(0, 128))
        y = tl.permute(tl.reshape(x, (2, 2, 2, 2, 2, 2, 2)), (1, 0, 2, 3, 4, 5, 6))
        tl.store(out_ptr + tl.arange(0, 128), tl.reshape(y, (128,)))
    """, "CT107", "rank 7"),
])
def test_narrow_bitcasts_and_high_ranks_the_port_refuses(tmp_path, body, code, words):
    failures, results = _diagnostics(tmp_path, body)
    diags = list(failures.values()) or [d for kr in results for d in kr.diagnostics]
    assert [d.code for d in diags] == [code], [d.text() for d in diags]
    assert words in diags[0].message


def test_an_integer_where_condition_of_an_expression_is_compared_with_zero(tmp_path):
    """`tl.where(is_init[:, None], -1e6, g)` with an int32 tile reshaped in the condition (lmdeploy's gated delta
    preprocessing): Triton compares it with 0; the comparison is built on the typed condition (inferring the
    typed `[:, None]` again failed: CT900)."""
    (k,) = _kernels(tmp_path, """
    @triton.jit
    def k(m_ptr, g_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        is_init = tl.load(m_ptr + offs)
        g = tl.load(g_ptr + offs[:, None] * BLOCK + offs[None, :])
        g = tl.where(is_init[:, None], -1.0e6, g)
        tl.store(g_ptr + offs[:, None] * BLOCK + offs[None, :], g)
    """)
    r = kernel_result(k, tmp_path / "k.py", "k.py")
    body = "\n".join(line for v in r.manifest["views"] for line in v["body"])
    assert r.status == "translated", [d.text() for d in r.diagnostics]
    assert "predicate::NotEqual" in body


def test_a_discarded_expression_runs_each_atomic_it_holds_once(tmp_path):
    """`tl.atomic_add(p, tl.atomic_add(q, 1.0)) * 2.0` as a statement: its value is discarded, its atomics run
    once each (the inner one as the outer's argument, not again as a statement of its own)."""
    rust = _rust(tmp_path, """
    @triton.jit
    def k(p_ptr, q_ptr):
        tl.atomic_add(p_ptr, tl.atomic_add(q_ptr, 1.0)) * 2.0
    """)
    assert rust.count("atomic_rmw_tko(") == 2, rust


def test_a_block_pointer_of_another_shape_per_arm_is_read_in_its_arm_only(tmp_path):
    """tests/fixtures/triton_unseen/block_ptr_arms.py binds `p_h0` to a [BV, BK] block in one arm and a [BK, BV]
    block in the other (numbers checked against Triton's interpreter in CI): each arm reads its own. Read after
    the constant `if` too, what follows it is copied into each arm (test_block_pointers_of_other_shapes_per_
    constant_arm_are_read_in_copies_of_what_follows; after a runtime `if` it stays refused)."""
    path = tmp_path / "k.py"
    src = (FIXTURES / "block_ptr_arms.py").read_text()
    path.write_text(src)
    (k,) = parse_file(path, "k.py").kernels
    assert kernel_result(k, path, "k.py").status == "translated"
    use = "    b_h += tl.load(p_h0, boundary_check=(0, 1), padding_option=\"zero\").to(tl.float32)\n"
    path.write_text(src.replace("    p_o = tl.make_block_ptr", use + "    p_o = tl.make_block_ptr"))
    assert not parse_file(path, "k.py").failures
    # bound again after the `if` (one shape from there on): ported
    path.write_text(src.replace("    p_o = tl.make_block_ptr",
                                "    p_h0 = tl.make_block_ptr(h0, (K, V), (V, 1), (0, v_start), (BK, BV), (1, 0))\n"
                                + use + "    p_o = tl.make_block_ptr"))
    assert not parse_file(path, "k.py").failures


def test_a_configuration_function_two_modules_import_from_each_other_is_undecided(tmp_path):
    """`from .b import f` in a, `from .a import f` in b, and `X = f() == "cuda"` at a's top level: the call's value
    is followed through the imports once, found nowhere, and undecided (it recursed without end: CT900)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "b.py").write_text("from .a import f\n")
    (pkg / "a.py").write_text("from .b import f\n" + HEAD + "X = f() == \"cuda\"\nif X:\n    SCALE = 2.0\n\n\n"
                              + textwrap.dedent("""
    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2.0)
    """))
    fr = parse_file(pkg / "a.py", "pkg/a.py")
    assert not fr.failures and [k.name for k in fr.kernels] == ["k"], [d.text() for _, _, d in fr.failures]


# -------------------------------------------------------------------------------- names defined under a flag

def _entries(tmp_path: Path, body: str) -> list[str]:
    (k,) = _kernels(tmp_path, body)
    return kernel_result(k, tmp_path / "k.py", "k.py").entries


def test_a_name_defined_and_read_under_one_flag_is_declared_before_its_if(tmp_path):
    """tests/fixtures/triton_unseen/arm_flags.py: five flags whose pointers and values are defined under
    `if USE_X:` and read later only under the same flag get one entry (not 2^n variants): the name is declared
    before its `if` with a zero of its type (its numbers are checked in
    test_fixtures_with_reference_cases_match_triton_by_their_numbers)."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(FIXTURES / "arm_flags.py", src / "arm_flags.py")
    result, outputs = run([src], tmp_path / "out", use_cache=False)
    (k,) = result.kernels
    assert k.status == "translated" and k.entries == ["gated_scan_kernel"], (k.entries, k.diagnostics)
    rust = next(text for path, text in outputs.items() if path.name == "kernel.rs")
    # the pointer offset and the scalar are declared once, before the `if` on their flag
    assert re.search(r"let mut p_g: i32 = 0i32;\n\s*if USE_G != 0i32 \{", rust), rust


@pytest.mark.parametrize("read, split", [
    ("    if USE_G:\n        y = y * s\n", False),  # read under the flag that defines it: declared before
    ("    y = y * s\n", True),  # read where the flag may be false: Triton fails there; a variant per arm
    ("    if USE_H:\n        y = y * s\n", True),  # read under another flag: a variant per arm
    # read under the flag, then once outside it: Triton fails where the flag is false (a variant per arm, the
    # false one refused), never one entry reading the declaration's zero
    ("    if USE_G:\n        y = y * s\n    y = y + s\n", True),
])
def test_a_name_is_declared_before_its_if_only_where_every_read_is_under_its_flag(tmp_path, read, split):
    body = ("@triton.jit\ndef k(x_ptr, g_ptr, y_ptr, USE_G: tl.constexpr, USE_H: tl.constexpr, BLOCK: tl.constexpr):\n"
            "    offs = tl.arange(0, BLOCK)\n"
            "    if USE_G:\n        s = tl.load(g_ptr + offs)\n"
            "    y = tl.load(x_ptr + offs)\n" + read + "    tl.store(y_ptr + offs, y)\n")
    entries = _entries(tmp_path, body)
    assert (len(entries) > 1 or entries == [] or "use_g" in entries[0]) if split else entries == ["k"], entries


def test_a_name_the_flags_bind_to_other_types_is_still_split(tmp_path):
    """`s` is a float32 tile under USE_G and the loaded element type under USE_H: one declaration cannot hold
    both, so the kernel splits on the flags as before (never a declaration of the wrong type)."""
    body = ("@triton.jit\ndef k(x_ptr, g_ptr, y_ptr, USE_G: tl.constexpr, USE_H: tl.constexpr, BLOCK: tl.constexpr):\n"
            "    offs = tl.arange(0, BLOCK)\n"
            "    if USE_G:\n        s = tl.zeros([BLOCK], dtype=tl.float32) + 2.0\n"
            "    if USE_H:\n        s = tl.load(g_ptr + offs)\n"
            "    y = tl.load(x_ptr + offs)\n"
            "    if USE_G:\n        y = y * s\n"
            "    tl.store(y_ptr + offs, y)\n")
    entries = _entries(tmp_path, body)
    assert len(entries) > 1, entries


def test_a_loaded_value_a_loop_carries_in_float32_makes_its_array_float32(tmp_path):
    """tests/fixtures/triton_unseen/carried_stats.py: `b_l = tl.load(L + o)` then `b_l = b_l * a + ...` (float32)
    in a loop: Triton compiles it only where L holds float32, so L (and M) are float32 arrays of the port, not
    a refusal (`b_l` changes type inside the loop); numbers in
    test_fixtures_with_reference_cases_match_triton_by_their_numbers."""
    (k,) = parse_file(FIXTURES / "carried_stats.py", "carried_stats.py").kernels
    res = kernel_result(k, FIXTURES / "carried_stats.py", "carried_stats.py")
    assert res.status == "translated", [d.text() for d in res.diagnostics]
    params = {p["name"]: p["dtype"] for p in res.manifest["params"]}
    assert params["L"] == params["M"] == "f32" and params["x"] != "f32", params


def test_a_dot_of_a_loaded_tile_with_a_float32_one_makes_the_array_float32(tmp_path):
    """tests/fixtures/triton_unseen/dot_operand_dtypes.py: `tl.dot(b_a, tl.trans(b_w))` with b_a loaded and b_w
    computed in float32: Triton's dot takes one dtype, so a_ptr is float32 (not TTR-DOT "different dtypes")."""
    (k,) = parse_file(FIXTURES / "dot_operand_dtypes.py", "dot_operand_dtypes.py").kernels
    res = kernel_result(k, FIXTURES / "dot_operand_dtypes.py", "dot_operand_dtypes.py")
    assert res.status == "translated", [d.text() for d in res.diagnostics]
    assert {p["name"]: p["dtype"] for p in res.manifest["params"]}["a_ptr"] == "f32"


# -------------------------------------------------------------------------------------- inline PTX assembly

@requires_toolchain
def test_inline_asm_fixture_matches_its_numbers(tmp_path):
    """tests/fixtures/triton_unseen/inline_asm.py (softplus asm built by a module function, a mov around a dot,
    lop3 / xor / shr and prmt, griddepcontrol, two outputs of float and integer instructions): ported, compiled to Tile IR and interpreted on its cases, whose
    references are numpy of the PTX manual's definitions (Triton's interpreter does not run inline asm)."""
    from test_triton_refs import CASES
    from transpiler.pipeline import write_outputs
    from transpiler.verify.run import verify_output
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(FIXTURES / "inline_asm.py", src / "inline_asm.py")
    result, outputs = run([src], tmp_path / "out")
    write_outputs(outputs)
    assert all(k.status == "translated" for k in result.kernels), \
        [(k.name, [d.text() for d in k.diagnostics]) for k in result.kernels]
    checked = {c.entry: c.verdict for v in verify_output(tmp_path / "out")
               for c in v.checks if c.verdict in ("numbers_match", "numbers_differ", "not_interpreted")}
    cases = {c["id"] for c in CASES if c["module"].endswith(".inline_asm")}
    assert len(cases) == 7 and set(checked) == cases, sorted(set(checked) ^ cases)
    assert all(v == "numbers_match" for v in checked.values()), checked


def test_inline_asm_refuses_what_it_does_not_know_by_name(tmp_path):
    """An instruction outside the PTX subset, a rounding mode Triton's operations lack, a packed asm and an asm
    string the port cannot know: each a TTR-INLINE-ASM at the asm argument, naming what it refuses; the kernel
    beside them translates."""
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent('''
    def _asm(n):
        import os
        return os.environ.get("ASM", "mov.f32 $0, $1;")


    DYNAMIC = _asm(1)


    @triton.jit
    def loads(x_ptr, y_ptr):
        x = tl.load(x_ptr)
        y = tl.inline_asm_elementwise("ld.global.f32 $0, [$1];", "=r,l", [x_ptr], dtype=tl.float32, is_pure=True, pack=1)
        tl.store(y_ptr, y + x)


    @triton.jit
    def rounds(x_ptr):
        x = tl.load(x_ptr)
        tl.store(x_ptr, tl.inline_asm_elementwise("add.rz.f32 $0, $1, $1;", "=r,r", [x], dtype=tl.float32,
                                                  is_pure=True, pack=1))


    @triton.jit
    def packed(x_ptr):
        x = tl.load(x_ptr)
        tl.store(x_ptr, tl.inline_asm_elementwise("mov.b32 $0, $2; mov.b32 $1, $3;", "=r,=r,r,r", [x], dtype=tl.float32,
                                                  is_pure=True, pack=2))


    @triton.jit
    def dynamic(x_ptr):
        x = tl.load(x_ptr)
        tl.store(x_ptr, tl.inline_asm_elementwise(DYNAMIC, "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1))


    @triton.jit
    def fine(x_ptr):
        x = tl.load(x_ptr)
        tl.store(x_ptr, tl.inline_asm_elementwise("neg.f32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1))
    '''))
    fr = parse_file(path, "k.py")
    got = {(d.pos.line, d.pos.col): (d.code, d.message) for _, _, d in fr.failures}
    assert [k.name for k in fr.kernels] == ["fine"]
    assert all(code == "TTR-INLINE-ASM" for code, _ in got.values()), got
    messages = {pos[0]: m for pos, (_, m) in got.items()}
    assert "`ld.global.f32` is not in the supported subset" in messages[17] and (17, 35) in got
    assert "`add.rz.f32`" in messages[24] and ".rz" in messages[24]
    assert "pack=2" in messages[31]
    assert "must be a string known" in messages[38] and (38, 47) in got


def test_lop3_truth_tables_are_the_bitwise_functions_they_name():
    """Every one of lop3's 256 truth tables, lowered (ptx.py), computes bit (a*4 + b*2 + c) of the table on each bit
    position: the expression is evaluated on Python integers standing for three words."""
    from transpiler.frontend import ptx
    a, b, c = 0xF0F0F0F0, 0xCCCCCCCC, 0xAAAAAAAA  # every (a, b, c) bit pattern, four times over
    for lut in range(256):
        names = iter(range(100))
        low = ptx.lower(f"lop3.b32 $0, $1, $2, $3, {lut:#x};", "=r,r,r,r", ["a", "b", "c"], ["uint32"], 1, "tl",
                        lambda stem: f"{stem}_{next(names)}")
        env = {"a": a, "b": b, "c": c}
        for name, text in low.statements:
            text = text.replace(f"{ptx.REGISTER_READ}(", "(").replace(", tl.uint32)", ")")
            text = text.replace("tl.cast(-1, tl.uint32, bitcast=True)", str(0xFFFFFFFF))
            env[name] = eval(text, {}, env) & 0xFFFFFFFF  # noqa: S307 (our own generated text)
        assert env[low.outputs[0]] == int(f"{lut:08b}" * 4, 2), hex(lut)


def test_module_strings_are_built_as_python_would_and_nothing_runs():
    """A module function formatting a template (format, f-strings, join, split, for over range, +=) gives the
    string Python gives; one that reads anything else (an import, the environment, a loop without bound) none."""
    import libcst as cst
    from transpiler.frontend.module_config import UNDECIDED
    from transpiler.frontend.module_strings import call_value
    src = textwrap.dedent('''
    def gen(n, sep=" "):
        template = "{{ mov.b32 ${out}, ${inp}; }}"
        parts = []
        for i in range(n):
            parts.append(template.format(out=i, inp=i + n) + f"// {i:02d}")
        return sep.join("\\n".join(parts).split("\\n"))
    def env():
        import os
        return os.getcwd()
    def grow():
        s = "ab"
        for _ in range(100):
            s = s + s
        return s
    def attr(n):
        return "{0.__class__}".format(n)
    ''')
    fns = {f.name.value: f for f in cst.parse_module(src).body}
    namespace: dict = {}
    exec(src, namespace)  # noqa: S102 (the test's own source: what Python gives)
    assert call_value(fns["gen"], [3], {}, {}) == namespace["gen"](3)
    assert call_value(fns["gen"], [2], {"sep": ","}, {}) == namespace["gen"](2, sep=",")
    assert call_value(fns["env"], [], {}, {}) is UNDECIDED
    assert call_value(fns["grow"], [], {}, {}) is UNDECIDED
    assert call_value(fns["attr"], [1], {}, {}) is UNDECIDED


def test_ptx_barriers_immediates_and_packed_values():
    """`bar.sync 0` (tl.debug_barrier's barrier) is dropped, another barrier is not; an `n` constraint's constant is
    written into the instruction; packed `.f16x2` arithmetic is refused by name."""
    from transpiler.frontend import ptx
    names = iter(range(100))
    fresh = lambda stem: f"{stem}_{next(names)}"  # noqa: E731
    assert ptx.lower("bar.sync 0; // dummy $0", "=r", [], ["int32"], 1, "tl", fresh) == ptx.Lowered((), (None,))
    with pytest.raises(ptx.PtxRefusal, match="`bar.sync`"):
        ptx.lower("bar.sync 1, 64;", "=r", [], ["int32"], 1, "tl", fresh)
    low = ptx.lower("add.s32 $0, $1, $2;", "=r,r,n", ["x", 7], ["int32"], 1, "tl", fresh)
    assert low.statements[-1][1].endswith("+ 7") and ptx.immediate_inputs("=r,r,n") == {1}
    with pytest.raises(ptx.PtxRefusal, match="packed values"):
        ptx.lower("sub.f16x2 $0, $1, $1;", "=r,r", ["x"], ["int32"], 1, "tl", fresh)


def test_dot_precision_of_module_constants_string_constexprs_and_bf16x3(tmp_path):
    """tests/fixtures/triton_unseen/dot_precision.py (numbers of "ieee" and "tf32x3" checked against Triton's
    interpreter in CI): `input_precision=` a module constant decided for the platform (`"ieee" if ON_NPU else
    "tf32x3"`: float32 products) and a string constexpr no launch names (one entry per precision Triton 3.6 takes:
    bf16x3, bf16x6, ieee, tf32, tf32x3 in that order): bf16x3 is three bf16 products of the operands' high and low
    parts, tf32 rounds the operands to tf32, the others multiply float32. A constant nobody can decide is refused."""
    kr = _translated_copy(tmp_path, "dot_precision.py")
    path, src = tmp_path / "k.py", (FIXTURES / "dot_precision.py").read_text()
    bodies = {v["name"].rsplit("__", 1)[1]: "\n".join(v["body"]) for v in kr.manifest["views"]}
    assert sorted(bodies) == [f"precision_eq_{i}" for i in range(5)], sorted(bodies)
    for i, body in enumerate(bodies[f"precision_eq_{i}"] for i in range(5)):
        assert body.count("mmaf(") == (4 if i == 0 else 2), (i, body)
        # the module constant: f32 products
        assert re.search(r"let ab: Tile<f32, \{ \[N, N\] \}> = mmaf\(a, b, \w+\);", body), (i, body)
        assert "Tile<tf32" not in body.split("let ab:")[0]
        second = body.split("let ab:")[1]
        if i == 0:  # hi = bf16(x), lo = bf16(x - f32(hi)); lo*hi, hi*lo, hi*hi (each part made once)
            hi = dict((x, n) for n, x in re.findall(r"let (\w+): Tile<bf16, \{ \[N, N\] \}> = convert_tile\((ab|c)\);", second))
            assert sorted(hi) == ["ab", "c"], second
            lo = {x: re.search(rf"let (\w+): Tile<f32, \{{ \[N, N\] \}}> = {x} - convert_tile\({hi[x]}\);", second)
                  for x in ("ab", "c")}
            assert all(lo.values()), second
            lo = {x: re.search(rf"let (\w+): Tile<bf16, \{{ \[N, N\] \}}> = convert_tile\({m.group(1)}\);", second).group(1)
                  for x, m in lo.items()}
            assert re.search(rf"mmaf\({hi['ab']}, {hi['c']}, mmaf\({hi['ab']}, {lo['c']}, mmaf\({lo['ab']}, {hi['c']}, ",
                             second), second
        elif i == 3:
            assert second.count("Tile<tf32, { [N, N] }> = convert_tile(") == 2, second
        else:
            assert "bf16" not in second and "tf32" not in second, (i, second)
    path.write_text(src.replace('ON_NPU = os.environ.get("DOT_PRECISION_DEVICE", "cuda") == "npu"',
                                "ON_NPU = unknown_device()"))
    ((_, _, d),) = parse_file(path, "k.py").failures
    assert d.code == "TTR-DOT" and "must be one of 'tf32', 'tf32x3', 'ieee', 'bf16x3', 'bf16x6'" in d.message, d.text()


@pytest.mark.parametrize("step, ok", [("-BS", True), ("back", True), ("-(2 * BS)", True), ("-s", False), ("0", False),
                                      ("-(BS - 1)", False)])
def test_a_loop_counting_down_in_a_helper_needs_a_step_of_known_sign(tmp_path, step, ok):
    """tests/fixtures/triton_unseen/countdown_loops.py (numbers checked against Triton's interpreter in CI): a
    helper's `range(last, -BS, -BS)` where BS is its tile size, a local bound once to such a step, a product of
    them; a runtime scalar's negation, zero, or a difference (sign unknown) stay refused (CT104)."""
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent(f"""
    @triton.jit
    def _walk(x_ptr, s, N: tl.constexpr, BS: tl.constexpr):
        offs = tl.arange(0, BS)
        back = -BS
        for start in range(N - BS, -BS, {step}):
            tl.store(x_ptr + start + offs, tl.load(x_ptr + start + offs) * 2.0)


    @triton.jit
    def k(x_ptr, s, N: tl.constexpr, BS: tl.constexpr):
        _walk(x_ptr, s, N, BS)
    """))
    fr = parse_file(path, "k.py")
    if fr.failures:
        (_, _, d), = fr.failures
        assert not ok and d.code == "CT104", d.text()
        return
    (kern,) = fr.kernels
    kr = kernel_result(kern, path, "k.py")
    assert (kr.status == "translated") == ok, [d.text() for d in kr.diagnostics]
    if not ok:
        assert kr.diagnostics[0].code == "CT104", kr.diagnostics[0].text()


def test_constexpr_functions_are_derived_constants_the_launcher_computes(tmp_path):
    """tests/fixtures/triton_unseen/constexpr_functions.py (numbers checked against Triton's interpreter in CI):
    `triton.next_power_of_2(K)` and `tl.standard._log2` of constexprs (and of a tile's numel) are derived
    constants; verify's Python and the C symbol's Rust compute the same values as Triton's own functions (0 below
    their domains), and a runtime argument is refused at its position."""
    from transpiler.emit.ffi import rust_const_expr
    from transpiler.verify.specs import const_value

    kr = _translated_copy(tmp_path, "constexpr_functions.py")
    path, src = tmp_path / "k.py", (FIXTURES / "constexpr_functions.py").read_text()
    derived = {n: e for en in kr.manifest["entries"] for n, e in en.get("derived", {}).items()}
    assert derived == {"NPO2_K": "next_power_of_2(K)", "LOG2_GROUP": "log2_floor(GROUP)",
                       "LOG2_NUMEL_NPO2_K": "log2_floor(((next_power_of_2(K))))"}, derived

    def triton_npo2(n):  # triton.next_power_of_2's bit smearing, in 64 bits
        n -= 1
        for s in (1, 2, 4, 8, 16, 32):
            n |= n >> s
        return n + 1

    def triton_log2(i):
        r = 0
        while i > 1:
            i >>= 1
            r += 1
        return r

    values = [-3, 0, 1, 2, 3, 5, 8, 10, 16, 33, 1000, 2 ** 31 - 1]
    for v in values:
        assert const_value("next_power_of_2(K)", {"K": v}) == triton_npo2(v), v
        assert const_value("log2_floor(K)", {"K": v}) == triton_log2(v), v
    if shutil.which("rustc") is None:
        return
    lines = [f'println!("{{}} {{}}", {{ let K: i64 = {v}i64; {rust_const_expr("next_power_of_2(K)", {"K"})} }}, '
             f'{{ let K: i64 = {v}i64; {rust_const_expr("log2_floor(K)", {"K"})} }});' for v in values]
    (tmp_path / "m.rs").write_text("#![allow(non_snake_case, unused_braces)]\nfn main() {\n" + "\n".join(lines) + "\n}\n")
    import subprocess
    subprocess.run(["rustc", "-O", "-o", str(tmp_path / "m"), str(tmp_path / "m.rs")], check=True, cwd=tmp_path)
    out = subprocess.run([str(tmp_path / "m")], check=True, capture_output=True, text=True).stdout.split("\n")
    assert [tuple(map(int, ln.split())) for ln in out if ln] == [(triton_npo2(v), triton_log2(v)) for v in values]
    # a runtime argument: refused where it is called
    path.write_text(src.replace("levels: tl.constexpr = _log2(GROUP)", "levels = _log2(row)"))
    (k,) = parse_file(path, "k.py").kernels
    d = next(x for x in kernel_result(k, path, "k.py").diagnostics if x.severity == "error")
    assert d.code == "TTR-LOG2-INT" and "not a constexpr" in d.message and d.pos.line == 20, d.text()


def test_a_constant_bound_after_an_early_return_in_a_constant_arm_stays_a_constant(tmp_path):
    """`if GUARD: if row >= n: return` then `BK: tl.constexpr = tl.cdiv(K, 2) * 2` (fla's token-parallel kernels):
    the frontend copies the statements after the `if` into both arms, so BK is assigned twice, by copies of one
    statement; it is still constant arithmetic (a tile size), not a runtime local (CT105)."""
    rust = _rust(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, n, K: tl.constexpr, GUARD: tl.constexpr):
        row = tl.program_id(0)
        if GUARD:
            if row >= n:
                return
        BK: tl.constexpr = tl.cdiv(K, 2) * 2
        offs = tl.arange(0, BK)
        tl.store(y_ptr + row * K + offs, tl.load(x_ptr + row * K + offs, mask=offs < K), mask=offs < K)
    """)
    assert rust.count("iota(shape![K_CDIV_2_MUL_2])") == 2, rust


def test_block_pointers_of_other_shapes_per_constant_arm_are_read_in_copies_of_what_follows(tmp_path):
    """tests/fixtures/triton_unseen/block_ptr_helpers.py (numbers checked against Triton's interpreter in CI):
    `p_h` is a [BV, BK] block if V_FIRST else a [BK, BV] one, loaded after the `if`: the statements after it
    follow each arm, so each arm loads its own block (two entries, one per V_FIRST). The same `if` on a runtime
    value stays refused where the name is read (a ported block pointer has one block shape)."""
    path = tmp_path / "k.py"
    src = (FIXTURES / "block_ptr_helpers.py").read_text()
    path.write_text(src)
    kernels = {k.name: k for k in parse_file(path, "k.py").kernels}
    assert sorted(kernels) == ["block_sums_kernel", "scaled_rows_kernel", "state_kernel"], sorted(kernels)
    results = {n: kernel_result(k, path, "k.py") for n, k in kernels.items()}
    assert all(r.status == "translated" for r in results.values()), {n: [d.text() for d in r.diagnostics]
                                                                     for n, r in results.items()}
    kr = results["state_kernel"]
    bodies = {v["name"]: "\n".join(v["body"]) for v in kr.manifest["views"]}
    assert sorted(bodies) == ["state_kernel__not_v_first", "state_kernel__v_first"], sorted(bodies)
    assert "permute" in bodies["state_kernel__v_first"] and "permute" not in bodies["state_kernel__not_v_first"]
    runtime = src.replace("V_FIRST: tl.constexpr):", "V_FIRST):")
    path.write_text(runtime)
    fails = {name: d for name, _, d in parse_file(path, "k.py").failures}
    line = next(i for i, ln in enumerate(runtime.splitlines(), 1) if "b_h = tl.load(p_h" in ln)
    assert fails["state_kernel"].code == "TTR-BLOCKPTR" and fails["state_kernel"].pos.line == line, fails


def test_a_block_pointer_a_helper_returns_and_helpers_own_names(tmp_path):
    """A helper returning `tl.make_block_ptr(...)` (of its parameters) gives the caller that block pointer (its
    parts converted where the helper's names are bound); two helpers' results are both `_ret0` when inlined
    (returns in constexpr arms): one's block pointer is never the other's pointer; a caller's block pointer named
    like a helper's parameter is not what the helper reads by that name."""
    rust = _rust(tmp_path, """
    @triton.jit
    def _base(x, row, n, VARLEN: tl.constexpr):
        if VARLEN:
            return x + row
        return x + row * n


    @triton.jit
    def _blk(base, n, offset, BLK: tl.constexpr, CONTIG: tl.constexpr, STRIDE):
        if CONTIG:
            return tl.make_block_ptr(base, (n,), (1,), (offset,), (BLK,), (0,))
        return tl.make_block_ptr(base, (n,), (STRIDE,), (offset,), (BLK,), (0,))


    @triton.jit
    def k(x, y, out, n, BLK: tl.constexpr, CONTIG: tl.constexpr, VARLEN: tl.constexpr, USE_Y: tl.constexpr):
        row = tl.program_id(0)
        v = tl.zeros([BLK], dtype=tl.float32)
        if USE_Y:
            base = _blk(x + row * n, n, 0, BLK, CONTIG, 3)  # named as _blk's parameter: not the one it reads
            y_base = _base(y, row, n, VARLEN)
            p_y = _blk(y_base, n, 0, BLK, CONTIG, 3)
            v = tl.load(base, boundary_check=(0,)) + tl.load(p_y, boundary_check=(0,))
        else:
            v = tl.load(y + row * n + tl.arange(0, BLK))  # (y read as a pointer in the kernel itself too)
        tl.store(out + row * BLK + tl.arange(0, BLK), v)
    """)
    # the USE_Y entries read x and y through their blocks (strides 1 or 3)
    assert rust.count("load_ptr_tko(") >= 3, rust


def test_a_name_the_else_arm_defines_is_read_under_the_same_constant_only(tmp_path):
    """tests/fixtures/triton_unseen/arm_defined_names.py (numbers checked against Triton's interpreter in CI):
    `first` is defined in the else arm of `if DECODE:` (whose extra programs return early, so the rest is copied
    into both arms) and read under a later `if DECODE: ... else:`: one entry per DECODE. Read in the DECODE arm,
    where it is never defined, that specialization has no entry (Triton cannot compile it: a CT103 warning)."""
    path = tmp_path / "k.py"
    src = (FIXTURES / "arm_defined_names.py").read_text()
    path.write_text(src)
    (k,) = parse_file(path, "k.py").kernels
    kr = kernel_result(k, path, "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    assert sorted(e["name"] for e in kr.manifest["entries"]) == ["group_starts_kernel__decode",
                                                                 "group_starts_kernel__not_decode"]
    path.write_text(src.replace("offs * 1.0, mask=(offs >= 0) & emit)", "offs + first * 1.0, mask=emit)"))
    (k,) = parse_file(path, "k.py").kernels
    kr = kernel_result(k, path, "k.py")
    assert [e["name"] for e in kr.manifest["entries"]] == ["group_starts_kernel__not_decode"]
    (d,) = kr.diagnostics
    assert d.severity == "warning" and d.code == "CT103" and "no entry where DECODE: `first`" in d.message, d.text()


def test_a_dtype_name_bound_in_each_arm_is_read_in_its_arm(tmp_path):
    """tests/fixtures/triton_unseen/dtype_names.py (numbers checked against Triton's interpreter in CI): `elem_ty`
    is `a_ptr`'s element type in one arm and `b_ptr`'s in the other, each used in its arm; read after the `if`,
    where it is one or the other, it is refused; bound to the same dtype in both arms, it is known after."""
    path = tmp_path / "k.py"
    src = (FIXTURES / "dtype_names.py").read_text()

    def result(text):
        path.write_text(text)
        (k,) = parse_file(path, "k.py").kernels
        return kernel_result(k, path, "k.py")

    kr = result(src)
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    after = "\n    tl.store(x_ptr + offs, x.to(elem_ty), mask=m)\n"
    kr = result(src.rstrip("\n") + after)
    assert kr.status != "translated" and kr.diagnostics[0].pos.line == len(src.splitlines()) + 1, \
        [d.text() for d in kr.diagnostics]
    same = src.replace("elem_ty = b_ptr.dtype.element_ty", "elem_ty = a_ptr.dtype.element_ty")
    assert result(same.rstrip("\n") + after).status == "translated"


def test_a_pointer_variable_indexed_with_none_broadcasts_its_offsets(tmp_path):
    """tests/fixtures/triton_unseen/pointer_rows.py (numbers checked against Triton's interpreter in CI):
    `row_ptr[:, None]` of a pointer variable is the pointer with its offsets (the local `row_ptr`) broadcast,
    not a pointer used as a value (CT100)."""
    rust = _rust(tmp_path, (FIXTURES / "pointer_rows.py").read_text().split("import triton.language as tl\n", 1)[1])
    assert re.search(r"reshape\(row_ptr, shape!\[BLOCK, 1\]\)", rust), rust


def test_offsets_widened_in_both_constant_arms_are_int64_from_the_start(tmp_path):
    """tests/fixtures/triton_unseen/widened_arms.py (numbers checked against Triton's interpreter in CI; compiled
    by the fixture test): `w += (...).to(tl.int64)` in both arms of `if SHARED:` makes w's offsets int64 from
    their declaration (declared int32 and read as int64 after the `if`, the Rust did not compile)."""
    rust = _rust(tmp_path, (FIXTURES / "widened_arms.py").read_text().split("import triton.language as tl\n", 1)[1])
    assert "let mut w_off: i64 = 0i64;" in rust and "w_off: i32" not in rust, rust


def test_a_gather_by_a_tile_flattened_to_its_element_count(tmp_path):
    """`flat = tl.reshape(idx, [idx.numel])`, `tl.gather(table, flat, 0)` (unsloth's NF4 codebook lookup): the
    flat extent is the derived constant ROWS * COLS, which the gather's one-hot tiles take as their extent too (it
    was refused, CT105: a derived extent read back from a tile's shape was not a shape)."""
    path = tmp_path / "k.py"
    shutil.copy(FIXTURES / "gather.py", path)
    (k,) = [k for k in parse_file(path, "k.py").kernels if k.name == "nibble_lookup_kernel"]
    kr = kernel_result(k, path, "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    (v,) = translate_kernel(k)
    assert dict(v.derived).get("NUMEL_ROWS_MUL_COLS") == "((ROWS) * (COLS))", v.derived


def test_kernels_declared_by_calls_are_kernels(tmp_path):
    """`f = triton.jit(f, ...)` after `def f` declares a kernel (Python runs `@d def f` as `f = d(f)`), and a
    later `f = triton.heuristics({...})(f)` wraps it (its heuristic's constexpr is a launch value); its helper is a
    helper. A wrapping before the jit, a jit of another name, or a plain function left alone declares nothing."""
    path = tmp_path / "call_jit.py"
    shutil.copy(FIXTURES / "call_jit.py", path)
    text = path.read_text() + textwrap.dedent('''

        def not_jitted(x_ptr):
            tl.store(x_ptr, 1.0)


        def wrapped_first(x_ptr):
            tl.store(x_ptr, 1.0)


        wrapped_first = triton.heuristics({"B": lambda args: 1})(wrapped_first)
        other = triton.jit(not_jitted)
    ''')
    path.write_text(text)
    fr = parse_file(path, "call_jit.py")
    assert sorted(k.name for k in fr.kernels) == ["scale_rows_kernel"], [k.name for k in fr.kernels]
    (k,) = fr.kernels
    kr = kernel_result(k, path, "call_jit.py")
    assert kr.status == "translated" and not kr.diagnostics, [d.text() for d in kr.diagnostics]
    assert [p.name for p in k.params if p.kind == "const"] == ["SCALE", "BLOCK", "EVEN"]


def test_a_name_defined_under_a_constexpr_local_is_read_where_a_flag_implies_it(tmp_path):
    """`ANY: tl.constexpr = PERMUTED or SCALED` (PERMUTED itself `GATHER or SCATTER`): `if ANY:` is a constant
    `if` over the flags it stands for, so where GATHER holds it is decided true and `token`, defined under it, is
    defined (unsloth's grouped GEMM forward was refused, CT103; before that, such a read dropped every entry
    where GATHER holds although Triton compiles them)."""
    path = tmp_path / "k.py"
    shutil.copy(FIXTURES / "constexpr_locals.py", path)
    results = {k.name: kernel_result(k, path, "k.py") for k in parse_file(path, "k.py").kernels}
    kr = results["routed_rows_kernel"]
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    assert not [d for d in kr.diagnostics if d.code == "CT103"], [d.text() for d in kr.diagnostics]
    assert any("gather" in e and "not_gather" not in e for e in kr.entries), kr.entries
    # `if EITHER:` left to run time in an entry: its condition is `(A or B) or C` of the constants (EITHER, a
    # Python `or` of the constexpr local AB, has no runtime form: it was refused, CT100)
    flagged = results["flagged_scale_kernel"]
    assert flagged.status == "translated", [d.text() for d in flagged.diagnostics]
    _, outputs = run([path], tmp_path / "out", use_cache=False, compile_check="off")
    rust = next(text for f, text in outputs.items() if f.name == "kernel.rs")
    assert "if ((A == 1i32) || (B == 1i32)) || (C == 1i32) {" in rust and "EITHER" not in rust


@pytest.mark.parametrize("forwarder,ported", [
    ("return x.to(dtype)", True),  # the method form of the same operation
    ("return tl.cast(x, dtype)", True),
    ("return x.to(dtype, bitcast=True)", False),  # not only forwarding: another operation
    ("return tl.cast(dtype, x)", False),  # the parameters in another order
    ("y = x.to(dtype)\n    return y", False),
])
def test_an_undecided_arm_forwarding_to_the_other_arms_function_is_that_function(tmp_path, forwarder, ported):
    """`to_dtype = tl.cast` in one arm of an `if` the tool cannot decide, `def to_dtype(x, dtype): return
    x.to(dtype)` in the other (unsloth's triton_cast, behind a Version test of another package's Version): every
    call computes the same in either arm, so the port inlines the function. Anything but pure forwarding to the
    same operation stays refused (CT101: no rule for the name)."""
    text = (FIXTURES / "arm_forwarders.py").read_text().replace("return x.to(dtype)", forwarder)
    path = tmp_path / "k.py"
    path.write_text(text)
    fr = parse_file(path, "k.py")
    results = [kernel_result(k, path, "k.py") for k in fr.kernels]
    diags = [d for _, _, d in fr.failures] + [d for kr in results for d in kr.diagnostics]
    assert (len(results) == 1 and results[0].status == "translated") == ported, [d.text() for d in diags]
    if not ported:
        assert any(d.code == "CT101" and "to_dtype" in d.message for d in diags), [d.text() for d in diags]


def test_a_loaded_scalar_of_the_arrays_element_type_is_negated_as_a_tile(tmp_path):
    """`tl.exp(-loss)` of `loss = tl.load(loss_ptr + row)`: the scalar has the array's element type E, a rank-0
    tile in the port, so its negation is negf of that tile (unsloth's cross-entropy backward: the port wrapped it
    again with scalar_to_tile, which does not compile for a tile, CT007)."""
    path = tmp_path / "k.py"
    shutil.copy(FIXTURES / "scalar_neg.py", path)
    _, outputs = run([path], tmp_path / "out", use_cache=False, compile_check="off")
    rust = next(text for f, text in outputs.items() if f.name == "kernel.rs")
    assert re.search(r"let \w+: Tile<E, \{ \[\] \}> = exp\(negf\(loss\)\);", rust), rust
    assert "scalar_to_tile(loss)" not in rust


def test_a_pointer_cast_to_another_element_type_in_each_arm_is_refused_not_a_crash(tmp_path):
    """A raw address cast to fp8 in one arm of a runtime `if` and to bf16 in the other (a serving engine's pinned
    embedding table): the two bindings read different tensors, which a ported pointer cannot; a diagnostic naming
    both, where sorting the two loaded bases was an internal error (CT900: `_Addr` has no order)."""
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent("""
    @triton.jit
    def k(table_ptr, y_ptr, is_fp8, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        if is_fp8:
            table_ptr = table_ptr.to(tl.int64).to(tl.pointer_type(tl.float8e4nv))
        else:
            table_ptr = table_ptr.to(tl.int64).to(tl.pointer_type(tl.bfloat16))
        x = tl.load(table_ptr + offs, mask=offs < n).to(tl.float32)
        tl.store(y_ptr + offs, x, mask=offs < n)
    """))
    fr = parse_file(path, "k.py")
    assert not fr.kernels and not fr.diagnostics
    ((name, _, d),) = fr.failures
    assert (name, d.code) == ("k", "CT100") and "depending on the path" in d.message
    assert "as_f8e4m3fn" in d.message and "as_bf16" in d.message


def test_a_scan_reversed_by_a_constexpr_flag_scans_each_way(tmp_path):
    """`tl.cumsum(x, 0, reverse=REV)` with REV a constexpr: one entry per value, each scanning its own way (the
    flag was read as False whatever its value: every REV=True launch scanned forward); a run-time flag is refused."""
    kr = _translated_copy(tmp_path, "", HEAD + textwrap.dedent("""
    @triton.jit
    def k(x_ptr, y_ptr, n, REV: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(y_ptr + offs, tl.cumsum(x, 0, reverse=REV), mask=offs < n)
    """))
    text = str(kr.manifest)
    assert text.count("reverse::Reverse") >= 1 and text.count("reverse::Forward") >= 1, kr.manifest.keys()
    path = tmp_path / "r.py"
    path.write_text(HEAD + textwrap.dedent("""
    @triton.jit
    def k(x_ptr, y_ptr, n, rev, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(y_ptr + offs, tl.cumsum(x, 0, reverse=rev), mask=offs < n)
    """))
    (k,) = parse_file(path, "r.py").kernels
    kr = kernel_result(k, path, "r.py")
    assert kr.status == "unsupported" and "`reverse=` of a scan" in kr.diagnostics[0].message
# -------------------------------------------------------------------------------------- dtype queries

def _fixture_kernel(name: str, fixture: str = "dtype_predicates.py", text: str | None = None, tmp_path=None):
    """KernelResult of kernel `name` of tests/fixtures/triton_unseen/`fixture` (or of `text`, written to tmp_path)."""
    path = FIXTURES / fixture
    if text is not None:
        path = tmp_path / "k.py"
        path.write_text(HEAD + textwrap.dedent(text))
    fr = parse_file(path, path.name)
    assert not fr.failures, [d.message for _, _, d in fr.failures]
    (k,) = [k for k in fr.kernels if k.name == name]
    return kernel_result(k, path, path.name)


def _entry_bodies(kr) -> dict[str, str]:
    return {v["name"]: "\n".join(v["body"]) for v in kr.manifest["views"]}


def test_dtype_predicates_are_decided_per_entry():
    """tests/fixtures/triton_unseen/dtype_predicates.py `widen_by_dtype_kernel`: `x.dtype.is_fp16() or
    x.dtype.is_bf16()`, `tl.constexpr(x.dtype.is_fp32())`, `x.dtype is tl.bfloat16`, `bits == 16` of
    `x.dtype.primitive_bitwidth` and `not elem.is_fp8()` are Triton compile-time values: one entry per element
    type, each with only the arithmetic its dtype takes (no runtime `if` on a constant)."""
    kr = _fixture_kernel("widen_by_dtype_kernel")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    bodies = _entry_bodies(kr)
    assert set(bodies) == {f"widen_by_dtype_kernel__e_{d}" for d in ("f16", "bf16", "f32")}, set(bodies)
    f16, bf16, f32 = (bodies[f"widen_by_dtype_kernel__e_{d}"] for d in ("f16", "bf16", "f32"))
    assert all(" if " not in b and "if cond" not in b for b in (f16, bf16, f32))
    assert "2.0f32" in f16 and "0.5f32" in f16 and "1.0f32" not in f16 and "3.0f32" not in f16
    assert "2.0f32" in bf16 and "0.5f32" in bf16 and "1.0f32" in bf16
    assert "3.0f32" in f32 and "2.0f32" not in f32 and "0.5f32" not in f32
    assert all("store_view" in b for b in (f16, bf16, f32))  # is_standard_floating() and not is_fp8()


def test_a_helper_without_a_final_return_inlines_where_no_entry_reaches_its_end():
    """`_lowest(dtype)` returns from `is_floating()` and `is_int_signed()` arms only: every element type of the
    port takes the first, so the helper inlines (Triton's `float("-inf")`)."""
    kr = _fixture_kernel("running_max_kernel")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    (body,) = _entry_bodies(kr).values()
    assert "NEG_INFINITY" in body


def test_a_helper_whose_end_an_entry_reaches_is_refused_with_that_entrys_dtypes(tmp_path):
    """Fail closed: `_top` returns for signed ints and f16 only; the bf16 and f32 entries would return None
    (Triton compiles no kernel there), so the port refuses, naming them."""
    kr = _fixture_kernel("clip_kernel", text="""
    @triton.jit
    def _top(dtype):
        if dtype.is_int_signed():
            return 2 ** (dtype.primitive_bitwidth - 1) - 1
        if dtype.is_fp16():
            return 65504.0


    @triton.jit
    def clip_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(out_ptr + offs, tl.minimum(x, _top(x.dtype)), mask=offs < n)
    """, tmp_path=tmp_path)
    assert kr.status == "unsupported"
    (d,) = kr.diagnostics
    assert d.code == "CT103" and "`_top` reaching its end without a `return`" in d.message, d.text()
    assert d.message.endswith("for element type bf16 or f32"), d.message


@pytest.mark.parametrize("query, holds", [
    ("is_int()", {"i32", "i64"}), ("is_int_signed()", {"i32", "i64"}), ("is_int_unsigned()", set()),
    ("is_floating()", {"f16", "f32"}), ("is_standard_floating()", {"f16", "f32"}), ("is_fp32()", {"f32"}),
    ("is_bf16()", set()), ("is_int64()", {"i64"}), ("is_fp8()", set()),
])
def test_each_dtype_predicate_takes_triton_s_dtypes(tmp_path, query, holds):
    """A dtype constexpr's predicate (Triton 3.6 core.dtype: int1 is unsigned, the fp8 kinds are floating but
    not standard) picks the arm per launched dtype: the entry of each of the int32/int64/float16/float32
    launches stores 3 where it holds, 2 where not (`DT.value` is the constexpr's value, the same dtype)."""
    launches = "".join(f"    fill_kernel[(1,)](o, DT=tl.{d}, BLOCK=16)\n" for d in ("int32", "int64", "float16", "float32"))
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent(f"""
    @triton.jit
    def fill_kernel(out_ptr, DT: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        if DT.value.{query}:
            v = tl.zeros((BLOCK,), dtype=tl.float32) + 3.0
        else:
            v = tl.zeros((BLOCK,), dtype=tl.float32) + 2.0
        tl.store(out_ptr + offs, v)
    """) + "\n\ndef launch(o):\n" + launches)
    fr = parse_file(path, "k.py")
    assert not fr.failures, [d.message for _, _, d in fr.failures]
    (k,) = fr.kernels
    kr = kernel_result(k, path, "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    fills = {}
    for v in kr.manifest["views"]:
        body = "\n".join(v["body"])
        assert ("3.0f32" in body) != ("2.0f32" in body), body
        fills[v["name"]] = 3 if "3.0f32" in body else 2
    assert len(fills) == 4, fills
    got = {d for variant, fill in fills.items() for d in ("i32", "i64", "f16", "f32") if fill == 3 and d in str(variant)}
    assert got == holds, fills


def test_a_dtype_constexpr_compared_with_a_tl_dtype_picks_the_compute_dtype(tmp_path):
    """`compute = tl.float32 if DTYPE == tl.bfloat16 else DTYPE` of a constexpr that is only compared with a tl
    dtype (and passed on through a local): a dtype constexpr, one entry per dtype, the bf16 one computing in f32
    and the others in their own dtype; a helper's `dtype.is_floating()` of that local is decided in each."""
    launches = "".join(f"    k[(1,)](x, o, DTYPE=tl.{d}, BLOCK=16)\n" for d in ("bfloat16", "float16"))
    path = tmp_path / "k.py"
    path.write_text(HEAD + textwrap.dedent("""
    @triton.jit
    def _top(dtype):
        if dtype.is_floating():
            return float("inf")


    @triton.jit
    def k(x_ptr, out_ptr, DTYPE: tl.constexpr, BLOCK: tl.constexpr):
        compute = tl.float32 if DTYPE == tl.bfloat16 else DTYPE
        acc = tl.full((BLOCK,), _top(compute), dtype=compute)
        offs = tl.arange(0, BLOCK)
        acc = tl.minimum(acc, tl.load(x_ptr + offs).to(compute))
        tl.store(out_ptr, tl.min(acc, axis=0))
    """) + "\n\ndef launch(x, o):\n" + launches)
    fr = parse_file(path, "k.py")
    assert not fr.failures, [d.message for _, _, d in fr.failures]
    (kern,) = fr.kernels
    kr = kernel_result(kern, path, "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    bodies = _entry_bodies(kr)
    assert len(bodies) == 2, set(bodies)
    bf16 = next(b for n, b in bodies.items() if "bf16" in n)
    f16 = next(b for n, b in bodies.items() if "bf16" not in n)
    assert "let acc: Tile<f32, { [BLOCK] }>" in bf16 and "f32::INFINITY" in bf16, bf16
    assert "let acc: Tile<f16, { [BLOCK] }>" in f16 and "let acc: Tile<f32" not in f16, f16


def test_a_dtype_name_bound_per_arm_to_a_dtype_or_a_dtype_local(tmp_path):
    """`ACC = tl.float32` in one arm of a dtype test, `ACC = in_dtype` (a local holding a dtype) in the other:
    a dtype per entry (f32 for the half types, the input's own for f32), as Triton binds it when it compiles."""
    kr = _fixture_kernel("k", text="""
    @triton.jit
    def k(x_ptr, out_ptr, BLOCK: tl.constexpr):
        in_dtype = x_ptr.dtype.element_ty
        if tl.constexpr(in_dtype == tl.float16) or tl.constexpr(in_dtype == tl.bfloat16):
            ACC = tl.float32
        else:
            ACC = in_dtype
        offs = tl.arange(0, BLOCK)
        acc = tl.zeros((BLOCK,), dtype=ACC) + tl.load(x_ptr + offs)
        tl.store(out_ptr + offs, acc)
    """, tmp_path=tmp_path)
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    bodies = _entry_bodies(kr)
    assert set(bodies) == {"k__e_f16_bf16", "k__e_f32"}, set(bodies)
    for name, body in bodies.items():
        want = "E" if name.endswith("f32") else "f32"
        assert f"let acc_a: Tile<{want}, {{ [BLOCK] }}> = constant" in body, (name, body)


def test_float_scalars_a_where_chooses_stay_floats_where_arithmetic_meets_ints(tmp_path):
    """`t = tl.where(adv > 0, pos, neg)` of float scalars (a GRPO loss's temperatures), then `t` in arithmetic that
    also meets integers: the choices are ints only where the where's result is itself used as one (offsets,
    bounds); any integer grouping of `t` made them i32 (liger's grpo_loss temperatures became i32 scalars)."""
    from transpiler.passes.infer import classify_params
    (k,) = _kernels(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, n, pos, neg, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        t = tl.where(x > 0, pos, neg)
        y = t * (x - 1.0) + offs * t
        tl.store(y_ptr + offs, y, mask=offs < n)
    """)
    types = {p.name: p.dtype for p in classify_params(k).params if p.name in ("pos", "neg")}
    assert types == {"pos": "f32", "neg": "f32"}, types


# -------------------------------------------------------------------------------------- dtype constants from host functions

_FORMATS = '''import triton.language as tl


def fp8_format(fmt):
    if fmt == "e4m3":
        return tl.float8e4nv
    elif fmt == "fnuz":
        return tl.float8e4b8
    {last}
'''

_QUANT = '''import triton
import triton.language as tl

from .formats import fp8_format


@triton.jit
def quant_kernel(x_ptr, q_ptr, n, FP8: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    q = tl.load(x_ptr + offs, mask=offs < n).to(FP8)
    tl.store(q_ptr + offs, q.to(tl.uint8, bitcast=True), mask=offs < n)


def quant(x, q, fmt):
    quant_kernel[(1,)](x, q, x.numel(), {arg}, BLOCK=256)
'''


@pytest.mark.parametrize("last, arg, entries", [
    # an imported host function whose returns all name dtypes: its cuTile Rust ones are the entries
    ("return tl.float8e5", "FP8=fp8_format(fmt)", ["f8e4m3fn", "f8e5m2"]),
    ("raise ValueError(fmt)", "FP8=fp8_format(fmt)", ["f8e4m3fn"]),
    ("raise ValueError(fmt)", "fp8_format(fmt)", ["f8e4m3fn"]),  # by position
])
def test_a_dtype_constant_takes_the_dtypes_a_host_function_returns(tmp_path, last, arg, entries):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "formats.py").write_text(_FORMATS.format(last=last))
    (pkg / "quant.py").write_text(_QUANT.format(arg=arg))
    result, _ = run([pkg / "quant.py"], tmp_path / "out", use_cache=False)
    (k,) = result.kernels
    assert k.status == "translated", [d.text() for d in k.diagnostics]
    assert sorted(e.rsplit("__fp8_", 1)[1] for e in k.entries) == entries, k.entries


@pytest.mark.parametrize("last", ["return getattr(tl, fmt)", "return"])
def test_a_host_function_returning_anything_else_gives_no_dtypes(tmp_path, last):
    """A return that is no dtype literal: the launch says nothing, the default float dtypes are tried, and
    Triton's own rule (a bitcast keeps the width) refuses the 16- and 32-bit ones."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "formats.py").write_text(_FORMATS.format(last=last))
    (pkg / "quant.py").write_text(_QUANT.format(arg="FP8=fp8_format(fmt)"))
    result, _ = run([pkg / "quant.py"], tmp_path / "out", use_cache=False)
    (k,) = result.kernels
    assert k.status == "unsupported" and any(d.code == "TTR-BITCAST" for d in k.diagnostics), \
        [d.text() for d in k.diagnostics]


def _scalar_dtypes(tmp_path: Path, kernel: str) -> dict[str, str]:
    """The scalar parameters of a scalar_typing.py kernel and the dtypes the port takes them as."""
    from transpiler.passes.infer import classify_params
    path = tmp_path / "scalar_typing.py"
    path.write_text((FIXTURES / "scalar_typing.py").read_text())
    (k,) = [k for k in parse_file(path, "scalar_typing.py").kernels if k.name == kernel]
    return {p.name: p.dtype if p.kind == "scalar" else p.const_type for p in classify_params(k).params
            if p.kind in ("scalar", "const")}


@pytest.mark.parametrize("kernel, expected", [
    # `w_in` is an offset (`tl.minimum(left + 1, w_in - 1)`) though it meets 1.0; `step` and `shift` meet a
    # float conversion (`cols.to(tl.float32) * step + shift`), so they are floats (were int32 beside `w_in`)
    ("resample_rows_kernel", {"n_rows": "i32", "w_in": "i32", "w_out": "i32", "step": "f32", "shift": "f32",
                              "BLOCK": "int"}),
    # `first = tl.where(part == 0, top_at, bottom_at)` reaches the offsets through `first * width`; `width`
    # is only widened (`width.to(tl.int64)`); the row counts are only compared (no evidence: float32)
    ("stack_two_kernel", {"top_rows": "f32", "bottom_rows": "f32", "top_at": "i32", "bottom_at": "i32",
                          "width": "i32", "BLOCK": "int"}),
    # `count` meets a float (`count + 0.0`) and is only compared, but the launch site passes `x.shape[1]`
    ("row_mean_kernel", {"row_stride": "i32", "count": "i32", "BLOCK": "int"}),
])
def test_unannotated_scalars_are_typed_as_triton_types_their_arguments(tmp_path, kernel, expected):
    """Triton types a scalar argument by its Python value: an int where it is a pointer's offset, however it
    is reached (backwards through the arithmetic and the choices that make the offset) and whatever float it
    meets elsewhere; an int where a launch site passes an int expression; a float where it meets a float."""
    assert _scalar_dtypes(tmp_path, kernel) == expected


def test_a_float_guess_for_a_constexpr_used_as_an_offset_is_an_int(tmp_path):
    """`1.0 / C` made `C` a float constexpr (no launch literal says otherwise), but `C` is in a pointer's offsets,
    which Triton compiles for ints only (was: TTR-LOAD 'indices must be int32 or int64, got f32')."""
    from transpiler.passes.infer import classify_params
    (k,) = _kernels(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, C: tl.constexpr, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * C + offs, mask=offs < C, other=0.0)
        tl.store(y_ptr + row, tl.sum(x, axis=0) * (1.0 / C))
    """)
    assert k.param("C").const_type == "float"  # the frontend's guess
    assert classify_params(k).param("C").const_type == "int"
    kr = kernel_result(k, tmp_path / "k.py", "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]


@pytest.mark.parametrize("kernel, pointer", [("first_of_runs_kernel", None), ("positive_ranks_kernel", None),
                                             ("compact_kernel", "counts_ptr"), ("split_lengths_kernel", "len_ptr")])
def test_int1_and_element_typed_offsets_are_triton_integers(tmp_path, kernel, pointer):
    """`tl.where(i > 0, cur != prev, 0)` is int32 in Triton (a Python int is of a higher kind than int1), so its
    scan is an offset (was: 'indices must be int32 or int64, got Tile[bool]'), as is a scan of a mask (uint32 in
    Triton, converted to an i64 index); an offset made in a pointer's
    element type (`tl.cumsum(keep.to(counts_ptr.dtype.element_ty))`, `tl.sum` of its loads,
    `tl.full((), 0, len_ptr.dtype.element_ty)` divided with `//`) makes that pointer an integer one (i32 or i64,
    computed in i64) (was: 'got Tile[E3]', '`truncdiv` of E operands')."""
    text = (FIXTURES / "scalar_typing.py").read_text()
    path = tmp_path / "k.py"
    path.write_text(text)
    (k,) = [k for k in parse_file(path, "k.py").kernels if k.name == kernel]
    kr = kernel_result(k, path, "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    if pointer:
        (v,) = translate_kernel(k)  # (a generic of either width, not fixed to one)
        # (with u8, i16 and bool too where its values stay exact in them: passes/domains._narrow_exact; the
        # lengths are summed with a carry made in their type, which wraps in Triton's narrow types)
        narrow = {"compact_kernel": ("u8", "i16", "bool"), "split_lengths_kernel": ()}[kernel]
        assert v.param(pointer).dtype.startswith("E") and v.param(pointer).domain == ("i32", "i64") + narrow, \
            v.param(pointer)


def test_a_mask_loaded_from_a_bool_tensor_is_its_truth(tmp_path):
    """A mask loaded from a torch.bool tensor is int1 in Triton (which compiles a masked load or store only with an
    int1 mask); the port types that pointer as an integer one, so the mask is its `!= 0` (was: '`mask` must be a
    boolean tile'), and it takes bool (the torch.bool tensor itself: its values are only tested). A mask of a
    float stays refused (Triton refuses it too)."""
    path = tmp_path / "k.py"
    path.write_text((FIXTURES / "bool_mask.py").read_text())
    (k,) = parse_file(path, "k.py").kernels
    (v,) = translate_kernel(k)
    assert v.param("valid_ptr").domain == ("i32", "i64", "u8", "i16", "bool")
    from transpiler.model.dump import dump_kernel
    # (the load is widened to i64; `valid & (i < n)` is their bitand, its truth `!= 0`)
    assert re.search(r"scatter\(%x_ptr[^\n]*\), cmp\(bitand\(%valid[^\n]*pred='!='", dump_kernel(v)), dump_kernel(v)
    (bad,) = _kernels(tmp_path, """
    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        i = tl.arange(0, BLOCK)
        tl.store(x_ptr + i, 0.0, mask=i * 0.5)
    """, "bad.py")
    kr = kernel_result(bad, tmp_path / "bad.py", "bad.py")
    assert kr.status == "unsupported" and any("must be a boolean tile" in d.message for d in kr.diagnostics)


@pytest.mark.parametrize("launch, dtype", [
    ("k[(1,)](x, x.shape[-1] * 2)", "i32"),
    ("n = x.stride(0)\nk[(1,)](x, n)", "i32"),
    ("n = 1\nfor t in ts:\n    n = max(n, t.shape[0])\nk[(1,)](x, n)", "i32"),  # bound from itself too
    ("k[(1,)](x, len(ts) / 2)", "f32"),  # a true division: not an int
    ("n = x.shape[0]\nn /= 2\nk[(1,)](x, n)", "f32"),  # `/=` makes a float
    ("k[(1,)](x, ts[0])", "f32"),  # not known
    ("k[(1,)](x, 4398046511104)", "f32"),  # an int64 in Triton: not the port's int32
])
def test_a_launch_site_passing_an_int_types_the_scalar_int32(tmp_path, launch, dtype):
    """A scalar only compared and meeting a float (`n + 0.0`): float32 unless a launch site passes an int
    expression (an extent, a stride, a count, integer arithmetic of those), which Triton types int32."""
    from transpiler.passes.infer import classify_params
    (k,) = _kernels(tmp_path, textwrap.dedent("""
    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr = 16):
        i = tl.arange(0, BLOCK)
        tl.store(x_ptr + i, (n + 0.0) * 1.0, mask=i < n)
    """) + "\n\ndef launch(x, ts):\n" + textwrap.indent(launch, "    ") + "\n")
    assert classify_params(k).param("n").dtype == dtype


def test_a_comparison_of_an_int1_value_with_a_python_int_stays_one_of_bools(tmp_path):
    """`flag != 0` of an int1 `flag`: its truth is the same in int32, so it stays a comparison of bools (only
    arithmetic and choices take the Python int's kind: `flag * 1` is int32)."""
    (k,) = _kernels(tmp_path, """
    @triton.jit
    def k(y_ptr, n, BLOCK: tl.constexpr):
        i = tl.arange(0, BLOCK)
        flag = i < n
        tl.store(y_ptr + i, tl.where(flag != 0, flag * 1, -1))
    """)
    from transpiler.model.dump import dump_kernel
    (v,) = translate_kernel(k)
    text = dump_kernel(v)
    assert re.search(r"cmp\(%flag : Tile\[bool, \(BLOCK\)\], splat\(0 : bool\)", text), text
    assert "convert(%flag : Tile[bool, (BLOCK)]) : Tile[i32, (BLOCK)]" in text, text


def test_a_dot_precision_chosen_by_a_local_constexpr_is_an_entry_per_choice(tmp_path):
    """`ip: tl.constexpr = "ieee" if PREC == 2 else ("tf32x3" if PREC == 1 else "tf32")` passed as
    `input_precision=ip` (was: '`input_precision` must be one of ...'): one entry per choice, and only the "tf32"
    one rounds its float32 operands to tf32."""
    from transpiler.model.dump import dump_kernel
    path = tmp_path / "k.py"
    path.write_text((FIXTURES / "precision_local.py").read_text())
    (k,) = parse_file(path, "k.py").kernels
    variants = translate_kernel(k)
    rounded = {" and ".join(v.variant.predicates): "tf32" in dump_kernel(v) for v in variants}
    assert len(rounded) == 3 and sum(rounded.values()) == 1, rounded
    (tf32,) = [p for p, r in rounded.items() if r]
    assert "PREC == 2" in tf32 and "PREC == 1" in tf32 and tf32.count("not") == 2, tf32


# -------------------------------------------------------------------------------------- atomics' ordering and scope

@pytest.mark.parametrize("args, order, scope", [
    ('sem="relaxed", scope="cta"', "ordering::Relaxed", "scope::TileBlock"),
    ("sem=ORDER", "ordering::AcqRel", "scope::Device"),  # chosen by the launch: the strongest ordering
    ('sem="release", scope=WHERE', "ordering::Release", "scope::System"),
    ("", "ordering::AcqRel", "scope::Device"),  # Triton's defaults
])
def test_an_atomic_takes_its_ordering_and_scope_or_the_strongest(tmp_path, args, order, scope):
    rust = _rust(tmp_path, f"""
    @triton.jit
    def k(words_ptr, n, ORDER: tl.constexpr, WHERE: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.atomic_or(words_ptr + offs % 4, offs, mask=offs < n{', ' + args if args else ''})
    """)
    call = rust[rust.index("atomic_rmw_tko("):]
    call = call[:call.index(")")]
    assert "atomic::Or" in call and order in call and scope in call, call


def test_flip_sort_topk_forms_warnings_and_refusals(tmp_path):
    """tl.flip of a literal extent of at most 8 is cut and joined (extract, cat: no warning); of a constexpr
    extent, and every tl.sort / tl.topk, is a one-hot selection, said by a CT119 warning at the call (quadratic in
    the extent); Triton's own refusals are kept (no `dim` for tl.flip, a sort along another dimension than the
    last), and a rank-6 tile is refused (the emulation adds a dimension). Their numbers: flips.py's cases."""
    (k,) = _kernels(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, z_ptr, w_ptr, R: tl.constexpr, C: tl.constexpr):
        offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
        x = tl.load(x_ptr + offs)
        pairs = tl.reshape(tl.flip(tl.reshape(x, (R, C // 2, 2)), 2), (R, C))
        tl.store(y_ptr + offs, tl.flip(pairs, 0))
        tl.store(z_ptr + offs, tl.sort(x, descending=True))
        tl.store(w_ptr + tl.arange(0, R)[:, None] * 2 + tl.arange(0, 2)[None, :], tl.topk(x, 2))
    """)
    kr = kernel_result(k, tmp_path / "k.py", "k.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    warned = sorted((d.pos.line, d.code) for d in kr.diagnostics if d.severity == "warning")
    assert warned == [(11, "CT119"), (12, "CT119"), (13, "CT119")], [d.text() for d in kr.diagnostics]
    rust = "\n".join(line for v in kr.manifest["views"] for line in v["body"])
    assert re.search(r"= cat\(\w+, \w+, 2i32\)", rust) and "extract(" in rust
    # a pointer's tile goes through float32 bits in the one-hot forms: its generic takes float dtypes only (an
    # int32 array's values past 2**24 would round), while a pointer only written takes any dtype
    (k,) = _kernels(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.flip(tl.load(x_ptr + offs), 0))
    """)
    kr = kernel_result(k, tmp_path / "k.py", "k.py")
    domains = {p["name"]: p.get("domain") for p in kr.manifest["params"]}
    assert "i32" not in (domains["x_ptr"] or ()) and "i32" in domains["y_ptr"], domains
    assert re.search(r"Tile<i32, \{ \[R, C, C\] \}> = select\(", rust)  # the rank count over a new dimension
    for body, why in [("tl.flip(x)", "needs `dim`"), ("tl.sort(x, 0)", "last dimension only"),
                      ("tl.flip(tl.reshape(x, (1, 1, 1, 1, R, C)), 5)", "rank at most 6"),
                      ("tl.topk(x, 3)", "power of two")]:
        (k,) = _kernels(tmp_path, f"""
        @triton.jit
        def k(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr):
            offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
            x = tl.load(x_ptr + offs)
            tl.store(y_ptr + offs, {body})
        """)
        kr = kernel_result(k, tmp_path / "k.py", "k.py")
        assert kr.status != "translated" and any(why in d.message for d in kr.diagnostics), \
            (body, [d.text() for d in kr.diagnostics])
    # tl.cat(a, b, can_reorder=True) as the tile tl.topk / tl.sort sorts is a concatenation (the order Triton leaves
    # open does not change a sort's result; flips.py streaming_topk_kernel's numbers); elsewhere it stays refused
    path = tmp_path / "cat.py"
    path.write_text(HEAD + textwrap.dedent("""
    @triton.jit
    def merged(x_ptr, y_ptr, K: tl.constexpr):
        a = tl.load(x_ptr + tl.arange(0, K))
        b = tl.load(x_ptr + K + tl.arange(0, K))
        tl.store(y_ptr + tl.arange(0, K), tl.topk(tl.cat(a, b, can_reorder=True), K))


    @triton.jit
    def stored(x_ptr, y_ptr, K: tl.constexpr):
        a = tl.load(x_ptr + tl.arange(0, K))
        tl.store(y_ptr + tl.arange(0, 2 * K), tl.cat(a, a, can_reorder=True))
    """))
    fr = parse_file(path, "cat.py")
    assert [k.name for k in fr.kernels] == ["merged"]
    (failure,) = [d for _, _, d in fr.failures]
    assert failure.code == "CT101" and "may reorder" in failure.message
    (k,) = fr.kernels
    kr = kernel_result(k, path, "cat.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    assert re.search(r"= cat\(\w+, \w+, 0i32\)", "\n".join(l for v in kr.manifest["views"] for l in v["body"]))
# ------------------------------------------------------------------------ values of another type (carried_types)

def test_a_loop_variable_is_not_a_carried_value():
    """carried_types.py `rebound_loop_var_kernel`: `t` is an int64 (loaded) before `for t in range(...)`; Triton's
    visit_For leaves the loop variable out of the loop's carried values, so the loop does not change its type."""
    kr = _fixture_kernel("rebound_loop_var_kernel", "carried_types.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]


def test_an_early_returning_arm_and_the_rest_bind_a_name_each(tmp_path):
    """carried_types.py `first_program_totals_kernel`: `idx` is a tile in an arm ending in `return` and a scalar in
    the rest of the kernel (the port's else arm); Triton never merges them. Both arms of a plain runtime `if`
    still may not (Triton: "Mismatched type for idx between then block and else block")."""
    kr = _fixture_kernel("first_program_totals_kernel", "carried_types.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    kr = _fixture_kernel("k", text="""
    @triton.jit
    def k(x_ptr, out_ptr, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        if pid == 0:
            idx = tl.arange(0, BLOCK)
        else:
            idx = pid
        tl.store(out_ptr + idx, tl.load(x_ptr + idx))
    """, tmp_path=tmp_path)
    assert kr.status != "translated"
    assert any(d.code == "CT104" and "has another type in each arm" in d.message for d in kr.diagnostics)


def test_a_float_an_arm_loads_from_a_compared_pointer_keeps_its_dtype():
    """carried_types.py `last_program_mean_kernel`: `done = tl.load(acc_ptr + 1)` compared with an int (which would
    make acc_ptr a pointer of integers), then `total` (float32) set to `tl.load(acc_ptr)` in an arm: Triton
    requires the float32, so acc_ptr holds float32 (not ints widened to int64)."""
    kr = _fixture_kernel("last_program_mean_kernel", "carried_types.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    (body,) = _entry_bodies(kr).values()
    assert "acc_ptr_typed: PointerTile<*mut f32" in body, body


# ---------------------------------------------------------------------------------- pointers formed (pointer_sums)

def test_offsets_made_a_pointer_by_adding_one():
    """pointer_sums.py `gather_by_ids_kernel`: `id_ptrs = (c * BLOCK + offs) * stride` compared with a bound, then
    `id_ptrs += ids_base`: an int plus a pointer is a pointer (Triton's `__radd__`), so `ids_ptr` is a pointer
    parameter and the load reads it at the summed offsets."""
    kr = _fixture_kernel("gather_by_ids_kernel", "pointer_sums.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    arrays = {p["name"] for p in kr.manifest["params"] if p.get("kind") == "array"}
    assert arrays == {"ids_ptr", "x_ptr", "out_ptr"}, arrays


def test_pointers_a_helper_returns_and_an_optional_pointer_tested_by_its_truth():
    """pointer_sums.py `scaled_rows_kernel`: `x_ptrs, x_mask = _rows_ptrs(x_ptr, ...)` (a tuple a helper returns),
    `tl.load(_col_ptrs(scale_ptr, C))` (a pointer it returns alone) and `if bias_ptr: bias_ptrs = bias_ptr + cols`
    (a truth test of a pointer that reaches an access through a local): each argument is a pointer parameter."""
    kr = _fixture_kernel("scaled_rows_kernel", "pointer_sums.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    arrays = {p["name"] for p in kr.manifest["params"] if p.get("kind") == "array"}
    assert arrays == {"x_ptr", "scale_ptr", "bias_ptr", "out_ptr"}, arrays


# ------------------------------------------------------------------------------------ constant dims (const_dims)

def test_shape_and_axis_of_a_constexpr_local_and_core_names():
    """const_dims.py `row_col_means_kernel`: `_dim: core.constexpr = dim` in a helper called with a literal, then
    `x.shape[_dim]` and `tl.sum(x, axis=_dim)` (Triton reads the local as that Python int), `x.shape[dim]` of the
    constexpr parameter, and `core.static_range` / `core.arange` through `import triton.language.core as core`."""
    kr = _fixture_kernel("row_col_means_kernel", "const_dims.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    (body,) = _entry_bodies(kr).values()
    assert "for i in" not in body, body  # core.static_range(2) unrolled as tl.static_range is


# ----------------------------------------------------------------------- literal helper arguments (literal_stages)

def test_a_helper_called_per_stage_with_literals_is_one_entry():
    """literal_stages.py `walsh_rows_kernel`: `_pair_stage(x, 16, STRIDE)` four times: `N // (2 * STRIDE)` of the
    literals is a literal extent and `if STRIDE == 1:` is decided by them (Triton computes both on Python ints);
    one entry, not a variant per stage (FlagGems' 8-stage Hadamard kernels exceeded the variant limit)."""
    kr = _fixture_kernel("walsh_rows_kernel", "literal_stages.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    assert list(_entry_bodies(kr)) == ["walsh_rows_kernel"], list(_entry_bodies(kr))
    body = _entry_bodies(kr)["walsh_rows_kernel"]
    assert "shape![1, 2, 8]" in body and "C16_DIV" not in body, body  # 16 // (2 * 8): a literal, not a constant


def test_conditions_of_literals_alone_are_decided_by_their_value():
    from transpiler.passes.predicates import closed_value, decides
    assert closed_value("8 == 1") is False and closed_value("(16 // (2 * 8)) == 1") is True
    assert closed_value("not (3 % 2 == 0) and 4 >= 4") is True
    assert closed_value("N == 1") is None and closed_value("1 // 0 == 0") is None and closed_value("1.5 > 1") is None
    assert decides(("N == 2",), "8 == 1") is False


def test_an_int32_a_loop_sets_to_an_atomics_old_value_makes_that_pointer_int32():
    """carried_types.py `bucket_slots_kernel`: `slots` (int32) set in a loop to `start + ...`, `start` the old value
    of `tl.atomic_add(cursor_ptr + b, ...)` on a pointer of integers: Triton requires the carried int32, so the
    cursor holds int32 (the one integer dtype Tile IR's atomics take)."""
    kr = _fixture_kernel("bucket_slots_kernel", "carried_types.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    (body,) = _entry_bodies(kr).values()
    assert "cursor_ptr_typed: PointerTile<*mut i32" in body, body


def test_an_augmented_value_is_converted_once(tmp_path):
    """`acc += _scaled(x)` (not a pointer): the `+=` test for `int += pointer` converts the value once, so the
    helper is inlined once (its statements and names are made one time, not twice with one copy dead)."""
    kr = _fixture_kernel("k", text="""
    @triton.jit
    def _saved(x, p, offs):
        tl.store(p + offs, x)
        return x * 2.0

    @triton.jit
    def k(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        acc = tl.load(x_ptr + offs)
        acc += _saved(acc, out_ptr, offs)
        tl.store(out_ptr + offs, acc)
    """, tmp_path=tmp_path)
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    (body,) = _entry_bodies(kr).values()
    assert body.count("// tl.store(") == 2, body  # the helper's store, then the kernel's


def test_loop_bounds_and_steps_of_other_integer_types_count_in_int32():
    """loop_bounds.py: an int64 start and step (`tl.num_programs(0).to(tl.int64)`) and a uint32 stop (a bool sum's
    minimum with a count): the port's loops count in int32 (cuTile Rust types a loop's step i32), each bound
    converted (exact while it fits)."""
    for name in ("grid_stride_scale_kernel", "valid_prefix_sum_kernel"):
        kr = _fixture_kernel(name, "loop_bounds.py")
        assert kr.status == "translated", (name, [d.text() for d in kr.diagnostics])


def test_a_pointer_chosen_per_path_with_offsets_of_two_widths():
    """pointer_sums.py `chosen_rows_kernel`: `src = a_ptr + row * D + cols` (int32 offsets) in one arm of a runtime
    `if`, `src = b_ptr + (row - n_a).to(tl.int64) * D + cols` (int64) in the other: one pointer type in Triton,
    so the port widens the int32 offsets at the end of their arm (sglang's ssd_chunk_state chooses its past
    states so)."""
    kr = _fixture_kernel("chosen_rows_kernel", "pointer_sums.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    (body,) = _entry_bodies(kr).values()
    assert "Tile<i64, { [D] }> = exti(" in body, body


def test_a_plain_value_of_two_widths_in_the_arms_stays_refused(tmp_path):
    """Only a pointer's offsets are widened: a value both arms bind as int32 and int64 is refused as Triton refuses it
    ("Mismatched type ... between then block and else block")."""
    kr = _fixture_kernel("k", text="""
    @triton.jit
    def k(x_ptr, out_ptr, n):
        row = tl.program_id(0)
        if row < n:
            w = row * 2
        else:
            w = row.to(tl.int64) * 3
        tl.store(out_ptr + row, tl.load(x_ptr + row) * w)
    """, tmp_path=tmp_path)
    assert any(d.code == "CT104" and "another type in each arm" in d.message for d in kr.diagnostics), \
        [d.text() for d in kr.diagnostics]


def test_a_loop_bound_loaded_through_a_tuple_assignment_makes_its_pointer_integer():
    """loop_bounds.py `loaded_length_sum_kernel`: `start, end = 0, tl.load(len_ptr + row)`, then `range(start, end,
    BLOCK)`: a tuple's items keep their source pointer as a single assignment's value does, so the bound makes
    `len_ptr` a pointer of integers (Triton requires integer bounds) instead of a float `E` refused as a bound."""
    kr = _fixture_kernel("loaded_length_sum_kernel", "loop_bounds.py")
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]


def test_an_address_passed_as_a_scalar_argument_is_refused_saying_why(tmp_path):
    """`w_ptr.to(tl.int64).to(tl.pointer_type(tl.float32))` of an address passed as a Python int (int64 in
    Triton): the port's scalars are int32 or float32 (as float32 the address was silently garbage; as int32 every
    real address is refused at launch), so the kernel is refused with the reason."""
    (k,) = _kernels(tmp_path, """
    @triton.jit
    def k(w_ptr, out_ptr, n, BLOCK: tl.constexpr):
        w_addr = w_ptr.to(tl.int64)
        w = w_addr.to(tl.pointer_type(tl.float32))
        i = tl.arange(0, BLOCK)
        tl.store(out_ptr + i, tl.load(w + i, mask=i < n, other=0.0), mask=i < n)
    """)
    kr = kernel_result(k, tmp_path / "k.py", "k.py")
    assert kr.status == "unsupported" and any("address passed as a scalar argument" in d.message
                                              for d in kr.diagnostics), [d.text() for d in kr.diagnostics]


@requires_toolchain
def test_locals_named_like_cutile_element_types_compile(tmp_path):
    """`i4 = i4_a + i4_b` (Philox's fourth word), `bf16 = ...`: cutile::core brings tuple structs of those names
    into scope, which a `let` cannot shadow (E0530): the port renames the locals and its Rust compiles."""
    src = tmp_path / "k.py"
    src.write_text(HEAD + textwrap.dedent("""
    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        i4 = offs * 2
        bf16 = tl.load(x_ptr + offs) + 1.0
        tf32 = bf16 * i4
        tl.store(y_ptr + offs, tf32)
    """))
    result, _ = run([src], tmp_path / "out", use_cache=False, compile_check="on")
    (kr,) = result.kernels
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]


# -------------------------------------------------------------------------------------- narrow integer pointers

@pytest.mark.parametrize("use, narrow", [
    ("v", True),  # offsets only (pointer arithmetic: no narrow sum)
    ("idx * stride", True),  # a wider operand: Triton computes it in int32
    ("idx.to(tl.int32) + 1", True),  # widened first, as Triton does
    ("(idx >> 2) & 3", True),  # bit fields of the value
    ("idx // 4", True),  # a division by a literal stays in range
    ("tl.where(idx > 3, idx, 0)", True),
    ("idx + 1", False),  # Triton adds in the narrow type (uint8 255 + 1 == 0)
    ("1 << idx", False),  # a literal takes the narrow type: 1 << 9 is 0 in uint8
    ("~idx", False),
    ("idx * idx", False),
])
def test_an_integer_pointer_takes_narrow_dtypes_where_its_values_stay_exact(tmp_path, use, narrow):
    """An integer pointer's loaded values are widened to int64 here, where Triton computes on a uint8 / int16 /
    bool tensor's values in that type and wraps: the pointer takes u8, i16 and bool (passes/domains._narrow_exact)
    only where no op on its values could wrap in 8 or 16 bits (mutant: `_narrow_exact` always true -> the wrapping
    uses take them)."""
    failures, results = _diagnostics(tmp_path, f"""
    @triton.jit
    def k(idx_ptr, x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        idx = tl.load(idx_ptr + offs)
        v = tl.load(x_ptr + idx)  # (offsets: an integer pointer)
        tl.store(out_ptr + offs, {use})
    """)
    assert not failures
    (kr,) = results
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    assert _array_params(kr)["idx_ptr"][1] == ("i32", "i64") + (("u8", "i16", "bool") if narrow else ()), \
        _array_params(kr)


@pytest.mark.parametrize("update, counter", [
    ("tl.atomic_add(count_ptr + b, 1, mask=m)", True),
    ("tl.atomic_add(count_ptr + b, -3, mask=m)", True),
    ("tl.atomic_add(count_ptr + b, 0.5, mask=m)", False),  # not a whole number: int32 would add 0
    ("tl.atomic_add(count_ptr + b, 16777217, mask=m)", False),  # past 2**24: its f32 form is another number
    ("tl.store(out_ptr + offs, tl.atomic_add(count_ptr + b, 1, mask=m), mask=m)", False),  # the old value read
])
def test_a_counter_of_literal_atomic_adds_takes_int32(tmp_path, update, counter):
    """A pointer only `tl.atomic_add(p, 1)` updates (old value unused) adds the literal in its own type in Triton,
    int32 as exactly as a float: it takes the kernel's float dtypes and int32 (passes/domains._counters; numbers
    and the launch: narrow_ints.py bucket_count_kernel)."""
    failures, results = _diagnostics(tmp_path, f"""
    @triton.jit
    def k(x_ptr, count_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n
        b = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.int32)
        {update}
    """)
    assert not failures
    (kr,) = results
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    assert _array_params(kr)["count_ptr"][1] == (("f16", "bf16", "f32", "i32") if counter else ()), _array_params(kr)


def test_names_of_triton_language_standard_are_tl_names(tmp_path):
    """`triton.language.standard.sum` (imported from the module, or through an alias of it) is `tl.sum`: the same
    Rust; a name of that module that triton.language does not re-export (`sort_impl`) stays refused by its name."""
    body = textwrap.dedent("""
    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        tl.store(y_ptr + offs, {z}(x) + {s}(x, axis=0))
    """)
    for sub in "abc":
        (tmp_path / sub).mkdir()
    plain = _rust(tmp_path / "a", body.format(z="tl.zeros_like", s="tl.sum"))
    standard = _rust(tmp_path / "b", "import triton.language.standard as tls\n"
                     "from triton.language.standard import zeros_like\n" + body.format(z="zeros_like", s="tls.sum"))
    assert standard == plain
    path = tmp_path / "c" / "k.py"
    path.write_text(HEAD + "import triton.language.standard as tls\n" + body.format(z="tls.sort_impl", s="tl.sum"))
    fr = parse_file(path, "k.py")
    diags = [d for _, _, d in fr.failures] + [d for k in fr.kernels for d in kernel_result(k, path, "k.py").diagnostics]
    assert any(d.code == "CT101" and "triton.language.standard.sort_impl" in d.message for d in diags), \
        [d.message for d in diags]


def test_a_multiply_read_outside_and_in_a_constant_arm_stays_defined(tmp_path):
    """`y = a * b` read by a statement that is no add (`tl.cumsum(y)`) and by an add in one arm of a constant `if`:
    the guarded-fusion path (passes/fma.py `guarded`) leaves the multiply's use count whole for the arm, so the
    arm's add never takes it as a single use (which dropped `y`'s definition: CT900 "use of undefined name",
    fla-core's gated delta rule gate kernels)."""
    rust = _rust(tmp_path, """
    @triton.jit
    def k(g, a, o, n, BT: tl.constexpr, REVERSE: tl.constexpr):
        offs = tl.arange(0, BT)
        m = offs < n
        b_g = tl.load(g + offs, mask=m, other=0.0)
        b_a = tl.load(a)
        b_gate = b_a * b_g
        b_o = tl.cumsum(b_gate, axis=0)
        if REVERSE:
            b_o = b_o + b_gate
        tl.store(o + offs, b_o, mask=m)
    """)
    assert "let b_gate" in rust


def test_libdevice_math_and_functional_operators(tmp_path):
    """tests/fixtures/triton_unseen/libdevice_math.py and functional_ops.py have the numbers; here the forms:
    libdevice.pow of a literal int n >= 1 stays __nv_powif's multiplications and of a float is Tile IR's pow;
    tan / sinh / cosh / atan2 are Tile IR's; isnan is Triton's int32 1 or 0 from `x != x`; float_as_int is a
    bitcast of the float32 value; tl.fdiv / tl.add are the operators."""
    rust = _rust(tmp_path, """
    from triton.language.extra import libdevice


    @triton.jit
    def k(x_ptr, y_ptr, z_ptr, i_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        y = tl.load(y_ptr + offs)
        r = libdevice.pow(x, 2) + libdevice.pow(tl.abs(x), y) + libdevice.atan2(x, y) + libdevice.tan(x)
        r = tl.fdiv(tl.add(r, libdevice.sinh(y)), libdevice.cosh(y))
        tl.store(z_ptr + offs, r)
        tl.store(i_ptr + offs, libdevice.isnan(r) + libdevice.float_as_int(r))
    """)
    assert rust.count("pow(") == 1 and "atan2(x, y)" in rust and "tan(x)" in rust, rust
    assert "sinh(y)" in rust and "cosh(y)" in rust and "mulf(" in rust, rust  # x * x: __nv_powif's mul.rn
    assert "cmpf(r, r, predicate::NotEqual, cmp_ordering::Unordered)" in rust and "bitcast(" in rust, rust


@pytest.mark.parametrize("call, says", [
    ("libdevice.pow(x, 0)", "integer exponent 0"),
    ("libdevice.pow(x, -2)", "integer exponent -2"),
    ("libdevice.float_as_uint(x)", "uint32"),
])
def test_libdevice_forms_still_refused(tmp_path, call, says):
    diags = _diagnostics(tmp_path, f"""
    from triton.language.extra import libdevice


    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        tl.store(y_ptr + offs, {call})
    """)
    failures, results = diags
    found = list(failures.values()) + [d for r in results for d in r.diagnostics]
    assert any(says in d.message and d.code == "CT101" for d in found), [d.text() for d in found]


def test_a_constexpr_rebound_to_a_runtime_value_is_a_new_variable(tmp_path):
    """tests/fixtures/triton_unseen/constexpr_rebind.py has the numbers: the constexpr is the const generic up to
    its top-level rebinding (`NC = min(NC, ...)` of run-time values) and a local after it; a constexpr rebound to
    constants only stays a constant (Triton folds it: a derived const generic)."""
    rust = _rust(tmp_path, (FIXTURES / "constexpr_rebind.py").read_text().split("\n\n\n", 1)[1])
    assert "let start: i32 = start_a * NC;" in rust and "let NC_value: i32 = min(NC, ceil_div(n - start, BC));" in rust
    assert "for c in 0i32..NC_value" in rust, rust
    folded = _rust(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr, HALF: tl.constexpr):
        HALF = BLOCK // 2
        offs = tl.arange(0, HALF)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))
    """)
    assert "iota(shape![BLOCK_DIV_2])" in folded and "HALF_value" not in folded, folded


def test_constexpr_locals_of_constexpr_arms_sizing_tiles_split_the_kernel(tmp_path):
    """tests/fixtures/triton_unseen/constexpr_arms.py has the numbers: a name each arm of a constexpr `if` binds as
    `tl.constexpr` and a tile's extent reads is replaced by each arm's value, the rest of the kernel in each arm
    (an entry per flag value); where no tile's shape reads it, the `if` converts as before (no split)."""
    path = tmp_path / "k.py"
    path.write_text((FIXTURES / "constexpr_arms.py").read_text())
    k, gram = parse_file(path, "k.py").kernels
    kr = kernel_result(k, path, "k.py")
    dtypes = kernel_result(gram, path, "k.py")  # a dtype chosen per arm (`dot_dtype = tl.float16`)
    assert dtypes.status == "translated", [d.text() for d in dtypes.diagnostics]
    assert kr.status == "translated", [d.text() for d in kr.diagnostics]
    rust = "\n".join(line for v in kr.manifest["views"] for line in v["body"] if not line.strip().startswith("//"))
    assert "iota(shape![TILE_M])" in rust and "iota(shape![1])" in rust and "TILE_SA" not in rust, rust
    assert len(kr.manifest["views"]) == 4
    scalar = _rust(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr, DOUBLE: tl.constexpr):
        if DOUBLE:
            SCALE: tl.constexpr = 2.0
        else:
            SCALE: tl.constexpr = 1.0
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs) * SCALE)
    """)
    assert "SCALE" in scalar, scalar  # not split: no tile's shape reads it


def test_a_bitcast_of_a_generic_value_takes_the_one_dtype_of_its_width(tmp_path):
    """tests/fixtures/triton_unseen/generic_bitcast.py has the numbers: `x.to(tl.int32, bitcast=True)` of a loaded
    tile makes the entry float32 alone (Triton compiles the bitcast only for 32-bit elements); a 16-bit bitcast,
    where float16 and bfloat16 both have the width, stays refused (convert to a concrete type first)."""
    kr = _translated_copy(tmp_path, "generic_bitcast.py")
    assert [(e["name"], e["dtypes"]) for e in kr.manifest["entries"]] == [("exponent_bits_kernel__e_f32", ["f32"])]
    failures, results = _diagnostics(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        tl.store(y_ptr + offs, x.to(tl.int16, bitcast=True))
    """)
    found = list(failures.values()) + [d for r in results for d in r.diagnostics]
    assert any(d.code == "TTR-BITCAST" and "generic" in d.message for d in found), [d.text() for d in found]


@pytest.mark.parametrize("call, says", [("tl.add(x)", "takes two operands"), ("libdevice.isnan()", "takes one operand"),
                                        ("libdevice.float_as_int(x, x)", "takes one operand")])
def test_a_malformed_functional_or_libdevice_call_is_a_diagnostic(tmp_path, call, says):
    failures, results = _diagnostics(tmp_path, f"""
    from triton.language.extra import libdevice


    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        tl.store(y_ptr + offs, {call})
    """)
    found = list(failures.values()) + [d for r in results for d in r.diagnostics]
    assert any(says in d.message for d in found), [d.text() for d in found]
