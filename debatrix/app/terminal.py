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
from debatrix.core.probabilities import TOO_CLOSE, UNCALIBRATED

console = Console(stderr=True)
# rich wraps at word boundaries to the terminal's width (COLUMNS where it is not a terminal)
out_console = Console()


def plain(text: object) -> str:
    """Text from an input file, a model or a server, made safe for the terminal (:func:`printable`: the ESC of
    ANSI/OSC sequences that would clear the screen, retitle the window or plant links), rich markup escaped."""
    return escape(printable(text))


def table_notes(rows: list[Any]) -> list[str]:
    """What the summary's words mean, said under the table where they appear (a coach should not have to guess
    why the two winner columns differ, or what "uncalibrated" is)."""
    verdicts = [d.verdict for d in rows if d.verdict is not None]
    notes = []
    if any((v.winner or None) != (v.score_winner or None) for v in verdicts):
        notes.append("winner (judge) is the verdict the judge reached on the dimension; winner (scores) compares the "
                     "debaters' scores on it: they can differ (a close verdict, or scores within the tie margin)")
    if any(v.confidence == UNCALIBRATED for v in verdicts):
        notes.append("uncalibrated: no fit of this model's probabilities to how often it is right exists for that "
                     "verdict, so no percentage is shown")
    if any(v.confidence == TOO_CLOSE for v in verdicts):
        notes.append("too close to call: the winner named is barely more likely than the other side")
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
    """The winner with its confidence as shown (calibrated %, too close to call, uncalibrated, or nothing) and how
    many of its orders named it."""
    if v.not_judged:
        return "not judged"
    name = (short or {}).get(v.winner or "", v.winner or "tie")
    said = "; ".join(x for x in (v.confidence, v.agreement) if x)
    return f"{name} ({said})" if said else name


def _nothing_decided(result: JudgeResult) -> bool:
    """Whether an incomplete run got no answer at all (a model server that is down): no analysis, score, decision
    or verdict to show, so a table of dashes would say nothing."""
    dims = [*result.dimensions, *([result.general] if result.general is not None else [])]
    return (result.status is not Status.COMPLETE and not any(f.decided for f in result.flow)
            and not any(d.analyses or d.speech_judgments or d.debater_judgments or (d.verdict and d.verdict.winner)
                        for d in dims))


def print_summary(result: JudgeResult, con: Console) -> None:
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
    table.add_column("winner (judge)")
    table.add_column("winner (scores)")
    rows = list(result.dimensions)
    if result.general is not None and (not rows or rows[0].name != "general" or len(rows) > 1):
        rows.append(result.general)
    for d in rows:
        scores = {j.debater: f"{j.score:.3g}" for j in d.debater_judgments}
        v = d.verdict
        weight = "0" if v is not None and v.not_judged and d is not result.general else f"{d.weight:g}"
        table.add_row(plain(d.name), weight, *[scores.get(n, "-") for n in names],
                      plain(_judged_winner(v, short)) if v else "-",
                      plain(short.get(v.score_winner or "", v.score_winner or "tie")) if v and not v.not_judged
                      else "-",
                      style="bold" if d is result.general else None)
    con.print(table)
    if any(short[n] != n for n in names):  # the columns' short names, once, so none is cut to "Openin…"
        con.print("  " + " · ".join(f"{plain(short[n])} = {plain(n)}" for n in names), highlight=False)
    for line in table_notes(rows):
        con.print(f"  {line}", highlight=False)
    if result.profile:  # what the model was measured to see (or that nothing was), once
        con.print(f"  judge profile: {plain(result.profile)}", highlight=False)
    scored = [d for d in result.dimensions if d.speech_judgments]  # a dimension not judged has no scores to show
    if scored:
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
    _print_flow(result, con)
    u = result.usage
    if u.by_node:
        con.print(_usage_table(u))
    con.print(f"status: {result.status.value}" + (f" ({plain(result.incomplete_reason)})" if result.incomplete_reason
                                                  else "")
              + f" | {u.llm_calls} LLM calls, {u.prompt_tokens} prompt + {u.completion_tokens} completion tokens, "
              + (f"{u.prompt_tokens_processed} prompt tokens read by the model"
                 + (f" ({u.cached_prompt_tokens} more reused from its cache)" if u.cached_prompt_tokens is not None
                    else "") + ", " if u.prompt_tokens_processed is not None else "")
              + f"{u.retries} retries, {u.repairs} repairs, {u.cached_calls} from cache, {u.truncated_calls} cut at "
              f"their length cap, {u.wall_seconds:.1f}s", highlight=False)
    if result.checks and result.checks.flags:  # what the text checks found: read these parts with care
        con.print(f"read with care ({len(result.checks.flags)}):", highlight=False)
        for flag in result.checks.flags:
            con.print(f"  - {plain(flag)}", highlight=False)
    _print_reasons(result, rows, con)


def _print_flow(result: JudgeResult, con: Console) -> None:
    """A flow result's arguments left standing per debater (the report's flow sheet has every row)."""
    led = result.flow_ledger
    if led is None or (led.blind and not led.threads):  # nothing decided: the verdicts say why
        return
    con.print("the flow: arguments left standing at the end (the report shows every row and answer)",
              highlight=False)
    for t in led.tallies:
        con.print(f"  {plain(tally_line(led, t.debater))}", highlight=False)
    shown = {x.status for x in led.threads}
    for status in (s for s in STATUS_ORDER if s in shown):
        con.print(f"  {status}: {STATUS_MEANING[status]}", highlight=False)
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


def _print_reasons(result: JudgeResult, rows: list[Any], con: Console) -> None:
    """The end of the summary: why each verdict went the way it did, then the winner."""
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
    for v in verdicts:
        for w in v.warnings:
            con.print(f"[yellow]{plain(v.dimension)}: {plain(w)}[/]", highlight=False)
    general = result.general.verdict if result.general is not None else None
    for v in verdicts:
        if v is general or not v.comment:
            continue
        con.print(f"\n[bold]{plain(v.dimension)}[/] — {plain(_judged_winner(v))}: {plain(reason_of(v.comment))}",
                  highlight=False)
    if general is not None:
        why = f": {plain(reason_of(general.comment))}" if general.comment else ""
        con.print(f"\n[bold]Winner: {plain(_judged_winner(general))}[/]{why}", highlight=False)
        if result.weighing:
            con.print(plain(result.weighing), highlight=False)
    if result.escalation is not None:
        con.print(plain(result.escalation.sentence), highlight=False)
