"""`debatrix report`: self-contained HTML pages of a judgment and of a benchmark folder."""

from __future__ import annotations

import asyncio
import html
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from debatrix.app.api import ajudge_debate
from debatrix.app.report import result_html, write_report
from debatrix.testing import ScriptedChatModel

from .conftest import EXAMPLES, data_required, settings, winner_record, winner_script


class Cells(HTMLParser):
    """The matrix cells: (dimension, speech number) -> their text."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[tuple[str, int], str] = {}
        self._at: tuple[str, int] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "td" and "data-dimension" in a:
            self._at = (a["data-dimension"], int(a["data-speech"]))
            self.cells[self._at] = ""

    def handle_endtag(self, tag):
        if tag == "td":
            self._at = None

    def handle_data(self, data):
        if self._at is not None:
            self.cells[self._at] += data


def offline(page: str) -> bool:
    """Nothing the page would fetch: no script, stylesheet link, remote source or CSS url()."""
    return not re.search(r"<script[^>]*\bsrc|<link|<iframe|\bsrc=\"(?!data:)|url\(|@import", page, re.I)


async def test_a_debater_with_three_speeches_or_more_gets_a_chart_of_their_scores(uniforms):
    """A chart per debater (speakers alternate: one line over all speeches would join the two), a line per
    dimension, the speeches named on its axis."""
    longer = uniforms.model_copy(update={"id": "longer", "speeches": (*uniforms.speeches, *uniforms.speeches[:2])})
    model = ScriptedChatModel(script=winner_script({"argument": "Maya", "source": "Theo", "language": "Maya"},
                                                   panel="Maya"))
    result = await ajudge_debate(longer, settings("debatrix"), model)
    page = result_html(result)
    assert page.count("<polyline") == 2 * len(result.dimensions)
    assert "<h3>Maya</h3>" in page and ">speech 1<" in page and ">speech 5<" in page


async def test_a_result_page_shows_the_matrix_verdicts_and_usage_and_opens_offline(uniforms, tmp_path):
    model = ScriptedChatModel(script=winner_script({"argument": "Maya", "source": "Theo", "language": "Maya"},
                                                   panel="Maya"))
    result = await ajudge_debate(uniforms, settings("debatrix"), model)
    path = tmp_path / "result.json"
    path.write_text(result.model_dump_json())
    written = write_report(path, tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text()
    assert written == [tmp_path / "report.html"] and offline(page)
    assert html.escape(uniforms.motion) in page and 'id="winner">Winner: Maya' in page
    cells = Cells()
    cells.feed(page)
    for dim in result.dimensions:  # every analysis in its own cell, with the speech's score
        for a, s in zip(dim.analyses, dim.speech_judgments):
            text = cells.cells[(dim.name, a.index + 1)]
            assert a.analysis in html.unescape(text) and f"{s.expected_score or s.score:.3g}" in text
    assert len(cells.cells) == len(uniforms.speeches) * len(result.dimensions)
    # two speeches a debater: a line through two points says no more than the matrix's two scores, so no chart
    assert "<polyline" not in page and "Scores per speech" not in page
    # every speech, collapsed beside its analyses
    assert page.count('<details class="speech">') == len(uniforms.speeches)
    assert html.escape(uniforms.speeches[1].content.splitlines()[0]) in page
    assert f"{result.usage.llm_calls} LLM calls" in page
    for dim in result.dimensions:
        assert f'id="dim-{dim.name}"' in page


async def test_text_from_the_debate_or_the_model_cannot_put_markup_into_the_page(uniforms, tmp_path):
    attack = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    debate = uniforms.model_copy(update={"motion": f"{uniforms.motion} {attack}"})
    model = ScriptedChatModel(script={"analyze_speech": attack, **winner_script({"general": "Maya"})})
    result = await ajudge_debate(debate, settings("chronological"), model)
    page = result_html(result)
    assert "<script" not in page and "<img" not in page and offline(page)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=" in page  # shown as the text it is


def test_report_refuses_what_is_not_a_result_with_a_message(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')

    def run(*args):
        return subprocess.run([sys.executable, "-m", "debatrix.app.cli", "report", *map(str, args)],
                              capture_output=True, text=True, timeout=60)

    proc = run(bad)
    assert proc.returncode == 2 and "not a debatrix result" in proc.stderr and "Traceback" not in proc.stderr
    proc = run(tmp_path / "missing.json")
    assert proc.returncode == 2 and "no such file" in proc.stderr
    proc = run(tmp_path)  # a folder that is not a benchmark run
    assert proc.returncode == 2 and "not a benchmark results folder" in proc.stderr


@data_required
async def test_a_benchmark_folder_page_links_every_item_to_its_own_page(tmp_path):
    from debatrix.benchmarks import make_benchmark
    from debatrix.benchmarks.runner import read_records, run_benchmark

    model = ScriptedChatModel(script={"decide_debate": lambda c: {**{n: 6 for n in c.names}, "winner": c.names[0]}})
    out = tmp_path / "run"
    await run_benchmark(make_benchmark("debateart"), settings("direct"), out, modes=["direct"], limit=2,
                        chat_model=model)
    pages = write_report(out, out / "report.html")
    page = (out / "report.html").read_text()
    assert offline(page.replace('src="data:image/png', ""))
    records = read_records(out / "items.jsonl")
    links = re.findall(r'<a href="([^"]+)">([^<]+)</a>', page)
    assert sorted(name for _, name in links) == sorted(r["item"] for r in records)
    by_item = {r["item"]: r for r in records}
    for href, name in links:
        item_page = (out / href).read_text()
        assert (out / href) in pages and offline(item_page) and '<details class="speech">' in item_page  # direct: the speeches
        assert '../../../report.html">↑ the run' in item_page
        # gold and prediction in names (not the 0 / 0.5 / 1 codes), right or wrong per dimension
        rec = by_item[name]
        gold = rec["gold"]["general"]
        gold_name = "tie" if gold == 0.5 else next(n for n, code in rec["sides"].items() if code == gold)
        pred = rec["verdicts"]["general"]["winner"] or "tie"
        right = "right" if (pred == gold_name) else "wrong"
        assert re.search(rf"<tr><td>general</td><td>{pred}</td><td>{gold_name}</td>\s*<td class=\"{right}\">{right}</td>",
                         item_page), item_page[:3000]
    assert 'id="summary"' in page and "rmse100_general" in page
    # in words, rounded, with its interval or "n/a"; the items say whether their verdict was right
    assert "RMSE×100 (lower is better) · general · direct prediction" in page
    values = re.findall(r'<td data-label="value">(-?[\d.,]+)</td><td data-label="95% interval">(n/a|[-\d.,]+ – [-\d.,]+)'
                        r'</td>', page)
    # 3 significant digits: 86.6025 is shown as 86.6, 0.08333 as 0.0833
    assert values and all("," in v or len(re.sub(r"^-?[0.]*", "", v).replace(".", "")) <= 3 for v, _ in values)
    assert re.search(r'data-right="(right|wrong)"', page)


def test_the_example_result_page_is_written_by_the_cli(tmp_path):
    """The CLI's default output path: RESULT.html beside RESULT.json."""
    import asyncio

    from debatrix import load_debate

    result = asyncio.run(ajudge_debate(load_debate(EXAMPLES / "four_day_week.yaml"), settings("direct"),
                                       ScriptedChatModel()))
    path = tmp_path / "demo.json"
    path.write_text(result.model_dump_json())
    proc = subprocess.run([sys.executable, "-m", "debatrix.app.cli", "report", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert Path(tmp_path / "demo.html").exists() and "report written to" in proc.stderr


def test_reports_are_ordinary_files_not_private_ones(tmp_path):
    """mkstemp's 0600 would keep a coach's report from being shared or served."""
    from debatrix.core.files import write_atomic

    write_atomic(tmp_path / "r.html", "x")
    assert (tmp_path / "r.html").stat().st_mode & 0o777 == 0o644


def test_verdict_wording_never_calls_a_coin_toss_a_win_and_a_score_tie_says_why():
    from types import SimpleNamespace as NS

    from debatrix.app.report import headline, score_line
    from debatrix.core.models import Judgment, Verdict

    def verdict(winner, confidence="", warnings=(), score_winner=None, agreement=""):
        agreeing = {"": None, "2 of 2 orders agree": 2, "1 of 2 orders agrees": 1}[agreement]
        orders = () if agreeing is None else tuple(Judgment(order=("Ana", "Ben"), winner=winner) for _ in range(2))
        return Verdict(dimension="general", comment="", winner=winner, confidence=confidence, warnings=warnings,
                       score_winner=score_winner, orders=orders, orders_agreeing=agreeing)

    assert headline(verdict("Ana", "72%")) == ("Winner: Ana (72%)", True)
    assert headline(verdict("Ana", "72%", agreement="2 of 2 orders agree")) == (
        "Winner: Ana (72%; 2 of 2 orders agree)", True)
    assert headline(verdict(None, agreement="1 of 2 orders agrees")) == ("Tie (1 of 2 orders agrees)", False)
    assert headline(verdict("Ana", "too close to call")) == ("Too close to call, leaning Ana", False)
    assert headline(verdict("Ana", warnings=("the orders were split evenly between Ana, Ben; decided by the first "
                                             "order's answer",))) == ("Too close to call, leaning Ana", False)
    assert headline(verdict(None)) == ("Tie", False)
    close = NS(verdict=verdict("Ana"), tie_margin=3.0, debater_judgments=(NS(debater="Ana", score=8.26),
                                                                        NS(debater="Ben", score=5.42)))
    assert score_line(close) == "By the debaters' scores: tie (Ana 8.26, Ben 5.42: within this dimension's ±3 tie margin)"
    apart = NS(verdict=verdict("Ana", score_winner="Ana"), tie_margin=0.0,
               debater_judgments=(NS(debater="Ana", score=8.0), NS(debater="Ben", score=5.0)))
    assert score_line(apart) == "By the debaters' scores: Ana (Ana 8, Ben 5)"


def test_two_runs_compared_on_one_page_with_the_items_whose_verdict_changed(tmp_path):
    from debatrix.app.cli import app
    from typer.testing import CliRunner

    def run(folder, preds):
        (folder / "items").mkdir(parents=True)
        lines = []
        for i, p in enumerate(preds):
            (folder / "items" / f"d{i}.json").write_text("{}")
            lines.append(json.dumps(winner_record(
                f"d{i}", {d: p for d in ("general", "argument")}, gold={d: 0.0 for d in ("general", "argument")},
                mode="debatrix", result_file=f"items/d{i}.json",
                usage={"prompt_tokens": 100, "completion_tokens": 10, "llm_calls": 4})))
        (folder / "items.jsonl").write_text("\n".join(lines) + "\n")

    run(tmp_path / "before", [1.0, 1.0, 0.0, 0.0])
    run(tmp_path / "after", [0.0, 1.0, 0.0, 1.0])
    res = CliRunner().invoke(app, ["report", str(tmp_path / "before"), str(tmp_path / "after")])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "after" / "compare-with-before.html").read_text()
    assert offline(page) and "after against before" in page and "4 items both runs completed" in page
    assert "RMSE×100 general, DP" in page and "general verdicts right (DP)" in page
    # it leads with the paired table, then what changed; every metric of each run is folded away at the end
    heads = re.findall(r"<h2[^>]*>([^<(]+)", page)
    assert [h.strip() for h in heads[:2]] == ["Paired on the common items", "Items whose verdict changed"], heads
    assert re.search(r"<details><summary><h2[^>]*>Each run's summary", page) or "Each run's summary" not in page
    # each changed item in names (Pro is the gold's winner), linked to both runs' results
    changed = re.findall(r'<tr><td>(d\d)</td><td><a href="([^"]+)">(\w+)</a></td><td><a href="([^"]+)">(\w+)</a></td>'
                         r'<td>(\w+)</td>\s*<td class="(\w*)"', page)
    assert changed == [("d0", "../before/items/d0.json", "Con", "items/d0.json", "Pro", "Pro", "better"),
                       ("d3", "../before/items/d3.json", "Pro", "items/d3.json", "Con", "Pro", "worse")], page[-1500:]
    bad = CliRunner().invoke(app, ["report", str(tmp_path / "before"), str(tmp_path / "nowhere")])
    assert bad.exit_code != 0 and "no such file or folder" in bad.output


def test_two_runs_compared_show_each_items_reasons_side_by_side_and_each_runs_label(tmp_path):
    """The comparison puts every common item's two overall verdicts and the reasons written for them side by side,
    the changed ones first, each under its run; a run's label (``bench --label``, the last one given) heads it."""
    from debatrix.app.report import compare_html
    from debatrix.benchmarks.frames import run_label

    def run(folder, preds, label):
        (folder / "items").mkdir(parents=True)
        lines = []
        for i, p in enumerate(preds):
            reason = f"{folder.name} on d{i}: {'Con' if p else 'Pro'} because <{i}>"  # 1 is con in DebateArt's code
            (folder / "items" / f"d{i}.json").write_text(json.dumps({"general": {"verdict": {"comment": reason}}}))
            lines.append(json.dumps(winner_record(
                f"d{i}", {"general": p}, gold={"general": 0.0}, mode="debatrix", result_file=f"items/d{i}.json")))
        (folder / "items.jsonl").write_text("\n".join(lines) + "\n")
        (folder / "runs.jsonl").write_text("".join(json.dumps(e) + "\n" for e in (
            {"commit": "abc", "label": "first try"}, {"commit": "def"}, {"to_judge": 0, "label": label})))
        return folder

    a, b = run(tmp_path / "before", [1.0, 1.0, 0.0], "baseline"), run(tmp_path / "after", [1.0, 0.0, 0.0], "new prompt")
    assert run_label(a) == "baseline" and run_label(tmp_path) == ""
    page = compare_html(a, b)
    assert "after: new prompt" in page and "before: baseline" in page
    table = page.split('id="reasons"')[1].split("</table>")[0]
    rows = re.findall(r"<tr( class=\"moved\")?><td>(d\d)</td>\s*<td><b>(\w+)</b>: ([^<]*)</td><td><b>(\w+)</b>: ([^<]*)</td>",
                      table)
    assert [(r[1], bool(r[0]), r[2], r[4]) for r in rows] == [("d1", True, "Con", "Pro"), ("d0", False, "Con", "Con"),
                                                             ("d2", False, "Pro", "Pro")], table
    assert rows[0][3] == "before on d1: Con because &lt;1&gt;" and rows[0][5] == "after on d1: Pro because &lt;1&gt;"
    (b / "items" / "d2.json").unlink()  # a result file gone: the verdict still shows, the reason says it is missing
    assert "(no reason stored)" in compare_html(a, b)


async def test_the_call_log_shows_every_call_per_speech_and_dimension(uniforms, tmp_path):
    """By default the result keeps each call's prompt and answer; the report groups them per dimension and
    speech, in the order they were answered. With log_calls off it carries none (only the usage figures)."""
    model = ScriptedChatModel(script=winner_script({"argument": "Maya", "source": "Theo", "language": "Maya"},
                                                   panel="Maya"))
    plain = await ajudge_debate(uniforms, settings("debatrix", log_calls=False), model)
    assert plain.call_log == () and plain.usage.llm_calls > 0
    result = await ajudge_debate(uniforms, settings("debatrix"),
                                 ScriptedChatModel(script=winner_script({"argument": "Maya", "source": "Theo",
                                                                         "language": "Maya"}, panel="Maya")))
    assert len(result.call_log) == result.usage.llm_calls
    second = next(c for c in result.call_log if c.node == "analyze_speech" and c.dimension == "source" and c.index == 1)
    assert second.messages[0][0] == "system" and uniforms.speeches[1].content.splitlines()[0] in second.messages[-1][1]
    assert '"points"' in second.answer  # the answer as the model wrote it
    path = tmp_path / "r.json"
    path.write_text(result.model_dump_json())
    write_report(path, tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    titles = re.findall(r'<details class="calls"><summary>([^<]+)</summary>', page)
    assert titles[:5] == ["argument · speech 1 (Maya) (1 call)", "argument · speech 2 (Theo) (1 call)",
                          "argument · speech 3 (Maya) (1 call)", "argument · speech 4 (Theo) (1 call)",
                          "argument · the debate (4 calls)"]
    assert titles[-1].startswith("panel · the debate")
    assert page.count('<details class="call">') == result.usage.llm_calls and offline(page)
    assert "prompt left out" not in page and "were left out" not in page


@hsettings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=12), st.integers(0, 200))
def test_a_capped_call_log_keeps_every_call_and_the_first_prompts_within_the_cap(sizes, cap):
    """Every call stays (its answer and figures), in order; prompts are kept while their characters fit the cap,
    and from the first call past it on each says its prompt was left out."""
    from debatrix.core.models import CallRecord
    from debatrix.graphs.finish import capped_log

    calls = [CallRecord(node=f"n{k}", messages=(("system", "s" * a), ("human", "h" * b)) if a + b else (),
                        answer=f"a{k}") for k, (a, b) in enumerate(sizes)]
    kept = capped_log(calls, cap)
    assert [(c.node, c.answer) for c in kept] == [(c.node, c.answer) for c in calls]
    assert sum(len(t) for c in kept for _, t in c.messages) <= cap
    first_cut = next((k for k, c in enumerate(kept) if c.prompt_left_out), len(kept))
    assert all(c.messages == calls[k].messages for k, c in enumerate(kept[:first_cut]))
    assert all(c.prompt_left_out == (k >= first_cut and calls[k].messages != ()) and (c.messages == () or k < first_cut)
               for k, c in enumerate(kept))
    if first_cut < len(kept):  # the first call left out did not fit beside those kept before it
        before = sum(len(t) for c in kept[:first_cut] for _, t in c.messages)
        assert before + sum(len(t) for _, t in calls[first_cut].messages) > cap


