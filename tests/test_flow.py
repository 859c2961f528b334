"""The flow's ledger, computed from constructed decisions (no model): rows, what became of each, and the tallies, with
every row's speaker a lookup in the passage table."""

from __future__ import annotations

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from debatrix.core.flow import gist, ledger
from debatrix.core.models import Line, Mark, SpeechFlow
from debatrix.core.models import Debate, Debater, Speech

PARA = " ".join(["alpha"] * 85) + "."  # longer than a passage's target: a passage each


def _debate(passages_per_speech=(2, 2, 2, 2)) -> Debate:
    names = ["Ana", "Ben"]
    speeches = tuple(Speech(speaker=names[i % 2], content="\n\n".join(
        f"{PARA.replace('alpha', f'w{i}{k}')}" for k in range(n))) for i, n in enumerate(passages_per_speech))
    return Debate(id="d", motion="m", debaters=(Debater(name="Ana", side="pro"), Debater(name="Ben", side="con")),
                  speeches=speeches)


def _flows(debate, argument=1.0, lines=()):
    out = []
    for i, s in enumerate(debate.speeches):
        marks = tuple(Mark(id=p.id, argument=argument, evidence=0.5) for p in debate.passages if p.speech == i)
        out.append(SpeechFlow(dimension="argument", index=i, speaker=s.speaker, marks=marks,
                              lines=tuple(x for x in lines if x.speech == i)))
    return out


def test_a_refuted_row_falls_a_dropped_one_stands_and_a_conceded_one_stands():
    d = _debate()
    flows = _flows(d, lines=[Line(speech=1, target="S1.1", refutes=0.9), Line(speech=1, target="S1.2", refutes=0.0,
                                                                                concedes=0.8)])
    rows = {t.id: t for t in ledger(d, flows, "argument").threads}
    assert rows["S1.1"].status == "refuted" and rows["S1.1"].stands == pytest.approx(0.1)
    assert rows["S1.2"].status == "conceded" and rows["S1.2"].stands == pytest.approx(1.0)
    assert rows["S2.1"].status == "dropped"  # Ana spoke after it (speech 3) and did not answer it
    assert rows["S4.1"].status == "standing"  # nobody spoke after the last speech
    assert rows["S1.1"].cells[0].speech == 1 and rows["S1.1"].cells[0].move == "refutes"


def test_every_row_and_tally_is_attributed_by_the_passage_table():
    d = _debate()
    led = ledger(d, _flows(d), "argument")
    for t in led.threads:
        assert t.speaker == d.passage_index[t.id].speaker
        assert t.gist == gist(d.passage_index[t.id].text)
    assert {t.debater for t in led.tallies} == {"Ana", "Ben"}


def test_rows_below_even_odds_are_not_shown_but_still_weigh():
    d = _debate()
    led = ledger(d, _flows(d, argument=0.3), "argument")
    assert led.threads == ()
    assert led.tally("Ana").arguments == pytest.approx(0.3 * 4)


def test_engagement_counts_only_rows_spoken_before_one_of_the_debaters_speeches():
    d = _debate()
    lines = [Line(speech=2, target="S2.1", refutes=1.0), Line(speech=2, target="S2.2", refutes=0.0)]
    led = ledger(d, _flows(d, lines=lines), "argument")
    ana, ben = led.tally("Ana"), led.tally("Ben")
    assert ana.engageable == pytest.approx(2.0)  # Ben's speech 2 came before Ana's speech 3; speech 4 came after all
    assert ana.engagement == pytest.approx(0.5)
    assert ben.engageable == pytest.approx(4.0) and ben.engagement == pytest.approx(0.0)


@given(st.lists(st.tuples(st.integers(1, 3), st.floats(0, 1), st.floats(0, 1)), max_size=6))
@hsettings(max_examples=80, deadline=None)
def test_probabilities_stay_probabilities_and_refuting_more_never_helps_the_refuted(answers):
    d = _debate()
    lines = [Line(speech=j, target="S1.1", refutes=r * (1 - c), concedes=c) for j, r, c in answers]
    row = next(t for t in ledger(d, _flows(d, lines=lines), "argument").threads if t.id == "S1.1")
    assert 0 <= row.refuted <= 1 and 0 <= row.conceded <= 1 and 0 <= row.stands <= 1
    harder = [x.model_copy(update={"refutes": min(1.0 - x.concedes, x.refutes + 0.1)}) for x in lines]
    again = next(t for t in ledger(d, _flows(d, lines=harder), "argument").threads if t.id == "S1.1")
    assert again.stands <= row.stands + 1e-9


