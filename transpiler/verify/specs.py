"""Which specializations of a kernel get verified.

Constant values come, in order of preference, from:
1. literal arguments at `ct.launch(stream, grid, kernel, (...))` call sites in the source (a site whose
   constant arguments are all non-literal gives nothing, so it does not hide the table);
2. `[tool.cutile-transpile.specializations]` in the nearest pyproject.toml above the source:
   `<kernel> = [{BM = 64, BN = 64}, ...]` (a list of tables, one per specialization);
3. defaults: 64 for every `ct.Constant[int]` (one that bounds a loop and sets no tile shape: 4x the largest
   other, scaled until every constant-bounded loop runs at least twice; one given as `latency=`: 4), both 0 and 1 for every `ct.Constant[bool]` (all combinations up to 16, else each value of each at least once), 1e-6 for every
   `ct.Constant[float]` (an eps-like value; its probe is twice it).
Values missing from a launch site or table take the defaults. The element type E of the arrays is
verified for f16, bf16 and f32 (`dtypes = [...]` in the same pyproject section overrides it).
The pyproject section is read and validated by `transpiler.config` (once per file); names in a table row
that are not constants of the kernel are left out (config warns about them, CT015).
"""

from __future__ import annotations

import functools
import itertools
import math
import struct
from pathlib import Path

from ..emit.ffi import INT_KINDS
from ..model.ir import GENERIC_DTYPES, Kernel, element_combinations

DEFAULT_INT = 64
DEFAULT_FLOAT = 1e-6
DEFAULT_LATENCY = 4  # a constant given as `latency=`: cuTile accepts 1 to 10


def float_bits(v) -> int:
    """The f32 bit pattern (as a signed i32) of a ct.Constant[float] value: the const generic the Rust entry
    takes (it bitcasts it back). Rounds to nearest like cuTile Python's f32 constant; refuses non-finite values
    and values that overflow f32 (the C ABI refuses them too)."""
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"a ct.Constant[float] must be finite, not {v}")
    try:
        packed = struct.pack("<f", v)
    except OverflowError:
        raise ValueError(f"a ct.Constant[float] value {v} overflows f32") from None
    return struct.unpack("<i", packed)[0]


def entry_values(kernel: dict, entry: dict, spec: dict) -> dict:
    """The constants an entry is compiled with: the specialization, the entry's derived constants, and
    each constant again under its Rust name (manifest `generic_params`)."""
    values = with_derived(spec, entry.get("derived", {}).items())
    for rust_name, py_name in entry.get("generic_params", {}).items():
        values[rust_name] = values[py_name]
    return values


def entry_params(kernel: dict, entry: dict) -> list[dict]:
    """The kernel's parameters as `entry` takes them: an array whose rank depends on a constant at the
    entry's rank (manifest `ranks`, see passes/ranks.py), one whose dtype differs per entry at the entry's
    dtype (`array_dtypes`, passes/entry_dtypes.py)."""
    ranks, dtypes = entry.get("ranks", {}), entry.get("array_dtypes", {})
    return [{**p, **({"rank": ranks[p["name"]]} if p["name"] in ranks else {}),
             **({"dtype": dtypes[p["name"]]} if p["name"] in dtypes else {})} if p["name"] in ranks or p["name"] in dtypes
            else p for p in kernel["params"]]


def twin_entries(entries: list[dict], entry: dict) -> list[dict]:
    """`entry` and the entries of the same constants and element types that differ from it only in the dtype of
    an array (`array_dtypes`): the C symbol selects one of them by that array's dtype, and each is verified."""
    if "array_dtypes" not in entry:
        return [entry]
    return [e for e in entries if e["predicates"] == entry["predicates"] and e.get("dtypes") == entry.get("dtypes")
            and "array_dtypes" in e]


