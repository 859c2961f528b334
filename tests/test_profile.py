"""Judge profiles: what a model was measured to see is that model's data, read from its profile, never written into
the flow's code; a profile that cannot be trusted (another model, other prompts, a broken file) is refused or said
stale before any call."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from debatrix.core.errors import ConfigurationError
from debatrix.core.profile import (DecisionProfile, Interval, JudgeProfile, ModelIdentity, load, prompts_sha256,
                                   resolve, shipped)

ROOT = Path(__file__).resolve().parent.parent
#: the mechanism's own round constants (an even chance, a share of missing decisions, a floor for a log, the normal
#: quantile of a 95% interval, the Bayes factor a word may rest on, Jeffreys' convention): anything else with decimals
#: in the flow's code would be a figure measured on some model
MECHANISM = {0.0, 0.5, 1.0, 2.0, 0.2, 1e-9, 0.005, 1e-6, 1.96, 3.0}


def _flow_code() -> list[Path]:
    return [*sorted((ROOT / "debatrix/core/flow").glob("*.py")), ROOT / "debatrix/core/profile.py",
            ROOT / "graphs/flow_nodes.py"]


@pytest.mark.parametrize("path", _flow_code(), ids=lambda p: p.name)
def test_no_figure_of_one_models_measurement_is_written_into_the_flows_code(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    floats = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, float)}
    assert floats <= MECHANISM, f"{path.name}: constants {sorted(floats - MECHANISM)} look measured"
    blind = [n for n in ast.walk(tree) if isinstance(n, ast.keyword) and n.arg == "blind"
             and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str) and n.value.value]
    assert not blind, f"{path.name}: a measure declared blind in code (line {blind[0].lineno})"
    methods = {id(f) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for f in c.body}
    # a function, not a type's own accessor (a sheet cell's ``counted``, what its answer counts toward its row)
    names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and id(n) not in methods}
    assert not names & {"baseline", "ranked", "counted"}, "a correction keyed on one model's habits"


def _profile(model="m", **states) -> JudgeProfile:
    decisions = {k: DecisionProfile(kind=k, question=k, gold="g", items=items, debates=debates,
                                    auc=Interval(value=v, low=lo, high=v + 0.05))
                 for k, (v, lo, items, debates) in states.items()}
    return JudgeProfile(model=ModelIdentity(name=model), prompts_sha256=prompts_sha256(), measured="2026-12-02",
                        decisions=decisions)


def test_a_decision_carries_is_blind_or_has_not_enough_data_by_its_interval_and_its_counts():
    p = _profile(argues=(0.7, 0.62, 200, 24), clear=(0.52, 0.46, 200, 24), evidence=(0.8, 0.7, 90, 24),
                 answers=(0.8, 0.7, 300, 12))
    assert [p.state(k) for k in ("argues", "clear", "evidence", "answers", "other")] == [
        "carries", "blind", "not enough data", "not enough data", "not enough data"]
    sees = p.sees()
    assert "sees argues (0.70 [0.62, 0.75])" in sees and "blind to clear" in sees and "not enough data on" in sees


def test_a_profile_file_is_read_refused_in_one_line_or_said_stale(tmp_path):
    good = tmp_path / "m.json"
    good.write_text(_profile().model_dump_json())
    assert load(good).model.name == "m"
    use = resolve(str(good), "m", "openai-compatible")
    assert use.profiled and use.note.startswith("m (profile of 2026-12-02")
    for text, said in (("{", "not a profile"), ("[1]", "no 'model'"), (json.dumps({"model": {"name": "m"}}),
                                                                       "schema None")):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        with pytest.raises(ConfigurationError, match=said):
            load(bad)
    with pytest.raises(ConfigurationError, match="no such file"):
        load(tmp_path / "missing.json")
    other = resolve(str(good), "another-model", "openai-compatible")
    assert not other.profiled and "stale" in other.note and "measured for m" in other.note
    old = tmp_path / "old.json"
    old.write_text(_profile().model_copy(update={"prompts_sha256": "0" * 64}).model_dump_json())
    stale = resolve(str(old), "m", "openai-compatible")
    assert not stale.profiled and "measured with other prompts" in stale.note
    assert "debatrix profile --base-url URL --model m" in stale.note
    none = resolve("none", "m", "local")
    assert not none.profiled and "debatrix profile --backend local --local-model m" in none.note


def test_every_shipped_profile_was_measured_with_todays_prompts_and_names_its_commit():
    """A shipped profile goes stale (and is not used) when a prompt it was measured with changes: measure it
    again with `debatrix profile` before shipping the change."""
    for name, prof in shipped().items():
        assert prof.prompts_sha256 == prompts_sha256(), f"{name}: measured with other prompts"
        assert prof.commit and prof.command.startswith("debatrix profile"), name
        assert all(d.items for d in prof.decisions.values()), name


# ------------------------------------------------------------------ `debatrix profile` on the fake server's models

from typer.testing import CliRunner  # noqa: E402

from .conftest import EXAMPLES, data_required  # noqa: E402


def _profile_cli(base_url: str, model: str, out: Path, *extra: str):
    from debatrix.app.cli import app

    # 60 debates: IBM's passage-level claim matches are hard for a lexical reader (ROC AUC about 0.6), and 20
    # speeches' passages give too wide an interval to tell that from a coin
    return CliRunner().invoke(app, ["profile", "--base-url", base_url, "--model", model, "--out", str(out),
                                    "--debates", "60", "--per-debate", "8", "--mirror", "2", *extra])


@data_required
def test_profiling_a_model_that_reads_and_one_that_does_not_gives_the_table_each_should(tmp_path):
    """The reading test model (it answers from what the text shows) is profiled seeing what its text shows; the
    hash one (its answers ignore the text) blind on every decision. The command says its cost before the first
    call, refuses a budget it would pass before any call, and a rerun pays for nothing (its answer cache)."""
    from debatrix.testing import FakeOpenAIServer

    with FakeOpenAIServer(reading=True, exact_usage=False) as reader, FakeOpenAIServer(exact_usage=False) as blind:
        over = _profile_cli(reader.base_url, "reading-model", tmp_path / "r.json", "--max-calls", "10")
        assert over.exit_code == 2 and "over --max-calls 10" in over.output and not reader.requests
        res = _profile_cli(reader.base_url, "reading-model", tmp_path / "r.json")
        assert res.exit_code == 0, res.output
        planned = int(res.output.split(": ", 1)[1].split(" calls")[0])
        assert planned == len(reader.requests) >= 4 * 150
        sent = len(reader.requests)
        again = _profile_cli(reader.base_url, "reading-model", tmp_path / "r.json")
        assert again.exit_code == 0 and len(reader.requests) == sent  # every answer from the cache
        res = _profile_cli(blind.base_url, "blind-model", tmp_path / "b.json")
        assert res.exit_code == 0, res.output
    seeing, blind_prof = load(tmp_path / "r.json"), load(tmp_path / "b.json")
    for kind in ("argues", "evidence", "clear", "answers"):
        assert seeing.state(kind) == "carries", (kind, seeing.decisions[kind].auc)
        assert seeing.decisions[kind].items >= 150 and seeing.decisions[kind].debates >= 20
    assert seeing.decisions["evidence"].auc.low > 0.8 and seeing.decisions["clear"].auc.low > 0.8
    assert all(blind_prof.state(k) != "carries" for k in blind_prof.decisions)
    assert seeing.decisions["argues"].place is not None and seeing.decisions["argues"].place.pairs >= 20
    assert seeing.model.endpoint == "openai-compatible" and seeing.prompts_sha256 == prompts_sha256()


@data_required
def test_the_same_debate_is_judged_dimension_by_dimension_as_each_models_profile_says(tmp_path):
    """Under the reading model's profile the dimensions resting on decisions it sees are judged and the rest say
    whose figure leaves them unjudged; under the blind model's profile no dimension is judged and no winner named,
    with no call paid for."""
    from debatrix import JudgeSettings, LLMSettings, MemorySettings, load_debate
    from debatrix.app.api import ajudge_debate
    from debatrix.core.flow import blind_reason
    from debatrix.testing import FakeOpenAIServer

    import asyncio

    debate = load_debate(EXAMPLES / "four_day_week.yaml")
    for model, reading in (("reading-model", True), ("blind-model", False)):
        with FakeOpenAIServer(reading=reading, exact_usage=False) as srv:
            assert _profile_cli(srv.base_url, model, tmp_path / f"{model}.json").exit_code == 0
            before = len(srv.requests)
            run = JudgeSettings(mode="flow", memory=MemorySettings(embedding="hash"),
                                profile=str(tmp_path / f"{model}.json"),
                                llm=LLMSettings(base_url=srv.base_url, model=model, max_retries=0))
            result = asyncio.run(ajudge_debate(debate, run))
            calls = len(srv.requests) - before
        prof = load(tmp_path / f"{model}.json")
        assert result.status.value == "complete", result.incomplete_reason
        for d in result.dimensions:
            why = blind_reason(d.ledger.measure, prof)
            assert bool(d.verdict.not_judged) == bool(why), (model, d.name, d.verdict.not_judged)
            assert d.verdict.not_judged == why
        if not reading:
            assert calls == 0 and result.winner is None and result.general.verdict.not_judged
        else:
            assert any(not d.verdict.not_judged for d in result.dimensions) and calls > 0


def test_the_nyu_adapter_scores_the_right_debater_the_first_named_and_the_shown_probability():
    """Constructed records (no model): right counts a tie half, the first debater's share is read beside the
    gold's, and the Brier score is of the probability shown for the right debater (50% where none was shown)."""
    from debatrix.benchmarks.nyu import NyuDebate

    def rec(winner, named, p):
        other = "Debater B" if named == "Debater A" else "Debater A"
        v = {"winner": named, "probabilities": None if p is None else {named: p, other: 1 - p}, "not_judged": ""}
        return {"status": "complete", "winner": winner, "verdicts": {"general": v}}

    records = [rec("Debater A", "Debater A", 0.8), rec("Debater B", "Debater A", 0.6),
               rec("Debater B", None, None), {"status": "incomplete"}]
    rows = {r.metric: r for r in NyuDebate.__new__(NyuDebate).metrics(records)}
    assert rows["completion_rate"].value == 0.75
    assert rows["right"].value == pytest.approx((1 + 0 + 0.5) / 3)
    assert rows["first_named"].value == pytest.approx((1 + 1 + 0.5) / 3)
    assert rows["gold_first"].value == pytest.approx(1 / 3)
    assert rows["brier"].value == pytest.approx(((1 - 0.8) ** 2 + (1 - 0.4) ** 2 + 0.25) / 3)


