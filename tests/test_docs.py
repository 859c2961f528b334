"""The README a newcomer finishes and the documentation site behind it: the README opens with the two commands,
stays short and links only to what exists; the site builds with mkdocs --strict (every page in the navigation,
every link and anchor resolved)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_the_readme_opens_with_the_two_commands_and_stays_short():
    first = README.split("```")[1]
    assert [line.split()[:2] for line in first.strip().splitlines()[1:]] == [["make", "demo"], ["make", "test"]]
    assert len(README.splitlines()) <= 300


def test_every_relative_link_of_the_readme_reaches_a_file_and_its_heading():
    for target in re.findall(r"\]\((?!https?:)([^)\s]+)\)", README):
        path, _, anchor = target.partition("#")
        file = ROOT / path
        assert file.exists(), target
        if anchor and file.suffix == ".md":
            slugs = {re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", h.strip().lower()))
                     for h in re.findall(r"^#+ (.*)$", file.read_text(), re.MULTILINE)}
            assert anchor in slugs, target


def test_the_documentation_site_builds_strictly(tmp_path):
    if shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None and shutil.which("mkdocs") is None:
        pytest.skip("mkdocs is not installed: pip install -e '.[docs]' (make test installs it)")
    exe = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or "mkdocs"
    out = subprocess.run([exe, "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    pages = {p.parent.name for p in (tmp_path / "site").glob("*/index.html")}
    assert {"coaches", "researchers", "agents", "measured", "developers"} <= pages


def test_the_tables_the_code_knows_are_the_codes_own():
    """The modes table (calls from the run planner) and the exit statuses (from the code's one list) are printed
    into their pages by ``python -m debatrix.app.doctables --write``: a page that differs is stale."""
    from debatrix.app.doctables import TABLES, rendered, stale

    assert stale() == [], "run: python -m debatrix.app.doctables --write"
    # the check can fail: a page whose table is edited by hand is stale
    page = (ROOT / TABLES["exit-codes"][1]).read_text(encoding="utf-8")
    edited = page.replace("| 3 |", "| 5 |", 1)
    assert edited != page and rendered(edited) == page
