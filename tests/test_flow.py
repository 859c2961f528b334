"""The flow's ledger, computed from constructed decisions (no model): rows, what became of each, and the tallies, with
every row's speaker a lookup in the passage table."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings as hsettings, strategies as st

from debatrix.core.flow import FlowVerdict, flow_verdict, gist, ledger
from debatrix.core.flow import Line, Mark, SpeechFlow
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


def test_an_answered_row_falls_a_dropped_one_stands_and_an_answer_answered_in_turn_extends_it():
    d = _debate()
    flows = _flows(d, lines=[Line(speech=1, target="S1.1", by="S2.1", answers=0.9),
                             Line(speech=1, target="S1.2", by="S2.2", answers=0.8),
                             Line(speech=2, target="S2.2", by="S3.1", answers=0.9),
                             Line(speech=2, target="S2.1", by="S3.2", answers=0.1),  # asked, not answered
                             Line(speech=3, target="S1.1", by="S4.1", answers=0.1),
                             Line(speech=3, target="S1.2", by="S4.2", answers=0.1)])
    led = ledger(d, flows, "argument")  # unprofiled: every P counts as the model gave it
    rows = {t.id: t for t in led.threads}
    assert led.baseline is None
    # S2.1's answer stands 0.9 (Ana's S3.2 answered it at 0.1), and S4.1's 0.1 answer stands (nothing after it)
    assert rows["S1.1"].status == "refuted"
    assert rows["S1.1"].stands == pytest.approx((1 - 0.9 * 0.9) * (1 - 0.1), abs=1e-3)
    # Ben's S2.2 answered Ana's S1.2, and Ana's S3.1 answered S2.2: S1.2 stands again
    assert rows["S2.2"].status == "refuted"
    assert rows["S1.2"].status == "extended"
    assert rows["S1.2"].stands == pytest.approx((1 - 0.8 * (1 - 0.9)) * (1 - 0.1), abs=1e-3)
    assert rows["S2.1"].status == "dropped"  # asked about, and the model said it does not answer it
    assert rows["S4.1"].status == "untested"  # nobody spoke after the last speech
    cell = rows["S1.1"].cells[0]
    assert cell.speech == 1 and cell.by == "S2.1" and cell.answered == 0.9 and cell.counts == pytest.approx(0.9)
    ana = led.tally("Ana")
    assert ana.standing == pytest.approx(sum(rows[i].weighs * rows[i].stands for i in ("S1.1", "S1.2", "S3.1", "S3.2")),
                                         abs=1e-3)


def _profile(kind: str, a: float, b: float, shift: float = 0.0, auc: tuple[float, float] = (0.7, 0.65),
             base_rate: float | None = None):
    from debatrix.core.profile import DecisionProfile, Interval, JudgeProfile, ModelIdentity, PlaceLean, PMap

    place = PlaceLean(pairs=40, first=0.5, second=0.5, flips=0.1, shift=Interval(value=shift, low=shift, high=shift))
    d = DecisionProfile(kind=kind, question="q", gold="g", items=200, debates=24,
                        auc=Interval(value=auc[0], low=auc[1], high=auc[0] + 0.05), place=place,
                        map=PMap(a=a, b=b, fitted=200, checked=200, brier_raw=0.3, brier_mapped=0.2),
                        base_rate=base_rate)
    return JudgeProfile(model=ModelIdentity(name="m"), prompts_sha256="x", measured="2026-12-02",
                        decisions={kind: d})


@given(st.floats(0.51, 0.99), st.integers(1, 6))
@hsettings(max_examples=60, deadline=None)
def test_a_sure_model_fells_every_row_it_answers_however_many_times_it_is_asked(level, times):
    """An unprofiled model that says yes at ``level`` to every "does this answer that point?": each row a later
    speech was asked about counts as answered (no answer counts nothing by standing at the debate's usual level)."""
    d = _debate((2, 2, 2, 2))
    ben = [p.id for p in d.passages if p.speaker == "Ben" and p.speech == 1]
    lines = [Line(speech=1, target=t, by=b, answers=level) for t in ("S1.1", "S1.2") for b in ben[:times]]
    rows = {t.id: t for t in ledger(d, _flows(d, lines=lines), "argument").threads}
    assert rows["S1.1"].status == "refuted" and rows["S1.2"].status == "refuted"
    assert rows["S1.1"].stands == pytest.approx((1 - level) ** min(times, len(ben)), abs=1e-3)


@given(st.floats(0.01, 0.99), st.floats(0.2, 3.0), st.floats(-2, 2), st.floats(-1.5, 1.5))
@hsettings(max_examples=80, deadline=None)
def test_a_profile_reads_an_answer_through_its_map_with_its_place_lean_taken_out(p, a, b, shift):
    from debatrix.core.profile import _logit, _sigmoid

    prof = _profile("answers", a, b, shift)
    first, second = prof.adjusted("answers", p, 0), prof.adjusted("answers", p, 1)
    assert first == pytest.approx(_sigmoid(a * (_logit(p) - shift / 2) + b), abs=1e-6)
    assert second == pytest.approx(_sigmoid(a * (_logit(p) + shift / 2) + b), abs=1e-6)
    assert prof.adjusted("answers", min(0.999, p + 0.01), 0) >= first  # the map keeps the model's order
    assert prof.adjusted("argues", p, 0) == p  # a decision the profile does not hold: as given
    blind = _profile("answers", a, b, shift, auc=(0.52, 0.45))
    assert blind.state("answers") == "blind" and blind.adjusted("answers", p, 0) == p


def test_a_profiles_map_decides_whether_an_answer_fells_the_row():
    """The same model answer, P 0.69: a row's status follows from the answer as the profile maps it, below even odds
    where the model's 0.69 is what it says to points it did not answer, above where it is a sure sign."""
    d = _debate((2, 2, 2, 2))
    lines = [Line(speech=1, target="S1.1", by="S2.1", answers=0.69)]
    flows = _flows(d, lines=lines)
    low = {t.id: t for t in ledger(d, flows, "argument", _profile("answers", 3.0, -2.5)).threads}
    high = {t.id: t for t in ledger(d, flows, "argument", _profile("answers", 1.0, 1.0)).threads}
    assert low["S1.1"].status in ("dropped", "contested") and low["S1.1"].cells[0].answered == 0.69
    assert low["S1.1"].cells[0].counts < 0.5
    assert high["S1.1"].status == "refuted" and high["S1.1"].cells[0].counts > 0.5


def _six() -> Debate:
    return _debate((1, 1, 1, 1, 1, 1))  # Ana S1, S3, S5; Ben S2, S4, S6: S1.1 can be answered three times


@given(st.floats(0.05, 0.95), st.floats(0.3, 3.0), st.floats(-1.5, 1.5), st.integers(1, 3), st.floats(0.0, 0.3))
@hsettings(max_examples=80, deadline=None)
def test_answers_that_tell_no_more_than_the_models_usual_one_fell_nothing_however_often_the_row_was_asked(
        rate, a, b, times, above):
    """Under a profile whose answers map is ``a``, ``b`` and whose gold says yes at ``rate``: an answer the map puts
    at or below that rate counts nothing, so a row asked of 1 to 3 later speeches stands whole; one the map puts
    above it counts its share of what is left above the rate, combined over the times it was asked."""
    from debatrix.core.profile import _logit, _sigmoid

    prof = _profile("answers", a, b, base_rate=rate)
    d = _six()
    q = min(0.95, rate + above)  # the mapped P wanted; the model's P that the map sends there
    p = _sigmoid((_logit(q) - b) / a)
    assume(0.001 < p < 0.999)  # a P the model could give (a steep map would need one past its last digit)
    lines = [Line(speech=s, target="S1.1", by=f"S{s + 1}.1", answers=p) for s in (1, 3, 5)[:times]]
    row = next(t for t in ledger(d, _flows(d, lines=lines), "argument", prof).threads if t.id == "S1.1")
    counts = max(0.0, (prof.adjusted("answers", p, 1) - rate) / (1 - rate))
    assert all(c.counts == pytest.approx(counts, abs=2e-3) for c in row.cells)
    assert row.answered == pytest.approx(1 - (1 - counts) ** times, abs=5e-3)
    if above < 1e-3:  # the model's usual answer: it could not tell, so the row is unclear, never "dropped"
        assert row.stands == pytest.approx(1.0, abs=5e-3) and row.status == "unclear"
        assert set(row.cell_words) == {"could not tell"}
    # the rate is a figure of the model's profile, not of the debate: an unprofiled model's answers count as given
    bare = next(t for t in ledger(d, _flows(d, lines=lines), "argument").threads if t.id == "S1.1")
    assert bare.cells[0].counts == pytest.approx(p, abs=1e-3)


@given(st.floats(0.2, 0.7), st.floats(0.3, 3.0), st.floats(-1.0, 1.0), st.sampled_from([(2, 2, 2, 2), (1, 1, 1, 1, 1, 1)]))
@hsettings(max_examples=60, deadline=None)
def test_a_model_that_cannot_tell_an_answer_from_none_leaves_the_argument_verdict_to_the_arguments_whoever_speaks_first(
        rate, a, b, shape):
    """Every later passage of the other side asked about every earlier row, and the model's answer the same for all
    of them, mapped to the gold's base rate: the answers tell nothing, so with as many arguments each the verdict is
    a tie. Combining them as if they told something fells the first speaker's rows more, asked about more often,
    and names the second speaker on the order alone."""
    from debatrix.core.profile import _logit, _sigmoid

    prof = _profile("answers", a, b, base_rate=rate)
    d = _debate(shape)
    p = _sigmoid((_logit(rate) - b) / a)  # mapped to the base rate exactly
    lines = [Line(speech=later.speech, target=row.id, by=later.id, answers=p)
             for row in d.passages for later in d.passages
             if later.speech > row.speech and d.speeches[later.speech].speaker != d.speeches[row.speech].speaker]
    v = flow_verdict(ledger(d, _flows(d, lines=lines), "argument", prof), "argument")
    assert v.probabilities["Ana"] == pytest.approx(v.probabilities["Ben"], abs=2e-3)
    old = flow_verdict(ledger(d, _flows(d, lines=lines), "argument", _profile("answers", a, b)), "argument")
    assert old.probabilities["Ben"] > old.probabilities["Ana"] + 0.01  # what it was before the rate was recorded


def test_a_result_before_1_8_reads_its_refutations_as_answers():
    from debatrix.core.flow import Thread

    old = Thread.model_validate({"id": "S1.1", "speaker": "Ana", "side": "pro", "gist": "g", "argument": 1.0,
                                 "evidence": None, "refuted": 0.8, "conceded": 0.0, "answerable": True,
                                 "cells": [{"speech": 1, "move": "refutes", "answered": 0.8}]})
    assert old.answered == pytest.approx(0.8) and old.stands == pytest.approx(0.2) and old.status == "refuted"
    assert Line.model_validate({"speech": 1, "target": "S1.1", "refutes": 0.3, "concedes": 0.2}).answers == 0.5


def test_every_row_and_tally_is_attributed_to_the_speaker_of_the_speech_it_was_said_in():
    # the expected speaker and words come from how the debate was built (speech i by Ana when i is odd, its k-th
    # paragraph made of the word w{i-1}{k-1}), not from the passage table the ledger itself reads
    d = _debate((2, 3, 1, 2))
    led = ledger(d, _flows(d), "argument")
    assert len(led.threads) == 8
    for t in led.threads:
        speech, k = (int(x) for x in t.id[1:].split("."))
        assert t.speaker == ("Ana" if speech % 2 else "Ben")
        assert t.gist.startswith(f"w{speech - 1}{k - 1} ")
    mine = {t.debater: t.arguments for t in led.tallies}
    assert mine == {"Ana": pytest.approx(3.0), "Ben": pytest.approx(5.0)}  # each row weighs its P(argument), 1


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=4), st.floats(0.0, 1.0))
@hsettings(max_examples=120, deadline=None)
def test_a_rows_status_and_its_cells_words_never_disagree(counts, rebuttal):
    """One rule for a row and its cells (``ledger.reading``): a dropped row's cells all read "asked, not answered";
    a contested row has no cell "answered" and one at least that counts; a refuted or extended row has a cell that
    counts; a cell "answered" alone reaches even odds, so its row is refuted or extended. ``rebuttal``: Ana's
    answer to the first answering passage (an extension where it stands)."""
    from debatrix.core.flow import CELL_MEANING, EVEN, PARTLY_AT, STATUS_MEANING, reading

    d = _debate((2, 4, 2))
    by = [p.id for p in d.passages if p.speech == 1]
    lines = [Line(speech=1, target="S1.1", by=b, answers=c) for b, c in zip(by, counts)]
    lines.append(Line(speech=2, target=by[0], by="S3.1", answers=rebuttal))
    row = next(t for t in ledger(d, _flows(d, lines=lines), "argument").threads if t.id == "S1.1")
    status, words = reading(row)
    assert status == row.status in STATUS_MEANING and words == row.cell_words and set(words) <= set(CELL_MEANING)
    assert len(words) == len(row.cells) == len(counts)
    if status == "dropped":
        assert set(words) == {"asked, not answered"} and row.answered < PARTLY_AT, (counts, words)
    if status == "contested":
        assert "answered" not in words and set(words) - {"asked, not answered"}, (counts, words)
    if status in ("refuted", "extended"):
        assert row.answered >= EVEN and set(words) - {"asked, not answered"}, (counts, words)
    if "answered" in words:
        assert status in ("refuted", "extended"), (counts, words)
    assert status != "untested"  # Ben spoke after it


