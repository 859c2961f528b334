"""What the ``debatrix`` commands print: the consoles (results on stdout, everything else on stderr), text from
inputs and models made safe for a terminal, and a judgment's summary (the verdict table, the speech scores, the
flow's standing arguments, the usage, the reasons)."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from debatrix.core.errors import printable
from debatrix.core.flow import STATUS_ORDER, tally_line, weighed_line
from debatrix.core.flow import STATUS_MEANING
from debatrix.core.results import JudgeResult, Status
from debatrix.core.models import TOO_CLOSE
from debatrix.core.probabilities import UNCALIBRATED

console = Console(stderr=True)
# rich wraps at word boundaries to the terminal's width (COLUMNS where it is not a terminal)
out_console = Console()


def plain(text: object) -> str:
    """Text from an input file, a model or a server, made safe for the terminal (:func:`printable`: the ESC of
    ANSI/OSC sequences that would clear the screen, retitle the window or plant links), rich markup escaped."""
    return escape(printable(text))


def table_notes(rows: list[Any], verbose: bool = True) -> list[str]:
    """What the summary's words mean, said under the table where they appear (a coach should not have to guess
    why the two winner columns differ, or what "uncalibrated" is)."""
    verdicts = [d.verdict for d in rows if d.verdict is not None]
    notes = []
    if verbose and any((v.winner or None) != (v.score_winner or None) for v in verdicts):
        notes.append("winner (judge) is the verdict the judge reached on the dimension; winner (scores) compares the "
                     "debaters' scores on it: they can differ (a close verdict, or scores within the tie margin)")
    if any(v.confidence == UNCALIBRATED for v in verdicts):
        notes.append("uncalibrated: no fit of this model's probabilities to how often it is right exists for that "
                     "verdict, so no percentage is shown")
    if any(v.confidence == TOO_CLOSE for v in verdicts):
        notes.append("too close to call: the judge names no winner, only the side its figures lean to (P), because "
                     "that reading was not shown right above a coin for this model, or the two are too near even")
    return notes


def _short_names(names: list[str], room: int = 10) -> dict[str, str]:
    """Column names for the debaters: as they are where they fit (two debaters, or short names), else their
    initials ("Opening Government" -> "OG") where those tell them apart, so a narrow terminal does not cut four
    team names to the same "Openin…"."""
    if len(names) <= 2 or all(len(n) <= room for n in names):
        return {n: n for n in names}
    initials = {n: "".join(w[0] for w in n.split() if w[:1].isalnum()).upper() or n for n in names}
    if len(set(initials.values())) == len(names) and all(len(i) >= 2 for i in initials.values()):
        return initials
    return {n: n for n in names}


def _judged_winner(v: Any, short: dict[str, str] | None = None) -> str:
    """The verdict as every surface says it (:attr:`Verdict.called`: the winner with its confidence, "too close to
    call, leaning Ana (0.53)", "tie", "not judged"), a team's long name in its short form where the table uses it."""
    text = v.called
    name = v.winner or v.lean
    if name and short and short.get(name, name) != name:
        text = text.replace(name, short[name], 1)
    return text


def _nothing_decided(result: JudgeResult) -> bool:
    """Whether an incomplete run got no answer at all (a model server that is down): no analysis, score, decision
    or verdict to show, so a table of dashes would say nothing."""
    dims = [*result.dimensions, *([result.general] if result.general is not None else [])]
    return (result.status is not Status.COMPLETE and not any(f.decided for f in result.flow)
            and not any(d.analyses or d.speech_judgments or d.debater_judgments or (d.verdict and d.verdict.winner)
                        for d in dims))


def print_summary(result: JudgeResult, con: Console, verbose: bool = True, review: Any = None,
                  review_command: str = "") -> None:
    """A judgment's summary. ``verbose``: everything (each dimension's reason, the speech scores, the legends, the
    usage per node); else, for a flow judgment, what a coach reads first, in about 40 lines at 80 columns: the
    verdicts, the flow's rows by status, the decisions a person should review first (``review``:
    :func:`debatrix.core.review.review_first`'s list, shown with ``review_command``), the status and the winner
    with why. A prose mode's summary is always whole: its reasons are its judgment."""
    verbose = verbose or not result.flow
    if not result.dimensions and result.general is None:  # refused before judging: the status line says why
        con.print(f"status: {result.status.value} ({plain(result.incomplete_reason)}) | no LLM call was made",
                  highlight=False)
        return
    if _nothing_decided(result):  # one line: what failed, and what it cost
        u = result.usage
        con.print(f"status: {result.status.value} ({plain(result.incomplete_reason)}) | nothing was answered: "
                  f"{u.llm_calls} LLM calls, {u.retries} retries, {u.wall_seconds:.1f}s", highlight=False)
        return
    names: list[str] = []
    for d in result.dimensions:
        for j in d.debater_judgments:
            if j.debater not in names:
                names.append(j.debater)
    short = _short_names(names)
    table = Table(title=f"{plain(result.debate_id)} — {plain(result.motion)}", title_justify="left")
    table.add_column("dimension")
    table.add_column("weight", justify="right")
    for n in names:
        table.add_column(plain(short[n]), justify="right")
    table.add_column("winner (judge)" if verbose else "verdict")
    if verbose:
        table.add_column("winner (scores)")
    rows = list(result.dimensions)
    if result.general is not None and (not rows or rows[0].name != "general" or len(rows) > 1):
        rows.append(result.general)
    for d in rows:
        scores = {j.debater: f"{j.score:.3g}" for j in d.debater_judgments}
        v = d.verdict
        weight = "0" if v is not None and v.not_judged and d is not result.general else f"{d.weight:g}"
        cells = [plain(d.name), weight, *[scores.get(n, "-") for n in names],
                 plain(_judged_winner(v, short)) if v else "-"]
        if verbose:
            cells.append(plain(short.get(v.score_winner or "", v.score_winner or "tie")) if v and not v.not_judged
                         else "-")
        table.add_row(*cells, style="bold" if d is result.general else None)
    con.print(table)
    if any(short[n] != n for n in names):  # the columns' short names, once, so none is cut to "Openin…"
        con.print("  " + " · ".join(f"{plain(short[n])} = {plain(n)}" for n in names), highlight=False)
    for line in table_notes(rows, verbose):
        con.print(f"  {line}", highlight=False)
    if result.profile and verbose:  # what the model was measured to see (or that nothing was), once
        con.print(f"  judge profile: {plain(result.profile)}", highlight=False)
    scored = [d for d in result.dimensions if d.speech_judgments]  # a dimension not judged has no scores to show
    if scored and verbose:
        st = Table(title="speech scores", title_justify="left")
        st.add_column("#", justify="right")
        st.add_column("speaker")
        for d in scored:
            st.add_column(plain(d.name), justify="right")
        for i, s in enumerate(scored[0].speech_judgments):
            row = [str(s.index + 1), plain(s.speaker)]
            for d in scored:
                row.append(next((f"{x.score}" for x in d.speech_judgments if x.index == s.index), "-"))
            st.add_row(*row)
        con.print(st)
    _print_flow(result, con, verbose)
    if review:
        print_review(review, con, review_command)
    u = result.usage
    if u.by_node and verbose:
        con.print(_usage_table(u))
    con.print(f"status: {result.status.value}" + (f" ({plain(result.incomplete_reason)})" if result.incomplete_reason
                                                  else "") + f" | {_usage_line(u, verbose)}", highlight=False)
    if result.checks and result.checks.flags:  # what the text checks found: read these parts with care
        con.print(f"read with care ({len(result.checks.flags)}):", highlight=False)
        for flag in result.checks.flags:
            con.print(f"  - {plain(flag)}", highlight=False)
    _print_reasons(result, rows, con, verbose)


def _usage_line(u: Any, verbose: bool) -> str:
    """What the run cost, in one line: every count with ``verbose``, else the calls, tokens read and seconds."""
    read = ((f"{u.prompt_tokens_processed} prompt tokens read by the model"
             + (f" ({u.cached_prompt_tokens} more reused from its cache)" if u.cached_prompt_tokens is not None
                else "")) if u.prompt_tokens_processed is not None else f"{u.prompt_tokens} prompt tokens")
    if not verbose:
        extra = ", ".join(f"{n} {what}" for n, what in ((u.retries, "retries"), (u.cached_calls, "from cache"),
                                                        (u.truncated_calls, "cut at their length cap")) if n)
        return f"{u.llm_calls} LLM calls, {read}, " + (f"{extra}, " if extra else "") + f"{u.wall_seconds:.1f}s"
    return (f"{u.llm_calls} LLM calls, {u.prompt_tokens} prompt + {u.completion_tokens} completion tokens, "
            + (f"{read}, " if u.prompt_tokens_processed is not None else "")
            + f"{u.retries} retries, {u.repairs} repairs, {u.cached_calls} from cache, {u.truncated_calls} cut at "
            f"their length cap, {u.wall_seconds:.1f}s")


def print_review(items: Any, con: Console, command: str = "") -> None:
    """The decisions a person should look at first (:func:`debatrix.core.review.review_first`), each with what the
    verdict would become answered either way."""
    con.print("review first: the decisions whose answer would move the verdict most"
              + (f" (correct them with `{command}`)" if command else ""), highlight=False)
    for k, item in enumerate(items, 1):
        con.print(f"  {k}. {plain(item.sentence)}", highlight=False)


def _print_flow(result: JudgeResult, con: Console, verbose: bool = True) -> None:
    """A flow result's arguments left standing per debater (the report's flow sheet has every row), each status
    shown with what it means; with ``verbose``, what the verdict weighs; and the decisions a person set."""
    led = result.flow_ledger
    if led is None or (led.blind and not led.threads):  # nothing decided: the verdicts say why
        return
    con.print("the flow: the arguments at the end (the report shows every row and answer)", highlight=False)
    for t in led.tallies:
        con.print(f"  {plain(tally_line(led, t.debater))}", highlight=False)
    shown = {x.status for x in led.threads}
    for status in (s for s in STATUS_ORDER if s in shown):
        con.print(f"  {status}: {STATUS_MEANING[status]}", highlight=False)
    if result.corrections:
        people = sorted({c.by for c in result.corrections})
        con.print(f"  {len(result.corrections)} decision{'s' if len(result.corrections) != 1 else ''} set by "
                  f"{plain(', '.join(people))}, the rest the model's: every figure recomputed from both, no model "
                  "call (the report marks each)", highlight=False)
    if verbose:
        con.print(f"  {plain(weighed_line(led))}", highlight=False)


def _usage_table(u: Any) -> Table:
    """Calls and tokens per node, narrow enough for 80 columns: where the server reports what it read, the prompt
    is split into what it read and what it reused (their sum); counts that are zero on every node are left out."""
    served = u.prompt_tokens_processed is not None
    cols: dict[str, Any] = {"node": lambda node, n: node, "calls": lambda node, n: n.calls}
    if served:
        cols |= {"read": lambda node, n: n.prompt_tokens_processed or 0,
                 "reused": lambda node, n: n.cached_prompt_tokens or 0}
    else:
        cols["prompt"] = lambda node, n: n.prompt_tokens
    cols["wrote"] = lambda node, n: n.completion_tokens
    optional = {"cached": "cached_calls", "retry": "retries", "repair": "repairs", "cut": "truncated_calls"}
    for col, field in optional.items():
        if any(getattr(n, field) for n in u.by_node.values()):
            cols[col] = lambda node, n, field=field: getattr(n, field)
    cols["s/call"] = lambda node, n: f"{n.seconds / max(n.calls, 1):.2f}"
    table = Table(title="LLM usage per node", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in cols:
        table.add_column(col, justify="left" if col == "node" else "right", no_wrap=True, min_width=len(col))
    for node, n in u.by_node.items():
        table.add_row(*(str(cell(node, n)) for cell in cols.values()))
    return table


def _print_reasons(result: JudgeResult, rows: list[Any], con: Console, verbose: bool = True) -> None:
    """The end of the summary: why each verdict went the way it did (with ``verbose``), then the winner."""
    from debatrix.core.probabilities import reason_of

    verdicts = [d.verdict for d in rows if d.verdict is not None]
    if any(v.orders and len(v.orders) > 1 for v in verdicts):
        bias = result.position_bias
        con.print(f"judged in {len(verdicts[0].orders)} orders of the debaters ("
                  + ("winner probabilities from the model's log probabilities" if verdicts[0].method == "logprobs"
                     else "winner probabilities estimated from sampled answers" if verdicts[0].method == "sampled"
                     else "the server gave no probabilities: each answer counts as certain")
                  + (f"); preference for the first-listed: {bias:+.2f}" if bias is not None else ")"),
                  highlight=False)
    prior = next((v.place_prior for v in verdicts if v.place_prior), None)
    if prior:
        con.print("every order read the debate once, in speaking order; the lean this model and mode were measured "
                  f"to have toward each speaking place ({', '.join(f'{x:.0%}' for x in prior)} of the winner "
                  "probability, first speaker first) is taken out of the probabilities", highlight=False)
    if verbose:
        for v in verdicts:
            for w in v.warnings:
                con.print(f"[yellow]{plain(v.dimension)}: {plain(w)}[/]", highlight=False)
    general = result.general.verdict if result.general is not None else None
    for v in verdicts if verbose else ():
        if v is general or not v.comment:
            continue
        con.print(f"\n[bold]{plain(v.dimension)}[/] — {plain(_judged_winner(v))}: {plain(reason_of(v.comment))}",
                  highlight=False)
    if general is not None:
        why = ("" if not general.comment else f": {plain(reason_of(general.comment))}" if verbose
               else f": {plain(_short_reason(general))}")
        con.print(f"\n[bold]Winner: {plain(_judged_winner(general))}[/]{why}", highlight=False)
        if result.weighing:
            con.print(plain(result.weighing), highlight=False)
    if result.escalation is not None:
        con.print(plain(result.escalation.sentence), highlight=False)


def _short_reason(v: Any) -> str:
    """Why the overall verdict went as it did, in a sentence: why it is too close to call, why it names no winner,
    or its reason's first sentence (``--verbose`` prints it all)."""
    from debatrix.core.probabilities import reason_of

    if v.unproven:
        return v.unproven
    if v.not_judged:
        return v.not_judged
    text = reason_of(v.comment)
    end = text.find(". ")
    return text if end < 0 else text[:end + 1]
