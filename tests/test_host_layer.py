"""The host layer, verified on CPU: what each C symbol launches is what the IR diff verified.

`verify` proves entry X with generics G equals the Python kernel at specialization S; nothing there checks
that the C ABI layer (`ffi.rs`) maps a call's arguments to that X, G and grid. Here, for every corpus kernel,
every specialization in the manifest and every element type it was verified for:

(a) the symbol, called in dry-run mode (`cutile_dry_run`, `cutile_last_plan`) with descriptors built here
    (not by the wrapper), reports the entry, element type, generics, grid and output partitions it would
    launch; they must equal the reference computed from the manifest the way `verify_output` computes what
    it compiles (entry selected by the predicates, derived constants, `generic_params`, generic order);
(b) cuTile Python's view of the same `ct.launch` call: `cuda.tile.launch` is replaced by a recorder that
    binds the arguments with the kernel's own signature and `ct.Constant` annotations (cuTile Python's
    `_annotated_function`, `classify_constant`), as its launch specializes; the constants, dtypes and grid
    it sees must select the reference entry and match the symbol's plan;
(c) the Python wrapper: its `route` plan (entry, constants, element type, grid) and the symbol's dry run of
    that plan, and an actual routed `ct.launch` with the backend set to "cutile-rs", land on the same launch.

A mutant (an `ffi.rs` passing `TILE / 2` as the generic while the grid and output tile use `TILE`, the
survivor of the 2026-12-01 mutation campaign) proves the check reports it, naming the kernel and generic.
"""

from __future__ import annotations

import ctypes
import json
import shutil
import struct
import sys
import types
from pathlib import Path

import pytest

from conftest import CORPUS, requires_toolchain
from test_abi import built_library, find_kernel, import_source, load_package
from transpiler.verify.glue import (BASE_PTR, TORCH_NAMES, FakeTensor, array_dtype, c_call, dry_call, kernel_dtypes,
                                    _dry_plan, mismatches, python_call, reference, symbol_mismatches, unread_mismatches,
                                    wrapper_mismatches)
from transpiler.verify.specs import predicates_hold

try:
    import cuda.tile as ct
    from cuda.tile._cext import ConstantKind, classify_constant
except ImportError:  # requires_toolchain skips this module where the verify extra is missing (never in CI)
    ct = None

pytestmark = requires_toolchain



# ------------------------------------------------------------- (b) cuTile Python's view of the call

@pytest.fixture
def fake_torch(monkeypatch):
    fake = types.ModuleType("torch")
    fake.Tensor = FakeTensor
    monkeypatch.setitem(sys.modules, "torch", fake)


class Recorder:
    """Stands in for `cuda.tile.launch` (which needs a GPU): records what cuTile Python specializes a call
    on. The arguments are bound with the kernel's own signature; the parameters its annotations mark
    `ct.Constant` are the compile-time constants, classified by cuTile's `classify_constant` (a bool
    constant specializes as 0/1); arrays specialize on their dtype; the grid is padded to three axes."""

    _TORCH = {v: k for k, v in TORCH_NAMES.items()}

    def __init__(self):
        self.calls = []

    def __call__(self, stream, grid, kernel, kernel_args, **kwargs):
        fn = kernel._annotated_function
        bound = fn.pysig.bind(*kernel_args)
        consts, dtypes = {}, {}
        for (name, value), ann in zip(bound.arguments.items(), fn.parameter_annotations):
            if ann.constant:
                kind = classify_constant(value, True)
                assert kind in (ConstantKind.Int, ConstantKind.Bool, ConstantKind.Float), (name, value, kind)
                consts[name] = float(value) if kind == ConstantKind.Float else int(value)
            elif isinstance(value, FakeTensor):
                dtypes[name] = self._TORCH[value.dtype]
        self.calls.append({"kernel": kernel, "consts": consts, "dtypes": dtypes,
                           "grid": list(grid) + [1] * (3 - len(tuple(grid)))})


# ---------------------------------------------------------------------------------------- fixtures

def _loaded_host(out: Path, lib_dir: Path) -> types.SimpleNamespace:
    """A generated crate's library (built on CPU), its package routed to that build, the manifest and the
    kernels' Python modules."""
    pkg = load_package(out)
    lib = pkg._runtime.load_library(built_library(out, lib_dir))
    pkg._runtime._LIB = lib  # route/launch/dry_run of this package use this build
    manifest = json.loads((out / "manifest.json").read_text())
    sources = {m["op"]: import_source((out / m["source"]).resolve()) for m in manifest["modules"]}
    return types.SimpleNamespace(lib=lib, pkg=pkg, manifest=manifest, sources=sources, out=out)


@pytest.fixture(scope="module")
def host(corpus_out, tmp_path_factory):
    """The corpus crate's library (built on CPU), its generated package and the kernels' Python objects."""
    return _loaded_host(corpus_out, tmp_path_factory.mktemp("hostlib"))


@pytest.fixture(scope="module")
def compiled_fast_path(corpus_out, tmp_path_factory):
    """The package's compiled fast path (`_fastlaunch.c`), built as `cutile-transpile build` builds it."""
    from transpiler.verify.toolchain import build_fastlaunch
    dst = tmp_path_factory.mktemp("fastlaunch") / "_fastlaunch.abi3.so"
    why = build_fastlaunch(corpus_out / "python" / "cutile_ports" / "_fastlaunch.c", dst)
    assert why is None, why  # CI has a C compiler and Python's headers
    return dst


@pytest.fixture(params=["python", "compiled"])
def fast_path(request, host, monkeypatch):
    """Each fast-path test runs twice: with the steps in Python, and with the compiled fast path loaded the way
    the package loads it (`$CUTILE_RS_FASTLAUNCH`, digest checked)."""
    rt = host.pkg._runtime
    if request.param == "compiled":
        monkeypatch.setenv(rt.FASTLAUNCH_ENV, str(request.getfixturevalue("compiled_fast_path")))
    else:
        monkeypatch.setenv(rt.FASTLAUNCH_ENV, "off")
    for cache in (rt._ACCEL, rt._KEYERS):
        cache.clear()
    rt._FAST.__dict__.pop("calls", None)
    assert (rt.fastlaunch() is not None) == (request.param == "compiled")
    yield request.param
    for cache in (rt._ACCEL, rt._KEYERS):
        cache.clear()
    rt._FAST.__dict__.pop("calls", None)


def pytest_generate_tests(metafunc):
    if "kernel_case" in metafunc.fixturenames:
        from transpiler.frontend.source import parse_file
        names = sorted(k.name for f in sorted((CORPUS / "cutile").rglob("*.py")) for k in parse_file(f, f.name).kernels)
        metafunc.parametrize("kernel_case", names)


# ------------------------------------------------------------------------------------------- tests

def test_dry_run_launches_what_was_verified(host, kernel_case):
    """(a) The symbol's dry run equals what verify compiled, for every specialization and dtype."""
    op, kernel = find_kernel(host.manifest, kernel_case)
    assert kernel["specializations"], "every corpus kernel has specializations"
    problems = symbol_mismatches(host.lib, kernel, (host.out / "src" / op / "kernel.rs").read_text())
    assert not problems, "\n".join(problems)


def test_cutile_python_view_routing_and_dry_run_agree(host, kernel_case, fake_torch, fast_path):
    """(b) cuTile Python's specialization of the call selects the verified entry, with the same constants,
    dtypes and grid; (c) the wrapper's route plan and a routed `ct.launch` launch exactly that in Rust."""
    op, kernel = find_kernel(host.manifest, kernel_case)
    problems = routing_mismatches(host, op, kernel)
    assert not problems, "\n".join(problems)


