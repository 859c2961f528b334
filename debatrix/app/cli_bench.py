"""``debatrix bench`` (a benchmark scored against its gold; merge, calibrate, weights and signals read stored
runs) and ``debatrix profile`` (what a judge model can see, measured and written as its profile)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import copy
import functools

import typer
from typer.core import TyperGroup

from debatrix.core.errors import DebatrixError, ExitCode
from debatrix.core.modes import MODES, get_mode
from debatrix.core.settings import DEFAULT_MODE, LLMSettings

from .options import BENCH_RUN, PanelledCommand, settings_options
from .terminal import console, out_console, plain
from .cli_common import fail, item_progress, make_settings, run_or_fail


def show_summary(path: Path) -> None:
    """A run's summary.md on stdout as written: a Markdown table's rows are never wrapped (off a terminal the
    console is 80 columns, and a wrapped row is no longer a table row)."""
    out_console.print(path.read_text(encoding="utf-8"), markup=False, highlight=False, soft_wrap=True)


#: the two kinds of ``debatrix bench`` sub-command, as its help lists them
SCORING, STORED = "Benchmarks (the judge scored against gold labels)", "Stored runs (read; no model call)"
#: the hidden command each benchmark's sub-command is made from (it takes the benchmark's name as its argument)
_RUN = "run-benchmark"


class BenchGroup(TyperGroup):
    """``debatrix bench``: one sub-command per registered benchmark, beside the commands that read stored runs.
    A benchmark's command is made when it is asked for (or listed), since the adapters are entry points that
    load only then: ``debatrix judge`` never pays for importing them. Each is made once (resolving ``bench NAME``
    asks for it twice)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._made: dict[str, Any] = {}

    def list_commands(self, ctx: Any) -> list[str]:
        fixed = [n for n in super().list_commands(ctx) if n != _RUN]
        return fixed + [n for n in _benchmark_names() if n not in fixed]

    def get_command(self, ctx: Any, name: str) -> Any:
        if name in self.commands:
            return None if name == _RUN else super().get_command(ctx, name)
        if name not in self._made:
            self._made[name] = self._benchmark_command(ctx, name)
        return self._made[name]

    def _benchmark_command(self, ctx: Any, name: str) -> Any:
        """Benchmark ``name``'s command: the run command with its name fixed and its summary as help (None: no such
        benchmark)."""
        _need_bench_extra()
        from debatrix.benchmarks import BENCHMARKS, BenchmarkDataError

        try:
            entry = BENCHMARKS.get_or_raise(name)
        except BenchmarkDataError:
            return None
        template = super().get_command(ctx, _RUN)
        command = copy.copy(template)
        command.name, command.hidden = name, False
        command.params = [p for p in template.params if p.name != "benchmark"]
        command.callback = functools.partial(template.callback, benchmark=name)
        variants = (f" Variants: {', '.join(entry.variants)} (--variant; the first is the default)."
                    if entry.variants else "")
        command.help = f"{entry.summary}.{variants}\n\n{template.help}"
        command.short_help = entry.summary
        return command

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            ctx.fail(f"unknown benchmark {args[0]!r}: use one of {', '.join(_benchmark_names())} (`debatrix bench "
                     f"list` describes them), or a command that reads stored runs: {', '.join(self._stored())}")
        return super().resolve_command(ctx, args)

    def _stored(self) -> list[str]:
        return [n for n, c in self.commands.items() if not c.hidden]

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        sections: dict[str, list[tuple[str, str]]] = {SCORING: [], STORED: []}
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                panel = STORED if name in self.commands else SCORING
                sections[panel].append((name, command.get_short_help_str(300)))
        for panel, rows in sections.items():
            if rows:
                with formatter.section(panel):
                    formatter.write_dl(rows)


def _benchmark_names() -> list[str]:
    """The registered benchmarks' names; none when the bench extra is not installed (the help then says so)."""
    if _missing_bench_extra():
        return []
    from debatrix.benchmarks import BENCHMARKS

    return list(BENCHMARKS)


