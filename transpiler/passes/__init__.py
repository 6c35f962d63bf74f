"""The passes stage: a frontend `Kernel` -> one typed `Kernel` per structural variant, ready to emit.

`PASSES` is the order `run_passes` applies them in, as data: each pass's module and function, what it takes
(`kernel`: the frontend's kernel -> its variants; `variant`: one variant -> the same variant rewritten; `variants`:
all variants at once, for facts that hold across them) and what it relies on having run before it. The modules
are imported when the passes first run (LibCST-free, but `infer.py` and the op registry are large)."""

from __future__ import annotations

from importlib import import_module
from typing import NamedTuple


class Pass(NamedTuple):
    module: str  # under transpiler/passes (or transpiler/model for the validator)
    function: str
    scope: str  # kernel | variant | variants
    needs: str  # what must hold before it runs


PASSES: tuple[Pass, ...] = (
    Pass("passes.specialize", "specialize", "kernel",
         "a frontend kernel; infers types and splits constant branches that change them into variants"),
    Pass("passes.dot_acc", "fold_dot_add", "variant", "typed variants (`acc + dot(a, b)` into the dot, as Triton)"),
    Pass("passes.dce", "eliminate_dead_code", "variant", "typed variants, before any pass that counts uses"),
    Pass("passes.hoist", "hoist_once_loops", "variant",
         "dead code gone (invariants out of an early-returning helper's one-trip loop, as cuTile Python)"),
    Pass("passes.fma", "fuse_fma", "variant", "dead code gone: fusion needs a multiply's only use"),
    Pass("passes.views", "with_views", "variants", "final values of every variant (Triton accesses -> views)"),
    Pass("passes.loop_split", "split_loops", "variant",
         "everything else done: cuTile Python splits loops last, at an `if` comparing the loop variable"),
    Pass("passes.ownership", "analyze_outputs", "variant", "the final body: which outputs are checked partitions"),
    Pass("model.validate", "validate", "variant", "every pass done: every value typed, the model well formed"),
)


def run_passes(kernel, dtypes: tuple[str, ...]) -> list:
    """Every pass of PASSES over one kernel, in order: its variants."""
    variants = None
    for p in PASSES:
        fn = getattr(import_module(f"transpiler.{p.module}"), p.function)
        if p.scope == "kernel":
            variants = fn(kernel, dtypes)
        elif p.scope == "variants":
            variants = fn(variants)
        else:
            variants = [fn(v) for v in variants]
    return variants