def routing_mismatches(host, op: str, kernel: dict) -> list[str]:
    rt = host.pkg._runtime
    kobj = getattr(host.sources[op], kernel["name"])
    real_launch = ct.launch
    recorder = Recorder()
    problems = []
    try:
        for consts in kernel["specializations"]:
            for dtype in kernel_dtypes(kernel):
                args, grid = python_call(kernel, consts, dtype)
                ref = reference(kernel, consts, dtype, grid)
                label = f"{kernel['name']} {consts} {dtype}"
                # (b) what cuTile Python specializes this call on
                ct.launch = recorder
                rt.set_backend("python")
                ct.launch(None, grid, kobj, args)
                seen = recorder.calls.pop()
                assert seen["kernel"] is kobj
                if seen["consts"] != {k: v if isinstance(v, float) else int(v) for k, v in consts.items()}:
                    problems.append(f"{label}: cuTile Python binds the constants {seen['consts']}")
                selected = [e["name"] for e in kernel["entries"] if predicates_hold(e["predicates"], seen["consts"])]
                if selected[:1] != [ref["entry"]]:
                    problems.append(f"{label}: cuTile Python's constants select {selected}; verified {ref['entry']}")
                for p in kernel["params"]:
                    if p["kind"] == "array" and seen["dtypes"].get(p["name"]) != array_dtype(p, dtype, kernel):
                        problems.append(f"{label}: cuTile Python sees `{p['name']}` as {seen['dtypes'].get(p['name'])}")
                if seen["grid"] != ref["grid"]:
                    problems.append(f"{label}: cuTile Python launches grid {seen['grid']}; reference {ref['grid']}")
                # (c) the wrapper's route plan, and the symbol's dry run of it
                plan = rt.route(kobj, args, grid)
                if plan.spec.symbol != kernel["symbol"] or plan.spec.entries[plan.entry].name != ref["entry"]:
                    problems.append(f"{label}: route picks {plan.spec.symbol} entry "
                                    f"{plan.spec.entries[plan.entry].name}; verified {ref['entry']}")
                if plan.consts != seen["consts"]:
                    problems.append(f"{label}: route passes the constants {plan.consts}; cuTile Python {seen['consts']}")
                if plan.element_type != ref["element_type"] or list(plan.grid) != ref["grid"]:
                    problems.append(f"{label}: route plans {plan.element_type} on grid {plan.grid}")
                problems += mismatches(f"{label} (route + dry run)", rt.dry_run(plan, host.lib), ref, kernel["symbol"])
                # (c) the unchanged ct.launch call, routed to Rust by the backend switch, in dry-run mode
                rt.set_backend("cutile-rs", strict=True)
                assert ct.launch is rt.launch and rt._STATE["original"] is recorder
                previous = host.lib.cutile_dry_run(1)
                try:
                    rt._FAST.__dict__.pop("calls", None)  # the first launch of a layout: its full check
                    ct.launch(None, grid, kobj, args)
                    text = (host.lib.cutile_last_plan() or b"").decode()
                    ct.launch(None, grid, kobj, args)  # again: the fast path (a checked layout)
                    again = (host.lib.cutile_last_plan() or b"").decode()
                    fast = len(rt._FAST.calls)
                    prepared = [f.record is not None for f in rt._FAST.calls.values()]
                finally:
                    host.lib.cutile_dry_run(previous)
                assert not recorder.calls, f"{label}: the routed launch fell back to cuTile Python"
                problems += mismatches(f"{label} (routed ct.launch)", json.loads(text), ref, kernel["symbol"])
                problems += mismatches(f"{label} (routed ct.launch, fast path)", json.loads(again), ref,
                                       kernel["symbol"])
                if fast != 1:
                    problems.append(f"{label}: {fast} fast-path layouts after two launches of one layout")
                c_scalars = all(p.dtype in rt._SCALAR_KINDS for p in plan.spec.params if p.kind == "scalar")
                if rt.fastlaunch() is not None and c_scalars and not all(prepared):
                    problems.append(f"{label}: the compiled fast path kept no prepared launch (cutile_fire)")
                if rt.fastlaunch() is not None and c_scalars and not plan.spec.closure and id(kobj) not in rt._HOT:
                    problems.append(f"{label}: the compiled fast path does not route this kernel in C (_HOT)")
                rt.set_backend("python")
                rt.uninstall()
    finally:
        rt.set_backend("python")
        rt.uninstall()
        rt._STATE["original"] = None
        ct.launch = real_launch
    return problems


def test_the_fast_path_checks_what_changes_and_a_new_layout_fully(host, fake_torch, fast_path):
    """A repeated layout takes the fast path, which still refuses a null or misaligned pointer, a scalar out
    of range and a bad stream, as the full check does; another shape, dtype, constant or grid is a new
    layout, checked fully (a grid that is not `c`'s partition grid is refused)."""
    rt = host.pkg._runtime
    op, kernel = find_kernel(host.manifest, "vector_add")
    spec = next(s for s in rt.REGISTRY.values() if s.symbol == kernel["symbol"])
    consts = kernel["specializations"][0]
    args, grid = python_call(kernel, consts, "f32")
    rt._FAST.__dict__.pop("calls", None)
    host.lib.cutile_dry_run(1)
    try:
        rt.call(spec, args, grid)
        rt.call(spec, args, grid)
        assert len(rt._FAST.calls) == 1
        good = json.loads(host.lib.cutile_last_plan().decode())
        a = args[0]
        for ptr, why in ((0, "null data pointer"), (a._ptr + 2, "not aligned")):
            bad = FakeTensor(a.shape, "f32", ptr)
            with pytest.raises(rt.ArgumentError, match=why) as refused:
                rt.call(spec, (bad, *args[1:]), grid)
            assert refused.value.code is None  # refused in Python, before the library (which refuses it too)
        with pytest.raises(rt.ArgumentTypeError):
            rt.call(spec, args, grid, stream=object())
        moved = FakeTensor(a.shape, "f32", a._ptr + (1 << 20))  # another pointer, same layout: launched there
        rt.call(spec, (moved, *args[1:]), grid)
        assert len(rt._FAST.calls) == 1
        assert json.loads(host.lib.cutile_last_plan().decode())["params"][0] == ["a", [["ptr", moved._ptr],
                                                                                    *good["params"][0][1][1:]]]
        with pytest.raises(rt.ArgumentError, match="partition grid"):  # a new grid: the full check
            rt.call(spec, args, (grid[0] + 1, *grid[1:]))
        with pytest.raises(rt.ArgumentTypeError):  # a new dtype for `a` alone: the full check
            rt.call(spec, (FakeTensor(a.shape, "f16", a._ptr), *args[1:]), grid)
        assert len(rt._FAST.calls) == 1  # refused layouts are not kept
        rt.call(spec, args, grid)
        assert json.loads(host.lib.cutile_last_plan().decode()) == good
    finally:
        host.lib.cutile_dry_run(0)


def test_dry_run_runs_the_checks_and_stays_off_the_driver(host):
    """A dry run runs every check first (a failed one returns its code and records no plan), touches no
    driver (a valid call returns 0 where the real call fails at the device step), is per thread and off by
    default, and is switched back by the wrapper's helper."""
    import threading
    _, kernel = find_kernel(host.manifest, "vector_add")
    consts = kernel["specializations"][0]
    args, grid = c_call(kernel, consts, "f32", 0)
    rc, plan, _ = dry_call(host.lib, "cutile_vector_add", args)
    assert rc == 0 and plan["entry"] == "vector_add" and plan["generics"] == ["f32", str(consts["TILE"])]
    assert plan["kernel_fn"].endswith("::vector_add_kernels::vector_add")
    args[-5] = ctypes.c_int64(grid[0] + 1)  # not the partition grid of `c`
    rc, plan, err = dry_call(host.lib, "cutile_vector_add", args)
    assert rc == 9 and plan is None and "partition grid" in err
    args[-5] = ctypes.c_int64(grid[0])
    args[-2] = ctypes.c_int32(-1)  # a negative device ordinal is refused without the driver too
    rc, plan, err = dry_call(host.lib, "cutile_vector_add", args)
    assert rc == 12 and plan is None and "negative" in err
    args[-2] = ctypes.c_int32(0)
    assert host.lib.cutile_dry_run(0) == 0  # off by default
    fn = host.lib.cutile_vector_add
    fn.restype = ctypes.c_int32
    on_other_thread = []
    host.lib.cutile_dry_run(1)
    try:
        t = threading.Thread(target=lambda: on_other_thread.append(fn(*args)))
        t.start()
        t.join()
    finally:
        host.lib.cutile_dry_run(0)
    assert on_other_thread == [12]  # another thread is not in dry-run mode: it goes on to the device
    assert fn(*args) == 12 and host.lib.cutile_last_plan() in (None, b"")