bench_app = typer.Typer(cls=BenchGroup, no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                        help="Score the judge on a benchmark, or read stored runs.\n\nEach benchmark is a "
                             "sub-command that judges its items and scores the verdicts against their gold labels.",
                        epilog="Each sub-command has its own --help. Benchmarks need pip install 'debatrix[bench]'.")


def _run_option(help: str, *decls: str, **kw: Any) -> Any:
    return typer.Option(*decls, help=help, rich_help_panel=BENCH_RUN, **kw)


@bench_app.command(_RUN, hidden=True, cls=PanelledCommand)
@settings_options
def bench(
    benchmark: Annotated[str, typer.Argument(help="the benchmark")],
    modes: Annotated[str, _run_option("comma-separated judge modes to compare (differences are against the "
                                      "first)")] = DEFAULT_MODE,
    epochs: Annotated[int, _run_option("samples of every item per mode (needs --temperature > 0; each repeat "
                                       "has its own seed and cache entries)")] = 1,
    limit: Annotated[int | None, _run_option("a seeded sample of N items (debates: one per length stratum)",
                                             min=1)] = None,
    seed: Annotated[int, _run_option("seed of the --limit sample")] = 0,
    max_length: Annotated[int | None, _run_option("only items of at most this many characters (debates: of "
                                                  "speech), e.g. to fit a compute budget")] = None,
    shard: Annotated[str | None, _run_option("i/N: only the items of shard i of N (stable by item id); join the "
                                             "folders with `debatrix bench merge`")] = None,
    ray: Annotated[str | None, _run_option(
        "judge the items as tasks on a Ray cluster: auto (the cluster this machine is in), local (one started for "
        "this run) or its address; the folder is written here (pip install 'debatrix[cluster]')", "--ray",
        metavar="ADDRESS")] = None,
    max_samples: Annotated[int, _run_option("items judged at once")] = 1,
    out: Annotated[Path | None, _run_option("results folder (default results/<benchmark>); a rerun resumes "
                                            "it")] = None,
    data: Annotated[Path | None, _run_option("data folder or file (default: ../shared/data/...)")] = None,
    variant: Annotated[str | None, _run_option("the benchmark's variant (this help names them, if it has any; "
                                               "default: its first)")] = None,
    retry_incomplete: Annotated[bool, _run_option("judge items that ended incomplete again")] = False,
    cache: Annotated[str | None, _run_option("SQLite file or postgresql:// URL caching LLM answers, as for "
                                             "`judge` (default: <out>/llm_cache.sqlite), so a restarted run, or a "
                                             "shard on another machine, pays for no call answered")] = None,
    no_cache: Annotated[bool, _run_option("cache no answer (every call is sent)", "--no-cache")] = False,
    label: Annotated[str | None, _run_option("the run's name for people, shown in the run index and `debatrix "
                                             "bench compare` (kept until a later run of the folder gives "
                                             "another)")] = None,
    **settings: Any,
) -> None:
    """Resumable; writes items.jsonl, items/, summary.csv/.md/.png into --out."""
    _need_bench_extra()
    from debatrix.benchmarks import make_benchmark
    from debatrix.benchmarks.runner import parse_shard, run_benchmark

    mode_list = [m.strip() for m in modes.split(",") if m.strip()]
    unknown = [m for m in mode_list if m not in MODES]
    if unknown or not mode_list:
        fail(f"unknown mode(s) {', '.join(unknown) or '(none given)'}: use {', '.join(MODES)}")
    folder = out or Path("results") / (benchmark + (f"-{variant}" if variant else ""))
    # the flow's options are checked against a flow mode where the comparison has one (each mode reads its own)
    flowing = [m for m in mode_list if get_mode(m).reads_flow]
    run = make_settings(mode=(flowing or mode_list)[0],
                         cache=None if no_cache else (cache or folder / "llm_cache.sqlite"), **settings)
    try:
        b = make_benchmark(benchmark, data, variant)
        where = parse_shard(shard)
    except (DebatrixError, ValueError) as e:
        fail(str(e))
        raise
    show = item_progress()
    if folder.exists() and not folder.is_dir():
        fail(f"--out {folder} is a file: give a results folder (created if missing)")
    report = run_or_fail(run_benchmark(b, run, folder, modes=mode_list, repeats=epochs, limit=limit,
                                concurrency=max_samples, retry_incomplete=retry_incomplete, on_record=show,
                                settle=True, shard=where, seed=seed, max_length=max_length, ray=ray,
                                label=label),
                  files_too=True)
    show_summary(folder / "summary.md")
    console.print(f"{report.judged} judged now, {report.skipped} already done, {report.seconds:.1f}s; results in "
                  f"{plain(folder)}/ (items.jsonl, summary.csv, summary.md, summary.png)", highlight=False)
    if report.incomplete:  # as `judge` says of one debate: the figures above leave these out
        console.print(f"[yellow]{report.incomplete} incomplete (their reasons are in items.jsonl; "
                      "--retry-incomplete judges them again)[/]", highlight=False)
        raise typer.Exit(ExitCode.INCOMPLETE)


