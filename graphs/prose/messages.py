"""The prose modes' requests, built in one place (the flow's are :mod:`debatrix.core.flow.asks`): the nodes call these
to ask, and :mod:`debatrix.graphs.build` calls the same ones to size a run before its first call, so what is
measured is what is sent. Text comes from the templates in
``prompts/`` (rendered by :mod:`debatrix.core.prompting`), never from literals here.

Prompts put what calls share first: every call on a debate starts with the same system message, and the three
dimensions' analyses of speech i start with the header and speech i, so a server with a prompt cache (llama.cpp,
vLLM, OpenAI) reads that once; what differs (a column's earlier analyses, its task) comes last. A request that
continues a conversation (a retry, a missing paragraph, a score or decision read from a cached judgment) appends
the model's answer and the new question to the messages it was first asked with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from debatrix.core import prompting as P
from debatrix.core.dimension import Dimension
from debatrix.core.models import Debate, DebateFormat, SpeechAnalysis
from debatrix.core.settings import JudgeSettings

from . import verdicts as V
from .answers import analysis_points


def names_of(debate: Debate) -> list[str]:
    return [d.name for d in debate.debaters]


def ties_allowed(debate: Debate, dimension: Dimension) -> bool:
    return dimension.allow_tie and debate.format is DebateFormat.ONE_V_ONE


def judgment_words(settings: JudgeSettings, debate: Debate) -> int:
    """A comment's length per debater, and one more for the comparison and the winner."""
    return settings.comment_words * (len(debate.debaters) + 1)


def panel_words(settings: JudgeSettings) -> int:
    return round(settings.comment_words * 1.5)


def system_message(debate: Debate) -> SystemMessage:
    """The same for every call on a debate, so the server can reuse the cached prefix."""
    return SystemMessage(content=P.system_text(P.fence_for(debate)))


def extract_system() -> SystemMessage:
    """The system message of the short calls that read a verdict or score from a judgment alone."""
    return SystemMessage(content=P.extract_system_text())


def continued(messages: Sequence[BaseMessage], answer: str, question: str) -> list[BaseMessage]:
    """The conversation ``messages`` continued: the model's ``answer``, then ``question``."""
    return [*messages, AIMessage(content=answer), HumanMessage(content=question)]


# ------------------------------------------------------------------------------------------- speech analysis


def relevant_block(debate: Debate, chunks: Sequence[dict[str, Any]]) -> str:
    """The context memory's passages retrieved for an analysis (``chunks``: index, speaker, text)."""
    fence = P.fence_for(debate)
    blocks = [P.render("speech_block.j2", P.SpeechBlockVars(
        fence=fence, index=c["index"] + 1, speaker=c["speaker"], side="excerpt",
        content=P.marked(P.speech_text(c["text"], fence)))) for c in chunks]
    return P.render("relevant_chunks.j2", P.ItemsVars(items=blocks))


def analysis_messages(debate: Debate, dim: Dimension, i: int, before: str, after: str, words: int,
                      with_score: bool = False) -> list[BaseMessage]:
    """The request that analyses speech ``i``."""
    speaker = debate.speeches[i].speaker
    text = P.render("analyze_speech.j2", P.AnalyzeSpeechVars(
        header=P.header(debate), before=before, speech=P.speech_block(debate, i, P.fence_for(debate)), after=after,
        index=i + 1, speaker=speaker, side=P.side_label(debate, speaker), dimension=dim.name,
        focus=dim.prompts.analyze, use_context=dim.prompts.context, points=analysis_points(words),
        score=with_score))
    return [system_message(debate), HumanMessage(content=text)]


def score_messages(debate: Debate, dim: Dimension, analysis: SpeechAnalysis,
                   asked: Sequence[BaseMessage] | None) -> list[BaseMessage]:
    """A speech's score read from its analysis: where the server caches prompts, the analysis conversation
    (``asked``) continued, the model having read all of it but the question; elsewhere a short prompt carrying the
    analysis alone, so no debate material is sent twice."""
    if asked:
        # the analysis as text, not the JSON the model wrote: llama.cpp re-reads the answer either way (a grammar's
        # tokens are not those the text tokenises into), and the text is the shorter read
        return continued(asked, analysis.analysis, P.render("score_ask.j2", P.ScoreAskVars(
            index=analysis.index + 1, dimension=dim.name)))
    text = P.render("score_speech.j2", P.ScoreSpeechVars(
        index=analysis.index + 1, speaker=analysis.speaker, side=P.side_label(debate, analysis.speaker),
        dimension=dim.name, analysis=analysis.analysis))
    return [extract_system(), HumanMessage(content=text)]


