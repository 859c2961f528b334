from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from debatrix.app.cli import app
from debatrix.testing import FakeOpenAIServer

from .conftest import EXAMPLES, data_required

runner = CliRunner()


def test_validate_ok_and_bad(tmp_path):
    res = runner.invoke(app, ["validate", str(EXAMPLES / "school_uniforms.yaml")])
    assert res.exit_code == 0 and "school_uniforms (1v1, 2 debaters, 4 speeches)" in res.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("motion: M\ndebaters: [{name: A, side: pro}, {name: B, side: con}]\n"
                   "speeches: [{speaker: A, content: hi}, {speaker: C, content: yo}]\n")
    res = runner.invoke(app, ["validate", str(bad)])
    assert res.exit_code == 2 and "unknown speaker 'C'" in res.output


def test_validate_names_a_debate_over_the_call_budget(tmp_path):
    """A debate whose run would be refused for its calls is said so (and not rendered to size it)."""
    speeches = "".join(f"  - {{speaker: {'AB'[i % 2]}, content: Point {i}.}}\n" for i in range(700))
    long = tmp_path / "long.yaml"
    long.write_text(f"motion: M\ndebaters: [{{name: A, side: pro}}, {{name: B, side: con}}]\nspeeches:\n{speeches}")
    res = runner.invoke(app, ["validate", str(long), str(EXAMPLES / "school_uniforms.yaml"), "--mode", "debatrix",
                              "--base-url", "http://127.0.0.1:9/v1"])
    assert res.exit_code == 3, res.output
    assert "too many calls" in res.output and "2116 LLM calls, more than max_llm_calls = 2000" in res.output
    assert "ok " in res.output and "school_uniforms" in res.output


