"""Every benchmark metric against hand-computed values and against an independent computation on random data."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from debatrix.benchmarks.metrics import (accuracy, critique_weighted_loss, f1_per_class, kendall_tau_c, mean_ci,
                                         quadratic_weighted_kappa, rmse100, roc_auc,
                                         weighted_pairwise_ranking_error)

from .conftest import winner_record


def test_rmse100_by_hand():
    assert rmse100([0, 1, 0.5], [0, 1, 0.5]) == 0
    # errors 1, 0.5, 0 -> mean square (1 + 0.25) / 3 -> sqrt * 100
    assert rmse100([0, 0.5, 1], [1, 1, 1]) == pytest.approx(math.sqrt(1.25 / 3) * 100)
    with pytest.raises(ValueError):
        rmse100([], [])
    with pytest.raises(ValueError):
        rmse100([0], [0, 1])


def test_mean_ci_by_hand_and_t_distribution():
    assert mean_ci([5.0]) == (5.0, 0.0)
    m, h = mean_ci([1.0, 2.0, 3.0])
    # sd = 1, n = 3: half-width = t(0.975, 2) / sqrt(3) = 4.302653 / 1.732051
    assert m == 2.0 and h == pytest.approx(4.302653 / math.sqrt(3), rel=1e-5)
    assert math.isnan(mean_ci([])[0])


def test_cohens_kappa_on_the_published_worked_example():
    """Cohen's kappa (two labels, where quadratic weights are plain disagreement) on the textbook example (Wikipedia,
    "Cohen's kappa": 50 proposals, both readers yes 20, A yes B no 5, A no B yes 10, both no 15): 0.4."""
    a = ["yes"] * 20 + ["yes"] * 5 + ["no"] * 10 + ["no"] * 15
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert quadratic_weighted_kappa(a, b, ["yes", "no"]) == pytest.approx(0.4)


def test_kendall_tau_c_by_hand():
    # x = 1,2,3,4 ; y = 1,3,2,4: 5 concordant, 1 discordant; tau-c = 2m(C-D)/(n^2(m-1)), m = 4, n = 4
    assert kendall_tau_c([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(2 * 4 * 4 / (16 * 3))


def test_qwk_by_hand_and_against_an_independent_formula():
    labels = [1, 2, 3]
    assert quadratic_weighted_kappa([1, 2, 3], [1, 2, 3], labels) == pytest.approx(1.0)
    # a = 1,1,2 ; b = 1,2,2 with weights (i-j)^2/4: observed disagreement = (0 + 0.25 + 0)/3
    # marginals a: (2,1,0)/3, b: (1,2,0)/3; expected = sum p_a(i) p_b(j) w(i,j) = (2/3)(2/3)(1/4) + (1/3)(1/3)(1/4)
    obs, exp = 0.25 / 3, (4 / 9) * 0.25 + (1 / 9) * 0.25
    assert quadratic_weighted_kappa([1, 1, 2], [1, 2, 2], labels) == pytest.approx(1 - obs / exp)
    rng = np.random.default_rng(1)
    a, b = rng.integers(-1, 6, 200).tolist(), rng.integers(-1, 6, 200).tolist()
    lab = list(range(-1, 6))
    # independent: the kappa definition with the full weight and expected matrices via numpy broadcasting
    pa = np.array([a.count(x) for x in lab]) / 200
    pb = np.array([b.count(x) for x in lab]) / 200
    w = (np.subtract.outer(np.arange(7), np.arange(7)) ** 2) / 36
    po = np.zeros((7, 7))
    for x, y in zip(a, b):
        po[lab.index(x), lab.index(y)] += 1 / 200
    assert quadratic_weighted_kappa(a, b, lab) == pytest.approx(1 - (w * po).sum() / (w * np.outer(pa, pb)).sum())


def test_roc_auc_by_hand_and_against_counting_every_pair():
    assert roc_auc([0.1, 0.4, 0.35, 0.8], [False, False, True, True]) == pytest.approx(0.75)
    assert roc_auc([1, 1], [True, False]) == pytest.approx(0.5)
    assert math.isnan(roc_auc([0.3, 0.4], [True, True]))
    rng = np.random.default_rng(2)
    s, y = rng.integers(0, 20, size=300) / 20, rng.random(300) < 0.4  # with ties
    # independent: every positive-negative pair, a tie counting half
    pairs = [(1.0 if a > b else 0.5 if a == b else 0.0) for a in s[y] for b in s[~y]]
    assert roc_auc(s.tolist(), y.tolist()) == pytest.approx(sum(pairs) / len(pairs))


def test_f1_and_accuracy_by_hand():
    pred = ["E", "I", "N", "N", "E"]
    gold = ["E", "N", "N", "I", "E"]
    f1 = f1_per_class(pred, gold, ["E", "I", "N"])
    assert f1["E"] == 1.0 and f1["I"] == 0.0 and f1["N"] == pytest.approx(0.5)
    assert accuracy(pred, gold) == pytest.approx(3 / 5)


def test_f1_against_precision_and_recall_from_scipys_confusion_matrix():
    """F1 computed independently: the confusion matrix from scipy's crosstab, then the harmonic mean (scipy) of each
    class's precision (its column) and recall (its row); a class never predicted and never true has no F1."""
    from scipy.stats import hmean
    from scipy.stats.contingency import crosstab

    rng = np.random.default_rng(3)
    classes = ["pro", "con", "tie", "unused"]
    for _ in range(20):
        gold = rng.choice(classes[:3], 60).tolist()
        pred = rng.choice(classes[:3], 60, p=[0.5, 0.3, 0.2]).tolist()
        (rows, cols), table = crosstab(gold, pred, levels=(classes, classes))
        got = f1_per_class(pred, gold, classes)
        for i, c in enumerate(classes):
            tp, predicted, true = table[i, i], table[:, i].sum(), table[i, :].sum()
            if predicted + true == 0:
                assert math.isnan(got[c])
            elif tp == 0:
                assert got[c] == 0.0
            else:
                assert got[c] == pytest.approx(hmean([tp / predicted, tp / true]))


