"""Write-after-write order (normalizer N17, emit/lower.py `ordered_arrays`): cuTile Python chains every
store of an array after the previous access, except a loop's only access to an array when it is a tile store
indexed by the loop variable (token_order.py's parallel stores). The port chains the same stores, so the
verifier can compare the order instead of allowing any (shared/repros/verifier-holes: store_twice_rows,
store_in_loop were ported unordered and verified equivalent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import requires_toolchain
from transpiler.pipeline import run, write_outputs
from transpiler.verify.normalize import normalize

FIXTURE = Path(__file__).parent / "fixtures" / "store_order"


@pytest.fixture(scope="module")
def ported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("store_order") / "rust"
    result, outputs = run([FIXTURE], out, compile_check=False)
    assert all(k.status == "translated" for k in result.kernels), [d.text() for k in result.kernels for d in k.diagnostics]
    write_outputs(outputs)
    return out


def _entry(out: Path, name: str) -> str:
    text = (out / "src" / "kernels" / "kernel.rs").read_text()
    start = text.index(f"pub fn {name}")
    end = text.find("pub fn ", start + 1)
    return text[start:end if end > 0 else len(text)]


@pytest.mark.parametrize("kernel", ["store_twice_rows", "store_same_tile_in_loop"])
def test_stores_to_one_tile_are_chained(ported, kernel):
    body = _entry(ported, kernel)
    assert "y_tok_access" in body and "partition_full_mut" not in body, body


def test_a_parallel_loop_store_is_not_chained(ported):
    body = _entry(ported, "store_tile_per_trip")
    assert "y_tok_access" not in body, body


WAW = """entry @k(%arg0: tile<ptr<f32>>, %arg1: tile<i32>) {
  %c = constant <f32: 1.0> : tile<f32>
  %d = constant <f32: 2.0> : tile<f32>
  %t0 = make_token : token
  %s1 = store_ptr_tko weak %arg0, %c token = %t0 : tile<ptr<f32>>, tile<f32> -> token
  %s2 = store_ptr_tko weak %arg0, %d token = {tok} : tile<ptr<f32>>, tile<f32> -> token
  return
}
"""


def test_N17_compares_write_after_write():
    """Two stores to one address: ordered (the second after the first) and unordered (a race: either value
    may land) must not normalize to the same text."""
    args = ["y.ptr", "y.shape0"]
    ordered, unordered = normalize(WAW.replace("{tok}", "%s1"), args)[0], normalize(WAW.replace("{tok}", "%t0"), args)[0]
    assert ordered != unordered
    assert "after mem#1" in ordered and "after" not in unordered


@requires_toolchain
def test_chained_stores_verify_equivalent(tmp_path):
    """The chained port is what cuTile Python compiles, store for store (and the parallel loop store is left
    unchained on both sides)."""
    from transpiler.verify.run import verify_output
    out = tmp_path / "rust"
    result, outputs = run([FIXTURE], out, compile_check=False)
    write_outputs(outputs)
    got = {v.kernel: v.verdict for v in verify_output(out)}
    assert got == {k: "equivalent" for k in ("store_twice_rows", "store_same_tile_in_loop", "store_tile_per_trip")}, got
