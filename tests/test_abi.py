"""The C ABI and the Python wrapper of the generated crate, on a machine without a GPU.

- the crate builds as a shared library and its descriptor layout and dtype table equal the Python mirror;
- every `cutile_<kernel>` symbol returns the documented code for null, wrong-rank, wrong-dtype,
  mismatched-dtype, overflowing, badly strided or misaligned descriptors, bad grids, variants and
  constants, and with valid arguments gets as far as the device (no driver here) without crashing;
- the wrapper rejects host arrays, wrong dtypes, ranks and strides before calling the library;
- the backend switch routes `ct.launch` of a ported kernel to the Rust symbol, with constants and the
  variant chosen from them, and refuses stale ports and stale libraries.
"""

from __future__ import annotations

import ctypes
import importlib.util
import itertools
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import requires_toolchain
from transpiler.model.ir import is_generic
from transpiler.verify.specs import const_value, predicates_hold
from transpiler.verify.toolchain import cargo_build, cargo_env, crate_build_lock

try:
    import cuda.tile as ct
except ImportError:  # requires_toolchain skips this module where the verify extra is missing (never in CI)
    ct = None

pytestmark = requires_toolchain

_counter = itertools.count()


def load_package(crate: Path):
    """The generated `cutile_ports` of `crate` under a unique module name (several crates per session)."""
    name = f"cutile_ports_{next(_counter)}"
    pkg = crate / "python" / "cutile_ports"
    spec = importlib.util.spec_from_file_location(name, pkg / "__init__.py", submodule_search_locations=[str(pkg)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def import_source(path: Path):
    name = f"abi_src_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def built_library(crate: Path, dest: Path) -> Path:
    """The crate's library, built and copied under the tool's same-name build lock (tests on other workers
    build crates of the same name, e.g. `src`, in the one target directory)."""
    env = cargo_env()
    name = json.loads((crate / "manifest.json").read_text())["crate"]
    with crate_build_lock(env, name, crate):
        res = cargo_build(crate / "Cargo.toml", env)
        assert res.returncode == 0, res.stderr[-4000:]
        lib = Path(env["CARGO_TARGET_DIR"]) / "release" / f"lib{name}.so"
        dest.mkdir(parents=True, exist_ok=True)
        copy = dest / lib.name  # a private copy: later builds of other crates reuse the target dir
        shutil.copy2(lib, copy)
    return copy


@pytest.fixture(scope="module")
def ports(corpus_out, tmp_path_factory, monkeypatch_module):
    lib = built_library(corpus_out, tmp_path_factory.mktemp("lib"))
    monkeypatch_module.setenv("CUTILE_RS_LIB", str(lib))
    pkg = load_package(corpus_out)
    pkg._runtime.load_library()
    return pkg


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@pytest.fixture(scope="module")
def manifest(corpus_out):
    return json.loads((corpus_out / "manifest.json").read_text())


def port_fixture(tmp_path: Path, rel: str):
    """A fixture module (tests/fixtures/REL) ported alone into tmp_path/out and built: (out, package, library)."""
    from transpiler.pipeline import run, write_outputs
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(Path(__file__).parent / "fixtures" / rel, src / Path(rel).name)
    out = tmp_path / "out"
    write_outputs(run([src], out)[1])
    pkg = load_package(out)
    return out, pkg, pkg._runtime.load_library(built_library(out, tmp_path / "lib"))


def driver_present() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


class FakeCudaArray:
    """An object with __cuda_array_interface__ (never dereferenced: every test call fails before the GPU)."""

    def __init__(self, shape, typestr="<f4", ptr=0x7F0000000000, strides=None, readonly=False):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (ptr, readonly),
                                         "strides": strides, "version": 3}


TYPESTR = {"f32": "<f4", "f16": "<f2", "i32": "<i4", "i64": "<i8"}


def valid_launch(spec, kernel: dict, consts: dict):
    """Arguments and grid that pass every check of the kernel's symbol (for the entry `consts` select)."""
    entry = next(e for e in kernel["entries"] if predicates_hold(e["predicates"], consts))
    values = dict(consts)
    for name, expr in entry["derived"].items():
        values[name] = const_value(expr, values)
    tiles = {a: [const_value(d, values) for d in dims] for a, dims in entry["tiles"].items()}
    blocks = (2, 1, 1)
    args, ptr = [], 0x7F0000000000
    for p in kernel["params"]:
        if p["kind"] == "const":
            args.append(consts[p["name"]])
        elif p["kind"] == "scalar":
            args.append({"f32": 0.5, "bool": True}.get(p["dtype"], 3))
        else:
            dtype = "f32" if is_generic(p["dtype"]) else p["dtype"]
            shape = [t * blocks[i] for i, t in enumerate(tiles[p["name"]])] if p["name"] in tiles else [48] * p["rank"]
            args.append(FakeCudaArray(shape, TYPESTR[dtype], ptr))
            ptr += 1 << 24
    grid = blocks[:max((len(t) for t in tiles.values()), default=1)] if tiles else (1,)
    return tuple(args), grid, entry


def pytest_generate_tests(metafunc):
    if "kernel_case" in metafunc.fixturenames:
        from conftest import CORPUS
        from transpiler.frontend.source import parse_file
        names = sorted(k.name for f in sorted((CORPUS / "cutile").rglob("*.py")) for k in parse_file(f, f.name).kernels)
        metafunc.parametrize("kernel_case", names)


def find_kernel(manifest, name):
    return next((m["op"], k) for m in manifest["modules"] for k in m["kernels"] if k["name"] == name)


# ----------------------------------------------------------------------------------------- layout

def test_descriptor_layout_matches_python_mirror(ports):
    layout = ports.abi_layout(ports.load_library())
    assert layout["rust"] == layout["python"]
    assert layout["rust"]["size"] == 152 and layout["rust"]["max_rank"] == 8


def test_dtype_codes_match_python_mirror(ports):
    lib = ports.load_library()
    lib.cutile_dtype_name.restype = ctypes.c_char_p
    for name, (code, _) in ports._runtime.DTYPES.items():
        assert lib.cutile_dtype_name(code).decode() == name
    assert lib.cutile_dtype_name(99) is None
    assert sorted(ports._runtime.DTYPES) == sorted(["f32", "f16", "bf16", "i32", "i64", "f8e5m2", "f8e4m3fn", "i8",
                                                    "u8", "i16", "bool"])


def test_every_kernel_has_a_symbol(ports, manifest):
    lib = ports.load_library()
    symbols = [k["symbol"] for m in manifest["modules"] for k in m["kernels"]]
    assert all(symbols) and len(set(symbols)) == len(symbols)
    for s in symbols:
        assert hasattr(lib, s), s


# ------------------------------------------------------------------------------- symbol checks

def call_codes(ports, kernel: dict, op: str):
    """(label, code, message) for each malformed variant of a valid call of `kernel`."""
    rt = ports._runtime
    spec = getattr(getattr(ports, op), f"SPEC_{kernel['name']}")
    lib = rt.load_library()
    fn = getattr(lib, spec.symbol)
    fn.restype = ctypes.c_int32
    every_array = [i for i, p in enumerate(kernel["params"]) if p["kind"] == "array"]
    consts_at = [i for i, p in enumerate(kernel["params"]) if p["kind"] == "const"]
    checked = {o["array"] for e in kernel["entries"] for o in e["outputs"] if o["form"] == "checked"}
    results = []

    for consts in kernel["specializations"]:
        # the arrays these constants read (one read only under a false `read_when` is passed as null, unchecked)
        arrays = [i for i in every_array if not kernel["params"][i].get("read_when")
                  or predicates_hold([kernel["params"][i]["read_when"]], consts)]
        e_arrays = [i for i in arrays if kernel["params"][i]["dtype"] == "E"]
        concrete = [i for i in arrays if not is_generic(kernel["params"][i]["dtype"])]
        args, grid, entry = valid_launch(spec, kernel, consts)
        fresh = lambda: rt.plan(spec, args, grid)  # noqa: E731

        def run(label, mutate):
            p = fresh()
            mutate(p.c_args)
            rc = fn(*p.c_args)
            results.append((label, rc, (lib.cutile_last_error() or b"").decode()))

        def desc(c, i):
            return c[i].contents

        if not driver_present():
            run("valid", lambda c: None)
        run("null descriptor", lambda c: c.__setitem__(arrays[0], None))
        run("null data", lambda c: setattr(desc(c, arrays[-1]), "ptr", None))
        run("rank", lambda c: setattr(desc(c, arrays[0]), "ndim", desc(c, arrays[0]).ndim + 1))
        run("negative rank", lambda c: setattr(desc(c, arrays[0]), "ndim", -1))
        run("dtype code", lambda c: setattr(desc(c, arrays[-1]), "dtype", 99))
        run("dim overflow", lambda c: desc(c, arrays[0]).shape.__setitem__(0, 2**31))
        run("negative dim", lambda c: desc(c, arrays[0]).shape.__setitem__(0, -3))
        def extent(c):
            desc(c, arrays[0]).shape[0] = 3
            desc(c, arrays[0]).strides[0] = 2**30
        run("extent overflow", extent)
        run("negative stride", lambda c: desc(c, arrays[0]).strides.__setitem__(0, -1))
        run("stride overflow", lambda c: desc(c, arrays[0]).strides.__setitem__(0, 2**32))
        run("misaligned", lambda c: setattr(desc(c, arrays[0]), "ptr", desc(c, arrays[0]).ptr + 1))
        written = [i for i in arrays if kernel["params"][i]["name"] in {o["array"] for o in entry["outputs"]}]
        if written:  # every written array, pointer-accessed (scatter/atomic) ones included
            for i in written:
                run("overlapping output", lambda c, i=i: desc(c, i).strides.__setitem__(0, 0))
        if len(e_arrays) >= 2:
            run("E mismatch", lambda c: setattr(desc(c, e_arrays[1]), "dtype", 1))
        if e_arrays:  # f8e5m2 has a code, but no corpus port was verified for it
            run("E not ported", lambda c: [setattr(desc(c, i), "dtype", 5) for i in e_arrays])
        if concrete:
            i = concrete[0]
            other = 4 if kernel["params"][i]["dtype"] != "i64" else 3
            run("concrete dtype", lambda c: setattr(desc(c, i), "dtype", other))
        run("grid zero", lambda c: c.__setitem__(-5, ctypes.c_int64(0)))
        run("grid y too large", lambda c: c.__setitem__(-4, ctypes.c_int64(70000)))
        if any(o["form"] == "checked" for o in entry["outputs"]):
            run("grid mismatch", lambda c: c.__setitem__(-5, ctypes.c_int64(c[-5].value + 1)))
        if len(kernel["entries"]) > 1:
            run("variant unknown", lambda c: c.__setitem__(-6, ctypes.c_int32(len(kernel["entries"]))))
            other_entry = (kernel["entries"].index(entry) + 1) % len(kernel["entries"])
            run("variant mismatch", lambda c: c.__setitem__(-6, ctypes.c_int32(other_entry)))
        ints_at = [i for i in consts_at if kernel["params"][i].get("const_type") != "float"]  # a float is a double
        if ints_at:
            run("const overflow", lambda c: c.__setitem__(ints_at[0], ctypes.c_int64(2**40)))
        run("device", lambda c: c.__setitem__(-2, ctypes.c_int32(-1)))
        tiles = tile_constants(kernel["name"])
        for i in consts_at:
            p = kernel["params"][i]
            if p["const_type"] == "bool":
                values, label = (2, -1, 7), "bool not 0/1"
            elif p["name"] in tiles:
                values, label = (0, -64, 48, 2**31 - 1), "tile size"
            elif not driver_present():  # any value of a constant that sizes no tile reaches the device
                values, label = (consts[p["name"]] + 1,), "non-tile constant"
            else:
                continue
            for v in values:
                changed = {**consts, p["name"]: v}
                selected = next((j for j, e in enumerate(kernel["entries"]) if predicates_hold(e["predicates"], changed)), None)
                if selected is None or (label == "non-tile constant" and kernel["entries"][selected] is not entry):
                    continue  # another variant may have other checked outputs: only the constant changes here

                def set_const(c, i=i, v=v, selected=selected, double=p.get("const_type") == "float"):
                    c[i] = ctypes.c_double(v) if double else ctypes.c_int64(v)
                    if len(kernel["entries"]) > 1:  # the variant the constants select (as a C caller would)
                        c[-6] = ctypes.c_int32(selected)
                run(f"{label} ({p['name']}={v})", set_const)
    return results, checked


_TILE_CONSTANTS: dict = {}


def tile_constants(kernel_name: str) -> set[str]:
    """The constants of a corpus kernel that size a tile, from the typed IR (not from the manifest): the
    names in the shape of any tile-typed value of any of its variants."""
    if not _TILE_CONSTANTS:
        import re
        from conftest import CORPUS
        from transpiler.frontend.source import parse_file
        from transpiler.model.walk import walk_exprs
        from transpiler.pipeline import translate_kernel
        for f in sorted((CORPUS / "cutile").rglob("*.py")):
            for k in parse_file(f, f.name).kernels:
                names = _TILE_CONSTANTS.setdefault(k.name, set())
                consts = {p.name for p in k.params if p.kind == "const"}
                for v in translate_kernel(k):
                    for e in walk_exprs(v.body):
                        for d in getattr(getattr(e, "ty", None), "shape", None) or ():
                            names |= set(re.findall(r"[A-Za-z_]\w*", str(d))) & consts
    return _TILE_CONSTANTS[kernel_name]


EXPECTED = {"valid": 12, "null descriptor": 1, "null data": 1, "rank": 2, "negative rank": 2, "dtype code": 3,
            "dim overflow": 5, "negative dim": 5, "extent overflow": 5, "negative stride": 6,
            "stride overflow": 6, "overlapping output": 6, "misaligned": 7, "E mismatch": 4, "E not ported": 3, "concrete dtype": 3,
            "grid zero": 8, "grid y too large": 8, "grid mismatch": 9, "variant unknown": 10,
            "variant mismatch": 10, "const overflow": 11, "device": 12,
            "tile size": 11, "bool not 0/1": 11, "non-tile constant": 12}


def test_symbol_rejects_malformed_arguments(ports, manifest, kernel_case):
    op, kernel = find_kernel(manifest, kernel_case)
    results, _ = call_codes(ports, kernel, op)
    expected = lambda label: EXPECTED[label.split(" (")[0]]  # noqa: E731 - "tile size (BM=0)" -> "tile size"
    wrong = [(label, rc, expected(label), msg) for label, rc, msg in results if rc != expected(label)]
    assert not wrong, wrong
    assert all(msg for label, rc, msg in results), "every failure leaves a message"
    labels = {label.split(" (")[0] for label, _, _ in results}
    assert {"null descriptor", "rank", "dtype code", "dim overflow", "misaligned", "grid zero"} <= labels
    assert "tile size" in labels, "every corpus kernel has a tile size set by a constant"


def test_tile_sizes_and_bool_constants_are_checked_for_every_kernel(ports, manifest):
    """F19: a tile size <= 0 or not a power of two is refused (code 11) whether or not the tile belongs to a
    checked output; a bool constant other than 0/1 is refused instead of selecting one variant and running
    another's code (`attn_sinks_fwd_kernel` with CAUSAL=7 ran the causal variant without its causal bound)."""
    op, k = find_kernel(manifest, "attn_sinks_fwd_kernel")
    assert not any(e["tiles"] for e in k["entries"])  # no checked output: the tiles are checked anyway
    results = {label: (rc, msg) for label, rc, msg in call_codes(ports, k, op)[0]}
    for name in ("BM", "BN", "D"):
        for v in (0, -64, 48):
            rc, msg = results[f"tile size ({name}={v})"]
            assert rc == 11 and f"`{name}` = {v}" in msg and "power" in msg, (name, v, rc, msg)
    for v in (2, -1, 7):
        rc, msg = results[f"bool not 0/1 (CAUSAL={v})"]
        assert rc == 11 and "CAUSAL" in msg, (v, rc, msg)
    if not driver_present():  # WINDOW sizes no tile: any value passes
        assert results["non-tile constant (WINDOW=1)"][0] == 12
    # the wrapper normalizes a truthy bool to 1, as cuTile Python treats it
    spec = getattr(ports, op).SPEC_attn_sinks_fwd_kernel
    consts = next(s for s in k["specializations"] if s["CAUSAL"] == 1)
    args, grid, _ = valid_launch(spec, k, consts)
    at = [i for i, p in enumerate(k["params"]) if p["name"] == "CAUSAL"][0]
    plan = ports._runtime.plan(spec, args[:at] + (7,) + args[at + 1:], grid)
    assert plan.c_args[at].value == 1 and plan.spec.entries[plan.entry].name.endswith("__causal")


def test_valid_call_without_driver_is_a_device_error(ports, manifest):
    if driver_present():
        pytest.skip("a CUDA driver is present: a valid call would launch on fake pointers")
    op, kernel = find_kernel(manifest, "vector_add")
    spec = ports.vector_add.SPEC_vector_add
    args, grid, _ = valid_launch(spec, kernel, {"TILE": 256})
    with pytest.raises(ports.CutileRsError) as e:
        ports.vector_add.vector_add(*args, grid=grid)
    assert e.value.code == "CUTILE_ERR_DEVICE"


def test_panics_come_back_as_a_code(ports):
    lib = ports.load_library()
    lib.cutile_abi_check_panic_guard.restype = ctypes.c_int32
    assert lib.cutile_abi_check_panic_guard() == 14
    assert b"panic guard self-test" in lib.cutile_last_error()


def test_layout_probe_accepts_null(ports):
    lib = ports.load_library()
    lib.cutile_abi_layout.restype = ctypes.c_size_t
    assert lib.cutile_abi_layout(None, ctypes.c_size_t(8)) == 8


# ----------------------------------------------------------------------------------- the wrapper

def test_wrapper_rejects_bad_arrays(ports, manifest):
    va = ports.vector_add
    good = lambda: FakeCudaArray((1024,))  # noqa: E731
    err = ports._runtime

    def rejects(exc, *args, grid=(4,), match=None):
        with pytest.raises(exc, match=match):
            err.plan(va.SPEC_vector_add, args, grid)

    rejects(ports.ArgumentTypeError, good(), good(), np.zeros(1024, np.float32), 256, match="host memory")
    rejects(ports.ArgumentTypeError, good(), good(), [0.0] * 1024, 256, match="CUDA")
    rejects(ports.ArgumentTypeError, good(), FakeCudaArray((1024,), "<f2"), good(), 256, match="share the element type")
    rejects(ports.ArgumentTypeError, good(), good(), FakeCudaArray((1024,), "<i8"), 256)
    rejects(ports.ArgumentTypeError, good(), good(), FakeCudaArray((1024,), "<c8"), 256, match="typestr")
    rejects(ports.ArgumentTypeError, good(), good(), FakeCudaArray((1024,), "|b1"), 256, match="is bool but")
    rejects(ports.ArgumentError, good(), good(), FakeCudaArray((32, 32)), 256, match="rank")
    rejects(ports.ArgumentError, good(), good(), FakeCudaArray((1024,), strides=(-4,)), 256, match="negative")
    rejects(ports.ArgumentError, good(), good(), FakeCudaArray((1024,), strides=(6,)), 256, match="whole")
    rejects(ports.ArgumentError, good(), good(), FakeCudaArray((1024,), strides=(0,)), 256, match="overlapping")
    rejects(ports.ArgumentError, good(), good(), FakeCudaArray((1024,), ptr=0x7F0000000002), 256, match="aligned")
    rejects(ports.ArgumentError, good(), good(), FakeCudaArray((1024,), ptr=0), 256, match="null")
    rejects(ports.ArgumentError, good(), good(), FakeCudaArray((1024,), readonly=True), 256, match="read-only")
    rejects(ports.ArgumentTypeError, good(), good(), good(), 2.5, match="constant")
    rejects(ports.ArgumentError, good(), good(), good(), 2**33, match="fit i32")
    rejects(ports.ArgumentTypeError, good(), good(), good(), match="takes 4 arguments")
    rejects(ports.ArgumentError, good(), good(), good(), 256, grid=(0,), match="grid")
    rejects(ports.ArgumentError, good(), good(), good(), 256, grid=(1, 1, 1, 1), match="grid")
    # an f32 kernel array refuses another dtype
    op, ce = find_kernel(manifest, "cross_entropy_fwd_kernel")
    spec = getattr(ports, op).SPEC_cross_entropy_fwd_kernel
    args, grid, _ = valid_launch(spec, ce, ce["specializations"][0])
    labels = [i for i, p in enumerate(ce["params"]) if p["name"] == "labels"][0]
    bad = list(args)
    bad[labels] = FakeCudaArray((48,), "<i8")
    with pytest.raises(ports.ArgumentTypeError, match="takes i32"):
        err.plan(spec, tuple(bad), grid)


def test_wrapper_reads_dlpack_and_strides(ports):
    rt = ports._runtime
    arr = rt.as_device_array(FakeCudaArray((8, 16), "<f2", strides=(64, 2)), "x")
    assert arr.strides == (32, 1) and arr.dtype == "f16"
    arr = rt.as_device_array(FakeCudaArray((8, 16), "<i4"), "x")
    assert arr.strides == (16, 1)
    with pytest.raises(ports.ArgumentTypeError, match="DLPack device type 1"):
        rt.as_device_array(np.zeros((3, 3), np.float32), "x")


class _CAI:
    def __init__(self, cai):
        self.__cuda_array_interface__ = cai


def _cai(**over):
    d = {"shape": (1024,), "typestr": "<f4", "data": (0x7F0000000000, False), "strides": None, "version": 3}
    d.update(over)
    return _CAI({k: v for k, v in d.items() if v is not _DROP})


_DROP = object()


class _RaisingCAI:
    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("boom")


class _DLTensorMirror(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class FakeDLPack:
    """A DLPack producer around a DLTensor built here (a real PyCapsule named "dltensor" by default)."""

    def __init__(self, shape=(1024,), device=(2, 0), name=b"dltensor", capsule=None, ndim=None, null_shape=False,
                 data=0x7F0000000000, device_raises=False):
        self.device, self.name, self.capsule, self.device_raises = device, name, capsule, device_raises
        self.dims = (ctypes.c_int64 * max(1, len(shape)))(*shape)
        self.t = _DLTensorMirror(data, 2, 0, len(shape) if ndim is None else ndim, 2, 32, 1,
                                 None if null_shape else ctypes.cast(self.dims, ctypes.POINTER(ctypes.c_int64)), None, 0)

    def __dlpack_device__(self):
        if self.device_raises:
            raise RuntimeError("no device")
        return self.device

    def __dlpack__(self, stream=None):
        if self.capsule is not None:
            return self.capsule
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.t), self.name, None)


