"""Triton outputs Rust can check (issue 37): a pointer every store of which is the tile at the program's own
index (passes/views.py own_tile_outputs) is a checked `&mut Tensor` partition of a view of its span, as a
cuTile Python output is (passes/ownership.py); every other output keeps its raw pointer. Each mutant breaks
one condition of the proof."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from transpiler.frontend.source import parse_file
from transpiler.model.ir import Op
from transpiler.model.walk import walk_exprs
from transpiler.pipeline import run, translate_kernel, write_outputs

from conftest import requires_toolchain

HEAD = "import triton\nimport triton.language as tl\n\n\n"

ELEMENTWISE = """
@triton.jit
def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x + 1, mask=offs < n)
"""

ROWWISE = """
@triton.jit
def row_kernel(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row * stride + cols, x - tl.max(x, axis=0), mask=cols < n_cols)
"""


def _kernel(tmp_path: Path, body: str):
    src = tmp_path / "k.py"
    src.write_text(HEAD + textwrap.dedent(body))
    fr = parse_file(src, "k.py")
    assert not fr.failures, [d.message for _, _, d in fr.failures]
    return translate_kernel(fr.kernels[0])[0]


def _outputs(k) -> dict:
    return {name: form for name, form, _ in k.outputs}


def test_an_elementwise_store_at_the_programs_own_block_is_a_checked_partition(tmp_path):
    k = _kernel(tmp_path, ELEMENTWISE)
    assert _outputs(k) == {"y_ptr": "checked"}
    y = k.param("y_ptr")
    assert not y.pointer and y.flat and y.view == (("n",), ("1",))
    assert k.param("x_ptr").pointer  # the input keeps its element loads
    (store,) = [e for e in walk_exprs(k.body) if isinstance(e, Op) and e.op == "store"]
    assert store.args[2].ty.shape == ("BLOCK",)
    assert not [e for e in walk_exprs(k.body) if isinstance(e, Op) and e.op == "scatter"]


def test_a_row_store_covering_the_row_is_a_checked_partition_of_rows(tmp_path):
    k = _kernel(tmp_path, ROWWISE)
    assert _outputs(k) == {"y_ptr": "checked"}
    # one row per program (the grid's rows), the columns cut to one tile: grid axis 1 must be 1
    assert k.param("y_ptr").view == (("(__grid0 * 1)", "(n_cols if n_cols < BLOCK else BLOCK)"), ("stride", "1"))
    (store,) = [e for e in walk_exprs(k.body) if isinstance(e, Op) and e.op == "store"]
    assert store.args[2].ty.shape == ("1", "BLOCK")


# each breaks one condition: the output stays a raw pointer (unchecked) with its element stores
MUTANTS = {
    "stored twice at different offsets": (
        ELEMENTWISE, "tl.store(y_ptr + offs, x + 1, mask=offs < n)",
        "tl.store(y_ptr + offs, x + 1, mask=offs < n)\n    tl.store(y_ptr + offs + n, x, mask=offs < n)"),
    "a store at the next program's block": (ELEMENTWISE, "tl.store(y_ptr + offs,", "tl.store(y_ptr + offs + BLOCK,"),
    "a store at pid + 1": (ELEMENTWISE, "offs = pid * BLOCK", "offs = (pid + 1) * BLOCK"),
    "the output also loaded at another program's tile": (
        ELEMENTWISE, "x = tl.load(x_ptr + offs, mask=offs < n)",
        "x = tl.load(x_ptr + offs, mask=offs < n) + tl.load(y_ptr + offs + BLOCK, mask=offs + BLOCK < n)"),
    "a wrapped index (`% n`)": (ELEMENTWISE, "offs = pid * BLOCK + tl.arange(0, BLOCK)",
                                "offs = (pid * BLOCK + tl.arange(0, BLOCK)) % n"),
    "another program id's axis": (ELEMENTWISE, "pid = tl.program_id(0)", "pid = tl.program_id(1)"),
    "a mask that is not the bound": (ELEMENTWISE, "x + 1, mask=offs < n)", "x + 1, mask=(offs < n) & (x > 0))"),
    "an atomic update": (ELEMENTWISE, "tl.store(y_ptr + offs, x + 1, mask=offs < n)",
                         "tl.store(y_ptr + offs, x + 1, mask=offs < n)\n    tl.atomic_add(y_ptr + offs, x, mask=offs < n)"),
    "a row stride the kernel does not know is 1": (ROWWISE, "row * stride + cols, x -", "row * stride + cols * stride, x -"),
    "a row at program id + 1": (ROWWISE, "y_ptr + row * stride", "y_ptr + (row + 1) * stride"),
}


REASONS = {
    'stored twice at different offsets': 'tile index on view axis 0',
    "a store at the next program's block": 'tile index on view axis 0',
    'a store at pid + 1': 'tile index on view axis 0',
    "the output also loaded at another program's tile": 'also read',
    'a wrapped index (`% n`)': 'not provably one tile',
    "another program id's axis": 'tile index on view axis 0',
    'a mask that is not the bound': 'not provably one tile',
    'an atomic update': 'atomics',
    'a row stride the kernel does not know is 1': 'innermost stride is the argument `stride`',
    'a row at program id + 1': 'tile index on view axis 0',
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_a_store_the_proof_does_not_cover_keeps_the_raw_pointer(tmp_path, name):
    body, old, new = MUTANTS[name]
    assert old in body
    k = _kernel(tmp_path, body.replace(old, new, 1))
    assert _outputs(k)["y_ptr"] == "unchecked", name
    (reason,) = [why for n, _, why in k.outputs if n == "y_ptr"]
    assert REASONS[name] in reason, reason  # the manifest says why
    assert k.param("y_ptr").pointer and not k.param("y_ptr").view
    assert not [e for e in walk_exprs(k.body) if isinstance(e, Op) and e.op == "store"]


def test_an_optional_output_keeps_its_raw_pointer(tmp_path):
    """A pointer Triton may take None for has no tensor to split in those launches."""
    k = _kernel(tmp_path, """
    @triton.jit
    def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        if y_ptr is not None:
            tl.store(y_ptr + offs, x, mask=offs < n)
    """)
    (reason,) = [why for n, form, why in k.outputs if n == "y_ptr" and form == "unchecked"]
    assert "optional" in reason


VECTOR_ADD = Path(__file__).resolve().parents[1] / "corpus" / "triton" / "workloads" / "vector_add.py"


def _numeric_verdicts(out: Path) -> set[str]:
    from transpiler.verify.interpret.driver import check_output
    return {c.verdict for c in check_output(out, ["add_kernel"])["add_kernel"]}


@requires_toolchain
def test_a_port_that_writes_outside_its_own_tile_is_rejected(tmp_path):
    """vector_add's output is a checked partition; its port mutated to store the tile of the next program
    (through the unchecked partition of the same tensor) fails: cuTile Rust refuses it, or the numbers differ
    from Triton's. The port as generated matches them."""
    out = tmp_path / "rust"
    _, outputs = run([VECTOR_ADD], out, compile_check=False)
    write_outputs(outputs)
    kernel_rs = next(out.rglob("vector_add/kernel.rs"))
    text = kernel_rs.read_text()
    assert "out_ptr: &mut Tensor<E2, { [BLOCK_SIZE] }>" in text and "make_partition_view_mut(out_ptr," in text
    # the own tile is stored as Triton stores, without TMA (Tensor::store would stage it through shared memory)
    assert re.search(r"store_view_tko_mut\(\s*&mut out_ptr_part,\s*out_ptr_b,.*?tma::Disabled", text, re.S)
    assert _numeric_verdicts(out) == {"numbers_match"}
    # the own-tile store made to write the next program's tile (its partition index one up)
    mutated = re.sub(r"(store_view_tko_mut\(\s*&mut out_ptr_part,\s*out_ptr_b,\s*\[)(\w+)\.0\]", r"\1\2.0 + 1i32]", text)
    assert mutated != text
    kernel_rs.write_text(mutated)
    verdicts = _numeric_verdicts(out)
    assert "numbers_match" not in verdicts, verdicts


