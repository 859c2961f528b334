"""A person in the loop, measured (a script, not a test): how fast a correction is recomputed, and how much a
coach who corrects the few decisions the judge lists first gains over one who corrects as many chosen at random.

    python -m debatrix.benchmarks.coach recompute [--debate debateart_0466] [--repeats 40]
    python -m debatrix.benchmarks.coach suite [--items 40] [--ks 0,1,3,5,10] [--draws 20]
    python -m debatrix.benchmarks.coach ibm [--speeches 60] [--ks 0,1,3,5,10] [--draws 20]

``recompute``: the debate judged once on the fake server's reading model (no model needed), then the time of one
recompute with a correction (what the page waits for after a click) and of the whole review-first list, median and
90th percentile of ``--repeats``.

``suite``: the known-answer suite's ``argument`` change (``debatrix bench contrast``: one side's warrant replaced with
another debate's sentences) on every DebateArt debate of the sample's length that it makes a contrast of, the
changed side taking turns first and second, judged in the flow on the model of the options (the embedded 1.5B by
default; answers cached). The gold of a decision is the suite's: a passage of
the changed side made mostly of another debate's sentences is no argument, every other passage is. A simulated
coach sets k decisions of each debate to the gold: the first k the judge lists for review
(:func:`debatrix.core.review.review_first`, the kinds with gold), against k drawn at random (``--draws`` draws,
averaged); the figure is the share of debates whose argument verdict leans to the intact side (a tie half), with a
95% interval resampling debates.

``ibm``: IBM's claims-in-speech gold (``../shared/data/ibm_rdd_v4_gprkb55``), as ``debatrix profile`` asks it: a
claim as the other side's point, each labelled passage of the speech asked whether it makes it (the flow's own
question). A speech's decisions make a flow of one row; the coach sets k of them to the gold, the judge's first k
against random ones; the figures are the share of all decisions that read right, two ways: by the decision's P (read
through the model's profile, at least even odds for yes), and as the sheet counts it (answered: a count of at least
0.5 toward felling the row), a coach's value as given; each with the same interval.

Figures go to stdout as a table per k; the run's answers are cached (``--cache``), so a second run costs nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from debatrix import JudgeSettings, LLMSettings, MemorySettings, load_debate
from debatrix.app.api import ajudge_debate
from debatrix.core.flow import Correction, Ledger, Line, Mark, SpeechFlow
from debatrix.core.models import Debate, Side
from debatrix.core.results import DimensionResult, JudgeResult, Status
from debatrix.core.review import debate_of, decisions_of, recompute, review_first

from .base import data_root

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
RESAMPLES = 2000


# ------------------------------------------------------------------------------------------------ recompute

def recompute_times(debate: Debate, repeats: int) -> dict[str, Any]:
    """The debate judged once on the reading model, then a recompute with one correction timed ``repeats`` times,
    and the review-first list."""
    from debatrix import judge_debate
    from debatrix.testing import FakeOpenAIServer

    with FakeOpenAIServer(reading=True) as server:
        result = judge_debate(debate, JudgeSettings(llm=LLMSettings(base_url=server.base_url, model="fake",
                                                                    api_key="x"),
                                                    memory=MemorySettings(embedding="hash")))
    if result.status is not Status.COMPLETE:
        raise SystemExit(f"{debate.id}: {result.incomplete_reason}")
    decisions = [d for d, _ in decisions_of(result.flow)]
    one, whole = [], []
    for k in range(repeats):
        fix = Correction(decision=decisions[k % len(decisions)], value=float(k % 2), by="bench")
        started = time.perf_counter()
        recompute(result, [fix])
        one.append(time.perf_counter() - started)
    for _ in range(max(3, repeats // 10)):
        started = time.perf_counter()
        review_first(result, most=None)
        whole.append(time.perf_counter() - started)
    return {"debate": debate.id, "passages": len(debate.passages), "decisions": len(decisions),
            "recompute_ms": _spread(one), "review_first_ms": _spread(whole)}


def _spread(seconds: list[float]) -> str:
    ms = sorted(1000 * s for s in seconds)
    p90 = ms[min(len(ms) - 1, int(0.9 * len(ms)))]
    return f"median {statistics.median(ms):.1f}, 90th percentile {p90:.1f} (n {len(ms)})"


# ----------------------------------------------------------------------------------- the simulated coach


@dataclass
class Case:
    """One debate of the simulation: its judged (flow) result, the gold of the decisions that have one, and how a
    result reads right (a verdict, or its decisions)."""

    result: JudgeResult
    gold: dict[tuple[str, ...], float]
    kinds: tuple[str, ...]


def corrected(case: Case, order: Sequence[tuple[str, ...]], k: int) -> JudgeResult:
    """The case's result with the first ``k`` decisions of ``order`` that have gold set to it by the coach."""
    fixes = [Correction(decision=d, value=case.gold[d], by="simulated coach") for d in order if d in case.gold][:k]
    return recompute(case.result, fixes)


