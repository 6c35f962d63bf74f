"""Each normalization rule, on hand-written Tile IR text, and proof that differences survive."""

from __future__ import annotations

import pytest

from transpiler.verify.normalize import RULES, IRParseError, normalize, python_arg_names, rust_arg_names

ARGS = ["x.ptr", "x.shape0", "x.stride0", "y.ptr", "y.shape0", "y.stride0"]

BASE = """entry @k_A1f32(%arg0: tile<ptr<f32>>, %arg1: tile<i32>, %arg2: tile<i32>, %arg3: tile<ptr<f32>>, %arg4: tile<i32>, %arg5: tile<i32>) optimization_hints=<default = {}> {
  %0 = make_token : token
  %assume = assume div_by<16>, %arg0 : tile<ptr<f32>>
  %assume_1 = assume bounded<0, ?>, %arg1 : tile<i32>
  %tview = make_tensor_view %assume, shape = [%assume_1], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
  %t2 = make_tensor_view %arg3, shape = [%arg4], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
  %b:3 = get_tile_block_id : tile<i32>
  %pview = make_partition_view %tview : partition_view<tile=(64), tensor_view<?xf32, strides=[1]>>
  %tile, %tok = load_view_tko weak %pview[%b#0] token = %0 : partition_view<tile=(64), tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<64xf32>, token
  %c = constant <f32: 2.000000e+00> : tile<f32>
  %r = reshape %c : tile<f32> -> tile<1xf32>
  %bc = broadcast %r : tile<1xf32> -> tile<64xf32>
  %m = mulf %tile, %bc : tile<64xf32>
  %pv2 = make_partition_view %t2 : partition_view<tile=(64), tensor_view<?xf32, strides=[1]>>
  %s = store_view_tko weak %m, %pv2[%b#0] token = %0 : tile<64xf32>, partition_view<tile=(64), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
  return
}
"""


def norm(text: str, args=ARGS) -> str:
    return normalize(text, args)[0]


def test_every_rule_is_documented_and_tested():
    tested = {name[len("test_"):].replace("_", "-") for name in globals() if name.startswith("test_N")}
    ids = {r.split("-")[0] for r in RULES}
    assert {t.split("-")[0] for t in tested} >= ids


def test_N1_ssa_names_do_not_matter():
    renamed = BASE.replace("%tile", "%foo").replace("%bc", "%xyz").replace("%m ", "%q ").replace("%m,", "%q,")
    assert norm(renamed) == norm(BASE)


def test_N2_entry_args_named_by_parameter():
    out = norm(BASE)
    assert "arg x.ptr : tile<ptr<f32>>" in out and "arg y.shape0" in out
    assert python_arg_names([("x", "array", 2), ("n", "scalar", 0), ("T", "const", 0)]) == [
        "x.ptr", "x.shape0", "x.shape1", "x.stride0", "x.stride1", "n"]
    assert rust_arg_names([("y", "tensor_mut", 1)]) == ["y.ptr", "y.shape0", "y.stride0", "y.pshape0", "y.pstride0"]
    with pytest.raises(IRParseError):
        normalize(BASE, ARGS[:-1])


def test_N3_entry_symbol_dropped():
    assert norm(BASE.replace("@k_A1f32", "@k_entry")) == norm(BASE)


def test_N4_hint_keys():
    a = BASE.replace("load_view_tko weak %pview[%b#0] token = %0", "load_view_tko weak %pview[%b#0] token = %0 optimization_hints = <default = {latency = 3}>")
    b = BASE.replace("load_view_tko weak %pview[%b#0] token = %0", "load_view_tko weak %pview[%b#0] token = %0 optimization_hints = <sm_90 = {latency = 3}>")
    c = BASE.replace("load_view_tko weak %pview[%b#0] token = %0", "load_view_tko weak %pview[%b#0] token = %0 optimization_hints = <sm_90 = {latency = 4}>")
    assert norm(a) == norm(b) != norm(c)
    assert norm(BASE.replace(" optimization_hints=<default = {}>", "")) == norm(BASE)


def test_N5_assume_is_an_alias():
    no_assume = BASE.replace("%assume = assume div_by<16>, %arg0 : tile<ptr<f32>>\n", "").replace(
        "make_tensor_view %assume,", "make_tensor_view %arg0,")
    assert norm(no_assume) == norm(BASE)
    facts = normalize(BASE, ARGS)[1]
    assert any(f.startswith("div_by<16> on ") for f in facts) and "bounded<0, ?> on (arg x.shape0 : tile<i32>)" in facts


def test_N6_tokens_erased():
    joined = BASE.replace("%s = store_view_tko weak %m, %pv2[%b#0] token = %0",
                          "%j = join_tokens %0, %tok : token\n  %s = store_view_tko weak %m, %pv2[%b#0] token = %j")
    assert norm(joined) == norm(BASE)


def test_N7_cse_dce_and_placement():
    dup = BASE.replace("%b:3 = get_tile_block_id : tile<i32>",
                       "%b:3 = get_tile_block_id : tile<i32>\n  %dead = constant <i32: 7> : tile<i32>\n  %b2:3 = get_tile_block_id : tile<i32>")
    dup = dup.replace("%pv2[%b#0]", "%pv2[%b2#0]")
    assert norm(dup) == norm(BASE)


def test_N8_const_fold_conversions():
    folded = BASE.replace("%c = constant <f32: 2.000000e+00> : tile<f32>",
                          "%c0 = constant <f16: 2.000000e+00> : tile<f16>\n  %c = ftof %c0 : tile<f16> -> tile<f32>")
    assert norm(folded) == norm(BASE)
    same = BASE.replace("%m = mulf %tile, %bc", "%t2x = ftof %tile : tile<64xf32> -> tile<64xf32>\n  %m = mulf %t2x, %bc")
    assert norm(same) == norm(BASE)
    other = BASE.replace("<f32: 2.000000e+00>", "<f32: 3.000000e+00>")
    assert norm(other) != norm(BASE)
    # a bitcast to the same type (cuTile Rust's u64 view of an i64 index) is an identity; to another is not
    cast = BASE.replace("%m = mulf %tile, %bc", "%bt = bitcast %tile : tile<64xf32> -> tile<64xf32>\n  %m = mulf %bt, %bc")
    assert norm(cast) == norm(BASE)
    cast_i = BASE.replace("%m = mulf %tile, %bc", "%bt = bitcast %tile : tile<64xf32> -> tile<64xi32>\n"
                          "  %bb = bitcast %bt : tile<64xi32> -> tile<64xf32>\n  %m = mulf %bb, %bc")
    assert norm(cast_i) != norm(BASE)


@pytest.mark.parametrize("f8", ["f8E4M3FN", "f8E5M2"])
def test_N8_f8_constants_fold_only_where_exact(f8):
    """An f8 padding written by cuTile Rust as an f32 constant converted (`ftof`) equals cuTile Python's f8
    constant printed in decimal, where the value is exactly an f8 value; a value f8 would round is not folded,
    and another value stays another."""
    def padded(const: str) -> str:
        return BASE.replace("%m = mulf %tile, %bc", f"{const}\n  %p8r = reshape %p8 : tile<{f8}> -> tile<1x{f8}>\n"
                            f"  %p8b = broadcast %p8r : tile<1x{f8}> -> tile<64x{f8}>\n"
                            f"  %p8f = ftof %p8b : tile<64x{f8}> -> tile<64xf32>\n  %m = mulf %tile, %p8f")
    python_side = padded(f"%p8 = constant <{f8}: 0.000000e+00> : tile<{f8}>")
    rust_side = padded(f"%p32 = constant <f32: 0x00000000> : tile<f32>\n  %p8 = ftof %p32 : tile<f32> -> tile<{f8}>")
    assert norm(rust_side) == norm(python_side)
    one = padded(f"%p32 = constant <f32: 1.000000e+00> : tile<f32>\n  %p8 = ftof %p32 : tile<f32> -> tile<{f8}>")
    assert norm(one) == norm(padded(f"%p8 = constant <{f8}: 1.000000e+00> : tile<{f8}>")) != norm(python_side)
    negative_zero = padded(f"%p8 = constant <{f8}: -0.000000e+00> : tile<{f8}>")
    assert norm(negative_zero) != norm(python_side)
    # 0.1 is no f8 value: which f8 it becomes depends on rounding the normalizer does not mirror
    inexact = padded(f"%p32 = constant <f32: 1.000000e-01> : tile<f32>\n  %p8 = ftof %p32 : tile<f32> -> tile<{f8}>")
    assert "ftof" in "".join(l for l in norm(inexact).splitlines() if "f32> -> tile<" + f8 in l)
    assert norm(inexact) != norm(padded(f"%p8 = constant <{f8}: 1.015625e-01> : tile<{f8}>"))
    assert norm(inexact) != norm(padded(f"%p8 = constant <{f8}: 9.375000e-02> : tile<{f8}>"))


def test_N9_float_literals_as_bits():
    hexed = BASE.replace("<f32: 2.000000e+00>", "<f32: 0x40000000>")
    assert norm(hexed) == norm(BASE)
    assert "0x40000000" in norm(BASE)


def test_N10_whitespace():
    assert norm(BASE.replace("mulf %tile, %bc", "mulf  %tile,   %bc")) == norm(BASE)


def test_N11_identity_shape_ops():
    extra = BASE.replace("%m = mulf %tile, %bc", "%id = broadcast %bc : tile<64xf32> -> tile<64xf32>\n  %m = mulf %tile, %id")
    assert norm(extra) == norm(BASE)
    ident = BASE.replace("%m = mulf %tile, %bc", "%id = reshape %tile : tile<64xf32> -> tile<64xf32>\n  %m = mulf %id, %bc")
    assert norm(ident) == norm(BASE)


def test_N11_shape_ops_that_move_data_stay():
    """Mutants N11 must not hide (the corpus guard is hand:transpose-as-reshape, transpiler/verify/mutants.py):
    a row where a column is broadcast (same operand, same result type, other values: a rule comparing element
    types only would drop both shape ops), and a transpose of a square tile (its type is unchanged: a rule
    that took permute for a shape op like reshape would drop it)."""
    def program(body: str, out: str) -> str:
        return ("entry @k(%arg0: tile<ptr<f32>>) {\n  %x = iota : tile<4xi32>\n" + body +
                f"\n  print {out} : tile<4x4xi32>\n  return\n}}\n")
    column = program("  %r = reshape %x : tile<4xi32> -> tile<4x1xi32>\n"
                     "  %b = broadcast %r : tile<4x1xi32> -> tile<4x4xi32>", "%b")
    row = program("  %r = reshape %x : tile<4xi32> -> tile<1x4xi32>\n"
                  "  %b = broadcast %r : tile<1x4xi32> -> tile<4x4xi32>", "%b")
    assert norm(column, ["p"]) != norm(row, ["p"])
    square = program("  %r = reshape %x : tile<4xi32> -> tile<4x1xi32>\n"
                     "  %b = broadcast %r : tile<4x1xi32> -> tile<4x4xi32>\n"
                     "  %t = permute %b [1, 0] : tile<4x4xi32> -> tile<4x4xi32>", "%t")
    assert norm(square, ["p"]) != norm(column, ["p"])


@pytest.mark.parametrize("mutation", [
    ("mulf %tile, %bc", "addf %tile, %bc"),  # arithmetic op swapped
    ("mulf %tile, %bc", "mulf %bc, %tile"),  # operand order
    ("tile=(64)", "tile=(128)"),  # tile shape
    ("load_view_tko weak", "load_view_tko acquire"),  # memory ordering
    ("%pv2[%b#0]", "%pv2[%b#1]"),  # store index
    ("partition_view<tile=(64), tensor_view", "partition_view<tile=(64), padding_value = zero, tensor_view"),
])
def test_mutations_are_reported(mutation):
    old, new = mutation
    assert old in BASE
    assert norm(BASE.replace(old, new)) != norm(BASE)


def test_region_ops_and_loop_args():
    loop = """entry @k(%arg0: tile<i32>) {
  %c0 = constant <i32: 0> : tile<i32>
  %c1 = constant <i32: 1> : tile<i32>
  %z = constant <f32: 0.000000e+00> : tile<4xf32>
  %for = for %i in (%c0 to %arg0, step %c1) : tile<i32> iter_values(%acc = %z) -> (tile<4xf32>) {
    %n = addf %acc, %acc : tile<4xf32>
    continue %n : tile<4xf32>
  }
  %red = reduce %for dim=0 identities=[0.000000e+00 : f32] : tile<4xf32> -> tile<f32>
  (%a: tile<f32>, %b: tile<f32>) {
    %s = addf %a, %b : tile<f32>
    yield %s : tile<f32>
  }
  print %red : tile<f32>
  return
}
"""
    out = norm(loop, ["n"])
    assert "for ^1.0 in" in out and "iter_values(^1.1 = " in out and "addf ^100.0, ^100.1" in out
    assert norm(loop.replace("addf %a, %b", "maxf %a, %b"), ["n"]) != out
    assert norm(loop.replace("%n = addf %acc, %acc", "%n = mulf %acc, %acc"), ["n"]) != out
    assert norm(loop.replace("addf %a, %b", "addf %a, %a"), ["n"]) != out


