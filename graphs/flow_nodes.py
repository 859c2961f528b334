"""The flow mode: the debate read as an adjudicator flows it, speech by speech (the paper's iterative analysis),
every decision small, asked with probabilities and cited by passage id; the verdicts computed from the flow.

For each speech s_i, in the order spoken (``flow_speech``, one step per speech; its analysis memory is the flow so
far, ``state["flows"]``), each of its passages p is read once and asked:

    is p an argument about the motion (a reason for or against it)?                     P(argument)
    does p cite evidence (a source, figure, study or example)?                           P(evidence)
    is p clearly written (correctly spelled, its sentences in an order that makes sense)? P(clear)
    does p make this point of the other side, or argue about it: "<its first words>"?    P(answers the row)

(the first two as ``debatrix bench decisions`` measured them: a three-way question, argues with evidence / without /
neither, gave every passage of a debate nearly the same probabilities). A question is asked only where a judged
dimension rests on it (:func:`debatrix.core.flow.asked_kinds`), and a dimension is judged only where the model's
profile does not mark a decision it rests on blind (:mod:`debatrix.core.profile`: what the model that runs was
measured to see; an unprofiled model is asked everything). ``--flow-ask all`` asks every kind, to measure them
again (``debatrix bench signals``, ``debatrix profile``).

The rows a speech may answer are the other side's earlier passages the flow holds as arguments. Each pair of a
passage and a row is scored by the row's rarer words the passage shares and by how close the two are in meaning
(MiniLM embeddings), and the best pairs are asked: each row once, of the passage closest to it, up to three rows a
passage (:func:`debatrix.core.flow.propose`; the lookup proposes, the model decides). Every question restates what it
asks about (a small model does not look an id up: ``debatrix bench decisions``) and reads one passage, not the speech
around it, so the prompt is the passage and a few words, and the questions about one passage share it up to the
question (a prompt cache reads each passage once). Every question ends "Answer yes or no.": said once in the system
message instead, the model rated the garbled side of ``bench contrast``'s language change the clearer more often, and
an injected concession in a passage turned two verdicts of the real-model injection test. The decisions are shared by
the dimensions: each weighs its own part of the ledger (``flow_verdicts``, no call; :mod:`debatrix.core.flow`), and
the panel's verdict is the weighted mean of the dimensions judged.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
from typing import Any

from langgraph.types import interrupt

from debatrix.context import JudgeContext
from debatrix.core.errors import ConfigurationError, IncompleteJudgment
from debatrix.core.flow import (
    ID, Line, MARKS, Mark, SpeechFlow, about_passage, answer_question, asked_kinds, asked_pairs, asks_together,
    corrected, decision_words, gist, passage_messages, questions_of, reckon,
)
from debatrix.core.review import CorrectionError, Judged, parse_corrections, review_payload
from debatrix.core.models import Debate, Passage

from .state import PANEL, JudgeState
from .wiring import add_step

YES_NO = ("yes", "no")


def embedder(embedding: str) -> tuple[Any, str]:
    """The function that embeds texts for proposals by meaning (None where there is none), and how answers are
    proposed with it: ``"words and meaning"`` with the MiniLM embedder, ``"words"`` where the run chose the hashing
    embedder (which sees words only), or ``"words (…)"`` saying why MiniLM could not be had."""
    if embedding != "minilm":
        return None, "words"
    try:
        from debatrix.memory.embeddings import make_embedding

        return make_embedding("minilm"), "words and meaning"
    except (ImportError, ConfigurationError) as e:
        return None, f"words (no proposals by meaning: {e})"


def embedded(embed: Any, texts: dict[str, str]) -> dict[str, list[float]] | None:
    """id -> unit embedding of each text (None without an embedder)."""
    if embed is None:
        return None
    return {k: [float(x) for x in v] for k, v in zip(texts, embed(list(texts.values())))}


MEANING_WORDS = 48  # a passage's first words embedded for proposals: its point, at a quarter of the cost of it all


def meaning_of(debate: Debate, embedding: str, speech: int) -> tuple[dict[str, list[float]] | None, str]:
    """The embeddings (id -> unit vector) of speech ``speech``'s passages, of their first :data:`MEANING_WORDS`
    words, for proposals by meaning, and how answers are proposed."""
    embed, how = embedder(embedding)
    return embedded(embed, {p.id: gist(p.text, MEANING_WORDS) for p in debate.passages if p.speech == speech}), how


_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="debatrix-meaning")


@functools.lru_cache(maxsize=16)
def meaning_later(debate: Debate, embedding: str) -> tuple[concurrent.futures.Future, ...]:
    """:func:`meaning_of` in the background, speech by speech in speaking order, once per debate: speech ``i``
    waits only for the passages up to its own, which are embedded while the earlier speeches' questions are out."""
    return tuple(_POOL.submit(meaning_of, debate, embedding, i) for i in range(len(debate.speeches)))


