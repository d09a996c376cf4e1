"""The machinery every trial shares: racer specs, waiting on barriers, kills, and the record.

A ``TrialRun`` is one trial in the making. It builds racer specs for the trial's racers, starts
them through the launcher, waits (observing, never sleeping as synchronisation) for barrier
arrivals and exits, kills and confirms kills, and turns what happened into a ``TrialRecord``
with a Jepsen-style history. Every wait is capped by the scenario's ``timeout_s``; a racer that
exceeds it is killed and its call recorded as ``info``.

Every racer that failed is blamed as it is collected (``chaos.running.blame``): chaos remembers
which racers it killed itself, so a racer that died of anyone else's signal is an environment
fault. A trial with a fault that is not the framework's (environment, harness, app) is recorded
invalid with that fault as its reason, whatever its kind concluded: a verdict rests only on trials
where every failure was the framework's and every kill chaos's own.

A racer chaos killed is judged on its barrier record too: a store call that failed for the
environment's sake before the kill (``store_failed_before_kill``) means the store at the kill lacks
what the racer ran on past, so the trial is an environment fault, not evidence. A full disk is no
transient fault: ``record`` raises ``NoSpace`` (exit 3, the full folder named) before the trial is
journaled, and a resume runs it again.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from chaos.envs import python_for, requirement_names
from chaos.launchers import ExitStatus, ForgetsHandles, Launcher, Named, RacerHandle, WaitsForChange
from chaos.racer.protocol import NO_SPACE_EXIT, ActionSpec, ErrorInfo, LedgerSpec, RacerResult, RacerSpec, StoreSpec, TargetSpec
from chaos.records import BarrierEvent, Op, RacerOutcome, TrialRecord
from chaos.running.blame import (
    Blame,
    blame_after_background,
    blame_build,
    blame_error,
    blame_no_space,
    blame_signal,
    blame_stalled,
    worst,
)
from chaos.running.jobs import FanOut, run_independent, wanted_jobs
from chaos.scenario.model import Cell
from chaos.scenario.model import TargetSpec as Target
from chaos.scenario.seeds import derive
from chaos.targets import HostContext, get_target

if TYPE_CHECKING:
    from chaos.running.services import ServicePool
    from chaos.running.stored import StoredTrials


def _error_text(err: ErrorInfo | None) -> str:
    """``type: message`` of an error as the history records it (``None: None`` if there is none)."""
    return f"{err.get('type')}: {err.get('message')}" if err else "None: None"


def _traceback_of(result: RacerResult | None, died: list | None = None) -> str | None:
    """The traceback of the racer's error (its build error, else its last failed action's, else that of
    the first of its threads that ``died``), at most 4000 characters."""
    result = result or RacerResult()
    errs = [result.get("error")] + [o.get("error") for o in reversed(result.get("outcomes") or []) if o.get("status") == "error"]
    errs += list(died or [])
    tb = next((e.get("traceback") for e in errs if e and e.get("traceback")), None)
    return tb[-4000:] if tb else None


class FaultFs(Protocol):
    """A filesystem that can lose power under one trial's store folder (``chaos.lazyfs.LazyMount``)."""

    below: Path  # the folder that holds what was synced (a full disk there stops the run)
    mount: Path  # where the trials' store folders are

    def power_loss(self, prefix: str = "") -> dict[str, object]: ...

    def durable_image(self, prefix: str, dest: Path, *, torn: bool = False, keep: int | None = None) -> dict[str, object]: ...

    def torn(self, prefix: str = "", keep: int | None = None) -> dict[str, object]: ...

    def forget(self, prefix: str) -> dict[str, object]: ...


