"""What a verdict's confidence is shown as. A winner probability read from a model's tokens is how sure the model
sounded, not how often such a verdict is right: the default local model printed "97%" for verdicts that were no
better than chance. So a percentage is shown only where a calibration map fitted against human verdicts exists for
the model and mode (Platt scaling on the logit of the winner probability); near an even call it says "too close to
call"; without a map it says the figure is uncalibrated; without probabilities (answers only, the orders' votes)
it shows none."""

from __future__ import annotations

import json
import math
from functools import lru_cache
from importlib import resources

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
    source: str = ""  # the command and data it was fitted with

    def __call__(self, p: float) -> float:
        p = min(max(p, 1e-6), 1 - 1e-6)
        z = self.a * math.log(p / (1 - p)) + self.b
        return 1 / (1 + math.exp(-z))


@lru_cache(maxsize=1)
def maps() -> dict[tuple[str, str], CalibrationMap]:
    """The fitted maps shipped with the package (``debatrix/llm/calibration.json``), by (model, mode)."""
    text = resources.files("debatrix.llm").joinpath("calibration.json").read_text(encoding="utf-8")
    out = {}
    for entry in json.loads(text).get("maps", []):
        m = CalibrationMap.model_validate(entry)
        out[(m.model, m.mode)] = m
    return out


def calibration_for(model: str | None, mode: str) -> CalibrationMap | None:
    return maps().get((model or "", mode))


def shown(probability: float | None, method: str, cmap: CalibrationMap | None) -> tuple[float | None, str]:
    """(the calibrated winner probability, the text shown beside the winner): "72%", "too close to call",
    "uncalibrated", or "" where the verdict has no probability (answers only: a vote share is no probability)."""
    if probability is None or method != "logprobs":
        return None, ""
    if cmap is None:
        return None, UNCALIBRATED
    q = round(cmap(probability), 4)
    return q, TOO_CLOSE if q < 0.5 + CLOSE else f"{q:.0%}"
