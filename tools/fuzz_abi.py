#!/usr/bin/env python3
"""Seeded fuzzing of a generated crate's C ABI: every `cutile_*` symbol, called through ctypes.

usage: python tools/fuzz_abi.py OUT LIB [--seeds 1,2,3] [--calls N] [--dry-run] [--json]
  OUT   a directory written by cutile-transpile (manifest.json, src/*/ffi.rs)
  LIB   its shared library (`cutile-transpile build OUT`)
  N     calls per seed (default 20000), spread round-robin over the symbols

Each call is a valid call of the symbol (one per specialization), a valid call with one or two fields
mutated, or a random call (random descriptors, ranks, dtypes, pointers, constants, variant, grid, device,
stream). The signatures are read from `src/*/ffi.rs` (not from the view model that wrote them), and an
oracle written from README's list of checks says which codes a call may get:
- a call that breaks a listed rule must get the code of one of the rules it breaks (never 0, 12 or 13);
- a call that breaks none must reach the device step: code 12 on a machine without a CUDA driver;
- no call may crash the process, return 14 (a caught panic) or a code outside 0..14.
With --dry-run the calls run in the library's dry-run mode (`cutile_dry_run`): every check must still
give its code (and leave no plan), and a call that breaks none must return 0 with a launch plan of its symbol
(`cutile_last_plan`), never touching the driver, so this mode may run where a CUDA driver is present.
The calls run in a child process; it records the index of each call before making it, so a crash is
reported with the arguments of the call that caused it. Refuses to run where a CUDA driver is present (valid
calls would launch kernels on fake pointers). Prints calls, seeds, time, the code histogram and every
violation.
"""

from __future__ import annotations

import argparse
import ctypes as C
import json
import math
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

I32 = 2**31 - 1
MAX_RANK = 8
DTYPE_CODES = {"f32": 0, "f16": 1, "bf16": 2, "i32": 3, "i64": 4, "f8e5m2": 5, "f8e4m3fn": 6, "i8": 7, "u8": 8,
               "i16": 9, "bool": 10}
SIZE = {0: 4, 1: 2, 2: 2, 3: 4, 4: 8, 5: 1, 6: 1, 7: 1, 8: 1, 9: 2, 10: 1}
GENERIC_DTYPES = ("E",) + tuple(f"E{i}" for i in range(2, 17))  # README: arrays typed with one dtype generic share its dtype


def is_generic(dtype: str) -> bool:
    return dtype in GENERIC_DTYPES
CODE_NAMES = ["ok", "null", "rank", "dtype", "dtype mismatch", "shape", "stride", "align", "grid",
              "grid mismatch", "variant", "const", "device", "launch", "panic"]
BASE_PTR = 0x7F0000000000


class CutileTensor(C.Structure):
    _fields_ = [("ptr", C.c_void_p), ("ndim", C.c_int32), ("shape", C.c_int64 * MAX_RANK),
                ("strides", C.c_int64 * MAX_RANK), ("dtype", C.c_int32)]


def parse_signatures(out: Path) -> dict[str, list[tuple[str, str]]]:
    """`extern "C"` symbol -> [(parameter, Rust type)] from the generated ffi.rs files."""
    sigs = {}
    for f in sorted((out / "src").glob("*/ffi.rs")):
        for m in re.finditer(r'pub unsafe extern "C" fn (cutile_\w+)\((.*?)\)\s*->\s*i32', f.read_text(), re.S):
            params = [tuple(s.strip() for s in part.split(":", 1)) for part in m.group(2).split(",") if part.strip()]
            sigs[m.group(1)] = params
    return sigs


def const_eval(expr, env):
    if isinstance(expr, int):
        return expr
    return eval(str(expr), {"__builtins__": {}}, dict(env))  # noqa: S307 - expressions from the manifest


# ------------------------------------------------------------------------------------------- oracle

