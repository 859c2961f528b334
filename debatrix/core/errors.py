"""Typed errors. Every failure the judge can meet has a class here; nothing is defaulted silently."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

import re


class DebatrixError(Exception):
    """Base class of every error raised by Debatrix."""


class InvalidDebateError(DebatrixError, ValueError):
    """A debate file or object is malformed. ``problems`` lists ``(location, message)`` pairs.

    Bad input is a ``ValueError`` (also to servers: LangGraph's shows a ValueError's message to the caller and hides
    other exceptions' as internal errors)."""

    def __init__(self, source: str, problems: list[tuple[str, str]]):
        self.source = source
        self.problems = problems
        lines = [f"{source}: {loc}: {msg}" if loc else f"{source}: {msg}" for loc, msg in problems]
        super().__init__("\n".join(lines))


class ServiceUnavailable(DebatrixError):
    """A service the run needs (a chromadb server, ...) does not answer: not bad input, try again later."""


class ConfigurationError(DebatrixError, ValueError):
    """Settings, dimension files or templates are inconsistent (bad input: a ``ValueError``)."""


class DamagedFileError(ConfigurationError):
    """A stored file (a run folder's ``run.json``, ``items.jsonl``, ``offline.json``, ...) that cannot be read as
    what it should hold: said in one line naming the file, never a traceback."""


class MissingExtra(ConfigurationError):
    """A feature was asked for whose optional dependencies are not installed (``pip install 'debatrix[extra]'``)."""

    def __init__(self, feature: str, extra: str):
        self.feature, self.extra = feature, extra
        super().__init__(f"{feature} needs the '{extra}' extra, which is not installed: "
                         f"pip install 'debatrix[{extra}]'")


def require_extra(module: str, feature: str, extra: str) -> None:
    """Raise :class:`MissingExtra` unless ``module`` can be imported (checked without importing it)."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise MissingExtra(feature, extra)


class UnknownDimensionError(ConfigurationError):
    pass


class UnknownModeError(ConfigurationError):
    pass


class TemplateError(ConfigurationError):
    """A prompt template is missing or was rendered with missing or unknown variables."""


class IncompleteJudgment(DebatrixError):
    """Base for errors that end a run with an *incomplete* result rather than a crash. ``calls``: the requests the
    failed step made (:class:`debatrix.core.models.CallRecord`), so the result still counts them."""

    calls: list = []


class ContextWindowExceeded(IncompleteJudgment):
    def __init__(self, needed: int, window: int, what: str, limit: str | None = None, server: str | None = None):
        """``server``: the server's own words where it refused the request as too long (``needed`` unknown)."""
        self.needed, self.window, self.what = needed, window, what
        where = limit or f"the model's context window is {window} tokens"
        if server is not None:
            super().__init__(f"{what}: the server refused the request as too long for its context ({server}); "
                             "the debate is not judged rather than truncated")
            return
        super().__init__(
            f"{what} needs {needed} tokens (with room for the answer) but {where}; "
            "the debate is not judged rather than truncated"
        )


class LLMError(IncompleteJudgment):
    """The model could not be reached or kept failing after retries."""


class ServiceLost(IncompleteJudgment):
    """A service the run needs (the answer cache's database) stopped answering mid-run: the run ends incomplete,
    with every call answered before it (and the answer in flight) in the result. Exit status 4, as for a service
    that is down at the start: not the input's fault, try again."""


def service_lost(reason: str | None) -> bool:
    """Whether an incomplete result's reason is a lost service (the reason names each failure's type)."""
    return bool(reason) and f"{ServiceLost.__name__}: " in reason


class RunStopped(IncompleteJudgment):
    """The run was stopped before this request was answered (the web page's Stop)."""


class LLMTimeoutError(LLMError):
    pass


class LLMRateLimitError(LLMError):
    pass


class StructuredOutputError(IncompleteJudgment):
    """The model's answer did not match the requested schema, even after one repair attempt."""

    def __init__(self, what: str, answer: str, problem: str):
        self.what, self.answer, self.problem = what, answer, problem
        shown = answer if len(answer) <= 300 else answer[:300] + "..."
        super().__init__(f"{what}: model answer does not match the schema ({problem}); answer was {shown!r}")


class UnreadableAnalyses(IncompleteJudgment):
    """No analysis of one debater's speeches could be read (each failed its schema): the dimension cannot judge
    them, and is not judged rather than judged on the other debater alone."""


class VerdictParseError(StructuredOutputError):
    """A winner or score answer could not be read (e.g. a winner that is not a debater)."""


_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: object) -> str:
    """Text from an input file, a model or a server, safe to write to a terminal, a log or a chart: control
    characters (the ESC of ANSI/OSC sequences, BEL) and bidi overrides shown as "\ufffd"."""
    return _UNPRINTABLE.sub("\ufffd", str(text))


