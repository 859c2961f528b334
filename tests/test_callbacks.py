"""The judge inside the LangChain/LangGraph ecosystem: every LLM call reaches LangChain callbacks on both transports
(through ``config`` or inherited from a parent graph), and a parent graph with a checkpointer can hold the judge's
state without serializer warnings."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, TypedDict

import pytest
from langchain_core.callbacks import AsyncCallbackHandler
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener
from langgraph.graph import END, START, StateGraph

from debatrix import JudgeSettings, LLMSettings, MemorySettings, checkpoint_serializer
from debatrix.app.api import ajudge_debate, build_judge_graph
from debatrix.core.results import JudgeResult, Status
from debatrix.testing import FakeOpenAIServer, Fault


class Counting(AsyncCallbackHandler):
    """Counts the chat-model runs a tracer would record, with their tags, and the chains by name."""

    def __init__(self) -> None:
        self.started: list[dict[str, Any]] = []
        self.ended = 0
        self.errors = 0
        self.chains: list[str] = []

    async def on_chat_model_start(self, serialized, messages, *, run_id, tags=None, metadata=None, **kw) -> None:
        self.started.append({"tags": tags or [], "metadata": metadata or {}})

    async def on_llm_end(self, response, **kw) -> None:
        self.ended += 1

    async def on_llm_error(self, error, **kw) -> None:
        self.errors += 1

    async def on_chain_start(self, serialized, inputs, *, name=None, **kw) -> None:
        self.chains.append(name or "")


def flaky(n: int):
    """A 500 on the first ``n`` requests, then normal answers."""
    seen = {"n": 0}

    def respond(body, i):
        if seen["n"] < n:
            seen["n"] += 1
            return Fault(500)
        return None

    return respond


def settings_for(server: FakeOpenAIServer, transport: str, mode: str = "debatrix") -> JudgeSettings:
    return JudgeSettings(mode=mode, llm=LLMSettings(base_url=server.base_url, model="fake-model", transport=transport,
                                                    max_retries=2, retry_max_wait=0.05),
                         memory=MemorySettings(embedding="hash"))


@pytest.mark.parametrize("transport", ["http", "langchain"])
async def test_callbacks_see_exactly_the_calls_the_result_reports(uniforms, transport):
    """Two 500s first: the handler sees every request sent (calls + retries), each answered one ends the run."""
    with FakeOpenAIServer(responder=flaky(2)) as server:
        handler = Counting()
        result = await ajudge_debate(uniforms, settings_for(server, transport),
                                     config={"callbacks": [handler], "tags": ["parent-agent"],
                                             "metadata": {"session": "s1"}})
        sent = len(server.requests)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    u = result.usage
    assert u.retries == 2 and u.llm_calls > 20
    assert len(handler.started) == sent == u.llm_calls + u.retries
    assert handler.ended == u.llm_calls and handler.errors == u.retries
    # each call says where in the judge it was made, under the caller's tags and metadata
    assert all("debatrix" in s["tags"] and "parent-agent" in s["tags"] for s in handler.started)
    assert all(s["metadata"].get("session") == "s1" and s["metadata"].get("debatrix_node") for s in handler.started)
    assert {s["metadata"]["debatrix_node"] for s in handler.started} >= {"analyze_speech", "judge_debate"}
    assert handler.chains[0] == "debatrix judge"


@contextmanager
def serde_events():
    """Every type a checkpoint load reported as unregistered or blocked (the log warns only once per process)."""
    events: list[dict] = []
    stop = register_serde_event_listener(events.append)
    try:
        yield events
    finally:
        stop()


class Parent(TypedDict, total=False):
    debate: Any
    verdict: str


async def test_a_parent_graph_with_a_checkpointer_traces_the_judge_without_warnings(uniforms):
    """An agent's node awaits the judge: the agent's callbacks see the judge's calls without passing any config, and
    its checkpointer stores the judge's result with no "unregistered type" warning."""
    with FakeOpenAIServer() as server:
        s = settings_for(server, "http", mode="direct")
        results: list[JudgeResult] = []

        async def judge(state: Parent) -> dict[str, Any]:
            result = await ajudge_debate(state["debate"], s)
            results.append(result)
            return {"verdict": result.general.verdict.winner}

        g = StateGraph(Parent)
        g.add_node("judge", judge)
        g.add_edge(START, "judge")
        g.add_edge("judge", END)
        agent = g.compile(checkpointer=InMemorySaver(serde=checkpoint_serializer()))
        handler = Counting()
        with serde_events() as events:
            out = await agent.ainvoke({"debate": uniforms}, {"configurable": {"thread_id": "t"},
                                                             "callbacks": [handler]})
            again = await agent.aget_state({"configurable": {"thread_id": "t"}})
    assert out["verdict"] in {"Maya", "Theo"} and again.values["debate"] == uniforms
    assert len(handler.started) == results[0].usage.llm_calls == len(server.requests)
    assert events == []


async def test_the_judge_graph_under_a_default_checkpointer_loads_its_state_without_warnings(uniforms):
    """``build_judge_graph(checkpointer=InMemorySaver())``: the judge's types are registered with the saver's
    serializer (a copy: the caller's saver keeps its own), so reading the state back reports nothing."""
    with FakeOpenAIServer() as server:
        saver = InMemorySaver()
        graph = build_judge_graph(settings_for(server, "http"), checkpointer=saver)
        config = {"configurable": {"thread_id": "j"}, "recursion_limit": 100}
        with serde_events() as events:
            out = await graph.ainvoke({"debate": uniforms}, config)
            state = await graph.aget_state(config)
    assert out["result"].status is Status.COMPLETE
    assert isinstance(state.values["result"], JudgeResult) and state.values["result"] == out["result"]
    assert events == []
    assert saver.serde is not None and getattr(saver.serde, "_allowed_msgpack_modules", None) is True
