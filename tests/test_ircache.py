"""The content-keyed cache of the irdump helper's output (verify/ircache.py): every keyed input changes the key,
a corrupt entry is a miss, concurrent writers leave one whole entry, and the pool (verify/irdump.py IrdumpPool)
answers a cached job without the helper while the helper reads the bytes that were hashed."""

from __future__ import annotations

import json
import multiprocessing
import sys
import threading
from pathlib import Path

import pytest

from transpiler.verify import ircache
from transpiler.verify.irdump import IrdumpPool, run_irdump

JOB = {"file": "/x/src/scale/kernel.rs", "module": "scale", "entry": "scale_kernel", "generics": ["f32", "128"],
       "strides": [["x", [-1, 1]]], "target": "sm_90", "out": "/tmp/a.rs.tileirbc"}
SRC = b"pub mod scale { fn scale_kernel() {} }\n"
ENV = {"CUTILE_JIT_OPT_LEVEL": "3"}


def key(binary="b" * 64, source=SRC, job=JOB, env=ENV):
    import hashlib
    return ircache.job_digest(binary, hashlib.sha256(source).hexdigest(), job, env)


def test_every_keyed_input_changes_the_key():
    base = key()
    assert key() == base  # deterministic
    assert key(source=SRC.replace(b"{}", b"{ }")) != base  # one byte of the Rust file
    assert key(source=SRC + b"\n") != base
    assert key(binary="c" + "b" * 63) != base  # the helper binary
    assert key(env={"CUTILE_JIT_OPT_LEVEL": "2"}) != base  # the compiler's environment
    assert key(env={}) != base
    for field, value in (("module", "shift"), ("entry", "other"), ("generics", ["f16", "128"]),
                         ("generics", ["f32", "64"]), ("strides", [["x", [-1, -1]]]), ("target", "sm_100"),
                         ("new_field", 1)):
        assert key(job={**JOB, field: value}) != base, field
    # where the bytecode goes and where the file lies are not inputs (the file's bytes are)
    assert key(job={**JOB, "out": "/elsewhere.bc", "file": "/y/kernel.rs"}) == base


def test_the_compilers_environment_is_read_and_this_tools_is_not():
    env = ircache.compiler_env({"CUTILE_JIT_DEBUG": "line", "CUTILE_BYTECODE_VERSION": "13.4", "TILE_IR_DUMP": "1",
                                "CUDA_TOOLKIT_PATH": "/cuda", "CUTILE_TRANSPILE_IR_CACHE": "/c", "HOME": "/root",
                                "PYTEST_CURRENT_TEST": "t"})
    assert env == {"CUDA_TOOLKIT_PATH": "/cuda", "CUTILE_BYTECODE_VERSION": "13.4", "CUTILE_JIT_DEBUG": "line",
                   "TILE_IR_DUMP": "1"}


def test_jobs_asking_for_more_than_bytecode_are_not_cached():
    assert ircache.cacheable(JOB)
    assert not ircache.cacheable({**JOB, "ir_text_out": "/tmp/a.mlir"})
    assert not ircache.cacheable({"out": "1.bc"})


def test_a_stored_entry_loads_and_a_corrupt_one_is_a_miss(tmp_path):
    k = key()
    assert ircache.load(tmp_path, k) is None
    ircache.store(tmp_path, k, b"\x7fTileIR payload\n\x00\x01")
    assert ircache.load(tmp_path, k) == b"\x7fTileIR payload\n\x00\x01"
    entry = tmp_path / k[:2] / f"{k}.bc"
    good = entry.read_bytes()
    corruptions = [good[:-1], good[:-1] + bytes([good[-1] ^ 1]), good + b"x", good[:len(ircache.MAGIC) + 10], b"",
                   good.replace(b"cutile-transpile-ir-cache 1", b"cutile-transpile-ir-cache 2"),
                   good[:len(ircache.MAGIC) - 1] + b"0" * 64 + good[len(ircache.MAGIC) - 1 + 64:]]
    for bad in corruptions:
        entry.write_bytes(bad)
        assert ircache.load(tmp_path, k) is None, bad
    assert ircache.load(tmp_path, key(source=b"other")) is None