class _JunkStream:
    def __init__(self, value):
        self.value = value

    def __cuda_stream__(self):
        return self.value


MALFORMED_ARRAYS = {
    "CAI missing shape": _cai(shape=_DROP), "CAI missing data": _cai(data=_DROP),
    "CAI missing typestr": _cai(typestr=_DROP), "CAI is a list": _CAI([1, 2]), "CAI is a str": _CAI("nope"),
    "typestr list": _cai(typestr=["<f4"]), "shape str": _cai(shape="abc"), "shape int": _cai(shape=1024),
    "shape None": _cai(shape=None), "shape float": _cai(shape=(1024.7,)), "shape 2**70": _cai(shape=(2**70,)),
    "shape negative": _cai(shape=(-1,)), "rank 9": _cai(shape=(1,) * 9),
    "strides float": _cai(strides=(4.0,)), "strides str": _cai(strides=("4",)),
    "strides 2**70": _cai(strides=(4 * 2**70,)), "strides longer than shape": _cai(strides=(4, 4)),
    "data None": _cai(data=None), "data str pointer": _cai(data=("0x10", False)),
    "data 1-tuple": _cai(data=(0x7F0000000000,)), "data pointer negative": _cai(data=(-8, False)),
    "data pointer 2**70": _cai(data=(2**70, False)), "mask": _cai(mask=_cai()), "property raises": _RaisingCAI(),
    "DLPack device garbage": FakeDLPack(device=("cuda", None)), "DLPack device 1-tuple": FakeDLPack(device=(2,)),
    "DLPack device raises": FakeDLPack(device_raises=True), "DLPack managed memory": FakeDLPack(device=(13, 0)),
    "DLPack consumed capsule": FakeDLPack(name=b"used_dltensor"), "DLPack not a capsule": FakeDLPack(capsule=12345),
    "DLPack NULL shape": FakeDLPack(null_shape=True), "DLPack ndim -1": FakeDLPack(ndim=-1),
    "DLPack ndim 9": FakeDLPack(ndim=9),
}


