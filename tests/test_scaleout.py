"""State shared between machines: the answer cache in a real PostgreSQL server (Debian's, started on 127.0.0.1
in a temporary folder), used by several processes at once against the loopback fake model server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from debatrix import ConfigurationError, JudgeSettings, LLMSettings, MemorySettings
from debatrix.testing import FakeOpenAIServer, Fault

from .conftest import data_required
from .postgres import postgres_server

ROOT = Path(__file__).resolve().parent.parent

# one judge in its own process: waits for the shared start time, so that both processes ask the same calls at once
JUDGE = """
import asyncio, json, sys, time
from debatrix import JudgeSettings, LLMSettings, MemorySettings, load_debate
from debatrix.app.api import ajudge_debate
base_url, cache, start, debate, mode = sys.argv[1:6]
settings = JudgeSettings(mode=mode, dimensions=("argument", "language"), llm=LLMSettings(
    base_url=base_url, model="fake-model", api_key="x", cache_path=cache, max_retries=0),
    memory=MemorySettings(embedding="hash"))
time.sleep(max(0.0, float(start) - time.time()))
result = asyncio.run(ajudge_debate(load_debate(debate), settings))
print(json.dumps({"status": result.status.value, "calls": result.usage.llm_calls,
                  "cached": result.usage.cached_calls, "winner": result.general.verdict.winner}))
"""


@pytest.fixture(scope="module")
def pg():
    with postgres_server() as server:
        yield server


def _judge_at(start: float, base_url: str, cache: str, debate: Path, mode: str = "debatrix") -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", JUDGE, base_url, cache, str(start), str(debate), mode],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "DEBATRIX_TELEMETRY": "0"})


def _finished(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def _distinct(requests: list[dict]) -> int:
    return len({json.dumps(r, sort_keys=True) for r in requests})


@pytest.mark.parametrize("mode", ["debatrix", "flow"])
def test_two_processes_sharing_a_postgres_cache_send_each_call_once(pg, mode):
    debate = ROOT / "examples" / "school_uniforms.yaml"
    with FakeOpenAIServer(latency=0.4) as server:
        # both start at the same moment: every call is asked by both while the first asker waits for the model
        start = time.time() + 4
        procs = [_judge_at(start, server.base_url, pg.url, debate, mode) for _ in range(2)]
        results = [_finished(p) for p in procs]
        sent = len(server.requests)
        assert sent == _distinct(server.requests)  # no call reached the model twice
        assert all(r["status"] == "complete" for r in results)
        assert results[0]["calls"] == results[1]["calls"] == sent  # each process made every call once ...
        assert results[0]["cached"] + results[1]["cached"] == sent  # ... and one of them paid for each
        assert results[0]["winner"] == results[1]["winner"]
        # a third process, later, pays for nothing
        again = _finished(_judge_at(0, server.base_url, pg.url, debate, mode))
        assert len(server.requests) == sent and again["cached"] == again["calls"] == sent


def test_the_cache_survives_a_server_restart_and_counts_its_answers(pg):
    from langchain_core.messages import AIMessage, HumanMessage

    from debatrix.llm.cache import PostgresCache, open_cache

    cache = open_cache(pg.url)
    assert isinstance(cache, PostgresCache)
    key = cache.key({"model": "m"}, {}, [HumanMessage("restart test")])
    cache.put(key, "judge_debate", AIMessage("kept"))
    cache.close()
    pg.restart()
    cache = open_cache(pg.url)
    try:
        assert cache.get(key).content == "kept" and len(cache) >= 1
    finally:
        cache.close()


@pytest.mark.parametrize("connections", [1, 4])
def test_few_connections_to_the_postgres_cache_never_deadlock(pg, tmp_path, connections):
    """More calls waiting than connections (a debatrix-mode run asks many at once): each waits its turn holding
    nothing, and whoever holds a call's lock can always store its answer."""
    from typer.testing import CliRunner

    from debatrix.app.cli import app

    database = pg.url.rsplit("/", 1)[0] + "/postgres"
    with FakeOpenAIServer(latency=0.3) as server:
        res = CliRunner().invoke(app, [
            "judge", str(ROOT / "examples" / "school_uniforms.yaml"), "--mode", "debatrix", "--dimensions",
            "argument,language", "--base-url", server.base_url, "--model", "fake-model", "--max-connections",
            str(connections), "--cache", database, "--out", str(tmp_path / f"r{connections}.json"), "--quiet"])
        assert res.exit_code == 0, res.output
        assert json.loads((tmp_path / f"r{connections}.json").read_text())["status"] == "complete"
        assert len(server.requests) == _distinct(server.requests)


