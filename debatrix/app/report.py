"""Reports a person reads: one self-contained HTML page per judgment, and one per benchmark folder.

``debatrix report RESULT.json -o report.html`` renders the motion and the debaters, the verdict with its reason,
the matrix of analyses (speeches down, dimensions across) with each speech's score, every dimension's verdict with
the debaters' scores and comments, a chart of the scores per speech and dimension, and the usage. A benchmark
folder's page holds its summary table and plot and links every item to its own page (written beside the item's
result JSON). Everything is in the file: styles inline, the chart as SVG, the plot as a data URI; nothing is
fetched, so the pages open offline. All text from the debate or the model is HTML-escaped (autoescape): a speech
cannot put markup or script into the page.
"""

from __future__ import annotations

import base64
import html
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from debatrix.core.errors import ConfigurationError, DebatrixError
from debatrix.core.files import inside, read_items, read_json, write_atomic
from debatrix.core.flow import CELL_MEANING, STATUS_MEANING
from debatrix.core.results import DimensionResult, JudgeResult
from debatrix.core.settings import redact_url
from debatrix.core.flow import ID, STATUS_ORDER, answer_words, said_p, tally_line, weighed_line
from debatrix.core.passages import passage_id, split_speech

from .reviewing import review_lines

# one color per dimension column in the chart (cycled)
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")


class ReportError(ConfigurationError):
    """The path is neither a judge result nor a benchmark folder, or cannot be read."""