def kernel_generics(kernel: dict) -> list[str]:
    """The dtype generics of a manifest kernel's arrays, in order (E, E2, ...)."""
    return [g for g in GENERIC_DTYPES if any(p["kind"] == "array" and p["dtype"] == g for p in kernel["params"])]


def element_types(kernel: dict, dtype: str) -> dict[str, str]:
    """The dtype of each generic in a check: `f16` gives every generic f16, `f16+f32` gives E f16 and E2 f32."""
    parts = dtype.split("+")
    generics = kernel_generics(kernel)
    chosen = dict(zip(generics, parts if len(parts) > 1 else parts * len(generics)))
    for g, d in chosen.items():  # a Triton pointer's generic outside its domain (ids: i32 or i64) takes its first
        domain = generic_domain(kernel, g)
        if domain and d not in domain:
            chosen[g] = domain[0]
    return chosen


def generic_domain(kernel: dict, generic: str) -> tuple[str, ...]:
    """The domain of a Triton pointer's generic (passes/domains.py); empty: the kernel's dtypes."""
    return tuple(next((p["domain"] for p in kernel["params"] if p["kind"] == "array" and p["dtype"] == generic
                       and p.get("domain")), ()))


def domain_probes(kernel: dict) -> list[str]:
    """Element types that exercise the Triton pointers' domains beyond the float dtypes (explicit per generic,
    `+`-joined): integers and fp8 for the pointers that take any dtype, i64 and bool (the domain's last) for
    integer pointers, and u8 where one takes the narrow integers (i16's arms are u8's at another width)."""
    generics = kernel_generics(kernel)
    domains = [generic_domain(kernel, g) for g in generics]
    if not any(d and any(x not in DEFAULT_DTYPES for x in d) for d in domains):
        return []
    probes = []
    pairs = [("i64", "f16"), ("f8e4m3fn", "f32")] + ([("u8", "bf16")] if any("u8" in d for d in domains) else [])
    for wide, narrow in pairs:
        probes.append("+".join(
            (wide if wide in d else d[-1]) if d and any(x not in DEFAULT_DTYPES for x in d) else narrow
            for d in domains))
    return probes


def domain_checks(kernel: dict) -> list[str]:
    """The element types that verify a cuTile Python generic's domain beyond the kernel's dtypes (integers for a
    count table: passes/domains.integer_domains): each such dtype for that generic, the others at the first
    dtype (explicit per generic, `+`-joined where there are several)."""
    generics = kernel_generics(kernel)
    first = kernel["dtypes"][0]
    out = []
    for i, g in enumerate(generics):
        if any(p.get("flat") for p in kernel["params"] if p.get("dtype") == g):
            continue  # a Triton pointer's domain: domain_probes
        for d in generic_domain(kernel, g):
            if d not in kernel["dtypes"]:
                out.append("+".join(d if j == i else first for j in range(len(generics))))
    return out


def dtype_checks(dtypes: list[str], generics: int, mixed: bool, combinations=None) -> list[str]:
    """The element types a specialization is verified at: each dtype for all generics alike, and with `mixed`
    (two or more generics) every mixed combination the C symbol exports (model.ir.element_combinations: all
    pairs for two generics, the manifest's `element_combinations` past two), so that each combination a
    launch can pass is one that was compared (bf16 activations with an f32 weight as much as f16 with f32)."""
    # (a bounded list of combinations leaves out a uniform one cuTile Python refuses: mma_pairs)
    out = [d for d in dtypes if combinations is None or [d] * generics in [list(c) for c in combinations]]
    if mixed and generics > 1 and len(dtypes) > 1:
        combos = combinations or element_combinations(dtypes, [True] + [False] * (generics - 1))
        out += ["+".join(c) for c in combos if len(set(c)) > 1]
    return out


