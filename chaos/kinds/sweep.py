"""Sweeps: crash a racer at each persistence boundary, resume in a fresh process, judge the resume.

Shared machinery of the kinds that are sweeps (it names none of them): each passes a ``Sweep``
that says which kill points it keeps (``narrow``) and which extra property it judges at each
point (``extra``), and uses its ``run_cell``, ``check`` and ``explain``.

A dry run (one racer, nothing armed; where the framework restores a paused run, the run's racer and
a fresh racer per answer, as a restarted app: ``chaos.kinds.baseline.run_uninterrupted``) records
the ordered boundaries the workload passes. For each
kept boundary (a *kill point*) and repeat, a racer runs the workload armed at that one boundary;
when it stands stopped there, the orchestrator SIGKILLs it and confirms the kill from the exit
status. A fresh racer then inspects the durable state (what the framework recorded before the
crash) and resumes with the scenario's resume form. A point the racer never reached is ``unknown``.

The resume racer is started together with the victim and *holds* (``chaos.racer.barrier.HOLD``): it
starts its process, imports and opens the effect ledger, then stops before it opens the
framework's store; it is continued only once the kill is confirmed. What it measures is what a
racer started after the kill measures (it touches the store only then); its start-up just
overlaps the victim's run instead of following it (a warm trial: about 5-8 ms less; a cold one:
the second interpreter start, about a second less).

The check, per kill point: effect counts per effect identity, durable checkpoints at the kill, the
resume outcome; EO (judged against the dry run, every effect of the trial: none fired twice across
kill and resume, none lost, none the dry run never fires, no declared identity with another
payload), PC (nothing recorded complete at the
kill ran again), liveness (the resume finished the run or left it waiting for a human), and the
sweep's ``extra`` checks; per cell, each property combined over the points (``combine``).

Crashes during recovery (``crash_depth`` >= 2): the recovery is killed too, at each of its own
boundaries. For a chain of kills ``P1 >> B2`` the victim is killed at ``P1``; a first recovery
racer, armed at ``B2``, resumes and is killed there; a last recovery racer resumes and is judged
(depth ``n``: ``n`` kills, each in the recovery of the one before). The recovery's boundaries are
discovered per prefix of the chain by a *discovery* trial (``c000-p003-dry``: killed along the
prefix, the last recovery unarmed, its boundaries recorded), as the dry run discovers the
workload's; a ``-dry`` trial is never judged, and ``chaos rerun`` reuses it, so a nested trial id
(``c000-p003-q002-r000``: first point 3, the recovery's boundary 2, repeat 0) names the same chain.
``recovery_kill_points`` narrows the recoveries' boundaries as ``kill_points`` narrows the first.
With ``crash_states: recorded`` the chains come from recorded crash states instead
(``chaos.kinds.crash_chains``: the recovery of each recorded prefix is itself a recording).
The checks are the same, on the chain as the point: EO over every row of the trial, PC and
liveness of the last recovery against the durable state at the last kill.

What a sweep needs from an adapter: ``run``, ``resume`` (none | input | command), ``inspect``
(completed_tasks, checkpoints, next, pending_interrupts) and persistence barriers. Scenario
fields: ``resume``, ``kill_points`` (only boundaries naming one of them), ``trials`` (repeats per
point), ``crash_depth`` (kills per trial, default 1), ``recovery_kill_points`` and ``fault`` (kill |
power_loss | torn: what a kill point does; ``chaos.kinds.faults``).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import ClassVar, ParamSpec

from chaos.kinds import crash_chains, crash_states, db_restart
from chaos.kinds.base import Checker, Kind, Property, approves_breakpoints
from chaos.kinds.baseline import (
    ASKED_AGAIN,
    MAX_ANSWERS,
    answer_action,
    approvals_plan,
    approve_action,
    asked_again_words,
    baseline_of,
    counts_before,
    declared_payloads,
    effect_counts,
    life_phases,
    outcome_pause,
    restarts,
    run_uninterrupted,
    stopped_at,
    waiting,
)
from chaos.kinds.checking import base_fields, combine, judged, times, verdict
from chaos.kinds.sweep_addon import AtPoint, SweepAddOn, TrialSteps, add_ons
from chaos.kinds.sweep_options import SweepOptions
from chaos.launchers import RacerHandle
from chaos.racer.barrier import HOLD
from chaos.racer.protocol import ActionSpec, RacerResult
from chaos.records import Baseline, CellResult, PointResult, TrialRecord, Verdict, error_field
from chaos.running.outage import Relay
from chaos.running.trial import RunContext, Task, TrialRun, attempts, retry_id
from chaos.scenario.model import Cell

ANCHOR = "kill-point-sweep-eo-pc-liveness-fcl-kinds-kill_sweep-first_checkpoint"
EO = Property("EO", "effect exactly-once", ANCHOR)
PC = Property("PC", "prefix continuation", ANCHOR)
LIVENESS = Property("LIVENESS", "liveness", ANCHOR)
BASE_PROPERTIES = (EO.code, PC.code, LIVENESS.code)
P = ParamSpec("P")  # a judge's parameters (``at_point``)


def every_boundary(cell: Cell, boundaries: list[str]) -> list[str]:
    return list(boundaries)


@dataclass(frozen=True)
class PointCheck:
    """An extra property judged at each kill point: ``judge(point, valid_records) -> Verdict``
    (called only when the point has valid trials; otherwise the property is ``unknown``)."""

    property: Property
    judge: Callable[[str, list[TrialRecord]], Verdict]


@dataclass(frozen=True)
class Sweep:
    """One sweep: which boundaries become kill points, and what is judged at each beyond EO, PC, liveness."""

    narrow: Callable[[Cell, list[str]], list[str]] = every_boundary
    extra: tuple[PointCheck, ...] = ()

    @property
    def properties(self) -> tuple[str, ...]:
        return BASE_PROPERTIES + tuple(c.property.code for c in self.extra)

    def run_cell(self, ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
        return run_sweep(ctx, cell, skip, self)

    def check(self, cell: Cell, records: list[TrialRecord]) -> CellResult:
        return check_sweep(cell, records, self)

    def summary(self, cell: Cell, records: list[TrialRecord]) -> tuple[CellResult, SweepFacts]:
        return sweep_summary(cell, records, self)

    def checkers(self, cell: Cell, facts: SweepFacts) -> tuple[Checker[SweepFacts], ...]:
        return sweep_checkers(cell, facts, self)

    def explain(self, rec: TrialRecord) -> list[str]:
        return explain_kill(rec) + [w for a in add_ons() for w in a.explain(rec)] + db_restart.explain(rec)


class SweepKind(Kind):
    """A kind that is a sweep: its trials, verdicts and explanations are its ``sweep``'s; a subclass
    names it, says what it is about and which properties it reports."""

    sweep: ClassVar[Sweep] = Sweep()
    fields = ("resume", "kill_points", "trials", "crash_depth", "recovery_kill_points", "fault", "crash_states", "bounds")
    kills_racers = True  # a racer is killed at each point: a hosted service runs in each racer
    section = "sweep"
    Options = SweepOptions

    def run_cell(self, ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
        return self.sweep.run_cell(ctx, cell, skip)

    def summary(self, cell: Cell, records: Iterable[TrialRecord]) -> tuple[CellResult, SweepFacts]:
        return self.sweep.summary(cell, list(records))

    def checkers(self, cell: Cell, facts: SweepFacts) -> tuple[Checker[SweepFacts], ...]:
        return self.sweep.checkers(cell, facts)

    def explain(self, rec: TrialRecord) -> list[str]:
        return self.sweep.explain(rec)


def _actions(cell: Cell) -> list[ActionSpec]:
    """The workload's whole life: run, and answer its interrupts when the resume form is a command
    (with another form, approve its static breakpoints, which need no value)."""
    s = cell.scenario
    acts: list[ActionSpec] = [{"op": "run"}]
    if s.resume_form == "command":
        acts.append({**_answer(cell), "if": "interrupted"})
    elif s.resume_form == "app" and isinstance(s.answers, list):  # the team's driver answers each pause by the plan
        acts.append({**_resume_action(cell), "if": "interrupted"})
    elif approves_breakpoints(s):
        acts.append({**approve_action(s), "if": "interrupted"})
    return acts


def _answer(cell: Cell) -> ActionSpec:
    """The answer of the run's life and of its recovery: the plan answers each pause by itself; one
    command value answers every pause the run stops at (``repeat``, up to ``MAX_ANSWERS``), as the
    team's driver does (``while result.interruptions: approve``) and as every other kind's baseline
    does. Answering only the first left the uninterrupted run waiting at the second pause: what it
    fires past it was never swept, and a recovery's fire past it was judged an effect the run never has.
    Where the framework ``restores`` a paused run, one answer per process: repeated in the restored
    process, a second answer hides a first one the restore lost (the same question asked again)."""
    s = cell.scenario
    act = answer_action(s)
    return act if s.answers is not None or restarts(cell) else {**act, "repeat": MAX_ANSWERS}


def _resume_action(cell: Cell) -> ActionSpec:
    s = cell.scenario
    # with static breakpoints, the recovery call is followed by the approvals of the breakpoints it stops at
    then: ActionSpec = approvals_plan(s) if approves_breakpoints(s) else {}
    if s.resume_form == "command":  # answered only where the interrupt was durably asked
        return {**_answer(cell), "only_if_durable": True}
    if s.resume_form == "app":  # the team's recovery procedure, called in the fresh process
        act: ActionSpec = {"op": "resume", "form": "app", "recover": s.recover_ref or "", **then}
        if isinstance(s.answers, list):  # for a driver that answers pauses itself
            act["plan"] = s.answers
        return act
    return {"op": "resume", "form": s.resume_form, "value": s.resume_value, **then}


def dry_run(ctx: RunContext, cell: Cell) -> TrialRecord:
    run = TrialRun(ctx, cell, f"c{cell.index:03d}-dry")
    try:
        return dry_trial(run)
    finally:
        run.cleanup()


DRY_RUN_FAILED = "the dry run, with no kill, failed"  # how a cell's failure starts when its dry run failed on its own


def dry_trial(run: TrialRun) -> TrialRecord:
    """One dry run: the racer runs the workload unarmed and records the boundaries it passes."""
    cell = run.cell
    measure = any(a.measures_store(cell) for a in add_ons())  # the store's sizes after the run (chaos.kinds.growth)
    # the run, and its answers in fresh processes where the framework restores a paused run (chaos.kinds.baseline)
    life = run_uninterrupted(run, "dry", _actions(cell), inspect_after=measure, measure_store=measure)
    out = next((o for o in life.outs if o.status != "ok"), life.outs[-1])
    trace = life.boundaries
    run.observations["boundaries"] = trace
    if len(life.starts) > 1:  # where each fresh racer began, in ``boundaries`` (victims carry on there too)
        run.observations["restarts"] = life.starts[1:]
    if life.asked_again is not None:  # an answer given after a restore was asked for again
        run.observations["asked_again"] = life.asked_again
    if SweepOptions.of(cell.scenario).crash_states != "kill":  # two writers at once (chaos.kinds.crash_states)
        run.observations["concurrent_writes"] = crash_states.writes_at_once(life.outs[0].trace)  # no recorded chains
        run.observations["racing"] = crash_states.racing_points(life.outs[0].trace)  # these points in kill mode
    if measure:  # what the run left durable, its values left out (they can be big: that is the point)
        run.observations["after"] = {k: v for k, v in (life.outs[-1].inspect_after or {}).items() if k != "values"}
    outcomes = life.outcomes
    run.observations["outcomes"] = outcomes
    for a in add_ons():  # what each add-on records of the run (AA: where it approved)
        run.observations.update(a.dry_observations(life.result()))
    ok = out.status == "ok" and bool(trace)
    reason = None if ok else f"dry run found no boundaries ({out.status}: {run.history[-1].detail})"
    lost = [e for o in outcomes for e in o.get("persistence_errors") or []]
    run.observations["persistence_errors"] = lost
    failed = next((o for o in outcomes if o.get("status") == "error"), None)
    if ok and failed is not None:
        # the framework failed with no kill at all (an app's or chaos's error is a fault, which the
        # record names): the boundaries stop where it failed and there is no finished run to compare
        # recoveries with, so the sweep measures nothing (e.g. CrewAI's checkpoint listener panicking
        # in pydantic-core mid-run, before its failed writes were counted)
        ok = False
        err = failed.get("error")
        why = out.blame_reason or f"{error_field(err, 'type')}: {error_field(err, 'message')}"
        reason = f"{DRY_RUN_FAILED} ({out.blame or 'framework'}: {why}): nothing to sweep against"
    elif ok and lost:
        # the framework swallowed failed writes into a log line (e.g. CrewAI's SQLite checkpoint
        # provider on SQLite < 3.45): a sweep over a run that persisted nothing measures nothing
        ok, e = False, lost[0]
        kinds = Counter(f"{x.get('type')}: {x.get('message')}" for x in lost)
        reason = (
            f"the framework's persistence failed silently in the dry run ({len(lost)} failed writes: "
            + "; ".join(f"{text} ({n}x)" for text, n in kinds.items())
            + f"; first at {e.get('boundary') or e.get('where')}"
            + (f"; SQLite {e['sqlite_version']}" if e.get("sqlite_version") else "")
            + ")"
        )
    return run.record(valid=ok, invalid_reason=reason, fault_fired=None)


def points_of(cell: Cell, boundaries: list[str], narrow: Callable[[Cell, list[str]], list[str]] = every_boundary) -> list[str]:
    """The kill points of a cell: its boundaries as the sweep narrows them, kept to those naming
    one of the scenario's ``kill_points`` when it lists any."""
    out = narrow(cell, boundaries)
    wanted = cell.scenario.kill_points
    return [b for b in out if any(w in b for w in wanted)] if wanted else out


