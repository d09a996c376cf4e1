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
    console.print(f"[bold red]chaos: error:[/] {exc}", highlight=False, soft_wrap=True)
    raise typer.Exit(exc.exit_code)


def summary_table(results) -> Table:
    t = Table(title=f"{results.scenario}: {results.verdict_counts}", show_lines=False)
    for col in ("cell", "kind", "valid/trials", "saturation", "fires", "verdicts"):
        t.add_column(col)
    for c in results.cells:
        sat = "-" if c.saturation is None else f"{c.saturation:.3f}"
        fires = ", ".join(f"{k}:{n}" for k, n in c.fires.items()) or (f"{len(c.points)} kill points" if c.points else "-")
        verdicts = " ".join(f"[{STATUS_STYLE[v.status]}]{v.property}:{v.status}[/]" for v in c.verdicts)
        t.add_row(c.cell_id, c.kind, f"{c.valid_trials}/{c.trials}", sat, fires, verdicts)
    return t


@app.command()
def run(
    scenario: Path = typer.Argument(..., help="scenario YAML file"),
    out_dir: Path = typer.Option(Path("reports"), "--out", help="folder that receives <scenario>/<timestamp>/"),
    seed: Optional[int] = typer.Option(None, help="override the scenario's root seed"),
    trials: Optional[int] = typer.Option(None, help="override trials per cell (per kill point for sweeps)"),
    keep_work: bool = typer.Option(False, "--keep-work", help="keep per-trial work folders (checkpoint DBs, racer logs)"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
    only: Optional[list[str]] = typer.Option(None, "--only", help="run just this trial id (repeatable), e.g. c000-t0001"),
) -> None:
    """Run a scenario: every cell, every trial; write the run folder and print the summary."""
    from chaos.orchestrator import RunOptions, run_scenario

    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console, disable=quiet, transient=False)
    task = progress.add_task("cells", total=None)

    def on_cell(cell, n):
        progress.update(task, description=f"cell {cell.index + 1}/{n} {cell.id}")

    def on_trial(rec):
        progress.advance(task)

    try:
        with progress:
            outcome = run_scenario(scenario, RunOptions(out=out_dir, seed=seed, trials=trials, keep_work=keep_work,
                                                        on_trial=on_trial, on_cell_start=on_cell,
                                                        only=set(only) if only else None))
    except ChaosError as exc:
        _fail(exc)
    res = outcome.results
    out.print(summary_table(res))
    out.print(f"run folder: {outcome.run_dir}  (report.md, results.json, journal.jsonl)")
    if outcome.interrupted:
        console.print("[yellow]interrupted: the journal keeps every finished trial[/]")
    raise typer.Exit(res.exit_code)


@app.command()
def rerun(
    run_dir: Path = typer.Argument(..., help="a stored run folder (reports/<scenario>/<timestamp>)"),
    trial_ids: list[str] = typer.Argument(..., help="trial ids named in its evidence, e.g. c000-t0001 c009-p000-r001"),
    out_dir: Path = typer.Option(Path("reports"), "--out", help="folder that receives the re-run's folder"),
    keep_work: bool = typer.Option(False, "--keep-work", help="keep per-trial work folders"),
) -> None:
    """Re-run trials of a stored run alone (same seed, cell and kill point) and compare the verdicts."""
    from chaos.orchestrator import RunOptions
    from chaos.orchestrator import rerun as do_rerun

    try:
        outcome, comparison = do_rerun(run_dir, trial_ids, RunOptions(out=out_dir, keep_work=keep_work))
    except ChaosError as exc:
        _fail(exc)
    out.print(summary_table(outcome.results))
    t = Table(title="verdicts whose evidence names the re-run trials")
    for col in ("cell", "property", "trials", "was", "now"):
        t.add_column(col)
    for row in comparison:
        same = row["was"] == row["now"]
        t.add_row(row["cell"], row["property"], ", ".join(row["trial_ids"]), row["was"],
                  f"[{'green' if same else 'bold red'}]{row['now']}[/]")
    out.print(t)
    out.print(f"run folder: {outcome.run_dir}")
    raise typer.Exit(outcome.results.exit_code)


@app.command()
def validate(scenario: Path = typer.Argument(..., help="scenario YAML file")) -> None:
    """Check a scenario file and show the cells it expands into."""
    from chaos.scenario import expand, load_scenario

    try:
        s = load_scenario(scenario)
        cells = expand(s, path=str(scenario))
    except ChaosError as exc:
        _fail(exc)
    out.print(f"{scenario}: ok: {s.kind} on {s.target.framework}/{s.target.backend}, {len(cells)} cell(s), {s.trials} trial(s) each")
    from chaos.targets import get_target

    for c in cells:
        why = get_target(c.scenario.target.framework).supports(c.scenario.kind)
        note = f"  (kind {c.scenario.kind} unsupported: {why}; its verdicts will be unknown)" if why else ""
        out.print(f"  cell {c.index}: {c.id}{note}")


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
            s.add_row(f.name, "[red]invalid[/]", "", str(exc))
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
        console.print(f"[bold red]chaos: error:[/] {exc}", highlight=False)
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
