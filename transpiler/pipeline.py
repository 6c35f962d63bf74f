"""The whole run: sources -> frontend -> passes -> emission -> files (+ verification)."""

from __future__ import annotations

import json
import os
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from .diagnostics import Diagnostic, TranspileError
from .emit.render import CUTILE_VERSION, GENERATED_MARK, render, rustfmt, tool_digest
from .model.ir import Kernel


class UsageError(Exception):
    pass


@dataclass
class KernelResult:
    name: str
    source: str
    line: int
    status: str  # translated | fallback | unsupported | error
    entries: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    verify: str | None = None
    manifest: dict | None = None
    frontend: str = "cutile-python"

    def as_json(self) -> dict:
        return {"name": self.name, "source": self.source, "line": self.line, "frontend": self.frontend,
                "status": self.status, "entries": self.entries, "verify": self.verify,
                "diagnostics": [d.as_json() for d in self.diagnostics]}


@dataclass
class RunResult:
    kernels: list[KernelResult]
    file_diagnostics: list[Diagnostic]
    written: list[str]
    out: Path | None

    def summary(self) -> dict:
        s = {k: 0 for k in ("kernels", "translated", "fallback", "unsupported", "error", "equivalent", "different",
                            "not_verified")}
        s["kernels"] = len(self.kernels)
        for k in self.kernels:
            s[k.status] += 1
            if k.verify:
                s[k.verify] += 1
        return s

    def as_json(self) -> dict:
        return {"version": 1, "kernels": [k.as_json() for k in self.kernels], "summary": self.summary()}


def collect_sources(srcs: list[Path], out: Path | None) -> list[Path]:
    files: list[Path] = []
    out_r = out.resolve() if out else None
    for src in srcs:
        if not src.exists():
            raise UsageError(f"{src}: no such file or directory")
        r = src.resolve()
        if out_r and (r == out_r or out_r in r.parents):
            raise UsageError(f"{src}: source is inside the output directory {out}")
        if src.is_file():
            files.append(src)
            continue
        for dirpath, dirnames, filenames in os.walk(src):
            d = Path(dirpath)
            keep = []
            for name in sorted(dirnames):
                sub = (d / name).resolve()
                if name.startswith(".") or name in ("__pycache__", "target", "node_modules"):
                    continue
                if out_r and sub == out_r:
                    continue  # the output directory inside the source tree is skipped
                keep.append(name)
            dirnames[:] = keep
            files.extend(d / f for f in sorted(filenames) if f.endswith(".py"))
    seen, unique = set(), []
    for f in files:
        key = f.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return sorted(unique, key=lambda p: p.as_posix())


def _op_name(path: Path) -> str:
    stem = re.sub(r"[^a-z0-9_]", "_", path.stem.lower())
    return stem if stem and not stem[0].isdigit() else f"m_{stem}"


def translate_kernel(kernel: Kernel) -> list[Kernel]:
    """All passes for one kernel: variants, FMA fusion, output ownership."""
    from .model.validate import validate
    from .passes.fma import fuse_fma
    from .passes.ownership import analyze_outputs
    from .passes.specialize import specialize
    return [validate(analyze_outputs(fuse_fma(v))) for v in specialize(kernel)]


def param_layout(kernel: Kernel) -> list[dict]:
    from .emit.lower import rust_ident
    return [{"name": p.name, "rust_name": rust_ident(p.name), "kind": p.kind, "rank": p.rank, "dtype": p.dtype,
             "const_type": p.const_type, "pointer": p.pointer} for p in kernel.params]


