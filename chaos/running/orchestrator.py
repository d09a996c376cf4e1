"""The orchestrator: one scenario file in, one run folder of evidence and verdicts out.

``run_scenario`` loads and expands the scenario and ``run_loaded`` runs an already loaded one (a
suite entry with its overrides). Bad input is refused before anything is written: option
overrides, a shard with no cell, a workload, saver or guard the racers' Python cannot import
(``chaos.running.preflight``), a database that is missing. Then ``RunFolder.create`` makes
``<out>/<scenario>/<timestamp>/`` with run.json (``chaos.running.runfolder``), and ``execute``
runs it. ``execute`` is also how ``chaos run --resume`` and ``chaos rerun``
(``chaos.running.resume``) continue a stored folder.

``execute`` takes the folder's lock (``chaos.running.folderlock``: the one process executing it),
registers the run (``chaos.running.registry``: a SIGKILLed orchestrator's racers are reaped by the
next ``chaos`` command), arms Ctrl-C / SIGTERM (``chaos.running.signals``), opens the storage
(``chaos.running.pgstore``), the journal (``chaos.running.journal``) and the lazy filesystem, and
hands them to an ``Execution`` (``chaos.running.execution``): the cell loop, the clean-up and the
analysis into results.json and the reports (``chaos.running.analysis``). A fault before the first
trial removes a fresh folder (``RunFailed``: nothing was measured); after it, run.json says
``failed`` and the journal keeps every finished trial for ``--resume``.
"""

from __future__ import annotations

import contextlib
import os
import platform
import secrets
import socket
import sys
from pathlib import Path

from pydantic import ValidationError

from chaos import lazyfs
from chaos.kinds.faults import LAZY_FAULTS
from chaos.lazyfs import LazyMount
from chaos.racer.errors import ChaosError, EnvironmentProblem, ScenarioError
from chaos.racer.redact import declare_params
from chaos.records import RunLoad, RunMeta
from chaos.running import registry
from chaos.running.analysis import meta_cells, versions
from chaos.running.execution import Execution
from chaos.running.failure import RunFailed, describe
from chaos.running.folderlock import FolderLock
from chaos.running.jobs import wanted_jobs
from chaos.running.journal import Journal, repair
from chaos.running.options import RunOptions, RunOutcome
from chaos.running.pgstore import RunStorage
from chaos.running.preflight import preflight_cells
from chaos.running.runfolder import RunFolder, load_average, now_iso
from chaos.running.shard import parse_shard, plan_cells
from chaos.running.signals import stop_on_signals
from chaos.running.stored import StoredTrials
from chaos.running.workdir import work_folder
from chaos.scenario.model import Cell, Scenario, expand, load_scenario


def run_scenario(path: str | os.PathLike, opts: RunOptions | None = None) -> RunOutcome:
    return run_loaded(load_scenario(path), path, opts)


def run_loaded(scenario: Scenario, path: str | os.PathLike, opts: RunOptions | None = None) -> RunOutcome:
    """Run an already loaded (and possibly overridden, e.g. by a nightly suite) scenario."""
    opts = opts or RunOptions()
    if opts.seed is not None or opts.trials is not None or opts.racers is not None:
        data = scenario.model_dump()
        if opts.seed is not None:
            data["seed"] = opts.seed
        if opts.trials is not None:
            data["trials"] = opts.trials
        if opts.racers is not None:
            data["racers"]["start"] = opts.racers
            data["matrix"].pop("start", None)  # the command line wins over a start axis too
        try:
            scenario = Scenario.model_validate(data)
        except ValidationError as exc:
            e = exc.errors()[0]
            field_name = ".".join(map(str, e["loc"]))
            flag = {"seed": "--seed", "trials": "--trials"}.get(field_name, field_name)
            raise ScenarioError(f"{flag} {e.get('input')!r}: {e['msg']}") from None
    cells = expand(scenario, path=str(path))
    wanted = opts.cells
    if wanted is None and opts.shard and opts.queue is None:  # ``chaos run --shard``: this scenario's cells split by estimated cost
        wanted = plan_cells(scenario, parse_shard(opts.shard))
        if not wanted:  # nothing measured is no verdict: exit 0 would claim every verdict holds
            raise ChaosError(
                f"--shard {opts.shard}: {path} expands to {len(cells)} cell(s), so shard {opts.shard} has none to run",
                hint=f"use at most {len(cells)} shard(s) for this scenario",
            )
    if wanted is not None:  # a shard: the others run the rest; indices (and so seeds) stay the full run's
        cells = [c for c in cells if c.index in wanted]
    # what the racers' Python cannot import: refused, exit 3 (its checks run --jobs at a time)
    preflight_cells(cells, str(path), opts.jobs or wanted_jobs())
    RunStorage.preflight(cells, connect=True)  # Postgres needed but missing or refusing: refused before any folder is written
    folder = RunFolder.create(
        Path(opts.out),
        scenario.name,
        lambda run_dir: RunMeta(
            run_id=f"{scenario.name}-{run_dir.name}-{secrets.token_hex(3)}",
            scenario_file=str(path),
            scenario=scenario.model_dump(mode="json"),
            cells=meta_cells(cells),
            seed=scenario.seed,
            versions=versions(scenario),
            host=socket.gethostname(),
            platform=platform.platform(),
            load=RunLoad(cpus=os.cpu_count(), start=load_average()),
            argv=sys.argv,
            started=now_iso(),
            finished=None,
            interrupted=False,
            **({"shard": opts.shard} if opts.shard else {}),
        ),
        hold=True,  # locked before run.json exists: execute takes the lock over
    )
    return execute(folder, scenario, cells, opts, fresh=True)


