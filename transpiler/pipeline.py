"""The whole run: sources -> frontend -> passes -> emission -> files (+ verification)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from . import __version__
from .diagnostics import Diagnostic
from .emit.steps import module_steps
from .emit.render import CUTILE_VERSION, GENERATED_MARK, render, runtime_file, rustfmt_many, tool_digest
from .runtime import fastlaunch_digest_of
from .translate import OK, KernelResult, kernel_result, param_layout, process_file, translate_kernel  # noqa: F401 - also this module's API


class UsageError(Exception):
    pass


@dataclass
class RunResult:
    kernels: list[KernelResult]
    file_diagnostics: list[Diagnostic]
    written: list[str]
    out: Path | None

    def summary(self) -> dict:
        s = {k: 0 for k in ("kernels", "translated", "fallback", "unsupported", "error", "equivalent", "compiled",
                            "numbers_match", "numbers_differ", "different", "not_verified", "file_errors")}
        s["kernels"] = len(self.kernels)
        # errors of a whole file (CT001 syntax, CT002 unreadable, ...): no kernel carries them, the exit code does
        s["file_errors"] = sum(d.severity == "error" for d in self.file_diagnostics)
        for k in self.kernels:
            s[k.status] += 1
            if k.verify:
                s[k.verify] += 1
        return s

    def as_json(self) -> dict:
        return {"version": 1, "kernels": [k.as_json() for k in self.kernels], "summary": self.summary(),
                "diagnostics": [d.as_json() for d in self.file_diagnostics]}


def collect_sources(srcs: list[Path], out: Path | None, paths=None) -> list[Path]:
    """Every `*.py` under SRC (files given directly are taken as they are); no path is resolved strictly, so a
    symlink loop is left for the reader to report (CT002) instead of aborting the run. `paths`: the run's
    `cache.RealPaths`."""
    files: list[Path] = []
    out_r = Path(os.path.realpath(out)) if out else None
    for src in srcs:
        if not os.path.lexists(src):
            hint = (f" (boolean flags such as --verify take no value: `--verify {src}` reads `{src}` as a source)"
                    if str(src).lower() in ("true", "false", "yes", "no", "on", "off", "1", "0") else "")
            raise UsageError(f"{src}: no such file or directory{hint}")
        r = Path(os.path.realpath(src))
        if out_r and (r == out_r or out_r in r.parents):
            raise UsageError(f"{src}: source is inside the output directory {out}")
        if not src.is_dir():
            files.append(src)
            continue
        for dirpath, dirnames, filenames in os.walk(src):
            d = Path(dirpath)
            keep = []
            for name in sorted(dirnames):
                if name.startswith(".") or name in ("__pycache__", "target", "node_modules"):
                    continue
                if out_r and Path(os.path.realpath(d / name)) == out_r:
                    continue  # the output directory inside the source tree is skipped
                keep.append(name)
            dirnames[:] = keep
            files.extend(d / f for f in sorted(filenames) if f.endswith(".py"))
    seen, unique = set(), []
    real = os.path.realpath if paths is None else paths.real
    for f in files:
        key = real(f)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return sorted(unique, key=lambda p: (real(p), p.as_posix()))


@dataclass
class SourceOutcome:
    """What this run learned about one source file."""
    rel: str  # relative to OUT: the key of its module in the manifest
    path: Path
    display: str
    parsed: bool  # read and parsed: only then can a kernel be proved gone
    complete: bool  # every kernel in it was attempted (no --kernel, no early stop)
    defined: set[str]  # kernel names the file has (when parsed)
    translated: dict[str, dict]  # kernel -> its new record


@dataclass
class ModulePlan:
    """One module of the new state of OUT."""
    rel: str
    sha: str
    kernels: list[dict]  # kernel records (manifest form, with the rendered entry views)
    verbatim: dict | None = None  # an old module kept as it is (files untouched)


def source_rel(path: Path, out: Path, paths=None) -> str:
    """`path` relative to OUT, both resolved (`paths`: a run's `cache.RealPaths`)."""
    if paths is not None:
        return paths.rel(path, out)
    return os.path.relpath(os.path.realpath(path), os.path.realpath(out)).replace(os.sep, "/")


def _sha_file(path: Path) -> str:
    import hashlib
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def run(srcs: list[Path], out: Path | None, kernel_filter: list[str] | None = None,
        fail_fast: bool = False, progress=None, use_cache: bool = True, compile_check: str = "off",
        log=None, ignore_manifest: bool = False, fallback=None, status=None,
        crate_name: str | None = None) -> tuple[RunResult, dict[Path, str]]:
    """Translate; returns the result and the files to write (path -> content), without writing.

    The new state of OUT is the old one (its manifest) with what this run proved: a module or kernel is
    replaced when it was translated again, removed only when its source was read and parsed in an unfiltered,
    complete run and no longer has it (or the source file is gone), and kept in every other case.
    `fallback`: the LLM fallback's session (transpiler/fallback); by default, cached answers are replayed only.
    The crate's name: `crate_name`, else the one OUT has, else the source package's (`default_crate_name`)."""
    from . import cache
    from .fallback import stage
    from .fallback.session import Session
    from .output.state import ManifestError, OutState, read_state
    paths = cache.RealPaths()
    files = collect_sources(srcs, out, paths)
    try:
        old = read_state(out)
    except ManifestError:
        if not ignore_manifest:
            raise
        old = OutState()
    results: list[KernelResult] = []
    file_diags: list[Diagnostic] = []
    outcomes: dict[str, SourceOutcome] = {}
    if fallback is None:  # cached answers replay only where this machine proved them (nobody proves here)
        fallback = Session(out if old.exists else None, proves=False)
    cacheable = use_cache and not kernel_filter and not fail_fast
    stopped = False
    # workers start once there are enough misses to pay for them (they import the passes while this process
    # reads the rest of the cache), and each later miss is handed over as soon as it is known; a worker
    # stores its result in the cache itself
    pool = None
    keys: dict[Path, str | None] = {}
    hits: dict[Path, object] = {}
    misses: list[Path] = []
    pending: dict[Path, object] = {}
    paths = cache.RealPaths()
    keyed = True  # every file's results are the ones its cache key stands for (no LLM stage, no internal error)
    try:
        for path in files:
            keys[path] = key = cache.file_key(path, path.as_posix(), paths) if cacheable else None
            hits[path] = hit = cache.load(key) if key else None
            if hit is not None or fail_fast:
                continue
            misses.append(path)
            if pool is None and len(misses) == PARALLEL_MIN_FILES:
                pool = _worker_pool(PARALLEL_MIN_FILES)
                new = misses if pool is not None else []
            else:
                new = [path] if pool is not None else []
            for m in new:
                pending[m] = _submit(pool, m, kernel_filter, keys[m])
    finally:
        if pool is not None:
            pool.shutdown(wait=False)  # the submitted work still runs; the futures are read in file order
    try:
        for i, path in enumerate(files):
            if progress:
                progress(i, len(files), path)
            display = path.as_posix()
            key, hit = keys[path], hits.get(path)
            if hit is not None:
                file_results, diags = hit
            else:
                (file_results, diags), stored = _file_outcome(pending.get(path), path, display, kernel_filter,
                                                              fail_fast)
                if key and not stored:
                    _store(key, file_results, diags)
            rel = source_rel(path, out, paths) if out is not None else display
            if stage.wants(fallback, rel, file_results):  # after the cache: it holds what the rules alone give
                file_results = stage.complete(path, display, rel, file_results, fallback)
                keyed = False
            keyed = keyed and key is not None and not any(r.status == "error" for r in file_results)
            results.extend(file_results)
            file_diags.extend(diags)
            stop_here = fail_fast and any(r.status not in OK for r in file_results)
            parsed = not any(d.severity == "error" for d in diags)
            if out is not None:
                rel = source_rel(path, out, paths)
                outcomes[rel] = SourceOutcome(
                    rel, path, display, parsed, parsed and not kernel_filter and not stop_here,
                    {r.name for r in file_results},
                    {r.name: r.manifest for r in file_results if r.status in OK})
            if stop_here:
                stopped = True
                break
    finally:
        for f in pending.values():
            f.cancel()
    from . import config
    file_diags.extend(config.run_diagnostics(files, None if kernel_filter or stopped else [r.name for r in results],
                                             paths))
    if kernel_filter:
        found = {r.name for r in results}
        missing = [k for k in kernel_filter if k not in found]
        if missing:
            raise UsageError(f"--kernel {', '.join(missing)}: no such kernel in the sources given")
    results.sort(key=lambda r: (r.source, r.line, r.name))
    outputs: dict[Path, str] = {}
    if out is None:
        return RunResult(results, file_diags, [], out), outputs
    complete_run = not kernel_filter and not stopped
    plan, notes = merge_state(old, outcomes, complete_run, srcs, out)
    by_name = {(source_rel(Path(r.source), out, paths), r.name): r for r in results}
    for (rel, name), d in notes:
        if (rel, name) in by_name:
            by_name[(rel, name)].diagnostics.append(d)
        else:
            file_diags.append(d)
    answers = fallback.cache_outputs(out, {rel for rel, o in outcomes.items() if o.complete})
    crate = crate_name or old.crate or default_crate_name(srcs, out)
    if plan or old.modules or answers:
        if ".gitignore" in old.files or not os.path.lexists(out / ".gitignore"):  # a user's own is left alone
            # build outputs (OUT/target) stay out of version control
            answers = {**answers, out / ".gitignore": render("gitignore.j2")}
        # every result a function of its file's cache key: a record of a run with the same inputs gives the
        # crate without rendering it (cache.load_crate)
        memo = (_crate_memo_key(out, plan, outcomes, keys, answers, crate, compile_check)
                if cacheable and keyed and not any(m.verbatim for m in plan) else None)
        outputs = cache.load_crate(out, memo) if memo else None
        if outputs is None:
            outputs = rendered = render_crate(out, plan, answers, crate)
            n_notes = len(file_diags)
            if compile_check and compile_check != "off":
                outputs = _compile_check(out, plan, outputs, results, old, compile_check, file_diags, log, answers,
                                         status, crate)
            if memo and outputs is rendered and len(file_diags) == n_notes:  # the check left it as it was
                cache.store_crate(out, memo, outputs)
    return RunResult(results, file_diags, [], out), outputs


def _crate_memo_key(out: Path, plan: list[ModulePlan], outcomes: dict, keys: dict, answers: dict, crate: str,
                    compile_check) -> str:
    """The digest of what the crate of this run is made from (see `cache.crate_key`): the plan (a kernel
    translated in this run stands for its source's cache key; one kept from OUT's manifest for its record),
    the files rendered apart, the settings and the tools' versions."""
    import shutil
    from . import cache
    from .emit.render import rustfmt_version
    from .verify.compile_check import cargo_version
    from .verify.toolchain import ToolchainError, cargo_env
    try:
        cargo = cargo_version(cargo_env()) if compile_check and compile_check != "off" else ""
    except ToolchainError:
        cargo = ""
    exe = shutil.which("rustfmt")
    parts = [os.path.realpath(out), crate, compile_check, cargo, exe and rustfmt_version(exe)]
    for m in plan:
        o = outcomes.get(m.rel)
        parts += [m.rel, m.sha, keys.get(o.path) if o else None]
        parts += [k["name"] if o and k["name"] in o.translated else json.dumps(k, sort_keys=True) for k in m.kernels]
    for p, text in sorted(answers.items()):
        parts += [p.as_posix(), text]
    return cache.crate_key(parts)


PARALLEL_MIN_FILES = 8  # below this, starting worker processes costs more than it saves


def _worker_pool(n_files: int):
    """Worker processes (one per core) for a run over `n_files` files, when there are enough of them to pay
    for the workers; None otherwise."""
    from .verify.toolchain import usable_cores
    workers = min(usable_cores(), n_files)
    if workers < 2 or n_files < PARALLEL_MIN_FILES:
        return None
    import concurrent.futures
    import multiprocessing
    try:  # fork: the workers start with the tool already imported
        ctx = multiprocessing.get_context("fork")
    except ValueError:
        ctx = None
    return concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_warm_worker)