def judges_order(case: Case, most: int, rng: random.Random) -> list[tuple[str, ...]]:
    """The decisions a coach working down the judge's list sets, one after another: each time the first the
    judge lists for review in the result as it stands after the earlier corrections (as the page's list is worked
    out again after each one), and once the judge lists nothing more (nothing left moves the verdict), any other,
    at random, as a coach without a list would."""
    order: list[tuple[str, ...]] = []
    rest = [d for d, _ in decisions_of(case.result.flow) if d in case.gold]
    rng.shuffle(rest)
    listed = True
    while len(order) < min(most, len(rest) + len(order)):
        now = corrected(case, order, len(order))
        first = review_first(now, most=1, kinds=case.kinds) if listed else []
        pick = first[0].decision if first and first[0].decision in rest else None
        listed = pick is not None
        pick = pick or rest[0]
        order.append(pick)
        rest.remove(pick)
    return order


def random_order(case: Case, rng: random.Random) -> list[tuple[str, ...]]:
    out = [d for d, _ in decisions_of(case.result.flow) if d in case.gold]
    rng.shuffle(out)
    return out


def simulate(cases: list[Case], ks: Sequence[int], draws: int, score: Callable[[Case, JudgeResult], list[float]],
             seed: int = 0) -> list[dict[str, Any]]:
    """For each k: the figure (``score``'s values pooled, per case) with the judge's order and with random orders
    (``draws`` of them, each case's values averaged over the draws), each with a 95% interval resampling cases, and
    the paired difference with its interval."""
    rng = random.Random(seed)
    rows = []
    orders = [judges_order(c, max(ks), rng) for c in cases]
    randoms = [[random_order(c, rng) for _ in range(draws)] for c in cases]
    for k in ks:
        judge = [score(c, corrected(c, o, k)) for c, o in zip(cases, orders)]
        chance = [_mean_lists([score(c, corrected(c, o, k)) for o in rs]) for c, rs in zip(cases, randoms)]
        rows.append({"k": k, "judge": _interval(judge, seed), "random": _interval(chance, seed),
                     "difference": _interval([[a - b for a, b in zip(x, y)] for x, y in zip(judge, chance)], seed)})
    return rows


def _mean_lists(lists: list[list[float]]) -> list[float]:
    return [sum(v) / len(v) for v in zip(*lists)] if lists else []


def _interval(per_case: list[list[float]], seed: int) -> tuple[float, float, float]:
    """The pooled mean of the cases' values, with a 95% bootstrap interval resampling cases."""
    def pooled(cs: list[list[float]]) -> float:
        values = [v for c in cs for v in c]
        return sum(values) / len(values) if values else float("nan")

    rng = random.Random(seed)
    boots = sorted(pooled([per_case[rng.randrange(len(per_case))] for _ in per_case]) for _ in range(RESAMPLES))
    return pooled(per_case), boots[int(0.025 * RESAMPLES)], boots[int(0.975 * RESAMPLES) - 1]


def _settings(args: argparse.Namespace, cache: Path) -> JudgeSettings:
    llm = (dict(base_url=args.base_url, model=args.model) if args.base_url else
           dict(backend="local", local_model=args.local_model))
    return JudgeSettings(llm=LLMSettings(**llm, cache_path=cache), memory=MemorySettings(embedding="minilm"))


# ---------------------------------------------------------------------------------- the known-answer suite

