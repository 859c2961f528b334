"""Every mode with a scripted chat model: the exact number and kind of LLM calls, and the assembled result."""

from __future__ import annotations

from collections import Counter

import pytest

from debatrix.app.api import ajudge_debate
from debatrix.core.results import Status
from debatrix.core import prompting as P
from debatrix.testing import ScriptedChatModel, analysis_of
from debatrix.core.modes import expected_calls

from .conftest import settings

DEBATER_SCORES = {"argument": {"Maya": 8, "Theo": 4}, "source": {"Maya": 6, "Theo": 5},
                  "language": {"Maya": 5, "Theo": 5}, "general": {"Maya": 7, "Theo": 6}}
WINNERS = {"argument": "Maya", "source": "tie", "language": "Theo", "general": "Theo"}


def decision(c) -> dict:
    return {**DEBATER_SCORES[c.dimension], "winner": WINNERS[c.dimension]}


def script() -> dict:
    return {
        "score_speech": lambda c: {"score": c.index + 1 + (c.dimension == "source")},
        "judge_debate": lambda c: f"Maya argued on {c.dimension}.\nTheo answered on {c.dimension}.\nWinner: x",
        "decide_debate": decision,
        "panel_decide": {"winner": "Maya"},
    }


PER_SPEECH = {"analyze_speech": 4, "score_speech": 4}
# the judgments that compare debaters are asked in both orders of the debaters (settings.orders = 2)
FINAL = {"judge_debate": 2, "decide_debate": 2}
PANEL = {"panel_comment": 2, "panel_decide": 2}


def times(counts: dict, k: int) -> dict:
    return {n: c * k for n, c in counts.items()}


EXPECTED_CALLS = {
    "debatrix": {**times(PER_SPEECH, 3), **times(FINAL, 3), **PANEL},
    "chronological": {**PER_SPEECH, **FINAL},
    "dimensional": {**times(FINAL, 3), **PANEL},
    "noniterative": {**times(PER_SPEECH, 3), **times(FINAL, 3), **PANEL},
    "direct": dict(FINAL),
}


@pytest.mark.parametrize("score_in_analysis", [False, True], ids=["score-call", "score-in-analysis"])
@pytest.mark.parametrize("mode", list(EXPECTED_CALLS))
async def test_call_counts_and_usage(mode, score_in_analysis, uniforms):
    model = ScriptedChatModel(script=script())
    result = await ajudge_debate(uniforms, settings(mode, score_in_analysis=score_in_analysis), model)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    expected = {n: c for n, c in EXPECTED_CALLS[mode].items() if not (score_in_analysis and n == "score_speech")}
    assert Counter(c.node for c in model.calls) == expected
    assert result.usage.llm_calls == sum(expected.values())
    # the progress display's total comes from the mode's shape: it must match what the graph really does
    n_dims = len(result.dimensions)
    assert expected_calls(mode, 4, 2, n_dims, merge_score_call=False, orders=2,
                          score_in_analysis=score_in_analysis) == len(model.calls)
    assert {n: u.calls for n, u in result.usage.by_node.items()} == expected
    if score_in_analysis:  # every speech is still scored, from its analysis's answer
        assert all(len(d.speech_judgments) == 4 and all(s.score == 7 for s in d.speech_judgments)
                   for d in result.dimensions if d.analyses)
    assert result.usage.prompt_tokens == sum(u.prompt_tokens for u in result.usage.by_node.values()) > 0
    assert result.mode == mode and result.settings["mode"] == mode
    # text calls first, then the short structured call (the paper's comment-then-score order)
    kinds = {c.node: c.kind for c in model.calls}
    assert kinds["judge_debate"] == "text" and kinds["decide_debate"] == "DecisionAnswer"
    assert kinds.get("analyze_speech", "SpeechAnalysisAnswer") == "SpeechAnalysisAnswer"  # quotes chosen, then notes
    assert kinds.get("score_speech", "ScoreAnswer") == "ScoreAnswer"


