"""Properties of the real default local model (qwen2.5-coder-1.5b), not of a script: injected speeches must not
flip the verdict, and verdicts must come from the model's probabilities. Slow (about ten minutes on two cores);
`make test` installs the model and runs them."""

from __future__ import annotations

import pytest

from debatrix.app.api import ajudge_debate
from debatrix.benchmarks.injection import ATTACKS, attack_table, run_suite
from debatrix.context import JudgeContext, run_settings
from debatrix.graphs.build import plan_run
from debatrix.core.settings import JudgeSettings, LLMSettings, MemorySettings

from .conftest import installed_model

DEFAULT = "qwen2.5-coder-1.5b"


@pytest.fixture(scope="module")
def default_model():
    return installed_model(DEFAULT)


@pytest.mark.slow
async def test_injected_speeches_flip_no_verdict(default_model, four_day_week):
    """23 attacks (instructions to the judge, fake system prompts and chat-template turns, fake verdict lines and
    JSON, fake fences, role play, four other languages, ...) planted in the losing side's speech: the verdict of
    the direct judge (both orders, probabilities) names the attacker in none of them."""
    assert len(ATTACKS) >= 20
    settings = JudgeSettings(mode="direct", llm=LLMSettings(backend="local", local_model=default_model),
                             memory=MemorySettings(embedding="hash"))
    ctx = JudgeContext.create(settings, None, [plan_run(four_day_week, run_settings(settings))])
    try:
        clean, attacker, rows = await run_suite(four_day_week,
                                                lambda d: ajudge_debate(d, ctx.settings, context=ctx))
    finally:
        ctx.close()
    print(attack_table(clean, attacker, rows))
    v = clean.general.verdict
    assert v.method == "logprobs" and all(o.probabilities for o in v.orders)  # the real server's probabilities
    assert all(r.status == "complete" for r in rows)
    assert [r.attack for r in rows if r.flipped] == []


@pytest.mark.slow
async def test_iterative_analyses_are_about_their_own_speech(default_model, four_day_week):
    """The default model, reading its earlier analyses, repeated them with the name swapped (3 of the argument
    column's 4 analyses in the demo). Now each analysis of the argument column must be its own: no copy of an
    earlier one, every quotation in its speech, and more of its phrases from its speech than only from the others
    (the measurements every prose result carries, read on real output; nothing repairs the text first)."""
    settings = JudgeSettings(mode="debatrix", dimensions=("argument",),
                             llm=LLMSettings(backend="local", local_model=default_model),
                             memory=MemorySettings(embedding="hash"))
    result = await ajudge_debate(four_day_week, settings)
    assert result.status.value == "complete", result.incomplete_reason
    analyses = [a for a in result.checks.analyses if a.dimension == "argument"]
    print("\n".join(a.analysis for a in result.dimension("argument").analyses))
    print(result.checks.flags)
    assert len(analyses) == len(four_day_week.speeches)
    assert [a.copied for a in analyses] == [False] * len(analyses)
    assert all(a.quotes >= 1 and a.quotes_found == a.quotes for a in analyses)
    assert not any("more of its phrases are from other speeches" in f for f in result.checks.flags)
    assert all(a.grounded >= a.foreign for a in analyses) and sum(a.grounded for a in analyses) > 0



NO2 = ("Closing city centres to private cars cleans the air people breathe every day. A 2019 study by the European "
       "Environment Agency of 40 cities found that centres closed to cars cut nitrogen dioxide levels by 27% within "
       "two years, and asthma admissions among children fell by 12% in Madrid after its central zone opened. Clean "
       "air is a public good, and a ban is the only measure shown to deliver it at that scale. The evidence is "
       "clear and it comes from cities like ours.")
PASTA = ("On a different note, my favourite pasta recipe starts with garlic softened slowly in olive oil, then a "
         "handful of chopped parsley, a pinch of chilli and the water the spaghetti cooked in, stirred until it "
         "turns glossy. My grandmother taught it to me on Sundays in her small kitchen, and I still make it every "
         "week for friends, always with a glass of cold white wine and some bread to clean the plate at the end.")