def dry_runs(ctx: RunContext, cell: Cell) -> Generator[TrialRecord, None, TrialRecord | None]:
    """The cell's uninterrupted dry run (``c<i>-dry``), which finds the boundaries to kill at: yields
    each attempt it runs (an environment fault repeats it, at most ``env_retries`` times; a resumed
    run reuses the one it journaled) and returns the last one (``dry = yield from dry_runs(...)``)."""
    dry_id = f"c{cell.index:03d}-dry"
    dry = None
    attempt = ran = 0  # a resumed run redoes a dry run an outage spoiled, with a budget of its own
    while ran <= cell.scenario.env_retries:
        dry = ctx.prior.get(retry_id(dry_id, attempt))
        if dry is None:
            if attempt > 0 and ctx.await_store is not None:
                ctx.await_store(retry_id(dry_id, attempt))
            run = TrialRun(ctx, cell, retry_id(dry_id, attempt), retry_of=dry_id if attempt else None)
            try:
                dry = dry_trial(run)
            finally:
                run.cleanup()
            ran += 1
            yield dry
        attempt += 1
        if dry.fault != "environment":
            break
    return dry


def run_sweep(ctx: RunContext, cell: Cell, skip: set[str], sweep: Sweep) -> Iterator[TrialRecord]:
    recorded = SweepOptions.of(cell.scenario).crash_states != "kill" and crash_states.not_recorded(cell) is None
    if not recorded and fresh(ctx, cell):
        ctx.expect_independent()  # a fresh kill sweep: the other job slots' fork servers start while the dry run runs
    dry = yield from dry_runs(ctx, cell)
    if dry is None or not dry.valid:
        return
    points = points_of(cell, dry.observations["boundaries"], sweep.narrow)
    # a life in several processes (answers given after a restore) is swept in kill mode: a recording is one racer's
    recorded = recorded and not dry.observations.get("restarts")
    if SweepOptions.of(cell.scenario).crash_depth > 1:
        if recorded and crash_states.concurrent_writes(dry) is None and ctx.copy_ledger is not None:
            yield from crash_chains.run_recorded_chains(ctx, cell, skip, points, _chain_steps(cell, dry))
            return
        # each first kill point's chains are independent of every other point's (ids, stores, threads)
        yield from ctx.independent(
            [partial(_nested, cell=cell, skip=skip, dry=dry, ids=[f"p{i:03d}"], chain=[p]) for i, p in enumerate(points)]
        )
        return
    if recorded:
        yield from crash_states.run_recorded(ctx, cell, skip, points, _recorded_steps(cell, dry), crash_states.racing(dry))
        return
    yield from ctx.independent(point_tasks(cell, skip, points, partial(_against, dry)))


def fresh(ctx: RunContext, cell: Cell) -> bool:
    """Do all of ``cell``'s kill trials lie ahead (no dry run journaled, no subset of trials asked)?
    Then the other job slots' fork servers are worth starting while the dry run runs."""
    return ctx.only is None and ctx.prior.get(f"c{cell.index:03d}-dry") is None


def point_tasks(cell: Cell, skip: set[str], points: list[str], body_at: Callable[[str], Callable[[TrialRun], TrialRecord]]) -> list[Task]:
    """The kill trials of every point, ``trials`` repeats each (``c000-p003-r001``), each with its
    attempts, as independent tasks (``RunContext.independent``): each kills a victim of its own
    and resumes on its own store and thread, so none depends on another. ``body_at(point)`` is a
    trial at that point."""
    return [
        partial(
            attempts, cell=cell, trial_id=f"c{cell.index:03d}-p{i:03d}-r{rep:03d}", skip=skip, body=body_at(point), point=point, rep=rep
        )
        for i, point in enumerate(points)
        for rep in range(cell.scenario.trials)
    ]


# ------------------------------------------------------------------- crashes during recovery

CHAIN = " >> "  # a chain of kills: the first kill point, then each recovery's


def chain_name(chain: list[str]) -> str:
    return CHAIN.join(chain)


def recovery_points(cell: Cell, boundaries: list[str]) -> list[str]:
    """A recovery's kill points: its boundaries, kept to those naming one of the scenario's
    ``recovery_kill_points`` when it lists any."""
    wanted = SweepOptions.of(cell.scenario).recovery_kill_points
    return [b for b in boundaries if any(w in b for w in wanted)] if wanted else list(boundaries)


