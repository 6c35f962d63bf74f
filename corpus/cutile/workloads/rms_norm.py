"""RMSNorm forward (optionally fused with the residual add, as in vLLM's fused_add_rms_norm) and backward,
as used by Llama/Mistral/Qwen blocks. Forward: h = x (+ residual), y = h * rsqrt(mean(h^2) + eps) * w; the
updated residual stream h and the per-row rstd are also written. Backward: dx = rstd * (w*dy - xhat *
mean(xhat * w*dy)) and a per-row-block f32 partial of dw = sum(dy * xhat) (reduced later, like LayerNorm's)."""
import cuda.tile as ct

ConstInt = ct.Constant[int]
ConstBool = ct.Constant[bool]


@ct.kernel
def rms_norm_fwd_kernel(x, residual, w, y, residual_out, rstd_out, eps: float,
                        BM: ConstInt, BN: ConstInt, HAS_RESIDUAL: ConstBool):
    pid = ct.bid(0)
    n = x.shape[1]
    h = ct.load(x, index=(pid, 0), shape=(BM, BN), padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
    if HAS_RESIDUAL:
        r = ct.load(residual, index=(pid, 0), shape=(BM, BN), padding_mode=ct.PaddingMode.ZERO)
        h = h + r.astype(ct.float32)
        ct.store(residual_out, index=(pid, 0), tile=h.astype(residual_out.dtype))
    ms = ct.sum(h * h, axis=1, keepdims=True) / n
    rstd = ct.rsqrt(ms + eps)
    wt = ct.load(w, index=(0,), shape=(BN,), padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
    ct.store(y, index=(pid, 0), tile=(h * rstd * wt[None, :]).astype(y.dtype))
    ct.store(rstd_out, index=(pid,), tile=rstd.reshape((BM,)))


@ct.kernel
def rms_norm_bwd_kernel(x, dy, w, rstd, dx, dw_partial, BM: ConstInt, BN: ConstInt):
    pid = ct.bid(0)
    n = x.shape[1]
    xt = ct.load(x, index=(pid, 0), shape=(BM, BN), padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
    dyt = ct.load(dy, index=(pid, 0), shape=(BM, BN), padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
    wt = ct.load(w, index=(0,), shape=(BN,), padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
    rs = ct.load(rstd, index=(pid,), shape=(BM,), padding_mode=ct.PaddingMode.ZERO).reshape((BM, 1))
    xhat = xt * rs
    wdy = dyt * wt[None, :]
    c = ct.sum(xhat * wdy, axis=1, keepdims=True) / n
    dxt = (wdy - xhat * c) * rs
    ct.store(dx, index=(pid, 0), tile=dxt.astype(dx.dtype))
    ct.store(dw_partial, index=(pid, 0), tile=ct.sum(dyt * xhat, axis=0, keepdims=True))


def rms_norm(x, residual, w, y, residual_out, rstd, eps, dy, dx, dw_partial):
    import torch

    grid = (ct.cdiv(x.shape[0], 2), 1, 1)
    ct.launch(torch.cuda.current_stream(), grid, rms_norm_fwd_kernel,
              (x, residual, w, y, residual_out, rstd, eps, 2, 4096, True))
    ct.launch(torch.cuda.current_stream(), grid, rms_norm_fwd_kernel,
              (x, residual, w, y, residual_out, rstd, eps, 2, 2048, False))
    ct.launch(torch.cuda.current_stream(), grid, rms_norm_bwd_kernel, (x, dy, w, rstd, dx, dw_partial, 2, 4096))
