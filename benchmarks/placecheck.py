"""Whether a model's P(argument) leans to whoever speaks first, checked on debates with a known right answer
(``../shared/data/nyu_debate``), as read raw and as its judge profile reads it (the place lean taken out):

    python -m debatrix.benchmarks.placecheck [--limit 40] [--mirror] [--profile PATH] [--cache FILE]

Every passage of each debate is asked the flow's own question (is it an argument about the motion?); per debate the
side with the higher mean P is counted, raw and through the profile, beside how often the gold's right answer is the
first debater's, each share with a Wilson 95% interval. A model without a place lean names the first debater about
as often as the gold does. The debates are those of fold 1 (:func:`.base.fold`): a profile measures its place lean on
long debates in fold 0, so the correction is checked where it was not fitted (``--fold all``: every debate). The
sample is seeded (``--seed``): the same items every time."""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from pathlib import Path
from typing import Any

from debatrix import JudgeSettings, LLMSettings, MemorySettings, load_debate
from debatrix.context import JudgeContext
from debatrix.core.flow import places
from debatrix.core.profile import for_settings, load, wilson

from .base import data_root


def nyu_items(root: Path, limit: int | None, seed: int, only: int | None = 1) -> list[tuple[Path, str]]:
    """(motion file, the right answer's debater) of the NYU debates of fold ``only`` (None: all), a seeded sample
    of ``limit``."""
    from .nyu import NyuDebate, fold

    rows = [(it.path, it.winner) for it in NyuDebate(root).load() if only is None or fold(it.id) == only]
    if limit:
        rows = random.Random(seed).sample(rows, min(limit, len(rows)))
    return sorted(rows)


def _mirrored(debate: Any) -> tuple[Any, dict[str, Any]] | None:
    """The debate with its speaking order swapped (each round's two speeches exchanged) and, by passage id, the same
    passage there (None: no two alternating debaters)."""
    from .profiling import swapped

    other = swapped(debate)
    if other is None:
        return None
    order = [k ^ 1 if (k ^ 1) < len(debate.speeches) else k for k in range(len(debate.speeches))]
    at = {old: new for new, old in enumerate(order)}
    where = {(q.speech, q.number): q for q in other.passages}
    same = {p.id: q for p in debate.passages
            if (q := where.get((at[p.speech], p.number))) is not None and q.text == p.text}
    return other, same