def verified_generics(kernel: dict, entry: dict, spec: dict, dtype: str) -> list[str]:
    """The generic arguments, in the entry's order, that verification compiles an entry with (and that the
    C ABI must launch it with: tests/test_host_layer.py): each dtype generic as its dtype in `dtype` (see
    element_types), a float constant as its bits."""
    values = entry_values(kernel, entry, spec)
    by_py = {p["name"]: p.get("const_type", "int") for p in kernel["params"]}
    ctypes = {p.get("rust_name", p["name"]): by_py[p["name"]] for p in kernel["params"]}
    ctypes.update({rn: by_py.get(pn, "int") for rn, pn in entry.get("generic_params", {}).items()})
    ctypes.update({n: "float" for n, expr in entry.get("derived", {}).items() if expr.startswith("float(")})
    elements = element_types(kernel, dtype)
    kinds = {f"__{g}_INT": str(INT_KINDS.get(d, 0)) for g, d in elements.items()}  # see abi::int_kind
    return [elements[g] if g in elements else kinds[g] if g in kinds else generic_value(values[g], ctypes.get(g, "int"))
            for g in entry["generics"]]


def generic_value(v, const_type: str) -> str:
    """A constant's value as the launcher passes it (a string): int/bool as the integer, float as its bits."""
    return str(float_bits(v)) if const_type == "float" else str(v)
DEFAULT_DTYPES = ("f16", "bf16", "f32")


def _pyproject_section(source: Path) -> dict:
    """The validated `[tool.cutile-transpile]` section (only its well-formed parts; see transpiler.config)."""
    from ..config import config_for
    return config_for(source)[0]


@functools.lru_cache(maxsize=4096)
def _compiled(expr: str):
    """`expr` compiled once (eval of the string compiled it at every call: cover_variants evaluates a
    predicate up to hundreds of thousands of times). A SyntaxError is raised at every call, as before."""
    return compile(expr, "<constant expression>", "eval")


def next_power_of_2(n: int) -> int:
    """triton.next_power_of_2: the least power of two >= n; 0 for n <= 0 (its bit smearing of n - 1)."""
    return 0 if n <= 0 else 1 << (n - 1).bit_length()


def log2_floor(i: int) -> int:
    """triton.language.standard._log2: floor(log2(i)); 0 for i <= 1 (it halves while i > 1)."""
    return max(i, 1).bit_length() - 1


# the functions a constant expression may call (Infer._CONST_FUNCS; emit/ffi.py writes the same in Rust)
_CONST_ENV = {"__builtins__": {}, "float": float, "sqrt": math.sqrt, "next_power_of_2": next_power_of_2,
              "log2_floor": log2_floor, "pow": pow}


def const_value(expr: str, values: dict):
    """A constant expression (variant predicate, derived constant) over constant values, as Python does."""
    # `float(...)`: a folded float constant (Infer.derived_float_name)
    return eval(_compiled(expr), _CONST_ENV, dict(values))  # noqa: S307 - from our own manifest


def predicates_hold(preds, values: dict) -> bool:
    try:
        return all(const_value(p, values) for p in preds)
    except Exception:  # noqa: BLE001 - a predicate over constants the values lack does not hold
        return False


POWERS_OF_TWO = tuple(1 << i for i in range(1, 11))  # 2 .. 1024 (1 would fold a loop of one trip)
MAX_COVER_TRIES = 200_000  # value combinations tried per variant (the variant stays uncovered past it)


def with_derived(values: dict, derived, unknown_ok: bool = False) -> dict:
    """`values` and the derived constants computed from them in order ((name, expression) pairs). With
    `unknown_ok`, a derived constant reading a name the values lack (a runtime scalar's) is left out."""
    env = dict(values)
    for name, expr in derived:
        try:
            env[name] = const_value(expr, env)
        except NameError:
            if not unknown_ok:
                raise
    return env


def derived_defined(derived, values: dict) -> bool:
    """Whether the kernel's derived constants (`DV_CHUNK = BLOCK_D // DV_SPLITS`) can be computed at these
    values: at DV_SPLITS = 0 neither compiler compiles the kernel, so no launch has those constants."""
    try:
        with_derived(values, derived, unknown_ok=True)
    except Exception:  # noqa: BLE001 - ZeroDivisionError, a negative shift, ...
        return False
    return True


