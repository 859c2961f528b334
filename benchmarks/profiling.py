"""``debatrix profile``: what a judge model can see, measured on gold from ``../shared`` and kept as that model's
profile (:mod:`debatrix.core.profile`). Every question is the very request the flow sends (the passage alone, then
the flow's own template), so what is measured is what the flow asks.

The gold, per kind of decision (:data:`GOLD`; a kind added to :data:`debatrix.core.flow.KINDS` needs only an entry
here):
- ``argues``: the known-answer suite's off-topic change (:mod:`.contrast`, its ``argument`` items): a passage of the
  changed side made mostly of another debate's sentences is no argument about this motion, every other passage is;
- ``evidence``: the suite's own mark of evidence (a link, a reference mark, a figure or a named kind of source) on
  the unchanged debates;
- ``clear``: the suite's ``language`` change: the changed side's passages (sentences shuffled, letters swapped) are
  not clear, the other side's are;
- ``answers``: IBM's claim-to-sentence matches: a passage of a speech holding a sentence its annotators found a
  claim in, against passages of the same speech whose annotated sentences do not hold it (the flow's own question,
  asked of a passage: does it make that point).
The same passages are asked again in the debate with its speaking order swapped (the second speaker's speeches
first), so each is read where its speaker speaks first and where second: the place lean. For the kinds in
:data:`LONG_PLACE` the lean is also measured on long multi-round debates (fold 0 of ``../shared/data/nyu_debate``,
every chosen passage read in both places): the short known-answer debates alone understate the lean a model shows
where a debate runs to several rounds. These passages have no gold label of their own and serve the place lean only.

Figures: ROC AUC with a 95% interval resampled over debates; the place lean (mean P each way, the share of answers
that flip, the mean log-odds difference with its interval); Spearman's rho of P and a passage's words within each
gold class (a preference for the longer); a Platt map from P (its lean out) to the gold's rate, fitted on one half
of the debates and checked on the other (each way), then fitted on all."""

from __future__ import annotations

import asyncio
import datetime as dt
import math
import random
import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from debatrix.context import JudgeContext
from debatrix.core.flow import GIST_ASKED, KINDS, gist, places
from debatrix.core.models import Debate, Debater, Passage, Side, Speech
from debatrix.core.profile import (MIN_DEBATES, MIN_ITEMS, DecisionProfile, Interval, JudgeProfile, ModelIdentity,
                                   PlaceLean, PMap, SourceShift, prompts_sha256)
from debatrix.core import prompting as P

from .base import BenchmarkDataError
from .calibration import logit
from .contrast import EVIDENCE, Contrast
from .signals import auc_interval

RESAMPLES = 2000
QUESTIONS = {"argues": "is this passage an argument about the motion?",
             "evidence": "does this passage cite evidence (a source, figure, study or example)?",
             "clear": "is this passage clearly written?",
             "answers": "does this passage make that earlier point or argue about it?"}


@dataclass
class Probe:
    """One question of the profile: its request, its gold label, and where it was read."""

    kind: str
    debate: str  # the debate it belongs to (intervals resample debates)
    label: bool
    messages: list[Any] = field(repr=False)
    words: int
    place: int | None = None  # its speaker's speaking place in this reading (0: first)
    pair: str = ""  # the same passage read in the other place carries the same pair key
    answer: float | None = None
    place_only: bool = False  # no gold label: read in both places for the place lean, kept out of every other figure
    source: str = "known answers"  # the gold material it was drawn from (the place lean says how many pairs each)


def _words(text: str) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


def own_share(p: Passage, base: Debate) -> float:
    original = _words(base.speeches[p.speech].content)
    sentences = [x for x in p.text.replace("\n", ". ").split(". ") if _words(x)]
    return sum(len(x.split()) for x in sentences if _words(x) in original) / max(1, p.words)


def swapped(debate: Debate) -> Debate | None:
    """``debate`` with its two debaters' places swapped: each round's two speeches exchanged, so the second
    speaker opens (None: not two debaters alternating)."""
    speakers = [s.speaker for s in debate.speeches]
    if len(debate.debaters) != 2 or len(speakers) < 2 or any(a == b for a, b in zip(speakers, speakers[1:])):
        return None
    order = [k ^ 1 if (k ^ 1) < len(speakers) else k for k in range(len(speakers))]
    return debate.model_copy(update={"debaters": tuple(reversed(debate.debaters)),
                                     "speeches": tuple(debate.speeches[k] for k in order)})


