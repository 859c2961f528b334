"""Reading the model's probabilities out of an answer: the expected score over the allowed values and the
probability of each possible winner, from the per-token log probabilities an OpenAI-compatible server returns
(``logprobs: true, top_logprobs: k``; OpenAI, llama.cpp and vLLM do).

A small model's argmax answer is a poor judgment: on the speech-quality set most of its answers are one value, and
a grammar that forces the answer's format can push the greedy path onto a token the model hardly wanted (a "1" it
meant as a score of 1 continued as "10" because the grammar had no room for the newline it preferred). The
distribution at the token where the value starts is read as the model left it, before any grammar: candidates that
cannot start an allowed value are dropped and the rest renormalised.

Every function takes the ``logprobs["content"]`` list (``[{token, logprob, top_logprobs: [{token, logprob}]}]``)
and finds its way in the text those tokens spell, so offsets never depend on how the caller stripped the answer.

Then what a verdict's confidence is shown as (below, "shown"): what a verdict's confidence is shown as. A winner probability read from a model's tokens is how sure the model
sounded, not how often such a verdict is right: the default local model printed "97%" for verdicts that were no
better than chance. So a percentage is shown only where a calibration map fitted against human verdicts exists for
the model and mode (Platt scaling on the logit of the winner probability); near an even call it says "too close to
call"; without a map it says the figure is uncalibrated; without probabilities (answers only, the orders' votes)
it shows none.
"""

from __future__ import annotations

import json
from importlib import resources
import math
import re
from collections.abc import Sequence
from typing import Any
from functools import lru_cache
from debatrix.core.models import TOO_CLOSE, Frozen

Logprobs = list[dict[str, Any]]


def spelled(logprobs: Logprobs) -> tuple[str, list[tuple[int, int, dict[str, Any]]]]:
    """The answer text the tokens spell, and each token's (start, end, entry)."""
    text, spans = "", []
    for entry in logprobs:
        token = str(entry.get("token") or "")
        spans.append((len(text), len(text) + len(token), entry))
        text += token
    return text, spans


def _token_at(spans: list[tuple[int, int, dict[str, Any]]], offset: int) -> int | None:
    for i, (start, end, _) in enumerate(spans):
        if start <= offset < end:
            return i
    return None


def _candidates(entry: dict[str, Any]) -> list[tuple[str, float]]:
    """(token, probability) of the alternatives at one position: the top alternatives the server listed (a token a
    grammar forced that the model itself ranked below them is not among them), else the written token alone."""
    out: dict[str, float] = {}
    for c in entry.get("top_logprobs") or [entry]:
        if c.get("logprob") is not None:
            token = str(c.get("token") or "")
            out[token] = out.get(token, 0.0) + math.exp(float(c["logprob"]))
    return list(out.items())


def _normalised(probs: dict[Any, float]) -> dict[Any, float] | None:
    total = sum(probs.values())
    if total <= 0:
        return None
    return {k: v / total for k, v in probs.items()}


# ------------------------------------------------------------------------------------------------ scores

_DIGITS = re.compile(r"\d+")