def cover_variants(specs: list[dict], variants: list[tuple[str, ...]], derived=()) -> list[dict]:
    """Add specializations so that every structural variant is selected by at least one: values for the
    constants in the predicates are tried from the literals they compare with (and 0/1), starting from the
    first specialization, skipping values at which a derived constant cannot be computed (`derived`: the
    kernel's (name, expression) pairs). Variants that no such value selects stay uncovered (reported
    not_verified)."""
    import re
    out = list(specs)
    base = specs[0] if specs else {}

    for preds in variants:
        if any(predicates_hold(preds, s) for s in out):
            continue
        names = sorted({n for p in preds for n in re.findall(r"[A-Za-z_]\w*", p)} - {"not", "and", "or", "True", "False"})
        names = [n for n in names if n in base]
        lits = sorted({int(x) for p in preds for x in re.findall(r"-?\d+", p)} | {0, 1})
        candidates = sorted({v + d for v in lits for d in (-1, 0, 1)}, key=lambda v: (v < 0, v))
        # each constant's own value first (a flag that must be nonzero keeps its 64, and loops it bounds
        # keep running), then positive powers of two (tile extents must be: `ROWS * B == ROWS * W * 32` holds
        # at ROWS = 0 too, which no tile can have), then the other values near the literals (non-negative first:
        # a negative one is an empty `range`), negatives last
        found = None
        # the second pool keeps the powers of two before the others: a constant that must take a literal's
        # neighbour (`MODE == -1`) does not push its companions off them (`n_cols` to 0: an empty loop)
        for pool in (POWERS_OF_TWO, [*POWERS_OF_TWO, *(c for c in candidates if c not in POWERS_OF_TWO)]):
            # a flag (0 or 1) keeps its own candidates: its values are truth values
            per_name = [list(dict.fromkeys([base[n]] + list(candidates if base[n] in (0, 1) else pool)))
                        for n in names]
            found = _first_holding(preds, base, names, per_name, derived)
            if found is not None:
                break
        if found is not None and found not in out:
            out.append(found)
    return out


def _first_holding(preds, base: dict, names: list[str], per_name: list[list], derived=()) -> dict | None:
    """`base` with the first combination of values of `names` (itertools.product(*per_name), among its first
    MAX_COVER_TRIES) for which the predicates hold, or None. The predicates are a conjunction: a value that a
    predicate reading one constant alone rules out is dropped from that constant's list before the product
    (`not (F4)` with F4's candidates all powers of two: none is left, where 10^5 combinations of five flags
    were tried). The product of the lists left keeps the order of the whole product and a dropped value's
    combinations never hold, so the first combination that holds, and whether it is among the first
    MAX_COVER_TRIES (its index in the whole product), are the same as trying every combination in order."""
    import types
    alone: dict[str, list[str]] = {}
    for p in preds:
        try:
            code = _compiled(p)
        except Exception:  # noqa: BLE001 - evaluated (and failing) with the others below
            continue
        reads = set(code.co_names)
        if len(reads) == 1 and not any(isinstance(c, types.CodeType) for c in code.co_consts):
            (n,) = reads
            if n in names:
                alone.setdefault(n, []).append(p)
    kept = [[(i, v) for i, v in enumerate(values) if n not in alone or predicates_hold(alone[n], {**base, n: v})]
            for n, values in zip(names, per_name)]
    sizes = [len(values) for values in per_name]
    for combo in itertools.product(*kept):
        index = 0
        for (i, _), size in zip(combo, sizes):
            index = index * size + i
        if index >= MAX_COVER_TRIES:  # every later combination is further on in the whole product too
            return None
        values = {**base, **dict(zip(names, (v for _, v in combo)))}
        if predicates_hold(preds, values) and derived_defined(derived, values):
            return values
    return None


