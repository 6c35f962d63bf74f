"""The house's rule "imports go down" (DESIGN.md), checked on the source: no module imports a private name
(`_x`) from another module, the two frontends never import each other, and no import circle appears (modules
imported only under `if TYPE_CHECKING:` excepted: those imports never run)."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "transpiler"

# import circles that are known debt: none since the op registry moved below the handlers (passes/ops/registry.py)
# and the shared typing rules below inference (passes/type_rules.py). A circle fails the test.
KNOWN_CIRCLES: list[set[str]] = []


def module_names(root: Path = PKG) -> dict[str, Path]:
    out = {}
    for p in root.rglob("*.py"):
        parts = list(p.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _runtime_nodes(tree: ast.AST):
    """Every node but those under `if TYPE_CHECKING:`: an import there names a type for annotations and never
    runs (an op handler annotates the `Infer` that calls it), so it ties no module to another at import time."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))


def imports(root: Path = PKG) -> tuple[dict[str, set[str]], list[tuple[str, str, str]]]:
    """(module -> the package's modules it imports, anywhere in its body), and every (module, from, name) that
    imports a private name of another module."""
    mods = module_names(root)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    private = []
    for name, path in mods.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        if name == "":
            package = []
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[:len(package) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                elif (node.module or "").split(".")[0] == root.name:
                    target = node.module.partition(".")[2]
                else:
                    continue
                for alias in node.names:
                    full = f"{target}.{alias.name}".lstrip(".")
                    dest = full if full in mods else target
                    if dest in mods and dest != name:
                        edges[name].add(dest)
                    if dest == target and alias.name.startswith("_") and not alias.name.startswith("__"):
                        private.append((name, target, alias.name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    head, _, rest = alias.name.partition(".")
                    if head == root.name and rest in mods and rest != name:
                        edges[name].add(rest)
    return edges, private


def circles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(comp)
    return found


def test_no_private_name_crosses_a_module():
    _, private = imports()
    assert not private, "\n".join(f"{m} imports {n} from {t}" for m, t, n in private)


def test_the_frontends_do_not_import_each_other():
    edges, _ = imports()
    assert "frontend.cutile_python" not in edges["frontend.triton"]
    assert "frontend.triton" not in edges["frontend.cutile_python"]
    assert {"frontend.cutile_python", "frontend.triton"} <= edges["frontend.source"]  # the dispatch, above both


def test_no_new_import_circle():
    edges, _ = imports()
    grown = [sorted(c) for c in circles(edges) if not any(c <= known for known in KNOWN_CIRCLES)]
    assert not grown, f"import circles beyond the known ones: {grown}"


def test_the_import_check_can_fail(tmp_path):
    pkg = tmp_path / "transpiler"
    (pkg / "stage").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "stage" / "__init__.py").write_text("")
    (pkg / "stage" / "a.py").write_text("from .b import _helper\n")
    (pkg / "stage" / "b.py").write_text("def _helper(): pass\ndef f():\n    from transpiler.stage import a\n")
    (pkg / "low.py").write_text("import transpiler.stage.b\n")
    (pkg / "typed.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .stage import a\n"
                                  "else:\n    from .stage import b\n")
    edges, private = imports(pkg)
    assert private == [("stage.a", "stage.b", "_helper")]
    assert circles(edges) == [{"stage.a", "stage.b"}]
    assert edges["low"] == {"stage.b"}
    assert edges["typed"] == {"stage.b"}  # the TYPE_CHECKING arm never runs; its `else` does