def stop_in_flight(own, server, at: int = 3) -> list[float]:
    """Stop the database ``own`` while the server answers its request number ``at``; when, in the list returned."""
    stopped: list[float] = []

    def respond(body, n):
        if n == at and not stopped:
            own.stop("immediate")  # while this answer is in flight
            stopped.append(time.monotonic())
        return None

    server.responder = respond
    return stopped


@pytest.mark.parametrize("questions", ["auto", "apart"])
def test_a_postgres_cache_lost_mid_run_stops_at_once_and_a_resume_pays_for_nothing_again(tmp_path, monkeypatch,
                                                                                       questions):
    """Asked together (one request a passage) or apart (one a decision): the run stops within seconds of the
    database, and the answers kept for it are this user's alone."""
    from typer.testing import CliRunner

    from debatrix.app.cli import app

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))  # where the unsaved answers wait
    with postgres_server() as own, FakeOpenAIServer(latency=0.5) as server:
        stopped = stop_in_flight(own, server)
        out = tmp_path / "r.json"
        command = ["judge", str(ROOT / "examples" / "school_uniforms.yaml"), "--base-url", server.base_url,
                   "--model", "fake-model", "--cache", own.url, "--out", str(out), "--flow-questions", questions]
        res = CliRunner().invoke(app, command)
        ended = time.monotonic()
        assert res.exit_code == 4, res.output
        assert "Traceback" not in res.output and "stopped answering" in " ".join(res.output.split()), res.output
        result = json.loads(out.read_text())
        assert result["status"] == "incomplete"
        # every request the server answered is in the result: none paid for and lost (the flow sends a speech's
        # decisions together to an endpoint, so those in flight when the cache went are answered too)
        paid = len(server.requests)
        assert result["usage"]["llm_calls"] == paid >= 4
        # at once: the requests in flight (0.5 s each) end, nothing waits for the lost database's pool (30 s)
        assert ended - stopped[0] < 10, ended - stopped[0]
        unsaved = list((tmp_path / "home-cache" / "debatrix" / "unsaved").glob("*.sqlite"))
        said = " ".join(result["incomplete_reason"].split())
        # the answer in flight when the database stopped arrived after it: kept, and the result says where
        assert len(unsaved) == 1 and str(unsaved[0]) in said, said
        # its answers are this user's (the tokenizer cache is 0600 too), its folder theirs
        assert unsaved[0].stat().st_mode & 0o777 == 0o600 and unsaved[0].parent.stat().st_mode & 0o077 == 0

        own.start()  # the database is back: the resume stores the kept answers first, then pays only for the rest
        res = CliRunner().invoke(app, command)
        assert res.exit_code == 0, res.output
        assert len(server.requests) == _distinct(server.requests), "an answer was paid for twice"
        assert not list((tmp_path / "home-cache" / "debatrix" / "unsaved").glob("*.sqlite"))


async def test_a_flow_asked_one_call_after_another_stops_within_seconds_of_a_lost_cache(tmp_path, monkeypatch):
    """As on the embedded model (a prompt cache: a speech's decisions asked one after another), each call used to
    wait the pool's 30 s for a connection to the lost database before failing: 273 s for the demo. Now the first
    wait is short and every later call fails at once."""
    from debatrix.app.api import ajudge_debate
    from debatrix.core.loader import load_debate

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    with postgres_server() as own, FakeOpenAIServer(latency=0.2) as server:
        stopped = stop_in_flight(own, server)
        settings = JudgeSettings(llm=LLMSettings(base_url=server.base_url, model="fake-model", api_key="x",
                                                 prompt_cache=True, cache_path=own.url),
                                 memory=MemorySettings(embedding="hash"), flow_questions="apart")
        result = await ajudge_debate(load_debate(ROOT / "examples" / "school_uniforms.yaml"), settings)
        ended = time.monotonic()
    assert result.status.value == "incomplete" and "stopped answering" in result.incomplete_reason
    assert ended - stopped[0] < 10, ended - stopped[0]
    assert result.usage.llm_calls == len(server.requests)


