"""Single opening speeches rated 1-5 (Debatable Intelligence, EMNLP 2025): 631 speeches, 15 human ratings each.

Variants: ``plain`` (answer with the number), ``cot`` (short reasoning, then "Score: N") and ``multi`` (Debatrix's
single-speech graph on argument/source/language, the weighted 1-10 score mapped onto 1-5). Every judged score is
kept two ways: the answer (argmax) and, where the server returns log probabilities, the probability-weighted score.

Metrics: Kendall's tau-c against the mean human score; leave-one-out quadratic weighted kappa (labels -1..5, -1 =
parse failure) over annotator pairs sharing >= 50 speeches, the judge standing in for each member of each pair
(human-human mean on this file: 0.271); the score distribution against the humans'; the mean score per speech
source with the Pearson correlation to the human per-source means; parse failures.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from scipy import stats

from debatrix.core import prompting as P
from debatrix.context import JudgeContext
from debatrix.core.prompting import token_cap
from debatrix.core.settings import JudgeSettings

from .base import (
    TEMPLATES,
    Benchmark,
    BenchmarkDataError,
    Item,
    MetricRow,
    benchmark,
    calls_usage,
    check_count,
    data_root,
)
from .metrics import kendall_tau_c, quadratic_weighted_kappa
from .scoring import rating_from


class RateSpeechVars(P.TemplateVars):
    topic: str
    speech: str
    fence: str
    cot: bool
    words: int


class RateAspectVars(P.TemplateVars):
    topic: str
    speech: str
    fence: str
    question: str
    low: int
    high: int


TEMPLATES.add("rate_speech.j2", RateSpeechVars)
TEMPLATES.add("rate_speech_aspect.j2", RateAspectVars)

SIZE = 631
SCALE = (1, 2, 3, 4, 5)
KAPPA_LABELS = (-1, 1, 2, 3, 4, 5)
MIN_SHARED = 50
VARIANTS = ("plain", "cot", "multi", "aspects")
# The ``aspects`` recipe: the Debatable Intelligence question and three narrower ones, each asked over the same
# prompt prefix (system, topic, speech: read once where the server caches prompts), each read as a probability-
# weighted score; their mean on a 0-1 scale is the rating. One number from a small model is mostly its favourite
# answer; several questions that look at different sides of the speech average some of that away.
ASPECTS: tuple[tuple[str, str, int, int], ...] = (
    ("overall", "Is this a good opening speech for supporting the topic? 1 means strongly disagree (a poor opening "
                "speech), 5 means strongly agree (an excellent one).", 1, 5),
    ("reasoning", "How well reasoned is it: clear claims, each backed by reasons or evidence? 1 is very poor, 9 is "
                  "excellent.", 1, 9),
    ("persuasion", "How persuasive would it be to a thoughtful, neutral listener? 1 is not at all, 9 is "
                   "extremely.", 1, 9),
    ("delivery", "How clear, well organised and well expressed is it? 1 is very poor, 9 is excellent.", 1, 9),
)
MULTI_DIMENSIONS = ("argument", "source", "language")


@dataclass(frozen=True)
class SpeechItem(Item):
    topic: str = ""
    source: str = ""
    text: str = ""
    ratings: tuple[int, ...] = ()
    labelers: tuple[str, ...] = ()

    @property
    def human_mean(self) -> float:
        return sum(self.ratings) / len(self.ratings)


def load_speeches(path: str | Path | None = None) -> list[SpeechItem]:
    path = Path(path) if path else data_root() / "speech_quality" / "data.csv"
    if not path.exists():
        raise BenchmarkDataError(f"{path}: not found (the speech quality data set, see its SOURCE.md)")
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = {"id", "topic", "source", "text", "goodopeningspeech", "labeler_ids"} - set(reader.fieldnames or ())
        if missing:
            raise BenchmarkDataError(f"{path}: missing columns {sorted(missing)}")
        rows = list(reader)
    items = []
    for row in rows:
        ratings = tuple(int(x) for x in json.loads(row["goodopeningspeech"]))
        labelers = tuple(str(x) for x in json.loads(row["labeler_ids"]))
        if len(ratings) != len(labelers):
            raise BenchmarkDataError(f"{path}: speech {row['id']}: {len(ratings)} ratings but {len(labelers)} "
                                     "labelers")
        items.append(SpeechItem(id=row["id"], topic=row["topic"], source=row["source"], text=row["text"],
                                ratings=ratings, labelers=labelers))
    return items


@benchmark("single opening speeches rated 1-5 (tau-c, kappa)", variants=VARIANTS)
class SpeechQuality(Benchmark):
    name = "speech-quality"
    modes_matter = False
    headline = ("tau_c_argmax", "tau_c_weighted", "kappa_loo_argmax", "kappa_loo_weighted", "source_pearson_argmax")

    def __init__(self, path: str | Path | None = None, variant: str = "plain", cot_words: int = 80):
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}: use one of {', '.join(VARIANTS)}")
        self.path, self.variant, self.cot_words = path, variant, cot_words
        self.description = (f"Speech quality (Debatable Intelligence), variant {variant}: 631 opening speeches "
                            "rated 1-5; argmax and probability-weighted scores")
        self._items: list[SpeechItem] | None = None

    def load(self) -> list[SpeechItem]:  # type: ignore[override]
        if self._items is None:
            self._items = load_speeches(self.path)
            check_count(self.name, len(self._items), SIZE)
        return self._items

    def gold_record(self, item: SpeechItem) -> dict[str, Any]:  # type: ignore[override]
        return {"human_mean": round(item.human_mean, 4), "source": item.source, "variant": self.variant}

    async def run_item(self, item: SpeechItem, settings: JudgeSettings,  # type: ignore[override]
                       context: JudgeContext) -> dict[str, Any]:
        started = time.perf_counter()
        if self.variant == "multi":
            return await self._multi(item, settings, context, started)
        if self.variant == "aspects":
            return await self._aspects(item, context, started)
        fence = "SPEECH-DATA-" + hashlib.sha256(item.text.encode()).hexdigest()[:12]
        system = P.render("system.j2", P.SystemVars(fence=fence))
        text = P.render("rate_speech.j2", RateSpeechVars(
            topic=item.topic, speech=P.sanitize(item.text, fence), fence=fence, cot=self.variant == "cot",
            words=self.cot_words), TEMPLATES)
        answer, logprobs, record = await context.gateway.text_with_logprobs(
            [SystemMessage(content=system), HumanMessage(content=text)], node=f"rate_speech_{self.variant}",
            max_tokens=token_cap(self.cot_words) if self.variant == "cot" else 8)
        r = rating_from(answer, logprobs, SCALE)
        return {"status": "complete", "reason": None,
                "pred": {"argmax": r.argmax, "weighted": r.weighted, "distribution": r.distribution,
                         "answer": answer[-300:]},
                "usage": calls_usage([record], started)}

    async def _aspects(self, item: SpeechItem, context: JudgeContext, started: float) -> dict[str, Any]:
        fence = "SPEECH-DATA-" + hashlib.sha256(item.text.encode()).hexdigest()[:12]
        system = SystemMessage(content=P.render("system.j2", P.SystemVars(fence=fence)))
        speech = P.sanitize(item.text, fence)
        records, parts, answers = [], {}, {}
        for name, question, low, high in ASPECTS:  # one after another: each reuses the speech the first read
            text = P.render("rate_speech_aspect.j2", RateAspectVars(topic=item.topic, speech=speech, fence=fence,
                                                                    question=question, low=low, high=high), TEMPLATES)
            answer, logprobs, record = await context.gateway.text_with_logprobs(
                [system, HumanMessage(content=text)], node=f"rate_speech_{name}", max_tokens=6)
            records.append(record)
            r = rating_from(answer, logprobs, range(low, high + 1))
            value = r.weighted if r.weighted is not None else r.argmax
            answers[name] = r.argmax
            if value is not None:
                parts[name] = (value - low) / (high - low)
        usage = calls_usage(records, started)
        if not parts:
            return {"status": "complete", "reason": None, "pred": {"argmax": None, "weighted": None,
                                                                   "aspects": answers}, "usage": usage}
        mean = sum(parts.values()) / len(parts)
        return {"status": "complete", "reason": None,
                "pred": {"argmax": answers.get("overall"), "weighted": round(1 + 4 * mean, 4),
                         "aspects": {k: round(v, 4) for k, v in parts.items()}, "answers": answers},
                "usage": usage}

    async def _multi(self, item: SpeechItem, settings: JudgeSettings, context: JudgeContext,
                     started: float) -> dict[str, Any]:
        from debatrix.app.api import ajudge_speech

        s = settings.model_copy(update={"dimensions": MULTI_DIMENSIONS})
        result = await ajudge_speech(item.text, item.topic, s, context=context)
        usage = {"llm_calls": result.usage.llm_calls, "prompt_tokens": result.usage.prompt_tokens,
                 "completion_tokens": result.usage.completion_tokens,
                 "seconds": round(time.perf_counter() - started, 3)}
        if result.status.value != "complete":
            return {"status": "incomplete", "reason": result.incomplete_reason, "pred": {}, "usage": usage}
        weights = {d.name: context.registry.get(d.name).weight for d in result.dimensions}
        total = sum(weights.values())
        def five(points: float) -> float:
            return 1 + (points - 1) * 4 / 9

        answered = sum(d.speech_judgments[0].score * weights[d.name] for d in result.dimensions) / total
        expected = sum(d.speech_judgments[0].value * weights[d.name] for d in result.dimensions) / total
        return {"status": "complete", "reason": None,
                "pred": {"argmax": int(round(five(answered))), "weighted": round(five(expected), 4),
                         "ten_point": round(expected, 3)},
                "usage": usage}

    # --------------------------------------------------------------------------------------- metrics

    def metrics(self, records: list[dict[str, Any]]) -> list[MetricRow]:
        items = {it.id: it for it in self.load()}
        recs = [r for r in records if r["item"] in items]
        rows = [MetricRow("parse_failures", "all", sum(_item_score(r, "argmax") is None for r in recs), len(recs))]
        for how in ("argmax", "weighted"):
            scored = [(items[r["item"]], _item_score(r, how)) for r in recs if _item_score(r, how) is not None]
            if len(scored) >= 2:
                rows.append(MetricRow(f"tau_c_{how}", "all",
                                      kendall_tau_c([s for _, s in scored], [it.human_mean for it, _ in scored]),
                                      len(scored)))
            judge = {r["item"]: _item_score(r, how) for r in recs}
            kappa, pairs = loo_kappa([items[i] for i in judge], {i: (-1 if v is None else round(v))
                                                                  for i, v in judge.items()})
            if pairs:
                rows.append(MetricRow(f"kappa_loo_{how}", "all", kappa, pairs))
            by_source = source_means(scored)
            if len(by_source) >= 3:
                r_, _ = stats.pearsonr([m for m, _ in by_source.values()], [h for _, h in by_source.values()])
                rows.append(MetricRow(f"source_pearson_{how}", "all", float(r_), len(by_source)))
            for source, (m, _) in sorted(by_source.items()):
                rows.append(MetricRow(f"mean_score_{how}", source, m, sum(it.source == source for it, _ in scored)))
        counts = Counter(_item_score(r, "argmax") for r in recs)
        for v in (*SCALE, None):
            rows.append(MetricRow("share_of_answers", str(v if v is not None else "failed"),
                                  counts.get(v, 0) / len(recs) if recs else math.nan, len(recs)))
        return rows

    def baselines(self, items: list[SpeechItem]) -> list[MetricRow]:  # type: ignore[override]
        rows = []
        kappa, pairs = human_kappa(items)
        rows.append(MetricRow("kappa_pairwise", "all", kappa, pairs, baseline="human-human"))
        ratings = Counter(x for it in items for x in it.ratings)
        total = sum(ratings.values())
        for v in SCALE:
            rows.append(MetricRow("share_of_ratings", str(v), ratings.get(v, 0) / total, total, baseline="humans"))
        for v in (3, 4):
            k, p = loo_kappa(items, {it.id: v for it in items})
            rows.append(MetricRow("kappa_loo", "all", k, p, baseline=f"constant_{v}"))
        import random

        rng = random.Random(0)
        human = [it.human_mean for it in items]
        taus = [kendall_tau_c([rng.choice(SCALE) for _ in items], human) for _ in range(200)]
        rows.append(MetricRow("tau_c", "all", sum(taus) / len(taus), len(items), baseline="random (mean of 200)"))
        rand = {it.id: rng.choice(SCALE) for it in items}
        k, p = loo_kappa(items, rand)
        rows.append(MetricRow("kappa_loo", "all", k, p, baseline="random"))
        return rows


def _item_score(record: dict[str, Any], how: str) -> float | None:
    if record.get("status") != "complete":
        return None
    return record.get("pred", {}).get(how)


def source_means(scored: list[tuple[SpeechItem, float]]) -> dict[str, tuple[float, float]]:
    """Per speech source: (mean judge score, mean human score)."""
    judge, human = defaultdict(list), defaultdict(list)
    for it, s in scored:
        judge[it.source].append(s)
        human[it.source].append(it.human_mean)
    return {k: (sum(v) / len(v), sum(human[k]) / len(human[k])) for k, v in judge.items()}


def annotator_table(items: list[SpeechItem]) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = defaultdict(dict)
    for it in items:
        for who, r in zip(it.labelers, it.ratings):
            table[who][it.id] = r
    return table


def qualifying_pairs(items: list[SpeechItem], min_shared: int = MIN_SHARED) -> list[tuple[str, str, list[str]]]:
    table = annotator_table(items)
    out = []
    for a, b in combinations(sorted(table), 2):
        shared = sorted(set(table[a]) & set(table[b]))
        if len(shared) >= min_shared:
            out.append((a, b, shared))
    return out


def human_kappa(items: list[SpeechItem], min_shared: int = MIN_SHARED) -> tuple[float, int]:
    """Mean quadratic weighted kappa over annotator pairs sharing >= ``min_shared`` speeches (0.271 on the file)."""
    table = annotator_table(items)
    ks = [quadratic_weighted_kappa([table[a][i] for i in s], [table[b][i] for i in s], KAPPA_LABELS)
          for a, b, s in qualifying_pairs(items, min_shared)]
    return (sum(ks) / len(ks), len(ks)) if ks else (math.nan, 0)


def loo_kappa(items: list[SpeechItem], judge: dict[str, int], min_shared: int = MIN_SHARED) -> tuple[float, int]:
    """Leave-one-out kappa: for every qualifying annotator pair, the judge replaces each member in turn and is
    compared with the other on the speeches they share (only speeches the judge rated); the mean over all."""
    rated = [it for it in items if it.id in judge]
    table = annotator_table(rated)
    ks = []
    for a, b, shared in qualifying_pairs(rated, min_shared):
        j = [judge[i] for i in shared]
        ks.append(quadratic_weighted_kappa(j, [table[b][i] for i in shared], KAPPA_LABELS))
        ks.append(quadratic_weighted_kappa([table[a][i] for i in shared], j, KAPPA_LABELS))
    ks = [k for k in ks if not math.isnan(k)]
    return (sum(ks) / len(ks), len(ks) // 2) if ks else (math.nan, 0)
