"""The folding of single-use temporaries (transpiler/emit/fold.py): what folds, and everything that must not."""

from __future__ import annotations

from transpiler.emit.fold import fold_temporaries, reuse_equal_values, typed_by_arguments

T1 = "Tile<i32, { [N] }>"
B1 = "Tile<bool, { [N] }>"


def fold(body: str, temps: str) -> list[str]:
    lines = ["    " + line for line in body.strip().splitlines()]
    return [line.strip() for line in fold_temporaries(lines, set(temps.split()))]


def test_a_temporary_read_once_by_the_next_call_is_its_argument():
    out = fold(f"""
let m_a: {T1} = broadcast_scalar(n, shape![N]);
let m: {B1} = cmpi(cols, m_a, predicate::LessThan);
""", "m_a")
    assert out == [f"let m: {B1} = cmpi(cols, broadcast_scalar(n, shape![N]), predicate::LessThan);"]


def test_chains_fold_into_one_expression_and_other_temporaries_may_come_between():
    out = fold(f"""
let c_a: {T1} = broadcast_scalar(1, shape![N]);
let c_b: {T1} = negi(a);
let c: {T1} = c_a + c_b;
""", "c_a c_b")
    assert out == [f"let c: {T1} = broadcast_scalar(1, shape![N]) + negi(a);"]


def test_a_temporary_read_twice_stays():
    body = f"""
let m_a: {T1} = broadcast_scalar(n, shape![N]);
let m: {T1} = m_a + m_a;
"""
    assert fold(body, "m_a") == [line for line in body.strip().splitlines()]


def test_source_variables_and_loads_are_never_folded():
    body = f"""
let x: {T1} = broadcast_scalar(n, shape![N]);
let y: {T1} = negi(x);
let (v_a, v_tok): ({T1}, Token) = unsafe {{ load_ptr_tko(p, ordering::Weak, None::<scope::TileBlock>, None, None, None, Latency::<0>) }};
let v: {T1} = negi(v_a);
"""
    assert fold(body, "v_a v_tok") == [line for line in body.strip().splitlines()]


def test_nothing_moves_past_a_statement_that_rebinds_what_it_reads():
    """`let x = ...` between the temporary and its reader: folded, the reader would see the new `x`."""
    body = f"""
let t_a: {T1} = negi(x);
let x: {T1} = negi(y);
let z: {T1} = absi(t_a);
"""
    assert fold(body, "t_a") == [line for line in body.strip().splitlines()]


def test_nothing_crosses_a_block():
    """A value computed before a loop and read in it is computed once, not once per iteration."""
    body = f"""
let t_a: {T1} = negi(x);
for i in 0i32..4i32 {{
let z: {T1} = absi(t_a);
}}
"""
    assert fold(body, "t_a") == [line for line in body.strip().splitlines()]


def test_a_call_typed_by_its_reader_folds_only_where_the_reader_types_it():
    """`exti`'s result type comes from the `let`: as the right operand of a tile operator of a `let` of its type
    it folds; as another call's argument, or an operand of a scalar operator (rustc cannot infer those), not."""
    i64 = "Tile<i64, { [N] }>"
    assert fold(f"""
let o_a: {i64} = exti(cols);
let o: {i64} = base + o_a;
""", "o_a") == [f"let o: {i64} = base + exti(cols);"]
    arg = f"""
let o_a: {i64} = exti(cols);
let o: {i64} = negi(o_a);
"""
    assert fold(arg, "o_a") == [line for line in arg.strip().splitlines()]
    scalar = """
let s_a: i64 = tile_to_scalar(t);
let s: i64 = row * s_a;
"""
    assert fold(scalar, "s_a") == [line for line in scalar.strip().splitlines()]


def test_a_fold_past_the_line_width_is_left_out():
    long = "x" * 90
    body = f"""
let m_a: {T1} = broadcast_scalar({long}, shape![N]);
let m: {B1} = cmpi(cols, m_a, predicate::LessThan);
"""
    assert fold(body, "m_a") == [line for line in body.strip().splitlines()]


def test_an_operator_expression_folds_only_as_a_call_argument():
    """`a + b` into `x * _` would need parentheses: it folds where a call's argument takes it whole."""
    body = f"""
let t_a: {T1} = a + b;
let t: {T1} = t_a * c;
"""
    assert fold(body, "t_a") == [line for line in body.strip().splitlines()]
    assert fold(f"""
let t_a: {T1} = a + b;
let t: {T1} = absi(t_a);
""", "t_a") == [f"let t: {T1} = absi(a + b);"]


