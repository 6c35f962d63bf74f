"""The manifest is input, not truth: before a kernel is verified, its manifest record is checked against
what this tool makes of the source now.

`verify` reads which entries, specializations, dtypes and probes to check from manifest.json, and the C
symbol launches what the generated Rust says. A record narrowed by hand (`dtypes: ["f16"]` while the symbol
launches f32), or a source edited after generation (compared at the old record's probes), would otherwise be
verified at the wrong points and pass. So:

- the source must still hash to the record's `source_sha256`: otherwise the kernel is `not_verified`,
  "stale: regenerate";
- the record must equal the record this tool derives from the source (every field but the rendered views,
  which verification compares through the Rust itself): otherwise the kernel is `different`, naming the
  fields that differ, or `not_verified` ("stale") where another version of the tool wrote OUT.

Only kernels that are verified now are checked: a cached verdict was computed from the same record and
source (both are in its key), so it passed this check when it was made.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

# derived from the record or the Rust on disk, which verification reads itself
# symbol: named when the crate is rendered; answer_probes: added by the LLM fallback's proof to its staging
# copy (more checks, never fewer)
_NOT_COMPARED = ("views", "source_sha256", "symbol", "answer_probes")


def _sha(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _fresh_records(source: Path) -> dict[str, dict]:
    """The manifest records this tool makes of `source` now, by kernel name (translated kernels only);
    through the per-file cache of the main command (keyed by content, imports and tool digest)."""
    from .. import cache
    from ..frontend.common import run_deep
    from ..translate import process_file
    key = cache.file_key(source, source.as_posix())
    found = cache.load(key) if key else None
    if found is None:
        found = run_deep(process_file, source, source.as_posix(), None, False)
        if key and not any(r.status == "error" for r in found[0]):  # an internal error is not remembered
            cache.store(key, *found)
    return {r.name: r.manifest for r in found[0] if r.manifest and "traceback" not in r.manifest}


def _differing_fields(old: dict, new: dict) -> list[str]:
    keys = (set(old) | set(new)) - set(_NOT_COMPARED)

    def canon(v) -> str:  # JSON round trip: tuples read as lists
        return json.dumps(v, sort_keys=True)
    # an entry's name is given when the crate is rendered (two modules' kernels of one name are told apart);
    # verification compiles the entry of that name from the Rust on disk, so a wrong one cannot pass
    old = {**old, "entries": [{k: v for k, v in e.items() if k != "name"} for e in old.get("entries", [])]}
    new = {**new, "entries": [{k: v for k, v in e.items() if k != "name"} for e in new.get("entries", [])]}
    return sorted(k for k in keys if canon(old.get(k)) != canon(new.get(k)))


def manifest_problems(out: Path, manifest: dict, pending: list[tuple[dict, dict]]) -> dict[tuple[str, str], tuple[str, str]]:
    """(module, kernel name) -> (verdict, reason) for the pending kernels whose record cannot be trusted."""
    from ..emit.render import tool_digest
    problems: dict[tuple[str, str], tuple[str, str]] = {}
    same_tool = manifest.get("tool_digest") == tool_digest()
    by_module: dict[str, list[tuple[dict, dict]]] = {}
    for m, k in pending:
        by_module.setdefault(m["source"], []).append((m, k))
    for rel, kernels in by_module.items():
        source = (out / rel).resolve()
        sha = _sha(source)
        stale = [(m, k) for m, k in kernels if sha is None or sha != k.get("source_sha256", m.get("source_sha256"))]
        for m, k in stale:
            what = "cannot be read" if sha is None else "changed since OUT was generated"
            problems[m["module"], k["name"]] = ("not_verified", f"stale: the source {rel} {what}; regenerate OUT "
                                   "(cutile-transpile SRC -o OUT) before verifying")
        rest = [(m, k) for m, k in kernels if (m["module"], k["name"]) not in problems]
        if not rest:
            continue
        try:
            fresh = _fresh_records(source)
        except Exception as e:  # noqa: BLE001 - the source no longer translates: say so per kernel
            fresh, err = {}, f"{type(e).__name__}: {e}"
        else:
            err = "the source no longer gives a port of it"
        for m, k in rest:
            new = fresh.get(k["name"])
            if new is None and k.get("llm_fallback"):
                continue  # the rules alone give no port: the record is the LLM fallback's, proved by its answers
            if new is None:
                problems[m["module"], k["name"]] = ("not_verified", f"stale: {err}; regenerate OUT before verifying")
                continue
            fields = _differing_fields(k, new)
            if fields and not same_tool:
                problems[m["module"], k["name"]] = (
                    "not_verified", f"stale: OUT was generated by another version of cutile-transpile (tool digest "
                    f"{manifest.get('tool_digest')!r}, this one {tool_digest()!r}), which recorded field(s) "
                    + ", ".join(fields) + " differently; regenerate OUT before verifying")
            elif fields:
                problems[m["module"], k["name"]] = ("different", "manifest.json does not match the source: field(s) "
                                                    + ", ".join(fields) + " of this kernel's record differ from what "
                                                    "the source gives (a hand-edited manifest is not trusted; "
                                                    "regenerate OUT)")
    return problems