def _warm_worker() -> None:
    """A worker imports what translation uses at once, while the parent still reads the cache."""
    from .emit import ffi, lower  # noqa: F401
    from .frontend import source  # noqa: F401
    from .passes import specialize  # noqa: F401
    from .verify import specs  # noqa: F401


def _submit(pool, path: Path, kernel_filter, key: str | None):
    """The future of a file's outcome in a worker (None where the pool cannot take it: it is then processed
    in this process); results are read back in file order, so the output does not depend on which worker
    finishes first."""
    try:
        return pool.submit(_process_file_deep, path, path.as_posix(), kernel_filter, key)
    except RuntimeError:  # a broken pool
        return None


def _store(key: str, results, diags) -> bool:
    from . import cache
    if any(r.status == "error" for r in results):
        return False  # an internal error is not remembered: the next run tries again
    cache.store(key, results, diags)
    return True


def _process_file_deep(path: Path, display: str, kernel_filter, key: str | None = None):
    """In a worker: a file's outcome, stored in the cache (when `key`); returns (outcome, stored)."""
    from .frontend.common import run_deep  # deep stack: the passes recurse over the expressions
    results, diags = run_deep(process_file, path, display, kernel_filter, False)
    return (results, diags), bool(key) and _store(key, results, diags)


def _file_outcome(future, path: Path, display: str, kernel_filter, fail_fast: bool):
    """A file's ((results, diagnostics), stored in the cache): from its worker, or computed here (no worker,
    or the worker died: the file is then processed again in this process, so one crash costs no file its
    result)."""
    if future is not None:
        try:
            return future.result()
        except Exception:  # noqa: BLE001 - a broken pool or an unpicklable result: redo it here
            pass
    from .frontend.common import run_deep
    return run_deep(process_file, path, display, kernel_filter, fail_fast), False


