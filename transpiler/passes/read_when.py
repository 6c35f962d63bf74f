"""Arrays read only under a constant condition: unused where the launch's constants make it false.

TileGym's attention variant reads `Random_mask` only `if USE_RANDOM_MASK:` and passes an empty int8 vector
when there is none. cuTile Python compiles that specialization without a read of the array, so any argument
is a valid call there. A port's entry is compiled for the constants too (the `if` on a const generic folds),
so the same holds for it: where the condition is false the host layer may pass the entry a placeholder and
check nothing of the argument (Param.unused's rules, per launch).

`read_when` is the condition as Python text over the kernel's constants (the predicate texts' form, which the
C symbol renders in Rust and the wrapper evaluates): the disjunction, over entries, of the entry's predicates
and the constant `if` conditions enclosing each mention of the array. An array mentioned anywhere else (an
unconditional read, a shape, a derived constant), written, or whose rank or dtype differs per entry keeps
today's checks (None). An entry that reads it unconditionally contributes its predicates (TileGym's `Bias`:
read by the `BIAS_TYPE == 3` entries, and under `BIAS_TYPE == 1` or `== 2` by the others; unread at 0).
"""

from __future__ import annotations

from ..model.ir import Assign, Eval, For, If, Kernel, Name, While
from ..model.walk import sub_exprs
from .predicates import predicate_text

_UNCONDITIONAL = "unconditional"


def _mentions(e, name: str) -> bool:
    return any(isinstance(x, Name) and x.id == name for x in sub_exprs(e))


def _guards(stmts, name: str, conds: tuple[str, ...]) -> list[tuple[str, ...]] | str:
    """The constant conditions enclosing each mention of `name` in `stmts` (a tuple per mention), or
    _UNCONDITIONAL where a mention is under none, or under a condition with no predicate text."""
    out: list[tuple[str, ...]] = []
    for s in stmts:
        own = [s.value] if isinstance(s, (Assign, Eval)) else [s.start, s.stop, s.step] if isinstance(s, For) \
            else [s.cond] if isinstance(s, (If, While)) else []
        if any(_mentions(e, name) for e in own):
            if not conds:
                return _UNCONDITIONAL
            out.append(conds)
        if isinstance(s, If) and s.const and not _mentions(s.cond, name):
            try:
                text = predicate_text(s.cond)
            except Exception:  # noqa: BLE001 - a condition with no text form: the arms count as unconditional
                text = None
            arms = ((s.body, (text,)), (s.orelse, (f"not ({text})",))) if text else ((s.body, ()), (s.orelse, ()))
            for body, more in arms:
                inner = _guards(body, name, conds + more if text else ())
                if inner == _UNCONDITIONAL:
                    return _UNCONDITIONAL
                out += inner
        elif isinstance(s, (If, For, While)):
            for body in (s.body, s.orelse) if isinstance(s, If) else (s.body,):
                inner = _guards(body, name, conds)
                if inner == _UNCONDITIONAL:
                    return _UNCONDITIONAL
                out += inner
    return out


def _conj(texts) -> str:
    texts = list(dict.fromkeys(texts))
    return " and ".join(f"({t})" for t in texts) if len(texts) > 1 else texts[0]


def read_when(variants: list[Kernel], name: str) -> str | None:
    """The condition over the constants under which some entry of `variants` (a port's) reads array `name`,
    or None where it is read regardless of them (or is an argument it cannot leave unchecked)."""
    terms, per_entry = [], []
    for v in variants:
        p = next((q for q in v.params if q.name == name), None)
        if p is None or p.kind != "array" or p.unused or p.flat or p.pointer or p.view or p.descriptor \
                or any(o[0] == name for o in v.outputs) or any(name in expr for _, expr in v.derived):
            return None
        guards = _guards(v.body, name, ())
        if guards == _UNCONDITIONAL:  # read wherever this entry runs: where its predicates hold
            if not v.variant.predicates:
                return None
            guards = [()]
        terms += [_conj(list(v.variant.predicates) + list(g)) for g in guards]
        per_entry.append(sorted(set(guards)))
    if not terms:  # read by no entry (its rank and dtype still come from the source): leave it as it is
        return None
    if all(() in g for g in per_entry):  # read wherever any entry runs
        return None
    if all(g and () not in g and g == per_entry[0] for g in per_entry):  # every entry reads it under the same conditions
        terms = [_conj(g) for g in per_entry[0]]
    terms = list(dict.fromkeys(terms))
    return terms[0] if len(terms) == 1 else " or ".join(f"({t})" for t in terms)