def test_rows_below_even_odds_are_not_shown_and_weigh_nothing():
    d = _debate()
    led = ledger(d, _flows(d, argument=0.3), "argument")
    assert led.threads == ()
    assert led.tally("Ana").arguments == 0.0


def test_engagement_counts_only_rows_spoken_before_one_of_the_debaters_speeches():
    d = _debate()
    lines = [Line(speech=2, target="S2.1", answers=1.0), Line(speech=2, target="S2.2", answers=0.0)]
    led = ledger(d, _flows(d, lines=lines), "argument")
    ana, ben = led.tally("Ana"), led.tally("Ben")
    # Ben's speech 2 came before Ana's speech 3; speech 4 came after all (every passage at P 1: each weighs 1)
    assert ana.engageable == pytest.approx(2.0)
    assert ana.engagement == pytest.approx(0.5)
    assert ben.engageable == pytest.approx(4.0) and ben.engagement == pytest.approx(0.0)


@given(st.floats(0.05, 0.95), st.integers(2, 4))
@hsettings(max_examples=40, deadline=None)
def test_replying_as_strongly_to_every_point_engages_as_much_however_many_chances_a_speaker_had(level, rounds):
    """Ben speaks after Ana in every round, so each of Ana's points faces more of his speeches than his face of
    hers: engagement is how strongly a debater's replies answered what they were asked about, so two debaters who
    reply at the same strength engage alike (combining every reply would give the later speaker more on chances)."""
    d = _debate((1,) * (2 * rounds))
    lines = [Line(speech=j, target=f"S{i + 1}.1", by=f"S{j + 1}.1", answers=level)
             for j in range(1, 2 * rounds) for i in range(j) if (i - j) % 2]
    led = ledger(d, _flows(d, lines=lines), "argument")
    ana, ben = led.tally("Ana"), led.tally("Ben")
    assert ana.engagement == pytest.approx(level, abs=2e-3)
    assert ben.engagement == pytest.approx(level, abs=2e-3)