def _discovery_id(cell: Cell, ids: list[str]) -> str:
    return f"c{cell.index:03d}-{'-'.join(ids)}-dry"


def _nested(ctx: RunContext, cell: Cell, skip: set[str], dry: TrialRecord, ids: list[str], chain: list[str]) -> Iterator[TrialRecord]:
    """The trials below one prefix of a chain of kills: discover the boundaries of the recovery after
    the prefix, then for each, a deeper prefix or (at ``crash_depth``) the trials of the chain."""
    disc_id = _discovery_id(cell, ids)
    disc = None
    for attempt in range(cell.scenario.env_retries + 1):
        disc = ctx.prior.get(retry_id(disc_id, attempt))  # a rerun or a resumed run reuses what it discovered
        if disc is None:
            run = TrialRun(ctx, cell, retry_id(disc_id, attempt), point=chain_name(chain), retry_of=disc_id if attempt else None)
            try:
                disc = chain_trial(run, chain, discover=True, dry=dry)
            finally:
                run.cleanup()
            yield disc
        if disc.fault != "environment":
            break
    if disc is None or not disc.valid:
        return
    for q_index, b in enumerate(recovery_points(cell, disc.observations.get("resume_boundaries") or [])):
        deeper, longer = [*ids, f"q{q_index:03d}"], [*chain, b]
        if len(longer) < SweepOptions.of(cell.scenario).crash_depth:
            yield from _nested(ctx, cell, skip, dry, deeper, longer)
            continue
        for rep in range(cell.scenario.trials):
            trial_id = f"c{cell.index:03d}-{'-'.join(deeper)}-r{rep:03d}"
            yield from attempts(ctx, cell, trial_id, skip, _against_chain(dry, longer), point=chain_name(longer), rep=rep)


def _against_chain(dry: TrialRecord, chain: list[str]) -> Callable[[TrialRun], TrialRecord]:
    def body(run: TrialRun) -> TrialRecord:
        carry_baseline(run, dry)
        return chain_trial(run, chain, dry=dry)

    return body


def chain_trial(run: TrialRun, chain: list[str], *, discover: bool = False, dry: TrialRecord | None = None) -> TrialRecord:
    """Kill the victim at ``chain[0]``, then each recovery at the next boundary of the chain; the
    last recovery (``resume``) runs unarmed and is judged. With ``discover`` the trial only records
    the boundaries that last recovery passes (``resume_boundaries``, for the next level). With
    ``fault: db_restart`` the chain's last point is no kill: the database is restarted under the
    last recovery there (``chaos.kinds.db_restart``), which runs on and is judged."""
    restart = not discover and SweepOptions.of(run.cell.scenario).fault == db_restart.FAULT
    relays: list[Relay] = []
    try:
        return _chain(run, chain, discover, relays if restart else None, dry)
    finally:
        for relay in relays:
            relay.close()


def _chain(run: TrialRun, chain: list[str], discover: bool, relays: list[Relay] | None, dry: TrialRecord | None) -> TrialRecord:
    cell = run.cell
    action = _resume_action(cell)
    kills: list[dict] = []
    along = chain[:-1] if relays is not None else chain  # the kills (a restart's chain ends in the restart)
    victim = start_victim(run, chain[0], dry)
    if victim is None:
        return run.record(valid=False, invalid_reason=f"barrier {chain[0]} was never reached", fault_fired=False)

    def recovery(level: int) -> RacerHandle:
        last = level == len(along)
        racer_id = "resume" if last else f"recovery{level}"
        armed = (chain[level],) if not last or relays is not None else ()
        spec = run.spec(racer_id, actions=[action], armed=armed, inspect_before=True, inspect_after=last, hold=True)
        if last and relays is not None:  # its database is restarted at chain[-1]: it reaches Postgres through a relay
            relay, spec = db_restart.through_relay(run, spec)
            relays.append(relay)
        (h,) = run.start([spec])
        return h

    current, at = victim, chain[0]
    nxt = recovery(1)
    for level in range(1, len(along) + 1):
        role = "victim" if level == 1 else f"recovery{level - 1}"
        if level > 1:  # the recovery before stands held: let it resume, then kill it at its boundary
            if not run.wait_arrival(current, HOLD):
                hung = run.wait_exit([current])
                out = run.collect(current, role, f"resume {cell.scenario.resume}", hung=bool(hung))
                return run.record(valid=False, invalid_reason=f"{role} never reached its hold ({out.status})", fault_fired=bool(kills))
            run.release(current, HOLD)
        if not run.wait_arrival(current, at):
            hung = run.wait_exit([current])
            out = run.collect(current, role, "run" if level == 1 else f"resume {cell.scenario.resume}", hung=bool(hung))
            where = "" if level == 1 else f" by the recovery after {chain_name(chain[: level - 1])}"
            return run.record(
                valid=False,
                invalid_reason=f"barrier {at} was never reached{where} ({out.status}: {run.history[-1].detail})",
                fault_fired=bool(kills),
            )
        status = run.kill(current, at)
        killed = run.collect(current, role, "run" if level == 1 else f"resume {cell.scenario.resume}", killed_on_purpose=True)
        kills.append(
            {
                "point": at,
                "racer": current.racer_id,
                "exit_signal": status.signal if status else None,
                "confirmed": bool(killed.kill_confirmed),
            }
        )
        if not killed.kill_confirmed:
            return run.record(valid=False, invalid_reason=f"kill at {at} not confirmed (exit {status})", fault_fired=bool(kills))
        if level == len(along):
            break
        current, at = nxt, chain[level]
        nxt = recovery(level + 1)
    run.observations["kills"] = kills
    run.observations["kill"] = {"point": chain_name(chain), "exit_signal": kills[-1]["exit_signal"], "confirmed": True}

    during = None
    if relays:  # the restart, once the last recovery is under way and stands at its boundary
        relay, point = relays[0], chain[-1]

        def during(h: RacerHandle) -> TrialRecord | None:
            return db_restart.restart_at(run, h, point, relay, "resume")

    res, failed = _last_resume(run, nxt, action, during)
    if failed is not None:
        return failed
    if discover:
        run.observations["resume_boundaries"] = boundaries = [t["barrier"] for t in res.get("trace", [])]
        if not boundaries:
            return run.record(valid=False, invalid_reason=f"the recovery after {chain_name(chain)} passed no boundary", fault_fired=True)
    return run.record(valid=True, fault_fired=True)


def _last_resume(
    run: TrialRun, rec: RacerHandle, action: ActionSpec, during: Callable[[RacerHandle], TrialRecord | None] | None = None
) -> tuple[RacerResult, TrialRecord | None]:
    """Release the held resume racer after the last kill, wait for it and record what it found and
    did (``at_kill``, ``after_resume``, ``resume_outcome``, ...). Returns its result, and the
    trial's record when the trial ends here invalid (the racer never held, or failed). ``during``:
    what the trial does to the racer once it is under way (a restart: ``chaos.kinds.db_restart``),
    a record when that ended the trial."""
    cell = run.cell
    if not run.wait_arrival(rec, HOLD):
        hung = run.wait_exit([rec])
        out = run.collect(rec, "resume", f"resume {cell.scenario.resume}", action.get("value"), hung=bool(hung))
        why = f"resume racer never reached its hold ({out.status}: {run.history[-1].detail})"
        return {}, run.record(valid=False, invalid_reason=why, fault_fired=True)
    run.release(rec, HOLD)
    if during is not None and (ended := during(rec)) is not None:
        return {}, ended
    return resume_result(run, rec, action)


def resume_result(run: TrialRun, rec: RacerHandle, action: ActionSpec) -> tuple[RacerResult, TrialRecord | None]:
    """Wait for the resume racer ``rec`` (released, or never held) and record what it found and
    did; its result, and the trial's record when the trial ends here invalid (``_last_resume``)."""
    cell = run.cell
    hung = run.wait_exit([rec])
    out = run.collect(rec, "resume", f"resume {cell.scenario.resume}", action.get("value"), hung=bool(hung))
    res = out.racer_result
    outcomes = out.outcomes
    run.observations.update(
        at_kill=res.get("inspect_before"),
        after_resume=res.get("inspect_after"),
        resume_outcome=outcomes[-1] if outcomes else None,
        resume_action=action,
        resume_fired=[f["effect_key"] for f in res.get("fired", [])],
        resume_approvals=(outcomes[-1].get("approvals") if outcomes else None) or [],  # AA
        gated_task=res.get("gated_task"),
        framework=cell.scenario.target.framework,  # AA names the recovery call in the framework's words
    )
    if out.status != "ok":
        return res, run.record(valid=False, invalid_reason=f"resume racer {out.status}: {run.history[-1].detail}", fault_fired=True)
    return res, None


