"""The platform every port runs on (rules/platform.toml), for module-level values a library computes from it at
import time: a CUDA build of PyTorch and Triton's CUDA backend on one of the NVIDIA GPUs cuTile compiles for.

A fact is read through an expression's *key*: its dotted name after the module's imports, a call with no
argument or a device index written `NAME()`, an attribute of a call's result `NAME().attr`
(`driver.active.get_current_target().arch` after `from triton.runtime import driver`). A fact that depends on
the GPU has one value per GPU (a *world*); the caller evaluates its expression in every world and keeps the
answer only where all agree."""

from __future__ import annotations

import functools
from collections.abc import Callable

import libcst as cst

NO_FACT = object()  # the expression is not a platform fact

_GPU_VALUES: dict[str, Callable[[int, int], object]] = {
    "capability": lambda major, minor: (major, minor), "major": lambda major, minor: major,
    "minor": lambda major, minor: minor, "arch": lambda major, minor: major * 10 + minor,
}


@functools.lru_cache(maxsize=1)
def _data() -> tuple[dict[str, object], tuple[dict[str, object], ...]]:
    import tomllib
    from ..rules import RULES_DIR
    data = tomllib.loads((RULES_DIR / "platform.toml").read_text())
    facts: dict[str, object] = {}
    for f in data["fact"]:
        if "value" in f:
            facts[f["expr"]] = {"None": None, "True": True, "False": False}[f["value"]]
        else:
            facts[f["expr"]] = f["text"] if "text" in f else f["int"]
    worlds = tuple({p["expr"]: _GPU_VALUES[p["value"]](major, minor) for p in data.get("per_gpu", [])}
                   for major, minor in data["gpus"]["capabilities"])
    return facts, worlds


def platform_facts() -> dict[str, object]:
    """The facts that hold on every GPU: expression key -> value."""
    return _data()[0]


def gpu_worlds() -> tuple[dict[str, object], ...]:
    """One mapping per GPU a port can run on: expression key -> its value there."""
    return _data()[1]


def fact_key(node: cst.BaseExpression, dotted: Callable[[cst.BaseExpression], str | None]) -> str | None:
    """The key a platform fact is listed under, or None for an expression that cannot be one."""
    if isinstance(node, cst.Name):
        return dotted(node)
    if isinstance(node, cst.Attribute):
        if isinstance(node.value, cst.Call):
            base = fact_key(node.value, dotted)
            return f"{base}.{node.attr.value}" if base else None
        return dotted(node)
    if isinstance(node, cst.Call):
        # no argument, or the device's index (`get_device_capability(0)`, `device=0`): the GPU the port runs on
        if len(node.args) > 1 or any(a.star or not isinstance(a.value, cst.Integer) for a in node.args):
            return None
        base = fact_key(node.func, dotted) if isinstance(node.func, (cst.Name, cst.Attribute)) else None
        return f"{base}()" if base else None
    return None


def platform_value(node: cst.BaseExpression, dotted: Callable[[cst.BaseExpression], str | None],
                   world: dict[str, object] | None, seen: set[str] | None = None) -> object:
    """The value of a platform fact on every GPU, or in `world` for one that depends on the GPU (its key is
    added to `seen`); NO_FACT where `node` is no fact (or depends on the GPU and no world is given)."""
    key = fact_key(node, dotted)
    if key is None:
        return NO_FACT
    facts = platform_facts()
    if key in facts:
        return facts[key]
    if world is not None and key in world:
        if seen is not None:
            seen.add(key)
        return world[key]
    return NO_FACT