def test_a_refused_postgres_login_says_why_without_its_password(pg):
    from debatrix.llm.cache import open_cache

    wrong_db = pg.url.rsplit("/", 1)[0].replace("debatrix@", "debatrix:hunter2@") + "/no_such_database"
    with pytest.raises(ConfigurationError) as e:
        open_cache(wrong_db)
    said = str(e.value)
    assert 'database "no_such_database" does not exist' in said and "hunter2" not in said


def test_an_unreachable_postgres_cache_is_refused_before_any_call_without_its_password(tmp_path):
    pytest.importorskip("psycopg")
    from debatrix.llm.gateway import LLMGateway

    with FakeOpenAIServer() as server:
        closed = "postgresql://judge:s3cret@127.0.0.1:1/cache"
        with pytest.raises(ConfigurationError, match="cannot be reached") as e:
            LLMGateway(LLMSettings(base_url=server.base_url, model="m", api_key="x", cache_path=closed))
        assert "s3cret" not in str(e.value) and "***@127.0.0.1:1" in str(e.value)
        assert not server.requests
    settings = JudgeSettings(llm=LLMSettings(cache_path=closed), memory=MemorySettings(embedding="hash"))
    assert "s3cret" not in json.dumps(settings.public_dict())


async def test_a_deployment_run_under_the_postgres_checkpointer_resumes_after_a_restart(pg, tmp_path):
    """A run cut off by killing the server (SIGKILL: nothing flushed) is resumed by a new server, in another folder,
    from the checkpoints in PostgreSQL: the steps done before the kill are not judged again."""
    pytest.importorskip("langgraph.checkpoint.postgres", reason="pip install 'debatrix[postgres]' (make test does)")
    import signal

    from langgraph_sdk import get_client

    from debatrix import load_debate
    from debatrix.app.deployment import result_of
    from debatrix.core.modes import expected_calls

    from .test_deployment import langgraph_dev

    debate = load_debate(ROOT / "examples" / "school_uniforms.yaml")
    config = {"configurable": {"orders": 1, "mode": "debatrix"}}  # the prose mode: more steps to cut in the middle of
    calls = expected_calls("debatrix", len(debate.speeches), len(debate.debaters), 3, False, 1,
                           score_in_analysis=True)
    with FakeOpenAIServer(latency=0.25) as fake:
        started: list[subprocess.Popen] = []
        with langgraph_dev(tmp_path / "a", fake.base_url, "langgraph.postgres.json", started,
                           DEBATRIX_POSTGRES_URI=pg.url) as url:
            client = get_client(url=url)
            thread = await client.threads.create()
            await client.runs.create(thread["thread_id"], "judge", input={"debate": debate.model_dump(mode="json")},
                                     config=config)
            deadline = time.monotonic() + 120
            while len(fake.requests) < calls // 2 and time.monotonic() < deadline:
                time.sleep(0.1)
            os.killpg(started[0].pid, signal.SIGKILL)
            started[0].wait()
        before = len(fake.requests)
        assert 0 < before < calls
        with langgraph_dev(tmp_path / "b", fake.base_url, "langgraph.postgres.json",
                           DEBATRIX_POSTGRES_URI=pg.url) as url:
            client = get_client(url=url)
            # the new server has never seen the thread: made again under its id, its checkpoints are in PostgreSQL
            await client.threads.create(thread_id=thread["thread_id"], if_exists="do_nothing")
            out = await client.runs.wait(thread["thread_id"], "judge", input=None, config=config)
        after = len(fake.requests) - before
    result = result_of(out)
    assert result.status == "complete", result.incomplete_reason
    # resumed, not restarted: the calls answered before the kill were not asked again (those in flight were)
    assert after < calls and before + after <= calls + 8, (before, after, calls)


