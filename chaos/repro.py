"""``chaos repro RUN_DIR TRIAL_ID``: a violation as a standalone script an upstream maintainer can run.

Why: a violation found by chaos cannot be filed upstream if reproducing it needs chaos. This
module turns one violating trial of a stored run into ``repro_<trial>.py``, which needs only the
framework and its saver, plus ``repro_<trial>.md`` (versions, what it shows, how to run it), in
the style of a minimal bug report.

What it promises:

* The script is the framework's to write (``chaos.targets.hooks.WritesRepro``, e.g. LangGraph's
  ``chaos.targets.langgraph.repro``: an EO duplicate of a kill sweep, the FD replay of a fork);
  this module finds the trial and its violated verdict, hands them over and writes the files. A
  framework whose package writes none is one line saying so.
* The script exits 1 and prints ``REPRODUCED`` when it sees the violation, 0 when it does not.
* A trial that violated nothing, a trial id the run does not have, or a workload, backend or kind
  the writer cannot express is a ``ChaosError`` naming the trial (exit 3); nothing is written then.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chaos.racer.errors import ChaosError
from chaos.scenario.model import Cell
from chaos.targets import WritesRepro, hooks_of

__all__ = ["ReproError", "write_repro"]


class ReproError(ChaosError):
    """A repro that cannot be written: names the run folder and trial."""


@dataclass
class Repro:
    script: Path
    markdown: Path
    property: str
    summary: str


def _trial(run_dir: Path, trial_id: str) -> tuple[Cell, dict[str, Any]]:
    """The trial's cell (from run.json's scenario, expanded) and its journal record.

    The trial id must be one the run's scenario expands to (``load_run`` checks every journaled
    id against it) and of a shape chaos makes, so the file names it makes stay in the folder."""
    from chaos.running.runfolder import TRIAL_ID, load_run

    if not TRIAL_ID.match(trial_id):
        raise ReproError(
            f"{run_dir}: {trial_id!r} is not a trial id (c000-t0001, c000-p003-r000)", hint="take one from a verdict's evidence"
        )
    if not (run_dir / "journal.jsonl").is_file():
        raise ReproError(f"{run_dir}: not a run folder (no journal.jsonl)", hint="name a folder `chaos run` wrote")
    stored = load_run(run_dir)
    if trial_id not in stored.records:
        raise ReproError(f"{run_dir}: no trial {trial_id!r} in its journal", hint="take a trial id from a verdict's evidence")
    cell = next((c for c in stored.cells if c.index == stored.records.cell_of(trial_id)), None)
    if cell is None:
        raise ReproError(f"{run_dir}: trial {trial_id!r} is of no cell the run's scenario expands to")
    return cell, stored.records.raw(trial_id)


def _violation(run_dir: Path, trial_id: str, cell: Cell, shows: tuple[str, ...]) -> tuple[str, str]:
    """The property and reason of the violated verdict of ``cell`` (results.json) whose evidence
    names the trial, among the properties the framework's writer ``shows``."""
    from chaos.records import RunResults

    try:
        results = RunResults.model_validate_json((run_dir / "results.json").read_bytes())
    except (OSError, ValueError) as exc:
        raise ReproError(f"{run_dir / 'results.json'}: not a results file chaos wrote ({str(exc).splitlines()[0][:120]})") from None
    for c in results.cells:
        if c.cell_index != cell.index:
            continue
        for v in c.verdicts:
            if v.status == "violated" and trial_id in v.evidence.trial_ids and v.property in shows:
                return v.property, v.reason
    what = ", ".join(shows) or "none on this framework"
    raise ReproError(
        f"{run_dir}: trial {trial_id} violated nothing a repro can show ({what})",
        hint=f"take a trial id from the evidence of a violated verdict of {what}",
    )


_VERSION = re.compile(r"^[0-9][0-9A-Za-z.+!-]{0,40}$")  # a release number; anything else is dropped, never pasted


def _versions(run_dir: Path) -> dict[str, str]:
    """The recorded versions that look like release numbers (a crafted run.json's others are left out)."""
    from chaos.running.runfolder import read_meta

    versions = read_meta(run_dir).versions or {}
    return {k: v for k, v in versions.items() if isinstance(v, str) and _VERSION.match(v)}


def write_repro(run_dir: str | Path, trial_id: str, out: str | Path | None = None) -> Repro:
    """Write ``repro_<trial>.py`` and ``.md`` into ``out`` (default: the run folder), as the
    framework's package writes them (``chaos.targets.hooks.WritesRepro``).

    Everything read from the run folder is untrusted (a run folder is an artifact people download):
    the trial must be one the scenario expands to, the cell's settings come from the validated
    scenario, and the versions handed to the writer look like release numbers."""
    folder = Path(run_dir)
    if not (folder / "results.json").is_file():
        raise ReproError(f"{folder}: no results.json (not a finished run folder)", hint="name a folder `chaos run` wrote")
    cell, trial = _trial(folder, trial_id)
    framework = cell.scenario.target.framework
    hooks = hooks_of(framework)
    writer = hooks if isinstance(hooks, WritesRepro) else None
    shows = writer.repro_properties if writer is not None else ()
    violated = _violation(folder, trial_id, cell, shows)
    where = f"{folder}: trial {trial_id}"
    if writer is None:
        raise ReproError(f"{where}: chaos writes no standalone script for {framework} yet (its package has no repro writer)")
    made = writer.repro(cell, trial, violated, _versions(folder), {"trial": trial_id, "run": str(folder)})
    if isinstance(made, str):
        raise ReproError(f"{where}: {made}")
    target = Path(out) if out is not None else folder
    target.mkdir(parents=True, exist_ok=True)
    script = target / f"repro_{trial_id}.py"  # trial_id matched TRIAL_ID: letters, digits and dashes only
    script.write_text(made.script)
    md = target / f"repro_{trial_id}.md"
    md.write_text(made.markdown)
    return Repro(script=script, markdown=md, property=violated[0], summary=made.summary)
