"""``kill_sweep`` and ``first_checkpoint``: crash a racer at each persistence boundary, then resume.

A dry run (one racer, nothing armed) records the ordered boundaries the workload passes. For each
boundary (a *kill point*) and repeat, a racer runs the workload armed at that one boundary; when it
stands stopped there, the orchestrator SIGKILLs it and confirms the kill from the exit status.
A fresh racer then inspects the durable state (what the framework recorded before the crash) and
resumes with the scenario's resume form. A point the racer never reached is ``unknown``.

The resume racer is started together with the victim and *holds* (``chaos.racer.barrier.HOLD``): it
starts its process, imports and opens the effect ledger, then stops before it opens the
framework's store; it is continued only once the kill is confirmed. What it measures is what a
racer started after the kill measures (it touches the store only then); its start-up just
overlaps the victim's run instead of following it (a warm trial: about 5-8 ms less; a cold one:
the second interpreter start, about a second less).

``recovery_determinism`` runs the same trials (usually a few kill points, several repeats each);
its analysis asks whether every repeat at one point recovered the same way.

``first_checkpoint`` is the same sweep restricted to the points before the first checkpoint is
durable (up to and including the first ``put(...):before``), resumed with ``none``: does an
accepted run survive a crash before its first checkpoint?
"""

from __future__ import annotations

from typing import Iterator

from chaos.racer.barrier import HOLD
from chaos.records import TrialRecord
from chaos.scenario.model import Cell
from chaos.running.trial import RunContext, TrialRun


def _actions(cell: Cell) -> list[dict]:
    """The workload's whole life: run, and answer its interrupt when the resume form is a command."""
    s = cell.scenario
    acts = [{"op": "run"}]
    if s.resume_form == "command":
        acts.append({"op": "resume", "form": "command", "value": s.resume_value, "if": "interrupted"})
    return acts


def _resume_action(cell: Cell) -> dict:
    s = cell.scenario
    return {"op": "resume", "form": s.resume_form, "value": s.resume_value}


def dry_run(ctx: RunContext, cell: Cell) -> TrialRecord:
    run = TrialRun(ctx, cell, f"c{cell.index:03d}-dry")
    try:
        (h,) = run.start([run.spec("dry", actions=_actions(cell))])
        hung = run.wait_exit([h])
        out = run.collect(h, "dry", "run", hung=bool(hung))
        trace = [t["barrier"] for t in (out.result or {}).get("trace", [])]
        run.observations["boundaries"] = trace
        run.observations["outcomes"] = (out.result or {}).get("outcomes")
        ok = out.status == "ok" and bool(trace)
        reason = None if ok else f"dry run found no boundaries ({out.status}: {run.history[-1].detail})"
        lost = [e for o in (out.result or {}).get("outcomes") or [] for e in o.get("persistence_errors") or []]
        run.observations["persistence_errors"] = lost
        if ok and lost:
            # the framework swallowed failed writes into a log line (e.g. CrewAI's SQLite checkpoint
            # provider on SQLite < 3.45): a sweep over a run that persisted nothing measures nothing
            ok, e = False, lost[0]
            reason = (f"the framework's persistence failed silently in the dry run ({len(lost)} failed writes; first at "
                      f"{e.get('boundary') or e.get('where')}: {e.get('type')}: {e.get('message')}"
                      + (f"; SQLite {e['sqlite_version']}" if e.get("sqlite_version") else "") + ")")
        return run.record(valid=ok, invalid_reason=reason, fault_fired=None)
    finally:
        run.cleanup()


def points_of(cell: Cell, boundaries: list[str]) -> list[str]:
    """The kill points of a cell: its boundaries (up to the first checkpoint for first_checkpoint),
    narrowed to those naming one of the scenario's ``kill_points`` when it lists any."""
    out = list(boundaries)
    if cell.scenario.kind == "first_checkpoint":
        out = []
        for b in boundaries:
            out.append(b)
            if b.startswith("put(") and ":before#" in b:
                break
    wanted = cell.scenario.kill_points
    return [b for b in out if any(w in b for w in wanted)] if wanted else out


def run_cell(ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
    dry_id = f"c{cell.index:03d}-dry"
    dry = ctx.prior.get(dry_id)  # a resumed run reuses the boundaries it already discovered
    if dry is None:
        dry = dry_run(ctx, cell)
        yield dry
    if not dry.valid:
        return
    points = points_of(cell, dry.observations["boundaries"])
    for p_index, point in enumerate(points):
        for rep in range(cell.scenario.trials):
            trial_id = f"c{cell.index:03d}-p{p_index:03d}-r{rep:03d}"
            if not ctx.wants(trial_id, skip):
                continue
            run = TrialRun(ctx, cell, trial_id, point=point, rep=rep)
            try:
                yield kill_trial(run, point)
            finally:
                run.cleanup()


def kill_trial(run: TrialRun, point: str) -> TrialRecord:
    cell = run.cell
    # 1. run armed at the one point, with the resume racer started alongside (held before the
    #    framework's store); kill the victim at the point
    (victim,) = run.start([run.spec("victim", actions=_actions(cell), armed=(point,))])
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

    # 2. now the fresh racer may look at the durable state and resume
    if not run.wait_arrival(rec, HOLD):
        hung = run.wait_exit([rec])
        out = run.collect(rec, "resume", f"resume {cell.scenario.resume}", action.get("value"), hung=bool(hung))
        return run.record(valid=False, invalid_reason=f"resume racer never reached its hold ({out.status}: {run.history[-1].detail})",
                          fault_fired=True)
    run.release(rec, HOLD)
    hung = run.wait_exit([rec])
    out = run.collect(rec, "resume", f"resume {cell.scenario.resume}", action.get("value"), hung=bool(hung))
    res = out.result or {}
    outcomes = res.get("outcomes") or []
    run.observations.update(
        at_kill=res.get("inspect_before"),
        after_resume=res.get("inspect_after"),
        resume_outcome=outcomes[-1] if outcomes else None,
        resume_fired=[f["effect_key"] for f in res.get("fired", [])],
    )
    if out.status != "ok":
        return run.record(valid=False, invalid_reason=f"resume racer {out.status}: {run.history[-1].detail}", fault_fired=True)
    return run.record(valid=True, fault_fired=True)