def _recorded_steps(cell: Cell, dry: TrialRecord) -> crash_states.SweepSteps:
    """What a recorded sweep (``chaos.kinds.crash_states``) runs: the workload's whole life, the
    resume, and at each point the same observations and (where it falls back) the same kill trial."""

    def prepare(run: TrialRun, point: str) -> None:
        carry_baseline(run, dry)
        for a in add_ons():  # what a kill trial records before it runs (AA: the approvals its victim gave)
            run.observations.update(a.before_kill(dry, point))

    return crash_states.SweepSteps(
        actions=_actions(cell),
        resume=_resume_action(cell),
        finish_resume=resume_result,
        prepare=prepare,
        kill_body=lambda point: _against(dry, point),
    )


def _chain_steps(cell: Cell, dry: TrialRecord) -> crash_chains.ChainSteps:
    """What recorded chains (``chaos.kinds.crash_chains``) run: the recorded sweep's steps, the
    recovery's kill points, and kill mode's discovery and chain trial where a chain is not recorded."""

    def baseline(run: TrialRun) -> None:
        carry_baseline(run, dry)

    def discover(chain: list[str]) -> Callable[[TrialRun], TrialRecord]:
        return lambda run: chain_trial(run, chain, discover=True, dry=dry)

    return crash_chains.ChainSteps(
        sweep=_recorded_steps(cell, dry),
        recovery_points=lambda boundaries: recovery_points(cell, boundaries),
        recovery_filters=tuple(SweepOptions.of(cell.scenario).recovery_kill_points),
        baseline=baseline,
        discover=discover,
        chain=lambda chain: _against_chain(dry, chain),
        depth=SweepOptions.of(cell.scenario).crash_depth,
    )


def _against(dry: TrialRecord, point: str) -> Callable[[TrialRun], TrialRecord]:
    """A kill trial at ``point`` that carries the uninterrupted run's effects, so it explains itself
    against the baseline."""

    def body(run: TrialRun) -> TrialRecord:
        carry_baseline(run, dry)
        for a in add_ons():
            run.observations.update(a.before_kill(dry, point))
        steps = TrialSteps(_actions(run.cell), _resume_action(run.cell), _last_resume)
        for a in add_ons():  # a fault that is no kill (db_disconnect: the racer's connection is lost there)
            instead = a.instead_of_kill(run, point, dry, steps)
            if instead is not None:
                return instead
        return kill_trial(run, point, dry)

    return body


def start_victim(run: TrialRun, point: str, dry: TrialRecord | None) -> RacerHandle | None:
    """The victim, armed at ``point``. A point the uninterrupted run passed in a fresh racer (its
    answer given after a restore: ``observations["restarts"]``, ``chaos.kinds.baseline``) is reached
    the same way: the racers before it run unarmed, each to its end, and the fresh racer that passed
    it carries on, armed there, numbering its boundaries on from them. None when a racer before it
    did not end waiting at a pause (the point is never reached)."""
    obs = dry.observations if dry is not None else {}
    boundaries: list[str] = obs.get("boundaries") or []
    starts = [0, *(obs.get("restarts") or [])]
    at = boundaries.index(point) if point in boundaries else 0
    n = sum(1 for st in starts[1:] if st <= at)
    phases = life_phases(run.cell, _actions(run.cell)) if n else [_actions(run.cell)]
    for m in range(n):
        rid = f"victim-restart{m}" if m else "victim"
        (h,) = run.start([run.spec(rid, actions=phases[m], counts=counts_before(boundaries, starts[m]))])
        out = run.collect(h, rid, "run" if m == 0 else "resume", hung=bool(run.wait_exit([h])))
        if out.status != "ok" or not waiting(out):
            return None
    rid = f"victim-restart{n}" if n else "victim"
    (victim,) = run.start(
        [run.spec(rid, actions=phases[min(n, len(phases) - 1)], armed=(point,), counts=counts_before(boundaries, starts[n]))]
    )
    return victim


def kill_trial(run: TrialRun, point: str, dry: TrialRecord | None = None) -> TrialRecord:
    cell = run.cell
    # 1. run armed at the one point, with the resume racer started alongside (held before the
    #    framework's store); kill the victim at the point
    victim = start_victim(run, point, dry)
    if victim is None:
        return run.record(valid=False, invalid_reason=f"barrier {point} was never reached", fault_fired=False)
    action = _resume_action(cell)
    (rec,) = run.start([run.spec("resume", actions=[action], inspect_before=True, inspect_after=True, hold=True)])
    arrived = run.wait_arrival(victim, point)
    if not arrived:
        hung = run.wait_exit([victim])
        run.collect(victim, "victim", "run", hung=bool(hung))
        return run.record(valid=False, invalid_reason=f"barrier {point} was never reached", fault_fired=False)
    status = run.kill(victim, point)
    killed = run.collect(victim, "victim", "run", killed_on_purpose=True)
    run.observations["kill"] = {"point": point, "exit_signal": status.signal if status else None, "confirmed": bool(killed.kill_confirmed)}
    if not killed.kill_confirmed:
        return run.record(valid=False, invalid_reason=f"kill at {point} not confirmed (exit {status})", fault_fired=False)
    for a in add_ons():  # a fault after the kill (power_loss | torn drops the unsynced writes now; kill: nothing)
        failed_fault = a.after_kill(run)
        if failed_fault is not None:
            return run.record(valid=False, invalid_reason=failed_fault, fault_fired=True)

    # 2. now the fresh racer may look at the durable state and resume
    _, failed = _last_resume(run, rec, action)
    return failed if failed is not None else run.record(valid=True, fault_fired=True)


# ------------------------------------------------------------------------------------ check


def _counts(rec: TrialRecord) -> dict[str, int]:
    """Rows per effect key (the task, or ``task:value`` for a gated effect) in one trial."""
    return effect_counts(rec.ledger)


def carry_baseline(run: TrialRun, dry: TrialRecord) -> None:
    """Put the uninterrupted run's effects in the trial's record (``baseline_effects``), and the
    payloads of its declared identities (``baseline_payloads``, when it has any), so the trial's
    explanation judges it alone."""
    run.observations["baseline_effects"] = _counts(dry)
    if payloads := declared_payloads(dry.ledger):
        run.observations["baseline_payloads"] = payloads


def dry_baseline(dry: TrialRecord, *, driver: bool = False) -> Baseline:
    """The dry run is the sweep's crash-free baseline: what an uninterrupted run fires, and which
    of them it fires more than once by itself (the workflow's own duplicates, which need no crash).
    ``driver``: the cell resumes through the team's own driver (``resume: app:``, ``stopped_at``)."""
    base = baseline_of(dry.trial_id, _counts(dry), declared_payloads(dry.ledger))
    base.asked_again = dry.observations.get("asked_again")
    # the pause it stopped at unanswered (resume: app: without a plan): a recovery that answers and
    # goes on fires effects this baseline never shows; those are not extra (a duplicate still is one).
    # Asked again: the run was left at the pause its answer could not get past, and says nothing beyond it
    base.stopped_at = stopped_at(dry.observations.get("outcomes"), driver=driver) or base.asked_again
    return base


def waiting_after_answer(dry: TrialRecord) -> str | None:
    """The pause the dry run ended waiting at after an answer (its last action an answer, left
    ``interrupted``: the app asked again, as a validation loop does an answer it refuses), else None."""
    outcomes = dry.observations.get("outcomes") or []
    last = outcomes[-1] if outcomes else None
    if isinstance(last, dict) and (last.get("action") or {}).get("op", "run") != "run":
        return outcome_pause(last)
    return None


def crash_duplicates(rec: TrialRecord, base: Baseline) -> dict[str, int]:
    """Effect keys the trial fired more often than the uninterrupted run did (at least twice):
    a duplicate the baseline also shows is the workflow's own, not the crash's."""
    return {k: n for k, n in _counts(rec).items() if n > max(base.effects.get(k, 1), 1)}


def lost_effects(rec: TrialRecord, base: Baseline) -> list[str]:
    """Effect keys of the uninterrupted run that never fired although the recovery completed
    (the resume returned ``done``): exactly-once's other half, at least once. A recovery that did
    not complete loses nothing yet (liveness judges it), nor does one whose workflow stalled (an
    engine's call returned ``done`` but the workflow neither ended nor waited: ``stalled``)."""
    o = rec.observed_outcome("resume_outcome")
    if o.get("status") != "done" or o.get("stalled"):
        return []
    fired = _counts(rec)
    return sorted(k for k in base.effects if not fired.get(k))


def extra_effects(rec: TrialRecord, base: Baseline) -> list[str]:
    """Effect identities the trial fired that the uninterrupted run never fires (a second post, a
    third draft, a payment to another account): an effect nobody expected is no less irreversible
    than a duplicate. Judged whether or not the recovery completed: the effect happened."""
    if base.stopped_at:  # the uninterrupted run never got past its pause: it cannot say what lies beyond
        return []
    return sorted(k for k in _counts(rec) if k not in base.effects)


def changed_payloads(rec: TrialRecord, base: Baseline) -> list[str]:
    """Declared identities (``task@key``) the trial fired with a payload the uninterrupted run
    never gave them: the same effect, carrying something else (a regenerated post under the one
    post's key). An identity of label and value (no key declared) has no payload of its own."""
    return sorted({row["effect_key"] for row in _changed_rows(rec, base)})


