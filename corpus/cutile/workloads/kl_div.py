"""Row-wise KL divergence KL(target || pred) = sum_v t_v (log t_v - log p_v) over the vocabulary, given the
model's log-probabilities, as used for knowledge distillation and for the KL penalty in RLHF/GRPO
training against a reference policy. The target is given either as probabilities or, with LOG_TARGET, as
log-probabilities. One row per block, the vocabulary is swept in BV-wide tiles and the per-row sum is
written as f32."""
import cuda.tile as ct

ConstInt = ct.Constant[int]
ConstBool = ct.Constant[bool]


@ct.kernel
def kl_div_kernel(log_pred, target, loss, BV: ConstInt, LOG_TARGET: ConstBool):
    row = ct.bid(0)
    num_v_tiles = ct.num_tiles(log_pred, axis=1, shape=(1, BV))
    acc = ct.zeros((1, BV), dtype=ct.float32)
    for j in range(num_v_tiles):
        lp = ct.load(log_pred, index=(row, j), shape=(1, BV), padding_mode=ct.PaddingMode.ZERO)
        lp = lp.astype(ct.float32)
        t = ct.load(target, index=(row, j), shape=(1, BV), padding_mode=ct.PaddingMode.ZERO)
        t = t.astype(ct.float32)
        if LOG_TARGET:
            acc = acc + ct.exp(t) * (t - lp)
        else:
            acc = acc + ct.where(t > 0.0, t * (ct.log(t) - lp), 0.0)
    ct.store(loss, index=(row,), tile=ct.sum(acc, axis=1))


def kl_div(log_pred, target, loss):
    import torch

    grid = (log_pred.shape[0], 1, 1)
    ct.launch(torch.cuda.current_stream(), grid, kl_div_kernel, (log_pred, target, loss, 2048, False))
    ct.launch(torch.cuda.current_stream(), grid, kl_div_kernel, (log_pred, target, loss, 2048, True))
