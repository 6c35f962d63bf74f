"""Op handlers by family: how inference types each model op, in a registry keyed by the op's name.

`Infer.expr` dispatches every `Op` through `HANDLERS` (an op without a handler is refused with its rule's
code, CT101 where it has none). A handler is a function `(infer, e) -> Expr`: it types the op's arguments
through `infer` (`infer.expr`, and the shared conversions `to_dtype`, `to_shape`, `coerce_pair`, ...) and
returns the typed expression, with cuTile Python's implicit steps made explicit. One module per family:

- `creation`: tiles made from nothing (zeros, ones, full, arange);
- `elementwise`: arithmetic, comparisons, math, bitwise ops, conversions, select;
- `reductions`: reductions along axes and scans;
- `memory`: array access, by tile (load, store, num_tiles) or by element through pointer tiles
  (gather, scatter, atomics);
- `shape`: reshapes, permutes, concatenation, extraction, broadcasts, shapes of values;
- `linalg`: matrix multiply-accumulate;
- `control`: block indices and conditional expressions;
- `fallback`: the LLM fallback's placeholders and accepted fragments.

A model op's meaning is fixed and language-neutral (a frontend lowers its language's semantics into it):
a new op is a rule in its frontend's table (`rules/`) and a handler in its family's module.
"""

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


# the families register their handlers when imported (they import passes/infer.py's helpers)
from . import control, creation, elementwise, fallback, linalg, memory, reductions, shape  # noqa: E402,F401