@given(st.lists(st.tuples(st.integers(1, 3), st.floats(0, 1), st.floats(0, 1)), max_size=6))
@hsettings(max_examples=80, deadline=None)
def test_probabilities_stay_probabilities_answering_more_never_helps_the_row_and_answering_back_never_hurts(answers):
    """P(stands) from answers that count (after the baseline): a row answered harder stands no more, and an answer
    to its answer never makes it stand less."""
    from debatrix.core.flow import standing_chances

    d = _debate()
    lines = [Line(speech=j, target="S1.1", by=f"S{j + 1}.1", answers=a) for j, a, _ in answers if j % 2]
    back = [Line(speech=2, target="S2.1", by="S3.1", answers=b) for j, _, b in answers if j == 1][:1]

    def stands(xs):
        by_target: dict[str, list[Line]] = {}
        for x in xs:
            by_target.setdefault(x.target, []).append(x)
        return standing_chances(d, by_target)["S1.1"]

    first = stands(lines + back)
    assert 0 <= first <= 1
    harder = [x.model_copy(update={"answers": min(1.0, x.answers + 0.1)}) for x in lines]
    assert stands(harder + back) <= first + 1e-9
    assert stands(lines + back) >= stands(lines) - 1e-9


@given(st.lists(st.floats(0.0, 1.0), min_size=4, max_size=4), st.integers(1, 4), st.floats(0.55, 1.0))
@hsettings(max_examples=60, deadline=None)
def test_a_point_nobody_could_answer_counts_as_its_debaters_tested_points_stood(answers, last, argument):
    """The last speaker's closing points had no reply: they count toward what stands at the share of that
    debater's answerable points that stood, so adding or removing them moves the share standing nowhere, and the
    closing speech is no longer worth its length in untouchable points."""
    d = _debate((2, 2, 2, last))
    lines = [Line(speech=2, target=t, by="S3.1", answers=a) for t, a in zip(("S2.1", "S2.2"), answers[:2])]
    lines += [Line(speech=3, target=t, by="S4.1", answers=a) for t, a in zip(("S1.1", "S3.1"), answers[2:])]
    led = ledger(d, _flows(d, argument=argument, lines=lines), "argument")
    ben = led.tally("Ben")
    rows = [t for t in led.threads if t.speaker == "Ben"]
    tested = [t for t in rows if t.answerable]
    assert {t.id for t in rows if not t.answerable} == {f"S4.{k + 1}" for k in range(last)}
    rate = sum(t.weighs * t.stands for t in tested) / sum(t.weighs for t in tested)
    assert ben.tested == pytest.approx(rate, abs=1e-3)
    assert ben.untested == pytest.approx(sum(t.weighs for t in rows if not t.answerable), abs=1e-3)
    assert ben.standing / ben.arguments == pytest.approx(rate, abs=2e-3)
    # every one of Ana's rows could be answered by a later speech of Ben's: hers count as their answers left them
    ana = led.tally("Ana")
    assert ana.untested == 0 and ana.standing == pytest.approx(
        sum(t.weighs * t.stands for t in led.threads if t.speaker == "Ana"), abs=1e-3)