@settings_options
def profile(
    out: Annotated[Path | None, typer.Option(help="the profile file to write (default: <model>.profile.json); a "
                                                  "rerun resumes from its answer cache beside it")] = None,
    debates: Annotated[int, typer.Option(min=1, help="debates (or IBM speeches) a decision is measured on")] = 24,
    per_debate: Annotated[int, typer.Option(min=2, help="labelled passages asked of each debate")] = 8,
    mirror: Annotated[int, typer.Option(min=0, help="of each debate's passages, how many are asked again with "
                                                    "the speaking order swapped (the place lean)")] = 4,
    place_debates: Annotated[int, typer.Option(min=0, help="long debates (NYU, fold 0) whose passages are also "
                                                        "read in both speaking places: the place lean where a "
                                                        "debate runs to several rounds (0: none)")] = 24,
    kinds: Annotated[str | None, typer.Option(help="the decisions to measure, comma-separated (default: every "
                                                   "kind the flow can ask)")] = None,
    max_calls: Annotated[int | None, typer.Option(min=1, help="refuse before the first call when the profile "
                                                           "needs more calls (a budget for endpoints)")] = None,
    data: Annotated[Path | None, typer.Option(help="data folder (default: ../shared/data)")] = None,
    seed: Annotated[int, typer.Option(help="seed of the passages drawn")] = 0,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="cache no answer (every call is sent)")] = False,
    readings: Annotated[list[Path] | None, typer.Option(
        "--readings", help="a `debatrix bench` run folder of this model on human gold (repeatable): record how often "
                           "each mode and dimension was right there, and how often it named the first speaker, "
                           "in the profile (no call is made)")] = None,
    corrections: Annotated[list[Path] | None, typer.Option(
        "--corrections", help="a folder of corrected results (`debatrix review --out`, the page's download; "
                              "repeatable): measure the model's decisions against the ones people set, per kind "
                              "(no call is made; --out writes them into that profile)")] = None,
    **settings: Any,
) -> None:
    """Measure what a model can see, and write its judge profile.

    Prints the cost before the first call, its progress, and one table of what the model sees; the flow then
    judges each dimension only where this profile shows the decision it rests on carries. With --readings it
    records instead how often each reading was right in benchmark runs of this model."""
    _need_bench_extra()
    from .profile_command import record_corrections, record_readings, run_profile

    if readings:
        record_readings(readings, out=out, make=lambda: make_settings(mode=DEFAULT_MODE, **settings), fail=fail)
        return
    if corrections:
        named = settings.get("local_model") or settings.get("model")
        record_corrections(corrections, out=out, model=named, fail=fail)
        return

    run_profile(out=out, debates=debates, per_debate=per_debate, mirror=mirror, place_debates=place_debates,
                kinds=kinds, max_calls=max_calls,
                data=data, seed=seed, no_cache=no_cache, make=lambda cache: make_settings(
                    mode=DEFAULT_MODE, cache=cache, **settings), fail=fail, run=run_or_fail)


def _missing_bench_extra() -> list[str]:
    """The modules of the bench extra this install lacks."""
    import importlib.util

    return [m for m in ("scipy", "matplotlib") if importlib.util.find_spec(m) is None]


def _need_bench_extra() -> None:
    missing = _missing_bench_extra()
    if missing:
        fail(f"`debatrix bench` needs {' and '.join(missing)}: pip install 'debatrix[bench]'")


