#!/usr/bin/env python3
"""Property-based robustness run: random well-formed cuTile Python kernels (plus a few invalid constructs)
through the CLI, then `cargo check` of the crate it wrote.

Property, per kernel: `translated`, or a diagnostic with a code and a position; never an internal error
(CT900 / "internal error"), never a traceback; and never exit 0 with a crate that does not compile.

    python3 tools/property_kernels.py --seed 1 --count 200 [--batch 50] [--no-cargo] [--keep DIR] [--tricky]

Prints the cases, seed and time, the outcome counts per status and diagnostic code, and each failing
kernel's source. Exit 1 if the property failed for any kernel. The same strategy drives
`tests/robustness/test_property_kernels.py` (a bounded, derandomized CI run).
"""

from __future__ import annotations

import argparse
import collections
import json
import keyword
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

# ------------------------------------------------------------------ the strategy
POW2 = [1, 2, 4, 8, 16, 32, 64, 128, 256]
PLAIN_WORDS = ["x", "y", "z", "acc", "tile", "blk", "val", "out", "inp", "src", "dst", "lhs", "rhs", "row", "col",
               "tmp", "res", "alpha", "beta", "data", "buf", "w", "q", "k", "v"]
# valid Python names that are Rust keywords or names the generated crate/package uses itself (issue 9, item 4)
TRICKY_WORDS = ["type", "fn", "match", "impl", "loop", "move", "ref", "mut", "use", "mod", "crate", "struct",
                "trait", "where", "dyn", "unsafe", "let", "const", "static", "enum", "abi", "lib", "launch",
                "route", "set_backend", "self", "Self", "super", "box", "E", "T"]
UNARY = ["ct.exp", "ct.tanh", "ct.abs", "ct.exp2", "ct.sqrt", "ct.rsqrt", "ct.log", "ct.sin", "ct.cos", "ct.floor",
         "ct.ceil", "ct.negative"]
BINFN = ["ct.maximum", "ct.minimum"]
BINOP = ["+", "-", "*", "/"]
F32_ONLY = {"ct.tanh", "ct.exp2", "ct.sqrt", "ct.rsqrt", "ct.log", "ct.sin", "ct.cos", "ct.floor", "ct.ceil"}

# invalid constructs mixed in: (name, expected code prefix or None if any diagnostic will do)
INVALID = ["pow", "break", "chained", "undefined", "float_const", "print", "nonpow2", "runtime_shape", "try",
           "lambda", "zero_tile", "async", "ct_range"]


@dataclass
class Case:
    name: str
    family: str
    source: str
    invalid: str | None = None  # the invalid construct mixed in, if any
    tags: list[str] = field(default_factory=list)


@st.composite
def identifier(draw, used: set, tricky: bool = False, upper: bool = False) -> str:
    pool = PLAIN_WORDS + (TRICKY_WORDS if tricky else [])
    base = draw(st.sampled_from(pool))
    if upper:
        base = base.upper()
    if draw(st.booleans()):
        base += draw(st.sampled_from(["", "_", "2", "_0", "x"])) + str(draw(st.integers(0, 99)))
    name = base
    while name in used or keyword.iskeyword(name) or name in ("ct", "cuda"):
        name = f"{name}_{len(used)}"
    used.add(name)
    return name


