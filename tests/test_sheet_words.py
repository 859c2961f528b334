"""One status per row and one word per cell, from one rule (``debatrix.core.flow.reading``): a flow sheet built from
constructed decisions that reach every status and every cell word, and each surface (the terminal summary, the HTML
report, the page's data) says, for each row and each cell, the word the rule decided, with the legend that defines
it."""

from __future__ import annotations

import html as H
import io
import re
from datetime import UTC, datetime

import pytest

from rich.console import Console

from debatrix.app.report import result_html
from debatrix.app.terminal import print_summary
from debatrix.app.ui import summary
from debatrix.core.flow import CELL_MEANING, STATUS_MEANING, Line, Mark, SpeechFlow, ledger, reading, tally_line
from debatrix.core.models import Debate, Debater, Speech
from debatrix.core.profile import DecisionProfile, Interval, JudgeProfile, ModelIdentity, PMap
from debatrix.core.results import DimensionResult, JudgeResult, Status

PARA = " ".join(["alpha"] * 85) + "."  # longer than a passage's target: one passage a paragraph


def _debate() -> Debate:
    sizes = (6, 5, 1, 1)  # Ana S1.1-S1.6, Ben S2.1-S2.5, Ana S3.1, Ben S4.1 (nobody speaks after it)
    names = ["Ana", "Ben"]
    speeches = tuple(Speech(speaker=names[i % 2], content="\n\n".join(
        PARA.replace("alpha", f"w{i}{k}") for k in range(n))) for i, n in enumerate(sizes))
    return Debate(id="sheet", motion="m", debaters=(Debater(name="Ana", side="pro"), Debater(name="Ben", side="con")),
                  speeches=speeches)


def _profile() -> JudgeProfile:
    """A model whose answers carry, mapped as given, with the gold saying yes half the time: an answer counts what
    it stands above even odds (2P - 1), and one near even odds tells nothing (the model could not tell)."""
    answers = DecisionProfile(kind="answers", question="q", gold="g", items=200, debates=24,
                              auc=Interval(value=0.7, low=0.65, high=0.75),
                              map=PMap(a=1.0, b=0.0, fitted=200, checked=200, brier_raw=0.3, brier_mapped=0.2),
                              base_rate=0.5)
    return JudgeProfile(model=ModelIdentity(name="m"), prompts_sha256="x", measured="2026-12-02",
                        decisions={"answers": answers})


#: each of Ana's first-speech rows answered so that it ends in one status (under :func:`_profile`)
LINES = (
    Line(speech=1, target="S1.1", by="S2.1", answers=0.05),  # dropped: asked, and the model said no
    Line(speech=1, target="S1.2", by="S2.2", answers=0.65),  # contested: partly answered (counts 0.3)
    Line(speech=1, target="S1.3", by="S2.3", answers=0.95),  # refuted
    Line(speech=1, target="S1.4", by="S2.4", answers=0.95),  # extended: Ana answers the answer
    Line(speech=2, target="S2.4", by="S3.1", answers=0.975),
    Line(speech=1, target="S1.5", by="S2.5", answers=0.56),  # contested by two answers: one counts a little
    Line(speech=1, target="S1.5", by="S2.1", answers=0.65),
    Line(speech=1, target="S1.6", by="S2.2", answers=0.55),  # unclear: the model could not tell
)


def _result() -> JudgeResult:
    d = _debate()
    flows = [SpeechFlow(dimension="argument", index=i, speaker=s.speaker,
                        marks=tuple(Mark(id=p.id, argument=0.9) for p in d.passages if p.speech == i),
                        lines=tuple(x for x in LINES if x.speech == i)) for i, s in enumerate(d.speeches)]
    led = ledger(d, flows, "argument", _profile())
    now = datetime.now(UTC)
    return JudgeResult(debatrix_version="test", debate_id=d.id, motion=d.motion, format=d.format, mode="flow",
                       speeches=d.speeches, status=Status.COMPLETE, flow=tuple(flows), started_at=now, finished_at=now,
                       dimensions=(DimensionResult(name="argument", weight=1.0, allow_tie=False, ledger=led),))


def test_the_constructed_sheet_reaches_every_status_and_every_cell_word():
    led = _result().flow_ledger
    statuses = {t.id: t.status for t in led.threads}
    assert statuses["S1.1"] == "dropped" and statuses["S1.2"] == "contested" and statuses["S1.3"] == "refuted"
    assert statuses["S1.4"] == "extended" and statuses["S4.1"] == "untested" and statuses["S1.6"] == "unclear"
    assert set(statuses.values()) == set(STATUS_MEANING)
    assert {w for t in led.threads for w in t.cell_words} == set(CELL_MEANING)
    assert dict(zip((c.by for c in led.threads[4].cells), led.threads[4].cell_words)) == {
        "S2.1": "partly answered", "S2.5": "answered a little"}