class Kernel:
    """What the oracle needs of one manifest record."""

    def __init__(self, record: dict):
        self.rec = record
        self.params = record["params"]
        self.entries = record["entries"]
        self.written = {o["array"] for e in self.entries for o in e["outputs"]}
        self.pointers = {a for e in self.entries for a in e.get("pointer_arrays", [])}
        e_arrays = [p for p in self.params if p["kind"] == "array" and is_generic(p["dtype"])]
        self.allowed = {DTYPE_CODES[d] for d in record.get("dtypes", []) if d in DTYPE_CODES} if e_arrays else set()
        # a kernel of more than two generics exports a bounded set of their dtype combinations (manifest
        # `element_combinations`): each generic takes the dtypes it has there, and a call of another
        # combination is refused (`3`) once every other check passed
        self.generics = [g for g in GENERIC_DTYPES if any(p["kind"] == "array" and p["dtype"] == g for p in self.params)]
        self.combinations = {tuple(DTYPE_CODES[d] for d in c) for c in record.get("element_combinations", [])}
        self.allowed_of = {g: {c[i] for c in self.combinations} for i, g in enumerate(self.generics)} \
            if self.combinations else {}


def _unread(k: Kernel, args: dict) -> set[str]:
    """Arrays read only under a constant condition (manifest `read_when`) that this call's constants make false:
    the symbol takes any descriptor for them, null too. A condition that cannot be evaluated counts as true."""
    consts = {p["name"]: args[p["name"]] for p in k.params if p["kind"] == "const"}
    out = set()
    for p in k.params:
        if p["kind"] == "array" and p.get("read_when"):
            try:
                if not const_eval(p["read_when"], consts):
                    out.add(p["name"])
            except (ZeroDivisionError, NameError, SyntaxError, TypeError, ValueError):
                pass
    return out


