"""Top-p (nucleus) and min-p filtering, as serving samplers run it before drawing the next token: each program owns one
request's next-token probabilities, sorted in descending order by the host. A token is kept where the mass of
the tokens before it in the sorted row is below TOP_P, so every request keeps at least its most likely token.
The row is walked in tiles of TILE_V columns, carrying the mass so far (a cumulative sum along the vocabulary
axis of each tile, plus the carried mass); the walk stops at the first tile past the row's `vocab` real
tokens (the columns past `vocab` are padding the caller zeroed). Programs past the live requests, and every
program of an empty vocabulary, return at once: the grid is sized for the largest batch, as CUDA graphs
capture it."""
import cuda.tile as ct

ConstInt = ct.Constant[int]
ConstFloat = ct.Constant[float]


@ct.kernel
def top_p_filter_kernel(sorted_probs, kept, n_requests, vocab,
                        TOP_P: ConstFloat, TILE_V: ConstInt, NUM_TILES: ConstInt):
    row = ct.bid(0)
    if row >= n_requests or vocab == 0:
        return
    mass = ct.zeros((1, 1), dtype=ct.float32)
    for t in range(NUM_TILES):
        if t * TILE_V >= vocab:
            break
        p = ct.load(sorted_probs, index=(row, t), shape=(1, TILE_V), padding_mode=ct.PaddingMode.ZERO)
        p = p.astype(ct.float32)
        before = ct.cumsum(p, axis=1) - p + mass
        ct.store(kept, index=(row, t), tile=ct.where(before < TOP_P, p, 0.0).astype(kept.dtype))
        mass = mass + ct.sum(p, axis=1, keepdims=True)


@ct.kernel
def min_p_filter_kernel(sorted_probs, kept, kept_mass, MIN_P: ConstFloat, TILE_V: ConstInt, NUM_TILES: ConstInt):
    """Min-p filtering of the same sorted rows: a token is kept where its probability is at least MIN_P times
    the row's most likely one (the first of the sorted row); `kept_mass` is the running mass of the kept tokens
    along the row (its last kept value renormalises the draw)."""
    row = ct.bid(0)
    first = ct.load(sorted_probs, index=(row, 0), shape=(1, TILE_V), padding_mode=ct.PaddingMode.ZERO)
    floor = ct.max(first.astype(ct.float32), axis=1, keepdims=True) * MIN_P
    mass = ct.zeros((1, 1), dtype=ct.float32)
    for t in range(NUM_TILES):
        p = ct.load(sorted_probs, index=(row, t), shape=(1, TILE_V), padding_mode=ct.PaddingMode.ZERO)
        k = ct.where(p.astype(ct.float32) >= floor, p.astype(ct.float32), 0.0)
        ct.store(kept, index=(row, t), tile=k.astype(kept.dtype))
        ct.store(kept_mass, index=(row, t), tile=(ct.cumsum(k, axis=1) + mass).astype(kept_mass.dtype))
        mass = mass + ct.sum(k, axis=1, keepdims=True)
