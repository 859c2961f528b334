"""`debatrix ui`: the page's API over HTTP, and the page itself in a real browser (Debian's chromium, headless)."""

from __future__ import annotations


import asyncio
import json
import contextlib
import os
import re
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


def page_client(ui: JudgeUI, **kw) -> httpx.AsyncClient:
    """A client that talks to the page as the page itself does (its host, its token)."""
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=ui.app), base_url="http://127.0.0.1:8710",
                             headers={"x-debatrix-token": ui.token}, **kw)


def events_of(text: str) -> list[dict]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


async def test_bad_input_is_answered_next_to_its_field_never_with_a_traceback():
    ui = JudgeUI(base_settings("http://127.0.0.1:9/v1"))
    async with page_client(ui) as client:
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
        async with page_client(ui, timeout=60) as client:
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
            # a browser that reconnects sends the last event id it had: it gets what came after, not a replay
            ids = [int(line[4:]) for line in text.splitlines() if line.startswith("id: ")]
            assert ids == list(range(len(events)))
            again = (await client.get(f"/api/runs/{info['run_id']}/events",
                                      headers={"last-event-id": str(len(events) - 3)})).text
            assert events_of(again) == events[-2:]
            assert sum(e["calls"] for e in steps) == done["usage"]["calls"] == len(fake.requests)
            result = (await client.get(f"/api/runs/{info['run_id']}/result.json")).json()
            assert result["general"]["verdict"]["winner"] == done["general"]["winner"]
            report = (await client.get(f"/api/runs/{info['run_id']}/report.html")).text
            assert 'id="matrix"' in report and "<script" not in report


async def test_the_default_run_on_the_page_is_the_flow_and_its_sheet_cites_real_passages():
    """The page's default mode: one "flow" column read speech by speech, and a done event carrying the flow sheet
    (each argument row a real passage of its debater) and a comment per dimension and debater that cites that
    debater's own passages; the report carries the sheet."""
    from debatrix import load_debate

    with FakeOpenAIServer() as fake:
        ui = JudgeUI(base_settings(fake.base_url))
        async with page_client(ui, timeout=60) as client:
            path = EXAMPLES / "school_uniforms.yaml"
            r = await client.post("/api/runs", json={"debate": path.read_text()})
            assert r.status_code == 200, r.text
            info = r.json()
            assert info["mode"] == "flow" and info["dimensions"] == ["flow"]
            events = events_of((await client.get(f"/api/runs/{info['run_id']}/events")).text)
            steps = [e for e in events if e["type"] == "step" and e["kind"] == "analysis"]
            assert [e["index"] for e in steps] == [0, 1, 2, 3] and all(e["dimension"] == "flow" for e in steps)
            done = events[-1]
            assert done["type"] == "done" and done["status"] == "complete", done
            debate = load_debate(path)
            index = debate.passage_index
            rows = done["flow"]["rows"]
            own = [next(c["id"] for c in row["cells"] if c["kind"] == "own") for row in rows]
            assert rows and all(index[pid].speaker == row["speaker"] for pid, row in zip(own, rows))
            assert [d["name"] for d in done["dimensions"]] == ["argument", "source", "language"]
            for d in done["dimensions"]:  # unprofiled (the page's own model): every dimension judged
                assert not d["not_judged"] and set(d["comments"]) == {"Maya", "Theo"}
                for who, comment in d["comments"].items():
                    mine = {p.id for p in debate.passages if p.speaker == who}
                    assert any(pid in comment for pid in mine), (d["name"], who, comment)
            report = (await client.get(f"/api/runs/{info['run_id']}/report.html")).text
            assert 'id="flow-sheet"' in report and "<script" not in report


