"""The judge as a LangGraph deployment: ``langgraph dev`` (or LangGraph Server) serves :func:`judge_graph`.

``langgraph.json`` at the project root names this module's :func:`judge_graph` as the graph ``judge``. Another agent calls
it with ``RemoteGraph("judge_graph", url=...)``, with the keys of the embedded graph: ``{"debate": ...}`` in (a
:class:`~debatrix.core.models.Debate` or its JSON), ``{"result": ...}`` out (a :class:`~debatrix.core.results.JudgeResult` as
JSON; :func:`result_of` reads it back).

The deployment's settings come from the server's environment (``langgraph.json`` loads ``.env``):

- ``DEBATRIX_SETTINGS``: a :class:`~debatrix.core.settings.JudgeSettings` as JSON (mode, orders, dimensions, backend,
  memory, ...); absent: the defaults;
- ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` / ``OPENAI_MODEL`` (or ``DEBATRIX_MODEL``): the endpoint, as for the CLI;
  with neither an endpoint nor a key the embedded local model serves the judge (started on the first run, sized to
  the model's whole context, shared by every run).

With ``langgraph.postgres.json`` instead, the server keeps its checkpoints in PostgreSQL
(:func:`postgres_checkpointer`, at ``DEBATRIX_POSTGRES_URI``): a run cut off by a restart resumes where its last
step ended, on this server or on another sharing the database.

A run (or an assistant) may choose, in ``config["configurable"]``, any of :data:`PER_RUN`: e.g.
``{"mode": "direct", "orders": 1}``. Runs share one model connection (or local model server) and one memory
backend; each run's memories are its own.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import threading
from collections.abc import AsyncIterator, Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig

from debatrix.context import PER_RUN, JudgeContext, RunOptions
from debatrix.core.errors import ConfigurationError
from debatrix.core.results import JudgeResult
from debatrix.core.settings import DEFAULT_MODE, JudgeSettings, LLMSettings


_lock = threading.Lock()
_shared: JudgeContext | None = None


def deployment_settings(environ: Mapping[str, str] | None = None) -> JudgeSettings:
    """The settings the deployment serves with: ``DEBATRIX_SETTINGS`` (JSON), then the endpoint variables."""
    raw = (os.environ if environ is None else environ).get("DEBATRIX_SETTINGS")
    try:
        settings = JudgeSettings.model_validate_json(raw) if raw else JudgeSettings()
    except ValueError as e:
        raise ConfigurationError(f"DEBATRIX_SETTINGS is not valid JudgeSettings JSON: {e}") from None
    endpoint = LLMSettings.env_fields(environ)
    return settings.model_copy(update={"llm": settings.llm.model_copy(update=endpoint)}) if endpoint else settings


def _base() -> JudgeContext:
    global _shared
    if _shared is None:
        _shared = JudgeContext.create(deployment_settings())
        atexit.register(_shared.close)  # the local model server, if this deployment started one
    return _shared


def run_context(configurable: dict[str, Any]) -> JudgeContext:
    """The context of a run choosing ``configurable``'s :data:`PER_RUN` settings: the deployment's model and memory,
    with those settings (validated as :class:`JudgeSettings` fields)."""
    with _lock:
        base = _base()
    return base.with_options(configurable)


async def judge_graph(config: RunnableConfig) -> Any:
    """The graph factory ``langgraph.json`` names: the compiled judge graph for the run's settings.

    The graph's nodes use the context it was built with (:func:`run_context`, built off the event loop: it may start
    the local model server); its context schema becomes :class:`RunOptions`, so the server hands the nodes the run's
    options as a plain dict (it would otherwise try to build a :class:`JudgeContext`, which holds the model
    connection, from them). Where the server only reads the graph (its schema, a drawing), it gets one built without
    a context, and no model is started."""
    from debatrix.core.modes import debate_mode
    from debatrix.graphs import MODES, build_graph, compiled

    configurable = dict(config.get("configurable") or {})
    if not configurable.get("__is_for_execution__", True):
        mode = configurable.get("mode") or deployment_settings().mode
        graph = build_graph(mode if mode in MODES else DEFAULT_MODE)
    else:
        ctx = await asyncio.to_thread(run_context, configurable)
        graph = compiled(ctx, debate_mode(ctx.settings.mode).name)
    return graph.copy(update={"context_schema": RunOptions})


@contextlib.asynccontextmanager
async def postgres_checkpointer() -> AsyncIterator[Any]:
    """The checkpointer ``langgraph.postgres.json`` names: LangGraph's own PostgreSQL saver at
    ``DEBATRIX_POSTGRES_URI``, its tables made on first use, the judge's types registered with its serializer. The
    server opens it when it starts and closes it when it stops."""
    url = os.environ.get("DEBATRIX_POSTGRES_URI")
    if not url:
        raise ConfigurationError("langgraph.postgres.json keeps checkpoints in PostgreSQL: set DEBATRIX_POSTGRES_URI "
                                 "(postgresql://user@host:5432/database)")
    try:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    except ImportError:
        raise ConfigurationError("the PostgreSQL checkpointer needs langgraph-checkpoint-postgres: pip install "
                                 "'debatrix[postgres]'") from None
    from debatrix.graphs.state import checkpoint_serializer

    async with AsyncPostgresSaver.from_conn_string(url, serde=checkpoint_serializer()) as saver:
        await saver.setup()
        yield saver


def result_of(output: dict[str, Any]) -> JudgeResult:
    """The :class:`JudgeResult` in a remote judge's output (``{"result": {...}}``), validated."""
    result = output.get("result")
    return result if isinstance(result, JudgeResult) else JudgeResult.model_validate(result)


__all__ = ["PER_RUN", "RunOptions", "run_context", "deployment_settings", "judge_graph", "postgres_checkpointer",
           "result_of"]