def _gold_folders(folders: list[Path], what: str) -> set[str]:
    """The models that judged ``folders``, each checked to be a DebateArt or contrast run folder."""
    import json as _json

    names = set()
    for folder in folders:
        if not (folder / "run.json").exists() or not (folder / "items.jsonl").exists():
            fail(f"{folder}: not a benchmark run folder (no run.json or items.jsonl)")
        try:
            run = _json.loads((folder / "run.json").read_text(encoding="utf-8"))
        except (ValueError, OSError) as e:
            fail(f"cannot read {folder}/run.json: {e}")
            raise
        if run.get("benchmark") not in ("debateart", "contrast"):
            fail(f"{folder}: a {run.get('benchmark')!r} run; {what} needs DebateArt's "
                  "audience verdicts or the contrast suite's known answers")
        llm = LLMSettings.model_validate(run.get("settings", {}).get("llm", {}))
        names.add(llm.local_model if llm.uses_local else llm.model)
    return names


#: the stored-run commands' argument
Folders = Annotated[list[Path] | None, typer.Argument(help="the runs' results folders (`debatrix bench NAME --out`)",
                                                      show_default=False)]


@bench_app.command("list")
def list_benchmarks() -> None:
    """Name and describe every registered benchmark, with its variants."""
    _need_bench_extra()
    from debatrix.benchmarks import BENCHMARKS

    for name, entry in BENCHMARKS.items():
        variants = f" (variants: {', '.join(entry.variants)})" if entry.variants else ""
        out_console.print(f"{name}: {entry.summary}{variants}", highlight=False, markup=False, soft_wrap=True)


@bench_app.command("weights")
def weights(folders: Folders = None,
            data: Annotated[Path | None, typer.Option(help="data folder (default: ../shared/data)")] = None) -> None:
    """Fit the flow's overall verdict on the folders' gold, held out (flow-mode DebateArt or contrast runs; the fit
    is written into the first)."""
    _need_bench_extra()
    _weights(folders or [], data)


@bench_app.command("signals")
def signals(folders: Folders = None) -> None:
    """Each decision the flow asks, measured on every gold source of stored runs (contrast, debateart, bp and
    decisions runs)."""
    _need_bench_extra()
    _signals(folders or [])


@bench_app.command("calibrate")
def calibrate(folders: Folders = None,
              model: Annotated[str | None, typer.Option(help="the model the maps belong to, where the folders "
                                                             "name more than one")] = None,
              into: Annotated[Path | None, typer.Option(help="a judge profile file of that model (`debatrix "
                                                             "profile --out`): merge the maps into it, so "
                                                             "`--profile FILE` runs show calibrated "
                                                             "probabilities")] = None) -> None:
    """Fit the winner probability of DebateArt or contrast runs' verdicts against their gold (the maps are
    written into the first folder, and with --into into a judge profile)."""
    _need_bench_extra()
    if into is not None and not into.is_file():  # checked before any fit: nothing is lost to a typo
        fail(f"--into {into}: no such profile file (`debatrix profile --out FILE` writes one)")
    _calibrate(folders or [], model, into)


@bench_app.command("merge")
def merge(folders: Folders = None,
          out: Annotated[Path | None, typer.Option(help="the joined results folder")] = None,
          data: Annotated[Path | None, typer.Option(help="data folder or file (default: ../shared/data/...)")] = None,
          variant: Annotated[str | None, typer.Option(help="the benchmark's variant the shards ran")] = None) -> None:
    """Join the folders of a sharded run (`--shard i/N`) into --out."""
    _need_bench_extra()
    _merge(folders or [], out, data, variant)


