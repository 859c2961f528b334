"""The end of every judge graph: the :class:`JudgeResult` assembled from the state (per dimension and the panel's
general verdict), marked incomplete with the reasons when anything is missing, then checked (:func:`check_result`,
below: what the judge wrote, by lookup).

The checks of what the judge wrote are lookups: nothing rewrites the text shown, and nothing reads sides or
attribution from the words of one language.

- A flow result cites passages by id (``S3.2``): every id it cites must exist in the debate's passage table, a note
  or comment about a debater must give another speaker's passage to that speaker, and every per-debater comment must
  cite one of that debater's own passages. Speaker and side come from the table, never from the prose.
- A prose result (the modes kept to compare against) has no ids, so its checks are measurements by word n-gram
  lookup: an analysis repeating an earlier one of its column (copy share), how much of it is found in the speech it
  analyses and how much only in other speeches (grounding), whether its quotations are in that speech, whether a
  judgment has a paragraph on every debater, and whether the panel's reason repeats anything said in the debate.

They run on every result (:attr:`JudgeResult.checks`, flagged in the CLI summary and the report), and
:mod:`benchmarks.feedback` reports them per mode and dimension. Pure functions of text: no model, no I/O."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from debatrix import __version__
from debatrix.context import JudgeContext
from debatrix.core.probabilities import calibration_for, resolved_layout
from debatrix.core.modes import MODES
from debatrix.core.passages import UNSPACED
from debatrix.core.models import CallRecord, Debate, DebateFormat, Usage
from debatrix.core.results import (AnalysisCheck, CommentCheck, JudgeResult, Status, TextChecks, dimension_result,
                                   flow_checks, general_result, missing_parts, normalized, words)
from debatrix.llm.local import served_by

from .state import JudgeState


def capped_log(calls: Sequence[CallRecord], cap: int) -> tuple[CallRecord, ...]:
    """The call log a result keeps: every call, in the order answered, with its messages until the first whose
    prompt would take their characters past ``cap``; from it on each call keeps its answer and figures, its prompt
    marked left out (so a reader sees one point where the prompts stop, not a gap here and there)."""
    kept, full, out = 0, False, []
    for call in calls:
        size = sum(len(text) for _, text in call.messages)
        full = full or (bool(call.messages) and kept + size > cap)
        if full and call.messages:
            call = call.model_copy(update={"messages": (), "prompt_left_out": True})
        else:
            kept += size
        out.append(call)
    return tuple(out)


def said_once(failures: list[str]) -> str:
    """The failures ("where: what") with each "what" said once after all its places: a dead endpoint fails every
    dimension's column with the same error, which is one thing to read, not three."""
    places: dict[str, list[str]] = {}
    for f in failures:
        where, sep, what = f.partition(": ")
        places.setdefault(what if sep else f, []).extend([where] if sep else [])
    return "; ".join(f"{', '.join(dict.fromkeys(w))}: {what}" if w else what for what, w in places.items())


async def finish(state: JudgeState, ctx: JudgeContext) -> dict[str, Any]:
    mode = ctx.mode
    debate = state["debate"]
    # a mode's map is fitted on its overall verdict against the audience's: in a panel mode that is the panel's
    # verdict, so the dimensions' own verdicts stay uncalibrated (nothing was fitted on them)
    read = ctx.profile.profile  # its maps first: a profile file the user calibrated is used as shipped ones are
    layout = resolved_layout(ctx.settings.order_layout, ctx.settings.llm.model, mode.name,
                             len(debate.debaters), read)
    cmap = calibration_for(ctx.settings.llm.model, mode.name, layout, read)
    dims = [dimension_result(state, d, None if mode.panel else cmap) for d in state.get("dimensions", [])]
    if debate.format is DebateFormat.SINGLE:
        general = None
    elif mode.panel:
        general = general_result(state, dims, cmap)
    else:
        general = dims[0].model_copy(update={"name": "general"}) if dims else None
    failures = list(state.get("failures", []))
    if ctx.gateway.unsaved is not None:  # said where a resume looks for them (the reason may name another failure)
        failures.append(f"answers paid for after the answer cache stopped are kept in {ctx.gateway.unsaved} and "
                        "stored in the cache when it is next opened (a resume pays for none of them again)")
    run_failures = tuple(failures)  # the run's own: what a recompute from the decisions cannot mend
    if not failures:
        for d in dims:
            failures += missing_parts(d, debate, mode.per_speech)
        if mode.panel and general is not None:
            failures += missing_parts(general, debate, False)
    started = datetime.fromisoformat(state["started_at"])
    finished = datetime.now(UTC)
    biases = [d.verdict.position_bias for d in [*dims, *([general] if mode.panel and general else [])]
              if d.verdict is not None and d.verdict.position_bias is not None]
    result = JudgeResult(
        debatrix_version=__version__, debate_id=debate.id, motion=debate.motion, format=debate.format,
        mode=mode.name, speeches=debate.speeches, simultaneous=debate.simultaneous, status=Status.INCOMPLETE if failures else Status.COMPLETE,
        incomplete_reason=said_once(failures) or None, dimensions=tuple(dims), general=general,
        position_bias=round(sum(biases) / len(biases), 4) if biases else None,
        flow=tuple(sorted(state.get("flows", []), key=lambda f: f.index)),
        profile=ctx.profile.note if mode.reads_flow else "",
        judge_profile=ctx.profile.profile if mode.reads_flow else None, debaters=debate.debaters,
        failures=run_failures, corrections=tuple(state.get("corrections") or ()),
        usage=Usage.from_calls(state.get("calls", []), (finished - started).total_seconds()),
        call_log=capped_log(state.get("calls", []), ctx.settings.llm.call_log_chars) if ctx.settings.llm.log_calls
        else (),
        settings={**ctx.settings.public_dict(), "order_layout_used": layout, "model": ctx.gateway.description,
                  "run_id": state["run_id"],
                  **({"served": served_by(ctx.local_server)} if ctx.local_server is not None else {})},
        started_at=started, finished_at=finished,
    )
    # a flow result cites passages by id: its checks are lookups in the passage table (its mode says which)
    checks = check_result(result, debate)
    result = result.model_copy(update={"checks": checks})
    if mode.per_speech and ctx.settings.memory.retrieval:  # only retrieval opens a context memory
        await asyncio.to_thread(ctx.memory.finish, state["run_id"])
    return {"result": result}


