"""``debatrix profile`` as the terminal runs it: the gold drawn, the cost said before the first call, the questions
asked with progress (resumable from the answer cache), the profile written and its table printed
(:mod:`debatrix.benchmarks.profiling` measures; :mod:`debatrix.core.profile` is what it writes)."""

from __future__ import annotations

import asyncio
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
    try:
        check_writable(target)
        prof = JudgeProfile.model_validate(json.loads(target.read_text(encoding="utf-8")))
    except (OSError, ValueError) as e:
        fail(f"{target}: not a profile ({type(e).__name__}: {str(e)[:120]})")
    if prof.model.name != name:
        fail(f"{target}: the profile of {prof.model.name}, not {name}")
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
