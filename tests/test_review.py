"""A person in the loop: corrections kept beside the model's decisions, every verdict recomputed from both without a
model call, the decisions to review first computed, a corrections file checked as a debate file is, and the words a
person reads before correcting ("the model could not tell", "too close to call, leaning ...").

The judged results come from the project's fake server with its reading model (it reads its prompt and answers as
a careful reader with only that text would), under a profile of the shipped embedded model's figures renamed for
it: the answers map, the base rate and the readings that make a verdict too close to call."""

from __future__ import annotations

import functools
import io
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings as hsettings, strategies as st
from rich.console import Console

from debatrix import JudgeSettings, LLMSettings, MemorySettings, judge_debate, load_debate
from debatrix.app.report import result_html
from debatrix.app.terminal import print_summary
from debatrix.app.ui import summary
from debatrix.core.flow import CELL_MEANING, Correction
from debatrix.core.profile import prompts_sha256, shipped
from debatrix.core.review import (CorrectionError, decisions_of, parse_corrections, read_corrections, recompute,
                                  review_first)
from debatrix.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def fake_profile(folder: Path) -> Path:
    """The shipped 1.5B profile's figures, for the fake server's model name (so a run on it reads them)."""
    prof = shipped()["qwen2.5-coder-1.5b"]
    renamed = prof.model_copy(update={"model": prof.model.model_copy(update={"name": "fake", "gguf_sha256": None}),
                                      "prompts_sha256": prompts_sha256()})
    path = folder / "fake.profile.json"
    path.write_text(renamed.model_dump_json(), encoding="utf-8")
    return path


def judged(server: FakeOpenAIServer, debate: str, profile: Path | str, **extra) -> object:
    s = JudgeSettings(profile=str(profile), llm=LLMSettings(base_url=server.base_url, model="fake", api_key="x"),
                      memory=MemorySettings(embedding="hash"), **extra)
    return judge_debate(load_debate(EXAMPLES / debate), s)


@functools.cache
def judged_examples() -> dict[str, object]:
    """The demo and the longer example, judged once each on the reading model, profiled and unprofiled (a cache,
    not a fixture: hypothesis would print a fixture's whole repr with every failing case)."""
    folder = Path(tempfile.mkdtemp(prefix="review-"))
    prof = fake_profile(folder)
    with FakeOpenAIServer(reading=True) as server:
        out = {"demo": judged(server, "four_day_week.yaml", prof),
               "uniforms": judged(server, "school_uniforms.yaml", prof),
               "bare": judged(server, "school_uniforms.yaml", "none")}
    for r in out.values():
        assert r.status.value == "complete", r.incomplete_reason
    return out


@pytest.fixture
def results():
    return judged_examples()


def _answer(result, value: float, by: str = "coach", pick: int = 0) -> Correction:
    decision = [d for d, _ in decisions_of(result.flow) if d[0] == "answers"][pick]
    return Correction(decision=decision, value=value, by=by)


# ------------------------------------------------------------------------------ corrections are data


def test_a_recompute_without_corrections_gives_the_judges_own_result(results):
    """The judge's own step and a recompute compute the same way: nothing a person set, nothing changes."""
    for r in results.values():
        again = recompute(r)
        assert again.dimensions == r.dimensions and again.general == r.general and again.checks == r.checks
        assert again.status == r.status and again.flow == r.flow


def test_a_correction_is_kept_beside_the_models_decision_and_says_who_set_it(results):
    r = results["uniforms"]
    fix = _answer(r, 1.0, by="Coach Lee")
    out = recompute(r, [fix])
    assert out.flow == r.flow, "the model's decisions are never overwritten"
    assert out.corrections == (fix,)
    by, row = fix.decision[1], fix.decision[2]
    cell = next(c for t in out.flow_ledger.threads if t.id == row for c in t.cells if c.by == by)
    model = next(x.answers for f in r.flow for x in f.lines if x.by == by and x.target == row)
    assert cell.set_by == "Coach Lee" and cell.model == model and cell.answered == 1.0 and cell.counted == 1.0
    # a person's yes fells the row unless its answer is itself answered: counted as given, never through the profile
    thread = next(t for t in out.flow_ledger.threads if t.id == row)
    assert thread.answered == 1.0 and thread.status in ("refuted", "extended")
    # taken back, the result is the model's again, to the figure
    back = recompute(out, ())
    assert back.dimensions == r.dimensions and back.general == r.general and back.corrections == ()


