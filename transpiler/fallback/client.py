"""A small client for OpenAI-compatible chat completions, and the JSON envelope the model answers with.

Everything here is defensive: a bounded number of requests per run, bounded waits, bounded response
sizes, and user-facing errors (`LLMError.reason`) that never carry the API key. What the model answers
is only text to be checked later; nothing here trusts it.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NoReturn

import httpx

RETRYABLE = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER_S = 30.0
ERROR_BODY_CHARS = 200


@dataclass(frozen=True)
class LLMSettings:
    base_url: str  # OpenAI-compatible, e.g. "http://127.0.0.1:8000/v1"; we POST {base_url}/chat/completions
    model: str
    api_key_env: str = ""  # the NAME of the variable holding the key ("" = no key); the key itself is never stored here
    timeout_s: float = 60.0  # per request, in all: connecting, the headers and the body (not per read)
    retries: int = 2  # extra attempts after the first, on RETRYABLE statuses, timeouts and connection errors
    backoff_s: float = 1.0  # wait before retry k (0-based) is backoff_s * 2**k, unless Retry-After says otherwise
    max_response_bytes: int = 262144  # the body read is aborted past this
    budget: int = 20  # HTTP requests per run, retries included
    json_mode: bool = True  # send response_format={"type": "json_object"}


class LLMError(Exception):
    """A failed LLM call; `reason` is one line, fit to show to a user, and never contains the API key."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class BudgetExhausted(LLMError):
    pass


class _Retry(Exception):
    """An attempt failed in a way worth repeating; `final(n)` describes it after n attempts."""

    def __init__(self, final: Callable[[str], str], wait: float | None = None):
        self.final = final
        self.wait = wait  # from Retry-After; None = exponential backoff


def _attempts(n: int) -> str:
    return f"{n} attempt" if n == 1 else f"{n} attempts"


def _one_line(text: str) -> str:
    return " ".join(text.split())


SECRET_PIECE = 8  # this many consecutive characters of the key count as the key (a truncation may cut it)


def scrub_secret(text: str, secret: str) -> str:
    """`text` with every run of the secret's characters that holds SECRET_PIECE of them in a row (the whole
    secret, `Bearer <secret>`'s tail, or a piece a truncation cut off) replaced by `***`."""
    if not secret or not text:
        return text
    n = min(len(secret), SECRET_PIECE)
    pieces = {secret[i:i + n] for i in range(len(secret) - n + 1)}
    hidden = bytearray(len(text))
    for i in range(len(text) - n + 1):
        if text[i:i + n] in pieces:
            hidden[i:i + n] = b"\1" * n
    if not any(hidden):
        return text
    out, i = [], 0
    while i < len(text):
        if hidden[i]:
            while i < len(text) and hidden[i]:
                i += 1
            out.append("***")
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


