"""The allow-list an LLM's Rust fragment must pass before it is spliced into a kernel and compiled."""

from __future__ import annotations

import pytest

from transpiler.fallback.allowlist import (ALLOWED_MACROS, ALLOWED_METHODS, FragmentError, Token, check_fragment,
                                           tokenize)

SCOPE = {"x", "y"}
GENERICS = {"BLOCK", "E"}

ACCEPTED = [
    "exp(x)",
    "{ let t: Tile<f32, { [BLOCK] }> = convert_tile(x); maxf(t, y, nan::Disabled, ftz::Disabled) }",
    "constant(0.0f32, shape![BLOCK])",
    "cutile::core::exp(x)",
    "f32::INFINITY",
    "get_tile_block_id().0",
    "1.5e-3f32",
    "x.reshape(shape![BLOCK, 1]).broadcast(shape![BLOCK, BLOCK])",
    "{ let mut a: Tile<E, { [BLOCK] }> = x; a = addf(a, y, rounding::NearestEven, ftz::Disabled); a }",
    "if true { x } else { y }",
    "permute(x, const_array![1, 0])",
    "0x_ff_u32 + 0b1010 + 0o17 + 1_000i64",
    "get_tile_block_id().0 as i64",
    "(x, y).1",
    "1. + 2.5E+3 - f64::MAX",
    "{\n    let s: Tile<f32, { [] }> = x;\n    s\n}",
]

# (fragment, text the reason must mention)
REJECTED = [
    pytest.param("unsafe { load_ptr_tko(x) }", "`unsafe`", id="unsafe-block"),
    pytest.param("{ fn f() {} x }", "`fn`", id="fn-item"),
    pytest.param("#[inline] x", "`#`", id="attribute"),
    pytest.param('std::process::Command::new("x")', "`std::process::Command::new`", id="std-path"),
    pytest.param('include_str!("/etc/passwd")', "`include_str!`", id="include-str"),
    pytest.param('println!("{}", x)', "`println!`", id="println"),
    pytest.param('env!("HOME")', "`env!`", id="env"),
    pytest.param('{ let s = "x"; x }', '`"x"`', id="string"),
    pytest.param("{ let c = 'a'; x }", "`'a'`", id="char"),
    pytest.param("x // hi", "`//`", id="line-comment"),
    pytest.param("x /* hi */", "`/*`", id="block-comment"),
    pytest.param("x } fn evil() {", "`}` at 1:3", id="close-block"),
    pytest.param("exp(x))", "`)` at 1:7", id="extra-paren"),
    pytest.param("exp(x", "`(`", id="unclosed"),
    pytest.param("exp(z)", "`z` at 1:5", id="unknown-name"),
    pytest.param("x.to_string()", "`.to_string`", id="method"),
    pytest.param("{ let r: &'static f32 = x; x }", "`'static`", id="lifetime"),
    pytest.param("::std::fs::read(x)", "`::std`", id="leading-colons"),
    pytest.param("convert_tile::<f32>(x)", "`::<`", id="turbofish"),
    pytest.param("x..y", "`..`", id="range"),
    pytest.param("|x| -> f32 { x }", "`->` at 1:5", id="arrow"),
    pytest.param("exp(xé)", "`é`", id="non-ascii"),
    pytest.param("r#unsafe", "`r#unsafe`", id="raw-ident"),
    pytest.param("x + " * 3000 + "x", "over the limit", id="too-long"),
    pytest.param("  \n ", "empty", id="empty"),
    pytest.param("shape!{BLOCK}", "`shape!`", id="macro-braces"),
    pytest.param("cutile::core::nope(x)", "`cutile::core::nope`", id="not-core"),
    pytest.param("core::ptr::read(x)", "`core::ptr::read`", id="rust-core"),
    pytest.param("f32::from_bits(x)", "`f32::from_bits`", id="prim-method"),
    pytest.param("nan::disabled", "`nan::disabled`", id="mode-lowercase"),
    pytest.param("x?", "`?`", id="question"),
    pytest.param("x\x07", "U+0007", id="control"),
    pytest.param("b\"x\"", "`b\"x\"`", id="byte-string"),
    pytest.param("x.0f32", "`0f32`", id="bad-suffix"),
    pytest.param("let = x", "`let`", id="let-no-name"),
    pytest.param("match x { _ => y }", "`match`", id="match"),
    pytest.param("x +\n  foo(y)", "`foo` at 2:3", id="line-col"),
]


@pytest.mark.parametrize("rust", ACCEPTED)
def test_accepted(rust):
    assert check_fragment(rust, SCOPE, GENERICS) is None


@pytest.mark.parametrize("rust, mention", REJECTED)
def test_rejected(rust, mention):
    reason = check_fragment(rust, SCOPE, GENERICS)
    assert reason and mention in reason, reason


def test_every_example_decides():
    """Property: accepted examples pass, rejected ones get a non-empty one-line reason."""
    for rust in ACCEPTED:
        assert check_fragment(rust, SCOPE, GENERICS) is None, rust
    for p in REJECTED:
        reason = check_fragment(p.values[0], SCOPE, GENERICS)
        assert isinstance(reason, str) and reason.strip() and "\n" not in reason, p.values[0]


def test_first_violation_wins():
    # the macro comes before the string literal the lexer would refuse
    assert "include_str!" in check_fragment('include_str!("x") + "y"', SCOPE)
    assert "`z`" in check_fragment("z + 'a'", SCOPE)


def test_scope_and_generics_are_the_only_free_names():
    assert check_fragment("exp(x)", set()) is not None
    assert check_fragment("{ let t: Tile<f32, { [N] }> = x; t }", SCOPE) is not None
    assert check_fragment("{ let t: Tile<f32, { [N] }> = x; t }", SCOPE, {"N"}) is None


def test_tokenize():
    assert tokenize("t.0.1 + 1.5e-3f32") == [
        Token("ident", "t", 1, 1), Token("punct", ".", 1, 2), Token("number", "0", 1, 3),
        Token("punct", ".", 1, 4), Token("number", "1", 1, 5), Token("punct", "+", 1, 7),
        Token("number", "1.5e-3f32", 1, 9)]
    assert [t.text for t in tokenize("a != b::c <= 1.0")] == ["a", "!=", "b", "::", "c", "<=", "1.0"]
    assert [t.text for t in tokenize("1.max(2)")] == ["1", ".", "max", "(", "2", ")"]
    for bad in ('"s"', "'c'", "'a", "// c", "r#x", "é", "\x00", "#", "$", "?", "@", "\\", "~"):
        with pytest.raises(FragmentError):
            tokenize(bad)


def test_constants():
    assert ALLOWED_MACROS == {"shape", "const_array"}
    assert {"reshape", "broadcast", "step_by"} <= ALLOWED_METHODS
    assert not {"store", "to_string", "clone"} & ALLOWED_METHODS
