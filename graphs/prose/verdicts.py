"""From answers to a verdict: the orders a comparing judgment is asked in, what each order's answer says (scores
and winner, with their probabilities where the server gives them) and how the orders are combined.

Why orders: a small judge prefers whoever comes first, in the list of debaters and in the material it reads (the
default local model's lean is in docs/measured.md, "The order layout in the prose modes"). Each order therefore lists the
debaters in its own order and shows the material (the transcript, or the analyses) debater by debater in that order,
every speech keeping its number; listing only the names the other way round left the first speaker favoured (the
docs/measured.md has the figures). Averaging the orders' winner probabilities cancels a preference for a place; each order's
answer and the remaining preference (``position_bias``) stay in the result. Where a place prior was measured for the
model and mode (``order_layout`` auto or shared), every order reads the debate once in speaking order instead, and
the lean that reading leaves toward the first speaker is divided out of the averaged probabilities (:func:`combine`). Orders are the debaters' reversal (1v1)
or rotations (British Parliamentary). A judgment is cut here into its per-debater comments too (beside the verdict
logic that shows them, so the nodes that ask for judgments and this module do not import each other).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from debatrix.core import probabilities as prob
from debatrix.core.probabilities import PlacePrior
from debatrix.core.models import Debate, DebaterJudgment, Judgment, Verdict


SCORES = range(1, 11)
TIE = "tie"


def orders_for(names: Sequence[str], k: int) -> list[tuple[str, ...]]:
    """The first ``k`` listings of the debaters: as given, reversed (1v1) or rotated half-way, then the other
    rotations, so that ``k = len(names)`` puts every debater in every place once."""
    names = list(names)
    n = len(names)
    if n < 2 or k <= 1:
        return [tuple(names)]
    if n == 2:
        return [tuple(names), tuple(reversed(names))]
    shifts = [0, n // 2, *[s for s in range(1, n) if s != n // 2]]
    return [tuple(names[s:] + names[:s]) for s in shifts[:min(k, n)]]


def choices_in(order: Sequence[str], allow_tie: bool) -> list[str]:
    return [*order, TIE] if allow_tie else list(order)


def written_judgment(dimension: str, order: Sequence[str], text: str, logprobs: prob.Logprobs,
                     choices: Sequence[str]) -> Judgment:
    """One order's written judgment before its decision is read: the winner its "Winner:" line names (a tie is
    named too), with the probabilities at that name; ``winner_from`` is None where it names none."""
    found = prob.named_winner(text, choices)
    named = found[0] if found else None
    probs = prob.text_choice(logprobs, choices) if found and logprobs else None
    return Judgment(dimension=dimension, order=tuple(order), comment=text,
                    winner=None if named in (None, TIE) else named, probabilities=_rounded(probs),
                    winner_from=None if named is None else "comment")


def order_answer(order: Sequence[str], choices: Sequence[str], comment: str, *, dimension: str = "",
                 written: Judgment | None = None, decision: Any = None,
                 decision_logprobs: prob.Logprobs | None = None) -> Judgment:
    """One order's answer. The winner is the one the comment names on its "Winner:" line where it has one (the
    ``written`` judgment's, so the verdict agrees with its reasons), else the decision's; a decision that names
    another winner than the comment argues for is flagged."""
    named = (written.winner or TIE) if written is not None and written.winner_from == "comment" else None
    named_probs = written.probabilities if named is not None else None
    lp = decision_logprobs or []
    argmax_scores: dict[str, int] = decision.scores() if decision is not None and hasattr(decision, "scores") else {}
    scores: dict[str, float] = {}
    for name, value in argmax_scores.items():
        expected = prob.expectation(prob.json_score(lp, name, SCORES)) if lp else None
        scores[name] = round(expected if expected is not None else float(value), 4)
    decided = getattr(decision, "winner", None)
    decided_probs = prob.json_choice(lp, "winner", choices) if lp and decided is not None else None
    argued = named or prob.argued_winner(comment, [c for c in choices if c != TIE])
    consistent = decided is None or argued is None or argued == decided
    if named is not None:
        winner, probabilities = named, named_probs
    else:
        winner, probabilities = decided, decided_probs
    warning = ""
    if not consistent:
        kept = (f"the judgment's Winner line ({winner or TIE}) was kept" if winner != decided
                else "the decision's was kept")
        warning = f"the decision named {decided or TIE} but the judgment argues otherwise; {kept}"
    return Judgment(dimension=dimension, order=tuple(order), winner=None if winner in (None, TIE) else winner,
                    probabilities=_rounded(probabilities), scores=scores, argmax_scores=argmax_scores,
                    comment=comment, consistent=consistent, warning=warning,
                    winner_from="comment" if named is not None else "decision" if decided is not None else None)


def _rounded(p: dict[str, float] | None) -> dict[str, float] | None:
    return None if p is None else {k: round(v, 4) for k, v in p.items()}


def _as_probabilities(a: Judgment, choices: Sequence[str]) -> dict[str, float]:
    if a.probabilities is not None:
        return {c: a.probabilities.get(c, 0.0) for c in choices}
    return {c: float(c == (a.winner or TIE)) for c in choices}


def combine(dimension: str, debate: Debate, answers: Sequence[Judgment], allow_tie: bool,
            prior: PlacePrior | None = None) -> Verdict:
    """The orders' answers as one decision: winner probabilities averaged (each answer counting as certainty where
    the server gave none), divided by the ``prior`` of the debaters' speaking places where the orders read the
    debate once in speaking order (probabilities only: an answer without them is a vote, not a lean to divide),
    the most probable choice the winner; an exact draw between debaters goes to the higher mean score, then to the
    first order's answer."""
    names = [d.name for d in debate.debaters]
    choices = choices_in(names, allow_tie)
    method = "logprobs" if all(a.probabilities is not None for a in answers) else "argmax"
    per_order = [_as_probabilities(a, choices) for a in answers]
    mean = {c: sum(p[c] for p in per_order) / len(per_order) for c in choices}
    applied = prior is not None and method == "logprobs" and len(prior.shares) == len(names)
    if applied:
        mean = prior(mean, speaking_places(debate))
    warnings = []
    best = max(mean.values())
    top = [c for c in choices if abs(mean[c] - best) < 1e-9]
    if len(top) == 1:
        winner = top[0]
    else:
        score = {n: sum(a.scores.get(n, 0.0) for a in answers) for n in names}
        ranked = sorted((c for c in top if c != TIE), key=lambda c: -score.get(c, 0.0))
        if len(ranked) >= 2 and score[ranked[0]] != score[ranked[1]]:
            winner, how = ranked[0], "the higher mean score"
        else:
            winner, how = answers[0].winner or TIE, "the first order's answer"
        warnings.append(f"the orders were split evenly between {', '.join(top)}; decided by {how}")
    bias = _position_bias(answers, per_order, allow_tie)
    # the comment shown is the judgment of an order that named this winner: one with a paragraph on every debater
    # first (debateart_0616 on the local model: one order wrote "KingArthur: Winner: Type1" and nothing else), then
    # the most confident
    names = [d.name for d in debate.debaters]
    shown = [a.comment for a in answers]
    agreeing = [(_covers(shown[i], names), p[winner], i) for i, (a, p) in enumerate(zip(answers, per_order))
                if (a.winner or TIE) == winner]
    pick = max(agreeing)[2] if agreeing else 0
    chosen = answers[pick]
    consistent = bool(agreeing) and chosen.consistent
    if not agreeing:
        warnings.append(f"no order's judgment named {winner}: the comment shown argues for "
                        f"{answers[0].winner or TIE}")
    warnings += [f"order {' / '.join(a.order)}: {a.warning}" for a in answers if a.warning]
    # shown: said once, each debater's section about its own debater (the orders keep their answers whole)
    return Verdict(dimension=dimension, comment=shown[pick], winner=None if winner == TIE else winner,
                   probabilities=_rounded(mean) if method == "logprobs" or len(answers) > 1 else None,
                   method=method, orders=tuple(answers), position_bias=bias, consistent=consistent,
                   warnings=tuple(warnings), place_prior=prior.shares if applied and prior else None)