def test_openings_alone_leave_every_point_untested_and_counted_whole():
    d = _debate((2, 2))
    led = ledger(d, _flows(d, argument=0.8), "argument")
    ana, ben = led.tally("Ana"), led.tally("Ben")
    assert (ana.untested, ana.tested) == (0.0, 1.0)  # Ben's speech came after Ana's: it could have answered
    assert ben.tested == 1.0 and ben.standing == pytest.approx(ben.arguments)


def test_a_missing_speech_keeps_what_it_has_and_the_rest_is_judged():
    d = _debate()
    flows = _flows(d)
    flows[1] = SpeechFlow(dimension="argument", index=1, speaker="Ben", missing="StructuredOutputError: cut off")
    led = ledger(d, flows, "argument")
    assert not any(t.id.startswith("S2.") for t in led.threads)
    assert led.tally("Ana").arguments == pytest.approx(4 * 1.0)


# ------------------------------------------------------------------ verdicts, comments and checks from the ledger

from debatrix.graphs.finish import check_result  # noqa: E402
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
        own = [p.id for p in d.passages if p.speech == i]
        lines = tuple(Line(speech=i, target=t, by=draw(st.sampled_from(own)), answers=draw(prob))
                      for t in draw(st.lists(st.sampled_from(targets), unique=True))) if targets else ()
        flows.append(SpeechFlow(dimension="flow", index=i, speaker=s.speaker, marks=marks, lines=lines))
    return d, flows


def _swapped(d: Debate) -> Debate:
    return d.model_copy(update={"debaters": tuple(reversed(d.debaters))})


@hsettings(max_examples=40, deadline=None)
@given(decided(), st.sampled_from(DIMS))
def test_a_verdict_is_a_distribution_symmetric_in_the_listing_of_the_debaters(case, dim):
    d, flows = case
    v = flow_verdict(ledger(d, flows, dim))  # read by the measure of its name (general: the mean)
    if v.not_judged:  # language with no passage asked whether it reads clearly: says so, names no winner
        assert v.winner is None and v.probabilities == {} and dim in ("language",)
        return
    assert sum(v.probabilities.values()) == pytest.approx(1, abs=1e-3)
    # listed the other way round, the same debate gets the same verdict: nothing favours the first listed
    w = flow_verdict(ledger(_swapped(d), flows, dim))
    assert w.probabilities == pytest.approx(v.probabilities, abs=1e-4)
    if v.winner is not None:
        assert v.probabilities[v.winner] >= 0.5  # 1v1: a named winner is never shown as less likely than not


