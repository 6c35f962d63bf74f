"""Snapshots: the typed model dump of every corpus kernel (.ambr) and the generated Rust (.rs files).

`pytest --snapshot-update` regenerates them. The same Rust is built and compared against cuTile
Python's Tile IR in test_ir_equivalence.py, so every snapshot is compiled code.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from conftest import CORPUS
from transpiler.frontend.source import parse_file
from transpiler.model.dump import dump_kernel
from transpiler.pipeline import translate_kernel

SOURCES = sorted((CORPUS / "cutile").rglob("*.py"))
IDS = [p.relative_to(CORPUS / "cutile").with_suffix("").as_posix().replace("/", "_") for p in SOURCES]


class RustSnapshot(SingleFileSnapshotExtension):
    file_extension = "rs"
    _write_mode = WriteMode.TEXT


@pytest.fixture
def rust_snapshot(snapshot):
    return snapshot.use_extension(RustSnapshot)


@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_model_dump(src: Path, snapshot):
    fr = parse_file(src, src.relative_to(CORPUS.parent).as_posix())
    dumps = [dump_kernel(v) for k in fr.kernels for v in translate_kernel(k)]
    assert "\n".join(dumps) == snapshot


@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_generated_rust(src: Path, corpus_out: Path, rust_snapshot):
    import json
    manifest = json.loads((corpus_out / "manifest.json").read_text())
    rel = "../corpus/cutile/" + src.relative_to(CORPUS / "cutile").as_posix()
    module = next(m for m in manifest["modules"] if m["source"] == rel)
    assert (corpus_out / module["rust"]).read_text() == rust_snapshot


@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_generated_ffi(src: Path, corpus_out: Path, rust_snapshot):
    """The C-ABI symbols of a module (built and called in test_abi.py)."""
    import json
    manifest = json.loads((corpus_out / "manifest.json").read_text())
    rel = "../corpus/cutile/" + src.relative_to(CORPUS / "cutile").as_posix()
    module = next(m for m in manifest["modules"] if m["source"] == rel)
    assert (corpus_out / module["rust"]).with_name("ffi.rs").read_text() == rust_snapshot


@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_generated_python_wrapper(src: Path, corpus_out: Path, snapshot):
    import json
    manifest = json.loads((corpus_out / "manifest.json").read_text())
    rel = "../corpus/cutile/" + src.relative_to(CORPUS / "cutile").as_posix()
    module = next(m for m in manifest["modules"] if m["source"] == rel)
    assert (corpus_out / "python" / "cutile_ports" / f"{module['op']}.py").read_text() == snapshot
