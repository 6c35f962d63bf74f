"""Verification of an output directory, driven by its manifest alone (hand edits are seen).

1. the crate builds with cargo;
2. for every kernel, specialization and dtype: the Rust entry compiled by cuTile Rust's
   compile-only API and the Python kernel exported by cuTile Python give the same normalized
   Tile IR (see normalize.py). Verdict per kernel: equivalent | different | not_verified.
3. a Triton port (no Tile IR of the source to compare with) is `compiled`, and where reference cases exist
   its entry's Tile IR is interpreted on them (interpret/): numbers_match | numbers_differ.
"""

from __future__ import annotations

import difflib
import importlib.util
import itertools
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..frontend.modules import package_root
from ..output.guard import UnsafePath, inside
from .specs import (twin_entries, comparand_probes, domain_checks, entry_params, const_value, coverage_probes, coverage_summary, coverage_text, domain_probes, dtype_checks, element_types,
                    kernel_generics, predicates_hold, verified_generics)
from .manifest_check import manifest_problems
from .normalize import TARGET, IRParseError, normalize, python_arg_names, rust_arg_names
from .entries import Check, rust_rank, rust_static_strides, select_entry
from .irdump import IrdumpPool, job_key
from .toolchain import (ToolchainError, cargo_build, cargo_env, crate_build_lock, disassemble, irdump_binary)


@dataclass
class KernelVerdict:
    module: str
    kernel: str
    source: str
    verdict: str
    checks: list[Check] = field(default_factory=list)
    reason: str = ""
    unprobed: dict[str, str] = field(default_factory=dict)  # constant -> why it was verified at one value only
    # specialization and element types no entry takes (the C symbol refuses them) -> cuTile Python's error there
    refused: dict[str, str] = field(default_factory=dict)
    # a Triton port's element types no entry takes (E restricted by the port; the C symbol refuses them) -> why
    restricted: dict[str, str] = field(default_factory=dict)

    def coverage(self) -> dict:
        cov = coverage_summary([c for c in self.checks if c.probe is None], [])
        cov["values"] = coverage_summary(self.checks, [])["values"]
        cov["one_value_only"] = dict(sorted(self.unprobed.items()))
        if self.refused:
            cov["refused_as_cutile_python_does"] = dict(sorted(self.refused.items()))
        if self.restricted:
            cov["refused_element_types"] = dict(sorted(self.restricted.items()))
        return cov

    def summary_line(self) -> str:
        ok = sum(c.verdict == "equivalent" for c in self.checks)
        at = f" at {coverage_text(self.coverage())}" if self.verdict == "equivalent" else ""
        cases = [c for c in self.checks if c.verdict in ("numbers_match", "numbers_differ", "not_interpreted")]
        if cases:  # a Triton port checked by its numbers (interpret/)
            return (f"{self.kernel}: {self.verdict} (interpreted, {sum(c.verdict == 'numbers_match' for c in cases)}"
                    f"/{len(cases)} cases match)" f"{' - ' + self.reason if self.reason else ''}")
        return (f"{self.kernel}: {self.verdict}{at} ({ok}/{len(self.checks)} checks equivalent)"
                f"{' - ' + self.reason if self.reason else ''}")


def _triton_dtypes(k: dict, spec: dict) -> list[str]:
    """The element types a Triton entry is compiled for: each exported dtype (every generic the same)."""
    if "E" not in select_entry(k["entries"], spec)["generics"]:
        return ["f32"]
    return dtype_checks(k["dtypes"], len(kernel_generics(k)), False) + domain_probes(k)


def _import_source(path: Path):
    """The kernel's module, imported as its package has it; packages it imports that are not installed here
    (torch, triton: host code) are stubs during the import (verify/stubs.py)."""
    from .stubs import missing_packages_stubbed
    root, dotted = package_root(path)
    if "." not in dotted:  # a lone module: loaded under a private name (two sources may share a stem)
        name = f"_cutile_transpile_src_{abs(hash(str(path.resolve())))}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {path}")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        with missing_packages_stubbed(path.parent):
            spec.loader.exec_module(mod)
        return mod
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    with missing_packages_stubbed(root / dotted.partition(".")[0]):
        mod = importlib.import_module(dotted)
    if Path(mod.__file__ or "").resolve() != path.resolve():
        raise ImportError(f"`{dotted}` imports {mod.__file__}, not {path} (another package of that name is "
                          "on sys.path)")
    return mod


def _module_kernel(pymod, name: str, src: Path):
    """The module's `name`, checked to be the `@ct.kernel` of the function `name` in `src`: decorators above
    `@ct.kernel` are ported as if absent, which holds only while they hand the kernel object back."""
    import cuda.tile as ct
    kobj = getattr(pymod, name)
    fn = getattr(kobj, "_pyfunc", None) if isinstance(kobj, ct.kernel) else None
    if fn is None or fn.__name__ != name or Path(fn.__code__.co_filename).resolve() != src.resolve():
        raise LookupError(f"`{name}` of the module is {kobj!r}, not the `@ct.kernel` of its function `{name}` "
                          "(a decorator above `@ct.kernel` replaced it)")
    return kobj


