"""Node functions. Each is small, makes at most one LLM request (plus one schema repair), and takes the
chat model, memories and settings from the :class:`JudgeContext`, never from globals."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.types import Command, Send

from debatrix import prompting as P
from debatrix.context import JudgeContext
from debatrix.dimension import Dimension
from debatrix.errors import IncompleteJudgment
from debatrix.llm import CommentScoreAnswer, ScoreAnswer, winner_answer
from debatrix.models import Debate, DebateFormat, DebaterJudgment, SpeechAnalysis, SpeechJudgment

from .state import ColumnState, DebateAnalysis, JudgmentTask, WinnerDecision

Node = Callable[[Any, JudgeContext], Awaitable[Any]]


def guarded(name: str, fn: Node) -> Node:
    """Turn an error that should end the run as *incomplete* into a recorded failure instead of a crash."""

    @functools.wraps(fn)
    async def node(state: Any, ctx: JudgeContext) -> Any:
        try:
            return await fn(state, ctx)
        except IncompleteJudgment as e:
            dim = state.get("dimension")
            where = f"{dim.name}/{name}" if isinstance(dim, Dimension) else name
            return {"failures": [f"{where}: {type(e).__name__}: {e}"]}

    return node


# ------------------------------------------------------------------------------------------- messages


def system_message(debate: Debate) -> SystemMessage:
    """The same for every call on a debate, so the server can reuse the cached prefix."""
    return SystemMessage(content=_system_text(P.fence_for(debate)))


@functools.lru_cache(maxsize=1024)
def _system_text(fence: str) -> str:
    return P.render("system.j2", P.SystemVars(fence=fence))


_HEADERS: dict[str, str] = {}


def header(debate: Debate) -> str:
    """The debate header, rendered once per debate (the fence is derived from the debate's content, so equal
    fences mean equal debates)."""
    fence = P.fence_for(debate)
    text = _HEADERS.get(fence)
    if text is None:
        if len(_HEADERS) >= 1024:
            _HEADERS.clear()
        text = _HEADERS[fence] = P.debate_header(debate, fence)
    return text


def choices_for(debate: Debate, dimension: Dimension) -> list[str]:
    names = [d.name for d in debate.debaters]
    if dimension.allow_tie and debate.format is DebateFormat.ONE_V_ONE:
        names.append("tie")
    return names


# ------------------------------------------------------------------------------------------- speech analysis

PreviousContext = Callable[[JudgeContext, Any, Debate, int], Awaitable[str]]


async def previous_analyses(ctx: JudgeContext, memory: Any, debate: Debate, index: int) -> str:
    """The analysis memory's earlier analyses (the Debatrix mode)."""
    return P.previous_analyses(memory.analyses_before(index) if index else [])


async def previous_speeches(ctx: JudgeContext, memory: Any, debate: Debate, index: int) -> str:
    """The raw earlier speeches (the non-iterative ablation)."""
    return P.previous_speeches(debate, index, P.fence_for(debate))


async def _relevant(ctx: JudgeContext, memory: Any, debate: Debate, index: int) -> str:
    if not ctx.settings.memory.retrieval or index == 0:
        return ""
    chunks = await asyncio.to_thread(memory.relevant, index, debate.speeches[index].content, ctx.settings.memory.top_k)
    fence = P.fence_for(debate)
    blocks = [P.render("speech_block.j2", P.SpeechBlockVars(
        fence=fence, index=c["index"] + 1, speaker=c["speaker"], side="excerpt", content=P.sanitize(c["text"], fence)))
        for c in chunks]
    return P.render("relevant_chunks.j2", P.ItemsVars(items=blocks))


