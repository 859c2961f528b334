"""The flow's small decisions, measured on gold before anything is built on them: can the model make each above
chance? Each decision is asked as the flow asks it: the speech read as numbered passages, then the question, which
names the passage or point by its id *and says what it says* (asked by id alone, the default local model decided
at chance on every gold here: it does not look an id up in the material above; docs/researchers.md has both figures), the
options' probabilities read from the first answer token through :meth:`LLMGateway.decision`.

Variants (``debatrix bench decisions --variant V``):
- ``address``: does a speech address a point (make it or argue about it)? Gold: the IBM Debater claims mentioned in
  speeches (Explicit or Implicit against Negative), 3,246 speech-claim pairs over 200 speeches; one item per
  speech, each claim asked about after it. Figure: ROC AUC of P(yes), the measure of the claim-matching paper
  (Orbach et al., EMNLP 2019).
- ``on-topic``: is a passage an argument about the motion? Gold: the known-answer suite's off-topic change
  (:mod:`debatrix.benchmarks.contrast`, its ``argument`` items): the passages of the changed side made mostly of
  another debate's sentences are off topic, every other passage is the debate's own. Figure: ROC AUC of P(yes), and
  the share of items whose intact side gets the higher mean.
- ``language``: which of two speeches at the same place is better written? Gold: the suite's ``language`` items
  (one side's sentences shuffled, letters swapped); asked in both orders, the probabilities averaged. Figure: the
  share of pairs whose intact speech is preferred, and its mean probability.
- ``evidence``: does a passage back its point with evidence? Gold: the suite's own mark of evidence (a link, a
  reference mark, a figure or a named kind of source: the sentences its ``source`` change removes), on the
  unchanged debates of the ``source`` items. Figure: ROC AUC of P(yes).
- ``engages``: does a speech address each of the other side's earlier passages? Gold: the suite's ``clash`` items,
  where one side's speeches after the first lost every sentence engaging the opponent. Figure: the share of items
  whose intact side's mean P(addressed) is the higher.
- ``address-flow``: the ``address`` gold asked as the flow mode asks it: of the one passage of the speech sharing
  most of the point's rarer words (the flow's word weighting; unlike the flow, every point is asked, so that every
  pair of the gold is scored), with that passage alone as the prompt and the flow's own question
  (:func:`debatrix.core.flow.passage_messages`); the speech's score is that passage's P(yes).
- ``on-topic-flow`` and ``evidence-flow``: the ``on-topic`` and ``evidence`` gold asked in the very request the flow
  sends (the passage alone, then the flow's own template: prompts/flow_argues.j2, prompts/flow_evidence.j2), so what
  is measured is what the flow asks.
- ``address-proposals``: the ``address`` gold read as the flow's proposals (no call): the claims as the points open
  to the speech, its passages as the ones asked, and for each rule (:data:`PROPOSAL_RULES`: today's three a passage
  by words and meaning, within the flow's budget, beside one a passage and the rule before it) the share of the
  claims the speech mentions that would be asked about at all (recall), and the share of all its claims asked.
- ``address-lexical`` and ``on-topic-lexical``: the same gold read by a lookup instead of the model (no call): the
  largest share of a point's words found in one passage of the speech, and the share of a passage's words found in
  the rest of its debate (the other speeches and the motion), each word weighted by its inverse document frequency
  over the data's passages, so words every passage has (function words, in any language) weigh nearly nothing and
  no word list is needed. What a decision must beat to be worth a call.
"""

from __future__ import annotations

import csv
import functools
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from debatrix.context import JudgeContext
from debatrix.core import prompting as P
from debatrix.core.flow import ASK_PER_PASSAGE, asked_budget, covered, gist, idf, propose, terms
from debatrix.core.models import Debate, Debater, Side, Speech
from debatrix.core.settings import JudgeSettings

from .base import Benchmark, BenchmarkDataError, Item, MetricRow, benchmark, calls_usage, data_root
from .contrast import Contrast
from .metrics import roc_auc