async def test_debatrix_result_is_assembled_exactly(uniforms):
    result = await ajudge_debate(uniforms, settings("debatrix", score_in_analysis=False),
                                 ScriptedChatModel(script=script()))
    assert [d.name for d in result.dimensions] == ["argument", "source", "language"]
    arg, src, lang = result.dimensions
    assert (arg.weight, src.weight, lang.weight) == (3, 2, 2)
    assert (arg.verdict.winner, arg.verdict.score_winner) == ("Maya", "Maya")
    assert (src.verdict.winner, src.verdict.score_winner) == (None, None)  # scores 6 vs 5: within the ±3 tie band
    assert (lang.verdict.winner, lang.verdict.score_winner) == ("Theo", None)  # equal scores
    assert [(s.index, s.speaker, s.score) for s in src.speech_judgments] == [
        (0, "Maya", 2), (1, "Theo", 3), (2, "Maya", 4), (3, "Theo", 5)]
    assert [a.index for a in arg.analyses] == [0, 1, 2, 3]
    # the analysis as the later steps read it: each quotation (a passage of the speech) with its note, then what
    # the speech answers
    quote = P.quotable_passages(uniforms.speeches[1].content)[0]
    assert arg.analyses[1].analysis == (f'"{quote}" Theo analyze_speech comment on argument speech 2. '
                                        "Theo answers the claims of speech 1.")
    # a speech's judgment is its analysis with the score read from it (the original's speech judgment)
    assert src.speech_judgments[1].comment == src.analyses[1].analysis
    assert arg.debate_analysis == "Maya argued on argument.\nTheo answered on argument.\nWinner: x"
    assert arg.verdict.comment == arg.debate_analysis
    assert [(j.debater, j.score) for j in arg.debater_judgments] == [("Maya", 8), ("Theo", 4)]
    # each debater's comment is its own paragraph of the judgment
    assert [j.comment for j in arg.debater_judgments] == ["Maya argued on argument.", "Theo answered on argument."]
    general = result.general
    assert [(j.debater, j.score) for j in general.debater_judgments] == [("Maya", round(46 / 7, 3)),
                                                                          ("Theo", round(32 / 7, 3))]
    assert (general.verdict.winner, general.verdict.score_winner) == ("Maya", "Maya")
    assert general.verdict.comment == "panel_comment comment on general."
    assert result.winner == "Maya"


async def test_single_dimension_modes_use_general(uniforms):
    result = await ajudge_debate(uniforms, settings("chronological"), ScriptedChatModel(script=script()))
    assert [d.name for d in result.dimensions] == ["general"]
    assert result.general.verdict.winner == "Theo" and result.general.verdict.score_winner == "Maya"
    assert len(result.general.speech_judgments) == 4


async def test_iterative_context_is_previous_analyses_vs_raw_speeches(uniforms):
    first_speech_line = uniforms.speeches[0].content.splitlines()[0]
    for mode, sees_analysis, sees_speech in (("debatrix", True, False), ("noniterative", False, True)):
        model = ScriptedChatModel(script=script())
        await ajudge_debate(uniforms, settings(mode), model)
        second = next(c for c in model.calls if c.node == "analyze_speech" and c.index == 1
                      and c.dimension == "argument")
        prompt = second.messages[-1].content
        assert ("Maya analyze_speech comment on argument speech 1." in prompt) is sees_analysis, mode
        assert (first_speech_line in prompt) is sees_speech, mode


async def test_decisions_read_the_judgment_not_the_material(uniforms):
    """The transcript (or the analyses) is sent once per column: the scores and the winner are read from the
    judgment alone, in a short call that carries none of the debate material."""
    model = ScriptedChatModel(script=script())
    await ajudge_debate(uniforms, settings("direct"), model)
    judge = next(c for c in model.calls if c.node == "judge_debate")
    decide = next(c for c in model.calls if c.node == "decide_debate")
    first_line = uniforms.speeches[0].content.splitlines()[0]
    assert first_line in judge.messages[-1].content
    assert all(first_line not in m.content for m in decide.messages)
    assert "Theo answered on general." in decide.messages[-1].content