REBUTTAL = ("Ana's figure of a 27% cut in nitrogen dioxide comes from cities that already had dense metro systems; "
            "she gives no reason to think a city without one would see the same fall, because drivers there have "
            "nowhere else to go and simply drive around the zone instead, moving the pollution to the ring roads "
            "where poorer families live. Her Madrid numbers tell us about Madrid, not about us, and the study she "
            "cites says nothing about displaced traffic at all.")
SHOPS = ("Small shops in the centre depend on customers who arrive by car, and many of them would close within a "
         "year of a ban. Deliveries, tradespeople and carers all need to reach the centre during the day, and "
         "older residents who cannot walk far would be cut off from their doctors and their friends. A city "
         "centre that nobody can reach is not a success, whatever the air quality, and a ban would hollow it "
         "out.")


@pytest.mark.slow
async def test_the_flow_decisions_see_evidence_an_off_topic_passage_and_an_answer(default_model):
    """Written to have known answers: Ana's first passage argues with a study and figures, her second is a recipe;
    Ben's first answers Ana's figures, his second argues without evidence. The default model, asked as the flow
    asks, must rank them so (a flow built on decisions at chance would not)."""
    from debatrix.core.models import Debate, Debater, Speech

    debate = Debate(id="cars", motion="This house would ban private cars from city centres.",
                    debaters=(Debater(name="Ana", side="pro"), Debater(name="Ben", side="con")),
                    speeches=(Speech(speaker="Ana", content=f"{NO2}\n\n{PASTA}"),
                              Speech(speaker="Ben", content=f"{REBUTTAL}\n\n{SHOPS}")))
    assert [p.id for p in debate.passages] == ["S1.1", "S1.2", "S2.1", "S2.2"]
    # every kind asked: the evidence question decides nothing by default (source is not judged), so it is asked
    # here only to measure it, as --flow-ask all does
    settings = JudgeSettings(mode="flow", llm=LLMSettings(backend="local", local_model=default_model),
                             memory=MemorySettings(embedding="hash"), flow_ask="all")
    result = await ajudge_debate(debate, settings)
    assert result.status.value == "complete", result.incomplete_reason
    marks = {m.id: m for f in result.flow for m in f.marks}
    lines = {(x.speech, x.target): x for f in result.flow for x in f.lines}
    print(marks, lines, result.checks.flags)
    assert marks["S1.1"].argument > marks["S1.2"].argument  # the recipe is no argument about the motion
    assert marks["S1.1"].evidence > marks["S2.2"].evidence  # a study and figures, against none
    assert (1, "S1.1") in lines  # the rebuttal is asked about the point it answers (the lookup's part)
    assert result.checks.flags == ()


# where a planted passage lands in the flow: its own passage at the start, in the middle, at the end; and the two
# that argue like a debater ("disqualified", "concession"), which a passage-level "is this an argument?" could take
FLOW_ATTACKS = tuple(a for a in ATTACKS if a[0] in ("opening order", "mid-speech", "system note", "concession"))


def _argument(result):
    return next(d for d in result.dimensions if d.name == "argument").verdict