@dataclass
class RunContext:
    """What every trial of a run needs: ids, folders, the launcher and the ledger."""

    run_id: str
    run_dir: Path
    work_dir: Path
    root_seed: int
    launcher: Launcher
    ledger_config: LedgerSpec
    read_ledger: Callable[[str], list[dict]]
    store_for: Callable[[Cell, str, Path], StoreSpec]
    keep_work: bool = False
    prior: Mapping[str, TrialRecord] | StoredTrials = field(default_factory=dict)  # journaled already: ``get(trial_id)``
    # copies effect rows into the ledger under another trial's id (a recorded crash state's rows
    # become its point trial's: ``chaos.kinds.crash_states``); None: this run cannot (kill mode only)
    copy_ledger: Callable[[list[dict], str], None] | None = None
    only: set[str] | None = None  # re-run just these trial ids (``chaos rerun``)
    lazy: FaultFs | None = None  # the run's lazy filesystem, when a cell's fault is power_loss or torn
    deploy_launcher: Launcher | None = None  # v2's racers, when a deploy is also a library release (``upgrade_to.target``)
    # before a repeat an environment fault forces: wait (bounded, said on the terminal) for the run's
    # own database to answer, or stop the run (``chaos.running.pgstore.RunStorage.await_database``)
    await_store: Callable[[str], None] | None = None
    labels: Mapping[str, str] = field(default_factory=dict)  # the run's labels, carried by every process it starts
    search: list[str] = field(default_factory=list)  # where a team's modules and files are looked up (cwd, the scenario's folder)
    # the service the cell's racers are clients of (``chaos.targets.hooks.HostsCells``), while one runs
    service_url: str | None = None
    jobs: int = 0  # trials at once (``--jobs``); 0: CHAOS_JOBS, else what the machine has (``chaos.running.jobs.wanted_jobs``)
    # how this cell's independent trials may run at once (``chaos.running.jobs``); None: one after another
    fan_out: FanOut[RunContext] | None = None

    @property
    def width(self) -> int:
        """How many trials of this run may run at once (``--jobs``, else what the machine has)."""
        return self.jobs or wanted_jobs()

    def independent(self, tasks: list[Task]) -> Iterator[TrialRecord]:
        """The records of ``tasks``, trials a kind declares independent of each other (each its
        own folder, store, thread and ledger rows): run ``--jobs`` at a time where the cell allows
        (``fan_out``), else one after another; yielded as they end (``chaos.running.jobs``)."""
        return run_independent(self, tasks, None if self.service_url is not None else self.fan_out)

    def expect_independent(self) -> None:
        """Say, before work that must come first (a sweep's dry run), that independent trials follow:
        each other job slot's fork server starts now and imports the framework while that work runs,
        instead of after it, when its first trial waits for it (``FanOut.start_ahead``)."""
        if self.fan_out is not None and self.service_url is None:
            self.fan_out.start_ahead()

    # the run's services kept between cells (``chaos.running.services``); None: each cell starts and stops its own
    services: ServicePool | None = None

    def host_context(self, cell: Cell) -> HostContext:
        """What a framework's host needs to start the cell's service: handed over, never looked up."""
        t = cell.scenario.target
        python = python_for(t.framework, t.version, t.requirements)
        return HostContext(python, self.work_dir, dict(self.labels), list(self.search), self.ledger_config, keep=self.keep_work)

    def wants(self, trial_id: str, skip: set[str]) -> bool:
        """Should this trial run now: not journaled already, and asked for (if a subset is)?"""
        return trial_id not in skip and (self.only is None or trial_id in self.only)


Task = Callable[[RunContext], Iterator[TrialRecord]]  # one independent trial (its attempts), run with a job slot's context


def wait_until(pred: Callable[[], bool], timeout: float, idle: Callable[[float], None] | None = None) -> bool:
    """Observe ``pred`` until it holds or ``timeout`` passes (short, growing polling intervals).

    ``idle(seconds)`` is how to pass the time between two looks: by default a sleep; a launcher
    whose racers report their state changes (the warm launcher) returns as soon as one arrives.
    """
    deadline = time.monotonic() + timeout
    delay = 0.0002
    pause = idle or time.sleep
    while not pred():
        if time.monotonic() >= deadline:
            return False
        pause(delay)
        delay = min(delay * 1.5, 0.005)
    return True


def racer_target(target: Target) -> TargetSpec:
    """The spec's ``target``: the scenario's, with the adapter module its racers import
    (``TargetInfo.module``), so a racer never asks its own registry for it: a framework registered in
    the orchestrator alone (``register_target``) runs racers too."""
    return cast(TargetSpec, {**target.model_dump(), "module": get_target(target.framework).module})


