"""`debatrix ui`: the page's API over HTTP, and the page itself in a real browser (Debian's chromium, headless)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import threading
import time
from pathlib import Path

import httpx
import pytest

from debatrix import JudgeSettings, LLMSettings, MemorySettings
from debatrix.llm.local import free_port
from debatrix.testing import FakeOpenAIServer

from .conftest import EXAMPLES

pytest.importorskip("starlette", reason="the ui extra is not installed: pip install -e '.[ui]'")
from debatrix.app.ui import JudgeUI  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def base_settings(url: str) -> JudgeSettings:
    return JudgeSettings(llm=LLMSettings(base_url=url, model="fake"), memory=MemorySettings(embedding="hash"))


def events_of(text: str) -> list[dict]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


async def test_bad_input_is_answered_next_to_its_field_never_with_a_traceback():
    ui = JudgeUI(base_settings("http://127.0.0.1:9/v1"))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=ui.app), base_url="http://ui") as client:
        async def post(body):
            r = await client.post("/api/runs", json=body)
            return r.status_code, r.json()

        assert await post({"debate": ""}) == (400, {"field": "debate", "message":
                                                   "paste or upload a debate (YAML or JSON), or fill in the form"})
        code, err = await post({"debate": "motion: x\ndebaters: [\n"})
        assert code == 400 and err["field"] == "debate" and "not valid YAML" in err["message"]
        example = (EXAMPLES / "school_uniforms.yaml").read_text()
        code, err = await post({"debate": example, "dimensions": "argument,charisma"})
        assert code == 400 and err["field"] == "dimensions" and "charisma" in err["message"]
        code, err = await post({"debate": example, "backend": "endpoint"})
        assert code == 400 and err["field"] == "base_url"
        code, err = await post({"form": {"motion": "m", "pro": "A", "con": "", "speeches": ["x", "y"]}})
        assert (code, err["field"]) == (400, "con")
        assert "Traceback" not in json.dumps(err)


async def test_a_run_streams_each_step_then_the_verdict_and_offers_its_result_and_report():
    with FakeOpenAIServer() as fake:
        ui = JudgeUI(base_settings(fake.base_url))
        transport = httpx.ASGITransport(app=ui.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://ui", timeout=60) as client:
            debate = (EXAMPLES / "school_uniforms.yaml").read_text()
            r = await client.post("/api/runs", json={"debate": debate, "mode": "debatrix", "orders": "1"})
            assert r.status_code == 200, r.text
            info = r.json()
            assert info["dimensions"] == ["argument", "source", "language"] and len(info["speeches"]) == 4
            text = (await client.get(f"/api/runs/{info['run_id']}/events")).text
            events = events_of(text)
            steps = [e for e in events if e["type"] == "step"]
            for dim in info["dimensions"]:  # each column analyses the speeches in order
                order = [e["index"] for e in steps if e["kind"] == "analysis" and e["dimension"] == dim]
                assert order == [0, 1, 2, 3]
            assert all(e["text"] for e in steps if e["kind"] == "analysis")
            done = events[-1]
            assert done["type"] == "done" and done["status"] == "complete" and done["general"]["winner"]
            assert sum(e["calls"] for e in steps) == done["usage"]["calls"] == len(fake.requests)
            result = (await client.get(f"/api/runs/{info['run_id']}/result.json")).json()
            assert result["general"]["verdict"]["winner"] == done["general"]["winner"]
            report = (await client.get(f"/api/runs/{info['run_id']}/report.html")).text
            assert 'id="matrix"' in report and "<script" not in report


async def test_a_run_can_be_stopped():
    with FakeOpenAIServer(latency=0.5) as fake:
        ui = JudgeUI(base_settings(fake.base_url))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=ui.app), base_url="http://ui",
                                     timeout=60) as client:
            debate = (EXAMPLES / "school_uniforms.yaml").read_text()
            for wait in (False, True):  # stopped before its first step, and while its first calls are answered
                run_id = (await client.post("/api/runs", json={"debate": debate})).json()["run_id"]
                deadline = time.monotonic() + 20
                while wait and not fake.requests and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                assert (await client.post(f"/api/runs/{run_id}/stop")).json()["state"] == "stopping"
                events = events_of((await client.get(f"/api/runs/{run_id}/events")).text)
                assert events[-1]["type"] == "stopped", events[-1]
                assert (await client.get(f"/api/runs/{run_id}/result.json")).status_code == 404
            assert 0 < len(fake.requests) < 40  # the second run had begun; neither finished


@pytest.fixture
def served_ui():
    """The page served by uvicorn on 127.0.0.1 (the judge's model: the page's own choice)."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(JudgeUI(base_settings("http://127.0.0.1:9/v1")).app, host="127.0.0.1",
                                           port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the UI server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.mark.browser
