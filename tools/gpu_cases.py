"""Launch arguments for every corpus kernel, for `tools/gpu_check.py`.

One `Case` per `@ct.kernel` of `corpus/cutile/*.py` and `corpus/cutile/workloads/*.py`. A case's
`build(shape, dtype, torch, gen, device)` returns a `Launch`: the grid, the kernel arguments in parameter
order (tensors on `device`, python scalars and constants), the indices of the arguments the kernel writes
and, for kernels that accumulate into an output, a `reset` that re-initialises it.

Conventions:
- Every random input comes from `gen` (two builds with generators seeded alike give identical inputs).
- Outputs are pre-filled with a poison value (NaN, or -12345 for int32) unless the kernel accumulates.
- Tile constants are the ones the corpus launch functions pass; where a launch function has several
  launches (constant variants), the shape label names the variant (e.g. "causal", "BN=1024").
- Each kernel has a regular shape (multiples of its tiles) and a ragged one (tails that are not whole
  tiles) wherever the kernel handles ragged tails; `note` says which dimensions are fixed and why.
- Ragged shapes make the outer dimensions odd and the contiguous ones not a multiple of the tile; most
  contiguous dimensions stay a multiple of 8 elements (16-byte rows), except cross-entropy's GPT-2
  vocabulary (50257), which gives odd row strides.
- Arrays the Rust ports type as the generic element type E get the case's dtype, also where the kernel
  that produces them in a pipeline writes f32 (statistics, partials): see STATS_AS_PRODUCED.
- Sizes: in f16/bf16 one launch takes about 20 us to 2 ms on an H200 (f32 GEMM and attention, which have no
  f32 tensor-core path, up to about 300 ms). One build stays at or under BUILD_LIMIT (1 GiB; the largest is
  geglu_bwd's 8192x11008, 0.84 GiB). gpu_check.py holds a configuration only while it checks or times it (it
  rebuilds it for the timing), so the GPU needs at most `--workers` configurations at once, each two builds,
  the clone of its outputs and the compare's scratch (`config_peak`): with 8 workers at most about 38 GiB
  including a 1 GiB allowance per process for the CUDA context (`python3 tools/gpu_cases.py` prints the bound),
  plus up to about 2 GiB of f32 intermediates while kl_div's and cross-entropy's real shapes are built. Kept
  all at once, as gpu_check.py did before, the builds would take about 102 GiB (71 GiB without the real shapes).
- Real size: every kernel has at least one shape in `Case.real` that moves several times the H200's 60 MB L2
  (REAL_BYTES, the minimal traffic of `launch_bytes`) or does REAL_FLOPS (about 100 us at the bf16 tensor-core
  peak); where neither holds, `real_note` gives the measured time that makes it real (at least 100 us on the
  H200), or says why the kernel has no real size. Real shapes added for this alone (`real_shapes`) run in
  bf16 only, so they add one configuration each. The table check computes both counts with
  tools/shape_torch.py (no torch needed).
- Throughput: `launch_bytes` (minimal traffic) for every launch; `Launch.flops` (useful FLOPs: 2 per
  multiply-add, attention pairs under the mask, summed over the actual sequence lengths) for matmul-like and
  attention kernels. gpu_check.py reports TB/s or TFLOP/s from them.

`python3 tools/gpu_cases.py` checks the table without torch; `--build [--device cuda]` also builds every
configuration (needs torch) and checks argument counts, grids and output indices.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

NAN = float("nan")
INT_POISON = -12345
DROPOUT_SEED = 1234
DROPOUT_P = 0.1
H200_SMS = 132  # used when the device cannot be asked (persistent GEMM grid)

# Consumer kernels whose statistics / partials inputs are written as f32 by the producing kernel of the
# same file (cross_entropy_bwd's lse, decode_attn_combine's O_part and lse_part, layer_norm_bwd_dx's
# mean and rstd, layer_norm_bwd_dwdb's partials, rms_norm_bwd's rstd, splitk_reduce's P, and the
# attention sinks, documented as f32) take the generic element type E in the Rust ports (see the
# manifest). False: pass them in the case's dtype, so that both backends can run every dtype. True: pass
# f32 as the pipelines do (the ports then refuse f16/bf16 with a dtype mismatch).
STATS_AS_PRODUCED = False


@dataclass
class Launch:
    grid: tuple  # 1 to 3 positive ints
    args: tuple  # the kernel arguments in the kernel's parameter order
    outputs: tuple  # indices into `args` of the tensors the kernel writes (compared between the two runs)
    reset: Callable[[], None] | None = None  # re-initialises accumulated outputs before every launch
    untouched: tuple = ()  # indices of arrays this launch must leave as they were (in both runs)
    flops: int = 0  # useful floating-point operations (matmul-like and attention kernels; 0 = not counted)


def launch_bytes(launch: Launch) -> int:
    """Minimal DRAM traffic of one launch: every tensor argument's full size once (an input read once, an
    output written once, a tensor passed twice counted once); arrays declared untouched are not counted.

    A lower bound for streaming kernels; kernels that read an input several times (GEMM operands, a gather
    that picks rows twice) or only part of it (ragged sequence lengths) move more or less than this."""
    seen, total = set(), 0
    for i, a in enumerate(launch.args):
        if i in launch.untouched or id(a) in seen or not (hasattr(a, "numel") and hasattr(a, "element_size")):
            continue
        seen.add(id(a))
        total += a.numel() * a.element_size()
    return total


@dataclass
class Case:
    path: str  # corpus file relative to the repository root
    kernel: str  # the @ct.kernel function name
    shapes: tuple  # labels of at least two problem sizes
    build: Callable  # build(shape_label, dtype, torch, gen, device) -> Launch
    dtypes: tuple | None = None  # names "f16", "bf16", "f32" (or "i32"); None = all three
    note: str = ""
    real: tuple = ()  # labels of the real-size shapes (see REAL_BYTES, REAL_FLOPS)
    shape_dtypes: dict = field(default_factory=dict)  # label -> the only dtypes that shape runs in
    real_note: str = ""  # why a real shape counts as real though it moves less than REAL_BYTES / REAL_FLOPS

    def dtypes_of(self, shape: str, default: tuple) -> tuple:
        """The dtypes one shape runs in: its own restriction, else the case's, else `default` (the port's)."""
        return self.shape_dtypes.get(shape) or self.dtypes or default


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def attention_pairs(s: int, causal: bool, window: int) -> int:
    """(query, key) pairs one head scores over a sequence of s tokens under the kernels' masks: causal keeps
    keys j <= i, WINDOW > 0 keeps keys with i - j < WINDOW (the FLOP count is 4 * head_dim per pair)."""
    total = 0
    for i in range(s):
        lo = max(0, i - window + 1) if window else 0
        total += (i if causal else s - 1) - lo + 1
    return total


class _Ctx:
    """What a builder needs: torch, the generator, the device and the element type of the case."""

    def __init__(self, dtype: str, torch, gen, device):
        self.torch, self.gen, self.device, self.name = torch, gen, device, dtype
        self.f32, self.i32, self.i64 = torch.float32, torch.int32, torch.int64
        self.dt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "i32": torch.int32}[dtype]

    @property
    def stat(self):
        """dtype for statistics/partials that the ports type as E (see STATS_AS_PRODUCED)."""
        return self.f32 if STATS_AS_PRODUCED else self.dt

    def randn(self, *shape, dtype=None, scale=1.0, shift=0.0):
        t = self.torch.randn(shape, generator=self.gen, device=self.device, dtype=dtype or self.dt)
        if scale != 1.0:
            t.mul_(scale)
        if shift != 0.0:
            t.add_(shift)
        return t

    def rand(self, *shape, dtype=None):
        return self.torch.rand(shape, generator=self.gen, device=self.device, dtype=dtype or self.dt)

    def randint(self, low, high, *shape):
        return self.torch.randint(low, high, shape, generator=self.gen, device=self.device, dtype=self.i32)

    def randperm(self, n):
        return self.torch.randperm(n, generator=self.gen, device=self.device, dtype=self.i64).to(self.i32)

    def poison(self, *shape, dtype=None):
        dtype = dtype or self.dt
        value = INT_POISON if dtype in (self.i32, self.i64) else NAN
        return self.torch.full(shape, value, device=self.device, dtype=dtype)

    def zeros(self, *shape, dtype=None):
        return self.torch.zeros(shape, device=self.device, dtype=dtype or self.dt)

    def full(self, shape, value, dtype=None):
        return self.torch.full(tuple(shape), value, device=self.device, dtype=dtype or self.dt)


CASES: list[Case] = []


def _case(path: str, kernel: str, shapes: dict, fn: Callable, dtypes=None, note: str = "", real=(),
          real_shapes: dict | None = None, real_note: str = "") -> None:
    """Registers a case whose shape labels map to parameter dicts; `fn(ctx, **params) -> Launch`.

    `real` names shapes of `shapes` that are already of real size (they run in every dtype); `real_shapes`
    adds real-size shapes that run in one dtype only (REAL_DTYPE, or the case's first dtype where it has
    fixed dtypes), which bounds the memory and time they add."""
    real_shapes = real_shapes or {}
    shapes = {**shapes, **real_shapes}
    one = (REAL_DTYPE if REAL_DTYPE in dtypes else dtypes[0],) if dtypes else (REAL_DTYPE,)

    def build(shape, dtype, torch, gen, device, _shapes=shapes, _fn=fn):
        if shape not in _shapes:
            raise KeyError(f"{kernel}: unknown shape {shape!r} (known: {', '.join(_shapes)})")
        return _fn(_Ctx(dtype, torch, gen, device), **_shapes[shape])

    CASES.append(Case(path, kernel, tuple(shapes), build, tuple(dtypes) if dtypes else None, note,
                      real=tuple(real) + tuple(real_shapes), shape_dtypes={label: one for label in real_shapes},
                      real_note=real_note))


def _num_sms(torch, device) -> int:
    try:
        return int(torch.cuda.get_device_properties(device).multi_processor_count)
    except Exception:  # noqa: BLE001 - no device to ask (dry runs)
        return H200_SMS


MI = 1 << 20
N16MI = 16 * MI  # elementwise sizes: 16 Mi elements (64 MiB per f32 array)
N128MI = 128 * MI  # real-size elementwise: 128 Mi elements (256 MiB per bf16 array)

# A real-size shape moves several times the H200's 60 MB L2 (a launch then runs from DRAM, not from the
# L2 that the previous launch left warm) or does enough work for about 100 us at the dense bf16 tensor-core
# peak (~990 TFLOP/s); the table check computes both with shape_torch. Real-size shapes added for that alone
# run in REAL_DTYPE only.
L2_BYTES = 60 * 10**6
REAL_BYTES = 4 * L2_BYTES
REAL_FLOPS = 10**11
REAL_DTYPE = "bf16"

# ============================================================================ corpus/cutile/*.py

P = "corpus/cutile/"


def _batched_matmul(c, b, m, n, k):
    A, B, C = c.randn(b, m, k), c.randn(b, k, n), c.poison(b, m, n)
    return Launch((cdiv(m, 64), cdiv(n, 64), b), (A, B, C, 64, 64, 32), (2,), flops=2 * b * m * n * k)


_case(P + "batched_matmul.py", "batched_matmul",
      {"16x1024x1024x1024 (BxMxNxK)": dict(b=16, m=1024, n=1024, k=1024),
       "ragged 7x1001x1000x1000": dict(b=7, m=1001, n=1000, k=1000)},
      _batched_matmul, real=("16x1024x1024x1024 (BxMxNxK)",),
      real_note="203 us in f16/bf16 on the H200 (results/gpu_h200.json): 34 GFLOP with 64x64x32 tiles")


def _gelu_flag(c, n, approx):
    x, y = c.randn(n, scale=3.0), c.poison(n)
    return Launch((cdiv(n, 1024),), (x, y, 1024, approx), (1,))


_case(P + "gelu_flag.py", "gelu",
      {"16Mi APPROX=True": dict(n=N16MI, approx=True),
       "16Mi APPROX=False": dict(n=N16MI, approx=False),
       "ragged 16Mi-3 APPROX=True": dict(n=N16MI - 3, approx=True),
       "ragged 16Mi-3 APPROX=False": dict(n=N16MI - 3, approx=False)},
      _gelu_flag, real_shapes={"128Mi APPROX=True": dict(n=N128MI, approx=True)},
      note="no launch function in the file: TILE=1024 chosen here (the manifest's default specialization is "
           "TILE=64)")


def _layer_norm_fwd(c, rows, affine):
    n = 256
    x, y = c.randn(rows, n), c.poison(rows, n)
    w, b = c.randn(n, scale=0.1, shift=1.0), c.randn(n, scale=0.1)
    return Launch((rows, 1, 1), (x, w, b, y, 1e-5, n, affine), (3,))


_case(P + "layer_norm.py", "layer_norm_fwd",
      {"65536x256 AFFINE=True": dict(rows=65536, affine=True),
       "65536x256 AFFINE=False": dict(rows=65536, affine=False),
       "ragged rows 65535x256 AFFINE=True": dict(rows=65535, affine=True)},
      _layer_norm_fwd, real=("65536x256 AFFINE=True",),
      real_note="about 670 us in f16/bf16 on the H200 (results/gpu_h200.json): one 256-element row per block",
      note="the row length must equal N=256 (the launch's constant): the kernel loads (1, N) without padding "
           "and divides by N, so only the row count is ragged")


def _matmul(c, m, n, k):
    A, B, C = c.randn(m, k), c.randn(k, n), c.poison(m, n)
    return Launch((cdiv(m, 128), cdiv(n, 128), 1), (A, B, C, 128, 128, 64), (2,), flops=2 * m * n * k)


_case(P + "matmul.py", "matmul",
      {"4096x4096x4096 (MxNxK)": dict(m=4096, n=4096, k=4096),
       "ragged 4093x3000x2000": dict(m=4093, n=3000, k=2000)},
      _matmul, real=("4096x4096x4096 (MxNxK)",))


def _partial_sum(c, m, n, axis):
    x = c.randn(m, n)
    part = c.poison(cdiv(m, 64), n) if axis == 0 else c.poison(m, cdiv(n, 128))
    return Launch((cdiv(m, 64), cdiv(n, 128), 1), (x, part, axis, 64, 128), (1,))


_case(P + "partial_reduce.py", "partial_sum",
      {"4096x8192 AXIS=0": dict(m=4096, n=8192, axis=0),
       "4096x8192 AXIS=1": dict(m=4096, n=8192, axis=1),
       "ragged 4093x8000 AXIS=0": dict(m=4093, n=8000, axis=0),
       "ragged 4093x8000 AXIS=1": dict(m=4093, n=8000, axis=1)},
      _partial_sum, real_shapes={"16384x16384 AXIS=0": dict(m=16384, n=16384, axis=0)},
      note="`partial` is (cdiv(M,64), N) for AXIS=0 and (M, cdiv(N,128)) for AXIS=1, as the store index in "
           "units of the (1,BN) / (BM,1) result tile implies (the corpus launch passes one array to both)")


def _rms_norm_fwd(c, rows):
    n = 1024
    x, w, y = c.randn(rows, n), c.randn(n, scale=0.1, shift=1.0), c.poison(rows, n)
    return Launch((rows, 1, 1), (x, w, y, 1e-6, n), (2,))


_case(P + "rms_norm.py", "rms_norm_fwd",
      {"16384x1024": dict(rows=16384), "ragged rows 16383x1024": dict(rows=16383)},
      _rms_norm_fwd, real=("16384x1024",),
      real_note="160 us in f16/bf16 on the H200 (results/gpu_h200.json): one 1024-element row per block",
      note="the row length must equal N=1024 (the launch's constant): the kernel divides by N and loads w "
           "without padding, so only the row count is ragged")


def _scaled_add(c, n):
    x, y, out = c.randn(n), c.randn(n), c.poison(n)
    return Launch((cdiv(n, 256), 1, 1), (x, y, out, 1.5, -0.75, 256), (2,))


_case(P + "scaled_add.py", "scaled_add",
      {"16Mi": dict(n=N16MI), "ragged 16Mi-5": dict(n=N16MI - 5)}, _scaled_add,
      real_shapes={"128Mi": dict(n=N128MI)})


def _row_softmax(c, rows, n):
    x, y = c.randn(rows, n, scale=2.0), c.poison(rows, n)
    return Launch((rows, 1, 1), (x, y, 1024), (1,))


_case(P + "softmax.py", "row_softmax",
      {"16384x1024": dict(rows=16384, n=1024), "ragged 16383x1000": dict(rows=16383, n=1000)},
      _row_softmax, real=("16384x1024",),
      real_note="198 us in f16/bf16 on the H200 (results/gpu_h200.json): one row per block",
      note="a row must fit in BLOCK_N=1024 (one tile per row, -inf padding): the ragged shape has an odd row "
           "count and rows shorter than BLOCK_N")


def _vector_add(c, n):
    a, b, out = c.randn(n), c.randn(n), c.poison(n)
    return Launch((cdiv(n, 1024), 1, 1), (a, b, out, 1024), (2,))


_case(P + "vector_add.py", "vector_add",
      {"16Mi": dict(n=N16MI), "ragged 16Mi-5": dict(n=N16MI - 5)}, _vector_add,
      real_shapes={"128Mi": dict(n=N128MI)})

# ============================================================================ corpus/cutile/workloads/*.py

W = "corpus/cutile/workloads/"


# ---------------------------------------------------------------- attention_sinks.py

def _attn_sinks(c, b, h, s, window, causal):
    d = 64
    Q, K, V = c.randn(b, h, s, d), c.randn(b, h, s, d), c.randn(b, h, s, d)
    sinks = c.randn(h, dtype=c.stat)
    O = c.poison(b, h, s, d)
    return Launch((cdiv(s, 64), b * h, 1), (Q, K, V, sinks, O, 1.0 / math.sqrt(d), 64, 64, d, window, causal),
                  (4,), flops=4 * d * b * h * attention_pairs(s, causal, window))


_case(W + "attention_sinks.py", "attn_sinks_fwd_kernel",
      {"8x16x2048 d64 causal": dict(b=8, h=16, s=2048, window=0, causal=True),
       "8x16x2048 d64 causal WINDOW=128": dict(b=8, h=16, s=2048, window=128, causal=True),
       "8x16x2048 d64 non-causal": dict(b=8, h=16, s=2048, window=0, causal=False),
       "ragged 4x16x2001 d64 causal": dict(b=4, h=16, s=2001, window=0, causal=True),
       "ragged 4x16x2001 d64 non-causal WINDOW=128": dict(b=4, h=16, s=2001, window=128, causal=False)},
      _attn_sinks, real=("8x16x2048 d64 non-causal",),
      note="(batch x heads x seq, head_dim D=64 as the launch fixes it); the last shape is the port's third "
           "variant (not causal, WINDOW > 0), which the corpus launch does not use; sinks take dtype E as in "
           "the port (the docstring says f32)")


# ---------------------------------------------------------------- batched_gemm.py

def _bmm_nt(c, b, m, n, k):
    A, Bt, C = c.randn(b, m, k), c.randn(b, n, k), c.poison(b, m, n)
    return Launch((cdiv(m, 64), cdiv(n, 64), b), (A, Bt, C, 64, 64, 32), (2,), flops=2 * b * m * n * k)


def _bmm_tn(c, b, m, n, k):
    At, B, C = c.randn(b, k, m), c.randn(b, k, n), c.poison(b, m, n)
    return Launch((cdiv(m, 64), cdiv(n, 128), b), (At, B, C, 64, 128, 32), (2,), flops=2 * b * m * n * k)


_case(W + "batched_gemm.py", "bmm_nt_kernel",
      {"16x1024x1024x1024 (BxMxNxK)": dict(b=16, m=1024, n=1024, k=1024),
       "ragged 7x1001x1000x1000": dict(b=7, m=1001, n=1000, k=1000)},
      _bmm_nt, note="A is (B, M, K), Bt is (B, N, K)", real=("16x1024x1024x1024 (BxMxNxK)",),
      real_note="203 us in f16/bf16 on the H200 (results/gpu_h200.json): 34 GFLOP with 64x64x32 tiles")
_case(W + "batched_gemm.py", "bmm_tn_kernel",
      {"16x1024x1024x1024 (BxMxNxK)": dict(b=16, m=1024, n=1024, k=1024),
       "ragged 7x1000x1000x1001": dict(b=7, m=1000, n=1000, k=1001)},
      _bmm_tn, note="At is (B, K, M) (read transposed with order=), B is (B, K, N)",
      real=("16x1024x1024x1024 (BxMxNxK)",),
      real_note="158 us in f16/bf16 on the H200 (results/gpu_h200.json): 34 GFLOP with 64x128x32 tiles")


# ---------------------------------------------------------------- cross_entropy.py

def _ce_inputs(c, rows, vocab):
    logits = c.randn(rows, vocab, scale=2.0)
    labels = c.randint(0, vocab, rows)
    labels.masked_fill_(c.randint(0, 8, rows) == 0, -100)  # about 1/8 of the rows are ignored
    return logits, labels


def _ce_fwd(c, rows, vocab):
    logits, labels = _ce_inputs(c, rows, vocab)
    loss, lse = c.poison(rows, dtype=c.f32), c.poison(rows, dtype=c.f32)
    return Launch((rows, 1, 1), (logits, labels, loss, lse, 4096, -100), (2, 3))


def _ce_bwd(c, rows, vocab):
    logits, labels = _ce_inputs(c, rows, vocab)
    lse = c.torch.logsumexp(logits.float(), dim=1).to(c.stat)
    dloss = c.rand(rows)
    dlogits = c.poison(rows, vocab)
    return Launch((rows, cdiv(vocab, 2048), 1), (logits, labels, lse, dloss, dlogits, 2048, -100), (4,))


_CE_SHAPES = {"1024x32768 (rows x vocab)": dict(rows=1024, vocab=32768),
              "ragged 511x50257 (GPT-2 vocab)": dict(rows=511, vocab=50257)}
_case(W + "cross_entropy.py", "cross_entropy_fwd_kernel", _CE_SHAPES, _ce_fwd,
      real_shapes={"2048x128256 (Llama-3 vocab)": dict(rows=2048, vocab=128256)},
      note="labels int32 with about 1/8 set to IGNORE_INDEX=-100 (the gather at column -100 must come back "
           "masked); the ragged vocabulary 50257 gives odd (unaligned) row strides")
_case(W + "cross_entropy.py", "cross_entropy_bwd_kernel", _CE_SHAPES, _ce_bwd,
      real_shapes={"1024x128256 (Llama-3 vocab)": dict(rows=1024, vocab=128256)},
      note="lse = logsumexp of the logits, passed in dtype E as the port types it (the forward writes f32); "
           "logits load without padding: the tail tile's garbage lanes are clipped on store")


# ---------------------------------------------------------------- decode_attention.py

_DECODE_CFG = {8: dict(bn=64, d=128, group=8, splits=8), 16: dict(bn=128, d=64, group=16, splits=16)}


def _decode_split(c, b, kv, seq, ragged, cfg):
    p = _DECODE_CFG[cfg]
    d, g, ns = p["d"], p["group"], p["splits"]
    Q = c.randn(b, kv * g, d)
    K, V = c.randn(b, kv, seq, d), c.randn(b, kv, seq, d)
    seq_lens = c.randint(1, seq + 1, b) if ragged else c.full((b,), seq, dtype=c.i32)
    O_part = c.poison(b, kv * g, ns, d, dtype=c.f32)
    lse_part = c.poison(b, kv * g, ns, dtype=c.f32)
    tokens = int(seq_lens.sum()) if ragged else b * seq  # keys attended, summed over the batch
    return Launch((b, kv, ns), (Q, K, V, seq_lens, O_part, lse_part, 1.0 / math.sqrt(d), p["bn"], d, g, ns),
                  (4, 5), flops=4 * d * kv * g * tokens)


_case(W + "decode_attention.py", "decode_attn_split_kv_kernel",
      {"b8 kv8 len4096 D128 GROUP8 SPLITS8": dict(b=8, kv=8, seq=4096, ragged=False, cfg=8),
       "b8 kv8 len4096 D64 GROUP16 SPLITS16": dict(b=8, kv=8, seq=4096, ragged=False, cfg=16),
       "ragged b7 kv8 len<=4000 D128 GROUP8 SPLITS8": dict(b=7, kv=8, seq=4000, ragged=True, cfg=8),
       "ragged b7 kv8 len<=4000 D64 GROUP16 SPLITS16": dict(b=7, kv=8, seq=4000, ragged=True, cfg=16)},
      _decode_split, real_shapes={"b32 kv8 len4096 D128 GROUP8 SPLITS8": dict(b=32, kv=8, seq=4096, ragged=False,
                                                                              cfg=8)},
      note="q heads = kv heads x GROUP; grid z = NUM_SPLITS (the corpus launch uses 8 also for NUM_SPLITS=16, "
           "which leaves half the splits unwritten); ragged: random seq_lens in [1, 4000], so some splits are "
           "empty (they write 0 and lse = -inf)")


def _decode_combine(c, b, h, cfg):
    p = _DECODE_CFG[cfg]
    d, ns = p["d"], p["splits"]
    O_part = c.randn(b, h, ns, d, dtype=c.stat)
    lse = c.randn(b, h, ns, dtype=c.f32, scale=2.0, shift=8.0)
    empty = c.rand(b, h, ns, dtype=c.f32) < 0.25  # empty splits have lse = -inf; split 0 never is
    empty[:, :, 0] = False
    lse_part = lse.masked_fill_(empty, -math.inf).to(c.stat)
    O = c.poison(b, h, d)
    return Launch((b, h, 1), (O_part, lse_part, O, ns, d), (2,))


_case(W + "decode_attention.py", "decode_attn_combine_kernel",
      {"b512 h64 SPLITS8 D128": dict(b=512, h=64, cfg=8),
       "b256 h128 SPLITS16 D64": dict(b=256, h=128, cfg=16),
       "ragged counts b511 h63 SPLITS8 D128": dict(b=511, h=63, cfg=8)},
      _decode_combine, real=("b512 h64 SPLITS8 D128",),
      real_note="414 us in f16/bf16 on the H200 (results/gpu_h200.json): one (batch, head) per block",
      note="NUM_SPLITS and D must equal the array dimensions (unpadded loads), so only batch and head counts "
           "are ragged; O_part and lse_part take dtype E as in the port (the split kernel writes f32); about "
           "1/4 of the lse values are -inf (empty splits)")


# ---------------------------------------------------------------- dropout.py

def _dropout(c, n):
    x, y = c.randn(n), c.poison(n)
    return Launch((cdiv(n, 1024), 1, 1), (x, y, DROPOUT_P, DROPOUT_SEED, 1024), (1,))


def _dropout_res(c, m, n):
    x, r, out = c.randn(m, n), c.randn(m, n), c.poison(m, n)
    return Launch((cdiv(m, 16), cdiv(n, 128), 1), (x, r, out, DROPOUT_P, DROPOUT_SEED, 16, 128), (2,))


_case(W + "dropout.py", "dropout_kernel",
      {"16Mi": dict(n=N16MI), "ragged 16Mi-7": dict(n=N16MI - 7)}, _dropout, real_shapes={"128Mi": dict(n=N128MI)},
      note=f"p={DROPOUT_P}, seed={DROPOUT_SEED}; the hash relies on wrapping int32 multiplication")
_case(W + "dropout.py", "dropout_add_residual_kernel",
      {"4096x4096": dict(m=4096, n=4096), "ragged 4095x4000": dict(m=4095, n=4000)}, _dropout_res,
      real_shapes={"16384x8192": dict(m=16384, n=8192)},
      note=f"p={DROPOUT_P}, seed={DROPOUT_SEED}; the hash relies on wrapping int32 multiplication")


# ---------------------------------------------------------------- flash_attention.py

_FA_CFG = {"d128 causal GROUP1": dict(bm=128, d=128, group=1, causal=True),
           "d128 non-causal GROUP4": dict(bm=128, d=128, group=4, causal=False),
           "d64 causal GROUP8": dict(bm=64, d=64, group=8, causal=True)}


def _flash(c, b, h, s, cfg):
    p = _FA_CFG[cfg]
    d, g = p["d"], p["group"]
    Q = c.randn(b, h, s, d)
    K, V = c.randn(b, h // g, s, d), c.randn(b, h // g, s, d)
    O = c.poison(b, h, s, d)
    return Launch((cdiv(s, p["bm"]), b * h, 1), (Q, K, V, O, 1.0 / math.sqrt(d), p["bm"], 64, d, g, p["causal"]),
                  (3,), flops=4 * d * b * h * attention_pairs(s, p["causal"], 0))


_case(W + "flash_attention.py", "flash_attn_fwd_kernel",
      {"8x16x2048 d128 causal GROUP1": dict(b=8, h=16, s=2048, cfg="d128 causal GROUP1"),
       "8x16x2048 d128 non-causal GROUP4": dict(b=8, h=16, s=2048, cfg="d128 non-causal GROUP4"),
       "8x16x2048 d64 causal GROUP8": dict(b=8, h=16, s=2048, cfg="d64 causal GROUP8"),
       "ragged 4x16x1999 d128 non-causal GROUP4": dict(b=4, h=16, s=1999, cfg="d128 non-causal GROUP4"),
       "ragged 4x16x2001 d64 causal GROUP8": dict(b=4, h=16, s=2001, cfg="d64 causal GROUP8")},
      _flash, real=("8x16x2048 d128 causal GROUP1", "8x16x2048 d128 non-causal GROUP4"),
      note="(batch x q-heads x seq); kv heads = q heads / QUERY_GROUP; the three constant sets of the corpus "
           "launch (BM, D, QUERY_GROUP, CAUSAL), BN=64")


# ---------------------------------------------------------------- geglu.py

def _geglu_fwd(c, m, i):
    gu, out = c.randn(m, 2 * i), c.poison(m, i)
    return Launch((cdiv(m, 8), cdiv(i, 256), 1), (gu, out, 8, 256), (1,))


def _geglu_bwd(c, m, i):
    gu, dout, dgu = c.randn(m, 2 * i), c.randn(m, i), c.poison(m, 2 * i)
    return Launch((cdiv(m, 8), cdiv(i, 256), 1), (gu, dout, dgu, 8, 256), (2,))


_GEGLU_SHAPES = {"4096x4096 (rows x I)": dict(m=4096, i=4096),
                 "ragged rows 1501x11008": dict(m=1501, i=11008)}
_GEGLU_NOTE = ("I must be a multiple of BN=256: the up half is read at column tile pn + cdiv(I, 256), so a "
               "ragged I would misalign it; only the row count is ragged (I=11008 as in Llama-7B)")
_GEGLU_REAL = {"8192x11008 (rows x I)": dict(m=8192, i=11008)}
_case(W + "geglu.py", "geglu_fwd_kernel", _GEGLU_SHAPES, _geglu_fwd, note=_GEGLU_NOTE, real_shapes=_GEGLU_REAL)
_case(W + "geglu.py", "geglu_bwd_kernel", _GEGLU_SHAPES, _geglu_bwd, note=_GEGLU_NOTE, real_shapes=_GEGLU_REAL)


# ---------------------------------------------------------------- gelu.py

def _gelu_tanh(c, n):
    x, y = c.randn(n, scale=3.0), c.poison(n)
    return Launch((cdiv(n, 1024), 1, 1), (x, y, 1024), (1,))


def _bias_gelu(c, m, n, bias):
    x, b, y = c.randn(m, n, scale=3.0), c.randn(n), c.poison(m, n)
    return Launch((cdiv(m, 32), cdiv(n, 128), 1), (x, b, y, 32, 128, bias), (2,))


_case(W + "gelu.py", "gelu_tanh_kernel",
      {"16Mi": dict(n=N16MI), "ragged 16Mi-1": dict(n=N16MI - 1)}, _gelu_tanh,
      real_shapes={"128Mi": dict(n=N128MI)})
_case(W + "gelu.py", "bias_gelu_kernel",
      {"4096x4096 HAS_BIAS=True": dict(m=4096, n=4096, bias=True),
       "4096x4096 HAS_BIAS=False": dict(m=4096, n=4096, bias=False),
       "ragged 4095x4000 HAS_BIAS=True": dict(m=4095, n=4000, bias=True)},
      _bias_gelu, real_shapes={"16384x8192 HAS_BIAS=True": dict(m=16384, n=8192, bias=True)})


# ---------------------------------------------------------------- gemm.py

_GEMM_CFG = {"128x128x64": (128, 128, 64, False), "64x64x32 bias": (64, 64, 32, True)}


def _gemm(c, m, n, k, cfg):
    bm, bn, bk, has_bias = _GEMM_CFG[cfg]
    A, B, C, bias = c.randn(m, k), c.randn(k, n), c.poison(m, n), c.randn(n)
    return Launch((cdiv(m, bm), cdiv(n, bn), 1), (A, B, C, bias, bm, bn, bk, has_bias), (2,), flops=2 * m * n * k)


_case(W + "gemm.py", "gemm_kernel",
      {"4096x4096x4096 BM128 BN128 BK64": dict(m=4096, n=4096, k=4096, cfg="128x128x64"),
       "4096x4096x4096 BM64 BN64 BK32 HAS_BIAS": dict(m=4096, n=4096, k=4096, cfg="64x64x32 bias"),
       "ragged 4093x3000x2000 BM128 BN128 BK64": dict(m=4093, n=3000, k=2000, cfg="128x128x64"),
       "ragged 4093x3000x2000 BM64 BN64 BK32 HAS_BIAS": dict(m=4093, n=3000, k=2000, cfg="64x64x32 bias")},
      _gemm, note="(MxNxK); the two constant sets of the corpus launch",
      real=("4096x4096x4096 BM128 BN128 BK64", "4096x4096x4096 BM64 BN64 BK32 HAS_BIAS"))


# ---------------------------------------------------------------- grouped_gemm.py

def _grouped_gemm(c, experts, tiles, rows, n, k):
    A = c.randn(rows, k)
    Wt = c.randn(experts, n, k)
    C = c.poison(rows, n)
    tile_expert_ids = c.torch.sort(c.randint(0, experts, tiles)).values.contiguous()
    return Launch((tiles, cdiv(n, 128), 1), (A, Wt, C, tile_expert_ids, 64, 128, 64), (2,), flops=2 * rows * n * k)


_case(W + "grouped_gemm.py", "moe_grouped_gemm_kernel",
      {"8 experts, 64 row tiles (4096 rows), N4096 K2048": dict(experts=8, tiles=64, rows=4096, n=4096, k=2048),
       "ragged 8 experts, 61 row tiles (3891 rows), N3000 K2000":
           dict(experts=8, tiles=61, rows=61 * 64 - 13, n=3000, k=2000)},
      _grouped_gemm, real=("8 experts, 64 row tiles (4096 rows), N4096 K2048",),
      real_note="164 us in f16/bf16 on the H200 (results/gpu_h200.json): 69 GFLOP",
      note="tile_expert_ids: sorted random expert ids (int32), one per 64-row tile (experts may own no tile); "
           "W is (experts, N, K); the ragged shape's last row tile is partly out of bounds")


# ---------------------------------------------------------------- kl_div.py

def _kl_div(c, rows, vocab, log_target):
    torch = c.torch
    log_pred = torch.log_softmax(c.randn(rows, vocab, dtype=c.f32, scale=2.0), dim=1).to(c.dt)
    t = c.randn(rows, vocab, dtype=c.f32, scale=2.0)
    target = (torch.log_softmax(t, dim=1) if log_target else torch.softmax(t, dim=1)).to(c.dt)
    loss = c.poison(rows, dtype=c.f32)
    return Launch((rows, 1, 1), (log_pred, target, loss, 2048, log_target), (2,))


_case(W + "kl_div.py", "kl_div_kernel",
      {"512x32768 LOG_TARGET=False": dict(rows=512, vocab=32768, log_target=False),
       "512x32768 LOG_TARGET=True": dict(rows=512, vocab=32768, log_target=True),
       "ragged 511x32000 LOG_TARGET=False": dict(rows=511, vocab=32000, log_target=False),
       "ragged 511x32000 LOG_TARGET=True": dict(rows=511, vocab=32000, log_target=True)},
      _kl_div, real_shapes={"4096x32768 LOG_TARGET=False": dict(rows=4096, vocab=32768, log_target=False)},
      note="(rows x vocab); log_pred = log_softmax, target = softmax (or log_softmax with LOG_TARGET)")


# ---------------------------------------------------------------- layer_norm.py (workloads)

def _ln_stats(c, x, eps):
    xf = x.float()
    mean = xf.mean(dim=1)
    rstd = c.torch.rsqrt(xf.var(dim=1, correction=0) + eps)
    return mean, rstd


def _ln_fwd(c, m, n, bn, bias):
    x, y = c.randn(m, n), c.poison(m, n)
    w, b = c.randn(n, scale=0.1, shift=1.0), c.randn(n, scale=0.1)
    mean, rstd = c.poison(m, dtype=c.f32), c.poison(m, dtype=c.f32)
    return Launch((cdiv(m, 4), 1, 1), (x, w, b, y, mean, rstd, 1e-5, 4, bn, bias), (3, 4, 5))


def _ln_bwd_dx(c, m, n):
    x, dy = c.randn(m, n), c.randn(m, n)
    w = c.randn(n, scale=0.1, shift=1.0)
    mean, rstd = _ln_stats(c, x, 1e-5)
    dx = c.poison(m, n)
    dwp, dbp = c.poison(cdiv(m, 4), n, dtype=c.f32), c.poison(cdiv(m, 4), n, dtype=c.f32)
    return Launch((cdiv(m, 4), 1, 1), (x, dy, w, mean.to(c.stat), rstd.to(c.stat), dx, dwp, dbp, 4, 4096),
                  (5, 6, 7))


def _ln_dwdb(c, parts, n):
    dwp, dbp = c.randn(parts, n, dtype=c.stat), c.randn(parts, n, dtype=c.stat)
    dw, db = c.poison(n), c.poison(n)
    return Launch((cdiv(n, 128), 1, 1), (dwp, dbp, dw, db, 32, 128), (2, 3))


_case(W + "layer_norm.py", "layer_norm_fwd_kernel",
      {"4096x4096 BN4096 HAS_BIAS": dict(m=4096, n=4096, bn=4096, bias=True),
       "16384x1024 BN1024 no bias": dict(m=16384, n=1024, bn=1024, bias=False),
       "ragged 4095x4000 BN4096 HAS_BIAS": dict(m=4095, n=4000, bn=4096, bias=True),
       "ragged 16383x1000 BN1024 no bias": dict(m=16383, n=1000, bn=1024, bias=False)},
      _ln_fwd, real_shapes={"32768x4096 BN4096 HAS_BIAS": dict(m=32768, n=4096, bn=4096, bias=True)},
      note="(rows x hidden); the hidden size must be <= BN (one column tile); the two constant sets "
           "of the corpus launch; mean and rstd are f32")
_case(W + "layer_norm.py", "layer_norm_bwd_dx_kernel",
      {"4096x4096": dict(m=4096, n=4096), "ragged 4095x4000": dict(m=4095, n=4000)},
      _ln_bwd_dx, real_shapes={"16384x4096": dict(m=16384, n=4096)},
      note="BM=4, BN=4096 (hidden <= 4096); mean/rstd are the real statistics of x, passed in dtype "
           "E as the port types them (the forward writes f32); dw/db partials are f32 "
           "(cdiv(rows, 4), hidden)")
_case(W + "layer_norm.py", "layer_norm_bwd_dwdb_kernel",
      {"2048x4096 partials": dict(parts=2048, n=4096), "ragged 2047x4000 partials": dict(parts=2047, n=4000)},
      _ln_dwdb, real_shapes={"32768x4096 partials": dict(parts=32768, n=4096)},
      note="(row blocks x hidden) partials in dtype E as the port types them (layer_norm_bwd_dx_kernel "
           "writes f32); only cdiv(hidden, 128) blocks, each looping over the row blocks")


# ---------------------------------------------------------------- mla_decode.py

def _mla(c, b, h, seq, ragged):
    dl, dr = 512, 64
    qn, qp = c.randn(b, h, dl), c.randn(b, h, dr)
    kv, kpe = c.randn(b, seq, dl), c.randn(b, seq, dr)
    seq_lens = c.randint(1, seq + 1, b) if ragged else c.full((b,), seq, dtype=c.i32)
    O = c.poison(b, h, dl)
    tokens = int(seq_lens.sum()) if ragged else b * seq  # keys attended, summed over the batch
    return Launch((b, cdiv(h, 16), 1), (qn, qp, kv, kpe, seq_lens, O, 1.0 / math.sqrt(dl + dr), 16, 32, dl, dr),
                  (5,), flops=2 * h * (2 * dl + dr) * tokens)


_case(W + "mla_decode.py", "mla_decode_kernel",
      {"b16 h128 len4096": dict(b=16, h=128, seq=4096, ragged=False),
       "ragged b15 h120 len<=4000": dict(b=15, h=120, seq=4000, ragged=True)},
      _mla, real_shapes={"b64 h128 len8192": dict(b=64, h=128, seq=8192, ragged=False)},
      note="DL=512, DR=64 (DeepSeek-V2/V3), BH=16, BN=32; ragged: random seq_lens in [1, 4000] and a head "
           "count that is not a multiple of BH (the last head block loads unpadded rows that are clipped)")


# ---------------------------------------------------------------- moe_align.py

def _moe_hist(c, ids):
    topk_ids = c.randint(0, 64, ids)
    counts = c.zeros(64, dtype=c.i32 if c.name == "i32" else c.dt)
    return Launch((cdiv(ids, 256), 1, 1), (topk_ids, counts, 256), (1,), reset=counts.zero_)


_case(W + "moe_align.py", "moe_expert_histogram_kernel",
      {"262144 tokens x top2, 64 experts": dict(ids=2 * 262144),
       "ragged 100003 tokens x top2, 64 experts": dict(ids=2 * 100003)},
      _moe_hist, dtypes=("f32",), real=("262144 tokens x top2, 64 experts",),
      real_note="158 us on the H200 (results/gpu_h200.json): 64 counters under atomic contention, not traffic",
      note="expert_counts accumulates (atomic_add), so it is zeroed before every launch; int32 is the real "
           "use (moe_align_offsets_kernel reads the counts as int32), but the port types expert_counts as "
           "the generic E (f16/bf16/f32: the literal 1 is weakly typed), so it refuses i32; f32 counts are "
           "exact integers (deterministic)")


def _moe_offsets(c, experts):
    counts = c.randint(0, 4096, experts)
    offsets, total = c.poison(experts, dtype=c.i32), c.poison(1, dtype=c.i32)
    return Launch((1, 1, 1), (counts, offsets, total, 64, 64), (1, 2))


_case(W + "moe_align.py", "moe_align_offsets_kernel",
      {"64 experts": dict(experts=64), "ragged 60 experts": dict(experts=60)},
      _moe_offsets, dtypes=("i32",), real=("64 experts",),
      real_note="no real size: one block over the launch's E=64 experts runs a few us at any input",
      note="one block over E=64 experts (the launch's constant): a launch is a few microseconds at any size; "
           "ragged: 60 experts (the (E,) load pads with zeros, the store clips)")


def _moe_sort(c, ids, permutation):
    torch = c.torch
    if permutation:
        # one assignment per "expert": every slot is 0, so the output is deterministic
        topk_ids = c.randperm(ids)
        offsets = c.randperm(ids)
        cursor = c.zeros(ids, dtype=c.i32)
        sorted_ids = c.poison(ids, dtype=c.i32)
        outputs = (2, 3)
    else:
        experts = 64
        topk_ids = c.randint(0, experts, ids)
        counts = torch.bincount(topk_ids.long(), minlength=experts)
        padded = (counts + 63) // 64 * 64
        offsets = (torch.cumsum(padded, dim=0) - padded).to(c.i32)
        cursor = c.zeros(experts, dtype=c.i32)
        sorted_ids = c.poison(ids + experts * 64, dtype=c.i32)
        outputs = (2,)
    return Launch((cdiv(ids, 256), 1, 1), (topk_ids, offsets, cursor, sorted_ids, 256, 2), outputs,
                  reset=cursor.zero_)


_case(W + "moe_align.py", "moe_sort_tokens_kernel",
      {"262144 tokens x top2, 64 experts (compares expert_cursor only)": dict(ids=2 * 262144, permutation=False),
       "ragged 1048573 ids, one expert each (deterministic)": dict(ids=1048573, permutation=True)},
      _moe_sort, dtypes=("i32",), real=("262144 tokens x top2, 64 experts (compares expert_cursor only)",),
      real_note="164 us on the H200 (results/gpu_h200.json): atomic cursors, not traffic",
      note="expert_cursor accumulates (zeroed before every launch). With 64 experts the order of token ids "
           "inside an expert's segment follows the atomic order, so sorted_token_ids is not compared there; "
           "the permutation shape gives every assignment its own expert (random permutations as ids and "
           "offsets), which makes sorted_token_ids deterministic and is compared; its length is odd, so the "
           "last block gathers padding (-1) ids")


# ---------------------------------------------------------------- moe_permute.py

def _moe_permute(c, tokens, slots, hidden):
    hidden_states = c.randn(tokens, hidden)
    ids = c.randint(0, tokens, slots)
    ids.masked_fill_(c.randint(0, 8, slots) == 0, -1)  # about 1/8 are padding slots (-1: rows of zeros)
    permuted = c.poison(slots, hidden)
    return Launch((cdiv(slots, 64), cdiv(hidden, 128), 1), (hidden_states, ids, permuted, 64, 128), (2,))


_case(W + "moe_permute.py", "moe_permute_rows_kernel",
      {"4096 tokens, 8192 slots, hidden 4096": dict(tokens=4096, slots=8192, hidden=4096),
       "ragged 4093 tokens, 8191 slots, hidden 4000": dict(tokens=4093, slots=8191, hidden=4000)},
      _moe_permute,
      real_shapes={"16384 tokens, 32768 slots (top2), hidden 4096": dict(tokens=16384, slots=32768, hidden=4096)},
      note="sorted_token_ids: random source tokens (int32), about 1/8 of them -1 (padding slots, gathered as "
           "zeros); BLOCK_M=64, BLOCK_D=128 as the launch; ragged: a slot count that is not a multiple of 64 "
           "(the id load pads with 0) and a hidden size that is not a multiple of 128 (the gather pads the "
           "columns past it, the store clips)")


# ---------------------------------------------------------------- persistent_gemm.py

_PGEMM_CFG = {"BM128 BN128 BK64 GROUP_M8": (128, 128, 64, 8), "BM64 BN128 BK32 GROUP_M4": (64, 128, 32, 4)}


def _pgemm(c, m, n, k, cfg):
    bm, bn, bk, gm = _PGEMM_CFG[cfg]
    A, B, C = c.randn(m, k), c.randn(k, n), c.poison(m, n)
    return Launch((_num_sms(c.torch, c.device), 1, 1), (A, B, C, bm, bn, bk, gm), (2,), flops=2 * m * n * k)


_case(W + "persistent_gemm.py", "persistent_gemm_kernel",
      {"4096x4096x4096 BM128 BN128 BK64 GROUP_M8": dict(m=4096, n=4096, k=4096, cfg="BM128 BN128 BK64 GROUP_M8"),
       "4096x4096x4096 BM64 BN128 BK32 GROUP_M4": dict(m=4096, n=4096, k=4096, cfg="BM64 BN128 BK32 GROUP_M4"),
       "ragged 4093x3000x2000 BM128 BN128 BK64 GROUP_M8":
           dict(m=4093, n=3000, k=2000, cfg="BM128 BN128 BK64 GROUP_M8"),
       "ragged 4093x3000x2000 BM64 BN128 BK32 GROUP_M4":
           dict(m=4093, n=3000, k=2000, cfg="BM64 BN128 BK32 GROUP_M4")},
      _pgemm, real=("4096x4096x4096 BM128 BN128 BK64 GROUP_M8", "4096x4096x4096 BM64 BN128 BK32 GROUP_M4"),
      note=f"(MxNxK); grid = the device's SM count ({H200_SMS} on an H200), as the corpus launch's "
                   "num_sms; the two constant sets of the corpus launch")


# ---------------------------------------------------------------- rms_norm.py (workloads)

def _rms_fwd(c, m, n, bn, res):
    x, r = c.randn(m, n), c.randn(m, n)
    w = c.randn(n, scale=0.1, shift=1.0)
    y, r_out, rstd = c.poison(m, n), c.poison(m, n), c.poison(m, dtype=c.f32)
    if res:
        return Launch((cdiv(m, 2), 1, 1), (x, r, w, y, r_out, rstd, 1e-6, 2, bn, res), (3, 4, 5))
    return Launch((cdiv(m, 2), 1, 1), (x, r, w, y, r_out, rstd, 1e-6, 2, bn, res), (3, 5), untouched=(4,))


def _rms_bwd(c, m, n):
    x, dy = c.randn(m, n), c.randn(m, n)
    w = c.randn(n, scale=0.1, shift=1.0)
    xf = x.float()
    rstd = c.torch.rsqrt((xf * xf).mean(dim=1) + 1e-6).to(c.stat)
    dx, dwp = c.poison(m, n), c.poison(cdiv(m, 2), n, dtype=c.f32)
    return Launch((cdiv(m, 2), 1, 1), (x, dy, w, rstd, dx, dwp, 2, 4096), (4, 5))


_case(W + "rms_norm.py", "rms_norm_fwd_kernel",
      {"4096x4096 BN4096 HAS_RESIDUAL": dict(m=4096, n=4096, bn=4096, res=True),
       "8192x2048 BN2048 no residual": dict(m=8192, n=2048, bn=2048, res=False),
       "ragged 4095x4000 BN4096 HAS_RESIDUAL": dict(m=4095, n=4000, bn=4096, res=True),
       "ragged 8191x2000 BN2048 no residual": dict(m=8191, n=2000, bn=2048, res=False)},
      _rms_fwd, real_shapes={"16384x4096 BN4096 HAS_RESIDUAL": dict(m=16384, n=4096, bn=4096, res=True)},
      note="(rows x hidden), hidden <= BN; the two constant sets of the corpus launch; without "
           "HAS_RESIDUAL residual_out is not written (declared untouched: it must stay as it was in "
           "both runs); "
           "rstd is f32")
def _rms_fwd_f32_weight(c, m, n, bn, res):
    """Mixed precision: f16/bf16 activations with an f32 weight (the port types w with its own generic E2)."""
    launch = _rms_fwd(c, m, n, bn, res)
    args = list(launch.args)
    args[2] = c.randn(n, dtype=c.f32, scale=0.1, shift=1.0)
    return Launch(launch.grid, tuple(args), launch.outputs, untouched=launch.untouched)


_case(W + "rms_norm.py", "rms_norm_fwd_kernel",
      {"4096x4096 BN4096 HAS_RESIDUAL, w f32": dict(m=4096, n=4096, bn=4096, res=True),
       "ragged 8191x2000 BN2048 no residual, w f32": dict(m=8191, n=2000, bn=2048, res=False)},
      _rms_fwd_f32_weight, dtypes=("f16", "bf16"),
      note="the weight in f32 and the activations in the case's dtype: each array keeps its dtype (E, E2)")
_case(W + "rms_norm.py", "rms_norm_bwd_kernel",
      {"4096x4096": dict(m=4096, n=4096), "ragged 4095x4000": dict(m=4095, n=4000)},
      _rms_bwd, real_shapes={"16384x4096": dict(m=16384, n=4096)},
      note="BM=2, BN=4096 (hidden <= 4096); rstd is the real statistic of x, passed in dtype E as the "
           "port types it (the forward writes f32); dw partials are f32 (cdiv(rows, 2), hidden)")


# ---------------------------------------------------------------- rope.py

def _rope(c, t, h):
    x = c.randn(t, h, 128)
    theta = c.rand(t, 64, dtype=c.f32)
    theta.mul_(2.0 * math.pi)
    cos, sin = c.torch.cos(theta).to(c.dt), c.torch.sin(theta).to(c.dt)
    out = c.poison(t, h, 128)
    return Launch((t, cdiv(h, 8), 1), (x, cos, sin, out, 8, 64), (3,))


_case(W + "rope.py", "rope_halves_kernel",
      {"4096 tokens x 32 heads x 128": dict(t=4096, h=32),
       "ragged 4095 tokens x 28 heads x 128": dict(t=4095, h=28)},
      _rope, real_shapes={"32768 tokens x 32 heads x 128": dict(t=32768, h=32)},
      note="head_dim must be 2*HALF=128 (the halves are tiles 0 and 1 of the last axis, loaded without "
           "padding); ragged: odd token count and 28 heads (not a multiple of BH=8; the last head block "
           "loads unpadded rows that are clipped)")


# ---------------------------------------------------------------- top_p.py

def _top_p(c, grid_rows, requests, width, vocab, tile):
    # each request's next-token probabilities sorted in descending order, zero past its vocabulary (padding)
    probs = c.torch.softmax(c.randn(requests, width, dtype=c.f32, scale=3.0), dim=1)
    probs[:, vocab:] = 0
    probs = c.torch.sort(probs, dim=1, descending=True).values.to(c.dt)
    kept = c.zeros(requests, width)
    return Launch((grid_rows, 1, 1), (probs, kept, requests, vocab, 0.9, tile, cdiv(width, tile)), (1,),
                  reset=kept.zero_)


_case(W + "top_p.py", "top_p_filter_kernel",
      {"64 requests x 32768 TILE_V 4096": dict(grid_rows=64, requests=64, width=32768, vocab=32768, tile=4096),
       "ragged 61 of 64 requests x 32000 of 32768 TILE_V 4096":
           dict(grid_rows=64, requests=61, width=32768, vocab=32000, tile=4096)},
      _top_p, real_shapes={"512 requests x 152064 TILE_V 4096":
                           dict(grid_rows=512, requests=512, width=152064, vocab=152064, tile=4096)},
      note="(requests x vocabulary), TOP_P = 0.9; the grid is the captured batch (programs past `requests` "
           "return at once); ragged: 3 programs past the batch and a vocabulary shorter than the row, whose "
           "last tiles are never walked (kept is zeroed before every launch)")


def _min_p(c, requests, width, tile):
    probs = c.torch.softmax(c.randn(requests, width, dtype=c.f32, scale=3.0), dim=1)
    probs = c.torch.sort(probs, dim=1, descending=True).values.to(c.dt)
    kept, mass = c.poison(requests, width), c.poison(requests, width)
    return Launch((requests, 1, 1), (probs, kept, mass, 0.05, tile, cdiv(width, tile)), (1, 2))


_case(W + "top_p.py", "min_p_filter_kernel",
      {"64 requests x 32768 TILE_V 4096": dict(requests=64, width=32768, tile=4096),
       "ragged 61 requests x 32000 TILE_V 4096": dict(requests=61, width=32000, tile=4096)},
      _min_p, real_shapes={"512 requests x 152064 TILE_V 4096": dict(requests=512, width=152064, tile=4096)},
      note="(requests x vocabulary), MIN_P = 0.05; ragged: a vocabulary that is not a multiple of TILE_V (the "
           "last tile's padding loads as zeros, the store clips)")


# ---------------------------------------------------------------- softmax.py (workloads)

def _softmax(c, m, n):
    x, y = c.randn(m, n, scale=2.0), c.poison(m, n)
    return Launch((cdiv(m, 4), 1, 1), (x, y, 4, 1024), (1,))


def _online_softmax(c, m, n, bm, bn):
    x, y = c.randn(m, n, scale=2.0), c.poison(m, n)
    return Launch((cdiv(m, bm), 1, 1), (x, y, bm, bn), (1,))


_case(W + "softmax.py", "softmax_kernel",
      {"16384x1024": dict(m=16384, n=1024), "ragged 16383x1000": dict(m=16383, n=1000)},
      _softmax, real=("16384x1024",),
      real_note="140 us in f16/bf16 on the H200 (results/gpu_h200.json): four 1024-element rows per block",
      note="a row must fit in BN=1024 (-inf padding): the ragged shape has an odd row count and rows "
           "shorter than BN")
_case(W + "softmax.py", "online_softmax_kernel",
      {"512x32768 BM1 BN4096": dict(m=512, n=32768, bm=1, bn=4096),
       "512x32768 BM2 BN1024": dict(m=512, n=32768, bm=2, bn=1024),
       "ragged 511x32000 BM1 BN4096": dict(m=511, n=32000, bm=1, bn=4096),
       "ragged 511x32000 BM2 BN1024": dict(m=511, n=32000, bm=2, bn=1024)},
      _online_softmax, real_shapes={"4096x32768 BM1 BN4096": dict(m=4096, n=32768, bm=1, bn=4096)},
      note="(rows x vocab); grid = cdiv(rows, BM) (the corpus launch uses rows for BM=2 too, "
           "whose extra blocks only touch rows out of bounds)")


# ---------------------------------------------------------------- split_k_gemm.py

def _splitk_partial(c, m, n, k, splits):
    A, B = c.randn(m, k), c.randn(k, n)
    Pt = c.poison(splits, m, n, dtype=c.f32)
    per_split = cdiv(cdiv(k, 128), splits)
    return Launch((cdiv(m, 16), cdiv(n, 128), splits), (A, B, Pt, per_split, 16, 128, 128), (2,),
                  flops=2 * m * n * k)


def _splitk_reduce(c, splits, m, n):
    Pt, C = c.randn(splits, m, n, dtype=c.stat), c.poison(m, n)
    return Launch((cdiv(m, 16), cdiv(n, 128), 1), (Pt, C, 16, 128), (1,))


_case(W + "split_k_gemm.py", "splitk_gemm_partial_kernel",
      {"32x4096x16384 SPLIT8": dict(m=32, n=4096, k=16384, splits=8),
       "ragged 23x4000x15000 SPLIT16": dict(m=23, n=4000, k=15000, splits=16)},
      _splitk_partial,
      real_shapes={"32x28672x8192 SPLIT8 (Llama-70B MLP up)": dict(m=32, n=28672, k=8192, splits=8)},
      note="(MxNxK), skinny decode-style M; k_tiles_per_split = cdiv(cdiv(K, 128), splits); in the ragged shape "
           "the last split has no K tile (it writes zeros); P is f32")
_case(W + "split_k_gemm.py", "splitk_reduce_kernel",
      {"8x1024x4096 (splits x M x N)": dict(splits=8, m=1024, n=4096),
       "ragged 7x1001x4000": dict(splits=7, m=1001, n=4000)},
      _splitk_reduce, real_shapes={"8x4096x8192": dict(splits=8, m=4096, n=8192)},
      note="M is larger than a decode batch so that one launch is measurable; P takes dtype E as the port types "
           "it (splitk_gemm_partial_kernel writes f32)")


# ---------------------------------------------------------------- swiglu.py

def _swiglu_fwd(c, m, n):
    g, u, out = c.randn(m, n), c.randn(m, n), c.poison(m, n)
    return Launch((cdiv(m, 16), cdiv(n, 256), 1), (g, u, out, 16, 256), (2,))


def _swiglu_bwd(c, m, n):
    g, u, do = c.randn(m, n), c.randn(m, n), c.randn(m, n)
    dg, du = c.poison(m, n), c.poison(m, n)
    return Launch((cdiv(m, 16), cdiv(n, 256), 1), (g, u, do, dg, du, 16, 256), (3, 4))


_SWIGLU_SHAPES = {"4096x4096": dict(m=4096, n=4096), "ragged 4095x4000": dict(m=4095, n=4000)}
_SWIGLU_REAL = {"16384x4096": dict(m=16384, n=4096)}
_case(W + "swiglu.py", "swiglu_fwd_kernel", _SWIGLU_SHAPES, _swiglu_fwd, real_shapes=_SWIGLU_REAL)
_case(W + "swiglu.py", "swiglu_bwd_kernel", _SWIGLU_SHAPES, _swiglu_bwd, real_shapes=_SWIGLU_REAL)

CASES.sort(key=lambda case: (case.path, case.kernel))


# ============================================================================ self-check

def _corpus_kernels(root) -> dict:
    """{(path, kernel): number of parameters} for every @ct.kernel of the corpus."""
    import ast

    out = {}
    files = sorted((root / "corpus" / "cutile").glob("*.py")) + sorted(
        (root / "corpus" / "cutile" / "workloads").glob("*.py"))
    for f in files:
        tree = ast.parse(f.read_text(), str(f))
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef):
                continue
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if isinstance(target, ast.Attribute) and target.attr == "kernel":
                    out[(f.relative_to(root).as_posix(), node.name)] = len(node.args.args)
    return out


def _check_table(root) -> list[str]:
    problems = []
    kernels = _corpus_kernels(root)
    seen = {}
    for case in CASES:
        key = (case.path, case.kernel)
        seen[key] = seen.get(key, 0) + 1
        if key not in kernels:
            problems.append(f"{case.path}::{case.kernel}: no such @ct.kernel in the corpus")
        if not (root / case.path).is_file():
            problems.append(f"{case.path}: file missing")
        if len(case.shapes) < 2 or len(set(case.shapes)) != len(case.shapes):
            problems.append(f"{case.kernel}: needs at least two distinct shapes, has {case.shapes}")
        if case.dtypes is not None and not set(case.dtypes) <= {"f16", "bf16", "f32", "i32"}:
            problems.append(f"{case.kernel}: unknown dtypes {case.dtypes}")
        if not callable(case.build):
            problems.append(f"{case.kernel}: build is not callable")
    for key in kernels:  # a kernel may have several cases (e.g. one more with mixed dtypes)
        if not seen.get(key):
            problems.append(f"{key[0]}::{key[1]}: no case")
    if [(c.path, c.kernel) for c in CASES] != sorted((c.path, c.kernel) for c in CASES):
        problems.append("CASES is not sorted by (path, kernel)")
    return problems


ALL_DTYPES = ("f16", "bf16", "f32")  # what the table check assumes for cases without dtypes (the ports' own)
BUILD_LIMIT = 1 << 30  # bytes of tensors in one build
GPU_CONTEXT = 1 << 30  # per worker process: CUDA context, cuTile modules, allocator slack (rough)
COMPARE_SCRATCH = 1 << 30  # gpu_check.py's chunked compare: 16 Mi elements in f64 and masks (about 0.7 GiB)


def configurations(cases=None, default=ALL_DTYPES) -> list[tuple]:
    """(case, shape, dtype) of every configuration, for ports that take the `default` dtypes."""
    return [(c, s, d) for c in (CASES if cases is None else cases) for s in c.shapes for d in c.dtypes_of(s, default)]


def config_peak(size: int, output_bytes: int, output_elems: int) -> int:
    """GPU memory one configuration needs in gpu_check.py: two builds, the clone of the outputs taken before the
    launch, the boolean masks of the untouched-output check and the compare's scratch."""
    return 2 * size + output_bytes + 4 * output_elems + COMPARE_SCRATCH


