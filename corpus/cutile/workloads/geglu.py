"""GeGLU gated MLP activation (Gemma / T5-v1.1 style), out = gelu_tanh(gate) * up, reading gate and up as
the two column halves of one fused (rows, 2*I) projection output. gelu_tanh(g) = 0.5 g (1 + tanh(k0 (g +
0.044715 g^3))) with k0 = sqrt(2/pi). The backward kernel writes d(gate|up) into the same fused layout."""
import cuda.tile as ct

ConstInt = ct.Constant[int]

SQRT_2_OVER_PI = 0.7978845608028654
GELU_C = 0.044715


@ct.kernel
def geglu_fwd_kernel(gate_up, out, BM: ConstInt, BN: ConstInt):
    pm = ct.bid(0)
    pn = ct.bid(1)
    n_half_tiles = ct.num_tiles(out, axis=1, shape=(BM, BN))
    g = ct.load(gate_up, index=(pm, pn), shape=(BM, BN)).astype(ct.float32)
    u = ct.load(gate_up, index=(pm, pn + n_half_tiles), shape=(BM, BN)).astype(ct.float32)
    t = ct.tanh(SQRT_2_OVER_PI * (g + GELU_C * g * g * g))
    ct.store(out, index=(pm, pn), tile=(0.5 * g * (1.0 + t) * u).astype(out.dtype))


@ct.kernel
def geglu_bwd_kernel(gate_up, dout, dgate_up, BM: ConstInt, BN: ConstInt):
    pm = ct.bid(0)
    pn = ct.bid(1)
    n_half_tiles = ct.num_tiles(dout, axis=1, shape=(BM, BN))
    g = ct.load(gate_up, index=(pm, pn), shape=(BM, BN)).astype(ct.float32)
    u = ct.load(gate_up, index=(pm, pn + n_half_tiles), shape=(BM, BN)).astype(ct.float32)
    do = ct.load(dout, index=(pm, pn), shape=(BM, BN)).astype(ct.float32)
    g2 = g * g
    t = ct.tanh(SQRT_2_OVER_PI * (g + GELU_C * g2 * g))
    gelu = 0.5 * g * (1.0 + t)
    dgelu = 0.5 * (1.0 + t) + 0.5 * g * (1.0 - t * t) * SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_C * g2)
    ct.store(dgate_up, index=(pm, pn), tile=(do * u * dgelu).astype(dgate_up.dtype))
    ct.store(dgate_up, index=(pm, pn + n_half_tiles), tile=(do * gelu).astype(dgate_up.dtype))


def geglu(gate_up, out, dout, dgate_up):
    import torch

    grid = (ct.cdiv(out.shape[0], 8), ct.cdiv(out.shape[1], 256), 1)
    ct.launch(torch.cuda.current_stream(), grid, geglu_fwd_kernel, (gate_up, out, 8, 256))
    ct.launch(torch.cuda.current_stream(), grid, geglu_bwd_kernel, (gate_up, dout, dgate_up, 8, 256))
