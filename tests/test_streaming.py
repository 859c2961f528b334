"""The judge as a LangGraph citizen where agent builders look first: ``astream_events`` (v2) in every mode, the
columns' own steps streamed as a subgraph's, and a run's result the same as ``ainvoke``'s."""

from __future__ import annotations

import pytest

from debatrix import JudgeSettings, MemorySettings
from debatrix.app.api import build_judge_graph
from debatrix.core.results import JudgeResult
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


@pytest.mark.parametrize("mode", ["debatrix", "flow"])
async def test_progress_goes_out_as_custom_stream_events_that_add_up_to_the_result(uniforms, mode):
    """An agent builder's own stream (``stream_mode="custom"``, with the columns' steps under ``subgraphs=True``)
    carries the progress the CLI and the page show: one event per finished step, its calls and tokens, which add up
    to the result's usage; each speech analysed in each dimension once."""
    settings = JudgeSettings(mode=mode, orders=1, memory=MemorySettings(embedding="hash"))
    graph = build_judge_graph(settings, ScriptedChatModel())
    chunks = [c async for c in graph.astream({"debate": uniforms}, stream_mode=["custom", "values"],
                                             subgraphs=True)]
    events = [data for _, kind, data in chunks if kind == "custom"]
    result = next(data["result"] for ns, kind, data in reversed(chunks) if kind == "values" and not ns)
    assert result.status.value == "complete" and events and all(e["debatrix"] == "progress" for e in events)
    assert sum(e["calls"] for e in events) == result.usage.llm_calls
    assert sum(e["prompt_tokens"] for e in events) == result.usage.prompt_tokens
    analysed = sorted((e["dimension"], e["index"]) for e in events if e["kind"] == "analysis")
    dims = ["flow"] if mode == "flow" else [d.name for d in result.dimensions]
    assert analysed == sorted((d, i) for d in dims for i in range(len(uniforms.speeches)))
    winners = {e["dimension"]: e["winner"] for e in events if e["kind"] == "winner"}
    assert winners.get("general", winners.get("panel")) == result.winner


async def test_the_embedded_judge_honours_a_runs_options_as_the_deployment_does(uniforms):
    """``build_judge_graph()`` built for the default mode, asked per run (``configurable``, or a ``context`` dict
    as LangGraph's ``context=`` passes it) for another mode, dimensions and orders: the run is judged so, with the
    graph's one model connection; an unknown mode is refused in the judge's words."""
    model = ScriptedChatModel()
    graph = build_judge_graph(JudgeSettings(memory=MemorySettings(embedding="hash")), model)
    plain = (await graph.ainvoke({"debate": uniforms}))["result"]
    chosen = (await graph.ainvoke({"debate": uniforms}, {"configurable": {"mode": "direct", "orders": 1,
                                                                           "thread_id": "ignored"}}))["result"]
    by_context = (await graph.ainvoke({"debate": uniforms}, context={"mode": "dimensional",
                                                                     "dimensions": "argument, source"}))["result"]
    assert plain.mode == "flow" and chosen.mode == "direct" and by_context.mode == "dimensional"
    assert chosen.settings["orders"] == 1 and plain.settings["orders"] == 2
    assert [d.name for d in by_context.dimensions] == ["argument", "source"]
    assert all(r.status.value == "complete" for r in (plain, chosen, by_context))
    assert len(model.calls) == sum(r.usage.llm_calls for r in (plain, chosen, by_context))
    with pytest.raises(Exception, match="unknown mode 'nonsense'"):
        await graph.ainvoke({"debate": uniforms}, {"configurable": {"mode": "nonsense"}})


# ------------------------------------------------------------------- the HTTP chat model streams its answers

from langchain_core.messages import HumanMessage, SystemMessage  # noqa: E402

from debatrix import LLMSettings  # noqa: E402
from debatrix.llm.http_chat import Endpoint, HTTPChatModel  # noqa: E402
from debatrix.testing import FakeOpenAIServer  # noqa: E402


