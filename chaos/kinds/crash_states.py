"""Crash states from one run: every kill point of a sweep from one recording, as ALICE and CrashMonkey do.

Why: a kill sweep (``chaos.kinds.sweep``) runs, per kill point, a fresh victim through the whole
prefix to the point and SIGKILLs it there: N points cost N prefix runs. What a SIGKILL at a barrier
leaves is the store's files as the kernel has them (the page cache outlives the process) and the
effect rows the victim committed. A process frozen at that barrier (``chaos.racer.barrier`` stops
every thread with SIGSTOP) has exactly those bytes in exactly those files. So with
``crash_states: recorded`` one *recording* victim, armed at every kill point, is frozen at each in
turn; chaos copies the trial folder's store files (a SQLite database with its ``-wal`` and ``-shm``,
an adapter's own files: everything but the barrier, result, spec and log files of chaos) and the
ledger rows fired so far, then continues it (SIGCONT) to the next point.

Each captured state is then one kill point's trial, with the id kill mode gives it
(``c000-p003-r000``): a folder of its own holding the copy, the rows copied into the run's ledger
under its trial id (``append_once`` and ``read_ledger`` see them as its own), and a fresh resumer
(the sweep's resume action, with ``inspect_before`` / ``inspect_after``) on the recording's thread
(``TrialRun.thread_of``). Resumers of different points run at once, at most ``os.cpu_count()``;
their records come in kill mode's order (point, then repeat) and are judged as kill mode's are. A
recovered trial carries ``observations["crash_state"]`` (the recording, the barrier) instead of a
kill: the run's trial summary counts it under ``recorded_states``, not as a confirmed kill.

What it promises: a recorded point's crash state is byte for byte the one a SIGKILL at that
barrier of that run leaves, where the adapter declares the backend's store to be files in the
trial's folder (``TargetInfo.capturable_backends``). Where that is not so the cell runs in kill
mode and its results.json says why (``CellResult.crash_states``): a store behind a socket
(Postgres, a server) or one not declared, a fault that kills nothing (db_disconnect, db_restart's
restart), racers on another machine, and a workload whose dry run wrote from two threads at once (``concurrent_writes``:
each recorded state would be exact, but of a run the recording's stops reordered). A point the
recording never stopped at (a workload whose boundaries differ run to run), or one whose store
calls had failed for the environment's sake before it, runs in kill mode; so does the repeat an
environment fault forces. results.json then says ``mixed`` and lists them.

``fault: power_loss`` and ``torn``: the store lives on the lazy filesystem, and a point's crash
state is its durable image (only what was fsynced, as ALICE's persistence model takes it; torn: with
half the last pending write) with the filesystem's account of what the fault there loses; the recovery runs on a plain-folder copy and is judged as
a killed trial (``chaos.kinds.durable_states``).

Crashes during recovery (``crash_depth`` >= 2) are recorded by ``chaos.kinds.crash_chains``, from these recordings.

``crash_states: auto`` is recorded where ``not_recorded`` finds nothing against it, else kill: a
scenario can ask for it across a matrix of backends and read per cell what was used.

Repeats: repeat r of every point comes from recording r (``c000-rec000``), a victim run of its own,
so where crash states differ run to run (parallel branches) they are sampled as kill mode samples them.

Rerun and resume re-record: ``chaos rerun`` of a recorded point, or a resumed run that finds points
not journaled, runs a new recording armed at just those points (``c000-rec000-2`` when
``c000-rec000`` is journaled already). A recording's crash states live in the work folder only
while its cell runs. A recording is journaled as a trial (its victim's outcome, the points it
stopped at, the fallbacks) and never judged, like a dry run.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from chaos.kinds import durable_states
from chaos.kinds.sweep_options import SweepOptions
from chaos.launchers import RacerHandle
from chaos.racer.protocol import ActionSpec, RacerResult, TraceEntry
from chaos.records import BarrierEvent, CrashStates, TrialRecord
from chaos.running.trial import RunContext, TrialRun, attempts, retry_id, store_failed_before_kill
from chaos.scenario.model import Cell
from chaos.targets import get_target

# a recording (c000-rec000), or a recovery's recording of its own states (c000-p003-rec001,
# c000-p003-q001-rec000: chaos.kinds.crash_chains)
RECORDING = re.compile(r"^c\d{3,}(?:-[pq]\d{3,})*-rec\d{3,}(?:-\d+)?$")
# what chaos itself keeps in a trial's folder: never part of the store's crash state
HARNESS_FILES = ("barriers", "result-*", "racer-*.log", "spec-*.json")


def is_recording(trial_id: str) -> bool:
    """Is this a recording trial (``c000-rec000``): journaled, never judged?"""
    return RECORDING.match(trial_id) is not None


@dataclass(frozen=True)
class SweepSteps:
    """What a recorded sweep borrows from the sweep that runs it (``chaos.kinds.sweep``)."""

    actions: list[ActionSpec]  # the workload's whole life (the recording runs it)
    resume: ActionSpec  # each point's recovery
    finish_resume: Callable[[TrialRun, RacerHandle, ActionSpec], tuple[RacerResult, TrialRecord | None]]
    prepare: Callable[[TrialRun, str], None]  # what a point's trial carries to be judged (baseline, AA)
    kill_body: Callable[[str], Callable[[TrialRun], TrialRecord]]  # kill mode's trial at a point


@dataclass(frozen=True)
class Captured:
    """One crash state: the store's files (moved into the point's trial when it runs) and the rows."""

    recording: str  # the recording trial's id, whose thread the recovery resumes
    barrier: str
    folder: Path
    rows: list[dict]
    t_capture_ms: float
    fault: dict | None = None  # a power-loss state's account of what was lost (``chaos.kinds.durable_states``)


def not_recorded(cell: Cell) -> str | None:
    """Why this cell's crash states cannot be recorded exactly (None: they can). Static: ``chaos
    analyze`` reads the same answer from the cell alone."""
    s = cell.scenario
    opts = SweepOptions.of(s)
    if opts.fault != "kill" and durable_states.durable_fault(cell) is None:
        return f"fault {opts.fault}: its crash state is not what a frozen process's files are (kept in kill mode for now)"
    if s.racers.placement != "local":
        return "racers on another machine or in a container: chaos cannot copy their store's files as they stand"
    backend = "saver" if s.target.saver else s.target.backend
    if backend not in get_target(s.target.framework).capturable_backends:
        return (
            f"the {s.target.framework} adapter does not declare backend {backend!r} capturable (its store is not only files "
            "in the trial's folder: behind a socket, in the process, or not verified)"
        )
    return None


def concurrent_writes(dry: TrialRecord) -> str | None:
    """What the dry run found against recording (``writes_at_once`` of its trace, kept in its
    observations as it ran: the journal's records are read back without racers' traces)."""
    why = dry.observations.get("concurrent_writes")
    return str(why) if why else None


def writes_at_once(trace: list[TraceEntry]) -> str | None:
    """Why a dry run's ``trace`` says a recording would not sample the executions a victim does (None: it
    would): two threads inside the store's writes at once (one between its ``:before`` and ``:after``
    when another passes a boundary). A recording stops at every point, and a thread that meets the
    barrier lock of one standing there runs first when it is released; a victim armed at one point
    does not stop on the way, so the other thread's write usually lands first. Each recorded state
    is still exactly what a kill there leaves, but of a reordered run: at points where the writes
    race, recorded and kill mode would sample different outcomes (measured on the e-mail
    assistant's subgraph writes). A single writer at a time (LangGraph's three_step under sync) is
    the same run either way."""
    inside: dict[str, str] = {}  # thread -> the write it is in (its ``:before`` passed)
    for t in trace:
        name, thread = str(t.get("barrier", "")).rpartition("#")[0], str(t.get("thread", ""))
        other = next(((th, b) for th, b in inside.items() if th != thread), None)
        if other is not None:
            return (
                f"the dry run wrote from two threads at once ({t.get('barrier')} on {thread} while {other[1]} on {other[0]} "
                "was not done): a recording's stops would reorder them"
            )
        if name.endswith(":before"):
            inside[thread] = str(t.get("barrier"))
        elif name.endswith(":after"):
            inside.pop(thread, None)
    return None


def recording_id(ctx: RunContext, cell: Cell, rep: int) -> str:
    """Recording ``rep``'s id: ``c000-rec000``, or the next free ``-2``, ``-3`` when a resumed run
    or a rerun records again."""
    base = f"c{cell.index:03d}-rec{rep:03d}"
    n = 1
    while ctx.prior.get(base if n == 1 else f"{base}-{n}") is not None:
        n += 1
    return base if n == 1 else f"{base}-{n}"


def _harness(name: str) -> bool:
    return any(fnmatch.fnmatch(name, p) for p in HARNESS_FILES)


def _copy_store(src: Path, dest: Path) -> None:
    """Every file of the trial folder ``src`` but chaos's own, copied to ``dest`` as the kernel has them."""
    dest.mkdir(parents=True, exist_ok=True)
    for entry in sorted(src.iterdir()):
        if _harness(entry.name):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, dest / entry.name, symlinks=True)
        else:
            shutil.copyfile(entry, dest / entry.name, follow_symlinks=False)


