"""Failures end in a typed error or a result flagged incomplete, never a made-up verdict."""

from __future__ import annotations

import httpx
import pytest

from debatrix.app.api import ajudge_debate
from debatrix.core.results import Status
from debatrix.testing import ScriptedChatModel, analysis_of

from .conftest import settings

OK = {"decide_debate": {"Maya": 7, "Theo": 6, "winner": "Maya"}, "panel_decide": {"winner": "Maya"}}


async def test_winner_that_is_not_a_debater_is_repaired_once_then_incomplete(uniforms):
    model = ScriptedChatModel(script={**OK, "decide_debate": {"Maya": 7, "Theo": 6, "winner": "Bob"}})
    result = await ajudge_debate(uniforms, settings("direct", orders=1), model)
    assert result.status is Status.INCOMPLETE
    assert "general/decide_debate: VerdictParseError" in result.incomplete_reason
    assert "Bob" in result.incomplete_reason
    assert sum(c.node == "decide_debate" for c in model.calls) == 2  # one repair attempt
    assert result.general.verdict is None  # no default verdict


async def test_malformed_json_repaired(uniforms):
    answers = iter(["The winner is clearly Maya!", '{"Maya": 8, "Theo": 5, "winner": "Maya"}'])
    model = ScriptedChatModel(script={**OK, "decide_debate": lambda c: next(answers)})
    result = await ajudge_debate(uniforms, settings("direct", orders=1), model)
    assert result.status is Status.COMPLETE
    assert result.general.verdict.winner == "Maya"
    assert result.usage.repairs == 1 and result.usage.llm_calls == 3
    repair = [c for c in model.calls if c.node == "decide_debate"][1]
    assert "could not be used: not valid JSON" in repair.messages[-1].content


async def test_score_out_of_range_is_incomplete(uniforms):
    model = ScriptedChatModel(script={**OK, "decide_debate": {"Maya": 11, "Theo": 6, "winner": "Maya"}})
    result = await ajudge_debate(uniforms, settings("direct"), model)
    assert result.status is Status.INCOMPLETE
    assert "VerdictParseError" in result.incomplete_reason and "less than or equal to 10" in result.incomplete_reason
    assert result.general.verdict is None and result.general.debater_judgments == ()  # no verdict not made


async def test_empty_answer_is_incomplete(uniforms):
    model = ScriptedChatModel(script={**OK, "analyze_speech": ""})
    result = await ajudge_debate(uniforms, settings("chronological"), model)
    assert result.status is Status.INCOMPLETE
    assert "general/analyze_speech" in result.incomplete_reason and "empty answer" in result.incomplete_reason
    # one unreadable analysis is survived (the speech is judged without it), a second in a row is not: the loop
    # stopped there (each after its one repair request), no further analyses and no judgment were paid for
    assert sum(c.node == "analyze_speech" for c in model.calls) == 4
    assert not any(c.node == "judge_debate" for c in model.calls)


async def test_context_window_is_checked_before_any_call(uniforms):
    model = ScriptedChatModel(script=OK)
    result = await ajudge_debate(uniforms, settings("direct", context_window=800, max_output_tokens=200), model)
    assert result.status is Status.INCOMPLETE
    assert "ContextWindowExceeded" in result.incomplete_reason and "full debate transcript" in result.incomplete_reason
    assert "800 tokens" in result.incomplete_reason
    assert model.calls == [] and result.usage.llm_calls == 0


async def test_context_window_exceeded_mid_run(uniforms):
    # each speech fits (preflight passes) but the final judges' input (all analyses) does not
    long = "x " * 900
    model = ScriptedChatModel(script={**OK, "analyze_speech": lambda c: analysis_of(c, note=f"{c.target} {long}")})
    result = await ajudge_debate(uniforms, settings("chronological", context_window=2000, max_output_tokens=200),
                                 model)
    assert result.status is Status.INCOMPLETE and "ContextWindowExceeded" in result.incomplete_reason


async def test_transient_error_is_retried(uniforms):
    state = {"n": 0}

    def flaky(call):
        state["n"] += 1
        if state["n"] == 1:
            raise httpx.ConnectError("connection reset")
        return "fine"

    model = ScriptedChatModel(script={**OK, "judge_debate": flaky})
    result = await ajudge_debate(uniforms, settings("direct", retry_max_wait=0.01), model)
    assert result.status is Status.COMPLETE
    assert result.usage.retries == 1


async def test_timeout_after_retries_is_incomplete(uniforms):
    model = ScriptedChatModel(script=OK, latency=1.0)
    result = await ajudge_debate(uniforms, settings("direct", timeout=0.05, max_retries=1, retry_max_wait=0.01),
                                 model)
    assert result.status is Status.INCOMPLETE
    assert "LLMTimeoutError" in result.incomplete_reason and "after 2 attempts" in result.incomplete_reason


async def test_non_transient_error_is_not_retried(uniforms):
    def boom(call):
        raise ValueError("programming error in a custom model")

    model = ScriptedChatModel(script={**OK, "judge_debate": boom})
    result = await ajudge_debate(uniforms, settings("direct", orders=1), model)
    # a failing custom model ends the run incomplete, naming the error; it is not retried
    assert result.status is Status.INCOMPLETE
    assert "ValueError: programming error in a custom model" in result.incomplete_reason
    assert sum(c.node == "judge_debate" for c in model.calls) == 1


def test_no_model_configured_is_a_clear_error(monkeypatch):
    from debatrix.core.errors import LLMError
    from debatrix.llm.gateway import make_chat_model
    from debatrix.core.settings import LLMSettings

    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(k, raising=False)
    with pytest.raises(LLMError, match="no LLM configured"):
        make_chat_model(LLMSettings.from_env())