def _model(server: FakeOpenAIServer) -> HTTPChatModel:
    return HTTPChatModel(endpoint=Endpoint(server.base_url, "sk-test", {"model": "m"}, 4))


@pytest.mark.parametrize("kind", ["text", "decision", "schema", "tool"])
async def test_a_streamed_answer_adds_up_to_the_answer_sent_whole(kind):
    """The chunks of ``astream`` (what LangGraph's ``messages`` mode shows) add up to the message ``ainvoke``
    returns: the text, the tool call's arguments sent in pieces, the log probabilities a decision reads, the
    usage and the finish reason."""
    messages = [SystemMessage(content="You judge debates."), HumanMessage(content="Does S1.1 argue? Answer yes or no.")]
    server: FakeOpenAIServer
    # the same answer to both requests (the fake numbers its comments by arrival)
    with FakeOpenAIServer(responder=lambda body, n: server.completion(body, 0)) as server:
        model = _model(server)
        bound = {"text": model.bind(max_tokens=200),
                 "decision": model.bind(max_tokens=1, logprobs=True, top_logprobs=5),
                 "schema": model.bind(response_format={"type": "json_schema", "json_schema": {
                     "name": "A", "schema": {"type": "object", "properties": {"note": {"type": "string"}},
                                             "required": ["note"]}}}),
                 "tool": model.bind_tools([{"type": "function", "function": {
                     "name": "Score", "parameters": {"type": "object", "properties": {"score": {"type": "integer"}},
                                                     "required": ["score"]}}}], tool_choice="Score")}[kind]
        whole = await bound.ainvoke(messages)
        chunks = [c async for c in bound.astream(messages)]
        model.endpoint.close()
    assert server.requests[-1]["stream"] is True and "stream" not in server.requests[-2]
    streamed = chunks[0]
    for c in chunks[1:]:
        streamed += c
    assert len(chunks) > 1
    assert streamed.content == whole.content and streamed.tool_calls == whole.tool_calls
    assert streamed.usage_metadata == whole.usage_metadata and streamed.usage_metadata["input_tokens"] > 0
    assert streamed.response_metadata.get("logprobs") == whole.response_metadata.get("logprobs")
    assert streamed.response_metadata["finish_reason"] == whole.response_metadata["finish_reason"]
    if kind == "decision":
        assert whole.response_metadata["logprobs"]["content"][0]["top_logprobs"]
    if kind == "text":
        assert len([c for c in chunks if c.content]) > 1  # written in pieces, not in one


async def test_langgraphs_messages_stream_shows_the_judges_tokens_and_the_result_is_unchanged(uniforms):
    """An agent streaming ``messages`` sees the judge's answers as they are written, on the HTTP transport; the
    judgment is the one the same server gives unstreamed (decisions read the same probabilities)."""
    with FakeOpenAIServer() as server:
        settings = JudgeSettings(mode="flow", memory=MemorySettings(embedding="hash"),
                                 llm=LLMSettings(base_url=server.base_url, model="m"))
        whole = (await build_judge_graph(settings).ainvoke({"debate": uniforms}))["result"]
        parts = [p async for p in build_judge_graph(settings).astream({"debate": uniforms}, stream_mode=["messages",
                                                                                                         "values"],
                                                                      subgraphs=True)]
        streamed_requests = [r for r in server.requests if r.get("stream")]
    tokens = [chunk for _, kind, (chunk, _meta) in ((ns, k, d) for ns, k, d in parts if k == "messages")
              for _ in [0] if chunk.content]
    result = next(d["result"] for ns, k, d in reversed(parts) if k == "values" and not ns)
    assert tokens and len(streamed_requests) == result.usage.llm_calls == whole.usage.llm_calls
    assert result.status.value == "complete" and result.flow == whole.flow and result.winner == whole.winner
