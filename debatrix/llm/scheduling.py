"""Prefix-affinity scheduling for servers that cache prompts.

A llama.cpp slot keeps the KV state of the prompt it last served (and of the answer it wrote); the next request
only pays for what differs from it. When several requests wait for the slot, the one that shares the longest
prefix with what the slot holds goes first: a score that continues the analysis just written, then the next
dimension's analysis of the same speech, and so on. Arrival order breaks ties, so nothing waits forever behind an
endless stream of better matches (every request is served once the requests that arrived after it are).

A freed slot is handed over after a short grace period (``GRACE`` seconds), not at once: the request that continues
the one just answered (its score) is created by the graph a few event-loop steps after the answer arrives, and it
should not lose the slot to a request that was merely waiting already. Against calls that take seconds on the
model, the grace costs nothing measurable."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

GRACE = 0.02


def shared_prefix(a: str, b: str) -> int:
    """Length of the common prefix of two strings (binary search on slice equality: C-speed comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class AffinityScheduler:
    """At most ``slots`` requests at once; a freed slot goes to the waiting request whose prompt shares the most
    with the last prompt (and answer) served."""

    def __init__(self, slots: int, grace: float = GRACE):
        self.free = slots
        self.grace = grace
        self.last = ""
        self._handing = 0  # slots freed and about to be handed over
        self._waiting: dict[int, tuple[str, asyncio.Future[None]]] = {}
        self._order = itertools.count()

    @asynccontextmanager
    async def slot(self, prompt: str) -> AsyncIterator[dict[str, str]]:
        """``async with scheduler.slot(text) as served: ...; served["answer"] = answer_text``"""
        if self.free > 0 and not self._waiting and not self._handing:
            self.free -= 1
        else:
            key = next(self._order)
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiting[key] = (prompt, future)
            try:
                await future
            except asyncio.CancelledError:
                if self._waiting.pop(key, None) is None and future.done() and not future.cancelled():
                    self._release()  # the slot had been handed over: pass it on
                raise
        served = {"answer": ""}
        try:
            yield served
        finally:
            self.last = prompt + served["answer"]
            self._release()

    def _release(self) -> None:
        self._handing += 1
        asyncio.get_running_loop().call_later(self.grace, self._hand_over)

    def _hand_over(self) -> None:
        self._handing -= 1
        if not self._waiting:
            self.free += 1
            return
        key = max(self._waiting, key=lambda k: (shared_prefix(self._waiting[k][0], self.last), -k))
        _, future = self._waiting.pop(key)
        future.set_result(None)