def env() -> Environment:
    """The templates of the reports and the web page, autoescaped."""
    env = Environment(loader=PackageLoader("debatrix.app", "templates"), autoescape=select_autoescape(["j2"]),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["pct"] = lambda p: "n/a" if p is None else f"{100 * p:.0f}%"
    env.filters["num"] = lambda x: "n/a" if x is None else f"{x:.3g}"
    return env


@dataclass(frozen=True)
class SheetCell:
    analysis: str | None
    score: int | None
    expected: float | None


def matrix(result: JudgeResult) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows (one per speech: its number, speaker and one :class:`SheetCell` per dimension) and the dimension names.
    A mode that reads the debate whole (``direct``, ``dimensional``) has no cell per speech: its rows are the
    speeches alone, so the report still carries what was judged."""
    per_speech = any(d.analyses or d.speech_judgments for d in result.dimensions)
    # a dimension not judged for want of a decision that carries says why once, under the table, not once a speech
    dims = [d for d in result.dimensions if not (d.verdict and d.verdict.not_judged and not d.speech_judgments
                                                 and _blind(d))] if per_speech else []
    n = max((a.index + 1 for d in dims for a in d.analyses), default=0)
    n = max(n, max((s.index + 1 for d in dims for s in d.speech_judgments), default=0), len(result.speeches))
    rows = []
    for i in range(n):
        speaker = result.speeches[i].speaker if i < len(result.speeches) else next(
            (a.speaker for d in dims for a in d.analyses if a.index == i),
            next((s.speaker for d in dims for s in d.speech_judgments if s.index == i), "?"))
        cells = []
        for d in dims:
            a = next((x for x in d.analyses if x.index == i), None)
            s = next((x for x in d.speech_judgments if x.index == i), None)
            cells.append(SheetCell(a.analysis if a else (s.comment if s else None), s.score if s else None,
                              s.expected_score if s else None))
        rows.append({"number": i + 1, "speaker": speaker, "cells": cells})
    return rows, [d.name for d in dims]


def _blind(d: DimensionResult) -> bool:
    """Whether dimension ``d`` names no winner because its measure decides nothing (not for a run's failure)."""
    return d.ledger is not None and bool(d.ledger.blind)


def unjudged(result: JudgeResult) -> list[tuple[str, str]]:
    """The dimensions the model cannot judge here (measured blind), and why: said once on the page."""
    return [(d.name, d.verdict.not_judged) for d in result.dimensions if d.verdict and d.verdict.not_judged
            and _blind(d)]


def headline(v: Any) -> tuple[str, bool]:
    """How a verdict is announced, in the words every surface uses (:attr:`Verdict.called`), and whether as a win:
    a verdict the judge cannot call (too close to call, or its orders split evenly) only leans; a tie is a tie."""
    if v.not_judged:
        return f"Not judged: {v.not_judged}", False
    said = v.called
    if v.winner is None or v.unproven or v.confidence == "too close to call":
        return said[0].upper() + said[1:], False
    if any("split evenly" in w for w in v.warnings):
        agree = f" ({v.agreement})" if v.agreement else ""
        return f"Too close to call, leaning {v.winner}{agree}", False
    return f"Winner: {said}", True


def score_line(d: DimensionResult) -> str:
    """What the debaters' scores say, with the tie margin that made close scores a tie."""
    v = d.verdict
    if v is None or v.not_judged or len(d.debater_judgments) < 2:
        return ""
    scores = ", ".join(f"{j.debater} {j.score:.3g}" for j in d.debater_judgments)
    spread = max(j.score for j in d.debater_judgments) - min(j.score for j in d.debater_judgments)
    why = (f": within this dimension's ±{d.tie_margin:g} tie margin" if v.score_winner is None and d.tie_margin
           and spread <= d.tie_margin else "")
    return f"By the debaters' scores: {v.score_winner or 'tie'} ({scores}{why})"


def score_charts(result: JudgeResult) -> list[tuple[str, str]]:
    """Per debater, an SVG chart of the scores of their own speeches (expected where available), a line per
    dimension: (debater, svg). Speakers alternate, so one line over all speeches would join two debaters."""
    speakers = list(dict.fromkeys(s.speaker for d in result.dimensions for s in
                                  sorted(d.speech_judgments, key=lambda s: s.index)))
    spoken = {who: len({s.index for d in result.dimensions for s in d.speech_judgments if s.speaker == who})
              for who in speakers}
    if max(spoken.values(), default=0) < 3:  # a line through two points says no more than the table's two scores
        return []
    charts = []
    for who in speakers:
        svg = score_chart(result, who)
        if svg is not None:
            charts.append((who, svg))
    return charts


def score_chart(result: JudgeResult, speaker: str | None = None, width: int = 640, height: int = 260) -> str | None:
    """An SVG line chart of the scores (expected where available) of ``speaker``'s speeches (every speech without
    one), a line per dimension, the speeches named on the x axis; None without any."""
    series = [(d.name, sorted((s for s in d.speech_judgments if speaker is None or s.speaker == speaker),
                              key=lambda s: s.index)) for d in result.dimensions]
    series = [(name, js) for name, js in series if js]
    if not series:
        return None
    numbers = sorted({s.index for _, js in series for s in js})
    slot = {index: k for k, index in enumerate(numbers)}
    n = len(numbers)
    left, right, top, bottom = 36, 40, 12, 28  # room for the last speech's name under the axis

    def x(i: int) -> float:
        k = slot[i]
        return left + (width - left - right) * (k / max(1, n - 1) if n > 1 else 0.5)

    def y(v: float) -> float:
        return top + (height - top - bottom) * (10 - v) / 9

    label = f"scores of {speaker}'s speeches per dimension" if speaker else "scores per speech and dimension"
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height + 18 * len(series)}" '
             f'role="img" aria-label="{html.escape(label)}" class="chart">']
    for v in (1, 4, 7, 10):
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="grid"/>'
                     f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v}</text>')
    for i in numbers:
        parts.append(f'<text x="{x(i):.1f}" y="{height - 8}" text-anchor="middle">speech {i + 1}</text>')
    for k, (name, js) in enumerate(series):
        color = PALETTE[k % len(PALETTE)]
        points = " ".join(f"{x(s.index):.1f},{y(s.expected_score or s.score):.1f}" for s in js)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="2"/>')
        parts += [f'<circle cx="{x(s.index):.1f}" cy="{y(s.expected_score or s.score):.1f}" r="3.5" fill="{color}">'
                  f'<title>{html.escape(name)}, speech {s.index + 1}: {s.expected_score or s.score:.2f}</title></circle>'
                  for s in js]
        ly = height + 14 + 18 * k
        parts.append(f'<rect x="{left}" y="{ly - 9}" width="12" height="10" fill="{color}"/>'
                     f'<text x="{left + 18}" y="{ly}">{html.escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def call_groups(result: JudgeResult) -> list[dict[str, Any]]:
    """The call log grouped as a reader looks for it: per dimension, speech by speech, then the debate-level calls
    (judgments, decisions, the panel's), each group in the order its calls were answered."""
    speakers = {i: s.speaker for i, s in enumerate(result.speeches)}
    groups: dict[tuple[str, int], dict[str, Any]] = {}
    order = {d.name: k for k, d in enumerate(result.dimensions)}
    for call in result.call_log:
        # the flow's decisions belong to no one dimension (every dimension weighs its part): grouped by speech
        dim = ("the flow" if call.node.startswith("flow") else "panel" if call.node.startswith("panel")
               or not call.dimension else call.dimension)
        about = call.index if call.index is not None else 10**9
        title = (f"{dim} · speech {call.index + 1}" + (f" ({speakers[call.index]})" if call.index in speakers else "")
                 if call.index is not None else f"{dim} · the debate")
        groups.setdefault((dim, about), {"title": title, "calls": []})["calls"].append(call)
    return [g for _, g in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], len(order)), kv[0][1]))]


