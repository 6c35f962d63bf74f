"""Positions are deferred while a file translates (computing every node's position was a third of a cold
run): a run must still give exact positions wherever one is shown, and the same ports as with exact ones."""

from __future__ import annotations

import dataclasses

from transpiler import pipeline, translate
from transpiler.frontend.source import parse_file

from conftest import CORPUS, ROOT

FIXTURES = ROOT / "tests" / "fixtures"

KERNEL = '''import cuda.tile as ct


@ct.kernel
def fine(x, y, B: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(B,))
    ct.store(y, index=(ct.bid(0),), tile=t + 1)


@ct.kernel
def broken(x, y, B: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(B,))
    ct.store(y, index=(ct.bid(0),), tile=ct.no_such_op(t))
'''


def _diagnostics(results, diags):
    return [d for r in results for d in r.diagnostics] + list(diags)


def test_deferred_parse_gives_stand_ins_except_kernel_lines(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(KERNEL)
    exact = parse_file(src, "k.py")
    deferred = parse_file(src, "k.py", exact_positions=False)
    (ke,), (kd,) = exact.kernels, deferred.kernels
    assert kd.pos == ke.pos and ke.pos.line == 5  # the `def` line, which the output shows
    assert not ke.body[0].pos.deferred and kd.body[0].pos.deferred
    assert len({s.pos for s in kd.body}) == len(kd.body)  # distinct nodes keep distinct stand-ins


def test_a_diagnostic_is_reported_at_its_exact_position(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(KERNEL)
    results, diags = pipeline.process_file(src, "k.py")
    found = _diagnostics(results, diags)
    assert found and not any(d.pos.deferred for d in found)
    broken = next(r for r in results if r.name == "broken")
    d = broken.diagnostics[0]
    assert "no_such_op" in d.message and (d.pos.line, d.pos.col) == (13, 42)
    assert {r.name: r.line for r in results} == {"fine": 5, "broken": 11}


def test_deferred_positions_change_no_port(tmp_path, monkeypatch):
    """Every corpus and feature-fixture file gives the same results, diagnostics and rendered entries with
    deferred positions as with exact ones."""
    files = pipeline.collect_sources([CORPUS, FIXTURES / "features", FIXTURES / "unsupported"], None)
    assert len(files) > 40

    def run(exact: bool):
        return [translate._process_file(f, f.as_posix(), None, False, exact_positions=exact) for f in files]
    compared = 0
    for (r_exact, d_exact), (r_def, d_def), f in zip(run(True), run(False), files):
        if any(d.pos.deferred for d in _diagnostics(r_def, d_def)):
            continue  # such a file is converted again with exact positions (the test above)
        assert [dataclasses.asdict(r) for r in r_def] == [dataclasses.asdict(r) for r in r_exact], f
        assert d_def == d_exact, f
        compared += 1
    assert compared >= 40  # the corpus and the feature fixtures translate without a diagnostic
