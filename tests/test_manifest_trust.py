"""The manifest is input, not truth (transpiler/verify/manifest_check.py): `verify` checks each record
against what the tool makes of the source now before it verifies the kernel at the record's points
(shared/repros/verifier-holes N20 and P01: a narrowed `dtypes` and a source edited after generation both
verified `equivalent`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from transpiler.pipeline import run, write_outputs
from transpiler.verify.run import verify_output

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture()
def out(tmp_path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ROOT / "corpus" / "cutile" / "vector_add.py", src / "vector_add.py")
    out = tmp_path / "rust"
    _, outputs = run([src], out, compile_check=False)
    write_outputs(outputs)
    return out


def _edit_record(out: Path, field: str, value) -> None:
    path = out / "manifest.json"
    man = json.loads(path.read_text())
    man["modules"][0]["kernels"][0][field] = value
    path.write_text(json.dumps(man, indent=2))


def test_a_narrowed_dtype_list_is_different(out):
    _edit_record(out, "dtypes", ["f16"])
    (v,) = verify_output(out)
    assert v.verdict == "different" and "dtypes" in v.reason, (v.verdict, v.reason)


@pytest.mark.parametrize("field,value", [("specializations", [{"TILE": 16}]), ("condition_consts", ["TILE"]),
                                          ("loop_bounds", [["TILE", 1]])])
def test_any_edited_field_is_named(out, field, value):
    _edit_record(out, field, value)
    (v,) = verify_output(out)
    assert v.verdict == "different" and field in v.reason, (v.verdict, v.reason)


def test_a_source_edited_after_generation_is_stale(out):
    src = out.parent / "src" / "vector_add.py"
    src.write_text(src.read_text().replace("c = a + b", "c = a + b\n    c = c * 2") if "c = a + b" in src.read_text()
                   else src.read_text() + "\n# edited\n")
    (v,) = verify_output(out)
    assert v.verdict == "not_verified" and v.reason.startswith("stale:"), (v.verdict, v.reason)


def test_an_untouched_record_is_trusted(out):
    from transpiler.verify.manifest_check import manifest_problems
    man = json.loads((out / "manifest.json").read_text())
    assert manifest_problems(out, man, [(m, k) for m in man["modules"] for k in m["kernels"]]) == {}
