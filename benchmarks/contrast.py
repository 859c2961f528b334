"""Known answers: real DebateArt debates with one side made worse in one known way, so the better side is known
whatever an audience thought. The judge should prefer the intact side on the dimension the change touches (and,
for changes this large, overall), whichever side was changed and whichever order it reads the debaters in.

Each item is one debate of ``../shared/data/panelbench/DebateArt`` with one side's speeches changed by one of
(every change is deterministic: a function of the debate, the side and the item's seed):
- ``source``: every sentence of that side carrying evidence is removed: a link or reference mark, a figure
  (a number of two or more digits, a percentage or an amount), or a named kind of source ("according to",
  "study", "report", "survey", "data" ...);
- ``argument``: the middle half of the sentences of each of that side's speeches is replaced by as many
  characters of plain sentences (no evidence, no quotation) from the longest speech of another debate (the next
  one in the pool), so the warrant of each speech is off topic;
- ``language``: each of that side's speeches has its sentences shuffled and a letter swap put in every third
  word of five letters or more;
- ``clash``: from that side's speeches after the debate's first, every sentence that engages the opponent is
  removed (the opponent's name, "you"/"your", "opponent", "Pro"/"Con", a quotation, a rebuttal verb).
A pair whose change touches less than ``MIN_CHANGE`` of that side's characters is no contrast and is not made.
The changed side alternates between the first and the second speaker over debates and changes (where that side's
change is no contrast, the other is changed) and its place is recorded, so the rates can be read with the changed side speaking first and second.

The default set (variant ``sample``): the first two rounds (four speeches) of 8 debates drawn with seed 0 from the
DebateArt debates whose first two rounds have at most 8,000 characters and in which all four changes make a
contrast (for the side whose turn it is, else the other): 32 items, sized for about an hour in ``direct`` mode with the default local model on two
CPU cores. Variant ``all`` takes every such debate of the
data (what an endpoint can afford). Figures: the share of items where the intact side wins the dimension the
change touches (DP: the verdict, probabilities averaged over the orders; ``argmax``: the orders' own answers
voted; SC: the scores compared), a tie counting half; where the mode does not judge that dimension (``clash`` in
the DebateArt set) the general verdict is read. 0.5 is what a judge that cannot see the change scores.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from debatrix.core.models import Debate, Side, Speech

from .base import Benchmark, BenchmarkDataError, Item, MetricRow, benchmark, coded, p_coded, verdict
from .panelbench import DebateArt

PERTURBATIONS = ("argument", "source", "language", "clash")
SAMPLE_DEBATES, SAMPLE_SEED, SAMPLE_MAX_LENGTH, SAMPLE_SPEECHES = 8, 0, 8_000, 4
MIN_CHANGE = 0.15  # share of the changed side's characters a change must touch to make a contrast
VARIANTS = ("sample", "all")

_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)|\n")
EVIDENCE = re.compile(
    r"https?://|www\.|\]\(|\[\d+\]|\(\d+\)|\b\d[\d,.]*\s*(%|percent\b)|[$£€]\s?\d|\b\d{2,}\b|according to|"
    r"\b(stud(y|ies)|report(s|ed)?|survey(s|ed)?|research|data|statistic(s|al)?|sources?|cited?|evidence|"
    r"journal|professor|university|institute|poll(s|ed)?)\b", re.IGNORECASE)
ENGAGES = re.compile(r"\b(you|your|you're|yours|opponents?|opponent's|pro|con|rebut\w*|refut\w*|claims?|claimed|"
                      r"argues|argued|says|said|contends?|asserts?)\b|[\"“”]\w[^\"“”]*\s[^\"“”]*[\"“”]|^\s*>",
                      re.IGNORECASE | re.MULTILINE)


def paragraphs(text: str) -> list[list[str]]:
    """The text's paragraphs, each as its sentences (split after . ! ? and at line breaks)."""
    out = []
    for para in _PARAGRAPH.split(text.strip()):
        sentences = [s.strip() for s in _SENTENCE.split(para) if s.strip()]
        if sentences:
            out.append(sentences)
    return out


def joined(paras: list[list[str]]) -> str:
    return "\n\n".join(" ".join(p) for p in paras if p)


def _kept(text: str, drop: Any) -> str:
    """The text without the sentences ``drop`` marks; never empty (the first sentence stays if all would go)."""
    paras = paragraphs(text)
    kept = [[s for s in p if not drop(s)] for p in paras]
    if not any(kept):
        return paras[0][0] if paras else text
    return joined(kept)


