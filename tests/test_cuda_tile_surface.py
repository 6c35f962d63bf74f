"""Every public name of cuda.tile is accounted for (rules/cuda_tile_surface.toml): a rule translates it, the
frontend reads it, it is host-side API, or a use in a kernel is diagnosed, with the reason written down.
Optional keyword arguments of the translated functions that the rules do not take are listed the same way."""

from __future__ import annotations

import inspect
import os
import sys
import textwrap

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from transpiler.frontend.source import parse_file
from transpiler.rules import CUDA_TILE_VERSION, RULES_DIR, load

try:
    import cuda.tile as ct
except ImportError:  # the verify extra is missing: a failure in CI (.ci/run sets CI), a skip elsewhere
    if os.environ.get("CI"):
        raise
    pytest.skip("cuda.tile (the verify extra) is not installed", allow_module_level=True)
SURFACE = tomllib.loads((RULES_DIR / "cuda_tile_surface.toml").read_text())
PUBLIC = sorted(n for n in dir(ct) if not n.startswith("_"))
TABLE = load()


def _rule(name: str):
    q = f"cuda.tile.{name}"
    return TABLE.lookup(q) or TABLE.functional.get(q)


def test_every_public_name_is_listed_and_no_listed_name_is_gone():
    listed = set(SURFACE["names"])
    assert sorted(set(PUBLIC) - listed) == [], "new cuda.tile names: add them to rules/cuda_tile_surface.toml"
    assert sorted(listed - set(PUBLIC)) == [], "names cuda.tile no longer has"


def test_the_listed_release_is_the_installed_one():
    from importlib.metadata import version
    assert version("cuda-tile") == CUDA_TILE_VERSION


def test_a_name_cuda_tile_does_not_have_is_said_to_fail_in_cuda_tile_too(tmp_path):
    """TileGym 1.5.1's persistent layer norm calls `ct.sigmoid`, which no cuda.tile release defines: the
    diagnostic says cuTile Python cannot compile the kernel either (a reason a reviewer accepts), while a
    name cuda.tile has but no rule translates keeps the plain message."""
    src = tmp_path / "k.py"
    body = textwrap.dedent("""\
        import cuda.tile as ct


        @ct.kernel
        def gate(x, y, T: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(T,))
            ct.store(y, index=(ct.bid(0),), tile=ct.{}(t) * t)
    """)
    src.write_text(body.format("sigmoid"))
    fr = parse_file(src, "k.py")
    assert not fr.kernels and [(name, d.code) for name, _, d in fr.failures] == [("gate", "CT101")], fr.failures
    msg = fr.failures[0][2].message
    assert f"cuda.tile {CUDA_TILE_VERSION} has no `sigmoid`" in msg and "cannot compile this kernel either" in msg, msg
    assert "sigmoid" not in PUBLIC
    src.write_text(body.format("tanh"))  # cuda.tile's own (a rule translates it): no refusal
    assert [k.name for k in parse_file(src, "k.py").kernels] == ["gate"]
    src.write_text(body.format("cumsum"))  # cuda.tile's, scans need a shape here: refused, not called missing
    fr = parse_file(src, "k.py")
    assert all("has no `" not in d.message for _, _, d in fr.failures)


@pytest.mark.parametrize("name", PUBLIC)
def test_the_status_is_true(name):
    entry = SURFACE["names"].get(name, {})
    assert entry["status"] in ("rule", "frontend", "host", "unsupported"), entry
    if entry["status"] == "rule":
        assert _rule(name) is not None, f"{name} is marked `rule` but no rule has it"
    else:
        assert _rule(name) is None, f"{name} has a rule: mark it `rule`"
        assert entry.get("why"), f"{name}: say why"


UNSUPPORTED_CALLS = [n for n in PUBLIC if SURFACE["names"].get(n, {}).get("status") == "unsupported"
                     and callable(getattr(ct, n)) and not inspect.isclass(getattr(ct, n))]


def test_an_unsupported_call_in_a_kernel_is_diagnosed(tmp_path):
    """One kernel per unsupported function, calling it on a tile: each gets a diagnostic naming it."""
    src = ["import cuda.tile as ct", "C = ct.Constant[int]", ""]
    for n in UNSUPPORTED_CALLS:
        src += [f"@ct.kernel", f"def k_{n}(x, z, T: C):",
                f"    t = ct.load(x, index=(ct.bid(0),), shape=(T,))",
                f"    ct.store(z, index=(ct.bid(0),), tile=ct.{n}(t))", ""]
    p = tmp_path / "surface.py"
    p.write_text("\n".join(src))
    fr = parse_file(p, "surface.py")
    assert not fr.kernels, [k.name for k in fr.kernels]  # none is translated
    got = {name: diag for name, _, diag in fr.failures}
    assert sorted(got) == sorted(f"k_{n}" for n in UNSUPPORTED_CALLS)
    for n in UNSUPPORTED_CALLS:
        assert n in got[f"k_{n}"].message and got[f"k_{n}"].code.startswith("CT"), (n, got[f"k_{n}"])


def _untaken_keywords() -> set[str]:
    out = set()
    for n in PUBLIC:
        rule = TABLE.lookup(f"cuda.tile.{n}")
        if rule is None:
            continue
        try:
            sig = inspect.signature(getattr(ct, n))
        except (TypeError, ValueError):
            continue
        known = set(rule.params) | set(dict(rule.defaults))
        out |= {f"{n}.{p.name}" for p in sig.parameters.values()
                if p.default is not inspect.Parameter.empty and p.kind != p.POSITIONAL_ONLY and p.name not in known}
    return out


def test_every_untaken_keyword_is_listed_with_a_reason():
    listed = set(SURFACE["keywords"])
    assert sorted(_untaken_keywords() - listed) == [], "keywords the rules do not take: list them with a reason"
    assert sorted(listed - _untaken_keywords()) == [], "listed keywords that a rule takes now (or that are gone)"
    assert all(SURFACE["keywords"].values())


def test_an_untaken_keyword_is_diagnosed_with_the_rule_code(tmp_path):
    p = tmp_path / "kw.py"
    p.write_text(textwrap.dedent("""
        import cuda.tile as ct
        @ct.kernel
        def k(x, z, T: ct.Constant[int]):
            t = ct.load(x, index=(ct.bid(0),), shape=(T,))
            ct.store(z, index=(ct.bid(0),), tile=ct.maximum(t, 0.0, propagate_nan=True))
    """))
    (name, _, diag) = parse_file(p, "kw.py").failures[0]
    assert diag.code == "CTR-MAXIMUM" and "propagate_nan" in diag.message