@requires_toolchain
def test_the_c_symbol_makes_the_view_and_refuses_one_outside_the_span_or_overlapping(tmp_path):
    """In dry-run mode (no GPU): the symbol passes the row kernel's output as the partition of its view (rows
    of the grid, the columns cut to one tile) and refuses a view past the argument's span, rows that overlap
    and a grid that is not the view's tile grid."""
    import ctypes
    from test_abi import FakeCudaArray, built_library, load_package
    src = tmp_path / "rows.py"
    src.write_text(HEAD + textwrap.dedent(ROWWISE))
    out = tmp_path / "out"
    _, outputs = run([src], out, compile_check=False)
    write_outputs(outputs)
    pkg = load_package(out)
    rt = pkg._runtime
    lib = rt.load_library(built_library(out, tmp_path / "lib"))
    (spec,) = [s for s in rt.REGISTRY.values() if s.name == "row_kernel"]

    def launch(stride, n_cols, block, grid, rows=4):
        x = FakeCudaArray((rows, 100), "<f4", 0x7F0000000000)
        y = FakeCudaArray((rows, 100), "<f4", 0x7F0001000000)
        return rt.dry_run(rt.plan(spec, (x, y, stride, n_cols, block), grid), lib)

    def view(plan):  # (extents, strides, tile) the symbol passes for y_ptr
        (values,) = [v for name, v in plan["params"] if name == "y_ptr"]
        ints = [x for _, x in values[1:]]
        return ints[0:2], ints[2:4], ints[4:6]

    plan = launch(100, 100, 128, (4,))
    assert plan["partitions"] == {"y_ptr": [1, 128]}
    assert view(plan) == ([4, 100], [100, 1], [1, 128])  # 4 rows (the grid) of 100 columns, 100 apart
    # a block shorter than the row: its first 64 columns, one tile per row, as Triton writes them
    assert view(launch(100, 100, 64, (4,))) == ([4, 64], [100, 1], [1, 64])
    with pytest.raises(rt.ArgumentError, match="past the"):
        launch(100, 100, 128, (5,))  # a fifth row is not in the argument
    with pytest.raises(rt.ArgumentError, match="twice"):
        launch(50, 100, 128, (4,))  # rows 50 apart of 100 columns: elements written by two programs
    with pytest.raises(rt.ArgumentError, match="grid"):
        launch(100, 100, 128, (4, 2))  # two programs per row

    # a prepared launch (the compiled fast path's repeat) takes new pointers, but not new values of the scalars
    # the view is made from (92, 108: the divisibility hint of 100): the symbol makes and checks the view again
    lib.cutile_prepare_next.argtypes = [ctypes.c_int32]
    lib.cutile_take_prepared.restype = ctypes.c_void_p
    lib.cutile_release_prepared.argtypes = [ctypes.c_void_p]
    fire = lib.cutile_fire
    fire.restype, fire.argtypes = ctypes.c_int32, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.cutile_prepare_next(1)
    launch(100, 100, 128, (4,))
    record = lib.cutile_take_prepared()
    assert record
    x, y = 0x7F0000000000, 0x7F0001000000
    lib.cutile_dry_run(1)
    try:
        for (x_, y_, stride, n_cols), want in (((x, y, 100, 100), 0), ((x + (1 << 20), y + (1 << 20), 100, 100), 0),
                                               ((x, y, 100, 92), -1), ((x, y, 108, 100), -1)):
            w = (ctypes.c_uint64 * 4)(x_, y_, stride, n_cols)
            assert fire(record, ctypes.addressof(w), None) == want, (stride, n_cols)
    finally:
        lib.cutile_dry_run(0)
        lib.cutile_release_prepared(record)


