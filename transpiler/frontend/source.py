"""Which frontend reads a source file: a module that imports triton is read by the Triton frontend (and, where it
also imports cuda.tile, by both), any other by the cuTile Python frontend."""

from __future__ import annotations

import re
from pathlib import Path

from ..diagnostics import Diagnostic
from ..model.ir import Pos
from ..rules import RuleTable, load
from .common import FileResult, SourceDecodeError, kernel_depth_limit, read_source, run_deep
from .cutile_python import parse_cutile_source


def parse_file(path: Path, display: str, rules: RuleTable | None = None, exact_positions: bool = True,
               llm_units: bool = False) -> FileResult:
    """Read, parse and convert one source file. Never raises on bad input: a file that cannot be read,
    decoded or parsed gets a file-level diagnostic; a kernel that cannot be converted gets a failure.
    Without `exact_positions`, model nodes get deferred stand-ins (`Pos.deferred`) except kernels' own
    `def` lines: computing every position was a third of a cold run, and only diagnostics show them.
    With `llm_units`, a cuTile Python assignment the rules reject becomes a placeholder (transpiler/fallback)."""
    rules = rules or load()
    try:
        source = read_source(path)
    except OSError as e:
        return FileResult(display, [], [], [Diagnostic("error", "CT002", f"cannot read file: {e}", Pos(display, 1, 1))])
    except SourceDecodeError as e:
        return FileResult(display, [], [], [Diagnostic("error", "CT002", f"cannot decode file: {e}",
                                                       Pos(display, e.line, e.col))])
    depth_limit = kernel_depth_limit()
    try:
        if _uses_triton(source):
            return run_deep(_triton_module, source, display, depth_limit, Path(path), exact_positions,
                            _uses_cutile(source), rules)
        return run_deep(parse_cutile_source, source, display, rules, depth_limit, Path(path), exact_positions,
                        llm_units=llm_units)
    except Exception as e:  # noqa: BLE001 - a bug in the frontend must not stop the other files
        return FileResult(display, [], [], [Diagnostic("error", "CT900", f"internal error (a bug in "
                                                       f"cutile-transpile's frontend): {type(e).__name__}: "
                                                       f"{_safe_str(e)}", Pos(display, 1, 1))])


def _triton_module(source: str, display: str, depth_limit: int, path: Path, exact_positions: bool,
                   also_cutile: bool, cutile_rules: RuleTable) -> FileResult:
    """A module that imports triton: its `@triton.jit` kernels, and where it imports cuda.tile too (kernels in both
    languages), its cuTile Python kernels as well: each frontend reads its own."""
    from .triton import parse_triton_source  # imported on the first Triton file: 0.2 s a process otherwise
    result = parse_triton_source(source, display, depth_limit, path, exact_positions)
    if also_cutile:
        other = parse_cutile_source(source, display, cutile_rules, depth_limit, path, exact_positions)
        result = FileResult(display, result.kernels + other.kernels, result.failures + other.failures,
                            result.diagnostics + [d for d in other.diagnostics if d not in result.diagnostics],
                            {**other.also, **result.also})
    return result


def _safe_str(e: BaseException) -> str:
    try:
        return str(e)[:500]
    except Exception:  # noqa: BLE001 - str() of some exceptions recurses through deep nodes
        return "<no message>"


_TRITON_IMPORT = re.compile(r"^[ \t]*(?:import[ \t]+triton\b|from[ \t]+triton\b)", re.M)


_CUTILE_IMPORT = re.compile(r"^[ \t]*(?:import[ \t]+cuda\.tile\b|from[ \t]+cuda\.tile\b|from[ \t]+cuda[ \t]+import[ \t]+tile\b)", re.M)


def _uses_triton(source: str) -> bool:
    """A module that imports triton is read by the Triton frontend (kernels are `@triton.jit` functions)."""
    return "triton" in source and _TRITON_IMPORT.search(source) is not None


def _uses_cutile(source: str) -> bool:
    return _CUTILE_IMPORT.search(source) is not None
