"""Folds single-use temporaries into the statement that reads them, so that an access reads as one expression
(`cmpi(cols, broadcast_scalar(n_cols, shape![BLOCK_N]), predicate::LessThan)`) instead of a chain of `let`s.

A pure pass over the lowered body (one statement per line). A temporary is folded only where nothing can change:
- it is one of the lowering's own names (never a source variable), defined by a `let` and read exactly once in
  the entry, by a later statement of the same block with only other temporaries' `let`s in between (no loop, `if`
  or other statement crosses: the value and the number of times it is computed stay the same);
- its value is an operator on plain operands, or a call of a cutile function whose result type follows from its
  arguments' types (`rules/cutile_core_api.txt`: every generic of the result appears in a parameter), so neither
  rustc nor cuTile Rust's compiler needs the `let`'s annotation. A call whose result type comes from the context
  (`exti`, `convert_tile`) is folded only as the right operand of an operator of a `let` of its own type, or as the
  whole value of such a `let`;
- it lands as a call argument or an operand of a spaced binary operator (never after `&`, a unary `-`, before a
  `.` or inside `Some(..)`), never into an `unsafe` statement, and the line stays within rustfmt's 120 columns.
Folding moves pure ops only (a value's ops are computed where it is read, in the same block), which the Tile IR
normal form compares by structure, not position (N7): a cuTile Python port's IR compares equal before and after.
"""

from __future__ import annotations

import functools
import re

from ..rules import RULES_DIR
from .steps import step_sources

WIDTH = 120  # rustfmt's max_width (render.py)
BODY_INDENT = 4  # the body lines' indent in the module is 4 more than the lowering's (`pub mod` around the entry)

_LET = re.compile(r"^(?P<indent>\s*)let (?P<name>[A-Za-z_][A-Za-z0-9_]*): (?P<ty>[^=]+?) = (?P<rhs>.+);$")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ATOM = r"(?:[A-Za-z_][A-Za-z0-9_.]*|-?[0-9][0-9A-Za-z_.]*)"
_BINARY = re.compile(rf"^{_ATOM} (?:[-+*/%&|^]|<<|>>) {_ATOM}$")
_OPERATORS = ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>")
# functions with an effect or a token: never moved (a load folded past a store of its array would read the store)
_EFFECT = re.compile(r"load|store|print|token|atomic|validate|assert|barrier|fence")
# typed by their arguments for rustc, but cuTile Rust's compiler wants the `let`'s type ("Return type required")
_NEEDS_LET = frozenset({"constant"})
# a value literal (the lowering suffixes each with its type; a shape's dimensions are not values)
_LITERAL = re.compile(r"(?<![A-Za-z0-9_])[0-9][0-9_.eE+-]*(?:[fiu](?:8|16|32|64))\b|::(?:INFINITY|NEG_INFINITY|NAN|ZERO|ONE)\b")


@functools.lru_cache(maxsize=None)
def typed_by_arguments() -> frozenset[str]:
    """cutile functions whose result type is fixed by their arguments' types (every generic parameter named in
    the result also appears in a parameter), read from the API listing: such a call needs no annotation."""
    found: dict[str, bool] = {}
    for line in (RULES_DIR / "cutile_core_api.txt").read_text().splitlines():
        parts = _signature(line.strip())
        if parts is None:
            continue
        name, generics, params, ret = parts
        if params.startswith("self") or params.startswith("&"):
            continue  # a method: generated bodies call the free functions
        names = {g.split(":")[0].replace("const ", "").strip() for g in _split_top(generics) if g.strip()}
        param_types = " ".join(p.split(":", 1)[1] for p in _split_top(params) if ":" in p)
        used = set(_IDENT.findall(param_types))
        ok = bool(ret) and all(g in used for g in names & set(_IDENT.findall(ret))) and not _EFFECT.search(name)
        found[name] = found.get(name, True) and ok  # overloads: every one must be
    steps = {n for n, src in step_sources().items() if re.search(rf"fn {n}\(", src)}  # not generic
    return frozenset(n for n, ok in found.items() if ok and n not in _NEEDS_LET) | steps


def _signature(line: str) -> tuple[str, str, str, str] | None:
    """(name, generics, parameters, result) of a `pub fn` line of the API listing, else None."""
    m = re.match(r"^pub fn (\w+)", line)
    if not m:
        return None
    i, generics = m.end(), ""
    if line[i:i + 1] == "<":
        end = _closing(line, i, "<", ">")
        generics, i = line[i + 1:end], end + 1
    if line[i:i + 1] != "(":
        return None
    end = _closing(line, i, "(", ")")
    rest = line[end + 1:].strip()
    return m.group(1), generics, line[i + 1:end], rest[3:].strip() if rest.startswith("->") else ""


