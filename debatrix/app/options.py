"""The options the ``debatrix`` commands share, declared once: each option that sets a settings field takes that
field's description as its help and its choices from the field's type, so the two cannot drift apart; the panels a
command's help groups them in."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, get_args

import typer
from pydantic import BaseModel
from typer.core import TyperCommand

from debatrix.core.modes import MODES
from debatrix.core.settings import JudgeSettings, LLMSettings, MemorySettings


Mode = Enum("Mode", {m: m for m in MODES}, type=str)  # type: ignore[misc]  (the registered modes)


def _choices(name: str, *values: str) -> Any:
    """An option's choices as an enum, so that --help lists them and typos are refused by name."""
    return Enum(name, {v: v for v in values}, type=str)  # type: ignore[misc]


def _field_choices(name: str, fields: dict[str, Any], field: str) -> Any:
    """The choices of a settings field (its Literal), so the CLI offers exactly what the settings accept."""
    return _choices(name, *get_args(fields[field].annotation))


_LLM, _MEMORY = LLMSettings.model_fields, MemorySettings.model_fields  # the CLI's defaults and choices come from here
Backend = _field_choices("Backend", _LLM, "backend")
StructuredOutput = _field_choices("StructuredOutput", _LLM, "structured_output")
Transport = _field_choices("Transport", _LLM, "transport")
MemoryBackend = _field_choices("MemoryBackend", _MEMORY, "backend")
Embedding = _field_choices("Embedding", _MEMORY, "embedding")
OrderLayout = _field_choices("OrderLayout", JudgeSettings.model_fields, "order_layout")
FlowQuestions = _field_choices("FlowQuestions", JudgeSettings.model_fields, "flow_questions")
FlowAsk = _field_choices("FlowAsk", JudgeSettings.model_fields, "flow_ask")


def setting_help(path: str) -> str:
    """The description of the settings field at ``path`` (``"llm.timeout"``): an option that sets a field shows the
    field's own description as its help, so the two are written once and cannot drift apart."""
    model: Any = JudgeSettings
    *parents, name = path.split(".")
    for part in parents:
        annotation = model.model_fields[part].annotation
        model = next(a for a in (annotation, *get_args(annotation)) if isinstance(a, type) and issubclass(a, BaseModel))
    description = model.model_fields[name].description
    if not description:
        raise TypeError(f"settings field {path} has no description: the CLI's help is read from it")
    return description


#: the settings field each option sets (its help is that field's description); options not listed have no field of
#: their own (--escalate-base-url is the second judge's endpoint, made into its ``llm`` with the rest of this run's)
OPTION_FIELDS: dict[str, str] = {
    "dimensions": "dimensions", "dimension_dir": "dimension_dirs", "base_url": "llm.base_url",
    "model": "llm.model", "local_model": "llm.local_model", "backend": "llm.backend",
    "analysis_words": "analysis_words", "comment_words": "comment_words", "context_window": "llm.context_window",
    "max_output_tokens": "llm.max_output_tokens", "timeout": "llm.timeout", "retries": "llm.max_retries",
    "max_connections": "llm.max_concurrency", "rps": "llm.requests_per_second",
    "structured_output": "llm.structured_output", "transport": "llm.transport",
    "merge_score_call": "merge_score_call", "score_in_analysis": "score_in_analysis", "orders": "orders",
    "temperature": "llm.temperature", "order_layout": "order_layout", "flow_questions": "flow_questions",
    "flow_ask": "flow_ask", "profile": "profile",
    "escalate_to": "escalate.llm",
    "escalate_below": "escalate.below", "retrieval": "memory.retrieval", "memory": "memory.backend",
    "memory_path": "memory.path", "chroma_host": "memory.host", "chroma_port": "memory.port",
    "embedding": "memory.embedding", "log_calls": "llm.log_calls",
    "call_log_chars": "llm.call_log_chars", "decision_samples": "llm.decision_samples",
}


#: the examples ``judge --help`` ends with (each line as written)
JUDGE_EXAMPLES = """Examples:

\b
  debatrix judge examples/four_day_week.yaml    # offline: the embedded model
  debatrix judge my.yaml --out r.json --base-url http://127.0.0.1:8000/v1
  debatrix judge debates/*.yaml --out-dir league/   # one result each
"""


#: the panels a command's help groups its options in, in this order (:class:`PanelledCommand`)
INPUT, JUDGING, MODEL, MEMORY, OUTPUT, RUNS = ("Input", "Judging", "Model and endpoint", "Context memory", "Output",
                                               "Many debates")
BENCH_RUN = "The benchmark run"  # `debatrix bench NAME`'s own options: which items, how many at once, where written
PANELS = (BENCH_RUN, INPUT, JUDGING, MODEL, MEMORY, RUNS, OUTPUT)
_PANEL_OF = {**dict.fromkeys(("dimensions", "dimension_dir", "analysis_words", "comment_words", "merge_score_call",
                              "score_in_analysis", "orders", "order_layout", "flow_questions", "flow_ask", "profile"), JUDGING),
             **dict.fromkeys(("retrieval", "memory", "memory_path", "chroma_host", "chroma_port", "embedding"),
                             MEMORY)}


