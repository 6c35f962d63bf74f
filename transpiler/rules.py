"""Loads the declarative rule tables in `rules/` (package data)."""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

def data_dir(repo_name: str, package: str) -> Path:
    """The repository folder when running from a checkout, else the copy shipped in the package."""
    repo = Path(__file__).resolve().parent.parent / repo_name
    if repo.is_dir():
        return repo
    return Path(__file__).resolve().parent / package.split(".")[-1]


RULES_DIR = data_dir("rules", "transpiler.rules_data")


@dataclass(frozen=True)
class Rule:
    id: str
    op: str
    family: str
    source: tuple[str, ...]
    params: tuple[str, ...]
    defaults: tuple[tuple[str, str], ...] = ()
    rust: str = ""

    def default(self, key: str) -> str | None:
        return dict(self.defaults).get(key)


@dataclass(frozen=True)
class RuleTable:
    name: str
    rules: tuple[Rule, ...]
    digest: str
    by_source: dict = field(default_factory=dict, compare=False, hash=False)
    by_op: dict = field(default_factory=dict, compare=False, hash=False)
    # functional forms of operators: qualified name -> {"operator", "keywords", "arity"}
    functional: dict = field(default_factory=dict, compare=False, hash=False)

    def lookup(self, source: str) -> Rule | None:
        return self.by_source.get(source)

    def for_op(self, op: str) -> Rule:
        return self.by_op[op]


@functools.lru_cache(maxsize=None)
def load(name: str = "cutile_python") -> RuleTable:
    path = RULES_DIR / f"{name}.toml"
    raw = path.read_bytes()
    data = tomllib.loads(raw.decode())
    rules = []
    # test-only: rules left out (the LLM fallback's tests keep constructs the rules translate refused)
    dropped = set(filter(None, os.environ.get("CUTILE_TRANSPILE_TEST_WITHOUT_RULES", "").split(",")))
    for r in data["rule"]:
        if r["id"] in dropped:
            continue
        rules.append(Rule(id=r["id"], op=r["op"], family=r["family"], source=tuple(r.get("source", [])),
                          params=tuple(r.get("params", [])),
                          defaults=tuple(sorted(r.get("defaults", {}).items())), rust=r.get("rust", "")))
    table = RuleTable(name, tuple(rules), hashlib.sha256(raw + repr(sorted(dropped)).encode()).hexdigest())
    for fn, spec in data.get("functional", {}).items():
        table.functional[fn] = {"operator": spec["operator"], "keywords": tuple(spec.get("keywords", ())),
                                "arity": int(spec.get("arity", 2))}
    for rule in rules:
        for s in rule.source:
            table.by_source[s] = rule
        table.by_op[rule.op] = rule
    return table


@dataclass(frozen=True)
class Promotion:
    """A source language's binary dtype promotion (`rules/promotion_<language>.toml`)."""
    name: str
    result: dict  # (dtype, dtype) -> the dtype both operands are converted to
    generic_exact: frozenset  # concrete floats an element-type generic (E) promotes to
    digest: str


@functools.lru_cache(maxsize=None)
def load_promotion(language: str = "cutile_python") -> Promotion:
    path = RULES_DIR / f"promotion_{language}.toml"
    raw = path.read_bytes()
    data = tomllib.loads(raw.decode())
    dtypes = data["dtypes"]
    if set(data["result"]) != set(dtypes):
        raise ValueError(f"{path.name}: the rows of `result` are not the `dtypes`")
    result = {}
    for a in dtypes:
        row = data["result"][a]
        if len(row) != len(dtypes):
            raise ValueError(f"{path.name}: result.{a} has {len(row)} entries, `dtypes` {len(dtypes)}")
        result.update(((a, b), r) for b, r in zip(dtypes, row))
    return Promotion(language, result, frozenset(data["generic"]["exact"]), hashlib.sha256(raw).hexdigest())


# the cuTile Python release rules/cuda_tile_surface.toml lists (tests/test_cuda_tile_surface.py checks it)
CUDA_TILE_VERSION = "1.7.0"


@functools.lru_cache(maxsize=None)
def cuda_tile_names() -> frozenset[str]:
    """Every public name of cuda.tile CUDA_TILE_VERSION (rules/cuda_tile_surface.toml)."""
    with open(RULES_DIR / "cuda_tile_surface.toml", "rb") as f:
        return frozenset(tomllib.load(f)["names"])


def cuda_tile_has(dotted: str) -> bool:
    """`cuda.tile.NAME` (or a dotted name under it: `cuda.tile.PaddingMode.ZERO`) is cuda.tile's."""
    return dotted.removeprefix("cuda.tile.").split(".")[0] in cuda_tile_names()


@dataclass(frozen=True)
class TritonDtypeQueries:
    """Triton's dtype queries (rules/triton_dtypes.toml): each predicate method's accepted dtypes, each integer
    attribute's value per dtype."""
    predicates: dict
    widths: dict


@functools.lru_cache(maxsize=None)
def triton_dtype_queries() -> TritonDtypeQueries:
    with open(RULES_DIR / "triton_dtypes.toml", "rb") as f:
        data = tomllib.load(f)
    return TritonDtypeQueries({k: tuple(v) for k, v in data["predicates"].items()},
                              {k: dict(v) for k, v in data["widths"].items()})
