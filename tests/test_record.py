"""`cutile-transpile record`: numeric cases for a user's Triton ports, recorded from Triton's interpreter
(declared in pyproject.toml, or from the user's own command) into OUT/cases/ and replayed by `verify` through
each port's Tile IR (transpiler/record, transpiler/verify/interpret/driver.recorded_for).

The recording needs triton (CI installs it, .ci/run); the replay needs the verification toolchain."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from conftest import requires_toolchain

# the Python that records: one with triton (CI keeps triton out of the suite's own environment, .ci/run)
PY = os.environ.get("CUTILE_TRANSPILE_TEST_TRITON_PYTHON") or sys.executable
if subprocess.run([PY, "-c", "import triton"], capture_output=True).returncode != 0:
    if os.environ.get("CI"):
        raise RuntimeError(f"{PY} cannot import triton: .ci/run installs it (CUTILE_TRANSPILE_TEST_TRITON_PYTHON)")
    pytest.skip("triton is not installed", allow_module_level=True)

SOFTMAX = '''\
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)
'''

PYPROJECT = '''\
[project]
name = "mykern"
version = "0.1"

[[tool.cutile-transpile.cases]]
source = "mykern/softmax.py"
kernel = "softmax_kernel"
grid = [4]
args = { x_ptr = { shape = [4, 100], dtype = "float32" }, y_ptr = { shape = [4, 100], dtype = "float32", init = "zeros" }, n_cols = 100, stride = 100, BLOCK = 128 }
'''


def cli(*args, cwd=None, check=True):
    r = subprocess.run([PY, "-m", "transpiler.cli", *map(str, args)], cwd=cwd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    (proj / "mykern").mkdir(parents=True)
    (proj / "mykern" / "__init__.py").write_text("")
    (proj / "mykern" / "softmax.py").write_text(SOFTMAX)
    (proj / "pyproject.toml").write_text(PYPROJECT)
    cli("mykern", "-o", tmp_path / "out", "-q", "--no-compile-check", cwd=proj)
    return proj


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("record")
    proj = project(tmp)
    r = cli("record", "-o", tmp / "out", cwd=proj)
    return tmp, proj, r


def cases_of(out: Path) -> list[Path]:
    return sorted((out / "cases").glob("*.npz"))


def test_a_declared_case_is_recorded_with_everything_a_replay_needs(recorded):
    tmp, proj, r = recorded
    (case_file,) = cases_of(tmp / "out")
    assert "recorded 1 new case" in r.stderr and case_file.name.startswith("softmax_kernel-")
    with np.load(case_file) as data:
        case = json.loads(str(data["case"]))
        x_in, y_in, y_out = data["in__x_ptr"], data["in__y_ptr"], data["out__y_ptr"]
    assert case["grid"] == [4] and case["constexprs"] == {"BLOCK": 128}
    assert case["scalars"] == {"n_cols": 100, "stride": 100} and case["args"] == ["x_ptr", "y_ptr", "n_cols", "stride"]
    assert case["source"] == json.loads((tmp / "out" / "manifest.json").read_text())["modules"][0]["source"]
    assert set(case["outputs"]) == {"x_ptr", "y_ptr"}  # every array is compared: a port must not write an input
    assert not y_in.any() and x_in.shape == (400,)
    x = x_in.reshape(4, 100).astype(np.float64)
    want = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y_out.reshape(4, 100), want / want.sum(1, keepdims=True), rtol=1e-5)
    # recording again adds nothing (content-addressed), and says so
    again = cli("record", "-o", tmp / "out", cwd=proj)
    assert "recorded 0 new cases" in again.stderr and len(cases_of(tmp / "out")) == 1


@requires_toolchain
def test_recorded_cases_prove_the_port_and_catch_a_changed_one(recorded, tmp_path):
    from transpiler.verify.interpret.driver import check_output
    tmp, _, _ = recorded
    (res,) = check_output(tmp / "out")["softmax_kernel"]
    assert res.verdict == "numbers_match", res.detail
    # the same case against a port whose mask is off by one
    import shutil
    bad = tmp_path / "out"
    shutil.copytree(tmp / "out", bad)
    shutil.copytree(tmp / "proj", tmp_path / "proj")  # the manifest names the source relative to OUT
    rs = bad / "src" / "softmax" / "kernel.rs"
    text = rs.read_text()
    assert text.count("predicate::LessThan)") == 1
    rs.write_text(text.replace("predicate::LessThan)", "predicate::LessThanOrEqual)"))
    (res,) = check_output(bad)["softmax_kernel"]
    # (the last row reads one element past `x_ptr`'s span: the replay names the access)
    assert res.verdict == "numbers_differ" and "of `x_ptr`" in res.detail, res.detail


@requires_toolchain
def test_a_case_recorded_from_another_version_of_the_source_is_reported_not_replayed(recorded, tmp_path):
    import shutil
    from transpiler.verify.interpret.driver import check_output
    tmp, proj, _ = recorded
    shutil.copytree(tmp / "out", tmp_path / "out")
    shutil.copytree(proj, tmp_path / "proj")  # the manifest names the source relative to OUT: same layout
    src = tmp_path / "proj" / "mykern" / "softmax.py"
    src.write_text(src.read_text() + "# edited\n")
    (res,) = check_output(tmp_path / "out")["softmax_kernel"]
    assert res.verdict == "not_interpreted" and "recorded from another version" in res.detail


def test_a_users_command_is_recorded_and_a_launch_that_cannot_be_replayed_is_skipped(tmp_path):
    proj = project(tmp_path)
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent('''\
        import sys
        import numpy as np
        sys.path.insert(0, sys.argv[1])
        from triton.runtime import interpreter as interp
        from transpiler.record.declared_runner import HostTensor
        interp.GridExecutor._init_args_hst = lambda self, args, kwargs: (list(args), dict(kwargs))
        interp.GridExecutor._restore_args_dev = lambda self, *a, **k: None
        from mykern.softmax import softmax_kernel
        x = HostTensor(np.random.default_rng(1).standard_normal((2, 64)).astype(np.float32), "float32")
        y = HostTensor(np.zeros((2, 64), np.float32), "float32")
        softmax_kernel[(2,)](x, x, 64, 64, BLOCK=64)   # in place: one array under two names (not replayable)
        softmax_kernel[(2,)](x, y, 64, 64, BLOCK=64)
        softmax_kernel[(2,)](y, x, 64, 64, BLOCK=64)   # another launch: over --max-per-kernel 1
        '''))
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    r = subprocess.run([PY, "-m", "transpiler.cli", "record", "-o", str(tmp_path / "out"),
                        "--max-per-kernel", "1", "--", PY, str(script), str(proj)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "`x_ptr` and `y_ptr` share memory" in r.stderr or "`y_ptr` and `x_ptr` share memory" in r.stderr
    assert len(cases_of(tmp_path / "out")) == 1  # --max-per-kernel 1: the third launch is not kept
    with np.load(cases_of(tmp_path / "out")[0]) as data:
        assert json.loads(str(data["case"]))["constexprs"] == {"BLOCK": 64}


def test_the_commands_exit_status_is_records(tmp_path):
    project(tmp_path)
    r = cli("record", "-o", tmp_path / "out", "--", sys.executable, "-c", "raise SystemExit(3)", check=False)
    assert r.returncode == 3


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("grid = [4]", "grid = []"), "`grid` must be 1 to 3 positive integers"),
    (lambda t: t.replace('kernel = "softmax_kernel"', 'kernel = "softmax_kernel"\ncolour = 1'), "unknown key(s) colour"),
    (lambda t: t.replace('source = "mykern/softmax.py"', 'source = "mykern/nope.py"'), "no file"),
    (lambda t: t.replace('init = "zeros"', 'init = "noise"'), "`y_ptr.init` must be one of"),
    (lambda t: t.split("[[tool")[0], "declares no [[tool.cutile-transpile.cases]]"),
])
def test_a_bad_declared_case_is_a_clear_error(tmp_path, edit, message):
    proj = project(tmp_path)
    (proj / "pyproject.toml").write_text(edit(PYPROJECT))
    r = cli("record", "-o", tmp_path / "out", cwd=proj, check=False)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert not cases_of(tmp_path / "out")


def test_record_needs_an_output_with_triton_ports(tmp_path):
    r = cli("record", "-o", tmp_path / "nothing", "--", sys.executable, "-c", "pass", check=False)
    assert r.returncode == 2 and "manifest.json" in r.stderr


@requires_toolchain
@pytest.mark.parametrize("edit", [
    lambda c: c.pop("grid"),
    lambda c: c.update(grid=[1 << 20, 2]),
    lambda c: c["outputs"]["y_ptr"].pop("tol"),
    lambda c: c.update(inputs=[{"name": "z"}]),
])
def test_a_case_edited_by_hand_is_reported_not_replayed(recorded, tmp_path, edit):
    """A case file in OUT is data a clone may have changed: a malformed one is named, never run or crashed on."""
    import shutil
    from transpiler.verify.interpret.driver import check_output
    tmp, _, _ = recorded
    shutil.copytree(tmp / "out", tmp_path / "out")
    shutil.copytree(tmp / "proj", tmp_path / "proj")
    (path,) = cases_of(tmp_path / "out")
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    case = json.loads(str(arrays.pop("case")))
    edit(case)
    np.savez(path, case=np.array(json.dumps(case)), **arrays)
    (res,) = check_output(tmp_path / "out")["softmax_kernel"]
    assert res.verdict == "not_interpreted" and path.name in res.detail and "cannot be read" in res.detail