class Gen:
    """Builds one kernel body; tracks tiles (name -> (shape, dtype))."""

    def __init__(self, draw, used, tricky):
        self.draw, self.used, self.tricky = draw, used, tricky
        self.lines: list[str] = []
        self.tiles: dict[str, tuple[tuple[str, ...], str]] = {}

    def name(self, upper=False):
        return self.draw(identifier(self.used, self.tricky, upper))

    def emit(self, line: str, indent: int = 1):
        self.lines.append("    " * indent + line)

    def expr(self, shape, dtype, depth) -> str:
        """An expression of the tiles with this shape and dtype."""
        d = self.draw
        same = [n for n, (s, t) in self.tiles.items() if s == shape and t == dtype]
        if depth <= 0 or d(st.integers(0, 3)) == 0:
            return d(st.sampled_from(same))
        kind = d(st.sampled_from(["bin", "bin", "lit", "un", "fn", "neg", "where"]))
        if kind == "bin":
            return f"({self.expr(shape, dtype, depth - 1)} {d(st.sampled_from(BINOP))} {self.expr(shape, dtype, depth - 1)})"
        if kind == "lit":
            lit = d(st.sampled_from(["0.5", "2.0", "1.0", "3.0", "0.25", "1e-3"]))
            op = d(st.sampled_from(BINOP))
            e = self.expr(shape, dtype, depth - 1)
            return f"({e} {op} {lit})" if d(st.booleans()) else f"({lit} {op} {e})"
        if kind == "un":
            fns = [f for f in UNARY if dtype == "f32" or f not in F32_ONLY]
            return f"{d(st.sampled_from(fns))}({self.expr(shape, dtype, depth - 1)})"
        if kind == "fn":
            return f"{d(st.sampled_from(BINFN))}({self.expr(shape, dtype, depth - 1)}, {self.expr(shape, dtype, depth - 1)})"
        if kind == "neg":
            return f"-{self.expr(shape, dtype, depth - 1)}"
        a, b = self.expr(shape, dtype, depth - 1), self.expr(shape, dtype, depth - 1)
        return f"ct.where({a} > {b}, {a}, {b})"

    def assign(self, shape, dtype, depth):
        v = self.name()
        self.emit(f"{v} = {self.expr(shape, dtype, depth)}")
        self.tiles[v] = (shape, dtype)
        return v

    def cast(self, v, shape, to):
        w = self.name()
        self.emit(f"{w} = {v}.astype(ct.{ {'f32': 'float32', 'f16': 'float16'}[to] })")
        self.tiles[w] = (shape, to)
        return w


def _dim(draw, consts: list[tuple[str, str]], used, tricky, allow_const=True) -> str:
    """A tile dimension: a power-of-two literal or a new ct.Constant[int] parameter."""
    if allow_const and draw(st.booleans()):
        name = draw(identifier(used, tricky, upper=True))
        consts.append((name, "int"))
        return name
    return str(draw(st.sampled_from(POW2[2:])))


