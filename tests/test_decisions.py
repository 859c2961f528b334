"""A small decision over real HTTP (a fake OpenAI-compatible server on 127.0.0.1): the options' probabilities are
read from the first answer token's alternatives, the answer is held to the options by a grammar where the server
takes one, and an answer that is none of them is a missing decision, never a default."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings as hsettings, strategies as st
from langchain_core.messages import HumanMessage

from debatrix.core.settings import LLMSettings
from debatrix.llm.gateway import LLMGateway
from debatrix.testing import Fault, FakeOpenAIServer


def _answer(text: str, tops: dict[str, float] | None) -> dict:
    choice: dict = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
    if tops is not None:
        alternatives = [{"token": t, "logprob": math.log(p)} for t, p in tops.items()]
        choice["logprobs"] = {"content": [{"token": text, "logprob": alternatives[0]["logprob"],
                                           "top_logprobs": alternatives}]}
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice],
            "usage": {"prompt_tokens": 20, "completion_tokens": 1, "total_tokens": 21}}


async def _decide(server, options, grammar=False):
    gateway = LLMGateway(LLMSettings(base_url=server.base_url, model="m", grammar=grammar))
    try:
        return await gateway.decision([HumanMessage(content="Is S2.3 an argument? Answer yes or no.")], options,
                                      node="analyze_speech", dimension="argument")
    finally:
        gateway.close()


ANSWER: dict = {}


@pytest.fixture(scope="module")
def shared():
    with FakeOpenAIServer(responder=lambda body, n: ANSWER["now"]) as server:
        yield server


@given(st.floats(0.01, 0.98), st.floats(0.001, 0.3))
@hsettings(max_examples=15, deadline=None)
async def test_the_options_probabilities_come_from_the_first_tokens_alternatives(shared, p_yes, p_other):
    # the server lists " Yes" and "no" with other tokens around them: case and spaces are not the answer
    ANSWER["now"] = _answer(" Yes", {" Yes": p_yes * (1 - p_other), "no": (1 - p_yes) * (1 - p_other),
                                     "Maybe": p_other})
    dist, record = await _decide(shared, ["yes", "no"])
    sent = shared.requests[-1]
    assert sent["logprobs"] is True and sent["max_completion_tokens"] <= 3
    assert dist["yes"] == pytest.approx(p_yes, abs=1e-6) and dist["no"] == pytest.approx(1 - p_yes, abs=1e-6)
    assert record.node == "analyze_speech" and record.completion_tokens == 1 and not record.failed


async def test_a_grammar_holds_the_answer_to_the_options_where_the_server_gives_no_probabilities():
    """The probabilities are the model's own, before any grammar: a grammar is sent only where the answer written
    is all there is (the server refused log probabilities), and then holds it to the options."""
    with FakeOpenAIServer(responder=lambda body, n: _answer("B", {"B": 0.6, "A": 0.3, "C": 0.1})) as server:
        dist, _ = await _decide(server, ["A", "B", "C"], grammar=True)
        await _decide(server, ["A", "B", "C"], grammar=False)
        sent = server.requests
    assert "grammar" not in sent[0] and "grammar" not in sent[1] and sent[0]["logprobs"] is True
    assert dist == pytest.approx({"A": 0.3, "B": 0.6, "C": 0.1})

    def no_logprobs(body, n):
        if body.get("logprobs"):
            return Fault(400, {"error": {"message": "logprobs are not supported by this model"}})
        return _answer("C", None)

    with FakeOpenAIServer(responder=no_logprobs) as server:
        gateway = LLMGateway(LLMSettings(base_url=server.base_url, model="m", grammar=True))
        try:
            for _ in range(2):
                dist, _ = await gateway.decision([HumanMessage(content="A, B or C?")], ["A", "B", "C"],
                                                 node="analyze_speech")
        finally:
            gateway.close()
        sent = server.requests
    # the first request learns that the server gives no probabilities; from then on the grammar is sent
    assert [("logprobs" in r, "grammar" in r) for r in sent] == [(True, False), (False, False), (False, True)]
    assert sent[-1]["grammar"] == 'root ::= "A" | "B" | "C"' and dist == {"A": 0.0, "B": 0.0, "C": 1.0}


async def test_without_probabilities_the_answer_counts_as_certain_and_a_stray_answer_is_missing():
    with FakeOpenAIServer(responder=lambda body, n: _answer("no, because", None)) as server:
        dist, _ = await _decide(server, ["yes", "no"])
    assert dist == {"yes": 0.0, "no": 1.0}
    with FakeOpenAIServer(responder=lambda body, n: _answer("Perhaps", {"Perhaps": 0.9, "Maybe": 0.1})) as server:
        dist, record = await _decide(server, ["yes", "no"])
    assert dist is None and record.prompt_tokens == 20  # missing, and the call still counts


@pytest.mark.parametrize("said, decided", [("Yes.", "yes"), ("YES", "yes"), ("no, because", "no"), (" No ", "no"),
                                           ("Yesterday", None), ("Not sure", None), ("Maybe", None), ("", None),
                                           ('{"answer": "yes"}', None), ("nope", None)])
async def test_an_answer_counts_only_where_its_first_word_is_an_option(said, decided):
    with FakeOpenAIServer(responder=lambda body, n: _answer(said, None)) as server:
        dist, record = await _decide(server, ["yes", "no"])
    assert (dist is None) is (decided is None) and record.from_answer is (decided is not None)
    if decided is not None:
        assert dist == {o: float(o == decided) for o in ("yes", "no")}


# ------------------------------------------------------------------------------ the decisions benchmark on gold

from debatrix import JudgeSettings  # noqa: E402
from debatrix.benchmarks import make_benchmark  # noqa: E402
from debatrix.benchmarks.runner import run_benchmark  # noqa: E402

from debatrix.core.flow import GIST_ASKED  # noqa: E402

from .conftest import data_required  # noqa: E402


@data_required
@pytest.mark.parametrize("oracle", [True, False])
async def test_the_address_figure_pairs_each_decision_with_its_own_gold(tmp_path, oracle):
    """A server that answers by call order with the gold of the claim asked (or its opposite) scores ROC AUC 1 (0):
    a decision paired with another claim's gold, or a score read from the wrong option, would not."""
    bench = make_benchmark("decisions", variant="address")
    item = bench.subset(bench.load(), 1, seed=3)[0]
    _, pairs = bench._ibm()
    gold = [c["label"] != "Negative" for c in pairs[item.id]]
    assert 0 < sum(gold) < len(gold)

    def by_order(body, n):
        said = gold[n] if oracle else not gold[n]
        return _answer("yes" if said else "no", {"yes": 0.8 if said else 0.15, "no": 0.2 if said else 0.85})

    with FakeOpenAIServer(responder=by_order) as server:
        settings = JudgeSettings(llm=LLMSettings(base_url=server.base_url, model="m", grammar=True))
        report = await run_benchmark(bench, settings, tmp_path / "dec", modes=["debatrix"], limit=1, seed=3)
        assert all("grammar" not in r and r["logprobs"] is True for r in server.requests)
        # each question says what the point it asks about says (a small model does not look an id up)
        claims = [c["GP-claim-text-for-motion"] for c in pairs[item.id]]
        assert all(" ".join(claim.split()) in r["messages"][-1]["content"] for claim, r in zip(claims, server.requests))
        assert len(server.requests) == len(gold)
    auc = next(r.value for r in report.summary if r.metric == "roc_auc")
    assert auc == (1.0 if oracle else 0.0)