@data_required
def test_an_nyu_debates_first_round_openings_are_not_asked_about_each_other():
    import asyncio

    from debatrix import JudgeSettings, MemorySettings
    from debatrix.app.api import ajudge_debate
    from debatrix.benchmarks.nyu import NyuDebate
    from debatrix.testing import ScriptedChatModel

    from .conftest import DATA

    bench = NyuDebate(DATA)
    item = next(it for it in bench.load() if it.id == "nyu_a-pail-of-air-0")
    debate = bench.debate(item)
    model = ScriptedChatModel()
    result = asyncio.run(ajudge_debate(debate, JudgeSettings(mode="flow", memory=MemorySettings(embedding="hash")),
                                       model))
    assert result.status.value == "complete", result.incomplete_reason
    second = next(f for f in result.flow if f.index == 1)
    assert second.lines == ()  # Debater B's opening asked nothing about Debater A's
    later = [x for f in result.flow if f.index >= 2 for x in f.lines]
    assert later  # the sequential rounds answer the openings
    # the sheet, the report and the page show the openings as one round: one header over both columns
    from debatrix.app.report import flow_sheet, result_html
    from debatrix.app.ui import page_sheet

    assert result.simultaneous == ((1, 2),)
    rounds = flow_sheet(result)["rounds"]
    assert rounds[0] == {"span": 2, "label": "1–2 · written together"}
    assert sum(r["span"] for r in rounds) == len(result.speeches) and all(r["span"] == 1 for r in rounds[1:])
    assert page_sheet(result)["rounds"] == rounds
    assert '<th colspan="2">1–2 · written together</th>' in result_html(result)


