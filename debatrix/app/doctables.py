"""The docs' tables that the code itself knows, printed from the code so they cannot drift: the modes and the calls
each makes (from the run planner, :meth:`debatrix.core.modes.Mode.calls_line`), the exit statuses (from
:data:`debatrix.core.errors.EXIT_MEANINGS`), and how fresh each section of the measured page is (from the
repository's history: whether the code a section measures changed since the commit it was measured at). Each sits on its page between ``<!-- table: NAME -->`` and
``<!-- end table -->``; ``tests/test_docs.py`` fails when a page differs from what this prints.

    python -m debatrix.app.doctables           # say which pages are stale (exit 1 if any)
    python -m debatrix.app.doctables --write   # write the tables into the pages
    python -m debatrix.app.doctables --write --runs RESULTS_ROOT   # and the tables made from stored runs

The measured page's figure tables are made from stored benchmark runs (hours of a model's time to make again, so
not in a test): a region ``<!-- runs-table: KIND FOLDER ... -->`` is written from those run folders under
``--runs`` (``signals``: ``debatrix bench signals`` over them; ``runs``: a row per run and mode with its headline
figure and cost; ``offline``: what judging a debate in each mode cost on the local model, from
``python -m debatrix.benchmarks.offline --out``), each stamped with the commit of the code that ran it
(``runs.jsonl``, ``offline.json``). Without ``--runs`` such a region is left as it is; the freshness table says
whether its code has changed since.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from collections.abc import Callable
from typing import Any
from pathlib import Path

from debatrix.core.dimension import DimensionRegistry
from debatrix.core.errors import DamagedFileError, DebatrixError, exit_code_table
from debatrix.core.files import kind_words, read_json
from debatrix.core.loader import load_debate
from debatrix.core.models import Debate
from debatrix.core.modes import MODES, resolve_dimensions
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
        rows.append((mode.name, mode.description, mode.calls_line(local, endpoint, debate, dims)))
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


def profiles_table() -> str:
    """What each embedded model was measured to see: a row per shipped profile and decision, from the profile files
    themselves (written by ``debatrix profile``, each naming its commit)."""
    from debatrix.core.profile import shipped

    rows = []
    for name, prof in sorted(shipped().items()):
        for r in prof.table():
            rows.append(f"| `{name}` | {r['decision']} | {r['state']} | {r['roc_auc']} | {r['items']} / "
                        f"{r['debates']} | {r['first']} / {r['second']} ({r['flips']} flip) | {r['shift']} | "
                        f"{r['longer']} | {r['map']} | `{r['commit'][:7]}` {r['measured']} |\n")
    return ("| model | decision | state | ROC AUC [95%] | items / debates | P first / second | place shift (logit) | "
            "longer | map, held out | measured |\n|---|---|---|---|---|---|---|---|---|---|\n" + "".join(rows))


def readings_table() -> str:
    """How often each reading of each embedded model was right on gold, from the shipped profiles' readings
    (``debatrix profile --readings RUN``)."""
    from debatrix.core.profile import shipped

    rows = [f"| `{name}` | {r['reading']} | {r['gold']} | {r['state']} | {r['right']} | {r['items']} | "
            f"{r['first_named']} | {r['gold_first']} | {r['lean']} | {_cell(r['place'])} | {_cell(r['run'])} |\n"
            for name, prof in sorted(shipped().items()) for r in prof.reading_table()]
    return ("| model | reading | gold | state | right [95%] | debates | first named [95%] | gold's first | lean | "
            "place lean taken out (fitted on fold 0, checked on fold 1) | run |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|\n"
            + ("".join(rows) or "| (none measured) | | | | | | | | | | |\n"))


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell and the page's table markers."""
    return text.replace("|", "/").replace("<!--", "&lt;!--").replace("\n", " ")


def statuses_table() -> str:
    """docs/coaches.md's table of a flow row's statuses and a cell's words, from the dictionaries every surface
    prints (:data:`debatrix.core.flow.STATUS_MEANING`, :data:`~debatrix.core.flow.CELL_MEANING`)."""
    from debatrix.core.flow import CELL_MEANING, STATUS_MEANING

    return ("| a row | what became of the argument |\n|---|---|\n"
            + "".join(f"| {s} | {_cell(m)} |\n" for s, m in STATUS_MEANING.items())
            + "\n| a cell | what that later speech did to the row |\n|---|---|\n"
            + "".join(f"| {w} | {_cell(m)} |\n" for w, m in CELL_MEANING.items()))


#: the project's own code, as the trace keeps it (not its virtualenv, its tests, or the fake model server)
_WAY_ROOMS = ("debatrix", "graphs", "memory", "benchmarks")
_WAY_SERVER = "debatrix/testing.py"


