"""One speech's way, measured: a default-mode judgment of the demo on the fake server, traced, executes exactly
the project files docs/developers.md lists for it (the list cannot drift from the code), and no more than 18."""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path

from debatrix import JudgeSettings, LLMSettings, MemorySettings, judge_debate, load_debate
from debatrix.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parent.parent
LISTED = re.compile(r"Traced \(`tests/test_trace\.py`.*?\), (\d+) files:(.*?)\n\n", re.S)


def traced_files() -> set[str]:
    """The project's Python files whose code runs while the demo is judged a second time (the first run warms the
    imports and caches up, as a long-lived process would be), the fake model server's own file aside."""
    seen: set[str] = set()
    root = str(ROOT)

    def profile(frame, event, arg):  # noqa: ANN001 - sys.setprofile's signature
        name = frame.f_code.co_filename
        if name.startswith(root) and name.endswith(".py"):
            seen.add(name)

    debate = load_debate(ROOT / "examples" / "four_day_week.yaml")
    with FakeOpenAIServer() as server:
        # words only for the proposals: the MiniLM embedder runs in a thread of its own started on first use
        settings = JudgeSettings(llm=LLMSettings(base_url=server.base_url, model="fake", api_key="x"),
                                 memory=MemorySettings(embedding="hash"))
        judge_debate(debate, settings)
        sys.setprofile(profile)
        threading.setprofile(profile)
        try:
            judge_debate(debate, settings)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
    rooms = ("debatrix", "graphs", "memory", "benchmarks")  # the project's code, not its virtualenv or tests
    files = {Path(f).relative_to(ROOT).as_posix() for f in seen}
    return {f for f in files if f.split("/")[0] in rooms} - {"debatrix/testing.py"}


def listed_files() -> set[str]:
    text = (ROOT / "docs" / "developers.md").read_text(encoding="utf-8")
    found = LISTED.search(text)
    assert found, "docs/developers.md lists the traced files after 'Traced (`tests/test_trace.py`...), N files:'"
    files = set(re.findall(r"`([\w/]+\.py)`", found.group(2)))
    assert len(files) == int(found.group(1)), "the count the page gives is not the files it lists"
    return files


def test_one_judgment_runs_the_files_the_contributors_page_lists_and_no_more_than_21():
    traced = traced_files()
    listed = listed_files()
    assert traced == listed, f"ran but not listed: {sorted(traced - listed)}; listed but not run: {sorted(listed - traced)}"
    # 18 once the steps were merged; the checks and the flow's requests then moved to rooms named for them (a
    # newcomer finds a check in checks.py, a request in messages.py): a file more on the way must be a room's
    assert len(traced) <= 21, sorted(traced)  # 21: the judge profile the run reads (debatrix/core/profile.py)