VARIANTS = ("address", "on-topic", "language", "evidence", "engages", "address-flow", "on-topic-flow", "evidence-flow",
            "address-lexical",
            "on-topic-lexical", "engages-lexical", "address-proposals")
#: the proposal rules ``address-proposals`` compares: passages' rows at most, and whether meaning is used
PROPOSAL_RULES = {"one a passage, words (before)": (1, False), "one a passage, words": (1, False),
                  "one a passage, words and meaning": (1, True), "the flow's: three a passage, words": (3, False),
                  "the flow's: three a passage, words and meaning": (3, True)}
ON_TOPIC = "is {id} an argument about the motion (a reason for or against it)?"
EVIDENCE = "does {id} back its point with evidence: a cited source or link, a figure, a study or a concrete example?"
BETTER_WRITTEN = "Which speech is more clearly written, well organised and correctly spelled?"


@dataclass(frozen=True)
class DecisionItem(Item):
    contrast: str = ""  # the contrast item's id (on-topic, language)


def _messages(debate: Debate, material: str, question: str) -> list[Any]:
    fence = P.fence_for(debate)
    return [SystemMessage(content=P.system_text(fence)), HumanMessage(content=f"{P.header(debate)}{material}{question}")]


async def _yes(context: JudgeContext, debate: Debate, p: Any, question: str, fence: str) -> tuple[float | None, Any]:
    """P(yes) to a question about passage ``p``, asked after its speech read as numbered passages."""
    ask = P.render("decide_passage.j2", P.DecidePassageVars(id=p.id, text=P.one_line(p.text, fence), question=question))
    dist, record = await context.gateway.decision(_messages(debate, P.passage_block(debate, p.speech, fence), ask),
                                                  ["yes", "no"], node="decide_passage")
    return (None if dist is None else round(dist["yes"], 5)), record


async def _flow_yes(context: JudgeContext, debate: Debate, p: Any, template: str) -> tuple[float | None, Any]:
    """P(yes) to one of the flow's own questions about passage ``p`` (``template``), in the very request the flow
    sends (:func:`debatrix.core.flow.about_passage`: the passage alone, then the question)."""
    from debatrix.core.flow import about_passage

    dist, record = await context.gateway.decision(about_passage(debate, p, template), ["yes", "no"],
                                                  node="flow_speech")
    return (None if dist is None else round(dist["yes"], 5)), record


def _words(text: str) -> str:
    return re.sub(r"\W+", " ", text).lower().strip()


def _own_share(p: Any, base: Debate) -> float:
    """The share of passage ``p``'s words in sentences found in its speech before the suite changed it."""
    original = _words(base.speeches[p.speech].content)
    sentences = [x for x in re.split(r"(?<=[.!?])\s+|\n", p.text) if _words(x)]
    return sum(len(x.split()) for x in sentences if _words(x) in original) / max(1, p.words)


def _speech_debate(row: dict[str, str], motion: str = "") -> Debate:
    """An IBM speech as the second speech of a pseudo-debate: it answers points "made in the debate" before it,
    whose first speech is not shown (its passages are what the flow reads)."""
    side = Side.PRO if row["speech-to-motion-polarity"] == "PRO" else Side.CON
    other = Side.CON if side is Side.PRO else Side.PRO
    return Debate(id=row["speech-id"], motion=motion or row.get("motion-id") or row["speech-id"],
                  debaters=(Debater(name="Speaker", side=side), Debater(name="Other side", side=other)),
                  speeches=(Speech(speaker="Other side", content="(not shown)"),
                            Speech(speaker="Speaker", content=row["speech-text"])))


