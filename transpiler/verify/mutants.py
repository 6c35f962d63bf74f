"""Mutation testing of the verifier: mutants of generated entries, verified in batches, with outcomes.

A mutant is one textual change (start, end, new) of a generated `src/<op>/kernel.rs`, inside the body of
one entry. Mechanical mutants come from the operator table `OPERATORS` (data: a pattern over an entry
body and what each match becomes); hand mutants (`HAND_MUTANTS`) aim at the normalizer's rules. A
mutant's class is fixed when it is generated, before anything runs:

- `value`: changes what the entry computes or which memory it touches; it must be killed.
- `hint`, `memsem`: a performance hint or the memory ordering of a weak access; no effect on the values
  of a race-free kernel, but a real Tile IR difference, which the verifier compares: killed too.
- `equiv`: equivalent by construction (operands of a commutative op swapped; a change inside an `if` on
  a constant that the entry's variant predicate makes false for every value it admits); the verifier may
  say `different` (it is strict) or `equivalent`. Not counted in the kill rate.

Outcomes, from `cutile-transpile verify`'s verdict of the mutated kernel: `killed` (different),
`rejected` (rustc or cuTile Rust refuses the Rust, or the Tile IR verifier refuses what cuTile Rust emitted:
not_verified because it does not build, does not compile or is not valid Tile IR), `equivalent`,
`not_verified` (any other reason), `error` (no verdict). A mutant is accepted when it is killed or rejected, or when it is equivalent and matches an entry of the allow-list
`rules/equivalent_mutants.toml` (each with its reason). Anything else is a survivor: a hole in the
verifier, or a mutant to allow-list with a proof.

Verification is expensive (a cargo build of the crate, then a Tile IR compile per check), so mutants are
batched: `schedule` packs them into rounds with at most one mutant per kernel; each round writes its
mutants into one copy of the output, verifies the mutated kernels plus a few unmutated ones (controls,
which must stay `equivalent`: verdicts are attributed per kernel) in one `verify_output` call, and puts
the pristine files back. Mechanical sampling is seeded per (seed, kernel, operator), so the same seed
gives the same mutants, and a kernel's sample does not depend on which other kernels are sampled.

Used by tests/test_mutation_campaign.py (bounded run in CI) and tools/mutation_run.py (longer runs).
"""

from __future__ import annotations

import json
import random
import re
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from .entries import entries_of
from .specs import const_value, predicates_hold

MUST_KILL = ("value", "hint", "memsem")


@dataclass(frozen=True)
class Mutant:
    id: str  # `<entry>:<operator>:<n>` (n-th site of the operator in the entry body) or `hand:<name>`
    rust: str  # src/<op>/kernel.rs, relative to the output directory
    kernel: str
    entry: str
    op: str
    cls: str  # value | hint | memsem | equiv
    start: int  # offsets in the pristine file
    end: int
    old: str
    new: str
    note: str
    line: int
    rule: str = ""  # hand mutants: the normalizer rule (normalize.RULES key prefix, e.g. N5) it must not hide

    def apply(self, text: str) -> str:
        assert text[self.start:self.end] == self.old, (self.id, text[self.start:self.end], self.old)
        return text[:self.start] + self.new + text[self.end:]

    def describe(self) -> str:
        return f"{self.id} [{self.cls}] {self.rust}:{self.line} ({self.note}): {self.old!r} -> {self.new!r}"


@dataclass
class Result:
    mutant: Mutant
    outcome: str  # killed | rejected | equivalent | not_verified | error
    detail: str = ""  # the diff (killed), the compiler's message (rejected), the reason (not_verified)
    allowed: str = ""  # the allow-list reason, when equivalent and allow-listed
    round: int = 0

    @property
    def accepted(self) -> bool:
        """Killed or rejected; or equivalent and allow-listed, or a mechanical mutant equivalent by
        construction (class equiv). A hand mutant's equivalence is an argument: it needs the allow-list."""
        if self.outcome in ("killed", "rejected"):
            return True
        return self.outcome == "equivalent" and (bool(self.allowed) or (self.mutant.cls == "equiv" and self.mutant.op != "hand"))

    def to_json(self) -> dict:
        return {**asdict(self.mutant), "outcome": self.outcome, "detail": self.detail[:4000], "allowed": self.allowed,
                "round": self.round}


# ------------------------------------------------------------------------------------------ parsing



def _block_end(text: str, start: int) -> int:
    """Offset of the `}` closing the block whose `{` is just before `start`."""
    depth, i = 1, start
    while depth:
        depth += (text[i] == "{") - (text[i] == "}")
        i += 1
    return i - 1


def const_ifs(text: str, start: int, end: int) -> list[tuple[tuple[str, str, int], tuple[int, int], tuple[int, int] | None]]:
    """`if NAME OP LITi32 {` blocks in a body: (condition, then range, else range or None)."""
    out = []
    for m in re.finditer(r"\bif ([A-Z_]\w*) (==|>|<|>=|<=|!=) (-?\d+)i32 \{\n", text[start:end]):
        ts = start + m.end()
        te = _block_end(text, ts)
        els = None
        if text.startswith(" else {", te + 1):
            es = te + 1 + len(" else {")
            els = (es, _block_end(text, es))
        out.append(((m.group(1), m.group(2), int(m.group(3))), (ts, te), els))
    return out


_CMP = {"==": int.__eq__, "!=": int.__ne__, ">": int.__gt__, "<": int.__lt__, ">=": int.__ge__, "<=": int.__le__}


def _admitted(name: str, const_type: str, preds: list[str], base: dict, lits: Iterable[int]) -> set[int]:
    """Values of constant `name` that the entry's variant predicates admit (the others fixed as in `base`):
    0/1 for flags; for integers a wide sample (around the literals compared with, powers of two)."""
    if const_type == "bool":
        cands = {0, 1}
    else:
        cands = {v + d for v in set(lits) | {0, 1} for d in (-2, -1, 0, 1, 2)} | {2 ** i for i in range(14)} \
            | {-(2 ** i) for i in range(8)}
    return {v for v in cands if predicates_hold(preds, {**base, name: v})}


# ---------------------------------------------------------------------------------------- operators

@dataclass(frozen=True)
class Site:
    start: int
    end: int
    new: str
    cls: str
    note: str


@dataclass(frozen=True)
class Operator:
    """A mutation operator: `pattern` over an entry body; `rewrite(match, ctx)` gives the sites it yields
    (offsets relative to the body). `ctx` holds the entry's generic values (first specialization)."""
    name: str
    pattern: str
    rewrite: Callable[[re.Match, dict], Iterable[Site]]
    flags: int = 0
    cap_extra: int = 0  # operators with few, important sites get more samples (deleted stores, masks)


