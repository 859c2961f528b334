"""The judge served: ``debatrix serve`` (a LangGraph-API-compatible service) and ``debatrix ui`` (the web page)."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from debatrix.core.errors import DebatrixError, ExitCode
from debatrix.core.settings import DEFAULT_LOCAL_MODEL, DEFAULT_MODE

from .options import BackendOption, BaseUrl, LocalModel, ModelName
from .terminal import console, out_console
from .cli_common import fail, make_settings


def serve(
    model: Annotated[str, typer.Option(help="catalogue name or .gguf path")] = DEFAULT_LOCAL_MODEL,
    port: Annotated[int, typer.Option(help="port on 127.0.0.1")] = 8080,
    context: Annotated[int | None, typer.Option(help="context per slot (default: the model's trained context)")] = None,
    parallel: Annotated[int, typer.Option(help="requests served at once (one slot reuses its prompt cache best)")] = 1,
) -> None:
    """Keep a local model server running for several judge runs.

    Ctrl-C or SIGTERM stops it cleanly."""
    import signal

    from debatrix.llm.local import LocalModelError, LocalServer

    try:
        server = LocalServer(model, port=port, context=context, parallel=parallel).start()
    except (LocalModelError, DebatrixError) as e:
        fail(str(e))
        raise
    stop = {"now": False}

    def handle(signum: int, frame: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)
    out_console.print(f"serving {server.name} at {server.base_url} (loaded in {server.load_seconds:.1f}s); use\n"
                      f"  debatrix judge DEBATE --base-url {server.base_url} --model {server.name} "
                      f"--context-window {server.context_per_request}", highlight=False)
    try:
        while not stop["now"] and server.alive():
            time.sleep(0.5)
    finally:
        server.stop()
    if not stop["now"]:
        fail(f"the model server stopped unexpectedly: {server.log_tail()}", code=ExitCode.SERVER_STOPPED)
    console.print("server stopped")


def ui(
    host: Annotated[str, typer.Option(help="interface to listen on (the page starts model runs: keep it local)")]
        = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port of the page")] = 8710,
    base_url: BaseUrl = None,
    model: ModelName = None,
    local_model: LocalModel = None,
    backend: BackendOption = None,
    allow_local: Annotated[bool | None, typer.Option(
        "--allow-local/--no-allow-local", help="let the page start the embedded local model (default: only when "
                                               "it is the server's own model)")] = None,
    allowed_host: Annotated[list[str] | None, typer.Option(
        help="a host name the page is reached under besides 127.0.0.1/localhost (e.g. with --host 0.0.0.0); "
             "requests naming any other host are refused")] = None,
) -> None:
    """Judge debates on a local web page, live.

    Paste or upload a debate, pick the mode and the model, and watch the matrix of analyses fill in."""
    try:
        from .ui import serve_page
    except ImportError as e:
        fail(f"`debatrix ui` needs the ui extra ({e.name} is missing): pip install 'debatrix[ui]'")
        raise
    settings = make_settings(mode=DEFAULT_MODE, base_url=base_url, model=model, local_model=local_model,
                              backend=backend)
    console.print(f"Debatrix UI at http://{host}:{port}/ (Ctrl-C stops it)", highlight=False)
    serve_page(host, port, settings, allow_local=allow_local, hosts=tuple(allowed_host or ()))