def _mark_probes(kinds: Sequence[tuple[str, Callable[[Passage], bool]]], debate: Debate, chosen: Sequence[Passage],
                 mirror: int) -> list[Probe]:
    """The probes of the passage decisions ``kinds`` ((kind, its gold label of a passage)) for the ``chosen``
    passages of ``debate``, each passage's questions one after another (a prompt cache reads it once), and the
    first ``mirror`` of them again in the swapped debate."""
    from debatrix.core.flow import about_passage

    def asked(d: Debate, p: Passage, key: str, place: int) -> list[Probe]:
        return [Probe(kind, debate.id, label(p), about_passage(d, p, f"flow_{kind}.j2"), p.words, place, key)
                for kind, label in kinds]

    place = places(debate)
    out = [x for p in chosen for x in asked(debate, p, f"{debate.id}/{p.id}", place[p.speaker])]
    other = swapped(debate)
    if other is None or mirror <= 0:
        return out
    where = {(p.speech, p.number): p for p in other.passages}
    order = [k ^ 1 if (k ^ 1) < len(debate.speeches) else k for k in range(len(debate.speeches))]
    at = {old: new for new, old in enumerate(order)}
    place2 = places(other)
    for p in chosen[:mirror]:
        q = where.get((at[p.speech], p.number))
        if q is not None and q.text == p.text:
            out += asked(other, q, f"{debate.id}/{p.id}", place2[q.speaker])
    return out


def _pick(rng: random.Random, passages: list[tuple[Passage, bool]], n: int) -> list[tuple[Passage, bool]]:
    """Up to ``n`` of a debate's labelled passages, both labels kept where it has both (the rarer first)."""
    pos = [x for x in passages if x[1]]
    neg = [x for x in passages if not x[1]]
    rng.shuffle(pos)
    rng.shuffle(neg)
    half = n // 2
    take_neg = neg[:max(half, n - len(pos))]
    take_pos = pos[:n - len(take_neg)]
    chosen = take_neg + take_pos
    chosen.sort(key=lambda x: (x[0].speech, x[0].number))
    return chosen