def _changed_rows(rec: TrialRecord, base: Baseline) -> list[dict]:
    return [row for row in rec.ledger if row["effect_key"] in base.payloads and row["value"] not in base.payloads[row["effect_key"]]]


def _extra_rows(rec: TrialRecord, base: Baseline) -> list[dict]:
    if base.stopped_at:
        return []
    return [row for row in rec.ledger if row["effect_key"] not in base.effects]


def repeat_outcome(rec: TrialRecord, base: Baseline) -> str:
    """What one repeat at a kill point came to, in words a distribution can count: ``exactly once``,
    ``duplicated w1, w2``, ``lost c``, ``resume error: T``, ``nothing durable`` or ``invalid``. With
    parallel branches the same kill point can end differently each time (which branch had saved
    its writes when the kill came is the scheduler's choice), so a sweep with repeats counts them."""
    if not rec.valid:
        return "invalid"
    if unanswerable(rec):
        return "nothing durable"
    o = rec.observed_outcome("resume_outcome")
    if o.get("status") in ("error", "refused"):  # refused: a guard (target.guard) turned the recovery away
        return f"resume {o['status']}: {error_field(o.get('error'), 'type')}"
    parts = []
    if dups := sorted(crash_duplicates(rec, base)):
        parts.append("duplicated " + ", ".join(dups))
    if lost := lost_effects(rec, base):
        parts.append("lost " + ", ".join(lost))
    if extra := extra_effects(rec, base):
        parts.append("extra " + ", ".join(extra))
    if changed := changed_payloads(rec, base):
        parts.append("changed payload " + ", ".join(changed))
    if not parts and not rec.ledger:
        return "nothing fired"
    return "; ".join(parts) or "exactly once"


def distribution(recs: list[TrialRecord], base: Baseline) -> dict[str, int]:
    """How many repeats of one kill point came to each outcome (``repeat_outcome``), most frequent first."""
    counts: dict[str, int] = defaultdict(int)
    for r in recs:
        counts[repeat_outcome(r, base)] += 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _fired_summary(rec: TrialRecord) -> str:
    return _effects_summary(_counts(rec))


def _effects_summary(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} x{n}" for k, n in sorted(counts.items())) or "nothing"


def _point_eo(point: str, valid: list[TrialRecord], base: Baseline) -> Verdict:
    """EO at one kill point: every expected effect at least once after a completed recovery, and
    none more often than in the uninterrupted run. Lost and duplicated are named separately."""
    dups = [(r, k, n) for r in valid for k, n in crash_duplicates(r, base).items()]
    lost = [(r, k) for r in valid for k in lost_effects(r, base)]
    extra = [(r, row) for r in valid for row in _extra_rows(r, base)]
    changed = [(r, row) for r in valid for row in _changed_rows(r, base)]
    if dups or lost or extra or changed:
        parts = []
        if lost:
            r0, _ = lost[0]
            keys = sorted({k for _, k in lost})
            parts.append(
                f"lost {', '.join(repr(k) for k in keys)}: the recovery completed but never fired it "
                f"(trial {r0.trial_id} recorded instead: {_fired_summary(r0)})"
            )
        if dups:
            r0, k0, n0 = dups[0]
            more = f", {n0 - base.effects.get(k0, 1)} more than the uninterrupted run" if base.effects.get(k0, 1) > 1 else ""
            parts.append(f"duplicated {k0!r}: fired {n0}x{more} (trial {r0.trial_id})")
        if extra:
            r0, row0 = extra[0]
            keys = sorted({row["effect_key"] for _, row in extra})
            parts.append(
                f"fired {', '.join(repr(k) for k in keys)}, an effect the uninterrupted run never fires "
                f"(trial {r0.trial_id}, ledger seq {row0['seq']}; the uninterrupted run fired: {_effects_summary(base.effects)})"
            )
        if changed:
            r0, row0 = changed[0]
            keys = sorted({row["effect_key"] for _, row in changed})
            was = ", ".join(repr(v) for v in base.payloads.get(row0["effect_key"], []))
            parts.append(
                f"changed the payload of {', '.join(repr(k) for k in keys)}: {row0['value']!r} where the uninterrupted run "
                f"gave {was} (trial {r0.trial_id}, ledger seq {row0['seq']})"
            )
        dup_keys = {(r.trial_id, k) for r, k, _ in dups}
        seqs = {row["seq"] for r in valid for row in r.ledger if (r.trial_id, row["effect_key"]) in dup_keys}
        seqs |= {row["seq"] for _, row in extra} | {row["seq"] for _, row in changed}
        bad = (
            {r.trial_id for r, _, _ in dups}
            | {r.trial_id for r, _ in lost}
            | {r.trial_id for r, _ in extra}
            | {r.trial_id for r, _ in changed}
        )
        repeats = f" (in {len(bad)} of {len(valid)} repeats)" if len(valid) > 1 else ""
        return verdict(
            "EO",
            "violated",
            f"{point}{repeats}: " + "; ".join(parts),
            points=[point],
            trial_ids=sorted(bad),
            ledger_seqs=sorted(seqs),
        )
    if not any(r.ledger for r in valid):
        return verdict("EO", "unknown", f"{point}: vacuous, no effect fired at all", points=[point], vacuous=True)
    return verdict(
        "EO",
        "holds",
        f"{point}: every effect at most once" + (", and every expected one at least once" if base.effects else ""),
        points=[point],
        trial_ids=[r.trial_id for r in valid],
    )


def unanswerable(rec: TrialRecord) -> bool:
    """Was nothing durable at the kill, so the resume racer had no interrupt to answer (and sent
    nothing), or, in a framework that persists nothing itself, had the application saved nothing
    yet (``nothing_saved``)? A crash before the first save: the run is lost, which FCL (or, after a
    power loss, DU) judges, not the properties of a resume."""
    if nothing_saved(rec):
        return True
    at_kill = rec.observed_inspect("at_kill")
    action = rec.observed("resume_action", ActionSpec)
    return (
        bool(action.get("only_if_durable"))
        and rec.observations.get("resume_outcome") is None
        and not at_kill.get("error")
        and not at_kill.get("checkpoints")
        and not at_kill.get("durable_checkpoints")
    )


def nothing_saved(rec: TrialRecord) -> str | None:
    """The adapter's words when the resume found nothing the application had saved (``nothing_saved``)."""
    o = rec.observed_outcome("resume_outcome")
    if o.get("status") != "nothing_saved":
        return None
    return str(error_field(o.get("error"), "message") or "nothing saved")


def _attributed(row: dict) -> bool:
    """Does the row say which node fired it (an adapter that attributes effects, inside a task)?"""
    return row.get("node") is not None


def _where(row: dict) -> str:
    """A node as a report names it: ``confirm`` in the root graph, ``interrupt_handler (subgraph response_agent)``."""
    if not _attributed(row):
        return str(row["task"])
    ns = row.get("namespace") or ""
    return f"{row['node']} (subgraph {ns})" if ns else str(row["node"])


def ran_again(rec: TrialRecord) -> list[dict] | None:
    """The resume racer's effect rows fired by a node the durable state at the kill recorded
    complete (PC's evidence); None when that state was unreadable.

    A row that names its task is compared with the ids of the tasks complete at the kill
    (``completed_task_ids``, subgraphs' included): a node that runs again in a loop is a new task,
    the same task re-executed after the crash is the violation. A row that names only its node and
    (sub)graph namespace is compared with the kill-time frontier of that namespace
    (``completed_by_namespace``), so labels stay free-form and subgraph nodes count.
    A row without attribution (an adapter that does not attribute, a journal written before) is
    compared by its label with the root graph's completed tasks, as before. A row fired outside a
    running task names no node: it is reported apart (``outside_task_rows``), never compared."""
    at_kill = rec.observations.get("at_kill") or {}
    if at_kill.get("error") or at_kill.get("completed_tasks") is None:
        return None
    frontier: dict[str, list[str]] | None = at_kill.get("completed_by_namespace")
    task_ids = at_kill.get("completed_task_ids")
    done_ids = set(task_ids) if task_ids is not None else None
    root = set(at_kill.get("completed_tasks") or [])
    again = []
    for row in rec.ledger:
        if row["racer_id"] != "resume" or row.get("outside_task"):
            continue
        if done_ids is not None and row.get("task_id"):
            # the very task the kill found complete ran again (a node in a loop runs as new tasks)
            hit = row["task_id"] in done_ids
        elif frontier is not None and _attributed(row):
            hit = row["node"] in (frontier.get(row.get("namespace") or "") or [])
        else:
            hit = row["task"] in root
        if hit:
            again.append(row)
    return again


def durable_at_kill(rec: TrialRecord) -> int | None:
    """Durable checkpoints at the kill: every (sub)graph's when the adapter counts them
    (``durable_checkpoints``), else the root's (``checkpoints``)."""
    at_kill = rec.observed_inspect("at_kill")
    n = at_kill.get("durable_checkpoints")
    return n if n is not None else at_kill.get("checkpoints")