@hsettings(max_examples=40, deadline=None)
@given(decided(), st.sampled_from(DIMS))
def test_every_comment_cites_its_debaters_passages_and_no_one_elses_as_theirs(case, dim):
    from datetime import UTC, datetime

    from debatrix.core.models import DebaterJudgment, SpeechAnalysis
    from debatrix.core.results import DimensionResult, JudgeResult
    from debatrix.core.flow import measure_of, speech_note

    d, flows = case
    led = ledger(d, flows, dim)
    comments = {x.name: debater_comment(led, flows, d, x.name) for x in d.debaters}
    result = JudgeResult(debatrix_version="t", debate_id=d.id, motion=d.motion, format=d.format, mode="flow",
                         status="complete", started_at=datetime.now(UTC), finished_at=datetime.now(UTC),
                         dimensions=(DimensionResult(
                             name=dim, weight=1, allow_tie=False,
                             analyses=tuple(SpeechAnalysis(dimension=dim, index=f.index, speaker=f.speaker,
                                                           analysis=speech_note(f, d, measure_of(led).name, dim)) for f in flows),
                             debater_judgments=tuple(DebaterJudgment(dimension=dim, debater=n, comment=c, score=5)
                                                     for n, c in comments.items())),))
    checks = check_result(result, d)
    assert checks.flags == ()
    assert all(c.own_cited >= 1 for c in checks.comments)


def test_the_checks_find_a_foreign_an_unknown_and_a_missing_citation():
    from datetime import UTC, datetime

    from debatrix.core.models import DebaterJudgment
    from debatrix.core.results import DimensionResult, JudgeResult

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
    assert check_result(result, d).flags == ("argument comment on Ana cites none of their passages",
                                             "argument comment on Ana cites S9.9, S2.1 wrongly",
                                             "argument comment on Ben cites none of their passages")


def test_refuting_an_argument_moves_the_argument_verdict_to_the_other_side():
    d = _debate()
    calm = ledger(d, _flows(d), "argument")
    hit = ledger(d, _flows(d, lines=[Line(speech=1, target="S1.1", answers=0.9),
                                     Line(speech=3, target="S3.2", answers=0.9),
                                     Line(speech=1, target="S1.2", answers=0.1),  # asked, not answered
                                     Line(speech=2, target="S2.1", answers=0.1)]), "argument")
    assert flow_verdict(hit, "argument").probabilities["Ben"] > flow_verdict(calm, "argument").probabilities["Ben"]
    assert flow_verdict(calm, "argument").winner is None  # the same standing on both sides: no winner named


def test_the_panel_is_the_weighted_mean_of_the_judged_dimensions_and_sums_to_one():
    d = _debate()
    led = ledger(d, _flows(d, lines=[Line(speech=1, target="S1.1", answers=0.9)]), "argument")
    a, lang = (flow_verdict(led.model_copy(update={"dimension": m, "measure": m})) for m in ("argument", "language"))
    s = FlowVerdict(dimension="source", strengths={"Ana": 0.0, "Ben": 0.4}, probabilities={"Ana": 0.4, "Ben": 0.6},
                    reason="")  # a second judged dimension
    assert lang.not_judged  # no passage was asked whether it reads clearly
    panel = combined("panel", [(3, a), (1, s), (2, lang)])  # language is not judged: its weight goes nowhere
    assert panel.probabilities["Ben"] == pytest.approx((3 * a.probabilities["Ben"] + s.probabilities["Ben"]) / 4,
                                                       abs=1e-3)
    assert sum(panel.probabilities.values()) == pytest.approx(1, abs=1e-3)
    assert "Not weighed: language (not judged)" in panel.reason and "language ×" not in panel.reason


def test_a_dimension_whose_decisions_are_missing_names_no_winner_and_neither_does_the_panel():
    d = _debate()
    flows = [f.model_copy(update={"marks": (), "missed": {"argues": 2, "evidence": 2}, "missing": "all of them"})
             for f in _flows(d)]
    led = ledger(d, flows, "argument")
    a, s = (flow_verdict(led.model_copy(update={"dimension": m, "measure": m}), flows=flows) for m in
            ("argument", "source"))
    assert a.winner is None and a.probabilities == {} and "8 of the 8 decisions" in a.not_judged
    assert s.winner is None
    panel = combined("panel", [(3, a), (2, s)])
    assert panel.winner is None and panel.probabilities == {} and "argument was not judged" in panel.not_judged
    # a few missing (at most MISSING_AT of what the dimension rests on) still decide
    few = [f.model_copy(update={"decided": {"argues": 9, "answers": 1}, "missed": {"argues": 1}}) for f in _flows(d)]
    assert flow_verdict(ledger(d, few, "argument"), "argument", few).not_judged == ""


def test_a_verdict_from_answers_without_probabilities_says_so():
    d = _debate()
    led = ledger(d, _flows(d, lines=[Line(speech=1, target="S1.1", answers=1.0)]), "argument")
    said = flow_verdict(led, "argument", counted=True).reason
    assert "share of answers" in said and "(P " not in said