def test_abi_fuzz_in_dry_run_mode(corpus_out, host):
    """The dry run skips no check: the seeded ABI fuzz (tools/fuzz_abi.py), in dry-run mode, gets every
    check's code for calls that break it (leaving no plan) and 0 with a plan of the symbol for valid calls."""
    import importlib.util
    from conftest import ROOT
    spec = importlib.util.spec_from_file_location("fuzz_abi_dry", ROOT / "tools" / "fuzz_abi.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    lib_path = Path(host.lib._name)
    r = tool.fuzz(corpus_out, lib_path, [3], 2150, timeout=300, dry_run=True)
    assert not r["crashes"], r["crashes"]
    assert not r["violations"], r["violations"][:5]
    codes = r["codes"]
    assert 14 not in codes and 13 not in codes and codes.get(0) == r["valid_calls"] >= r["symbols"], codes
    assert set(range(1, 12)) <= set(codes), f"every check's code is reached: {codes}"


def _ported_alone(tmp_path: Path, module: str) -> Path:
    """OUT of one corpus module ported by itself (a crate of its own, for a mutant)."""
    from transpiler.pipeline import run, write_outputs
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(CORPUS / "cutile" / f"{module}.py", src / f"{module}.py")
    out = tmp_path / f"{module}_out"
    write_outputs(run([src], out)[1])
    return out


def test_a_wrong_generic_in_ffi_is_reported(tmp_path):
    """Mutant (the mutation campaign's survivor): the generated ffi.rs launches vector_add with `TILE / 2`
    while the grid and output tile use `TILE`; it still builds and its IR entry is untouched, and `verify`
    (verify/glue.py after the Tile IR diff) reports the kernel `different`, naming the generic."""
    from transpiler.verify.run import verify_output
    out = _ported_alone(tmp_path, "vector_add")
    ffi = out / "src" / "vector_add" / "ffi.rs"
    text = ffi.read_text()
    assert text.count("TILE.to_string()") == 1
    ffi.write_text(text.replace("TILE.to_string()", "(TILE / 2).to_string()"))
    (v,) = verify_output(out)
    manifest = json.loads((out / "manifest.json").read_text())
    _, kernel = find_kernel(manifest, "vector_add")
    tile = kernel["specializations"][0]["TILE"]
    assert v.verdict == "different" and all(c.verdict == "equivalent" for c in v.checks), (v.verdict, v.reason)
    problems = [ln for ln in v.reason.splitlines()[1:] if not ln.startswith("...")]
    assert problems and all("vector_add" in p and "generic `TILE`" in p for p in problems), v.reason
    assert f"is {tile // 2} in the launch; verified with {tile}" in problems[0]


def test_a_wrapper_passing_scalars_swapped_is_reported(tmp_path):
    """Mutant (shared/repros/verifier-holes N19): the generated Python function `cutile_ports.scaled_add.
    scaled_add` passes its scalars `alpha` and `beta` to the symbol in swapped order; the Rust and ffi.rs are
    untouched. `verify` calls the package the two ways a user does (a routed `ct.launch`, the function) in
    dry-run mode (verify/glue.py) and reports the kernel `different`, naming the function and the values."""
    from transpiler.verify.run import verify_output
    out = _ported_alone(tmp_path, "scaled_add")
    wrapper = out / "python" / "cutile_ports" / "scaled_add.py"
    text = wrapper.read_text()
    call = "(SPEC_scaled_add, (x, y, out, alpha, beta, TILE), grid, stream)"
    assert text.count(call) == 1
    wrapper.write_text(text.replace(call, call.replace("alpha, beta", "beta, alpha")))
    (v,) = verify_output(out)
    assert v.verdict == "different" and all(c.verdict == "equivalent" for c in v.checks), (v.verdict, v.reason)
    problems = v.reason.splitlines()[1:]
    assert problems and all("(the Python wrapper's function): passes" in p for p in problems if "more" not in p), v.reason


def test_float_constants_through_the_host_layer(tmp_path, fake_torch):
    """ct.Constant[float] (tests/fixtures/features/float_consts, verified equivalent for f16/bf16/f32): the
    symbol takes the constant as a double and launches its f32 bits as the generic verify compiled, for every
    specialization and dtype; cuTile Python, the wrapper's route and a routed ct.launch agree; a non-finite or
    f32-overflowing value is refused by the symbol (11) and by the wrapper, a non-number by the wrapper."""
    from conftest import ROOT
    from transpiler.pipeline import run, write_outputs
    out = tmp_path / "fc"
    write_outputs(run([ROOT / "tests" / "fixtures" / "features" / "float_consts"], out)[1])
    host = _loaded_host(out, tmp_path / "lib")
    lib, pkg, manifest, sources = host.lib, host.pkg, host.manifest, host.sources
    problems = []
    names = ["scaled_rms_rows", "add_eps_f32"]
    for name in names:
        op, kernel = find_kernel(manifest, name)
        assert any(p.get("const_type") == "float" for p in kernel["params"])
        assert any(isinstance(v, float) for v in kernel["specializations"][0].values())
        problems += symbol_mismatches(lib, kernel) + routing_mismatches(host, op, kernel)
    assert not problems, "\n".join(problems)
    op, kernel = find_kernel(manifest, "add_eps_f32")
    consts = kernel["specializations"][0]
    i = [p["name"] for p in kernel["params"]].index("eps")
    for bad in (float("nan"), float("inf"), 1e39):
        args, _ = c_call(kernel, consts, "f32", 0)
        args[i] = ctypes.c_double(bad)
        rc, plan, err = dry_call(lib, kernel["symbol"], args)
        assert rc == 11 and plan is None and "eps" in err, (bad, rc, err)
    kobj = getattr(sources[op], "add_eps_f32")
    for bad, exc in ((float("nan"), pkg._runtime.ArgumentError), (1e39, pkg._runtime.ArgumentError),
                     (True, pkg._runtime.ArgumentTypeError), ("1e-5", pkg._runtime.ArgumentTypeError)):
        args, grid = python_call(kernel, consts, "f32")
        args = args[:i] + (bad,) + args[i + 1:]
        with pytest.raises(exc):
            pkg._runtime.route(kobj, args, grid)
    args, grid = python_call(kernel, consts, "f32")
    args = args[:i] + (2,) + args[i + 1:]  # a Python int is a float constant's value too (2.0)
    assert pkg._runtime.route(kobj, args, grid).consts["eps"] == 2.0


def test_the_layout_key_tells_every_argument_apart(host, fake_torch, fast_path):
    """The fast path's layout key (`_layout_keyer`, written out per kernel): arrays by shape, strides, dtype and
    device; an optional array given or None; constants by type and value; anything that is not a torch tensor
    where an array goes takes the full path (None)."""
    rt = host.pkg._runtime
    spec = rt.KernelSpec("k", "cutile_k", "k.py", "", (
        rt.Param("x", "array", rank=1, dtype="E"), rt.Param("b", "array", rank=1, dtype="E", given="B_GIVEN"),
        rt.Param("n", "scalar", dtype="i32"), rt.Param("BLOCK", "const", const_type="int")), ("f32",), ())
    key = rt._layout_keyer(spec, rt.fastlaunch())
    T = sys.modules["torch"].Tensor
    x, x2 = FakeTensor((8,), "f32", BASE_PTR), FakeTensor((8,), "f32", BASE_PTR + 64)
    base = key((x, None, 3, 16), (1,), T)
    assert base == key((x2, None, 5, 16), (1,), T)  # data pointers and scalar values are not the layout
    others = [key((FakeTensor((9,), "f32", BASE_PTR), None, 3, 16), (1,), T),
              key((FakeTensor((8,), "f16", BASE_PTR), None, 3, 16), (1,), T),
              key((x, x, 3, 16), (1,), T), key((x, None, 3, 32), (1,), T), key((x, None, 3, True), (1,), T),
              key((x, None, 3, 16), (2,), T)]
    assert base is not None and all(o is not None and o != base for o in others)
    assert len(set(others)) == len(others)
    assert key((object(), None, 3, 16), (1,), T) is None
    assert key((x, object(), 3, 16), (1,), T) is None
    assert key((x, None, 3), (1,), T) is None  # a wrong argument count: the full path reports it
    if fast_path == "compiled":  # the compiled key is the Python one
        python_key = rt._layout_keyer(spec)
        for args in [(x, None, 3, 16), (x, x2, 3, 16), (x, None, 3, True)]:
            assert key(args, (1,), T) == python_key(args, (1,), T)


def test_the_fast_path_patches_scalars_and_streams(host, fake_torch, fast_path):
    """A checked layout launched again with other scalar values and streams passes those values (f32 as their
    bits, i32, the stream handle), and refuses what the full check refuses (an i32 out of range, a string)."""
    rt = host.pkg._runtime
    op, kernel = find_kernel(host.manifest, "dropout_kernel")
    spec = next(s for s in rt.REGISTRY.values() if s.symbol == kernel["symbol"])
    args, grid = python_call(kernel, kernel["specializations"][0], "f32")
    names = [p.name for p in spec.params]
    ip, iseed = names.index("p"), names.index("seed")

    class Stream:
        def __init__(self, handle):
            self.cuda_stream = handle

    host.lib.cutile_dry_run(1)
    try:
        rt.call(spec, args, grid)
        for p, seed, stream in ((0.25, 7, None), (0.75, -5, Stream(0x1234)), (1, 2**31 - 1, Stream(0))):
            call = list(args)
            call[ip], call[iseed] = p, seed
            rt.call(spec, tuple(call), grid, stream=stream)
            launched = json.loads(host.lib.cutile_last_plan().decode())
            assert launched["stream"] == (stream.cuda_stream if stream else 0)
            plan = dict(launched["params"])
            assert plan["p"] == [["f32", struct.unpack("<I", struct.pack("<f", p))[0]]]
            assert plan["seed"] == [["i32", seed & 0xFFFFFFFF]]
        assert len(rt._FAST.calls) == 1
        for bad, error in ((2**31, rt.ArgumentError), ("x", rt.ArgumentTypeError)):
            call = list(args)
            call[iseed] = bad
            with pytest.raises(error):
                rt.call(spec, tuple(call), grid)
        call = list(args)
        call[ip] = "0.5"
        with pytest.raises(rt.ArgumentTypeError):
            rt.call(spec, tuple(call), grid)
        with pytest.raises(rt.ArgumentError):  # a stream handle out of range: the full stream check
            rt.call(spec, args, grid, stream=Stream(-1))
    finally:
        host.lib.cutile_dry_run(0)


def _hint(v: int) -> int:
    """cuTile Rust's divisibility hint of an integer or address (`DivHint`): its largest power-of-two
    divisor, at most 16 (0: 16)."""
    return 16 if v % 16 == 0 else v & -v


def test_a_prepared_launch_repeats_what_the_symbol_launches(host, fake_torch, fast_path):
    """The compiled fast path keeps the first launch of a layout (`cutile_prepare_next`) and repeats it with
    `cutile_fire`, passing only pointers and scalars: a repeat launches exactly what the symbol launches for
    the same call (its dry-run plan, compared whole), and a value that needs another specialization or the
    symbol's checks (a pointer or an i32 with another divisibility hint, a null or misaligned pointer), or a
    dry-run setting switched since, launches nothing and answers CUTILE_FIRE_MISS (-1)."""
    rt = host.pkg._runtime
    op, kernel = find_kernel(host.manifest, "dropout_kernel")  # arrays, an f32 and an i32 scalar
    spec = next(s for s in rt.REGISTRY.values() if s.symbol == kernel["symbol"])
    args, grid = python_call(kernel, kernel["specializations"][0], "f32")
    names = [p.name for p in spec.params]
    ip, iseed = names.index("p"), names.index("seed")
    fire = host.lib.cutile_fire
    fire.restype, fire.argtypes = ctypes.c_int32, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]

    def words(call):  # the value words in the kernel's order: data pointers, then scalars as the C code writes
        out = []
        for p, a in zip(spec.params, call):
            if p.kind == "array":
                out.append(a.data_ptr())
            elif p.kind == "scalar":
                out.append(struct.unpack("<I", struct.pack("<f", a))[0] if p.dtype == "f32" else a & 0xFFFFFFFF)
        return (ctypes.c_uint64 * len(out))(*out)

    def symbol_plan(call, stream=0):  # what the symbol itself launches for this call
        return rt.dry_run(rt.plan(spec, call, grid, None if not stream else types.SimpleNamespace(cuda_stream=stream)))

    host.lib.cutile_dry_run(1)
    try:
        rt.call(spec, args, grid)
        (fast,) = rt._FAST.calls.values()
        if fast_path == "python":
            assert fast.record is None  # only the compiled path fires
            return
        record = fast.record
        assert record
        seed = args[iseed]
        a = args[0]
        same = [("moved", 0, a._ptr + (1 << 20), 0.25, seed + 32 * _hint(seed), 0x5000),
                ("another p", 0, a._ptr, 0.75, seed, 0)]
        other = [("pointer aligned to 4 only", -1, a._ptr + 4, 0.5, seed, 0),
                 ("misaligned pointer", -1, a._ptr + 2, 0.5, seed, 0),
                 ("null pointer", -1, 0, 0.5, seed, 0),
                 ("seed with another hint", -1, a._ptr, 0.5, seed * 2 if _hint(seed) < 16 else seed + 1, 0)]
        for label, expected, ptr, p, s, stream in same + other:
            call = list(args)
            call[0], call[ip], call[iseed] = FakeTensor(a.shape, "f32", ptr), p, s
            host.lib.cutile_dry_run(1)
            w = words(call)  # (kept alive across the call)
            rc = fire(record, ctypes.addressof(w), stream)
            assert rc == expected, label
            if rc == 0:
                assert json.loads(host.lib.cutile_last_plan().decode()) == symbol_plan(call, stream), label
        good, bad = words(args), words(args)
        host.lib.cutile_dry_run(0)  # prepared in dry-run mode: a real launch is the symbol's
        assert fire(record, ctypes.addressof(good), 0) == -1
        host.lib.cutile_dry_run(1)
        bad[ip] ^= 1  # not the values the launch was prepared from
        assert host.lib.cutile_prepared_matches(record, ctypes.addressof(good), len(good)) == 1
        assert host.lib.cutile_prepared_matches(record, ctypes.addressof(bad), len(bad)) == 0
        assert host.lib.cutile_prepared_matches(record, ctypes.addressof(bad), len(bad) - 1) == 0
        # through the package: a repeat whose value misses takes the symbol's path (and its plan)
        call = list(args)
        call[0] = FakeTensor(a.shape, "f32", a._ptr + 4)
        rt.call(spec, tuple(call), grid)
        assert json.loads(host.lib.cutile_last_plan().decode()) == symbol_plan(tuple(call))
        assert rt._FAST.calls[next(iter(rt._FAST.calls))] is fast  # the layout keeps its prepared launch
    finally:
        host.lib.cutile_dry_run(0)