def execute(
    folder: RunFolder,
    scenario: Scenario,
    cells: list[Cell],
    opts: RunOptions,
    only: set[str] | None = None,
    *,
    fresh: bool = False,
    move_latest: bool = True,
) -> RunOutcome:
    """Run every trial not yet in the run's journal (one an earlier, interrupted execution
    journaled, or a rerun's reused dry runs; with ``only``, just those trial ids), journal each,
    then analyse the journal into the reports. No record is kept in memory: the journal is the
    truth, read back one cell at a time (``chaos.running.stored``). ``latest`` is pointed at the
    run unless ``move_latest`` is false (a rerun of a few trials is not the scenario's latest run).

    A fault that stops the run (``RunFailed``): if the folder is ``fresh`` (made for this run)
    and no trial was journaled, the folder is removed; otherwise run.json says ``failed`` with the
    reason and results.json and the reports are still written from the journal."""
    with FolderLock(folder.path):  # the one process executing this folder (chaos.running.folderlock)
        folder.release()  # ``RunFolder.create``'s hold, now this one's
        return _execute_locked(folder, scenario, cells, opts, only, fresh=fresh, move_latest=move_latest)


def _execute_locked(
    folder: RunFolder, scenario: Scenario, cells: list[Cell], opts: RunOptions, only: set[str] | None, *, fresh: bool, move_latest: bool
) -> RunOutcome:
    journaled_before = _journaled(folder.path)
    try:
        return _execute_in_folder(folder, scenario, cells, opts, only, move_latest)
    except RunFailed:
        raise
    except Exception as exc:  # before the first trial (storage, work folder) or a bug: nothing new measured
        reason = describe(exc)
        if fresh and _journaled(folder.path) <= journaled_before:
            folder.discard()
            raise RunFailed(f"{reason}; no trial ran and no run folder was kept") from exc
        with contextlib.suppress(Exception):
            folder.mark_failed(reason)
        raise RunFailed(f"{reason}; {folder.path} keeps what was measured; continue with `chaos run --resume {folder.path}`") from exc


def _journaled(run_dir: Path) -> int:
    """How many complete trial records the run's journal holds (0 if it has none)."""
    try:
        return len(StoredTrials(run_dir / "journal.jsonl"))
    except (ChaosError, OSError):
        return 0


def _execute_in_folder(
    folder: RunFolder, scenario: Scenario, cells: list[Cell], opts: RunOptions, only: set[str] | None, move_latest: bool
) -> RunOutcome:
    run_dir, meta = folder.path, folder.meta
    run_id = meta.run_id
    for c in cells:  # secret-named workload parameters: masked by value wherever the run writes them
        declare_params(c.scenario.workload_params)
    work_dir = work_folder(run_dir, run_id, opts.work_in)
    if opts.work_in is not None:
        meta.work_dir = str(work_dir)  # run.json says where the trials' databases were
    with stop_on_signals() as signals, registry.ActiveRun(run_id, run_dir, work_dir, keep_work=opts.keep_work) as active:
        signals.armed = False  # until the journal is open, a signal just ends the run without trials
        work_dir.mkdir(exist_ok=True)
        storage = RunStorage(cells, run_id, run_dir)  # SQLite, or Postgres for the postgres backend / other hosts
        meta.storage = storage.describe()
        if storage.schema:
            # a reaper of this run must drop it, on that server (chaos/running/registry.py)
            active.note(pg_schema=storage.schema, pg_server=registry.server_of(storage.dsn))
        folder.save()
        repair(run_dir / "journal.jsonl")  # appends must start on a fresh line
        prior = StoredTrials(run_dir / "journal.jsonl")
        journal = Journal(run_dir / "journal.jsonl")
        signals.armed = not signals.received
        lazy = _lazy_mount(cells, run_id, work_dir, active)  # stopped by the execution's clean-up, first
        execution = Execution(folder, scenario, cells, opts, prior, work_dir, storage, journal, active, signals, only=only, lazy=lazy)
        outcome = execution.run()
    if move_latest:
        folder.link_latest()
    return outcome


def _lazy_mount(cells: list[Cell], run_id: str, work_dir: Path, active: registry.ActiveRun) -> LazyMount | None:
    """The run's lazy filesystem, mounted, when a cell's fault is power_loss or torn (else None).
    Its mount is noted in the run's registry entry, so a reaper of a dead run unmounts it."""
    faults = sorted({c.scenario.fault for c in cells} & set(LAZY_FAULTS))
    if not faults:
        return None
    why = lazyfs.missing()
    if why is not None:
        raise EnvironmentProblem(f"fault {'/'.join(faults)} needs a FUSE filesystem on this machine: {why}")
    lazy = LazyMount(work_dir / "lazy.below", (work_dir / "lazy").resolve(), run_id=run_id, log=work_dir / "lazyfs-ops.jsonl")
    active.note(lazyfs_mount=str(lazy.mount))
    lazy.start()
    return lazy