@pytest.mark.parametrize("case", sorted(MALFORMED_ARRAYS))
def test_wrapper_turns_malformed_arrays_into_its_errors(ports, case):
    """F20: every malformed __cuda_array_interface__ or DLPack object raises the package's own error (never a
    raw KeyError/AttributeError/TypeError/ValueError), and values ctypes would wrap or truncate (int64
    overflow, negative pointers, float shapes, extra strides) are refused instead of reaching the library."""
    good = lambda: FakeCudaArray((1024,))  # noqa: E731
    with pytest.raises((ports.ArgumentError, ports.ArgumentTypeError)) as e:
        ports._runtime.plan(ports.vector_add.SPEC_vector_add, (MALFORMED_ARRAYS[case], good(), good(), 256), (4,))
    assert type(e.value) in (ports.ArgumentError, ports.ArgumentTypeError) and "`a`" in str(e.value)


@pytest.mark.parametrize("grid, stream", [("ab", None), ((2.5,), None), ((2**70,), None), ((1, 70000), None),
                                          (2, None), (None, None), ((4,), _JunkStream("nope")),
                                          ((4,), _JunkStream((0, "x"))), ((4,), -1), ((4,), 2**70), ((4,), "abc"),
                                          ((4,), 2.0)])
def test_wrapper_refuses_bad_grids_and_streams(ports, grid, stream):
    good = lambda: FakeCudaArray((1024,))  # noqa: E731
    with pytest.raises((ports.ArgumentError, ports.ArgumentTypeError)) as e:
        ports._runtime.plan(ports.vector_add.SPEC_vector_add, (good(), good(), good(), 256), grid, stream)
    assert type(e.value) in (ports.ArgumentError, ports.ArgumentTypeError)


