"""What a run concluded, and the files that say so: results.json, report.md, junit.xml, report.html.

Why: a run, a resumed run, a rerun, ``chaos analyze``, a nightly and a merge of shards must all
score the same journal the same way and render it the same way. Here is the one place that turns
journaled trial records into verdicts (through the kinds' checkers, ``chaos.kinds.checking``) and
writes what people and CI read; the run path (``chaos.running.execution``) only calls it.

What it promises:

* ``analyse_run`` scores cells from their records; a stored run (``StoredTrials``) is read back
  one cell at a time, so memory follows the largest cell's results, not the run's trials. A cell
  that failed (``failures``) never has a verdict ``holds``: it is ``unknown`` with the reason.
* ``analyse_loaded`` / ``analyse_stored`` re-score a stored run exactly as the run did (exit 3
  when it was interrupted or failed).
* ``write_results`` writes results.json first (the evidence), then every rendering
  (``write_reports``); every file passes through ``chaos.racer.redact`` first.
* ``versions`` and ``meta_cells`` are what run.json records of the releases and the cells run.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import chaos
from chaos.kinds.checking import analyze_cell, count_trial, exit_code, verdict_counts
from chaos.racer.redact import redact, redact_obj
from chaos.records import CellResult, RunCell, RunMeta, RunResults, TrialRecord, TrialSummary
from chaos.running.runfolder import load_run, write_atomic
from chaos.running.stored import StoredTrials
from chaos.scenario.model import Cell, Scenario
from chaos.targets import get_target

EXIT_RUN_FAILED = 3  # the run was interrupted or stopped on a fault: its verdicts are not the whole story


def versions(scenario: Scenario) -> dict[str, str | None]:
    """The Python, chaos and framework releases installed here (run.json's ``versions``)."""
    out: dict[str, str | None] = {"python": platform.python_version(), "chaos": chaos.__version__}
    for dist in get_target(scenario.target.framework).distributions:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def meta_cells(cells: list[Cell]) -> list[RunCell]:
    """The cells a run executes, as run.json lists them."""
    return [RunCell(index=c.index, id=c.id, axes=c.axes) for c in cells]


def cell_records(records: StoredTrials | Iterable[TrialRecord], index: int) -> Iterable[TrialRecord]:
    """One cell's records sorted by trial id (a resumed run analyses as an uninterrupted one):
    read from the journal one at a time for a stored run, picked from a list otherwise."""
    if isinstance(records, StoredTrials):
        return records.of_cell(index)
    return sorted((r for r in records if r.cell_index == index), key=lambda r: r.trial_id)


def analyse_run(
    cells: list[Cell],
    records: StoredTrials | Iterable[TrialRecord],
    failures: dict[int, str],
    *,
    run_id: str,
    scenario: Scenario,
    seed: int,
) -> RunResults:
    """Per-cell results and verdicts. For a stored run (``StoredTrials``) one cell's records are
    read back at a time, so memory follows the largest cell's results, not the run's trials."""
    if not isinstance(records, StoredTrials):
        records = list(records)
    summary = TrialSummary()
    results: list[CellResult] = []
    for c in cells:
        res = analyze_cell(c, _counted(cell_records(records, c.index), summary))
        if c.index in failures:
            res.failure = failures[c.index]
            for v in res.verdicts:
                if v.status == "holds":
                    v.status = "unknown"
                    v.reason = f"cell failed: {failures[c.index]}"
        results.append(res)
    return RunResults(
        run_id=run_id,
        scenario=scenario.name,
        seed=seed,
        exit_code=exit_code(results),
        verdict_counts=verdict_counts(results),
        cells=results,
        summary=summary,
    )


def _counted(records: Iterable[TrialRecord], summary: TrialSummary) -> Iterator[TrialRecord]:
    """``records``, each also counted into the run's trial summary as it passes."""
    for r in records:
        count_trial(summary, r)
        yield r


def analyse_stored(run_dir: Path) -> RunResults:
    """What the stored run in ``run_dir`` concluded, re-scored from its journal."""
    return analyse_loaded(*load_run(run_dir)[:4])


def analyse_loaded(meta: RunMeta, scenario: Scenario, cells: list[Cell], records: StoredTrials | Iterable[TrialRecord]) -> RunResults:
    """What the run concluded, recomputed from its stored records (same rules as ``execute``)."""
    failures = {int(k): v for k, v in meta.failures.items()}
    results = analyse_run(cells, records, failures, run_id=meta.run_id, scenario=scenario, seed=scenario.seed)
    if meta.interrupted or meta.failed:
        results.exit_code = EXIT_RUN_FAILED
    return results


def masked(results: RunResults) -> RunResults:
    """``results`` with secrets redacted (numbers kept): what results.json holds."""
    return RunResults.model_validate(redact_obj(results.model_dump(mode="json"), keep_numbers=True))


def _meta_json(run_meta: RunMeta | dict[str, Any]) -> dict[str, Any]:
    """What the reports read of run.json: its JSON object, secrets redacted."""
    return redact_obj(run_meta.to_json() if isinstance(run_meta, RunMeta) else run_meta)


def write_results(
    run_dir: Path, results: RunResults, run_meta: RunMeta | dict[str, Any], records: StoredTrials | Iterable[TrialRecord] | None = None
) -> None:
    """results.json first (the evidence), then what people and CI read: report.md, junit.xml and
    report.html with its plots, all rendered from the same results and the journaled records.
    Secrets are redacted from all of them (``chaos.racer.redact``)."""
    clean = masked(results)
    write_atomic(run_dir / "results.json", clean.model_dump_json(indent=2))
    write_reports(run_dir, clean, run_meta, records)


def write_reports(
    run_dir: Path, results: RunResults, run_meta: RunMeta | dict[str, Any], records: StoredTrials | Iterable[TrialRecord] | None = None
) -> None:
    """Every rendering of a run (markdown, JUnit, HTML, PNG) from its results and journal, redacted.
    A stored run's records are read back one at a time (the journal was redacted as it was written)."""
    from chaos.reports.html import gather, write_run_html
    from chaos.reports.junit import write_junit
    from chaos.reports.markdown import render_markdown

    results = masked(results)
    meta = _meta_json(run_meta)
    if records is None:
        records = StoredTrials(run_dir / "journal.jsonl")
    elif not isinstance(records, StoredTrials):
        records = [TrialRecord.model_validate(redact_obj(r.model_dump(mode="json"), keep_numbers=True)) for r in records]
    shown = gather(records)  # one pass over the journal: the duplicates' explanations feed both reports
    write_atomic(run_dir / "report.md", redact(render_markdown(results, meta, shown.duplicates)))
    write_junit(run_dir / "junit.xml", [results])
    write_run_html(run_dir, results, meta, records, shown=shown)
