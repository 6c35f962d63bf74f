"""Sources are modules of their package: the package root, dotted names, and the files that
`from .x import y` / `from pkg.x import y` name. Shared by the frontend (helpers and constants from
sibling modules), the result cache (a file's key covers the modules it imports) and verification
(each module is imported by its dotted name, as in the user's environment)."""

from __future__ import annotations

import re
from pathlib import Path


def package_root(path: Path) -> tuple[Path, str]:
    """(folder to put on sys.path, dotted module name): walk up the folders holding an `__init__.py`."""
    path = path.resolve()
    parts = [path.stem] if path.name != "__init__.py" else []
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.append(folder.name)
        folder = folder.parent
    return folder, ".".join(reversed(parts))


def module_file(path: Path, level: int, module: str) -> Path | None:
    """The file of `from <level dots><module> import ...` written in `path` (None: outside the package,
    not found, or the file itself). Absolute imports resolve only inside the file's own top package."""
    path = path.resolve()
    parts = [p for p in module.split(".") if p]
    if level:
        base = path.parent
        for _ in range(level - 1):
            base = base.parent
    else:
        root, dotted = package_root(path)
        if parts and not (path.parent / "__init__.py").is_file() and _namespace_top(path, parts[0]) is not None:
            root = _namespace_top(path, parts[0])  # a module of a namespace folder inside its top package
        elif not parts or "." not in dotted and not (path.parent / "__init__.py").is_file():
            return None
        elif parts[0] != dotted.split(".")[0]:
            return None
        base = root
    if not parts:
        return None
    target = base.joinpath(*parts)
    for cand in (target.with_suffix(".py"), target / "__init__.py"):
        if cand.is_file() and cand.resolve() != path:
            return cand.resolve()
    return None


def _namespace_top(path: Path, top: str) -> Path | None:
    """The folder holding the top package `top` where the file lies in a namespace folder (one without
    `__init__.py`, PEP 420) below that regular package: `pkg/ops/fla/op.py` with `pkg/__init__.py` and
    `pkg/ops/__init__.py` but no `pkg/ops/fla/__init__.py` imports `pkg.ops.fla.op` as Python does. None
    where no ancestor is that top package."""
    for folder in path.parents:
        if folder.name == top and (folder / "__init__.py").is_file() and not (folder.parent / "__init__.py").is_file():
            return folder.parent
    return None


_FROM = re.compile(r"^\s*from\s+(\.*)([\w.]*)\s+import\b", re.M)


def imported_files(path: Path, source: str, limit: int = 64) -> list[Path]:
    """The package modules a source imports from, transitively (a cheap textual scan: the cache key
    must change when a sibling that provides a helper or constant changes)."""
    seen: dict[Path, None] = {}
    todo = [(path, source)]
    while todo and len(seen) < limit:
        p, text = todo.pop()
        for m in _FROM.finditer(text):
            f = module_file(p, len(m.group(1)), m.group(2))
            if f is not None and f not in seen and f != path.resolve():
                seen[f] = None
                try:
                    todo.append((f, f.read_text(encoding="utf-8", errors="replace")))
                except OSError:
                    continue
    return sorted(seen)