async def test_a_run_spreads_its_requests_over_several_servers_and_away_from_a_dead_one(uniforms):
    from debatrix.app.api import ajudge_debate
    from debatrix.llm.local import free_port

    def over(*urls: str, **llm) -> JudgeSettings:
        return JudgeSettings(mode="debatrix", orders=1, llm=LLMSettings(
            base_url=urls[0], base_urls=urls[1:], model="fake-model", api_key="x", max_retries=3,
            retry_max_wait=0.2, **llm), memory=MemorySettings(embedding="hash"))

    with FakeOpenAIServer(latency=0.05) as a, FakeOpenAIServer(latency=0.05) as b:
        result = await ajudge_debate(uniforms, over(a.base_url, b.base_url))
        assert result.status == "complete"
        assert len(a.requests) + len(b.requests) == result.usage.llm_calls
        assert len(a.requests) >= 3 and len(b.requests) >= 3  # both served
        assert "fake-model" in json.dumps(result.settings) and result.settings["llm"]["base_urls"] == [b.base_url]
        # a server that refuses connections: its requests are retried on the other, and it is then passed over
        dead = f"http://127.0.0.1:{free_port()}/v1"
        served = len(a.requests)
        result = await ajudge_debate(uniforms, over(dead, a.base_url))
        assert result.status == "complete" and len(a.requests) - served == result.usage.llm_calls
        assert 1 <= result.usage.retries <= 2
    # a server that answers 503 (up, but failing): the retry goes to the idle healthy one, not back to it for its
    # cached prompt, and it is then passed over
    with FakeOpenAIServer(responder=lambda body, n: Fault(status=503)) as failing, FakeOpenAIServer() as healthy:
        result = await ajudge_debate(uniforms, over(failing.base_url, healthy.base_url))
    assert result.status == "complete", result.incomplete_reason
    assert len(failing.requests) <= 2 and len(healthy.requests) == result.usage.llm_calls, len(failing.requests)


def test_several_servers_are_validated_and_named_in_the_cache_key():
    from debatrix.llm.gateway import LLMGateway

    with pytest.raises(ValueError, match="give base_url too"):
        LLMSettings(base_urls=("http://127.0.0.1:1/v1",))
    with pytest.raises(ValueError, match="http transport"):
        LLMSettings(base_url="http://127.0.0.1:1/v1", base_urls=("http://127.0.0.1:2/v1",), transport="langchain")
    with pytest.raises(ValueError, match="http:// or https://"):
        LLMSettings(base_url="http://127.0.0.1:1/v1", base_urls=("file:///x",))
    one = LLMGateway(LLMSettings(base_url="http://127.0.0.1:1/v1", model="m", api_key="x"))
    two = LLMGateway(LLMSettings(base_url="http://127.0.0.1:1/v1", base_urls=("http://u:pw@127.0.0.1:2/v1",),
                                 model="m", api_key="x"))
    swapped = LLMGateway(LLMSettings(base_url="http://u:pw@127.0.0.1:2/v1", base_urls=("http://127.0.0.1:1/v1",),
                                     model="m", api_key="x"))
    assert one._identity != two._identity == swapped._identity and "pw" not in json.dumps(two._identity)


def test_a_request_goes_where_its_prompt_is_cached_unless_that_server_is_busier():
    from debatrix.llm.http_chat import Endpoint

    fleet = Endpoint("http://127.0.0.1:1/v1", None, {}, 8, more=("http://127.0.0.1:2/v1",))
    system = "s" * 600  # a shared system prompt, longer than the affinity threshold
    with fleet.serving(fleet.choose(system + "debate A"), system + "debate A"):
        assert fleet.busy == [1, 0]
        assert fleet.choose(system + "debate A, order 2") == 1  # the warm server is busier: the idle one
    assert fleet.choose(system + "debate A, order 2") == 0  # equally busy: where the prefix is cached
    assert fleet.choose("another prompt altogether") == 1  # nothing shared: the one that has served less


# ------------------------------------------------------------------------------------------------ Ray


def _stable(server: FakeOpenAIServer):
    """Answers that depend on the request alone (not on its arrival), so two runs of the same items agree."""
    import zlib

    return lambda body, n: server.completion(body, zlib.crc32(json.dumps(body["messages"]).encode()) % 1000)