def test_a_routed_launch_of_a_prepared_layout_is_routed_in_c(host, fake_torch, fast_path):
    """`ct.launch` of a kernel and layout launched before goes through `route` of the compiled fast path (no
    Python step but `launch`), launching what the symbol launches; what it does not judge (a misaligned
    pointer, a string for a scalar, a new layout) takes the Python path, which raises the symbol's errors."""
    if ct is None:
        pytest.skip("needs cuda.tile (ct.launch)")
    rt = host.pkg._runtime
    op, kernel = find_kernel(host.manifest, "dropout_kernel")
    kobj = getattr(host.sources[op], kernel["name"])
    spec = next(s for s in rt.REGISTRY.values() if s.symbol == kernel["symbol"])
    args, grid = python_call(kernel, kernel["specializations"][0], "f32")
    ip = [p.name for p in spec.params].index("p")
    real_launch = ct.launch
    routed = []
    try:
        rt.set_backend("cutile-rs", strict=True)
        host.lib.cutile_dry_run(1)
        ct.launch(None, grid, kobj, args)
        if fast_path == "python":
            assert rt._STATE["route"] is None and not rt._HOT
            return
        route = rt._STATE["route"]
        rt._STATE["route"] = lambda *a: routed.append(route(*a)) or routed[-1]
        a = args[0]
        for ptr, p in ((a._ptr + (1 << 20), 0.25), (a._ptr, 0.75)):
            call = list(args)
            call[0], call[ip] = FakeTensor(a.shape, "f32", ptr), p
            ct.launch(None, grid, kobj, tuple(call))
            assert routed[-1] == 0  # launched in C
            assert json.loads(host.lib.cutile_last_plan().decode()) == rt.dry_run(rt.plan(spec, tuple(call), grid))
        call = list(args)
        call[0] = FakeTensor(a.shape, "f32", a._ptr + 2)
        with pytest.raises(rt.ArgumentError, match="not aligned"):
            ct.launch(None, grid, kobj, tuple(call))
        assert routed[-1] is None
        call[0], call[ip] = a, "0.5"
        with pytest.raises(rt.ArgumentTypeError):
            ct.launch(None, grid, kobj, tuple(call))
        assert routed[-1] is None
        with pytest.raises(rt.ArgumentError, match="partition grid|grid"):  # a new layout: the full check
            ct.launch(None, (grid[0] + 1, *grid[1:]), kobj, args)
        assert routed[-1] is None
    finally:
        host.lib.cutile_dry_run(0)
        rt.set_backend("python")
        rt.uninstall()
        rt._STATE["original"] = None
        ct.launch = real_launch


