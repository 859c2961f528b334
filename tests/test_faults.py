"""Fault injection over real HTTP: a fake OpenAI-compatible server on 127.0.0.1 that answers with 429 +
Retry-After, 500/503, hangs past the timeout, resets connections, sends truncated or malformed JSON, names a winner
who is not a debater, or answers nothing. Every case ends complete after retries or incomplete naming the cause:
never a crash, never a made-up verdict."""

from __future__ import annotations

import json
import time

import pytest

from debatrix import JudgeSettings, LLMSettings, MemorySettings
from debatrix.app.api import ajudge_debate
from debatrix.core.results import Status
from debatrix.testing import FakeOpenAIServer, Fault


def run_settings(srv: FakeOpenAIServer, **llm) -> JudgeSettings:
    base = dict(base_url=srv.base_url, model="fake-model", max_retries=2, retry_max_wait=0.2, timeout=2.0)
    return JudgeSettings(mode="direct", llm=LLMSettings(**{**base, **llm}), memory=MemorySettings(embedding="hash"))


def first_n(n: int, fault: Fault | None = None, make=None):
    """A responder that misbehaves on the first ``n`` requests, then answers normally."""
    seen = {"n": 0}

    def respond(body, i):
        if seen["n"] < n:
            seen["n"] += 1
            return make(body, i) if make else fault
        return None

    return respond


def structured_only(n: int, content: str, finish: str = "stop"):
    """Misbehave on the first ``n`` structured (json_schema) requests with ``content``."""
    seen = {"n": 0}

    def respond(body, i):
        if body.get("response_format") and seen["n"] < n:
            seen["n"] += 1
            done = FakeOpenAIServer().completion(body, i)
            done["choices"][0]["message"]["content"] = content
            done["choices"][0]["finish_reason"] = finish
            return done
        return None

    return respond


RECOVERABLE = {  # factories: each test gets responders with fresh counters
    "429 with Retry-After": lambda: first_n(2, Fault(429, headers={"Retry-After": "0.1"})),
    "500": lambda: first_n(2, Fault(500)),
    "503": lambda: first_n(1, Fault(503)),
    "connection reset": lambda: first_n(2, Fault(reset=True)),
    "hang past the timeout": lambda: first_n(1, Fault(200, delay=3.0)),
    "malformed JSON": lambda: structured_only(1, '{"score": seven}'),
    "truncated JSON": lambda: structured_only(1, '{"winner": "Ma', finish="length"),
    "winner who is not a debater": lambda: structured_only(1, '{"winner": "The Judge"}'),
    "empty structured answer": lambda: structured_only(1, ""),
}


@pytest.mark.parametrize("transport", ["http", "langchain"])
@pytest.mark.parametrize("case", list(RECOVERABLE))
async def test_transient_faults_end_complete(uniforms, case, transport):
    with FakeOpenAIServer(responder=RECOVERABLE[case]()) as srv:
        result = await ajudge_debate(uniforms, run_settings(srv, timeout=1.0, transport=transport))
    assert result.status is Status.COMPLETE, f"{case}: {result.incomplete_reason}"
    assert result.winner in {"Maya", "Theo"}
    u = result.usage
    if case in ("malformed JSON", "truncated JSON", "winner who is not a debater", "empty structured answer"):
        assert u.repairs == 1
    else:
        assert u.retries >= 1


PERSISTENT = {
    "429 forever": (Fault(429, headers={"Retry-After": "0.05"}), "LLMRateLimitError"),
    "500 forever": (Fault(500), "server error 500"),
    "503 forever": (Fault(503), "server error 503"),
    "resets forever": (Fault(reset=True), "cannot reach the model server"),
    "hangs forever": (Fault(200, delay=1.5), "LLMTimeoutError"),
    "401 unauthorised": (Fault(401), "server error 401"),
    "400 bad request": (Fault(400), "rejected the request (400)"),
    "not JSON at all": (Fault(200, body="<html>proxy error</html>"), "LLMError"),
}


@pytest.mark.parametrize("transport", ["http", "langchain"])
@pytest.mark.parametrize("case", list(PERSISTENT))
async def test_persistent_faults_end_incomplete_with_the_cause(uniforms, case, transport):
    fault, cause = PERSISTENT[case]
    with FakeOpenAIServer(responder=lambda body, i: fault) as srv:
        started = time.perf_counter()
        result = await ajudge_debate(uniforms, run_settings(srv, timeout=1.0, max_retries=1, transport=transport))
        elapsed = time.perf_counter() - started
    assert result.status is Status.INCOMPLETE
    assert cause in result.incomplete_reason, result.incomplete_reason
    assert result.general is None or result.general.verdict is None  # no made-up verdict
    assert "sk-" not in json.dumps(result.settings)
    assert elapsed < 30


@pytest.mark.parametrize("content, cause", [
    ('{"winner": "The Judge"}', "VerdictParseError"),
    ('{"score": 11}', "VerdictParseError"),  # the decision of direct mode is its first structured answer
    ("", "VerdictParseError"),
    ("I think Maya won.", "VerdictParseError"),
])
async def test_persistently_bad_answers_are_never_accepted(uniforms, content, cause):
    with FakeOpenAIServer(responder=structured_only(10**6, content)) as srv:
        result = await ajudge_debate(uniforms, run_settings(srv))
    assert result.status is Status.INCOMPLETE
    assert cause in result.incomplete_reason
    assert result.general is None or result.general.verdict is None