def test_a_rows_statistic_stored_at_the_programs_own_element_is_a_checked_partition(tmp_path):
    body = ROWWISE.replace("def row_kernel(x_ptr, y_ptr,", "def row_kernel(x_ptr, y_ptr, mean_ptr,").replace(
        "    tl.store(y_ptr", "    tl.store(mean_ptr + row, tl.sum(x, axis=0) / n_cols)\n    tl.store(y_ptr")
    k = _kernel(tmp_path, body)
    assert _outputs(k) == {"y_ptr": "checked", "mean_ptr": "checked"}
    assert k.param("mean_ptr").view == (("(__grid0 * 1)",), ("1",))
    for old, new in (("mean_ptr + row,", "mean_ptr + row + 1,"), ("mean_ptr + row,", "mean_ptr + row * 2,"),
                     ("/ n_cols)", "/ n_cols, mask=row < n_cols)")):
        (tmp_path / new[-9:].strip(",)")).mkdir(exist_ok=True)
        k = _kernel(tmp_path / new[-9:].strip(",)"), body.replace(old, new))
        assert _outputs(k)["mean_ptr"] == "unchecked", new


# ---------------------------------------------------------------- inputs: `&Tensor` spans (safe entries)

def test_a_pointer_only_read_is_the_tensor_of_its_span_and_the_entry_is_safe(tmp_path):
    """A pointer the kernel only loads from is taken as a `&Tensor` of the argument's span, read through
    `*const` pointer tiles: with its output a checked partition the entry takes no raw pointer (`pub fn`);
    the only `unsafe` is the load, with a comment saying why."""
    k = _kernel(tmp_path, ROWWISE)
    assert k.span_inputs == ("x_ptr",)
    from transpiler.emit.lower import lower_kernel
    view = lower_kernel(k)
    assert not view.unsafe and view.span_inputs == ["x_ptr"] and view.pointer_arrays == []
    assert "x_ptr: &Tensor<E, { [-1] }>" in view.params
    body = "\n".join(view.body)
    assert "pointer_to_tile(x_ptr.as_ptr())" in body and "*mut" not in body
    loads = [i for i, line in enumerate(view.body) if "unsafe {" in line and "load_ptr_tko" in line]
    assert loads and all(view.body[i - 1].strip().startswith("// unsafe: ") for i in loads)


