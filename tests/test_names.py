"""Names the generated crate and package define themselves are never taken by a kernel or a module.

The reserved names are read from the templates (transpiler/output/names.py); these tests check that reading
against crates actually rendered, then translate kernels and modules named like every reserved name into
one OUT and check that the crate compiles, that no C symbol is defined twice (`cargo check` cannot see
that: it is a link error of `cargo build`), and that the Python package imports with every port in place.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import requires_toolchain
from transpiler.output import names
from transpiler.pipeline import run, write_outputs

KERNEL = '''

@ct.kernel
def {name}(a, b, TILE: ct.Constant[int]):
    x = ct.load(a, index=(ct.bid(0),), shape=(TILE,))
    ct.store(b, index=(ct.bid(0),), tile=x + x)
'''
# calls the named steps (rules/rust_steps.rs) a kernel above is named like, in the same Rust module
STEP_USER = '''

@ct.kernel
def uses_steps(a, b, heads, TILE: ct.Constant[int]):
    bh = ct.bid(0)
    x = ct.load(a, index=(bh,), shape=(TILE,))
    ct.store(b, index=(bh,), tile=x + (bh // heads + bh % heads))
'''
NO_MANGLE = re.compile(r"#\[(?:unsafe\()?no_mangle\)?\]\s*pub\s+(?:unsafe\s+)?extern\s+\"C\"\s+fn\s+(\w+)")

# kernels named like every fixed C symbol (without its `cutile_` prefix), every name of a generated Python
# module and every item of a Rust kernel module, and pairs where one's derived name is the other's own
SYMBOL_KERNELS = sorted(s.removeprefix("cutile_") for s in names.exported_symbols())
PYTHON_KERNELS = sorted(names.ops_module_names()) + ["__getattr__"]
MODULE_KERNELS = sorted(names.kernel_module_names())
PAIRS = ["SPEC_k2", "k2", "pk_k3", "k3", "k4_port", "__k4__"]
# modules named like every name the package or the crate root defines (the language's keywords aside)
RESERVED_MODULES = sorted(names.reserved_ops() - names.LANGUAGE_OPS)


def _source(kernels: list[str]) -> str:
    return "import cuda.tile as ct\n" + "".join(KERNEL.format(name=k) for k in kernels)


@pytest.fixture(scope="module")
def named_out(tmp_path_factory):
    base = tmp_path_factory.mktemp("names")
    src = base / "src"
    src.mkdir()
    (src / "ops.py").write_text(_source(SYMBOL_KERNELS + PYTHON_KERNELS + MODULE_KERNELS + PAIRS) + STEP_USER)
    for m in RESERVED_MODULES:
        (src / f"{m}.py").write_text(_source([f"k_{m.lower()}"]))
    out = base / "out"
    result, outputs = run([src], out, use_cache=False, compile_check="on")
    write_outputs(outputs)
    return out, result


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def _symbols(out: Path) -> list[str]:
    return [s for p in sorted((out / "src").rglob("*.rs")) for s in NO_MANGLE.findall(p.read_text())]


def test_the_reserved_symbols_are_every_fixed_export_of_a_rendered_crate(named_out):
    out, _ = named_out
    per_kernel = {s for mm in _manifest(out)["modules"] for k in mm["kernels"] if k.get("symbol")
                  for s in (k["symbol"], "cutilepk_" + k["symbol"].removeprefix("cutile_"))}
    assert set(_symbols(out)) - per_kernel == names.exported_symbols()
    assert {"cutile_fire", "cutile_dry_run", "cutile_last_plan", "cutile_last_error"} <= names.exported_symbols()


def test_the_reserved_python_names_are_what_the_package_binds(named_out):
    out, _ = named_out
    pkg = out / "python" / "cutile_ports"
    init = names._module_level_names((pkg / "__init__.py").read_text())
    ops = {mm["op"] for mm in _manifest(out)["modules"]}
    assert init - ops <= names.reserved_ops()
    assert {"launch", "set_backend", "route", "dry_run", "explain", "_os"} <= names.reserved_ops()
    assert {"_runtime", "_crate", "_fastlaunch"} <= names.reserved_ops()  # the package's own modules
    kernels = [k for mm in _manifest(out)["modules"] if mm["op"] == "ops" for k in mm["kernels"]]
    own = {n for f, s in names.python_names(kernels) for n in (f, s)}
    assert names._module_level_names((pkg / "ops.py").read_text()) - own == names.ops_module_names() == {"__cutile_rt__"}


@requires_toolchain
@pytest.mark.parametrize("kernel", SYMBOL_KERNELS + PYTHON_KERNELS + MODULE_KERNELS + PAIRS)
def test_a_kernel_named_like_a_reserved_name_translates_and_gets_its_own_names(named_out, kernel):
    out, result = named_out
    (r,) = [r for r in result.kernels if r.name == kernel and r.source.endswith("ops.py")]
    assert r.status == "translated", [d.text() for d in r.diagnostics]  # compiled: no CT007
    symbols = _symbols(out)
    assert len(symbols) == len(set(symbols)), sorted(s for s in set(symbols) if symbols.count(s) > 1)
    (k,) = [k for mm in _manifest(out)["modules"] if mm["op"] == "ops" for k in mm["kernels"] if k["name"] == kernel]
    assert k["symbol"] not in names.exported_symbols() and k["symbol"] in symbols
    assert all(e["name"] not in names.kernel_module_names() for e in k["entries"])
    assert {"py_mod_i32", "py_floordiv_i32"} <= names.kernel_module_names()


@requires_toolchain
@pytest.mark.parametrize("module", RESERVED_MODULES)
def test_a_module_named_like_a_reserved_name_is_renamed(named_out, module):
    out, result = named_out
    (r,) = [r for r in result.kernels if r.name == f"k_{module.lower()}"]
    assert r.status == "translated", [d.text() for d in r.diagnostics]
    (mm,) = [mm for mm in _manifest(out)["modules"] if mm["source"].endswith(f"/{module}.py")]
    assert mm["op"] not in names.reserved_ops() and module.lower() in mm["op"]


@requires_toolchain
def test_the_package_imports_with_every_port_under_its_names(named_out):
    out, _ = named_out
    probe = """
