"""Shared fixtures: the corpus translated once per session; verification runs only where the tools are."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

# Verdicts are not reused across tests: many tests mutate the verifier in-process (monkeypatched), which a
# verdict's key cannot see. tests/test_verify_cache.py turns the cache back on where it is the subject.
os.environ["CUTILE_TRANSPILE_NO_VERDICT_CACHE"] = "1"
# The generated crates' own host code is built at opt-level 0 (verify/toolchain.py crate_opt_level_args): no test
# times it, kernels are compiled by cuTile at run time either way, and each build takes about half the CPU.
os.environ.setdefault("CUTILE_TRANSPILE_CRATE_OPT_LEVEL", "0")

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


def shared_dir(tmp_path_factory, name: str, make) -> Path:
    """A folder made once per test run by `make(folder)`, shared by the pytest-xdist workers (each worker's
    session fixtures would otherwise make their own copy). Its users only read it. Made under a file lock in
    the run's base temporary folder (the parent of each worker's own), so the other workers wait for it."""
    import fcntl
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # <run>/popen-gwN: the run's folder, the same for every worker
    folder, done = base / f"shared-{name}", base / f"shared-{name}.done"
    with open(base / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.is_file():  # not made yet, or a worker failed making it: made again here
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session", autouse=True)
def ir_cache(tmp_path_factory) -> Path:
    """The irdump helper's output cached by content for this run (verify/ircache.py), shared by the
    pytest-xdist workers: the same fixtures are verified by several tests into different OUT folders, and
    each compiled byte-identical Rust entries again. The key is every byte the helper's output depends on
    (the Rust file, the job, the helper binary, the compiler's environment): a mutant or a hand edit is
    another key. A fresh folder per run, as CI's cache directory is. tests/test_ircache.py tests the cache."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, the same for every worker (see shared_dir)
    folder = base / "shared-ir-cache"
    folder.mkdir(exist_ok=True)
    os.environ["CUTILE_TRANSPILE_IR_CACHE"] = str(folder)
    return folder


@pytest.fixture(scope="session")
def corpus_out(tmp_path_factory) -> Path:
    # a copy next to OUT: generated headers hold the source path relative to OUT (../corpus/...),
    # which is then the same wherever the repository lives.
    # One OUT for the whole run, whichever worker asks first (shared_dir): every later build of its crate
    # (verify_output, tests/test_abi.py's built_library, ...) is then cargo's no-op build of the same folder,
    # where a copy per worker made each worker's build clean the other's (verify/toolchain.py crate_build_lock)
    def make(base: Path) -> None:
        src = copy_corpus(base / "corpus")
        result, outputs = run([src / "cutile"], base / "rust")  # the Triton corpus has its own fixture (triton_out)
        assert all(k.status == "translated" for k in result.kernels), \
            [d.text() for k in result.kernels for d in k.diagnostics]
        write_outputs(outputs)
    return shared_dir(tmp_path_factory, "corpus", make) / "rust"


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


# pytest-xdist hands each worker the next test file when it is nearly done with its last (`--dist loadfile
# --no-loadscope-reorder`, pyproject.toml) in collection order; these files, the longest (CI's durations), are
# collected first, so the files that start last are short ones and the two workers of CI end together.
# xdist's own order (the files with the most tests first) started test_features.py or test_triton.py near the
# end (test_abi_fuzz.py was 46th of 49). test_features.py and test_llm_fallback.py build many crates (cargo's
# target-directory lock makes builds wait for each other): test_triton.py, which builds one, runs between them.
# The corpus crate's users that do not change it come before test_mutants.py, which builds a mutated copy
# of the same name (the build lock then cleans the corpus crate: the next build of it is a full one).
LONGEST_FIRST = [
    "tests/test_features.py", "tests/test_triton.py", "tests/test_llm_fallback.py", "tests/test_abi.py",
    "tests/test_ir_equivalence.py", "tests/test_llm_attacks.py", "tests/test_host_layer.py",
    "tests/test_verify_cache.py", "tests/robustness/test_abi_fuzz.py", "tests/test_mutants.py",
    "tests/test_mutation_campaign.py", "tests/robustness/test_output_safety.py", "tests/test_precommit.py",
    "tests/test_readable_rust.py", "tests/robustness/test_property_kernels.py",
    "tests/robustness/test_rust_build_classes.py", "tests/test_interpret.py", "tests/test_positions.py",
    "tests/test_store_order.py",
]


def pytest_collection_modifyitems(session, config, items):
    rank = {f: i for i, f in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable: the rest keep their order
