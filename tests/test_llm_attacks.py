"""The LLM fallback against a hostile endpoint and a hostile OUT (issue 40; ../shared/repros/reliability-attacks):
the API key is never written (N-K1), an answer's constant conditions are checked on both sides (N-LLM1), a
forged cache entry is never replayed unproved (N-F1), and --llm-timeout bounds a request in all (N-T1)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import requires_toolchain
from llm_server import RecordedLLM
from test_llm_fallback import COSH, GOOD, POW, by_statement, cli, codes, envelope, kernel, project, statement

KEY = "sk-live-Q7xZ9mK2pL4vN8rT3wY6hJ1c"
LAUNCHED = POW + '''

def launch(x, y):
    import torch
    ct.launch(torch.cuda.current_stream(), (x.shape[0] // 1024, 1, 1), powk, (x, y, 1024))
'''


@pytest.fixture(autouse=True)
def _pow_and_cosh_refused(monkeypatch):
    """These tests ask the LLM about `ct.pow`, `ct.cosh` and `ct.sinh`, which the rules now translate: left out of
    the rule table here (test-only), so the rules refuse them as a construct without a rule."""
    monkeypatch.setenv("CUTILE_TRANSPILE_TEST_WITHOUT_RULES", "CTR-POW,CTR-COSH,CTR-SINH,CTR-TAN,CTR-ATAN2")


def key_pieces(text: str, n: int = 10) -> list[str]:
    """The pieces of KEY (n characters or more in a row) that `text` holds."""
    return [KEY[i:i + n] for i in range(len(KEY) - n + 1) if KEY[i:i + n] in text]


def run_cli(root: Path, *args: str, env: dict | None = None, timeout: float = 900):
    cmd = [sys.executable, "-m", "transpiler.cli", "src", "-o", "out", *args]
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True, env={**os.environ, **(env or {})},
                          timeout=timeout)


def without_cargo(tmp_path: Path) -> dict:
    """An environment with rustfmt but no cargo: a proof cannot run there."""
    only = tmp_path / "bin"
    only.mkdir(exist_ok=True)
    if not (only / "rustfmt").exists():
        (only / "rustfmt").symlink_to(shutil.which("rustfmt"))
    return {"PATH": f"{only}:/usr/bin:/bin:{Path(sys.executable).parent}", "CARGO": "/nonexistent/cargo"}


# --- N-K1: the API key is never written -----------------------------------------------------------------------

def echoing(req: dict):
    """An endpoint that echoes the Authorization header: in an answer, inside the envelope, and in an error body
    cut so that a 4096-byte read ends inside the key."""
    auth = req["headers"].get("authorization", "")
    user = statement(req)
    if "ct.pow(a, a + a)" in user:
        return 200, RecordedLLM.completion(envelope({"rust": f'"{auth}"', "type": "Tile<E, { [TILE] }>"}))
    if "ct.pow(a, a)" in user:
        return 200, RecordedLLM.completion(f"cannot help ({auth})")
    return 400, (" " * 4070 + auth).encode()


def test_api_key_echoed_by_the_endpoint_is_never_written(tmp_path):
    root = project(tmp_path, {"powk.py": POW, "coshk.py": COSH, "pow2k.py": POW.replace(
        "def powk", "def pow2k").replace("ct.pow(a, a)", "ct.pow(a, a + a)")})
    with RecordedLLM() as srv:
        srv.default(echoing)
        res = run_cli(root, "--no-compile-check", "--report", "report.md", "--llm-fallback", "--llm-base-url",
                      srv.url, "--llm-model", "m", "--llm-api-key-env", "ECHO_KEY", env={"ECHO_KEY": KEY})
        assert len(srv.requests) == 3 and srv.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"
        js = run_cli(root, "--no-compile-check", "--format", "json", "--llm-fallback", "--llm-base-url", srv.url,
                     "--llm-model", "m", "--llm-api-key-env", "ECHO_KEY", "--llm-purge-rejected",
                     env={"ECHO_KEY": KEY})
    assert res.returncode == 1 and "CT130" in res.stderr and "CT131" in res.stderr, res.stderr
    written = {p: p.read_text(errors="replace") for p in (root / "out").rglob("*") if p.is_file()}
    assert any("llm-cache" in p.parts for p in written)  # the rejected answers are cached (scrubbed)
    leaks = {str(p): key_pieces(t) for p, t in written.items() if key_pieces(t)}
    for name, text in (("stdout", res.stdout + js.stdout), ("stderr", res.stderr + js.stderr),
                       ("report", (root / "report.md").read_text())):
        if key_pieces(text):
            leaks[name] = key_pieces(text)
    assert not leaks, leaks
    # the answer that held the key is rejected for it, not used
    doc = json.loads(js.stdout)
    assert "held the API key" in kernel(doc, "powk")["diagnostics"][1]["message"]
    assert "held the API key" in kernel(doc, "pow2k")["diagnostics"][1]["message"]
    assert "HTTP 400" in kernel(doc, "coshk")["diagnostics"][1]["message"]


def test_scrub_removes_the_key_and_pieces_of_it():
    from transpiler.fallback.client import scrub_secret
    assert scrub_secret(f"auth: Bearer {KEY}.", KEY) == "auth: Bearer ***."
    assert scrub_secret(f"cut: {KEY[:12]}", KEY) == "cut: ***"  # a truncation's piece
    assert scrub_secret(f"{KEY[-9:]} and {KEY[5:20]}", KEY) == "*** and ***"
    assert scrub_secret("sk-live- is a common prefix", KEY) == "*** is a common prefix"
    assert scrub_secret("pow(a, a)", KEY) == "pow(a, a)" and scrub_secret("abc", "") == "abc"
    assert scrub_secret("key abc!", "abc") == "key ***!"  # a short key, whole


def test_client_errors_leave_without_the_key(monkeypatch):
    """Whatever fails inside a request (the HTTP layer, a bug) leaves the client as an LLMError whose text is
    scrubbed and which chains nothing (a traceback would print the original)."""
    from transpiler.fallback.client import ChatClient, LLMError, LLMSettings
    client = ChatClient(LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", api_key_env="K", retries=0),
                        env={"K": KEY})
    for exc in (RuntimeError(f"header Authorization: Bearer {KEY}"), LLMError(f"HTTP 400: {KEY[:20]}")):
        def fail(body, headers, exc=exc):
            raise exc
        monkeypatch.setattr(client, "_once", fail)
        with pytest.raises(LLMError) as info:
            client.complete([{"role": "user", "content": "hi"}])
        assert not key_pieces(str(info.value) + info.value.reason, 8), info.value
        assert info.value.__cause__ is None and info.value.__suppress_context__
    client.close()


# --- N-LLM1: an answer's constant conditions are checked on both sides -----------------------------------------

def test_constant_conditions_of_an_answer_and_their_probes():
    from transpiler.fallback.conditions import Unprobable, answer_probes
    k = {"params": [{"name": "TILE", "kind": "const", "const_type": "int"},
                    {"name": "EPS", "kind": "const", "const_type": "float"}],
         "entries": [{"name": "k", "generics": ["E", "TILE", "EPS"], "predicates": [], "derived": {}}],
         "specializations": [{"TILE": 1024, "EPS": 1e-6}]}
    probes = answer_probes(k, ["if TILE >= 512 { pow(a, a) } else { a }"])
    assert [p["label"] for p in probes] == ["`TILE >= 512` false"]
    assert all(c["TILE"] < 512 for c in probes[0]["candidates"]) and probes[0]["candidates"][0] == {
        "TILE": 256, "EPS": 1e-6}  # a power of two first: a tile size must be one
    # through a `let` of the answer; each side that no specialization takes
    (p,) = answer_probes(k, ["{ let t: i32 = TILE * 2; if t < 4096 { a } else { pow(a, a) } }"])
    assert p["label"] == "`t < 4096` false" and all(c["TILE"] * 2 >= 4096 for c in p["candidates"])
    assert len(answer_probes(k, ["if TILE != 1024 && 64 < TILE { a } else { b }"])) == 2
    # comparisons that read a runtime value are the Tile IR's: nothing to probe
    assert answer_probes(k, ["pow(a, a)"]) == [] and answer_probes(k, ["if x > TILE { a } else { b }"]) == []
    for rust, why in [("if TILE >= 0 { a } else { b }", "true at every specialization"),
                      ("if max(TILE, 4) > 3 { a } else { b }", "`max` in it is not evaluated"),
                      ("{ let mut t: i32 = TILE; if t > 3 { a } else { b } }", "let mut"),
                      ("if EPS > 0 { a } else { b }", "float constant EPS")]:
        with pytest.raises(Unprobable, match=why):
            answer_probes(k, [rust])


WRONG_BELOW_512 = {"rust": "if TILE >= 512 { pow(a, a) } else { a }", "type": "Tile<E, { [TILE] }>"}


@requires_toolchain
def test_answer_wrong_at_an_untested_tile_is_rejected(tmp_path):
    root = project(tmp_path, {"powk.py": LAUNCHED})
    with RecordedLLM() as srv:
        srv.answer(envelope(WRONG_BELOW_512))
        res, doc = cli(root, srv)
        k = kernel(doc, "powk")
        assert res.returncode == 1 and k["status"] == "unsupported" and codes(k)[:2] == ["CT101", "CT130"], k
        assert "Tile IR different" in k["diagnostics"][1]["message"]
        assert not (root / "out/src/powk").exists()
        # the same condition with both arms right is proved (the probe at TILE < 512 is accepted)
        srv.answer(envelope({**WRONG_BELOW_512, "rust": "if TILE >= 512 { pow(a, a) } else { pow(a, a) }"}))
        res, doc = cli(root, srv, "--llm-purge-rejected")
        assert res.returncode == 0 and kernel(doc, "powk")["status"] == "fallback", res.stderr


def test_answer_with_a_condition_that_cannot_take_both_sides_is_rejected(tmp_path):
    root = project(tmp_path, {"powk.py": LAUNCHED})
    with RecordedLLM() as srv:
        srv.answer(envelope({**WRONG_BELOW_512, "rust": "if TILE >= 0 { pow(a, a) } else { a }"}))
        res, doc = cli(root, srv, "--no-compile-check")
    k = kernel(doc, "powk")
    assert res.returncode == 1 and codes(k)[:2] == ["CT101", "CT130"], k
    assert "`TILE >= 0` is true at every specialization" in k["diagnostics"][1]["message"]


# --- N-F1: a forged cache entry is never replayed unproved ------------------------------------------------------

FORGE = '''
import sys
import transpiler.fallback.prove as P
def accept_all(session, result, log=None):
    for key, (digest, hashes) in dict(session.unproved).items():
        for h in hashes:
            session.accept(h, digest)
    session.unproved.clear()
P.prove = accept_all
from transpiler import cli
sys.argv = ["cutile-transpile", "src", "-o", "out", "--no-compile-check", "--llm-fallback", "--llm-base-url", sys.argv[1],
            "--llm-model", "m"]
cli.main()
'''


def forge(root: Path, tmp_path: Path) -> str:
    """OUT with a cache entry marked accepted for a wrong answer (`a` for `ct.pow(a, a)`), made by another user
    (another cache directory) whose tool accepts every answer unproved; the hash of the entry."""
    with RecordedLLM() as srv:
        srv.answer(envelope({"rust": "a", "type": "Tile<E, { [TILE] }>"}))
        subprocess.run([sys.executable, "-c", FORGE, srv.url], cwd=root, capture_output=True, text=True,
                       env={**os.environ, "CUTILE_TRANSPILE_CACHE": str(tmp_path / "forger-cache")}, timeout=600)
    (entry,) = (root / "out/llm-cache").glob("*.json")
    assert json.loads(entry.read_text())["verdict"] == "accepted"
    assert "= a;" in (root / "out/src/powk/kernel.rs").read_text()
    return entry.stem


def test_forged_accepted_entry_is_not_replayed_where_it_cannot_be_proved(tmp_path):
    root = project(tmp_path, {"powk.py": POW})
    forge(root, tmp_path)
    for args in ((), ("--check",)):  # an ordinary run (the pre-commit hook's) and CI's --check
        res = run_cli(root, "--no-compile-check", "--format", "json", *args, env=without_cargo(tmp_path))
        k = kernel(json.loads(res.stdout), "powk")
        assert res.returncode == 1 and k["status"] == "unsupported" and "CT131" in codes(k), (args, k)
        assert any("could not be proved" in d["message"] for d in k["diagnostics"] if d["code"] == "CT131"), k


@requires_toolchain
def test_forged_accepted_entry_is_proved_again_and_rejected(tmp_path):
    root = project(tmp_path, {"powk.py": POW})
    h = forge(root, tmp_path)
    res = run_cli(root, "--format", "json", "--check")
    k = kernel(json.loads(res.stdout), "powk")
    assert res.returncode == 1 and k["status"] == "unsupported" and "CT130" in codes(k), k
    assert any("Tile IR different" in d["message"] for d in k["diagnostics"] if d["code"] == "CT130"), k
    res = run_cli(root, "--format", "json")
    k = kernel(json.loads(res.stdout), "powk")
    assert res.returncode == 1 and codes(k)[:2] == ["CT101", "CT130"], k
    assert json.loads((root / f"out/llm-cache/{h}.json").read_text())["verdict"] == "rejected"


def test_proof_records_vouch_for_the_exact_answer_only(tmp_path, monkeypatch):
    from transpiler.fallback.records import proved_here, record_id, remember
    monkeypatch.setenv("CUTILE_TRANSPILE_CACHE", str(tmp_path / "cache"))
    entry = {"hash": "h1", "model": "m", "verdict": "accepted", "verified": "d1",
             "answer": {"rust": "pow(a, a)", "type": "Tile<E, { [TILE] }>"}}
    assert not proved_here(entry)
    remember(entry)
    assert proved_here(entry) and (tmp_path / "cache/llm-proofs").stat().st_mode & 0o777 == 0o700
    for change in ({"verified": "d2"}, {"answer": {"rust": "a", "type": "Tile<E, { [TILE] }>"}},
                   {"hash": "h2"}, {"verdict": "rejected"}):
        assert not proved_here({**entry, **change}), change
    record = tmp_path / "cache/llm-proofs" / record_id(entry)
    record.chmod(0o666)  # a record others may write is no evidence
    assert not proved_here(entry)


# --- N-T1: --llm-timeout bounds a request in all ---------------------------------------------------------------

class DrippingServer:
    """Answers every connection with HTTP headers sent one byte per `interval` seconds (never a whole answer
    within any sane timeout), each read well inside a per-read timeout."""

    def __init__(self, interval: float = 0.25, nbytes: int = 400):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.interval, self.nbytes, self.stop = interval, nbytes, threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn):
        with conn:
            conn.recv(65536)
            for b in b"HTTP/1.0 200 OK\r\nX-Slow: " + b"a" * self.nbytes + b"\r\n\r\n":
                if self.stop.wait(self.interval):
                    return
                try:
                    conn.send(bytes([b]))
                except OSError:
                    return

    def close(self):
        self.stop.set()
        self.sock.close()


def test_timeout_is_a_total_deadline_while_headers_drip():
    from transpiler.fallback.client import ChatClient, LLMError, LLMSettings
    srv = DrippingServer()
    try:
        client = ChatClient(LLMSettings(base_url=srv.url, model="m", timeout_s=1.5, retries=0))
        t0 = time.monotonic()
        with pytest.raises(LLMError, match="timed out after 1.5 s"):
            client.complete([{"role": "user", "content": "hi"}])
        assert time.monotonic() - t0 < 1.5 + 1.0
        client.close()
    finally:
        srv.close()


def test_llm_timeout_flag_bounds_the_run_while_headers_drip(tmp_path):
    root = project(tmp_path, {"powk.py": POW})
    (root / "pyproject.toml").write_text("[tool.cutile-transpile.llm]\nretries = 0\n")
    srv = DrippingServer(interval=0.5)  # 200 s of headers
    try:
        quick = run_cli(root, "--no-compile-check", "--format", "json")  # the same run without the fallback
        t0 = time.monotonic()
        res = run_cli(root, "--no-compile-check", "--format", "json", "--llm-fallback", "--llm-base-url", srv.url,
                      "--llm-model", "m", "--llm-timeout", "3", timeout=300)
        took = time.monotonic() - t0
    finally:
        srv.close()
    k = kernel(json.loads(res.stdout), "powk")
    assert codes(k) == ["CT101", "CT131"] and "timed out after 3 s" in k["diagnostics"][1]["message"], k
    assert quick.returncode == 1 and took < 3 + 15, took  # the run itself takes a few seconds