def _store_many(folder: str, k: str, payload: bytes, n: int) -> None:
    for _ in range(n):
        ircache.store(Path(folder), k, payload)


def test_concurrent_writers_leave_one_whole_entry(tmp_path):
    k = key()
    payload = bytes(range(256)) * 4096  # 1 MiB: a torn write would show
    threads = [threading.Thread(target=_store_many, args=(str(tmp_path), k, payload, 20)) for _ in range(4)]
    procs = [multiprocessing.get_context("fork").Process(target=_store_many, args=(str(tmp_path), k, payload, 20))
             for _ in range(3)]
    for t in [*threads, *procs]:
        t.start()
    for _ in range(50):  # readers meanwhile see the whole entry or none
        got = ircache.load(tmp_path, k)
        assert got is None or got == payload
    for t in threads:
        t.join()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    assert ircache.load(tmp_path, k) == payload
    assert [p.name for p in (tmp_path / k[:2]).iterdir()] == [f"{k}.bc"]  # no temporary file left


# A stand-in helper: the "bytecode" of a job is the bytes of the file it read and the entry; every job it
# compiles is logged; a job whose entry is "bad" fails naming the file it read.
FAKE = '''#!{python}
import json, sys
for line in sys.stdin:
    job = json.loads(line)
    with open({log!r}, "a") as log:
        log.write(job["entry"] + "\\n")
    if job["entry"] == "bad":
        print(json.dumps({{"out": job["out"], "ok": False, "error": job["file"] + ": no entry `bad`"}}), flush=True)
        continue
    data = open(job["file"], "rb").read() + b"|" + job["entry"].encode()
    open(job["out"], "wb").write(data)
    print(json.dumps({{"out": job["out"], "ok": True}}), flush=True)
'''


@pytest.fixture()
def fake(tmp_path, monkeypatch):
    exe, log = tmp_path / "irdump", tmp_path / "calls.log"
    exe.write_text(FAKE.format(python=sys.executable, log=str(log)))
    exe.chmod(0o755)
    log.write_text("")
    monkeypatch.setenv(ircache.ENV, str(tmp_path / "cache"))
    return exe, log


def test_the_pool_answers_cached_jobs_and_recompiles_changed_ones(tmp_path, fake):
    exe, log = fake
    rs = tmp_path / "kernel.rs"
    rs.write_bytes(SRC)
    jobs = lambda tag: [{**JOB, "file": str(rs), "entry": e, "out": str(tmp_path / f"{tag}{e}.bc")}  # noqa: E731
                        for e in ("a", "b", "bad")]
    first, _ = run_irdump(exe, jobs("1"))
    assert [json.loads(r)["ok"] for r in first.splitlines()] == [True, True, False]
    bad = json.loads(first.splitlines()[2])["error"]
    assert bad == f"{rs}: no entry `bad`"  # the caller's file, not the snapshot the helper read
    assert sorted(log.read_text().split()) == ["a", "b", "bad"]
    assert (tmp_path / "1a.bc").read_bytes() == SRC + b"|a"

    log.write_text("")
    seen = []
    pool = IrdumpPool(exe, lambda i, n: seen.append((i, n)), workers=1)
    results = [f.result(timeout=60) for f in [pool.submit(j) for j in jobs("2")]]
    pool.close()
    assert [r["ok"] for r in results] == [True, True, False]
    assert log.read_text().split() == ["bad"]  # only the failed job is compiled again
    assert (tmp_path / "2a.bc").read_bytes() == SRC + b"|a" and (tmp_path / "2b.bc").read_bytes() == SRC + b"|b"
    assert sorted(seen)[-1] == (3, 3)  # cached jobs are counted as done

    log.write_text("")
    rs.write_bytes(SRC.replace(b"{}", b"{ }"))  # a hand edit of one byte: compiled again, from the new bytes
    run_irdump(exe, jobs("3"))
    assert sorted(log.read_text().split()) == ["a", "b", "bad"]
    assert (tmp_path / "3a.bc").read_bytes() == SRC.replace(b"{}", b"{ }") + b"|a"

    log.write_text("")
    exe.write_text(exe.read_text() + "\n# another helper\n")  # another helper binary: compiled again
    run_irdump(exe, jobs("4"))
    assert sorted(log.read_text().split()) == ["a", "b", "bad"]


