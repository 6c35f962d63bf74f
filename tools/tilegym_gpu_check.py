"""Runs TileGym's own operator functions on a GPU, once with cuTile Python and once routed to the Rust ports.

    tools/device_gpu_check.sh --script tools/tilegym_gpu_check.py --ports tg/python --results results/tilegym_h200
    python3 tools/tilegym_gpu_check.py --list      (the case labels; needs neither torch nor a GPU)

TileGym (installed unchanged, its autotuning off: TILEGYM_DISABLE_AUTOTUNE=1, so each call launches one fixed
configuration through `ct.launch`) is called through its operator functions (`tilegym.ops.cutile.*`). The same
call runs with the generated package's backend at "python" and at "cutile-rs" with `strict=True` (a launch of a
kernel without a current port raises: a case that passes ran every one of its launches on the ports). Outputs
are compared within per-dtype tolerances (relative Frobenius error); times are GPU times from CUDA events
around one operator call queued behind `torch.cuda._sleep` (host time stays out), the median of `--runs`
interleaved runs per backend, after warm-up. The host time per call (wall clock of the call, GPU idle) is
reported beside it. t_python / t_rust above 1: the ports are faster. Writes `<results>.md` and `<results>.json`,
rewritten after every case (a run cut short keeps what it measured); `wall_s` is a case's whole time, its
first calls' compilation (both backends) included.

Routing matches a launched kernel by its source file: TileGym must be importable from the path the ports'
manifest names (`source` in tg/manifest.json, relative to the crate), symbolic links resolved; the run prints
where the ports look and where TileGym was imported from, and says when they differ. For ports generated from
/tmp/tg/src/tilegym (sources `../../../tmp/tg/src/...`), on the GPU machine, from the repository root:

    pip install --no-index --no-deps --target /tmp/site .gpu/tilegym-*.whl
    d=$(realpath -m tg/../../../tmp/tg/src) && mkdir -p "$(dirname "$d")" && ln -sfn /tmp/site "$d"

A run near the device's 10-minute limit: `--budget-s 480` starts no case after 8 minutes (the rest are reported
as skipped; `--only a,b` runs them in a second call).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import sys
import time
import traceback
from pathlib import Path

os.environ.setdefault("TILEGYM_DISABLE_AUTOTUNE", "1")
TOLERANCE = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1e-2}
SLEEP_CYCLES = 400_000


# Operators of tilegym/ops/cutile that are NOT covered, and why (refusal codes from
# `cutile-transpile /tmp/tg/src/tilegym/ops/cutile -o OUT --no-compile-check --format json`):
#
# | operator (function)                                | kernel on its path                      | reason |
# |----------------------------------------------------|-----------------------------------------|--------|
# | gemma_attention (gemma_attention_cutile, prefill)   | _gemma_fmha_kernel                      | CT108: more than 16 structural variants |
# | group_gemm (group_gemm)                            | _group_gemm_kernel                      | CT100: a list of arrays (As/Bs/Cs) as a kernel argument |
# | mamba2 (mamba2_chunk_forward, mamba2_chunk_backward) | fwd_pass_state_kernel (both paths)    | CTR-STORE: a store with a permuted `order` has no cuTile Rust 0.5.0 form |
# | layer_norm_legacy.persistent_layer_norm            | _persistent_layer_norm_fwd_kernel       | CT101: `ct.sigmoid` has no rule |
# | experimental.nvfp4_quantize (tile_nvfp4_quantize)  | _nvfp4_quant_kernel (factory)           | CT102: `@ct.kernel(occupancy=<closure value>)` |
#
# Forward only where TileGym's backward raises NotImplementedError or runs in torch: attention_sink(_decode),
# flash_decode, gemma decode, mla*, sparse_mla, layer_norm*, dropout, relu, chunk/recurrent gated delta rule,
# transpose, softmax. rope's backward is its forward kernel (rotation by -sin): forward only. Kernels with a
# costly compile (attention backward, variants, windows) run in bfloat16 only, to keep the run near 6 minutes;
# `--only OP` runs one operator, `--dtype float16` one dtype.

DTYPES = ("float16", "bfloat16")


def _op(name):
    import importlib
    return importlib.import_module(f"tilegym.ops.cutile.{name}")


def _t(torch, *shape, dt, grad=False, scale=1.0):
    x = torch.randn(*shape, device="cuda", dtype=getattr(torch, dt) if isinstance(dt, str) else dt) * scale
    return x.requires_grad_(True) if grad else x


def _fwd_bwd(torch, fn, leaves, grad_out):
    """A call running fn() and its backward with grad_out; returns the output(s) and the leaves' grads."""
    def call():
        for x in leaves:
            x.grad = None
        out = fn()
        first = out[0] if isinstance(out, (tuple, list)) else out
        first.backward(grad_out)
        return (first, *(x.grad for x in leaves))
    return call


def _with_canon(call, canon):
    """canon(outputs) -> what is compared (for outputs whose order within a group is not defined)."""
    call.canon = canon
    return call