def _replace(group, table: dict | Callable, cls="value", note="{old} -> {new}"):
    """Replace one group by table[old] (or table(match, ctx)); skip when there is no replacement."""
    def rw(m, ctx):
        old = m.group(group)
        new = table(m, ctx) if callable(table) else table.get(old)
        if new is None:
            return []
        c = cls(m) if callable(cls) else cls
        return [Site(m.start(group), m.end(group), new, c, note.format(old=old, new=new, m=m))]
    return rw


def _swap(ga, gb, sep: str, cls="value", note="swap operands"):
    def rw(m, ctx):
        a, b = m.group(ga), m.group(gb)
        if a == b:
            return []
        c = cls(m) if callable(cls) else cls
        return [Site(m.start(ga), m.end(gb), f"{b}{sep.format(m=m)}{a}", c, note.format(m=m))]
    return rw


def _whole(new: str | Callable, cls="value", note=""):
    def rw(m, ctx):
        return [Site(m.start(), m.end(), new(m) if callable(new) else new, cls, note.format(m=m))]
    return rw


_BINOP = {"+": "-", "-": "+", "*": "+", "/": "*", "&": "|", "|": "&", "^": "&", ">>": "<<", "<<": ">>"}
_FN = {"maxf": "minf", "minf": "maxf", "max": "min", "min": "max", "reduce_sum": "reduce_max", "reduce_max": "reduce_sum",
       "reduce_min": "reduce_max", "log2": "log", "log": "log2", "negf": "absf", "tanh": "exp", "floor": "ceil",
       "ceil": "floor", "sin": "cos", "cos": "sin", "tan": "sin", "sinh": "cosh", "cosh": "sinh", "pow": "atan2",
       "atan2": "pow"}
_ENUMS = {
    "predicate": {"LessThan": "LessThanOrEqual", "LessThanOrEqual": "LessThan", "GreaterThan": "GreaterThanOrEqual",
                  "GreaterThanOrEqual": "GreaterThan", "Equal": "NotEqual", "NotEqual": "Equal"},
    "padding": {"None": "Zero", "Zero": "NegInf", "NegInf": "Zero", "PosInf": "Zero"},
    "rounding": {"NegativeInf": "Zero", "PositiveInf": "NegativeInf", "NearestEven": "Zero", "Approx": "Full",
                 "Zero": "NegativeInf", "Full": "Approx"},
    "ftz": {"Disabled": "Enabled", "Enabled": "Disabled"},
    "nan": {"Disabled": "Enabled", "Enabled": "Disabled"},
    "tma": {"Enabled": "Disabled", "Disabled": "Enabled"},
    "ordering": {"Weak": "Relaxed", "AcqRel": "Relaxed", "Relaxed": "AcqRel"},
    "scope": {"Device": "TileBlock", "TileBlock": "Device"},
    "cmp_ordering": {"Ordered": "Unordered", "Unordered": "Ordered"},
    "atomic": {"Add": "Max", "AddF": "Xchg", "Max": "Min", "Min": "Max"},
    "reverse": {"Forward": "Reverse"},
}


def _enum_class(kind: str):
    def cls(m):
        if kind == "tma":
            return "hint"
        if kind == "ordering" and m.group(2) == "Weak":
            return "memsem"
        if kind == "scope" and re.search(r"ordering::Weak,\s*$", m.string[max(0, m.start() - 40):m.start()]):
            return "equiv"  # a weak access has no scope: Tile IR prints none, cuTile Rust drops it
        return "value"
    return cls


def _enum_op(kind: str) -> Operator:
    # `None::<scope::TileBlock>` only names the type of an absent argument: not a site
    return Operator(f"enum_{kind}", rf"(?<![\w:])(?<!None::<)({kind})::(\w+)",
                    _replace(2, _ENUMS[kind], cls=_enum_class(kind), note=f"{kind}::{{old}} -> {kind}::{{new}}"))


def _int_literal(m, ctx):
    n = int(m.group(1))
    new = 1 if n == 0 else 0 if n in (1, -1) else n + 1
    return [Site(m.start(1), m.end(1), str(new), "value", f"{n}{m.group(2)} -> {new}{m.group(2)}")]


def _float_literal(m, ctx):
    v = float(m.group(1))
    new = "1.0" if v == 0.0 else repr(v * 0.5)
    return [Site(m.start(1), m.end(1), new, "value", f"{m.group(1)} -> {new}")]


def _pin_generic(m, ctx):
    """A const generic used as a value replaced by its value in the entry's first specialization: the Rust
    is then right for that value only (issue 10: a hard-coded generic). Uses in types and shapes (inside
    `[...]` or `::<...>` on the line) are left alone: there a literal is a type error, not a hidden bug."""
    name = m.group(1)
    if name not in ctx["values"]:
        return []
    body, i = ctx["body"], m.start(1)
    prefix = body[body.rfind("\n", 0, i) + 1:i]
    if prefix.count("[") > prefix.count("]") or prefix.count("::<") > prefix.count(">") \
            or re.match(r"\s*(?::|\]|!)", body[m.end(1):]) or prefix.rstrip().endswith("const"):
        return []
    v = ctx["values"][name]
    if ctx["fixed"].get(name):  # the only value the entry's predicates admit: pinning it is harmless
        return [Site(m.start(1), m.end(1), f"{v}i32", "equiv", f"{name} -> {v} (the only value this entry admits)")]
    return [Site(m.start(1), m.end(1), f"{v}i32", "value", f"{name} -> {v}i32 (its value in the first specialization)")]