@st.composite
def kernels(draw, tricky: bool = False, invalid_rate: float = 0.15) -> Case:
    used: set = set()
    kname = draw(identifier(used, tricky))
    family = draw(st.sampled_from(["ew1d", "ew2d", "reduce", "matmul", "loop", "flag", "variant", "full"]))
    # the simplest draw (the first item) is a valid kernel; about `invalid_rate` of them get an invalid construct
    n_valid = round(len(INVALID) * (1 - invalid_rate) / invalid_rate) if invalid_rate > 0 else 1
    invalid = draw(st.sampled_from([None] * n_valid + (INVALID if invalid_rate > 0 else [])))
    g = Gen(draw, used, tricky)
    arrays: list[str] = []
    scalars: list[str] = []
    consts: list[tuple[str, str]] = []
    depth = draw(st.integers(1, 3))
    bid0 = g.name()
    g.emit(f"{bid0} = ct.bid(0)")

    def arr():
        a = g.name()
        arrays.append(a)
        return a

    def load(a, index, shape, dtype_to=None):
        v = g.name()
        pad = draw(st.sampled_from(["", "", ", padding_mode=ct.PaddingMode.ZERO"]))
        g.emit(f"{v} = ct.load({a}, index=({', '.join(index)},), shape=({', '.join(shape)},){pad})")
        g.tiles[v] = (tuple(shape), "E")
        if dtype_to:
            return g.cast(v, tuple(shape), dtype_to)
        return v

    def store(out, index, v, dtype):
        t = v if dtype == "E" else f"{v}.astype({out}.dtype)"
        g.emit(f"ct.store({out}, index=({', '.join(index)},), tile={t})")

    cast_to = draw(st.sampled_from([None, "f32", "f32"]))
    dt = cast_to or "E"
    if family in ("ew1d", "loop", "flag", "full"):
        T = _dim(draw, consts, used, tricky)
        shape = (T,)
        ins = [arr() for _ in range(draw(st.integers(1, 3)))]
        out = arr()
        if family == "loop":
            n = g.name()
            scalars.append(n)
            acc = g.name()
            g.emit(f"{acc} = ct.zeros(({T},), dtype=ct.float32)")
            rng = "ct.range" if invalid == "ct_range" else "range"
            i = g.name()
            g.emit(f"for {i} in {rng}({n}):")
            t = g.name()
            g.emit(f"{t} = ct.load({ins[0]}, index=({i},), shape=({T},)).astype(ct.float32)", 2)
            g.tiles[t] = (shape, "f32")
            g.tiles[acc] = (shape, "f32")
            e = g.expr(shape, "f32", depth - 1)
            g.emit(f"{acc} = {acc} + {e}", 2)
            if invalid == "break":
                g.emit("break", 2)
            del g.tiles[t]
            store(out, (bid0,), acc, "f32")
        else:
            for a in ins:
                load(a, (bid0,), shape, cast_to)
            if family == "full":
                f = g.name()
                val = draw(st.sampled_from(["0.0", "1.0", "-1e30", "-float('inf')", "2.5"]))
                g.emit(f"{f} = ct.full(({T},), {val}, dtype=ct.float32)")
                g.tiles[f] = (shape, "f32")
                if dt != "f32":
                    dt = "f32"
                    for a in list(g.tiles):
                        if g.tiles[a][1] == "E":
                            g.cast(a, shape, "f32")
            if family == "flag":
                flag = g.name(upper=True)
                consts.append((flag, "bool"))
                r = g.name()
                g.emit(f"if {flag}:")
                g.emit(f"{r} = {g.expr(shape, dt, depth)}", 2)
                g.emit("else:")
                g.emit(f"{r} = {g.expr(shape, dt, depth)}", 2)
                g.tiles[r] = (shape, dt)
            for _ in range(draw(st.integers(0, 2))):
                g.assign(shape, dt, depth)
            res = g.assign(shape, dt, depth)
            store(out, (bid0,), res, dt)
    elif family in ("ew2d", "reduce", "variant"):
        BM = _dim(draw, consts, used, tricky)
        BN = _dim(draw, consts, used, tricky)
        shape = (BM, BN)
        bid1 = g.name()
        g.emit(f"{bid1} = ct.bid(1)")
        ins = [arr() for _ in range(draw(st.integers(1, 2)))]
        out = arr()
        for a in ins:
            load(a, (bid0, bid1), shape, cast_to)
        if family == "ew2d":
            res = g.assign(shape, dt, depth)
            store(out, (bid0, bid1), res, dt)
        elif family == "reduce":
            t = g.assign(shape, dt, depth)
            axis = draw(st.integers(0, 1))
            red = draw(st.sampled_from(["ct.sum", "ct.max", "ct.min"]))
            r = g.name()
            g.emit(f"{r} = {red}({t}, axis={axis}, keepdims=True)")
            rshape = ("1", BN) if axis == 0 else (BM, "1")
            g.tiles[r] = (rshape, dt)
            if draw(st.booleans()):  # broadcast back: x - max(x)
                b = g.name()
                g.emit(f"{b} = {t} - {r}")
                g.tiles[b] = (shape, dt)
                store(out, (bid0, bid1), b, dt)
            else:
                store(out, (bid0, bid1), r, dt)
        else:
            ax = g.name(upper=True)
            consts.append((ax, "int"))
            t = g.assign(shape, dt, depth)
            r = g.name()
            g.emit(f"if {ax} == 0:")
            g.emit(f"{r} = ct.sum({t}, axis=0, keepdims=True)", 2)
            g.emit("else:")
            g.emit(f"{r} = ct.sum({t}, axis=1, keepdims=True)", 2)
            store(out, (bid0, bid1), r, dt)
    else:  # matmul
        BM, BN, BK = (_dim(draw, consts, used, tricky) for _ in range(3))
        A, B, Cm = arr(), arr(), arr()
        bid1 = g.name()
        g.emit(f"{bid1} = ct.bid(1)")
        acc = g.name()
        g.emit(f"{acc} = ct.zeros(({BM}, {BN}), dtype=ct.float32)")
        kv = g.name()
        loop = "ct.range" if invalid == "ct_range" else "range"
        g.emit(f"for {kv} in {loop}(ct.num_tiles({A}, axis=1, shape=({BM}, {BK}))):")
        a, b = g.name(), g.name()
        g.emit(f"{a} = ct.load({A}, index=({bid0}, {kv}), shape=({BM}, {BK}), padding_mode=ct.PaddingMode.ZERO)", 2)
        g.emit(f"{b} = ct.load({B}, index=({kv}, {bid1}), shape=({BK}, {BN}), padding_mode=ct.PaddingMode.ZERO)", 2)
        g.emit(f"{acc} = ct.mma({a}, {b}, {acc})", 2)
        if invalid == "break":
            g.emit("break", 2)
        g.tiles[acc] = ((BM, BN), "f32")
        if draw(st.booleans()):
            acc = g.assign((BM, BN), "f32", 1)
        store(Cm, (bid0, bid1), acc, "f32")

    # ---------------------------------------------------------------- invalid constructs
    first_tile = next(iter(g.tiles), bid0)
    params_extra = ""
    if invalid == "pow":
        g.lines.insert(len(g.lines) - 1, f"    {g.name()} = ct.pow({first_tile}, 2.0)")
    elif invalid == "chained":
        g.lines.insert(len(g.lines) - 1, f"    {g.name()} = ct.where(0.0 < {first_tile} < 1.0, {first_tile}, 0.0)")
    elif invalid == "undefined":
        g.lines.insert(len(g.lines) - 1, f"    {g.name()} = {first_tile} + not_defined_anywhere")
    elif invalid == "float_const":
        params_extra = ", SCALE: ct.Constant[float]"
    elif invalid == "print":
        g.lines.insert(len(g.lines) - 1, f"    print({first_tile})")
    elif invalid in ("nonpow2", "zero_tile", "runtime_shape"):
        bad = {"nonpow2": str(draw(st.sampled_from([3, 6, 100, 12]))), "zero_tile": "0",
               "runtime_shape": "n_rt"}[invalid]
        if invalid == "runtime_shape":
            scalars.append("n_rt")
        a0 = arrays[0]
        g.lines.insert(len(g.lines) - 1, f"    {g.name()} = ct.load({a0}, index=({bid0},), shape=({bad},))")
    elif invalid == "try":
        g.lines.insert(len(g.lines) - 1, "    try:\n        pass\n    except Exception:\n        pass")
    elif invalid == "lambda":
        g.lines.insert(len(g.lines) - 1, f"    {g.name()} = (lambda q: q)({first_tile})")
    elif invalid in ("break", "ct_range") and family not in ("loop", "matmul"):
        invalid = None  # only meaningful inside a loop

    ann = {"int": "ct.Constant[int]", "bool": "ct.Constant[bool]"}
    params = arrays + [f"{s}: int" for s in scalars] + [f"{n}: {ann[t]}" for n, t in consts]
    deco = "@ct.kernel" if draw(st.integers(0, 4)) else f"@ct.kernel(occupancy={draw(st.sampled_from([1, 2]))})"
    kw = "async def" if invalid == "async" else "def"
    src = f"{deco}\n{kw} {kname}({', '.join(params)}{params_extra}):\n" + "\n".join(g.lines) + "\n"
    tags = [family] + ([f"invalid:{invalid}"] if invalid else []) + (["cast"] if cast_to else [])
    return Case(kname, family, src, invalid, tags)


