"""Kernel classes that used to be "translated" into Rust that does not compile (or crashed the tool), each
now ported to Rust that builds and verifies `equivalent`, or refused with a precise diagnostic:

- `i64 * <i32 const generic>`, i32 -> i64 `astype` (cuTile Rust's `convert` has no int -> int form: `exti`);
- a 0-d `ct.full` bound to a scalar (the value itself, as in cuTile Python);
- an unannotated parameter used only as `if flag:` (a bool, not f32), an int one (`n != 0`);
- bool -> i32 `astype` (`exti`, unsigned as in cuTile Python);
- `a*b + c` fusion where the multiply's operand is itself fused (CT900 "use of undefined name");
- an f16 constant past the f16 range (`padding_value=-1e30`): the normalizer compared it by packing it;
- literals out of range for the Rust type: floats past f32 are ±inf (as cuTile Python encodes them),
  integers outside their dtype are CT121 (cuTile Python rejects them too).

All kernels live in one source directory and are verified in one run (one cargo build).
"""

from __future__ import annotations

import re
import textwrap

import pytest

from conftest import requires_toolchain
from transpiler.pipeline import run, write_outputs

KERNELS = {
    "k_i64_const.py": """
        import cuda.tile as ct

        @ct.kernel
        def k_i64_const(x, y, BLOCK: ct.Constant[int]):
            bid = ct.bid(0)
            offs = ct.astype(ct.arange(BLOCK, dtype=ct.int32), ct.int64) + ct.astype(bid, ct.int64) * BLOCK
            ct.scatter(y, offs, ct.gather(x, offs))

        @ct.kernel
        def k_i64_tile_const(x, y, BLOCK: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,)).astype(ct.int64)
            ct.store(y, index=(ct.bid(0),), tile=t * BLOCK + 3000000000)
    """,
    "k_full0d.py": """
        import cuda.tile as ct

        @ct.kernel
        def k_full0d(x, y, n: int):
            i = ct.bid(0)
            oob = ct.full((), n, dtype=ct.int32)
            j = ct.where(i < n, i, oob)
            ct.scatter(y, j, ct.gather(x, j))
    """,
    "k_flags.py": """
        import cuda.tile as ct

        @ct.kernel
        def k_flag_param(x, y, flag, BLOCK: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,))
            if flag:
                t = t * 2.0
            ct.store(y, index=(ct.bid(0),), tile=t)

        @ct.kernel
        def k_int_cond(x, y, n: int, BLOCK: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,))
            if n:
                t = t + 1.0
            ct.store(y, index=(ct.bid(0),), tile=t)
    """,
    "k_bool_to_int.py": """
        import cuda.tile as ct

        @ct.kernel
        def k_bool_to_i32(x, y, BLOCK: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,))
            n = ct.sum(ct.astype(t > 0.0, ct.int32), 0, keepdims=True)
            ct.store(y, index=(ct.bid(0),), tile=n)

        @ct.kernel
        def k_int_casts(x, y, BLOCK: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,)).astype(ct.int32)
            m = (t > 3).astype(ct.int64) + t.astype(ct.int64)
            ct.store(y, index=(ct.bid(0),), tile=m)
    """,
    "k_fma_nested.py": """
        import cuda.tile as ct

        @ct.kernel
        def k_fma_nested(x, out, eps: float, TILE: ct.Constant[int]):
            h = ct.load(x, index=(0,), shape=(TILE,)).astype(ct.float32)
            v = ct.sum(h * h) * 0.5
            n = h * (v + eps)
            r = h + n
            ct.store(out, index=(0,), tile=r.astype(out.dtype))
    """,
    "k_pad_overflow.py": """
        import cuda.tile as ct

        @ct.kernel
        def k_pad_overflow(x, y, TILE: ct.Constant[int]):
            i = ct.arange(TILE, dtype=ct.int32)
            t = ct.gather(x, i, padding_value=-1e30)
            ct.scatter(y, i, t)
    """,
    "k_big_floats.py": """
        import cuda.tile as ct

        @ct.kernel
        def k_big_float(a, b, TILE: ct.Constant[int]):
            x = ct.load(a, index=(ct.bid(0),), shape=(TILE,))
            ct.store(b, index=(ct.bid(0),), tile=x + 1e40)

        @ct.kernel
        def k_big_float_f32(a, b, TILE: ct.Constant[int]):
            x = ct.load(a, index=(ct.bid(0),), shape=(TILE,)).astype(ct.float32)
            ct.store(b, index=(ct.bid(0),), tile=ct.maximum(x, -1e39))
    """,
    # refused: cuTile Python rejects these too
    "k_refused.py": """
        import cuda.tile as ct

        @ct.kernel
        def k_big_int_on_float(a, b, TILE: ct.Constant[int]):
            x = ct.load(a, index=(ct.bid(0),), shape=(TILE,))
            ct.store(b, index=(ct.bid(0),), tile=x + 10000000000000000000000000000000000000000)

        @ct.kernel
        def k_big_int_on_i32(a, b, TILE: ct.Constant[int]):
            x = ct.load(a, index=(ct.bid(0),), shape=(TILE,)).astype(ct.int32)
            ct.store(b, index=(ct.bid(0),), tile=x + 3000000000)

        @ct.kernel
        def k_narrowing(x, y, BLOCK: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,)).astype(ct.int64)
            ct.store(y, index=(ct.bid(0),), tile=t.astype(ct.int32))

        @ct.kernel
        def k_float_cond(x, y, s: float, BLOCK: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(BLOCK,))
            if s:
                t = t * 2.0
            ct.store(y, index=(ct.bid(0),), tile=t)
    """,
    # a mutant: the same gather as k_pad_overflow, whose Rust is edited to +1e30 (+inf instead of -inf)
    "k_pad_mutant.py": """
        import cuda.tile as ct

        @ct.kernel
        def k_pad_mutant(x, y, TILE: ct.Constant[int]):
            i = ct.arange(TILE, dtype=ct.int32)
            t = ct.gather(x, i, padding_value=-1e30)
            ct.scatter(y, i, t)
    """,
}