def _weights(folders: list[Path], data: Path | None) -> None:
    """Fit the flow's overall verdict on the folders' gold and print, per source, how the fit does held out
    beside the verdict as shipped (:mod:`debatrix.benchmarks.weights`)."""
    from debatrix.benchmarks.weights import FEATURES, weigh_folders

    if not folders:
        fail("usage: debatrix bench weights FOLDER [FOLDER...] (flow-mode DebateArt or contrast results folders; "
              "the fit is written into the first)")
    if len(_gold_folders(folders, "fitting weights")) > 1:
        fail("the folders were judged by different models: a verdict's weights belong to one")
    try:
        figures = weigh_folders(folders, data)
    except (ValueError, KeyError, OSError, DebatrixError) as e:
        fail(f"cannot fit weights on {', '.join(map(str, folders))}: {e}")
        raise

    def said(f: dict[str, Any]) -> str:
        return f"{f['right']:.0%} right, log loss {f['log_loss']:.3f}, Brier {f['brier']:.3f}"

    out_console.print("fitted on all: " + ", ".join(f"{n} {w:+.3f}" for n, w in zip(FEATURES, figures["weights"]))
                      + f" (L2 {figures['l2']:g}, chosen by leaving one debate out)", highlight=False, markup=False)
    for source, f in figures["sources"].items():
        out_console.print(f"{source} ({f['shipped']['n']} verdicts): as shipped {said(f['shipped'])}; fitted, each "
                          f"debate left out {said(f['leave_debate_out'])}"
                          + (f"; fitted on the other source alone {said(f['fitted_on_other_source'])}"
                             if "fitted_on_other_source" in f else ""), highlight=False, markup=False)
        if "direct" in f:  # the folders hold `direct` on the same items: the flow and direct weighed together
            out_console.print(f"  `direct` alone {said(f['direct'])}; the flow's measures with direct's log-odds, "
                              f"each debate left out {said(f['jury_leave_debate_out'])}"
                              + (f"; fitted on the other source alone {said(f['jury_fitted_on_other_source'])}"
                                 if "jury_fitted_on_other_source" in f else ""), highlight=False, markup=False)
    if "jury" in figures:
        j = figures["jury"]
        out_console.print("with direct, fitted on all: " + ", ".join(
            f"{n} {w:+.3f}" for n, w in zip(j["features"], j["weights"])) + f" (L2 {j['l2']:g})",
            highlight=False, markup=False)
    console.print(f"the fit and its figures in {plain(str(folders[0]))}/weights.json", highlight=False)


def _signals(folders: list[Path]) -> None:
    """Each decision the flow asks, and the ledgers built on them, measured on the gold of stored runs
    (:mod:`debatrix.benchmarks.signals`): a table, and which carry a signal above chance where."""
    import json as _json

    from debatrix.benchmarks.signals import SignalsError, cells, table

    if not folders:
        fail("usage: debatrix bench signals FOLDER [FOLDER...] (flow-mode contrast, debateart or bp runs, and "
              "decisions runs: no model call)")
    names = set()
    for folder in folders:
        if not (folder / "items.jsonl").is_file():
            fail(f"{folder}: not a benchmark run folder (no items.jsonl)")
        try:
            run = _json.loads((folder / "run.json").read_text(encoding="utf-8")) if (folder / "run.json").is_file() \
                else {}
        except (ValueError, OSError) as e:
            fail(f"cannot read {folder}/run.json: {e}")
            raise
        if run.get("settings", {}).get("llm"):
            llm = LLMSettings.model_validate(run["settings"]["llm"])
            names.add(llm.local_model if llm.uses_local else llm.model)
    if len(names) > 1:
        fail(f"the folders were judged by different models ({', '.join(sorted(map(plain, names)))}): a decision's "
              "quality belongs to one model")
    try:
        found = cells(folders)
    except (SignalsError, ValueError, OSError) as e:
        fail(f"cannot read the signals of {', '.join(map(str, folders))}: {e}")
        raise
    out_console.print(table(found), highlight=False, markup=False)