async def meaning_upto(debate: Debate, embedding: str, speech: int) -> tuple[dict[str, list[float]] | None, str]:
    """The embeddings of every passage up to speech ``speech`` (see :func:`meaning_later`)."""
    parts = [await asyncio.wrap_future(f) for f in meaning_later(debate, embedding)[:speech + 1]]
    if any(vectors is None for vectors, _ in parts):
        return None, parts[-1][1]
    return {k: v for vectors, _ in parts for k, v in vectors.items()}, parts[-1][1]


class _Asked:
    """One speech's decisions as they come back, in any order: what the speech's flow entry is made of."""

    def __init__(self) -> None:
        self.calls: list[Any] = []
        self.marks: dict[str, dict[str, float | None]] = {}
        self.answers: dict[str, tuple[str, float]] = {}  # row -> (the passage asked, P(it answers the row))
        self.missing: list[str] = []
        self.decided: dict[str, int] = {}
        self.missed: dict[str, int] = {}
        self.unknown: list[tuple[str, ...]] = []
        self.counted = 0
        self.sampled = 0

    def keep(self, dist: dict[str, float] | None, record: Any, decision: tuple[str, ...]) -> float | None:
        """One decision's answer (its call is counted by whoever sent it: one call may ask several); ``decision``:
        what it asked, ("argues", passage) or ("answers", passage, row)."""
        kind = decision[0]
        if dist is None:
            self.missed[kind] = self.missed.get(kind, 0) + 1
            self.missing.append(decision_words(decision))
            self.unknown.append(decision)
            return None
        self.decided[kind] = self.decided.get(kind, 0) + 1
        self.counted += record.from_answer
        self.sampled += bool(record.sampled)
        return dist.get("yes", 0.0)  # an option the server did not list among the alternatives had none

    def mark(self, pid: str, kind: str, dist: dict[str, float] | None, record: Any) -> None:
        """Whether passage ``pid`` argues (``kind`` "argues"), cites evidence ("evidence") or reads clearly
        ("clear")."""
        self.marks.setdefault(pid, {})[kind] = self.keep(dist, record, (kind, pid))

    def answer(self, pid: str, row: str, dist: dict[str, float] | None, record: Any) -> None:
        """Whether passage ``pid`` answers the earlier point ``row``."""
        yes = self.keep(dist, record, ("answers", pid, row))
        if yes is not None:
            self.answers[row] = (pid, yes)


