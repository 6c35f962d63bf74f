"""Reading one op's text (as `normalize.parse` leaves it: everything after the op name) into operands, words
and types, and the registry of op implementations (one module per op family registers its ops here)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable

from ..normalize import Op, split_top
from .values import InterpretError, TileType, parse_type

REF = re.compile(r"%[A-Za-z0-9_.\-]+(?:#\d+)?")

OPS: dict[str, Callable] = {}


def op(*names: str):
    """Register an implementation `fn(machine, op, env) -> list of result values` for these op names."""
    def deco(fn):
        for n in names:
            assert n not in OPS, n
            OPS[n] = fn
        return fn
    return deco


def _top_level(text: str, token: str) -> int:
    """The index of the first `token` outside brackets, or -1."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        elif depth == 0 and text.startswith(token, i):
            return i
    return -1


@lru_cache(maxsize=None)
def split_types(text: str) -> tuple[str, str]:
    """(the part before the top-level ` : `, the types after it)."""
    i = _top_level(text, ":")
    return (text.strip(), "") if i < 0 else (text[:i].strip(), text[i + 1:].strip())


def result_types(op: Op) -> list[TileType]:
    """The result types: after `->` (parenthesized or not), else the op's last type (`addf %a, %b : tile<..>`)."""
    return _result_types(op.name, op.text)


@lru_cache(maxsize=None)
def _result_types(name: str, text: str) -> list[TileType]:
    _, types = split_types(text)
    i = _top_level(types, "->")
    if i >= 0:
        rest = types[i + 2:].strip()
        if rest.startswith("(") and rest.endswith(")"):
            rest = rest[1:-1]
        return [parse_type(t) for t in split_top(rest)]
    parts = split_top(types)
    if not parts:
        raise InterpretError(f"`{name}`: no type in `{text}`")
    return [parse_type(parts[-1])]


def operand_types(op: Op) -> list[TileType]:
    return _operand_types(op.text)


@lru_cache(maxsize=None)
def _operand_types(text: str) -> list[TileType]:
    _, types = split_types(text)
    head = types.split("->")[0]
    return [parse_type(t) for t in split_top(head)]


@lru_cache(maxsize=None)
def refs(text: str) -> list[str]:
    return REF.findall(text)


def head(op: Op) -> str:
    return split_types(op.text)[0]


def words(op: Op) -> list[str]:
    """The bare words of the operand part (attributes such as `signed`, `less_than`, `ordered`)."""
    return _words(op.text)


@lru_cache(maxsize=None)
def _words(text: str) -> list[str]:
    h = re.sub(r"<[^<>]*(?:<[^<>]*>[^<>]*)*>", "", split_types(text)[0])  # drop <...> groups
    return re.findall(r"(?<![%\w#])([a-z_][a-z_0-9]*)\b", h)


def unknown(op: Op, what: str = "") -> InterpretError:
    return InterpretError(f"op `{op.name}` {what or 'is not known to the interpreter'}: `{op.name} {op.text}`")
