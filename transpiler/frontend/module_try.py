"""Module-level `try` statements of version-compat code: which branch runs under the Triton the port targets.

Libraries bind a name one way where their Triton has it and another way where it does not:

    try:
        uint_to_uniform_float = tl.uint_to_uniform_float
    except AttributeError:
        @triton.jit
        def uint_to_uniform_float(x): ...

    try:
        from triton.language.extra.cuda.libdevice import tanh
    except ImportError:
        from triton.language.math import tanh

The port targets Triton 3.6, whose modules and names are listed in rules/triton_modules_3.6.txt and
rules/triton_dir_3.6.txt, so the try body's statements are run in thought, one by one: an import of a Triton 3.6
module or of a name it has, a read of an attribute it has, a definition or a literal succeeds; an import of a
Triton module or name 3.6 lacks raises ImportError, a read of an attribute a listed module lacks raises
AttributeError (`try_outcome`). Python then runs the statements before the raising one and the first handler
that catches that error (`tried_statements`). Anything else (a call of the library's own code, a module that is
no Triton module, an attribute of a submodule `import triton` does not load) is not decided: the caller keeps
its rule for such a `try` (module_config.taken_statements takes its body)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from .blocks import block_statements
from .common import name_text

# the exceptions a handler may name that catch each error the evaluation predicts (Python's hierarchy)
_CATCHES = {
    "AttributeError": {"AttributeError", "Exception", "BaseException"},
    "ImportError": {"ImportError", "Exception", "BaseException"},
    "ModuleNotFoundError": {"ModuleNotFoundError", "ImportError", "Exception", "BaseException"},
}


@dataclass(frozen=True)
class TritonModules:
    """Triton 3.6's modules (`loaded`: those `import triton` binds as attributes of their parents) and the
    attributes of the modules whose every name is listed."""
    modules: frozenset[str]
    loaded: frozenset[str]
    names: frozenset[str]
    listed: frozenset[str]  # modules whose every attribute is in `names`

    def attribute(self, module: str, name: str) -> bool | None:
        """Does `module.name` exist (as an attribute or a submodule) in Triton 3.6? None: not known here."""
        full = f"{module}.{name}"
        if full in self.modules or full in self.names:
            return True
        return False if module in self.listed else None


@functools.lru_cache(maxsize=1)
def triton_modules() -> TritonModules:
    from ..rules import RULES_DIR
    modules, loaded, names, listed = set(), set(), set(), set()
    for line in (RULES_DIR / "triton_modules_3.6.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        words = line.split()
        if words[0] == "module":
            if words[-1] == "names":
                listed.add(words[1])
            else:
                modules.add(words[1])
                if "loaded" in words[2:]:
                    loaded.add(words[1])
        else:
            names.add(line)
    for line in (RULES_DIR / "triton_dir_3.6.txt").read_text().splitlines():  # `triton` and `triton.language`
        if line.strip() and not line.startswith("#"):
            names.add(line.strip())
    listed |= {"triton", "triton.language"}
    return TritonModules(frozenset(modules), frozenset(loaded), frozenset(names), frozenset(listed))


@dataclass(frozen=True)
class Outcome:
    """What a try body does under Triton 3.6: `raises` None (it runs to its end), or the error the statement at
    `index` raises; `decided` False where the evaluation cannot tell."""
    decided: bool
    raises: str | None = None
    index: int = 0


UNKNOWN = Outcome(False)


def try_outcome(body: tuple, dotted: Callable[[cst.BaseExpression], str | None]) -> Outcome:
    """The outcome of a try body's statements under Triton 3.6 (UNKNOWN where a statement is not decided before
    one raises). `dotted` resolves a name through the module's imports."""
    for i, stmt in enumerate(body):
        error = _statement_error(stmt, dotted)
        if error is _UNDECIDED:
            return UNKNOWN
        if error is not None:
            return Outcome(True, error, i)
    return Outcome(True)


_UNDECIDED = object()


def _statement_error(stmt: cst.CSTNode, dotted) -> object:
    """None (the statement runs), the name of the error it raises, or _UNDECIDED."""
    if isinstance(stmt, cst.FunctionDef):
        return None  # defining a function runs nothing of it (its decorators: a jit of the Triton at hand)
    if not isinstance(stmt, cst.SimpleStatementLine):
        return _UNDECIDED
    for small in stmt.body:
        error = _small_error(small, dotted)
        if error is not None:
            return error
    return None


