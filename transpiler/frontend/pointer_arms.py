"""Triton pointers whose tensor is chosen at run time (`in_ptr = tl.where(is_q, q_ptr, k_ptr)`, or an `if` whose arms
bind one name to pointers into different kernel arguments).

Such a pointer is a set of arms, each a condition and a base, with the offsets all arms share (`ArmBases` is the
base of a `_Ptr`, so pointer arithmetic, `[:, None]` and pointer variables carry it as they carry one base). On each
lane exactly one arm's condition holds. An access is exact as one masked access per arm with the arm's condition
and-ed into the mask: a masked-off lane touches no memory, so each tensor is read or written only where its arm is
chosen; a load's (or atomic's) values are the chosen arm's, selected lane by lane. Where the arms had their own
offsets, the shared offsets are selected per lane the same way (only the chosen arm's lanes are unmasked).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.ir import Expr, Lit, Name, Op


@dataclass(frozen=True)
class ArmBases:
    """The bases of a pointer chosen at run time: `((condition, base), ...)`, one condition true per lane (a bool
    scalar or tile, a model Name once the pointer is assigned); each base a parameter's name, `_Cast` or `_Addr`."""
    arms: tuple

    def __str__(self) -> str:  # a model-name stem (`p_q_ptr_or_k_ptr`)
        return "_or_".join(str(b) for _, b in self.arms)


def arms_of(base) -> tuple:
    """A base as arms: one arm, always taken, for a single base."""
    return base.arms if isinstance(base, ArmBases) else ((Lit(True, None), base),)


def both(conv, a: Expr, b: Expr, pos) -> Expr:
    """`a & b` of two bool conditions; `True` is the identity (a single base's arm)."""
    if _is_true(a):
        return b
    if _is_true(b):
        return a
    return _op(conv, "operator:&", (a, b), pos)


def negated(conv, c: Expr, pos) -> Expr:
    return _op(conv, "operator:^", (c, Lit(True, pos)), pos)  # the frontend's `not` of a runtime bool


def _op(conv, source: str, args: tuple, pos) -> Op:
    """The rule's op, its rule recorded only where an access reads it (rules_of: a choice never read leaves the
    kernel's rules as they were)."""
    rule = conv.rules.lookup(source)
    return Op(rule.op, args, pos, (), rule.id)


def names_in(e) -> set:
    """The names a condition reads."""
    if isinstance(e, Name):
        return {e.id}
    return {n for a in e.args for n in names_in(a)} if isinstance(e, Op) else set()


def rules_of(e) -> set:
    """The rule ids of the ops in a condition."""
    if not isinstance(e, Op):
        return set()
    return {e.rule} | {r for a in e.args for r in rules_of(a)}


def _is_true(e) -> bool:
    return isinstance(e, Lit) and e.value is True


def chosen_bases(conv, cond: Expr, a, b, pos):
    """The bases of `a if cond else b` (a and b bases, single or ArmBases): a's arms under `cond`, b's under its
    negation; one base where both are the same single base."""
    if a == b and not isinstance(a, ArmBases):
        return a
    not_cond = negated(conv, cond, pos)
    arms = tuple((both(conv, cond, c, pos), x) for c, x in arms_of(a)) + \
        tuple((both(conv, not_cond, c, pos), x) for c, x in arms_of(b))
    check_arm_bases(arms, pos)
    return ArmBases(arms)


def check_arm_bases(arms: tuple, pos) -> None:
    """Arms whose loaded values the port would convert differently are refused: every base a parameter (their element
    types are one generic where their values meet, as Triton requires one pointer type), or every base a cast or
    loaded pointer of the same element type."""
    from ..diagnostics import fail
    named = [isinstance(b, str) for _, b in arms]
    elems = {getattr(b, "elem", None) for _, b in arms}
    if all(named) or (not any(named) and len(elems) == 1):
        return
    raise fail("CT100", "a pointer chosen at run time between a kernel argument and a pointer cast to an element type "
               "(or between casts to different element types): its loaded values would need different "
               "conversions; cast each argument to the same `tl.pointer_type(T)` first", pos)


def selected_offsets(conv, cond: Expr, a, b, pos, tile: bool):
    """The offsets of a pointer chosen between `a` and `b` (their offsets, None: the base itself): None where both
    are the base; else selected per lane (`tl.where`: a tile condition broadcasts them, as Triton's pointer tile)."""
    if a is None and b is None:
        return None
    a = a if a is not None else Lit(0, pos)
    b = b if b is not None else Lit(0, pos)
    if tile:
        return conv._op("triton.language.where", (cond, a, b), pos)
    return Op("ifexp", (cond, a, b), pos)


def stable(e: Expr, arm_locals: set) -> bool:
    """A condition the pointer may keep as it is: literals and locals holding an arm's condition (assigned once
    where the pointer was chosen), combined."""
    if isinstance(e, Op):
        return all(stable(a, arm_locals) for a in e.args)
    return isinstance(e, Lit) or (isinstance(e, Name) and e.id in arm_locals)
