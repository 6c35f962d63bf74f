"""The proof of new answers, before anything is written: the kernels that use them are ported to a staging
crate in a temporary directory, built, and verified against cuTile Python's Tile IR. An answer is accepted
only when its kernel is `equivalent`; otherwise it is rejected with the verdict (the rest of the run goes on). A
proof that cannot run (no toolchain) rejects nothing: the answer is not written, and is asked again next run.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

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
        verdicts = verify_output(crate, names, log=log)
    finally:
        session.proving = False
        shutil.rmtree(tmp, ignore_errors=True)
    for (path, name), (digest, hashes) in staged.items():
        v = next((v for v in verdicts if v.kernel == name
                  and (crate / v.source).resolve() == Path(path).resolve()), None)
        if v is not None and v.verdict == "equivalent":
            for h in hashes:
                session.accept(h, digest)
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
