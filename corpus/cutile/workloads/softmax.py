"""Row softmax over the last axis, as applied to attention scores and to sampling logits. softmax_kernel
handles rows that fit in one tile (BN >= row length; out-of-range columns are padded with -inf).
online_softmax_kernel handles long rows such as full-vocabulary logits: a first sweep over column tiles
carries the running max and the rescaled running sum (online softmax, in exp2 form), a second sweep writes
exp(x - max) / sum."""
import cuda.tile as ct

ConstInt = ct.Constant[int]

LOG2E = 1.4426950408889634


@ct.kernel
def softmax_kernel(x, y, BM: ConstInt, BN: ConstInt):
    pid = ct.bid(0)
    row = ct.load(x, index=(pid, 0), shape=(BM, BN), padding_mode=ct.PaddingMode.NEG_INF)
    row = row.astype(ct.float32)
    row_max = ct.max(row, axis=1, keepdims=True)
    num = ct.exp(row - row_max)
    den = ct.sum(num, axis=1, keepdims=True)
    ct.store(y, index=(pid, 0), tile=(num / den).astype(y.dtype))


@ct.kernel
def online_softmax_kernel(x, y, BM: ConstInt, BN: ConstInt):
    pid = ct.bid(0)
    num_col_tiles = ct.num_tiles(x, axis=1, shape=(BM, BN))
    m_i = ct.full((BM, 1), -float("inf"), dtype=ct.float32)
    l_i = ct.zeros((BM, 1), dtype=ct.float32)
    for j in range(num_col_tiles):
        t = ct.load(x, index=(pid, j), shape=(BM, BN), padding_mode=ct.PaddingMode.NEG_INF)
        t = t.astype(ct.float32) * LOG2E
        m_new = ct.maximum(m_i, ct.max(t, axis=1, keepdims=True))
        l_i = l_i * ct.exp2(m_i - m_new) + ct.sum(ct.exp2(t - m_new), axis=1, keepdims=True)
        m_i = m_new
    inv_l = 1.0 / l_i
    for j in range(num_col_tiles):
        t = ct.load(x, index=(pid, j), shape=(BM, BN), padding_mode=ct.PaddingMode.NEG_INF)
        p = ct.exp2(t.astype(ct.float32) * LOG2E - m_i) * inv_l
        ct.store(y, index=(pid, j), tile=p.astype(y.dtype))


def softmax(x, y):
    import torch

    grid = (ct.cdiv(x.shape[0], 4), 1, 1)
    ct.launch(torch.cuda.current_stream(), grid, softmax_kernel, (x, y, 4, 1024))
    grid = (ct.cdiv(x.shape[0], 1), 1, 1)
    ct.launch(torch.cuda.current_stream(), grid, online_softmax_kernel, (x, y, 1, 4096))
    ct.launch(torch.cuda.current_stream(), grid, online_softmax_kernel, (x, y, 2, 1024))