class ChatClient:
    def __init__(self, settings: LLMSettings, env: Mapping[str, str] | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        self.settings = settings
        self.requests_made = 0
        self.echoed_key = False  # the last answer held the API key (it was removed from what complete() returned)
        self._env = os.environ if env is None else env
        self._sleep = sleep
        self._key: str | None = None  # read at the first complete(), so a missing key only matters when used
        self._url = settings.base_url.rstrip("/") + "/chat/completions"
        # trust_env=False: no proxies, .netrc or CA settings picked up from the environment; the endpoint is
        # the one configured (often loopback), and the key must not travel anywhere else. No redirects either.
        # No kept-alive connections: each request connects anew, so its socket is known to the deadline (_once).
        self._http = httpx.Client(timeout=httpx.Timeout(settings.timeout_s), trust_env=False,
                                  follow_redirects=False, limits=httpx.Limits(max_keepalive_connections=0))

    def __repr__(self) -> str:
        return f"ChatClient(url={self._url!r}, model={self.settings.model!r}, requests_made={self.requests_made})"

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def complete(self, messages: list[dict]) -> str:
        """The assistant message's content of one chat completion (temperature 0), with the API key scrubbed
        (`echoed_key` says it was there). Raises LLMError."""
        s = self.settings
        headers = {"Accept": "application/json"}
        if key := self._api_key():
            headers["Authorization"] = f"Bearer {key}"
        body: dict = {"model": s.model, "messages": messages, "temperature": 0}
        if s.json_mode:
            body["response_format"] = {"type": "json_object"}
        attempts = max(s.retries, 0) + 1
        for attempt in range(attempts):
            if self.requests_made >= s.budget:
                raise BudgetExhausted(f"the LLM call budget of {s.budget} requests for this run is spent")
            self.requests_made += 1
            try:
                content = self._once(body, headers)
                scrubbed = self.scrub(content)
                self.echoed_key = scrubbed != content
                return scrubbed
            except _Retry as r:
                if attempt == attempts - 1:
                    raise LLMError(self.scrub(r.final(_attempts(attempts)))) from None
                wait = s.backoff_s * 2 ** attempt if r.wait is None else r.wait
                self._sleep(wait)
            except LLMError as e:
                raise LLMError(self.scrub(e.reason)) from None
            except Exception as e:  # noqa: BLE001 - whatever else fails here leaves as a scrubbed message, unchained
                raise LLMError(f"the request failed: {type(e).__name__}: {self.scrub(str(e))[:ERROR_BODY_CHARS]}") \
                    from None
        raise AssertionError("unreachable")

    def _api_key(self) -> str:
        name = self.settings.api_key_env
        if not name:
            return ""
        if self._key is None:
            key = (self._env.get(name) or "").strip()  # a trailing newline from `$(cat file)` is common
            if not key:
                raise LLMError(f"the environment variable {name} that should hold the API key is not set")
            # only visible ASCII can go into a header; checked here because the HTTP layer's own error
            # for a bad header value quotes the value, i.e. the key
            if not all("!" <= c <= "~" for c in key):
                raise LLMError(f"the API key in the environment variable {name} has characters "
                               "not allowed in an HTTP header")
            self._key = key
        return self._key

    def scrub(self, text: str) -> str:
        """`text` without the API key, whole or in pieces (scrub_secret)."""
        return scrub_secret(text, self._key or "")

    def _once(self, body: dict, headers: dict) -> str:
        s = self.settings
        timeout = f"timed out after {s.timeout_s:g} s"
        start = time.monotonic()
        # httpx's timeout bounds each read, so a server sending a byte a second never trips it: at the
        # deadline a timer shuts the request's socket down, which ends whatever read is waiting
        expired, lock, socks = threading.Event(), threading.Lock(), []

        def shut(sock) -> None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # closed already

        def trace(event: str, info: dict) -> None:
            if event == "connection.connect_tcp.complete" and info.get("return_value") is not None:
                sock = info["return_value"].get_extra_info("socket")
                if sock is not None:
                    with lock:
                        socks.append(sock)
                        if expired.is_set():
                            shut(sock)

        def expire() -> None:
            with lock:
                expired.set()
                for sock in socks:
                    shut(sock)

        timer = threading.Timer(s.timeout_s, expire)
        timer.daemon = True
        timer.start()
        try:
            return self._exchange(body, headers, start, timeout, trace, expired)
        finally:
            timer.cancel()

    def _exchange(self, body: dict, headers: dict, start: float, timeout: str, trace, expired) -> str:
        s = self.settings
        try:
            with self._http.stream("POST", self._url, json=body, headers=headers,
                                   extensions={"trace": trace}) as resp:
                if resp.status_code in RETRYABLE:
                    code = resp.status_code
                    raise _Retry(lambda n: f"HTTP {code} after {n}", _retry_after(resp))
                if not 200 <= resp.status_code < 300:
                    snippet = _one_line(self.scrub(_read_some(resp, 4096).decode("utf-8", "replace")))
                    raise LLMError(f"HTTP {resp.status_code} from {self._url}: {snippet[:ERROR_BODY_CHARS]}")
                declared = resp.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > s.max_response_bytes:
                    raise LLMError(f"the response is larger than {s.max_response_bytes} bytes")
                data = bytearray()
                for chunk in resp.iter_bytes():
                    data += chunk
                    if len(data) > s.max_response_bytes:  # leaving the block closes the connection unread
                        raise LLMError(f"the response is larger than {s.max_response_bytes} bytes")
                    if time.monotonic() - start > s.timeout_s:  # the httpx timeout is per read, not per request
                        raise _Retry(lambda n: f"{timeout} ({n})")
        except (httpx.HTTPError, httpx.InvalidURL) as e:
            if expired.is_set():  # the deadline shut the socket: whatever error that made is the timeout
                raise _Retry(lambda n: f"{timeout} ({n})") from None
            self._http_error(e, timeout)
        return _content(bytes(data))

    def _http_error(self, e: Exception, timeout: str) -> NoReturn:
        """Raises the LLMError or _Retry for an error of the HTTP layer (its text scrubbed)."""
        what = _one_line(self.scrub(str(e)))
        if isinstance(e, httpx.TimeoutException):
            raise _Retry(lambda n: f"{timeout} ({n})") from None
        if isinstance(e, (httpx.InvalidURL, httpx.UnsupportedProtocol)):
            raise LLMError(f"invalid LLM endpoint {self._url}: {what}") from None
        if isinstance(e, httpx.TransportError):
            raise _Retry(lambda n: f"could not reach {self._url}: {what or type(e).__name__} ({n})") from None
        raise LLMError(f"bad response from {self._url}: {what}") from None  # e.g. a body that fails to decompress


def _retry_after(resp: httpx.Response) -> float | None:
    """Retry-After in seconds, capped; None when absent or not a number (the HTTP-date form is ignored)."""
    try:
        wait = float(resp.headers.get("retry-after", ""))
    except ValueError:
        return None
    return min(max(wait, 0.0), MAX_RETRY_AFTER_S) if wait == wait else None  # wait == wait: not NaN


def _read_some(resp: httpx.Response, limit: int) -> bytes:
    data = b""
    for chunk in resp.iter_bytes():
        data += chunk
        if len(data) >= limit:
            break
    return data[:limit]


def _content(raw: bytes) -> str:
    def bad(what: str) -> LLMError:
        return LLMError(f"malformed chat completion: {what}")
    try:
        doc = json.loads(raw)
    except ValueError:
        raise bad("the body is not JSON") from None
    if not isinstance(doc, dict):
        raise bad("the body is not a JSON object")
    choices = doc.get("choices")
    if not isinstance(choices, list) or not choices:
        raise bad("no choices")
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        raise bad("choices[0] has no message")
    content = message.get("content")
    if not isinstance(content, str):
        raise bad("choices[0].message.content is not a string")
    return content


@dataclass(frozen=True)
class Envelope:
    rust: str
    type: str  # "" when not needed


ENVELOPE_KEYS = frozenset({"rust", "type", "explanation"})


def parse_envelope(content: str, need_type: bool) -> Envelope:
    """The model's answer: exactly one JSON object {"rust": ..., "type": ...} (plus an optional, ignored
    "explanation"); "type" is required when need_type, ignored otherwise. Nothing else is accepted: a fenced
    or chatty answer is refused rather than guessed at."""
    def bad(what: str) -> LLMError:
        return LLMError(f'the answer is not the JSON envelope {{"rust": ..., "type": ...}}: {what}')
    try:
        doc = json.loads(content)  # allows surrounding whitespace, nothing else
    except ValueError as e:
        raise bad(f"invalid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    if not isinstance(doc, dict):
        kind = {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}.get(type(doc), "null")
        raise bad(f"a JSON {kind}, not an object")
    if extra := sorted(set(doc) - ENVELOPE_KEYS):
        raise bad("unexpected key " + ", ".join(repr(k) for k in extra))

    def text(key: str) -> str:
        value = doc.get(key)
        if not isinstance(value, str) or not value.strip():
            raise bad(f'"{key}" is missing or not a non-empty string')
        return value

    rust = text("rust")
    if "explanation" in doc and not isinstance(doc["explanation"], str):
        raise bad('"explanation" is not a string')
    return Envelope(rust, text("type") if need_type else "")
