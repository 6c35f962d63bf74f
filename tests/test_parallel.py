"""Files are translated in worker processes when there are enough of them: the output must be the same
bytes as one process writes, and a worker that fails costs no file its result."""

from __future__ import annotations

import concurrent.futures

import pytest

from transpiler import pipeline

from conftest import CORPUS


def _outputs(tmp_path, name):
    result, outputs = pipeline.run([CORPUS], tmp_path / name, use_cache=False)
    assert result.kernels and all(r.status == "translated" for r in result.kernels)
    return result, {p.relative_to(tmp_path / name).as_posix(): text for p, text in outputs.items()}


def test_workers_write_what_one_process_writes(tmp_path, monkeypatch):
    submitted = []
    real = pipeline._submit

    def spy(pool, path, kernel_filter, key):
        future = real(pool, path, kernel_filter, key)
        submitted.append(future)
        return future
    monkeypatch.setattr(pipeline, "_submit", spy)
    monkeypatch.setattr(pipeline.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    parallel, out_parallel = _outputs(tmp_path, "rust")
    assert len(submitted) >= pipeline.PARALLEL_MIN_FILES and all(submitted)  # the corpus did go through workers
    monkeypatch.setattr(pipeline, "_worker_pool", lambda n_files: None)
    serial, out_serial = _outputs(tmp_path, "rust")
    assert out_parallel == out_serial
    assert [(r.name, r.status) for r in parallel.kernels] == [(r.name, r.status) for r in serial.kernels]


def test_workers_fill_the_cache_a_later_run_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTILE_TRANSPILE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(pipeline.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    parent = pipeline.os.getpid()
    real_store = pipeline._store

    def store(key, results, diags):  # the workers are forked: this runs in them too
        assert pipeline.os.getpid() != parent, "a result the workers should have stored was stored by the parent"
        return real_store(key, results, diags)
    monkeypatch.setattr(pipeline, "_store", store)
    first, out_first = pipeline.run([CORPUS], tmp_path / "rust")
    assert list((tmp_path / "cache" / "files").glob("*.json"))  # stored by the workers
    monkeypatch.setattr(pipeline, "_submit", lambda *a: pytest.fail("a cached file was processed again"))
    monkeypatch.setattr(pipeline, "process_file", lambda *a: pytest.fail("a cached file was processed again"))
    second, out_second = pipeline.run([CORPUS], tmp_path / "rust")
    assert out_first == out_second
    assert [(r.name, r.status) for r in first.kernels] == [(r.name, r.status) for r in second.kernels]


def test_a_failed_worker_is_redone_in_process(tmp_path, monkeypatch):
    def broken(pool, path, kernel_filter, key):
        f = concurrent.futures.Future()
        f.set_exception(concurrent.futures.process.BrokenProcessPool("worker died"))
        return f
    monkeypatch.setattr(pipeline.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(pipeline, "_submit", broken)
    _, out_broken = _outputs(tmp_path, "rust")
    monkeypatch.setattr(pipeline, "_worker_pool", lambda n_files: None)
    _, out_serial = _outputs(tmp_path, "rust")
    assert out_broken == out_serial


def test_a_run_with_few_misses_starts_no_workers(tmp_path, monkeypatch):
    """The pre-commit case: one changed file among cached ones is translated in this process (starting
    workers would cost more than it saves); a cold run starts them once enough files miss."""
    monkeypatch.setenv("CUTILE_TRANSPILE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(pipeline.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    src = tmp_path / "src"
    import shutil
    shutil.copytree(CORPUS, src)
    started = []
    real = pipeline._worker_pool
    monkeypatch.setattr(pipeline, "_worker_pool", lambda n: started.append(n) or real(n))
    pipeline.run([src], tmp_path / "rust")
    assert started  # cold: every file missed
    one = sorted(src.rglob("*.py"))[-1]
    one.write_text(one.read_text() + "\n# changed\n")
    started.clear()
    result, _ = pipeline.run([src], tmp_path / "rust")
    assert not started and all(r.status == "translated" for r in result.kernels)
