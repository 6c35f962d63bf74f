"""One source file's kernels through the stages: the frontend, the passes (`translate_kernel`), emission and the
manifest record of each kernel (`kernel_result`). pipeline.py runs it over files and writes the crate; the LLM
fallback and the manifest check call it too."""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from .diagnostics import Diagnostic, TranspileError
from .model.ir import Kernel


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
    verified_at: dict | None = None  # what the verdict covers (verify.specs.coverage_summary); None: not verified
    checks: list[dict] = field(default_factory=list)  # verification's checks (entry, spec, dtype, verdict, ...)

    def as_json(self) -> dict:
        """One kernel in the JSON both the main command and `verify` print (README, "JSON output")."""
        return {"name": self.name, "source": self.source, "line": self.line, "frontend": self.frontend,
                "status": self.status, "entries": self.entries, "verify": self.verify,
                "verified_at": self.verified_at, "checks": self.checks,
                "diagnostics": [d.as_json() for d in self.diagnostics]}


def translate_kernel(kernel: Kernel, dtypes: tuple[str, ...] | None = None) -> list[Kernel]:
    """All passes for one kernel (passes/__init__.py `PASSES`, in order): its variants, typed, fused, with their
    outputs' ownership. `dtypes`: the element types E is exported for (default: verification's defaults)."""
    from .passes import run_passes
    from .verify.specs import DEFAULT_DTYPES
    return run_passes(kernel, tuple(DEFAULT_DTYPES if dtypes is None else dtypes))


def param_layout(kernel: Kernel) -> list[dict]:
    from .emit.lower import rust_ident
    return [{"name": p.name, "rust_name": rust_ident(p.name), "kind": p.kind, "rank": p.rank, "dtype": p.dtype,
             "const_type": p.const_type, "pointer": p.pointer, **({"flat": True} if p.flat else {}),
             **({"domain": list(p.domain)} if p.domain else {}),
             **({"unused": True} if p.unused else {}),
             # a Triton output taken as a checked partition of this view of its span (passes/views.py)
             **({"view": {"extents": list(p.view[0]), "strides": list(p.view[1])}} if p.view else {}),  # never named: any argument (Param.unused)
             # an optional Triton pointer (None allowed) and its hidden constant (Param.given_of)
             **({"given_of": p.given_of} if p.given_of else {}),
             # a hidden constant: whether a scalar argument is 1 (Param.unit_of)
             **({"unit_of": p.unit_of} if p.unit_of else {}),
             # a host tensor descriptor's hidden part, and the descriptor parameter's parts (Param.descriptor)
             **({"desc_of": p.desc_of} if p.desc_of else {}),
             # the array whose dtype (or f32) this array's generic takes (Param.partner)
             **({"partner": p.partner} if p.partner else {}),
             **({"descriptor": [list(x) for x in p.descriptor]} if p.descriptor else {}),
             **({"given": kernel.optional(p.name)} if kernel.optional(p.name) else {})}
            for p in kernel.params]


def process_file(path: Path, display: str, kernel_filter: list[str] | None = None,
                 fail_fast: bool = False) -> tuple[list[KernelResult], list[Diagnostic]]:
    """One source file through every stage: kernel results (a translated one's manifest record holds its
    rendered entry views) and file diagnostics. Positions are deferred at first (only diagnostics show
    them); a file that reports a diagnostic at a deferred position is converted again with exact ones."""
    results, diags = _process_file(path, display, kernel_filter, fail_fast, exact_positions=False)
    if any(d.pos.deferred for r in results for d in r.diagnostics) or any(d.pos.deferred for d in diags):
        results, diags = _process_file(path, display, kernel_filter, fail_fast, exact_positions=True)
    return results, diags


def _process_file(path: Path, display: str, kernel_filter: list[str] | None, fail_fast: bool,
                  exact_positions: bool) -> tuple[list[KernelResult], list[Diagnostic]]:
    from .frontend.source import parse_file  # LibCST is only imported when a file must be parsed
    fr = parse_file(path, display, exact_positions=exact_positions)
    results: list[KernelResult] = []
    for name, pos, diag in fr.failures:
        if kernel_filter and name not in kernel_filter:
            continue
        results.append(KernelResult(name, display, pos.line, "error" if diag.code == "CT900" else "unsupported",
                                    diagnostics=[diag, *fr.also.get(name, [])]))
    for k in fr.kernels:
        if kernel_filter and k.name not in kernel_filter:
            continue
        if fail_fast and any(r.status not in OK for r in results):
            break
        kr = kernel_result(k, path, display)
        results.append(kr)
        if fail_fast and kr.status not in OK:
            break
    return results, fr.diagnostics


OK = ("translated", "fallback")  # the statuses of a kernel that has a port


