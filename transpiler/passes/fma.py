"""FMA fusion exactly as cuTile Python's `rewrite_patterns` does it (cuTile Rust never fuses).

cuTile Python (1.7.0, _passes/rewrite_patterns.py), on SSA after folding constant branches: for each
float `add`/`sub` in program order, take its *left* operand if that is a float multiply, else its
right operand if that is one; the rewrite happens only if that multiply has no other use and was
not already fused. It gives `a*b + c` -> fma(a, b, c), `c + a*b` -> fma(a, b, c),
`a*b - c` -> fma(a, b, -c), `c - a*b` -> fma(-a, b, c). A left multiply with another use blocks
the rewrite even when the right one could be fused.

Here a multiply is either a nested operand (one use by construction) or a variable `x = a*b`,
whose uses are the reads of that definition. Constant `if`s are folded in Python but stay an
`if NAME == 1` here, so one case is handled specially: `x = a*b; if CONST: ... x = x + c` becomes
`if CONST: ... x = fma(a, b, c) else: x = a*b` (the multiply's only use is the add exactly when
CONST holds). Integer multiplies are never fused.

`ct.astype(x, ct.float32)` of an E-typed `x` is no operation in cuTile Python when E is f32, so an add of
`astype(a*b)` fuses there and not for f16. An entry restricted to one element type (`Variant.dtypes`) fuses
through such an identity conversion, converting the factors instead (no-ops too, so the Tile IR is
cuTile Python's); `element_split` finds the dtype for which an entry of its own is needed.
"""

from __future__ import annotations

from ..model.walk import all_stmts, stmt_exprs

from dataclasses import dataclass, field, replace

from ..model.ir import (FLOAT_DTYPES, Assign, is_generic, Eval, Expr, For, If, Kernel, Lit, Name, Op, Stmt, TileTy, TupleExpr,
                        While)


def _modes(e: Op) -> tuple:
    return (e.attr("rounding") or "NearestEven", bool(e.attr("ftz")))


# ops no compiler contracts: libdevice's mul_rn / add_rn / sub_rn (Triton: one PTX mul.rn / add.rn instruction each)
# and the float arithmetic of inline assembly (frontend/ptx.py OPAQUE)
UNCONTRACTED_RULES = frozenset({"TTR-LIBDEVICE-RN", "TTR-INLINE-ASM"})


def _is_fmul(e: Expr) -> bool:
    return isinstance(e, Op) and e.op == "mul" and e.ty is not None and e.rule not in UNCONTRACTED_RULES \
        and (e.ty.dtype in FLOAT_DTYPES or is_generic(e.ty.dtype))


def _identity_convert(e: Expr, element: str | None, generic: str = "E") -> bool:
    """`e` converts a `generic` value to `element`: no operation in an entry where that generic is `element`."""
    return (element is not None and isinstance(e, Op) and e.op == "convert" and e.ty is not None
            and e.ty.dtype == element and e.args[0].ty is not None and getattr(e.args[0].ty, "dtype", None) == generic)


def _converted(e: Expr, dtype: str) -> Op:
    return Op("convert", (e,), e.pos, ty=TileTy(dtype, e.ty.shape))


@dataclass(eq=False)
class _MulDef:
    """`name = a*b` and the Name nodes that read this definition; `bound`: the statements that keep its operands
    which touch memory where it was (a fused multiply moves to its add: its loads must not, see _bind_memory)."""
    name: str
    mul: Op
    uses: int = 0
    fused: bool = False
    reads: list = field(default_factory=list)
    bound: tuple = ()
    guarded: bool = False  # fused under a constant condition only (_Fuser.guard): the definition stays


# ops that read or write memory: cuTile Python keeps them where the source has them (program order of memory
# operations is part of the Tile IR), so fusion may move a multiply but never these
_MEMORY_OPS = frozenset({"load", "gather", "scatter", "store", "llm_hole"})


