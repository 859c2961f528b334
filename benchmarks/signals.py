"""Each decision the flow asks, measured on every gold source a stored run holds: ``debatrix bench signals FOLDER
[FOLDER ...]`` (no model call). The rule it serves: a decision that carries no measured signal decides nothing.

A decision is read as the model made it, before any ledger: a debater's mean P over their passages ("argues",
"evidence") or over the answers their passages were asked to give ("answers"). Each gold source asks whether the
side with the higher mean is the side the gold favours:

- the known answers (``bench contrast`` runs): the intact side against the changed one, each decision on the change
  it should see (argues: another debate's sentences; evidence: the sources removed; answers: the engagement
  removed);
- DebateArt's audience (``bench debateart`` runs): the debater who won each decisive per-dimension vote
  (arguments, sources) and the overall verdict;
- BP competition debates (``bench bp`` runs): each pair of an advancing and a non-advancing team;
- IBM Debater's claims (``bench decisions --variant address-flow``, ``address``, ``on-topic``, ``evidence``
  runs): the model's P(yes) pooled over the run's pairs, as ROC AUC.

Each cell is the share right (a tie counts half; ROC AUC for IBM) with a 95% bootstrap interval over items
(debates; IBM's speeches). A decision *carries* on a source where that interval lies above 0.5. Beside the
decisions, the side with more words, read on the same items: what a decision must beat to be more than length.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from debatrix.core.errors import ConfigurationError
from debatrix.core.files import read_items
from debatrix.core.flow import EMPTY, MEASURES
from debatrix.core.results import JudgeResult
from debatrix.core.modes import flow_record

from .metrics import roc_auc

DECISIONS = ("argues", "evidence", "answers")
LEDGER = {"argument": "the argument ledger (arguments standing)", "source": "the source ledger (backed by evidence)",
          "clash": "the clash ledger (answered, standing)"}
MADE = "arguments made (answers ignored)"
WORDS = "more words"  # the baseline row
ROWS = (*DECISIONS, *LEDGER.values(), MADE, WORDS)
# the known answer each row should see (the words: every item a decision is read on)
CHANGE_SEEN = {"argues": "argument", "evidence": "source", "answers": "clash", LEDGER["argument"]: "argument",
               LEDGER["source"]: "source", LEDGER["clash"]: "clash", MADE: "argument"}
ART_VOTES = {"arguments": "argument", "sources": "source", "overall": "general"}
DECISION_OF_VARIANT = {"address": "answers", "address-flow": "answers", "on-topic": "argues", "evidence": "evidence",
                      "on-topic-flow": "argues", "evidence-flow": "evidence"}
RESAMPLES = 2000
LEVEL = 0.05  # a decision carries where chance would do as well this rarely


class SignalsError(ConfigurationError):
    """A folder that holds no run this table can read (bad input: one line, exit 2)."""


@dataclass(frozen=True)
class Cell:
    source: str
    decision: str
    value: float
    low: float
    high: float
    n: int  # items (debates, speeches)
    p: float  # one-sided: the chance of doing at least this well at random (a sign test over items; for a ROC
    # AUC, the bootstrap's share at or below 0.5)

    @property
    def carries(self) -> bool:
        return self.p < LEVEL

    def shown(self) -> str:
        # a bootstrap p of 0 means no resample fell at or below chance: it says "below 1 in RESAMPLES", not 0
        p = f"< {1 / RESAMPLES:g}" if self.p == 0 else f"{self.p:.2g}"
        return f"{self.value:.2f} [{self.low:.2f}, {self.high:.2f}] ({self.n}; p {p})"


def means(result: JudgeResult) -> dict[str, dict[str, float]]:
    """Row -> debater -> value: each decision's mean probability over the debater's passages (a debater with none
    of that decision is absent); each judged dimension's strength as its ledger weighs the decisions (the result's
    own ledger); the arguments the ledger counts with every answer ignored; the words spoken."""
    pooled: dict[str, dict[str, list[float]]] = {d: {} for d in DECISIONS}
    for f in result.flow:
        for m in f.marks:
            for name, value in (("argues", m.argument), ("evidence", m.evidence)):
                if value is not None:
                    pooled[name].setdefault(f.speaker, []).append(value)
        for line in f.lines:
            pooled["answers"].setdefault(f.speaker, []).append(line.answers)
    out = {d: {who: sum(v) / len(v) for who, v in by.items()} for d, by in pooled.items()}
    words: dict[str, float] = {}
    for s in result.speeches:
        words[s.speaker] = words.get(s.speaker, 0) + len(s.content.split())
    out[WORDS] = words
    led = next((d.ledger for d in result.dimensions if d.ledger is not None), None)
    # a passage's decision the run never asked (evidence, while no judged dimension rests on it): a ledger weighing
    # it reads a tie for everyone, which is no measurement of it, so its row is left out rather than shown at 0.50
    unasked = {k for k in ("argues", "evidence") if not pooled[k]}
    if led is not None:
        for dim, row in LEDGER.items():  # measured whether the measure votes or not (a blind one is measured too)
            if unasked.isdisjoint(MEASURES[dim].weighs):
                out[row] = {t.debater: MEASURES[dim].strength(t) for t in led.tallies}
        out[MADE] = {t.debater: math.log(EMPTY + t.arguments) for t in led.tallies}
    return out


def higher(by: dict[str, float], favoured: str, other: str) -> float | None:
    """1 where the favoured side's mean is higher, 0 where lower, a half where equal; None where either is missing."""
    if favoured not in by or other not in by:
        return None
    return 1.0 if by[favoured] > by[other] else 0.0 if by[favoured] < by[other] else 0.5