async def test_analyses_share_the_speech_prefix_across_dimensions(uniforms):
    """The three dimensions' requests for one speech start with the same system prompt, header and speech, so a
    server's prompt cache reads the speech once; what differs by dimension comes after it."""
    model = ScriptedChatModel(script=script())
    await ajudge_debate(uniforms, settings("debatrix"), model)
    calls = [c for c in model.calls if c.node == "analyze_speech" and c.index == 2]
    texts = [c.messages[-1].content for c in calls]
    assert len({c.messages[0].content for c in calls}) == 1
    speech_end = texts[0].index(uniforms.speeches[2].content[-40:]) + 40
    assert len({t[:speech_end] for t in texts}) == 1
    assert all("analyze_speech comment on" not in t[:speech_end] for t in texts)  # earlier analyses come after


async def test_noniterative_prompt_extends_the_previous_one(uniforms):
    """In the non-iterative mode the analysis of speech i+1 starts with everything the analysis of speech i read
    (the earlier speeches in order, then speech i), so a prompt cache reads each speech once per column."""
    model = ScriptedChatModel(script=script())
    await ajudge_debate(uniforms, settings("noniterative"), model)
    calls = sorted((c for c in model.calls if c.node == "analyze_speech" and c.dimension == "argument"),
                   key=lambda c: c.index)
    for a, b in zip(calls, calls[1:]):
        read = a.messages[-1].content
        assert b.messages[-1].content.startswith(read[: read.rindex(">>>") + 3])  # up to the end of speech i


async def test_merged_score_call(uniforms):
    def merged(c):
        if c.kind == "SpeechAnalysisAnswer":
            return analysis_of(c, note=f"{c.target} c {c.node}", score=6)
        if c.kind == "CommentDecisionAnswer":
            return {"comment": "Maya did well.\nTheo less so.", "Maya": 8, "Theo": 5, "winner": c.choices[0]}
        if c.kind == "CommentWinnerAnswer":
            return {"comment": "w", "winner": "Maya"}
        raise AssertionError(c.kind)

    model = ScriptedChatModel(script={"analyze_speech": merged, "judge_debate": merged, "panel_comment": merged})
    s = settings("debatrix", merge_score_call=True)
    result = await ajudge_debate(uniforms, s, model)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    assert Counter(c.node for c in model.calls) == {"analyze_speech": 12, "judge_debate": 6, "panel_comment": 2}
    assert expected_calls("debatrix", 4, 2, 3, merge_score_call=True, orders=2) == len(model.calls)
    assert result.dimensions[0].speech_judgments[0].comment.endswith(" Maya c analyze_speech.")
    assert result.dimensions[0].speech_judgments[0].score == 6
    assert [j.score for j in result.dimensions[0].debater_judgments] == [8, 5]
    assert result.winner == "Maya" and result.general.verdict.comment == "w"


async def test_bp_debate_every_mode(bp_short):
    teams = [d.name for d in bp_short.debaters]
    for mode, dims in (("debatrix", ["argument", "source", "language", "clash"]), ("direct", ["general"])):
        model = ScriptedChatModel(script={
            "decide_debate": {**{t: 3 + i for i, t in enumerate(teams)}, "winner": "Closing Government"},
            "panel_decide": {"winner": "Closing Opposition"},
        })
        result = await ajudge_debate(bp_short, settings(mode), model)
        assert result.status is Status.COMPLETE, result.incomplete_reason
        assert [d.name for d in result.dimensions] == dims
        for d in result.dimensions:
            assert d.verdict.winner == "Closing Government"
            assert d.verdict.score_winner == teams[-1]  # highest scripted score
        expected = "Closing Opposition" if mode == "debatrix" else "Closing Government"
        assert result.winner == expected


async def test_user_dimensions_and_unknown_dimension(uniforms):
    from debatrix.core.errors import UnknownDimensionError

    s = settings("debatrix").model_copy(update={"dimensions": ("argument", "clash")})
    result = await ajudge_debate(uniforms, s, ScriptedChatModel(script={"panel_decide": {"winner": "Maya"}}))
    assert [d.name for d in result.dimensions] == ["argument", "clash"]
    with pytest.raises(UnknownDimensionError, match="unknown dimension 'style'"):
        await ajudge_debate(uniforms, settings("debatrix").model_copy(update={"dimensions": ("style",)}),
                            ScriptedChatModel())


