"""Unit tests per pass: frontend resolution, inference, FMA fusion, variants, ownership, specializations."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from transpiler.diagnostics import TranspileError
from transpiler.frontend.source import parse_file
from transpiler.model.dump import dump_kernel
from transpiler.model.ir import Op, TileTy
from transpiler.passes.type_rules import broadcast_shapes, promote
from transpiler.pipeline import translate_kernel
from transpiler.verify.specs import specializations


def kernels(tmp_path: Path, src: str):
    p = tmp_path / "k.py"
    p.write_text(textwrap.dedent(src))
    fr = parse_file(p, "k.py")
    return fr


def translate(tmp_path, src):
    fr = kernels(tmp_path, src)
    assert not fr.failures, [d.text() for _, _, d in fr.failures]
    return [v for k in fr.kernels for v in translate_kernel(k)]


def test_aliases_and_from_imports(tmp_path):
    (v,) = translate(tmp_path, """
        from cuda import tile as t
        from cuda.tile import load, store, bid, Constant
        C = Constant[int]
        @t.kernel
        def k(x, y, T: C):
            store(y, index=(bid(0),), tile=load(x, index=(bid(0),), shape=(T,)))
    """)
    assert [p.kind for p in v.params] == ["array", "array", "const"]


def test_module_constants_and_math(tmp_path):
    (v,) = translate(tmp_path, """
        import math
        import cuda.tile as ct
        SCALE = 1.0 / math.log(2)
        @ct.kernel
        def k(x, y, T: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(T,)).astype(ct.float32)
            ct.store(y, index=(ct.bid(0),), tile=(t * SCALE).astype(y.dtype))
    """)
    assert "1.4426950408889634" in dump_kernel(v)


def test_helper_is_inlined(tmp_path):
    (v,) = translate(tmp_path, """
        import cuda.tile as ct
        def _relu(t):
            z = ct.maximum(t, 0.0)
            return z
        @ct.kernel
        def k(x, y, T: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(T,))
            ct.store(y, index=(ct.bid(0),), tile=_relu(t))
    """)
    text = dump_kernel(v)
    assert "_relu1_z = maximum(" in text


def test_unknown_call_is_fail_closed(tmp_path):
    fr = kernels(tmp_path, """
        import cuda.tile as ct
        @ct.kernel
        def k(x, y, T: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(T,))
            ct.store(y, index=(ct.bid(0),), tile=ct.cumprod(t, 0))
    """)
    (name, _, diag) = fr.failures[0]
    assert name == "k" and diag.code == "CT101" and diag.pos.line == 6 and "cumprod" in diag.message


def test_unknown_keyword_uses_rule_code(tmp_path):
    fr = kernels(tmp_path, """
        import cuda.tile as ct
        @ct.kernel
        def k(x, y, T: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(T,), check_bounds=False)
            ct.store(y, index=(ct.bid(0),), tile=t)
    """)
    assert fr.failures[0][2].code == "CTR-LOAD"


def test_promotion_rules():
    assert promote("f16", "f32", None) == "f32"
    assert promote("E", "f32", None) == "f32"
    assert promote("i32", "f32", None) == "f32"
    assert promote("i32", "i64", None) == "i64"
    with pytest.raises(TranspileError):
        promote("E", "f16", None)
    assert broadcast_shapes(("BM", "1"), ("BN",), None) == ("BM", "BN")
    with pytest.raises(TranspileError):
        broadcast_shapes(("BM",), ("BN",), None)


def _promote_before_the_table(a: str, b: str, pos) -> str:
    """promote() as code, before its table moved to rules/promotion_cutile_python.toml (kept to compare)."""
    from transpiler.diagnostics import fail
    from transpiler.model.ir import is_generic
    from transpiler.passes.type_rules import is_float, unify_generics
    if a == b:
        return a
    if is_float(a) and is_float(b):
        unify_generics(a, b)
        if is_generic(a) or is_generic(b):
            generic, other = (a, b) if is_generic(a) else (b, a)
            if other in ("f32", "f64"):
                return other
            raise fail("CT104", f"cannot decide the promotion of the array dtype {generic} with {other} for every "
                       "specialization; add an explicit conversion (`astype` in cuTile Python, `.to()` in Triton)", pos)
        order = ["f8e4m3fn", "f8e5m2", "f16", "bf16", "tf32", "f32", "f64"]
        if {a, b} == {"f16", "bf16"}:
            return "f32"
        return max(a, b, key=order.index)
    if is_float(a) and not is_float(b):
        return a
    if is_float(b):
        return b
    if a == "bool":
        return b
    if b == "bool":
        return a
    order = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"]
    return max(a, b, key=order.index)


def test_promotion_table_gives_what_the_code_gave():
    """Every pair of model dtypes (and the element-type generics) promotes as before the table: the same
    dtype, or the same refusal (CT104) or merge of generics (UnifyElements)."""
    from transpiler.model.ir import FLOAT_DTYPES, INT_DTYPES
    from transpiler.passes.type_rules import UnifyElements
    from transpiler.rules import load_promotion

    def outcome(fn, a, b):
        try:
            return fn(a, b, None)
        except TranspileError as e:
            return ("fail", e.diagnostic.code, e.diagnostic.message)
        except UnifyElements as e:
            return ("unify", e.keep, e.merge)

    dtypes = FLOAT_DTYPES + INT_DTYPES + ("bool", "E", "E2")
    for a in dtypes:
        for b in dtypes:
            assert outcome(promote, a, b) == outcome(_promote_before_the_table, a, b), (a, b)
    table = load_promotion().result
    assert set(table) == {(a, b) for a in dtypes[:-2] for b in dtypes[:-2]}
    assert all(table[(a, b)] == table[(b, a)] for a, b in table)


def test_every_rule_op_has_a_handler_in_its_family():
    """Each rule's `op` is typed by a handler in the module of passes/ops/ its `family` names (`fma`, which
    passes/fma.py makes after inference, has one too: the libdevice ports write fmas, rules/triton_libdevice.py)."""
    from transpiler.passes.ops import HANDLERS, family
    from transpiler.rules import load
    rules = load().rules
    assert {r.op for r in rules if r.op not in HANDLERS} == set()
    assert [(r.id, r.op, r.family) for r in rules if r.op in HANDLERS and family(r.op) != r.family] == []
    assert {r.family for r in rules} <= {"control", "creation", "elementwise", "linalg", "memory", "reductions",
                                         "shape"}


def rule_ids_named_in(root: Path) -> dict[str, str]:
    """Each rule id (`CTR-*`, `TTR-*`) a string literal of the code under `root` names -> one file naming it:
    the ids ops carry (`rule="TTR-HOIST"`, positional too), `rules_used` records and diagnostics report."""
    import ast
    import re
    found = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and re.fullmatch(r"(CTR|TTR)-[A-Z0-9]+(-[A-Z0-9]+)*", node.value):
                found.setdefault(node.value, str(path.relative_to(root)))
    return found


def test_every_rule_id_the_code_names_has_a_row():
    """Rules are data: an id the code gives an op or a diagnostic has its row in a rule table, which the rules
    report and the rule coverage read (TTR-HOIST, TTR-MATH-SQRT, TTR-RAISE had none)."""
    from transpiler.rules import load
    rows = {r.id for name in ("cutile_python", "triton") for r in load(name).rules}
    named = rule_ids_named_in(Path(__file__).resolve().parent.parent / "transpiler")
    assert len(named) > 20  # the scan sees the code (ids given positionally and as keywords)
    assert {"TTR-HOIST", "TTR-RAISE", "TTR-MATH-SQRT", "CTR-FMA"} <= set(named)
    assert {i: f for i, f in named.items() if i not in rows} == {}


def test_an_op_without_a_handler_is_refused_with_its_rule_code():
    from transpiler.model.ir import Assign, Kernel, Name, Param, Pos
    from transpiler.passes.infer import infer
    pos = Pos("k.py", 1, 0)
    x = Name("x", pos)
    for rule, code in (("", "CT101"), ("CTR-FMA", "CTR-FMA")):
        k = Kernel("k", "k", "k.py", pos, (Param("x", "scalar", pos, dtype="f32"),),
                   (Assign(("y",), Op("fused_frobnicate", (x, x, x), pos, rule=rule), pos),))
        with pytest.raises(TranspileError) as err:
            infer(k)
        assert err.value.diagnostic.code == code and "`fused_frobnicate` is not supported here" in \
            err.value.diagnostic.message


def test_literals_take_the_tile_dtype_and_broadcast_is_explicit(tmp_path):
    (v,) = translate(tmp_path, """
        import cuda.tile as ct
        @ct.kernel
        def k(x, y, BM: ct.Constant[int], BN: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0), 0), shape=(BM, BN))
            m = ct.max(t, axis=1, keepdims=True)
            ct.store(y, index=(ct.bid(0), 0), tile=(t - m) * 2.0)
    """)
    text = dump_kernel(v)
    assert "broadcast(%m : Tile[E, (BM, 1)]) : Tile[E, (BM, BN)]" in text
    assert "splat(2.0 : E) : Tile[E, (BM, BN)]" in text


def test_fma_fusion_patterns(tmp_path):
    (v,) = translate(tmp_path, """
        import cuda.tile as ct
        @ct.kernel
        def k(a, b, c, y, T: ct.Constant[int]):
            x = ct.load(a, index=(ct.bid(0),), shape=(T,)).astype(ct.float32)
            z = ct.load(b, index=(ct.bid(0),), shape=(T,)).astype(ct.float32)
            i = ct.load(c, index=(ct.bid(0),), shape=(T,)).astype(ct.int32)
            r1 = x * z + x
            r2 = x - x * z
            r3 = x * z - z
            ri = i * i + i
            ct.store(y, index=(ct.bid(0),), tile=(r1 + r2 + r3 + ri).astype(y.dtype))
    """)
    text = dump_kernel(v)
    assert "r1 = fma(%x" in text
    assert "r2 = fma(neg(%x" in text
    assert "r3 = fma(%x : Tile[f32, (T)], %z : Tile[f32, (T)], neg(%z" in text
    assert "ri = add(mul(" in text  # integers are never fused


def test_same_type_constant_branch_stays_one_entry(tmp_path):
    vs = translate(tmp_path, """
        import cuda.tile as ct
        @ct.kernel
        def k(x, y, T: ct.Constant[int], F: ct.Constant[bool]):
            t = ct.load(x, index=(ct.bid(0),), shape=(T,))
            if not F:
                t = ct.exp(t)
            ct.store(y, index=(ct.bid(0),), tile=t)
    """)
    assert len(vs) == 1 and "if const not(%F" in dump_kernel(vs[0])


def test_different_shapes_split_into_variants(tmp_path):
    vs = translate(tmp_path, """
        import cuda.tile as ct
        @ct.kernel
        def k(x, y, T: ct.Constant[int], MODE: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0), 0), shape=(1, T))
            if MODE == 1:
                r = ct.sum(t, axis=1, keepdims=True)
            elif MODE == 2:
                r = ct.max(t, axis=1, keepdims=True)
            else:
                r = t
            ct.store(y, index=(ct.bid(0), 0), tile=r)
    """)
    assert [v.variant.predicates for v in vs] == [("MODE == 1",), ("not (MODE == 1)", "MODE == 2"),
                                                  ("not (MODE == 1)", "not (MODE == 2)")]
    assert len({v.entry_name for v in vs}) == 3


def test_ownership_forms(tmp_path):
    vs = translate(tmp_path, """
        import cuda.tile as ct
        @ct.kernel
        def k(x, own, rows, loop, BM: ct.Constant[int], BN: ct.Constant[int]):
            i = ct.bid(0)
            t = ct.load(x, index=(i, ct.bid(1)), shape=(BM, BN))
            ct.store(own, index=(i, ct.bid(1)), tile=t)
            ct.store(rows, index=(i, 0), tile=t)
            for j in range(ct.bid(1), 4, ct.num_blocks(1)):
                ct.store(loop, index=(i, j), tile=t)
    """)
    forms = {n: f for n, f, _ in vs[0].outputs}
    assert forms == {"own": "checked", "rows": "unchecked", "loop": "unchecked"}


def test_specializations_from_launch_sites_and_defaults(tmp_path):
    fr = kernels(tmp_path, """
        import cuda.tile as ct
        @ct.kernel
        def k(x, y, T: ct.Constant[int], F: ct.Constant[bool]):
            ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(T,)))
        @ct.kernel
        def k2(x, y, T: ct.Constant[int]):
            ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(T,)))
        def host(x, y, s):
            ct.launch(s, (1, 1, 1), k, (x, y, 256, True))
    """)
    k, k2 = fr.kernels
    specs, dtypes, origin = specializations(k, tmp_path / "k.py")
    assert specs == [{"T": 256, "F": 1}] and origin == "launch sites" and dtypes == ["f16", "bf16", "f32"]
    specs, _, origin = specializations(k2, tmp_path / "k.py")
    assert specs == [{"T": 64}] and origin == "defaults"
    (tmp_path / "pyproject.toml").write_text('[tool.cutile-transpile]\ndtypes = ["f32"]\n'
                                             '[tool.cutile-transpile.specializations]\nk2 = [{T = 32}, {T = 128}]\n')
    specs, dtypes, origin = specializations(k2, tmp_path / "k.py")
    assert specs == [{"T": 32}, {"T": 128}] and dtypes == ["f32"] and origin == "pyproject.toml"


def test_loop_bound_constants_default_to_several_trips(tmp_path):
    """`range(cdiv(n_cols, BLOCK))` with no launch site: n_cols defaults to 4x BLOCK (a one-trip loop is
    folded by cuTile Rust and would compare as another program); BLOCK sets a tile shape and keeps 64."""
    from transpiler.pipeline import translate_kernel
    from transpiler.verify.specs import specializations
    fr = kernels(tmp_path, """
        import cuda.tile as ct
        C = ct.Constant[int]
        @ct.kernel
        def k(x, y, n_cols: C, BLOCK: C):
            n = (n_cols + BLOCK - 1) // BLOCK
            acc = ct.zeros((BLOCK,), dtype=ct.float32)
            for i in range(n):
                acc = acc + ct.load(x, index=(i,), shape=(BLOCK,)).astype(ct.float32)
            ct.store(y, index=(0,), tile=acc.astype(y.dtype))
    """)
    v = translate_kernel(fr.kernels[0])[0]
    specs, _, origin = specializations(v, tmp_path / "k.py")
    assert origin == "defaults" and specs == [{"BLOCK": 64, "n_cols": 256}]


def test_persistent_loop_defaults_run_twice(tmp_path):
    """`range((M + NUM_SMS - 1) // NUM_SMS)`: both constants bound the loop; equal defaults would give one
    trip, so one of them is scaled until the loop runs twice; a `latency=` constant defaults into 1..10."""
    fr = kernels(tmp_path, """
        import cuda.tile as ct
        C = ct.Constant[int]
        @ct.kernel
        def k(x, y, M: C, NUM_SMS: C, BLOCK: C, LAT: C):
            acc = ct.zeros((BLOCK,), dtype=ct.float32)
            for i in range((M + NUM_SMS - 1) // NUM_SMS):
                acc = acc + ct.load(x, index=(ct.bid(0) + i * NUM_SMS,), shape=(BLOCK,), latency=LAT).astype(ct.float32)
            ct.store(y, index=(ct.bid(0),), tile=acc.astype(y.dtype))
    """)
    v = translate_kernel(fr.kernels[0])[0]
    (spec,), _, _ = specializations(v, tmp_path / "k.py")
    assert spec["LAT"] == 4 and spec["BLOCK"] == 64
    assert (spec["M"] + spec["NUM_SMS"] - 1) // spec["NUM_SMS"] >= 2, spec


def test_cover_variants_keeps_a_flag_at_its_own_value():
    """A variant that needs NUM_SEL nonzero keeps its default 64 (not -1: an empty `range(NUM_SEL)`, which
    cuTile Rust 0.5.0 refuses), and one that needs it zero gets 0."""
    from transpiler.verify.specs import cover_variants
    specs = cover_variants([{"NUM_SEL": 64, "F": 0}], [("not (NUM_SEL)",), ("NUM_SEL", "F")])
    assert specs == [{"NUM_SEL": 64, "F": 0}, {"NUM_SEL": 0, "F": 0}, {"NUM_SEL": 64, "F": 1}]


def test_cover_variants_keeps_companions_on_powers_of_two_when_one_constant_needs_a_literal():
    """TileGym's fused add RMS norm: `not ((n_cols + BLOCK - 1) // BLOCK == 1)` with `MODE == -1`. MODE needs
    the literal -1 (not a power of two); n_cols must not then fall to 0 (zero chunks: an empty constant
    `range`, whose induction variable cuTile Rust 0.5.0 bounds by [0, -1] and refuses): it takes 128."""
    from transpiler.verify.specs import cover_variants
    base = {"BLOCK": 64, "MODE": 64, "n_cols": 64}
    specs = cover_variants([base], [("not ((n_cols + BLOCK - 1) // BLOCK == 1)", "MODE == -1")])
    assert specs == [base, {"BLOCK": 64, "MODE": -1, "n_cols": 128}]


def test_cover_variants_prefers_powers_of_two_for_element_count_predicates():
    """`ROWS * BLOCK == ROWS * WARPS * 2 * 16` with `ROWS * WARPS == ROWS * 2 * 2` (reshapes of a
    (ROWS, BLOCK) tile): ROWS = 0 satisfies both but no tile has a zero extent (cuTile refuses it); the
    specialization found has every constant a positive power of two (BLOCK 128, WARPS 4)."""
    from transpiler.verify.specs import cover_variants
    base = {"ROWS": 64, "BLOCK": 64, "WARPS": 64}
    preds = ("((ROWS) * (BLOCK)) == ((((ROWS) * (WARPS)) * (2)) * (16))", "((ROWS) * (WARPS)) == (((ROWS) * (2)) * (2))")
    specs = cover_variants([base], [preds])
    assert specs[1:] == [{"ROWS": 64, "BLOCK": 128, "WARPS": 4}], specs


def test_dead_loads_are_dropped_and_effects_kept(tmp_path):
    """cuTile Python's DCE: an unused load (and what only it feeds) vanishes, an `if` left empty too;
    stores and atomics stay even when their result is unused."""
    (v,) = translate(tmp_path, """
        import cuda.tile as ct
        @ct.kernel
        def k(x, y, cnt, d):
            a = ct.load(x, index=(ct.bid(0),), shape=(64,))
            b = a * 2.0
            if d != 0.0:
                b = b + 1.0
            old = ct.atomic_add(cnt, ct.arange(1, dtype=ct.int32), 1)
            ct.store(y, index=(ct.bid(0),), tile=ct.load(y, index=(ct.bid(0),), shape=(64,)))
    """)
    text = dump_kernel(v)
    assert "load(%x" not in text and "if " not in text, text
    assert "atomic_add(%cnt" in text and "store(%y" in text, text


def test_array_dtype_is_the_same_in_every_variant(tmp_path):
    """`mean` receives f32 values only under WITH_MEAN: it is f32 in both variants (the C symbol passes it
    one way); a variant-dependent element type is refused."""
    vs = translate(tmp_path, """
        import cuda.tile as ct
        @ct.kernel
        def k(x, mean, WITH_MEAN: ct.Constant[int]):
            v = ct.load(x, index=(ct.bid(0),), shape=(64,)).astype(ct.float32)
            if WITH_MEAN:
                r = ct.sum(v, 0)
                ct.store(mean, index=(ct.bid(0),), tile=ct.reshape(r, (1,)))
            else:
                ct.store(x, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(64,)) * 2.0)
    """)
    assert {p.dtype for v in vs for p in v.params if p.name == "mean"} == {"f32"}


def test_an_array_whose_stored_dtype_a_constant_picks_has_a_dtype_per_entry(tmp_path):
    """`y` receives a bf16 copy under LOW and the f32 tile otherwise: cuTile Python takes it at bf16 or f32 under
    LOW (a lossless store), at f32 otherwise, so LOW has an entry per dtype (it was f32 in every entry: the
    bf16 call was refused). `q` and `k` are stored alike and share one dtype (two entries for LOW, not four).
    `out` gets an f32, f16 or bf16 tile by a three-armed constant (it was CT104 where the arms fixed it to
    different dtypes). `mean`, f32 in one variant and untouched in the other, stays f32 in both (no split)."""
    vs = translate(tmp_path, """
        import cuda.tile as ct
        C = ct.Constant[int]
        @ct.kernel
        def low(x, q, k, LOW: ct.Constant[bool], T: C):
            t = ct.load(x, index=(ct.bid(0), 0), shape=(1, T)).astype(ct.float32)
            if LOW:
                ct.store(q, index=(ct.bid(0), 0), tile=ct.astype(t, ct.bfloat16))
                ct.store(k, index=(ct.bid(0), 0), tile=ct.astype(t * 2.0, ct.bfloat16))
            else:
                ct.store(q, index=(ct.bid(0), 0), tile=t)
                ct.store(k, index=(ct.bid(0), 0), tile=t * 2.0)
        @ct.kernel
        def arms(x, out, OUT: C, T: C):
            acc = ct.load(x, index=(ct.bid(0), 0), shape=(1, T)).astype(ct.float32)
            if OUT == 1:
                c = ct.astype(acc, ct.float16)
            elif OUT == 2:
                c = ct.astype(acc, ct.bfloat16)
            else:
                c = acc
            ct.store(out, index=(ct.bid(0), 0), tile=c)
    """)
    got = {v.name + ("__" + v.variant.name if v.variant.name else ""): {p.name: p.dtype for p in v.params if p.name in ("q", "k", "out")}
           for v in vs}
    assert got == {"low__low__q_f32": {"q": "f32", "k": "f32"}, "low__not_low": {"q": "f32", "k": "f32"},
                   "low__low__q_bf16": {"q": "bf16", "k": "bf16"},
                   "arms__out_eq_1__out_f32": {"out": "f32"}, "arms__out_eq_1__out_f16": {"out": "f16"},
                   "arms__not_out_eq_1__out_eq_2__out_f32": {"out": "f32"},
                   "arms__not_out_eq_1__not_out_eq_2": {"out": "f32"},
                   "arms__not_out_eq_1__out_eq_2__out_bf16": {"out": "bf16"}}, got


def test_an_array_whose_rank_depends_on_a_constant_has_an_entry_per_rank(tmp_path):
    """`loss` is stored by tiles (rank 2) where REDUCE == 0 and scattered per row (rank 1) otherwise, the two
    accesses under separate `if`s: a variant per arm of the first, each with its rank. `bias` is rank 1 under
    BIAS == 2 and rank 2 under BIAS == 1 (an `elif` in a loop), unused under BIAS == 0, which keeps rank 2."""
    vs = translate(tmp_path, """
        import cuda.tile as ct
        C = ct.Constant[int]
        @ct.kernel
        def k(x, loss, REDUCE: C, T: C):
            t = ct.load(x, index=(ct.bid(0), 0), shape=(1, T))
            if REDUCE == 0:
                ct.store(loss, index=(ct.bid(0), 0), tile=t)
            if REDUCE != 0:
                ct.scatter(loss, ct.bid(0), ct.sum(t.reshape((T,)), 0))
        @ct.kernel
        def b(x, bias, z, BIAS: C, T: C):
            t = ct.load(x, index=(ct.bid(0), 0), shape=(1, T))
            if BIAS == 2:
                s = ct.load(bias, index=(ct.bid(0),), shape=(1,)).reshape(())
            for i in range(2):
                if BIAS == 1:
                    t = t + ct.load(bias, index=(ct.bid(0), i), shape=(1, T))
                elif BIAS == 2:
                    t = t * s
            ct.store(z, index=(ct.bid(0), 0), tile=t)
    """)
    ranks = {v.variant.predicates: p.rank for v in vs for p in v.params if p.name in ("loss", "bias")}
    assert ranks == {("REDUCE == 0",): 2, ("not (REDUCE == 0)",): 1, ("BIAS == 2",): 1, ("not (BIAS == 2)",): 2}


@pytest.mark.parametrize("body", [
    # a runtime condition decides the rank
    """if n > 0:
        t = ct.load(x, index=(ct.bid(0),), shape=(64,))
    else:
        t = ct.load(x, index=(ct.bid(0), 0), shape=(1, 64)).reshape((64,))""",
    # both ranks live where A and B hold
    """t = ct.zeros((64,), dtype=ct.float32)
    if A:
        t = t + ct.load(x, index=(ct.bid(0),), shape=(64,))
    if B:
        t = t + ct.load(x, index=(ct.bid(0), 0), shape=(1, 64)).reshape((64,))""",
])
def test_an_array_rank_no_constant_separates_is_refused(tmp_path, body):
    fr = kernels(tmp_path, "import cuda.tile as ct\n@ct.kernel\ndef k(x, z, n, A: ct.Constant[int], "
                 "B: ct.Constant[int]):\n    " + body + "\n    ct.store(z, index=(ct.bid(0),), tile=t)\n")
    with pytest.raises(TranspileError) as err:
        translate_kernel(fr.kernels[0])
    d = err.value.diagnostic
    assert d.code == "CTR-LOAD" and "indexed with 1 and 2 entries in different places that no constant separates" \
        in d.message, d.message


def test_tiled_view_misuse_is_diagnosed(tmp_path):
    for body, code in (("v = x.tiled_view((64,), traversal_steps=(32,))\n    t = v.load((0,))", "CT101"),
                       ("v = x.tiled_view((64,))\n    w = v", "CT101"),
                       ("v = x.tiled_view((64,))\n    t = v.load((0,), check_bounds=False)", "CT101")):
        src = "import cuda.tile as ct\n@ct.kernel\ndef k(x, y):\n    " + body + "\n"
        p = tmp_path / "k.py"
        p.write_text(src)
        fr = parse_file(p, "k.py")
        assert fr.failures and fr.failures[0][2].code == code, (body, fr.failures)


def test_predicates_decide_implied_conditions():
    from transpiler.passes.predicates import decides
    assert decides(("not (not (HAS_W))",), "HAS_W") is True
    assert decides(("MODE == 1",), "MODE == 2") is False
    assert decides(("not (MODE == 1)",), "MODE == 2") is None      # MODE may be 2 or 3
    assert decides(("beta != 0.0",), "beta == 0.0") is False
    assert decides(("not (beta > 0.5)",), "beta > 0.25") is None   # 0.3 and 0.1 both satisfy
    assert decides(("beta > 0.5",), "beta > 0.25") is True
    assert decides(("A and B",), "A") is True
    assert decides(("A or B",), "A") is None
    assert decides(("X == 1", "Y == 0"), "Y") is False              # unrelated names stay apart
    assert decides(("N % 16 == 0",), "N % 16 == 0") is True         # exact text needs no analysis
    assert decides(("N % 16 == 0",), "N % 32 == 0") is None         # N = 16 and N = 32 both satisfy
    assert decides(("A < B",), "A < B + 1") is None                 # neither are name-name comparisons
    assert decides(("eps > 0",), "eps >= 1") is None                # a float constant can be 0.5
    assert decides(("not (MODE == 0)", "not (MODE == 1)"), "MODE == 2") is None


def test_predicates_solve_affine_atoms_and_enumerate_masked_integers():
    """A helper's stage bound to `4 - STAGE` at the call (attention kernels: 1 off the diagonal, 2 on it, 3 both)
    gives atoms `4 - STAGE == k`: solved for STAGE they exclude each other, and `STAGE & 1` leaves odd values
    only. Without this, every combination of the three atoms became an entry (TileGym's gemma attention: 33
    entries, over the limit; 13 with it)."""
    from transpiler.passes.predicates import decides
    assert decides(("4 - STAGE == 1",), "4 - STAGE == 2") is False       # STAGE = 3 is not 2
    assert decides(("STAGE & 1",), "4 - STAGE == 2") is False            # STAGE = 2 is even
    assert decides(("STAGE & 1",), "4 - STAGE == 3") is None             # STAGE = 1, or 3
    assert decides(("STAGE & 1", "not (4 - STAGE == 1)"), "4 - STAGE == 3") is None  # 1, 5, 7, ... are left
    assert decides(("4 - STAGE == 1",), "STAGE & 2") is True             # STAGE = 3
    assert decides(("2 * X + 1 > 7",), "X > 3") is True and decides(("2 * X + 1 > 7",), "X > 4") is None
    assert decides(("1 - X >= 0.5",), "X <= 0.5") is True               # a negative factor turns the comparison
    assert decides(("N == 5",), "N - 5") is False                        # the truth of an affine value: != 0
    assert decides(("not (N - 5)",), "N == 5") is True
    assert decides(("N % 16 == 0",), "N & 1") is False and decides(("N % 16 == 0",), "N & 16") is None
    assert decides(("N % 4 == 3",), "(N + 1) % 4 == 0") is True          # periodic beyond the literals
    assert decides(("0 < 2 * N < 5",), "N > 0") is None                  # a chained affine atom is not solved
    assert decides(("N * N == 4",), "N == 2") is None                    # not affine: never guessed
    assert decides(("(N * 0.25) % 1 == 0",), "N == 0") is None           # N = 4 too: no period of 1 assumed
    assert decides(("(2 * N + 1) % 4 == 3",), "N & 1") is True           # an integer-affine operand repeats
    assert decides(("3 is X",), "X == 3") is None                        # not a numeric comparison


def test_a_flag_is_split_once_however_often_it_is_tested(tmp_path):
    """`if not W:` and a later `if W:` ask one question: two variants, none contradictory (each `if` changes
    the stored tile's type, so each would split on its own)."""
    vs = translate(tmp_path, """
        import cuda.tile as ct
        @ct.kernel
        def k(x, y, W: ct.Constant[int], T: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0), 0), shape=(1, T))
            if not W:
                r = ct.sum(t, axis=1, keepdims=True)
            else:
                r = t
            ct.store(y, index=(ct.bid(0), 0), tile=r)
            if W:
                s = ct.max(t, axis=1, keepdims=True)
            else:
                s = t
            ct.store(y, index=(ct.bid(0), 0), tile=s)
    """)
    assert [v.variant.predicates for v in vs] == [("not (W)",), ("not (not (W))",)]


def test_float_not_equal_in_a_loop_condition_is_computed(tmp_path):
    """`while s != 0.0` is unordered in Python (true for NaN); the inline Rust `!=` is ordered, so the
    condition is computed in the `while`'s condition block (`cmpf` unordered), never written inline. An
    ordered comparison stays inline; an E rank-0 tile's comparison (no Rust operator) is computed too."""
    from transpiler.emit.lower import lower_kernel
    src = """
        import cuda.tile as ct
        @ct.kernel
        def k(x, y):
            t = ct.load(x, index=(ct.bid(0),), shape=(64,))
            s = ct.sum(t.astype(ct.float32), 0)
            while s OP 1.0:
                s = s * 0.5
            ct.store(y, index=(ct.bid(0),), tile=t.astype(ct.float32) * s)
    """
    (v,) = translate(tmp_path, src.replace("OP", ">"))
    assert any(line.strip().startswith("while s > ") for line in lower_kernel(v).body), lower_kernel(v).body
    (v,) = translate(tmp_path, src.replace("OP", "!="))
    body = [line.strip() for line in lower_kernel(v).body]
    assert "while {" in body and not any(line.startswith("while s") for line in body), body
    assert any("cmp_ordering::Unordered" in line for line in body), body
    (v,) = translate(tmp_path, src.replace("OP", ">").replace("t.astype(ct.float32), 0", "t, 0"))
    body = [line.strip() for line in lower_kernel(v).body]  # an E rank-0 tile, which Rust cannot compare inline
    assert "while {" in body and any("cmpf(" in line for line in body), body


ACCUMULATE = """
    import cuda.tile as ct
    @ct.kernel
    def k(x, out, N: ct.Constant[int]):
        acc = ct.zeros((64,), dtype=ct.float32)
        for i in range(N):
            t = ct.load(x, index=(i,), shape=(64,))
            acc = acc + {update}
        ct.store(out, index=(0,), tile=acc)
"""


def _entries(tmp_path, update, dtypes=("f16", "bf16", "f32")):
    fr = kernels(tmp_path, ACCUMULATE.format(update=update))
    return [(v.variant.name, v.variant.dtypes, "fma" in dump_kernel(v)) for k in fr.kernels
            for v in translate_kernel(k, dtypes)]


def test_an_fma_through_a_no_op_astype_gets_an_entry_of_its_own(tmp_path):
    """`astype(t * t, f32)` of an E tile is no operation when E is f32: cuTile Python fuses there only."""
    assert _entries(tmp_path, "ct.astype(t * t, ct.float32)") == [
        ("e_f32", ("f32",), True), ("e_f16_bf16", ("f16", "bf16"), False)]
    # for one exported dtype, the one entry is that dtype's
    assert _entries(tmp_path, "ct.astype(t * t, ct.float32)", ("f32",)) == [("e_f32", ("f32",), True)]
    # nothing depends on E: one entry for all (an astype of the product's sum, or a multiply in f32)
    assert _entries(tmp_path, "ct.astype(t + t, ct.float32)") == [("", (), False)]
    assert _entries(tmp_path, "ct.astype(t, ct.float32) * 2.0") == [("", (), True)]
    # f16 not exported: an astype to f16 is never a no-op, so no entry for it
    assert _entries(tmp_path, "ct.astype(ct.astype(t * t, ct.float16), ct.float32)", ("bf16", "f32")) == [
        ("", (), False)]


def test_conditions_on_dtypes_are_decided_per_element_type(tmp_path):
    src = """
        import cuda.tile as ct
        @ct.kernel
        def k(x, y):
            t = ct.load(x, index=(0,), shape=(64,))
            dt = x.dtype
            if dt == ct.float32 or not (ct.bfloat16 != y.dtype):
                t = t * 2.0
            ct.store(y, index=(0,), tile=t)
    """
    fr = kernels(tmp_path, src)
    got = [(v.variant.dtypes, "mul" in dump_kernel(v)) for v in translate_kernel(fr.kernels[0], ("f16", "bf16", "f32"))]
    assert got == [(("f32",), True), (("bf16",), True), (("f16",), False)]
    # a dtype that is not exported is never E; the only exported one always is
    got = [(v.variant.dtypes, "mul" in dump_kernel(v)) for v in translate_kernel(fr.kernels[0], ("f16",))]
    assert got == [((), False)]
    got = [(v.variant.dtypes, "mul" in dump_kernel(v)) for v in translate_kernel(fr.kernels[0], ("f32",))]
    assert got == [((), True)]


def _array_dtypes(tmp_path, src, dtypes=("f16", "bf16", "f32")):
    fr = kernels(tmp_path, src)
    return [{p.name: p.dtype for p in v.params if p.kind == "array"} for v in translate_kernel(fr.kernels[0], dtypes)]


def test_arrays_whose_elements_never_meet_get_their_own_dtype_generic(tmp_path):
    head = """
        import cuda.tile as ct
        @ct.kernel
        def k(X, W, Y, B: ct.Constant[int]):
            x = ct.load(X, index=(0,), shape=(B,))
            w = ct.load(W, index=(0,), shape=(B,))
    """
    # only in f32: each array its own generic; at most three per port (MAX_ELEMENT_GENERICS): past it, the
    # groups of the largest rank share E and the others keep theirs where that makes three, else share E2;
    # where all have one rank, the first keeps E and the others share E2
    assert _array_dtypes(tmp_path, head + """
            ct.store(Y, index=(0,), tile=(x.astype(ct.float32) * w.astype(ct.float32)).astype(Y.dtype))
    """) == [{"X": "E", "W": "E2", "Y": "E3"}]
    four = """
        import cuda.tile as ct
        @ct.kernel
        def k(X, W, B, Y, N: ct.Constant[int]):
            x = ct.load(X, index=(0, 0), shape=(4, N)).astype(ct.float32)
            w = ct.load(W, index=(0,), shape=(N,)).astype(ct.float32)
            b = ct.load(B, index=(0,), shape=(N,)).astype(ct.float32)
            ct.store(Y, index=(0, 0), tile=(x * w[None, :] + b[None, :]).astype(Y.dtype))
    """
    assert _array_dtypes(tmp_path, four) == [{"X": "E", "W": "E2", "B": "E3", "Y": "E"}]
    assert _array_dtypes(tmp_path, four.replace("B, Y,", "B, C, Y,").replace(
        "            ct.store(Y", "            c = ct.load(C, index=(0,), shape=(N,)).astype(ct.float32)\n"
        "            ct.store(Y").replace("+ b[None, :]", "+ b[None, :] + c[None, :]")) \
        == [{"X": "E", "W": "E2", "B": "E2", "C": "E2", "Y": "E"}]
    assert _array_dtypes(tmp_path, four.replace("shape=(4, N)", "shape=(N,)").replace("index=(0, 0)", "index=(0,)")
                         .replace("[None, :]", "")) == [{"X": "E", "W": "E2", "B": "E2", "Y": "E2"}]
    # elements that meet share one: an add, a store without astype, a where, a comparison of dtypes
    assert _array_dtypes(tmp_path, head + """
            ct.store(Y, index=(0,), tile=(x + w).astype(Y.dtype))
    """) == [{"X": "E", "W": "E", "Y": "E2"}]
    assert _array_dtypes(tmp_path, head + """
            ct.store(Y, index=(0,), tile=x)
            ct.store(Y, index=(0,), tile=w.astype(ct.float32).astype(Y.dtype))
    """) == [{"X": "E", "W": "E2", "Y": "E"}]
    assert _array_dtypes(tmp_path, head + """
            ct.store(Y, index=(0,), tile=ct.where(x > 0, x, w).astype(ct.float32))
    """) == [{"X": "E", "W": "E", "Y": "f32"}]
    assert _array_dtypes(tmp_path, head + """
            if W.dtype == X.dtype:
                x = x * 2.0
            ct.store(Y, index=(0,), tile=x.astype(Y.dtype))
    """) == [{"X": "E", "W": "E", "Y": "E2"}]
    # a value carried by a loop (or assigned in both arms of an if) that takes tiles of both
    assert _array_dtypes(tmp_path, head + """
            for i in range(4):
                x = ct.load(W, index=(i,), shape=(B,))
            ct.store(Y, index=(0,), tile=x.astype(Y.dtype))
    """) == [{"X": "E", "W": "E", "Y": "E2"}]
    assert _array_dtypes(tmp_path, head + """
            t = ct.bid(0)
            if t > 0:
                v = x
            else:
                v = w
            ct.store(Y, index=(0,), tile=v.astype(Y.dtype))
    """) == [{"X": "E", "W": "E", "Y": "E2"}]


def test_a_dtype_condition_on_a_second_generic_makes_it_e(tmp_path):
    """Entries are per dtype of E only: a condition on W's dtype merges W's generic into E."""
    src = """
        import cuda.tile as ct
        @ct.kernel
        def k(X, W, Y, B: ct.Constant[int]):
            x = ct.load(X, index=(0,), shape=(B,)).astype(ct.float32)
            w = ct.load(W, index=(0,), shape=(B,)).astype(ct.float32)
            if W.dtype == ct.float32:
                w = w * 2.0
            ct.store(Y, index=(0,), tile=x * w)
    """
    fr = kernels(tmp_path, src)
    got = [(v.variant.dtypes, {p.name: p.dtype for p in v.params if p.kind == "array"})
           for v in translate_kernel(fr.kernels[0], ("f16", "f32"))]
    assert got == [(("f32",), {"X": "E", "W": "E", "Y": "f32"}), (("f16",), {"X": "E", "W": "E", "Y": "f32"})]


def test_fma_that_depends_on_a_second_generic_makes_it_e(tmp_path):
    """An astype between a multiply of W's tiles and an add is no operation where W is f32: the fusion
    depends on W's dtype, and entries are per dtype of E, so W shares E (and gets the f32 entry)."""
    src = """
        import cuda.tile as ct
        @ct.kernel
        def k(X, W, Y, B: ct.Constant[int]):
            x = ct.load(X, index=(0,), shape=(B,)).astype(ct.float32)
            w = ct.load(W, index=(0,), shape=(B,))
            ct.store(Y, index=(0,), tile=(w * w).astype(ct.float32) + x)
    """
    fr = kernels(tmp_path, src)
    got = [(v.variant.dtypes, {p.name: p.dtype for p in v.params if p.kind == "array"})
           for v in translate_kernel(fr.kernels[0], ("f16", "f32"))]
    assert got == [(("f32",), {"X": "E", "W": "E", "Y": "f32"}), (("f16",), {"X": "E", "W": "E", "Y": "f32"})]


def test_return_in_a_loop_is_supported_only_where_the_rewrite_is_ported(tmp_path):
    """A `return` directly in a top-level `for` (or its ifs) is rewritten (fixture loop_return.py); one in a
    nested loop, a `while`, or a loop inside an `if` stays a CT107 diagnostic, never a wrong port."""
    head = "import cuda.tile as ct\n@ct.kernel\ndef k(x, y, N: ct.Constant[int]):\n"
    store = "    ct.store(y, index=(0,), tile=ct.load(x, index=(0,), shape=(64,)))\n"
    ok = head + "    for i in range(N):\n        if i == 3:\n            return\n" + store
    fr = kernels(tmp_path, ok)
    assert fr.kernels and not fr.failures
    for body in ("    for i in range(N):\n        for j in range(N):\n            if j == i:\n                return\n",
                 "    i = 0\n    while i < N:\n        if i == 3:\n            return\n        i = i + 1\n",
                 "    if ct.bid(0) > 0:\n        for i in range(N):\n            if i == 3:\n                return\n"):
        fr = kernels(tmp_path, head + body + store)
        assert not fr.kernels and fr.failures[0][2].code == "CT107", (body, fr.failures)


def test_loops_split_only_at_runtime_points(tmp_path):
    """cuTile Python splits a loop on its one `if j < x`; the port does where x is a runtime value. Where x
    is a compile-time constant cuTile Rust 0.5.0 folds the bounds (and fails on an empty constant range), so
    the loop stays whole; so does a loop with two such ifs (cuTile Python splits on exactly one)."""
    from transpiler.model.ir import For

    def loops(cond, second=""):
        vs = translate(tmp_path, f"""
            import cuda.tile as ct
            @ct.kernel
            def k(x, y, s, N: ct.Constant[int]):
                acc = ct.zeros((64,), dtype=ct.float32)
                for j in range(N):
                    if {cond}:
                        acc = acc + 1.0{second}
                    acc = acc + ct.load(x, index=(j,), shape=(64,))
                ct.store(y, index=(0,), tile=acc)
        """)
        return sum(isinstance(st, For) for st in vs[0].body)
    assert loops("j < s") == 2 and loops("s >= j") == 2 and loops("j <= ct.bid(0)") == 2
    assert loops("j < N // 2") == 1 and loops("j < 3") == 1 and loops("j == s") == 1
    assert loops("j < s", "\n                    if j > s:\n                        acc = acc * 2.0") == 1


def test_comparand_probes_are_per_entry():
    """A boundary value of a constant condition held only by another entry's specialization is still probed
    in this entry (shared/repros/verifier-holes N01: `if WINDOW > 0` changed to `if WINDOW > 1` in the causal
    entry verified equivalent because the not-causal entry's specialization had WINDOW = 1)."""
    from transpiler.verify.specs import comparand_probes
    specs = [{"CAUSAL": 1, "WINDOW": 0}, {"CAUSAL": 0, "WINDOW": 1}]
    probes = comparand_probes(specs, lambda s: "causal" if s["CAUSAL"] else "not_causal", {"WINDOW": [0, 1]})
    assert ("causal", "WINDOW", {"CAUSAL": 1, "WINDOW": 1}) in probes
    assert ("not_causal", "WINDOW", {"CAUSAL": 0, "WINDOW": 0}) in probes
    # a value the entry's own specialization holds is not probed again
    assert not [p for p in probes if p[0] == "causal" and p[2]["WINDOW"] == 0]


def test_a_loaded_value_a_loop_makes_f32_makes_its_array_f32(tmp_path):
    """`acc = ct.load(a, ...)` then `acc += <f32 tile>` in a loop: cuTile Python compiles the loop only where the
    carried value keeps its type, that is where `a` holds f32; the port's `a` is f32 (not refused as a type
    change)."""
    (v,) = translate(tmp_path, """
        import cuda.tile as ct
        @ct.kernel
        def k(a, x, out, n):
            acc = ct.load(a, index=(ct.bid(0),), shape=(64,))
            for i in range(n):
                acc += ct.load(x, index=(i,), shape=(64,)).astype(ct.float32)
            ct.store(out, index=(ct.bid(0),), tile=acc)
    """)
    assert {p.name: p.dtype for p in v.params if p.kind == "array"}["a"] == "f32"


@pytest.mark.parametrize("body, code", [
    # two sparse axes, no sparse axis, a Slice outside load_advanced_indexing
    ("r = ct.arange(16, dtype=ct.int32)\n    t = ct.load_advanced_indexing(x, (r, r))", "CTR-LOAD-ADVANCED"),
    ("t = ct.load_advanced_indexing(x, (ct.Slice(0, 16), ct.Slice(0, 16)))", "CTR-LOAD-ADVANCED"),
    ("s = ct.Slice(0, 16)\n    t = ct.load(x, index=(0, 0), shape=(16, 16))", "CTR-SLICE"),
    # an index of the wrong length; a tiled view's atomic other than add
    ("x.tiled_view((16, 16)).atomic_store_add((0,), ct.load(x, index=(0, 0), shape=(16, 16)))", "CTR-VIEW-ATOMIC-ADD"),
    ("x.tiled_view((16, 16)).atomic_store_max((0, 0), ct.load(x, index=(0, 0), shape=(16, 16)))", "CT101"),
])
def test_advanced_indexing_and_view_atomics_misuse_is_diagnosed(tmp_path, body, code):
    fr = kernels(tmp_path, "import cuda.tile as ct\n@ct.kernel\ndef k(x, y):\n    " + body
                 + "\n    ct.store(y, index=(0, 0), tile=ct.load(x, index=(0, 0), shape=(16, 16)))\n")
    if fr.failures:
        got = fr.failures[0][2].code
    else:
        with pytest.raises(TranspileError) as err:
            for k in fr.kernels:
                translate_kernel(k)
        got = err.value.diagnostic.code
    assert got == code, body


def test_a_tuple_valued_variable_is_an_index(tmp_path):
    """`where = (row, cols + n, 1)` assigned once: its computed items are locals computed there, the others are
    read in place; a tuple assigned twice is refused."""
    (v,) = translate(tmp_path, """
        import cuda.tile as ct
        @ct.kernel
        def k(x, out, n, H: ct.Constant[int]):
            cols = ct.arange(H, dtype=ct.int32)
            where = (ct.bid(0), cols + n, 1)
            ct.scatter(out, where, ct.gather(x, (ct.bid(0), cols)))
    """)
    text = dump_kernel(v)
    assert "where_0" in text and "where_1" in text and "where_2" not in text, text  # bid(0) is computed too
    fr = kernels(tmp_path, """
        import cuda.tile as ct
        @ct.kernel
        def k(x, y):
            idx = (ct.bid(0), 0)
            idx = (0, ct.bid(0))
            ct.store(y, index=idx, tile=ct.load(x, index=idx, shape=(16, 16)))
    """)
    if not fr.failures:
        with pytest.raises(TranspileError) as err:
            translate_kernel(fr.kernels[0])
        assert err.value.diagnostic.code == "CT100"
    else:
        assert fr.failures[0][2].code == "CT100", fr.failures


def _typed(tmp_path, src: str, dtypes=("f16", "bf16", "f32")):
    """(entry dtypes, array dtypes) of each variant of the first kernel of `src`."""
    fr = kernels(tmp_path, src)
    return [(v.variant.dtypes, {p.name: p.dtype for p in v.params if p.kind == "array"})
            for v in translate_kernel(fr.kernels[0], dtypes)]


def test_an_implicit_store_conversion_restricts_e_to_the_lossless_dtypes(tmp_path):
    """cuTile Python converts a stored tile to the array's dtype only where that is lossless (bf16 into bf16 or
    f32, never f16): the port's entry is for those dtypes of E alone."""
    src = """
        import cuda.tile as ct
        @ct.kernel
        def k(x, y):
            t = ct.load(x, index=(0,), shape=(64,)).astype(ct.float32)
            ct.store(y, index=(0,), tile=t.astype(ct.{dt}))
    """
    assert _typed(tmp_path, src.replace("{dt}", "bfloat16")) == [(("bf16", "f32"), {"x": "E", "y": "E"})]
    assert _typed(tmp_path, src.replace("{dt}", "float16")) == [(("f16", "f32"), {"x": "E", "y": "E"})]
    # lossless for every exported dtype: converted, no restriction
    assert _typed(tmp_path, src.replace("{dt}", "float16"), ("f16", "f32")) == [((), {"x": "E", "y": "E2"})]
    # lossless for no exported dtype: the array is of the stored tile's dtype
    assert _typed(tmp_path, src.replace("{dt}", "bfloat16"), ("f16",)) == [((), {"x": "E", "y": "bf16"})]


def test_a_restriction_for_an_array_fixed_later_is_dropped(tmp_path):
    """bf16 into y under a flag, f32 otherwise: E (x's) keeps every dtype in every variant; y is f32 where the
    flag is off and bf16 or f32 where it is on (an entry each: passes/entry_dtypes.py)."""
    src = """
        import cuda.tile as ct
        @ct.kernel
        def k(x, y, LOW: ct.Constant[bool]):
            t = ct.load(x, index=(0,), shape=(64,)).astype(ct.float32)
            if LOW:
                ct.store(y, index=(0,), tile=t.astype(ct.bfloat16))
            else:
                ct.store(y, index=(0,), tile=t)
    """
    assert _typed(tmp_path, src) == [((), {"x": "E", "y": "f32"}), ((), {"x": "E", "y": "f32"}),
                                     ((), {"x": "E", "y": "bf16"})]


def test_a_value_carried_into_a_generic_fixes_its_arrays(tmp_path):
    """An int32 total that a loop adds loaded counts to, and `s = 0.0` that an arm sets to a loaded scale: cuTile
    Python compiles them only where the arrays have those dtypes (the same type on every path)."""
    src = """
        import cuda.tile as ct
        @ct.kernel
        def k(c, out, N: ct.Constant[int]):
            total = ct.zeros((1,), dtype=ct.int32)
            for i in range(N):
                total = total + ct.gather(c, i + ct.arange(1, dtype=ct.int32))
            ct.scatter(out, ct.zeros((1,), dtype=ct.int32), total)
    """
    assert _typed(tmp_path, src) == [((), {"c": "i32", "out": "i32"})]
    src = """
        import cuda.tile as ct
        @ct.kernel
        def k(x, s_arr, y):
            s = 0.0
            if ct.bid(0) > 0:
                s = ct.gather(s_arr, ct.bid(0)).item()
            t = ct.load(x, index=(0,), shape=(64,)).astype(ct.float32) * s
            ct.store(y, index=(0,), tile=t.astype(y.dtype))
    """
    assert _typed(tmp_path, src) == [((), {"x": "E", "s_arr": "f32", "y": "E2"})]


def test_an_index_of_a_generic_dtype_makes_its_arrays_int32(tmp_path):
    src = """
        import cuda.tile as ct
        @ct.kernel
        def k(lens, vals, out):
            offs = ct.arange(16, dtype=ct.int32)
            lens_t = ct.gather(lens, offs)
            ct.scatter(out, ct.cumsum(lens_t, axis=0), ct.gather(vals, offs))
    """
    assert _typed(tmp_path, src) == [((), {"lens": "i32", "vals": "E", "out": "E"})]


def test_a_typed_padding_constant(tmp_path):
    """`padding_value=ct.float16(1.5)`: exactly an f16 value, cast implicitly (lossless: not into bf16)."""
    src = """
        import cuda.tile as ct
        @ct.kernel
        def k(x, y):
            offs = ct.arange(16, dtype=ct.int32)
            ct.scatter(y, offs, ct.gather(x, offs, padding_value=ct.{pad}))
    """
    assert _typed(tmp_path, src.replace("{pad}", "float16(1.5)")) == [(("f16", "f32"), {"x": "E", "y": "E"})]
    # cuTile Python casts an f8 constant to no other dtype (its promote_dtypes refuses f8 with any other), so x
    # is f8 (and y with it: the gathered tile is stored into it); the port writes the constant as a converted f32
    # one, which the verifier folds where the value is exactly an f8 value (the only values taken here)
    assert _typed(tmp_path, src.replace("{pad}", "float8_e4m3fn(0.0)")) == [((), {"x": "f8e4m3fn", "y": "f8e4m3fn"})]
    assert _typed(tmp_path, src.replace("{pad}", "float8_e5m2(-1.5)")) == [((), {"x": "f8e5m2", "y": "f8e5m2"})]
    with pytest.raises(TranspileError, match="not exactly a value of f8e4m3fn"):
        _typed(tmp_path, src.replace("{pad}", "float8_e4m3fn(0.1)"))
    assert _typed(tmp_path, src.replace("{pad}", "float32(0.0)"), ("f32",)) == [((), {"x": "E", "y": "E"})]
    with pytest.raises(TranspileError, match="not exactly a value of f16"):
        _typed(tmp_path, src.replace("{pad}", "float16(0.1)"))


def test_an_mma_operand_of_a_generic_meeting_a_concrete_dtype_fixes_its_arrays(tmp_path):
    """cuTile Python's mma takes operands of one dtype: `ct.mma(p.astype(f16), v, acc)` needs v f16."""
    src = """
        import cuda.tile as ct
        @ct.kernel
        def k(p, v, y):
            a = ct.load(p, index=(0, 0), shape=(16, 16)).astype(ct.float16)
            b = ct.load(v, index=(0, 0), shape=(16, 16))
            ct.store(y, index=(0, 0), tile=ct.mma(a, b, ct.zeros((16, 16), dtype=ct.float32)))
    """
    assert _typed(tmp_path, src) == [((), {"p": "E", "v": "f16", "y": "f32"})]


def test_array_slice_views_are_raw_pointer_views_ordered_with_their_array(tmp_path):
    """`Array.slice`: the sliced array becomes a raw pointer; a view's accesses count as its array's (two
    stores to two views of one array are chained, as cuTile Python's alias sets chain them); a slice of a
    view keeps the view's computed extent and states it non-negative again; a constant extent is static."""
    from transpiler.emit.lower import lower_kernel
    (v,) = translate(tmp_path, """
        import cuda.tile as ct
        @ct.kernel
        def k(x, y, offs, I: ct.Constant[int], BM: ct.Constant[int]):
            lo = ct.load(offs, index=(ct.bid(0),), shape=()).item()
            hi = ct.load(offs, index=(ct.bid(0) + 1,), shape=()).item()
            xs = x.slice(axis=0, start=lo, stop=hi)
            ys = y.slice(0, lo, hi)
            gate = xs.slice(axis=1, start=0, stop=I)
            up = ys.slice(axis=-1, start=I, stop=2 * I)
            t = ct.load(gate, index=(0, 0), shape=(BM, BM))
            ct.store(ys, index=(0, 0), tile=t)
            ct.store(up, index=(0, 0), tile=t)
    """)
    params = {p.name: p for p in v.params}
    assert params["x"].pointer and params["y"].pointer and not params["offs"].pointer
    assert dict((n, f) for n, f, _ in v.outputs) == {"y": "unchecked"}
    assert "sliced (Array.slice)" in dict((n, w) for n, _, w in v.outputs)["y"]
    body = "\n".join(lower_kernel(v).body)
    assert "let xs_off: i32 = lo * x_stride0;" in body
    assert "let gate_off_t: Tile<i32, { [] }> = gate_off * gate_one;" in body  # two constants: a tile muli
    assert "addptr_tile(xs_base, gate_off64)" in body
    assert "assume_bounds_lower::<_, 0>(xs_len2)" in body  # the view's extent, stated again in the sub-view
    assert "Tensor<E, { [-1, I] }>" in body  # constant bounds: a static extent
    assert "y_tok_access" in body  # two stores to views of y: ordered


@pytest.mark.parametrize("body, code, words", [
    ("t = ct.load(x.slice(0, ct.bid(1), 4), index=(0,), shape=(4,))", "CTR-LOAD", "not inline"),
    ("v = x.slice(0, ct.bid(1), 4)\n    t = ct.gather(v, ct.arange(4, dtype=ct.int32))", "CTR-GATHER", "through the `Array.slice` view"),
    ("v = x.slice(0, ct.bid(0).astype(ct.int64), 8)\n    t = ct.load(v, index=(0,), shape=(4,))", "CTR-ARRAY-SLICE", "int32"),
    ("v = x.slice(0, ct.bid(1), 4)\n    if ct.bid(0) > 1:\n        v = x.slice(0, ct.bid(2), 8)\n    t = ct.load(v, index=(0,), shape=(4,))",
     "CT100", "runtime `if`"),
    ("v = x.slice(0, ct.bid(1), 4)\n    for i in range(3):\n        v = x.slice(0, i, 8)\n        t = ct.load(v, index=(0,), shape=(4,))\n        ct.store(y, index=(i,), tile=t)",
     "CT100", "loop"),
    ("t = ct.load(x, index=(0,), shape=(4,))\n    t = x.slice(0, ct.bid(1), 4)", "CT100", "tile or scalar"),
])
def test_array_slice_misuse_is_diagnosed(tmp_path, body, code, words):
    src = "import cuda.tile as ct\n@ct.kernel\ndef k(x, y):\n    " + body + "\n    ct.store(y, index=(0,), tile=t)\n"
    p = tmp_path / "k.py"
    p.write_text(src)
    fr = parse_file(p, "k.py")
    diags = [d for _, _, d in fr.failures]
    for k in fr.kernels:
        try:
            translate_kernel(k)
        except TranspileError as err:
            diags.append(err.diagnostic)
    assert diags and diags[0].code == code and words in diags[0].message, (body, [d.text() for d in diags])


def test_array_slice_of_a_kernel_array_from_a_constant_start_is_refused(tmp_path):
    """cuTile Python states the array's 16-byte alignment on a view offset by a constant (div_by<16> after the
    `offset`), which a raw pointer cannot: refused, with the reason; a view of a view may start at a constant."""
    fr = kernels(tmp_path, """
        import cuda.tile as ct
        @ct.kernel
        def k(x, y, n):
            xs = x.slice(axis=0, start=0, stop=n)
            ct.store(y, index=(0, 0), tile=ct.load(xs, index=(0, 0), shape=(4, 4)))
    """)
    with pytest.raises(TranspileError) as err:
        translate_kernel(fr.kernels[0])
    assert err.value.diagnostic.code == "CTR-ARRAY-SLICE" and "div_by<16>" in err.value.diagnostic.message


@pytest.mark.parametrize("body, integers", [
    # a count table: gathered with padding 0, summed, scattered back (moe_align_block stage 2)
    ("c = ct.gather(X, offs, padding_value=0)\n    ct.scatter(X, offs, ct.cumsum(c, axis=0))", True),
    ("c = ct.gather(X, offs, padding_value=0)\n    ct.scatter(X, offs, c + 1)", True),
    ("c = ct.gather(X, offs, padding_value=0)\n    ct.scatter(X, offs, c - 1)", True),
    # ops whose port is a float op for a generic: `c * 3 + 1` an fma, maximum a maxf
    ("c = ct.gather(X, offs, padding_value=0)\n    ct.scatter(X, offs, c * 3 + 1)", False),
    ("c = ct.gather(X, offs, padding_value=0)\n    ct.scatter(X, offs, ct.maximum(c, 1))", False),
    # a float literal, a float-only op, a float tile: floats
    ("c = ct.gather(X, offs, padding_value=0.0)\n    ct.scatter(X, offs, ct.cumsum(c, axis=0))", False),
    ("c = ct.gather(X, offs, padding_value=0)\n    ct.scatter(X, offs, ct.exp(c))", False),
    ("c = ct.gather(X, offs, padding_value=0)\n    ct.scatter(X, offs, (c * 2).astype(ct.float32).astype(X.dtype))",
     False),
    # a copy (no arithmetic on the values: moe_permute's rows) is left as it is
    ("c = ct.gather(X, offs, padding_value=0)\n    ct.scatter(X, offs, c)", False),
    # an integer value (not a literal) converted into the generic: cuTile Python's itof for a float E, the
    # port's conversion into a domain holding i64 widens first (readable_names.py step_named_variable)
    ("c = ct.gather(X, offs, padding_value=0)\n    ct.scatter(X, offs, c + (ct.bid(0) - 7) % P)", False),
])
def test_an_integer_valued_generic_also_takes_integer_dtypes(tmp_path, body, integers):
    """passes/domains.integer_domains: a one-generic kernel whose values meet an integer in arithmetic and never
    a float also takes i32 and i64 (the kernel's dtypes first); any float, or no arithmetic, leaves it alone."""
    src = ("import cuda.tile as ct\n\n\n@ct.kernel\ndef k(X, P: ct.Constant[int]):\n"
           "    offs = ct.arange(P, dtype=ct.int32) + ct.bid(0)\n    " + body + "\n")
    (v,) = translate(tmp_path, src)
    (x,) = [p for p in v.params if p.name == "X"]
    assert x.domain == (("f16", "bf16", "f32", "i32", "i64") if integers else ()), x


def test_a_constant_if_left_unsplit_past_the_variant_budget_is_said(monkeypatch):
    """Past specialize.MAX_VARIANTS a constant `if` that cuTile Python fuses a multiply-add across stays in one
    entry (fma.py guards the one-statement form): each such `if` gets warning CT123 at its line, so a `different`
    verdict there has its reason; within the budget the kernel is split and nothing is said."""
    from transpiler.passes import specialize
    from transpiler.pipeline import run
    src = Path(__file__).parent / "fixtures" / "features" / "fma_flags.py"

    def warnings():
        result, _ = run([src], Path("unused-out"), use_cache=False, compile_check=False)
        return {k.name: [(d.code, d.pos.line) for d in k.diagnostics if d.code == "CT123"] for k in result.kernels}
    assert not any(warnings().values())
    monkeypatch.setattr(specialize, "MAX_VARIANTS", 1)
    got = warnings()
    assert got["z_loss_rows"] == [("CT123", 74)] and all(got.values()), got