async def flow_speech(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
    """One speech read into the flow, passage by passage: whether each argues the motion and backs it with
    evidence, and whether it answers the earlier points of the other side proposed for it (:func:`asked_pairs`,
    by shared words and by meaning). A decision whose answer is none of its options is missing (its call
    counted); the speech keeps the others.

    Where the server caches prompts (the embedded model, llama.cpp), the questions go one after another: those
    about one passage share its prompt, so the cache reads each passage once (concurrent requests would each take
    a slot and read it again). Elsewhere (a hosted endpoint, billed per token and slow per round trip) the
    speech's decisions, which do not depend on each other, go out together, within ``--max-concurrency``."""
    debate, i = state["debate"], state.get("index", 0)
    index = debate.passage_index
    earlier = state.get("flows", [])
    decide = ctx.gateway.decision
    meaning_later(debate, ctx.settings.memory.embedding)  # started with the first speech, which answers nothing
    meaning, proposed_by = (await meaning_upto(debate, ctx.settings.memory.embedding, i)) if i else (None, "")
    kinds = asked_kinds([d.measure for d in state.get("dimensions", [])], ctx.settings.flow_ask == "all",
                        ctx.profile.profile)
    pairs = asked_pairs(debate, earlier, i, meaning) if i and "answers" in kinds else {}
    marks = [k for k in MARKS if k in kinds]
    asked = _Asked()

    def meta(p: Passage) -> dict[str, Any]:
        return {"debatrix_index": i, "debatrix_target": p.id}

    async def mark(p: Passage, kind: str, template: str) -> None:
        dist, record = await decide(about_passage(debate, p, template), YES_NO, node="flow_speech", meta=meta(p))
        asked.calls.append(record)
        asked.mark(p.id, kind, dist, record)

    async def answer(p: Passage, row: str) -> None:
        dist, record = await decide(passage_messages(debate, p, answer_question(debate, p, index[row])), YES_NO,
                                    node="flow_speech", meta=meta(p))
        asked.calls.append(record)
        asked.answer(p.id, row, dist, record)

    async def together(p: Passage) -> None:  # every question about p in one request, one JSON answer
        rows = {f"point_{k}": row for k, row in enumerate(pairs.get(p.id, []), 1)}
        dists, record = await ctx.gateway.decisions(
            passage_messages(debate, p, questions_of(debate, p, list(rows.values()), marks)),
            [*marks, *rows], YES_NO, node="flow_speech", meta=meta(p))
        asked.calls.append(record)
        for kind in marks:
            asked.mark(p.id, kind, dists[kind], record)
        for key, row in rows.items():
            asked.answer(p.id, row, dists[key], record)

    own = [p for p in debate.passages if p.speech == i]
    questions = []
    if asks_together(ctx.settings.flow_questions, ctx.settings.llm.prompt_cache, ctx.gateway.openai_compatible):
        questions = [functools.partial(together, p) for p in own if marks or pairs.get(p.id)]
    else:
        for p in own:
            questions += [functools.partial(mark, p, kind, f"flow_{kind}.j2") for kind in marks]
            questions += [functools.partial(answer, p, row) for row in pairs.get(p.id, [])]
    try:
        if ctx.settings.llm.prompt_cache:
            for q in questions:
                await q()
        else:
            await gather_all([q() for q in questions])
    except IncompleteJudgment as e:  # the run stops here; the speech's paid answers are kept in its flow entry
        # said by speech, as a coach reads the flow (the error itself names the step and what the server did)
        stopped = f"reading speech {i + 1} ({debate.speeches[i].speaker}): {type(e).__name__}: {e}"
        out = _entry(debate, i, asked, proposed_by, f"the rest (the run stopped: {type(e).__name__})")
        return {**out, "calls": [*asked.calls, *getattr(e, "calls", [])], "failures": [stopped]}
    return _entry(debate, i, asked, proposed_by)


def _entry(debate: Debate, i: int, asked: _Asked, proposed_by: str, unasked: str = "") -> dict[str, Any]:
    """Speech ``i``'s flow entry from its answered decisions (``unasked``: what was never answered, where the run
    stopped), as the step writes it."""
    order = {p.id: k for k, p in enumerate(debate.passages)}
    def kept(got: dict[str, float | None], kind: str) -> float | None:
        return None if got.get(kind) is None else round(got[kind], 4)

    marks = tuple(Mark(id=pid, argument=kept(got, "argues"), evidence=kept(got, "evidence"), clear=kept(got, "clear"))
                  for pid, got in sorted(asked.marks.items(), key=lambda kv: order[kv[0]]))
    lines = tuple(Line(speech=i, target=row, by=by, answers=round(y, 4))
                  for row, (by, y) in sorted(asked.answers.items(), key=lambda kv: order[kv[0]]))
    missing = sorted(asked.missing, key=lambda w: order[ID.search(w).group(0)]) + ([unasked] if unasked else [])
    flow = SpeechFlow(dimension="flow", index=i, speaker=debate.speeches[i].speaker, marks=marks, lines=lines,
                      missing="; ".join(missing), decided=asked.decided, missed=asked.missed,
                      unknown=tuple(sorted(asked.unknown, key=lambda d: (order[d[1]], d))), counted=asked.counted,
                      sampled=asked.sampled, proposed_by=proposed_by)
    return {"flows": [flow], "calls": asked.calls, "index": i + 1}


async def gather_all(tasks: list[Any]) -> None:
    """Await every task; where some fail, the others' paid answers still finish and are kept by the caller, and
    the failure raised carries the failed requests of all of them (each request the server received counts)."""
    results = await asyncio.gather(*tasks, return_exceptions=True)
    failures = [r for r in results if isinstance(r, BaseException)]
    if not failures:
        return
    first = next((f for f in failures if not isinstance(f, IncompleteJudgment)), failures[0])
    if isinstance(first, IncompleteJudgment):
        first.calls = [c for f in failures for c in getattr(f, "calls", [])]
    raise first


def after_flow_speech(state: JudgeState, then: str = "flow_verdicts") -> str:
    """The next speech, else ``then`` (the verdicts, or a person's review first); the end where the run failed."""
    if state.get("failures"):
        return "finish"
    return "flow_speech" if state["index"] < len(state["debate"].speeches) else then


def _judged(state: JudgeState, ctx: JudgeContext) -> Judged:
    return Judged(state["debate"], tuple(sorted(state.get("flows", []), key=lambda f: f.index)),
                  tuple(state.get("dimensions", [])), ctx.profile.profile, ctx.settings.llm.decision_samples)


async def flow_review(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
    """A person's review, where the run asks for one (``JudgeSettings.review``): the graph pauses
    (LangGraph's ``interrupt``) with the sheet and the decisions to review first
    (:func:`debatrix.core.review.review_payload`); ``Command(resume=corrections)`` goes on with the corrections
    (a list in the file's format, or ``{"by": ..., "corrections": [...]}``; an empty list for none), checked
    against the debate. Corrections that do not apply pause it again, saying why, so nothing is guessed."""
    judged = _judged(state, ctx)
    read = {f.index for f in judged.flows}
    problem = ""
    while True:
        given = interrupt(review_payload(judged, problem=problem))
        try:
            return {"corrections": parse_corrections(given, judged.debate, read, "resume")}
        except CorrectionError as e:
            problem = str(e)


async def flow_verdicts(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
    """Every dimension's analyses, scores and verdict computed from the flow and a person's corrections, where the
    run paused for them (no call), and the panel's verdict as the weighted mean of the dimensions judged
    (:func:`debatrix.core.flow.reckon`, which a recompute after corrections calls too)."""
    j = _judged(state, ctx)
    flows, people = corrected(j.flows, state.get("corrections") or ())
    r = reckon(j.debate, flows, j.dims, j.profile, j.samples, people, panel=PANEL)
    return {"analyses": r.analyses, "speech_judgments": r.speech_judgments, "debater_judgments": r.debater_judgments,
            "winner_decisions": r.verdicts, "ledgers": r.ledgers, **({"panel": r.panel} if r.panel else {})}


def to_flow(state: JudgeState) -> str:
    return "finish" if state.get("failures") else "flow_speech"


def add_flow(g: Any, ctx: JudgeContext | None, mode: str) -> None:
    """The flow's steps in a judge graph whose ``prepare`` and ``finish`` the caller adds; where the context's
    settings ask for a person's review, a pause for it before the verdicts."""
    add_step(g, "flow_speech", flow_speech, ctx, mode)
    add_step(g, "flow_verdicts", flow_verdicts, ctx, mode)
    then = "flow_verdicts"
    if ctx is not None and ctx.settings.review:
        then = "flow_review"
        add_step(g, "flow_review", flow_review, ctx, mode)
        g.add_edge("flow_review", "flow_verdicts")
    g.add_conditional_edges("flow_speech", functools.partial(after_flow_speech, then=then),
                            ["flow_speech", then, "finish"])
    g.add_edge("flow_verdicts", "finish")