@dataclass
class TrialRun:
    ctx: RunContext
    cell: Cell
    trial_id: str
    point: str | None = None
    rep: int = 0
    history: list[Op] = field(default_factory=list)
    barriers: list[BarrierEvent] = field(default_factory=list)
    outcomes: list[RacerOutcome] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    observations: dict[str, Any] = field(default_factory=dict)
    handles: list[RacerHandle] = field(default_factory=list)
    killed: set[str] = field(default_factory=set)  # racer ids chaos itself killed
    retry_of: str | None = None  # the trial an environment fault made this one repeat
    seed_id: str | None = None  # the id the trial's seed derives from (a retry keeps its original's)
    # racers whose app errors are what the kind measures (code of another version resuming this
    # thread): recorded and blamed as usual, but they do not make the trial invalid
    measures_app: set[str] = field(default_factory=set)
    # racers whose lost database connection is what the kind measures (``fault: db_disconnect``: chaos
    # terminated it): blamed as usual, but such an environment fault does not make the trial invalid
    measures_env: set[str] = field(default_factory=set)
    disk_full: str | None = None  # how a racer of this trial found the disk full (the run stops: ``record``)
    # the trial whose thread this one continues (None: its own). A recorded crash state's recovery
    # (``chaos.kinds.crash_states``) resumes the recording's thread from a copy of its store, in this
    # trial's own folder: the thread id (and the file names an adapter derives from it) are the recording's
    thread_of: str | None = None

    def __post_init__(self) -> None:
        self.seed = derive(self.ctx.root_seed, self.cell.id, self.seed_id or self.trial_id)
        self.thread_id = f"{self.ctx.run_id}-{self.thread_of or self.trial_id}"
        self.dir = self.ctx.work_dir / self.trial_id.replace("/", "_")
        self.barrier_dir = self.dir / "barriers"
        self.barrier_dir.mkdir(parents=True, exist_ok=True)
        self.store_folder = self.trial_id.replace("/", "_")  # the store's folder on a lazy filesystem
        self.store = self.ctx.store_for(self.cell, self.trial_id, self.dir)
        self.t0 = time.time()
        self.m0 = time.monotonic()

    @property
    def timeout(self) -> float:
        return self.cell.scenario.timeout_s

    def wait_until(self, pred: Callable[[], bool]) -> bool:
        """``wait_until`` with the trial's timeout, idling the way the launcher knows best."""
        launcher = self.ctx.launcher
        return wait_until(pred, self.timeout, launcher.wait_change if isinstance(launcher, WaitsForChange) else None)

    def spec(
        self,
        racer_id: str,
        *,
        actions: list[ActionSpec] | None = None,
        armed: tuple[str, ...] = (),
        armed_like: tuple[str, ...] = (),
        gate: bool = False,
        inspect_before: bool = False,
        inspect_after: bool = False,
        hold: bool = False,
        effect_fault: bool = False,
        measure_store: bool = False,
        afterwards: list[ActionSpec] | None = None,
        counts: dict[str, int] | None = None,
    ) -> RacerSpec:
        """The spec of one racer of this trial (``chaos.racer.protocol.RacerSpec``); with
        ``effect_fault``, the scenario's effect fault is armed in it; ``armed_like``, it also stops at
        every boundary whose id contains one of these (``""``: at all); ``afterwards``, it performs
        these once continued from its ``afterwards`` barrier (``wait_exit_or_at``); ``counts``, it numbers
        its boundaries on from these occurrences (a life another racer began: ``chaos.kinds.baseline``)."""
        s = self.cell.scenario
        spec: RacerSpec = {
            "run_id": self.ctx.run_id,
            "cell_id": self.cell.id,
            "trial_id": self.trial_id,
            "racer_id": racer_id,
            "target": racer_target(s.target),
            "distributions": [*get_target(s.target.framework).distributions, *requirement_names(s.target.requirements)],
            "workload": s.workload,
            "workload_params": s.workload_params,
            "thread_id": self.thread_id,
            "store": self.store,
            "ledger": self.ctx.ledger_config,
            "barrier": {"dir": str(self.barrier_dir), "armed": list(armed)},
            "gate": gate,
            "hold": hold,
            "jitter_ms": s.jitter_ms if gate else 0,
            "seed": derive(self.seed, racer_id),
            "actions": actions or [],
            "inspect_before": inspect_before,
            "inspect_after": inspect_after,
            "result_path": str(self.dir / f"result-{racer_id}.json"),
        }
        if effect_fault and s.effect_fault is not None:
            spec["effect_fault"] = {"task": s.effect_fault.task, "times": s.effect_fault.times}
        if s.fault == "db_disconnect":  # the racer's own name (pg_stat_activity's application_name), to find its connections by
            spec["store"] = {**self.store, "application_name": application_name(self.thread_id, racer_id)}
        if measure_store:
            spec["measure_store"] = True
        if self.ctx.service_url is not None:
            spec["service_url"] = self.ctx.service_url
        if armed_like:
            spec["barrier"]["armed_like"] = list(armed_like)
        if counts:
            spec["barrier"]["counts"] = dict(counts)
        if afterwards:
            spec["afterwards"] = afterwards
        return spec

    # ------------------------------------------------------------------ racers

    def start(self, specs: list[RacerSpec]) -> list[RacerHandle]:
        handles = self.ctx.launcher.start_group(cast(list[dict], specs), str(self.dir))
        self.handles.extend(handles)
        return handles

    def wait_arrival(self, h: RacerHandle, barrier: str) -> bool:
        """True when ``h`` stands stopped at ``barrier``; False if it exited or timed out first."""

        def there() -> bool:
            st = h.state()
            if st == "exited":
                return True
            return st == "stopped" and any(a["barrier"] == barrier for a in h.arrivals())

        self.wait_until(there)
        arrived = h.state() == "stopped" and any(a["barrier"] == barrier for a in h.arrivals())
        if arrived:
            a = next(a for a in h.arrivals() if a["barrier"] == barrier)
            self.barriers.append(BarrierEvent(racer_id=h.racer_id, barrier=barrier, action="arrived", t_mono_ns=a["t_mono_ns"]))
        return arrived

    def release(self, h: RacerHandle, barrier: str) -> None:
        """Continue ``h`` from the barrier it stands at (e.g. a held racer whose turn has come)."""
        h.release()
        self.barriers.append(BarrierEvent(racer_id=h.racer_id, barrier=barrier, action="released", t_mono_ns=time.monotonic_ns()))

    def kill(self, h: RacerHandle, barrier: str | None = None) -> ExitStatus | None:
        """SIGKILL ``h`` (a signal chaos sends: never blamed on the environment)."""
        self.killed.add(h.racer_id)
        status = h.kill()
        if barrier is not None:
            self.barriers.append(BarrierEvent(racer_id=h.racer_id, barrier=barrier, action="killed", t_mono_ns=time.monotonic_ns()))
        return status

    def wait_exit(self, handles: list[RacerHandle]) -> list[RacerHandle]:
        """Wait for every handle to exit; kill those that do not within the timeout (returned)."""
        self.wait_until(lambda: all(h.state() == "exited" for h in handles))
        hung = [h for h in handles if h.state() != "exited"]
        for h in hung:
            self.killed.add(h.racer_id)
            h.kill()
        return hung

    def stands_at(self, h: RacerHandle, barrier: str) -> bool:
        """Is ``h`` stopped at ``barrier`` (its arrival recorded)?"""
        return h.state() == "stopped" and any(a["barrier"] == barrier for a in h.arrivals())

    def wait_exit_or_at(self, handles: list[RacerHandle], barrier: str) -> list[RacerHandle]:
        """Wait until every handle has exited or stands at ``barrier`` (its arrival recorded); kill
        those that do neither within the timeout (returned), as ``wait_exit`` does."""
        self.wait_until(lambda: all(h.state() == "exited" or self.stands_at(h, barrier) for h in handles))
        hung = []
        for h in handles:
            if h.state() == "exited":
                continue
            there = next((a for a in h.arrivals() if a["barrier"] == barrier), None) if h.state() == "stopped" else None
            if there is not None:
                self.barriers.append(BarrierEvent(racer_id=h.racer_id, barrier=barrier, action="arrived", t_mono_ns=there["t_mono_ns"]))
                continue
            hung.append(h)
            self.killed.add(h.racer_id)
            h.kill()
        return hung

    def collect(
        self, h: RacerHandle, role: str, f: str, value: object = None, *, killed_on_purpose: bool = False, hung: bool = False
    ) -> RacerOutcome:
        """Record the racer's exit and result, and its call as invoke + ok/fail/info."""
        st: Literal["ok", "harness_error", "killed", "timeout", "crashed"]
        op: Literal["ok", "fail", "info"]
        detail: str | None
        status = h.exit_status()
        result = cast("RacerResult | None", h.result())
        # threads of it that died of an exception: in its result, else in the file it wrote as they died
        died = (result.get("background_errors") or []) if result else h.background_errors()
        self.history.append(
            Op(racer_id=h.racer_id, type="invoke", f=f, value=value, t_mono_ns=result.get("t_invoke_mono_ns") if result else None)
        )
        blame: Blame | None = None
        s = self.cell.scenario
        if hung:
            st, op, detail = "timeout", "info", f"no exit within {self.timeout}s: killed"
            # it had written its result: a workflow that stalled while the framework retried a lost
            # database, whose threads then kept the process alive (DBOS's, at exit), is the environment's
            outs = (result.get("outcomes") or []) if result else []
            blame = blame_stalled(outs[-1]) if outs else None
        elif killed_on_purpose:
            confirmed = bool(status and status.killed)
            st, op, detail = "killed", "info", "SIGKILLed at its barrier" + ("" if confirmed else " (kill NOT confirmed)")
            blame = store_failed_before_kill(h.arrivals(), s.target.framework, s.workload)
        elif result is None or (status is not None and status.signal is not None):
            st, op, detail = "crashed", "info", f"exit {status}, no result; log: {h.log_tail()[-300:]}"
            if status is not None and status.signal is not None and h.racer_id not in self.killed:
                blame = blame_signal(status.signal)
            elif status is not None and status.code == NO_SPACE_EXIT and h.racer_id not in self.killed:
                blame = blame_no_space(h.racer_id, status.code)
            elif h.racer_id not in self.killed:
                then = f"racer {h.racer_id} exited ({status}) without a result"
                blame = blame_after_background(died, s.target.framework, s.workload, then) or Blame("harness", f"harness error: {then}")
        elif result.get("status") == "harness_error":
            st, op = "harness_error", "info"
            detail = _error_text(result.get("error"))
            err = result.get("error")
            blame = blame_build(err, s.target.framework, s.workload) if err else Blame("harness", f"harness error: {detail}")
            if blame.party == "harness":  # chaos's code raised, but maybe only after a thread of the framework's (or app's) died
                then = f"racer {h.racer_id} failed: {detail}"
                blame = blame_after_background(died, s.target.framework, s.workload, then) or blame
            if blame.party != "framework":  # the framework's failure is no error of the run
                self.errors.append(f"racer {h.racer_id}: {blame.reason if blame.party == 'app' else detail}")
        else:
            outs = result.get("outcomes") or []
            last = outs[-1] if outs else None
            if last is not None and last.get("status") in ("error", "refused"):  # refused: a guard turned it away
                st, op, detail = "ok", "fail", _error_text(last.get("error"))
            else:
                st, op, detail = "ok", "ok", last.get("status") if last is not None else None
            errs = [e for o in outs if o.get("status") == "error" and (e := o.get("error"))]
            blames = [blame_error(e, s.target.framework, s.workload) for e in errs]
            blame = worst(blames) or (blames[-1] if blames else None)
            if blame is None and last is not None:  # unfinished, with no error raised, while the database was lost
                blame = blame_stalled(last)
        self.history.append(
            Op(racer_id=h.racer_id, type=op, f=f, value=value, detail=detail, t_mono_ns=result.get("t_return_mono_ns") if result else None)
        )
        if blame is not None and blame.disk_full and self.disk_full is None:
            self.disk_full = f"racer {h.racer_id}: {blame.reason}"
        out = RacerOutcome(
            racer_id=h.racer_id,
            role=role,
            pid=h.pid,
            host=result.get("host", h.host) if result else h.host,
            exit_code=status.code if status else None,
            signal=status.signal if status else None,
            status=st,
            kill_confirmed=(bool(status and status.killed) if killed_on_purpose else None),
            result=cast("dict[str, Any] | None", result),
            blame=blame.party if blame else None,
            blame_reason=blame.reason if blame else None,
            blame_traceback=_traceback_of(result, died) if blame is not None and blame.party == "app" else None,
        )
        self.outcomes.append(out)
        return out

    # ------------------------------------------------------------------ record

    def fault(self) -> Blame | None:
        """The fault, not the framework's, that makes this trial invalid (None if there is none)."""
        return worst(
            Blame(o.blame, o.blame_reason or o.blame)
            for o in self.outcomes
            if o.blame
            and not (o.blame == "app" and o.racer_id in self.measures_app)
            and not (o.blame == "environment" and o.racer_id in self.measures_env)
        )

    def record(self, *, valid: bool, invalid_reason: str | None = None, fault_fired: bool | None = None) -> TrialRecord:
        """The trial's record. A fault that is not the framework's overrides ``valid``: the trial
        is invalid with the racer and the fault as its reason (the kind's own reason follows)."""
        fault = self.fault()
        if fault is not None and fault.party in ("environment", "harness"):
            self.stop_if_disk_full(fault)  # a racer that failed on a full disk, however it showed it
        if fault is not None:
            who = next(o.racer_id for o in self.outcomes if o.blame_reason == fault.reason or o.blame == fault.party)
            invalid_reason = f"racer {who}: {fault.reason}" + (f" (then: {invalid_reason})" if invalid_reason else "")
            valid = False
        ledger = self.ctx.read_ledger(self.trial_id)
        self.observations.setdefault("launcher", self.ctx.launcher.name if isinstance(self.ctx.launcher, Named) else None)
        rec = TrialRecord(
            run_id=self.ctx.run_id,
            cell_index=self.cell.index,
            cell_id=self.cell.id,
            trial_id=self.trial_id,
            point=self.point,
            rep=self.rep,
            seed=self.seed,
            kind=self.cell.scenario.kind,
            thread_id=self.thread_id,
            valid=valid,
            invalid_reason=invalid_reason,
            fault=fault.fault if fault is not None else None,
            retry_of=self.retry_of,
            fault_fired=fault_fired,
            history=self.history,
            barriers=self.barriers,
            racers=self.outcomes,
            ledger=ledger,
            observations=self.observations,
            errors=self.errors,
            t_start_wall=self.t0,
            wall_s=time.monotonic() - self.m0,
        )
        return rec

    def stop_if_disk_full(self, fault: Blame) -> None:
        """A full disk stops the run (``NoSpace``, exit 3) before this trial is journaled, so a resume
        re-runs it once there is room: repeating it on the same full disk would only spoil its repeats.
        Full means a racer said so (``disk_full``) or, for another environment or harness fault (a
        lazy filesystem answers ENOSPC below it with "disk I/O error"; a warm racer that could not
        open its log dies without a result), one of the run's folders has (almost) no space left."""
        folders = [self.ctx.run_dir, self.ctx.work_dir] + ([self.ctx.lazy.below] if self.ctx.lazy is not None else [])
        full = fullest(folders)
        if self.disk_full is None and (full is None or full[1] >= FULL_BELOW):
            return
        where, free = full if full is not None else (self.ctx.work_dir, -1)
        how = self.disk_full or f"racer {next((o.racer_id for o in self.outcomes if o.blame == fault.party), '?')}: {fault.reason}"
        room = f", {free // 1024} KiB free" if free >= 0 else ""
        raise NoSpace(errno.ENOSPC, f"no space left on device{room} (trial {self.trial_id}, {how})", str(where))

    def cleanup(self) -> None:
        for h in self.handles:
            if h.state() != "exited":
                self.killed.add(h.racer_id)
                h.kill()
        if isinstance(self.ctx.launcher, ForgetsHandles):
            self.ctx.launcher.forget(self.handles)  # a long run keeps no handle of a finished trial
        if self.ctx.lazy is not None and self.cell.scenario.fault in ("power_loss", "torn"):
            with contextlib.suppress(Exception):  # the filesystem's cache keeps only live trials
                self.ctx.lazy.forget(self.store_folder)
        if not self.ctx.keep_work:
            shutil.rmtree(self.dir, ignore_errors=True)


