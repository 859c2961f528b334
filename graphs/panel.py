"""The panel: where a mode splits the debate into dimensions, the chair reads every dimension's report (its scores,
winner and judgment) and decides the debate, once per order of the debaters (the orders combined)."""

from __future__ import annotations

from typing import Any

from debatrix.context import JudgeContext
from debatrix.core.textchecks import cites_debate

from . import messages as M
from .answers import winner_answer
from .finish import judged_debaters
from .state import PANEL, DebateAnalysis, JudgeState
from .wiring import add_step


def after_columns(state: JudgeState) -> str:
    return "finish" if state.get("failures") else "panel_comment"


def _panel_messages(state: JudgeState, ctx: JudgeContext, order: tuple[str, ...]) -> list[Any]:
    debate = state["debate"]
    reports = []
    for dim in state["dimensions"]:
        decision = state["winner_decisions"][dim.name][0]
        judged = {j.debater: j.score for j in judged_debaters(state, dim.name, debate)}
        scores = ", ".join(f"{name} {judged[name]:.3g}" for name in order if name in judged)
        reports.append({"name": dim.name, "weight": f"{dim.weight:g}", "scores": scores,
                        "winner": decision.winner or "tie", "judgment": decision.comment})
    return M.panel_messages(debate, reports, order, M.panel_words(ctx.settings))


async def panel_comment(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
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
            return V.order_answer(order, order, answer.comment, decision=answer, decision_logprobs=lp), records

        done = await gathered(comment_with_winner(o) for o in orders)
        decision = V.combine(PANEL, debate, [a for a, _ in done], allow_tie=False)
        return {"panel_comments": [DebateAnalysis(dimension=PANEL, text=a.comment, order=a.order)
                                   for a, _ in done],
                "winner_decisions": [decision], "calls": [r for _, records in done for r in records]}

    citable = any(cites_debate(state["winner_decisions"][d.name][0].comment, debate) for d in state["dimensions"])

    async def written(order: tuple[str, ...]) -> tuple[DebateAnalysis, list[Any]]:
        messages = _panel_messages(state, ctx, order)
        text, lp, record = await ctx.gateway.text_probed(messages, node="panel_comment", dimension="general",
                                                         words=words)
        named, probs = V.judgment_reading(text, lp, order)
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
        return DebateAnalysis(dimension=PANEL, text=text, order=order, named=named, probabilities=probs), records

    done = await gathered(written(o) for o in orders)
    return {"panel_comments": [a for a, _ in done], "calls": [r for _, records in done for r in records]}


async def panel_decide(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
    """The overall winner, read from each order's chair comment alone, the orders combined."""
    from . import verdicts as V
    from .nodes import gathered

    debate = state["debate"]

    async def decide(comment: DebateAnalysis) -> tuple[Any, list[Any]]:
        order = comment.order
        answer, lp, records = await ctx.gateway.structured_probed(
            M.panel_decide_messages(debate, comment.text, order), winner_answer(order), node="panel_decide",
            dimension="general", meta={"debatrix_choices": list(order)})
        return V.order_answer(order, order, comment.text, named=comment.named, named_probs=comment.probabilities,
                              decision=answer, decision_logprobs=lp), records

    done = await gathered(decide(c) for c in state["panel_comments"])
    decision = V.combine(PANEL, debate, [a for a, _ in done], allow_tie=False)
    return {"winner_decisions": [decision], "calls": [r for _, records in done for r in records]}


async def columns_done(state: JudgeState) -> dict:
    """Where the dimension columns join (no work of its own)."""
    return {}


def after_panel_comment(state: JudgeState) -> str:
    """With merge_score_call the panel decided in its comment call; otherwise the decision is read from the
    comment."""
    done = state.get("failures") or PANEL in state.get("winner_decisions", {})
    return "finish" if done else "panel_decide"


def add_panel(g: Any, ctx: JudgeContext | None, mode: str, after: str) -> None:
    """The panel's steps in a judge graph, after the node ``after`` (the columns) and before ``finish``, which the
    caller adds: the chair's comment in each order, then its decision read from them (unless the comment decided)."""
    add_step(g, "panel_comment", panel_comment, ctx, mode)
    add_step(g, "panel_decide", panel_decide, ctx, mode)
    # a conditional edge straight from the columns would be decided per column, each seeing only its own failures,
    # so one failed dimension would not stop the panel: the columns join first
    g.add_node("columns_done", columns_done)
    g.add_edge(after, "columns_done")
    g.add_conditional_edges("columns_done", after_columns, ["panel_comment", "finish"])
    g.add_conditional_edges("panel_comment", after_panel_comment, ["panel_decide", "finish"])
    g.add_edge("panel_decide", "finish")