def _touches_memory(e) -> bool:
    if isinstance(e, TupleExpr):
        return any(_touches_memory(i) for i in e.items)
    if isinstance(e, Op):
        return e.op in _MEMORY_OPS or e.op.startswith(("atomic", "view_", "load")) or any(
            _touches_memory(a) for a in e.args if a is not None)
    return False


def _bind_memory(value: Expr, prefix: str, pos) -> tuple[Expr, tuple]:
    """`value` (a multiply, or a conversion of one) with each factor that touches memory read from a name bound
    before it: (the new value, the bindings). `x = ct.load(X, ...) * s` fused into a later `x + y` becomes
    `__t = ct.load(X, ...)` where it was and `fma(__t, s, y)` at the add, as in cuTile Python's SSA."""
    if isinstance(value, Op) and value.op == "convert":
        inner, bound = _bind_memory(value.args[0], prefix, pos)
        return replace(value, args=(inner,) + value.args[1:]), bound
    if not (isinstance(value, Op) and value.op == "mul"):
        return value, ()
    args, bound = [], []
    for a in value.args:
        if a is not None and _touches_memory(a):
            name = f"{prefix}_{len(bound)}"
            bound.append(Assign((name,), a, pos))
            a = Name(name, a.pos, a.ty)
        args.append(a)
    return (replace(value, args=tuple(args)), tuple(bound)) if bound else (value, ())


# ------------------------------------------------------------------------------------ reads

def _names(e) -> list:
    if isinstance(e, Name):
        return [e]
    if isinstance(e, TupleExpr):
        return [n for i in e.items for n in _names(i)]
    if isinstance(e, Op):
        return [n for a in e.args if a is not None for n in _names(a)]
    return []




def _children(s: Stmt) -> list:
    if isinstance(s, (For, While)):
        return list(s.body)
    if isinstance(s, If):
        return list(s.body) + list(s.orelse)
    return []


def _assigns(s: Stmt, name: str) -> bool:
    if isinstance(s, Assign):
        return name in s.targets
    if isinstance(s, For) and s.var == name:
        return True
    return any(_assigns(c, name) for c in _children(s))


def _collect_reads(stmts: list, name: str, loop: bool = False) -> tuple[list, bool]:
    """Name nodes reading `name` in these statements (nested ones included) until it is reassigned at
    this level; the flag says whether the definition may still be live at the end."""
    reads: list = []
    for s in stmts:
        for e in stmt_exprs(s):
            reads += [n for n in _names(e) if n.id == name]
        for c in _children(s):
            reads += [n for e in stmt_exprs(c) for n in _names(e) if n.id == name]
            sub, _ = _collect_reads(_children(c), name)
            reads += sub
        if isinstance(s, (For, While)) and _assigns(s, name):
            return reads + [None], True  # the next iteration reads a different definition; be safe
        if isinstance(s, If) and not s.const and _assigns(s, name):
            # later reads see a runtime `if`'s result (a phi in cuTile Python's SSA, not a multiply); the arm
            # that keeps the old value uses the definition once more (a constant `if` is folded in Python:
            # sinking and variant splits handle it)
            return reads + [None], False
        if isinstance(s, Assign) and name in s.targets:
            return reads, False
    return reads, True


# ------------------------------------------------------------------------------------ the pass

