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
import re
import secrets
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from debatrix.core.dimension import DimensionRegistry
from debatrix.core.flow import FLOW_LINE_LEGEND
from debatrix.core.errors import (ConfigurationError, ContextWindowExceeded, DebatrixError, InvalidDebateError,
                                  UnknownModeError)
from debatrix.core.loader import debate_from_dict, debate_from_text, preset_from_text
from debatrix.core.models import Debate
from debatrix.core.results import JudgeResult
from debatrix.core.modes import MODES, RunPlan
from debatrix.core.probabilities import reason_of
from debatrix.core.review import debate_of, parse_corrections, recompute
from debatrix.context import JudgeContext, run_settings
from debatrix.graphs.build import plan_run
from debatrix.core.settings import redact_url, JudgeSettings, LLMSettings
from debatrix.llm.gateway import endpoint_key

from .api import ProgressEvent, ajudge_debate, refused
from .terminal import table_notes
from .report import env, flow_sheet, result_html
from .reviewing import ReviewRequest, Reviewed, review_view, reviewable

#: how long a finished run's events and result stay available to the page
KEEP_RUNS = 32
#: the largest request body read (a debate of a few hundred thousand words; the largest PanelBench debate is 82 KB):
#: a larger one is refused from its Content-Length, or once that much has arrived, before anything is parsed
MAX_BODY = 1 << 20
#: the largest result a person may upload to review (a result keeps its call log: a long debate's runs to megabytes)
MAX_RESULT_BODY = 32 << 20
#: the host names the page answers to: a page fetched under any other name (DNS rebinding) gets nothing
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
TOKEN_HEADER = "x-debatrix-token"


class FormRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    motion: str = ""
    pro: str = ""
    con: str = ""
    speeches: list[str] = []


class PresetRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    motion: str = ""
    speeches: str = ""
    id: str | None = None


class RunRequest(BaseModel):
    """What the page posts to start a run (checked before anything else is done with it)."""

    model_config = ConfigDict(extra="forbid")
    debate: str | None = None
    filename: str | None = Field(default=None, max_length=255)
    form: FormRequest | None = None
    preset: PresetRequest | None = None
    mode: str | None = None
    dimensions: str | None = None
    orders: int | None = Field(default=None, ge=1, le=4)
    backend: Literal["", "local", "endpoint"] | None = None
    base_url: str | None = None
    model: str | None = Field(default=None, max_length=200)
    api_key: str | None = Field(default=None, max_length=500)  # the page's own key for the endpoint it names
    # keep every call's prompt and answer in the result (its report shows them); None: as the page's settings say
    log_calls: bool | None = None

    @field_validator("orders", mode="before")
    @classmethod
    def _blank_orders(cls, v: Any) -> Any:
        return None if v == "" else v