def sheet_least_em(sheet: dict[str, Any]) -> float:
    """The least width of a flow sheet, in em: its row column and a column a speech, each at the style's minimum
    (7.5em, its padding and border about 1.1em more), and a phone's page margins (1.5em). A screen narrower than
    this cuts the sheet off, and the report says it scrolls sideways (a report has no script to measure it)."""
    return round((len(sheet["speakers"]) + 1) * 8.6 + 1.5, 1)


def flow_sheet(result: JudgeResult) -> dict[str, Any] | None:
    """The flow as a coach draws it: speeches as columns, argument rows, each row's passage in its own speech's
    column (its text on demand) and, in each later column of the other side, whether that speech answered it."""
    led = result.flow_ledger
    if led is None:
        return None
    texts = {passage_id(i, k): t for i, s in enumerate(result.speeches)
             for k, t in enumerate(split_speech(s.content), 1)}
    rows = []
    for t in led.threads:
        own = int(ID.fullmatch(t.id).group(1)) - 1  # type: ignore[union-attr]
        cells: list[dict[str, Any]] = []
        for j in range(len(result.speeches)):
            # every answer that speech gave the row (several passages of one speech may each answer it), each
            # word decided with the row's status (ledger.reading), from what it counts
            said = [answer_words(c, w, led.baseline, led.figures) for c, w in zip(t.cells, t.cell_words)
                    if c.speech == j]
            if j == own:
                cells.append({"kind": "own", "id": t.id, "gist": t.gist, "text": texts.get(t.id, "")})
            elif said:
                words = "; ".join(w for w, _ in said)
                kind = ("ignores" if all(w.startswith("asked") for w, _ in said) else
                        "unsure" if all(w.startswith("could not tell") for w, _ in said) else "answers")
                mine = [c for c in t.cells if c.speech == j]
                cells.append({"kind": kind, "words": words, "hover": " · ".join(f for _, f in said),
                              "set": any(c.set_by for c in mine),
                              "decisions": [["answers", c.by, t.id] for c in mine if c.by]})
            else:
                cells.append({"kind": ""})
        argued = (f"P(argument) {t.argument:.2f}" if led.figures == "P" else
                  f"an argument? {said_p(t.argument, led.figures)}")
        if "argues" in t.set_by:  # a person said it argues: theirs, and the model's beside it
            was = t.model.get("argues")
            argued = (f"an argument: set by {t.set_by['argues']} ("
                      + ("the model never asked" if was is None else f"the model said {said_p(was, led.figures)}")
                      + ")")
        rows.append({"t": t, "status": t.status, "meaning": STATUS_MEANING[t.status], "cells": cells,
                     "argument": argued, "set_by": dict(t.set_by)})
    return {"rows": rows, "speakers": [s.speaker for s in result.speeches], "rounds": sheet_rounds(result),
            "tallies": led.tallies,
            "lines": [tally_line(led, t.debater) for t in led.tallies], "weighed": weighed_line(led),
            "legend": {s: STATUS_MEANING[s] for s in STATUS_ORDER}, "cell_legend": dict(CELL_MEANING),
            "baseline": baseline_words(led.baseline)}


