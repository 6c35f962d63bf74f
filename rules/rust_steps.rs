// Named steps: Rust functions the generated modules define when an entry uses them (cuTile Rust inlines them;
// the Tile IR is the same op for op as the expanded form). Each block starts with `// step: NAME` and ends
// before the next one. Read by transpiler/emit/steps.py.

// step: py_floordiv_i32
    /// Python's `a // b` on i32 scalars (rounds toward negative infinity), as cuTile Python lowers it.
    fn py_floordiv_i32(a: i32, b: i32) -> i32 {
        let a: Tile<i32, { [] }> = scalar_to_tile(a);
        let b: Tile<i32, { [] }> = scalar_to_tile(b);
        let q: Tile<i32, { [] }> = divi(a, b, rounding::NegativeInf);
        tile_to_scalar(q)
    }

// step: py_mod_i32
    /// Python's `a % b` on i32 scalars (the result takes the divisor's sign), op for op as cuTile Python
    /// lowers it: C's remainder, plus the divisor where the signs differ.
    fn py_mod_i32(a: i32, b: i32) -> i32 {
        let a: Tile<i32, { [] }> = scalar_to_tile(a);
        let b: Tile<i32, { [] }> = scalar_to_tile(b);
        let r: Tile<i32, { [] }> = remi(a, b);
        let zero: Tile<i32, { [] }> = constant(0i32, shape![]);
        let r_negative: Tile<bool, { [] }> = cmpi(r, zero, predicate::LessThan);
        let b_negative: Tile<bool, { [] }> = cmpi(b, zero, predicate::LessThan);
        let signs_differ: Tile<bool, { [] }> = xori(r_negative, b_negative);
        let r_nonzero: Tile<bool, { [] }> = cmpi(r, zero, predicate::NotEqual);
        let adjust: Tile<bool, { [] }> = andi(signs_differ, r_nonzero);
        let shifted: Tile<i32, { [] }> = r + b;
        let m: Tile<i32, { [] }> = select(adjust, shifted, r);
        tile_to_scalar(m)
    }

// step: i64_from_i32
    /// An i32 scalar widened to i64 (`exti`, signed), as both frontends convert a scalar (`x.to(tl.int64)`).
    fn i64_from_i32(x: i32) -> i64 {
        let t: Tile<i32, { [] }> = scalar_to_tile(x);
        let w: Tile<i64, { [] }> = exti(t);
        tile_to_scalar(w)
    }

// step: i32_from_i64
    /// An i64 scalar narrowed to i32 (`trunci` with no signed wrap: exact for the values that fit), as a Triton
    /// `x.to(tl.int32)` or a truncating conversion is ported.
    fn i32_from_i64(x: i64) -> i32 {
        let t: Tile<i64, { [] }> = scalar_to_tile(x);
        let n: Tile<i32, { [] }> = trunci(t, overflow::NoSignedWrap);
        tile_to_scalar(n)
    }
