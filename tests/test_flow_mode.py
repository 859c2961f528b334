"""The flow mode end to end on a scripted model: the decisions it asks, what a missing one does, and what the
result carries (the flow, each dimension's ledger, comments that cite passages)."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

import pytest

from debatrix import JudgeSettings, MemorySettings
from debatrix.app.api import ajudge_debate
from debatrix.core import prompting as P
from debatrix.core.flow import flow_calls
from debatrix.core.results import JudgeResult, Status
from debatrix.testing import ScriptedChatModel, decided


def _kind(call) -> str:
    """Which question a call asks: its last line is one of the flow's question templates, rendered for the passage
    the call is about (the templates' wording may change; the kind of question does not)."""
    last = str(call.messages[-1].content).splitlines()[-1]
    for kind, template in (("argues", "flow_argues.j2"), ("evidence", "flow_evidence.j2"), ("clear", "flow_clear.j2")):
        if last == P.render(template, P.FlowQuestionVars(id=call.target)).strip():
            return kind
    answer = P.render("flow_answer.j2", P.FlowAnswerVars(fence="F", id=call.target, target="T", speaker="X",
                                                         text="t")).strip().splitlines()[-1]
    assert last == answer, last
    return "answers"


def settings() -> JudgeSettings:
    return JudgeSettings(mode="flow", memory=MemorySettings(embedding="hash"))


async def test_a_flow_run_asks_each_passage_each_speech_and_the_rows_it_proposes(uniforms):
    model = ScriptedChatModel()
    result = await ajudge_debate(uniforms, settings(), model)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    asked = Counter(_kind(c) for c in model.calls)
    answers = [c for c in model.calls if _kind(c) == "answers"]
    # an unprofiled model (a LangChain model of the caller's): every dimension is judged, so every kind is asked
    assert asked == {"argues": len(uniforms.passages), "evidence": len(uniforms.passages),
                     "clear": len(uniforms.passages), "answers": len(answers)}
    assert result.profile.startswith("unprofiled") and "debatrix profile" in result.profile
    # several points a passage at most, and each point once a speech
    per_passage = Counter(c.target for c in answers)
    assert max(per_passage.values()) <= 3
    asked_rows = [(uniforms.passage_index[c.target].speech,
                   re.search(r"(S\d+\.\d+), made earlier", str(c.messages[-1].content)).group(1)) for c in answers]
    assert len(asked_rows) == len(set(asked_rows))
    assert all(c.choices == ("yes", "no") for c in model.calls)
    assert 0 < len({(f.index, x.target) for f in result.flow for x in f.lines}) <= len(answers)
    assert result.usage.llm_calls == len(model.calls) <= flow_calls(uniforms)
    # every question reads the passage it asks about, and an answer question the point it asks about, restated
    for c in model.calls:
        text = " ".join(str(c.messages[-1].content).replace("│", " ").split())
        assert " ".join(uniforms.passage_index[c.target].text.split()[:8]) in text
    for c in answers:
        asked_about = re.search(r"(S\d+\.\d+), made earlier by (\w+)", str(c.messages[-1].content))
        row = uniforms.passage_index[asked_about.group(1)]
        assert row.speaker == asked_about.group(2) != uniforms.passage_index[c.target].speaker
        assert " ".join(row.text.split()[:6]) in " ".join(str(c.messages[-1].content).replace("│", " ").split())
    # the verdicts come from the ledger, in every dimension, and the result carries what they were computed from
    for d in result.dimensions:
        assert d.ledger is not None and d.ledger.dimension == d.name
        assert not d.verdict.not_judged and len(d.speech_judgments) == len(uniforms.speeches)
    back = JudgeResult.model_validate_json(result.model_dump_json())
    assert back.flow == result.flow and back.dimensions[0].ledger == result.dimensions[0].ledger
    assert result.checks.flags == ()
    assert all(c.own_cited >= 1 for c in result.checks.comments)


def blind_profile(tmp_path, model: str, blind: tuple[str, ...] = ("evidence",)) -> str:
    """A profile of ``model`` (with today's prompts) in which the decisions ``blind`` are at chance and the rest
    carry with no map: written as `debatrix profile` writes one."""
    from debatrix.core.profile import DecisionProfile, Interval, JudgeProfile, ModelIdentity, prompts_sha256

    decisions = {k: DecisionProfile(kind=k, question=f"question {k}", gold="constructed", items=200, debates=24,
                                    auc=Interval(value=0.5, low=0.42, high=0.58) if k in blind else
                                    Interval(value=0.8, low=0.75, high=0.85))
                 for k in ("argues", "evidence", "clear", "answers")}
    prof = JudgeProfile(model=ModelIdentity(name=model), prompts_sha256=prompts_sha256(), measured="2026-12-02",
                        decisions=decisions)
    path = tmp_path / f"{model}.profile.json"
    path.write_text(prof.model_dump_json())
    return str(path)


@pytest.mark.parametrize("questions", ["apart", "together"])
async def test_a_decision_its_profile_marks_blind_is_not_asked_unless_every_kind_is_wanted(uniforms, tmp_path,
                                                                                          questions):
    """Where the model's profile marks the evidence decision blind, it decides nothing and is not paid for (source
    not judged, the reason naming the model, its figure and the profile's date); ``flow_ask="all"`` asks it (to
    measure it) and changes no verdict; the same model unprofiled asks it and judges source. The planner's count is
    the most the run sends either way (on the fake server, which answers JSON with probabilities)."""
    from debatrix import LLMSettings
    from debatrix.graphs.build import plan_run
    from debatrix.testing import FakeOpenAIServer

    path = blind_profile(tmp_path, "fake-model")

    async def run(**extra):
        with FakeOpenAIServer() as srv:
            run_settings = settings().model_copy(update={
                "flow_questions": questions, "profile": path, **extra,
                "llm": LLMSettings(base_url=srv.base_url, model="fake-model", max_retries=0)})
            result = await ajudge_debate(uniforms, run_settings)
            sent = [str(b["messages"][-1]["content"]) for b in srv.requests]
        assert result.status is Status.COMPLETE, result.incomplete_reason
        assert result.usage.llm_calls == len(sent) <= plan_run(uniforms, run_settings).calls
        return result, sum(text.count("cite evidence") for text in sent), len(sent)

    judged, evidence, calls = await run()
    assert evidence == 0
    source = next(d for d in judged.dimensions if d.name == "source").verdict
    assert source.not_judged.startswith("the answers of fake-model to \"question evidence\"")
    assert "0.50 [0.42, 0.58]" in source.not_judged and "2026-12-02" in source.not_judged
    assert judged.profile.startswith("fake-model (profile of 2026-12-02")
    every, evidence_all, calls_all = await run(flow_ask="all")
    assert evidence_all == len(uniforms.passages)
    assert calls_all == calls + (0 if questions == "together" else len(uniforms.passages))
    if questions == "apart":  # together, the fake's answers are a hash of the whole request, which the question adds to
        assert [d.verdict.winner for d in every.dimensions] == [d.verdict.winner for d in judged.dimensions]
        assert every.general.verdict.winner == judged.general.verdict.winner
    assert all(m.evidence is None for f in judged.flow for m in f.marks)
    assert all(m.evidence is not None for f in every.flow for m in f.marks)

    sourced, evidence_judged, _ = await run(profile="none")
    assert evidence_judged == len(uniforms.passages)
    assert not next(d for d in sourced.dimensions if d.name == "source").verdict.not_judged
    assert sourced.profile.startswith("unprofiled (--profile none)")


async def test_a_decision_answered_outside_its_options_is_missing_and_the_debate_is_still_judged(uniforms):
    def answer(call):
        if call.target == "S2.1" and _kind(call) == "argues":
            return "Perhaps."
        return decided(call.messages, call.choices)

    model = ScriptedChatModel(script={"flow_speech": answer})
    result = await ajudge_debate(uniforms, settings(), model)
    # complete where the winners hold with that decision either way, else incomplete naming it (test_flow_faults)
    assert result.status is Status.COMPLETE or "whether S2.1 argues" in result.incomplete_reason
    assert sum(sum(f.decided.values()) for f in result.flow) == len(model.calls) - 1  # the others all kept
    second = result.flow[1]
    assert "S2.1" in second.missing and next(m for m in second.marks if m.id == "S2.1").argument is None
    assert any("S2.1" in w for w in result.general.verdict.warnings)
    assert result.usage.llm_calls == len(model.calls)  # the missing decision's call is counted


async def test_the_flow_verdict_follows_the_decisions_not_the_listing(uniforms):
    """Ana's passages argued with evidence and Ben's not: Ana wins argument (and source, where it is judged),
    however listed."""
    def answer(call):
        if _kind(call) in ("argues", "evidence"):
            return "yes" if uniforms.passage_index[call.target].speaker == uniforms.debaters[0].name else "no"
        return "no"

    for debate in (uniforms, uniforms.model_copy(update={"debaters": tuple(reversed(uniforms.debaters))})):
        result = await ajudge_debate(debate, settings(), ScriptedChatModel(script={"flow_speech": answer}))
        first = uniforms.debaters[0].name
        assert result.dimension("argument").verdict.winner == first
        assert result.dimension("source").verdict.winner == first
        assert result.winner == first


async def test_the_report_the_page_and_the_summary_show_each_rows_status_in_the_same_words(uniforms):
    import html as H
    import io

    from rich.console import Console

    from debatrix.app.terminal import print_summary
    from debatrix.app.report import result_html
    from debatrix.app.ui import summary
    from debatrix.core.flow import tally_line, weighed_line
    from debatrix.core.flow import STATUS_MEANING

    theo_first = next(p.id for p in uniforms.passages if p.speaker == "Theo")

    def answer(call):  # Maya's passages argue; Theo's first passage answers what it is asked about, no other does
        if _kind(call) == "argues":
            return "yes" if uniforms.passage_index[call.target].speaker == "Maya" else "no"
        return "yes" if _kind(call) == "answers" and call.target == theo_first else "no"

    result = await ajudge_debate(uniforms, settings(), ScriptedChatModel(script={"flow_speech": answer}))
    led = result.flow_ledger
    page = summary(result)
    rows = page["flow"]["rows"]
    maya = [p.id for p in uniforms.passages if p.speaker == "Maya"]
    assert [c["id"] for r in rows for c in r["cells"] if c["kind"] == "own"] == maya  # every row is Maya's
    # Theo spoke after Maya's first speech and answered what he was asked: those rows fell
    assert any(r["status"] == "refuted" for r in rows)
    assert all(set(d["comments"]) == {"Maya", "Theo"} for d in page["dimensions"] if not d["not_judged"])
    html = result_html(result)
    out = io.StringIO()
    print_summary(result, Console(file=out, width=400))
    text = out.getvalue()
    # one status per row, decided once: the page, the report and the summary say the same word for each row
    for t in led.threads:
        assert next(r["status"] for r in rows if r["id"] == t.id) == t.status
        row_html = re.search(rf'<tr class="thread (\w+)" data-row="{re.escape(t.id)}">(.*?)</tr>', html, re.S)
        assert row_html and row_html.group(1) == t.status
        # and every cell's word, decided with the row: the page's cells and the report's say it, in speech order
        page_words = [c["words"] for r in rows if r["id"] == t.id for c in r["cells"] if c["kind"] not in ("", "own")]
        report_words = re.findall(r'<span class="small (?:answers|ignores|unsure)"[^>]*>([^<]*)</span>',
                                  row_html.group(2))
        assert [w.split(" by ")[0] for c in page_words for w in c.split("; ")] == list(t.cell_words), page_words
        assert [H.unescape(w) for w in report_words] == page_words
    for tally in led.tallies:
        line = tally_line(led, tally.debater)
        assert line in text and line in H.unescape(html) and line in page["flow"]["lines"]
    for status in {t.status for t in led.threads}:
        assert f"{status}: {STATUS_MEANING[status]}" in text and STATUS_MEANING[status] in H.unescape(html)
        assert page["flow"]["legend"][status] == STATUS_MEANING[status]
    assert "Theo: 0 of 0 arguments standing" in text
    # the counts are rows, as a coach counts them; what the verdict weighs is said beside them, the same everywhere
    maya_rows = [t for t in led.threads if t.speaker == "Maya"]
    up = sum(t.status != "refuted" for t in maya_rows)
    assert f"Maya: {up} of {len(maya_rows)} arguments standing" in text
    weighed = weighed_line(led)
    assert weighed in " ".join(text.split()) and weighed in H.unescape(html) and page["flow"]["weighed"] == weighed
    # each answer cell says in words whether it was answered, its figures on hover, on the page as in the report
    cells = [c for r in rows for c in r["cells"] if c["kind"] in ("answers", "ignores", "unsure")]
    assert cells and all(c["words"] in ("asked, not answered", f"answered by {theo_first}",
                                        f"partly answered by {theo_first}") for c in cells)
    for c in cells:
        # a scripted answer is taken as certain: the hover says the answer, not a probability it never gave
        assert f'title="{c["hover"]}"' in H.unescape(html)
        assert ("P(it answers)" if led.figures == "P" else "does it answer?") in c["hover"]


async def test_scores_are_the_decisions_on_one_to_ten_and_the_panel_is_a_distribution(uniforms):
    """Every speech's score is 1 + 9 × its own decisions' mean for the dimension (argument: P(argues); source:
    P(evidence); language: P(clear)), every debater's 1 + 9 × their probability of winning the dimension, and the panel's probabilities
    (as the run builds them) are the judged dimensions' weighted mean and sum to 1."""
    result = await ajudge_debate(uniforms, settings(), ScriptedChatModel())  # decisions differing by question
    assert result.status is Status.COMPLETE
    marks = {f.index: f.marks for f in result.flow}
    field = {"argument": "argument", "source": "evidence", "language": "clear"}
    for d in result.dimensions:
        if d.verdict.not_judged:
            continue
        for s in d.speech_judgments:
            values = [getattr(m, field[d.name]) for m in marks[s.index]]
            expected = 1 + 9 * sum(values) / len(values)
            assert s.expected_score == pytest.approx(expected, abs=2e-3) and s.score == round(expected)
        for j in d.debater_judgments:
            assert j.score == pytest.approx(1 + 9 * d.verdict.probabilities[j.debater], abs=2e-3)
        assert sum(d.verdict.probabilities.values()) == pytest.approx(1, abs=1e-3)
    panel = result.general.verdict.probabilities
    assert sum(panel.values()) == pytest.approx(1, abs=1e-3)
    judged = [d for d in result.dimensions if not d.verdict.not_judged]
    total = sum(d.weight for d in judged)
    for name, p in panel.items():
        assert p == pytest.approx(sum(d.weight * d.verdict.probabilities[name] for d in judged) / total, abs=2e-3)
    assert {s.expected_score for d in judged for s in d.speech_judgments} != {None} and len(
        {s.expected_score for s in judged[0].speech_judgments}) > 1  # the scores vary with the decisions


DIMENSION = """name: {name}
description: how well the arguments are backed
weight: 1
{measure}prompts:
  analyze: Focus on the evidence.
  context: Use the earlier material.
  judge: Judge who backed their arguments better.
  judge_debate: Judge the debate on evidence only.
"""


async def test_a_dimension_added_by_one_yaml_file_is_judged_by_the_measure_it_names(uniforms, tmp_path):
    """A user's dimension names a registered measure and nothing else: the flow reads it so (its verdict, scores
    and notes are the argument measure's, under its own name), beside the built-in argument dimension."""
    (tmp_path / "evidence_use.yaml").write_text(DIMENSION.format(name="evidence_use", measure="measure: argument\n"))
    s = settings().model_copy(update={"dimensions": ("argument", "source", "evidence_use"),
                                      "dimension_dirs": (tmp_path,)})
    result = await ajudge_debate(uniforms, s, ScriptedChatModel())
    assert result.status is Status.COMPLETE, result.incomplete_reason
    mine, source = result.dimension("evidence_use"), result.dimension("argument")
    assert mine.ledger.measure == "argument" and mine.verdict.probabilities == source.verdict.probabilities
    assert [j.expected_score for j in mine.speech_judgments] == [j.expected_score for j in source.speech_judgments]
    assert [a.analysis for a in mine.analyses] == [a.analysis for a in source.analyses]
    assert "arguments standing" in mine.verdict.comment and mine.verdict.winner is not None


@pytest.mark.parametrize("measure, words", [
    ("measure: evidenz\n", "unknown flow measure 'evidenz'; choose one of: argument, source, language, clash, mean"),
    ("", "dimension evidence_use names no flow measure: add `measure: NAME`")])
def test_a_dimension_with_an_unknown_or_no_measure_is_refused_in_one_line_before_any_call(tmp_path, measure, words):
    from typer.testing import CliRunner

    from debatrix.app.cli import app

    from .conftest import EXAMPLES

    (tmp_path / "evidence_use.yaml").write_text(DIMENSION.format(name="evidence_use", measure=measure))
    res = CliRunner().invoke(app, ["judge", str(EXAMPLES / "school_uniforms.yaml"), "--dimension-dir", str(tmp_path),
                                   "--dimensions", "argument,evidence_use", "--base-url", "http://127.0.0.1:9/v1",
                                   "--model", "m"], env={"COLUMNS": "200"})
    assert res.exit_code == 2, res.output
    said = " ".join(res.output.split())
    assert words in said and "Traceback" not in res.output


async def test_an_unprofiled_endpoint_model_is_judged_on_every_dimension_and_every_surface_says_so_once(uniforms):
    """A model nobody profiled (the fake server's): every dimension judged on its own probabilities, and the
    summary, the report and the page each say once that it is unprofiled, with the command that profiles it."""
    import html as H
    import io

    from rich.console import Console

    from debatrix import LLMSettings
    from debatrix.app.report import result_html
    from debatrix.app.terminal import print_summary
    from debatrix.app.ui import summary
    from debatrix.testing import FakeOpenAIServer

    with FakeOpenAIServer() as srv:
        run = settings().model_copy(update={"llm": LLMSettings(base_url=srv.base_url, model="fake-model",
                                                                max_retries=0)})
        result = await ajudge_debate(uniforms, run)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    assert all(not d.verdict.not_judged for d in result.dimensions)
    note = result.profile
    assert note.startswith("unprofiled") and "debatrix profile --base-url URL --model fake-model" in note
    out = io.StringIO()
    print_summary(result, Console(file=out, width=2000))
    assert out.getvalue().count(note) == 1
    assert H.unescape(result_html(result)).count(note) == 1
    assert summary(result)["profile"] == note


async def test_a_model_that_says_yes_at_97_to_everything_fells_every_row_it_is_asked_about(uniforms):
    """Unprofiled, every answer at P 0.97: every row a later speech of the other side was asked about counts as
    answered (or extended, where its answer was itself answered), and the verdict is no 50/50 tie by
    construction: each side's standing is what its rows' fates make it."""
    from debatrix import LLMSettings
    from debatrix.testing import FakeOpenAIServer

    with FakeOpenAIServer(sure=0.97) as srv:
        run = settings().model_copy(update={"llm": LLMSettings(base_url=srv.base_url, model="sure-model",
                                                                max_retries=0)})
        result = await ajudge_debate(uniforms, run)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    led = result.flow_ledger
    asked = [t for t in led.threads if t.cells]
    assert asked and all(t.status in ("refuted", "extended") for t in asked)
    assert all(c.counts == pytest.approx(0.97) for t in asked for c in t.cells)
    dropped = [t for t in led.threads if t.status == "dropped"]
    assert all(not t.cells for t in dropped)  # only a row nobody was asked about is dropped
    v = result.dimension("argument").verdict
    assert v.probabilities and v.probabilities[uniforms.debaters[0].name] != pytest.approx(0.5, abs=1e-3)
