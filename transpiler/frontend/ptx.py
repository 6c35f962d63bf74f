"""`tl.inline_asm_elementwise` of a small PTX subset, lowered to Triton expressions.

An element-wise asm block is a straight-line program over registers: `$0..` are the outputs, then the inputs
(the constraints string's order); `.reg` declares named registers; `@p` / `@!p` guard an instruction by a
predicate. Each instruction becomes a Triton expression of the registers it reads (rules/ptx.toml for the
plain ones), written to a fresh local; a guarded one selects between the new and the old value
(`tl.where(p, new, old)`, written where the register is read: an instruction under the same guard reads the side
its lanes hold, so `@!p` sequences are one chain and one select; a register not written before takes the new
value, as reading it unwritten is undefined in PTX anyway). The frontend converts the locals and the outputs' expressions as Triton source, so the
passes, the emitter and the interpreter meet nothing new.

A register holds bits: an instruction reads each operand as its own type (`.f32` float32, `.b32` uint32, ...),
which is a bitcast where the register was written as another type of the same width (`x.to(T, bitcast=True)`,
nothing where the types agree; an input's type is only known later, and the bitcast of a value to its own type
is the value). Refused, each by name: any instruction or modifier outside the subset, memory operands, branches
and labels, vector operands, `pack` > 1 (several elements per register), and outputs of another width than
their constraint.

PDL's `griddepcontrol.wait` / `griddepcontrol.launch_dependents` are dropped: they order a grid after the previous
one only under programmatic dependent launch, and the port's launches are plain stream-ordered (what Triton's
`gdc_wait` / `gdc_launch_dependents` are too: NO_OP_CALLS)."""

from __future__ import annotations

import functools
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass

from ..rules import RULES_DIR

try:
    import tomllib
except ImportError:  # pragma: no cover
    import tomli as tomllib

# instructions with no value and no statement in the port, with the operands they may have: PDL's scheduling hints
# (the port is never launched with programmatic dependent launch), and the block-wide barrier 0 that
# `tl.debug_barrier` is (`bar.sync 0`, __syncthreads: a tile block has no threads to order, and the accesses of an
# array read and written are ordered by memory tokens: NO_OP_CALLS of frontend/triton.py)
DROPPED = {"griddepcontrol.wait": [], "griddepcontrol.launch_dependents": [], "bar.sync": ["0"],
           "barrier.sync": ["0"], "barrier.sync.aligned": ["0"]}
# the bits of an input register read as a type: `_asm_register_bits(x, tl.float32)` (the frontend's bitcast of an
# asm input, which fixes a generic element type to the register's: frontend/triton.py `_inline_asm`)
REGISTER_READ = "_asm_register_bits"
# a float add / sub / mul of the asm with its rounding named (`.rn`), which no compiler contracts with other
# arithmetic (PTX: only those without a rounding modifier may be fused into an fma; a mul.rn.f32 whose product
# the code adds to stays two roundings): `_asm_opaque(a * b)`
OPAQUE = "_asm_opaque"
_OPAQUE_ARITHMETIC = ("add", "sub", "mul")
FLOAT_TYPES = ("float16", "bfloat16", "float32", "float64")
_WIDTH = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64, "int8": 8, "int16": 16, "int32": 32,
          "int64": 64, "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64, "int1": 1}
_OWN_READING = ("mov", "setp", "selp", "cvt", "lop3", "prmt", "bfe", "bfi")  # instructions read by _Program's own methods
_ROUND_TO_INT = {"rzi": "{x}", "rmi": "{tl}.floor({x})", "rpi": "{tl}.ceil({x})"}  # before the conversion


class PtxRefusal(Exception):
    """A part of the asm outside the subset: the message names it."""


@functools.lru_cache(maxsize=1)
def table() -> dict:
    return tomllib.loads((RULES_DIR / "ptx.toml").read_text())


@dataclass(frozen=True)
class Lowered:
    """Triton source of the asm: locals to assign in order, then each output's expression (None: an output the
    asm never writes, whose value PTX leaves undefined)."""
    statements: tuple[tuple[str, str], ...]
    outputs: tuple[str | None, ...]


@dataclass(frozen=True)
class _Value:
    text: str          # a Triton expression: a local's name, an input's name or a literal ("": a select not written)
    dtype: str | None  # its Triton dtype; None: an input (known to the passes only)
    literal: bool = False
    # a register written under a guard: (the predicate's local, the value where it holds, where it does not); an
    # instruction under the same guard reads its own side, so a guarded sequence is one select at its end
    arms: tuple | None = None


