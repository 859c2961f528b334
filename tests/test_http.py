"""Integration over real HTTP against an OpenAI-compatible server started on 127.0.0.1 by the test: debatrix's own
aiohttp transport (the default) and LangChain's ChatOpenAI (``transport="langchain"``)."""

from __future__ import annotations

import json
import re

import pytest

from debatrix import JudgeSettings, LLMSettings, MemorySettings
from debatrix.app.api import ajudge_debate
from debatrix.graphs import MODES
from debatrix.core.results import JudgeResult, Status
from debatrix.testing import FakeOpenAIServer, instance_of


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer() as s:
        yield s


def http_settings(server, mode: str, **llm) -> JudgeSettings:
    return JudgeSettings(mode=mode, llm=LLMSettings(base_url=server.base_url, model="fake-model", **llm),
                         memory=MemorySettings(embedding="hash"))


def assert_complete(result: JudgeResult, n_dims: int, per_speech: bool) -> None:
    assert result.status is Status.COMPLETE, result.incomplete_reason
    assert len(result.dimensions) == n_dims
    names = {d.name for d in JudgeResult.model_validate_json(result.model_dump_json()).dimensions}
    assert len(names) == n_dims
    for d in result.dimensions:
        assert d.verdict is not None
        if d.verdict.not_judged:  # the flow's language: measured blind, so no judgment is made up
            assert d.verdict.winner is None and not d.debater_judgments and not d.speech_judgments
            continue
        assert len(d.debater_judgments) > 0
        assert bool(d.speech_judgments) is per_speech
    assert result.general.verdict.winner is not None


@pytest.mark.parametrize("mode", list(MODES))
async def test_every_mode_over_http(server, uniforms, mode):
    before = len(server.requests)
    result = await ajudge_debate(uniforms, http_settings(server, mode))
    n = 1 if mode in ("chronological", "direct") else 3
    assert_complete(result, n, MODES[mode].per_speech)
    sent = server.requests[before:]
    assert len(sent) == result.usage.llm_calls
    if mode == "flow":  # to an endpoint: a passage's decisions in one JSON answer, each value's logprobs read
        assert all(r.get("logprobs") is True and r["response_format"]["type"] == "json_schema" for r in sent)
        assert len(sent) == len(uniforms.passages)  # one request a passage, its questions together
        assert [f.index for f in result.flow] == list(range(len(uniforms.speeches)))
        marks = [m for f in result.flow for m in f.marks]
        assert {m.id for m in marks} == {p.id for p in uniforms.passages}
        assert len({m.argument for m in marks}) > 1 and all(0 < m.argument < 1 for m in marks)
        assert any(f.lines for f in result.flow) and all(f.lines == () or all(x.by for x in f.lines) for f in result.flow)
        assert all(f.counted == 0 for f in result.flow)  # the fake server gives probabilities: none from answers
        assert result.checks.flags == ()
        return
    structured = [r for r in sent if "response_format" in r]
    assert structured and all(r["response_format"]["type"] == "json_schema" for r in structured)
    assert all(r["temperature"] == 0 for r in sent)
    schemas = [r["response_format"]["json_schema"]["schema"] for r in structured
               if r["response_format"]["json_schema"]["name"] == "DecisionAnswer"]
    assert all(set(s["properties"]["winner"]["enum"]) <= {"Maya", "Theo", "tie"} for s in schemas)
    assert all(s["properties"]["Maya"]["maximum"] == 10 for s in schemas)
    # both orders of the debaters (a preference for the first listed cancels out), and logprobs asked for
    assert {tuple(s["required"]) for s in schemas} == {("Maya", "Theo", "winner"), ("Theo", "Maya", "winner")}
    assert all(r.get("logprobs") is True and r.get("top_logprobs") == 10 for r in structured)