def test_a_reduce_compares_equal_inside_a_loop_and_hoisted_out_of_it():
    """cuTile Rust hoists a loop-invariant reduce that cuTile Python leaves in the loop (N7: a pure op's
    position does not matter): its combiner's arguments are named below the reduce, not below the entry."""
    def program(hoisted: bool, combine: str = "addf") -> str:
        red = (f"  %red = reduce %x dim=0 identities=[0.000000e+00 : f32] : tile<4xf32> -> tile<f32>\n"
               f"  (%a: tile<f32>, %b: tile<f32>) {{\n    %s = {combine} %a, %b : tile<f32>\n    yield %s : tile<f32>\n  }}\n")
        inner = red.replace("\n  ", "\n    ").replace("  %red", "    %red", 1)
        return ("entry @k(%arg0: tile<i32>, %arg1: tile<ptr<f32>>) {\n"
                "  %c0 = constant <i32: 0> : tile<i32>\n  %c1 = constant <i32: 1> : tile<i32>\n"
                "  %x = constant <f32: 1.000000e+00> : tile<4xf32>\n" + (red if hoisted else "") +
                "  %for = for %i in (%c0 to %arg0, step %c1) : tile<i32> iter_values(%acc = %x) -> (tile<4xf32>) {\n" +
                ("" if hoisted else inner) +
                "    %rb = reshape %red : tile<f32> -> tile<1xf32>\n"
                "    %bc = broadcast %rb : tile<1xf32> -> tile<4xf32>\n"
                "    %n = addf %acc, %bc : tile<4xf32>\n    continue %n : tile<4xf32>\n  }\n"
                "  print %for : tile<4xf32>\n  return\n}\n")
    assert norm(program(True), ["n", "p"]) == norm(program(False), ["n", "p"])
    assert norm(program(True, "maxf"), ["n", "p"]) != norm(program(False), ["n", "p"])


def test_garbage_is_rejected():
    with pytest.raises(IRParseError):
        normalize("not tile ir", [])


def test_N13_boolean_identities():
    ir = """entry @k(%arg0: tile<i32>) {
  %c = constant <i32: 0> : tile<i32>
  %m = cmpi less_than %arg0, %c, signed : tile<i32> -> tile<i1>
  %f = constant <i1: 0> : tile<i1>
  %x = xori %m, %f : tile<i1>
  print %x : tile<i1>
  return
}
"""
    plain = ir.replace("  %f = constant <i1: 0> : tile<i1>\n  %x = xori %m, %f : tile<i1>\n", "").replace("print %x", "print %m")
    assert norm(ir, ["n"]) == norm(plain, ["n"])
    assert norm(ir.replace("<i1: 0>", "<i1: true>"), ["n"]) != norm(plain, ["n"])
    # each op with its own neutral constant only: `ori x, true` is true, `andi x, false` false, `andi x, true` x
    # (the corpus guard is hand:mask-xor-true, transpiler/verify/mutants.py)
    for op, neutral, other in (("ori", "0", "1"), ("andi", "1", "0")):
        same = ir.replace("xori", op).replace("<i1: 0>", f"<i1: {neutral}>")
        assert norm(same, ["n"]) == norm(plain, ["n"]), op
        assert norm(same.replace(f"<i1: {neutral}>", f"<i1: {other}>"), ["n"]) != norm(plain, ["n"]), op


def test_N12_continue_passthrough():
    py = """entry @k(%arg0: tile<i32>) {
  %c0 = constant <i32: 0> : tile<i32>
  %c1 = constant <i32: 1> : tile<i32>
  %z = constant <f32: 0.000000e+00> : tile<4xf32>
  %for = for %i in (%c0 to %arg0, step %c1) : tile<i32> iter_values(%acc = %z) -> (tile<4xf32>) {
    %b = cmpi equal %i, %c1, signed : tile<i32> -> tile<i1>
    if %b {
      continue %acc : tile<4xf32>
    } else {
    }
    %n = addf %acc, %acc : tile<4xf32>
    continue %n : tile<4xf32>
  }
  print %for : tile<4xf32>
  return
}
"""
    rs = py.replace("""    if %b {
      continue %acc : tile<4xf32>
    } else {
    }
    %n = addf %acc, %acc""", """    %r = if %b -> (tile<4xf32>) {
      continue %acc : tile<4xf32>
    } else {
      yield %acc : tile<4xf32>
    }
    %n = addf %r, %r""")
    assert norm(py, ["n"]) == norm(rs, ["n"])
    assert norm(rs.replace("yield %acc", "yield %z"), ["n"]) != norm(py, ["n"])
    # the same for a `break` out of a `loop` (a while loop's early exit)
    py_b, rs_b = py.replace("continue %acc :", "break %acc :"), rs.replace("continue %acc :", "break %acc :")
    assert norm(py_b, ["n"]) == norm(rs_b, ["n"])
    assert norm(rs_b.replace("yield %acc", "yield %z"), ["n"]) != norm(py_b, ["n"])
    assert norm(rs_b, ["n"]) != norm(py, ["n"])  # a break is not a continue


def test_N12_continue_passthrough_mutants():
    """Mutants N12 must not hide, besides the campaign's guard on the corpus top-p kernel (mutants.RULE_GUARDS):
    an else arm that does more than pass its values (a rule taking any else arm ending in a
    yield would drop its effect), and an `if` whose then arm falls through with a new value (a rule that
    did not ask the then arm to leave would make the else arm's value the result on both paths)."""
    head = """entry @k(%arg0: tile<i32>) {
  %c0 = constant <i32: 0> : tile<i32>
  %c1 = constant <i32: 1> : tile<i32>
  %z = constant <f32: 0.000000e+00> : tile<4xf32>
  %for = for %i in (%c0 to %arg0, step %c1) : tile<i32> iter_values(%acc = %z) -> (tile<4xf32>) {
    %b = cmpi equal %i, %c1, signed : tile<i32> -> tile<i1>
"""
    tail = """    continue %n : tile<4xf32>
  }
  print %for : tile<4xf32>
  return
}
"""
    py = head + """    if %b {
      continue %acc : tile<4xf32>
    } else {
    }
    %n = addf %acc, %acc : tile<4xf32>
""" + tail
    effect = head + """    %r = if %b -> (tile<4xf32>) {
      continue %acc : tile<4xf32>
    } else {
      print %i : tile<i32>
      yield %acc : tile<4xf32>
    }
    %n = addf %r, %r : tile<4xf32>
""" + tail
    assert norm(effect, ["n"]) != norm(py, ["n"])
    # cuTile Python: `if b: acc = z` (the arm's value is a result); the mutant reads acc as it was before
    py_set = head + """    %r = if %b -> (tile<4xf32>) {
      yield %z : tile<4xf32>
    } else {
      yield %acc : tile<4xf32>
    }
    %n = addf %r, %r : tile<4xf32>
""" + tail
    lost = py_set.replace("%n = addf %r, %r", "%n = addf %acc, %acc")
    assert norm(lost, ["n"]) != norm(py_set, ["n"])


def test_N14_shape_ops_on_constants():
    ir = """entry @k(%arg0: tile<i32>) {
  %c = constant <i32: 7> : tile<i32>
  %r = reshape %c : tile<i32> -> tile<1xi32>
  %b = broadcast %r : tile<1xi32> -> tile<4xi32>
  print %b : tile<4xi32>
  return
}
"""
    splat = """entry @k(%arg0: tile<i32>) {
  %c = constant <i32: 7> : tile<4xi32>
  print %c : tile<4xi32>
  return
}
"""
    assert norm(ir, ["n"]) == norm(splat, ["n"])
    assert norm(ir.replace("<i32: 7>", "<i32: 8>"), ["n"]) != norm(splat, ["n"])


def test_N15_return_guards():
    py = """entry @k(%arg0: tile<i32>) {
  %c = constant <i32: 0> : tile<i32>
  %m = cmpi less_than %arg0, %c, signed : tile<i32> -> tile<i1>
  if %m {
    return
  } else {
  }
  print %arg0 : tile<i32>
  return
}
"""
    rs = """entry @k(%arg0: tile<i32>) {
  %c = constant <i32: 0> : tile<i32>
  %m = cmpi less_than %arg0, %c, signed : tile<i32> -> tile<i1>
  if %m {
  } else {
    print %arg0 : tile<i32>
  }
  return
}
"""
    assert norm(py, ["n"]) == norm(rs, ["n"])
    # the print must stay on the not-taken path
    wrong = rs.replace("  } else {\n    print %arg0 : tile<i32>\n  }", "    print %arg0 : tile<i32>\n  } else {\n  }")
    assert norm(wrong, ["n"]) != norm(py, ["n"])


def test_N15_return_guards_mutants():
    """Mutants N15 must not hide, besides the campaign's guard on the corpus top-p kernel (mutants.RULE_GUARDS):
    the rest run where the guard holds too (an `if` without `return`: a rule that sank the rest below any
    `if` would make it the else arm), an effect in the guard's else arm (a rule that sank the rest below an
    else arm with ops would drop them), and the guard's condition negated."""
    py = """entry @k(%arg0: tile<i32>) {
  %c = constant <i32: 0> : tile<i32>
  %m = cmpi less_than %arg0, %c, signed : tile<i32> -> tile<i1>
  if %m {
    print %c : tile<i32>
    return
  } else {
  }
  print %arg0 : tile<i32>
  return
}
"""
    rs = """entry @k(%arg0: tile<i32>) {
  %c = constant <i32: 0> : tile<i32>
  %m = cmpi less_than %arg0, %c, signed : tile<i32> -> tile<i1>
  if %m {
    print %c : tile<i32>
  } else {
    print %arg0 : tile<i32>
  }
  return
}
"""
    assert norm(py, ["n"]) == norm(rs, ["n"])
    falls_through = py.replace("    print %c : tile<i32>\n    return\n", "    print %c : tile<i32>\n")
    assert norm(falls_through, ["n"]) != norm(rs, ["n"])
    else_effect = py.replace("  } else {\n  }", "  } else {\n    print %m : tile<i1>\n  }")
    assert norm(else_effect, ["n"]) != norm(rs, ["n"])
    negated = rs.replace("cmpi less_than", "cmpi greater_than_or_equal")
    assert norm(negated, ["n"]) != norm(py, ["n"])


def test_N6_loop_tokens():
    py = """entry @k(%arg0: tile<i32>) {
  %0 = make_token : token
  %c = constant <i32: 0> : tile<i32>
  %r:2 = loop iter_values(%i = %c, %t = %0) : tile<i32>, token -> tile<i32>, token {
    %b = cmpi less_than %i, %arg0, signed : tile<i32> -> tile<i1>
    if %b {
    } else {
      break %i, %t : tile<i32>, token
    }
    continue %i, %t : tile<i32>, token
  }
  print %r#0 : tile<i32>
  return
}
"""
    rs = """entry @k(%arg0: tile<i32>) {
  %c = constant <i32: 0> : tile<i32>
  %r = loop iter_values(%i = %c) : tile<i32> -> tile<i32> {
    %b = cmpi less_than %i, %arg0, signed : tile<i32> -> tile<i1>
    if %b {
    } else {
      break %i : tile<i32>
    }
    continue %i : tile<i32>
  }
  print %r : tile<i32>
  return
}
"""
    assert norm(py, ["n"]) == norm(rs, ["n"])
    assert norm(rs.replace("break %i", "break %c"), ["n"]) != norm(py, ["n"])


def test_N6_loop_of_tokens_only():
    """The one-trip loop of a helper that returns early: cuTile Python threads a token through it, cuTile Rust
    none; a loop that carries only tokens carries nothing. A store left out of it still differs."""
    py = """entry @k(%arg0: tile<ptr<f32>>, %arg1: tile<i32>, %arg2: tile<i32>) {
  %0 = make_token : token
  %tv = make_tensor_view %arg0, shape = [%arg1], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
  %pv = make_partition_view %tv : partition_view<tile=(64), tensor_view<?xf32, strides=[1]>>
  %b:3 = get_tile_block_id : tile<i32>
  %c = cmpi greater_than_or_equal %b#0, %arg2, signed : tile<i32> -> tile<i1>
  %z = constant <f32: 0.000000e+00> : tile<64xf32>
  %r = loop iter_values(%t = %0) : token -> token {
    if %c {
      break %t : token
    } else {
    }
    %s = store_view_tko weak %z, %pv[%b#0] token = %t : tile<64xf32>, partition_view<tile=(64), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
    %m = make_token : token
    break %m : token
  }
  return
}
"""
    rs = py.replace("%r = loop iter_values(%t = %0) : token -> token {", "loop {").replace("break %t : token", "break") \
        .replace("token = %t", "token = %0").replace("    %m = make_token : token\n    break %m : token", "    break")
    assert norm(py, ["x.ptr", "x.shape0", "n"]) == norm(rs, ["x.ptr", "x.shape0", "n"])
    gone = rs.replace("    %s = store_view_tko", "    %unused = constant <i32: 1> : tile<i32>\n    // ").split("\n")
    gone = "\n".join(ln for ln in gone if not ln.strip().startswith("//"))
    assert norm(gone, ["x.ptr", "x.shape0", "n"]) != norm(py, ["x.ptr", "x.shape0", "n"])


