"""Host-made tensor descriptors (`triton.tools.tensor_descriptor.TensorDescriptor` passed to a Triton kernel):
the parameter becomes its base pointer plus hidden extents, strides and block constants (Param.desc_of); a block
extent a `pre_hook` or the launch site ties to a kernel constexpr is that constexpr. The Python wrapper reads the
parts from the descriptor object, and refuses a launch whose block shape, rank, strides, padding or extent the
port was not made for (it never runs one wrong)."""
from __future__ import annotations

import re

import json
import textwrap
import types
from pathlib import Path

import pytest

from conftest import ROOT
from transpiler.frontend.source import parse_file
from transpiler.pipeline import run, write_outputs

FIXTURES = ROOT / "tests" / "fixtures" / "triton_unseen"
HEAD = "import triton\nimport triton.language as tl\n\n\n"


def _manifest_kernel(out: Path) -> dict:
    (k,) = json.loads((out / "manifest.json").read_text())["modules"][0]["kernels"]
    return k


def _params(k: dict) -> dict:
    return {p["name"]: p for p in k["params"]}


def test_pre_hook_block_shapes_are_the_kernels_constexprs(tmp_path):
    result, outputs = run([FIXTURES / "host_descriptor_matmul.py"], tmp_path / "out", use_cache=False)
    assert [k.status for k in result.kernels] == ["translated"], [k.diagnostics for k in result.kernels]
    write_outputs(outputs)
    k = _manifest_kernel(tmp_path / "out")
    p = _params(k)
    assert p["a_desc"]["descriptor"] == [["a_desc_extent0", "a_desc_extent1"], ["a_desc_pitch0"], ["BLOCK_M", "BLOCK_K"]]
    assert p["b_desc"]["descriptor"][2] == ["BLOCK_K", "BLOCK_N"]
    assert p["c_desc"]["descriptor"][2] == ["BLOCK_M", "BLOCK_N"]
    assert p["a_desc_extent1"]["kind"] == "scalar" and p["a_desc_extent1"]["desc_of"] == "a_desc"
    assert not any(q.get("desc_of") and q["kind"] == "const" for q in k["params"])  # every block extent linked
    assert sorted(s["BLOCK_M"] for s in k["specializations"]) == [64, 128]


def test_launch_site_block_shapes_link_or_give_values(tmp_path):
    """`TensorDescriptor.from_tensor(w, [block_n])` launched with `BLOCK_N=block_n`: the block is BLOCK_N; a block
    no constexpr is passed for is a hidden constant, the launch's literal its value."""
    src = tmp_path / "k.py"
    src.write_text(HEAD + textwrap.dedent("""
    from triton.tools.tensor_descriptor import TensorDescriptor


    @triton.jit
    def k(x_desc, out_ptr, BLOCK: tl.constexpr):
        x = x_desc.load([tl.program_id(0) * x_desc.block_shape[0], 0])
        offs = tl.arange(0, 16)
        tl.store(out_ptr + tl.program_id(0) * 16 + offs, tl.sum(x, axis=0))


    def launch(x, out):
        d = TensorDescriptor.from_tensor(x, [8, 16])
        k[(4,)](d, out, BLOCK=8)
    """))
    result, outputs = run([src], tmp_path / "out", use_cache=False)
    assert [k.status for k in result.kernels] == ["translated"], [k.diagnostics for k in result.kernels]
    write_outputs(outputs)
    k = _manifest_kernel(tmp_path / "out")
    p = _params(k)
    # 8 is a literal at the launch, not an expression passed for a constexpr: a hidden constant of value 8
    assert p["x_desc"]["descriptor"][2] == ["x_desc_block0", "x_desc_block1"]
    assert p["x_desc_block0"]["kind"] == "const" and p["x_desc_block0"]["desc_of"] == "x_desc"
    assert {(s["x_desc_block0"], s["x_desc_block1"]) for s in k["specializations"]} == {(8, 16)}


def test_descriptor_uses_that_are_refused(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(HEAD + textwrap.dedent("""
    @triton.jit
    def two_ranks(d, out_ptr, B: tl.constexpr):
        a = d.load([0])
        b = d.load([0, 0])
        tl.store(out_ptr + tl.arange(0, B), a)
    """))
    fr = parse_file(src, "k.py")
    assert not fr.kernels and fr.failures[0][2].code == "TTR-DESC"


# -------------------------------------------------------------------------------------- the wrapper

class _Tensor:
    """A device array as the wrapper reads one (CUDA array interface), at a fake address."""

    def __init__(self, shape, typestr="<f4", ptr=1 << 20):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (ptr, False),
                                         "strides": None, "version": 3}


