"""What a run will do, known before any call (its :class:`RunPlan`): its dimensions, its calls and the largest
request a mode makes on a debate.

The prompts are the real ones, rendered with the debate's own speeches; answers not written yet (earlier analyses,
judgments) stand in at their token caps, so the estimate is an upper bound of what the run will send. A run's plan
is made once: by its caller before the local backend sizes (or refuses) the model server, else by the graph's
first step, :func:`prepare` (here: the debate checked, the plan taken from the context or made, the run's size
checked against the context window and the call budget before any call); ``debatrix validate --mode`` makes one
per file.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import BaseMessage

from debatrix.context import JudgeContext
from debatrix.core.errors import ContextWindowExceeded, InvalidDebateError
from debatrix.core.loader import validated

from debatrix.core import prompting as P
from debatrix.core.dimension import Dimension, DimensionRegistry
from debatrix.llm.gateway import token_cap
from debatrix.core.models import Debate, SpeechAnalysis
from debatrix.core.flow import GIST_ASKED, gist
from debatrix.core.modes import Request, RunPlan, calls_of, get_mode, resolve_dimensions
from debatrix.core.settings import JudgeSettings
from debatrix.core.tokens import count_message_tokens, count_tokens

from . import messages as M
from .answers import analysis_answer_tokens
from .state import JudgeState

# Local GGUF models count tokens with their own tokenizers; Qwen2.5's counted up to 1.074× o200k_base on 20
# PanelBench debates, so estimates for a local model carry a 10% margin (the server still refuses a prompt that
# does not fit, which the gateway reports as ContextWindowExceeded).
LOCAL_TOKEN_MARGIN = 1.10


RETRY_TOKENS = 96  # what an answer asked again is told (prompts/judgment_missing.j2 and the like), generously


def _placeholder(tokens: int) -> str:
    return " ".join(["word"] * tokens)  # one token a word in the tokenizers used here


def _count(messages: list[BaseMessage], settings: JudgeSettings) -> int:
    n = count_message_tokens([(m.type, str(m.content)) for m in messages], settings.llm.tokenizer)
    if settings.llm.uses_local or settings.llm.served_locally:
        n = int(n * LOCAL_TOKEN_MARGIN) + 1
    return n


def largest_request(debate: Debate, mode: str, settings: JudgeSettings, dims: list[Dimension]) -> Request:
    """The largest request (prompt + answer room) a ``mode`` run on ``debate`` makes, rendered by the same
    functions the nodes use."""
    shape = get_mode(mode)
    fence = P.fence_for(debate)
    cap_out = settings.llm.max_output_tokens
    analysis_cap = min(analysis_answer_tokens(settings.analysis_words), cap_out)
    extra = 96 if settings.speech_score_merged(mode) else 0  # merged answers carry their scores in the JSON
    best = Request(0, "")

    def consider(messages: list[BaseMessage], answer: int, what: str) -> None:
        nonlocal best
        tokens = _count(messages, settings) + min(answer + extra, cap_out)
        if tokens > best.tokens:
            best = Request(tokens, what)

    if shape.context == "flow":
        return _largest_decision(debate, settings)
    n = len(debate.speeches)
    candidates = _largest_candidates(debate, settings) if shape.per_speech else []
    for dim in dims:
        fake = [SpeechAnalysis(dimension=dim.name, index=j, speaker=debate.speeches[j].speaker,
                               analysis=_placeholder(analysis_cap)) for j in range(n)]
        if shape.per_speech:
            for i in candidates:
                before = P.previous_speeches(debate, i, fence) if shape.context == "speeches" else ""
                after = P.analyses_block(fake[:i]) if shape.context == "analyses" else ""
                consider(M.analysis_messages(debate, dim, i, before, after, settings.analysis_words), analysis_cap,
                         f"the analysis of speech {i + 1} ({dim.name})")
        if shape.debate_stage:
            words = M.judgment_words(settings, debate)
            what = (f"the judgment of the debate from its analyses ({dim.name})" if shape.per_speech else
                    f"the judgment of the full debate transcript ({dim.name})")
            answer = min(token_cap(words), cap_out)
            # a judgment missing a debater's paragraph is asked for it in the same conversation (nodes.judge_dimension)
            consider(M.judgment_messages(debate, dim, fake if shape.per_speech else [], words),
                     2 * answer + RETRY_TOKENS, what)
    if shape.panel:
        judgment = _placeholder(min(token_cap(M.judgment_words(settings, debate)), cap_out))
        reports = [{"name": d.name, "weight": f"{d.weight:g}", "scores": "-", "winner": "-", "judgment": judgment}
                   for d in dims]
        words = M.panel_words(settings)
        answer = min(token_cap(words), cap_out)
        # a reason that cites nothing said is asked what decided it, in the same conversation (panel.panel_comment)
        consider(M.panel_messages(debate, reports, M.names_of(debate), words),
                 answer + RETRY_TOKENS + min(token_cap(words // 2), cap_out), "the panel")
    return best


def _largest_decision(debate: Debate, settings: JudgeSettings) -> Request:
    """The flow's largest request: its longest passage asked about the longest point it may answer (a decision's
    answer is a few tokens)."""
    if not debate.passages:
        return Request(0, "")
    p = max(debate.passages, key=lambda p: len(p.text))
    row = max(debate.passages, key=lambda p: len(gist(p.text, GIST_ASKED)))
    tokens = _count(M.passage_messages(debate, p, M.answer_question(debate, p, row)), settings)
    return Request(tokens + 8, f"a decision on passage {p.id}")


def _largest_candidates(debate: Debate, settings: JudgeSettings) -> list[int]:
    """The speeches whose analysis request can be the largest. A speech's request holds its block and everything
    before it (earlier analyses or speeches), and the task text differs only by speaker, so of one speaker's
    speeches, speech i's request is no larger than a later speech j's when its block is no longer: only the
    speeches whose block is longer than every later block of their speaker are rendered (a few, where a debate of
    thousands of speeches would render thousands of ever longer prompts)."""
    fence = P.fence_for(debate)
    out, longest = [], {}
    for i in range(len(debate.speeches) - 1, -1, -1):
        speaker = debate.speeches[i].speaker
        size = count_tokens(P.speech_block(debate, i, fence), settings.llm.tokenizer)
        if size > longest.get(speaker, -1):
            out.append(i)
            longest[speaker] = size
    return sorted(out)


def plan_run(debate: Debate, settings: JudgeSettings, registry: DimensionRegistry | None = None,
             mode: str | None = None) -> RunPlan:
    """The plan of judging ``debate`` in ``mode`` (the settings' by default) with ``settings`` as the run will see
    them (:func:`debatrix.context.run_settings`: on the embedded model, its shorter answers). The call count comes
    first: a debate of thousands of speeches over the call budget is not rendered to size its context."""
    mode = mode or settings.mode
    dims = resolve_dimensions(mode, settings.dimensions, debate.format,
                              registry or DimensionRegistry(settings.dimension_dirs))
    calls = calls_of(mode, settings, debate, len(dims))
    over = over_budget(mode, calls, settings)
    return RunPlan(debate, mode, tuple(dims), calls, None if over else largest_request(debate, mode, settings, dims))


def over_budget(mode: str, calls: int, settings: JudgeSettings) -> bool:
    """Whether a run of ``calls`` calls is refused by ``max_llm_calls`` (the single-speech judge is never: its
    calls are one speech's)."""
    return mode != "speech" and calls > settings.max_llm_calls


async def prepare(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
    debate = state.get("debate")
    if isinstance(debate, dict):  # a JSON input (a deployment's): refused in the loader's words
        debate = validated(debate, "<graph input>")
    if not isinstance(debate, Debate):
        raise InvalidDebateError("<graph input>", [("debate", "expected a Debate")])
    # the plan the caller made for this run (and sized the local server with), else made here; rendering a
    # long debate's prompts takes a while: not on the event loop
    mode = ctx.mode.name
    plan = ctx.plan_for(debate, mode) or await asyncio.to_thread(plan_run, debate, ctx.settings, ctx.registry, mode)
    failures = []
    window = ctx.settings.llm.context_window
    if over_budget(mode, plan.calls, ctx.settings):
        failures.append(f"CallBudgetExceeded: judging this debate takes {plan.calls} LLM calls, more than "
                        f"max_llm_calls = {ctx.settings.max_llm_calls}; nothing was sent (raise the limit to "
                        "judge it)")
    elif plan.largest is not None and plan.largest.tokens > window:
        problem = ContextWindowExceeded(plan.largest.tokens, window, plan.largest.what)
        failures.append(f"preflight: ContextWindowExceeded: {problem}")
    return {
        "debate": debate,
        "dimensions": list(plan.dimensions),
        "run_id": state.get("run_id") or uuid.uuid4().hex[:16],
        "started_at": datetime.now(UTC).isoformat(),
        "failures": failures,
    }