def _factory_kernel(pymod, k: dict):
    """`spec -> cuTile Python kernel` for a kernel a factory function defines: the kernel's code object (from
    the factory's), given the specialization's values as its closure, under the same decorator arguments."""
    import types

    import cuda.tile as ct
    from ..frontend.common import ENTRY_HINTS
    import inspect
    fac = k["factory"]
    factory = inspect.unwrap(getattr(pymod, fac["function"]))  # a cached factory (functools.cache) too

    def find(code):
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                if c.co_name == k["name"]:
                    return c
                found = find(c)
                if found is not None:
                    return found
        return None
    code = find(factory.__code__)
    if code is None or set(code.co_freevars) != set(fac["closure"]):
        raise LookupError(f"`{k['name']}` in `{fac['function']}` reads {sorted(code.co_freevars) if code else '?'} "
                          f"from the factory, the port {sorted(fac['closure'])}")
    python_kw = {v: key for key, v in ENTRY_HINTS.items()}
    kwargs: dict = {}
    for name, v in fac["hints"]:
        target, _, ir = name.rpartition(":")
        kwargs.setdefault(python_kw[ir], {})[target or "default"] = v
    kwargs = {kw: d["default"] if list(d) == ["default"] else ct.ByTarget(**d) for kw, d in kwargs.items()}
    types_of = {p["name"]: p.get("const_type", "int") for p in k["params"]}

    def value(name, spec):
        v = spec[name]
        return bool(v) if types_of[name] == "bool" else float(v) if types_of[name] == "float" else int(v)

    def kernel_at(spec: dict):
        cells = tuple(types.CellType(value(n, spec)) for n in code.co_freevars)
        fn = types.FunctionType(code, pymod.__dict__, k["name"], None, cells)
        return ct.kernel(fn, **kwargs)
    return kernel_at


def _python_bytecode(kernel_obj, params: list[dict], spec: dict, elements: dict[str, str], out: Path) -> None:
    """cuTile Python's Tile IR bytecode of the kernel at `spec` (cached by content where the IR cache is on:
    verify/pycache.py)."""
    from .pycache import cached_export
    cached_export(_export_bytecode, kernel_obj, params, spec, elements, out)


def _export_bytecode(kernel_obj, params: list[dict], spec: dict, elements: dict[str, str], out: Path) -> None:
    import cuda.tile as ct
    from cuda.tile.compilation import (ArrayConstraint, CallingConvention, KernelSignature, ScalarConstraint,
                                       export_kernel)
    dt = {"f16": ct.float16, "bf16": ct.bfloat16, "f32": ct.float32, "i32": ct.int32, "i64": ct.int64,
          "f64": ct.float64, "bool": ct.bool_, "i8": ct.int8, "i16": ct.int16, "u8": ct.uint8, "u32": ct.uint32,
          "f8e4m3fn": ct.float8_e4m3fn, "f8e5m2": ct.float8_e5m2, "tf32": ct.tfloat32}
    sig = []
    for p in params:
        if p["kind"] == "array":
            d = dt[elements.get(p["dtype"], p["dtype"])]
            n = p["rank"]
            sig.append(ArrayConstraint(d, n, index_dtype=ct.int32, stride_lower_bound_incl=0, alias_groups=(),
                                       may_alias_internally=False, stride_constant=((None,) * (n - 1) + (1,)) if n else (),
                                       base_addr_divisible_by=16))
        elif p["kind"] == "scalar":
            sig.append(ScalarConstraint(dt[p["dtype"]]))
        else:
            v = spec[p["name"]]
            sig.append(bool(v) if p["const_type"] == "bool" else float(v) if p["const_type"] == "float" else v)
    export_kernel(kernel_obj, [KernelSignature(sig, CallingConvention.cutile_python_v1())], str(out),
                  gpu_code=None, output_format="tileir_bytecode", bytecode_version="13.4")


