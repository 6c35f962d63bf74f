"""The LLM client against a loopback server: request shape, key handling, retries, limits, parsing."""

from __future__ import annotations

import json
import socket
import time

import pytest

from llm_server import RecordedLLM
from transpiler.fallback.client import BudgetExhausted, ChatClient, Envelope, LLMError, LLMSettings, parse_envelope

KEY = "sk-test-0123456789abcdef"
MESSAGES = [{"role": "system", "content": "translate"}, {"role": "user", "content": "x + 1"}]


@pytest.fixture
def srv():
    with RecordedLLM() as s:
        yield s


def client(srv_or_url, sleeps: list | None = None, env: dict | None = None, **kw) -> ChatClient:
    url = srv_or_url if isinstance(srv_or_url, str) else srv_or_url.url
    kw = {"timeout_s": 2.0, "backoff_s": 0.01, **kw}
    recorder = sleeps.append if sleeps is not None else (lambda s: None)
    return ChatClient(LLMSettings(base_url=url, model="m-1", **kw), env=env if env is not None else {}, sleep=recorder)


def test_good_answer_and_request_shape(srv):
    srv.answer('{"rust": "x + 1"}')
    with client(srv) as c:
        assert c.complete(MESSAGES) == '{"rust": "x + 1"}'
        assert c.requests_made == 1
    [req] = srv.requests
    assert req["path"] == "/v1/chat/completions"
    assert req["body"] == {"model": "m-1", "messages": MESSAGES, "temperature": 0,
                           "response_format": {"type": "json_object"}}
    assert "authorization" not in req["headers"]  # no key configured: nothing sent


def test_json_mode_off_sends_no_response_format(srv):
    srv.answer("ok")
    with client(srv, json_mode=False) as c:
        assert c.complete(MESSAGES) == "ok"
    assert "response_format" not in srv.requests[0]["body"]


def test_key_from_named_variable_goes_in_the_header_only(srv):
    srv.answer("ok")
    settings = LLMSettings(base_url=srv.url, model="m", api_key_env="TEST_LLM_KEY")
    c = ChatClient(settings, env={"TEST_LLM_KEY": KEY + "\n"})
    assert c.complete(MESSAGES) == "ok"
    assert srv.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"
    assert KEY not in repr(settings) and KEY not in repr(c) and KEY not in str(c)
    c.close()


def test_key_echoed_in_an_error_body_is_scrubbed(srv):
    srv.answer(status=401, body=json.dumps({"error": f"invalid key {KEY} for this account"}).encode())
    c = client(srv, env={"TEST_LLM_KEY": KEY}, api_key_env="TEST_LLM_KEY")
    with pytest.raises(LLMError) as e:
        c.complete(MESSAGES)
    assert "401" in e.value.reason and "invalid key" in e.value.reason
    for text in (e.value.reason, str(e.value), repr(e.value)):
        assert KEY not in text
    assert e.value.__cause__ is None
    assert len(srv.requests) == 1  # 401 is not retried


@pytest.mark.parametrize("env", [{}, {"TEST_LLM_KEY": ""}, {"TEST_LLM_KEY": "  "}])
def test_missing_key_names_the_variable(srv, env):
    c = client(srv, env=dict(env, OTHER_KEY=KEY), api_key_env="TEST_LLM_KEY")  # constructing is fine
    with pytest.raises(LLMError) as e:
        c.complete(MESSAGES)
    assert "TEST_LLM_KEY" in e.value.reason and KEY not in e.value.reason
    assert srv.requests == [] and c.requests_made == 0


def test_key_unfit_for_a_header_is_refused_without_quoting_it(srv):
    c = client(srv, env={"TEST_LLM_KEY": "sk-bad\nkey"}, api_key_env="TEST_LLM_KEY")
    with pytest.raises(LLMError) as e:
        c.complete(MESSAGES)
    assert "sk-bad" not in str(e.value) and srv.requests == []


def test_429_then_success_waits_retry_after(srv):
    srv.answer(status=429, headers={"Retry-After": "3"})
    srv.answer("ok")
    sleeps = []
    with client(srv, sleeps) as c:
        assert c.complete(MESSAGES) == "ok"
    assert sleeps == [3.0] and len(srv.requests) == 2


def test_retry_after_is_capped_and_backoff_doubles(srv):
    srv.answer(status=503, headers={"Retry-After": "1000"})
    srv.answer(status=502)
    srv.answer(status=500)
    srv.answer("ok")
    sleeps = []
    with client(srv, sleeps, retries=3, backoff_s=0.5) as c:
        assert c.complete(MESSAGES) == "ok"
    assert sleeps == [30.0, 1.0, 2.0]  # retry 0: Retry-After (capped); retries 1 and 2: 0.5 * 2**k


def test_500s_exhaust_the_retries(srv):
    for _ in range(3):
        srv.answer(status=500, body=b"boom")
    sleeps = []
    with pytest.raises(LLMError) as e:
        client(srv, sleeps, retries=2).complete(MESSAGES)
    assert e.value.reason == "HTTP 500 after 3 attempts"
    assert len(srv.requests) == 3 and len(sleeps) == 2


