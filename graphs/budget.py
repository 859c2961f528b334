"""How much context a judgment needs, known before any call: the largest request a mode makes on a debate.

The prompts are the real ones, rendered with the debate's own speeches; answers not written yet (earlier analyses,
judgments) stand in at their token caps, so the estimate is an upper bound of what the run will send. Used by the
graph's ``prepare`` step, by the local backend to size (or refuse) the model server before it starts, and by
``debatrix validate --mode``.
"""

from __future__ import annotations

from dataclasses import dataclass

from debatrix import prompting as P
from debatrix.dimension import Dimension
from debatrix.errors import ContextWindowExceeded
from debatrix.llm import token_cap
from debatrix.models import Debate, SpeechAnalysis
from debatrix.settings import JudgeSettings
from debatrix.tokens import count_message_tokens

# Local GGUF models count tokens with their own tokenizers; Qwen2.5's counted up to 1.074× o200k_base on 20
# PanelBench debates, so estimates for a local model carry a 10% margin (the server still refuses a prompt that
# does not fit, which the gateway reports as ContextWindowExceeded).
LOCAL_TOKEN_MARGIN = 1.10


@dataclass(frozen=True)
class Request:
    tokens: int  # prompt plus room for the answer
    what: str


def _placeholder(tokens: int) -> str:
    return " ".join(["word"] * tokens)  # one token a word in the tokenizers used here


def _count(system: str, text: str, settings: JudgeSettings) -> int:
    n = count_message_tokens([("system", system), ("human", text)], settings.llm.tokenizer)
    if settings.llm.uses_local or settings.llm.served_locally:
        n = int(n * LOCAL_TOKEN_MARGIN) + 1
    return n


def largest_request(debate: Debate, mode: str, settings: JudgeSettings, dims: list[Dimension]) -> Request:
    """The largest request (prompt + answer room) a ``mode`` run on ``debate`` makes."""
    from .modes import SHAPES
    from .nodes import choices_for, header, judgment_words, names_of, panel_words, system_message

    shape = SHAPES[mode]
    fence = P.fence_for(debate)
    system = str(system_message(debate).content)
    head = header(debate)
    cap_out = settings.llm.max_output_tokens
    analysis_cap = min(token_cap(settings.analysis_words), cap_out)
    best = Request(0, "")

    extra = 96 if settings.llm.merge_score_call else 0  # merged answers are JSON with their scores

    def consider(text: str, answer: int, what: str) -> None:
        nonlocal best
        tokens = _count(system, text, settings) + min(answer + extra, cap_out)
        if tokens > best.tokens:
            best = Request(tokens, what)

    fake = _placeholder(analysis_cap)
    n = len(debate.speeches)
    for dim in dims:
        if shape.per_speech:
            for i in range(n):
                earlier = [SpeechAnalysis(dimension=dim.name, index=j, speaker=debate.speeches[j].speaker,
                                          analysis=fake) for j in range(i)]
                before = P.previous_speeches(debate, i, fence) if shape.context == "speeches" else ""
                after = P.previous_analyses(earlier) if shape.context == "analyses" else ""
                consider(P.render("analyze_speech.j2", P.AnalyzeSpeechVars(
                    header=head, before=before, speech=P.speech_block(debate, i, fence), after=after, index=i + 1,
                    speaker=debate.speeches[i].speaker, dimension=dim.name, focus=dim.prompts.analyze,
                    use_context=dim.prompts.context, words=settings.analysis_words)),
                    analysis_cap, f"the analysis of speech {i + 1} ({dim.name})")
        if not shape.debate_stage:
            continue
        if shape.per_speech:
            material = P.analyses_material([SpeechAnalysis(dimension=dim.name, index=j, analysis=fake,
                                                           speaker=debate.speeches[j].speaker) for j in range(n)])
            what = f"the judgment of the debate from its analyses ({dim.name})"
        else:
            material, what = P.transcript(debate, fence), f"the judgment of the full debate transcript ({dim.name})"
        words = judgment_words(settings, debate)
        choices = choices_for(debate, dim)
        consider(P.render("judge_debate.j2", P.JudgeDebateVars(
            header=head, material=material, dimension=dim.name, focus=dim.prompts.judge, names=names_of(debate),
            choices=choices, allow_tie="tie" in choices, words=words)), min(token_cap(words), cap_out), what)
    if shape.panel:
        judgment = _placeholder(min(token_cap(judgment_words(settings, debate)), cap_out))
        reports = [{"name": d.name, "weight": f"{d.weight:g}", "scores": "-", "winner": "-", "judgment": judgment}
                   for d in dims]
        words = panel_words(settings)
        consider(P.render("panel.j2", P.PanelVars(header=head, reports=reports, choices=names_of(debate),
                                                  words=words)), min(token_cap(words), cap_out), "the panel")
    return best


def fit_problem(debate: Debate, mode: str, settings: JudgeSettings, dims: list[Dimension],
                window: int) -> ContextWindowExceeded | None:
    """The error a run would meet, or None when its largest request fits ``window``."""
    need = largest_request(debate, mode, settings, dims)
    if need.tokens > window:
        return ContextWindowExceeded(need.tokens, window, need.what)
    return None