def process_file(path: Path, display: str, kernel_filter: list[str] | None = None,
                 fail_fast: bool = False) -> tuple[list[KernelResult], list[Diagnostic], list]:
    """One source file through every stage: kernel results, file diagnostics, entry views."""
    from .emit.ffi import AbiUnsupported, kernel_ffi_view, kernel_python_view
    from .emit.lower import lower_kernel, rust_ident
    from .frontend.cutile_python import parse_file  # LibCST is only imported when a file must be parsed
    from .verify.specs import cover_variants, specializations
    fr = parse_file(path, display)
    results: list[KernelResult] = []
    entries_views: list = []
    for name, pos, diag in fr.failures:
        if kernel_filter and name not in kernel_filter:
            continue
        results.append(KernelResult(name, display, pos.line, "unsupported", diagnostics=[diag]))
    for k in fr.kernels:
        if kernel_filter and k.name not in kernel_filter:
            continue
        if fail_fast and any(r.status != "translated" for r in results):
            break
        kr = KernelResult(k.name, display, k.pos.line, "translated")
        try:
            variants = translate_kernel(k)
            views = [lower_kernel(v) for v in variants]
            specs, dtypes, origin = specializations(variants[0], path)
            if len(variants) > 1:
                specs = cover_variants(specs, [v.variant.predicates for v in variants])
            kr.entries = [v.name for v in views]
            kr.manifest = {
                "name": k.name, "line": k.pos.line, "params": param_layout(variants[0]),
                "entries": [{"name": vw.name, "predicates": list(v.variant.predicates),
                             "derived": dict(v.derived),
                             "generic_params": {rust_ident(p.name): p.name for p in v.params
                                                if p.kind == "const" and rust_ident(p.name) != p.name},
                             "generics": [g.split(":")[0].replace("const ", "").strip() for g in vw.generics],
                             "outputs": [{"array": n, "form": f, "reason": r} for n, f, r in v.outputs],
                             "tiles": vw.tiles, "pointer_arrays": vw.pointer_arrays}
                            for v, vw in zip(variants, views)],
                "specializations": specs, "dtypes": dtypes, "specializations_from": origin,
                "rules": sorted({r for v in variants for r in v.rules_used}),
            }
            try:
                kernel_ffi_view(kr.manifest, "", display)
                kernel_python_view(kr.manifest, "")
                kr.manifest["abi"] = True
            except AbiUnsupported as e:
                kr.manifest["abi"] = False
                kr.diagnostics.append(Diagnostic("warning", "CT109", f"no C-ABI symbol or Python wrapper: {e}", k.pos))
            entries_views.extend(views)
        except TranspileError as e:
            kr.status = "unsupported"
            kr.diagnostics.append(e.diagnostic)
        except Exception as e:  # noqa: BLE001 - an internal error must not stop the other kernels
            kr.status = "error"
            kr.diagnostics.append(Diagnostic("error", "CT900", f"internal error (a bug in cutile-transpile): "
                                             f"{type(e).__name__}: {e}", k.pos))
            kr.manifest = {"traceback": traceback.format_exc()}
        results.append(kr)
        if fail_fast and kr.status != "translated":
            break
    return results, fr.diagnostics, entries_views


def run(srcs: list[Path], out: Path | None, kernel_filter: list[str] | None = None,
        fail_fast: bool = False, progress=None, use_cache: bool = True) -> tuple[RunResult, dict[Path, str]]:
    """Translate; returns the result and the files to write (path -> content), without writing."""
    from . import cache
    files = collect_sources(srcs, out)
    results: list[KernelResult] = []
    file_diags: list[Diagnostic] = []
    modules: dict[str, dict] = {}
    cacheable = use_cache and not kernel_filter and not fail_fast
    for i, path in enumerate(files):
        if progress:
            progress(i, len(files), path)
        display = path.as_posix()
        key = cache.file_key(path, display) if cacheable else None
        hit = cache.load(key) if key else None
        if hit is not None:
            file_results, diags, entries_views = hit
        else:
            file_results, diags, entries_views = process_file(path, display, kernel_filter, fail_fast)
            if key and not any(r.status == "error" for r in file_results):
                cache.store(key, file_results, diags, entries_views)
        results.extend(file_results)
        file_diags.extend(diags)
        op = _op_name(path)
        parent = path.parent
        while op in modules and parent != parent.parent:  # same file name in another folder
            op = f"{_op_name(parent)}_{op}"
            parent = parent.parent
        if entries_views:
            modules[op] = {"op": op, "source": display, "path": path, "entries": entries_views,
                           "module": f"{op}_kernels",
                           "kernels": [r.manifest for r in results if r.source == display and r.status == "translated"]}
        if fail_fast and any(r.status != "translated" for r in results):
            break
    results.sort(key=lambda r: (r.source, r.line, r.name))
    outputs: dict[Path, str] = {}
    if out is not None and modules:
        _check_entry_names(modules)
        outputs = render_crate(out, modules)
    return RunResult(results, file_diags, [], out), outputs