def test_non_retryable_status_fails_at_once_with_a_short_body(srv):
    srv.answer(status=400, body=b"bad request: " + b"x" * 1000)
    with pytest.raises(LLMError) as e:
        client(srv).complete(MESSAGES)
    assert "HTTP 400" in e.value.reason and "bad request" in e.value.reason
    assert e.value.reason.count("x") <= 200 and "\n" not in e.value.reason
    assert len(srv.requests) == 1


def test_slow_answer_times_out_after_every_attempt(srv):
    for _ in range(3):
        srv.answer("late", delay=2.0)
    start = time.monotonic()
    with pytest.raises(LLMError) as e:
        client(srv, timeout_s=0.3, retries=2).complete(MESSAGES)
    assert "timed out" in e.value.reason and "3 attempts" in e.value.reason
    assert len(srv.requests) == 3
    assert time.monotonic() - start < 1.8


def test_connection_refused_is_retried_then_reported():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = client(f"http://127.0.0.1:{port}/v1", retries=1)
    with pytest.raises(LLMError) as e:
        c.complete(MESSAGES)
    assert "could not reach" in e.value.reason and "2 attempts" in e.value.reason
    assert c.requests_made == 2


@pytest.mark.parametrize("declared", [True, False])
def test_oversized_body_is_refused(srv, declared):
    big = RecordedLLM.completion("y" * 5_000_000)
    srv.answer(body=big, headers=None if declared else {"Content-Length": None})
    start = time.monotonic()
    with pytest.raises(LLMError) as e:
        client(srv, max_response_bytes=4096).complete(MESSAGES)
    assert e.value.reason == "the response is larger than 4096 bytes"
    assert len(srv.requests) == 1  # not retried
    assert time.monotonic() - start < 1.0


@pytest.mark.parametrize("body, what", [
    (b"<html>not json</html>", "not JSON"),
    (b"[1, 2]", "not a JSON object"),
    (b'{"id": "x"}', "no choices"),
    (b'{"choices": []}', "no choices"),
    (b'{"choices": [{"text": "x"}]}', "no message"),
    (b'{"choices": [{"message": {"content": null, "tool_calls": []}}]}', "not a string"),
    (b'{"choices": [{"message": {"content": 42}}]}', "not a string"),
])
def test_malformed_completion(srv, body, what):
    srv.answer(body=body)
    with pytest.raises(LLMError) as e:
        client(srv).complete(MESSAGES)
    assert e.value.reason.startswith("malformed chat completion: ") and what in e.value.reason


def test_budget_counts_requests(srv):
    srv.default(lambda req: (200, RecordedLLM.completion("ok")))
    c = client(srv, budget=2)
    assert c.complete(MESSAGES) == "ok" and c.complete(MESSAGES) == "ok"
    with pytest.raises(BudgetExhausted) as e:
        c.complete(MESSAGES)
    assert e.value.reason == "the LLM call budget of 2 requests for this run is spent"
    assert len(srv.requests) == 2


def test_budget_counts_retries(srv):
    srv.default(lambda req: (500, b""))
    with pytest.raises(BudgetExhausted):
        client(srv, budget=2, retries=5).complete(MESSAGES)
    assert len(srv.requests) == 2


def test_redirects_are_not_followed(srv):
    srv.answer(status=307, headers={"Location": "http://example.invalid/v1/chat/completions"})
    with pytest.raises(LLMError) as e:
        client(srv).complete(MESSAGES)
    assert "HTTP 307" in e.value.reason and len(srv.requests) == 1


def test_unanswered_request_is_a_500(srv):
    with pytest.raises(LLMError) as e:
        client(srv, retries=0).complete(MESSAGES)
    assert e.value.reason == "HTTP 500 after 1 attempt"


# the envelope

@pytest.mark.parametrize("content, need_type, expected", [
    ('{"rust": "a + b", "type": "i32"}', True, Envelope("a + b", "i32")),
    ('  \n{"rust": "a + b", "type": "i32", "explanation": "sum"}\n', True, Envelope("a + b", "i32")),
    ('{"rust": "a + b"}', False, Envelope("a + b", "")),
    ('{"rust": "a + b", "type": "i32"}', False, Envelope("a + b", "")),
])
def test_envelope_accepted(content, need_type, expected):
    assert parse_envelope(content, need_type) == expected


@pytest.mark.parametrize("content, need_type, what", [
    ('```json\n{"rust": "a", "type": "i32"}\n```', True, "invalid JSON"),
    ('Here you go: {"rust": "a"}', False, "invalid JSON"),
    ('{"rust": "a"} trailing', False, "invalid JSON"),
    ('{"rust": "a", "type": "i32", "notes": "x"}', True, "'notes'"),
    ('{"rust": "a"}', True, '"type"'),
    ('{"rust": "a", "type": ""}', True, '"type"'),
    ('{"rust": 1, "type": "i32"}', True, '"rust"'),
    ('{"rust": ""}', False, '"rust"'),
    ('{"type": "i32"}', True, '"rust"'),
    ('{"rust": "a", "explanation": 3}', False, '"explanation"'),
    ('[{"rust": "a"}]', False, "array"),
    ('"a + b"', False, "string"),
    ("", False, "invalid JSON"),
])
def test_envelope_rejected(content, need_type, what):
    with pytest.raises(LLMError) as e:
        parse_envelope(content, need_type)
    assert e.value.reason.startswith('the answer is not the JSON envelope {"rust": ..., "type": ...}: ')
    assert what in e.value.reason