def suite_cases(args: argparse.Namespace) -> list[Case]:
    from .contrast import Contrast, ContrastItem
    from .profiling import own_share

    # the suite's sample length (each debate's first two rounds, at most 8,000 characters: a few minutes a debate
    # on the embedded model), every debate whose warrant change makes a contrast, not only the sample's eight
    bench = Contrast(data_root() / "panelbench", variant="sample")
    items = []
    for k, (d, donor, sides) in enumerate(bench.pairs()):
        if "argument" in sides:  # the changed side first and second by turns, as the suite's items take them
            first = d.debater(d.speeches[0].speaker).side
            turn = first if k % 2 == 0 else Side.CON if first is Side.PRO else Side.PRO
            side = turn if turn in sides["argument"] else sides["argument"][0]
            items.append(ContrastItem(id=f"{d.id}~argument~{side.value}", path=bench._path(d.id), base=d.id,
                                      perturbation="argument", degraded=side, donor=donor.id, seed=k))
    items = items[:args.items]
    settings = _settings(args, args.cache)
    cases = []

    async def judge_all() -> list[JudgeResult]:
        out = []
        for n, it in enumerate(items, 1):
            result = await ajudge_debate(bench.debate(it), settings)
            print(f"  judged {n}/{len(items)} {it.id}: {result.status.value}", file=sys.stderr, flush=True)
            out.append(result)
        return out

    for it, result in zip(items, asyncio.run(judge_all())):
        if result.status is not Status.COMPLETE or result.general is None:
            continue
        base = bench._base(it.base)
        debate = debate_of(result)
        gold = {("argues", p.id): float(p.side is not it.degraded or own_share(p, base) >= 0.5)
                for p in debate.passages}
        result = result.model_copy(update={"settings": {**result.settings, "intact": next(
            d.name for d in debate.debaters if d.side is not it.degraded)}})
        cases.append(Case(result, gold, ("argues",)))
    return cases


def intact_side(case: Case, result: JudgeResult) -> list[float]:
    """1 where the argument verdict leans to the intact side, 0.5 for even, 0 for the changed side."""
    v = next(d.verdict for d in result.dimensions if d.name == "argument")
    probs = v.probabilities or {}
    intact = case.result.settings["intact"]
    if not probs or v.not_judged:
        return [0.5]
    other = max((p for n, p in probs.items() if n != intact), default=0.0)
    return [1.0 if probs[intact] > other else 0.5 if probs[intact] == other else 0.0]


def intact_p(case: Case, result: JudgeResult) -> list[float]:
    """The probability the argument verdict gives the intact side (0.5 where it has none): how far toward the
    right side the verdict moved, where :func:`intact_side` reads only which side it leans to."""
    v = next(d.verdict for d in result.dimensions if d.name == "argument")
    return [float((v.probabilities or {}).get(case.result.settings["intact"], 0.5)) if not v.not_judged else 0.5]


