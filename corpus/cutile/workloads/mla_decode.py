"""Multi-head Latent Attention (MLA) decode, as in DeepSeek-V2/V3 with the absorbed weight formulation:
every head's query is split into a latent part (DL = kv_lora_rank, e.g. 512) and a decoupled RoPE part
(DR = 64); the KV cache stores one shared compressed latent vector c_kv (DL) and one rope key k_pe (DR) per
token. Scores are q_nope . c_kv + q_pe . k_pe (two ct.mma's into one accumulator) and the latent itself
acts as the value, so the output is in latent space. One block handles BH heads of one sequence and
sweeps the cached tokens in BN-row tiles with an exp2 online softmax; seq_lens gives the valid length."""
import cuda.tile as ct

ConstInt = ct.Constant[int]

LOG2E = 1.4426950408889634


@ct.kernel
def mla_decode_kernel(Q_nope, Q_pe, KV_latent, K_pe, seq_lens, O, sm_scale: float,
                      BH: ConstInt, BN: ConstInt, DL: ConstInt, DR: ConstInt):
    b = ct.bid(0)
    hb = ct.bid(1)
    seq_len = ct.load(seq_lens, index=(b,), shape=()).item()
    scale = sm_scale * LOG2E
    qn = ct.load(Q_nope, index=(b, hb, 0), shape=(1, BH, DL)).reshape((BH, DL))
    qp = ct.load(Q_pe, index=(b, hb, 0), shape=(1, BH, DR)).reshape((BH, DR))
    m_i = ct.full((BH, 1), -float("inf"), dtype=ct.float32)
    l_i = ct.zeros((BH, 1), dtype=ct.float32)
    acc = ct.zeros((BH, DL), dtype=ct.float32)
    for j in range(ct.cdiv(seq_len, BN)):
        c_kv = ct.load(KV_latent, index=(b, j, 0), shape=(1, BN, DL), padding_mode=ct.PaddingMode.ZERO)
        c_kv = c_kv.reshape((BN, DL))
        k_pe = ct.load(K_pe, index=(b, j, 0), shape=(1, BN, DR), padding_mode=ct.PaddingMode.ZERO)
        s = ct.mma(qn, ct.transpose(c_kv), ct.zeros((BH, BN), dtype=ct.float32))
        s = ct.mma(qp, ct.transpose(k_pe.reshape((BN, DR))), s)
        offs_n = j * BN + ct.arange(BN, dtype=ct.int32)
        s = ct.where(offs_n[None, :] < seq_len, s * scale, -float("inf"))
        m_new = ct.maximum(m_i, ct.max(s, axis=1, keepdims=True))
        p = ct.exp2(s - m_new)
        alpha = ct.exp2(m_i - m_new)
        l_i = l_i * alpha + ct.sum(p, axis=1, keepdims=True)
        acc = ct.mma(p.astype(KV_latent.dtype), c_kv, acc * alpha)
        m_i = m_new
    out = acc / l_i
    ct.store(O, index=(b, hb, 0), tile=out.reshape((1, BH, DL)).astype(O.dtype))


def mla_decode(Q_nope, Q_pe, KV_latent, K_pe, seq_lens, O, sm_scale):
    import torch

    grid = (Q_nope.shape[0], ct.cdiv(Q_nope.shape[1], 16), 1)
    ct.launch(torch.cuda.current_stream(), grid, mla_decode_kernel,
              (Q_nope, Q_pe, KV_latent, K_pe, seq_lens, O, sm_scale, 16, 32, 512, 64))
