"""Fallback family: the LLM fallback's placeholders (transpiler/fallback/units.py).

A unit nobody completed fails with the diagnostic the rules gave; a hole types the values it reads (the
context of the question); an accepted fragment has the type its answer declared (the Tile IR comparison
proves it).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ...fallback.units import FRAGMENT, HOLE, UNIT, original_diagnostic
from ...diagnostics import TranspileError
from ...model.ir import Op, TileTy
from .registry import handler

if TYPE_CHECKING:
    from ..infer import Infer


@handler(UNIT)
def unit(infer: Infer, e: Op) -> Op:
    d = original_diagnostic(e)
    raise TranspileError(d.code, d.message, d.pos)


@handler(HOLE)
def hole(infer: Infer, e: Op) -> Op:
    return replace(e, args=tuple(infer.expr(a) for a in e.args), ty=TileTy("bool"))


@handler(FRAGMENT)
def fragment(infer: Infer, e: Op) -> Op:
    return replace(e, args=tuple(infer.expr(a) for a in e.args), ty=e.attr("result"))
