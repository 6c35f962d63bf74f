"""The irdump helpers: processes of the crate's compile-only binary that turn a Rust entry at given generics
into Tile IR bytecode, fed from one queue (`IrdumpPool`), with the bytecode cache of verify/ircache.py."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from .toolchain import usable_cores


class IrdumpPool:
    """irdump helpers, one per usable core, each fed the next job of a shared queue as soon as it has
    answered the last one (a job costs from a tenth of a second to seconds: no share of the jobs is fixed
    in advance). Jobs are compiled while the caller plans more of them (exports cuTile Python's side);
    `submit` hands back a future of the job's result line ({"out", "ok", "error"}). A helper that dies
    (a crash) answers its job with its stderr and is started again for the next one.
    `progress(done, total)` hears of each job done. Where CUTILE_TRANSPILE_IR_CACHE names a folder, a job
    whose bytecode is cached there (verify/ircache.py: keyed by the file's bytes, the job, the helper binary
    and the compiler's environment) is answered at once, and the helpers read snapshots of the hashed files."""

    def __init__(self, exe: Path, progress=None, workers: int | None = None):
        import queue
        import threading
        from . import ircache
        self.exe, self.progress = exe, progress
        self.cache = ircache.cache_folder()
        self.snapshots = None
        if self.cache is not None:
            try:
                self.binary = ircache.binary_digest(exe)
                self.snapshots = ircache.Snapshots(Path(tempfile.mkdtemp(prefix="cutile-irdump-src-")))
            except OSError:
                self.cache = None
        self.queue: queue.Queue = queue.Queue()
        self.lock = threading.Lock()
        self.done = self.total = 0
        self.stderr: list[str] = []
        self.threads = [threading.Thread(target=self._work, daemon=True)
                        for _ in range(max(1, workers or usable_cores()))]
        self.procs: set = set()
        self.closed = False
        for t in self.threads:
            t.start()

    def submit(self, job: dict):
        import concurrent.futures
        fut: concurrent.futures.Future = concurrent.futures.Future()
        with self.lock:
            self.total += 1
        cached = self._cached(job) if self.cache is not None else None
        if cached is not None and cached[0] is None:  # answered from the cache
            self._answered(fut, {"out": job["out"], "ok": True})
            return fut
        self.queue.put((job, fut, cached))
        return fut

    def _cached(self, job: dict):
        """(None, None) where the cache answered `job` (its bytecode written to its `out`), (key, snapshot
        job) where the helper must compile it, or None where the job is not cached (ircache.cacheable)."""
        from . import ircache
        if not ircache.cacheable(job):
            return None
        try:
            snap = self.snapshots.take(job["file"])
        except OSError:
            return None
        if snap is None:
            return None
        digest, path = snap
        key = ircache.job_digest(self.binary, digest, job, ircache.compiler_env())
        payload = ircache.load(self.cache, key)
        if payload is not None:
            try:
                Path(job["out"]).write_bytes(payload)
                return None, None
            except OSError:
                pass
        return key, {**job, "file": path}

    def _answered(self, fut, result: dict) -> None:
        with self.lock:
            self.done += 1
            done, total = self.done, self.total
        if self.progress is not None:
            self.progress(done, total)
        fut.set_result(result)

    def _start(self):
        import threading
        proc = subprocess.Popen([str(self.exe)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        err: list[str] = []
        reader = threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)
        reader.start()
        with self.lock:
            self.procs.add(proc)
        return proc, err, reader

    def _stop(self, running, kill: bool = False) -> str:
        proc, err, reader = running
        try:
            proc.stdin.close()
        except OSError:
            pass
        if kill:
            proc.kill()
        proc.wait()
        reader.join()
        with self.lock:
            self.procs.discard(proc)
            self.stderr.append("".join(err))
        return "".join(err)

    def _work(self) -> None:
        running = None
        try:
            while True:
                item = self.queue.get()
                if item is None:
                    return
                job, fut, cached = item
                if self.closed:
                    fut.cancel()
                    continue
                if running is None:
                    running = self._start()
                proc = running[0]
                sent = job if cached is None else cached[1]  # the snapshot of the hashed bytes (ircache)
                try:
                    proc.stdin.write(json.dumps(sent) + "\n")
                    proc.stdin.flush()
                    line = proc.stdout.readline()
                except OSError:
                    line = ""
                result = None
                if line:
                    try:
                        result = json.loads(line)
                    except json.JSONDecodeError:
                        result = None
                if result is None:  # the helper died on this job
                    err = self._stop(running, kill=True)
                    running = None
                    result = {"out": job.get("out"), "ok": False,
                              "error": err[-2000:] or "irdump produced no result"}
                if cached is not None:
                    self._keep(job, cached, result)
                self._answered(fut, result)
        finally:
            if running is not None:
                self._stop(running)

    def close(self, cancel: bool = False) -> str:
        """Waits for every job (or, with `cancel`, drops those not started and stops the helpers);
        the helpers' stderr, all of it."""
        if cancel:
            self.closed = True
            with self.lock:
                for proc in self.procs:
                    proc.kill()
        for _ in self.threads:
            self.queue.put(None)
        for t in self.threads:
            t.join()
        if self.snapshots is not None:
            import shutil
            shutil.rmtree(self.snapshots.folder, ignore_errors=True)
        return "".join(self.stderr)

    def _keep(self, job: dict, cached: tuple, result: dict) -> None:
        """A compiled job's bytecode stored under its key; a failed job's error names the caller's file, not
        the snapshot the helper read."""
        from . import ircache
        key, sent = cached
        if result.get("ok"):
            try:
                payload = Path(job["out"]).read_bytes()
            except OSError:
                return
            if payload:
                ircache.store(self.cache, key, payload)
        elif isinstance(result.get("error"), str):
            result["error"] = result["error"].replace(sent["file"], job["file"])


def job_key(job: dict) -> str:
    """What an irdump job compiles (all of it but where the bytecode goes): equal keys, equal Tile IR."""
    return json.dumps({k: v for k, v in job.items() if k != "out"}, sort_keys=True)


def run_irdump(irdump: Path, jobs: list[dict], progress=None) -> tuple[str, str]:
    """All jobs through the irdump helpers (IrdumpPool): (their result lines in job order, stderr)."""
    pool = IrdumpPool(irdump, progress, min(usable_cores(), len(jobs)) or 1)
    try:
        futures = [pool.submit(job) for job in jobs]
        results = [f.result() for f in futures]
    finally:
        stderr = pool.close()
    return "".join(json.dumps(r) + "\n" for r in results), stderr
