"""The compiled judge graph as a node inside another LangGraph graph (examples/embed_in_agent.py)."""

from __future__ import annotations

import importlib.util
import sys

from debatrix import build_judge_graph
from debatrix.testing import ScriptedChatModel

from .conftest import EXAMPLES, settings


def load_example():
    spec = importlib.util.spec_from_file_location("embed_in_agent", EXAMPLES / "embed_in_agent.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # so LangGraph can resolve the state's type hints
    spec.loader.exec_module(module)
    return module


async def test_judge_graph_as_a_node_of_a_parent_agent():
    example = load_example()
    model = ScriptedChatModel(script={
        "decide_debate": {"Maya": 5, "Theo": 8, "winner": "Theo"},
        "panel_decide": {"winner": "Theo"},
    })
    judge = build_judge_graph(settings("debatrix"), model)
    agent = example.build_coach(judge)
    state = await agent.ainvoke({"path": str(EXAMPLES / "school_uniforms.yaml")}, config={"recursion_limit": 100})
    assert state["result"].status == "complete"
    first = state["feedback"].splitlines()[0]
    assert first == f"Verdict: {state['result'].general.verdict.called}." and "Theo" in first
    assert [ln.split(" (")[0] for ln in state["feedback"].splitlines()[1:]] == [
        "Maya on argument", "Maya on source", "Maya on language"]
    assert len(model.calls) == 28  # 12 analyses (scored in them), 8 judgments and decisions, 4 panel calls


async def test_the_judge_node_reads_and_writes_the_parents_own_keys(uniforms):
    """A parent that keeps the debate under ``match`` and wants the verdict under ``ruling``: the judge node maps
    them, the parent's other keys untouched; a state without the named key is a one-line configuration error."""
    from typing import TypedDict

    import pytest
    from langgraph.graph import END, START, StateGraph

    from debatrix import ConfigurationError, JudgeResult

    class Parent(TypedDict, total=False):
        match: object
        ruling: object
        note: str

    model = ScriptedChatModel(script={"decide_debate": {"Maya": 5, "Theo": 8, "winner": "Theo"},
                                      "panel_decide": {"winner": "Theo"}})
    node = build_judge_graph(settings("debatrix"), model, debate_key="match", result_key="ruling")
    g = StateGraph(Parent)
    g.add_node("judge", node)
    g.add_edge(START, "judge")
    g.add_edge("judge", END)
    state = await g.compile().ainvoke({"match": uniforms, "note": "kept"}, config={"recursion_limit": 100})
    assert isinstance(state["ruling"], JudgeResult) and state["ruling"].status == "complete"
    assert state["ruling"].general.verdict.winner == "Theo" and state["note"] == "kept" and "result" not in state
    with pytest.raises(ConfigurationError, match="'match' key"):
        await node({"debate": uniforms}, {})


async def test_the_judges_progress_reaches_a_custom_stream_once_with_or_without_subgraphs(uniforms):
    """`stream_mode="custom"` alone used to yield nothing (LangGraph passes a subgraph's events only under
    ``subgraphs=True``): the judge graph streamed itself, and the node form in a parent agent, now yield every
    step's progress event without it, and exactly the same events with it (none twice). The subgraph form in a
    parent follows LangGraph's rule: its events under ``subgraphs=True``."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    from debatrix import build_judge_node

    class Parent(TypedDict, total=False):
        debate: object
        result: object

    def model():
        return ScriptedChatModel(script={"decide_debate": {"Maya": 5, "Theo": 8, "winner": "Theo"},
                                         "panel_decide": {"winner": "Theo"}})

    def parent(node):
        g = StateGraph(Parent)
        g.add_node("judge", node)
        g.add_edge(START, "judge")
        g.add_edge("judge", END)
        return g.compile()

    def steps(chunks):
        found = [c[-1] if isinstance(c, tuple) else c for c in chunks]
        assert all(isinstance(c, dict) and c.get("debatrix") == "progress" for c in found), found[:3]
        return sorted((c["node"], str(c.get("dimension")), str(c.get("index"))) for c in found)

    async def streamed(graph, **kw):
        return steps([c async for c in graph.astream({"debate": uniforms}, stream_mode="custom",
                                                     config={"recursion_limit": 100}, **kw)])

    for mode in ("debatrix", "flow"):
        graph = build_judge_graph(settings(mode), model())
        alone, nested = await streamed(graph), await streamed(graph, subgraphs=True)
        assert alone == nested and len(alone) >= 5, (mode, alone)
        node = parent(build_judge_node(settings(mode), model()))
        assert await streamed(node) == await streamed(node, subgraphs=True) == alone
        as_subgraph = parent(build_judge_graph(settings(mode), model()))
        assert await streamed(as_subgraph, subgraphs=True) == alone and await streamed(as_subgraph) == []