def score_distribution(logprobs: Logprobs, offset: int, allowed: Sequence[int]) -> dict[int, float] | None:
    """The allowed integer values' probabilities for the number that starts at ``offset`` of the spelled text.

    Tokenisers that write "10" as "1" then "0" make a "1" ambiguous: where the model wrote it, the next position's
    alternatives say whether the number went on; where it was only an alternative, its mass goes to whichever
    reading (1 or 10) lies nearer the rest of the distribution."""
    text, spans = spelled(logprobs)
    i = _token_at(spans, offset)
    if i is None:
        return None
    start, _, entry = spans[i]
    values = set(allowed)
    probs: dict[int, float] = {}
    undecided: list[tuple[str, float, bool]] = []  # digit strings that could still grow into another value
    for token, p in _candidates(entry):
        body = token.lstrip() if start < offset or not token[:1].isdigit() else token
        m = _DIGITS.match(body)
        if m is None or m.start() != 0:
            continue
        digits = m.group(0)
        value = int(digits)
        longer = [v for v in values if str(v).startswith(digits) and len(str(v)) > len(digits)]
        if m.end() == len(body) and longer:
            undecided.append((digits, p, token == entry.get("token")))
        elif value in values:
            probs[value] = probs.get(value, 0.0) + p
    for digits, p, written in undecided:
        short = int(digits) if int(digits) in values else None
        if written and i + 1 < len(spans):
            grow, stop = _continuation(spans[i + 1][2], digits, values)
            if grow or stop:
                total = sum(grow.values()) + stop
                for v, q in grow.items():
                    probs[v] = probs.get(v, 0.0) + p * q / total
                if short is not None:
                    probs[short] = probs.get(short, 0.0) + p * stop / total
                continue
        options = [v for v in values if str(v).startswith(digits)]
        if not options:
            continue
        centre = (sum(v * q for v, q in probs.items()) / sum(probs.values())) if probs else None
        pick = min(options, key=lambda v: abs(v - centre)) if centre is not None else (short or min(options))
        probs[pick] = probs.get(pick, 0.0) + p
    return _normalised(probs)


def _continuation(entry: dict[str, Any], digits: str, values: set[int]) -> tuple[dict[int, float], float]:
    """After the digits written so far: the probability of each allowed longer number, and of the number ending."""
    grow: dict[int, float] = {}
    stop = 0.0
    for token, q in _candidates(entry):
        m = _DIGITS.match(token)
        if m is None:
            stop += q
        elif int(digits + m.group(0)) in values:
            v = int(digits + m.group(0))
            grow[v] = grow.get(v, 0.0) + q
    return grow, stop


def expectation(dist: dict[int, float] | None) -> float | None:
    return None if not dist else sum(k * p for k, p in dist.items())


# ------------------------------------------------------------------------------------------------ choices


def choice_distribution(logprobs: Logprobs, offset: int, choices: Sequence[str]) -> dict[str, float] | None:
    """Each choice's probability for the name that starts at ``offset`` of the spelled text, read at the token
    where the choices part ways (case-insensitive: "Tie" is the tie). Alternatives that cannot begin any choice
    (another word, a different tokenisation that stops before the names differ) are dropped."""
    text, spans = spelled(logprobs)
    lowered = [c.lower() for c in choices]
    split = _common_prefix(lowered)
    i = _token_at(spans, offset + split)
    if i is None:
        return None
    start, _, entry = spans[i]
    before = text[offset:start] if start > offset else ""  # the name's characters written before this token
    probs: dict[str, float] = {}
    for token, p in _candidates(entry):
        body = token if start >= offset else token.lstrip(" \t\n\"'*_:")
        written = (before + body).lower()
        if len(written) <= split:  # stops before the names differ: says nothing about which
            continue
        if len(written) - split < 2 and token != entry.get("token") and written not in lowered:
            continue  # one letter ("T") may begin any word, not only the name it begins
        fits = [c for c, low in zip(choices, lowered)
                if low.startswith(written) or (written.startswith(low) and not written[len(low):][:1].isalnum())]
        for c in fits:
            probs[c] = probs.get(c, 0.0) + p / len(fits)
    return _normalised(probs)


def _common_prefix(words: Sequence[str]) -> int:
    n = 0
    while all(len(w) > n for w in words) and len({w[n] for w in words}) == 1:
        n += 1
    return n


# the judge's "Winner: NAME" line, however the model dressed it ("**Overall winner** – Ana", "Winner：Ana"); one
# pattern for every reader of a judgment. A line quoting a speech (it starts with the data mark "│") is not the
# judge's own Winner line
WINNER_LINE = re.compile(r"(?im)^(?![^\S\n]*│)[\W_]*(?:overall\s+)?winner[\W_]*?[:：\-–—]\s*[*_\"']*\s*")


def reason_of(comment: str) -> str:
    """A verdict's comment as one paragraph, without its closing "Winner:" line (displays show the winner beside
    it). A heading line ("Ana", a name and nothing else, before her paragraph) keeps a colon, so that joined it
    still reads as one: the demo's panel wrote "Ana" on a line of its own, shown as "Ana Ana clearly articulated"."""
    lines = [ln.strip() for ln in comment.splitlines() if ln.strip() and not WINNER_LINE.match(ln)]
    return " ".join(f"{ln}:" if k + 1 < len(lines) and _HEADING.match(ln) and not ln.rstrip("*_ ").endswith(
        (".", "!", "?")) else ln for k, ln in enumerate(lines))


