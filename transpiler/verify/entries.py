"""What a check is and which entry of a kernel's manifest record it compiles: shared by verify/run.py and
the numeric check (interpret/) and the mutation campaigns (mutants.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .specs import predicates_hold


@dataclass
class Check:
    entry: str
    spec: dict
    dtype: str
    verdict: str  # equivalent | different | not_verified
    detail: str = ""
    probe: str | None = None  # the constant this coverage probe varies (None: a launch specialization)


def select_entry(entries: list[dict], spec: dict, dtype: str | None = None) -> dict:
    """The entry the C ABI launches for these constants and element types (None: the first that may take it;
    an entry of some dtypes only is selected by E's, the first of `f16+f32`)."""
    dtype = dtype.split("+")[0] if dtype else dtype
    for e in entries:
        if predicates_hold(e["predicates"], spec) and (dtype is None or dtype in e.get("dtypes", (dtype,))):
            return e
    raise LookupError(f"no variant for {spec}" + (f" and E = {dtype}" if dtype else ""))


def rust_rank(p: dict) -> int:
    """The rank of an array as the entry takes it: a Triton output's view (passes/views.py), else its own."""
    return len(p["view"]["extents"]) if p.get("view") else p["rank"]


def rust_static_strides(p: dict) -> list[int]:
    """The strides an array's entry is compiled for: 1 where it is one whatever the launch (a view's literal 1:
    a Triton output's view may have its unit stride on another axis than the last), else dynamic (-1)."""
    if p.get("view"):
        return [1 if s.strip() == "1" else -1 for s in p["view"]["strides"]]
    return [-1] * (p["rank"] - 1) + [1]


def entries_of(text: str) -> dict[str, tuple[int, int]]:
    """Entry name -> (body start, body end) offsets of every `#[cutile::entry()]` fn in a kernel.rs."""
    out = {}
    for m in re.finditer(r"#\[cutile::entry\([^)]*\)\]\n\s*pub (?:unsafe )?fn (\w+)", text):
        body_start = text.index(") {\n", m.end()) + len(") {\n")  # rustfmt ends the signature with `) {`
        out[m.group(1)] = (body_start, text.index("\n    }\n", body_start))
    return out