def speaking_places(debate: Debate) -> list[str]:
    """The debaters in the order they first speak (those who never speak last, in the file's order)."""
    spoken = list(dict.fromkeys(s.speaker for s in debate.speeches))
    return spoken + [d.name for d in debate.debaters if d.name not in spoken]


def _covers(judgment: str, names: list[str]) -> int:
    """How many debaters a judgment writes a non-empty paragraph on."""
    return len({who for who, text in judgment_sections(judgment, names) if who and text})


def _position_bias(answers: Sequence[Judgment], per_order: list[dict[str, float]], allow_tie: bool
                   ) -> float | None:
    """Mean share of the decisive probability the orders gave whoever they listed first, minus the fair share."""
    shares = []
    for a, p in zip(answers, per_order):
        decisive = 1.0 - (p.get(TIE, 0.0) if allow_tie else 0.0)
        if decisive > 1e-9:
            shares.append(p[a.order[0]] / decisive)
    if not shares:
        return None
    return round(sum(shares) / len(shares) - 1 / len(answers[0].order), 4)


def debater_judgments(dimension: str, debate: Debate, decision: Verdict) -> list[DebaterJudgment]:
    """Every debater's score averaged over the orders, and its paragraph of the comment shown."""
    names = [d.name for d in debate.debaters]
    out = []
    for name in names:
        values = [a.scores[name] for a in decision.orders if name in a.scores]
        argmax = [a.argmax_scores[name] for a in decision.orders if name in a.argmax_scores]
        if not values:
            continue
        out.append(DebaterJudgment(dimension=dimension, debater=name, score=round(sum(values) / len(values), 3),
                                   argmax_score=round(sum(argmax) / len(argmax), 3) if argmax else None,
                                   comment=debater_paragraph(decision.comment, name, names)))
    return out