def shape_builds(cases=None) -> list[dict]:
    """Builds every configuration with tools/shape_torch.py (shapes only: no torch, no memory)."""
    import shape_torch

    out = []
    for case, shape, dt in configurations(cases):
        launch = case.build(shape, dt, shape_torch, None, "shape")
        tensors = {id(a): a for a in launch.args if isinstance(a, shape_torch.Tensor)}.values()
        outputs = [launch.args[i] for i in (*launch.outputs, *launch.untouched)]
        out.append(dict(case=case, shape=shape, dtype=dt, launch=launch, bytes=launch_bytes(launch),
                        flops=launch.flops, size=sum(t.numel() * t.element_size() for t in tensors),
                        peak=config_peak(sum(t.numel() * t.element_size() for t in tensors),
                                         sum(t.numel() * t.element_size() for t in outputs),
                                         sum(t.numel() for t in outputs))))
    return out


def is_real(b: dict) -> bool:
    return b["bytes"] >= REAL_BYTES or b["flops"] >= REAL_FLOPS


def _check_sizes(builds: list[dict]) -> list[str]:
    """Per-build limit, and every kernel has a real-size shape (computed, or explained by real_note)."""
    problems = []
    for b in builds:
        if b["size"] > BUILD_LIMIT:
            problems.append(f"{b['case'].kernel} [{b['shape']}] {b['dtype']}: {b['size'] / 2**20:.0f} MiB of "
                            f"tensors (limit {BUILD_LIMIT / 2**20:.0f} MiB)")
    real_kernels = set()
    for case in CASES:
        for label in case.real:
            if label not in case.shapes:
                problems.append(f"{case.kernel}: real shape {label!r} is not one of its shapes")
                continue
            mine = [b for b in builds if b["case"] is case and b["shape"] == label]
            if any(is_real(b) for b in mine) or case.real_note:
                real_kernels.add((case.path, case.kernel))
            else:
                worst = max(mine, key=lambda b: b["bytes"])
                problems.append(f"{case.kernel} [{label}]: labelled real but moves {worst['bytes'] / 1e6:.0f} MB "
                                f"(want >= {REAL_BYTES / 1e6:.0f}) and does {worst['flops'] / 1e9:.0f} GFLOP "
                                f"(want >= {REAL_FLOPS / 1e9:.0f}), and has no real_note")
    for key in sorted({(case.path, case.kernel) for case in CASES} - real_kernels):
        problems.append(f"{key[0]}::{key[1]}: no real-size shape")
    return problems


