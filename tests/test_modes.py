"""Every mode with a scripted chat model: the exact number and kind of LLM calls, and the assembled result."""

from __future__ import annotations

from collections import Counter

import pytest

from debatrix.api import ajudge_debate
from debatrix.models import Status
from debatrix.testing import ScriptedChatModel
from debatrix.graphs.modes import expected_calls

from .conftest import settings

DEBATER_SCORES = {"argument": {"Maya": 8, "Theo": 4}, "source": {"Maya": 6, "Theo": 5},
                  "language": {"Maya": 5, "Theo": 5}, "general": {"Maya": 7, "Theo": 6}}
WINNERS = {"argument": "Maya", "source": "tie", "language": "Theo", "general": "Theo"}


def script() -> dict:
    return {
        "score_speech": lambda c: {"score": c.index + 1 + (c.dimension == "source")},
        "score_debater": lambda c: {"score": DEBATER_SCORES[c.dimension][c.target]},
        "decide_winner": lambda c: {"winner": WINNERS[c.dimension]},
        "panel_decide": {"winner": "Maya"},
    }


PER_SPEECH = {"analyze_speech": 4, "judge_speech": 4, "score_speech": 4, "analyze_debate": 1}
FINAL = {"judge_debater": 2, "score_debater": 2, "judge_winner": 1, "decide_winner": 1}
PANEL = {"panel_comment": 1, "panel_decide": 1}


def times(counts: dict, k: int) -> dict:
    return {n: c * k for n, c in counts.items()}


EXPECTED_CALLS = {
    "debatrix": {**times(PER_SPEECH, 3), **times(FINAL, 3), **PANEL},
    "chronological": {**PER_SPEECH, **FINAL},
    "dimensional": {**times(FINAL, 3), **PANEL},
    "noniterative": {**times(PER_SPEECH, 3), **times(FINAL, 3), **PANEL},
    "direct": dict(FINAL),
}


@pytest.mark.parametrize("mode", list(EXPECTED_CALLS))
async def test_call_counts_and_usage(mode, uniforms):
    model = ScriptedChatModel(script=script())
    result = await ajudge_debate(uniforms, settings(mode), model)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    assert Counter(c.node for c in model.calls) == EXPECTED_CALLS[mode]
    assert result.usage.llm_calls == sum(EXPECTED_CALLS[mode].values())
    # the progress display's total comes from the mode's shape: it must match what the graph really does
    n_dims = len(result.dimensions)
    assert expected_calls(mode, 4, 2, n_dims, merged=False) == len(model.calls)
    assert {n: u.calls for n, u in result.usage.by_node.items()} == EXPECTED_CALLS[mode]
    assert result.usage.prompt_tokens == sum(u.prompt_tokens for u in result.usage.by_node.values()) > 0
    assert result.mode == mode and result.settings["mode"] == mode
    # text calls first, then the short structured call (the paper's comment-then-score order)
    kinds = {c.node: c.kind for c in model.calls}
    assert kinds.get("score_debater") == "ScoreAnswer" and kinds.get("decide_winner") == "WinnerAnswer"
    assert kinds.get("judge_debater") == "text"


async def test_debatrix_result_is_assembled_exactly(uniforms):
    result = await ajudge_debate(uniforms, settings("debatrix"), ScriptedChatModel(script=script()))
    assert [d.name for d in result.dimensions] == ["argument", "source", "language"]
    arg, src, lang = result.dimensions
    assert (arg.weight, src.weight, lang.weight) == (3, 2, 2)
    assert (arg.verdict.winner, arg.verdict.score_winner) == ("Maya", "Maya")
    assert (src.verdict.winner, src.verdict.score_winner) == (None, None)  # scores 6 vs 5: within the ±3 tie band
    assert (lang.verdict.winner, lang.verdict.score_winner) == ("Theo", None)  # equal scores
    assert [(s.index, s.speaker, s.score) for s in src.speech_judgments] == [
        (0, "Maya", 2), (1, "Theo", 3), (2, "Maya", 4), (3, "Theo", 5)]
    assert [a.index for a in arg.analyses] == [0, 1, 2, 3]
    assert arg.analyses[1].analysis == "analyze_speech comment on argument speech 2."
    assert arg.debate_analysis == "analyze_debate comment on argument."
    assert [(j.debater, j.score) for j in arg.debater_judgments] == [("Maya", 8), ("Theo", 4)]
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
        assert ("analyze_speech comment on argument speech 1." in prompt) is sees_analysis, mode
        assert (first_speech_line in prompt) is sees_speech, mode


