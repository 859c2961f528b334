"""How often each reading of a debate was right on human gold, read from benchmark runs (``debatrix profile
--readings RUN``): a mode's overall verdict (``flow``, ``direct``, ...) and each of its judged dimensions
(``flow/argument``), per gold source (the run's benchmark), each share with a Wilson 95% interval, beside how often
the reading named the first speaker and how often the gold's winner was the first speaker.

Only debates whose gold names a winner count; a reading that named no winner (a tie, or the dimension not judged on
that debate) counts half, as a coin would. A dimension not judged on any debate of a run is no reading of that model
and is left out.

A reading of two debaters also gets its place lean taken out (:class:`~debatrix.core.profile.PlaceFit`): the
log-odds to add to its P(the first speaker wins) so that it names the first speaker as often as the gold does,
fitted on the debates of fold 0 (a hash of the item's id) and checked on fold 1, so that its figures are those of
debates the fit never saw."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from debatrix.core.profile import PlaceFit, ReadingProfile, shifted, wilson

from .base import BenchmarkDataError, coded, fold, read_winner

#: debates of each fold a place fit needs: fewer, and its shift is one debate's noise
MIN_FOLD = 10
#: a place fit's shifts: steps of the log-odds tried, up to the limit either way
STEP, LIMIT = 0.01, 4.0


def _records(run: Path) -> list[dict[str, Any]]:
    path = run / "items.jsonl"
    if not path.is_file():
        raise BenchmarkDataError(f"{run}: no items.jsonl (give the folder a `debatrix bench` run wrote)")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            raise BenchmarkDataError(f"{path}:{n}: not a JSON line") from None
        if not isinstance(rec, dict):
            raise BenchmarkDataError(f"{path}:{n}: not a record")
        out.append(rec)
    return out


def _first_speaker(run: Path, rec: dict[str, Any]) -> str | None:
    """The debater who spoke first, from the item's kept result (None: no result kept)."""
    name = rec.get("result_file")
    if not name:
        return None
    try:
        result = json.loads((run / name).read_text(encoding="utf-8"))
        return result["speeches"][0]["speaker"]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


def run_models(run: Path) -> tuple[set[str], str]:
    """The models a run's invocations ran on (``runs.jsonl``: what was served) and its label (folder @ commits)."""
    models, commits = set(), []
    try:
        lines = (run / "runs.jsonl").read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    for line in lines:
        try:
            entry = json.loads(line)
            models.add(str(entry["served"]["model"]))
            commits.append(str(entry.get("commit") or "")[:7])
        except (ValueError, KeyError, TypeError):
            continue
    commits = [c for c in dict.fromkeys(commits) if c]
    return models, run.name + (f" @ {', '.join(commits)}" if commits else "")


