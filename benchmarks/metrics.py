"""Metrics of the benchmark adapters, each small enough to check by hand (tests/test_metrics.py checks each against
hand-computed values and an independent implementation)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats


def rmse100(pred: Sequence[float], gold: Sequence[float]) -> float:
    """Root mean squared error ×100 (PanelBench: pro = 0, tie = 0.5, con = 1)."""
    p, g = np.asarray(pred, float), np.asarray(gold, float)
    if p.shape != g.shape or p.size == 0:
        raise ValueError(f"rmse100 needs two equal, non-empty lists (got {p.size} and {g.size})")
    return float(np.sqrt(np.mean((p - g) ** 2)) * 100)


def mean_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """Mean and the half-width of its ``level`` confidence interval (Student's t; 0 for one value)."""
    v = np.asarray([x for x in values if x is not None and not math.isnan(x)], float)
    if v.size == 0:
        return math.nan, math.nan
    if v.size == 1:
        return float(v[0]), 0.0
    half = stats.t.ppf((1 + level) / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)
    return float(v.mean()), float(half)


def kendall_tau_c(x: Sequence[float], y: Sequence[float]) -> float:
    return float(stats.kendalltau(x, y, variant="c").statistic)


def quadratic_weighted_kappa(a: Sequence[int], b: Sequence[int], labels: Sequence[int]) -> float:
    """Cohen's kappa with quadratic weights over the ordered ``labels`` (every label, seen or not, counts)."""
    index = {lab: i for i, lab in enumerate(labels)}
    k = len(labels)
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[index[x], index[y]] += 1
    n = observed.sum()
    if n == 0:
        return math.nan
    weights = np.array([[(i - j) ** 2 for j in range(k)] for i in range(k)], float) / (k - 1) ** 2
    expected = np.outer(observed.sum(1), observed.sum(0)) / n
    denom = (weights * expected).sum()
    return float(1 - (weights * observed).sum() / denom) if denom else math.nan


def roc_auc(scores: Sequence[float], positive: Sequence[bool]) -> float:
    """Area under the ROC curve: the chance a random positive outranks a random negative (ties count half)."""
    s, y = np.asarray(scores, float), np.asarray(positive, bool)
    pos, neg = s[y], s[~y]
    if pos.size == 0 or neg.size == 0:
        return math.nan
    ranks = stats.rankdata(s)
    return float((ranks[y].sum() - pos.size * (pos.size + 1) / 2) / (pos.size * neg.size))


def f1_per_class(pred: Sequence[str], gold: Sequence[str], classes: Sequence[str]) -> dict[str, float]:
    out = {}
    for c in classes:
        tp = sum(p == c and g == c for p, g in zip(pred, gold, strict=True))
        fp = sum(p == c and g != c for p, g in zip(pred, gold, strict=True))
        fn = sum(p != c and g == c for p, g in zip(pred, gold, strict=True))
        out[c] = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else math.nan
    return out


def accuracy(pred: Sequence[object], gold: Sequence[object]) -> float:
    if not gold:
        return math.nan
    return sum(p == g for p, g in zip(pred, gold, strict=True)) / len(gold)


def weighted_pairwise_ranking_error(groups: Sequence[tuple[Sequence[float], Sequence[float]]]) -> float:
    """Critique ranking error. For each group (one position: human ratings, model ratings of its critiques), every
    pair the humans rate differently is an error when the model orders it the other way (a model tie costs half),
    weighted by the human rating difference; errors are normalised per group by the total weight, then averaged
    over groups that have at least one such pair."""
    per_group = []
    for human, model in groups:
        err = total = 0.0
        for i in range(len(human)):
            for j in range(i + 1, len(human)):
                w = abs(human[i] - human[j])
                if w == 0:
                    continue
                total += w
                dm = (model[i] - model[j]) * (1 if human[i] > human[j] else -1)
                err += w * (1.0 if dm < 0 else 0.5 if dm == 0 else 0.0)
        if total:
            per_group.append(err / total)
    return float(np.mean(per_group)) if per_group else math.nan


RUBRIC = ("centrality", "strength", "correctness", "clarity", "dead_weight", "single_issue", "overall")


def critique_weighted_loss(human: dict[str, float], model: dict[str, float]) -> float:
    """The custom loss for one critique (all ratings in [0, 1]). Unclear critiques (human clarity < 0.5) are judged
    on overall and clarity only; otherwise a weighted sum over the rubric, strength × centrality as one term."""
    d = {k: abs(human[k] - model[k]) for k in RUBRIC if k in human and k in model}
    if human["clarity"] < 0.5:
        return 0.5 * d["overall"] + 0.5 * d["clarity"]
    sc = abs(human["strength"] * human["centrality"] - model["strength"] * model["centrality"])
    return (0.5 * d["overall"] + 0.2 * sc + 0.1 * d["clarity"] + 0.1 * d["correctness"]
            + 0.05 * d["dead_weight"] + 0.05 * d["single_issue"])