def without_sources(text: str) -> str:
    """``text`` without its sentences carrying evidence (links, references, figures, named sources)."""
    return _kept(text, lambda s: bool(EVIDENCE.search(s)))


def without_clash(text: str, opponents: list[str]) -> str:
    """``text`` without the sentences that engage the opponent (named, addressed, quoted or rebutted)."""
    names = re.compile("|".join(rf"\b{re.escape(n)}\b" for n in opponents), re.IGNORECASE) if opponents else None
    return _kept(text, lambda s: bool(ENGAGES.search(s) or (names and names.search(s))))


def off_topic(text: str, donor: str) -> str:
    """``text`` with the middle half of its sentences replaced by about as many characters of ``donor``'s
    sentences (from its start, those without evidence or quotation): the speech keeps its opening and close, its
    warrant is about something else."""
    flat = [s for p in paragraphs(text) for s in p]
    if len(flat) < 2:
        return text
    start, end = len(flat) // 4, max(len(flat) // 4 + 1, (3 * len(flat)) // 4)
    wanted = sum(len(s) + 1 for s in flat[start:end])
    taken: list[str] = []
    # the donor's plain sentences: a link or quotation carried over would change the side's sources too
    for s in (s for p in paragraphs(donor) for s in p if not EVIDENCE.search(s) and not s.startswith(">")):
        if sum(len(t) + 1 for t in taken) >= wanted:
            break
        taken.append(s)
    return joined([flat[:start], taken, flat[end:]])


def garbled(text: str, seed: int) -> str:
    """``text`` with its sentences in a shuffled order and two inner letters swapped in every third word of five
    letters or more (seeded: the same text and seed give the same garble)."""
    rng = random.Random(seed)
    flat = [s for p in paragraphs(text) for s in p]
    rng.shuffle(flat)
    out, long_words = [], 0
    for word in " ".join(flat).split(" "):
        core = word.strip(".,;:!?\"'()")
        if len(core) >= 5 and core.isalpha():
            long_words += 1
            if long_words % 3 == 0:
                k = word.index(core) + 1 + rng.randrange(len(core) - 3)
                word = word[:k] + word[k + 1] + word[k] + word[k + 2:]
        out.append(word)
    return " ".join(out)


def changed_share(before: str, after: str) -> float:
    """How much of ``before`` a change touched: its characters not found, sentence by sentence, in ``after``
    (for the shuffle: the words that are not where they were)."""
    if not before:
        return 0.0
    if sorted(before.split()) == sorted(after.split()) or len(before.split()) == len(after.split()):
        moved = sum(a != b for a, b in zip(before.split(), after.split(), strict=False))
        return moved / max(1, len(before.split()))
    gone = sum(len(s) for p in paragraphs(before) for s in p if s not in after)
    return gone / len(before)


def perturbed(debate: Debate, perturbation: str, side: Side, donor: Debate | None = None, seed: int = 0
              ) -> tuple[Debate, float]:
    """``debate`` with ``side``'s speeches changed by ``perturbation``, and the share of that side's characters
    the change touched."""
    if perturbation not in PERTURBATIONS:
        raise ValueError(f"unknown perturbation {perturbation!r} (one of {', '.join(PERTURBATIONS)})")
    changed = {d.name for d in debate.debaters if d.side is side}
    opponents = [d.name for d in debate.debaters if d.side is not side]
    if perturbation == "argument" and donor is None:
        raise ValueError("the argument perturbation needs a donor debate")
    donor_text = max((s.content for s in donor.speeches), key=len) if donor is not None else ""
    speeches, before, touched = [], 0, 0.0
    for i, s in enumerate(debate.speeches):
        text = s.content
        if s.speaker in changed:
            if perturbation == "source":
                text = without_sources(text)
            elif perturbation == "argument":
                text = off_topic(text, donor_text)
            elif perturbation == "language":
                text = garbled(text, seed + i)
            elif i > 0:  # clash: the debate's opening speech has nobody to answer yet
                text = without_clash(text, opponents)
            before += len(s.content)
            touched += changed_share(s.content, text) * len(s.content)
        speeches.append(Speech(speaker=s.speaker, content=text) if text != s.content else s)
    share = touched / before if before else 0.0
    tag = f"{debate.id}~{perturbation}~{side.value}"
    return debate.model_copy(update={"id": tag, "speeches": tuple(speeches)}), round(share, 4)