# N16: f16 constants past the f16 range (cuTile Python writes the constant it folded; cuTile Rust an f32
# constant and an ftof), e.g. `ct.gather(x, i, padding_value=-1e30)` on an f16 array
PAD16 = BASE.replace("tile<ptr<f32>>", "tile<ptr<f16>>").replace("xf32", "xf16").replace("tile<64xf32>", "tile<64xf16>") \
    .replace("%c = constant <f32: 2.000000e+00> : tile<f32>", "%c = constant <f16: {py}> : tile<f16>") \
    .replace("tile<f32> -> tile<1xf32>", "tile<f16> -> tile<1xf16>").replace("tile<1xf32>", "tile<1xf16>")


def _pad16(py: str = "", rust: str = "") -> str:
    if rust:
        return PAD16.replace("%c = constant <f16: {py}> : tile<f16>",
                             f"%c0 = constant <f32: {rust}> : tile<f32>\n  %c = ftof %c0 : tile<f32> -> tile<f16>")
    return PAD16.replace("{py}", py)


def test_N16_float_overflow_is_inf():
    neg_inf = norm(_pad16(py="0xFC00"))
    assert norm(_pad16(rust="-1.000000e+30")) == neg_inf  # was: OverflowError, the whole run died
    assert norm(_pad16(rust="-6.552000e+04")) == neg_inf  # the first value that rounds past f16's max
    assert norm(_pad16(py="0x7C00")) == norm(_pad16(rust="3.000000e+09"))
    # real differences survive: the sign, an in-range value, the largest finite f16, NaN
    assert norm(_pad16(rust="1.000000e+30")) != neg_inf
    assert norm(_pad16(rust="-6.550400e+04")) != neg_inf and norm(_pad16(py="0xFBFF")) == norm(_pad16(rust="-6.550400e+04"))
    assert norm(_pad16(rust="-1.000000e+04")) != neg_inf
    assert norm(_pad16(py="0x7E00")) != norm(_pad16(py="0x7C00"))
    # f32 and bf16 overflow alike (an f64 constant narrowed)
    from transpiler.verify.normalize import _float_to_bits
    assert _float_to_bits(1e40, "f32") == 0x7F800000 and _float_to_bits(-1e40, "bf16") == 0xFF80
    assert _float_to_bits(3.4028234e38, "f32") == 0x7F7FFFFF


def test_normalizer_errors_fail_closed(monkeypatch):
    """Any error inside normalization (an OverflowError, a malformed type) is an IRParseError, which the
    verifier turns into `not_verified` for that kernel; it never escapes and ends the run."""
    bad = BASE.replace("%m = mulf %tile, %bc", "%e = exti %c : tile<i32> -> tile<ixx>\n  %m = mulf %tile, %bc")
    bad = bad.replace("%c = constant <f32: 2.000000e+00> : tile<f32>",
                      "%c = constant <f32: 2.000000e+00> : tile<f32>\n  %ci = constant <i32: 2> : tile<i32>")
    bad = bad.replace("exti %c :", "exti %ci :")
    with pytest.raises(IRParseError):
        norm(bad)
    import transpiler.verify.normalize as nz

    def boom(value, dtype):
        raise OverflowError("float too large to pack with e format")

    monkeypatch.setattr(nz, "_float_to_bits", boom)
    with pytest.raises(IRParseError, match="OverflowError"):
        norm(BASE.replace("<f32: 2.000000e+00>", "<f32: 2.5>"))


CONV = """entry @k(%arg0: tile<ptr<{t}>>, %arg1: tile<i32>, %arg2: tile<i32>) {{
  %c = constant <{st}: {v}> : tile<{st}>
  %e = {conv} : tile<{st}> -> tile<{t}>
  %r = store_ptr_tko weak %arg0, %e : tile<ptr<{t}>>, tile<{t}> -> token
  return
}}
"""


def _conv(t: str, st: str, v: str, conv: str) -> str:
    return normalize(CONV.format(t=t, st=st, v=v, conv=conv), ["out.ptr", "out.shape0", "out.stride0"])[0]


def _stored_const(t: str, v: str) -> str:
    return _conv(t, t, v, "bitcast %c")  # a same-type bitcast is an identity: the stored constant itself


def test_N8_const_fold_honours_signedness_and_rounding():
    # exti: `unsigned` is zero-extension (it contains the substring `signed`: it used to fold as sign-extension)
    assert _conv("i64", "i32", "-1", "exti %c signed") == _stored_const("i64", "-1")
    assert _conv("i64", "i32", "-1", "exti %c unsigned") == _stored_const("i64", "4294967295")
    assert _conv("i64", "i32", "-1", "exti %c signed") != _conv("i64", "i32", "-1", "exti %c unsigned")
    assert _conv("i64", "i32", "5", "exti %c unsigned") == _stored_const("i64", "5")
    # itof honours signedness
    assert _conv("f32", "i32", "-1", "itof %c signed") == _stored_const("f32", "-1.0")
    assert _conv("f32", "i32", "-1", "itof %c unsigned") == _stored_const("f32", "4294967296.0")
    assert _conv("f32", "i32", "-1", "itof %c signed") != _conv("f32", "i32", "-1", "itof %c unsigned")
    # ftof: nearest-even folds; another rounding mode is not folded (so it differs from the nearest-even fold)
    assert _conv("f16", "f32", "0.99999994", "ftof %c") == _stored_const("f16", "1.0")
    assert _conv("f16", "f32", "0.99999994", "ftof %c rounding<nearest_even>") == _stored_const("f16", "1.0")
    zero = _conv("f16", "f32", "0.99999994", "ftof %c rounding<zero>")
    assert zero != _stored_const("f16", "1.0") and "rounding<zero>" in zero
    # trunci keeps the low bits
    assert _conv("i32", "i64", "4294967295", "trunci %c") == _stored_const("i32", "-1")


@pytest.mark.parametrize("a,b", [
    (("i64", "i32", "-1", "exti %c signed"), ("i64", "i32", "-1", "exti %c unsigned")),
    (("f32", "i32", "-1", "itof %c signed"), ("f32", "i32", "-1", "itof %c unsigned")),
    (("f16", "f32", "0.99999994", "ftof %c"), ("f16", "f32", "0.99999994", "ftof %c rounding<zero>")),
    (("f16", "f32", "0.99999994", "ftof %c rounding<zero>"), ("f16", "f32", "0.99999994", "ftof %c rounding<positive_inf>")),
])
def test_N8_conversion_mutants_are_reported(a, b):
    assert _conv(*a) != _conv(*b)


def _fact(text: str, at: str = "%m = mulf %tile, %bc") -> str:
    """BASE with extra lines inserted before `at`."""
    return BASE.replace(at, text + "\n  " + at)


def test_N5_facts_are_compared_whole():
    # the whole predicate counts (it used to be cut at the first comma: bounded<0, 0> read as `bounded<0`)
    a = _fact("%f = assume bounded<0, 0>, %tile : tile<64xf32>\n  %g = addf %f, %f : tile<64xf32>",
              at="%m = mulf %tile, %bc").replace("mulf %tile, %bc", "mulf %g, %bc")
    b = a.replace("bounded<0, 0>", "bounded<0, ?>")
    none = a.replace("%f = assume bounded<0, 0>, %tile : tile<64xf32>\n  ", "").replace("addf %f, %f", "addf %tile, %tile")
    assert norm(a) != norm(b) != norm(none) != norm(a)
    assert "assume bounded<0, 0>, @1 : tile<64xf32>" in norm(a)
    assert normalize(a, ARGS)[1] != normalize(b, ARGS)[1]


def test_N5_false_facts_are_different():
    # a false bound on the block id (every block claims to be block 0)
    assert norm(_fact("%fb = assume bounded<0, 0>, %b#0 : tile<i32>")) != norm(BASE)
    # a divisibility the launch does not guarantee, on a (possibly ragged) length
    assert norm(_fact("%fd = assume div_by<64>, %arg4 : tile<i32>")) != norm(BASE)
    # a stronger pointer alignment than cuTile Python checks, a bound on a scalar-like value
    assert norm(_fact("%fp = assume div_by<64>, %arg3 : tile<ptr<f32>>")) != norm(BASE)
    assert norm(_fact("%fs = assume div_by<16>, %arg4 : tile<i32>")) != norm(BASE)
    # facts on a value reached through the alias compare on the value itself
    assert norm(_fact("%fd = assume div_by<64>, %assume_1 : tile<i32>")) == norm(_fact("%fd = assume div_by<64>, %arg1 : tile<i32>"))


def test_N5_allowed_ptr_arg_div16():
    assert norm(_fact("%fa = assume div_by<16>, %arg3 : tile<ptr<f32>>")) == norm(BASE)


def test_N5_ptr_arg_div16_only_from_cutile_python():
    """cuTile Python checks 16-byte alignment at launch; the C ABI checks element alignment only, so a Rust
    port stating the fact (which the compiler may exploit) is different."""
    from transpiler.verify.normalize import normalize
    fact = _fact("%fa = assume div_by<16>, %arg3 : tile<ptr<f32>>")
    assert normalize(fact, ARGS, side="python")[0] == normalize(BASE, ARGS, side="python")[0]
    assert normalize(fact, ARGS, side="rust")[0] != normalize(BASE, ARGS, side="rust")[0]


def test_N5_allowed_ptr_natural_align():
    off = "%o = offset %arg3, %arg4 : tile<ptr<f32>>, tile<i32> -> tile<ptr<f32>>\n  "
    assert norm(_fact(off + "%fo = assume div_by<4>, %o : tile<ptr<f32>>")) == norm(_fact(off.strip()))
    assert norm(_fact(off + "%fo = assume div_by<8>, %o : tile<ptr<f32>>")) != norm(_fact(off.strip()))


def test_N5_allowed_shape_stride_nonneg():
    assert norm(_fact("%fs = assume bounded<0, ?>, %arg4 : tile<i32>\n  %ft = assume bounded<0, ?>, %arg5 : tile<i32>")) == norm(BASE)
    assert norm(_fact("%fs = assume bounded<1, ?>, %arg4 : tile<i32>")) != norm(BASE)


def test_N5_allowed_block_id_nonneg():
    assert norm(_fact("%fb = assume bounded<0, ?>, %b#0 : tile<i32>")) == norm(BASE)
    grid = "%g:3 = get_num_tile_blocks : tile<i32>\n  "
    assert norm(_fact(grid + "%fg = assume bounded<0, ?>, %g#1 : tile<i32>")) == norm(_fact(grid.strip()))
    assert norm(_fact(grid + "%fg = assume bounded<0, 0>, %g#1 : tile<i32>")) != norm(_fact(grid.strip()))


LOOP_FACT = """entry @k(%arg0: tile<ptr<i32>>, %arg1: tile<i32>, %arg2: tile<i32>) {
  %lb = constant <i32: {lb}> : tile<i32>
  %one = constant <i32: 1> : tile<i32>
  for %i in (%lb to %arg1, step %one) : tile<i32> {
    {fact}%p = offset %arg0, %i : tile<ptr<i32>>, tile<i32> -> tile<ptr<i32>>
    %s = store_ptr_tko weak %p, %i : tile<ptr<i32>>, tile<i32> -> token
  }
  return
}
"""


def _loop_fact(lb: str, fact: str) -> str:
    text = LOOP_FACT.replace("{lb}", lb).replace("{fact}", fact)
    if fact:
        text = text.replace("offset %arg0, %i", "offset %arg0, %ai").replace("%p, %i :", "%p, %ai :")
    return normalize(text, ["out.ptr", "out.shape0", "out.stride0"])[0]


def test_N5_allowed_for_iv_nonneg():
    fact = "%ai = assume bounded<0, ?>, %i : tile<i32>\n    "
    assert _loop_fact("0", fact) == _loop_fact("0", "")
    assert _loop_fact("-1", fact) != _loop_fact("-1", "")  # the lower bound may be negative: the fact is compared
    assert _loop_fact("0", fact.replace("bounded<0, ?>", "bounded<0, 7>")) != _loop_fact("0", "")


def _const_loop_fact(lb: int, ub: int, fact: str) -> str:
    text = LOOP_FACT.replace("{lb}", str(lb)).replace("{fact}", fact).replace(
        "for %i in (%lb to %arg1,", "for %i in (%lb to %ub,").replace(
        "  %one = constant", f"  %ub = constant <i32: {ub}> : tile<i32>\n  %one = constant")
    if fact:
        text = text.replace("offset %arg0, %i", "offset %arg0, %ai").replace("%p, %i :", "%p, %ai :")
    return normalize(text, ["out.ptr", "out.shape0", "out.stride0"])[0]


