"""How far a verdict's winner probability can be trusted, measured against human gold (PanelBench DebateArt), and
the map that makes it mean what it says (:mod:`debatrix.core.probabilities` applies it).

A verdict's winner probability ``p`` (the model's token probability, averaged over the orders) is compared with
whether the named winner is the audience's: the expected calibration error (ECE: per bin of ``p``, the gap
between the mean ``p`` and the share right, weighted by the bin's size) and the Brier score. Platt scaling fits
``sigmoid(a * logit(p) + b)`` by penalised maximum likelihood; the penalty pulls toward the identity map (a = 1,
b = 0), so a few dozen debates cannot make it extreme. Figures "after" calibration are cross-validated: each
verdict is mapped by a fit on the other folds, never on itself.

``debatrix bench calibrate FOLDER`` fits a results folder's verdicts per mode, prints the figures, draws
``reliability.png`` and writes ``calibration.json`` (the maps, in the format a judge profile keeps them in: its
``verdict_maps`` and ``place_priors``, :mod:`debatrix.core.profile`)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from debatrix.core.errors import echoed, printable

from .base import named, p_coded

BINS = 5  # equal-width bins of the winner probability over [0, 1]: few verdicts, so few bins
FOLDS = 5
PRIOR = 1.0  # weight of the pull toward the identity map, in units of one verdict's log loss


@dataclass(frozen=True)
class Verdicts:
    """Winner probabilities and whether each named winner was the gold one (ties on either side left out)."""

    p: np.ndarray
    right: np.ndarray
    items: tuple[str, ...] = ()

    def __len__(self) -> int:
        return int(self.p.size)


def verdicts(records: Iterable[dict[str, Any]], dimension: str = "general") -> Verdicts:
    """The decisive verdicts of complete benchmark records that carry a probability, in item order, read off the
    judge's verdicts in the gold's code: DebateArt's (pro 0, con 1; ties on either side left out) and the contrast
    suite's (the intact side, coded 1, should win)."""
    rows = []
    for r in records:
        said = named(r, dimension) if r.get("status") == "complete" else None
        if said not in (0.0, 1.0):
            continue
        gold = (r.get("gold") or {}).get(dimension)
        p_one = p_coded(r, dimension, 1.0)
        if p_one is None or gold not in (0.0, 1.0):
            continue
        right = said == gold
        try:  # float() of a long string would quote it whole
            p_win = float(p_one) if said == 1.0 else 1 - float(p_one)
        except (TypeError, ValueError):
            p_win = math.nan
        if not 0.0 <= p_win <= 1.0:  # NaN fails this too
            raise ValueError(f"item {echoed(r.get('item'))}: a winner probability of {echoed(p_one)} is not a "
                             "probability")
        rows.append((str(r.get("item", "")), p_win, right))
    rows.sort()
    return Verdicts(np.array([p for _, p, _ in rows], float), np.array([y for _, _, y in rows], bool),
                    tuple(i for i, _, _ in rows))


def pooled(parts: Iterable[Verdicts]) -> Verdicts:
    parts = list(parts)
    return Verdicts(np.concatenate([v.p for v in parts]) if parts else np.array([]),
                    np.concatenate([v.right for v in parts]) if parts else np.array([], bool),
                    tuple(i for v in parts for i in v.items))


def cross_source(sources: dict[str, Verdicts]) -> list[dict[str, Any]]:
    """How a map carries over: for each source, the map fitted on every other source (pooled) applied to it, its
    ECE and Brier beside the raw probability's (a map that only fits the gold it was fitted on makes these worse)."""
    out = []
    for name, v in sources.items():
        rest = pooled(u for other, u in sources.items() if other != name)
        if not len(v) or len(rest) < 2:
            continue
        a, b = platt(rest.p, rest.right)
        top = ceiling(rest)
        shown = np.clip(mapped(v.p, a, b), 1 - top, top)
        out.append({"tested_on": name, "fitted_on": [o for o in sources if o != name], "n": len(v),
                    "ece_raw": round(ece(v.p, v.right), 4), "ece_mapped": round(ece(shown, v.right), 4),
                    "brier_raw": round(brier(v.p, v.right), 4), "brier_mapped": round(brier(shown, v.right), 4)})
    return out


def logit(p: np.ndarray) -> np.ndarray:
    """The log-odds of probabilities, clipped away from 0 and 1."""
    q = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(q / (1 - q))