def _pc_holds(valid: list[TrialRecord]) -> str:
    """PC's reason when it holds: what the resume's effects were compared with."""
    rows = [row for r in valid for row in r.ledger if row["racer_id"] == "resume" and not row.get("outside_task")]
    by_node = [row for row in rows if _attributed(row)]
    if by_node and any(r.observed_inspect("at_kill").get("completed_by_namespace") is not None for r in valid):
        nodes = ", ".join(sorted({_where(row) for row in by_node}))
        return (
            f"no node recorded complete ran again ({len(by_node)} resume effect(s), fired by {nodes}, none by a node durable at the kill)"
        )
    return "no task recorded complete ran again"


def _lost_before_first_save(point: str, framework: str) -> str:
    """A vacuous point's reason: nothing was durable at the kill. Said as what happened to the run
    (a pause announced but never saved, when the kill came at the save of one) and who judges that
    loss: FCL where the framework supports it, else that it is not judged here, and why."""
    from chaos.targets import TARGETS

    info = TARGETS.get(framework)
    announced = info is not None and point.split("#")[0].endswith(":before") and point.startswith(info.pause_saves)
    what = (
        "the pause was announced (whoever it notifies was asked) but never saved: nothing was durable at the kill, so the "
        "answer has no run to reach"
        if announced
        else "nothing was durable at the kill, so there was no interrupt a human could answer"
    )
    unjudged = info.first_save_unjudged() if info is not None else None
    if unjudged is None:
        return f"{what} (a crash before the first checkpoint loses the run, which FCL judges)"
    return f"{what}; a run lost before its first save is not judged on {framework} (FCL: {unjudged})"


def _point_verdicts(point: str, recs: list[TrialRecord], sweep: Sweep, base: Baseline, framework: str = "") -> list[Verdict]:
    """EO, PC, LIVENESS and the sweep's ``extra`` checks at one kill point, in that order. Each
    property has its own judge, called check-safe (``at_point``): one that raises makes its own
    property ``unknown`` at the point, with the error, and the others keep their verdicts."""
    valid = [r for r in recs if r.valid]
    if not valid:
        why = recs[0].invalid_reason if recs else "no trial"
        return [verdict(p, "unknown", f"{point}: {why}", points=[point], trial_ids=[r.trial_id for r in recs]) for p in sweep.properties]
    extra = [v for c in sweep.extra for v in _judged_at(point, c.property.code, c.judge, point, valid)]
    if all(unanswerable(r) for r in valid):
        # EO, PC and liveness speak of a resume; none was possible. The sweep's own checks (a lost
        # run, say) still judge the point.
        said = next((w for r in valid if (w := nothing_saved(r))), None)
        why = f"{point}: vacuous, {said}" if said else f"{point}: vacuous, {_lost_before_first_save(point, framework)}"
        return [verdict(p, "unknown", why, points=[point], vacuous=True) for p in BASE_PROPERTIES] + extra
    return [
        *_judged_at(point, EO.code, _point_eo, point, valid, base),
        *_judged_at(point, PC.code, _point_pc, point, valid),
        *_judged_at(point, LIVENESS.code, _point_liveness, point, valid, base),
        *extra,
    ]


def _judged_at(point: str, code: str, judge: Callable[P, Verdict], *args: P.args, **kwargs: P.kwargs) -> list[Verdict]:
    """``judge(*args)``, the verdict of ``code`` at ``point``; ``unknown`` with the error if it raises."""
    return at_point(point, (code,), lambda: [judge(*args, **kwargs)])


def _point_pc(point: str, valid: list[TrialRecord]) -> Verdict:
    """PC at a point: nothing recorded complete at the kill runs again."""
    pc_bad, pc_unknown = [], []
    for r in valid:
        again_rows = ran_again(r)
        if again_rows is None:
            pc_unknown.append(r)
        elif again_rows:
            pc_bad.append((r, again_rows))
    if pc_bad:
        r0, rows0 = pc_bad[0]
        names = sorted({_where(row) for row in rows0})
        return verdict(
            "PC",
            "violated",
            f"{point}: {', '.join(names)} recorded complete at the kill, ran again on resume "
            f"(effect {', '.join(sorted({row['effect_key'] for row in rows0}))})",
            points=[point],
            trial_ids=[r.trial_id for r, _ in pc_bad],
            ledger_seqs=[row["seq"] for _, rows in pc_bad for row in rows],
        )
    if len(pc_unknown) == len(valid):
        err = valid[0].observed_inspect("at_kill").get("error")
        return verdict("PC", "unknown", f"{point}: durable state unreadable ({error_field(err, 'type')})", points=[point])
    return verdict("PC", "holds", f"{point}: {_pc_holds(valid)}", points=[point], trial_ids=[r.trial_id for r in valid])


def _point_liveness(point: str, valid: list[TrialRecord], base: Baseline | None = None) -> Verdict:
    """LIVENESS at a point: the resume finishes the run or leaves it waiting for a human (a
    recovery that answered and was asked again, as the uninterrupted run was after a restore
    (``Baseline.asked_again``), says so: the cell's verdict judges that run)."""
    dead, finished = [], []
    for r in valid:
        o = r.observed_outcome("resume_outcome")
        after = r.observed_inspect("after_resume")
        if r.observed_inspect("at_kill").get("ended"):
            # the framework's own "finished" was durable at the kill (an adapter reports ``ended``):
            # the run was over, there is nothing to resume, whatever a resume of it then says
            finished.append(r)
        elif o.get("status") in ("error", "refused"):  # refused: a guard (target.guard) turned the recovery away
            err = o.get("error")
            by = f"refused by guard {err.get('refused_by')}: " if o.get("status") == "refused" and err else ""
            said = f"{by}{error_field(err, 'type')}: {(error_field(err, 'message') or '')[:120]}"
            planned = db_restart.planned(r)  # the error came after chaos restarted the database (fault: db_restart)
            dead.append((r, f"after {planned}, the recovery failed loudly: {said}" if planned else said))
        elif after.get("next") and not after.get("pending_interrupts") and not after.get("breakpoint"):
            dead.append((r, db_restart.stuck_words(r) or f"stopped with next={after.get('next')}"))
    if dead:
        return verdict(
            "LIVENESS",
            "violated",
            f"{point}: resume did not finish the run ({dead[0][1]})",
            points=[point],
            trial_ids=[r.trial_id for r, _ in dead],
        )
    if finished and len(finished) == len(valid):
        return verdict(
            "LIVENESS",
            "holds",
            f"{point}: nothing to resume, the run had finished before the kill (the framework recorded its end)",
            points=[point],
            trial_ids=[r.trial_id for r in valid],
        )
    bps = [bp for r in valid if (bp := r.observed_inspect("after_resume").get("breakpoint"))]
    how = f" or left it waiting at the static breakpoint {bps[0].get('when')} {', '.join(bps[0].get('nodes') or [])}" if bps else ""
    restarted = next((w for r in valid if (w := db_restart.survived_words(r))), None)
    how += f" ({restarted})" if restarted else ""
    if base is not None and base.asked_again and any(_answered_and_asked(r) for r in valid):
        how += f" or left it waiting: {ASKED_AGAIN} after the recovery's answer, as after the uninterrupted run's ({base.trial_id})"
    return verdict("LIVENESS", "holds", f"{point}: resume finished the run{how}", points=[point], trial_ids=[r.trial_id for r in valid])


def _answered_and_asked(rec: TrialRecord) -> bool:
    """Did the recovery answer (an approval given) and end waiting at a pause again?"""
    o = rec.observed_outcome("resume_outcome")
    return o.get("status") == "interrupted" and bool(rec.observations.get("resume_approvals") or o.get("answered"))


CELL_DRY = re.compile(r"^c\d{3,}(?:-e\d+)?-dry$")  # the cell's own dry run (not a recovery's discovery)


def chains_of(cell: Cell, boundaries: list[str], records: list[TrialRecord], sweep: Sweep) -> list[tuple[str, TrialRecord | None]]:
    """The kill points of a cell with ``crash_depth`` >= 2, as the runner walked them: each chain
    of kills by name, with None; or a prefix whose recovery could not be discovered, with that
    discovery trial (its points are unknown for the discovery's reason)."""
    found: dict[str, TrialRecord] = {}
    for r in records:
        if r.trial_id.endswith("-dry") and not CELL_DRY.match(r.trial_id):
            base = re.sub(r"-e\d+-dry$", "-dry", r.trial_id)  # the last attempt counts
            found[base] = r
    out: list[tuple[str, TrialRecord | None]] = []

    def walk(ids: list[str], chain: list[str]) -> None:
        disc = found.get(_discovery_id(cell, ids))
        if disc is None or not disc.valid:
            if disc is not None:
                out.append((chain_name([*chain, "(recovery)"]), disc))
            return
        for q, b in enumerate(recovery_points(cell, disc.observations.get("resume_boundaries") or [])):
            if len(chain) + 1 < SweepOptions.of(cell.scenario).crash_depth:
                walk([*ids, f"q{q:03d}"], [*chain, b])
            else:
                out.append((chain_name([*chain, b]), None))

    for i, p in enumerate(points_of(cell, boundaries, sweep.narrow)):
        walk([f"p{i:03d}"], [p])
    return out


