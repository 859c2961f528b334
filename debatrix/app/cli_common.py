"""What the ``debatrix`` commands share: the Typer app, failing in the user's words, loading a debate, running
a coroutine to one exit status, and the run's settings assembled from the options (an endpoint asked what it serves)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from debatrix import __version__
from debatrix.core.errors import DebatrixError, ExitCode, InvalidDebateError, ServiceUnavailable
from debatrix.core.loader import load_debate
from debatrix.core.models import Debate
from debatrix.core.modes import get_mode
from debatrix.core.settings import (
    Environment,
    EscalationSettings,
    JudgeSettings,
    LLMSettings,
    MemorySettings,
    redact_url,
)

from .options import choice_value
from .terminal import console, out_console, plain


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


def fail(message: str, code: int = ExitCode.REFUSED) -> None:
    console.print(f"[bold red]error:[/] {plain(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def load_or_fail(path: Path) -> Debate:
    try:
        return load_debate(path)
    except InvalidDebateError as e:
        fail(str(e).replace("\n", "; "))
        raise  # unreachable


def make_settings(*, mode: str, dimensions: str | None = None, dimension_dir: list[Path] | None = None,
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
                   embedding: str | None = None, log_calls: bool | None = None,
                   call_log_chars: int | None = None, cache: str | Path | None = None
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
                                   log_calls=log_calls, call_log_chars=call_log_chars, cache_path=cache,
                                   requests_per_second=rps, transport=choice_value(transport),
                                   temperature=temperature, decision_samples=decision_samples)
        env = Environment()  # the variables (and .env) LLMSettings.from_env read
        if env.debatrix_model and env.openai_model and env.debatrix_model != env.openai_model:
            console.print(f"[yellow]DEBATRIX_MODEL ({plain(env.debatrix_model)}) and OPENAI_MODEL "
                          f"({plain(env.openai_model)}) differ: using DEBATRIX_MODEL[/]", highlight=False)
        model_given = model is not None or bool(env.debatrix_model or env.openai_model)
        llm = fitted_to_endpoint(llm, model_given=model_given, context_given=context_window is not None)
        escalate = None
        if escalate_to or escalate_base_url:
            if escalate_base_url:  # an endpoint: its key is the environment's, the limits this run's
                try:  # checked as --base-url is (model_copy validates nothing)
                    LLMSettings.http_url(escalate_base_url)
                except ValueError as e:
                    raise ValueError(f"--escalate-base-url: {e}") from None
                strong = llm.model_copy(update={"backend": "openai", "base_url": escalate_base_url,
                                                "base_urls": (), "served_locally": False})
                strong = fitted_to_endpoint(strong.model_copy(update={"model": escalate_to or strong.model}),
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
        fail("bad option: " + "; ".join(
            ": ".join(x for x in (".".join(str(x) for x in err["loc"]), err["msg"].removeprefix("Value error, ")) if x)
            for err in e.errors()))
        raise
    except ValueError as e:
        fail(f"bad option: {e}".replace("\n", " "))
        raise


def fitted_to_endpoint(llm: LLMSettings, *, model_given: bool, context_given: bool) -> LLMSettings:
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


def run_or_fail(work: Any, files_too: bool = False) -> Any:
    """Run ``work`` (a coroutine); a failure is one line on stderr and an exit status: 4 where the model's service
    is unavailable (not the input's fault, so scripts can retry), 2 for the rest; ``files_too``: also a folder
    that cannot be read or written."""
    try:
        return asyncio.run(work)
    except ServiceUnavailable as e:
        fail(str(e), code=ExitCode.SERVICE_DOWN)
        raise
    except DebatrixError as e:
        fail(str(e).replace("\n", "; "))
        raise
    except OSError as e:
        if not files_too:
            raise
        fail(f"{e.filename}: {e.strerror}" if e.filename else str(e))
        raise


def item_progress() -> Callable[[dict[str, Any], int, int], None]:
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
