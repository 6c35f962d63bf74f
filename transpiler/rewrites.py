"""What a diagnostic suggests writing instead: the table in rules/rewrites.toml (each suggestion proved by a
test), and for a call with no rule, the closest supported name ("did you mean")."""

from __future__ import annotations

import difflib
import functools
import re

from .rules import RULES_DIR, load, tomllib

_NO_RULE = re.compile(r"^call to `([\w.]+)` has no rule")


@functools.lru_cache(maxsize=None)
def table() -> tuple[dict, ...]:
    with open(RULES_DIR / "rewrites.toml", "rb") as f:
        rows = tomllib.load(f)["rewrite"]
    return tuple({**r, "rx": re.compile(r["match"])} for r in rows)


@functools.lru_cache(maxsize=None)
def _known_calls() -> tuple[str, ...]:
    names = set()
    for language in ("cutile_python", "triton"):
        names |= {s for s in load(language).by_source if not s.startswith(("method:", "operator:"))}
    return tuple(sorted(names))


def suggestion(code: str, message: str) -> str | None:
    """The rewrite to suggest under a diagnostic, if any."""
    for r in table():
        if r["code"] == code and r["rx"].search(message):
            return r["help"]
    m = _NO_RULE.match(message) if code == "CT101" else None
    if m:
        name = m.group(1)
        prefix = name.rpartition(".")[0]
        same_module = [n for n in _known_calls() if n.rpartition(".")[0] == prefix]
        close = difflib.get_close_matches(name, same_module, n=1, cutoff=0.8)
        if close:
            return f"did you mean `{close[0]}`?"
    return None
