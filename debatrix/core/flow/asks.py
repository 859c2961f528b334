"""What the flow asks the model: the kinds of decision (:data:`KINDS`) and which a run asks, which earlier rows
each passage is asked whether it answers (a lookup by shared words and closeness in meaning: the lookup proposes,
the model decides), how many calls a run sends at most, and the requests themselves, built from the templates in
``prompts/``, so the node sends and the preflight sizes the same messages."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from debatrix.core import prompting as P
from debatrix.core.models import Debate, Passage
from debatrix.core.passages import UNSPACED
from debatrix.core.profile import JudgeProfile

from .ledger import ARGUMENT_AT, SpeechFlow, gist
from .measures import MEASURES, blind_reason



# ------------------------------------------------------------------- which rows a speech is asked about (a lookup)


_WORD = re.compile(r"\w+")


STEM_CHARS = 5  # a spaced word is matched by its first letters, so a word's inflected forms meet


def terms(text: str) -> list[str]:
    """A text's words, lower-cased, in any script: ``\\w`` runs cut to their first :data:`STEM_CHARS` letters (a
    language-blind stem: "соперничество" and "соперничества", "evidence" and "evident" meet), and in scripts without
    spaces the runs' character pairs (a lone character as itself)."""
    out: list[str] = []
    for w in _WORD.findall(text.lower()):
        if not UNSPACED.search(w):
            out.append(w[:STEM_CHARS])
            continue
        last = 0
        for m in UNSPACED.finditer(w):
            if m.start() > last:
                out.append(w[last:m.start()])
            run = m.group(0)
            out += [run] if len(run) == 1 else [run[k:k + 2] for k in range(len(run) - 1)]
            last = m.end()
        if last < len(w):
            out.append(w[last:])
    return out


def idf(docs: Sequence[str]) -> dict[str, float]:
    """log(N / df) of every word of ``docs``: how much sharing that word says (a word in every document: nothing)."""
    df: dict[str, int] = {}
    for d in docs:
        for w in set(terms(d)):
            df[w] = df.get(w, 0) + 1
    return {w: math.log(len(docs) / n) for w, n in df.items()}


def covered(words: Sequence[str], within: set[str], weights: dict[str, float]) -> float:
    """The share of ``words``' weight (each distinct word once, unknown words at the largest weight) found in
    ``within``."""
    top = max(weights.values(), default=1.0)
    distinct = set(words)
    total = sum(weights.get(w, top) for w in distinct)
    return sum(weights.get(w, top) for w in distinct if w in within) / total if total else 0.0


def open_rows(debate: Debate, flows: Sequence[SpeechFlow], index: int) -> list[str]:
    """The rows speech ``index`` may answer: earlier passages of another side that the flow so far holds as
    arguments (a passage not yet marked, whose speech's decisions are missing, counts as one)."""
    marks = {m.id: m for f in flows for m in f.marks}
    side = debate.debater(debate.speeches[index].speaker).side
    out = []
    for p in debate.passages:
        if p.speech >= index:
            break
        if not debate.could_answer(index, p.speech):  # written without seeing it (a simultaneous round)
            continue
        mark = marks.get(p.id)
        if p.side is not side and (mark is None or mark.argument is None or mark.argument >= ARGUMENT_AT):
            out.append(p.id)
    return out


GIST_ASKED = 16  # words of a row restated in its question: enough to name the point (every word is read once a question)


ASK_PER_PASSAGE = 3  # earlier points one passage is asked about at most: a rebuttal often answers several


def asked_budget(own: int, rows: int) -> int:
    """The answer questions a speech of ``own`` passages is asked at most, with ``rows`` points open to it: every
    point where there are few, up to :data:`ASK_PER_PASSAGE` a passage where there are many (the budget grows
    with the speech and with the debate before it)."""
    return min(rows, ASK_PER_PASSAGE * own)


#: the kinds of decision the flow can ask: of a passage, whether it argues the motion, whether it cites evidence,
#: whether it reads clearly; of a passage and an earlier point of the other side, whether it answers it. A model's
#: profile measures each (``debatrix profile``); one added here is measured with no change to that command
KINDS = ("argues", "evidence", "clear", "answers")
#: the kinds asked of a passage alone (the rest ask about a passage and an earlier point)
MARKS = ("argues", "evidence", "clear")


def asked_kinds(measures: Iterable[str | None], every: bool = False,
                profile: JudgeProfile | None = None) -> tuple[str, ...]:
    """The kinds of decision a flow run asks (in :data:`KINDS` order): those some judged one of ``measures`` rests
    on (a composite's judged parts; a dimension naming none is read as the mean, as its verdict is). A measure blind
    on the model (:func:`blind_reason`) decides nothing, so its decisions are not paid for; ``every``
    (``--flow-ask all``): every kind, to measure them against gold (``debatrix bench signals``)."""
    if every:
        return KINDS

    def rests_on(name: str) -> set[str]:
        m = MEASURES.get_or_raise(name)
        if blind_reason(name, profile):
            return set()
        return set().union(*(rests_on(x) for x in m.parts)) if m.parts else set(m.weighs)

    wanted = set().union(*(rests_on(x or "mean") for x in measures))
    return tuple(k for k in KINDS if k in wanted)


