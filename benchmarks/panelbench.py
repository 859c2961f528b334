"""PanelBench (the Debatrix paper's benchmark): DebateArt 1v1 debates with per-dimension gold verdicts, and
British Parliamentary competition debates with the advancing teams as gold.

DebateArt encoding (the gold's own, paper section 5.3): pro = 0.0, tie = 0.5, con = 1.0. Winner predictions are
read two ways from each judged dimension: direct prediction (DP, the winner judge's answer) and score comparison
(SC, the debater scores compared; source and language call a tie within ±3 points, as their dimension files say).
"""

from __future__ import annotations

import csv
import functools
import math
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from debatrix.core.loader import load_debate
from debatrix.core.models import Debate, Side

from .base import Benchmark, Item, MetricRow, benchmark, check_count, coded, data_root, named, verdict
from .calibration import brier, cross_validated, ece, reliability_plot, verdicts
from .metrics import accuracy, rmse100

# a run asks for an item's debate to size it, judge it and read its gold; the files do not change under a run
_debate = functools.lru_cache(maxsize=256)(load_debate)

DIMENSIONS = ("argument", "source", "language")
TIE_DIMENSIONS = ("source", "language")
DEBATEART_SIZE, BP_SIZE = 100, 22
POSITIONS = ("OG", "OO", "CG", "CO")


def panelbench_root(root: str | Path | None = None) -> Path:
    return Path(root) if root else data_root() / "panelbench"


# ------------------------------------------------------------------------------------------------ DebateArt


@dataclass(frozen=True)
class DebateArtItem(Item):
    gold: dict[str, float] = field(default_factory=dict)  # argument/source/language/general -> 0, 0.5, 1
    is_many_round: bool = False
    is_long: bool = False
    vote_count: int = 0


def _bool(text: str) -> bool:
    return text.strip().lower() == "true"


def side_value(debate: Debate, winner: str | None) -> float:
    """PanelBench encoding of a verdict: pro 0.0, tie (None) 0.5, con 1.0."""
    if winner is None:
        return 0.5
    return 0.0 if debate.debater(winner).side is Side.PRO else 1.0


