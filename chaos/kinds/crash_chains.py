"""Recorded chains of crashes: ``crash_depth`` >= 2 from one recording and one recording per recovery.

Why: a kill sweep with ``crash_depth: 2`` (``chaos.kinds.sweep``) runs, per chain ``P1 >> P2``, a
fresh victim to ``P1``, kills it, a first recovery to its boundary ``P2``, kills that, and resumes:
N first points with M recovery boundaries each cost N x M prefix runs plus N discovery trials. A
recovery's own barriers are crash states too (``chaos.kinds.crash_states`` says why a frozen
process's files are what a SIGKILL there leaves). So with ``crash_states: recorded``:

1. one recording (``c000-rec000``) freezes the victim at every first point ``P1`` and captures each
   state, as at depth 1;
2. per ``P1``, a *recovering recording*: the first recovery (racer ``recovery1``, the resume action,
   as kill mode's) starts on a copy of ``P1``'s state (its rows: the victim's up to ``P1``) and is
   itself armed at every one of its boundaries that ``recovery_kill_points`` keeps (by name:
   they are not known before it runs), frozen at each, its store copied with the ledger rows so far
   (the victim's and its own), then released. Repeat 0's is the discovery trial kill mode runs
   (``c000-p003-dry``): its trace is the recovery's boundaries (``resume_boundaries``), which
   ``recovery_points`` narrows and the report lists; later repeats, and a rerun's, are
   ``c000-p003-rec001``;
3. each ``(P1, P2)`` state is recovered by a fresh, unarmed resumer (racer ``resume``) under kill
   mode's trial id (``c000-p003-q002-r000``, point ``P1 >> P2``) and judged as kill mode's chain
   trials are: EO over every row, PC and LIVENESS of the last recovery against the durable state at
   the last crash. Instead of ``kills`` and ``kill`` it carries ``crash_state`` (the recordings, the
   chain). Resumers run at once, at most ``--jobs`` (``RunContext.width``).

Deeper chains repeat step 2 below each prefix: at ``crash_depth: 3`` the second recovery of each
``(P1, P2)`` state (racer ``recovery2``) is a recording too, whose repeat 0 is kill mode's discovery
of that prefix (``c000-p003-q002-dry``; other repeats ``c000-p003-q002-rec001``), and the fresh
resumers recover the ``(P1, P2, P3)`` states (``c000-p003-q002-q001-r000``).

N + N x M recoveries instead of N x M prefix runs and N discoveries. Exact where depth 1 is
(``crash_states.not_recorded``, the dry run's ``concurrent_writes``); beyond that a chain runs in
kill mode, its trial saying why (``not_recorded``), where: ``P1`` was not captured, the recovering
recording wrote from two threads at once (its stops would reorder the writes) or failed, never stopped
at ``P2`` (a recovery whose boundaries differ run to run), or a store call had failed for the
environment's sake before ``P2``; the repeat an environment fault forces is killed too.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from chaos.kinds.crash_states import Captured, SweepSteps, copy_store, free_id, next_stop, record, recording_id, writes_at_once
from chaos.launchers import RacerHandle
from chaos.records import BarrierEvent, TrialRecord
from chaos.running.trial import RunContext, TrialRun, attempts, repeats, retry_id, store_failed_before_kill
from chaos.scenario.model import Cell

CHAIN = " >> "  # as ``chaos.kinds.sweep`` names a chain of crashes


@dataclass(frozen=True)
class ChainSteps:
    """What recorded chains borrow from the sweep that runs them (``chaos.kinds.sweep``)."""

    sweep: SweepSteps  # the workload's life, the resume, how a resumer is finished
    recovery_points: Callable[[list[str]], list[str]]  # a recovery's kill points among its boundaries
    recovery_filters: tuple[str, ...]  # what ``recovery_kill_points`` keeps (empty: every boundary)
    baseline: Callable[[TrialRun], None]  # what a chain's trial carries to be judged
    discover: Callable[[list[str]], Callable[[TrialRun], TrialRecord]]  # kill mode's discovery below a prefix
    chain: Callable[[list[str]], Callable[[TrialRun], TrialRecord]]  # kill mode's trial of a chain
    depth: int = 2  # crashes per chain (``crash_depth``, 2 to 4)


@dataclass(frozen=True)
class State:
    """A chain's crash state: the copy and its rows (``Captured``: its ``recording`` is the thread's
    recording) and every recording that made it, the first one first."""

    cap: Captured
    by: tuple[str, ...]


@dataclass
class _Recovering:
    """What one recovering recording gave: its record, the chain states by recovery boundary, why others are not."""

    rec: TrialRecord
    states: dict[str, State]
    fallbacks: dict[str, str]


def _name(chain: list[str]) -> str:
    return CHAIN.join(chain)


def nested_recording_id(ctx: RunContext, cell: Cell, ids: list[str], rep: int) -> str:
    """A recovering recording's id when it is not the discovery: ``c000-p003-rec001`` (or ``-2``, ``-3``)."""
    return free_id(ctx, f"c{cell.index:03d}-{'-'.join(ids)}-rec{rep:03d}")