@dataclass(frozen=True)
class ContrastItem(Item):
    base: str = ""
    perturbation: str = ""
    degraded: Side = Side.PRO
    donor: str = ""
    seed: int = 0


@benchmark("Known answers: DebateArt debates with one side made worse in one known way per dimension",
           variants=VARIANTS)
class Contrast(Benchmark):
    name = "contrast"
    description = ("pairs with a known better side: one side's sources removed, warrant replaced, language "
                   "garbled or clash removed; share of items where the intact side wins (DP, argmax, SC)")
    headline = tuple(f"intact_dp_{p}" for p in PERTURBATIONS)

    def __init__(self, data: str | Path | None = None, variant: str = "sample"):
        if variant not in VARIANTS:
            raise BenchmarkDataError(f"contrast: unknown variant {variant!r} (one of {', '.join(VARIANTS)})")
        self.art, self.variant = DebateArt(data), variant

    def pairs(self) -> list[tuple[Debate, Debate, dict[str, list[Side]]]]:
        """Every debate of the variant's length (id order) with its donor (the next debate) and, for each change,
        the sides it makes a contrast for."""
        cap = SAMPLE_MAX_LENGTH if self.variant == "sample" else None
        debates = [self._excerpt(self.art.debate(it)) for it in self.art.load()]
        debates = [d for d in debates if cap is None or sum(len(s.content) for s in d.speeches) <= cap]
        out = []
        for k, d in enumerate(debates):
            donor = debates[(k + 1) % len(debates)]
            sides = {p: [x for x in Side if perturbed(d, p, x, donor)[1] >= MIN_CHANGE] for p in PERTURBATIONS}
            out.append((d, donor, {p: v for p, v in sides.items() if v}))
        return out

    def load(self) -> list[ContrastItem]:
        pairs = self.pairs()
        if self.variant == "sample":  # debates that make all four contrasts, so each change has its 8 items
            full = [x for x in pairs if len(x[2]) == len(PERTURBATIONS)]
            keep = set(random.Random(SAMPLE_SEED).sample(range(len(full)), min(SAMPLE_DEBATES, len(full))))
            pairs = [x for k, x in enumerate(full) if k in keep]
        items = []
        for k, (d, donor, sides) in enumerate(pairs):
            for j, (p, able) in enumerate((p, sides[p]) for p in PERTURBATIONS if p in sides):
                # the first and the second speaker take turns over the debates and changes (the other where the
                # turn's side makes no contrast), so each change is read with the changed side in both places
                first = d.debater(d.speeches[0].speaker).side
                turn = first if (k + j) % 2 == 0 else (Side.CON if first is Side.PRO else Side.PRO)
                side = turn if turn in able else able[0]
                items.append(ContrastItem(id=f"{d.id}~{p}~{side.value}", path=self._path(d.id), base=d.id,
                                          perturbation=p, degraded=side, donor=donor.id, seed=k))
        if not items:
            raise BenchmarkDataError("contrast: no DebateArt debate makes a contrast (see SOURCE.md of the data)")
        return items

    def _path(self, debate_id: str) -> Path:
        return self.art.root / "motion" / f"{debate_id}.yml"

    def _excerpt(self, debate: Debate) -> Debate:
        """The sample judges each debate's first two rounds (four speeches: both openings and both first
        replies, so clash has something to answer); ``all`` judges whole debates."""
        if self.variant != "sample" or len(debate.speeches) <= SAMPLE_SPEECHES:
            return debate
        return debate.model_copy(update={"speeches": debate.speeches[:SAMPLE_SPEECHES]})

    def _base(self, debate_id: str) -> Debate:
        return self._excerpt(self.art.debate(Item(id=debate_id, path=self._path(debate_id))))

    def subset(self, items: list[Item], limit: int | None, seed: int = 0) -> list[Item]:
        """``--limit N``: the items of the first N debates of the set (all four changes of each)."""
        if not limit:
            return items
        bases = list(dict.fromkeys(it.base for it in items))[:limit]  # type: ignore[attr-defined]
        return [it for it in items if it.base in bases]  # type: ignore[attr-defined]

    def debate(self, item: ContrastItem) -> Debate:  # type: ignore[override]
        base, donor = self._base(item.base), self._base(item.donor)
        return perturbed(base, item.perturbation, item.degraded, donor, item.seed)[0]

    def size(self, item: Item) -> int:
        return sum(len(s.content) for s in self.debate(item).speeches)  # type: ignore[arg-type]

    def gold_record(self, item: ContrastItem) -> dict[str, Any]:  # type: ignore[override]
        base, donor = self._base(item.base), self._base(item.donor)
        first = base.debater(base.speeches[0].speaker).side
        # the gold in the code of :meth:`sides`: the intact side should win the changed dimension and overall
        return {"gold": {item.perturbation: 1.0, "general": 1.0},
                "perturbation": item.perturbation, "degraded": item.degraded.value, "base": item.base,
                "degraded_first": first is item.degraded,
                "change": perturbed(base, item.perturbation, item.degraded, donor, item.seed)[1]}

    def sides(self, item: ContrastItem, debate: Debate) -> dict[str, float]:  # type: ignore[override]
        """The intact side 1.0, the changed side 0.0 (a tie 0.5): the side that should win is known."""
        return {d.name: 0.0 if d.side is item.degraded else 1.0 for d in debate.debaters}

    def metrics(self, records: list[dict[str, Any]]) -> list[MetricRow]:
        rows = [MetricRow("completion_rate", "all",
                          sum(r["status"] == "complete" for r in records) / len(records) if records else 0.0,
                          len(records))]
        done = [r for r in records if r["status"] == "complete" and verdict(r, target_of(r))]
        subsets = {"all": lambda r: True, "degraded_first": lambda r: r["degraded_first"],
                   "degraded_second": lambda r: not r["degraded_first"]}
        for p in (*PERTURBATIONS, "all"):
            mine = [r for r in done if p == "all" or r["perturbation"] == p]
            for subset, keep in subsets.items():
                sub = [r for r in mine if keep(r)]
                for method in ("dp", "argmax", "sc"):
                    values = [x for r in sub if (x := intact_read(r, target_of(r), method)) is not None]
                    if values:
                        rows.append(MetricRow(f"intact_{method}_{p}", subset, sum(values) / len(values),
                                              len(values)))
                general = [intact_read(r, "general", "dp") for r in sub if verdict(r, "general")]
                if general and subset == "all":
                    rows.append(MetricRow(f"intact_general_dp_{p}", "all", sum(general) / len(general),
                                          len(general)))
        return rows

    def baselines(self, items: list[Item]) -> list[MetricRow]:
        """A judge blind to the change (0.5), and one that names whoever wrote more words: the changes that remove
        sentences (sources, engagement) leave the changed side shorter, so a judge that rewards length scores on
        them without reading a word; what a judge sees beyond that is its margin over this row."""
        rows = [MetricRow(f"intact_dp_{p}", "all", 0.5, sum(it.perturbation == p for it in items),  # type: ignore
                          baseline="blind (cannot see the change)") for p in PERTURBATIONS]
        longer: dict[str, list[float]] = {}
        for it in items:
            debate = self.debate(it)  # type: ignore[arg-type]
            words = {d.name: sum(len(s.content.split()) for s in debate.speeches if s.speaker == d.name)
                     for d in debate.debaters}
            intact = next(d.name for d in debate.debaters if d.side is not it.degraded)  # type: ignore[attr-defined]
            changed = next(n for n in words if n != intact)
            value = 0.5 if words[intact] == words[changed] else float(words[intact] > words[changed])
            longer.setdefault(it.perturbation, []).append(value)  # type: ignore[attr-defined]
            longer.setdefault("all", []).append(value)
        return rows + [MetricRow(f"intact_dp_{p}", "all", round(sum(v) / len(v), 4), len(v),
                                 baseline="the side with more words") for p, v in longer.items()]


def target_of(record: dict[str, Any]) -> str:
    """The dimension a record's change touches, or "general" where the mode did not judge that dimension."""
    return record["perturbation"] if verdict(record, record["perturbation"]) else "general"


def intact_read(record: dict[str, Any], dimension: str, method: str) -> float | None:
    """How a verdict reads the change (1: the intact side named, 0.5: a tie, 0: the changed side): ``dp`` its
    winner, ``sc`` by the scores, ``argmax`` the orders' answers counted; ``p_intact`` the intact side's
    probability (a tie counting half)."""
    v = verdict(record, dimension)
    if v is None:
        return None
    if method == "p_intact":
        return p_coded(record, dimension, 1.0)
    if method == "argmax":
        votes = [coded(record, o["winner"]) for o in v["orders"]]
        mine, theirs = votes.count(1.0), votes.count(0.0)
        return (1.0 if mine > theirs else 0.0 if theirs > mine else 0.5) if votes else None
    return coded(record, v["winner" if method == "dp" else "score_winner"])