def merge_state(old, outcomes: dict[str, SourceOutcome], complete_run: bool, srcs: list[Path],
                out: Path) -> tuple[list[ModulePlan], list]:
    """The modules of the new state, and notes ((source rel, kernel or None), Diagnostic) on what was kept."""
    from .model.ir import Pos
    roots = [os.path.realpath(s) for s in srcs]
    plan: list[ModulePlan] = []
    notes = []

    def in_scope(rel: str) -> bool:
        p = os.path.realpath(out / rel)
        return any(p == r or p.startswith(r.rstrip(os.sep) + os.sep) for r in roots)

    for rel in sorted(set(old.modules) | set(outcomes)):
        o, om = outcomes.get(rel), old.modules.get(rel)
        if o is None:
            gone = not os.path.exists(out / rel)
            if om is not None and not (complete_run and gone and in_scope(rel)):
                plan.append(ModulePlan(rel, om.get("source_sha256", ""), [], verbatim=om))
            continue
        if not o.parsed:
            if om is not None:
                plan.append(ModulePlan(rel, om.get("source_sha256", ""), [], verbatim=om))
                notes.append(((rel, None), Diagnostic("warning", "CT005", "the ports generated from this file "
                                                      "earlier are kept unchanged", Pos(o.display, 1, 1))))
            continue
        if om is not None and not o.complete and not o.defined:
            plan.append(ModulePlan(rel, om.get("source_sha256", ""), [], verbatim=om))  # nothing in it was asked for
            continue
        sha = _sha_file(o.path)
        kernels = {name: {**rec, "source_sha256": sha} for name, rec in o.translated.items()}
        kept_verbatim = False
        for k in (om or {}).get("kernels", []):
            name = k["name"]
            if name in kernels or (o.complete and name not in o.defined):
                continue  # replaced, or proved gone
            if not k.get("views"):
                kept_verbatim = True  # an older manifest without the entry views: keep the module as it is
                break
            kept = {**k, "source_sha256": k.get("source_sha256", om.get("source_sha256", ""))}
            if name in o.defined:  # attempted again and failed: the earlier port stays, marked stale
                kept["stale"] = True
            kernels[name] = kept
            if name in o.defined:
                notes.append(((rel, name), Diagnostic("warning", "CT005", f"the port of `{name}` generated "
                                                      "earlier is kept (the Python router will not use it: its "
                                                      "source changed)", Pos(o.display, k.get("line", 1), 1))))
        if kept_verbatim:
            plan.append(ModulePlan(rel, om.get("source_sha256", ""), [], verbatim=om))
            notes.append(((rel, None), Diagnostic("warning", "CT005", "this module's ports are kept as they were "
                                                  "(written by an older version); rerun once every kernel in it "
                                                  "translates", Pos(o.display, 1, 1))))
            continue
        if kernels:
            ordered = sorted(kernels.values(), key=lambda k: (k.get("line", 0), k["name"]))
            plan.append(ModulePlan(rel, sha, ordered))
    return plan, notes