import inspect, json, sys
import cutile_ports as cp
from cutile_ports import _runtime as rt
# the package's own functions are not replaced by a module
assert all(getattr(cp, n) is getattr(rt, n) for n in ("launch", "dry_run", "explain", "route", "set_backend"))
ports = {}
for mm in json.loads(sys.argv[1]):
    mod = getattr(cp, mm["op"])
    specs = {v.name: v for v in vars(mod).values() if isinstance(v, rt.KernelSpec)}
    fns = {n: f for n, f in vars(mod).items() if inspect.isfunction(f) and f.__module__ == mod.__name__}
    ports[mm["op"]] = [sorted(specs), sorted(fns)]
print(json.dumps(ports))
"""
    modules = _manifest(out)["modules"]
    res = subprocess.run([sys.executable, "-c", probe, json.dumps(modules)], cwd=out / "python",
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    ports = json.loads(res.stdout)
    for mm in modules:
        kernels = [k for k in mm["kernels"] if k.get("symbol")]
        specs, fns = ports[mm["op"]]
        assert specs == sorted(k["name"] for k in kernels)  # every kernel's spec, none shadowed
        assert fns == sorted(f for f, _ in names.python_names(kernels))  # and a wrapper for each
    ops = dict(zip([k["name"] for mm in modules if mm["op"] == "ops" for k in mm["kernels"]],
                   names.python_names([k for mm in modules if mm["op"] == "ops" for k in mm["kernels"]])))
    assert ops["SPEC_k2"][0] == "SPEC_k2" and ops["k2"][1] != "SPEC_k2"  # the port of SPEC_k2 keeps its name
    assert ops["__cutile_rt__"][0] == "__cutile_rt___port" and ops["__k4__"][0] == "__k4___port"
    assert ops["k4_port"][0] == "k4_port"  # a kernel's own name never moves for a renamed one


def test_python_names_are_deterministic_and_distinct():
    kernels = [{"name": n, "params": [{"name": "SPEC_a"}] if n == "a" else []}
               for n in ["__cutile_rt__", "SPEC_k2", "k2", "__cutile_rt___port", "a"]]
    got = names.python_names(kernels)
    flat = [n for pair in got for n in pair]
    assert len(flat) == len(set(flat)) and not set(flat) & names.ops_module_names()
    assert got[0][0] == "__cutile_rt___port_2" and got[3][0] == "__cutile_rt___port"
    assert got[4][1] != "SPEC_a"  # a parameter named like the spec would shadow it in the wrapper
    assert got == names.python_names(kernels)


def test_symbol_names_avoid_the_exports_and_each_others_packed_forms():
    taken: set[str] = set()
    fire = names.symbol_name("fire", "ops", taken)
    assert fire == "cutile_ops_fire"
    assert names.symbol_name("x", "ops", taken) == "cutile_x"
    assert "cutilepk_x" in taken and "cutilepk_ops_fire" in taken
    assert names.symbol_name("x", "ops", taken) == "cutile_ops_x"  # a second `x` (another module's)