def _closing(text: str, start: int, open_: str, close: str) -> int:
    """The index of the bracket that closes the one at `start` (brackets of the other kinds nest inside)."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_:
            depth += 1
        elif text[i] == close and not (close == ">" and text[i - 1] == "-"):
            depth -= 1
            if depth == 0:
                return i
    return len(text) - 1


def _split_top(text: str) -> list[str]:
    """`text` split at the commas outside brackets (the `>` of a `->` closes none)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}" and not (ch == ">" and text[i - 1:i] == "-"):
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _call_head(rhs: str) -> str | None:
    """The function of `rhs` when `rhs` is one call `f(...)` spanning the whole text (or a field of its tuple,
    `get_tile_block_id().0`), else None."""
    rhs = re.sub(r"\)\.[0-9]+$", ")", rhs)
    m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\(", rhs)
    if not m or not rhs.endswith(")"):
        return None
    depth = 0
    for i, ch in enumerate(rhs[m.end() - 1:], m.end() - 1):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0 and i != len(rhs) - 1:
                return None
    return m.group(1)


class _Def:
    def __init__(self, line: str, name: str, ty: str, rhs: str, kind: str):
        self.line, self.name, self.ty, self.rhs, self.kind = line, name, ty, rhs, kind


def _kind(rhs: str) -> str | None:
    """How a temporary's value may be folded: "args" (its type follows from its operands), "context" (a call
    whose result type the reader supplies), or None (never: loads, tuples, blocks, anything else)."""
    if _BINARY.match(rhs):
        return "args"
    head = _call_head(rhs)
    if head is None or _EFFECT.search(head):
        return None
    return "args" if head in typed_by_arguments() else "context"


_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _occurrence(stmt: str, name: str) -> int | None:
    """The position of the only occurrence of `name` in `stmt` as a name (not a field `.name`, not part of a longer
    name), else None. A substring search, not a regex: it runs for every waiting temporary at every statement."""
    found = None
    at = stmt.find(name)
    while at != -1:
        end = at + len(name)
        if (at == 0 or stmt[at - 1] not in _NAME_CHARS and stmt[at - 1] != ".") \
                and (end == len(stmt) or stmt[end] not in _NAME_CHARS):
            if found is not None:
                return None
            found = at
        at = stmt.find(name, at + 1)
    return found


def _enclosing_call(stmt: str, at: int) -> str | None:
    """The function whose argument list holds position `at` of `stmt` (None: a tuple, an array, a macro)."""
    depth = 0
    for i in range(at - 1, -1, -1):
        ch = stmt[i]
        if ch in ")]}":
            depth += 1
        elif ch in "([{":
            if depth == 0:
                m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)$", stmt[:i]) if ch == "(" else None
                return m.group(1) if m else None
            depth -= 1
    return None


def _fits(d: _Def, stmt: str, at: int) -> bool:
    """Whether `d`'s value may replace the name at `at` in `stmt` (see the module's rules)."""
    before, after = stmt[:at], stmt[at + len(d.name):]
    if after[:1] in (".", "[", "("):
        return False  # a field, an index or a call of the value
    arg_before = before.endswith("(") or before.endswith(", ")
    arg_after = after[:1] in (",", ")")
    if arg_before and arg_after:
        # a call argument, of a call typed by its arguments (cuTile Rust's compiler types a value read by
        # `tile_to_scalar` or `exti` only from a `let`: `tile_to_scalar(reshape(t, shape![]))` fails there)
        # A literal in an argument may take the type of the entry's own generic of the callee's parameter's name:
        # `cmpf(t, broadcast_scalar(0.0f32, ..))` in an entry generic over `E` compiles the 0.0 as E (Tile IR
        # that fails to verify); a literal is folded only where a `let`'s type stands over it
        if _LITERAL.search(d.rhs):
            return False
        return d.kind == "args" and _enclosing_call(stmt, at) in typed_by_arguments()
    m = _LET.match(stmt)
    if m is None:
        return False
    rhs_at = len(stmt) - len(m.group("rhs")) - 1  # where the value starts
    op_before = any(before.endswith(f" {op} ") for op in _OPERATORS)
    if d.kind == "args":
        if _call_head(d.rhs) is None:
            return False  # an operator expression only as a call argument (no parentheses to add)
        start = at == rhs_at or op_before
        end = after == ";" or any(after.startswith(f" {op} ") for op in _OPERATORS)
        return start and end
    # a call typed by its reader: the whole value of a `let` of its type, or the right operand of an operator of one
    if m.group("ty") != d.ty:
        return False
    if at == rhs_at and after == ";":
        return True
    # rustc infers an operand from the other one only between tiles (a scalar `i64 * _` has several impls)
    return op_before and after == ";" and _BINARY.match(m.group("rhs")) is not None and d.ty.startswith("Tile<")


def _fits_width(indent: str, stmt: str) -> bool:
    """Whether rustfmt keeps `stmt` within the width: on one line, or a `let` with its value on the next line
    (`let name: T =` and the value indented once more), never a call broken over several lines."""
    room = WIDTH - len(indent) - BODY_INDENT
    if len(stmt) <= room:
        return True
    m = _LET.match(stmt)
    return m is not None and len(m.group("rhs")) + 1 <= room - 4


_BINDS = re.compile(r"^(?:let (?:mut )?\(?([A-Za-z_][A-Za-z0-9_, ]*)\)?\s*[:=]|([A-Za-z_][A-Za-z0-9_]*) (?:[-+*/%&|^]|<<|>>)?= )")


def _bound(stmt: str) -> set[str]:
    """The names a statement binds (`let`, a tuple `let`) or assigns (`x = ...`, `x += ...`)."""
    m = _BINDS.match(stmt)
    if not m:
        return set()
    return set(_IDENT.findall(m.group(1) or m.group(2)))


def reuse_equal_values(lines: list[str], temps: set[str]) -> list[str]:
    """A temporary computed again, the same expression at the same type in the same block with nothing it reads
    bound again in between (a mask the lowering writes once for a load and once for its `other`), is the first
    one: its `let` is dropped and its readers read the first. Only pure values (never a load, a token or anything
    in `unsafe`), and only where the first is a name declared once in the entry and never assigned (so it means
    the same value wherever the dropped one was read). Merging equal pure values is what the Tile IR normal form
    does (N7): a cuTile Python port's IR compares equal before and after."""
    declared: dict[str, int] = {}
    assigned: set[str] = set()
    for line in lines:
        stmt = line.strip()
        m = _LET.match(stmt)
        if m:
            declared[m.group("name")] = declared.get(m.group("name"), 0) + 1
        elif stmt.startswith("let "):
            for n in _bound(stmt):
                declared[n] = declared.get(n, 0) + 2  # a tuple's names: never reused
        else:
            assigned |= _bound(stmt)
    out: list[str] = []
    avail: dict[tuple[str, str], str] = {}  # (type, value) -> the name holding it
    # name -> the available values that read it or are held by it (a binding of the name drops them); a key's
    # reads follow from its value, so an entry left from a dropped value is checked against the holder only
    readers: dict[str, list[tuple[str, str]]] = {}
    alias: dict[str, str] = {}
    for line in lines:
        if alias and not alias.keys().isdisjoint(_IDENT.findall(line)):
            line = _IDENT.sub(lambda w: alias.get(w.group(0), w.group(0)), line)
        stmt = line.strip()
        if stmt.endswith("{") or stmt.startswith("}") or not stmt.endswith(";") and not stmt.startswith("//"):
            avail.clear()  # a block starts or ends: its values are not the enclosing block's
            readers.clear()
            out.append(line)
            continue
        m = _LET.match(stmt)
        # a pure value held by a `let` (not `mut`, not in `unsafe`, nothing with an effect)
        name, ty, rhs = m.group("name", "ty", "rhs") if m else (None, None, None)
        pure = m is not None and "unsafe" not in stmt and not _EFFECT.search(rhs) and not stmt.startswith("let mut ")
        if pure and name in temps and (ty, rhs) in avail:
            alias[name] = avail[(ty, rhs)]
            continue
        for n in _bound(stmt):
            for key in readers.pop(n, ()):
                if key in avail and (avail[key] == n or n in _IDENT.findall(key[1])):
                    del avail[key]
        if pure and declared.get(name) == 1 and name not in assigned:
            reads = set(_IDENT.findall(rhs))
            if name not in reads and (ty, rhs) not in avail:
                avail[(ty, rhs)] = name
                for n in reads | {name}:
                    readers.setdefault(n, []).append((ty, rhs))
        out.append(line)
    return out


def fold_temporaries(lines: list[str], temps: set[str]) -> list[str]:
    """`lines` with the temporaries in `temps` folded where the module's rules allow it. A temporary waits
    (`pending`) until a statement reads it; a `let` of another temporary may come in between (it rebinds nothing),
    any other statement writes out what waits first."""
    counts: dict[str, int] = {}
    for line in lines:
        for ident in _IDENT.findall(line):
            if ident in temps:
                counts[ident] = counts.get(ident, 0) + 1
    out: list[str] = []
    pending: list[_Def] = []

    def write(defs: list[_Def]) -> None:
        out.extend(d.line for d in defs)
        for d in defs:
            pending.remove(d)

    for line in lines:
        stmt = line.strip()
        indent = line[:len(line) - len(line.lstrip())]
        if not stmt.endswith(";") or stmt.startswith("//") or "unsafe" in stmt or stmt.endswith("{"):
            write(list(pending))
            out.append(line)
            continue
        # the waiting temporaries this statement reads, last defined first (each check on the text so far)
        for d in reversed(list(pending)):
            at = _occurrence(stmt, d.name)
            if at is None or not _fits(d, stmt, at):
                continue
            folded = stmt[:at] + d.rhs + stmt[at + len(d.name):]
            if not _fits_width(indent, folded):
                continue
            stmt = folded
            pending.remove(d)
        line = indent + stmt
        m = _LET.match(line)
        if not (m and m.group("name") in temps):
            write(list(pending))  # a source variable's `let`, an assignment, a store: nothing moves past it
            out.append(line)
            continue
        write([d for d in pending if _occurrence(stmt, d.name) is not None])  # read here, not folded
        kind = _kind(m.group("rhs"))
        if counts.get(m.group("name")) == 2 and kind:
            pending.append(_Def(line, m.group("name"), m.group("ty"), m.group("rhs"), kind))
        else:
            out.append(line)
    write(list(pending))
    return out