OPERATORS: tuple[Operator, ...] = (
    Operator("binop", r"= (?P<a>[\w.]+) (?P<op>\+|-|\*|/|&|\||\^|>>|<<) (?P<b>[\w.]+);",
             _replace("op", _BINOP)),
    Operator("swap_operands", r"= (?P<a>[\w.]+) (?P<op>\+|-|\*|/|&|\||\^|>>|<<) (?P<b>[\w.]+);",
             _swap("a", "b", " {m[op]} ", cls=lambda m: "equiv" if m.group("op") in "+*&|^" else "value",
                   note="swap the operands of {m[op]}")),
    Operator("fn_swap", r"(?<![\w.])(" + "|".join(sorted(_FN, key=len, reverse=True)) + r")\(",
             _replace(1, _FN), cap_extra=2),
    Operator("fn_swap_exp2", r"(?<![\w.])exp2\((\w+), ftz::\w+\)", _whole(lambda m: f"exp({m.group(1)})", note="exp2 -> exp")),
    Operator("fn_swap_exp", r"(?<![\w.])exp\((\w+)\)",
             _whole(lambda m: f"exp2({m.group(1)}, ftz::Disabled)", note="exp -> exp2")),
    Operator("fn_swap_rsqrt", r"(?<![\w.])rsqrt\((\w+), (ftz::\w+)\)",
             _whole(lambda m: f"sqrt({m.group(1)}, rounding::NearestEven, {m.group(2)})", note="rsqrt -> sqrt")),
    *(_enum_op(kind) for kind in _ENUMS),
    Operator("int_literal", r"(?<![\w.<])(-?\d+)(i32|u64)\b", _int_literal),
    Operator("permute", r"const_array!\[1, 0\]", _whole("const_array![0, 1]", note="permute [1, 0] -> [0, 1]")),
    Operator("float_literal", r"(?<![\w.])(\d+\.\d+)f32\b", _float_literal),
    Operator("neg_inf", r"f32::NEG_INFINITY", _whole("-3.0e38f32", note="-inf -> -3.0e38 (finite)")),
    Operator("hint_latency", r"scope::TileBlock,\s*(None),\s*tma::",
             _replace(1, lambda m, c: "Some(3i32)", cls="hint", note="view latency None -> Some(3)")),
    Operator("hint_latency_ptr", r"Latency::<(\d+)>", _replace(1, lambda m, c: "4", cls="hint", note="Latency::<{old}> -> Latency::<4>")),
    Operator("index_swap", r"\[(\w+), (\w+)((?:, \w+)*)\],\s*ordering::",
             _swap(1, 2, ", ", note="index [{m[1]}, {m[2]}, ..] -> [{m[2]}, {m[1]}, ..]")),
    Operator("block_id_axis", r"get_tile_block_id\(\)\.(\d)",
             _replace(1, {"0": "1", "1": "0", "2": "0"}, note="bid.{old} -> bid.{new}")),
    Operator("select_swap", r"select\((\w+), (\w+), (\w+)\)", _swap(2, 3, ", ", note="swap the arms of select")),
    Operator("cmp_swap", r"(cmpi|cmpf)\(\s*(\w+),\s*(\w+),\s*predicate::(\w+)",
             _swap(2, 3, ", ", cls=lambda m: "equiv" if m.group(4) in ("Equal", "NotEqual") else "value",
                   note="{m[1]} operands swapped ({m[4]})")),
    Operator("div_swap", r"(divi|divf)\((\w+), (\w+),", _swap(2, 3, ", ", note="{m[1]} operands swapped")),
    Operator("fma_split", r"fma\((\w+), (\w+), (\w+), rounding::\w+, ftz::\w+\)",
             _whole(lambda m: f"{m.group(1)} * {m.group(2)} + {m.group(3)}", note="fma(a, b, c) -> a * b + c"),
             flags=re.S, cap_extra=2),
    Operator("fma_swap", r"fma\(\s*(\w+),\s*(\w+),\s*(\w+),", _swap(1, 2, ", ", cls="equiv", note="fma: swap the factors"),
             flags=re.S),
    Operator("delete_store", r"\n\s*\w+\.store\(\w+\);", _whole("", note="delete `x.store(..)`"), cap_extra=2),
    Operator("delete_store_view", r"\n\s*unsafe \{\s*store_view_tko_mut\(.*?\)\s*\};",
             _whole("", note="delete store_view_tko_mut"), flags=re.S, cap_extra=2),
    Operator("delete_store_ptr", r"\n\s*let _ = unsafe \{\s*store_ptr_tko\(.*?\)\s*\};",
             _whole("", note="delete store_ptr_tko"), flags=re.S, cap_extra=2),
    Operator("delete_update", r"\n\s*(\w+) = [^;]+;",
             lambda m, ctx: [Site(m.start(), m.end(), "", "value", f"delete `{m.group(1)} = ...`")]
             if re.search(rf"let mut {m.group(1)}\b", ctx["body"]) else [], cap_extra=2),
    Operator("mask_drop", r"(load_ptr_tko|atomic_rmw_tko|store_ptr_tko)\((?:[^()]|\([^()]*\))*?\b(Some\((\w+)\))",
             _replace(2, lambda m, c: "None", note="{m[1]}: mask {old} -> None"), flags=re.S, cap_extra=2),
    # a const generic used as a value (not in a type or shape) fixed to its verified value
    Operator("pin_generic", r"\b([A-Z][A-Z0-9_]*)\b", _pin_generic, cap_extra=1),
)
OPERATOR_NAMES = tuple(o.name for o in OPERATORS)


# ----------------------------------------------------------------------------------------- generate

def manifest_kernels(out: Path) -> list[tuple[dict, dict]]:
    """(module record, kernel record) of every kernel in OUT's manifest, in manifest order."""
    m = json.loads((out / "manifest.json").read_text())
    return [(mod, k) for mod in m["modules"] for k in mod["kernels"]]


def _entry_values(entry: dict, spec: dict) -> dict:
    values = dict(spec)
    for name, expr in entry.get("derived", {}).items():
        values[name] = const_value(expr, values)
    for rust_name, py_name in entry.get("generic_params", {}).items():
        values[rust_name] = values[py_name]
    return {g: values[g] for g in entry["generics"] if g in values}


