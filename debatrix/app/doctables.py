"""The docs' tables that the code itself knows, printed from the code so they cannot drift: the modes and the calls
each makes (from the run planner, :func:`debatrix.core.modes.calls_of`), the exit statuses (from
:data:`debatrix.core.errors.EXIT_MEANINGS`), and how fresh each section of the measured page is (from the
repository's history: whether the code a section measures changed since the commit it was measured at). Each sits on its page between ``<!-- table: NAME -->`` and
``<!-- end table -->``; ``tests/test_docs.py`` fails when a page differs from what this prints.

    python -m debatrix.app.doctables           # say which pages are stale (exit 1 if any)
    python -m debatrix.app.doctables --write   # write the tables into the pages
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

from debatrix.core.dimension import DimensionRegistry
from debatrix.core.errors import exit_code_table
from debatrix.core.loader import load_debate
from debatrix.core.models import Debate
from debatrix.core.modes import MODES, calls_of, resolve_dimensions
from debatrix.core.settings import JudgeSettings, LLMSettings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "four_day_week.yaml"


def mode_calls(debate: Debate) -> list[tuple[str, str, str]]:
    """Per registered mode: its name, what it does, and the calls ``debatrix judge`` makes on ``debate`` at the
    default settings, as the planner counts them (a flow run's are the most it sends: the decisions its judged
    dimensions rest on, asked apart on the embedded model and together, one request a passage, on an endpoint)."""
    local = JudgeSettings(llm=LLMSettings(backend="local"))
    endpoint = JudgeSettings(llm=LLMSettings(backend="openai", base_url="http://127.0.0.1:9/v1", model="m"))
    registry = DimensionRegistry()
    rows = []
    for mode in MODES.values():
        dims = resolve_dimensions(mode.name, None, debate.format, registry)
        measures = [d.measure for d in dims]
        if mode.context == "flow":
            here = calls_of(mode.name, local, debate, len(dims), measures=measures)
            there = calls_of(mode.name, endpoint, debate, len(dims), measures=measures)
            calls = f"at most {here} one-token decisions on the embedded model; at most {there} on an endpoint"
        else:
            both = calls_of(mode.name, local, debate, len(dims))
            one = calls_of(mode.name, local, debate, len(dims), orders=1)
            calls = f"{both} ({one} with `--orders 1`)"
        rows.append((mode.name, mode.description, calls))
    return rows


def modes_table(path: Path = EXAMPLE) -> str:
    """The modes as the Markdown table docs/researchers.md shows, counted on the debate at ``path``."""
    debate = load_debate(path)
    head = (f"| mode | what it does | LLM calls on `{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}` "
            f"({len(debate.speeches)} speeches, {len(debate.passages)} passages) |\n|---|---|---|\n")
    return head + "".join(f"| `{name}`{' (the default)' if name == JudgeSettings().mode else ''} | {what} | {calls} |\n"
                          for name, what, calls in mode_calls(debate))


_SECTION = re.compile(r"^## (?P<title>.+)\n<!-- measures: (?P<commit>[0-9a-f]{7,40}) (?P<paths>[^>]+?) -->", re.M)


def _changed(commit: str, paths: list[str]) -> list[str] | None:
    """The files among ``paths`` that differ between ``commit`` and the working tree (None: no history here)."""
    import subprocess

    try:
        out = subprocess.run(["git", "diff", "--name-only", commit, "--", *paths], cwd=ROOT, capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return sorted(set(out.stdout.split())) if out.returncode == 0 else None


def freshness_table(page: Path = ROOT / "docs" / "measured.md") -> str:
    """docs/measured.md's sections, each with the commit it was measured at and the code it measures (the line
    ``<!-- measures: COMMIT PATH ... -->`` under its title), and whether that code has changed since."""
    rows = []
    for m in _SECTION.finditer(page.read_text(encoding="utf-8")):
        paths = m.group("paths").split()
        changed = _changed(m.group("commit"), paths)
        # changed or not, not how much: the table then moves only when a section goes stale, not on every commit
        since = ("unknown (no repository history here)" if changed is None else "unchanged" if not changed
                 else "changed: the figures are history until the section's command is run again")
        rows.append(f"| {m.group('title')} | `{m.group('commit')}` | {', '.join(f'`{x}`' for x in paths)} | {since} |\n")
    return "| section | measured at | the code it measures | that code since |\n|---|---|---|---|\n" + "".join(rows)


#: every generated table: its name on the page, how it is printed, and the page it is on
TABLES: dict[str, tuple[Callable[[], str], str]] = {
    "modes": (modes_table, "docs/researchers.md"),
    "exit-codes": (exit_code_table, "docs/coaches.md"),
    "freshness": (freshness_table, "docs/measured.md"),
}

_REGION = re.compile(r"(<!-- table: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end table -->)", re.S)


def rendered(text: str) -> str:
    """``text`` with every generated table's region filled with what the code prints now."""
    return _REGION.sub(lambda m: m.group(1) + TABLES[m.group("name")][0]() + m.group(4), text)


def stale() -> list[str]:
    """The pages whose generated tables differ from what the code prints (or that lack a table's markers)."""
    out = []
    for name, (make, page) in TABLES.items():
        text = (ROOT / page).read_text(encoding="utf-8")
        if name == "freshness" and "unknown (no repository history here)" in make():
            continue  # a copy without the history (a tarball, a shallow clone) cannot check it
        if f"<!-- table: {name} -->" not in text or rendered(text) != text:
            out.append(f"{page} ({name})")
    return out


def check_or_write(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the tables into their pages")
    args = parser.parse_args(argv)
    if args.write:
        for page in sorted({p for _, p in TABLES.values()}):
            path = ROOT / page
            text = path.read_text(encoding="utf-8")
            if rendered(text) != text:
                path.write_text(rendered(text), encoding="utf-8")
                print(f"written: {page}")
    late = stale()
    for page in late:
        print(f"stale: {page}")
    return 1 if late else 0


if __name__ == "__main__":
    sys.exit(check_or_write())