# each keeps the input a raw pointer: it is written, updated, optional, or read as another element type
SPAN_MUTANTS = {
    "also stored": "tl.store(x_ptr + row * stride + cols, x, mask=cols < n_cols)\n    ",
    "updated by atomics": "tl.atomic_add(x_ptr + row, 1.0)\n    ",
}
SPAN_MUTANTS["read as another element type"] = ("x - tl.max(x, axis=0)", "x - tl.max(x, axis=0) + "
                                                "tl.load(x_ptr.to(tl.pointer_type(tl.int32)) + row)")


@pytest.mark.parametrize("name", sorted(SPAN_MUTANTS))
def test_a_pointer_that_is_not_only_read_keeps_its_raw_pointer(tmp_path, name):
    mutant = SPAN_MUTANTS[name]
    body = ROWWISE.replace(*mutant, 1) if isinstance(mutant, tuple) else \
        ROWWISE.replace("    tl.store(y_ptr", "    " + mutant + "tl.store(y_ptr", 1)
    assert body != ROWWISE
    k = _kernel(tmp_path, body)
    assert "x_ptr" not in k.span_inputs


def test_an_optional_input_keeps_its_raw_pointer(tmp_path):
    k = _kernel(tmp_path, """
    @triton.jit
    def k(x_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        if b_ptr is not None:
            x += tl.load(b_ptr + offs, mask=offs < n)
        tl.store(y_ptr + offs, x, mask=offs < n)
    """)
    assert k.span_inputs == ("x_ptr",)  # None in some launches: a null address, no tensor


@requires_toolchain
def test_rustc_rejects_a_store_through_an_input(tmp_path):
    """The ported vector add builds; with a store through its input's pointer tile added (what a Triton kernel
    could write, `tl.store(x_ptr + offsets, ...)`, and its element port would take), rustc refuses it: the
    pointer made from the `&Tensor` input is `*const`, and a store needs a `*mut` (PointerMut)."""
    from transpiler.verify.compile_check import compile_errors
    out = tmp_path / "rust"
    _, outputs = run([VECTOR_ADD], out, compile_check=False)
    write_outputs(outputs)
    files = {str(p.relative_to(out)): p.read_text() for p in sorted(out.rglob("*"))
             if p.is_file() and (p.name == "Cargo.toml" or p.suffix == ".rs")}
    rel = next(f for f in files if f.endswith("vector_add/kernel.rs"))
    assert compile_errors(files, "span-input") == []
    text = files[rel]
    load = re.search(r"\n(\s*)let \(x_a, x_tok\).*?;\n", text, re.S)
    store = (f"{load.group(1)}let _: Token = unsafe {{ store_ptr_tko(x_ptrs3, x_a, ordering::Weak, "
             "None::<scope::TileBlock>, Some(mask), None, Latency::<0>) };\n")
    errors = compile_errors({**files, rel: text[:load.end()] + store + text[load.end():]}, "span-input")
    assert any(e.file.endswith("kernel.rs") and "PointerMut" in e.message for e in errors), errors


DESCRIPTOR_GEMM = """
@triton.jit
def k(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        acc = tl.dot(a_desc.load([pid_m * BLOCK_M, k]), b_desc.load([k, pid_n * BLOCK_N]), acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))
"""