def _one_each(asking: list[tuple[str, str]], rows: list[tuple[str, str]], weights: dict[str, float]
              ) -> dict[str, list[str]]:
    """The proposal rule before 935daf9, kept to compare: each passage proposes the one row whose rarer words it
    shares most, and each row proposed is asked once, of the passage sharing most with it."""
    best: dict[str, tuple[float, str]] = {}
    for pid, text in asking:
        said = set(terms(text))
        score, rid = max((covered(terms(t), said, weights), r) for r, t in rows)
        if score > 0 and score > best.get(rid, (0.0, ""))[0]:
            best[rid] = (score, pid)
    out: dict[str, list[str]] = {}
    for rid, (_, pid) in best.items():
        out.setdefault(pid, []).append(rid)
    return out


def ibm_claims(root: Path) -> tuple[dict[str, dict[str, str]], dict[str, list[dict[str, str]]]]:
    """The IBM speeches by id and the claims asked of each (their rows: label Explicit, Implicit or Negative), from
    the data folder ``root``."""
    folder = root / "ibm_rdd_v4_gprkb55"
    try:
        with (folder / "speech-transcripts.csv").open(encoding="utf-8", newline="") as fh:
            speeches = {r["speech-id"]: r for r in csv.DictReader(fh)}
        pairs: dict[str, list[dict[str, str]]] = {}
        with (folder / "GP-claims-mentioned-in-speeches.csv").open(encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh):
                pairs.setdefault(r["speech-id"], []).append(r)
    except FileNotFoundError as e:
        raise BenchmarkDataError(f"{e.filename}: not found (the IBM claim data, see its SOURCE.md)") from None
    return speeches, pairs


def ibm_claim_sentences(root: Path) -> tuple[dict[str, dict[str, str]], dict[tuple[str, str], list[dict[str, str]]]]:
    """The IBM speeches by id and, per (speech, claim for the motion), its annotated sentences (rows with
    ``sentence-text`` and ``is-claim-mentioned-in-sentence``), from the data folder ``root``."""
    speeches, _ = ibm_claims(root)
    path = root / "ibm_rdd_v4_gprkb55" / "GP-claim-to-sentence-matching.csv"
    pairs: dict[tuple[str, str], list[dict[str, str]]] = {}
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh):
                pairs.setdefault((r["speech-id"], r["GP-claim-text-for-motion"]), []).append(r)
    except FileNotFoundError:
        raise BenchmarkDataError(f"{path}: not found (the IBM claim data, see its SOURCE.md)") from None
    return {k: v for k, v in speeches.items() if any(k == sid for sid, _ in pairs)}, pairs


@benchmark("The flow's small decisions against gold (IBM claims, the known-answer suite), asked of the model as the "
           "flow asks them, and the lookups they must beat", variants=VARIANTS)
