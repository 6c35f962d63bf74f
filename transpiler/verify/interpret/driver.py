"""The numeric check of an output directory's Triton ports: every kernel with reference cases gets its entry
compiled (cuTile Rust, through the irdump helper, once per entry and generics) and each case interpreted.

`numeric_checks` is what `verify` calls; `check_output` runs it standalone (tests, tools/interpret_mutants.py).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

from ...record import CASES_DIR
from .cases import (DEFAULT_REFS, ROOT, CaseResult, Reference, case_dtype, case_spec, check_case, entry_signature,
                    ir_key, load_references, read_reference, reference_tool)
from .errors import InterpretError


def references_for(out: Path, module: dict, kernel: dict, refs_dir: Path | None) -> list:
    """The reference cases of a manifest kernel: the ones recorded in OUT/cases for its source and name
    (`cutile-transpile record`), then the tool's own (tests/fixtures/triton_refs) by its source module's stem
    and its name."""
    return recorded_for(out, module, kernel) + _fixture_references(out, module, kernel, refs_dir)


def recorded_for(out: Path, module: dict, kernel: dict) -> list:
    """OUT/cases/KERNEL-*.npz recorded from this module's source; a case recorded from other bytes of the source
    is returned `stale` (reported, not replayed: the kernel or its arguments may have changed since)."""
    from ...output.guard import OutputError, inside
    try:
        folder = inside(out, CASES_DIR)
    except OutputError:
        return []
    if not folder.is_dir():
        return []
    try:
        source_sha, unread = hashlib.sha256((out / module["source"]).read_bytes()).hexdigest(), ""
    except OSError as e:
        source_sha, unread = "", f"the source {module['source']} cannot be read ({e.strerror})"
    found = []
    for p in sorted(folder.glob(f"{kernel['name']}-*.npz")):
        try:
            ref = read_reference(p)
        except (OSError, ValueError, KeyError) as e:
            ref = Reference({"id": p.stem, "kernel": kernel["name"], "source": module["source"]}, {}, p,
                            stale=f"{p.name} cannot be read ({e})")
        if ref.case.get("kernel") != kernel["name"] or ref.case.get("source") != module["source"]:
            continue
        if not ref.stale and ref.case.get("source_sha256") != source_sha:
            ref.stale = unread or (f"recorded from another version of {module['source']}: run `cutile-transpile "
                                   "record` again (and delete the old case)")
        found.append(ref)
    return found


def _fixture_references(out: Path, module: dict, kernel: dict, refs_dir: Path | None) -> list:
    folder = refs_dir if refs_dir is not None else DEFAULT_REFS
    if not folder.is_dir() or reference_tool() is None:
        return []
    refs = _cached_refs(str(folder.resolve()))
    found = refs.get((Path(module["source"]).stem, kernel["name"]), [])
    if not found:
        return []
    # only for the source the references were recorded from (same bytes): a user's kernel that shares a corpus
    # kernel's module and name is not compared with the corpus' numbers
    try:
        source = (out / module["source"]).read_bytes()
    except OSError:
        return []
    recorded = ROOT / (found[0].case["module"].replace(".", "/") + ".py")
    return found if recorded.is_file() and recorded.read_bytes() == source else []


_REFS: dict[str, dict] = {}


def _cached_refs(folder: str) -> dict:
    if folder not in _REFS:
        _REFS[folder] = load_references(Path(folder))
    return _REFS[folder]


def numeric_checks(out: Path, items: list[tuple[dict, dict]], irdump: Path, tmp: Path,
                   refs_dir: Path | None = None, log=None, ir_texts: dict | None = None,
                   compiled: dict[str, Path] | None = None) -> dict[str, list[CaseResult]]:
    """Kernel name -> the results of its cases (kernels without references are left out). `ir_texts`, when
    given, receives the Tile IR each case ran (case id -> text; None where the entry did not compile).
    `compiled`: bytecode already compiled by irdump, by its job's `irdump.job_key` (not compiled again)."""
    from ..entries import rust_static_strides, select_entry
    from ..irdump import job_key, run_irdump
    from ..normalize import TARGET
    from ..specs import verified_generics
    from ..toolchain import ToolchainError, disassemble
    todo, jobs, by_key, reused = [], [], {}, {}
    results: dict[str, list[CaseResult]] = {}
    for module, kernel in items:
        for ref in references_for(out, module, kernel, refs_dir):
            if ref.stale:
                results.setdefault(kernel["name"], []).append(CaseResult(ref.case["id"], "not_interpreted", ref.stale))
                continue
            try:
                spec = case_spec(kernel, ref.case, (out / module["source"]).resolve())
                dtype = case_dtype(kernel, ref.case)
                entry = select_entry(kernel["entries"], spec, dtype)
                generics = verified_generics(kernel, entry, spec, dtype)
            except (InterpretError, LookupError, KeyError) as e:
                results.setdefault(kernel["name"], []).append(CaseResult(ref.case["id"], "not_interpreted",
                                                                         f"no entry for the case: {e}"))
                continue
            rust = (out / module["rust"]).resolve()
            key = ir_key(rust, module["module"], entry["name"], generics)
            if key not in by_key:
                bc = tmp / f"{key[:24]}.rs.tileirbc"
                strides = [[p.get("rust_name", p["name"]), rust_static_strides(p)]
                           for p in kernel["params"] if p["kind"] == "array"]
                job = {"file": str(rust), "module": module["module"], "entry": entry["name"],
                       "generics": generics, "strides": strides, "target": TARGET, "out": str(bc)}
                done = (compiled or {}).get(job_key(job))
                if done is not None:
                    by_key[key] = done
                    reused[str(done)] = {"out": str(done), "ok": True}
                else:
                    by_key[key] = bc
                    jobs.append(job)
            todo.append((kernel, entry, rust, key, ref))
    if not todo:
        return results
    if log:
        log(f"interpreting {len(todo)} Triton cases ({len(by_key)} entries compiled to Tile IR)")
    stdout, stderr = run_irdump(irdump, jobs) if jobs else ("", "")
    results_of = dict(reused)
    for line in stdout.splitlines():
        try:
            r = json.loads(line)
            results_of[r["out"]] = r
        except json.JSONDecodeError:
            continue
    texts: dict[str, str | Exception] = {}
    for kernel, entry, rust, key, ref in todo:
        bc = by_key[key]
        if key not in texts:
            r = results_of.get(str(bc))
            try:
                if r is None or not r.get("ok"):
                    raise ToolchainError((r or {}).get("error") or stderr[-1000:] or "irdump produced no result")
                texts[key] = disassemble(bc)
            except ToolchainError as e:
                texts[key] = e
        text = texts[key]
        if ir_texts is not None:
            ir_texts[ref.case["id"]] = None if isinstance(text, Exception) else text
        if isinstance(text, Exception):
            res = CaseResult(ref.case["id"], "not_interpreted", f"cuTile Rust compile failed: {text}")
        else:
            try:
                sig = entry_signature(rust.read_text(), entry["name"])
                res = check_case(text, kernel, sig, ref)
            except InterpretError as e:
                res = CaseResult(ref.case["id"], "not_interpreted", str(e))
        res.entry = entry["name"]
        results.setdefault(kernel["name"], []).append(res)
    return results


