"""The flow mode: the debate read as an adjudicator flows it, speech by speech (the paper's iterative analysis),
every decision small, asked with probabilities and cited by passage id; the verdicts computed from the flow.

For each speech s_i, in the order spoken (``flow_speech``, one step per speech; its analysis memory is the flow so
far, ``state["flows"]``), each of its passages p is read once and asked, one question after another:

    is p an argument about the motion (a reason for or against it)?                     P(argument)
    does p cite evidence (a source, figure, study or example)?                           P(evidence)
    is p clearly written and correctly spelled?                                          P(clear)
    does p make this point of the other side, or argue about it: "<its first words>"?    P(answers the row)

(the first two as ``debatrix bench decisions`` measured them: a three-way question, argues with evidence / without /
neither, gave every passage of a debate nearly the same probabilities)

The rows a speech may answer are the other side's earlier passages the flow holds as arguments; each passage
proposes the row whose rarer words it shares most, and each row proposed is asked once, of the passage sharing most
with it (the lookup proposes, the model decides). Every question restates what it asks about (a small model does
not look an id up: ``debatrix bench decisions``) and reads one passage, not the speech around it, so the prompt is
the passage and a few words, and the questions about one passage share it up to the question (a prompt cache reads
each passage once). Every question ends "Answer yes or no.": said once in the system message instead (cached, so
~5 tokens fewer a call), the model rated the garbled side of ``bench contrast``'s language change the clearer more
often, and an injected concession in a passage turned two verdicts of the real-model injection test. The decisions
are shared by the
dimensions: each weighs its own part of the ledger (``flow_verdicts``, no call; :mod:`debatrix.core.flow`), and the
panel's verdict is their weighted mean.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from debatrix.context import JudgeContext
from debatrix.core import prompting as P
from debatrix.core.errors import IncompleteJudgment
from debatrix.core.flow import (
    GIST_ASKED,
    Passage,
    asked_pairs,
    clarity_asked,
    combined,
    debater_comment,
    flow_verdict,
    gist,
    ledger,
    speech_note,
    speech_value,
)
from debatrix.core.models import Debate, DebaterJudgment, Line, Mark, Rating, SpeechAnalysis, SpeechFlow, SpeechJudgment, \
    Verdict

from .state import PANEL, JudgeState
from .wiring import add_step

YES_NO = ("yes", "no")


def passage_messages(debate: Debate, p: Passage, question: str) -> list[Any]:
    """A question about passage ``p``: the debate's header and the passage, then the question (every question about
    one passage shares its prompt up to the question). The preflight sizes the flow with the same messages."""
    fence = P.fence_for(debate)
    material = P.header(debate) + P.render("flow_passage.j2", P.FlowPassageVars(
        fence=fence, id=p.id, speaker=p.speaker, side=P.side_label(debate, p.speaker),
        text=P.quoted(p.text, fence)))
    return [SystemMessage(content=P.system_text(fence)), HumanMessage(content=material + question)]


def about_passage(debate: Debate, p: Passage, template: str) -> list[Any]:
    """One of the questions about passage ``p`` alone (argues, evidence, clear), with its prompt."""
    return passage_messages(debate, p, P.render(template, P.FlowQuestionVars(id=p.id)))


def answer_question(debate: Debate, p: Passage, row: Passage) -> str:
    """Whether passage ``p`` answers the earlier point ``row``, the point restated."""
    fence = P.fence_for(debate)
    return P.render("flow_answer.j2", P.FlowAnswerVars(fence=fence, id=p.id, target=row.id, speaker=row.speaker,
                                                       text=P.quoted(gist(row.text, GIST_ASKED), fence)))


async def flow_speech(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
    """One speech read into the flow, passage by passage: whether each argues the motion, backs it with evidence,
    reads clearly (the speech's longest passages only), and answers the earlier point of the other side it shares
    most words with. A decision whose answer is none of its options is missing (its call counted); the speech keeps
    the others."""
    debate, i = state["debate"], state.get("index", 0)
    index = debate.passage_index
    earlier = state.get("flows", [])
    decide = ctx.gateway.decision
    calls, marks, clear, missing = [], [], [], []
    answered: dict[str, float] = {}  # row -> P(this speech answers it): each row is asked once a speech
    pairs = asked_pairs(debate, earlier, i)
    rated = set(clarity_asked(debate, i))
    # asked one after another: the questions about a passage share its prompt, so a server's prompt cache reads
    # each passage once (concurrent requests would each take a slot and read it again)
    try:
        for p in (p for p in debate.passages if p.speech == i):
            meta = {"debatrix_index": i, "debatrix_target": p.id}
            argues, record = await decide(about_passage(debate, p, "flow_argues.j2"), YES_NO,
                                          node="flow_speech", meta=meta)
            calls.append(record)
            evidence, record = await decide(about_passage(debate, p, "flow_evidence.j2"), YES_NO,
                                            node="flow_speech", meta=meta)
            calls.append(record)
            missing += [f"whether {p.id} {what}" for what, dist in (("argues", argues), ("has evidence", evidence))
                         if dist is None]
            marks.append(Mark(id=p.id, argument=None if argues is None else round(argues["yes"], 4),
                              evidence=None if evidence is None else round(evidence["yes"], 4)))
            if p.id in rated:
                dist, record = await decide(about_passage(debate, p, "flow_clear.j2"), YES_NO,
                                            node="flow_speech", meta=meta)
                calls.append(record)
                if dist is None:
                    missing.append(f"whether {p.id} reads clearly")
                else:
                    clear.append(dist["yes"])
            for row in pairs.get(p.id, []):
                question = answer_question(debate, p, index[row])
                dist, record = await decide(passage_messages(debate, p, question), YES_NO, node="flow_speech",
                                            meta=meta)
                calls.append(record)
                if dist is None:
                    missing.append(f"whether {p.id} answers {row}")
                else:
                    answered[row] = dist["yes"]
    except IncompleteJudgment as e:  # the run stops here: the speech's answered decisions are still counted
        e.calls = [*calls, *getattr(e, "calls", [])]
        raise
    lines = tuple(Line(speech=i, target=row, refutes=round(y, 4))
                  for row, y in sorted(answered.items(), key=lambda kv: debate.passages.index(index[kv[0]])))
    yes = sum(clear) / len(clear) if clear else None
    rating = None if yes is None else Rating(expected=round(1 + 4 * yes, 4),
                                             probabilities={"yes": round(yes, 4), "no": round(1 - yes, 4)})
    flow = SpeechFlow(dimension="flow", index=i, speaker=debate.speeches[i].speaker, marks=tuple(marks),
                      lines=lines, rating=rating, missing="; ".join(missing))
    return {"flows": [flow], "calls": calls, "index": i + 1}


def after_flow_speech(state: JudgeState) -> str:
    if state.get("failures"):
        return "finish"
    return "flow_speech" if state["index"] < len(state["debate"].speeches) else "flow_verdicts"


def _score(value: float) -> float:
    return round(1 + 9 * max(0.0, min(1.0, value)), 3)


async def flow_verdicts(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
    """Every dimension's analyses, scores and verdict computed from the flow (no call), and the panel's verdict as
    their weighted mean. Scores are on 1-10: a speech's from its own decisions, a debater's from their
    probability of winning the dimension."""
    debate = state["debate"]
    flows = sorted(state.get("flows", []), key=lambda f: f.index)
    out: dict[str, list[Any]] = {"analyses": [], "speech_judgments": [], "debater_judgments": [],
                                 "winner_decisions": []}
    ledgers, parts = {}, []
    warnings = tuple(f"speech {f.index + 1}: missing {f.missing}" for f in flows if f.missing)
    read = ledger(debate, flows, "flow")  # one reading: each dimension weighs its own part of it
    for dim in state.get("dimensions", []):
        led = ledgers[dim.name] = read.model_copy(update={"dimension": dim.name})
        verdict = flow_verdict(led, dim.name)
        parts.append((dim.weight, verdict))
        for f in flows:
            out["analyses"].append(SpeechAnalysis(dimension=dim.name, index=f.index, speaker=f.speaker,
                                                  analysis=speech_note(f, debate, dim.name)))
            value = speech_value(f, dim.name)
            if value is not None:
                score = _score(value)
                out["speech_judgments"].append(SpeechJudgment(
                    dimension=dim.name, index=f.index, speaker=f.speaker, score=round(score), expected_score=score,
                    comment=f"{dim.name} {value:.2f} from its own decisions (0 to 1), {score:g} of 10"))
        for d in debate.debaters:
            out["debater_judgments"].append(DebaterJudgment(
                dimension=dim.name, debater=d.name, score=_score(verdict.probabilities[d.name]),
                comment=debater_comment(led, flows, debate, d.name)))
        out["winner_decisions"].append(Verdict(dimension=dim.name, comment=verdict.reason, winner=verdict.winner,
                                               probabilities=verdict.probabilities, method="logprobs",
                                               warnings=warnings))
    panel = {}
    if parts:  # the panel's verdict, under its own key as the panel subgraph writes it
        merged = combined(PANEL, parts)
        panel["panel"] = Verdict(dimension=PANEL, comment=merged.reason, winner=merged.winner,
                                 probabilities=merged.probabilities, method="logprobs", warnings=warnings)
    return {**out, **panel, "ledgers": ledgers}


def to_flow(state: JudgeState) -> str:
    return "finish" if state.get("failures") else "flow_speech"


def add_flow(g: Any, ctx: JudgeContext | None, mode: str) -> None:
    """The flow's steps in a judge graph whose ``prepare`` and ``finish`` the caller adds."""
    add_step(g, "flow_speech", flow_speech, ctx, mode)
    add_step(g, "flow_verdicts", flow_verdicts, ctx, mode)
    g.add_conditional_edges("flow_speech", after_flow_speech, ["flow_speech", "flow_verdicts", "finish"])
    g.add_edge("flow_verdicts", "finish")

