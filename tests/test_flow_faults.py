"""The default mode (the flow) against a server that misbehaves on its small decisions, over real HTTP on 127.0.0.1:
whatever the fault, a run whose decisions were not made names no winner, on any surface (result, summary), and an
answer that is none of the options is a missing decision, never a guess."""

from __future__ import annotations

import html
import json
import re

import pytest

from debatrix import JudgeSettings, LLMSettings, MemorySettings
from debatrix.app.api import ajudge_debate
from debatrix.core.results import Status
from debatrix.testing import FakeOpenAIServer, Fault

from .conftest import EXAMPLES


def settings(srv: FakeOpenAIServer, questions: str = "auto", **llm) -> JudgeSettings:
    base = dict(base_url=srv.base_url, model="fake-model", max_retries=1, retry_max_wait=0.1, timeout=2.0)
    return JudgeSettings(mode="flow", llm=LLMSettings(**{**base, **llm}), memory=MemorySettings(embedding="hash"),
                         flow_questions=questions)


def answering(content, logprobs: bool = False):
    """A responder that answers every request with ``content`` (None: a null content), without probabilities
    unless ``logprobs`` (then the answer's own token, at certainty, as its only alternative)."""
    def respond(body, n):
        choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        if logprobs and content:
            choice["logprobs"] = {"content": [{"token": content[:10], "logprob": 0.0,
                                               "top_logprobs": [{"token": content[:10], "logprob": 0.0}]}]}
        return {"id": f"x{n}", "object": "chat.completion", "created": 0, "model": "fake-model", "choices": [choice],
                "usage": {"prompt_tokens": 30, "completion_tokens": 1, "total_tokens": 31}}
    return respond


# every one of these answers none of the options ("yes", "no"): each decision is missing
NOT_AN_OPTION = {
    "Maybe": answering("Maybe"),
    "Not sure": answering("Not sure"),
    "Yesterday": answering("Yesterday"),
    "empty": answering(""),
    "null content": answering(None),
    "a JSON object": answering('{"answer": "yes"}'),
    "huge": answering("Perhaps " * 5000),
    "Maybe, with probabilities": answering("Maybe", logprobs=True),
}


def _winners(result) -> list[str]:
    verdicts = [d.verdict for d in (*result.dimensions, result.general) if d is not None and d.verdict is not None]
    return [v.winner for v in verdicts if v.winner is not None]


@pytest.mark.parametrize("questions", ["apart", "together"])
@pytest.mark.parametrize("case", list(NOT_AN_OPTION))
async def test_a_flow_whose_decisions_were_not_made_names_no_winner(uniforms, case, questions):
    with FakeOpenAIServer(responder=NOT_AN_OPTION[case]) as srv:
        result = await ajudge_debate(uniforms, settings(srv, questions))
        sent = len(srv.requests)
    assert result.status is Status.INCOMPLETE, case
    assert _winners(result) == [] and result.winner is None, case
    assert all(f.decided == {} for f in result.flow) and result.usage.llm_calls == sent  # every call counted
    for d in result.dimensions:
        assert d.verdict is None or d.verdict.not_judged, (case, d.name)
        assert not d.debater_judgments and not d.speech_judgments
    assert "missing" in result.incomplete_reason and "argument" in result.incomplete_reason


@pytest.mark.parametrize("fault", [Fault(reset=True), Fault(500), Fault(200, body="{not json")])
async def test_a_flow_that_loses_its_server_names_no_winner(uniforms, fault):
    with FakeOpenAIServer(responder=lambda body, n: fault) as srv:
        result = await ajudge_debate(uniforms, settings(srv))
    assert result.status is Status.INCOMPLETE and _winners(result) == []


def _question(body) -> str:
    return json.dumps(body["messages"], sort_keys=True)