def generate(out: Path, kernels: Iterable[str] | None = None, operators: Iterable[str] | None = None) -> list[Mutant]:
    """Every mechanical mutant of the entries of `kernels` (default: all) in OUT, in a stable order."""
    want = set(kernels) if kernels is not None else None
    ops = [o for o in OPERATORS if operators is None or o.name in set(operators)]
    texts: dict[str, str] = {}
    mutants: list[Mutant] = []
    for mod, k in manifest_kernels(out):
        if want is not None and k["name"] not in want:
            continue
        text = texts.setdefault(mod["rust"], (out / mod["rust"]).read_text())
        bodies = entries_of(text)
        consts = {p["name"]: p.get("const_type", "int") for p in k["params"] if p["kind"] == "const"}
        for e in k["entries"]:
            if e["name"] not in bodies:
                continue
            bs, be = bodies[e["name"]]
            specs = [s for s in k["specializations"] if predicates_hold(e["predicates"], s)]
            if not specs:
                continue  # an entry no specialization selects is not verified at all (reported not_verified)
            base = specs[0]
            values = _entry_values(e, base)
            lits: dict[str, set[int]] = {}
            ifs = const_ifs(text, bs, be)
            for (name, _, lit), _, _ in ifs:
                lits.setdefault(name, set()).add(lit)
            admitted = {n: _admitted(n, consts[n], e["predicates"], base, lits.get(n, set()) | {base.get(n, 0)})
                        for n in consts if n in base}
            fixed = {n: True for n, vs in admitted.items() if len(vs) == 1}
            # generics named apart in Rust (E_ for a constant E) are fixed when their Python constant is
            for rust_name, py_name in e.get("generic_params", {}).items():
                if fixed.get(py_name):
                    fixed[rust_name] = True
            dead, untaken = [], []  # ranges never run for any admitted value / for any verified specialization
            for (name, op, lit), then_r, else_r in ifs:
                if name not in admitted:
                    continue
                taken = {_CMP[op](v, lit) for v in admitted[name]}
                verified = {_CMP[op](int(s[name]), lit) for s in specs if name in s}
                for val, rng in ((False, then_r), (True, else_r)):
                    if rng is None:
                        continue
                    if taken == {val}:
                        dead.append(rng)
                    elif verified == {val}:
                        untaken.append(rng)
            # comments (the source statement above each lowering) are blanked, offsets kept: a mutant changes code
            body = re.sub(r"//[^\n]*", lambda c: " " * len(c.group()), text[bs:be])
            ctx = {"values": values, "fixed": fixed, "body": body}
            for op in ops:
                seen: set[tuple[int, int, str]] = set()
                n = 0
                for m in re.finditer(op.pattern, body, op.flags):
                    for site in op.rewrite(m, ctx):
                        a, b = bs + site.start, bs + site.end
                        if (a, b, site.new) in seen or text[a:b] == site.new:
                            continue
                        seen.add((a, b, site.new))
                        cls, note = site.cls, site.note
                        if any(ds <= a and b <= de for ds, de in dead):
                            cls, note = "equiv", note + " [in a branch this entry's predicate never takes]"
                        elif any(ds <= a and b <= de for ds, de in untaken):
                            note += " [in a branch no verified specialization of this entry takes]"
                        mutants.append(Mutant(f"{e['name']}:{op.name}:{n}", mod["rust"], k["name"], e["name"], op.name,
                                              cls, a, b, text[a:b], site.new, note, text.count("\n", 0, a) + 1))
                        n += 1
    return mutants


def sample(mutants: list[Mutant], seed: int, per_op: int = 2, classes: Iterable[str] | None = None) -> list[Mutant]:
    """Up to `per_op` mutants per (kernel, operator) (more for operators with few, important sites),
    drawn with a generator seeded by (seed, kernel, operator): deterministic, and one kernel's draw does
    not depend on the others'."""
    caps = {o.name: per_op + o.cap_extra for o in OPERATORS}
    groups: dict[tuple[str, str], list[Mutant]] = {}
    for mu in mutants:
        if classes is None or mu.cls in classes:
            groups.setdefault((mu.kernel, mu.op), []).append(mu)
    out = []
    for (kernel, op), items in groups.items():
        rng = random.Random(f"{seed}/{kernel}/{op}")
        out.extend(rng.sample(items, min(len(items), caps.get(op, per_op))))
    order = {mu.id: i for i, mu in enumerate(mutants)}
    return sorted(out, key=lambda mu: (mu.kernel, order[mu.id]))


def sample_spread(mutants: list[Mutant], seed: int, per_kernel: int, classes: Iterable[str] = MUST_KILL) -> list[Mutant]:
    """`per_kernel` mutants of each kernel, each of another operator (operators and sites drawn with a
    generator seeded by (seed, kernel)): the CI sample, wide over operators at a bounded cost."""
    by_kernel: dict[str, dict[str, list[Mutant]]] = {}
    for mu in mutants:
        if mu.cls in classes:
            by_kernel.setdefault(mu.kernel, {}).setdefault(mu.op, []).append(mu)
    out = []
    for kernel, ops in by_kernel.items():
        rng = random.Random(f"{seed}/{kernel}")
        names = sorted(ops)
        rng.shuffle(names)
        out.extend(rng.choice(ops[n]) for n in names[:per_kernel])
    return out


# ----------------------------------------------------------------------------------------- hand mutants

@dataclass(frozen=True)
class Hand:
    name: str
    kernel: str
    entry: str
    old: str  # text inside the entry body (the nth occurrence there is replaced)
    new: str
    cls: str
    note: str
    rule: str = ""
    nth: int = 1


_BID = "let bid: i32 = get_tile_block_id().0;\n"
_PID = "let pid: i32 = get_tile_block_id().0;\n"
_HIST = "let expert_counts_j: Tile<E, { [BLOCK] }> = broadcast_scalar(expert_counts_i, shape![BLOCK]);"
# `cols[None, :] < n` of layer norm (the mask the N13 mutants flip)
_COLS_LT_N = ("let {0}_c: Tile<bool, {{ [1, BN] }}> =\n"
              "            cmpi(reshape(cols, shape![1, BN]), broadcast_scalar(n, shape![1, BN]), predicate::LessThan);\n")