def flow_calls(debate: Debate, together: bool = False, kinds: Sequence[str] = KINDS) -> int:
    """The requests a complete flow run sends at most (no retries) asking ``kinds``: per passage, one for each of
    its own questions (argues, evidence, clear); per speech after the first, whether it answers each earlier
    passage of the other side, within :func:`asked_budget`. ``together``: a passage's questions in one request,
    so one a passage at most."""
    budget = 0
    if "answers" in kinds:
        for i, s in enumerate(debate.speeches):
            side = debate.debater(s.speaker).side
            own = sum(1 for p in debate.passages if p.speech == i)
            budget += asked_budget(own, sum(1 for q in debate.passages
                                            if debate.could_answer(i, q.speech) and q.side is not side))
    marks = sum(1 for k in MARKS if k in kinds)
    if together:
        return len(debate.passages) if marks else min(budget, len(debate.passages))
    return marks * len(debate.passages) + budget


def asks_together(questions: str, prompt_cache: bool, openai_compatible: bool) -> bool:
    """Whether a passage's questions go in one request (``--flow-questions``): ``together`` always; ``auto`` to an
    OpenAI-compatible endpoint that does not cache prompts (a hosted one bills every prompt token, and the passage
    would be sent once a question); elsewhere (the embedded model, llama.cpp, a LangChain model of the user's own)
    each question is its own one-token answer, as the decisions were measured."""
    return questions == "together" or (questions == "auto" and not prompt_cache and openai_compatible)


Vector = Sequence[float]


def cosine(a: Vector, b: Vector) -> float:
    """The cosine of two embedding vectors (unit length, as the embedders return them)."""
    return sum(x * y for x, y in zip(a, b))


def propose(asking: Sequence[tuple[str, str]], rows: Sequence[tuple[str, str]], weights: dict[str, float],
            meaning: Mapping[str, Vector] | None = None, per_passage: int = ASK_PER_PASSAGE,
            budget: int | None = None) -> dict[str, list[str]]:
    """Which of ``rows`` (id, text) each of ``asking`` (id, text) is asked whether it answers: every pair scored
    by shared words (the share of the row's words, weighted by rarity, found in the passage) plus, with
    ``meaning`` (id -> unit embedding of every text), how close the two are in meaning (the cosine, where
    positive), so a point answered in other words is proposed too; then the best pairs first, each row asked once
    (of the passage closest to it), each passage asked about at most ``per_passage`` rows, ``budget`` questions
    in all (default: ``per_passage`` a passage). A pair with no shared word and no closeness is never proposed.
    Passage id -> its rows, in the rows' order. The lookup proposes; the model decides."""
    budget = per_passage * len(asking) if budget is None else budget
    said = {pid: set(terms(text)) for pid, text in asking}
    row_terms = {rid: terms(text) for rid, text in rows}
    scored = []
    for pid, _ in asking:
        for k, (rid, _) in enumerate(rows):
            score = covered(row_terms[rid], said[pid], weights)
            if meaning is not None and pid in meaning and rid in meaning:
                score += max(0.0, cosine(meaning[pid], meaning[rid]))
            if score > 0:
                scored.append((-score, k, pid, rid))
    order = {rid: k for k, (rid, _) in enumerate(rows)}
    taken: set[str] = set()
    per: dict[str, list[str]] = {}
    for _, _, pid, rid in sorted(scored):
        if len(taken) >= budget:
            break
        if rid in taken or len(per.get(pid, [])) >= per_passage:
            continue
        taken.add(rid)
        per.setdefault(pid, []).append(rid)
    return {pid: sorted(rs, key=order.__getitem__) for pid, rs in per.items()}


def asked_pairs(debate: Debate, flows: Sequence[SpeechFlow], index: int,
                meaning: Mapping[str, Vector] | None = None) -> dict[str, list[str]]:
    """Which passage of speech ``index`` is asked about which open row (:func:`propose` over the speech's
    passages and the rows open to it, within :func:`asked_budget`). Passage id -> its rows, in the order spoken."""
    rows = open_rows(debate, flows, index)
    if not rows:
        return {}
    by_id = debate.passage_index
    own = [(p.id, p.text) for p in debate.passages if p.speech == index]
    return propose(own, [(r, by_id[r].text) for r in rows], debate_idf(debate), meaning,
                   budget=asked_budget(len(own), len(rows)))


@functools.lru_cache(maxsize=64)
def debate_idf(debate: Debate) -> dict[str, float]:
    return idf([p.text for p in debate.passages])


# ------------------------------------------------------------------------------ the flow's small decisions

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


def questions_of(debate: Debate, p: Passage, rows: list[str],
                 kinds: Sequence[str] = ("argues", "evidence", "clear")) -> str:
    """Every question about passage ``p`` at once: those of ``kinds`` about it alone (whether it argues, whether it
    cites evidence, whether it reads clearly), and whether it answers each of ``rows`` (each point restated, as the one-question form
    restates it)."""
    fence = P.fence_for(debate)
    index = debate.passage_index
    return P.render("flow_questions.j2", P.FlowQuestionsVars(fence=fence, id=p.id, kinds=list(kinds), rows=[
        P.FlowRow(key=f"point_{k}", target=r, speaker=index[r].speaker,
                  text=P.quoted(gist(index[r].text, GIST_ASKED), fence)) for k, r in enumerate(rows, 1)]))