def test_threads_routing_one_prepared_layout_keep_their_own_values(host, fake_torch, fast_path):
    """Threads share the prepared layouts that `route` fires (`_HOT`), and a tensor's `data_ptr` may run
    Python code that lets another thread run (here it sleeps) between two of its reads: every thread must
    still launch its own pointers, never a mix (each launch's plan, in dry-run mode, names exactly its arrays)."""
    import threading
    import time
    if ct is None:
        pytest.skip("needs cuda.tile (ct.launch)")
    rt = host.pkg._runtime
    op, kernel = find_kernel(host.manifest, "dropout_kernel")
    kobj = getattr(host.sources[op], kernel["name"])
    args, grid = python_call(kernel, kernel["specializations"][0], "f32")
    arrays = [i for i, p in enumerate(kernel["params"]) if p["kind"] == "array"]
    assert len(arrays) >= 2
    real_launch, interval = ct.launch, sys.getswitchinterval()
    wrong, done = [], []

    class YieldingTensor(FakeTensor):  # a subclass whose data_ptr lets other threads run (as Python code may)
        def data_ptr(self):
            time.sleep(0)
            return self._ptr

    def worker(k):
        host.lib.cutile_dry_run(1)
        try:
            for j in range(150):
                call = list(args)
                for n, i in enumerate(arrays):  # pointers no other launch uses, all 16-byte aligned
                    call[i] = YieldingTensor(args[i].shape, "f32", args[i]._ptr + ((k * 4096 + j * 4 + n + 1) << 12))
                ct.launch(None, grid, kobj, tuple(call))
                plan = json.loads(host.lib.cutile_last_plan().decode())
                got = [v[1][0][1] for v in plan["params"] if v[1][0][0] == "ptr"]
                if got != [call[i]._ptr for i in arrays]:
                    wrong.append((k, j, got))
            done.append(k)
        finally:
            host.lib.cutile_dry_run(0)

    try:
        rt.set_backend("cutile-rs", strict=True)
        host.lib.cutile_dry_run(1)
        ct.launch(None, grid, kobj, args)  # the layout's first launch: prepared (in dry-run mode)
        host.lib.cutile_dry_run(0)
        assert (id(kobj) in rt._HOT) == (fast_path == "compiled")
        route, hits = rt._STATE["route"], []
        if route is not None:
            rt._STATE["route"] = lambda *a: hits.append(route(*a)) or hits[-1]
        sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
        rt.set_backend("python")
        rt.uninstall()
        rt._STATE["original"] = None
        ct.launch = real_launch
    assert sorted(done) == [0, 1, 2, 3]
    if fast_path == "compiled":  # every launch of the threads was routed and fired in C
        assert hits == [0] * 600
    assert not wrong, wrong[:3]


# ------------------------------------------- an integer array next to float arrays; launch-time hints

@pytest.fixture(scope="module")
def small_host(tmp_path_factory):
    """A crate of feature fixtures (built on CPU): dtypes/index_array.py (an int32 array next to float
    arrays of two dtypes), dtypes/count_table.py (an integer array in integer arithmetic), dtypes/unused_array.py (arrays never
    read), dtypes/flag_read_array.py (an array read only under a flag), dtypes/narrow_arrays.py (bool, uint8 and
    int16 arrays), dtypes/mixed_precision.py (three element classes and more) and kernel_hints.py
    (decorator hints, plain and per target)."""
    from conftest import ROOT
    from transpiler.pipeline import run, write_outputs
    base = tmp_path_factory.mktemp("small_host")
    src = base / "small_ports"  # (the crate's name: a crate of its own in the shared target directory)
    src.mkdir()
    features = ROOT / "tests" / "fixtures" / "features"
    for f in (features / "dtypes" / "index_array.py", features / "dtypes" / "pyproject.toml",
              features / "dtypes" / "count_table.py", features / "dtypes" / "unused_array.py",
              features / "dtypes" / "flag_read_array.py", features / "dtypes" / "narrow_arrays.py",
              features / "dtypes" / "mixed_precision.py", features / "kernel_hints.py"):
        shutil.copy(f, src / f.name)
    out = base / "out"
    write_outputs(run([src], out)[1])
    return _loaded_host(out, base / "lib")


def test_an_integer_array_next_to_float_arrays_keeps_its_integer_dtype(small_host, fake_torch):
    """attention_sink's pattern (issue 33): `Starts` is only read as int32 (`astype(ct.int32)`), next to float
    arrays of two dtypes (activations, a gain). It does not share the gain's element type generic (the wrapper
    refused every real call before: int32 against the float dtype); it is int32. Every specialization and dtype
    verified launches what was verified (symbol, cuTile Python's view, route, routed launch); a call with the
    real dtypes (bf16 activations, an f32 gain, int32 starts) is accepted by the wrapper and the symbol, and a
    wrong dtype for the starts is refused by both."""
    host = small_host
    rt = host.pkg._runtime
    op, kernel = find_kernel(host.manifest, "offset_scale_rows")
    dtypes = {p["name"]: p["dtype"] for p in kernel["params"] if p["kind"] == "array"}
    # (X and Out never meet without an astype: each its own generic since MAX_ELEMENT_GENERICS is 4)
    assert dtypes == {"X": "E", "Gain": "E2", "Out": "E3", "Starts": "i32"}, dtypes
    problems = symbol_mismatches(host.lib, kernel) + routing_mismatches(host, op, kernel)
    assert not problems, "\n".join(problems)
    kobj = getattr(host.sources[op], "offset_scale_rows")
    consts = kernel["specializations"][0]

    def args_with(**dts):
        args, grid = python_call(kernel, consts, "bf16")
        names = [p["name"] for p in kernel["params"]]
        args = list(args)
        for name, dt in dts.items():
            i = names.index(name)
            args[i] = FakeTensor(args[i].shape, dt, args[i].data_ptr())
        return tuple(args), grid

    args, grid = args_with(X="bf16", Out="bf16", Gain="f32", Starts="i32")
    plan = rt.route(kobj, args, grid)
    got = rt.dry_run(plan, host.lib)
    assert got["generics"][:2] == ["bf16", "f32"] and got["element_type"] == "bf16", got
    for bad in ("i64", "f32", "f16"):
        args, grid = args_with(X="bf16", Out="bf16", Gain="f32", Starts=bad)
        with pytest.raises(rt.ArgumentTypeError, match="Starts"):
            rt.route(kobj, args, grid)
    # the symbol itself (descriptors built here, not by the wrapper) refuses an int64 `Starts`
    c_args, _ = c_call(kernel, consts, "bf16+f32+bf16", 0)
    i = [p["name"] for p in kernel["params"]].index("Starts")
    assert dry_call(host.lib, kernel["symbol"], c_args)[0] == 0
    c_args[i].contents.dtype = 4  # i64
    rc, plan, err = dry_call(host.lib, kernel["symbol"], c_args)
    assert rc == 3 and plan is None and "Starts" in err, (rc, err)


def test_an_integer_count_table_is_accepted_at_its_integer_dtypes(small_host, fake_torch):
    """moe_align_block's stage 2 pattern: `Counts` is read, summed and written in integer arithmetic only; its
    generic takes i32 and i64 besides the float dtypes (it took f16, bf16, f32: TileGym's int32 call was
    refused). Every dtype verify checked (i32 and i64 included) launches what was verified; an int32 call is
    accepted by the wrapper and the symbol (generic i32), an fp8 one is refused by both."""
    host = small_host
    rt = host.pkg._runtime
    op, kernel = find_kernel(host.manifest, "prefix_counts")
    assert {"i32", "i64"} <= set(kernel_dtypes(kernel)), kernel_dtypes(kernel)
    problems = symbol_mismatches(host.lib, kernel) + routing_mismatches(host, op, kernel)
    assert not problems, "\n".join(problems)
    kobj = getattr(host.sources[op], "prefix_counts")
    consts = kernel["specializations"][0]
    args, grid = _with_dtypes(kernel, consts, Counts="i32")
    got = rt.dry_run(rt.route(kobj, args, grid), host.lib)
    assert got["generics"][0] == "i32" and got["element_type"] == "i32", got
    args, grid = _with_dtypes(kernel, consts, Counts="f8e4m3fn")
    with pytest.raises(rt.ArgumentTypeError, match="Counts"):
        rt.route(kobj, args, grid)
    c_args, _ = c_call(kernel, consts, "i32", 0)
    rc, plan, err = dry_call(host.lib, kernel["symbol"], c_args)
    assert rc == 0 and plan["generics"][0] == "i32", (rc, err)
    c_args[0].contents.dtype = 6  # f8e4m3fn
    rc, plan, err = dry_call(host.lib, kernel["symbol"], c_args)
    assert rc == 3 and plan is None and "Counts" in err, (rc, err)