@pytest.mark.parametrize("method", ["json_schema", "tool"])
async def test_both_transports_send_the_same_requests(server, uniforms, method):
    """The lean transport is a drop-in for ChatOpenAI: same messages, schema, sampling and length cap."""
    sent = {}
    for transport in ("http", "langchain"):
        before = len(server.requests)
        result = await ajudge_debate(uniforms, http_settings(server, "chronological", transport=transport,
                                                             structured_output=method))
        assert_complete(result, 1, True)
        sent[transport] = server.requests[before:]
        assert result.usage.llm_calls == len(sent[transport])

    def norm(r):
        keys = ("model", "temperature", "messages", "response_format", "tools", "tool_choice")
        out = {k: r.get(k) for k in keys}
        # earlier answers come back in later prompts; the fake numbers its answers, so blank them
        out["messages"] = [{**m, "content": "<answer>"} if m["role"] == "assistant" else m for m in r["messages"]]
        out["cap"] = r.get("max_completion_tokens", r.get("max_tokens"))
        return re.sub(r"number \d+|\(\d+\)", "N", json.dumps(out, sort_keys=True))  # the fake's own counters

    # the calls of one column run concurrently, so compare as multisets
    assert sorted(map(norm, sent["http"])) == sorted(map(norm, sent["langchain"]))


async def test_tool_calling_method_over_http(server, uniforms):
    before = len(server.requests)  # the server is the module's: only this run's requests count
    result = await ajudge_debate(uniforms, http_settings(server, "direct", structured_output="tool"))
    assert_complete(result, 1, False)
    mine = server.requests[before:]
    assert mine and any("tools" in r for r in mine)


async def test_parse_method_over_http_fails_cleanly_on_prose(server, uniforms):
    # the fake server answers prose to plain requests: the parse method must end incomplete, not crash
    result = await ajudge_debate(uniforms, http_settings(server, "direct", structured_output="parse"))
    assert result.status is Status.INCOMPLETE and "VerdictParseError" in result.incomplete_reason


@pytest.mark.data
@pytest.mark.parametrize("mode", list(MODES))
async def test_panelbench_debates_over_http(server, mode):
    from debatrix import load_debate

    from .conftest import PANELBENCH, need_data

    need_data(PANELBENCH)
    art = load_debate(PANELBENCH / "DebateArt" / "motion" / "debateart_0466.yml")
    bp = load_debate(PANELBENCH / "BP-Competition" / "motion" / "bp_020.yml")
    per_speech = MODES[mode].per_speech
    single = mode in ("chronological", "direct")
    r = await ajudge_debate(art, http_settings(server, mode))
    assert_complete(r, 1 if single else 3, per_speech)
    r = await ajudge_debate(bp, http_settings(server, mode))
    assert_complete(r, 1 if single else 4, per_speech)
    assert r.general.verdict.winner in {d.name for d in bp.debaters}
    json.loads(r.model_dump_json())


async def test_unreachable_server_is_incomplete_not_a_crash(uniforms):
    s = JudgeSettings(mode="direct", llm=LLMSettings(base_url="http://127.0.0.1:9/v1", max_retries=1,
                                                     retry_max_wait=0.01), memory=MemorySettings(embedding="hash"))
    result = await ajudge_debate(uniforms, s)
    assert result.status is Status.INCOMPLETE and "cannot reach the model server" in result.incomplete_reason


async def test_text_answers_are_capped_and_cut_at_a_sentence(uniforms):
    """Small models ignore "at most N words": text requests carry max_tokens, and an answer that hits the cap is
    cut back to its last full sentence and marked truncated in the usage records."""

    def long_answer(body, n):
        if body.get("response_format") or body.get("tools"):
            return None
        done = FakeOpenAIServer().completion(body, n)
        done["choices"][0]["message"]["content"] = "First point holds. Second point is weak! Third point was cut mi"
        done["choices"][0]["finish_reason"] = "length"
        return done

    with FakeOpenAIServer(responder=long_answer) as srv:
        s = JudgeSettings(mode="chronological", analysis_words=100, comment_words=40,
                          llm=LLMSettings(base_url=srv.base_url, model="fake-model"),
                          memory=MemorySettings(embedding="hash"))
        result = await ajudge_debate(uniforms, s)
        caps = {r.get("max_completion_tokens", r.get("max_tokens")) for r in srv.requests if not r.get("response_format")}
    assert result.status is Status.COMPLETE, result.incomplete_reason
    # the judgment, 40 words per debater and one more (analyses are structured: quotations and notes)
    assert caps == {232}
    assert result.dimensions[0].verdict.comment == "First point holds. Second point is weak!"
    assert result.usage.truncated_calls == result.usage.llm_calls - sum(
        1 for r in srv.requests if r.get("response_format")) == 2


