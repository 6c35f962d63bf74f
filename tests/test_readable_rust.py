"""The generated Rust a reviewer reads: temporaries named from the source, named steps for repeated lowerings,
calls on one line where they fit (issue 14). Every such change keeps the Tile IR: the fixture verifies
`equivalent` (test_features.py), and the mutants below show that the checks see the names and the steps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import requires_toolchain
from transpiler.pipeline import run, write_outputs

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "features" / "readable_names.py"


def _port(tmp_path: Path, tag: str = "out") -> Path:
    src = tmp_path / "src"
    if not src.exists():
        src.mkdir()
        (src / FIXTURE.name).write_text(FIXTURE.read_text())
        (src / "pyproject.toml").write_text('[tool.cutile-transpile]\ndtypes = ["f32"]\n')
    out = tmp_path / tag
    result, outputs = run([src], out)
    assert all(k.status == "translated" for k in result.kernels), [d.text() for k in result.kernels for d in k.diagnostics]
    write_outputs(outputs)
    return out


def _entry(text: str, name: str) -> str:
    start = text.index(f"fn {name}")
    return text[start:text.index("\n    }\n", start)]


def test_temporaries_are_named_after_the_source_and_never_shadow_its_names(tmp_path):
    text = (_port(tmp_path) / "src/readable_names/kernel.rs").read_text()
    body = _entry(text, "no_shadowed_names")
    assert not re.search(r"\b_(v|c|pv|pm|tok|shape|p)\d+\b", text), "numbered temporaries are gone"
    lets = re.findall(r"let (?:mut )?(\w+)", body)
    assert lets.count("y_a") == 1 and lets.count("y_b") == 1, lets  # the kernel's own, never a temporary's
    assert any(n.startswith("y_") and n not in ("y_a", "y_b") for n in lets), lets  # `y = ...`'s temporaries
    assert "let t_part: Partition" not in body and "let x_part: Partition" in body  # a view: after its array
    assert [n for n in set(lets) if lets.count(n) > 1] == ["y"], lets  # only the source's own `y = y + ...`
    # each source statement above its lowering
    assert "// y_a = bh // heads\n" in body


def test_without_the_guard_a_temporary_would_take_a_kernel_name(tmp_path, monkeypatch):
    """The mutant of the guard: the names the kernel assigns later are not reserved; `y = ...`'s first
    temporary is then `y_a`, declared again by the kernel (the test above fails on this output)."""
    from transpiler import cache
    from transpiler.emit import lower
    monkeypatch.setattr(cache, "file_key", lambda *args: None)
    monkeypatch.setattr(lower, "_kernel_names", lambda k: set())
    body = _entry((_port(tmp_path) / "src/readable_names/kernel.rs").read_text(), "no_shadowed_names")
    assert re.findall(r"let (?:mut )?(\w+)", body).count("y_a") == 2


def test_named_steps_are_defined_once_per_module_where_used(tmp_path):
    text = (_port(tmp_path) / "src/readable_names/kernel.rs").read_text()
    assert text.count("fn py_mod_i32(") == 1 and text.count("fn py_floordiv_i32(") == 1
    assert "let y_a: i32 = py_floordiv_i32(bh, heads);" in _entry(text, "no_shadowed_names")
    assert "let y_b: i32 = py_mod_i32(bh, heads);" in _entry(text, "no_shadowed_names")
    step_user = _entry(text, "step_named_variable")
    assert "let py_mod_i32_: i32 = py_mod_i32(" in step_user  # the variable is renamed, the step is not
    # a module that needs no step defines none
    src = tmp_path / "plain"
    src.mkdir()
    (src / "k.py").write_text("import cuda.tile as ct\n\n\n@ct.kernel\ndef k(x, T: ct.Constant[int]):\n"
                              "    i = ct.bid(0)\n    ct.store(x, index=(i,), tile=ct.load(x, index=(i,), shape=(T,)) * 2)\n")
    result, outputs = run([src], tmp_path / "plain_out")
    write_outputs(outputs)
    assert "fn py_" not in (tmp_path / "plain_out/src/k/kernel.rs").read_text()


def test_a_call_that_fits_in_120_columns_stays_on_one_line(tmp_path):
    text = (_port(tmp_path) / "src/readable_names/kernel.rs").read_text()
    assert max(len(line) for line in text.splitlines() if not line.lstrip().startswith(("//", "///"))) <= 120
    assert re.search(r"let \w+: Tile<E, \{ \[BLOCK\] \}> =\n?\s*load_view_tko\(&\w+, \[bh\], ordering::Weak, "
                     r"scope::TileBlock, None, tma::Enabled\);", text)


@requires_toolchain
def test_the_check_sees_a_wrong_step(tmp_path, monkeypatch):
    """A mutant of a step (its body differs from the expanded form) is `different` in every kernel using it:
    the steps' bodies are compared like the entries'."""
    from transpiler import cache
    from transpiler.emit import steps
    from transpiler.verify.run import verify_output
    monkeypatch.setattr(cache, "file_key", lambda *args: None)  # the mutants change the tool

    def verdicts(tag):
        return {v.kernel: v.verdict for v in verify_output(_port(tmp_path, tag))}
    assert verdicts("good") == {"no_shadowed_names": "equivalent", "step_named_variable": "equivalent"}
    wrong = {**steps.step_sources()}
    wrong["py_mod_i32"] = wrong["py_mod_i32"].replace("predicate::NotEqual", "predicate::Equal")
    monkeypatch.setattr(steps, "step_sources", lambda: wrong)
    got = verdicts("wrong_step")
    assert got == {"no_shadowed_names": "different", "step_named_variable": "different"}, got
