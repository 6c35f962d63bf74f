"""tools/gpu_cases.py and the torch-free parts of tools/gpu_check.py: traffic and FLOP counts, throughput,
real-size shapes and the table check (built with tools/shape_torch.py, so no torch and no GPU)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools"
sys.path.insert(0, str(TOOLS))

import gpu_cases  # noqa: E402
import gpu_check  # noqa: E402
import shape_torch  # noqa: E402


class FakeTensor:
    def __init__(self, numel: int, element_size: int):
        self._numel, self._size = numel, element_size

    def numel(self) -> int:
        return self._numel

    def element_size(self) -> int:
        return self._size


def test_launch_bytes_counts_every_tensor_once_and_skips_untouched_and_scalars():
    x, w, y, spare = FakeTensor(1000, 2), FakeTensor(10, 4), FakeTensor(1000, 2), FakeTensor(500, 8)
    launch = gpu_cases.Launch(grid=(1,), args=(x, w, x, y, spare, 1e-5, 64, True), outputs=(3,), untouched=(4,))
    # x read once although passed twice; w read; y written; spare (untouched) and the scalars move nothing
    assert gpu_cases.launch_bytes(launch) == 2000 + 40 + 2000


def test_launch_bytes_counts_outputs_that_are_also_read_once():
    acc = FakeTensor(64, 4)
    launch = gpu_cases.Launch(grid=(1,), args=(FakeTensor(256, 4), acc, 256), outputs=(1,), reset=lambda: None)
    assert gpu_cases.launch_bytes(launch) == 1024 + 256


def test_throughput_rates():
    assert gpu_check.throughput(2 * 10**9, 0, 1.0) == {"tbps": pytest.approx(2.0)}
    rates = gpu_check.throughput(10**8, 5 * 10**11, 0.5)
    assert rates == {"tbps": pytest.approx(0.2), "tflops": pytest.approx(1000.0)}
    assert gpu_check.throughput(10**8, 10**9, 0.0) == {}
    assert gpu_check.throughput(10**8, 10**9, float("nan")) == {}


def test_rate_cell_prefers_flops():
    assert gpu_check.rate_cell({"python_tbps": 1.234, "rust_tbps": 1.2}) == "1.23 / 1.20 TB/s"
    assert gpu_check.rate_cell({"python_tbps": 0.1, "rust_tbps": 0.1, "python_tflops": 512.04,
                                "rust_tflops": 498.0}) == "512.0 / 498.0 TFLOP/s"
    assert gpu_check.rate_cell({"python_ms": 1.0}) == "-"


def test_attention_pairs_follow_the_masks():
    assert gpu_cases.attention_pairs(4, causal=False, window=0) == 16
    assert gpu_cases.attention_pairs(4, causal=True, window=0) == 10
    assert gpu_cases.attention_pairs(4, causal=True, window=2) == 1 + 2 + 2 + 2
    assert gpu_cases.attention_pairs(4, causal=False, window=2) == 4 + 4 + 3 + 2  # keys j > i - WINDOW


def _build(kernel: str, shape: str, dtype: str):
    case = next(c for c in gpu_cases.CASES if c.kernel == kernel and shape in c.shapes)
    return case.build(shape, dtype, shape_torch, None, "shape")


def test_counts_of_known_launches():
    mm = _build("matmul", "4096x4096x4096 (MxNxK)", "bf16")
    assert mm.flops == 2 * 4096**3
    assert gpu_cases.launch_bytes(mm) == 3 * 4096 * 4096 * 2
    va = _build("vector_add", "128Mi", "bf16")
    assert gpu_cases.launch_bytes(va) == 3 * gpu_cases.N128MI * 2 and va.flops == 0
    # without HAS_RESIDUAL residual_out is untouched: x, r, w, y and the f32 rstd only
    rms = _build("rms_norm_fwd_kernel", "8192x2048 BN2048 no residual", "f16")
    assert gpu_cases.launch_bytes(rms) == 3 * 8192 * 2048 * 2 + 2048 * 2 + 8192 * 4
    fa = _build("flash_attn_fwd_kernel", "8x16x2048 d128 causal GROUP1", "f16")
    assert fa.flops == 4 * 128 * 8 * 16 * (2048 * 2049 // 2)


def test_real_shapes_run_in_one_dtype_and_the_others_in_all():
    configs = gpu_check._configs(gpu_cases.CASES, {}, None)  # no port specs: default ("f32",)
    real_added = [(c.kernel, s) for c in gpu_cases.CASES for s in c.shape_dtypes]
    assert real_added
    for kernel, shape in real_added:
        dts = [c["dtype"] for c in configs if c["kernel"] == kernel and c["shape"] == shape]
        assert dts == ["bf16"] or kernel.startswith("moe_") and len(dts) == 1, (kernel, shape, dts)
        assert all(c["real"] for c in configs if c["kernel"] == kernel and c["shape"] == shape)
    assert not any(c["real"] for c in configs if c["shape"].startswith("ragged"))


def test_table_check_passes_without_torch(capsys):
    assert gpu_cases.main([]) == 0
    assert capsys.readouterr().out.rstrip().endswith("ok")


def test_table_check_rejects_a_small_shape_labelled_real(monkeypatch):
    cases = []
    for c in gpu_cases.CASES:
        if c.kernel == "vector_add":  # its real shape dropped, the 16Mi one labelled real instead
            c = dataclasses.replace(c, shapes=("16Mi", "ragged 16Mi-5"), real=("16Mi",), shape_dtypes={})
        cases.append(c)
    monkeypatch.setattr(gpu_cases, "CASES", cases)
    problems = gpu_cases._check_sizes(gpu_cases.shape_builds())
    assert any("vector_add [16Mi]: labelled real but moves 201 MB" in p for p in problems), problems


def test_table_check_wants_a_real_shape_per_kernel_and_bounds_builds(monkeypatch):
    cases = [dataclasses.replace(c, real=()) if c.kernel == "rope_halves_kernel" else c for c in gpu_cases.CASES]
    monkeypatch.setattr(gpu_cases, "CASES", cases)
    monkeypatch.setattr(gpu_cases, "BUILD_LIMIT", 900 << 20)
    problems = gpu_cases._check_sizes(gpu_cases.shape_builds())
    assert "corpus/cutile/workloads/rope.py::rope_halves_kernel: no real-size shape" in problems
    assert [p for p in problems if "MiB of tensors" in p] == [], problems  # the largest build is 860 MiB
    monkeypatch.setattr(gpu_cases, "BUILD_LIMIT", 800 << 20)
    problems = gpu_cases._check_sizes(gpu_cases.shape_builds())
    assert any(p.startswith("geglu_bwd_kernel [8192x11008 (rows x I)] bf16: 860 MiB") for p in problems), problems


def test_compare_in_chunks_matches_the_whole_tensor_error():
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(0)
    ref = torch.randn(1000, generator=gen)
    got = ref + 1e-3 * torch.randn(1000, generator=gen)
    ref[5], got[5] = float("nan"), float("nan")
    want = float(torch.linalg.norm((ref - got)[~ref.isnan()].double()) / torch.linalg.norm(ref[~ref.isnan()].double()))
    old = gpu_check.COMPARE_CHUNK
    try:
        gpu_check.COMPARE_CHUNK = 64
        ok, err, _ = gpu_check._compare(torch, ref, got, "f32")
    finally:
        gpu_check.COMPARE_CHUNK = old
    assert err == pytest.approx(want, rel=1e-9) and not ok
    got[7] = float("nan")
    assert gpu_check._compare(torch, ref, got, "f32")[2].startswith("NaN positions differ (1 vs 2)")


def test_report_shows_rates_and_the_real_size_summary():
    base = {"path": "p.py", "dtype": "bf16", "correct": True, "rel_err": 0.0}
    results = [
        {**base, "kernel": "k", "shape": "small", "real": False, "python_ms": 0.01, "rust_ms": 0.02, "speed": 0.5,
         "python_tbps": 1.0, "rust_tbps": 0.5},
        {**base, "kernel": "k", "shape": "big", "real": True, "python_ms": 1.0, "rust_ms": 0.8, "speed": 1.25,
         "python_tflops": 400.0, "rust_tflops": 500.0, "python_tbps": 0.1, "rust_tbps": 0.125},
        {**base, "kernel": "j", "shape": "big", "real": True, "correct": False, "detail": "boom"},
    ]
    text, summary = gpu_check._report(results, {"gpu": "test"}, runs=3)
    assert summary["real_configs"] == 2 and summary["real_kernels"] == 1
    assert summary["real_geomean_speed"] == pytest.approx(1.25)
    assert summary["geomean_speed"] == pytest.approx((0.5 * 1.25) ** 0.5)
    assert "| k | big | R | bf16 | yes | 0.00e+00 | 1.0000 | 0.8000 | 1.250 | 400.0 / 500.0 TFLOP/s |" in text
    assert "| k | small |  | bf16 | yes | 0.00e+00 | 0.0100 | 0.0200 | 0.500 | 1.00 / 0.50 TB/s |" in text
    assert "| p.py::k | 0.791 | 1.250 |" in text


def test_timed_runs_shrink_only_for_slow_configurations():
    assert gpu_check.timed_runs(25, 0.0004) == 25  # a fast pair of launches: all runs
    assert gpu_check.timed_runs(25, gpu_check.TIMING_BUDGET_S / 10) == 10
    assert gpu_check.timed_runs(25, 0.6) == gpu_check.MIN_RUNS  # f32 flash attention: the floor
    assert gpu_check.timed_runs(3, 0.6) == 3  # never more than asked
    assert gpu_check.timed_runs(25, 0.0) == 25
