"""The constant conditions of an answer, and the specializations that make each take both outcomes.

The proof compares Tile IR at the kernel's specializations. cuTile Rust folds a comparison of constants
(`if TILE >= 512 { pow(a, a) } else { a }`), so an answer can be right at every specialization the proof
checks and wrong at every other: each comparison in an answer that reads no runtime value (const generics,
literals, and `let`s bound to such expressions) must be checked at a specialization where it holds and at
one where it does not. The specializations of the kernel give what they give; for each missing outcome this
module chooses candidates (values around the literals, powers of two first: tile sizes must be), which the
verifier tries in order (`answer_probes` in the staging manifest). A comparison it cannot evaluate, or an
outcome no specialization reaches, fails the proof: the answer is rejected (prove.py).
"""

from __future__ import annotations

import itertools
import re

from ..model.ir import GENERIC_DTYPES
from ..verify.specs import const_value, entry_values, predicates_hold
from .allowlist import PRIMITIVES, tokenize

COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
# what ends a comparison's operand (at its nesting depth): operators of lower precedence, statements, blocks
_OPERAND_END = frozenset(COMPARISONS) | {"&&", "||", ",", ";", "=", "{", "}", "if", "else", "let", "+=", "-=",
                                          "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
_ARITHMETIC = {"+", "-", "*", "%", "(", ")", "<<", ">>", "&", "|", "^"}
MAX_CANDIDATES = 4  # per outcome: the verifier takes the first cuTile Python accepts


class Unprobable(Exception):
    """An answer's constant condition that cannot be checked on both sides (the reason, one sentence)."""


def _const_names(kernel: dict) -> dict[str, str]:
    """The constants an answer may name (Rust names) -> the name specializations give them."""
    ints = {p["name"] for p in kernel["params"] if p["kind"] == "const"}  # float ones too: bits, refused later
    names = {}
    for e in kernel["entries"]:
        for g in e["generics"]:
            if g in GENERIC_DTYPES:
                continue
            py = e.get("generic_params", {}).get(g, g)
            if py in ints or py in e.get("derived", {}):
                names[g] = py
    return names


def _without_types(toks: list) -> list:
    """The tokens with every `let` binding's declared type left out (its `<`/`>` are not comparisons)."""
    out, i = [], 0
    while i < len(toks):
        t = toks[i]
        out.append(t)
        if t.text == "let":
            j = i + 1
            while j < len(toks) and toks[j].text not in (":", "="):
                out.append(toks[j])
                j += 1
            if j < len(toks) and toks[j].text == ":":
                while j < len(toks) and toks[j].text != "=":
                    j += 1
            i = j
            continue
        i += 1
    return out


def _operand(toks: list, i: int, step: int) -> list:
    """The tokens of the operand beside the comparison at `i` (step -1: left, +1: right), in order."""
    opens, closes = ("(", "["), (")", "]")
    inward, outward = (closes, opens) if step < 0 else (opens, closes)
    depth, j, got = 0, i + step, []
    while 0 <= j < len(toks):
        t = toks[j].text
        if t in inward:
            depth += 1
        elif t in outward:
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and t in _OPERAND_END:
            break
        got.append(toks[j])
        j += step
    return got[::-1] if step < 0 else got


def _python(tokens: list, consts: dict[str, str], aliases: dict[str, list]) -> tuple[str, set[str]] | None:
    """The operand as a Python expression over the constants and the constants it reads; None when it reads a
    runtime value. Raises Unprobable when it reads only constants but holds something not evaluated here."""
    text, read, j = [], set(), 0
    if mutable := next((t.text for t in tokens if aliases.get(t.text) == []), None):
        raise Unprobable(f"`{mutable}` is a `let mut` of constants (it may be reassigned)")
    tokens = [x for t in tokens for x in (aliases.get(t.text, [t]) if t.kind == "ident" else [t])]
    runtime = False
    unknown = None
    while j < len(tokens):
        t = tokens[j]
        if t.kind == "number":
            digits = re.sub(r"(?:[iu](?:8|16|32|64|size))$", "", t.text.replace("_", ""))
            if not re.fullmatch(r"[0-9]+", digits):
                unknown = unknown or t.text
            text.append(digits)
        elif t.kind == "ident" and t.text in consts:
            read.add(t.text)
            text.append(t.text)
        elif t.text == "as" and j + 1 < len(tokens) and tokens[j + 1].text in PRIMITIVES:
            j += 1  # an int cast keeps the value here
        elif t.text == "/":
            text.append("//")
        elif t.text == "!":
            text.append("~")
        elif t.text in ("true", "false"):
            text.append(t.text.title())
        elif t.kind == "punct" and t.text in _ARITHMETIC:
            text.append(t.text)
        elif t.kind == "ident" and not (j + 1 < len(tokens) and tokens[j + 1].text in ("(", "::", "!")) \
                and t.text not in PRIMITIVES:
            runtime = True  # a value: of the kernel or a `let` of the answer that reads one
        else:
            unknown = unknown or t.text
        j += 1
    if runtime:
        return None
    if unknown is not None and read:
        raise Unprobable(f"`{unknown}` in it is not evaluated here")
    return " ".join(text), read


def _aliases(toks: list, consts: dict[str, str]) -> dict[str, list]:
    """`let NAME: T = <expression of constants only>;` -> the expression's tokens (in parentheses): the name
    is then as constant as the expression (a `let mut` one: [], refused where it is compared)."""
    from .allowlist import Token
    aliases: dict[str, list] = {}
    for i, t in enumerate(toks):
        if t.text != "let":
            continue
        j = i + 1
        mutable = j < len(toks) and toks[j].text == "mut"
        j += mutable
        name = toks[j].text
        while j < len(toks) and toks[j].text != "=":
            j += 1
        expr, depth = [], 0
        for u in toks[j + 1:]:
            if depth == 0 and u.text == ";":
                break
            depth += u.text in ("(", "[", "{") or -(u.text in (")", "]", "}"))
            expr.append(u)
        try:
            py = _python(expr, consts, aliases)
        except Unprobable:
            py = ("", {"?"})  # reads constants through something not evaluated here: refused where compared
        if py is not None and py[1]:
            aliases[name] = [] if mutable else [Token("punct", "(", 0, 0), *expr, Token("punct", ")", 0, 0)]
    return aliases


def constant_comparisons(rust: str, consts: dict[str, str]) -> list[tuple[str, str]]:
    """(as written, as Python) for each comparison of the answer that reads constants and no runtime value.
    Raises Unprobable for one that cannot be evaluated here."""
    toks = tokenize(rust)
    aliases = _aliases(toks, consts)
    toks = _without_types(toks)
    found = []
    for i, t in enumerate(toks):
        if t.kind != "punct" or t.text not in COMPARISONS:
            continue
        left, right = _operand(toks, i, -1), _operand(toks, i, +1)
        shown = " ".join(x.text for x in left + [t] + right)
        try:
            sides = [_python(left, consts, aliases), _python(right, consts, aliases)]
        except Unprobable as e:
            raise Unprobable(f"its constant condition `{shown}` cannot be checked on both sides: {e}") from None
        if None in sides or not (sides[0][1] | sides[1][1]):
            continue  # reads a runtime value (compared at run time: the Tile IR holds it), or literals only
        found.append((shown, f"({sides[0][0]}) {t.text} ({sides[1][0]})"))
    return found


def _rust_values(kernel: dict, spec: dict) -> dict | None:
    """The constants under their Rust names at `spec`, in the first entry it selects (None: it selects none)."""
    entry = next((e for e in kernel["entries"] if predicates_hold(e["predicates"], spec)), None)
    if entry is None:
        return None
    try:
        return entry_values(kernel, entry, spec)
    except Exception:  # noqa: BLE001 - a derived constant that does not evaluate at these values
        return None


def _outcome(expr: str, values: dict | None):
    if values is None:
        return None
    try:
        return bool(const_value(expr, values))
    except Exception:  # noqa: BLE001 - e.g. a division by zero at these values
        return None


def _candidates(name: str, base: int, literals: set[int], boolean: bool) -> list[int]:
    """Values to try for one constant, best first: powers of two, then nearest the specialization's value."""
    if boolean:
        return [base, 1 - base]
    vals = {base, base * 2, base // 2, 0, 1}
    for lit in literals:
        for v in (lit - 1, lit, lit + 1):
            vals.add(v)
            if v >= 1:
                low = 1 << (v.bit_length() - 1)
                vals |= {low, low * 2, low // 2, low * 4}
    pow2 = lambda v: v > 0 and v & (v - 1) == 0  # noqa: E731
    return sorted((v for v in vals if v >= 0), key=lambda v: (v != base, not pow2(v), abs(v - base)))


def answer_probes(kernel: dict, answers: list[str]) -> list[dict]:
    """{"label", "candidates"} for each outcome of each constant comparison of the answers that no
    specialization of the (manifest) kernel takes: candidate specializations, best first. Raises Unprobable
    when a comparison cannot be evaluated or an outcome is taken by no specialization at all."""
    consts = _const_names(kernel)
    specs = kernel["specializations"]
    derived = {n: e for en in kernel["entries"] for n, e in en.get("derived", {}).items()}
    bools = {p["name"] for p in kernel["params"] if p.get("const_type") == "bool"}
    probes = []
    for rust in answers:
        for shown, expr in constant_comparisons(rust, consts):
            read = {consts[n] for n in re.findall(r"[A-Za-z_]\w*", expr) if n in consts}
            vary = sorted({n for r in read for n in ([r] if r in specs[0] else
                                                     re.findall(r"[A-Za-z_]\w*", derived.get(r, "")))
                           if n in specs[0]})
            if floats := sorted(read & {p["name"] for p in kernel["params"] if p.get("const_type") == "float"}):
                raise Unprobable(f"its constant condition `{shown}` compares the float constant {floats[0]} "
                                 "(an f32's bits in Rust)")
            held = {_outcome(expr, v) for v in map(lambda s: _rust_values(kernel, s), specs) if v is not None}
            if None in held or not held:
                raise Unprobable(f"its constant condition `{shown}` cannot be evaluated at the kernel's "
                                 "specializations")
            literals = {int(x) for x in re.findall(r"\b\d+\b", expr)}
            for want in (True, False):
                if want in held:
                    continue
                per_name = [_candidates(n, specs[0][n], literals, n in bools) for n in vary]
                found = []
                for combo in itertools.islice(itertools.product(*per_name), 20000):
                    spec = {**specs[0], **dict(zip(vary, combo))}
                    if _outcome(expr, _rust_values(kernel, spec)) is want:
                        found.append(spec)
                        if len(found) == MAX_CANDIDATES:
                            break
                label = f"`{shown}` {'true' if want else 'false'}"
                if not found:
                    raise Unprobable(f"its constant condition `{shown}` is {str(not want).lower()} at every "
                                     "specialization the kernel can take, so its other side cannot be checked")
                probes.append({"label": label, "candidates": found})
    return probes
