"""The commands that judge a debate and read a result: ``validate``, ``judge`` (one file or many), ``report``,
and what there is to judge with (``modes``, ``dimensions``)."""

from __future__ import annotations

import asyncio
import re
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from debatrix.core.errors import ConfigurationError, DebatrixError, ExitCode, InvalidDebateError, service_lost
from debatrix.core.files import check_writable, write_atomic
from debatrix.core.loader import load_debate
from debatrix.core.models import Debate, DebateFormat
from debatrix.core.results import JudgeResult, Status
from debatrix.core.modes import MODES, get_mode
from debatrix.app.runtime import settle_heap
from debatrix.core.settings import DEFAULT_MODE, JudgeSettings, redact_url

from .options import (
    JUDGING,
    MODEL,
    OUTPUT,
    RUNS,
    AnalysisWords,
    BackendOption,
    BaseUrl,
    CommentWords,
    ContextWindow,
    Dimensions,
    LocalModel,
    Mode,
    settings_options,
)
from .terminal import console, out_console, plain, print_summary
from .cli_common import fail, item_progress, load_or_fail, make_settings, run_or_fail


def validate(
    paths: Annotated[list[Path], typer.Argument(help="debate files (YAML/JSON, or motion/<id>.yml)")],
    mode: Annotated[Mode, typer.Option(help="the mode whose requests must fit")] = Mode(DEFAULT_MODE),  # type: ignore
    dimensions: Dimensions = None,
    base_url: BaseUrl = None,
    backend: BackendOption = None,
    local_model: LocalModel = None,
    context_window: ContextWindow = None,
    analysis_words: AnalysisWords = None,
    comment_words: CommentWords = None,
) -> None:
    """Check debate files and whether they fit the context.

    No model is called. Each file is loaded and checked; then the largest request of --mode is sized against the backend's context.
    Exit 2: an invalid file; 3: a valid debate that cannot be judged in that context."""
    from debatrix.context import local_window, run_settings
    from debatrix.core.dimension import DimensionRegistry
    from debatrix.graphs.build import plan_run

    settings = make_settings(mode=mode.value, dimensions=dimensions, base_url=base_url, backend=backend,
                              local_model=local_model, context_window=context_window,
                              analysis_words=analysis_words, comment_words=comment_words)
    settings = run_settings(settings)  # as a run on the embedded model would see them
    try:
        window, limit = (local_window(settings) if settings.llm.uses_local else
                         (settings.llm.context_window, f"the context window ({settings.llm.context_window} tokens)"))
    except DebatrixError as e:  # e.g. the local model is not installed
        fail(str(e))
        raise
    registry = DimensionRegistry(settings.dimension_dirs)
    bad = too_big = 0
    for path in paths:
        try:
            d = load_debate(path)
        except InvalidDebateError as e:
            bad += 1
            console.print(f"[red]invalid[/] {plain(str(e).replace(chr(10), '; '))}", highlight=False, soft_wrap=True)
            continue
        plan = plan_run(d, settings, registry)
        about = (f"{plain(path)}: {plain(d.id)} ({d.format.value}, {len(d.debaters)} debaters, "
                 f"{len(d.speeches)} speeches)")
        need = plan.largest
        if need is None:  # over the call budget: the run would be refused before its first call
            too_big += 1
            out_console.print(f"[red]too many calls[/] {about}; mode {settings.mode}: {plan.calls} LLM calls, more "
                              f"than max_llm_calls = {settings.max_llm_calls}", highlight=False, soft_wrap=True)
            continue
        fits = need.tokens <= window
        too_big += not fits
        verdict = "[green]ok[/]" if fits else "[red]too long[/]"
        out_console.print(f"{verdict} {about}; mode {settings.mode}: largest request {need.tokens} tokens "
                          f"({need.what}), {'within' if fits else 'more than'} {limit}",
                          highlight=False, soft_wrap=True)
    if bad:
        raise typer.Exit(ExitCode.REFUSED)
    if too_big:
        raise typer.Exit(ExitCode.INCOMPLETE)