def test_the_page_judges_the_example_live_in_a_real_browser(served_ui):
    """Headless chromium: paste the example, choose the fake endpoint, judge; the matrix fills in speech order,
    the winner appears, and a screenshot is kept in tests/artifacts/."""
    if not os.path.exists(CHROMIUM):
        pytest.skip("no chromium: install Debian's package (apt-get install chromium; make test does it as root)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")
    example = (EXAMPLES / "school_uniforms.yaml").read_text()
    with FakeOpenAIServer(latency=0.05) as fake, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(served_ui)
            page.fill("#debate", "not: [valid")  # bad input first: the loader's message beside the field
            page.click("#start")
            page.wait_for_selector('.error[data-for="debate"]:not(:empty)')
            assert "not valid YAML" in page.inner_text('.error[data-for="debate"]')
            page.fill("#debate", example)
            page.select_option("#backend", "endpoint")
            page.fill("#base_url", fake.base_url)
            page.fill("#model", "fake")
            page.click("#start")
            page.wait_for_selector("#winner:not(:empty)", timeout=60_000)
            cells = page.eval_on_selector_all("td.cell", "els => els.map(e => [e.dataset.dimension, "
                                              "e.dataset.speech, e.querySelector('.text').textContent, "
                                              "e.querySelector('.score').textContent])")
            assert len(cells) == 4 * 3 and all(text and score for _, _, text, score in cells)
            fills = page.evaluate("window.debatrixFills")
            for dim in ("argument", "source", "language"):
                assert [int(s) for d, s in fills if d == dim] == [1, 2, 3, 4]  # speech by speech, in order
            winner = page.inner_text("#winner")
            assert winner.startswith("Winner: ") and winner.split()[1] in {"Maya", "Theo"}
            assert page.is_visible("#download-report")
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "ui-judged.png"), full_page=True)
        finally:
            browser.close()
    assert (ARTIFACTS / "ui-judged.png").stat().st_size > 10_000


async def test_a_preset_pair_is_read_like_the_files_and_its_problems_are_named():
    motion = ("motion: This house would ban homework\n"
              "pro_side: [{name: Ada}]\ncon_side: [{name: Ben}]\nspeech_order: [Ada, Ben]\n")
    speeches = "- {debater_name: Ada, content: Homework steals rest.}\n- {debater_name: Ben, content: Practice helps.}\n"
    ui = JudgeUI(base_settings("http://127.0.0.1:9/v1"))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=ui.app), base_url="http://ui") as client:
        r = await client.post("/api/runs", json={"preset": {"motion": motion, "speeches": speeches, "id": "hw"},
                                                 "mode": "direct"})
        assert r.status_code == 200 and [s["speaker"] for s in r.json()["speeches"]] == ["Ada", "Ben"]
        await client.post(f"/api/runs/{r.json()['run_id']}/stop")  # nothing answers on port 9: stop it
        r = await client.post("/api/runs", json={"preset": {"motion": motion, "speeches": ""}})
        assert r.status_code == 400 and r.json()["field"] == "preset"
        bad = speeches.replace("Ben, content", "Cy, content")
        r = await client.post("/api/runs", json={"preset": {"motion": motion, "speeches": bad, "id": "hw"}})
        assert r.status_code == 400 and "speech order says 'Ben'" in r.json()["message"]
