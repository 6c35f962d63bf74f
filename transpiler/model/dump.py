"""Text dump of the model (snapshot-tested): one line per statement, types after `:`."""

from __future__ import annotations

from .ir import Assign, Break, Continue, Eval, Expr, For, If, Kernel, Lit, Name, Op, TupleExpr, While


def expr_text(e: Expr) -> str:
    ty = f" : {e.ty}" if getattr(e, "ty", None) is not None else ""
    if isinstance(e, Lit):
        return f"{e.value!r}{ty}"
    if isinstance(e, Name):
        return f"%{e.id}{ty}"
    if isinstance(e, TupleExpr):
        return "(" + ", ".join(expr_text(i) for i in e.items) + ")"
    if isinstance(e, Op):
        args = ", ".join("None" if a is None else expr_text(a) for a in e.args)
        attrs = "".join(f" {k}={_attr(v)}" for k, v in e.attrs)
        return f"{e.op}({args}){attrs}{ty}"
    return repr(e)


def _attr(v: object) -> str:
    if isinstance(v, (Lit, Name, Op, TupleExpr)):
        return expr_text(v)
    return repr(v)


def dump_kernel(k: Kernel) -> str:
    lines = [f"kernel {k.entry_name} @ {k.pos.line}:{k.pos.col} ({k.frontend})"]
    if k.variant.predicates:
        lines.append(f"  variant when {' and '.join(k.variant.predicates)}")
    for p in k.params:
        extra = {"array": f" {p.dtype} rank {p.rank}", "scalar": f" {p.dtype}", "const": f" {p.const_type}"}.get(p.kind, "")
        lines.append(f"  param {p.name}: {p.kind}{extra}")
    for h, v in k.hints:
        lines.append(f"  hint {h} = {v}")
    for name, form, why in k.outputs:
        lines.append(f"  output {name}: {form} ({why})")
    _block(k.body, 1, lines)
    return "\n".join(lines) + "\n"


def _block(stmts, depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    for s in stmts:
        if isinstance(s, Assign):
            lines.append(f"{pad}{', '.join(s.targets)} = {expr_text(s.value)}")
        elif isinstance(s, Eval):
            lines.append(f"{pad}{expr_text(s.value)}")
        elif isinstance(s, For):
            lines.append(f"{pad}for %{s.var} in range({expr_text(s.start)}, {expr_text(s.stop)}, {expr_text(s.step)}):")
            _block(s.body, depth + 1, lines)
        elif isinstance(s, While):
            lines.append(f"{pad}loop once:" if s.once else f"{pad}while {expr_text(s.cond)}:")
            _block(s.body, depth + 1, lines)
        elif isinstance(s, Continue):
            lines.append(f"{pad}continue")
        elif isinstance(s, Break):
            lines.append(f"{pad}break")
        elif isinstance(s, If):
            kind = "if const" if s.const else "if"
            lines.append(f"{pad}{kind} {expr_text(s.cond)}:")
            _block(s.body, depth + 1, lines)
            if s.orelse:
                lines.append(f"{pad}else:")
                _block(s.orelse, depth + 1, lines)
