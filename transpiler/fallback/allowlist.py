"""Allow-list for an LLM's Rust fragment, checked on its tokens before anything compiles it.

The fragment is spliced into a generated kernel body as `let x: T = { <fragment> };`, and the crate it
lands in is built on the host: a macro (`include_str!`, `env!`), an item (`fn`, `impl`), an attribute, a
path into `std` or another crate, or a brace that closes the block early could all make the build read
files or run code. So nothing is parsed for meaning here: the fragment is tokenized, and every token must
be a `cutile::core` operation, a value in scope, a generic, a literal or plain expression punctuation.
Anything the rules cannot place is refused with the first offending token and its line:column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from ..emit.lower import CORE_NAMES

ALLOWED_MACROS = frozenset({"shape", "const_array"})

# Methods the emitted Rust calls on tiles, views and ranges (the Rust strings in transpiler/emit/lower.py;
# templates/kernel.rs.j2 adds none). `.store(` and `.partition_full_mut(` are left out on purpose: a
# fragment computes one value, it must not write memory or take a mutable view (the latter needs `unsafe`).
ALLOWED_METHODS = frozenset({"reshape", "broadcast", "step_by", "shape", "token", "offset_tile"})

# `pub mod`s of cutile-0.5.0/src/_core.rs that generated code names (`atomic` comes from lower.py's
# atomic_rmw_tko; allocation, fast_acc, saturating and signedness exist but are never emitted).
MODE_MODULES = frozenset({"ordering", "scope", "padding", "dim_map", "rounding", "ftz", "nan", "overflow",
                          "predicate", "cmp_ordering", "tma", "reverse", "atomic"})
PRIMITIVES = frozenset({"bool", "f16", "bf16", "f32", "f64", "tf32", "i8", "i16", "i32", "i64", "u8", "u16",
                        "u32", "u64", "f8e4m3fn", "f8e5m2"})
PRIM_CONSTS = frozenset({"INFINITY", "NEG_INFINITY", "NAN", "MAX", "MIN", "ZERO", "ONE", "EPSILON",
                         "MIN_POSITIVE"})
PRIM_CONST_TYPES = frozenset({"f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"})
TYPES = frozenset({"Tile", "Token", "Partition", "PartitionMut", "Shape", "Array"})

ALLOWED_KEYWORDS = frozenset({"let", "mut", "if", "else", "as", "true", "false"})
KEYWORDS = frozenset({
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for", "if", "impl",
    "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "Self", "static",
    "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn",
    "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized", "virtual",
    "yield", "try", "gen", "union", "macro_rules",
})

# Punctuation, longest first. `->`, `=>` and the range dots are tokens so that they are refused by name.
_PUNCT = sorted("( ) [ ] { } , ; : . = + - * / % & | ^ ! < > :: == != <= >= && || << >> += -= *= /= %= &= "
                "|= ^= <<= >>= -> => .. ... ..=".split(), key=len, reverse=True)
_REFUSED_PUNCT = {"->": "closures and signatures are not", "=>": "match arms are not",
                  "..": "ranges are not", "...": "ranges are not", "..=": "ranges are not"}
_SUFFIXES = frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "usize", "isize"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# `1.` is a float only when no `.`, `_` or letter follows (`1.max(2)` is a method call), as in rustc's lexer.
_EXP = r"[eE][+-]?[0-9_]*[0-9][0-9_]*"
_NUMBER = re.compile(rf"0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+"
                     rf"|[0-9][0-9_]*(?:\.[0-9][0-9_]*(?:{_EXP})?|{_EXP}|\.(?![._A-Za-z0-9]))?")
_TUPLE_INDEX = re.compile(r"[0-9]+")
_QUOTED = {'"': re.compile(r'"(?:[^"\\\n]|\\.)*"?'), "'": re.compile(r"'(?:[^'\\\n]|\\.)*'?")}
_OPEN = {"(": ")", "[": "]", "{": "}"}


class FragmentError(ValueError):
    """The fragment holds a token that no rule allows."""


@dataclass(frozen=True)
class Token:
    kind: str  # "ident", "number" or "punct"
    text: str
    line: int
    col: int

    @property
    def at(self) -> str:
        return f"{self.line}:{self.col}"


def _lex(rust: str) -> tuple[list[Token], FragmentError | None]:
    """Tokens up to the first one that is never allowed, and the error for that one (None at the end)."""
    out: list[Token] = []
    i, line, start = 0, 1, 0
    while i < len(rust):
        c, at = rust[i], f"{line}:{i - start + 1}"
        tok = lambda kind, text: Token(kind, text, line, i - start + 1)  # noqa: E731
        err = lambda why: (out, FragmentError(f"{why} at {at} is not allowed in a fragment"))  # noqa: E731
        if c == "\n":
            i, line, start = i + 1, line + 1, i + 1
            continue
        if c in " \t\r":
            i += 1
            continue
        if not c.isascii():
            return err(f"non-ASCII character `{c}` (U+{ord(c):04X})")
        if not c.isprintable():
            return err(f"control character U+{ord(c):04X}")
        if rust.startswith(("//", "/*"), i):
            return err(f"comment `{rust[i:i + 2]}`")
        if c == '"':
            return err(f"string literal `{_QUOTED[c].match(rust, i).group()[:24]}`")
        if c == "'":  # `'a'` is a char literal, `'a` (no closing quote) a lifetime
            m = _IDENT.match(rust, i + 1)
            if m and not rust.startswith("'", m.end()):
                return err(f"lifetime `'{m.group()}`")
            return err(f"char literal `{_QUOTED[c].match(rust, i).group()[:24]}`")
        m = _IDENT.match(rust, i)
        if m:
            word, nxt = m.group(), rust[m.end():m.end() + 1]
            if word == "r" and nxt == "#":
                return err(f"raw identifier or string `{rust[i:i + 12].split()[0]}`")
            if word in ("b", "br", "c", "cr") and nxt in ("\"", "'", "#"):
                return err(f"byte or C string literal `{rust[i:i + 12].split()[0]}`")
            out.append(tok("ident", word))
            i = m.end()
            continue
        if c.isdigit():  # right after `.` only a tuple index: `t.0.1` is two fields, not the float `0.1`
            after_dot = bool(out) and out[-1].text == "."
            m = (_TUPLE_INDEX if after_dot else _NUMBER).match(rust, i)
            suffix = _IDENT.match(rust, m.end())
            if suffix and (after_dot or suffix.group() not in _SUFFIXES):
                return err(f"number `{rust[i:suffix.end()]}` (bad suffix)")
            end = suffix.end() if suffix else m.end()
            out.append(tok("number", rust[i:end]))
            i = end
            continue
        p = next((p for p in _PUNCT if rust.startswith(p, i)), None)
        if p is None:  # `#` (attributes), `$`, `?`, `@`, `\`, `~`, backtick
            return err("attribute `#`" if c == "#" else f"character `{c}`")
        out.append(tok("punct", p))
        i += len(p)
    return out, None


def tokenize(rust: str) -> list[Token]:
    tokens, error = _lex(rust)
    if error:
        raise error
    return tokens


class _NeedMore(Exception):
    """The decision needs a token past the point where lexing failed: report the lexing error instead."""


def check_fragment(rust: str, scope: Iterable[str], generics: Iterable[str] = (), max_len: int = 8192) -> str | None:
    """None when the fragment passes; else the reason (one sentence naming the first offending token and, when
    known, its 1-based line:column inside the fragment)."""
    if len(rust) > max_len:
        return f"fragment is {len(rust)} characters, over the limit of {max_len}"
    if not rust.strip():
        return "fragment is empty"
    tokens, error = _lex(rust)
    try:
        reason = _scan(tokens, set(scope) | set(generics), truncated=error is not None)
    except _NeedMore:
        reason = None
    return reason or (str(error) if error else None)


def _scan(toks: list[Token], known: set[str], truncated: bool) -> str | None:
    """First violation, left to right, among the tokens that did lex (a lexing error comes after them)."""
    known |= CORE_NAMES | PRIMITIVES | TYPES

    def peek(j: int, strict: bool = False) -> Token | None:
        """Token j; past the end of a truncated list a strict look-ahead defers to the lexing error (a token
        that failed to lex is never `!`, `::`, `[` or `(`, so the other look-aheads need not)."""
        if j < len(toks):
            return toks[j]
        if truncated and strict:
            raise _NeedMore
        return None

    stack: list[Token] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "punct":
            if t.text in _REFUSED_PUNCT:
                return f"`{t.text}` at {t.at} is not allowed ({_REFUSED_PUNCT[t.text]} part of a fragment)"
            if t.text == "::":  # nothing before it: `::std`, or `<T as X>::f`
                n = peek(i + 1)
                name = "::" + (n.text if n and n.kind == "ident" else "")
                return f"path `{name}` at {t.at} is outside cutile::core (a leading `::` names another crate)"
            if t.text in _OPEN:
                stack.append(t)
            elif t.text in ")]}":  # the fragment must not close the block it is spliced into
                if not stack or _OPEN[stack[-1].text] != t.text:
                    return f"unbalanced `{t.text}` at {t.at}"
                stack.pop()
            elif t.text == ".":
                n = peek(i + 1, strict=True)
                if n is None or not (n.kind == "number" or (n.kind == "ident" and n.text in ALLOWED_METHODS)):
                    what = (f"method `.{n.text}`" if n and n.kind == "ident"
                            else f"`.` followed by `{n.text}`" if n else "a trailing `.`")
                    return (f"{what} at {t.at} is not allowed (only a tuple index or "
                            f"{', '.join(f'.{m}' for m in sorted(ALLOWED_METHODS))})")
                i += 1
            i += 1
            continue
        if t.kind == "number":
            i += 1
            continue
        # an identifier: a keyword, a macro, the head of a path or a name
        if t.text in KEYWORDS:
            if t.text not in ALLOWED_KEYWORDS:
                return f"`{t.text}` at {t.at} is not allowed in a fragment"
            if t.text == "let":  # `let [mut] NAME`: the name is known from here on
                j = i + 1
                if (n := peek(j, strict=True)) and n.text == "mut":
                    j += 1
                n = peek(j, strict=True)
                if n is None or n.kind != "ident" or n.text in KEYWORDS:
                    return f"`let` at {t.at} must bind one name, not `{n.text if n else ''}`"
                known.add(n.text)
                i = j
            i += 1
            continue
        n = peek(i + 1)
        if n and n.text == "!":  # `!=` is its own token, so a bare `!` after a name is a macro call
            after = peek(i + 2)
            if t.text not in ALLOWED_MACROS or after is None or after.text not in ("[", "("):
                return f"macro `{t.text}!` at {t.at} is not allowed (only shape!, const_array!)"
            i += 2
            continue
        if n and n.text == "::":
            path, j = [t.text], i + 1
            while (n := peek(j)) and n.text == "::":
                seg = peek(j + 1)
                if seg and seg.text == "<":
                    return f"turbofish generics `::<` at {n.at} are not allowed"
                if seg is None or seg.kind != "ident":
                    return f"path `{'::'.join(path)}::` at {t.at} is outside cutile::core"
                path.append(seg.text)
                j += 2
            text = "::".join(path)
            if (n := peek(j)) and n.text == "!":
                return f"macro `{text}!` at {t.at} is not allowed (only shape!, const_array!)"
            if not ((len(path) == 3 and path[:2] == ["cutile", "core"] and path[2] in CORE_NAMES)
                    or (len(path) == 2 and path[0] in MODE_MODULES and path[1][:1].isupper())
                    or (len(path) == 2 and path[0] in PRIM_CONST_TYPES and path[1] in PRIM_CONSTS)):
                return f"path `{text}` at {t.at} is outside cutile::core"
            i = j
            continue
        if t.text not in known:
            return (f"unknown name `{t.text}` at {t.at} "
                    "(not a value in scope, a generic or a cutile::core function)")
        i += 1
    if stack and not truncated:
        return f"unclosed `{stack[-1].text}` at {stack[-1].at}"
    return None