def check_output(out: Path, kernels: list[str] | None = None, refs_dir: Path | None = None,
                 log=None) -> dict[str, list[CaseResult]]:
    """Every Triton kernel of OUT (or those named) with references, interpreted (no crate build needed)."""
    from ..toolchain import cargo_env, irdump_binary
    manifest = json.loads((out / "manifest.json").read_text())
    items = [(m, k) for m in manifest["modules"] for k in m["kernels"]
             if k.get("frontend") == "triton" and (not kernels or k["name"] in kernels)]
    irdump = irdump_binary(cargo_env())
    with tempfile.TemporaryDirectory(prefix="cutile-interpret-") as tmp:
        return numeric_checks(out, items, irdump, Path(tmp), refs_dir, log)


NUMERIC = ("numbers_match", "numbers_differ")


def add_numeric_checks(out: Path, pending: list[tuple[dict, dict]], verdicts: list, irdump: Path, tmp: Path,
                       log=None, compiled: dict[str, Path] | None = None) -> None:
    """verify's hook: each Triton kernel that compiled gets one check per reference case (verdict
    numbers_match | numbers_differ | not_interpreted) and, when every case ran, the kernel verdict
    numbers_match (all matched) or numbers_differ (one differs, with its first differing element)."""
    from ..entries import Check
    items = [(m, k, kv) for (m, k), kv in zip(pending, verdicts)
             if kv.verdict == "compiled" and all(c.verdict == "compiled" for c in kv.checks)]
    if not items:
        return
    found = numeric_checks(out, [(m, k) for m, k, _ in items], irdump, tmp, log=log, compiled=compiled)
    for _, k, kv in items:
        results = found.get(k["name"], [])
        for r in results:
            kv.checks.append(Check(r.case, {}, "", r.verdict, r.detail))
        if any(r.verdict == "numbers_differ" for r in results):
            kv.verdict = "numbers_differ"
            kv.reason = next(f"case {r.case}: {r.detail}" for r in results if r.verdict == "numbers_differ")
        elif results and all(r.verdict == "numbers_match" for r in results):
            kv.verdict = "numbers_match"
        elif results:
            kv.reason = "; ".join(f"case {r.case} not interpreted: {r.detail}" for r in results
                                  if r.verdict == "not_interpreted")[:2000]


def reference_digest(out: Path, module: dict, kernel: dict) -> str:
    """What a Triton kernel's numeric check reads besides the port: its reference files (names and bytes)."""
    import hashlib
    if kernel.get("frontend") != "triton":
        return ""
    h = hashlib.sha256()
    for ref in references_for(out, module, kernel, None):
        h.update(ref.path.name.encode() + ref.path.read_bytes())
    return h.hexdigest()
