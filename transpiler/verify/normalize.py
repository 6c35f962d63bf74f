"""Normal form of Tile IR text (as printed by `tileirdisasm`) for comparing two compilers' output.

Both sides are disassembled by the same printer, then rewritten into a canonical text where two
programs compare equal exactly when they perform the same memory operations and control flow in
the same order on values computed by the same expressions. Every rule is listed in `RULES` and
each has a test in `tests/test_normalize.py`; mutants in `tests/test_mutants.py` prove that a real
difference survives normalization.

The canonical text has one line per *anchor* (an effect: every op that is not on the list of ops
known to be pure, `_PURE_OPS`: loads, stores, atomics, fences, prints, `for`/`if`/`loop`, terminators,
any op this module does not know) in program order. Pure ops are not printed where
they were defined: each is printed once, just before the first anchor that needs it, under a name
that depends only on its structure. That makes the result independent of SSA names, of where
pure ops were placed (hoisted out of loops or not) and of duplicated pure ops (CSE). Memory tokens
are not printed as values; the ordering they impose between accesses to one array is (N17).
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass, field

RULES: dict[str, str] = {
    "N1-ssa-names": "SSA value names are replaced by structural names (%vN in first-use order).",
    "N2-entry-args": "Entry arguments are named by the kernel parameter they carry (x.ptr, x.shape0, "
    "x.stride0); the extra partition arguments of a cuTile Rust `&mut Tensor` are x.pshapeI/x.pstrideI.",
    "N3-entry-symbol": "Entry symbol names are dropped (each compiler mangles differently).",
    "N4-hint-keys": "Optimization-hint dictionaries are compared as the hints in force per architecture: "
    "`default` merged with each `sm_NN` group either side names and with the compile target (Python writes "
    "plain hints as `default`, Rust as the compile target); architectures without hints are dropped.",
    "N5-assume": "`assume` ops are aliases of their operand (the value flows through unchanged), but their "
    "facts are compared: each fact (the whole predicate, `bounded<0, 0>` is not `bounded<0, ?>`) is printed "
    "as `assume PRED, VALUE : TYPE` at the end of the region it is made in, sorted by the value's structure "
    "(a fact made in a `for` or `loop` body about a value made before the loop, reading none of the loop's block "
    "arguments or effects, is printed where the loop is: cuTile Rust states a view's facts where it makes "
    "the view, in the loop, cuTile Python where it computes the extent), "
    "except the facts on the allow-list `ASSUME_ALLOWED` (true by construction, made by one compiler and "
    "not the other), which are dropped on both sides.",
    "N6-tokens": "Memory tokens are erased as values (`make_token`, `join_tokens`, `token = ...` operands, token "
    "results): Python threads one token per array, Rust one per tensor. Program order of memory "
    "ops is still compared, since anchors are printed in order, and so is the ordering the tokens express "
    "where it can matter (N17).",
    "N17-token-order": "Each memory effect (an op that takes or gives a token) is printed with the effects it "
    "is ordered after through token def-use, transitively (`join_tokens`, loop-carried tokens, `if`/loop "
    "results): `; mem#3 after mem#1, mem#2`, numbered in program order among the effects in a kept pair. "
    "A pair is kept when one of the two may write (every effect but `load_view_tko`/`load_ptr_tko`) and both "
    "may touch the same array (the address traced through views, offsets, shape ops and `assume` to a pointer "
    "argument; an address of unknown origin matches every array). Pairs of two loads, or of two different "
    "arrays, are irrelevant (both compilers take distinct arguments as distinct arrays). Every other pair is "
    "compared: two stores (write after write: cuTile Python orders every store of an array after the "
    "previous one, so the port chains them too; unordered, the earlier store may win), loads after stores, "
    "stores after loads and every pair with an atomic or another effect.",
    "N7-cse-dce": "Pure ops (only the ops listed in `_PURE_OPS`; every other op, known or not, is an effect "
    "printed in program order and never erased) are compared by structure: duplicates merge (CSE), unused ones vanish (DCE), "
    "and their position (hoisted out of a loop or not) does not matter.",
    "N8-const-fold-ftof": "`ftof`/`itof`/`exti`/`trunci` of a splat constant is folded into a constant of "
    "the result type, exactly (`ftoi` too, of an integral value in the result's signed or unsigned range: an "
    "integer literal taken as an integer element type): `exti`/`itof` by their `signed`/`unsigned` word (zero-extension for "
    "`unsigned`), `ftof`/`itof` only with nearest-even rounding (no rounding attribute or "
    "`rounding<nearest_even>`); a conversion with another rounding mode, any other attribute, no "
    "signedness, a tf32 side or a value that would round twice is not folded; to f8 (E4M3FN, E5M2), only a value "
    "that is exactly an f8 value (no rounding at all), and an f8 constant parses to its bits. A conversion to the same type is dropped, a "
    "`bitcast` to the same type too (Tile IR integers are signless: cuTile Rust's u64 view of an i64 "
    "gather index is `bitcast : tile<i64> -> tile<i64>`, where cuTile Python uses the index as is).",
    "N9-float-literals": "Float constants are compared as bit patterns of their element type, parsed from "
    "the printed value (tileirdisasm prints 7 significant digits, so f32 constants that differ "
    "only past the 7th digit compare equal; f16/bf16 compare exactly).",
    "N10-whitespace": "Runs of spaces are collapsed.",
    "N12-continue-passthrough": "An `if` whose then-arm ends in `continue` (or `break`) and whose else-arm only yields "
    "values through is compared as an `if` with an empty else-arm whose results are those values "
    "(cuTile Rust carries loop values out of such an `if`; cuTile Python does not).",
    "N13-boolean-identities": "`xori x, false` and `ori x, false` and `andi x, true` (splat i1 constants) "
    "are x (cuTile Python keeps `xori r, false` in its `%` lowering for literal divisors).",
    "N14-shape-ops-on-constants": "`reshape`/`broadcast` of a splat constant is that constant splat over the "
    "result shape (cuTile Python materializes integer splats at the entry top; a cuTile Rust const generic "
    "can only be broadcast from a rank-0 value).",
    "N15-return-guards": "`if c { ...; return } else { }` followed by the rest of the entry is compared as "
    "`if c { ... } else { rest }` (cuTile Rust has no `return` below the top level; both run the rest "
    "exactly when c is false).",
    "N16-float-overflow": "A float constant whose value lies past its element type's range (a printed "
    "f32 constant converted to f16, `padding_value=-1e30` in an f16 gather) is ±inf, as IEEE rounding "
    "(and both compilers) encode it; NaN and every finite in-range value keep their exact bits.",
    "N18-bitcast-constants": "`bitcast` of a splat constant between an integer and a float type of the same "
    "width is folded into the constant of the result type with exactly those bits (the integer taken modulo "
    "2^width): cuTile Rust receives a ct.Constant[float] as a const generic i32 holding its f32 bits and "
    "bitcasts it, where cuTile Python writes the float constant. Bits are kept, never a value: a bitcast with "
    "an attribute, between types of different widths or to/from tf32 is not folded.",
    "N19-condition-in-its-arms": "In `%r = if c -> (tile<i1>)` (one i1 result), an arm whose `yield` passes "
    "`c` itself yields the constant `c` has there (true in the then-arm, false in the else-arm): cuTile "
    "Python lowers `a and b` as `if a { yield b } else { yield a }`, cuTile Rust as `if a { yield b } else "
    "{ yield false }`. Nothing else in the arms is rewritten.",
    "N20-select-padding": "`%l = load_ptr_tko %p, %m` (a mask, no padding) whose loaded tile has one use, "
    "`%s = select %m, %l, %pad` with the same mask, where %pad is a splat constant of the loaded type "
    "(through reshape, broadcast and conversions), is `%l = load_ptr_tko %p, %m, %pad`, and %s is %l: "
    "masked-off lanes read the padding either way (cuTile Rust 0.5.0 cannot pass a padding to a load of "
    "rank >= 2, so the port selects it).",
    "N21-empty-loops": "A `for` with no results whose body, normalized, is empty (only pure ops whose values "
    "nothing uses) is dropped: it has no effect (cuTile Python drops the empty second loop of a loop split "
    "that cuTile Rust keeps).",
    "N22-constant-comparisons": "`cmpi` of two splat integer constants of one type is the i1 constant of its "
    "outcome, read at their width with the comparison's signedness (cuTile Python folds the sign test of `%` "
    "by a constant expression; cuTile Rust keeps the comparison).",
    "N24-constant-division": "`divi` of two splat integer constants of one type (signed or unsigned, rounding "
    "toward zero, negative or positive infinity) is the constant of its quotient, read at their width; a zero "
    "divisor, the signed overflow (MIN / -1) or any other attribute is not folded (cuTile Python folds `0 // TILE` "
    "on Python constants; cuTile Rust keeps the division of two constants).",
    "N23-if-passthrough": "A result of an `if` that both arms' `yield`s pass as the same value (one defined "
    "before the `if`: an arm cannot name the other arm's values) is that value: it is dropped from the `if` "
    "and its uses read the value (cuTile Rust carries every variable an `if` may assign through both arms, "
    "cuTile Python only the ones an arm changes).",
    "N25-single-trip-for": "Inside a `for` from the constant lb to the constant ub with a positive constant step "
    "s and lb < ub <= lb + s (exactly one iteration), the induction variable is the constant lb (cuTile Rust folds "
    "`j * TILE` to 0 in `for j in 0..1`, cuTile Python keeps the multiplication). The loop header is compared as is.",
    "N26-constant-int-arith": "`addi`/`subi`/`muli` of two splat integer constants of one type, without attributes, "
    "is the constant of its result modulo 2^width (then N14 and the other folds apply to it); an op with an "
    "overflow attribute is not folded.",
    "N27-permuted-scan": "`permute x [p]`, a `scan` of it along dim 0 and a `permute` of the scan by the inverse of "
    "p, each value used once, is the scan of x along dim p[0] (cuTile Rust 0.5.0 scans along dim 0 whatever its "
    "`dim`, so the port moves the axis to the front and back; the scan's other attributes and body are compared).",
    "N28-dead-weak-loads": "A `load_view_tko weak` / `load_ptr_tko weak` whose tile nothing reads and whose token "
    "orders nothing but other loads is dropped (those loads wait on what it waited on), before N17 orders the "
    "effects: cuTile Python's frontend removes a load "
    "whose value nothing reads, cuTile Rust keeps it (a kernel whose reads are all under a constant `if` that "
    "folds away, at a specialization such as a coverage probe). A weak load has no effect to compare; any other "
    "memory op, and any load whose tile or token is read, is compared.",
    "N29-passthrough-carries": "A value a `for` carries (not a token) that every `continue` of the loop passes "
    "back unchanged (its own region argument) is its initial value: its uses in the body and the loop's result "
    "after it read the initial value, and it leaves `iter_values`, the result types and the `continue`s "
    "(cuTile Python carries an accumulator whose updates a constant `if` folded away; cuTile Rust drops it).",
    "N30-invariant-loads": "In a `for` body that writes nothing (its ops, nested regions included, are weak "
    "loads, facts, `if`/`for` and `continue`/`yield`: no store, atomic, fence, `break` or `return`), a weak "
    "load at the body's top level that reads no block argument of the loop and no value the body makes (but "
    "loads moved before it) moves before the loop, in order: cuTile Python hoists such loads (TileGym's "
    "neighbourhood-attention dq kernel loads Q inside its loop; the port keeps them there). Reads of memory "
    "that nothing writes during the loop give the same tile in every trip.",
    "N11-identity-shape-ops": "`reshape`/`broadcast` whose result type equals the operand type are dropped "
    "(cuTile Rust's broadcast_scalar always emits reshape+broadcast, even to an all-ones shape).",
}

# Facts one compiler states and the other does not, each true by construction of the entry (so a side
# missing it is only less informed). Each has a test in tests/test_normalize.py (test_N5_allowed_*). Any
# other fact, or any other predicate on the same values (`bounded<0, 0>`, `div_by<64>`), is compared.
ASSUME_ALLOWED: dict[str, str] = {
    "ptr-arg-div16": "`div_by<16>` on a pointer entry argument (`x.ptr`), stated by cuTile Python only: it "
    "specializes on and checks 16-byte base alignment at launch. The C ABI checks element alignment only, so "
    "the same fact in the Rust IR is compared (not dropped).",
    "ptr-derived-div16": "`div_by<16>` on a pointer tile that cuTile Python derives from a pointer entry argument "
    "(through `offset`, `reshape`, `broadcast`: a gather's or scatter's addresses), stated by cuTile Python only: it "
    "follows from the 16-byte base alignment it checks at launch (`ptr-arg-div16`), which the C ABI does not check, "
    "so the port cannot state it; the Rust side missing it is only less informed. The same fact in the Rust IR "
    "is compared.",
    "ptr-natural-align": "`div_by<N>` on a `tile<ptr<T>>` value with N = sizeof(T): a pointer to T is aligned "
    "to T (cuTile Python states it on `offset` results of gathers).",
    "shape-stride-nonneg": "`bounded<0, ?>` on a shape or stride entry argument (`x.shapeI`, `x.strideI`): "
    "array extents and strides are non-negative (both compilers state it, not always for the same ones).",
    "block-id-nonneg": "`bounded<0, ?>` on a result of `get_tile_block_id` or `get_num_tile_blocks`: block "
    "ids and grid sizes are non-negative (cuTile Rust states it).",
    "for-iv-nonneg": "`bounded<0, ?>` on the induction variable of a `for` whose lower bound is >= 0 by "
    "construction (an integer constant >= 0, a block id, a grid size, an enclosing such induction variable; "
    "the step of a `for` is positive): cuTile Rust states it.",
    "for-iv-range": "`bounded<a, b>` on the induction variable of a `for` from the constant lb to the constant "
    "ub with a positive constant step, where a <= lb and b >= ub - 1: the variable stays in [lb, ub - 1] "
    "(cuTile Rust states it for loops of constant trip count).",
    "carried-div-by": "`div_by<n>` (n a power of two) on a `for` iter value whose init is an integer constant "
    "multiple of n and whose `continue` passes it on as itself plus, minus or times multiples of n (integer "
    "constants, the value itself, sums, differences and products of such; integer tiles of any shape): true in "
    "every iteration by induction; on a sum, difference or product of such multiples (the value the `continue` "
    "passes), and on the loop's result for that iter value after the loop (cuTile Python derives and states "
    "them for a counter a loop advances by whole tiles, as MoE alignment's running sum of padded counts; "
    "cuTile Rust does not).",
    "constant-in-bounds": "`bounded<a, b>` (either bound may be `?`) on a splat integer constant c with a <= c <= b: "
    "true by evaluation (cuTile Rust states the range of a one-trip loop's induction variable, which is the "
    "constant lb under N25). A bound the constant violates is compared.",
    "for-iv-below-ub": "`bounded<?, b>` on the induction variable of a `for` to the constant ub with a positive "
    "constant step or the grid size as its step (>= 1 in every launch), where b >= ub - 1 (cuTile Rust states "
    "it where only the upper bound is constant, e.g. the second loop of a split, or a persistent loop "
    "`range(bid, N, num_blocks)` to a constant N).",
}
_ELEM_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4, "tf32": 4, "f64": 8,
               "f8E4M3FN": 1, "f8E5M2": 1}

_REF = re.compile(r"%[A-Za-z0-9_.\-]+(?:#\d+)?")
_RESULTS = re.compile(r"^((?:%[A-Za-z0-9_.\-]+(?::\d+)?)(?:\s*,\s*%[A-Za-z0-9_.\-]+(?::\d+)?)*)\s*=\s*(.*)$")
# Ops known to be pure (no memory, synchronization or control effect): they are compared by structure
# (N7). Every other op (loads, stores, atomics of every kind, fences, `gdc_*`, `multimem_*`, `alloca`,
# barriers, prints, asserts, control flow, terminators, and any op not listed here) is an *effect*:
# printed in program order where it stands and never erased.
_PURE_OPS = {
    # constants, block and grid queries, views
    "constant", "iota", "get_tile_block_id", "get_num_tile_blocks", "get_index_space_shape", "get_tensor_shape",
    "make_tensor_view", "make_partition_view", "make_gather_scatter_view", "offset",
    # shapes
    "reshape", "broadcast", "permute", "cat", "extract", "expand_dims",
    # integer and float arithmetic, comparisons, selection
    "addf", "addi", "subf", "subi", "mulf", "muli", "divf", "divi", "remf", "remi", "negf", "negi", "absf", "absi",
    "maxf", "maxi", "minf", "mini", "fma", "mmaf", "mmai", "mulhii", "cmpf", "cmpi", "select",
    "andi", "ori", "xori", "shli", "shri",
    # math
    "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "sin", "cos", "tan", "sinh", "cosh", "pow", "ceil",
    "floor", "round",
    # conversions
    "ftof", "itof", "ftoi", "exti", "trunci", "bitcast", "int_to_ptr", "ptr_to_int", "ptr_to_ptr",
    # reductions with a pure body
    "reduce", "scan",
}
_PURE_REGION_DEPTH = 100  # the depth a pure op's body is named at, wherever the op is (see _canon_region)
_TOKEN_OPS = {"make_token", "join_tokens"}
_CONVERT_OPS = {"ftof", "itof", "exti", "trunci", "ftoi"}
_IDENTITY_WHEN_SAME_TYPE = _CONVERT_OPS | {"reshape", "broadcast", "bitcast"}


class IRParseError(ValueError):
    pass


@dataclass
class Op:
    results: list[str]
    name: str
    text: str  # everything after the op name, on the op's own line
    regions: list["Region"] = field(default_factory=list)


@dataclass
class Region:
    args: list[str]
    ops: list[Op]


@dataclass
class Entry:
    args: list[tuple[str, str]]  # (ssa name, type)
    hints: str
    body: Region
    order: dict[int, str] = field(default_factory=dict)  # id(op) -> its N17 suffix (`; mem#2 after mem#1`)


# ---------------------------------------------------------------------------------------- parsing

def split_top(s: str, sep: str = ",") -> list[str]:
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return [p.strip() for p in out if p.strip()]


def _sink_return_guards(ops: list[Op], top: bool) -> list[Op]:
    """N15: `if c { return } else { }; REST` is `if c { } else { REST }` (REST then ends the entry)."""
    out: list[Op] = []
    for i, op in enumerate(ops):
        token_only = all(t == "token" for t in _result_types(op.text))  # a memory token threaded out of the if
        else_ops = op.regions[1].ops if len(op.regions) == 2 else [None]
        if (op.name == "if" and (not op.results or token_only) and len(op.regions) == 2
                and all(o.name == "yield" for o in else_ops)
                and op.regions[0].ops and op.regions[0].ops[-1].name == "return" and not op.regions[0].ops[-1].text
                and all(o.name != "return" for o in op.regions[0].ops[:-1])):
            rest = ops[i + 1:]
            if top and rest and rest[-1].name == "return":
                tail, rest = [rest[-1]], rest[:-1]
            else:
                tail = []
            then = Region([], op.regions[0].ops[:-1])
            if op.results:  # the tokens the if gave REST are the else arm's: REST reads those instead
                yielded = _REF.findall(else_ops[-1].text.split(" : ")[0]) if else_ops and else_ops[-1] else []
                if len(yielded) != len(op.results):
                    raise IRParseError(f"an `if` whose else arm yields {len(yielded)} of {len(op.results)} results")
                rest = _rename(rest, dict(zip(op.results, yielded)))
            new = Op([], op.name, re.sub(r"\s*->\s*\(.*\)\s*$", "", op.text),
                     [then, Region([], _sink_return_guards(rest, False))])
            return out + [new] + tail
        out.append(op)
    return out


def _walk(ops: list[Op]):
    for o in ops:
        yield o
        for r in o.regions:
            yield from _walk(r.ops)


_SPLAT_OPS = {"constant", "reshape", "broadcast", "ftof", "itof", "exti", "trunci", "bitcast"}  # a splat stays one


def _fold_select_padding(body: list[Op]) -> list[Op]:
    """N20: a masked load without padding, selected against a splat padding under the same mask, is the
    padded load. Only where the loaded tile has no other use (a use would see undefined masked-off lanes).
    Names resolve through the regions that see them (tileirdisasm reuses a name in sibling regions)."""
    def splat(ref: str, defs: dict, chain: list[Op]) -> bool:
        """`ref` is a splat constant through shape ops and conversions; `chain` gets their ops, last first."""
        d = defs.get(ref)
        if d is None or d.name not in _SPLAT_OPS or len(chain) > 8:
            return False
        chain.append(d)
        refs = _REF.findall(d.text.split(" : ")[0])
        return d.name == "constant" and not refs or d.name != "constant" and len(refs) == 1 and splat(refs[0], defs, chain)

    def uses(ref: str, ops: list[Op]) -> int:
        return sum(_REF.findall(o.text).count(ref) for o in _walk(ops))

    def fold(ops: list[Op], visible: dict) -> list[Op]:
        defs = dict(visible)
        out: list[Op] = []
        renames: dict[str, str] = {}
        for op in ops:
            for r in op.regions:
                r.ops = fold(r.ops, defs)
            if op.name == "select" and len(op.results) == 1:
                head, _, types = op.text.partition(" : ")
                refs = split_top(head)
                load = defs.get(refs[1]) if len(refs) == 3 else None
                chain: list[Op] = []
                if (load is not None and load.name == "load_ptr_tko" and any(o is load for o in out)
                        and uses(refs[1], ops[next(j for j, o in enumerate(ops) if o is load) + 1:]) == 1
                        and splat(refs[2], defs, chain)):
                    lhead, _, ltypes = load.text.partition(" : ")
                    operands = _REF.findall(re.sub(r"\btoken\s*=\s*\S+", "", lhead))
                    tys, arrow, res = ltypes.partition(" -> ")
                    value_ty = split_top(types)[-1]
                    if (len(operands) == 2 and operands[1] == refs[0] and arrow
                            and split_top(res)[0] == value_ty and len(split_top(tys)) == 2):
                        cut = lhead.index(operands[1], lhead.index(operands[0]) + len(operands[0])) + len(operands[1])
                        load.text = f"{lhead[:cut]}, {refs[2]}{lhead[cut:]} : {tys}, {value_ty} -> {res}"
                        renames[op.results[0]] = refs[1]
                        # the padding's ops defined after the load (they depend on nothing) move before it
                        at = next(j for j, o in enumerate(out) if o is load)
                        late = [o for o in out[at + 1:] if any(o is c for c in chain)]
                        out = [o for o in out if not any(o is c for c in late)]
                        out[at:at] = late
                        continue
            out.append(op)
            for r in op.results:
                defs[r] = op
        return _rename(out, renames) if renames else out
    return fold(body, {})


_PERMUTE = re.compile(r"\s*(%[A-Za-z0-9_.\-]+(?:#\d+)?)\s*\[([\d,\s]+)\]\s*")


def _fold_permuted_scan(body: list[Op]) -> list[Op]:
    """N27: `permute x [p]`, a `scan` of it along dim 0, then `permute [p^-1]` of the scan, is the scan of x along
    dim p[0] (the port's way around cuTile Rust 0.5.0, whose scan is always along dim 0: emit/lower.py cumsum).
    Only where each intermediate value has no other use; the scan's other attributes and body are kept."""
    uses: dict[str, int] = {}
    for o in _walk(body):
        for ref in _REF.findall(o.text):
            uses[ref] = uses.get(ref, 0) + 1  # over all regions: a name reused in a sibling only over-counts

    def perm_of(op: Op | None):
        if op is None or op.name != "permute" or len(op.results) != 1:
            return None
        head, _, types = op.text.partition(" : ")
        m = _PERMUTE.fullmatch(head)
        src, arrow, dst = types.partition(" -> ")
        if not m or not arrow:
            return None
        return m.group(1), [int(x) for x in m.group(2).split(",")], src.strip(), dst.strip()

    def fold(ops: list[Op], visible: dict) -> list[Op]:
        defs = dict(visible)
        out: list[Op] = []
        renames: dict[str, str] = {}
        for op in ops:
            for r in op.regions:
                r.ops = fold(r.ops, defs)
            back = perm_of(op)
            scan = defs.get(back[0]) if back else None
            if scan is not None and scan.name == "scan" and len(scan.results) == 1 and uses.get(back[0]) == 1:
                shead, _, stypes = scan.text.rpartition(" : ")  # `identities=[0.0 : f32]` holds one too
                operands = _REF.findall(shead)
                front = perm_of(defs.get(operands[0])) if len(operands) == 1 else None
                if (front is not None and uses.get(operands[0]) == 1 and re.search(r"\bdim=0\b", shead)
                        and sorted(front[1]) == list(range(len(front[1])))
                        and back[1] == [front[1].index(i) for i in range(len(front[1]))]
                        and any(o is scan for o in out) and any(o is defs[operands[0]] for o in out)):
                    shead = shead.replace(operands[0], front[0], 1)
                    shead = re.sub(r"\bdim=0\b", f"dim={front[1][0]}", shead, count=1)
                    scan.text = f"{shead} : {front[2]} -> {back[3]}"
                    out = [o for o in out if o is not defs[operands[0]]]
                    renames[op.results[0]] = scan.results[0]
                    continue
            out.append(op)
            for r in op.results:
                defs[r] = op
        return _rename(out, renames) if renames else out
    return fold(body, {})


_ITER_VALUES = re.compile(r"iter_values\((.*?)\)\s*->\s*\((.*)\)\s*$")


def _loop_continues(ops: list[Op]):
    """The `continue`s of the loop whose body is `ops` (inside its `if`s; not those of nested loops)."""
    for o in ops:
        if o.name == "continue":
            yield o
        elif o.name == "if":
            for r in o.regions:
                yield from _loop_continues(r.ops)


def _drop_passthrough_carries(body: list[Op]) -> list[Op]:
    """N29: the carried values of a `for` that every `continue` passes back unchanged are their initial values."""
    for op in list(_walk(body)):
        if op.name != "for" or len(op.regions) != 1:
            continue
        m = _ITER_VALUES.search(op.text)
        conts = list(_loop_continues(op.regions[0].ops))
        if not m or not conts or len(op.results) < 1:
            continue
        pairs = [tuple(x.strip() for x in p.split("=", 1)) for p in split_top(m.group(1))]
        types = split_top(m.group(2))
        parts = []
        for c in conts:
            head, _, ctypes = c.text.partition(" : ")
            parts.append((split_top(head), split_top(ctypes)))
        if len(types) != len(pairs) or len(op.results) != len(pairs) or any(
                len(a) != len(pairs) or len(t) != len(pairs) for a, t in parts):
            continue
        drop = [k for k, (arg, _init) in enumerate(pairs) if types[k] != "token"
                and all(a[k] == arg for a, _ in parts)]
        if not drop:
            continue
        keep = [k for k in range(len(pairs)) if k not in drop]
        _rename(op.regions[0].ops, {pairs[k][0]: pairs[k][1] for k in drop})
        after = {op.results[k]: pairs[k][1] for k in drop}
        after.update({op.results[k]: op.results[j] for j, k in enumerate(keep) if k != j})
        for c, (a, t) in zip(conts, parts):
            c.text = ", ".join(a[k] for k in keep) + " : " + ", ".join(t[k] for k in keep)
        op.text = (op.text[:m.start()] + "iter_values(" + ", ".join(f"{pairs[k][0]} = {pairs[k][1]}" for k in keep)
                   + ") -> (" + ", ".join(types[k] for k in keep) + ")")
        results = op.results
        op.results = [results[j] for j in range(len(keep))]
        op.regions[0].args = _inline_region_args(op)
        _rename_outside(body, op, after)
    return body


def _rename_outside(body: list[Op], loop: Op, names: dict[str, str]) -> None:
    """Every use of `names` outside `loop`'s own regions renamed (the loop's results, read after it)."""
    for o in body:
        if o is loop:
            continue
        o.text = _REF.sub(lambda m: names.get(m.group(0), m.group(0)), o.text)
        for r in o.regions:
            _rename_outside(r.ops, loop, names)


_WEAK = re.compile(r"^\s*weak\b")


def _drop_dead_loads(body: list[Op]) -> list[Op]:
    """N28: weak loads whose tile nothing live reads (a pure op whose results are unused reads nothing, N7), and
    whose token (if any) only orders other loads, in every region. A load that waited on a dropped one waits
    on what that one waited on (its `token =`), or on nothing."""
    ops = list(_walk(body))
    candidates = [o for o in ops if o.name in _READS and len(o.results) in (1, 2) and _WEAK.match(o.text)]
    is_candidate = {id(o) for o in candidates}
    # what each op reads, once (a load's `token =` does not keep its producer alive)
    reads = {id(o): _REF.findall(_TOKEN_OPERAND.sub("", o.text) if o.name in _READS else o.text) for o in ops}
    kept_alive = [o for o in ops if o.name in _PURE_OPS or id(o) in is_candidate]  # alive only if read
    producers: dict[str, list[Op]] = {}
    for o in kept_alive:
        for r in o.results:
            producers.setdefault(r, []).append(o)
    live: set[str] = set()
    for o in ops:  # every effect reads what it reads (over all regions: a name reused in a sibling over-keeps)
        if o.name not in _PURE_OPS and id(o) not in is_candidate:
            live.update(reads[id(o)])
    todo, done = list(live), set()
    while todo:  # a pure op or a load whose result is read reads its operands
        for o in producers.get(todo.pop(), ()):
            if id(o) not in done:
                done.add(id(o))
                fresh = [r for r in reads[id(o)] if r not in live]
                live.update(fresh)
                todo.extend(fresh)
    dead = [c for c in candidates if not any(r in live for r in c.results)]
    if not dead:
        return body
    is_dead = {id(d) for d in dead}
    readers: dict[str, list[Op]] = {}
    for o in ops:
        if o.name in _PURE_OPS:
            for r in set(reads[id(o)]):
                readers.setdefault(r, []).append(o)
    gone = [r for d in dead for r in d.results]
    seen = set(gone)
    while gone:  # the unused pure ops that read a dropped value go too (N7 would drop them anyway)
        for o in readers.get(gone.pop(), ()):
            if id(o) not in is_dead and not any(r in live for r in o.results):
                dead.append(o)
                is_dead.add(id(o))
                fresh = [r for r in o.results if r not in seen]
                seen.update(fresh)
                gone.extend(fresh)
    waits = {c.results[1]: (m.group(1) if (m := _TOKEN_OPERAND.search(c.text)) else None)
             for c in dead if len(c.results) == 2}

    def waited(token: str | None) -> str | None:  # through a chain of dropped loads
        while token in waits:
            token = waits[token]
        return token

    def keep(ops: list[Op]) -> list[Op]:
        for o in ops:
            for r in o.regions:
                r.ops = keep(r.ops)
            if o.name in _READS and waits:
                o.text = _TOKEN_OPERAND.sub(lambda m: m.group(0) if m.group(1) not in waits else
                                            f"token = {waited(m.group(1))}" if waited(m.group(1)) else "", o.text)
        return [o for o in ops if id(o) not in is_dead]
    return keep(body)


def _rename(ops: list[Op], names: dict[str, str]) -> list[Op]:
    """The ops with every use of a value in `names` replaced by its new name (regions included), changed in
    place: N17's order is keyed by the op objects."""
    for o in ops:
        o.text = _REF.sub(lambda m: names.get(m.group(0), m.group(0)), o.text)
        for r in o.regions:
            _rename(r.ops, names)
    return ops


_ADDRESS_OPS = {"assume", "reshape", "broadcast", "offset", "make_tensor_view", "make_partition_view",
                "make_gather_scatter_view", "ptr_to_ptr",
                "permute", "expand_dims", "extract", "cat", "select"}
_TERMINATORS = {"yield", "continue", "break", "return"}
_READS = {"load_view_tko", "load_ptr_tko"}  # every other memory effect may write (fails closed)
_DEF_OR_REF = re.compile(r"(%[A-Za-z0-9_.\-]+)( in | = )|%[A-Za-z0-9_.\-]+(?:#\d+)?")  # a block argument's definition, or a use
_TOKEN_OPERAND = re.compile(r"\btoken\s*=\s*(%[A-Za-z0-9_.\-]+(?:#\d+)?)")


def _token_order(args: list[tuple[str, str]], body: list[Op]) -> dict[int, str]:
    """N17: the memory ordering that tokens express, where it can matter. An op that takes or gives a token
    is a memory effect; it is ordered after every effect whose result token reaches its token operands
    (transitively: `join_tokens`, loop-carried tokens to a fixpoint, region results). A pair is kept when one
    of the two may write (every effect but a load) and both may touch the same array: the address (view or
    pointer tile) traced through views, offsets and shape
    ops to a pointer entry argument; an address of unknown origin matches every array (fails closed). Returns
    id(op) -> `; mem#N after mem#M, ...` (N: rank among the effects in a kept pair, in program order)."""
    before: dict[int, set[int]] = {}  # effect -> effects it is ordered after
    arrays: dict[int, frozenset[int] | None] = {}  # effect -> pointer arguments it may touch (None: unknown)
    kinds: dict[int, str] = {}  # effect -> op name
    seen: list[int] = []  # effects in program order

    def origin(name: str, defs: dict, depth: int = 0) -> frozenset[int] | None:
        d = defs.get(name)
        if isinstance(d, int):
            return frozenset({d})
        if d is None or d.name not in _ADDRESS_OPS or depth > 200:
            return None  # a block argument, a loaded pointer, an op not followed: unknown
        refs = _REF.findall(d.text)
        srcs = refs[1:3] if d.name == "select" else refs if d.name == "cat" else refs[:1]
        found = [origin(r, defs, depth + 1) for r in srcs]
        return None if not srcs or None in found else frozenset().union(*found)

    def union(sets) -> frozenset[int]:
        return frozenset().union(*[s for s in sets if s is not None])

    def bind(results: list[str], exits: list[list], toks: dict) -> None:
        for i, r in enumerate(results):
            vals = [v[i] for v in exits if i < len(v) and v[i] is not None]
            if vals:
                toks[r] = union(vals)
            else:
                toks.pop(r, None)

    def walk(ops: list[Op], toks: dict, defs: dict) -> list[tuple[str, list]]:
        """Walks a region; returns the terminators reached: (name, [token set or None per operand])."""
        exits: list[tuple[str, list]] = []
        for op in ops:
            refs = _REF.findall(op.text)
            for r in op.results:
                toks.pop(r, None)
                defs[r] = op
            if op.name in _TERMINATORS:
                exits.append((op.name, [toks.get(r) for r in _REF.findall(op.text.split(" : ")[0])]))
            elif op.name == "make_token":
                toks[op.results[0]] = frozenset()
            elif op.name == "join_tokens":
                if not all(r in toks for r in refs):
                    raise IRParseError(f"join_tokens of a value that is not a known token: {op.text}")
                toks[op.results[0]] = union(toks[r] for r in refs)
            elif op.name in ("for", "loop") and op.regions:
                reg = op.regions[0]
                m = re.search(r"iter_values\((.*?)\)(?=\s*->|\s*:|\s*$)", op.text)
                pairs = [p.split(" = ") for p in split_top(m.group(1))] if m else []
                carried = [toks.get(p[1].strip()) for p in pairs]
                while True:
                    inner, inner_defs = dict(toks), dict(defs)
                    for a in reg.args:
                        inner.pop(a, None)
                        inner_defs.pop(a, None)
                    for (a, _), c in zip(pairs, carried):
                        if c is not None:
                            inner[a.strip()] = c
                    nxt, breaks = list(carried), []
                    for name, vals in walk(reg.ops, inner, inner_defs):
                        if name in ("continue", "yield"):
                            nxt = [union([c, v]) if (c is not None or v is not None) else None
                                   for c, v in zip(nxt, vals + [None] * len(nxt))]
                        elif name == "break":
                            breaks.append(vals)
                        else:
                            exits.append((name, vals))
                    if nxt == carried:
                        break
                    carried = nxt
                bind(op.results, [carried] if op.name == "for" else breaks, toks)
            elif op.regions:  # `if`, and ops with a body (reduce, scan)
                found = []
                for reg in op.regions:
                    inner, inner_defs = dict(toks), dict(defs)
                    for a in reg.args:
                        inner.pop(a, None)
                        inner_defs.pop(a, None)
                    for name, vals in walk(reg.ops, inner, inner_defs):
                        if name == "yield":
                            found.append(vals)
                        else:
                            exits.append((name, vals))  # continue / break / return leave the enclosing loop
                if op.name != "if" and any(v is not None for vals in found for v in vals):
                    raise IRParseError(f"a token yielded out of `{op.name}`")
                bind(op.results, found, toks)
            else:
                ins = [r for r in refs if r in toks]
                named = _TOKEN_OPERAND.findall(op.text)
                if any(r not in toks for r in named):
                    raise IRParseError(f"token operand of unknown origin: {op.name} {op.text}")
                types = split_top(op.text.rpartition("->" if "->" in op.text else ":")[2])
                outs = [r for r, t in zip(op.results, types) if t == "token"] if len(types) == len(op.results) \
                    else op.results[-1:] if op.name.endswith("_tko") else []
                if not ins and not outs:
                    continue  # not a memory effect (its place in program order is compared all the same)
                k = id(op)
                if k not in before:
                    before[k] = set()
                    seen.append(k)
                    view = re.search(r"(%[A-Za-z0-9_.\-]+(?:#\d+)?)\[", op.text)
                    addr = view.group(1) if view else next((r for r in refs if r not in toks), None)
                    arrays[k] = origin(addr, defs) if addr else None
                    kinds[k] = op.name
                before[k] |= union(toks[r] for r in ins)
                for r in outs:
                    toks[r] = frozenset(before[k] | {k})
        return exits

    defs: dict = {name: i for i, (name, ty) in enumerate(args) if "ptr<" in ty}
    walk(body, {}, defs)

    def related(a: int, b: int) -> bool:
        x, y = arrays[a], arrays[b]
        return (kinds[a] not in _READS or kinds[b] not in _READS) and (x is None or y is None or bool(x & y))

    kept = {e: sorted((p for p in before[e] if related(p, e)), key=seen.index) for e in seen}
    members = [e for e in seen if kept[e] or any(e in ps for ps in kept.values())]
    rank = {e: i + 1 for i, e in enumerate(members)}
    return {e: f" ; mem#{rank[e]}" + (" after " + ", ".join(f"mem#{rank[p]}" for p in kept[e]) if kept[e] else "")
            for e in members}


def parse(text: str) -> list[Entry]:
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    entries: list[Entry] = []
    i = 0
    while i < len(lines):
        ln = lines[i].strip()
        if not ln.startswith("entry @"):
            i += 1
            continue
        m = re.match(r"entry @\S+?\((.*)\)\s*(optimization_hints=<.*>)?\s*\{$", ln)
        if not m:
            raise IRParseError(f"cannot parse entry line: {ln}")
        args = []
        for a in split_top(m.group(1)):
            name, _, ty = a.partition(":")
            args.append((name.strip(), ty.strip()))
        body, i = _parse_block(lines, i + 1)
        body = _drop_dead_loads(_unique_names([a for a, _ in args], body))
        order = _token_order(args, body)  # before N15 moves ops: tokens still flow as printed
        body = _drop_passthrough_carries(_fold_permuted_scan(_fold_select_padding(body)))
        entries.append(Entry(args, m.group(2) or "", Region([], _sink_return_guards(body, True)), order))
    if not entries:
        raise IRParseError("no entry found in Tile IR text")
    return entries


def _unique_names(args: list[str], body: list[Op]) -> list[Op]:
    """Every value named once (in place). MLIR's printer numbers a region's values afresh once the region
    closes, so a later op of an enclosing region can take a name again (`%30`, a store's token inside a loop,
    then an `fma` after the loop). The flat walks over all regions (N28's liveness, N17's token order) would
    take one value for the other: a dead load read by the loop's `continue %30` is kept. Each redefinition
    gets a fresh name, and every use the definition it sees (innermost scope first)."""
    taken = {m.split("#")[0] for o in _walk(body) for m in _REF.findall(o.text) + o.results}
    taken |= {a for o in _walk(body) for r in o.regions for a in r.args} | set(args)
    defined: set[str] = set(args)

    def define(name: str, scope: dict[str, str]) -> str:
        new, k = name, 0
        while new in defined or (k and new in taken):
            k += 1
            new = f"{name}_r{k}"
        defined.add(new)
        taken.add(new)
        scope[name] = new
        return new

    def lookup(ref: str, scopes: list[dict[str, str]]) -> str:
        base, sep, idx = ref.partition("#")
        for scope in reversed(scopes):
            if base in scope:
                return scope[base] + sep + idx
        return ref

    def block(ops: list[Op], scopes: list[dict[str, str]]) -> None:
        for o in ops:
            inline = set(_inline_region_args(o)) if o.regions else set()
            inner: dict[str, str] = {}
            for a in sorted(inline):  # block arguments written in the op line (`for %i in`, `%a = %x`)
                define(a, inner)
            o.text = _DEF_OR_REF.sub(lambda m: inner[m.group(1)] + m.group(2) if m.group(1) in inner
                                     else lookup(m.group(1), scopes) + m.group(2) if m.group(1)
                                     else lookup(m.group(0), scopes), o.text)
            for r in o.regions:
                scope = dict(inner)
                r.args = [inner[a] if a in inline else define(a, scope) for a in r.args]
                block(r.ops, scopes + [scope])
            for b in dict.fromkeys(r.partition("#")[0] for r in o.results):
                define(b, scopes[-1])
            o.results = [lookup(r, scopes) for r in o.results]

    block(body, [{a: a for a in args}])
    return body


def _parse_block(lines: list[str], i: int) -> tuple[list[Op], int]:
    ops: list[Op] = []
    while i < len(lines):
        ln = lines[i].strip()
        if ln == "}" or ln.startswith("} else"):
            return ops, i
        op = _parse_op_line(ln)
        i += 1
        opens = ln.endswith("{")
        if not opens and i < len(lines) and lines[i].strip().startswith("(%") and lines[i].strip().endswith("{"):
            # a region header on its own line: (%lhs: tile<f32>, %rhs: tile<f32>) {
            hdr = lines[i].strip()[1:].rsplit(")", 1)[0]
            region_args = [a.split(":")[0].strip() for a in split_top(hdr)]
            inner, i = _parse_block(lines, i + 1)
            op.regions.append(Region(region_args, inner))
            i += 1  # closing brace
        elif opens:
            region_args = _inline_region_args(op)
            while True:
                inner, i = _parse_block(lines, i)
                op.regions.append(Region(region_args, inner))
                region_args = []
                closing = lines[i].strip() if i < len(lines) else "}"
                i += 1
                if not closing.startswith("} else"):
                    break
        ops.append(op)
    return ops, i


def _parse_op_line(ln: str) -> Op:
    body = ln[:-1].rstrip() if ln.endswith("{") else ln
    results: list[str] = []
    m = _RESULTS.match(body)
    if m and not body.startswith(("yield", "continue", "break", "return")):
        for r in split_top(m.group(1)):
            name, _, count = r.partition(":")
            if count:
                results.extend(f"{name}#{k}" for k in range(int(count)))
            else:
                results.append(name)
        body = m.group(2)
    name, _, rest = body.partition(" ")
    return Op(results, name, rest.strip())


def _inline_region_args(op: Op) -> list[str]:
    """Block arguments declared in the op line itself: `for %i in`, `iter_values(%a = %x, ...)`."""
    args = []
    m = re.match(r"(%[A-Za-z0-9_.\-]+) in ", op.text)
    if op.name == "for" and m:
        args.append(m.group(1))
    for name in re.findall(r"(%[A-Za-z0-9_.\-]+) = ", op.text):
        args.append(name)
    return args


# --------------------------------------------------------------------------------- canonical form

_FLOAT_BITS = {"f32": 32, "f16": 16, "bf16": 16, "tf32": 32, "f64": 64, "f8E4M3FN": 8, "f8E5M2": 8}
# the f8 formats: (exponent bits, mantissa bits, has infinities). E4M3FN has no infinities and one NaN pattern per
# sign (all ones); E5M2 is IEEE-like. A value converts to f8 only where it is exactly one of its 256 values (the
# normalizer mirrors no f8 rounding): see _f8_bits
_F8 = {"f8E4M3FN": (4, 3, False), "f8E5M2": (5, 2, True)}


def _f8_value(bits: int, dtype: str) -> float:
    ebits, mbits, ieee = _F8[dtype]
    sign = -1.0 if bits & 0x80 else 1.0
    e, m = (bits >> mbits) & ((1 << ebits) - 1), bits & ((1 << mbits) - 1)
    top = (1 << ebits) - 1
    if ieee and e == top:
        return sign * math.inf if m == 0 else math.nan
    if not ieee and e == top and m == (1 << mbits) - 1:
        return math.nan
    bias = (1 << (ebits - 1)) - 1
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - mbits)
    return sign * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)


