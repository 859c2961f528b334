"""NYU debates with a known right answer (``../shared/data/nyu_debate``, read its SOURCE.md): two debaters each
defend one answer to a question about a story the judge cannot read; exactly one answer is the story's. The judge
should name the debater who holds it.

Figures: the share right (a tie or no verdict counts half: it named nobody), the share of items where the first
debater (Debater A) is named beside the share where the gold's right answer is theirs (a judge leaning to the
first speaker names A more often than the gold does), and the Brier score and ECE of the probability the judge
showed for the right debater (calibrated where a map exists, else the raw winner probability). Baselines on the
same items: the live human judges (their final probability on the right answer) and the side with more words.
``--limit N`` draws a seeded sample (the same items every time); every figure's interval is the runner's paired
bootstrap over items."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from debatrix.core.loader import load_debate
from debatrix.core.models import Debate

from .base import (Benchmark, BenchmarkDataError, Item, MetricRow, benchmark, check_count, data_root, fold, read_winner,
                   verdict)
from .calibration import brier, ece

NYU_SIZE = 114
FIRST = "Debater A"  # the preset lists Debater A's opening first (the first round is simultaneous)


@dataclass(frozen=True)
class NyuItem(Item):
    winner: str = ""  # the debater who defended the right answer
    human_p: float = 0.5  # the live human judge's final probability on the right answer
    chars: int = 0


@benchmark("NYU human debates about a story the judge cannot read, with a known right answer (114 debates)")
class NyuDebate(Benchmark):
    name = "nyu_debate"
    description = ("NYU reading-comprehension debates: is the debater holding the story's right answer named? share "
                   "right, first debater named against the gold's, Brier and ECE of the shown probability")
    headline = ("right", "first_named", "brier")
    stratified = True

    def __init__(self, data: str | Path | None = None):
        root = Path(data) if data else data_root()
        self.root = root if (root / "gold.csv").exists() else root / "nyu_debate"

    def load(self) -> list[NyuItem]:
        try:
            with (self.root / "gold.csv").open(encoding="utf-8", newline="") as fh:
                rows = list(csv.DictReader(fh))
        except FileNotFoundError:
            raise BenchmarkDataError(f"{self.root / 'gold.csv'}: not found (the NYU debates, see their SOURCE.md)"
                                     ) from None
        items = [NyuItem(id=r["id"], path=self.root / "motion" / f"{r['id']}.yml", winner=r["winner"],
                         human_p=float(r["human_judge_p_correct"]), chars=int(r["chars"])) for r in rows]
        check_count(self.name, len(items), NYU_SIZE)
        return items

    def debate(self, item: Item) -> Debate:
        """The debate as its preset has it, its first round marked simultaneous (both openings were written
        without seeing each other: SOURCE.md)."""
        debate = load_debate(item.path)
        return debate.model_copy(update={"simultaneous": ((1, 2),)}) if len(debate.speeches) >= 2 else debate

    def size(self, item: Item) -> int:
        return item.chars  # type: ignore[attr-defined]

    def sides(self, item: Item, debate: Debate) -> dict[str, float]:
        """The right debater 1.0, the other 0.0 (a tie 0.5)."""
        return {d.name: 1.0 if d.name == item.winner else 0.0 for d in debate.debaters}  # type: ignore[attr-defined]

    def gold_record(self, item: NyuItem) -> dict[str, Any]:  # type: ignore[override]
        return {"gold": {"general": 1.0}, "winner": item.winner, "human_p": item.human_p}

    def metrics(self, records: list[dict[str, Any]]) -> list[MetricRow]:
        rows = [MetricRow("completion_rate", "all",
                          sum(r["status"] == "complete" for r in records) / len(records) if records else 0.0,
                          len(records))]
        done = [r for r in records if r["status"] == "complete"]
        if not done:
            return rows
        right, first, shown = [], [], []
        for r in done:
            v = verdict(r, "general") or {}
            winner = read_winner(v)
            right.append(0.5 if winner is None else float(winner == r["winner"]))
            first.append(0.5 if winner is None else float(winner == FIRST))
            p = _shown(v, r["winner"])
            shown.append((0.5 if p is None else p, True))  # no probability shown: as good as saying 50%
        rows.append(MetricRow("right", "all", sum(right) / len(right), len(right)))
        rows.append(MetricRow("first_named", "all", sum(first) / len(first), len(first)))
        rows.append(MetricRow("gold_first", "all", sum(r["winner"] == FIRST for r in done) / len(done), len(done)))
        if shown:
            ps = [p for p, _ in shown]
            rows.append(MetricRow("brier", "all", brier(ps, [True] * len(ps)), len(ps)))
            # ECE of the probability of the debater the judge named: right where it was the right one
            named = [(max(p, 1 - p), p >= 0.5) for p in ps]
            rows.append(MetricRow("ece", "all", ece([p for p, _ in named], [y for _, y in named]), len(named)))
        return rows

    def baselines(self, items: list[Item]) -> list[MetricRow]:
        humans = [it.human_p for it in items]  # type: ignore[attr-defined]
        rows = [MetricRow("right", "all", sum(0.5 if p == 0.5 else float(p > 0.5) for p in humans) / len(humans),
                          len(humans), baseline="the live human judges"),
                MetricRow("brier", "all", brier(humans, [True] * len(humans)), len(humans),
                          baseline="the live human judges"),
                MetricRow("right", "all", 0.5, len(items), baseline="a coin"),
                MetricRow("brier", "all", 0.25, len(items), baseline="always 50%")]
        longer = []
        for it in items:
            debate = self.debate(it)
            words = {d.name: sum(len(s.content.split()) for s in debate.speeches if s.speaker == d.name)
                     for d in debate.debaters}
            other = next(n for n in words if n != it.winner)  # type: ignore[attr-defined]
            w = words[it.winner]  # type: ignore[attr-defined]
            longer.append(0.5 if w == words[other] else float(w > words[other]))
        rows.append(MetricRow("right", "all", sum(longer) / len(longer), len(longer),
                              baseline="the side with more words"))
        return rows


def _shown(v: dict[str, Any], right: str) -> float | None:
    """The probability the verdict showed for the right debater (its calibrated one where shown, else the raw)."""
    probs = v.get("probabilities") or {}
    if not probs or v.get("not_judged"):
        return None
    winner = read_winner(v)
    cal = v.get("calibrated_probability")
    if cal is not None and winner is not None:
        return cal if winner == right else 1 - cal
    return probs.get(right)
