"""Node functions. Each does one step of the paper's algorithm (an analysis, a judgment, a decision) with the
requests it needs: one per order where the debaters are compared, one more where an answer must be asked again
(a note that restates another debater, a missing paragraph), plus one schema repair; each takes the chat model,
memories and settings from the :class:`JudgeContext`, never from globals."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.types import Send

from debatrix.core import prompting as P
from debatrix.context import JudgeContext
from debatrix.core.probabilities import PlacePrior, place_prior_for, resolved_layout
from debatrix.core.errors import IncompleteJudgment, StructuredOutputError, UnreadableAnalyses
from debatrix.core.settings import JudgeSettings
from debatrix.core.models import Debate, Judgment, SpeechAnalysis, SpeechJudgment
from debatrix.core import probabilities as prob
from debatrix.core.prompting import count_tokens

from . import messages as M
from . import verdicts as V
from .answers import (
    ScoreAnswer,
    analysis_answer,
    analysis_answer_tokens,
    decision_answer,
)
from ..finish import COPY_SHARE, shared_share
from .messages import analysis_messages, judgment_messages, judgment_words, names_of, ties_allowed
from ..state import ColumnState, ScoreTask
from ..wiring import Node


# ------------------------------------------------------------------------------------------- speech analysis

# The previous context of an analysis, as (material before the speech, material after it). Prompts put what calls
# share first: the three dimensions' analyses of speech i all start with the system prompt, the header and speech i
# (and, in the non-iterative mode, the earlier speeches), so a server with a prompt cache (llama.cpp, vLLM, OpenAI)
# reads that once; what differs by dimension (its own earlier analyses, its task) comes last.
PreviousContext = Callable[[ColumnState, int], tuple[str, str]]


def earlier_analyses(state: ColumnState, index: int) -> tuple[str, str]:
    """The analysis memory's earlier analyses (the Debatrix mode), after the speech: the column's own analyses in
    its state (a column judges one dimension, so they are that dimension's)."""
    return "", P.analyses_block(sorted((a for a in state.get("analyses", [])
                                           if a.index < index and not a.missing), key=lambda a: a.index))


def earlier_speeches(state: ColumnState, index: int) -> tuple[str, str]:
    """The raw earlier speeches (the non-iterative ablation), before the speech: in order, so the prompt of speech
    i+1 starts with the whole prompt material of speech i."""
    debate = state["debate"]
    return P.previous_speeches(debate, index, P.fence_for(debate)), ""


async def _relevant(ctx: JudgeContext, memory: Any, debate: Debate, index: int) -> str:
    if memory is None or index == 0:
        return ""
    chunks = await asyncio.to_thread(memory.relevant, index, debate.speeches[index].content, ctx.settings.memory.top_k)
    return M.relevant_block(debate, chunks)


def make_analyze_speech(previous: PreviousContext, scored: bool = False) -> Node:
    """The analysis step with ``previous`` as its context; ``scored``: the speech's score comes in the answer."""

    async def analyze_speech(state: ColumnState, ctx: JudgeContext) -> dict[str, Any]:
        debate, dim, i = state["debate"], state["dimension"], state.get("index", 0)
        speech = debate.speeches[i]
        # the context memory exists for retrieval; opening it (first speech) stores the speeches, and the first
        # speech has nothing earlier to read, so its analysis does not wait for that write
        memory = opening = None
        if ctx.settings.memory.retrieval:
            if i:
                memory = await ctx.memory.acontext(state["run_id"], debate)
            else:
                opening = asyncio.ensure_future(ctx.memory.acontext(state["run_id"], debate))
        # rel = query(context_mem, speech_i) sees only speeches before i (paper, Appendix A: query, then add)
        before, after = previous(state, i)
        relevant = await _relevant(ctx, memory, debate, i)
        settings = ctx.settings
        messages = analysis_messages(debate, dim, i, before, after + relevant, settings.analysis_words, scored)
        meta = {"debatrix_index": i, "debatrix_target": speech.speaker}
        update: dict[str, Any] = {"index": i + 1}
        schema = analysis_schema(debate, i, settings.analysis_words, scored)
        sampling = no_repeats(after + relevant, settings) if i else None
        try:
            try:
                answer, lp, records = await ctx.gateway.structured_probed(
                    messages, schema, node="analyze_speech", dimension=dim.name, meta=meta, sampling=sampling)
            except StructuredOutputError as e:
                # one answer that is still not the schema after its repair costs this speech its analysis, not
                # the debate: recorded as missing (what it cost is counted), the later speeches and the judgment
                # go on without it, and the dimension's verdict says so. Two in a row: the model cannot answer
                # this column, and the run stops paying for it
                if any(a.index == i - 1 and a.missing for a in state.get("analyses", [])):
                    raise
                missing = SpeechAnalysis(dimension=dim.name, index=i, speaker=speech.speaker, analysis="",
                                         missing=f"{type(e).__name__}: {e}")
                return {**update, "analyses": [missing], "calls": list(getattr(e, "calls", []))}
            analysis, memo, cut = answer.text()
            if cut:
                records[-1] = records[-1].model_copy(update={"truncated": True})
            if scored:  # the analysis and the speech's score in one structured answer
                update["speech_judgments"] = [SpeechJudgment(dimension=dim.name, index=i, speaker=speech.speaker,
                                                             comment=analysis, score=answer.score,
                                                             expected_score=expected_score(lp))]
        finally:
            if opening is not None:  # opened even when the call failed, so the run's end finds and removes it
                await opening
        # into the analysis memory: the column's state, which the next speech's analysis reads
        result = SpeechAnalysis(dimension=dim.name, index=i, speaker=speech.speaker, analysis=analysis,
                                memo=memo)
        if ctx.settings.llm.prompt_cache and not scored:
            update["asked"] = ctx.gateway.as_sent(messages, schema)
        return {**update, "analyses": [result], "calls": records}

    analyze_speech.__doc__ = f"Analyse the next speech with {previous.__name__.replace('_', ' ')} as context."
    return analyze_speech


def analysis_schema(debate: Debate, i: int, words: int, with_score: bool = False) -> type[Any]:
    """The answer schema of speech ``i``'s analysis: its quotations are passages of that speech."""
    passages = tuple(P.quotable_passages(P.speech_text(debate.speeches[i].content, P.fence_for(debate))))
    return analysis_answer(passages, debate.speeches[i].speaker, i == 0, words, with_score)


# llama.cpp's DRY sampler penalises continuing any token sequence longer than DRY_ALLOWED that already occurs in the
# last ``dry_penalty_last_n`` tokens. The window covers only what comes after the speech (the earlier analyses, the
# task and the answer): the analysis may quote its speech but not repeat its earlier analyses, which a small model
# at greedy decoding otherwise does nearly word for word with the name swapped.
DRY_ALLOWED = 5
DRY = {"dry_multiplier": 0.8, "dry_base": 1.75, "dry_allowed_length": DRY_ALLOWED}


def no_repeats(after: str, settings: JudgeSettings) -> dict[str, Any] | None:
    """The DRY sampling fields of an analysis whose prompt ends with ``after`` (None without DRY or material)."""
    if not settings.llm.dry_sampling or not after.strip():
        return None
    tail = count_tokens(after, settings.llm.tokenizer) + TASK_TOKENS
    # local tokenizers count up to ~1.1x o200k_base: a window a little too wide reaches only the speech's last words
    return {**DRY, "dry_penalty_last_n": int(tail * 1.1) + analysis_answer_tokens(settings.analysis_words)}


TASK_TOKENS = 110  # the analysis task's own text (analyze_speech.j2 after the material), generously


async def score_speech(task: ScoreTask, ctx: JudgeContext) -> dict[str, Any]:
    """The speech's score, read from its analysis (the paper's second, short call). Where the server caches
    prompts, the analysis conversation is continued (the model has read all of it but the question); elsewhere a
    short prompt carries the analysis alone, so no debate material is sent twice."""
    debate, dim, a = task["debate"], task["dimension"], task["analysis"]
    messages = M.score_messages(debate, dim, a, task.get("asked"))
    answer, lp, records = await ctx.gateway.structured_probed(
        messages, ScoreAnswer, node="score_speech", dimension=dim.name,
        meta={"debatrix_index": a.index, "debatrix_target": a.speaker})
    judgment = SpeechJudgment(dimension=dim.name, index=a.index, speaker=a.speaker, comment=a.analysis,
                              score=answer.score, expected_score=expected_score(lp))
    return {"speech_judgments": [judgment], "calls": records}


def expected_score(logprobs: prob.Logprobs) -> float | None:
    """The probability-weighted value of a structured answer's ``score`` (None without log probabilities)."""
    value = prob.expectation(prob.json_score(logprobs, "score", V.SCORES)) if logprobs else None
    return None if value is None else round(value, 4)


# ------------------------------------------------------------------------------------------- the column's judgment
# One judgment per column and order over its material (the analyses, or the whole debate where there are none): a
# paragraph per debater and the winner. Then one short structured call per order reads every debater's score (and
# the winner) from that judgment alone, as the original Debatrix does, so the material is sent once ("to diminish
# mismatches" the comment comes first; ``merge_score_call`` asks for everything in one structured call instead).
# The orders' answers are combined by :mod:`.verdicts`.


def grouped_orders(settings: JudgeSettings, orders: Sequence[tuple[str, ...]], mode: str, profile: Any = None
                   ) -> bool:
    """Whether each order reads the material grouped its own way (the run's order layout is grouped, several
    orders); ``profile``: the judge profile the run reads (its place priors decide ``auto``)."""
    return len(orders) > 1 and resolved_layout(settings.order_layout, settings.llm.model, mode,
                                               len(orders[0]), profile) == "grouped"


def place_prior(settings: JudgeSettings, orders: Sequence[tuple[str, ...]], mode: str, profile: Any = None
                ) -> PlacePrior | None:
    """The prior that takes a lean toward a speaking place out of the orders' probabilities: where every order
    read the material once, in speaking order, and one was measured for the model and mode."""
    if grouped_orders(settings, orders, mode, profile):
        return None
    return place_prior_for(settings.llm.model, mode, profile)


def orders_of(debate: Debate, settings: JudgeSettings) -> list[tuple[str, ...]]:
    return V.orders_for(names_of(debate), settings.orders)


async def gathered(calls: Any) -> list[Any]:
    """Run the orders' calls side by side (each returns a tuple whose last item is its call record or records);
    the first failure is raised once all have ended (none left running), carrying the calls of every order, the
    answered ones and the other failures' attempts: all of them were paid for."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    failures = [r for r in results if isinstance(r, BaseException)]
    if not failures:
        return results
    paid: list[Any] = []
    for r in results:
        if isinstance(r, BaseException):
            paid.extend(getattr(r, "calls", []))
        else:
            paid.extend(r[-1] if isinstance(r[-1], list) else [r[-1]])
    first = failures[0]
    if isinstance(first, IncompleteJudgment):
        first.calls = paid
    raise first


async def judge_dimension(state: ColumnState, ctx: JudgeContext) -> dict[str, Any]:
    debate, dim = state["debate"], state["dimension"]
    # the column's (its dimension's); a speech whose analysis is missing is judged without one, but a debater none of
    # whose analyses could be read cannot be judged: the column ends incomplete before paying for a judgment
    analyses = sorted((a for a in state.get("analyses", []) if not a.missing), key=lambda a: a.index)
    gaps = [a for a in state.get("analyses", []) if a.missing]
    unread = [d.name for d in debate.debaters if gaps and not any(a.speaker == d.name for a in analyses)]
    if unread:
        raise UnreadableAnalyses(f"no analysis of the speeches of {', '.join(unread)} could be read ({gaps[-1].missing})")
    words = judgment_words(ctx.settings, debate)
    orders = orders_of(debate, ctx.settings)
    grouped = grouped_orders(ctx.settings, orders, ctx.mode.name, ctx.profile.profile)

    if ctx.settings.merge_score_call:
        async def judged_with_scores(order: tuple[str, ...]) -> tuple[Judgment, list[Any]]:
            choices = V.choices_in(order, ties_allowed(debate, dim))
            messages = M.ask_merged(judgment_messages(debate, dim, analyses, words, order, grouped), scores=True)
            answer, lp, records = await ctx.gateway.structured_probed(
                messages, decision_answer(order, choices, True), node="judge_debate", dimension=dim.name,
                words=words, meta=decision_meta(order, choices))
            return V.order_answer(order, choices, answer.comment, dimension=dim.name, decision=answer,
                                  decision_logprobs=lp), records

        done = await gathered(judged_with_scores(o) for o in orders)
        return {**_decided(state, ctx, [a for a, _ in done], with_analysis=True),
                "calls": [r for _, records in done for r in records]}

    async def written(order: tuple[str, ...]) -> tuple[list[BaseMessage], Judgment, list[Any]]:
        messages = judgment_messages(debate, dim, analyses, words, order, grouped)
        text, lp, record = await ctx.gateway.text_probed(messages, node="judge_debate", dimension=dim.name,
                                                         words=words)
        judgment = V.written_judgment(dim.name, order, text, lp, V.choices_in(order, ties_allowed(debate, dim)))
        text = V.winner_apart(text)  # after the reading: the probabilities are read in the text as written
        try:
            text, more = await _with_missing_paragraphs(ctx, messages, text, list(order), dim.name, words)
        except IncompleteJudgment as e:  # the run stops here: what was paid for is still counted
            e.calls = [record, *getattr(e, "calls", [])]
            raise
        return messages, judgment.model_copy(update={"comment": text}), [record, *more]

    done = await gathered(written(o) for o in orders)
    update: dict[str, Any] = {"judgment_asked": [m for m, _, _ in done]} if ctx.settings.llm.prompt_cache else {}
    return {**update, "debate_analyses": [a for _, a, _ in done], "calls": [r for _, _, rs in done for r in rs]}


def _copies(sections: list[tuple[str | None, str]]) -> set[str]:
    """The debaters whose section says again an earlier debater's section with the name swapped (the local model's
    habit): a lookup of its word 5-grams, the earlier debater's name put back, in the earlier section."""
    out: set[str] = set()
    for k, (who, part) in enumerate(sections):
        for other, earlier in sections[:k]:
            if who and other and other != who and part and earlier and \
                    shared_share(part.replace(who, other), earlier) >= COPY_SHARE:
                out.add(who)
    return out