def _described(name: str, kind: Any, *decls: str, also: str = "") -> Any:
    """Option ``name``'s type with its help: its settings field's description, and what only the CLI adds."""
    return Annotated[kind, typer.Option(*decls, help=" ".join(x for x in (setting_help(OPTION_FIELDS[name]), also) if x),
                                        rich_help_panel=_PANEL_OF.get(name, MODEL))]


class PanelledCommand(TyperCommand):
    """A command whose help lists its options in panels (:data:`PANELS`: what is read, how it is judged, which
    model, what is written), each option in the panel its declaration names, the rest last, then the examples
    of its epilog as written (a paragraph starting with a ``\\b`` line is not rewrapped)."""

    def format_options(self, ctx: Any, formatter: Any) -> None:
        groups: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            panel = ("Arguments" if param.param_type_name == "argument"
                     else getattr(param, "rich_help_panel", None) or "Other options")
            groups.setdefault(panel, []).append(record)
        for panel in sorted(groups, key=lambda p: ("Arguments", *PANELS, "Other options").index(p)):
            with formatter.section(panel):
                formatter.write_dl(groups[panel])


# Options that judge, bench and validate share, declared once
Dimensions = _described("dimensions", str | None, also="(Names comma-separated.)")
BaseUrl = _described("base_url", str | None, also="Several servers of one model, comma-separated: requests are "
                                                  "spread over them.")
ModelName = _described("model", str | None)
LocalModel = _described("local_model", str | None)
BackendOption = _described("backend", Backend | None)
AnalysisWords = _described("analysis_words", int | None)
CommentWords = _described("comment_words", int | None)
ContextWindow = _described("context_window", int | None)


def _option(name: str, annotation: Any, default: Any = None) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def _setting(name: str, kind: Any, default: Any = None, *decls: str) -> inspect.Parameter:
    return _option(name, _described(name, kind, *decls), default)


#: the options that make a run's settings, one table for `judge` and `bench` (each command adds its own around
#: them): what :func:`_make_settings` reads, by these names
SETTINGS_OPTIONS: tuple[inspect.Parameter, ...] = (
    _option("dimensions", Dimensions),
    _setting("dimension_dir", list[Path] | None),
    _option("base_url", BaseUrl),
    _option("model", ModelName),
    _option("local_model", LocalModel),
    _option("backend", BackendOption),
    _option("analysis_words", AnalysisWords),
    _option("comment_words", CommentWords),
    _option("context_window", ContextWindow),
    _setting("max_output_tokens", int | None),
    _setting("timeout", float | None),
    _setting("retries", int | None),
    _setting("max_connections", int | None),
    _setting("rps", float | None),
    _setting("structured_output", StructuredOutput | None),
    _setting("transport", Transport | None),
    _setting("merge_score_call", bool | None),
    _setting("score_in_analysis", bool | None, None, "--score-in-analysis/--score-call"),
    _setting("orders", int | None),
    _setting("temperature", float | None),
    _setting("order_layout", OrderLayout | None),
    _setting("flow_questions", FlowQuestions | None),
    _setting("flow_ask", FlowAsk | None),
    _setting("profile", str | None),
    _setting("decision_samples", int | None),
    _setting("escalate_to", str | None),
    _option("escalate_base_url", Annotated[str | None, typer.Option(
        help="OpenAI-compatible base URL of the --escalate-to judge (its key: $OPENAI_API_KEY)",
        rich_help_panel=MODEL)]),
    _setting("escalate_below", float | None),
    _setting("retrieval", bool, False),
    _setting("memory", MemoryBackend, MemoryBackend(_MEMORY["backend"].default)),
    _setting("memory_path", Path | None, _MEMORY["path"].default),
    _setting("chroma_host", str, _MEMORY["host"].default),
    _setting("chroma_port", int, _MEMORY["port"].default),
    _setting("embedding", Embedding, Embedding(_MEMORY["embedding"].default)),
    _setting("log_calls", bool | None, None, "--log-calls/--no-log-calls"),
    _setting("call_log_chars", int | None),
)


def settings_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """A command taking ``**settings`` gains :data:`SETTINGS_OPTIONS` after its own parameters (typer reads the
    signature), and receives them as that dict, for :func:`_make_settings`."""
    own = [p for p in inspect.signature(command, eval_str=True).parameters.values()
           if p.kind is not inspect.Parameter.VAR_KEYWORD]
    clash = {p.name for p in own} & {p.name for p in SETTINGS_OPTIONS}
    if clash:
        raise TypeError(f"{command.__name__} declares shared options itself: {', '.join(sorted(clash))}")
    command.__signature__ = inspect.Signature([*own, *SETTINGS_OPTIONS])  # type: ignore[attr-defined]
    return command


def choice_value(value: Any) -> Any:
    """An option's value as the settings take it (a choice's string, not its enum member)."""
    return value.value if isinstance(value, Enum) else value