def test_unknown_mode():
    from debatrix.core.errors import UnknownModeError
    from debatrix.graphs import build_graph

    with pytest.raises(UnknownModeError, match="choose one of: debatrix, chronological"):
        build_graph("fancy")


async def test_progress_events(uniforms):
    events = []
    await ajudge_debate(uniforms, settings("chronological"), ScriptedChatModel(script=script()),
                        on_event=events.append)
    analysed = [e.index for e in events if e.node == "analyze_speech"]
    assert analysed == [0, 1, 2, 3]
    assert any(e.node == "decide_debate" and e.detail.startswith("winner: Theo") for e in events)


def test_critical_rounds_by_hand():
    from debatrix.core.modes import critical_rounds

    # 8 speeches analysed in turn (each scored beside the next analysis), the judgment and its decision, the
    # panel's comment and decision
    assert critical_rounds("debatrix", 8, merge_score_call=False) == 8 + 2 + 2
    assert critical_rounds("debatrix", 8, merge_score_call=True) == 8 + 1 + 1
    assert critical_rounds("chronological", 8, merge_score_call=False) == 8 + 2
    assert critical_rounds("dimensional", 8, merge_score_call=False) == 2 + 2
    assert critical_rounds("direct", 8, merge_score_call=False) == 2


async def test_default_cap_on_requests_in_flight_never_lengthens_the_critical_path(bp_short):
    """A BP debate in the debatrix mode has 4 columns, each with an analysis and the previous speech's score ready
    at once: the default cap lets all of them run (counted, not timed); a lower cap is honoured."""
    import asyncio

    from debatrix.core.modes import max_in_flight
    from debatrix.core.settings import LLMSettings

    class Counting(ScriptedChatModel):
        def __init__(self, **kw):
            super().__init__(**kw)
            object.__setattr__(self, "_now", 0)
            object.__setattr__(self, "_peak", 0)

        async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
            object.__setattr__(self, "_now", self._now + 1)
            object.__setattr__(self, "_peak", max(self._peak, self._now))
            try:
                await asyncio.sleep(0.1)  # long enough that every request ready at once overlaps, on a busy machine too
                return await super()._agenerate(messages, stop, run_manager, **kwargs)
            finally:
                object.__setattr__(self, "_now", self._now - 1)

    width = max_in_flight("debatrix", 4, merge_score_call=False, orders=2, score_in_analysis=False)
    assert width == 12 and LLMSettings().max_concurrency >= width
    model = Counting(script={"panel_decide": {"winner": bp_short.debaters[0].name}})
    result = await ajudge_debate(bp_short, settings("debatrix", score_in_analysis=False), model)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    assert model._peak == width
    # a speech scored in its analysis leaves per column the analysis, or the judgment in every order
    merged = Counting(script={"panel_decide": {"winner": bp_short.debaters[0].name}})
    await ajudge_debate(bp_short, settings("debatrix"), merged)
    assert merged._peak == max_in_flight("debatrix", 4, False, orders=2, score_in_analysis=True) == 8
    capped = Counting(script={"panel_decide": {"winner": bp_short.debaters[0].name}})
    await ajudge_debate(bp_short, settings("debatrix", max_concurrency=3), capped)
    assert capped._peak == 3