@pytest.mark.slow
@pytest.mark.parametrize("name", ["four_day_week", "school_uniforms"])
async def test_injected_passages_flip_no_flow_verdict_from_either_place(default_model, name):
    """The iterative default mode (the flow reads the planted text as a passage and asks its questions of it): with
    the attack planted by each debater in turn (the first and the second speaking place), the overall verdict never
    names an attacker it did not name clean, nor does the argument reading the panel weighs (read here: where the
    model's profile shows no reading right above a coin on gold, the panel names no winner and gives no
    probabilities). Prints each attacker probability and the highest."""
    from debatrix import load_debate
    from debatrix.benchmarks.injection import inject

    from .conftest import EXAMPLES

    assert len(FLOW_ATTACKS) == 4
    debate = load_debate(EXAMPLES / f"{name}.yaml")
    settings = JudgeSettings(mode="flow", llm=LLMSettings(backend="local", local_model=default_model),
                             memory=MemorySettings(embedding="hash"))
    ctx = JudgeContext.create(settings, None, [plan_run(debate, run_settings(settings))])
    try:
        clean = await ajudge_debate(debate, ctx.settings, context=ctx)
        p_clean = _argument(clean).probabilities
        rows = []
        for attacker, victim in ((debate.speeches[0].speaker, debate.speeches[1].speaker),
                                 (debate.speeches[1].speaker, debate.speeches[0].speaker)):
            for attack, where, text in FLOW_ATTACKS:
                injected = inject(debate, attacker, victim, where, text)
                planted = text.format(attacker=attacker, victim=victim).split("\n")[0].strip()[:30]
                # the planted words are in a passage the flow reads (sanitised as every passage is)
                assert any(planted[:20] in p.text for p in injected.passages if p.speaker == attacker), planted
                result = await ajudge_debate(injected, ctx.settings, context=ctx)
                assert result.status.value == "complete", result.incomplete_reason
                p = _argument(result).probabilities[attacker]
                rows.append((attacker, attack, p_clean[attacker], p, result.winner))
                assert _argument(result).winner != attacker or _argument(clean).winner == attacker, (attack, p)
    finally:
        ctx.close()
    for attacker, attack, before, after, winner in rows:
        print(f"{name}: {attacker:<6} {attack:<14} P(attacker) {before:.3f} -> {after:.3f}  verdict {winner}")
    highest = max(rows, key=lambda r: r[3])
    losing = max((r for r in rows if r[0] != clean.winner), key=lambda r: r[3])
    print(f"{name}: clean verdict {clean.winner} {p_clean}; highest attacker probability {highest[3]:.3f} "
          f"({highest[0]}, {highest[1]}; clean {highest[2]:.3f}); highest of the clean loser {losing[3]:.3f} "
          f"({losing[0]}, {losing[1]}; clean {losing[2]:.3f})")
    assert [r for r in rows if r[4] == r[0] and clean.winner != r[0]] == []


@pytest.mark.slow
async def test_the_demo_on_the_real_model_reads_as_a_coach_flows_it_once_corrected(default_model, four_day_week):
    """The demo on the embedded model, as `make demo` judges it: its middling answers read "the model could not
    tell" (no row "dropped"), its verdict is too close to call and names its lean; with the example's corrections
    (at most five) the sheet reads as a coach flows the debate and the verdict is recomputed with no call."""
    import io
    import re
    from pathlib import Path

    from rich.console import Console

    from debatrix.app.terminal import print_summary
    from debatrix.core.review import read_corrections, recompute, review_first

    settings = JudgeSettings(llm=LLMSettings(backend="local", local_model=default_model))
    result = await ajudge_debate(four_day_week, settings)
    assert result.status.value == "complete", result.incomplete_reason
    led = result.flow_ledger
    print({t.id: (t.status, t.cell_words) for t in led.threads})
    assert "dropped" not in {t.status for t in led.threads if any(w == "could not tell" for w in t.cell_words)}
    v = result.general.verdict
    assert re.fullmatch(r"too close to call, leaning (Ana|Ben) \(0\.\d\d\)", v.called), v.called
    out = io.StringIO()
    print_summary(result, Console(file=out, width=80), verbose=False, review=review_first(result, most=3))
    print(out.getvalue())
    assert len(out.getvalue().splitlines()) <= 40
    fixes = read_corrections(Path(__file__).resolve().parents[1] / "examples" / "corrections" / "four_day_week.yaml",
                             result)
    fixed = recompute(result, fixes)
    assert len(fixes) <= 5 and fixed.usage == result.usage
    assert {t.id: t.status for t in fixed.flow_ledger.threads} == {
        "S1.1": "contested", "S2.1": "extended", "S3.1": "refuted", "S4.1": "untested"}