def render_crate(out: Path, plan: list[ModulePlan], answers: dict[Path, str] | None = None,
                 crate: str | None = None) -> dict[Path, str]:
    """The generated crate: kernels, C ABI, Python wrapper package and manifest (path -> content); a pure
    function of the planned state, with every name assigned from it (see `output.names`). `answers`: files
    rendered apart (the LLM fallback's cache, `.gitignore`), listed in the manifest like every generated file."""
    import hashlib
    from .emit.ffi import abi_tables, kernel_ffi_view, kernel_python_view, packed_symbol
    from .emit.lower import rust_ident
    from .output import names
    from .output.state import module_files
    outputs: dict[Path, str] = {}
    crate = crate or _crate_name(out)
    ops = names.op_names([m.rel for m in plan], {m.rel: m.verbatim["op"] for m in plan if m.verbatim})
    taken_symbols: set[str] = set()  # with their packed forms
    taken_entries: set[str] = set()
    for m in plan:
        if m.verbatim:
            taken_symbols |= {s for k in m.verbatim["kernels"] if k.get("symbol")
                              for s in (k["symbol"], packed_symbol(k["symbol"]))}
            taken_entries |= {e["name"] for k in m.verbatim["kernels"] for e in k["entries"]}
    rendered = []
    for m in sorted((m for m in plan if not m.verbatim), key=lambda m: ops[m.rel]):
        op = ops[m.rel]
        kernels, views = [], []
        launchers: set[str] = set()  # per module: the macro defines them inside it
        for k in m.kernels:
            k = {**k, "entries": [dict(e) for e in k["entries"]]}  # only the names below change
            k["symbol"] = names.symbol_name(k["name"], op, taken_symbols) if k.get("abi") else None
            for e, v in zip(k["entries"], k["views"]):
                base = rust_ident(v["name"])  # `type`, `crate`, cutile::core names ... get a trailing `_`
                generics = [g.split(":")[0].replace("const ", "").strip() for g in v["generics"]]
                e["name"] = names.entry_name(base, op, generics, taken_entries, launchers)
                views.append({**v, "name": e["name"]})
            kernels.append(k)
        rendered.append((op, m, kernels, views))
    manifest_modules = []
    for m in plan:
        if m.verbatim:
            manifest_modules.append(m.verbatim)
    for op, m, kernels, _ in rendered:
        manifest_modules.append({"op": op, "module": f"{op}_kernels", "rust": f"src/{op}/kernel.rs", "source": m.rel,
                                 "source_sha256": m.sha, "kernels": kernels})
    manifest_modules.sort(key=lambda mm: mm["op"])
    digest = hashlib.sha256(json.dumps(manifest_modules, sort_keys=True).encode()).hexdigest()[:16]
    # rustfmt runs in the background (a process per core) while the rest is rendered: kernels and the
    # crate's own files first, then the C ABI files
    import concurrent.futures
    mods = [{"op": mm["op"], "source": mm["source"]} for mm in manifest_modules]
    kernels_rs = {out / "src" / "lib.rs": render("lib.rs.j2", modules=mods),
                  out / "src" / "abi.rs": runtime_file("abi.rs"),
                  out / "src" / "abi_tables.rs": render("abi_tables.rs.j2", digest=digest, **abi_tables())}
    for op, m, _, views in rendered:
        kernels_rs[out / "src" / op / "kernel.rs"] = render("kernel.rs.j2", source=m.rel, module=f"{op}_kernels",
                                                            entries=views, steps=module_steps(views),
                                                            gather_views=any("make_gather_scatter_view(" in line
                                                                             for v in views for line in v["body"]))
    with concurrent.futures.ThreadPoolExecutor(2) as formatting:
        formatted_kernels = formatting.submit(rustfmt_many, list(kernels_rs.values()))
        ffi_rs: dict[Path, str] = {}
        abi_kernels = {op: [k for k in kernels if k.get("symbol")] for op, _, kernels, _ in rendered}
        for op, m, _, _ in rendered:
            ffi = [kernel_ffi_view(k, k["symbol"], m.rel) for k in abi_kernels[op]]
            ffi_rs[out / "src" / op / "ffi.rs"] = render("ffi.rs.j2", source=m.rel, module=f"{op}_kernels",
                                                         kernels=ffi)
        formatted_ffi = formatting.submit(rustfmt_many, list(ffi_rs.values()))
        for op, m, _, _ in rendered:
            py = [kernel_python_view(k, k["symbol"], *py_names)
                  for k, py_names in zip(abi_kernels[op], names.python_names(abi_kernels[op]))]
            outputs[out / "python" / "cutile_ports" / f"{op}.py"] = render(
                "python/ops.py.j2", source=m.rel, kernels=py)
        # the manifest's largest part, encoded while rustfmt runs (at its depth in the manifest: strings in
        # JSON hold no raw newline, so indenting every line after the first is exact)
        modules_json = json.dumps(manifest_modules, indent=2, sort_keys=True).replace("\n", "\n  ")
        outputs.update(zip(kernels_rs, formatted_kernels.result()))
        outputs.update(zip(ffi_rs, formatted_ffi.result()))
    outputs[out / "Cargo.toml"] = render("Cargo.toml.j2", crate=crate)
    outputs[out / "python" / "cutile_ports" / "__init__.py"] = render("python/__init__.py.j2", crate=crate,
                                                                      modules=[mm["op"] for mm in manifest_modules])
    # the compiled fast path carries the digest of its own source (`cutile-transpile build` passes it); the
    # runtime loads only that build
    fastlaunch_source = runtime_file("_fastlaunch.c")
    fastlaunch_digest = fastlaunch_digest_of(fastlaunch_source)
    # the runtime is plain Python (transpiler/runtime/), the same in every package: copied with the version
    # header; what varies per crate is rendered beside it
    outputs[out / "python" / "cutile_ports" / "_runtime.py"] = runtime_file("_runtime.py")
    outputs[out / "python" / "cutile_ports" / "_crate.py"] = render("python/_crate.py.j2", crate=crate, digest=digest,
                                                                    fastlaunch_digest=fastlaunch_digest,
                                                                    **abi_tables())
    outputs[out / "python" / "cutile_ports" / "_fastlaunch.c"] = fastlaunch_source
    from .output.state import read_state, sha256
    outputs.update(answers or {})
    files = {p.relative_to(out).as_posix(): sha256(c) for p, c in outputs.items()}
    old_files = read_state(out).files if any(m.verbatim for m in plan) else {}
    for m in plan:
        if m.verbatim:
            files.update({f: old_files.get(f) or "" for f in module_files(m.verbatim["op"]) if f in old_files})
    manifest = {
        "_generated": f"{GENERATED_MARK} {__version__}",
        "version": 2, "tool": __version__, "tool_digest": tool_digest(), "cutile": CUTILE_VERSION,
        "crate": crate, "abi_digest": digest, "modules": _MODULES_MARK, "files": dict(sorted(files.items())),
    }
    text = json.dumps(manifest, indent=2, sort_keys=True)
    outputs[out / "manifest.json"] = text.replace(json.dumps(_MODULES_MARK), modules_json, 1) + "\n"
    return outputs