def test_weighted_pairwise_ranking_error_by_hand():
    # human 0.9 > 0.5 > 0.1: pair weights 0.4 (a,b), 0.8 (a,c), 0.4 (b,c); total 1.6
    swapped = ([0.9, 0.5, 0.1], [0.5, 0.6, 0.1])  # (a,b) reversed: 0.4 / 1.6
    assert weighted_pairwise_ranking_error([swapped]) == pytest.approx(0.25)
    tied = ([0.9, 0.5, 0.1], [0.9, 0.9, 0.5])  # (a,b) tied: half of 0.4
    assert weighted_pairwise_ranking_error([tied]) == pytest.approx(0.125)
    # averaged per position; positions whose humans tie everything are left out
    perfect = ([0.2, 0.8], [0.1, 0.9])
    flat = ([0.5, 0.5], [0.1, 0.9])
    assert weighted_pairwise_ranking_error([swapped, perfect, flat]) == pytest.approx((0.25 + 0) / 2)


def test_weighted_pairwise_ranking_error_against_brute_force():
    rng = random.Random(3)
    groups = [([rng.choice([0, 0.25, 0.5, 0.75, 1]) for _ in range(5)],
               [rng.choice([0, 0.5, 1]) for _ in range(5)]) for _ in range(20)]
    per = []
    for h, m in groups:
        pairs = [(i, j) for i in range(5) for j in range(5) if h[i] > h[j]]  # ordered pairs, humans prefer i
        if pairs:
            w = [h[i] - h[j] for i, j in pairs]
            e = [(1 if m[i] < m[j] else 0.5 if m[i] == m[j] else 0) for i, j in pairs]
            per.append(sum(a * b for a, b in zip(w, e)) / sum(w))
    assert weighted_pairwise_ranking_error(groups) == pytest.approx(sum(per) / len(per))


def test_critique_weighted_loss_by_hand():
    human = dict(centrality=0.8, strength=0.5, correctness=1.0, clarity=0.9, dead_weight=0.0, single_issue=1.0,
                 overall=0.6)
    model = dict(centrality=0.6, strength=0.5, correctness=0.5, clarity=0.7, dead_weight=0.5, single_issue=1.0,
                 overall=0.2)
    expected = (0.5 * 0.4 + 0.2 * abs(0.4 - 0.3) + 0.1 * 0.2 + 0.1 * 0.5 + 0.05 * 0.5 + 0.05 * 0.0)
    assert critique_weighted_loss(human, model) == pytest.approx(expected)
    unclear = {**human, "clarity": 0.3}
    assert critique_weighted_loss(unclear, model) == pytest.approx(0.5 * 0.4 + 0.5 * 0.4)


def _records(pairs):
    """DebateArt records of a direct run: (p_con, named winner 0/1 pro/con, gold 0/0.5/1)."""
    return [winner_record(f"d{k:03}", {"general": dp}, p_one=p, gold={"general": g}) for k, (p, dp, g) in
            enumerate(pairs)]


