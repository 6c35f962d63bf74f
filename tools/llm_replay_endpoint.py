"""A stand-in OpenAI-compatible endpoint on loopback that replays recorded answers: try the LLM fallback (or
reproduce a run) without a model.

    python3 tools/llm_replay_endpoint.py answers.json --port 8000 &
    cutile-transpile src/ -o rust/ --llm-fallback --llm-base-url http://127.0.0.1:8000/v1 --llm-model replay

answers.json maps a Python statement (as the question quotes it, e.g. "b = ct.pow(a, a)") to the answer's
content (a JSON envelope, or any text to see a malformed answer rejected). A statement not in the file gets
HTTP 500. Every request is logged to stderr as the statement asked about.
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("answers", help="JSON file: statement -> answer content")
    ap.add_argument("--port", type=int, default=8000)
    args = ap.parse_args()
    with open(args.answers, encoding="utf-8") as f:
        answers = json.load(f)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            user = next((m["content"] for m in body.get("messages", []) if m.get("role") == "user"), "")
            statement = user.split("\n")[1].strip() if "\n" in user else ""
            content = answers.get(statement)
            sys.stderr.write(f"asked: {statement!r} -> {'answered' if content is not None else 'no answer (500)'}\n")
            if content is None:
                self.send_response(500)
                self.end_headers()
                return
            if not isinstance(content, str):
                content = json.dumps(content)
            out = json.dumps({"object": "chat.completion", "model": body.get("model", ""),
                              "choices": [{"index": 0, "finish_reason": "stop",
                                           "message": {"role": "assistant", "content": content}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *a) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    sys.stderr.write(f"replaying {len(answers)} answers on http://127.0.0.1:{args.port}/v1\n")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