def test_a_descriptor_store_of_the_programs_own_tile_is_a_checked_partition(tmp_path):
    """The descriptor's shape and strides are the view; each axis' offset `program_id(axis) * block` the tile
    index: the output is a checked partition, and the inputs read through descriptors `&Tensor` spans."""
    k = _kernel(tmp_path, DESCRIPTOR_GEMM)
    assert _outputs(k) == {"c_ptr": "checked"}
    assert k.param("c_ptr").view == (("M", "N"), ("N", "1"))
    assert k.span_inputs == ("a_ptr", "b_ptr")
    (store,) = [e for e in walk_exprs(k.body) if isinstance(e, Op) and e.op == "store"]
    assert store.args[2].ty.shape == ("BLOCK_M", "BLOCK_N")


def test_a_descriptors_own_tile_store_keeps_tma_and_a_pointers_does_not(tmp_path):
    """A descriptor's store is Triton's TMA store: as a checked partition it stays one (H100, the f32 4096^3
    host-descriptor GEMM: 1868 µs with TMA off, 728 with it; results/experiments/triton_own_tile_tma.md). A plain
    pointer store is a plain global store (TMA off)."""
    from transpiler.emit.lower import lower_kernel
    body = "\n".join(lower_kernel(_kernel(tmp_path, DESCRIPTOR_GEMM)).body)
    (store,) = re.findall(r"store_view_tko_mut\([^;]*\)", body)
    assert store.endswith("tma::Enabled)"), store
    body = "\n".join(lower_kernel(_kernel(tmp_path, ELEMENTWISE)).body)
    (store,) = re.findall(r"store_view_tko_mut\([^;]*\)", body)
    assert store.endswith("tma::Disabled)"), store


@pytest.mark.parametrize("old,new,why", [
    ("c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N]", "c_desc.store([pid_m * BLOCK_M, (pid_n + 1) * BLOCK_N]",
     "offset on axis 1"),
    ("c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N]", "c_desc.store([pid_n * BLOCK_M, pid_m * BLOCK_N]",
     "offset on axis 0"),
    ("    c_desc.store(", "    c_desc.store([0, 0], acc.to(c_desc.dtype))\n    c_desc.store(", "offset on axis 0"),
    # a shape argument the kernel assigns before making the descriptor: the C symbol sees the argument's value
    ("    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N]",
     "    N = N - 1\n    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N]", "computed in the kernel"),
])
def test_a_descriptor_store_elsewhere_stays_unchecked_and_is_listed(tmp_path, old, new, why):
    """Another program's tile, swapped axes, a second store at a fixed tile: the output is written through the
    in-kernel view of its raw pointer, listed as such with the reason (it was not listed at all before)."""
    assert old in DESCRIPTOR_GEMM
    k = _kernel(tmp_path, DESCRIPTOR_GEMM.replace(old, new, 1))
    (reason,) = [r for n, form, r in k.outputs if n == "c_ptr" and form == "unchecked"]
    assert why in reason and "through a view the kernel makes" in reason, reason


MOVED = """
@triton.jit
def k(x_ptr, y_ptr, s_ptr, stride, s_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x_ptr += row * stride
    y_ptr += row * stride
    x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0)
    tl.store(s_ptr + row * s_stride, tl.sum(x, axis=0))
    tl.store(y_ptr + cols, x, mask=cols < n_cols)
"""


def test_pointers_moved_to_the_row_and_a_strided_statistic_are_checked_partitions(tmp_path):
    """liger-kernel's way of writing a row kernel: `y_ptr += row * stride` first, then `y_ptr + cols`; the row's
    statistic at `s_ptr + row * s_stride`: the element (row, 0) of a view of one column, rows s_stride apart."""
    k = _kernel(tmp_path, MOVED)
    assert _outputs(k) == {"y_ptr": "checked", "s_ptr": "checked"}
    assert k.param("y_ptr").view == (("(__grid0 * 1)", "(n_cols if n_cols < BLOCK else BLOCK)"), ("stride", "1"))
    assert k.param("s_ptr").view == (("(__grid0 * 1)", "1"), ("s_stride", "1"))
    assert k.span_inputs == ("x_ptr",)


