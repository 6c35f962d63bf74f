"""The irdump helpers' pool (verify/irdump.py IrdumpPool) with a stand-in helper: every job is answered, in its
own future, a helper that dies answers its job with its stderr and the next job gets a fresh helper."""

from __future__ import annotations

import json
import sys

from transpiler.verify.irdump import IrdumpPool, run_irdump

FAKE = '''#!{python}
import json, sys
for line in sys.stdin:
    job = json.loads(line)
    if job.get("crash"):
        sys.stderr.write("thread 'main' has overflowed its stack\\n")
        sys.exit(134)
    ok = not job.get("fail")
    print(json.dumps({{"out": job["out"], "ok": ok, **({{}} if ok else {{"error": "no module"}})}}), flush=True)
'''


def _fake(tmp_path):
    exe = tmp_path / "irdump"
    exe.write_text(FAKE.format(python=sys.executable))
    exe.chmod(0o755)
    return exe


def test_every_job_is_answered_and_a_crash_costs_only_its_job(tmp_path):
    seen = []
    pool = IrdumpPool(_fake(tmp_path), lambda i, n: seen.append(i), workers=2)
    jobs = [{"out": f"{i}.bc", "crash": i == 3, "fail": i == 5} for i in range(8)]
    futures = [pool.submit(j) for j in jobs]
    results = [f.result(timeout=60) for f in futures]
    stderr = pool.close()
    assert [r["out"] for r in results] == [j["out"] for j in jobs]
    assert [r["ok"] for r in results] == [i not in (3, 5) for i in range(8)]
    assert "overflowed its stack" in results[3]["error"] and results[5]["error"] == "no module"
    assert "overflowed its stack" in stderr
    assert sorted(seen) == list(range(1, 9))


def test_run_irdump_gives_the_lines_in_job_order(tmp_path):
    jobs = [{"out": f"{i}.bc"} for i in range(5)]
    stdout, _ = run_irdump(_fake(tmp_path), jobs)
    assert [json.loads(line)["out"] for line in stdout.splitlines()] == [j["out"] for j in jobs]


def test_a_cancelled_pool_stops(tmp_path):
    pool = IrdumpPool(_fake(tmp_path), workers=1)
    futures = [pool.submit({"out": f"{i}.bc"}) for i in range(50)]
    pool.close(cancel=True)
    assert all(f.done() for f in futures)