def test_the_functions_typed_by_their_arguments_come_from_the_api_listing():
    typed = typed_by_arguments()
    assert {"broadcast_scalar", "cmpi", "select", "reshape", "addptr_tile", "get_tile_block_id",
            "i64_from_i32"} <= typed
    # the result type comes from the reader, or the call has an effect
    assert not {"exti", "convert_tile", "scalar_to_tile", "tile_to_scalar", "iota", "load_tile",
                "load_view_tko", "store_tile", "new_token_unordered"} & typed


def test_no_fold_into_a_call_typed_by_its_reader_and_none_of_a_constant():
    """cuTile Rust's compiler types the argument of `tile_to_scalar` only from a `let` (a reshape folded there
    fails to compile, although rustc accepts it), and a `constant` only from its `let` ("Return type required")."""
    into = """
let l_a: Tile<i32, { [] }> = reshape(t, shape![]);
let l: i32 = tile_to_scalar(l_a);
"""
    assert fold(into, "l_a") == [line for line in into.strip().splitlines()]
    const = f"""
let z_a: {T1} = constant(0i32, shape![N]);
let z: {T1} = maxi(x, z_a);
"""
    assert fold(const, "z_a") == [line for line in const.strip().splitlines()]


def reuse(body: str, temps: str) -> list[str]:
    lines = ["    " + line for line in body.strip().splitlines()]
    return [line.strip() for line in reuse_equal_values(lines, set(temps.split()))]


def test_a_value_computed_again_is_the_first_one():
    """The mask a load's `other` needs, written again: dropped, its reader reads the first."""
    out = reuse(f"""
let a_b: {B1} = cmpi(cols, n_a, predicate::LessThan);
let a_k: {B1} = cmpi(cols, n_a, predicate::LessThan);
let a: {T1} = select(a_k, x, y);
""", "a_b a_k n_a")
    assert out == [f"let a_b: {B1} = cmpi(cols, n_a, predicate::LessThan);", f"let a: {T1} = select(a_b, x, y);"]


def test_values_are_not_reused_past_a_rebinding_a_block_or_at_another_type():
    rebound = f"""
let a_b: {B1} = cmpi(cols, n_a, predicate::LessThan);
cols = cols + step;
let a_k: {B1} = cmpi(cols, n_a, predicate::LessThan);
let a: {T1} = select(a_k, x, y);
"""
    assert reuse(rebound, "a_b a_k") == [line for line in rebound.strip().splitlines()]
    block = f"""
let a_b: {B1} = cmpi(cols, n_a, predicate::LessThan);
if flag {{
let a_k: {B1} = cmpi(cols, n_a, predicate::LessThan);
let a: {T1} = select(a_k, x, y);
}}
"""
    assert reuse(block, "a_b a_k") == [line for line in block.strip().splitlines()]
    other_type = """
let a_b: Tile<i64, { [N] }> = exti(cols);
let a_k: Tile<i32, { [N] }> = exti(cols);
"""
    assert reuse(other_type, "a_b a_k") == [line for line in other_type.strip().splitlines()]


def test_loads_and_values_of_a_name_that_changes_are_never_reused():
    loads = f"""
let (a_b, a_tok): ({T1}, Token) = unsafe {{ load_ptr_tko(p, ordering::Weak, None::<scope::TileBlock>, None, None, None, Latency::<0>) }};
let (a_c, a_tok2): ({T1}, Token) = unsafe {{ load_ptr_tko(p, ordering::Weak, None::<scope::TileBlock>, None, None, None, Latency::<0>) }};
"""
    assert reuse(loads, "a_b a_c a_tok a_tok2") == [line for line in loads.strip().splitlines()]
    # the first holder is a variable the kernel assigns again later: the second value stays its own
    mutable = f"""
let acc: {T1} = negi(x);
let acc_b: {T1} = negi(x);
acc = acc + acc_b;
"""
    assert reuse(mutable, "acc_b") == [line for line in mutable.strip().splitlines()]


def test_a_closure_bound_in_a_signature_splits_at_its_own_commas():
    """`F: Fn(E) -> E, E: ElementType`: the `>` of `->` closes no bracket, so the generic after it is its own."""
    from transpiler.emit.fold import _signature, _split_top
    name, generics, params, ret = _signature(
        "pub fn r<F: Fn(E) -> E, E: ElementType, const S: [i32; N]>(x: Tile<E, S>, f: F) -> Tile<E, S>")
    assert (name, ret) == ("r", "Tile<E, S>")
    assert [g.strip() for g in _split_top(generics)] == ["F: Fn(E) -> E", "E: ElementType", "const S: [i32; N]"]
    assert [q.strip() for q in _split_top(params)] == ["x: Tile<E, S>", "f: F"]
