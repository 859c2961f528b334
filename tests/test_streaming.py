"""The judge as a LangGraph citizen where agent builders look first: ``astream_events`` (v2) in every mode, the
columns' own steps streamed as a subgraph's, and a run's result the same as ``ainvoke``'s."""

from __future__ import annotations

import pytest

from debatrix import JudgeSettings, MemorySettings
from debatrix.app.api import build_judge_graph
from debatrix.core.models import JudgeResult
from debatrix.graphs import MODES
from debatrix.testing import ScriptedChatModel

DEBATE_MODES = [m for m in MODES if m != "speech"]


@pytest.mark.parametrize("mode", DEBATE_MODES)
async def test_astream_events_v2_runs_every_mode_to_the_same_result_as_ainvoke(uniforms, mode):
    """Several dimension columns finish in one step in the multi-column modes: added to the judge graph as it is,
    a column subgraph handed its whole state (``debate`` included) to its parent under ``astream_events``, and two
    columns' ``debate`` in one step raised InvalidUpdateError."""
    settings = JudgeSettings(mode=mode, orders=1, memory=MemorySettings(embedding="hash"))
    model = ScriptedChatModel()
    graph = build_judge_graph(settings, model)
    events = [e async for e in graph.astream_events({"debate": uniforms}, version="v2")]
    streamed = model.calls[:]
    invoked = await build_judge_graph(settings, ScriptedChatModel()).ainvoke({"debate": uniforms})

    end = next(e for e in reversed(events) if e["event"] == "on_chain_end" and not e["parent_ids"])
    result = end["data"]["output"]["result"]
    assert isinstance(result, JudgeResult) and result.status.value == "complete", result.incomplete_reason
    assert result.mode == mode and result.winner == invoked["result"].winner
    # every model call the result counts is an event a tracer sees, inside the run
    chat = [e for e in events if e["event"] == "on_chat_model_start"]
    assert len(chat) == len(streamed) == result.usage.llm_calls > 0
    assert all(e["parent_ids"] and e["parent_ids"][0] == end["run_id"] for e in chat)
    names = {e["name"] for e in events if e["event"] == "on_chain_start"}
    columns = {"analyze_speech", "judge_debate"} & names
    assert ("flow_speech" in names) if mode == "flow" else columns, names