_HIST_F64 = "let expert_counts_i: Tile<f64, { [BLOCK] }> = constant(0.9999999999999999f64, shape![BLOCK]);\n"
# The hand mutants of issue 10 (the survivors of the 2026-12-01 campaign and their controls), adapted to
# the corpus output and spread over kernels (tests/test_mutants.py applies the same kinds to other kernels:
# geglu, flash attention, rope, swiglu, kl_div). The ffi.rs one (TILE/2 at launch) is out of reach here:
# verify compares entries, not the C ABI (issue 10 item 3).
HAND_MUTANTS: tuple[Hand, ...] = (
    Hand("assume-bid-0", "vector_add", "vector_add", _BID,
         _BID + "        let bid: i32 = unsafe { assume_bounds::<_, 0, 0>(bid) };\n", "value",
         "a false fact: assume 0 <= bid <= 0 (every block claims to be block 0)", rule="N5"),
    Hand("assume-div-by-64", "attn_sinks_fwd_kernel", "attn_sinks_fwd_kernel__not_causal__window_gt_0",
         "let seq_kv: i32 = k_shape[2];\n",
         "let seq_kv: i32 = k_shape[2];\n        let seq_kv: i32 = unsafe { assume_div_by::<_, 64>(seq_kv) };\n",
         "value", "a fact false for ragged lengths: assume seq_kv % 64 == 0", rule="N5"),
    Hand("gdc-launch-dependents", "scaled_add", "scaled_add", _BID,
         _BID + "        let _g: Token = unsafe { gdc_launch_dependents_tko(None) };\n", "memsem",
         "insert gdc_launch_dependents (a PDL-dependent kernel may start before this one's stores)", rule="N7"),
    Hand("read-wrong-array", "scaled_add", "scaled_add",
         "make_partition_view(x, shape![TILE], padding::None, dim_map::Identity, get_tensor_token(x))",
         "make_partition_view(y, shape![TILE], padding::None, dim_map::Identity, get_tensor_token(y))", "value",
         "x is read from y (both loads read y): arguments are matched by parameter, not by position", rule="N2"),
    Hand("fence-alias", "gelu_tanh_kernel", "gelu_tanh_kernel", _PID,
         _PID + "        let _f: Token = unsafe { memory_fence_alias_tko(x.token()) };\n", "memsem",
         "insert memory_fence_alias_tko", rule="N7"),
    Hand("extra-atomic-on-input", "vector_add", "vector_add", "        c.store(c_a);\n",
         "        let _pr: Partition<E, { [TILE] }> = unsafe {\n"
         "            make_partition_view(a, shape![TILE], padding::None, dim_map::Identity, a.token())\n"
         "        };\n"
         "        let _t: Token = unsafe {\n"
         "            atomic_red_view_raw(&_pr, c_a, [bid], atomic::AddF, ordering::Relaxed, scope::Device, None)\n"
         "        };\n"
         "        c.store(c_a);\n", "value", "extra atomic_red_view_tko: a[bid] += x + y (writes the INPUT a)",
         rule="N7"),
    Hand("token-fresh-read", "rms_norm_fwd", "rms_norm_fwd", "dim_map::Identity, get_tensor_token(w))",
         "dim_map::Identity, new_token_unordered())", "equiv",
         "load of w with a fresh unordered token instead of w's (a read-only input: nothing to order with)",
         rule="N6"),
    Hand("pin-block", "dropout_kernel", "dropout_kernel", "broadcast_scalar(pid * BLOCK, shape![BLOCK])",
         "broadcast_scalar(pid * 1024i32, shape![BLOCK])",
         "value", "BLOCK -> 1024 (its launch-site value): wrong for any other BLOCK"),
    Hand("bias-always", "bias_gelu_kernel", "bias_gelu_kernel", "if HAS_BIAS == 1i32 {", "if HAS_BIAS > -1i32 {",
         "value", "the bias is added even when HAS_BIAS=0 (the launch site has HAS_BIAS=1 only)"),
    Hand("pin-ignore-index", "cross_entropy_fwd_kernel", "cross_entropy_fwd_kernel", "label == IGNORE_INDEX;",
         "label == -100i32;", "value", "IGNORE_INDEX -> -100 (its launch-site value)"),
    Hand("pin-query-group", "flash_attn_fwd_kernel", "flash_attn_fwd_kernel__not_causal", "py_floordiv_i32(head, QUERY_GROUP);",
         "py_floordiv_i32(head, 4i32);", "value", "QUERY_GROUP -> 4 in the not-causal entry (its one specialization has 4)"),
    # (a change inside `if CAUSAL` of the not-causal entry is no longer possible: an entry's variant
    # predicates fold every constant `if` they decide, as cuTile Python folds it)
    Hand("float-ulp-log2e", "attn_sinks_fwd_kernel", "attn_sinks_fwd_kernel__causal", "qk_scale * 1.4426950408889634f32",
         "qk_scale * 1.4426951f32", "value", "log2(e) one ulp up (0x3FB8AA3B -> 0x3FB8AA3C)", rule="N9"),
    Hand("float-ulp-ln2", "cross_entropy_fwd_kernel", "cross_entropy_fwd_kernel", "broadcast_scalar(0.6931471805599453f32",
         "broadcast_scalar(0.69314724f32", "value", "ln(2) one ulp up (0x3F317218 -> 0x3F317219)", rule="N9"),
    Hand("eps-plus-neg-zero", "rms_norm_fwd_kernel", "rms_norm_fwd_kernel",
         "let rstd_b: Tile<f32, { [BM, 1] }> = ms + broadcast_scalar(eps, shape![BM, 1]);",
         "let rstd_b: Tile<f32, { [BM, 1] }> = ms + broadcast_scalar(eps, shape![BM, 1]);\n"
         "        let rstd_b: Tile<f32, { [BM, 1] }> = rstd_b + broadcast_scalar(-0.0f32, shape![BM, 1]);",
         "equiv", "(ms + eps) + (-0.0): an IEEE identity written as an extra op (the verifier compares ops: different)"),
    Hand("ftof-round-zero", "moe_expert_histogram_kernel", "moe_expert_histogram_kernel", _HIST,
         _HIST_F64 + "        let expert_counts_j: Tile<E, { [BLOCK] }> = ftof(expert_counts_i, rounding::Zero);", "value",
         "histogram increment 1.0 -> ftof(0.9999999999999999 f64, rounding toward zero): 0.99951 in f16", rule="N8"),
    Hand("ftof-round-nearest", "moe_expert_histogram_kernel", "moe_expert_histogram_kernel", _HIST,
         _HIST_F64 + "        let expert_counts_j: Tile<E, { [BLOCK] }> = ftof(expert_counts_i, rounding::NearestEven);", "equiv",
         "control for ftof-round-zero: the same constant rounded to nearest even is exactly 1.0", rule="N8"),
    Hand("atomic-scope-system", "moe_sort_tokens_kernel", "moe_sort_tokens_kernel", "scope::Device,", "scope::System,",
         "memsem", "atomic scope Device -> System (stronger)"),
    Hand("padding-select-row-mask", "moe_permute_rows_kernel", "moe_permute_rows_kernel",
         "select(x_x, x_z, broadcast(reshape(x_ab", "select(x_h, x_z, broadcast(reshape(x_ab", "value",
         "the padding selected under the row bounds only: columns past the hidden size read undefined lanes",
         rule="N20"),
    Hand("store-after-store-unordered", "geglu_bwd_kernel", "geglu_bwd_kernel",
         "padding::None, dgate_up_tok_access)", "padding::None, new_token_unordered())", "memsem",
         "the second store of dgate_up no longer ordered after the first (write after write race)", rule="N17",
         nth=2),
    # N11 drops a reshape/broadcast only where its type is unchanged: a reshape to the transposed shape where
    # cuTile Python transposes (the rows of W read as its columns) stays one (a rule comparing shape ops by
    # element type only, permute among them, would drop both)
    Hand("transpose-as-reshape", "moe_grouped_gemm_kernel", "moe_grouped_gemm_kernel",
         "permute(acc_a, const_array![1, 0])", "reshape(acc_a, shape![BK, BN])", "value",
         "ct.transpose of the weight tile written as a reshape to [BK, BN]", rule="N11"),
    # N13 drops `xori x, false`, `ori x, false`, `andi x, true` only: the column mask xor true (negated) or
    # or true (every column) stays an op (no unmutated corpus kernel has an i1 constant operand there: these
    # mutants bring it, as cuTile Rust emits it)
    Hand("mask-xor-true", "layer_norm_fwd_kernel", "layer_norm_fwd_kernel",
         _COLS_LT_N.format("xc"),
         _COLS_LT_N.format("xc") +
         "        let xc_t: Tile<bool, { [1, BN] }> = broadcast_scalar(true, shape![1, BN]);\n"
         "        let xc_c: Tile<bool, { [1, BN] }> = xori(xc_c, xc_t);\n", "value",
         "the column mask `cols < n` xor true: the padding columns centred, the real ones zeroed", rule="N13"),
    Hand("mask-or-true", "layer_norm_bwd_dx_kernel", "layer_norm_bwd_dx_kernel",
         _COLS_LT_N.format("xhat"),
         _COLS_LT_N.format("xhat") +
         "        let xhat_t: Tile<bool, { [1, BN] }> = broadcast_scalar(true, shape![1, BN]);\n"
         "        let xhat_c: Tile<bool, { [1, BN] }> = ori(xhat_c, xhat_t);\n", "value",
         "the column mask `cols < n` or true: xhat of the padding columns is -mu * rstd, not 0", rule="N13"),
    # corpus/cutile/workloads/top_p.py: top_p_filter_kernel returns early under a runtime `or` and breaks out of
    # its tile loop, min_p_filter_kernel compares with a ct.Constant[float] and scans along axis 1 (two mutants
    # per kernel: the campaign's rounds stay two)
    Hand("or-as-and", "top_p_filter_kernel", "top_p_filter_kernel",
         "let cond_b: bool = if cond_a {\n            true\n",
         "let cond_b: bool = if cond_a {\n            false\n", "value",
         "the early-return guard `row >= n_requests or vocab == 0` as `and`: programs past the batch run", rule="N19"),
    Hand("break-flag-never-set", "top_p_filter_kernel", "top_p_filter_kernel",
         "                    z_break0 = true;\n", "                    z_break0 = false;\n", "value",
         "the `break` past the row's vocabulary skips one tile and the walk goes on", rule="N12"),
    Hand("min-p-one-ulp-up", "min_p_filter_kernel", "min_p_filter_kernel",
         "scalar_to_tile(MIN_P);", "scalar_to_tile(MIN_P + 1i32);", "value",
         "the ct.Constant[float] MIN_P one ulp up (its f32 bits plus one before the bitcast)", rule="N18"),
    Hand("kept-mass-reversed", "min_p_filter_kernel", "min_p_filter_kernel",
         "scan_sum(kept_mass_a, 0i32, reverse::Forward, 0.0f32)",
         "scan_sum(kept_mass_a, 0i32, reverse::Reverse, 0.0f32)", "value",
         "the running kept mass along the vocabulary axis taken from the tile's end", rule="N27"),
)


