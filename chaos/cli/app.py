"""The ``chaos`` command line.

Exit codes: 0 every verdict holds, 1 a violation was found, 2 some verdict is unknown (and none is
violated), 3 the run itself failed (bad scenario, environment, interrupted); ``chaos nightly``
adds 4: a verdict regressed since the previous night. Errors the user can act on are one line on
stderr, never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from chaos.cli.failures import ChaosGroup, set_debug
from chaos.cli.failures import report as report_failure
from chaos.cli.masked import masked
from chaos.racer.errors import ChaosError

app = typer.Typer(
    cls=ChaosGroup, add_completion=False, no_args_is_help=True, help="Crash-injection and race harness: does resume really mean resume?"
)


# ``--jobs`` of ``run`` and ``nightly``: one option, said once
JOBS = typer.Option(
    None,
    "--jobs",
    "-j",
    metavar="N",
    help="run N independent trials of a sweep cell at once (default: $CHAOS_JOBS, else the cores this process may use, capped by memory, twice that for the Agent Server, whose trials mostly wait; races run one at a time)",
)


@app.callback()
def _options(
    debug: bool = typer.Option(False, "--debug", help="print the traceback of a failing command too (CHAOS_DEBUG=1 does the same)"),
) -> None:
    set_debug(debug)


def _console(stderr: bool = False) -> Console:
    # piped output (CI logs, files) gets a wide console instead of rich's default of 80 columns
    stream = sys.stderr if stderr else sys.stdout
    wide = None if stream.isatty() or os.environ.get("COLUMNS") else 160
    return Console(file=masked(stderr), width=wide, soft_wrap=True)  # every line masked (chaos.cli.masked)


console = _console(stderr=True)
out = _console()

STATUS_STYLE = {"holds": "green", "violated": "bold red", "unknown": "yellow"}


def _fail(exc: ChaosError) -> NoReturn:
    # escaped and redacted (chaos.cli.failures): a message quoting user input ("[cell k=2]", a
    # YAML list) must not be read as markup, nor print a password it quotes
    report_failure(exc, console)
    raise typer.Exit(exc.exit_code)


MAX_TRIALS = 100_000
MAX_SEED = 2**63 - 1


def _check_overrides(seed: int | None, trials: int | None) -> None:
    """--seed and --trials are refused here, with their limits, before anything is written."""
    if trials is not None and not 1 <= trials <= MAX_TRIALS:
        _fail(ChaosError(f"--trials {trials}: trials per cell must be between 1 and {MAX_TRIALS}"))
    if seed is not None and not 0 <= seed <= MAX_SEED:
        _fail(ChaosError(f"--seed {seed}: the root seed must be between 0 and {MAX_SEED}"))


def _jobs(value: str | None) -> int | None:
    """--jobs as a number (None: CHAOS_JOBS, else what the machine has); 0, a negative or a non-integer
    is refused here, given as the option or in CHAOS_JOBS."""
    from chaos.running.jobs import parse_jobs, wanted_jobs

    try:
        if value is None:
            wanted_jobs()
            return None
        return parse_jobs(value)
    except ChaosError as exc:
        _fail(exc)


def summary_table(results) -> Table:
    t = Table(title=f"{results.scenario}: {results.verdict_counts}", show_lines=False)
    for col in ("cell", "kind", "valid/trials", "saturation", "fires", "verdicts"):
        t.add_column(col)
    for c in results.cells:
        sat = "-" if c.saturation is None else f"{c.saturation:.3f}"
        fires = ", ".join(f"{k}:{n}" for k, n in c.fires.items()) or (f"{len(c.points)} kill points" if c.points else "-")
        verdicts = " ".join(f"[{STATUS_STYLE[v.status]}]{v.property}:{v.status}[/]" for v in c.verdicts)
        t.add_row(escape(c.cell_id), c.kind, f"{c.valid_trials}/{c.trials}", sat, fires, verdicts)
    return t


def guard_lines(results) -> list[str]:
    """One line per guarded cell beside its stock twin: verdicts and the overhead ratio."""
    from chaos.reports.guards import guard_pairs

    return [f"guard: {p.line()}" for p in guard_pairs(results)]


def _reap_stale_quietly() -> None:
    """Every command that starts racers first reaps what a SIGKILLed earlier run left behind."""
    from chaos.running.registry import reap_stale

    try:
        for r in reap_stale():
            console.print(f"[yellow]chaos: cleaned up after a dead run:[/] {escape(r.describe())}", highlight=False, soft_wrap=True)
    except OSError as exc:  # the registry folder is unusable: say so, do not block the run
        console.print(f"[yellow]chaos: could not check for dead runs: {escape(str(exc))}[/]", highlight=False)


@app.command()
def run(
    scenario: Path | None = typer.Argument(None, help="scenario YAML file (omit with --resume)"),
    out_dir: Path = typer.Option(Path("reports"), "--out", help="folder that receives <scenario>/<timestamp>/"),
    seed: int | None = typer.Option(None, help="override the scenario's root seed"),
    trials: int | None = typer.Option(None, help="override trials per cell (per kill point for sweeps)"),
    keep_work: bool = typer.Option(False, "--keep-work", help="keep per-trial work folders (checkpoint DBs, racer logs)"),
    work_in: Path | None = typer.Option(
        None,
        "--work-in",
        metavar="DIR",
        help="make the work folder (checkpoint DBs, barriers, racer logs) in DIR, e.g. "
        "/dev/shm: same sweep results, faster trials; changes race timing "
        "(see chaos.running.workdir)",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
    resume: Path | None = typer.Option(
        None, "--resume", metavar="RUN_DIR", help="continue an interrupted run from its journal (only unfinished trials run)"
    ),
    only: list[str] | None = typer.Option(None, "--only", help="run just this trial id (repeatable), e.g. c000-t0001"),
    racers: str | None = typer.Option(
        None, "--racers", help="how racers start: warm (forked from a pre-imported parent; the default) or cold (a fresh Python each)"
    ),
    shard: str | None = typer.Option(
        None, "--shard", metavar="I/N", help="run only shard I of N of the cells (split by stable cell id, balanced by estimated cost)"
    ),
    baseline: Path | None = typer.Option(
        None,
        "--baseline",
        metavar="FILE",
        help="accepted violations (YAML): those are reported as accepted and exit as if they held; a new one still exits 1",
    ),
    jobs: str | None = JOBS,
) -> None:
    """Run a scenario: every cell, every trial; write the run folder and print the summary."""
    from chaos.running.options import RunOptions
    from chaos.running.orchestrator import run_scenario

    accepted = None
    if baseline is not None:
        from chaos.accepted import load_baseline

        try:
            accepted = load_baseline(baseline)  # refused before any racer runs
        except ChaosError as exc:
            _fail(exc)

    if (scenario is None) == (resume is None):
        _fail(ChaosError("give a scenario file to run, or --resume RUN_DIR to continue a run (not both)"))
    if resume is not None and (seed is not None or trials is not None or racers is not None or only):
        _fail(ChaosError("--resume continues a run with its recorded seed, trials and racers; drop --seed/--trials/--racers"))
    if racers not in (None, "warm", "cold"):
        _fail(ChaosError(f"--racers {racers!r}: expected warm or cold"))
    _check_overrides(seed, trials)
    n_jobs = _jobs(jobs)
    if work_in is not None:
        from chaos.running.workdir import check_work_in

        try:
            check_work_in(work_in)
        except ChaosError as exc:
            _fail(exc)
    if shard is not None:
        from chaos.running.shard import parse_shard

        if resume is not None:
            _fail(ChaosError("--resume continues a run with its recorded cells; drop --shard"))
        try:
            shard = str(parse_shard(shard))
        except ChaosError as exc:
            _fail(exc)
    if scenario is not None:  # bad input is refused before anything else happens (no reaping, no folder)
        from chaos.scenario.model import load_scenario

        try:
            load_scenario(scenario)
        except ChaosError as exc:
            _fail(exc)
    _reap_stale_quietly()
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
        transient=False,
    )
    task = progress.add_task("cells", total=None)

    def on_cell(cell, n):
        progress.start()  # only once trials begin: input refused earlier leaves just its one error line
        progress.update(task, description=f"cell {cell.index + 1}/{n} {escape(cell.id)}")

    def on_trial(rec):
        progress.advance(task)

    opts = RunOptions(
        out=out_dir,
        seed=seed,
        trials=trials,
        keep_work=keep_work,
        work_in=work_in,
        racers=racers,
        on_trial=on_trial,
        on_cell_start=on_cell,
        only=set(only) if only else None,
        shard=shard,
        jobs=n_jobs,
    )
    try:
        if resume is not None:
            from chaos.running.resume import resume_run

            outcome = resume_run(resume, opts)
        else:
            assert scenario is not None  # refused above: exactly one of a scenario and --resume
            outcome = run_scenario(scenario, opts)
    except ChaosError as exc:
        progress.stop()
        _fail(exc)
    finally:
        progress.stop()
    res = outcome.results
    out.print(summary_table(res))
    for line in guard_lines(res):  # target.guard: each guarded cell beside its stock twin, the overhead ratio
        out.print(escape(line), highlight=False, soft_wrap=True)
    sm = res.summary
    out.print(
        f"trials: {sm.trials} ({sm.valid} valid, {sm.unknown} unknown, {sm.hung} hung, {sm.errored} errored, "
        f"{sm.environment} environment faults ({sm.retried} repeats), {sm.app_error} app errors); "
        f"kills confirmed {sm.kills_confirmed}/{sm.kills_confirmed + sm.kills_unconfirmed}"
        + (f"; recorded crash states {sm.recorded_states}" if sm.recorded_states else ""),
        highlight=False,
    )
    for c in res.cells:  # the user's code raised: say where, with the traceback (never a framework verdict)
        for e in c.app_errors[:1]:
            out.print(f"cell {c.cell_id}: {e}", highlight=False, soft_wrap=True, markup=False)
    out.print(
        f"run folder: {outcome.run_dir}  (report.html, report.md, results.json, junit.xml, journal.jsonl)",
        highlight=False,
        soft_wrap=True,
        markup=False,
    )
    if outcome.interrupted:
        console.print(
            f"[yellow]interrupted: the journal keeps every finished trial; continue with "
            f"`chaos run --resume {escape(str(outcome.run_dir))}`[/]",
            highlight=False,
            soft_wrap=True,
        )
    code = res.exit_code
    if accepted is not None:
        from chaos.accepted import accept

        res._run_dir = outcome.run_dir
        verdict = accept(res, accepted)
        for line in verdict.lines():
            out.print(f"baseline: {line}", highlight=False, soft_wrap=True, markup=False)
        out.print(
            f"baseline {baseline}: {len(verdict.accepted)} accepted, {len(verdict.new)} new, {len(verdict.stale)} stale, "
            f"{len(verdict.expired)} expired (baseline.json)",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
        code = verdict.exit_code
    raise typer.Exit(code)


def _progress(quiet: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
        transient=False,
    )


@app.command()
def nightly(
    suite: Path | None = typer.Argument(None, help="suite YAML file (a list of scenario files with overrides; omit with --resume)"),
    out_dir: Path = typer.Option(Path("reports/nightly"), "--out", help="folder that receives <date>/"),
    date: str | None = typer.Option(None, help="the night's date, YYYY-MM-DD (default: today, UTC)"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
    shard: str | None = typer.Option(
        None, "--shard", metavar="I/N", help="run only shard I of N of the suite's cells; join the shards with `chaos merge`"
    ),
    timings: Path | None = typer.Option(
        None,
        "--timings",
        metavar="PATH",
        help="a night folder (or folder of nights) whose timings.json balances the shards (default: --out)",
    ),
    shard_queue: str | None = typer.Option(
        None,
        "--shard-queue",
        metavar="DIR|DSN",
        help="with --shard I/N: pull cells from a queue shared by the night's shards (a folder, or postgresql://... across hosts) until none is left",
    ),
    resume: Path | None = typer.Option(
        None, "--resume", metavar="NIGHT_DIR", help="continue a killed night: finished runs kept, the others resumed or run"
    ),
    jobs: str | None = JOBS,
) -> None:
    """Run a suite into <out>/<date>/ and compare with the previous night (exit 4: a verdict regressed)."""
    from chaos.running.folderlock import refuse_if_live
    from chaos.running.nightly import NightlyOptions, night_start, resume_nightly, run_nightly
    from chaos.running.shard import parse_shard
    from chaos.scenario.suite import load_suite

    if (suite is None) == (resume is None):
        _fail(ChaosError("give a suite file to run, or --resume NIGHT_DIR to continue a night (not both)"))
    if resume is not None and (date is not None or shard is not None or timings is not None or shard_queue is not None):
        _fail(ChaosError("--resume continues a night with its recorded date, suite and shard; drop --date/--shard/--timings/--shard-queue"))
    if shard_queue is not None and shard is None:
        _fail(ChaosError(f"--shard-queue {shard_queue}: give --shard I/N too (which shard this is, of how many `chaos merge` joins)"))
    n_jobs = _jobs(jobs)
    try:
        shard_spec = parse_shard(shard) if shard is not None else None
        if shard_queue is not None:
            from chaos.running.cellqueue import check_folder

            check_folder(shard_queue)
        if resume is not None:  # not a night, a night still running, its suite gone: one line, before any progress bar
            refuse_if_live(resume, "resume the night")
            load_suite(night_start(resume).suite_file)
    except ChaosError as exc:
        _fail(exc)
    progress = _progress(quiet)
    task = progress.add_task("suite", total=None)
    opts = NightlyOptions(
        out=out_dir,
        date=date,
        on_scenario=lambda i, n, name: progress.update(task, description=f"scenario {i + 1}/{n} {name}"),
        on_trial=lambda rec: progress.advance(task),
        shard=shard_spec,
        timings=timings,
        queue=shard_queue,
        on_start=_reap_stale_quietly,  # like `chaos run`: what a SIGKILLed earlier run left is reaped first
        jobs=n_jobs,
    )
    try:
        with progress:
            if resume is not None:
                outcome = resume_nightly(resume, opts)
            else:
                assert suite is not None  # one of the two is given (checked above)
                outcome = run_nightly(suite, opts)
    except ChaosError as exc:
        _fail(exc)
    _print_night(outcome.summary, outcome.night_dir)
    if resume is not None:
        kept = [e.scenario for e in outcome.entries if e.kept]
        out.print(f"resumed night: {len(kept)} finished run(s) kept as they were{': ' + ', '.join(kept) if kept else ''}", highlight=False)
    raise typer.Exit(outcome.exit_code)


@app.command()
def merge(
    shard_dirs: list[Path] = typer.Argument(..., help="the shard night folders (`chaos nightly --shard I/N` wrote each)"),
    out_dir: Path = typer.Option(Path("reports/nightly"), "--out", help="folder that receives the merged <date>/"),
) -> None:
    """Join shard night folders into one night: summary.json, index.html, junit.xml and trend as an unsharded night.

    A missing or failed shard is named, and its cells are unknown (exit 3)."""
    from chaos.running.merge import merge_nights

    try:
        outcome = merge_nights(shard_dirs, out_dir)
    except ChaosError as exc:
        _fail(exc)
    for note in outcome.night.shards:
        if note.status != "ok":
            console.print(f"[yellow]shard {note.shard} {note.status}: {escape(note.reason)}[/]", highlight=False, soft_wrap=True)
    _print_night(outcome.summary, outcome.night_dir)
    raise typer.Exit(outcome.exit_code)


def _print_night(summary: dict, night_dir: Path, files: str = "index.html, summary.json, junit.xml") -> None:
    t = Table(title=f"nightly {summary['date']}: {summary['verdict_counts']}")
    for col in ("scenario", "exit", "violated", "unknown", "holds", "error"):
        t.add_column(col)
    for r in summary["runs"]:
        vc = r["verdict_counts"]
        t.add_row(r["scenario"], str(r["exit_code"]), str(vc["violated"]), str(vc["unknown"]), str(vc["holds"]), r["error"] or "")
    out.print(t)
    trend = summary["trend"]
    if summary.get("previous"):
        for g in trend["regressions"]:
            out.print(
                f"[bold red]REGRESSION[/] {g['scenario']} / {g['cell_id']}: {g['property']} {g['was']} -> {g['now']}: {g['reason']}",
                highlight=False,
            )
        if not trend["regressions"]:
            out.print(f"no verdict regressed since {summary['previous']}")
    else:
        out.print("first night in this folder: nothing to compare with")
    out.print(f"night folder: {night_dir}  ({files})")


def _rerender(path: Path, rescore: bool) -> int:
    from chaos.running.analysis import analyse_loaded, write_reports, write_results
    from chaos.running.folderlock import refuse_if_live
    from chaos.running.nightly import NIGHT, partial_night, rerender_night
    from chaos.running.runfolder import load_run

    refuse_if_live(path, "re-score it" if rescore else "render it again")  # its orchestrator writes there
    if (path / "summary.json").exists() and not (path / "run.json").exists():
        outcome = rerender_night(path, rescore=rescore)
        _print_night(outcome.summary, path)
        return outcome.exit_code
    if (path / NIGHT).exists() and not (path / "run.json").exists():  # a night whose nightly died: no summary.json yet
        outcome = partial_night(path, rescore=rescore)
        _print_night(outcome.summary, path, "index.html, junit.xml")
        console.print(
            f"[yellow]this night did not finish ({len(outcome.entries)} run folder(s), no summary.json); "
            f"continue it with `chaos nightly --resume {escape(str(path))}`[/]",
            highlight=False,
            soft_wrap=True,
        )
        return outcome.exit_code
    meta, scenario, cells, records, torn = load_run(path)
    results = analyse_loaded(meta, scenario, cells, records)
    if rescore:
        stored = path / "results.json"
        before = stored.read_text() if stored.exists() else None
        write_results(path, results, meta, records)
        if before is not None and before != stored.read_text():
            from chaos.records import RunResults

            old = {(c.cell_id, v.property): v.status for c in RunResults.model_validate_json(before).cells for v in c.verdicts}
            new = {(c.cell_id, v.property): v.status for c in results.cells for v in c.verdicts}
            diff = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
            console.print(
                f"[yellow]the current checkers changed results.json; {len(diff)} verdict(s) differ[/]"
                + "".join(f"\n  {c} {p}: {old.get((c, p))} -> {new.get((c, p))}" for c, p in diff)
            )
    else:
        write_reports(path, results, meta, records)
    if torn:
        console.print("[yellow]the journal's last line was torn (the run died mid-write); it was left out[/]")
    out.print(summary_table(results))
    for line in guard_lines(results):
        out.print(escape(line), highlight=False, soft_wrap=True)
    out.print(f"run folder: {path}  (report.html, report.md, junit.xml{', results.json' if rescore else ''})")
    return results.exit_code


@app.command()
def report(run_dir: Path = typer.Argument(..., help="a run folder, or a nightly folder")) -> None:
    """Render a stored run (or nightly) again from its journal: report.html, report.md, junit.xml, plots."""
    _rerender_and_exit(run_dir, rescore=False)


@app.command()
def analyze(run_dir: Path = typer.Argument(..., help="a run folder, or a nightly folder")) -> None:
    """Re-score stored journals with the current checkers (no racer runs); rewrites results.json and the reports."""
    _rerender_and_exit(run_dir, rescore=True)


def _rerender_and_exit(run_dir: Path, *, rescore: bool) -> None:
    """``report`` and ``analyze``: render (and re-score) a stored folder, exit with its verdicts' code."""
    try:
        code = _rerender(run_dir, rescore=rescore)
    except ChaosError as exc:
        _fail(exc)
    raise typer.Exit(code)


