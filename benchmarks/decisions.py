"""The flow's small decisions, measured on gold before anything is built on them: can the model make each above
chance? Each decision is asked exactly as the flow asks it (the speech read as numbered passages, the question by
id, the options' probabilities read from the first answer token through :meth:`LLMGateway.decision`).

Variants (``debatrix bench decisions --variant V``):
- ``address``: does a speech address a point (argue against it, or make or accept it)? Gold: the IBM Debater
  claims mentioned in speeches (Explicit or Implicit against Negative), 3,246 speech-claim pairs over 200 speeches;
  one item per speech, its claims listed as points C1, C2, ... after it. Figure: ROC AUC of P(addressed), the
  measure of the claim-matching paper (Orbach et al., EMNLP 2019).
- ``on-topic``: is a passage an argument about the motion? Gold: the known-answer suite's off-topic change
  (:mod:`debatrix.benchmarks.contrast`, its ``argument`` items): the passages of the changed side made mostly of
  another debate's sentences are off topic, every other passage is the debate's own. Figure: ROC AUC of P(yes), and
  the share of items whose intact side gets the higher mean.
- ``language``: which of two speeches at the same place is better written? Gold: the suite's ``language`` items
  (one side's sentences shuffled, letters swapped); asked in both orders, the probabilities averaged. Figure: the
  share of pairs whose intact speech is preferred, and its mean probability.
"""

from __future__ import annotations

import csv
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from debatrix.context import JudgeContext
from debatrix.core import prompting as P
from debatrix.core.models import Debate, Debater, Side, Speech
from debatrix.core.settings import JudgeSettings

from .base import Benchmark, BenchmarkDataError, Item, MetricRow, benchmark, calls_usage, data_root
from .contrast import Contrast
from .metrics import roc_auc

VARIANTS = ("address", "on-topic", "language")
ON_TOPIC = "is {id} an argument about the motion (a reason for or against it)?"
BETTER_WRITTEN = "Which speech is more clearly written, well organised and correctly spelled?"


@dataclass(frozen=True)
class DecisionItem(Item):
    contrast: str = ""  # the contrast item's id (on-topic, language)


def _messages(debate: Debate, material: str, question: str) -> list[Any]:
    fence = P.fence_for(debate)
    return [SystemMessage(content=P.system_text(fence)), HumanMessage(content=f"{P.header(debate)}{material}{question}")]


def _words(text: str) -> str:
    return re.sub(r"\W+", " ", text).lower().strip()


@benchmark("The flow's small decisions against gold: addressed (IBM), on topic and better written (contrast)",
           variants=VARIANTS)