def _bench_run(folder: Path, model: str, rows: list[tuple[str, str | None, str, str]]) -> Path:
    """A benchmark run folder as `debatrix bench` writes it: per debate (id, the winner the judge named or None, the
    gold's winner, the first speaker), with the kept result naming the speaking order."""
    import json

    (folder / "items" / "flow").mkdir(parents=True)
    (folder / "runs.jsonl").write_text(json.dumps({"commit": "abc1234", "served": {"model": model}}) + "\n")
    lines = []
    for item, said, gold, first in rows:
        other = "B" if first == "A" else "A"
        (folder / "items" / "flow" / f"{item}.json").write_text(json.dumps(
            {"speeches": [{"speaker": first, "content": "x"}, {"speaker": other, "content": "y"}]}))
        lines.append(json.dumps({"benchmark": "gold_x", "mode": "flow", "item": item, "status": "complete",
                                 "sides": {"A": 1.0 if gold == "A" else 0.0, "B": 1.0 if gold == "B" else 0.0},
                                 "tie": 0.5, "gold": {"general": 1.0},
                                 "verdicts": {"general": {"winner": said, "not_judged": ""},
                                              "source": {"winner": None, "not_judged": "blind on this model"}},
                                 "result_file": f"items/flow/{item}.json"}))
    (folder / "items.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@given(st.lists(st.tuples(st.sampled_from(["A", "B", None]), st.sampled_from(["A", "B"]),
                          st.sampled_from(["A", "B"])), min_size=1, max_size=40))