async def test_a_long_debates_call_log_stops_keeping_prompts_at_its_cap_and_the_report_says_so(uniforms, tmp_path):
    model = ScriptedChatModel(script=winner_script({"argument": "Maya", "source": "Theo", "language": "Maya"},
                                                   panel="Maya"))
    result = await ajudge_debate(uniforms, settings("debatrix", call_log_chars=20_000), model)
    cut = [c for c in result.call_log if c.prompt_left_out]
    assert len(result.call_log) == result.usage.llm_calls and 0 < len(cut) < len(result.call_log)
    assert sum(len(t) for c in result.call_log for _, t in c.messages) <= 20_000 and all(c.answer for c in cut)
    path = tmp_path / "r.json"
    path.write_text(result.model_dump_json())
    write_report(path, tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    assert f"The prompts of the last {len(cut)} calls were left out" in " ".join(page.split())
    assert page.count("prompt left out (the call log") == len(cut)


def test_the_report_of_a_whole_debate_mode_carries_every_speech(tmp_path):
    """A mode that reads the debate whole (direct) has no analysis per speech; its report still shows each
    speech, by its speaker, to read beside the verdict."""
    from debatrix.app.api import judge_debate
    from debatrix.app.report import result_html
    from debatrix.core.loader import load_debate
    from debatrix.testing import FakeOpenAIServer

    from .conftest import EXAMPLES, settings

    debate = load_debate(EXAMPLES / "school_uniforms.yaml")
    with FakeOpenAIServer() as srv:
        result = judge_debate(debate, settings("direct", base_url=srv.base_url, model="m"))
    html = result_html(result)
    assert html.count('<details class="speech">') == len(debate.speeches)
    for s in debate.speeches:
        assert s.content.split(".")[0][:40].replace("'", "&#39;") in html


def _run_folder(path, *, orders, value, modes=("direct",)):
    import json

    path.mkdir()
    recs = [winner_record(f"i{k}", {"general": float(k % 2)}, gold={"general": 1.0}, benchmark="contrast", mode=m,
                          usage={"llm_calls": 4, "prompt_tokens": 100})
            for m in modes for k in range(3)]
    (path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (path / "summary.csv").write_text("mode,metric,subset,value,ci_low,ci_high,repeats,n\n"
                                      + "".join(f"{m},intact_dp_all,all,{value},nan,nan,1,3\n" for m in modes))
    (path / "run.json").write_text(json.dumps({"benchmark": "contrast", "settings": {
        "orders": orders, "llm": {"base_url": f"http://user:secret@127.0.0.1:{9 + orders}/v1", "model": "m"}}}))
    return path


def test_two_runs_compare_by_their_settings_and_summaries_in_a_chosen_mode(tmp_path):
    """`report A B` on runs without a gold verdict per item (the known answers) compares their summaries, says
    which settings differ (orders 2 against 1; no credential shown), and `--mode` picks among the shared modes."""
    from typer.testing import CliRunner

    from debatrix.app.cli import app

    a = _run_folder(tmp_path / "a", orders=2, value=0.5, modes=("direct", "flow"))
    b = _run_folder(tmp_path / "b", orders=1, value=0.75, modes=("direct", "flow"))
    out = tmp_path / "cmp.html"
    res = CliRunner().invoke(app, ["report", str(a), str(b), "--out", str(out), "--mode", "flow"])
    assert res.exit_code == 0, res.output
    page = out.read_text()
    assert "mode flow" in page and "<td>orders</td><td>2</td><td>1</td>" in page and "secret" not in page
    assert "intact_dp_all" in page and "+0.25" in page
    res = CliRunner().invoke(app, ["report", str(a), str(b), "--out", str(out), "--mode", "debatrix"])
    assert res.exit_code == 2 and "both runs judged direct, flow; not debatrix" in res.output


def test_a_benchmark_report_leads_with_its_headline_as_the_papers_table(tmp_path):
    """DebateArt's headline is Table 5's shape: a row per dimension and SC/DP, a column per mode, each RMSE×100 with
    its interval; every other metric folds below it."""
    import json

    from debatrix.app.report import write_report

    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "items.jsonl").write_text(json.dumps(winner_record("i", {}, gold={}, mode="flow")) + "\n")
    rows = ["mode,metric,subset,value,ci_low,ci_high,repeats,n"]
    for mode, base in (("flow", 50.0), ("direct", 61.2)):
        rows += [f"{mode},rmse100_general_dp,all,{base},{base - 10},{base + 10},1,10",
                 f"{mode},rmse100_general_dp,long,{base},nan,nan,1,5", f"{mode},completion_rate,all,1.0,1,1,1,10"]
    (folder / "summary.csv").write_text("\n".join(rows) + "\n")
    (folder / "run.json").write_text(json.dumps({"benchmark": "debateart", "settings": {}}))
    write_report(folder, folder / "report.html")
    page = (folder / "report.html").read_text()
    lead = page[page.index('id="headline"'):page.index("</table>", page.index('id="headline"'))]
    assert "<th>flow</th><th>direct</th>" in lead and "rmse100_general_dp" in lead and "[40" in lead
    # a row reads as the paper's does; what every row shares is said once, above the table
    assert "<td>general · direct prediction <span" in lead and "RMSE×100" not in lead
    assert "every one RMSE×100 (lower is better)" in page
    assert "completion_rate" not in lead and page.index('id="headline"') < page.index("<details><summary><h2")


def test_a_headline_whose_rows_share_no_unit_is_written_too(tmp_path):
    """NYU's headline (right, first named, Brier) has no unit every row shares: the page is written, one column a
    mode, the paired difference beside them (it raised an undefined "unit" before)."""
    import json

    from debatrix.app.report import write_report

    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "items.jsonl").write_text(json.dumps(winner_record("i", {}, gold={}, mode="flow")) + "\n")
    rows = ["mode,metric,subset,value,ci_low,ci_high,repeats,n"]
    for mode, right in (("flow", 0.4), ("direct", 0.45)):
        rows += [f"{mode},right,all,{right},{right - 0.2},{right + 0.2},1,20", f"{mode},first_named,all,0.3,0.1,0.5,1,20",
                 f"{mode},brier,all,0.26,0.22,0.3,1,20"]
    (folder / "summary.csv").write_text("\n".join(rows) + "\n")
    (folder / "run.json").write_text(json.dumps({"benchmark": "nyu_debate", "settings": {}}))
    write_report(folder, folder / "report.html")
    page = (folder / "report.html").read_text()
    lead = page[page.index('id="headline"'):page.index("</table>", page.index('id="headline"'))]
    assert "<th>flow</th><th>direct</th>" in lead and "0.45 [0.25" in lead and "every one" not in page


