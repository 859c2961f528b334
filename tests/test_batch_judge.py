"""`debatrix judge FILES... --out-dir DIR`: every file keeps its own result, a rerun takes a debate for done only if it
is the same file, incomplete ones can be judged again, and answers are cached in the folder by default."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from debatrix.app.cli import app
from debatrix.testing import FakeOpenAIServer, Fault

from .conftest import EXAMPLES

runner = CliRunner()
SOURCE = (EXAMPLES / "school_uniforms.yaml").read_text(encoding="utf-8")


def _debate(path: Path, motion: str) -> Path:
    """The example debate with its motion changed: same shape, different content."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SOURCE.replace("This house would require school uniforms in public secondary schools.", motion),
                    encoding="utf-8")
    return path


def _judge(files: list[Path], out: Path, server: FakeOpenAIServer, *extra: str):
    return runner.invoke(app, ["judge", *map(str, files), "--base-url", server.base_url, "--model", "fake-model",
                               "--mode", "direct", "--out-dir", str(out), *extra])


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()]


def test_files_whose_names_differ_only_in_unsafe_characters_keep_three_results(tmp_path):
    files = [_debate(tmp_path / name, f"This house would ban {k}.")
             for k, name in enumerate(("x y.yaml", "x_y.yaml", "x?y.yaml"))]
    out = tmp_path / "out"
    with FakeOpenAIServer() as server:
        res = _judge(files, out, server)
    assert res.exit_code == 0, res.output
    records = _records(out)
    paths = {r["result_file"] for r in records}
    assert len(records) == 3 and len(paths) == 3, paths
    motions = {json.loads((out / p).read_text())["motion"] for p in paths}
    assert motions == {f"This house would ban {k}." for k in range(3)}


def test_a_rerun_takes_a_debate_for_done_only_if_it_is_the_same_file(tmp_path):
    week1 = _debate(tmp_path / "week1" / "final.yaml", "This house would ban homework.")
    week2 = _debate(tmp_path / "week2" / "final.yaml", "This house would ban exams.")
    out = tmp_path / "league"
    with FakeOpenAIServer() as server:
        assert _judge([week1], out, server).exit_code == 0
        sent = len(server.requests)
        again = _judge([week1], out, server)
        assert "(0 judged now, 1 found done)" in again.output and len(server.requests) == sent
        res = _judge([week2], out, server)  # same name, another debate: judged, not week1's verdict shown
        assert res.exit_code == 0 and "(1 judged now, 0 found done)" in res.output, res.output
        assert len(server.requests) > sent
        sent = len(server.requests)
        _debate(week2, "This house would ban homework and exams.")  # edited: judged again
        res = _judge([week2], out, server)
        assert "(1 judged now, 0 found done)" in res.output and len(server.requests) > sent
    motions = [json.loads((out / r["result_file"]).read_text())["motion"] for r in _records(out)]
    assert motions == ["This house would ban homework.", "This house would ban exams.",
                       "This house would ban homework and exams."]


def test_incomplete_debates_are_judged_again_when_asked(tmp_path):
    files = [_debate(tmp_path / "a.yaml", "This house would ban homework.")]
    out = tmp_path / "out"
    broken = [True]
    with FakeOpenAIServer(responder=lambda body, n: Fault(status=400) if broken[0] else None) as server:
        res = _judge(files, out, server)
        assert res.exit_code == 3 and _records(out)[0]["status"] == "incomplete", res.output
        broken[0] = False
        sent = len(server.requests)
        res = _judge(files, out, server)  # not asked: the incomplete result stands, and the exit says so
        assert res.exit_code == 3 and len(server.requests) == sent, res.output
        res = _judge(files, out, server, "--retry-incomplete")
        assert res.exit_code == 0 and len(server.requests) > sent, res.output
    assert _records(out)[-1]["status"] == "complete"


def test_answers_are_cached_in_the_folder_by_default(tmp_path):
    files = [_debate(tmp_path / "a.yaml", "This house would ban homework.")]
    out = tmp_path / "out"
    with FakeOpenAIServer() as server:
        assert _judge(files, out, server).exit_code == 0
        sent = len(server.requests)
        assert sent and (out / "llm_cache.sqlite").is_file()
        # a run killed before it recorded its result: everything it had been answered is in the cache
        (out / "items.jsonl").unlink()
        shutil.rmtree(out / "items")
        res = _judge(files, out, server)
        assert res.exit_code == 0 and len(server.requests) == sent, res.output
        other = tmp_path / "other"
        assert _judge(files, other, server, "--no-cache").exit_code == 0
        assert len(server.requests) == 2 * sent and not (other / "llm_cache.sqlite").exists()
        res = runner.invoke(app, ["judge", str(files[0]), "--retry-incomplete", "--base-url", server.base_url])
        assert res.exit_code == 2 and "give --out-dir DIR" in res.output


def test_a_file_name_is_shown_as_written_never_as_markup(tmp_path):
    files = [_debate(tmp_path / "[bold red]x.yaml", "This house would ban homework."),
             _debate(tmp_path / "[link=evil]y.yaml", "This house would ban exams.")]
    out = tmp_path / "out"
    with FakeOpenAIServer() as server:
        res = _judge(files, out, server)
    assert res.exit_code == 0, res.output
    flat = "".join(res.output.split())  # the table folds long cells over lines
    assert "[boldred]x.yaml" in flat and "[link=evil]y.yaml" in flat
