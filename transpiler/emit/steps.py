"""Named steps: repeated lowerings written once per module as a Rust function (rules/rust_steps.rs), so that an
entry reads `let head: i32 = py_mod_i32(bh, num_q_heads);` instead of eleven lines. cuTile Rust inlines them."""

from __future__ import annotations

import functools
import re

from ..rules import RULES_DIR


@functools.lru_cache(maxsize=None)
def step_sources() -> dict[str, str]:
    """Each step's Rust source (its doc comment and function), by name."""
    text = (RULES_DIR / "rust_steps.rs").read_text()
    parts = re.split(r"^// step: (\w+)\n", text, flags=re.M)
    return {name: body.strip("\n") for name, body in zip(parts[1::2], parts[2::2])}


def step_names() -> frozenset[str]:
    """Names a generated module may define: reserved, so no value of a kernel shadows one."""
    return frozenset(step_sources())


def module_steps(views) -> list[str]:
    """The sources of the steps the module's entries call, in name order (a view without the key: none)."""
    used = sorted({s for v in views for s in v.get("steps", ())})
    return [step_sources()[s] for s in used]