def expected_codes(k: Kernel, args: dict, descs: dict) -> set[int]:
    """The codes of the rules this call breaks (empty: a valid call, which must reach the device)."""
    bad: set[int] = set()
    descs = {n: d for n, d in descs.items() if n not in _unread(k, args)}  # never checked: any descriptor or null
    for p in k.params:
        if p["kind"] == "array" and p["name"] in descs:
            bad |= _descriptor_faults(k, p, descs.get(p["name"]))
        elif p["kind"] == "const":
            v = args[p["name"]]
            if p["const_type"] == "float":  # a double: refused when not finite, or past f32's range
                if not math.isfinite(v) or not math.isfinite(_as_f32(v)):
                    bad.add(11)
            elif p["const_type"] == "bool" and v not in (0, 1):
                bad.add(11)
            elif not -2**31 <= v <= I32:
                bad.add(11)
    arrays = [p for p in k.params if p["kind"] == "array"]
    for p in arrays:  # a concrete dtype
        d = descs.get(p["name"])
        if d is not None and not is_generic(p["dtype"]) and d["dtype"] in SIZE and d["dtype"] != DTYPE_CODES[p["dtype"]]:
            bad.add(3)
    e_known = []  # E's dtype codes (the one the entries are selected by)
    combination = []  # each generic's dtype code (None: unknown)
    for g in GENERIC_DTYPES:  # each generic: the arrays typed with it share one allowed dtype
        codes = [descs[p["name"]]["dtype"] for p in arrays if p["dtype"] == g and descs.get(p["name"]) is not None]
        known = [c for c in codes if c in SIZE]
        if len(set(known)) > 1:
            bad.add(4)
        elif known and known[0] not in k.allowed_of.get(g, k.allowed):
            bad.add(3)
        e_known = known if g == "E" else e_known
        if g in k.generics:
            combination.append(known[0] if known else None)
    for g, limit in (("__grid_x", I32), ("__grid_y", 65535), ("__grid_z", 65535)):
        if not 1 <= args[g] <= limit:
            bad.add(8)
    if bad:
        return bad
    consts = {p["name"]: args[p["name"]] for p in k.params if p["kind"] == "const"}
    if len(k.entries) > 1:
        v = args["__variant"]
        try:
            ok = 0 <= v < len(k.entries) and all(const_eval(pr, consts) for pr in k.entries[v]["predicates"]) \
                and _takes_element(k.entries[v], e_known[0] if e_known else None)
        except ZeroDivisionError:
            return {11}
        if not ok:
            return {10}
        entry = k.entries[v]
    else:
        entry = k.entries[0]
    env = dict(consts)
    try:
        for name, expr in entry.get("derived", {}).items():
            env[name] = const_eval(expr, env)
            if not -2**31 <= env[name] <= I32:
                return {11}
    except ZeroDivisionError:
        return {11}
    dims = list(entry.get("tile_dims", [])) + [d for shape in entry.get("tiles", {}).values() for d in shape]
    for d in dims:
        try:
            value = const_eval(d, env)
        except (ZeroDivisionError, NameError, SyntaxError):
            continue  # no Rust form: not checked by the ABI
        if value < 1 or value > I32 or value & (value - 1):
            return {11}
    grid = (args["__grid_x"], args["__grid_y"], args["__grid_z"])
    for o in entry["outputs"]:
        if o["form"] != "checked":
            continue
        d = descs[o["array"]]
        tile = [const_eval(t, env) for t in entry["tiles"][o["array"]]]
        shape = d["shape"][:len(tile)]
        if any(s < 1 for s in shape):
            return {5}
        want = [-(-s // t) for s, t in zip(shape, tile)][:3]
        want += [1] * (3 - len(want))
        if len(shape) > 3 or tuple(want) != grid:
            return {9}
    if k.combinations and None not in combination and tuple(combination) not in k.combinations:
        return {3}  # a combination the symbol does not export (its launch match refuses it)
    return set()


def _descriptor_faults(k: Kernel, p: dict, d: dict | None) -> set[int]:
    if d is None:
        return {1}
    rank = p["rank"]
    if d["ndim"] != rank:
        return {2}
    if d["dtype"] not in SIZE:
        return {3}
    if d["ptr"] % 2**64 == 0:
        return {1}
    if (d["ptr"] % 2**64) % SIZE[d["dtype"]]:
        return {7}
    shape, strides = d["shape"][:rank], d["strides"][:rank]
    for i in range(rank):
        if not 0 <= shape[i] <= I32:
            return {5}
        if not 0 <= strides[i] <= I32:
            return {6}
        if p["name"] in k.written and strides[i] == 0 and shape[i] > 1:
            return {6}
    if sum((s - 1) * t for s, t in zip(shape, strides) if s > 0) > I32:
        return {5}
    if p["name"] in k.pointers and rank > 0 and shape[-1] > 1 and strides[-1] != 1:
        return {6}
    return set()


# --------------------------------------------------------------------------------------- generation

def _takes_element(entry: dict, code: int | None) -> bool:
    """An entry of some element types only (manifest `dtypes`) is refused for the others (CUTILE_ERR_VARIANT)."""
    return not entry.get("dtypes") or code is None or code in {DTYPE_CODES[d] for d in entry["dtypes"]}


def valid_calls(k: Kernel) -> list[tuple[dict, dict]]:
    """One call per specialization that passes every check (grid = the partition grid of checked outputs)."""
    out = []
    e_code = min(k.allowed) if k.allowed else 0
    for spec in k.rec["specializations"]:
        vi = next((i for i, e in enumerate(k.entries)
                   if all(const_eval(pr, spec) for pr in e["predicates"]) and _takes_element(e, e_code if k.allowed else None)),
                  None)
        if vi is None:
            continue
        entry = k.entries[vi]
        env = dict(spec)
        for name, expr in entry.get("derived", {}).items():
            env[name] = const_eval(expr, env)
        args, descs = {}, {}
        blocks = (2, 1, 1)
        for i, p in enumerate(k.params):
            if p["kind"] == "array":
                rank = p["rank"]
                tile = entry.get("tiles", {}).get(p["name"])
                shape = [const_eval(t, env) * blocks[j] if j < 3 else const_eval(t, env)
                         for j, t in enumerate(tile)] if tile else [16] * rank
                strides = [1] * rank
                for j in range(rank - 2, -1, -1):
                    strides[j] = strides[j + 1] * shape[j + 1]
                dtype = e_code if is_generic(p["dtype"]) else DTYPE_CODES[p["dtype"]]
                descs[p["name"]] = {"ptr": BASE_PTR + i * 2**32, "ndim": rank, "shape": shape + [0] * (8 - rank),
                                    "strides": strides + [0] * (8 - rank), "dtype": dtype}
            elif p["kind"] == "const":
                args[p["name"]] = float(spec[p["name"]]) if p["const_type"] == "float" else int(spec[p["name"]])
            else:
                args[p["name"]] = 1.0 if p["dtype"] in ("f32", "f64") else 1
        checked = any(o["form"] == "checked" for o in entry["outputs"])
        grid = blocks if checked else (1, 1, 1)
        args.update(__variant=vi, __grid_x=grid[0], __grid_y=grid[1], __grid_z=grid[2], __device=0, __stream=0)
        out.append((args, descs))
    return out


def _rnd64(rng):
    return rng.choice([0, 1, -1, 2, 3, 63, 64, 1024, I32, I32 + 1, -I32 - 1, -I32 - 2, 2**62, -2**62, 2**63 - 1,
                       -2**63, rng.randint(-2**63, 2**63 - 1), rng.randint(-100, 100), rng.randint(0, 2**40)])


def _rptr(rng):
    return rng.choice([0, 1, 2, 3, 6, 7, 0x1001, BASE_PTR, BASE_PTR + 1, BASE_PTR + 2, 2**64 - 1, 2**63,
                       rng.randint(0, 2**64 - 1), rng.randint(0, 2**48) & ~7])


def _rdesc(rng, rank):
    return {"ptr": _rptr(rng), "ndim": rng.choice([rank, rank, rank, -1, 0, 8, 9, -2**31, I32, rng.randint(-2**31, I32)]),
            "shape": [_rnd64(rng) for _ in range(8)], "strides": [_rnd64(rng) for _ in range(8)],
            "dtype": rng.choice([-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 100, I32, -2**31, rng.randint(-2**31, I32)])}


def _rfloat(rng):
    return rng.choice([0.0, 1.0, -1.0, float("nan"), float("inf"), -float("inf"), 1e38, rng.uniform(-1e9, 1e9)])


def _rfloat_const(rng):
    """A ct.Constant[float] value: the ABI refuses NaN, ±inf and values past f32's range (1e39)."""
    return rng.choice([0.0, 1e-6, -1.0, float("nan"), float("inf"), -float("inf"), 1e39, -3.5e38, 3.4e38,
                       rng.uniform(-1e9, 1e9)])


CONST_VALUES = [0, -1, -64, 1, 2, 3, 7, 48, 100, 2**31, -2**31 - 1, 2**40, I32, 128, 32]


def _mutate(rng, k: Kernel, args: dict, descs: dict) -> None:
    arrays = [p["name"] for p in k.params if p["kind"] == "array"]
    consts = [p["name"] for p in k.params if p["kind"] == "const"]
    floats = {p["name"] for p in k.params if p["kind"] == "const" and p["const_type"] == "float"}
    for _ in range(rng.choice([1, 1, 2])):
        what = rng.random()
        if what < 0.5 and arrays:
            a = rng.choice(arrays)
            d = descs[a]
            if d is None:
                continue
            f = rng.choice(["ptr", "ndim", "shape", "strides", "dtype", "null"])
            if f == "null":
                descs[a] = None
            elif f == "ptr":
                d["ptr"] = _rptr(rng)
            elif f == "ndim":
                d["ndim"] = rng.choice([d["ndim"] - 1, d["ndim"] + 1, -1, 9, 0])
            elif f == "dtype":
                d["dtype"] = rng.choice([-1, 0, 1, 2, 3, 4, 5, 6, 7, 8])
            else:
                i = rng.randrange(max(1, d["ndim"]) if 0 < d["ndim"] <= 8 else 8)
                d[f][i] = rng.choice([0, 1, -1, 2**62, I32, I32 + 1, 2**31, d[f][i] * 2, d[f][i] + 1, 3, 2**20])
        elif what < 0.75 and consts:
            c = rng.choice(consts)
            args[c] = _rfloat_const(rng) if c in floats else rng.choice(CONST_VALUES)
        elif what < 0.88:
            args[rng.choice(["__grid_x", "__grid_y", "__grid_z"])] = rng.choice([0, -1, 2, 3, 65536, I32 + 1, 2**40])
        elif what < 0.95:
            args["__variant"] = rng.choice([-1, 0, 1, 2, 3, 5, 16, I32])
        else:
            args["__device"] = rng.choice([-1, 1, 7, I32])
            args["__stream"] = _rptr(rng)


def generate(kernels: dict[str, Kernel], symbols: list[str], seed: int, n: int):
    """(symbol, mode, args, descs) for n calls, deterministic in (seed, n): symbols round-robin; modes valid
    (each specialization once per round), mutated-valid and random."""
    rng = random.Random(seed)
    valid = {s: valid_calls(kernels[s]) for s in symbols}
    for i in range(n):
        sym = symbols[i % len(symbols)]
        k = kernels[sym]
        rnd = i // len(symbols)
        base = valid[sym][rnd % len(valid[sym])] if valid[sym] else None
        r = rng.random()
        mode = "valid" if base is not None and (rnd < len(valid[sym]) or r < 0.05) else (
            "mutate" if base is not None and r < 0.6 else "random")
        if base is None:
            mode = "random"
            base = ({**{p["name"]: 0 for p in k.params}, "__variant": 0, "__grid_x": 1, "__grid_y": 1,
                     "__grid_z": 1, "__device": 0, "__stream": 0}, {})
        args, descs = json.loads(json.dumps(base[0])), json.loads(json.dumps(base[1]))
        if mode == "mutate":
            _mutate(rng, k, args, descs)
        elif mode == "random":
            for p in k.params:
                if p["kind"] == "array":
                    descs[p["name"]] = None if rng.random() < 0.05 else _rdesc(rng, p["rank"])
                elif p["kind"] == "const" and p["const_type"] == "float":
                    args[p["name"]] = _rfloat_const(rng)
                elif p["kind"] == "const":
                    args[p["name"]] = _rnd64(rng) if rng.random() < 0.7 else rng.choice(CONST_VALUES)
                elif p["dtype"] in ("f32", "f64"):
                    args[p["name"]] = _rfloat(rng)
                elif p["dtype"] == "bool":
                    args[p["name"]] = rng.choice([0, 1])
                else:
                    args[p["name"]] = rng.randint(-2**31, I32)
            args.update(__variant=rng.choice([-1, 0, 1, 2, 3, 16, I32, -2**31, rng.randint(-2**31, I32)]),
                        __grid_x=_rnd64(rng), __grid_y=_rnd64(rng), __grid_z=_rnd64(rng),
                        __device=rng.choice([0, -1, 1, 7, I32, -2**31]), __stream=rng.choice([0, _rptr(rng)]))
        yield sym, mode, args, descs


# ------------------------------------------------------------------------------------------ calling

CTYPES = {"*const abi::CutileTensor": C.POINTER(CutileTensor), "*mut c_void": C.c_void_p, "f32": C.c_float,
          "f64": C.c_double, "i32": C.c_int32, "i64": C.c_int64, "bool": C.c_bool}


def _as_f32(v: float) -> float:
    """`v` rounded to f32 (±inf past its range), as the ABI's `value as f32`."""
    try:
        return struct.unpack("<f", struct.pack("<f", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def _wrap(v: int, bits: int) -> int:
    return ((v + 2**(bits - 1)) % 2**bits) - 2**(bits - 1)


def load(out: Path, lib_path: Path):
    manifest = json.loads((out / "manifest.json").read_text())
    records = {k["symbol"]: k for m in manifest["modules"] for k in m["kernels"] if k.get("symbol")}
    sigs = parse_signatures(out)
    missing = sorted(set(records) ^ set(sigs))
    if missing:
        raise SystemExit(f"manifest symbols and ffi.rs signatures differ: {missing}")
    lib = C.CDLL(str(lib_path))
    lay = (C.c_uint64 * 8)()
    lib.cutile_abi_layout(lay, C.c_size_t(8))
    mirror = [C.sizeof(CutileTensor), C.alignment(CutileTensor), CutileTensor.ptr.offset, CutileTensor.ndim.offset,
              CutileTensor.shape.offset, CutileTensor.strides.offset, CutileTensor.dtype.offset, MAX_RANK]
    if list(lay) != mirror:
        raise SystemExit(f"descriptor layout {list(lay)} differs from the mirror {mirror}")
    lib.cutile_last_error.restype = C.c_char_p
    for s, ps in sigs.items():
        f = getattr(lib, s)
        f.argtypes = [CTYPES[t] for _, t in ps]
        f.restype = C.c_int32
    return lib, {s: Kernel(r) for s, r in records.items()}, sigs


def make_call(fn, sig, k: Kernel, args: dict, descs: dict) -> int:
    rust_to_py = {p["rust_name"]: p["name"] for p in k.params}
    keep, vals = [], []
    for rname, ty in sig:
        name = rust_to_py.get(rname, rname)
        if ty == "*const abi::CutileTensor":
            d = descs.get(name)
            if d is None:
                vals.append(None)
                continue
            t = CutileTensor()
            t.ptr, t.ndim, t.dtype = d["ptr"] % 2**64 or None, _wrap(d["ndim"], 32), _wrap(d["dtype"], 32)
            for i in range(MAX_RANK):
                t.shape[i], t.strides[i] = _wrap(d["shape"][i], 64), _wrap(d["strides"][i], 64)
            keep.append(t)
            vals.append(C.pointer(t))
        else:
            v = args.get(name, 0)
            if ty == "i32":
                v = _wrap(v, 32)
            elif ty == "i64":
                v = _wrap(v, 64)
            elif ty == "*mut c_void":
                v = (v % 2**64) or None
            vals.append(v)
    return fn(*vals)


def worker(out: Path, lib_path: Path, seed: int, n: int, progress: Path, result: Path, dry_run: bool = False) -> None:
    """Makes the calls in this process: the index of each call is written (and flushed) before it is made."""
    lib, kernels, sigs = load(out, lib_path)
    symbols = sorted(sigs)
    hist: dict[int, int] = {}
    modes: dict[str, int] = {}
    violations = []
    valid_seen = 0
    lib.cutile_last_plan.restype = C.c_char_p
    if dry_run:
        lib.cutile_dry_run(1)
    with open(progress, "w") as prog:
        for i, (sym, mode, args, descs) in enumerate(generate(kernels, symbols, seed, n)):
            prog.write(f"{i}\n")
            prog.flush()
            code = make_call(getattr(lib, sym), sigs[sym], kernels[sym], args, descs)
            hist[code] = hist.get(code, 0) + 1
            modes[mode] = modes.get(mode, 0) + 1
            want = expected_codes(kernels[sym], args, descs)
            problem = None
            if code == 14 or not 0 <= code <= 14:
                problem = "panic or unknown code"
            elif want and code not in want:
                problem = f"breaks rules {sorted(want)}, got {code}"
            elif want and dry_run and lib.cutile_last_plan():
                problem = f"failed a check (code {code}) but left a launch plan"
            elif not want and dry_run and _wrap(args.get("__device", 0), 32) < 0:
                if code != 12 or lib.cutile_last_plan():
                    problem = f"negative device in dry-run mode got {code} (or left a plan), not 12"
            elif not want:
                valid_seen += 1
                if dry_run:
                    plan = json.loads((lib.cutile_last_plan() or b"{}").decode())
                    if code != 0 or plan.get("symbol") != sym:
                        problem = f"valid call in dry-run mode got {code} and plan {plan}, not 0 and a plan"
                elif code != 12:
                    problem = f"valid call got {code}, not 12 (device unavailable)"
            if problem and len(violations) < 50:
                message = (lib.cutile_last_error() or b"").decode(errors="replace")
                violations.append({"index": i, "symbol": sym, "mode": mode, "problem": problem, "message": message,
                                   "args": {a: str(v) for a, v in args.items()}, "descs": descs})
    result.write_text(json.dumps({"hist": hist, "modes": modes, "violations": violations, "valid": valid_seen}))


def driver_present() -> bool:
    try:
        C.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def fuzz(out: Path, lib_path: Path, seeds: list[int], calls: int, timeout: float = 3600,
         dry_run: bool = False) -> dict:
    """Runs `calls` calls per seed, each seed in a child process; returns the figures and any crash."""
    if driver_present() and not dry_run:
        raise SystemExit("a CUDA driver is present: valid calls would launch kernels on fake pointers; "
                         "fuzz on a machine without one")
    t0 = time.perf_counter()
    hist: dict[int, int] = {}
    modes: dict[str, int] = {}
    violations, crashes, valid = [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            progress, result = Path(tmp) / f"progress{seed}", Path(tmp) / f"result{seed}.json"
            cmd = [sys.executable, __file__, str(out), str(lib_path), "--worker", "--seeds", str(seed),
                   "--calls", str(calls), "--progress", str(progress), "--result", str(result)]
            cmd += ["--dry-run"] if dry_run else []
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            if proc.returncode != 0 or not result.exists():
                lines = progress.read_text().split() if progress.exists() else []
                last = int(lines[-1]) if lines else None
                call = None
                if last is not None:
                    _, kernels, sigs = _offline(out)
                    for call in generate(kernels, sorted(sigs), seed, last + 1):
                        pass
                    call = {"symbol": call[0], "mode": call[1], "args": {a: str(v) for a, v in call[2].items()},
                            "descs": call[3]}
                crashes.append({"seed": seed, "returncode": proc.returncode, "call_index": last, "call": call,
                                "stderr": proc.stderr[-2000:]})
                continue
            r = json.loads(result.read_text())
            for c, v in r["hist"].items():
                hist[int(c)] = hist.get(int(c), 0) + v
            for m, v in r["modes"].items():
                modes[m] = modes.get(m, 0) + v
            violations += [{**v, "seed": seed} for v in r["violations"]]
            valid += r["valid"]
    return {"calls": sum(hist.values()), "seeds": seeds, "symbols": len(parse_signatures(out)),
            "seconds": round(time.perf_counter() - t0, 2), "codes": dict(sorted(hist.items())), "modes": modes,
            "valid_calls": valid, "violations": violations, "crashes": crashes}


def _offline(out: Path):
    manifest = json.loads((out / "manifest.json").read_text())
    records = {k["symbol"]: k for m in manifest["modules"] for k in m["kernels"] if k.get("symbol")}
    return None, {s: Kernel(r) for s, r in records.items()}, parse_signatures(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("lib", type=Path)
    ap.add_argument("--seeds", default="1", help="comma-separated seeds (default 1)")
    ap.add_argument("--calls", type=int, default=20000, help="calls per seed (default 20000)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--dry-run", action="store_true", help="call in the library's dry-run mode (valid calls: 0)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--progress", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",") if s.strip()]
    if a.worker:
        worker(a.out, a.lib, seeds[0], a.calls, a.progress, a.result, a.dry_run)
        return 0
    r = fuzz(a.out, a.lib, seeds, a.calls, dry_run=a.dry_run)
    if a.json:
        print(json.dumps(r, indent=2, default=str))
    else:
        print(f"{r['calls']} calls over {r['symbols']} symbols, seeds {r['seeds']}, {r['seconds']} s "
              f"({r['valid_calls']} valid calls); modes {r['modes']}")
        print("codes: " + ", ".join(f"{c} {CODE_NAMES[c] if 0 <= c < len(CODE_NAMES) else '?'}: {n}"
                                     for c, n in r["codes"].items()))
        for v in r["violations"]:
            print(f"VIOLATION seed {v['seed']} call {v['index']} {v['symbol']} ({v['mode']}): {v['problem']}: "
                  f"{v['message']}")
        for c in r["crashes"]:
            print(f"CRASH seed {c['seed']} (returncode {c['returncode']}) at call {c['call_index']}: {c['call']}\n"
                  f"{c['stderr']}")
    return 1 if r["violations"] or r["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