def platt(p: np.ndarray, right: np.ndarray, prior: float = PRIOR) -> tuple[float, float]:
    """(a, b) of ``sigmoid(a * logit(p) + b)`` minimising the log loss plus ``prior * ((a - 1)² + b²)``: Newton's
    method with step halving (the penalised loss is strictly convex; closed-form steps keep the fits that every
    bootstrap resample of a summary makes cheap). The map is fitted symmetric in the debaters: every verdict counts
    once as itself and once mirrored (the other debater's probability 1 - p, right where it was wrong), so b comes
    out 0 and an even call maps to an even call (the prior is doubled with the data)."""
    x, y = logit(p), right.astype(float)
    x, y, prior = np.concatenate([x, -x]), np.concatenate([y, 1 - y]), 2 * prior

    def loss(t: np.ndarray) -> float:
        z = t[0] * x + t[1]
        return float(np.sum(np.logaddexp(0, z) - y * z) + prior * ((t[0] - 1) ** 2 + t[1] ** 2))

    theta = np.array([1.0, 0.0])
    current = loss(theta)
    for _ in range(100):
        q = 1 / (1 + np.exp(-(theta[0] * x + theta[1])))
        g = np.array([(q - y) @ x + 2 * prior * (theta[0] - 1), (q - y).sum() + 2 * prior * theta[1]])
        w = q * (1 - q)
        h = np.array([[w @ (x * x) + 2 * prior, w @ x], [w @ x, w.sum() + 2 * prior]])
        step = np.linalg.solve(h, g)
        scale = 1.0
        while scale > 1e-6 and loss(theta - scale * step) > current:
            scale /= 2
        theta = theta - scale * step
        new = loss(theta)
        if current - new < 1e-12:
            break
        current = new
    return float(theta[0]), float(theta[1])


def mapped(p: np.ndarray, a: float, b: float) -> np.ndarray:
    """The map as shown (:class:`debatrix.core.probabilities.CalibrationMap`): symmetric in the debaters."""
    z = a * logit(p)
    return (1 / (1 + np.exp(-(z + b))) + 1 / (1 + np.exp(-(z - b)))) / 2


def ceiling(v: Verdicts) -> float:
    """The most a map fitted on ``v`` shows (:class:`debatrix.core.probabilities.CalibrationMap`): the share right
    among the verdicts at or above the median winner probability."""
    upper = v.right[v.p >= np.median(v.p)]
    return round(float(upper.mean()), 4) if len(upper) else 1.0


def cross_validated(v: Verdicts, folds: int = FOLDS) -> np.ndarray:
    """Each verdict's probability mapped (and held to the ceiling) by a fit on the other folds (items dealt to
    folds in turn, by id)."""
    out = np.empty_like(v.p)
    k = min(folds, len(v))
    fold = np.arange(len(v)) % max(k, 1)
    for f in range(k):
        held = fold == f
        rest = Verdicts(v.p[~held], v.right[~held])
        a, b = platt(rest.p, rest.right) if len(rest) else (1.0, 0.0)
        top = ceiling(rest)
        out[held] = np.clip(mapped(v.p[held], a, b), 1 - top, top)
    return out


def _bins(p: np.ndarray, right: np.ndarray, bins: int = BINS) -> list[tuple[float, float, int]]:
    """(mean p, share right, verdicts) of each non-empty equal-width bin of ``p`` over [0, 1]."""
    which = np.minimum((p * bins).astype(int), bins - 1)
    return [(float(p[which == k].mean()), float(right[which == k].mean()), int((which == k).sum()))
            for k in range(bins) if (which == k).any()]


def ece(p: Sequence[float] | np.ndarray, right: Sequence[bool] | np.ndarray, bins: int = BINS) -> float:
    """Expected calibration error: Σ_bins (n_bin / n) · |mean p − share right| over equal-width bins of p."""
    p, y = np.asarray(p, float), np.asarray(right, float)
    if p.size == 0:
        return math.nan
    return sum(abs(mp - sr) * n for mp, sr, n in _bins(p, y, bins)) / p.size


def brier(p: Sequence[float] | np.ndarray, right: Sequence[bool] | np.ndarray) -> float:
    p, y = np.asarray(p, float), np.asarray(right, float)
    return float(np.mean((p - y) ** 2)) if p.size else math.nan


def figures(v: Verdicts) -> dict[str, float]:
    """ECE and Brier of the raw winner probability and of the cross-validated calibrated one; the share right;
    and, for scale, the Brier score of always saying the share right (what a judge without information scores)."""
    if not len(v):
        return {}
    cv = cross_validated(v)
    base = float(v.right.mean())
    return {"n": len(v), "right": base, "mean_p": float(v.p.mean()),
            "ece_raw": ece(v.p, v.right), "ece_calibrated_cv": ece(cv, v.right),
            "brier_raw": brier(v.p, v.right), "brier_calibrated_cv": brier(cv, v.right),
            "brier_constant": brier(np.full(len(v), base), v.right)}