def draw_cases(count: int, seed_value: int | None = None, derandomize: bool = False, tricky: bool = False,
               invalid_rate: float = 0.15) -> list[Case]:
    """`count` kernels, one per hypothesis example (so they are as varied as hypothesis makes its examples),
    collected first and then run as one batch: one CLI run and one cargo check for many kernels."""
    from hypothesis import HealthCheck, Phase, given, seed, settings
    drawn: list[Case] = []

    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None, derandomize=derandomize,
              suppress_health_check=list(HealthCheck))
    @given(kernels(tricky=tricky, invalid_rate=invalid_rate))
    def collect(case):
        drawn.append(case)

    if seed_value is not None and not derandomize:
        collect = seed(seed_value)(collect)
    collect()
    return drawn[:count]


# ------------------------------------------------------------------ running one batch
HEADER = "import cuda.tile as ct\n\n\n"


@dataclass
class Outcome:
    case: Case
    module: str
    status: str = "missing"
    codes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # property violations
    notes: list[str] = field(default_factory=list)  # not violations, but worth reporting (invalid accepted)


def write_batch(cases: list[Case], src: Path) -> list[str]:
    """One file per kernel (a syntax problem in one cannot hide the others); returns the module names."""
    src.mkdir(parents=True, exist_ok=True)
    mods = []
    for i, c in enumerate(cases):
        mod = f"k{i:03d}"
        (src / f"{mod}.py").write_text(HEADER + c.source)
        mods.append(mod)
    return mods


