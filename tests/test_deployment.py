"""The judge as a LangGraph deployment: `langgraph dev` serves langgraph.json, a parent agent calls it as a RemoteGraph.

The server runs as a subprocess on 127.0.0.1 against the fake model server (also on 127.0.0.1), with LangSmith
tracing and the CLI's analytics off: nothing leaves the machine."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from debatrix import ConfigurationError, load_debate
from debatrix.app.deployment import PER_RUN, RunOptions, run_context, deployment_settings, result_of
from debatrix.core.flow import flow_calls, open_rows
from debatrix.llm.local import free_port
from debatrix.testing import FakeOpenAIServer

from .conftest import EXAMPLES
from .test_embedding_in_agent import load_example

ROOT = Path(__file__).resolve().parent.parent
LANGGRAPH = Path(sys.executable).parent / "langgraph"


def test_langgraph_json_serves_the_judge_factory():
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["graphs"] == {"judge": "debatrix.app.deployment:judge_graph"}
    assert set(PER_RUN) == set(RunOptions.__annotations__)


def test_deployment_settings_come_from_the_environment():
    env = {"DEBATRIX_SETTINGS": json.dumps({"mode": "direct", "orders": 1, "llm": {"model": "m1"}}),
           "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-secret"}
    s = deployment_settings(env)
    assert (s.mode, s.orders, s.llm.model, s.llm.base_url) == ("direct", 1, "m1", "http://127.0.0.1:9/v1")
    assert s.llm.api_key.get_secret_value() == "sk-secret" and "sk-secret" not in json.dumps(s.public_dict())
    assert deployment_settings({}).mode == "flow"  # the default mode
    with pytest.raises(ConfigurationError, match="DEBATRIX_SETTINGS"):
        deployment_settings({"DEBATRIX_SETTINGS": '{"orders": 9}'})


def test_a_run_chooses_its_options_and_shares_the_deployments_model(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("DEBATRIX_SETTINGS", raising=False)
    a = run_context({"mode": "direct", "orders": 1, "thread_id": "ignored"})
    b = run_context({"dimensions": "argument, clash"})
    assert (a.settings.mode, a.settings.orders) == ("direct", 1)
    assert b.settings.dimensions == ("argument", "clash") and b.settings.mode == "flow"
    assert a.gateway is b.gateway and a.memory is b.memory
    assert run_context({"orders": 1, "mode": "direct"}) is a
    with pytest.raises(ConfigurationError, match="invalid run settings"):
        run_context({"orders": 9})


def _wait_ready(proc: subprocess.Popen, log: Path, port: int, timeout: float = 90.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"langgraph dev exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        url = f"http://127.0.0.1:{port}"
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as r:
                if r.status == 200:
                    return url
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail(f"langgraph dev did not answer within {timeout:.0f} s:\n{log.read_text()[-3000:]}")


@contextmanager
def langgraph_dev(folder: Path, base_url: str, config: str = "langgraph.json", started: list | None = None,
                  **env: str) -> Iterator[str]:
    """``langgraph dev`` serving ``config`` (at the project root) from ``folder``, its model at ``base_url``; yields
    the server's URL (its process appended to ``started``, for a test that kills it) and stops the server (its whole
    process group) afterwards."""
    if not LANGGRAPH.exists():
        pytest.skip("langgraph-cli is not installed: pip install -e '.[serve]' (make test installs it)")
    port = free_port()
    environ = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-test",
               "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false",
               "DEBATRIX_SETTINGS": json.dumps({"memory": {"embedding": "hash"}}), **env}
    environ.pop("LANGSMITH_API_KEY", None)
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "langgraph-dev.log"
    # cwd: the server keeps its in-memory state's snapshots in ./.langgraph_api
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [str(LANGGRAPH), "dev", "--config", str(ROOT / config), "--host", "127.0.0.1",
             "--port", str(port), "--no-browser", "--no-reload"],
            cwd=folder, env=environ, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    if started is not None:
        started.append(proc)
    try:
        yield _wait_ready(proc, log, port)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:  # killed already
            pass
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        shutil.rmtree(folder / ".langgraph_api", ignore_errors=True)


@pytest.fixture
def served_judge(tmp_path):
    """``langgraph dev`` serving langgraph.json, its model the fake server; yields (url, fake server)."""
    with FakeOpenAIServer() as fake, langgraph_dev(tmp_path, fake.base_url) as url:
        yield url, fake


async def test_a_parent_agent_judges_the_example_through_remote_graph(served_judge):
    from langgraph.pregel.remote import RemoteException, RemoteGraph

    url, fake = served_judge
    example = load_example()
    judge = RemoteGraph("judge", url=url)
    agent = example.build_coach(judge)  # the same agent as with the embedded graph

    path = EXAMPLES / "school_uniforms.yaml"
    state = await agent.ainvoke({"path": str(path)}, config={"configurable": {"orders": 1}})
    result = result_of(state)
    debate = load_debate(path)
    assert result.status == "complete" and result.mode == "flow"  # the default mode
    assert result.settings["orders"] == 1
    # an endpoint without a prompt cache: every passage asked its questions (argues, the points proposed) in one
    # request
    assert result.usage.llm_calls == len(fake.requests) == len(debate.passages) == flow_calls(debate, together=True)
    # each later speech was asked about the earlier points of the other side the flow held as arguments
    assert all(bool(f.lines) == bool(open_rows(debate, result.flow[:f.index], f.index)) for f in result.flow[1:])
    assert any(f.lines for f in result.flow)
    assert [f.index for f in result.flow] == list(range(len(debate.speeches)))
    assert state["feedback"].splitlines()[0] == f"Verdict: {result.general.verdict.called}."

    # the keys of the embedded graph, and a run's own mode
    out = await judge.ainvoke({"debate": debate.model_dump(mode="json")}, config={"configurable": {"mode": "direct"}})
    assert list(out) == ["result"] and result_of(out).mode == "direct"

    # bad input: the caller reads the judge's own message, not "internal error"
    with pytest.raises(RemoteException, match="unknown mode 'nonsense'"):
        await judge.ainvoke({"debate": debate.model_dump(mode="json")}, config={"configurable": {"mode": "nonsense"}})
    bad = debate.model_dump(mode="json") | {"speeches": []}
    with pytest.raises(RemoteException, match="speeches") as refused:
        await judge.ainvoke({"debate": bad})
    assert "pydantic" not in str(refused.value)
    empty = debate.model_dump(mode="json")
    empty["speeches"][1]["content"] = "   "
    with pytest.raises(RemoteException, match=r"speeches\.1\.content: .*empty") as refused:
        await judge.ainvoke({"debate": empty})
    assert "pydantic" not in str(refused.value) and "Traceback" not in str(refused.value)


async def test_every_mode_streams_its_events_on_the_server_and_a_run_that_failed_leaves_a_readable_state(
        served_judge):
    """What a LangGraph Studio user or an SDK client does first: stream a run's events (``stream_mode="events"``,
    the server's ``astream_events`` v2) in each mode, then read the thread's state, also after a run that was
    refused or cancelled. Before the columns answered with their output keys alone, the multi-column modes' event
    streams ended in an error event (InvalidUpdateError at key 'debate')."""
    from langgraph_sdk import get_client

    url, fake = served_judge
    client = get_client(url=url)
    debate = load_debate(EXAMPLES / "school_uniforms.yaml").model_dump(mode="json")
    for mode in ("flow", "debatrix", "chronological", "dimensional", "noniterative", "direct"):
        thread = await client.threads.create()
        parts = [p async for p in client.runs.stream(thread["thread_id"], "judge", input={"debate": debate},
                                                     config={"configurable": {"mode": mode, "orders": 1}},
                                                     stream_mode="events")]
        kinds = {p.event for p in parts}
        assert "error" not in kinds and "events" in kinds, (mode, [p.data for p in parts if p.event == "error"])
        chat = [p for p in parts if p.event == "events" and p.data.get("event") == "on_chat_model_start"]
        state = await client.threads.get_state(thread["thread_id"])
        result = result_of(state["values"])
        assert result.status.value == "complete" and result.mode == mode, (mode, result.incomplete_reason)
        assert len(chat) == result.usage.llm_calls > 0, mode

    # a run refused at its input, and a run cancelled mid-way: the thread's state still reads back
    thread = await client.threads.create()
    bad = json.loads(json.dumps(debate))
    bad["speeches"][1]["content"] = "  "
    with pytest.raises(Exception, match="speech is empty"):
        await client.runs.wait(thread["thread_id"], "judge", input={"debate": bad})
    state = await client.threads.get_state(thread["thread_id"])
    assert "result" not in state["values"]
    fake.latency = 0.2
    before = len(fake.requests)
    thread = await client.threads.create()
    run = await client.runs.create(thread["thread_id"], "judge", input={"debate": debate},
                                   config={"configurable": {"mode": "debatrix"}})
    for _ in range(100):
        if len(fake.requests) >= before + 3:
            break
        await asyncio.sleep(0.1)
    await client.runs.cancel(thread["thread_id"], run["run_id"], wait=True)
    state = await client.threads.get_state(thread["thread_id"])
    assert (await client.runs.get(thread["thread_id"], run["run_id"]))["status"] == "interrupted"
    assert state["values"]["debate"]["id"] == "school_uniforms" and "result" not in state["values"]
