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

from .registry import HANDLERS, Handler, family, handler  # noqa: F401  (the package's names)

# the families register their handlers when imported
from . import control, creation, elementwise, fallback, linalg, memory, reductions, shape  # noqa: E402,F401