def test_an_unused_array_accepts_any_argument(small_host, fake_torch):
    """The fused MoE pattern: `A_scale` and `B_scale` are never read; TileGym passes empty placeholders of the
    activations' dtype (or int8). The wrapper accepts any array (any dtype, any rank, a null pointer), None or
    a scalar for them, and the symbol any descriptor or null; both launch the verified entry with an empty f32
    vector at the argument's pointer. A wrong dtype for a read array (`X`) is still refused by both."""
    host = small_host
    rt = host.pkg._runtime
    op, kernel = find_kernel(host.manifest, "scaled_rows_unquantized")
    problems = symbol_mismatches(host.lib, kernel) + routing_mismatches(host, op, kernel)
    assert not problems, "\n".join(problems)
    kobj = getattr(host.sources[op], "scaled_rows_unquantized")
    consts = kernel["specializations"][0]
    names = [p["name"] for p in kernel["params"]]
    base, grid = _with_dtypes(kernel, consts, X="bf16", Out="bf16")
    placeholders = (FakeTensor((0,), "bf16", 0), FakeTensor((3, 5, 7), "i8", 0x7000_0001), None, 1.5)
    for a_scale in placeholders:
        args = list(base)
        args[names.index("A_scale")], args[names.index("B_scale")] = a_scale, FakeTensor((0,), "i8", 0)
        got = rt.dry_run(rt.route(kobj, tuple(args), grid), host.lib)
        params = dict((name, slots) for name, slots in got["params"])
        assert got["element_type"] == "bf16" and params["A_scale"][1:] == [["i32", 0], ["i32", 1]], got
        assert params["A_scale"][0][1] == (a_scale.data_ptr() if isinstance(a_scale, FakeTensor) else 0), got
    args = list(base)
    args[names.index("X")] = FakeTensor(base[names.index("X")].shape, "i32", base[names.index("X")].data_ptr())
    with pytest.raises(rt.ArgumentTypeError, match="`X`"):
        rt.route(kobj, tuple(args), grid)
    # the routed launch twice (the second through the fast path of a checked layout, as TileGym's MoE calls it
    # on every layer): a null placeholder passes both, the C symbol dry-runs the same plan
    rt.set_backend("cutile-rs", strict=True)
    previous = host.lib.cutile_dry_run(1)
    try:
        rt._FAST.__dict__.pop("calls", None)
        args = list(base)
        args[names.index("A_scale")], args[names.index("B_scale")] = FakeTensor((0,), "bf16", 0), FakeTensor((0,), "i8", 0)
        plans = []
        for _ in range(2):
            rt.launch(None, grid, kobj, tuple(args))
            plans.append(json.loads((host.lib.cutile_last_plan() or b"").decode()))
        assert plans[0] == plans[1] and len(rt._FAST.calls) == 1, plans
    finally:
        host.lib.cutile_dry_run(previous)
        rt.set_backend("python")
        rt.uninstall()
    c_args, _ = c_call(kernel, consts, "bf16", 0)
    i = names.index("A_scale")
    c_args[i].contents.dtype, c_args[i].contents.ndim = 7, 3  # an int8 placeholder of rank 3
    assert dry_call(host.lib, kernel["symbol"], c_args)[0] == 0
    c_args[i] = None  # null
    assert dry_call(host.lib, kernel["symbol"], c_args)[0] == 0
    c_args[names.index("X")].contents.dtype = 3  # i32
    rc, plan, err = dry_call(host.lib, kernel["symbol"], c_args)
    assert rc == 3 and plan is None and "X" in err, (rc, err)


def test_an_array_read_only_under_a_flag_accepts_any_argument_where_the_flag_is_off(small_host, fake_torch):
    """TileGym's attention variant: `Random_mask` is read only `if USE_RANDOM_MASK`, and passed as
    `torch.empty(0, dtype=torch.int8)` without a mask. dtypes/flag_read_array.py's `Mask` (rank 2, sharing E with
    `X` and `Out`): with USE_MASK off, the wrapper (routed and direct) and the C symbol take an empty int8 vector
    (or None, a null descriptor) and launch the verified entry with a null rank-2 placeholder of E's dtype; with
    USE_MASK on, the same placeholder is refused by both (rank, then dtype), and a real mask launches as before.
    Mutants: the condition inverted (in the runtime or in ffi.rs) makes the off call refused or the on call taken."""
    host = small_host
    rt = host.pkg._runtime
    op, kernel = find_kernel(host.manifest, "masked_scale_rows")
    assert next(p for p in kernel["params"] if p["name"] == "Mask")["read_when"] == "USE_MASK"
    problems = symbol_mismatches(host.lib, kernel) + routing_mismatches(host, op, kernel) \
        + unread_mismatches(host.lib, kernel, rt, getattr(host.sources[op], "masked_scale_rows"))
    assert not problems, "\n".join(problems)
    kobj = getattr(host.sources[op], "masked_scale_rows")
    fn = getattr(getattr(host.pkg, op), "masked_scale_rows")
    names = [p["name"] for p in kernel["params"]]
    off = next(c for c in kernel["specializations"] if not c["USE_MASK"])
    on = {**off, "USE_MASK": 1}
    i = names.index("Mask")

    def with_mask(consts, mask):
        args, grid = _with_dtypes(kernel, consts, X="bf16", Out="bf16")
        args = list(args)
        args[i] = mask
        return tuple(args), grid

    placeholder = FakeTensor((0,), "i8", 0x7000_0000)
    for mask in (placeholder, None):
        args, grid = with_mask(off, mask)
        for got in (rt.dry_run(rt.route(kobj, args, grid), host.lib),
                    _dry_plan(host.lib, lambda: fn(*args, grid=grid))):
            params = dict((name, slots) for name, slots in got["params"])
            assert got["element_type"] == "bf16" and params["Mask"] == [["ptr", 0]] + [["i32", 0]] * 4, got
    for mask in (placeholder, FakeTensor((4, 4), "i8", 0x7000_0000)):  # rank, then dtype
        args, grid = with_mask(on, mask)
        with pytest.raises((rt.ArgumentError, rt.ArgumentTypeError), match="Mask"):
            rt.route(kobj, args, grid)
        with pytest.raises((rt.ArgumentError, rt.ArgumentTypeError), match="Mask"):
            fn(*args, grid=grid)
    args, grid = with_mask(on, FakeTensor((48, 48), "bf16", 0x7000_0000))
    params = dict((name, slots) for name, slots in rt.dry_run(rt.route(kobj, args, grid), host.lib)["params"])
    assert params["Mask"][0] == ["ptr", 0x7000_0000], params
    # the routed launch twice (the second through the fast path of the checked layout, as TileGym calls it):
    # the int8 placeholder passes both, and both launch the plan of the symbol
    rt.set_backend("cutile-rs", strict=True)
    previous = host.lib.cutile_dry_run(1)
    try:
        rt._FAST.__dict__.pop("calls", None)
        args, grid = with_mask(off, placeholder)
        plans = []
        for _ in range(2):
            rt.launch(None, grid, kobj, args)
            plans.append(json.loads((host.lib.cutile_last_plan() or b"").decode()))
        assert plans[0] == plans[1] and len(rt._FAST.calls) == 1, plans
        assert dict((n, s) for n, s in plans[0]["params"])["Mask"][0] == ["ptr", 0], plans[0]
    finally:
        host.lib.cutile_dry_run(previous)
        rt.set_backend("python")
        rt.uninstall()
    # the symbol itself (descriptors built here): an empty int8 vector, then null, with the flag off and on
    for consts, accepted in ((off, True), (on, False)):
        c_args, _ = c_call(kernel, consts, "bf16", 0)
        c_args[i].contents.ndim, c_args[i].contents.dtype, c_args[i].contents.shape[0] = 1, 7, 0  # 7: int8
        rc, plan, err = dry_call(host.lib, kernel["symbol"], c_args)
        assert (rc == 0) == accepted and (accepted or "Mask" in err), (consts, rc, err)
        if accepted:
            assert dict((n, s) for n, s in plan["params"])["Mask"] == [["ptr", 0]] + [["i32", 0]] * 4, plan
        c_args[i] = None
        rc, plan, err = dry_call(host.lib, kernel["symbol"], c_args)
        assert (rc == 0) == accepted and (accepted or "Mask" in err), (consts, rc, err)
    # a mask loaded above the flag keeps its checks
    _, always = find_kernel(host.manifest, "mask_loaded_before_the_flag")
    assert not any(p.get("read_when") for p in always["params"])
    c_args, _ = c_call(always, off, "bf16", 0)
    c_args[i].contents.ndim, c_args[i].contents.dtype = 1, 7
    assert dry_call(host.lib, always["symbol"], c_args)[0] != 0


def _with_dtypes(kernel: dict, consts: dict, **dts) -> tuple[tuple, tuple]:
    """python_call's arguments with the named arrays of other dtypes."""
    args, grid = python_call(kernel, consts, "f32")
    names = [p["name"] for p in kernel["params"]]
    args = list(args)
    for name, dt in dts.items():
        i = names.index(name)
        args[i] = FakeTensor(args[i].shape, dt, args[i].data_ptr())
    return tuple(args), grid


@pytest.mark.parametrize("name, array, dtype, wrong", [
    ("positive_flags", "Flags", "bool", "u8"), ("byte_levels", "Q", "u8", "i8"), ("rounded_int16", "Out", "i16", "f16")])