def cargo_check(crate: Path, env: dict, timeout: int = 1800) -> subprocess.CompletedProcess:
    return subprocess.run(["cargo", "check", "--release", "--message-format", "short", "--manifest-path", str(crate / "Cargo.toml")],
                          capture_output=True, text=True, env=env, timeout=timeout)


def run_batch(cases: list[Case], work: Path, cargo: bool = True) -> tuple[list[Outcome], dict]:
    """CLI once over the batch, then one `cargo check` of the crate; every kernel's outcome checked."""
    from transpiler.verify.toolchain import cache_dir
    src, out = work / "src", work / "out"
    mods = write_batch(cases, src)
    env = dict(os.environ)
    env.setdefault("CUTILE_TRANSPILE_CACHE", str(work / ".cache"))
    env.setdefault("CARGO_TARGET_DIR", str(cache_dir() / "target"))  # shared: the crate deps take minutes
    exe = shutil.which("cutile-transpile") or "cutile-transpile"
    t0 = time.monotonic()
    r = subprocess.run([exe, str(src), "-o", str(out), "--format", "json"], capture_output=True, text=True,
                       env=env, timeout=1800)
    info = {"rc": r.returncode, "transpile_s": time.monotonic() - t0, "cargo_s": 0.0, "cargo_rc": None,
            "global": []}
    outs = [Outcome(c, m) for c, m in zip(cases, mods)]
    by_mod = {o.module: o for o in outs}
    if "Traceback (most recent call last)" in r.stderr:
        info["global"].append("traceback on stderr:\n" + r.stderr[-3000:])
    if r.returncode not in (0, 1):
        info["global"].append(f"exit {r.returncode}:\n{r.stderr[-2000:]}")
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        info["global"].append(f"stdout is not a JSON document (rc {r.returncode}):\n{r.stdout[-500:]}\n{r.stderr[-2000:]}")
        doc = {"kernels": []}
    if doc.get("error"):
        info["global"].append(f"the run failed (rc {r.returncode}): {doc['error']}\n{r.stderr[-2000:]}")
    for k in doc.get("kernels", []):
        mod = Path(k.get("source", "")).stem
        o = by_mod.get(mod)
        if o is None:
            info["global"].append(f"unknown kernel in the report: {k.get('name')} {k.get('source')}")
            continue
        o.status = k.get("status", "?")
        for d in k.get("diagnostics", []):
            o.codes.append(d.get("code", ""))
            msg = d.get("message", "")
            if d.get("code") == "CT900" or "internal error" in msg:
                o.problems.append(f"internal error: {msg}")
            if not d.get("code") or not isinstance(d.get("line"), int) or d.get("line", 0) < 1:
                o.problems.append(f"diagnostic without code/position: {d}")
        if o.status != "translated" and not any(d.get("severity") == "error" for d in k.get("diagnostics", [])):
            o.problems.append(f"status {o.status} without an error diagnostic")
        if o.status == "translated" and o.case.invalid:
            o.notes.append(f"invalid construct `{o.case.invalid}` accepted (translated)")
        if o.status == "error" or (o.status != "translated" and not o.case.invalid):
            # reported, so not a property violation, but a well-formed kernel that was not ported
            o.notes.append(f"well-formed kernel not ported: {o.status}: " + "; ".join(
                f"[{d.get('code')}] {d.get('message', '')[:400]}" for d in k.get("diagnostics", [])))
    for d in doc.get("diagnostics", []) if isinstance(doc.get("diagnostics"), list) else []:
        if d.get("code") == "CT900" or "internal error" in d.get("message", ""):
            path = Path(d.get("path", "")).stem
            (by_mod[path].problems if path in by_mod else info["global"]).append(f"internal error: {d.get('message')}")
    for o in outs:
        if o.status == "missing":
            file_diags = [d for d in doc.get("diagnostics", []) if Path(d.get("path", "")).stem == o.module]
            if file_diags and all(d.get("code") and d.get("line", 0) >= 1 for d in file_diags):
                o.status = "file-diagnostic"
                o.codes += [d["code"] for d in file_diags]
                if any(d["code"] == "CT900" for d in file_diags):
                    o.problems.append("internal error at file level")
            else:
                o.problems.append("kernel missing from the report, without a file diagnostic")
    if all(o.status == "missing" for o in outs) and not info["global"]:
        info["global"].append(f"no kernel of the batch in the report (rc {r.returncode}):\n{r.stdout[:1000]}\n"
                              f"{r.stderr[-2000:]}")
    if r.returncode == 0 and any(o.status != "translated" for o in outs):
        info["global"].append("exit 0 although kernels were not translated")
    if cargo and (out / "Cargo.toml").is_file():
        from transpiler.verify.toolchain import cargo_env
        cenv = cargo_env()
        cenv["CARGO_TARGET_DIR"] = env["CARGO_TARGET_DIR"]
        t1 = time.monotonic()
        c = cargo_check(out, cenv)
        info["cargo_s"], info["cargo_rc"] = time.monotonic() - t1, c.returncode
        if c.returncode != 0:
            blamed = False
            for line in (c.stderr + c.stdout).splitlines():
                m = re.match(r"^(?:.*/)?src/(\w+)/(?:kernel|ffi)\.rs:(\d+):\d+: error", line)
                if m and m.group(1) in by_mod:
                    o = by_mod[m.group(1)]
                    o.problems.append(f"crate does not compile (rc {r.returncode}): {line}")
                    blamed = True
            if not blamed:
                info["global"].append(f"cargo check failed (rc {r.returncode}):\n{(c.stderr + c.stdout)[-3000:]}")
    elif cargo and r.returncode == 0:
        info["global"].append("exit 0 but no crate written")
    return outs, info