RAY = Path(sys.executable).parent / "ray"


@pytest.fixture
def ray_cluster(monkeypatch):
    """A Ray cluster on this machine: a head and one worker node, each its own raylet and worker processes (`ray
    start`, as a user starts one); yields its address, and stops both. Token authentication off: Ray turns it on
    when ~/.ray/auth_token exists (a local `ray.init()` writes one), and a test cluster must not depend on that."""
    pytest.importorskip("ray", reason="ray is not installed: pip install 'debatrix[cluster]' (make test does)")
    from debatrix.llm.local import free_port

    import shutil
    import tempfile

    port = free_port()
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # for the driver: this process
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    env = dict(os.environ)
    # its own session folder (short: Ray's socket paths must fit), so that stopping it touches no other Ray
    # cluster on this machine (`ray stop` would stop them all)
    session = tempfile.mkdtemp(prefix="dxray", dir="/tmp")
    start = [str(RAY), "start", "--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--disable-usage-stats"]
    try:
        for args in (["--head", "--port", str(port), "--include-dashboard", "false", "--temp-dir", session],
                     ["--address", f"127.0.0.1:{port}"]):
            done = subprocess.run([*start, *args], env=env, capture_output=True, text=True, timeout=120,
                                  start_new_session=True)  # its own process group, which teardown kills
            assert done.returncode == 0, done.stdout + done.stderr
        yield f"127.0.0.1:{port}"
    finally:
        import ray
        import signal

        ray.shutdown()
        # the cluster's processes name the session folder; their helpers (agents) share their process groups
        found = subprocess.run(["pgrep", "-f", session], capture_output=True, text=True).stdout.split()
        groups = set()
        for pid in map(int, found):
            try:
                groups.add(os.getpgid(pid))
            except ProcessLookupError:
                pass
        for group in groups - {os.getpgrp()}:
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(session, ignore_errors=True)


def _kill_worker_node() -> str:
    """SIGKILL the raylet of the cluster's node that is not the head (its worker processes die with it)."""
    import ray

    node = next(n for n in ray.nodes() if n["Alive"] and "node:__internal_head__" not in n["Resources"])
    pids = subprocess.run(["pgrep", "-f", node["RayletSocketName"]], capture_output=True, text=True).stdout.split()
    for pid in pids:
        os.kill(int(pid), 9)
    return node["NodeID"]


@data_required
async def test_a_debateart_sample_judged_on_ray_equals_a_local_run_and_survives_a_lost_worker(ray_cluster,
                                                                                               tmp_path):
    import threading

    from debatrix.benchmarks import make_benchmark
    from debatrix.benchmarks.runner import read_records, run_benchmark

    bench = make_benchmark("debateart")
    with FakeOpenAIServer(latency=0.2) as server:
        server.responder = _stable(server)

        def settings(cache: Path) -> JudgeSettings:
            return JudgeSettings(llm=LLMSettings(base_url=server.base_url, model="fake", api_key="x",
                                                 cache_path=cache), memory=MemorySettings(embedding="hash"))

        local = await run_benchmark(bench, settings(tmp_path / "local.sqlite"), tmp_path / "local",
                                    modes=["direct"], limit=4, concurrency=2)
        assert local.judged == 4
        alone = len(server.requests)
        server.requests.clear()

        # the worker node is killed (its raylet and workers) while it judges: its tasks run again on the head
        killed: list[str] = []

        def kill_worker_midway() -> None:
            deadline = time.monotonic() + 120
            while len(server.requests) < alone // 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            killed.append(_kill_worker_node())

        killer = threading.Thread(target=kill_worker_midway)
        killer.start()
        out = tmp_path / "ray"
        report = await run_benchmark(bench, settings(out / "llm_cache.sqlite"), out, modes=["direct"], limit=4,
                                     ray=ray_cluster)
        killer.join()
    assert report.judged == 4
    mine = {r["item"]: r for r in read_records(out / "items.jsonl")}
    theirs = {r["item"]: r for r in read_records(tmp_path / "local" / "items.jsonl")}
    assert sorted(mine) == sorted(theirs) and all(r["status"] == "complete" for r in mine.values())
    assert all(mine[k]["verdicts"] == theirs[k]["verdicts"] for k in mine)  # every verdict as the local run's
    assert killed  # the worker node was lost mid-run, and every item still came back complete
    assert (out / "summary.md").read_text() and (out / "summary.csv").read_text()
    # nothing judged twice: every call answered before the kill came from the shared cache; only the calls in
    # flight on the lost node (at most one item's orders, in 'direct' mode) were sent again
    sent = len(server.requests)
    assert alone <= sent <= alone + 4, (alone, sent)
    print(f"ray: {alone} calls alone, {sent} on the cluster; nodes {[r['worker']['node'][:6] for r in mine.values()]}")