def _descriptor(base, shape, strides, block, padding="zero"):
    # Triton 3.6's TensorDescriptor is a dataclass of these fields (triton/tools/tensor_descriptor.py)
    return types.SimpleNamespace(base=base, shape=list(shape), strides=list(strides), block_shape=list(block),
                                 padding=padding)


@pytest.fixture
def norm_package(tmp_path):
    from test_abi import load_package
    result, outputs = run([FIXTURES / "host_descriptor_norm.py"], tmp_path / "out", use_cache=False)
    assert [k.status for k in result.kernels] == ["translated"], [k.diagnostics for k in result.kernels]
    write_outputs(outputs)
    pkg = load_package(tmp_path / "out")
    return pkg, pkg._runtime


def test_wrapper_expands_a_descriptor_and_refuses_a_wrong_block_shape(norm_package):
    pkg, rt = norm_package
    (spec,) = [s for s in rt.REGISTRY.values() if s.name == "host_desc_row_norm_kernel"]
    assert spec.descriptors == {"w_desc": (("w_desc_extent0",), (), ("BLOCK_N",), (False,))}
    x, out, w = _Tensor((4, 100)), _Tensor((4, 100)), _Tensor((100,))
    named = {"x_ptr": x, "out_ptr": out, "w_desc": _descriptor(w, [100], [1], [128]), "stride_row": 100,
             "eps": 1e-6, "BLOCK_N": 128}
    values = rt._triton_values(spec, named)
    by_name = dict(zip((p.name for p in spec.params), values))
    assert by_name["w_desc"] is w and by_name["w_desc_extent0"] == 100 and by_name["BLOCK_N"] == 128
    # a block shape unlike BLOCK_N: no entry was made for it
    with pytest.raises(rt.ArgumentError, match="block shape"):
        rt._triton_values(spec, {**named, "w_desc": _descriptor(w, [100], [1], [64])})
    with pytest.raises(rt.ArgumentError, match="zeros only"):
        rt._triton_values(spec, {**named, "w_desc": _descriptor(w, [100], [1], [128], padding="nan")})
    with pytest.raises(rt.ArgumentError, match="rank"):
        rt._triton_values(spec, {**named, "w_desc": _descriptor(_Tensor((10, 10)), [10, 10], [10, 1], [128, 1])})
    with pytest.raises(rt.ArgumentError, match="last must be 1"):
        rt._triton_values(spec, {**named, "w_desc": _descriptor(w, [50], [2], [128])})
    with pytest.raises(rt.ArgumentError, match="addresses 200 elements"):  # past the end of its base tensor
        rt._triton_values(spec, {**named, "w_desc": _descriptor(w, [200], [1], [128])})
    with pytest.raises(rt.ArgumentTypeError, match="tensor descriptor"):
        rt._triton_values(spec, {**named, "w_desc": w})


def test_a_config_pre_hook_runs_before_the_block_shapes_are_read(norm_package, monkeypatch):
    """Triton runs a config's `pre_hook` before each launch of it (libraries set host descriptors' block shapes
    there); the router does too, after the config's constants are bound and before the descriptors are read."""
    pkg, rt = norm_package
    (spec,) = [s for s in rt.REGISTRY.values() if s.name == "host_desc_row_norm_kernel"]
    calls = []
    monkeypatch.setattr(rt, "call", lambda spec, values, grid, stream=None: calls.append(values))

    def fn(x_ptr, out_ptr, w_desc, stride_row, eps, BLOCK_N):
        pass

    def hook(nargs):
        nargs["w_desc"].block_shape = [nargs["BLOCK_N"]]
    w = _Tensor((100,))
    d = _descriptor(w, [100], [1], [1])
    rt._triton_call(spec, fn, {}, (4,), (_Tensor((4, 100)), _Tensor((4, 100)), d, 100, 1e-6), {}, {"BLOCK_N": 128},
                    hook)
    assert d.block_shape == [128] and calls and 128 in calls[0]
    d.block_shape = [1]
    with pytest.raises(rt.ArgumentError, match="block shape"):  # without the hook: the dummy block is refused
        rt._triton_call(spec, fn, {}, (4,), (_Tensor((4, 100)), _Tensor((4, 100)), d, 100, 1e-6), {},
                        {"BLOCK_N": 128})


# -------------------------------------------------------------------------------------- made in the kernel

def _rust(tmp_path: Path, body: str):
    from transpiler.emit.lower import lower_kernel
    from transpiler.pipeline import translate_kernel
    src = tmp_path / "k.py"
    src.write_text(HEAD + textwrap.dedent(body))
    fr = parse_file(src, "k.py")
    if fr.failures:
        return None, fr.failures[0][2]
    from transpiler.diagnostics import TranspileError
    try:
        return "\n".join(line for v in translate_kernel(fr.kernels[0]) for line in lower_kernel(v).body), None
    except TranspileError as e:
        return None, e.diagnostic