def test_a_corrupt_entry_is_compiled_again(tmp_path, fake):
    exe, log = fake
    rs = tmp_path / "kernel.rs"
    rs.write_bytes(SRC)
    job = {**JOB, "file": str(rs), "entry": "a", "out": str(tmp_path / "a.bc")}
    run_irdump(exe, [job])
    [entry] = (tmp_path / "cache").rglob("*.bc")
    entry.write_bytes(entry.read_bytes()[:-1] + b"X")
    log.write_text("")
    run_irdump(exe, [{**job, "out": str(tmp_path / "b.bc")}])
    assert log.read_text().split() == ["a"]
    assert (tmp_path / "b.bc").read_bytes() == SRC + b"|a"


def test_without_the_variable_nothing_is_cached(tmp_path, fake, monkeypatch):
    exe, log = fake
    monkeypatch.delenv(ircache.ENV)
    rs = tmp_path / "kernel.rs"
    rs.write_bytes(SRC)
    job = {**JOB, "file": str(rs), "entry": "a", "out": str(tmp_path / "a.bc")}
    run_irdump(exe, [job])
    run_irdump(exe, [job])
    assert log.read_text().split() == ["a", "a"]
    assert not (tmp_path / "cache").exists()


def test_the_cover_search_finds_what_trying_every_combination_in_order_finds(monkeypatch):
    """verify/specs.py `_first_holding` (cover_variants' search, which drops the values a predicate of one
    constant rules out before the product) against the plain search it replaced: the same first combination,
    the same MAX_COVER_TRIES cut, for predicates of one or several constants, failing ones and nested code."""
    import itertools
    import random

    from transpiler.verify import specs

    def plain(preds, base, names, per_name, limit):
        for combo in itertools.islice(itertools.product(*per_name), limit):
            values = {**base, **dict(zip(names, combo))}
            if specs.predicates_hold(preds, values):
                return values
        return None

    pool = ["A", "not (A)", "A == 3", "A > B", "A * B == 16", "A % 2 == 0", "B < 0", "C == 1 and A", "not (C)",
            "Z == 1", "A +", "float(A) > 1.5", "B != 2", "(lambda: A)() == 4", "[x for x in (B,)] == [8]", "C",
            "A // 0 == 1", "True", "A == A"]
    rng = random.Random(7)
    for _ in range(1500):
        preds = rng.sample(pool, rng.randint(1, 4))
        names = sorted(rng.sample(["A", "B", "C"], rng.randint(1, 3)))
        base = {"A": 64, "B": 1, "C": 0, "D": 5}
        per_name = [list(dict.fromkeys([base[n]] + rng.sample([-1, 0, 1, 2, 3, 4, 8, 16, 64], rng.randint(1, 6))))
                    for n in names]
        limit = rng.choice([1, 3, 10, 50, 10_000])
        monkeypatch.setattr(specs, "MAX_COVER_TRIES", limit)
        assert specs._first_holding(preds, base, names, per_name) == plain(preds, base, names, per_name, limit), \
            (preds, names, per_name, limit)


# cuTile Python's side (verify/pycache.py): the export is asked once per key; every input of the key changes it

PKG_INIT = "from .helpers import SCALE\n"
PKG_KERNEL = '''import cuda.tile as ct
from .helpers import SCALE


@ct.kernel
def scale(x, y, TILE: ct.Constant[int]):
    ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(TILE,)) * SCALE)


def factory(step):
    @ct.kernel(num_ctas=2)
    def shifted(x, y, TILE: ct.Constant[int]):
        ct.store(y, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(TILE,)) + step)
    return shifted
'''