def test_each_open_row_is_asked_once_of_the_passage_closest_to_it_several_a_passage():
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
    assert pairs == {"S2.1": ["S1.1"]}  # the zebras, once, of the passage that says most about them; no quokka
    flows.append(SpeechFlow(dimension="flow", index=1, speaker="Ben",
                            marks=tuple(Mark(id=p.id, argument=0.9) for p in d.passages if p.speech == 1)))
    asked = asked_pairs(d, flows, 2)
    # speech 3 is one passage: it is asked about every row of Ben it shares a word with (zebras), never about one
    # of its own side, and not about S2.2, which shares none
    assert asked == {"S3.1": ["S2.1"]}
    two = d.model_copy(update={"speeches": (*d.speeches[:2], Speech(
        speaker="Ana", content="Ben is wrong about zebras; nothing here matches, truly, and quokkas smile. " * 4))})
    assert asked_pairs(two, flows, 2) == {"S3.1": ["S2.1", "S2.2"]}  # one passage answering two points
    no_argument = [flows[0].model_copy(update={"marks": tuple(Mark(id=m.id, argument=0.1) for m in flows[0].marks)})]
    assert open_rows(d, no_argument, 1) == [] and asked_pairs(d, no_argument, 1) == {}


def test_a_point_answered_in_other_words_is_proposed_by_meaning():
    from debatrix.core.flow import propose

    rows = [("S1.1", "Tired staff make mistakes."), ("S1.2", "Quokkas smile.")]
    asking = [("S2.1", "Exhausted employees err more often.")]
    assert propose(asking, rows, {}) == {}  # no word in common
    meaning = {"S1.1": (1.0, 0.0), "S1.2": (0.0, 1.0), "S2.1": (0.8, 0.6)}
    assert propose(asking, rows, {}, meaning, per_passage=1) == {"S2.1": ["S1.1"]}
    assert propose(asking, rows, {}, meaning) == {"S2.1": ["S1.1", "S1.2"]}  # both, closest first, in row order


@st.composite
def proposal_case(draw):
    words = st.lists(st.sampled_from("alpha beta gamma delta eps zeta eta theta iota kappa".split()), min_size=1,
                     max_size=6).map(" ".join)
    rows = [(f"S1.{k}", draw(words)) for k in range(1, draw(st.integers(1, 12)) + 1)]
    asking = [(f"S2.{k}", draw(words)) for k in range(1, draw(st.integers(1, 5)) + 1)]
    return rows, asking, draw(st.integers(1, 4)), draw(st.integers(0, 30))


@hsettings(max_examples=80, deadline=None)
@given(proposal_case())
def test_proposals_keep_their_budgets_ask_each_row_once_and_only_of_the_asking_passages(case):
    from debatrix.core.flow import idf, propose

    rows, asking, per, budget = case
    weights = idf([t for _, t in rows + asking])
    got = propose(asking, rows, weights, per_passage=per, budget=budget)
    asked = [r for rs in got.values() for r in rs]
    assert len(asked) == len(set(asked)) <= budget
    assert set(got) <= {p for p, _ in asking} and set(asked) <= {r for r, _ in rows}
    assert all(1 <= len(rs) <= per for rs in got.values())
    # nothing left out that shares a word saying something (one not in every text), while the budgets allow
    sharing = {r for r, t in rows if any(weights[w] > 0 for _, a in asking for w in set(t.split()) & set(a.split()))}
    if budget >= len(rows) and per >= len(rows):
        assert set(asked) == sharing


def test_words_are_found_in_scripts_written_without_spaces():
    from debatrix.core.flow import terms

    assert terms("四天工作制") == ["四天", "天工", "工作", "作制"]
    assert set(terms("支持四天工作制")) & set(terms("四天工作制不可行"))
    assert terms("Über alles, 2024!") == ["über", "alles", "2024"]
    assert terms("Мы против") == ["мы", "проти"]
    assert terms("соперничество") == terms("соперничества") == terms("Соперничеству")  # inflections meet


def test_a_passage_whose_decision_is_missing_weighs_nothing():
    """No verdict rests on a guessed decision: a passage the model gave no answer about is no row and adds nothing
    to its speaker's tally (it was weighed as a middle passage before)."""
    d = _debate((1, 1, 1, 1))
    flows = _flows(d)
    flows[2] = flows[2].model_copy(update={"marks": (Mark(id="S3.1", argument=None),), "missed": {"argues": 1}})
    led = ledger(d, flows, "argument")
    assert "S3.1" not in {t.id for t in led.threads}
    assert led.tally("Ana").arguments == pytest.approx(1.0)


def test_a_debater_whose_argues_decisions_are_all_missing_has_no_row_counted_as_measured():
    """Where every "argues" answer of a debater is missing, none of their passages weighs as an argument (where
    none was measured the flow used to weigh every passage 1, so the sheet read "2 of 2 arguments standing"), and
    the count says which passages it left out."""
    from debatrix.core.flow import tally_line

    d = _debate((1, 1, 1, 1))
    flows = _flows(d)
    for k in (0, 2):  # Ana's speeches
        f = flows[k]
        flows[k] = f.model_copy(update={
            "marks": tuple(m.model_copy(update={"argument": None}) for m in f.marks),
            "missed": {"argues": len(f.marks)}, "unknown": tuple(("argues", m.id) for m in f.marks)})
    led = ledger(d, flows, "argument")
    assert led.tally("Ana").arguments == 0 and not [t for t in led.threads if t.speaker == "Ana"]
    said = tally_line(led, "Ana")
    assert said.startswith("Ana: 0 of 0 arguments standing") and "not counted S1.1, S3.1" in said
    assert "not counted" not in tally_line(led, "Ben")
    everyone = [f.model_copy(update={"marks": tuple(m.model_copy(update={"argument": None}) for m in f.marks),
                                     "missed": {"argues": len(f.marks)}}) for f in _flows(d)]
    assert all(t.arguments == 0 for t in ledger(d, everyone, "argument").tallies)  # asked, none answered: no row


