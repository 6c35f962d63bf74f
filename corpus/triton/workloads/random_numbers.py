"""Triton's counter-based random numbers (Philox): the same (seed, offset) always draws the same numbers, so a
kernel regenerates them instead of storing them. Raw draws (integers and uniform floats, one and four streams,
32- and 64-bit offsets, fewer rounds) and a row-seeded dropout whose keep mask depends only on (row seed, column)."""
import triton
import triton.language as tl


@triton.jit
def random_draws_kernel(bits_ptr, uniform_ptr, n, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    # the uint32 draw stored into an int32 tensor keeps its bits
    tl.store(bits_ptr + offs, tl.randint(seed, offs), mask=mask)
    tl.store(uniform_ptr + offs, tl.rand(seed, offs), mask=mask)


@triton.jit
def random_streams_kernel(bits_ptr, uniform_ptr, mixed_ptr, n, seed, N_ROUNDS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    # 64-bit offsets whose high half is not zero: the counter's second word
    wide = (offs.to(tl.int64) << 33) + offs
    r0, r1, r2, r3 = tl.randint4x(seed, wide, n_rounds=N_ROUNDS)
    out = bits_ptr + offs * 4
    tl.store(out, r0, mask=mask)
    tl.store(out + 1, r1, mask=mask)
    tl.store(out + 2, r2, mask=mask)
    tl.store(out + 3, r3, mask=mask)
    u0, u1, u2, u3 = tl.rand4x(seed, offs, N_ROUNDS)
    out_u = uniform_ptr + offs * 4
    tl.store(out_u, u0, mask=mask)
    tl.store(out_u + 1, u1, mask=mask)
    tl.store(out_u + 2, u2, mask=mask)
    tl.store(out_u + 3, u3, mask=mask)
    # the building blocks: Philox on a counter of our own, its high product, and the float map of its words
    c0, c1, c2, c3 = tl.philox(seed, offs, offs * 3, offs ^ 0x5555, offs + 7)
    hi = tl.umulhi(c0, c1)
    mixed = tl.uint_to_uniform_float(hi ^ c2 ^ c3)
    tl.store(mixed_ptr + offs, mixed, mask=mask)


@triton.jit
def row_dropout_kernel(x_ptr, seeds_ptr, out_ptr, n_cols, stride, p, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    seed = tl.load(seeds_ptr + row)
    keep = tl.rand(seed, cols) > p
    y = tl.where(keep, x / (1 - p), 0.0)
    tl.store(out_ptr + row * stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)