@given(st.integers(0, 40), st.sampled_from([0.0, 0.35, 1.0]))
@hsettings(max_examples=25, deadline=None)
def test_every_surface_marks_a_cell_a_person_set_and_shows_the_models_figure_beside_it(pick, value):
    r = judged_examples()["uniforms"]
    answers = [d for d, _ in decisions_of(r.flow) if d[0] == "answers"]
    decision = answers[pick % len(answers)]
    out = recompute(r, [Correction(decision=decision, value=value, by="Coach Lee")])
    row = next((t for t in out.flow_ledger.threads if t.id == decision[2]), None)
    if row is None:  # the row it answers is no argument: nothing on the sheet to mark
        return
    page = summary(out)["flow"]
    cells = [c for x in page["rows"] if x["id"] == decision[2] for c in x["cells"] if c.get("set")]
    assert len(cells) == 1 and "set by Coach Lee" in cells[0]["words"] and "the model said P" in cells[0]["hover"]
    report = result_html(out)
    assert 'data-set="person"' in report and "Coach Lee" in report
    text = io.StringIO()
    print_summary(out, Console(file=text, width=100), verbose=False)
    assert "1 decision set by Coach Lee" in text.getvalue()
    assert json.loads(out.model_dump_json())["corrections"][0]["by"] == "Coach Lee"


def test_a_recompute_calls_no_model(results):
    """Everything a recompute or a review list does is arithmetic on the decisions: behind a server that fails
    every request, not one request is made."""
    r = results["uniforms"]
    with FakeOpenAIServer(responder=lambda body, n: {"status": 500}) as failing:
        recompute(r, [_answer(r, 1.0)])
        review_first(r, most=None)
        result_html(recompute(r, [_answer(r, 0.0)]))
    assert failing.requests == []


# ------------------------------------------------------------------------------ what a person reads


@given(st.floats(0.01, 0.99))
@hsettings(max_examples=40, deadline=None)
def test_a_decision_at_the_models_usual_level_reads_could_not_tell_never_dropped(p):
    """Every answer of the demo's flow given at ``p``, under the shipped profile: an answer whose odds the profile
    puts within three times of the model's usual answer tells nothing, so its cell says the model could not tell
    and its row, if its answers count too little to contest it, is unclear, never "dropped"; a row is dropped only
    where the model said no."""
    from debatrix.core.flow import TELLS_AT

    r = judged_examples()["demo"]
    flows = tuple(f.model_copy(update={"lines": tuple(x.model_copy(update={"answers": p}) for x in f.lines)})
                  for f in r.flow)
    led = recompute(r.model_copy(update={"flow": flows}), ()).flow_ledger
    prof = r.judge_profile
    for t in led.threads:
        for c, w in zip(t.cells, t.cell_words):
            place = 0 if c.by in ("S1.1", "S3.1") else 1  # Ana speaks first
            factor = prof.factor("answers", p, place)
            assert c.factor == pytest.approx(factor, rel=1e-3, abs=1e-4)
            unsure = 1 / TELLS_AT < c.factor < TELLS_AT
            if t.status in ("dropped", "unclear"):  # counts too little to contest: the answer's own word
                assert (w == "could not tell") == unsure, (p, factor, w)
        if t.answerable and t.answered < 0.2:
            assert t.status == ("unclear" if "could not tell" in t.cell_words else "dropped")
        if t.status == "dropped":
            assert "could not tell" not in t.cell_words


def test_a_verdict_too_close_to_call_names_its_lean_in_the_same_words_everywhere(results):
    """The shipped profile's readings are not above a coin: the verdict names no winner, says its lean and its
    figure, in the same words on the terminal, the report and the page; "not judged" only where nothing was read."""
    r = results["demo"]
    v = r.general.verdict
    assert v.winner is None and v.lean in ("Ana", "Ben") and v.unproven
    said = v.called
    assert re.fullmatch(r"too close to call, leaning (Ana|Ben) \(0\.\d\d\)", said), said
    out = io.StringIO()
    print_summary(r, Console(file=out, width=200), verbose=False)
    assert f"Winner: {said}" in out.getvalue()
    assert said[0].upper() + said[1:] in result_html(r)
    assert summary(r)["general"]["called"] == said
    blind = next(d for d in r.dimensions if d.name == "source").verdict
    assert blind.called == "not judged" and blind.not_judged