def memory_summary(builds: list[dict], workers: int) -> str:
    big = max(builds, key=lambda b: b["peak"])
    peak = workers * (big["peak"] + GPU_CONTEXT)
    return (f"largest build {max(b['size'] for b in builds) / 2**30:.2f} GiB; largest configuration footprint "
            f"{big['peak'] / 2**30:.2f} GiB ({big['case'].kernel} [{big['shape']}] {big['dtype']}); "
            f"bound with {workers} workers: {peak / 2**30:.1f} GiB")


def _check_builds(root, device_name: str) -> list[str]:
    """Builds every configuration (needs torch) and checks it against the kernel's signature."""
    import torch

    device = torch.device(device_name)
    kernels = _corpus_kernels(root)
    problems = []
    for case in CASES:
        for shape in case.shapes:
            for dt in case.dtypes_of(shape, ALL_DTYPES):
                where = f"{case.kernel} [{shape}] {dt}"
                gen = torch.Generator(device=device)
                gen.manual_seed(20261130)
                try:
                    launch = case.build(shape, dt, torch, gen, device)
                except Exception as e:  # noqa: BLE001
                    problems.append(f"{where}: build failed: {type(e).__name__}: {e}")
                    continue
                want = kernels.get((case.path, case.kernel))
                if len(launch.args) != want:
                    problems.append(f"{where}: {len(launch.args)} arguments, the kernel takes {want}")
                if not (1 <= len(launch.grid) <= 3 and all(isinstance(g, int) and g > 0 for g in launch.grid)):
                    problems.append(f"{where}: bad grid {launch.grid}")
                if not launch.outputs or any(not isinstance(launch.args[i], torch.Tensor) for i in launch.outputs):
                    problems.append(f"{where}: outputs {launch.outputs} do not all point at tensors")
                size = sum(a.numel() * a.element_size() for a in launch.args if isinstance(a, torch.Tensor))
                if size > BUILD_LIMIT:
                    problems.append(f"{where}: {size / 2**30:.2f} GiB of tensors (limit {BUILD_LIMIT / 2**30:.0f} GiB)")
                if dt == case.dtypes_of(shape, ALL_DTYPES)[-1]:
                    print(f"  {case.kernel:32s} {shape:60s} {dt:4s} grid={launch.grid} {size / 2**20:8.1f} MiB")
                del launch
    return problems