class _NotExact(ValueError):
    """A float that is not exactly an f8 value: not folded, not parsed."""


def _f8_bits(value: float, dtype: str) -> int:
    for bits in range(256):
        v = _f8_value(bits, dtype)
        if v == value and math.copysign(1.0, v) == math.copysign(1.0, value):
            return bits
    raise _NotExact(f"{value!r} is not an {dtype} value")
_INT_BITS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64}


_INF_BITS = {"f32": 0x7F800000, "tf32": 0x7F800000, "f16": 0x7C00}
_SIGN_BIT = {"f32": 1 << 31, "tf32": 1 << 31, "f16": 1 << 15}


def _pack(fmt: str, value: float, dtype: str) -> int:
    """IEEE bits of `value` rounded to nearest-even; a finite value past the type's range rounds to ±inf
    (N16), as both compilers encode it (struct.pack raises OverflowError instead)."""
    try:
        return struct.unpack("<I" if fmt == "f" else "<H", struct.pack("<" + fmt, float(value)))[0]
    except OverflowError:
        return _INF_BITS[dtype] | (_SIGN_BIT[dtype] if value < 0 else 0)


def _float_to_bits(value: float, dtype: str) -> int:
    if dtype in ("f32", "tf32"):
        return _pack("f", value, dtype)
    if dtype == "f64":
        return struct.unpack("<Q", struct.pack("<d", value))[0]
    if dtype == "f16":
        return _pack("e", value, dtype)
    if dtype in _F8:
        return _f8_bits(value, dtype)
    if dtype == "bf16":
        b = _pack("f", value, "f32")
        if (b & 0x7F800000) == 0x7F800000 and b & 0x7FFFFF:
            return 0x7FC0
        return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF
    raise ValueError(dtype)