@dataclass
class Run:
    id: str
    debate: Debate
    settings: JudgeSettings
    plan: RunPlan  # made when the run was asked for (its dimensions shown at once)
    events: list[dict[str, Any]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task | None = None
    result: JudgeResult | None = None
    state: str = "running"  # running, done, stopped, failed
    error: str | None = None
    context: JudgeContext | None = None  # the run's own, once made (Stop ends its calls)
    stop_asked: bool = False
    started: float = field(default_factory=time.monotonic)

    @property
    def dimensions(self) -> list[str]:
        return [d.name for d in self.plan.dimensions]

    def push(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        self.changed.set()


class FieldError(Exception):
    def __init__(self, fieldname: str, message: str):
        super().__init__(message)
        self.field, self.message = fieldname, message


def example_debate() -> str | None:
    """The example the page offers to start from (the project's four-day-week debate), if it is installed."""
    from importlib import resources

    try:
        return (resources.files("debatrix.examples") / "four_day_week.yaml").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        return None


def form_debate(form: FormRequest) -> Debate:
    """The simple form: a motion, a pro and a con debater, and their speeches in order (pro speaks first)."""
    motion, pro, con = form.motion.strip(), form.pro.strip(), form.con.strip()
    speeches = [s.strip() for s in form.speeches]
    while speeches and not speeches[-1]:  # a closing --- line with nothing after it
        speeches.pop()
    while speeches and not speeches[0]:
        speeches.pop(0)
    # speakers alternate by position: dropping an empty speech would give every later one to the other debater
    blank = next((k for k, text in enumerate(speeches) if not text), None)
    if blank is not None:
        raise FieldError("speeches", f"speech {blank + 1} is empty: write it, or remove its --- line (speakers "
                         "alternate, so every later speech would go to the other debater)")
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
    options); ``chat_model``: a LangChain model to judge with instead (tests). ``allow_local``: the page may start
    the embedded local model (default: only when the server's own model is the local one). ``hosts``: the host
    names the page is served under besides the loopback ones.

    Any site the user visits could post to a page on 127.0.0.1, so every request must name this host (no DNS
    rebinding), and a request that starts or stops a run must come from the page itself: its origin, if the
    browser sends one, is this host, and it carries the token the page was served with (another site can neither
    read the page nor send that header without a CORS preflight, which is never granted)."""

    def __init__(self, base: JudgeSettings | None = None, chat_model: BaseChatModel | None = None, *,
                 allow_local: bool | None = None, hosts: tuple[str, ...] = ()):
        self.base = base or JudgeSettings()
        self.chat_model = chat_model
        self.allow_local = self.base.llm.uses_local if allow_local is None else allow_local
        self.token = secrets.token_urlsafe(24)
        self.runs: dict[str, Run] = {}
        registry = DimensionRegistry()
        started, where = started_with(self.base, chat_model)
        self.page = env().get_template("ui.html.j2").render(
            modes=list(MODES.values()), base=self.base, token=self.token, allow_local=self.allow_local,
            started=started, where=where,
            dimension_names=registry.names, dimension_sets=registry.set_names, example=example_debate(),
            flow_legend=FLOW_LINE_LEGEND)
        self.reviews: dict[str, Reviewed] = {}
        self.app = Starlette(routes=[
            Route("/", self.index),
            Route("/api/runs", self.start, methods=["POST"]),
            Route("/api/runs/{run_id}/events", self.stream),
            Route("/api/runs/{run_id}/stop", self.stop, methods=["POST"]),
            Route("/api/runs/{run_id}/result.json", self.result_json),
            Route("/api/runs/{run_id}/report.html", self.report),
            Route("/api/results", self.upload, methods=["POST"]),
            Route("/api/reviews/{run_id}", self.correct, methods=["POST"]),
            Route("/api/reviews/{run_id}/first", self.first),
            Route("/api/reviews/{run_id}/result.json", self.result_json),
            Route("/api/reviews/{run_id}/report.html", self.report),
        ], middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=[*LOOPBACK_HOSTS, *hosts])])

    async def index(self, request: Request) -> Response:
        return HTMLResponse(self.page, headers={"Cache-Control": "no-store", "X-Frame-Options": "DENY",
                                                "Content-Security-Policy": "frame-ancestors 'none'"})

    def _forbidden(self, request: Request) -> Response | None:
        """Why a state-changing request is refused (None: it comes from this page)."""
        origin = request.headers.get("origin")
        if origin is not None and origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
            return JSONResponse({"message": "cross-origin requests are refused"}, status_code=403)
        if not secrets.compare_digest(request.headers.get(TOKEN_HEADER, ""), self.token):
            return JSONResponse({"message": "requests must come from the page (its token is missing)"},
                                status_code=403)
        return None

    def _llm(self, body: RunRequest) -> LLMSettings:
        llm = self.base.llm
        if body.backend == "endpoint":
            url = (body.base_url or "").strip()
            if not url:
                raise FieldError("base_url", "give the endpoint's base URL (e.g. http://127.0.0.1:8000/v1)")
            try:  # the settings' own check of the URL (an http(s) address), answered beside its field
                named = LLMSettings(**{**llm.model_dump(exclude={"api_key"}), "backend": "openai", "base_url": url,
                                       "model": body.model or llm.model})
            except ValidationError as e:
                err = e.errors()[0]
                raise FieldError("base_url" if err["loc"][:1] == ("base_url",) else "options",
                                 err["msg"].removeprefix("Value error, ")) from None
            # the server's own key goes only to the endpoint the server was started with: a page that names
            # another one sends its own key, or none
            same = llm.base_url is not None and endpoint_key(url) == endpoint_key(llm.base_url)
            key = llm.api_key if same else (SecretStr(body.api_key) if body.api_key else None)
            return named.model_copy(update={"api_key": key})
        if body.backend == "local":
            if not self.allow_local:
                raise FieldError("backend", "this server does not start the local model (start it with "
                                            "`debatrix ui --allow-local`, or choose an endpoint)")
            return llm.model_copy(update={"backend": "local"})
        return llm

    def _settings(self, body: RunRequest) -> JudgeSettings:
        mode = body.mode or self.base.mode
        try:
            MODES.get_or_raise(mode)
        except UnknownModeError as e:  # the registry's own words
            raise FieldError("mode", str(e)) from None
        update: dict[str, Any] = {"mode": mode}
        dims = [d.strip() for d in (body.dimensions or "").split(",") if d.strip()]
        update["dimensions"] = tuple(dims) or None
        if body.orders:
            update["orders"] = body.orders
        try:
            llm = self._llm(body)
            if body.log_calls is not None:
                llm = llm.model_copy(update={"log_calls": body.log_calls})
            return JudgeSettings.model_validate({**self.base.model_dump(exclude={"llm"}), **update, "llm": llm})
        except ValueError as e:
            raise FieldError("options", str(e).splitlines()[0]) from None

    def _prepare(self, body: RunRequest) -> tuple[Debate, JudgeSettings, RunPlan]:
        """The debate and the run's settings, checked as the CLI checks them (in a thread: parsing a large debate
        must not hold up the page)."""
        if body.form is not None:
            debate = form_debate(body.form)
        elif body.preset is not None:
            preset = body.preset
            if not preset.motion.strip() or not preset.speeches.strip():
                raise FieldError("preset", "give both files of the pair: motion/<id>.yml and speech/<id>.yml")
            try:
                debate = preset_from_text(preset.motion, preset.speeches, preset.id or "preset")
            except InvalidDebateError as e:
                raise FieldError("preset", str(e)) from None
        else:
            text = body.debate or ""
            if not text.strip():
                raise FieldError("debate", "paste or upload a debate (YAML or JSON), or fill in the form")
            try:
                debate = debate_from_text(text, body.filename or "<pasted debate>")
            except InvalidDebateError as e:
                raise FieldError("debate", str(e)) from None
        settings = self._settings(body)
        try:  # the run's plan, made once: its dimensions are shown now, its size fits the local server
            plan = plan_run(debate, run_settings(settings, self.chat_model),
                            DimensionRegistry(settings.dimension_dirs))
        except DebatrixError as e:
            raise FieldError("dimensions", str(e)) from None
        return debate, settings, plan

    async def start(self, request: Request) -> Response:
        refusal = self._forbidden(request)
        if refusal is not None:
            return refusal
        raw = await _body(request)
        if raw is None:
            return JSONResponse({"field": "debate", "message": f"the request is larger than {MAX_BODY >> 20} MB; "
                                 "judge a debate this long with the CLI"}, status_code=413)
        try:
            body = RunRequest.model_validate_json(raw)
        except ValidationError as e:
            err = e.errors()[0]
            where = ".".join(str(x) for x in err["loc"]) or "request"
            return JSONResponse({"field": str(err["loc"][0]) if err["loc"] else "debate",
                                 "message": f"{where}: {err['msg']}"}, status_code=400)
        try:
            debate, settings, plan = await asyncio.to_thread(self._prepare, body)
        except FieldError as e:
            return JSONResponse({"field": e.field, "message": e.message}, status_code=400)
        run = Run(id=uuid.uuid4().hex[:12], debate=debate, settings=settings, plan=plan)
        self._keep(run)
        run.task = asyncio.create_task(self._judge(run))
        run.task.add_done_callback(lambda task: _stopped_before_it_began(run, task))
        calls = plan.calls
        columns = MODES[settings.mode].progress_columns(run.dimensions)
        return JSONResponse({"run_id": run.id, "dimensions": columns, "mode": settings.mode, "calls": calls,
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
            try:  # the context is the run's own, so that Stop can end its calls and keep what they answered
                context = await asyncio.to_thread(JudgeContext.create, run.settings, self.chat_model, [run.plan])
            except ContextWindowExceeded as e:
                run.result = refused(run.debate, run.settings, e)
            else:
                try:
                    run.context = context
                    if run.stop_asked:  # while the context was made (the local model loading): nothing was sent
                        context.gateway.stop("stopped on the page")
                    run.result = await ajudge_debate(run.debate, run.settings, context=context, on_event=on_event)
                finally:
                    context.close()
            if run.result.flow and MODES[run.result.mode].reads_flow and run.result.general is not None:
                self._keep_review(Reviewed(run.id, run.result))  # a person may correct it on the page
            if run.stop_asked:
                run.state = "stopped"
                kept = run.result.usage.llm_calls
                run.push({"type": "stopped", **summary(run.result), "message": (
                    f"stopped: the {kept} calls already answered are kept in the result, which is incomplete"
                    if kept else "stopped before the first call")})
            else:
                run.state = "done"
                run.push({"type": "done", **summary(run.result), **review_view(self.reviews.get(run.id))})
        except asyncio.CancelledError:
            run.state = "stopped"
            run.push({"type": "stopped", "message": "stopped before the first call"})
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

        # sse-starlette frames the events, pings an idle stream (so proxies keep it open) and ends the generator
        # when the client goes; each event carries its index as id, so a browser that reconnects (EventSource
        # does, sending Last-Event-ID) resumes after the last event it had instead of replaying the run
        try:
            sent = int(request.headers.get("last-event-id", "-1")) + 1
        except ValueError:
            sent = 0

        async def events() -> Any:
            nonlocal sent
            while True:
                while sent < len(run.events):
                    yield ServerSentEvent(data=json.dumps(run.events[sent]), id=str(sent))
                    sent += 1
                if run.state != "running" and sent >= len(run.events):
                    return
                run.changed.clear()
                if sent < len(run.events):
                    continue
                await run.changed.wait()

        return EventSourceResponse(events(), ping=15, headers={"Cache-Control": "no-cache",
                                                              "X-Accel-Buffering": "no"})

    async def stop(self, request: Request) -> Response:
        refusal = self._forbidden(request)
        if refusal is not None:
            return refusal
        run = self._run(request)
        if run is None:
            return JSONResponse({"message": "no such run"}, status_code=404)
        if run.state == "running":
            run.stop_asked = True
            if run.context is not None:  # judging: its calls end, the answered ones stay in the result
                run.context.gateway.stop("stopped on the page")
        return JSONResponse({"state": "stopping" if run.state == "running" else run.state})

    def _shown(self, request: Request) -> JudgeResult | None:
        """The result a download gives: as a person corrected it on the page, else as the run judged it."""
        reviewed = self.reviews.get(request.path_params["run_id"])
        if reviewed is not None:
            return reviewed.result
        run = self._run(request)
        return run.result if run is not None else None

    async def result_json(self, request: Request) -> Response:
        result = self._shown(request)
        if result is None:
            return JSONResponse({"message": "no result (yet)"}, status_code=404)
        return Response(result.model_dump_json(indent=2), media_type="application/json",
                        headers={"Content-Disposition": attachment(result.debate_id, "json")})

    async def report(self, request: Request) -> Response:
        result = self._shown(request)
        if result is None:
            return JSONResponse({"message": "no result (yet)"}, status_code=404)
        return HTMLResponse(result_html(result), headers={"Content-Disposition": attachment(result.debate_id,
                                                                                             "html")})

    def _keep_review(self, reviewed: Reviewed) -> None:
        self.reviews[reviewed.id] = reviewed
        for old in list(self.reviews)[: max(0, len(self.reviews) - KEEP_RUNS)]:
            self.reviews.pop(old, None)

    async def upload(self, request: Request) -> Response:
        """A result JSON the person picked (one downloaded from this page, or written by ``debatrix judge``), kept
        here to be reviewed: its verdicts, its sheet and what to review first, as when a run ends."""
        refusal = self._forbidden(request)
        if refusal is not None:
            return refusal
        raw = await _body(request, MAX_RESULT_BODY)
        if raw is None:
            return JSONResponse({"field": "result", "message": f"the file is larger than {MAX_RESULT_BODY >> 20} MB: "
                                 "not a result this page reads"}, status_code=413)
        try:
            result = await asyncio.to_thread(reviewable, raw)
        except ConfigurationError as e:
            return JSONResponse({"field": "result", "message": str(e)}, status_code=400)
        reviewed = Reviewed(uuid.uuid4().hex[:12], result)
        self._keep_review(reviewed)
        return JSONResponse({"motion": result.motion, **summary(result), **review_view(reviewed)})

    async def correct(self, request: Request) -> Response:
        """The result recomputed with the corrections the page holds (all of them, in the order set: each replaces
        the list kept), checked against the debate; no model is called."""
        refusal = self._forbidden(request)
        if refusal is not None:
            return refusal
        reviewed = self.reviews.get(request.path_params["run_id"])
        if reviewed is None:
            return JSONResponse({"message": "no such result to review (this page keeps the last "
                                            f"{KEEP_RUNS}): upload it again"}, status_code=404)
        raw = await _body(request)
        if raw is None:
            return JSONResponse({"message": "too many corrections in one request"}, status_code=413)
        try:
            body = ReviewRequest.model_validate_json(raw)
            corrections = parse_corrections({"by": body.by, "corrections": body.corrections},
                                            debate_of(reviewed.original), {f.index for f in reviewed.original.flow},
                                            "the page")
            reviewed.result = await asyncio.to_thread(recompute, reviewed.original, corrections)
        except ValidationError as e:
            err = e.errors()[0]
            return JSONResponse({"message": f"{'.'.join(map(str, err['loc'])) or 'request'}: {err['msg']}"},
                                status_code=400)
        except ConfigurationError as e:
            return JSONResponse({"message": str(e)}, status_code=400)
        return JSONResponse({**summary(reviewed.result), **review_view(reviewed, first=False)})

    async def first(self, request: Request) -> Response:
        """The decisions to review first in the result as it now stands (every decision recomputed both ways: on a
        long debate a second or so, so asked apart from the recompute, which answers at once)."""
        reviewed = self.reviews.get(request.path_params["run_id"])
        if reviewed is None:
            return JSONResponse({"message": "no such result to review"}, status_code=404)
        return JSONResponse(await asyncio.to_thread(review_view, reviewed))


def attachment(name: str, suffix: str) -> str:
    """A Content-Disposition that saves ``name.suffix`` whatever the name holds: an ASCII fallback of safe
    characters, and the name itself percent-encoded (RFC 6266), so no quote, line break or second parameter of
    the debate id reaches the header."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:80] or "debate"
    return f"attachment; filename=\"{safe}.{suffix}\"; filename*=UTF-8''{quote(f'{name[:80]}.{suffix}', safe='')}"


async def _body(request: Request, most: int = MAX_BODY) -> bytes | None:
    """The request body, or None once it is larger than ``most`` (nothing more is read)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > most:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > most:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _stopped_before_it_began(run: Run, task: asyncio.Task) -> None:
    """A run stopped before its task first ran never entered ``_judge`` (so never said it stopped): say it here."""
    if task.cancelled() and run.state == "running":
        run.state = "stopped"
        run.push({"type": "stopped", "message": "stopped before the first call"})


def started_with(base: JudgeSettings, chat_model: BaseChatModel | None = None) -> tuple[str, str]:
    """What model the page judges on unless the user picks another, in a few words for the model menu, and where a
    debate then goes, said truly in the page's header (an endpoint's address without its credentials)."""
    llm = base.llm
    if chat_model is not None:
        name = type(chat_model).__name__
        return name, (f"Unless you choose otherwise, the debate goes to the chat model this server was given ({name}),"
                      " wherever that model sends it.")
    if llm.uses_local:
        return (f"the embedded {llm.local_model}", f"Unless you choose an endpoint, the debate is judged here by the "
                f"embedded local model ({llm.local_model}): nothing leaves this machine.")
    model = llm.model or "the server's default model"
    at = redact_url(llm.base_url) or "the endpoint configured by the environment"
    return (f"{model} at {at}", f"The debate is sent to {model} at {at}, the endpoint this server was started "
            "with, unless you choose another.")


def page_sheet(result: JudgeResult) -> dict[str, Any] | None:
    """The flow sheet as the page draws it (:func:`debatrix.app.report.flow_sheet`, the passages' text included)."""
    sheet = flow_sheet(result)
    if sheet is None:
        return None
    return {"speakers": sheet["speakers"], "rounds": sheet["rounds"],
            "rows": [{"id": r["t"].id, "status": r["status"], "meaning": r["meaning"], "speaker": r["t"].speaker,
                      "argument": r["argument"], "set_by": r["set_by"], "cells": r["cells"]} for r in sheet["rows"]],
            "lines": sheet["lines"], "weighed": sheet["weighed"], "legend": sheet["legend"],
            "cell_legend": sheet["cell_legend"], "baseline": sheet["baseline"],
            "tallies": [{"debater": t.debater, "standing": t.standing, "arguments": t.arguments}
                        for t in sheet["tallies"]]}


def summary(result: JudgeResult) -> dict[str, Any]:
    """What the page shows once the judge is done: the verdicts with their reasons, and the usage."""
    def verdict(d: Any) -> dict[str, Any] | None:
        if d is None or d.verdict is None:
            return None
        v = d.verdict
        return {"name": d.name, "winner": v.winner, "lean": v.lean, "called": v.called, "unproven": v.unproven,
                "not_judged": v.not_judged, "confidence": v.confidence, "agreement": v.agreement, "method": v.method,
                "comment": reason_of(v.comment),
                "score_winner": v.score_winner, "tie_margin": d.tie_margin,
                "scores": {j.debater: j.score for j in d.debater_judgments}}

    def comments(d: Any) -> dict[str, str]:  # a flow result's comments cite passages: the page shows them
        return {j.debater: j.comment for j in d.debater_judgments} if d.ledger is not None else {}

    u = result.usage
    return {"status": result.status.value, "incomplete_reason": result.incomplete_reason,
            "general": verdict(result.general), "weighing": result.weighing,
            "dimensions": [v | {"comments": comments(d)} if (v := verdict(d)) else None for d in result.dimensions],
            "flow": page_sheet(result), "profile": result.profile,
            # what the verdicts' words mean ("uncalibrated", "too close to call"), as the summary says it
            "notes": table_notes([d for d in (*result.dimensions, result.general) if d is not None]),
            "usage": {"calls": u.llm_calls, "prompt_tokens": u.prompt_tokens,
                      "completion_tokens": u.completion_tokens, "seconds": u.wall_seconds}}


def serve_page(host: str, port: int, base: JudgeSettings, chat_model: BaseChatModel | None = None, *,
          allow_local: bool | None = None, hosts: tuple[str, ...] = ()) -> None:
    import uvicorn

    named = () if host in ("0.0.0.0", "::") else (host,)  # a wildcard is no name a browser uses
    uvicorn.run(JudgeUI(base, chat_model, allow_local=allow_local, hosts=(*named, *hosts)).app, host=host,
                port=port, log_level="warning")
