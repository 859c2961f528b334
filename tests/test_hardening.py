"""Bad input and state that must be refused with one clear line (exit 2), never a traceback or a silent guess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from debatrix.core.errors import InvalidDebateError
from debatrix.core.loader import load_debate
from debatrix.testing import FakeOpenAIServer

from .conftest import EXAMPLES

BASE = {"id": "d1", "motion": "This house would test.",
        "debaters": [{"name": "Alice", "side": "pro"}, {"name": "Bob", "side": "con"}],
        "speeches": [{"speaker": "Alice", "content": "Yes."}, {"speaker": "Bob", "content": "No."}]}


def cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "debatrix.app.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def refused(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 2, proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr + proc.stdout
    for w in words:
        assert w in proc.stderr + proc.stdout, proc.stderr + proc.stdout


def test_a_huge_integer_is_one_line_not_a_traceback(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(BASE)[:-1] + ', "info_slide": ' + "9" * 5000 + "}")
    refused(cli("validate", str(path)), "digits")
    ypath = tmp_path / "big.yaml"
    ypath.write_text(f"id: {'7' * 100_000}\nmotion: m\n")
    with pytest.raises(InvalidDebateError, match="digits"):
        load_debate(ypath)


@pytest.mark.parametrize("suffix", ["json", "yaml"])
def test_duplicate_keys_are_refused_naming_key_and_line(tmp_path, suffix):
    path = tmp_path / f"dup.{suffix}"
    if suffix == "json":
        text = json.dumps(BASE, indent=1).replace('"motion": ', '"motion": "first",\n "motion": ', 1)
    else:
        text = ("id: d1\nmotion: first\ndebaters:\n  - {name: Alice, side: pro}\n  - {name: Bob, side: con}\n"
                "speeches:\n  - speaker: Alice\n    content: one\n    content: two\n  - {speaker: Bob, content: No.}\n"
                "motion: second\n")
    path.write_text(text)
    with pytest.raises(InvalidDebateError, match=r"key 'motion' appears twice|key 'content' appears twice"):
        load_debate(path)
    proc = cli("validate", str(path))
    refused(proc, "appears twice", "line")


def _named(path: Path, name: str) -> Path:
    """The base debate with its first debater (and that debater's speech) named ``name``, written to ``path``."""
    data = json.loads(json.dumps(BASE))
    data["debaters"][0]["name"] = data["speeches"][0]["speaker"] = name
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("name", ["Al\u200bice", "Al\u202eice", "Alice\u2066"])
def test_invisible_or_bidi_characters_in_names_are_refused(tmp_path, name):
    path = _named(tmp_path / "names.json", name)
    with pytest.raises(InvalidDebateError, match="invisible, control or bidirectional"):
        load_debate(path)


def test_names_are_nfkc_normalised(tmp_path):
    """A full-width "Ａｌｉｃｅ" in the speeches is the "Alice" of the debaters list, not a stranger."""
    data = json.loads(json.dumps(BASE))
    data["speeches"][0]["speaker"] = "Ａｌｉｃｅ"
    path = tmp_path / "fw.json"
    path.write_text(json.dumps(data))
    assert load_debate(path).speeches[0].speaker == "Alice"


def test_escape_sequences_from_the_input_never_reach_the_terminal(tmp_path):
    """ANSI/OSC sequences in the id or the motion (retitle the window, clear the screen, plant a link) and rich
    markup are printed inert."""
    data = json.loads(json.dumps(BASE))
    data["id"] = "x\x1b]0;pwned\x07"  # an id names files: control characters in it are refused, shown inert
    path = tmp_path / "ansi.json"
    path.write_text(json.dumps(data))
    refused(proc := cli("validate", str(path)), "U+001B")
    assert "\x1b" not in proc.stdout + proc.stderr and "\x07" not in proc.stdout + proc.stderr
    data["id"] = "x"
    data["motion"] = "This house would \x1b[2J\x1b]8;;http://evil/\x1b\\click\x1b]8;;\x1b\\ [bold red]shout[/]"
    path.write_text(json.dumps(data))
    proc = cli("validate", str(path))
    assert proc.returncode == 0 and "\x1b" not in proc.stdout + proc.stderr and "\x07" not in proc.stdout
    with FakeOpenAIServer() as srv:
        proc = cli("judge", str(path), "--mode", "direct", "--base-url", srv.base_url, "--model", "fake",
                   env={"OPENAI_API_KEY": "sk-test"})
    assert proc.returncode == 0, proc.stderr
    # the markup printed as it was written (the summary wraps it between words at the terminal's width)
    assert "\x1b" not in proc.stdout + proc.stderr and "[bold red]shout[/]" in " ".join(proc.stdout.split())


def test_examples_still_load():
    for path in EXAMPLES.glob("*.yaml"):
        load_debate(path)


@pytest.mark.parametrize("node", ["score_speech", "analyze_speech"])
async def test_a_failed_dimension_stops_the_panel_and_no_verdict_is_invented(uniforms, node):
    """One dimension's speech score keeps coming as 11 (from its own call, or in the analysis's answer): the panel
    must not run on the other two, the failed dimension and the general result carry no verdict (no SC "tie" that
    was never decided), and the repair requests are counted."""
    from debatrix.app.api import ajudge_debate
    from debatrix.core.results import Status
    from debatrix.testing import ScriptedChatModel, analysis_of

    from .conftest import settings

    def eleven(c):
        score = 11 if c.dimension == "source" else 6
        return {"score": score} if node == "score_speech" else analysis_of(c, score=score)

    model = ScriptedChatModel(script={node: eleven})
    result = await ajudge_debate(uniforms, settings("debatrix", score_in_analysis=node == "analyze_speech"), model)
    assert result.status is Status.INCOMPLETE and f"source/{node}" in result.incomplete_reason
    assert not any(c.node.startswith("panel") for c in model.calls)
    assert result.dimension("source").verdict is None and result.general.verdict is None
    assert result.usage.repairs >= 1 and result.usage.llm_calls == len(model.calls)


async def test_retries_of_a_request_that_finally_failed_are_counted(uniforms):
    from debatrix.app.api import ajudge_debate
    from debatrix.core.results import Status
    from debatrix.testing import ScriptedChatModel

    from .conftest import settings

    def down(call):
        raise ConnectionError("connection reset")

    model = ScriptedChatModel(script={"judge_debate": down})
    result = await ajudge_debate(uniforms, settings("direct", orders=1, max_retries=2, retry_max_wait=0.05),
                                 model)
    assert result.status is Status.INCOMPLETE and "cannot reach the model server" in result.incomplete_reason
    assert len(model.calls) == 3 and result.usage.retries == 2 and result.usage.llm_calls == 1


@pytest.mark.parametrize("where", ["folder", "missing folder", "read-only"])
def test_an_unusable_out_path_is_refused_before_any_call(tmp_path, where):
    # a folder that cannot be created: its parent is a file (a missing folder is created, as the write would)
    (tmp_path / "plain-file").write_text("x")
    out = {"folder": tmp_path, "missing folder": tmp_path / "plain-file" / "nope" / "r.json",
           "read-only": tmp_path / "ro" / "r.json"}[where]
    if where == "read-only":
        out.parent.mkdir()
        out.parent.chmod(0o500)
        if os.access(out.parent, os.W_OK):  # root ignores permissions (CI runs as root): sysfs is read-only to all
            out = Path("/sys/debatrix-test-r.json")
            with pytest.raises(OSError):  # the premise: nobody can create a file there
                out.open("x").close()
    with FakeOpenAIServer() as srv:
        proc = cli("judge", str(EXAMPLES / "school_uniforms.yaml"), "--mode", "direct", "--base-url",
                   srv.base_url, "--model", "fake", "--out", str(out), env={"OPENAI_API_KEY": "sk-test"})
        sent = len(srv.requests)
    refused(proc, "--out")
    assert sent == 0  # nothing was paid for


def test_result_is_saved_elsewhere_when_the_out_file_cannot_be_written_at_the_end(tmp_path, monkeypatch, capsys):
    from debatrix.app import cli_judge as C
    from debatrix.core.results import JudgeResult

    from datetime import UTC, datetime

    result = JudgeResult(debatrix_version="x", debate_id="a/b", motion="m", format="1v1", mode="direct",
                         status="complete", started_at=datetime.now(UTC), finished_at=datetime.now(UTC))

    def full(path, text):
        if "debatrix-" not in str(path):
            raise OSError(28, "No space left on device")
        path.write_text(text)

    monkeypatch.setattr(C, "write_atomic", full)
    saved = C._save(tmp_path / "r.json", result)
    assert saved != tmp_path / "r.json" and saved.exists() and "a_b" in saved.name
    saved.unlink()


def test_a_corrupt_cache_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "cache.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    proc = cli("judge", str(EXAMPLES / "school_uniforms.yaml"), "--mode", "direct", "--base-url",
               "http://127.0.0.1:9/v1", "--model", "fake", "--cache", str(bad), env={"OPENAI_API_KEY": "sk-test"})
    refused(proc, "not a usable answer cache", str(bad))