def refused_specialization(k: dict, kernel_obj, spec: dict, out: Path) -> "Check | str":
    """Constants no entry of the port takes (an entry's Require predicate, dimensions unified, a static
    assertion that fails there): the C symbol refuses the launch, which is right where cuTile Python refuses
    to compile the kernel at them too. Returns cuTile Python's error where it refuses at every element type
    verify checks, with every entry's parameter layout (ranks may differ per entry); else a Check: `different`
    where it compiles the kernel (the port refuses what cuTile Python runs), `not_verified` where the export
    failed other than by a compile error of the kernel (the backend crashed or timed out, a constant is
    missing): no evidence either way."""
    import cuda.tile as ct
    closure = set(k.get("factory", {}).get("closure", ()))
    layouts = {json.dumps(ps, sort_keys=True): ps for ps in
               ([p for p in entry_params(k, e) if p["name"] not in closure] for e in k["entries"])}
    generic = any("E" in e["generics"] for e in k["entries"])
    dtypes = (dtype_checks(k["dtypes"], len(kernel_generics(k)), False, k.get("element_combinations"))
              or k["dtypes"][:1]) if generic else ["f32"]
    refusal = None
    for dtype in dtypes:
        for params in layouts.values():
            try:
                _python_bytecode(kernel_obj, params, spec, element_types(k, dtype), out)
            except (ct.TileCompilerExecutionError, ct.TileCompilerTimeoutError) as e:
                return Check("", spec, dtype, "not_verified", f"no entry of the port takes {spec}; cuTile Python's "
                             f"compiler failed there ({type(e).__name__}: {str(e)[:200]})")
            except ct.TileError as e:  # the expected outcome: cuTile Python refuses the kernel here
                refusal = refusal or f"{type(e).__name__}: {str(e)[:200]}"
                continue
            except Exception as e:  # noqa: BLE001 - not cuTile Python's verdict on the kernel
                return Check("", spec, dtype, "not_verified", f"no entry of the port takes {spec}; cuTile Python's "
                             f"export failed there before compiling: {type(e).__name__}: {e}")
            return Check("", spec, dtype, "different", f"cuTile Python compiles the kernel at {spec} (element types "
                         f"{dtype}); no entry of the port takes these constants, so its C symbol refuses the launch")
    if refusal is None:
        return Check("", spec, "", "not_verified", f"no entry of the port takes {spec}; no element type to check")
    return refusal


def _rust_params(params: list[dict], outputs: dict[str, str]) -> list[tuple[str, str, int]]:
    out = []
    for p in params:
        if p["kind"] == "array":
            out.append((p["name"], "tensor_mut" if outputs.get(p["name"]) == "checked" else "tensor", rust_rank(p)))
        elif p["kind"] == "scalar":
            out.append((p["name"], "scalar", 0))
    return out


def _build_errors(out: Path, stderr: str) -> dict[tuple[str, str | None], list[str]]:
    """rustc errors (short format) mapped to (rust file, entry) by the line ranges of the entries."""
    import re
    errors: dict[tuple[str, str | None], list[str]] = {}
    for line in stderr.splitlines():
        m = re.match(r"(src/\S+\.rs):(\d+):\d+: error", line)
        if not m:
            continue
        rel, lineno = m.group(1), int(m.group(2))
        try:
            text = inside(out, rel).read_text().splitlines()
        except (OSError, UnsafePath):
            continue
        entry = None
        for i, t in enumerate(text[:lineno], 1):
            fn = re.match(r"\s*pub (?:unsafe )?fn (\w+)", t)
            if fn:
                entry = fn.group(1)
        errors.setdefault((rel, entry), []).append(line)
    return errors


def verify_output(out: Path, kernel_filter: list[str] | None = None, log=None, progress=None,
                  dtypes: Iterable[str] | None = None) -> list[KernelVerdict]:
    """Every kernel's verdict (in manifest order): cached where nothing it depends on changed
    (verify/verdicts.py), the others verified now (the crate is built only when one is). `progress(text)`
    hears how far each long step is (a terminal's status line). `dtypes` (mutation runs): kernels generic
    over E are checked at these dtypes only (the records themselves are checked in full)."""
    from . import verdicts as cache
    manifest = json.loads(inside(out, "manifest.json").read_text())
    pending = [(m, k) for m in manifest["modules"] for k in m["kernels"]
               if not kernel_filter or k["name"] in kernel_filter]
    memo: dict = {}
    keys = [cache.kernel_key(out, m, k, memo) for m, k in pending]
    found = [cache.load(key, _verdict_from) for key in keys]
    todo = [mk for mk, v in zip(pending, found) if v is None]
    if log and len(todo) < len(pending):
        log(f"{len(pending) - len(todo)} of {len(pending)} kernels unchanged since they were verified (cached verdicts)")
    untrusted = manifest_problems(out, manifest, todo) if todo else {}  # the manifest is input, not truth
    checked = [(m, k) for m, k in todo if (m["module"], k["name"]) not in untrusted]
    if dtypes is not None:
        keep = set(dtypes)
        checked = [(m, {**k, "dtypes": [d for d in k["dtypes"] if d in keep] or k["dtypes"][:1]}) for m, k in checked]
    fresh = iter(_verify(out, checked, manifest["crate"], log, progress) if checked else [])
    verdicts = []
    for key, (m, k), v in zip(keys, pending, found):
        if v is None and (m["module"], k["name"]) in untrusted:
            verdict, reason = untrusted[m["module"], k["name"]]
            v = KernelVerdict(m["module"], k["name"], m["source"], verdict, reason=reason)  # never cached
        elif v is None:
            v = next(fresh)
            cache.store(key, v)
        verdicts.append(v)
    return verdicts


def _verdict_from(data: dict) -> KernelVerdict:
    checks = [Check(**c) for c in data.pop("checks")]
    return KernelVerdict(**data, checks=checks)


