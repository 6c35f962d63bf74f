"""The registry of op handlers: `handler` registers a family's functions under the model ops they type, `HANDLERS`
is what `Infer.expr` dispatches on. Below the families, which register into it when `ops` imports them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from ...model.ir import Expr, Op
    from ..infer import Infer

Handler = Callable[["Infer", "Op"], "Expr"]

HANDLERS: dict[str, Handler] = {}


def handler(*ops: str) -> Callable[[Handler], Handler]:
    """Registers the decorated function as the handler of each model op named."""
    def register(fn: Handler) -> Handler:
        for op in ops:
            if op in HANDLERS:
                raise ValueError(f"two handlers for the model op `{op}`")
            HANDLERS[op] = fn
        return fn
    return register


def family(op: str) -> str | None:
    """The family (module name) whose handler types `op`, None if no handler does."""
    fn = HANDLERS.get(op)
    return None if fn is None else fn.__module__.rsplit(".", 1)[-1]
