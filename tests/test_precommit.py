"""The pre-commit hook, installed from this repository with `pre-commit try-repo`, regenerates the Rust
ports on the first run (failing, as hooks that change files do) and passes on the second."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KERNEL = (ROOT / "corpus/cutile/vector_add.py").read_text()


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)


@pytest.mark.skipif(shutil.which("pre-commit") is None and not __import__("os").environ.get("CI"),
                    reason="pre-commit not installed (CI installs it and never skips)")
def test_hook_regenerates_then_passes(tmp_path):
    # try-repo installs the hook from the committed state of a repository: snapshot the working tree
    src = tmp_path / "tool"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", "rust", "target", "__pycache__", "*.egg-info",
                                                             ".pytest_cache"))
    git("init", "-q", cwd=src)
    git("add", "-A", cwd=src)
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "snapshot", cwd=src)
    proj = tmp_path / "proj"
    (proj / "kernels").mkdir(parents=True)
    (proj / "kernels/vector_add.py").write_text(KERNEL)
    git("init", "-q", cwd=proj)
    git("add", "-A", cwd=proj)

    def hook():
        return subprocess.run(["pre-commit", "try-repo", str(src), "cutile-transpile", "--all-files"], cwd=proj,
                              capture_output=True, text=True, env={**__import__("os").environ,
                                                                   "PRE_COMMIT_HOME": str(tmp_path / "pc-home")})

    first = hook()
    assert first.returncode == 1, first.stdout + first.stderr
    assert "regenerated" in first.stdout + first.stderr
    assert (proj / "rust/src/vector_add/kernel.rs").is_file()
    second = hook()
    assert second.returncode == 0, second.stdout + second.stderr