# ------------------------------------------------------------------------------ the checks of what it wrote

#: an analysis sharing at least this share of its word 5-grams with an earlier analysis of its column is a copy
COPY_SHARE = 0.5
COPY_N = 5
GROUND_N = 3  # content-word n-grams for grounding
QUOTE_MIN_WORDS = 3  # shorter quoted strings are scare quotes or terms, not quotations

#: the share of a debate's running words its most frequent words make up that are taken as its function words
FUNCTION_SHARE = 0.4

_QUOTED = re.compile(r'"([^"\n]{3,400})"')

Grams = set[tuple[str, ...]]


def function_words(texts: Iterable[str]) -> frozenset[str]:
    """The words of ``texts`` (a debate's speeches) that say nothing of which text they are in, found in the texts
    themselves, in any language (no word list): the most frequent words that together make up
    :data:`FUNCTION_SHARE` of the running words (function words lead every language's frequency list), and any word
    found in every text. Against the English list it replaced it finds most of the running words that list held,
    and takes some words every speech uses with them, which cannot tell speeches apart either (docs/measured.md,
    "Function words")."""
    each = [words(t) for t in texts]
    counts = Counter(w for ws in each for w in ws)
    total, taken, out = sum(counts.values()), 0, set()
    for w, k in counts.most_common():
        if taken >= FUNCTION_SHARE * total or k == 1:  # a word said once is no function word, however short the text
            break
        out.add(w)
        taken += k
    filled = [set(ws) for ws in each if ws]
    if len(filled) > 1:
        out |= set.intersection(*filled)
    return frozenset(out)


def content_words(text: str, function: frozenset[str] = frozenset()) -> list[str]:
    """``text``'s words less the ``function`` words (:func:`function_words`) and single characters of spaced
    scripts."""
    return [w for w in words(text) if w not in function and (len(w) > 1 or UNSPACED.fullmatch(w))]


def ngrams(tokens: Sequence[str], n: int) -> Grams:
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


def shared_share(text: str, other: str, n: int = COPY_N) -> float:
    """The share of ``text``'s word n-grams that also occur in ``other`` (0 where ``text`` has none)."""
    mine = ngrams(words(text), n)
    return len(mine & ngrams(words(other), n)) / len(mine) if mine else 0.0


def grounding(text: str, own: str, others: Iterable[str], n: int = GROUND_N) -> tuple[float, float, int]:
    """(share of ``text``'s content-word n-grams found in ``own``, share found only in ``others`` and not in
    ``own``, how many n-grams ``text`` has). An analysis about its speech has the first well above the second."""
    others = list(others)
    function = function_words([own, *others])
    elsewhere: Grams = set()
    for o in others:
        elsewhere |= ngrams(content_words(o, function), n)
    return _grounding(ngrams(content_words(text, function), n), ngrams(content_words(own, function), n), elsewhere)


def _grounding(mine: Grams, own: Grams, elsewhere: Grams) -> tuple[float, float, int]:
    if not mine:
        return 0.0, 0.0, 0
    in_own = mine & own
    return len(in_own) / len(mine), len((mine - in_own) & elsewhere) / len(mine), len(mine)


def quotes(text: str) -> list[str]:
    """The quotations in ``text``: double-quoted passages of at least :data:`QUOTE_MIN_WORDS` words."""
    return [q.strip() for q in _QUOTED.findall(normalized(text)) if len(words(q)) >= QUOTE_MIN_WORDS]