def _next_stop(run: TrialRun, h: RacerHandle, seen: int) -> dict | None:
    """The next arrival of the recording victim, once it stands stopped there; None if it exited
    (or timed out) first."""

    def there() -> bool:
        st = h.state()
        return st == "exited" or (st == "stopped" and len(h.arrivals()) > seen)

    run.wait_until(there)
    arrivals = h.arrivals()
    if h.state() == "stopped" and len(arrivals) > seen:
        return arrivals[-1]
    return None


def record(
    ctx: RunContext, cell: Cell, rec_id: str, rep: int, points: list[str], steps: SweepSteps, into: Path
) -> tuple[TrialRecord, dict[str, Captured], dict[str, str]]:
    """Run one recording armed at ``points``; capture the crash state at each. Returns its record,
    the states by point, and the points it could not capture, with why (they run in kill mode)."""
    run = TrialRun(ctx, cell, rec_id, rep=rep)
    caps: dict[str, Captured] = {}
    fallbacks: dict[str, str] = {}
    s = cell.scenario
    try:
        store, durable = run.store.get("path"), durable_states.durable_fault(cell) is not None
        why = durable_states.not_capturable(run) if durable else None
        if why is None and not durable and (not store or Path(store).parent != run.dir):
            why = "the store is not in the trial's folder: nothing to copy"
        if why is not None:
            run.observations.update(points=[], fallbacks=dict.fromkeys(points, why))
            return run.record(valid=False, invalid_reason=why), caps, dict.fromkeys(points, why)
        wanted = set(points)
        (victim,) = run.start([run.spec("victim", actions=steps.actions, armed=tuple(points))])
        seen = 0
        while (arrival := _next_stop(run, victim, seen)) is not None:
            seen = len(victim.arrivals())
            b = str(arrival["barrier"])
            run.barriers.append(BarrierEvent(racer_id=victim.racer_id, barrier=b, action="arrived", t_mono_ns=arrival["t_mono_ns"]))
            blame = store_failed_before_kill([arrival], s.target.framework, s.workload)
            if blame is not None:
                fallbacks[b] = f"not recorded: {blame.reason}"
            elif b in wanted and b not in caps:
                m0 = time.monotonic()
                folder = into / f"{rec_id}-{len(caps):04d}"
                _copy_store(run.dir, folder)
                fault = durable_states.capture(run, folder) if durable else None
                if isinstance(fault, str):  # no durable image here: the point runs in kill mode
                    fallbacks[b] = fault
                    shutil.rmtree(folder, ignore_errors=True)
                else:
                    rows = ctx.read_ledger(rec_id)
                    caps[b] = Captured(rec_id, b, folder, rows, (time.monotonic() - m0) * 1000, fault)
            run.release(victim, b)
        hung = run.wait_exit([victim])
        out = run.collect(victim, "victim", "run", hung=bool(hung))
        for p in points:
            if p not in caps and p not in fallbacks:
                fallbacks[p] = "the recording never stopped there"
        run.observations.update(
            points=list(caps),
            fallbacks=fallbacks,
            capture_ms=[round(c.t_capture_ms, 3) for c in caps.values()],
        )
        ok = out.status == "ok"
        return (
            run.record(valid=ok, invalid_reason=None if ok else f"recording victim {out.status}: {run.history[-1].detail}"),
            caps,
            fallbacks,
        )
    finally:
        run.cleanup()