@pytest.mark.slow
@data_required
async def test_the_embedded_model_runs_one_server_per_node_of_a_ray_cluster(ray_cluster, tmp_path):
    """Offline on a CPU cluster: each node's tasks call the model server its NodeModel actor started there."""
    from debatrix.benchmarks import make_benchmark
    from debatrix.benchmarks.runner import read_records, run_benchmark

    from .conftest import installed_model

    model = installed_model("smollm2-135m")
    settings = JudgeSettings(orders=1, llm=LLMSettings(backend="local", local_model=model),
                             memory=MemorySettings(embedding="hash"))
    out = tmp_path / "ray-local"
    report = await run_benchmark(make_benchmark("debateart"), settings, out, modes=["direct"], limit=2,
                                 max_length=6000, ray=ray_cluster)
    records = read_records(out / "items.jsonl")
    assert report.judged == 2 and len(records) == 2
    assert all(r["status"] == "complete" for r in records), [r.get("reason") for r in records]
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert runs[-1]["ray"] == ray_cluster and runs[-1]["settings"]["llm"]["local_model"] == model
    for r in records:  # judged on the local model, through a node's server
        result = json.loads((out / r["result_file"]).read_text())
        assert result["settings"]["llm"]["served_locally"] and result["settings"]["llm"]["model"] != "gpt-4o-mini"


def test_judge_several_files_as_ray_tasks(ray_cluster, tmp_path):
    from typer.testing import CliRunner

    from debatrix.app.cli import app

    files = [str(ROOT / "examples" / n) for n in ("school_uniforms.yaml", "four_day_week.yaml")]
    with FakeOpenAIServer() as server:
        res = CliRunner().invoke(app, ["judge", *files, "--base-url", server.base_url, "--model", "fake-model",
                                       "--mode", "direct", "--out-dir", str(tmp_path / "out"), "--ray", ray_cluster])
    assert res.exit_code == 0, res.output
    assert "2 debates, direct mode (2 judged now, 0 found done)" in res.output
    records = [json.loads(line) for line in (tmp_path / "out" / "items.jsonl").read_text().splitlines()]
    assert all(r["status"] == "complete" and r["worker"]["pid"] != os.getpid() for r in records)


@pytest.mark.parametrize("address", ["127.0.0.1:1", "ray://127.0.0.1:1", "nonsense"])
def test_a_ray_address_nobody_answers_at_is_one_line_at_once(tmp_path, address):
    pytest.importorskip("ray", reason="pip install 'debatrix[cluster]' (make test does)")
    from typer.testing import CliRunner

    from debatrix.app.cli import app

    with FakeOpenAIServer() as server:  # (Ray's own retries of a dead address ran past 200 s)
        started = time.monotonic()
        res = CliRunner().invoke(app, ["judge", str(ROOT / "examples" / "school_uniforms.yaml"), "--base-url",
                                       server.base_url, "--model", "fake-model", "--out-dir", str(tmp_path / "o"),
                                       "--ray", address])
        waited = time.monotonic() - started
        # an address that is none: refused (2); one nobody answers at: a service that is down (4, try again)
        assert res.exit_code == (2 if address == "nonsense" else 4) and f"--ray {address}" in res.output, res.output
        assert "Traceback" not in res.output and not server.requests
    # "at once": a correctness bound, not a speed figure (Ray's own retrying of a dead address runs for minutes)
    assert waited < 60, f"refusing a dead --ray address took {waited:.0f} s"
