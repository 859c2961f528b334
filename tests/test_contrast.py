"""The contrast suite's changes on fixed texts (what each removes, what it keeps), its reading of verdicts and its
figures; the default sample on the real data (marked)."""

from __future__ import annotations

import json
from collections import Counter
from types import SimpleNamespace as NS

import pytest

from debatrix.benchmarks.contrast import (MIN_CHANGE, PERTURBATIONS, Contrast, garbled, off_topic, paragraphs,
                                          perturbed, without_clash, without_sources)
from debatrix.core.models import Debate, Side

from .conftest import data_required, winner_record

SOURCED = ("Remote work raises output. A Stanford study of 16,000 workers found a 13% gain. "
           "Commutes waste time.\n\nAccording to the ONS, sick days fell. See [1](https://ons.gov.uk/x). "
           "Two examples make the point.")


def test_removing_sources_drops_every_sentence_with_evidence_and_keeps_the_rest():
    out = without_sources(SOURCED)
    assert out == "Remote work raises output. Commutes waste time.\n\nTwo examples make the point."
    assert without_sources("A study says so. A survey too.") == "A study says so."  # never empty


def test_removing_clash_drops_what_engages_the_opponent_and_keeps_the_case():
    text = ("My opponent says costs rise. Ana is wrong about trials. You ignore the data. "
            "> quoted line\nHospitals cannot cut hours. \"Costs will rise sharply\" is false. Staff burn out.")
    out = without_clash(text, ["Ana"])
    assert out == "Hospitals cannot cut hours. Staff burn out."
    assert "Ana" in without_clash("Ana Karenina is a novel. It is long.", [])  # no opponent named: no match


def test_off_topic_keeps_the_opening_and_close_and_takes_plain_donor_sentences():
    text = " ".join(f"Own sentence {w}." for w in "abcdefgh")
    donor = "Cats sleep a lot. A 2019 study says 16 hours. Dogs bark at night. Fish swim. Birds sing loudly."
    out = off_topic(text, donor)
    flat = [s for p in paragraphs(out) for s in p]
    assert flat[:2] == ["Own sentence a.", "Own sentence b."] and flat[-2:] == ["Own sentence g.", "Own sentence h."]
    assert "Own sentence d." not in out and "Cats sleep a lot." in out and "study" not in out
    assert off_topic("One sentence only.", donor) == "One sentence only."


def test_garbling_shuffles_sentences_and_swaps_letters_deterministically():
    text = "Alpha bravo charlie delta. Echoes foxtrot golfing hotels. India juliet kilos limas. Mikes novembers."
    out = garbled(text, 3)
    assert out == garbled(text, 3) and out != text and out != garbled(text, 4)
    assert sorted(out.split()) != sorted(text.split())  # letters swapped
    # the same letters, word by word, only in another order
    assert Counter("".join(sorted(out.replace(" ", "")))) == Counter("".join(sorted(text.replace(" ", ""))))


def _debate(speeches):
    return Debate.model_validate({
        "id": "d", "motion": "This house would ban cars in city centres.",
        "debaters": [{"name": "Ana", "side": "pro"}, {"name": "Ben", "side": "con"}],
        "speeches": [{"speaker": sp, "content": c} for sp, c in speeches]})


def test_a_perturbation_changes_only_the_chosen_side_and_reports_how_much():
    d = _debate([("Ana", SOURCED), ("Ben", "Ana says 40% of trips are short. You forget deliveries. Shops close."),
                 ("Ana", "Ben ignores my study. Air is cleaner. Children walk."), ("Ben", "Buses are slow. Jobs go.")])
    donor = _debate([("Ana", "Cats sleep. Dogs bark. Fish swim. Birds sing."), ("Ben", "No.")])
    for p in PERTURBATIONS:
        for side in Side:
            out, share = perturbed(d, p, side, donor, seed=1)
            names = {"pro": "Ana", "con": "Ben"}
            for s0, s1 in zip(d.speeches, out.speeches, strict=True):
                if s0.speaker != names[side.value]:
                    assert s0.content == s1.content
            assert out.id == f"d~{p}~{side.value}" and 0 <= share <= 1
    clash, share = perturbed(d, "clash", Side.PRO, donor)
    assert clash.speeches[0].content == SOURCED  # the opening speech has nobody to answer
    assert clash.speeches[2].content == "Air is cleaner. Children walk." and share > 0
    untouched, none = perturbed(_debate([("Ana", "Plain words."), ("Ben", "Other plain words.")]), "source", Side.PRO,
                                donor)
    assert none == 0.0 and none < MIN_CHANGE
    with pytest.raises(ValueError):
        perturbed(d, "argument", Side.PRO, None)


def test_verdicts_are_read_for_the_intact_side_in_every_way():
    from debatrix.benchmarks.base import stored_verdicts
    from debatrix.benchmarks.contrast import intact_read
    from debatrix.core.results import DimensionResult
    from debatrix.core.models import Judgment, Verdict

    def record(v, intact):
        dims = [DimensionResult(name="general", weight=1.0, allow_tie=True, verdict=v)]
        result = NS(dimensions=dims, general=None, judged=dims)
        return {"verdicts": stored_verdicts(result), "tie": 0.5,
                "sides": {n: 1.0 if n == intact else 0.0 for n in ("Ana", "Ben")}}

    def read(rec):
        return {m: intact_read(rec, "general", m) for m in ("dp", "sc", "argmax", "p_intact")}

    order = lambda w: Judgment(order=("Ana", "Ben"), winner=w, comment="long reasons")  # noqa: E731
    v = Verdict(dimension="general", comment="why", winner="Ana", score_winner=None,
                orders=(order("Ana"), order("Ben")), probabilities={"Ana": 0.6, "Ben": 0.3, "tie": 0.1})
    assert read(record(v, "Ana")) == {"dp": 1.0, "sc": 0.5, "argmax": 0.5, "p_intact": 0.65}
    assert read(record(v, "Ben")) == {"dp": 0.0, "sc": 0.5, "argmax": 0.5, "p_intact": 0.35}
    one = Verdict(dimension="general", comment="", winner=None, score_winner="Ben", orders=(order("Ben"),))
    assert read(record(one, "Ben")) == {"dp": 0.5, "sc": 1.0, "argmax": 1.0, "p_intact": None}
    # the record keeps the verdict, not its prose (the result file beside items.jsonl has that)
    assert "why" not in json.dumps(record(v, "Ana")) and "long reasons" not in json.dumps(record(v, "Ana"))