def kernel_result(k: Kernel, path: Path, display: str) -> KernelResult:
    """One converted kernel through the passes and emission: its result, with its manifest record."""
    import dataclasses
    from . import config
    from .emit.ffi import AbiUnsupported, kernel_ffi_view, kernel_python_view, recorded_combinations, tile_dims
    from .emit.lower import lower_kernel, rust_ident
    from .passes.flags import condition_comparands, condition_consts
    from .passes.type_rules import FUNCTION_CONSTEXPR, STATIC_ASSERT
    from .model.ir import is_generic
    from .passes.read_when import read_when
    from .verify.specs import cover_variants, kernel_dtypes, loop_bounds, specializations
    kr = KernelResult(k.name, display, k.pos.line, "translated", frontend=k.frontend)
    kr.diagnostics.extend(config.kernel_diagnostics(k, path))
    kr.diagnostics.extend(Diagnostic("warning", code, message, where) for code, message, where in k.notes)
    if any(d.severity == "error" for d in kr.diagnostics):
        kr.status = "error"  # fail closed: an invalid configuration never falls back to defaults
        return kr
    try:
        variants = translate_kernel(k, tuple(kernel_dtypes(path)))
        # warnings the typing of each variant gave (an emulation's cost), each once
        added = dict.fromkeys(n for v in variants for n in v.notes if n not in k.notes)
        kr.diagnostics.extend(Diagnostic("warning", code, message, where) for code, message, where in added)
        for preds, why, where in variants[0].dropped:  # said, so a typo in one arm is not silent
            if why.startswith(STATIC_ASSERT):  # a specialization cuTile Python's static assertion refuses
                kr.diagnostics.append(Diagnostic("warning", "CT117", f"no entry where {' and '.join(preds)}: {why} "
                                                 "there (cuTile Python refuses to compile it too); launches with "
                                                 "those constants are refused", where))
                continue
            if why.startswith(FUNCTION_CONSTEXPR):  # `SCORE_MOD(qk)` under `if SCORE_MOD is not None:`
                kr.diagnostics.append(Diagnostic("warning", "CT103", f"no entry where {' and '.join(preds)}: {why} "
                                                 "there; the port is the None variant, and a launch passing a "
                                                 "function is refused", where))
                continue
            kr.diagnostics.append(Diagnostic("warning", "CT103", f"no entry where {' and '.join(preds)}: {why} "
                                             "there (Triton cannot compile it either); launches with those "
                                             "constants are refused", where))
        views = [lower_kernel(v) for v in variants]
        specs, dtypes, origin = specializations(variants[0], path)
        if len(variants) > 1 or variants[0].variant.predicates:
            # also a single entry with predicates (a reshape's count, equal dims): the defaults may not select it
            specs = cover_variants(specs, [v.variant.predicates for v in variants], variants[0].derived)
            floats = {p.name for p in variants[0].params if p.kind == "const" and p.const_type == "float"}
            specs = [{n: float(v) if n in floats else v for n, v in sp.items()} for sp in specs]  # -0.0 is not 0
        kr.entries = [v.name for v in views]
        # an array whose rank depends on a constant (passes/ranks.py): its ranks, and each entry's
        ranks = {p.name: sorted({q.rank for v in variants for q in v.params if q.name == p.name})
                 for p in variants[0].params if p.kind == "array"}
        ranks = {n: rs for n, rs in ranks.items() if len(rs) > 1}
        params = [{**p, "ranks": ranks[p["name"]]} if p["name"] in ranks else p for p in param_layout(variants[0])]
        # an array whose dtype differs per entry (passes/entry_dtypes.py): its dtypes, and each entry's
        array_dtypes = {p.name: list(dict.fromkeys(q.dtype for v in variants for q in v.params if q.name == p.name))
                        for p in variants[0].params if p.kind == "array"}
        array_dtypes = {n: ds for n, ds in array_dtypes.items() if len(ds) > 1}
        params = [{**p, "dtypes": array_dtypes[p["name"]]} if p["name"] in array_dtypes else p for p in params]
        # an array read only under a constant condition (passes/read_when.py): unused where it is false
        conditional = {p["name"]: c for p in params if p["kind"] == "array" and p["name"] not in array_dtypes and k.frontend == "cutile-python"
                       and (c := read_when(variants, p["name"])) is not None}
        # (only a condition over the kernel's own constants: one over a name the body derives, `STAGE_AND_2`, has no
        # C-ABI form, and the kernel would lose its symbol, CT109)
        constants = {p["name"] for p in params if p["kind"] == "const"} | {"and", "or", "not", "True", "False"}
        conditional = {n: c for n, c in conditional.items() if set(re.findall(r"[A-Za-z_]\w*", c)) <= constants}
        # (not where it alone, or only with other such arrays, says a dtype generic's type: an unread launch would
        # leave the generic to the symbol's default, not the type verify compiled it with)
        settled = {p["dtype"] for p in params if p["kind"] == "array" and p["name"] not in conditional}
        conditional = {n: c for n, c in conditional.items()
                       if not is_generic(next(p for p in params if p["name"] == n)["dtype"])
                       or next(p for p in params if p["name"] == n)["dtype"] in settled}
        params = [{**p, "read_when": conditional[p["name"]]} if p["name"] in conditional else p for p in params]
        kr.manifest = {
            "name": k.name, "line": k.pos.line, "params": params,
            "entries": [{"name": vw.name, "predicates": list(v.variant.predicates),
                         "derived": dict(v.derived),
                         "generic_params": {rust_ident(p.name): p.name for p in v.params
                                            if p.kind == "const" and rust_ident(p.name) != p.name},
                         "generics": [g.split(":")[0].replace("const ", "").strip() for g in vw.generics],
                         "outputs": [{"array": n, "form": f, "reason": r} for n, f, r in v.outputs],
                         "tiles": vw.tiles, "tile_dims": tile_dims(v), "pointer_arrays": vw.pointer_arrays,
                         **({"span_inputs": vw.span_inputs} if vw.span_inputs else {}),
                         **({"ranks": {p.name: p.rank for p in v.params if p.name in ranks}} if ranks else {}),
                         **({"array_dtypes": {p.name: p.dtype for p in v.params if p.name in array_dtypes}}
                            if array_dtypes else {}),
                         # the element types E may have in this entry (absent: any)
                         **({"dtypes": list(v.variant.dtypes)} if v.variant.dtypes else {})}
                        for v, vw in zip(variants, views)],
            "specializations": specs, "dtypes": dtypes, "specializations_from": origin,
            "loop_bounds": [list(b) for b in loop_bounds(variants[0])],
            # constants a constant condition reads: verified at 0 and at a nonzero value (specs.py)
            "condition_consts": sorted(set().union(*(condition_consts(v) for v in variants))),
            # and the values at and around the literals they are compared with (`FLAG == 1`)
            **({"condition_values": comparands} if (comparands := condition_comparands(variants)) else {}),
            "rules": sorted({r for v in variants for r in v.rules_used}),
            # the source language when it is not cuTile Python: verification compiles its entries only
            **({"frontend": k.frontend} if k.frontend != "cutile-python" else {}),
            **({"strings": {n: list(v) for n, v in k.strings}} if k.strings else {}),
            **({"dtype_consts": list(k.dtype_consts)} if k.dtype_consts else {}),
            # the decorator's entry hints (the entries carry them): a launch asking for others passes them
            **({"hints": [list(h) for h in k.hints]} if k.hints and k.frontend == "cutile-python" else {}),
            # a kernel a factory function returns: verification rebuilds it with closure values, the
            # router reads them from the launched kernel's closure
            **({"factory": {"function": k.factory, "closure": list(k.closure),
                            "hints": [list(h) for h in k.hints]}} if k.factory else {}),
            # the entries as rendered, so a later run can keep this port when it cannot redo it
            "views": [dataclasses.asdict(vw) for vw in views],
        }
        # more than two dtype generics: the bounded set of their combinations the port exports (model/ir.py)
        combinations = recorded_combinations(kr.manifest)
        pairs = sorted({pair for v in variants for pair in v.mma_pairs})
        if combinations is not None and pairs:
            # the combinations where cuTile Python compiles each mma's operand and accumulator dtypes (a bf16
            # accumulator is refused): the C symbol refuses the others, as cuTile Python does
            from .model.ir import GENERIC_DTYPES
            from .passes.ops.linalg import mma_pairs_compile
            generics = [g for g in GENERIC_DTYPES if any(p["kind"] == "array" and p["dtype"] == g
                                                         for p in kr.manifest["params"])]
            combinations = [c for c in combinations if mma_pairs_compile(pairs, dict(zip(generics, c)))]
            kr.manifest["mma_pairs"] = [list(p) for p in pairs]
        if combinations is not None:
            kr.manifest["element_combinations"] = combinations
        try:
            kernel_ffi_view(kr.manifest, "", display)
            kernel_python_view(kr.manifest, "")
            kr.manifest["abi"] = True
        except AbiUnsupported as e:
            kr.manifest["abi"] = False
            kr.diagnostics.append(Diagnostic("warning", "CT109", f"no C-ABI symbol or Python wrapper: {e}", k.pos))
    except TranspileError as e:
        kr.status = "unsupported"
        kr.diagnostics.append(e.diagnostic)
    except RecursionError:
        kr.status = "unsupported"
        kr.diagnostics.append(Diagnostic("error", "CT001", "the kernel is nested too deeply to translate "
                                         "(split the expression into several statements)", k.pos))
    except Exception as e:  # noqa: BLE001 - an internal error must not stop the other kernels
        kr.status = "error"
        kr.diagnostics.append(Diagnostic("error", "CT900", f"internal error (a bug in cutile-transpile): "
                                         f"{type(e).__name__}: {_safe_str(e)}", k.pos))
        kr.manifest = {"traceback": traceback.format_exc(limit=30)}
    return kr


def _safe_str(e: BaseException) -> str:
    try:
        return str(e)[:2000]
    except Exception:  # noqa: BLE001 - str() of some exceptions recurses or fails
        return "(message unavailable)"