def _judge_batch(paths: list[Path], settings: JudgeSettings, out_dir: Path, max_samples: int,
                 ray: str | None, retry_incomplete: bool = False, no_cache: bool = False) -> None:
    """Several debates into one folder, as ``debatrix bench`` writes one: resumable (a debate is known by its file's
    content, :class:`~debatrix.benchmarks.batch.DebateFiles`), answers cached in the folder unless told otherwise,
    ``ray``: as cluster tasks."""
    from debatrix.benchmarks.batch import DebateFiles
    from debatrix.benchmarks.runner import read_records, run_benchmark
    from debatrix.benchmarks.base import verdict

    for p in paths:  # every file read before anything is paid for
        load_or_fail(p)
    if out_dir.exists() and not out_dir.is_dir():
        fail(f"--out-dir {out_dir} is a file: give a folder (created if missing)")
    try:  # before the first call: the run's own files go in it
        check_writable(out_dir / "run.json")
    except OSError as e:
        fail(f"--out-dir {out_dir}: cannot write in it ({e.strerror or e})")
    if settings.llm.cache_path is None and not no_cache:
        # as `bench` does: a run killed and started again pays for no call it had answered
        settings = settings.model_copy(update={"llm": settings.llm.model_copy(
            update={"cache_path": out_dir / "llm_cache.sqlite"})})
    files = DebateFiles(paths)
    report = run_or_fail(run_benchmark(files, settings, out_dir, modes=[settings.mode], concurrency=max_samples,
                                on_record=item_progress(), ray=ray, retry_incomplete=retry_incomplete),
                  files_too=True)
    latest = {r["item"]: r for r in read_records(out_dir / "items.jsonl") if r["mode"] == settings.mode}
    table = Table(title=f"{len(latest)} debates, {settings.mode} mode ({report.judged} judged now, "
                        f"{report.skipped} found done); results under {plain(out_dir)}/")
    for column in ("debate", "status", "winner", f"result (in {plain(out_dir)}/)"):
        table.add_column(column, overflow="fold")  # a path cut short cannot be opened
    shown = set()
    for item in files.load():
        r = latest.get(item.id)
        if r is not None:
            shown.add(item.id)
            general = verdict(r, "general")
            table.add_row(plain(item.path), plain(r["status"]),
                          plain("-" if general is None else general["winner"] or "tie"),
                          # relative to the folder the title names: short enough to stay on one line
                          plain(r["result_file"]) if r.get("result_file") else plain(r.get("reason")))
    out_console.print(table)
    if any(latest[i]["status"] != "complete" for i in shown):
        raise typer.Exit(ExitCode.INCOMPLETE)


