"""Compare two PanelBench DebateArt runs made with different settings, paired over the debates both judged.

``python -m debatrix.benchmarks.compare results/retrieval-off results/retrieval-on --mode debatrix`` prints, per
dimension, RMSE×100 of the direct prediction (DP) and of the score comparison (SC) in each run, the difference
with a 95% paired bootstrap interval (the same resamples for every row), the verdicts right, and what each run
cost in tokens (sent, and computed by the server where it said). ``bench`` compares modes within one run; this is
for settings that a run holds fixed (retrieval, orders, the model).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from .base import BenchmarkDataError, named, readings
from .metrics import rmse100
from .runner import latest_records
from .summary import bootstrap_intervals, read_summary

DIMENSIONS = ("general", "argument", "source", "language")
FIELDS = {"dp": "winner", "sc": "score_winner"}  # the verdict's field each kind of prediction reads


def records(folder: Path, mode: str) -> dict[str, dict[str, Any]]:
    """The first repeat's complete records of ``mode``, by item (the newest where an item was judged again)."""
    path = folder / "items.jsonl"
    if not path.exists():
        raise BenchmarkDataError(f"{folder}: not a benchmark results folder (no items.jsonl)")
    return {r["item"]: r for r in latest_records(path, [mode], None)
            if r.get("repeat", 0) == 0 and r.get("status") == "complete"}


def _rmse(recs: list[dict[str, Any]], dim: str, kind: str) -> float | None:
    """RMSE×100 over the records that made this prediction against a gold verdict per dimension (None: none did;
    a benchmark whose gold is not a verdict per dimension, e.g. the known answers, has none)."""
    made = [(p, r["gold"][dim]) for r in recs if (p := named(r, dim, FIELDS[kind])) is not None
            and isinstance(r.get("gold"), dict) and isinstance(r["gold"].get(dim), (int, float))]
    return rmse100([p for p, _ in made], [g for _, g in made]) if made else None


def compare(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]], resamples: int = 1000,
            seed: int = 0) -> list[dict[str, Any]]:
    """Rows of the comparison over the items both runs completed."""
    common = sorted(set(a) & set(b))
    if not common:
        raise BenchmarkDataError("the two runs have no completed item in common")
    keys = [(dim, kind) for dim in DIMENSIONS for kind in ("dp", "sc")
            if _rmse([a[k] for k in common], dim, kind) is not None
            and _rmse([b[k] for k in common], dim, kind) is not None]

    def diffs(sample: list[str]) -> dict[tuple[str, str], float]:
        out = {key: _diff([a[k] for k in sample], [b[k] for k in sample], *key) for key in keys}
        return {key: math.nan if d is None else d for key, d in out.items()}

    # the same paired percentile bootstrap as every benchmark summary (scipy's, one resampling for every row)
    intervals = bootstrap_intervals(diffs, common, keys, seed=seed, resamples=resamples)
    rows = []
    for dim, kind in keys:
        va, vb = _rmse([a[k] for k in common], dim, kind), _rmse([b[k] for k in common], dim, kind)
        lo, hi = intervals[(dim, kind)]
        rows.append({"metric": f"RMSE×100 {dim}, {kind.upper()}", "a": va, "b": vb, "diff": vb - va,
                     "low": lo, "high": hi, "n": len(common)})
    if keys:  # verdicts against a gold verdict (DebateArt)
        right = {k: sum(named(r[k_], "general") == r[k_]["gold"]["general"] for k_ in common)
                 for k, r in (("a", a), ("b", b))}
        rows.append({"metric": "general verdicts right (DP)", "a": right["a"], "b": right["b"], "n": len(common)})
    for key in ("prompt_tokens", "prompt_tokens_processed", "completion_tokens", "llm_calls"):
        sa = [a[k]["usage"].get(key) for k in common]
        sb = [b[k]["usage"].get(key) for k in common]
        if None in sa or None in sb:
            continue
        rows.append({"metric": f"{key} (sum)", "a": sum(sa), "b": sum(sb), "n": len(common)})
    return rows


def changed(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The common items whose overall verdict (DP) differs between the runs: each run's verdict in the gold's code
    (``a``, ``b``) and in names (``a_said``, ``b_said``: the winner or "tie"), the gold's (``gold``,
    ``gold_said``), whether ``b`` is closer to it, and each run's result file (``a_file``, ``b_file``)."""
    out = []
    for k in sorted(set(a) & set(b)):
        pa, pb = named(a[k], "general"), named(b[k], "general")
        if pa != pb:
            gold = a[k]["gold"].get("general") if isinstance(a[k].get("gold"), dict) else None
            said = {run: _overall(rec[k]) for run, rec in (("a", a), ("b", b))}
            out.append({"item": k, "a": pa, "b": pb, "gold": gold,
                        "a_said": said["a"].get("pred"), "b_said": said["b"].get("pred"),
                        "gold_said": said["a"].get("gold"),
                        "a_file": a[k].get("result_file"), "b_file": b[k].get("result_file"),
                        "better": None if gold is None or pa is None or pb is None else
                        abs(pb - gold) < abs(pa - gold)})
    return out


def _overall(record: dict[str, Any]) -> dict[str, Any]:
    """The record's reading of its overall verdict (:func:`.base.readings`; {} where it has none)."""
    return next((r for r in readings(record) if r["dimension"] == "general"), {})


