"""``fork``: answer an interrupt with v1, then resume again from the interrupt's checkpoint with v2.

Per trial: phase ``first`` runs the workload to its interrupt and answers it with v1 (the
scenario's ``resume: command:<v1>``); phase ``fork`` asks the framework what its API can say about
retry vs fork (``intent``), lists the checkpoints, and resumes from the checkpoint where the
interrupt was pending with v2 (``<v1>#fork``), addressed as the scenario's ``fork_via`` says: the
plain checkpoint address or the framework's explicit fork. The trial records what the gated node
saw and fired in each phase; FD (the fork yields v2's outcome) and FI (the API has a retry/fork
discriminator) are judged in ``chaos.verdicts.fork``.
"""

from __future__ import annotations

from typing import Any, Iterator

from chaos.kinds.phases import each_trial, failed, run_phases
from chaos.records import TrialRecord
from chaos.scenario.model import Cell
from chaos.running.trial import RunContext, TrialRun


def fork_value(v1: Any) -> str:
    return f"{v1}#fork"


def run_cell(ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
    return each_trial(ctx, cell, skip, fork_trial)


def fork_trial(run: TrialRun) -> TrialRecord:
    s = run.cell.scenario
    v1 = s.resume_value
    v2 = fork_value(v1)
    labelled, racers = run_phases(run, [
        ("first", [{"op": "run", "label": "run"},
                   {"op": "resume", "form": "command", "value": v1, "if": "interrupted", "label": "resume"}]),
        ("fork", [{"op": "intent", "label": "intent", "keep_going": True},
                  {"op": "checkpoints", "label": "checkpoints", "keep_going": True},
                  {"op": "fork", "checkpoint": "interrupt", "value": v2, "via": s.fork_via, "label": "fork"}]),
    ])
    gated = next((r.result.get("gated_task") for r in racers if r.result), None)
    run_o, resume_o, fork_o = labelled.get("run"), labelled.get("resume"), labelled.get("fork")
    intent_o = labelled.get("intent") or {}

    def seen(o: dict | None) -> Any:
        return None if not o else (o.get("observed") or {}).get(gated)

    def gated_fires(o: dict | None) -> list[str]:
        return [k for k in (o or {}).get("fired", []) if gated and (k == gated or k.startswith(f"{gated}:"))]

    run.observations.update(
        gated_task=gated, via=s.fork_via, sent={"resume": v1, "fork": v2},
        first={"status": (resume_o or run_o or {}).get("status"), "observed": seen(resume_o), "fired": gated_fires(resume_o)},
        fork={"status": (fork_o or {}).get("status"), "observed": seen(fork_o), "fired": gated_fires(fork_o),
              "all_fired": (fork_o or {}).get("fired", []), "error": (fork_o or {}).get("error"),
              "forked_from": (fork_o or {}).get("forked_from"), "values": (fork_o or {}).get("values")},
        intent=intent_o.get("intent") if intent_o.get("status") == "done" else None,
        intent_status=intent_o.get("status"), intent_error=intent_o.get("error"),
        checkpoints=len(((labelled.get("checkpoints") or {}).get("checkpoints")) or []),
    )
    why = failed(racers)
    if why:
        return run.record(valid=False, invalid_reason=why, fault_fired=False)
    if not gated:
        return run.record(valid=False, invalid_reason=f"workload {s.workload} gates no task behind an interrupt", fault_fired=False)
    if not run_o or run_o.get("status") != "interrupted":
        st = (run_o or {}).get("status")
        return run.record(valid=False, invalid_reason=f"the run did not stop at an interrupt (status {st})", fault_fired=False)
    if not resume_o or seen(resume_o) != v1 or not gated_fires(resume_o):
        return run.record(valid=False, invalid_reason=f"the first resume did not fire {gated} with v1 "
                          f"(status {(resume_o or {}).get('status')}, saw {seen(resume_o)!r})", fault_fired=False)
    if fork_o is None:
        return run.record(valid=False, invalid_reason="the fork was not performed", fault_fired=False)
    return run.record(valid=True, fault_fired=True)