async def test_a_stopped_run_keeps_what_was_answered():
    with FakeOpenAIServer(latency=0.5) as fake:
        ui = JudgeUI(base_settings(fake.base_url))
        async with page_client(ui, timeout=60) as client:
            debate = (EXAMPLES / "school_uniforms.yaml").read_text()
            for wait in (0, 5):  # stopped before its first call, and once 5 requests were sent
                before = len(fake.requests)
                run_id = (await client.post("/api/runs", json={"debate": debate})).json()["run_id"]
                deadline = time.monotonic() + 30
                while len(fake.requests) - before < wait and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                assert (await client.post(f"/api/runs/{run_id}/stop")).json()["state"] == "stopping"
                events = events_of((await client.get(f"/api/runs/{run_id}/events")).text)
                stopped = events[-1]
                assert stopped["type"] == "stopped" and stopped["status"] == "incomplete", stopped
                # what was answered before Stop is kept, not thrown away: the result says so and counts it
                result = (await client.get(f"/api/runs/{run_id}/result.json")).json()
                answered = sum(e["calls"] for e in events if e["type"] == "step")
                assert result["status"] == "incomplete" and "stopped on the page" in result["incomplete_reason"]
                assert result["general"] is None or result["general"]["verdict"] is None  # no verdict not made
                sent = len(fake.requests) - before
                # every request the server received is counted, the one abandoned in flight too (it may not have
                # reached the server when Stop came: at most one more, the flow asks one at a time)
                assert answered <= result["usage"]["llm_calls"] and sent <= result["usage"]["llm_calls"] <= sent + 1
                assert sent < 40
                if wait:
                    assert answered >= 2 and f"the {result['usage']['llm_calls']} calls" in stopped["message"]
                else:
                    assert sent == 0 and stopped["message"] == "stopped before the first call"


@pytest.fixture
def served_ui(request):
    """The page served by uvicorn on 127.0.0.1 (the judge's model: the page's own choice, unless the test passes
    a JudgeUI by indirect parametrisation)."""
    with serving(getattr(request, "param", None) or JudgeUI(base_settings("http://127.0.0.1:9/v1"))) as url:
        yield url


