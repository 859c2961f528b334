"""The panel: where a mode splits the debate into dimensions, the chair reads every dimension's report (its scores,
winner and judgment) and decides the debate, once per order of the debaters (the orders combined).

The panel is a subgraph of its own (:func:`build_panel`): it reads the columns' per-dimension items and writes one
key of the judge's state, ``panel`` (its verdict), beside the run's calls and failures; its chair's comments stay
in its own state. ``finish`` shows its verdict as the ``general`` one."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from debatrix.context import JudgeContext
from debatrix.core.models import Judgment
from debatrix.core.results import judged_debaters

from . import messages as M
from .answers import winner_answer
from ..finish import cites_debate
from ..state import PANEL, JudgeState, PanelOutput, PanelState
from ..wiring import add_step, subgraph_node


def _panel_messages(state: PanelState, ctx: JudgeContext, order: tuple[str, ...]) -> list[Any]:
    debate = state["debate"]
    reports = []
    for dim in state["dimensions"]:
        decision = state["winner_decisions"][dim.name][0]
        judged = {j.debater: j.score for j in judged_debaters(state, dim.name, debate)}
        scores = ", ".join(f"{name} {judged[name]:.3g}" for name in order if name in judged)
        reports.append({"name": dim.name, "weight": f"{dim.weight:g}", "scores": scores,
                        "winner": decision.winner or "tie", "judgment": decision.comment})
    return M.panel_messages(debate, reports, order, M.panel_words(ctx.settings))


async def panel_comment(state: PanelState, ctx: JudgeContext) -> dict[str, Any]:
    """The chair's decision over the dimensions' reports, once per order of the debaters."""
    from . import verdicts as V
    from .nodes import gathered, orders_of

    debate = state["debate"]
    orders = orders_of(debate, ctx.settings)
    words = M.panel_words(ctx.settings)
    if ctx.settings.merge_score_call:
        async def comment_with_winner(order: tuple[str, ...]) -> tuple[Any, list[Any]]:
            answer, lp, records = await ctx.gateway.structured_probed(
                M.ask_merged(_panel_messages(state, ctx, order), scores=False),
                winner_answer(order, with_comment=True),
                node="panel_comment", dimension="general", words=words, meta={"debatrix_choices": list(order)})
            return V.order_answer(order, order, answer.comment, dimension=PANEL, decision=answer,
                                  decision_logprobs=lp), records

        done = await gathered(comment_with_winner(o) for o in orders)
        decision = V.combine(PANEL, debate, [a for a, _ in done], allow_tie=False)
        return {"panel_comments": [a for a, _ in done],
                "panel": decision, "calls": [r for _, records in done for r in records]}

    citable = any(cites_debate(state["winner_decisions"][d.name][0].comment, debate) for d in state["dimensions"])

    async def written(order: tuple[str, ...]) -> tuple[Judgment, list[Any]]:
        messages = _panel_messages(state, ctx, order)
        text, lp, record = await ctx.gateway.text_probed(messages, node="panel_comment", dimension="general",
                                                         words=words)
        records = [record]
        if citable and not cites_debate(text, debate):
            # a reason made of weights and scores ("The debate was weighted as follows ...", debateart_4024 on the
            # local model) is asked once, in the same conversation, what decided it, where the reports it read
            # hold something said in the debate to name; the verdict stays the first answer's, the named point
            # goes before it
            more, _, again = await ctx.gateway.text_probed(M.panel_cite(messages, text), node="panel_comment",
                                                           dimension="general", words=words // 2,
                                                           meta={"debatrix_retry": 1})
            records.append(again)
            if cites_debate(more, debate):
                text = f"{more.strip()}\n{text}"
        return V.written_judgment(PANEL, order, text, lp, order), records

    done = await gathered(written(o) for o in orders)
    return {"panel_comments": [a for a, _ in done], "calls": [r for _, records in done for r in records]}


async def panel_decide(state: PanelState, ctx: JudgeContext) -> dict[str, Any]:
    """The overall winner, read from each order's chair comment alone, the orders combined."""
    from . import verdicts as V
    from .nodes import gathered

    debate = state["debate"]

    async def decide(comment: Judgment) -> tuple[Any, list[Any]]:
        order = comment.order
        answer, lp, records = await ctx.gateway.structured_probed(
            M.panel_decide_messages(debate, comment.comment, order), winner_answer(order), node="panel_decide",
            dimension="general", meta={"debatrix_choices": list(order)})
        return V.order_answer(order, order, comment.comment, dimension=PANEL, written=comment, decision=answer,
                              decision_logprobs=lp), records

    done = await gathered(decide(c) for c in state["panel_comments"])
    decision = V.combine(PANEL, debate, [a for a, _ in done], allow_tie=False)
    return {"panel": decision, "calls": [r for _, records in done for r in records]}


async def columns_done(state: JudgeState) -> dict:
    """Where the dimension columns join (no work of its own)."""
    return {}


def after_panel_comment(state: PanelState) -> str:
    """With merge_score_call the panel decided in its comment call; otherwise the decision is read from the
    comment."""
    return END if state.get("failures") or state.get("panel") is not None else "panel_decide"


def build_panel(ctx: JudgeContext | None, mode: str) -> Any:
    """The panel's subgraph: the chair's comment in each order, then its decision read from them (unless the
    comment decided). It reads the columns' items and answers with :class:`PanelOutput` alone."""
    g = StateGraph(PanelState, input_schema=PanelState, output_schema=PanelOutput)
    add_step(g, "panel_comment", panel_comment, ctx, mode)
    add_step(g, "panel_decide", panel_decide, ctx, mode)
    g.add_edge(START, "panel_comment")
    g.add_conditional_edges("panel_comment", after_panel_comment, ["panel_decide", END])
    g.add_edge("panel_decide", END)
    return g.compile()


def after_columns(state: JudgeState) -> str:
    return "finish" if state.get("failures") else "panel"


def add_panel(g: Any, ctx: JudgeContext | None, mode: str, after: str) -> None:
    """The panel in a judge graph, after the node ``after`` (the columns) and before ``finish``, which the caller
    adds: its subgraph as one node, entered once every column has finished and none failed."""
    # a conditional edge straight from the columns would be decided per column, each seeing only its own failures,
    # so one failed dimension would not stop the panel: the columns join first
    g.add_node("columns_done", columns_done)
    g.add_node("panel", subgraph_node(build_panel(ctx, mode), PanelOutput, reads=PanelState))
    g.add_edge(after, "columns_done")
    g.add_conditional_edges("columns_done", after_columns, ["panel", "finish"])
    g.add_edge("panel", "finish")