def _verify(out: Path, pending: list, crate: str, log=None, progress=None) -> list[KernelVerdict]:
    """The kernels' verdicts. The crate is built (cargo, in a thread) while the checks are planned: cuTile
    Python exports its side of each check here while irdump helpers (IrdumpPool, one per core) compile the
    Rust side of the checks already planned; each check is compared as soon as both sides are there. A
    kernel whose Rust does not build is then left out, as if it had not been planned."""
    import threading
    import time
    t0 = time.monotonic()
    said = threading.Lock()
    shown = {"step": "", "build": "", "rust": ""}  # the main thread's step, the crate's build, the helpers

    def say(text: str | None = None, rust: str | None = None, build: str | None = None) -> None:
        if progress is not None:
            with said:
                for key, value in (("step", text), ("rust", rust), ("build", build)):
                    shown[key] = shown[key] if value is None else value
                progress("; ".join(t for t in shown.values() if t) + f" ({time.monotonic() - t0:.0f} s)")

    verdicts: list[KernelVerdict] = []

    def all_not_verified(reason: str) -> list[KernelVerdict]:
        return [KernelVerdict(m["module"], k["name"], m["source"], "not_verified", reason=reason) for m, k in pending]

    try:
        env = cargo_env()
    except ToolchainError as e:
        return all_not_verified(str(e))
    build: dict = {}

    def build_crate() -> None:
        try:
            with crate_build_lock(env, crate, out, log):  # `build` copies lib<crate>.so from the shared target directory
                res = cargo_build(out / "Cargo.toml", env, short=True,
                                  progress=(lambda line: say(build=f"building the crate: {line}")) if progress else None)
                say(build="")
                build["host_lib"] = _private_library(out, env, crate) if res.returncode == 0 else None
            build["res"] = res
        except BaseException as e:  # noqa: BLE001 - raised again where the build is waited for
            build["error"] = e

    if log:
        log("building the generated crate with cargo")
    builder = threading.Thread(target=build_crate, daemon=True)
    say("building the irdump helper")
    try:
        irdump = irdump_binary(env)  # before the crate: both wait for the target directory's lock
        irdump_error = None
    except ToolchainError as e:
        irdump, irdump_error = None, e
    builder.start()

    def built() -> tuple[dict, str | None]:
        """(rustc errors by (rust file, entry), or why nothing can be verified), once the build is done."""
        builder.join()
        if "error" in build:
            if isinstance(build["error"], ToolchainError):
                return {}, str(build["error"])
            raise build["error"]
        res = build["res"]
        errors = _build_errors(out, res.stderr) if res.returncode != 0 else {}
        if res.returncode != 0 and not errors:
            return {}, f"the generated crate does not build:\n{res.stderr[-6000:]}"
        return errors, None

    if irdump_error is not None:
        _, why = built()
        _discard_library(build.get("host_lib"))
        return all_not_verified(why or str(irdump_error))
    pool = IrdumpPool(irdump, (lambda i, n: say(rust=f"cuTile Rust: {i}/{n} entries compiled")) if progress else None)
    try:
        return _verify_planned(out, pending, pool, built, builder.is_alive, build, verdicts, all_not_verified, say,
                               log)
    finally:
        pool.close(cancel=True)


def _discard_library(lib: Path | None) -> None:
    if lib is not None:
        import shutil
        shutil.rmtree(lib.parent, ignore_errors=True)


