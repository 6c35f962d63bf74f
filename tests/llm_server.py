"""A loopback stand-in for an OpenAI-compatible chat server, for tests: it records every request and
answers from a queue of canned responses (`with RecordedLLM() as srv: srv.answer("..."); ... srv.url`)."""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):  # a client hanging up early is expected; stay quiet
        pass


class RecordedLLM:
    def __init__(self):
        self.requests: list[dict] = []
        self._queue: deque[tuple[int, bytes, float, dict]] = deque()
        self._default = None
        self._lock = threading.Lock()
        self._closing = threading.Event()  # wakes delayed answers at exit
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        # a short poll interval: shutdown() waits for the loop to notice, which would otherwise take 0.5 s per test
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self) -> RecordedLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    @staticmethod
    def completion(content: str) -> bytes:
        return json.dumps({
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }).encode()

    def answer(self, content: str | None = None, *, status: int = 200, body: bytes | None = None,
               delay: float = 0.0, headers: dict | None = None) -> None:
        """Queue one response: by default a chat completion whose message content is `content`; `body` sends raw
        bytes instead; `delay` sleeps before answering. A header given as None is left out (Content-Length:
        None sends a body delimited by closing the connection)."""
        if body is None:
            body = self.completion(content or "") if status == 200 else b""
        with self._lock:
            self._queue.append((status, body, delay, dict(headers or {})))

    def default(self, fn) -> None:
        """fn(request_dict) -> (status, body_bytes), used when the queue is empty."""
        self._default = fn

    def _next(self, request: dict) -> tuple[int, bytes, float, dict]:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
        if self._default is not None:
            status, body = self._default(request)
            return status, body, 0.0, {}
        return 500, b"no recorded answer", 0.0, {}


def _handler(srv: RecordedLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # one request per connection; the body may end at close

        def log_message(self, format, *args):  # keep test output clean
            pass

        def do_POST(self):
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
            request = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
            status, payload, delay, headers = srv._next(request)
            if delay and srv._closing.wait(delay):
                return
            headers = {"Content-Type": "application/json", "Content-Length": str(len(payload)), **headers}
            try:
                self.send_response(status)
                for name, value in headers.items():
                    if value is not None:
                        self.send_header(name, str(value))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:  # the client gave up (timeout, oversized body): expected in tests
                pass

        do_GET = do_POST

    return Handler