@settings_options
def judge(
    paths: Annotated[list[Path], typer.Argument(help="debate file(s) (YAML/JSON, or a preset motion/<id>.yml); "
                                                     "several need --out-dir")],
    mode: Annotated[Mode, typer.Option(help="judge mode (the paper's ablations)", rich_help_panel=JUDGING)] = Mode(DEFAULT_MODE),  # type: ignore
    out: Annotated[Path | None, typer.Option(help="write the result JSON here", rich_help_panel=OUTPUT)] = None,
    cache: Annotated[str | None, typer.Option(help="SQLite file, or postgresql:// URL shared by several machines, "
                                                   "caching LLM answers: rerunning after a crash or with the same "
                                                   "inputs pays for no answered call", rich_help_panel=MODEL)] = None,
    json_output: Annotated[bool, typer.Option("--json", help="print the result JSON to stdout", rich_help_panel=OUTPUT)] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="the whole summary: every reason, score, legend "
                                                                  "and the usage per node",
                                          rich_help_panel=OUTPUT)] = False,
    quiet: Annotated[bool, typer.Option(help="no progress lines", rich_help_panel=OUTPUT)] = False,
    out_dir: Annotated[Path | None, typer.Option(help="judge every file into this folder: one result each, a "
                                                      "table of winners; a rerun judges only what is missing",
                                                      rich_help_panel=RUNS)] = None,
    max_samples: Annotated[int, typer.Option(min=1, help="with --out-dir: debates judged at once",
                                                  rich_help_panel=RUNS)] = 1,
    ray: Annotated[str | None, typer.Option(
        "--ray", metavar="ADDRESS", help="with --out-dir: judge the debates as tasks on a Ray cluster (auto, local "
        "or its address)", rich_help_panel=RUNS)] = None,
    retry_incomplete: Annotated[bool, typer.Option(help="with --out-dir: judge again the debates that ended "
                                                        "incomplete", rich_help_panel=RUNS)] = False,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="with --out-dir: cache no answer (by default they "
                                                              "are cached in the folder)",
                                                              rich_help_panel=RUNS)] = False,
    **settings: Any,
) -> None:
    """Judge debates: winners, scores and reasons per dimension.

    Prints per-dimension winners, debater scores and the general winner with the panel's reason."""
    batch = out_dir is not None or len(paths) > 1 or ray is not None
    if batch and out_dir is None:
        fail("several debates (or --ray) are judged into a folder: give --out-dir DIR")
    if batch and (out is not None or json_output):
        fail("--out and --json are for one debate; with --out-dir every result is written there")
    if not batch and (retry_incomplete or no_cache):
        fail("--retry-incomplete and --no-cache are for a folder of results: give --out-dir DIR")
    debate = None if batch else load_or_fail(paths[0])
    run = make_settings(mode=mode.value, cache=cache, **settings)
    if batch:
        _judge_batch(paths, run, out_dir, max_samples, ray, retry_incomplete, no_cache)
        return
    if out:
        _check_writable(out)  # before anything is paid for
    result = run_or_fail(_judge(debate, run, quiet))
    if out:
        out = _save(out, result)
    if json_output:
        out_console.print_json(result.model_dump_json())
    else:
        print_summary(result, out_console, verbose=verbose, review=_review(result),
                      review_command=f"debatrix review {out or 'RESULT.json'} --corrections FILE")
    if out:
        console.print(f"result written to {plain(out)}", highlight=False)
    if result.status is not Status.COMPLETE:  # 4: a service the run needs was lost (try again), 3: incomplete
        raise typer.Exit(ExitCode.SERVICE_DOWN if service_lost(result.incomplete_reason) else ExitCode.INCOMPLETE)


def _review(result: JudgeResult, most: int = 3) -> list[Any]:
    """The decisions of a flow judgment a person should look at first (none for a prose mode's, or one that
    cannot be recomputed)."""
    from debatrix.core.review import review_first

    if result.general is None or not result.flow or not get_mode(result.mode).reads_flow:
        return []
    try:
        return review_first(result, most=most)
    except ConfigurationError:
        return []


def _check_writable(out: Path) -> None:
    """``--out`` must name a file we can create or replace (its folder is created as the write would): checked
    before the first LLM call."""
    try:
        check_writable(out)
    except OSError as e:
        fail(f"--out {out}: cannot write it ({e.strerror or e})")


def _save(out: Path, result: JudgeResult) -> Path:
    """Write the result; if that fails after all (disk full, permissions changed), save it where we can and say
    where, so the judgment paid for is not lost."""
    text = result.model_dump_json(indent=2)
    try:
        write_atomic(out, text)
        return out
    except OSError as e:
        fallback = Path(tempfile.gettempdir()) / f"debatrix-{re.sub(r'[^A-Za-z0-9_.-]', '_', result.debate_id)[:60]}-{int(time.time())}.json"
        write_atomic(fallback, text)
        console.print(f"[red]could not write {plain(out)} ({plain(e.strerror or e)}); the result was saved to "
                      f"{plain(fallback)}[/]", highlight=False)
        return fallback


