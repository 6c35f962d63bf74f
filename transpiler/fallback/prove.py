"""The proof of new answers, before anything is written: the kernels that use them are ported to a staging
crate in a temporary directory, built, and verified against cuTile Python's Tile IR. An answer is accepted
only when its kernel is `equivalent`; otherwise it is rejected with the verdict (the rest of the run goes on). A
proof that cannot run (no toolchain) rejects nothing: the answer is not written, and is asked again next run.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from .conditions import Unprobable, answer_probes
from .records import remember
from .session import Session


# not_verified for these is the answer's fault (its Rust does not build or compile); for anything else the proof
# could not run (no toolchain, the Python module does not import, cuTile Python's export failed)
RUST_FAULTS = ("the generated Rust does not build", "cuTile Rust compile failed")


def prove(session: Session, result, log=None) -> None:
    """Settles every unproved answer of the run `result` (accept or reject, in the session)."""
    from ..pipeline import run, write_outputs
    from ..verify.run import verify_output
    todo = dict(session.unproved)
    session.unproved.clear()
    status = {(str(Path(k.source)), k.name): k for k in result.kernels}
    staged = {}
    for key, (digest, hashes) in todo.items():
        k = status.get(key)
        if k is None or k.status != "fallback":  # left out by the compile check, or failed later
            why = "; ".join(d.message[:1500] for d in (k.diagnostics if k else []) if d.severity == "error")
            for h in hashes:
                session.reject(h, f"the kernel's Rust does not build with the answer: {why or 'no port'}")
        else:
            staged[key] = (digest, hashes)
    if not staged:
        return
    paths = sorted({Path(p) for p, _ in staged})
    names = sorted({n for _, n in staged})
    tmp = Path(tempfile.mkdtemp(prefix="cutile-transpile-proof-"))
    session.proving = True
    try:
        crate = tmp / "crate"
        if log:
            log(f"proving {len(staged)} kernel(s) completed by the LLM fallback in a staging crate")
        _, outputs = run(paths, crate, kernel_filter=names, use_cache=True, compile_check="off", fallback=session)
        write_outputs(outputs)
        probes = _add_answer_probes(session, crate, staged)
        verdicts = verify_output(crate, sorted({n for _, n in staged}), log=log) if staged else []
    finally:
        session.proving = False
        shutil.rmtree(tmp, ignore_errors=True)
    for (path, name), (digest, hashes) in staged.items():
        v = next((v for v in verdicts if v.kernel == name
                  and (crate / v.source).resolve() == Path(path).resolve()), None)
        if v is not None and v.verdict == "equivalent":
            # each outcome of each constant condition of the answers checked, or the answers are not proved
            missing = [label for label in probes.get((path, name), ())
                       if not any(c.probe == label and c.verdict == "equivalent" for c in v.checks)]
            if missing:
                why = v.unprobed.get(missing[0]) or "the verifier did not check it"
                for h in hashes:
                    session.reject(h, f"the answer's constant condition {missing[0]} could not be checked: "
                                      f"no specialization that takes it is accepted by cuTile Python ({why[:1500]})")
                continue
            for h in hashes:
                session.accept(h, digest)
                remember(session.used[h])
            continue
        if v is not None and v.verdict == "not_verified" and not v.reason.startswith(RUST_FAULTS):
            for h in hashes:  # the proof could not run (toolchain, the Python module's import): not the answer's fault
                session.unprovable[h] = f"the answer could not be proved: {v.reason[:1500]}"
            continue
        if v is None:
            why = "the staging crate has no port of the kernel"
        else:
            detail = v.reason or next((c.detail for c in v.checks if c.verdict != "equivalent"), "")
            why = f"the kernel is Tile IR {v.verdict.replace('_', ' ')} with the answer: {detail[:1500]}"
        for h in hashes:
            session.reject(h, why)


def _add_answer_probes(session: Session, crate: Path, staged: dict) -> dict[tuple[str, str], list[str]]:
    """The staging manifest's kernels given `answer_probes`: the specializations that make each constant
    condition of their answers take the outcome no specialization takes (conditions.py). A kernel whose
    answers hold a condition that cannot be probed leaves `staged`, its answers rejected. Returns the probes'
    labels per kernel."""
    import json
    path = crate / "manifest.json"
    manifest = json.loads(path.read_text())
    labels: dict[tuple[str, str], list[str]] = {}
    for m in manifest["modules"]:
        for k in m["kernels"]:
            key = next((key for key in staged if key[1] == k["name"]
                        and (crate / m["source"]).resolve() == Path(key[0]).resolve()), None)
            if key is None:
                continue
            hashes = staged[key][1]
            try:
                k["answer_probes"] = answer_probes(k, [session.used[h]["answer"]["rust"] for h in hashes])
            except Unprobable as e:
                for h in hashes:
                    session.reject(h, f"the answer cannot be proved: {e}")
                del staged[key]
                continue
            labels[key] = [p["label"] for p in k["answer_probes"]]
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return labels