def test_arrays_of_narrow_dtypes_are_taken_at_their_dtype(small_host, fake_torch, name, array, dtype, wrong):
    """cuTile Python arrays of ct.bool_ / ct.uint8 / ct.int16 (tests/fixtures/features/dtypes/narrow_arrays.py, each
    verified equivalent): they had no C symbol (CT109: the ABI had no code for them). Every dtype verified launches
    what was verified; a call with the torch.bool / torch.uint8 / torch.int16 tensor is accepted by the wrapper and
    the symbol, another dtype is refused by both."""
    host = small_host
    rt = host.pkg._runtime
    op, kernel = find_kernel(host.manifest, name)
    assert kernel.get("abi") is True and {p["name"]: p["dtype"] for p in kernel["params"]}[array] == dtype
    problems = symbol_mismatches(host.lib, kernel) + routing_mismatches(host, op, kernel)
    assert not problems, "\n".join(problems)
    kobj = getattr(host.sources[op], name)
    consts = kernel["specializations"][0]
    got = rt.dry_run(rt.route(kobj, *_with_dtypes(kernel, consts, X="bf16", **{array: dtype})), host.lib)
    assert got["generics"][0] == "bf16" and got["symbol"] == kernel["symbol"], got
    with pytest.raises(rt.ArgumentTypeError, match=f"`{array}` is {wrong}; {name} takes {dtype}"):
        rt.route(kobj, *_with_dtypes(kernel, consts, **{array: wrong}))
    c_args, _ = c_call(kernel, consts, "f32", 0)
    i = [p["name"] for p in kernel["params"]].index(array)
    assert dry_call(host.lib, kernel["symbol"], c_args)[0] == 0
    c_args[i].contents.dtype = rt.DTYPES[wrong][0]
    rc, plan, err = dry_call(host.lib, kernel["symbol"], c_args)
    assert rc == 3 and plan is None and array in err, (rc, err)


@pytest.mark.parametrize("name, real", [
    # TileGym's split-K reduce: f16 partials, f32 log-sum-exps, an f16 output
    ("splitk_merge", {"Partial": "f16", "Lse": "f32", "Out": "f16"}),
    # TileGym's RMS norm backward: bf16 activations and weight, f32 reciprocal deviations
    ("norm_backward_rows", {"DX": "bf16", "DY": "bf16", "X": "bf16", "W": "bf16", "Rstd": "f32"}),
])
def test_more_than_two_element_classes_export_the_verified_combinations(small_host, fake_torch, name, real):
    """issue 33 item 3: a kernel with three element classes or more keeps a generic per class (two were kept,
    and the statistics shared the output's generic: every real call was refused). The manifest records the
    bounded set of combinations (those two merged generics exported, and E over the kernel's dtypes with each
    other generic at E's or f32: model/ir.element_combinations), verify compared each, and the symbol and the
    wrapper accept exactly those: of every combination of f16, bf16 and f32, the others are refused by both
    (CUTILE_ERR_DTYPE; ArgumentTypeError). The real call launches the verified entry with its dtypes as the
    generics."""
    import itertools
    from transpiler.emit.ffi import recorded_combinations
    host = small_host
    rt = host.pkg._runtime
    op, kernel = find_kernel(host.manifest, name)
    generics = [g for g in ("E", "E2", "E3", "E4") if any(p.get("dtype") == g for p in kernel["params"])]
    assert len(generics) == 3, kernel["params"]
    combos = [tuple(c) for c in kernel["element_combinations"]]
    assert [list(c) for c in combos] == recorded_combinations(kernel) and len(combos) == 13, combos
    assert {d for d in kernel_dtypes(kernel) if "+" in d} == {"+".join(c) for c in combos if len(set(c)) > 1}
    problems = symbol_mismatches(host.lib, kernel, (host.out / "src" / op / "kernel.rs").read_text()) \
        + routing_mismatches(host, op, kernel)
    assert not problems, "\n".join(problems)
    kobj = getattr(host.sources[op], name)
    consts = kernel["specializations"][0]
    args, grid = _with_dtypes(kernel, consts, **real)
    got = rt.dry_run(rt.route(kobj, args, grid), host.lib)
    by_generic = {next(p["dtype"] for p in kernel["params"] if p["name"] == n): d for n, d in real.items()}
    assert got["generics"][:3] == [by_generic[g] for g in generics], got
    assert got["element_type"] == by_generic["E"] and got["entry"] == kernel["entries"][0]["name"], got
    first = {g: next(p["name"] for p in kernel["params"] if p.get("dtype") == g) for g in generics}
    for combo in itertools.product(("f16", "bf16", "f32"), repeat=3):
        arrays = {p["name"]: combo[generics.index(p["dtype"])] for p in kernel["params"] if p["kind"] == "array"}
        args, grid = _with_dtypes(kernel, consts, **arrays)
        c_args, _ = c_call(kernel, consts, "+".join(combo), 0)
        rc, plan, err = dry_call(host.lib, kernel["symbol"], c_args)
        if combo in combos:
            assert rc == 0 and plan["generics"][:3] == list(combo), (combo, rc, err)
            assert rt.route(kobj, args, grid).element_type == combo[0]
        else:
            assert rc == 3 and plan is None, (combo, rc, err)  # CUTILE_ERR_DTYPE
            with pytest.raises(rt.ArgumentTypeError, match="|".join(f"`{first[g]}`" for g in generics)):
                rt.route(kobj, args, grid)


@pytest.mark.parametrize("mode", ["python", "compiled"])
def test_a_replace_hints_kernel_launches_with_its_hints(small_host, fake_torch, mode, monkeypatch, request):
    """TileGym launches `kernel.replace_hints(num_ctas=2, occupancy=...)` (a copy of the kernel that cuTile
    Python compiles with those hints) with a grid sized for them. The route reads the launched object's
    hints: where they differ from the port's entry (its decorator's, which `verify` compared), the symbol is
    asked for them (`cutile_hint_next`) and compiles the entry with them (cuTile Rust's compile options
    override the entry's hints); the dry-run plan reports them. They hold for that call only. Hints the port
    cannot take (None where the entry has one, per-target values, another opt_level) are never dropped: the
    launch is refused in strict mode, and runs with cuTile Python with a warning otherwise."""
    host = small_host
    rt = host.pkg._runtime
    # each way a repeat is launched: the fast path's steps in Python, or compiled (prepared launches, C routing)
    monkeypatch.setenv(rt.FASTLAUNCH_ENV, str(request.getfixturevalue("compiled_fast_path"))
                       if mode == "compiled" else "off")
    for cache in (rt._ACCEL, rt._KEYERS, rt._HOT, rt._HOT_LAYOUTS):
        cache.clear()
    rt._FAST.__dict__.pop("calls", None)
    assert (rt.fastlaunch() is not None) == (mode == "compiled")
    op, kernel = find_kernel(host.manifest, "hinted_scale")
    assert kernel["hints"] == [["num_cta_in_cga", 2], ["num_worker_warps_per_cta", 4]], kernel.get("hints")
    kobj = getattr(host.sources[op], "hinted_scale")
    args, grid = python_call(kernel, kernel["specializations"][0], "f16")
    base = rt.dry_run(rt.route(kobj, args, grid), host.lib)
    assert rt.route(kobj, args, grid).hints is None and base["hints"] == [0, 0, 0], base
    same = kobj.replace_hints(num_ctas=2)  # the entry's own: nothing to pass
    assert rt.route(same, args, grid).hints is None
    hinted = kobj.replace_hints(num_ctas=4, occupancy=3)
    plan = rt.route(hinted, args, grid)
    assert plan.hints == (3, 4, 0), plan.hints
    got = rt.dry_run(plan, host.lib)
    assert got["hints"] == [3, 4, 0] and {**got, "hints": [0, 0, 0]} == base, (got, base)
    # for that call only: the next one without hints (a failed hinted call too)
    assert rt.dry_run(rt.route(kobj, args, grid), host.lib)["hints"] == [0, 0, 0]
    assert host.lib.cutile_hint_next(5, 0, 0) == 0
    c_args, _ = c_call(kernel, kernel["specializations"][0], "f16", 0)
    c_args[0] = None  # a null descriptor: refused (1), and the hints are spent
    assert dry_call(host.lib, kernel["symbol"], c_args)[0] == 1
    c_args, _ = c_call(kernel, kernel["specializations"][0], "f16", 0)
    rc, plan_c, _ = dry_call(host.lib, kernel["symbol"], c_args)
    assert rc == 0 and plan_c["hints"] == [0, 0, 0], plan_c
    # values cuTile Python refuses are refused by the symbol too (nothing set)
    for h in ((33, 0, 0), (0, 3, 0), (0, 32, 0), (0, 0, 6), (-1, 0, 0)):
        assert host.lib.cutile_hint_next(*h) == 11, h
    rc, plan_c, _ = dry_call(host.lib, kernel["symbol"], c_args)
    assert rc == 0 and plan_c["hints"] == [0, 0, 0], plan_c
    # a routed ct.launch of the hinted copy, twice (repeats are not served by a layout kept without hints),
    # then the kernel itself: each with its own hints
    real_launch = ct.launch
    recorder = Recorder()
    try:
        ct.launch = recorder
        rt.set_backend("cutile-rs", strict=True)
        previous = host.lib.cutile_dry_run(1)
        try:
            seen = []
            for k in (kobj, kobj, hinted, hinted, kobj, hinted):
                ct.launch(None, grid, k, args)
                seen.append(json.loads(host.lib.cutile_last_plan().decode())["hints"])
        finally:
            host.lib.cutile_dry_run(previous)
        assert seen == [[0, 0, 0], [0, 0, 0], [3, 4, 0], [3, 4, 0], [0, 0, 0], [3, 4, 0]], seen
        assert not recorder.calls
        assert len(rt._FAST.calls) == 2  # the layout with hints is kept apart from the same without them
        assert id(hinted) not in rt._HOT  # (routed in C, a launch could not ask for them)
        if mode == "compiled":
            assert id(kobj) in rt._HOT and all(f.record is not None for f in rt._FAST.calls.values())
        # hints the port cannot take: refused in strict mode, cuTile Python (with a warning) otherwise
        unported = [kobj.replace_hints(num_ctas=None), kobj.replace_hints(opt_level=2),
                    kobj.replace_hints(occupancy=ct.ByTarget(sm_90=4, default=2))]
        for k in unported:
            with pytest.raises(rt.LibraryError, match="hinted_scale"):
                rt.route(k, args, grid)
            with pytest.raises(rt.LibraryError, match="hinted_scale"):
                ct.launch(None, grid, k, args)
        rt.set_backend("cutile-rs")
        with pytest.warns(RuntimeWarning, match="running it with cuTile Python"):
            ct.launch(None, grid, unported[0], args)
        assert len(recorder.calls) == 1 and recorder.calls[0]["kernel"] is unported[0]
    finally:
        rt.set_backend("python")
        rt.uninstall()
        rt._STATE["original"] = None
        ct.launch = real_launch
    # per-target decorator hints: one value for every target replaces them; the same per-target values are
    # the entry's own
    op, kernel = find_kernel(host.manifest, "hinted_copy")
    kobj = getattr(host.sources[op], "hinted_copy")
    args, grid = python_call(kernel, kernel["specializations"][0], "f16")
    assert rt.route(kobj.replace_hints(occupancy=4), args, grid).hints == (4, 0, 0)
    assert rt.route(kobj.replace_hints(num_worker_warps=ct.ByTarget(sm_90=8)), args, grid).hints is None
    with pytest.raises(rt.LibraryError, match="occupancy"):
        rt.route(kobj.replace_hints(occupancy=ct.ByTarget(sm_90=2, default=1)), args, grid)