async def _with_missing_paragraphs(ctx: JudgeContext, messages: list[BaseMessage], text: str, names: list[str],
                                   dimension: str, words: int) -> tuple[str, list[Any]]:
    """The judgment with a paragraph on every debater: where it has none on some (the default local model often
    folds one debater into the other's paragraph, so the report's comment on that debater would be empty), the
    judge is asked once for the missing ones, in the same conversation, and they are put before the Winner line.
    The verdict stays the first answer's (its Winner line and probabilities). A paragraph under a debater's name with
    nothing in it (debateart_4024: "Sir.Lancelot:" then the Winner line), or one that is an earlier debater's
    paragraph again with the name swapped (:func:`_copies`), is missing too, and the paragraph written for it
    replaces it. One that cannot be had leaves the judgment as it was (the check
    flags it), as does a judgment in which no name heads a paragraph (it did not follow the format at all, and its
    comments are read from it as it is)."""
    if not any(who for who, _ in V.judgment_sections(text, names)):  # not written per debater at all
        return text, []
    shown = V.judgment_sections(text, names)
    written = {who for who, part in shown if who and part} - _copies(shown)
    missing = [n for n in names if n not in written]
    if not missing:
        return text, []
    ask = M.judgment_missing(messages, text, dimension, missing)
    more, _, record = await ctx.gateway.text_probed(ask, node="judge_debate", dimension=dimension,
                                                    words=max(20, words * len(missing) // len(names)),
                                                    meta={"debatrix_retry": 1})
    added: list[tuple[str, str]] = []
    for who, part in V.judgment_sections(more, names):
        # a paragraph that copies the judgment already written (the local model repeats the other debater's
        # paragraph under the missing name) says nothing about its debater: not added
        if who in missing and part and who not in [w for w, _ in added] and shared_share(part, text) < COPY_SHARE:
            added.append((who, part))
    if not added:
        return text, [record]
    text = V.without_sections(text, names, [who for who, _ in added])  # what the new paragraphs replace
    lines = text.rstrip().split("\n")
    cut = next((k for k, line in enumerate(lines) if prob.WINNER_LINE.match(line.strip())), len(lines))
    new = [f"{who}: {part}" for who, part in added]
    return "\n".join([*lines[:cut], *new, *lines[cut:]]), [record]


async def decide_debate(state: ColumnState, ctx: JudgeContext) -> dict[str, Any]:
    debate, dim = state["debate"], state["dimension"]
    judgments = state["debate_analyses"]  # the column's: its dimension's
    asked = state.get("judgment_asked") or []

    async def decide(k: int, judgment: Judgment) -> tuple[Judgment, list[Any]]:
        order = judgment.order or tuple(names_of(debate))
        choices = V.choices_in(order, ties_allowed(debate, dim))
        # the server has the judgment conversation cached where it was kept: continue it
        messages = M.decide_messages(debate, dim, judgment.comment, order, choices,
                                     asked[k] if k < len(asked) else None)
        answer, lp, records = await ctx.gateway.structured_probed(
            messages, decision_answer(order, choices, False), node="decide_debate", dimension=dim.name,
            meta=decision_meta(order, choices))
        return V.order_answer(order, choices, judgment.comment, dimension=dim.name, written=judgment,
                              decision=answer, decision_logprobs=lp), records

    done = await gathered(decide(k, j) for k, j in enumerate(judgments))
    return {**_decided(state, ctx, [a for a, _ in done]), "calls": [r for _, records in done for r in records]}


def decision_meta(order: Sequence[str], choices: list[str]) -> dict[str, Any]:
    """Call metadata of a decision (for tracing, and for scripted test models that answer by metadata)."""
    return {"debatrix_names": list(order), "debatrix_choices": choices}


def _decided(state: ColumnState, ctx: JudgeContext, answers: list[Judgment], with_analysis: bool = False
             ) -> dict[str, Any]:
    debate, dim = state["debate"], state["dimension"]
    prior = place_prior(ctx.settings, orders_of(debate, ctx.settings), ctx.mode.name, ctx.profile.profile)
    decision = V.combine(dim.name, debate, answers, ties_allowed(debate, dim), prior=prior)
    out: dict[str, Any] = {"debater_judgments": V.debater_judgments(dim.name, debate, decision),
                           "winner_decisions": [decision]}
    if with_analysis:
        out["debate_analyses"] = list(answers)
    return out


def column_sends(state: ColumnState, node: str, **extra: Any) -> Send:
    return Send(node, {"debate": state["debate"], "run_id": state["run_id"], "dimension": state["dimension"],
                       **extra})