@hsettings(max_examples=40, deadline=None)
def test_a_readings_share_right_and_place_lean_are_counted_from_the_runs_items(rows):
    """Constructed runs: right counts a named winner the gold's as 1 and no winner as half; the first speaker's
    share is the judge's, beside the gold's; a dimension never judged is no reading."""
    import tempfile

    from debatrix.benchmarks.readings import readings

    with tempfile.TemporaryDirectory() as tmp:
        run = _bench_run(Path(tmp) / "run", "m", [(f"d{k}", s, g, f) for k, (s, g, f) in enumerate(rows)])
        got = {r.reading: r for r in readings([run])}
    assert set(got) == {"flow"}  # source was never judged
    r = got["flow"]
    n = len(rows)
    assert r.items == n
    assert r.right.value == pytest.approx(round(sum(0.5 if s is None else float(s == g) for s, g, _ in rows) / n, 4))
    assert r.first_named.value == pytest.approx(round(sum(0.5 if s is None else float(s == f)
                                                          for s, _, f in rows) / n, 4))
    assert r.gold_first == pytest.approx(round(sum(g == f for _, g, f in rows) / n, 4))
    assert r.right.low <= r.right.value <= r.right.high
    assert r.state == ("not enough data" if n < 50 else "carries" if r.right.low > 0.5 else "blind")


@given(st.floats(-2.0, 2.0), st.floats(0.3, 2.0), st.integers(12, 40))
@hsettings(max_examples=40, deadline=None)
def test_a_readings_place_fit_is_fitted_on_fold_0_and_takes_out_a_constructed_lean_on_fold_1(bias, signal, n):
    """Constructed debates in both folds: the reading sees the right side (log-odds ``signal`` towards it) plus a
    lean ``bias`` towards the first speaker. The fit, on fold 0, finds the smallest shift that takes the lean out
    (none where the lean never names the wrong side); on fold 1, which it never saw, the shifted reading names the
    first speaker as often as the gold does and is right on every debate, whatever it did before."""
    from hypothesis import assume

    from debatrix.benchmarks.base import fold
    from debatrix.benchmarks.readings import STEP, Row, place_fit
    from debatrix.core.profile import shifted

    # a lean that outweighs the signal by a whole number of the fit's steps leaves the shifted reading exactly even
    # on half the debates (a tie, counted half): right on every debate is then not what the fit can promise
    steps = (abs(bias) - signal) / STEP
    assume(abs(steps - round(steps)) > 0.01)

    def row(k: int, gold_first: bool) -> Row:
        z = (signal if gold_first else -signal) + bias
        p = 1 / (1 + math.exp(-z))
        named = 0.5 if p == 0.5 else float(p > 0.5)
        return Row(0.5 if named == 0.5 else float(bool(named) == gold_first), named, gold_first, p, k % 2)

    rows = [row(k, gold_first) for k in range(2 * n) for gold_first in (True, False)]
    fit = place_fit(rows)
    assert fit is not None
    # each fold holds as many first-speaker winners as second: the lean shows only where it outweighs the signal,
    # and the shift is what it takes to undo that, no more, in the lean's opposite direction
    assert abs(fit.shift) <= max(0.0, abs(bias) - signal) + 0.011
    assert fit.shift * bias <= 0
    check = [r for r in rows if r.fold == 1]
    assert fit.checked == len(check) and fit.fitted == sum(r.fold == 0 for r in rows)
    assert fit.right.value == pytest.approx(1.0)
    assert fit.first_named.value == pytest.approx(fit.gold_first, abs=1e-3)
    assert fit.right_before.value == pytest.approx(round(sum(r.right for r in check) / len(check), 4))
    assert shifted(0.5, fit.shift) == pytest.approx(1 / (1 + math.exp(-fit.shift)))
    # too few debates in a fold: no fit, rather than one debate's noise
    assert place_fit([r for r in rows if r.fold == 0] + check[:3]) is None
    # variants of one debate share its fold, so a check never sees a debate its fit saw
    for k in range(8):
        assert {fold(f"d{k}~{p}~{s}") for p in ("argument", "clash") for s in ("pro", "con")} == {fold(f"d{k}")}