def summarize(outs: list[Outcome]) -> dict:
    statuses = collections.Counter(o.status for o in outs)
    codes = collections.Counter(c for o in outs for c in set(o.codes))
    return {"statuses": dict(sorted(statuses.items())), "codes": dict(sorted(codes.items()))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=200, help="kernels in all")
    ap.add_argument("--batch", type=int, default=50, help="kernels per CLI run and cargo check")
    ap.add_argument("--invalid-rate", type=float, default=0.15)
    ap.add_argument("--tricky", action="store_true", help="also Rust keywords and crate names as identifiers")
    ap.add_argument("--no-cargo", action="store_true")
    ap.add_argument("--keep", type=Path, help="keep the generated sources and crates here")
    args = ap.parse_args(argv)

    cases = draw_cases(args.count, args.seed, tricky=args.tricky, invalid_rate=args.invalid_rate)
    drawn = [cases[i:i + args.batch] for i in range(0, len(cases), args.batch)]
    t0 = time.monotonic()
    base = args.keep or Path(tempfile.mkdtemp(prefix="property_kernels_"))
    all_outs: list[Outcome] = []
    globals_: list[str] = []
    for i, b in enumerate(drawn):
        outs, info = run_batch(b, base / f"batch{i:03d}", cargo=not args.no_cargo)
        all_outs += outs
        globals_ += info["global"]
        print(f"batch {i}: {len(b)} kernels, rc {info['rc']}, transpile {info['transpile_s']:.1f} s, "
              f"cargo check {info['cargo_s']:.1f} s (rc {info['cargo_rc']})", flush=True)
    dt = time.monotonic() - t0
    s = summarize(all_outs)
    bad = [o for o in all_outs if o.problems]
    print(f"\nseed {args.seed}: {len(all_outs)} kernels in {len(drawn)} batches, {dt:.1f} s")
    print("statuses:", s["statuses"])
    print("codes:", s["codes"])
    print("families:", dict(collections.Counter(o.case.family for o in all_outs)))
    notes = [o for o in all_outs if o.notes]
    for o in notes:
        print(f"\nNOTE {o.module} ({', '.join(o.case.tags)}): {'; '.join(o.notes)}\n{o.case.source}")
    for o in bad:
        print(f"\nFAIL {o.module} ({', '.join(o.case.tags)}): status {o.status}, codes {o.codes}")
        for p in o.problems:
            print("   ", p[:600])
        print(o.case.source)
    for g in globals_:
        print("\nFAIL (run):", g[:3000])
    print(f"\n{len(bad)} kernels violate the property; {len(globals_)} run-level failures; "
          f"{len(notes)} notes (invalid constructs accepted, well-formed kernels not ported)")
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if bad or globals_ else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