def kernel_dtypes(source: Path) -> list[str]:
    """The element types E is verified and exported for (pyproject `dtypes`, else the defaults)."""
    return list(_pyproject_section(source).get("dtypes") or DEFAULT_DTYPES)


MAX_DEFAULT_COMBOS = 16


def _default_combos(choices: list[list]) -> list[tuple]:
    """Every combination of the default values (a bool constant has two), or, past MAX_DEFAULT_COMBOS (a
    factory's eleven flags would be 2048), each value of each constant at least once: all first values, all
    last ones, and each constant's second value with the others at their first."""
    combos = list(itertools.islice(itertools.product(*choices), MAX_DEFAULT_COMBOS + 1))
    if len(combos) <= MAX_DEFAULT_COMBOS:
        return combos
    first = tuple(c[0] for c in choices)
    out = [first, tuple(c[-1] for c in choices)]
    out += [first[:i] + (c[1],) + first[i + 1:] for i, c in enumerate(choices) if len(c) > 1]
    return list(dict.fromkeys(out))


def specializations(kernel: Kernel, source: Path) -> tuple[list[dict], list[str], str]:
    """(constant-value dicts, dtypes for E, where they came from)."""
    consts = [p for p in kernel.params if p.kind == "const"]
    section = _pyproject_section(source)
    dtypes = kernel_dtypes(source)
    literal = [dict(l) for l in kernel.launches if l]
    table = section.get("specializations", {}).get(kernel.name)
    if literal:
        rows, origin = literal, "launch sites"
    elif table:
        names = {p.name for p in consts}
        rows, origin = [{k: v for k, v in r.items() if k in names} for r in table], "pyproject.toml"
    else:
        rows, origin = [{}], "defaults"
    from ..passes.flags import loop_bound_consts
    loops = loop_bound_consts(kernel)
    trips = loop_bounds(kernel)
    from ..model.walk import walk_exprs
    latencies = {e.attr("latency") for e in walk_exprs(kernel.body) if hasattr(e, "attr")}  # latency=CONST
    out = []
    # the hidden unit-stride constants (Param.unit_of) take 0 and 1 together: every view access, and every
    # element access it replaces, is compiled, without doubling the specializations per stride
    units = [p.name for p in consts if p.unit_of]
    for row in rows:
        missing = [p for p in consts if p.name not in row and not p.unit_of]
        # a loop-bound constant defaults to 4x the largest other int constant: its loops run several
        # times (cuTile Rust folds a loop of one trip, which would be compared as another program)
        others = [v for k, v in row.items() if k not in loops and isinstance(v, int) and not isinstance(v, bool)]
        others += [DEFAULT_INT for p in missing if p.const_type == "int" and p.name not in loops]
        loop_default = 4 * max(others + [DEFAULT_INT])
        dtype_choices = dict(kernel.strings)  # a dtype constant: each of its dtypes (one entry each)
        choices = [[0, 1] if p.const_type == "bool" else [DEFAULT_FLOAT] if p.const_type == "float"
                   else list(range(len(dtype_choices[p.name]))) if p.name in kernel.dtype_consts
                   else [DEFAULT_LATENCY] if p.name in latencies
                   else [loop_default] if p.name in loops else [DEFAULT_INT] for p in missing]
        for combo in _default_combos(choices):
            spec = dict(row)
            spec.update({p.name: v for p, v in zip(missing, combo)})
            for p in consts:
                if p.unit_of:
                    continue
                if p.const_type == "bool":
                    spec[p.name] = int(bool(spec[p.name]))
                elif p.const_type == "float":
                    spec[p.name] = float(spec[p.name])  # a launch-site `1` is the float 1.0
            if not any(k in row for k in loops):
                spec = _loops_run_twice(spec, trips, sorted(loops & {p.name for p in missing}))
            for unit in ((1, 0) if units else (None,)):
                full = {**spec, **{u: unit for u in units}} if units else spec
                if full not in out:
                    out.append(full)
    return out, dtypes, origin