def pairs_right(by: dict[str, float], advancing: Sequence[str], others: Sequence[str]) -> float | None:
    """The share of (advancing, other) pairs whose advancing team has the higher mean, ties a half."""
    got = [higher(by, a, o) for a in advancing for o in others]
    got = [g for g in got if g is not None]
    return sum(got) / len(got) if got else None


def interval(values: Sequence[float], seed: int = 0) -> tuple[float, float, float, float]:
    """The mean with a 95% percentile bootstrap interval over the items, and a one-sided sign test's p (items above
    a half against items below; items at a half tell nothing): two items right of two is p 0.25, not a signal."""
    v = np.asarray(values, float)
    rng = np.random.default_rng(seed)
    boots = v[rng.integers(0, v.size, (RESAMPLES, v.size))].mean(axis=1)
    above, below = int((v > 0.5).sum()), int((v < 0.5).sum())
    p = float(stats.binomtest(above, above + below, 0.5, alternative="greater").pvalue) if above + below else 1.0
    return float(v.mean()), float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5)), p


def auc_interval(groups: Sequence[tuple[Sequence[float], Sequence[bool]]], seed: int = 0
                 ) -> tuple[float, float, float, float]:
    """ROC AUC of the pooled pairs, with a 95% bootstrap interval resampling the groups (speeches), and the share of
    resamples at or below 0.5 as its p."""
    def pooled(gs: Sequence[tuple[Sequence[float], Sequence[bool]]]) -> float:
        scores = [s for g in gs for s in g[0]]
        gold = [y for g in gs for y in g[1]]
        return roc_auc(scores, gold) if 0 < sum(gold) < len(gold) else math.nan

    rng = np.random.default_rng(seed)
    boots = [pooled([groups[i] for i in rng.integers(0, len(groups), len(groups))]) for _ in range(RESAMPLES)]
    boots = [b for b in boots if not math.isnan(b)]
    return (pooled(groups), float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5)),
            float(np.mean([b <= 0.5 for b in boots])))


def _records(folder: Path) -> list[dict[str, Any]]:
    path = folder / "items.jsonl"
    if not path.is_file():
        raise SignalsError(f"{folder}: no items.jsonl (give the folder of a `debatrix bench` run)")
    return read_items(path)


def _result(folder: Path, record: dict[str, Any]) -> JudgeResult | None:
    path = folder / str(record.get("result_file", ""))
    if not record.get("result_file") or not path.is_file():
        return None
    result = JudgeResult.model_validate_json(path.read_text(encoding="utf-8"))
    return result if result.flow else None


def _judged(folder: Path, records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, dict[str, float]]]]:
    """The complete flow records of a run with their decisions' means (a result without a flow is skipped)."""
    out = []
    for r in records:
        if r.get("status") != "complete" or not flow_record(r):
            continue
        result = _result(folder, r)
        if result is not None:
            out.append((r, means(result)))
    return out


def _side_of(record: dict[str, Any], code: float) -> str | None:
    return next((name for name, c in record.get("sides", {}).items() if c == code), None)


def _contrast(folder: Path, records: list[dict[str, Any]]) -> dict[tuple[str, str], list[float]]:
    got: dict[tuple[str, str], list[float]] = {}
    for r, m in _judged(folder, records):
        changed = r.get("perturbation")
        intact = _side_of(r, 1.0 if r.get("degraded") == "pro" else 0.0)
        degraded = _side_of(r, 0.0 if r.get("degraded") == "pro" else 1.0)
        if intact is None or degraded is None or changed not in CHANGE_SEEN.values():
            continue
        # each row on the change it should see; the words on every item a decision is read on
        for decision in [d for d in ROWS if CHANGE_SEEN.get(d) == changed] + [WORDS]:
            value = higher(m.get(decision, {}), intact, degraded)
            if value is not None:
                got.setdefault(("known answers", decision), []).append(value)
    return got


