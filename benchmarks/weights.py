"""Whether the flow's overall verdict would be better with weights fitted on gold (``debatrix bench weights``).

The flow computes each dimension's strength per debater from its ledger (:data:`debatrix.core.flow.MEASURES`:
arguments standing, arguments with evidence, arguments answered; a dimension measured blind, language, is not
judged and is no feature) and merges the judged dimensions' win probabilities by the dimension files' weights. The alternative fitted here: P(pro wins) = sigmoid(w . d), d the
pro debater's strength minus the con debater's in each dimension, with no intercept (so the verdict stays symmetric
in the debaters: swapping them flips it) and an L2 penalty chosen by an inner cross-validation. It is scored, never
on the verdicts it was fitted on, two ways: leaving one base debate out at a time (the contrast suite's eight items
of a debate share its text, so they go out together), and fitting on the other source of gold alone (audience votes
against known answers). Read from stored ``bench debateart`` / ``bench contrast`` flow runs: no model call."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize

from debatrix.core.flow import JUDGED, MEASURES, flow_verdict
from debatrix.core.results import JudgeResult
from debatrix.core.models import Side
from debatrix.core.modes import flow_record

from .base import p_coded
from .calibration import logit
from .panelbench import DebateArt

# the measures read from the ledger's rows (language reads each debater's passages, which results before 1.10 lack)
FEATURES = tuple(name for name in JUDGED if MEASURES.get_or_raise(name).rows)
GRID = (0.1, 0.3, 1.0, 3.0, 10.0)  # the L2 penalties tried, in units of one verdict's log loss


@dataclass(frozen=True)
class Row:
    item: str
    base: str  # the DebateArt debate it was made from (the group left out together)
    source: str  # "debateart" (audience votes) or "contrast" (known answers)
    d: tuple[float, ...]  # pro's strength minus con's, per FEATURES
    pro_won: bool
    shipped: float  # the verdict's own P(pro wins), as the run showed it
    direct: float | None = None  # `direct` mode's P(pro wins) on the same item, where the folder holds it


def strengths(result: JudgeResult, pro: str, con: str) -> tuple[float, ...]:
    led = next((d.ledger for d in result.dimensions if d.ledger is not None), None)
    if led is None:
        raise ValueError(f"{result.debate_id}: not a flow result (no ledger)")
    out = []
    for f in FEATURES:
        s = flow_verdict(led.model_copy(update={"dimension": f, "measure": f}), f).strengths
        out.append(s[pro] - s[con])
    return tuple(out)


def rows(folder: Path, data: Path | None = None) -> list[Row]:
    """The decisive, complete flow verdicts of a run folder with their gold (ties on the audience's side left
    out: they say nothing of which side should win)."""
    art = DebateArt(data)
    debates = {it.id: it for it in art.load()}
    records = [json.loads(line) for line in (folder / "items.jsonl").read_text(encoding="utf-8").splitlines()
               if line.strip()]
    # the whole-debate comparison of `direct` mode on the same items (a run of `--modes flow,direct`): a signal the
    # fit may weigh beside the flow's measures (pro is coded 0.0 in every adapter's sides)
    direct = {r["item"]: p for r in records if r.get("mode") == "direct" and r.get("status") == "complete"
              and r.get("repeat", 0) == 0 and (p := p_coded(r, "general", 0.0)) is not None}
    out = []
    for r in records:
        if r.get("status") != "complete" or not flow_record(r):
            continue
        base = r.get("base", r["item"])
        if base not in debates:
            raise ValueError(f"{r['item']}: its debate {base} is not in the DebateArt data")
        debate = art.debate(debates[base])
        pro, con = (next(d.name for d in debate.debaters if d.side is s) for s in (Side.PRO, Side.CON))
        if r.get("benchmark") == "contrast":
            pro_won = r["degraded"] == "con"
        else:
            gold = r.get("gold", {}).get("general")
            if gold not in (0.0, 1.0):
                continue
            pro_won = gold == 0.0
        result = JudgeResult.model_validate_json((folder / r["result_file"]).read_text(encoding="utf-8"))
        p = result.general.verdict.probabilities[pro] if result.general and result.general.verdict else 0.5
        out.append(Row(r["item"], base, str(r.get("benchmark")), strengths(result, pro, con), pro_won, float(p),
                       direct.get(r["item"])))
    return out



def _loss(w: np.ndarray, x: np.ndarray, y: np.ndarray, l2: float) -> tuple[float, np.ndarray]:
    """The penalised log loss and its gradient (given, so a fit costs a few evaluations, not one per weight)."""
    z = x @ w
    return float(np.sum(np.logaddexp(0.0, z) - y * z) + l2 * w @ w), x.T @ (_p(x, w) - y) + 2 * l2 * w


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> np.ndarray:
    return minimize(_loss, np.zeros(x.shape[1]), args=(x, y, l2), jac=True, method="L-BFGS-B").x


def _p(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(x @ w)))


def held_out(x: np.ndarray, y: np.ndarray, groups: np.ndarray, l2: float | None = None) -> np.ndarray:
    """Each row's P(pro wins) from a fit without its group; ``l2`` None: chosen inside each fit by the same
    leave-a-group-out on what the fit sees (nested)."""
    p = np.full(len(y), 0.5)
    for g in dict.fromkeys(groups):
        out = groups == g
        if out.all():
            continue
        lam = l2 if l2 is not None else choose(x[~out], y[~out], groups[~out])
        p[out] = _p(x[out], fit(x[~out], y[~out], lam))
    return p


def choose(x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> float:
    return min(GRID, key=lambda lam: log_loss(held_out(x, y, groups, lam), y))


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(np.mean(-(y * np.log(p) + (1 - y) * np.log(1 - p)))) if len(y) else float("nan")


def scores(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    return {"n": int(len(y)), "right": float(np.mean((p > 0.5) == (y == 1))) if len(y) else float("nan"),
            "log_loss": round(log_loss(p, y), 4), "brier": round(float(np.mean((p - y) ** 2)), 4) if len(y) else
            float("nan")}


def weigh(all_rows: list[Row]) -> dict[str, Any]:
    """The fit on every row, and per source the shipped verdict's scores beside the fitted one's held out."""
    if len(all_rows) < 4:
        raise ValueError(f"{len(all_rows)} verdicts with gold: too few to fit and hold out")
    x = np.array([r.d for r in all_rows])
    y = np.array([r.pro_won for r in all_rows], float)
    groups = np.array([r.base for r in all_rows])
    source = np.array([r.source for r in all_rows])
    shipped = np.array([r.shipped for r in all_rows])
    nested = held_out(x, y, groups)
    lam = choose(x, y, groups)
    out: dict[str, Any] = {"features": list(FEATURES), "l2": lam, "weights": [round(v, 4) for v in fit(x, y, lam)],
                           "sources": {}}
    jury = all(r.direct is not None for r in all_rows)
    if jury:  # the flow's measures and direct's comparison (its log-odds) weighed together, scored the same ways
        xj = np.column_stack([x, logit(np.array([r.direct for r in all_rows], float))])
        nested_jury = held_out(xj, y, groups)
        lam_jury = choose(xj, y, groups)
        out["jury"] = {"features": [*FEATURES, "direct"], "l2": lam_jury,
                       "weights": [round(v, 4) for v in fit(xj, y, lam_jury)]}
    for s in dict.fromkeys(source):
        mine = source == s
        entry = {"shipped": scores(shipped[mine], y[mine]), "leave_debate_out": scores(nested[mine], y[mine])}
        if (~mine).sum() >= 4:
            other = _p(x[mine], fit(x[~mine], y[~mine], choose(x[~mine], y[~mine], groups[~mine])))
            entry["fitted_on_other_source"] = scores(other, y[mine])
        if jury:
            entry["direct"] = scores(np.array([r.direct for r in all_rows])[mine], y[mine])
            entry["jury_leave_debate_out"] = scores(nested_jury[mine], y[mine])
            if (~mine).sum() >= 4:
                other = _p(xj[mine], fit(xj[~mine], y[~mine], choose(xj[~mine], y[~mine], groups[~mine])))
                entry["jury_fitted_on_other_source"] = scores(other, y[mine])
        out["sources"][s] = entry
    return out


def weigh_folders(folders: list[Path], data: Path | None = None) -> dict[str, Any]:
    """:func:`weigh` over the folders' rows, written into the first folder as ``weights.json``."""
    found = [r for f in folders for r in rows(f, data)]
    figures = weigh(found)
    (folders[0] / "weights.json").write_text(json.dumps(figures, indent=1), encoding="utf-8")
    return figures
