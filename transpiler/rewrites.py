"""What a diagnostic suggests writing instead: the table in rules/rewrites.toml (each suggestion proved by a
test), and for a call to a cuda.tile name that does not exist, the closest supported one ("did you mean")."""

from __future__ import annotations

import difflib
import functools
import re

from .rules import RULES_DIR, cuda_tile_has, load, tomllib

_NO_RULE = re.compile(r"^call to `([\w.]+)` has no rule")


@functools.lru_cache(maxsize=None)
def table() -> tuple[dict, ...]:
    with open(RULES_DIR / "rewrites.toml", "rb") as f:
        rows = tomllib.load(f)["rewrite"]
    return tuple({**r, "rx": re.compile(r["match"])} for r in rows)


@functools.lru_cache(maxsize=None)
def _known_calls() -> tuple[str, ...]:
    """The cuda.tile calls the rules translate."""
    return tuple(sorted(s for s in load("cutile_python").by_source if s.startswith("cuda.tile.")))


def suggestion(code: str, message: str) -> str | None:
    """The rewrite to suggest under a diagnostic, if any."""
    for r in table():
        if r["code"] == code and r["rx"].search(message):
            return r["help"]
    m = _NO_RULE.match(message) if code == "CT101" else None
    # only a name cuda.tile does not have is a typo; Triton's names have no such list here (`tl.sort` is
    # real and unsupported, not a misspelt `tl.sqrt`), so they get no guess
    if m and m.group(1).startswith("cuda.tile.") and not cuda_tile_has(m.group(1)):
        # the names after `cuda.tile.` are compared: the shared prefix would make any two look alike
        # (`frobnicate` is not a typo of `bitcast`)
        leaves = {c.removeprefix("cuda.tile."): c for c in _known_calls() if c.startswith("cuda.tile.")}
        close = difflib.get_close_matches(m.group(1).removeprefix("cuda.tile."), sorted(leaves), n=1, cutoff=0.8)
        if close:
            return f"did you mean `{leaves[close[0]]}`?"
    return None
