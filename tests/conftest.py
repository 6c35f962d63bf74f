"""Shared fixtures: the corpus translated once per session; verification runs only where the tools are."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

# Verdicts are not reused across tests: many tests mutate the verifier in-process (monkeypatched), which a
# verdict's key cannot see. tests/test_verify_cache.py turns the cache back on where it is the subject.
os.environ["CUTILE_TRANSPILE_NO_VERDICT_CACHE"] = "1"

from transpiler.pipeline import run, write_outputs
from transpiler.verify.toolchain import ToolchainError, cargo_env, tileirdisasm

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"


def toolchain_missing() -> str | None:
    try:
        cargo_env()
        tileirdisasm()
        import cuda.tile  # noqa: F401
    except (ToolchainError, ImportError) as e:
        return str(e)
    return None


requires_toolchain = pytest.mark.skipif(toolchain_missing() is not None and not __import__("os").environ.get("CI"),
                                        reason=f"verification toolchain missing: {toolchain_missing()}")


# pytest-xdist (`-n auto --dist loadfile`, pyproject.toml): each test file runs on one worker, so its module
# fixtures (a verified mutant copy, a crate) are built once; tests sharing a costly session fixture live in one
# file for the same reason (the verified Triton corpus: tests/test_triton.py)


@pytest.fixture(scope="session")
def corpus_out(tmp_path_factory) -> Path:
    # a copy next to OUT: generated headers hold the source path relative to OUT (../corpus/...),
    # which is then the same wherever the repository lives
    base = tmp_path_factory.mktemp("corpus")
    src = copy_corpus(base / "corpus")
    out = base / "rust"
    result, outputs = run([src / "cutile"], out)  # the Triton corpus has its own fixture (triton_out)
    assert all(k.status == "translated" for k in result.kernels), [d.text() for k in result.kernels for d in k.diagnostics]
    write_outputs(outputs)
    return out


@pytest.fixture(scope="session")
def corpus_verdicts(corpus_out):
    from transpiler.verify.run import verify_output
    return verify_output(corpus_out)


# Triton kernels modelled on workloads that use constructs not supported yet (tests/fixtures/triton_not_yet):
# the code of the diagnostic each gets (tests/test_triton.py)
TRITON_NOT_YET: dict[str, str] = {}  # (dropout_fwd_kernel moved to the corpus once tl.rand was supported)


@pytest.fixture(scope="session")
def triton_out(tmp_path_factory):
    """The Triton corpus translated once: (OUT, run result)."""
    base = tmp_path_factory.mktemp("triton")
    src = copy_corpus(base / "corpus")
    out = base / "rust"
    result, outputs = run([src / "triton"], out)
    write_outputs(outputs)
    return out, result


@pytest.fixture(scope="session")
def triton_verdicts(triton_out):
    """The translated Triton corpus verified once (built, compiled to Tile IR, interpreted on its reference
    cases): verify_output's verdicts, shared by the tests that read them."""
    from transpiler.verify.run import verify_output
    out, _ = triton_out
    return verify_output(out)


@pytest.fixture()
def workdir(tmp_path) -> Path:
    return tmp_path


def copy_corpus(dst: Path) -> Path:
    shutil.copytree(CORPUS, dst)
    return dst


# The compile check (cargo check of every generated crate) is on by default for users; tests turn it on
# where they test it, so the suite does not pay a cargo check per CLI call.
__import__("os").environ.setdefault("CUTILE_TRANSPILE_COMPILE_CHECK", "0")