class Decisions(Benchmark):
    name = "decisions"
    modes_matter = False
    description = "the flow's small decisions, asked as the flow asks them, against gold"

    def __init__(self, data: str | Path | None = None, variant: str = "address"):
        if variant not in VARIANTS:
            raise BenchmarkDataError(f"decisions: unknown variant {variant!r} (one of {', '.join(VARIANTS)})")
        self.variant = variant
        self.root = Path(data) if data else data_root()
        self.headline = {"language": ("intact_preferred",), "address-proposals": ("recall",)}.get(variant, ("roc_auc",))
        self._contrast: Contrast | None = None
        self._contrast_items: dict[str, Any] | None = None
        self._ibm_data: tuple[dict[str, dict[str, str]], dict[str, list[dict[str, str]]]] | None = None
        self._idf_cache: dict[str, float] | None = None

    # ----------------------------------------------------------------------------------------------- items

    @property
    def contrast(self) -> Contrast:
        if self._contrast is None:
            self._contrast = Contrast(self.root / "panelbench")
        return self._contrast

    def _contrast_item(self, item: Item) -> Any:
        """The suite's item behind ``item`` (the suite's items are built once: each changes every debate)."""
        if self._contrast_items is None:
            self._contrast_items = {it.id: it for it in self.contrast.load()}
        return self._contrast_items[item.contrast]  # type: ignore[attr-defined]

    def _ibm(self) -> tuple[dict[str, dict[str, str]], dict[str, list[dict[str, str]]]]:
        """The IBM speeches by id and their claims by speech id, read once."""
        if self._ibm_data is not None:
            return self._ibm_data
        speeches, pairs = ibm_claims(self.root)
        self._ibm_data = speeches, pairs
        return self._ibm_data

    def load(self) -> list[Item]:
        if self.variant.startswith("address"):
            speeches, _ = self._ibm()
            return [DecisionItem(id=sid) for sid in sorted(speeches)]
        kind = {"on-topic": "argument", "evidence": "source", "engages": "clash"}.get(
            self.variant.removesuffix("-lexical").removesuffix("-flow"), "language")
        return [DecisionItem(id=it.id, contrast=it.id) for it in self.contrast.load() if it.perturbation == kind]

    def gold_record(self, item: Item) -> dict[str, Any]:
        return {"variant": self.variant}

    # ----------------------------------------------------------------------------------------------- asking

    async def run_item(self, item: Item, settings: JudgeSettings, context: JudgeContext) -> dict[str, Any]:
        started = time.perf_counter()
        ask = {"address": self._address, "address-flow": self._address_flow, "on-topic": self._on_topic,
               "language": self._language,
               "evidence": self._evidence, "engages": self._engages,
               "on-topic-flow": functools.partial(self._on_topic, flow=True),
               "evidence-flow": functools.partial(self._evidence, flow=True),
               "address-lexical": self._address_lexical, "on-topic-lexical": self._on_topic_lexical,
               "engages-lexical": self._engages_lexical, "address-proposals": self._address_proposals}[self.variant]
        pred, calls = await ask(item, context)
        return {"status": "complete", "reason": None, "pred": pred, "usage": calls_usage(calls, started)}

    async def _address(self, item: Item, context: JudgeContext) -> tuple[dict[str, Any], list[Any]]:
        speeches, pairs = self._ibm()
        row, claims = speeches[item.id], pairs.get(item.id, [])
        debate = _speech_debate(row, claims[0]["motion-text"] if claims else row["speech-id"])
        fence = P.fence_for(debate)
        material = P.passage_block(debate, 1, fence)
        scores, gold, calls = [], [], []
        for k, c in enumerate(claims, 1):
            question = P.render("decide_answer.j2", P.DecideAnswerVars(
                index=2, target=f"C{k}", text=P.quoted(c["GP-claim-text-for-motion"], fence), fence=fence))
            dist, record = await context.gateway.decision(_messages(debate, material, question), ["yes", "no"],
                                                          node="decide_answer")
            calls.append(record)
            scores.append(None if dist is None else round(dist["yes"], 5))
            gold.append(c["label"] != "Negative")
        return {"scores": scores, "gold": gold}, calls

    async def _address_flow(self, item: Item, context: JudgeContext) -> tuple[dict[str, Any], list[Any]]:
        from debatrix.core.flow import GIST_ASKED, debate_idf
        from debatrix.graphs.flow_nodes import passage_messages

        speeches, pairs = self._ibm()
        row, claims = speeches[item.id], pairs.get(item.id, [])
        debate = _speech_debate(row, claims[0]["motion-text"] if claims else row["speech-id"])
        fence = P.fence_for(debate)
        weights = debate_idf(debate)  # the flow's own lookup: words weighed by their rarity in this debate
        own = [p for p in debate.passages if p.speech == 1]
        best = self._closest(own, claims, weights, context)
        scores: list[float | None] = [None] * len(claims)
        calls = []
        # grouped by passage, in speech order: each passage is read once for all the points asked of it, as in the
        # flow (the server's prompt cache keeps it)
        for k in sorted(range(len(claims)), key=lambda k: own.index(best[k])):
            question = P.render("flow_answer.j2", P.FlowAnswerVars(
                fence=fence, id=best[k].id, target=f"C{k + 1}", speaker="Other side",
                text=P.quoted(gist(claims[k]["GP-claim-text-for-motion"], GIST_ASKED), fence)))
            dist, record = await context.gateway.decision(passage_messages(debate, best[k], question), ["yes", "no"],
                                                          node="decide_answer")
            calls.append(record)
            scores[k] = None if dist is None else round(dist["yes"], 5)
        return {"scores": scores, "gold": [c["label"] != "Negative" for c in claims]}, calls

    async def _on_topic(self, item: Item, context: JudgeContext, flow: bool = False
                        ) -> tuple[dict[str, Any], list[Any]]:
        contrast = self.contrast
        it = self._contrast_item(item)
        debate, base = contrast.debate(it), contrast._base(it.base)
        fence = P.fence_for(debate)
        scores, gold, intact, calls = [], [], [], []
        for p in debate.passages:
            changed = p.side is it.degraded
            score, record = await (_flow_yes(context, debate, p, "flow_argues.j2") if flow
                                   else _yes(context, debate, p, ON_TOPIC, fence))
            calls.append(record)
            scores.append(score)
            gold.append(not changed or _own_share(p, base) >= 0.5)
            intact.append(not changed)
        return {"scores": scores, "gold": gold, "intact": intact}, calls

    async def _evidence(self, item: Item, context: JudgeContext, flow: bool = False
                        ) -> tuple[dict[str, Any], list[Any]]:
        from .contrast import EVIDENCE

        it = self._contrast_item(item)
        debate = self.contrast._base(it.base)  # unchanged: the gold is the suite's mark on its own text
        fence = P.fence_for(debate)
        scores, gold, calls = [], [], []
        for p in debate.passages:
            score, record = await (_flow_yes(context, debate, p, "flow_evidence.j2") if flow
                                   else _yes(context, debate, p, EVIDENCE, fence))
            calls.append(record)
            scores.append(score)
            gold.append(bool(EVIDENCE.search(p.text)))
        return {"scores": scores, "gold": gold}, calls

    async def _engages(self, item: Item, context: JudgeContext) -> tuple[dict[str, Any], list[Any]]:
        it = self._contrast_item(item)
        debate = self.contrast.debate(it)
        fence = P.fence_for(debate)
        scores, intact, calls = [], [], []
        for i in range(1, len(debate.speeches)):
            speaker = debate.speeches[i].speaker
            earlier = [p for p in debate.passages if p.speech < i and p.speaker != speaker]
            material = P.passage_block(debate, i, fence)
            for p in earlier:
                question = P.render("decide_answer.j2", P.DecideAnswerVars(
                    index=i + 1, target=p.id, text=P.quoted(gist(p.text, 24), fence), fence=fence))
                dist, record = await context.gateway.decision(_messages(debate, material, question),
                                                              ["yes", "no"], node="decide_answer")
                calls.append(record)
                scores.append(None if dist is None else round(dist["yes"], 5))
                intact.append(debate.debater(speaker).side is not it.degraded)
        return {"scores": scores, "gold": intact, "intact": intact}, calls

    async def _language(self, item: Item, context: JudgeContext) -> tuple[dict[str, Any], list[Any]]:
        contrast = self.contrast
        it = self._contrast_item(item)
        debate = contrast.debate(it)
        fence = P.fence_for(debate)
        pairs, calls = [], []
        for r in range(0, len(debate.speeches) - 1, 2):
            a, b = r, r + 1
            p_a = []
            for first, second in ((a, b), (b, a)):
                material = P.speech_block(debate, first, fence) + P.speech_block(debate, second, fence)
                question = P.render("decide_pair.j2", P.DecidePairVars(
                    question=f"{BETTER_WRITTEN} A: speech {first + 1}. B: speech {second + 1}."))
                dist, record = await context.gateway.decision(_messages(debate, material, question), ["A", "B"],
                                                              node="decide_pair")
                calls.append(record)
                if dist is not None:
                    p_a.append(dist["A"] if first == a else dist["B"])
            if p_a:
                mean = sum(p_a) / len(p_a)
                a_changed = debate.debater(debate.speeches[a].speaker).side is it.degraded
                pairs.append(round(mean if not a_changed else 1 - mean, 5))
        return {"p_intact": pairs}, calls

    def _closest(self, own: list[Any], claims: list[dict[str, str]], weights: dict[str, float],
                 context: JudgeContext | None) -> list[Any]:
        """The passage of the speech each claim is asked of, as the flow picks it (:func:`propose` with no cap:
        shared rare words plus closeness in meaning, with the run's embedder)."""
        from debatrix.graphs.flow_nodes import MEANING_WORDS, embedded, embedder

        rows = [(f"C{k + 1}", c["GP-claim-text-for-motion"]) for k, c in enumerate(claims)]
        asking = [(p.id, p.text) for p in own]
        embed, _ = embedder(context.settings.memory.embedding if context is not None else "minilm")
        meaning = embedded(embed, {k: gist(t, MEANING_WORDS) for k, t in asking + rows})  # as the flow embeds
        got = propose(asking, rows, weights, meaning, per_passage=len(rows), budget=len(rows))
        at = {r: pid for pid, rs in got.items() for r in rs}
        by_id = {p.id: p for p in own}
        return [by_id[at[rid]] if rid in at else own[0] for rid, _ in rows]

    # ----------------------------------------------------------------------------------------------- lookups

    async def _address_proposals(self, item: Item, context: JudgeContext) -> tuple[dict[str, Any], list[Any]]:
        """Which of a speech's gold claims the flow would ask it about (no call): the claims as the open rows, the
        speech's passages as the asking ones, under each proposal rule beside today's (:data:`PROPOSAL_RULES`)."""
        from debatrix.graphs.flow_nodes import MEANING_WORDS, embedded, embedder

        speeches, pairs = self._ibm()
        claims = pairs.get(item.id, [])
        weights = self._idf()
        asking = [(p.id, p.text) for p in _speech_debate(speeches[item.id]).passages if p.speech == 1]
        rows = [(f"C{k + 1}", c["GP-claim-text-for-motion"]) for k, c in enumerate(claims)]
        embed, how = embedder(context.settings.memory.embedding)
        meaning = embedded(embed, {k: gist(t, MEANING_WORDS) for k, t in asking + rows})  # as the flow embeds
        proposed = {}
        for rule, (per, by_meaning) in PROPOSAL_RULES.items():
            if rule == "one a passage, words (before)":
                got = _one_each(asking, rows, weights)
            else:
                got = propose(asking, rows, weights, meaning if by_meaning else None, per_passage=per,
                              budget=asked_budget(len(asking), len(rows)) if per == ASK_PER_PASSAGE else None)
            asked = {r for rs in got.values() for r in rs}
            proposed[rule] = [rid in asked for rid, _ in rows]
        return {"gold": [c["label"] != "Negative" for c in claims], "proposed": proposed, "meaning": how,
                "passages": len(asking)}, []


    def _idf(self) -> dict[str, float]:
        """Inverse document frequency of each word over the variant's data, a passage a document."""
        if self._idf_cache is None:
            if self.variant.startswith("address"):
                speeches, _ = self._ibm()
                docs = [p.text for r in speeches.values() for p in _speech_debate(r).passages]
            else:
                docs = [p.text for it in self.contrast.load() for p in self.contrast._base(it.base).passages]
            self._idf_cache = idf(docs)
        return self._idf_cache

    async def _address_lexical(self, item: Item, context: JudgeContext) -> tuple[dict[str, Any], list[Any]]:
        speeches, pairs = self._ibm()
        weights = self._idf()
        passages = [set(terms(p.text)) for p in _speech_debate(speeches[item.id]).passages]
        scores, gold = [], []
        for c in pairs.get(item.id, []):
            scores.append(round(max(covered(terms(c["GP-claim-text-for-motion"]), p, weights) for p in passages), 5))
            gold.append(c["label"] != "Negative")
        return {"scores": scores, "gold": gold}, []

    async def _on_topic_lexical(self, item: Item, context: JudgeContext) -> tuple[dict[str, Any], list[Any]]:
        contrast = self.contrast
        it = self._contrast_item(item)
        debate, base = contrast.debate(it), contrast._base(it.base)
        weights = self._idf()
        scores, gold, intact = [], [], []
        # the motion and the other side's speeches: what an argument about this debate shares words with (the
        # speaker's own other speeches would vouch for a digression repeated in each of them)
        rest = {side: set(terms(debate.motion)).union(*(terms(q.text) for q in debate.passages if q.side is not side))
                for side in Side}
        for p in debate.passages:
            scores.append(round(covered(terms(p.text), rest[p.side], weights), 5))
            changed = p.side is it.degraded
            gold.append(not changed or _own_share(p, base) >= 0.5)
            intact.append(not changed)
        return {"scores": scores, "gold": gold, "intact": intact}, []

    async def _engages_lexical(self, item: Item, context: JudgeContext) -> tuple[dict[str, Any], list[Any]]:
        it = self._contrast_item(item)
        debate = self.contrast.debate(it)
        weights = self._idf()
        scores, intact = [], []
        for i in range(1, len(debate.speeches)):
            speaker = debate.speeches[i].speaker
            said = set(terms(debate.speeches[i].content))
            for p in (p for p in debate.passages if p.speech < i and p.speaker != speaker):
                scores.append(round(covered(terms(p.text), said, weights), 5))
                intact.append(debate.debater(speaker).side is not it.degraded)
        return {"scores": scores, "gold": intact, "intact": intact}, []

    # ----------------------------------------------------------------------------------------------- figures

    def metrics(self, records: list[dict[str, Any]]) -> list[MetricRow]:
        done = [r for r in records if r["status"] == "complete" and r.get("pred")]
        rows: list[MetricRow] = []
        if self.variant == "address-proposals":  # recall: of the claims a speech mentions, the share proposed
            for rule in PROPOSAL_RULES:
                flags = [(p, g) for r in done for p, g in zip(r["pred"]["proposed"][rule], r["pred"]["gold"])]
                mentioned = [p for p, g in flags if g]
                if mentioned:
                    rows.append(MetricRow("recall", rule, sum(mentioned) / len(mentioned), len(mentioned)))
                    rows.append(MetricRow("proposed_share", rule, sum(p for p, _ in flags) / len(flags), len(flags)))
            return rows
        if self.variant == "language":
            ps = [p for r in done for p in r["pred"]["p_intact"]]
            if ps:
                rows.append(MetricRow("intact_preferred", "all", sum(p > 0.5 for p in ps) / len(ps), len(ps)))
                rows.append(MetricRow("p_intact_mean", "all", sum(ps) / len(ps), len(ps)))
            return rows
        pairs = [(s, g) for r in done for s, g in zip(r["pred"]["scores"], r["pred"]["gold"]) if s is not None]
        missing = sum(s is None for r in done for s in r["pred"]["scores"])
        rows.append(MetricRow("missing_decisions", "all", missing, len(pairs) + missing))
        if pairs and len({g for _, g in pairs}) == 2:
            rows.append(MetricRow("roc_auc", "all", roc_auc([s for s, _ in pairs], [g for _, g in pairs]),
                                  len(pairs)))
        if self.variant.startswith(("on-topic", "engages")):
            right = []
            for r in done:
                mine = [(s, i) for s, i in zip(r["pred"]["scores"], r["pred"]["intact"]) if s is not None]
                a, b = [s for s, i in mine if i], [s for s, i in mine if not i]
                if a and b:
                    right.append(sum(a) / len(a) > sum(b) / len(b))
            if right:
                rows.append(MetricRow("intact_side_higher", "all", sum(right) / len(right), len(right)))
        return rows

    def baselines(self, items: list[Item]) -> list[MetricRow]:
        if self.variant == "language":
            return [MetricRow("intact_preferred", "all", 0.5, len(items), baseline="blind (cannot see the change)")]
        return [MetricRow("roc_auc", "all", 0.5, len(items), baseline="constant score")]