def test_a_blind_decision_in_the_profile_leaves_its_dimension_unjudged_and_says_whose_figure():
    from debatrix.core.flow import asked_kinds, blind_reason

    prof = _profile("clear", 1.0, 0.0, auc=(0.51, 0.44))
    why = blind_reason("language", prof)
    assert why.startswith("the answers of m to") and "0.51 [0.44, 0.56]" in why and "2026-12-02" in why
    assert blind_reason("argument", prof) == "" and blind_reason("language", None) == ""
    assert "clear" not in asked_kinds(["argument", "language"], profile=prof)
    assert "clear" in asked_kinds(["argument", "language"], profile=None)  # unprofiled: every dimension asked
    d = _debate()
    led = ledger(d, _flows(d), "language", prof).model_copy(update={"measure": "language", "blind": why})
    v = flow_verdict(led, "language", profile=prof)
    assert v.winner is None and v.blind and why[1:] in v.reason


from .many_scripts import REBUTTALS  # noqa: E402


@pytest.mark.parametrize("language", sorted(REBUTTALS))
def test_a_rebuttal_in_any_script_is_proposed_with_the_point_it_answers_by_words_alone(language):
    """Without spaces (Chinese: character pairs), inflected (Russian: "соперничество"/"соперничества") or with
    attached articles (Arabic): each rebutting passage's first proposal, by shared words alone, is the point it
    answers, and no passage is asked about all six."""
    from debatrix.core.flow import idf, propose

    first, second = REBUTTALS[language]
    rows = [(f"S1.{i + 1}", t) for i, t in enumerate(first)]
    asking = [(f"S2.{i + 1}", t) for i, (_, t, _) in enumerate(second)]
    weights = idf([t for _, t in rows + asking])
    got = propose(asking, rows, weights, per_passage=1, budget=len(asking))
    assert got == {pid: [rows[target][0]] for (pid, _), (_, _, target) in zip(asking, second)}
    assert all(len(rs) <= 3 for rs in propose(asking, rows, weights).values())


def test_speeches_written_without_seeing_each_other_are_not_asked_about_each_other():
    """A simultaneous round (NYU's openings): the second opening is asked about nothing of the first, the first's
    rows are not dropped by it (it could not answer them), and the next round may answer both."""
    from debatrix.core.flow import flow_calls

    d = _debate((2, 2, 2, 2)).model_copy(update={"simultaneous": ((1, 2),)})
    flows = _flows(d)
    assert open_rows(d, flows, 1) == []  # Ben's opening could not see Ana's
    assert open_rows(d, flows, 2) == ["S2.1", "S2.2"]  # Ana's reply answers Ben's opening
    assert open_rows(d, flows, 3) == ["S1.1", "S1.2", "S3.1", "S3.2"]
    plain = _debate((2, 2, 2, 2))
    assert flow_calls(d) < flow_calls(plain)
    two = _debate((2, 2)).model_copy(update={"simultaneous": ((1, 2),)})
    rows = {t.id: t for t in ledger(two, _flows(two), "argument").threads}
    assert rows["S1.1"].status == "untested" and not rows["S1.1"].answerable


def test_a_debate_file_names_its_simultaneous_rounds_and_a_wrong_one_is_refused(tmp_path):
    from debatrix.core.errors import InvalidDebateError
    from debatrix.core.loader import load_debate

    text = ("motion: m\ndebaters: [{name: A, side: pro}, {name: B, side: con}]\nsimultaneous: [[1, 2]]\n"
            "speeches: [{speaker: A, content: one}, {speaker: B, content: two}, {speaker: A, content: three}]\n")
    (tmp_path / "d.yaml").write_text(text)
    assert load_debate(tmp_path / "d.yaml").together(1) == frozenset({0, 1})
    (tmp_path / "bad.yaml").write_text(text.replace("[[1, 2]]", "[[1, 7]]"))
    with pytest.raises(InvalidDebateError, match="speech 7 does not exist"):
        load_debate(tmp_path / "bad.yaml")


def _reading(name: str, right: float, items: int, first: float = 0.5, gold_first: float = 0.5):
    from debatrix.core.profile import ReadingProfile, wilson

    return ReadingProfile(reading=name, gold="nyu_debate", items=items, right=wilson(right * items, items),
                          first_named=wilson(first * items, items), gold_first=gold_first)


def _verdict(dim: str, ana: float) -> FlowVerdict:
    return FlowVerdict(dimension=dim, strengths={}, probabilities={"Ana": ana, "Ben": round(1 - ana, 4)}, reason="r")