def test_a_missing_speech_keeps_what_it_has_and_the_rest_is_judged():
    d = _debate()
    flows = _flows(d)
    flows[1] = SpeechFlow(dimension="argument", index=1, speaker="Ben", missing="StructuredOutputError: cut off")
    led = ledger(d, flows, "argument")
    assert not any(t.id.startswith("S2.") for t in led.threads)
    assert led.tally("Ana").arguments == pytest.approx(4.0)


# ------------------------------------------------------------------ verdicts, comments and checks from the ledger

from debatrix.graphs.finish import check_result  # noqa: E402
from debatrix.core.models import Rating  # noqa: E402
from debatrix.core.flow import (  # noqa: E402
    asked_pairs,
    combined,
    debater_comment,
    flow_verdict,
    open_rows,
)

DIMS = ("argument", "source", "language", "clash", "general")
prob = st.floats(min_value=0, max_value=1)


@st.composite
def decided(draw):
    """A constructed debate (2-6 speeches, 1-3 passages each) and random decisions on it."""
    d = _debate(tuple(draw(st.lists(st.integers(1, 3), min_size=2, max_size=6))))
    flows = []
    for i, s in enumerate(d.speeches):
        marks = tuple(Mark(id=p.id, argument=draw(prob), evidence=draw(prob)) for p in d.passages if p.speech == i)
        targets = [p.id for p in d.passages if p.speech < i and p.speaker != s.speaker]
        lines = tuple(Line(speech=i, target=t, refutes=draw(prob)) for t in draw(st.lists(st.sampled_from(targets),
                                                                                         unique=True))) \
            if targets else ()
        flows.append(SpeechFlow(dimension="flow", index=i, speaker=s.speaker, marks=marks, lines=lines,
                                rating=Rating(expected=1 + 4 * (y := draw(prob)), probabilities={"yes": y, "no": 1 - y})))
    return d, flows


def _swapped(d: Debate) -> Debate:
    return d.model_copy(update={"debaters": tuple(reversed(d.debaters))})


@hsettings(max_examples=40, deadline=None)
@given(decided(), st.sampled_from(DIMS))
def test_a_verdict_is_a_distribution_symmetric_in_the_listing_of_the_debaters(case, dim):
    d, flows = case
    v = flow_verdict(ledger(d, flows, dim), dim)
    assert sum(v.probabilities.values()) == pytest.approx(1, abs=1e-3)
    # listed the other way round, the same debate gets the same verdict: nothing favours the first listed
    w = flow_verdict(ledger(_swapped(d), flows, dim), dim)
    assert w.probabilities == pytest.approx(v.probabilities, abs=1e-4)
    if v.winner is not None:
        assert v.probabilities[v.winner] >= 0.5  # 1v1: a named winner is never shown as less likely than not


@hsettings(max_examples=40, deadline=None)
@given(decided(), st.sampled_from(DIMS))
def test_every_comment_cites_its_debaters_passages_and_no_one_elses_as_theirs(case, dim):
    from datetime import UTC, datetime

    from debatrix.core.models import DebaterJudgment, DimensionResult, JudgeResult, SpeechAnalysis
    from debatrix.core.flow import speech_note

    d, flows = case
    led = ledger(d, flows, dim)
    comments = {x.name: debater_comment(led, flows, d, x.name) for x in d.debaters}
    result = JudgeResult(debatrix_version="t", debate_id=d.id, motion=d.motion, format=d.format, mode="flow",
                         status="complete", started_at=datetime.now(UTC), finished_at=datetime.now(UTC),
                         dimensions=(DimensionResult(
                             name=dim, weight=1, allow_tie=False,
                             analyses=tuple(SpeechAnalysis(dimension=dim, index=f.index, speaker=f.speaker,
                                                           analysis=speech_note(f, d, dim)) for f in flows),
                             debater_judgments=tuple(DebaterJudgment(dimension=dim, debater=n, comment=c, score=5)
                                                     for n, c in comments.items())),))
    checks = check_result(result, d)
    assert checks.flags == ()
    assert all(c.own_cited >= 1 for c in checks.comments)


def test_the_checks_find_a_foreign_an_unknown_and_a_missing_citation():
    from datetime import UTC, datetime

    from debatrix.core.models import DebaterJudgment, DimensionResult, JudgeResult

    d = _debate()
    comments = {"Ana": "Standing: S2.1 and S9.9.", "Ben": "Answered Ana's S1.1."}
    result = JudgeResult(debatrix_version="t", debate_id=d.id, motion=d.motion, format=d.format, mode="flow",
                         status="complete", started_at=datetime.now(UTC), finished_at=datetime.now(UTC),
                         dimensions=(DimensionResult(name="argument", weight=1, allow_tie=False, debater_judgments=tuple(
                             DebaterJudgment(dimension="argument", debater=n, comment=c, score=5)
                             for n, c in comments.items())),))
    checks = {c.debater: c for c in check_result(result, d).comments}
    assert checks["Ana"].foreign_ids == ("S2.1",) and checks["Ana"].unknown_ids == ("S9.9",)
    assert checks["Ana"].misattributed and checks["Ana"].own_cited == 0
    assert checks["Ben"].foreign_ids == () and checks["Ben"].own_cited == 0  # Ana's S1.1 is given to Ana
    assert len(check_result(result, d).flags) == 3


