"""Names in the generated crate and package: module (op) names, entry names, C symbols.

Pure functions of the modules' source paths (relative to OUT) and kernel names, so the result never
depends on how SRC was spelled or on the order files were found. Every candidate is checked again until
it is unique and not reserved.
"""

from __future__ import annotations

import functools
import keyword
import re

from ..emit.lower import RUST_KEYWORDS

# Names no source module may take whatever the templates say: Rust and Python keywords, Rust's own crates
# and Python's module names. The rest is read from the templates themselves (`reserved_ops`), so a name a
# template starts to define is reserved without a list to keep in step.
LANGUAGE_OPS = frozenset({
    *RUST_KEYWORDS, *keyword.kwlist, *getattr(keyword, "softkwlist", []),
    "lib", "main", "std", "core", "alloc", "proc_macro", "test", "__init__", "__main__", "os",
})
# The per-kernel names the templates derive (`SPEC_<kernel>` in the Python module, `cutilepk_<...>` from the
# C symbol): never reserved as such, they are assigned here with the kernels' own names
_PER_KERNEL = re.compile(r"\{\{.*?\}\}")
_NO_MANGLE = re.compile(r"#\[(?:unsafe\()?no_mangle\)?\]\s*(?:pub\s+)?(?:unsafe\s+)?(?:extern\s+\"C\"\s+)?"
                        r"(?:fn|static(?:\s+mut)?)\s+(\{\{.*?\}\}|\w+)")


def _template(name: str) -> str:
    from ..emit.render import TEMPLATES_DIR
    return (TEMPLATES_DIR / name).read_text()


@functools.lru_cache(maxsize=None)
def exported_symbols() -> frozenset[str]:
    """The C symbols the crate's templates and runtime files export under fixed names (`#[no_mangle]` items of
    `abi.rs`, `ffi.rs`, `lib.rs`): a kernel's symbol and its packed form must take none of them."""
    from ..emit.render import TEMPLATES_DIR
    from ..runtime import RUNTIME_DIR
    out = set()
    for p in sorted(TEMPLATES_DIR.glob("*.rs.j2")) + sorted(RUNTIME_DIR.glob("*.rs")):
        out |= {n for n in _NO_MANGLE.findall(p.read_text()) if not _PER_KERNEL.search(n)}
    return frozenset(out)


def _module_level_names(python: str) -> set[str]:
    """The names a Python module binds at its top level (assignments, imports, defs, classes)."""
    import ast
    out = set()
    for node in ast.parse(python).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return out


@functools.lru_cache(maxsize=None)
def ops_module_names() -> frozenset[str]:
    """What a generated `cutile_ports/<op>.py` binds besides its kernels' own names (the runtime's alias):
    rendered without kernels and read back."""
    from ..emit.render import render
    return frozenset(_module_level_names(render("python/ops.py.j2", source="", kernels=[])))


@functools.lru_cache(maxsize=None)
def reserved_ops() -> frozenset[str]:
    """Names a source module (op) may not take: the language's (`LANGUAGE_OPS`), the package's own modules
    (`templates/python/*`, `transpiler/runtime/*`), the names `cutile_ports/__init__.py` binds, the modules
    `lib.rs` declares under fixed names and the crates `Cargo.toml` depends on (in scope in every module of the
    crate)."""
    from ..emit.render import TEMPLATES_DIR, render
    from ..runtime import RUNTIME_DIR
    package_files = {p.name.split(".")[0] for p in (TEMPLATES_DIR / "python").glob("*.j2")} - {"ops"}
    # and those copied verbatim (transpiler/runtime: `_runtime.py`, `_fastlaunch.c`)
    package_files |= {p.stem for p in RUNTIME_DIR.iterdir() if p.suffix in (".py", ".c")} - {"__init__"}
    init_names = _module_level_names(render("python/__init__.py.j2", crate="c", modules=[]))
    lib_mods = set(re.findall(r"\bmod\s+(\w+)", render("lib.rs.j2", modules=[])))
    cargo = _template("Cargo.toml.j2")
    deps = cargo.split("[dependencies]", 1)[1].split("\n[", 1)[0] if "[dependencies]" in cargo else ""
    crates = set(re.findall(r"^([A-Za-z0-9_-]+)\s*=", deps, re.M))
    return frozenset(LANGUAGE_OPS | package_files | init_names | lib_mods | {c.replace("-", "_") for c in crates})


@functools.lru_cache(maxsize=None)
def kernel_module_names() -> frozenset[str]:
    """Names an entry may not take in its `#[cutile::module]`: the named steps a module may define and what
    `ffi.rs` reads from the module by name (`ports::<name>`, items cuTile Rust's macro defines)."""
    from ..emit.steps import step_names
    return step_names() | frozenset(re.findall(r"\bports::(\w+)", _template("ffi.rs.j2")))