@contextlib.contextmanager
def serving(ui: JudgeUI):
    """``ui`` served by uvicorn on a free port of 127.0.0.1, in a thread: its address."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(ui.app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the UI server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@contextlib.contextmanager
def chromium_page(url: str, width: int, latency: float):
    """A headless chromium page of ``width`` at ``url`` and the fake endpoint it judges against (skips, saying how
    to install them, where chromium or playwright is missing)."""
    if not os.path.exists(CHROMIUM):
        pytest.skip("no chromium: install Debian's package (apt-get install chromium; make test does it as root)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")
    with FakeOpenAIServer(latency=latency) as fake, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(url)
            yield page, fake
        finally:
            browser.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", [1400, 390], ids=["desktop", "phone"])
def test_the_page_judges_the_example_live_in_a_real_browser(served_ui, width):
    """Headless chromium at a desktop's and a phone's width: refusals beside their fields (a blank speech in the
    form is never given to the other debater; a paste over the size limit clears the last run's results), then
    the offered example judged against the fake endpoint: the matrix fills in speech order, and after judging
    every cell, verdict and reason is on screen with nothing wider than it. Screenshots kept in tests/artifacts/."""
    with chromium_page(served_ui, width, 0.05) as (page, fake):
        # the form: a blank speech between two of Ana's is refused beside the speeches, naming it
        page.click("#tab-form")
        page.fill("#motion", "This house would test.")
        page.fill("#pro", "Ana")
        page.fill("#con", "Ben")
        page.fill("#speeches", "Ana's speech.\n---\n\n---\nRebuttal by Ana.")
        page.click("#start")
        page.wait_for_selector('.error[data-for="speeches"]:not(:empty)')
        assert "speech 2 is empty" in page.inner_text('.error[data-for="speeches"]')
        page.click("#tab-text")
        page.fill("#debate", "not: [valid")  # bad input: the loader's message beside the field
        page.click("#start")
        page.wait_for_selector('.error[data-for="debate"]:not(:empty)')
        assert "not valid YAML" in page.inner_text('.error[data-for="debate"]')
        page.click("#example")  # the example the page offers
        assert "four-day week" in page.input_value("#debate")
        assert page.input_value("#mode") == "flow"  # the default mode is preselected
        page.select_option("#mode", "debatrix")  # the prose mode: the full matrix of analyses and scores
        page.select_option("#backend", "endpoint")
        page.fill("#base_url", fake.base_url)
        page.fill("#model", "fake")
        page.click("#start")
        page.wait_for_selector("#status:has-text(' of 28 LLM calls')", timeout=30_000)  # n of N while judging
        page.wait_for_selector("#winner:not(:empty)", timeout=60_000)
        cells = page.eval_on_selector_all("td.cell", "els => els.map(e => [e.dataset.dimension, "
                                          "e.dataset.speech, e.querySelector('.text').textContent, "
                                          "e.querySelector('.score').textContent])")
        assert len(cells) == 4 * 3 and all(text and score for _, _, text, score in cells)
        fills = page.evaluate("window.debatrixFills")
        for dim in ("argument", "source", "language"):
            assert [int(s) for d, s in fills if d == dim] == [1, 2, 3, 4]  # speech by speech, in order
        winner = page.inner_text("#winner")
        assert winner.startswith("Winner: ") and winner.split()[1].strip(":") in {"Ana", "Ben"}
        assert "%" not in winner  # the fake server gives no probabilities: no percentage is made up
        # each dimension's verdict, in the matrix's order, with its reason and what the scores say
        boxes = page.eval_on_selector_all(".verdict", "els => els.map(e => [e.dataset.dimension, "
                                          "e.querySelector('.dim-winner').textContent, "
                                          "e.querySelector('.by-scores').textContent, "
                                          "e.querySelector('.dim-reason').textContent])")
        assert [b[0] for b in boxes] == ["argument", "source", "language"]
        assert all(w.startswith("Winner: ") and sc.startswith("By the scores: ") and reason
                   for _, w, sc, reason in boxes)
        # the scores' winner, then its figures: "By the scores: Ana (Ana 7.3, Ben 3.7)", never "Ana: Ana 7.3"
        assert all(re.match(r"By the scores: (Ana|Ben|tie) \(Ana \d+\.\d, Ben \d+\.\d[;)]", sc)
                   for _, _, sc, _ in boxes)
        assert page.is_visible("#download-report")
        # nothing wider than the screen, and every cell, verdict and reason inside it
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        for selector in ("td.cell", ".verdict", "#winner", "#reason"):
            for box in (el.bounding_box() for el in page.query_selector_all(selector)):
                assert box is not None and box["width"] > 0 and box["x"] >= 0 and box["x"] + box["width"] <= width
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"ui-judged-{width}.png"), full_page=True)
        # a paste over the size limit: refused beside the debate, and the last run's results are gone
        page.evaluate("document.getElementById('debate').value = 'x'.repeat(2 * 1024 * 1024)")
        page.click("#start")
        page.wait_for_selector('.error[data-for="debate"]:not(:empty)')
        assert "larger than 1 MB" in page.inner_text('.error[data-for="debate"]')
        assert page.inner_text("#winner") == "" and page.query_selector_all("td.cell") == []
    assert (ARTIFACTS / f"ui-judged-{width}.png").stat().st_size > 10_000


@pytest.mark.browser
@pytest.mark.parametrize("width", [1400, 390], ids=["desktop", "phone"])
def test_the_default_flow_on_the_page_has_one_winner_line_and_its_sheet_in_words(served_ui, width):
    """The page in the default mode as a coach meets it: the orders option (which changes nothing in the flow) is
    not offered, one winner line, no verdict box for the panel, the sheet's cells in words with their figures on
    hover, and nothing wider than the screen (the sheet scrolls inside its box, and says so where the screen cuts
    it off). Screenshots in tests/artifacts/."""
    with chromium_page(served_ui, width, 0.02) as (page, fake):
        page.click("#example")
        assert page.input_value("#mode") == "flow" and not page.is_visible("#orders")
        page.select_option("#mode", "debatrix")
        assert page.is_visible("#orders")  # offered where it does something
        page.select_option("#mode", "flow")
        assert not page.is_visible("#orders")
        page.select_option("#backend", "endpoint")
        page.fill("#base_url", fake.base_url)
        page.fill("#model", "fake")
        page.click("#start")
        page.wait_for_selector("#winner:not(:empty)", timeout=60_000)
        page.wait_for_selector("#flow-sheet tr")
        said = page.inner_text("main")
        assert said.count("Winner: ") == 1 + sum(  # the panel's line, and each judged dimension's own
            1 for b in page.query_selector_all(".verdict .dim-winner") if b.inner_text().startswith("Winner: "))
        assert not page.query_selector('.verdict[data-dimension="panel"]')
        cells = page.eval_on_selector_all("#flow-sheet td.cell[title]", "els => els.map(e => [e.textContent, e.title])")
        assert cells and all(t == "asked, not answered" or t.startswith(("answered", "partly answered", "answered a little")) for t, _ in cells)
        assert all("P(it answers)" in title for _, title in cells)
        assert re.search(r"Ana: \d+ of \d+ arguments? standing", page.inner_text("#flow-tallies"))
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        from .test_sheet_words import CUT

        assert page.is_visible("#flow-scroll") == page.evaluate(CUT) == (width == 390)  # said where it is cut
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"ui-flow-{width}.png"), full_page=True)


async def test_a_preset_pair_is_read_like_the_files_and_its_problems_are_named():
    motion = ("motion: This house would ban homework\n"
              "pro_side: [{name: Ada}]\ncon_side: [{name: Ben}]\nspeech_order: [Ada, Ben]\n")
    speeches = "- {debater_name: Ada, content: Homework steals rest.}\n- {debater_name: Ben, content: Practice helps.}\n"
    ui = JudgeUI(base_settings("http://127.0.0.1:9/v1"))
    async with page_client(ui) as client:
        r = await client.post("/api/runs", json={"preset": {"motion": motion, "speeches": speeches, "id": "hw"},
                                                 "mode": "direct"})
        assert r.status_code == 200 and [s["speaker"] for s in r.json()["speeches"]] == ["Ada", "Ben"]
        await client.post(f"/api/runs/{r.json()['run_id']}/stop")  # nothing answers on port 9: stop it
        r = await client.post("/api/runs", json={"preset": {"motion": motion, "speeches": ""}})
        assert r.status_code == 400 and r.json()["field"] == "preset"
        bad = speeches.replace("Ben, content", "Cy, content")
        r = await client.post("/api/runs", json={"preset": {"motion": motion, "speeches": bad, "id": "hw"}})
        assert r.status_code == 400 and "speech order says 'Ben'" in r.json()["message"]


async def _wait_done(client: httpx.AsyncClient, run_id: str) -> dict:
    return events_of((await client.get(f"/api/runs/{run_id}/events")).text)[-1]


async def test_a_malicious_site_can_neither_drive_the_page_nor_get_the_servers_key():
    debate = (EXAMPLES / "school_uniforms.yaml").read_text()
    with FakeOpenAIServer() as own, FakeOpenAIServer() as attacker:
        ui = JudgeUI(JudgeSettings(llm=LLMSettings(base_url=own.base_url, model="fake", api_key="sk-server-secret"),
                                   memory=MemorySettings(embedding="hash")))
        steal = {"debate": debate, "mode": "direct", "orders": 1, "backend": "endpoint",
                 "base_url": attacker.base_url}
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=ui.app), base_url="http://127.0.0.1:8710",
                                     timeout=60) as client:
            # a cross-site "simple" POST (text/plain, no preflight), with or without a token it cannot know
            for headers in ({"origin": "http://evil.example", "content-type": "text/plain"},
                            {"origin": "http://evil.example", "x-debatrix-token": ui.token},
                            {"content-type": "text/plain"}):
                r = await client.post("/api/runs", content=json.dumps(steal), headers=headers)
                assert r.status_code == 403, headers
            # DNS rebinding: the attacker's name resolving to 127.0.0.1 gets neither the page nor the API
            rebound = {"host": "rebind.evil.example:8710"}
            assert (await client.get("/", headers=rebound)).status_code == 400
            r = await client.post("/api/runs", json=steal, headers={**rebound, "x-debatrix-token": ui.token})
            assert r.status_code == 400
            assert not ui.runs and not attacker.requests and not own.requests

            # the page itself may name another endpoint: that endpoint never gets the server's key
            page = {"origin": "http://127.0.0.1:8710", "x-debatrix-token": ui.token}
            r = await client.post("/api/runs", json=steal, headers=page)
            assert r.status_code == 200, r.text
            assert (await _wait_done(client, r.json()["run_id"]))["status"] == "complete"
            r = await client.post("/api/runs", json={**steal, "api_key": "sk-the-pages-own"}, headers=page)
            await _wait_done(client, r.json()["run_id"])
            assert attacker.authorizations.count(None) == 2 and attacker.authorizations.count(
                "Bearer sk-the-pages-own") == 2
            # the server's own endpoint (with a trailing slash, the same address) gets the server's key
            r = await client.post("/api/runs", json={**steal, "base_url": own.base_url + "/"}, headers=page)
            await _wait_done(client, r.json()["run_id"])
            assert own.authorizations == ["Bearer sk-server-secret"] * 2
            # and the local model is not this server's to start
            r = await client.post("/api/runs", json={**steal, "backend": "local"}, headers=page)
            assert (r.status_code, r.json()["field"]) == (400, "backend")
            assert "sk-server-secret" not in ui.page


async def test_bad_bodies_are_400_with_the_field_and_large_ones_are_not_read():
    ui = JudgeUI(base_settings("http://127.0.0.1:9/v1"))
    debate = (EXAMPLES / "school_uniforms.yaml").read_text()
    async with page_client(ui) as client:
        for body, field in (([1, 2], "debate"), ("a string", "debate"), (None, "debate"),
                            ({"debate": debate, "orders": [1]}, "orders"), ({"debate": debate, "mode": ["x"]}, "mode"),
                            ({"debate": debate, "orders": 9}, "orders"),
                            ({"form": {"motion": "m", "pro": "A", "con": "B", "speeches": "xy"}}, "form"),
                            ({"debate": debate, "surprise": 1}, "surprise"),
                            ({"debate": debate, "backend": "endpoint", "base_url": "file:///etc/passwd"},
                             "base_url")):
            r = await client.post("/api/runs", content=json.dumps(body), headers={"content-type": "application/json"})
            assert r.status_code == 400 and r.json()["field"] == field, (body, r.text)
        r = await client.post("/api/runs", content=b"{not json")
        assert r.status_code == 400
        big = json.dumps({"debate": "x" * (2 << 20)})
        r = await client.post("/api/runs", content=big)
        assert r.status_code == 413 and "larger than 1 MB" in r.json()["message"]

        async def chunks():  # no Content-Length: refused once 1 MB has arrived
            for _ in range(64):
                yield b"x" * 65536

        r = await client.post("/api/runs", content=chunks())
        assert r.status_code == 413
        assert not ui.runs


def test_download_names_cannot_break_out_of_the_header():
    from debatrix.app.ui import attachment

    assert attachment("school_uniforms", "json") == ('attachment; filename="school_uniforms.json"; '
                                                     "filename*=UTF-8''school_uniforms.json")
    for hostile in ('x"; filename*=UTF-8\'\'evil.html; a="', "débat\r\nSet-Cookie: a=b", "辩论", "../../etc"):
        header = attachment(hostile, "json")
        head, star = header.split("; filename*=UTF-8''")
        assert header.isascii() and "\r" not in header and "\n" not in header
        assert head.count('"') == 2 and ";" not in head[len('attachment; filename="'):]
        assert star.endswith(".json") and ";" not in star and '"' not in star and "'" not in star
    assert attachment("辩论", "html").startswith('attachment; filename="debate.html"')


EVIL = JudgeUI(JudgeSettings(llm=LLMSettings(base_url="http://127.0.0.1:9/v1", model="fake", api_key="sk-server"),
                             memory=MemorySettings(embedding="hash")))


@pytest.mark.browser
@pytest.mark.parametrize("served_ui", [EVIL], indirect=True)
def test_a_malicious_page_in_a_real_browser_cannot_start_a_run(served_ui):
    """Another origin (a page on another port of 127.0.0.1, as a site the user visits would be) posts to the
    page's API the ways a browser allows without asking: a text/plain fetch, a no-cors fetch and a form. None of
    them starts a run, so nothing reaches the endpoint it names."""
    if not os.path.exists(CHROMIUM):
        pytest.skip("no chromium: install Debian's package (apt-get install chromium; make test does it as root)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")
    import http.server

    example = (EXAMPLES / "school_uniforms.yaml").read_text()
    with FakeOpenAIServer() as attacker:
        body = json.dumps({"debate": example, "mode": "direct", "orders": 1, "backend": "endpoint",
                           "base_url": attacker.base_url})
        evil = f"""<!doctype html><form id=f method=post action="{served_ui}/api/runs" enctype=text/plain>
<input name='{body[:-1]}, "x": "' value='"}}'></form><script>
fetch("{served_ui}/api/runs", {{method: "POST", headers: {{"content-type": "text/plain"}}, body: {json.dumps(body)}}})
  .catch(() => null).then(() => fetch("{served_ui}/api/runs", {{method: "POST", mode: "no-cors", body: {json.dumps(body)}}}))
  .catch(() => null).then(() => {{ document.title = "sent"; document.getElementById("f").submit(); }});
</script>"""

        class Site(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                data = evil.encode()
                self.send_response(200)
                self.send_header("content-type", "text/html")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Site)
        threading.Thread(target=site.serve_forever, daemon=True).start()
        try:
            with sync_api.sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                try:
                    page = browser.new_page()
                    page.goto(f"http://127.0.0.1:{site.server_address[1]}/")
                    page.wait_for_url(f"{served_ui}/api/runs", timeout=20_000)  # the form went through
                    assert "cross-origin requests are refused" in page.content()
                finally:
                    browser.close()
        finally:
            site.shutdown()
        assert not EVIL.runs and not attacker.requests


@pytest.mark.parametrize("log_calls", [True, False])
async def test_a_page_run_keeps_its_call_log_when_asked(log_calls):
    """The page's "keep every call" box: the run's result holds each call's prompt and answer (its report shows
    them), as `judge --log-calls` does; unticked, none."""
    with FakeOpenAIServer() as fake:
        ui = JudgeUI(base_settings(fake.base_url))
        async with page_client(ui, timeout=60) as client:
            debate = (EXAMPLES / "school_uniforms.yaml").read_text()
            r = await client.post("/api/runs", json={"debate": debate, "log_calls": log_calls})
            assert r.status_code == 200, r.text
            run = r.json()["run_id"]
            events_of((await client.get(f"/api/runs/{run}/events")).text)
            result = (await client.get(f"/api/runs/{run}/result.json")).json()
    assert (len(result["call_log"]) == result["usage"]["llm_calls"] > 0) is log_calls
    assert not log_calls or all(c["messages"] for c in result["call_log"])


@pytest.mark.parametrize("llm, named, said", [
    (LLMSettings(backend="local"), "qwen2.5-coder-1.5b", "nothing leaves this machine"),
    (LLMSettings(base_url="https://judge:s3cret@api.example.test/v1", model="big-model", api_key="k"),
     "big-model at https://***@api.example.test/v1", "The debate is sent to big-model"),
])
def test_the_page_names_the_model_it_judges_on_and_says_truly_where_the_debate_goes(llm, named, said):
    """`debatrix ui` started on an endpoint says the debate is sent there (never "nothing leaves this machine"),
    naming the model and the address without its credentials; on the embedded model, that nothing leaves."""
    page = JudgeUI(JudgeSettings(llm=llm)).page
    where = re.search(r'<p class="meta" id="where">([^<]*)</p>', page).group(1)
    assert said in where and named.split(" at ")[0] in where
    assert named in page  # the model menu's "as the server was started" names it too
    assert "s3cret" not in page
    assert ("nothing leaves this machine" in where) is llm.uses_local


@pytest.mark.parametrize("log_calls", [False, True])
def test_the_pages_keep_calls_box_starts_as_the_cli_would_run(log_calls):
    page = JudgeUI(JudgeSettings(llm=LLMSettings(backend="local", log_calls=log_calls))).page
    box = re.search(r'<input type="checkbox" id="log_calls"[^>]*>', page).group(0)
    assert ("checked" in box) is log_calls
