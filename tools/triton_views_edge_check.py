"""Edge cases of the tensor-view path of Triton ports on a GPU (run where tools/triton_gpu_check.py runs):
operands whose base is not 16-byte aligned (`x[:, 1:]`), odd row strides, transposed operands (inner stride not
1: the element path under the unit-stride constant) and the descriptor GEMM on a misaligned output, each
launched unchanged through Triton and through the routed port (`set_backend("cutile-rs")`) and compared.

    tools/device_gpu_check.sh --script tools/triton_views_edge_check.py --crate rust
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--crate", default="rust")
    opts = ap.parse_args(argv)
    sys.path.insert(0, str(Path(opts.crate).resolve() / "python"))
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import torch
    import triton
    import cutile_ports
    from corpus.triton.workloads import matmul as mm_mod, persistent_matmul as pm_mod, split_k_gemm as sk_mod
    from corpus.triton.workloads import descriptor_gemm as dg_mod, flash_attention as fa_mod
    cutile_ports.install()
    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    torch.manual_seed(0)
    failures = 0

    def both(name, fn, *args, tol=2e-2, reference=None):
        """The routed port against Triton's run of the same launch (or `reference`, where Triton's own
        requirements are not met: TMA descriptors need 16-byte strides)."""
        nonlocal failures
        cutile_ports.set_backend("python")
        want = fn(*args) if reference is None else reference(*args)
        torch.cuda.synchronize()
        cutile_ports.set_backend("cutile-rs")
        try:
            got = fn(*args)
            torch.cuda.synchronize()
        finally:
            cutile_ports.set_backend("python")
        outs = (want, got) if isinstance(want, tuple) else ((want,), (got,))
        errs = []
        for w, g in zip(*outs):
            errs.append(((g.float() - w.float()).abs().max() / w.float().abs().max().clamp_min(1e-6)).item())
        ok = all(e <= tol for e in errs)
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name:58s} rel.err {max(errs):.2e}", flush=True)

    for dt in (torch.float16, torch.float32):
        big_a = torch.randn(77, 131, device="cuda", dtype=dt)
        big_b = torch.randn(131, 95, device="cuda", dtype=dt)
        a, b = big_a[:, 1:], big_b[1:, :]  # base 2/4 bytes past 16-byte alignment, rows 131 elements apart
        name = str(dt).split(".")[1]
        both(f"matmul misaligned base, odd stride {name}", mm_mod.matmul, a, b)
        both(f"matmul transposed B (inner stride != 1) {name}", mm_mod.matmul, a, big_b.t().contiguous().t()[1:, :])
        both(f"matmul contiguous {name}", mm_mod.matmul, a.contiguous(), b.contiguous())
        both(f"split-K misaligned {name}", sk_mod.split_k_gemm, a, b.contiguous())
        if dt == torch.float16:
            both(f"persistent misaligned {name}", pm_mod.persistent_matmul, a, b)
        if dt == torch.float16:  # (Triton's float32 run of this launcher's 128x128x64 blocks needs too much smem)
            x = torch.randn(70, 130, device="cuda", dtype=dt)[:, 2:].contiguous()
            w = torch.randn(90, 128, device="cuda", dtype=dt)
            both(f"descriptor gemm, 16-byte strides {name}", dg_mod.linear, x, w[:80].contiguous())
            # an output row of 90 halves (180 bytes) is below Triton's descriptor requirements: against torch
            both(f"descriptor gemm, 180-byte output rows {name}", dg_mod.linear, x, w,
                 reference=lambda a, b: (a.float() @ b.float().T).to(a.dtype))
    q = torch.randn(2, 3, 100, 64, device="cuda", dtype=torch.float16)
    k, v = torch.randn_like(q), torch.randn_like(q)
    both("flash attention causal", fa_mod.attention, q, k, v, True, 0.125)
    print(f"{failures} failures", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