MOVED_MUTANTS = {
    # moved again after the store reads it: the store sees the first move only, but the second runs later
    "moved inside a loop": ("    y_ptr += row * stride\n",
                            "    for i in range(2):\n        y_ptr += row * stride\n"),
    "moved twice": ("    y_ptr += row * stride\n", "    y_ptr += row * stride\n    y_ptr += stride\n"),
    "moved under a condition": ("    y_ptr += row * stride\n", "    if n_cols > 4:\n        y_ptr += row * stride\n"),
    "a statistic one slot off": ("s_ptr + row * s_stride", "s_ptr + row * s_stride + 1"),
    "a statistic at row * row": ("s_ptr + row * s_stride", "s_ptr + row * row"),
}


@pytest.mark.parametrize("name", sorted(MOVED_MUTANTS))
def test_a_move_or_a_slot_the_proof_does_not_cover_keeps_the_raw_pointer(tmp_path, name):
    old, new = MOVED_MUTANTS[name]
    assert old in MOVED
    k = _kernel(tmp_path, MOVED.replace(old, new, 1))
    out = "s_ptr" if "statistic" in name else "y_ptr"
    assert _outputs(k)[out] == "unchecked", name


GRID_2D = """
@triton.jit
def k(LOSS, X, L):
    off_b = tl.program_id(0).cast(tl.int64)
    off_l = tl.program_id(1).cast(tl.int64)
    X += off_b * L + off_l
    LOSS += off_b * L + off_l
    tl.store(LOSS, tl.load(X) * 2.0)
"""

GROUPS = """
@triton.jit
def k(Mean_ptr, Mean_row_stride, Mean_col_stride, X_ptr):
    batch_idx = tl.program_id(0)
    group_idx = tl.program_id(1)
    m = tl.load(X_ptr + batch_idx)
    tl.store(Mean_ptr + batch_idx * Mean_row_stride + group_idx * Mean_col_stride, m)
"""


def test_a_scalar_store_at_a_2d_programs_own_slot_is_a_checked_partition(tmp_path):
    """`LOSS + b * L + l` (GRPO's per-token outputs) is the element (b, l) of a (grid0, grid1) view, rows L apart;
    `Mean + b * row_stride + g * col_stride` (group norm's statistics) the element (b, g, 0) of a view with a
    unit axis after the strided ones."""
    k = _kernel(tmp_path, GRID_2D)
    assert _outputs(k) == {"LOSS": "checked"}
    assert k.param("LOSS").view == (("(__grid0 * 1)", "(__grid1 * 1)"), ("L", "1"))
    k = _kernel(tmp_path, GROUPS)
    assert _outputs(k) == {"Mean_ptr": "checked"}
    assert k.param("Mean_ptr").view == (("(__grid0 * 1)", "(__grid1 * 1)", "1"),
                                        ("Mean_row_stride", "Mean_col_stride", "1"))


@pytest.mark.parametrize("body,old,new", [
    (GRID_2D, "LOSS += off_b * L + off_l", "LOSS += off_b * L + off_l + 1"),
    (GRID_2D, "LOSS += off_b * L + off_l", "LOSS += off_b * L + off_b"),
    (GRID_2D, "LOSS += off_b * L + off_l", "LOSS += off_b * off_l"),
    (GROUPS, "group_idx * Mean_col_stride", "group_idx * batch_idx"),
    (GROUPS, "batch_idx = tl.program_id(0)", "batch_idx = tl.program_id(2)"),
])
def test_a_scalar_store_elsewhere_keeps_the_raw_pointer(tmp_path, body, old, new):
    """One slot off, one axis twice, a product of program ids, a stride that is not an argument, axes 1 and 2
    without axis 0: another program's slot, or slots shared by programs."""
    assert old in body
    k = _kernel(tmp_path, body.replace(old, new, 1))
    assert set(_outputs(k).values()) == {"unchecked"}


EARLY_RETURN = """
@triton.jit
def k(LOSS, X, MASK, L):
    off_b = tl.program_id(0).cast(tl.int64)
    off_l = tl.program_id(1).cast(tl.int64)
    if MASK is not None:
        MASK += off_b * L + off_l
        if tl.load(MASK) == 0:
            return
    X += off_b * L + off_l
    LOSS += off_b * L + off_l
    tl.store(LOSS, tl.load(X) * 2.0)
"""


def test_a_pointer_moved_after_an_optional_early_return_is_a_checked_partition(tmp_path):
    """GRPO's `if COMPLETION_MASK is not None: ... return`: the rest of the body is in both arms, each moving
    LOSS once; the other arm's move never runs on the way to a store (one arm runs per pass, and no loop)."""
    k = _kernel(tmp_path, EARLY_RETURN)
    assert _outputs(k) == {"LOSS": "checked"}


