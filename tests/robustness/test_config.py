"""`[tool.cutile-transpile]` validation (issue 9, item 6; probe F15): every bad config is a diagnostic with the
pyproject's path, line and a CT010..CT017 code, never CT900; errors fail closed."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from transpiler import config
from transpiler.model.ir import Kernel, Param, Pos
from transpiler.verify.specs import specializations

KERNEL_SRC = '''import cuda.tile as ct


@ct.kernel
def vector_add(a, b, c, TILE: ct.Constant[int]):
    bid = ct.bid(0)
    x = ct.load(a, index=(bid,), shape=(TILE,))
    y = ct.load(b, index=(bid,), shape=(TILE,))
    ct.store(c, index=(bid,), tile=x + y)
'''
P = Pos("src/k.py", 5, 1)


def kernel(name="vector_add", launches=(), flag=False) -> Kernel:
    params = [Param("a", "array", P), Param("b", "array", P), Param("c", "array", P),
              Param("TILE", "const", P, const_type="int")]
    if flag:
        params.append(Param("FLAG", "const", P, const_type="bool"))
    return Kernel(name, "k", "src/k.py", P, tuple(params), (), launches=launches)


@pytest.fixture()
def proj(tmp_path, monkeypatch):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.py").write_text(KERNEL_SRC)
    monkeypatch.chdir(tmp_path)

    def write(text: str | bytes) -> Path:
        data = text if isinstance(text, bytes) else text.encode()
        (tmp_path / "pyproject.toml").write_bytes(data)
        return tmp_path / "src" / "k.py"
    return write


def codes(diags):
    return [(d.severity, d.code, d.pos.line) for d in diags]


# (pyproject text, expected [(severity, code, line)]) - every F15 probe and the brief's list
BAD = [
    ("[tool.cutile-transpile\n", [("error", "CT010", 1)]),
    ("tool = 5\n", [("error", "CT012", 1)]),
    ('[tool]\ncutile-transpile = "yes"\n', [("error", "CT012", 2)]),
    ('[tool.cutile-transpile]\ndtypes = "f32"\n', [("error", "CT012", 2)]),
    ("[tool.cutile-transpile]\ndtypes = 5\n", [("error", "CT012", 2)]),
    ('[tool.cutile-transpile]\ndtypes = ["f32", 5]\n', [("error", "CT012", 2)]),
    ("[tool.cutile-transpile]\nspecializations = 5\n", [("error", "CT012", 2)]),
    ("[tool.cutile-transpile.specializations]\nvector_add = 5\n", [("error", "CT012", 2)]),
    ("[tool.cutile-transpile.specializations]\nvector_add = [5]\n", [("error", "CT012", 2)]),
    ('[tool.cutile-transpile]\ndtypes = ["f64", "garbage"]\n', [("error", "CT013", 2), ("error", "CT013", 2)]),
    ("[tool.cutile-transpile]\ndtypes = []\n", [("error", "CT013", 2)]),
    ("[tool.cutile-transpile.specializations]\nvector_add = []\n", [("error", "CT014", 2)]),
    ('[project]\nname = "x"\n\n[tool.cutile-transpile.specializations]\nvector_add = [{TILE = "big"}]\n',
     [("error", "CT012", 5)]),
    ("[tool.cutile-transpile.specializations]\nvector_add = [{TILE = 64.5}]\n", [("error", "CT012", 2)]),
    ("[tool.cutile-transpile.specializations]\nvector_add = [{TILE = 9223372036854775807}]\n",
     [("error", "CT014", 2)]),
    ("[tool.cutile-transpile.specializations]\nvector_add = [{TILE = [1]}]\n", [("error", "CT012", 2)]),
    (b"[tool.cutile-transpile]\n# caf\xe9\n", [("error", "CT010", 2)]),
]


@pytest.mark.parametrize("text,expected", BAD, ids=[repr(t)[:48] for t, _ in BAD])
def test_bad_config_is_an_error_with_position(proj, text, expected):
    src = proj(text)
    section, diags = config.config_for(src)
    assert codes(diags) == expected, [d.text() for d in diags]
    assert all(d.pos.path == "pyproject.toml" and d.pos.col >= 1 for d in diags)
    # fail closed: the kernel under it is an error, never translated with defaults
    kd = config.kernel_diagnostics(kernel(), src)
    assert [(d.severity, d.code) for d in kd] == [("error", "CT017")]
    assert "pyproject.toml:" in kd[0].message
    # and specs never crash on what remains
    specializations(kernel(), src)


def test_column_points_at_the_offending_item(proj):
    src = proj('[tool.cutile-transpile]\ndtypes = ["f16", "f64"]\n'
               '[tool.cutile-transpile.specializations]\nvector_add = [{TILE = 32}, {TILE = 1.5}]\n')
    _, diags = config.config_for(src)
    assert [(d.code, d.pos.line, d.pos.col) for d in diags] == [("CT013", 2, 18), ("CT012", 4, 29)]


def test_unknown_keys_warn_with_did_you_mean(proj):
    src = proj('[project]\nname = "x"\n\n[tool.cutile-transpile]\ndtypez = ["f32"]\nfrobnicate = 1\n')
    section, diags = config.config_for(src)
    assert codes(diags) == [("warning", "CT011", 5), ("warning", "CT011", 6)]
    assert "did you mean `dtypes`" in diags[0].message
    assert section == {}
    assert config.kernel_diagnostics(kernel(), src) == []  # warnings do not stop anything


def test_good_config_normalized(proj):
    src = proj('[tool.cutile-transpile]\ndtypes = ["f32", "i32", "f32"]\n'
               "[tool.cutile-transpile.specializations]\nvector_add = [{TILE = 128}, {TILE = -64}]\n")
    section, diags = config.config_for(src)
    assert diags == []
    assert section == {"dtypes": ["f32", "i32"], "specializations": {"vector_add": [{"TILE": 128}, {"TILE": -64}]}}
    assert specializations(kernel(), src) == ([{"TILE": 128}, {"TILE": -64}], ["f32", "i32"], "pyproject.toml")


def test_unknown_constant_warns_and_is_left_out(proj):
    src = proj("[tool.cutile-transpile.specializations]\nvector_add = [\n  {TILE = 32, NOPE = 1},\n  {TILEE = 8},\n]\n")
    _, diags = config.config_for(src)
    assert diags == []
    kd = config.kernel_diagnostics(kernel(), src)
    assert [(d.code, d.pos.line) for d in kd] == [("CT015", 3), ("CT015", 4)]
    assert "did you mean `TILE`" in kd[1].message
    assert specializations(kernel(), src)[0] == [{"TILE": 32}, {"TILE": 64}]


def test_bool_constant_value_checked_per_kernel(proj):
    src = proj("[tool.cutile-transpile.specializations]\nvector_add = [{TILE = 32, FLAG = true}, {TILE = 8, FLAG = 5}]\n")
    kd = config.kernel_diagnostics(kernel(flag=True), src)
    assert [(d.severity, d.code, d.pos.line) for d in kd] == [("error", "CT014", 2)]
    assert kd[0].pos.col > 30  # the second row's FLAG


def test_unmatched_kernel_name_and_once_per_pyproject(proj, tmp_path):
    src = proj("[tool.cutile-transpile]\ndtypez = 1\n[tool.cutile-transpile.specializations]\n"
               "vector_add = [{}]\nvectr_ad = [{TILE = 8}]\n")
    other = tmp_path / "src" / "sub" / "k2.py"
    other.parent.mkdir()
    other.write_text(KERNEL_SRC)
    assert config.config_for(src)[1] is config.config_for(other)[1]  # memoized per pyproject
    run = config.run_diagnostics([src, other, src], ["vector_add"])
    assert codes(run) == [("warning", "CT011", 2), ("warning", "CT016", 5)]
    assert "did you mean `vector_add`" in run[1].message
    assert codes(config.run_diagnostics([src], None)) == [("warning", "CT011", 2)]  # e.g. under --kernel


def test_memo_follows_content(proj):
    src = proj("[tool.cutile-transpile]\ndtypes = 5\n")
    assert config.has_errors(src)
    proj('[tool.cutile-transpile]\ndtypes = ["f32"]\n')
    assert not config.has_errors(src)
    assert config.config_for(src)[0] == {"dtypes": ["f32"]}


def test_no_pyproject_and_directory_named_pyproject(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(KERNEL_SRC)
    (tmp_path / "pyproject.toml").mkdir()  # a directory is not a config; the next one up is used
    section, diags = config.config_for(src)
    assert diags == [] or all(d.pos.path.endswith("pyproject.toml") for d in diags)


def test_unreadable_pyproject_fails_closed(proj):
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    src = proj('[tool.cutile-transpile]\ndtypes = ["f32"]\n')
    Path("pyproject.toml").chmod(0)
    try:
        assert codes(config.config_for(src)[1]) == [("error", "CT010", 1)]
    finally:
        Path("pyproject.toml").chmod(0o644)


# ------------------------------------------------------------------ specializations vs launch sites
def test_table_used_when_launch_sites_are_not_literals(proj):
    src = proj("[tool.cutile-transpile.specializations]\nvector_add = [{TILE = 256}]\n")
    k = kernel(launches=((),))  # ct.launch(s, grid, vector_add, (a, b, c, tile)) with `tile` a variable
    assert specializations(k, src)[0::2] == ([{"TILE": 256}], "pyproject.toml")


def test_launch_literals_still_win(proj):
    src = proj("[tool.cutile-transpile.specializations]\nvector_add = [{TILE = 256}]\n")
    k = kernel(launches=((), (("TILE", 1024),)))
    assert specializations(k, src)[0::2] == ([{"TILE": 1024}], "launch sites")
    assert specializations(kernel(launches=((),)), src.parent / "nowhere.py")[0] == [{"TILE": 256}]


def test_non_literal_launch_without_table_takes_defaults(tmp_path):
    assert specializations(kernel(launches=((),)), tmp_path / "k.py")[0::2] == ([{"TILE": 64}], "defaults")


def test_random_garbage_never_raises(proj):
    """A seeded mutation fuzz over config texts: config never raises, every diagnostic has a CT01x code."""
    rnd = random.Random(1234)
    pieces = ["[tool.cutile-transpile]\n", "[tool.cutile-transpile.specializations]\n", "[tool]\n", "[[tool]]\n",
              "dtypes = ", "specializations = ", "vector_add = ", "cutile-transpile = ", "tool = ", '["f32"]',
              "[]", "5", '"x"', "{}", "[{TILE = 8}]", "[{TILE = 1.5}]", "[{TILE = true}]", "{a = {b = 1}}",
              "\n", "=", "[", "]", "{", '"', "'''", "\xe9", "# c\n", "[[tool.cutile-transpile.specializations.k]]\n"]
    for _ in range(400):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 12)))
        src = proj(text.encode("utf-8") if rnd.random() < 0.9 else text.encode("latin-1", "replace"))
        section, diags = config.config_for(src)
        assert all(d.code.startswith("CT01") and d.pos.line >= 1 for d in diags), text
        for k in (kernel(), kernel(flag=True)):
            assert all(d.code.startswith("CT01") for d in config.kernel_diagnostics(k, src))
            specializations(k, src)
        config.run_diagnostics([src], ["vector_add"])


# ------------------------------------------------------------------ through the CLI


def _cli(cwd: Path, *args) -> subprocess.CompletedProcess:
    from transpiler.verify.toolchain import cache_dir
    # a fresh result cache, but the shared cargo target dir (the crate's dependencies take minutes to build)
    env = dict(os.environ, CUTILE_TRANSPILE_CACHE=str(cwd / ".cache"),
               CARGO_TARGET_DIR=os.environ.get("CARGO_TARGET_DIR", str(cache_dir() / "target")))
    return subprocess.run([shutil.which("cutile-transpile") or "cutile-transpile", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=300)


CLI_BAD = [("[tool.cutile-transpile\n", "CT010", 1), ("tool = 5\n", "CT012", 1),
           ('[tool.cutile-transpile]\ndtypes = "f32"\n', "CT012", 2),
           ("[tool.cutile-transpile]\ndtypes = []\n", "CT013", 2),
           (b"[tool.cutile-transpile]\n\xff = 1\n", "CT010", 2)]


@pytest.mark.parametrize("text,code,line", CLI_BAD, ids=[c for _, c, _ in CLI_BAD])
def test_cli_bad_config_fails_closed(proj, tmp_path, text, code, line):
    proj(text)
    r = _cli(tmp_path, "src", "-o", "out", "--format", "json")
    assert r.returncode == 1, r.stderr
    assert "CT900" not in r.stdout + r.stderr and "Traceback" not in r.stderr
    doc = json.loads(r.stdout)
    (k,) = doc["kernels"]
    assert k["status"] == "error" and [d["code"] for d in k["diagnostics"]] == ["CT017"]
    text_run = _cli(tmp_path, "src", "-o", "out")
    assert text_run.stderr.count(f"pyproject.toml:{line}:") >= 1 and f"[{code}]" in text_run.stderr
    assert text_run.stderr.count(f"[{code}]") == 1  # once per pyproject, not once per kernel
    assert not (tmp_path / "out" / "src" / "k" / "kernel.rs").exists()


def test_cli_warnings_once_per_pyproject(proj, tmp_path):
    proj("[tool.cutile-transpile]\ndtypez = 1\n[tool.cutile-transpile.specializations]\nvectr_add = [{}]\n")
    (tmp_path / "src" / "k2.py").write_text(KERNEL_SRC.replace("vector_add", "vector_add2"))
    r = _cli(tmp_path, "src", "-o", "out")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("[CT011]") == 1 and r.stderr.count("[CT016]") == 1
    assert "pyproject.toml:2:1: warning" in r.stderr
    r = _cli(tmp_path, "src", "-o", "out")  # cached run: still reported
    assert r.stderr.count("[CT011]") == 1 and r.stderr.count("[CT016]") == 1


def test_cli_table_used_with_non_literal_launch(proj, tmp_path):
    proj('[tool.cutile-transpile]\ndtypes = ["f32"]\n[tool.cutile-transpile.specializations]\n'
         "vector_add = [{TILE = 256}]\n")
    (tmp_path / "src" / "k.py").write_text(KERNEL_SRC + "\n\ndef launch(s, a, b, c, t):\n"
                                           "    ct.launch(s, (1, 1, 1), vector_add, (a, b, c, t))\n")
    r = _cli(tmp_path, "src", "-o", "out")
    assert r.returncode == 0, r.stderr
    m = json.loads((tmp_path / "out" / "manifest.json").read_text())
    (k,) = [k for mod in m["modules"] for k in mod["kernels"]] if "modules" in m else m["kernels"]
    assert k["specializations"] == [{"TILE": 256}] and k["specializations_from"] == "pyproject.toml"
    assert k["dtypes"] == ["f32"]