def test_wrapper_accepts_well_formed_protocol_objects(ports):
    """The stricter parsing still takes what it took: CAI with strides and numpy-int fields, DLPack, streams."""
    rt = ports._runtime
    arr = rt.as_device_array(_cai(shape=(np.int64(8), 16), strides=(np.int64(64), 4), data=(np.uint64(2**40), True)), "x")
    assert (arr.shape, arr.strides, arr.ptr, arr.readonly) == ((8, 16), (16, 1), 2**40, True)
    arr = rt.as_device_array(FakeDLPack(shape=(4, 8)), "x")
    assert (arr.shape, arr.strides, arr.dtype, arr.device) == ((4, 8), (8, 1), "f32", 0)
    assert rt._stream_handle(_JunkStream((0, 0x1234))) == 0x1234 and rt._stream_handle(None) == 0
    assert rt._stream_handle(2**64 - 1) == 2**64 - 1
    assert rt._grid((np.int32(3), 2)) == (3, 2, 1)


# ------------------------------------------------------------------------------------- routing

@pytest.fixture(scope="module")
def corpus_sources(corpus_out):
    return corpus_out.parent / "corpus" / "cutile"


def test_route_maps_constants_and_variants(ports, manifest, corpus_sources):
    rt = ports._runtime
    sm = import_source(corpus_sources / "partial_reduce.py")
    _, k = find_kernel(manifest, "partial_sum")
    for axis, want in ((0, "partial_sum__axis_eq_0"), (1, "partial_sum__not_axis_eq_0")):
        consts = next(s for s in k["specializations"] if s["AXIS"] == axis)
        spec = getattr(ports.partial_reduce, "SPEC_partial_sum")
        args, grid, entry = valid_launch(spec, k, consts)
        plan = ports.route(sm.partial_sum, args, grid)
        assert plan.spec.symbol == "cutile_partial_sum"
        assert plan.consts == consts
        assert plan.spec.entries[plan.entry].name == want == entry["name"]
        assert plan.c_args[-6].value == plan.entry  # the variant selector passed to the symbol
    fa = import_source(corpus_sources / "workloads" / "flash_attention.py")
    op, k = find_kernel(manifest, "flash_attn_fwd_kernel")
    spec = getattr(getattr(ports, op), "SPEC_flash_attn_fwd_kernel")
    seen = set()
    for consts in k["specializations"]:
        args, grid, entry = valid_launch(spec, k, consts)
        plan = ports.route(fa.flash_attn_fwd_kernel, args, grid)
        assert plan.spec.entries[plan.entry].name == entry["name"]
        consts_passed = [a.value for a, p in zip(plan.c_args, k["params"]) if p["kind"] == "const"]
        assert consts_passed == [int(consts[p["name"]]) for p in k["params"] if p["kind"] == "const"]
        seen.add(entry["name"])
    assert len(seen) == len(k["entries"]) == 2