def _calibrate(folders: list[Path], model: str | None, into: Path | None = None) -> None:
    """Fit, per mode, the map from runs' winner probabilities to how often such verdicts are right: DebateArt's
    audience verdicts and the contrast suite's known answers; with more than one folder, pooled, and each source
    mapped by a fit on the others."""
    from debatrix.benchmarks.calibration import calibrate_folder

    if not folders:
        fail("usage: debatrix bench calibrate FOLDER [FOLDER...] [--model NAME] (DebateArt or contrast results "
              "folders; the maps are written into the first)")
    names = _gold_folders(folders, "calibration")
    if len(names) > 1 and not model:
        fail(f"the folders were judged by different models ({', '.join(sorted(names))}); a "
              "map belongs to one: calibrate them apart, or name the model with --model")
    name = model or names.pop()
    try:
        figures = calibrate_folder(folders[0], name, also=folders[1:])
    except (ValueError, KeyError, OSError) as e:
        fail(f"cannot calibrate {folders[0]}: {e}")
        raise
    for mode, f in figures.items():
        shown_mode = plain(mode)
        if f.get("place_prior"):
            out_console.print(f"{shown_mode}: place prior (share of the winner probability per speaking place, the "
                              f"orders reading the debate once): {', '.join(f'{x:.3f}' for x in f['place_prior'])}",
                              highlight=False)
        if "skipped" in f:
            out_console.print(f"{shown_mode}: {f['n']} verdicts, skipped: {f['skipped']}", highlight=False)
            continue
        out_console.print(
            f"{shown_mode}: {f['n']} decisive verdicts, {f['right']:.0%} right, mean winner probability "
            f"{f['mean_p']:.2f}; ECE {f['ece_raw']:.3f} -> {f['ece_calibrated_cv']:.3f}, Brier {f['brier_raw']:.3f} "
            f"-> {f['brier_calibrated_cv']:.3f} (cross-validated; a constant {f['right']:.0%} scores "
            f"{f['brier_constant']:.3f}); map a={f['a']:g} b={f['b']:g}", highlight=False)
        for c in f.get("cross_source", []):
            out_console.print(
                f"  on {plain(c['tested_on'])} ({c['n']}), mapped by a fit on {', '.join(map(plain, c['fitted_on']))}: "
                f"ECE {c['ece_raw']:.3f} -> {c['ece_mapped']:.3f}, Brier {c['brier_raw']:.3f} -> "
                f"{c['brier_mapped']:.3f}", highlight=False)
    fitted = [m for m, f in figures.items() if "skipped" not in f]
    if not fitted and not any(f.get("place_prior") for f in figures.values()):
        fail(f"nothing to calibrate in {plain(folders[0])}: "
             + ("every mode was skipped (above)" if figures else "no DebateArt or contrast verdicts found")
             + "; no calibration.json written")
    console.print(f"maps (and place priors) for {plain(name)} ({', '.join(map(plain, fitted)) or 'no mode'}) in "
                  f"{plain(folders[0])}/calibration.json" + (", plot in reliability.png" if fitted else ""),
                  highlight=False)
    if into is None:
        console.print(f"to use them: `debatrix bench calibrate ... --into PROFILE.json` merges them into "
                      f"{plain(name)}'s judge profile; runs with `--profile PROFILE.json` then read them", highlight=False)
        return
    from debatrix.benchmarks.calibration import into_profile

    try:
        n_maps, n_priors = into_profile(folders[0] / "calibration.json", into)
    except (DebatrixError, ValueError, OSError) as e:
        fail(f"cannot merge into {plain(into)}: {e}")
        raise
    console.print(f"merged {n_maps} map(s) and {n_priors} place prior(s) into {plain(into)}: `debatrix judge ... "
                  f"--profile {plain(into)}` uses them", highlight=False)


def _merge(folders: list[Path], out: Path | None, data: Path | None, variant: str | None) -> None:
    import json as _json

    from debatrix.benchmarks import make_benchmark
    from debatrix.benchmarks.runner import merge_runs

    if len(folders) < 1 or out is None:
        fail("usage: debatrix bench merge FOLDER [FOLDER ...] --out MERGED")
    manifest = folders[0] / "run.json"
    if not manifest.exists():
        fail(f"{folders[0]}: not a benchmark run folder (no run.json)")
    try:
        name = _json.loads(manifest.read_text(encoding="utf-8"))["benchmark"]
        b = make_benchmark(name, data, variant)
        _, _, joined = merge_runs(b, folders, out)
    except (DebatrixError, ValueError, KeyError) as e:
        fail(f"cannot merge: {e}")
        raise
    show_summary(out / "summary.md")
    console.print(f"{joined} records from {len(folders)} folders joined in {out}/", highlight=False)
