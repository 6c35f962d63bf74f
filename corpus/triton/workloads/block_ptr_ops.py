"""Kernels written with block pointers (`tl.make_block_ptr`, `tl.advance`, `boundary_check`), the way
linear-attention libraries write their chunked kernels: attention over (batch*head, seq, head_dim) tensors
with the key/value blocks advanced through the sequence, and a chunk-local cumulative sum of gates."""
import triton
import triton.language as tl


@triton.jit
def bp_attn_fwd_kernel(q, k, v, o, T, scale, D: tl.constexpr, BT: tl.constexpr, BS: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    p_q = tl.make_block_ptr(q + i_bh * T * D, (T, D), (D, 1), (i_t * BT, 0), (BT, D), (1, 0))
    b_q = tl.load(p_q, boundary_check=(0, 1))
    b_o = tl.zeros([BT, D], dtype=tl.float32)
    b_m = tl.full([BT], float("-inf"), dtype=tl.float32)
    b_acc = tl.zeros([BT], dtype=tl.float32)
    # keys read transposed: a (D, BS) block of the (D, T) view of k
    p_k = tl.make_block_ptr(k + i_bh * T * D, (D, T), (1, D), (0, 0), (D, BS), (0, 1))
    p_v = tl.make_block_ptr(v + i_bh * T * D, (T, D), (D, 1), (0, 0), (BS, D), (1, 0))
    for i_s in range(0, T, BS):
        b_k = tl.load(p_k, boundary_check=(0, 1), padding_option="zero")
        b_v = tl.load(p_v, boundary_check=(0, 1))
        b_s = tl.dot(b_q, b_k) * scale
        b_s = tl.where((i_s + tl.arange(0, BS))[None, :] < T, b_s, float("-inf"))
        b_mn = tl.maximum(b_m, tl.max(b_s, 1))
        b_r = tl.exp(b_m - b_mn)
        b_p = tl.exp(b_s - b_mn[:, None])
        b_acc = b_acc * b_r + tl.sum(b_p, 1)
        b_o = b_o * b_r[:, None] + tl.dot(b_p.to(b_v.dtype), b_v)
        b_m = b_mn
        p_k = tl.advance(p_k, (0, BS))
        p_v = tl.advance(p_v, (BS, 0))
    b_o = b_o / b_acc[:, None]
    p_o = tl.make_block_ptr(o + i_bh * T * D, (T, D), (D, 1), (i_t * BT, 0), (BT, D), (1, 0))
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def chunk_local_cumsum_kernel(s, out, T, BT: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    p_s = tl.make_block_ptr(s + i_bh * T, (T,), (1,), (i_t * BT,), (BT,), (0,))
    p_o = tl.make_block_ptr(out + i_bh * T, (T,), (1,), (i_t * BT,), (BT,), (0,))
    b_s = tl.load(p_s, boundary_check=(0,)).to(tl.float32)
    tl.store(p_o, tl.cumsum(b_s, axis=0).to(p_o.dtype.element_ty), boundary_check=(0,))


def attention(q, k, v, scale):
    BH, T, D = q.shape
    o = q.new_empty(q.shape)
    bp_attn_fwd_kernel[(triton.cdiv(T, 64), BH)](q, k, v, o, T, scale, D=D, BT=64, BS=32)
    return o


def chunk_local_cumsum(g, chunk_size=64):
    BH, T = g.shape
    out = g.new_empty(g.shape)
    chunk_local_cumsum_kernel[(triton.cdiv(T, chunk_size), BH)](g, out, T, BT=chunk_size)
    return out