@dataclass
class _Recovery:
    """A point's trial whose resumer is running on a restored crash state."""

    run: TrialRun
    handle: RacerHandle


def _start_recovery(ctx: RunContext, cell: Cell, tid: str, point: str, rep: int, cap: Captured, steps: SweepSteps) -> _Recovery:
    run = TrialRun(ctx, cell, tid, point=point, rep=rep, seed_id=tid, thread_of=cap.recording)
    try:
        steps.prepare(run, point)
        for entry in cap.folder.iterdir():  # each state is recovered once: moved, not copied again
            os.replace(entry, run.dir / entry.name)
        if cap.fault is not None:  # a power-loss state: the store is the durable image in this folder
            durable_states.restore(run, cap.fault)
        assert ctx.copy_ledger is not None  # run_recorded ran no recording without it
        if cap.rows:
            ctx.copy_ledger(cap.rows, tid)
        run.observations["crash_state"] = {"recorded_by": cap.recording, "point": point, "capture_ms": round(cap.t_capture_ms, 3)}
        (h,) = run.start([run.spec("resume", actions=[steps.resume], inspect_before=True, inspect_after=True)])
    except BaseException:
        run.cleanup()
        raise
    return _Recovery(run, h)


def _finish(rc: _Recovery, steps: SweepSteps) -> TrialRecord:
    try:
        _, failed = steps.finish_resume(rc.run, rc.handle, steps.resume)
        return failed if failed is not None else rc.run.record(valid=True, fault_fired=True)
    finally:
        rc.run.cleanup()