@given(st.floats(0.56, 0.95), st.floats(0.05, 0.95), st.floats(0.05, 0.95))
@hsettings(max_examples=60, deadline=None)
def test_the_panel_weighs_each_dimension_as_its_reading_was_right_on_gold_and_ignores_one_that_is_not(r, p_arg, p_src):
    """A reading right ``r`` of 400 debates carries and weighs its log-odds; one at a coin's share weighs nothing,
    so the panel is the carrying reading's verdict; one that leans to a speaking place beyond the gold's weighs
    nothing either; with too few debates measured the dimensions keep their own weights."""
    import math

    from debatrix.core.flow import combined, weighed_by_readings

    prof = _profile("argues", 1.0, 0.0).model_copy(update={"readings": (
        _reading("flow/argument", r, 400), _reading("flow/source", 0.5, 400))})
    parts = [(3.0, _verdict("argument", p_arg)), (2.0, _verdict("source", p_src))]
    weighed, how = weighed_by_readings(parts, prof)
    assert weighed[0][0] == pytest.approx(math.log(r / (1 - r)), abs=2e-3) and weighed[1][0] == 0.0
    assert "source not weighed" in how and "not above a coin" in how
    assert how.startswith("decided by the argument reading alone")
    panel = combined("panel", weighed)
    assert panel.probabilities["Ana"] == pytest.approx(p_arg, abs=1e-4)
    leaning = prof.model_copy(update={"readings": (_reading("flow/argument", r, 400, first=0.9, gold_first=0.4),
                                                   _reading("flow/source", r, 400))})
    weighed, how = weighed_by_readings(parts, leaning)
    assert weighed[0][0] == 0.0 and "leans to the first speaker" in how
    few = prof.model_copy(update={"readings": (_reading("flow/argument", r, 20),)})
    assert weighed_by_readings(parts, few)[0] == parts and "too few debates" in weighed_by_readings(parts, few)[1]
    assert weighed_by_readings(parts, None) == (parts, "")
    # a profile with readings of another mode only: the stated default, said
    other = prof.model_copy(update={"readings": (_reading("direct", r, 400),)})
    kept, said = weighed_by_readings(parts, other)
    assert kept == parts and "no reading of these dimensions was measured on gold" in said


@given(st.floats(0.05, 0.95), st.floats(-2.0, 2.0), st.sampled_from(["Ana", "Ben"]))
@hsettings(max_examples=60, deadline=None)
def test_a_dimensions_place_lean_is_taken_out_of_the_first_speakers_probability_as_its_profile_fitted(p_ana, shift,
                                                                                                    first):
    """A reading with a place fit: its verdict has the fit's shift added to the log-odds of whoever spoke first (Ana
    or Ben, whichever the verdict lists first), the probabilities still sum to one, the verdict keeps the shift and
    its reason says it with both figures; the panel weighs the corrected verdict and says the lean was taken out. A
    dimension with no fit, or not judged, is left as it came."""
    import math

    from debatrix.core.flow import combined, not_judged, place_taken_out, weighed_by_readings
    from debatrix.core.profile import PlaceFit, wilson

    fit = PlaceFit(shift=shift, fitted=40, checked=40, right_before=wilson(24, 40), right=wilson(26, 40),
                   first_before=wilson(30, 40), first_named=wilson(20, 40), gold_first=0.5)
    prof = _profile("argues", 1.0, 0.0).model_copy(update={"readings": (
        _reading("flow/argument", 0.7, 400).model_copy(update={"place": fit}),)})
    v = place_taken_out(_verdict("argument", p_ana), prof, first)
    p_first = p_ana if first == "Ana" else 1 - p_ana
    want = 1 / (1 + math.exp(-(math.log(p_first / (1 - p_first)) + shift)))
    assert v.probabilities[first] == pytest.approx(want, abs=2e-4)
    assert sum(v.probabilities.values()) == pytest.approx(1.0, abs=2e-4)
    assert v.place_shift == shift and f"{shift:+.2f} to {first}'s log-odds" in v.reason
    given = _verdict("argument", p_ana).probabilities[first]  # as the verdict kept it (to 4 places), not p_first
    assert f"{given:.2f} -> {v.probabilities[first]:.2f}" in v.reason
    weighed, how = weighed_by_readings([(1.0, v)], prof)
    assert combined("panel", weighed).probabilities[first] == pytest.approx(v.probabilities[first], abs=1e-4)
    assert "its place lean taken out" in how
    source = _verdict("source", p_ana)
    assert place_taken_out(source, prof, first) is source  # no reading of source: nothing to take out
    assert place_taken_out(_verdict("argument", p_ana), None, first).place_shift is None
    gone = not_judged("argument", "blind", "no winner", blind=True)
    assert place_taken_out(gone, prof, first) is gone
    # a fit that failed its check (the shifted reading still leans, on the debates it never saw) is not applied
    failed = fit.model_copy(update={"first_named": wilson(36, 40)})
    kept = prof.model_copy(update={"readings": (prof.readings[0].model_copy(update={"place": failed}),)})
    raw = _verdict("argument", p_ana)
    assert place_taken_out(raw, kept, first) is raw


def test_where_no_reading_of_the_model_carries_the_panel_names_no_winner_and_says_each_figure():
    from debatrix.core.flow import combined, weighed_by_readings

    prof = _profile("argues", 1.0, 0.0).model_copy(update={"readings": (
        _reading("flow/argument", 0.45, 114), _reading("flow/source", 0.52, 114))})
    weighed, how = weighed_by_readings([(3.0, _verdict("argument", 0.8)), (2.0, _verdict("source", 0.3))], prof)
    panel = combined("panel", weighed)
    assert panel.winner is None and panel.not_judged and panel.blind
    assert "argument not weighed (right 0.45" in how and "source not weighed (right 0.52" in how