@data_required
@pytest.mark.browser
async def test_a_debateart_report_in_a_real_browser_leads_with_table_5_and_its_items_show_gold_in_names(tmp_path):
    """`bench debateart --modes debatrix,direct` against the fake endpoint, then `debatrix report` on the folder,
    opened in headless chromium at a desktop's width and a phone's (390 px): the first table is the headline in
    Table 5's shape (a column per mode), nothing is wider than the phone, and an item's page shows the gold and the
    judge's winner in names, right or wrong, and links back. Screenshots kept in tests/artifacts/."""
    import os
    import shutil

    from debatrix.benchmarks import make_benchmark
    from debatrix.benchmarks.runner import read_records, run_benchmark
    from debatrix.testing import FakeOpenAIServer

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(chromium):
        pytest.skip("no chromium: install Debian's package (apt-get install chromium; make test does it as root)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")
    out = tmp_path / "da"
    with FakeOpenAIServer() as srv:
        await run_benchmark(make_benchmark("debateart"), settings("direct", orders=1, base_url=srv.base_url,
                                                                  model="fake"),
                            out, modes=["debatrix", "direct"], limit=2)
    write_report(out, out / "report.html")
    records = read_records(out / "items.jsonl")
    names = {name for r in records for name in r["sides"]}
    artifacts = Path(__file__).resolve().parent / "artifacts"
    artifacts.mkdir(exist_ok=True)

    def check(width: str, view: dict) -> None:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
            try:
                page = browser.new_page(viewport=view)
                page.goto((out / "report.html").as_uri())
                assert page.evaluate("document.querySelector('table').closest('[id=headline]') !== null")
                heads = page.eval_on_selector_all("#headline th", "els => els.map(e => e.textContent.trim())")
                assert "debatrix" in heads and "direct" in heads, heads
                assert "general · direct prediction" in page.inner_text("#headline")
                assert page.evaluate("document.documentElement.scrollWidth") <= view["width"] + 1
                assert page.evaluate("document.getElementById('headline').getBoundingClientRect().right") \
                    <= view["width"]  # the whole table on screen, its last column too
                page.screenshot(path=str(artifacts / f"bench-report-{width}.png"), full_page=False)
                link = page.locator("a", has_text=records[0]["item"]).first
                link.click()
                page.wait_for_selector("#gold")
                gold = page.inner_text("#gold")
                assert "general" in gold and any(n in gold for n in names | {"tie"}) and re.search("right|wrong", gold)
                assert not re.search(r"\b0\.5\b|\bdp\b", gold)  # names, not the gold's codes
                assert page.evaluate("document.documentElement.scrollWidth") <= view["width"] + 1
                page.screenshot(path=str(artifacts / f"bench-item-{width}.png"), full_page=False)
                page.click("text=↑ the run's report")
                page.wait_for_selector("#headline")
            finally:
                browser.close()

    for width, view in (("desktop", {"width": 1400, "height": 900}), ("phone", {"width": 390, "height": 844})):
        await asyncio.to_thread(check, width, view)


