"""``race``: k racers resume one parked interrupt at once.

Per trial: a parking racer runs the workload to its ``interrupt()`` (durable checkpoint); then k
racers build the workload against the same thread and stop at the start gate; when all k stand
there, the gate opens for all with one signal; each sleeps its seeded jitter and resumes. The
gated effect's ledger rows for the thread are the trial's ``fires``. A trial is valid only when
all k racers passed the gate.
"""

from __future__ import annotations

from typing import Iterator

from chaos.records import TrialRecord
from chaos.scenario.model import Cell
from chaos.running.trial import RunContext, TrialRun


def run_cell(ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
    s = cell.scenario
    for t in range(s.trials):
        trial_id = f"c{cell.index:03d}-t{t:04d}"
        if not ctx.wants(trial_id, skip):
            continue
        run = TrialRun(ctx, cell, trial_id, rep=t)
        try:
            yield race_trial(run)
        finally:
            run.cleanup()


def race_trial(run: TrialRun) -> TrialRecord:
    s = run.cell.scenario
    k = s.racers.k
    # 1. park: run to the interrupt, durably
    park_spec = run.spec("park", actions=[{"op": "run"}], inspect_after=True)
    (parker,) = run.start([park_spec])
    hung = run.wait_exit([parker])
    park = run.collect(parker, "park", "run", hung=bool(hung))
    outcomes = (park.result or {}).get("outcomes") or []
    parked = bool(outcomes) and outcomes[-1].get("status") == "interrupted"
    run.observations["park"] = {"status": park.status, "outcome": outcomes[-1] if outcomes else None,
                                "inspect": (park.result or {}).get("inspect_after")}
    if not parked:
        why = "the parking racer did not reach an interrupt"
        if outcomes and outcomes[-1].get("error"):
            why += f": {outcomes[-1]['error'].get('type')}: {outcomes[-1]['error'].get('message')}"
        elif park.status != "ok":
            why += f" ({park.status}: {run.history[-1].detail})"
        return run.record(valid=False, invalid_reason=why, fault_fired=False)
    gated = (park.result or {}).get("gated_task")

    # 2. k racers, all stopped at the gate, then released at once
    value = s.resume_value
    specs = []
    for i in range(k):
        v = f"{value}#r{i}" if s.distinct_values else value
        specs.append(run.spec(f"r{i}", actions=[{"op": "resume", "form": "command", "value": v}], gate=True))
    handles = run.start(specs)
    all_ready = run.wait_until(
        lambda: all(h.state() != "running" for h in handles)
        and all(h.state() == "exited" or h.arrivals() for h in handles)
    )
    ready = [h for h in handles if h.state() == "stopped" and h.arrivals()]
    for h in ready:
        run.wait_arrival(h, "gate")
    if len(ready) == k:
        run.ctx.launcher.open_gate(handles)
    hung = run.wait_exit(handles) if len(ready) == k else []
    for h in handles:
        if len(ready) != k and h.state() != "exited":
            h.kill()
    results = []
    for i, h in enumerate(handles):
        out = run.collect(h, "resume", "resume", specs[i]["actions"][0]["value"], hung=h in hung)
        results.append(out)

    # 3. what fired
    ledger = run.ctx.read_ledger(run.trial_id)
    fires_rows = [r for r in ledger if gated and r["task"] == gated]
    released = [r.result.get("t_released_mono_ns") for r in results if r.result and r.result.get("t_released_mono_ns")]
    run.observations.update(
        gated_task=gated,
        fires=len(fires_rows),
        fired_by=[r["racer_id"] for r in fires_rows],
        fire_values=[r["value"] for r in fires_rows],
        per_racer=[
            {
                "racer_id": r.racer_id,
                "sent": specs[i]["actions"][0]["value"],
                "observed": ((r.result or {}).get("outcomes") or [{}])[-1].get("observed", {}).get(gated) if r.result else None,
                "fired": any(f["effect_key"].startswith(f"{gated}:") or f["effect_key"] == gated for f in (r.result or {}).get("fired", [])),
                "status": r.status,
                "outcome": (((r.result or {}).get("outcomes") or [{}])[-1]).get("status"),
            }
            for i, r in enumerate(results)
        ],
        release_spread_ms=((max(released) - min(released)) / 1e6) if len(released) == k and k > 1 else (0.0 if len(released) == k else None),
        start_spread_ms=_spread([r.result.get("t_start_mono_ns") for r in results if r.result]),
    )
    if not all_ready or len(ready) != k:
        why = f"only {len(ready)}/{k} racers reached the start gate"
        if run.errors:
            why += f": {run.errors[0]}"
        return run.record(valid=False, invalid_reason=why, fault_fired=False)
    if hung:
        return run.record(valid=False, invalid_reason=f"{len(hung)} racer(s) hung after the gate and were killed", fault_fired=True)
    return run.record(valid=True, fault_fired=True)


def _spread(ts: list) -> float | None:
    ts = [t for t in ts if t]
    return (max(ts) - min(ts)) / 1e6 if len(ts) > 1 else None