def test_a_move_in_the_other_arm_inside_a_loop_keeps_the_raw_pointer(tmp_path):
    """Around a loop the other arm's move reaches the store on the next iteration."""
    k = _kernel(tmp_path, """
    @triton.jit
    def k(y_ptr, stride, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        for i in range(n):
            if i % 2 == 0:
                y_ptr += row * stride
            else:
                tl.store(y_ptr + cols, cols.to(tl.float32), mask=cols < n)
    """)
    assert _outputs(k) == {"y_ptr": "unchecked"}


def test_a_view_whose_axes_the_grid_orders_otherwise_keeps_its_raw_pointer(tmp_path):
    """Attention's log-sum-exp `lse + bh * seq_len + offs_m` with `start_m = program_id(0)`, `bh = program_id(1)`:
    a partition's grid is the launch grid axis by axis, so a checked partition would be the view (seq_len, BH),
    strides (1, seq_len), of (BM, 1) column tiles. That form was ported (03b79eb..c5dd2a7) and measured on an H100
    (results/experiments/triton_grid_order_lse.md): the causal attention forward took 2956 µs against 1352 µs
    with the raw store (TMA did not help: 2885 µs), so the output keeps its raw pointer, with the reason."""
    body = """
    @triton.jit
    def k(x_ptr, lse_ptr, seq_len, BM: tl.constexpr):
        start_m = tl.program_id(0)
        bh = tl.program_id(1)
        offs_m = start_m * BM + tl.arange(0, BM)
        x = tl.load(x_ptr + bh * seq_len + offs_m, mask=offs_m < seq_len, other=0.0)
        tl.store(lse_ptr + bh * seq_len + offs_m, x, mask=offs_m < seq_len)
    """
    k = _kernel(tmp_path, body)
    assert _outputs(k) == {"lse_ptr": "unchecked"}
    (why,) = [why for name, form, why in k.outputs if name == "lse_ptr"]
    assert "is not `tl.program_id(0)`" in why, why
    k = _kernel(tmp_path, """
    @triton.jit
    def k(y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
        rows = tl.program_id(1) * BM + tl.arange(0, BM)
        cols = tl.program_id(0) * BN + tl.arange(0, BN)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        tl.store(y_ptr + rows[:, None] * N + cols[None, :], rows[:, None] + cols[None, :], mask=mask)
    """)
    assert _outputs(k) == {"y_ptr": "unchecked"}


def test_an_entry_is_compiled_for_the_unit_stride_of_its_views_axis():
    """The verifier compiles a Triton output's view with its literal unit stride where it is (a view with it on
    axis 0), not on the last axis by default; other arrays keep the last axis."""
    from transpiler.verify.entries import rust_static_strides
    assert rust_static_strides({"rank": 1, "view": {"extents": ["seq_len", "(__grid1 * 1)"],
                                                     "strides": ["1", "seq_len"]}}) == [1, -1]
    assert rust_static_strides({"rank": 1, "view": {"extents": ["M", "N"], "strides": ["N", " 1"]}}) == [-1, 1]
    assert rust_static_strides({"rank": 3}) == [-1, -1, 1]


def test_an_output_updated_in_place_at_its_own_tile_is_a_checked_partition(tmp_path):
    """`y = load(y_ptr + offs); store(y_ptr + offs, f(y))` (swiglu's backward writes its gradients over its inputs):
    every load of the output is the program's own tile of the stores' view, read through `*const` pointers from the
    partition's tensor before the store (the store's view is made after the loads' token)."""
    k = _kernel(tmp_path, ELEMENTWISE.replace("x = tl.load(x_ptr + offs, mask=offs < n)",
                                              "x = tl.load(x_ptr + offs, mask=offs < n) + tl.load(y_ptr + offs, "
                                              "mask=offs < n)"))
    assert _outputs(k) == {"y_ptr": "checked"}
    from transpiler.emit.lower import lower_kernel
    view = lower_kernel(k)
    body = "\n".join(view.body)
    assert not view.unsafe and "pointer_to_tile(y_ptr.as_ptr())" in body and "PointerTile<*const" in body
    assert re.search(r"make_partition_view_mut\(y_ptr, [^;]*y_ptr_tok_access\)", body)