def test_a_broken_middle_line_of_items_jsonl_names_file_and_line(tmp_path):
    from debatrix.benchmarks.runner import read_records
    from debatrix.core.errors import ConfigurationError

    path = tmp_path / "items.jsonl"
    path.write_text('{"a": 1}\n{"b": \n{"c": 3}\n')
    with pytest.raises(ConfigurationError, match="line 2 is damaged"):
        read_records(path)
    path.write_text('{"a": 1}\n{"b": 2')  # a killed write: the cut last line is dropped, as before
    assert read_records(path) == [{"a": 1}]


async def test_a_huge_answer_is_held_to_its_cap(uniforms):
    from debatrix.app.api import ajudge_debate
    from debatrix.testing import ScriptedChatModel

    from .conftest import settings

    model = ScriptedChatModel(script={"judge_debate": "Maya argued well. " * 300_000})  # ~5 MB
    result = await ajudge_debate(uniforms, settings("direct", orders=1), model)
    assert result.status.value == "complete", result.incomplete_reason
    assert len(result.general.verdict.comment) < 5000 and result.usage.truncated_calls >= 1
    assert result.general.verdict.comment.endswith(".")


def test_a_context_error_from_the_server_is_reported_in_its_words(uniforms):
    from debatrix.llm.gateway import LLMGateway
    from debatrix.llm.sdk import status_error
    from debatrix.core.settings import LLMSettings

    gw = LLMGateway(LLMSettings(base_url="http://u:hunter2@127.0.0.1:9/v1", api_key="sk-secret-1"))
    err = status_error(400, "This model's maximum context length is 8192 tokens (key sk-secret-1)", 1,
                       {"debatrix_node": "judge_debate"}, gw.settings.context_window, gw.scrub)
    assert "needs -1" not in str(err) and "maximum context length is 8192" in str(err)
    assert "sk-secret-1" not in str(err)


@pytest.mark.parametrize("mode", ["direct", "flow"])
def test_url_credentials_are_never_stored_or_shown(tmp_path, mode):
    from debatrix.core.settings import JudgeSettings, LLMSettings

    s = JudgeSettings(llm=LLMSettings(base_url="http://user:hunter2@127.0.0.1:8080/v1"))
    assert "hunter2" not in json.dumps(s.public_dict()) and "***@127.0.0.1:8080" in json.dumps(s.public_dict())
    with FakeOpenAIServer() as srv:
        url = srv.base_url.replace("http://", "http://user:hunter2@")
        out = tmp_path / "r.json"
        proc = cli("judge", str(EXAMPLES / "school_uniforms.yaml"), "--mode", mode, "--base-url", url,
                   "--model", "fake", "--out", str(out), "--log-calls", env={"OPENAI_API_KEY": "sk-test-secret"})
        report = cli("report", str(out), "--out", str(tmp_path / "r.html"))
    assert proc.returncode == 0, proc.stderr
    assert report.returncode == 0, report.stderr
    written = out.read_text() + (tmp_path / "r.html").read_text()
    for secret in ("hunter2", "sk-test-secret"):
        assert secret not in proc.stdout + proc.stderr + written + report.stdout + report.stderr