def _verify_planned(out: Path, pending: list, pool: "IrdumpPool", built, building, build: dict, verdicts: list,
                    all_not_verified, say, log) -> list[KernelVerdict]:
    """_verify's steps once the helpers run and the crate builds: plan every check (cuTile Python's side
    exported, the Rust side handed to `pool`), wait for the build (`built()`), compare."""
    kernel_objects: dict[tuple[str, str], object] = {}
    with tempfile.TemporaryDirectory(prefix="cutile-verify-") as tmp:
        tmpd = Path(tmp)
        plan, futures, jobs = [], {}, {}
        serial = itertools.count()
        for ki, (m, k) in enumerate(pending):
            say(f"exporting with cuTile Python: kernel {ki + 1}/{len(pending)} ({k['name']})")
            kv = KernelVerdict(m["module"], k["name"], m["source"], "equivalent")
            verdicts.append(kv)

            def submit(job: dict) -> None:
                futures[job["out"]] = pool.submit(job)
                jobs[job["out"]] = job
            src = (out / m["source"]).resolve()
            if k.get("frontend") == "triton":
                # no Tile IR of the source to compare with: every entry compiles for every specialization
                kv.verdict = "compiled"
                for spec in k["specializations"]:
                    if not any(predicates_hold(e["predicates"], spec) for e in k["entries"]):
                        continue  # constants no entry takes (Triton cannot compile them either: CT103 warning)
                    for dtype in _triton_dtypes(k, spec):
                        try:
                            entry = select_entry(k["entries"], spec, dtype)
                        except LookupError as e:  # a dtype the C symbol takes but no entry has: a port bug
                            base = dtype.split("+")[0]
                            taking = [e2 for e2 in k["entries"] if predicates_hold(e2["predicates"], spec)]
                            if taking and all("dtypes" in e2 and base not in e2["dtypes"] for e2 in taking):
                                # every entry of these constants is for other element types (the port restricts
                                # E: a libdevice function ported for float32 alone, which Triton refuses for
                                # float16 / bfloat16): the C symbol refuses this dtype, no entry to compile
                                kv.restricted[f"{dtype} at {spec}"] = "no entry takes this element type (E restricted " \
                                    f"to {', '.join(sorted({d for e2 in taking for d in e2['dtypes']}))})"
                                continue
                            kv.checks.append(Check("", spec, dtype, "not_verified", str(e)))
                            kv.verdict = "not_verified"
                            continue
                        n = next(serial)
                        check = Check(entry["name"], spec, dtype, "compiled")
                        kv.checks.append(check)
                        strides = [[p.get("rust_name", p["name"]), rust_static_strides(p)]
                                   for p in entry_params(k, entry) if p["kind"] == "array"]
                        submit({"file": str(inside(out, m["rust"]).resolve()), "module": m["module"],
                                "entry": entry["name"], "generics": verified_generics(k, entry, spec, dtype),
                                "strides": strides, "target": TARGET, "out": str(tmpd / f"{n}.rs.tileirbc")})
                        plan.append((kv, check, None, tmpd / f"{n}.rs.tileirbc", entry_params(k, entry), {}))
                if not kv.checks:
                    kv.verdict, kv.reason = "not_verified", "no specialization selects an entry"
                continue
            try:
                pymod = _import_source(src)
                kernel_at = _factory_kernel(pymod, k) if k.get("factory") else (lambda spec, kobj=_module_kernel(
                    pymod, k["name"], src): kobj)
                if not k.get("factory"):
                    kernel_objects[m["module"], k["name"]] = kernel_at({})  # the wrapper's check routes it
            except Exception as e:  # noqa: BLE001 - the user's module may fail to import here
                kv.verdict, kv.reason = "not_verified", f"cannot import {m['source']}: {type(e).__name__}: {e}"
                continue
            def add_check(spec: dict, dtype: str, probe: str | None = None, entry: dict | None = None) -> str | None:
                """Plan one check (`entry`: one of the selected entry's twins, at its own array dtypes); a coverage
                probe cuTile Python rejects is not planned (its error is returned)."""
                entry = entry or select_entry(k["entries"], spec, dtype)
                outputs = {o["array"]: o["form"] for o in entry["outputs"]}
                params = entry_params(k, entry)  # an array's rank as this entry takes it
                n = next(serial)
                pybc, rsbc = tmpd / f"{n}.py.tileirbc", tmpd / f"{n}.rs.tileirbc"
                check = Check(entry["name"], spec, dtype, "equivalent", probe=probe)
                try:
                    closure = set(k.get("factory", {}).get("closure", ()))
                    _python_bytecode(kernel_at(spec), [p for p in params if p["name"] not in closure], spec,
                                     element_types(k, dtype), pybc)
                except Exception as e:  # noqa: BLE001
                    if probe is not None:
                        return f"{type(e).__name__}: {str(e)[:200]}"
                    kv.checks.append(check)
                    check.verdict, check.detail = "not_verified", f"cuTile Python export failed: {type(e).__name__}: {e}"
                    return None
                kv.checks.append(check)
                generics = verified_generics(k, entry, spec, dtype)
                strides = [[p.get("rust_name", p["name"]), rust_static_strides(p)]
                           for p in params if p["kind"] == "array"]
                submit({"file": str(inside(out, m["rust"]).resolve()), "module": m["module"],
                        "entry": entry["name"],
                        "generics": generics, "strides": strides, "target": TARGET, "out": str(rsbc)})
                plan.append((kv, check, pybc, rsbc, params, outputs))
                return None

            def has_entry(spec: dict, dtype: str) -> bool:
                try:
                    select_entry(k["entries"], spec, dtype)
                    return True
                except LookupError:
                    return False

            def dtypes_of(spec: dict, mixed: bool = False) -> list[str]:
                if "E" not in select_entry(k["entries"], spec)["generics"]:
                    return ["f32"]
                return [d for d in dtype_checks(k["dtypes"], len(kernel_generics(k)), mixed,
                                                k.get("element_combinations")) + (domain_checks(k) if mixed else [])
                        if has_entry(spec, d)]

            def check_refused(spec: dict, dtype: str) -> None:
                """Element types no entry of these constants takes (an implicit conversion cuTile Python makes
                only where it is lossless, RestrictDtypes): cuTile Python must refuse them too."""
                label = f"{dtype} at {spec}"
                try:
                    closure = set(k.get("factory", {}).get("closure", ()))
                    _python_bytecode(kernel_at(spec), [p for p in entry_params(k, select_entry(k["entries"], spec))
                                                       if p["name"] not in closure], spec,
                                     element_types(k, dtype), tmpd / f"refused{next(serial)}.py.tileirbc")
                except Exception as e:  # noqa: BLE001 - the expected outcome
                    kv.refused[label] = f"{type(e).__name__}: {str(e)[:200]}"
                    return
                kv.checks.append(Check("", spec, dtype, "not_verified", "cuTile Python compiles these element types; "
                                       "the port has no entry for them (the C symbol refuses them)"))

            def entry_of(spec: dict) -> str:  # the entry a probe checks: the one of the first dtype
                return select_entry(k["entries"], spec, dtypes_of(spec)[0])["name"]

            def taken(spec: dict) -> bool:
                try:
                    select_entry(k["entries"], spec)
                    return True
                except LookupError:
                    return False

            for i, spec in enumerate(k["specializations"]):
                if not taken(spec):  # the C symbol refuses these constants: so must cuTile Python (never a crash)
                    try:
                        found = refused_specialization(k, kernel_at(spec), spec,
                                                       tmpd / f"refused{next(serial)}.py.tileirbc")
                    except Exception as e:  # noqa: BLE001 - a factory kernel not rebuilt at these values
                        found = Check("", spec, "", "not_verified", f"no entry of the port takes {spec}, and "
                                      f"cuTile Python's kernel could not be made there: {type(e).__name__}: {e}")
                    if isinstance(found, Check):
                        kv.checks.append(found)
                    else:
                        kv.refused[f"all element types at {spec}"] = found
                    continue
                for dtype in dtypes_of(spec, mixed=i == 0):  # mixed element types at the first one
                    # (each entry of these constants that an array's dtype selects, at that dtype)
                    for entry in twin_entries(k["entries"], select_entry(k["entries"], spec, dtype)):
                        add_check(spec, dtype, entry=entry)
                if "E" in select_entry(k["entries"], spec)["generics"]:
                    checked = dtype_checks(k["dtypes"], len(kernel_generics(k)), i == 0, k.get("element_combinations"))
                    for dtype in checked:
                        if not has_entry(spec, dtype):
                            check_refused(spec, dtype)
                    if i == 0:  # a dtype the C symbol does not export for every generic (mma_pairs): refused too
                        for dtype in (d for d in k["dtypes"] if d not in checked and has_entry(spec, d)):
                            check_refused(spec, dtype)
            def first_accepted(candidates: list[dict], probe: str, shown) -> str | None:
                """Checks the first candidate cuTile Python accepts: None, or why none was checked."""
                tried = []
                for spec in candidates:
                    try:
                        err = add_check(spec, dtypes_of(spec)[0], probe=probe)
                    except LookupError as e:
                        err = str(e)
                    if err is None:
                        return None
                    tried.append(f"{shown(spec)}: cuTile Python rejects it ({err})")
                return "; ".join(tried) or "no candidate"

            # a second value of every constant (one dtype): a generic fixed to its launch value in the
            # Rust is then `different` (see specs.coverage_probes)
            for entry_name, name, candidates in coverage_probes(k["params"], [s for s in k["specializations"] if taken(s)],
                                                                entry_of,
                                                                tuple(k.get("condition_consts", ())),
                                                                [tuple(b) for b in k.get("loop_bounds", ())]):
                why = first_accepted(candidates, name, lambda spec, name=name: spec[name])
                if why is not None:
                    kv.unprobed[f"{name} in {entry_name}"] = why
            # a constant a condition compares with a literal (`FLAG == 1`): each value at and around it, so
            # that each arm is compared (0 and a nonzero value may both leave it false)
            for entry_name, name, spec in comparand_probes([s for s in k["specializations"] if taken(s)], entry_of,
                                                           k.get("condition_values", {})):
                if not taken(spec):
                    kv.unprobed[f"{name}={spec[name]} in {entry_name}"] = "no entry of the port takes these constants"
                    continue
                err = add_check(spec, dtypes_of(spec)[0], probe=name)
                if err is not None:
                    kv.unprobed[f"{name}={spec[name]} in {entry_name}"] = f"cuTile Python rejects it ({err})"
            # the LLM fallback's proof (fallback/conditions.py): each outcome of each constant condition of
            # an answer, at the first of its candidate specializations cuTile Python accepts
            for probe in k.get("answer_probes", ()):
                why = first_accepted(probe["candidates"], probe["label"], lambda spec: spec)
                if why is not None:
                    kv.unprobed[probe["label"]] = why
            # the same for the constant conditions of the Rust entries as they are on disk: a condition only
            # the Rust has (`if TILE == 512 { ... }`) is folded away at every specialization above, so each
            # of its outcomes is checked where cuTile Python accepts it
            for probe in _rust_condition_probes(out, m, k, kv):
                why = first_accepted(probe["candidates"], probe["label"], lambda spec: spec)
                if why is not None:
                    kv.unprobed[probe["label"]] = why
        if log and futures:
            log(f"compiling {len(futures)} entries to Tile IR with cuTile Rust")
        say("waiting for the crate's build" if building() else "comparing")
        build_errors, why = built()
        say("comparing")
        if why is not None:
            return all_not_verified(why)
        left_out = set()
        for (m, k), kv in zip(pending, verdicts):  # a kernel whose Rust does not build: as if never planned
            errs = [err for e in k["entries"] for err in build_errors.get((m["rust"], e["name"]), [])]
            if errs or build_errors.get((m["rust"], None)):
                errs = errs or build_errors[(m["rust"], None)]
                kv.verdict, kv.reason = "not_verified", "the generated Rust does not build:\n" + "\n".join(errs[:10])
                kv.checks, kv.unprobed, kv.refused, kv.restricted = [], {}, {}, {}
                kernel_objects.pop((m["module"], k["name"]), None)
                left_out.add(id(kv))
        for kv, check, pybc, rsbc, params, outputs in plan:
            if id(kv) in left_out:
                continue
            r = futures[str(rsbc)].result()
            if not r.get("ok"):
                err = r.get("error") or "irdump produced no result"
                check.verdict, check.detail = "not_verified", f"cuTile Rust compile failed: {err}"
                continue
            keep = os.environ.get("CUTILE_TRANSPILE_KEEP_IR")  # developers: the IR of every check, raw
            if keep:  # and the Rust side normalized (a change of the emitter compared with its IR before)
                Path(keep).mkdir(parents=True, exist_ok=True)
                stem = f"{check.entry}.{check.dtype}.{rsbc.name.split('.')[0]}"
                (Path(keep) / f"{stem}.args.json").write_text(json.dumps({  # to normalize them again
                    "python": python_arg_names([(p["name"], p["kind"], p["rank"]) for p in params]),
                    "rust": rust_arg_names(_rust_params(params, outputs))}))
                for side, bc in (("python", pybc), ("rust", rsbc)):
                    if bc is None:
                        continue
                    try:
                        # the bytecode too (tileiras compiles it: the SASS of a port, docs/supported-triton.md)
                        (Path(keep) / f"{stem}.{side}.tileirbc").write_bytes(Path(bc).read_bytes())
                        text = disassemble(bc)
                        (Path(keep) / f"{stem}.{side}.mlir").write_text(text)
                        if side == "rust":
                            (Path(keep) / f"{stem}.rust.normalized").write_text(normalize(
                                text, rust_arg_names(_rust_params(params, outputs)), side="rust")[0])
                    except (ToolchainError, IRParseError):
                        pass
            if pybc is None:  # a Triton entry: compiled is its verdict
                continue
            try:
                py_txt, _ = normalize(disassemble(pybc), python_arg_names(
                    [(p["name"], p["kind"], p["rank"]) for p in params]), side="python")
                rs_txt, _ = normalize(disassemble(rsbc), rust_arg_names(_rust_params(params, outputs)),
                                      side="rust")
            except (ToolchainError, IRParseError) as e:
                check.verdict, check.detail = "not_verified", str(e)
                continue
            if py_txt != rs_txt:
                check.verdict = "different"
                check.detail = "".join(difflib.unified_diff(py_txt.splitlines(True), rs_txt.splitlines(True),
                                                            "cutile-python", "cutile-rust"))
        # a Triton port that compiled and has reference cases: its numbers, through the Tile IR interpreter
        from .interpret.driver import add_numeric_checks
        # the Triton entries compiled above (same job, same Tile IR): the numeric checks do not compile them again
        compiled = {job_key(jobs[str(rsbc)]): rsbc for kv, check, pybc, rsbc, *_ in plan
                    if pybc is None and id(kv) not in left_out and futures[str(rsbc)].result().get("ok")}
        add_numeric_checks(out, pending, verdicts, pool.exe, tmpd, log, compiled)
    for kv in verdicts:
        if kv.verdict == "not_verified":
            continue
        if kv.verdict == "compiled" and kv.checks and all(c.verdict == "compiled" for c in kv.checks):
            continue
        if any(c.verdict == "different" for c in kv.checks):
            kv.verdict = "different"
        elif any(c.verdict == "not_verified" for c in kv.checks) or not kv.checks:
            kv.verdict = "not_verified"
            kv.reason = next((c.detail for c in kv.checks if c.verdict == "not_verified"), "no specialization to check")
    if build.get("host_lib") is not None:
        _check_host_layer(out, pending, verdicts, build["host_lib"], kernel_objects)
    return verdicts