def test_backend_switch_routes_ct_launch_to_rust(ports, manifest, corpus_sources):
    if driver_present():
        pytest.skip("a CUDA driver is present: the routed call would launch on fake pointers")
    va = import_source(corpus_sources / "vector_add.py")
    _, k = find_kernel(manifest, "vector_add")
    args, grid, _ = valid_launch(ports.vector_add.SPEC_vector_add, k, {"TILE": 256})
    original = ct.launch
    calls = []
    try:
        ports.set_backend("cutile-rs", strict=True)
        assert ct.launch is ports.launch
        with pytest.raises(ports.CutileRsError) as e:  # Rust was reached: it failed at the device step
            ct.launch(None, grid, va.vector_add, args)
        assert e.value.code == "CUTILE_ERR_DEVICE"
        ports._runtime._STATE["original"] = lambda *a: calls.append(a)
        ports.set_backend("python")
        ct.launch(None, grid, va.vector_add, args)
        assert len(calls) == 1 and calls[0][2] is va.vector_add  # python backend: the original launch

        @ct.kernel
        def not_ported(x, T: ct.Constant[int]):
            ct.store(x, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(T,)))

        ports.set_backend("cutile-rs", strict=True)
        with pytest.raises(ports.LibraryError, match="no Rust port"):
            ct.launch(None, (1,), not_ported, (FakeCudaArray((8,)), 8))
        ports.set_backend("cutile-rs")
        with pytest.warns(RuntimeWarning, match="running it with cuTile Python"):
            ct.launch(None, (1,), not_ported, (FakeCudaArray((8,)), 8))
        assert calls[-1][2] is not_ported
    finally:
        ports.set_backend("python")
        ports._runtime._STATE["original"] = original
        ports.uninstall()
    assert ct.launch is original
    with pytest.raises(ValueError, match="backend"):
        ports.set_backend("triton")


def test_stale_source_and_stale_library_are_refused(tmp_path, ports):
    from transpiler.pipeline import run, write_outputs
    from conftest import CORPUS
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(CORPUS / "cutile" / "vector_add.py", src / "vector_add.py")
    out = tmp_path / "out"
    write_outputs(run([src], out)[1])
    pkg = load_package(out)
    mod = import_source(src / "vector_add.py")
    assert pkg._runtime.spec_for(mod.vector_add)[0] is not None
    (src / "vector_add.py").write_text((src / "vector_add.py").read_text() + "\n# edited\n")
    mod = import_source(src / "vector_add.py")
    spec, why = pkg._runtime.spec_for(mod.vector_add)
    assert spec is None and "changed since its port was generated" in why
    # the corpus library has another digest than this crate's package
    with pytest.raises(pkg.LibraryError, match="other generated code"):
        pkg._runtime.load_library(ports._runtime.library_candidates()[0])
    with pytest.raises(pkg.LibraryError, match="not found"):
        pkg._runtime.load_library(tmp_path / "missing.so")


def test_a_missing_check_is_caught(tmp_path):
    """Mutant: the generated alignment and partition-grid checks removed by hand; the same calls that the
    tests above expect to fail now get past them (to the device step), so those tests can fail."""
    from transpiler.pipeline import run, write_outputs
    from conftest import CORPUS
    if driver_present():
        pytest.skip("a CUDA driver is present: calls past the checks would launch on fake pointers")
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(CORPUS / "cutile" / "vector_add.py", src / "vector_add.py")
    out = tmp_path / "mutant"
    write_outputs(run([src], out)[1])
    abi = out / "src" / "abi.rs"
    text = abi.read_text()
    for check in ("if (d.ptr as usize) % dtype.size() != 0 {", "if arg.shape.len() > 3 || want != given {"):
        assert check in text
        text = text.replace(check, "if false {")
    abi.write_text(text)
    pkg = load_package(out)
    lib = pkg._runtime.load_library(built_library(out, tmp_path / "lib"))
    manifest = json.loads((out / "manifest.json").read_text())
    _, kernel = find_kernel(manifest, "vector_add")
    spec = pkg.vector_add.SPEC_vector_add
    args, grid, _ = valid_launch(spec, kernel, {"TILE": 256})
    fn = getattr(lib, spec.symbol)
    fn.restype = ctypes.c_int32
    p = pkg._runtime.plan(spec, args, grid)
    p.c_args[0].contents.ptr += 1
    assert fn(*p.c_args) == 12  # misaligned, yet it reached the device step
    p = pkg._runtime.plan(spec, args, grid)
    p.c_args[-5] = ctypes.c_int64(grid[0] + 1)
    assert fn(*p.c_args) == 12  # wrong grid, yet it reached the device step


def test_entries_of_one_element_type_are_selected_by_the_arrays_dtype(tmp_path):
    """A kernel with an entry for E = f32 (its FMA fuses through an `astype` that is then no operation) and
    one for f16/bf16: the wrapper picks the entry from the arrays' dtype, and the symbol refuses the other
    entry for that dtype (a C caller that names the wrong one gets CUTILE_ERR_VARIANT, never a launch)."""
    out, pkg, lib = port_fixture(tmp_path, "features/dtypes/astype_fma.py")
    manifest = json.loads((out / "manifest.json").read_text())
    _, kernel = find_kernel(manifest, "weighted_column_sum")
    assert [e.get("dtypes") for e in kernel["entries"]] == [["f32"], ["f16", "bf16"]]
    spec = pkg.astype_fma.SPEC_weighted_column_sum
    fn = getattr(lib, spec.symbol)
    fn.restype = ctypes.c_int32
    consts = {"N": 4, "BLOCK": 64}
    for typestr, want in (("<f4", 0), ("<f2", 1)):
        x, w, o = (FakeCudaArray(s, t, 0x7F0000000000 + (i << 24)) for i, (s, t) in
                   enumerate((((4, 128), typestr), ((128,), typestr), ((128,), "<f4"))))
        p = pkg._runtime.plan(spec, (x, w, o, consts["N"], consts["BLOCK"]), (2,))
        assert p.entry == want and spec.entries[want].name.endswith(("__e_f32", "__e_f16_bf16")[want])
        if not driver_present():  # the selected entry passes every check (a driver would launch on fake pointers)
            assert pkg._runtime.CODES[fn(*p.c_args)] == "CUTILE_ERR_DEVICE"
        p.c_args[-6] = ctypes.c_int32(1 - want)
        assert pkg._runtime.CODES[fn(*p.c_args)] == "CUTILE_ERR_VARIANT"  # not this dtype's entry