def test_N5_allowed_for_iv_range():
    """`for i in 0..4`: cuTile Rust states `bounded<0, 3>` on i; true by construction, so dropped. A range
    narrower than the loop's (a false fact) is compared, as is one on a loop with a runtime bound."""
    fact = "%ai = assume bounded<{a}, {b}>, %i : tile<i32>\n    "
    assert _const_loop_fact(0, 4, fact.format(a=0, b=3)) == _const_loop_fact(0, 4, "")
    assert _const_loop_fact(2, 9, fact.format(a=1, b=8)) == _const_loop_fact(2, 9, "")  # weaker: still true
    assert _const_loop_fact(0, 4, fact.format(a=0, b=2)) != _const_loop_fact(0, 4, "")  # excludes i = 3
    assert _const_loop_fact(0, 4, fact.format(a=1, b=3)) != _const_loop_fact(0, 4, "")  # excludes i = 0
    assert _loop_fact("0", fact.format(a=0, b=3)) != _loop_fact("0", "")  # runtime upper bound


def test_N5_allowed_for_iv_below_ub():
    """`for i in s..4` (s known at run time): cuTile Rust states `bounded<?, 3>` on i; true by construction,
    so dropped. A smaller bound (a false fact) is compared, as is one on a loop with a runtime upper bound."""
    fact = "%ai = assume bounded<?, {b}>, %i : tile<i32>\n    "

    def runtime_lb_loop(fact: str) -> str:
        text = LOOP_FACT.replace("{fact}", fact).replace("%lb = constant <i32: {lb}> : tile<i32>", "%ub = constant "
                                                         "<i32: 4> : tile<i32>").replace(
            "for %i in (%lb to %arg1,", "for %i in (%arg2 to %ub,")
        if fact:
            text = text.replace("offset %arg0, %i", "offset %arg0, %ai").replace("%p, %i :", "%p, %ai :")
        return normalize(text, ["out.ptr", "out.shape0", "out.stride0"])[0]
    assert runtime_lb_loop(fact.format(b=3)) == runtime_lb_loop("")
    assert runtime_lb_loop(fact.format(b=9)) == runtime_lb_loop("")  # weaker: still true
    assert runtime_lb_loop(fact.format(b=2)) != runtime_lb_loop("")  # excludes i = 3
    assert _loop_fact("0", fact.format(b=3)) != _loop_fact("0", "")  # runtime upper bound: compared


def test_N5_allowed_for_iv_below_ub_of_a_persistent_loop():
    """`for i in range(bid, 256, num_blocks)`: cuTile Rust states `bounded<?, 255>` on i, the step being the grid
    size (>= 1 in every launch); true by construction, so dropped. A smaller bound (a false fact) is compared,
    as is the same fact on a loop whose step is an argument (it may be anything)."""
    fact = "%ai = assume bounded<?, {b}>, %i : tile<i32>\n    "

    def persistent(fact: str, step: str = "%n") -> str:
        text = LOOP_FACT.replace("{fact}", fact).replace(
            "  %lb = constant <i32: {lb}> : tile<i32>\n",
            "  %b, %by, %bz = get_tile_block_id : tile<i32>\n  %n, %ny, %nz = get_num_tile_blocks : tile<i32>\n"
            "  %ub = constant <i32: 256> : tile<i32>\n").replace(
            "for %i in (%lb to %arg1, step %one)", f"for %i in (%b to %ub, step {step})")
        if fact:
            text = text.replace("offset %arg0, %i", "offset %arg0, %ai").replace("%p, %i :", "%p, %ai :")
        return normalize(text, ["out.ptr", "out.shape0", "out.stride0"])[0]
    assert persistent(fact.format(b=255)) == persistent("")
    assert persistent(fact.format(b=300)) == persistent("")  # weaker: still true
    assert persistent(fact.format(b=254)) != persistent("")  # excludes i = 255
    assert persistent(fact.format(b=255), "%arg2") != persistent("", "%arg2")  # a step of any sign: compared


TWO_LOOPS = """entry @k(%arg0: tile<ptr<i32>>, %arg1: tile<i32>, %arg2: tile<i32>) {
  %zero = constant <i32: 0> : tile<i32>
  %four = constant <i32: 4> : tile<i32>
  %one = constant <i32: 1> : tile<i32>
  for %i in (%zero to %four, step %one) : tile<i32> {
    %p = offset %arg0, %i : tile<ptr<i32>>, tile<i32> -> tile<ptr<i32>>
    %s = store_ptr_tko weak %p, %i : tile<ptr<i32>>, tile<i32> -> token
  }
  for %j in (%arg1 to %arg2, step %one) : tile<i32> {
    {fact}%q = offset %arg0, %j : tile<ptr<i32>>, tile<i32> -> tile<ptr<i32>>
    %t = store_ptr_tko weak %q, %j : tile<ptr<i32>>, tile<i32> -> token
  }
  return
}
"""


@pytest.mark.parametrize("fact", ["bounded<0, 3>", "bounded<0, ?>", "bounded<?, 3>"])
def test_N5_loop_facts_do_not_leak_to_the_next_loop(fact):
    """A second loop at the same depth reuses the induction variable's canonical name (^1.0); the first
    loop's range (0..4) must not make a fact on the second loop's variable (arg1..arg2, a runtime range that
    may start below 0) allowed. Repro: shared/repros/verifier-holes/two_loops.py."""
    def two_loops(fact_line: str) -> str:
        text = TWO_LOOPS.replace("{fact}", fact_line)
        if fact_line:
            text = text.replace("offset %arg0, %j", "offset %arg0, %aj").replace("%q, %j :", "%q, %aj :")
        return normalize(text, ["out.ptr", "out.shape0", "out.stride0"])[0]
    assert two_loops(f"%aj = assume {fact}, %j : tile<i32>\n    ") != two_loops("")


EFFECTS = [
    # an extra atomic write (to the input x)
    "%ar = atomic_red_view_tko addf relaxed device %pview[%b#0], %tile token = %0 : partition_view<tile=(64), "
    "tensor_view<?xf32, strides=[1]>>, tile<i32>, tile<64xf32> -> token",
    "%gd = gdc_launch_dependents : token",  # synchronization ops, with an unused token result
    "%mf = memory_fence_alias_tko token = %0 : token -> token",
    "%mm = multimem_red_tko addf %tile token = %0 : tile<64xf32> -> token",
    "%al = alloca : tile<ptr<f32>>",
    "barrier",
    "%uk = some_future_op %tile : tile<64xf32> -> tile<64xf32>",  # an op this module does not know
]


def _op_name(line: str) -> str:
    return (line.split(" = ", 1)[1] if line.startswith("%") else line).split(" ")[0]


@pytest.mark.parametrize("effect", EFFECTS, ids=[_op_name(e) for e in EFFECTS])
def test_N7_only_known_pure_ops_are_erased(effect):
    """Every op not known to be pure is an effect: printed where it stands, never erased, even unused."""
    added = _fact(effect)
    assert norm(added) != norm(BASE)
    name = _op_name(effect)
    assert name in norm(added)
    # and compared in program order: the same op after the store is another program
    moved = BASE.replace("  return\n", f"  {effect}\n  return\n")
    assert norm(moved) != norm(added)


def test_N7_pure_ops_still_erased_when_dead():
    dead = _fact("%d1 = exp %tile : tile<64xf32>\n  %d2 = addf %d1, %tile : tile<64xf32>")
    assert norm(dead) == norm(BASE)


# N17: an in-place pattern. y is read, x is written and read back; {T} is the token of the load of x.
_PV = "partition_view<tile=(64), tensor_view<?xf32, strides=[1]>>"
INPLACE = """entry @k(%arg0: tile<ptr<f32>>, %arg1: tile<i32>, %arg2: tile<i32>, %arg3: tile<ptr<f32>>, %arg4: tile<i32>, %arg5: tile<i32>) {
  %0 = make_token : token
  %1 = make_token : token
  %tv = make_tensor_view %arg0, shape = [%arg1], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
  %tv2 = make_tensor_view %arg3, shape = [%arg4], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
  %b:3 = get_tile_block_id : tile<i32>
  %pv = make_partition_view %tv : PV
  %pv2 = make_partition_view %tv2 : PV
  %t, %tt = load_view_tko weak %pv2[%b#0] token = {Y} : PV, tile<i32> -> tile<64xf32>, token
  %s = store_view_tko weak %t, %pv[%b#0] token = %0 : tile<64xf32>, PV, tile<i32> -> token
  {MID}%u, %ut = load_view_tko weak %pv[%b#1] token = {T} : PV, tile<i32> -> tile<64xf32>, token
  print %u : tile<64xf32>
  return
}
""".replace("PV", _PV)


def _ip(t: str = "%0", y: str = "%1", mid: str = "") -> str:
    return norm(INPLACE.replace("{T}", t).replace("{Y}", y).replace("{MID}", mid))


def test_N17_token_order_store_then_load():
    ordered = _ip("%s")
    assert "; mem#2 after mem#1" in ordered and "store_view_tko" in ordered.split("; mem#1\n")[0].splitlines()[-1]
    assert ordered != _ip("%0")  # the load of x no longer waits for the store to x
    joined = _ip("%j", mid="%j = join_tokens %1, %s : token\n  ")
    assert joined == ordered  # ordered through join_tokens all the same
    # Python threads one token for every array, Rust one per tensor: the same relation prints the same
    assert _ip("%s", y="%0") == ordered


def test_N17_irrelevant_edges_stay_equal():
    # a load of y ordered after the store to x (different arrays) or after nothing: irrelevant
    late_y = "%w, %wt = load_view_tko weak %pv2[%b#2] token = {} : " + _PV + ", tile<i32> -> tile<64xf32>, token\n  "
    assert _ip(mid=late_y.format("%s")) == _ip(mid=late_y.format("%1"))
    # two loads of x ordered one after the other, or not: neither writes
    late_x = late_y.replace("%pv2", "%pv").format("%1")
    assert _ip("%wt", mid=late_x) == _ip(mid=late_x)
    # the store to x ordered after the load of y: different arrays
    assert norm(INPLACE.replace("token = %0 : tile<64xf32>", "token = %tt : tile<64xf32>").replace("{T}", "%0")
                .replace("{Y}", "%1").replace("{MID}", "")) == _ip()


def test_N17_store_after_load_and_atomics_are_compared():
    war = INPLACE.replace("{T}", "%0").replace("{Y}", "%1").replace("{MID}", "")
    war = war.replace("  print %u : tile<64xf32>\n", "  %s2 = store_view_tko weak %u, %pv[%b#1] token = @T : "
                      "tile<64xf32>, " + _PV + ", tile<i32> -> token\n")
    assert norm(war.replace("@T", "%ut")) != norm(war.replace("@T", "%0"))  # a store of x after a load of x (WAR)
    # write after write: two plain stores are compared too (no allowance since b5fe41b: the port chains them)
    waw = war.replace("%u, %pv[%b#1]", "%t, %pv[%b#1]")
    assert norm(waw.replace("@T", "%s")) != norm(waw.replace("@T", "%0"))
    # and an atomic after a store of the same array
    red = war.replace("@T", "%0").replace("  return\n", "  %ar = atomic_red_view_tko addf relaxed device %pv[%b#0], %u "
                                          "token = @T : " + _PV + ", tile<i32>, tile<64xf32> -> token\n  return\n")
    assert norm(red.replace("@T", "%s2")) != norm(red.replace("@T", "%0"))


def test_N17_unknown_origin_is_kept():
    # the stored-to pointer comes out of a loop (a block argument): it may be x, so the edge is kept
    unknown = INPLACE.replace("{T}", "@T").replace("{Y}", "%1").replace(
        "{MID}", "%one = constant <i32: 1> : tile<i32>\n"
        "  %pp = for %i in (%arg1 to %arg1, step %one) : tile<i32> iter_values(%q = %arg3) -> (tile<ptr<f32>>) {\n"
        "    continue %q : tile<ptr<f32>>\n  }\n"
        "  %st = store_ptr_tko weak %pp, %t token = %0 : tile<ptr<f32>>, tile<64xf32> -> token\n  ")
    assert norm(unknown.replace("@T", "%st")) != norm(unknown.replace("@T", "%0"))
    known = unknown.replace("store_ptr_tko weak %pp,", "store_ptr_tko weak %arg3,")  # y: another array
    assert norm(known.replace("@T", "%st")) == norm(known.replace("@T", "%0"))
    with pytest.raises(IRParseError):  # a token operand that is not a known token fails closed
        norm(INPLACE.replace("{T}", "%nowhere").replace("{Y}", "%1").replace("{MID}", ""))