def test_calibration_figures_by_hand_and_against_an_independent_fit():
    from scipy import optimize

    from debatrix.benchmarks import calibration as C

    # ECE: bins [0.6, 0.8) and [0.8, 1.0]: |0.7 - 1/2| * 2/4 + |0.9 - 1| * 2/4 = 0.15; Brier by hand
    assert C.ece([0.7, 0.7, 0.9, 0.9], [True, False, True, True]) == pytest.approx(0.15)
    assert C.brier([0.7, 0.9], [False, True]) == pytest.approx((0.49 + 0.01) / 2)
    assert math.isnan(C.ece([], []))
    rng = np.random.default_rng(1)
    p = rng.uniform(0.5, 1, 60)
    right = rng.uniform(size=60) < 0.55  # a judge sure of itself and near chance
    a, b = C.platt(p, right)
    # the fit is symmetric in the debaters: every verdict once as itself, once mirrored (1 - p, right where wrong)
    x = np.log(p / (1 - p))
    x, y = np.concatenate([x, -x]), np.concatenate([right, ~right])
    loss = lambda t: (np.sum(np.logaddexp(0, t[0] * x + t[1]) - y * (t[0] * x + t[1]))
                      + 2 * ((t[0] - 1) ** 2 + t[1] ** 2))
    ref = optimize.minimize(loss, [1, 0], method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-12}).x
    assert (a, b) == pytest.approx(tuple(ref), abs=1e-4) and b == pytest.approx(0, abs=1e-9)
    assert a < 0.5  # overconfidence is shrunk toward even
    v = C.Verdicts(p, right)
    f = C.figures(v)
    assert f["ece_calibrated_cv"] < f["ece_raw"] and f["brier_calibrated_cv"] < f["brier_raw"]


def test_cross_validation_never_maps_a_verdict_by_its_own_label():
    from debatrix.benchmarks import calibration as C

    rng = np.random.default_rng(2)
    p, right = rng.uniform(0.5, 1, 20), rng.uniform(size=20) < 0.6
    flipped = right.copy()
    flipped[3] = not flipped[3]
    a, b = C.cross_validated(C.Verdicts(p, right)), C.cross_validated(C.Verdicts(p, flipped))
    assert a[3] == b[3] and not np.allclose(a, b)


def test_calibrate_a_results_folder(tmp_path):
    import json

    from debatrix.benchmarks import calibration as C
    from debatrix.core.probabilities import CalibrationMap

    # ties (gold 0.5), tie verdicts and verdicts without a probability are left out
    pairs = [(0.9, 1.0, 1.0), (0.2, 0.0, 1.0), (0.7, 1.0, 0.0), (0.6, 1.0, 1.0), (0.1, 0.0, 0.0)] * 3
    pairs += [(0.8, 1.0, 0.5), (0.5, 0.5, 1.0), (None, 1.0, 1.0)]
    recs = _records(pairs)
    v = C.verdicts(recs)
    assert len(v) == 15 and v.p[0] == 0.9 and v.p[1] == pytest.approx(0.8) and not v.right[1]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    figures = C.calibrate_folder(tmp_path, "some-model")
    assert figures["direct"]["n"] == 15 and figures["direct"]["right"] == pytest.approx(9 / 15)
    maps = json.loads((tmp_path / "calibration.json").read_text())["maps"]
    m = CalibrationMap.model_validate(maps[0])
    assert (m.model, m.mode, m.n) == ("some-model", "direct", 15) and "ECE" in m.source
    # the ceiling: right among the verdicts at or above the median winner probability (0.8): 0.9 x6 right, 0.8 x3
    # wrong
    assert m.ceiling == figures["direct"]["ceiling"] == pytest.approx(6 / 9, abs=1e-4) and m(0.99) == m.ceiling
    assert (tmp_path / "reliability.png").stat().st_size > 10_000


def test_the_debateart_summary_draws_the_reliability_of_its_verdicts(tmp_path):
    from debatrix.benchmarks.panelbench import DebateArt

    recs = _records([(0.9, 1.0, 1.0), (0.2, 0.0, 1.0), (0.7, 1.0, 0.0), (0.6, 1.0, 1.0)])
    DebateArt.__new__(DebateArt).write_figures(tmp_path, recs)
    assert (tmp_path / "reliability.png").stat().st_size > 10_000
    DebateArt.__new__(DebateArt).write_figures(tmp_path / "none", _records([(None, 1.0, 1.0)]))
    assert not (tmp_path / "none").exists()  # no probabilities: nothing to draw


