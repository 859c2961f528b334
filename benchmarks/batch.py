"""Debate files judged as a batch (``debatrix judge FILES... --out-dir DIR``): the benchmark runner's folder,
resumption and Ray tasks, with no gold labels to score against."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from debatrix.core.loader import load_debate
from debatrix.core.models import Debate

from .base import Benchmark, Item, MetricRow


class DebateFiles(Benchmark):
    """``paths`` as items, each keyed by its file's content: ``a.yaml`` → ``a-<12 hex of the sha256 of its bytes>``
    (the name is there to be read). A rerun into the same folder finds a file judged before only if it is the same
    file: ``week2/final.yaml`` is not taken for ``week1/final.yaml``, and an edited file is judged again. The same
    file given twice is one item."""

    name = "judge"
    description = "debate files judged as a batch (no gold labels)"
    headline = ()

    def __init__(self, paths: Sequence[Path]):
        self.paths = [Path(p) for p in paths]
        self._debates: dict[str, Debate] = {}
        self._items: list[Item] | None = None

    def load(self) -> list[Item]:
        if self._items is None:  # each file read and hashed once (the runner and the table both ask)
            items: dict[str, Item] = {}
            for path in self.paths:
                key = f"{path.stem}-{hashlib.sha256(path.read_bytes()).hexdigest()[:12]}"
                items.setdefault(key, Item(id=key, path=path))
            self._items = list(items.values())
        return list(self._items)

    def subset(self, items: list[Item], limit: int | None, seed: int = 0) -> list[Item]:
        return items[:limit] if limit else items  # the files given, in their order

    def debate(self, item: Item) -> Debate:
        if item.id not in self._debates:
            self._debates[item.id] = load_debate(item.path)
        return self._debates[item.id]

    def size(self, item: Item) -> int:
        return sum(len(s.content) for s in self.debate(item).speeches)

    def gold_record(self, item: Item) -> dict[str, Any]:
        return {"file": str(item.path)}

    def metrics(self, records: list[dict[str, Any]]) -> list[MetricRow]:
        return []

    def baselines(self, items: list[Item]) -> list[MetricRow]:
        return []