class Decisions(Benchmark):
    name = "decisions"
    modes_matter = False
    description = "the flow's small decisions, asked as the flow asks them, against gold"

    def __init__(self, data: str | Path | None = None, variant: str = "address"):
        if variant not in VARIANTS:
            raise BenchmarkDataError(f"decisions: unknown variant {variant!r} (one of {', '.join(VARIANTS)})")
        self.variant = variant
        self.root = Path(data) if data else data_root()
        self.headline = ("roc_auc",) if variant != "language" else ("intact_preferred",)
        self._contrast: Contrast | None = None

    # ----------------------------------------------------------------------------------------------- items

    @property
    def contrast(self) -> Contrast:
        if self._contrast is None:
            self._contrast = Contrast(self.root / "panelbench")
        return self._contrast

    def _ibm(self) -> tuple[dict[str, dict[str, str]], dict[str, list[dict[str, str]]]]:
        folder = self.root / "ibm_rdd_v4_gprkb55"
        try:
            with (folder / "speech-transcripts.csv").open(encoding="utf-8", newline="") as fh:
                speeches = {r["speech-id"]: r for r in csv.DictReader(fh)}
            pairs: dict[str, list[dict[str, str]]] = {}
            with (folder / "GP-claims-mentioned-in-speeches.csv").open(encoding="utf-8", newline="") as fh:
                for r in csv.DictReader(fh):
                    pairs.setdefault(r["speech-id"], []).append(r)
        except FileNotFoundError as e:
            raise BenchmarkDataError(f"{e.filename}: not found (the IBM claim data, see its SOURCE.md)") from None
        return speeches, pairs

    def load(self) -> list[Item]:
        if self.variant == "address":
            speeches, _ = self._ibm()
            return [DecisionItem(id=sid) for sid in sorted(speeches)]
        kind = "argument" if self.variant == "on-topic" else "language"
        return [DecisionItem(id=it.id, contrast=it.id) for it in self.contrast.load() if it.perturbation == kind]

    def gold_record(self, item: Item) -> dict[str, Any]:
        return {"variant": self.variant}

    # ----------------------------------------------------------------------------------------------- asking

    async def run_item(self, item: Item, settings: JudgeSettings, context: JudgeContext) -> dict[str, Any]:
        started = time.perf_counter()
        ask = {"address": self._address, "on-topic": self._on_topic, "language": self._language}[self.variant]
        pred, calls = await ask(item, context)
        return {"status": "complete", "reason": None, "pred": pred, "usage": calls_usage(calls, started)}

    async def _address(self, item: Item, context: JudgeContext) -> tuple[dict[str, Any], list[Any]]:
        speeches, pairs = self._ibm()
        row, claims = speeches[item.id], pairs.get(item.id, [])
        side = Side.PRO if row["speech-to-motion-polarity"] == "PRO" else Side.CON
        other = Side.CON if side is Side.PRO else Side.PRO
        # the speech answers points "made in the debate" before it: the pseudo-debate's first speech is not shown
        debate = Debate(id=item.id, motion=claims[0]["motion-text"] if claims else row["speech-id"],
                        debaters=(Debater(name="Speaker", side=side), Debater(name="Other side", side=other)),
                        speeches=(Speech(speaker="Other side", content="(not shown)"),
                                  Speech(speaker="Speaker", content=row["speech-text"])))
        fence = P.fence_for(debate)
        points = P.render("flow_points.j2", P.FlowPointsVars(
            fence=fence, title="points made in the debate", points=[
                {"id": f"C{k}", "speaker": "", "text": P.one_line(c["GP-claim-text-for-motion"], fence)}
                for k, c in enumerate(claims, 1)]))
        material = P.passage_block(debate, 1, fence) + points
        scores, gold, calls = [], [], []
        for k, c in enumerate(claims, 1):
            question = P.render("decide_answer.j2", P.DecideAnswerVars(index=2, target=f"C{k}"))
            dist, record = await context.gateway.decision(_messages(debate, material, question), ["A", "B", "C"],
                                                          node="decide_answer")
            calls.append(record)
            scores.append(None if dist is None else round(dist["A"] + dist["B"], 5))
            gold.append(c["label"] != "Negative")
        return {"scores": scores, "gold": gold}, calls

    async def _on_topic(self, item: Item, context: JudgeContext) -> tuple[dict[str, Any], list[Any]]:
        contrast = self.contrast
        it = next(x for x in contrast.load() if x.id == item.contrast)  # type: ignore[attr-defined]
        debate, base = contrast.debate(it), contrast._base(it.base)
        fence = P.fence_for(debate)
        scores, gold, intact, calls = [], [], [], []
        for p in debate.passages:
            # the passage's own words: its sentences found in the speech before the change
            original = _words(base.speeches[p.speech].content)
            sentences = [s for s in re.split(r"(?<=[.!?])\s+|\n", p.text) if _words(s)]
            own = sum(len(s.split()) for s in sentences if _words(s) in original)
            changed = p.side is it.degraded
            question = P.render("decide_passage.j2", P.DecidePassageVars(id=p.id, question=ON_TOPIC))
            dist, record = await context.gateway.decision(
                _messages(debate, P.passage_block(debate, p.speech, fence), question), ["yes", "no"],
                node="decide_passage")
            calls.append(record)
            scores.append(None if dist is None else round(dist["yes"], 5))
            gold.append(not changed or own / max(1, p.words) >= 0.5)
            intact.append(not changed)
        return {"scores": scores, "gold": gold, "intact": intact}, calls

    async def _language(self, item: Item, context: JudgeContext) -> tuple[dict[str, Any], list[Any]]:
        contrast = self.contrast
        it = next(x for x in contrast.load() if x.id == item.contrast)  # type: ignore[attr-defined]
        debate = contrast.debate(it)
        fence = P.fence_for(debate)
        pairs, calls = [], []
        for r in range(0, len(debate.speeches) - 1, 2):
            a, b = r, r + 1
            p_a = []
            for first, second in ((a, b), (b, a)):
                material = P.speech_block(debate, first, fence) + P.speech_block(debate, second, fence)
                question = P.render("decide_pair.j2", P.DecidePairVars(
                    question=f"{BETTER_WRITTEN} A: speech {first + 1}. B: speech {second + 1}."))
                dist, record = await context.gateway.decision(_messages(debate, material, question), ["A", "B"],
                                                              node="decide_pair")
                calls.append(record)
                if dist is not None:
                    p_a.append(dist["A"] if first == a else dist["B"])
            if p_a:
                mean = sum(p_a) / len(p_a)
                a_changed = debate.debater(debate.speeches[a].speaker).side is it.degraded
                pairs.append(round(mean if not a_changed else 1 - mean, 5))
        return {"p_intact": pairs}, calls

    # ----------------------------------------------------------------------------------------------- figures

    def metrics(self, records: list[dict[str, Any]]) -> list[MetricRow]:
        done = [r for r in records if r["status"] == "complete" and r.get("pred")]
        rows: list[MetricRow] = []
        if self.variant == "language":
            ps = [p for r in done for p in r["pred"]["p_intact"]]
            if ps:
                rows.append(MetricRow("intact_preferred", "all", sum(p > 0.5 for p in ps) / len(ps), len(ps)))
                rows.append(MetricRow("p_intact_mean", "all", sum(ps) / len(ps), len(ps)))
            return rows
        pairs = [(s, g) for r in done for s, g in zip(r["pred"]["scores"], r["pred"]["gold"]) if s is not None]
        missing = sum(s is None for r in done for s in r["pred"]["scores"])
        rows.append(MetricRow("missing_decisions", "all", missing, len(pairs) + missing))
        if pairs and len({g for _, g in pairs}) == 2:
            rows.append(MetricRow("roc_auc", "all", roc_auc([s for s, _ in pairs], [g for _, g in pairs]),
                                  len(pairs)))
        if self.variant == "on-topic":
            right = []
            for r in done:
                mine = [(s, i) for s, i in zip(r["pred"]["scores"], r["pred"]["intact"]) if s is not None]
                a, b = [s for s, i in mine if i], [s for s, i in mine if not i]
                if a and b:
                    right.append(sum(a) / len(a) > sum(b) / len(b))
            if right:
                rows.append(MetricRow("intact_side_higher", "all", sum(right) / len(right), len(right)))
        return rows

    def baselines(self, items: list[Item]) -> list[MetricRow]:
        if self.variant == "language":
            return [MetricRow("intact_preferred", "all", 0.5, len(items), baseline="blind (cannot see the change)")]
        return [MetricRow("roc_auc", "all", 0.5, len(items), baseline="constant score")]