def _rust_condition_probes(out: Path, m: dict, k: dict, kv: KernelVerdict) -> list[dict]:
    """Candidate specializations for each outcome of each constant condition in the kernel's Rust entries
    that its specializations do not take (fallback/conditions.py, which the LLM proof uses on answers). A
    condition that cannot be evaluated is reported with the kernel's unprobed constants."""
    import re
    from ..fallback.conditions import Unprobable, answer_probes
    from .entries import entries_of
    try:
        text = inside(out, m["rust"]).read_text()
        spans = entries_of(text)
        bodies = [re.sub(r"//[^\n]*", "", text[slice(*spans[e["name"]])]) for e in k["entries"] if e["name"] in spans]
        return answer_probes(k, bodies)
    except Unprobable as e:
        kv.unprobed["a constant condition of the Rust"] = str(e)
    except Exception as e:  # noqa: BLE001 - Rust the condition reader does not take: said, not hidden
        kv.unprobed["the constant conditions of the Rust"] = f"not read: {type(e).__name__}: {e}"
    return []


def _spec_of(pkg, m: dict, k: dict):
    """The generated package's KernelSpec of kernel `k` of module `m` (LookupError: the package has none)."""
    specs = [v for v in vars(getattr(pkg, m["op"])).values()
             if type(v).__name__ == "KernelSpec" and v.name == k["name"] and v.source == m["source"]]
    if len(specs) != 1:
        raise LookupError(f"the generated package has {len(specs)} specs of `{k['name']}` in `{m['op']}`")
    return specs[0]


