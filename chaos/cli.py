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
    racers: Optional[str] = typer.Option(None, "--racers", help="how racers start: warm (forked from a pre-imported "
                                         "parent; default for local racers) or cold (a fresh Python each)"),
) -> None:
    """Run a scenario: every cell, every trial; write the run folder and print the summary."""
    from chaos.orchestrator import RunOptions, run_scenario

    if racers not in (None, "warm", "cold"):
        _fail(ChaosError(f"--racers {racers!r}: expected warm or cold"))

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
                                                        racers=racers, on_trial=on_trial, on_cell_start=on_cell,
                                                        only=set(only) if only else None))
    except ChaosError as exc:
        _fail(exc)
    res = outcome.results
    out.print(summary_table(res))
    out.print(f"run folder: {outcome.run_dir}  (report.html, report.md, results.json, junit.xml, journal.jsonl)")
    if outcome.interrupted:
        console.print("[yellow]interrupted: the journal keeps every finished trial[/]")
    raise typer.Exit(res.exit_code)


def _progress(quiet: bool) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, disable=quiet, transient=False)


@app.command()
def nightly(
    suite: Path = typer.Argument(..., help="suite YAML file (a list of scenario files with overrides)"),
    out_dir: Path = typer.Option(Path("reports/nightly"), "--out", help="folder that receives <date>/"),
    date: Optional[str] = typer.Option(None, help="the night's date, YYYY-MM-DD (default: today, UTC)"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
) -> None:
    """Run a suite into <out>/<date>/ and compare with the previous night (exit 4: a verdict regressed)."""
    from chaos.nightly import run_nightly, NightlyOptions

    progress = _progress(quiet)
    task = progress.add_task("suite", total=None)
    try:
        with progress:
            outcome = run_nightly(suite, NightlyOptions(
                out=out_dir, date=date,
                on_scenario=lambda i, n, name: progress.update(task, description=f"scenario {i + 1}/{n} {name}"),
                on_trial=lambda rec: progress.advance(task)))
    except ChaosError as exc:
        _fail(exc)
    _print_night(outcome.summary, outcome.night_dir)
    raise typer.Exit(outcome.exit_code)


def _print_night(summary: dict, night_dir: Path) -> None:
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
            out.print(f"[bold red]REGRESSION[/] {g['scenario']} / {g['cell_id']}: {g['property']} {g['was']} -> {g['now']}: {g['reason']}",
                      highlight=False)
        if not trend["regressions"]:
            out.print(f"no verdict regressed since {summary['previous']}")
    else:
        out.print("first night in this folder: nothing to compare with")
    out.print(f"night folder: {night_dir}  (index.html, summary.json, junit.xml)")


def _rerender(path: Path, rescore: bool) -> int:
    from chaos.nightly import rerender_night
    from chaos.orchestrator import analyse_loaded, load_run, write_reports, write_results

    if (path / "summary.json").exists() and not (path / "run.json").exists():
        outcome = rerender_night(path, rescore=rescore)
        _print_night(outcome.summary, path)
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
            console.print(f"[yellow]the current checkers changed results.json; {len(diff)} verdict(s) differ[/]" +
                          "".join(f"\n  {c} {p}: {old.get((c, p))} -> {new.get((c, p))}" for c, p in diff))
    else:
        write_reports(path, results, meta, records)
    if torn:
        console.print("[yellow]the journal's last line was torn (the run died mid-write); it was left out[/]")
    out.print(summary_table(results))
    out.print(f"run folder: {path}  (report.html, report.md, junit.xml{', results.json' if rescore else ''})")
    return results.exit_code


@app.command()
def report(run_dir: Path = typer.Argument(..., help="a run folder, or a nightly folder")) -> None:
    """Render a stored run (or nightly) again from its journal: report.html, report.md, junit.xml, plots."""
    try:
        code = _rerender(run_dir, rescore=False)
    except ChaosError as exc:
        _fail(exc)
    raise typer.Exit(code)


@app.command()
def analyze(run_dir: Path = typer.Argument(..., help="a run folder, or a nightly folder")) -> None:
    """Re-score stored journals with the current checkers (no racer runs); rewrites results.json and the reports."""
    try:
        code = _rerender(run_dir, rescore=True)
    except ChaosError as exc:
        _fail(exc)
    raise typer.Exit(code)


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
    from chaos.suite import is_suite_file, load_suite

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
    from chaos.suite import is_suite_file, load_suite

    for f in sorted(scenarios_dir.glob("*.yaml")):
        if is_suite_file(f):
            try:
                su = load_suite(f)
                s.add_row(f.name, "suite", f"{len(su.items)} scenarios", su.suite.about)
            except ChaosError as exc:
                s.add_row(f.name, "[red]invalid suite[/]", "", str(exc))
            continue
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


from chaos.cli_hosts import hosts_app  # noqa: E402  (the `hosts` sub-command group)

app.add_typer(hosts_app, name="hosts")


def main() -> None:
    try:
        app()
    except ChaosError as exc:  # anything not caught per command
        console.print(f"[bold red]chaos: error:[/] {exc}", highlight=False)
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