_HEADING = re.compile(r"^[*_#\s]*[\w.'-]+(?:\s+[\w.'-]+){0,2}[*_\s]*$")  # a name-like line: no sentence, no colon


def named_winner(text: str, choices: Sequence[str]) -> tuple[str, int] | None:
    """The choice a judgment's last "Winner: ..." line names, and the offset where the name starts (a line the
    judgment quotes from a speech does not count)."""
    for m in reversed(list(WINNER_LINE.finditer(text))):
        rest = text[m.end():].lower()
        fits = sorted((c for c in choices if rest.startswith(c.lower())
                       and not rest[len(c):][:1].isalnum()), key=len, reverse=True)
        if fits:
            return fits[0], m.end()
    return None


_CLAIMED = re.compile(r"(?i)\b(won|wins|is the (?:clear |overall )?winner|take[s]? the (?:debate|round))\b")


def argued_winner(text: str, choices: Sequence[str]) -> str | None:
    """The debater a judgment's prose says won ("X won the debate", "X is the winner"), when it names exactly
    one; ``None`` when it names none or several. Read where a judgment has no "Winner:" line."""
    named = set()
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        if not _CLAIMED.search(sentence):
            continue
        low = sentence.lower()
        hits = [c for c in choices if c.lower() != "tie" and re.search(rf"(?<!\w){re.escape(c.lower())}(?!\w)", low)]
        if len(hits) == 1 and re.search(rf"(?<!\w){re.escape(hits[0].lower())}(?!\w)[^.!?]*?"
                                        rf"(won|wins|is the|take)", low):
            named.add(hits[0])
    return named.pop() if len(named) == 1 else None


def option_distribution(logprobs: Logprobs, options: Sequence[str]) -> dict[str, float] | None:
    """Each option's probability as the first token of a short answer ("yes"/"no", a letter, a digit), read from
    that token's alternatives (case and surrounding spaces ignored), renormalised over the options; None where
    no alternative is an option (the server gave no probabilities, or the model wanted to say something else)."""
    if not logprobs:
        return None
    lowered = {o.lower(): o for o in options}
    probs: dict[str, float] = {}
    for token, p in _candidates(logprobs[0]):
        hit = lowered.get(token.strip().lower())
        if hit is not None:
            probs[hit] = probs.get(hit, 0.0) + p
    return _every(options, _normalised(probs))


def _every(options: Sequence[str], probs: dict[str, float] | None) -> dict[str, float] | None:
    """``probs`` over every option: one the server did not list among the alternatives (a sure answer's only
    alternative is itself) has probability 0, not no entry."""
    return None if probs is None else {o: probs.get(o, 0.0) for o in options}


# ------------------------------------------------------------------------------------------------ JSON answers


def json_value_offset(text: str, key: str) -> int | None:
    """Where the value of ``key`` starts in a JSON object answer (inside the quotes for a string value)."""
    for spelling in dict.fromkeys((json.dumps(key, ensure_ascii=False), json.dumps(key))):
        m = re.search(re.escape(spelling) + r"\s*:\s*", text)
        if m:
            return m.end() + (1 if text[m.end():m.end() + 1] == '"' else 0)
    return None


def json_score(logprobs: Logprobs, key: str, allowed: Sequence[int]) -> dict[int, float] | None:
    text, _ = spelled(logprobs)
    offset = json_value_offset(text, key)
    return None if offset is None else score_distribution(logprobs, offset, allowed)


def json_choice(logprobs: Logprobs, key: str, choices: Sequence[str]) -> dict[str, float] | None:
    text, _ = spelled(logprobs)
    offset = json_value_offset(text, key)
    return None if offset is None else choice_distribution(logprobs, offset, choices)