def test_arrays_of_their_own_dtype_generic_take_mixed_dtypes(tmp_path):
    """rms_norm_mixed: X typed E, W typed E2, Y typed E3 (three groups: X and Y only meet through `astype`),
    Rstd f32. A call with f16 activations and an f32 weight, or the reverse, passes every check of the wrapper
    and of the symbol and is launched with those dtypes as generics; each generic takes only the exported
    dtypes, and the three together only the exported combinations (manifest `element_combinations`: those
    the two generics X and Y shared before, and f16/bf16 with f32 for the others)."""
    out, pkg, lib = port_fixture(tmp_path, "features/dtypes/mixed_arrays.py")
    _, kernel = find_kernel(json.loads((out / "manifest.json").read_text()), "rms_norm_mixed")
    assert {p["name"]: p["dtype"] for p in kernel["params"] if p["kind"] == "array"} == {
        "X": "E", "W": "E2", "Y": "E3", "Rstd": "f32"}
    assert kernel["entries"][0]["generics"][:3] == ["E", "E2", "E3"]
    spec = pkg.mixed_arrays.SPEC_rms_norm_mixed
    fn = getattr(lib, spec.symbol)
    fn.restype = ctypes.c_int32
    lib.cutile_dry_run.restype = ctypes.c_int32
    lib.cutile_last_plan.restype = ctypes.c_char_p

    def call(x, w, y, r="<f4"):
        arrays = [FakeCudaArray(shape, t, 0x7F0000000000 + (i << 24)) for i, (shape, t) in
                  enumerate((((4, 64), x), ((64,), w), ((4, 64), y), ((4,), r)))]
        plan = pkg._runtime.plan(spec, (*arrays, 1e-6, 64), (4,))
        previous = lib.cutile_dry_run(1)
        try:
            rc = fn(*plan.c_args)
            return plan, pkg._runtime.CODES[rc], rc == 0 and json.loads(lib.cutile_last_plan())
        finally:
            lib.cutile_dry_run(previous)
    for x, w, y in (("<f2", "<f4", "<f2"), ("<f4", "<f2", "<f4"), ("<f2", "<f2", "<f2"), ("<f2", "<f4", "<f4")):
        want = [{"<f2": "f16", "<f4": "f32"}[t] for t in (x, w, y)]
        plan, code, launched = call(x, w, y)
        assert code == "CUTILE_OK" and plan.element_type == want[0], (x, w, y, code)
        assert launched["generics"][:3] == want and launched["element_type"] == want[0]
    assert ["f32", "f16", "f32"] in kernel["element_combinations"]  # what two generics exported
    assert ["f32", "f16", "f16"] not in kernel["element_combinations"]
    with pytest.raises(pkg.ArgumentTypeError, match="the port takes these combinations only"):
        call("<f4", "<f2", "<f2")
    with pytest.raises(pkg.ArgumentTypeError, match="`W` is i32; the port of rms_norm_mixed takes"):
        call("<f2", "<i4", "<f2")
    # the symbol checks the same without the wrapper: W's dtype code patched to i32, then Y's to f16 with f32
    # activations and weight (a combination it does not export)
    plan, _, _ = call("<f2", "<f4", "<f2")
    descs = [a.contents for a in plan.c_args[:4]]
    descs[1].dtype = pkg._runtime.DTYPES["i32"][0]
    assert pkg._runtime.CODES[fn(*plan.c_args)] == "CUTILE_ERR_DTYPE"
    assert b"`W` is i32" in lib.cutile_last_error()
    descs[0].dtype, descs[1].dtype = pkg._runtime.DTYPES["f32"][0], pkg._runtime.DTYPES["f16"][0]
    assert pkg._runtime.CODES[fn(*plan.c_args)] == "CUTILE_ERR_DTYPE"
    assert b"have no port" in lib.cutile_last_error()


def test_a_factory_kernel_is_routed_with_its_closure_values(tmp_path):
    """The kernel `make_scale_kernel(n_cols)` returns reads the factory's values: routed, they are the port's
    last constants, read from the launched kernel's closure (a kernel of another n_cols, other constants)."""
    out, pkg, _ = port_fixture(tmp_path, "features/factory.py")
    mod = import_source(tmp_path / "src" / "factory.py")
    spec = pkg.factory.SPEC_scale_rows
    assert spec.closure == ("base", "fast", "has_tail", "n_full", "tail_at")
    x, y = (FakeCudaArray((4, 200), "<f4", 0x7F0000000000 + (i << 24)) for i in range(2))
    for n_cols, fast, want in ((200, False, {"base": 64, "fast": 0, "has_tail": 0, "n_full": 3, "tail_at": 192}),
                               (250, True, {"base": 64, "fast": 1, "has_tail": 1, "n_full": 3, "tail_at": 192})):
        kernel = mod.make_scale_kernel(n_cols, fast)
        plan = pkg.route(kernel, (x, y, 0.5), (4,))
        assert plan.consts == {"scale": 0.5, **want}
    with pytest.raises(pkg.LibraryError, match="cannot read the factory"):
        pkg._runtime.with_closure(lambda: None, spec, (x, y, 0.5))


@pytest.fixture
def fake_torch(monkeypatch):
    """A stand-in `torch` module whose Tensor has what the wrapper reads (CI has no torch)."""
    import types
    fake = types.ModuleType("torch")

    class Tensor:
        def __init__(self, shape, strides, dtype="torch.float16", cuda=True, ptr=0x7F0000000000, device=1):
            self.shape, self._strides, self.dtype, self.is_cuda = shape, strides, dtype, cuda
            self._ptr, self._device = ptr, device
            self.device = f"cuda:{device}" if cuda else "cpu"

        def data_ptr(self):
            return self._ptr

        def stride(self):
            return self._strides

        def get_device(self):
            return self._device if self.is_cuda else -1

    fake.Tensor = Tensor
    monkeypatch.setitem(sys.modules, "torch", fake)
    return Tensor


def test_wrapper_reads_torch_tensors(ports, fake_torch):
    """The torch path, with a stand-in `torch` module (CI has no torch): CUDA tensors are described from
    data_ptr/shape/stride/dtype/device, CPU tensors are refused as host memory."""
    Tensor = fake_torch
    rt = ports._runtime
    arr = rt.as_device_array(Tensor((4, 8), (16, 1)), "x")
    assert (arr.ptr, arr.shape, arr.strides, arr.dtype, arr.device) == (0x7F0000000000, (4, 8), (16, 1), "f16", 1)
    with pytest.raises(ports.ArgumentTypeError, match="on cpu"):
        rt.as_device_array(Tensor((4, 8), (8, 1), cuda=False), "x")
    with pytest.raises(ports.ArgumentTypeError, match="no code"):
        rt.as_device_array(Tensor((4,), (1,), dtype="torch.complex64"), "x")
    x = [Tensor((1024,), (1,), "torch.float32", device=0) for _ in range(3)]
    p = rt.plan(ports.vector_add.SPEC_vector_add, (*x, 256), (4,))
    assert p.device == 0 and p.element_type == "f32"
    x[2] = Tensor((1024,), (1,), "torch.float32", device=1)
    with pytest.raises(ports.ArgumentError, match="several devices"):
        rt.plan(ports.vector_add.SPEC_vector_add, (*x, 256), (4,))