def lower(asm: str, constraints: str, inputs: list[str | int], out_dtypes: list[str], pack: int, tl: str,
          fresh: Callable[[str], str]) -> Lowered:
    """The asm as Triton source. `inputs` are the names holding the arguments (an int: the constant of an `n`
    constraint), `out_dtypes` the outputs' Triton dtypes (`float32`), `tl` the module's name for triton.language,
    `fresh(stem)` a new local name."""
    if pack != 1:
        raise PtxRefusal(f"`pack={pack}` (several elements per register) is not supported: write pack=1")
    outs, ins = _constraints(constraints)
    if len(ins) != len(inputs):
        raise PtxRefusal(f"the constraints name {len(ins)} inputs, the call passes {len(inputs)}")
    if len(outs) != len(out_dtypes):
        raise PtxRefusal(f"the constraints name {len(outs)} outputs, `dtype=` gives {len(out_dtypes)}")
    for bits, dt in zip(outs, out_dtypes):
        if _WIDTH.get(dt) != bits:
            raise PtxRefusal(f"an output of {dt} in a {bits}-bit register (packed values) is not supported")
    regs: dict[str, _Value] = {f"${len(outs) + i}": _Value(str(v), None, literal=isinstance(v, int))
                               for i, v in enumerate(inputs)}
    program = _Program(regs, tl, fresh)
    for text in _statements(asm):
        program.run(text)
    results = []
    for i, dt in enumerate(out_dtypes):
        v = regs.get(f"${i}")
        if v is None:
            results.append(None)
        elif v.literal:
            raise PtxRefusal(f"output ${i} is the constant {v.text}: write the constant in Triton")
        else:
            results.append(program.read_as(v, dt))
    return Lowered(tuple(program.statements), tuple(results))


def immediate_inputs(constraints: str) -> set[int]:
    """The inputs (by index) whose constraint is `n`: a constant written into the asm, not a register."""
    ins = [p.strip() for p in constraints.split(",") if not p.strip().startswith("=")]
    return {i for i, p in enumerate(ins) if p == "n"}


def _constraints(text: str) -> tuple[list[int], list[int]]:
    """The outputs' and the inputs' register widths, in order (`=r,=r,r,h`; an `n` input: 0, a constant)."""
    widths = table()["constraints"]
    outs, ins = [], []
    for part in (p.strip() for p in text.split(",")):
        out = part.startswith("=")
        letter = part[1:] if out else part
        if letter == "n" and not out:
            ins.append(0)
            continue
        if letter not in widths:
            raise PtxRefusal(f"constraint `{part}` is not supported (registers: "
                             f"{', '.join(sorted(widths))}; outputs `=r`, inputs `r`)")
        if out and ins:
            raise PtxRefusal("an output constraint after an input one")
        (outs if out else ins).append(widths[letter])
    return outs, ins