def _killed_retries(ctx: RunContext, cell: Cell, tid: str, point: str, rep: int, steps: SweepSteps) -> Iterator[TrialRecord]:
    """The repeats an environment fault forces after a recovered trial: in kill mode (the state is spent)."""
    for attempt in range(1, cell.scenario.env_retries + 1):
        run = TrialRun(ctx, cell, retry_id(tid, attempt), point=point, rep=rep, retry_of=tid, seed_id=tid)
        try:
            rec = steps.kill_body(point)(run)
        finally:
            run.cleanup()
        yield rec
        if rec.fault != "environment":
            return


def run_recorded(ctx: RunContext, cell: Cell, skip: set[str], points: list[str], steps: SweepSteps) -> Iterator[TrialRecord]:
    """The trials of a sweep cell (crash_depth 1) with recorded crash states: the recordings, then
    every point's trial in kill mode's order, recovered in parallel (or killed, where not recorded)."""
    tid_of = {(i, rep): f"c{cell.index:03d}-p{i:03d}-r{rep:03d}" for i in range(len(points)) for rep in range(cell.scenario.trials)}
    states: dict[tuple[int, int], Captured] = {}
    work = ctx.work_dir / f"c{cell.index:03d}-crash-states"
    started: dict[tuple[int, int], _Recovery] = {}
    try:
        if ctx.copy_ledger is not None:
            for rep in range(cell.scenario.trials):
                due = [p for i, p in enumerate(points) if ctx.wants(tid_of[i, rep], skip)]
                if not due:
                    continue
                rec, caps, _ = record(ctx, cell, recording_id(ctx, cell, rep), rep, list(dict.fromkeys(due)), steps, work)
                yield rec
                for i, p in enumerate(points):
                    if p in caps and ctx.wants(tid_of[i, rep], skip):
                        states[i, rep] = caps[p]
        order = [(i, rep) for i in range(len(points)) for rep in range(cell.scenario.trials)]
        width = max(1, os.cpu_count() or 1)
        for n, (i, rep) in enumerate(order):
            tid, point = tid_of[i, rep], points[i]
            if (i, rep) not in states:  # not recorded: kill mode (or journaled, or not asked for)
                yield from attempts(ctx, cell, tid, skip, steps.kill_body(point), point=point, rep=rep)
                continue
            # start the recoveries of this point and the next ones, up to ``width`` at once
            for key in order[n : n + width]:
                if key not in states:
                    break
                if key not in started and len(started) < width:
                    started[key] = _start_recovery(ctx, cell, tid_of[key], points[key[0]], key[1], states[key], steps)
            rec = _finish(started.pop((i, rep)), steps)
            yield rec
            if rec.fault == "environment":
                yield from _killed_retries(ctx, cell, tid, point, rep, steps)
    finally:
        for rc in started.values():
            with contextlib.suppress(Exception):
                rc.run.cleanup()
        shutil.rmtree(work, ignore_errors=True)


def summary(cell: Cell, records: list[TrialRecord]) -> CrashStates | None:
    """What results.json says of a sweep cell that asked for recorded crash states (None: it asked for kill)."""
    asked = SweepOptions.of(cell.scenario).crash_states
    if asked == "kill":
        return None
    trials = [r for r in records if not r.trial_id.endswith("-dry") and not is_recording(r.trial_id)]
    recorded = sum(1 for r in trials if r.observations.get("crash_state") is not None)
    killed = len(trials) - recorded
    dries = [r for r in records if r.trial_id.endswith("-dry") and r.point is None]
    why = not_recorded(cell) or (concurrent_writes(dries[-1]) if dries else None)
    if why is not None:
        return CrashStates(asked=asked, used="kill", reason=why, killed=killed)
    fallbacks: dict[str, str] = {}
    for r in records:
        if is_recording(r.trial_id) or r.trial_id.endswith("-dry"):  # a recovery's recording may be its discovery
            fallbacks.update(r.observations.get("fallbacks") or {})
    for r in trials:  # a chain's trial says itself why it was killed (chaos.kinds.crash_chains)
        if r.observations.get("not_recorded") and r.point:
            fallbacks.setdefault(r.point, str(r.observations["not_recorded"]))
    killed_points = sorted({r.point or "?" for r in trials if r.observations.get("crash_state") is None})
    if not killed:
        return CrashStates(asked=asked, used="recorded", recorded=recorded)
    if not recorded and not any(is_recording(r.trial_id) for r in records):
        reason = "no recording ran (the run's ledger cannot copy rows)"
    else:
        reason = "; ".join(f"{p}: {fallbacks.get(p, 'repeated in kill mode after an environment fault')}" for p in killed_points)
    return CrashStates(asked=asked, used="kill" if not recorded else "mixed", reason=reason[:2000], recorded=recorded, killed=killed)