@dataclass
class SweepFacts:
    """What a sweep's checkers judge: each property's verdicts at the kill points, the cell's
    points, the dry run and its baseline; or, when the dry run failed, why nothing is judged."""

    failure: str | None = None
    dry: TrialRecord | None = None
    base: Baseline | None = None
    at_points: dict[str, list[Verdict]] = field(default_factory=dict)
    points: list[PointResult] = field(default_factory=list)
    # per add-on (``chaos.kinds.sweep_addon``), the properties this cell judges, in its order
    add_on_codes: list[tuple[SweepAddOn, tuple[str, ...]]] = field(default_factory=list)


def check_sweep(cell: Cell, records: list[TrialRecord], sweep: Sweep) -> CellResult:
    """The sweep's summary and verdicts, each checker in isolation (what ``chaos analyze`` does)."""
    result, facts = sweep_summary(cell, records, sweep)
    result.verdicts = [judged("sweep", c, cell, facts) for c in sweep_checkers(cell, facts, sweep)]
    return result


def sweep_summary(cell: Cell, records: list[TrialRecord], sweep: Sweep) -> tuple[CellResult, SweepFacts]:
    """The cell's numbers: each kill point's trials, effect counts, durable checkpoints, resume
    outcomes and its verdicts; the store's size. And what the checkers combine over the points."""
    dries = [r for r in records if CELL_DRY.match(r.trial_id)]  # the last one counts (earlier ones an environment fault spoiled)
    dry = dries[-1] if dries else None
    trials = [r for r in records if not r.trial_id.endswith("-dry") and not crash_states.is_recording(r.trial_id)]
    result = CellResult(**base_fields(cell, trials))
    result.crash_states = crash_states.summary(cell, records)
    result.racer_errors = sum(1 for r in trials for o in r.racers if o.status in ("harness_error", "crashed", "timeout"))
    if dry is None or not dry.valid:
        why = (dry.invalid_reason or "?") if dry else "the dry run did not run"  # a failed dry run always says why
        result.failure = why
        return result, SweepFacts(failure=why, add_on_codes=[(a, a.properties_of(cell, None, trials)) for a in add_ons()])
    base = result.baseline = dry_baseline(dry, driver=cell.scenario.resume_form == "app")
    by_point: dict[str, list[TrialRecord]] = defaultdict(list)
    for r in trials:
        by_point[r.point or "?"].append(r)
    if SweepOptions.of(cell.scenario).crash_depth > 1:
        chains = chains_of(cell, dry.observations.get("boundaries", []), records, sweep)
        points = [name for name, _ in chains]
        for name, disc in chains:
            if disc is not None:  # the discovery failed: its reason is the point's
                by_point[name] = [disc]
    else:
        points = points_of(cell, dry.observations.get("boundaries", []), sweep.narrow)
    all_verdicts: dict[str, list[Verdict]] = defaultdict(list)
    # what the add-ons judge in this cell (its fault, its target; AA where a recovery can be told from an approval)
    add_on_codes = [(a, a.properties_of(cell, dry, trials)) for a in add_ons()]
    framework = cell.scenario.target.framework
    for point in points:
        recs = by_point.get(point, [])
        valid = [r for r in recs if r.valid]
        keys = sorted({k for r in valid for k in _counts(r)} | set(base.effects))
        # each property's judge at the point, check-safe: one that raises costs its properties there
        lost = {r.trial_id: lost_effects(r, base) for r in valid}
        pv = at_point(point, sweep.properties, _point_verdicts, point, recs, sweep, base, framework)
        for a, codes in add_on_codes:
            if codes and a.judge is not None:
                pv += at_point(point, codes, a.judge, AtPoint(cell, point, recs, lost))
        for v in pv:
            all_verdicts[v.property].append(v)
        outcomes: list[str] = []
        for r in recs:
            if not r.valid:
                outcomes.append(f"unknown: {r.invalid_reason}")
                continue
            o = r.observations.get("resume_outcome")
            if o is None:
                outcomes.append("nothing to answer" if unanswerable(r) else "not performed")
            else:
                outcomes.append(o["status"] if o.get("status") != "error" else f"error: {o.get('error', {}).get('type')}")
        result.points.append(
            PointResult(
                point=point,
                trials=len(recs),
                reached=len(valid),
                effect_counts={k: [_counts(r).get(k, 0) for r in valid] for k in keys} if valid else {},
                durable_checkpoints=[durable_at_kill(r) for r in valid],
                resume_outcomes=outcomes,
                distribution=distribution(recs, base),
                duplicates=sorted({k for r in valid for k in crash_duplicates(r, base)}),
                lost=sorted({k for r in valid for k in lost_effects(r, base)}),
                extra=sorted({k for r in valid for k in extra_effects(r, base)}),
                changed=sorted({k for r in valid for k in changed_payloads(r, base)}),
                verdicts=pv,
            )
        )
    for a in add_ons():  # what the add-ons add to the cell's numbers (the store's size)
        a.summarize(result, dry)
    facts = SweepFacts(dry=dry, base=base, at_points=dict(all_verdicts), points=result.points, add_on_codes=add_on_codes)
    return result, facts


def at_point(point: str, codes: Iterable[str], judge: Callable[P, list[Verdict]], *args: P.args, **kwargs: P.kwargs) -> list[Verdict]:
    """The verdicts ``judge(*args)`` gives at ``point``, or, when it raises, each of ``codes``
    ``unknown`` there with the error (check-safe per property at each kill point, as ``compose`` per cell)."""
    try:
        return judge(*args, **kwargs)
    except Exception as exc:
        why = f"{type(exc).__name__}: {exc}"[:1000]
        return [verdict(c, "unknown", f"{point}: the {c} checker failed: {why}", points=[point]) for c in codes]


def sweep_checks(sweep: Sweep) -> tuple[Checker[SweepFacts], ...]:
    """Every checker a sweep has: EO, PC and LIVENESS, its ``extra`` point checks, then each add-on's
    (``chaos.kinds.sweep_addon``: a fault's DU, CV and CL, LS where the target declares it, SB, AA)."""
    extra = tuple(Checker(c.property, _combined(c.property.code)) for c in sweep.extra)
    added = tuple(Checker(p, _add_on_check(a, p.code)) for a in add_ons() for p in a.properties)
    return (Checker(EO, _check_eo), Checker(PC, _combined("PC")), Checker(LIVENESS, _check_liveness), *extra, *added)


def sweep_checkers(cell: Cell, facts: SweepFacts, sweep: Sweep) -> tuple[Checker[SweepFacts], ...]:
    """The checkers of this cell, in the order its verdicts come: the sweep's own, then what each
    add-on judges in this cell (the fault's, LS where the target owns the threads, SB when bounded,
    AA where a recovery can be told from an approval)."""
    codes = [*sweep.properties, *(c for _, codes in facts.add_on_codes for c in codes)]
    by_code = {c.property.code: c for c in sweep_checks(sweep)}
    return tuple(by_code[code] for code in codes)


def _add_on_check(add_on: SweepAddOn, code: str) -> Callable[[Cell, SweepFacts], Verdict]:
    """The checker of an add-on's property ``code``: ``unknown`` when the dry run failed, else the add-on's cell check."""

    def judge(cell: Cell, f: SweepFacts) -> Verdict:
        if f.failure is not None:
            return verdict(code, "unknown", f.failure)
        return add_on.check(cell, code, f.dry, f.at_points.get(code, []))

    return judge


def _combined(code: str) -> Callable[[Cell, SweepFacts], Verdict]:
    """The checker that combines ``code``'s verdicts over the kill points (``combine``)."""

    def judge(cell: Cell, f: SweepFacts) -> Verdict:
        if f.failure is not None:
            return verdict(code, "unknown", f.failure)
        return combine(code, f.at_points.get(code, []))

    return judge


def _check_eo(cell: Cell, f: SweepFacts) -> Verdict:
    """EO over the kill points, its two halves (lost, duplicated) first; violated by the workflow
    itself when the uninterrupted run fires an effect twice."""
    eo = _combined("EO")(cell, f)
    if f.failure is not None or f.dry is None or f.base is None:
        return eo
    base, dry = f.base, f.dry
    lost_at = [p for p in f.points if p.lost]
    dup_at = [p for p in f.points if p.duplicates]
    extra_at = [p for p in f.points if p.extra]
    changed_at = [p for p in f.points if p.changed]
    if lost_at or dup_at or extra_at or changed_at:  # each finding of exactly-once in one line before the points' detail
        halves = []
        if lost_at:
            halves.append(f"lost {', '.join(sorted({k for p in lost_at for k in p.lost}))} at {len(lost_at)} kill point(s)")
        if dup_at:
            halves.append(f"duplicated {', '.join(sorted({k for p in dup_at for k in p.duplicates}))} at {len(dup_at)} kill point(s)")
        if extra_at:
            halves.append(
                f"fired {', '.join(sorted({k for p in extra_at for k in p.extra}))}, which the uninterrupted run never fires, "
                f"at {len(extra_at)} kill point(s)"
            )
        if changed_at:
            halves.append(
                f"changed the payload of {', '.join(sorted({k for p in changed_at for k in p.changed}))} at {len(changed_at)} kill point(s)"
            )
        eo.reason = "; ".join(halves) + " | " + eo.reason
    if base.workflow_duplicates:
        eo = _workflow_eo(base, dry, eo)
    if eo.vacuous and not base.effects and base.asked_again:
        eo.reason += f"; the uninterrupted run fired none either: {ASKED_AGAIN} before any effect (see LIVENESS)"
    elif eo.vacuous and not base.effects and (waits := waiting_after_answer(dry)):
        # e.g. a validation loop given an answer it refuses: the advice below would be wrong
        eo.reason += f"; the uninterrupted run fired none either: answered, it ended waiting at a pause again ({waits}): resume with an answer the app accepts"
    elif eo.vacuous and not base.effects:
        eo.reason += (
            "; the uninterrupted run fired none either: call ctx.effect inside the node that performs the effect, "
            "before it returns (an effect fired from a background thread after its node returned may never be recorded)"
        )
    return eo