# What guards each normalizer rule: mutants (hand ids, or operators whose every must-kill mutant counts)
# that change values in a way the rule's equalities could hide, so they must stay `different`. A rule added
# to normalize.RULES comes with its guard here (tests/test_mutation_campaign.py checks it); the CI sample
# holds at least one mutant of every guard.
RULE_GUARDS: dict[str, tuple[str, ...]] = {
    "N1": ("swap_operands", "select_swap"),  # renaming SSA values must not hide operand order
    "N2": ("hand:read-wrong-array",),  # matching arguments by parameter must not hide a wrong array
    "N4": ("enum_tma", "hint_latency"),  # renaming hint keys must not hide a changed hint
    "N5": ("hand:assume-bid-0", "hand:assume-div-by-64"),
    "N6": ("delete_store", "delete_store_view"),  # erasing tokens must not hide a dropped memory op
    "N7": ("hand:gdc-launch-dependents", "hand:fence-alias", "hand:extra-atomic-on-input", "delete_update"),
    "N8": ("hand:ftof-round-zero",),
    "N9": ("hand:float-ulp-log2e", "hand:float-ulp-ln2", "float_literal"),
    "N11": ("hand:transpose-as-reshape",),  # dropping identity shape ops must not hide one that moves data
    "N12": ("hand:break-flag-never-set",),  # an else-arm passing values through must not hide a flag never set
    "N15": ("hand:or-as-and",),  # moving the rest under the guard must not hide another guard condition
    "N18": ("hand:min-p-one-ulp-up",),  # folding a bitcast of a constant keeps its bits: one ulp shows
    "N19": ("hand:or-as-and",),  # the known condition in its own arm: the other arm's constant still shows
    "N13": ("hand:mask-xor-true", "hand:mask-or-true"),  # x ^ false is x, x ^ true and x | true are not
    "N14": ("int_literal", "float_literal"),  # folding shape ops of splats must not hide a changed constant
    "N16": ("neg_inf",),  # -inf and the largest finite float stay apart
    "N17": ("hand:store-after-store-unordered",),
    "N20": ("hand:padding-select-row-mask", "select_swap"),
    "N21": ("delete_store", "delete_store_ptr"),  # dropping effect-free loops must not hide a dropped store
    "N22": ("enum_predicate", "int_literal"),  # folding constant comparisons must not hide a changed one
    "N23": ("int_literal", "swap_operands"),  # dropping pass-through `if` results must not hide a changed arm
    "N24": ("int_literal", "swap_operands"),  # folding constant divisions must not hide a changed operand or order
    "N25": ("int_literal",),  # a one-trip loop's variable as its lb must not hide a changed bound or constant
    "N26": ("int_literal", "swap_operands"),  # folding constant +, -, * must not hide a changed operand or order
    # dropping loads nothing reads must not hide a dropped store (whose loaded value it was)
    "N28": ("delete_store", "delete_store_view"),
    # initial values for carries passed back unchanged must not hide a deleted update (a carry it makes constant)
    "N29": ("delete_update", "int_literal"),
    # moving loads out of loops that write nothing must not hide a dropped store (that loop wrote: nothing moves)
    "N30": ("delete_store", "delete_store_view"),
    "N27": ("hand:kept-mass-reversed",),  # a scan moved to its own axis keeps its direction
}