def test_refuting_an_argument_moves_the_argument_verdict_to_the_other_side():
    d = _debate()
    calm = ledger(d, _flows(d), "argument")
    hit = ledger(d, _flows(d, lines=[Line(speech=1, target="S1.1", refutes=0.9),
                                     Line(speech=3, target="S3.2", refutes=0.9)]), "argument")
    assert flow_verdict(hit, "argument").probabilities["Ben"] > flow_verdict(calm, "argument").probabilities["Ben"]
    assert flow_verdict(calm, "argument").winner is None  # the same standing on both sides: no winner named


def test_the_panel_is_the_weighted_mean_of_the_dimensions():
    d = _debate()
    led = ledger(d, _flows(d, lines=[Line(speech=1, target="S1.1", refutes=0.9)]), "argument")
    a, s = flow_verdict(led, "argument"), flow_verdict(led, "source")
    panel = combined("panel", [(3, a), (1, s)])
    assert panel.probabilities["Ben"] == pytest.approx((3 * a.probabilities["Ben"] + s.probabilities["Ben"]) / 4,
                                                       abs=1e-3)


def test_each_open_row_is_asked_once_of_the_passage_sharing_most_with_it():
    d = Debate(id="r", motion="m", debaters=(Debater(name="Ana", side="pro"), Debater(name="Ben", side="con")),
               speeches=(Speech(speaker="Ana", content="Zebras graze quietly. " * 30 + "\n\n" + "Quokkas smile. " * 45),
                         Speech(speaker="Ben", content="Ana says zebras graze quietly; they do not graze. " * 5
                                + "\n\n" + "Zebras graze, fine, but lions sleep all day long. " * 5
                                + "\n\n" + "Nothing here matches anything at all, truly. " * 6),
                         Speech(speaker="Ana", content="Ben is wrong about zebras, and quokkas smile. " * 5)))
    flows = [SpeechFlow(dimension="flow", index=0, speaker="Ana",
                        marks=tuple(Mark(id=p.id, argument=0.9) for p in d.passages if p.speech == 0))]
    assert open_rows(d, flows, 1) == ["S1.1", "S1.2"]
    pairs = asked_pairs(d, flows, 1)
    assert pairs == {"S2.1": ["S1.1"]}  # the zebras, once, of the passage that says most about them
    flows.append(SpeechFlow(dimension="flow", index=1, speaker="Ben",
                            marks=tuple(Mark(id=p.id, argument=0.9) for p in d.passages if p.speech == 1)))
    asked = [r for rows in asked_pairs(d, flows, 2).values() for r in rows]
    assert asked and all(d.passage_index[r].speaker == "Ben" for r in asked)  # never one's own side
    no_argument = [flows[0].model_copy(update={"marks": tuple(Mark(id=m.id, argument=0.1) for m in flows[0].marks)})]
    assert open_rows(d, no_argument, 1) == [] and asked_pairs(d, no_argument, 1) == {}


@given(st.lists(st.lists(st.integers(40, 140), min_size=1, max_size=5), min_size=2, max_size=4))
@hsettings(max_examples=40, deadline=None)
def test_clarity_is_asked_of_each_speechs_longest_passages_only(lengths):
    from debatrix.core.flow import CLARITY_ASKED, clarity_asked
    speeches = tuple(Speech(speaker=("Ana", "Ben")[i % 2], content="\n\n".join(
        " ".join(f"w{i}x{k}" for _ in range(n)) + "." for k, n in enumerate(ns))) for i, ns in enumerate(lengths))
    d = Debate(id="d", motion="m", debaters=(Debater(name="Ana", side="pro"), Debater(name="Ben", side="con")),
               speeches=speeches)
    for i in range(len(speeches)):
        own = [p for p in d.passages if p.speech == i]
        asked = clarity_asked(d, i)
        assert len(asked) == min(CLARITY_ASKED, len(own)) and len(set(asked)) == len(asked)
        assert all(d.passage_index[a].speech == i for a in asked)
        shortest_asked = min(len(d.passage_index[a].text.split()) for a in asked)
        assert all(len(p.text.split()) <= shortest_asked for p in own if p.id not in asked)
