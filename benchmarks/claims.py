"""Claim matching (IBM Debater Recorded Debating Dataset V4 + GPR-KB-55): given a speech and a claim, is the claim
made Explicitly, Implicitly, or not at all (Negative)? 3,246 speech-claim pairs over 200 speeches.

Two matchers: ``llm`` (one short call per pair; the answer letter gives the label and the probability of A or B,
from the answer token's log probabilities, gives the "mentioned" score for ROC AUC) and ``embedding`` (offline
MiniLM: the highest cosine similarity between the claim and any sentence of the speech; fixed thresholds give the
label). Metrics: ROC AUC for mentioned vs not, accuracy and per-class F1 on the three labels.
"""

from __future__ import annotations

import csv
import hashlib
import math
import re
import time
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from debatrix.core import prompting as P
from debatrix.context import JudgeContext
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
from .metrics import accuracy, f1_per_class, roc_auc


class MatchClaimVars(P.TemplateVars):
    motion: str
    speech: str
    fence: str
    claim: str


TEMPLATES.add("match_claim.j2", MatchClaimVars)

PAIRS, SPEECHES = 3246, 200
LABELS = ("Explicit", "Implicit", "Negative")
LETTERS = {"A": "Explicit", "B": "Implicit", "C": "Negative"}
MATCHERS = ("llm", "embedding")
# embedding matcher: max sentence similarity at or above EXPLICIT_AT -> Explicit, at or above IMPLICIT_AT ->
# Implicit. Fixed in advance (not fitted on the gold), so the baseline's accuracy is honest.
EXPLICIT_AT, IMPLICIT_AT = 0.65, 0.45
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class ClaimItem(Item):
    speech_id: str = ""
    motion: str = ""
    claim: str = ""
    label: str = ""