def _package(root: Path, scale: str = "2") -> Path:
    pkg = root / "pkg"
    (pkg / "sub").mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(f"SCALE = {scale}\n")
    (pkg / "sub" / "kernels.py").write_text(PKG_KERNEL.replace("from .helpers", "from ..helpers"))
    return pkg / "sub" / "kernels.py"


def _fresh_import(path: Path):
    for name in [n for n in sys.modules if n == "pkg" or n.startswith("pkg.")]:
        del sys.modules[name]
    from transpiler.verify.run import _import_source
    return _import_source(path)


def test_python_exports_are_asked_once_per_key_and_every_input_changes_the_key(tmp_path, monkeypatch):
    pytest.importorskip("cuda.tile")
    from transpiler.verify import pycache
    monkeypatch.setenv("CUTILE_TRANSPILE_IR_CACHE", str(tmp_path / "cache"))
    src = _package(tmp_path / "a")
    mod = _fresh_import(src)
    params = [{"name": "x", "kind": "array", "dtype": "f32", "rank": 1}]
    calls = []

    def export(kobj, ps, spec, elements, out):
        calls.append(spec)
        out.write_bytes(f"bytecode of {spec}".encode())
    out = tmp_path / "x.py.tileirbc"
    for _ in range(2):
        pycache.cached_export(export, mod.scale, params, {"TILE": 64}, {"E": "f32"}, out)
        assert out.read_bytes() == b"bytecode of {'TILE': 64}"
    assert calls == [{"TILE": 64}]  # the second is the cache's answer
    base = pycache.export_key(mod.scale, params, {"TILE": 64}, {"E": "f32"})
    assert base == pycache.export_key(mod.scale, params, {"TILE": 64}, {"E": "f32"})
    assert pycache.export_key(mod.scale, params, {"TILE": 128}, {"E": "f32"}) != base
    assert pycache.export_key(mod.scale, params, {"TILE": 64}, {"E": "f16"}) != base
    assert pycache.export_key(mod.scale, [{**params[0], "rank": 2}], {"TILE": 64}, {"E": "f32"}) != base
    monkeypatch.setenv("CUDA_TILE_TEST_KNOB", "1")
    assert pycache.export_key(mod.scale, params, {"TILE": 64}, {"E": "f32"}) != base
    monkeypatch.delenv("CUDA_TILE_TEST_KNOB")
    # a helper module edited elsewhere in the package (a constant the kernel reads): another key, asked again
    (tmp_path / "a" / "pkg" / "helpers.py").write_text("SCALE = 3\n")
    assert pycache.export_key(mod.scale, params, {"TILE": 64}, {"E": "f32"}) != base
    # a new module anywhere in the package too
    (tmp_path / "a" / "pkg" / "helpers.py").write_text("SCALE = 2\n")
    assert pycache.export_key(mod.scale, params, {"TILE": 64}, {"E": "f32"}) == base
    (tmp_path / "a" / "pkg" / "other.py").write_text("")
    assert pycache.export_key(mod.scale, params, {"TILE": 64}, {"E": "f32"}) != base
    # a factory's kernel: its closure's values and its compiler options are in the key
    one, two = mod.factory(1), mod.factory(2)
    assert pycache.export_key(one, params, {"TILE": 64}, {}) != pycache.export_key(two, params, {"TILE": 64}, {})
    assert pycache.export_key(one, params, {"TILE": 64}, {}) == pycache.export_key(mod.factory(1), params,
                                                                                   {"TILE": 64}, {})
    import cuda.tile as ct
    retuned = ct.kernel(one._pyfunc, num_ctas=4)
    assert pycache.export_key(retuned, params, {"TILE": 64}, {}) != pycache.export_key(one, params, {"TILE": 64}, {})
    # a failed export stores nothing: asked again
    def failing(*a):
        calls.append("failed")
        raise RuntimeError("cuTile Python refused")
    for _ in range(2):
        with pytest.raises(RuntimeError):
            pycache.cached_export(failing, mod.scale, params, {"TILE": 32}, {"E": "f32"}, out)
    assert calls[-2:] == ["failed", "failed"]
    # the cache off (no folder named): every export is asked
    monkeypatch.delenv("CUTILE_TRANSPILE_IR_CACHE")
    n = len(calls)
    pycache.cached_export(export, mod.scale, params, {"TILE": 64}, {"E": "f32"}, out)
    assert len(calls) == n + 1


