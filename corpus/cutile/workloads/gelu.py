"""GELU activation in its tanh approximation, y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the MLP
activation of GPT-2/GPT-J/Falcon/Phi. gelu_tanh_kernel is the elementwise 1-D form over a flattened tensor;
bias_gelu_kernel is the 2-D epilogue form fused with the preceding linear layer's bias add (HAS_BIAS)."""
import cuda.tile as ct

ConstInt = ct.Constant[int]
ConstBool = ct.Constant[bool]

SQRT_2_OVER_PI = 0.7978845608028654


def _gelu_tanh(v):
    inner = SQRT_2_OVER_PI * (v + 0.044715 * v * v * v)
    return 0.5 * v * (1.0 + ct.tanh(inner))


@ct.kernel
def gelu_tanh_kernel(x, y, BLOCK: ConstInt):
    pid = ct.bid(0)
    v = ct.load(x, index=(pid,), shape=(BLOCK,)).astype(ct.float32)
    ct.store(y, index=(pid,), tile=_gelu_tanh(v).astype(y.dtype))


@ct.kernel
def bias_gelu_kernel(x, bias, y, BM: ConstInt, BN: ConstInt, HAS_BIAS: ConstBool):
    pm = ct.bid(0)
    pn = ct.bid(1)
    v = ct.load(x, index=(pm, pn), shape=(BM, BN)).astype(ct.float32)
    if HAS_BIAS:
        v = v + ct.load(bias, index=(pn,), shape=(BN,)).astype(ct.float32)[None, :]
    ct.store(y, index=(pm, pn), tile=_gelu_tanh(v).astype(y.dtype))


def gelu(x_flat, y_flat, x, bias, y):
    import torch

    grid = (ct.cdiv(x_flat.shape[0], 1024), 1, 1)
    ct.launch(torch.cuda.current_stream(), grid, gelu_tanh_kernel, (x_flat, y_flat, 1024))
    grid = (ct.cdiv(x.shape[0], 32), ct.cdiv(x.shape[1], 128), 1)
    ct.launch(torch.cuda.current_stream(), grid, bias_gelu_kernel, (x, bias, y, 32, 128, True))