def _read_csv(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        raise BenchmarkDataError(f"{path}: not found (the claim matching data set, see its SOURCE.md)")
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@benchmark("claim matching: Explicit / Implicit / Negative (ROC AUC, F1)", variants=MATCHERS)
class ClaimMatching(Benchmark):
    name = "claims"
    modes_matter = False
    headline = ("roc_auc", "accuracy", "f1_Explicit", "f1_Implicit", "f1_Negative")

    def __init__(self, root: str | Path | None = None, matcher: str = "llm"):
        if matcher not in MATCHERS:
            raise ValueError(f"unknown matcher {matcher!r}: use one of {', '.join(MATCHERS)}")
        self.root = Path(root) if root else data_root() / "ibm_rdd_v4_gprkb55"
        self.matcher = matcher
        self.description = (f"Claim matching (IBM Debater RDD V4, GPR-KB-55), matcher {matcher}: 3,246 speech-claim "
                            "pairs, Explicit / Implicit / Negative")
        self._speeches: dict[str, str] | None = None
        self._items: list[ClaimItem] | None = None

    def speeches(self) -> dict[str, str]:
        if self._speeches is None:
            rows = _read_csv(self.root / "speech-transcripts.csv")
            self._speeches = {r["speech-id"]: r["speech-text"] for r in rows}
            check_count("claims speeches", len(self._speeches), SPEECHES)
        return self._speeches

    def load(self) -> list[ClaimItem]:  # type: ignore[override]
        """Pairs in speech order, so that consecutive calls share the speech as a cached prompt prefix."""
        if self._items is None:
            speeches = self.speeches()
            items = []
            for r in _read_csv(self.root / "GP-claims-mentioned-in-speeches.csv"):
                if r["speech-id"] not in speeches:
                    raise BenchmarkDataError(f"claim pair names unknown speech {r['speech-id']!r}")
                if r["label"] not in LABELS:
                    raise BenchmarkDataError(f"unknown label {r['label']!r} for {r['speech-id']}")
                items.append(ClaimItem(id=f"{r['speech-id']}::{r['GPR-KB-id']}", speech_id=r["speech-id"],
                                       motion=r["motion-text"], claim=r["GP-claim-text-for-motion"],
                                       label=r["label"]))
            check_count(self.name, len(items), PAIRS)
            self._items = sorted(items, key=lambda it: (it.speech_id, it.id))
        return self._items

    def gold_record(self, item: ClaimItem) -> dict[str, Any]:  # type: ignore[override]
        return {"gold": item.label, "matcher": self.matcher}

    async def run_item(self, item: ClaimItem, settings: JudgeSettings,  # type: ignore[override]
                       context: JudgeContext) -> dict[str, Any]:
        started = time.perf_counter()
        if self.matcher == "embedding":
            score = await _max_similarity(self.speeches()[item.speech_id], item.claim)
            label = "Explicit" if score >= EXPLICIT_AT else "Implicit" if score >= IMPLICIT_AT else "Negative"
            return {"status": "complete", "reason": None, "pred": {"label": label, "score": round(score, 5)},
                    "usage": {"llm_calls": 0, "seconds": round(time.perf_counter() - started, 3)}}
        text = self.speeches()[item.speech_id]
        fence = "SPEECH-DATA-" + hashlib.sha256(text.encode()).hexdigest()[:12]
        messages = [SystemMessage(content=P.render("system.j2", P.SystemVars(fence=fence))),
                    HumanMessage(content=P.render("match_claim.j2", MatchClaimVars(
                        motion=item.motion, speech=P.sanitize(text, fence), fence=fence, claim=item.claim), TEMPLATES))]
        answer, logprobs, record = await context.gateway.text_with_logprobs(messages, node="match_claim",
                                                                            max_tokens=4)
        letter = next((c for c in answer.upper() if c in LETTERS), None)
        score = mentioned_probability(logprobs)
        if score is None and letter is not None:
            score = 0.0 if letter == "C" else 1.0  # no log probabilities: the answer itself
        usage = calls_usage([record], started)
        if letter is None:
            return {"status": "complete", "reason": None, "pred": {"label": None, "score": score,
                                                                   "answer": answer[:50]}, "usage": usage}
        return {"status": "complete", "reason": None, "pred": {"label": LETTERS[letter], "score": score},
                "usage": usage}

    def metrics(self, records: list[dict[str, Any]]) -> list[MetricRow]:
        recs = [r for r in records if r["status"] == "complete"]
        rows = [MetricRow("parse_failures", "all", sum(r["pred"].get("label") is None for r in recs), len(recs))]
        scored = [r for r in recs if r["pred"].get("score") is not None]
        if scored:
            rows.append(MetricRow("roc_auc", "all", roc_auc([r["pred"]["score"] for r in scored],
                                                            [r["gold"] != "Negative" for r in scored]), len(scored)))
        if recs:
            pred = [r["pred"].get("label") or "failed" for r in recs]
            gold = [r["gold"] for r in recs]
            rows.append(MetricRow("accuracy", "all", accuracy(pred, gold), len(recs)))
            for label, f1 in f1_per_class(pred, gold, LABELS).items():
                rows.append(MetricRow(f"f1_{label}", "all", f1, len(recs)))
        return rows

    def baselines(self, items: list[ClaimItem]) -> list[MetricRow]:  # type: ignore[override]
        gold = [it.label for it in items]
        rows = []
        for label in LABELS:
            rows.append(MetricRow("accuracy", "all", accuracy([label] * len(gold), gold), len(gold),
                                  baseline=f"always_{label}"))
        rows.append(MetricRow("roc_auc", "all", 0.5, len(gold), baseline="constant score"))
        counts = Counter(gold)
        rows.append(MetricRow("accuracy", "all", sum((c / len(gold)) ** 2 for c in counts.values()), len(gold),
                              baseline="random (gold label frequencies)"))
        return rows


def mentioned_probability(logprobs: list[dict[str, Any]]) -> float | None:
    """P(A) + P(B), renormalised over A/B/C, at the first token that is one of the letters."""
    for tok in logprobs:
        if tok.get("token", "").strip().upper() in LETTERS:
            probs: dict[str, float] = {}
            for c in tok.get("top_logprobs") or [tok]:
                t = c.get("token", "").strip().upper()
                if t in LETTERS and c.get("logprob") is not None:
                    probs[t] = probs.get(t, 0.0) + math.exp(c["logprob"])
            total = sum(probs.values())
            return (probs.get("A", 0.0) + probs.get("B", 0.0)) / total if total else None
    return None


@lru_cache(maxsize=1)
def _embedder() -> Any:
    from debatrix.memory.embeddings import MiniLMEmbedding

    return MiniLMEmbedding()


@lru_cache(maxsize=256)
def _sentence_vectors(text: str) -> Any:
    import numpy as np

    sentences = [s for s in _SENTENCE.split(text) if len(s.split()) >= 3] or [text]
    v = np.asarray(_embedder()(sentences), dtype=float)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


async def _max_similarity(speech: str, claim: str) -> float:
    import asyncio

    import numpy as np

    def compute() -> float:
        s = _sentence_vectors(speech)
        c = np.asarray(_embedder()([claim])[0], dtype=float)
        return float((s @ (c / np.linalg.norm(c))).max())

    return await asyncio.to_thread(compute)