@dataclass
class Gold:
    """Where the labelled items come from, and the sizes asked for."""

    root: Path
    debates: int = 24
    per_debate: int = 8
    mirror: int = 4  # of each debate's chosen passages, how many are asked again in the other place
    seed: int = 0
    place_debates: int = 24  # long debates (NYU fold 0) whose passages are read in both places (0: none)

    def __post_init__(self) -> None:
        self._contrast = Contrast(self.root / "panelbench", variant="all")
        self._items: list[Any] | None = None

    def _contrast_items(self, change: str) -> list[Any]:
        if self._items is None:
            self._items = self._contrast.load()
        items = [it for it in self._items if it.perturbation == change]
        random.Random(self.seed).shuffle(items)
        return items

    def _changed(self, change: str, label: Callable[[Any, Debate, Passage], bool],
                 also: Sequence[tuple[str, Callable[[Passage], bool]]], kind: str) -> list[Probe]:
        """Probes of ``kind`` (labelled by ``label``) on the suite's ``change`` items, the same passages also asked
        the decisions ``also`` (each with its own label of a passage's text): a passage read once serves them all."""
        out: list[Probe] = []
        used = 0
        for it in self._contrast_items(change):
            if used >= self.debates:
                break
            base = self._contrast._base(it.base)
            debate = self._contrast.debate(it)
            labelled = [(p, label(it, base, p)) for p in debate.passages]
            if len({y for _, y in labelled}) < 2:
                continue
            chosen = _pick(random.Random(f"{self.seed}/{kind}/{debate.id}"), labelled, self.per_debate)
            gold = {p.text: y for p, y in chosen}  # by text: the swapped debate numbers the same passage otherwise
            out += _mark_probes([(kind, lambda p, gold=gold: gold[p.text]), *also], debate, [p for p, _ in chosen],
                                self.mirror)
            used += 1
        return out

    def argues(self) -> list[Probe]:
        """Off-topic passages against the debate's own; the same passages asked whether they cite evidence (the
        suite's mark of evidence on their text: a figure, a link, a named kind of source)."""
        return self._changed("argument", lambda it, base, p: p.side is not it.degraded or own_share(p, base) >= 0.5,
                             [("evidence", lambda p: bool(EVIDENCE.search(p.text)))], "argues")

    def clear(self) -> list[Probe]:
        return self._changed("language", lambda it, base, p: p.side is not it.degraded, [], "clear")

    def answers(self) -> list[Probe]:
        """IBM's claim-to-sentence matches: a claim (the other side's point C1) asked of passages of a speech, a
        passage holding a sentence the annotators found the claim in against passages none of whose sentences holds
        it; the speech is the second of a pseudo-debate, so the question is the flow's own (does S2.k make C1)."""
        from debatrix.core.flow import passage_messages

        from .decisions import ibm_claim_sentences

        speeches, pairs = ibm_claim_sentences(self.root)
        by_speech: dict[str, list[tuple[str, list[dict[str, str]]]]] = {}
        for (sid, claim), rows in sorted(pairs.items()):
            if any(r["is-claim-mentioned-in-sentence"] == "true" for r in rows):
                by_speech.setdefault(sid, []).append((claim, rows))
        ids = sorted(by_speech)
        random.Random(self.seed).shuffle(ids)
        out = []
        for sid in ids[:self.debates]:
            rng = random.Random(f"{self.seed}/answers/{sid}")
            claim, rows = rng.choice(by_speech[sid])
            debate = speech_debate(speeches[sid], rows[0]["motion-text"])
            labelled = [(p, y) for p in debate.passages if p.speech == 1
                        for y in [_mentions(p.text, rows)] if y is not None]
            if len({y for _, y in labelled}) < 2:
                continue
            fence = P.fence_for(debate)
            point = P.quoted(gist(claim, GIST_ASKED), fence)
            for p, y in _pick(rng, labelled, self.per_debate):
                question = P.render("flow_answer.j2", P.FlowAnswerVars(fence=fence, id=p.id, target="C1",
                                                                       speaker="Other side", text=point))
                out.append(Probe("answers", sid, y, passage_messages(debate, p, question), p.words, 1,
                                 f"{sid}/{p.id}", source="ibm"))  # its own pair: read once, in one place
        return out


    def long_place(self, kind: str) -> list[Probe]:
        """Place-only probes of ``kind`` on long debates: up to ``per_debate`` passages of each of ``place_debates``
        NYU debates of fold 0 (a seeded draw), each read where its speaker speaks first and where second."""
        from .nyu import NyuDebate, fold

        bench = NyuDebate(self.root)  # its loader checks the data and says where it is missing
        items = sorted((it for it in bench.load() if fold(it.id) == 0), key=lambda it: it.id)
        random.Random(f"{self.seed}/place").shuffle(items)
        out: list[Probe] = []
        for item in items[:self.place_debates]:
            debate = bench.debate(item)
            chosen = list(debate.passages)
            random.Random(f"{self.seed}/place/{debate.id}").shuffle(chosen)
            chosen = sorted(chosen[:self.per_debate], key=lambda p: (p.speech, p.number))
            for probe in _mark_probes([(kind, lambda p: True)], debate, chosen, len(chosen)):
                probe.place_only, probe.source = True, "nyu_debate"
                out.append(probe)
        return out


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text).lower().strip()


def _mentions(passage: str, rows: list[dict[str, str]]) -> bool | None:
    """Whether a passage holds a sentence the claim was found in (True), holds only sentences it was not found in
    (False), or holds none of the annotated sentences (None: no gold)."""
    text = _norm(passage)
    found = [r["is-claim-mentioned-in-sentence"] == "true" for r in rows if _norm(r["sentence-text"])[:60] in text]
    return any(found) if found else None


def speech_debate(row: dict[str, str], motion: str) -> Debate:
    side = Side.PRO if row["speech-to-motion-polarity"] == "PRO" else Side.CON
    other = Side.CON if side is Side.PRO else Side.PRO
    return Debate(id=row["speech-id"], motion=motion,
                  debaters=(Debater(name="Other side", side=other), Debater(name="Speaker", side=side)),
                  speeches=(Speech(speaker="Other side", content="(not shown)"),
                            Speech(speaker="Speaker", content=row["speech-text"])))


