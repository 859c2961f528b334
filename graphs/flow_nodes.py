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

from debatrix.context import JudgeContext
from debatrix.core.errors import ConfigurationError, IncompleteJudgment
from debatrix.core.flow import (
    ID, Line, MARKS, Mark, SpeechFlow, about_passage, answer_question, asked_kinds, asked_pairs, asks_together,
    blind_reason, combined, debater_comment, decision_words, either_way, flow_verdict, gist, held, ledger,
    passage_messages, place_taken_out, questions_of, speech_note, speech_value, unknown_words, weighed_by_readings,
)
from debatrix.core.models import Debate, DebaterJudgment, Passage, SpeechAnalysis, SpeechJudgment, Verdict

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


def after_flow_speech(state: JudgeState) -> str:
    if state.get("failures"):
        return "finish"
    return "flow_speech" if state["index"] < len(state["debate"].speeches) else "flow_verdicts"


def _score(value: float) -> float:
    return round(1 + 9 * max(0.0, min(1.0, value)), 3)


async def flow_verdicts(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
    """Every dimension's analyses, scores and verdict computed from the flow (no call), and the panel's verdict as
    the weighted mean of the judged dimensions. Scores are on 1-10: a speech's from its own decisions, a debater's
    from their probability of winning the dimension; a dimension not judged has neither, and no winner."""
    debate = state["debate"]
    flows = sorted(state.get("flows", []), key=lambda f: f.index)
    out: dict[str, list[Any]] = {"analyses": [], "speech_judgments": [], "debater_judgments": [],
                                 "winner_decisions": []}
    ledgers, parts = {}, []
    counted = sum(f.counted for f in flows)
    decided = sum(sum(f.decided.values()) for f in flows)
    warnings = [f"speech {f.index + 1}: missing {f.missing}" for f in flows if f.missing]
    figures: list[str] = []  # what the figures are: said of a verdict that has some, not of one blind here
    if counted:  # the server gave no probabilities: each answer was taken as certain
        asked = ctx.settings.llm.decision_samples
        ignored = (f"; it answered once where --decision-samples asked {asked} answers (it ignores n)"
                   if asked > 1 else "")
        figures.append(f"{counted} of {decided} decisions are the model's answers taken as certain (the server "
                        f"gave no probabilities{ignored}): the figures are shares of answers, not probabilities")
    sampled = sum(f.sampled for f in flows)
    if sampled:
        samples = ctx.settings.llm.decision_samples
        figures.append(f"{sampled} of {decided} decisions are the options' shares among {samples} answers sampled "
                        "at temperature 1 (--decision-samples): estimates of the model's probabilities")
    proposed = {f.proposed_by for f in flows if f.proposed_by.startswith("words (")}  # meaning was wanted
    warnings += [f"answers proposed by {how}" for how in sorted(proposed)]
    method = "none" if not decided else "argmax" if counted else "sampled" if sampled else "logprobs"
    profile = ctx.profile.profile
    dims = list(state.get("dimensions", []))
    judged = _reckoned(debate, flows, dims, profile, bool(counted), bool(sampled))
    worlds = [_reckoned(debate, w, dims, profile, bool(counted), bool(sampled)) for w in either_way(debate, flows)]
    if worlds:
        missing = unknown_words(flows)
        judged = [(dim, measure, blind, led, held(verdict, [w[k][4] for w in worlds], missing))
                  for k, (dim, measure, blind, led, verdict) in enumerate(judged)]
    for dim, measure, blind, led, verdict in judged:
        ledgers[dim.name] = led
        parts.append((dim.weight, verdict))
        for f in flows:
            out["analyses"].append(SpeechAnalysis(dimension=dim.name, index=f.index, speaker=f.speaker,
                                                  analysis=speech_note(f, debate, measure, dim.name, blind)))
            value = None if verdict.not_judged else speech_value(f, measure, profile)
            if value is not None:
                score = _score(value)
                out["speech_judgments"].append(SpeechJudgment(
                    dimension=dim.name, index=f.index, speaker=f.speaker, score=round(score), expected_score=score,
                    comment=f"{dim.name} {value:.2f} from its own decisions (0 to 1), {score:g} of 10"))
        for d in debate.debaters:
            if verdict.not_judged:
                continue
            out["debater_judgments"].append(DebaterJudgment(
                dimension=dim.name, debater=d.name, score=_score(verdict.probabilities[d.name]),
                comment=debater_comment(led, flows, debate, d.name)))
        out["winner_decisions"].append(as_verdict(verdict, "none" if verdict.blind else method,
                                                  warnings + ([] if verdict.blind else figures)))
    panel = {}
    if parts:  # the panel's verdict, under its own key as the panel subgraph writes it
        merged = _merged(parts, profile)
        if worlds:  # the panel too names a winner only where it holds with the missing decisions either way
            merged = held(merged, [_merged([(dim.weight, w[k][4]) for k, (dim, *_) in enumerate(judged)], profile)
                                   for w in worlds], missing)
        panel["panel"] = as_verdict(merged, method, warnings + figures)
    return {**out, **panel, "ledgers": ledgers}


def _reckoned(debate: Debate, flows: list[SpeechFlow], dims: list[Any], profile: Any, counted: bool,
              sampled: bool) -> list[tuple[Any, str, str, Any, Any]]:
    """Each dimension's (dimension, measure, blind reason, ledger, verdict) from ``flows``: computed, no call."""
    read = ledger(debate, flows, "flow", profile)  # one reading: each dimension weighs its own part of it
    out = []
    for dim in dims:
        measure = dim.measure or "mean"  # resolve_dimensions refuses a flow run's dimension without one
        blind = blind_reason(measure, profile)
        led = read.model_copy(update={"dimension": dim.name, "measure": measure, "blind": blind})
        verdict = place_taken_out(flow_verdict(led, measure, flows, counted, sampled, profile), profile,
                                  debate.speeches[0].speaker)
        out.append((dim, measure, blind, led, verdict))
    return out


def _merged(parts: list[tuple[float, Any]], profile: Any) -> Any:
    """The panel's verdict: the judged dimensions merged by the weights the profile's readings give them."""
    weighed, how = weighed_by_readings(parts, profile)
    merged = combined(PANEL, weighed)
    if how:  # the weights are the profile's readings, said in the reason
        merged = merged.model_copy(update={"reason": f"{merged.reason} Weights from the judge profile: {how}.",
                                           "not_judged": merged.not_judged and f"{merged.not_judged}: {how}"})
    return merged


def as_verdict(v: Any, method: str, warnings: list[str]) -> Verdict:
    """A computed verdict as the result keeps it (a dimension not judged: no winner, no probabilities)."""
    return Verdict(dimension=v.dimension, comment=v.reason, winner=v.winner,
                   probabilities=v.probabilities or None, method=method, not_judged=v.not_judged, blind=v.blind,
                   warnings=tuple(warnings), place_shift=getattr(v, "place_shift", None))


def to_flow(state: JudgeState) -> str:
    return "finish" if state.get("failures") else "flow_speech"


def add_flow(g: Any, ctx: JudgeContext | None, mode: str) -> None:
    """The flow's steps in a judge graph whose ``prepare`` and ``finish`` the caller adds."""
    add_step(g, "flow_speech", flow_speech, ctx, mode)
    add_step(g, "flow_verdicts", flow_verdicts, ctx, mode)
    g.add_conditional_edges("flow_speech", after_flow_speech, ["flow_speech", "flow_verdicts", "finish"])
    g.add_edge("flow_verdicts", "finish")