def readings(runs: Iterable[Path]) -> list[ReadingProfile]:
    """Every reading of every run in ``runs``, pooled per (reading, gold source) where several runs hold the same
    debates' readings (a debate judged twice counts once: its latest record)."""
    seen: dict[tuple[str, str], dict[str, Row]] = {}
    judged: set[tuple[str, str]] = set()  # readings that named a winner, or a tie, on at least one debate
    labels: dict[tuple[str, str], list[str]] = {}
    for run in map(Path, runs):
        _, label = run_models(run)
        for rec in _records(run):
            gold = (rec.get("gold") or {}).get("general")
            if rec.get("status") != "complete" or not rec.get("sides") or gold not in (0.0, 1.0):
                continue  # not judged to the end, or no winner in the gold (a tie)
            first = _first_speaker(run, rec)
            if first is None or first not in rec["sides"]:
                continue
            gold_first = rec["sides"][first] == gold
            mode, source = str(rec.get("mode")), str(rec.get("benchmark"))
            labels.setdefault((mode, source), []).append(label)
            for dim, v in (rec.get("verdicts") or {}).items():
                if not isinstance(v, dict):
                    continue
                key = (mode if dim == "general" else f"{mode}/{dim}", source)
                winner = read_winner(v)
                if not v.get("not_judged"):
                    judged.add(key)
                probs = v.get("probabilities") if not v.get("not_judged") else None
                p_first = (float(probs[first]) if isinstance(probs, dict) and len(probs) == 2 and first in probs
                           else None)
                if p_first is not None and v.get("place_shift") is not None:
                    # a reading is recorded as the model made it: the shift a profile took out is put back
                    p_first = shifted(p_first, -float(v["place_shift"]))
                    other = next(n for n in probs if n != first)
                    winner = first if p_first > 0.5 else other if p_first < 0.5 else None
                said = coded(rec, winner) if winner else None
                # no winner (a tie, or not judged on this debate) counts half, as a coin would
                seen.setdefault(key, {})[str(rec["item"])] = Row(
                    0.5 if said is None else float(said == gold), 0.5 if winner is None else float(winner == first),
                    gold_first, p_first, fold(str(rec["item"])))
    out = []
    for (name, source), items in sorted(seen.items()):
        if (name, source) not in judged:  # never judged on this model: no reading of it
            continue
        rows = list(items.values())
        n = len(rows)
        out.append(ReadingProfile(
            reading=name, gold=source, items=n, right=wilson(sum(r.right for r in rows), n),
            first_named=wilson(sum(r.first for r in rows), n),
            gold_first=round(sum(r.gold_first for r in rows) / n, 4),
            run=", ".join(dict.fromkeys(labels.get((name.split("/")[0], source), []))), place=place_fit(rows)))
    return out


class Row(NamedTuple):
    """One debate as a reading read it: right (1, 0, or half for no winner), the first speaker named (the same),
    whether the gold's winner spoke first, the reading's P(the first speaker wins) (None: no probabilities) and the
    debate's fold."""

    right: float
    first: float
    gold_first: bool
    p_first: float | None
    fold: int


def place_fit(rows: list[Row]) -> PlaceFit | None:
    """The shift that takes a reading's place lean out, fitted on fold 0 and checked on fold 1 (None: fewer than
    :data:`MIN_FOLD` debates with probabilities in either fold). The shift is the smallest (in steps of
    :data:`STEP`) under which the reading names the first speaker on fold 0 as often as the gold's winner spoke
    first there: the lean is what is taken out, so a reading that leans nowhere keeps its probabilities. (A
    likelihood fit was measured and not used: on a reading whose probabilities sit near 0.5 wherever it cannot see,
    it moved them all across 0.5 together, and the reading then named the first speaker on 0.83 of the debates it
    had not seen, against the gold's 0.48.)"""
    fit = [r for r in rows if r.fold == 0 and r.p_first is not None]
    check = [r for r in rows if r.fold == 1]
    if len(fit) < MIN_FOLD or sum(r.p_first is not None for r in check) < MIN_FOLD:
        return None
    target = sum(r.gold_first for r in fit) / len(fit)
    steps = sorted((k * STEP for k in range(-int(LIMIT / STEP), int(LIMIT / STEP) + 1)), key=abs)
    shift = round(min(steps, key=lambda d: abs(_named_first(fit, d) - target)), 4)  # the first of the best: smallest
    after = []
    for r in check:  # as the verdict would read it with the shift: a tie still counts half
        if r.p_first is None:
            after.append((r.right, r.first))
            continue
        named_first = _first(r, shift)
        after.append((0.5 if named_first == 0.5 else float(bool(named_first) == r.gold_first), named_first))
    m = len(check)
    return PlaceFit(shift=shift, fitted=len(fit), checked=m, right_before=wilson(sum(r.right for r in check), m),
                    right=wilson(sum(a for a, _ in after), m), first_before=wilson(sum(r.first for r in check), m),
                    first_named=wilson(sum(f for _, f in after), m),
                    gold_first=round(sum(r.gold_first for r in check) / m, 4))


def _first(r: Row, shift: float) -> float:
    """1 where the reading, shifted, names the first speaker, 0 where the other, half on a tie."""
    q = shifted(r.p_first, shift) if r.p_first is not None else 0.5
    return 0.5 if q == 0.5 else float(q > 0.5)


def _named_first(rows: list[Row], shift: float) -> float:
    return sum(_first(r, shift) for r in rows) / len(rows)