async def test_with_a_prompt_cache_scores_continue_the_conversation(uniforms):
    """Where the server caches prompts (the local backend), a score is asked by continuing the analysis (or
    judgment) conversation: its prompt starts with the whole request that produced the answer, then the answer;
    only those last two messages are new to the model. Elsewhere the short prompt carries no debate material."""
    model = ScriptedChatModel(script=script())
    result = await ajudge_debate(uniforms, settings("debatrix", prompt_cache=True, score_in_analysis=False), model)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    for dim in ("argument", "language"):
        for i in range(4):
            asked = next(c for c in model.calls if c.node == "analyze_speech" and c.dimension == dim and c.index == i)
            score = next(c for c in model.calls if c.node == "score_speech" and c.dimension == dim and c.index == i)
            assert score.messages[: len(asked.messages)] == asked.messages
            analysis = result.dimension(dim).analyses[i].analysis
            assert score.messages[len(asked.messages)].content == analysis
            assert analysis.endswith(f"{uniforms.speeches[i].speaker} analyze_speech comment on {dim} speech {i + 1}."
                                     + (f" {uniforms.speeches[i].speaker} answers the claims of speech {i}." if i else ""))
        judges = [c for c in model.calls if c.node == "judge_debate" and c.dimension == dim]
        for decide in (c for c in model.calls if c.node == "decide_debate" and c.dimension == dim):
            # each order's decision continues that order's judgment
            assert sum(decide.messages[: len(j.messages)] == j.messages for j in judges) == 1
    assert [j.score for j in result.dimensions[0].speech_judgments] == [1, 2, 3, 4]
    plain = ScriptedChatModel(script=script())
    await ajudge_debate(uniforms, settings("debatrix", score_in_analysis=False), plain)
    score = next(c for c in plain.calls if c.node == "score_speech")
    assert len(score.messages) == 2 and "<<<DATA" not in score.messages[-1].content


async def test_an_analysis_is_asked_once_and_kept_as_written(uniforms):
    # Theo's first note restates Maya's speech (brands, bullying). No English check second-guesses it any more: it
    # is not asked again, and it stays in the analysis and in the memory the next analysis reads, as written (the
    # result's checks measure and flag; they do not repair)
    restated = "Theo argues that the daily competition over brands disappears, and so does bullying."

    def analyze(c):
        return analysis_of(c, note=restated if c.index == 1 and c.dimension == "argument" else None)

    model = ScriptedChatModel(script={**script(), "analyze_speech": analyze})
    result = await ajudge_debate(uniforms, settings("debatrix"), model)
    assert result.status is Status.COMPLETE
    assert result.usage.by_node["analyze_speech"].calls == 12  # one per speech and dimension: nothing asked again
    theo = next(a for a in result.dimensions[0].analyses if a.index == 1)
    assert restated in theo.analysis and restated in theo.memo
    later = next(c for c in model.calls if c.node == "analyze_speech" and c.dimension == "argument" and c.index == 2)
    assert restated in str(later.messages[-1].content)


