"""Live progress of one judgment on the terminal, from the judge's progress events.

In a terminal: a rich progress bar of the LLM calls (done/total, elapsed, time left) and a row per dimension and for
the panel (its steps, and what it did last). Where stderr is not a terminal (logs, CI, a pipe): one plain line per
step, which a log keeps readable.
"""

from __future__ import annotations

from collections.abc import Callable
import time
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from debatrix.graphs.state import PANEL


class JudgeProgress:
    """``with JudgeProgress(console, total, steps, calls_done) as p: ... on_event=p.event``.

    ``steps``: per row (dimension name, or "panel"), the progress events a complete run gives it; ``calls_done``:
    how many LLM calls have been answered so far (the gateway's count)."""

    def __init__(self, console: Console, total_calls: int, steps: dict[str, int], calls_done: Callable[[], int],
                 clean: Callable[[object], str] = lambda x: escape(str(x)), quiet: bool = False):
        self.console = console
        self.total = total_calls
        self.steps = steps
        self.calls_done = calls_done
        self.clean = clean
        self.quiet = quiet
        self.progress: Progress | None = None
        self.rows: dict[str, TaskID] = {}
        self.calls: TaskID | None = None
        self._started: float | None = None

    def __enter__(self) -> JudgeProgress:
        self._started = time.monotonic()  # the run starts now, not at its first finished step
        if self.quiet or not self.console.is_terminal:
            return self
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 # "0:00:01 gone · 0:00:02 left": each time says what it is, after it
                                 TimeElapsedColumn(), TextColumn("gone ·"), TimeRemainingColumn(), TextColumn("left"),
                                 TextColumn("{task.fields[last]}"), console=self.console)
        self.calls = self.progress.add_task("[bold]LLM calls[/]", total=self.total, last="")
        width = max((len(name) for name in self.steps), default=5)
        for name, n in self.steps.items():
            self.rows[name] = self.progress.add_task(f"  [cyan]{self.clean(name):<{width}}[/]", total=n, last="")
        self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.progress is not None:
            self.progress.stop()

    def event(self, event: Any) -> None:
        """One finished step (a :class:`debatrix.app.api.ProgressEvent`)."""
        if self.quiet:
            return
        row = PANEL if event.node.startswith("panel") else event.dimension or PANEL
        done = self.calls_done()
        # the total is the plan's; a re-asked call (a retry, a repair, a missing paragraph asked for) is a call
        # more than planned, and the total grows with it rather than show "35/28"
        grown = done > self.total
        self.total = max(self.total, done)
        if self.progress is None:
            self._line(row, done, event.detail)
            return
        assert self.calls is not None
        self.progress.update(self.calls, completed=done, **({"total": self.total} if grown else {}))
        task = self.rows.get(row)
        if task is not None:
            self.progress.update(task, advance=1, last=self.clean(event.detail))

    def _line(self, row: str, done: int, detail: str) -> None:
        elapsed = time.monotonic() - (self._started or time.monotonic())
        eta = f", ~{elapsed / done * max(self.total - done, 0):.0f}s left" if done else ""
        self.console.print(f"[dim]{elapsed:6.1f}s {done:>3}/{self.total} calls{eta}[/] [cyan]{self.clean(row)}[/] "
                           f"{self.clean(detail)}", highlight=False)