_MODULES_MARK = "\0modules"  # stands for the modules in the manifest until their JSON is put in


def _crate_name(out: Path) -> str:
    return crate_ident(Path(os.path.realpath(out)).name)


# names a crate of ports must not take: Rust's own crates and the ones it depends on
RESERVED_CRATES = frozenset({"core", "std", "alloc", "proc_macro", "test", "cutile", "cuda_core", "cuda_async",
                             "cuda_bindings", "half", "self", "super", "crate"})


def crate_ident(name: str) -> str:
    """`name` as a crate name: lower case, `_` for anything else, not starting with a digit, not reserved."""
    name = re.sub(r"[^a-z0-9_]", "_", name.lower()) or "kernels"
    name = name if not name[0].isdigit() else f"k_{name}"
    return f"{name}_ports" if name in RESERVED_CRATES else name


def default_crate_name(srcs: list[Path], out: Path) -> str:
    """The crate a new OUT gets: named after the sources' package, so the name says what it ports whatever
    OUT is called (and whatever order SRC is given in). The package is the top package holding the folder
    that holds every SRC, else the one package directly inside it, else that folder itself; OUT's folder name
    only when that says nothing (the filesystem root)."""
    if not srcs:
        return _crate_name(out)
    dirs = [p if p.is_dir() else p.parent for p in (Path(os.path.realpath(s)) for s in srcs)]
    d = Path(os.path.commonpath(dirs))
    if (d / "__init__.py").is_file():
        while (d.parent / "__init__.py").is_file() and d.parent != d:
            d = d.parent
    else:
        try:
            inner = [c for c in d.iterdir() if c.is_dir() and (c / "__init__.py").is_file()]
        except OSError:
            inner = []
        if len(inner) == 1:
            d = inner[0]
    return crate_ident(d.name) if d.name else _crate_name(out)