async def test_empty_text_answer_is_incomplete(uniforms):
    def empty_text(body, i):
        if body.get("response_format"):
            return None
        done = FakeOpenAIServer().completion(body, i)
        done["choices"][0]["message"]["content"] = ""
        return done

    with FakeOpenAIServer(responder=empty_text) as srv:
        result = await ajudge_debate(uniforms, run_settings(srv))
    assert result.status is Status.INCOMPLETE and "empty answer" in result.incomplete_reason


async def test_api_key_never_reaches_results(uniforms):
    with FakeOpenAIServer() as srv:
        s = run_settings(srv, api_key="sk-secret-123")
        result = await ajudge_debate(uniforms, s)
        sent = set(srv.authorizations)
    assert result.status is Status.COMPLETE
    assert sent == {"Bearer sk-secret-123"}  # the key went where it belongs, on every request
    assert "sk-secret-123" not in result.model_dump_json()


@pytest.mark.parametrize("password", ["pw", "s3cr%40t"])
async def test_a_server_echoing_the_authorization_header_leaks_no_password(uniforms, password):
    import base64

    srv = FakeOpenAIServer(responder=lambda body, n: Fault(status=400, body={"error": {
        "message": f"bad request from {srv.headers[n].get('authorization')} ({password})"}}))
    with srv:
        url = srv.base_url.replace("http://", f"http://judge:{password}@")
        result = await ajudge_debate(uniforms, run_settings(srv, base_url=url))
    echoed = srv.headers[0]["authorization"]
    assert echoed == "Basic " + base64.b64encode(f"judge:{password}".encode()).decode()
    assert result.status is Status.INCOMPLETE and "bad request from" in result.incomplete_reason
    text = result.model_dump_json()
    assert echoed.split()[1] not in text and password not in text, result.incomplete_reason


async def test_requests_per_second_limit_spaces_requests(uniforms):
    """A rate limit is never exceeded (a lower bound on spacing: a slow machine only spaces requests more)."""
    with FakeOpenAIServer() as srv:
        s = run_settings(srv, requests_per_second=20, max_concurrency=8).model_copy(update={"mode": "chronological"})
        result = await ajudge_debate(uniforms, s)
        arrivals = list(srv.arrivals)
    assert result.status is Status.COMPLETE
    # 8 requests (4 analyses with their scores, 2 judgments and decisions) at 20 per second span at least 7
    # intervals of 50 ms (less a little transit jitter)
    assert len(arrivals) == 8 and arrivals[-1] - arrivals[0] >= 0.3


@pytest.mark.parametrize("transport, usage", [
    ("http", {"prompt_tokens": "many", "completion_tokens": 3}), ("http", "garbage"),
    # numbers that are no counts on both transports (langchain-openai itself fails on a string, before us)
    *((t, u) for t in ("http", "langchain") for u in ({"prompt_tokens": 10**30, "completion_tokens": 10**30},
                                                      {"prompt_tokens": -4, "completion_tokens": 2.5}))])
async def test_usage_that_is_not_a_count_is_counted_locally(uniforms, transport, usage):
    def odd_usage(body, n):
        done = FakeOpenAIServer().completion(body, n)
        done["usage"] = usage
        return done

    with FakeOpenAIServer(responder=odd_usage) as srv:
        result = await ajudge_debate(uniforms, run_settings(srv, transport=transport))
    assert result.status is Status.COMPLETE, result.incomplete_reason
    u = result.usage
    assert 0 < u.prompt_tokens < 10**6 and 0 < u.completion_tokens < 10**6


async def test_an_escalation_server_echoing_the_authorization_header_leaks_no_password(uniforms, monkeypatch):
    import base64

    from debatrix.core.probabilities import CalibrationMap
    from debatrix.core.settings import EscalationSettings
    from debatrix.graphs import finish

    # every verdict of the first judge is under the bar, so the debate goes up to the second server
    fitted = CalibrationMap(model="fake-model", mode="flow", a=1.0, b=0.0, n=40, ceiling=0.6, source="test")
    monkeypatch.setattr(finish, "calibration_for", lambda model, mode, layout, profile=None: fitted)
    with FakeOpenAIServer() as first:
        echo = FakeOpenAIServer(responder=lambda body, n: Fault(status=400, body={"error": {
            "message": f"bad request from {echo.headers[n].get('authorization')}"}}))
        with echo:
            strong = LLMSettings(base_url=echo.base_url.replace("http://", "http://judge:hunter2@"),
                                 model="fake-model", max_retries=0)
            settings = run_settings(first).model_copy(update={
                "mode": "flow", "escalate": EscalationSettings(llm=strong, below=0.99)})
            result = await ajudge_debate(uniforms, settings)
    token = base64.b64encode(b"judge:hunter2").decode()
    assert echo.headers and echo.headers[0]["authorization"] == f"Basic {token}"
    assert result.escalation is not None and result.escalation.escalated
    assert result.status is Status.INCOMPLETE and "bad request from" in result.incomplete_reason
    text = result.model_dump_json()
    assert token not in text and "hunter2" not in text, result.incomplete_reason