def quote_found(quote: str, source: str) -> bool:
    """Whether ``quote`` is in ``source`` word for word (case, punctuation and spacing aside; an ellipsis may join
    two passages, each of which must be there)."""
    src = f" {' '.join(words(source))} "
    parts = [p for p in re.split(r"\.\.\.|…|\[\.\.\.\]", quote) if words(p)]
    return bool(parts) and all(f" {' '.join(words(p))} " in src for p in parts)


@lru_cache(maxsize=64)
def _said(debate: Debate, n: int) -> tuple[frozenset, frozenset]:
    """(the speeches' content-word n-grams, the motion's and the debaters' names'): once per debate."""
    function = _function_words(debate)
    said: Grams = set()
    for s in debate.speeches:
        said |= ngrams(content_words(s.content, function), n)
    common = ngrams(content_words(debate.motion, function), n)
    names = {w for d in debate.debaters for w in words(d.name)}
    return frozenset(said), frozenset(common | {g for g in said if set(g) <= names})


def cites_debate(text: str, debate: Debate, n: int = 2) -> bool:
    """Whether ``text`` repeats something said in a speech: a content-word n-gram of a speech that is neither the
    motion's nor made of debater names (a reason built from weights and names alone has none)."""
    said, common = _said(debate, n)
    return bool((ngrams(content_words(text, _function_words(debate)), n) & said) - common)


@lru_cache(maxsize=64)
def _function_words(debate: Debate) -> frozenset[str]:
    return function_words(s.content for s in debate.speeches)


def check_analyses(debate: Debate, dimension: str, analyses: Sequence[tuple[int, str, str]]) -> list[AnalysisCheck]:
    """The measurements of one prose column; ``analyses``: (speech index, speaker, text), in speaking order."""
    speeches = [s.content for s in debate.speeches]
    function = _function_words(debate)
    grams = [ngrams(content_words(t, function), GROUND_N) for t in speeches]  # once, not once per analysis
    out: list[AnalysisCheck] = []
    for k, (i, speaker, text) in enumerate(analyses):
        best, share = None, 0.0
        for j, _, earlier in analyses[:k]:
            s = shared_share(text, earlier)
            if s > share:
                best, share = j, s
        elsewhere = set().union(*(g for m, g in enumerate(grams) if m != i))
        own, foreign, _ = _grounding(ngrams(content_words(text, function), GROUND_N), grams[i], elsewhere)
        qs = quotes(text)
        out.append(AnalysisCheck(
            dimension=dimension, index=i, speaker=speaker, words=len(words(text)),
            copy_of=best if share >= COPY_SHARE else None, copy_share=round(share, 4), grounded=round(own, 4),
            foreign=round(foreign, 4), quotes=len(qs), quotes_found=sum(quote_found(q, speeches[i]) for q in qs)))
    return out


def check_result(result: JudgeResult, debate: Debate) -> TextChecks:
    """Every check on a result's text, as its mode says: id lookups in a flow, the n-gram measurements otherwise
    (analyses, a paragraph per debater, the panel's reason where a panel wrote one). A result of a mode no longer
    registered (an old file) is a flow where a dimension carries a ledger, and has a panel where it has no ledger
    and more than one dimension."""
    shape = MODES.get(result.mode)
    flow = shape.reads_flow if shape else any(d.ledger is not None for d in result.dimensions)
    if flow:
        return flow_checks(result, debate)
    panel_wrote = shape.panel if shape else len(result.dimensions) > 1
    analyses: list[AnalysisCheck] = []
    comments: list[CommentCheck] = []
    flags: list[str] = []
    for d in result.dimensions:
        column = check_analyses(debate, d.name, [(a.index, a.speaker, a.analysis) for a in d.analyses])
        analyses += column
        for a in column:
            where = f"{d.name}, speech {a.index + 1} ({a.speaker})"
            if a.copied:
                flags.append(f"{where}: repeats the analysis of speech {a.copy_of + 1} "
                             f"({a.copy_share:.0%} of its 5-word phrases)")
            if a.foreign > a.grounded:
                flags.append(f"{where}: more of its phrases are from other speeches ({a.foreign:.0%}) than from this "
                             f"one ({a.grounded:.0%})")
            if a.quotes > a.quotes_found:
                flags.append(f"{where}: {a.quotes - a.quotes_found} of {a.quotes} quotations are not in the speech")
        for j in d.debater_judgments:
            comments.append(CommentCheck(dimension=d.name, debater=j.debater, empty=not j.comment.strip()))
            if not j.comment.strip():
                flags.append(f"{d.name}: the judgment has no paragraph on {j.debater}")
    panel = None
    general = result.general
    # the panel's reason, where a panel wrote one (a mode without a panel shows its one column's verdict)
    if panel_wrote and general is not None and general.verdict is not None:
        panel = cites_debate(general.verdict.comment, debate)
        if not panel:
            flags.append("panel: the reason cites nothing said in the debate")
    return TextChecks(analyses=tuple(analyses), comments=tuple(comments), panel_grounded=panel, flags=tuple(flags))