def _cases():
    """(operator, label, make) where make(torch) returns a zero-argument call giving the output tensor(s).
    Needs no torch to list: every tensor is made inside make."""
    out = []

    def add(op, label, make):
        out.append((op, label, make))

    for n in DTYPES:
        # ---- linear algebra
        for m, nn, k in ((4096, 4096, 4096), (8192, 8192, 8192)):
            for persistent in (False, True):
                def make(torch, m=m, nn=nn, k=k, n=n, persistent=persistent):
                    a, b = _t(torch, m, k, dt=n), _t(torch, k, nn, dt=n)
                    return lambda: _op("matmul").matmul(a, b, static_persistent=persistent)
                add("matmul", f"{m}x{nn}x{k} {n} persistent={persistent}", make)
        for q, m, nn, k in ((16, 1024, 1024, 1024), (8, 2048, 2048, 2048)):
            for persistent in (False, True):
                def make(torch, q=q, m=m, nn=nn, k=k, n=n, persistent=persistent):
                    a, b = _t(torch, q, m, k, dt=n), _t(torch, q, k, nn, dt=n)
                    return lambda: _op("bmm").bmm(a, b, static_persistent=persistent)
                add("bmm", f"{q}x{m}x{nn}x{k} {n} persistent={persistent}", make)
        for rows, cols in ((8192, 8192), (4096, 14336)) if n == "bfloat16" else ((8192, 8192),):
            def make(torch, rows=rows, cols=cols, n=n):
                x = _t(torch, rows, cols, dt=n)
                return lambda: _op("transpose").transpose(x)
            add("transpose", f"{rows}x{cols} {n}", make)

        def make(torch, n=n):  # Llama-3-8B MLP: 4096 -> 2 x 14336 (SiLU gate) -> 4096; fixed tiles, no tuning
            x = _t(torch, 4096, 4096, dt=n, scale=0.1)
            wa, wn = _t(torch, 14336, 4096, dt=n, scale=0.02), _t(torch, 14336, 4096, dt=n, scale=0.02)
            w2 = _t(torch, 4096, 14336, dt=n, scale=0.02)
            impl = _op("linear_gluact_linear")._linear_gluact_linear_cutile_impl
            return lambda: impl(x, wa, wn, w2, "silu", None, use_autotune=False)
        add("linear_gluact_linear", f"4096x4096->14336->4096 silu {n}", make)

        # ---- activations and elementwise
        for rows, hidden in ((4096, 4096), (8192, 11008)):
            def make(torch, rows=rows, hidden=hidden, n=n):
                x = _t(torch, rows, 2 * hidden, dt=n)
                return lambda: _op("silu_and_mul").silu_and_mul(x)
            add("silu_and_mul", f"{rows}x{2 * hidden} {n}", make)

            def make_sw(torch, rows=rows, hidden=hidden, n=n):
                a, b = _t(torch, rows, hidden, dt=n, grad=True), _t(torch, rows, hidden, dt=n, grad=True)
                return _fwd_bwd(torch, lambda: _op("swiglu").swiglu(a, b), (a, b), _t(torch, rows, hidden, dt=n))
            add("swiglu fwd+bwd", f"{rows}x{hidden} {n}", make_sw)

        def make(torch, n=n):
            x = _t(torch, 4096, 2 * 14336, dt=n, grad=True)
            fn = lambda: _op("silu_and_mul").silu_and_mul(x)  # noqa: E731
            return _fwd_bwd(torch, fn, (x,), _t(torch, 4096, 14336, dt=n))
        add("silu_and_mul fwd+bwd", f"4096x{2 * 14336} {n}", make)
        for approx in ("none", "tanh") if n == "bfloat16" else ("tanh",):
            def make(torch, n=n, approx=approx):
                x = _t(torch, 8192, 11008, dt=n, grad=True)
                fn = lambda: _op("activation.gelu").gelu(x, approximate=approx)  # noqa: E731
                return _fwd_bwd(torch, fn, (x,), _t(torch, 8192, 11008, dt=n))
            add("gelu fwd+bwd", f"8192x11008 {n} approximate={approx}", make)

        def make(torch, n=n):
            x = _t(torch, 8192, 2 * 11008, dt=n, grad=True)
            fn = lambda: _op("activation.geglu").geglu(x, dim=-1, approximate="tanh")  # noqa: E731
            return _fwd_bwd(torch, fn, (x,), _t(torch, 8192, 11008, dt=n))
        add("geglu fwd+bwd", f"8192x{2 * 11008} {n} approximate=tanh", make)

        def make(torch, n=n):
            x = _t(torch, 8192, 11008, dt=n)
            return lambda: _op("activation.relu").relu(x)
        add("relu", f"8192x11008 {n}", make)

        def make(torch, n=n):
            x = _t(torch, 16384, 4096, dt=n)
            return lambda: _op("dropout").dropout(x, 1234, p=0.1)
        add("dropout", f"16384x4096 p=0.1 {n}", make)

        # ---- normalization, softmax
        for rows, cols in ((4096, 4096), (8192, 8192)):
            for tma in (False, True):
                def make(torch, rows=rows, cols=cols, n=n, tma=tma):
                    x = _t(torch, rows, cols, dt=n)
                    return lambda: _op("softmax").softmax(x, use_tma=tma)
                add("softmax", f"{rows}x{cols} {n} tma={tma}", make)
            for mode in (None, "static_persistent"):
                def make(torch, rows=rows, cols=cols, n=n, mode=mode):
                    x, w = _t(torch, rows, cols, dt=n), _t(torch, cols, dt=n)
                    return lambda: _op("rms_norm").rms_norm(x, (cols,), w, 1e-6, mode=mode)
                add("rms_norm", f"{rows}x{cols} {n} mode={mode}", make)

        def make(torch, n=n):
            x, w = _t(torch, 8192, 4096, dt=n, grad=True), _t(torch, 4096, dt=n, grad=True)
            fn = lambda: _op("rms_norm").rms_norm(x, (4096,), w, 1e-6)  # noqa: E731
            return _fwd_bwd(torch, fn, (x, w), _t(torch, 8192, 4096, dt=n))
        add("rms_norm fwd+bwd", f"8192x4096 {n}", make)
        # over the last axis of tokens (the gather kernel: 1 element per channel) and over C of an NCHW image
        # batch (the tiled kernel: 128 x 128 contiguous elements per channel)
        for shape in ((16384, 4096), (16, 32, 128, 128)):
            def make(torch, shape=shape, n=n):
                x, w, b = _t(torch, *shape, dt=n), _t(torch, shape[1], dt=n), _t(torch, shape[1], dt=n)
                return lambda: _op("layer_norm").layer_norm(x, 1, 2, w, b, 1e-5)
            add("layer_norm", f"{'x'.join(map(str, shape))} over axis 1 {n}", make)

        def make(torch, n=n):
            x, w, b = _t(torch, 16384, 4096, dt=n), _t(torch, 4096, dt=n), _t(torch, 4096, dt=n)
            return lambda: _op("layer_norm_legacy").layer_norm_legacy(x, (4096,), w, b, 1e-5)
        add("layer_norm_legacy", f"16384x4096 {n}", make)

        def make(torch, n=n):  # in place on q and k: each call rotates fresh copies
            q, k = _t(torch, 4, 32, 4096, 128, dt=n), _t(torch, 4, 8, 4096, 128, dt=n)
            cos, sin = _t(torch, 1, 4096, 128, dt=n), _t(torch, 1, 4096, 128, dt=n)
            return lambda: _op("rope").apply_rope_base(q.clone(), k.clone(), cos, sin)
        add("rope", f"q 4x32x4096x128 k 4x8x4096x128 {n}", make)

        # ---- attention, prefill ((batch, heads, seq, dim) unless said)
        for causal in (True, False) if n == "bfloat16" else (True,):
            def make(torch, n=n, causal=causal):
                q, k, v = (_t(torch, 4, 32, 4096, 128, dt=n) for _ in range(3))
                return lambda: _op("attention").tile_fmha(q, k, v, is_causal=causal)
            add("attention", f"4x32x4096x128 {n} causal={causal}", make)

        def make(torch, n=n):
            q, k, v = (_t(torch, 2, 16, 2048, 128, dt=n, grad=True) for _ in range(3))
            fn = lambda: _op("attention").tile_fmha_with_backward(q, k, v, is_causal=True)  # noqa: E731
            return _fwd_bwd(torch, fn, (q, k, v), _t(torch, 2, 16, 2048, 128, dt=n))
        if n == "bfloat16":  # four kernels to compile: one dtype
            add("attention fwd+bwd", f"2x16x2048x128 {n} causal=True", make)
        for layout in ("bnsd", "nsbd") if n == "bfloat16" else ("bnsd",):
            def make(torch, n=n, layout=layout):
                shape = (4, 32, 4096, 128) if layout == "bnsd" else (32, 4096, 4, 128)
                q, k, v = (_t(torch, *shape, dt=n) for _ in range(3))
                return lambda: _op("attention_variant").fmha_variant_cutile(q, k, v, is_causal=True, layout=layout)
            add("attention_variant", f"B4 H32 S4096 D128 {layout} {n} causal", make)

        def make(torch, n=n):
            q, k, v = (_t(torch, 4, 32, 4096, 128, dt=n) for _ in range(3))
            lens = torch.tensor([4096, 3000, 2048, 1000], device="cuda", dtype=torch.int32)
            return lambda: _op("attention_varlen").tile_fmha_varlen(q, k, v, is_causal=True, q_lens=lens, kv_lens=lens)
        add("attention_varlen", f"4x32x4096x128 lens 4096/3000/2048/1000 {n} causal", make)
        for ctx, window in ((1024, None), (4096, None), (4096, 128)):
            def make(torch, ctx=ctx, window=window, n=n):
                q = _t(torch, 1, ctx, 8, 8, 64, dt=n)
                k, v = _t(torch, 1, ctx, 8, 64, dt=n), _t(torch, 1, ctx, 8, 64, dt=n)
                sinks = _t(torch, 64, dt=n)
                return lambda: _op("attention_sink").attention_sink(q, k, v, sinks, sm_scale=0.125,
                                                                   sliding_window=window)
            add("attention_sink", f"1x{ctx}x8x8x64 {n} window={window}", make)

        def make(torch, n=n):  # DeepSeek-V2-Lite-like prefill: 16 heads, nope 128 + rope 64, one shared kpe
            q, k, v = (_t(torch, 2, 16, 4096, 128, dt=n) for _ in range(3))
            qpe, kpe = _t(torch, 2, 16, 4096, 64, dt=n), _t(torch, 2, 1, 4096, 64, dt=n)
            return lambda: _op("mla").tile_mla(q, k, v, qpe, kpe, True, None)
        add("mla", f"2x16x4096 d128+pe64 {n} causal", make)

        def make(torch, n=n):  # Mistral: 32 q heads, 8 kv heads, window 4096 (the kernel is f16 only)
            q = _t(torch, 4, 32, 8192, 128, dt=n)
            k, v = _t(torch, 4, 8, 8192, 128, dt=n), _t(torch, 4, 8, 8192, 128, dt=n)
            return lambda: _op("experimental.swa_attention").tile_swa_attention(q, k, v, 4096)
        if n == "float16":
            add("swa_attention", f"q 4x32x8192x128 kv 8 heads window=4096 {n}", make)

        # ---- attention, decode
        for batch, kv_len in ((32, 8192), (8, 32768)):
            def make(torch, batch=batch, kv_len=kv_len, n=n):
                q = _t(torch, batch, 32, 1, 128, dt=n)
                k, v = _t(torch, batch, 8, kv_len, 128, dt=n), _t(torch, batch, 8, kv_len, 128, dt=n)
                return lambda: _op("flash_decode").fmha_decode(q, k, v, None)
            add("flash_decode", f"B{batch} q32/kv8 heads kv_len={kv_len} d128 {n}", make)

        def make(torch, n=n):
            att = _t(torch, 32, 32, 16, 128, dt=n)
            lse = _t(torch, 32, 32, 16, dt="float32")
            o = torch.empty(32, 32, 128, device="cuda", dtype=getattr(torch, n))

            def call():
                _op("splitk_reduce").splitk_reduce(att, lse, o, 8192)
                return o
            return call
        add("splitk_reduce", f"B32 H32 splits16 d128 {n}", make)
        for window, cap in ((0, 50.0), (4096, 50.0)) if n == "bfloat16" else ((0, 50.0),):
            def make(torch, window=window, cap=cap, n=n):  # Gemma-2-9B: 16 q / 8 kv heads, head dim 256
                q = _t(torch, 32, 16, 1, 256, dt=n)
                k, v = _t(torch, 32, 8, 8192, 256, dt=n), _t(torch, 32, 8, 8192, 256, dt=n)
                return lambda: _op("gemma_attention_decode").gemma_fmha_decode(q, k, v, None, window_size=window,
                                                                              soft_cap=cap)
            add("gemma_attention_decode", f"B32 q16/kv8 kv_len=8192 d256 window={window} softcap={cap} {n}", make)
        for window in (None, 128) if n == "bfloat16" else (None,):
            # gpt-oss: 64 q heads, 8 kv heads, head dim 64; batch 4: TileGym splits the KV over SMs // (B * kv heads)
            # (0 splits, a ZeroDivisionError in its own host code, for B32 on a 132-SM GPU)
            def make(torch, window=window, n=n):
                q = _t(torch, 4, 1, 8, 8, 64, dt=n)
                k, v = _t(torch, 4, 8192, 8, 64, dt=n), _t(torch, 4, 8192, 8, 64, dt=n)
                sinks = _t(torch, 64, dt=n)
                start_q = torch.tensor([8191], device="cuda", dtype=torch.long)
                return lambda: _op("attention_sink_decode").attention_sink_decode(q, k, v, sinks, 0.125, window,
                                                                                 start_q)
            add("attention_sink_decode", f"B4 kv_len=8192 8x8 heads d64 window={window} {n}", make)
        for split in ("mla_decoding", "mla_decoding_split_kv"):
            def make(torch, split=split, n=n):  # DeepSeek-V3 absorbed decode: 128 heads, kv_lora 512 + rope 64
                q, qpe = _t(torch, 32, 128, 512, dt=n), _t(torch, 32, 128, 64, dt=n)
                kv, kpe = _t(torch, 32, 8192, 512, dt=n), _t(torch, 32, 8192, 64, dt=n)
                return lambda: getattr(_op(split), split)(q, qpe, kv, kpe, None)
            add(split, f"B32 H128 kv_len=8192 d512+pe64 {n}", make)

        # ---- linear attention / state space
        def make(torch, n=n):  # Qwen3.5 gated delta net prefill: 32 heads (k repeated), 128/128, g f32
            q, k, v = (_t(torch, 2, 4096, 32, 128, dt=n) for _ in range(3))
            g = -torch.nn.functional.softplus(_t(torch, 2, 4096, 32, dt="float32"))
            beta = torch.sigmoid(_t(torch, 2, 4096, 32, dt=n))
            return lambda: _op("chunk_gated_delta_rule").chunk_gated_delta_rule(
                q, k, v, g, beta, output_final_state=True, use_qk_l2norm_in_kernel=True)
        add("chunk_gated_delta_rule", f"2x4096x32 heads k128 v128 {n}", make)

        def make(torch, n=n):  # the decode step of the same layer, with its f32 recurrent state
            q, k, v = (_t(torch, 32, 1, 32, 128, dt=n) for _ in range(3))
            g = -torch.nn.functional.softplus(_t(torch, 32, 1, 32, dt="float32"))
            beta = torch.sigmoid(_t(torch, 32, 1, 32, dt=n))
            state = _t(torch, 32, 32, 128, 128, dt="float32", scale=0.1)
            return lambda: _op("recurrent_gated_delta_rule").recurrent_gated_delta_rule(
                q, k, v, g, beta, initial_state=state, output_final_state=True, use_qk_l2norm_in_kernel=True)
        add("recurrent_gated_delta_rule", f"decode B32 32 heads k128 v128 {n}", make)

        # ---- mixture of experts
        def make(torch, n=n):  # DeepSeek-V2-Lite experts: 64 experts, top-6, hidden 2048, 2 x 1408 gate-up
            tokens, experts, top_k, hidden, inter2 = 4096, 64, 6, 2048, 2816
            a = _t(torch, tokens, hidden, dt=n, scale=0.1)
            w1 = _t(torch, experts, inter2, hidden, dt=n, scale=0.02)
            ids = torch.rand(tokens, experts, device="cuda").argsort(-1)[:, :top_k].to(torch.int32)
            weights = torch.softmax(_t(torch, tokens, top_k, dt="float32"), -1).to(getattr(torch, n))
            c = torch.zeros(tokens, top_k, inter2, device="cuda", dtype=getattr(torch, n))
            config = {"TILE_SIZE_M": 128, "TILE_SIZE_N": 128, "TILE_SIZE_K": 64, "GROUP_SIZE_M": 32}

            def call():
                sorted_ids, expert_ids, n_post, _, _ = _op("moe_align_block").moe_align_block_size(ids, 128, experts)
                _op("moe").invoke_fused_moe_kernel(a, w1, c, None, None, weights, ids, sorted_ids, expert_ids,
                                                   n_post, False, top_k, config, compute_type=getattr(torch, n),
                                                   use_fp8_w8a8=False)
                return c
            return call
        add("moe", f"align + fused gate-up: 4096 tokens 64 experts top6 2048->2816 {n}", make)

        def make(torch, n=n):  # the MoE down projection's activation gradient, SwiGLU, routed as above
            tokens, experts, top_k, hidden, inter = 4096, 64, 6, 2048, 1408
            ids = torch.rand(tokens, experts, device="cuda").argsort(-1)[:, :top_k].reshape(-1)
            order = ids.argsort(stable=True)  # grouped position -> flat (token, slot) index
            counts = torch.bincount(ids, minlength=experts)
            offsets = torch.cat([counts.new_zeros(1), counts.cumsum(0)]).to(torch.int32)
            s_idx, x_idx = order.to(torch.int32), (order // top_k).to(torch.int32)
            dout = _t(torch, tokens, hidden, dt=n, scale=0.1)
            h = _t(torch, tokens * top_k, 2 * inter, dt=n)
            w2 = _t(torch, experts, inter, hidden, dt=n, scale=0.02)
            scores = torch.rand(tokens * top_k, device="cuda").to(getattr(torch, n))
            dh, a_prime = torch.empty_like(h), torch.empty(tokens * top_k, inter, device="cuda", dtype=h.dtype)
            ds = torch.zeros(tokens * top_k, device="cuda", dtype=torch.float32)
            most = int(counts.max())

            def call():
                ds.zero_()  # accumulated atomically
                _op("moe_actgrad_bwd").moe_actgrad_bwd(dout, h, w2, dh, ds, None, None, a_prime, scores, offsets,
                                                       x_idx, s_idx, "swiglu", most)
                return dh, a_prime, ds
            return call
        add("moe_actgrad_bwd", f"swiglu 4096 tokens 64 experts top6 2048<-1408 {n}", make)

        def make(torch, n=n):  # mHC with 4 streams of 4096: x (M, 4*4096) @ w (4*4096, 2*4 + 4*4), f32 bias
            x = _t(torch, 4096, 4 * 4096, dt=n, scale=0.1)
            w = _t(torch, 4 * 4096, 24, dt=n, scale=0.02)
            bias = _t(torch, 24, dt="float32", scale=0.1)
            cfg = {"TILE_SIZE_M": 64, "TILE_SIZE_N": 32, "TILE_SIZE_K": 128, "SPLIT_K": 4, "GROUP_SIZE_M": 8}
            mod = _op("experimental.mhc")
            return lambda: mod.mhc_gemm_rms_scale(x, w, 4, 0.5, 0.5, 0.5, bias, cfg=dict(cfg))
        add("mhc_gemm_rms_scale", f"4096x16384 -> 24 (n=4) split_k=4 {n}", make)

        def make(torch, n=n):
            x, f_out = _t(torch, 4096, 4 * 4096, dt=n), _t(torch, 4096, 4096, dt=n)
            y = _t(torch, 4096, 24, dt=n, scale=0.5)
            return lambda: _op("experimental.mhc").mhc_apply_residual(x, f_out, y, 4)
        add("mhc_apply_residual", f"4096 rows n=4 C=4096 {n}", make)

        def make(torch, n=n):  # DeepSeek-V3.2 sparse attention prefill: 16 heads, one latent kv head, top-1024
            b, heads, seq, topk = 1, 16, 2048, 1024
            q, qpe = _t(torch, b, heads, seq, 512, dt=n), _t(torch, b, heads, seq, 64, dt=n)
            kv, kpe = _t(torch, b, 1, seq, 512, dt=n), _t(torch, b, 1, seq, 64, dt=n)
            pos = torch.arange(seq, device="cuda").view(1, seq, 1, 1)  # each query picks among positions <= its own
            idx = (torch.rand(b, seq, 1, topk, device="cuda") * (pos + 1)).to(torch.int32)
            return lambda: _op("experimental.sparse_mla").tile_sparse_mla(
                q, kv, kv, idx, qpe, kpe, kernel_configs={"TILE_H": 16, "TILE_N": 64})
        if n == "bfloat16":
            add("sparse_mla", f"B1 H16 S2048 top1024 d512+pe64 {n}", make)

        def make(torch, n=n):  # M x N x K = 4096 x 4096 x 7168, 128x128 blocks (DeepSeek-V3 style)
            m, nn, k = 4096, 4096, 7168  # n: the output's dtype (TileGym's default is float16)
            a = _t(torch, m, k, dt="float32").to(torch.float8_e4m3fn)
            b = _t(torch, nn, k, dt="float32").to(torch.float8_e4m3fn)
            a_s = torch.rand(m, k // 128, device="cuda") + 0.5
            b_s = torch.rand(nn // 128, k // 128, device="cuda") + 0.5
            cfg = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 16, "num_ctas": 1,
                   "occupancy": 2}
            return lambda: _op("fp8_quantization_matmul").w8a8_block_fp8_matmul(
                a, b, a_s, b_s, [128, 128], kernel_configs=cfg, output_dtype=getattr(torch, n))
        add("fp8_quantization_matmul", f"e4m3 4096x4096x7168 blocks 128x128 out {n}", make)

        def make(torch, n=n):  # forward-only chunked linear + cross entropy (vocab 32000)
            h = _t(torch, 8192, 4096, dt=n, scale=0.1)
            w = _t(torch, 32000, 4096, dt=n, scale=0.02)
            target = torch.randint(0, 32000, (8192,), device="cuda")
            return lambda: _op("experimental.fused_linear_cross_entropy").fused_linear_cross_entropy(h, w, target)
        add("fused_linear_cross_entropy", f"8192x4096 vocab 32000 {n}", make)

    for n in ("float32",):  # the output dtypes beside the loop's above
        def make(torch, n=n):
            a = _t(torch, 4096, 7168, dt="float32").to(torch.float8_e4m3fn)
            b = _t(torch, 4096, 7168, dt="float32").to(torch.float8_e4m3fn)
            a_s, b_s = torch.rand(4096, 56, device="cuda") + 0.5, torch.rand(32, 56, device="cuda") + 0.5
            cfg = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 16, "num_ctas": 1,
                   "occupancy": 2}
            return lambda: _op("fp8_quantization_matmul").w8a8_block_fp8_matmul(
                a, b, a_s, b_s, [128, 128], kernel_configs=cfg, output_dtype=getattr(torch, n))
        add("fp8_quantization_matmul", f"e4m3 4096x4096x7168 blocks 128x128 out {n}", make)

    for tokens, experts in ((4096, 64), (16384, 256)):
        def make(torch, tokens=tokens, experts=experts):
            ids = torch.rand(tokens, experts, device="cuda").argsort(-1)[:, :8].to(torch.int32)
            call = lambda: _op("moe_align_block").moe_align_block_size(ids, 128, experts)  # noqa: E731
            # the order of token ids within an expert's block is not defined: compare them sorted; expert_ids
            # (torch.empty) is written only for the blocks below num_tokens_post_pad: the rest is whatever the
            # allocator's memory held, different between the two runs
            return _with_canon(call, lambda out: (out[0].sort().values, out[1][:int(out[2].item()) // 128],
                                                  *out[2:]))
        add("moe_align_block", f"{tokens} tokens top8 {experts} experts block 128 int32", make)

    def make(torch):  # in place on y's residual block: each call normalizes a fresh copy
        y = _t(torch, 4096, 24, dt="float32")
        return lambda: _op("experimental.mhc").mhc_sinkhorn(y.clone(), 4)
    add("mhc_sinkhorn", "4096 rows n=4 float32", make)
    first = {}  # an operator's cases together (both dtypes), operators in the order above
    for i, (op, _, _) in enumerate(out):
        first.setdefault(op, i)
    return sorted(out, key=lambda c: first[c[0]])


def _flat(x):
    return [t for t in x if t is not None] if isinstance(x, (tuple, list)) else [x]


def _snapshot(x):
    """Copies of the outputs (an operator writing into a buffer it is given returns the same tensor each call)."""
    return [t.detach().clone() for t in _flat(x)]


def _routing_note(ports) -> str:
    """Where the ports look for TileGym's matmul source, and where it was imported from."""
    import inspect
    from cutile_ports import _runtime
    mod = _op("matmul")
    spec, why = _runtime.spec_for(mod._matmul_kernel)
    here = Path(inspect.getsourcefile(mod)).resolve()
    wanted = next((s.source_path for (path, name), s in _runtime.REGISTRY.items() if name == "_matmul_kernel"), None)
    return (f"routing: TileGym imported from {here}; the ports expect {wanted}: "
            + ("matched" if spec is not None else f"NOT matched ({why}) - every case will fail"))


def _error(torch, ref, got) -> float:
    worst = 0.0
    for r, g in zip(_flat(ref), _flat(got)):
        r, g = r.detach().float(), g.detach().float()
        if r.shape != g.shape:
            return math.inf
        fin = torch.isfinite(r) & torch.isfinite(g)
        if not torch.equal(torch.isnan(r), torch.isnan(g)):
            return math.inf
        den = float(torch.linalg.vector_norm(r[fin])) or 1.0
        worst = max(worst, float(torch.linalg.vector_norm((r - g)[fin])) / den)
    return worst


def _gpu_ms(torch, call) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(SLEEP_CYCLES)
    start.record()
    call()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def _host_us(torch, call, n: int = 20) -> float:
    times = []
    for _ in range(n):
        torch.cuda.synchronize()
        t = time.perf_counter()
        call()
        times.append((time.perf_counter() - t) * 1e6)
    torch.cuda.synchronize()
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ports", help="the generated package's python/ folder (holds cutile_ports)")
    ap.add_argument("--results", help="write <results>.md and <results>.json")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--only", default="", help="run only operators whose name contains one of these (a,b,...)")
    ap.add_argument("--skip", default="", help="leave out these operators (exact names: a,b,...)")
    ap.add_argument("--dtype", default="", help="run only cases with this word in their label (e.g. bfloat16)")
    ap.add_argument("--budget-s", type=float, default=0.0,
                    help="start no case after this many seconds (0: no limit); the rest are reported as skipped")
    ap.add_argument("--list", action="store_true", help="print the cases (operator | label) and exit")
    ap.add_argument("--merge", nargs="+", metavar="RUN.json",
                    help="no GPU: merge runs' JSON into --results (a later run's row replaces an earlier run's row of "
                         "the same operator and case: the cases a budget skipped, run again with --only)")
    args = ap.parse_args()
    if args.merge:
        if not args.results:
            ap.error("--merge needs --results")
        return _merge(args)
    cases = _selected(_cases(), args.only, args.skip, args.dtype)
    if args.list:
        for op, label, _ in cases:
            print(f"{op} | {label}")
        print(f"{len(cases)} cases")
        return 0
    if not (args.ports and args.results):
        ap.error("--ports and --results are required (unless --list)")
    sys.path.insert(0, args.ports)
    import torch
    import tilegym  # noqa: F401  (its own backend registry)
    import cutile_ports as ports
    try:
        print(_routing_note(ports), flush=True)
    except Exception as exc:  # the note is advice; the cases say what runs
        print(f"routing: not checked ({type(exc).__name__}: {exc})", flush=True)
    rows, failures, began = [], 0, time.perf_counter()
    for op, label, make in cases:
        row = {"operator": op, "case": label}
        t0 = time.perf_counter()
        if args.budget_s and t0 - began > args.budget_s:
            row.update(ok=False, skipped=True, failure=f"skipped: the run's budget of {args.budget_s:g} s was spent",
                       wall_s=0.0)
            failures += 1
            print(json.dumps(row), flush=True)
            rows.append(row)
            continue
        try:
            torch.manual_seed(0)
            call = make(torch)
            canon = getattr(call, "canon", None) or (lambda out: out)
            ports.set_backend("python")
            ref = _snapshot(canon(call()))
            ports.set_backend("cutile-rs", strict=True)
            got = _snapshot(canon(call()))
            torch.cuda.synchronize()
            dtype = str(ref[0].dtype).split(".")[1]
            row["error"] = _error(torch, ref, got)
            row["ok"] = row["error"] <= TOLERANCE.get(dtype, 1e-5)
            times = {"python": [], "rust": []}
            for name in ("python", "rust"):  # warm-up
                ports.set_backend("python" if name == "python" else "cutile-rs", strict=True)
                for _ in range(3):
                    call()
            for _ in range(args.runs):
                for name in ("python", "rust"):
                    ports.set_backend("python" if name == "python" else "cutile-rs", strict=True)
                    times[name].append(_gpu_ms(torch, call))
            for name in ("python", "rust"):
                ports.set_backend("python" if name == "python" else "cutile-rs", strict=True)
                row[f"host_us_{name}"] = _host_us(torch, call)
                row[f"t_{name}_ms"] = statistics.median(times[name])
            row["speed"] = row["t_python_ms"] / row["t_rust_ms"]
        except Exception as exc:  # a case that fails is reported, the others still run
            row["ok"] = False
            row["failure"] = f"{type(exc).__name__}: {exc}"[:600]
            traceback.print_exc()
        finally:
            ports.set_backend("python")
            call = ref = got = None  # free the case's tensors before the next one
            torch.cuda.empty_cache()
        row["wall_s"] = round(time.perf_counter() - t0, 2)
        failures += not row["ok"]
        print(json.dumps(row), flush=True)
        rows.append(row)
        _write(torch, args, rows, failures, time.perf_counter() - began)
    _write(torch, args, rows, failures, time.perf_counter() - began)
    return 1 if failures else 0


def _selected(cases, only: str, skip: str, dtype: str):
    """The cases whose operator contains one of `only`'s names (all when empty) and is none of `skip`'s, with the
    word `dtype` in their label (any when empty)."""
    wanted = [w for w in only.split(",") if w]
    unwanted = [w for w in skip.split(",") if w]
    return [c for c in cases
            if (not wanted or any(w in c[0] for w in wanted)) and c[0] not in unwanted
            and (not dtype or dtype in c[1].split())]


def _merge(args) -> int:
    runs = [json.loads(Path(f).read_text()) for f in args.merge]
    rows: dict[tuple[str, str], dict] = {}
    for run in runs:
        for r in run["rows"]:
            rows[(r["operator"], r["case"])] = r  # dicts keep the first run's order of cases
    merged = list(rows.values())
    first = runs[0]["meta"]
    meta = {**first, "date": " / ".join(dict.fromkeys(r["meta"]["date"] for r in runs)),
            "gpu": " / ".join(dict.fromkeys(r["meta"]["gpu"] for r in runs)),
            "elapsed_s": round(sum(r["meta"]["elapsed_s"] for r in runs), 1),
            "merged_from": [Path(f).name for f in args.merge]}
    failures = sum(not r.get("ok") for r in merged)
    _write_report(args.results, meta, merged, failures)
    return 1 if failures else 0


def _write(torch, args, rows, failures, elapsed):
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "python": platform.python_version(),
            "runs": args.runs, "elapsed_s": round(elapsed, 1)}
    _write_report(args.results, meta, rows, failures)


def _write_report(results: str, meta: dict, rows: list, failures: int) -> None:
    per_op: dict[str, list[float]] = {}
    for r in rows:
        if r.get("ok") and "speed" in r:
            per_op.setdefault(r["operator"], []).append(r["speed"])
    geo = {op: math.exp(statistics.fmean(math.log(s) for s in v)) for op, v in per_op.items()}
    meta = {**meta, "cases": len(rows), "failed": failures, "geomean_by_operator": geo}
    Path(results + ".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    lines = [f"# TileGym's operators on the ports ({meta['gpu']})", "",
             f"- date: {meta['date']}; torch {meta['torch']}; {meta['runs']} interleaved runs per backend (median)",
             f"- cases: {len(rows)}, failed: {failures}; {meta['elapsed_s']} s in all (compilation included)", "",
             "| operator | geomean t_python/t_rust |", "|---|---|"]
    lines += [f"| {op} | {g:.3f} |" for op, g in sorted(geo.items())]
    lines += ["", "| operator | case | ok | rel. error | t_python ms | t_rust ms | speed | host µs python | host µs rust "
              "| wall s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "failure" in r:
            lines.append(f"| {r['operator']} | {r['case']} | no | {r['failure'][:200]} | | | | | | {r['wall_s']} |")
        else:
            lines.append(f"| {r['operator']} | {r['case']} | {'yes' if r['ok'] else 'no'} | {r['error']:.2e} | "
                         f"{r['t_python_ms']:.4f} | {r['t_rust_ms']:.4f} | {r['speed']:.3f} | "
                         f"{r['host_us_python']:.1f} | {r['host_us_rust']:.1f} | {r['wall_s']} |")
    if meta.get("merged_from"):
        lines.insert(4, f"- merged from {', '.join(meta['merged_from'])} (tools/tilegym_gpu_check.py --merge)")
    Path(results + ".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
