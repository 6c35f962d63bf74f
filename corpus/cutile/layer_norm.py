"""Layer norm forward with an optional affine transform chosen by a constant.

With AFFINE the kernel loads weight and bias; without it they are never touched. Both arms leave
`out` with the same tile type (the loads are local to the arm), so the port keeps one entry with
`if AFFINE == 1` on the const generic.
"""
import cuda.tile as ct

ConstInt = ct.Constant[int]
ConstBool = ct.Constant[bool]


@ct.kernel
def layer_norm_fwd(x, w, b, y, eps: float, N: ConstInt, AFFINE: ConstBool):
    row = ct.bid(0)
    xt = ct.load(x, index=(row, 0), shape=(1, N)).astype(ct.float32)
    mean = ct.sum(xt, axis=1, keepdims=True) / N
    xc = xt - mean
    var = ct.sum(xc * xc, axis=1, keepdims=True) / N
    yt = xc * ct.rsqrt(var + eps)
    if AFFINE:
        wt = ct.load(w, index=(0,), shape=(N,)).astype(ct.float32)
        bt = ct.load(b, index=(0,), shape=(N,)).astype(ct.float32)
        out = yt * wt + bt
    else:
        out = yt
    ct.store(y, index=(row, 0), tile=out.astype(y.dtype))


def launch(x, w, b, y, eps, affine):
    import torch

    ct.launch(torch.cuda.current_stream(), (x.shape[0], 1, 1), layer_norm_fwd, (x, w, b, y, eps, 256, True))
    ct.launch(torch.cuda.current_stream(), (x.shape[0], 1, 1), layer_norm_fwd, (x, w, b, y, eps, 256, False))