# ------------------------------------------------- an array whose dtype differs per entry (entry_dtypes.py)

@pytest.fixture(scope="module")
def entry_dtype_host(tmp_path_factory):
    """A crate of dtypes/entry_dtypes.py (an output whose dtype a bool constant or a three-armed int constant
    picks), built on CPU."""
    from conftest import ROOT
    from transpiler.pipeline import run, write_outputs
    base = tmp_path_factory.mktemp("entry_dtype_host")
    src = base / "entry_dtype_ports"  # (the crate's name: a crate of its own in the shared target directory)
    src.mkdir()
    dtypes = ROOT / "tests" / "fixtures" / "features" / "dtypes"
    for f in (dtypes / "entry_dtypes.py", dtypes / "pyproject.toml"):
        shutil.copy(f, src / f.name)
    out = base / "out"
    write_outputs(run([src], out)[1])
    return _loaded_host(out, base / "lib")


def _entry_of(rt, kobj, args, grid) -> str:
    plan = rt.route(kobj, args, grid)
    return plan.spec.entries[plan.entry].name


def test_an_output_takes_the_dtype_its_entry_takes(entry_dtype_host, fake_torch):
    """TileGym's `INTER_BF16` and `OUTPUT_DTYPE` patterns: cuTile Python takes the output at each dtype its
    stored tiles convert to without loss, per specialization (bf16 or f32 where a bf16 copy is stored, f32
    where the f32 tile is). The manifest records the dtypes (param `dtypes`) and each entry's (`array_dtypes`);
    every entry launches what verify compiled at its own dtypes (the symbol, cuTile Python's view, the wrapper's
    route and function); the wrapper and the symbol accept the dtypes the constants' entries take and refuse
    the others (the f32 entry's `__variant` with a bf16 output: CUTILE_ERR_DTYPE)."""
    host = entry_dtype_host
    rt = host.pkg._runtime
    op, kernel = find_kernel(host.manifest, "bf16_intermediates")
    (y,) = [p for p in kernel["params"] if p["name"] == "y"]
    assert y["dtype"] == "f32" and y["dtypes"] == ["f32", "bf16"], y
    assert {e["name"]: (e["predicates"], e["array_dtypes"]) for e in kernel["entries"]} == {
        "bf16_intermediates__low__y_f32": (["LOW"], {"y": "f32"}),
        "bf16_intermediates__not_low": (["not (LOW)"], {"y": "f32"}),
        "bf16_intermediates__low__y_bf16": (["LOW"], {"y": "bf16"})}
    for name in ("bf16_intermediates", "output_dtype_arms"):
        op, k = find_kernel(host.manifest, name)
        kernel_rs = (host.out / "src" / op / "kernel.rs").read_text()
        fn = getattr(getattr(host.pkg, op), name)
        problems = symbol_mismatches(host.lib, k, kernel_rs) + routing_mismatches(host, op, k) \
            + wrapper_mismatches(rt, host.lib, k, getattr(host.sources[op], name), fn, kernel_rs)
        assert not problems, "\n".join(problems)

    kobj = host.sources[op].bf16_intermediates
    low, full = ({**kernel["specializations"][0], "LOW": v} for v in (1, 0))
    assert _entry_of(rt, kobj, *_with_dtypes(kernel, low, x="bf16", y="bf16")) == "bf16_intermediates__low__y_bf16"
    assert _entry_of(rt, kobj, *_with_dtypes(kernel, low, x="f16", y="f32")) == "bf16_intermediates__low__y_f32"
    for consts, bad in ((full, "bf16"), (low, "f16"), (full, "f16")):
        with pytest.raises(rt.ArgumentTypeError, match="`y` is"):
            rt.route(kobj, *_with_dtypes(kernel, consts, x="bf16", y=bad))
    # the symbol (descriptors built here): the f32 entry of LOW, selected with a bf16 output, is refused
    f32_entry = [e["name"] for e in kernel["entries"]].index("bf16_intermediates__low__y_f32")
    c_args, _ = c_call(kernel, low, "bf16", f32_entry)
    assert dry_call(host.lib, kernel["symbol"], c_args)[0] == 0
    c_args[1].contents.dtype = 2  # bf16
    rc, plan, err = dry_call(host.lib, kernel["symbol"], c_args)
    assert rc == 3 and plan is None and "`y` is bf16" in err, (rc, err)
    c_args[1].contents.dtype = 1  # f16: no entry takes it
    rc, plan, err = dry_call(host.lib, kernel["symbol"], c_args)
    assert rc == 3 and "bf16" in err and "f32" in err, (rc, err)

    op, kernel = find_kernel(host.manifest, "output_dtype_arms")
    kobj = host.sources[op].output_dtype_arms
    taken = {(e["predicates"][-1], e["array_dtypes"]["out"]) for e in kernel["entries"]}
    assert taken == {("OUT_DTYPE == 1", "f32"), ("OUT_DTYPE == 1", "f16"), ("OUT_DTYPE == 2", "f32"),
                     ("OUT_DTYPE == 2", "bf16"), ("not (OUT_DTYPE == 2)", "f32")}, taken
    for choice, ok, bad in ((0, ("f32",), ("f16", "bf16")), (1, ("f16", "f32"), ("bf16",)), (2, ("bf16", "f32"), ("f16",))):
        consts = {**kernel["specializations"][0], "OUT_DTYPE": choice}
        for dt in ok:
            assert _entry_of(rt, kobj, *_with_dtypes(kernel, consts, x="f16", out=dt)).endswith(
                f"__out_{dt}" if choice else "not_out_dtype_eq_2")
        for dt in bad:
            with pytest.raises(rt.ArgumentTypeError, match="`out` is"):
                rt.route(kobj, *_with_dtypes(kernel, consts, x="f16", out=dt))


def test_an_entry_checking_another_entrys_dtype_is_reported(entry_dtype_host, tmp_path):
    """Mutant: the bf16 entry of `bf16_intermediates` in ffi.rs checks the f32 entry's dtype; it still builds,
    and the host-layer check (the symbol's dry run of each entry at its own dtypes) reports that entry."""
    out = tmp_path / "out"
    shutil.copytree(entry_dtype_host.out, out)
    ffi = next((out / "src").glob("*/ffi.rs"))
    text = ffi.read_text()
    check = 'abi::expect_dtype(&y, "y", abi::Dtype::BF16)?;'
    assert text.count(check) == 1, text
    ffi.write_text(text.replace(check, 'abi::expect_dtype(&y, "y", abi::Dtype::F32)?;'))
    lib = built_library(out, tmp_path / "lib")
    _, kernel = find_kernel(entry_dtype_host.manifest, "bf16_intermediates")
    problems = symbol_mismatches(ctypes.CDLL(str(lib)), kernel)
    assert problems and all("'y': 'bf16'" in p and "returned 3" in p for p in problems), problems