async def measure(settings: JudgeSettings, items: list[tuple[Path, str]], profile: Any,
                  mirror: bool = False) -> dict[str, Any]:
    from debatrix.core.flow import about_passage

    ctx = await asyncio.to_thread(JudgeContext.create, settings)
    first_raw = first_read = gold_first = n = 0
    first_neutral = 0  # with --mirror: each passage's P averaged over both places (the place taken out by design)
    pairs: list[tuple[str, float, float]] = []  # (debate, P where its speaker speaks first, P where second)
    try:
        for k, (path, right) in enumerate(items, 1):
            debate = load_debate(path)
            place = places(debate)
            first = min(place, key=place.get)
            raw: dict[str, list[float]] = {}
            read: dict[str, list[float]] = {}
            for p in debate.passages:
                dist, _ = await ctx.gateway.decision(about_passage(debate, p, "flow_argues.j2"), ("yes", "no"),
                                                     node="placecheck")
                if dist is None:
                    continue
                raw.setdefault(p.speaker, []).append(dist["yes"])
                read.setdefault(p.speaker, []).append(
                    profile.adjusted("argues", dist["yes"], place[p.speaker]) if profile else dist["yes"])
            if mirror and (got := _mirrored(debate)) is not None:
                other, same = got
                neutral: dict[str, list[float]] = {}
                for p in debate.passages:
                    q = same.get(p.id)
                    if q is None:
                        continue
                    here, _ = await ctx.gateway.decision(about_passage(debate, p, "flow_argues.j2"), ("yes", "no"),
                                                         node="placecheck")
                    there, _ = await ctx.gateway.decision(about_passage(other, q, "flow_argues.j2"), ("yes", "no"),
                                                          node="placecheck")
                    if here is None or there is None:
                        continue
                    spoken_first = p.speaker == first
                    pairs.append((debate.id, *((here["yes"], there["yes"]) if spoken_first else
                                               (there["yes"], here["yes"]))))
                    neutral.setdefault(p.speaker, []).append((here["yes"] + there["yes"]) / 2)
                if len(neutral) == 2:
                    avg = {who: sum(v) / len(v) for who, v in neutral.items()}
                    first_neutral += max(avg, key=avg.get) == first
            if len(raw) != 2:
                continue
            n += 1
            mean = {who: sum(v) / len(v) for who, v in raw.items()}
            mean_read = {who: sum(v) / len(v) for who, v in read.items()}
            first_raw += max(mean, key=mean.get) == first
            first_read += max(mean_read, key=mean_read.get) == first
            gold_first += right == first
            # the running counts on every line: a run stopped early still says what it measured
            print(f"  {k}/{len(items)} {debate.id}: first's mean P(argument) raw {mean[first]:.3f} vs "
                  f"{sum(mean.values()) - mean[first]:.3f}, read {mean_read[first]:.3f} vs "
                  f"{sum(mean_read.values()) - mean_read[first]:.3f}; so far first higher raw {first_raw}, read "
                  f"{first_read}, gold first {gold_first} of {n}"
                  + (f", both places averaged {first_neutral}, {len(pairs)} passages swapped" if mirror else ""),
                  flush=True)
    finally:
        ctx.close()
    out = {"debates": n, "first_raw": first_raw, "first_read": first_read, "gold_first": gold_first}
    if mirror and pairs:
        from .profiling import shift_interval

        out.update({"first_neutral": first_neutral, "pairs": len(pairs), "shift": shift_interval(pairs, 0)})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=None, help="a seeded sample of this many debates (default: all "
                    "of the fold)")
    ap.add_argument("--fold", choices=("0", "1", "all"), default="1", help="1 (default): the debates no profile "
                    "measured its place lean on; 0: those it did; all")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--local-model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--profile", default="auto", help="a profile file, or auto (the shipped one)")
    ap.add_argument("--cache", type=Path, default=None, help="an answer cache (SQLite) so a rerun pays nothing")
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--mirror", action="store_true", help="also ask every passage with the debate's speaking order "
                    "swapped: the place lean measured on these debates, and the side higher with the place taken out")
    args = ap.parse_args(argv)
    settings = JudgeSettings(llm=LLMSettings(backend="local", local_model=args.local_model, cache_path=args.cache),
                             memory=MemorySettings(embedding="hash"), profile=args.profile)
    use = for_settings(settings) if args.profile == "auto" else None
    profile = use.profile if use else load(args.profile)
    items = nyu_items(args.data or data_root(), args.limit, args.seed, None if args.fold == "all" else int(args.fold))
    print(f"{len(items)} NYU debates of fold {args.fold}", flush=True)
    got = asyncio.run(measure(settings, items, profile, args.mirror))
    n = got["debates"]
    for what, k in (("gold: the right answer is the first debater's", got["gold_first"]),
                    ("raw P(argument): the first debater's mean the higher", got["first_raw"]),
                    ("through the profile (place lean out)", got["first_read"])):
        share = wilson(k, n)
        print(f"{what}: {k} of {n} ({share.value:.0%}, Wilson 95% {share.low:.0%}-{share.high:.0%})")
    if "shift" in got:
        share = wilson(got["first_neutral"], n)
        print(f"each passage averaged over both places: the first debater's mean the higher: {got['first_neutral']} "
              f"of {n} ({share.value:.0%}, Wilson 95% {share.low:.0%}-{share.high:.0%})")
        print(f"place lean on these debates: log-odds first minus second {got['shift']} over {got['pairs']} "
              "passages (the profile takes out its own measured shift)")
    print(f"profile: {'none' if profile is None else profile.model.name + ' of ' + profile.measured}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