def test_the_demos_summary_fits_forty_lines_at_eighty_columns_and_verbose_has_the_rest(results):
    r = results["demo"]
    short, full = io.StringIO(), io.StringIO()
    items = review_first(r, most=3)
    print_summary(r, Console(file=short, width=80), verbose=False, review=items, review_command="debatrix review X")
    print_summary(r, Console(file=full, width=80), verbose=True)
    lines = short.getvalue().splitlines()
    assert len(lines) <= 40, "\n".join(lines)
    assert "review first" in short.getvalue() and items[0].asks in short.getvalue().replace("\n", " ")
    assert "speech scores" in full.getvalue() and "speech scores" not in short.getvalue()


# ------------------------------------------------------------------------------ review first


def test_review_first_lists_the_decisions_that_move_the_verdict_most_each_as_its_recompute_says(results):
    r = results["uniforms"]
    items = review_first(r, most=None)
    assert items and [i.value for i in items] == sorted((i.value for i in items), reverse=True)
    for item in items[:6]:  # each figure is what the recompute gives with that decision set either way
        for value, probs in ((1.0, item.yes), (0.0, item.no)):
            again = recompute(r, [Correction(decision=item.decision, value=value, by="x")]).general.verdict
            assert again.probabilities == probs
        assert item.value == pytest.approx(item.likely * max(abs(item.yes[n] - item.now[n]) for n in item.now)
                                           + (1 - item.likely) * max(abs(item.no[n] - item.now[n]) for n in item.now),
                                           abs=1e-3)
    # a decision the profile marks blind decides nothing: never listed
    assert not [i for i in items if i.decision[0] in ("evidence", "clear")]
    # a decision a person set is not listed again
    first = items[0].decision
    assert first not in {i.decision for i in review_first(recompute(r, [Correction(decision=first, value=1.0,
                                                                                   by="x")]), most=None)}


# ------------------------------------------------------------------------------ a corrections file


def _file(tmp_path, text: str) -> Path:
    p = tmp_path / "c.yaml"
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize("body, words", [
    ("by: c\ncorrections:\n  - {passage: S9.9, kind: answers, row: S1.1, value: yes}", "passage 'S9.9' is not in the"),
    ("by: c\ncorrections:\n  - {passage: S2.1, kind: refutes, row: S1.1, value: yes}", "kind 'refutes'"),
    ("by: c\ncorrections:\n  - {passage: S2.1, kind: answers, value: yes}", "names the row it answers"),
    ("by: c\ncorrections:\n  - {passage: S3.1, kind: answers, row: S1.1, value: yes}", "the same side"),
    ("by: c\ncorrections:\n  - {passage: S2.1, kind: answers, row: S3.1, value: yes}", "was not spoken after"),
    ("by: c\ncorrections:\n  - {passage: S2.1, kind: argues, row: S1.1, value: yes}", "give no row"),
    ("by: c\ncorrections:\n  - {passage: S2.1, kind: answers, row: S1.1, value: 1.5}", "from 0 to 1"),
    ("by: c\ncorrections:\n  - {passage: S2.1, kind: answers, row: S1.1, value: maybe}", "give yes, no, partly"),
    ("corrections:\n  - {passage: S2.1, kind: answers, row: S1.1, value: yes}", "say who made it"),
    ("by: c\ncorrections:\n  - {passage: S2.1, kind: answers, row: S1.1, value: yes, colour: red}", "colour"),
    ("by: c\ncorrections: [\n", "corrections"),
    ("by: c\ncorrections:\n  - {passage: S2.1, kind: answers, row: S1.1, value: .nan}", "from 0 to 1"),
])
def test_a_bad_corrections_file_is_one_line_naming_the_entry(results, tmp_path, body, words):
    with pytest.raises(CorrectionError) as e:
        read_corrections(_file(tmp_path, body), results["demo"], by=None)
    message = str(e.value)
    assert words in message and "\n" not in message and str(tmp_path / "c.yaml") in message


def every_passage_argues(result):
    """``result`` with every passage read as an argument (P 0.8), recomputed."""
    flows = tuple(f.model_copy(update={"marks": tuple(m.model_copy(update={"argument": 0.8}) for m in f.marks)})
                  for f in result.flow)
    return recompute(result.model_copy(update={"flow": flows}), ())