async def test_a_moved_results_folder_is_still_the_same_run(tmp_path):
    """run.json stores the answer cache relative to the results folder: a copied folder resumes."""
    import shutil

    from debatrix.benchmarks import make_benchmark
    from debatrix.benchmarks.runner import run_benchmark
    from debatrix.testing import ScriptedChatModel

    from .conftest import settings

    path = tmp_path / "critiques.jsonl"
    path.write_text(json.dumps({"position_id": "p", "position": "x", "critique_id": "c", "critique": "y",
                                "ratings": {"centrality": 1, "strength": 1, "correctness": 1, "clarity": 1,
                                            "dead_weight": 0, "single_issue": 1, "overall": 1}}) + "\n")
    first = tmp_path / "a"
    s = settings("direct", cache_path=first / "llm_cache.sqlite")
    b = make_benchmark("critiques", path)
    model = ScriptedChatModel(script={"rate_critique": "Centrality: 1"})
    await run_benchmark(b, s, first, modes=["direct"], chat_model=model)
    assert json.loads((first / "run.json").read_text())["settings"]["llm"]["cache_path"] == "llm_cache.sqlite"
    moved = tmp_path / "b"
    shutil.copytree(first, moved)
    report = await run_benchmark(b, settings("direct", cache_path=moved / "llm_cache.sqlite"), moved,
                                 modes=["direct"], chat_model=model)
    assert report.skipped == 1 and report.judged == 0


@pytest.mark.parametrize("option, code, words", [
    (["--memory", "persistent"], 2, "needs a folder"),
    (["--memory", "http", "--chroma-port", "9", "--retrieval"], 4, "cannot reach the chromadb server"),
    # without --retrieval there is no context memory: the server is never asked for, so its being down is no error
    (["--memory", "http", "--chroma-port", "9"], 0, ""),
])
def test_memory_options_are_checked_before_the_first_call(option, code, words):
    """A persistent memory without a folder is bad input (2); a chromadb server that is down is not (4); both
    are found before any LLM call is paid for. A run without retrieval opens no context memory at all."""
    with FakeOpenAIServer() as srv:
        proc = cli("judge", str(EXAMPLES / "school_uniforms.yaml"), "--mode", "chronological", "--base-url",
                   srv.base_url, "--model", "fake", *option, env={"OPENAI_API_KEY": "sk-test"})
        sent = len(srv.requests)
    assert proc.returncode == code and words in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert sent == 0 if code else sent > 0


@pytest.mark.parametrize("bad", [800, "NaN", "abc", float("inf"), None])
async def test_hostile_log_probabilities_and_usage_never_crash_a_paid_run(uniforms, bad):
    """A server's numbers are checked where they enter: log probabilities that are not finite numbers <= 0 are
    dropped (the verdict is read from the answers, as from a server that gives none), negative usage is not stored."""
    from debatrix.app.api import ajudge_debate
    from debatrix.core.results import Status

    from .conftest import settings

    def responder(body, n):
        answer = server.completion(body, n)
        text = answer["choices"][0]["message"]["content"] or ""
        answer["choices"][0]["logprobs"] = {"content": [
            {"token": text[:3], "logprob": bad, "top_logprobs": [{"token": text[:3], "logprob": bad}]}]}
        answer["usage"]["prompt_tokens"] = -400
        return answer

    with FakeOpenAIServer(responder=responder) as server:
        s = settings("direct", base_url=server.base_url, structured_output="json_schema")
        result = await ajudge_debate(uniforms, s)
    assert result.status is Status.COMPLETE, result.incomplete_reason
    assert result.general.verdict.winner in {"Maya", "Theo"}
    if bad is not None:
        assert result.general.verdict.probabilities is None or result.general.verdict.method != "logprobs"
    assert result.usage.llm_calls == len(server.requests) and result.usage.prompt_tokens > 0
    assert all(n.prompt_tokens > 0 for n in result.usage.by_node.values())


def test_an_infinite_dimension_weight_is_refused_before_any_call(tmp_path):
    from debatrix.core.dimension import DimensionRegistry
    from debatrix.core.errors import ConfigurationError

    (tmp_path / "style.yaml").write_text("name: style\nweight: .inf\nprompts: {analyze: a, judge: j}\n")
    with pytest.raises(ConfigurationError, match="weight"):
        DimensionRegistry([tmp_path])
    (tmp_path / "style.yaml").unlink()
    (tmp_path / "sets.yaml").write_text("sets: {mine: {argument: .inf}}\n")
    with pytest.raises(ConfigurationError, match="finite"):
        DimensionRegistry([tmp_path])


