"""The core install (no extras) judges against an endpoint and embeds in an agent; a feature whose extra is missing
says which extra in one line. The extras' modules are hidden from a child process, as on a core-only install."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from .conftest import EXAMPLES

EXTRAS = ("chromadb", "onnxruntime", "tokenizers", "xllamacpp", "numpy", "scipy", "matplotlib", "starlette",
          "uvicorn", "pandas", "openai", "langchain_openai")

HIDE = f"""
import importlib.abc, importlib.util, sys
HIDDEN = {set(EXTRAS)!r}
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Hide())
_find = importlib.util.find_spec
importlib.util.find_spec = lambda name, package=None: None if name.split(".")[0] in HIDDEN else _find(name, package)
"""


def _run(body: str) -> subprocess.CompletedProcess:
    code = HIDE + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", "NO_COLOR": "1", "COLUMNS": "200"})


def test_the_core_install_judges_against_an_endpoint_and_embeds_in_an_agent():
    res = _run(f"""
        import asyncio
        from typing import TypedDict
        from langgraph.graph import END, START, StateGraph
        from typer.testing import CliRunner
        from debatrix import JudgeSettings, LLMSettings
        from debatrix.app.api import ajudge_debate
        from debatrix.app.cli import app
        from debatrix.core.loader import load_debate
        from debatrix.testing import FakeOpenAIServer

        with FakeOpenAIServer() as srv:
            r = CliRunner().invoke(app, ["judge", "{EXAMPLES / 'school_uniforms.yaml'}", "--base-url", srv.base_url,
                                         "--model", "m", "--quiet"])
            assert r.exit_code == 0, r.output
            assert "Winner:" in r.output

            class S(TypedDict, total=False):
                path: str
                winner: str

            async def judge(state: S) -> S:
                settings = JudgeSettings(mode="dimensional", llm=LLMSettings(base_url=srv.base_url, model="m"))
                result = await ajudge_debate(load_debate(state["path"]), settings)
                return {{"winner": result.winner or "tie"}}

            g = StateGraph(S)
            g.add_node("judge", judge)
            g.add_edge(START, "judge")
            g.add_edge("judge", END)
            out = asyncio.run(g.compile().ainvoke({{"path": "{EXAMPLES / 'school_uniforms.yaml'}"}}))
            assert out["winner"] in ("Maya", "Theo", "tie"), out
        print("extras imported:", sorted(m for m in sys.modules if m.split(".")[0] in HIDDEN))
    """)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "extras imported: []" in res.stdout


def test_a_feature_without_its_extra_names_the_extra_in_one_line():
    res = _run(f"""
        from typer.testing import CliRunner
        from debatrix.app.cli import app
        from debatrix.testing import FakeOpenAIServer

        with FakeOpenAIServer() as srv:
            r = CliRunner().invoke(app, ["judge", "{EXAMPLES / 'school_uniforms.yaml'}", "--base-url", srv.base_url,
                                         "--retrieval", "--quiet"])
            print("RETRIEVAL", r.exit_code, r.output.strip())
        r = CliRunner().invoke(app, ["judge", "{EXAMPLES / 'school_uniforms.yaml'}", "--backend", "local",
                                     "--quiet"])
        print("LOCAL", r.exit_code, r.output.strip())
        r = CliRunner().invoke(app, ["bench", "debateart", "--limit", "1"])
        print("BENCH", r.exit_code, r.output.strip())
        with FakeOpenAIServer() as srv:
            r = CliRunner().invoke(app, ["judge", "{EXAMPLES / 'school_uniforms.yaml'}", "--base-url", srv.base_url,
                                         "--model", "m", "--transport", "langchain", "--quiet"])
            print("LANGCHAIN", r.exit_code, r.output.strip().replace("\\n", " "))
    """)
    assert res.returncode == 0, res.stderr[-3000:]
    lines = {line.split(" ", 1)[0]: line for line in res.stdout.splitlines()}
    assert lines["RETRIEVAL"].startswith("RETRIEVAL 2 error:") and "pip install 'debatrix[retrieval]'" in \
        lines["RETRIEVAL"]
    assert lines["LOCAL"].startswith("LOCAL 2 error:") and "pip install 'debatrix[local]'" in lines["LOCAL"]
    assert "pip install 'debatrix[bench]'" in lines["BENCH"]
    assert lines["LANGCHAIN"].startswith("LANGCHAIN 2 error:") and "pip install 'debatrix[openai]'" in \
        lines["LANGCHAIN"]
    assert "Traceback" not in res.stdout + res.stderr
