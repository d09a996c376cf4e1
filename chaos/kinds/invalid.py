"""``invalid_state``: a node returns a value that breaks the declared state schema.

Per trial: phase ``write`` runs the workload (its node ``meta["invalid"]["task"]`` writes
``meta["invalid"]["value"]`` into ``field``); phase ``read`` looks at the thread from a fresh
process (durable state, read below the framework if the framework cannot read it), tries to
continue it, and looks again. CV (refused loudly, never persisted silently) and whether the thread
stays readable are judged in ``chaos.verdicts.invalid``.
"""

from __future__ import annotations

from typing import Iterator

from chaos.kinds.phases import each_trial, failed, run_phases
from chaos.records import TrialRecord
from chaos.scenario.model import Cell
from chaos.running.trial import RunContext, TrialRun


def run_cell(ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
    return each_trial(ctx, cell, skip, invalid_trial)


def invalid_trial(run: TrialRun) -> TrialRecord:
    labelled, racers = run_phases(run, [
        ("write", [{"op": "run", "label": "run", "keep_going": True}]),
        ("read", [{"op": "inspect", "label": "durable"},
                  {"op": "resume", "form": "none", "label": "continue", "keep_going": True},
                  {"op": "inspect", "label": "after"}]),
    ])
    meta = next(((r.result or {}).get("workload_meta") or {} for r in racers if r.result), {})
    run_o, cont_o = labelled.get("run") or {}, labelled.get("continue") or {}
    run.observations.update(
        invalid=meta.get("invalid"),
        write={"status": run_o.get("status"), "error": run_o.get("error"), "fired": run_o.get("fired", [])},
        durable=(labelled.get("durable") or {}).get("inspect"),
        resume={"status": cont_o.get("status"), "error": cont_o.get("error"), "fired": cont_o.get("fired", [])},
        after=(labelled.get("after") or {}).get("inspect"),
    )
    why = failed(racers)
    if why:
        return run.record(valid=False, invalid_reason=why, fault_fired=False)
    if not meta.get("invalid"):
        return run.record(valid=False, invalid_reason=f"workload {run.cell.scenario.workload} declares no invalid write "
                          "(meta['invalid'])", fault_fired=False)
    task = meta["invalid"].get("task")
    if task and task not in {k.split(":", 1)[0] for k in run_o.get("fired", [])}:
        return run.record(valid=False, invalid_reason=f"the node {task} that writes the invalid value never ran "
                          f"(run status {run_o.get('status')})", fault_fired=False)
    return run.record(valid=True, fault_fired=True)