def application_name(thread_id: str, racer_id: str) -> str:
    """A racer's Postgres ``application_name``: unique to its trial and racer, within Postgres's 63 bytes."""
    digest = hashlib.sha1(f"{thread_id}/{racer_id}".encode()).hexdigest()[:16]
    return f"chaos-{digest}-{racer_id}"[:63]


FULL_BELOW = 256 * 1024  # bytes available under which a folder's file system counts as full


class NoSpace(OSError):
    """The run stops: a folder it writes to (``filename``) is on a full file system. An ``OSError``
    (``ENOSPC``), so the run fails the way any full disk fails it: one line, exit 3, the journal kept."""


def fullest(folders: list[Path]) -> tuple[Path, int] | None:
    """The folder, of those that exist, whose file system has the least space available to chaos
    (bytes), or None if none can be asked."""
    out: tuple[Path, int] | None = None
    for folder in folders:
        try:
            st = os.statvfs(folder)
        except OSError:
            continue
        free = st.f_bavail * st.f_frsize
        if out is None or free < out[1]:
            out = (Path(folder), free)
    return out


def store_failed_before_kill(arrivals: list[dict], framework: str, workload: str = "") -> Blame | None:
    """An environment fault when a store call of a racer chaos killed had failed for the
    environment's sake (a terminated database backend, a full disk) before the kill. The barrier
    record then contradicts the store: the racer ran on past that write (the framework had not
    raised its error yet, or swallowed it), but the store at the kill lacks it, so what the next
    racer finds there (and does again) is the environment's doing, not the framework's. The last
    arrival record carries every store failure of the racer before it (``BarrierClient.failed``)."""
    last = arrivals[-1] if arrivals else {}
    for err in last.get("store_errors") or []:
        b = blame_error(cast(ErrorInfo, err), framework, workload)
        if b.party == "environment":
            where = f"store call {err.get('call')}, before the kill at {last.get('barrier')}"
            return Blame("environment", f"{b.reason} ({where})", disk_full=b.disk_full)
    return None