def record_recovery(run: TrialRun, chain: list[str], st: State, steps: ChainSteps, wanted: list[str] | None, into: Path) -> _Recovering:
    """Recover the recorded state ``st`` of ``chain`` in ``run`` with a recovery (the chain's next,
    ``recovery<n>``) frozen at each of its kill points: ``wanted`` (known from a discovery), or, when
    None, every boundary the scenario's ``recovery_kill_points`` keeps (this run is then the
    discovery: its trace is recorded)."""
    ctx, s = run.ctx, run.cell.scenario
    cap = st.cap
    states: dict[str, State] = {}
    fallbacks: dict[str, str] = {}
    _place(run, chain, st)
    resume = steps.sweep.resume
    spec = run.spec(
        f"recovery{len(chain)}",  # as kill mode names the chain's next recovery
        actions=[resume],
        armed=tuple(wanted or ()),
        armed_like=(steps.recovery_filters or ("",)) if wanted is None else (),  # its boundaries are not known yet
        inspect_before=True,
        inspect_after=True,
    )
    (h,) = run.start([spec])
    seen = 0
    while (stop := next_stop(run, h, seen)) is not None:
        arrival, seen = stop
        b = str(arrival["barrier"])
        run.barriers.append(BarrierEvent(racer_id=h.racer_id, barrier=b, action="arrived", t_mono_ns=arrival["t_mono_ns"]))
        blame = store_failed_before_kill([arrival], s.target.framework, s.workload)
        if blame is not None:
            fallbacks[_name([*chain, b])] = f"not recorded: {blame.reason}"
        elif b not in states and (wanted is None or b in wanted):
            m0 = time.monotonic()
            folder = into / f"{run.trial_id}-{len(states):04d}"
            copy_store(run.dir, folder)
            rows = ctx.read_ledger(run.trial_id)
            states[b] = State(Captured(cap.recording, b, folder, rows, (time.monotonic() - m0) * 1000), (*st.by, run.trial_id))
        run.release(h, b)
    res, failed = steps.sweep.finish_resume(run, h, resume)
    trace = list(res.get("trace") or [])
    boundaries = [str(t["barrier"]) for t in trace]
    if wanted is None:
        run.observations["resume_boundaries"] = boundaries
    reordered = writes_at_once(trace)
    if reordered is not None:  # each state exact, but of a run the stops reordered: kill mode samples the real one
        run.observations["concurrent_writes"] = reordered
        fallbacks.update({_name([*chain, b]): reordered for b in states})
        states = {}
    for b in wanted if wanted is not None else steps.recovery_points(boundaries):
        if b not in states:
            fallbacks.setdefault(_name([*chain, b]), "the recovering recording never stopped there")
    run.observations.update(
        points=[_name([*chain, b]) for b in states],
        fallbacks=fallbacks,
        capture_ms=[round(x.cap.t_capture_ms, 3) for x in states.values()],
    )
    if failed is None and wanted is None and not boundaries:
        failed = run.record(valid=False, invalid_reason=f"the recovery after {_name(chain)} passed no boundary", fault_fired=True)
    rec = failed if failed is not None else run.record(valid=True, fault_fired=True)
    if not rec.valid:  # (a fault not the framework's makes it invalid too) its states are not evidence: kill mode
        why = f"the recovering recording {rec.trial_id} was invalid: {rec.invalid_reason}"
        return _Recovering(rec, {}, {**fallbacks, **{_name([*chain, b]): why for b in states}})
    return _Recovering(rec, states, fallbacks)


@dataclass
class _Resumer:
    """A chain's trial whose resumer runs on a restored (P1, P2) state."""

    run: TrialRun
    handle: RacerHandle


def _place(run: TrialRun, chain: list[str], st: State) -> None:
    """Put the recorded state ``st`` of ``chain`` in ``run``: its files into the trial's folder (the
    state is recovered once: moved, not copied again), its rows into the ledger under the trial's id."""
    for entry in st.cap.folder.iterdir():
        os.replace(entry, run.dir / entry.name)
    assert run.ctx.copy_ledger is not None  # no recording ran without it
    if st.cap.rows:
        run.ctx.copy_ledger(st.cap.rows, run.trial_id)
    run.observations["crash_state"] = _said(chain, st)


