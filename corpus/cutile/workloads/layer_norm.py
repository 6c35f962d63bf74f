"""LayerNorm forward and backward over the hidden dimension (one tile of BN >= hidden columns, BM rows per
block), as in GPT-2/OPT/Falcon-style transformer blocks. The forward saves per-row mean and rstd (f32).
The backward computes dx row-wise and, because dw/db need a reduction over all rows, writes one f32
partial row of dw and db per row-block; layer_norm_bwd_dwdb_kernel then reduces those partials over the
row-block axis."""
import cuda.tile as ct

ConstInt = ct.Constant[int]
ConstBool = ct.Constant[bool]


@ct.kernel
def layer_norm_fwd_kernel(x, w, b, y, mean_out, rstd_out, eps: float,
                          BM: ConstInt, BN: ConstInt, HAS_BIAS: ConstBool):
    pid = ct.bid(0)
    n = x.shape[1]
    xt = ct.load(x, index=(pid, 0), shape=(BM, BN), padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
    cols = ct.arange(BN, dtype=ct.int32)
    mean = ct.sum(xt, axis=1, keepdims=True) / n
    xc = ct.where(cols[None, :] < n, xt - mean, 0.0)
    var = ct.sum(xc * xc, axis=1, keepdims=True) / n
    rstd = ct.rsqrt(var + eps)
    wt = ct.load(w, index=(0,), shape=(BN,), padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
    out = xc * rstd * wt[None, :]
    if HAS_BIAS:
        bt = ct.load(b, index=(0,), shape=(BN,), padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
        out = out + bt[None, :]
    ct.store(y, index=(pid, 0), tile=out.astype(y.dtype))
    ct.store(mean_out, index=(pid,), tile=mean.reshape((BM,)))
    ct.store(rstd_out, index=(pid,), tile=rstd.reshape((BM,)))


@ct.kernel
def layer_norm_bwd_dx_kernel(x, dy, w, mean, rstd, dx, dw_partial, db_partial,
                             BM: ConstInt, BN: ConstInt):
    pid = ct.bid(0)
    n = x.shape[1]
    cols = ct.arange(BN, dtype=ct.int32)
    xt = ct.load(x, index=(pid, 0), shape=(BM, BN), padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
    dyt = ct.load(dy, index=(pid, 0), shape=(BM, BN), padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
    wt = ct.load(w, index=(0,), shape=(BN,), padding_mode=ct.PaddingMode.ZERO).astype(ct.float32)
    mu = ct.load(mean, index=(pid,), shape=(BM,), padding_mode=ct.PaddingMode.ZERO).reshape((BM, 1))
    rs = ct.load(rstd, index=(pid,), shape=(BM,), padding_mode=ct.PaddingMode.ZERO).reshape((BM, 1))
    xhat = ct.where(cols[None, :] < n, (xt - mu) * rs, 0.0)
    wdy = wt[None, :] * dyt
    c1 = ct.sum(xhat * wdy, axis=1, keepdims=True) / n
    c2 = ct.sum(wdy, axis=1, keepdims=True) / n
    dxt = (wdy - (xhat * c1 + c2)) * rs
    ct.store(dx, index=(pid, 0), tile=dxt.astype(dx.dtype))
    ct.store(dw_partial, index=(pid, 0), tile=ct.sum(dyt * xhat, axis=0, keepdims=True))
    ct.store(db_partial, index=(pid, 0), tile=ct.sum(dyt, axis=0, keepdims=True))


@ct.kernel
def layer_norm_bwd_dwdb_kernel(dw_partial, db_partial, dw, db, BM: ConstInt, BN: ConstInt):
    pid = ct.bid(0)
    num_row_tiles = ct.num_tiles(dw_partial, axis=0, shape=(BM, BN))
    dw_acc = ct.zeros((BM, BN), dtype=ct.float32)
    db_acc = ct.zeros((BM, BN), dtype=ct.float32)
    for i in range(num_row_tiles):
        dw_acc = dw_acc + ct.load(dw_partial, index=(i, pid), shape=(BM, BN), padding_mode=ct.PaddingMode.ZERO)
        db_acc = db_acc + ct.load(db_partial, index=(i, pid), shape=(BM, BN), padding_mode=ct.PaddingMode.ZERO)
    ct.store(dw, index=(pid,), tile=ct.sum(dw_acc, axis=0).astype(dw.dtype))
    ct.store(db, index=(pid,), tile=ct.sum(db_acc, axis=0).astype(db.dtype))


def layer_norm(x, w, b, y, mean, rstd, eps, dy, dx, dw_partial, db_partial, dw, db):
    import torch

    grid = (ct.cdiv(x.shape[0], 4), 1, 1)
    ct.launch(torch.cuda.current_stream(), grid, layer_norm_fwd_kernel,
              (x, w, b, y, mean, rstd, eps, 4, 4096, True))
    ct.launch(torch.cuda.current_stream(), grid, layer_norm_fwd_kernel,
              (x, w, b, y, mean, rstd, eps, 4, 1024, False))
    ct.launch(torch.cuda.current_stream(), grid, layer_norm_bwd_dx_kernel,
              (x, dy, w, mean, rstd, dx, dw_partial, db_partial, 4, 4096))
    grid = (ct.cdiv(x.shape[1], 128), 1, 1)
    ct.launch(torch.cuda.current_stream(), grid, layer_norm_bwd_dwdb_kernel,
              (dw_partial, db_partial, dw, db, 32, 128))