def merged_grammar_settings(srv: FakeOpenAIServer) -> JudgeSettings:
    """Direct mode, comment and decision in one call, comment lengths in the schema (as on the local server)."""
    return JudgeSettings(mode="direct", comment_words=20, merge_score_call=True,
                         llm=LLMSettings(base_url=srv.base_url, model="fake-model", schema_length_limits=True),
                         memory=MemorySettings(embedding="hash"))


async def test_structured_answer_cut_at_the_token_limit_is_repaired(uniforms):
    """A small model rambling inside a JSON string hits max_tokens: that is one failed attempt and a repair
    request, never a crash; the server-side schema carries maxLength when the backend enforces grammars."""
    cut = {"n": 0}

    def ramble_once(body, n):
        if not body.get("response_format") or cut["n"]:
            return None
        cut["n"] += 1
        done = FakeOpenAIServer().completion(body, n)
        done["choices"][0]["message"]["content"] = '{"comment": "and so on and so on and so on'
        done["choices"][0]["finish_reason"] = "length"
        return done

    with FakeOpenAIServer(responder=ramble_once) as srv:
        result = await ajudge_debate(uniforms, merged_grammar_settings(srv))
        schemas = [r["response_format"]["json_schema"]["schema"] for r in srv.requests if r.get("response_format")]
    assert result.status is Status.COMPLETE, result.incomplete_reason
    assert result.usage.repairs == 1 and result.usage.truncated_calls == 1
    assert result.usage.llm_calls == 2 + 1  # the judgment with its scores and winner in each order, one repair
    assert {sch["properties"]["comment"]["maxLength"] for sch in schemas} == {720}  # 12 characters a word


async def test_comment_stopped_at_max_length_keeps_whole_sentences(uniforms):
    """A grammar-enforcing server stops a rambling comment at maxLength, perhaps mid-word: the judge keeps the
    whole sentences and counts the answer as truncated."""
    def full_length(body, n):
        fmt = body.get("response_format")
        if not fmt or "comment" not in fmt["json_schema"]["schema"]["properties"]:
            return None
        limit = fmt["json_schema"]["schema"]["properties"]["comment"]["maxLength"]
        text = ("Clear case. " + "It goes on and on " * 100)[:limit]
        answer = instance_of(fmt["json_schema"]["schema"], n)
        answer["comment"] = text
        done = FakeOpenAIServer().completion(body, n)
        done["choices"][0]["message"]["content"] = json.dumps(answer)
        return done

    with FakeOpenAIServer(responder=full_length) as srv:
        result = await ajudge_debate(uniforms, merged_grammar_settings(srv))
    assert result.status is Status.COMPLETE, result.incomplete_reason
    assert result.dimensions[0].verdict.comment == "Clear case."
    assert result.usage.truncated_calls == 2  # the judgment in each order


def test_http_transport_honours_proxy_variables(monkeypatch):
    """Like the OpenAI SDK: HTTPS_PROXY for an API, NO_PROXY for a local server (looked up once per endpoint)."""
    from debatrix.llm.http_chat import _env_proxy

    for var in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"):
        monkeypatch.delenv(var, raising=False)
    assert _env_proxy("https://api.openai.com/v1/chat/completions") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert _env_proxy("https://api.openai.com/v1/chat/completions") == "http://proxy.example:3128"
    assert _env_proxy("http://127.0.0.1:8080/v1/chat/completions") is None
