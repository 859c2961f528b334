"""Each decision measured on the gold of stored runs (debatrix.benchmarks.signals): a decision the gold favours
carries, one that does not is at chance, two items are never a signal, and the command reads real folders."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings as hsettings, strategies as st
from typer.testing import CliRunner

from debatrix.app.cli import app
from debatrix.benchmarks import signals as S
from debatrix.core.results import JudgeResult
from debatrix.core.flow import Line, Mark, SpeechFlow
from debatrix.core.models import Speech


def _result(debate_id: str, argues: dict[str, float], evidence: dict[str, float], answers: dict[str, float],
            words: dict[str, int]) -> JudgeResult:
    """Two debaters, a speech each, every passage of a debater with the same decisions."""
    (a, b) = list(argues)
    flows = tuple(SpeechFlow(dimension="flow", index=i, speaker=who,
                             marks=tuple(Mark(id=f"S{i + 1}.{k}", argument=argues[who], evidence=evidence[who])
                                         for k in (1, 2)),
                             lines=(Line(speech=i, target="S1.1", answers=answers[who], by=f"S{i + 1}.1"),) if i else ())
                  for i, who in enumerate((a, b)))
    now = datetime.now(UTC)
    return JudgeResult(debatrix_version="t", debate_id=debate_id, motion="m", format="1v1", mode="flow",
                       status="complete", started_at=now, finished_at=now, dimensions=(), general=None, flow=flows,
                       speeches=tuple(Speech(speaker=w, content=" ".join(["word"] * words[w])) for w in (a, b)))


def _folder(tmp: Path, benchmark: str, items: list[tuple[dict, JudgeResult]]) -> Path:
    (tmp / "items").mkdir(parents=True)
    lines = []
    for k, (record, result) in enumerate(items):
        (tmp / "items" / f"{k}.json").write_text(result.model_dump_json(), encoding="utf-8")
        lines.append(json.dumps({"benchmark": benchmark, "mode": "flow", "item": f"i{k}", "status": "complete",
                                 "result_file": f"items/{k}.json", **record}))
    (tmp / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp


def _contrast_item(k: int, intact_argues_more: bool) -> tuple[dict, JudgeResult]:
    """An off-topic change to the pro side (Ann): the intact side is Bo. The evidence is equal on both sides."""
    hi, lo = 0.8, 0.4
    argues = {"Ann": lo, "Bo": hi} if intact_argues_more else {"Ann": hi, "Bo": lo}
    record = {"perturbation": "argument", "degraded": "pro", "sides": {"Ann": 0.0, "Bo": 1.0}}
    return record, _result(f"d{k}", argues, {"Ann": 0.5, "Bo": 0.5}, {"Ann": 0.5, "Bo": 0.6},
                           {"Ann": 100 + k, "Bo": 100})


def test_a_decision_the_gold_favours_carries_and_a_flat_one_does_not(tmp_path):
    folder = _folder(tmp_path, "contrast", [_contrast_item(k, k != 0) for k in range(10)])
    found = {(c.source, c.decision): c for c in S.cells([folder])}
    argues = found[("known answers", "argues")]
    assert argues.value == pytest.approx(0.9) and argues.n == 10 and argues.carries  # 9 of 10: p 0.011
    assert ("known answers", "evidence") not in found  # evidence is read on the source changes, not these
    words = found[("known answers", S.WORDS)]
    assert words.value == pytest.approx(0.05) and not words.carries  # the changed side wrote more in 9 of 10
    text = S.table(list(found.values()))
    assert "| argues | 0.90" in text and "argues: above chance on 1 of 1 sources (known answers)" in text


def test_two_items_right_are_no_signal():
    value, low, high, p = S.interval([1.0, 1.0])
    assert value == low == high == 1.0 and p == pytest.approx(0.25)
    assert not S.Cell("x", "argues", value, low, high, n=2, p=p).carries


@hsettings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=1, max_size=40))
def test_the_p_falls_as_more_items_are_right_and_ties_tell_nothing(values):
    _, low, high, p = S.interval(values)
    assert 0 <= p <= 1 and low <= high
    _, _, _, p_more = S.interval([*values, 1.0])
    assert p_more <= p + 1e-12  # one more item right never makes chance likelier
    _, _, _, p_tie = S.interval([*values, 0.5])
    assert p_tie == pytest.approx(p)  # an item at a half is neither for nor against


def test_debateart_votes_and_bp_teams_are_read_against_their_own_gold(tmp_path):
    # DebateArt: Bo won the arguments vote and argued more; the sources vote went to Ann, whose evidence is lower
    art = [({"gold": {"argument": 1.0, "source": 0.0, "general": 0.5}, "sides": {"Ann": 0.0, "Bo": 1.0}},
            _result(f"a{k}", {"Ann": 0.4, "Bo": 0.7}, {"Ann": 0.2, "Bo": 0.6}, {"Ann": 0.5, "Bo": 0.5},
                    {"Ann": 50, "Bo": 60})) for k in range(3)]
    found = {(c.source, c.decision): c for c in S.cells([_folder(tmp_path / "art", "debateart", art)])}
    assert found[("DebateArt: arguments vote", "argues")].value == 1.0
    assert found[("DebateArt: sources vote", "evidence")].value == 0.0
    assert not any(s == "DebateArt: overall vote" for s, _ in found)  # a tie says nothing of who should win
    assert S.pairs_right({"OG": 0.9, "OO": 0.1, "CG": 0.8, "CO": 0.2}, ["OG", "CG"], ["OO", "CO"]) == 1.0
    assert S.pairs_right({"OG": 0.5, "OO": 0.5}, ["OG"], ["OO"]) == 0.5
    assert S.pairs_right({"OG": 0.5}, ["OG"], ["OO"]) is None


def test_the_command_prints_the_table_and_refuses_what_it_cannot_read(tmp_path):
    folder = _folder(tmp_path / "c", "contrast", [_contrast_item(k, True) for k in range(8)])
    out = CliRunner().invoke(app, ["bench", "signals", str(folder)], env={"COLUMNS": "300"})
    assert out.exit_code == 0, out.output
    assert "| argues | 1.00 [1.00, 1.00] (8; p 0.0039) **carries** |" in out.output
    empty = tmp_path / "e"
    empty.mkdir()
    out = CliRunner().invoke(app, ["bench", "signals", str(empty)])
    assert out.exit_code == 2 and "no items.jsonl" in out.output and "Traceback" not in out.output
    (empty / "items.jsonl").write_text(json.dumps({"benchmark": "critique", "status": "complete"}) + "\n")
    out = CliRunner().invoke(app, ["bench", "signals", str(empty)])
    assert out.exit_code == 2 and "reads contrast, debateart, bp and decisions runs" in out.output


def test_a_p_no_resample_reached_reads_as_below_one_in_the_resamples_not_zero():
    cell = S.Cell("IBM", "answers", 0.59, 0.55, 0.64, 40, 0.0)
    assert f"(40; p < {1 / S.RESAMPLES:g})" in cell.shown() and "p 0)" not in cell.shown()
    assert "(40; p 0.036)" in S.Cell("IBM", "answers", 0.59, 0.51, 0.64, 40, 0.036).shown()


@pytest.mark.parametrize("evidence_asked", [False, True])
def test_a_ledger_resting_on_a_decision_never_asked_is_no_row_of_the_table(evidence_asked):
    """Evidence is not asked while no judged dimension rests on it: the source ledger would read a tie for every
    debater, which measures nothing, so its row is left out (asked, it is measured as before)."""
    from debatrix import load_debate
    from debatrix.core.flow import ledger
    from debatrix.core.results import DimensionResult

    debate = load_debate(Path(__file__).resolve().parents[1] / "examples" / "four_day_week.yaml")
    by_speech: dict[int, list[str]] = {}
    for pid, p in debate.passage_index.items():
        by_speech.setdefault(int(pid[1:].split(".")[0]) - 1, []).append(pid)
    flows = tuple(SpeechFlow(dimension="flow", index=i, speaker=s.speaker, marks=tuple(
        Mark(id=pid, argument=0.8 if s.speaker == "Ana" else 0.6, evidence=(0.7 if evidence_asked else None))
        for pid in by_speech[i])) for i, s in enumerate(debate.speeches))
    dims = tuple(DimensionResult(name=d, weight=1, allow_tie=True, ledger=ledger(debate, flows, d))
                 for d in ("argument", "source"))
    now = datetime.now(UTC)
    result = JudgeResult(debatrix_version="t", debate_id="d", motion="m", format="1v1", mode="flow",
                         status="complete", started_at=now, finished_at=now, dimensions=dims, general=None,
                         flow=flows, speeches=debate.speeches)
    got = S.means(result)
    assert got[S.LEDGER["argument"]]["Ana"] > got[S.LEDGER["argument"]]["Ben"]
    assert (S.LEDGER["source"] in got) is evidence_asked