async def _judged_with(uniforms, question: str | None, content: str | None):
    """The debate judged by the fake server's own answers, but for ``question``, answered ``content`` (with
    probabilities: the answer at certainty)."""
    def respond(body, n):
        return answering(content, logprobs=True)(body, n) if _question(body) == question else None

    with FakeOpenAIServer(responder=respond) as srv:
        result = await ajudge_debate(uniforms, settings(srv, "apart"))  # one request, one decision
        return result, [_question(b) for b in srv.requests]


async def test_one_missing_decision_names_only_a_winner_it_would_name_with_that_decision_either_way(uniforms):
    """Each decision in turn answered outside the options: the run names a winner (in a dimension or overall)
    only where the same debate, that decision answered yes and answered no, names the same one; where the two
    differ it names none there, is not complete and says which decision the winner would rest on. Before, a
    missing "argues" weighed as 0.5 (or nothing) and the winner it gave was reported complete."""
    _, questions = await _judged_with(uniforms, None, None)
    flipped = held = 0
    for q in questions:
        junk, _ = await _judged_with(uniforms, q, "Maybe")
        yes, _ = await _judged_with(uniforms, q, "yes")
        no, _ = await _judged_with(uniforms, q, "no")
        assert sum(sum(f.missed.values()) for f in junk.flow) == 1
        assert any("missing" in w for w in junk.general.verdict.warnings)
        for name in [d.name for d in junk.dimensions] + ["general"]:
            got = junk.general if name == "general" else junk.dimension(name)
            ways = {(r.general if name == "general" else r.dimension(name)).verdict.winner for r in (yes, no)}
            if len(ways) > 1:
                flipped += 1
                assert got.verdict.winner is None, (name, q)
                assert junk.status is Status.INCOMPLETE and "rests on missing decisions" in junk.incomplete_reason
            elif got.verdict.winner is not None:
                held += 1
                assert {got.verdict.winner} == ways, (name, q)
    assert flipped and held  # both cases were met: the test could fail either way


def test_the_summary_of_an_undecided_flow_prints_no_winner(tmp_path):
    from typer.testing import CliRunner

    from debatrix.app.cli import app

    with FakeOpenAIServer(responder=answering("Maybe")) as srv:
        out = tmp_path / "r.json"
        res = CliRunner().invoke(app, ["judge", str(EXAMPLES / "school_uniforms.yaml"), "--base-url", srv.base_url,
                                       "--model", "fake-model", "--embedding", "hash", "--out", str(out)],
                                 env={"OPENAI_API_KEY": "x"})
    assert res.exit_code == 3, res.output
    assert "Winner: Maya" not in res.output and "Winner: Theo" not in res.output
    assert "not judged" in res.output and "Traceback" not in res.output
    data = json.loads(out.read_text())
    assert data["status"] == "incomplete" and data["general"]["verdict"]["winner"] is None


@pytest.mark.parametrize("questions", ["apart", "together"])
async def test_without_probabilities_the_flow_says_its_figures_are_counts_of_answers(uniforms, questions):
    def plain(body, n):  # the fake server's own answer, its probabilities dropped
        done = FakeOpenAIServer().completion(body, n)
        done["choices"][0].pop("logprobs", None)
        return done

    with FakeOpenAIServer(responder=plain) as srv:
        result = await ajudge_debate(uniforms, settings(srv, questions))
    assert result.status is Status.COMPLETE
    v = result.general.verdict
    assert v.method == "argmax" and v.calibrated_probability is None and v.confidence == ""
    assert any("shares of answers, not probabilities" in w for w in v.warnings)
    argument = result.dimension("argument").verdict
    assert "share of answers" in argument.comment and "(P " not in argument.comment
    assert all(f.counted == sum(f.decided.values()) > 0 for f in result.flow)