LOOP_RMW = """entry @k(%arg0: tile<ptr<f32>>, %arg1: tile<i32>, %arg2: tile<i32>) {
  %0 = make_token : token
  %c0 = constant <i32: 0> : tile<i32>
  %c1 = constant <i32: 1> : tile<i32>
  %tv = make_tensor_view %arg0, shape = [%arg1], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
  %pv = make_partition_view %tv : PV
  %r = for %i in (%c0 to %arg1, step %c1) : tile<i32> iter_values(%tk = %0) -> (token) {
    %u, %ut = load_view_tko weak %pv[%c0] token = {L} : PV, tile<i32> -> tile<64xf32>, token
    %s = store_view_tko weak %u, %pv[%c0] token = %ut : tile<64xf32>, PV, tile<i32> -> token
    continue %s : token
  }
  %c, %ct = if %arg2 -> (tile<64xf32>, token) {
    %v, %vt = load_view_tko weak %pv[%c1] token = %r : PV, tile<i32> -> tile<64xf32>, token
    yield %v, %vt : tile<64xf32>, token
  } else {
    %w = constant <f32: 0.0> : tile<64xf32>
    yield %w, %r : tile<64xf32>, token
  }
  %e = store_view_tko weak %c, %pv[%c1] token = {E} : tile<64xf32>, PV, tile<i32> -> token
  return
}
""".replace("PV", _PV)


def _loop(load_tok: str, end_tok: str) -> str:
    return norm(LOOP_RMW.replace("{L}", load_tok).replace("{E}", end_tok), ARGS[:3])


def test_N17_loop_carried_and_region_tokens():
    base = _loop("%tk", "%ct")
    assert "mem#1 after mem#2" in base  # the load of the next iteration waits for this iteration's store
    assert _loop("%0", "%ct") != base
    assert _loop("%tk", "%0") != base  # the store after the `if` no longer waits


def test_N17_mutant_load_takes_the_original_token():
    """No corpus entry writes an array and reads it back (the only same-array pairs are two stores, which
    the allowance leaves out), so this mutant is text-level: a split-K style read-modify-write whose
    read-back takes the tensor's entry token instead of the token of the store before it."""
    port = _ip("%s", y="%1")
    mutant = _ip("%1", y="%1")
    assert port != mutant and _ip("%s", y="%0") == port


def test_N18_bitcast_of_an_integer_constant_is_the_float_with_those_bits():
    import struct
    # cuTile Rust's ct.Constant[float]: the const generic i32 holds the f32 bits of 1e-6 (0x358637BD)
    bits = struct.unpack("<i", struct.pack("<f", 1e-6))[0]
    assert _conv("f32", "i32", str(bits), "bitcast %c") == _stored_const("f32", "0x358637BD")
    assert _conv("f32", "i32", str(bits), "bitcast %c") == _stored_const("f32", "9.99999997e-07")
    # a negative i32 is the same bits (sign bit set): -1.0 is 0xBF800000
    neg = struct.unpack("<i", struct.pack("<f", -1.0))[0]
    assert neg < 0 and _conv("f32", "i32", str(neg), "bitcast %c") == _stored_const("f32", "-1.0")
    # 16-bit: i16 bits to f16 and to bf16 are different floats; the reverse direction keeps the bits too
    assert _conv("f16", "i16", "15360", "bitcast %c") == _stored_const("f16", "1.0")  # 0x3C00
    assert _conv("bf16", "i16", "16256", "bitcast %c") == _stored_const("bf16", "1.0")  # 0x3F80
    assert _conv("i32", "f32", "1.0", "bitcast %c") == _stored_const("i32", "1065353216")
    # with the ftof fold (N8): the f32 constant converted to f16 is Python's f16 constant of the value
    entry = CONV.replace("%e = {conv} : tile<{st}> -> tile<{t}>",
                         "%b = bitcast %c : tile<{st}> -> tile<f32>\n  %e = ftof %b : tile<f32> -> tile<{t}>")
    got = normalize(entry.format(t="f16", st="i32", v=str(bits), conv=""), ["out.ptr", "out.shape0", "out.stride0"])[0]
    assert got == _stored_const("f16", "1.0132789611816406e-06")  # f16(1e-6): subnormal 0x0011
    assert "0x0011" in got


@pytest.mark.parametrize("a,b", [
    # one ulp apart: the fold keeps the bits, so a different constant stays different
    (("f32", "i32", "897988541", "bitcast %c"), ("f32", "i32", "897988542", "bitcast %c")),
    # the same integer read as f16 and as bf16 differs
    (("f16", "i16", "15360", "bitcast %c"), ("bf16", "i16", "15360", "bitcast %c")),
])
def test_N18_bitcast_mutants_are_reported(a, b):
    assert _conv(*a) != _conv(*b)


def test_N18_is_not_a_value_conversion():
    # bitcast keeps bits, itof converts the value: 1065353216 as bits is 1.0, as a value 1.0653532e9
    assert _conv("f32", "i32", "1065353216", "bitcast %c") != _conv("f32", "i32", "1065353216", "itof %c signed")
    # widths must agree; a bitcast of a non-constant is not folded (it stays in the text)
    assert "bitcast" in _conv("f32", "i64", "1065353216", "bitcast %c")


def test_N19_condition_in_its_arms():
    """`a and b`: cuTile Python yields `a` in the else arm, cuTile Rust the constant false; in that arm `a` is
    false, so both are the same program. Only the condition itself is known there."""
    py = """entry @k(%arg0: tile<i32>, %arg1: tile<i32>) {
  %c = cmpi less_than %arg0, %arg1, signed : tile<i32> -> tile<i1>
  %r = if %c -> (tile<i1>) {
    %d = cmpi less_than %arg1, %arg0, signed : tile<i32> -> tile<i1>
    yield %d : tile<i1>
  } else {
    yield %c : tile<i1>
  }
  print %r : tile<i1>
  return
}
"""
    rs = py.replace("    yield %c : tile<i1>", "    %f = constant <i1: 0> : tile<i1>\n    yield %f : tile<i1>")
    assert norm(py, ["a", "b"]) == norm(rs, ["a", "b"])
    # mutants the rule must not hide: the else arm yielding true, and a value other than the condition
    assert norm(rs.replace("<i1: 0>", "<i1: 1>"), ["a", "b"]) != norm(py, ["a", "b"])
    other = py.replace("  } else {\n    yield %c", "  } else {\n    %e = cmpi equal %arg0, %arg1, signed : tile<i32> -> tile<i1>\n    yield %e")
    assert norm(other, ["a", "b"]) != norm(rs, ["a", "b"])
    # `a or b`: in the then arm the condition is true
    py_or = py.replace("    %d = cmpi less_than %arg1, %arg0, signed : tile<i32> -> tile<i1>\n    yield %d",
                       "    yield %c").replace("  } else {\n    yield %c", "  } else {\n    %d = cmpi less_than %arg1, %arg0, signed : tile<i32> -> tile<i1>\n    yield %d", 1)
    rs_or = py_or.replace("  %r = if %c -> (tile<i1>) {\n    yield %c",
                          "  %r = if %c -> (tile<i1>) {\n    %t = constant <i1: 1> : tile<i1>\n    yield %t")
    assert py_or != rs_or and norm(py_or, ["a", "b"]) == norm(rs_or, ["a", "b"])


def test_N19_leaves_ifs_with_other_results_alone():
    """A break flag carried through an `if` with other values (N12's territory) is not the and/or lowering:
    yielding the condition there stays a value, or `continue flag` after the `if` would compare unlike."""
    py = """entry @k(%arg0: tile<i32>, %arg1: tile<i32>) {
  %c = cmpi less_than %arg0, %arg1, signed : tile<i32> -> tile<i1>
  %z = constant <f32: 0.000000e+00> : tile<4xf32>
  %r:2 = if %c -> (tile<4xf32>, tile<i1>) {
    yield %z, %c : tile<4xf32>, tile<i1>
  } else {
    yield %z, %c : tile<4xf32>, tile<i1>
  }
  print %r#1 : tile<i1>
  return
}
"""
    rs = py.replace("  } else {\n    yield %z, %c", "  } else {\n    %f = constant <i1: 0> : tile<i1>\n    yield %z, %f")
    assert norm(py, ["a", "b"]) != norm(rs, ["a", "b"])


_PADDED = """entry @k(%arg0: tile<ptr<f16>>, %arg1: tile<i32>, %arg2: tile<ptr<f16>>) {{
  %i = iota : tile<4x8xi32>
  %n = reshape %arg1 : tile<i32> -> tile<1x1xi32>
  %nb = broadcast %n : tile<1x1xi32> -> tile<4x8xi32>
  %m = cmpi less_than %i, %nb, signed : tile<4x8xi32> -> tile<4x8xi1>
  %m2 = cmpi less_than %i, %i, signed : tile<4x8xi32> -> tile<4x8xi1>
  %p0 = reshape %arg0 : tile<ptr<f16>> -> tile<1x1xptr<f16>>
  %pb = broadcast %p0 : tile<1x1xptr<f16>> -> tile<4x8xptr<f16>>
  %p = offset %pb, %i : tile<4x8xptr<f16>>, tile<4x8xi32> -> tile<4x8xptr<f16>>
{body}
  %q0 = reshape %arg2 : tile<ptr<f16>> -> tile<1x1xptr<f16>>
  %qb = broadcast %q0 : tile<1x1xptr<f16>> -> tile<4x8xptr<f16>>
  %q = offset %qb, %i : tile<4x8xptr<f16>>, tile<4x8xi32> -> tile<4x8xptr<f16>>
  %t2 = store_ptr_tko weak %q, {out} : tile<4x8xptr<f16>>, tile<4x8xf16> -> token
  return
}}
"""
_PY_PAD = """  %c = constant <f16: 0x0000> : tile<4x8xf16>
  %l, %t = load_ptr_tko weak %p, %m, %c : tile<4x8xptr<f16>>, tile<4x8xi1>, tile<4x8xf16> -> tile<4x8xf16>, token"""
_RS_PAD = """  %l, %t = load_ptr_tko weak %p, %m : tile<4x8xptr<f16>>, tile<4x8xi1> -> tile<4x8xf16>, token
  %c32 = constant <f32: 0.000000e+00> : tile<f32>
  %c16 = ftof %c32 : tile<f32> -> tile<f16>
  %cr = reshape %c16 : tile<f16> -> tile<1x1xf16>
  %c = broadcast %cr : tile<1x1xf16> -> tile<4x8xf16>
  %s = select {cond}, {a}, {b} : tile<4x8xi1>, tile<4x8xf16>"""


def test_N20_select_padding():
    """A masked load without padding, then a select of the padding under the same mask (cuTile Rust's
    rank >= 2 gather) is the padded load (cuTile Python's)."""
    args = ["x.ptr", "n", "o.ptr"]
    py = norm(_PADDED.format(body=_PY_PAD, out="%l"), args)
    rs = _PADDED.format(body=_RS_PAD.format(cond="%m", a="%l", b="%c"), out="%s")
    assert norm(rs, args) == py
    # mutants the rule must not hide: another mask, the operands swapped, another padding value, the
    # unpadded load used elsewhere too, a padding that is not a constant
    other_mask = rs.replace("select %m,", "select %m2,")
    swapped = _PADDED.format(body=_RS_PAD.format(cond="%m", a="%c", b="%l"), out="%s")
    other_pad = rs.replace("<f32: 0.000000e+00>", "<f32: 1.000000e+00>")
    reused = rs.replace("  return\n", "  %t3 = store_ptr_tko weak %q, %l : tile<4x8xptr<f16>>, tile<4x8xf16> -> token\n  return\n")
    reused_py = _PADDED.format(body=_PY_PAD, out="%l").replace(
        "  return\n", "  %t3 = store_ptr_tko weak %q, %l : tile<4x8xptr<f16>>, tile<4x8xf16> -> token\n  return\n")
    loaded_pad = rs.replace("  %c32 = constant <f32: 0.000000e+00> : tile<f32>",
                            "  %c32, %t9 = load_ptr_tko weak %arg0 : tile<ptr<f16>> -> tile<f32>, token")
    for mutant in (other_mask, swapped, other_pad, loaded_pad):
        assert norm(mutant, args) != py, mutant
    assert norm(reused, args) != norm(reused_py, args)


def test_N20_names_reused_in_sibling_regions():
    """tileirdisasm reuses a name in sibling regions (two loops, each with its gather): each load is folded
    with its own select, and a use of the other region's value does not count."""
    args = ["x.ptr", "n", "o.ptr"]
    loop = """  for %iv{k} in (%lo to %hi, step %st) : tile<i32> {{
{body}
    %t2 = store_ptr_tko weak %q, {out} : tile<4x8xptr<f16>>, tile<4x8xf16> -> token
    continue
  }}"""
    head, tail = _PADDED.split("{body}")
    tail = tail.split("  %t2 = store_ptr_tko")[0]
    consts = "  %lo = constant <i32: 0> : tile<i32>\n  %hi = constant <i32: 4> : tile<i32>\n  %st = constant <i32: 1> : tile<i32>\n"
    indent = lambda t: "\n".join("  " + ln for ln in t.splitlines())  # noqa: E731
    rs_body = indent(_RS_PAD.format(cond="%m", a="%l", b="%c"))
    py_body = indent(_PY_PAD)

    def prog(body, out):
        return (head.format() + tail.format() + consts + loop.format(k=0, body=body, out=out) + "\n"
                + loop.format(k=1, body=body, out=out) + "\n  return\n}\n")
    py, rs = prog(py_body, "%l"), prog(rs_body, "%s")
    assert norm(rs, args) == norm(py, args)
    assert norm(rs.replace("select %m,", "select %m2,", 1), args) != norm(py, args)