def _small_error(small: cst.BaseSmallStatement, dotted) -> object:
    tm = triton_modules()
    if isinstance(small, cst.Pass):
        return None
    if isinstance(small, cst.Import):
        for a in small.names:
            name = name_text(a.name)
            if not _is_triton(name):
                return _UNDECIDED
            if name not in tm.modules:
                return "ModuleNotFoundError"
        return None
    if isinstance(small, cst.ImportFrom):
        if small.relative or small.module is None or isinstance(small.names, cst.ImportStar):
            return _UNDECIDED
        module = name_text(small.module)
        if not _is_triton(module):
            return _UNDECIDED
        if module not in tm.modules:
            return "ModuleNotFoundError"
        for a in small.names:
            has = tm.attribute(module, name_text(a.name))
            if has is None:
                return _UNDECIDED
            if not has:
                return "ImportError"
        return None
    if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        if not all(isinstance(t, cst.Name) for t in targets):
            return _UNDECIDED
        return _read_error(small.value, dotted)
    if isinstance(small, cst.Expr):
        return _read_error(small.value, dotted)
    return _UNDECIDED


def _read_error(value: cst.BaseExpression, dotted) -> object:
    """The error reading `value` raises: a literal reads nothing; `tl.x.y` reads each attribute in turn."""
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
        return None
    if isinstance(value, cst.Name) and value.value in ("None", "True", "False"):
        return None
    if not isinstance(value, cst.Attribute):
        return _UNDECIDED
    chain: list[str] = []
    node: cst.BaseExpression = value
    while isinstance(node, cst.Attribute):
        chain.append(node.attr.value)
        node = node.value
    root = dotted(node) if isinstance(node, cst.Name) else None
    tm = triton_modules()
    if root is None or not _is_triton(root) or root not in tm.modules:
        return _UNDECIDED
    module = root
    attrs = list(reversed(chain))
    for i, attr in enumerate(attrs):
        full = f"{module}.{attr}"
        if full in tm.modules:
            if full not in tm.loaded:
                return _UNDECIDED  # bound only once something imports it: the import order decides
            module = full
            continue
        has = tm.attribute(module, attr)
        if has is None:
            return _UNDECIDED
        if not has:
            return "AttributeError"
        return None if i == len(attrs) - 1 else _UNDECIDED  # (an attribute of a function: not modelled)
    return None


def tried_statements(stmt: cst.Try, dotted: Callable[[cst.BaseExpression], str | None]) -> tuple | None:
    """The statements a module-level `try` runs under Triton 3.6, in order (its `finally` included), or None
    where that is not decided (see try_outcome). A raise no handler catches makes the module fail to import:
    not decided either."""
    body = tuple(block_statements(stmt.body))
    out = try_outcome(body, dotted)
    if not out.decided:
        return None
    tail = tuple(block_statements(stmt.finalbody.body)) if stmt.finalbody is not None else ()
    if out.raises is None:
        rest = tuple(block_statements(stmt.orelse.body)) if stmt.orelse is not None else ()
        return body + rest + tail
    for handler in stmt.handlers:
        if _catches(handler, out.raises, dotted):
            return body[:out.index] + tuple(block_statements(handler.body)) + tail
    return None


def _catches(handler: cst.ExceptHandler, error: str, dotted) -> bool:
    if handler.type is None:
        return True
    kinds = handler.type.elements if isinstance(handler.type, cst.Tuple) else [cst.Element(handler.type)]
    names = {dotted(el.value) if isinstance(el.value, (cst.Name, cst.Attribute)) else None for el in kinds}
    names = {n[len("builtins."):] if n and n.startswith("builtins.") else n for n in names}
    return bool(names & _CATCHES[error])


def bound_values(stmts, name: str) -> list[cst.CSTNode]:
    """Every statement of `stmts` (in every branch of nested `if` / `try`) that binds `name`: the assignment's
    value, or the import alias."""
    found: list[cst.CSTNode] = []
    for st in stmts:
        if isinstance(st, cst.If):
            found += bound_values(block_statements(st.body), name)
            if st.orelse is not None:
                found += bound_values((st.orelse,) if isinstance(st.orelse, cst.If) else block_statements(st.orelse.body), name)
        elif isinstance(st, cst.Try):
            for part in (st, *st.handlers, st.orelse, st.finalbody):
                if part is not None:
                    found += bound_values(block_statements(part.body), name)
        elif isinstance(st, (cst.FunctionDef, cst.ClassDef)):
            if st.name.value == name:
                found.append(st)
        elif isinstance(st, cst.SimpleStatementLine):
            for small in st.body:
                if isinstance(small, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                                         for t in small.targets):
                    found.append(small.value)
                elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    for a in small.names:
                        local = a.asname.name.value if a.asname else name_text(a.name).split(".")[0]
                        if local == name:
                            found.append(small)
    return found


def _is_triton(name: str) -> bool:
    return name == "triton" or name.startswith("triton.")