def make_analyze_speech(previous: PreviousContext) -> Node:
    async def analyze_speech(state: ColumnState, ctx: JudgeContext) -> dict[str, Any]:
        debate, dim, i = state["debate"], state["dimension"], state.get("index", 0)
        speech = debate.speeches[i]
        # opening the memory (first speech) stores the speeches; the first speech has nothing earlier to read, so
        # its analysis does not wait for that write
        opening = ctx.memory.acolumn(state["run_id"], dim.name, debate, state.get("resumed", True))
        if i:
            memory, opening = await opening, None
        else:
            memory, opening = None, asyncio.ensure_future(opening)
        # rel = query(context_mem, speech_i) sees only speeches before i (paper, Appendix A: query, then add)
        text = P.render("analyze_speech.j2", P.AnalyzeSpeechVars(
            header=header(debate),
            previous=await previous(ctx, memory, debate, i),
            relevant=await _relevant(ctx, memory, debate, i),
            speech=P.speech_block(debate, i, P.fence_for(debate)),
            index=i + 1, speaker=speech.speaker, dimension=dim.name,
            focus=dim.prompts.analyze, use_context=dim.prompts.context, words=ctx.settings.analysis_words,
        ))
        try:
            analysis, record = await ctx.gateway.text([system_message(debate), HumanMessage(content=text)],
                                                      node="analyze_speech", dimension=dim.name,
                                                      meta={"debatrix_index": i}, words=ctx.settings.analysis_words)
        finally:
            if opening is not None:  # opened even when the call failed, so the run's end finds and removes it
                memory = await opening
        result = SpeechAnalysis(dimension=dim.name, index=i, speaker=speech.speaker, analysis=analysis)
        memory.add_analysis(result)  # chromadb receives the run's analyses in one write when it finishes
        return {"analyses": [result], "index": i + 1, "calls": [record]}

    analyze_speech.__doc__ = f"Analyse the next speech with {previous.__name__.replace('_', ' ')} as context."
    return analyze_speech


async def analyze_debate(state: ColumnState, ctx: JudgeContext) -> dict[str, Any]:
    debate, dim = state["debate"], state["dimension"]
    analyses = sorted((a for a in state.get("analyses", []) if a.dimension == dim.name), key=lambda a: a.index)
    text = P.render("analyze_debate.j2", P.AnalyzeDebateVars(
        header=header(debate), material=P.analyses_material(analyses), dimension=dim.name, focus=dim.prompts.judge,
        words=debate_analysis_words(ctx)))
    analysis, record = await ctx.gateway.text([system_message(debate), HumanMessage(content=text)],
                                              node="analyze_debate", dimension=dim.name,
                                              words=debate_analysis_words(ctx))
    return {"debate_analyses": [DebateAnalysis(dimension=dim.name, text=analysis)], "calls": [record]}


# ------------------------------------------------------------------------------------------- judgments
# A judgment is a comment followed, in a second short call, by a score or a winner (the paper's order,
# "to diminish mismatches"); ``merge_score_call`` asks for both in one structured call instead.


def debate_analysis_words(ctx: JudgeContext) -> int:
    return round(ctx.settings.analysis_words * 1.4)


class SpeechJudge:
    key, comment_node, decision_node = "speech_judgments", "judge_speech", "score_speech"

    def words(self, ctx: JudgeContext) -> int:
        return ctx.settings.comment_words

    def messages(self, t: JudgmentTask, ctx: JudgeContext) -> list[BaseMessage]:
        debate, dim = t["debate"], t["dimension"]
        text = P.render("judge_speech.j2", P.JudgeSpeechVars(
            header=header(debate), index=t["index"] + 1, speaker=t["target"], dimension=dim.name,
            analysis=t["material"], focus=dim.prompts.analyze, words=self.words(ctx)))
        return [system_message(debate), HumanMessage(content=text)]

    def ask(self, t: JudgmentTask) -> str:
        return P.render("ask_score.j2", P.AskScoreVars(
            target=f"speech {t['index'] + 1} by {t['target']}", dimension=t["dimension"].name))

    def schema(self, t: JudgmentTask, merged: bool) -> type:
        return CommentScoreAnswer if merged else ScoreAnswer

    def build(self, t: JudgmentTask, comment: str, answer: Any) -> SpeechJudgment:
        return SpeechJudgment(dimension=t["dimension"].name, index=t["index"], speaker=t["target"],
                              comment=comment, score=answer.score)