def text_choice(logprobs: Logprobs, choices: Sequence[str]) -> dict[str, float] | None:
    """The winner distribution at the name on a free-text judgment's "Winner:" line."""
    text, _ = spelled(logprobs)
    found = named_winner(text, choices)
    return None if found is None else choice_distribution(logprobs, found[1], choices)


# ------------------------------------------------------------------ shown: the winner probability as a reader sees it

#: a calibrated winner probability below 0.5 + CLOSE is "too close to call" (two-way: within 0.1 of even)
CLOSE = 0.10
UNCALIBRATED = "uncalibrated"


class CalibrationMap(Frozen):
    """p -> sigmoid(a · logit(p) + b), fitted on ``n`` verdicts of ``model`` in ``mode`` against human gold."""

    model: str
    mode: str
    a: float
    b: float
    n: int
    # how the verdicts it was fitted on read the debate (JudgeSettings.order_layout, resolved): the probabilities of
    # one layout are not those of another
    layout: str = "grouped"
    # the most it ever shows: the share right among the more confident half of the verdicts it was fitted on. A fit
    # on a few dozen verdicts follows the model's own certainty at the extremes (a raw 100% maps to about 100%),
    # which no sample that size can vouch for: the default local model, right on 58% of them, would print "100%"
    ceiling: float = 1.0
    source: str = ""  # the command and data it was fitted with
    # per source of gold, the map fitted on the other sources applied to it: ECE and Brier raw and mapped
    cross_source: tuple[dict[str, Any], ...] = ()

    def __call__(self, p: float) -> float:
        """The map made symmetric in the debaters: q(1 - p) = 1 - q(p), so an even call stays even and a named
        winner (more probable than not) is never shown as less likely than not. A Platt fit on winners' probabilities
        alone has an intercept ``b`` that is no property of either side (the default local model's read-once map
        showed a raw 0.52 as 39%); the mean of the map and its mirror drops it. Maps fitted since are symmetric
        (b = 0), which this leaves as they are. Held within [1 - ceiling, ceiling]."""
        p = min(max(p, 1e-6), 1 - 1e-6)
        z = self.a * math.log(p / (1 - p))
        q = (1 / (1 + math.exp(-(z + self.b))) + 1 / (1 + math.exp(-(z - self.b)))) / 2  # 1 - σ(-z + b) = σ(z - b)
        return min(max(q, 1 - self.ceiling), self.ceiling)


class PlacePrior(Frozen):
    """The share of the winner probability ``model`` gives each speaking place (the first speaker, the second, ...)
    in ``mode`` when every order reads the debate once, in speaking order (``order_layout="shared"``), measured on
    ``n`` debates without looking at who won (batch calibration, Zhou et al., ICLR 2024; for two debaters the
    first speaker's median share, :func:`debatrix.benchmarks.calibration.measured_place_shares`). Reading the debate in
    every order grouped by debater cancels a lean toward whoever comes first, at the price of reading it once per
    order; read once, the lean stays in every answer, and dividing the probabilities by this prior takes it out:
    with two debaters, a debate is called for the first speaker only where the model gave them more than the
    prior's share."""

    model: str
    mode: str
    shares: tuple[float, ...]
    n: int
    source: str = ""

    def __call__(self, probabilities: dict[str, float], places: Sequence[str]) -> dict[str, float]:
        """``probabilities`` (debaters and maybe "tie") with each debater's divided by its place's share, the
        debaters' total kept (a tie's probability is not a place's). ``places``: the debaters in speaking order.
        Unchanged where the prior is not for this many debaters."""
        if len(places) != len(self.shares) or not all(n in probabilities for n in places):
            return dict(probabilities)
        total = sum(probabilities[n] for n in places)
        raw = {n: probabilities[n] / max(share, 1e-6) for n, share in zip(places, self.shares)}
        scale = total / sum(raw.values()) if sum(raw.values()) > 0 else 0.0
        return {**probabilities, **{n: v * scale for n, v in raw.items()}}


