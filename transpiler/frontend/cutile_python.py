"""cuTile Python frontend: `@ct.kernel` functions of a source file -> typed model (frontend/common.py's
`Converter` reads cuTile Python).

Fail-closed: every construct it does not understand raises a TranspileError with a code and the
source position; a file's other kernels are still translated.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ..rules import RuleTable
from .common import FileResult, parse_source


def parse_cutile_source(source: str, display: str, rules: RuleTable, depth_limit: int, path: Path | None = None,
                        exact_positions: bool = True, llm_units: bool = False) -> FileResult:
    """The cuTile Python kernels of one source (a file that cannot define one is not parsed with LibCST)."""
    return parse_source(source, display, rules, depth_limit, path, exact_positions, llm_units=llm_units,
                        may_define_kernels=may_define_kernels)


_PLAIN_DECORATORS = frozenset({"property", "staticmethod", "classmethod"})


def may_define_kernels(tree: ast.Module, path: Path) -> bool:
    """False when no decorator in the file can name `cuda.tile.kernel`: each one's root name is a builtin
    decorator or is bound only by imports of modules outside cuda and outside the file's package
    (`@dataclass`, `@torch.compile`, `@functools.cache`). Such a file has no kernel to convert, no misplaced
    one to report, so LibCST's parse and the import resolution (most of a cold run over a large package,
    whose files are mostly host code) are skipped. Any other root (an alias of cuda.tile, a name from a
    sibling module, an assignment) keeps the file on the full path: the check never loses a kernel."""
    from .modules import module_file, package_root
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in node.decorator_list:
                e = d.func if isinstance(d, ast.Call) else d
                while isinstance(e, ast.Attribute):
                    e = e.value
                if not isinstance(e, ast.Name):
                    return True
                roots.add(e.id)
    if not roots:
        return False
    top = package_root(path)[1].split(".")[0]
    plain: dict[str, bool] = {}  # name -> bound only by imports of outside modules
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                outside = not node.level and mod.split(".")[0] not in ("cuda", top) \
                    and module_file(path, 0, mod) is None
            for a in node.names:
                if isinstance(node, ast.Import):
                    outside = a.name.split(".")[0] not in ("cuda", top)
                local = a.asname or a.name.split(".")[0]
                plain[local] = plain.get(local, True) and outside
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) \
                or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.arg)):
            name = node.id if isinstance(node, ast.Name) else node.arg if isinstance(node, ast.arg) else node.name
            plain[name] = False
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                plain[name] = False
    return any(not (plain.get(r, r in _PLAIN_DECORATORS)) for r in roots)