async def _judge(debate: Debate, settings: JudgeSettings, quiet: bool) -> JudgeResult:
    from debatrix.app.api import ajudge_debate, refused
    from debatrix.context import JudgeContext, run_settings
    from debatrix.core.errors import ContextWindowExceeded
    from debatrix.core.modes import calls_of, order_count, steps_per_row
    from debatrix.app.progress_bar import JudgeProgress
    from debatrix.graphs.build import plan_run

    def starting(local: JudgeSettings) -> None:  # the debate fits: the local model is about to start
        why = ("--backend local" if local.llm.backend == "local" else
               "no OpenAI-compatible endpoint configured (--base-url / $OPENAI_BASE_URL / $OPENAI_API_KEY)")
        if get_mode(local.mode).reads_flow:  # its answers are a token each: nothing to keep short
            console.print(f"{why}: starting the local model [bold]{local.llm.local_model}[/] on 127.0.0.1 ...",
                          highlight=False)
            return
        console.print(f"{why}: starting the local model [bold]{local.llm.local_model}[/] on 127.0.0.1 ...\n"
                      f"answers kept short for a CPU: analyses ~{local.analysis_words} words, comments "
                      f"~{local.comment_words} words per debater, "
                      + ("judgments commented and decided in one call" if local.merge_score_call else
                         "judgments commented, then decided")
                      + (", speeches scored in their analyses" if local.speech_score_merged(local.mode) else
                         ", speeches analysed, then scored"),
                      highlight=False)

    plan = await asyncio.to_thread(plan_run, debate, run_settings(settings))  # the run's own: its first step takes it
    try:  # sized for this debate; one that cannot fit is refused before the model server starts
        ctx = await asyncio.to_thread(JudgeContext.create, settings, None, [plan], starting)
    except ContextWindowExceeded as e:
        return refused(debate, run_settings(settings), e)
    settle_heap()
    try:
        if ctx.local_server is not None:
            console.print(f"local model ready in {ctx.local_server.load_seconds:.1f}s at {ctx.local_server.base_url} "
                          f"({ctx.settings.llm.context_window} tokens of context: what this debate needs, "
                          f"up to what the model allows)", highlight=False)
        dims, run = plan.dimensions, ctx.settings
        total, single = plan.calls, calls_of(run.mode, run, debate, len(dims), 1, [d.measure for d in dims])
        orders = (f" ({total - single} of them to judge in {order_count(len(debate.debaters), run.orders)} "
                  "orders of the debaters; --orders 1 judges in one)" if total > single else "")
        console.print(f"judging [bold]{plain(debate.id)}[/] ({debate.format.value}, {len(debate.speeches)} speeches) in "
                      f"mode [bold]{settings.mode}[/] on {', '.join(d.name for d in dims)}: "
                      + get_mode(run.mode).promise(total, orders)
                      # a flow asks one-token answers, no structured output: only the model is worth naming
                      + " with " + plain(ctx.gateway.model_name if get_mode(run.mode).reads_flow
                                         else ctx.gateway.description)
                      + (f" at {plain(redact_url(ctx.settings.llm.base_url))}" if ctx.settings.llm.base_url else ""),
                      highlight=False)
        rows = steps_per_row(run.mode, [d.name for d in dims], len(debate.speeches),
                             run.merge_score_call, run.speech_score_merged(run.mode))
        with JudgeProgress(console, total, rows, lambda: ctx.gateway.completed_requests, plain, quiet) as progress, \
                _interruptible(ctx):
            return await ajudge_debate(debate, ctx.settings, context=ctx, on_event=progress.event)
    finally:
        ctx.close()


