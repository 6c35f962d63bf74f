"""out = alpha * x + beta * y with runtime float scalars (axpby), computed in f32."""
import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def scaled_add(x, y, out, alpha: float, beta: float, TILE: ConstInt):
    bid = ct.bid(0)
    xt = ct.load(x, index=(bid,), shape=(TILE,)).astype(ct.float32)
    yt = ct.load(y, index=(bid,), shape=(TILE,)).astype(ct.float32)
    r = alpha * xt + beta * yt
    ct.store(out, index=(bid,), tile=r.astype(out.dtype))


def launch(x, y, out, alpha, beta):
    import torch

    ct.launch(torch.cuda.current_stream(), (ct.cdiv(x.shape[0], 256), 1, 1), scaled_add, (x, y, out, alpha, beta, 256))
