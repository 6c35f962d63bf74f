"""Token-level cross-entropy over a large vocabulary, the LM-head loss of LLM training / perplexity
evaluation. The forward kernel handles one row of logits per block: it sweeps vocab tiles with an online
logsumexp (running max and rescaled sum), then fetches the target logit with ct.gather at (row, label)
and writes loss = lse - logit[label] (0 for IGNORE_INDEX rows) plus the lse for the backward pass. The
backward kernel writes dlogits = (softmax - onehot(label)) * dloss, one (row, vocab-tile) per block."""
import cuda.tile as ct

ConstInt = ct.Constant[int]

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453


@ct.kernel
def cross_entropy_fwd_kernel(logits, labels, loss, lse_out, BV: ConstInt, IGNORE_INDEX: ConstInt):
    row = ct.bid(0)
    num_v_tiles = ct.num_tiles(logits, axis=1, shape=(1, BV))
    m_i = ct.full((1, 1), -float("inf"), dtype=ct.float32)
    l_i = ct.zeros((1, 1), dtype=ct.float32)
    for j in range(num_v_tiles):
        t = ct.load(logits, index=(row, j), shape=(1, BV), padding_mode=ct.PaddingMode.NEG_INF)
        t2 = t.astype(ct.float32) * LOG2E
        m_new = ct.maximum(m_i, ct.max(t2, axis=1, keepdims=True))
        l_i = l_i * ct.exp2(m_i - m_new) + ct.sum(ct.exp2(t2 - m_new), axis=1, keepdims=True)
        m_i = m_new
    lse = (m_i + ct.log2(l_i)) * LN2
    label = ct.load(labels, index=(row,), shape=()).item()
    target = ct.gather(logits, (row, label)).astype(ct.float32)
    row_loss = ct.where(label == IGNORE_INDEX, 0.0, lse - target)
    ct.store(loss, index=(row,), tile=row_loss.reshape((1,)))
    ct.store(lse_out, index=(row,), tile=lse.reshape((1,)))


@ct.kernel
def cross_entropy_bwd_kernel(logits, labels, lse, dloss, dlogits, BV: ConstInt, IGNORE_INDEX: ConstInt):
    row = ct.bid(0)
    vt = ct.bid(1)
    label = ct.load(labels, index=(row,), shape=()).item()
    row_lse = ct.load(lse, index=(row,), shape=()).item()
    g = ct.load(dloss, index=(row,), shape=()).item()
    g = ct.where(label == IGNORE_INDEX, 0.0, g)
    t = ct.load(logits, index=(row, vt), shape=(1, BV)).astype(ct.float32)
    p = ct.exp(t - row_lse)
    cols = vt * BV + ct.arange(BV, dtype=ct.int32)
    onehot = ct.where(cols[None, :] == label, 1.0, 0.0)
    ct.store(dlogits, index=(row, vt), tile=((p - onehot) * g).astype(dlogits.dtype))


def cross_entropy(logits, labels, loss, lse, dloss, dlogits):
    import torch

    grid = (logits.shape[0], 1, 1)
    ct.launch(torch.cuda.current_stream(), grid, cross_entropy_fwd_kernel, (logits, labels, loss, lse, 4096, -100))
    grid = (logits.shape[0], ct.cdiv(logits.shape[1], 2048), 1)
    ct.launch(torch.cuda.current_stream(), grid, cross_entropy_bwd_kernel,
              (logits, labels, lse, dloss, dlogits, 2048, -100))