@data_required
@pytest.mark.parametrize("oracle", [True, False])
async def test_the_flow_asks_each_point_of_one_passage_read_once_and_pairs_it_with_its_gold(tmp_path, oracle):
    """``address-flow``: each claim asked of one passage of the speech (the prompt holds that passage, not the
    speech), the questions about one passage one after another; a server that reads the claim from the question
    and answers with its gold (or the opposite) scores ROC AUC 1 (0)."""
    bench = make_benchmark("decisions", variant="address-flow")
    item = bench.subset(bench.load(), 1, seed=3)[0]
    speeches, pairs = bench._ibm()
    gold = {" ".join(c["GP-claim-text-for-motion"].split()[:GIST_ASKED - 1]): c["label"] != "Negative"
            for c in pairs[item.id]}

    def by_claim(body, n):
        asked = next(g for claim, g in gold.items() if claim in " ".join(body["messages"][-1]["content"].split()))
        said = asked if oracle else not asked
        return _answer("yes" if said else "no", {"yes": 0.8 if said else 0.15, "no": 0.2 if said else 0.85})

    with FakeOpenAIServer(responder=by_claim) as server:
        settings = JudgeSettings(llm=LLMSettings(base_url=server.base_url, model="m", grammar=True))
        report = await run_benchmark(bench, settings, tmp_path / "dec", modes=["flow"], limit=1, seed=3)
        speech = " ".join(speeches[item.id]["speech-text"].split())
        shown = [r["messages"][-1]["content"].split(" S2.")[1].split(" C")[0] for r in server.requests]
        assert len(server.requests) == len(gold) and all(len(x) < len(speech) / 2 for x in shown)
        read = [x.split(":")[0] for x in shown]  # the passage ids, in the order asked: each read in one run
        assert read == sorted(read, key=lambda k: int(k))
    auc = next(r.value for r in report.summary if r.metric == "roc_auc")
    assert auc == (1.0 if oracle else 0.0)


@data_required
@pytest.mark.parametrize("variant, template", [("evidence-flow", "flow_evidence.j2"),
                                               ("on-topic-flow", "flow_argues.j2")])
async def test_the_flow_variants_send_the_flows_own_requests(tmp_path, variant, template):
    """``evidence-flow`` and ``on-topic-flow`` measure what the flow asks: each request is the one a flow run sends
    about that passage (its template, the passage alone), and a server that answers from the suite's own mark of
    evidence, read from the passage in the request, scores ROC AUC 1 on the evidence gold."""
    from debatrix.benchmarks.contrast import EVIDENCE
    from debatrix.graphs.flow_nodes import about_passage

    bench = make_benchmark("decisions", variant=variant)
    item = bench.subset(bench.load(), 1, seed=3)[0]
    it = bench._contrast_item(item)
    debate = bench.contrast._base(it.base) if variant == "evidence-flow" else bench.contrast.debate(it)

    def by_mark(body, n):
        asked = re.search(r"(S\d+\.\d+)", body["messages"][-1]["content"].strip().rsplit("\n", 1)[1]).group(1)
        said = bool(EVIDENCE.search(debate.passage_index[asked].text))  # the passage the question names
        return _answer("yes" if said else "no", {"yes": 0.8 if said else 0.15, "no": 0.2 if said else 0.85})

    with FakeOpenAIServer(responder=by_mark) as server:
        settings = JudgeSettings(llm=LLMSettings(base_url=server.base_url, model="m", grammar=True))
        report = await run_benchmark(bench, settings, tmp_path / "dec", modes=["flow"], limit=1, seed=3)
        sent = [r["messages"] for r in server.requests]
    flow = [[str(m.content) for m in about_passage(debate, p, template)] for p in debate.passages]
    assert [[m["content"] for m in x] for x in sent] == flow
    if variant == "evidence-flow":
        assert next(r.value for r in report.summary if r.metric == "roc_auc" and r.mode == "flow") == 1.0
