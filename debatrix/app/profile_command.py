"""``debatrix profile`` as the terminal runs it: the gold drawn, the cost said before the first call, the questions
asked with progress (resumable from the answer cache), the profile written and its table printed
(:mod:`debatrix.benchmarks.profiling` measures; :mod:`debatrix.core.profile` is what it writes)."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from debatrix.core.files import check_writable, write_atomic
from debatrix.core.flow import KINDS
from debatrix.core.profile import JudgeProfile, ModelIdentity, model_of, shipped

from .terminal import console, out_console, plain


def _identity(settings: Any, logprobs: bool) -> ModelIdentity:
    name, endpoint = model_of(settings)
    sha = None
    if endpoint == "local":
        from debatrix.llm.local import CATALOG

        spec = CATALOG.get(name)
        sha = spec.sha256 if spec is not None else None
    return ModelIdentity(name=name, endpoint=endpoint, gguf_sha256=sha, logprobs=logprobs)


def profile_table(prof: JudgeProfile) -> Table:
    table = Table(title=f"what {prof.model.name} sees (profile of {prof.measured})", title_justify="left")
    for col in ("decision", "state", "ROC AUC [95%]", "items", "debates", "no option", "P first", "P second",
                "flips", "place shift (logit) [95%]", "longer", "map (held out)"):
        table.add_column(col, justify="left" if col in ("decision", "state", "map (held out)",
                                                                 "place shift (logit) [95%]") else "right")
    for r in prof.table():
        table.add_row(r["decision"], r["state"], r["roc_auc"], str(r["items"]), str(r["debates"]),
                      str(r["no_option"]), r["first"], r["second"], r["flips"], r["shift"], r["longer"], r["map"])
    return table


def run_profile(*, out: Path | None, debates: int, per_debate: int, mirror: int, place_debates: int,
                kinds: str | None,
                max_calls: int | None, data: Path | None, seed: int, no_cache: bool,
                make: Callable[[Any], Any], fail: Callable[..., None], run: Callable[..., Any]) -> None:
    from debatrix.benchmarks import profiling as M
    from debatrix.benchmarks.base import BenchmarkDataError, data_root
    from debatrix.benchmarks.runner import source_commit

    wanted = tuple(k.strip() for k in kinds.split(",") if k.strip()) if kinds else KINDS
    unknown = [k for k in wanted if k not in KINDS]
    if unknown:
        fail(f"--kinds: unknown {', '.join(unknown)} (the flow asks {', '.join(KINDS)})")
    probe_settings = make(None)
    name, _ = model_of(probe_settings)
    target = out or _default_target(name)
    if target.exists() and target.is_dir():
        fail(f"--out {target} is a folder: give the profile file to write")
    try:
        check_writable(target)
    except OSError as e:
        fail(f"--out {target}: {e.strerror or e}")
    cache = None if no_cache else target.with_name(target.name + ".cache.sqlite")
    settings = make(cache)
    gold = M.Gold(data or data_root(), debates=debates, per_debate=per_debate, mirror=mirror, seed=seed,
                  place_debates=place_debates)
    why = M.enough(gold)
    if why:
        console.print(f"[yellow]{why}: the decisions will read 'not enough data'[/]", highlight=False)
    try:
        asked = M.probes(gold, wanted)
    except (BenchmarkDataError, OSError) as e:
        fail(str(e))
        raise
    calls, tokens = M.cost(asked)
    console.print(f"profiling {plain(name)} on {', '.join(wanted)}: {calls} calls, about {tokens:,} prompt tokens "
                  "(fewer read where the server caches prompts or the answer cache has them)"
                  + (f"; answers cached in {plain(cache)}" if cache else ""), highlight=False)
    if max_calls is not None and calls > max_calls:
        fail(f"the profile needs {calls} calls, over --max-calls {max_calls}: lower --debates or --per-debate")
    name_arg = {"backend": "local", "local-model": name} if model_of(settings)[1] == "local" else {"model": name}
    args = {**name_arg, "kinds": ",".join(wanted), "debates": debates, "per-debate": per_debate, "mirror": mirror,
            "place-debates": place_debates, "seed": seed}
    run(_measure(settings, asked, wanted, target, source_commit() or "", seed, args), files_too=True)


async def _measure(settings: Any, asked: list[Any], kinds: tuple[str, ...], target: Path, commit: str,
                   seed: int, command_args: dict[str, Any]) -> None:
    from debatrix.benchmarks import profiling as M
    from debatrix.context import JudgeContext

    ctx = await asyncio.to_thread(JudgeContext.create, settings)
    started = time.perf_counter()
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        if done == total or now - last[0] >= 15:
            last[0] = now
            gone = now - started
            left = gone / done * (total - done) if done else 0
            console.print(f"  {done}/{total} answered, {gone:.0f}s gone, about {left:.0f}s left", highlight=False)

    try:
        records = await M.ask(ctx, asked, progress)
    finally:
        ctx.close()
    logprobs = not any(getattr(r, "from_answer", 0) for r in records)
    previous = None
    if target.exists():
        try:
            previous = JudgeProfile.model_validate(json.loads(target.read_text(encoding="utf-8")))
        except (ValueError, OSError):
            previous = None
    identity = _identity(settings, logprobs)
    keep = previous if previous is not None and previous.model.name == identity.name else shipped().get(identity.name)
    if keep is None:  # the winner maps and place priors `bench calibrate` measured for this model, carried over
        from debatrix.core.probabilities import maps, place_priors

        keep = JudgeProfile(model=identity, prompts_sha256="", measured="",
                            verdict_maps=tuple(m for (n, _, _), m in maps().items() if n == identity.name),
                            place_priors=tuple(v for (n, _), v in place_priors().items() if n == identity.name))
    command = "debatrix profile " + " ".join(f"--{k} {v}" for k, v in command_args.items())
    prof = M.build_profile(asked, kinds, model=identity, commit=commit, command=command, keep=keep, seed=seed)
    if previous is not None and previous.model.name == identity.name and previous.prompts_sha256 == prof.prompts_sha256:
        # a decision measured again (--kinds): the others keep what the file held, each with its own figures
        # (one written before decisions kept their own date and commit takes the file's)
        kept = {k: d if d.measured else d.model_copy(update={"measured": previous.measured, "commit": previous.commit})
                for k, d in previous.decisions.items() if k not in prof.decisions}
        if kept:
            decisions = {**kept, **prof.decisions}
            # an earlier command whose kinds were all measured again says nothing about the file any more
            earlier = [c for c in previous.command.split(" && ") if not set(_kinds_of(c)) <= set(prof.decisions)]
            prof = prof.model_copy(update={"decisions": decisions,
                                           "gold": tuple(dict.fromkeys(d.gold for d in decisions.values())),
                                           "command": " && ".join((*earlier, prof.command))})
    write_atomic(target, prof.model_dump_json(indent=1) + "\n")
    _print_table(profile_table(prof))
    console.print(f"{prof.sees()}\nprofile written to {plain(target)} ({time.perf_counter() - started:.0f}s, "
                  f"{len(records)} calls); judge with --profile {plain(target)}", highlight=False)


def _kinds_of(command: str) -> list[str]:
    """The decision kinds a recorded ``debatrix profile`` command measured (its --kinds; all where it names none)."""
    words = command.split()
    at = words.index("--kinds") + 1 if "--kinds" in words else None
    return words[at].split(",") if at is not None and at < len(words) else list(KINDS)


def _print_table(table: Table) -> None:
    """A table printed whole: off a terminal (a log, a pipe) rich would squeeze it into 80 columns and cut every
    figure, so it gets the width it needs there."""
    if out_console.is_terminal:
        out_console.print(table)
    else:
        Console(width=max(out_console.width, 160)).print(table)


def reading_table(prof: JudgeProfile) -> Table:
    table = Table(title=f"how often each reading of {prof.model.name} was right on gold", title_justify="left")
    place = "place lean taken out (fitted on fold 0, checked on fold 1)"
    for col in ("reading", "gold", "state", "right [95%]", "debates", "first named [95%]", "gold's first", "lean",
                place):
        table.add_column(col, justify="left" if col in ("reading", "gold", "state", "lean", place) else "right")
    for r in prof.reading_table():
        table.add_row(r["reading"], r["gold"], r["state"], r["right"], str(r["items"]), r["first_named"],
                      r["gold_first"], r["lean"], r["place"])
    return table


def record_readings(runs: list[Path], *, out: Path | None, make: Callable[[], Any],
                    fail: Callable[..., None]) -> None:
    """``debatrix profile --readings RUN...``: the readings of benchmark runs of this model, written into its
    profile (the file at ``out``, else the shipped one of the model); a run of another model is refused."""
    from debatrix.benchmarks.base import BenchmarkDataError
    from debatrix.benchmarks.readings import readings, run_models

    name, _ = model_of(make())
    for run in runs:
        if not run.is_dir():
            fail(f"--readings {run}: not a folder (give a `debatrix bench` run folder)")
        models, _ = run_models(run)
        if models and models != {name}:
            fail(f"--readings {run}: judged by {', '.join(sorted(models))}, not {name}: a reading is a figure of the "
                 "model that made it")
    shipped_file = _shipped_path(name)
    target = out or (shipped_file if shipped_file.exists() else _default_target(name))
    if not target.exists():
        fail(f"{target}: no profile of {name} yet: `debatrix profile` measures its decisions first")
    prof = _writable_profile(target, name, fail)
    try:
        found = readings(runs)
    except BenchmarkDataError as e:
        fail(str(e))
    if not found:
        fail("--readings: no debate with a gold winner judged to completion in "
             + ", ".join(str(r) for r in runs))
    new = {(r.reading, r.gold) for r in found}
    kept = tuple(r for r in prof.readings if (r.reading, r.gold) not in new)
    prof = prof.model_copy(update={"readings": (*kept, *found)})
    write_atomic(target, prof.model_dump_json(indent=1) + "\n")
    _print_table(reading_table(prof))
    console.print(f"readings of {len(found)} (reading, gold) pairs written to {plain(target)}", highlight=False)


def _default_target(name: str) -> Path:
    """Where a profile of ``name`` is written when no --out is given: ``<model>.profile.json`` here."""
    return Path(f"{Path(name).name.removesuffix('.gguf')}.profile.json")


def _shipped_path(name: str) -> Path:
    from debatrix.core.profile import shipped_folder

    return Path(str(shipped_folder())) / f"{Path(name).name.removesuffix('.gguf')}.json"


def record_corrections(folders: list[Path], *, out: Path | None, model: str | None,
                       fail: Callable[..., None]) -> None:
    """``debatrix profile --corrections FOLDER...``: the decisions people set in corrected results (``debatrix
    review --out``, the page's download) measured as gold of the model that made the others: a table per kind of
    decision, and with ``--out`` those decisions written into that profile, which then says its gold is these
    corrections. Every file is read before anything is written; one that is not a result, or a result of another
    model, is one line naming it."""
    from debatrix.benchmarks import profiling as M
    from debatrix.core.results import JudgeResult
    from debatrix.core.review import CorrectionError, correctable

    results, files = [], []
    for folder in folders:
        if not folder.is_dir():
            fail(f"--corrections {folder}: not a folder (give the folder your corrected results are in)")
        found = sorted(folder.rglob("*.json"))
        if not found:
            fail(f"--corrections {folder}: no result file (*.json) in it")
        for path in found:
            try:
                r = JudgeResult.model_validate_json(path.read_bytes())
                correctable(r)
            except CorrectionError as e:
                fail(f"{path}: {e}")
            except (OSError, ValueError) as e:
                fail(f"{path}: not a debatrix result ({str(e).splitlines()[0][:160]})")
            if r.corrections:
                results.append(r)
                files.append(path)
    if not results:
        fail("--corrections: no result in " + ", ".join(map(str, folders)) + " holds a correction "
             "(`debatrix review RESULT --corrections FILE` writes them)")
    models = {_model_of(r) for r in results}
    if model is not None:
        wrong = next(((f, r) for f, r in zip(files, results) if _model_of(r) != model), None)
        if wrong is not None:
            fail(f"--corrections: {wrong[0]} was judged by {_model_of(wrong[1])}, not {model}: a decision's figures "
                 "are of the model that made it")
    elif len(models) > 1:
        fail(f"--corrections: the results were judged by {', '.join(sorted(models))}: measure one model at a time "
             "(name it with --model or --local-model)")
    name = model or next(iter(models))
    people = sorted({c.by for r in results for c in r.corrections})
    probes, unasked = M.correction_probes(results)
    gold = (f"corrections by {', '.join(people)} in {', '.join(str(f) for f in folders)}: the decisions a person set "
            f"on {len({r.debate_id for r in results})} debates (a value of 0.5 or more is yes)")
    decisions = M.corrections_profile(results, gold)
    shown = JudgeProfile(model=ModelIdentity(name=name), prompts_sha256="", decisions=decisions,
                         measured=f"{dt.date.today().isoformat()}, against corrections")
    _print_table(profile_table(shown))
    console.print(f"{len(probes)} corrected decisions of {name} measured against {len(people)} "
                  f"{'person' if len(people) == 1 else 'people'}'s corrections on {len(results)} results"
                  + (f"; {unasked} corrections of decisions the model never made left out" if unasked else "")
                  + ". The decisions people set are those the judge put first for review (where it was least sure): "
                  "not a random sample of its decisions, so these figures are of the hard ones.", highlight=False)
    if out is None:
        console.print("nothing written (--out PROFILE writes these decisions into that profile)", highlight=False)
        return
    if out.exists():
        prof = _writable_profile(out, name, fail)
    else:
        base = shipped().get(name)
        if base is None:
            fail(f"--out {out}: no profile of {name} there or shipped: `debatrix profile` measures one first")
        try:
            check_writable(out)
        except OSError as e:
            fail(f"--out {out}: {e.strerror or e}")
        prof = base
    replaced = sorted(set(decisions) & set(prof.decisions))
    prof = prof.model_copy(update={"decisions": {**prof.decisions, **decisions},
                                   "gold": tuple(dict.fromkeys((*prof.gold, gold)))})
    write_atomic(out, prof.model_dump_json(indent=1) + "\n")
    console.print(f"written to {plain(out)}: " + ", ".join(sorted(decisions)) + " measured on the corrections"
                  + (f" (replacing what it held of {', '.join(replaced)})" if replaced else ""), highlight=False)


def _writable_profile(target: Path, name: str, fail: Callable[..., None]) -> JudgeProfile:
    """The profile of ``name`` at ``target``, which this command may write over (one line where it is not a
    profile, is another model's, or cannot be written)."""
    try:
        check_writable(target)
        prof = JudgeProfile.model_validate(json.loads(target.read_text(encoding="utf-8")))
    except (OSError, ValueError) as e:
        fail(f"{target}: not a profile ({type(e).__name__}: {str(e)[:120]})")
    if prof.model.name != name:
        fail(f"{target}: the profile of {prof.model.name}, not {name}")
    return prof


def _model_of(result: Any) -> str:
    """The model a result was judged with: its profile's, else its settings' (a local catalogue name)."""
    if result.judge_profile is not None:
        return result.judge_profile.model.name
    llm = result.settings.get("llm") or {}
    if llm.get("served_locally") or llm.get("backend") == "local":
        return str(llm.get("local_model") or llm.get("model"))
    return str(llm.get("model") or "")