class _Fuser:
    def __init__(self, element: str | None = None, generic: str = "E") -> None:
        self.element = element  # the entry's one element type of `generic` (None: it may be any)
        self.generic = generic
        self.by_read: dict[int, _MulDef] = {}
        # an expression node is fused once: a multiply definition is fused where it is defined (Python
        # rewrites its adds in program order) and its fused form is what a later fusion inlines; the two
        # copies of a multiply sunk into a constant `if` are fused alike
        self.done: dict[int, tuple[Expr, Expr]] = {}
        self.bindings = 0  # multiply definitions seen: names their memory operands' bindings (_bind_memory)

    def is_fmul(self, e: Expr) -> bool:
        return _is_fmul(e) or (_identity_convert(e, self.element, self.generic) and self.is_fmul(e.args[0]))

    def mul_of(self, e: Expr):
        """(multiply expression, definition or None) if `e` is a float multiply value (through a conversion
        that is no operation in this entry: the factors are converted instead)."""
        if _identity_convert(e, self.element, self.generic):
            inner = self.mul_of(e.args[0])
            if inner is None:
                return None
            mul, d = inner
            return replace(mul, args=tuple(_converted(a, self.element) for a in mul.args), ty=e.ty), d
        if _is_fmul(e):
            return e, None
        if isinstance(e, Name) and id(e) in self.by_read:
            d = self.by_read[id(e)]
            mul, _ = self.mul_of(d.mul)
            return mul, d
        return None

    def fuse(self, e: Expr) -> Expr:
        if id(e) in self.done:
            return self.done[id(e)][1]
        out = self._fuse(e)
        self.done[id(e)] = (e, out)  # the key node is kept alive, so its id is never reused
        return out

    def _fuse(self, e: Expr) -> Expr:
        if isinstance(e, TupleExpr):
            return replace(e, items=tuple(self.fuse(i) for i in e.items))
        if not isinstance(e, Op):
            return e
        if e.op in ("add", "sub") and e.rule not in UNCONTRACTED_RULES:
            lhs, rhs = e.args
            cand = self.mul_of(lhs)
            side = "lhs"
            if cand is None:
                cand, side = self.mul_of(rhs), "rhs"
            if cand is not None:
                mul, d = cand
                ok = d is None or (d.uses == 1 and not d.fused)
                # the add and the multiply must have the same rounding and flush-to-zero (functional forms
                # with modes); a mismatch blocks the rewrite, as in cuTile Python (no retry on the other side)
                ok = ok and _modes(e) == _modes(mul)
                if ok:
                    if d is not None:
                        d.fused = True
                    a, b = (self.fuse(x) for x in mul.args)
                    acc = self.fuse(rhs if side == "lhs" else lhs)
                    if e.op == "sub":
                        if side == "rhs":
                            a = Op("neg", (a,), a.pos, ty=a.ty)
                        else:
                            acc = Op("neg", (acc,), acc.pos, ty=acc.ty)
                    return Op("fma", (a, b, acc), e.pos, tuple(a for a in e.attrs if a[0] in ("ftz", "rounding")),
                              rule="CTR-FMA", ty=e.ty)
        return replace(e, args=tuple(self.fuse(a) if a is not None else None for a in e.args))

    def block(self, stmts: tuple, live: set, defined: set) -> tuple:
        """`live`: names that may be read after this block; `defined`: names assigned before it."""
        stmts = list(stmts)
        defs: dict[int, _MulDef] = {}
        for i, s in enumerate(stmts):
            if isinstance(s, Assign) and len(s.targets) == 1 and self.is_fmul(s.value):
                reads, open_end = _collect_reads(stmts[i + 1:], s.targets[0])
                self.bindings += 1
                mul, bound = _bind_memory(s.value, f"__fma{self.bindings}", s.pos)
                d = _MulDef(s.targets[0], mul, bound=tuple(replace(b, text=s.text) for b in bound))
                d.reads = [r for r in reads if r is not None]
                d.uses = len(reads) + (1 if open_end and s.targets[0] in live else 0)
                for r in d.reads:
                    self.by_read[id(r)] = d
                defs[i] = d
        guards = {g[0]: g for i, d in defs.items() if (g := self.guard(stmts, i, d)) and g[0] not in defs}
        for g in guards.values():
            g[3].uses = 1  # where the arm is not taken; `guarded` keeps the read's statement unfused under the arm
        # constant-if sinking: x = a*b; if CONST: ... x = x +/- c
        removed: set[int] = set()
        for i, d in list(defs.items()):
            if i + 1 < len(stmts) and isinstance(stmts[i + 1], If) and stmts[i + 1].const:
                sunk = self.sink(d, stmts[i + 1])
                if sunk is not None:
                    stmts[i + 1] = sunk
                    removed.add(i)
        out: list[tuple[int, Stmt]] = []
        defined = set(defined)
        for i, s in enumerate(stmts):
            if i in removed:  # sunk into the `if` after it: its memory operands stay here
                out += [(-1, replace(b, value=self.fuse(b.value))) for b in defs[i].bound]
                continue
            if isinstance(s, (Assign, Eval)) and i in guards:
                out.append((i, self.guarded(s, *guards[i][1:], defined)))
                if isinstance(s, Assign):
                    defined.update(s.targets)
            elif isinstance(s, (Assign, Eval)):
                out.append((i, replace(s, value=self.fuse(s.value))))
                if isinstance(s, Assign):
                    defined.update(s.targets)
            elif isinstance(s, For):
                out.append((i, replace(s, body=self.block(s.body, defined | live, defined | {s.var}))))
            elif isinstance(s, While):
                out.append((i, replace(s, cond=self.fuse(s.cond), body=self.block(s.body, defined | live, defined))))
            elif isinstance(s, If):
                keep = defined | live | {n for n, _ in s.declares}
                out.append((i, replace(s, cond=self.fuse(s.cond), body=self.block(s.body, keep, defined),
                                       orelse=self.block(s.orelse, keep, defined))))
                defined.update(n for n, _ in s.declares)
            else:
                out.append((i, s))
        # a definition whose single use was fused disappears, but for the operands that touch memory
        return tuple(t for i, s in out
                     for t in ([replace(b, value=self.fuse(b.value)) for b in defs[i].bound]
                               if i in defs and defs[i].fused and not defs[i].guarded else [s]))

    def guard(self, stmts: list, i: int, d: _MulDef):
        """`x = a*b` (stmts[i]) read by one statement after it outside constant `if`s and by one arm of one
        constant `if`: where that arm is not taken, cuTile Python (which folds the `if`) fuses the read into an fma.
        The kernel is split on such an `if` (split_point) while the variant budget lasts; beyond it, the reading
        statement is guarded instead (`guarded`). Returns (index of the reading statement, the `if`'s condition,
        whether the arm that reads is its body), or None."""
        if d.bound or d.uses < 2 or len(d.reads) != d.uses:  # a read in a loop or after the block: not this shape
            return None
        where = {}
        for j in range(i + 1, len(stmts)):
            for r in _collect_reads([stmts[j]], d.name)[0]:
                where[id(r)] = j
            if _assigns(stmts[j], d.name):
                break
        at = [where.get(id(r)) for r in d.reads]
        arms = {j for j in at if j is not None and isinstance(stmts[j], If) and stmts[j].const}
        direct = [j for j in at if j not in arms]
        if len(arms) != 1 or len(direct) != 1 or None in direct or not isinstance(stmts[direct[0]], (Assign, Eval)):
            return None
        node = stmts[arms.pop()]
        in_cond = any(n.id == d.name for n in _names(node.cond))
        in_body, in_else = (bool(_collect_reads(list(b), d.name)[0]) for b in (node.body, node.orelse))
        if in_cond or in_body == in_else or _assigns(node, d.name):
            return None
        return direct[0], node.cond, in_body, d

    def guarded(self, s, cond: Expr, in_body: bool, d: _MulDef, defined: set):
        """The statement `s` twice under a constant `if`: fused where the arm that also reads `d` is not taken,
        not fused where it is (the multiply has two uses there). Fusion state is replayed for the second copy."""
        flags = {id(m): (m, m.fused) for m in self.by_read.values()}
        done = set(self.done)
        d.uses = 2
        plain = replace(s, value=self.fuse(s.value))
        for m, fused in flags.values():
            m.fused = fused
        for key in set(self.done) - done:
            del self.done[key]
        d.uses = 1
        fused = replace(s, value=self.fuse(s.value))
        # the reads in the arm, processed after this statement, see every use: where the arm is taken the multiply
        # is read more than once, and cuTile Python fuses none of them (1 stays only for this statement's copy)
        d.uses = len(d.reads)
        if not d.fused:  # the add did not take the multiply (another operand went first): nothing to guard
            return fused
        d.guarded = True
        declares = tuple((t, s.value.ty) for t in s.targets if t not in defined) if isinstance(s, Assign) else ()
        body, orelse = ((plain,), (fused,)) if in_body else ((fused,), (plain,))
        return If(cond, body, orelse, s.pos, const=True, declares=declares)

    def sink(self, d: _MulDef, node: If) -> If | None:
        name = d.name
        if any(n.id == name for n in _names(node.cond)):
            return None
        if any(_assigns(s, name) or any(n.id == name for e in stmt_exprs(s) for n in _names(e)) or
               _collect_reads(_children(s), name)[0] for s in node.orelse):
            return None
        k = next((j for j, t in enumerate(node.body) if _assigns(t, name) or _collect_reads([t], name)[0]), None)
        if k is None:
            return None
        first = node.body[k]
        if not (isinstance(first, Assign) and first.targets == (name,) and isinstance(first.value, Op)
                and first.value.op in ("add", "sub") and first.value.rule not in UNCONTRACTED_RULES):
            return None
        lhs, rhs = first.value.args
        reads_here = [n for n in _names(first.value) if n.id == name]
        if len(reads_here) != 1 or not (lhs is reads_here[0] or rhs is reads_here[0]):
            return None
        # Python picks the left multiply first: if the left operand is another multiply, no sinking
        if rhs is reads_here[0] and self.mul_of(lhs) is not None:
            return None
        # in the taken arm the add is the multiply's only use; afterwards `name` is the new value
        d.uses = 1
        body = node.body[:k] + (replace(first, value=replace(first.value, args=tuple(
            d.mul if a is reads_here[0] else a for a in first.value.args))),) + node.body[k + 1:]
        orelse = (Assign((name,), d.mul, d.mul.pos),) + node.orelse
        declares = node.declares if name in dict(node.declares) else node.declares + ((name, d.mul.ty),)
        return replace(node, body=body, orelse=orelse, declares=declares)