def test_the_examples_corrections_make_the_demos_sheet_read_as_a_coach_flows_it(results):
    """The example's corrections, on the demo's flow with every passage an argument (as the embedded model reads
    them: the slow test in test_real_model.py judges it so), make the sheet a coach's: contested, extended,
    refuted, untested."""
    r = every_passage_argues(results["demo"])
    fixes = read_corrections(EXAMPLES / "corrections" / "four_day_week.yaml", r)
    assert 1 <= len(fixes) <= 5 and {c.by for c in fixes} == {"the example coach"}
    out = recompute(r, fixes)
    status = {t.id: t.status for t in out.flow_ledger.threads}
    assert status == {"S1.1": "contested", "S2.1": "extended", "S3.1": "refuted", "S4.1": "untested"}, status


def test_the_review_command_applies_a_file_and_refuses_a_bad_one_in_one_line(results, tmp_path):
    src = tmp_path / "demo.json"
    src.write_text(every_passage_argues(results["demo"]).model_dump_json(), encoding="utf-8")
    cli = [sys.executable, "-m", "debatrix.app.cli", "review", str(src)]
    ok = subprocess.run([*cli, "--corrections", str(EXAMPLES / "corrections" / "four_day_week.yaml"), "--out",
                         str(tmp_path / "fixed.json")], capture_output=True, text=True, env=_env())
    assert ok.returncode == 0, ok.stderr
    fixed = json.loads((tmp_path / "fixed.json").read_text())
    assert len(fixed["corrections"]) == 4 and fixed["flow"] == json.loads(src.read_text())["flow"]
    assert "contested S1.1" in ok.stdout and "extended S2.1" in ok.stdout
    bad = _file(tmp_path, "by: c\ncorrections:\n  - {passage: S2.1, kind: answers, row: S7.1, value: yes}")
    refused = subprocess.run([*cli, "--corrections", str(bad)], capture_output=True, text=True, env=_env())
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert [ln for ln in refused.stderr.splitlines() if ln.strip()] == [
        f"error: {bad}: corrections[0]: row 'S7.1' is not in the debate (its passages are S1.1 to S4.1)"]
    prose = tmp_path / "prose.json"
    prose.write_text(results["demo"].model_copy(update={"mode": "direct"}).model_dump_json(), encoding="utf-8")
    refused = subprocess.run([sys.executable, "-m", "debatrix.app.cli", "review", str(prose)], capture_output=True,
                             text=True, env=_env())
    assert refused.returncode == 2 and "judge it with --mode flow" in refused.stderr


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "COLUMNS": "200"}


def test_corrections_given_as_the_graph_is_resumed_are_checked_as_a_file_is(results):
    from debatrix.core.review import debate_of

    r = results["demo"]
    debate, read = debate_of(r), {f.index for f in r.flow}
    got = parse_corrections({"by": "coach", "corrections": [{"passage": "S2.1", "kind": "answers", "row": "S1.1",
                                                             "value": "partly"}]}, debate, read)
    assert got[0].decision == ("answers", "S2.1", "S1.1") and got[0].value == 0.35 and got[0].at is not None
    assert parse_corrections(None, debate, read) == [] and parse_corrections([], debate, read) == []
    as_objects = parse_corrections([got[0].model_dump(mode="json")], debate, read)
    assert as_objects == got
    with pytest.raises(CorrectionError, match="say who made it"):
        parse_corrections([{"passage": "S2.1", "kind": "answers", "row": "S1.1", "value": "yes"}], debate, read)
    assert CELL_MEANING["could not tell"]


# ------------------------------------------------------------------------------ corrections are gold


def _corrected_folder(folder: Path, n: int, agree: bool) -> Path:
    """``n`` corrected copies of the longer example, each a debate of its own: the model's P of every decision
    drawn at random, a person's value yes where the P is above 0.5 (``agree``) or below it."""
    import random

    base = judged_examples()["uniforms"]
    rng = random.Random(7)
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(n):
        flows = []
        for f in base.flow:
            marks = tuple(m.model_copy(update={"argument": round(rng.random(), 4)}) for m in f.marks)
            lines = tuple(x.model_copy(update={"answers": round(rng.random(), 4)}) for x in f.lines)
            flows.append(f.model_copy(update={"marks": marks, "lines": lines}))
        copy = base.model_copy(update={"debate_id": f"copy-{k}", "flow": tuple(flows)})
        fixes = [Correction(decision=d, value=1.0 if (p > 0.5) == agree else 0.0, by="Coach Lee")
                 for d, p in decisions_of(copy.flow) if d[0] in ("argues", "answers")]
        (folder / f"copy-{k}.json").write_text(recompute(copy, fixes).model_dump_json(), encoding="utf-8")
    return folder


