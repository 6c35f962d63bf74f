"""tools/ownership_report.py counts what Rust checks in a generated crate: checked outputs, safe entries, and the
reasons of the others grouped by kind (names replaced)."""

import importlib.util
import json
from pathlib import Path

TOOL = Path(__file__).resolve().parent.parent / "tools" / "ownership_report.py"


def _tool():
    spec = importlib.util.spec_from_file_location("ownership_report", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_counts_checked_outputs_safe_entries_and_reasons(tmp_path):
    (tmp_path / "src" / "m").mkdir(parents=True)
    (tmp_path / "src" / "m" / "kernel.rs").write_text(
        "pub fn safe_entry<E>(x: &mut Tensor<E, { [B] }>) {}\npub unsafe fn raw_entry(p: *mut u8) {}\n")
    stride = "written element by element (scatter/atomics) through a raw pointer: the innermost stride is the argument"
    entries = [{"name": "safe_entry", "outputs": [{"array": "x", "form": "checked"}]},
               {"name": "raw_entry", "outputs": [
                   {"array": "y", "form": "unchecked", "reason": f"{stride} `stride_a`, 1 only in some launches"},
                   {"array": "z", "form": "unchecked", "reason": f"{stride} `stride_b`, 1 only in some launches"}]}]
    (tmp_path / "manifest.json").write_text(json.dumps({"modules": [
        {"rust": "src/m/kernel.rs", "kernels": [{"frontend": "triton", "entries": entries}]}]}))
    tool = _tool()
    s = tool.report(tmp_path)["triton"]
    assert (s["kernels"], s["entries"], s["safe"]) == (1, 2, 1)
    assert dict(s["outputs"]) == {"checked": 1, "unchecked": 2}
    assert dict(s["reasons"]) == {"the innermost stride is the argument `…`, 1 only in some launches": 2}
    text = tool.markdown(tool.report(tmp_path))
    assert "checked `&mut Tensor` partitions: 1 of 3 (33%)" in text and "safe entries (`pub fn`, no raw pointer): 1 of 2" in text