@app.command()
def clean(
    pg: str | None = typer.Option(
        None, "--pg", help="Postgres DSN whose schemas of dead runs to drop (default: CHAOS_PG_DSN); with it, --keep-work schemas too"
    ),
    kept: bool = typer.Option(
        False, "--kept", help="also drop what --keep-work runs kept: Postgres schemas (on --pg or CHAOS_PG_DSN), framework stores"
    ),
) -> None:
    """Reap what dead runs left behind: racers, containers, work folders, Postgres schemas, framework stores (ADK's
    MariaDB databases); runs still alive are untouched."""
    import os

    from chaos.running.registry import describe_kept, kept_runs, reap_kept, reap_stale

    reaped = reap_stale(pg)
    if pg or kept:  # what --keep-work kept: dropped only when asked for (--kept, or a server given by --pg)
        reaped += reap_kept(pg or os.environ.get("CHAOS_PG_DSN"))
    for r in reaped:
        out.print(r.describe(), highlight=False, soft_wrap=True, markup=False)
    out.print(f"cleaned {len(reaped)} dead run(s)" if reaped else "nothing to clean: no dead run left anything behind", highlight=False)
    for k in [] if (pg or kept) else kept_runs():
        out.print(describe_kept(k), highlight=False, soft_wrap=True, markup=False)