class DebaterJudge(SpeechJudge):
    key, comment_node, decision_node = "debater_judgments", "judge_debater", "score_debater"

    def messages(self, t: JudgmentTask, ctx: JudgeContext) -> list[BaseMessage]:
        debate, dim = t["debate"], t["dimension"]
        text = P.render("judge_debater.j2", P.JudgeDebaterVars(
            header=header(debate), material=t["material"], debater=t["target"], dimension=dim.name,
            focus=t["focus"], words=self.words(ctx)))
        return [system_message(debate), HumanMessage(content=text)]

    def ask(self, t: JudgmentTask) -> str:
        return P.render("ask_score.j2", P.AskScoreVars(target=t["target"], dimension=t["dimension"].name))

    def build(self, t: JudgmentTask, comment: str, answer: Any) -> DebaterJudgment:
        return DebaterJudgment(dimension=t["dimension"].name, debater=t["target"], comment=comment,
                               score=answer.score)


class WinnerJudge(SpeechJudge):
    key, comment_node, decision_node = "winner_decisions", "judge_winner", "decide_winner"

    def messages(self, t: JudgmentTask, ctx: JudgeContext) -> list[BaseMessage]:
        debate, dim = t["debate"], t["dimension"]
        text = P.render("judge_winner.j2", P.JudgeWinnerVars(
            header=header(debate), material=t["material"], dimension=dim.name, focus=t["focus"],
            choices=choices_for(debate, dim), allow_tie="tie" in choices_for(debate, dim),
            words=self.words(ctx)))
        return [system_message(debate), HumanMessage(content=text)]

    def words(self, ctx: JudgeContext) -> int:
        return round(ctx.settings.comment_words * 1.5)

    def ask(self, t: JudgmentTask) -> str:
        return P.render("ask_winner.j2", P.AskWinnerVars(
            dimension=t["dimension"].name, choices=choices_for(t["debate"], t["dimension"])))

    def schema(self, t: JudgmentTask, merged: bool) -> type:
        return winner_answer(choices_for(t["debate"], t["dimension"]), with_comment=merged)

    def build(self, t: JudgmentTask, comment: str, answer: Any) -> WinnerDecision:
        return WinnerDecision(dimension=t["dimension"].name, comment=comment,
                              winner=None if answer.winner == "tie" else answer.winner)


def make_comment_node(judge: SpeechJudge) -> Node:
    async def comment(task: JudgmentTask, ctx: JudgeContext) -> Command:
        text, record = await ctx.gateway.text(judge.messages(task, ctx), node=judge.comment_node,
                                              dimension=task["dimension"].name, meta=_task_meta(task),
                                              words=judge.words(ctx))
        return Command(update={"calls": [record]}, goto=Send(judge.decision_node, {**task, "comment": text}))

    comment.__name__ = judge.comment_node
    return comment


def make_decision_node(judge: SpeechJudge) -> Node:
    async def decide(task: JudgmentTask, ctx: JudgeContext) -> dict[str, Any]:
        messages = [*judge.messages(task, ctx), AIMessage(content=task["comment"]),
                    HumanMessage(content=judge.ask(task))]
        answer, records = await ctx.gateway.structured(messages, judge.schema(task, False), node=judge.decision_node,
                                                       dimension=task["dimension"].name, meta=_task_meta(task))
        return {judge.key: [judge.build(task, task["comment"], answer)], "calls": records}

    decide.__name__ = judge.decision_node
    return decide


def make_merged_node(judge: SpeechJudge) -> Node:
    async def judge_once(task: JudgmentTask, ctx: JudgeContext) -> dict[str, Any]:
        *head, last = judge.messages(task, ctx)
        messages = [*head, HumanMessage(content=f"{last.content}\n{judge.ask(task)} Give the comment too.")]
        answer, records = await ctx.gateway.structured(messages, judge.schema(task, True), node=judge.comment_node,
                                                       dimension=task["dimension"].name, meta=_task_meta(task),
                                                       words=judge.words(ctx))
        return {judge.key: [judge.build(task, answer.comment, answer)], "calls": records}

    judge_once.__name__ = judge.comment_node
    return judge_once


def _task_meta(task: JudgmentTask) -> dict[str, Any]:
    return {"debatrix_target": task.get("target"), "debatrix_index": task.get("index")}


JUDGES = {"speech": SpeechJudge(), "debater": DebaterJudge(), "winner": WinnerJudge()}
