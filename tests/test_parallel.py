"""Files are translated in worker processes when there are enough of them: the output must be the same
bytes as one process writes, and a worker that fails costs no file its result."""

from __future__ import annotations

import concurrent.futures

from transpiler import pipeline

from conftest import CORPUS


def _outputs(tmp_path, name):
    result, outputs = pipeline.run([CORPUS], tmp_path / name, use_cache=False)
    assert result.kernels and all(r.status == "translated" for r in result.kernels)
    return result, {p.relative_to(tmp_path / name).as_posix(): text for p, text in outputs.items()}


def test_workers_write_what_one_process_writes(tmp_path, monkeypatch):
    started = []
    real = pipeline._process_in_parallel

    def spy(paths, kernel_filter):
        futures = real(paths, kernel_filter)
        started.append(len(futures))
        return futures
    monkeypatch.setattr(pipeline, "_process_in_parallel", spy)
    monkeypatch.setattr(pipeline.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    parallel, out_parallel = _outputs(tmp_path, "rust")
    assert started and started[0] >= pipeline.PARALLEL_MIN_FILES  # the corpus did go through workers
    monkeypatch.setattr(pipeline, "_process_in_parallel", lambda paths, kernel_filter: {})
    serial, out_serial = _outputs(tmp_path, "rust")
    assert out_parallel == out_serial
    assert [(r.name, r.status) for r in parallel.kernels] == [(r.name, r.status) for r in serial.kernels]


def test_a_failed_worker_is_redone_in_process(tmp_path, monkeypatch):
    def broken(paths, kernel_filter):
        out = {}
        for p in paths:
            f = concurrent.futures.Future()
            f.set_exception(concurrent.futures.process.BrokenProcessPool("worker died"))
            out[p] = f
        return out
    monkeypatch.setattr(pipeline, "_process_in_parallel", broken)
    _, out_broken = _outputs(tmp_path, "rust")
    monkeypatch.setattr(pipeline, "_process_in_parallel", lambda paths, kernel_filter: {})
    _, out_serial = _outputs(tmp_path, "rust")
    assert out_broken == out_serial
