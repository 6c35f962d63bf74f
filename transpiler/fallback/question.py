"""The question for one unit: its typed context, the chat messages, and the hash that names the answer.

Everything sent is here, and nothing else: the statement, the diagnostic the rules gave, the source of the
module functions it calls and the module constants it reads, the values it reads
with their Rust names and types, the entry's generics, the Rust generated before it, and the
cutile::core API excerpt for the ops it names. No path, no other source, no key.
"""

from __future__ import annotations

import hashlib
import json
import re

from ..model.ir import Assign, Kernel
from .units import original_diagnostic, with_hole

PROMPT_VERSION = 1

SYSTEM = """\
You complete one statement of a GPU kernel being ported from cuTile Python (`import cuda.tile as ct`) to \
cuTile Rust (the `cutile` crate 0.5.0, `use cutile::core::*` is in scope). A rule-based transpiler ported the \
rest; it could not port this statement. Write the Rust expression that computes the value the Python \
statement assigns, so that the kernel compiles to the same Tile IR as the Python kernel.

Answer with exactly one JSON object and nothing else (no markdown):
{"rust": "<a Rust expression, or a block `{ let a: T = ...; a }`>", "type": "<the Rust type of the value>"}

Rules for "rust": use only the values listed in scope (by their Rust names), the generics, literals and \
cutile::core functions; no `unsafe`, no items, no attributes, no comments, no string literals, no macros \
other than shape![...] and const_array![...], no paths other than cutile::core::NAME, mode enums \
(e.g. ftz::Disabled) and PRIMITIVE::CONST. Every `let` inside a block must state its type.
Rules for "type": a scalar dtype (f32, i32, ...) or `Tile<D, { [dims] }>` with D a dtype or an element-type \
generic of the entry and dims integer literals or const generics of the entry. Python's implicit promotions \
and broadcasts must be written explicitly (convert_tile, reshape, broadcast)."""


class NoContext(Exception):
    """The unit cannot be asked about (no specialization reaches it); the kernel keeps its diagnostic."""


def context(kernel: Kernel, unit: Assign, dtypes: tuple[str, ...]) -> dict:
    """The typed context of `unit`: the kernel cut at it, through every pass, lowered up to it (the first
    entry that reaches it). A diagnostic before the unit is raised as it is."""
    from ..emit.lower import Lowerer
    from ..translate import translate_kernel
    for variant in translate_kernel(with_hole(kernel, unit), dtypes):
        lw = Lowerer(variant)
        lw.entry()
        if lw.hole is not None:
            return lw.hole
    raise NoContext("no specialization reaches the statement")


def messages(kernel: Kernel, unit: Assign, ctx: dict) -> list[dict]:
    from .api import api_excerpt
    code = unit.value.attr("code")
    d = original_diagnostic(unit.value)
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", " ".join((code,) + tuple(unit.value.attr("helpers", ()))))
    scope = "\n".join(f"- `{s['rust']}` (Python `{s['python']}`): {s['type']}" for s in ctx["scope"]) or "- (none)"
    body = "\n".join(line.rstrip() for line in ctx["before"])
    helpers = "".join(f"Module function it calls (Python):\n```python\n{h}\n```\n\n"
                      for h in unit.value.attr("helpers", ()))
    consts = unit.value.attr("constants", ())
    user = (f"Python statement:\n    {' '.join(code.split())}\n\n"
            f"Why the rules rejected it: {d.message} [{d.code}]\n\n"
            f"Assigned name: `{unit.targets[0]}`\n\n"
            f"{helpers}"
            + (f"Module constants it reads: {', '.join(consts)}\n\n" if consts else "")
            + f"Values it reads, in scope:\n{scope}\n\n"
            f"Entry generics: {', '.join(ctx['generics']) or '(none)'}\n\n"
            f"Rust generated before the statement (entry body):\n```rust\n{body}\n```\n\n"
            f"cutile::core API (excerpt):\n```rust\n{api_excerpt(words)}\n```\n")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def request_hash(model: str, msgs: list[dict]) -> str:
    """Names the answer: the prompt's version, the model and the messages (a changed statement, context or
    model is a new question)."""
    doc = json.dumps({"prompt": PROMPT_VERSION, "model": model, "messages": msgs}, sort_keys=True)
    return hashlib.sha256(doc.encode("utf-8")).hexdigest()[:24]
