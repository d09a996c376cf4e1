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
(``TrialRun.thread_of``). The copy goes straight into that folder, and its resumer starts as soon
as fewer than ``--jobs`` (``RunContext.width``) recover, while the recording runs on to its next points
(``_Recoveries``); their records come after the recording's, in kill mode's order (point, then
repeat), then the points that run in kill mode, ``--jobs`` at a time (``RunContext.independent``),
and are judged as kill mode's are. A
recovered trial carries ``observations["crash_state"]`` (the recording, the barrier) instead of a
kill: the run's trial summary counts it under ``recorded_states``, not as a confirmed kill.

What it promises: a recorded point's crash state is byte for byte the one a SIGKILL at that
barrier of that run leaves, where the adapter declares the backend's store to be files in the
trial's folder (``TargetInfo.capturable_backends``). Where that is not so the cell runs in kill
mode and its results.json says why (``CellResult.crash_states``): a store behind a socket
(Postgres, a server) or one not declared, a fault that kills nothing (db_disconnect, db_restart's
restart), and racers on another machine.

Points where two threads write at once run in kill mode, the rest of the cell recorded
(``racing_points``): a point the dry run passed while another thread was inside a store write, and
both ends of such a write; and a stop of the recording where another thread was inside one (its
arrival's ``writing``). There a SIGKILL leaves the other write done, half done or not begun as the
threads happened to run; a recording, stopped at every point, lets its threads fall behind one
another as an armed-once victim's do not, so it would sample those states otherwise than kill mode
(measured on the e-mail assistant: whole-cell recording once duplicated both payments at a point
where kill mode's victims never did). Under LangGraph's default executor a task's writes are saved
on a worker thread beside the next checkpoint, so most of a graph's points race: on the docs'
"review tool calls" how-to 18 of 25, on the e-mail assistant 29-32 of 43. A point the recording
never stopped at (a workload whose boundaries differ run to run), or one whose store calls had
failed for the environment's sake before it, runs in kill mode too; so does the repeat an
environment fault forces. results.json then says ``mixed`` and lists them with why.

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
import re
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from chaos.kinds import durable_states
from chaos.kinds.sweep_options import SweepOptions
from chaos.launchers import RacerHandle
from chaos.racer.protocol import ActionSpec, RacerResult, TraceEntry
from chaos.records import BarrierEvent, CrashStates, TrialRecord
from chaos.running.trial import RunContext, Task, TrialRun, attempts, repeats, store_failed_before_kill
from chaos.scenario.model import Cell
from chaos.targets import get_target

# a recording (c000-rec000), or a recovery's recording of its own states (c000-p003-rec001,
# c000-p003-q001-rec000: chaos.kinds.crash_chains)
RECORDING = re.compile(r"^c\d{3,}(?:-[pq]\d{3,})*-rec\d{3,}(?:-\d+)?$")
# what chaos itself keeps in a trial's folder: never part of the store's crash state
HARNESS_FILES = ("barriers", "result-*", "racer-*.log", "spec-*.json")
TWO_WRITERS = "two writers at once"  # how every reason of a racing point ends (``racing_points``, ``record``)


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
    backend = s.target.backend  # a team's saver: 'saver'
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


def _walk(trace: list[TraceEntry]) -> Iterator[tuple[str, str, str, str | None, list[tuple[str, str]]]]:
    """Each boundary of ``trace`` as ``(id, end, thread, mine, others)``: ``end`` is ``before``,
    ``after`` or ``""``; ``mine`` the store write its thread was inside as it passed (the ``:before``
    of it), ``others`` the (thread, write) pairs of the other threads inside one."""
    open_: dict[str, str] = {}  # thread -> the write it is inside (its ``:before`` boundary)
    for t in trace:
        bid, thread = str(t.get("barrier", "")), str(t.get("thread", ""))
        end = bid.rpartition("#")[0].rpartition(":")[2]
        end = end if end in ("before", "after") else ""
        mine, others = open_.get(thread), [(th, b) for th, b in open_.items() if th != thread]
        if end == "before":
            open_[thread] = bid
        elif end == "after":
            open_.pop(thread, None)
        yield bid, end, thread, mine, others


def writes_at_once(trace: list[TraceEntry]) -> str | None:
    """Why a dry run's ``trace`` keeps recorded chains (``crash_depth`` >= 2) out (None: it does
    not): two threads inside the store's writes at once (one between its ``:before`` and ``:after``
    when another passes a boundary). Depth 1 runs just the racing points in kill mode
    (``racing_points``); a chain's later points are a recovery's, whose races the dry run does not
    show, so a chain is recorded only where one writer works at a time throughout (LangGraph's
    three_step under sync)."""
    for bid, _, thread, _, others in _walk(trace):
        if others:
            th, b = others[0]
            return f"the dry run wrote from two threads at once ({bid} on {thread} while {b} on {th} was not done): a recording's stops would reorder them"
    return None


def racing_points(trace: list[TraceEntry]) -> dict[str, str]:
    """The boundaries of a dry run's ``trace`` whose crash state depends on thread scheduling, each
    with why: a boundary passed while another thread was inside a store write (past its ``:before``,
    not yet at its ``:after``), and both ends of every write another thread's boundary fell inside.
    There a SIGKILL leaves that other write done, half done or not begun as the threads happened to
    run, and a recording (stopped at every point, so its threads fall behind one another unlike an
    armed-once victim's) would sample those states otherwise than kill mode does: those points run
    in kill mode. Everywhere else one writer is at work and the state is the same in either mode
    (LangGraph under its default executor writes a run's input beside its first checkpoint: a few
    points race, the rest do not)."""
    raced: set[str] = set()  # writes (their ``:before``) another thread's boundary fell inside
    out: dict[str, str] = {}
    for bid, end, thread, mine, others in _walk(trace):
        if others:
            th, b = others[0]
            out.setdefault(bid, f"passed on {thread} while {b} on {th} was not done: {TWO_WRITERS}")
            raced.update(w for _, w in others)
            raced.update(w for w in (mine, bid if end == "before" else None) if w)  # this thread's write, or the one it begins
        if end == "after" and mine in raced:
            out.setdefault(bid, f"ends a write ({mine}) another thread wrote beside: {TWO_WRITERS}")
    for b in raced:
        out.setdefault(b, f"begins a write another thread wrote beside: {TWO_WRITERS}")
    return out


def racing(dry: TrialRecord) -> dict[str, str]:
    """The dry run's ``racing_points``, kept in its observations as it ran (``{}`` before they were)."""
    return {str(k): str(v) for k, v in (dry.observations.get("racing") or {}).items()}


def recording_id(ctx: RunContext, cell: Cell, rep: int) -> str:
    """Recording ``rep``'s id: ``c000-rec000``, or the next free ``-2``, ``-3`` when a resumed run
    or a rerun records again."""
    return free_id(ctx, f"c{cell.index:03d}-rec{rep:03d}")


def free_id(ctx: RunContext, base: str) -> str:
    """``base``, or the first of ``base-2``, ``base-3`` no journaled trial has."""
    n = 1
    while ctx.prior.get(base if n == 1 else f"{base}-{n}") is not None:
        n += 1
    return base if n == 1 else f"{base}-{n}"


def _harness(name: str) -> bool:
    return any(fnmatch.fnmatch(name, p) for p in HARNESS_FILES)


def copy_store(src: Path, dest: Path) -> None:
    """Every file of the trial folder ``src`` but chaos's own, copied to ``dest`` as the kernel has them."""
    dest.mkdir(parents=True, exist_ok=True)
    for entry in sorted(src.iterdir()):
        if _harness(entry.name):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, dest / entry.name, symlinks=True)
        else:
            shutil.copyfile(entry, dest / entry.name, follow_symlinks=False)


def next_stop(run: TrialRun, h: RacerHandle, seen: int) -> tuple[dict, int] | None:
    """The next arrival of the recording victim, once it stands stopped there, with how many it has
    made (stopped, it makes no more: the next call's ``seen``); None if it exited (or timed out) first."""

    def there() -> bool:
        st = h.state()
        return st == "exited" or (st == "stopped" and len(h.arrivals()) > seen)

    run.wait_until(there)
    arrivals = h.arrivals()
    if h.state() == "stopped" and len(arrivals) > seen:
        return arrivals[-1], len(arrivals)
    return None


def record(
    ctx: RunContext,
    cell: Cell,
    rec_id: str,
    rep: int,
    points: list[str],
    steps: SweepSteps,
    into: Path,
    folder_of: Callable[[str], Path] | None = None,
    then: Callable[[Captured], None] | None = None,
    racing: dict[str, str] | None = None,
) -> tuple[TrialRecord, dict[str, Captured], dict[str, str]]:
    """Run one recording armed at ``points`` but the ``racing`` ones (two writers at once in the dry
    run); capture the crash state at each (into the folder ``folder_of(point)`` names, else one
    under ``into``), and call ``then`` with it once the recording runs on. A stop where another
    thread was inside a store write (its arrival's ``writing``) is not captured either. Returns its
    record, the states by point, and the points it could not capture, with why (they run in kill mode)."""
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
        for p in points:
            if racing and p in racing:
                fallbacks[p] = f"not recorded: {racing[p]} (kill mode samples it as threads run)"
        wanted = {p for p in points if p not in fallbacks}
        (victim,) = run.start([run.spec("victim", actions=steps.actions, armed=tuple(p for p in points if p in wanted))])
        seen = 0
        while (stop := next_stop(run, victim, seen)) is not None:
            arrival, seen = stop
            b = str(arrival["barrier"])
            run.barriers.append(BarrierEvent(racer_id=victim.racer_id, barrier=b, action="arrived", t_mono_ns=arrival["t_mono_ns"]))
            blame = store_failed_before_kill([arrival], s.target.framework, s.workload)
            fresh = None
            if blame is not None:
                fallbacks[b] = f"not recorded: {blame.reason}"
            elif arrival.get("writing"):
                fallbacks[b] = f"not recorded: the recording stopped here while {'; '.join(arrival['writing'])} was not done: {TWO_WRITERS}"
            elif b in wanted and b not in caps:
                m0 = time.monotonic()
                folder = folder_of(b) if folder_of is not None else into / f"{rec_id}-{len(caps):04d}"
                copy_store(run.dir, folder)
                fault = durable_states.capture(run, folder) if durable else None
                if isinstance(fault, str):  # no durable image here: the point runs in kill mode, on a clean folder
                    fallbacks[b] = fault
                    shutil.rmtree(folder, ignore_errors=True)
                else:
                    rows = ctx.read_ledger(rec_id)
                    caps[b] = fresh = Captured(rec_id, b, folder, rows, (time.monotonic() - m0) * 1000, fault)
            run.release(victim, b)
            if then is not None and fresh is not None:
                then(fresh)
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


Key = tuple[int, int]  # (point index, repeat)


@dataclass
class _Point:
    """A point trial of a recorded cell on its way: its folder (made when the recording reaches the
    point, which copies its state straight into it) and its resumer once started."""

    run: TrialRun
    handle: RacerHandle | None = None
    placed: bool = False  # the crash state's files are in its folder, the rows in the ledger


class _Recoveries:
    """Every point trial of a recorded cell, recovered while the recordings still run.

    At a point, the recording's store files are copied straight into the point trial's own folder
    (no second move) and the rows into the ledger under its trial id; the recording runs on, and a
    fresh resumer starts on that state as soon as fewer than ``width`` recover, while the recording
    goes on to its next points. Why not start the resumers earlier, held (as a kill trial's is)
    until their state is there: measured on 2 cores, a recorded cell is bound by CPU (the
    resumers' and the fork server's: about 90 ms per point against the orchestrator's 11), so a
    held resumer's throwaway build ahead of its turn costs more than its head start saves, and its
    start (a round trip to the fork server) sits in the recording's own loop
    (``bench/README.md``)."""

    def __init__(self, ctx: RunContext, cell: Cell, steps: SweepSteps, points: list[str], tid_of: dict[Key, str], width: int):
        self.ctx, self.cell, self.steps, self.points, self.tid_of, self.width = ctx, cell, steps, points, tid_of, width
        self.trials: dict[Key, _Point] = {}  # in the order their states were captured
        self.done: dict[Key, TrialRecord] = {}
        self.recording = ""  # the running recording, whose thread its points' recoveries resume
        self.key_of: dict[str, Key] = {}  # the running recording's points -> their trials

    def expect(self, recording: str, key_of: dict[str, Key]) -> None:
        """``recording`` is about to capture the states of ``key_of``'s points, for their trials."""
        self.recording, self.key_of = recording, key_of

    def folder(self, point: str) -> Path:
        """Where the running recording copies its state at ``point``: the point trial's own folder."""
        key = self.key_of[point]
        i, rep = key
        tid = self.tid_of[key]
        run = TrialRun(self.ctx, self.cell, tid, point=self.points[i], rep=rep, seed_id=tid, thread_of=self.recording)
        self.trials[key] = _Point(run)
        return run.dir

    def place(self, cap: Captured) -> None:
        """``cap`` is in its point trial's folder (``folder``): its rows go to the ledger, and its
        resumer starts if a slot is free."""
        t = self.trials[self.key_of[cap.barrier]]
        self.steps.prepare(t.run, cap.barrier)
        if cap.fault is not None:  # a power-loss state: the store is the durable image in this folder
            durable_states.restore(t.run, cap.fault)
        assert self.ctx.copy_ledger is not None  # run_recorded ran no recording without it
        if cap.rows:
            self.ctx.copy_ledger(cap.rows, t.run.trial_id)
        t.run.observations["crash_state"] = {"recorded_by": cap.recording, "point": cap.barrier, "capture_ms": round(cap.t_capture_ms, 3)}
        t.placed = True
        self.pump()

    def _running(self) -> int:
        return sum(1 for k, t in self.trials.items() if t.handle is not None and k not in self.done)

    def _ended(self, t: _Point) -> bool:
        return t.handle is not None and t.handle.state() == "exited"

    def _any_ended(self, ts: list[_Point]) -> bool:
        return any(self._ended(t) for t in ts)

    def pump(self) -> None:
        """Without waiting: finish the recoveries that ended, then start resumers on placed states,
        in the order they were captured, while fewer than ``width`` recover."""
        for k, t in self.trials.items():
            if k not in self.done and self._ended(t):
                self.done[k] = self._finish(t)
        for t in self.trials.values():
            if self._running() >= self.width:
                break
            if t.placed and t.handle is None:
                spec = t.run.spec("resume", actions=[self.steps.resume], inspect_before=True, inspect_after=True)
                (t.handle,) = t.run.start([spec])

    def result(self, key: Key) -> TrialRecord:
        """The trial of ``key`` once it ended, keeping the slots full meanwhile."""
        t = self.trials[key]
        while key not in self.done:
            self.pump()
            if key in self.done:
                break
            running = {k: o for k, o in self.trials.items() if o.handle is not None and k not in self.done}
            if not t.run.wait_until(partial(self._any_ended, list(running.values()))):
                for k, o in running.items():  # none ended in the timeout: the resume's own wait kills and records the hung
                    self.done[k] = self._finish(o)
        del self.trials[key]
        return self.done.pop(key)

    def _finish(self, t: _Point) -> TrialRecord:
        assert t.handle is not None
        try:
            _, failed = self.steps.finish_resume(t.run, t.handle, self.steps.resume)
            return failed if failed is not None else t.run.record(valid=True, fault_fired=True)
        finally:
            t.run.cleanup()

    def close(self) -> None:
        for t in self.trials.values():
            with contextlib.suppress(Exception):
                t.run.cleanup()


def run_recorded(
    ctx: RunContext, cell: Cell, skip: set[str], points: list[str], steps: SweepSteps, racing: dict[str, str] | None = None
) -> Iterator[TrialRecord]:
    """The trials of a sweep cell (crash_depth 1) with recorded crash states: the recordings, then
    every point's trial in kill mode's order, recovered in parallel (or killed, where not recorded:
    the ``racing`` points of the dry run among them, which the recordings are not armed at).
    The recoveries start during the recordings (``_Recoveries``); their records follow them."""
    tid_of = {(i, rep): f"c{cell.index:03d}-p{i:03d}-r{rep:03d}" for i in range(len(points)) for rep in range(cell.scenario.trials)}
    recovered: set[Key] = set()
    work = ctx.work_dir / f"c{cell.index:03d}-crash-states"
    pool = _Recoveries(ctx, cell, steps, points, tid_of, ctx.width)
    try:
        if ctx.copy_ledger is not None:
            for rep in range(cell.scenario.trials):
                key_of: dict[str, Key] = {}  # the points due, each to its (first) trial
                for i, p in enumerate(points):
                    if ctx.wants(tid_of[i, rep], skip):
                        key_of.setdefault(p, (i, rep))
                if not key_of:
                    continue
                rec_id = recording_id(ctx, cell, rep)
                pool.expect(rec_id, key_of)
                rec, caps, _ = record(
                    ctx, cell, rec_id, rep, list(key_of), steps, work, folder_of=pool.folder, then=pool.place, racing=racing
                )
                recovered |= {key_of[p] for p in caps}
                yield rec
        killed: list[Task] = []  # not recorded: kill mode (or journaled, or not asked for), independent trials
        for i, rep in [(i, rep) for i in range(len(points)) for rep in range(cell.scenario.trials)]:
            tid, point = tid_of[i, rep], points[i]
            if (i, rep) not in recovered:
                killed.append(partial(attempts, cell=cell, trial_id=tid, skip=skip, body=steps.kill_body(point), point=point, rep=rep))
                continue
            rec = pool.result((i, rep))
            yield rec
            if rec.fault == "environment":
                yield from repeats(ctx, cell, tid, steps.kill_body(point), point=point, rep=rep)  # the state is spent: kill mode
        yield from ctx.independent(killed)  # after the recoveries: ``--jobs`` of them at a time
    finally:
        pool.close()
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
    chains = SweepOptions.of(cell.scenario).crash_depth > 1  # recorded chains need one writer at a time throughout
    why = not_recorded(cell) or (concurrent_writes(dries[-1]) if dries and chains else None)
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
        why_of = {p: fallbacks.get(p, "repeated in kill mode after an environment fault") for p in killed_points}
        racing = [p for p in killed_points if TWO_WRITERS in why_of[p]]  # one clause for them all: each point's why is in the journal
        clauses = (
            [f"{len(racing)} point(s) with {TWO_WRITERS} (the crash state depends on how the threads ran): {', '.join(racing)}"]
            if racing
            else []
        )
        reason = "; ".join(clauses + [f"{p}: {why_of[p]}" for p in killed_points if p not in racing])
    return CrashStates(asked=asked, used="kill" if not recorded else "mixed", reason=reason[:2000], recorded=recorded, killed=killed)