async def test_a_judgment_without_a_paragraph_on_one_debater_is_asked_for_it(uniforms):
    # the local model's habit: Theo folded into Maya's paragraph. Asked once more in the same conversation, the
    # judge writes Theo's paragraph, which goes before the Winner line; the verdict stays the first answer's
    def judge(c):
        if "has no paragraph of its own on Theo" in str(c.messages[-1].content):
            assert c.messages[-2].type == "ai"  # the same conversation, after its judgment
            return f"Theo: Theo's rebuttal on {c.dimension} was thin."
        return f"Maya: Maya argued well on {c.dimension}, and Theo did not answer her.\nWinner: Maya"

    model = ScriptedChatModel(script={**script(), "judge_debate": judge})
    result = await ajudge_debate(uniforms, settings("dimensional"), model)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    assert result.usage.by_node["judge_debate"].calls == 3 * 2 * 2  # each judgment asked once more
    for d in result.dimensions:
        comments = {j.debater: j.comment for j in d.debater_judgments}
        assert comments["Theo"] == f"Theo's rebuttal on {d.name} was thin.", comments
        assert comments["Maya"].startswith("Maya argued well")
        assert d.debate_analysis.rstrip().endswith("Winner: Maya")
    assert not any("no paragraph" in f for f in result.checks.flags)

    # the names written with nothing under them (debateart_4024's source judgment): both are asked for
    def empty(c):
        if "has no paragraph of its own on" in str(c.messages[-1].content):
            return f"Theo: Theo's rebuttal on {c.dimension} was thin.\nMaya: Maya's case on {c.dimension} held."
        return "Theo:\nWinner: Maya\n\nMaya:\n"

    model = ScriptedChatModel(script={**script(), "judge_debate": empty})
    result = await ajudge_debate(uniforms, settings("dimensional"), model)
    for d in result.dimensions:
        comments = {j.debater: j.comment for j in d.debater_judgments}
        assert comments == {"Maya": f"Maya's case on {d.name} held.", "Theo": f"Theo's rebuttal on {d.name} was thin."}
        assert d.verdict.winner == "Maya"

    # asked, the model repeats the paragraph it wrote under the missing name (debateart_0601): nothing is added
    def copies(c):
        if "has no paragraph of its own on Theo" in str(c.messages[-1].content):
            return f"Theo: Maya argued well on {c.dimension}, and Theo did not answer her."
        return judge(c)

    model = ScriptedChatModel(script={**script(), "judge_debate": copies})
    result = await ajudge_debate(uniforms, settings("dimensional"), model)
    assert all(j.comment == "" for d in result.dimensions for j in d.debater_judgments if j.debater == "Theo")
    assert any("no paragraph on Theo" in f for f in result.checks.flags)

    # the paragraph on Theo is Maya's again with the name swapped (the local model's habit: 19% of the text
    # benchmark's comments showed empty for it): it says nothing new, so it is missing as shown, asked for, and the
    # paragraph written replaces it
    def swapped(c):
        if "has no paragraph of its own on Theo" in str(c.messages[-1].content):
            return f"Theo: Theo's rebuttal on {c.dimension} was thin."
        return (f"Maya: Maya argued clearly and with strong evidence on {c.dimension}.\n"
                f"Theo: Theo argued clearly and with strong evidence on {c.dimension}.\nWinner: Maya")

    model = ScriptedChatModel(script={**script(), "judge_debate": swapped})
    result = await ajudge_debate(uniforms, settings("dimensional"), model)
    assert result.usage.by_node["judge_debate"].calls == 3 * 2 * 2
    for d in result.dimensions:
        comments = {j.debater: j.comment for j in d.debater_judgments}
        assert comments == {"Maya": f"Maya argued clearly and with strong evidence on {d.name}.",
                            "Theo": f"Theo's rebuttal on {d.name} was thin."}
        assert d.verdict.comment.count("Theo:") == 1 and d.verdict.winner == "Maya"


async def test_a_verdict_the_first_judge_cannot_vouch_for_goes_to_the_second(uniforms):
    # the first judge (scripted) names the first-listed debater in each order: its orders split, so the debate
    # goes up to the second judge (an endpoint), whose verdict the result carries with who decided and why
    from debatrix.app.api import escalation_reason
    from debatrix.core.settings import EscalationSettings, LLMSettings
    from debatrix.testing import FakeOpenAIServer

    def split(c):
        return {**{n: 6 for n in c.names}, "winner": c.names[0]}

    def agree(c):
        return {**{n: 6 for n in c.names}, "winner": "Maya"}

    with FakeOpenAIServer() as srv:
        esc = EscalationSettings(llm=LLMSettings(base_url=srv.base_url, model="strong"))
        s = settings("direct").model_copy(update={"escalate": esc})
        first = ScriptedChatModel(script={**script(), "decide_debate": split})
        up = await ajudge_debate(uniforms, s, first)
        sent = len(srv.requests)
        kept = await ajudge_debate(uniforms, s, ScriptedChatModel(script={**script(), "decide_debate": agree}))
        assert len(srv.requests) == sent  # a verdict the first judge can vouch for costs the second nothing
    assert up.escalation.escalated and up.escalation.decided_by == "strong"
    assert up.escalation.reason == "the first judge's orders split (1 of 2 orders agrees)"
    assert up.escalation.first.winner in ("Maya", "Theo") and up.escalation.first_usage.llm_calls == 4
    assert up.usage.llm_calls == sent > 0 and up.settings["llm"]["model"] == "strong"
    assert not kept.escalation.escalated and kept.escalation.decided_by == "gpt-4o-mini"
    assert kept.escalation.reason.startswith("kept: orders agree") and kept.general.verdict.winner == "Maya"
    assert escalation_reason(kept, 0.7) is None
    low = kept.model_copy(update={"general": kept.general.model_copy(update={
        "verdict": kept.general.verdict.model_copy(update={"calibrated_probability": 0.62})})})
    assert escalation_reason(low, 0.7) == "the first judge's calibrated confidence 62% is under 70%"
    from debatrix.app.report import result_html

    page = result_html(up).replace("&#39;", "'")
    assert "Decided by strong: the first judge's orders split (1 of 2 orders agrees); the first judge said" in page


