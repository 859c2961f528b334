"""``debatrix review``: a person corrects a flow judgment. It prints the decisions the judge would have a person
look at first, applies a file of corrections (checked against the result before anything is written) and writes the
corrected result, its verdicts recomputed from the model's decisions and the person's, with no model call."""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Annotated

import typer
import yaml

from debatrix.core.errors import ConfigurationError
from debatrix.core.files import check_writable, write_atomic
from debatrix.core.review import read_corrections, recompute, review_first

from .cli_common import fail
from .report import load_result
from .terminal import console, out_console, plain, print_summary


def _who() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name (a container without a passwd entry)
        return ""


def review(
    result_path: Annotated[Path, typer.Argument(metavar="RESULT", help="a flow judgment's result JSON")],
    corrections: Annotated[Path | None, typer.Option(help="a YAML or JSON file of corrections to apply (the format: "
                                                          "docs/coaches.md, 'Correcting the flow')")] = None,
    by: Annotated[str | None, typer.Option(help="who made the corrections that name nobody (default: your login "
                                                "name)")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="write the corrected result here (default: "
                                                                 "RESULT with .corrected.json)")] = None,
    most: Annotated[int, typer.Option(min=0, help="how many decisions to list for review (0: none)")] = 5,
    template: Annotated[Path | None, typer.Option(help="write a corrections file to fill in: the decisions to "
                                                       "review first, each with the model's answer")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="the whole summary: every reason, score and "
                                                                  "legend")] = False,
    undo: Annotated[bool, typer.Option(help="take back every correction the result holds (the model's own "
                                            "decisions again)")] = False,
) -> None:
    """Correct a flow judgment: what to check first, then recompute.

    Lists the decisions whose answer would move the verdict most. With --corrections, applies them (each checked:
    a bad passage, kind or row is one line naming it), recomputes every row, score and verdict without calling a
    model, and writes the corrected result; the model's own decisions are kept beside yours."""
    try:
        result = load_result(result_path)
    except ConfigurationError as e:
        fail(str(e))
        raise
    target = out or result_path.with_name(result_path.name.removesuffix(".json") + ".corrected.json")
    try:
        given = [] if corrections is None else read_corrections(corrections, result, by or _who() or None)
        kept = () if undo else result.corrections
        if corrections is not None or undo:
            check_writable(target)
        corrected = recompute(result, (*kept, *given))
        items = review_first(corrected, most=max(most, 5) if template else most) if most or template else []
    except ConfigurationError as e:
        fail(str(e))
        raise
    except OSError as e:
        fail(f"--out {target}: cannot write it ({e.strerror or e})")
        raise
    if template is not None:
        _write_template(template, items[:max(most, 5)], by or _who())
    changed = corrections is not None or undo
    if changed:
        write_atomic(target, corrected.model_dump_json(indent=2))
        before, after = (r.general.verdict if r.general is not None else None for r in (result, corrected))
        if before is not None and after is not None:
            console.print(f"verdict before: {plain(before.called)}; after: {plain(after.called)}", highlight=False)
    print_summary(corrected, out_console, verbose=verbose, review=items[:most],
                  review_command=f"debatrix review {result_path} --corrections FILE")
    if changed:
        console.print(f"{len(corrected.corrections)} correction(s) kept; corrected result written to {plain(target)}",
                      highlight=False)


def _write_template(path: Path, items: list, who: str) -> None:
    """A corrections file for a person to fill in: each decision to review first, its value left for them to set
    ("?", which is refused until it is: applied as it stands, a guess would count as a person's answer), and what
    the model said and what either answer would do as its note."""
    try:
        check_writable(path)
    except OSError as e:
        fail(f"--template {path}: cannot write it ({e.strerror or e})")
    entries = []
    for item in items:
        entries.append({"passage": item.decision[1], "kind": item.decision[0],
                        **({"row": item.decision[2]} if len(item.decision) > 2 else {}), "value": "?",
                        "note": f"the model: {item.said}; {item.sentence.split(': ', 1)[-1]}"})
    head = ("# corrections to fill in: set each value (?) to yes, no, partly or a probability, delete the entries\n"
            "# you leave to the model, then: debatrix review RESULT --corrections THIS_FILE\n")
    text = head + yaml.safe_dump({"by": who or "your name", "corrections": entries}, sort_keys=False,
                                 allow_unicode=True, width=100)
    write_atomic(path, text)
    console.print(f"a corrections file to fill in written to {plain(path)} ({len(entries)} decisions)",
                  highlight=False)

