"""Resuming an interrupted run from its journal: ``chaos run --resume RUN_DIR``.

Why: a long run killed by Ctrl-C, SIGTERM, a SIGKILL of the orchestrator or a reboot should not
start over. The journal holds every finished trial (written as it ended, fsynced within a second); a resumed run re-runs
only the trials that are not in it, with the same run id, thread ids and seeds (seeds derive from
the root seed and stable trial ids), so its results.json is the one an uninterrupted run writes,
timing fields aside (``comparable`` names what is compared).

What a resume does, in order: refuse if the run folder is executed by a live process (its folder
lock, ``chaos.running.folderlock``, whatever the state folder) or its orchestrator is alive (registry lock);
reap what the dead one left (racers, containers); drop a torn last journal line (kept in
``journal.jsonl.torn``); discard the in-flight trial's partial work: its work folder, and its
effect-ledger rows, moved to the ``effects_aborted`` table so they cannot pass for the re-run
trial's effects; record the resume in run.json; then execute the remaining trials.

``rerun`` (``chaos rerun RUN_DIR TRIAL...``) runs some trials of a stored run again, alone, into a
new folder beside it, with the seeds and kill points they had; ``compare_reruns`` sets their
verdicts now beside the stored ones (run.json's ``comparison``).
"""

from __future__ import annotations

import platform
import re
import secrets
import shutil
import socket
import sqlite3
import sys
from pathlib import Path
from typing import Any

from chaos.racer.errors import ChaosError
from chaos.racer.ledger import ensure_columns
from chaos.records import RerunOf, ResumeNote, RunMeta, RunResults
from chaos.running import registry
from chaos.running.analysis import analyse_stored, meta_cells, versions
from chaos.running.folderlock import FolderLock
from chaos.running.journal import Journal, repair
from chaos.running.options import RunOptions, RunOutcome
from chaos.running.orchestrator import execute
from chaos.running.pgstore import RunStorage
from chaos.running.runfolder import RunFolder, load_run, now_iso


def set_aside_unjournaled(ledger_path: Path, run_id: str, journaled: set[str]) -> int:
    """Move ledger rows of trials that are not in the journal to ``effects_aborted``; returns how many."""
    if not ledger_path.exists():
        return 0
    conn = sqlite3.connect(str(ledger_path), timeout=60, isolation_level=None)
    try:
        has = conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='effects'").fetchone()
        if not has:
            return 0
        conn.execute("BEGIN IMMEDIATE")
        ensure_columns(conn, "effects")  # a ledger from before the attribution columns: same shape in both tables
        ensure_columns(conn, "effects_aborted")
        conn.execute("CREATE TABLE IF NOT EXISTS effects_aborted AS SELECT * FROM effects WHERE 0")
        stale = [r[0] for r in conn.execute("SELECT DISTINCT trial_id FROM effects WHERE run_id = ?", (run_id,)) if r[0] not in journaled]
        n = 0
        for t in stale:
            conn.execute("INSERT INTO effects_aborted SELECT * FROM effects WHERE run_id = ? AND trial_id = ?", (run_id, t))
            n += conn.execute("DELETE FROM effects WHERE run_id = ? AND trial_id = ?", (run_id, t)).rowcount
        conn.execute("COMMIT")
        return n
    except sqlite3.DatabaseError as exc:
        raise ChaosError(f"{ledger_path}: the effect ledger cannot be read: {exc}") from None
    finally:
        conn.close()


_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _check_work_dir(run_dir: Path, run_id: str, work: Path) -> None:
    """run.json's ``work_dir`` is read from a folder that may have been downloaded or edited, and a
    resume removes it: only ``<run_dir>/work`` or a ``chaos-work-<run_id>`` folder (``--work-in``)."""
    if work == run_dir / "work" or (_RUN_ID.match(run_id) and work.name == f"chaos-work-{run_id}" and not work.is_symlink()):
        return
    raise ChaosError(
        f"{run_dir / 'run.json'}: work_dir {str(work)!r} is not a work folder of run {run_id!r}",
        hint="run.json was edited; a run's work folder is <run folder>/work or <--work-in>/chaos-work-<run id>",
    )