#: the gold each kind of decision is measured on: (how its probes are made, the gold in words)
GOLD: dict[str, tuple[Callable[[Gold], list[Probe]], str]] = {
    "argues": (Gold.argues, "known answers: passages made of another debate's sentences against the debate's own"),
    "evidence": (Gold.argues, "known answers: passages with a figure, link or named source against those without"),
    "clear": (Gold.clear, "known answers: passages with shuffled sentences and swapped letters against intact ones"),
    "answers": (Gold.answers, "IBM claim-to-sentence matches: passages holding a sentence that makes the claim against "
                           "passages of the same speech that do not"),
}


#: the kinds whose place lean is also measured on long debates: the decision that weighs every row of the
#: argument ledger (a kind added here needs no other change)
LONG_PLACE = ("argues",)


def probes(gold: Gold, kinds: Sequence[str] = KINDS) -> list[Probe]:
    """Every probe of ``kinds``, each kind's gold drawn once (a builder serving several kinds is called once), then
    the long debates' place-only probes of the kinds in :data:`LONG_PLACE`."""
    missing = [k for k in kinds if k not in GOLD]
    if missing:
        raise BenchmarkDataError(f"no gold to profile {', '.join(missing)} on (benchmarks.profiling.GOLD)")
    builders = list(dict.fromkeys(GOLD[k][0] for k in kinds))
    out = [p for b in builders for p in b(gold) if p.kind in kinds]
    if gold.place_debates:
        out += [p for k in kinds if k in LONG_PLACE for p in gold.long_place(k)]
    return out


# -------------------------------------------------------------------------------------------- the figures


def shift_interval(pairs: list[tuple[str, float, float]], seed: int) -> Interval:
    """The mean log-odds difference, first place minus second, with a 95% interval resampling debates."""
    by: dict[str, list[float]] = {}
    for d, first, second in pairs:
        by.setdefault(d, []).append(float(logit(np.array([first]))[0] - logit(np.array([second]))[0]))
    groups = list(by.values())
    flat = [x for g in groups for x in g]
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(RESAMPLES):
        pick = [x for i in rng.integers(0, len(groups), len(groups)) for x in groups[i]]
        boots.append(float(np.mean(pick)))
    return Interval(value=round(float(np.mean(flat)), 4), low=round(float(np.percentile(boots, 2.5)), 4),
                    high=round(float(np.percentile(boots, 97.5)), 4))


def place_lean(answered: list[Probe], seed: int = 0) -> PlaceLean | None:
    """The same passages read first and second (probes sharing a pair key, one at each place)."""
    by: dict[str, dict[int, Probe]] = {}
    for p in answered:
        if p.pair and p.place in (0, 1):
            by.setdefault(p.pair, {})[p.place] = p
    both = [v for v in by.values() if 0 in v and 1 in v]
    pairs = [(v[0].debate, v[0].answer, v[1].answer) for v in both]
    if len(pairs) < 10:
        return None
    firsts = [a for _, a, _ in pairs]
    seconds = [b for _, _, b in pairs]
    sources: dict[str, list[tuple[str, float, float]]] = {}
    for v, pair in zip(both, pairs):
        sources.setdefault(v[0].source, []).append(pair)
    return PlaceLean(pairs=len(pairs), first=round(float(np.mean(firsts)), 4), second=round(float(np.mean(seconds)), 4),
                     flips=round(float(np.mean([(a > 0.5) != (b > 0.5) for _, a, b in pairs])), 4),
                     shift=shift_interval(pairs, seed),
                     by_source={k: SourceShift(pairs=len(v), shift=shift_interval(v, seed))
                                for k, v in sorted(sources.items())} if len(sources) > 1 else {})