@app.command()
def selftest(
    scenario: Path | None = typer.Argument(None, help="self-test scenario (default: the shipped scenarios/selftest.yaml)"),
    out_dir: Path = typer.Option(Path("reports"), "--out", help="folder that receives the self-test's run folder"),
    trials: int | None = typer.Option(None, help="repeats per kill point"),
) -> None:
    """Check the injector itself: an idempotent workload must come out clean, a known duplicate must be caught."""
    from chaos.running.selftest import run_selftest

    _check_overrides(None, trials)
    _reap_stale_quietly()
    try:
        report = run_selftest(scenario, out=out_dir, trials=trials)
    except ChaosError as exc:
        _fail(exc)
    for line in report.lines:
        out.print(line, highlight=False, soft_wrap=True, markup=False)
    out.print(f"run folder: {report.run_dir}", highlight=False, soft_wrap=True, markup=False)
    if not report.ok:
        console.print("[bold red]selftest FAILED: chaos cannot be trusted on this machine as it is[/]")
        raise typer.Exit(3)
    out.print("selftest passed: no false duplicate, and every known duplicate caught")


@app.command()
def rerun(
    run_dir: Path = typer.Argument(..., help="a stored run folder (reports/<scenario>/<timestamp>)"),
    trial_ids: list[str] = typer.Argument(..., help="trial ids named in its evidence, e.g. c000-t0001 c009-p000-r001"),
    out_dir: Path | None = typer.Option(
        None, "--out", help="folder that receives <scenario>/<timestamp>-rerun (default: the stored run's own, beside it)"
    ),
    keep_work: bool = typer.Option(False, "--keep-work", help="keep per-trial work folders"),
) -> None:
    """Re-run trials of a stored run alone (same seed, cell and kill point) and compare the verdicts."""
    if out_dir is None:
        out_dir = run_dir.resolve().parent.parent
    from chaos.running.options import RunOptions
    from chaos.running.resume import rerun as do_rerun

    try:
        outcome, comparison = do_rerun(run_dir, trial_ids, RunOptions(out=out_dir, keep_work=keep_work))
    except ChaosError as exc:
        _fail(exc)
    out.print(summary_table(outcome.results))
    t = Table(title="the re-run trials' verdicts (a sweep's at its kill point), then and now")
    for col in ("cell", "property", "kill point", "trials", "was", "now"):
        t.add_column(col)
    for row in comparison:
        same = row["was"] == row["now"]
        t.add_row(
            row["cell"],
            row["property"],
            row.get("point") or "-",
            ", ".join(row["trial_ids"]),
            row["was"],
            f"[{'green' if same else 'bold red'}]{row['now']}[/]",
        )
    out.print(t)
    out.print(f"run folder: {outcome.run_dir}")
    raise typer.Exit(outcome.results.exit_code)