def resume_run(run_dir: str | Path, opts: RunOptions | None = None) -> RunOutcome:
    """Continue the run in ``run_dir``; returns the orchestrator's RunOutcome."""
    opts = opts or RunOptions()
    run_dir = Path(run_dir)
    if not (run_dir / "run.json").is_file():
        load_run(run_dir)  # the one line that says what is wrong with it (no lock file left in a stray folder)
    # the folder's own lock, whatever the state folder, user or shell: held from this check until
    # the remaining trials ran, so no second process reaps or runs this folder meanwhile
    with FolderLock(run_dir, "resume it"):
        return _resume_locked(run_dir, opts)


def _resume_locked(run_dir: Path, opts: RunOptions) -> RunOutcome:
    meta, scenario, cells, records, torn = load_run(run_dir)
    run_id = meta.run_id
    if registry.run_is_alive(run_id):
        raise ChaosError(
            f"{run_dir}: run {run_id} is still being executed by a live chaos process",
            hint="wait for it to end, or stop it (Ctrl-C / SIGTERM) and resume again",
        )
    # a run made with --work-in resumes there too: its remaining trials run where its first ones
    # did, and run.json keeps naming the folder that held them (unless --work-in names another)
    old_work = Path(meta.work_dir) if meta.work_dir else run_dir / "work"
    _check_work_dir(run_dir, run_id, old_work)  # it is deleted below: never a folder chaos did not make
    if opts.work_in is None and meta.work_dir:
        opts.work_in = old_work.parent
    reaped = registry.reap_run(run_id, {"run_dir": str(run_dir), "work_dir": str(old_work)})
    cut = repair(run_dir / "journal.jsonl")
    journaled = records.ids()
    aborted = set_aside_unjournaled(run_dir / "ledger.sqlite", run_id, journaled)
    shutil.rmtree(old_work, ignore_errors=True)
    meta.resumes = [
        *meta.resumes,
        ResumeNote(  # assigned, not appended: run.json writes the keys that were set
            at=now_iso(),
            journaled_trials=len(records),
            torn_line_dropped=bool(torn),
            torn_bytes=len(cut),
            aborted_ledger_rows=aborted,
            reaped_racers=len(reaped.racers),
            reaped_containers=len(reaped.containers),
        ),
    ]
    meta.interrupted = False
    if meta.failed:  # the fault that stopped it (a full disk, a lost database) is being retried
        meta.failed = None
    return execute(RunFolder(path=run_dir, meta=meta), scenario, cells, opts)


TIMING_KEYS = {"release_spread_ms", "ledger_seqs", "run_id", "wall_s_median", "store_size"}


def comparable(results: RunResults | dict[str, Any]) -> dict[str, Any]:
    """``results`` without what legitimately differs between two runs of the same scenario and
    seed: the run id, timings (a guard's median trial time too), ledger sequence numbers (a resumed
    run's aborted rows consume some) and the store's measured sizes (a checkpoint's timestamp and
    ids serialise to a byte more or less). Verdicts, reasons, trial ids, effect counts and fires stay."""
    data = results.model_dump(mode="json") if isinstance(results, RunResults) else results

    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in TIMING_KEYS}
        if isinstance(x, list):
            return [strip(v) for v in x]
        if isinstance(x, str) and isinstance(data, dict) and data.get("run_id"):
            return x.replace(data["run_id"], "<run>")
        return x

    return strip(data)


# --------------------------------------------------------------------------------- rerun