def debater_paragraph(judgment: str, name: str, names: list[str]) -> str:
    """The part of a judgment about one debater: the first non-empty section that starts with its name, as the
    judgment prompt asks (see :func:`judgment_sections`); "" where the judgment has none (never another debater's
    paragraph, nor the whole judgment)."""
    return next((text for who, text in judgment_sections(judgment, names) if who == name and text), "")


_LEAD = re.compile(r"^[\s>*_#•\-]+")
_NAMED_WINNER = re.compile(r"\bwinner\s*[:：]", re.I)
_INLINE_WINNER = re.compile(r"(?<=[.!?])\s+[*_]*winner\s*[:：]", re.I)


def winner_apart(judgment: str) -> str:
    """The judgment with a "Winner: ..." run into a paragraph's last sentence put on a line of its own, where it
    closes the judgment (debateart_0466 read once on the local model: "... defends reasonable freedom worldwide.
    Winner: Alec"; the paragraph asked for afterwards went after it, and the comment shown had the verdict in its
    middle). A line quoted from a speech ("│ ...") is left whole: its "Winner:" is a debater's words."""
    lines = judgment.split("\n")
    for k, line in enumerate(lines):
        if not line.lstrip().startswith("│") and _INLINE_WINNER.search(line):
            lines[k] = _INLINE_WINNER.sub(lambda m: "\n" + m.group(0).strip(), line)
    return "\n".join(lines)


def _headed(line: str, ordered: Sequence[str]) -> tuple[str | None, str]:
    """(the debater whose section ``line`` starts, the line's text about them), or (None, line)."""
    lead = _LEAD.sub("", line)
    hit = next((n for n in ordered if lead.lower().startswith(n.lower())
                and not lead[len(n):len(n) + 1].isalnum()), None)
    if hit is None:
        return None, line
    rest = lead[len(hit):].lstrip("*_ ")
    if prob.WINNER_LINE.match(rest):  # "Ana Winner: Ana used sources ..." (the local model's heading)
        content = prob.WINNER_LINE.sub("", rest, count=1).strip(" *_")
        # "Ana Winner: Ana" (the demo's source judgment): a name and nothing about the debater
        return hit, "" if content.strip(" .").lower() in {n.lower() for n in ordered} else content
    if rest[:1] in (":", "：", "-", "–", "—"):
        content = rest[1:].strip(" *_")
        # "KingArthur: Winner: Type1" (debateart_0616 on the local model): a Winner line, nothing on the debater
        return hit, "" if prob.WINNER_LINE.match(content) else content
    return hit, lead.replace("**", "").strip()  # the name starts a sentence about the debater: keep it


def without_sections(judgment: str, names: list[str], drop: Sequence[str]) -> str:
    """A judgment without the sections (heading line to the next heading or Winner line) on the debaters ``drop``:
    where a paragraph written again replaces the one the judgment had."""
    ordered = sorted(names, key=len, reverse=True)
    kept, who = [], None
    for raw in judgment.split("\n"):
        line = raw.strip()
        if prob.WINNER_LINE.match(line):
            who = None
        elif line:
            hit, _ = _headed(line, ordered)
            who = hit if hit is not None else who
        if who not in drop or who is None:
            kept.append(raw)
    return "\n".join(kept)


def judgment_sections(judgment: str, names: list[str]) -> list[tuple[str | None, str]]:
    """A judgment cut into (debater, text) sections: a section starts at a line that begins with a debater's name
    ("Ana: ...", "**Ana**", "Ana's case ...", a name alone on its line) and runs to the next such line or the
    "Winner:" line; text before the first name belongs to no debater (None). A name followed by ":" or a dash is a
    heading (the text after it is the section's); a name that starts a sentence stays in it."""
    ordered = sorted(names, key=len, reverse=True)  # "Alexandra" before "Alex"
    lowered = {n.lower() for n in names}
    out: list[tuple[str | None, str]] = []
    who: str | None = None
    buf: list[str] = []

    def flush() -> None:
        if buf or who is not None:
            # a "Winner: ..." run into the paragraph's last sentence is the verdict's, not the comment's
            text = _INLINE_WINNER.split(" ".join(b for b in buf if b))[0].strip()
            # a name and nothing else ("Ana Winner: Ana", the demo's source judgment on the local model) says
            # nothing about its debater: an empty section, asked for again like a missing one
            if text.strip(" .*_:").lower() in lowered:
                text = ""
            out.append((who, text))

    for raw in judgment.replace("\r\n", "\n").split("\n"):
        line = raw.strip()
        if not line:
            continue
        if prob.WINNER_LINE.match(line):
            flush()
            who, buf = None, []
            continue
        hit, content = _headed(line, ordered)
        if hit is None:
            buf.append(line)
            continue
        flush()
        who, buf = hit, [content]
    flush()
    return out
