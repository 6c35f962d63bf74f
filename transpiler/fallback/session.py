"""One run's LLM fallback: the answers cached in OUT, the calls this run may make, and their verdicts.

The cache is `OUT/llm-cache/<hash>.json`, one file per question (committed with the ports, so pre-commit and
CI replay it without a call). An entry is trusted only if the manifest lists it with the hash of its content
(a hand-edited entry is ignored, and refused on write like any generated file). Verdicts: `accepted` (the
kernel was proved equivalent with it; `verified` is the digest of the entries proved), `rejected` (with the
reason: kept, so the question is not asked again until purged), `pending` (answered this run, not proved yet:
never written). An `accepted` entry is replayed as proved only when this machine proved it (records.py).

The API key never reaches an entry: the client scrubs it from what the model answers (an endpoint that echoes
the Authorization header gets its answer rejected), and every entry's text is scrubbed again when written.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .. import __version__
from ..emit.render import GENERATED_MARK

CACHE_DIR = "llm-cache"


class Unavailable(Exception):
    """No answer can be had now (no call allowed, the endpoint failed, the budget is spent)."""


def read_cache(out: Path | None) -> dict[str, dict]:
    """The trusted entries of OUT's cache: listed in the manifest with the hash of their content."""
    from ..output.state import ManifestError, load_manifest
    if out is None:
        return {}
    try:
        doc = load_manifest(out)
    except ManifestError:
        return {}
    entries: dict[str, dict] = {}
    for rel, digest in sorted(((doc or {}).get("files") or {}).items()):
        if not rel.startswith(CACHE_DIR + "/"):
            continue
        try:
            data = (out / rel).read_bytes()
            entry = json.loads(data)
        except (OSError, ValueError):
            continue
        if hashlib.sha256(data).hexdigest() != digest or not isinstance(entry, dict):
            continue  # edited by hand: not trusted
        if rel == f"{CACHE_DIR}/{entry.get('hash')}.json" and entry.get("verdict") in ("accepted", "rejected"):
            entries[entry["hash"]] = entry
    return entries


def entry_text(entry: dict) -> str:
    doc = {"_generated": f"{GENERATED_MARK} {__version__}: an answer of the LLM fallback (see README, LLM fallback)",
           **{k: v for k, v in entry.items() if k != "_generated"}}
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=True) + "\n"


class Session:
    def __init__(self, out: Path | None, settings=None, use_cache: bool = True, purge_rejected: bool = False,
                 offline: bool = False, env=None, proves: bool = True):
        self.out = out
        self.settings = settings  # LLMSettings, or None: no call is made (cached answers are still replayed)
        self.kept = read_cache(out)  # entries of sources this run does not redo stay, whatever the flags
        self.old = self.kept if use_cache else {}  # the answers lookups may replay (read once)
        self.purge_rejected = purge_rejected
        self.offline = offline
        self.proves = proves  # the caller proves `unproved` (prove.py) before using the run's result
        self.env = env
        self.used: dict[str, dict] = {}  # hash -> entry, every question of this run
        self.unproved: dict[tuple[str, str], tuple[str, list[str]]] = {}  # (source, kernel) -> (digest, hashes)
        self.proving = False  # the staging run of the proof: pending answers are taken as they are
        self.unprovable: dict[str, str] = {}  # hash -> why its proof could not run (never written)
        # (source, kernel) whose units were not all reached this run (one failed first): their later answers stay
        self.partial: set[tuple[str, str]] = set()
        self.client = None
        self.calls = 0

    @property
    def model(self) -> str:
        return self.settings.model if self.settings is not None else ""

    def lookup(self, h: str) -> dict | None:
        if h in self.used:
            return self.used[h]
        e = self.old.get(h)
        if e is not None and not (self.purge_rejected and e["verdict"] == "rejected"):
            self.used[h] = e
            return e
        return None

    def ask(self, h: str, msgs: list[dict], meta: dict) -> dict:
        """The entry answering question `h`: cached, or asked now (verdict `pending`, or `rejected` when the
        answer is not the envelope). Raises Unavailable."""
        from .client import ChatClient, LLMError, parse_envelope
        if self.settings is None or self.offline:
            raise Unavailable("no answer for this statement is cached in OUT/llm-cache"
                              + ("; --check never calls the model" if self.offline else
                                 "; run with --llm-fallback to ask the model"))
        if self.client is None:
            self.client = ChatClient(self.settings, env=self.env)
        try:
            content = self.client.complete(msgs)
        except LLMError as e:
            raise Unavailable(self.client.scrub(e.reason)) from None
        finally:
            self.calls = self.client.requests_made
        entry = {"hash": h, "model": self.settings.model, "request": msgs, "verdict": "pending", "reason": "",
                 **meta}
        if self.client.echoed_key:  # a hostile or broken endpoint (or proxy): nothing it answered is used
            entry.update(verdict="rejected", reason="the answer held the API key (removed here): the endpoint "
                         "echoes the Authorization header", answer={"raw": content[:4000]})
            self.used[h] = entry
            return entry
        try:
            env = parse_envelope(content, need_type=True)
            entry["answer"] = {"rust": env.rust, "type": env.type}
        except LLMError as e:
            entry.update(verdict="rejected", reason=e.reason, answer={"raw": content[:4000]})
        self.used[h] = entry
        return entry

    def reject(self, h: str, reason: str) -> None:
        self.used[h] = {**self.used[h], "verdict": "rejected", "reason": reason}
        self.used[h].pop("verified", None)

    def accept(self, h: str, digest: str) -> None:
        self.used[h] = {**self.used[h], "verdict": "accepted", "reason": "", "verified": digest}

    def cache_outputs(self, out: Path, redone: set[str]) -> dict[Path, str]:
        """The cache files of the new state: this run's answers, and the old entries of sources this run did
        not redo (a changed source invalidates only its own entries) or of kernels whose later units this run
        did not reach."""
        keep = {h: e for h, e in self.kept.items()
                if (e.get("source") not in redone or (e.get("source"), e.get("kernel")) in self.partial)
                and not (self.purge_rejected and e["verdict"] == "rejected")}
        keep.update({h: e for h, e in self.used.items() if e["verdict"] in ("accepted", "rejected")})
        return {out / CACHE_DIR / f"{h}.json": self.scrub(entry_text(e)) for h, e in sorted(keep.items())}

    def scrub(self, text: str) -> str:
        """`text` without this run's API key (when one was read), whole or in pieces."""
        return self.client.scrub(text) if self.client is not None else text

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
