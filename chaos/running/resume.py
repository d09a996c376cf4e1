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
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

from chaos.racer.errors import ChaosError
from chaos.racer.ledger import ensure_columns
from chaos.records import ResumeNote, RunResults
from chaos.running import registry
from chaos.running.folderlock import FolderLock
from chaos.running.journal import repair
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


def resume_run(run_dir: str | Path, opts=None):
    """Continue the run in ``run_dir``; returns the orchestrator's RunOutcome."""
    from chaos.running.orchestrator import RunOptions

    opts = opts or RunOptions()
    run_dir = Path(run_dir)
    if not (run_dir / "run.json").is_file():
        load_run(run_dir)  # the one line that says what is wrong with it (no lock file left in a stray folder)
    # the folder's own lock, whatever the state folder, user or shell: held from this check until
    # the remaining trials ran, so no second process reaps or runs this folder meanwhile
    with FolderLock(run_dir, "resume it"):
        return _resume_locked(run_dir, opts)


def _resume_locked(run_dir: Path, opts):
    from chaos.running.orchestrator import execute

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


def comparable(results: RunResults | dict) -> dict:
    """``results`` without what legitimately differs between two runs of the same scenario and
    seed: the run id, timings (a guard's median trial time too), ledger sequence numbers (a resumed
    run's aborted rows consume some) and the store's measured sizes (a checkpoint's timestamp and
    ids serialise to a byte more or less). Verdicts, reasons, trial ids, effect counts and fires stay."""
    data = results.model_dump(mode="json") if isinstance(results, RunResults) else results

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in TIMING_KEYS}
        if isinstance(x, list):
            return [strip(v) for v in x]
        if isinstance(x, str) and isinstance(data, dict) and data.get("run_id"):
            return x.replace(data["run_id"], "<run>")
        return x

    return strip(data)