def loop_bounds(kernel: Kernel) -> list[tuple[str, str, str]]:
    """(start, stop, step) of each `for` whose bounds are constant expressions, as Python text over the
    constants (derived constants expanded; locals assigned once followed)."""
    from ..model.ir import Assign, For, Lit, Name
    from ..model.walk import all_stmts
    derived = dict(kernel.derived)
    consts = {p.name for p in kernel.params if p.kind == "const"}
    assigned: dict[str, list] = {}
    for st in all_stmts(kernel.body):
        if isinstance(st, Assign) and len(st.targets) == 1:
            assigned.setdefault(st.targets[0], []).append(st.value)

    def text(e, depth=0):
        if isinstance(e, Lit) and isinstance(e.value, int) and not isinstance(e.value, bool):
            return str(e.value)
        if isinstance(e, Name) and depth < 8:
            if e.id in consts:
                return e.id
            if e.id in derived:
                return f"({derived[e.id]})"
            if len(assigned.get(e.id, ())) == 1:
                return text(assigned[e.id][0], depth + 1)
        return None

    out = []
    for st in all_stmts(kernel.body):
        if isinstance(st, For):
            b = tuple(text(x) for x in (st.start, st.stop, st.step))
            if None not in b:
                out.append(b)
    return out


def _runs_twice(values: dict, trips: list) -> bool:
    try:
        return all(max(0, -(-(const_value(stop, values) - const_value(start, values))
                            // const_value(step, values))) >= 2 for start, stop, step in trips)
    except (ArithmeticError, NameError, TypeError, ValueError, SyntaxError):
        return True  # not evaluable here: no preference


def _loops_run_twice(spec: dict, trips: list, loop_consts: list[str]) -> dict:
    """The defaults with every constant-bounded loop running at least twice: cuTile Rust folds the
    induction variable of a one-trip loop (`i * NUM_SMS` becomes 0), which compares as another program.
    Each defaulted loop-bound constant is scaled by a power of two, one at a time, until that holds."""
    if not trips or _runs_twice(spec, trips):
        return spec
    for factor in (2, 4, 8, 16):
        for name in loop_consts:
            cand = {**spec, name: spec[name] * factor}
            if _runs_twice(cand, trips):
                return cand
    return spec


def probe_values(name: str, const_type: str, specs: list[dict]) -> list:
    """Values to try for one constant beyond those the specializations give, in order of preference.

    Verifying an entry only at its launch-site value cannot tell a generic from a literal fixed to
    that value in the Rust (`BLOCK` hard-coded to 1024), so each constant is verified at a second value:
    the other boolean; for integers, powers of two around the first value (0 and 1 are flags: the
    other one). Empty when the specializations already hold two values of it."""
    seen = {s[name] for s in specs if name in s}
    if len(seen) >= 2 or not specs or name not in specs[0]:
        return []
    v = specs[0][name]
    if const_type == "bool":
        return [1 - int(bool(v))]
    if const_type == "float":  # another value, so a float fixed in the Rust to the launch value is found
        return [v * 2.0 if v != 0.0 else 1.0, -v if v != 0.0 else 0.5]
    if v in (0, 1):
        return [1 - v, 2]
    if abs(v) & (abs(v) - 1) == 0:  # tile sizes: cuTile needs powers of two
        return [v * 2, v // 2]
    return [v + 1, v - 1, v * 2]


def _by_entry(specs: list[dict], entry_of) -> dict[str, list[dict]]:
    """The specializations grouped by the entry each selects (in order; one that selects none is left out)."""
    groups: dict[str, list[dict]] = {}
    for spec in specs:
        try:
            groups.setdefault(entry_of(spec), []).append(spec)
        except LookupError:
            continue
    return groups


def coverage_probes(params: list[dict], specs: list[dict], entry_of,
                    flags: tuple[str, ...] = (), trips: list | None = None) -> list[tuple[str, str, list[dict]]]:
    """(entry, constant, candidate specializations): for each entry (`entry_of(spec)` names the entry a
    specialization selects) and each constant that its specializations hold at one value, the entry's
    first specialization with only that constant changed, one candidate per probe value, keeping those
    that still select the entry (a value that selects another entry is covered by that entry's own
    probes; a constant no candidate keeps in the entry is fixed by the entry's predicate). The verifier
    uses the first candidate cuTile Python accepts (a tile too large for it is no evidence either way)."""
    out = []
    for entry, group in _by_entry(specs, entry_of).items():
        for p in params:
            if p["kind"] != "const":
                continue
            values = probe_values(p["name"], p.get("const_type", "int"), group)
            if p["name"] in flags and p.get("const_type") != "bool":
                # an int a constant condition reads (`if HAS_MASK:`): both arms, zero and nonzero
                held = {g[p["name"]] for g in group}
                values = ([0] if 0 not in held else []) + ([1] if held == {0} else []) + \
                         [v for v in values if v not in (0, 1)]
            cands = []
            for v in values:
                cand = {**group[0], p["name"]: v}
                try:
                    if cand not in specs and entry_of(cand) == entry:
                        cands.append(cand)
                except LookupError:
                    continue
            if trips:  # values that keep every loop running at least twice first (see _loops_run_twice)
                cands.sort(key=lambda c: not _runs_twice(c, trips))
            if cands:
                out.append((entry, p["name"], cands))
    return out


def comparand_probes(specs: list[dict], entry_of, comparands: dict[str, list[int]]) -> list[tuple[str, str, dict]]:
    """(entry, constant, specialization): for each entry and each value a constant condition compares
    with (`condition_values`), the entry's first specialization with that value, where the value still
    selects the entry and none of that entry's specializations holds it already (a value held only by a
    specialization of another entry checks that entry's arms, not this one's)."""
    out = []
    for entry, group in _by_entry(specs, entry_of).items():
        spec = group[0]
        for name, values in sorted(comparands.items()):
            if name not in spec:
                continue
            held = {s.get(name) for s in group}
            for v in values:
                cand = {**spec, name: v}
                if v in held:
                    continue
                try:
                    if entry_of(cand) != entry:
                        continue
                except LookupError:
                    continue
                out.append((entry, name, cand))
    return out


def coverage_summary(checks, dtypes_all: list[str]) -> dict:
    """What a kernel's verdict covers: the specializations and dtypes checked, and per constant the
    values it was verified at (JSON, report and text output say this)."""
    specs, dtypes, values = [], [], {}
    for c in checks:
        if c.verdict != "equivalent":
            continue
        if c.spec not in specs:
            specs.append(c.spec)
        if c.dtype not in dtypes:
            dtypes.append(c.dtype)
        for k, v in c.spec.items():
            values.setdefault(k, set()).add(v)
    return {"specializations": len(specs), "dtypes": [d for d in dtypes_all if d in dtypes] + sorted(set(dtypes) - set(dtypes_all)),
            "values": {k: sorted(v) for k, v in sorted(values.items())}}


def coverage_text(cov: dict) -> str:
    """`4 specializations × 3 dtypes; BLOCK ∈ {512, 1024}, CAUSAL ∈ {0, 1}` (a constant at one value says so)."""
    n, d = cov.get("specializations", 0), len(cov.get("dtypes", []))
    text = f"{n} specialization{'s' if n != 1 else ''} × {d} dtype{'s' if d != 1 else ''}"
    vals = cov.get("values", {})
    if vals:
        text += "; " + ", ".join(f"{k} ∈ {{{', '.join(str(x) for x in v)}}}" for k, v in vals.items())
    if cov.get("one_value_only"):
        text += f"; at one value only: {', '.join(cov['one_value_only'])}"
    return text