def side_by_side(a_folder: Path, b_folder: Path, a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]
                 ) -> list[dict[str, Any]]:
    """Every common item with each run's overall verdict in names (``a_said``, ``b_said``) and the reason the run
    gave for it (``a_reason``, ``b_reason``: the overall verdict's comment, read from the item's result file; ""
    where the file is gone or holds none), the items whose verdict changed first."""
    rows = [{"item": k, "a_said": _overall(a[k]).get("pred"), "b_said": _overall(b[k]).get("pred"), "a_reason": overall_reason(a_folder, a[k]),
             "b_reason": overall_reason(b_folder, b[k])} for k in sorted(set(a) & set(b))]
    return sorted(rows, key=lambda r: r["a_said"] == r["b_said"])


def overall_reason(folder: Path, record: dict[str, Any]) -> str:
    """The comment of the overall verdict in ``record``'s result file (under ``folder``)."""
    from debatrix.core.files import inside

    rel = record.get("result_file")
    path = inside(folder, rel) if isinstance(rel, str) and rel else None
    try:
        result = json.loads(path.read_text(encoding="utf-8")) if path is not None and path.is_file() else {}
    except (OSError, ValueError):
        return ""
    general = result.get("general") or next((d for d in result.get("dimensions") or () if d.get("name") == "general"),
                                            None) or {}
    return str((general.get("verdict") or {}).get("comment") or "")


def run_modes(folder: Path) -> list[str]:
    """The modes a run judged, in its order."""
    path = folder / "items.jsonl"
    if not path.exists():
        raise BenchmarkDataError(f"{folder}: not a benchmark results folder (no items.jsonl)")
    found = (json.loads(line).get("mode") for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return list(dict.fromkeys(m for m in found if m))


def shared_modes(a: Path, b: Path) -> list[str]:
    """The modes both runs judged (in the first run's order); a typed error where there is none."""
    in_b = set(run_modes(b))
    common = [m for m in run_modes(a) if m in in_b]
    if not common:
        raise BenchmarkDataError(f"{a} and {b} judged no mode in common")
    return common


def chosen_mode(common: list[str], mode: str | None = None) -> str:
    """``mode`` where both runs judged it (``common``, :func:`shared_modes`; a typed error naming them where not),
    else the first both judged."""
    if mode is not None and mode not in common:
        raise BenchmarkDataError(f"both runs judged {', '.join(common)}; not {mode}")
    return mode or common[0]


def summaries(a: Path, b: Path, mode: str) -> list[dict[str, Any]]:
    """Each run's own summary figures for ``mode`` side by side (``summary.csv``: over all of that run's items,
    not paired), for the metrics both report: what a benchmark without a gold verdict per item is compared by."""
    def read(folder: Path) -> dict[tuple[str, str], float]:
        try:
            rows = read_summary(folder)
        except OSError:
            return {}
        return {(r["metric"], r["subset"]): float(r["value"]) for r in rows if r.get("mode") == mode}

    ra, rb = read(a), read(b)
    return [{"metric": f"{m} ({sub})" if sub != "all" else m, "a": ra[(m, sub)], "b": rb[(m, sub)]}
            for m, sub in ra if (m, sub) in rb]


def settings_differing(a: Path, b: Path) -> list[tuple[str, Any, Any]]:
    """The settings two runs were made with that differ (``run.json``; dotted names, e.g. ``llm.model``): what
    the comparison is a comparison of. A run folder without ``run.json`` shows no settings."""
    def flat(folder: Path) -> dict[str, Any]:
        try:
            data = json.loads((folder / "run.json").read_text(encoding="utf-8")).get("settings") or {}
        except (OSError, ValueError):
            return {}
        out: dict[str, Any] = {}

        def walk(prefix: str, value: Any) -> None:
            if isinstance(value, dict):
                for k, v in value.items():
                    walk(f"{prefix}{k}.", v)
            else:
                out[prefix[:-1]] = value
        walk("", data)
        return out

    fa, fb = flat(a), flat(b)
    return [(k, fa.get(k), fb.get(k)) for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)]


def _diff(ra: list[dict[str, Any]], rb: list[dict[str, Any]], dim: str, kind: str) -> float | None:
    va, vb = _rmse(ra, dim, kind), _rmse(rb, dim, kind)
    return None if va is None or vb is None else vb - va


def table(rows: list[dict[str, Any]], name_a: str, name_b: str) -> str:
    lines = [f"| metric | {name_a} | {name_b} | difference [95% paired bootstrap] |", "|---|---|---|---|"]
    for r in rows:
        fmt = (lambda v: f"{v:.1f}") if "RMSE" in r["metric"] else (lambda v: f"{v:,}")
        diff = f"{r['diff']:+.1f} [{r['low']:+.1f}, {r['high']:+.1f}]" if "diff" in r else (
            f"×{r['b'] / r['a']:.2f}" if r["a"] and "sum" in r["metric"] else "")
        lines.append(f"| {r['metric']} | {fmt(r['a'])} | {fmt(r['b'])} | {diff} |")
    return "\n".join(lines) + f"\n\n{rows[0]['n'] if rows else 0} debates in common."


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", type=Path, help="the first run's results folder (the baseline)")
    ap.add_argument("b", type=Path, help="the second run's results folder")
    ap.add_argument("--mode", default="debatrix", help="the mode to compare (each run may hold several)")
    ap.add_argument("--resamples", type=int, default=1000)
    args = ap.parse_args(argv)
    try:
        rows = compare(records(args.a, args.mode), records(args.b, args.mode), args.resamples)
    except BenchmarkDataError as e:
        raise SystemExit(str(e)) from None
    print(table(rows, args.a.name, args.b.name))


if __name__ == "__main__":
    main()
