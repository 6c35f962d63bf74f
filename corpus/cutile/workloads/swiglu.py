"""SwiGLU gated MLP activation, out = silu(gate) * up with silu(g) = g * sigmoid(g), as in the Llama /
Mistral / Qwen feed-forward block (between the fused gate_up projection and the down projection). The
backward kernel produces d_gate = dout * up * sig * (1 + g * (1 - sig)) and d_up = dout * silu(g)."""
import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def swiglu_fwd_kernel(gate, up, out, BM: ConstInt, BN: ConstInt):
    pm = ct.bid(0)
    pn = ct.bid(1)
    g = ct.load(gate, index=(pm, pn), shape=(BM, BN)).astype(ct.float32)
    u = ct.load(up, index=(pm, pn), shape=(BM, BN)).astype(ct.float32)
    sig = 1.0 / (1.0 + ct.exp(-g))
    ct.store(out, index=(pm, pn), tile=(g * sig * u).astype(out.dtype))


@ct.kernel
def swiglu_bwd_kernel(gate, up, dout, dgate, dup, BM: ConstInt, BN: ConstInt):
    pm = ct.bid(0)
    pn = ct.bid(1)
    g = ct.load(gate, index=(pm, pn), shape=(BM, BN)).astype(ct.float32)
    u = ct.load(up, index=(pm, pn), shape=(BM, BN)).astype(ct.float32)
    do = ct.load(dout, index=(pm, pn), shape=(BM, BN)).astype(ct.float32)
    sig = 1.0 / (1.0 + ct.exp(-g))
    silu = g * sig
    dg = do * u * sig * (1.0 + g * (1.0 - sig))
    ct.store(dgate, index=(pm, pn), tile=dg.astype(dgate.dtype))
    ct.store(dup, index=(pm, pn), tile=(do * silu).astype(dup.dtype))


def swiglu(gate, up, out, dout, dgate, dup):
    import torch

    grid = (ct.cdiv(gate.shape[0], 16), ct.cdiv(gate.shape[1], 256), 1)
    ct.launch(torch.cuda.current_stream(), grid, swiglu_fwd_kernel, (gate, up, out, 16, 256))
    ct.launch(torch.cuda.current_stream(), grid, swiglu_bwd_kernel, (gate, up, dout, dgate, dup, 16, 256))