def test_N21_empty_loops():
    """A loop that carries nothing and whose body leaves no effect is no op (the empty second loop of a split);
    a loop with a store in it, or one that carries a value out, stays."""
    head = """entry @k(%arg0: tile<ptr<f32>>, %arg1: tile<i32>) {
  %lo = constant <i32: 0> : tile<i32>
  %hi = constant <i32: 4> : tile<i32>
  %st = constant <i32: 1> : tile<i32>
  %v = constant <f32: 1.000000e+00> : tile<f32>
"""
    loop = """  for %iv in (%arg1 to %hi, step %st) : tile<i32> {{
    %b = muli %iv, %iv : tile<i32>
{body}    continue
  }}
"""
    tail = "  return\n}\n"
    store = "    %t = store_ptr_tko weak %arg0, %v : tile<ptr<f32>>, tile<f32> -> token\n"
    empty = head + loop.format(body="") + tail
    none = head + tail
    assert norm(empty, ["x.ptr", "n"]) == norm(none, ["x.ptr", "n"])
    assert norm(head + loop.format(body=store) + tail, ["x.ptr", "n"]) != norm(none, ["x.ptr", "n"])
    carried = head + """  %r = for %iv in (%arg1 to %hi, step %st) : tile<i32> iter_values(%a = %lo) -> (tile<i32>) {
    %b = addi %a, %iv : tile<i32>
    continue %b : tile<i32>
  }
  print %r : tile<i32>
""" + tail
    printed_zero = head + "  print %lo : tile<i32>\n" + tail
    assert norm(carried, ["x.ptr", "n"]) != norm(printed_zero, ["x.ptr", "n"])


def test_N22_constant_comparisons():
    """`x % C` for a constant expression C: cuTile Python folds C's sign test, cuTile Rust keeps
    `cmpi less_than C, 0` and an `xori`; folded (then N13), both are one program. Signedness is honoured."""
    def prog(sign_test: str, div: str = "4") -> str:
        return f"""entry @k(%arg0: tile<i32>) {{
  %c = constant <i32: {div}> : tile<i32>
  %z = constant <i32: 0> : tile<i32>
  %r = remi %arg0, %c signed : tile<i32>
  %c1 = cmpi less_than %r, %z, signed : tile<i32> -> tile<i1>
{sign_test}  %c3 = cmpi not_equal %r, %z, signed : tile<i32> -> tile<i1>
  %m = andi %x1, %c3 : tile<i1>
  %s = addi %r, %c : tile<i32>
  %v = select %m, %s, %r : tile<i1>, tile<i32>
  print %v : tile<i32>
  return
}}
"""
    py = prog("  %f = constant <i1: 0> : tile<i1>\n  %x1 = xori %c1, %f : tile<i1>\n")
    rs = prog("  %neg = cmpi less_than %c, %z, signed : tile<i32> -> tile<i1>\n  %x1 = xori %c1, %neg : tile<i1>\n")
    assert norm(py, ["a"]) == norm(rs, ["a"])
    # mutants the folding must not hide: the sign test reversed (true: the xori stays), a negative divisor
    assert norm(rs.replace("%neg = cmpi less_than", "%neg = cmpi greater_than"), ["a"]) != norm(py, ["a"])
    rs_test = "  %neg = cmpi less_than %c, %z, signed : tile<i32> -> tile<i1>\n  %x1 = xori %c1, %neg : tile<i1>\n"
    false_test = "  %f = constant <i1: 0> : tile<i1>\n  %x1 = xori %c1, %f : tile<i1>\n"
    assert norm(prog(rs_test, div="-4"), ["a"]) != norm(prog(false_test, div="-4"), ["a"])  # -4 < 0: not false
    # signedness: -1 < 0 signed, not unsigned
    for sign, want in (("signed", "<i1: 1>"), ("unsigned", "<i1: 0>")):
        t = f"""entry @k(%arg0: tile<i32>) {{
  %a = constant <i32: -1> : tile<i32>
  %z = constant <i32: 0> : tile<i32>
  %c = cmpi less_than %a, %z, {sign} : tile<i32> -> tile<i1>
  print %c : tile<i1>
  return
}}
"""
        assert want in norm(t, ["a"]) and "cmpi" not in norm(t, ["a"])


def test_N24_constant_division():
    """`lo // TILE` where lo is the constant 0 of a constant arm: cuTile Python folds it, cuTile Rust divides
    two constants; folded with the signedness and rounding of the op, never by zero or in signed overflow."""
    def prog(div: str) -> str:
        return f"""entry @k(%arg0: tile<i32>) {{
{div}  print %q : tile<i32>
  return
}}
"""
    def divi(a: int, b: int, attrs: str) -> str:
        return (f"  %a = constant <i32: {a}> : tile<i32>\n  %b = constant <i32: {b}> : tile<i32>\n"
                f"  %q = divi %a, %b {attrs} : tile<i32>\n")
    const = lambda v: f"  %q = constant <i32: {v}> : tile<i32>\n"
    for a, b, attrs, want in ((0, 64, "signed rounding<negative_inf>", 0), (-7, 2, "signed rounding<negative_inf>", -4),
                              (-7, 2, "signed", -3), (7, 2, "signed rounding<positive_inf>", 4),
                              (-1, 2, "unsigned", 2**31 - 1)):
        assert norm(prog(divi(a, b, attrs)), ["n"]) == norm(prog(const(want)), ["n"]), (a, b, attrs)
        assert norm(prog(divi(a, b, attrs)), ["n"]) != norm(prog(const(want + 1)), ["n"]), (a, b, attrs)
    # operands swapped: another quotient
    assert norm(prog(divi(64, 8, "signed")), ["n"]) != norm(prog(divi(8, 64, "signed")), ["n"])
    # not folded: by zero, signed overflow, no signedness
    for a, b, attrs in ((1, 0, "signed"), (-2**31, -1, "signed"), (4, 2, "")):
        assert "divi" in norm(prog(divi(a, b, attrs)), ["n"])


def test_N23_if_passthrough():
    """cuTile Rust carries every variable an `if` may assign through both arms (`yield %a` in each arm
    for an `a` that neither changes); cuTile Python yields only what an arm changes. A result both arms
    yield as one value is that value, also through nested `if`s; a value changed in one arm stays a result."""
    py = """entry @k(%arg0: tile<i32>, %arg1: tile<i32>) {
  %c0 = constant <i32: 0> : tile<i32>
  %c1 = constant <i32: 1> : tile<i32>
  %b = cmpi equal %arg0, %c1, signed : tile<i32> -> tile<i1>
  %b2 = cmpi equal %arg1, %c1, signed : tile<i32> -> tile<i1>
  %r = if %b -> (tile<i32>) {
    %i = if %b2 -> (tile<i32>) {
      %n = addi %arg0, %c1 : tile<i32>
      yield %n : tile<i32>
    } else {
      yield %c0 : tile<i32>
    }
    yield %i : tile<i32>
  } else {
    yield %c1 : tile<i32>
  }
  %s = addi %r, %arg1 : tile<i32>
  print %s : tile<i32>
  return
}
"""
    rs = """entry @k(%arg0: tile<i32>, %arg1: tile<i32>) {
  %c0 = constant <i32: 0> : tile<i32>
  %c1 = constant <i32: 1> : tile<i32>
  %b = cmpi equal %arg0, %c1, signed : tile<i32> -> tile<i1>
  %b2 = cmpi equal %arg1, %c1, signed : tile<i32> -> tile<i1>
  %r:2 = if %b -> (tile<i32>, tile<i32>) {
    %i:2 = if %b2 -> (tile<i32>, tile<i32>) {
      %n = addi %arg0, %c1 : tile<i32>
      yield %arg1, %n : tile<i32>, tile<i32>
    } else {
      yield %arg1, %c0 : tile<i32>, tile<i32>
    }
    yield %i#0, %i#1 : tile<i32>, tile<i32>
  } else {
    yield %arg1, %c1 : tile<i32>, tile<i32>
  }
  %s = addi %r#1, %r#0 : tile<i32>
  print %s : tile<i32>
  return
}
"""
    args = ["m", "n"]
    assert norm(rs, args) == norm(py, args)
    # the carried value changed in one arm (inner or outer) is a real result: different
    assert norm(rs.replace("yield %arg1, %n", "yield %c1, %n"), args) != norm(py, args)
    assert norm(rs.replace("yield %arg1, %c1", "yield %c0, %c1"), args) != norm(py, args)
    # an `if` whose every result passes through is an `if` without results
    only = """entry @k(%arg0: tile<i32>) {
  %c1 = constant <i32: 1> : tile<i32>
  %b = cmpi equal %arg0, %c1, signed : tile<i32> -> tile<i1>
  %r = if %b -> (tile<i32>) {
    print %c1 : tile<i32>
    yield %arg0 : tile<i32>
  } else {
    yield %arg0 : tile<i32>
  }
  print %r : tile<i32>
  return
}
"""
    plain = """entry @k(%arg0: tile<i32>) {
  %c1 = constant <i32: 1> : tile<i32>
  %b = cmpi equal %arg0, %c1, signed : tile<i32> -> tile<i1>
  if %b {
    print %c1 : tile<i32>
  } else {
  }
  print %arg0 : tile<i32>
  return
}
"""
    assert norm(only, ["m"]) == norm(plain, ["m"])
    assert norm(only.replace("  } else {\n    yield %arg0", "  } else {\n    yield %c1"), ["m"]) != norm(plain, ["m"])


def test_N5_allowed_carried_div_by():
    """cuTile Python states `div_by<4>` on a counter a loop advances by whole tiles of 4 (init 0, `+ k*4`);
    cuTile Rust does not. The fact is dropped only where the init and the `continue` prove it."""
    def prog(fact: str, init: str = "0", step: str = "4", n: str = "4") -> str:
        return f"""entry @k(%arg0: tile<i32>) {{
  %c0 = constant <i32: 0> : tile<i32>
  %c1 = constant <i32: 1> : tile<i32>
  %ci = constant <i32: {init}> : tile<i32>
  %cs = constant <i32: {step}> : tile<i32>
  %r = for %i in (%c0 to %arg0, step %c1) : tile<i32> iter_values(%a = %ci) -> (tile<i32>) {{
{fact}    print %a : tile<i32>
    %k = muli %i, %cs : tile<i32>
    %n = addi %a, %k : tile<i32>
    continue %n : tile<i32>
  }}
  print %r : tile<i32>
  return
}}
""".replace("div_by<4>", f"div_by<{n}>")
    fact = "    %f = assume div_by<4>, %a : tile<i32>\n"
    assert norm(prog(fact), ["n"]) == norm(prog(""), ["n"])
    assert norm(prog(fact, step="8"), ["n"]) == norm(prog("", step="8"), ["n"])
    # not proved: an init or a step that is not a multiple, a divisor that is not a power of two
    assert norm(prog(fact, init="2"), ["n"]) != norm(prog("", init="2"), ["n"])
    assert norm(prog(fact, step="2"), ["n"]) != norm(prog("", step="2"), ["n"])
    assert norm(prog(fact, step="3", n="3"), ["n"]) != norm(prog("", step="3", n="3"), ["n"])
    # a value the loop passes on through something else (a load, an `if`) is not proved
    loaded = prog(fact).replace("%n = addi %a, %k", "%n = addi %arg0, %k")
    assert norm(loaded, ["n"]) != norm(loaded.replace(fact, ""), ["n"])