# ------------------------------------------------------------------------------------------- the column's judgment


def judgment_messages(debate: Debate, dim: Dimension, analyses: list[SpeechAnalysis], words: int,
                      order: Sequence[str] | None = None, grouped: bool = False) -> list[BaseMessage]:
    """The column's judgment: over its analyses, or over the whole debate where there are none (the raw modes).
    ``grouped``: the judgment is asked in several orders, and each order sees the debaters, and the material
    debater by debater, in its own order (see :mod:`.verdicts`)."""
    by = list(order) if grouped and order else None
    if analyses:
        material, focus = P.analyses_material(analyses, by), dim.prompts.judge
    else:
        material, focus = P.transcript(debate, P.fence_for(debate), grouped_by=by), dim.prompts.judge_debate
    names = list(order) if order else names_of(debate)
    text = P.render("judge_debate.j2", P.JudgeDebateVars(
        header=P.header(debate, by), material=material, dimension=dim.name, focus=focus, names=names,
        choices=V.choices_in(names, ties_allowed(debate, dim)), allow_tie=ties_allowed(debate, dim), words=words))
    return [system_message(debate), HumanMessage(content=text)]


def judgment_missing(sent: Sequence[BaseMessage], judgment: str, dimension: str,
                     missing: Sequence[str]) -> list[BaseMessage]:
    """A judgment's conversation continued with the question for the debaters it wrote no paragraph on."""
    return continued(sent, judgment, P.render("judgment_missing.j2", P.JudgmentMissingVars(
        dimension=dimension, missing=list(missing))))


def ask_merged(messages: list[BaseMessage], scores: bool) -> list[BaseMessage]:
    """``messages`` whose last question also asks for the structured answer in the same call: the winner, and
    with ``scores`` every debater's score."""
    *head, last = messages
    ask = P.render("merged_answer.j2", P.MergedAnswerVars(scores=scores))
    return [*head, HumanMessage(content=f"{last.content}{ask}")]


def decide_messages(debate: Debate, dim: Dimension, judgment: str, order: Sequence[str], choices: list[str],
                    asked: Sequence[BaseMessage] | None) -> list[BaseMessage]:
    """The scores and winner read from one order's judgment: the judgment's conversation continued where the
    server has it cached (``asked``), else a short prompt carrying the judgment alone."""
    if asked:
        return continued(asked, judgment, P.render("decide_ask.j2", P.DecideAskVars(
            dimension=dim.name, names=list(order), choices=choices)))
    text = P.render("decide_debate.j2", P.DecideDebateVars(
        motion=P.sanitize(debate.motion, P.fence_for(debate)), dimension=dim.name, judgment=judgment,
        names=list(order), choices=choices))
    return [extract_system(), HumanMessage(content=text)]


# ------------------------------------------------------------------------------------------- the panel


def panel_messages(debate: Debate, reports: list[dict[str, str]], order: Sequence[str],
                   words: int) -> list[BaseMessage]:
    """The chair's request over the dimensions' reports (name, weight, scores, winner, judgment), the debaters in
    ``order``."""
    text = P.render("panel.j2", P.PanelVars(header=P.header(debate), reports=reports, choices=list(order),
                                            words=words))
    return [system_message(debate), HumanMessage(content=text)]


def panel_cite(sent: Sequence[BaseMessage], reason: str) -> list[BaseMessage]:
    """The chair's conversation continued: its reason named nothing said in the debate; name what decided it."""
    return continued(sent, reason, P.render("panel_cite.j2", P.NoVars()))


def panel_decide_messages(debate: Debate, comment: str, order: Sequence[str]) -> list[BaseMessage]:
    """The overall winner read from one order's chair comment alone."""
    text = P.render("panel_decide.j2", P.PanelDecideVars(
        motion=P.sanitize(debate.motion, P.fence_for(debate)), judgment=comment, choices=list(order)))
    return [extract_system(), HumanMessage(content=text)]
