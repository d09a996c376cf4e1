"""The ``chaos`` command line.

Exit codes: 0 every verdict holds, 1 a violation was found, 2 some verdict is unknown (and none is
violated), 3 the run itself failed (bad scenario, environment, interrupted). Errors the user can
act on are one line on stderr, never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from chaos.errors import ChaosError

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Crash-injection and race harness: does resume really mean resume?")
def _console(stderr: bool = False) -> Console:
    # piped output (CI logs, files) gets a wide console instead of rich's default of 80 columns
    stream = sys.stderr if stderr else sys.stdout
    wide = None if stream.isatty() or os.environ.get("COLUMNS") else 160
    return Console(stderr=stderr, width=wide, soft_wrap=True)


console = _console(stderr=True)
out = _console()

STATUS_STYLE = {"holds": "green", "violated": "bold red", "unknown": "yellow"}


def _fail(exc: ChaosError) -> None:
    # escape: a message quoting user input ("[cell k=2]", a YAML list) must not be read as markup
    console.print(f"[bold red]chaos: error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
    raise typer.Exit(exc.exit_code)


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


def _reap_stale_quietly() -> None:
    """Every command that starts racers first reaps what a SIGKILLed earlier run left behind."""
    from chaos.registry import reap_stale

    try:
        for r in reap_stale():
            console.print(f"[yellow]chaos: cleaned up after a dead run:[/] {escape(r.describe())}", highlight=False, soft_wrap=True)
    except OSError as exc:  # the registry folder is unusable: say so, do not block the run
        console.print(f"[yellow]chaos: could not check for dead runs: {escape(str(exc))}[/]", highlight=False)


@app.command()
def run(
    scenario: Optional[Path] = typer.Argument(None, help="scenario YAML file (omit with --resume)"),
    out_dir: Path = typer.Option(Path("reports"), "--out", help="folder that receives <scenario>/<timestamp>/"),
    seed: Optional[int] = typer.Option(None, help="override the scenario's root seed"),
    trials: Optional[int] = typer.Option(None, help="override trials per cell (per kill point for sweeps)"),
    keep_work: bool = typer.Option(False, "--keep-work", help="keep per-trial work folders (checkpoint DBs, racer logs)"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
    resume: Optional[Path] = typer.Option(None, "--resume", metavar="RUN_DIR",
                                          help="continue an interrupted run from its journal (only unfinished trials run)"),
) -> None:
    """Run a scenario: every cell, every trial; write the run folder and print the summary."""
    from chaos.orchestrator import RunOptions, run_scenario

    if (scenario is None) == (resume is None):
        _fail(ChaosError("give a scenario file to run, or --resume RUN_DIR to continue a run (not both)"))
    if resume is not None and (seed is not None or trials is not None):
        _fail(ChaosError("--resume continues a run with its recorded seed and trials; drop --seed/--trials"))
    _reap_stale_quietly()
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console, disable=quiet, transient=False)
    task = progress.add_task("cells", total=None)

    def on_cell(cell, n):
        progress.start()  # only once trials begin: input refused earlier leaves just its one error line
        progress.update(task, description=f"cell {cell.index + 1}/{n} {escape(cell.id)}")

    def on_trial(rec):
        progress.advance(task)

    opts = RunOptions(out=out_dir, seed=seed, trials=trials, keep_work=keep_work, on_trial=on_trial, on_cell_start=on_cell)
    try:
        if resume is not None:
            from chaos.resume import resume_run

            outcome = resume_run(resume, opts)
        else:
            outcome = run_scenario(scenario, opts)
    except ChaosError as exc:
        progress.stop()
        _fail(exc)
    finally:
        progress.stop()
    res = outcome.results
    out.print(summary_table(res))
    sm = res.summary
    out.print(f"trials: {sm.trials} ({sm.valid} valid, {sm.unknown} unknown, {sm.hung} hung, {sm.errored} errored); "
              f"kills confirmed {sm.kills_confirmed}/{sm.kills_confirmed + sm.kills_unconfirmed}", highlight=False)
    out.print(f"run folder: {outcome.run_dir}  (report.md, results.json, journal.jsonl)", highlight=False, soft_wrap=True, markup=False)
    if outcome.interrupted:
        console.print(f"[yellow]interrupted: the journal keeps every finished trial; continue with "
                      f"`chaos run --resume {escape(str(outcome.run_dir))}`[/]", highlight=False, soft_wrap=True)
    raise typer.Exit(res.exit_code)


@app.command()
def clean() -> None:
    """Reap what dead runs left behind: racers, containers, work folders (runs still alive are untouched)."""
    from chaos.registry import reap_stale

    reaped = reap_stale()
    for r in reaped:
        out.print(r.describe(), highlight=False, soft_wrap=True, markup=False)
    out.print(f"cleaned {len(reaped)} dead run(s)" if reaped else "nothing to clean: no dead run left anything behind",
              highlight=False)


@app.command()
def selftest(
    scenario: Optional[Path] = typer.Argument(None, help="self-test scenario (default: the shipped scenarios/selftest.yaml)"),
    out_dir: Path = typer.Option(Path("reports"), "--out", help="folder that receives the self-test's run folder"),
    trials: Optional[int] = typer.Option(None, help="repeats per kill point"),
) -> None:
    """Check the injector itself: an idempotent workload must come out clean, a known duplicate must be caught."""
    from chaos.selftest import run_selftest

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
def validate(scenario: Path = typer.Argument(..., help="scenario YAML file")) -> None:
    """Check a scenario file and show the cells it expands into."""
    from chaos.scenario import expand, load_scenario

    try:
        s = load_scenario(scenario)
        cells = expand(s, path=str(scenario))
    except ChaosError as exc:
        _fail(exc)
    out.print(f"{scenario}: ok: {s.kind} on {s.target.framework}/{s.target.backend}, {len(cells)} cell(s), {s.trials} trial(s) each",
              markup=False, highlight=False, soft_wrap=True)
    for c in cells:
        out.print(f"  cell {c.index}: {c.id}", markup=False, highlight=False)


@app.command("list")
def list_cmd(scenarios_dir: Path = typer.Option(Path("scenarios"), "--scenarios", help="folder of shipped scenarios")) -> None:
    """Show the targets, their workloads and the shipped scenarios."""
    from chaos.scenario import load_scenario
    from chaos.targets import TARGETS

    t = Table(title="targets")
    for col in ("framework", "backends", "kinds", "workloads", "boundaries"):
        t.add_column(col)
    for info in TARGETS.values():
        t.add_row(info.framework, ", ".join(info.backends), ", ".join(info.kinds),
                  "\n".join(f"{k}: {v}" for k, v in info.workloads.items()), info.boundaries)
    out.print(t)
    s = Table(title=f"scenarios in {scenarios_dir}")
    for col in ("file", "kind", "target", "about"):
        s.add_column(col)
    for f in sorted(scenarios_dir.glob("*.yaml")):
        try:
            sc = load_scenario(f)
            s.add_row(f.name, sc.kind, f"{sc.target.framework}/{sc.target.backend}", sc.about)
        except ChaosError as exc:
            s.add_row(f.name, "[red]invalid[/]", "", escape(str(exc)))
    out.print(s)


@app.command()
def schema() -> None:
    """Print the JSON Schema of scenario files."""
    from chaos.scenario import json_schema

    print(json.dumps(json_schema(), indent=2))


def main() -> None:
    try:
        app()
    except ChaosError as exc:  # anything not caught per command
        console.print(f"[bold red]chaos: error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