def _debateart(folder: Path, records: list[dict[str, Any]]) -> dict[tuple[str, str], list[float]]:
    got: dict[tuple[str, str], list[float]] = {}
    for r, m in _judged(folder, records):
        for vote, key in ART_VOTES.items():
            gold = r.get("gold", {}).get(key)
            if gold not in (0.0, 1.0):
                continue
            won, lost = _side_of(r, gold), _side_of(r, 1.0 - gold)
            if won is None or lost is None:
                continue
            for decision in ROWS:
                value = higher(m.get(decision, {}), won, lost)
                if value is not None:
                    got.setdefault((f"DebateArt: {vote} vote", decision), []).append(value)
    return got


def _bp(folder: Path, records: list[dict[str, Any]]) -> dict[tuple[str, str], list[float]]:
    got: dict[tuple[str, str], list[float]] = {}
    for r, m in _judged(folder, records):
        teams = r.get("sides", {})  # team name -> position
        advancing = [name for name, pos in teams.items() if pos in r.get("gold", [])]
        others = [name for name in teams if name not in advancing]
        if not advancing or not others:
            continue
        for decision in ROWS:
            value = pairs_right(m.get(decision, {}), advancing, others)
            if value is not None:
                got.setdefault(("BP: advancing teams", decision), []).append(value)
    return got


def _ibm(records: list[dict[str, Any]]) -> dict[tuple[str, str], list[tuple[list[float], list[bool]]]]:
    got: dict[tuple[str, str], list[tuple[list[float], list[bool]]]] = {}
    for r in records:
        decision = DECISION_OF_VARIANT.get(str(r.get("variant")))
        pred = r.get("pred") or {}
        if r.get("status") != "complete" or decision is None or not pred.get("scores"):
            continue
        pairs = [(s, bool(g)) for s, g in zip(pred["scores"], pred["gold"]) if s is not None]
        if pairs:
            got.setdefault((f"IBM claims: {r['variant']} (ROC AUC)", decision), []).append(
                ([s for s, _ in pairs], [g for _, g in pairs]))
    return got


READERS: dict[str, Callable[[Path, list[dict[str, Any]]], dict[tuple[str, str], list[float]]]] = {
    "contrast": _contrast, "debateart": _debateart, "bp": _bp}


def cells(folders: Sequence[Path]) -> list[Cell]:
    """Every (gold source, decision) the folders' runs measure; runs of one benchmark in several folders pool."""
    shares: dict[tuple[str, str], list[float]] = {}
    aucs: dict[tuple[str, str], list[tuple[list[float], list[bool]]]] = {}
    for folder in folders:
        records = _records(Path(folder))
        kinds = {r.get("benchmark") for r in records}
        read = [k for k in kinds if k in READERS or k == "decisions"]
        if not read:
            raise SignalsError(f"{folder}: a `{'`, `'.join(sorted(map(str, kinds))) or 'empty'}` run; this table reads "
                               "contrast, debateart, bp and decisions runs")
        for kind in read:
            mine = [r for r in records if r.get("benchmark") == kind]
            if kind == "decisions":
                for key, groups in _ibm(mine).items():
                    aucs.setdefault(key, []).extend(groups)
            else:
                for key, values in READERS[kind](Path(folder), mine).items():
                    shares.setdefault(key, []).extend(values)
    out = [_cell(s, d, interval(v), len(v)) for (s, d), v in shares.items() if v]
    out += [_cell(s, d, auc_interval(g), len(g)) for (s, d), g in aucs.items() if g]
    if not out:
        raise SignalsError("no complete flow judgments (or decision runs) with gold in "
                           + ", ".join(str(f) for f in folders))
    return out


def _cell(source: str, decision: str, figures: tuple[float, float, float, float], n: int) -> Cell:
    value, low, high, p = figures
    return Cell(source, decision, value, low, high, n=n, p=p)


def table(found: Sequence[Cell]) -> str:
    """Markdown: a row per decision (and the words baseline), a column per gold source, then which carry."""
    sources = list(dict.fromkeys(c.source for c in found))
    at = {(c.source, c.decision): c for c in found}
    lines = ["| decision | " + " | ".join(sources) + " |", "|---" * (len(sources) + 1) + "|"]
    for decision in ROWS:
        row = [at[(s, decision)].shown() + (" **carries**" if decision != WORDS and at[(s, decision)].carries
                                              else "") if (s, decision) in at else "—" for s in sources]
        if any(x != "—" for x in row):
            lines.append(f"| {decision} | " + " | ".join(row) + " |")
    lines.append("")
    for decision in ROWS[:-1]:
        mine = [c for c in found if c.decision == decision]
        if not mine:
            continue
        carried = [c.source for c in mine if c.carries]
        lines.append(f"- {decision}: above chance on {len(carried)} of {len(mine)} sources"

                     + (f" ({'; '.join(carried)})" if carried else "") + ".")
    return "\n".join(lines)
