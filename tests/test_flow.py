"""The flow's ledger, computed from constructed decisions (no model): rows, what became of each, and the tallies, with
every row's speaker a lookup in the passage table."""

from __future__ import annotations

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from debatrix.core.flow import Line, Mark, SpeechFlow, gist, ledger
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