def test_N5_allowed_carried_div_by_on_tiles_sums_and_loop_results():
    """MoE alignment's running sum of padded counts (`last = last + cdiv(cnt, B) * B` in a loop, a (1,) tile):
    cuTile Python states `div_by<B>` on the iter value, on the sum the loop passes on, and on the loop's result
    after it; cuTile Rust states none. Dropped only where the induction proves them."""
    def prog(in_fact: str = "", out_fact: str = "", init: str = "0", step: str = "64", n: str = "64") -> str:
        return f"""entry @k(%arg0: tile<i32>, %arg1: tile<1xi32>) {{
  %c0 = constant <i32: 0> : tile<i32>
  %c1 = constant <i32: 1> : tile<i32>
  %ci = constant <i32: {init}> : tile<1xi32>
  %cs = constant <i32: {step}> : tile<1xi32>
  %r = for %i in (%c0 to %arg0, step %c1) : tile<i32> iter_values(%a = %ci) -> (tile<1xi32>) {{
    %q = divi %arg1, %cs signed rounding<negative_inf> : tile<1xi32>
    %k = muli %q, %cs : tile<1xi32>
    %s = addi %a, %k : tile<1xi32>
    print %s : tile<1xi32>
{in_fact}    continue %s : tile<1xi32>
  }}
{out_fact}  print %r : tile<1xi32>
  return
}}
""".replace("div_by<64>", f"div_by<{n}>")
    facts = "    %f = assume div_by<64>, %s : tile<1xi32>\n    %g = assume div_by<64>, %a : tile<1xi32>\n"
    after = "  %h = assume div_by<64>, %r : tile<1xi32>\n"
    assert norm(prog(facts, after), ["n", "c"]) == norm(prog(), ["n", "c"])
    # not proved: an init or a step that is not a multiple; a larger divisor than the step's
    for kw in ({"init": "32"}, {"step": "48"}, {"n": "128"}):
        assert norm(prog(facts, after, **kw), ["n", "c"]) != norm(prog(**kw), ["n", "c"]), kw
    # wrapping arithmetic keeps multiples of powers of two only: `div_by<3>` of a product by 3 stays
    times3 = prog("    %f = assume div_by<3>, %k : tile<1xi32>\n", step="3")
    assert norm(times3, ["n", "c"]) != norm(prog(step="3"), ["n", "c"])
    times64 = prog("    %f = assume div_by<64>, %k : tile<1xi32>\n")  # the same form of a power of two: dropped
    assert norm(times64, ["n", "c"]) == norm(prog(), ["n", "c"])
    # the loop's result is a multiple only where its iter value was proven one (the in-loop facts gone too)
    assert norm(prog("", after, init="32"), ["n", "c"]) != norm(prog(init="32"), ["n", "c"])


_GV = "gather_scatter_view<tile=(64), padding_value = zero, tensor_view<?xf32, strides=[1]>, sparse_dim=0>"
GATHER_LOOP = """entry @k(%arg0: tile<ptr<f32>>, %arg1: tile<i32>, %arg2: tile<i32>, %arg3: tile<ptr<f32>>, %arg4: tile<i32>, %arg5: tile<i32>) {
  %0 = make_token : token
  %tv = make_tensor_view %arg0, shape = [%arg1], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
  %tv2 = make_tensor_view %arg3, shape = [%arg4], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
  {OUT}%c0 = constant <i32: 0> : tile<i32>
  %c1 = constant <i32: 1> : tile<i32>
  for %i in (%c0 to %arg1, step %c1) : tile<i32> {
    {IN}%idx = iota : tile<64xi32>
    %t, %tt = load_view_tko weak %gv[%idx] token = %0 : GV, tile<64xi32> -> tile<64xf32>, token
    %pv2 = make_partition_view %tv2 : partition_view<tile=(64), tensor_view<?xf32, strides=[1]>>
    %s = store_view_tko weak %t, %pv2[%i] token = %0 : tile<64xf32>, partition_view<tile=(64), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
  }
  return
}
""".replace("GV", _GV)


def test_N7_gather_scatter_view_is_pure():
    # cuTile Python hoists a loop-invariant make_gather_scatter_view out of the loop (as it does a partition
    # view); cuTile Rust makes it where the load is: the same view, the same loads
    view = "%gv = make_gather_scatter_view %tv : " + _GV + "\n  "
    hoisted = GATHER_LOOP.replace("{OUT}", view).replace("{IN}", "")
    inside = GATHER_LOOP.replace("{OUT}", "").replace("{IN}", view + "  ")
    assert norm(hoisted) == norm(inside)
    # a view of the other array, or with another padding, is still a different program
    assert norm(hoisted) != norm(inside.replace("make_gather_scatter_view %tv ", "make_gather_scatter_view %tv2 "))
    assert norm(hoisted) != norm(inside.replace("padding_value = zero, tensor_view<?xf32, strides=[1]>, sparse_dim",
                                                "tensor_view<?xf32, strides=[1]>, sparse_dim", 1))
    # the load through it is still an effect: removed, the programs differ
    assert norm(hoisted) != norm(hoisted.replace("%t, %tt = load_view_tko", "%t2, %tt = load_view_tko"
                                                 ).replace("%s = store_view_tko weak %t,",
                                                           "%s = store_view_tko weak %idxf,").replace(
        "%idx = iota : tile<64xi32>", "%idx = iota : tile<64xi32>\n    %idxf = itof %idx signed : tile<64xi32> -> tile<64xf32>"))


def test_N8_ftoi_folds_an_integral_value_in_range_only():
    """An integer padding of an integer element type, written by cuTile Rust as an f32 constant converted with
    `ftoi` (dtypes/count_table.py), equals cuTile Python's integer constant; a value with a fraction, one out
    of the result's range, or another value stays apart."""
    def padded(const: str) -> str:
        return BASE.replace("%m = mulf %tile, %bc", f"{const}\n  %pr = reshape %p : tile<i32> -> tile<1xi32>\n"
                            "  %pb = broadcast %pr : tile<1xi32> -> tile<64xi32>\n"
                            "  %pf = itof %pb signed : tile<64xi32> -> tile<64xf32>\n  %m = mulf %tile, %pf")
    python_side = padded("%p = constant <i32: 3> : tile<i32>")
    def rust(value: str, sign: str = "signed") -> str:
        return padded(f"%p32 = constant <f32: {value}> : tile<f32>\n  %p = ftoi %p32 {sign} : tile<f32> -> tile<i32>")
    assert norm(rust("3.000000e+00")) == norm(python_side)
    assert norm(rust("3.000000e+00", "unsigned")) == norm(python_side)
    assert norm(rust("4.000000e+00")) != norm(python_side)
    assert norm(rust("3.500000e+00")) != norm(python_side)  # a fraction: rounding the normalizer does not mirror
    assert "ftoi" in norm(rust("3.500000e+00"))
    assert "ftoi" in norm(rust("-1.000000e+00", "unsigned"))  # out of the unsigned range
    assert "ftoi" in norm(rust("3.000000e+10"))  # out of i32's range


def _one_trip(body_use: str, ub: int = 1, fact: str = "", step: int = 1) -> str:
    return f"""entry @k(%arg0: tile<ptr<i32>>) {{
  %lb = constant <i32: 0> : tile<i32>
  %ub = constant <i32: {ub}> : tile<i32>
  %st = constant <i32: {step}> : tile<i32>
  %t = constant <i32: 512> : tile<i32>
  for %j in (%lb to %ub, step %st) : tile<i32> {{
{fact}{body_use}    print %o : tile<i32>
    continue
  }}
  return
}}
"""


def test_N25_single_trip_for_and_N26_constant_arithmetic():
    """TileGym's `_rms_norm_kernel_gather` at N <= TILE: `for j in 0..1` with `j * TILE` in the body. cuTile
    Rust states `bounded<0, 0>` on j and folds `j * TILE` to 0; cuTile Python keeps `muli %j, 512`."""
    py = _one_trip("    %o = muli %j, %t : tile<i32>\n")
    rs = _one_trip("    %o = constant <i32: 0> : tile<i32>\n", fact="    %a = assume bounded<0, 0>, %j : tile<i32>\n")
    assert norm(py, ["x"]) == norm(rs, ["x"])
    # two trips: j is not 0 in the second one (the Rust's folded 0 is wrong there)
    assert norm(_one_trip("    %o = muli %j, %t : tile<i32>\n", ub=2), ["x"]) != \
        norm(_one_trip("    %o = constant <i32: 0> : tile<i32>\n", ub=2), ["x"])
    # one trip by its step (0 to 2 step 4): still j == 0; a false fact on j (bounded<1, 1>) is compared
    assert norm(_one_trip("    %o = muli %j, %t : tile<i32>\n", ub=2, step=4), ["x"]) == \
        norm(_one_trip("    %o = constant <i32: 0> : tile<i32>\n", ub=2, step=4), ["x"])
    assert norm(py, ["x"]) != norm(_one_trip("    %o = constant <i32: 0> : tile<i32>\n",
                                             fact="    %a = assume bounded<1, 1>, %j : tile<i32>\n"), ["x"])
    assert norm(py, ["x"]) != norm(_one_trip("    %o = constant <i32: 512> : tile<i32>\n"), ["x"])


def test_N26_constant_arithmetic_wraps_and_keeps_attributes():
    def prog(op: str, a: int, b: int, attrs: str = "", ty: str = "i32") -> str:
        return f"""entry @k(%arg0: tile<i32>) {{
  %a = constant <{ty}: {a}> : tile<{ty}>
  %b = constant <{ty}: {b}> : tile<{ty}>
  %q = {op} %a, %b{attrs} : tile<{ty}>
  print %q : tile<{ty}>
  return
}}
"""
    const = lambda v, ty="i32": f"""entry @k(%arg0: tile<i32>) {{
  %q = constant <{ty}: {v}> : tile<{ty}>
  print %q : tile<{ty}>
  return
}}
"""
    for op, a, b, want, ty in (("addi", 3, 4, 7, "i32"), ("subi", 3, 4, -1, "i32"), ("muli", 6, 7, 42, "i32"),
                               ("addi", 2**31 - 1, 1, -2**31, "i32"), ("muli", 200, 2, -112, "i8"),
                               ("subi", 0, 1, -1, "i64")):
        assert norm(prog(op, a, b, ty=ty), ["n"]) == norm(const(want, ty), ["n"]), (op, a, b)
        assert norm(prog(op, a, b, ty=ty), ["n"]) != norm(const(want + 1, ty), ["n"]), (op, a, b)
    assert norm(prog("subi", 3, 4), ["n"]) != norm(prog("subi", 4, 3), ["n"])  # operand order
    assert "addi" in norm(prog("addi", 2**31 - 1, 1, " overflow<no_signed_wrap>"), ["n"])  # attributes: not folded


def test_N5_allowed_ptr_derived_div16_only_from_cutile_python():
    """TileGym's `_layer_norm_fwd_kernel_gather`: cuTile Python states `div_by<16>` on the one-element addresses of a
    scatter into its Mean/Rstd outputs (from the 16-byte base it checks at launch); the port cannot (the C ABI
    checks element alignment). Python-only: dropped; the same fact from Rust, or on a pointer that does not come
    from an argument, is compared."""
    from transpiler.verify.normalize import normalize
    ptr = ("%r = reshape %arg3 : tile<ptr<f32>> -> tile<1xptr<f32>>\n  "
           "%i = reshape %arg4 : tile<i32> -> tile<1xi32>\n  "
           "%o = offset %r, %i : tile<1xptr<f32>>, tile<1xi32> -> tile<1xptr<f32>>\n  ")
    fact = _fact(ptr + "%fo = assume div_by<16>, %o : tile<1xptr<f32>>")
    plain = _fact(ptr.strip())
    assert normalize(fact, ARGS, side="python")[0] == normalize(plain, ARGS, side="python")[0]
    assert normalize(fact, ARGS, side="rust")[0] != normalize(plain, ARGS, side="rust")[0]
    assert normalize(_fact(ptr + "%fo = assume div_by<32>, %o : tile<1xptr<f32>>"), ARGS, side="python")[0] != \
        normalize(plain, ARGS, side="python")[0]  # another divisor: compared
    loaded = ("%q = int_to_ptr %arg4 : tile<i32> -> tile<ptr<f32>>\n  ")
    assert normalize(_fact(loaded + "%fq = assume div_by<16>, %q : tile<ptr<f32>>"), ARGS, side="python")[0] != \
        normalize(_fact(loaded.strip()), ARGS, side="python")[0]  # not from an argument: compared


_SCAN = """entry @k(%arg0: tile<ptr<f32>>) {{
  %i = iota : tile<1x4x8xi32>
  %p0 = reshape %arg0 : tile<ptr<f32>> -> tile<1x1x1xptr<f32>>
  %pb = broadcast %p0 : tile<1x1x1xptr<f32>> -> tile<1x4x8xptr<f32>>
  %p = offset %pb, %i : tile<1x4x8xptr<f32>>, tile<1x4x8xi32> -> tile<1x4x8xptr<f32>>
  %x, %t = load_ptr_tko weak %p : tile<1x4x8xptr<f32>> -> tile<1x4x8xf32>, token
{body}
  %t2 = store_ptr_tko weak %p, {out} : tile<1x4x8xptr<f32>>, tile<1x4x8xf32> -> token
  return
}}
"""
_SCAN_REGION = """ : {ty} -> {ty} 
  (%a7: tile<f32>, %a8: tile<f32>) {{
    %s9 = addf %a7, %a8  : tile<f32>
    yield %s9 : tile<f32>
  }}"""


def _scan(src: str, dim: int, ty: str, res: str = "%s", rev: str = "false") -> str:
    return (f"  {res} = scan {src} dim={dim} reverse={rev} identities=[0.000000e+00 : f32]"
            + _SCAN_REGION.format(ty=ty))