ECHO_CHARS = 200  # the most of an input's value an error message repeats


def cut(text: str, most: int = ECHO_CHARS) -> str:
    """``text`` printable and at most ``most`` characters, saying how long it was where it was cut."""
    text = printable(text)
    return text if len(text) <= most else text[:most] + f"… ({len(text):,} characters)"


def echoed(value: object, most: int = ECHO_CHARS) -> str:
    """An input's value as an error message quotes it: its repr, printable, cut to ``most`` characters."""
    return cut(repr(value), most)


class ExitCode(IntEnum):
    """The exit statuses of ``debatrix judge``, ``validate`` and ``bench``, in one list: the CLI exits with these,
    and the table on docs/coaches.md is printed from :data:`EXIT_MEANINGS` (``debatrix exit-codes``; a test fails
    when the page differs)."""

    COMPLETE = 0
    SERVER_STOPPED = 1
    REFUSED = 2
    INCOMPLETE = 3
    SERVICE_DOWN = 4
    INTERRUPTED = 130


EXIT_MEANINGS: dict[ExitCode, str] = {
    ExitCode.COMPLETE: "complete (`validate`: every file valid and within the context)",
    ExitCode.SERVER_STOPPED: "`debatrix serve`: the embedded model server stopped by itself (its log's last lines are "
                             "printed)",
    ExitCode.REFUSED: "bad input or options, refused before any LLM call, in one line on stderr naming the file, the "
                      "field or the option and what is wrong (never an option's value, which may hold a password): an "
                      "empty, unreadable or invalid debate or dimension file, an unknown mode, dimension or choice, a "
                      "zero or negative count or length, a `--base-url` that is not an http(s) address, an `--out` "
                      "that cannot be written, a corrupt `--cache` file, a damaged results folder",
    ExitCode.INCOMPLETE: "the judgment is incomplete: the reason is printed and stored, and an incomplete result "
                         "carries no verdict that was not made. So it ends when the model server cannot be reached "
                         "or keeps failing, and when Ctrl-C stops a run (what was answered is kept); `bench` and "
                         "`judge --out-dir`: any item of the run; `validate`: a debate does not fit the model's "
                         "context",
    ExitCode.SERVICE_DOWN: "a service the run needs besides the model does not answer (a chromadb server for "
                           "`--memory http`, a Ray cluster), or stopped answering mid-run (the `--cache` database: "
                           "the result is written, incomplete, with every answered call): not the input's fault, try "
                           "again, and the cache pays for nothing twice",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C) outside a run: while reading the files, or a second Ctrl-C",
}


def exit_code_table() -> str:
    """The exit statuses as the Markdown table docs/coaches.md shows."""
    return "| status | meaning |\n|---|---|\n" + "".join(f"| {int(code)} | {meaning} |\n"
                                                        for code, meaning in EXIT_MEANINGS.items())


def field_problems(err: Any) -> list[tuple[str, str]]:
    """A pydantic ``ValidationError``'s problems as (field, what is wrong) in the project's words: no pydantic
    type tags, no links to its site, no value echoed whole (a value is quoted to at most 200 characters)."""
    out = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"])
        kind, ctx = e.get("type", ""), e.get("ctx") or {}
        if kind == "too_short":
            msg = ("has none: give at least one" if not ctx.get("actual_length") else
                   f"needs at least {ctx.get('min_length')}, got {ctx.get('actual_length')}")
        elif kind == "missing":
            msg = "field required"
        elif kind == "extra_forbidden":
            msg = "unknown key"
        else:
            msg = e["msg"].removeprefix("Value error, ")
        out.append((loc, msg if len(msg) <= 300 else msg[:300] + " …"))
    return out