@app.command()
def repro(
    run_dir: Path = typer.Argument(..., help="a stored run folder (reports/<scenario>/<timestamp>)"),
    trial_id: str = typer.Argument(..., help="a trial named in a violated EO (kill sweep) or FD (fork) verdict's evidence"),
    out_dir: Path | None = typer.Option(None, "--out", help="folder for repro_<trial>.py and .md (default: the run folder)"),
) -> None:
    """Write a standalone script (LangGraph and its saver only, no chaos) that reproduces a trial's violation."""
    from chaos.repro import write_repro

    try:
        made = write_repro(run_dir, trial_id, out_dir)
    except ChaosError as exc:
        _fail(exc)
    out.print(f"{made.property}: {made.summary}", highlight=False, soft_wrap=True, markup=False)
    out.print(
        f"script: {made.script}  (python {made.script.name}: exit 1 and REPRODUCED when it shows the bug)",
        highlight=False,
        soft_wrap=True,
        markup=False,
    )
    out.print(f"report: {made.markdown}", highlight=False, soft_wrap=True, markup=False)


@app.command()
def validate(scenario: Path = typer.Argument(..., help="scenario YAML file")) -> None:
    """Check a scenario file and show the cells it expands into."""
    from chaos.scenario.model import expand, load_scenario
    from chaos.scenario.suite import is_suite_file, load_suite

    if is_suite_file(scenario):
        try:
            su = load_suite(scenario)
        except ChaosError as exc:
            _fail(exc)
        out.print(f"{scenario}: ok: suite {su.suite.name}, {len(su.items)} scenario(s)")
        for it in su.items:
            n = len(expand(it.scenario, check=False))
            out.print(f"  {it.scenario.name} ({it.file.name}): {it.scenario.kind}, {n} cell(s), {it.scenario.trials} trial(s) each")
        return
    from chaos.running.pgstore import RunStorage

    try:
        s = load_scenario(scenario)
        cells = expand(s, path=str(scenario))
        RunStorage.preflight(cells, connect=True)  # what `validate` accepts must run: the database too
    except ChaosError as exc:
        _fail(exc)
    out.print(
        f"{scenario}: ok: {s.kind} on {s.target.framework}/{s.target.backend}, {len(cells)} cell(s), {s.trials} trial(s) each",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    from chaos.targets import get_target

    for c in cells:
        why = get_target(c.scenario.target.framework).supports(c.scenario.kind)
        note = f"  (kind {c.scenario.kind} unsupported: {why}; its verdicts will be unknown)" if why else ""
        out.print(f"  cell {c.index}: {c.id}{note}", markup=False, highlight=False)


@app.command("list")
def list_cmd(scenarios_dir: Path = typer.Option(Path("scenarios"), "--scenarios", help="folder of shipped scenarios")) -> None:
    """Show the targets, their workloads and the shipped scenarios."""
    from chaos.scenario.model import load_scenario
    from chaos.targets import TARGETS

    t = Table(title="targets")
    for col in ("framework", "backends", "kinds", "workloads", "boundaries"):
        t.add_column(col)
    for info in TARGETS.values():
        t.add_row(
            info.framework,
            ", ".join(info.backends),
            ", ".join(info.kinds),
            "\n".join(f"{k}: {v}" for k, v in info.workloads.items()),
            info.boundaries,
        )
    out.print(t)
    s = Table(title=f"scenarios in {escape(str(scenarios_dir))}")
    for col in ("file", "kind", "target", "about"):
        s.add_column(col)
    from chaos.scenario.suite import is_suite_file, load_suite

    for f in sorted(scenarios_dir.glob("*.yaml")):
        if is_suite_file(f):
            try:
                su = load_suite(f)
                s.add_row(escape(f.name), "suite", f"{len(su.items)} scenarios", escape(su.suite.about))
            except ChaosError as exc:
                s.add_row(escape(f.name), "[red]invalid suite[/]", "", escape(str(exc)))
            continue
        try:
            sc = load_scenario(f)
            # escaped: an about is the user's text, not console markup ("[/]" crashed rich)
            s.add_row(escape(f.name), sc.kind, escape(f"{sc.target.framework}/{sc.target.backend}"), escape(sc.about))
        except ChaosError as exc:
            s.add_row(escape(f.name), "[red]invalid[/]", "", escape(str(exc)))
    out.print(s)


@app.command()
def schema() -> None:
    """Print the JSON Schema of scenario files."""
    from chaos.scenario.model import json_schema

    print(json.dumps(json_schema(), indent=2))


from chaos.cli.hosts import hosts_app  # noqa: E402  (the `hosts` sub-command group)

app.add_typer(hosts_app, name="hosts")


def main() -> None:
    try:
        app()
    except ChaosError as exc:  # anything not caught per command (ChaosGroup catches the rest)
        report_failure(exc, console)
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