def bits_to_float(bits: int, dtype: str) -> float:
    if dtype in ("f32", "tf32"):
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    if dtype == "f64":
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    if dtype == "f16":
        return struct.unpack("<e", struct.pack("<H", bits))[0]
    if dtype == "bf16":
        return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    if dtype in _F8:
        return _f8_value(bits, dtype)
    raise ValueError(dtype)


_CONST = re.compile(r"^<(\w+): ([^>]+)> : (tile<[^>]*>)$")


def _const_value(text: str) -> tuple[str, object, str] | None:
    """`<f32: 2.0> : tile<4xf32>` -> ('f32', value, 'tile<4xf32>'), value = bits or int or bool."""
    m = _CONST.match(text.strip())
    if not m:
        return None
    dtype, raw, ty = m.groups()
    raw = raw.strip()
    if dtype in _FLOAT_BITS:
        try:
            bits = int(raw, 16) if raw.lower().startswith("0x") else _float_to_bits(float(raw), dtype)
        except _NotExact:
            return None  # an f8 constant printed with a value it cannot hold: compared as written
        return dtype, bits, ty
    if dtype == "i1":
        return dtype, raw in ("1", "true"), ty
    try:
        return dtype, int(raw, 0), ty
    except ValueError:
        return None


def _const_text(dtype: str, value: object, ty: str) -> str:
    if dtype in _FLOAT_BITS:
        return f"<{dtype}: 0x{value:0{_FLOAT_BITS[dtype] // 4}X}> : {ty}"
    if dtype == "i1":
        return f"<i1: {1 if value else 0}> : {ty}"
    return f"<{dtype}: {value}> : {ty}"