def _profile_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "debatrix.app.cli", "profile", *args], capture_output=True,
                          text=True, env={**_env(), "COLUMNS": "250"})


@pytest.mark.parametrize("agree, low, high", [(True, 0.9, 1.0), (False, 0.0, 0.1)], ids=["sees", "backwards"])
def test_a_folder_of_corrected_results_measures_the_model_against_the_people_who_corrected_it(tmp_path, agree,
                                                                                             low, high):
    """Corrections are gold: the model's decisions measured against them per kind (ROC AUC with its interval over
    debates), a model whose P agrees with its coach near 1, one whose P runs backwards near 0; --out writes them
    into a profile that says its gold is those corrections."""
    folder = _corrected_folder(tmp_path / "corrected", 24, agree)
    shown = _profile_cli("--corrections", str(folder), "--model", "fake")
    assert shown.returncode == 0, shown.stderr
    rows = {m.group(1): float(m.group(2)) for m in re.finditer(r"│ (argues|answers)\s+│ [\w ]+│ (\d\.\d\d) \[",
                                                                  shown.stdout)}
    assert set(rows) == {"argues", "answers"}, shown.stdout
    assert all(low <= v <= high for v in rows.values()), rows
    assert "not a random sample" in shown.stderr and "nothing written" in shown.stderr
    out = tmp_path / "fake.profile.json"
    out.write_text(fake_profile(tmp_path).read_text(), encoding="utf-8")
    written = _profile_cli("--corrections", str(folder), "--model", "fake", "--out", str(out))
    assert written.returncode == 0, written.stderr
    prof = json.loads(out.read_text())
    assert prof["decisions"]["answers"]["gold"].startswith("corrections by Coach Lee in ")
    assert prof["decisions"]["evidence"]["gold"].startswith("known answers")  # kinds nobody corrected are kept


def test_a_bad_file_among_the_corrected_results_is_one_line_naming_it(tmp_path):
    folder = _corrected_folder(tmp_path / "corrected", 2, True)
    (folder / "notes.json").write_text('{"motion": "m"}', encoding="utf-8")
    bad = _profile_cli("--corrections", str(folder), "--model", "fake")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    lines = [ln for ln in bad.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {folder / 'notes.json'}: not a debatrix result")
    (folder / "notes.json").unlink()
    other = _profile_cli("--corrections", str(folder), "--model", "someone-else")
    assert other.returncode == 2 and "not someone-else" in other.stderr


def test_a_template_lists_the_decisions_to_review_and_is_refused_until_a_person_fills_it_in(results, tmp_path):
    import yaml

    src = tmp_path / "demo.json"
    src.write_text(every_passage_argues(results["demo"]).model_dump_json(), encoding="utf-8")
    cli = [sys.executable, "-m", "debatrix.app.cli", "review", str(src)]
    made = subprocess.run([*cli, "--template", str(tmp_path / "t.yaml"), "--by", "Coach Lee"], capture_output=True,
                          text=True, env=_env())
    assert made.returncode == 0, made.stderr
    data = yaml.safe_load((tmp_path / "t.yaml").read_text())
    first = review_first(every_passage_argues(results["demo"]), most=5)
    assert data["by"] == "Coach Lee" and [e["passage"] for e in data["corrections"]] == [i.decision[1] for i in first]
    assert all(e["value"] == "?" and e["note"].startswith("the model: ") for e in data["corrections"])
    unfilled = subprocess.run([*cli, "--corrections", str(tmp_path / "t.yaml")], capture_output=True, text=True,
                              env=_env())
    assert unfilled.returncode == 2 and "corrections[0]: value not set" in unfilled.stderr
    data["corrections"] = [{**data["corrections"][0], "value": "no"}]
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    filled = subprocess.run([*cli, "--corrections", str(tmp_path / "t.yaml")], capture_output=True, text=True,
                            env=_env())
    assert filled.returncode == 0, filled.stderr
    fixed = json.loads((tmp_path / "demo.corrected.json").read_text())
    assert [c["by"] for c in fixed["corrections"]] == ["Coach Lee"]