async def test_every_order_s_attempts_are_counted_when_orders_fail_together(uniforms):
    """Both orders of a judgment fail side by side (after 2 retries each): all 6 requests are in the usage; and
    where one order is answered and the other fails, the answered call is counted too."""
    from debatrix.app.api import ajudge_debate
    from debatrix.core.results import Status
    from debatrix.testing import ScriptedChatModel

    from .conftest import settings

    def down(call):
        raise ConnectionError("connection reset")

    model = ScriptedChatModel(script={"judge_debate": down})
    result = await ajudge_debate(uniforms, settings("direct", orders=2, max_retries=2, retry_max_wait=0.05), model)
    assert result.status is Status.INCOMPLETE and len(model.calls) == 6
    assert (result.usage.llm_calls, result.usage.retries) == (2, 4)

    def second_down(call):  # the order that lists Theo first fails
        if str(call.messages[-1].content).index("Theo") < str(call.messages[-1].content).index("Maya"):
            raise ConnectionError("connection reset")
        return "Maya argued well.\nTheo argued less well.\nWinner: Maya"

    model = ScriptedChatModel(script={"judge_debate": second_down})
    result = await ajudge_debate(uniforms, settings("direct", orders=2, max_retries=0), model)
    assert result.status is Status.INCOMPLETE and len(model.calls) == 2
    assert result.usage.llm_calls == 2 and result.usage.by_node["judge_debate"].prompt_tokens > 0


def test_the_remaining_bad_inputs_are_one_line_refusals_with_nothing_sent(tmp_path):
    """The probes of the third hardening round: each refused with exit 2, no traceback, no request."""
    example = str(EXAMPLES / "school_uniforms.yaml")
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to("/proc/self/fd/1")
    with FakeOpenAIServer() as srv:
        judge = ("judge", example, "--mode", "direct", "--base-url", srv.base_url, "--model", "fake")
        for args, words in (
                ((*judge, "--temperature", "-5"), ["temperature"]),
                ((*judge, "--temperature", "nan"), ["temperature", "finite"]),
                ((*judge, "--out", str(fifo)), ["not a regular file"]),
                ((*judge, "--out", str(link)), ["symbolic link"]),
                ((*judge, "--memory", "persistent", "--memory-path", str(a_file)), ["is a file"]),
                (("bench", "debateart", "--limit", "0", "--base-url", srv.base_url, "--model", "fake", "--out",
                  str(tmp_path / "b0")), ["--limit"]),
                (("bench", "debateart", "--data", str(tmp_path / "nope"), "--base-url", srv.base_url, "--model",
                  "fake", "--out", str(tmp_path / "b1")), ["No such file"]),
                (("bench", "debateart", "--out", str(a_file), "--base-url", srv.base_url, "--model", "fake"),
                 ["is a file"])):
            refused(cli(*args, env={"OPENAI_API_KEY": "sk-test"}), *words)
        for url in ("not a url", "file:///etc/passwd", "ftp://user:hunter2@example.org/v1"):
            proc = cli("judge", example, "--base-url", url, "--model", "fake")
            refused(proc, "http:// or https://")
            assert "hunter2" not in proc.stdout + proc.stderr
            # one check for every URL option: the escalation endpoint too, before any call
            proc = cli("judge", example, "--base-url", srv.base_url, "--model", "fake", "--escalate-base-url", url)
            refused(proc, "escalate-base-url", "http:// or https://")
            assert "hunter2" not in proc.stdout + proc.stderr
        for option in ("--base-url", "--escalate-base-url"):  # a URL that does not parse: shown without its password
            proc = cli("judge", example, "--base-url", srv.base_url, option, "http://u:hunter2@127.0.0.1:port/v1")
            refused(proc, "not a valid URL")
            assert "hunter2" not in proc.stdout + proc.stderr
        assert not srv.requests
    assert fifo.is_fifo() and link.is_symlink()


def test_a_report_or_merge_never_writes_outside_the_results_folder(tmp_path):
    import json as _json

    from debatrix.app.report import write_report
    from debatrix.core.files import inside

    from debatrix.app.api import refused as refused_result
    from debatrix.core.errors import ContextWindowExceeded
    from debatrix.core.settings import JudgeSettings

    victim = tmp_path / "outside" / "victim"
    victim.mkdir(parents=True)
    result = refused_result(load_debate(EXAMPLES / "school_uniforms.yaml"), JudgeSettings(),
                            ContextWindowExceeded(10, 5, "x"))  # a valid result file, as a report would read one
    (victim / "index.json").write_text(result.model_dump_json())
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "summary.csv").write_text("mode,metric,subset,value\n")
    (folder / "run.json").write_text(_json.dumps({"benchmark": "debateart", "settings": {}}))
    record = {"benchmark": "debateart", "mode": "direct", "repeat": 0, "item": "x", "status": "complete",
              "result_file": "../outside/victim/index.json"}
    (folder / "items.jsonl").write_text(_json.dumps(record) + "\n")
    write_report(folder, folder / "report.html")  # the item outside is left out, the report still written
    assert (folder / "report.html").is_file() and "victim" not in (folder / "report.html").read_text()
    assert not (victim / "index.html").exists()
    assert inside(folder, "../outside/victim/index.json") is None and inside(folder, "/etc/passwd") is None
    assert inside(folder, "items/direct/r0/x.json") == (folder / "items/direct/r0/x.json").resolve()


@pytest.mark.parametrize("change, words", [
    ({"speeches": [{"speaker": "Alice", "content": "\u200b\u200b\u2060"}, {"speaker": "Bob", "content": "No."}]},
     "no visible text"),
    ({"id": "d1\nerror: forged line"}, "U+000A"),
])
def test_invisible_speeches_and_ids_with_line_breaks_are_refused(tmp_path, change, words):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({**BASE, **change}))
    with FakeOpenAIServer() as srv:
        refused(cli("judge", str(path), "--base-url", srv.base_url, "--model", "fake"), words)
        assert not srv.requests


def test_a_resume_under_another_spelling_of_the_endpoint_pays_for_nothing_again(tmp_path):
    cache = tmp_path / "cache.sqlite"
    example = str(EXAMPLES / "school_uniforms.yaml")
    with FakeOpenAIServer() as srv:
        port = srv.base_url.split(":")[2].split("/")[0]
        first = cli("judge", example, "--mode", "direct", "--orders", "1", "--base-url", srv.base_url, "--model",
                    "fake", "--cache", str(cache), "--out", str(tmp_path / "a.json"))
        assert first.returncode == 0, first.stderr
        paid = len(srv.requests)
        again = cli("judge", example, "--mode", "direct", "--orders", "1", "--base-url",
                    f"http://LOCALHOST:{port}/v1/", "--model", "fake", "--cache", str(cache), "--out",
                    str(tmp_path / "b.json"))
        assert again.returncode == 0, again.stderr
        assert paid > 0 and len(srv.requests) == paid