def test_a_place_prior_is_measured_from_the_orders_as_the_model_gave_them(tmp_path):
    """A shared-layout run: the mean share of the winner probability per speaking place over its debates, read
    from each order's own probabilities (a verdict already divided by a prior is not what the model leans to);
    a grouped run measures none."""
    import json

    from debatrix.benchmarks import calibration as C

    def result(first_share, layout="shared"):
        orders = [{"order": ["A", "B"], "probabilities": {"A": first_share + 0.1, "B": 0.9 - first_share}},
                  {"order": ["B", "A"], "probabilities": {"A": first_share - 0.1, "B": 1.1 - first_share}}]
        return {"settings": {"order_layout": "auto", "order_layout_used": layout},
                "speeches": [{"speaker": "A"}, {"speaker": "B"}, {"speaker": "A"}],
                "general": {"verdict": {"orders": orders, "probabilities": {"A": 0.5, "B": 0.5}}}}

    assert C.place_shares(result(0.7)) == pytest.approx([0.7, 0.3])
    for layout, folder in (("shared", tmp_path / "shared"), ("grouped", tmp_path / "grouped")):
        (folder / "items").mkdir(parents=True)
        recs = []
        for k, share in enumerate((0.9, 0.6, 0.7)):  # two places: the median (0.7), not the mean
            (folder / "items" / f"{k}.json").write_text(json.dumps(result(share, layout)))
            recs.append(winner_record(f"d{k}", {}, gold={}, result_file=f"items/{k}.json"))
        (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
        figures = C.calibrate_folder(folder, "some-model")
        if layout == "shared":
            doc = json.loads((folder / "calibration.json").read_text())
            assert figures["direct"]["place_prior"] == pytest.approx([0.7, 0.3])
            [p] = doc["place_priors"]
            assert (p["model"], p["mode"], p["n"]) == ("some-model", "direct", 3) and "speaking order" in p["source"]
        else:  # no prior and too few verdicts for a map: nothing fitted, so no file that would read as one
            assert "place_prior" not in figures["direct"] and not (folder / "calibration.json").exists()


def _contrast_records(pairs):
    """Contrast-suite records: (p_intact, intact side named 1.0 / other 0.0 / tie 0.5)."""
    return [winner_record(f"c{k:03}", {"general": dp}, p_one=p, gold={"general": 1.0}, benchmark="contrast")
            for k, (p, dp) in enumerate(pairs)]


def test_a_map_fitted_on_several_sources_reports_how_each_fares_under_a_fit_on_the_others(tmp_path):
    """DebateArt's audience verdicts (overconfident: 0.9 right half the time) and the contrast suite's known
    answers (0.9 right 9 times in 10) pooled into one map; each source is also mapped by a fit on the other alone,
    the figures those of the map the other folder alone ships (read through CalibrationMap, another path)."""
    import json

    from debatrix.benchmarks import calibration as C
    from debatrix.core.probabilities import CalibrationMap

    art, con = tmp_path / "art", tmp_path / "con"
    recs_art = _records([(0.9, 1.0, 1.0), (0.1, 0.0, 1.0)] * 6 + [(0.7, 1.0, 1.0), (0.3, 0.0, 0.0)])
    recs_con = _contrast_records([(0.9, 1.0)] * 9 + [(0.1, 0.0), (0.5, 0.5), (None, 1.0)])
    for folder, recs in ((art, recs_art), (con, recs_con)):
        folder.mkdir()
        (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    v = C.verdicts(recs_con)
    assert len(v) == 10 and v.right.sum() == 9 and v.p[-1] == pytest.approx(0.9)  # a tie and no p left out
    figures = C.calibrate_folder(art, "m", also=[con])["direct"]
    assert figures["n"] == 24 and figures["sources"] == {"debateart (art)": 14, "contrast (con)": 10}
    carried = {c["tested_on"]: c for c in figures["cross_source"]}
    # the pooled map ships with its cross-source figures, readable as a map
    shipped = CalibrationMap.model_validate(json.loads((art / "calibration.json").read_text())["maps"][0])
    assert shipped.n == 24 and len(shipped.cross_source) == 2 and "fitted on the rest" in shipped.source
    assert set(carried) == {"debateart (art)", "contrast (con)"}
    for tested, alone, recs in (("debateart (art)", con, recs_art), ("contrast (con)", art, recs_con)):
        C.calibrate_folder(alone, "m")
        m = CalibrationMap.model_validate(json.loads((alone / "calibration.json").read_text())["maps"][0])
        v = C.verdicts(recs)
        assert carried[tested]["ece_mapped"] == pytest.approx(C.ece([m(p) for p in v.p], v.right), abs=1e-4)
        assert carried[tested]["brier_raw"] == pytest.approx(C.brier(v.p, v.right), abs=1e-4)


@pytest.mark.parametrize("bad", [float("nan"), 5.0, -3.0])
def test_a_winner_probability_that_is_no_probability_is_refused_not_fitted(bad):
    from debatrix.benchmarks import calibration as C

    with pytest.raises(ValueError, match="not a probability"):
        C.verdicts(_records([(0.9, 1.0, 1.0), (bad, 1.0, 1.0)]))