class CompileFailure(Exception):
    """The generated crate does not compile outside any one kernel: nothing is written."""


def _crate_files(out: Path, plan: list[ModulePlan], outputs: dict[Path, str]) -> dict[str, str]:
    from .output.guard import inside
    from .output.state import module_files
    files = {p.relative_to(out).as_posix(): c for p, c in outputs.items() if p.suffix in (".rs", ".toml")}
    for m in plan:
        if m.verbatim:
            for rel in module_files(m.verbatim["op"])[:2]:
                try:
                    files[rel] = inside(out, rel).read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    pass  # missing: the check reports the module
    return files


def _compile_check(out: Path, plan: list[ModulePlan], outputs: dict[Path, str], results: list[KernelResult],
                   old, mode, notes: list[Diagnostic], log=None, answers=None, status=None,
                   crate: str | None = None) -> dict[Path, str]:
    """Leaves out every kernel whose Rust does not compile (reported `error`, CT007), re-rendering until
    the crate compiles; a port kept from an earlier run takes the place of a new one that fails."""
    import hashlib
    from .model.ir import Pos
    from .verify.compile_check import CheckUnavailable, attribute, compile_errors
    tag = f"{_crate_name(out)}-{hashlib.sha256(os.path.realpath(out).encode()).hexdigest()[:12]}"
    by_key = {(source_rel(Path(r.source), out), r.name): r for r in results}
    tried_old: set[tuple[str, str]] = set()
    for _ in range(12):
        files = _crate_files(out, plan, outputs)
        if log:
            log("compile check (cargo check)")
        try:
            errors = compile_errors(files, tag, status)
        except CheckUnavailable as e:
            if mode == "on":
                raise CompileFailure(f"the generated crate cannot be compile-checked: {e}") from None
            notes.append(Diagnostic("warning", "CT006", f"the generated crate was not compile-checked: {e} "
                                    "(pass --no-compile-check to skip the check)", Pos(out.as_posix(), 1, 1)))
            return outputs
        if not errors:
            return outputs
        manifest = json.loads(outputs[out / "manifest.json"])
        mods = {mm["op"]: mm for mm in manifest["modules"]}
        owner = {}
        for mm in mods.values():
            for k in mm["kernels"]:
                owner.update({(mm["op"], e["name"]): k["name"] for e in k["entries"]})
                if k.get("symbol"):
                    owner[(mm["op"], k["symbol"])] = k["name"]
        failing: dict[tuple[str, str | None], list[str]] = {}
        for err in errors:
            op, item = attribute(err, files)
            if op is None or op not in mods:
                raise CompileFailure("the generated crate does not compile outside the kernels (a bug in "
                                     "cutile-transpile):\n" + "\n".join(e.message for e in errors[:5]))
            failing.setdefault((mods[op]["source"], owner.get((op, item))), []).append(err.message)
        for (rel, name), msgs in sorted(failing.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
            m = next((p for p in plan if p.rel == rel), None)
            if m is None:
                continue  # its module already went with an earlier error of this round
            names = [name] if name else _culprits(out, m, tag)
            if m.verbatim or not names:
                plan.remove(m)
                notes.append(Diagnostic("warning", "CT007", "the ports kept from an earlier run no longer compile "
                                         f"and were left out: {msgs[0][:1500]}", Pos(rel, 1, 1)))
                continue
            for n in names:
                rec = next((k for k in m.kernels if k["name"] == n), None)
                if rec is None:
                    continue
                m.kernels.remove(rec)
                r = by_key.get((rel, n))
                text = (f"the Rust generated for `{n}` does not compile, so it was left out of the crate "
                        f"(with its C symbol and wrapper):\n{msgs[0][:3000]}")
                if r is not None and not rec.get("stale"):
                    r.status, r.entries = "error", []
                    r.diagnostics.append(Diagnostic("error", "CT007", text, Pos(r.source, r.line, 1)))
                else:
                    notes.append(Diagnostic("warning", "CT007", text, Pos(rel, rec.get("line", 1), 1)))
                prev = next((k for k in old.modules.get(rel, {}).get("kernels", []) if k["name"] == n), None)
                if not rec.get("stale") and prev and prev.get("views") and (rel, n) not in tried_old:
                    tried_old.add((rel, n))
                    m.kernels.append({**prev, "stale": True})
                    m.kernels.sort(key=lambda k: (k.get("line", 0), k["name"]))
            if not m.kernels:
                plan.remove(m)
        outputs = render_crate(out, plan, answers, crate)
    raise CompileFailure("the generated crate still does not compile after leaving out the failing kernels")


def _culprits(out: Path, m: ModulePlan, tag: str) -> list[str]:
    """The kernels of a module whose error rustc reports at module level (a macro expansion): found by
    checking halves of the module alone, so only those kernels are left out. All of them when the error
    needs several together."""
    from .verify.compile_check import compile_errors

    def fails(kernels: list[dict]) -> bool:
        sub = render_crate(out, [ModulePlan(m.rel, m.sha, kernels)])
        return bool(compile_errors(_crate_files(out, [], sub), f"{tag}-bisect"))

    def search(kernels: list[dict]) -> list[str]:
        if not fails(kernels):
            return []
        if len(kernels) == 1:
            return [kernels[0]["name"]]
        half = len(kernels) // 2
        found = search(kernels[:half]) + search(kernels[half:])
        return found or [k["name"] for k in kernels]

    if m.verbatim:
        return []
    return search(m.kernels) or [k["name"] for k in m.kernels]


def plan_changes(out: Path, outputs: dict[Path, str], force: bool = False):
    """What a write would change (path -> content, or None to remove) and what it must refuse
    ((path, code, reason)). Only files the manifest lists, that still carry the header and whose content is
    what was written are generated; anything else in OUT belongs to the user."""
    import hashlib
    from .output.guard import inside
    from .output.state import MANIFEST, ManifestError, OutState, read_state
    from .output.transaction import OutputError
    try:
        old = read_state(out)
    except ManifestError:
        if not force:
            raise
        old = OutState()
    changes: dict[Path, str | None] = {}
    refused: list[tuple[Path, str, str]] = []
    from .cache import OnDisk
    if isinstance(outputs, OnDisk) and outputs.out == out:
        return changes, refused  # each file, the manifest too, is what OUT holds (read back without a link)

    def current(path: Path) -> bytes | None:
        inside(out, path.relative_to(out).as_posix())  # no link followed out of OUT, even to read
        if path.is_dir():
            raise OutputError(f"{path}: a directory is in the way of a generated file")
        try:
            return path.read_bytes() if path.exists() else None
        except OSError as e:
            raise OutputError(f"{path}: cannot be read: {e.strerror or e}") from None

    for path, content in sorted(outputs.items()):
        data = current(path)
        if data == content.encode("utf-8"):
            continue
        if data is not None and not force:
            rel = path.relative_to(out).as_posix()
            head = data[:400].decode("utf-8", "replace")
            if rel == MANIFEST:
                if GENERATED_MARK not in head:
                    refused.append((path, "CT003", "refusing to overwrite a file without the @generated header"))
            elif rel not in old.files or GENERATED_MARK not in head:
                refused.append((path, "CT003", "refusing to overwrite a file that is not a generated file of this "
                                               "crate (no @generated header, or not in manifest.json)"))
            elif old.files[rel] and hashlib.sha256(data).hexdigest() != old.files[rel]:
                refused.append((path, "CT004", "refusing to overwrite a generated file that was edited by hand"))
        changes[path] = content
    new_files = set(json.loads(outputs[out / MANIFEST]).get("files", {})) if out / MANIFEST in outputs else set()
    for rel, h in sorted(old.files.items()):
        path = out / rel
        if rel in new_files or path in outputs or not path.is_file():
            continue
        data = current(path)
        if GENERATED_MARK not in data[:400].decode("utf-8", "replace"):
            continue  # the header is gone: the user's file now
        if h and hashlib.sha256(data).hexdigest() != h and not force:
            continue  # edited by hand: left in place
        changes[path] = None
    return changes, refused


def write_outputs(outputs: dict[Path, str], force: bool = False, fault=None) -> tuple[list[str], list]:
    """Writes the new state as one transaction (see `output.transaction`); refuses, writing nothing, when a
    file it would replace is not a generated file of this crate or was edited by hand (unless `force`)."""
    from .output.state import MANIFEST
    from .output.transaction import commit, ensure_dir
    outs = {p.parent for p in outputs if p.name == MANIFEST}
    if not outs:
        return [], []
    out = outs.pop()
    ensure_dir(out)
    changes, refused = plan_changes(out, outputs, force)
    if refused:
        return [], refused
    commit(out, changes, fault)
    return [str(p) for p in sorted(changes)], []
