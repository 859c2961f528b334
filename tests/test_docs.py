"""The README a newcomer finishes and the documentation site behind it: the README opens with the two commands,
stays short and links only to what exists; the site builds with mkdocs --strict (every page in the navigation,
every link and anchor resolved)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_the_readme_opens_with_the_two_commands_and_stays_short():
    first = README.split("```")[1]
    assert [line.split()[:2] for line in first.strip().splitlines()[1:]] == [["make", "demo"], ["make", "test"]]
    assert len(README.splitlines()) <= 300


def test_every_relative_link_of_the_readme_reaches_a_file_and_its_heading():
    for target in re.findall(r"\]\((?!https?:)([^)\s]+)\)", README):
        path, _, anchor = target.partition("#")
        file = ROOT / path
        assert file.exists(), target
        if anchor and file.suffix == ".md":
            slugs = {re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", h.strip().lower()))
                     for h in re.findall(r"^#+ (.*)$", file.read_text(), re.MULTILINE)}
            assert anchor in slugs, target


def test_the_documentation_site_builds_strictly(tmp_path):
    if shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None and shutil.which("mkdocs") is None:
        pytest.skip("mkdocs is not installed: pip install -e '.[docs]' (make test installs it)")
    exe = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or "mkdocs"
    out = subprocess.run([exe, "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    pages = {p.parent.name for p in (tmp_path / "site").glob("*/index.html")}
    assert {"coaches", "researchers", "agents", "measured", "developers"} <= pages


def test_the_tables_the_code_knows_are_the_codes_own():
    """The modes table (calls from the run planner) and the exit statuses (from the code's one list) are printed
    into their pages by ``python -m debatrix.app.doctables --write``: a page that differs is stale."""
    from debatrix.app.doctables import TABLES, rendered, stale

    assert stale() == [], "run: python -m debatrix.app.doctables --write"
    # the check can fail: a page whose table is edited by hand is stale
    page = (ROOT / TABLES["exit-codes"][1]).read_text(encoding="utf-8")
    edited = page.replace("| 3 |", "| 5 |", 1)
    assert edited != page and rendered(edited) == page


def test_a_figure_table_is_written_from_its_stored_runs_and_names_the_code_that_ran_them(tmp_path):
    """A ``runs-table`` region is filled from the run folders it names under --runs, stamped with each run's commit;
    without --runs it is left as written (the runs are not in the repository), and a missing run is a clear
    error, not an empty table."""
    import json

    from debatrix.app.doctables import RunsTableError, rendered

    run = tmp_path / "results" / "da"
    (run / "items").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"benchmark": "debateart", "settings": {
        "llm": {"backend": "local", "local_model": "qwen2.5-coder-1.5b"}}}))
    (run / "items.jsonl").write_text("".join(json.dumps({
        "benchmark": "debateart", "mode": "flow", "item": f"d{k}", "status": "complete", "repeat": 0,
        "usage": {"llm_calls": 10, "prompt_tokens": 1000, "completion_tokens": 10, "seconds": 1800}}) + "\n"
        for k in range(3)))
    (run / "summary.csv").write_text("mode,metric,subset,value,ci_low,ci_high,repeats,n\n"
                                     "flow,rmse100_general_sc,all,41.5,30,50,1,3\n")
    (run / "runs.jsonl").write_text(json.dumps({"commit": "abcdef0123456789"}) + "\n")
    page = "# m\n<!-- runs-table: runs da -->\nold figures\n<!-- end table -->\nafter\n"
    assert rendered(page) == page  # no results root: left as it is
    out = rendered(page, tmp_path / "results")
    assert "old figures" not in out and out.endswith("<!-- end table -->\nafter\n")
    row = next(line for line in out.splitlines() if line.startswith("| `da` |"))
    assert "| debateart | flow | qwen2.5-coder-1.5b | 3 |" in row and "41.500" in row and "| 30 |" in row
    assert "| 1.50 |" in row  # 3 items of half an hour
    assert "`da` (debateart flow; code `abcdef0`)" in out
    with pytest.raises(RunsTableError, match="no items.jsonl in .*gone"):
        rendered(page.replace("runs da", "runs gone"), tmp_path / "results")
    # the local model's cost per mode, kept by `python -m debatrix.benchmarks.offline --out`
    cost = tmp_path / "results" / "offline"
    cost.mkdir()
    (cost / "offline.json").write_text(json.dumps({
        "commit": "0123456789ab-dirty", "model": "qwen2.5-coder-1.5b", "cpus": 2,
        "speeds": {"prompt_tokens_per_s": 32.46, "generated_tokens_per_s": 9.04}, "rows": [
            {"debate": "four_day_week", "speeches": 4, "mode": "flow", "status": "complete", "wall_seconds": 10.6,
             "llm_calls": 8, "prompt_tokens_read": 859, "prompt_tokens_reused": 1460, "completion_tokens": 8,
             "wall_over_bound": 0.41},
            {"debate": "four_day_week", "speeches": 4, "mode": "direct", "status": "complete", "wall_seconds": 69.2,
             "llm_calls": 5, "prompt_tokens_read": 1078, "prompt_tokens_reused": None, "completion_tokens": 410,
             "wall_over_bound": None}]}))
    out = rendered("<!-- runs-table: offline offline -->\n<!-- end table -->\n", tmp_path / "results")
    assert "| four_day_week (4 speeches) | `flow` (the default) | 11 s | 8 | 859 / 1,460 | 8 | 0.41 |" in out
    assert "| four_day_week (4 speeches) | `direct` | 69 s | 5 | 1,078 / - | 410 | - |" in out
    assert "32.5 prompt tokens/s read and 9.0 tokens/s written; code `0123456-dirty`" in out


# ------------------------------------------------------------------ every option and name the docs give is real

PAGES = ("README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")))
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
#: options the docs name that belong to another program, each with whose it is
ELSEWHERE = {"--max-logprobs": "vLLM's server", "--address": "ray start", "--head": "ray start",
             "--format": "pip list"}


def _cli_options() -> dict[tuple[str, ...], set[str]]:
    """Every command path of the CLI (``("bench", "debateart")``, ``("models", "install")``) and its options."""
    import typer

    from debatrix.app.cli import app

    found: dict[tuple[str, ...], set[str]] = {}

    def walk(command, path: tuple[str, ...]) -> None:
        found[path] = {o for p in command.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")}
        found[path].add("--help")
        if hasattr(command, "list_commands"):  # as click finds them (a benchmark's command is made when asked for)
            ctx = command.context_class(command)
            for name in command.list_commands(ctx):
                walk(command.get_command(ctx, name), (*path, name))

    walk(typer.main.get_command(app), ())
    return found


def _module_options(module: str) -> set[str]:
    """The options a ``python -m`` script of the project takes, from its own ``--help``."""
    out = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, f"python -m {module} --help: {out.stderr[-300:]}"
    return set(OPTION.findall(out.stdout))


def unknown_options(text: str, cli: dict[tuple[str, ...], set[str]], modules: dict[str, set[str]]) -> list[str]:
    """Each option ``text`` names that the command it is given to does not take: in a ``debatrix ...`` command
    (inline or a line of a code block) an option of that sub-command; in ``python -m debatrix...`` one of that
    script; alone (`` `--cache` ``) an option of some command or script of the project, or another program's
    (:data:`ELSEWHERE`)."""
    spans = re.findall(r"`([^`\n]+)`", text) + [line.strip() for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
                                                for line in block.splitlines()]
    every = set().union(*cli.values(), *modules.values())
    wrong = []
    for span in spans:
        words = span.split()
        if not words or not OPTION.search(span):
            continue
        if words[0] == "debatrix":
            path: tuple[str, ...] = ()
            for w in words[1:]:
                if (*path, w) not in cli:
                    break
                path = (*path, w)
            wrong += [f"{span}: {o}" for o in OPTION.findall(span) if o not in cli[path]]
        elif words[:2] == ["python", "-m"] and len(words) > 2 and words[2].startswith("debatrix"):
            wrong += [f"{span}: {o}" for o in OPTION.findall(span) if o not in modules.setdefault(
                words[2], _module_options(words[2]))]
        elif words[0].startswith("--"):
            wrong += [f"{span}: {o}" for o in OPTION.findall(span) if o not in every and o not in ELSEWHERE]
    return wrong


def test_every_option_the_docs_name_is_one_the_command_takes():
    cli, modules = _cli_options(), {}
    assert len(cli[("bench", "debateart")]) > 30 and "--mode" in cli[("judge",)] and "--base-url" not in cli[
        ("bench", "calibrate")]
    wrong = [f"{page}: {w}" for page in PAGES for w in unknown_options((ROOT / page).read_text(), cli, modules)]
    assert not wrong, wrong


def test_the_option_check_sees_an_option_that_does_not_exist():
    cli = _cli_options()
    text = ("Run `debatrix judge x.yaml --max-concurrency 4`, or `--judge-faster`.\n```\ndebatrix bench debateart "
            "--modes flow --mode flow\n```\n`debatrix models install qwen --force --quick`")
    assert unknown_options(text, cli, {}) == [  # inline spans first, then the code block's lines
        "debatrix judge x.yaml --max-concurrency 4: --max-concurrency", "--judge-faster: --judge-faster",
        "debatrix models install qwen --force --quick: --quick",  # --force is the sub-command's own
        "debatrix bench debateart --modes flow --mode flow: --mode"]


def _resolves(name: str) -> bool:
    """Whether a dotted name the docs give (``debatrix.core.flow.KINDS``, ``options.OPTION_FIELDS``) is importable:
    as written, or under the package, its app or its core."""
    import importlib

    for full in (name, f"debatrix.{name}", f"debatrix.app.{name}", f"debatrix.core.{name}"):
        parts = full.split(".")
        for k in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:k]))
            except ImportError:
                continue
            try:
                for attr in parts[k:]:
                    obj = getattr(obj, attr)
                return True
            except AttributeError:
                break
    return False


NAME = re.compile(r"`((?:debatrix|cli|options|prompting|benchmarks|graphs|core|app|api)(?:\.[A-Za-z_]\w*)+)(?:\(\))?`")


_NUM = r"\d+(?:\.\d+)?"
#: what reads as a measured figure: a value with its interval, a named metric's value, a share right, a count of
#: gold items judged, a time per unit (a rule of the code, "answers capped at ~1.6 tokens a word", is none of these)
FIGURE = re.compile(rf"{_NUM} \[{_NUM}, {_NUM}\]|\b(?:ROC AUC|ECE|Brier|RMSE×100|kappa|tau-c|log loss) {_NUM}"
                    rf"|{_NUM}% (?:right|of)\b|\bright on {_NUM}|\b\d+ of \d+ (?:debates|verdicts|items|speeches)\b"
                    rf"|{_NUM} (?:s|ms|min) (?:per|a|each)\b")
COMMIT = re.compile(r"`([0-9a-f]{7,40})`")


def undated_figures(text: str) -> list[str]:
    """Each paragraph of ``text`` that gives a measured figure (:data:`FIGURE`) without the commit it is history of:
    not in it, not in the paragraph a table follows (its introduction), not in its section's ``<!-- measures:
    COMMIT ... -->`` marker; tables doctables writes from stored runs (``<!-- table: ... -->``) and code blocks
    aside."""
    text = re.sub(r"<!-- table: [^>]*-->.*?<!-- end table -->|```.*?```", "", text, flags=re.S)
    wrong = []
    for section in re.split(r"\n(?=#{1,4} )", text):
        if re.search(r"<!-- measures: [0-9a-f]{7}", section):
            continue
        paragraphs = [p for p in re.split(r"\n\s*\n", section) if p.strip()]
        for k, para in enumerate(paragraphs):
            table_after = para.lstrip().startswith("|") and k > 0 and COMMIT.search(paragraphs[k - 1])
            if FIGURE.search(para) and not COMMIT.search(para) and not table_after:
                wrong.append(f"{FIGURE.search(para).group(0)!r} in: {' '.join(para.split())[:160]}")
    return wrong


def test_every_figure_the_docs_give_states_its_commit_or_is_written_from_stored_runs():
    wrong = [f"{page}: {w}" for page in PAGES for w in undated_figures((ROOT / page).read_text())]
    assert not wrong, "\n".join(wrong)


def test_the_figure_check_sees_a_figure_without_its_commit():
    assert undated_figures("The flow was right on 0.55 [0.47, 0.63] of 140 debates.")
    assert undated_figures("## A\n\nIt names the winner in 17 of 26 debates.\n\n## B\n\n<!-- measures: 870dbe7 x -->")
    assert not undated_figures("The flow was right on 0.55 [0.47, 0.63] of 140 debates (at `870dbe7`).")
    assert not undated_figures("Measured at `870dbe7`:\n\n| items | right |\n|---|---|\n| 32 | 0.62 [0.5, 0.7] |")
    assert not undated_figures("## A\n<!-- measures: 870dbe7 x -->\n\nIt was right on 0.55 [0.47, 0.63].")
    assert not undated_figures("<!-- table: readings -->\n| 0.55 [0.47, 0.63] |\n<!-- end table -->")
    assert not undated_figures("Answers are capped at ~1.6 tokens a word; below 60% it reads too close to call.")


def test_every_commit_the_docs_cite_is_one_of_this_repository():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (an installed package): no history to find the commits in")
    cited = sorted({c for page in PAGES for c in COMMIT.findall((ROOT / page).read_text())})
    assert len(cited) > 20
    missing = [c for c in cited if subprocess.run(["git", "cat-file", "-e", f"{c}^{{commit}}"], cwd=ROOT,
                                                   capture_output=True).returncode != 0]
    assert not missing, missing


def test_every_dotted_name_the_docs_give_exists():
    names = {(page, m) for page in PAGES for m in NAME.findall((ROOT / page).read_text())}
    assert len(names) > 20
    missing = sorted((page, n) for page, n in names if not _resolves(n))
    assert not missing, missing
    assert not _resolves("debatrix.core.flow.NO_SUCH_NAME") and not _resolves("cli.SETTINGS_OPTIONS")