async def test_score_call_continues_the_comment_conversation(uniforms):
    model = ScriptedChatModel(script=script())
    await ajudge_debate(uniforms, settings("direct"), model)
    comment = next(c for c in model.calls if c.node == "judge_debater" and c.target == "Theo")
    score = next(c for c in model.calls if c.node == "score_debater" and c.target == "Theo")
    assert score.messages[: len(comment.messages)] == comment.messages  # shared prefix
    assert score.messages[len(comment.messages)].content == "judge_debater comment on general for Theo."


async def test_merged_score_call(uniforms):
    def merged(c):
        if c.kind == "CommentScoreAnswer":
            return {"comment": f"c {c.node}", "score": 6}
        if c.kind == "CommentWinnerAnswer":
            return {"comment": "w", "winner": "Maya"}
        return "text"

    model = ScriptedChatModel(script={"judge_speech": merged, "judge_debater": merged, "judge_winner": merged,
                                      "panel_decide": {"winner": "Maya"}})
    s = settings("debatrix", merge_score_call=True)
    result = await ajudge_debate(uniforms, s, model)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    assert Counter(c.node for c in model.calls) == {
        "analyze_speech": 12, "judge_speech": 12, "analyze_debate": 3, "judge_debater": 6, "judge_winner": 3,
        "panel_comment": 1, "panel_decide": 1}
    assert expected_calls("debatrix", 4, 2, 3, merged=True) == len(model.calls)
    assert result.dimensions[0].speech_judgments[0].comment == "c judge_speech"


async def test_bp_debate_every_mode(bp_short):
    teams = [d.name for d in bp_short.debaters]
    for mode, dims in (("debatrix", ["argument", "source", "language", "clash"]), ("direct", ["general"])):
        model = ScriptedChatModel(script={
            "score_debater": lambda c: {"score": 3 + teams.index(c.target)},
            "decide_winner": {"winner": "Closing Government"},
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
    from debatrix.errors import UnknownDimensionError

    s = settings("debatrix").model_copy(update={"dimensions": ("argument", "clash")})
    result = await ajudge_debate(uniforms, s, ScriptedChatModel(script={
        "decide_winner": {"winner": "Maya"}, "panel_decide": {"winner": "Maya"}}))
    assert [d.name for d in result.dimensions] == ["argument", "clash"]
    with pytest.raises(UnknownDimensionError, match="unknown dimension 'style'"):
        await ajudge_debate(uniforms, settings("debatrix").model_copy(update={"dimensions": ("style",)}),
                            ScriptedChatModel())


def test_unknown_mode():
    from debatrix.errors import UnknownModeError
    from debatrix.graphs import build_graph

    with pytest.raises(UnknownModeError, match="choose one of: debatrix, chronological"):
        build_graph("fancy")


async def test_progress_events(uniforms):
    events = []
    await ajudge_debate(uniforms, settings("chronological"), ScriptedChatModel(script=script()),
                        on_event=events.append)
    analysed = [e.index for e in events if e.node == "analyze_speech"]
    assert analysed == [0, 1, 2, 3]
    assert any(e.node == "decide_winner" and e.detail == "winner: Theo" for e in events)


def test_critical_rounds_by_hand():
    from debatrix.graphs.modes import critical_rounds

    # 8 speeches analysed in turn, the debate analysis, comment + score of the final judges, the panel's two calls
    assert critical_rounds("debatrix", 8, merged=False) == 8 + 1 + 2 + 2
    assert critical_rounds("debatrix", 8, merged=True) == 8 + 1 + 1 + 2
    assert critical_rounds("chronological", 8, merged=False) == 8 + 1 + 2
    assert critical_rounds("dimensional", 8, merged=False) == 2 + 2
    assert critical_rounds("direct", 8, merged=False) == 2