REFUSED = {"k_big_int_on_float": ("CT121", "out of range of every integer type"),
           "k_big_int_on_i32": ("CT121", "3000000000 is out of range of i32"),
           "k_float_cond": ("CT104", "truncates it to a bool"),
           "k_narrowing": ("CT120", "a narrowing conversion i64 -> i32")}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    base = tmp_path_factory.mktemp("rust_build_classes")
    src = base / "src"
    src.mkdir()
    for name, text in KERNELS.items():
        (src / name).write_text(textwrap.dedent(text).lstrip())
    out = base / "rust"
    result, outputs = run([src], out)
    write_outputs(outputs)
    return out, {k.name: k for k in result.kernels}


def _rust(out, module: str) -> str:
    return (out / "src" / module / "kernel.rs").read_text()


def _entry(out, module: str, entry: str) -> str:
    """An entry's Rust, without the comment lines (they quote the Python source)."""
    text = _rust(out, module)
    start = text.index(f" fn {entry}<")
    nxt = text.find("#[cutile::entry", start)
    body = text[start:nxt if nxt >= 0 else len(text)]
    return "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("//"))


def test_all_but_the_refused_are_translated(ported):
    _, kernels = ported
    for name, k in kernels.items():
        if name in REFUSED:
            code, words = REFUSED[name]
            assert k.status != "translated", name
            assert any(d.code == code and words in d.message for d in k.diagnostics), [d.text() for d in k.diagnostics]
        else:
            assert k.status == "translated", (name, [d.text() for d in k.diagnostics])
    assert set(REFUSED) <= set(kernels)


def test_int_conversions_use_exti_trunci(ported):
    out, _ = ported
    body = _entry(out, "k_i64_const", "k_i64_const")
    # the i32 const generic becomes an i64 through exti (folded: cuTile Python writes constant 64 : i64)
    assert re.search(r"let (\w+): Tile<i32, \{ \[\] \}> = scalar_to_tile\(BLOCK\);\s*"
                     r"let \w+: Tile<i64, \{ \[\] \}> = exti\(\1\);", body), body
    assert "* BLOCK" not in body and "convert_tile" not in body and "convert_scalar(bid)" not in body
    body = _entry(out, "k_i64_const", "k_i64_tile_const")
    assert "constant(3000000000i64" in body and "exti(" in body
    body = _entry(out, "k_bool_to_int", "k_bool_to_i32")
    assert re.search(r"Tile<i32, \{ \[BLOCK\] \}> = exti\(\w+\);", body) and "convert_tile" not in body
    body = _entry(out, "k_bool_to_int", "k_int_casts")
    assert body.count("exti(") == 2 and not re.search(r"Tile<i64, [^=]*= convert_tile", body), body


def test_full0d_is_the_value(ported):
    out, _ = ported
    assert "let oob: i32 = n;" in _entry(out, "k_full0d", "k_full0d")


def test_flag_parameters(ported):
    out, _ = ported
    body = _entry(out, "k_flags", "k_flag_param")
    assert "flag: bool," in body and "if flag {" in body
    body = _entry(out, "k_flags", "k_int_cond")
    assert "n: i32," in body and re.search(r"let (\w+): bool = n != 0i32;\s*if \1 \{", body), body


def test_nested_fma(ported):
    out, _ = ported
    body = _entry(out, "k_fma_nested", "k_fma_nested")
    assert body.count("fma(") == 2 and re.search(r"let r: Tile<f32, \{ \[TILE\] \}> =\s+fma\(h,", body), body


def test_float_literals_past_f32_are_inf(ported):
    out, _ = ported
    text = _rust(out, "k_big_floats")
    assert "e+40" not in text and "e+39" not in text
    body = _entry(out, "k_big_floats", "k_big_float")
    # E has no INFINITY constant: the f32 one, converted (an ftof of a constant, folded)
    assert re.search(r"let (\w+): Tile<f32, \{ \[\] \}> = constant\(f32::INFINITY, shape!\[\]\);\s*"
                     r"let \w+: Tile<E, \{ \[\] \}> = convert_tile\(\1\);", body), body
    assert "constant(f32::NEG_INFINITY, shape![])" in _entry(out, "k_big_floats", "k_big_float_f32")


@requires_toolchain
def test_classes_build_and_verify_equivalent(ported):
    from transpiler.verify.run import verify_output
    out, kernels = ported
    mutant = out / "src" / "k_pad_mutant" / "kernel.rs"
    text = mutant.read_text()
    assert text.count("-1e+30f32") == 1
    mutant.write_text(text.replace("-1e+30f32", "1e+30f32"))
    verdicts = {v.kernel: v for v in verify_output(out)}
    expected = {n for n in kernels if n not in REFUSED and n != "k_pad_mutant"}
    assert expected <= set(verdicts)
    for name in sorted(expected):
        v = verdicts[name]
        bad = [f"{c.entry} {c.spec} {c.dtype}: {c.verdict}\n{c.detail}" for c in v.checks if c.verdict != "equivalent"]
        assert v.verdict == "equivalent", (name, v.reason, bad)
    # N16 does not hide a real difference: +inf padding is not -inf (f16), nor 1e30 (f32)
    m = verdicts["k_pad_mutant"]
    assert m.verdict == "different", m.reason
    assert {c.dtype for c in m.checks if c.verdict == "different"} == {c.dtype for c in m.checks}