def test_a_computed_descriptor_shape_makes_its_view_at_the_access(tmp_path):
    rust, err = _rust(tmp_path, """
    @triton.jit
    def k(x_ptr, n_ptr, out_ptr, B: tl.constexpr):
        n = tl.load(n_ptr)
        d = tl.make_tensor_descriptor(x_ptr, shape=[n], strides=[1], block_shape=[B])
        tl.store(out_ptr + tl.arange(0, B), d.load([tl.program_id(0) * B]))
    """)
    assert err is None, err
    load = rust.index("load_view_tko")
    view = rust.index("make_tensor_view")
    assert rust.index("let n:") < view < load  # made after `n` is known, before the access
    # a shape that a loop computes: its value where the descriptor is made, kept in a local the view reads
    rust, err = _rust(tmp_path, """
    @triton.jit
    def k(x_ptr, n_ptr, out_ptr, B: tl.constexpr):
        n = 0
        for i in range(4):
            n = n + tl.load(n_ptr + i)
        d = tl.make_tensor_descriptor(x_ptr, shape=[n], strides=[1], block_shape=[B])
        n = n + 1
        tl.store(out_ptr + tl.arange(0, B), d.load([tl.program_id(0) * B]))
    """)
    assert err is None, err
    snap = re.search(r"let d_shape0: i\d+ = n;", rust)
    # (narrowed to the view's i32 extent by the named step `i32_from_i64`)
    assert snap and snap.start() < rust.index("i32_from_i64(d_shape0)") < rust.index("make_tensor_view"), rust
    # a descriptor made in a loop from what the loop computes: the view would see another value
    _, err = _rust(tmp_path, """
    @triton.jit
    def k(x_ptr, n_ptr, out_ptr, B: tl.constexpr):
        n = 0
        for i in range(4):
            n = n + tl.load(n_ptr + i)
            d = tl.make_tensor_descriptor(x_ptr, shape=[n], strides=[1], block_shape=[B])
            tl.store(out_ptr + i * B + tl.arange(0, B), d.load([tl.program_id(0) * B]))
    """)
    assert err is not None and err.code == "TTR-DESC" and "assigned once outside loops" in err.message


def test_a_descriptor_used_where_it_is_made(tmp_path):
    rust, err = _rust(tmp_path, """
    @triton.jit
    def k(x_ptr, out_ptr, N, B: tl.constexpr):
        v = tl.make_tensor_descriptor(x_ptr, shape=[N], strides=[1], block_shape=[B]).load([tl.program_id(0) * B])
        tl.store(out_ptr + tl.arange(0, B), v)
    """)
    assert err is None, err
    assert "load_view_tko" in rust


def test_a_descriptor_shape_reading_a_reassigned_parameter_takes_its_value_there(tmp_path):
    """`M = M - 1` before `shape=[M]`: a view made once from the argument would see the old M (it did, before
    this was refused, then snapshot): the shape is kept in a local where the descriptor is made, after the
    assignment, and the view is made at the access from it."""
    rust, err = _rust(tmp_path, """
    @triton.jit
    def k(x_ptr, out_ptr, M, B: tl.constexpr):
        M = M - 1
        d = tl.make_tensor_descriptor(x_ptr, shape=[M], strides=[1], block_shape=[B])
        tl.store(out_ptr + tl.arange(0, B), d.load([tl.program_id(0) * B]))
    """)
    assert err is None, err
    assert rust.index("let d_shape0: i32 = M") < rust.index("make_tensor_view"), rust


def test_a_stored_tile_of_literal_extents_unifies_with_the_hosts_block(tmp_path):
    """`d.store([...], t.reshape((1, BLOCK)).to(d.type.block_type.element_ty))` where the host's block extents are
    hidden constants: the literal 1 and BLOCK are equal to them only for some constants, so the entry takes
    them equal (a predicate; the launcher refuses other block shapes), as shapes equal by constants do."""
    src = tmp_path / "k.py"
    src.write_text(HEAD + textwrap.dedent("""
    @triton.jit
    def k(x_ptr, y_desc, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        x = tl.load(x_ptr + row * BLOCK + tl.arange(0, BLOCK)) * 2.0
        y_desc.store([row, 0], x.reshape((1, BLOCK)).to(y_desc.type.block_type.element_ty))
    """))
    result, outputs = run([src], tmp_path / "out", use_cache=False)
    assert [k.status for k in result.kernels] == ["translated"], [k.diagnostics for k in result.kernels]
    write_outputs(outputs)
    k = _manifest_kernel(tmp_path / "out")
    (entry,) = k["entries"]
    assert sorted(entry["predicates"]) == ["BLOCK == y_desc_block1", "y_desc_block0 == 1"], entry["predicates"]
