"""A benchmark run's summary: every metric per mode with its 95% paired bootstrap interval over items (each mode
against the first too), what judging cost, the summary's CSV and Markdown, the per-item table and the plot of the
headline metrics. :mod:`debatrix.benchmarks.runner` judges the items and writes the records these read."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import warnings
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from debatrix.core.errors import printable
from debatrix.core.files import write_atomic

from .base import Benchmark, MetricRow, in_words, read_winner

BOOTSTRAP_RESAMPLES = 1000


@dataclass(frozen=True)
class SummaryRow:
    mode: str  # a mode, or "A - B" for the paired difference of two modes on the same items
    metric: str
    subset: str
    value: float  # on all items, averaged over repeats
    ci_low: float  # 95% paired bootstrap interval over items (NaN: too few items to resample)
    ci_high: float
    repeats: int
    n: int


# ------------------------------------------------------------------------------------------------ summary


def _usage_rows(records: list[dict[str, Any]]) -> list[MetricRow]:
    rows = []
    # what judging an item costs: an item some of whose answers came from the answer cache (a run resumed after a
    # kill) took less time and read nothing for those, so it is left out of the cost rows (their n says how many
    # count) instead of pulling them towards 0
    paid = [r for r in records if not (r.get("usage") or {}).get("cached_calls")]
    for field, metric in (("seconds", "seconds_per_item"), ("llm_calls", "llm_calls_per_item"),
                          ("prompt_tokens_processed", "prompt_tokens_read_per_item"),
                          ("completion_tokens", "completion_tokens_per_item")):
        values = [r["usage"][field] for r in paid if (r.get("usage") or {}).get(field) is not None]
        if values:
            rows.append(MetricRow(metric, "all", sum(values) / len(values), len(values)))
    # verdict stability: the share of verdicts all of whose orders named the same winner, per dimension and the
    # general verdict
    agree: dict[str, list[bool]] = defaultdict(list)
    for r in records:
        for name, v in (r.get("verdicts") or {}).items():
            if v.get("orders_agreeing") is not None and len(v.get("orders", ())) > 1:
                agree[name].append(v["orders_agreeing"] == len(v["orders"]))
    for name, votes in sorted(agree.items()):
        rows.append(MetricRow(f"orders_agree_{name}", "all", sum(votes) / len(votes), len(votes)))
    went_up = [bool(r["escalated"]) for r in records if "escalated" in r]
    if went_up:  # with a second judge in reserve: the share of items it decided
        rows.append(MetricRow("escalated_share", "all", sum(went_up) / len(went_up), len(went_up)))
    return rows


def _values(bench: Benchmark, records: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[float, int, int]]:
    """(metric, subset) -> (value averaged over repeats, repeats, items per repeat)."""
    by_repeat: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by_repeat[int(r["repeat"])].append(r)
    acc: dict[tuple[str, str], list[tuple[float, int]]] = defaultdict(list)
    for recs in by_repeat.values():
        for row in [*bench.metrics(recs), *_usage_rows(recs)]:
            acc[(row.metric, row.subset)].append((row.value, row.n))
    values = {k: (float(np.mean([v for v, _ in vs])), len(vs), round(sum(n for _, n in vs) / len(vs)))
              for k, vs in acc.items()}
    for metric, (share, n) in _epochs_agree(records).items():
        values[(metric, "all")] = (share, len(by_repeat), n)
    return values


def _epochs_agree(records: list[dict[str, Any]]) -> dict[str, tuple[float, int]]:
    """Across --epochs samples: per dimension (and panel), the share of items judged more than once whose samples
    all named the same winner, with the number of such items."""
    winners: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in records:
        for name, v in (r.get("verdicts") or {}).items():
            winners[(name, r["item"])].append(read_winner(v))
    agree: dict[str, list[bool]] = defaultdict(list)
    for (name, _), named in winners.items():
        if len(named) > 1:
            agree[name].append(len(set(named)) == 1)
    return {f"epochs_agree_{name}": (sum(v) / len(v), len(v)) for name, v in sorted(agree.items())}


def bootstrap_intervals(stat: Callable[[list[str]], dict[Any, float]], ids: list[str], keys: list[Any],
                        seed: int = 0, resamples: int = BOOTSTRAP_RESAMPLES) -> dict[Any, tuple[float, float]]:
    """95% percentile intervals of every key of ``stat`` over resamples of the items (all keys from the same
    resamples, so differences between modes are paired)."""
    if len(ids) < 3 or not keys:
        return {k: (math.nan, math.nan) for k in keys}
    index = np.arange(len(ids))

    def statistic(sample: np.ndarray) -> np.ndarray:
        values = stat([ids[i] for i in sample])
        return np.array([values.get(k, math.nan) for k in keys])

    with warnings.catch_warnings():  # a metric constant over resamples (a tiny sample) is expected, not news
        warnings.simplefilter("ignore")
        res = stats.bootstrap((index,), statistic, vectorized=False, n_resamples=resamples,
                              method="percentile", random_state=np.random.default_rng(seed))
    low, high = np.atleast_1d(res.confidence_interval.low), np.atleast_1d(res.confidence_interval.high)
    return {k: (float(lo), float(hi)) for k, lo, hi in zip(keys, low, high)}


def summarize(bench: Benchmark, records: list[dict[str, Any]]) -> list[SummaryRow]:
    """Per mode, every metric on all items (mean over repeats) with a paired bootstrap interval over items; then
    each further mode minus the first on the items both judged, for the headline metrics."""
    by_mode: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        by_mode[r["mode"]][r["item"]].append(r)
    rows: list[SummaryRow] = []
    modes = list(dict.fromkeys(r["mode"] for r in records))

    def stat_for(mode: str) -> Callable[[list[str]], dict[tuple[str, str], float]]:
        def stat(sample: list[str]) -> dict[tuple[str, str], float]:
            # an item drawn twice counts twice in every metric over a list of items (a metric keyed by item,
            # like the leave-one-out kappa, sees it once)
            recs = [r for i in sample for r in by_mode[mode][i]]
            return {k: v for k, (v, _, _) in _values(bench, recs).items()}
        return stat

    for mode in modes:
        ids = sorted(by_mode[mode])
        values = _values(bench, [r for i in ids for r in by_mode[mode][i]])
        cis = bootstrap_intervals(stat_for(mode), ids, list(values))
        for (metric, subset), (v, reps, n) in values.items():
            lo, hi = cis[(metric, subset)]
            rows.append(SummaryRow(mode, metric, subset, round(v, 4), round(lo, 4), round(hi, 4), reps, n))
    headline = set(bench_headline(bench, rows))
    for mode in modes[1:]:
        base = modes[0]
        ids = sorted(set(by_mode[mode]) & set(by_mode[base]))
        a, b = stat_for(mode), stat_for(base)

        def diff(sample: list[str], a=a, b=b) -> dict[tuple[str, str], float]:
            va, vb = a(sample), b(sample)
            return {k: va[k] - vb[k] for k in va if k in vb}

        point = diff(ids)
        keys = [k for k in point if k[0] in headline and k[1] == "all"]
        cis = bootstrap_intervals(diff, ids, keys)
        for k in keys:
            lo, hi = cis[k]
            rows.append(SummaryRow(f"{mode} - {base}", k[0], k[1], round(point[k], 4), round(lo, 4), round(hi, 4),
                                   1, len(ids)))
    return rows


def read_summary(out_dir: Path) -> list[dict[str, str]]:
    """The rows :func:`write_summary` wrote to ``summary.csv`` (as text, by column name)."""
    with (out_dir / "summary.csv").open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def write_summary(out_dir: Path, bench: Benchmark, rows: list[SummaryRow], baselines: list[MetricRow]) -> None:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(SummaryRow.__dataclass_fields__))
    w.writeheader()
    for r in rows:
        w.writerow(asdict(r))
    write_atomic(out_dir / "summary.csv", buf.getvalue())
    write_atomic(out_dir / "summary.md", markdown(bench, rows, baselines))
    if rows:
        plot_summary(out_dir / "summary.png", bench, rows)


def _interval(r: SummaryRow) -> str:
    if math.isnan(r.value):  # nothing to score: no item of the run was judged on it
        return "not judged"
    if math.isnan(r.ci_low):
        return f"{r.value:.3f}"
    return f"{r.value:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]"


def markdown(bench: Benchmark, rows: list[SummaryRow], baselines: list[MetricRow]) -> str:
    modes = [m for m in dict.fromkeys(r.mode for r in rows) if " - " not in m]
    diffs = [m for m in dict.fromkeys(r.mode for r in rows) if " - " in m]
    keys = list(dict.fromkeys((r.metric, r.subset) for r in rows if " - " not in r.mode))
    cell = {(r.mode, r.metric, r.subset): r for r in rows}
    lines = [f"# {bench.name}", "", bench.description, "",
             "Value on all items (mean over repeats) [95% paired bootstrap interval over items, "
             f"{BOOTSTRAP_RESAMPLES} resamples]; n = items per repeat. Per-item predictions: [items.md](items.md).",
             "", "| metric | subset | " + (" | ".join(modes) if bench.modes_matter else
                                        "value (the mode does not apply)") + " |", "|---|---|" + "---|" * len(modes)]
    unscored = []
    for metric, subset in keys:
        found = [cell.get((m, metric, subset)) for m in modes]
        if all(r is None or math.isnan(r.value) for r in found):  # said once below, not as a row of blanks
            unscored.append(f"{metric} ({subset})" if subset != "all" else metric)
            continue
        cells = ["" if r is None else f"{_interval(r)} (n={r.n})" for r in found]
        lines.append(f"| {metric} | {subset} | " + " | ".join(cells) + " |")
    if unscored:
        lines += ["", "Not judged in any mode (no item had a verdict to score): " + ", ".join(unscored) + "."]
    if diffs:
        lines += ["", "## Paired differences (same items, same resamples)", "",
                  "| metric | " + " | ".join(diffs) + " |", "|---|" + "---|" * len(diffs)]
        for metric in dict.fromkeys(r.metric for r in rows if " - " in r.mode):
            cells = [(lambda r: "" if r is None else f"{_interval(r)} (n={r.n})")(cell.get((d, metric, "all")))
                     for d in diffs]
            lines.append(f"| {metric} | " + " | ".join(cells) + " |")
    if baselines:
        lines += ["", "## Baselines", "", "| baseline | metric | subset | value | n |", "|---|---|---|---|---|"]
        lines += [f"| {b.baseline} | {b.metric} | {b.subset} | {b.value:.3f} | {b.n} |" for b in baselines]
    return "\n".join(lines) + "\n"


def write_item_table(out_dir: Path, records: list[dict[str, Any]]) -> None:
    """Per item and mode: status, prediction and gold, linked to the full result, so every figure of the summary
    can be traced to the items behind it."""
    lines = ["# Items", "", "| item | mode | repeat | status | prediction | gold | result |", "|---|---|---|---|---|---|---|"]
    for r in sorted(records, key=lambda r: (r["item"], r["mode"], int(r["repeat"]))):
        link = f"[result]({r['result_file']})" if r.get("result_file") else ""
        status = r["status"] if r["status"] == "complete" else f"{r['status']}: {str(r.get('reason'))[:80]}"
        words = in_words(r)
        pred, gold = (w.replace("|", "\\|") for w in words[:2]) if words else \
            (_short(r.get("pred")), _short(r.get("gold", r.get("human_mean"))))
        lines.append(f"| {r['item']} | {r['mode']} | {r['repeat']} | {status} | {pred} | {gold} | {link} |")
    write_atomic(out_dir / "items.md", "\n".join(lines) + "\n")


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":")) if value is not None else ""
    return text.replace("|", "\\|")[:300]


def plot_summary(path: Path, bench: Benchmark, rows: list[SummaryRow]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    headline = [r for r in rows if r.subset == "all" and r.metric in bench_headline(bench, rows)
                and " - " not in r.mode]
    metrics = list(dict.fromkeys(r.metric for r in headline))
    modes = list(dict.fromkeys(r.mode for r in headline))
    if not metrics:
        return
    import textwrap

    from .metrics import metric_words

    fig, ax = plt.subplots(figsize=(max(7, 1.6 * len(metrics) * max(1, len(modes)) ** 0.5), 5))
    width = 0.8 / max(1, len(modes))
    for k, mode in enumerate(modes):
        found = [next((r for r in headline if r.mode == mode and r.metric == m), None) for m in metrics]
        # a metric this mode has no value for is drawn as missing ("n/a"), never as a zero-height bar
        vals = [(i + k * width, v) for i, v in enumerate(found)
                if v is not None and v.value is not None and not math.isnan(v.value)]
        err = [[0 if math.isnan(v.ci_low) else v.value - v.ci_low for _, v in vals],
               [0 if math.isnan(v.ci_high) else v.ci_high - v.value for _, v in vals]]
        bars = ax.bar([x for x, _ in vals], [v.value for _, v in vals], width, yerr=err, label=printable(mode),
                      capsize=3)
        for i, v in enumerate(found):
            if v is None or v.value is None or math.isnan(v.value):
                ax.text(i + k * width, 0, "n/a", ha="center", va="bottom", fontsize=10, rotation=90,
                        color=bars.patches[0].get_facecolor() if bars.patches else "grey")
    ax.set_xlim(-width, len(metrics) - 1 + width * len(modes))  # room for every slot, drawn or "n/a"
    ax.set_xticks([i + width * (len(modes) - 1) / 2 for i in range(len(metrics))],
                  [textwrap.fill(metric_words(m), 22) for m in metrics], fontsize=10)
    ax.tick_params(axis="y", labelsize=10)
    ax.set_title(f"{bench.name}: headline metrics (95% paired bootstrap intervals over items)", fontsize=12)
    ax.legend(fontsize=10)
    fig.tight_layout()
    tmp = path.with_name(f".{path.stem}.tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)


def bench_headline(bench: Benchmark, rows: list[SummaryRow]) -> list[str]:
    return list(getattr(bench, "headline", ())) or list(dict.fromkeys(r.metric for r in rows))[:6]