def _said(chain: list[str], st: State) -> dict:
    """``observations["crash_state"]`` of a trial recovered from ``st``, the state at the end of ``chain``."""
    out: dict = {"recorded_by": st.by[0] if len(st.by) == 1 else list(st.by)}
    if len(chain) > 1:
        out["chain"] = chain
    return {**out, "point": _name(chain), "capture_ms": round(st.cap.t_capture_ms, 3)}


def _start(ctx: RunContext, cell: Cell, tid: str, chain: list[str], rep: int, st: State, steps: ChainSteps) -> _Resumer:
    cap = st.cap
    run = TrialRun(ctx, cell, tid, point=_name(chain), rep=rep, seed_id=tid, thread_of=cap.recording)
    try:
        steps.baseline(run)
        _place(run, chain, st)
        (h,) = run.start([run.spec("resume", actions=[steps.sweep.resume], inspect_before=True, inspect_after=True)])
    except BaseException:
        run.cleanup()
        raise
    return _Resumer(run, h)


def _finish(r: _Resumer, steps: ChainSteps) -> TrialRecord:
    try:
        _, failed = steps.sweep.finish_resume(r.run, r.handle, steps.sweep.resume)
        return failed if failed is not None else r.run.record(valid=True, fault_fired=True)
    finally:
        r.run.cleanup()


def _killed(steps: ChainSteps, chain: list[str], why: str | None) -> Callable[[TrialRun], TrialRecord]:
    """Kill mode's trial of ``chain``, saying why it was not recorded."""
    body = steps.chain(chain)

    def run(t: TrialRun) -> TrialRecord:
        if why:
            t.observations["not_recorded"] = why
        return body(t)

    return run


def _prior_discovery(ctx: RunContext, cell: Cell, disc_id: str) -> TrialRecord | None:
    """The discovery a resumed run or a rerun journaled already (its last attempt), or None."""
    found = None
    for attempt in range(cell.scenario.env_retries + 1):
        d = ctx.prior.get(retry_id(disc_id, attempt))
        if d is None:
            return found if found is not None and found.fault != "environment" else None
        found = d
        if d.fault != "environment":
            return d
    return found


_Chain = tuple[str, list[str], int, State | None, str | None]  # (trial id, chain, repeat, its state, why killed)


