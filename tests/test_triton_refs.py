"""The Triton reference fixtures (`tests/fixtures/triton_refs`, written by `tools/triton_reference.py` with the
Triton interpreter) agree with the tool's case table and its numpy references. Needs numpy, not triton."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("triton_reference", ROOT / "tools" / "triton_reference.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("triton_reference", mod)
    spec.loader.exec_module(mod)
    return mod


TOOL = _tool()
CASES = TOOL.cases()


def test_cases_cover_every_corpus_kernel():
    import ast

    kernels = set()
    files = sorted((ROOT / "corpus" / "triton" / "workloads").glob("*.py")) + \
        sorted((ROOT / "tests" / "fixtures" / "triton_not_yet").glob("*.py")) + \
        [ROOT / "tests" / "fixtures" / "triton_unseen" / f"{m}.py" for m in TOOL.UNSEEN]  # fixtures with numbers
    for f in files:
        tree = ast.parse(f.read_text())
        # a jit function another calls by name is a device helper (compat_libm's `rint`, named as libdevice's)
        called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_") and f.stem != "utils" \
                    and node.name not in called and any(
                    "jit" in ast.unparse(d) or "autotune" in ast.unparse(d) or "heuristics" in ast.unparse(d)
                    for d in node.decorator_list):
                kernels.add((f.stem, node.name))
            # `f = triton.jit(f, ...)` after `def f` (tests/fixtures/triton_unseen/call_jit.py)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    ast.unparse(node.value.func) == "triton.jit" and not node.targets[0].id.startswith("_"):
                kernels.add((f.stem, node.targets[0].id))
    # cases of other fixtures of tests/fixtures/triton_unseen (a case's `package`) besides
    covered = {(c["module"].rsplit(".", 1)[1], c["kernel"]) for c in CASES
               if not c["module"].startswith(TOOL.UNSEEN_PKG) or c["module"].rsplit(".", 1)[1] in TOOL.UNSEEN}
    assert kernels == covered
    assert len({c["id"] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_fixture_matches_numpy_reference(case):
    saved = np.load(TOOL.fixture_path(case))
    assert json.loads(str(saved["case"])) == case, "case table changed: rerun tools/triton_reference.py"
    inputs = TOOL.make_inputs(case)
    got = {n: saved[f"out__{n}"] for n in case["outputs"]}
    err, ok = TOOL.compare(case, got, TOOL.reference(case, inputs))
    assert ok, f"max abs err {err}"