def hand_mutants(out: Path, names: Iterable[str] | None = None) -> tuple[list[Mutant], list[str]]:
    """The hand mutants that apply to OUT (located inside their entry's body), and the problems of those
    that do not (their text is gone: the generated code changed; update the mutant)."""
    want = set(names) if names is not None else None
    rust_of = {k["name"]: mod["rust"] for mod, k in manifest_kernels(out)}
    texts: dict[str, str] = {}
    out_mutants, problems = [], []
    for h in HAND_MUTANTS:
        if want is not None and h.name not in want:
            continue
        rel = rust_of.get(h.kernel)
        if rel is None:
            problems.append(f"hand:{h.name}: kernel {h.kernel} is not in the output")
            continue
        text = texts.setdefault(rel, (out / rel).read_text())
        body = entries_of(text).get(h.entry)
        if body is None:
            problems.append(f"hand:{h.name}: entry {h.entry} is not in {rel}")
            continue
        pos = body[0] - 1
        for _ in range(h.nth):
            pos = text.find(h.old, pos + 1, body[1] + 1)  # the body's last newline included
            if pos < 0:
                break
        if pos < 0:
            problems.append(f"hand:{h.name}: {h.old!r} not found in the body of {h.entry} ({rel})")
            continue
        out_mutants.append(Mutant(f"hand:{h.name}", rel, h.kernel, h.entry, "hand", h.cls, pos, pos + len(h.old), h.old,
                                  h.new, h.note, text.count("\n", 0, pos) + 1, h.rule))
    return out_mutants, problems


# ---------------------------------------------------------------------------------------------- allow-list

@dataclass(frozen=True)
class Allowed:
    kernel: str  # a kernel name or "*"
    mutation: str  # a mutant id, or a prefix ending in "*"
    reason: str

    def matches(self, mu: Mutant) -> bool:
        if self.kernel not in ("*", mu.kernel):
            return False
        if self.mutation.endswith("*"):
            return mu.id.startswith(self.mutation[:-1])
        return mu.id == self.mutation


def load_allow_list(path: Path | None = None) -> list[Allowed]:
    """The entries of rules/equivalent_mutants.toml (or PATH); an entry without kernel, mutation or reason
    is an error."""
    if path is None:
        from ..rules import RULES_DIR
        path = RULES_DIR / "equivalent_mutants.toml"
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    data = tomllib.loads(path.read_text())
    out = []
    for i, e in enumerate(data.get("mutant", [])):
        missing = [k for k in ("kernel", "mutation", "reason") if not str(e.get(k, "")).strip()]
        if missing:
            raise ValueError(f"{path}: [[mutant]] #{i + 1} lacks {', '.join(missing)}")
        out.append(Allowed(e["kernel"], e["mutation"], " ".join(e["reason"].split())))
    return out


def allowed_reason(mu: Mutant, allow: list[Allowed]) -> str:
    return next((a.reason for a in allow if a.matches(mu)), "")


# ---------------------------------------------------------------------------------------------- running

def prepare_copy(src: Path, dst: Path, kernels: Iterable[str] | None = None, kernel_only: bool = True) -> Path:
    """A copy of the output directory SRC at DST for mutation runs. Sources in the manifest become absolute
    (they are relative to the output). With `kernels`, only the modules holding them are kept (manifest and
    lib.rs); with `kernel_only`, the C ABI layer (`ffi.rs`, the cdylib) is left out of the build: mutants
    change entry bodies only and verify compares entries, and it makes each round's cargo build about 3x
    cheaper. The manifest's records stay as generated (verify checks them against the sources); a run at
    fewer dtypes passes `dtypes` to `run_campaign`."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("target", ".cutile-transpile*"))
    m = json.loads((dst / "manifest.json").read_text())
    want = set(kernels) if kernels is not None else None
    if want is not None:
        m["modules"] = [mod for mod in m["modules"] if any(k["name"] in want for k in mod["kernels"])]
    for mod in m["modules"]:
        mod["source"] = str((src / mod["source"]).resolve())
    m["crate"] = "cutile_mutation_copy"  # the package name Cargo.toml gets below (the build lock cleans by it)
    (dst / "manifest.json").write_text(json.dumps(m))
    keep = {mod["rust"].split("/")[1] for mod in m["modules"]}
    lib = (dst / "src" / "lib.rs").read_text()
    parts = re.split(r"\n(?=(?:///[^\n]*\n)*pub mod \w+ \{)", lib)
    kept = [p for p in parts if not re.match(r"(?:///[^\n]*\n)*pub mod (\w+) \{", p)
            or re.match(r"(?:///[^\n]*\n)*pub mod (\w+) \{", p).group(1) in keep]
    lib = "\n".join(kept)
    # a package name of its own: the shared cargo target directory keeps the corpus crate's library intact
    cargo = dst / "Cargo.toml"
    toml = re.sub(r'(?m)^name = "[^"]*"', 'name = "cutile_mutation_copy"', cargo.read_text(), count=1)
    if kernel_only:
        lib = re.sub(r"\n\s*pub mod ffi;", "", lib)
        toml = re.sub(r'crate-type = \[[^\]]*\]', 'crate-type = ["rlib"]', toml)
    cargo.write_text(toml)
    (dst / "src" / "lib.rs").write_text(lib)
    return dst


@dataclass
class Round:
    mutants: list[Mutant]
    controls: list[str] = field(default_factory=list)  # kernels verified unmutated in this round


def schedule(mutants: list[Mutant], kernels_in_order: list[str], controls: int = 2, max_per_round: int | None = None) -> list[Round]:
    """Pack mutants into rounds, at most one per kernel (and `max_per_round`) each, in order; give each
    round up to `controls` unmutated kernels, preferring those that share a module with a mutated one."""
    rounds: list[Round] = []
    for mu in mutants:
        for r in rounds:
            if all(x.kernel != mu.kernel for x in r.mutants) and (max_per_round is None or len(r.mutants) < max_per_round):
                r.mutants.append(mu)
                break
        else:
            rounds.append(Round([mu]))
    for r in rounds:
        mutated = {x.kernel for x in r.mutants}
        files = {x.rust for x in r.mutants}
        rust_of = {x.kernel: x.rust for x in mutants}
        cands = [k for k in kernels_in_order if k not in mutated]
        cands.sort(key=lambda k: rust_of.get(k) not in files)  # stable: same-module kernels first
        r.controls = cands[:controls]
    return rounds


def classify(kv) -> tuple[str, str]:
    """(outcome, detail) of one mutated kernel's KernelVerdict (None: missing from the result)."""
    if kv is None:
        return "error", "no verdict for the kernel"
    if kv.verdict in ("different", "numbers_differ"):  # a Triton port: killed by its numbers (interpret/)
        return "killed", next((c.detail for c in kv.checks if c.verdict == kv.verdict), kv.reason)
    if kv.verdict in ("equivalent", "numbers_match"):
        return "equivalent", ""
    if "does not build" in kv.reason:
        return "rejected", kv.reason
    nv = [c.detail for c in kv.checks if c.verdict == "not_verified"]
    if any("cuTile Rust compile failed" in d for d in nv):
        return "rejected", next(d for d in nv if "cuTile Rust compile failed" in d)
    # cuTile Rust emitted Tile IR that the Tile IR verifier refuses (an op's operand shapes disagree): the
    # mutant cannot run, as if it had not compiled
    invalid = [d for d in nv if "tileirdisasm failed" in d and "failed to verify" in d]
    if invalid:
        return "rejected", invalid[0]
    return "not_verified", kv.reason or (nv[0] if nv else "")


