"""Constants that select code: the ct.Constant parameters read by a constant condition (`if FLAG:`,
`x if CAUSAL else y`) of a typed kernel. Verification probes each such int constant at 0 as well as
at a nonzero value, so that both arms of the branch are compared (verify/specs.py)."""

from __future__ import annotations

from ..model.ir import If, Kernel, Name, Op
from .infer import _all_stmts, _sub, _walk_exprs


def condition_consts(kernel: Kernel) -> set[str]:
    consts = {p.name for p in kernel.params if p.kind == "const"}
    conds = [s.cond for s in _all_stmts(kernel.body) if isinstance(s, If) and s.const]
    conds += [e.args[0] for e in _walk_exprs(kernel.body) if isinstance(e, Op) and e.op == "ifexp" and e.attr("const")]
    return {n.id for c in conds for n in _sub(c) if isinstance(n, Name) and n.id in consts}