def test_symbol_collisions_are_resolved_deterministically(tmp_path):
    """Two modules with a kernel of the same name: the first (in sorted op order) keeps `cutile_<kernel>`,
    the other becomes `cutile_<op>_<kernel>`, whatever order the sources are given in; both link."""
    from transpiler.pipeline import run, write_outputs
    from conftest import CORPUS
    for name in ("alpha", "beta"):
        (tmp_path / "src").mkdir(exist_ok=True)
        shutil.copy(CORPUS / "cutile" / "vector_add.py", tmp_path / "src" / f"{name}.py")
    outs = []
    for order in (["alpha.py", "beta.py"], ["beta.py", "alpha.py"]):
        out = tmp_path / f"out_{len(outs)}"
        result, files = run([tmp_path / "src" / f for f in order], out)
        write_outputs(files)
        outs.append(out)
    manifests = [json.loads((o / "manifest.json").read_text()) for o in outs]
    symbols = [{m["op"]: m["kernels"][0]["symbol"] for m in man["modules"]} for man in manifests]
    assert symbols[0] == symbols[1] == {"alpha": "cutile_vector_add", "beta": "cutile_beta_vector_add"}
    lib = ctypes.CDLL(str(built_library(outs[0], tmp_path / "lib")))
    assert hasattr(lib, "cutile_vector_add") and hasattr(lib, "cutile_beta_vector_add")


def test_repeated_layouts_are_still_checked(ports, fake_torch):
    """plan() reuses the checks of a layout it has seen; pointers, scalars and any layout change are still
    checked on every call, and the descriptors of one plan never leak into another."""
    rt = ports._runtime
    spec = ports.vector_add.SPEC_vector_add

    def arrays(ptr=0x7F0000000000, strides=(1,)):
        return [fake_torch((1024,), strides, "torch.float32", ptr=ptr + i * 4096, device=0) for i in range(3)]

    rt._CHECKED.clear()
    first = rt.plan(spec, (*arrays(), 256), (4,))
    assert len(rt._CHECKED) == 1  # the layout was remembered
    first.c_args[0].contents.ndim = 7  # a caller scribbling on its plan
    second = rt.plan(spec, (*arrays(0x7F0000100000), 256), (4,))
    assert second.c_args[0].contents.ndim == 1 and second.c_args[0].contents.ptr == 0x7F0000100000
    with pytest.raises(ports.ArgumentError, match="aligned"):
        rt.plan(spec, (*arrays(0x7F0000000002), 256), (4,))
    with pytest.raises(ports.ArgumentError, match="null"):
        rt.plan(spec, (*arrays(0), 256), (4,))
    with pytest.raises(ports.ArgumentError, match="negative"):
        rt.plan(spec, (*arrays(strides=(-1,)), 256), (4,))
    with pytest.raises(ports.ArgumentTypeError, match="constant"):
        rt.plan(spec, (*arrays(), 256.0), (4,))
    with pytest.raises(ports.ArgumentError, match="grid"):
        rt.plan(spec, (*arrays(), 256), (0,))


def test_written_pointer_arrays_are_checked_for_overlap(corpus_out):
    """A scatter target is both pointer-accessed and written: its descriptor gets both checks."""
    import re
    text = (corpus_out / "src" / "moe_align" / "ffi.rs").read_text()
    assert re.search(r'"sorted_token_ids",\s*1,\s*abi::Access \{\s*written: true,\s*pointer: true\b', text)
    assert re.search(r'"topk_ids",\s*1,\s*abi::Access \{\s*written: false,\s*pointer: true\b', text)


def test_the_only_entry_for_some_constants_refuses_the_others(tmp_path):
    """residual_kernel (tests/fixtures/triton_unseen/equal_dims.py) adds a [BT, BV] tile to a [BT, BK] one: its
    one entry holds for `BV == BK` only. The wrapper and the C symbol refuse BK != BV (the symbol used to run the
    only entry whatever the constants: a kernel made for BV == BK, launched at BV = 2 * BK)."""
    out, pkg, lib = port_fixture(tmp_path, "triton_unseen/equal_dims.py")
    manifest = json.loads((out / "manifest.json").read_text())
    _, kernel = find_kernel(manifest, "residual_kernel")
    assert [e["predicates"] for e in kernel["entries"]] == [["BV == BK"]]
    spec = pkg.equal_dims.SPEC_residual_kernel
    fn = getattr(lib, spec.symbol)
    fn.restype = ctypes.c_int32
    v, k, o = (FakeCudaArray(s, "<f4", 0x7F0000000000 + (i << 24)) for i, s in
               enumerate(((16, 32), (32, 16), (16, 32))))
    p = pkg._runtime.plan(spec, (v, k, o, 16, 16, 32, 32), (1,))
    if not driver_present():  # equal: past every check (a driver would launch on fake pointers)
        assert pkg._runtime.CODES[fn(*p.c_args)] == "CUTILE_ERR_DEVICE"
    with pytest.raises(pkg._runtime.ArgumentError, match="no variant"):
        pkg._runtime.plan(spec, (v, k, o, 16, 16, 32, 64), (1,))
    names = [q.name for q in spec.params]
    p.c_args[names.index("BV")] = ctypes.c_int64(64)
    assert pkg._runtime.CODES[fn(*p.c_args)] == "CUTILE_ERR_VARIANT"


def test_int8_dot_operands_refuse_other_dtypes(tmp_path):
    """int8_gemm_kernel (tests/fixtures/triton_unseen/int8_matmul.py) accumulates `tl.dot` of its a and b pointers
    in int32: Triton compiles it only where they hold int8, so the port takes int8 there and nothing else. The
    wrapper refuses a float32 (or int32) tensor for `a`, and so does the C symbol (its dtype code patched); the
    written pointer `c` is an integer one (i32 or i64)."""
    out, pkg, lib = port_fixture(tmp_path, "triton_unseen/int8_matmul.py")
    _, kernel = find_kernel(json.loads((out / "manifest.json").read_text()), "int8_gemm_kernel")
    assert {p["name"]: p["dtype"] for p in kernel["params"] if p["kind"] == "array"} == {
        "a_ptr": "i8", "b_ptr": "i8", "c_ptr": "E"}
    spec = pkg.int8_matmul.SPEC_int8_gemm_kernel
    fn = getattr(lib, spec.symbol)
    fn.restype = ctypes.c_int32
    lib.cutile_dry_run.restype = ctypes.c_int32
    lib.cutile_last_plan.restype = ctypes.c_char_p
    lib.cutile_last_error.restype = ctypes.c_char_p

    def plan(a="|i1", b="|i1", c="<i4"):
        arrays = [FakeCudaArray(shape, t, 0x7F0000000000 + (i << 24)) for i, (shape, t) in
                  enumerate((((64, 96), a), ((96, 32), b), ((64, 32), c)))]
        return pkg._runtime.plan(spec, (*arrays, 64, 32, 96, 96, 1, 32, 1, 32, 1, 32, 32, 32), (2, 1))

    good = plan()
    previous = lib.cutile_dry_run(1)
    try:
        assert pkg._runtime.CODES[fn(*good.c_args)] == "CUTILE_OK", lib.cutile_last_error()
        assert json.loads(lib.cutile_last_plan())["entry"].startswith("int8_gemm_kernel")
        assert pkg._runtime.CODES[fn(*plan(c="<i8").c_args)] == "CUTILE_OK"  # c: an integer pointer
    finally:
        lib.cutile_dry_run(previous)
    for bad in ("<f4", "<f2", "<i4"):
        with pytest.raises(pkg.ArgumentTypeError, match="`a_ptr` is .*; .* takes i8"):
            plan(a=bad)
        with pytest.raises(pkg.ArgumentTypeError, match="`b_ptr` is .*; .* takes i8"):
            plan(b=bad)
    # the symbol checks the same without the wrapper
    good.c_args[0].contents.dtype = pkg._runtime.DTYPES["f32"][0]
    assert pkg._runtime.CODES[fn(*good.c_args)] == "CUTILE_ERR_DTYPE"
    assert b"a_ptr" in lib.cutile_last_error()