def run_round(out: Path, rnd: Round, allow: list[Allowed], index: int = 0, log=None,
              dtypes: Iterable[str] | None = None):
    """Apply the round's mutants to OUT, verify the mutated kernels and the controls once, restore the
    pristine files (always). Returns (results, control verdicts {kernel: verdict}, seconds)."""
    import time
    from .run import verify_output

    t0 = time.monotonic()
    pristine: dict[str, str] = {}
    by_file: dict[str, list[Mutant]] = {}
    for mu in rnd.mutants:
        by_file.setdefault(mu.rust, []).append(mu)
    try:
        for rel, mus in by_file.items():
            text = pristine.setdefault(rel, (out / rel).read_text())
            for mu in sorted(mus, key=lambda x: x.start, reverse=True):
                text = mu.apply(text)
            (out / rel).write_text(text)
        names = [mu.kernel for mu in rnd.mutants] + rnd.controls
        verdicts = {v.kernel: v for v in verify_output(out, kernel_filter=names, log=log, dtypes=dtypes)}
    finally:
        for rel, text in pristine.items():
            (out / rel).write_text(text)
    results = []
    for mu in rnd.mutants:
        outcome, detail = classify(verdicts.get(mu.kernel))
        results.append(Result(mu, outcome, detail, allowed_reason(mu, allow) if outcome == "equivalent" else "", index))
    controls = {k: (verdicts[k].verdict if k in verdicts else "missing") for k in rnd.controls}
    return results, controls, time.monotonic() - t0


def figures(results: list[Result]) -> dict:
    """Counts by outcome; the kill rate is over the must-kill classes: (killed + rejected) / mutants."""
    must = [r for r in results if r.mutant.cls in MUST_KILL]
    count = lambda rs, o: sum(r.outcome == o for r in rs)  # noqa: E731
    survived = [r for r in results if not r.accepted]
    killed = count(must, "killed") + count(must, "rejected")
    return {"mutants": len(results), "must_kill": len(must), "killed": count(results, "killed"),
            "rejected": count(results, "rejected"), "allowed": sum(r.outcome == "equivalent" and bool(r.allowed) for r in results),
            "equiv_by_construction": sum(r.accepted and r.outcome == "equivalent" and not r.allowed for r in results),
            "survived": len(survived), "kill_rate": killed / len(must) if must else 1.0}


@dataclass
class Campaign:
    results: list[Result]
    controls: dict[str, str]  # "round N: kernel" -> its verdict (must be equivalent)
    rounds: int
    seconds: float


def run_campaign(out: Path, mutants: list[Mutant], allow: list[Allowed], controls: int = 1, log=None,
                 on_result: Callable[[Result], None] | None = None, max_per_round: int | None = None,
                 dtypes: Iterable[str] | None = None) -> Campaign:
    """Verify `mutants` of the output directory OUT (a copy made by `prepare_copy`: it is written to) in
    rounds (`schedule`). When a round's crate does not build, rustc may stop before it reports every
    mutant's error, so the mutants of that round that came out `equivalent` are verified again in a round
    of their own kind (confirmation) before they count as survivors. With `dtypes`, the kernels generic over
    E are verified at those dtypes only (fewer checks per round; the coverage probes of the other constants
    stay)."""
    import time

    t0 = time.monotonic()
    order = [k["name"] for _, k in manifest_kernels(out)]
    results: dict[str, Result] = {}
    ctl: dict[str, str] = {}
    n = 0
    queue = list(mutants)
    confirmed: set[str] = set()
    while queue:
        again = []
        for rnd in schedule(queue, order, controls, max_per_round):
            res, c, secs = run_round(out, rnd, allow, n, log, dtypes)
            ctl.update({f"round {n}: {k}": v for k, v in c.items()})
            built = not any(r.outcome == "rejected" and "does not build" in r.detail for r in res)
            for r in res:
                if r.outcome == "equivalent" and not built and r.mutant.id not in confirmed:
                    confirmed.add(r.mutant.id)
                    again.append(r.mutant)
                    continue
                results[r.mutant.id] = r
                if on_result:
                    on_result(r)
            if log:
                log(f"round {n}: {len(rnd.mutants)} mutants, {secs:.0f} s")
            n += 1
        queue = again
    ids = [mu.id for mu in mutants]
    return Campaign([results[i] for i in ids if i in results], ctl, n, time.monotonic() - t0)


def ci_sample(out: Path, seed: int, kernels: int = 10, per_kernel: int = 2,
              allow: list[Allowed] | None = None) -> list[Mutant]:
    """The bounded CI sample: every hand mutant, plus `per_kernel` mechanical must-kill mutants (each of
    another operator) of `kernels` kernels drawn by the seed among those without hand mutants, plus, for
    each allow-list entry that none of these matches, the first mutant it matches (so that every entry is
    checked to be still needed)."""
    hand, _ = hand_mutants(out)
    taken = {mu.kernel for mu in hand}
    names = sorted(k["name"] for _, k in manifest_kernels(out) if k["name"] not in taken)
    drawn = sorted(random.Random(f"{seed}/kernels").sample(names, min(kernels, len(names))))
    chosen = hand + sample_spread(generate(out, drawn), seed, per_kernel)
    pool = None
    for op in sorted({g for gs in RULE_GUARDS.values() for g in gs if not g.startswith("hand:")}):
        if any(mu.op == op for mu in chosen):
            continue
        pool = pool if pool is not None else generate(out)
        load = {}
        for mu in chosen:
            load[mu.kernel] = load.get(mu.kernel, 0) + 1
        extra = [mu for mu in pool if mu.op == op and mu.cls in MUST_KILL]
        if extra:  # on a kernel with the fewest mutants so far: the rounds stay few
            least = min(load.get(mu.kernel, 0) for mu in extra)
            chosen.append(random.Random(f"{seed}/guard/{op}").choice([mu for mu in extra if load.get(mu.kernel, 0) == least]))
    for a in allow or []:
        if any(a.matches(mu) for mu in chosen):
            continue
        pool = pool if pool is not None else generate(out)
        extra = next((mu for mu in pool if a.matches(mu)), None)
        if extra is not None:
            chosen.append(extra)
    return chosen