def retry_id(trial_id: str, attempt: int) -> str:
    """The id of the ``attempt``-th repeat of a trial an environment fault spoiled (0: the trial itself).
    A dry run's repeat still ends in ``-dry`` (``c000-e1-dry``), so every reader still finds it."""
    if attempt == 0:
        return trial_id
    if trial_id.endswith("-dry"):
        return f"{trial_id[: -len('-dry')]}-e{attempt}-dry"
    return f"{trial_id}-e{attempt}"


def attempts(
    ctx: RunContext, cell: Cell, trial_id: str, skip: set[str], body: Callable[[TrialRun], TrialRecord], **run: Any
) -> Iterator[TrialRecord]:
    """Run one trial, and repeat it while an environment fault spoils it, at most ``env_retries``
    times in this execution: a transient fault (a terminated database backend, a racer the OOM
    killer took) costs a repeat, never the trial. Every attempt is yielded (and journaled): a
    spoiled one counts as an environment trial. A resumed run continues after the spoiled attempts
    it finds journaled, with a budget of its own: trials an outage spoiled are run again by
    ``--resume``. Before a repeat, the run's own database must answer (``RunContext.await_store``)."""
    attempt = ran = 0
    while ran <= cell.scenario.env_retries:
        tid = retry_id(trial_id, attempt)
        if tid in skip:
            done = ctx.prior.get(tid)
            if done is not None and done.fault == "environment":
                attempt += 1
                continue  # journaled already, and spoiled: its repeat may still be due
            return
        if attempt == 0 and not ctx.wants(tid, skip):
            return
        if attempt > 0 and ctx.await_store is not None:
            ctx.await_store(tid)
        rec = _attempt(ctx, cell, trial_id, attempt, body, run)
        attempt, ran = attempt + 1, ran + 1
        yield rec
        if rec.fault != "environment":
            return


def repeats(ctx: RunContext, cell: Cell, trial_id: str, body: Callable[[TrialRun], TrialRecord], **run: Any) -> Iterator[TrialRecord]:
    """The repeats (attempts 1 to ``env_retries``) an environment fault forces after a trial's first
    attempt ran elsewhere (a recorded crash state is spent by its recovery, so its repeats run
    ``body``, kill mode's): each yielded, until one is not spoiled."""
    for attempt in range(1, cell.scenario.env_retries + 1):
        if ctx.await_store is not None:
            ctx.await_store(retry_id(trial_id, attempt))
        rec = _attempt(ctx, cell, trial_id, attempt, body, run)
        yield rec
        if rec.fault != "environment":
            return


def _attempt(
    ctx: RunContext, cell: Cell, trial_id: str, attempt: int, body: Callable[[TrialRun], TrialRecord], run: dict[str, Any]
) -> TrialRecord:
    trial = TrialRun(ctx, cell, retry_id(trial_id, attempt), retry_of=trial_id if attempt else None, seed_id=trial_id, **run)
    try:
        return body(trial)
    finally:
        trial.cleanup()