@contextmanager
def _interruptible(ctx: Any) -> Iterator[None]:
    """Ctrl-C during a judgment stops it as the page's Stop does: no request is sent after it, and the run ends
    incomplete with every answered call in its result (written and summarised as any); a second Ctrl-C quits at
    once."""
    import signal

    loop = asyncio.get_running_loop()

    def interrupted() -> None:
        console.print("[yellow]interrupted: stopping; the calls answered so far are kept in an incomplete result "
                      "(Ctrl-C again quits at once)[/]", highlight=False)
        ctx.gateway.stop("interrupted (Ctrl-C)")
        loop.remove_signal_handler(signal.SIGINT)  # the next one is Python's own: quits

    try:
        loop.add_signal_handler(signal.SIGINT, interrupted)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def list_modes(
    calls: Annotated[bool, typer.Option("--calls", help="with the LLM calls each makes on a debate, as the run "
                                                        "planner counts them")] = False,
    path: Annotated[Path | None, typer.Argument(help="the debate counted with --calls (default: the demo's, "
                                                     "examples/four_day_week.yaml)")] = None,
) -> None:
    """List the judge modes, and with --calls their cost on a debate."""
    if path is not None and not calls:
        fail("a debate file is counted with --calls: give --calls FILE")
    if not calls:
        for mode in MODES.values():
            out_console.print(f"{mode.name}: {mode.description}", highlight=False, markup=False)
        return
    from debatrix.app.doctables import EXAMPLE, mode_calls

    debate = load_or_fail(path or EXAMPLE)
    table = Table(title=f"{plain(debate.id)}: {len(debate.speeches)} speeches, {len(debate.passages)} passages; "
                        "judge's defaults")
    for column in ("mode", "what it does", "LLM calls"):
        table.add_column(column, overflow="fold")
    for name, what, n in mode_calls(debate):
        table.add_row(name, plain(what), plain(n.replace("`", "")))
    out_console.print(table)


def list_dimensions(dimension_dir: Annotated[list[Path] | None, typer.Option()] = None) -> None:
    """List dimensions and dimension sets."""
    from debatrix.core.dimension import DimensionRegistry

    try:
        reg = DimensionRegistry(dimension_dir or ())
    except ConfigurationError as e:
        fail(str(e))
        raise
    for n in reg.names:
        d = reg.get(n)
        out_console.print(f"{n}: weight {d.weight:g}, ties {'allowed (±' + format(d.tie_margin, 'g') + ')' if d.allow_tie else 'not allowed'} — {d.description}", highlight=False)
    for s in reg.set_names:
        members = reg.resolve([s], DebateFormat.ONE_V_ONE)
        out_console.print(f"set {s}: " + ", ".join(f"{d.name}×{d.weight:g}" for d in members), highlight=False)


def report(
    path: Annotated[Path, typer.Argument(help="a result JSON (debatrix judge --out), a benchmark results folder, or "
                                              "a folder of such folders (an index of every run in it)")],
    other: Annotated[Path | None, typer.Argument(
        help="a second benchmark results folder: a page comparing the two runs, paired over their common items")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="the HTML file to write (default: PATH with "
                                                                  ".html, PATH/report.html for a folder, "
                                                                  "OTHER/compare-with-PATH.html for two)")] = None,
    mode: Annotated[str | None, typer.Option(help="with two folders: the mode to compare (default: the first "
                                                  "both runs judged)")] = None,
) -> None:
    """Write an HTML report of a judgment or a benchmark run.

    Given two benchmark folders, a page comparing the runs on their common items. Given a folder of runs, an index
    of every run under it (mode, model, date, headline figure, cost), each linked to its report, from which any two
    can be picked to compare. It opens offline. A benchmark folder's items get their own pages beside their result
    files, linked from it and from each other."""
    from .report import check_comparable, is_results_root, write_comparison, write_index, write_report

    for given in (path, other):
        if given is not None and not given.exists():
            fail(f"{given}: no such file or folder")
    indexed = other is None and is_results_root(path)  # a folder of runs: found once, it is walked again below
    if other is not None:
        try:  # before the default target is made inside OTHER
            check_comparable(path, other)
        except ConfigurationError as e:
            fail(str(e))
        target = out or other / f"compare-with-{path.resolve().name}.html"
    elif indexed:
        target = out or path / "index.html"
    else:
        target = out or (path / "report.html" if path.is_dir() else path.with_suffix(".html"))
    _check_writable(target)
    try:
        pages = (write_comparison(path, other, target, mode) if other is not None
                 else write_index(path, target) if indexed else write_report(path, target))
    except ConfigurationError as e:  # ReportError, or a damaged file of the folder (DamagedFileError)
        fail(str(e))
        raise
    extra = f" (and {len(pages) - 1} more pages)" if len(pages) > 1 else ""
    console.print(f"report written to {plain(target)}{extra}", highlight=False)
