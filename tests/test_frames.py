"""Results as data frames, and the index of every run under a results root: constructed run folders (their
records written as the runner writes them) and real `judge --out-dir` runs on the fake server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings as hsettings, strategies as st
from typer.testing import CliRunner

pd = pytest.importorskip("pandas", reason="pip install 'debatrix[bench]' (make test does)")

from debatrix.app.cli import app  # noqa: E402
from debatrix.benchmarks.frames import ITEM_COLUMNS, RUN_COLUMNS, items_frame, run_folders, runs_frame  # noqa: E402
from debatrix.testing import FakeOpenAIServer  # noqa: E402

from .conftest import EXAMPLES  # noqa: E402

SIDES = {"Ana": 0.0, "Ben": 1.0}


def _record(item: str, mode: str, general: str | None, gold: float, argument: str | None, judged: bool) -> dict:
    def verdict(dim: str, winner: str | None, made: bool = True) -> dict:
        p = {"Ana": 0.7, "Ben": 0.3} if winner == "Ana" else {"Ana": 0.3, "Ben": 0.7} if winner == "Ben" else None
        return {"dimension": dim, "winner": winner if made else None, "probabilities": p if made else None,
                "not_judged": "" if made else "the model cannot tell here"}
    return {"benchmark": "debateart", "mode": mode, "repeat": 0, "item": item, "status": "complete",
            "usage": {"llm_calls": 3, "prompt_tokens": 100, "completion_tokens": 3, "seconds": 1.5},
            "verdicts": {"general": verdict("general", general), "argument": verdict("argument", argument, judged)},
            "sides": SIDES, "tie": 0.5, "gold": {"general": gold, "argument": gold}}


def _run(folder: Path, records: list[dict], summary: str = "") -> None:
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"benchmark": "debateart", "settings": {
        "llm": {"backend": "local", "local_model": "qwen2.5-coder-1.5b", "model": "gpt-4o-mini"}}}))
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    if summary:
        (folder / "summary.csv").write_text("mode,metric,subset,value,ci_low,ci_high,repeats,n\n" + summary)


verdicts = st.lists(st.tuples(st.sampled_from(["Ana", "Ben", None]), st.sampled_from([0.0, 1.0, 0.5]),
                              st.sampled_from(["Ana", "Ben", None]), st.booleans()), min_size=1, max_size=12)


@hsettings(max_examples=25, deadline=None)
@given(verdicts)
def test_a_row_per_item_and_dimension_and_right_only_where_a_verdict_met_a_gold(tmp_path_factory, drawn):
    root = tmp_path_factory.mktemp("root")
    records = [_record(f"d{k}", "flow", g, gold, a, made) for k, (g, gold, a, made) in enumerate(drawn)]
    _run(root / "one", records)
    items = items_frame(root)
    assert list(items.columns) == list(ITEM_COLUMNS) and len(items) == 2 * len(drawn)
    general = items[items.dimension == "general"].set_index("item")
    argument = items[items.dimension == "argument"].set_index("item")
    for k, (g, gold, a, made) in enumerate(drawn):
        code = 0.5 if g is None else SIDES[g]
        assert general.loc[f"d{k}", "right"] == (code == gold)  # a tie is the gold's tie code
        assert general.loc[f"d{k}", "judged"] == code and general.loc[f"d{k}", "gold"] == gold
        if made:
            assert argument.loc[f"d{k}", "right"] == ((0.5 if a is None else SIDES[a]) == gold)
        else:  # no verdict made: nothing scored, no winner
            assert pd.isna(argument.loc[f"d{k}", "right"]) and pd.isna(argument.loc[f"d{k}", "winner"])
    share = general.right.mean()
    assert share == sum((0.5 if g is None else SIDES[g]) == gold for g, gold, _, _ in drawn) / len(drawn)


def test_a_row_per_run_and_mode_with_its_headline_and_cost(tmp_path):
    _run(tmp_path / "a", [_record("d1", "flow", "Ana", 0.0, "Ana", True), _record("d1", "direct", "Ben", 0.0, None, True),
                          _record("d2", "flow", "Ben", 0.0, "Ana", True)],
         "flow,rmse100_argument_sc,all,41.5,30,50,1,2\ndirect,rmse100_general_sc,all,70,60,80,1,1\n")
    _run(tmp_path / "deeper" / "b", [_record("d1", "flow", "Ana", 0.0, "Ana", True)])
    # run a was resumed once on other code (and once on the same): each commit named once, oldest first
    (tmp_path / "a" / "runs.jsonl").write_text("".join(json.dumps({"commit": c}) + "\n"
                                                       for c in ("1111111aaa", "2222222bbb-dirty", "1111111aaa")))
    (tmp_path / "not_a_run").mkdir()
    assert [p.relative_to(tmp_path).as_posix() for p in run_folders(tmp_path)] == ["a", "deeper/b"]
    runs = runs_frame(tmp_path)
    assert list(runs.columns) == list(RUN_COLUMNS)
    rows = {(r.run, r.mode): r for r in runs.itertuples()}
    assert set(rows) == {("a", "flow"), ("a", "direct"), ("deeper/b", "flow")}
    flow = rows[("a", "flow")]
    assert flow.items == 2 and flow.llm_calls == 6 and flow.seconds == 3.0 and flow.model == "qwen2.5-coder-1.5b"
    assert flow.endpoint == "embedded"
    assert flow.headline == "rmse100_argument_sc" and flow.headline_value == 41.5
    assert rows[("a", "direct")].headline == "rmse100_general_sc" and rows[("a", "direct")].headline_value == 70
    assert rows[("deeper/b", "flow")].headline == ""  # no summary written: no figure made up
    assert flow.commit == "1111111aaa, 2222222bbb-dirty" and rows[("deeper/b", "flow")].commit == ""  # none recorded
    assert runs_frame(tmp_path / "not_a_run").empty and items_frame(tmp_path / "not_a_run").empty


def test_report_of_a_results_root_indexes_every_run_and_item_pages_link_their_neighbours(tmp_path):
    runner = CliRunner()
    files = [str(EXAMPLES / n) for n in ("school_uniforms.yaml", "four_day_week.yaml")]
    with FakeOpenAIServer() as server:
        for mode in ("flow", "direct"):
            res = runner.invoke(app, ["judge", *files, "--base-url", server.base_url, "--model", "fake-model",
                                      "--mode", mode, "--out-dir", str(tmp_path / "league" / mode)])
            assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["report", str(tmp_path / "league")])
    assert res.exit_code == 0, res.output
    index = (tmp_path / "league" / "index.html").read_text()
    assert index.count('name="pick"') == 2 and "fake-model" in index
    for mode in ("flow", "direct"):
        assert f'href="{mode}/report.html"' in index and (tmp_path / "league" / mode / "report.html").exists()
    # item pages: each links the run's report and its neighbours, and every link resolves
    pages = sorted((tmp_path / "league" / "flow" / "items").rglob("*.html"))
    assert len(pages) == 2
    for page in pages:
        html = page.read_text()
        links = re.findall(r'rel="(prev|next)" href="([^"]+)"', html)
        assert len(links) == 1 and all((page.parent / href).resolve() in pages for _, href in links)


def test_a_run_records_the_commit_of_the_code_that_ran_and_whether_it_was_changed(tmp_path):
    import subprocess

    from debatrix.benchmarks.runner import source_commit

    assert source_commit(tmp_path) is None  # not a checkout (an installed wheel): nothing claimed
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "code.py").write_text("x = 1\n")
    subprocess.run([*git, "-C", str(tmp_path), "add", "code.py"], check=True)
    subprocess.run([*git, "-C", str(tmp_path), "commit", "-qm", "one"], check=True)
    head = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert source_commit(tmp_path) == head
    (tmp_path / "notes.txt").write_text("untracked: not the code that ran")
    assert source_commit(tmp_path) == head
    (tmp_path / "code.py").write_text("x = 2\n")
    assert source_commit(tmp_path) == head + "-dirty"


def test_the_run_index_names_each_runs_endpoint_and_label_and_says_its_time_in_units_that_read(tmp_path):
    """An endpoint run's row names the endpoint (without credentials), a labelled run its label (escaped), and a
    28 s run reads "28 s", not 0.00 hours."""
    from debatrix.app.report import duration_words, write_index

    _run(tmp_path / "local", [_record("d1", "flow", "Ana", 0.0, "Ana", True)])
    _run(tmp_path / "hosted", [_record("d1", "flow", "Ana", 0.0, "Ana", True)])
    (tmp_path / "hosted" / "run.json").write_text(json.dumps({"benchmark": "debateart", "settings": {"llm": {
        "backend": "openai", "base_url": "https://u:pw@api.example.test/v1", "model": "big"}}}))
    (tmp_path / "hosted" / "runs.jsonl").write_text(json.dumps({"commit": "abc", "label": "big <model>"}) + "\n")
    rows = {r.run: r for r in runs_frame(tmp_path).itertuples()}
    assert rows["hosted"].endpoint == "https://***@api.example.test/v1" and rows["local"].endpoint == "embedded"
    assert (rows["hosted"].label, rows["local"].label) == ("big <model>", "")
    assert [duration_words(s) for s in (28, 270, 3 * 3600 + 1800)] == ["28 s", "4.5 min", "3.5 h"]
    page = write_index(tmp_path, tmp_path / "index.html")[0].read_text()
    assert "https://***@api.example.test/v1" in page and ":pw@" not in page
    assert page.count('<span class="label">') == 1 and '<span class="label">big &lt;model&gt;</span>' in page
    assert re.search(r'data-label="model time" class="num">2 s<', page) and "0.00" not in page
