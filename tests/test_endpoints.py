"""The endpoint recipes of docs/researchers.md ("Endpoints"), each against the fake server answering as that server
does (:data:`debatrix.testing.SERVER_PROFILES`: log probabilities or none, the top_logprobs cap, what it does with
n, the parameters it refuses): the run completes where the recipe says it does, no request is one the server
refuses, and the result says what its figures are."""

from __future__ import annotations

import asyncio

import pytest

from debatrix import JudgeSettings, LLMSettings, MemorySettings
from debatrix.app.api import ajudge_debate
from debatrix.core.results import Status
from debatrix.testing import SERVER_PROFILES, FakeOpenAIServer

from .conftest import EXAMPLES


def judged(profile: str, mode: str, **llm):
    from debatrix.core.loader import load_debate

    debate = load_debate(EXAMPLES / "four_day_week.yaml")
    with FakeOpenAIServer(profile=profile) as server:
        settings = JudgeSettings(mode=mode, memory=MemorySettings(embedding="hash"),
                                 llm=LLMSettings(base_url=server.base_url, model="m", max_retries=0, **llm))
        result = asyncio.run(ajudge_debate(debate, settings))
        return result, list(server.requests)


@pytest.mark.parametrize("profile", sorted(SERVER_PROFILES))
@pytest.mark.parametrize("mode", ["flow", "direct", "debatrix"])
def test_each_recipes_server_takes_every_request_and_the_result_says_what_its_figures_are(profile, mode):
    result, sent = judged(profile, mode)
    server = SERVER_PROFILES[profile]
    assert result.status is Status.COMPLETE, result.incomplete_reason
    # none is refused, but a field a reasoning model takes no value of (temperature, log probabilities): each is
    # refused once per request already in flight, then never sent again
    refused = [k for k, body in enumerate(sent) if server.refusal(body)]
    fields = {server.refusal(sent[k]) for k in refused}
    assert all("temperature" in r or "logprobs" in r for r in fields)
    assert len(refused) <= len(fields) * LLMSettings().max_concurrency and (not refused or max(refused) < 30)
    assert result.general.verdict.winner is not None or result.general.verdict.not_judged == ""
    if mode == "flow":
        methods = {d.verdict.method for d in result.dimensions if d.verdict and not d.verdict.not_judged}
        warned = " ".join(w for d in result.dimensions if d.verdict for w in d.verdict.warnings)
        if server.logprobs:
            assert methods == {"logprobs"} and "shares of answers" not in warned
        else:  # no probabilities: each answer counts as certain, and every verdict says so
            assert methods == {"argmax"} and "shares of answers, not probabilities" in warned
            assert "P 0." not in result.general.verdict.comment  # no probability that was not given


@pytest.mark.parametrize("profile", sorted(SERVER_PROFILES))
def test_decision_samples_sample_only_where_the_server_gives_no_probabilities(profile):
    """--decision-samples 4: where the server gives log probabilities (OpenAI, vLLM, the llama.cpp server) they are
    read as always and no request asks n (n answers would cost n times the tokens to estimate what they give
    exactly, and llama.cpp refuses n > 1); Ollama's /v1 gives none, so its first decision is asked again for 4
    answers, which it ignores (it answers once): each answer counts as certain and the result says n was
    ignored."""
    result, sent = judged(profile, "flow", decision_samples=4)
    server = SERVER_PROFILES[profile]
    methods = {d.verdict.method for d in result.dimensions if d.verdict and not d.verdict.not_judged}
    warned = " ".join(w for d in result.dimensions if d.verdict for w in d.verdict.warnings)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    refused = [server.refusal(body) for body in sent if server.refusal(body)]
    assert len(refused) <= len(set(refused)) * LLMSettings().max_concurrency  # once a request in flight, then never
    if server.logprobs:
        assert methods == {"logprobs"} and not any(b.get("n") for b in sent) and "sampled" not in warned
    else:
        asked = [b for b in sent if b.get("n")]
        assert asked and all(b["n"] == 4 for b in asked)
        if server.n == "ignored":
            assert methods == {"argmax"} and "asked 4 answers (it ignores n)" in warned
        else:  # a reasoning model samples at its own temperature: the shares of its answers
            assert methods == {"sampled"} and "among 4 answers" in warned
        # once the server has answered without probabilities, no later decision asks for them again
        first = next(i for i, b in enumerate(sent) if b.get("n"))
        assert not any(b.get("logprobs") for b in sent[first + 1:])
    # every request answered is in the run's usage: a decision asked twice counts its first request as a retry
    assert result.usage.llm_calls + result.usage.retries == len(sent) - len(refused)


def test_what_the_figures_are_is_said_of_the_verdicts_that_have_figures_not_of_blind_ones():
    """On Ollama (no probabilities) with a profile that marks source and language blind: the argument verdict says
    its figures are answers taken as certain; a blind dimension, which asked nothing, says no such thing and claims
    no method."""
    from debatrix.core.loader import load_debate

    debate = load_debate(EXAMPLES / "four_day_week.yaml")
    with FakeOpenAIServer(profile="ollama") as server:  # the shipped profile of the model name is read
        settings = JudgeSettings(memory=MemorySettings(embedding="hash"), llm=LLMSettings(
            base_url=server.base_url, model="qwen2.5-coder-1.5b", max_retries=0))
        result = asyncio.run(ajudge_debate(debate, settings))
    assert result.status is Status.COMPLETE, result.incomplete_reason
    by = {d.name: d.verdict for d in result.dimensions}
    blind = [v for v in by.values() if v.blind]
    assert blind and all(v.method == "none" for v in blind)
    assert not any("taken as certain" in w for v in blind for w in v.warnings)
    assert any("taken as certain" in w for w in by["argument"].warnings) and by["argument"].method == "argmax"


def test_a_reasoning_model_on_the_langchain_transport_ends_incomplete_saying_which_transport_goes_on():
    """LangChain's ChatOpenAI cannot leave out a parameter the server refuses: the run ends incomplete (no verdict
    made), its reason the server's words and the way on, the default transport, which does (test above)."""
    result, sent = judged("reasoning", "flow", transport="langchain")
    assert result.status is Status.INCOMPLETE and (result.general is None or result.general.verdict is None)
    assert "Unsupported parameter" in result.incomplete_reason and "without --transport langchain" in \
        result.incomplete_reason, result.incomplete_reason
    assert sent and all(SERVER_PROFILES["reasoning"].refusal(body) for body in sent)