def sheet_rounds(result: JudgeResult) -> list[dict[str, Any]]:
    """The sheet's columns grouped as the debate was spoken: a round written without seeing each other is one
    group ("1–2 · written together"), every other speech its own (empty: the debate has no such round, and the
    sheet needs no second header)."""
    if not result.simultaneous:
        return []
    first = {min(g): g for g in result.simultaneous}
    out, j = [], 1
    while j <= len(result.speeches):
        group = first.get(j, (j,))
        span = max(group) - j + 1 if group == tuple(range(j, max(group) + 1)) else 1
        out.append({"span": span, "label": f"{j}–{j + span - 1} · written together" if span > 1 else ""})
        j += span
    return out


def baseline_words(base: float | None) -> str:
    """A result of 1.8 or 1.9 counted an answer by how far it stood above that debate's mean answer: said so, so
    its sheet reads as it was computed ("" since 1.10, whose answers count as the model's profile reads them)."""
    if base is None:
        return ""
    return (f"Judged before judge profiles: an answer counted by how far its probability stood above this debate's "
            f"mean answer (P {base:.2f}).")


def result_html(result: JudgeResult, item: dict[str, Any] | None = None) -> str:
    """The judgment as one self-contained HTML page; ``item`` (a benchmark item's page): ``back``, the run's report
    to link back to, and ``gold``, ``pred`` and ``right``, what the benchmark holds of it."""
    rows, dims = matrix(result)
    debaters = list(dict.fromkeys(j.debater for d in result.judged for j in d.debater_judgments))
    speeches = {i: s.content for i, s in enumerate(result.speeches)}
    review, corrections = review_lines(result)
    return env().get_template("report.html.j2").render(
        r=result, rows=rows, dims=dims, unjudged=unjudged(result), debaters=debaters, verdicts=result.judged,
        charts=score_charts(result),
        palette=PALETTE, speeches=speeches, headline=headline, score_line=score_line, calls=call_groups(result),
        calls_cut=sum(c.prompt_left_out for c in result.call_log),
        sheet=flow_sheet(result), sheet_least_em=sheet_least_em, item=item, review=review, corrections=corrections)


#: a result file's size at most: a long debate's result with its call log runs to a few megabytes
MAX_RESULT_BYTES = 256 << 20


def load_result(path: Path) -> JudgeResult:
    """The result at ``path``, or a :class:`ReportError` in one line (a device, a pipe or a file far larger than
    any result is refused before it is read)."""
    try:
        if not path.is_file():
            raise ReportError(f"{path}: " + ("no such file" if not path.exists() else "not a regular file"))
        if path.stat().st_size > MAX_RESULT_BYTES:
            raise ReportError(f"{path}: larger than {MAX_RESULT_BYTES >> 20} MB: not a debatrix result")
        return JudgeResult.model_validate_json(path.read_text(encoding="utf-8"))
    except ReportError:
        raise
    except OSError as e:
        raise ReportError(f"{path}: cannot read it ({e.strerror or e})") from None
    except ValueError as e:
        first = str(e).splitlines()[0]
        raise ReportError(f"{path}: not a debatrix result ({first})") from None