def single_steps(cases: list[Case], score: Callable[[Case, JudgeResult], list[float]]) -> dict[str, float]:
    """Each decision with gold set to it alone, from the judge's result: how the list's value (the expected size of
    the verdict's move) ranks with the move the gold answer makes (its size, and its sign toward the figure), the
    mean move of the list's first and last third, and how the model's certainty ranks with being wrong."""
    from scipy import stats

    rows = []
    for c in cases:
        before = sum(score(c, c.result))
        listed = {i.decision: i.value for i in review_first(c.result, most=None, kinds=c.kinds)}
        profile = c.result.judge_profile
        for d, p in decisions_of(c.result.flow):
            if d not in c.gold or p is None:
                continue
            q = p if profile is None else profile.adjusted(d[0], p, 0)
            moved = sum(score(c, recompute(c.result, [Correction(decision=d, value=c.gold[d], by="x")]))) - before
            rows.append((listed.get(d, 0.0), moved, abs(q - 0.5), float((q >= 0.5) != (c.gold[d] >= 0.5))))
    values = sorted(r[0] for r in rows)
    low, high = values[len(values) // 3], values[2 * len(values) // 3]
    return {"decisions": len(rows), "wrong": sum(r[3] for r in rows) / len(rows),
            "value~|move|": float(stats.spearmanr([r[0] for r in rows], [abs(r[1]) for r in rows]).statistic),
            "value~move": float(stats.spearmanr([r[0] for r in rows], [r[1] for r in rows]).statistic),
            "first_third": statistics.mean(r[1] for r in rows if r[0] >= high),
            "last_third": statistics.mean(r[1] for r in rows if r[0] <= low),
            "certainty~wrong": float(stats.spearmanr([r[2] for r in rows], [r[3] for r in rows]).statistic)}


# -------------------------------------------------------------------------------------------------- IBM

def ibm_cases(args: argparse.Namespace) -> list[Case]:
    from debatrix.context import JudgeContext
    from debatrix.core.profile import for_settings

    from .profiling import Gold, ask

    gold = Gold(data_root(), debates=args.speeches, per_debate=8, mirror=0, place_debates=0)
    probes = gold.answers()
    settings = _settings(args, args.cache)

    async def asked() -> None:
        ctx = await asyncio.to_thread(JudgeContext.create, settings)
        try:
            await ask(ctx, probes, lambda done, total: print(f"  {done}/{total} answered", file=sys.stderr)
                      if done % 50 == 0 or done == total else None)
        finally:
            ctx.close()

    asyncio.run(asked())
    profile = for_settings(settings).profile
    by_speech: dict[str, list[Any]] = {}
    for p in probes:
        if p.answer is not None:
            by_speech.setdefault(p.debate, []).append(p)
    cases = []
    for sid, mine in sorted(by_speech.items()):
        debate = _ibm_debate(sid)
        ids = [p.pair.rsplit("/", 1)[-1] for p in mine]  # the passage each was asked of (its pair: speech/passage)
        lines = tuple(Line(speech=1, target="S1.1", by=pid, answers=p.answer) for pid, p in zip(ids, mine))
        flows = (SpeechFlow(dimension="flow", index=0, speaker="Other side", marks=(Mark(id="S1.1", argument=1.0),),
                            decided={"argues": 1}),
                 SpeechFlow(dimension="flow", index=1, speaker="Speaker", lines=lines, decided={"answers": len(lines)}))
        now = datetime.now(UTC)
        result = JudgeResult(debatrix_version="bench", debate_id=sid, motion=debate.motion, format=debate.format,
                             mode="flow", speeches=debate.speeches, debaters=debate.debaters, status=Status.COMPLETE,
                             flow=flows, judge_profile=profile, started_at=now, finished_at=now,
                             dimensions=(DimensionResult(name="argument", weight=1.0, allow_tie=False,
                                                         ledger=Ledger(dimension="argument", measure="argument")),))
        case_gold = {("answers", pid, "S1.1"): float(p.label) for pid, p in zip(ids, mine)}
        cases.append(Case(recompute(result, ()), case_gold, ("answers",)))
    return cases


_IBM: dict[str, Debate] = {}


def _ibm_debate(sid: str) -> Debate:
    if not _IBM:
        from .decisions import ibm_claim_sentences
        from .profiling import speech_debate

        speeches, pairs = ibm_claim_sentences(data_root())
        for (speech, _), rows in pairs.items():
            _IBM.setdefault(speech, speech_debate(speeches[speech], rows[0]["motion-text"]))
    return _IBM[sid]


def decisions_right(case: Case, result: JudgeResult) -> list[float]:
    """Each decision with gold: 1 where it reads as the gold does (a person's value, or the model's P through its
    profile, at even odds or more for yes)."""
    set_by = {c.decision: c.value for c in result.corrections}
    profile = result.judge_profile
    out = []
    for d, p in decisions_of(result.flow):
        if d not in case.gold or p is None:
            continue
        value = set_by.get(d)
        if value is None:
            value = p if profile is None else profile.adjusted(d[0], p, 1)
        out.append(float((value >= 0.5) == (case.gold[d] >= 0.5)))
    return out


def decisions_counted_right(case: Case, result: JudgeResult) -> list[float]:
    """Each decision with gold: 1 where the sheet reads it as the gold does: "answered" (its count toward felling
    its row at least even, :data:`debatrix.core.flow.EVEN`) for yes, anything less for no; a person's value as
    given. What the verdict rests on, where :func:`decisions_right` reads the P alone."""
    from debatrix.core.flow import EVEN

    counted = {("answers", c.by, t.id): c.counted for t in result.flow_ledger.threads for c in t.cells if c.by}
    return [float((counted.get(d, 0.0) >= EVEN) == (case.gold[d] >= 0.5)) for d, p in decisions_of(result.flow)
            if d in case.gold and p is not None]


# ------------------------------------------------------------------------------------------------------ main

def _table(title: str, rows: list[dict[str, Any]], what: str) -> None:
    print(f"\n{title}\n\n| k | the judge's first k | k at random | difference |\n|---|---|---|---|")
    for r in rows:
        cells = [f"{v:.3f} [{lo:.3f}, {hi:.3f}]" for v, lo, hi in (r["judge"], r["random"], r["difference"])]
        print(f"| {r['k']} | " + " | ".join(cells) + " |")
    print(f"\n({what}; 95% intervals resampling debates)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["recompute", "suite", "ibm"])
    ap.add_argument("--debate", default="debateart_0466", help="recompute: a DebateArt id, or a debate file")
    ap.add_argument("--repeats", type=int, default=40)
    ap.add_argument("--items", type=int, default=40, help="suite: argument items of the known-answer suite")
    ap.add_argument("--speeches", type=int, default=60, help="ibm: IBM speeches")
    ap.add_argument("--ks", default="0,1,3,5,10")
    ap.add_argument("--draws", type=int, default=20, help="random orders drawn per debate")
    ap.add_argument("--local-model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--base-url", default=None, help="an OpenAI-compatible endpoint instead of the embedded model")
    ap.add_argument("--model", default=None)
    ap.add_argument("--cache", type=Path, default=Path("results/coach-answers.sqlite"),
                    help="the answer cache (a rerun pays for nothing)")
    args = ap.parse_args(argv)
    ks = [int(k) for k in args.ks.split(",")]
    if args.what == "recompute":
        path = Path(args.debate)
        if not path.exists():
            path = data_root() / "panelbench" / "DebateArt" / "motion" / f"{args.debate}.yml"
        if not path.exists():
            raise SystemExit(f"{args.debate}: no such debate file or DebateArt id (data at {data_root()})")
        figures = recompute_times(load_debate(path), args.repeats)
        print(f"{figures['debate']}: {figures['passages']} passages, {figures['decisions']} decisions")
        print(f"  a recompute with one correction: {figures['recompute_ms']} ms")
        print(f"  the review-first list (every decision recomputed both ways): {figures['review_first_ms']} ms")
        return
    args.cache.parent.mkdir(parents=True, exist_ok=True)
    if args.what == "suite":
        cases = suite_cases(args)
        _table(f"The known-answer suite, argument items: {len(cases)} debates", simulate(cases, ks, args.draws,
               intact_side), "share of debates whose argument verdict leans to the intact side, a tie half")
        _table(f"The same {len(cases)} debates: the verdict's probability of the intact side",
               simulate(cases, ks, args.draws, intact_p), "mean probability the argument verdict gives the intact side")
        one = single_steps(cases, intact_p)
        print(f"\nEach of the {one['decisions']} decisions with gold set to it alone (the model's answer wrong on "
              f"{one['wrong']:.2f} of them): the list's value and the size of the move of the verdict's probability of "
              f"the intact side rank together at Spearman {one['value~|move|']:.2f}, the value and the move toward "
              f"the intact side at {one['value~move']:.2f}; the list's first third moves it {one['first_third']:+.3f} "
              f"on average, its last third {one['last_third']:+.3f}; the model's certainty (its P's distance from "
              f"even, through its profile) and being wrong rank together at {one['certainty~wrong']:.2f}.")
    else:
        cases = ibm_cases(args)
        n = sum(len(c.gold) for c in cases)
        _table(f"IBM claims in speech: {len(cases)} speeches, {n} decisions, each read by its P", simulate(
            cases, ks, args.draws, decisions_right), "share of decisions whose P, read through the model's profile, "
               "is at even odds or more exactly where the gold says yes (a person's value as given)")
        _table(f"IBM claims in speech: the same {n} decisions, each read as the sheet counts it", simulate(
            cases, ks, args.draws, decisions_counted_right), "share of decisions the sheet reads as answered (a "
               "count of at least 0.5 toward felling the row) exactly where the gold says yes")


if __name__ == "__main__":
    main()
