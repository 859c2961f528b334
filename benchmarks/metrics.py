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
    # the Mann-Whitney U of the positives over the negatives, scaled: the same area, computed by scipy
    return float(stats.mannwhitneyu(pos, neg).statistic / (pos.size * neg.size))


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


# ------------------------------------------------------------------------------------------- names in words
# The summary's metric ids (``rmse100_argument_dp``, ``ece_general_calibrated_cv`` ...) are stable keys for
# scripts; a reader sees them in words. Phrases first (longest match), then single tokens; a token no phrase knows
# (a dimension's name, a label) is kept as it is.
_PHRASES = {
    "rmse100": "RMSE×100 (lower is better)", "completion_rate": "share judged completely",
    "first_speaker_wins": "share won by the first speaker", "position_bias": "preference for the first-listed",
    "ece": "calibration error (ECE)", "brier": "Brier score", "calibrated_cv": "calibrated, cross-validated",
    "raw": "as the model gave it", "dp_single": "direct prediction, first order only",
    "sc_single": "by scores, first order only", "dp": "direct prediction", "sc": "by scores",
    "copy_rate": "analyses repeating an earlier one", "misattributed": "analyses giving the speaker another's passage",
    "unknown_ids": "analyses citing a passage that does not exist",
    "comment_misattributed": "comments giving the debater another's passage", "comment_empty": "comments missing",
    "comment_uncited": "comments citing none of the debater's passages",
    "grounded_above_foreign": "columns grounded more in their speech than in others",
    "grounded": "grounding in the analysed speech", "foreign": "words found only in other speeches",
    "quotes_found": "quotations found in the speech", "consistent": "comments agreeing with their verdict",
    "cut_at_cap": "answers cut at their length cap", "words_per_analysis": "words per analysis",
    "panel_cites_debate": "panel reasons citing the debate", "prompt_tokens_read_per_item": "prompt tokens read per item",
    "completion_tokens_per_item": "tokens written per item", "llm_calls_per_item": "LLM calls per item",
    "seconds_per_item": "seconds per item",
    "ranking_error": "weighted pairwise ranking error", "weighted_loss": "weighted loss", "roc_auc": "ROC AUC",
    "parse_failures": "answers that could not be read", "accuracy": "accuracy", "all": "all dimensions",
    "mean_score": "mean score", "f1": "F1",
}


def metric_words(metric: str) -> str:
    """A summary metric id in words: ``rmse100_argument_dp`` -> "RMSE×100 (lower is better) · argument · direct
    prediction"."""
    tokens, out, i = metric.split("_"), [], 0
    while i < len(tokens):
        for j in range(len(tokens), i, -1):
            phrase = "_".join(tokens[i:j])
            if phrase in _PHRASES:
                out.append(_PHRASES[phrase])
                i = j
                break
        else:
            out.append(tokens[i])
            i += 1
    return " · ".join(out)