async def test_the_langchain_transport_hands_no_url_password_to_callbacks(uniforms):
    import base64

    from langchain_core.callbacks import AsyncCallbackHandler

    from debatrix.app.api import ajudge_debate
    from debatrix.core.results import Status

    from .conftest import settings

    seen: list[str] = []

    class Spy(AsyncCallbackHandler):
        async def on_chat_model_start(self, serialized, messages, **kw):
            seen.append(repr(serialized) + repr(kw))

        async def on_llm_end(self, response, **kw):
            seen.append(repr(response) + repr(kw))

    with FakeOpenAIServer() as srv:
        url = srv.base_url.replace("http://", "http://judge:hunter2@")
        s = settings("direct", orders=1, base_url=url, transport="langchain")
        result = await ajudge_debate(uniforms, s, config={"callbacks": [Spy()]})
    assert result.status is Status.COMPLETE, result.incomplete_reason
    assert seen and not any("hunter2" in x for x in seen)
    basic = "Basic " + base64.b64encode(b"judge:hunter2").decode()
    assert srv.authorizations and set(srv.authorizations) == {basic}


async def test_empty_answers_are_counted_as_the_calls_they_were(uniforms):
    from debatrix.app.api import ajudge_debate
    from debatrix.core.results import Status

    from .conftest import settings

    def responder(body, n):
        answer = server.completion(body, n)
        answer["choices"][0]["message"]["content"] = ""
        return answer

    with FakeOpenAIServer(responder=responder) as server:
        result = await ajudge_debate(uniforms, settings("direct", orders=2, base_url=server.base_url, max_retries=0))
    assert result.status is Status.INCOMPLETE and "empty answer" in result.incomplete_reason
    assert result.usage.llm_calls == len(server.requests) == 2


@pytest.mark.parametrize("content, words", [
    ("name: caf\xe9\n".encode("latin-1"), "not UTF-8"),
    (b"name: style\nname: tone\n", "appears twice"),
    (b"a: &a {x: 1}\nb: {<<: [*a, *a, *a, *a, *a, *a, *a, *a]}\n", "merge"),
])
def test_dimension_files_are_read_like_debate_files(tmp_path, content, words):
    (tmp_path / "dims").mkdir()
    (tmp_path / "dims" / "style.yaml").write_bytes(content)
    with FakeOpenAIServer() as srv:
        refused(cli("judge", str(EXAMPLES / "school_uniforms.yaml"), "--dimension-dir", str(tmp_path / "dims"),
                    "--base-url", srv.base_url, "--model", "fake"), words, "style.yaml")
        assert not srv.requests


def test_retry_after_is_read_as_seconds_milliseconds_or_an_http_date():
    import datetime as dt
    import email.utils

    from debatrix.llm.http_chat import retry_after

    soon = email.utils.format_datetime(dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=30), usegmt=True)
    assert retry_after({"retry-after": "7"}) == 7.0
    assert retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5  # OpenAI's finer header first
    assert 25 <= retry_after({"retry-after": soon}) <= 30
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # past: now
    assert retry_after({"retry-after": "soon-ish"}) is None and retry_after({}) is None and retry_after(None) is None
    assert retry_after({"retry-after": "-5"}) == 0.0


def test_json_is_read_fenced_bare_or_wrapped_in_prose_and_never_completed():
    import json

    from debatrix.llm.prose_calls import _extract_json

    assert _extract_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert _extract_json('  {"a": 1} ') == {"a": 1}
    assert _extract_json('Sure! Here it is: {"a": {"b": 2}} Hope that helps.') == {"a": {"b": 2}}
    with pytest.raises(json.JSONDecodeError):
        _extract_json('{"a": [1, 2')  # cut off at the cap: repaired by asking, not by guessing
    # a raw line break inside a string (the smallest local model writes them, a grammar lets them through)
    assert _extract_json('{\n\n"note"\n\n:\n\n"Ben says no.\n\n"\n}') == {"note": "Ben says no.\n\n"}


@pytest.mark.parametrize("transport", ["http", "langchain"])
async def test_the_openai_account_variables_are_sent_on_both_transports_and_never_stored(uniforms, monkeypatch,
                                                                                          transport):
    from debatrix import JudgeSettings, LLMSettings
    from debatrix.app.api import ajudge_debate
    from debatrix.testing import FakeOpenAIServer

    monkeypatch.setenv("OPENAI_ORG_ID", "org-test123")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj_test456")
    with FakeOpenAIServer() as srv:
        llm = LLMSettings.from_env(base_url=srv.base_url, model="fake", transport=transport)
        result = await ajudge_debate(uniforms, JudgeSettings(mode="direct", orders=1, llm=llm))
        sent = srv.headers
    assert result.status.value == "complete" and sent
    assert all(h.get("openai-organization") == "org-test123" and h.get("openai-project") == "proj_test456"
               for h in sent), sent[0]
    stored = result.model_dump_json()
    assert "org-test123" not in stored and "proj_test456" not in stored and "org-test" not in repr(llm)


class _Served:
    """A server that only says what it serves: /v1/models (and llama.cpp's /props when given)."""

    def __init__(self, models: list[dict], props: dict | None = None):
        import http.server
        import threading

        answers = {"/v1/models": {"object": "list", "data": models}}
        if props is not None:
            answers["/props"] = props

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                body = answers.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.end_headers()
                self.wfile.write(json.dumps(body or {}).encode())

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()


