"""The real-size Triton cases (tools/triton_real_cases.py), the work counts behind the GPU check's rates
(tools/throughput.py) and the results summary (tools/gpu_summary.py): pure Python, no torch, no GPU."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "tools") not in sys.path:
    sys.path.append(str(ROOT / "tools"))  # appended: tools/coverage.py must not shadow the coverage package

import gpu_summary  # noqa: E402
import throughput  # noqa: E402
import triton_real_cases as real  # noqa: E402
import triton_reference  # noqa: E402

REAL = real.real_cases()
L2_BYTES = 60 * 10 ** 6


def _key(c):
    return c["module"].rsplit(".", 1)[1], c["kernel"]


def _one(kernel, cs=REAL):
    return copy.deepcopy(next(c for c in cs if c["kernel"] == kernel))


def test_every_kernel_with_tiny_cases_has_real_ones_or_a_reason():
    tiny = {_key(c) for c in triton_reference.cases()}
    have = {_key(c) for c in REAL}
    assert tiny - have == set(real.NO_REAL_SIZE)
    assert have <= tiny
    assert len({c["id"] for c in REAL}) == len(REAL)
    assert not {c["id"] for c in REAL} & {c["id"] for c in triton_reference.cases()}


def test_real_cases_are_consistent():
    assert real.check_all(REAL) == {}
    assert real.check_all(triton_reference.cases()) == {}  # the checker agrees with the tiny table too


def test_real_cases_are_real():
    """Each kernel moves several times the L2 in one launch or does a GEMM's work (or is known to run long on
    little data); at most two cases a kernel (the GPU run's time)."""
    by_kernel = {}
    for c in REAL:
        by_kernel.setdefault(_key(c), []).append(c)
    for k, cs in by_kernel.items():
        assert len(cs) <= 2, k
        if k in real.LATENCY_BOUND:
            continue
        assert any(throughput.case_bytes(c) >= 2 * L2_BYTES or (throughput.case_flops(c) or 0) >= 10 ** 11
                   for c in cs), k


@pytest.mark.parametrize("mutate, expect", [
    (lambda c: c["args"].__setitem__(0, "nope"), "is no input"),
    (lambda c: c.__setitem__("grid", [0]), "positive"),
    (lambda c: c["scalars"].__setitem__("n_cols", 4095), "n_cols"),
    (lambda c: c["inputs"][0].__setitem__("shape", [1 << 16, 1 << 16]), "int32"),
    (lambda c: c["inputs"][1].__setitem__("shape", [16384, 65536]), "GiB"),
    (lambda c: c["args"].remove("x"), "not passed"),
])
def test_problems_catches_an_inconsistent_case(mutate, expect):
    c = _one("softmax_kernel")
    assert real.problems(c) == []
    mutate(c)
    assert any(expect in p for p in real.problems(c)), real.problems(c)


def test_problems_checks_gemm_sizes():
    c = _one("matmul_kernel")
    c["scalars"]["M"] += 1
    assert any("M x N" in p for p in real.problems(c))


def test_bytes_model():
    tiny = triton_reference.cases()
    add = next(c for c in tiny if c["id"] == "vector_add__add_kernel__n4096_float32")
    assert throughput.case_bytes(add) == 3 * 4096 * 4  # x, y read; out (poison) written
    rope = next(c for c in tiny if c["kernel"] == "rope_kernel" and c["case"] == "t5_hq4_hk2_d64_float32")
    # q and k rotated in place (read and written), cos / sin tables and positions read
    assert throughput.case_bytes(rope) == 2 * (5 * 4 * 64 + 5 * 2 * 64) * 4 + 2 * 16 * 32 * 4 + 5 * 4
    emb = _one("embedding_kernel")  # a gather: its rows, not the table, are read; the pad rows are not written
    assert throughput.case_bytes(emb) == emb["traffic_bytes"] == 60000 * 4 + (45000 + 60000) * 4096 * 2
    del emb["traffic_bytes"]
    assert throughput.case_bytes(emb) == 60000 * 4 + 32000 * 4096 * 2 + 65536 * 4096 * 2


def test_flops_model():
    mm = _one("matmul_kernel")
    assert throughput.case_flops(mm) == 2 * 8192 ** 3
    causal = next(c for c in REAL if c["kernel"] == "attn_fwd_kernel" and c["constexprs"]["IS_CAUSAL"])
    assert throughput.case_flops(causal) == 4 * 4 * 32 * 4096 * 4096 * 64 // 2
    bp = _one("bp_attn_fwd_kernel")
    assert throughput.case_flops(bp) == 4 * 128 * 4096 * 4096 * 64
    assert throughput.case_flops(_one("softmax_kernel")) is None
    r = throughput.rates(mm, 1000.0)  # 1.1 TFLOP in 1 ms
    assert r["tflops"] == pytest.approx(2 * 8192 ** 3 / 1e-3 / 1e12)
    assert throughput.rates(mm, None) == {"tbps": None, "tflops": None}
    assert throughput.fmt_rate(2.5, None) == "2.50 TB/s" and throughput.fmt_rate(2.5, 612.4) == "612 TFLOP/s"


def _doc():
    rate = {"triton_tbps": 2.0}
    res = [{"id": "a1", "module": "m", "kernel": "a", "status": "ok", "speed": 0.5, **rate, "rust_tbps": 1.0},
           {"id": "a2", "module": "m", "kernel": "a", "status": "ok", "speed": 2.0, **rate, "rust_tbps": 4.0},
           {"id": "b1", "module": "m", "kernel": "b", "status": "ok", "speed": 0.25},
           {"id": "b2", "module": "m", "kernel": "b", "status": "FAIL", "speed": 100.0},
           {"id": "c1", "module": "m", "kernel": "c", "status": "not ported"}]
    return {"versions": {"gpu": "NVIDIA H100"}, "sizes": "real", "results": res, "summary": {"geomean_speed": 0.5}}


def test_summary_of_a_triton_results_file(tmp_path):
    s = gpu_summary.summarize(_doc())
    assert (s["cases"], s["ported"], s["correct"]) == (5, 4, 3)
    assert s["per_kernel"]["m.a"]["speed"] == pytest.approx(1.0)
    assert s["per_kernel"]["m.b"]["speed"] == pytest.approx(0.25)  # the failed case's speed does not count
    assert s["geomean_speed"] == pytest.approx(0.5)
    assert s["slowest"] == {"kernel": "m.b", "speed": pytest.approx(0.25)}
    assert s["per_kernel"]["m.a"]["rates"]["rust_tbps"] == pytest.approx(2.0)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_doc()))
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "gpu_summary.py"), str(path)], capture_output=True,
                         text=True, check=True).stdout
    assert "cases correct: 3/4 ported" in out and "slowest kernel: m.b 0.250" in out and "rust_tbps" in out
    half = _doc()
    half["results"] = half["results"][:2]
    rest = _doc()
    rest["results"] = rest["results"][2:]
    merged = gpu_summary.summarize(gpu_summary.merge([half, rest]))["per_kernel"]
    assert json.dumps(merged, sort_keys=True) == json.dumps(s["per_kernel"], sort_keys=True)  # NaN == NaN as text