def fuse_fma(kernel: Kernel) -> Kernel:
    dtypes = kernel.variant.dtypes
    return replace(kernel, body=_fused_body(kernel, dtypes[0] if len(dtypes) == 1 else None))


def _fused_body(kernel: Kernel, element: str | None, generic: str = "E") -> tuple:
    return _Fuser(element, generic).block(kernel.body, set(), {p.name for p in kernel.params})


def element_split(kernel: Kernel, dtypes: tuple[str, ...], generic: str = "E") -> str | None:
    """The first of `dtypes` for which fusion differs when `generic` is known to be it (an `astype` between a
    multiply and an add is then no operation): that dtype needs an entry of its own. None when no dtype does."""
    if not any(p.kind == "array" and p.dtype == generic for p in kernel.params):
        return None
    from ..model.walk import walk_exprs
    targets = {e.ty.dtype for e in walk_exprs(kernel.body)
               if _identity_convert(e, getattr(getattr(e, "ty", None), "dtype", None), generic)}
    candidates = [t for t in dtypes if t in targets]
    if not candidates:  # no conversion from the generic that could be no operation: nothing to compare
        return None
    plain = _fused_body(kernel, None, generic)
    return next((t for t in candidates if _fused_body(kernel, t, generic) != plain), None)


# ------------------------------------------------------------------------------------ splits

