"""Embed the Debatrix judge as a node of your own LangGraph agent.

The compiled judge graph reads ``debate`` from the parent's state and writes ``result`` back. Here a small "coach"
agent loads a debate, has it judged, and turns the verdict into feedback for the losing debater.

    python examples/embed_in_agent.py examples/school_uniforms.yaml --base-url http://127.0.0.1:8080/v1

The judge can also be a shared service: ``langgraph dev`` (or LangGraph Server) serves it from ``langgraph.json``,
and the same agent calls it as a ``RemoteGraph`` with the same keys (the result then arrives as JSON):

    python examples/embed_in_agent.py examples/school_uniforms.yaml --remote http://127.0.0.1:2024
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from debatrix import Debate, JudgeResult, JudgeSettings, LLMSettings, build_judge_graph, load_debate


class CoachState(TypedDict, total=False):
    path: str
    debate: Debate  # read by the judge node
    result: JudgeResult  # written by the judge node
    feedback: str


def load(state: CoachState) -> dict[str, Any]:
    return {"debate": load_debate(state["path"])}


def coach(state: CoachState) -> dict[str, Any]:
    result = state["result"]
    if not isinstance(result, JudgeResult):  # a remote judge's result arrives as JSON
        result = JudgeResult.model_validate(result)
    if result.status != "complete" or result.general is None or result.general.verdict is None:
        return {"feedback": f"The judge could not finish: {result.incomplete_reason}"}
    verdict = result.general.verdict
    winner = verdict.winner
    # the verdict in the judge's own words ("Ana (72%)", "too close to call, leaning Ana (0.53)", "tie"): where it
    # names no winner, every debater's comments are the advice
    lines = [f"Verdict: {verdict.called}." + (f" ({verdict.not_judged})" if verdict.not_judged else "")]
    for dim in result.dimensions:
        for j in dim.debater_judgments:
            if j.debater != winner:
                lines.append(f"{j.debater} on {dim.name} ({j.score:g}/10): {j.comment}")
    return {"feedback": "\n".join(lines)}


def build_coach(judge_graph: Any) -> Any:
    g = StateGraph(CoachState)
    g.add_node("load", load)
    g.add_node("judge", judge_graph)  # the compiled Debatrix graph as a node
    g.add_node("coach", coach)
    g.add_edge(START, "load")
    g.add_edge("load", "judge")
    g.add_edge("judge", "coach")
    g.add_edge("coach", END)
    return g.compile()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--base-url")
    parser.add_argument("--model")
    parser.add_argument("--mode", default=JudgeSettings().mode, help="how to judge (default: the judge's own)")
    parser.add_argument("--remote", metavar="URL", help="a judge served by `langgraph dev` (langgraph.json)")
    args = parser.parse_args()
    if args.remote:
        from langgraph.pregel.remote import RemoteGraph

        judge, config = RemoteGraph("judge", url=args.remote), {"configurable": {"mode": args.mode}}
    else:
        settings = JudgeSettings(mode=args.mode, llm=LLMSettings.from_env(base_url=args.base_url, model=args.model))
        judge, config = build_judge_graph(settings), {}
    agent = build_coach(judge)
    state = await agent.ainvoke({"path": args.path}, config={"recursion_limit": 200, **config})
    print(state["feedback"])


if __name__ == "__main__":
    asyncio.run(main())