def traced_way(path: Path = EXAMPLE) -> list[tuple[str, list[str]]]:
    """One speech's way in the default mode, measured: the debate at ``path`` judged twice through the public API
    on the project's fake model server (the first run warms imports and caches up, as a long-lived process would),
    the second profiled. Each project file whose code ran, in the order the judgment first entered it, with the
    functions of it that ran (comprehensions and lambdas aside)."""
    import threading

    from debatrix import JudgeSettings, LLMSettings, MemorySettings, judge_debate
    from debatrix.testing import FakeOpenAIServer

    first: dict[str, set[str]] = {}
    root = str(ROOT)

    def profile(frame: Any, event: str, arg: Any) -> None:
        name = frame.f_code.co_filename
        if event == "call" and name.startswith(root) and name.endswith(".py"):
            first.setdefault(Path(name).relative_to(ROOT).as_posix(), set()).add(frame.f_code.co_name)

    debate = load_debate(path)
    with FakeOpenAIServer() as server:
        # words only for the proposals: the MiniLM embedder runs in a thread of its own started on first use
        settings = JudgeSettings(llm=LLMSettings(base_url=server.base_url, model="fake", api_key="x"),
                                 memory=MemorySettings(embedding="hash"))
        judge_debate(debate, settings)
        sys.setprofile(profile)
        threading.setprofile(profile)
        try:
            judge_debate(debate, settings)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
    return [(f, sorted(n for n in names if not n.startswith("<"))) for f, names in first.items()
            if f.split("/")[0] in _WAY_ROOMS and f != _WAY_SERVER]


