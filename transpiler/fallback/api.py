"""The excerpt of the cutile API a fallback prompt quotes: the real signatures of the ops a unit involves.

The data is rules/cutile_core_api.txt, generated from the cutile 0.5.0 source by
tools/extract_cutile_api.py, so the model sees what the crate declares instead of guessing it.
"""

from __future__ import annotations

import functools
from typing import Iterable

# Python / Triton API names -> the cutile::core functions they lower to (as in rules/cutile_python.toml and
# rules/triton.toml). A word that is itself a cutile name needs no entry: exact names are always matched.
ALIASES: dict[str, tuple[str, ...]] = {
    "abs": ("absf", "absi"),
    "arange": ("iota",),
    "astype": ("convert_tile",),
    "atomic_max": ("atomic_rmw_tko",),
    "atomic_min": ("atomic_rmw_tko",),
    "atomic_xchg": ("atomic_rmw_tko",),
    "bid": ("get_tile_block_id",),
    "broadcast_to": ("broadcast",),
    "cast": ("convert_tile", "exti", "trunci"),
    "cdiv": ("ceil_div",),
    "clamp": ("maxf", "minf"),
    "cumsum": ("scan_sum",),
    "dot": ("mmaf", "mmai"),
    "expand_dims": ("reshape",),
    "full": ("constant",),
    "gather": ("load_ptr_tko",),
    "isnan": ("cmpf",),
    "item": ("tile_to_scalar",),
    "join": ("cat",),
    "load": ("load_view_tko", "load_ptr_tko"),
    "matmul": ("mmaf", "mmai"),
    "max": ("reduce_max",),
    "maximum": ("maxf", "maxi", "max_tile"),
    "min": ("reduce_min",),
    "minimum": ("minf", "mini", "min_tile"),
    "mma": ("mmaf", "mmai"),
    "negative": ("negf", "negi"),
    "num_blocks": ("get_num_tile_blocks",),
    "ones": ("constant",),
    "prod": ("reduce_prod",),
    "scatter": ("store_ptr_tko",),
    "sigmoid": ("exp",),
    "split": ("extract",),
    "sqrt_rn": ("sqrt",),
    "store": ("store_view_tko_mut", "store_ptr_tko"),
    "sum": ("reduce_sum",),
    "to": ("convert_tile", "exti", "trunci"),
    "trans": ("permute",),
    "transpose": ("permute",),
    "truediv": ("true_div", "divf"),
    "view": ("reshape",),
    "where": ("select",),
    "zeros": ("constant",),
}

# what any fragment may need to glue its op in: constants, conversions, shapes, scalar <-> tile, selection
BASE = ("constant", "convert_tile", "broadcast", "broadcast_scalar", "reshape", "scalar_to_tile",
        "tile_to_scalar", "select")


@functools.lru_cache(maxsize=None)
def api_blocks() -> dict[str, str]:
    """name -> its block of rules/cutile_core_api.txt (from `## NAME` to the line before the next)."""
    from ..rules import RULES_DIR
    blocks: dict[str, str] = {}
    name = None
    for line in (RULES_DIR / "cutile_core_api.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            name = line[3:].strip()
            blocks[name] = line + "\n"
        elif name is not None and line.strip():
            blocks[name] += line + "\n"
    return blocks


def api_excerpt(words: Iterable[str], limit: int = 6000) -> str:
    """The blocks of rules/cutile_core_api.txt for the cutile::core functions a unit involves: every
    function whose name equals a word, then those a word is a known alias of (ALIASES), then the base set
    (BASE), each block once, cut to `limit` characters at a block boundary. Names are sorted within each
    group, so the result does not depend on the order of `words` (a set iterates in hash order)."""
    blocks = api_blocks()
    ws = set(words)
    exact = sorted(w for w in ws if w in blocks)
    aliased = sorted({n for w in ws for n in ALIASES.get(w, ()) if n in blocks})
    names = list(dict.fromkeys([*exact, *aliased, *(n for n in BASE if n in blocks)]))
    out: list[str] = []
    size = 0
    for name in names:
        block = blocks[name]
        sep = 1 if out else 0  # a blank line between blocks
        if size + sep + len(block) > limit:
            break  # a prefix of whole blocks: the most specific ones come first
        out.append(block)
        size += sep + len(block)
    return "\n".join(out)