def test_a_reading_is_recorded_as_the_model_made_it_with_the_shift_its_profile_took_out_put_back(tmp_path):
    """A run judged under a profile with a place fit keeps each verdict's shift: recording its readings again puts
    the shift back, so the figures (and a new fit) are of the model's own probabilities, not of the correction."""
    import json

    from debatrix.benchmarks.readings import readings
    from debatrix.core.profile import shifted

    rows = [(f"d{k}", "A", "A" if k % 2 else "B", "A") for k in range(60)]
    run = _bench_run(tmp_path / "run", "m", rows)
    raw = {f"d{k}": 0.6 + 0.002 * k for k in range(60)}  # the model gave the first speaker A more, every time
    lines = []
    for line in (run / "items.jsonl").read_text().splitlines():
        rec = json.loads(line)
        p = shifted(raw[rec["item"]], -1.0)  # the profile took 1.0 off A's log-odds: B named on most of them
        rec["verdicts"]["general"].update({"probabilities": {"A": p, "B": 1 - p}, "place_shift": -1.0,
                                           "winner": "A" if p > 0.5 else "B"})
        lines.append(json.dumps(rec))
    (run / "items.jsonl").write_text("\n".join(lines) + "\n")
    (r,) = readings([run])
    assert r.first_named.value == pytest.approx(1.0)  # as the model made it: A every time
    assert r.right.value == pytest.approx(0.5)
    assert r.place is not None and r.place.shift < -0.3  # a fit on the raw probabilities finds the lean again


def test_a_reading_whose_lean_its_place_fit_takes_out_is_judged_as_taken_out():
    """A reading that named the first speaker far more than the gold did leans; with a place fit whose held-out
    check names the first speaker as the gold does, it no longer does, and the pooled fit averages the shifts by the
    debates each was fitted on."""
    from debatrix.core.profile import PlaceFit, ReadingProfile, pooled_fit, wilson

    def fit(shift: float, fitted: int, first: float) -> PlaceFit:
        return PlaceFit(shift=shift, fitted=fitted, checked=40, right_before=wilson(20, 40), right=wilson(26, 40),
                        first_before=wilson(36, 40), first_named=wilson(first * 40, 40), gold_first=0.5)

    raw = ReadingProfile(reading="flow/argument", gold="g", items=80, right=wilson(50, 80),
                         first_named=wilson(72, 80), gold_first=0.5)
    assert raw.lean == "first"
    assert raw.model_copy(update={"place": fit(-1.0, 40, 0.5)}).lean == ""
    assert raw.model_copy(update={"place": fit(-0.2, 40, 0.9)}).lean == "first"
    both = pooled_fit([fit(-1.0, 30, 0.5), fit(-2.0, 10, 0.6)])
    assert both is not None and both.shift == pytest.approx(-1.25) and both.checked == 80
    assert both.first_named.value == pytest.approx(0.55)