@pytest.mark.parametrize(("winners", "panel", "sums", "against"), [
    ({"argument": "Maya", "source": "Theo", "language": "Theo"}, "Maya", "Theo 4, Maya 3 of 7", "Theo"),
    ({"argument": "Maya", "source": "Theo", "language": "Theo"}, "Theo", "Theo 4, Maya 3 of 7", None),
    ({"argument": "Theo", "source": "tie", "language": "Maya"}, "Maya", "Theo 4, Maya 3 of 7", "Theo"),
])
async def test_the_panels_verdict_says_how_the_dimensions_add_up_by_weight(uniforms, winners, panel, sums, against):
    """Beside a panel's verdict: each dimension's weight and winner, their sums (a tie splits its weight), and
    where the panel named another winner than the weightiest sum, a sentence saying why (in the summary, the
    report and the page's done event)."""
    from rich.console import Console

    from debatrix.app.terminal import print_summary
    from debatrix.app.ui import summary

    model = ScriptedChatModel(script=winner_script(winners, panel=panel))
    result = await ajudge_debate(uniforms, settings("debatrix", orders=1), model)
    assert result.winner == panel and sums in result.weighing
    assert ("The panel named" in result.weighing) == (against is not None)
    if against:
        assert f"The panel named {panel}, not {against}" in result.weighing
    console = Console(record=True, width=200)
    print_summary(result, console)
    assert result.weighing in console.export_text()
    assert result.weighing in html.unescape(result_html(result)) and summary(result)["weighing"] == result.weighing


