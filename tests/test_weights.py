"""Fitting the flow's overall verdict on gold (debatrix.benchmarks.weights): the fit recovers weights it can see,
stays symmetric in the debaters, and is scored only on verdicts it was not fitted on."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st
from typer.testing import CliRunner

from debatrix.app.cli import app
from debatrix.benchmarks import weights as W
from debatrix.core.results import DimensionResult, JudgeResult
from debatrix.core.flow import Ledger, Tally
from debatrix.core.models import Verdict

from .conftest import PANELBENCH, data_required


def _synthetic(w: np.ndarray, n: int, seed: int) -> list[W.Row]:
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n):
        d = rng.normal(size=len(W.FEATURES))
        won = rng.random() < 1 / (1 + np.exp(-d @ w))
        rows.append(W.Row(f"i{k}", f"b{k // 12}", "contrast" if k % 3 else "debateart", tuple(d), bool(won), 0.5))
    return rows


def test_the_fit_recovers_weights_it_can_see_and_beats_a_coin_held_out():
    truth = np.array([2.5, -1.5, 1.0, -0.5][:len(W.FEATURES)])  # one weight per judged measure
    rows = _synthetic(truth, 1200, 0)
    x, y = np.array([r.d for r in rows]), np.array([r.pro_won for r in rows], float)
    assert np.allclose(W.fit(x, y, 0.1), truth, atol=0.35)
    rows = rows[:120]  # held out: 10 debates of 12 verdicts
    figures = W.weigh(rows)
    for source in ("contrast", "debateart"):
        held = figures["sources"][source]["leave_debate_out"]
        assert held["right"] > 0.7 and held["log_loss"] < np.log(2)  # the shipped 0.5 scores log 2 exactly
        assert figures["sources"][source]["shipped"]["log_loss"] == pytest.approx(np.log(2), abs=1e-3)


def test_noise_fitted_in_sample_is_found_out_held_out():
    # labels unrelated to the strengths: a fit may find a pattern in its own rows, never in rows it did not see
    rng = np.random.default_rng(1)
    rows = [W.Row(f"i{k}", f"b{k // 4}", "contrast", tuple(rng.normal(size=4)), bool(rng.random() < 0.5), 0.5)
            for k in range(40)]
    held = W.weigh(rows)["sources"]["contrast"]["leave_debate_out"]
    assert held["log_loss"] >= np.log(2) - 0.02


@hsettings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.lists(st.floats(-3, 3), min_size=4, max_size=4), st.booleans()), min_size=4,
                max_size=20), st.sampled_from(W.GRID))
def test_swapping_the_debaters_flips_the_fitted_verdict(data, l2):
    x = np.array([d for d, _ in data])
    y = np.array([won for _, won in data], float)
    w = W.fit(x, y, l2)
    assert np.allclose(W.fit(-x, 1 - y, l2), w, atol=1e-3)  # no intercept: the listing cannot matter
    assert np.allclose(W._p(-x, w), 1 - W._p(x, w))


def test_a_group_is_held_out_together():
    # two groups whose labels are each the other's mirror: any row's held-out fit never saw its group
    rows = [W.Row(f"a{k}", "a", "contrast", (1.0, 0, 0, 0), True, 0.5) for k in range(6)] + \
           [W.Row(f"b{k}", "b", "contrast", (1.0, 0, 0, 0), False, 0.5) for k in range(6)]
    x, y = np.array([r.d for r in rows]), np.array([r.pro_won for r in rows], float)
    p = W.held_out(x, y, np.array([r.base for r in rows]), 0.1)
    assert (p[:6] < 0.5).all() and (p[6:] > 0.5).all()  # each half learnt from the other's opposite labels


def _flow_result(debate_id: str, pro: str, con: str, standing: tuple[float, float]) -> JudgeResult:
    tallies = (Tally(debater=pro, arguments=3, standing=standing[0], evidence=1, rating=3.0),
               Tally(debater=con, arguments=3, standing=standing[1], evidence=1, rating=3.0))
    now = datetime.now(UTC)
    return JudgeResult(debatrix_version="t", debate_id=debate_id, motion="m", format="1v1", mode="flow",
                       status="complete", started_at=now, finished_at=now,
                       dimensions=(DimensionResult(name="argument", weight=1, allow_tie=False,
                                                   ledger=Ledger(dimension="argument", tallies=tallies)),),
                       general=DimensionResult(name="general", weight=1, allow_tie=False, verdict=Verdict(
                           dimension="general", comment="", winner=pro, probabilities={pro: 0.6, con: 0.4})))


@data_required
def test_bench_weights_reads_flow_folders_and_writes_its_fit(tmp_path):
    from debatrix.benchmarks.panelbench import DebateArt

    art = DebateArt(PANELBENCH)
    decisive = [it for it in art.load() if it.gold.get("general") in (0.0, 1.0)][:6]
    folder = tmp_path / "run"
    (folder / "items").mkdir(parents=True)
    lines = []
    for k, it in enumerate(decisive):
        d = art.debate(it)
        pro, con = (x.name for x in sorted(d.debaters, key=lambda x: x.side.value != "pro"))
        won_pro = it.gold["general"] == 0.0
        result = _flow_result(it.id, pro, con, (2.5, 0.5) if won_pro else (0.5, 2.5))
        (folder / "items" / f"{it.id}.json").write_text(result.model_dump_json(), encoding="utf-8")
        lines.append(json.dumps({"benchmark": "debateart", "mode": "flow", "item": it.id, "status": "complete",
                                 "gold": {"general": it.gold["general"]}, "result_file": f"items/{it.id}.json"}))
    (folder / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "run.json").write_text(json.dumps({"benchmark": "debateart", "settings": {"llm": {}}}),
                                     encoding="utf-8")
    rows = W.rows(folder, PANELBENCH)
    assert [r.pro_won for r in rows] == [it.gold["general"] == 0.0 for it in decisive]
    assert all((r.d[0] > 0) == r.pro_won for r in rows)  # pro's standing minus con's, signed by the gold
    out = CliRunner().invoke(app, ["bench", "weights", str(folder), "--data", str(PANELBENCH)])
    assert out.exit_code == 0, out.output
    assert "debateart (6 verdicts): as shipped" in " ".join(out.output.split())
    assert json.loads((folder / "weights.json").read_text())["features"] == list(W.FEATURES)


def test_bench_weights_refuses_what_it_cannot_fit(tmp_path):
    out = CliRunner().invoke(app, ["bench", "weights"])
    assert out.exit_code == 2 and "usage: debatrix bench weights FOLDER" in " ".join(out.output.split())
    out = CliRunner().invoke(app, ["bench", "weights", str(tmp_path)])
    assert out.exit_code == 2 and "not a benchmark run folder" in " ".join(out.output.split())
    assert "Traceback" not in out.output


def test_direct_on_the_same_items_is_weighed_beside_the_flow_and_scored_held_out():
    """Where the folders hold `direct` on the same items, the fit weighs its log-odds beside the flow's measures:
    with flow features that are noise and a direct that sees the gold, the jury held out is right where the flow's
    fit is not, and direct's own scores are reported beside it."""
    rng = np.random.default_rng(3)
    rows = []
    for k in range(80):
        won = bool(rng.random() < 0.5)
        direct = float(np.clip((0.8 if won else 0.2) + rng.normal(0, 0.1), 0.01, 0.99))
        rows.append(W.Row(f"i{k}", f"b{k // 4}", "contrast" if k % 2 else "debateart",
                          tuple(rng.normal(size=len(W.FEATURES))), won, 0.5, direct))
    figures = W.weigh(rows)
    assert figures["jury"]["features"] == [*W.FEATURES, "direct"] and figures["jury"]["weights"][-1] > 1
    for source in ("contrast", "debateart"):
        f = figures["sources"][source]
        assert f["jury_leave_debate_out"]["right"] > 0.85 > f["leave_debate_out"]["right"]
        assert f["direct"]["right"] > 0.85 and f["jury_fitted_on_other_source"]["right"] > 0.85
    without = W.weigh([W.Row(r.item, r.base, r.source, r.d, r.pro_won, r.shipped) for r in rows])
    assert "jury" not in without and "direct" not in without["sources"]["contrast"]