def test_model_and_context_window_are_asked_of_the_endpoint_when_not_given(monkeypatch):
    from debatrix.app.cli_common import make_settings

    monkeypatch.delenv("DEBATRIX_MODEL", raising=False)
    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    with _Served([{"id": "Qwen/Qwen2.5-7B-Instruct", "max_model_len": 32768}]) as vllm:
        s = make_settings(mode="direct", base_url=vllm.url).llm
        assert (s.model, s.context_window) == ("Qwen/Qwen2.5-7B-Instruct", 32768)
        given = make_settings(mode="direct", base_url=vllm.url, model="mine", context_window=4096).llm
        assert (given.model, given.context_window) == ("mine", 4096)  # what the user named wins
    llama = [{"id": "qwen.gguf", "meta": {"n_ctx_train": 131072}}]
    with _Served(llama, {"default_generation_settings": {"n_ctx": 8192}}) as srv:
        s = make_settings(mode="direct", base_url=srv.url).llm
        assert (s.model, s.context_window) == ("qwen.gguf", 8192)  # the slot's context, not the trained one
    with _Served(llama) as srv:
        assert make_settings(mode="direct", base_url=srv.url).llm.context_window == 131072
    with _Served([{"id": "a"}, {"id": "b"}]) as srv:
        from typer.testing import CliRunner

        from debatrix.app.cli import app

        res = CliRunner().invoke(app, ["judge", str(EXAMPLES / "school_uniforms.yaml"), "--base-url", srv.url])
    assert res.exit_code == 2 and "serves 2 models (a, b): choose one with --model" in res.output, res.output
    down = make_settings(mode="direct", base_url="http://127.0.0.1:9/v1").llm  # cannot say: the defaults
    assert (down.model, down.context_window) == ("gpt-4o-mini", 128_000)


def test_endpoint_variables_come_from_the_environment_or_a_dotenv_file(tmp_path, monkeypatch):
    from debatrix.core.settings import LLMSettings

    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "DEBATRIX_MODEL", "OPENAI_MODEL", "OPENAI_ORG_ID",
                 "OPENAI_PROJECT_ID", "DEBATRIX_LOCAL_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("OPENAI_BASE_URL=http://127.0.0.1:8000/v1\nOPENAI_MODEL=from-dotenv\n")
    monkeypatch.setenv("DEBATRIX_MODEL", "from-variable")
    monkeypatch.setenv("OPENAI_API_KEY", "")  # empty: unset
    fields = LLMSettings.env_fields()
    assert fields == {"base_url": "http://127.0.0.1:8000/v1", "model": "from-variable"}
    s = LLMSettings.from_env()
    assert s.base_url == "http://127.0.0.1:8000/v1" and s.model == "from-variable" and s.api_key is None
    # a mapping given is read alone: neither the process's variables nor .env
    assert LLMSettings.env_fields({"OPENAI_MODEL": "m", "OPENAI_API_KEY": "sk-x"})["model"] == "m"
    assert "base_url" not in LLMSettings.env_fields({})


def test_a_default_mode_run_killed_9_and_resumed_equals_an_uninterrupted_run(tmp_path):
    """The flow (the default mode) killed with SIGKILL mid-run (nothing flushed) and started again with the same
    cache: the resumed result is the uninterrupted run's, and the resume sends only what was not answered."""
    import signal
    import time

    debate = str(EXAMPLES / "school_uniforms.yaml")
    with FakeOpenAIServer(latency=0.2) as srv:
        base = ["judge", debate, "--base-url", srv.base_url, "--model", "fake", "--quiet"]
        whole = cli(*base, "--out", str(tmp_path / "whole.json"), "--cache", str(tmp_path / "whole.sqlite"))
        assert whole.returncode == 0, whole.stderr
        calls = len(srv.requests)
        srv.requests.clear()
        cache = str(tmp_path / "cut.sqlite")
        proc = subprocess.Popen([sys.executable, "-m", "debatrix.app.cli", *base, "--out", str(tmp_path / "cut.json"),
                                 "--cache", cache], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while len(srv.requests) < calls // 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        before = len(srv.requests)
        assert 0 < before < calls and not (tmp_path / "cut.json").exists()
        resumed = cli(*base, "--out", str(tmp_path / "cut.json"), "--cache", cache)
        assert resumed.returncode == 0, resumed.stderr
        after = len(srv.requests) - before
    a, b = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("whole", "cut"))
    assert b["usage"]["cached_calls"] > 0 and after == calls - b["usage"]["cached_calls"]
    assert after + before - calls <= 8  # at most the requests in flight at the kill were sent twice
    for key in ("general", "dimensions"):
        assert json.dumps(b[key], sort_keys=True) == json.dumps(a[key], sort_keys=True)
    assert [f["marks"] for f in b["flow"]] == [f["marks"] for f in a["flow"]]


# ---------------------------------------------------------------- choices that decide nothing: refused before a call

PROFILED = "qwen2.5-coder-1.5b"  # a model with a shipped profile (served here by the fake server, by its name)


@pytest.mark.parametrize("case", [
    (["--dimensions", "source", "--model", PROFILED], ["--dimensions source", "blind", "argument"]),
    (["--dimensions", "language", "--model", PROFILED], ["--dimensions language", "blind"]),
    (["--mode", "direct", "--flow-ask", "all"], ["--flow-ask all", "--mode direct has no flow"]),
    (["--mode", "dimensional", "--flow-questions", "together"], ["--flow-questions together"]),
    (["--dimensions", "argument,general"], ["general", "count it twice"]),
], ids=["source-blind", "language-blind", "flow-ask-direct", "flow-questions-prose", "mean-beside-its-part"])
def test_a_choice_that_decides_nothing_is_refused_before_any_call(tmp_path, case):
    """Each of these ran before and decided nothing (0 calls and exit 3, an option silently ignored, a dimension
    counted twice in the panel): refused in one line, exit 2, and the server never asked."""
    args, words = case
    with FakeOpenAIServer() as srv:
        model = [] if "--model" in args else ["--model", "fake-model"]
        proc = cli("judge", str(EXAMPLES / "school_uniforms.yaml"), "--base-url", srv.base_url, *model,
                   "--embedding", "hash", "--out", str(tmp_path / "r.json"), *args, env={"OPENAI_API_KEY": "x"})
        asked = [r for r in srv.requests if "messages" in r]
    refused(proc, *words)
    assert asked == [] and not (tmp_path / "r.json").exists()
    assert len((proc.stderr + proc.stdout).strip().splitlines()) <= 2