def test_N27_permuted_scan():
    """cuTile Rust 0.5.0 scans along dim 0 whatever its `dim`: the port scans axis 1 as permute, scan dim 0,
    inverse permute; that is cuTile Python's scan along dim 1."""
    args = ["x.ptr"]
    py = norm(_SCAN.format(body=_scan("%x", 1, "tile<1x4x8xf32>"), out="%s"), args)

    def rust(p1="[1, 0, 2]", p2="[1, 0, 2]", dim=0, rev="false", extra=""):
        body = (f"  %a = permute %x {p1} : tile<1x4x8xf32> -> tile<4x1x8xf32>\n"
                + _scan("%a", dim, "tile<4x1x8xf32>", "%b", rev) + "\n"
                + f"  %s = permute %b {p2} : tile<4x1x8xf32> -> tile<1x4x8xf32>" + extra)
        return _SCAN.format(body=body, out="%s")
    assert norm(rust(), args) == py
    # mutants the rule must not hide: another first axis, a scan along another dim, a reversed scan, the
    # moved tile used elsewhere too (a store of it would see the permuted layout)
    other_axis = rust(p1="[2, 0, 1]", p2="[1, 2, 0]")
    for mutant in (other_axis, rust(dim=1), rust(rev="true")):
        assert norm(mutant, args) != py, mutant
    reused = rust(extra="\n  %t3 = store_ptr_tko weak %p, %a : tile<1x4x8xptr<f32>>, tile<4x1x8xf32> -> token")
    assert "permute" in norm(reused, args)


def test_N28_dead_weak_loads():
    """A weak load neither of whose results is read is dropped (cuTile Python removes a load whose value nothing
    reads; cuTile Rust keeps it where the reads fold away at a specialization): both sides then compare equal.
    A load whose tile or token is read, and a load that is not weak, stay and are compared."""
    args = ["x.ptr"]
    store = "  %t2 = store_ptr_tko weak %p, %c : tile<1x4x8xptr<f32>>, tile<1x4x8xf32> -> token\n"
    head = ("entry @k(%arg0: tile<ptr<f32>>) {\n  %i = iota : tile<1x4x8xi32>\n"
            "  %p0 = reshape %arg0 : tile<ptr<f32>> -> tile<1x1x1xptr<f32>>\n"
            "  %pb = broadcast %p0 : tile<1x1x1xptr<f32>> -> tile<1x4x8xptr<f32>>\n"
            "  %p = offset %pb, %i : tile<1x4x8xptr<f32>>, tile<1x4x8xi32> -> tile<1x4x8xptr<f32>>\n"
            "  %c = constant <f32: 1.000000e+00> : tile<1x4x8xf32>\n")
    py = norm(head + store + "  return\n}\n", args)

    def rust(load: str, after: str = "") -> str:
        return head + load + after + store + "  return\n}\n"
    dead = "  %x, %t = load_ptr_tko weak %p : tile<1x4x8xptr<f32>> -> tile<1x4x8xf32>, token\n"
    assert norm(rust(dead), args) == py
    # mutants the rule must not hide: the tile read (by a second store), the token read (orders the store),
    # a load that is not weak
    read = "  %t3 = store_ptr_tko weak %p, %x : tile<1x4x8xptr<f32>>, tile<1x4x8xf32> -> token\n"
    assert norm(rust(dead, read), args) != norm(head + read.replace("%x", "%c") + store + "  return\n}\n", args)
    assert "load_ptr_tko" in norm(rust(dead, read), args)
    ordered = rust(dead).replace("%t2 = store_ptr_tko weak %p, %c", "%t2 = store_ptr_tko weak %p, %c token = %t")
    assert "load_ptr_tko" in norm(ordered, args)
    acquire = rust(dead.replace("load_ptr_tko weak", "load_ptr_tko acquire device"))
    assert norm(acquire, args) != py
    # a load whose tile only an unused pure op reads (a reshape nothing uses): dead too, with that op
    reshaped = dead + "  %r = reshape %x : tile<1x4x8xf32> -> tile<4x8xf32>\n"
    assert norm(rust(reshaped), args) == py
    used = reshaped + "  %t4 = store_ptr_tko weak %p, %r2 : tile<1x4x8xptr<f32>>, tile<1x4x8xf32> -> token\n"
    assert "load_ptr_tko" in norm(rust(used.replace("%r2", "%x")), args)
    # a dead load that only orders another (dead) load: both go; that load waited on nothing else
    chained = dead + dead.replace("%x, %t =", "%y, %u =").replace("weak %p", "weak %p token = %t")
    assert norm(rust(chained), args) == py



def test_N5_facts_about_values_made_before_a_loop_are_the_loops_regions():
    """cuTile Rust states a view's facts where it makes the view (inside a loop), cuTile Python where it computes
    the extent (before the loop; TileGym's ragged block-scaled BMM): a fact made in a `for` / `loop` body about a
    value the loop does not make is printed where the loop is. Facts about the loop's own values stay in it."""
    args = ["x.ptr", "n"]

    def kernel(before: str, inside: str) -> str:
        return ("entry @k(%arg0: tile<ptr<f32>>, %arg1: tile<i32>) {\n  %c0 = constant <i32: 0> : tile<i32>\n"
                "  %c1 = constant <i32: 1> : tile<i32>\n  %e = subi %arg1, %c1 : tile<i32>\n" + before +
                "  %for = for %i in (%c0 to %arg1, step %c1) : tile<i32> iter_values(%a = %c0) -> (tile<i32>) {\n"
                "    %w = addi %a, %i : tile<i32>\n" + inside +
                "    %s = store_ptr_tko weak %arg0, %w : tile<ptr<f32>>, tile<i32> -> token\n    continue %w : tile<i32>\n"
                "  }\n  return\n}\n")
    fact = "{r} = assume bounded<0, ?>, {v} : tile<i32>\n"
    outside = norm(kernel("  " + fact.format(r="%f", v="%e"), ""), args)
    assert norm(kernel("", "    " + fact.format(r="%f", v="%e")), args) == outside
    # mutants the rule must not hide: a fact about a value the loop makes, another predicate, no fact at all
    own = norm(kernel("", "    " + fact.format(r="%f", v="%w")), args).splitlines()
    assert own.index("  }") > next(i for i, ln in enumerate(own) if ln.strip().startswith("assume")), own
    loaded = norm(kernel("", "    %x, %xt = load_ptr_tko weak %arg0 : tile<ptr<f32>> -> tile<f32>, token\n"
                         "    %xi = ftoi %x signed : tile<f32> -> tile<i32>\n    " + fact.format(r="%f", v="%xi")),
                  args).splitlines()
    assert loaded.index("  }") > next(i for i, ln in enumerate(loaded) if ln.strip().startswith("assume")), loaded
    assert norm(kernel("", "    " + fact.format(r="%f", v="%e").replace("<0, ?>", "<0, 7>")), args) != outside
    assert norm(kernel("", ""), args) != outside

def test_N30_invariant_loads():
    """cuTile Python hoists a weak load that reads nothing the loop makes out of a loop that writes nothing
    (TileGym's neighbourhood-attention dq kernel); the port keeps it in the loop: both compare equal."""
    args = ["x.ptr", "y.ptr", "n"]

    def kernel(before: str, inside: str, after: str = "%acc") -> str:
        return ("entry @k(%arg0: tile<ptr<f32>>, %arg1: tile<ptr<f32>>, %arg2: tile<i32>) {\n"
                "  %c0 = constant <i32: 0> : tile<i32>\n  %c1 = constant <i32: 1> : tile<i32>\n"
                "  %z = constant <f32: 0.000000e+00> : tile<f32>\n" + before +
                "  %for = for %i in (%c0 to %arg2, step %c1) : tile<i32> iter_values(%acc = %z) -> (tile<f32>) {\n"
                + inside + "    %n = addf %acc, %q : tile<f32>\n    continue %n : tile<f32>\n  }\n"
                "  %s = store_ptr_tko weak %arg1, %for : tile<ptr<f32>>, tile<f32> -> token\n  return\n}\n")
    load = "{ind}%q, %qt = load_ptr_tko weak {ptr} : tile<ptr<f32>> -> tile<f32>, token\n"
    hoisted = norm(kernel(load.format(ind="  ", ptr="%arg0"), ""), args)
    assert norm(kernel("", load.format(ind="    ", ptr="%arg0")), args) == hoisted
    # mutants the rule must not hide: a loop that also writes, a load of what the loop computes, another array
    store = "    %w = store_ptr_tko weak %arg1, %acc : tile<ptr<f32>>, tile<f32> -> token\n"
    assert norm(kernel("", load.format(ind="    ", ptr="%arg0") + store), args) != \
        norm(kernel(load.format(ind="  ", ptr="%arg0"), store), args)
    moving = ("    %o = offset %arg0, %i : tile<ptr<f32>>, tile<i32> -> tile<ptr<f32>>\n"
              + load.format(ind="    ", ptr="%o"))
    assert "for " in norm(kernel("", moving), args).split("load_ptr_tko")[0]
    assert norm(kernel("", load.format(ind="    ", ptr="%arg1")), args) != hoisted

def test_names_printed_again_after_a_region_are_other_values():
    """MLIR's printer numbers a region's values afresh after the region closes: `%t` is a store's token inside
    the loop and, after it, the sum of a dead load. N28 must not take the loop's `continue %t` for a read of the
    sum (cuTile Rust's IR of TileGym's GRPO backward kept a dead gather so, and compared `different`)."""
    args = ["x.ptr"]
    head = ("entry @k(%arg0: tile<ptr<f32>>) {\n  %c0 = constant <i32: 0> : tile<i32>\n"
            "  %c4 = constant <i32: 4> : tile<i32>\n  %c1 = constant <i32: 1> : tile<i32>\n"
            "  %z = constant <f32: 0.000000e+00> : tile<f32>\n  %tok = make_token : token\n"
            "  %for = for %i in (%c0 to %c4, step %c1) : tile<i32> iter_values(%a = %tok) -> (token) {\n"
            "    %t = store_ptr_tko weak %arg0, %z token=%a : tile<ptr<f32>>, tile<f32> -> token\n"
            "    continue %t : token\n  }\n")
    tail = "  %s = store_ptr_tko weak %arg0, {v} token=%for : tile<ptr<f32>>, tile<f32> -> token\n  return\n}}\n"
    load = ("  %x, %xt = load_ptr_tko weak %arg0 : tile<ptr<f32>> -> tile<f32>, token\n"
            "  %t = negf %x : tile<f32>\n")
    py = norm(head + tail.format(v="%z"), args)
    assert norm(head + load + tail.format(v="%z"), args) == py
    # the value named again is read after all: the load stays and the two differ
    assert norm(head + load + tail.format(v="%t"), args) != py
    assert "load_ptr_tko" in norm(head + load + tail.format(v="%t"), args)

_LOOP = """entry @k(%arg0: tile<ptr<f32>>) {{
  %c0 = constant <i32: 0> : tile<i32>
  %c8 = constant <i32: 8> : tile<i32>
  %c1 = constant <i32: 1> : tile<i32>
  %z = constant <f32: 0.000000e+00> : tile<f32>
  %one = constant <f32: 1.000000e+00> : tile<f32>
{loop}
  %t = store_ptr_tko weak %arg0, {out} : tile<ptr<f32>>, tile<f32> -> token
  return
}}
"""


def test_N29_passthrough_carries():
    """A carried value every `continue` passes back unchanged is its initial value (cuTile Python carries an
    accumulator whose updates a constant `if` folded away; cuTile Rust does not carry it)."""
    args = ["x.ptr"]
    rust = norm(_LOOP.format(loop="  %for = for %i in (%c0 to %c8, step %c1) : tile<i32> iter_values(%a = %z) -> "
                             "(tile<f32>) {\n    %n = addf %a, %one : tile<f32>\n    continue %n : tile<f32>\n  }",
                             out="%for"), args)
    py = _LOOP.format(loop="  %for:2 = for %i in (%c0 to %c8, step %c1) : tile<i32> iter_values(%a = %z, %b = %z) -> "
                      "(tile<f32>, tile<f32>) {\n    %n = addf %a, %one : tile<f32>\n    continue %n, %b : tile<f32>, "
                      "tile<f32>\n  }", out="%for#0")
    assert norm(py, args) == rust
    # the pass-through read in the body and after the loop is the initial value
    read = py.replace("%n = addf %a, %one", "%n = addf %a, %b")
    assert norm(read, args) == norm(_LOOP.format(loop="  %for = for %i in (%c0 to %c8, step %c1) : tile<i32> "
                                                 "iter_values(%a = %z) -> (tile<f32>) {\n    %n = addf %a, %z : "
                                                 "tile<f32>\n    continue %n : tile<f32>\n  }", out="%for"), args)
    # mutants the rule must not hide: the passed value updated, the other result stored, another initial value
    assert norm(py.replace("continue %n, %b", "continue %n, %n"), args) != rust
    assert norm(py.replace("out", "x").replace("%arg0, %for#0", "%arg0, %for#1"), args) != rust
    assert norm(py.replace("%a = %z, %b = %z", "%a = %one, %b = %z"), args) != rust
