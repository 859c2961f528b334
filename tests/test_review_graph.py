"""The judge paused for a person's review the way LangGraph users expect: ``JudgeSettings(review=True)`` makes the
judge graph ``interrupt()`` after the flow with its sheet and the decisions to review first, and
``Command(resume=corrections)`` finishes the verdict from them: under a SQLite checkpointer, across a process
restart (the resume asks the model nothing again), inside a parent graph, and again where the corrections given do
not apply."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

from debatrix import JudgeSettings, LLMSettings, MemorySettings, build_judge_graph, build_judge_node, load_debate
from debatrix.core.results import JudgeResult
from debatrix.core.review import recompute
from debatrix.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parent.parent
FIXES = {"by": "coach", "corrections": [
    {"passage": "S2.1", "kind": "answers", "row": "S1.1", "value": "yes", "note": "attacks the trials"},
    {"passage": "S3.1", "kind": "argues", "value": "yes"}]}

sqlite = pytest.importorskip("langgraph.checkpoint.sqlite.aio",
                             reason="pip install langgraph-checkpoint-sqlite (the dev extra; make test installs it)")


def _settings(url: str) -> JudgeSettings:
    return JudgeSettings(review=True, profile="none", memory=MemorySettings(embedding="hash"),
                         llm=LLMSettings(base_url=url, model="fake", api_key="x"))


#: one process of the run: judges until the pause (printing what it shows a person), or resumes (printing the result)
STEP = textwrap.dedent("""
    import asyncio, json, sys
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from langgraph.types import Command
    from debatrix import JudgeSettings, LLMSettings, MemorySettings, build_judge_graph, load_debate

    url, db, what = sys.argv[1], sys.argv[2], sys.argv[3]

    async def main():
        settings = JudgeSettings(review=True, profile="none", memory=MemorySettings(embedding="hash"),
                                 llm=LLMSettings(base_url=url, model="fake", api_key="x"))
        async with AsyncSqliteSaver.from_conn_string(db) as saver:
            graph = build_judge_graph(settings, checkpointer=saver)
            config = {"configurable": {"thread_id": "coach-1"}}
            if what == "judge":
                out = await graph.ainvoke({"debate": load_debate("examples/four_day_week.yaml")}, config)
                print(json.dumps(out["__interrupt__"][0].value))
            else:
                out = await graph.ainvoke(Command(resume=json.loads(what)), config)
                print(out["result"].model_dump_json())

    asyncio.run(main())
""")


def _step(url: str, db: Path, what: str) -> str:
    done = subprocess.run([sys.executable, "-c", STEP, url, str(db), what], capture_output=True, text=True,
                          cwd=ROOT, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def test_a_paused_judgment_resumes_in_another_process_from_its_sqlite_checkpoint(tmp_path):
    db = tmp_path / "checkpoints.sqlite"
    with FakeOpenAIServer(reading=True) as server:
        shown = json.loads(_step(server.base_url, db, "judge"))
        asked = len(server.requests)
        assert asked > 0 and shown["debatrix"] == "review" and shown["debate"] == "four_day_week"
        assert shown["review_first"] and all(set(i) >= {"decision", "asks", "said", "if_yes", "if_no"}
                                             for i in shown["review_first"])
        assert shown["sheet"] and shown["verdict"]
        result = JudgeResult.model_validate_json(_step(server.base_url, db, json.dumps(FIXES)))
        assert len(server.requests) == asked, "the resume asked the model again"
    assert [c.decision for c in result.corrections] == [("answers", "S2.1", "S1.1"), ("argues", "S3.1")]
    assert result.corrections[0].by == "coach" and result.corrections[0].note == "attacks the trials"
    # the verdict finished from the corrections is the one a recompute gives: one computation
    again = recompute(result)
    assert again.dimensions == result.dimensions and again.general == result.general
    assert recompute(result, ()).general != result.general, "the corrections changed nothing"


class Parent(TypedDict, total=False):
    match: Any
    ruling: JudgeResult
    debate: Any
    result: JudgeResult


@pytest.mark.parametrize("form", ["subgraph", "node"])
async def test_inside_a_parent_graph_the_pause_reaches_the_parent_and_its_resume_finishes_the_verdict(tmp_path, form):
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command

    debate = load_debate(ROOT / "examples" / "four_day_week.yaml")
    with FakeOpenAIServer(reading=True) as server:
        settings = _settings(server.base_url)
        if form == "subgraph":  # the compiled judge graph as the parent's node
            judge, given, key = build_judge_graph(settings), {"debate": debate}, "result"
        else:  # the node form, under the parent's own keys
            judge = build_judge_node(settings, debate_key="match", result_key="ruling")
            given, key = {"match": debate}, "ruling"
        g = StateGraph(Parent)
        g.add_node("judge", judge)
        g.add_edge(START, "judge")
        g.add_edge("judge", END)
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "parent.sqlite")) as saver:
            parent = g.compile(checkpointer=saver)
            config = {"configurable": {"thread_id": "agent-7"}}
            first = await parent.ainvoke(given, config)
            paused = first["__interrupt__"][0].value
            assert paused["debatrix"] == "review" and paused["review_first"]
            asked = len(server.requests)
            # corrections that do not apply pause it again, saying why: nothing is guessed
            again = await parent.ainvoke(Command(resume={"by": "coach", "corrections": [
                {"passage": "S2.1", "kind": "answers", "row": "S9.9", "value": "yes"}]}), config)
            problem = again["__interrupt__"][0].value["problem"]
            assert "row 'S9.9' is not in the debate" in problem
            done = await parent.ainvoke(Command(resume=FIXES), config)
            assert len(server.requests) == asked
    result = done[key]
    assert isinstance(result, JudgeResult) and len(result.corrections) == 2
    assert result.general.verdict.probabilities == recompute(result).general.verdict.probabilities


async def test_a_resume_with_no_corrections_keeps_the_models_decisions(tmp_path):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    debate = load_debate(ROOT / "examples" / "four_day_week.yaml")
    with FakeOpenAIServer(reading=True) as server:
        graph = build_judge_graph(_settings(server.base_url), checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        await graph.ainvoke({"debate": debate}, config)
        result = (await graph.ainvoke(Command(resume=[]), config))["result"]
    assert result.corrections == () and result.status.value == "complete"
    assert recompute(result).general == result.general
