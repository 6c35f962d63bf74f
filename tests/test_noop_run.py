"""A run with nothing changed reads the crate back from OUT instead of rendering it (cache.load_crate), and
gives exactly what rendering would; any change to its inputs or to OUT's files renders again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from transpiler import cache
from transpiler.pipeline import plan_changes, run, write_outputs

KERNEL = '''import cuda.tile as ct


@ct.kernel
def {name}(a, b, TILE: ct.Constant[int]):
    x = ct.load(a, index=(ct.bid(0),), shape=(TILE,))
    ct.store(b, index=(ct.bid(0),), tile=x * {factor})
'''


@pytest.fixture()
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTILE_TRANSPILE_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "src"
    src.mkdir()
    for i in range(3):
        (src / f"m{i}.py").write_text(KERNEL.format(name=f"scale{i}", factor=i + 2))
    out = tmp_path / "out"
    _, outputs = run([src], out)
    write_outputs(outputs)
    return src, out


def _again(src: Path, out: Path):
    return run([src], out)[1]


def _rendered(src: Path, out: Path) -> dict:
    outputs = run([src], out, use_cache=False)[1]  # no file cache, no crate record: rendered
    assert not isinstance(outputs, cache.OnDisk)
    return outputs


def test_a_noop_run_reads_the_crate_back_and_it_is_what_rendering_gives(project):
    src, out = project
    outputs = _again(src, out)  # the first run's record
    assert isinstance(outputs, cache.OnDisk)
    assert dict(outputs) == _rendered(src, out)
    assert plan_changes(out, outputs) == ({}, [])
    assert write_outputs(outputs) == ([], [])


def test_a_changed_source_renders_again(project):
    src, out = project
    (src / "m1.py").write_text(KERNEL.format(name="scale1", factor=7))
    outputs = _again(src, out)
    assert not isinstance(outputs, cache.OnDisk)
    assert "7" in outputs[out / "src" / "m1" / "kernel.rs"]
    write_outputs(outputs)
    assert isinstance(_again(src, out), cache.OnDisk)  # and the next run, with nothing changed, reads it back
    (src / "pyproject.toml").write_text('[tool.cutile-transpile]\ndtypes = ["f32"]\n')  # same sources, new config
    outputs = _again(src, out)
    assert not isinstance(outputs, cache.OnDisk) and dict(outputs) == _rendered(src, out)
    write_outputs(outputs)
    (src / "m3.py").write_text(KERNEL.format(name="scale3", factor=5))  # a new module
    outputs = _again(src, out)
    assert not isinstance(outputs, cache.OnDisk) and out / "src" / "m3" / "kernel.rs" in outputs


def test_a_hand_edited_or_missing_output_renders_again(project):
    src, out = project
    ffi = out / "src" / "m0" / "ffi.rs"
    good = ffi.read_text()
    ffi.write_text(good + "// edited\n")
    outputs = _again(src, out)
    assert not isinstance(outputs, cache.OnDisk) and outputs[ffi] == good
    _, refused = plan_changes(out, outputs)
    assert [(p, code) for p, code, _ in refused] == [(ffi, "CT004")]  # as without the record: refused
    ffi.unlink()
    outputs = _again(src, out)
    assert not isinstance(outputs, cache.OnDisk) and outputs[ffi] == good
    write_outputs(outputs)
    assert ffi.read_text() == good


def test_a_linked_folder_in_out_is_not_followed_to_read_the_crate_back(project, tmp_path):
    src, out = project
    elsewhere = tmp_path / "elsewhere"
    (out / "src" / "m2").rename(elsewhere)  # the same bytes, reached through a link
    os.symlink(elsewhere, out / "src" / "m2")
    assert cache.load_crate(out, _record_key(out)) is None
    outputs = _again(src, out)
    assert not isinstance(outputs, cache.OnDisk)


def test_the_record_is_dropped_when_the_outputs_dict_changes(project):
    src, out = project
    outputs = _again(src, out)
    assert isinstance(outputs, cache.OnDisk) and outputs.out == out
    outputs[out / "src" / "m0" / "ffi.rs"] = "changed"
    assert outputs.out is None
    assert out / "src" / "m0" / "ffi.rs" in plan_changes(out, outputs)[0]


def _record_key(out: Path) -> str:
    import json
    return json.loads(cache._crate_record(out).read_text())["key"]