def _items(folder: Path) -> list[dict[str, Any]]:
    """The folder's ``items.jsonl`` records, read once; a last line cut short by a running benchmark is skipped (a
    report only reads the folder: the runner's own reader would trim the file)."""
    return read_items(folder / "items.jsonl")


def _number(text: Any) -> str:
    """A summary value as a reader wants it: 3 significant digits, "n/a" where there is none."""
    try:
        x = float(text)
    except (TypeError, ValueError):
        return "n/a" if text in (None, "") else str(text)
    if math.isnan(x):
        return "n/a"
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"  # 4,870 tokens, not 4.87e+03


def _flat(value: Any, prefix: str = "") -> str:
    """A prediction or gold record in one line: ``general dp 1, sc 0.5``, numbers rounded."""
    if isinstance(value, dict):
        return ", ".join(part for k, v in value.items() if (part := _flat(v, f"{prefix}{k} ")))
    if isinstance(value, bool) or value is None:
        return f"{prefix}{value}".strip() if value is not None else ""
    if isinstance(value, (int, float)):
        return f"{prefix}{_number(value)}"
    return f"{prefix}{value}"[:120]


def _right(rec: dict[str, Any]) -> str:
    """Whether a debate item's overall verdict matched the gold one ("right", "wrong"; "" where not a verdict)."""
    from debatrix.benchmarks.base import readings

    general = next((r for r in readings(rec) if r["dimension"] == "general"), None)
    return "" if general is None or general["right"] is None else "right" if general["right"] else "wrong"


def _in_words(rec: dict[str, Any]) -> tuple[str, str, list[dict[str, Any]]]:
    """An item's prediction and gold in names, with the per-dimension readings; a benchmark that does not score
    winners, as it stores them."""
    from debatrix.benchmarks.base import in_words

    return in_words(rec) or (_flat(rec.get("pred")), _flat(rec.get("gold")), [])


def bench_html(folder: Path, items: list[dict[str, Any]], item_pages: dict[str, str]) -> str:
    """A benchmark folder's page: the summary in words with rounded values and intervals, the plot, and every item
    (sortable and filterable) with its prediction, gold, whether its verdict was right, and its page."""
    from debatrix.benchmarks.metrics import metric_words
    from debatrix.benchmarks.summary import read_summary

    table = [{**row, "words": metric_words(row.get("metric", "")), "value": _number(row.get("value")),
              "interval": (f"{_number(row['ci_low'])} – {_number(row['ci_high'])}"
                           if _number(row.get("ci_low")) != "n/a" and _number(row.get("ci_high")) != "n/a"
                           else "n/a")}
             for row in read_summary(folder)]
    rows = sorted(({**rec, "page": item_pages.get(rec.get("result_file") or ""), "right": _right(rec),
                    **dict(zip(("pred_text", "gold_text"), _in_words(rec)))} for rec in items),
                  key=lambda r: (str(r.get("mode")), str(r.get("item")), r.get("repeat") or 0))
    plot = folder / "summary.png"
    png = f"data:image/png;base64,{base64.b64encode(plot.read_bytes()).decode()}" if plot.exists() else None
    run = read_json(folder / "run.json") if (folder / "run.json").exists() else {}
    modes, lead = headline_table(str(run.get("benchmark", "")), table)
    return env().get_template("bench.html.j2").render(
        name=run.get("benchmark", folder.name), folder=folder.name, table=table, items=rows, plot=png,
        lead=lead, lead_modes=modes,
        modes=sorted({str(r.get("mode")) for r in rows}), statuses=sorted({str(r.get("status")) for r in rows}),
        run=json.dumps(run.get("settings", {}), indent=1)[:4000])