def opening_line(path: Path) -> str:
    """What a file says it holds: the first sentence of its docstring."""
    import ast

    doc = " ".join((ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").split())
    end = re.search(r"[.:;](\s|$)", doc)
    return doc[: end.start()] if end else doc


def way_table(path: Path = EXAMPLE) -> str:
    """docs/developers.md's table of one speech's way (:func:`traced_way`): each file in the order first entered,
    what it says it holds, and what of it ran."""
    way = traced_way(path)
    rows = "".join(f"| {k} | `{f}` | {_cell(opening_line(ROOT / f))} | {', '.join(f'`{n}`' for n in names)} |\n"
                   for k, (f, names) in enumerate(way, 1))
    return (f"{len(way)} files, in the order one judgment first enters them:\n\n"
            "| # | file | what it holds (its opening line) | what of it ran |\n|---|---|---|---|\n" + rows)


#: every generated table: its name on the page, how it is printed, and the page it is on
TABLES: dict[str, tuple[Callable[[], str], str]] = {
    "modes": (modes_table, "docs/researchers.md"),
    "profiles": (profiles_table, "docs/measured.md"),
    "readings": (readings_table, "docs/measured.md"),
    "exit-codes": (exit_code_table, "docs/coaches.md"),
    "freshness": (freshness_table, "docs/measured.md"),
    "way": (way_table, "docs/developers.md"),
    "statuses": (statuses_table, "docs/coaches.md"),
}

_REGION = re.compile(r"(<!-- table: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end table -->)", re.S)
_RUNS_REGION = re.compile(r"(<!-- runs-table: (?P<kind>[\w-]+) (?P<folders>[^>]+?) -->\n)(?P<body>.*?)"
                          r"(<!-- end table -->)", re.S)


class RunsTableError(Exception):
    """A runs-table region that cannot be written (its kind unknown, a folder of it missing under --runs)."""


def _written_from(said: list[str], what: str = "") -> str:
    """The line under a table made from stored runs: the command that writes it, and each run it came from."""
    return (f"Written by `python -m debatrix.app.doctables --write --runs RESULTS_ROOT` from {what}"
            + "; ".join(said) + ".\n")


def _code(commits: Any) -> str:
    from debatrix.benchmarks.runner import short_commits

    return f"`{short_commits(commits)}`" if short_commits(commits) else "not recorded"


def _stamp(frames: dict[Path, Any], root: Path) -> str:
    """Which runs a table was made from, each with the code that ran it (the commits its ``runs.jsonl`` records)."""
    said = []
    for f, frame in frames.items():
        commits = ", ".join(dict.fromkeys(c for cell in frame["commit"] for c in cell.split(", ") if c))
        kind = ", ".join(dict.fromkeys(f"{b} {m}" for b, m in zip(frame["benchmark"], frame["mode"])))
        said.append(f"`{md(f.relative_to(root).as_posix())}` ({md(kind)}; code {_code(commits)})")
    return _written_from(said, "the runs ")


def md(value: Any) -> str:
    """A stored name (a model's, a debate's, a folder's) as one Markdown table cell's text: no ``|``, no HTML (a
    name holding ``<!-- end table -->`` would end the region and grow the page on every write), one line."""
    text = " ".join(str(value).split())
    return html.escape(text, quote=False).replace("|", "\\|").replace("`", "'")[:200]


def offline_table(folders: list[Path], root: Path) -> str:
    """The cost of judging a debate in each mode on the local model, from ``python -m debatrix.benchmarks.offline
    --out FOLDER`` (its ``offline.json``): a row per debate and mode, what the model read, reused and wrote."""
    lines = ["| debate | mode | wall time | LLM calls | prompt tokens read / reused | tokens written | wall / bound |",
             "|---|---|---|---|---|---|---|"]
    said = []
    for f in folders:
        path = f / "offline.json"
        kept = read_json(path)
        try:
            rows = kept["rows"]
            if not isinstance(rows, list):
                raise TypeError(f"rows is {kind_words(rows)}")
            for r in rows:
                mode = f"`{md(r['mode'])}`" + (" (the default)" if r["mode"] == JudgeSettings().mode else "")
                read, reused = (f"{r[k]:,}" if r[k] is not None else "-" for k in ("prompt_tokens_read",
                                                                                  "prompt_tokens_reused"))
                ratio = f"{r['wall_over_bound']:.2f}" if r["wall_over_bound"] is not None else "-"
                lines.append(f"| {md(r['debate'])} ({int(r['speeches'])} speeches) | {mode} "
                             f"| {r['wall_seconds']:.0f} s | {int(r['llm_calls'])} | {read} / {reused} "
                             f"| {r['completion_tokens']:,} | {ratio} |")
            speed = kept.get("speeds") or {}
            said.append(f"`{md(f.relative_to(root).as_posix())}` ({md(kept['model'])}, {md(kept.get('cpus'))} CPUs"
                        + (f", the server measured first at {speed['prompt_tokens_per_s']:.1f} prompt tokens/s read "
                           f"and {speed['generated_tokens_per_s']:.1f} tokens/s written" if speed else "")
                        + f"; code {_code(kept.get('commit'))})")
        except KeyError as e:
            raise DamagedFileError(f"{path}: damaged (no {e.args[0]!r} where a row or the run needs one)") from None
        except (TypeError, ValueError, AttributeError) as e:
            raise DamagedFileError(f"{path}: damaged (a value of the wrong kind: {str(e)[:200]})") from None
    return "\n".join(lines) + "\n\n" + _written_from(said)


def runs_table(kind: str, folders: list[Path], root: Path) -> str:
    """A figure table made from stored run folders, with the runs and their code named under it."""
    wanted = "offline.json" if kind == "offline" else "items.jsonl"
    missing = [f for f in folders if not (f / wanted).is_file()]
    if missing:
        raise RunsTableError(f"no {wanted} in {', '.join(str(f) for f in missing)} (give --runs the folder holding "
                             "them)")
    if kind == "offline":
        return offline_table(folders, root)
    from debatrix.benchmarks.frames import runs_frame

    frames = {f: runs_frame(f) for f in folders}  # each folder read once: the table and its stamp
    if kind == "signals":
        from debatrix.benchmarks import signals

        body = signals.table(signals.cells(folders))
    elif kind == "runs":
        lines = ["| run | benchmark | mode | model | items | headline | LLM calls | prompt tokens | hours |",
                 "|---|---|---|---|---|---|---|---|---|"]
        for f, frame in frames.items():
            for r in frame.to_dict("records"):
                figure = f"{r['headline_words']}: {r['headline_value']:.3f}" if r["headline"] else "none"
                lines.append(f"| `{md(f.relative_to(root).as_posix())}` | {md(r['benchmark'])} | {md(r['mode'])} "
                             f"| {md(r['model'])} "
                             f"| {r['items']} | {figure} | {r['llm_calls']:,} | {r['prompt_tokens']:,} "
                             f"| {r['seconds'] / 3600:.2f} |")
        body = "\n".join(lines)
    else:
        raise RunsTableError(f"unknown runs-table kind {kind!r} (signals, runs, offline)")
    return body + "\n\n" + _stamp(frames, root)


def rendered(text: str, runs: Path | None = None) -> str:
    """``text`` with every generated table's region filled with what the code prints now, and, given ``runs`` (a
    results root), every runs-table region with what its stored runs give."""
    text = _REGION.sub(lambda m: m.group(1) + TABLES[m.group("name")][0]() + m.group(4), text)
    if runs is None:
        return text
    return _RUNS_REGION.sub(lambda m: m.group(1) + runs_table(
        m.group("kind"), [runs / f for f in m.group("folders").split()], runs) + m.group(5), text)


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
    parser.add_argument("--runs", type=Path, help="a results root: also write the tables made from stored runs")
    args = parser.parse_args(argv)
    if args.runs is not None and not args.runs.is_dir():
        print(f"--runs: {args.runs} is not a folder", file=sys.stderr)
        return 2
    if args.write:
        pages = {}
        for page in sorted({p for _, p in TABLES.values()}):  # every page rendered before any is written
            text = (ROOT / page).read_text(encoding="utf-8")
            try:
                pages[page] = (text, rendered(text, args.runs))
            except (RunsTableError, DebatrixError) as e:  # a damaged or missing run: one line
                print(f"{page}: {' '.join(str(e).split())}", file=sys.stderr)
                return 2
        for page, (text, new) in pages.items():
            if new != text:
                (ROOT / page).write_text(new, encoding="utf-8")
                print(f"written: {page}")
    late = stale()
    for page in late:
        print(f"stale: {page}")
    return 1 if late else 0


if __name__ == "__main__":
    sys.exit(check_or_write())