def test_summary_of_a_gpu_check_results_file():
    doc = {"results": [{"path": "p.py", "kernel": "k", "correct": True, "speed": 4.0, "rust_tbps": 3.0},
                       {"path": "p.py", "kernel": "k", "correct": False, "speed": 1.0},
                       {"path": "q.py", "kernel": "k", "correct": True}]}
    s = gpu_summary.summarize(doc)
    assert s["flavour"] == "gpu_check" and (s["cases"], s["correct"]) == (3, 2)
    assert s["per_kernel"]["p.py::k"]["speed"] == pytest.approx(2.0)  # gpu_check counts every timed case
    assert s["timed_kernels"] == 1 and s["rates"] == {"rust_tbps": pytest.approx(3.0)}
    assert s["real"] is None
    doc["results"][0]["real"] = True  # gpu_check's real-size configurations: summarised apart as well
    s = gpu_summary.summarize(doc)
    assert s["real"]["cases"] == 1 and s["real"]["geomean_speed"] == pytest.approx(4.0)
    assert "real-size configurations: 1/1 correct, geomean speed over 1 kernels 4.000" in gpu_summary.render(s)


def test_gpu_check_help_and_options():
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "triton_gpu_check.py"), "--help"], capture_output=True,
                         text=True, check=True).stdout
    assert "--sizes {real,tiny}" in out
    np = pytest.importorskip("numpy")  # noqa: F841 - triton_gpu_check imports numpy
    saved = list(sys.path)
    import triton_gpu_check as gc  # it puts tools/ first on sys.path: undone for the other tests
    sys.path[:] = saved
    assert gc.launch_options({"options": {"num_warps": 8}}, {"num_warps": 4, "num_stages": 3}) == \
        {"num_warps": 8, "num_stages": 3}
    r = gc.side_rates(_one("matmul_kernel"), 2000.0, 4000.0)
    assert r["triton_tflops"] == pytest.approx(2 * r["rust_tflops"])
    assert gc.SIZES["real"] is real.real_cases
    parts = [gc.select(REAL, "", f"{i}/3") for i in (1, 2, 3)]
    assert sorted(c["id"] for p in parts for c in p) == sorted(c["id"] for c in REAL)
    assert [c["kernel"] for c in gc.select(REAL, "softmax_kernel", "2/2")] == \
        ["softmax_kernel", "online_softmax_kernel"]


