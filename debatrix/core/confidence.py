"""What a verdict's confidence is shown as. A winner probability read from a model's tokens is how sure the model
sounded, not how often such a verdict is right: the default local model printed "97%" for verdicts that were no
better than chance. So a percentage is shown only where a calibration map fitted against human verdicts exists for
the model and mode (Platt scaling on the logit of the winner probability); near an even call it says "too close to
call"; without a map it says the figure is uncalibrated; without probabilities (answers only, the orders' votes)
it shows none."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

from debatrix.core.models import Frozen

#: a calibrated winner probability below 0.5 + CLOSE is "too close to call" (two-way: within 0.1 of even)
CLOSE = 0.10
UNCALIBRATED = "uncalibrated"
TOO_CLOSE = "too close to call"


class CalibrationMap(Frozen):
    """p -> sigmoid(a · logit(p) + b), fitted on ``n`` verdicts of ``model`` in ``mode`` against human gold."""

    model: str
    mode: str
    a: float
    b: float
    n: int
    # how the verdicts it was fitted on read the debate (JudgeSettings.order_layout, resolved): the probabilities of
    # one layout are not those of another
    layout: str = "grouped"
    # the most it ever shows: the share right among the more confident half of the verdicts it was fitted on. A fit
    # on a few dozen verdicts follows the model's own certainty at the extremes (a raw 100% maps to about 100%),
    # which no sample that size can vouch for: the default local model, right on 58% of them, would print "100%"
    ceiling: float = 1.0
    source: str = ""  # the command and data it was fitted with
    # per source of gold, the map fitted on the other sources applied to it: ECE and Brier raw and mapped
    cross_source: tuple[dict[str, Any], ...] = ()

    def __call__(self, p: float) -> float:
        """The map made symmetric in the debaters: q(1 - p) = 1 - q(p), so an even call stays even and a named
        winner (more probable than not) is never shown as less likely than not. A Platt fit on winners' probabilities
        alone has an intercept ``b`` that is no property of either side (the default local model's read-once map
        showed a raw 0.52 as 39%); the mean of the map and its mirror drops it. Maps fitted since are symmetric
        (b = 0), which this leaves as they are. Held within [1 - ceiling, ceiling]."""
        p = min(max(p, 1e-6), 1 - 1e-6)
        z = self.a * math.log(p / (1 - p))
        q = (1 / (1 + math.exp(-(z + self.b))) + 1 / (1 + math.exp(-(z - self.b)))) / 2  # 1 - σ(-z + b) = σ(z - b)
        return min(max(q, 1 - self.ceiling), self.ceiling)


class PlacePrior(Frozen):
    """The share of the winner probability ``model`` gives each speaking place (the first speaker, the second, ...)
    in ``mode`` when every order reads the debate once, in speaking order (``order_layout="shared"``), measured on
    ``n`` debates without looking at who won (batch calibration, Zhou et al., ICLR 2024; for two debaters the
    first speaker's median share, :func:`debatrix.benchmarks.calibration.measured_place_shares`). Reading the debate in
    every order grouped by debater cancels a lean toward whoever comes first, at the price of reading it once per
    order; read once, the lean stays in every answer, and dividing the probabilities by this prior takes it out:
    with two debaters, a debate is called for the first speaker only where the model gave them more than the
    prior's share."""

    model: str
    mode: str
    shares: tuple[float, ...]
    n: int
    source: str = ""

    def __call__(self, probabilities: dict[str, float], places: Sequence[str]) -> dict[str, float]:
        """``probabilities`` (debaters and maybe "tie") with each debater's divided by its place's share, the
        debaters' total kept (a tie's probability is not a place's). ``places``: the debaters in speaking order.
        Unchanged where the prior is not for this many debaters."""
        if len(places) != len(self.shares) or not all(n in probabilities for n in places):
            return dict(probabilities)
        total = sum(probabilities[n] for n in places)
        raw = {n: probabilities[n] / max(share, 1e-6) for n, share in zip(places, self.shares)}
        scale = total / sum(raw.values()) if sum(raw.values()) > 0 else 0.0
        return {**probabilities, **{n: v * scale for n, v in raw.items()}}


@lru_cache(maxsize=1)
def _shipped() -> dict[str, Any]:
    """``debatrix/llm/calibration.json``: the maps and place priors shipped with the package."""
    return json.loads(resources.files("debatrix.llm").joinpath("calibration.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def maps() -> dict[tuple[str, str, str], CalibrationMap]:
    """The fitted maps shipped with the package, by (model, mode, layout)."""
    out = {}
    for entry in _shipped().get("maps", []):
        m = CalibrationMap.model_validate(entry)
        out[(m.model, m.mode, m.layout)] = m
    return out


@lru_cache(maxsize=1)
def place_priors() -> dict[tuple[str, str], PlacePrior]:
    """The measured place priors shipped with the package, by (model, mode)."""
    out = {}
    for entry in _shipped().get("place_priors", []):
        prior = PlacePrior.model_validate(entry)
        out[(prior.model, prior.mode)] = prior
    return out


def calibration_for(model: str | None, mode: str, layout: str = "grouped") -> CalibrationMap | None:
    return maps().get((model or "", mode, layout))


def place_prior_for(model: str | None, mode: str) -> PlacePrior | None:
    return place_priors().get((model or "", mode))


def resolved_layout(layout: str, model: str | None, mode: str, places: int) -> str:
    """The order layout a run of a debate between ``places`` debaters (or teams) uses: ``auto`` is ``shared`` where
    a place prior was measured for the model, the mode and that many places (one reading, the prior taking out
    the lean toward a place), else ``grouped`` (every order reads the material its own way, which cancels the lean
    without a prior)."""
    if layout != "auto":
        return layout
    prior = place_prior_for(model, mode)
    return "shared" if prior is not None and len(prior.shares) == places else "grouped"


def shown(probability: float | None, method: str, cmap: CalibrationMap | None) -> tuple[float | None, str]:
    """(the calibrated winner probability, the text shown beside the winner): "72%", "too close to call",
    "uncalibrated", or "" where the verdict has no probability (answers only: a vote share is no probability)."""
    if probability is None or method != "logprobs":
        return None, ""
    if cmap is None:
        return None, UNCALIBRATED
    q = round(cmap(probability), 4)
    return q, TOO_CLOSE if q < 0.5 + CLOSE else f"{q:.0%}"