def _check_liveness(cell: Cell, f: SweepFacts) -> Verdict:
    """LIVENESS over the kill points; violated by the app itself when the uninterrupted run, its
    answer given after a restore (``Baseline.asked_again``), was asked the same question again: no
    recovery gets past that pause either, and none needs a crash to stop there."""
    live = _combined("LIVENESS")(cell, f)
    if f.failure is not None or f.dry is None or f.base is None or not f.base.asked_again:
        return live
    return verdict(
        "LIVENESS",
        "violated",
        f"{asked_again_words(f.base.asked_again, f.dry.trial_id)}: a stall that needs no crash; "
        f"judged against that run, the crashes: {live.status}: {live.reason}",
        trial_ids=sorted({f.dry.trial_id, *(live.evidence.trial_ids if live.status == "violated" else [])}),
        points=live.evidence.points if live.status == "violated" else [],
    )


def _workflow_eo(base: Baseline, dry: TrialRecord, crash_eo: Verdict) -> Verdict:
    """EO when the uninterrupted run itself fires an effect more than once: violated by the
    workflow (no crash needed), reported apart from what the crashes did beyond it."""
    dup = ", ".join(f"{k!r} fired {times(n)}" for k, n in sorted(base.workflow_duplicates.items()))
    return verdict(
        "EO",
        "violated",
        f"in an uninterrupted run (the dry run {dry.trial_id}) {dup}: a duplicate that needs no crash; "
        f"judged against that run, the crashes: {crash_eo.status}: {crash_eo.reason}",
        trial_ids=sorted({dry.trial_id, *(crash_eo.evidence.trial_ids if crash_eo.status == "violated" else [])}),
        points=crash_eo.evidence.points if crash_eo.status == "violated" else [],
        ledger_seqs=sorted(
            {row["seq"] for row in dry.ledger if row["effect_key"] in base.workflow_duplicates}
            | set(crash_eo.evidence.ledger_seqs if crash_eo.status == "violated" else [])
        ),
    )


# ---------------------------------------------------------------------------------- explain


def explain_kill(rec: TrialRecord) -> list[str]:
    """Plain words for a sweep trial: each effect it lost, each it duplicated, and why. Judged
    against the uninterrupted run the trial carries (``baseline_effects``): a duplicate that run
    shows too is the workflow's own and needs no crash; the dry run itself explains its own."""
    counts = _counts(rec)
    if rec.trial_id.endswith("-dry") or crash_states.is_recording(rec.trial_id):  # uninterrupted runs (a recording only froze)
        if rec.point is not None:  # a recovery's discovery or recording: crashed before, never judged; its chains explain it
            return []
        return [
            f"effect {k} fired {times(n)} in an uninterrupted run (ledger seqs "
            f"{', '.join(str(r['seq']) for r in rec.ledger if r['effect_key'] == k)}): a duplicate that needs no crash"
            for k, n in sorted(counts.items())
            if n > 1
        ]
    base: dict[str, int] | None = rec.observations.get("baseline_effects")
    at_kill = rec.observed_inspect("at_kill")
    outcome = rec.observed_outcome("resume_outcome")
    kill = rec.observations.get("kill") or {}
    point = kill.get("point") or rec.point or "?"
    durable = set(at_kill.get("completed_tasks") or [])
    for ns, nodes in sorted((at_kill.get("completed_by_namespace") or {}).items()):
        durable |= {f"{n} (subgraph {ns})" for n in nodes} if ns else set(nodes)
    again_seqs = {row["seq"] for row in ran_again(rec) or []}
    ck = durable_at_kill(rec)
    resumed_by = outcome.get("action")
    form = (resumed_by.get("form") if resumed_by else None) or "?"
    out = []
    for key, n in counts.items():
        expected = base.get(key, 1) if base else 1
        if n < 2:
            continue
        rows = sorted((r for r in rec.ledger if r["effect_key"] == key), key=lambda r: r["seq"])
        task = rows[0]["task"]
        if expected > 1 and n <= expected:
            out.append(
                f"effect {key} fired {times(n)} (ledger seqs {', '.join(str(r['seq']) for r in rows)}), as it does in an "
                f"uninterrupted run: a duplicate that needs no crash (the workflow's own, not the kill's at {point})"
            )
            continue
        first, again = rows[0], rows[1:]
        by = ", ".join(f"racer {r['racer_id']} (seq {r['seq']})" for r in again)
        if any(r["seq"] in again_seqs for r in rows):
            task = _where(next(r for r in rows if r["seq"] in again_seqs))
            why = (
                f"the durable state at the kill already recorded {task} complete, yet the resume ran it again: "
                "the checkpoint was not honoured"
            )
        elif at_kill.get("lost_thread"):  # behind a server (LS): what it had saved is gone with the thread
            why = (
                f"the restarted server no longer knew thread {at_kill.get('lost_thread')} (lost state, LS), so the client "
                f"re-created it and ran the workflow again from the start, {task} included"
            )
        else:
            why = (
                f"{task} had fired but the durable state at the kill ({ck if ck is not None else '?'} checkpoint(s), "
                f"completed: {', '.join(sorted(durable)) or 'none'}) did not record it, so the resume ran it again: "
                "the effect happened before its checkpoint was written"
            )
        if expected > 1:
            why += f" (an uninterrupted run fires it {times(expected)} already; the kill added {n - expected})"
        out.append(
            f"racer {first['racer_id']} fired {first['effect_key']} (ledger seq {first['seq']}) and {_stopped(rec)} "
            f"{point}; resuming with '{form}', {by} fired {task} again: effect {key} happened {times(n)}; {why}"
        )
    if base is not None:
        out += _explain_unexpected(rec, base, point, form)
    if base is not None and outcome.get("status") == "done":
        for key in sorted(k for k in base if not counts.get(k)):
            fired = ", ".join(f"{k} x{m}" for k, m in sorted(counts.items())) or "nothing"
            out.append(
                f"effect {key} was lost: an uninterrupted run fires it, but {'recorded' if _recorded(rec) else 'killed'} at {point} and recovered with "
                f"'{form}', the run completed without it (recorded instead: {fired}; durable at the kill: "
                f"{ck if ck is not None else '?'} checkpoint(s), completed: {', '.join(sorted(durable)) or 'none'}): "
                "the recovery skipped it (typically a step recorded as done before its effect was performed)"
            )
    return out


def _explain_unexpected(rec: TrialRecord, effects: dict[str, int], point: str, form: str) -> list[str]:
    """Plain words for the effects of a trial the uninterrupted run never fires, and for the
    declared identities it fired with another payload (``baseline_payloads``)."""
    payloads: dict[str, list[str | None]] = rec.observations.get("baseline_payloads") or {}
    out = []
    for row in sorted(rec.ledger, key=lambda r: r["seq"]):
        key = row["effect_key"]
        if key not in effects:
            out.append(
                f"racer {row['racer_id']} fired {key} (ledger seq {row['seq']}) after the kill at {point} and the recovery with "
                f"'{form}': the uninterrupted run never fires it (it fired: {_effects_summary(effects)}); if it is one of those "
                "with another value, declare its identity (ctx.effect(task, value, key=...)) and chaos compares the value as its payload"
            )
        elif key in payloads and row["value"] not in payloads[key]:
            was = ", ".join(repr(v) for v in payloads[key])
            out.append(
                f"racer {row['racer_id']} fired {key} (ledger seq {row['seq']}) with payload {row['value']!r}, where the "
                f"uninterrupted run gave {was}: killed at {point} and recovered with '{form}', the run performed the same "
                "effect with something else (e.g. a regenerated text)"
            )
    return out


def _recorded(rec: TrialRecord) -> bool:
    """Was the trial recovered from a recorded crash state (``chaos.kinds.crash_states``), not a kill of its own?"""
    return bool(rec.observations.get("crash_state"))


def _stopped(rec: TrialRecord) -> str:
    """How the racer that fired first was stopped at the point, in an explanation's words: a recorded
    state's racer was frozen there and its state copied (what a SIGKILL there leaves), never killed."""
    if _recorded(rec):
        return "stood frozen at its barrier (the crash state a SIGKILL there leaves was recorded) at"
    return "was SIGKILLed at"