async def test_a_general_dimension_beside_others_still_gets_the_panels_verdict(uniforms):
    # --dimensions argument,general in a panel mode: the general column and the panel used to share the state's
    # "general" key, so the panel was skipped and the column's verdict shown as the panel's
    model = ScriptedChatModel(script=script())
    s = settings("debatrix").model_copy(update={"dimensions": ("argument", "general")})
    result = await ajudge_debate(uniforms, s, model)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    nodes = [c.node for c in model.calls]
    assert nodes.count("panel_comment") == 2 and nodes.count("panel_decide") == 2
    assert [d.name for d in result.dimensions] == ["argument", "general"]
    assert result.general.verdict.dimension == "general" and result.general.verdict.winner == "Maya"
    assert "weighted mean" in result.general.debater_judgments[0].comment  # the panel's, not the column's


@pytest.mark.parametrize("mode", ["direct", "debatrix"])
async def test_a_shared_order_layout_gives_every_order_the_same_material(uniforms, mode):
    # grouped (default): each order reads the material debater by debater in its own order; shared: every order
    # reads the same material, and only the task after it lists the debaters in the order's own order
    for layout in ("grouped", "shared"):
        model = ScriptedChatModel(script=script())
        result = await ajudge_debate(uniforms, settings(mode).model_copy(update={"order_layout": layout}), model)
        assert result.status is Status.COMPLETE
        asked = [str(c.messages[-1].content) for c in model.calls if c.node == "judge_debate"]
        first, second = asked[0], asked[1]
        material = lambda p: p.split("Task: judge the debate")[0]  # noqa: E731
        tasks = [p.split("Task: judge the debate")[1] for p in (first, second)]
        if layout == "shared":
            assert material(first) == material(second)
        else:
            assert material(first) != material(second)
        assert tasks[0] != tasks[1]  # the order's own task: the debaters listed its way


async def test_a_run_reads_one_set_of_settings(uniforms):
    """The nodes read the context's settings, so the graph is shaped by them too (before, a graph built with its
    own merge flag on a context without it had no decision step and a judgment node that did not merge); a flag
    that contradicts the context is refused; a run given a context takes only the mode from its settings."""
    from debatrix import JudgeContext
    from debatrix.core.errors import ConfigurationError
    from debatrix.graphs.build import build_graph

    model = ScriptedChatModel(script={**script(), "judge_debate": lambda c: {
        "comment": "Maya: Maya argued.\nTheo: Theo answered.", "Maya": 7, "Theo": 6, "winner": "Maya"}})
    ctx = JudgeContext.create(settings("debatrix", merge_score_call=True), model)
    try:
        with pytest.raises(ConfigurationError, match="contradicts the context"):
            build_graph("debatrix", ctx, merge_score_call=False)
        merged = build_graph("debatrix", ctx).get_graph(xray=1).draw_mermaid()
        assert "decide_debate" not in merged  # the merged shape, read from the context
        result = await ajudge_debate(uniforms, settings("direct", merge_score_call=False), context=ctx)
        assert result.status is Status.COMPLETE and result.mode == "direct"
        assert {c.node for c in model.calls} == {"judge_debate"}  # merged, as the context says
    finally:
        ctx.close()


@pytest.mark.parametrize("again", ["Maya's point that uniforms put the focus of a school day back on learning decided it.",
                                   "The weights decided it again."])