def _elem(ty: str) -> str:
    m = re.search(r"tile<(?:[0-9x]*x)?(\w+)>", ty)
    return m.group(1) if m else ""


_NEAREST_EVEN = {"", "rounding<nearest_even>"}


def _signed_value(val: int, bits: int) -> int:
    v = int(val) & ((1 << bits) - 1)
    return v - (1 << bits) if v >> (bits - 1) else v


_CMP_PREDICATES = {"equal": int.__eq__, "not_equal": int.__ne__, "less_than": int.__lt__,
                   "less_than_or_equal": int.__le__, "greater_than": int.__gt__, "greater_than_or_equal": int.__ge__}


def _fold_divi(ctx, operands: list[str], text: str, _name: str = "divi") -> tuple[str, object, str] | None:
    """N24: `divi a, b signed|unsigned [rounding<...>]` of two splat integer constants of one type, exactly."""
    m = re.match(r"\{k\d+\}, \{k\d+\}((?: \S+)*?) : (tile<[^>]*>)$", text.strip())
    if not m or not all(o.startswith("{k") for o in operands):
        return None
    words = m.group(1).split()
    signs = [w for w in words if w in ("signed", "unsigned")]
    rounding = [w for w in words if w not in ("signed", "unsigned")]
    if len(signs) != 1 or len(rounding) > 1 or (rounding and rounding[0] not in _DIV_ROUNDING):
        return None
    a, b = (ctx.consts.get(int(o[2:-1])) for o in operands)
    if a is None or b is None or a[0] != b[0] or a[0] not in _INT_BITS or a[0] == "i1" or a[2] != b[2]:
        return None
    bits = _INT_BITS[a[0]]
    if signs[0] == "signed":
        x, y = _signed_value(int(a[1]), bits), _signed_value(int(b[1]), bits)
    else:
        x, y = int(a[1]) & ((1 << bits) - 1), int(b[1]) & ((1 << bits) - 1)
    if y == 0 or (signs[0] == "signed" and x == -(1 << (bits - 1)) and y == -1):
        return None
    q = _DIV_ROUNDING[rounding[0] if rounding else "rounding<zero>"](x, y)
    return a[0], _signed_value(q, bits), a[2]