def test_readings_enter_the_profile_of_the_model_that_made_them_and_no_other(tmp_path):
    from debatrix.app.cli import app

    prof = tmp_path / "p.json"
    prof.write_text(JudgeProfile(model=ModelIdentity(name="m"), prompts_sha256="x", measured="2026-12-02")
                    .model_dump_json())
    always_first = [(f"d{k}", "A", "A" if k % 3 == 0 else "B", "A") for k in range(60)]
    mine = _bench_run(tmp_path / "mine", "m", always_first)
    theirs = _bench_run(tmp_path / "theirs", "other", always_first)
    run = CliRunner().invoke(app, ["profile", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--out",
                                   str(prof), "--readings", str(theirs)])
    assert run.exit_code == 2 and "judged by other, not m" in run.output and not load(prof).readings
    run = CliRunner().invoke(app, ["profile", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--out",
                                   str(prof), "--readings", str(mine)])
    assert run.exit_code == 0, run.output
    (r,) = load(prof).readings
    assert (r.reading, r.gold, r.items) == ("flow", "gold_x", 60)
    # it always names the first speaker, right where the gold's winner spoke first (a third of them): it leans
    assert r.right.value == pytest.approx(20 / 60, abs=1e-3) and r.state == "blind" and r.lean == "first"


def _judged_by_the_reading_model(tmp_path: Path, shares: dict[str, float]):
    """The demo judged by the reading test model under a profile whose decisions all carry and whose readings
    ``flow/<dimension>`` were right at ``shares`` on 300 debates (no lean); the result, checked complete."""
    import asyncio

    from debatrix import JudgeSettings, LLMSettings, MemorySettings, load_debate
    from debatrix.app.api import ajudge_debate
    from debatrix.core.profile import ReadingProfile, wilson
    from debatrix.testing import FakeOpenAIServer

    from .conftest import EXAMPLES

    sure = {k: (0.9, 0.85, 300, 30) for k in ("argues", "evidence", "clear", "answers")}
    prof = _profile("reading-model", **sure).model_copy(update={"prompts_sha256": prompts_sha256(), "readings": tuple(
        ReadingProfile(reading=f"flow/{dim}", gold="nyu_debate", items=300, right=wilson(share * 300, 300),
                       first_named=wilson(150, 300), gold_first=0.5) for dim, share in shares.items())})
    path = tmp_path / "p.json"
    path.write_text(prof.model_dump_json())
    with FakeOpenAIServer(reading=True, exact_usage=False) as srv:
        result = asyncio.run(ajudge_debate(load_debate(EXAMPLES / "four_day_week.yaml"), JudgeSettings(
            mode="flow", memory=MemorySettings(embedding="hash"), profile=str(path),
            llm=LLMSettings(base_url=srv.base_url, model="reading-model", max_retries=0))))
    assert result.status.value == "complete", result.incomplete_reason
    return result


def test_a_judgment_under_a_profile_with_readings_is_decided_by_the_reading_that_carries_and_says_so(tmp_path):
    """The reading test model, its decisions all carrying; its profile says the argument reading was right on 300
    debates at 0.70 and the source reading at a coin's 0.50: the panel is the argument verdict, and its reason
    names both readings with their figures."""
    result = _judged_by_the_reading_model(tmp_path, {"argument": 0.7, "source": 0.5, "language": 0.5})
    argument = next(d for d in result.dimensions if d.name == "argument").verdict
    assert not argument.not_judged
    panel = result.general.verdict
    assert panel.probabilities == pytest.approx(argument.probabilities, abs=1e-3)
    assert "argument ×0.847 (right 0.70" in panel.comment and "source not weighed (right 0.50" in panel.comment


