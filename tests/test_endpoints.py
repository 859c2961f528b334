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
    assert all(server.refusal(body) is None for body in sent)  # none of them would have been refused
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
def test_decision_samples_where_a_server_samples_ignores_or_refuses_n(profile):
    """--decision-samples 4: OpenAI and vLLM sample four answers a request (their shares are the estimates);
    Ollama's /v1 answers once, so each answer counts as certain and the result says n was ignored; the llama.cpp
    server refuses n > 1, so the run ends at its first request, incomplete, naming why, with no verdict."""
    result, sent = judged(profile, "flow", decision_samples=4)
    server = SERVER_PROFILES[profile]
    methods = {d.verdict.method for d in result.dimensions if d.verdict and not d.verdict.not_judged}
    warned = " ".join(w for d in result.dimensions if d.verdict for w in d.verdict.warnings)
    if server.n == "yes":
        assert result.status is Status.COMPLETE and methods == {"sampled"} and "among 4 answers" in warned
    elif server.n == "ignored":
        assert result.status is Status.COMPLETE and methods == {"argmax"}
        assert "asked 4 answers (it ignores n)" in warned and "sampled" not in methods
    else:
        assert result.status is Status.INCOMPLETE and "Only one completion choice" in result.incomplete_reason
        assert result.general is None or result.general.verdict is None or result.general.verdict.winner is None
        assert len(sent) == 1  # refused at once: nothing more was sent
