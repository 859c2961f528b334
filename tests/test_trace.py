"""One speech's way, measured: a default-mode judgment of the demo on the fake server, traced, executes the
project files docs/developers.md's generated table lists for it (written from the same trace by
``python -m debatrix.app.doctables --write``), and no more than 22."""

from __future__ import annotations

import re

from debatrix.app.doctables import ROOT, traced_way

ROW = re.compile(r"^\| \d+ \| `([\w/]+\.py)` \|", re.M)


def listed_files() -> list[str]:
    text = (ROOT / "docs" / "developers.md").read_text(encoding="utf-8")
    region = re.search(r"<!-- table: way -->\n(.*?)<!-- end table -->", text, re.S)
    assert region, "docs/developers.md has the generated table of one speech's way (<!-- table: way -->)"
    return ROW.findall(region.group(1))


def test_one_judgment_runs_the_files_the_contributors_page_lists_and_no_more_than_22():
    traced = [f for f, _ in traced_way()]
    listed = listed_files()
    assert set(traced) == set(listed), (f"ran but not listed: {sorted(set(traced) - set(listed))}; "
                                        f"listed but not run: {sorted(set(listed) - set(traced))}")
    # 18 once the steps were merged; 21 since the checks, the flow's requests and the judge's profile each got the
    # room named for it; 22 since a result is assembled in core/results.py, where a recompute after a person's
    # corrections assembles it too: splitting a file by job must not lengthen the way (a file more must be a room's)
    assert len(traced) <= 22, traced


def test_the_trace_sees_every_file_a_judgment_runs():
    """The trace cannot pass by seeing nothing: it finds the API, the flow's node and its ledger, and the call."""
    traced = {f for f, _ in traced_way()}
    assert {"debatrix/app/api.py", "graphs/flow_nodes.py", "debatrix/core/flow/ledger.py",
            "debatrix/llm/http_chat.py"} <= traced