def _statements(asm: str) -> list[str]:
    """The asm's statements without comments; `{` and `}` (scopes) are statements of their own."""
    text = re.sub(r"/\*.*?\*/", " ", asm, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    out = []
    for piece in re.split(r"([{};])", text):
        piece = " ".join(piece.split())
        if piece and piece != ";":
            out.append(piece)
    return out


class _Program:
    def __init__(self, regs: dict[str, _Value], tl: str, fresh: Callable[[str], str]):
        self.regs, self.tl, self.fresh = regs, tl, fresh
        self.inputs = frozenset(regs)
        self.input_reads: dict[tuple[str, str], str] = {}
        self.selects: dict[int, tuple[_Value, _Value]] = {}  # id of a guarded value -> (it, its select's local)
        self.guard: tuple[str, bool] | None = None  # the instruction's: (the predicate's local, negated)
        self.statements: list[tuple[str, str]] = []
        self.scopes: list[dict[str, _Value | None]] = []  # per open scope: the outer values its `.reg`s hide

    # ---------------------------------------------------------------------------------------- statements
    def run(self, text: str) -> None:
        if text == "{":
            self.scopes.append({})
            return
        if text == "}":
            if not self.scopes:
                raise PtxRefusal("`}` without its `{`")
            for name, outer in self.scopes.pop().items():
                if outer is None:
                    self.regs.pop(name, None)
                else:
                    self.regs[name] = outer
            return
        if text.startswith(".reg"):
            self._declare(text)
            return
        guard, text = self._guard(text)
        self.guard = (self._predicate(guard), guard[1]) if guard is not None else None
        opcode, _, rest = text.partition(" ")
        if opcode.endswith(":") or ":" in opcode:
            raise PtxRefusal(f"label `{opcode}`: branches are not supported")
        if opcode in DROPPED and [o.strip() for o in rest.split(",") if o.strip()] == DROPPED[opcode]:
            return
        words = opcode.split(".")
        name, mods = words[0], words[1:]
        plain = table()["instruction"]
        if name not in plain and name not in _OWN_READING:
            raise PtxRefusal(f"PTX instruction `{opcode}` is not in the supported subset (docs/supported-triton.md, "
                             "inline assembly)")
        operands = [o.strip() for o in rest.split(",")] if rest.strip() else []
        for o in operands:
            if o.startswith("[") or o.startswith("{") or not o:
                raise PtxRefusal(f"operand `{o}` of `{opcode}`: memory and vector operands are not supported")
        if name == "mov":
            self._mov(opcode, mods, operands, guard)
        elif name == "setp":
            self._setp(opcode, mods, operands, guard)
        elif name == "selp":
            ty = self._type(opcode, mods, 1)
            self._arity(opcode, operands, 4)
            c = self.read_as(self._operand(operands[3], "int1", opcode), "int1")
            a, b = (self.read_as(self._operand(o, ty, opcode), ty) for o in operands[1:3])
            self._write(operands[0], f"{self.tl}.where({c}, {a}, {b})", ty, guard, opcode)
        elif name == "cvt":
            self._cvt(opcode, mods, operands, guard)
        elif name == "lop3":
            self._lop3(opcode, mods, operands, guard)
        elif name in ("bfe", "bfi"):
            self._bit_field(opcode, name, mods, operands, guard)
        elif name == "prmt":
            self._prmt(opcode, mods, operands, guard)
        else:
            self._plain(opcode, name, mods, operands, guard, plain[name])

    def _declare(self, text: str) -> None:
        """`.reg .pred p, q;` / `.reg .f32 t<2>;`: names of registers of this scope."""
        m = re.fullmatch(r"\.reg\s+(?:\.v\d\s+)?\.(\w+)\s+(.+)", text)
        if not m or m.group(1) not in table()["types"]:
            raise PtxRefusal(f"declaration `{text}` is not supported")
        for item in (s.strip() for s in m.group(2).split(",")):
            many = re.fullmatch(r"([A-Za-z_%][\w$]*)<(\d+)>", item)
            names = [f"{many.group(1)}{i}" for i in range(int(many.group(2)))] if many else [item]
            for n in names:
                if not re.fullmatch(r"[A-Za-z_%][\w$]*", n):
                    raise PtxRefusal(f"register name `{n}` is not supported")
                if self.scopes and n not in self.scopes[-1]:
                    self.scopes[-1][n] = self.regs.get(n)
                self.regs.pop(n, None)  # declared: not written yet

    def _guard(self, text: str) -> tuple[tuple[str, bool] | None, str]:
        m = re.match(r"@(!?)([\w%$]+)\s+(.*)", text)
        if not m:
            return None, text
        return (m.group(2), m.group(1) == "!"), m.group(3)

    # ---------------------------------------------------------------------------------------- instructions
    def _plain(self, opcode: str, name: str, mods: list[str], operands: list[str], guard, rule: dict) -> None:
        ty = self._type(opcode, mods, 1)
        extra = [m for m in mods[:-1]]
        for m in extra:
            if m not in rule.get("modifiers", ()):
                raise PtxRefusal(self._modifier_refusal(opcode, m))
        kind = "float" if ty in FLOAT_TYPES else "pred" if ty == "int1" else "int"
        form = next((f"{kind}_{m}" for m in extra if f"{kind}_{m}" in rule), kind)
        if form not in rule:
            raise PtxRefusal(f"PTX instruction `{opcode}` is not supported for this type or form")
        if form == "int_hi" and not ty.startswith("uint"):
            raise PtxRefusal(f"PTX instruction `{opcode}`: the high half of a signed product is not supported")
        if kind == "int" and name in ("mul", "mad") and not any(m in ("lo", "hi") for m in extra):
            raise PtxRefusal(f"PTX instruction `{opcode}`: an integer multiply needs .lo or .hi "
                             "(.wide is not supported)")
        self._arity(opcode, operands, rule["reads"] + 1)
        args = [self.read_as(self._operand(o, ty, opcode), ty) for o in operands[1:]]
        text = rule[form].format(*args, tl=self.tl)
        pinned = kind == "float" and name in _OPAQUE_ARITHMETIC and "rn" in extra
        self._write(operands[0], f"{OPAQUE}({text})" if pinned else text, ty, guard, opcode)

    def _mov(self, opcode: str, mods: list[str], operands: list[str], guard) -> None:
        """A copy: the destination holds the source's bits (its value, whatever type it was written as)."""
        ty = self._type(opcode, mods, 1)
        if len(mods) != 1:
            raise PtxRefusal(self._modifier_refusal(opcode, mods[0]))
        self._arity(opcode, operands, 2)
        src = self._operand(operands[1], ty, opcode)
        if guard is None or operands[0] not in self.regs:  # (a guarded write to an unwritten register: its value)
            self._check_dest(operands[0], opcode)
            if guard is not None:
                self._predicate(guard)
            self.regs[operands[0]] = src
            return
        self._write(operands[0], self.read_as(src, ty), ty, guard, opcode)

    def _setp(self, opcode: str, mods: list[str], operands: list[str], guard) -> None:
        """`setp.<cmp>[.ftz].<type> p, a, b`: the predicate (no second destination, no combining predicate)."""
        ty = self._type(opcode, mods, 1)
        cmp = mods[0] if len(mods) >= 2 else ""
        forms = table()["setp"]
        if cmp not in forms:
            raise PtxRefusal(f"PTX instruction `{opcode}`: comparison `.{cmp}` is not supported")
        for m in mods[1:-1]:
            if m != "ftz":
                raise PtxRefusal(self._modifier_refusal(opcode, m))
        self._arity(opcode, operands, 3)
        if "|" in operands[0]:
            raise PtxRefusal(f"PTX instruction `{opcode}` with two destination predicates is not supported")
        a, b = (self.read_as(self._operand(o, ty, opcode), ty) for o in operands[1:])
        self._write(operands[0], forms[cmp].format(a, b), "int1", guard, opcode)

    def _cvt(self, opcode: str, mods: list[str], operands: list[str], guard) -> None:
        """`cvt[.rn|.rzi|.rmi|.rpi][.ftz].dtype.atype d, a`: the conversion Triton's `.to(dtype)` makes (round to
        nearest even to a float, toward zero to an integer; .rmi / .rpi floor / ceil first)."""
        if len(mods) < 2:
            raise PtxRefusal(f"PTX instruction `{opcode}` needs a destination and a source type")
        src_ty, dst_ty = self._type(opcode, mods, 1), self._type(opcode, mods, 2)
        rounding = [m for m in mods[:-2] if m != "ftz"]
        if len(rounding) > 1 or (rounding and rounding[0] not in ("rn", *_ROUND_TO_INT)):
            raise PtxRefusal(self._modifier_refusal(opcode, rounding[-1]))
        to_int = src_ty in FLOAT_TYPES and dst_ty not in FLOAT_TYPES
        if rounding and (rounding[0] in _ROUND_TO_INT) != to_int:
            raise PtxRefusal(f"PTX instruction `{opcode}`: rounding `.{rounding[0]}` is not supported for these types")
        self._arity(opcode, operands, 2)
        x = self.read_as(self._operand(operands[1], src_ty, opcode), src_ty)
        if to_int:
            x = _ROUND_TO_INT[rounding[0] if rounding else "rzi"].format(x=x, tl=self.tl)
        self._write(operands[0], f"({x}).to({self.tl}.{dst_ty})", dst_ty, guard, opcode)

    def _lop3(self, opcode: str, mods: list[str], operands: list[str], guard) -> None:
        """`lop3.b32 d, a, b, c, immLut`: the bitwise function whose truth table is immLut (bit `a*4 + b*2 + c`
        of it is f(a, b, c)), written with & | ^ ~ by splitting on a, then b, then c."""
        ty = self._type(opcode, mods, 1)
        if ty != "uint32" or len(mods) != 1:
            raise PtxRefusal(f"PTX instruction `{opcode}` is not supported (lop3.b32 only)")
        self._arity(opcode, operands, 5)
        lut_value = self._operand(operands[4], ty, opcode)
        lut = _int_literal(lut_value.text) if lut_value.literal else None
        if lut is None or not 0 <= lut < 256:
            raise PtxRefusal(f"PTX instruction `{opcode}`: the truth table must be a constant byte, written in the "
                             "asm or passed as a literal to an `n` constraint (a constexpr local is not read here)")
        names = [self._bound(self.read_as(self._operand(o, ty, opcode), ty), "lop") for o in operands[1:4]]
        self._write(operands[0], _truth_table(lut, names, self._int_text(0xFFFFFFFF, ty)), ty, guard, opcode)

    def _bit_field(self, opcode: str, name: str, mods: list[str], operands: list[str], guard) -> None:
        """`bfe.u32 d, a, pos, len` (the field's bits, zero- or, for .s32, sign-extended) and `bfi.b32 f, a, b, pos,
        len` (b with the field replaced by a's low bits), for constant pos and len inside the word."""
        ty = self._type(opcode, mods, 1)
        if ty not in ("uint32", "int32") or len(mods) != 1 or (name == "bfi" and ty != "uint32"):
            raise PtxRefusal(f"PTX instruction `{opcode}` is not supported (bfe.u32, bfe.s32, bfi.b32 only)")
        self._arity(opcode, operands, 4 if name == "bfe" else 5)
        pos, size = (self._operand(o, ty, opcode) for o in operands[-2:])
        pos, size = (_int_literal(v.text) if v.literal else None for v in (pos, size))
        if pos is None or size is None or not (0 <= pos and 1 <= size and pos + size <= 32):
            raise PtxRefusal(f"PTX instruction `{opcode}`: the field's position and length must be constants inside "
                             "the 32-bit word")
        a = self.read_as(self._operand(operands[1], ty, opcode), ty)
        if name == "bfe" and ty == "int32":  # the field to the top, then an arithmetic shift down
            text = f"(({a} << {32 - pos - size}) >> {32 - size})" if pos + size < 32 else f"({a} >> {32 - size})"
        elif name == "bfe":
            text = f"(({a} >> {pos}) & {self._int_text((1 << size) - 1, ty)})"
        else:
            b = self.read_as(self._operand(operands[2], ty, opcode), ty)
            field = ((1 << size) - 1) << pos
            text = (f"(({b} & {self._int_text(~field & 0xFFFFFFFF, ty)}) | "
                    f"(({a} << {pos}) & {self._int_text(field, ty)}))")
        self._write(operands[0], text, ty, guard, opcode)

    def _prmt(self, opcode: str, mods: list[str], operands: list[str], guard) -> None:
        """`prmt.b32 d, a, b, c` (default mode): byte i of d is byte `s & 7` of the pair b:a (a the low word), or
        that byte's sign bit spread over the byte where `s & 8`, for the selector nibble s = c >> 4i."""
        ty = self._type(opcode, mods, 1)
        if ty != "uint32" or len(mods) != 1:
            raise PtxRefusal(f"PTX instruction `{opcode}` is not supported (prmt.b32 in its default mode only)")
        self._arity(opcode, operands, 4)
        a, b = (self._bound(self.read_as(self._operand(o, ty, opcode), ty), "prmt") for o in operands[1:3])
        sel = self._operand(operands[3], ty, opcode)
        parts = []
        if sel.literal:  # a constant selector: each byte's source known now
            c = _int_literal(sel.text)
            for i in range(4):
                s = (c >> (4 * i)) & 0xF
                word, k = (a if s & 4 == 0 else b), s & 3
                if s & 8:
                    byte = f"((({word} >> {8 * k + 7}) & 1) * 255)"
                else:
                    byte = f"(({word} >> {8 * k}) & 255)"
                parts.append(f"({byte} << {8 * i})" if i else byte)
        else:
            c = self._bound(self.read_as(sel, ty), "prmt_sel")
            for i in range(4):
                s = self._bound(f"({c} >> {4 * i}) & 15", "prmt_nibble")
                word = self._bound(f"{self.tl}.where(({s} & 4) != 0, {b}, {a})", "prmt_word")
                shift = self._bound(f"({s} & 3) * 8", "prmt_shift")
                sign = f"(({word} >> ({shift} + 7)) & 1) * 255"
                byte = f"{self.tl}.where(({s} & 8) != 0, {sign}, ({word} >> {shift}) & 255)"
                parts.append(f"({byte}) << {8 * i}" if i else f"({byte})")
        self._write(operands[0], " | ".join(parts), ty, guard, opcode)

    # ---------------------------------------------------------------------------------------- registers
    def _type(self, opcode: str, mods: list[str], from_end: int) -> str:
        types = table()["types"]
        if any(re.fullmatch(r"b?f16x2|[su]16x2|[a-z]+\d+x\d+", m) for m in mods):
            raise PtxRefusal(f"PTX instruction `{opcode}`: packed values (`.f16x2` and the like: two elements in one "
                             "register) are not supported")
        if len(mods) < from_end or mods[-from_end] not in types:
            raise PtxRefusal(f"PTX instruction `{opcode}` has no supported type (.f32, .s32, .u32, .b32, ...)")
        return types[mods[-from_end]]

    def _modifier_refusal(self, opcode: str, modifier: str) -> str:
        if modifier in ("rz", "rm", "rp"):
            return (f"PTX instruction `{opcode}`: rounding `.{modifier}` is not supported (Triton's operations round "
                    "to nearest even)")
        return f"PTX instruction `{opcode}`: modifier `.{modifier}` is not supported"

    def _arity(self, opcode: str, operands: list[str], n: int) -> None:
        if len(operands) != n:
            raise PtxRefusal(f"PTX instruction `{opcode}` takes {n} operands, not {len(operands)}")

    def _check_dest(self, name: str, opcode: str) -> None:
        if not re.fullmatch(r"\$\d+|[A-Za-z_%][\w$]*", name):
            raise PtxRefusal(f"destination `{name}` of `{opcode}` is not a register")
        if name in self.inputs:
            raise PtxRefusal(f"`{opcode}` writes input register {name}")

    def _operand(self, text: str, ty: str, opcode: str) -> _Value:
        if text in self.regs:
            v = self.regs[text]
            if v.arms is not None and self.guard is not None and v.arms[0] == self.guard[0]:
                return v.arms[2] if self.guard[1] else v.arms[1]  # the side this guard's lanes hold
            return v
        if re.fullmatch(r"\$\d+|[A-Za-z_%][\w$]*", text):
            raise PtxRefusal(f"`{opcode}` reads register `{text}` before it is written")
        if ty in FLOAT_TYPES:
            value = _float_literal(text)
            if value is None:
                raise PtxRefusal(f"operand `{text}` of `{opcode}` is not a float constant")
            return _Value(value, ty, literal=True)
        value = _int_literal(text)
        if value is None:
            raise PtxRefusal(f"operand `{text}` of `{opcode}` is not an integer constant")
        return _Value(self._int_text(value, ty), ty, literal=True)

    def _int_text(self, value: int, ty: str) -> str:
        """An integer constant as `ty`: a literal where Triton reads it so (int32's range), else its bits."""
        bits = _WIDTH[ty]
        value &= (1 << bits) - 1
        signed = value - (1 << bits) if value >= 1 << (bits - 1) else value
        if -2 ** 31 <= signed < 2 ** 31 and (not ty.startswith("uint") or signed >= 0):
            return str(signed) if ty.startswith("int") else str(value)
        return f"{self.tl}.cast({signed}, {self.tl}.{ty}, bitcast=True)"

    def read_as(self, v: _Value, ty: str) -> str:
        """A register's bits read as `ty` (a bitcast where it was written as another type)."""
        if v.arms is not None:
            v = self._select(v)
        if v.dtype == ty or (v.literal and v.dtype is not None and (v.dtype in FLOAT_TYPES) == (ty in FLOAT_TYPES)):
            return v.text
        if v.literal and v.dtype is None:  # an `n` constant: written as the instruction's type
            return _float_literal(v.text) if ty in FLOAT_TYPES else self._int_text(int(v.text), ty)
        if v.literal:
            raise PtxRefusal(f"the constant {v.text} read as {ty}: write the constant in Triton")
        if ty == "int1" or v.dtype == "int1":
            raise PtxRefusal("a predicate register read as a value, or a value as a predicate, is not supported")
        if v.dtype is None:  # an input: its type is known to the passes (ops/elementwise._register_input)
            key = (v.text, ty)
            if key not in self.input_reads:  # read once per type
                self.input_reads[key] = self._bound(f"{REGISTER_READ}({v.text}, {self.tl}.{ty})", "in")
            return self.input_reads[key]
        return f"{v.text}.to({self.tl}.{ty}, bitcast=True)"

    def _bound(self, text: str, stem: str) -> str:
        """An expression read more than once, in a local of its own (a name stays as it is)."""
        if re.fullmatch(r"[A-Za-z_]\w*|-?\d+", text):
            return text
        name = self.fresh(f"asm_{stem}")
        self.statements.append((name, text))
        return name

    def _predicate(self, guard: tuple[str, bool]) -> str:
        """The predicate register a guard `@p` / `@!p` reads."""
        pred = self.regs.get(guard[0])
        if pred is None or pred.dtype != "int1":
            raise PtxRefusal(f"guard `@{'!' if guard[1] else ''}{guard[0]}` is not a written predicate")
        return pred.text

    def _write(self, dest: str, text: str, ty: str, guard, opcode: str) -> None:
        self._check_dest(dest, opcode)
        old = self.regs.get(dest)
        if guard is not None:
            pred = self._predicate(guard)
        stem = "r" + dest[1:] if dest.startswith("$") else re.sub(r"\W", "", dest) or "r"
        if guard is not None and old is not None:  # a select, written where read (`_select`)
            holds, other = (old.arms[1], old.arms[2]) if old.arms is not None and old.arms[0] == pred else (old, old)
            new = _Value(self._bound(text, stem), ty)
            self.regs[dest] = _Value("", ty, arms=(pred, holds, new) if guard[1] else (pred, new, other))
            return
        name = self.fresh(f"asm_{stem}")
        self.statements.append((name, text))
        self.regs[dest] = _Value(name, ty)

    def _select(self, v: _Value) -> _Value:
        """A guarded register's value as one local: `tl.where(p, where it holds, where not)` (once per value)."""
        if id(v) not in self.selects:
            pred, holds, other = v.arms
            text = f"{self.tl}.where({pred}, {self.read_as(holds, v.dtype)}, {self.read_as(other, v.dtype)})"
            self.selects[id(v)] = (v, _Value(self._bound(text, "sel"), v.dtype))
        return self.selects[id(v)][1]


def _truth_table(lut: int, names: list[str], ones: str) -> str:
    """f(a, b, c) of an 8-entry truth table as bitwise expressions (Shannon expansion on the first variable)."""
    def build(t: int, k: int) -> str:
        size = 1 << k
        full = (1 << size) - 1
        t &= full
        if t == 0:
            return "0"
        if t == full:
            return ones
        var = names[3 - k]
        half = size // 2
        lo, hi = t & ((1 << half) - 1), t >> half  # the variable 0 / 1
        if lo == hi:
            return build(lo, k - 1)
        low_full = (1 << half) - 1
        if lo == 0 and hi == low_full:
            return var
        if hi == 0 and lo == low_full:
            return f"~{var}"
        if hi == lo ^ low_full:
            return f"({var} ^ {build(lo, k - 1)})"
        if lo == 0:
            return f"({var} & {build(hi, k - 1)})"
        if hi == 0:
            return f"(~{var} & {build(lo, k - 1)})"
        if hi == low_full:
            return f"({var} | {build(lo, k - 1)})"
        if lo == low_full:
            return f"(~{var} | {build(hi, k - 1)})"
        return f"(({var} & {build(hi, k - 1)}) | (~{var} & {build(lo, k - 1)}))"
    return build(lut, 3)


def _int_literal(text: str) -> int | None:
    m = re.fullmatch(r"(-?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)U?", text)
    if not m:
        return None
    digits = m.group(2)
    value = int(digits, 8) if re.fullmatch(r"0[0-7]+", digits) else int(digits, 0)
    return -value if m.group(1) else value


def _float_literal(text: str) -> str | None:
    """A PTX float constant as a Python float literal (`0f3F800000`: single bits, `0d...`: double bits)."""
    m = re.fullmatch(r"(-?)0([fFdD])([0-9a-fA-F]+)", text)
    if m:
        single = m.group(2) in "fF"
        raw = int(m.group(3), 16)
        value = struct.unpack("<f" if single else "<d", raw.to_bytes(4 if single else 8, "little"))[0]
        value = -value if m.group(1) else value
    else:
        try:
            value = float(text)
        except ValueError:
            whole = _int_literal(text)
            if whole is None:
                return None
            value = float(whole)
    if value != value:
        return "float('nan')"
    if value in (float("inf"), float("-inf")):
        return f"float('{'-' if value < 0 else ''}inf')"
    return repr(value)