def test_judge_bad_input_is_one_line_and_nonzero(tmp_path):
    missing = tmp_path / "missing.yaml"
    proc = subprocess.run([sys.executable, "-m", "debatrix.app.cli", "judge", str(missing)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "file not found" in lines[0]
    assert "Traceback" not in proc.stderr


def test_judge_over_http_writes_json_and_summary(tmp_path):
    out = tmp_path / "result.json"
    with FakeOpenAIServer() as server:
        env = {**os.environ, "OPENAI_API_KEY": "sk-test-secret-123"}
        proc = subprocess.run(
            [sys.executable, "-m", "debatrix.app.cli", "judge", str(EXAMPLES / "school_uniforms.yaml"),
             "--base-url", server.base_url, "--model", "fake-model", "--out", str(out), "--mode", "debatrix"],
            capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "argument analysed speech 1 (Maya)" in proc.stderr  # live progress
    assert "Winner:" in proc.stdout and "status: complete | 28 LLM calls" in proc.stdout  # speeches scored in analyses
    assert "LLM usage per node" in proc.stdout and "analyze_speech" in proc.stdout  # per-node accounting
    data = json.loads(out.read_text())
    assert data["schema_version"] == "1.16" and data["status"] == "complete"
    assert [s["speaker"] for s in data["speeches"]] == ["Maya", "Theo", "Maya", "Theo"]  # the speeches judged
    assert {d["name"] for d in data["dimensions"]} == {"argument", "source", "language"}
    assert "sk-test-secret-123" not in out.read_text() + proc.stdout + proc.stderr  # no secrets in results or logs


def test_judge_incomplete_exits_3(tmp_path):
    with FakeOpenAIServer() as server:
        res = runner.invoke(app, ["judge", str(EXAMPLES / "school_uniforms.yaml"), "--base-url", server.base_url,
                                  "--mode", "direct", "--context-window", "600", "--max-output-tokens", "100",
                                  "--out", str(tmp_path / "r.json")])
    assert res.exit_code == 3
    assert "incomplete" in res.output and "ContextWindowExceeded" in res.output
    assert json.loads((tmp_path / "r.json").read_text())["status"] == "incomplete"


@pytest.mark.parametrize("args, message", [
    (["--mode", "fancy"], "fancy"),
    (["--memory", "cloud"], "cloud"),  # the choices are typed: click names the bad value
    (["--dimensions", "style"], "unknown dimension 'style'"),
    (["--orders", "0"], "orders"),  # a zero is a value given, not an option left out: refused, not ignored
    (["--analysis-words", "0"], "analysis_words"),
    (["--comment-words", "0"], "comment_words"),
    (["--flow-ask", "some"], "some"),
])
def test_bad_options(args, message):
    with FakeOpenAIServer() as server:
        res = runner.invoke(app, ["judge", str(EXAMPLES / "school_uniforms.yaml"), "--base-url", server.base_url,
                                  *args])
    assert res.exit_code == 2 and message in res.output, res.output
    assert not server.requests  # refused before any call


@data_required
def test_bench_command_runs_and_resumes(tmp_path):
    """`debatrix bench` on a 2-debate DebateArt subset against the fake server: tables, plot, then a rerun that
    judges nothing again."""
    out = tmp_path / "bench"
    with FakeOpenAIServer() as srv:
        args = ["bench", "debateart", "--modes", "direct,dimensional", "--limit", "2", "--out", str(out),
                "--base-url", srv.base_url, "--model", "fake-model", "--max-samples", "2"]
        first = runner.invoke(app, args)
        assert first.exit_code == 0, first.output
        n_requests = len(srv.requests)
        again = runner.invoke(app, args)
        assert again.exit_code == 0, again.output
        assert len(srv.requests) == n_requests  # everything was finished: no new request
    assert "rmse100_general_dp" in first.output and "4 judged now, 0 already done" in first.output
    assert "0 judged now, 4 already done" in again.output
    for name in ("items.jsonl", "summary.csv", "summary.md", "summary.png", "run.json", "llm_cache.sqlite"):
        assert (out / name).exists(), name


def test_bench_help_lists_each_benchmark_and_each_stored_run_command_in_its_group_each_with_its_own_help():
    """`debatrix bench --help` is a list, not every option: the registered benchmarks under one heading with what
    each scores, the commands that read stored runs under another; each sub-command's help has only its own
    options (calibrate takes no endpoint; a benchmark's groups its run options apart from the judge's)."""
    from debatrix.app.cli_bench import SCORING, STORED
    from debatrix.benchmarks import BENCHMARKS

    res = runner.invoke(app, ["bench", "--help"], env={"COLUMNS": "100"}, terminal_width=100)
    assert res.exit_code == 0, res.output
    scoring = res.output.split(SCORING + ":")[1].split(STORED + ":")[0]
    stored = res.output.split(STORED + ":")[1]
    for name, entry in BENCHMARKS.items():
        assert re.search(rf"^  {re.escape(name)} +{re.escape(entry.summary.split()[0])}", scoring, re.M), name
    assert [line.split()[0] for line in stored.splitlines() if line.startswith("  ") and not line.startswith(
        "   ")][:5] == ["list", "weights", "signals", "calibrate", "merge"]
    assert "--base-url" not in res.output and len(res.output.splitlines()) < 60
    calibrate = runner.invoke(app, ["bench", "calibrate", "--help"])
    assert calibrate.exit_code == 0 and "--model" in calibrate.output and "--base-url" not in calibrate.output
    contrast = runner.invoke(app, ["bench", "contrast", "--help"], env={"COLUMNS": "100"}, terminal_width=100)
    heads = [line[:-1] for line in contrast.output.splitlines() if line and line[0] != " " and line.endswith(":")]
    assert heads[0] == "The benchmark run" and "Model and endpoint" in heads, heads
    assert "Variants: " + ", ".join(BENCHMARKS.get_or_raise("contrast").variants) in " ".join(contrast.output.split())


def test_bench_bad_arguments():
    res = runner.invoke(app, ["bench", "mmlu"])
    assert res.exit_code == 2 and "unknown benchmark 'mmlu'" in res.output and "debateart" in res.output
    res = runner.invoke(app, ["bench", "debateart", "extra"])
    assert res.exit_code == 2 and "extra" in res.output
    res = runner.invoke(app, ["bench", "debateart", "--modes", "fancy"])
    assert res.exit_code == 2 and "unknown mode(s) fancy" in res.output
    res = runner.invoke(app, ["bench", "critiques", "--base-url", "http://127.0.0.1:9/v1"])
    assert res.exit_code == 2 and "--data" in res.output


def sub_command(*path):
    """The click command at ``path`` (``("bench", "debateart")``), found as click finds it when it runs."""
    import typer.main

    command = typer.main.get_command(app)
    for name in path:
        command = command.get_command(command.context_class(command), name)
    return command


@pytest.mark.parametrize("command", [["judge"], ["bench", "debateart"], ["validate"]])
def test_help_at_80_columns_shows_every_option_whole(command):
    """Help wraps, never truncates: every option name (and its --no- form) appears whole, choices are listed."""
    res = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "80"}, terminal_width=80)
    assert res.exit_code == 0
    click_command = sub_command(*command)
    names = [o for p in click_command.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")]
    assert len(names) > 5
    missing = [n for n in names if n not in res.output.replace("\n", " ").split()
               and not any(w.startswith(n) and not w[len(n):].replace("/", "").strip(",") for w in res.output.split())]
    assert missing == [] and "…" not in res.output
    assert max(len(line) for line in res.output.splitlines()) <= 80


@pytest.mark.parametrize("args", [[], ["models"]])
def test_command_list_is_not_cut(args):
    res = runner.invoke(app, [*args, "--help"], env={"COLUMNS": "80"}, terminal_width=80)
    listed = res.output.split("Commands:")[1]
    assert res.exit_code == 0 and "..." not in listed and "…" not in listed


def test_summary_ends_with_each_verdicts_reason_and_the_winner():
    with FakeOpenAIServer() as server:
        res = runner.invoke(app, ["judge", str(EXAMPLES / "school_uniforms.yaml"), "--base-url", server.base_url,
                                  "--mode", "dimensional", "--quiet"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    tail = [line for line in res.output.splitlines() if line.strip()]
    last = max(k for k, line in enumerate(tail) if line.startswith("Winner: "))
    said = " ".join(tail[last:])  # the summary wraps between words at the terminal's width
    assert "Comment number" in said and "orders agree" in said  # the panel's reason beside it, and its orders
    for dim in ("argument", "source", "language"):
        [line] = [x for x in tail if x.startswith(f"{dim} — ")]
        assert "Comment number" in line and "Winner:" not in line.split(":", 1)[1]


def test_progress_bar_in_a_terminal_and_lines_in_a_log():
    """A terminal gets a bar of calls and a row per dimension and the panel; a log gets one line per step."""
    import io

    from rich.console import Console

    from debatrix.app.api import ProgressEvent
    from debatrix.core.modes import steps_per_row
    from debatrix.app.progress_bar import JudgeProgress

    rows = steps_per_row("debatrix", ["argument", "source"], 2, merge_score_call=False)
    assert rows == {"argument": 6, "source": 6, "panel": 2}
    events = [ProgressEvent("analyze_speech", "argument", 0, "analysed speech 1 (Maya)"),
              ProgressEvent("panel_decide", None, None, "winner: Maya")]
    done = iter(range(1, 10))
    for terminal in (True, False):
        buf = io.StringIO()
        console = Console(file=buf, force_terminal=terminal, width=100, color_system=None)
        with JudgeProgress(console, 20, rows, lambda: next(done)) as progress:
            for e in events:
                progress.event(e)
        text = buf.getvalue()
        if terminal:
            assert "LLM calls" in text and "2/20" in text and "argument" in text and "panel" in text
            assert "1/6" in text and "1/2" in text and "winner: Maya" in text
        else:
            assert "/20 calls" in text.splitlines()[0] and "argument analysed speech 1 (Maya)" in text.splitlines()[0]
            assert "panel winner: Maya" in text.splitlines()[1]


def test_bench_calibrate_fits_a_debateart_folder_and_refuses_others(tmp_path):
    import json

    from .test_metrics import _records

    recs = _records([(0.9, 1.0, 1.0), (0.2, 0.0, 1.0), (0.7, 1.0, 0.0), (0.6, 1.0, 1.0), (0.1, 0.0, 0.0)] * 3)
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (tmp_path / "run.json").write_text(json.dumps({"benchmark": "debateart", "settings": {"llm": {}}}))
    res = runner.invoke(app, ["bench", "calibrate", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "direct: 15 decisive verdicts, 60% right" in res.output and "ECE" in res.output
    # the default local model's name when the run used it (no endpoint in its settings)
    assert json.loads((tmp_path / "calibration.json").read_text())["maps"][0]["model"] == "qwen2.5-coder-1.5b"
    (tmp_path / "run.json").write_text(json.dumps({"benchmark": "bp", "settings": {"llm": {}}}))
    res = runner.invoke(app, ["bench", "calibrate", str(tmp_path)])
    assert res.exit_code == 2 and "audience verdicts" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["bench", "calibrate", str(tmp_path / "missing")])
    assert res.exit_code == 2 and "not a benchmark run folder" in res.output


def test_bench_calibrate_into_a_profile_merges_its_maps_and_checks_the_file_before_fitting(tmp_path):
    import json

    from debatrix.core.profile import JudgeProfile, ModelIdentity, load, prompts_sha256

    from .test_metrics import _records

    recs = _records([(0.9, 1.0, 1.0), (0.2, 0.0, 1.0), (0.7, 1.0, 0.0), (0.6, 1.0, 1.0), (0.1, 0.0, 0.0)] * 3)
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (tmp_path / "run.json").write_text(json.dumps({"benchmark": "debateart", "settings": {"llm": {}}}))
    res = runner.invoke(app, ["bench", "calibrate", str(tmp_path), "--into", str(tmp_path / "nope.json")])
    assert res.exit_code == 2 and "no such profile file" in res.output
    assert not (tmp_path / "calibration.json").exists()  # refused before the fit
    profile = tmp_path / "qwen.profile.json"
    profile.write_text(JudgeProfile(model=ModelIdentity(name="qwen2.5-coder-1.5b", endpoint="local"),
                                    prompts_sha256=prompts_sha256(), measured="2026-12-07").model_dump_json())
    res = runner.invoke(app, ["bench", "calibrate", str(tmp_path), "--into", str(profile)])
    assert res.exit_code == 0, res.output
    assert "merged 1 map(s) and 0 place prior(s)" in res.output and f"--profile {profile}" in " ".join(
        res.output.split())
    assert [(m.model, m.mode) for m in load(profile).verdict_maps] == [("qwen2.5-coder-1.5b", "direct")]
    other = tmp_path / "other.profile.json"
    other.write_text(JudgeProfile(model=ModelIdentity(name="gpt-x"), prompts_sha256=prompts_sha256(),
                                  measured="2026-12-07").model_dump_json())
    res = runner.invoke(app, ["bench", "calibrate", str(tmp_path), "--into", str(other)])
    assert res.exit_code == 2 and "gpt-x's profile" in res.output and "Traceback" not in res.output
    assert load(other).verdict_maps == ()


def test_bench_calibrate_pools_debateart_and_contrast_and_says_how_each_carries_over(tmp_path):
    import json

    from .test_metrics import _contrast_records, _records

    art, con = tmp_path / "art", tmp_path / "con"
    for folder, bench, recs in ((art, "debateart", _records([(0.9, 1.0, 1.0), (0.2, 0.0, 1.0)] * 4)),
                                (con, "contrast", _contrast_records([(0.8, 1.0)] * 5 + [(0.3, 0.0)]))):
        folder.mkdir()
        (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
        (folder / "run.json").write_text(json.dumps({"benchmark": bench, "settings": {"llm": {}}}))
    res = runner.invoke(app, ["bench", "calibrate", str(art), str(con)])
    assert res.exit_code == 0, res.output
    assert "direct: 14 decisive verdicts" in res.output
    assert "on contrast (con) (6), mapped by a fit on debateart (art)" in res.output
    assert json.loads((art / "calibration.json").read_text())["maps"][0]["n"] == 14
    (con / "run.json").write_text(json.dumps({"benchmark": "contrast", "settings": {"llm": {
        "base_url": "http://127.0.0.1:9/v1", "model": "other"}}}))
    res = runner.invoke(app, ["bench", "calibrate", str(art), str(con)])
    assert res.exit_code == 2 and "different models" in res.output and "Traceback" not in res.output


def test_the_summary_at_80_columns_breaks_no_word_and_no_line_is_wider():
    """What a terminal of 80 columns shows: no line wider than the screen (which the terminal would break
    anywhere), and the prose lines (status, reasons, flags) wrapped between words: each wide line's words come in
    the same order in the narrow output, none cut in two. The clock of piped progress starts with the run."""
    def judged(columns: int) -> subprocess.CompletedProcess:
        # one request at a time, to a fresh fake server: both runs get the same answers
        with FakeOpenAIServer(latency=0.02) as server:
            return subprocess.run(
                [sys.executable, "-m", "debatrix.app.cli", "judge", str(EXAMPLES / "four_day_week.yaml"),
                 "--mode", "debatrix", "--base-url", server.base_url, "--model", "fake-model",
                 "--max-connections", "1"],
                capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": str(columns)})

    narrow, wide = judged(80), judged(400)  # the prose mode: the widest summary (a table per dimension)
    assert narrow.returncode == wide.returncode == 0, narrow.stderr
    assert max(len(ln) for ln in narrow.stdout.splitlines()) <= 80
    assert max(len(ln) for ln in narrow.stderr.splitlines()) <= 80
    def plain_words(text: str) -> list[str]:  # without the seconds, which differ between the two runs
        return [w for w in text.split() if not re.fullmatch(r"[\d.]+s", w)]

    words = plain_words(narrow.stdout)
    prose = [ln for ln in wide.stdout.splitlines()
             if ln.startswith(("status:", "Winner", "judged in", "  - ", "argument", "source", "language"))
             and "│" not in ln]
    assert any(ln.startswith("status:") for ln in prose) and any(ln.startswith("Winner") for ln in prose)
    for line in prose:
        tokens = plain_words(line)
        assert any(words[k:k + len(tokens)] == tokens for k in range(len(words))), line
    usage = narrow.stdout.split("LLM usage per node")[1].splitlines()
    assert all(len(ln) <= 80 for ln in usage) and any("analyze_speech" in ln for ln in usage)
    # piped progress lines: one clock from the start (never reset per step), the last line showing the time the
    # run took (a scripted step can finish within the first tenth of a second: its line may read 0.0s)
    clocks = [float(ln.split("s ", 1)[0]) for ln in narrow.stderr.splitlines() if "calls" in ln and "/" in ln
              and ln.split("s ", 1)[0].strip().replace(".", "").isdigit()]
    assert clocks and clocks == sorted(clocks) and clocks[-1] > clocks[0]


def test_version_option():
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == __import__("debatrix").__version__


def test_escalation_from_the_command_line_says_who_decided():
    # a first judge whose orders agree keeps its verdict (the second is never asked); a first judge that cannot
    # give one (its server is down) hands the debate up, and the summary and the result say who decided and why
    example = str(EXAMPLES / "school_uniforms.yaml")
    with FakeOpenAIServer() as weak, FakeOpenAIServer() as strong:
        kept = runner.invoke(app, ["judge", example, "--mode", "direct", "--base-url", weak.base_url, "--model",
                                   "weak", "--escalate-to", "strong", "--escalate-base-url", strong.base_url,
                                   "--quiet"], env={"COLUMNS": "200"})
        assert kept.exit_code == 0 and "Decided by weak: kept: orders agree" in kept.output, kept.output
        assert not strong.requests
        up = runner.invoke(app, ["judge", example, "--mode", "direct", "--base-url", "http://127.0.0.1:9/v1",
                                 "--model", "weak", "--retries", "0", "--escalate-to", "strong",
                                 "--escalate-base-url", strong.base_url, "--quiet", "--json"],
                           env={"COLUMNS": "200"})
        assert up.exit_code == 0, up.output
        assert len(strong.requests) == 4
    data = json.loads(up.output[up.output.index("{"):])
    esc = data["escalation"]
    assert esc["escalated"] and esc["decided_by"] == "strong" and esc["first_status"] == "incomplete"
    assert esc["reason"].startswith("the first judge gave no verdict") and data["status"] == "complete"
    bad = runner.invoke(app, ["judge", example, "--escalate-below", "0.8"])
    assert bad.exit_code == 2 and "--escalate-below needs --escalate-to" in bad.output


def test_the_status_line_never_prints_a_missing_figure():
    # every call answered from the answer cache: the server computed nothing and reused nothing it can report
    from debatrix.app.terminal import print_summary
    from rich.console import Console

    with FakeOpenAIServer() as srv:
        res = runner.invoke(app, ["judge", str(EXAMPLES / "school_uniforms.yaml"), "--mode", "direct",
                                  "--base-url", srv.base_url, "--quiet", "--json"])
    data = json.loads(res.output[res.output.index("{"):])
    from debatrix.core.results import JudgeResult

    result = JudgeResult.model_validate(data)
    usage = result.usage.model_copy(update={"prompt_tokens_processed": 0, "cached_prompt_tokens": None})
    con = Console(record=True, width=200)
    print_summary(result.model_copy(update={"usage": usage}), con)
    text = con.export_text()
    assert "0 prompt tokens read by the model, " in text and "None" not in text


def test_judge_several_files_into_a_folder_resumes_and_refuses_what_it_cannot_do(tmp_path):
    files = [str(EXAMPLES / "school_uniforms.yaml"), str(EXAMPLES / "four_day_week.yaml")]
    out = tmp_path / "batch"
    with FakeOpenAIServer() as server:
        common = ["--base-url", server.base_url, "--model", "fake-model", "--mode", "direct"]
        res = runner.invoke(app, ["judge", *files, *common, "--out-dir", str(out), "--max-samples", "2"])
        assert res.exit_code == 0, res.output
        sent = len(server.requests)
        assert "2 debates, direct mode (2 judged now, 0 found done)" in res.output
        records = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
        assert sorted(r["item"].rsplit("-", 1)[0] for r in records) == ["four_day_week", "school_uniforms"]
        assert all((out / r["result_file"]).exists() and "winner" in r["verdicts"]["general"] for r in records)
        again = runner.invoke(app, ["judge", *files, *common, "--out-dir", str(out)])
        assert again.exit_code == 0 and "(0 judged now, 2 found done)" in again.output
        assert len(server.requests) == sent  # nothing judged twice
        # several files need a folder; a missing file is found before any call
        res = runner.invoke(app, ["judge", *files, *common])
        assert res.exit_code == 2 and "give --out-dir DIR" in res.output
        res = runner.invoke(app, ["judge", files[0], str(tmp_path / "nope.yaml"), *common, "--out-dir",
                                  str(tmp_path / "b2")])
        assert res.exit_code == 2 and "file not found" in res.output and len(server.requests) == sent


@data_required
def test_bench_exits_3_while_items_are_incomplete_and_retries_them_when_asked(tmp_path):
    from debatrix.testing import Fault

    out = tmp_path / "bench"
    broken = [True]
    with FakeOpenAIServer(responder=lambda body, n: Fault(status=400) if broken[0] else None) as srv:
        args = ["bench", "debateart", "--modes", "direct", "--limit", "2", "--out", str(out),
                "--base-url", srv.base_url, "--model", "fake-model"]
        res = runner.invoke(app, args)
        assert res.exit_code == 3 and "2 incomplete" in res.output, res.output
        broken[0] = False
        sent = len(srv.requests)
        res = runner.invoke(app, args)  # resumed: nothing asked again unless told, and still incomplete
        assert res.exit_code == 3 and len(srv.requests) == sent, res.output
        res = runner.invoke(app, [*args, "--retry-incomplete"])
        assert res.exit_code == 0 and "2 judged now, 0 already done" in res.output, res.output
        assert len(srv.requests) > sent
        summary = (out / "summary.csv").read_text()
        res = runner.invoke(app, args)  # a resumed run's summary is the uninterrupted run's
        assert res.exit_code == 0 and "0 judged now, 2 already done" in res.output
        assert (out / "summary.csv").read_text() == summary


@pytest.mark.parametrize("bad", [float("nan"), 5.0, -3.0])
def test_bench_calibrate_refuses_a_probability_that_is_none_in_one_line(tmp_path, bad):
    import json

    from .test_metrics import _records

    recs = _records([(0.9, 1.0, 1.0), (0.2, 0.0, 1.0), (bad, 1.0, 1.0)] * 5)
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))  # NaN as JSON's NaN
    (tmp_path / "run.json").write_text(json.dumps({"benchmark": "debateart", "settings": {"llm": {}}}))
    res = runner.invoke(app, ["bench", "calibrate", str(tmp_path)])
    assert res.exit_code == 2 and "is not a probability" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "calibration.json").exists()  # nothing fitted on it


def test_bench_calibrate_shows_names_from_a_run_as_text(tmp_path):
    import json

    from .test_metrics import _records

    mode = "[bold red]evil\x1b]0;title\x07\x1b[2J"
    recs = [{**r, "mode": mode} for r in _records([(0.9, 1.0, 1.0), (0.2, 0.0, 1.0), (0.7, 1.0, 0.0)] * 5)]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (tmp_path / "run.json").write_text(json.dumps({"benchmark": "debateart", "settings": {"llm": {
        "base_url": "http://127.0.0.1:9/v1", "model": "[link=https://evil.example]m\x1b[31m"}}}))
    res = runner.invoke(app, ["bench", "calibrate", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.output and "\x07" not in res.output
    assert "[bold red]evil" in res.output and "[link=https://evil.example]m" in res.output


def test_bench_calibrate_writes_no_control_character_to_any_stream(tmp_path):
    """The mode's ESC and BEL reach neither stdout nor stderr (matplotlib warns of a glyph it cannot draw, with the
    character in its message): the chart's text is made printable first. A process of its own, so every stream
    is the real one."""
    import json
    import subprocess
    import sys

    from .test_metrics import _records

    mode = "evil\x1b]0;title\x07\x1b[2J"
    recs = [{**r, "mode": mode} for r in _records([(0.9, 1.0, 1.0), (0.2, 0.0, 1.0), (0.7, 1.0, 0.0)] * 5)]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (tmp_path / "run.json").write_text(json.dumps({"benchmark": "debateart", "settings": {"llm": {
        "base_url": "http://127.0.0.1:9/v1", "model": "m"}}}))
    done = subprocess.run([sys.executable, "-c", "from debatrix.app.cli import main; main()", "bench", "calibrate",
                           str(tmp_path)], capture_output=True, timeout=300, env={**os.environ, "COLUMNS": "120"})
    assert done.returncode == 0, done.stderr
    assert b"\x1b" not in done.stdout + done.stderr and b"\x07" not in done.stdout + done.stderr
    assert (tmp_path / "reliability.png").exists()


def test_bench_calibrate_refuses_a_stored_probability_that_is_not_a_number_in_one_line(tmp_path):
    import json

    from .test_metrics import _records

    recs = _records([(0.9, 1.0, 1.0), (0.2, 0.0, 1.0), (0.7, 1.0, 0.0)] * 5)
    first = recs[0]["verdicts"]["general"]
    first["probabilities"] = {k: "x" for k in first["probabilities"]}
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (tmp_path / "run.json").write_text(json.dumps({"benchmark": "debateart", "settings": {"llm": {"model": "m"}}}))
    res = runner.invoke(app, ["bench", "calibrate", str(tmp_path)])
    assert res.exit_code == 2, res.output
    assert "is not a probability" in res.output and "Traceback" not in res.output
    assert len([ln for ln in res.output.splitlines() if ln.strip()]) <= 3


def test_judge_and_bench_take_the_settings_options_of_one_table_and_both_make_settings_of_them(monkeypatch):
    """One option table: every settings option means the same in `judge` and `bench`, with the same help, and what
    either is given reaches the settings of its run."""
    import typer

    from debatrix.app import cli_bench, cli_judge, options

    shared = {p.name for p in options.SETTINGS_OPTIONS}

    def options(*path):
        return {p.name: (p.opts, p.help) for p in sub_command(*path).params if p.name in shared}

    assert options("judge") == options("bench", "contrast") and set(options("judge")) == shared
    made = []

    def make_settings(**kw):  # recorded, then the command stops: nothing is judged
        made.append(kw)
        raise typer.Exit(0)

    for command in (cli_judge, cli_bench):
        monkeypatch.setattr(command, "make_settings", make_settings)
    monkeypatch.setattr(cli_bench, "_need_bench_extra", lambda: None)
    given = ["--transport", "langchain", "--dimensions", "argument", "--orders", "1", "--log-calls"]
    for argv in (["judge", str(EXAMPLES / "school_uniforms.yaml"), *given], ["bench", "contrast", *given]):
        assert runner.invoke(app, argv).exit_code == 0
    assert len(made) == 2
    for kw in made:
        assert (kw["transport"].value, kw["dimensions"], kw["orders"], kw["log_calls"]) == ("langchain", "argument",
                                                                                           1, True)


def test_each_settings_option_shows_its_fields_description_and_sets_that_field(monkeypatch, tmp_path):
    """The help of an option that sets a settings field is the field's description (written once), and the option
    sets exactly that field: a value given reaches the field the help was read from."""
    import typer.main

    from debatrix.app import cli_common, options

    monkeypatch.setattr(cli_common, "fitted_to_endpoint", lambda llm, **kw: llm)  # no server is asked what it serves
    assert set(options.OPTION_FIELDS) | {"escalate_base_url"} == {p.name for p in options.SETTINGS_OPTIONS}
    helps = {p.name: p.help for p in typer.main.get_command(app).commands["judge"].params}  # type: ignore[attr-defined]
    given = {"dimensions": ("argument", ("argument",)), "dimension_dir": ([tmp_path], (tmp_path,)),
             "base_url": ("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1"), "model": ("m7", "m7"),
             "local_model": ("smollm2-135m", "smollm2-135m"), "backend": ("openai", "openai"),
             "analysis_words": (33, 33), "comment_words": (15, 15), "context_window": (4096, 4096),
             "max_output_tokens": (77, 77), "timeout": (9.5, 9.5), "retries": (1, 1), "max_connections": (3, 3),
             "rps": (2.0, 2.0), "structured_output": ("tool", "tool"), "transport": ("langchain", "langchain"),
             "merge_score_call": (True, True), "score_in_analysis": (False, False), "orders": (1, 1),
             "temperature": (0.3, 0.3), "order_layout": ("shared", "shared"), "flow_questions": ("together", "together"),
             "flow_ask": ("all", "all"), "profile": ("none", "none"), "escalate_below": (0.8, 0.8),
             "retrieval": (True, True), "memory": ("http", "http"), "memory_path": (tmp_path, tmp_path),
             "chroma_host": ("10.0.0.7", "10.0.0.7"), "chroma_port": (9001, 9001), "embedding": ("hash", "hash"),
             "log_calls": (False, False), "call_log_chars": (5000, 5000), "escalate_to": ("smollm2-135m", "smollm2-135m"), "decision_samples": (5, 5)}
    assert set(given) == set(options.OPTION_FIELDS)
    for name, path in options.OPTION_FIELDS.items():
        assert helps[name].startswith(options.setting_help(path)), name
        value, expected = given[name]
        extra = {"escalate_to": "smollm2-135m"} if name == "escalate_below" else {}

        def read(settings):
            field = settings
            for part in path.split("."):
                field = getattr(field, part, None)
            return field.local_model if name == "escalate_to" and field else field  # the second judge's model

        given_field, default_field = read(cli_common.make_settings(mode="flow", **{name: value, **extra})), \
            read(cli_common.make_settings(mode="flow", **extra))
        assert given_field == expected != default_field, name


@pytest.mark.parametrize("terminal", [True, False])
def test_calls_beyond_the_plan_grow_the_total_instead_of_passing_it(terminal):
    """A re-asked call is a call more than the plan counted: the progress never shows more calls done than in
    all ("35/28")."""
    import io

    from rich.console import Console

    from debatrix.app.api import ProgressEvent
    from debatrix.app.progress_bar import JudgeProgress

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=terminal, width=100, color_system=None)
    done = iter([2, 5])
    with JudgeProgress(console, 3, {"argument": 2}, lambda: next(done)) as progress:
        for k in range(2):
            progress.event(ProgressEvent("analyze_speech", "argument", k, f"analysed speech {k + 1}"))
    pairs = [(int(a), int(b)) for a, b in re.findall(r"\b(\d+)/(\d+)\b", buf.getvalue())]
    assert (5, 5) in pairs and all(a <= b for a, b in pairs)


@pytest.mark.parametrize("command", ["judge", "bench debateart", "bench merge", "validate", "report", "ui", "serve"])
def test_help_names_values_as_a_reader_says_them_not_as_python_types(command):
    """`debatrix X --help` says `--orders N`, `--out PATH`, `PATHS`, not `<int>`, `<list[Path]>` (choices keep
    their list)."""
    out = subprocess.run([sys.executable, "-c", "import sys; from debatrix.app.cli import main; "
                          "sys.argv = ['debatrix', *sys.argv[1:]]; main()", *command.split(), "--help"],
                         capture_output=True, text=True, env={**os.environ, "COLUMNS": "120"}, timeout=60)
    assert out.returncode == 0, out.stderr
    types = re.findall(r"<(int|float|str|path|list\[\w+\]|int range|float range)>", out.stdout)
    assert not types and re.search(r"^(\w+ ?)*options:$", out.stdout, re.I | re.M), out.stdout  # a panel of options


def test_judge_help_is_in_panels_and_ends_in_examples():
    res = runner.invoke(app, ["judge", "--help"], env={"COLUMNS": "80"}, terminal_width=80)
    text = res.output
    heads = [line[:-1] for line in text.splitlines() if line and not line.startswith(" ") and line.endswith(":")]
    assert heads[:heads.index("Output") + 1] == ["Arguments", "Judging", "Model and endpoint", "Context memory",
                                                 "Many debates", "Output"], heads
    # each option in the panel it belongs to
    panel = {}
    for line in text.splitlines():
        if line in {h + ":" for h in heads}:
            current = line[:-1]
        found = re.match(r"\s+(--[\w-]+)", line)
        if found:
            panel.setdefault(found.group(1), current)
    assert panel["--mode"] == panel["--orders"] == panel["--flow-ask"] == "Judging"
    assert panel["--base-url"] == panel["--escalate-base-url"] == panel["--cache"] == "Model and endpoint"
    assert panel["--out"] == panel["--json"] == "Output" and panel["--out-dir"] == "Many debates"
    examples = text.split("Examples:")[1].split("\n")
    assert sum(line.strip().startswith("debatrix judge ") for line in examples) == 3


def test_report_of_two_result_files_says_what_a_comparison_reads(tmp_path):
    """`report r.json other.json` names what it compares (two runs' folders) and how to report one result, instead
    of failing to write a page into a file's path."""
    for name in ("r.json", "other.json"):
        (tmp_path / name).write_text("{}")
    res = runner.invoke(app, ["report", str(tmp_path / "r.json"), str(tmp_path / "other.json")])
    assert res.exit_code == 2 and "a comparison reads two benchmark folders" in res.output
    assert "debatrix report" in res.output and sorted(p.name for p in tmp_path.iterdir()) == ["other.json", "r.json"]


def test_ctrl_c_stops_a_judgment_and_keeps_what_was_answered(tmp_path):
    """Ctrl-C during `debatrix judge` stops it as the page's Stop does: it says so, no request follows, and the
    result is written incomplete with the calls already answered (the run is not lost)."""
    import signal
    import time

    with FakeOpenAIServer(latency=0.3) as srv:
        out = tmp_path / "r.json"
        proc = subprocess.Popen(
            [sys.executable, "-c", "import sys; from debatrix.app.cli import main; sys.argv = ['debatrix', "
             "*sys.argv[1:]]; main()", "judge", str(EXAMPLES / "four_day_week.yaml"), "--base-url", srv.base_url,
             "--model", "m", "--out", str(out), "--max-connections", "1"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "COLUMNS": "200"})
        deadline = time.monotonic() + 60
        while len(srv.requests) < 3 and time.monotonic() < deadline:  # a few calls answered, the run still going
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        text, _ = proc.communicate(timeout=60)
    assert "interrupted: stopping" in text and "Traceback" not in text, text[-2000:]
    data = json.loads(out.read_text())
    assert data["status"] == "incomplete" and "interrupted (Ctrl-C)" in data["incomplete_reason"]
    assert 3 <= data["usage"]["llm_calls"] < 15 and proc.returncode == 3


def test_a_bp_summary_at_80_columns_tells_the_four_teams_apart():
    """Four long team names in 80 columns: the table heads them by initials with the names once below, so no
    team is cut to the same "Openin…" as another."""
    with FakeOpenAIServer() as srv:
        res = runner.invoke(app, ["judge", str(EXAMPLES / "bp_short.yaml"), "--base-url", srv.base_url, "--model",
                                  "m", "--quiet", "--mode", "direct"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    head = res.output[:res.output.index("LLM usage")]
    assert "…" not in head and all(f" {p} " in head for p in ("OG", "OO", "CG", "CO"))
    assert "OG = Opening Government" in " ".join(head.split())


def test_the_summary_says_what_its_words_mean_where_they_appear():
    """Under the table, a line for each word a coach would have to guess: why the judge's and the scores' winner
    differ, what "uncalibrated" means; none where the table does not use it."""
    from types import SimpleNamespace as NS

    from debatrix.app.terminal import table_notes as _table_notes

    v = lambda w, s, c: NS(verdict=NS(winner=w, score_winner=s, confidence=c))  # noqa: E731
    notes = " ".join(_table_notes([v("Ana", None, "uncalibrated"), v("Ben", "Ben", "too close to call")]))
    assert "winner (scores) compares" in notes and "uncalibrated:" in notes and "too close to call:" in notes
    assert _table_notes([v("Ana", "Ana", "72%"), NS(verdict=None)]) == []


def _cli(*args: str) -> subprocess.CompletedProcess:
    """The installed command's own entry point (its main wraps what typer prints), as a user runs it."""
    return subprocess.run([sys.executable, "-m", "debatrix.app.cli", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "100"})


def test_a_refused_choice_reads_as_plain_words_from_the_command():
    res = _cli("judge", str(EXAMPLES / "four_day_week.yaml"), "--mode", "flwo")
    assert res.returncode == 2
    assert "'flwo' is not one of" in res.stderr and "Value error" not in res.stderr + res.stdout
    assert "Traceback" not in res.stderr


def test_a_model_server_that_is_down_is_one_line_and_no_empty_table():
    res = _cli("judge", str(EXAMPLES / "four_day_week.yaml"), "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
               "--retries", "0", "--quiet")
    assert res.returncode == 3, res.stdout + res.stderr
    said = res.stdout + res.stderr
    assert "cannot reach the model server" in said and "nothing was answered" in said
    assert "┏" not in said and "winner (judge)" not in said and "Traceback" not in said


def test_bench_calibrate_writes_no_file_when_every_mode_was_skipped(tmp_path):
    """Too few decisive verdicts in every mode: each skip is said, the run fails in one line, and no calibration.json
    (a file of no map would read as a calibration made) is written."""
    import json

    from .test_metrics import _records

    recs = _records([(0.9, 1.0, 1.0), (0.2, 0.0, 1.0), (0.7, 1.0, 0.0)])  # 3 verdicts: below the folds' need
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (tmp_path / "run.json").write_text(json.dumps({"benchmark": "debateart", "settings": {"llm": {}}}))
    res = runner.invoke(app, ["bench", "calibrate", str(tmp_path)])
    assert res.exit_code == 2 and "skipped" in res.output and "no calibration.json written" in res.output
    assert not (tmp_path / "calibration.json").exists() and "Traceback" not in res.output
