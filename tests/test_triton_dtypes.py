"""Element types of Triton pointers: each pointer its own generic with a domain (passes/domains.py), passed
untyped to the device and cast there, so the C symbol has one launch for every combination; integer pointers
widened to i64 as loaded, with conversions that dispatch on the generic's kind."""

from __future__ import annotations

import json
import textwrap

import pytest

from test_abi import load_package
from transpiler.pipeline import run, write_outputs

HEAD = "import triton\nimport triton.language as tl\n\n\n"

# x: read and converted only; w: computed on in its own type; ids: used as offsets; counts: atomically counted;
# rstd: written only
KERNEL = """
@triton.jit
def norm_kernel(x_ptr, w_ptr, ids_ptr, counts_ptr, y_ptr, rstd_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    tok = tl.load(ids_ptr + row)
    x = tl.load(x_ptr + tok * n + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    w = w * 2 + 1
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n + 1e-6)
    tl.store(y_ptr + row * n + cols, x * rstd * w, mask=mask)
    tl.store(rstd_ptr + row, rstd)
    tl.atomic_add(counts_ptr + tok + tl.arange(0, 1), tl.full([1], 1, dtype=tl.int32))
"""


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    base = tmp_path_factory.mktemp("dtypes")
    src = base / "norm.py"
    src.write_text(HEAD + textwrap.dedent(KERNEL))
    out = base / "out"
    result, outputs = run([src], out)
    assert result.kernels[0].status == "translated", [d.message for d in result.kernels[0].diagnostics]
    write_outputs(outputs)
    manifest = json.loads((out / "manifest.json").read_text())
    return out, manifest["modules"][0]["kernels"][0]


FLOATS = ["f16", "bf16", "f32"]
ANY = ["f16", "bf16", "f32", "i32", "i64", "f8e4m3fn", "f8e5m2"]


def test_each_pointer_has_its_own_generic_and_domain(ported):
    _, k = ported
    arrays = {p["name"]: (p["dtype"], p.get("domain")) for p in k["params"] if p["kind"] == "array"}
    assert arrays == {
        "x_ptr": ("E", ANY),  # only converted: the same values for any dtype
        "w_ptr": ("E2", None),  # computed on in its own type: the kernel's float dtypes
        # offsets: an integer of either width, widened as loaded (or u8 / i16 / bool: `tok * n` is computed in n's
        # int32 by Triton too)
        "ids_ptr": ("E3", ["i32", "i64", "u8", "i16", "bool"]),
        "counts_ptr": ("E4", ["i32"]),  # an integer that atomics update: i32 (no i64 atomic add)
        "y_ptr": ("E5", ANY),  # written only: stores convert, in Triton as in the port
        "rstd_ptr": ("E6", ANY),
    }


def test_pointers_are_untyped_on_the_host_and_cast_on_the_device(ported):
    out, _ = ported
    rust = (out / "src" / "norm" / "kernel.rs").read_text()
    assert "counts_ptr: *mut u8," in rust  # updated by atomics: a raw pointer, cast on the device
    for name, generic in (("x_ptr", "E"), ("w_ptr", "E2"), ("ids_ptr", "E3")):  # only read: `&Tensor` spans
        assert f"{name}: &Tensor<{generic}, {{ [-1] }}>," in rust and f"pointer_to_tile({name}.as_ptr())" in rust
    # the row and its statistic are each program's own tile: checked outputs of their generic element types
    assert "y_ptr: &mut Tensor<E5, { [1, BLOCK] }>," in rust and "rstd_ptr: &mut Tensor<E6, { [1] }>," in rust
    assert rust.count("ptr_to_ptr(") == 1
    # the integer pointers' kinds pick their conversions (cuTile has no integer `convert`)
    # (every generic whose domain has integers; not w's)
    assert "const __E3_INT: i32" in rust and "const __E4_INT: i32" in rust and "__E2_INT" not in rust
    assert "if __E3_INT == 8i32" in rust
    ffi = (out / "src" / "norm" / "ffi.rs").read_text()
    # one launch function for every combination of the six generics (no monomorphization)
    assert "fn launch_norm_kernel(" in ffi and "match (__e" not in ffi
    assert ffi.count("launch_norm_kernel(") == 2  # its definition and its one call
    # the launch passes a raw pointer's address alone (the entry's `*mut u8`), whatever the dtype; a pointer only
    # read as the tensor of its span (address, extent, stride), the entry's `&Tensor` of that generic
    assert "abi::int_kind(__e3).to_string()" in ffi and 'abi::Param::Pointer("counts_ptr", counts_ptr)' in ffi
    assert 'abi::Param::Tensor("x_ptr", x_ptr)' in ffi and 'abi::Param::Extent("x_ptr_shape0"' not in ffi


def _arrays(rt, **dtypes):
    return {name: rt.DeviceArray(4096, (8,), (1,), dt, 0) for name, dt in dtypes.items()}


def test_the_wrapper_takes_each_pointer_in_its_domain(ported):
    out, _ = ported
    pkg = load_package(out)
    rt, spec = pkg._runtime, pkg.norm.SPEC_norm_kernel
    names = [p.name for p in spec.params]

    def check(**dtypes):
        arrays = _arrays(rt, **dtypes)
        args = tuple(arrays.get(n, 8 if n == "n" else 16) for n in names)
        return rt._check_layout(spec, args, arrays, (2,))
    good = dict(x_ptr="bf16", w_ptr="f32", ids_ptr="i64", counts_ptr="i32", y_ptr="f8e4m3fn", rstd_ptr="f32")
    assert check(**good)[2] == "bf16"  # E, the entry's element type, is x's
    assert check(**{**good, "ids_ptr": "i32", "x_ptr": "i32"})
    for name, dt in (("w_ptr", "i32"), ("ids_ptr", "f32"), ("counts_ptr", "i64"), ("w_ptr", "f8e4m3fn")):
        with pytest.raises(rt.ArgumentTypeError, match=f"`{name}` is {dt}; the port of norm_kernel takes"):
            check(**{**good, name: dt})