def test_last_full_sentence():
    from debatrix.core.prompting import token_cap
    from debatrix.llm.prose_calls import last_full_sentence

    assert last_full_sentence('He said "no." Then he lef') == 'He said "no."'
    assert last_full_sentence("Is it? Yes! And then") == "Is it? Yes!"
    assert last_full_sentence("no sentence end at all") == "no sentence end at all […]"
    assert last_full_sentence("Pi is 3.14 and e is 2.7") == "Pi is 3.14 and e is 2.7 […]"
    assert token_cap(100) == 200


async def test_response_cache_makes_a_rerun_free(uniforms, tmp_path):
    """A run killed part-way and started again with the same cache pays for no call that had been answered."""
    from debatrix.app.api import ajudge_debate
    from debatrix.testing import ScriptedChatModel

    from .conftest import winner_script

    cache = tmp_path / "answers.sqlite"
    dims = {"argument": "Maya", "source": "tie", "language": "Theo"}

    class Dies(ScriptedChatModel):
        after: int = 10**9

        def _answer(self, messages, run_manager):
            if len(self.calls) >= self.after:
                raise ConnectionResetError("killed")
            return super()._answer(messages, run_manager)

    first = Dies(script=winner_script(dims, "Maya"), after=20)
    s = settings("debatrix", cache_path=cache, max_retries=0)
    r1 = await ajudge_debate(uniforms, s, first)
    assert r1.status.value == "incomplete"
    answered = 20
    second = Dies(script=winner_script(dims, "Maya"))
    r2 = await ajudge_debate(uniforms, s, second)
    assert r2.status.value == "complete", r2.incomplete_reason
    assert r2.usage.cached_calls == answered  # every answered call, none again
    assert len(second.calls) == r2.usage.llm_calls - r2.usage.cached_calls
    third = Dies(script=winner_script(dims, "Maya"))
    r3 = await ajudge_debate(uniforms, s, third)
    assert len(third.calls) == 0 and r3.usage.cached_calls == r3.usage.llm_calls == 28
    assert sum(n.cached_calls for n in r2.usage.by_node.values()) == r2.usage.cached_calls  # per node too
    assert all(n.cached_calls == n.calls for n in r3.usage.by_node.values())
    assert r3.winner == r2.winner


@pytest.mark.parametrize("score_in_analysis", [True, False])
async def test_one_analysis_that_fails_its_schema_twice_is_missing_and_the_debate_is_still_judged(
        uniforms, score_in_analysis):
    """An answer cut at its cap fails the schema, and so does its repair: that speech has no analysis (flagged, its
    calls counted), the later analyses and the judgment go on without it, and the result is complete."""
    def analysis(call):
        return "Maya argues that" if call.dimension == "argument" and call.index == 1 else analysis_of(call)

    model = ScriptedChatModel(script={**OK, "analyze_speech": analysis})
    result = await ajudge_debate(uniforms, settings("debatrix", score_in_analysis=score_in_analysis), model)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    arg = result.dimension("argument")
    missing = [a for a in arg.analyses if a.missing]
    assert [a.index for a in missing] == [1] and "StructuredOutputError" in missing[0].missing
    assert 1 not in {s.index for s in arg.speech_judgments} and len(arg.speech_judgments) == 3
    assert any("speech 2" in w for w in arg.verdict.warnings)
    assert result.usage.llm_calls == len(model.calls)  # the failed answer and its repair are counted
    assert result.usage.repairs >= 1
    # the later analyses and the judgment never read the missing one as if it said something
    later = [c for c in model.calls if c.node in ("analyze_speech", "judge_debate") and c.dimension == "argument"
             and (c.index or 0) != 1]
    assert later and all("Maya argues that" not in str(c.messages[-1].content) for c in later)
    assert all(len(d.speech_judgments) == 4 for d in result.dimensions if d.name != "argument")


async def test_a_debater_none_of_whose_analyses_can_be_read_is_not_judged(uniforms):
    def analysis(call):  # every analysis of Maya's speeches (1 and 3) fails, never two in a row
        return "cut" if call.dimension == "argument" and call.index in (0, 2) else analysis_of(call)

    model = ScriptedChatModel(script={**OK, "analyze_speech": analysis})
    result = await ajudge_debate(uniforms, settings("debatrix"), model)
    assert result.status is Status.INCOMPLETE
    assert "argument/judge_debate: UnreadableAnalyses: no analysis of the speeches of Maya" in result.incomplete_reason
    assert not any(c.node == "judge_debate" and c.dimension == "argument" for c in model.calls)
    assert result.usage.llm_calls == len(model.calls)


def test_a_failure_shared_by_several_steps_is_said_once_with_all_its_places():
    """A dead endpoint fails every dimension with the same error: the result's reason says the error once, after
    every place it happened; distinct errors each keep theirs."""
    from hypothesis import given, strategies as st

    from debatrix.graphs.finish import said_once

    places = st.sampled_from(["argument/judge_debate", "source/judge_debate", "panel_comment", "prepare"])
    whats = st.sampled_from(["ServiceUnavailable: endpoint down", "RunStopped: stopped", "LLMError: bad answer"])

    @given(st.lists(st.tuples(places, whats), min_size=1, max_size=8))
    def check(items):
        text = said_once([f"{w}: {m}" for w, m in items])
        for w, m in items:
            assert text.count(m) == 1 and w in text
        assert len(text.split("; ")) == len({m for _, m in items})

    check()