def rerun(run_dir: Path, trial_ids: list[str], opts: RunOptions | None = None) -> tuple[RunOutcome, list[dict[str, Any]]]:
    """Re-run some trials of a stored run alone: same scenario, root seed, cells, kill points.

    Trial seeds derive from the root seed, the cell id and the trial id, so a re-run trial gets the
    seed it had; a sweep's trials reuse the stored dry run, so point indices name the same
    boundaries. Returns the new run and, per verdict of the stored run whose evidence names a
    re-run trial, ``{"cell", "property", "trial_ids", "was", "now"}``.
    """
    opts = opts or RunOptions(out=Path(run_dir).resolve().parent.parent)  # beside the run: <out>/<scenario>/<stamp>-rerun
    meta0, scenario, cells, records, _ = load_run(run_dir)
    missing = [t for t in trial_ids if t not in records]
    if missing:
        sample = ", ".join(sorted(t for t in records.ids() if not t.endswith("-dry"))[:5])
        raise ChaosError(f"{run_dir}: no trial {missing[0]!r} in journal.jsonl", hint=f"trial ids look like: {sample}")
    wanted_cells = sorted({records.cell_of(t) for t in trial_ids})
    cells = [c for c in cells if c.index in wanted_cells]
    dry = sorted(t for t in records.ids() if t.endswith("-dry") and records.cell_of(t) in wanted_cells)
    RunStorage.preflight(cells, connect=True)  # a Postgres cell needs its database now as it did then
    folder = RunFolder.create(
        Path(opts.out),
        scenario.name,
        lambda run_dir_new: RunMeta(
            scenario_file=meta0.scenario_file,
            scenario=meta0.scenario,
            seed=meta0.seed,
            run_id=f"{scenario.name}-{run_dir_new.name}-{secrets.token_hex(3)}",
            cells=meta_cells(cells),
            rerun_of=RerunOf(run_dir=str(Path(run_dir).resolve()), run_id=meta0.run_id, trial_ids=list(trial_ids)),
            versions=versions(scenario),
            host=socket.gethostname(),
            platform=platform.platform(),
            argv=sys.argv,
            started=now_iso(),
            finished=None,
            interrupted=False,
        ),
        suffix="-rerun",
        hold=True,
    )
    journal = Journal(folder.path / "journal.jsonl")  # the reused dry runs, so the new folder stands alone
    for t in dry:
        journal.append(records.raw(t))
    journal.close()
    outcome = execute(folder, scenario, cells, opts, only=set(trial_ids), fresh=True, move_latest=False)
    points = {t: (records.raw(t) or {}).get("point") for t in trial_ids}
    comparison = compare_reruns(analyse_stored(Path(run_dir)), outcome.results, trial_ids, points)
    folder.meta.comparison = comparison
    folder.save()
    return outcome, comparison


def compare_reruns(before: RunResults, now: RunResults, trial_ids: list[str], points: dict[str, str | None]) -> list[dict[str, Any]]:
    """Per re-run trial, its verdicts then and now. A sweep's trial is judged at its kill point (the
    point's verdicts: the cell's verdict in the re-run covers only the points it re-ran, so it is no
    comparison); any other trial by the cell verdicts whose evidence names it."""
    now_cells = {c.cell_index: c for c in now.cells}
    comparison: list[dict[str, Any]] = []
    for c in before.cells:
        c_now = now_cells.get(c.cell_index)
        if c_now is None:
            continue
        at_points = {points[t]: t for t in trial_ids if points.get(t) and any(p.point == points[t] for p in c.points)}
        for point, t in at_points.items():
            was = next(p for p in c.points if p.point == point)
            is_now = next((p for p in c_now.points if p.point == point), None)
            for v in was.verdicts:
                v_now = next((x for x in is_now.verdicts if x.property == v.property), None) if is_now else None
                comparison.append(
                    {
                        "cell": c.cell_id,
                        "property": v.property,
                        "point": point,
                        "trial_ids": [t],
                        "was": v.status,
                        "now": v_now.status if v_now else "absent",
                        "reason_now": v_now.reason if v_now else "",
                    }
                )
        for v in c.verdicts if not at_points else []:
            named = [t for t in trial_ids if t in v.evidence.trial_ids]
            if not named:
                continue
            v_now = next((x for x in c_now.verdicts if x.property == v.property), None)
            comparison.append(
                {
                    "cell": c.cell_id,
                    "property": v.property,
                    "trial_ids": named,
                    "was": v.status,
                    "now": v_now.status if v_now else "absent",
                    "reason_now": v_now.reason if v_now else "",
                }
            )
    return comparison
