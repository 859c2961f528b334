"""What a verdict's confidence is shown as: a calibrated percentage only where a map exists, "too close to call"
near even, "uncalibrated" without a map, nothing without probabilities."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from debatrix.core.models import TOO_CLOSE
from debatrix.core.probabilities import UNCALIBRATED, CalibrationMap, maps, shown

# a map that shrinks the model's overconfidence: logit halved
HALF = CalibrationMap(model="m", mode="direct", a=0.5, b=0.0, n=40)


def test_no_probabilities_no_percentage():
    assert shown(None, "logprobs", HALF) == (None, "")
    assert shown(1.0, "argmax", HALF) == (None, "")  # the orders' votes agreeing is no probability


def test_without_a_map_the_figure_is_called_uncalibrated():
    assert shown(0.97, "logprobs", None) == (None, UNCALIBRATED)


def test_a_map_calibrates_and_near_even_is_too_close_to_call():
    q, text = shown(0.97, "logprobs", HALF)
    assert 0.84 < q < 0.86 and text == f"{q:.0%}"
    assert shown(0.6, "logprobs", HALF)[1] == TOO_CLOSE  # 0.55 after calibration
    assert HALF(0.5) == 0.5 and 0 < HALF(0.0) < HALF(1.0) < 1  # clipped, not infinite


def test_shipped_maps_are_read():
    assert all(isinstance(k, tuple) and v.n > 0 for k, v in maps().items())
    # the default local model in direct mode, fitted on DebateArt: its 0.99 is right about 4 times in 5; in
    # debatrix mode its panel's confidence says next to nothing (0.92 on average for 57% right), so the map brings
    # every figure near the base rate and most read "too close to call"; the other iterative modes, never fitted,
    # stay uncalibrated
    direct = maps()[("qwen2.5-coder-1.5b", "direct", "grouped")]
    assert direct.n >= 20 and 0.7 < direct(0.99) < 0.9 and "debatrix bench calibrate" in direct.source
    panel = maps()[("qwen2.5-coder-1.5b", "debatrix", "grouped")]
    assert panel.n >= 10 and 0.45 < panel(0.5) < panel(0.99) < 0.6 and shown(0.99, "logprobs", panel)[1] == TOO_CLOSE
    assert not any(k[:2] == ("qwen2.5-coder-1.5b", "chronological") for k in maps())
    # read once in speaking order (the default where a place prior exists), right on 58% of 26 DebateArt
    # verdicts: never shown above what its more confident half were right on, however sure the model was
    shared = maps()[("qwen2.5-coder-1.5b", "direct", "shared")]
    assert shared.n >= 20 and shared(1.0) == shared.ceiling < 0.75 and shared(0.6) < 0.5 + 0.1


@given(st.floats(-3, 3), st.floats(0.05, 3), st.floats(0.55, 1.0), st.floats(0.0, 1.0))
@hsettings(max_examples=200, deadline=None)
def test_a_map_is_symmetric_in_the_debaters_so_a_named_winner_is_never_shown_below_even(b, a, top, p):
    """Whatever a map was fitted as (the read-once map shipped with b = -0.51 showed a raw 0.52 as 39%), the
    other debater's probability maps to the complement, an even call stays even, and a winner more probable than
    not is shown at 50% or more."""
    m = CalibrationMap(model="m", mode="direct", a=a, b=b, n=10, ceiling=top)
    assert m(1 - p) == pytest.approx(1 - m(p), abs=1e-9)
    assert m(0.5) == pytest.approx(0.5)
    if p >= 0.5:
        assert m(p) >= 0.5 - 1e-12
    shared = maps()[("qwen2.5-coder-1.5b", "direct", "shared")]
    assert shared(0.52) >= 0.5


def test_a_map_never_shows_more_than_its_ceiling():
    capped = HALF.model_copy(update={"ceiling": 0.7})
    assert capped(0.6) == HALF(0.6) and capped(0.999) == 0.7 == capped(1.0)
    assert shown(1.0, "logprobs", capped) == (0.7, "70%")
    assert HALF.ceiling == 1.0  # a map shipped without one (fitted before it existed) is unchanged


def test_the_shipped_place_prior_is_the_default_models_lean_toward_the_first_speaker():
    from debatrix.core.probabilities import place_prior_for, resolved_layout

    prior = place_prior_for("qwen2.5-coder-1.5b", "direct")
    assert prior is not None and prior.n >= 20 and 0.5 < prior.shares[0] < 0.7 and sum(prior.shares) == 1.0
    assert "out of sample" in prior.source and resolved_layout("auto", "qwen2.5-coder-1.5b", "direct", 2) == "shared"
    assert place_prior_for("qwen2.5-coder-1.5b", "debatrix") is None  # its analyses are read grouped


def test_a_reason_shown_in_one_line_keeps_its_headings_readable():
    from debatrix.core.probabilities import reason_of

    # the demo's panel reason on the local model (real shape): "Ana" on a line of its own, then her paragraph
    assert reason_of("Ana\n\nAna clearly articulated the problem with tired staff.\nWinner: Ana") == (
        "Ana: Ana clearly articulated the problem with tired staff.")
    assert reason_of("Sir.Lancelot\nHe won.") == "Sir.Lancelot: He won."
    assert reason_of("Ana:\nShe argued.") == "Ana: She argued."
    assert reason_of("Ana argued well.\nBen") == "Ana argued well. Ben"  # a sentence is no heading
    assert reason_of("The overall winner is Alec.\n\nAlec argued well.") == "The overall winner is Alec. Alec argued well."


@pytest.mark.parametrize("mode, panel", [("debatrix", True), ("direct", False)])
async def test_a_modes_map_calibrates_the_verdict_it_was_fitted_on(uniforms, monkeypatch, mode, panel):
    """A mode's map is fitted on its overall verdict against the audience's: in a panel mode only the panel's
    verdict is calibrated with it, the dimensions' own verdicts are not (nothing was fitted on them); in a mode
    whose one column is the verdict, that column is."""
    from debatrix.app.api import ajudge_debate
    from debatrix.core import results
    from debatrix.graphs import finish
    from debatrix.testing import ScriptedChatModel

    from .conftest import settings

    fitted = CalibrationMap(model="m", mode=mode, a=1.0, b=0.0, n=10, source="test")
    monkeypatch.setattr(finish, "calibration_for", lambda model, m, layout, profile=None: fitted if m == mode else None)
    seen: dict[str, CalibrationMap | None] = {}
    real = results.calibrated

    def recorded(v, cmap):
        seen[v.dimension] = cmap
        return real(v, cmap)

    monkeypatch.setattr(results, "calibrated", recorded)
    result = await ajudge_debate(uniforms, settings(mode), ScriptedChatModel(script={}))
    assert result.status.value == "complete", result.incomplete_reason
    if panel:
        assert seen.pop("general") is fitted and seen and all(c is None for c in seen.values())
    else:
        assert seen == {"general": fitted}


@pytest.mark.parametrize("below, escalated", [(0.75, True), (0.6, False)])
async def test_a_map_end_to_end_shows_its_ceiling_and_escalation_acts_on_the_shown_figure(monkeypatch, below,
                                                                                          escalated):
    """Over HTTP with log probabilities (the flow against the fake server): the probability shown is the map's,
    held at its ceiling, and ``escalate_below`` compares that figure, not the raw one."""
    from debatrix import JudgeSettings, LLMSettings, MemorySettings, load_debate
    from debatrix.app.api import ajudge_debate
    from debatrix.core.settings import EscalationSettings
    from debatrix.graphs import finish
    from debatrix.testing import FakeOpenAIServer

    from .conftest import EXAMPLES

    fitted_maps: dict[str, CalibrationMap] = {}
    monkeypatch.setattr(finish, "calibration_for", lambda model, mode, layout, profile=None: fitted_maps.get(mode))
    debate = load_debate(EXAMPLES / "school_uniforms.yaml")
    with FakeOpenAIServer() as first, FakeOpenAIServer() as second:
        llm = LLMSettings(base_url=first.base_url, model="fake-model", api_key="x")
        settings = JudgeSettings(mode="flow", llm=llm, memory=MemorySettings(embedding="hash"))
        raw = (await ajudge_debate(debate, settings)).general.verdict.probabilities  # no map: the raw figure
        raw_top = max(raw.values())
        assert 0.5 < raw_top < 0.7
        # a map that changes the figure (raw under 0.7, mapped over it: twice the slope that reaches 0.7) and a
        # ceiling that then holds it
        slope = 2 * math.log(0.7 / 0.3) / math.log(raw_top / (1 - raw_top))
        fitted = CalibrationMap(model="fake-model", mode="flow", a=slope, b=0.0, n=40, ceiling=0.7, source="test")
        fitted_maps["flow"] = fitted
        plain = await ajudge_debate(debate, settings)
        v = plain.general.verdict
        raw = v.probabilities[v.winner]
        assert v.method == "logprobs" and raw == raw_top < 0.7 < fitted.model_copy(update={"ceiling": 1.0})(raw)
        assert v.calibrated_probability == round(fitted(raw), 4) == 0.7 and v.confidence == "70%"
        up = settings.model_copy(update={"escalate": EscalationSettings(
            llm=llm.model_copy(update={"base_url": second.base_url}), below=below)})
        result = await ajudge_debate(debate, up)
    assert result.escalation is not None and result.escalation.escalated is escalated, result.escalation
    assert bool(second.requests) is escalated
    if escalated:
        assert "70% is under 75%" in result.escalation.reason


async def test_a_map_merged_into_a_profile_file_calibrates_the_runs_that_read_it(tmp_path):
    """`bench calibrate --into FILE` (here its merge) puts a fitted map into a judge profile file; a run with
    `--profile FILE` then shows the mapped figure, where before it showed "uncalibrated", with no file of the
    package edited. A second merge replaces the mode's map; another model's map is refused."""
    import json

    from debatrix import JudgeSettings, LLMSettings, MemorySettings, load_debate
    from debatrix.app.api import ajudge_debate
    from debatrix.benchmarks.calibration import into_profile
    from debatrix.core.errors import ConfigurationError
    from debatrix.core.profile import JudgeProfile, ModelIdentity, load, prompts_sha256
    from debatrix.testing import FakeOpenAIServer

    from .conftest import EXAMPLES

    profile = tmp_path / "fake.profile.json"
    profile.write_text(JudgeProfile(model=ModelIdentity(name="fake-model"), prompts_sha256=prompts_sha256(),
                                    measured="2026-12-07").model_dump_json())
    debate = load_debate(EXAMPLES / "school_uniforms.yaml")
    with FakeOpenAIServer() as srv:
        settings = JudgeSettings(mode="flow", profile=str(profile), memory=MemorySettings(embedding="hash"),
                                 llm=LLMSettings(base_url=srv.base_url, model="fake-model", api_key="x"))
        before = (await ajudge_debate(debate, settings)).general.verdict
        raw = before.probabilities[before.winner]
        assert before.method == "logprobs" and before.confidence == "uncalibrated" and 0.5 < raw < 0.7
        slope = 2 * math.log(0.7 / 0.3) / math.log(raw / (1 - raw))  # mapped over 0.7, then held at the ceiling
        fitted = CalibrationMap(model="fake-model", mode="flow", a=slope, b=0.0, n=40, ceiling=0.7, source="test")
        calibration = tmp_path / "calibration.json"
        calibration.write_text(json.dumps({"maps": [fitted.model_dump(), fitted.model_copy(update={
            "a": 1.0}).model_dump()]}))
        assert into_profile(calibration, profile) == (2, 0)
        calibration.write_text(json.dumps({"maps": [fitted.model_dump()]}))
        assert into_profile(calibration, profile) == (1, 0)
        assert [m.a for m in load(profile).verdict_maps] == [slope]  # the mode's map replaced, not added
        after = (await ajudge_debate(debate, settings)).general.verdict
    assert after.probabilities == before.probabilities and after.confidence == "70%"
    calibration.write_text(json.dumps({"maps": [fitted.model_copy(update={"model": "other"}).model_dump()]}))
    with pytest.raises(ConfigurationError, match="fitted for other"):
        into_profile(calibration, profile)


def test_an_escalation_keeps_the_first_judges_verdict_and_reads_results_written_before_it_did():
    """Since 1.6 an escalation keeps the first judge's verdict as a Verdict (one type carries a combined winner);
    a result of 1.5 kept its winner and confidence as strings, and still reads, saying the same."""
    from debatrix.core.results import Escalation
    from debatrix.core.models import Judgment, Verdict

    orders = (Judgment(order=("Maya", "Theo"), winner="Maya"), Judgment(order=("Theo", "Maya"), winner="Theo"))
    first = Verdict(dimension="general", comment="", winner="Maya", orders=orders, confidence="too close to call")
    now = Escalation(decided_by="strong", escalated=True, reason="the orders split", first=first,
                     first_status="complete")
    assert "the first judge said Maya (too close to call; 1 of 2 orders agrees)" in now.sentence
    old = Escalation.model_validate({"decided_by": "strong", "escalated": True, "reason": "the orders split",
                                     "first_winner": None, "first_confidence": "61%", "first_agreement": "",
                                     "first_status": "complete"})
    assert old.first is not None and old.first.winner is None and "the first judge said tie (61%)" in old.sentence
    kept = Escalation.model_validate({"decided_by": "weak", "escalated": False, "reason": "kept: orders agree",
                                      "first_winner": None, "first_confidence": "", "first_agreement": ""})
    assert kept.first is None and kept.sentence == "Decided by weak: kept: orders agree"


@hsettings(max_examples=50, deadline=None)
@given(st.sampled_from(["yes", "no", " Yes", "NO"]), st.floats(min_value=-8.0, max_value=0.0))
def test_a_short_answer_gives_every_option_a_probability_even_those_the_server_did_not_list(token, logprob):
    """A server that lists only the answer itself as its alternative (at certainty, or a top-1 server) still gives
    a distribution over every option: the unlisted one at 0 (a missing key crashed the flow on a sure "no")."""
    from debatrix.core.probabilities import option_distribution

    dist = option_distribution([{"token": token, "logprob": logprob,
                                 "top_logprobs": [{"token": token, "logprob": logprob}]}], ["yes", "no"])
    said = token.strip().lower()
    assert dist == {"yes": float(said == "yes"), "no": float(said == "no")}
