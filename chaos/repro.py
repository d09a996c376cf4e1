"""``chaos repro RUN_DIR TRIAL_ID``: a violation as a standalone script an upstream maintainer can run.

Why: a violation found by chaos cannot be filed upstream if reproducing it needs chaos. This
module turns one violating trial of a stored run into ``repro_<trial>.py``, which needs only the
framework and its saver, plus ``repro_<trial>.md`` (versions, what it shows, how to run it), in
the style of a minimal bug report.

What it promises:

* The script is the framework's to write (``chaos.targets.hooks.WritesRepro``, e.g. LangGraph's
  package's ``repro``: an EO duplicate of a kill sweep, the FD replay of a fork);
  this module finds the trial and its violated verdict, hands them over and writes the files. A
  framework whose package writes none is one line saying so.
* The script exits 1 and prints ``REPRODUCED`` when it sees the violation, 0 when it does not.
* A trial that violated nothing, a trial id the run does not have, or a workload, backend or kind
  the writer cannot express is a ``ChaosError`` naming the trial (exit 3); nothing is written then.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chaos.racer.errors import ChaosError
from chaos.scenario.model import Cell
from chaos.targets import WritesRepro, hooks_of
from chaos.targets.hooks import ReproScript

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


@dataclass(frozen=True)
class ReproFacts:
    """What a framework's racer-free script writer is told of a violating trial (``ScriptWriter``)."""

    trial_id: str
    property: str
    workload: str
    backend: str
    resume: str  # the scenario's resume form: ``none``, ``command:<value>``, ...
    point: str | None  # the kill point, as the sweep names it (``effect(task=b):after#1``)
    versions: dict[str, str]  # what the cell's racers ran: python and the framework's distributions
    kind: str  # the cell's kind: a sweep's, or one the writer declares (``ScriptWriter.kinds``)
    k: int = 1  # a race's racers


@dataclass(frozen=True)
class ScriptWriter:
    """``WritesRepro`` for a framework whose script writer is a plain module: ``script(ReproFacts) ->
    (summary, text)``, raising ``ValueError`` for what it cannot write. It writes kill sweeps' trials
    (the script kills a child process at the trial's point and resumes it); the bug report beside the
    script is this class's, the same for every such framework."""

    module: str
    repro_properties: tuple[str, ...]
    extra_pins: tuple[str, ...] = ()  # what the script imports beyond the framework's distributions (a driver)
    kinds: tuple[str, ...] = ()  # kinds beyond the sweeps whose trials its module writes (``race``: k processes, no kill)

    def repro(
        self, cell: Cell, trial: Mapping[str, Any], violated: tuple[str, str], versions: Mapping[str, str], found_in: Mapping[str, str]
    ) -> ReproScript | str:
        import importlib

        from chaos.kinds import get_kind
        from chaos.running.runfolder import read_meta
        from chaos.targets import get_target

        sc = cell.scenario
        resume = str(sc.resume)
        if resume.startswith("app:"):
            return "a team's recovery (resume: app:...) cannot be written without chaos"
        if get_kind(sc.kind).section != "sweep" and sc.kind not in self.kinds:
            also = "".join(f", {k}" for k in self.kinds)
            return f"a {sc.kind} trial cannot be written as a standalone script yet (kill sweeps{also} only)"
        # what the cell's racers ran (the framework lives in their environment, not the orchestrator's)
        meta = read_meta(Path(found_in["run"]))
        ran = meta.cell_versions.get(str(trial.get("cell_id"))) if meta.cell_versions else None
        recorded = {**versions, **(dict(ran.ran) if ran is not None and ran.ran else {})}
        keep = ("python", *get_target(sc.target.framework).distributions)
        kept = {k: v for k in keep if isinstance(v := recorded.get(k), str) and _VERSION.match(v)}
        point = trial.get("point")
        facts = ReproFacts(
            trial_id=found_in["trial"],
            property=violated[0],
            workload=sc.workload,
            backend=sc.target.backend,
            resume=resume,
            point=point if isinstance(point, str) else None,
            versions=kept,
            kind=sc.kind,
            k=sc.racers.k,
        )
        try:
            summary, text = importlib.import_module(self.module).script(facts)
        except ValueError as exc:
            return str(exc)
        pins = " ".join([*(f"{k}=={v}" for k, v in kept.items() if k != "python"), *self.extra_pins]) or sc.target.framework
        markdown = (
            f"# {_md(summary)}\n\nFound by chaos in trial `{facts.trial_id}`, {_md(violated[0])}: {_md(violated[1])[:500]}\n\n"
            f"```sh\npython -m venv venv && venv/bin/pip install {pins}\nvenv/bin/python repro_{facts.trial_id}.py\n```\n\n"
            "It prints REPRODUCED and exits 1 when the violation shows, else exits 0.\n"
        )
        return ReproScript(script=text, markdown=markdown, summary=summary)


def _md(text: object) -> str:
    """A value from the run folder as inert markdown text: one line, no HTML, no link, image or code span."""
    import html

    flat = " ".join(str(text).split())
    return re.sub(r"([\\`\[\]])", r"\\\1", html.escape(flat, quote=False))
