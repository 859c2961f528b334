"""Public API: judge a debate (sync or async), judge one speech, or get the compiled graph to embed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig

from debatrix.graphs import MODES, build_run_graph, compiled
from debatrix.graphs.build import plan_run
from debatrix.graphs.wiring import ProgressEvent, run_relaying
from debatrix.graphs.state import checkpoint_serializer, checkpoint_types

from debatrix.context import JudgeContext, run_settings
from debatrix.core.errors import ConfigurationError, ContextWindowExceeded
from debatrix.core.models import Debate, Debater, DebateFormat, Side, Speech
from debatrix.core.results import JudgeResult
from debatrix.core.settings import JudgeSettings


def build_judge_graph(settings: JudgeSettings | None = None, chat_model: BaseChatModel | None = None, *,
                      context: JudgeContext | None = None, checkpointer: Any = None, debate_key: str = "debate",
                      result_key: str = "result") -> Any:
    """The compiled judge graph for ``settings.mode``: input ``{"debate": Debate}``, output ``{"result": JudgeResult}``.

    It is async (use ``ainvoke``/``astream``) and can be added as a node of another LangGraph graph; it carries the
    context it was built with, so the parent needs no Debatrix context of its own. Streamed itself, its progress
    events reach ``stream_mode="custom"`` with or without ``subgraphs=True``; added to a parent as a subgraph, they
    reach the parent's stream under ``subgraphs=True``, as every LangGraph subgraph's do (:func:`build_judge_node`
    is the form whose events reach it without). A parent whose state keeps the debate or the result under other
    keys names them (``debate_key``, ``result_key``) and gets that node form."""
    if (debate_key, result_key) != ("debate", "result"):
        return build_judge_node(settings, chat_model, context=context, checkpointer=checkpointer,
                                debate_key=debate_key, result_key=result_key)
    return _run_graph(settings, chat_model, context, checkpointer)


def _run_graph(settings: JudgeSettings | None, chat_model: BaseChatModel | None, context: JudgeContext | None,
               checkpointer: Any) -> Any:
    settings = settings or (context.settings if context else JudgeSettings())
    return build_run_graph(context or JudgeContext.create(settings, chat_model), settings.mode,
                           checkpointer=checkpointer)


def build_judge_node(settings: JudgeSettings | None = None, chat_model: BaseChatModel | None = None, *,
                     context: JudgeContext | None = None, checkpointer: Any = None, debate_key: str = "debate",
                     result_key: str = "result") -> Callable[..., Any]:
    """The judge as a node function for another graph: it reads the debate from the parent's ``debate_key``, runs
    the judge graph with the parent's config (its callbacks reach every call) and writes only ``result_key``. Its
    progress events reach the parent's ``custom`` stream once, with or without ``subgraphs=True``."""
    graph = _run_graph(settings, chat_model, context, checkpointer)

    async def judge(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        if debate_key not in state:
            raise ConfigurationError(f"the judge node reads the debate from the state's {debate_key!r} key, which "
                                     f"this state lacks (its keys: {', '.join(map(repr, state)) or 'none'})")
        out = await run_relaying(graph, {"debate": state[debate_key]}, config)
        return {result_key: out["result"]}

    return judge


def recursion_limit(debate: Debate) -> int:
    return 4 * len(debate.speeches) + 60


def run_config(debate: Debate, config: RunnableConfig | None, run_name: str) -> RunnableConfig:
    """The caller's LangChain config (callbacks, tags, metadata, run name) with room for the debate's steps: every
    LLM call of the run reaches the callbacks, under a run named after the debate unless the caller named it."""
    run: RunnableConfig = {**(config or {})}  # type: ignore[typeddict-item]
    run["recursion_limit"] = max(run.get("recursion_limit") or 0, recursion_limit(debate))
    run.setdefault("run_name", run_name)
    run["metadata"] = {"debatrix_debate": debate.id, **(run.get("metadata") or {})}
    return run


async def _streamed(graph: Any, debate: Debate, ctx: JudgeContext,
                    on_event: Callable[[ProgressEvent], None] | None, run_id: str | None,
                    config: RunnableConfig | None = None, run_name: str = "debatrix judge") -> JudgeResult:
    result: JudgeResult | None = None
    state: dict[str, Any] = {"debate": debate}
    if run_id:
        state["run_id"] = run_id
    async for _namespace, kind, chunk in graph.astream(
            state, context=ctx, config=run_config(debate, config, run_name), stream_mode=["updates", "custom"],
            subgraphs=True):
        if kind == "custom":  # a finished step's progress, as every node of the judge emits it
            if on_event is not None and isinstance(chunk, dict) and chunk.get("debatrix") == "progress":
                on_event(ProgressEvent.of(chunk))
            continue
        for node, update in chunk.items():
            # only the judge graph has a "finish" node; its namespace is not empty when a parent graph's node runs
            # the judge (the parent's checkpoint namespace comes first)
            if node == "finish" and isinstance(update, dict) and isinstance(update.get("result"), JudgeResult):
                result = update["result"]
    if result is None:  # pragma: no cover - the graph always ends in finish
        raise ConfigurationError("the judge graph ended without a result")
    return result


async def ajudge_debate(debate: Debate, settings: JudgeSettings | None = None,
                        chat_model: BaseChatModel | None = None, *, context: JudgeContext | None = None,
                        on_event: Callable[[ProgressEvent], None] | None = None,
                        run_id: str | None = None, config: RunnableConfig | None = None) -> JudgeResult:
    """Judge a debate. Failures that leave the judgment unfinished (context window, LLM errors after retries,
    unparseable answers) give a result with ``status == "incomplete"`` and the reason; bad input raises.

    ``config`` is a LangChain ``RunnableConfig`` (callbacks, tags, metadata, ``run_name``): its callbacks see every
    node and every LLM call of the judge, whatever the transport; inside a parent graph's node the parent's own
    callbacks are inherited without it.

    With a ``context``, the run follows the context's settings (its nodes and the graph's shape read them, as the
    context adapted them: the local backend shortens answers for a CPU); of ``settings`` only the mode is used, so
    one context serves every mode of an ablation."""
    settings = settings or (context.settings if context else JudgeSettings())
    if settings.review or (context is not None and context.settings.review):
        raise ConfigurationError("review=True pauses the judge for a person, and judge_debate runs to the end: "
                                 "build the graph with build_judge_graph(settings, checkpointer=...) and resume it "
                                 "with Command(resume=corrections), or judge without review and correct the result "
                                 "with debatrix.recompute (or `debatrix review RESULT --corrections FILE`)")
    if context is None:
        try:  # the local backend is sized for this debate, or refused before its model server starts
            plan = await asyncio.to_thread(plan_run, debate, run_settings(settings, chat_model))
            ctx = await asyncio.to_thread(JudgeContext.create, settings, chat_model, [plan])
        except ContextWindowExceeded as e:
            return refused(debate, settings, e)
    else:
        ctx = context
    try:
        graph = compiled(ctx, settings.mode)
        result = await _streamed(graph, debate, ctx, on_event, run_id, config)
    finally:
        if context is None:
            ctx.close()
    if settings.escalate is None:
        return result
    return await _escalated(debate, settings, result, ctx.settings.llm.model, on_event, config)


def escalation_reason(result: JudgeResult, below: float) -> str | None:
    """Why the first judge's verdict cannot be vouched for (None: it is kept): it did not finish, its orders split
    on the winner, or its calibrated confidence is under ``below`` (only where a calibration map gave one)."""
    v = result.general.verdict if result.general is not None else None
    if result.status.value != "complete" or v is None:
        return "the first judge gave no verdict" + (f" ({result.incomplete_reason})" if result.incomplete_reason
                                                    else "")
    if v.orders_agreeing is not None and v.orders_agreeing < len(v.orders):
        return f"the first judge's orders split ({v.agreement})"
    if v.calibrated_probability is not None and v.calibrated_probability < below:
        return f"the first judge's calibrated confidence {v.calibrated_probability:.0%} is under {below:.0%}"
    return None


async def _escalated(debate: Debate, settings: JudgeSettings, first: JudgeResult, first_model: str,
                     on_event: Callable[[ProgressEvent], None] | None, config: RunnableConfig | None
                     ) -> JudgeResult:
    """The first judge's result if it can vouch for its verdict, else the second judge's on the same debate, each
    saying who decided and why."""
    from debatrix.core.results import Escalation

    esc = settings.escalate
    assert esc is not None
    why = escalation_reason(first, esc.below)
    if why is None:
        v = first.general.verdict  # type: ignore[union-attr]
        kept = "orders agree" if v.orders_agreeing is not None else "judged in one order"
        if v.calibrated_probability is not None:
            kept += f", calibrated confidence {v.calibrated_probability:.0%}"
        return first.model_copy(update={"escalation": Escalation(decided_by=first_model, escalated=False,
                                                                  reason=f"kept: {kept}")})
    second_settings = settings.model_copy(update={"llm": esc.llm, "escalate": None})
    second = await ajudge_debate(debate, second_settings, on_event=on_event, config=config)
    v = first.general.verdict if first.general is not None else None
    return second.model_copy(update={"escalation": Escalation(
        decided_by=second.settings.get("llm", {}).get("model") or esc.llm.model, escalated=True, reason=why,
        first=v, first_status=first.status.value, first_usage=first.usage)})


def refused(debate: Debate, settings: JudgeSettings, error: ContextWindowExceeded) -> JudgeResult:
    """The incomplete result of a debate refused before any call (and before a local model server started)."""
    from datetime import UTC, datetime

    from debatrix import __version__
    from debatrix.core.results import Status
    from debatrix.core.models import Usage

    now = datetime.now(UTC)
    return JudgeResult(debatrix_version=__version__, debate_id=debate.id, motion=debate.motion, format=debate.format,
                       mode=settings.mode, status=Status.INCOMPLETE,
                       incomplete_reason=f"preflight: ContextWindowExceeded: {error}", dimensions=(), general=None,
                       usage=Usage(), settings=settings.public_dict(), started_at=now, finished_at=now)


def judge_debate(debate: Debate, settings: JudgeSettings | None = None, chat_model: BaseChatModel | None = None,
                 **kwargs: Any) -> JudgeResult:
    """Synchronous :func:`ajudge_debate` (not usable inside a running event loop: await ``ajudge_debate``)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(ajudge_debate(debate, settings, chat_model, **kwargs))
    raise ConfigurationError("judge_debate was called inside a running event loop; use `await ajudge_debate(...)`")


def single_speech(text: str, motion: str, speaker: str = "speaker", side: Side = Side.PRO,
                  item_id: str = "speech") -> Debate:
    return Debate(id=item_id, motion=motion, format=DebateFormat.SINGLE,
                  debaters=(Debater(name=speaker, side=side),), speeches=(Speech(speaker=speaker, content=text),))


async def ajudge_speech(text: str, motion: str, settings: JudgeSettings | None = None,
                        chat_model: BaseChatModel | None = None, *, speaker: str = "speaker",
                        side: Side = Side.PRO, context: JudgeContext | None = None,
                        config: RunnableConfig | None = None) -> JudgeResult:
    """Judge one speech on its own (per dimension: analysis, comment, score 1-10; default dimension: general);
    ``config`` as for :func:`ajudge_debate`."""
    settings = settings or (context.settings if context else JudgeSettings())
    ctx = context or await asyncio.to_thread(JudgeContext.create, settings, chat_model)
    try:
        graph = compiled(ctx, "speech")
        return await _streamed(graph, single_speech(text, motion, speaker, side), ctx, None, None, config,
                               "debatrix judge speech")
    finally:
        if context is None:
            ctx.close()


def judge_speech(text: str, motion: str, settings: JudgeSettings | None = None,
                 chat_model: BaseChatModel | None = None, **kwargs: Any) -> JudgeResult:
    return asyncio.run(ajudge_speech(text, motion, settings, chat_model, **kwargs))


__all__ = ["MODES", "JudgeContext", "ProgressEvent", "ajudge_debate", "ajudge_speech", "build_judge_graph",
           "checkpoint_serializer", "checkpoint_types", "judge_debate", "judge_speech"]
