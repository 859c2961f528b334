"""Probability-weighted scores and winners, the orders a comparing judgment is asked in, and how their answers
combine into one verdict. The token lists are shaped like a llama.cpp / OpenAI ``logprobs.content`` answer; the
first is the real local model's (raw, pre-grammar alternatives: the grammar forced "10" where the model wanted
"1" then a newline)."""

from __future__ import annotations

import math

import pytest

from debatrix.core import probabilities as prob
from debatrix.app.api import ajudge_debate
from debatrix.graphs.prose import verdicts as V
from debatrix.core.results import Status
from debatrix.testing import ScriptedChatModel

from .conftest import settings


def tok(token: str, top: dict[str, float] | None = None) -> dict:
    """A token with its alternatives given as probabilities (the sampled one included)."""
    top = top or {token: 1.0}
    return {"token": token, "logprob": math.log(top.get(token, 1e-6)),
            "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in top.items()]}


# {"Alice": 10, "Bob": 10, "winner": "Alice"} as the 1.5B model wrote it under a grammar
DECISION = [tok("{\n"), tok(" "), tok(' "'), tok("Alice"), tok('":'), tok(" "),
            tok("1", {"1": 0.55, "8": 0.134, "7": 0.11, "9": 0.1, "5": 0.057, "6": 0.02}),
            tok("0", {"0": 0.98, ",\n": 0.02}), tok(",\n"), tok(" "), tok(' "'), tok("Bob"), tok('":'), tok(" "),
            tok("1", {"1": 0.53, "0": 0.44, "5": 0.012, "2": 0.006}),
            tok("0", {"\n": 0.96, "0": 0.025, ",\n": 0.012}), tok(",\n"), tok(" "), tok(' "'), tok("winner"),
            tok('":'), tok(' "', {' "': 0.9, " null": 0.1}),
            tok("Alice", {"Both": 0.23, "Alice": 0.145, "T": 0.13, "Bob": 0.018, "tie": 0.03}), tok('"\n'),
            tok("}")]


def test_expected_scores_read_the_model_not_the_grammar():
    alice = prob.json_score(DECISION, "Alice", range(1, 11))
    bob = prob.json_score(DECISION, "Bob", range(1, 11))
    # Alice's "1" went on to "0" with 98%: mostly a 10; Bob's "1" would have ended there: a 1, not the forced 10
    assert alice[10] == pytest.approx(0.55 * 0.98 / 0.971, rel=0.01) and prob.expectation(alice) > 8.5
    assert bob[1] > 0.9 and prob.expectation(bob) < 1.5
    assert sum(alice.values()) == pytest.approx(1.0) and set(alice) <= set(range(1, 11))


def test_winner_probability_at_the_point_the_names_part():
    p = prob.json_choice(DECISION, "winner", ["Alice", "Bob", "tie"])
    # "Both" and a lone "T" (any word may start so) are not choices: dropped, the rest renormalised
    assert set(p) == {"Alice", "Bob", "tie"} and p["Alice"] == pytest.approx(0.145 / 0.193, rel=0.01)
    # names that share a prefix part where they differ ("Debater A" / "Debater B")
    lp = [tok("Winner"), tok(":"), tok(" Debater"), tok(" B", {" B": 0.6, " A": 0.4})]
    assert prob.text_choice(lp, ["Debater A", "Debater B"]) == pytest.approx({"Debater A": 0.4, "Debater B": 0.6})


def test_winner_line_and_argued_winner():
    text = "Maya argued well.\nTheo did not.\n**Winner:** Theo"
    assert prob.named_winner(text, ["Maya", "Theo", "tie"]) == ("Theo", text.index("Theo", text.index("Winner")))
    assert prob.named_winner("Maya won on the facts.", ["Maya", "Theo"]) is None
    # a Winner line the judgment quotes from a (data-marked) speech is not the judge's
    assert prob.named_winner("Maya argued better.\n│ Winner: Theo", ["Maya", "Theo"]) is None
    assert prob.argued_winner("Theo spoke first. Maya won the debate because she answered.", ["Maya", "Theo"]) \
        == "Maya"
    assert prob.argued_winner("Both were fine.", ["Maya", "Theo"]) is None


def test_orders_cover_every_place():
    assert V.orders_for(["A", "B"], 2) == [("A", "B"), ("B", "A")]
    assert V.orders_for(["A", "B"], 1) == [("A", "B")]
    bp = V.orders_for(["OG", "OO", "CG", "CO"], 4)
    assert bp[:2] == [("OG", "OO", "CG", "CO"), ("CG", "CO", "OG", "OO")]
    assert all(sorted(o[i] for o in bp) == ["CG", "CO", "OG", "OO"] for i in range(4))  # every team every place


def _answer(order, winner, probs=None, scores=None, comment=""):
    return V.Judgment(order=order, winner=winner, probabilities=probs, scores=scores or {},
                         comment=comment or f"Winner: {winner}")


def test_combining_orders_cancels_a_first_place_preference(uniforms):
    first = _answer(("Maya", "Theo"), "Maya", {"Maya": 0.8, "Theo": 0.2})
    second = _answer(("Theo", "Maya"), "Theo", {"Maya": 0.4, "Theo": 0.6})
    d = V.combine("argument", uniforms, [first, second], allow_tie=False)
    assert d.winner == "Maya" and d.probabilities == {"Maya": 0.6, "Theo": 0.4} and d.method == "logprobs"
    assert d.position_bias == pytest.approx((0.8 + 0.6) / 2 - 0.5)  # each order favoured its first-listed
    assert d.comment == "Winner: Maya" and d.consistent  # the comment shown argues for the winner
    # without probabilities each answer counts as certainty; an even split goes to the higher mean score
    split = V.combine("argument", uniforms, [_answer(("Maya", "Theo"), "Maya", scores={"Maya": 6, "Theo": 7}),
                                             _answer(("Theo", "Maya"), "Theo", scores={"Maya": 6, "Theo": 8})],
                      allow_tie=False)
    assert split.method == "argmax" and split.winner == "Theo" and split.position_bias == 0.5
    assert any("split evenly" in w for w in split.warnings)


def test_a_decision_that_contradicts_its_judgment_is_caught(uniforms):
    """The judgment's Winner line names Theo, the structured decision Maya: the verdict keeps the judgment's
    winner (so comment and verdict agree) and flags the order."""
    script = {"judge_debate": "Maya: clear.\nTheo: clearer.\nWinner: Theo",
              "decide_debate": lambda c: {**{n: 7 for n in c.names}, "winner": "Maya"}}
    result = await_judge(uniforms, script)
    v = result.general.verdict
    assert result.status is Status.COMPLETE and v.winner == "Theo" and v.comment.endswith("Winner: Theo")
    assert not all(o.consistent for o in v.orders) and any("argues otherwise; the judgment's Winner line (Theo)"
                                                           in w for w in v.warnings)


def await_judge(debate, script, **kw):
    import asyncio

    return asyncio.run(ajudge_debate(debate, settings("direct", **kw), ScriptedChatModel(script=script)))


class LogprobModel(ScriptedChatModel):
    """A scripted model that also returns token log probabilities, as an OpenAI-compatible server does."""

    debatrix_logprobs: bool = True

    def _answer(self, messages, run_manager):
        result = super()._answer(messages, run_manager)
        message = result.generations[0].message
        text = message.content
        if '"winner"' in text:  # decisions: 60/40 for whoever the answer names, scores certain
            parts, rest = [], text
            head, _, tail = rest.partition('"winner": "')
            name = tail.split('"')[0]
            other = next(n for n in ("Maya", "Theo") if n != name)
            parts = [tok(head + '"winner": "'), tok(name, {name: 0.6, other: 0.4}), tok(tail[len(name):])]
        else:
            parts = [tok(text)]
        message.response_metadata["logprobs"] = {"content": parts}
        return result


async def test_graph_verdict_from_probabilities(uniforms):
    """Both orders' decisions name their first-listed debater at 60%: the averaged probabilities tie 50/50, so
    the scores decide; the result keeps each order's answer and the bias (+0.1 towards the first place)."""
    model = LogprobModel(script={"decide_debate": lambda c: {"Maya": 7, "Theo": 8, "winner": c.names[0]}})
    result = await ajudge_debate(uniforms, settings("direct"), model)
    v = result.general.verdict
    assert result.status is Status.COMPLETE and v.method == "logprobs"
    assert v.probabilities == {"Maya": 0.5, "Theo": 0.5} and v.winner == "Theo" == v.score_winner
    assert [o.order for o in v.orders] == [("Maya", "Theo"), ("Theo", "Maya")]
    assert v.position_bias == pytest.approx(0.1) and result.position_bias == pytest.approx(0.1)
    assert sum(c.node == "decide_debate" for c in model.calls) == 2


async def test_one_order_and_no_probabilities_is_the_old_judge(uniforms):
    model = ScriptedChatModel(script={"decide_debate": lambda c: {"Maya": 7, "Theo": 6, "winner": "Maya"}})
    result = await ajudge_debate(uniforms, settings("direct", orders=1), model)
    v = result.general.verdict
    assert v.method == "argmax" and len(v.orders) == 1 and v.winner == "Maya" and v.probabilities is None
    assert sum(c.node == "judge_debate" for c in model.calls) == 1


def _speech_numbers(prompt: str, marker: str) -> list[str]:
    """The speech numbers in the order a judgment prompt shows them (transcript blocks or analysis lines)."""
    import re

    return re.findall(marker, prompt)


@pytest.mark.parametrize("mode", ["direct", "debatrix"])
async def test_each_order_reads_the_debate_debater_by_debater_in_its_own_order(uniforms, mode):
    """Two orders: each judgment lists the debaters, and shows the transcript (raw modes) or the analyses
    debater by debater in its order, every speech keeping its number; one order keeps the speaking order."""
    marker = r"speech (\d+), " if mode == "direct" else r"\n\[(\d+), "
    speakers = [s.speaker for s in uniforms.speeches]
    first, second = speakers[0], next(s for s in speakers if s != speakers[0])

    def grouped(order):
        return [str(i + 1) for name in order for i, s in enumerate(speakers) if s == name]

    def judgments(model):
        dim = "general" if mode == "direct" else "argument"
        return [c.messages[-1].content for c in model.calls if c.node == "judge_debate" and c.dimension == dim]

    model = ScriptedChatModel()
    await ajudge_debate(uniforms, settings(mode), model)
    prompts = judgments(model)
    assert len(prompts) == 2
    seen = sorted(_speech_numbers(p, marker) for p in prompts)
    assert seen == sorted([grouped((first, second)), grouped((second, first))])
    for p in prompts:  # the header lists the debater whose speeches come first first
        shown_first = speakers[int(_speech_numbers(p, marker)[0]) - 1]
        assert p.split("Debaters: ")[1].startswith(shown_first)

    one = ScriptedChatModel()
    await ajudge_debate(uniforms, settings(mode, orders=1), one)
    [prompt] = judgments(one)
    assert _speech_numbers(prompt, marker) == [str(i + 1) for i in range(len(speakers))]


def test_every_verdict_says_how_many_of_its_orders_named_its_winner(uniforms):
    from debatrix.core.models import Verdict

    agree = V.combine("argument", uniforms, [_answer(("Maya", "Theo"), "Maya", {"Maya": 0.8, "Theo": 0.2}),
                                             _answer(("Theo", "Maya"), "Maya", {"Maya": 0.7, "Theo": 0.3})],
                      allow_tie=False)
    split = V.combine("argument", uniforms, [_answer(("Maya", "Theo"), "Maya", {"Maya": 0.8, "Theo": 0.2}),
                                             _answer(("Theo", "Maya"), "Theo", {"Maya": 0.4, "Theo": 0.6})],
                      allow_tie=False)
    one = V.combine("argument", uniforms, [_answer(("Maya", "Theo"), "Maya", {"Maya": 0.8, "Theo": 0.2})],
                    allow_tie=False)
    shown = [agree, split, one]  # the decision node's verdicts are the result's (one verdict type)
    assert all(isinstance(v, Verdict) for v in shown)
    assert [v.orders_agreeing for v in shown] == [2, 1, None]
    assert [v.agreement for v in shown] == ["2 of 2 orders agree", "1 of 2 orders agrees", ""]
    # a result written before the field existed gets it on reading, and a stored figure is kept as it is
    old = shown[1].model_dump(mode="json")
    del old["orders_agreeing"]
    assert Verdict.model_validate(old).orders_agreeing == 1


def test_the_comment_shown_is_an_agreeing_order_that_covers_every_debater(uniforms):
    # debateart_0616's source column on the local model (real answers, names changed): both orders named Maya;
    # the more confident one wrote a name and a Winner line per debater and nothing else
    empty = _answer(("Theo", "Maya"), "Maya", {"Maya": 0.9, "Theo": 0.1})
    empty = empty.model_copy(update={"comment": "Theo: Winner: Maya\n\nMaya: Winner: Theo"})
    full = _answer(("Maya", "Theo"), "Maya", {"Maya": 0.6, "Theo": 0.4})
    full = full.model_copy(update={"comment": "Maya: Maya cited the uniform exchanges.\nTheo: Theo cited costs.\n"
                                              "Winner: Maya"})
    v = V.combine("source", uniforms, [full, empty], allow_tie=False)
    assert v.winner == "Maya" and v.comment.startswith("Maya: Maya cited")


def test_a_place_prior_takes_a_lean_toward_a_speaking_place_out(uniforms):
    """Read once in speaking order, the model's lean toward a place is in every order's answer: the orders'
    mean is divided by the prior's share of each debater's speaking place, the debaters' total (and a tie's
    probability) kept; answers without probabilities are votes, left as they are."""
    from debatrix.core.probabilities import PlacePrior

    first, second = V.speaking_places(uniforms)
    assert first == uniforms.speeches[0].speaker and second != first
    prior = PlacePrior(model="m", mode="direct", shares=(0.7, 0.3), n=20)
    answers = [_answer((first, second), first, {first: 0.6, second: 0.4}),
               _answer((second, first), first, {first: 0.6, second: 0.4})]
    raw = V.combine("general", uniforms, answers, allow_tie=False)
    d = V.combine("general", uniforms, answers, allow_tie=False, prior=prior)
    assert raw.winner == first and raw.place_prior is None
    # 0.6 / 0.7 against 0.4 / 0.3: the second speaker, at 0.609
    assert d.winner == second and d.place_prior == (0.7, 0.3)
    assert d.probabilities[second] == pytest.approx(0.4 / 0.3 / (0.6 / 0.7 + 0.4 / 0.3), abs=1e-4)
    assert d.orders == raw.orders  # each order's answer as the model gave it
    tied = [_answer(o, first, {first: 0.5, second: 0.2, "tie": 0.3}) for o in ((first, second), (second, first))]
    t = V.combine("general", uniforms, tied, allow_tie=True, prior=PlacePrior(model="m", mode="direct",
                                                                             shares=(0.8, 0.2), n=20))
    assert t.probabilities["tie"] == 0.3 and t.winner == second
    assert t.probabilities[first] + t.probabilities[second] == pytest.approx(0.7)
    votes = V.combine("general", uniforms, [_answer((first, second), first), _answer((second, first), first)],
                      allow_tie=False, prior=prior)
    assert votes.winner == first and votes.place_prior is None
    bp = PlacePrior(model="m", mode="direct", shares=(0.4, 0.3, 0.2, 0.1), n=5)
    assert bp({first: 0.6, second: 0.4}, [first, second]) == {first: 0.6, second: 0.4}  # not for two debaters


async def test_auto_layout_reads_once_where_a_place_prior_was_measured(uniforms, monkeypatch):
    """The default order layout: where a place prior was measured for the model and mode, every order reads the
    same transcript in speaking order (a prompt cache reads it once) and the prior takes the lean out; elsewhere
    each order reads the debate grouped its own way, and no prior is applied."""
    from debatrix.core import probabilities as confidence
    from debatrix.core.probabilities import PlacePrior

    s = settings("direct")
    first = uniforms.speeches[0].speaker
    lean = PlacePrior(model=s.llm.model or "", mode="direct", shares=(0.6, 0.4), n=20)
    monkeypatch.setattr(confidence, "place_priors", lambda: {(lean.model, "direct"): lean})
    # each order's decision gives its first-listed debater 60%: even after the orders' mean, so the prior decides
    script = {"decide_debate": lambda c: {"Maya": 7, "Theo": 7, "winner": c.names[0]}}
    for mode, layout in (("direct", "shared"), ("debatrix", "grouped")):
        model = LogprobModel(script=script)
        result = await ajudge_debate(uniforms, settings(mode), model)
        assert result.status is Status.COMPLETE, result.incomplete_reason
        assert result.settings["order_layout"] == "auto" and result.settings["order_layout_used"] == layout
        material = {str(c.messages[-1].content).split("Task: judge the debate")[0]
                    for c in model.calls if c.node == "judge_debate"}
        v = result.general.verdict
        if layout == "shared":
            from debatrix.app.report import result_html

            assert len(material) == 1 and v.place_prior == (0.6, 0.4)
            assert v.winner != first and v.probabilities[first] == pytest.approx(0.4)
            assert "divided by the model's measured lean toward each speaking place (60%, 40%" in result_html(result)
        else:
            assert len(material) > 1 and all(d.verdict.place_prior is None for d in result.dimensions)
    explicit = LogprobModel(script=script)
    grouped = await ajudge_debate(uniforms, s.model_copy(update={"order_layout": "grouped"}), explicit)
    assert grouped.general.verdict.place_prior is None and grouped.settings["order_layout_used"] == "grouped"
    # a prior measured on two debaters says nothing of four teams' places: a BP debate is read grouped
    from debatrix.core.probabilities import resolved_layout

    assert resolved_layout("auto", lean.model, "direct", 2) == "shared"
    assert resolved_layout("auto", lean.model, "direct", 4) == "grouped"
    assert resolved_layout("auto", "another-model", "direct", 2) == "grouped"
    assert resolved_layout("shared", "another-model", "direct", 4) == "shared"


def test_a_winner_run_into_the_last_sentence_closes_the_judgment_on_its_own_line():
    # debateart_0466 read once on the local model: the verdict ran into Alec's paragraph, so the paragraph asked
    # for afterwards went after it and the comment shown carried "Winner: Alec" in its middle
    real = ("Alec: I argued that the US military defends reasonable freedom worldwide. Winner: Alec\n"
            "│ Good points. Winner: blamonkey")
    apart = V.winner_apart(real)
    assert apart.split("\n") == ["Alec: I argued that the US military defends reasonable freedom worldwide.",
                                 "Winner: Alec", "│ Good points. Winner: blamonkey"]  # a speech's line stays whole
    assert V.winner_apart("Alec: clear.\nWinner: Alec") == "Alec: clear.\nWinner: Alec"
    from debatrix.core.probabilities import named_winner, reason_of

    assert named_winner(apart, ["Alec", "blamonkey"])[0] == "Alec"
    assert "Winner" not in reason_of(apart.split("\n│")[0])


async def test_the_paragraph_asked_for_goes_before_a_winner_that_ran_into_a_sentence(uniforms):
    first, second = uniforms.speeches[0].speaker, uniforms.speeches[1].speaker

    def judge(c):
        if "missing" in str(c.messages[-1].content).lower() or len(c.messages) > 2:
            return f"{second}: {second} answered the costs."
        return f"{first}: {first} made the case for uniforms. Winner: {first}"

    model = ScriptedChatModel(script={"judge_debate": judge,
                                      "decide_debate": lambda c: {**{n: 7 for n in c.names}, "winner": first}})
    result = await ajudge_debate(uniforms, settings("direct", orders=1), model)
    comment = result.general.verdict.comment
    assert comment.index(f"{second}:") < comment.index("Winner:") and comment.rstrip().endswith(f"Winner: {first}")


@pytest.mark.parametrize("line, named, source", [("Winner: tie", None, "comment"), ("Winner: Maya", "Maya", "comment"),
                                                 ("", None, None)])
def test_a_written_judgment_tells_a_tie_it_names_from_no_winner_named(line, named, source):
    """One Judgment type carries an order's winner at every step: before its decision is read, a comment that names
    a tie and one that names no winner differ (winner_from), and the decision is read only where none was named."""
    from types import SimpleNamespace

    text = f"Maya: argued well.\nTheo: argued too.\n{line}".strip()
    written = V.written_judgment("argument", ("Maya", "Theo"), text, [], ["Maya", "Theo", "tie"])
    assert (written.winner, written.winner_from, written.dimension) == (named, source, "argument")
    decided = V.order_answer(("Maya", "Theo"), ["Maya", "Theo", "tie"], written.comment, dimension="argument",
                             written=written, decision=SimpleNamespace(winner="Theo"))
    assert decided.winner == (named if source else "Theo")
    assert decided.winner_from == (source or "decision")
    # one winner field: where the decision named another winner than the comment, the order says so in words
    assert (decided.warning.startswith("the decision named Theo")) == (not decided.consistent)


def test_an_order_written_before_1_7_reads_with_one_winner_field():
    """Results of schema 1.6 kept the decision's own winner beside the order's: read, it becomes the warning."""
    from debatrix.core.models import Judgment

    old = {"order": ["Ana", "Ben"], "winner": "Ben", "winner_from": "comment", "decision_winner": "Ana",
           "consistent": False}
    j = Judgment.model_validate(old)
    assert j.winner == "Ben" and j.warning == "the decision named Ana but the judgment argues otherwise"
    agreed = Judgment.model_validate({**old, "decision_winner": "Ben", "consistent": True})
    assert agreed.warning == "" and "decision_winner" not in agreed.model_dump()