def main(argv=None) -> int:
    import argparse
    from pathlib import Path

    ap = argparse.ArgumentParser(description="checks the case table of tools/gpu_cases.py")
    ap.add_argument("--build", action="store_true", help="also build every configuration (needs torch)")
    ap.add_argument("--device", default="cuda", help="device for --build (default cuda)")
    ap.add_argument("--sizes", action="store_true", help="list every configuration's traffic, size and FLOPs")
    ap.add_argument("--workers", type=int, default=8, help="gpu_check.py's workers, for the memory bound")
    args = ap.parse_args(argv)
    root = Path(__file__).resolve().parents[1]
    problems = _check_table(root)
    kernels = _corpus_kernels(root)
    files = {c.path for c in CASES}
    configs = len(configurations())
    print(f"{len(CASES)} cases for {len(kernels)} corpus kernels in {len(files)} files; "
          f"{sum(len(c.shapes) for c in CASES)} shapes, {configs} configurations (shape x dtype)")
    for c in CASES:
        print(f"  {c.path:48s} {c.kernel:32s} {len(c.shapes)} shapes, dtypes {','.join(c.dtypes or ('all',))}")
    builds = shape_builds()
    problems += _check_sizes(builds)
    if args.sizes:
        for b in builds:
            rate = f"{b['flops'] / 1e9:9.0f} GFLOP" if b["flops"] else ""
            print(f"  {'R' if b['shape'] in b['case'].real else ' '} {b['case'].kernel:30s} {b['shape']:58s} "
                  f"{b['dtype']:4s} {b['bytes'] / 1e6:8.0f} MB moved {b['size'] / 2**20:7.0f} MiB built {rate}")
    print(memory_summary(builds, args.workers))
    if args.build:
        problems += _check_builds(root, args.device)
    for p in problems:
        print("PROBLEM:", p)
    print("ok" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