@pytest.mark.parametrize("questions", ["apart", "together"])
async def test_without_probabilities_sampled_answers_estimate_them(uniforms, questions):
    """--decision-samples N: each decision asked once with n=N at temperature 1, no log probabilities asked; the
    options' shares among the N answers are its probabilities, and every surface says they are estimates."""
    seen = []

    def plain(body, n):  # the fake server's answers, its probabilities dropped: only the samples say anything
        seen.append(body)
        done = FakeOpenAIServer().completion(body, n)
        for c in done["choices"]:
            c.pop("logprobs", None)
        return done

    with FakeOpenAIServer(responder=plain) as srv:
        result = await ajudge_debate(uniforms, settings(srv, questions, decision_samples=8))
    assert result.status is Status.COMPLETE, result.incomplete_reason
    asked = [b for b in seen if b.get("n")]
    assert asked and all(b["n"] == 8 and b["temperature"] == 1.0 and not b.get("logprobs") for b in asked)
    v = result.general.verdict
    assert v.method == "sampled" and any("answers sampled at temperature 1" in w for w in v.warnings)
    assert "P estimated from samples" in result.dimension("argument").verdict.comment
    values = [m.argument for f in result.flow for m in f.marks]
    assert all(round(x * 8) == x * 8 for x in values)  # eighths: shares of 8 answers
    assert len(set(values)) > 1 and any(0 < x < 1 for x in values)  # estimates, not answers taken as certain
    assert all(f.sampled == sum(f.decided.values()) and f.counted == 0 for f in result.flow)


async def test_ids_the_debaters_typed_are_not_the_judges_citations():
    """Speeches that write passage ids themselves ("As S2.1 concedes", "[S1.1 refuted]", a line "S3.2:", "S9.9"):
    the judge's sheet quotes their first words, and no check blames the judge for an id only a debater wrote."""
    from debatrix.core.models import Debate, Debater, Speech

    words = " ".join(f"point{k}" for k in range(60))
    debate = Debate(id="ids", motion="This house would ban homework.", debaters=(
        Debater(name="Maya", side="pro"), Debater(name="Theo", side="con")), speeches=(
        Speech(speaker="Maya", content=f"S9.9 is where I start. Homework wastes evenings. {words}."),
        Speech(speaker="Theo", content=f"As S2.1 concedes, and [S1.1 refuted] shows, homework builds habits. {words}."),
        Speech(speaker="Maya", content=f"S3.2: Theo's habits claim has no study behind it, S1.3 agrees. {words}."),
        Speech(speaker="Theo", content=f"S4.1 answers S1.1: habits are the study. {words}.")))
    with FakeOpenAIServer() as srv:
        result = await ajudge_debate(debate, settings(srv))
    assert result.status is Status.COMPLETE, result.incomplete_reason
    assert result.checks.flags == ()
    text = " ".join(a.analysis for d in result.dimensions for a in d.analyses)
    assert "S9.9" in text or "S2.1 concedes" in text  # the debaters' words are quoted, and not counted as citing


def test_the_missing_note_and_quoted_words_are_not_citations_but_the_judges_own_wrong_ids_are():
    from datetime import UTC, datetime

    from debatrix.core.models import Debate, DebaterJudgment, Debater, SpeechAnalysis, Speech
    from debatrix.core.results import DimensionResult, JudgeResult
    from debatrix.graphs.finish import check_result

    words = " ".join(f"w{k}" for k in range(60))
    d = Debate(id="d", motion="m", debaters=(Debater(name="Maya", side="pro"), Debater(name="Theo", side="con")),
               speeches=(Speech(speaker="Maya", content=words + "."), Speech(speaker="Theo", content=words + ".")))
    analyses = (SpeechAnalysis(dimension="argument", index=1, speaker="Theo",
                               analysis="S2.1 “As S1.1 concedes, S7.7”: argument 0.60. missing: whether S2.1 answers "
                                        "S1.1."),)
    comments = {"Maya": "Standing: S1.1 “S2.1 is wrong”.", "Theo": "Standing: S2.1; and S1.1, S9.9."}
    result = JudgeResult(debatrix_version="t", debate_id=d.id, motion=d.motion, format=d.format, mode="flow",
                         status="complete", started_at=datetime.now(UTC), finished_at=datetime.now(UTC),
                         dimensions=(DimensionResult(name="argument", weight=1, allow_tie=False, analyses=analyses,
                                                     debater_judgments=tuple(
                             DebaterJudgment(dimension="argument", debater=n, comment=c, score=5)
                             for n, c in comments.items())),))
    assert check_result(result, d).flags == ("argument comment on Theo cites S9.9, S1.1 wrongly",)


