"""The Markdown report (`--report PATH`): a summary table, unsupported constructs, then every kernel."""

from __future__ import annotations

from .emit.render import render
from .pipeline import RunResult
from .verify.specs import coverage_text


def markdown_report(result: RunResult, verified: bool) -> str:
    kernels = []
    unsupported = []
    for k in result.kernels:
        m = k.manifest or {}
        kernels.append({
            "name": k.name, "source": k.source, "line": k.line, "status": k.status, "verify": k.verify,
            "verified_at": coverage_text(k.verified_at) if k.verify == "equivalent" and k.verified_at else "",
            "entries": m.get("entries", []), "rules": m.get("rules", []),
            "diagnostics": [d.as_json() for d in k.diagnostics],
        })
        if k.status not in ("translated", "fallback"):
            unsupported.extend(d.as_json() for d in k.diagnostics if d.severity == "error")
    for d in result.file_diagnostics:
        unsupported.append(d.as_json())
    for d in unsupported:
        d["message"] = d["message"].replace("|", "\\|").replace("\n", " ")
    for k in kernels:
        for d in k["diagnostics"]:
            d["message"] = d["message"].replace("\n", " ")[:2000]
    return render("report.md.j2", summary=result.summary(), kernels=kernels, unsupported=unsupported,
                  verified=verified)