@pytest.mark.parametrize("name", ["S2", "S1.1", "s12", " S3.2 "])
def test_a_debater_named_like_a_passage_id_is_refused(tmp_path, name):
    """The sheet cites passages as S2.1: a debater called "S2" made it read "S2: … dropped S1.1"."""
    path = _named(tmp_path / "d.json", name)
    with pytest.raises(InvalidDebateError, match="reads as a passage id"):
        load_debate(path)
    refused(cli("validate", str(path)), "reads as a passage id")
    for fine in ("S2 Team", "Sam", "SS1", "S"):
        assert load_debate(_named(path, fine)).debaters[0].name == fine


# ------------------------------------------------------------------- damaged run folders: one line naming the file


def _run(path: Path) -> Path:
    """A small benchmark results folder, as `debatrix bench` writes one (records, summary, settings, invocations)."""
    path.mkdir(parents=True)
    recs = [{"benchmark": "contrast", "format": 2, "mode": "flow", "repeat": 0, "item": f"i{k}", "status": "complete",
             "usage": {"llm_calls": 4, "prompt_tokens": 100}, "sides": {"A": 1.0, "B": 0.0}, "gold": {"general": 1.0},
             "winner": "A"} for k in range(3)]
    (path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (path / "summary.csv").write_text("mode,metric,subset,value,ci_low,ci_high,repeats,n\n"
                                      "flow,intact_dp_all,all,0.5,nan,nan,1,3\n")
    (path / "run.json").write_text(json.dumps({"benchmark": "contrast", "settings": {"llm": {"model": "m"}}}))
    (path / "runs.jsonl").write_text(json.dumps({"commit": "abc1234", "served": {"model": "m"}}) + "\n")
    return path


def _items_line(path: Path, k: int, text: str) -> None:
    lines = (path / "items.jsonl").read_text().splitlines()
    lines[k] = text
    (path / "items.jsonl").write_text("\n".join(lines) + "\n")


DAMAGE = {
    "run.json corrupt": ("run.json", lambda p: (p / "run.json").write_text("{not json")),
    "run.json binary": ("run.json", lambda p: (p / "run.json").write_bytes(b"\x00\xff\xfe")),
    "run.json a list": ("run.json", lambda p: (p / "run.json").write_text("[1, 2]")),
    "items.jsonl bad line": ("items.jsonl: line 1", lambda p: _items_line(p, 0, "garbage{")),
    "items.jsonl usage a list": ("items.jsonl: line 2", lambda p: _items_line(p, 1, json.dumps(
        {"mode": "flow", "item": "i1", "usage": [1, 2]}))),
    "items.jsonl a list line": ("items.jsonl: line 1", lambda p: _items_line(p, 0, "[1]")),
    "runs.jsonl bad line": ("runs.jsonl: line 1", lambda p: (p / "runs.jsonl").write_text("{broken\n")),
}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_a_damaged_run_folder_is_one_line_naming_the_file(tmp_path, case):
    """`debatrix report` on a run (and on a root of runs, whose index reads every run's invocations) refuses a
    damaged file in one line naming it, exit 2: before, a corrupt or list-shaped run.json was a traceback, and a
    runs.jsonl line or a usage that is a list were read past."""
    where, damage = DAMAGE[case]
    run = _run(tmp_path / "root" / "r1")
    damage(run)
    target = run if case.startswith(("run.json", "items")) else tmp_path / "root"
    proc = cli("report", str(target))
    refused(proc, where, "damaged")
    assert len((proc.stderr + proc.stdout).strip().splitlines()) == 1


def test_a_cut_last_line_is_a_killed_write_not_damage(tmp_path):
    run = _run(tmp_path / "r")
    with (run / "items.jsonl").open("a") as fh:
        fh.write('{"mode": "flow", "item": "i9", "sta')
    proc = cli("report", str(run))
    assert proc.returncode == 0, proc.stderr + proc.stdout


OFFLINE_ROW = {"mode": "flow", "debate": "d", "speeches": 2, "wall_seconds": 10.0, "llm_calls": 1,
               "prompt_tokens_read": 1, "prompt_tokens_reused": 0, "completion_tokens": 1, "wall_over_bound": None}


@pytest.mark.parametrize("case", ["corrupt", "binary", "list", "missing key", "ten", "items empty", "items corrupt"])
def test_doctables_refuses_a_damaged_run_in_one_line_and_writes_no_page(tmp_path, case):
    """`python -m debatrix.app.doctables --write --runs ROOT` over damaged stored runs: one line naming the file,
    exit 2, every page as it was (each page is rendered before any is written)."""
    from debatrix.app.doctables import ROOT

    root = tmp_path / "runs"
    (root / "offline").mkdir(parents=True)
    good = {"rows": [OFFLINE_ROW], "model": "m", "commit": "abc1234"}
    kept = {"corrupt": "{bad", "binary": b"\x00\xff", "list": "[1]",
            "missing key": json.dumps({"rows": [{"mode": "flow"}], "model": "m"}),
            "ten": json.dumps({**good, "rows": [{**OFFLINE_ROW, "wall_seconds": "ten"}]})}.get(case, json.dumps(good))
    path = root / "offline" / "offline.json"
    path.write_bytes(kept if isinstance(kept, bytes) else kept.encode())
    for name in ("debateart_12k", "contrast", "ibm_address_40"):
        _run(root / name)
    if case == "items empty":
        (root / "contrast" / "items.jsonl").write_text("")
    if case == "items corrupt":
        _items_line(root / "contrast", 0, "{nope")
    before = {p: p.read_bytes() for p in (ROOT / "docs").glob("*.md")}
    proc = subprocess.run([sys.executable, "-m", "debatrix.app.doctables", "--write", "--runs", str(root)],
                          capture_output=True, text=True, timeout=300)
    said = proc.stderr + proc.stdout
    assert proc.returncode == 2 and "Traceback" not in said, said
    assert len(said.strip().splitlines()) == 1 and ("offline.json" in said or "contrast" in said), said
    assert {p: p.read_bytes() for p in (ROOT / "docs").glob("*.md")} == before


def test_a_hostile_name_in_a_stored_run_is_escaped_in_the_docs_table(tmp_path):
    """A run's model or debate name holding the table's own end marker (or a new marker) used to end the region
    early, so the page grew on every write: it is written as text, and writing twice gives the same page."""
    from debatrix.app.doctables import md, offline_table

    root = tmp_path / "runs"
    (root / "offline").mkdir(parents=True)
    hostile = "x <!-- end table --> | <!-- runs-table: offline offline -->\n`y`"
    (root / "offline" / "offline.json").write_text(json.dumps(
        {"rows": [{**OFFLINE_ROW, "debate": hostile}], "model": hostile, "commit": "abc1234"}))
    table = offline_table([root / "offline"], root)
    assert "<!--" not in table and "-->" not in table and "\n`y`" not in table
    assert md(hostile).count("|") == md(hostile).count("\\|")
    page = "a\n<!-- runs-table: offline offline -->\nold\n<!-- end table -->\nb\n"
    from debatrix.app.doctables import rendered

    once = rendered(page, root)
    assert rendered(once, root) == once and once.count("<!-- end table -->") == 1


# ------------------------------------------------------------------------- errors in the project's own words


def test_a_dimension_with_a_bad_measure_is_said_in_our_words(tmp_path):
    (tmp_path / "weird.yaml").write_text("name: weird\ndescription: w\nweight: 1\nmeasure: nosuch\nprompts: "
                                         "{analyze: a, context: c, judge: j, judge_debate: j}\n")
    with FakeOpenAIServer() as srv:
        proc = cli("judge", str(EXAMPLES / "school_uniforms.yaml"), "--dimension-dir", str(tmp_path), "--dimensions",
                   "weird", "--base-url", srv.base_url, "--model", "m", env={"OPENAI_API_KEY": "x"})
        assert not [r for r in srv.requests if "messages" in r]
    said = proc.stderr + proc.stdout
    refused(proc, "weird.yaml: measure: unknown flow measure 'nosuch'", "choose one of")
    assert "pydantic" not in said and "type=" not in said and "validation error" not in said


def test_an_empty_speech_list_is_said_in_our_words(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({**BASE, "speeches": []}))
    proc = cli("validate", str(path))
    assert "speeches: has none: give at least one" in proc.stdout + proc.stderr
    assert "Tuple should" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("option,target,words", [
    ("--out", "/proc/version", "no file can be written in /proc"),
    ("--out", "{file}/x.json", "is a file, not a folder"),
    ("--out", "{file}/a/b/x.json", "is a file, not a folder"),
    ("--out-dir", "/proc/1", "--out-dir /proc/1: cannot write in it"),
])
def test_an_output_path_that_cannot_be_written_says_why_and_names_the_option(tmp_path, option, target, words):
    """Refused before any call, the option named and the reason in our words: not "No such file or directory"
    for /proc, "File exists" for a path under a file, or a temporary file's name."""
    file = tmp_path / "good.yaml"
    file.write_text("x")
    with FakeOpenAIServer() as srv:
        proc = cli("judge", str(EXAMPLES / "school_uniforms.yaml"), "--base-url", srv.base_url, "--model", "m",
                   option, target.format(file=file), env={"OPENAI_API_KEY": "x"})
        asked = [r for r in srv.requests if "messages" in r]
    refused(proc, option, words)
    assert asked == [] and ".probe." not in proc.stderr and ".run.json." not in proc.stderr


def test_a_file_that_is_no_debate_echoes_at_most_a_few_of_its_keys(tmp_path):
    """A symlink to some other YAML file (a system file's keys, values) printed its keys whole as "unknown keys"."""
    other = tmp_path / "system.yaml"
    other.write_text("".join(f"k{i}_{'x' * 300}: {i}\n" for i in range(30)))
    link = tmp_path / "debate.yaml"
    link.symlink_to(other)
    proc = cli("validate", str(link))
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "unknown keys" in said and "and 26 more" in said
    assert len(said) < 800 and "x" * 50 not in said


def test_a_stored_value_that_is_no_probability_is_quoted_short():
    from debatrix.benchmarks.base import p_coded

    rec = {"item": "i" * 5000, "benchmark": "debateart", "status": "complete",
           "verdicts": {"general": {"winner": "A", "probabilities": {"A": "9" * 5000, "B": 0.1}}}}
    with pytest.raises(ValueError) as e:
        p_coded(rec, "general", 1.0)
    assert "is not a probability" in str(e.value) and len(str(e.value)) < 700


def test_the_offline_bench_refuses_bad_input_with_exit_2_before_the_first_debate(tmp_path):
    for args, words in ((["--out", "/proc/1"], "cannot write in it"), (["--modes", "x" * 5000], "unknown mode"),
                        (["--out", str(tmp_path), "--fake"], "--fake")):
        proc = subprocess.run([sys.executable, "-m", "debatrix.benchmarks.offline", *args], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 2 and words in proc.stderr and len(proc.stderr) < 600, proc.stderr
        assert "Traceback" not in proc.stderr
