"""Triton's random numbers (`triton.language.random` of Triton 3.6) as the port computes them.

Where a kernel calls `tl.randint`, `tl.randint4x`, `tl.rand`, `tl.rand4x`, `tl.philox`, `tl.philox_impl` or
`tl.uint_to_uniform_float`, the Triton frontend inlines the function of the same name below, with the call's
arguments, as it inlines a kernel's own helper (rules/triton.toml, TTR-RANDOM; transpiler/frontend/triton.py,
`_random`). They are written for the transpiler, in the Triton language it reads, and give Triton's numbers bit for
bit (tests/fixtures/triton_refs, interpreted ports):

- Philox4x32 with Triton's constants and round function, `n_rounds` rounds (10 by default): per round
  c0' = hi(B * c2) ^ c1 ^ k0, c2' = hi(A * c0) ^ c3 ^ k1, c1' = lo(B * c2), c3' = lo(A * c0), then the key
  k0 += 0x9E3779B9, k1 += 0xBB67AE85; all uint32 arithmetic wraps (Tile IR's addi/muli without overflow
  flags), `hi` is the unsigned multiply-high (`tl.umulhi`, Tile IR's mulhii).
- The key is the seed read as 64 bits (a 32-bit seed sign-extended, as Triton's `seed.to(tl.uint64)`): its
  low and high 32 bits.
- The counter of `randint4x` is (offset, 0, 0, 0) for offsets of up to 32 bits (their bits as uint32), and
  (low 32 bits, high 32 bits, 0, 0) for 64-bit offsets.
- uint32 -> float in [0, 1): the bits as int32, x < 0 mapped to -x - 1, converted to float32 (round to nearest)
  and times 4.6566127342e-10 in float32 (64-bit: as int64, times 1.0842020432385337e-19, also float32): Triton's
  `x * scale` with a Python-float scale converts x to float32 the same way; written out here so that the
  frontend's typing of a kernel's unannotated scalars (passes/infer.py, `_int_evidence`) does not take the
  draw for an integer (`tl.rand(seed, offs) > p` then makes `p` a float, as Triton types it).

A narrowing to uint32 takes a uint64 whose high half is zero (shifted out and back, or shifted down), so the port's
`trunci` (no unsigned wrap) is exact where Triton's truncation wraps. cuTile Rust 0.5.0 reads every integer
literal as an i32: a uint32 constant is written as the int32 of its bits; the 64-bit Philox (64-bit counters, the
`else` arm of `philox_impl`) is Triton's too, but its constants have no Rust form, so the port refuses it (CT121).
"""
import triton
import triton.language as tl


@triton.jit
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds: tl.constexpr = 10):
    if c0.dtype == tl.uint32:
        for _ in tl.static_range(n_rounds):
            prev0 = c0
            prev2 = c2
            c0 = tl.umulhi(prev2, 0xCD9E8D57) ^ c1 ^ k0
            c2 = tl.umulhi(prev0, 0xD2511F53) ^ c3 ^ k1
            c1 = prev2 * 0xCD9E8D57
            c3 = prev0 * 0xD2511F53
            k0 = k0 + 0x9E3779B9
            k1 = k1 + 0xBB67AE85
    else:
        for _ in tl.static_range(n_rounds):
            prev0 = c0
            prev2 = c2
            c0 = tl.umulhi(prev2, 0xCA5A826395121157) ^ c1 ^ k0
            c2 = tl.umulhi(prev0, 0xD2E7470EE14C6C93) ^ c3 ^ k1
            c1 = prev2 * 0xCA5A826395121157
            c3 = prev0 * 0xD2E7470EE14C6C93
            k0 = k0 + 0x9E3779B97F4A7C15
            k1 = k1 + 0xBB67AE8584CAA73B
    return c0, c1, c2, c3


@triton.jit
def philox(seed, c0, c1, c2, c3, n_rounds: tl.constexpr = 10):
    wide_seed = seed.to(tl.int64).to(tl.uint64, bitcast=True)
    if c0.dtype == tl.int64 or c0.dtype == tl.uint64:
        key_lo = wide_seed
        key_hi = wide_seed * 0
        x0 = c0.to(tl.uint64, bitcast=True)
        x1 = c1.to(tl.uint64, bitcast=True)
        x2 = c2.to(tl.uint64, bitcast=True)
        x3 = c3.to(tl.uint64, bitcast=True)
    else:
        key_lo = ((wide_seed << 32) >> 32).to(tl.uint32)
        key_hi = (wide_seed >> 32).to(tl.uint32)
        x0 = c0.to(tl.uint32, bitcast=True)
        x1 = c1.to(tl.uint32, bitcast=True)
        x2 = c2.to(tl.uint32, bitcast=True)
        x3 = c3.to(tl.uint32, bitcast=True)
    return philox_impl(x0, x1, x2, x3, key_lo, key_hi, n_rounds)


@triton.jit
def randint4x(seed, offset, n_rounds: tl.constexpr = 10):
    if offset.dtype == tl.int64 or offset.dtype == tl.uint64:
        wide = offset.to(tl.uint64, bitcast=True)
        count_lo = ((wide << 32) >> 32).to(tl.uint32)
        count_hi = (wide >> 32).to(tl.uint32)
    else:
        count_lo = offset.to(tl.uint32)
        count_hi = count_lo * 0
    zero = count_lo * 0
    return philox(seed, count_lo, count_hi, zero, zero, n_rounds)


@triton.jit
def randint(seed, offset, n_rounds: tl.constexpr = 10):
    r0, r1, r2, r3 = randint4x(seed, offset, n_rounds)
    return r0


@triton.jit
def uint_to_uniform_float(x):
    if x.dtype == tl.int32 or x.dtype == tl.uint32:
        bits32 = x.to(tl.int32, bitcast=True)
        u = tl.where(bits32 < 0, -bits32 - 1, bits32).to(tl.float32) * 4.6566127342e-10
    else:
        bits64 = x.to(tl.int64, bitcast=True)
        u = tl.where(bits64 < 0, -bits64 - 1, bits64).to(tl.float32) * 1.0842020432385337e-19
    return u


@triton.jit
def rand(seed, offset, n_rounds: tl.constexpr = 10):
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


@triton.jit
def rand4x(seed, offsets, n_rounds: tl.constexpr = 10):
    r0, r1, r2, r3 = randint4x(seed, offsets, n_rounds)
    return uint_to_uniform_float(r0), uint_to_uniform_float(r1), uint_to_uniform_float(r2), uint_to_uniform_float(r3)