_INT_ARITH = {"addi": int.__add__, "subi": int.__sub__, "muli": int.__mul__}


def _fold_int_arith(ctx, operands: list[str], text: str, name: str) -> tuple[str, object, str] | None:
    """N26: `addi`/`subi`/`muli a, b : T` (no attribute) of two splat integer constants of one type T is the
    constant of the result modulo 2^width (two's complement: the same bits signed or unsigned)."""
    m = re.fullmatch(r"\{k\d+\}, \{k\d+\} : (tile<[^>]*>)", text.strip())
    if not m or not all(o.startswith("{k") for o in operands):
        return None
    a, b = (ctx.consts.get(int(o[2:-1])) for o in operands)
    if a is None or b is None or a[0] != b[0] or a[0] not in _INT_BITS or a[0] == "i1" or not a[2] == b[2] == m.group(1):
        return None
    return a[0], _signed_value(_INT_ARITH[name](int(a[1]), int(b[1])), _INT_BITS[a[0]]), a[2]


def _div_toward_zero(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y > 0) else -q


_DIV_ROUNDING = {"rounding<zero>": _div_toward_zero, "rounding<negative_inf>": lambda x, y: x // y,
                 "rounding<positive_inf>": lambda x, y: -((-x) // y)}


def _fold_cmpi(ctx, operands: list[str], text: str, _name: str = "cmpi") -> tuple[str, object, str] | None:
    """N22: `cmpi PRED a, b, signed|unsigned` of two splat integer constants of one type is the i1 constant of
    its outcome (cuTile Python folds it; cuTile Rust keeps it, e.g. the divisor's sign test of `%` by a
    constant expression). Values are read at their width with the comparison's signedness."""
    m = re.match(r"(\w+) \{k\d+\}, \{k\d+\}, (signed|unsigned) : (tile<[^>]*>) -> (tile<[^>]*>)$", text.strip())
    if not m or m.group(1) not in _CMP_PREDICATES or not all(o.startswith("{k") for o in operands):
        return None
    a, b = (ctx.consts.get(int(o[2:-1])) for o in operands)
    if a is None or b is None or a[0] != b[0] or a[0] not in _INT_BITS or a[0] == "i1":
        return None
    bits = _INT_BITS[a[0]]
    x, y = int(a[1]), int(b[1])
    if m.group(2) == "signed":
        x, y = _signed_value(x, bits), _signed_value(y, bits)
    else:
        x, y = x & ((1 << bits) - 1), y & ((1 << bits) - 1)
    return ("i1", _CMP_PREDICATES[m.group(1)](x, y), m.group(4))


def _fold_convert(name: str, src: tuple[str, object, str], text: str) -> tuple[str, object, str] | None:
    """Fold a conversion of a splat constant exactly, or return None (not folded). Signedness is read
    as a whole word (`unsigned` is not `signed`); a conversion without a known signedness, with a
    rounding mode other than nearest-even, or with any other attribute is not folded."""
    m = re.search(r":\s*(tile<[^>]*>)\s*->\s*(tile<[^>]*>)\s*$", text)
    if not m:
        return None
    out_ty = m.group(2)
    dst = _elem(out_ty)
    sdt, val, _ = src
    words = _OPERAND.sub(" ", text[:m.start()]).split()
    attrs = " ".join(w for w in words if w not in ("signed", "unsigned"))
    signs = [w for w in words if w in ("signed", "unsigned")]
    if name == "ftof" and sdt in _FLOAT_BITS and dst in _FLOAT_BITS:
        if attrs not in _NEAREST_EVEN or signs or dst == "tf32" or sdt == "tf32":
            return None
        if dst == "bf16" and sdt == "f64":
            return None  # f64 -> f32 -> bf16 would round twice
        try:
            return dst, _float_to_bits(bits_to_float(val, sdt), dst), out_ty
        except _NotExact:
            return None  # to f8: folded only where no rounding happens
    if name == "ftoi" and sdt in _FLOAT_BITS and sdt != "tf32" and dst.startswith("i") and dst[1:].isdigit():
        # an integral value in the result's range converts exactly whatever the rounding mode
        v = bits_to_float(val, sdt)
        dbits = int(dst[1:])
        lo, hi = (-(1 << dbits - 1), (1 << dbits - 1) - 1) if signs == ["signed"] else (0, (1 << dbits) - 1)
        if len(signs) != 1 or attrs or dst == "i1" or not math.isfinite(v) or v != int(v) or not lo <= int(v) <= hi:
            return None
        return dst, _signed_value(int(v), dbits), out_ty
    if not (sdt.startswith("i") and sdt[1:].isdigit() and isinstance(val, (int, bool))):
        return None
    sbits = int(sdt[1:])
    if name == "itof" and dst in _FLOAT_BITS and dst != "tf32":
        if attrs not in _NEAREST_EVEN or len(signs) != 1:
            return None
        v = int(val) & ((1 << sbits) - 1) if signs[0] == "unsigned" else _signed_value(int(val), sbits)
        if abs(v) > 1 << 53:
            return None  # int -> double -> target would round twice
        try:
            return dst, _float_to_bits(float(v), dst), out_ty
        except _NotExact:
            return None
    if name in ("exti", "trunci") and dst.startswith("i"):
        dbits = int(dst[1:])  # a malformed type fails closed (ValueError -> IRParseError)
        if attrs:
            return None
        if name == "exti":
            if len(signs) != 1:
                return None
            v = int(val) & ((1 << sbits) - 1) if signs[0] == "unsigned" else _signed_value(int(val), sbits)
        else:
            v = int(val)
        v = _signed_value(v, dbits)
        return dst, (v != 0 if dst == "i1" else v), out_ty
    return None


def _fold_bitcast(src: tuple[str, object, str], text: str) -> tuple[str, object, str] | None:
    """N18: a bitcast of a splat constant, exactly (the same bits in the result type), or None."""
    m = re.search(r":\s*(tile<[^>]*>)\s*->\s*(tile<[^>]*>)\s*$", text)
    if not m or _OPERAND.sub(" ", text[:m.start()]).split():
        return None  # an attribute: not folded
    out_ty = m.group(2)
    dst = _elem(out_ty)
    sdt, val, _ = src
    if "tf32" in (sdt, dst) or sdt == dst or sdt == "i1" or dst == "i1":
        return None
    src_int = sdt.startswith("i") and sdt[1:].isdigit()
    dst_int = dst.startswith("i") and dst[1:].isdigit()
    if src_int == dst_int or (sdt not in _FLOAT_BITS and not src_int) or (dst not in _FLOAT_BITS and not dst_int):
        return None
    width = _ELEM_BYTES.get(sdt, 0) * 8
    if not width or width != _ELEM_BYTES.get(dst, -1) * 8 or isinstance(val, bool) or not isinstance(val, int):
        return None
    bits = int(val) & ((1 << width) - 1)
    return dst, (bits if dst in _FLOAT_BITS else _signed_value(bits, width)), out_ty


@dataclass
class _Ctx:
    """Canonicalization state of one entry."""

    keys: dict[str, int] = field(default_factory=dict)  # structural key -> id
    defs: dict[int, tuple[str, list["_Line"]]] = field(default_factory=dict)  # id -> (line, region lines)
    consts: dict[int, tuple[str, object, str]] = field(default_factory=dict)
    anchors: int = 0
    facts: list[str] = field(default_factory=list)
    nonneg_ivs: set[str] = field(default_factory=set)  # `for` induction variables with a constant lb >= 0
    iv_ranges: dict[str, tuple[int, int]] = field(default_factory=dict)  # `for` IVs with constant [lb, ub)
    iv_upper: dict[str, int] = field(default_factory=dict)  # `for` IVs with a constant ub (positive constant step)
    side: str | None = None  # "python" or "rust": the compiler that produced the IR (None: not told)
    order: dict[int, str] = field(default_factory=dict)  # N17 suffixes of memory effects, by id(op)
    carried_inits: dict[str, str] = field(default_factory=dict)  # `for` iter values (^d.i) -> their init
    # carried-div-by: a loop body's iter values proven multiples of n (read by the loop's op), and the values
    # after loops that those iter values become (a `for` result): value -> the n proven
    proven_carried: dict[str, set[int]] = field(default_factory=dict)
    proven_values: dict[str, set[int]] = field(default_factory=dict)
    lifted: list["_Line"] = field(default_factory=list)  # N5: facts a loop body hands to its enclosing region

    def intern(self, key: str) -> int:
        if key not in self.keys:
            self.keys[key] = len(self.keys)
        return self.keys[key]


@dataclass
class _Line:
    text: str  # with value ids as {kN}
    deps: list[int]
    regions: list[list["_Line"]] = field(default_factory=list)


_ID = re.compile(r"\{k(\d+)\}")
_OPERAND = re.compile(r"\{k\d+\}|@\d+(?:#\d+)?|\^\d+\.\d+")


def _subst(text: str, scope: list[dict[str, str]]) -> tuple[str, list[int]]:
    deps: list[int] = []

    def rep(m: re.Match) -> str:
        name = m.group(0)
        for s in reversed(scope):
            if name in s:
                val = s[name]
                if val.startswith("{k"):
                    deps.append(int(val[2:-1]))
                return val
        raise IRParseError(f"use of undefined value {name}")

    out = _REF.sub(rep, text)
    return out, deps


TARGET = "sm_90"  # the architecture verification compiles cuTile Rust for (H200)


def _hints_in_force(m: re.Match) -> str:
    """N4: an optimization-hint dictionary as the hints in force per architecture: `default` merged with
    each `sm_NN` group named (and the compile target, which is where cuTile Rust writes plain hints);
    architectures with no hint are dropped."""
    groups = {g: dict(kv.split(" = ", 1) for kv in split_top(body))
              for g, body in re.findall(r"(\w+) = \{([^{}]*)\}", m.group(2))}
    default = groups.pop("default", {})
    force = {t: {**default, **groups.get(t, {})} for t in sorted(set(groups) | {TARGET})}
    text = ", ".join(f"{t} = {{{', '.join(f'{k} = {v}' for k, v in sorted(h.items()))}}}"
                     for t, h in force.items() if h)
    return f"{m.group(1)}optimization_hints = <{text}>" if text else ""


_TOKEN_ARG = re.compile(r"\s*token\s*=\s*(_tok|%\S+)")
_HINTS = re.compile(r"(,?\s*)optimization_hints\s*=\s*<(.*?)>(?=\s*(?::|$|\{|,))")
_SPACES = re.compile(r"\s+")


def _clean(text: str) -> str:
    if "token" in text:  # (the substring tests skip a regex scan of most ops: this runs on every op)
        text = _TOKEN_ARG.sub("", text)
    if "optimization_hints" in text:
        text = _HINTS.sub(_hints_in_force, text)
    return _SPACES.sub(" ", text).strip()


def _result_types(text: str) -> list[str]:
    m = re.search(r"->\s*\((.*)\)\s*$", text)
    if m:
        return split_top(m.group(1))
    if text.startswith("iter_values("):  # loop: iter_values(...) : T1, T2 -> R1, R2
        head, sep, tail = text.rpartition("->")
        return split_top(tail) if sep else []
    return []


def _region_args(op: Op, depth: int) -> dict[str, str]:
    """Canonical names of the block arguments declared on a region op's line; loop-carried memory
    tokens become `_tok` and are skipped in the numbering (N6)."""
    if not op.regions:
        return {}
    args = op.regions[0].args
    types = _result_types(op.text)
    first_iter = 1 if op.name == "for" else 0
    out, n = {}, 0
    for i, a in enumerate(args):
        k = i - first_iter
        if k >= 0 and k < len(types) and types[k] == "token":
            out[a] = "_tok"
            continue
        out[a] = f"^{depth}.{n}"
        n += 1
    return out


def _drop_tokens(name: str, text: str) -> str:
    """Remove token operands, token types and `_tok = _tok` iter values from an op's text (N6)."""
    def strip_list(s: str, drop: str) -> str:
        return ", ".join(x for x in split_top(s) if x != drop)
    text = re.sub(r"iter_values\((.*?)\)(?=\s*->|\s*:|\s*$)",
                  lambda m: f"iter_values({', '.join(x for x in split_top(m.group(1)) if x != '_tok = _tok')})",
                  text)
    text = re.sub(r"->\s*\((.*)\)\s*$", lambda m: f"-> ({strip_list(m.group(1), 'token')})", text)
    if name == "loop":
        m = re.match(r"(iter_values\(.*?\))\s*:\s*(.*?)\s*->\s*(.*)$", text)
        if m:
            args, results = strip_list(m.group(2), 'token'), strip_list(m.group(3), 'token')
            # a loop that carries only tokens carries nothing (Python threads a token through a one-trip loop)
            text = f"{m.group(1)} : {args} -> {results}" if args or results else m.group(1)
    text = text.replace("iter_values()", "").replace("-> ()", "")
    if name in ("continue", "yield", "break") and "_tok" in text:
        ops, _, types = text.partition(" : ")
        kept = [(o, t) for o, t in zip(split_top(ops), split_top(types) or [""] * len(split_top(ops))) if o != "_tok"]
        text = ", ".join(o for o, _ in kept) + (" : " + ", ".join(t for _, t in kept) if kept else "")
    return re.sub(r"\s+", " ", text).strip()


def _canon_region(region: Region, ctx: _Ctx, scope: list[dict[str, str]], depth: int,
                  arg_names: dict[str, str] | None = None, loop_body: bool = False) -> list[_Line]:
    local: dict[str, str] = dict(arg_names or {})
    first_anchor = ctx.anchors  # the anchors made in this region are numbered after it
    for i, a in enumerate(region.args):
        if arg_names is None:
            local[a] = f"^{depth}.{i}"
    scope = scope + [local]
    lines: list[_Line] = []
    facts: list[_Line] = []
    carried_facts: list[tuple[_Line, str, int]] = []
    derived_facts: list[tuple[_Line, str, int]] = []
    for op in region.ops:
        if op.name == "assume":
            parts = split_top(op.text)
            pred = ", ".join(parts[:-1]).strip()
            src, _, ty = parts[-1].partition(":")
            target, deps = _subst(src.strip(), scope)
            local[op.results[0]] = target
            ty = re.sub(r"\s+", " ", ty).strip()
            ctx.facts.append(f"{pred} on {_expand(ctx, target)}")
            if _allowed_fact(ctx, pred, target, ty) is None:
                facts.append(_Line(f"assume {pred}, {target} : {ty}", deps))
                if arg_names is not None and target in ctx.carried_inits and re.fullmatch(r"div_by<\d+>", pred):
                    carried_facts.append((facts[-1], target, int(pred[7:-1])))  # decided at the `continue`
                elif re.fullmatch(r"div_by<\d+>", pred):
                    derived_facts.append((facts[-1], target, int(pred[7:-1])))  # decided with the carried ones
            continue
        if op.name in _TOKEN_OPS:
            for r in op.results:
                local[r] = "_tok"
            continue
        raw = _clean(op.text)
        # tokens produced by memory ops are the last result of *_tko ops
        results = list(op.results)
        if op.name.endswith("_tko") and results:
            local[results[-1]] = "_tok"
            results = results[:-1]
        elif op.name not in _PURE_OPS and results and not op.regions:
            # an effect's token results (a fence, a gdc op) are erased like the tokens of *_tko ops
            head, arrow, tail = op.text.rpartition("->")
            types = split_top(tail) if arrow else []
            if len(types) == len(results):
                for r, t in zip(list(results), types):
                    if t == "token":
                        local[r] = "_tok"
                        results.remove(r)
        # block arguments declared on the op line itself (for %i in ..., iter_values(%a = ...))
        inline = _region_args(op, depth + 1) if op.regions and op.name in ("for", "loop") else {}
        text, deps = _subst(raw, scope + [inline])
        for v in inline.values():
            ctx.carried_inits.pop(v, None)  # the names of an earlier loop's values at this depth
        if op.name == "for":
            # N5: the induction variable's canonical name (^depth.0) is reused by the next loop at this depth;
            # facts about an earlier loop's variable must not describe this one
            iv = re.match(r"(\^\d+\.\d+) in ", text)
            if iv:
                ctx.nonneg_ivs.discard(iv.group(1))
                ctx.iv_upper.pop(iv.group(1), None)
                ctx.iv_ranges.pop(iv.group(1), None)
            lb = re.match(r"(\^\d+\.\d+) in \((\S+) to ", text)
            if lb and _nonneg(ctx, lb.group(2)):
                ctx.nonneg_ivs.add(lb.group(1))
            upper = re.match(r"(\^\d+\.\d+) in \((\S+) to (\{k\d+\}), step (\{k\d+\})\)", text)
            if upper:
                hi, st = _int_const(ctx, upper.group(3)), _int_const(ctx, upper.group(4))
                if hi is not None and (st is not None and st > 0 or _grid_size(ctx, upper.group(4))):
                    ctx.iv_upper[upper.group(1)] = hi
            for carried, init in re.findall(r"(\^\d+\.\d+) = (\{k\d+\}|@\d+(?:#\d+)?|\^\d+\.\d+)", text):
                ctx.carried_inits[carried] = init  # read by the carried-div-by proof of the loop's body
            rng = re.match(r"(\^\d+\.\d+) in \((\{k\d+\}) to (\{k\d+\}), step (\{k\d+\})\)", text)
            if rng:
                lo, hi, st = (_int_const(ctx, rng.group(i)) for i in (2, 3, 4))
                if None not in (lo, hi, st) and st > 0 and hi > lo:
                    ctx.iv_ranges[rng.group(1)] = (lo, hi)
                    if hi - lo <= st and op.regions and op.regions[0].args:  # N25: one trip, the IV is lb
                        inline[op.regions[0].args[0]] = rng.group(2)
        text = _clean(_drop_tokens(op.name, text))
        effect = op.name not in _PURE_OPS
        if effect and op.regions:
            # region results that are memory tokens are erased; the others are numbered in order
            types = _result_types(op.text)
            for r, t in zip(list(results), types):
                if t == "token":
                    local[r] = "_tok"
                    results.remove(r)
        if effect:
            ctx.anchors += 1
            aid = ctx.anchors
            outer_lifted, ctx.lifted = ctx.lifted, []
            sub_regions = [_canon_region(r, ctx, scope, depth + 1, inline if (j == 0 and inline) else None,
                                         loop_body=op.name in ("for", "loop")) for j, r in enumerate(op.regions)]
            facts += ctx.lifted  # N5: facts of the loop body about values made before the loop
            ctx.lifted = outer_lifted
            # a `for` result is its iter value's last value: a multiple wherever the iter value was proven one
            result_proofs = {r: ctx.proven_carried.pop(f"^{depth + 1}.{j + 1}", set())
                             for j, r in enumerate(results)} if op.name == "for" else {}
            _yield_known_condition(ctx, op, text, sub_regions)  # N19
            if op.name == "for" and len(sub_regions) == 1:  # N30
                hoisted, sub_regions[0] = _invariant_loads(ctx, sub_regions[0], depth + 1, aid)
                lines += hoisted
            if op.name == "for" and not results and not any(sub_regions):
                continue  # N21: a loop that carries nothing and does nothing (its body's pure ops are unused)
            head = f"{op.name} {text}".strip() + ctx.order.get(id(op), "")  # N17
            fwd = _continue_passthrough(op, sub_regions)
            if fwd is not None:  # N12
                sub_regions[1] = []
                for r, v in zip(results, fwd):
                    local[r] = v
                lines.append(_Line(re.sub(r"\s*->\s*\(.*\)\s*$", "", head), deps, sub_regions))
                continue
            same = _if_passthrough(op, sub_regions, len(results))
            if same:  # N23
                for i, v in same.items():
                    local[results[i]] = v
                results = [r for i, r in enumerate(results) if i not in same]
                order = ctx.order.get(id(op), "")
                head = _drop_result_types(head[:len(head) - len(order)], same) + order
            if results:
                head = f"@{aid} = {head}"
            lines.append(_Line(head, deps, sub_regions))
            for i, r in enumerate(results):
                local[r] = f"@{aid}#{i}" if len(results) > 1 else f"@{aid}"
                if result_proofs.get(r):
                    ctx.proven_values[local[r]] = result_proofs[r]
            continue
        # pure op
        if op.name == "constant":
            cv = _const_value(text)
            if cv:
                text = _const_text(*cv)
        operands = _OPERAND.findall(text)
        same_type = re.search(r":\s*(tile<[^>]*>)\s*->\s*(tile<[^>]*>)\s*$", text)
        if op.name in ("reshape", "broadcast") and len(deps) == 1 and deps[0] in ctx.consts and same_type:
            # N14: a reshaped or broadcast splat constant is a splat constant of the result type
            cdt, cval, _ = ctx.consts[deps[0]]
            folded = (cdt, cval, same_type.group(2))
            kid = _define(ctx, "constant " + _const_text(*folded), [], [])
            ctx.consts[kid] = folded
            local[results[0]] = f"{{k{kid}}}"
            continue
        if op.name in _IDENTITY_WHEN_SAME_TYPE and len(operands) == 1 \
                and same_type and same_type.group(1) == same_type.group(2):
            local[results[0]] = operands[0]  # identity (N8, N11)
            continue
        if op.name in ("xori", "ori", "andi") and len(operands) == 2:
            neutral = 1 if op.name == "andi" else 0
            keep = [o for o in operands if not (o.startswith("{k") and ctx.consts.get(int(o[2:-1]), (None,))[0] == "i1"
                                                 and int(ctx.consts[int(o[2:-1])][1]) == neutral)]
            if len(keep) == 1:
                local[results[0]] = keep[0]
                continue
        if op.name in ("cmpi", "divi", "addi", "subi", "muli") and len(operands) == 2:  # N22, N24, N26
            folded = (_fold_cmpi if op.name == "cmpi" else _fold_divi if op.name == "divi" else _fold_int_arith)(
                ctx, operands, text, op.name)
            if folded:
                kid = _define(ctx, "constant " + _const_text(*folded), [], [])
                ctx.consts[kid] = folded
                local[results[0]] = f"{{k{kid}}}"
                continue
        if (op.name in _CONVERT_OPS or op.name == "bitcast") and len(deps) == 1:
            src_id = deps[0]
            if src_id in ctx.consts:
                folded = (_fold_bitcast(ctx.consts[src_id], text) if op.name == "bitcast"  # N18
                          else _fold_convert(op.name, ctx.consts[src_id], text))
                if folded:
                    kid = _define(ctx, "constant " + _const_text(*folded), [], [])
                    ctx.consts[kid] = folded
                    local[results[0]] = f"{{k{kid}}}"
                    continue
        # a pure op's body (a reduce's combiner) names its arguments by nesting below the op, not below the
        # entry: the op compares equal inside a loop and hoisted out of it (N7, cuTile Rust hoists some)
        body_depth = _PURE_REGION_DEPTH if op.name in _PURE_OPS else depth + 1
        sub_regions = [_canon_region(r, ctx, scope, body_depth) for r in op.regions]
        kid = _define(ctx, f"{op.name} {text}", deps, sub_regions)
        if op.name == "constant":
            cv = _const_value(text)
            if cv:
                ctx.consts[kid] = cv
        for i, r in enumerate(results):
            local[r] = f"{{k{kid}}}" if len(results) == 1 else f"{{k{_define(ctx, f'result {i} of {{k{kid}}}', [kid], [])}}}"
    proven: dict[str, set[int]] = {}
    for fact, carried, n in carried_facts:
        if _carried_div_by(ctx, lines, carried, n):
            facts.remove(fact)  # ASSUME_ALLOWED "carried-div-by": proved from the init and the `continue`
            proven.setdefault(carried, set()).add(n)
    for fact, target, n in derived_facts:  # n a power of two: wrapping sums and products keep its multiples
        if n > 0 and not n & (n - 1) and _multiple_of(ctx, target, n, {c for c, ns in proven.items() if n in ns}):
            facts.remove(fact)  # ASSUME_ALLOWED "carried-div-by": a sum or product of proven multiples
    for carried, ns in proven.items():
        ctx.proven_carried.setdefault(carried, set()).update(ns)  # read by the loop's op (its results)
    if lines and lines[-1].text in ("continue", "yield") and not lines[-1].regions:
        lines.pop()  # a terminator with nothing left to carry is implicit (N6)
    if loop_body:  # N5: a fact about a value the loop does not make is printed where the loop is (see N5-assume)
        inside = [f for f in facts if _made_in(_expand(ctx, f.text), depth, first_anchor)]
        ctx.lifted += [f for f in facts if f not in inside]
        facts = inside
    if facts:  # N5: the facts of this region, sorted by structure, before its terminator
        facts.sort(key=lambda ln: _expand(ctx, ln.text))
        at = len(lines) - 1 if lines and lines[-1].text.split(" ")[0] in ("return", "yield", "continue", "break") \
            and not lines[-1].regions else len(lines)
        lines[at:at] = facts
    return lines



_WEAK_LOAD_LINE = re.compile(r"@\d+ = load_(?:view|ptr)_tko weak ")


def _writes_nothing(lines: list[_Line]) -> bool:
    """N30: every line a weak load, a fact, `if`/`for` over such lines, or `continue`/`yield`."""
    for ln in lines:
        head = re.sub(r"^@\d+(?:#\d+)? = ", "", ln.text).split(" ")[0]
        if not (_WEAK_LOAD_LINE.match(ln.text) or head in ("assume", "continue", "yield", "if", "for")):
            return False
        if not all(_writes_nothing(r) for r in ln.regions):
            return False
    return True


def _invariant_loads(ctx: _Ctx, body: list[_Line], depth: int, first_anchor: int) -> tuple[list[_Line], list[_Line]]:
    """N30: the weak loads of a `for` body (at `depth`, whose anchors are numbered after `first_anchor`) that
    move before the loop, and the body without them."""
    if not _writes_nothing(body):
        return [], body
    moved: list[_Line] = []
    for ln in body:
        if ln.regions or not _WEAK_LOAD_LINE.match(ln.text):
            continue
        expanded = _expand(ctx, ln.text.split(" = ", 1)[1])
        made_here = {a for a in re.findall(r"@(\d+)", expanded) if int(a) > first_anchor}
        if not _made_in(re.sub(r"@\d+", "", expanded), depth, first_anchor) and \
                made_here <= {ln2.text.split(" ")[0][1:] for ln2 in moved}:
            moved.append(ln)
    return moved, [ln for ln in body if not any(ln is m for m in moved)]


def _made_in(expanded: str, depth: int, first_anchor: int) -> bool:
    """The structure `expanded` reads a block argument of a region at `depth` or deeper, or an effect's result
    numbered after `first_anchor` (made in the region)."""
    return any(int(d) >= depth for d in re.findall(r"\^(\d+)\.", expanded)) or \
        any(int(a) > first_anchor for a in re.findall(r"@(\d+)", expanded))


def _multiple_of(ctx: _Ctx, ref: str, n: int, assumed: set[str], depth: int = 0) -> bool:
    """`ref` is a multiple of the power of two n (wrapping arithmetic mod 2^w keeps multiples of it): one of
    `assumed`, a value proven one after a loop, an integer constant multiple of n, or `addi`/`subi` of two
    such values or `muli` with one such value (integer tiles of any shape)."""
    if ref in assumed or n in ctx.proven_values.get(ref, ()):
        return True
    c = _int_const(ctx, ref)
    if c is not None:
        return c % n == 0
    m = re.fullmatch(r"\{k(\d+)\}", ref)
    if not m or depth > 20:
        return False
    op = re.fullmatch(r"(addi|subi|muli) (\S+), (\S+) : tile<(?:[0-9x]+x)?i\d+>", ctx.defs[int(m.group(1))][0])
    if not op:
        return False
    a, b = op.group(2), op.group(3)
    if op.group(1) == "muli":
        return _multiple_of(ctx, a, n, assumed, depth + 1) or _multiple_of(ctx, b, n, assumed, depth + 1)
    return _multiple_of(ctx, a, n, assumed, depth + 1) and _multiple_of(ctx, b, n, assumed, depth + 1)


def _carried_div_by(ctx: _Ctx, body: list[_Line], carried: str, n: int) -> bool:
    """A `for` iter value `carried` (^d.i) is a multiple of n in every iteration when its init is and the
    loop's `continue` passes it on as itself plus, minus or times multiples of n (induction: the fact holds
    on entry and each iteration keeps it). cuTile Python derives such facts and states them; cuTile Rust
    does not."""
    if n <= 0 or n & (n - 1) or not body or body[-1].regions or not body[-1].text.startswith("continue "):
        return False  # a power of two: wrapping arithmetic (mod 2^w) keeps multiples of it
    i = int(carried.split(".")[1]) - 1  # ^d.0 is the induction variable; ^d.1 is the first iter value
    values = split_top(body[-1].text[len("continue "):].partition(" : ")[0])
    if not 0 <= i < len(values):
        return False
    init = ctx.carried_inits.get(carried)
    return (init is not None and _int_const(ctx, init) is not None and _multiple_of(ctx, init, n, set())
            and _multiple_of(ctx, values[i], n, {carried}))


def _yield_known_condition(ctx: _Ctx, op, text: str, arms: list[list[_Line]]) -> None:
    """N19: an arm of `%r = if c -> (tile<i1>)` whose `yield` passes `c` itself yields the constant c has
    there (true in the then arm, false in the else arm). Only the arm's own `yield` is rewritten: elsewhere
    (a `continue`, an op, a nested region) `c` stays a value, so the rule hides nothing but the and/or
    lowering."""
    if op.name != "if" or len(arms) != 2 or [t.strip() for t in _result_types(op.text)] != ["tile<i1>"]:
        return  # the and/or lowering: one i1 result (a break flag carried with other values is not one)
    m = re.match(r"\s*(\{k\d+\}|@\d+(?:#\d+)?|\^\d+\.\d+)", text)
    if not m:
        return
    cond = m.group(1)
    pattern = re.compile(re.escape(cond) + r"(?![\d#.])")
    for value, arm in zip((True, False), arms):
        if not arm or arm[-1].regions or not arm[-1].text.startswith("yield ") or not pattern.search(arm[-1].text):
            continue
        cv = ("i1", value, "tile<i1>")
        kid = _define(ctx, "constant " + _const_text(*cv), [], [])
        ctx.consts[kid] = cv
        last = arm[-1]
        arm[-1] = _Line(pattern.sub(f"{{k{kid}}}", last.text), last.deps + [kid], last.regions)


def _expand(ctx: _Ctx, text: str, depth: int = 0) -> str:
    """The structure of the values named in `text` (for sorting facts independently of value ids)."""
    if depth > 50:
        return text
    return _ID.sub(lambda m: "(" + _expand(ctx, ctx.defs[int(m.group(1))][0], depth + 1) + ")", text)


def _nonneg(ctx: _Ctx, ref: str) -> bool:
    """`ref` is >= 0 by construction: an integer constant >= 0, a block id or grid size, or the induction
    variable of a `for` (positive step) whose lower bound is one of these."""
    if ref in ctx.nonneg_ivs:
        return True
    m = re.fullmatch(r"\{k(\d+)\}", ref)
    if not m:
        return False
    kid = int(m.group(1))
    c = ctx.consts.get(kid)
    if c is not None:
        return c[0].startswith("i") and c[0] != "i1" and isinstance(c[1], int) and c[1] >= 0
    src = re.fullmatch(r"result \d+ of \{k(\d+)\}", ctx.defs[kid][0])
    return bool(src) and ctx.defs[int(src.group(1))][0].startswith(("get_tile_block_id ", "get_num_tile_blocks "))


def _grid_size(ctx: _Ctx, ref: str) -> bool:
    """`ref` is a grid size (a result of `get_num_tile_blocks`): >= 1 in every launch, a positive step."""
    m = re.fullmatch(r"\{k(\d+)\}", ref)
    src = re.fullmatch(r"result \d+ of \{k(\d+)\}", ctx.defs[int(m.group(1))][0]) if m else None
    return bool(src) and ctx.defs[int(src.group(1))][0].startswith("get_num_tile_blocks ")


def _int_const(ctx: _Ctx, ref: str) -> int | None:
    m = re.fullmatch(r"\{k(\d+)\}", ref)
    c = ctx.consts.get(int(m.group(1))) if m else None
    if c is not None and c[0].startswith("i") and c[0] != "i1" and isinstance(c[1], int):
        return c[1]
    return None


def _from_ptr_arg(ctx: _Ctx, ref: str, depth: int = 0) -> bool:
    """`ref` is a pointer entry argument, or derived from one by `offset` / `reshape` / `broadcast` (the base first)."""
    m = re.fullmatch(r"\{k(\d+)\}", ref)
    if m is None or depth > 32:
        return False
    d = ctx.defs[int(m.group(1))][0]
    if re.match(r"arg \S+\.ptr : ", d):
        return True
    op = re.match(r"(offset|reshape|broadcast) (\{k\d+\})", d)
    return bool(op) and _from_ptr_arg(ctx, op.group(2), depth + 1)


def _allowed_fact(ctx: _Ctx, pred: str, target: str, ty: str) -> str | None:
    """The ASSUME_ALLOWED entry that covers this fact, or None (the fact is compared)."""
    m = re.fullmatch(r"\{k(\d+)\}", target)
    d = ctx.defs[int(m.group(1))][0] if m else ""
    div = re.fullmatch(r"div_by<(\d+)>", pred)
    if div and int(div.group(1)) in ctx.proven_values.get(target, ()):
        return "carried-div-by"  # the result of a loop whose iter value was proven a multiple (_canon_region)
    if div and re.match(r"arg \S+\.ptr : ", d) and div.group(1) == "16" and ctx.side != "rust":
        return "ptr-arg-div16"  # only cuTile Python checks it at launch; the C ABI checks element alignment
    pt = re.fullmatch(r"tile<(?:[0-9x]*x)?ptr<(\w+)>>", ty)
    if div and pt and _ELEM_BYTES.get(pt.group(1)) == int(div.group(1)):
        return "ptr-natural-align"
    if div and pt and div.group(1) == "16" and ctx.side != "rust" and _from_ptr_arg(ctx, target):
        return "ptr-derived-div16"
    if pred == "bounded<0, ?>":
        if re.match(r"arg \S+\.(shape|stride)\d+ : ", d):
            return "shape-stride-nonneg"
        src = re.fullmatch(r"result \d+ of \{k(\d+)\}", d)
        if src and ctx.defs[int(src.group(1))][0].startswith(("get_tile_block_id ", "get_num_tile_blocks ")):
            return "block-id-nonneg"
        if target in ctx.nonneg_ivs:
            return "for-iv-nonneg"
    rb = re.fullmatch(r"bounded<(-?\d+), (-?\d+)>", pred)
    if rb and target in ctx.iv_ranges:
        lo, hi = ctx.iv_ranges[target]
        if int(rb.group(1)) <= lo and int(rb.group(2)) >= hi - 1:
            return "for-iv-range"
    cb = re.fullmatch(r"bounded<(-?\d+|\?), (-?\d+|\?)>", pred)
    c = _int_const(ctx, target)
    if cb and c is not None and cb.group(1) + cb.group(2) != "??":
        signed = _signed_value(c, _INT_BITS[ctx.consts[int(m.group(1))][0]])
        if (cb.group(1) == "?" or int(cb.group(1)) <= signed) and (cb.group(2) == "?" or signed <= int(cb.group(2))):
            return "constant-in-bounds"
    ub = re.fullmatch(r"bounded<\?, (-?\d+)>", pred)
    if ub and target in ctx.iv_upper and int(ub.group(1)) >= ctx.iv_upper[target] - 1:
        return "for-iv-below-ub"
    return None


def _continue_passthrough(op: Op, regions: list[list[_Line]]) -> list[str] | None:
    """`if c { ...; continue X } else { yield Y }` (or `break X`): the else arm only passes values through
    (cuTile Rust carries them out of the `if`; cuTile Python leaves the else arm empty and uses them as is).
    The results are only seen where the else arm ran: the then arm leaves the iteration or the loop."""
    if op.name != "if" or len(regions) != 2 or not regions[0] \
            or not regions[0][-1].text.startswith(("continue", "break")):
        return None
    if len(regions[1]) != 1 or not regions[1][0].text.startswith("yield "):
        return None
    operands = _OPERAND.findall(regions[1][0].text.split(" : ")[0])
    results = [r for r in op.results]
    return operands if len(operands) == len(results) else None


def _yield_parts(line: _Line) -> tuple[list[str], list[str]] | None:
    """The operands and types of a plain `yield A, B : T1, T2` line, or None."""
    if line.regions or not line.text.startswith("yield "):
        return None
    values, sep, types = line.text[len("yield "):].partition(" : ")
    vals, tys = split_top(values), split_top(types)
    return (vals, tys) if sep and len(vals) == len(tys) else None


def _if_passthrough(op: Op, arms: list[list[_Line]], n_results: int) -> dict[int, str]:
    """N23: the results of an `if` that both arms yield as the same value. An arm of an `if` has no block
    arguments and cannot name the other arm's values, so one name in both yields is one value defined
    before the `if`: the result is that value whichever arm runs (cuTile Rust carries every variable the
    `if` may assign through both arms; cuTile Python only what an arm changes). Those results are dropped
    from both yields, and their uses read the value itself."""
    if op.name != "if" or len(arms) != 2 or not n_results or not all(arms):
        return {}
    parts = [_yield_parts(arm[-1]) for arm in arms]
    if None in parts or any(len(p[0]) != n_results for p in parts):  # type: ignore[index]
        return {}
    (then_vals, then_tys), (else_vals, _) = parts  # type: ignore[misc]
    same = {i: v for i, (v, w) in enumerate(zip(then_vals, else_vals)) if v == w and _OPERAND.fullmatch(v)}
    if not same:
        return {}
    keep = [i for i in range(n_results) if i not in same]
    for arm in arms:
        last = arm[-1]
        vals, tys = _yield_parts(last)  # type: ignore[misc]
        if keep:
            text = "yield " + ", ".join(vals[i] for i in keep) + " : " + ", ".join(tys[i] for i in keep)
            arm[-1] = _Line(text, last.deps, last.regions)
        else:
            arm.pop()  # a terminator with nothing left to carry is implicit (N6)
    return same


def _drop_result_types(head: str, dropped: dict[int, str]) -> str:
    """`if c -> (T0, T1, T2)` without the result types at the dropped indices (N23)."""
    m = re.search(r"\s*->\s*\((.*)\)\s*$", head)
    if not m:
        return head
    types = [t for i, t in enumerate(split_top(m.group(1))) if i not in dropped]
    return head[:m.start()] + (f" -> ({', '.join(types)})" if types else "")


def _region_key(lines: list[_Line]) -> str:
    return "{" + ";".join(_line_key(ln) for ln in lines) + "}"


def _line_key(ln: _Line) -> str:
    return ln.text + "".join(_region_key(r) for r in ln.regions)


def _define(ctx: _Ctx, text: str, deps: list[int], regions: list[list[_Line]]) -> int:
    key = text + "".join(_region_key(r) for r in regions)
    kid = ctx.intern(key)
    if kid not in ctx.defs:
        ctx.defs[kid] = (text, regions)  # type: ignore[assignment]
    return kid


def _render(lines: list[_Line], ctx: _Ctx, names: dict[int, str], visible: set[int], indent: int,
            out: list[str]) -> None:
    pad = "  " * indent
    visible = set(visible)

    def need(kid: int) -> None:
        if kid in visible:
            return
        text, regions = ctx.defs[kid]
        for d in [int(x) for x in _ID.findall(text)]:
            need(d)
        names.setdefault(kid, f"%v{len(names)}")
        out.append(f"{pad}{names[kid]} = {_name_ids(text, names)}" + (" {" if regions else ""))
        for r in regions:
            _render(r, ctx, names, visible, indent + 1, out)
        if regions:
            out.append(f"{pad}}}")
        visible.add(kid)

    for ln in lines:
        for d in [int(x) for x in _ID.findall(ln.text)]:
            need(d)
        out.append(f"{pad}{_name_ids(ln.text, names)}" + (" {" if ln.regions else ""))
        for i, r in enumerate(ln.regions):
            if i:
                out.append(f"{pad}}} else {{")
            _render(r, ctx, names, visible, indent + 1, out)
        if ln.regions:
            out.append(f"{pad}}}")


def _name_ids(text: str, names: dict[int, str]) -> str:
    return _ID.sub(lambda m: names.get(int(m.group(1)), f"?k{m.group(1)}"), text)


def normalize_entry(entry: Entry, arg_names: list[str], side: str | None = None) -> tuple[str, list[str]]:
    """Canonical text of one entry, and the list of `assume` facts that were erased."""
    if len(arg_names) != len(entry.args):
        raise IRParseError(f"entry has {len(entry.args)} arguments, expected {len(arg_names)} ({arg_names})")
    ctx = _Ctx(side=side, order=entry.order)
    scope: dict[str, str] = {}
    for (ssa, ty), canon in zip(entry.args, arg_names):
        kid = _define(ctx, f"arg {canon} : {ty}", [], [])
        scope[ssa] = f"{{k{kid}}}"
    lines = _canon_region(Region([], entry.body.ops), ctx, [scope], 0)
    hints = _clean(entry.hints.replace("optimization_hints=", "optimization_hints = "))
    out: list[str] = [f"entry {hints}".rstrip()]
    _render(lines, ctx, {}, set(), 1, out)
    text = "\n".join(out) + "\n"
    order: dict[str, str] = {}
    text = re.sub(r"@\d+", lambda m: order.setdefault(m.group(0), f"@{len(order) + 1}"), text)
    return text, sorted(ctx.facts)


def normalize(text: str, arg_names: list[str], entry_index: int = 0, side: str | None = None) -> tuple[str, list[str]]:
    """Fails closed: any error while normalizing (an unexpected value, a numeric overflow, a malformed
    line) is an IRParseError, which the verifier reports as `not_verified` for that kernel only. `side`
    ("python" / "rust") says which compiler produced the IR: some allowed facts hold only for one of them."""
    try:
        entries = parse(text)
        return normalize_entry(entries[entry_index], arg_names, side)
    except IRParseError:
        raise
    except (ArithmeticError, ValueError, LookupError, TypeError, AttributeError, RecursionError, struct.error) as e:
        raise IRParseError(f"cannot normalize the Tile IR: {type(e).__name__}: {e}") from e


def python_arg_names(params: list[tuple[str, str, int]]) -> list[str]:
    """params: (name, kind, rank) with kind in array|scalar|const, in Python declaration order."""
    out: list[str] = []
    for name, kind, rank in params:
        if kind == "array":
            out += [f"{name}.ptr"] + [f"{name}.shape{i}" for i in range(rank)] + [f"{name}.stride{i}" for i in range(rank)]
        elif kind == "scalar":
            out.append(name)
    return out


def rust_arg_names(params: list[tuple[str, str, int]]) -> list[str]:
    """params: (name, kind, rank) with kind in tensor|tensor_mut|scalar, in Rust declaration order."""
    out: list[str] = []
    for name, kind, rank in params:
        if kind in ("tensor", "tensor_mut"):
            out += [f"{name}.ptr"] + [f"{name}.shape{i}" for i in range(rank)] + [f"{name}.stride{i}" for i in range(rank)]
            if kind == "tensor_mut":
                out += [f"{name}.pshape{i}" for i in range(rank)] + [f"{name}.pstride{i}" for i in range(rank)]
        elif kind == "scalar":
            out.append(name)
    return out