@pytest.mark.parametrize("questions", ["apart", "together"])
async def test_every_answer_paid_before_the_server_failed_is_kept_in_the_result(uniforms, questions):
    """The server answers the first requests, then fails for good mid-speech: the run ends incomplete, with no
    winner, and every decision it was answered is in the result's flow (none paid for and lost), every request
    counted."""
    answered = {"n": 0}
    keep = 4

    def respond(body, n):
        if answered["n"] < keep:
            answered["n"] += 1
            return None
        return Fault(500)

    with FakeOpenAIServer(responder=respond) as srv:
        result = await ajudge_debate(uniforms, settings(srv, questions))
        sent = len(srv.requests)
    assert result.status is Status.INCOMPLETE and _winners(result) == []
    assert result.usage.llm_calls + result.usage.retries == sent  # every request, the failed ones' retries too
    kept = sum(sum(f.decided.values()) for f in result.flow)
    per_request = 1 if questions == "apart" else None
    if per_request:
        assert kept == keep
    else:  # a request asks all of a passage's questions: each answered request gave at least one (whether it
        assert kept >= keep  # argues), and more where the passage was asked about earlier points
    assert any("the run stopped" in f.missing for f in result.flow)


P_FIGURE = re.compile(r"\bP ?[01]\.\d\d|\bP\([^)]{0,40}\) ?[01]\.\d\d|mean P|\(P [01]")


def test_behind_a_server_without_probabilities_no_surface_shows_a_p_figure(tmp_path):
    """Behind a server that gives no log probabilities every decision is the model's answer taken as certain: the
    terminal said "share of answers", but the report and the page printed "S3.1 answers Theo's S2.1? P 1.00" and
    "mean P 1.00", probabilities the model never gave. Each surface now says the answer (yes, no, a share); a
    verdict with nothing decided says its method is "none", not "logprobs"."""
    from typer.testing import CliRunner

    from debatrix.app.cli import app
    from debatrix.app.report import result_html
    from debatrix.app.ui import page_sheet, summary
    from debatrix.core.flow import flow_line
    from debatrix.core.results import JudgeResult

    with FakeOpenAIServer(profile="ollama") as srv:
        out = tmp_path / "r.json"
        res = CliRunner().invoke(app, ["judge", str(EXAMPLES / "four_day_week.yaml"), "--base-url", srv.base_url,
                                       "--model", "fake-model", "--embedding", "hash", "--out", str(out)],
                                 env={"OPENAI_API_KEY": "x"})
    assert res.exit_code == 0, res.output
    result = JudgeResult.model_validate_json(out.read_text())
    assert result.flow_ledger is not None and result.flow_ledger.figures == "answers"
    assert {d.verdict.method for d in result.dimensions if d.verdict} == {"argmax"}
    surfaces = {"terminal": res.output, "report": html.unescape(re.sub(r"<[^>]+>", " ", result_html(result))),
                "page": json.dumps([page_sheet(result), summary(result)], ensure_ascii=False),
                "progress": " ".join(flow_line(f) for f in result.flow)}
    for name, text in surfaces.items():
        assert not P_FIGURE.search(text), (name, P_FIGURE.search(text).group(0), text[max(0, P_FIGURE.search(
            text).start() - 80):P_FIGURE.search(text).end() + 40])
    assert "answers" in surfaces["progress"] and re.search(r"\? (yes|no)\b", surfaces["progress"])


async def test_a_verdict_with_nothing_decided_says_no_method_made_its_figures(uniforms):
    with FakeOpenAIServer(responder=answering("Maybe")) as srv:
        undecided = await ajudge_debate(uniforms, settings(srv))
    assert {d.verdict.method for d in undecided.dimensions if d.verdict} == {"none"}