def test_where_no_reading_of_the_model_carries_every_verdict_is_too_close_to_call_and_names_its_lean(tmp_path):
    """The reading test model, its decisions carrying, but every reading at a coin's share on 300 debates: no
    verdict names a winner, each says the side its figures lean to and how far its reading was shown to carry
    (too close to call, leaning X (P)), and the overall one is the dimensions' lean merged by their own weights,
    its scores leaning the same way; "not judged" is left to what nothing was read for."""
    result = _judged_by_the_reading_model(tmp_path, {"argument": 0.5, "source": 0.5, "language": 0.5})
    judged = [d.verdict for d in result.dimensions if not d.verdict.not_judged]
    assert judged and all(v.winner is None and v.lean and v.unproven for v in judged)
    general = result.general.verdict
    assert general.winner is None and not general.not_judged and general.lean in general.probabilities
    assert general.called == f"too close to call, leaning {general.lean} ({general.probabilities[general.lean]:.2f})"
    assert "argument not weighed (right 0.50" in general.comment and "Too close to call" in general.comment
    scores = {j.debater: j.score for j in result.general.debater_judgments}
    assert max(scores, key=scores.get) == general.lean


def test_measuring_a_models_decisions_again_keeps_the_readings_its_profile_recorded():
    """``debatrix profile`` measures decisions; a profile's readings come from benchmark runs (``--readings``), so
    measuring the decisions again carries them over with their runs named, as it does the verdict maps."""
    from debatrix.benchmarks.profiling import build_profile
    from debatrix.core.profile import Interval, JudgeProfile, ModelIdentity, ReadingProfile

    reading = ReadingProfile(reading="direct", gold="nyu_debate", items=60, right=Interval(value=0.6, low=0.47, high=0.71),
                             first_named=Interval(value=0.4, low=0.28, high=0.53), gold_first=0.43, run="runs/x")
    keep = JudgeProfile(model=ModelIdentity(name="m"), prompts_sha256="", measured="", readings=(reading,))
    again = build_profile([], (), model=ModelIdentity(name="m"), commit="c", command="debatrix profile", keep=keep)
    assert again.readings == (reading,) and again.reading("direct") == reading
    assert build_profile([], (), model=ModelIdentity(name="m"), commit="c", command="x").readings == ()


@given(st.lists(st.tuples(st.integers(0, 29), st.booleans(), st.floats(0.05, 0.95)), min_size=40, max_size=120))
@hsettings(max_examples=40, deadline=None)
def test_a_decisions_base_rate_is_the_share_of_its_gold_items_that_are_yes(items):
    """The base rate a profile records is its gold's, counted over the items answered once each (a passage read again
    in the other place is the place lean's, not a second item), whatever the model answered."""
    from debatrix.benchmarks.profiling import Probe, decision_profile

    probes = [Probe("answers", f"d{k}", label, [], 10, answer=p, pair=f"{i}") for i, (k, label, p) in enumerate(items)]
    again = [Probe("answers", p.debate, p.label, [], 10, place=1, pair=p.pair, answer=1 - p.answer) for p in probes]
    d = decision_profile("answers", probes + again)
    assert d.base_rate == pytest.approx(sum(label for _, label, _ in items) / len(items), abs=1e-4)


@data_required
def test_a_decision_kept_when_another_is_measured_again_keeps_its_own_date_and_its_reason_says_it(tmp_path):
    """``--kinds answers`` measures answers again: the other decisions keep the figures, date and commit of the run
    that measured them (a file written before decisions kept their own takes the file's), so a dimension blind on
    an older decision is not dated by the newer run."""
    from debatrix.testing import FakeOpenAIServer

    old = _profile("reading-model", clear=(0.52, 0.46, 200, 24), argues=(0.7, 0.62, 200, 24))
    old = old.model_copy(update={"commit": "0" * 40, "measured": "2026-01-02"})
    target = tmp_path / "r.json"
    target.write_text(old.model_dump_json())
    with FakeOpenAIServer(reading=True, exact_usage=False) as reader:
        res = _profile_cli(reader.base_url, "reading-model", target, "--kinds", "answers")
    assert res.exit_code == 0, res.output
    again = load(target)
    assert again.measured != "2026-01-02" and again.decisions["answers"].measured == again.measured
    assert again.decisions["answers"].base_rate is not None
    assert {k: (d.measured, d.commit) for k, d in again.decisions.items() if k != "answers"} == {
        "clear": ("2026-01-02", "0" * 40), "argues": ("2026-01-02", "0" * 40)}
    assert "measured 2026-01-02" in again.blind_reason("clear")
    assert {r["decision"]: r["measured"] for r in again.table()}["clear"] == "2026-01-02"
