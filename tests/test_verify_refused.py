"""A specialization no entry of the port takes (an entry's Require predicate fails there: a static assertion,
two tile dimensions unified) is not compared, since the C symbol refuses the launch; verify checks that cuTile
Python refuses to compile the kernel there too (verify/run.refused_specialization, docs/verification.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import requires_toolchain

# halves: `ct.static_assert` makes the port's one entry take `TILE // SPLITS == TILE` (SPLITS = 1);
# pairs: `(A,) + (B,)` unifies A and B (the entry takes `A == B`). The second launch of each is refused.
SOURCE = '''import cuda.tile as ct

C = ct.Constant[int]


@ct.kernel
def halves(x, y, TILE: C, SPLITS: C):
    ct.static_assert(TILE // SPLITS == TILE, "one split only")
    bid = ct.bid(0)
    ct.store(y, index=(bid,), tile=ct.load(x, index=(bid,), shape=(TILE,)) * 2)


@ct.kernel
def pairs(x, y, A: C, B: C):
    bid = ct.bid(0)
    ct.store(y, index=(bid,), tile=ct.load(x, index=(bid,), shape=(A,)) + ct.load(y, index=(bid,), shape=(B,)))


def host(x, y, s):
    ct.launch(s, (1, 1, 1), halves, (x, y, 64, 1))
    ct.launch(s, (1, 1, 1), halves, (x, y, 64, 2))
    ct.launch(s, (1, 1, 1), pairs, (x, y, 32, 32))
    ct.launch(s, (1, 1, 1), pairs, (x, y, 32, 64))
'''
REFUSED = {"halves": {"SPLITS": 2, "TILE": 64}, "pairs": {"A": 32, "B": 64}}


def transpile(root: Path, *flags: str) -> subprocess.CompletedProcess:
    (root / "src").mkdir(parents=True)
    (root / "src" / "halves.py").write_text(SOURCE)
    return subprocess.run([sys.executable, "-m", "transpiler.cli", "src", "-o", "out", "-q", *flags], cwd=root,
                          capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def ported(tmp_path_factory) -> tuple[Path, dict]:
    pytest.importorskip("cuda.tile")
    root = tmp_path_factory.mktemp("refused")
    res = transpile(root, "--no-compile-check")
    assert res.returncode == 0, res.stderr
    (module,) = json.loads((root / "out/manifest.json").read_text())["modules"]
    return root, module


def record_and_kernel(ported, name: str):
    from transpiler.verify.run import _import_source, _module_kernel
    root, module = ported
    k = next(k for k in module["kernels"] if k["name"] == name)
    src = (root / "out" / module["source"]).resolve()
    return k, _module_kernel(_import_source(src), name, src)


def test_the_records_have_specializations_no_entry_takes(ported):
    """The premise: each kernel has one entry, whose predicate the second launch's constants fail."""
    from transpiler.verify.specs import predicates_hold
    _, module = ported
    for k in module["kernels"]:
        assert k["specializations"][-1] == REFUSED[k["name"]]
        assert [predicates_hold(e["predicates"], REFUSED[k["name"]]) for e in k["entries"]] == [False]
        assert all(predicates_hold(k["entries"][0]["predicates"], s) for s in k["specializations"][:-1])


@pytest.mark.parametrize("name, error", [("halves", "one split only"), ("pairs", "not broadcastable")])
def test_cutile_python_refuses_what_no_entry_takes(ported, tmp_path, name, error):
    from transpiler.verify.run import refused_specialization
    k, kobj = record_and_kernel(ported, name)
    found = refused_specialization(k, kobj, REFUSED[name], tmp_path / "x.tileirbc")
    assert isinstance(found, str) and error in found, found  # refused by both: cuTile Python's error


def test_a_port_refusing_what_cutile_python_compiles_is_different(ported, tmp_path):
    """Constants the port has no entry for but cuTile Python compiles (SPLITS = 1 for halves, as a port whose
    predicate were too narrow would refuse it): `different`, naming the constants; a specialization cuTile
    Python cannot be asked about (a constant missing) is no evidence either way: `not_verified`."""
    from transpiler.verify.run import Check, refused_specialization
    k, kobj = record_and_kernel(ported, "halves")
    found = refused_specialization(k, kobj, {"SPLITS": 1, "TILE": 64}, tmp_path / "x.tileirbc")
    assert isinstance(found, Check) and found.verdict == "different", found
    assert "cuTile Python compiles the kernel at {'SPLITS': 1, 'TILE': 64}" in found.detail
    found = refused_specialization(k, kobj, {"TILE": 64}, tmp_path / "x.tileirbc")
    assert isinstance(found, Check) and found.verdict == "not_verified" and "KeyError" in found.detail, found


class NoRustSide:
    """The irdump pool's place in `_verify_planned`: nothing of the Rust is compiled (the planning, and cuTile
    Python's side of it, run without cargo)."""
    exe = None

    def submit(self, job: dict):
        return SimpleNamespace(result=lambda: {"ok": False, "error": "not compiled in this test"})


def test_planning_skips_and_checks_what_no_entry_takes_without_stopping(ported):
    """The guard of commit de622bc, without the toolchain: a specialization no entry takes is never planned as
    a comparison (selecting its entry raised LookupError and ended the whole run); it is checked with cuTile
    Python alone, and every other specialization is planned as before."""
    from transpiler.verify.run import _verify_planned
    root, module = ported
    verdicts: list = []
    _verify_planned(root / "out", [(module, k) for k in module["kernels"]], NoRustSide(), lambda: ({}, None),
                    lambda: False, {}, verdicts, None, lambda *a, **kw: None, None)
    by_name = {v.kernel: v for v in verdicts}
    assert set(by_name) == {"halves", "pairs"}
    for name, error in (("halves", "one split only"), ("pairs", "not broadcastable")):
        kv = by_name[name]
        assert error in kv.refused.pop(f"all element types at {REFUSED[name]}") and kv.refused == {}
        assert REFUSED[name] not in [c.spec for c in kv.checks]
        assert kv.checks and all(c.detail == "cuTile Rust compile failed: not compiled in this test"
                                 for c in kv.checks), kv.checks


@requires_toolchain
def test_verify_checks_a_specialization_no_entry_takes_is_refused_by_both(tmp_path):
    """The whole run: the refused launches are not compared and do not stop verification (commit de622bc);
    each kernel is `equivalent` at the specialization its entry takes, its refusal listed with cuTile Python's
    error, and the host layer (symbol, wrapper) refuses those constants too."""
    root = tmp_path / "proj"
    res = transpile(root)
    assert res.returncode == 0, res.stderr
    res = subprocess.run([sys.executable, "-m", "transpiler.cli", "verify", "out", "--format", "json"], cwd=root,
                         capture_output=True, text=True, timeout=1800)
    assert res.returncode == 0, res.stderr[-4000:]
    kernels = {k["name"]: k for k in json.loads(res.stdout)["kernels"]}
    for name, error in (("halves", "one split only"), ("pairs", "not broadcastable")):
        k = kernels[name]
        assert k["verify"] == "equivalent", (k["verify"], k["diagnostics"])
        assert REFUSED[name] not in [c["spec"] for c in k["checks"]]
        refused = k["verified_at"]["refused_as_cutile_python_does"]
        assert list(refused) == [f"all element types at {REFUSED[name]}"] and error in refused[
            f"all element types at {REFUSED[name]}"], refused
