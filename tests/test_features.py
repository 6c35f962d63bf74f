"""Feature fixtures (one construct per kernel) verify `equivalent`; unsupported fixtures are diagnosed."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import requires_toolchain

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "transpiler.cli", *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def features_verified(tmp_path_factory):
    """The features folder ported and verified once (every kernel, specialization and dtype): the CLI's JSON
    and exit code. The mutant tests below read their fixture's unmutated verdicts here."""
    res = cli(FIXTURES / "features", "-o", tmp_path_factory.mktemp("features") / "out", "--verify", "--format", "json")
    return json.loads(res.stdout), res.returncode


def _verified(features_verified, *names) -> dict:
    got = {k["name"]: k["verify"] for k in features_verified[0]["kernels"]}
    return {n: got.get(n) for n in names}


@requires_toolchain
def test_feature_fixtures_are_equivalent(features_verified):
    doc, returncode = features_verified
    bad = [(k["name"], k["status"], k["verify"], [d["message"][:300] for d in k["diagnostics"]])
           for k in doc["kernels"] if k["verify"] != "equivalent"]
    assert not bad and returncode == 0, bad
    assert doc["summary"]["equivalent"] >= 20


def test_unsupported_fixtures_are_diagnosed(tmp_path, snapshot):
    res = cli(FIXTURES / "unsupported", "-o", tmp_path / "out", "--format", "json")
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    diags = []
    for k in doc["kernels"]:
        assert k["status"] == "unsupported" and k["entries"] == [], k
        assert all(d["line"] >= 1 and d["col"] >= 1 and d["code"] for d in k["diagnostics"])
        d = k["diagnostics"][0]  # the first blocker; the others follow it in source order
        diags.append(f"{Path(d['path']).name}:{d['line']}:{d['col']}: {d['code']}: {d['message']}")
    assert diags == snapshot


@requires_toolchain
def test_package_modules_verify_with_their_imports(tmp_path):
    """Modules of a package import each other (relative, absolute, sub-package): verification imports each
    by its dotted name with the package root on the path, as the user's environment would. `ops/tagged.py`
    imports torch (stubbed where it is not installed) and tags its kernel with a decorator above
    `@ct.kernel` that hands the kernel object back (TileGym's `@experimental_kernel`)."""
    res = cli(FIXTURES / "package", "-o", tmp_path / "out", "--verify", "--format", "json")
    doc = json.loads(res.stdout)
    got = {k["name"]: k["verify"] for k in doc["kernels"]}
    assert got == {"scale_rows": "equivalent", "center_rows": "equivalent", "gelu_rows": "equivalent",
                   "exp2_rows": "equivalent", "negate_rows": "equivalent"}, doc
    assert res.returncode == 0


def test_package_root_and_dotted_name():
    from transpiler.verify.run import package_root
    root, dotted = package_root(FIXTURES / "package" / "mylib" / "ops" / "norm.py")
    assert root == (FIXTURES / "package").resolve() and dotted == "mylib.ops.norm"
    root, dotted = package_root(FIXTURES / "features" / "ops.py")  # a folder without __init__.py
    assert root == (FIXTURES / "features").resolve() and dotted == "ops"


