"""``stray_resume``: answer an interrupt, then send the same answer again (a retry, a replayed request).

Per trial: phase ``first`` runs the workload to its interrupt and answers it with v; phase
``stray`` looks at the thread, sends ``Command(resume=v)`` again, and looks again. After the first
answer the thread is either complete (``gate_after_interrupt``) or waiting at a later interrupt
(``two_gates``): both are "consumed" for the first interrupt, so the stray answer must be inert: no
effect fires, the state does not move. With ``resume_by: interrupt`` both answers are addressed to
the first interrupt by its id (LangGraph: ``Command(resume={id: v})``), as a client replaying its
exact request would send them. CO is judged in ``chaos.verdicts.stray``.
"""

from __future__ import annotations

from typing import Iterator

from chaos.kinds.phases import each_trial, failed, run_phases
from chaos.records import TrialRecord
from chaos.scenario.model import Cell
from chaos.running.trial import RunContext, TrialRun


def run_cell(ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
    return each_trial(ctx, cell, skip, stray_trial)


def stray_trial(run: TrialRun) -> TrialRecord:
    s = run.cell.scenario
    v = s.resume_value
    answer = {"op": "resume", "form": "command", "value": v}
    if s.resume_by == "interrupt":
        answer["interrupt"] = "first"  # the same request, addressed to the interrupt it answered
    labelled, racers = run_phases(run, [
        ("first", [{"op": "run", "label": "run"}, {**answer, "if": "interrupted", "label": "resume"}]),
        ("stray", [{"op": "inspect", "label": "before"}, {**answer, "label": "stray", "keep_going": True},
                   {"op": "inspect", "label": "after"}]),
    ])
    gated = next((r.result.get("gated_task") for r in racers if r.result), None)
    run_o, resume_o, stray_o = labelled.get("run"), labelled.get("resume"), labelled.get("stray")
    before = (labelled.get("before") or {}).get("inspect") or {}
    after = (labelled.get("after") or {}).get("inspect") or {}
    run.observations.update(
        gated_task=gated, sent=v, resume_by=s.resume_by,
        consumed={"status": (resume_o or {}).get("status"), "fired": (resume_o or {}).get("fired", []),
                  "waiting_at": (resume_o or {}).get("interrupts", [])},
        thread_before=_state(before), thread_after=_state(after),
        stray={"status": (stray_o or {}).get("status"), "fired": (stray_o or {}).get("fired", []),
               "observed": (stray_o or {}).get("observed"), "error": (stray_o or {}).get("error")},
    )
    why = failed(racers)
    if why:
        return run.record(valid=False, invalid_reason=why, fault_fired=False)
    if not run_o or run_o.get("status") != "interrupted":
        return run.record(valid=False, invalid_reason=f"the run did not stop at an interrupt (status {(run_o or {}).get('status')})",
                          fault_fired=False)
    consumed = [k for k in (resume_o or {}).get("fired", []) if gated and k.split(":", 1)[0] == gated]
    if not consumed:
        return run.record(valid=False, invalid_reason=f"the first answer did not fire {gated}: nothing was consumed",
                          fault_fired=False)
    if stray_o is None:
        return run.record(valid=False, invalid_reason="the stray resume was not performed", fault_fired=False)
    return run.record(valid=True, fault_fired=True)


def _state(inspected: dict) -> dict:
    """The parts of the thread a stray resume must not move."""
    return {k: inspected.get(k) for k in ("values", "next", "pending_interrupts", "checkpoints", "checkpoint", "error")}