# ------------------------------------------------------------------------------------------ a numpy stand-in for torch
# Enough of torch's API, on numpy, to run triton_gpu_check's real-size input builder and GPU compare here (no torch,
# no GPU): the code paths the GPU run takes, on the tiny cases (the same init kinds) and on made-up outputs.

def _fake_torch():
    """A numpy stand-in for torch (the instance) and its tensor class."""
    np = pytest.importorskip("numpy")

    class _T(np.ndarray):
        def view(self, *a):
            return self.reshape(-1) if a == (-1,) else super().view(*a)

        def to(self, dt):
            return self.astype(dt).view(_T)

        def contiguous(self):
            return self.copy().view(_T)

        clone = contiguous

        def copy_(self, other):
            self[...] = other

        def numel(self):
            return self.size

        def long(self):
            return self.to("int64")

        def float(self):
            return self.to("float32")

        def double(self):
            return self.to("float64")

        def is_floating_point(self):
            return self.dtype.kind == "f"

        def square(self):
            return self * self

        def repeat(self, k):
            return np.tile(self, k).view(_T)

        def data_ptr(self):
            return self.ctypes.data


    class _FakeTorch:
        _np = np
        float32, float16, float64, int32, int64, int8, uint8, int16, bool = (np.dtype(n) for n in (
            "float32", "float16", "float64", "int32", "int64", "int8", "uint8", "int16", "bool"))
        bfloat16, float8_e4m3fn = object(), object()  # no numpy dtype: the fake leaves them out

        class Generator:
            def __init__(self, device=None):
                self.rng = None

            def manual_seed(self, seed):
                self.rng = np.random.default_rng(seed)

        @staticmethod
        def _t(a, dtype=None):
            a = np.asarray(a)
            return (a.astype(dtype) if dtype is not None else a).view(_T)

        def randn(self, shape, generator, device, dtype):
            return self._t(generator.rng.standard_normal(shape), dtype)

        def rand(self, shape, generator, device, dtype):
            return self._t(generator.rng.random(shape), dtype)

        def randint(self, lo, hi, shape, generator, device, dtype):
            return self._t(generator.rng.integers(lo, hi, shape), dtype)

        def randperm(self, n, generator, device):
            return self._t(generator.rng.permutation(n))

        def zeros(self, shape, device, dtype):
            return self._t(self._np.zeros(shape), dtype)

        def full(self, shape, value, device, dtype):
            return self._t(self._np.full(shape, value), dtype)

        def tensor(self, values, device):
            return self._t(values)

        def arange(self, n, device):
            return self._t(self._np.arange(n))

        def log_softmax(self, x, dim):
            z = x - x.max(axis=dim, keepdims=True)
            return self._t(z - self._np.log(self._np.exp(z).sum(axis=dim, keepdims=True)))

        def bincount(self, x, minlength):
            return self._t(self._np.bincount(x, minlength=minlength))

        def cumsum(self, x, dim):
            return self._t(self._np.cumsum(x, axis=dim))

        def argsort(self, x, stable):
            return self._t(self._np.argsort(x, kind="stable"))

        def isnan(self, x):
            return self._t(self._np.isnan(x))

        def isinf(self, x):
            return self._t(self._np.isinf(x))

        def equal(self, a, b):
            return bool(self._np.array_equal(a, b))

        def where(self, c, a, b):
            return self._t(self._np.where(c, a, b))

    return _FakeTorch()


def _gc():
    pytest.importorskip("numpy")
    saved = list(sys.path)
    import triton_gpu_check as gc
    sys.path[:] = saved
    return gc


