"""The units the LLM fallback completes, in the model: placeholders, holes and accepted fragments.

A cuTile Python assignment the rules reject becomes `x = llm_unit(reads...)`: in the frontend (with
`llm_units`), or afterwards when a pass rejects it (`unit_at`, from the frontend's record of the assignments).
To ask for it, the kernel is cut at the unit (`with_hole`): everything before it, then `llm_hole(reads...)`,
which the passes type and the emitter lowers to nothing but a record of the values in scope and the Rust
written so far. An answer that passes the allow-list replaces the placeholder with `llm_fragment` (its Rust,
hash, model and declared result type), typed by its declaration and emitted verbatim under a marker line.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..diagnostics import Diagnostic
from ..model.ir import FLOAT_DTYPES, INT_DTYPES, Assign, Eval, For, If, Kernel, Op, Pos, TileTy, While

# the rejections a unit may stand for: constructs and calls without a rule, argument forms, types and shapes
# the rules cannot combine, tile shapes, annotations, constructs whose Rust form the rules cannot write
UNIT_CODES = frozenset({"CT100", "CT101", "CT102", "CT104", "CT105", "CT106", "CT107"})
UNIT, HOLE, FRAGMENT = "llm_unit", "llm_hole", "llm_fragment"


def unit_op(code: str, reads: tuple, diag: Diagnostic, pos: Pos) -> Op:
    return Op(UNIT, reads, pos, attrs=(("code", code), ("diag", (diag.code, diag.message, diag.pos))))


def unit_at(kernel: Kernel, sites: list[dict], diag: Diagnostic) -> Kernel | None:
    """The kernel with the assignment a pass rejected (the frontend's site whose span holds the diagnostic's
    position) made a unit; None when no such assignment stands in the kernel's body."""
    from ..model.ir import Name
    at = (diag.pos.line, diag.pos.col)
    site = next((x for x in sites if x["span"] and x["span"][0] <= at <= x["span"][1]), None)
    if site is None or not (diag.code in UNIT_CODES or diag.code.startswith("CTR-")):
        return None
    start = site["span"][0]

    def swap(stmts, done: list) -> tuple:
        out = []
        for s in stmts:
            if not done and isinstance(s, Assign) and s.targets == (site["target"],) and (s.pos.line, s.pos.col) == start \
                    and not (isinstance(s.value, Op) and s.value.op == FRAGMENT):  # an answer is not asked again
                op = unit_op(site["code"], tuple(Name(n, s.pos) for n in site["reads"]), diag, s.pos)
                s = replace(s, value=replace(op, attrs=op.attrs + site["context"]))
                done.append(True)
            elif isinstance(s, (For, While)):
                s = replace(s, body=swap(s.body, done))
            elif isinstance(s, If):
                s = replace(s, body=swap(s.body, done), orelse=swap(s.orelse, done))
            out.append(s)
        return tuple(out)

    done: list = []
    body = swap(kernel.body, done)
    return replace(kernel, body=body) if done else None


def original_diagnostic(unit: Op) -> Diagnostic:
    code, message, pos = unit.attr("diag")
    return Diagnostic("error", code, message, pos)


def units(kernel: Kernel) -> list[Assign]:
    """The kernel's unresolved units, in source order."""
    found: list[Assign] = []

    def walk(stmts) -> None:
        for s in stmts:
            if isinstance(s, Assign) and isinstance(s.value, Op) and s.value.op == UNIT:
                found.append(s)
            elif isinstance(s, (For, While)):
                walk(s.body)
            elif isinstance(s, If):
                walk(s.body)
                walk(s.orelse)

    walk(kernel.body)
    return found


def with_hole(kernel: Kernel, unit: Assign) -> Kernel:
    """The kernel up to `unit`, which becomes a hole (the statements after it, at every level, are cut)."""
    def cut(stmts) -> tuple[tuple, bool]:
        out = []
        for s in stmts:
            if s is unit:
                hole = Op(HOLE, s.value.args, s.pos, attrs=s.value.attrs + (("target", s.targets[0]),))
                return tuple(out) + (Eval(hole, s.pos),), True
            if isinstance(s, (For, While)):
                body, found = cut(s.body)
                if found:
                    return tuple(out) + (replace(s, body=body),), True
            elif isinstance(s, If):
                body, found = cut(s.body)
                if found:
                    return tuple(out) + (replace(s, body=body, orelse=(), declares=()),), True
                orelse, found = cut(s.orelse)
                if found:
                    return tuple(out) + (replace(s, orelse=orelse, declares=()),), True
            out.append(s)
        return tuple(out), False

    body, found = cut(kernel.body)
    assert found, "the unit is not in the kernel"
    return replace(kernel, body=body)


def with_fragment(kernel: Kernel, unit: Assign, rust: str, result: TileTy, digest: str, model: str) -> Kernel:
    """The kernel with `unit` completed by an accepted fragment."""
    frag = Op(FRAGMENT, unit.value.args, unit.value.pos,
              attrs=(("rust", rust), ("result", result), ("hash", digest), ("model", model),
                     ("code", unit.value.attr("code"))))

    def swap(stmts) -> tuple:
        out = []
        for s in stmts:
            if s is unit:
                s = replace(s, value=frag)
            elif isinstance(s, (For, While)):
                s = replace(s, body=swap(s.body))
            elif isinstance(s, If):
                s = replace(s, body=swap(s.body), orelse=swap(s.orelse))
            out.append(s)
        return tuple(out)

    return replace(kernel, body=swap(kernel.body))


_TILE = re.compile(r"^Tile\s*<\s*([A-Za-z0-9_]+)\s*,\s*\{\s*\[([^\]]*)\]\s*\}\s*>$")
DTYPES = ("bool",) + FLOAT_DTYPES + INT_DTYPES


def parse_result_type(text: str, kernel: Kernel, entry_generics: list[str]) -> TileTy:
    """The model type of an answer's declared Rust type: a scalar dtype or `Tile<D, { [dims] }>`, with D a
    dtype or one of the entry's element-type generics and each dim a literal or an int constant of the entry
    (`entry_generics` as the entry declares them: `E: ElementType`, `const BLOCK: i32`). Raises ValueError."""
    from ..emit.lower import rust_ident
    text = " ".join(text.split())
    generics = {g.split(":")[0].strip() for g in entry_generics if g.endswith("ElementType")}
    floats = {p.name for p in kernel.params if p.kind == "const" and p.const_type == "float"}
    model = {rust_ident(p.name): p.name for p in kernel.params}
    consts = {}
    for g in entry_generics:
        if g.startswith("const "):
            name = g[len("const "):].split(":")[0].strip()
            if model.get(name, name) not in floats:
                consts[name] = model.get(name, name)
    if text in DTYPES:
        return TileTy(text)
    m = _TILE.match(text)
    if not m:
        raise ValueError(f"the declared type `{text}` is not a scalar dtype or `Tile<D, {{ [dims] }}>`")
    dtype, dims = m.group(1), [d.strip() for d in m.group(2).split(",") if d.strip()]
    if dtype not in DTYPES and dtype not in generics:
        raise ValueError(f"`{dtype}` in the declared type is not a dtype or an element-type generic of the kernel")
    shape = []
    for d in dims:
        if d.isdigit() and int(d) > 0:
            shape.append(d)
        elif d in consts:
            shape.append(consts[d])
        else:
            raise ValueError(f"tile dimension `{d}` of the declared type is not a literal or an int constant of "
                             "the kernel")
    return TileTy(dtype, tuple(shape))
