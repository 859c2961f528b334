"""``debatrix ui``: a local web page that judges a debate live.

A small Starlette app. The page posts the debate (pasted or uploaded YAML/JSON, or the simple form) and the run's
options; the server checks them as the CLI does (the loader's messages come back for the field they concern, never a
traceback), starts the judge and streams its progress events to the page as server-sent events: the matrix of
speeches and dimensions fills cell by cell as each analysis and score is written, then the verdicts. A run can be
stopped; its result JSON and HTML report can be downloaded. Why this stack: the judge already emits one event per
step (``on_event``), server-sent events carry them one way over plain HTTP with the browser's own ``EventSource``
(no websocket protocol, no client library), and Starlette with uvicorn adds two small dependencies; the page is one
template with a little plain JavaScript, so it needs no build step and a browser test drives it as a user would.

Bound to 127.0.0.1 by default: the page can start model runs, so it is not for an open network.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from debatrix.core.dimension import DimensionRegistry
from debatrix.core.errors import DebatrixError, InvalidDebateError
from debatrix.core.loader import debate_from_dict, debate_from_text, preset_from_text
from debatrix.core.models import Debate, JudgeResult
from debatrix.core.modes import MODES, resolve_dimensions
from debatrix.core.settings import JudgeSettings, LLMSettings

from .api import ProgressEvent, ajudge_debate
from .report import env, result_html

#: how long a finished run's events and result stay available to the page
KEEP_RUNS = 32


@dataclass
class Run:
    id: str
    debate: Debate
    settings: JudgeSettings
    dimensions: list[str]
    events: list[dict[str, Any]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task | None = None
    result: JudgeResult | None = None
    state: str = "running"  # running, done, stopped, failed
    error: str | None = None
    started: float = field(default_factory=time.monotonic)

    def push(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        self.changed.set()


class FieldError(Exception):
    def __init__(self, fieldname: str, message: str):
        super().__init__(message)
        self.field, self.message = fieldname, message


def form_debate(form: dict[str, Any]) -> Debate:
    """The simple form: a motion, a pro and a con debater, and their speeches in order (pro speaks first)."""
    motion = str(form.get("motion") or "").strip()
    pro, con = str(form.get("pro") or "").strip(), str(form.get("con") or "").strip()
    speeches = [str(s).strip() for s in form.get("speeches") or [] if str(s).strip()]
    if not motion:
        raise FieldError("motion", "the motion is empty")
    if not pro or not con:
        raise FieldError("pro" if not pro else "con", "both debaters need a name")
    if len(speeches) < 2:
        raise FieldError("speeches", "give at least one speech per debater (pro speaks first, then they alternate)")
    data = {"motion": motion, "debaters": [{"name": pro, "side": "pro"}, {"name": con, "side": "con"}],
            "speeches": [{"speaker": pro if i % 2 == 0 else con, "content": s} for i, s in enumerate(speeches)]}
    try:
        return debate_from_dict(data, "<form>", default_id="form-debate")
    except InvalidDebateError as e:
        raise FieldError("speeches", str(e)) from None


class JudgeUI:
    """The web app: ``JudgeUI(base).app`` is an ASGI app. ``base``: settings every run starts from (the CLI's
    options); ``chat_model``: a LangChain model to judge with instead (tests)."""

    def __init__(self, base: JudgeSettings | None = None, chat_model: BaseChatModel | None = None):
        self.base = base or JudgeSettings()
        self.chat_model = chat_model
        self.runs: dict[str, Run] = {}
        self.page = env().get_template("ui.html.j2").render(modes=list(MODES.values()), base=self.base)
        self.app = Starlette(routes=[
            Route("/", self.index),
            Route("/api/runs", self.start, methods=["POST"]),
            Route("/api/runs/{run_id}/events", self.stream),
            Route("/api/runs/{run_id}/stop", self.stop, methods=["POST"]),
            Route("/api/runs/{run_id}/result.json", self.result_json),
            Route("/api/runs/{run_id}/report.html", self.report),
        ])

    async def index(self, request: Request) -> Response:
        return HTMLResponse(self.page)

    def _settings(self, body: dict[str, Any]) -> JudgeSettings:
        mode = body.get("mode") or self.base.mode
        if mode not in MODES:
            raise FieldError("mode", f"unknown mode {mode!r}; choose one of: {', '.join(MODES)}")
        update: dict[str, Any] = {"mode": mode}
        dims = [d.strip() for d in str(body.get("dimensions") or "").split(",") if d.strip()]
        update["dimensions"] = tuple(dims) or None
        if body.get("orders"):
            try:
                update["orders"] = int(body["orders"])
            except ValueError:
                raise FieldError("orders", "orders is a number from 1 to 4") from None
        llm = self.base.llm
        if body.get("backend") == "endpoint":
            if not body.get("base_url"):
                raise FieldError("base_url", "give the endpoint's base URL (e.g. http://127.0.0.1:8000/v1)")
            llm = LLMSettings(**{**llm.model_dump(exclude={"api_key"}), "backend": "openai",
                                 "base_url": body["base_url"], "model": body.get("model") or llm.model},
                              api_key=llm.api_key)
        elif body.get("backend") == "local":
            llm = llm.model_copy(update={"backend": "local"})
        try:
            return JudgeSettings.model_validate({**self.base.model_dump(exclude={"llm"}), **update, "llm": llm})
        except ValueError as e:
            raise FieldError("options", str(e).splitlines()[0]) from None

    async def start(self, request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"field": "debate", "message": "the request is not JSON"}, status_code=400)
        try:
            if body.get("form"):
                debate = form_debate(body["form"])
            elif body.get("preset"):
                preset = body["preset"]
                if not str(preset.get("motion") or "").strip() or not str(preset.get("speeches") or "").strip():
                    raise FieldError("preset", "give both files of the pair: motion/<id>.yml and speech/<id>.yml")
                try:
                    debate = preset_from_text(str(preset["motion"]), str(preset["speeches"]),
                                              str(preset.get("id") or "preset"))
                except InvalidDebateError as e:
                    raise FieldError("preset", str(e)) from None
            else:
                text = str(body.get("debate") or "")
                if not text.strip():
                    raise FieldError("debate", "paste or upload a debate (YAML or JSON), or fill in the form")
                try:
                    debate = debate_from_text(text, body.get("filename") or "<pasted debate>")
                except InvalidDebateError as e:
                    raise FieldError("debate", str(e)) from None
            settings = self._settings(body)
            try:
                dims = resolve_dimensions(settings.mode, settings.dimensions, debate.format,
                                          DimensionRegistry(settings.dimension_dirs))
            except DebatrixError as e:
                raise FieldError("dimensions", str(e)) from None
        except FieldError as e:
            return JSONResponse({"field": e.field, "message": e.message}, status_code=400)
        run = Run(id=uuid.uuid4().hex[:12], debate=debate, settings=settings, dimensions=[d.name for d in dims])
        self._keep(run)
        run.task = asyncio.create_task(self._judge(run))
        run.task.add_done_callback(lambda task: _stopped_before_it_began(run, task))
        return JSONResponse({"run_id": run.id, "dimensions": run.dimensions, "mode": settings.mode,
                             "per_speech": MODES[settings.mode].per_speech, "motion": debate.motion,
                             "speeches": [{"number": i + 1, "speaker": s.speaker}
                                          for i, s in enumerate(debate.speeches)]})

    def _keep(self, run: Run) -> None:
        self.runs[run.id] = run
        finished = [r for r in self.runs.values() if r.state != "running"]
        for old in finished[: max(0, len(self.runs) - KEEP_RUNS)]:
            self.runs.pop(old.id, None)

    async def _judge(self, run: Run) -> None:
        def on_event(event: ProgressEvent) -> None:
            run.push({"type": "step", **event.as_dict()})

        try:
            run.result = await ajudge_debate(run.debate, run.settings, self.chat_model, on_event=on_event)
            run.state = "done"
            run.push({"type": "done", **summary(run.result)})
        except asyncio.CancelledError:
            run.state = "stopped"
            run.push({"type": "stopped", "message": "stopped: the calls not yet answered were abandoned"})
        except DebatrixError as e:
            run.state, run.error = "failed", str(e)
            run.push({"type": "failed", "message": str(e)})
        except Exception as e:  # a bug: the page says so instead of waiting forever
            run.state, run.error = "failed", f"{type(e).__name__}: {e}"
            run.push({"type": "failed", "message": run.error})

    def _run(self, request: Request) -> Run | None:
        return self.runs.get(request.path_params["run_id"])

    async def stream(self, request: Request) -> Response:
        run = self._run(request)
        if run is None:
            return JSONResponse({"message": "no such run"}, status_code=404)

        async def events() -> Any:
            sent = 0
            while True:
                while sent < len(run.events):
                    yield f"data: {json.dumps(run.events[sent])}\n\n"
                    sent += 1
                if run.state != "running" and sent >= len(run.events):
                    return
                run.changed.clear()
                if sent < len(run.events):
                    continue
                try:
                    await asyncio.wait_for(run.changed.wait(), timeout=15)
                except TimeoutError:
                    yield ": keep-alive\n\n"  # comment line: keeps proxies from closing an idle stream
                if await request.is_disconnected():
                    return

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def stop(self, request: Request) -> Response:
        run = self._run(request)
        if run is None:
            return JSONResponse({"message": "no such run"}, status_code=404)
        if run.task is not None and not run.task.done():
            run.task.cancel()
        return JSONResponse({"state": "stopping" if run.state == "running" else run.state})

    async def result_json(self, request: Request) -> Response:
        run = self._run(request)
        if run is None or run.result is None:
            return JSONResponse({"message": "no result (yet)"}, status_code=404)
        return Response(run.result.model_dump_json(indent=2), media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="{run.debate.id}.json"'})

    async def report(self, request: Request) -> Response:
        run = self._run(request)
        if run is None or run.result is None:
            return JSONResponse({"message": "no result (yet)"}, status_code=404)
        return HTMLResponse(result_html(run.result),
                            headers={"Content-Disposition": f'attachment; filename="{run.debate.id}.html"'})


def _stopped_before_it_began(run: Run, task: asyncio.Task) -> None:
    """A run stopped before its task first ran never entered ``_judge`` (so never said it stopped): say it here."""
    if task.cancelled() and run.state == "running":
        run.state = "stopped"
        run.push({"type": "stopped", "message": "stopped before the first call"})


def summary(result: JudgeResult) -> dict[str, Any]:
    """What the page shows once the judge is done: the verdicts with their reasons, and the usage."""
    def verdict(d: Any) -> dict[str, Any] | None:
        if d is None or d.verdict is None:
            return None
        v = d.verdict
        return {"name": d.name, "winner": v.winner, "confidence": v.confidence, "comment": v.comment,
                "scores": {j.debater: j.score for j in d.debater_judgments}}

    u = result.usage
    return {"status": result.status.value, "incomplete_reason": result.incomplete_reason,
            "general": verdict(result.general), "dimensions": [verdict(d) for d in result.dimensions],
            "usage": {"calls": u.llm_calls, "prompt_tokens": u.prompt_tokens,
                      "completion_tokens": u.completion_tokens, "seconds": u.wall_seconds}}


def serve(host: str, port: int, base: JudgeSettings, chat_model: BaseChatModel | None = None) -> None:
    import uvicorn

    uvicorn.run(JudgeUI(base, chat_model).app, host=host, port=port, log_level="warning")