def _add_operands(e) -> list:
    """Names read directly as an operand of a float add/sub (where a multiply would be fused)."""
    out = []
    if isinstance(e, Op):
        if e.op in ("add", "sub") and e.ty is not None and (e.ty.dtype in FLOAT_DTYPES or is_generic(e.ty.dtype)):
            out += [a for a in e.args[:2] if isinstance(a, Name)]
        for a in e.args:
            if a is not None:
                out += _add_operands(a)
    return out


def _reads_in_adds(stmts) -> set[str]:
    found: set[str] = set()
    for s in stmts:
        for e in stmt_exprs(s):
            found |= {n.id for n in _add_operands(e)}
        found |= _reads_in_adds(_children(s))
    return found


def split_point(kernel: Kernel) -> If | None:
    """A constant `if` that FMA fusion can only match cuTile Python across by splitting the kernel on it.
    cuTile Python folds the `if` before fusing, so a float multiply assigned in an arm (or before it and
    reassigned in an arm) has one definition where a later add/sub reads it; here the read sees two
    definitions and nothing fuses; a multiply read in an arm has one use more or less depending on the
    branch. Splitting makes each variant straight-line, as Python sees it."""
    def muls_assigned(stmts) -> set[str]:
        return {s.targets[0] for s in stmts if isinstance(s, Assign) and _is_fmul(s.value)}

    def all_muls(stmts) -> set[str]:
        return muls_assigned(stmts) | {n for t in stmts for n in all_muls(_children(t))}

    muls, fused_reads = all_muls(kernel.body), _reads_in_adds(kernel.body)

    def walk(stmts, outer: frozenset = frozenset()) -> If | None:
        """`outer`: the names an enclosing block assigned a multiply to before this block (a nested `if`'s arm
        that adds to one reads that multiply, as at its own level)."""
        stmts = list(stmts)
        for i, s in enumerate(stmts):
            if isinstance(s, If) and s.const:
                assigned = {n for b in (s.body, s.orelse) for t in b if isinstance(t, Assign) for n in t.targets}
                mul_before = _mul_assigned_last(stmts[:i], outer)
                before = assigned & mul_before
                candidates = (muls_assigned(s.body) | muls_assigned(s.orelse) | before) & assigned
                if candidates & _reads_in_adds(stmts[i + 1:]):
                    return s
                # a multiply before the `if` that an arm adds to (`d = d * r` then `if F: d = d + c`): folded,
                # cuTile Python fuses the two into an fma, which the `if` between them keeps apart here
                # (not where that multiply is the statement right before the `if`: _Fuser.sink fuses it there)
                prev = stmts[i - 1] if i else None
                sunk = set(prev.targets) if isinstance(prev, Assign) and _is_fmul(prev.value) else set()
                if (before - sunk) & _reads_in_adds(list(s.body) + list(s.orelse)):
                    return s
                # a multiply an arm reads: whether the add that fuses it is its only use depends on the branch
                read = {n.id for t in list(s.body) + list(s.orelse) for e in stmt_exprs(t) for n in _names(e)}
                read |= {n.id for t in list(s.body) + list(s.orelse) for c in _children(t)
                         for e in stmt_exprs(c) for n in _names(e)}
                if (read - assigned) & muls & fused_reads:  # (`x = x + c` in an arm: sunk, see _Fuser.sink)
                    return s
            for c in (s.body, s.orelse) if isinstance(s, If) else (s.body,) if isinstance(s, (For, While)) else ():
                found = walk(c, frozenset(_mul_assigned_last(stmts[:i], outer)) if isinstance(s, If) else frozenset())
                if found is not None:
                    return found
        return None

    return walk(kernel.body)


def _mul_assigned_last(stmts, outer: frozenset) -> set[str]:
    """The names whose last assignment in `stmts` (straight-line, after those of `outer`) is a float multiply."""
    out = set(outer)
    for t in stmts:
        if isinstance(t, Assign):
            for n in t.targets:
                (out.add if _is_fmul(t.value) else out.discard)(n)
        else:  # a name a nested block assigns may no longer hold the multiply
            for u in all_stmts(_children(t)):
                for n in (u.targets if isinstance(u, Assign) else ()):
                    out.discard(n)
    return out
