"""Snapshots of each graph's mermaid drawing (UPDATE_SNAPSHOTS=1 rewrites them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from debatrix.graphs import MODES, build_graph, build_speech_graph

SNAP = Path(__file__).parent / "snapshots"


def check(name: str, text: str) -> None:
    path = SNAP / f"{name}.mmd"
    if os.environ.get("UPDATE_SNAPSHOTS") or not path.exists():
        path.write_text(text)
        if not os.environ.get("UPDATE_SNAPSHOTS"):
            pytest.fail(f"snapshot {path.name} was missing and has been written; rerun")
    assert text == path.read_text(), f"{name} graph changed; UPDATE_SNAPSHOTS=1 if intended"


# the paper's calls (a score call per speech, a decision per judgment); the default (speeches scored in their
# analyses); everything merged
CALLS = {"": dict(merge_score_call=False, score_in_analysis=False),
         "-scored-in-analysis": dict(merge_score_call=False, score_in_analysis=True),
         "-merged": dict(merge_score_call=True)}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("calls", list(CALLS))
def test_mode_drawing(mode, calls):
    if calls == "-scored-in-analysis" and not MODES[mode].per_speech:
        assert (build_graph(mode, **CALLS[calls]).get_graph(xray=1).draw_mermaid()
                == build_graph(mode, **CALLS[""]).get_graph(xray=1).draw_mermaid())  # nothing to score
        return
    check(f"{mode}{calls}", build_graph(mode, **CALLS[calls]).get_graph(xray=1).draw_mermaid())


def test_speech_graph_drawing():
    check("speech", build_speech_graph().get_graph(xray=1).draw_mermaid())


def test_iterative_column_loops_and_judges_beside_the_loop():
    text = build_graph("debatrix", score_in_analysis=False).get_graph(xray=1).draw_mermaid()
    for edge in ("analyze_speech -.-> column\\3aanalyze_speech", "analyze_speech -.-> column\\3ascore_speech",
                 "analyze_speech -.-> column\\3ajudge_debate", "judge_debate -.-> column\\3adecide_debate"):
        assert "column\\3a" + edge in text
    assert "prepare -.-> column\\3a__start__" in text
    raw = build_graph("direct").get_graph(xray=1).draw_mermaid()
    assert "analyze_speech" not in raw and "panel_comment" not in raw and "judge_debate" in raw
    merged = build_graph("debatrix", merge_score_call=True).get_graph(xray=1).draw_mermaid()
    assert "score_speech" not in merged and "decide_debate" not in merged
    scored = build_graph("debatrix").get_graph(xray=1).draw_mermaid()
    assert "score_speech" not in scored and "decide_debate" in scored


@pytest.mark.parametrize("mode", ["debatrix", "noniterative", "chronological", "dimensional", "direct"])
def test_the_largest_request_is_found_without_rendering_every_prompt(mode, monkeypatch):
    """Only the speeches longer than every later speech of their speaker are rendered; the largest request is the
    one rendering all of them finds (speeches of uneven lengths, two speakers, the longest early)."""
    from debatrix.core.dimension import DimensionRegistry
    from debatrix.core.models import Debate, Debater, Side, Speech
    from debatrix.core.modes import resolve_dimensions
    from debatrix.core.settings import JudgeSettings
    from debatrix.graphs import build as budget

    lengths = [10, 30, 400, 20, 5, 350, 60, 44, 90, 45]
    debate = Debate(id="uneven", motion="This house would test.",
                    debaters=(Debater(name="Ana", side=Side.PRO), Debater(name="Benedict", side=Side.CON)),
                    speeches=tuple(Speech(speaker="Ana" if i % 2 == 0 else "Benedict",
                                          content=" ".join(["word"] * n) + ".") for i, n in enumerate(lengths)))
    settings = JudgeSettings(mode=mode)
    dims = resolve_dimensions(mode, None, debate.format, DimensionRegistry())
    assert budget._largest_candidates(debate, settings) == [2, 5, 8, 9]
    found = budget.largest_request(debate, mode, settings, dims)
    monkeypatch.setattr(budget, "_largest_candidates", lambda d, s: list(range(len(d.speeches))))
    assert budget.largest_request(debate, mode, settings, dims) == found


def _nodes(graph, seen=None):
    """Every node function of a compiled graph and of the graphs its nodes call (a column, the panel)."""
    import inspect

    seen = set() if seen is None else seen
    for name, spec in graph.builder.nodes.items():
        fn = getattr(spec.runnable, "afunc", None) or getattr(spec.runnable, "func", None)
        yield name, fn
        for cell in (inspect.getclosurevars(fn).nonlocals.values() if fn else ()):
            if hasattr(cell, "builder") and id(cell) not in seen:  # a compiled subgraph the node calls
                seen.add(id(cell))
                yield from _nodes(cell, seen)


@pytest.mark.parametrize("mode", ["flow", "direct", "debatrix", "chronological", "dimensional", "noniterative"])
def test_every_step_is_a_native_langgraph_node_reading_its_context_from_the_runtime(mode):
    """What LangGraph runs is ``node(state, runtime)`` (the judge's steps, bound by graphs/wiring.py) or a node that
    calls a subgraph (``node(state, config)``), in the graph of every mode and in the graphs it calls; the only
    node with neither is where the columns join."""
    import inspect

    from debatrix.graphs.build import build_graph

    found = list(_nodes(build_graph(mode)))
    assert len(found) >= 4
    for name, fn in found:
        params = list(inspect.signature(fn).parameters)
        assert params in (["state", "runtime"], ["state", "config"]) or name == "columns_done", (name, params)
    assert sum(list(inspect.signature(fn).parameters) == ["state", "runtime"] for _, fn in found) >= 3