async def test_a_verdict_that_is_its_own_weighted_sum_or_a_single_dimension_has_no_weighing_line(uniforms):
    direct = await ajudge_debate(uniforms, settings("direct", orders=1),
                                 ScriptedChatModel(script=winner_script({"general": "Maya"})))
    assert direct.weighing == ""


def test_comparing_folders_of_an_older_record_format_says_how_to_update_them(tmp_path):
    """Folders written before the records kept the judge's verdicts are not guessed at: one line says that the same
    bench command brings them up to date from their cache, with no traceback."""
    from typer.testing import CliRunner

    from debatrix.app.cli import app

    for name in ("a", "b"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "items.jsonl").write_text(json.dumps(
            {"item": "d0", "mode": "direct", "repeat": 0, "status": "complete", "pred": {"general": {"dp": 0.0}},
             "gold": {"general": 0.0}, "usage": {}}) + "\n")
    res = CliRunner().invoke(app, ["report", str(tmp_path / "a"), str(tmp_path / "b")])
    assert res.exit_code == 2 and "run the same `debatrix bench` command on this folder again" in res.output
    assert "Traceback" not in res.output and not (tmp_path / "b" / "compare-with-a.html").exists()


async def test_the_flows_calls_are_grouped_by_speech_in_the_call_log(uniforms):
    """The flow's decisions belong to no one dimension: the call log groups them speech by speech ("the flow ·
    speech 2 (Theo)"), every call in the group of the speech it asked about, none under the panel."""
    from debatrix.app.report import call_groups

    run = settings("flow").model_copy(update={"llm": settings("flow").llm.model_copy(update={"log_calls": True})})
    result = await ajudge_debate(uniforms, run, ScriptedChatModel())
    groups = call_groups(result)
    speakers = [s.speaker for s in uniforms.speeches]
    assert [g["title"] for g in groups] == [f"the flow · speech {i + 1} ({who})" for i, who in enumerate(speakers)]
    assert sum(len(g["calls"]) for g in groups) == result.usage.llm_calls
    for i, g in enumerate(groups):
        assert all(c.index == i for c in g["calls"])
    assert "panel · speech" not in result_html(result)


async def test_the_flows_overall_probabilities_are_said_to_be_computed_not_the_models_token_probabilities(uniforms):
    """In the flow no call names the overall winner: its probabilities are the judged dimensions' weighed, and the
    report says so (a prose mode's overall verdict is the model's own token probabilities, and says that)."""
    result = await ajudge_debate(uniforms, settings("flow"), ScriptedChatModel())
    names = [d.name for d in uniforms.debaters]
    given = {names[0]: 0.7, names[1]: 0.3}

    def with_probabilities(r):  # the overall verdict with probabilities, wherever the result keeps it
        def given_to(d):
            return d.model_copy(update={"verdict": d.verdict.model_copy(
                update={"probabilities": given, "method": "logprobs"})}) if d.name == "general" else d
        return r.model_copy(update={"general": given_to(r.general),
                                    "dimensions": tuple(given_to(d) for d in r.dimensions)})

    html = result_html(with_probabilities(result))
    assert "the judged dimensions' probabilities, weighed" in html and "the model's token probabilities" not in html
    prose = await ajudge_debate(uniforms, settings("direct"), ScriptedChatModel())
    assert "the model's token probabilities" in result_html(with_probabilities(prose))
