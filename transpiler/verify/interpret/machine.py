"""The evaluator: an entry run block by block over the grid (x fastest, then y, then z: a defined order for
atomics), regions op by op, `for`/`loop`/`if` with carried values and `continue`/`break`/`return`.

Every op is looked up in the registry (`syntax.OPS`, filled by the ops_* modules); an op that is not there is
an `InterpretError` naming it, never skipped. Memory tokens are not modelled as values (the interpreter runs
every access in program order, which every token order allows).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..normalize import Entry, Op, parse
from . import ops_arith, ops_memory, ops_shape  # noqa: F401 - they register their ops
from .syntax import OPS, refs, result_types, split_types, unknown
from .values import InterpretError, Memory, np_dtype

TERMINATORS = ("yield", "continue", "break", "return")


@dataclass
class Exit:
    kind: str  # yield | continue | break | return
    values: list


class Machine:
    def __init__(self, memory: Memory, grid: tuple[int, int, int], max_steps: int = 5_000_000):
        self.memory = memory
        self.grid = tuple(grid) + (1,) * (3 - len(grid))
        self.block = (0, 0, 0)
        self.steps = 0
        self.max_steps = max_steps  # a loop that never ends is an error, not a hang

    def run(self, entry: Entry, args: list) -> None:
        if len(args) != len(entry.args):
            raise InterpretError(f"the entry takes {len(entry.args)} arguments, {len(args)} given")
        gx, gy, gz = self.grid
        for z in range(gz):
            for y in range(gy):
                for x in range(gx):
                    self.block = (x, y, z)
                    env = {name: value for (name, _), value in zip(entry.args, args)}
                    self.run_region(entry.body.ops, env)

    def run_region(self, ops: list[Op], env: dict) -> Exit | None:
        for op in ops:
            self.steps += 1
            if self.steps > self.max_steps:
                raise InterpretError(f"more than {self.max_steps} ops executed (a loop that does not end?)")
            name = op.name
            if name in TERMINATORS:
                return Exit(name, [env[r] for r in refs(split_types(op.text)[0])])
            control = CONTROL.get(name)
            if control is not None:
                values, exit_ = control(self, op, env)
                if exit_ is not None:
                    return exit_
            else:
                fn = OPS.get(name)
                if fn is None:
                    raise unknown(op)
                try:
                    values = fn(self, op, env)
                except InterpretError:
                    raise
                except (ValueError, TypeError, IndexError, KeyError, OverflowError) as e:
                    raise InterpretError(f"the interpreter failed on op `{name}` ({type(e).__name__}: {e}): "
                                         f"`{name} {op.text}`") from e
            if len(values) != len(op.results):
                raise InterpretError(f"op `{name}` gave {len(values)} values for {len(op.results)} results")
            for r, v in zip(op.results, values):
                env[r] = v
        return None

    def call_region(self, region, env: dict, values: list) -> Exit:
        """A region run with its block arguments bound; it must end in a terminator."""
        inner = dict(env)
        for a, v in zip(region.args, values):
            inner[a] = v
        exit_ = self.run_region(region.ops, inner)
        if exit_ is None:
            raise InterpretError("a region ended without a terminator")
        return exit_


# ------------------------------------------------------------------------------------------- control flow

_FOR = re.compile(r"(?:(unsigned|signed)\s+)?(%\S+) in \((%\S+) to (%\S+), step (%\S+)\)")
_ITER = re.compile(r"iter_values\((.*?)\)\s*(?:->|$)")


def _iter_inits(op: Op, env: dict) -> list:
    m = re.search(r"iter_values\((.*)\)\s*->", op.text) or re.search(r"iter_values\((.*)\)", op.text)
    if not m:
        return []
    return [env[r] for r in re.findall(r"%[\w.\-]+ = (%[\w.\-]+(?:#\d+)?)", m.group(1))]


def _for(machine: Machine, op: Op, env: dict):
    m = _FOR.search(op.text)
    if not m:
        raise unknown(op, "has a form the interpreter does not read")
    unsigned = m.group(1) == "unsigned"
    lb, ub, step = (env[m.group(i)] for i in (3, 4, 5))
    iv_type = np.asarray(lb).dtype
    lo, hi, st = (int(np.asarray(v).astype(np.uint64 if unsigned else np.int64)) for v in (lb, ub, step))
    if st <= 0:
        raise InterpretError(f"`for` with step {st}")
    carried = _iter_inits(op, env)
    body = op.regions[0]
    i = lo
    while i < hi:
        exit_ = machine.call_region(body, env, [np.array(i, iv_type)] + carried)
        if exit_.kind == "continue":
            carried = exit_.values
        elif exit_.kind == "return":
            return [], exit_
        else:
            raise InterpretError(f"`{exit_.kind}` in the body of a `for`")
        i += st
    return carried, None


def _loop(machine: Machine, op: Op, env: dict):
    carried = _iter_inits(op, env)
    body = op.regions[0]
    while True:
        exit_ = machine.call_region(body, env, carried)
        if exit_.kind == "continue":
            carried = exit_.values
        elif exit_.kind == "break":
            return exit_.values, None
        elif exit_.kind == "return":
            return [], exit_
        else:
            raise InterpretError(f"`{exit_.kind}` in the body of a `loop`")


def _if(machine: Machine, op: Op, env: dict):
    cond = env[refs(op.text)[0]]
    arm = op.regions[0] if bool(np.asarray(cond)) else (op.regions[1] if len(op.regions) > 1 else None)
    if arm is None:
        return [None] * len(op.results), None  # no else-arm: no results but tokens
    exit_ = machine.run_region(arm.ops, dict(env))
    if exit_ is None:
        if op.results:
            raise InterpretError("an `if` arm with results ended without `yield`")
        return [], None
    if exit_.kind == "yield":
        return exit_.values, None
    return [], exit_  # continue / break / return: to the enclosing loop or the entry


CONTROL = {"for": _for, "loop": _loop, "if": _if}


def parse_entry(text: str, index: int = 0) -> Entry:
    return parse(text)[index]


__all__ = ["Machine", "parse_entry", "InterpretError", "Memory", "np_dtype", "result_types"]