@lru_cache(maxsize=1)
def _profiles() -> list[dict[str, Any]]:
    """The shipped judge profiles as data (``debatrix/llm/profiles/*.json``, :mod:`debatrix.core.profile`): each
    embedded model's winner maps and place priors are kept in its profile."""
    folder = resources.files("debatrix.llm").joinpath("profiles")
    if not folder.is_dir():
        return []
    return [json.loads(f.read_text(encoding="utf-8")) for f in sorted(folder.iterdir(), key=lambda x: x.name)
            if f.name.endswith(".json")]


@lru_cache(maxsize=1)
def maps() -> dict[tuple[str, str, str], CalibrationMap]:
    """The fitted winner-probability maps shipped with the package (in the judge profiles), by (model, mode,
    layout)."""
    found = (CalibrationMap.model_validate(m) for prof in _profiles() for m in prof.get("verdict_maps", []))
    return {(m.model, m.mode, m.layout): m for m in found}


@lru_cache(maxsize=1)
def place_priors() -> dict[tuple[str, str], PlacePrior]:
    """The measured place priors shipped with the package (in the judge profiles), by (model, mode)."""
    found = (PlacePrior.model_validate(p) for prof in _profiles() for p in prof.get("place_priors", []))
    return {(p.model, p.mode): p for p in found}


def calibration_for(model: str | None, mode: str, layout: str = "grouped", profile: Any = None
                    ) -> CalibrationMap | None:
    """The map of ``mode``'s winner probability for ``model``: the one in the judge profile the run reads
    (``profile``: a :class:`debatrix.core.profile.JudgeProfile`, e.g. a file `bench calibrate --into` wrote), else
    the one shipped for that model name."""
    own = next((m for m in getattr(profile, "verdict_maps", ()) if (m.mode, m.layout) == (mode, layout)), None)
    return own or maps().get((model or "", mode, layout))


def place_prior_for(model: str | None, mode: str, profile: Any = None) -> PlacePrior | None:
    """As :func:`calibration_for`, the place prior of ``mode``."""
    own = next((p for p in getattr(profile, "place_priors", ()) if p.mode == mode), None)
    return own or place_priors().get((model or "", mode))


def resolved_layout(layout: str, model: str | None, mode: str, places: int, profile: Any = None) -> str:
    """The order layout a run of a debate between ``places`` debaters (or teams) uses: ``auto`` is ``shared`` where
    a place prior was measured for the model, the mode and that many places (one reading, the prior taking out
    the lean toward a place), else ``grouped`` (every order reads the material its own way, which cancels the lean
    without a prior)."""
    if layout != "auto":
        return layout
    prior = place_prior_for(model, mode, profile)
    return "shared" if prior is not None and len(prior.shares) == places else "grouped"


def shown(probability: float | None, method: str, cmap: CalibrationMap | None) -> tuple[float | None, str]:
    """(the calibrated winner probability, the text shown beside the winner): "72%", "too close to call",
    "uncalibrated", or "" where the verdict has no probability (answers only: a vote share is no probability)."""
    if probability is None or method != "logprobs":
        return None, ""
    if cmap is None:
        return None, UNCALIBRATED
    q = round(cmap(probability), 4)
    return q, TOO_CLOSE if q < 0.5 + CLOSE else f"{q:.0%}"


# ------------------------------------------------------------- the option an answer gives, read from its text

def answered_option(text: str, options: Sequence[str]) -> str | None:
    """The option an answer gives: its first word, as a whole word and in any case ("Yes.", "YES", "no, because"),
    where that word is an option; else none ("Yesterday", "Not sure", "Maybe", a JSON object): a missing decision,
    never a guess from the first letters."""
    first = re.match(r"\s*(\w+)", text)
    said = first.group(1).lower() if first else ""
    return next((o for o in options if said == o.lower()), None)


def option_shares(hits: Sequence[str | None], options: Sequence[str]) -> dict[str, float] | None:
    """Each option's share among the answers that gave an option (None: none did, a missing decision)."""
    given = [h for h in hits if h is not None]
    return {o: given.count(o) / len(given) for o in options} if given else None


def json_object(text: str) -> dict[str, Any]:
    """An answer's JSON object ({} where it is not one)."""
    try:
        answer = json.loads(text)
    except ValueError:
        return {}
    return answer if isinstance(answer, dict) else {}
