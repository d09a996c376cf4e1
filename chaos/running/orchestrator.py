"""The orchestrator: one scenario file in, one run folder of evidence and verdicts out.

``run_scenario`` loads and expands the scenario (refusing bad input before anything is written),
creates ``<out>/<scenario>/<timestamp>/`` with run.json (``chaos.running.runfolder`` owns the
folder and its run.json), then runs every cell's trials through its
kind, appending each trial record to the journal (``chaos.running.journal``) the moment it ends. At the end it
analyses the journal into results.json, renders report.md, junit.xml, report.html (+ PNG plots)
and points ``latest`` at the run. ``run_loaded`` runs an already loaded scenario (a suite entry
with its overrides); ``load_run`` (from ``runfolder``) / ``analyse_loaded`` re-score a stored run
exactly as the run did.

Ctrl-C and SIGTERM stop the run cleanly: every racer is killed and reaped, the journal keeps every
finished trial, and run.json says the run was interrupted. A run registers itself while it executes
(``chaos.running.registry``) and labels its racers with its run id, so if the orchestrator is SIGKILLed the
next ``chaos`` command reaps what it left; ``chaos run --resume`` continues it from its journal
(``chaos.running.resume``). Everything written to run.json, the journal, results.json and report.md passes
through ``chaos.racer.redact`` first. A cell that fails for a reason outside
the framework (a launcher that cannot start racers, say) is recorded as failed with that reason;
the other cells go on.
"""

from __future__ import annotations

import contextlib
import os
import platform
import secrets
import shutil
import signal
import socket
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

import chaos
from chaos import lazyfs
from chaos.envs import python_for
from chaos.kinds import runner_for
from chaos.kinds.checking import analyze_cell, count_trial, exit_code, verdict_counts
from chaos.kinds.faults import LAZY_FAULTS
from chaos.launchers import Launcher, make_launcher
from chaos.lazyfs import LazyMount
from chaos.racer.errors import ChaosError, EnvironmentProblem, ScenarioError
from chaos.racer.protocol import StoreSpec
from chaos.racer.redact import redact, redact_obj
from chaos.records import CellResult, CellVersions, RerunOf, RunCell, RunLoad, RunMeta, RunResults, TrialRecord, TrialSummary
from chaos.running import registry
from chaos.running.failure import describe
from chaos.running.folderlock import FolderLock
from chaos.running.journal import Journal, repair
from chaos.running.pgstore import RunStorage
from chaos.running.preflight import deployed_cell, preflight_run
from chaos.running.runfolder import RunFolder, load_average, load_run, now_iso, write_atomic
from chaos.running.stored import StoredTrials
from chaos.running.trial import RunContext
from chaos.running.workdir import scrub, work_folder
from chaos.scenario.model import Cell, Scenario, TargetSpec, expand, load_scenario
from chaos.targets import get_target

EXIT_RUN_FAILED = 3


@dataclass
class RunOptions:
    out: Path = Path("reports")
    seed: int | None = None
    trials: int | None = None
    keep_work: bool = False
    work_in: Path | None = None  # make the work folder here (e.g. /dev/shm), not in the run folder: chaos.running.workdir
    racers: str | None = None  # "warm" | "cold": how racers start, overriding the scenario
    on_trial: Callable[[TrialRecord], None] | None = None
    on_cell_start: Callable[[Cell, int], None] | None = None
    only: set[str] | None = None  # run just these trial ids (``chaos run --only``)
    cells: set[int] | None = None  # run just these cells (by index in the full expansion): a shard's part
    shard: str | None = None  # "I/N": recorded in run.json so analysis reads just those cells


@dataclass
class RunOutcome:
    run_dir: Path
    results: RunResults
    interrupted: bool = False
    cells: list[Cell] = field(default_factory=list)


class Interrupted(Exception):
    """SIGTERM or SIGINT reached the orchestrator."""