@benchmark("PanelBench DebateArt (1v1 debates, per-dimension winners; RMSE×100)")
class DebateArt(Benchmark):
    name = "debateart"
    description = "PanelBench DebateArt: 100 1v1 debates, winner per dimension (RMSE×100; pro 0, tie 0.5, con 1)"
    headline = tuple(f"rmse100_{d}_{m}" for d in (*DIMENSIONS, "general") for m in ("sc", "dp"))
    stratified = True

    def __init__(self, root: str | Path | None = None):
        self.root = panelbench_root(root) / "DebateArt"

    def load(self) -> list[DebateArtItem]:
        gold_dir = self.root / "gold"
        rows = {}
        with (gold_dir / "final.csv").open(encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                rows[int(r["dart_id"])] = {"general": float(r["label"]), "_meta": r}
        with (gold_dir / "dimension.csv").open(encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                rows[int(r["dart_id"])][r["dimension"]] = float(r["label"])
        items = []
        for dart_id, g in sorted(rows.items()):
            meta = g.pop("_meta")
            path = self.root / "motion" / f"debateart_{dart_id:04d}.yml"
            items.append(DebateArtItem(id=path.stem, path=path, gold=g, is_many_round=_bool(meta["is_many_round"]),
                                       is_long=_bool(meta["is_long"]), vote_count=int(meta["vote_count"])))
        check_count(self.name, len(items), DEBATEART_SIZE)
        return items

    def debate(self, item: Item) -> Debate:
        return _debate(item.path)

    def size(self, item: Item) -> int:
        """The debate's length in characters of speech (the motion files only point at the speeches)."""
        return sum(len(s.content) for s in self.debate(item).speeches)

    def sides(self, item: Item, debate: Debate) -> dict[str, float]:
        """Pro 0.0 and con 1.0, as the gold codes them (a tie 0.5)."""
        return {d.name: side_value(debate, d.name) for d in debate.debaters}

    def gold_record(self, item: DebateArtItem) -> dict[str, Any]:  # type: ignore[override]
        debate = self.debate(item)
        return {"gold": item.gold, "is_many_round": item.is_many_round, "is_long": item.is_long,
                "vote_count": item.vote_count, "first_side": side_value(debate, debate.speeches[0].speaker)}

    def metrics(self, records: list[dict[str, Any]]) -> list[MetricRow]:
        """RMSE×100 per dimension × method × subset over the complete records; completion over all."""
        rows = [MetricRow("completion_rate", "all", _completion(records), len(records))]
        done = [r for r in records if r["status"] == "complete"]
        for subset, keep in SUBSETS.items():
            sub = [r for r in done if keep(r)]
            for dim in (*DIMENSIONS, "general"):
                for method in ("sc", "dp"):
                    pairs = [(decision(r, dim, method), r["gold"][dim]) for r in sub if verdict(r, dim)]
                    if pairs:
                        value = rmse100([p for p, _ in pairs], [g for _, g in pairs])
                        rows.append(MetricRow(f"rmse100_{dim}_{method}", subset, value, len(pairs)))
        for dim in (*DIMENSIONS, "general"):
            judged = [r for r in done if verdict(r, dim)]
            for method in ("dp_single", "sc_single"):
                pairs = [(d, r["gold"][dim]) for r in judged if (d := decision(r, dim, method)) is not None]
                if pairs:
                    rows.append(MetricRow(f"rmse100_{dim}_{method}", "all",
                                          rmse100([p for p, _ in pairs], [g for _, g in pairs]), len(pairs)))
            if judged and "first_side" in judged[0]:
                # how often the first speaker is named winner among the decisive verdicts, against the gold's rate
                for method in ("dp", "dp_single", "sc", "gold"):
                    picks = [(r["gold"][dim] if method == "gold" else decision(r, dim, method), r["first_side"])
                             for r in judged]
                    decisive = [(p, f) for p, f in picks if p is not None and p != 0.5]
                    if decisive:
                        rows.append(MetricRow(f"first_speaker_wins_{dim}_{method}", "all",
                                              sum(p == f for p, f in decisive) / len(decisive), len(decisive)))
            biases = [b for r in judged if (b := verdict(r, dim)["position_bias"]) is not None]
            if biases:
                rows.append(MetricRow(f"position_bias_{dim}", "all", sum(biases) / len(biases), len(biases)))
            v = verdicts(judged, dim)
            if len(v) >= 2:  # how far the winner probability shown can be trusted, before and after calibration
                cv = cross_validated(v)
                rows += [MetricRow(f"ece_{dim}", "all", ece(v.p, v.right), len(v)),
                         MetricRow(f"ece_{dim}_calibrated_cv", "all", ece(cv, v.right), len(v)),
                         MetricRow(f"brier_{dim}", "all", brier(v.p, v.right), len(v)),
                         MetricRow(f"brier_{dim}_calibrated_cv", "all", brier(cv, v.right), len(v))]
            flags = [verdict(r, dim)["consistent"] for r in judged]
            if flags:  # verdicts whose comment argues for the winner they name
                rows.append(MetricRow(f"consistent_{dim}", "all", sum(flags) / len(flags), len(flags)))
        return rows

    def write_figures(self, out_dir: Path, records: list[dict[str, Any]]) -> None:
        """``reliability.png``: per mode, how often verdicts were right against the winner probability shown,
        raw and calibrated (cross-validated); ECE and Brier are rows of the summary."""
        modes = {mode: verdicts([r for r in records if r.get("mode") == mode])
                 for mode in sorted({r.get("mode", "") for r in records})}
        modes = {mode: v for mode, v in modes.items() if len(v) >= 2}
        if modes:
            reliability_plot(out_dir / "reliability.png", modes)

    def baselines(self, items: list[DebateArtItem]) -> list[MetricRow]:  # type: ignore[override]
        rows = []
        for dim in (*DIMENSIONS, "general"):
            gold = [it.gold[dim] for it in items]
            for label, value in (("all_pro", 0.0), ("all_tie", 0.5), ("all_con", 1.0)):
                rows.append(MetricRow(f"rmse100_{dim}", "all", rmse100([value] * len(gold), gold), len(gold),
                                      baseline=label))
            rows.append(MetricRow(f"rmse100_{dim}", "all", _random_rmse(gold, dim in TIE_DIMENSIONS), len(gold),
                                  baseline="random"))
        return rows

    def gold_sanity(self, items: list[DebateArtItem]) -> dict[str, float]:
        """Each dimension's gold against the general gold (RMSE×100): 20.62 / 41.53 / 44.72 on this copy."""
        return {dim: rmse100([it.gold[dim] for it in items], [it.gold["general"] for it in items])
                for dim in DIMENSIONS}


def decision(record: dict[str, Any], dimension: str, method: str) -> float | None:
    """A record's decision on ``dimension`` in the gold's code (pro 0.0, tie 0.5, con 1.0), read off the judge's
    verdict: ``dp`` its winner, ``sc`` the winner by the debaters' scores, ``dp_single`` / ``sc_single`` the same
    from the first order alone (what a judge asked once, in the file's order, by argmax, would say). None: not
    made."""
    v = verdict(record, dimension)
    if v is None:
        return None
    first = v["orders"][0] if v["orders"] else None
    if method in ("dp", "sc"):
        return named(record, dimension, "winner" if method == "dp" else "score_winner")
    if first is None:
        return None
    if method == "dp_single":
        return coded(record, first["winner"])
    scores = first["argmax_scores"]  # sc_single
    if len(scores) != len(record["sides"]):
        return None
    by_code = {code: scores[name] for name, code in record["sides"].items()}
    diff = by_code[0.0] - by_code[1.0]
    margin = (record.get("tie_margins") or {}).get(dimension)
    if diff == 0 or (margin is not None and abs(diff) <= margin):
        return 0.5
    return 0.0 if diff > 0 else 1.0


SUBSETS = {
    "all": lambda r: True,
    "many_round": lambda r: r["is_many_round"],
    "few_round": lambda r: not r["is_many_round"],
    "long": lambda r: r["is_long"],
    "short": lambda r: not r["is_long"],
}


def _completion(records: list[dict[str, Any]]) -> float:
    return sum(r["status"] == "complete" for r in records) / len(records) if records else math.nan


def _random_rmse(gold: list[float], ties: bool, draws: int = 2000, seed: int = 0) -> float:
    """Expected RMSE×100 of uniform random verdicts (pro/con, or pro/tie/con where the dimension allows ties)."""
    rng = random.Random(seed)
    choices = (0.0, 0.5, 1.0) if ties else (0.0, 1.0)
    return sum(rmse100([rng.choice(choices) for _ in gold], gold) for _ in range(draws)) / draws


# ------------------------------------------------------------------------------------------ BP-Competition


@dataclass(frozen=True)
class BPItem(Item):
    advancing: tuple[str, ...] = ()  # positions OG/OO/CG/CO
    round: str = ""


@benchmark("PanelBench BP-Competition (British Parliamentary; accuracy against the advancing teams)")
class BPCompetition(Benchmark):
    name = "bp"
    description = ("PanelBench BP-Competition: 22 British Parliamentary debates; correct when the predicted winner "
                   "is an advancing team")
    # Table 5's BP columns: completion, accuracy, and which positions the judge names (a judge that always names
    # the opening government shows it here before anywhere else)
    headline = ("completion_rate", "accuracy_dp", "accuracy_sc", *(f"predicted_share_{p}_dp" for p in POSITIONS))
    stratified = True

    def __init__(self, root: str | Path | None = None):
        self.root = panelbench_root(root) / "BP-Competition"

    def load(self) -> list[BPItem]:
        rounds = {}
        for line in (self.root / "motion" / "motion_list.txt").read_text(encoding="utf-8").splitlines():
            if "\t" in line:
                key, rest = line.split("\t", 1)
                rounds[key] = rest.split(":", 1)[0].strip()
        items = []
        with (self.root / "gold" / "gold.csv").open(encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                key = f"bp_{int(r['bp_id']):03d}"
                teams = tuple(t.strip() for t in r["label"].split(",") if t.strip())
                bad = set(teams) - set(POSITIONS)
                if bad:
                    raise ValueError(f"{self.root / 'gold' / 'gold.csv'}: bp_id {r['bp_id']}: unknown team {bad}")
                items.append(BPItem(id=key, path=self.root / "motion" / f"{key}.yml", advancing=teams,
                                    round=rounds.get(key, "")))
        items.sort(key=lambda it: it.id)
        check_count(self.name, len(items), BP_SIZE)
        return items

    def debate(self, item: Item) -> Debate:
        return _debate(item.path)

    def size(self, item: Item) -> int:
        """The debate's length in characters of speech (the motion files only point at the speeches)."""
        return sum(len(s.content) for s in self.debate(item).speeches)

    tie = None  # a BP verdict names a team; no position for a tie

    def sides(self, item: Item, debate: Debate) -> dict[str, str]:
        """Each team's position (OG, OO, CG, CO), as the gold names the advancing teams."""
        return {d.name: d.position for d in debate.debaters}

    def gold_record(self, item: BPItem) -> dict[str, Any]:  # type: ignore[override]
        return {"gold": list(item.advancing), "round": item.round}

    def metrics(self, records: list[dict[str, Any]]) -> list[MetricRow]:
        rows = [MetricRow("completion_rate", "all", _completion(records), len(records))]
        done = [r for r in records if r["status"] == "complete" and verdict(r, "general")]
        for method, field in (("dp", "winner"), ("sc", "score_winner")):
            preds = [coded(r, verdict(r, "general")[field]) for r in done]
            hits = [p in r["gold"] for p, r in zip(preds, done)]
            if done:
                rows.append(MetricRow(f"accuracy_{method}", "all", accuracy(hits, [True] * len(hits)), len(done)))
                counts = Counter(preds)
                for p in POSITIONS:
                    rows.append(MetricRow(f"predicted_share_{p}_{method}", "all", counts.get(p, 0) / len(done),
                                          len(done)))
        return rows

    def baselines(self, items: list[BPItem]) -> list[MetricRow]:  # type: ignore[override]
        rows = []
        for p in POSITIONS:
            rows.append(MetricRow("accuracy", "all", sum(p in it.advancing for it in items) / len(items), len(items),
                                  baseline=f"always_{p}"))
        rows.append(MetricRow("accuracy", "all", sum(len(it.advancing) / 4 for it in items) / len(items),
                              len(items), baseline="random"))
        return rows

    def gold_distribution(self, items: list[BPItem]) -> dict[str, float]:
        """Share of advancing slots each position holds in the gold (the position bias to compare against)."""
        counts = Counter(t for it in items for t in it.advancing)
        total = sum(counts.values())
        return {p: counts.get(p, 0) / total for p in POSITIONS}
