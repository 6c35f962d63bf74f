"""Names in the generated crate and package: module (op) names, entry names, C symbols.

Pure functions of the modules' source paths (relative to OUT) and kernel names, so the result never
depends on how SRC was spelled or on the order files were found. Every candidate is checked again until
it is unique and not reserved.
"""

from __future__ import annotations

import keyword
import re

from ..emit.lower import RUST_KEYWORDS

# Names the crate (`src/lib.rs`, `src/abi.rs`) and the package (`cutile_ports/__init__.py`) use themselves,
# plus Rust and Python keywords and the standard crates: a source module may not take them.
RESERVED_OPS = frozenset({
    *RUST_KEYWORDS, *keyword.kwlist, *getattr(keyword, "softkwlist", []),
    "abi", "lib", "main", "cutile", "std", "core", "alloc", "proc_macro", "test",
    "__init__", "__main__", "_runtime", "_os", "os",
    "argumenterror", "argumenttypeerror", "cutilerserror", "libraryerror", "abi_layout", "call", "get_backend",
    "install", "launch", "load_library", "plan", "route", "set_backend", "uninstall",
})
# C symbols `abi.rs` defines
RESERVED_SYMBOLS = frozenset({"cutile_last_error", "cutile_crate_digest", "cutile_abi_layout", "cutile_dtype_name"})


def _ident(text: str) -> str:
    s = re.sub(r"[^a-z0-9_]", "_", text.lower())
    return s if s and not s[0].isdigit() else f"m_{s}"


def op_names(rels: list[str], fixed: dict[str, str] | None = None) -> dict[str, str]:
    """`rel path -> op`: the file's stem; on a clash the parent folders are prefixed one by one, then a
    number. `fixed` (rel -> op) are names that must stay (modules carried over verbatim)."""
    fixed = dict(fixed or {})
    taken = set(fixed.values())
    out = dict(fixed)
    for rel in sorted(r for r in rels if r not in fixed):
        parts = [p for p in rel.split("/")[:-1] if p not in ("", ".", "..")]
        stem = rel.split("/")[-1]
        stem = stem[:-3] if stem.endswith(".py") else stem
        candidates = [_ident(stem)]
        for parent in reversed(parts):
            candidates.append(f"{_ident(parent)}_{candidates[-1]}")
        name = next((c for c in candidates if c not in taken and c not in RESERVED_OPS), None)
        n = 2
        while name is None:
            c = f"{candidates[0]}_{n}"
            name = c if c not in taken and c not in RESERVED_OPS else None
            n += 1
        taken.add(name)
        out[rel] = name
    return out


def _reserved_launchers() -> frozenset[str]:
    from ..rules import RULES_DIR
    lines = (RULES_DIR / "cutile_launcher_names.txt").read_text().splitlines()
    return frozenset(l.strip() for l in lines if l.strip() and not l.startswith("#"))


RESERVED_LAUNCHERS = _reserved_launchers()


def launcher_name(entry: str) -> str:
    """The launcher struct cuTile Rust's module macro derives from an entry name (UpperCamel case)."""
    words = re.split(r"_+|(?<=[a-z0-9])(?=[A-Z])", entry)
    return "".join(w[:1].upper() + w[1:].lower() for w in words if w)


def entry_name(base: str, op: str, generics: list[str], taken: set[str], launchers: set[str]) -> str:
    """A crate-unique entry name whose launcher name clashes with no import, generic or other launcher."""
    blocked = RESERVED_LAUNCHERS | set(generics) | launchers
    name = unique([base, f"{base}_{op}", f"{base}_kernel", f"{base}_{op}_kernel"], taken,
                  ok=lambda c: launcher_name(c) not in blocked)
    launchers.add(launcher_name(name))
    return name


def unique(candidates: list[str], taken: set[str], ok=lambda c: True) -> str:
    """The first candidate not taken (and `ok`); else the last one with `_2`, `_3`, ... appended. It is
    added to `taken`."""
    tries = iter(candidates)
    n = 1
    while True:
        c = next(tries, None)
        if c is None:
            n += 1
            c = f"{candidates[-1]}_{n}"
        if c not in taken and ok(c):
            taken.add(c)
            return c