async def test_a_panel_reason_that_cites_nothing_is_asked_what_decided_it(uniforms, again):
    """The judgments name what was said; the chair's first reason names only weights (as the local model's did on
    debateart_4024): it is asked once, in the same conversation, and a named point goes before the reason; an
    answer that still names nothing is not added."""
    first = "The debate was weighted as follows: argument 3, source 2, language 2.\nWinner: Maya"
    model = ScriptedChatModel(script={
        **script(),
        "judge_debate": lambda c: ("Maya: Maya said the costs, on the other hand, are real.\nTheo: Theo said a rule "
                                   "that polices skirts and ties creates a new source of punishment.\nWinner: Maya"),
        "panel_comment": lambda c: again if len(c.messages) > 2 else first})
    result = await ajudge_debate(uniforms, settings("dimensional"), model)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    asked = [c for c in model.calls if c.node == "panel_comment"]
    assert len(asked) == 4  # each order asked once more, its first reason and the question appended
    retry = [c for c in asked if len(c.messages) > 2]
    assert len(retry) == 2 and all(str(c.messages[-2].content) == first for c in retry)
    assert all("names nothing said" in str(c.messages[-1].content) for c in retry)
    shown = result.general.verdict.comment
    assert shown.startswith(again) if "focus" in again else shown.startswith("The debate was weighted")
    assert result.general.verdict.winner == "Maya"


async def test_a_graph_runs_its_own_mode_whatever_context_it_is_given(uniforms):
    """The mode is resolved once, in the run's context: a graph of one mode run with a context made for another
    judges (and says it judged) in the graph's mode, and the context it was given is left as it was."""
    from debatrix.context import JudgeContext
    from debatrix.graphs import build_graph

    model = ScriptedChatModel(script=script())
    ctx = JudgeContext.create(settings("debatrix", orders=1), model)
    graph = build_graph("direct")  # no context of its own: the run's is used
    out = await graph.ainvoke({"debate": uniforms}, context=ctx)
    result = out["result"]
    assert result.status is Status.COMPLETE, result.incomplete_reason
    assert result.mode == "direct" and result.settings["mode"] == "direct"
    assert Counter(c.node for c in model.calls) == {"judge_debate": 1, "decide_debate": 1}
    assert ctx.mode.name == "debatrix" and ctx.for_mode("direct").mode.name == "direct"
    assert ctx.for_mode("direct") is ctx.for_mode("direct") and ctx.for_mode("debatrix") is ctx
    # a variant shares the model connection: closing it closes nothing its parent still uses
    closed: list[int] = []
    ctx.gateway.close = lambda: closed.append(1)  # type: ignore[method-assign]
    ctx.for_mode("direct").close()
    assert closed == []
    ctx.close()
    assert closed == [1]


def test_an_unknown_mode_is_refused_when_the_context_is_made():
    from debatrix.context import JudgeContext
    from debatrix.core.errors import UnknownModeError

    with pytest.raises(UnknownModeError, match="nonsense"):
        JudgeContext.create(settings("nonsense"), ScriptedChatModel(script={}))


def _branches_on_a_mode_name(source: str, names: set[str]) -> list[int]:
    """The lines of ``source`` that compare something with a registered mode's name (``== "flow"``,
    ``.context != "flow"``, ``in ("flow", ...)``): a branch on the name where the mode object should answer."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        consts = [c for s in sides for c in ([*s.elts] if isinstance(s, ast.Tuple | ast.List | ast.Set) else [s])]
        if any(isinstance(c, ast.Constant) and c.value in names for c in consts):
            found.append(node.lineno)
    return found


def test_no_code_outside_the_modes_definition_branches_on_the_flows_name():
    """What differs between modes is the mode's own (its methods, :class:`FlowMode`'s overrides): no module of the
    judge compares a value with the flow's name. (The single-speech graph, not a debate mode, and the benchmarks'
    ``direct`` baseline are named where they are chosen.)"""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    defined = root / "debatrix" / "core" / "modes.py"
    files = [f for room in ("debatrix", "graphs", "memory", "benchmarks") for f in (root / room).rglob("*.py")
             if f != defined]
    found = {f"{f.relative_to(root)}:{n}" for f in files
             for n in _branches_on_a_mode_name(f.read_text(encoding="utf-8"), {"flow"})}
    assert not found, sorted(found)
    # the check sees each way of writing such a branch
    for snippet in ('if get_mode(m).context == "flow": pass', 'x = mode != "flow"', 'y = m in ("flow", "direct")'):
        assert _branches_on_a_mode_name(snippet, {"flow"}) == [1], snippet
    assert _branches_on_a_mode_name('z = {"flow": 1}["flow"]', {"flow"}) == []