def test_every_surface_says_each_rows_status_and_each_cells_word_as_the_rule_decided():
    result = _result()
    led = result.flow_ledger
    page = summary(result)["flow"]
    report = result_html(result)
    out = io.StringIO()
    print_summary(result, Console(file=out, width=400))
    text = out.getvalue()
    for t in led.threads:
        status, words = reading(t)
        row = next(r for r in page["rows"] if r["id"] == t.id)
        assert row["status"] == status and row["meaning"] == STATUS_MEANING[status]
        # a column holds every answer its speech gave the row, in the order the row keeps them
        page_words = [w.split(" by ")[0] for c in row["cells"] if c["kind"] not in ("", "own")
                      for w in c["words"].split("; ")]
        assert page_words == list(words)
        found = re.search(rf'<tr class="thread (\w+)" data-row="{re.escape(t.id)}">(.*?)</tr>', report, re.S)
        assert found and found.group(1) == status
        cells = re.findall(r'<span class="small (?:answers|ignores|unsure)"[^>]*>([^<]*)</span>', found.group(2))
        assert [w.split(" by ")[0] for c in cells for w in H.unescape(c).split("; ")] == list(words)
        # the summary groups the rows by status in each debater's line
        line = tally_line(led, t.speaker)
        assert re.search(rf"; {status} [^;]*\b{re.escape(t.id)}\b", line) and line in text
    # each status shown is defined once, in the same words, on every surface; each cell word on the report and page
    for status in {t.status for t in led.threads}:
        assert f"{status}: {STATUS_MEANING[status]}" in text
        assert STATUS_MEANING[status] in H.unescape(report) and page["legend"][status] == STATUS_MEANING[status]
    for word, meaning in CELL_MEANING.items():
        assert meaning in H.unescape(report) and page["cell_legend"][word] == meaning
    # a row counts as standing unless refuted, in the summary's own count
    # Ana's S1.3 is refuted, Ben's S2.4 (answered by S3.1); Ben's S4.1 is untested, and stands
    assert "Ana: 6 of 7 arguments standing" in text and "Ben: 5 of 6 arguments standing" in text


def test_the_page_says_what_uncalibrated_means_as_the_summary_does():
    """A verdict shown "uncalibrated" on the page comes with what that means, in the summary's own words."""
    from debatrix.app.terminal import table_notes
    from debatrix.core.models import Verdict

    result = _result()
    dim = result.dimensions[0].model_copy(update={"verdict": Verdict(
        dimension="argument", comment="c", winner="Ana", probabilities={"Ana": 0.6, "Ben": 0.4}, method="logprobs",
        confidence="uncalibrated")})
    result = result.model_copy(update={"dimensions": (dim,)})
    notes = summary(result)["notes"]
    assert notes == table_notes([dim]) and any(n.startswith("uncalibrated: ") for n in notes)
    bare = summary(_result())["notes"]  # no verdict: nothing to explain
    assert bare == []


#: whether the screen cuts the flow sheet off: on a phone the table itself scrolls, else the box around it
CUT = ("[document.getElementById('flow-sheet'), document.getElementById('flow-sheet').parentElement]"
       ".some(e => e.scrollWidth > e.clientWidth + 1)")


@pytest.mark.browser
@pytest.mark.parametrize("width", [1400, 390], ids=["desktop", "phone"])
def test_the_reports_sheet_says_it_scrolls_sideways_only_where_the_screen_cuts_it_off(tmp_path, width):
    """In headless chromium the report's flow sheet stays in its box; on a phone, where the screen cuts the sheet
    off, a line above it says it scrolls sideways; on a desktop, where it fits, no such line shows (the report has
    no script: the line's media query is the sheet's least width)."""
    import os
    import shutil

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(chromium):
        pytest.skip("no chromium: install Debian's package (apt-get install chromium; make test does it as root)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")
    page_file = tmp_path / "r.html"
    page_file.write_text(result_html(_result()), encoding="utf-8")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(page_file.as_uri())
            cut = page.evaluate(CUT)
            assert page.is_visible("#flow-scroll") == cut == (width == 390)
            assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
            page.set_viewport_size({"width": 1400 if width == 390 else 390, "height": 900})  # turned: it follows
            page.wait_for_timeout(100)
            assert page.is_visible("#flow-scroll") == (width != 390)
        finally:
            browser.close()