def reliability_plot(path: Path, modes: dict[str, Verdicts], bins: int = BINS) -> None:
    """Share right against mean winner probability per bin, raw and cross-validated, one panel per mode."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(modes), figsize=(5 * len(modes), 4.6), squeeze=False)
    for ax, (mode, v) in zip(axes[0], modes.items(), strict=True):
        ax.plot([0, 1], [0, 1], color="#999", lw=1, ls="--", label="perfectly calibrated")
        for label, p, colour in (("as the model says", v.p, "#c0392b"),
                                 ("calibrated (cross-validated)", cross_validated(v), "#2471a3")):
            pts = _bins(p, v.right.astype(float), bins)
            ax.plot([x for x, _, _ in pts], [y for _, y, _ in pts], marker="o", color=colour, label=label)
            for x, y, n in pts:
                ax.annotate(str(n), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=10, color=colour)
        ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="winner probability shown", ylabel="share of verdicts right",
               title=f"{printable(mode)}: {len(v)} verdicts")  # chart text reaches stderr in warnings
        ax.legend(loc="lower right", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def place_shares(result: dict[str, Any], dimension: str = "general") -> list[float] | None:
    """The share of a result's winner probability each speaking place got, averaged over the orders as the model
    gave them (before any place prior): what :class:`debatrix.core.probabilities.PlacePrior` averages. None where
    the verdict has no probabilities or the orders put everything on a tie."""
    part = result.get("general") if dimension == "general" else next(
        (d for d in result.get("dimensions") or [] if d.get("name") == dimension), None)
    verdict = (part or {}).get("verdict") or {}
    orders = [o.get("probabilities") for o in verdict.get("orders") or []]
    if not orders or any(p is None for p in orders):
        return None
    places = list(dict.fromkeys(s.get("speaker") for s in result.get("speeches") or []))  # by first speech
    mean = {n: sum(p.get(n, 0.0) for p in orders) / len(orders) for n in places}
    total = sum(mean.values())
    return [mean[n] / total for n in places] if total > 1e-9 else None


def _results(folder: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        path = folder / str(r.get("result_file") or "")
        if r.get("status") == "complete" and r.get("result_file") and path.is_file():
            out.append(json.loads(path.read_text(encoding="utf-8")))
    return out


def measured_place_shares(results: list[dict[str, Any]], dimension: str = "general") -> tuple[list[float], int] | None:
    """(the share of each speaking place, debates) over results whose orders read the debate in speaking order,
    of one number of debaters (the commonest); None without any. Two debaters: the first speaker's median share,
    so that divided by it half the debates lean to each speaker (the model's shares pile up near 0 and 1, and a
    mean is pulled about by them: on 30 DebateArt debates it left the first speaker named in 17, the median in
    15); more: the mean share of each place (batch calibration)."""
    shares = [s for s in (place_shares(r, dimension) for r in results) if s]
    if not shares:
        return None
    size = max({len(s) for s in shares}, key=lambda k: sum(len(s) == k for s in shares))
    kept = [s for s in shares if len(s) == size]
    if size == 2:
        first = float(np.median([s[0] for s in kept]))
        return [round(first, 4), round(1 - first, 4)], len(kept)
    return [round(sum(s[k] for s in kept) / len(kept), 4) for k in range(size)], len(kept)


def source_name(folder: Path, benchmark: str) -> str:
    return f"{benchmark} ({folder.name})"


def calibrate_folder(folder: Path, model: str, dimension: str = "general", also: Sequence[Path] = ()
                     ) -> dict[str, Any]:
    """Fit every mode of a results folder (DebateArt's audience verdicts, or the contrast suite's known answers)
    and of the folders in ``also``: {mode: {figures..., a, b}}; writes ``calibration.json`` (the maps and place
    priors, which :func:`into_profile` merges into a judge profile) and ``reliability.png`` into ``folder``, none
    where no mode could be fitted. A mode judged on more than one
    source is fitted on all of them pooled, and each source is also mapped by a fit on the others
    (``cross_source``). Where a DebateArt run read every debate once in speaking order (``order_layout`` shared),
    the mode's place prior is measured too (from the orders' probabilities as the model gave them, the audience's
    verdicts unread), and the map is fitted on the verdicts of that layout (with the prior the run applied, if
    any)."""
    from .runner import latest_records  # a retried item's newest record, damaged lines named

    by_mode: dict[str, dict[str, list[dict[str, Any]]]] = {}
    results_by_mode: dict[str, list[dict[str, Any]]] = {}
    for where in (folder, *also):
        for r in latest_records(where / "items.jsonl", None, None):
            if r.get("benchmark") in ("debateart", "contrast"):
                mode = r.get("mode", "")
                by_mode.setdefault(mode, {}).setdefault(source_name(where, r["benchmark"]), []).append(r)
                if r["benchmark"] == "debateart":
                    results_by_mode.setdefault(mode, []).extend(_results(where, [r]))
    out: dict[str, Any] = {}
    maps, priors, fitted = [], [], {}
    for mode, sources in sorted(by_mode.items()):
        results = results_by_mode.get(mode, [])
        layouts = {(r.get("settings") or {}).get("order_layout_used") or (r.get("settings") or {}).get(
            "order_layout") or "grouped" for r in results}
        layout = layouts.pop() if len(layouts) == 1 else "grouped"
        if layout == "shared" and (prior := measured_place_shares(results, dimension)):
            shares, n = prior
            out.setdefault(mode, {})["place_prior"] = shares
            priors.append({"model": model, "mode": mode, "shares": shares, "n": n,
                           "source": f"debatrix bench calibrate on the {n} DebateArt debates of {folder.name} "
                                     f"judged in {mode} mode, every order reading the debate once in speaking "
                                     f"order: the share of the {dimension} winner probability per speaking place "
                                     "(two: the first speaker's median share; audience verdicts not read)"})
        each = {name: verdicts(rows, dimension) for name, rows in sources.items()}
        v = pooled(each.values())
        if len(v) < 2 * FOLDS:
            out[mode] = {**out.get(mode, {}), "n": len(v),
                         "skipped": f"fewer than {2 * FOLDS} decisive verdicts with a probability"}
            continue
        a, b = platt(v.p, v.right)
        top = ceiling(v)
        carried = cross_source(each) if len(each) > 1 else []
        out[mode] = {**out.get(mode, {}), **figures(v), "a": round(a, 4), "b": round(b, 4), "layout": layout,
                     "ceiling": top, "sources": {name: len(u) for name, u in each.items()},
                     "cross_source": carried}
        fitted[mode] = v
        across = "".join(f"; on {c['tested_on']} fitted on the rest: ECE {c['ece_raw']:.3f} -> {c['ece_mapped']:.3f}, "
                         f"Brier {c['brier_raw']:.3f} -> {c['brier_mapped']:.3f}" for c in carried)
        maps.append({"model": model, "mode": mode, "a": round(a, 4), "b": round(b, 4), "n": len(v),
                     "layout": layout, "ceiling": top, **({"cross_source": carried} if carried else {}),
                     "source": f"debatrix bench calibrate on {len(v)} decisive verdicts ({dimension}) of "
                               f"{' and '.join(f'{k}: {len(u)}' for k, u in each.items())} (order layout "
                               f"{layout}): ECE {out[mode]['ece_raw']:.3f} -> {out[mode]['ece_calibrated_cv']:.3f} "
                               f"({FOLDS}-fold cross-validated){across}"})
    if not maps and not priors:  # nothing fitted: a file of no map would read as a calibration made
        return out
    doc = {"maps": maps, **({"place_priors": priors} if priors else {})}
    (folder / "calibration.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    if fitted:
        reliability_plot(folder / "reliability.png", fitted)
    return out


def into_profile(calibration: Path, profile: Path) -> tuple[int, int]:
    """Merge the maps and place priors of a ``calibration.json`` into the judge profile file ``profile`` (one
    `debatrix profile` wrote for the same model): each replaces the profile's own of its mode (and layout), the
    rest are kept. A run that reads the profile (``--profile FILE``) then shows calibrated probabilities, with no
    file of the package edited. Returns (maps, priors) merged; refuses (ConfigurationError) another model's."""
    from debatrix.core.errors import ConfigurationError
    from debatrix.core.files import write_atomic
    from debatrix.core.probabilities import CalibrationMap, PlacePrior
    from debatrix.core.profile import load, resolve_cached

    prof = load(profile)  # a readable profile of this schema, or a one-line refusal
    doc = json.loads(calibration.read_text(encoding="utf-8"))
    maps = [CalibrationMap.model_validate(m) for m in doc.get("maps", [])]
    priors = [PlacePrior.model_validate(x) for x in doc.get("place_priors", [])]
    others = sorted({x.model for x in (*maps, *priors)} - {prof.model.name})
    if others:
        raise ConfigurationError(f"{profile} is {prof.model.name}'s profile; these maps were fitted for "
                                 f"{', '.join(others)}: a map belongs to the model it was fitted on")
    new_maps = {(m.mode, m.layout) for m in maps}
    new_priors = {x.mode for x in priors}
    merged = prof.model_copy(update={
        "verdict_maps": (*(m for m in prof.verdict_maps if (m.mode, m.layout) not in new_maps), *maps),
        "place_priors": (*(x for x in prof.place_priors if x.mode not in new_priors), *priors)})
    write_atomic(profile, merged.model_dump_json(indent=1) + "\n")
    resolve_cached.cache_clear()  # a run in this process (a notebook, the page) reads the file as it is now
    return len(maps), len(priors)
