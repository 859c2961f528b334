"""The judge as a LangGraph deployment: `langgraph dev` serves langgraph.json, a parent agent calls it as a RemoteGraph.

The server runs as a subprocess on 127.0.0.1 against the fake model server (also on 127.0.0.1), with LangSmith
tracing and the CLI's analytics off: nothing leaves the machine."""

from __future__ import annotations

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
from debatrix.app.deployment import PER_RUN, RunOptions, context_for, deployment_settings, result_of
from debatrix.core.flow import flow_calls
from debatrix.llm.local import free_port
from debatrix.testing import FakeOpenAIServer

from .conftest import EXAMPLES
from .test_embedding_in_agent import load_example

ROOT = Path(__file__).resolve().parent.parent
LANGGRAPH = Path(sys.executable).parent / "langgraph"


def test_langgraph_json_serves_the_judge_factory():
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["graphs"] == {"judge": "debatrix.app.deployment:judge"}
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
    a = context_for({"mode": "direct", "orders": 1, "thread_id": "ignored"})
    b = context_for({"dimensions": "argument, clash"})
    assert (a.settings.mode, a.settings.orders) == ("direct", 1)
    assert b.settings.dimensions == ("argument", "clash") and b.settings.mode == "flow"
    assert a.gateway is b.gateway and a.memory is b.memory
    assert context_for({"orders": 1, "mode": "direct"}) is a
    with pytest.raises(ConfigurationError, match="invalid run settings"):
        context_for({"orders": 9})


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
    # every passage asked whether it argues and with evidence, each speech's longest two whether they read clearly,
    # and the points the lookup proposes: at most flow_calls
    assert 2 * len(debate.passages) < result.usage.llm_calls == len(fake.requests) <= flow_calls(debate)
    assert [f.index for f in result.flow] == list(range(len(debate.speeches)))
    assert state["feedback"].splitlines()[0] == f"Winner: {result.general.verdict.winner}."

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
