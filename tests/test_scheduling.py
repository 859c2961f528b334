"""Prefix-affinity scheduling (debatrix.llm.scheduling): a freed slot goes to the waiting request that shares most with
what the server just served; arrival order breaks ties; a cancelled waiter never loses the slot."""

from __future__ import annotations

import asyncio

import pytest

from debatrix.app.api import ajudge_debate
from debatrix.core.results import Status
from debatrix.llm.scheduling import AffinityScheduler, shared_prefix
from debatrix.testing import ScriptedChatModel

from .conftest import settings


def test_shared_prefix():
    assert shared_prefix("abcdef", "abcxyz") == 3
    assert shared_prefix("", "abc") == 0 and shared_prefix("abc", "abc") == 3 and shared_prefix("ab", "abc") == 2


async def test_best_match_goes_first_then_arrival_order():
    sched = AffinityScheduler(1)
    order: list[str] = []

    async def request(prompt: str, answer: str = "") -> None:
        async with sched.slot(prompt) as served:
            order.append(prompt)
            await asyncio.sleep(0.01)
            served["answer"] = answer

    first = asyncio.create_task(request("speech 1 | argument", " -> analysis A1"))
    await asyncio.sleep(0)
    waiting = [asyncio.create_task(request(p)) for p in
               ("speech 2 | argument", "other", "speech 1 | language", "speech 1 | argument -> analysis A1 | score")]
    await asyncio.gather(first, *waiting)
    # the score continues the conversation just served; then the other dimension of the same speech; then
    # arrival order among equals
    assert order == ["speech 1 | argument", "speech 1 | argument -> analysis A1 | score", "speech 1 | language",
                     "speech 2 | argument", "other"]
    await asyncio.sleep(sched.grace * 3)
    assert sched.free == 1


async def test_cancelled_waiter_does_not_keep_the_slot():
    sched = AffinityScheduler(1)
    release = asyncio.Event()

    async def holder() -> None:
        async with sched.slot("a"):
            await release.wait()

    async def waiter(prompt: str) -> str:
        async with sched.slot(prompt):
            return prompt

    h = asyncio.create_task(holder())
    await asyncio.sleep(0)
    doomed, other = asyncio.create_task(waiter("a1")), asyncio.create_task(waiter("b"))
    await asyncio.sleep(0)
    doomed.cancel()
    release.set()
    assert await other == "b"
    await h
    with pytest.raises(asyncio.CancelledError):
        await doomed
    await asyncio.sleep(sched.grace * 3)
    assert sched.free == 1


async def test_one_slot_serves_each_score_right_after_its_analysis(uniforms):
    """With one slot and a prompt cache (the local backend), the judge sends each speech's score right after the
    analysis it continues, and the dimensions' analyses of a speech one after another."""
    model = ScriptedChatModel(script={"panel_decide": {"winner": "Maya"}})
    s = settings("debatrix", prompt_cache=True, max_concurrency=1, score_in_analysis=False)
    result = await ajudge_debate(uniforms, s, model)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    nodes = [(c.node, c.dimension, c.index) for c in model.calls]
    for k, (node, dim, index) in enumerate(nodes):
        if node == "analyze_speech" and index > 0:  # (the first speech's score waits for the memory to open)
            assert nodes[k + 1] == ("score_speech", dim, index)
    analyses = [(d, i) for n, d, i in nodes if n == "analyze_speech"]
    assert [i for _, i in analyses] == sorted(i for _, i in analyses)  # speech by speech across dimensions
