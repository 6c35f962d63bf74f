"""The fallback stage: a kernel the rules reject is converted again with its rejected assignments as units;
each unit is asked for (or replayed from the cache), checked before anything is compiled (envelope,
allow-list, Rust syntax, declared type), spliced, and the kernel goes through the passes again. The proof
(crate build and Tile IR equivalence) is `prove.py`'s, before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from dataclasses import replace
from pathlib import Path

from ..diagnostics import Diagnostic, TranspileError
from .allowlist import check_fragment
from .records import proved_here
from .question import NoContext, context, messages, request_hash
from .session import Session, Unavailable
from .units import UNIT_CODES, original_diagnostic, parse_result_type, unit_at, units, with_fragment

MAX_UNITS = 8  # per kernel: beyond this the port is more the model's than the rules'

CT_REJECTED = "CT130"  # the answer was rejected (the kernel keeps the rules' diagnostic)
CT_UNAVAILABLE = "CT131"  # no answer could be had (warning)
CT_COMPLETED = "CT132"  # a statement completed by the fallback (warning: review it)


def wants(session: Session, rel: str, results) -> bool:
    """Whether the stage has anything to do for a file: a cuTile Python kernel failed on a construct a unit
    can stand for, and the model may be asked or the cache has answers from this source."""
    if session.settings is None and not session.proving and not any(
            e.get("source") == rel for e in session.kept.values()):
        return False
    return any(_eligible(r) for r in results)


def _eligible(r) -> bool:
    return r.status == "unsupported" and r.frontend == "cutile-python" and any(
        d.code in UNIT_CODES or d.code.startswith("CTR-") for d in r.diagnostics)


def complete(path: Path, display: str, rel: str, results: list, session: Session) -> list:
    """The file's kernel results with every kernel the fallback completes replaced (status `fallback`), and
    the reason on every kernel it could not complete."""
    from ..frontend.source import parse_file
    fr = parse_file(path, display, llm_units=True)
    kernels = {k.name: k for k in fr.kernels}
    out = []
    for r in results:
        k = kernels.get(r.name)
        if _eligible(r) and k is not None:
            r = _complete_kernel(k, fr.sites.get(k.name, []), r, path, display, rel, session)
        out.append(r)
    return out


def _complete_kernel(k, sites: list[dict], r, path: Path, display: str, rel: str, session: Session):
    """Asks for the kernel's units in order; a unit a pass rejects (the rules' diagnostic falls inside an
    assignment) becomes one too, up to MAX_UNITS."""
    from ..translate import kernel_result
    asked: list[tuple[str, object]] = []  # (hash, unit)
    while True:
        done = _ask_units(k, r, path, rel, session, asked)
        if not isinstance(done, type(k)):
            return done  # a result with the reason it stopped
        k = done
        kr = kernel_result(k, path, display)
        d = next((d for d in kr.diagnostics if d.severity == "error"), None)
        if kr.status == "unsupported" and d is not None and len(asked) < MAX_UNITS:
            k2 = unit_at(k, sites, d)
            if k2 is not None:
                k = k2
                continue
        break
    if not asked:
        return r  # no unit: the rules' diagnostics stand
    return _settle(kr, asked, session, path, k, r)


def _ask_units(k, r, path: Path, rel: str, session: Session, asked: list):
    """Every unit of `k` asked for and spliced (the kernel), or the result with the reason it stopped."""
    from ..verify.specs import kernel_dtypes
    dtypes = tuple(kernel_dtypes(path))
    while units(k):
        u = units(k)[0]
        try:
            ctx = context(k, u, dtypes)
        except (TranspileError, NoContext):
            session.partial.add((rel, k.name))
            return r  # another blocker comes first: the rules' diagnostics stand
        msgs = messages(k, u, ctx)
        h = request_hash(session.model or "(cache)", msgs) if session.settings else _cached_hash(session, msgs)
        where = original_diagnostic(u.value).pos
        try:
            entry = session.lookup(h) if h else None
            if entry is None:
                entry = session.ask(h, msgs, {"source": rel, "kernel": k.name, "unit": u.value.attr("code")})
        except Unavailable as e:
            session.partial.add((rel, k.name))
            return _with(r, Diagnostic("warning", CT_UNAVAILABLE, f"the LLM fallback could not complete this "
                                       f"statement: {e}", where))
        if entry["verdict"] == "rejected" or h in session.unprovable:
            session.partial.add((rel, k.name))
        if entry["verdict"] == "rejected":
            return _rejected(r, entry, where)
        if h in session.unprovable:
            return _with(r, Diagnostic("warning", CT_UNAVAILABLE, session.unprovable[h], where))
        reason, ty = _check(entry["answer"], ctx, k)
        if reason:
            session.reject(h, reason)
            session.partial.add((rel, k.name))
            return _rejected(r, session.used[h], where)
        k = with_fragment(k, u, entry["answer"]["rust"].strip(), ty, h, entry["model"])
        asked.append((h, u))
    return k


def _settle(kr, asked: list, session: Session, path: Path, k, r):
    """The completed kernel's result (status `fallback`), its answers marked for the proof; or the rules'
    result with the reason when the kernel does not translate with the answers."""
    if kr.status != "translated":
        why = "; ".join(f"{d.code}: {d.message}" for d in kr.diagnostics if d.severity == "error")
        for h, _ in asked:
            session.reject(h, f"the kernel does not translate with the answer: {why}")
        return _rejected(r, session.used[asked[0][0]], original_diagnostic(asked[0][1].value).pos)
    digest = hashlib.sha256(json.dumps(kr.manifest["views"], sort_keys=True).encode()).hexdigest()[:24]
    # an accepted entry counts only where this machine proved it for this code: OUT's cache can be forged
    proved = all(session.used[h]["verdict"] == "accepted" and session.used[h].get("verified") == digest
                 and proved_here(session.used[h]) for h, _ in asked)
    if not proved and not session.proving:
        if not session.proves:
            return _with(r, Diagnostic("warning", CT_UNAVAILABLE, "the LLM fallback's answer is not proved for "
                                       "this kernel on this machine yet", r.diagnostics[0].pos))
        session.unproved[(str(path), k.name)] = (digest, [h for h, _ in asked])
    kr.status = "fallback"
    kr.manifest["llm_fallback"] = [{"hash": h, "model": session.used[h]["model"], "line": u.pos.line,
                                    "statement": u.value.attr("code")} for h, u in asked]
    for h, u in asked:
        kr.diagnostics.append(Diagnostic(
            "warning", CT_COMPLETED, f"completed by the LLM fallback (model {session.used[h]['model']}, answer "
            f"{h}, llm-cache/{h}.json): `{' '.join(str(u.value.attr('code')).split())}`; proved equivalent with "
            "cuTile Python's Tile IR", u.pos))
    return kr


def _cached_hash(session: Session, msgs) -> str | None:
    """Without a configured model, a cached answer is found by the model it was asked of."""
    for e in session.kept.values():
        h = request_hash(e["model"], msgs)
        if h == e["hash"]:
            return h
    return None


def _check(answer: dict, ctx: dict, k) -> tuple[str, object]:
    """Everything checked before the fragment is ever compiled: allow-list, Rust syntax, declared type."""
    rust, ty_text = answer.get("rust", ""), answer.get("type", "")
    generics = [re.sub(r"^const\s+", "", g).split(":")[0].strip() for g in ctx["generics"]]
    reason = check_fragment(rust, [s["rust"] for s in ctx["scope"]], generics)
    if reason:
        return f"the fragment is outside the allow-list: {reason}", None
    try:
        ty = parse_result_type(ty_text, k, ctx["generics"])
    except ValueError as e:
        return str(e), None
    reason = rust_syntax_error(rust, " ".join(ty_text.split()))
    if reason:
        return f"the fragment is not valid Rust: {reason}", None
    return "", ty


def rust_syntax_error(rust: str, ty: str) -> str | None:
    """rustfmt parses the fragment where it will stand (`let x: T = <fragment>;`); its first error, if any."""
    import shutil
    import tempfile
    from ..emit.render import RUSTFMT_ARGS
    exe = shutil.which("rustfmt")
    if exe is None:
        return "rustfmt not found on PATH"
    wrapper = f"fn __unit() {{\n    let __x: {ty} = {{\n{rust}\n}};\n}}\n"
    try:
        res = subprocess.run([exe, *RUSTFMT_ARGS], input=wrapper, capture_output=True, text=True, timeout=60,
                             cwd=tempfile.gettempdir())
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"rustfmt could not run: {e}"
    if res.returncode == 0:
        return None
    lines = [line for line in res.stderr.splitlines() if line.startswith("error")]
    return (lines[0] if lines else res.stderr.strip()[:300]) or "rustfmt rejected it"


def _with(r, d: Diagnostic):
    return replace(r, diagnostics=[*r.diagnostics, d])


def _rejected(r, entry: dict, where):
    return _with(r, Diagnostic("error", CT_REJECTED, f"the LLM fallback's answer (llm-cache/{entry['hash']}.json) was "
                               f"rejected: {entry['reason']}", where))
