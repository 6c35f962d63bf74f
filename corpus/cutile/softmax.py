"""Row softmax: one block per row, the whole row in one tile (padding with -inf keeps max right)."""
import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def row_softmax(x, y, BLOCK_N: ConstInt):
    row = ct.bid(0)
    t = ct.load(x, index=(row, 0), shape=(1, BLOCK_N), padding_mode=ct.PaddingMode.NEG_INF)
    t = t.astype(ct.float32)
    row_max = ct.max(t, axis=1, keepdims=True)
    num = ct.exp(t - row_max)
    den = ct.sum(num, axis=1, keepdims=True)
    ct.store(y, index=(row, 0), tile=(num / den).astype(y.dtype))


def launch(x, y):
    import torch

    ct.launch(torch.cuda.current_stream(), (x.shape[0], 1, 1), row_softmax, (x, y, 1024))