def _ident(text: str) -> str:
    s = re.sub(r"[^a-z0-9_]", "_", text.lower())
    return s if s and not s[0].isdigit() else f"m_{s}"


def op_names(rels: list[str], fixed: dict[str, str] | None = None) -> dict[str, str]:
    """`rel path -> op`: the file's stem; on a clash the parent folders are prefixed one by one, then a
    number. `fixed` (rel -> op) are names that must stay (modules carried over verbatim)."""
    fixed = dict(fixed or {})
    taken = set(fixed.values())
    out = dict(fixed)
    for rel in sorted(r for r in rels if r not in fixed):
        parts = [p for p in rel.split("/")[:-1] if p not in ("", ".", "..")]
        stem = rel.split("/")[-1]
        stem = stem[:-3] if stem.endswith(".py") else stem
        candidates = [_ident(stem)]
        for parent in reversed(parts):
            candidates.append(f"{_ident(parent)}_{candidates[-1]}")
        name = next((c for c in candidates if c not in taken and c not in reserved_ops()), None)
        n = 2
        while name is None:
            c = f"{candidates[0]}_{n}"
            name = c if c not in taken and c not in reserved_ops() else None
            n += 1
        taken.add(name)
        out[rel] = name
    return out


def _reserved_launchers() -> frozenset[str]:
    from ..rules import RULES_DIR
    lines = (RULES_DIR / "cutile_launcher_names.txt").read_text().splitlines()
    return frozenset(l.strip() for l in lines if l.strip() and not l.startswith("#"))


RESERVED_LAUNCHERS = _reserved_launchers()


def launcher_name(entry: str) -> str:
    """The launcher struct cuTile Rust's module macro derives from an entry name (UpperCamel case)."""
    words = re.split(r"_+|(?<=[a-z0-9])(?=[A-Z])", entry)
    return "".join(w[:1].upper() + w[1:].lower() for w in words if w)


def entry_name(base: str, op: str, generics: list[str], taken: set[str], launchers: set[str]) -> str:
    """A crate-unique entry name whose launcher name clashes with no import, generic or other launcher."""
    blocked = RESERVED_LAUNCHERS | set(generics) | launchers
    in_module = kernel_module_names()
    name = unique([base, f"{base}_{op}", f"{base}_kernel", f"{base}_{op}_kernel"], taken,
                  ok=lambda c: launcher_name(c) not in blocked and c not in in_module)
    launchers.add(launcher_name(name))
    return name


def symbol_name(kernel: str, op: str, taken: set[str]) -> str:
    """The kernel's crate-unique C symbol (`cutile_<kernel>`, else `cutile_<op>_<kernel>`, then numbered)
    such that neither it nor its packed form is a symbol the templates export; both go into `taken`."""
    from ..emit.ffi import packed_symbol
    fixed = exported_symbols()
    name = unique([f"cutile_{kernel}", f"cutile_{op}_{kernel}"], taken,
                  ok=lambda c: not {c, packed_symbol(c)} & (fixed | taken))
    taken.add(packed_symbol(name))
    return name


def python_names(kernels: list[dict]) -> list[tuple[str, str]]:
    """(wrapper function, spec) names of each kernel of one generated Python module, in order. A function
    keeps the kernel's name unless the module binds that name itself or Python reserves it (`__x__`): then
    `<kernel>_port`. A spec is `SPEC_<kernel>` unless a function, another spec or one of the kernel's own
    parameters (which would shadow it in the wrapper) has that name: then numbered."""
    fixed = ops_module_names()

    def own(name: str) -> bool:
        return name not in fixed and not (name.startswith("__") and name.endswith("__"))
    taken = set(fixed) | {k["name"] for k in kernels if own(k["name"])}  # kept names first: they never move
    funcs = [k["name"] if own(k["name"]) else unique([f"{k['name']}_port"], taken) for k in kernels]
    specs = []
    for k in kernels:
        params = {p["name"] for p in k.get("params", ())}
        specs.append(unique([f"SPEC_{k['name']}"], taken, ok=lambda c: c not in params))
    return list(zip(funcs, specs))


def unique(candidates: list[str], taken: set[str], ok=lambda c: True) -> str:
    """The first candidate not taken (and `ok`); else the last one with `_2`, `_3`, ... appended. It is
    added to `taken`."""
    tries = iter(candidates)
    n = 1
    while True:
        c = next(tries, None)
        if c is None:
            n += 1
            c = f"{candidates[-1]}_{n}"
        if c not in taken and ok(c):
            taken.add(c)
            return c
