"""One execution of a run folder: every trial its journal lacks, journaled, cleaned up, concluded.

Why: the cell loop is where a run can lose what it measured. A signal between journaling a trial
and counting it, a clean-up step that skips the next when it fails, or a cell that fails in part
and still reads ``holds`` would each make the run folder say something it did not measure. So
each of those is one named method of ``Execution``, in the order the run takes them:

* ``run_cells``: the cells in order (a queue shard: each cell it claims, marked done once its
  trials are journaled and synced; its run is then of the cells it finished); before each, a signal already received stops the run. A
  fault of the run itself (the disk, the database, a bug in chaos) stops it too, and is concluded
  by ``fail_run``; Ctrl-C / SIGTERM (``chaos.running.signals``) marks it interrupted.
* ``run_cell``: one cell's trials through its kind, each appended to the journal with signals
  disarmed (journaled <=> counted), the ledger's WAL checkpointed every ``CHECKPOINT_EVERY``
  trials. The trials a kind declares independent run ``--jobs`` at a time where the cell allows
  (``fans_out``), each job slot with launchers of its own (``slot_context``), their records
  journaled here, in this thread, as they end (``chaos.running.jobs``). A ``ChaosError`` fails this cell with its message and the other cells go on; so does
  a workload the racers cannot run (``workload_cannot_run``).
* ``cleanup``: in this order, each step alone (one that fails is remembered as the run's failure
  and the next still runs): reap every launcher's racers, stop the job slots' threads, unmount the lazy filesystem, kill any
  racer of this run still alive by its label, close the journal, close the storage, remove (or,
  with ``keep_work``, scrub) the work folder.
* ``conclude``: analyse the journal (never a record kept in memory) into results.json and the
  reports (``chaos.running.analysis``), record in run.json how the run ended, return the outcome.

``chaos.running.orchestrator`` sets an execution up (folder lock, storage, journal, signals) and
calls ``run``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import sqlite3
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import NoReturn

from chaos.envs import python_for
from chaos.kinds.base import runner_for
from chaos.kinds.faults import LAZY_FAULTS, SHARED_FAULTS
from chaos.launchers import Launcher, StartsAhead, make_launcher
from chaos.lazyfs import LazyMount
from chaos.racer.errors import ChaosError
from chaos.racer.protocol import LedgerSpec, StoreSpec
from chaos.records import CellVersions, RunResults, TrialRecord
from chaos.running import registry
from chaos.running.analysis import EXIT_RUN_FAILED, analyse_run, masked, meta_cells, write_results
from chaos.running.failure import RunFailed, describe
from chaos.running.jobs import FanOut, JobPool, wanted_jobs
from chaos.running.journal import Journal
from chaos.running.options import RunOptions, RunOutcome
from chaos.running.pgstore import RunStorage
from chaos.running.preflight import workload_paths
from chaos.running.runfolder import RunFolder
from chaos.running.services import ServicePool
from chaos.running.signals import Interrupted, SignalState
from chaos.running.stored import StoredTrials
from chaos.running.trial import RunContext
from chaos.running.workdir import scrub
from chaos.scenario.model import Cell, Scenario, TargetSpec
from chaos.targets import ReapsStore, get_target, hooks_of

CHECKPOINT_EVERY = 8  # trials between checkpoints of the ledger's WAL (and after every cell)


def checkpoint_ledger(config: LedgerSpec) -> None:
    """Fold the SQLite ledger's write-ahead log into the database and truncate it.

    Why: racers and the orchestrator keep connections open for the whole run, so SQLite's own
    checkpoints never shrink the WAL (3.1 MB after 66 sweep trials). Between trials no racer
    writes (a cell whose trials run ``--jobs`` at a time is checkpointed once it ends); a checkpoint
    that finds one writing (a busy ledger) is simply skipped until the next."""
    if config.get("kind") != "sqlite":
        return
    path = Path(config["path"])
    if not path.exists():
        return
    with contextlib.suppress(sqlite3.Error), contextlib.closing(sqlite3.connect(str(path), timeout=1, isolation_level=None)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def workload_cannot_run(rec: TrialRecord, valid_seen: bool) -> str | None:
    """The whole-cell failure heuristic: the reason to fail the cell now, or None to go on.

    A trial with errors before any valid trial of its cell means the harness itself cannot run
    the cell (e.g. a workload that raises while being built): say so once instead of failing
    every trial. An environment fault (a lost database) is transient: the trial is repeated."""
    if rec.errors and not valid_seen and rec.fault != "environment":
        return f"racers could not run the workload: {rec.errors[0]}"
    return None


def fans_out(cell: Cell) -> bool:
    """May ``cell``'s independent trials run at once (``--jobs``)? On this machine's racers (a slot
    of its own is a fork server here, not another container or SSH host), and not under a fault that
    acts on what every trial shares (``SHARED_FAULTS``: the database restarted; a power loss acts on
    one trial's folder of the lazy filesystem)."""
    s = cell.scenario
    return s.racers.placement in (None, "local") and s.fault not in SHARED_FAULTS


def ran_versions(results: RunResults) -> dict[str, CellVersions]:
    """What each cell's racers actually ran (a version axis asks; this records the answer)."""
    return {c.cell_id: CellVersions(asked=c.version, ran=c.versions) for c in results.cells}


@dataclass
class Execution:
    """The trials of ``cells`` not yet in ``prior`` (the journal as this execution found it), run
    with the run's storage, journal, registry entry and signal state, which the caller opened."""

    folder: RunFolder
    scenario: Scenario
    cells: list[Cell]
    opts: RunOptions
    prior: StoredTrials
    work_dir: Path
    storage: RunStorage
    journal: Journal
    active: registry.ActiveRun
    signals: SignalState
    only: set[str] | None = None  # just these trial ids (a rerun, ``--only``); None: every one not journaled
    lazy: LazyMount | None = None  # the run's lazy filesystem (power_loss / torn cells), mounted
    # what the execution learns as it goes
    launchers: dict[str, Launcher] = field(default_factory=dict, init=False)
    services: ServicePool = field(default_factory=ServicePool, init=False)  # cells' services kept between cells
    launcher: Launcher | None = field(default=None, init=False)  # the latest cell's: reaped when that cell fails
    # (framework, racers' python) -> the backends its cells ran on: what ``reap_stores`` asks each framework to remove
    racer_stores: dict[tuple[str, str], set[str]] = field(default_factory=dict, init=False)
    failures: dict[int, str] = field(default_factory=dict, init=False)  # cell index -> why it failed
    finished_cells: set[int] = field(default_factory=set, init=False)
    interrupted: bool = field(default=False, init=False)
    run_failure: Exception | None = field(default=None, init=False)  # the fault that stopped the run
    journaled_before: int = field(default=0, init=False)
    journaled_now: int = field(default=0, init=False)
    jobs: int = field(default=1, init=False)  # independent trials at once (``--jobs``)
    pool: JobPool = field(default_factory=JobPool, init=False)  # the job slots' threads (``chaos.running.jobs``)

    def __post_init__(self) -> None:
        self.journaled_before = len(self.prior)
        self.jobs = self.opts.jobs or wanted_jobs()

    @property
    def run_id(self) -> str:
        return self.folder.meta.run_id

    @cached_property
    def waiting_jobs(self) -> int:
        """``jobs`` for a framework whose trials wait (``jobs_for``): read from the machine once, when
        the first such cell asks, so a run without one reads nothing more at its start."""
        return self.opts.jobs or wanted_jobs(per_core=2)

    def jobs_for(self, cell: Cell) -> int:
        """How many of ``cell``'s independent trials run at once: ``--jobs`` (or ``CHAOS_JOBS``) where
        given, else what the machine has, twice that where the framework's trials mostly wait on the
        framework itself (``TargetInfo.trials_wait``: a core would sit idle through those waits)."""
        return self.waiting_jobs if get_target(cell.scenario.target.framework).trials_wait else self.jobs

    def run(self) -> RunOutcome:
        """Run the cells, clean up whatever happened, then conclude (``RunFailed`` if the run failed)."""
        try:
            self.run_cells()
        finally:
            self.cleanup()
        if self.opts.queue is not None:  # a queue shard's run is of the cells it finished, as a static shard's
            ran = self.opts.queue.ran(self.scenario.name)
            self.cells = [c for c in self.cells if c.index in ran]
            self.folder.meta.cells = meta_cells(self.cells)
            for k, why in (self.folder.meta.failures or {}).items():  # an earlier execution's failed cells stay failed
                if int(k) in ran:
                    self.failures.setdefault(int(k), why)
        return self.conclude()

    # ------------------------------------------------------------------------------ the trials

    def run_cells(self) -> None:
        """Every cell in order; an interruption or a fault of the run stops the loop and is noted."""
        queue = self.opts.queue
        try:
            for cell in self.cells if queue is None else queue.claims(self.scenario.name, self.cells):
                if self.signals.received:
                    raise Interrupted(self.signals.received[0])
                if self.opts.on_cell_start:
                    self.opts.on_cell_start(cell, len(self.cells))
                self.run_cell(cell)
                self.finished_cells.add(cell.index)
                checkpoint_ledger(self.storage.ledger_config)
                if queue is not None:  # done only once its trials would survive the machine
                    self.journal.sync()
                    queue.done(self.scenario.name, cell, self.failures.get(cell.index))
        except (Interrupted, KeyboardInterrupt):
            self.interrupted = True
        except Exception as exc:  # the disk, the database or chaos itself failed: the run stops here
            self.run_failure = exc
        finally:
            self.signals.armed = False

    def run_cell(self, cell: Cell) -> None:
        """One cell's trials through its kind, each journaled the moment it ends (signals disarmed
        between the append and the count). A ``ChaosError`` fails just this cell."""
        runner = runner_for(cell.scenario.kind, cell.scenario.target.framework)
        try:
            self.launcher = self.launcher_for(cell)
            deployed = cell.scenario.deployed_target  # a library release between pause and resume: v2's own venv
            deploy_launcher = self.launcher_for(cell, deployed) if deployed != cell.scenario.target else None
            ctx = self.context(self.launcher, deploy_launcher, cell)
            valid_seen = False
            # closed on the way out, whatever ends the loop: a cell's parallel trials stop with it (``jobs``)
            trials = runner(ctx, cell, self.prior.ids())
            with contextlib.closing(trials) if isinstance(trials, Generator) else contextlib.nullcontext():
                for rec in trials:
                    self.signals.armed = False  # journaled <=> counted: no signal between the two
                    self.journal.append(rec.model_dump(mode="json"))  # masked by the journal
                    if self.signals.received:
                        raise Interrupted(self.signals.received[0])
                    self.signals.armed = True
                    self.journaled_now += 1
                    # not while other job slots' racers write: a TRUNCATE checkpoint holds their writes back
                    if self.journaled_now % CHECKPOINT_EVERY == 0 and ctx.fan_out is None:
                        checkpoint_ledger(self.storage.ledger_config)
                    if self.opts.on_trial:
                        self.opts.on_trial(rec)
                    valid_seen = valid_seen or rec.valid
                    reason = workload_cannot_run(rec, valid_seen)
                    if reason is not None:
                        self.failures[cell.index] = reason
                        break
        except ChaosError as exc:
            self.failures[cell.index] = exc.message
            if self.launcher is not None:
                self.launcher.reap()

    def context(self, launcher: Launcher, deploy_launcher: Launcher | None, cell: Cell | None = None) -> RunContext:
        """What every trial of a cell needs: ids, folders, its launchers, the ledger and the store;
        with ``cell``, how its independent trials may run at once (``fan_out``)."""
        ctx = RunContext(
            run_id=self.run_id,
            run_dir=self.folder.path,
            work_dir=self.work_dir,
            root_seed=self.scenario.seed,
            launcher=launcher,
            ledger_config=self.storage.ledger_config,
            read_ledger=self.storage.read_ledger,
            copy_ledger=self.storage.copy_ledger,
            store_for=self.store_for,
            keep_work=self.opts.keep_work,
            lazy=self.lazy,
            prior=self.prior,
            only=self.only if self.only is not None else self.opts.only,
            deploy_launcher=deploy_launcher,
            await_store=self.storage.await_database if self.storage.dsn else None,
            labels=self.active.env(),
            search=workload_paths(self.folder.meta.scenario_file),
            jobs=self.jobs if cell is None else self.jobs_for(cell),
            services=self.services,
        )
        if cell is not None and ctx.jobs > 1 and fans_out(cell):
            ctx.fan_out = FanOut(
                ctx.jobs,
                partial(self.slot_context, ctx, cell),
                lambda: registry.kill_run_racers(self.run_id),
                self.pool,
                partial(self.start_slots_ahead, ctx, cell),
            )
        return ctx

    def slot_context(self, ctx: RunContext, cell: Cell, slot: int) -> RunContext:
        """The context of job slot ``slot`` of ``cell`` (``chaos.running.jobs``): the cell's own for
        slot 0, else the same with launchers of the slot's own (their own fork servers)."""
        if slot == 0:
            return ctx
        deployed = cell.scenario.deployed_target
        deploy = self.launcher_for(cell, deployed, slot) if deployed != cell.scenario.target else None
        return dataclasses.replace(ctx, launcher=self.launcher_for(cell, None, slot), deploy_launcher=deploy, fan_out=None)

    def start_slots_ahead(self, ctx: RunContext, cell: Cell) -> None:
        """Start the fork server of every job slot but the cell's own now, in this thread (which lives
        as long as the run, as the pool's do: a server dies with the thread that started it), so it
        imports the framework while the cell's dry run runs (``RunContext.expect_independent``)."""
        t = cell.scenario.target
        for slot in range(1, ctx.jobs):
            launcher = self.slot_context(ctx, cell, slot).launcher
            if isinstance(launcher, StartsAhead):
                launcher.start_ahead(t.framework, str(self.work_dir), get_target(t.framework).module)

    def store_for(self, cell: Cell, trial_id: str, trial_dir: Path) -> StoreSpec:
        """Where a trial's framework store lives: on the lazy filesystem for its faults, else the run's storage."""
        if self.lazy is not None and cell.scenario.fault in LAZY_FAULTS:
            d = self.lazy.mount / trial_id.replace("/", "_")
            d.mkdir(exist_ok=True)
            return {"path": str(d / "checkpoints.sqlite")}
        return self.storage.store_for(cell, trial_id, trial_dir)

    def launcher_for(self, cell: Cell, target: TargetSpec | None = None, slot: int = 0) -> Launcher:
        """One launcher per framework release, placement, start mode and job slot, made on first use
        and labelled with the run (its racers get a temp folder inside the work folder itself; a
        slot's warm launcher keeps its fork server's log and temp folder in ``job<slot>`` there)."""
        s = cell.scenario
        t = target or s.target
        key = repr((t.framework, t.version, t.requirements, s.racers.placement, s.racers.start, slot))
        python = python_for(t.framework, t.version, t.requirements)
        backends = self.racer_stores.setdefault((t.framework, python), set())
        if s.target.backend not in backends:  # written down first: a reaper of this run, if it is killed, removes them too
            backends.add(s.target.backend)
            self.active.note(racer_stores=[[fw, py, sorted(b)] for (fw, py), b in self.racer_stores.items()])
        if key not in self.launchers:
            own = {"log_dir": self.work_dir / f"job{slot}"} if slot and s.racers.start in (None, "warm") else {}
            launcher = make_launcher(
                s.racers.placement,
                python,
                self.run_id,
                extra_paths=workload_paths(self.folder.meta.scenario_file),
                start=s.racers.start,
                **own,
            )
            registry.label_launcher(launcher, self.active.env())
            self.launchers[key] = launcher
        return self.launchers[key]

    # ------------------------------------------------------------------------------ the end

    def cleanup(self) -> None:
        """Release what the run holds, in order; each step isolated, so one that fails (a database
        gone) is remembered as the run's failure and does not skip the next."""
        steps: list[Callable[[], object]] = [self.services.close]
        steps += [launcher.reap for launcher in self.launchers.values()]
        steps.append(self.pool.close)  # the job slots' threads, idle since their cell ended
        if self.lazy is not None:  # unmounted once its racers are dead, before the work folder goes
            steps.append(self.lazy.stop)
        # the net under the net: any racer of this run still alive (e.g. started in the instant a
        # signal arrived, before its launcher knew of it) is found by its label and killed
        steps += [
            lambda: registry.kill_run_racers(self.run_id),
            self.reap_stores,
            self.journal.close,
            lambda: self.storage.close(keep_schema=self.opts.keep_work),
            self.clear_work,
        ]
        for step in steps:
            try:
                step()
            except Exception as exc:
                self.run_failure = self.run_failure or exc

    def reap_stores(self) -> None:
        """What the racers made for this run outside its folders and Postgres schema (a database on a
        shared server) removed by each framework that makes such a store (``ReapsStore``), once they are
        dead; kept with ``keep_work``, as the run's schema is."""
        if self.opts.keep_work:
            return
        for (framework, python), backends in self.racer_stores.items():
            hooks = hooks_of(framework)
            if isinstance(hooks, ReapsStore):
                hooks.reap_store(self.run_id, python, sorted(backends))

    def clear_work(self) -> None:
        """The work folder removed, or (``keep_work``) kept with secrets masked once every racer is dead."""
        if not self.opts.keep_work:
            shutil.rmtree(self.work_dir, ignore_errors=True)
        else:
            scrub(self.work_dir)  # kept racer specs and logs hold the DSN

    def conclude(self) -> RunOutcome:
        """The journal (the truth: ``chaos analyze`` re-scores it the same way) analysed into
        results.json and the reports; run.json says how the run ended. Returns what results.json
        holds (masked: a reason in a pytest failure is a CI log)."""
        interrupted = self.interrupted or bool(self.signals.received)
        records = StoredTrials(self.folder.path / "journal.jsonl")
        if self.run_failure is not None:
            self.fail_run(records, self.finished_cells, self.run_failure)
        results = analyse_run(self.cells, records, self.failures, run_id=self.run_id, scenario=self.scenario, seed=self.scenario.seed)
        if interrupted:
            results.exit_code = EXIT_RUN_FAILED
        try:
            self.folder.mark_ended(
                interrupted=interrupted, signals=self.signals.received, failures=self.failures, cell_versions=ran_versions(results)
            )
            write_results(self.folder.path, results, self.folder.meta, records)
        except Exception as exc:  # the disk filled as the run ended: the journal has every trial
            self.fail_run(records, {c.index for c in self.cells}, exc)
        return RunOutcome(
            run_dir=self.folder.path,
            results=masked(results),
            interrupted=interrupted,
            cells=self.cells,
            signals=list(self.signals.received),
        )

    def fail_run(self, records: StoredTrials, finished_cells: set[int], exc: Exception) -> NoReturn:
        """The run stopped on ``exc``: keep what it measured, say so, raise ``RunFailed``.

        Nothing journaled by this execution: ``exc`` is raised as it is (the orchestrator removes
        a fresh folder). Otherwise every cell that did not finish is failed with the reason (a
        verdict from part of a cell is never ``holds``), run.json says ``failed``, and results.json
        and the reports are written from the journal; each write that cannot be made (the disk is
        full) is named in the message instead."""
        folder = self.folder
        reason = describe(exc)
        if len(records) <= self.journaled_before:
            raise exc
        for c in self.cells:
            if c.index not in finished_cells:
                self.failures.setdefault(c.index, f"the run failed: {reason}")
        lost: list[str] = []
        results: RunResults | None
        try:
            results = analyse_run(
                self.cells,
                records,
                self.failures,
                run_id=folder.meta.run_id,
                scenario=Scenario.model_validate(folder.meta.scenario),
                seed=folder.meta.seed or 0,
            )
            results.exit_code = EXIT_RUN_FAILED
            folder.meta.failed = reason
            folder.mark_ended(interrupted=False, signals=self.signals.received, failures=self.failures, cell_versions=ran_versions(results))
        except Exception:
            lost.append("run.json")
            results = None
        if results is not None:
            try:
                write_results(folder.path, results, folder.meta, records)
            except Exception:
                lost.append("results.json and the reports")
        with contextlib.suppress(OSError):
            folder.link_latest()
        kept = f"{folder.path} keeps the {len(records)} journaled trial(s)"
        if lost:
            kept += f" (could not write {' or '.join(lost)}: `chaos analyze {folder.path}` writes them once fixed)"
        raise RunFailed(f"{reason}; {kept}; continue with `chaos run --resume {folder.path}`") from exc