def test_real_size_inputs_follow_the_case_table():
    """torch_inputs (the real sizes' builder) on every tiny case without fp8 / bf16: the shapes and dtypes of
    make_inputs, the derived kinds (bincount, moe_sorted_ids, ignore_index rows) computed as make_inputs does from
    the inputs drawn, the address tables filled per side, the same draws for the same seed."""
    import numpy as np
    gc, torch = _gc(), _fake_torch()
    for c in triton_reference.cases():
        if any(i["dtype"] in ("float8_e4m3fn", "bfloat16") for i in c["inputs"]):
            continue
        got, want = gc.torch_inputs(torch, c), triton_reference.make_inputs(c)
        for spec in c["inputs"]:
            n = spec["name"]
            assert got[n].shape == want[n].shape and got[n].dtype == want[n].dtype, (c["id"], n)
            kind = spec["init"]["kind"]
            if kind in ("zeros", "given", "full"):
                assert np.array_equal(got[n], want[n]), (c["id"], n)
            if kind == "poison":
                assert np.array_equal(got[n], want[n], equal_nan=True), (c["id"], n)
            if kind == "bincount":
                assert np.array_equal(got[n], np.bincount(got[spec["init"]["of"]].reshape(-1),
                                                          minlength=spec["init"]["minlength"]))
            if kind == "moe_sorted_ids":
                ids = np.asarray(got[spec["init"]["of"]]).reshape(-1)
                srt, _ = triton_reference._moe_sorted(ids, spec["init"]["n_experts"], spec["init"]["block_size"])
                assert np.array_equal(got[n][:srt.size], srt) and (got[n][srt.size:] == ids.size).all()
            if kind == "randint" and "ignore" in spec["init"]:
                assert (got[n].reshape(-1)[::spec["init"]["every"]] == spec["init"]["ignore"]).all()
            if kind == "rows_of_randperm":
                first = got[n].reshape(-1)[:spec["init"]["size"]].tolist()  # pages: distinct, in range
                assert len(set(first)) == len(first) and 0 <= min(first) and max(first) < spec["init"]["size"]
        again = gc.torch_inputs(torch, c)
        assert all(np.array_equal(again[n], got[n], equal_nan=True) for n in got)
        gc.fill_address_tables(c, got)
        for spec in c["inputs"]:
            if spec["init"]["kind"] == "addresses":
                assert got[spec["name"]].tolist() == [got[n].data_ptr() for n in spec["init"]["of"]]


def test_gpu_compare_is_the_host_compare():
    import numpy as np
    gc, torch = _gc(), _fake_torch()
    rng = np.random.default_rng(1)
    a = rng.standard_normal(1000).astype(np.float32)
    a[3], a[7] = np.nan, np.inf
    for b, tol in [(a.copy(), 0.0), (a + np.float32(1e-3), 1e-2), (a + np.float32(1e-1), 1e-2),
                   (np.where(np.arange(1000) == 5, np.nan, a), 1.0), (np.where(np.isinf(a), -np.inf, a), 1.0)]:
        want = gc.compare(a, b, tol)
        old = gc.CHUNK
        gc.CHUNK = 300  # several slices
        try:
            with np.errstate(invalid="ignore"):  # inf - inf where masked out: numpy warns, torch does not
                got = gc.compare_gpu(torch, torch._t(a), torch._t(b), tol)
        finally:
            gc.CHUNK = old
        assert got[0] == want[0] and got[1] == pytest.approx(want[1], rel=1e-9), (got, want)
    ints = np.arange(10, dtype=np.int32)
    assert gc.compare_gpu(torch, torch._t(ints), torch._t(ints + (ints == 4)), 0.0)[:2] == (False, 0.1)
    assert gc.untouched_gpu(torch, torch._t(a), torch._t(a.copy()))
    assert not gc.untouched_gpu(torch, torch._t(a), torch._t(a + 1))


def test_results_files_of_the_gpu_check(tmp_path):
    """write_results' table (rates of both sides) and JSON, as tools/gpu_summary.py reads it."""
    import argparse
    gc = _gc()
    mm = _one("matmul_kernel")
    base = {"module": "matmul", "kernel": "matmul_kernel", "dtype": "float16", "bytes": throughput.case_bytes(mm),
            "flops": throughput.case_flops(mm)}
    results = [{**base, "id": "a", "case": "big", "status": "ok", "error": 1e-3, "tolerance": 2e-2,
                "t_triton_us": 2000.0, "t_rust_us": 4000.0, "speed": 0.5, **gc.side_rates(mm, 2000.0, 4000.0)},
               {**base, "id": "b", "case": "odd", "status": "FAIL", "detail": "x: error 1 | above"},
               {**base, "id": "c", "kernel": "other", "case": "-", "status": "not ported", "detail": "E1"}]
    opts = argparse.Namespace(runs=10, sizes="real", part="1/1")
    summary = gc.write_results(tmp_path / "r", results, {"gpu": "NVIDIA H100"}, opts)
    assert (summary["correct"], summary["ported"], summary["failed"]) == (1, 2, ["b"])
    md = (tmp_path / "r.md").read_text()
    assert "| 0.500 | 550 TFLOP/s | 275 TFLOP/s |" in md and "error 1 \\| above" in md
    s = gpu_summary.summarize(json.loads((tmp_path / "r.json").read_text()))
    assert s["sizes"] == "real" and s["correct"] == 1 and s["slowest"]["speed"] == pytest.approx(0.5)
    assert s["rates"]["rust_tflops"] == pytest.approx(2 * 8192 ** 3 / 4e-3 / 1e12)