def render_crate(out: Path, modules: dict) -> dict[Path, str]:
    """The generated crate: kernels, C ABI, Python wrapper package and manifest (path -> content)."""
    import hashlib
    from .emit.ffi import abi_tables, kernel_ffi_view, kernel_python_view, symbol_names
    outputs: dict[Path, str] = {}
    crate = _crate_name(out)
    for op, m in sorted(modules.items()):
        m["rel"] = os.path.relpath(m["path"].resolve(), out.resolve()).replace(os.sep, "/")
        m["sha256"] = hashlib.sha256(m["path"].read_bytes()).hexdigest()
    ported = [{"op": op, "kernels": [k for k in m["kernels"] if k.get("abi")]} for op, m in sorted(modules.items())]
    symbols = symbol_names(ported)
    for op, m in modules.items():
        for k in m["kernels"]:
            k["symbol"] = symbols.get((op, k["name"]))
    manifest_modules = [{"op": op, "module": m["module"], "rust": f"src/{op}/kernel.rs", "source": m["rel"],
                         "source_sha256": m["sha256"], "kernels": m["kernels"]} for op, m in sorted(modules.items())]
    digest = hashlib.sha256(json.dumps(manifest_modules, sort_keys=True).encode()).hexdigest()[:16]
    for op, m in sorted(modules.items()):
        code = render("kernel.rs.j2", source=m["rel"], module=m["module"], entries=m["entries"])
        outputs[out / "src" / op / "kernel.rs"] = rustfmt(code)
        abi_kernels = [k for k in m["kernels"] if k.get("symbol")]
        ffi = [kernel_ffi_view(k, k["symbol"], m["rel"]) for k in abi_kernels]
        outputs[out / "src" / op / "ffi.rs"] = rustfmt(render("ffi.rs.j2", source=m["rel"], module=m["module"],
                                                              kernels=ffi))
        py = [kernel_python_view(k, k["symbol"]) for k in abi_kernels]
        outputs[out / "python" / "cutile_ports" / f"{op}.py"] = render(
            "python/ops.py.j2", source=m["rel"], sha256=m["sha256"], kernels=py)
    mods = [{"op": op, "source": m["rel"]} for op, m in sorted(modules.items())]
    outputs[out / "src" / "lib.rs"] = rustfmt(render("lib.rs.j2", modules=mods))
    outputs[out / "src" / "abi.rs"] = rustfmt(render("abi.rs.j2", digest=digest, **abi_tables()))
    outputs[out / "Cargo.toml"] = render("Cargo.toml.j2", crate=crate)
    outputs[out / "python" / "cutile_ports" / "__init__.py"] = render("python/__init__.py.j2", crate=crate,
                                                                      modules=sorted(modules))
    outputs[out / "python" / "cutile_ports" / "_runtime.py"] = render("python/_runtime.py.j2", crate=crate,
                                                                      digest=digest, **abi_tables())
    manifest = {
        "_generated": f"{GENERATED_MARK} {__version__}",
        "version": 1, "tool": __version__, "tool_digest": tool_digest(), "cutile": CUTILE_VERSION,
        "crate": crate, "abi_digest": digest, "modules": manifest_modules,
    }
    outputs[out / "manifest.json"] = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    return outputs


def _crate_name(out: Path) -> str:
    name = re.sub(r"[^a-z0-9_]", "_", out.resolve().name.lower()) or "kernels"
    return name if not name[0].isdigit() else f"k_{name}"


def _check_entry_names(modules: dict) -> None:
    """cuTile Rust needs function names unique across all modules; suffix clashes with the op name."""
    seen: dict[str, str] = {}
    for op, m in sorted(modules.items()):
        manifest_entries = [e for k in m["kernels"] for e in k["entries"]]
        for view, entry in zip(m["entries"], manifest_entries):
            if view.name in seen:
                view.name = f"{view.name}_{op}"
                entry["name"] = view.name
            seen[view.name] = op


def write_outputs(outputs: dict[Path, str], force: bool = False) -> tuple[list[str], list[str]]:
    """Atomic writes of changed files; refuses to overwrite files without the @generated mark."""
    written, refused, changed = [], [], []
    for path, content in sorted(outputs.items()):
        old = path.read_text(errors="replace") if path.exists() else None
        if old == content:
            continue
        if old is not None and GENERATED_MARK not in old and not force:
            refused.append(str(path))
        changed.append((path, content))
    if refused:
        return written, refused
    for path, content in changed:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
        tmp.write_text(content)
        os.replace(tmp, path)
        written.append(str(path))
    for path in stale_outputs(outputs):  # ports of sources that no longer exist (or have no kernels)
        path.unlink()
        written.append(str(path))
        try:
            path.parent.rmdir()
        except OSError:
            pass
    return written, refused


def stale_outputs(outputs: dict[Path, str]) -> list[Path]:
    """Generated per-module files in OUT (`src/<op>/{kernel,ffi}.rs`, `python/cutile_ports/<op>.py`) that this
    run no longer produces."""
    roots = {p.parent.parent for p in outputs if p.name == "lib.rs" and p.parent.name == "src"}
    stale = []
    for out in roots:
        for p in sorted([*out.glob("src/*/kernel.rs"), *out.glob("src/*/ffi.rs"), *out.glob("python/cutile_ports/*.py")]):
            if p not in outputs:
                try:
                    if GENERATED_MARK in p.read_text(errors="replace").splitlines()[0]:
                        stale.append(p)
                except (OSError, IndexError):
                    continue
    return stale
