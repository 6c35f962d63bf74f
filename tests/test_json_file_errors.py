"""`--format json` carries the errors of whole files (CT001 syntax, CT002 decoding), not only the kernels'
diagnostics, so the document's error count and the exit code agree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _json_run(*args) -> tuple[int, dict]:
    res = subprocess.run([sys.executable, "-m", "transpiler.cli", *map(str, args), "--format", "json",
                          "--no-compile-check"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    return res.returncode, json.loads(res.stdout)


def test_file_level_errors_are_in_the_json_document_and_its_count_matches_the_exit_code(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.py").write_text((ROOT / "corpus" / "cutile" / "vector_add.py").read_text())
    (src / "syntax.py").write_text("import cuda.tile as ct\ndef k(a:\n")
    (src / "latin1.py").write_bytes(b"import cuda.tile as ct\n# caf\xe9\n")
    rc, doc = _json_run(src, "-o", tmp_path / "out")
    assert rc == 1
    codes = sorted(d["code"] for d in doc["diagnostics"] if d["severity"] == "error")
    assert codes == ["CT001", "CT002"], doc["diagnostics"]
    assert doc["summary"]["file_errors"] == 2 and doc["summary"]["error"] == 0
    assert {d["path"] for d in doc["diagnostics"]} == {(src / "syntax.py").as_posix(), (src / "latin1.py").as_posix()}
    assert all(k["status"] == "translated" for k in doc["kernels"])  # the good file's kernels are unaffected

    # --check says the same (OUT is up to date, but the sources have errors)
    rc, doc = _json_run(src, "-o", tmp_path / "out", "--check")
    assert rc == 1 and doc["summary"]["file_errors"] == 2 and doc["out_of_date"] == []

    # without the bad files: no file errors, exit 0, an empty list
    (src / "syntax.py").unlink()
    (src / "latin1.py").unlink()
    rc, doc = _json_run(src, "-o", tmp_path / "out")
    assert rc == 0 and doc["summary"]["file_errors"] == 0
    assert [d for d in doc["diagnostics"] if d["severity"] == "error"] == []