def run_recorded_chains(ctx: RunContext, cell: Cell, skip: set[str], points: list[str], steps: ChainSteps) -> Iterator[TrialRecord]:
    """The trials of a sweep cell with ``crash_depth`` >= 2 from recorded crash states: the first
    points' recordings, below each prefix its recovering recordings (repeat 0's its discovery), then
    every chain's trial in kill mode's order, recovered in parallel (or killed, where not recorded)."""
    reps = cell.scenario.trials
    c = f"c{cell.index:03d}"
    work = ctx.work_dir / f"{c}-crash-chains"
    started: dict[int, _Resumer] = {}

    def wanted_below(ids: list[str], rep: int) -> bool:
        """Is any chain trial below this prefix still due in repeat ``rep`` (True while a discovery is unknown)?"""
        d = _prior_discovery(ctx, cell, f"{c}-{'-'.join(ids)}-dry")
        if d is None:
            return True
        if not d.valid:
            return False
        n = len(steps.recovery_points(d.observations.get("resume_boundaries") or []))
        if len(ids) + 1 == steps.depth:
            return any(ctx.wants(f"{c}-{'-'.join(ids)}-q{q:03d}-r{rep:03d}", skip) for q in range(n))
        return any(wanted_below([*ids, f"q{q:03d}"], rep) for q in range(n))

    def below(ids: list[str], chain: list[str], states: dict[int, State], whys: dict[int, str], out: list[_Chain]) -> Iterator[TrialRecord]:
        """The recovering recordings below one prefix (``chain``, whose state per repeat is ``states``),
        deeper prefixes, and the chain trials they give, appended to ``out``."""
        disc_id = f"{c}-{'-'.join(ids)}-dry"
        by_rep: dict[int, _Recovering] = {}
        found = _prior_discovery(ctx, cell, disc_id)
        if found is None:
            for attempt in range(cell.scenario.env_retries + 1):
                st = states.pop(0, None) if attempt == 0 else None
                run = TrialRun(
                    ctx,
                    cell,
                    retry_id(disc_id, attempt),
                    point=_name(chain),
                    retry_of=disc_id if attempt else None,
                    thread_of=st.cap.recording if st is not None else None,  # it resumes the recording's thread
                )
                try:
                    if st is not None:  # the recovery of the prefix's recorded state, frozen at each of its points
                        got = record_recovery(run, chain, st, steps, None, work)
                        found = got.rec
                        if found.valid:
                            by_rep[0] = got
                    else:
                        found = steps.discover(chain)(run)
                finally:
                    run.cleanup()
                yield found
                if found.fault != "environment":
                    break
        if found is None or not found.valid:
            return
        kept = steps.recovery_points(found.observations.get("resume_boundaries") or [])
        last = len(chain) + 1 == steps.depth
        nxt: list[tuple[dict[int, State], dict[int, str]]] = [({}, {}) for _ in kept]
        for rep in range(reps):
            got_r = by_rep.get(rep)
            if last:
                wanted = [b for q, b in enumerate(kept) if ctx.wants(f"{c}-{'-'.join(ids)}-q{q:03d}-r{rep:03d}", skip)]
            else:
                wanted = [b for q, b in enumerate(kept) if wanted_below([*ids, f"q{q:03d}"], rep)]
            wanted = list(dict.fromkeys(wanted))
            if got_r is None and wanted and rep in states:
                st = states.pop(rep)
                run = TrialRun(ctx, cell, nested_recording_id(ctx, cell, ids, rep), point=_name(chain), rep=rep, thread_of=st.cap.recording)
                try:
                    got_r = record_recovery(run, chain, st, steps, wanted, work)
                finally:
                    run.cleanup()
                yield got_r.rec
            for q, b in enumerate(kept):
                if got_r is not None and b in got_r.states:
                    nxt[q][0][rep] = got_r.states.pop(b)
                elif got_r is not None:
                    nxt[q][1][rep] = got_r.fallbacks.get(_name([*chain, b])) or "the recovering recording never stopped there"
                else:
                    nxt[q][1][rep] = whys.get(rep) or f"{_name(chain)}: its state was not recorded"
        for q, b in enumerate(kept):
            deeper, longer = [*ids, f"q{q:03d}"], [*chain, b]
            if not last:
                yield from below(deeper, longer, nxt[q][0], nxt[q][1], out)
                continue
            for rep in range(reps):
                tid = f"{c}-{'-'.join(deeper)}-r{rep:03d}"
                st_q = nxt[q][0].get(rep)
                out.append((tid, longer, rep, st_q, None if st_q is not None else nxt[q][1].get(rep)))

    try:
        # 1. the first points' states, one recording per repeat
        first: list[tuple[dict[int, State], dict[int, str]]] = [({}, {}) for _ in points]
        for rep in range(reps):
            wanted = [p for i, p in enumerate(points) if wanted_below([f"p{i:03d}"], rep)]
            if not wanted:
                continue
            rec, caps, fb = record(ctx, cell, recording_id(ctx, cell, rep), rep, list(dict.fromkeys(wanted)), steps.sweep, work)
            yield rec
            for i, p in enumerate(points):
                if p in caps:
                    first[i][0][rep] = State(caps.pop(p), (rec.trial_id,))  # a point listed twice is one state: recovered once
                else:
                    first[i][1][rep] = f"{p}: {fb.get(p, 'not recorded')}"
        # 2. below each first point: its discovery (recorded where its state is), the recovering recordings
        chains: list[_Chain] = []
        for i, p1 in enumerate(points):
            yield from below([f"p{i:03d}"], [p1], first[i][0], first[i][1], chains)
        # 3. every chain's trial, in kill mode's order; recovered ones up to ``width`` at once
        width = ctx.width
        for n, (tid, chain, rep, state, why) in enumerate(chains):
            if state is None:
                yield from attempts(ctx, cell, tid, skip, _killed(steps, chain, why), point=_name(chain), rep=rep)
                continue
            if not ctx.wants(tid, skip):
                continue
            for k, (t2, ch2, rep2, st2, _) in enumerate(chains[n : n + width]):
                if st2 is None:
                    break
                if (n + k) not in started and len(started) < width and ctx.wants(t2, skip):
                    started[n + k] = _start(ctx, cell, t2, ch2, rep2, st2, steps)
            rec = _finish(started.pop(n), steps)
            yield rec
            if rec.fault == "environment":  # the state is spent: the repeats are killed
                yield from repeats(
                    ctx, cell, tid, _killed(steps, chain, "repeated in kill mode after an environment fault"), point=_name(chain), rep=rep
                )
    finally:
        for r in started.values():
            with contextlib.suppress(Exception):
                r.run.cleanup()
        shutil.rmtree(work, ignore_errors=True)