def test_float_constant_uses_without_a_rust_form_are_diagnosed(tmp_path):
    """ct.Constant[float] is supported in arithmetic (fixtures/features/float_consts verifies it) and in
    conditions, which split the kernel into variants (fixtures/features/float_branches); as a tile shape it
    has no const-generic form and is refused with its own diagnostic."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "fc_bad.py").write_text(
        "import cuda.tile as ct\n\n\n"
        "@ct.kernel\n"
        "def cond(x, y, beta: ct.Constant[float], T: ct.Constant[int]):\n"
        "    t = ct.load(x, index=(ct.bid(0),), shape=(T,))\n"
        "    if beta == 0.0:\n"
        "        t = t + 1.0\n"
        "    ct.store(y, index=(ct.bid(0),), tile=t)\n\n\n"
        "@ct.kernel\n"
        "def shape(x, y, S: ct.Constant[float]):\n"
        "    t = ct.load(x, index=(ct.bid(0),), shape=(S,))\n"
        "    ct.store(y, index=(ct.bid(0),), tile=t)\n")
    res = cli(src, "-o", tmp_path / "out", "--format", "json")
    doc = json.loads(res.stdout)
    got = {k["name"]: (k["status"], k["diagnostics"][0]["code"], k["diagnostics"][0]["message"])
           for k in doc["kernels"] if k["diagnostics"]}
    cond = next(k for k in doc["kernels"] if k["name"] == "cond")
    assert cond["status"] == "translated" and cond["entries"] == ["cond__beta_eq_0_p_0", "cond__not_beta_eq_0_p_0"]
    assert got["shape"][:2] == ("unsupported", "CT105") and "ct.Constant[float] `S`" in got["shape"][2], got


def test_a_sibling_change_reaches_the_kernels_that_import_it(tmp_path):
    """A helper or constant imported from a sibling module is inlined: changing the sibling changes the
    importer's port (the result cache keys each file on the modules it imports from too)."""
    import shutil
    pkg = tmp_path / "src"
    shutil.copytree(FIXTURES / "package", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "out"
    env_args = ("-o", out, "-q", "--no-compile-check")
    assert cli(pkg, *env_args).returncode == 0
    rust = next(out.glob("src/*act*/kernel.rs"))
    before = rust.read_text()
    consts = pkg / "mylib" / "consts.py"
    consts.write_text(consts.read_text().replace("GELU_C = 0.044715", "GELU_C = 0.05"))
    assert cli(pkg, *env_args).returncode == 0
    after = rust.read_text()
    assert before != after and "0.05" in after and "0.044715" in before


def test_a_diagnostic_in_an_imported_helper_points_into_its_module(tmp_path):
    import shutil
    pkg = tmp_path / "src"
    shutil.copytree(FIXTURES / "package", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    act = pkg / "mylib" / "common" / "activations.py"
    act.write_text(act.read_text().replace("return 0.5 * x * (1.0 + tile.tanh(inner))",
                                           "return 0.5 * x * (1.0 + tile.cumprod(inner))"))
    res = cli(pkg, "-o", tmp_path / "out", "--format", "json", "--no-compile-check")
    doc = json.loads(res.stdout)
    (k,) = [k for k in doc["kernels"] if k["name"] == "gelu_rows"]
    (d,) = k["diagnostics"]
    assert k["status"] == "unsupported" and d["code"] == "CT101" and "cumprod" in d["message"]
    assert d["path"].endswith("mylib/common/activations.py") and d["line"] == 11, d
    assert {x["name"]: x["status"] for x in doc["kernels"]}["exp2_rows"] == "translated"


def test_procedure_helpers_and_their_misuse(tmp_path):
    src = tmp_path / "k.py"
    src.write_text("""import cuda.tile as ct
C = ct.Constant[int]

def _store(out, i, v):
    ct.store(out, index=(i,), tile=v)
    return

def _bump(out, i, v):
    _store(out, i, v + 1.0)

@ct.kernel
def uses_procedures(x, z, T: C):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    _bump(z, ct.bid(0), t)

@ct.kernel
def uses_the_value(x, z, T: C):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    y = _bump(z, ct.bid(0), t)
""")
    res = cli(src, "-o", tmp_path / "out", "--format", "json", "--no-compile-check")
    doc = json.loads(res.stdout)
    st = {k["name"]: k for k in doc["kernels"]}
    assert st["uses_procedures"]["status"] == "translated"
    (d,) = st["uses_the_value"]["diagnostics"]
    assert st["uses_the_value"]["status"] == "unsupported" and "returns no value" in d["message"] and d["line"] == 19


def test_early_returns_static_asserts_and_full_rounding_that_are_refused(tmp_path):
    """What the port does not reproduce is refused with a diagnostic at its line: a helper that returns early
    called in a loop (cuTile Python would move its loads out of that loop too), one that returns under a
    constant test or from a loop, a load cuTile Python moves out of the one-trip loop apart from the rest of
    its statement; a static assertion that always fails or reads a runtime value; `rounding_mode=FULL` on
    division (cuTile Rust 0.5.0 cannot write it)."""
    src = tmp_path / "k.py"
    src.write_text("""import cuda.tile as ct
from cuda.tile._numeric_semantics import RoundingMode as RMd
C = ct.Constant[int]
LIMIT = 8

def _copy(x, z, i, n, T: C):
    if i >= n:
        return
    ct.store(z, index=(i,), tile=ct.load(x, index=(i,), shape=(T,)))

def _const_exit(x, z, i, T: C):
    if T > 64:
        return
    ct.store(z, index=(i,), tile=ct.load(x, index=(i,), shape=(T,)))

def _mixed(x, z, i, n, T: C):
    if i >= n:
        return
    u = ct.full((T,), 1.0, dtype=ct.float32) * i
    ct.store(z, index=(i,), tile=ct.load(x, index=(0,), shape=(T,)) + u)

@ct.kernel
def in_loop(x, z, n, T: C):
    for j in range(4):
        _copy(x, z, j, n, T)

@ct.kernel
def const_exit(x, z, T: C):
    _const_exit(x, z, ct.bid(0), T)

@ct.kernel
def mixed(x, z, n, T: C):
    _mixed(x, z, ct.bid(0), n, T)

@ct.kernel
def always_fails(x, z, T: C):
    ct.static_assert(LIMIT < 0, "never")
    ct.store(z, index=(0,), tile=ct.load(x, index=(0,), shape=(T,)))

@ct.kernel
def runtime_assert(x, z, n, T: C):
    ct.static_assert(n > 0)
    ct.store(z, index=(0,), tile=ct.load(x, index=(0,), shape=(T,)))

@ct.kernel
def full_division(x, z, T: C):
    t = ct.load(x, index=(0,), shape=(T,))
    ct.store(z, index=(0,), tile=ct.truediv(t, 3.0, rounding_mode=RMd.FULL))
""")
    res = cli(src, "-o", tmp_path / "out", "--format", "json", "--no-compile-check")
    doc = json.loads(res.stdout)
    got = {k["name"]: (k["status"], k["diagnostics"][0]["code"], k["diagnostics"][0]["line"])
           for k in doc["kernels"]}
    assert got == {"in_loop": ("unsupported", "CT107", 25), "const_exit": ("unsupported", "CT107", 12),
                   "mixed": ("unsupported", "CT107", 20), "always_fails": ("unsupported", "CT117", 37),
                   "runtime_assert": ("unsupported", "CTR-STATIC-ASSERT", 42),
                   "full_division": ("unsupported", "CT107", 48)}, got


def test_every_blocker_of_a_kernel_is_reported(tmp_path):
    """A statement that fails does not hide the next: each blocker once, in source order, the first one
    first (a helper's failure is one blocker at its call)."""
    src = tmp_path / "k.py"
    src.write_text("import cuda.tile as ct\n\n"
                   "def helper(t):\n    return ct.frobnicate(t)\n\n"
                   "@ct.kernel\ndef k(x, y):\n"
                   "    t = ct.load(x, index=(0,), shape=(4,))\n"
                   "    a = t.frobnicate_rows(0, 2)\n"
                   "    b = helper(t)\n"
                   "    c = t.frobnicate_rows(0, 2)\n"
                   "    ct.store(y, index=(0,), tile=t)\n")
    res = cli(src, "-o", tmp_path / "out", "--format", "json")
    (k,) = json.loads(res.stdout)["kernels"]
    assert k["status"] == "unsupported" and res.returncode == 1
    assert [(d["code"], d["line"]) for d in k["diagnostics"]] == [("CT101", 9), ("CT101", 4), ("CT101", 11)], k


@requires_toolchain
def test_mixed_dtype_checks_compare_each_arrays_dtype(tmp_path, monkeypatch):
    """Mutant: verification gives cuTile Python every array in E's dtype (it forgets W's own generic) while
    the port is compiled with W's: the checks with mixed element types (`f16+f32`) must be `different`."""
    from transpiler.pipeline import run, write_outputs
    from transpiler.verify import run as verify_run
    out = tmp_path / "out"
    write_outputs(run([FIXTURES / "features" / "dtypes" / "mixed_arrays.py"], out)[1])
    real = verify_run.element_types
    monkeypatch.setattr(verify_run, "element_types", lambda k, d: {g: d.split("+")[0] for g in real(k, d)})
    (v,) = verify_run.verify_output(out, ["rms_norm_mixed"])
    verdicts = {c.dtype: c.verdict for c in v.checks if c.probe is None}
    # (X, W and Y: three generics, verified at each of the 13 combinations the symbol exports)
    assert len(verdicts) == 13 and {d for d, x in verdicts.items() if x == "equivalent"} == {"f16", "bf16", "f32"} \
        and {"f16+f32+f16", "f32+f16+f32"} <= set(verdicts), verdicts
    monkeypatch.setattr(verify_run, "element_types", real)
    (v,) = verify_run.verify_output(out, ["rms_norm_mixed"])
    assert {c.verdict for c in v.checks} == {"equivalent"} and {c.dtype for c in v.checks} >= {"f16+f32+f16", "f32+f16+f32"}


@requires_toolchain
def test_three_element_classes_are_verified_at_every_exported_combination(tmp_path, monkeypatch):
    """dtypes/mixed_precision.py (a split-K reduce: f16 partials, f32 log-sum-exps, f16 output; a norm backward
    of five classes): each kernel keeps three generics and is `equivalent` at every combination its symbol
    exports (manifest `element_combinations`), each compared. Mutant: cuTile Python given every array in E's
    dtype: the mixed combinations are `different`."""
    from transpiler.pipeline import run, write_outputs
    from transpiler.verify import run as verify_run
    out = tmp_path / "out"
    write_outputs(run([FIXTURES / "features" / "dtypes" / "mixed_precision.py"], out)[1])
    manifest = json.loads((out / "manifest.json").read_text())
    exported = {k["name"]: {"+".join(c) if len(set(c)) > 1 else c[0] for c in k["element_combinations"]}
                for m in manifest["modules"] for k in m["kernels"]}
    assert "f16+f32+f16" in exported["splitk_merge"] and "bf16+bf16+f32" in exported["norm_backward_rows"]
    for v in verify_run.verify_output(out):
        assert v.verdict == "equivalent", (v.kernel, v.reason, [(c.dtype, c.verdict) for c in v.checks])
        assert {c.dtype for c in v.checks if c.probe is None} == exported[v.kernel], v.kernel
    real = verify_run.element_types
    monkeypatch.setattr(verify_run, "element_types", lambda k, d: {g: d.split("+")[0] for g in real(k, d)})
    for v in verify_run.verify_output(out):
        verdicts = {c.dtype: c.verdict for c in v.checks if c.probe is None}
        assert {d for d, x in verdicts.items() if x == "different"} == {d for d in verdicts if "+" in d}, verdicts


def _partner_manifest(out: Path) -> dict:
    from transpiler.pipeline import run, write_outputs
    write_outputs(run([FIXTURES / "features" / "dtypes" / "partner_elements.py"], out)[1])
    return {k["name"]: k for m in json.loads((out / "manifest.json").read_text())["modules"] for k in m["kernels"]}


def test_partner_element_generics_keep_f32_state_and_lse_apart(tmp_path, monkeypatch):
    """dtypes/partner_elements.py (TileGym 1.5.1's recurrent gated delta rule: StateIn f32 next to f16 Query,
    merged into Query's E past three classes; its attention sink decode: LSE_Out f32 stored from a tile
    converted to Att_Out's dtype, merged with Att_Out; both calls were refused): StateIn and Lse keep their own
    generic, a partner of Query's and Out's (manifest `partner`), and the symbol exports the partner at that
    dtype or f32 (f16 activations with an f32 state, an f16 output with an f32 LSE), never another dtype (a bf16
    LSE from an f16 tile: cuTile Python refuses that store). Mutant: the store's implicit cast not taken
    (memory._partner_cast returns the tile): Lse shares Out's generic again."""
    from transpiler.passes.ops import memory
    kernels = _partner_manifest(tmp_path / "out")

    def arrays(k):
        return {p["name"]: (p["dtype"], p.get("partner")) for p in k["params"] if p["kind"] == "array"}

    def combos(k):
        return {tuple(c) for c in k["element_combinations"]}
    state = kernels["decay_state"]
    assert arrays(state) == {"Query": ("E", None), "Gate": ("E2", None), "Beta": ("E3", None),
                             "Output": ("E", None), "StateIn": ("E4", "Query"), "StateOut": ("f32", None)}
    # the 13 of three generics, each with StateIn at Query's dtype, and 8 with an f32 state next to f16/bf16
    assert len(combos(state)) == 21 and {("f16", "f16", "f16", "f32"), ("bf16", "f32", "bf16", "f32")} \
        <= combos(state) and all(c[3] in (c[0], "f32") for c in combos(state)), combos(state)
    for name in ("softmax_with_lse", "scatter_lse"):
        k = kernels[name]
        assert arrays(k) == {"X": ("E", None), "Out": ("E2", None), "Lse": ("E3", "Out")}, arrays(k)
        assert len(combos(k)) == 11 and {("f16", "f16", "f32"), ("bf16", "bf16", "f32")} <= combos(k) \
            and all(c[2] in (c[1], "f32") for c in combos(k)), combos(k)
    from transpiler import cache
    monkeypatch.setattr(memory, "_partner_cast", lambda infer, v, generic, e: v)
    monkeypatch.setattr(cache, "file_key", lambda *args: None)  # the mutant changes the tool, not the file
    mutant = _partner_manifest(tmp_path / "mutant")
    assert arrays(mutant["softmax_with_lse"])["Lse"] == ("E2", None), arrays(mutant["softmax_with_lse"])


@requires_toolchain
def test_partner_element_generics_are_verified_at_each_exported_combination(tmp_path, monkeypatch):
    """dtypes/partner_elements.py: each kernel `equivalent` at every combination its symbol exports (a partner
    at f32 next to f16 activations included), each compared. Mutant: cuTile Python given the partner's arrays
    at their partner's dtype (the f32 forgotten): the checks with the partner at f32 are `different`."""
    from transpiler.verify import run as verify_run
    out = tmp_path / "out"
    kernels = _partner_manifest(out)
    exported = {n: {"+".join(c) if len(set(c)) > 1 else c[0] for c in k["element_combinations"]}
                for n, k in kernels.items()}
    for v in verify_run.verify_output(out):
        assert v.verdict == "equivalent", (v.kernel, v.reason, [(c.dtype, c.verdict) for c in v.checks])
        assert {c.dtype for c in v.checks if c.probe is None} == exported[v.kernel], v.kernel
    real = verify_run.element_types
    partner_of = {"decay_state": ("E4", "E"), "softmax_with_lse": ("E3", "E2"), "scatter_lse": ("E3", "E2")}

    def forgetful(k, d):
        types = real(k, d)
        g, of = partner_of[k["name"]]
        return {**types, g: types[of]}
    monkeypatch.setattr(verify_run, "element_types", forgetful)
    for v in verify_run.verify_output(out):
        verdicts = {c.dtype: c.verdict for c in v.checks if c.probe is None}
        g, of = partner_of[v.kernel]
        apart = {d for d in verdicts if "+" in d and (lambda c: c[int(g[1:]) - 1] != c[int(of[1:] or 1) - 1])(d.split("+"))}
        assert apart and {d for d, x in verdicts.items() if x == "different"} == apart, verdicts


@requires_toolchain
def test_a_count_table_takes_integer_dtypes_each_verified(tmp_path, monkeypatch):
    """dtypes/count_table.py (TileGym's moe_align_block stage 2: int32 counts gathered with padding 0, summed,
    scattered back): the array's generic takes the kernel's dtypes and i32, i64 (it had f16, bf16, f32 only,
    and the int32 call was refused), and verify compares each, `equivalent` (the port's padding literal is an
    f32 constant converted with `ftoi`, which normalize folds: N8). Mutant: the port's literals one larger:
    the integer checks are `different`."""
    from transpiler.emit import lower
    from transpiler.pipeline import run, write_outputs
    from transpiler.verify import run as verify_run
    out = tmp_path / "out"
    write_outputs(run([FIXTURES / "features" / "dtypes" / "count_table.py"], out)[1])
    (k,) = [k for m in json.loads((out / "manifest.json").read_text())["modules"] for k in m["kernels"]]
    (counts,) = [p for p in k["params"] if p["kind"] == "array"]
    assert counts["dtype"] == "E" and counts["domain"] == ["f16", "bf16", "f32", "i32", "i64"], counts
    (v,) = verify_run.verify_output(out)
    verdicts = {c.dtype: c.verdict for c in v.checks if c.probe is None}
    assert verdicts == dict.fromkeys(["f16", "bf16", "f32", "i32", "i64"], "equivalent"), verdicts
    from transpiler import cache
    real = lower._float_lit
    monkeypatch.setattr(lower, "_float_lit", lambda x, wide=False: real(x + 1, wide))
    monkeypatch.setattr(cache, "file_key", lambda *args: None)  # the mutant changes the tool, not the file
    mutant = tmp_path / "mutant"
    write_outputs(run([FIXTURES / "features" / "dtypes" / "count_table.py"], mutant)[1])
    (v,) = verify_run.verify_output(mutant)
    verdicts = {c.dtype: c.verdict for c in v.checks if c.probe is None}
    assert verdicts["i32"] == verdicts["i64"] == "different", verdicts


@requires_toolchain
def test_an_unused_array_takes_any_argument_and_never_changes_the_tile_ir(tmp_path, monkeypatch):
    """dtypes/unused_array.py (TileGym's fused MoE kernel: `a_scale_ptr`, `b_scale_ptr` never read unquantized,
    passed as empty tensors; they were typed f32 scalars and every real call was refused): the never-named
    parameters are unused arrays (manifest `unused`), verified `equivalent`; cuTile Python given them as int8
    or f16 arrays compiles a Tile IR that is still `equivalent` to the same port (the unused array cannot
    change it). Mutant: cuTile Python given a *read* array (`X`) at another dtype: `different`."""
    from transpiler.pipeline import run, write_outputs
    from transpiler.verify import run as verify_run
    out = tmp_path / "out"
    write_outputs(run([FIXTURES / "features" / "dtypes" / "unused_array.py"], out)[1])
    (k,) = [k for m in json.loads((out / "manifest.json").read_text())["modules"] for k in m["kernels"]]
    assert [(p["name"], p["kind"], p["dtype"], p["rank"]) for p in k["params"] if p.get("unused")] == \
        [("A_scale", "array", "f32", 1), ("B_scale", "array", "f32", 1)], k["params"]

    def verdicts(retype: dict) -> dict:
        real = verify_run._python_bytecode

        def python_side(kernel_obj, params, spec, elements, path):
            return real(kernel_obj, [{**p, "dtype": retype.get(p["name"], p["dtype"])} for p in params], spec,
                        elements, path)
        monkeypatch.setattr(verify_run, "_python_bytecode", python_side)
        (v,) = verify_run.verify_output(out)
        monkeypatch.setattr(verify_run, "_python_bytecode", real)
        return {c.dtype: c.verdict for c in v.checks if c.probe is None}
    every = verdicts({})
    assert set(every.values()) == {"equivalent"} and {"f16", "bf16", "f32", "f16+f32"} <= set(every), every
    assert verdicts({"A_scale": "i8", "B_scale": "f16"}) == every
    assert verdicts({"A_scale": "bf16", "B_scale": "i64"}) == every
    assert set(verdicts({"X": "i8"}).values()) == {"different"}


def _fixture_verdicts(tmp_path, monkeypatch, fixture: str):
    """verdicts(tag): the feature fixture ported (in-process, so a monkeypatched mutant applies) to
    tmp_path/tag and verified at f32, kernel -> verdict."""
    from transpiler import cache
    from transpiler.pipeline import run, write_outputs
    from transpiler.verify.run import verify_output
    src = tmp_path / "src"
    src.mkdir()
    (src / fixture).write_text((FIXTURES / "features" / fixture).read_text())
    (src / "pyproject.toml").write_text('[tool.cutile-transpile]\ndtypes = ["f32"]\n')
    monkeypatch.setattr(cache, "file_key", lambda *args: None)  # the mutants change the tool, not the file

    def verdicts(tag):
        out = tmp_path / tag
        write_outputs(run([src], out)[1])
        return {v.kernel: v.verdict for v in verify_output(out)}
    return verdicts


@requires_toolchain
def test_fusion_beyond_the_variant_budget_is_guarded(tmp_path, monkeypatch):
    """fma_flags.py `z_loss_rows`: a square added to the loss and stored under STORE_Z. cuTile Python fuses the add
    where STORE_Z is off; the port splits the kernel on STORE_Z while the variant budget lasts (TileGym's liger
    cross entropy has 7 flags and reached it). Past the budget the add is guarded: `if STORE_Z { add } else
    { fma }` in one entry, equivalent at both values. Mutant: no guard, `different` where STORE_Z is off."""
    from transpiler.passes import fma, specialize
    verdicts = _fixture_verdicts(tmp_path, monkeypatch, "fma_flags.py")
    monkeypatch.setattr(specialize, "MAX_VARIANTS", 1)
    assert verdicts("guarded")["z_loss_rows"] == "equivalent"
    rust = (tmp_path / "guarded" / "src").rglob("*.rs")
    assert any("fn z_loss_rows<" in p.read_text() and "z_loss_rows__not_store_z" not in p.read_text() for p in rust)
    monkeypatch.setattr(fma._Fuser, "guard", lambda self, stmts, i, d: None)
    assert verdicts("unguarded")["z_loss_rows"] == "different"

@requires_toolchain
def test_return_in_a_loop_is_rewritten_as_cutile_python_does(tmp_path, monkeypatch, features_verified):
    """loop_return.py verifies equivalent; two mutants of the rewrite must not: the break at a return site
    yielding the values the iteration reached (not those it started with), and the `returned` flag carried
    after the break flag (cuTile Rust carries values in name order)."""
    from transpiler.frontend import common as cutile_python
    _real_restore = cutile_python._restore_at_returns
    verdicts = _fixture_verdicts(tmp_path, monkeypatch, "loop_return.py")
    names = ("store_until", "sum_until", "return_or_break", "sum_until_unless_fast")
    assert _verified(features_verified, *names) == dict.fromkeys(names, "equivalent")
    monkeypatch.setattr(cutile_python, "_restore_at_returns", lambda stmts, *a: tuple(stmts))
    got = verdicts("no_restore")
    assert got["sum_until"] == "different" and got["sum_until_unless_fast"] == "different", got
    monkeypatch.setattr(cutile_python, "_restore_at_returns", _real_restore)
    # the statements before a folded constant `if` not seen as defined before the loop in its arm: `acc` is
    # then not restored at the return site
    real_prefix = cutile_python.Converter._top_prefix
    monkeypatch.setattr(cutile_python.Converter, "_top_prefix", lambda self, converted: contextlib.nullcontext())
    assert verdicts("no_prefix")["sum_until_unless_fast"] == "different"
    monkeypatch.setattr(cutile_python.Converter, "_top_prefix", real_prefix)
    monkeypatch.setattr(cutile_python, "_returned_flag", lambda flag: flag.replace("_break", "_zreturned"))
    got = verdicts("flag_after")
    assert got["return_or_break"] == "different" and got["store_until"] == "different", got


@requires_toolchain
def test_masked_loops_are_split_as_cutile_python_splits_them(tmp_path, monkeypatch, features_verified):
    """loop_split.py verifies equivalent; mutants of the split must not: a copy that no longer carries a value
    only the other arm updates, and `last < j` split at `last` instead of `last + 1`."""
    from transpiler.passes import loop_split
    verdicts = _fixture_verdicts(tmp_path, monkeypatch, "loop_split.py")
    names = ("causal_rows", "full_then_masked", "skip_past", "diagonal_scaled", "arm_local")
    assert _verified(features_verified, *names) == dict.fromkeys(names, "equivalent")
    real_clone = loop_split._clone
    monkeypatch.setattr(loop_split, "_clone", lambda body, node, take, carried: real_clone(body, node, take, []))
    assert verdicts("not_carried")["skip_past"] == "different"
    monkeypatch.setattr(loop_split, "_clone", real_clone)
    monkeypatch.setattr(loop_split, "ADD_ONE", {k: False for k in loop_split.ADD_ONE})
    assert verdicts("no_plus_one")["skip_past"] == "different"


@requires_toolchain
def test_constant_conditions_are_verified_at_the_values_they_compare_with(tmp_path, monkeypatch, features_verified):
    """`if SKIP_LOAD == 1: ...; return` (early_return.py) is folded per value; verification probes 0, 1 and 2
    besides the launch value, so both arms are compared. Mutant: the arm that returns also runs the rest of
    the kernel; it differs only at SKIP_LOAD == 1, so it is `different` with the comparand probes (and, since
    the port splits this `if` into an entry per arm, also without them)."""
    from transpiler.frontend import common as cutile_python
    from transpiler.passes import flags
    verdicts = _fixture_verdicts(tmp_path, monkeypatch, "early_return.py")
    assert _verified(features_verified, "early_ret", "const_early_ret") == dict.fromkeys(
        ("early_ret", "const_early_ret"), "equivalent")
    monkeypatch.setattr(cutile_python, "arm_then", lambda arm, rest: (
        cutile_python._without_final_return(arm) if cutile_python._ends_in_return(arm) else arm) + rest)
    assert verdicts("runs_on")["const_early_ret"] == "different"
    monkeypatch.setattr(flags, "condition_comparands", lambda kernel: {})
    # the Rust's own `if SKIP_LOAD == 1` is probed on both sides too (verify/run.py `_rust_condition_probes`)
    assert verdicts("runs_on_rust_probed")["const_early_ret"] == "different"
    from transpiler.verify import run as verify_run
    monkeypatch.setattr(verify_run, "_rust_condition_probes", lambda *a: [])
    # without either probe the mutant is still caught: the arms order different arrays by tokens, so the port
    # has an entry per arm (`__skip_load_eq_1`), each checked at a value that takes its arm
    assert verdicts("runs_on_unprobed")["const_early_ret"] == "different"


def test_a_cutile_kernel_under_module_configuration_is_taken_once(tmp_path):
    """A @ct.kernel defined in both arms of a module-level `if` on an environment variable: the arm taken with no
    variable set is ported (its body), the other is neither ported nor reported; a kernel under an `if` the port
    cannot decide is reported (CT113), as a kernel outside the module's top level."""
    src = tmp_path / "k.py"
    src.write_text(
        "import os\n\nimport cuda.tile as ct\n\nConstInt = ct.Constant[int]\n\n"
        "if os.environ.get('K_TWICE', '') == 'yes':\n"
        "    @ct.kernel\n    def scale(x, y, TILE: ConstInt):\n"
        "        ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(TILE,)) * 3)\n"
        "else:\n"
        "    @ct.kernel\n    def scale(x, y, TILE: ConstInt):\n"
        "        ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(TILE,)) * 2)\n\n"
        "if os.cpu_count() > 4:\n"
        "    @ct.kernel\n    def other(x, TILE: ConstInt):\n"
        "        ct.store(x, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(TILE,)))\n")
    res = cli(src, "-o", tmp_path / "out", "--format", "json", "--no-compile-check")
    doc = json.loads(res.stdout)
    got = sorted((k["name"], k["status"], [d["code"] for d in k["diagnostics"]]) for k in doc["kernels"])
    assert got == [("other", "unsupported", ["CT113"]), ("scale", "translated", [])], got
    rust = (tmp_path / "out" / "src" / "k" / "kernel.rs").read_text()
    assert "* 2" in rust and "* 3" not in rust


def test_decorators_above_ct_kernel_are_ported_below_it_refused(tmp_path):
    """A decorator above `@ct.kernel` receives the kernel object (TileGym's `@experimental_kernel`); one
    below it changes the function cuTile Python compiles (CT112)."""
    src = tmp_path / "deco.py"
    src.write_text("import functools\nimport cuda.tile as ct\n\n\n"
                   "def tagged(k):\n    k._note = 'experimental'\n    return k\n\n\n"
                   "@tagged\n@ct.kernel\n"
                   "def above(x, T: ct.Constant[int]):\n"
                   "    ct.store(x, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(T,)) + 1)\n\n\n"
                   "@ct.kernel\n@functools.lru_cache\n"
                   "def below(x, T: ct.Constant[int]):\n"
                   "    ct.store(x, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(T,)) + 1)\n")
    res = cli(src, "-o", tmp_path / "out", "--format", "json", "--no-compile-check")
    got = {k["name"]: (k["status"], [(d["code"], d["line"]) for d in k["diagnostics"]])
           for k in json.loads(res.stdout)["kernels"]}
    assert got == {"above": ("translated", []), "below": ("unsupported", [("CT112", 17)])}, got


def test_verification_refuses_a_decorator_that_replaces_the_kernel(tmp_path):
    """Verification compiles the module's object for the kernel's name: a decorator above `@ct.kernel` that
    hands back another kernel (or anything else) makes the check fail instead of comparing the wrong code."""
    import importlib.util

    import pytest

    from transpiler.verify.run import _module_kernel
    src = tmp_path / "swap.py"
    src.write_text("import cuda.tile as ct\n\n\n"
                   "@ct.kernel\ndef other(x):\n    pass\n\n\n"
                   "def swap(k):\n    return other\n\n\n"
                   "@swap\n@ct.kernel\ndef k(x):\n    pass\n\n\n"
                   "@ct.kernel\ndef plain(x):\n    pass\n")
    spec = importlib.util.spec_from_file_location("swap_fixture_mod", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert _module_kernel(mod, "plain", src) is mod.plain
    with pytest.raises(LookupError, match="replaced it"):
        _module_kernel(mod, "k", src)


def test_mma_of_one_generic_into_another_exports_only_the_pairs_cuda_tile_compiles(tmp_path):
    """`ct.mma(a, b, acc)` with operands of E2 and an accumulator of E (three generics: a bounded list of dtype
    combinations): cuTile Python's mma accumulates bf16 in f32 only and f16 in f16 or f32, so the C symbol exports
    only the combinations where that holds (a bf16 accumulator, or bf16 operands into f16, is refused as cuTile
    Python refuses it), and the manifest says why (`mma_pairs`)."""
    from transpiler.frontend.source import parse_file
    from transpiler.pipeline import kernel_result
    from transpiler.passes.ops.linalg import MMA_ACC_DTYPES
    path = tmp_path / "k.py"
    path.write_text(
        "import cuda.tile as ct\n\nC = ct.Constant[int]\n\n\n@ct.kernel\n"
        "def state_grad(dstate, dout, x, gate, BM: C, BN: C):\n"
        "    acc = ct.load(dstate, index=(ct.bid(0), 0), shape=(BM, BN))\n"
        "    a = ct.load(dout, index=(ct.bid(0), 0), shape=(BM, BN))\n"
        "    b = ct.load(x, index=(0, 0), shape=(BN, BN))\n"
        "    acc = ct.mma(a, b, acc)\n"
        "    g = ct.load(gate, index=(ct.bid(0),), shape=(BM,))\n"
        "    acc = acc * ct.reshape(ct.astype(g, acc.dtype), (BM, 1))\n"
        "    ct.store(dstate, index=(ct.bid(0), 0), tile=acc)\n")
    (k,) = parse_file(path, "k.py").kernels
    res = kernel_result(k, path, "k.py")
    assert res.status == "translated", [d.text() for d in res.diagnostics]
    dtypes = {p["name"]: p["dtype"] for p in res.manifest["params"] if p["kind"] == "array"}
    assert (dtypes["dstate"], dtypes["dout"]) == ("E", "E2") and res.manifest["mma_pairs"] == [["E2", "E"]]
    combos = res.manifest["element_combinations"]
    assert combos and all(e in MMA_ACC_DTYPES[e2] for e, e2, *_ in combos), combos
    assert ["f16", "f16", "f16"] in combos and not any(e == "bf16" for e, *_ in combos)


@requires_toolchain
def test_an_array_read_only_under_a_constant_flag_is_unused_where_the_flag_is_off(tmp_path):
    """dtypes/flag_read_array.py (TileGym's attention variant: `Random_mask` read only `if USE_RANDOM_MASK`,
    passed as an empty int8 vector otherwise): the manifest records the condition (`read_when`), the C symbol
    tests it before it checks the descriptor, and the port is verified `equivalent` (the host-layer part of
    verify, glue.unread_mismatches, launches the flag-off call with an int8 placeholder and a null descriptor
    and refuses one of the wrong rank with the flag on). A mask loaded above the `if` keeps its checks (no
    `read_when`)."""
    from transpiler.pipeline import run, write_outputs
    from transpiler.verify import run as verify_run
    out = tmp_path / "out"
    write_outputs(run([FIXTURES / "features" / "dtypes" / "flag_read_array.py"], out)[1])
    kernels = {k["name"]: k for m in json.loads((out / "manifest.json").read_text())["modules"] for k in m["kernels"]}
    conditional = {n: {p["name"]: p["read_when"] for p in k["params"] if p.get("read_when")} for n, k in kernels.items()}
    assert conditional == {"masked_scale_rows": {"Mask": "USE_MASK"}, "mask_loaded_before_the_flag": {},
                           "mask_under_a_derived_flag": {}}, conditional
    assert all(k.get("symbol") for k in kernels.values()), {n: k.get("symbol") for n, k in kernels.items()}
    ffi = (out / "src" / "flag_read_array" / "ffi.rs").read_text()
    assert "abi::unread_arg(2)" in ffi and ffi.count("abi::unread_arg") == 1, ffi
    verdicts = {v.kernel: v.verdict for v in verify_run.verify_output(out)}
    assert verdicts == dict.fromkeys(kernels, "equivalent"), verdicts