def _generated_package(out: Path):
    """The generated package, loaded under a name of its own (None: OUT has none). It is code from OUT,
    like the crate `cargo build` compiled and its build script ran: see docs/security.md."""
    pkg = out / "python" / "cutile_ports"
    if not (pkg / "__init__.py").is_file():
        return None
    name = f"_cutile_verify_ports_{next(_PACKAGES)}"
    spec = importlib.util.spec_from_file_location(name, inside(out, "python/cutile_ports/__init__.py"),
                                                  submodule_search_locations=[str(pkg)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.modules.pop(name, None)  # nothing of OUT's package stays importable in this process


_PACKAGES = itertools.count()


def _private_library(out: Path, env: dict, crate: str) -> Path | None:
    """A private copy of the crate's C library as this build made it (the shared target directory is
    another OUT's next build), or None where the crate builds no C library (a kernel-only copy)."""
    import re
    import shutil
    if not re.search(r'crate-type = \[[^\]]*"cdylib"', (out / "Cargo.toml").read_text()):
        return None
    lib = Path(env["CARGO_TARGET_DIR"]) / "release" / f"lib{crate}.so"
    if not lib.is_file():
        return None
    copy = Path(tempfile.mkdtemp(prefix="cutile-verify-lib-")) / lib.name
    shutil.copy2(lib, copy)
    return copy


# the verdicts a host-layer difference turns into `different` (a Triton port whose numbers already differ stays so)
HOST_CHECKED = ("equivalent", "compiled", "numbers_match")


def _check_host_layer(out: Path, pending: list, verdicts: list[KernelVerdict], lib_path: Path,
                      kernel_objects: dict) -> None:
    """The C symbol of every kernel verified here, in dry-run mode at each specialization and dtype: it must
    launch the entry, generics, grid and partitions the Tile IR diff verified (a Triton port: that it compiled
    and interpreted), and pass the entry the values it takes (a Triton output view: its extents and strides
    as the manifest states them); and so must the generated Python wrapper's route of a cuTile Python
    kernel's own `ct.launch` arguments (verify/glue.py). A difference makes the kernel `different`, naming it."""
    import ctypes
    import shutil
    from .glue import fake_torch, symbol_mismatches, triton_wrapper_mismatches, unread_mismatches, wrapper_mismatches
    try:
        try:
            pkg = _generated_package(out)
            rt = pkg._runtime if pkg is not None else None
            lib = rt.load_library(lib_path) if rt is not None else ctypes.CDLL(str(lib_path))
            if rt is not None:
                rt._LIB = lib  # the package's functions launch through this build
        except OSError:
            raise
        except Exception as e:  # noqa: BLE001 - the generated package does not import, or refuses the library
            for (m, k), kv in zip(pending, verdicts):
                if kv.verdict in HOST_CHECKED and k.get("symbol"):
                    kv.verdict = "different"
                    kv.reason = f"the generated Python package cannot route this kernel: {type(e).__name__}: {e}"
            return
        for (m, k), kv in zip(pending, verdicts):
            if kv.verdict not in HOST_CHECKED + ("different",) or not k.get("symbol"):
                continue
            try:
                kernel_rs = inside(out, m["rust"]).read_text()
                problems = symbol_mismatches(lib, k, kernel_rs)
                kobj = kernel_objects.get((m["module"], k["name"]))  # (a Triton kernel's is never imported)
                if rt is not None and k.get("frontend") == "triton":
                    with fake_torch():
                        problems += triton_wrapper_mismatches(rt, lib, k, _spec_of(pkg, m, k), kernel_rs)
                elif rt is not None and kobj is not None:
                    fn = getattr(getattr(pkg, m["op"], None), k["name"], None)
                    with fake_torch():
                        problems += wrapper_mismatches(rt, lib, k, kobj, fn, kernel_rs)
                        problems += unread_mismatches(lib, k, rt, kobj)
                else:
                    problems += unread_mismatches(lib, k)
            except (LookupError, KeyError, ValueError, ArithmeticError, OSError, AttributeError) as e:
                problems = [f"the host layer could not be checked: {type(e).__name__}: {e}"]
            if problems:
                kv.verdict = "different"
                kv.reason = ("the host layer (ffi.rs, abi.rs, the Python wrapper) does not launch what the Tile IR diff verified:\n"
                             + "\n".join(problems[:10]) + (f"\n... and {len(problems) - 10} more" if len(problems) > 10 else ""))
    except OSError as e:
        for (m, k), kv in zip(pending, verdicts):
            if kv.verdict in HOST_CHECKED and k.get("symbol"):
                kv.verdict, kv.reason = "not_verified", f"the crate's C library cannot be loaded to check the host layer: {e}"
    finally:
        shutil.rmtree(lib_path.parent, ignore_errors=True)
