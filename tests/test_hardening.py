"""Bad input and state that must be refused with one clear line (exit 2), never a traceback or a silent guess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from debatrix.errors import InvalidDebateError
from debatrix.loader import load_debate
from debatrix.testing import FakeOpenAIServer

from .conftest import EXAMPLES

BASE = {"id": "d1", "motion": "This house would test.",
        "debaters": [{"name": "Alice", "side": "pro"}, {"name": "Bob", "side": "con"}],
        "speeches": [{"speaker": "Alice", "content": "Yes."}, {"speaker": "Bob", "content": "No."}]}


def cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "debatrix.cli", *args], capture_output=True, text=True,
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


@pytest.mark.parametrize("name", ["Al\u200bice", "Al\u202eice", "Alice\u2066"])
def test_invisible_or_bidi_characters_in_names_are_refused(tmp_path, name):
    data = json.loads(json.dumps(BASE))
    data["debaters"][0]["name"] = name
    data["speeches"][0]["speaker"] = name
    path = tmp_path / "names.json"
    path.write_text(json.dumps(data))
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
    data["id"] = "x\x1b]0;pwned\x07"
    data["motion"] = "This house would \x1b[2J\x1b]8;;http://evil/\x1b\\click\x1b]8;;\x1b\\ [bold red]shout[/]"
    path = tmp_path / "ansi.json"
    path.write_text(json.dumps(data))
    proc = cli("validate", str(path))
    assert proc.returncode == 0 and "\x1b" not in proc.stdout + proc.stderr and "\x07" not in proc.stdout
    with FakeOpenAIServer() as srv:
        proc = cli("judge", str(path), "--mode", "direct", "--base-url", srv.base_url, "--model", "fake",
                   env={"OPENAI_API_KEY": "sk-test"})
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout + proc.stderr and "[bold red]shout[/]" in proc.stdout


def test_examples_still_load():
    for path in EXAMPLES.glob("*.yaml"):
        load_debate(path)


async def test_a_failed_dimension_stops_the_panel_and_no_verdict_is_invented(uniforms):
    """One dimension's score call keeps answering 11: the panel must not run on the other two, the failed
    dimension and the general result carry no verdict (no SC "tie" that was never decided), and the repair
    requests are counted."""
    from debatrix.api import ajudge_debate
    from debatrix.models import Status
    from debatrix.testing import ScriptedChatModel

    from .conftest import settings

    model = ScriptedChatModel(script={"score_speech": lambda c: {"score": 11 if c.dimension == "source" else 6}})
    result = await ajudge_debate(uniforms, settings("debatrix"), model)
    assert result.status is Status.INCOMPLETE and "source/score_speech" in result.incomplete_reason
    assert not any(c.node.startswith("panel") for c in model.calls)
    assert result.dimension("source").verdict is None and result.general.verdict is None
    assert result.usage.repairs >= 1 and result.usage.llm_calls == len(model.calls)


async def test_retries_of_a_request_that_finally_failed_are_counted(uniforms):
    from debatrix.api import ajudge_debate
    from debatrix.models import Status
    from debatrix.testing import ScriptedChatModel

    from .conftest import settings

    def down(call):
        raise ConnectionError("connection reset")

    model = ScriptedChatModel(script={"judge_debate": down})
    result = await ajudge_debate(uniforms, settings("direct", orders=1, max_retries=2, retry_max_wait=0.05),
                                 model)
    assert result.status is Status.INCOMPLETE and "cannot reach the model server" in result.incomplete_reason
    assert len(model.calls) == 3 and result.usage.retries == 2 and result.usage.llm_calls == 1