def test_a_lone_modules_key_covers_its_folders_modules(tmp_path, monkeypatch):
    pytest.importorskip("cuda.tile")
    from transpiler.verify import pycache
    from transpiler.verify.run import _import_source
    (tmp_path / "lone.py").write_text(PKG_KERNEL.replace("from .helpers import SCALE", "SCALE = 2"))
    mod = _import_source(tmp_path / "lone.py")
    params = [{"name": "x", "kind": "array", "dtype": "f32", "rank": 1}]
    base = pycache.export_key(mod.scale, params, {"TILE": 64}, {})
    (tmp_path / "sibling.py").write_text("X = 1\n")
    assert pycache.export_key(mod.scale, params, {"TILE": 64}, {}) != base
    assert pycache.export_key(object(), params, {"TILE": 64}, {}) is None  # not a kernel: never cached
    made: dict = {}
    exec(compile(PKG_KERNEL.replace("from .helpers import SCALE", "SCALE = 2"), "<generated>", "exec"), made)
    assert pycache.export_key(made["scale"], params, {"TILE": 64}, {}) is None  # no file holds its code


def test_the_crate_opt_level_names_the_generated_package_only(tmp_path):
    """CUTILE_TRANSPILE_CRATE_OPT_LEVEL (the suite sets 0): a `--config` for the generated package by name (the
    dependencies keep their build), nothing when unset, an error naming the variable for any other value."""
    from transpiler.verify.toolchain import OPT_LEVEL_ENV, ToolchainError, crate_opt_level_args
    manifest = tmp_path / "Cargo.toml"
    manifest.write_text('[package]\nname = "my-kernels"\nversion = "0.1.0"\n')
    assert crate_opt_level_args(manifest, {}) == []
    assert crate_opt_level_args(manifest, {OPT_LEVEL_ENV: ""}) == []
    assert crate_opt_level_args(manifest, {OPT_LEVEL_ENV: "0"}) == [
        "--config", "profile.release.package.my-kernels.opt-level=0"]
    assert crate_opt_level_args(manifest, {OPT_LEVEL_ENV: "s"})[-1].endswith('opt-level="s"')
    for bad in ("4", "fast", "0 --offline", "1\n"):
        with pytest.raises(ToolchainError, match=OPT_LEVEL_ENV):
            crate_opt_level_args(manifest, {OPT_LEVEL_ENV: bad})
    manifest.write_text('[package]\nname = "x.y"\n')  # never spliced into the key unchecked
    with pytest.raises(ToolchainError, match="package name"):
        crate_opt_level_args(manifest, {OPT_LEVEL_ENV: "0"})


def test_cargo_build_passes_the_opt_level_for_a_generated_crate_only(tmp_path, monkeypatch):
    """The variable reaches cargo's command line for a generated crate, never for the irdump helper."""
    import subprocess as sp
    from transpiler.verify import toolchain
    manifest = tmp_path / "Cargo.toml"
    manifest.write_text('[package]\nname = "kern"\nversion = "0.1.0"\n')
    seen = []
    monkeypatch.setattr(toolchain.subprocess, "run", lambda cmd, **kw: seen.append(cmd) or sp.CompletedProcess(cmd, 0, "", ""))
    env = {toolchain.OPT_LEVEL_ENV: "0"}
    toolchain.cargo_build(manifest, env)
    toolchain.cargo_build(manifest, env, generated=False)
    assert "profile.release.package.kern.opt-level=0" in seen[0]
    assert not any("opt-level" in a for a in seen[1])