def test_figures_per_change_and_place_of_the_changed_side():
    def rec(p, first, dp, status="complete"):
        # "Con" is the intact side here (coded 1.0): dp 1.0 names it, 0.0 the changed side, 0.5 a tie
        return winner_record("x", {p: dp, "general": 1.0}, score=1.0, status=status, benchmark="contrast",
                             perturbation=p, degraded_first=first)

    records = [rec("source", True, 1.0), rec("source", False, 0.0), rec("source", False, 0.5),
               rec("clash", True, 1.0), rec("clash", True, 0.0, status="incomplete")]
    rows = {(r.metric, r.subset): (r.value, r.n) for r in Contrast.metrics(NS(), records)}
    assert rows[("completion_rate", "all")] == (0.8, 5)
    assert rows[("intact_dp_source", "all")] == (0.5, 3)
    assert rows[("intact_dp_source", "degraded_first")] == (1.0, 1)
    assert rows[("intact_dp_source", "degraded_second")] == (0.25, 2)
    assert rows[("intact_dp_clash", "all")] == (1.0, 1)  # the incomplete item is not counted
    assert rows[("intact_dp_all", "all")] == (0.625, 4) and rows[("intact_general_dp_all", "all")] == (1.0, 4)
    # a mode that did not judge the changed dimension is read on its general verdict
    general_only = winner_record("y", {"general": 0.0}, benchmark="contrast", perturbation="source",
                                 degraded_first=True)
    rows = {(r.metric, r.subset): r.value for r in Contrast.metrics(NS(), [general_only])}
    assert rows[("intact_dp_source", "all")] == 0.0


@data_required
def test_the_default_sample_is_32_items_with_the_changed_side_in_both_places():
    bench = Contrast()  # the data are there (else skipped, saying so): a loader error is a failure, not a skip
    items = bench.load()
    assert len(items) == 32 and len({it.base for it in items}) == 8
    places = Counter((it.perturbation, bench.gold_record(it)["degraded_first"]) for it in items)
    assert all(places[(p, True)] >= 2 and places[(p, False)] >= 2 for p in PERTURBATIONS), places
    for it in items[:4]:
        d = bench.debate(it)
        assert len(d.speeches) == 4 and sum(len(s.content) for s in d.speeches) <= 9_000
        assert bench.gold_record(it)["change"] >= MIN_CHANGE


@data_required
def test_the_suite_runs_end_to_end_and_resumes(tmp_path):
    from typer.testing import CliRunner

    from debatrix.app.cli import app
    from debatrix.testing import FakeOpenAIServer

    out = tmp_path / "contrast"
    with FakeOpenAIServer() as srv:
        args = ["bench", "contrast", "--modes", "direct", "--limit", "1", "--out", str(out),
                "--base-url", srv.base_url, "--model", "fake-model"]
        first = CliRunner().invoke(app, args)
        assert first.exit_code == 0, first.output
        sent = len(srv.requests)
        again = CliRunner().invoke(app, args)
        assert again.exit_code == 0 and len(srv.requests) == sent
    assert "4 judged now" in first.output and "intact_dp_source" in first.output
    summary = (out / "summary.md").read_text()
    assert "degraded_first" in summary and "blind" in summary


def test_the_word_count_baseline_names_whoever_wrote_more():
    from debatrix.benchmarks.contrast import ContrastItem
    from debatrix.core.models import Debater, Speech

    def debate(pro_words, con_words):
        return Debate(id="x", motion="m", debaters=(Debater(name="P", side="pro"), Debater(name="C", side="con")),
                      speeches=(Speech(speaker="P", content="w " * pro_words), Speech(speaker="C", content="w " * con_words)))

    cases = {"a": (debate(10, 30), Side.PRO, "source"), "b": (debate(30, 10), Side.PRO, "source"),
             "c": (debate(20, 20), Side.CON, "clash")}

    class Fixed(Contrast):
        def debate(self, item):
            return cases[item.id][0]

    items = [ContrastItem(id=k, perturbation=p, degraded=side) for k, (_, side, p) in cases.items()]
    rows = {(r.metric, r.baseline): r for r in Fixed().baselines(items)}
    longer = "the side with more words"
    # a: the changed side (pro) is shorter, the intact side wins; b: the changed side is longer; c: equal, half
    assert rows[("intact_dp_source", longer)].value == 0.5 and rows[("intact_dp_source", longer)].n == 2
    assert rows[("intact_dp_clash", longer)].value == 0.5
    assert rows[("intact_dp_all", longer)].value == 0.5 and rows[("intact_dp_all", longer)].n == 3
    items[1] = ContrastItem(id="b", perturbation="source", degraded=Side.CON)
    rows = {(r.metric, r.baseline): r for r in Fixed().baselines(items)}
    assert rows[("intact_dp_source", longer)].value == 1.0