@dataclass
class SignalState:
    received: list[str] = field(default_factory=list)
    armed: bool = True


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[SignalState]:
    """SIGTERM/SIGINT raise ``Interrupted`` once, while trials run; later ones (and any after the
    trials ended) are noted and ignored, so the cleanup the first one starts (reaping racers,
    writing results) is not itself cut short."""
    state = SignalState()

    def handler(signum, frame):
        state.received.append(signal.Signals(signum).name)
        if state.armed and len(state.received) == 1:
            state.armed = False
            raise Interrupted(state.received[0])

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield state
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def versions(scenario: Scenario) -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version(), "chaos": chaos.__version__}
    for dist in get_target(scenario.target.framework).distributions:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


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


def _meta_json(run_meta: RunMeta | dict[str, Any]) -> dict[str, Any]:
    """What the reports read of run.json: its JSON object, secrets redacted."""
    return redact_obj(run_meta.to_json() if isinstance(run_meta, RunMeta) else run_meta)


def write_results(
    run_dir: Path, results: RunResults, run_meta: RunMeta | dict[str, Any], records: StoredTrials | Iterable[TrialRecord] | None = None
) -> None:
    """results.json first (the evidence), then what people and CI read: report.md, junit.xml and
    report.html with its plots, all rendered from the same results and the journaled records.
    Secrets are redacted from all of them (``chaos.racer.redact``)."""
    clean = RunResults.model_validate(redact_obj(results.model_dump(mode="json"), keep_numbers=True))
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

    results = RunResults.model_validate(redact_obj(results.model_dump(mode="json"), keep_numbers=True))
    run_meta = _meta_json(run_meta)
    if records is None:
        records = StoredTrials(run_dir / "journal.jsonl")
    elif not isinstance(records, StoredTrials):
        records = [TrialRecord.model_validate(redact_obj(r.model_dump(mode="json"), keep_numbers=True)) for r in records]
    shown = gather(records)  # one pass over the journal: the duplicates' explanations feed both reports
    write_atomic(run_dir / "report.md", redact(render_markdown(results, run_meta, shown.duplicates)))
    write_junit(run_dir / "junit.xml", [results])
    write_run_html(run_dir, results, run_meta, records, shown=shown)


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
    if wanted is None and opts.shard:  # ``chaos run --shard``: this scenario's cells split by estimated cost
        from chaos.running.shard import parse_shard, plan_cells

        wanted = plan_cells(scenario, parse_shard(opts.shard))
        if not wanted:  # nothing measured is no verdict: exit 0 would claim every verdict holds
            raise ChaosError(
                f"--shard {opts.shard}: {path} expands to {len(cells)} cell(s), so shard {opts.shard} has none to run",
                hint=f"use at most {len(cells)} shard(s) for this scenario",
            )
    if wanted is not None:  # a shard: the others run the rest; indices (and so seeds) stay the full run's
        cells = [c for c in cells if c.index in wanted]
    for cell in cells:
        t, t2 = cell.scenario.target, cell.scenario.deployed_target
        v2_python = _deployed_python(cell, str(path)) if t2 != t else None  # a release that does not install: exit 3
        preflight(cell, str(path), python_for(t.framework, t.version, t.requirements), v2_python)
    RunStorage.preflight(cells, connect=True)  # Postgres needed but missing or refusing: refused before any folder is written
    folder = RunFolder.create(
        Path(opts.out),
        scenario.name,
        lambda run_dir: RunMeta(
            run_id=f"{scenario.name}-{run_dir.name}-{secrets.token_hex(3)}",
            scenario_file=str(path),
            scenario=scenario.model_dump(mode="json"),
            cells=_run_cells(cells),
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


CHECKPOINT_EVERY = 8  # trials between checkpoints of the ledger's WAL (and after every cell)


def checkpoint_ledger(config: Any) -> None:
    """Fold the SQLite ledger's write-ahead log into the database and truncate it.

    Why: racers and the orchestrator keep connections open for the whole run, so SQLite's own
    checkpoints never shrink the WAL (3.1 MB after 66 sweep trials). Between trials no racer
    writes; a checkpoint that finds one writing (a busy ledger) is simply skipped until the next."""
    if config.get("kind") != "sqlite":
        return
    path = Path(config["path"])
    if not path.exists():
        return
    with contextlib.suppress(sqlite3.Error), contextlib.closing(sqlite3.connect(str(path), timeout=1, isolation_level=None)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _run_cells(cells: list[Cell]) -> list[RunCell]:
    return [RunCell(index=c.index, id=c.id, axes=c.axes) for c in cells]


_preflight_ok: set[tuple[str, ...]] = set()


def workload_paths(scenario_file: str | None) -> list[str]:
    """Where a user's ``package.module:factory`` is looked up: the working folder and the scenario's."""
    paths = [os.getcwd()]
    if scenario_file:
        paths.append(str(Path(scenario_file).resolve().parent))
    return paths


def _module_preflight(what: str, module: str, ref: str, scenario_file: str | None, python: str, hint: str) -> None:
    """Run ``python -m <module> <ref>`` in the racers' Python (once per interpreter and ref); a
    failure is refused in one line naming the scenario file, with the exit's last stderr line."""
    if (python, what, ref) in _preflight_ok:
        return
    import subprocess

    from chaos.envs import racer_env
    from chaos.racer.errors import TargetError

    env = racer_env(python, workload_paths(scenario_file))
    proc = subprocess.run([python, "-m", module, ref], capture_output=True, text=True, env=env, timeout=300)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise TargetError(f"{scenario_file or 'scenario'}: {last}", hint=hint)
    _preflight_ok.add((python, what, ref))


def saver_preflight(ref: str, scenario_file: str | None, python: str) -> None:
    """A scenario's saver factory must import and return a saver in the racers' Python: built
    once over a temporary folder (``chaos.targets.custom_saver``), refused in one line naming the file."""
    _module_preflight(
        "saver",
        "chaos.targets.custom_saver",
        ref,
        scenario_file,
        python,
        hint="target.saver names package.module:factory; the factory takes a SaverContext and returns a BaseCheckpointSaver",
    )


def _deployed_python(cell: Cell, scenario_file: str) -> str:
    """The interpreter of v2's release (``upgrade_to.target``), built once; a release or requirement
    that does not install is one line naming the field, before any trial (exit 3)."""
    t = cell.scenario.deployed_target
    try:
        return python_for(t.framework, t.version, t.requirements)
    except EnvironmentProblem as exc:
        asked = " ".join([f"{t.framework} {t.version or 'default'}", *t.requirements])
        raise EnvironmentProblem(
            f"{scenario_file}: upgrade_to.target ({asked}) does not install: {exc.message}",
            hint="name a release and requirements that exist on PyPI and install together",
        ) from None


def guard_preflight(ref: str, scenario_file: str | None, python: str) -> None:
    """A scenario's guard must load in the racers' Python (REMIT imports, a factory returns a
    ``Guard``: ``chaos.targets.guards``), refused in one line naming the file."""
    _module_preflight(
        "guard",
        "chaos.targets.guards",
        ref,
        scenario_file,
        python,
        hint="target.guard names a built-in (remit, remit_gate, remit_validator, remit_fork_flag) or package.module:factory returning a Guard",
    )


def preflight(cell: Cell, scenario_file: str | None, python: str, v2_python: str | None = None) -> None:
    """A user's workload factory must import in the racers' interpreter: check once, clearly. A
    kind that deploys v2 of the workload (``Kind.deploys``) gets v2 checked the same way, in v2's
    interpreter when the deploy is also a library release (``v2_python``)."""
    from chaos.kinds import get_kind

    if cell.scenario.target.saver:
        saver_preflight(cell.scenario.target.saver, scenario_file, python)
    if cell.scenario.target.guard and cell.scenario.target.guard not in ("none", "stock"):
        guard_preflight(cell.scenario.target.guard, scenario_file, python)
    _preflight_workload(cell, scenario_file, python, "workload", "v1")
    if get_kind(cell.scenario.kind).deploys:
        field = "upgrade_to.workload" if cell.scenario.upgrade_to.workload else "workload"
        _preflight_workload(deployed_cell(cell), scenario_file, v2_python or python, field, "v2")


def _preflight_workload(cell: Cell, scenario_file: str | None, python: str, field: str, version: str) -> None:
    from chaos.targets import TARGETS

    ref = cell.scenario.workload
    info = TARGETS.get(cell.scenario.target.framework)
    if info is None or ref in info.workloads:
        if info is not None and cell.scenario.effect_fault is not None:  # the faulted effect must be one the workload fires
            preflight_run(cell, scenario_file, python, workload_paths(scenario_file))
        return
    if (python, ref) in _preflight_ok:
        preflight_run(cell, scenario_file, python, workload_paths(scenario_file), version)
        return
    import subprocess

    from chaos.envs import racer_env

    env = racer_env(python, workload_paths(scenario_file))
    code = "import sys; from chaos.workloads import import_factory; import_factory(sys.argv[1])"
    proc = subprocess.run([python, "-c", code, ref], capture_output=True, text=True, env=env, timeout=300)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        from chaos.racer.errors import TargetError

        raise TargetError(
            f"{scenario_file or 'scenario'}: {field}: {ref!r} does not import in the racers' Python: {last}",
            hint="check the module path and that it is importable from the scenario's folder",
        )
    _preflight_ok.add((python, ref))
    preflight_run(cell, scenario_file, python, workload_paths(scenario_file), version)


class RunFailed(ChaosError):
    """The run stopped on a fault outside the framework (disk, database, a bug in chaos); the
    message names it, what the run folder kept, and how to continue."""


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
    work_dir = work_folder(run_dir, run_id, opts.work_in)
    if opts.work_in is not None:
        meta.work_dir = str(work_dir)  # run.json says where the trials' databases were
    with _stop_on_signals() as signals, registry.ActiveRun(run_id, run_dir, work_dir, keep_work=opts.keep_work) as active:
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
        lazy = _lazy_mount(cells, run_id, work_dir, active)  # stopped by _execute's clean-up, first
        outcome = _execute(folder, scenario, cells, opts, prior, run_id, work_dir, storage, journal, active, signals, only, lazy)
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


def _execute(
    folder: RunFolder,
    scenario,
    cells,
    opts,
    prior: StoredTrials,
    run_id,
    work_dir,
    storage,
    journal,
    active,
    signals: SignalState,
    only: set[str] | None = None,
    lazy: LazyMount | None = None,
) -> RunOutcome:
    run_dir = folder.path

    def store_for(cell: Cell, trial_id: str, trial_dir: Path) -> StoreSpec:
        if lazy is not None and cell.scenario.fault in LAZY_FAULTS:  # the store lives on the lazy filesystem
            d = lazy.mount / trial_id.replace("/", "_")
            d.mkdir(exist_ok=True)
            return {"path": str(d / "checkpoints.sqlite")}
        return storage.store_for(cell, trial_id, trial_dir)

    launchers: dict[str, Launcher] = {}

    def launcher_for(cell: Cell, target: TargetSpec | None = None) -> Launcher:
        s = cell.scenario
        t = target or s.target
        key = repr((t.framework, t.version, t.requirements, s.racers.placement, s.racers.start))
        if key not in launchers:
            launcher = make_launcher(
                s.racers.placement,
                python_for(t.framework, t.version, t.requirements),
                run_id,
                extra_paths=workload_paths(folder.meta.scenario_file),
                start=s.racers.start,
            )
            # the run's labels (the launcher gives its racers a temp folder inside the work folder itself)
            registry.label_launcher(launcher, active.env())
            launchers[key] = launcher
        return launchers[key]

    ctx = RunContext(
        run_id=run_id,
        run_dir=run_dir,
        work_dir=work_dir,
        root_seed=scenario.seed,
        launcher=None,  # type: ignore[arg-type]  # set per cell
        ledger_config=storage.ledger_config,
        read_ledger=storage.read_ledger,
        store_for=store_for,
        keep_work=opts.keep_work,
        lazy=lazy,
        prior=prior,
        only=only if only is not None else opts.only,
    )
    failures: dict[int, str] = {}
    interrupted = False
    run_failure: Exception | None = None
    finished_cells: set[int] = set()
    journaled_before = len(prior)
    journaled_now = 0
    try:
        for cell in cells:
            if signals.received:
                raise Interrupted(signals.received[0])
            if opts.on_cell_start:
                opts.on_cell_start(cell, len(cells))
            runner = runner_for(cell.scenario.kind, cell.scenario.target.framework)
            try:
                ctx.launcher = launcher_for(cell)
                deployed = cell.scenario.deployed_target  # a library release between pause and resume: v2's own venv
                ctx.deploy_launcher = launcher_for(cell, deployed) if deployed != cell.scenario.target else None
                valid_seen = False
                for rec in runner(ctx, cell, prior.ids()):
                    signals.armed = False  # journaled <=> counted: no signal between the two
                    journal.append(rec.model_dump(mode="json"))  # masked by the journal
                    if signals.received:
                        raise Interrupted(signals.received[0])
                    signals.armed = True
                    journaled_now += 1
                    if journaled_now % CHECKPOINT_EVERY == 0:
                        checkpoint_ledger(storage.ledger_config)
                    if opts.on_trial:
                        opts.on_trial(rec)
                    valid_seen = valid_seen or rec.valid
                    if rec.errors and not valid_seen and rec.fault != "environment":
                        # the harness itself cannot run this cell (e.g. a workload that raises
                        # while being built): say so once instead of failing every trial; an
                        # environment fault (a lost database) is transient: the trial is repeated
                        failures[cell.index] = f"racers could not run the workload: {rec.errors[0]}"
                        break
            except ChaosError as exc:
                failures[cell.index] = exc.message
                if ctx.launcher is not None:
                    ctx.launcher.reap()
            finished_cells.add(cell.index)
            checkpoint_ledger(storage.ledger_config)
    except (Interrupted, KeyboardInterrupt):
        interrupted = True
    except Exception as exc:  # the disk, the database or chaos itself failed: the run stops here
        run_failure = exc
    finally:
        signals.armed = False
        cleanup: list[Callable[[], object]] = [launcher.reap for launcher in launchers.values()]
        if lazy is not None:  # unmounted once its racers are dead, before the work folder goes
            cleanup.append(lazy.stop)
        # the net under the net: any racer of this run still alive (e.g. started in the instant a
        # signal arrived, before its launcher knew of it) is found by its label and killed
        cleanup.append(lambda: registry._kill_and_wait([pid for pid, _, _ in registry.racer_processes(run_id)]))
        cleanup += [journal.close, lambda: storage.close(keep_schema=opts.keep_work)]
        for step in cleanup:
            try:
                step()
            except Exception as exc:  # one failed step (a database gone) must not skip the others
                run_failure = run_failure or exc
        if not opts.keep_work:
            shutil.rmtree(work_dir, ignore_errors=True)
        else:
            scrub(work_dir)  # kept racer specs and logs hold the DSN: masked once every racer is dead
    interrupted = interrupted or bool(signals.received)
    records = StoredTrials(run_dir / "journal.jsonl")  # the truth (``chaos analyze`` re-scores it the same way)
    if run_failure is not None:
        return _failed(folder, cells, records, failures, finished_cells, run_failure, journaled_before, signals)
    results = analyse_run(cells, records, failures, run_id=run_id, scenario=scenario, seed=scenario.seed)
    if interrupted:
        results.exit_code = EXIT_RUN_FAILED
    try:
        # what each cell's racers actually ran (a version axis asks; this records the answer)
        folder.mark_ended(
            interrupted=interrupted,
            signals=signals.received,
            failures=failures,
            cell_versions={c.cell_id: CellVersions(asked=c.version, ran=c.versions) for c in results.cells},
        )
        write_results(run_dir, results, folder.meta, records)
    except Exception as exc:  # the disk filled as the run ended: the journal has every trial
        _failed(folder, cells, records, failures, {c.index for c in cells}, exc, journaled_before, signals)
    # what chaos.run() returns is what results.json holds: masked (a reason in a pytest failure is a CI log)
    masked = RunResults.model_validate(redact_obj(results.model_dump(mode="json"), keep_numbers=True))
    return RunOutcome(run_dir=run_dir, results=masked, interrupted=interrupted, cells=cells)


def _failed(
    folder: RunFolder,
    cells: list[Cell],
    records: StoredTrials,
    failures: dict[int, str],
    finished_cells: set[int],
    exc: Exception,
    journaled_before: int,
    signals: SignalState,
) -> NoReturn:
    """The run stopped on ``exc``: keep what it measured, say so, raise ``RunFailed``.

    Nothing journaled by this execution: ``execute`` removes a fresh folder. Otherwise every cell
    that did not finish is failed with the reason (a verdict from part of a cell is never
    ``holds``), run.json says ``failed``, and results.json and the reports are written from the
    journal; each write that cannot be made (the disk is full) is named in the message instead."""
    reason = describe(exc)
    if len(records) <= journaled_before:
        raise exc
    for c in cells:
        if c.index not in finished_cells:
            failures.setdefault(c.index, f"the run failed: {reason}")
    lost: list[str] = []
    try:
        results = analyse_run(
            cells,
            records,
            failures,
            run_id=folder.meta.run_id,
            scenario=Scenario.model_validate(folder.meta.scenario),
            seed=folder.meta.seed or 0,
        )
        results.exit_code = EXIT_RUN_FAILED
        folder.meta.failed = reason
        folder.mark_ended(
            interrupted=False,
            signals=signals.received,
            failures=failures,
            cell_versions={c.cell_id: CellVersions(asked=c.version, ran=c.versions) for c in results.cells},
        )
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


def rerun(run_dir: Path, trial_ids: list[str], opts: RunOptions | None = None) -> tuple[RunOutcome, list[dict]]:
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
            cells=_run_cells(cells),
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


def compare_reruns(before: RunResults, now: RunResults, trial_ids: list[str], points: dict[str, str | None]) -> list[dict]:
    """Per re-run trial, its verdicts then and now. A sweep's trial is judged at its kill point (the
    point's verdicts: the cell's verdict in the re-run covers only the points it re-ran, so it is no
    comparison); any other trial by the cell verdicts whose evidence names it."""
    now_cells = {c.cell_index: c for c in now.cells}
    comparison: list[dict] = []
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


def analyse_stored(run_dir: Path) -> RunResults:
    return analyse_loaded(*load_run(run_dir)[:4])


def analyse_loaded(meta: RunMeta, scenario: Scenario, cells: list[Cell], records: StoredTrials | Iterable[TrialRecord]) -> RunResults:
    """What the run concluded, recomputed from its stored records (same rules as ``execute``)."""
    failures = {int(k): v for k, v in meta.failures.items()}
    results = analyse_run(cells, records, failures, run_id=meta.run_id, scenario=scenario, seed=scenario.seed)
    if meta.interrupted or meta.failed:
        results.exit_code = EXIT_RUN_FAILED
    return results


def wall_clock() -> float:
    return time.time()