def _platt(p: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Platt's map on one decision's answers (not mirrored: a decision has no sides to be symmetric in)."""
    x = logit(p)
    a, b = 1.0, 0.0
    prior = 1.0  # a light pull toward the identity keeps a few items from fitting a step
    for _ in range(100):
        q = 1 / (1 + np.exp(-(a * x + b)))
        g = np.array([(q - y) @ x + 2 * prior * (a - 1), (q - y).sum() + 2 * prior * b])
        w = q * (1 - q)
        h = np.array([[w @ (x * x) + 2 * prior, w @ x], [w @ x, w.sum() + 2 * prior]])
        step = np.linalg.solve(h, g)
        a, b = a - step[0], b - step[1]
        if abs(step).max() < 1e-9:
            break
    return float(a), float(b)


def fitted_map(answered: list[Probe], lean: PlaceLean | None) -> PMap | None:
    """A map from P (its place lean out) to the gold's rate, checked held out: debates dealt to two halves by a
    hash of their id, each half's Brier score under a fit on the other; kept only where it beats the raw P there."""
    def corrected(p: Probe) -> float:
        z = float(logit(np.array([p.answer]))[0])
        if lean is not None and p.place in (0, 1):
            z += (-0.5 if p.place == 0 else 0.5) * lean.shift.value
        return 1 / (1 + math.exp(-z))

    xs = np.array([corrected(p) for p in answered])
    ys = np.array([p.label for p in answered], float)
    half = np.array([zlib.crc32(p.debate.encode()) % 2 for p in answered])
    if len(set(half)) < 2 or len(answered) < 20:
        return None
    raw, mapped = [], []
    for h in (0, 1):
        fit, check = half != h, half == h
        if len(set(ys[fit])) < 2:
            return None
        a, b = _platt(xs[fit], ys[fit])
        q = 1 / (1 + np.exp(-(a * logit(xs[check]) + b)))
        raw += list((xs[check] - ys[check]) ** 2)
        mapped += list((q - ys[check]) ** 2)
    a, b = _platt(xs, ys)
    brier_raw, brier_mapped = float(np.mean(raw)), float(np.mean(mapped))
    if brier_mapped >= brier_raw:
        return None
    return PMap(a=round(a, 4), b=round(b, 4), fitted=len(answered), checked=len(answered),
                brier_raw=round(brier_raw, 4), brier_mapped=round(brier_mapped, 4))


def longer(answered: list[Probe]) -> float | None:
    rhos = []
    for label in (True, False):
        xs = [(p.answer, p.words) for p in answered if p.label is label]
        if len(xs) >= 10 and len({w for _, w in xs}) > 1 and len({a for a, _ in xs}) > 1:
            rhos.append(float(stats.spearmanr([a for a, _ in xs], [w for _, w in xs]).statistic))
    return round(float(np.mean(rhos)), 4) if rhos else None


def decision_profile(kind: str, asked: list[Probe], seed: int = 0) -> DecisionProfile:
    """One kind's figures from its answered probes (a probe with no answer was none of the options)."""
    answered = [p for p in asked if p.answer is not None]
    # the separation is measured on each labelled passage as first read (its own debate's order): the swapped
    # reading is the place lean's, and counting it too would count a passage twice
    first_read: dict[str, Probe] = {}
    for p in answered:
        if not p.place_only:
            first_read.setdefault(p.pair or f"{id(p)}", p)
    single = list(first_read.values())
    groups: dict[str, tuple[list[float], list[bool]]] = {}
    for p in single:
        g = groups.setdefault(p.debate, ([], []))
        g[0].append(p.answer)
        g[1].append(p.label)
    auc = None
    labels = {p.label for p in single}
    if len(labels) == 2 and len(groups) >= 2:
        value, low, high, _ = auc_interval(list(groups.values()), seed)
        auc = Interval(value=round(value, 4), low=round(low, 4), high=round(high, 4))
    lean = place_lean(answered, seed)
    return DecisionProfile(kind=kind, question=QUESTIONS.get(kind, kind), gold=GOLD[kind][1], items=len(single),
                           debates=len(groups), no_option=sum(not p.place_only for p in asked) -
                           sum(not p.place_only for p in answered), auc=auc, place=lean,
                           longer=longer(single), map=fitted_map(single, lean) if auc and auc.low > 0.5 else None,
                           base_rate=round(sum(p.label for p in single) / len(single), 4) if single else None)


# -------------------------------------------------------------------------------------------- asking


def cost(asked: list[Probe]) -> tuple[int, int]:
    """(calls, prompt tokens if nothing were cached) of asking ``asked``."""
    from debatrix.core.prompting import count_tokens

    return len(asked), sum(count_tokens(str(m.content)) + 4 for p in asked for m in p.messages)


async def ask(ctx: JudgeContext, asked: list[Probe], progress: Callable[[int, int], None] | None = None) -> list[Any]:
    """Every probe's P(yes), in order where the server caches prompts (a passage's questions share its prompt),
    else concurrently; the call records, for the usage."""
    records: list[Any] = []
    done = 0

    async def one(p: Probe) -> None:
        nonlocal done
        dist, record = await ctx.gateway.decision(p.messages, ("yes", "no"), node="profile")
        records.append(record)
        p.answer = None if dist is None else round(float(dist["yes"]), 5)
        done += 1
        if progress is not None:
            progress(done, len(asked))

    if ctx.settings.llm.prompt_cache:
        for p in asked:
            await one(p)
    else:
        await asyncio.gather(*(one(p) for p in asked))
    return records


def build_profile(asked: list[Probe], kinds: Sequence[str], *, model: ModelIdentity,
                  commit: str, command: str, keep: JudgeProfile | None = None, seed: int = 0) -> JudgeProfile:
    """The profile from the answered probes (``keep``: a profile of the same model whose verdict maps and place
    priors, measured by ``bench calibrate``, and readings, recorded from benchmark runs, are carried over: none is
    measured here, and each names the run or commit it came from)."""
    today = dt.date.today().isoformat()
    decisions = {k: decision_profile(k, [p for p in asked if p.kind == k], seed).model_copy(
        update={"measured": today, "commit": commit}) for k in kinds}
    return JudgeProfile(model=model, prompts_sha256=prompts_sha256(), commit=commit,
                        measured=today, gold=tuple(GOLD[k][1] for k in kinds),
                        command=command, decisions=decisions,
                        verdict_maps=keep.verdict_maps if keep else (), place_priors=keep.place_priors if keep else (),
                        readings=keep.readings if keep else ())


def enough(gold: Gold) -> str:
    """Why the sizes asked for cannot give intervals worth having ("": they can)."""
    if gold.debates < MIN_DEBATES:
        return f"--debates {gold.debates}: at least {MIN_DEBATES} debates a decision give an interval worth having"
    if gold.debates * gold.per_debate < MIN_ITEMS:
        return (f"--debates {gold.debates} x --per-debate {gold.per_debate} = {gold.debates * gold.per_debate} items: "
                f"at least {MIN_ITEMS} a decision give an interval worth having")
    return ""


# ------------------------------------------------------------------------- a person's corrections as gold

def correction_probes(results: Sequence[Any]) -> tuple[list[Probe], int]:
    """Every decision a person set in ``results`` (corrected flow judgments) that the model had made, as a probe:
    the model's P, and the person's value as the gold's label (at least 0.5: yes). Also how many corrections are
    left out because the model never made that decision (no figure of the model's to measure)."""
    from debatrix.core.review import debate_of, decisions_of

    out, unasked = [], 0
    for r in results:
        debate = debate_of(r)
        place = places(debate)
        index = debate.passage_index
        model = dict(decisions_of(r.flow))
        latest = {c.decision: c for c in r.corrections}
        for decision, c in latest.items():
            p = model.get(decision)
            if p is None:
                unasked += 1
                continue
            passage = index[decision[1]]
            out.append(Probe(decision[0], r.debate_id, c.value >= 0.5, [], passage.words, place.get(passage.speaker),
                             f"{r.debate_id}/{'/'.join(decision)}", answer=p, source="corrections"))
    return out, unasked


def corrections_profile(results: Sequence[Any], gold: str, seed: int = 0) -> dict[str, DecisionProfile]:
    """Each kind of decision a person corrected, measured against those corrections as gold (:func:`decision_profile`:
    ROC AUC with its interval over debates, the map and base rate where it carries), its ``gold`` said."""
    probes, _ = correction_probes(results)
    kinds = [k for k in KINDS if any(p.kind == k for p in probes)]
    today = dt.date.today().isoformat()
    return {k: decision_profile(k, [p for p in probes if p.kind == k], seed).model_copy(
        update={"gold": gold, "measured": today}) for k in kinds}
