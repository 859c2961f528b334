"""Correcting a judgment on the page (`debatrix ui`): after a flow run, or with a result uploaded, a person sets
decisions cell by cell; the page sends the corrections to its own server, which recomputes (no model call) and
answers with the sheet, the scores and the verdict; the corrected result downloads and uploads again. Over HTTP,
and in headless chromium at a desktop's and a phone's width."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import httpx
import pytest

from debatrix import JudgeSettings, LLMSettings, MemorySettings
from debatrix.core.results import JudgeResult
from debatrix.testing import FakeOpenAIServer

from .test_review import fake_profile, judged_examples
from .test_ui import ARTIFACTS, chromium_page, events_of, page_client, serving

pytest.importorskip("starlette", reason="the ui extra is not installed: pip install -e '.[ui]'")
from debatrix.app.ui import JudgeUI  # noqa: E402


def _ui(url: str, profile: Path) -> JudgeUI:
    return JudgeUI(JudgeSettings(profile=str(profile), llm=LLMSettings(base_url=url, model="fake", api_key="x"),
                                 memory=MemorySettings(embedding="hash")))


async def test_an_uploaded_result_is_corrected_and_downloads_with_its_corrections(tmp_path):
    result = (await asyncio.to_thread(judged_examples))["demo"]
    with FakeOpenAIServer(responder=lambda body, n: {"status": 500}) as failing:
        ui = _ui(failing.base_url, fake_profile(tmp_path))
        async with page_client(ui) as client:
            up = await client.post("/api/results", content=result.model_dump_json())
            assert up.status_code == 200, up.text
            shown = up.json()
            rid = shown["review_id"]
            assert shown["review_first"] and shown["general"]["called"] == result.general.verdict.called
            first = shown["review_first"][0]["decision"]
            fix = {"passage": first[1], "kind": first[0], **({"row": first[2]} if len(first) > 2 else {}),
                   "value": 1}
            done = await client.post(f"/api/reviews/{rid}", json={"by": "Coach Lee", "corrections": [fix]})
            assert done.status_code == 200, done.text
            body = done.json()
            assert len(body["corrections"]) == 1 and body["corrections"][0]["by"] == "Coach Lee"
            assert body["general"]["called"] != shown["general"]["called"] or \
                body["general"]["comment"] != shown["general"]["comment"]
            saved = JudgeResult.model_validate_json((await client.get(f"/api/reviews/{rid}/result.json")).content)
            assert saved.flow == result.flow and saved.corrections[0].by == "Coach Lee"
            assert "Coach Lee" in (await client.get(f"/api/reviews/{rid}/report.html")).text
            # uploaded again, the corrections come with it; taking them all back gives the model's judgment
            again = (await client.post("/api/results", content=saved.model_dump_json())).json()
            assert again["corrections"] == body["corrections"] and again["general"] == body["general"]
            back = (await client.post(f"/api/reviews/{again['review_id']}", json={"corrections": []})).json()
            assert back["general"]["called"] == result.general.verdict.called
            # a correction that does not apply is one line, and changes nothing
            bad = await client.post(f"/api/reviews/{rid}", json={"by": "x", "corrections": [
                {"passage": "S1.1", "kind": "answers", "row": "S2.1", "value": 1}]})
            assert bad.status_code == 400 and "was not spoken after" in bad.json()["message"]
            not_result = await client.post("/api/results", content=b'{"motion": "m"}')
            assert not_result.status_code == 400 and not_result.json()["message"].startswith("not a debatrix result")
            refused = await httpx.AsyncClient(transport=httpx.ASGITransport(app=ui.app),
                                              base_url="http://127.0.0.1:8710").post(f"/api/reviews/{rid}", json={})
            assert refused.status_code == 403  # a request that is not the page's (no token) changes nothing
    assert failing.requests == []  # nothing was sent to the model


async def test_a_run_judged_on_the_page_ends_with_what_to_review_first(tmp_path):
    with FakeOpenAIServer(reading=True) as server:
        ui = _ui(server.base_url, fake_profile(tmp_path))
        from .conftest import EXAMPLES

        async with page_client(ui, timeout=60) as client:
            started = (await client.post("/api/runs", json={"debate": (EXAMPLES / "four_day_week.yaml").read_text()}
                                         )).json()
            stream = await client.get(f"/api/runs/{started['run_id']}/events")
            done = next(e for e in events_of(stream.text) if e["type"] == "done")
            assert done["review_id"] == started["run_id"] and done["review_first"]
            assert done["general"]["called"].startswith("too close to call, leaning ")
            asked = len(server.requests)
            d = done["review_first"][0]["decision"]
            fixed = await client.post(f"/api/reviews/{done['review_id']}", json={"by": "coach", "corrections": [
                {"passage": d[1], "kind": d[0], **({"row": d[2]} if len(d) > 2 else {}), "value": 0}]})
            assert fixed.status_code == 200 and len(server.requests) == asked
            got = JudgeResult.model_validate_json((await client.get(f"/api/runs/{started['run_id']}/result.json")
                                                   ).content)
            assert len(got.corrections) == 1  # the run's download is the corrected result


# ------------------------------------------------------------------------------------------ in a real browser


@pytest.fixture
def review_ui(tmp_path):
    """The page, served by uvicorn on 127.0.0.1, judging on the reading model under the renamed shipped profile."""
    with FakeOpenAIServer(reading=True) as server, serving(_ui(server.base_url, fake_profile(tmp_path))) as url:
        yield url, server


def _turning(sentence: str, now: str) -> int | None:
    """Which answer of a review item turns the lean from ``now`` (1 yes, 0 no), from its sentence."""
    found = dict(re.findall(r"(yes|no) → (\w+)", sentence))
    for said, value in (("yes", 1), ("no", 0)):
        if found.get(said) not in (None, now, "even"):
            return value
    return None


@pytest.mark.browser
@pytest.mark.parametrize("width", [1400, 390], ids=["desktop", "phone"])
def test_a_coach_corrects_the_sheet_on_the_page_and_the_verdict_follows_without_a_reload(review_ui, width,
                                                                                          tmp_path):
    url, model = review_ui
    with chromium_page(url, width, 0.0) as (page, _):
        page.click("#example")
        page.click("#start")
        page.wait_for_selector("#review-first li", timeout=60_000)
        page.evaluate("window.__stayed = 'this page, never reloaded'")
        asked = len(model.requests)
        before = page.inner_text("#winner")
        lean = re.search(r"leaning (\w+)", before).group(1)
        items = page.query_selector_all("#review-first li")
        pick = next((k, v) for k, li in enumerate(items)
                    if (v := _turning(li.inner_text(), lean)) is not None)
        items[pick[0]].query_selector_all("button")[0 if pick[1] == 1 else 1].click()
        page.wait_for_selector("#review-status:has-text('recomputed with 1 correction')")
        after = page.inner_text("#winner")
        assert after != before and f"leaning {lean}" not in after, (before, after)
        # a cell of the sheet: its choices under it, one set, the sheet marks it as a person's
        page.click("#flow-sheet td.cell .decides >> nth=0")  # an answer's cell (a row's mark offers argues)
        page.wait_for_selector("#flow-sheet .choices button")
        box = page.query_selector("#flow-sheet .choices button").bounding_box()
        assert box is not None and box["width"] > 0
        page.click("#flow-sheet .choices button:has-text('does not')")
        page.wait_for_selector("#review-status:has-text('recomputed with 2 corrections')")
        assert page.query_selector("#flow-sheet .set") is not None
        assert page.evaluate("window.__stayed") == "this page, never reloaded"
        assert len(model.requests) == asked, "a correction asked the model"
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"ui-review-{width}.png"), full_page=True)
        # the corrected result downloads, and a fresh page reads it back as it was left
        href = page.get_attribute("#download-json", "href")
        saved = page.evaluate(f"fetch({json.dumps(href)}).then(r => r.text())")
        kept = json.loads(saved)
        assert len(kept["corrections"]) == 2
        path = tmp_path / "corrected.json"
        path.write_text(saved, encoding="utf-8")
        winner = page.inner_text("#winner")
        page.goto(url)
        page.set_input_files("#result-file", str(path))
        page.wait_for_selector("#review-first li", timeout=30_000)
        assert page.inner_text("#winner") == winner
        assert len(page.query_selector_all("#corrections li")) == 2
        assert len(model.requests) == asked