def headline_table(benchmark: str, table: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """The benchmark's headline metrics as the paper's tables have them: a row per metric (for DebateArt, each
    dimension's SC and DP RMSE×100: Table 5's shape), a column per mode, each cell the value with its interval, over
    all the items. Empty where the benchmark names no headline."""
    from debatrix.benchmarks.base import BENCHMARKS

    entry = BENCHMARKS.get(benchmark)
    headline = getattr(entry.cls, "headline", ()) if entry is not None else ()
    if not isinstance(headline, tuple) or not headline:
        return [], []
    cells = {(r.get("mode"), r.get("metric")): r for r in table if r.get("subset") == "all"}
    modes = list(dict.fromkeys(str(r.get("mode")) for r in table if r.get("metric") in headline))
    rows = []
    for metric in headline:
        found = [cells.get((m, metric)) for m in modes]
        if any(found):
            rows.append({"metric": metric, "words": next(r["words"] for r in found if r), "unit": "",
                         "cells": [f"{r['value']} [{r['interval']}]" if r and r["interval"] != "n/a" else
                                   (r["value"] if r else "") for r in found]})
    # what every row shares (DebateArt: "RMSE×100 (lower is better)") is said once, above the table, so a row
    # reads as the paper's does ("argument · by scores") and the table fits a phone
    firsts = {r["words"].split(" · ", 1)[0] for r in rows}
    if len(firsts) == 1 and all(" · " in r["words"] for r in rows):
        unit = firsts.pop()
        rows = [{**r, "words": r["words"].split(" · ", 1)[1], "unit": unit} for r in rows]
    return modes, rows


def compare_html(a: Path, b: Path, mode: str | None = None, out: Path | None = None) -> str:
    """Two benchmark runs side by side, paired over the items both completed: each metric in both runs with the
    difference and its 95% paired bootstrap interval, and the items whose verdict changed, each linked to both
    runs' results (their item pages where `debatrix report` wrote them, else the result files), relative to
    ``out``, where the page is written."""
    from debatrix.benchmarks.compare import (changed, chosen_mode, compare, records, settings_differing,
                                             shared_modes, side_by_side, summaries)
    from debatrix.benchmarks.frames import run_label

    try:
        modes = shared_modes(a, b)
        mode = chosen_mode(modes, mode)
        ra, rb = records(a, mode), records(b, mode)
        rows = compare(ra, rb)
    except DebatrixError as e:  # a folder that is not a run, or one whose records are of an older format
        raise ReportError(str(e)) from None
    differ = [(k, redact_url(x) if isinstance(x, str) else x, redact_url(y) if isinstance(y, str) else y)
              for k, x, y in settings_differing(a, b)]
    def link(folder: Path, rel: Any) -> str | None:
        source = inside(folder, rel) if isinstance(rel, str) and rel else None
        if source is None or not source.is_file():
            return None
        page = source.with_suffix(".html")
        target = page if page.is_file() else source
        return _relative(target, (out or b / "compare.html").parent)

    moved = [{**c, "a_link": link(a, c["a_file"]), "b_link": link(b, c["b_file"])} for c in changed(ra, rb)]
    return env().get_template("compare.html.j2").render(
        a=a.name, b=b.name, labels={"a": run_label(a), "b": run_label(b)}, mode=mode, modes=modes, rows=rows,
        changed=moved, items=side_by_side(a, b, ra, rb),
        n=rows[0]["n"] if rows else 0, differ=differ, summaries=summaries(a, b, mode))


def check_comparable(a: Path, b: Path) -> None:
    """A comparison pairs the items of two runs' folders: a result JSON given instead is refused, saying how to
    report it (checked before anything is written)."""
    files = [str(p) for p in (a, b) if not p.is_dir()]
    if files:
        raise ReportError(f"{' and '.join(files)}: a comparison reads two benchmark folders (bench --out, or a judge "
                          f"--out-dir folder); a result JSON gets a report of its own: debatrix report {files[0]}")


def write_comparison(a: Path, b: Path, out: Path, mode: str | None = None) -> list[Path]:
    check_comparable(a, b)
    write_atomic(out, compare_html(a, b, mode, out))
    return [out]


def write_report(path: Path, out: Path) -> list[Path]:
    """Render ``path`` (a result JSON or a benchmark folder) to ``out``; a folder's items get their own pages beside
    their result files. Returns the pages written."""
    if not path.is_dir():
        write_atomic(out, result_html(load_result(path)))
        return [out]
    if not (path / "summary.csv").exists() or not (path / "items.jsonl").exists():
        raise ReportError(f"{path}: not a benchmark results folder (no summary.csv / items.jsonl)")
    items = _items(path)
    written = []
    pages: dict[str, str] = {}
    paged = []  # (record, its result, its page): in the run page's order, each page linked to the next and previous
    for rec in sorted(items, key=lambda r: (str(r.get("mode")), str(r.get("item")), r.get("repeat") or 0)):
        rel = rec.get("result_file")
        source = inside(path, rel) if isinstance(rel, str) and rel else None  # never a file outside the folder
        if source is None or rel in pages or not source.is_file():
            continue
        try:
            result = load_result(source)
        except ReportError:
            continue  # not a judge result (a benchmark that stores its own records): no page
        pages[rel] = _relative(source.with_suffix(".html"), out.parent)
        paged.append((rec, result, source.with_suffix(".html")))
    for k, (rec, result, page) in enumerate(paged):
        pred, gold, read = _in_words(rec)
        near = _near(paged, k, page)
        write_atomic(page, result_html(result, {"back": _relative(out, page.parent), "gold": gold, "pred": pred,
                                                "right": _right(rec), "readings": read,
                                                "name": str(rec.get("item", "")), **near}))
        written.append(page)
    write_atomic(out, bench_html(path, items, pages))
    return [out, *written]


def is_results_root(path: Path) -> bool:
    """Whether ``path`` is a folder holding benchmark run folders but is not one itself."""
    from debatrix.benchmarks.frames import run_folders

    return path.is_dir() and not (path / "items.jsonl").exists() and bool(run_folders(path))


def duration_words(seconds: float) -> str:
    """A run's model time as a person reads it: "28 s", "4.5 min", "2.3 h" (never "0.00" hours for a short run)."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 90 * 60 else f"{seconds / 3600:.1f} h"


def write_index(root: Path, out: Path) -> list[Path]:
    """An index of every run under ``root`` (a row per run folder and mode: benchmark, model, code, when, items, the
    headline figure, the cost), each linked to its report, written here where it is missing or older than the
    run's items; from the index any two runs of one benchmark can be picked to compare. Returns the pages
    written."""
    from datetime import UTC, datetime

    from debatrix.benchmarks.frames import run_folders, runs_frame
    from debatrix.benchmarks.runner import short_commits

    written: list[Path] = []
    pages = {}
    folders = run_folders(root)
    for folder in folders:
        page = folder / "report.html"
        if (folder / "summary.csv").exists():
            if not page.exists() or page.stat().st_mtime < (folder / "items.jsonl").stat().st_mtime:
                written += write_report(folder, page)
            pages[folder] = _relative(page, out.parent)
    frame = runs_frame(root, folders)
    runs = [{**row, "page": pages.get(root / row["run"] if row["run"] != "." else root),
             "value": _number(row["headline_value"]), "code": short_commits(row["commit"]),
             "duration": duration_words(row["seconds"])}
            for row in frame.to_dict("records")]
    write_atomic(out, env().get_template("index.html.j2").render(
        root=str(root), runs=runs, written=datetime.now(UTC).strftime("%Y-%m-%d %H:%M")))
    return [out, *written]


def _near(paged: list[tuple[dict[str, Any], Any, Path]], k: int, page: Path) -> dict[str, Any]:
    """The previous and next item pages of the ``k``-th, as links from ``page`` (none before the first or after
    the last)."""
    out = {}
    for side, j in (("prev", k - 1), ("next", k + 1)):
        if 0 <= j < len(paged):
            rec, _, other = paged[j]
            out[side] = {"href": _relative(other, page.parent), "name": f"{rec.get('item')} ({rec.get('mode')})"}
    return out


def _relative(target: Path, base: Path) -> str:
    import os

    return Path(os.path.relpath(target.resolve(), base.resolve())).as_posix()
