"""Work counts of a Triton GPU-check case (tools/triton_reference.py / tools/triton_real_cases.py format) and the
rates they give: bytes moved and, for tl.dot kernels, floating-point (or int8) operations.

Bytes: a minimal-traffic model, every tensor touched once. An input the kernel only reads counts its size once;
an output initialised with `poison` is only written (its size once); any other output (initialised with data:
updated in place, accumulated by atomics) is read and written (its size twice). A case's `traffic_bytes`, where
given, replaces the model (gathers that read only some rows of a table). Caches, re-reads and the padding of
masked blocks are not counted: the rate is a lower bound on what the hardware moved.

FLOPs: 2 M N K per GEMM (M N the output's elements, K the case's scalar K); attention 4 B H S S D (QK^T and PV),
half of it when causal.
"""
from __future__ import annotations

import math

ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "int32": 4, "int64": 8, "int8": 1, "uint8": 1, "int16": 2, "bool": 1,
            "float8_e4m3fn": 1}

GEMMS = {"matmul.matmul_kernel", "persistent_matmul.persistent_matmul_kernel", "split_k_gemm.split_k_gemm_kernel",
         "descriptor_gemm.descriptor_gemm_kernel", "int8_matmul.int8_gemm_kernel",
         "int8_matmul.int8_gemm_rowscale_kernel", "host_descriptor_matmul.host_desc_matmul_kernel"}


def _ref(c: dict) -> str:
    return c.get("ref") or f"{c['module'].rsplit('.', 1)[1]}.{c['kernel']}"


def tensor_bytes(spec: dict) -> int:
    return math.prod(spec["shape"]) * ITEMSIZE[spec["dtype"]]


def case_bytes(c: dict) -> int:
    """Bytes read plus bytes written by one launch, by the minimal-traffic model above."""
    if "traffic_bytes" in c:
        return int(c["traffic_bytes"])
    total = 0
    for spec in c["inputs"]:
        n = tensor_bytes(spec)
        written_only = spec["name"] in c["outputs"] and spec["init"]["kind"] == "poison"
        total += n if spec["name"] not in c["outputs"] or written_only else 2 * n
    return total


def case_flops(c: dict) -> int | None:
    """Operations of the tl.dot work of one launch; None for kernels without tl.dot."""
    ref, shapes = _ref(c), {i["name"]: i["shape"] for i in c["inputs"]}
    consts = {**c.get("scalars", {}), **c.get("constexprs", {})}
    if ref in GEMMS:
        out = shapes[next(iter(c["outputs"]))]
        return 2 * math.prod(out) * int(consts["K"])
    if ref == "flash_attention.attn_fwd_kernel":
        b, h, s, d = shapes["q"]
        full = 4 * b * h * s * s * d
        return full // 2 if consts.get("IS_CAUSAL") else full
    if ref == "block_ptr_ops.bp_attn_fwd_kernel":
        bh, t, d = shapes["q"]
        return 4 * bh * t * t * d
    return None


def rates(c: dict, t_us: float | None) -> dict:
    """TB/s and TFLOP/s (None where not measured or not a tl.dot kernel) of one launch taking t_us."""
    if not t_us or t_us <= 0 or t_us != t_us:
        return {"tbps": None, "tflops": None}
    flops = case_flops(c)
    return {"tbps": case_bytes(c) / (t_us * 1e-6) / 1e12,
            "tflops": None if flops is None else flops / (t_us * 1e-6) / 1e12}


def fmt_rate(tbps: float | None, tflops: float | None) -> str:
    """The rate a table shows: TFLOP/s for tl.dot kernels, TB/s otherwise."""
    if tflops is not None:
        return f"{tflops:.0f} TFLOP/s" if tflops >= 10 else f"{tflops:.2f} TFLOP/s"
    return "-" if tbps is None else f"{tbps:.2f} TB/s"