def test_narrow_dtypes_reach_the_symbol_and_others_are_refused(tmp_path, fake_torch):
    """tests/fixtures/triton_unseen/narrow_ints.py, launched in dry-run mode (no GPU): an fp8 quantizer's bytes
    stored into the uint8 tensor its caller passes (`out.view(torch.uint8)`), a torch.bool mask loaded and used
    as a condition, int16 ids and results, an int32 counter of `tl.atomic_add(p, 1)`. The wrapper takes each
    (__cuda_array_interface__ typestrs and torch tensors alike) and the C symbol launches it with the dtype's
    name and its `__E_INT` kind as generics (u8 1, i16 2, bool -1, i32 4); a dtype outside a pointer's domain
    is refused by both (the symbol checked alone with its descriptor's code patched)."""
    from transpiler.verify.glue import dry_call
    out, pkg, lib = port_fixture(tmp_path, "triton_unseen/narrow_ints.py")
    rt, mod = pkg._runtime, pkg.narrow_ints
    ptr = itertools.count(0x7F0000000000, 1 << 24)

    def arrays(*specs):
        return [FakeCudaArray(shape, t, next(ptr)) for shape, t in specs]

    def launch(spec, args, grid):
        p = rt.plan(spec, args, grid)
        rc, plan, err = dry_call(lib, spec.symbol, p.c_args)
        assert rt.CODES[rc] == "CUTILE_OK", err
        return p, plan["generics"]

    def refused_by_symbol(p, spec, index, dtype):
        p.c_args[index].contents.dtype = rt.DTYPES[dtype][0]
        rc, _, err = dry_call(lib, spec.symbol, p.c_args)
        return rt.CODES[rc] == "CUTILE_ERR_DTYPE" and spec.params[index].name in err

    # the fp8 quantizer: q_ptr (E2) takes uint8 bytes
    fp8 = mod.SPEC_fp8_bytes_kernel

    def quantize(q="|u1"):
        return (*arrays(((4, 40), "<f4"), ((4, 40), q), ((4,), "<f4")), 40, 40, 40, 64)
    p, generics = launch(fp8, quantize(), (4,))
    assert generics[:6] == ["f32", "u8", "f32", "0", "1", "0"], generics
    for bad in ("|i1", "<f2"):
        with pytest.raises(pkg.ArgumentTypeError, match=r"`q_ptr` is \w+; .* takes i32, i64, u8, i16, bool"):
            rt.plan(fp8, quantize(bad), (4,))
    assert refused_by_symbol(p, fp8, 1, "i8")

    # the bool mask (E2) read as a load mask and a condition; bools stored into another torch.bool tensor (E4)
    keep = mod.SPEC_keep_where_kernel

    def masked(k="|b1", pos="|b1"):
        return (*arrays(((50,), "<f4"), ((50,), k), ((50,), "<f4"), ((50,), pos)), 50, -1.5, 32)
    p, generics = launch(keep, masked(), (2,))
    assert generics[:7] == ["f32", "bool", "f32", "bool", "-1", "0", "-1"], generics  # (x_ptr: floats, no kind)
    _, generics = launch(keep, masked(k="|u1", pos="<i4"), (2,))  # a uint8 mask, int32 flags
    assert generics[:7] == ["f32", "u8", "f32", "i32", "1", "0", "4"], generics
    with pytest.raises(pkg.ArgumentTypeError, match=r"`keep_ptr` is f32; .* takes i32, i64, u8, i16, bool"):
        rt.plan(keep, masked(k="<f4"), (2,))
    assert refused_by_symbol(p, keep, 1, "f32")

    # int16 ids (E) as row offsets, int16 codes (E4) stored
    rows = mod.SPEC_id_rows_kernel

    def gathered(ids="<i2", code="<i2"):
        return (*arrays(((9,), ids), ((40, 24), "<f4"), ((9, 24), "<f4"), ((9,), code)), 9, 24, 24, 32)
    p, generics = launch(rows, gathered(), (9,))
    assert generics[:8] == ["i16", "f32", "f32", "i16", "2", "0", "0", "2"], generics
    with pytest.raises(pkg.ArgumentTypeError, match=r"`ids_ptr` is f16; .* takes i32, i64, u8, i16, bool"):
        rt.plan(rows, gathered(ids="<f2"), (9,))
    assert refused_by_symbol(p, rows, 0, "f16")

    # the counter (E2): int32 (an integer atomic add) or the kernel's float dtypes, never int64 (no such atomic)
    count = mod.SPEC_bucket_count_kernel

    def counted(c="<i4"):
        return (*arrays(((100,), "<f4"), ((8,), c)), 100, 8, 64)
    p, generics = launch(count, counted(), (2,))
    assert generics[:4] == ["f32", "i32", "0", "4"], generics
    assert launch(count, counted("<f4"), (2,))[1][:4] == ["f32", "f32", "0", "0"]
    with pytest.raises(pkg.ArgumentTypeError, match=r"`count_ptr` is i64; .* takes f16, bf16, f32, i32"):
        rt.plan(count, counted("<i8"), (2,))
    assert refused_by_symbol(p, count, 1, "i64")

    # torch tensors of those dtypes, and the other protocols' names for them
    T = fake_torch
    t = [T((50,), (1,), d, ptr=next(ptr), device=0) for d in ("torch.float32", "torch.bool", "torch.float32",
                                                               "torch.bool")]
    assert launch(keep, (*t, 50, -1.5, 32), (2,))[1][:4] == ["f32", "bool", "f32", "bool"]
    assert [rt.as_device_array(T((4,), (1,), f"torch.{d}"), "x").dtype for d in ("uint8", "int16", "bool")] == \
        ["u8", "i16", "bool"]
    assert (rt.CAI_DTYPES["|u1"], rt.CAI_DTYPES["<i2"], rt.CAI_DTYPES["|b1"]) == ("u8", "i16", "bool")
    assert (rt.DL_DTYPES[(1, 8)], rt.DL_DTYPES[(0, 16)], rt.DL_DTYPES[(6, 8)]) == ("u8", "i16", "bool")
