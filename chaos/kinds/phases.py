"""Phases: a trial's steps as labelled action lists, run in fresh processes or in one.

A kind describes a trial as phases (``[("first", actions), ("again", actions)]``); each
action carries a ``label``. With a durable backend every phase is a fresh racer process, as a real
restart would be. With an in-process backend (``TargetInfo.in_process_backends``, e.g. ``memory``) nothing survives a process, so all phases
run in one racer, in order, each phase's last action marked ``keep_going`` so a refusal in one
phase still lets the next look at the thread. Either way the caller gets each label's outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

from chaos.racer.protocol import ActionOutcome, ActionSpec, InspectResult
from chaos.records import RacerOutcome, TrialRecord
from chaos.running.trial import RunContext, Task, TrialRun, attempts
from chaos.scenario.model import Cell
from chaos.targets import get_target


def in_process(cell: Cell) -> bool:
    """Does the cell's backend keep its state in the racer's process (``TargetInfo.in_process_backends``)?"""
    t = cell.scenario.target
    return t.backend in get_target(t.framework).in_process_backends


def repeat_tasks(cell: Cell, skip: set[str], trial: Callable[[TrialRun], TrialRecord], count: int | None = None) -> list[Task]:
    """``trial`` once per repeat of the cell (``c000-t0003``; ``count`` of them, default its
    ``trials``), each with its attempts; the repeat's number is its run's ``rep``."""
    return [
        partial(attempts, cell=cell, trial_id=f"c{cell.index:03d}-t{t:04d}", skip=skip, body=trial, rep=t)
        for t in range(cell.scenario.trials if count is None else count)
    ]


def each_trial(ctx: RunContext, cell: Cell, skip: set[str], trial: Callable[[TrialRun], TrialRecord]) -> Iterator[TrialRecord]:
    """The ``run_cell`` of a kind whose trials are independent repeats: ``trial`` once per repeat."""
    for task in repeat_tasks(cell, skip, trial):
        yield from task(ctx)


def independent_trials(ctx: RunContext, cell: Cell, skip: set[str], trial: Callable[[TrialRun], TrialRecord]) -> Iterator[TrialRecord]:
    """``each_trial`` for a kind whose repeats do not depend on each other's timing either (each its
    own thread, store and ledger rows, its outcome not a race's): run ``--jobs`` at a time
    (``RunContext.independent``). Not for a cell that runs anything beside its trials (a baseline)."""
    return ctx.independent(repeat_tasks(cell, skip, trial))


def run_phases(run: TrialRun, phases: list[tuple[str, list[ActionSpec]]]) -> tuple[dict[str, ActionOutcome], list[RacerOutcome]]:
    """Run the phases; returns ({label: outcome}, the racers' outcomes). Unperformed labels are absent."""
    if in_process(run.cell):
        actions: list[ActionSpec] = []
        for _, acts in phases:
            copies = [ActionSpec(**a) for a in acts]
            if copies:
                copies[-1]["keep_going"] = True
            actions.extend(copies)
        groups = [("solo", actions)]
    else:
        groups = phases
    labelled: dict[str, ActionOutcome] = {}
    racers: list[RacerOutcome] = []
    for racer_id, acts in groups:
        (h,) = run.start([run.spec(racer_id, actions=acts)])
        hung = run.wait_exit([h])
        out = run.collect(h, racer_id, "+".join(a.get("label") or a.get("op") or "?" for a in acts), hung=bool(hung))
        racers.append(out)
        labelled.update(out.labelled)
    return labelled, racers


def inspected(labelled: dict[str, ActionOutcome], label: str) -> InspectResult | None:
    """What the ``inspect`` action labelled ``label`` found (None if it was not performed or found nothing)."""
    o = labelled.get(label)
    return o.get("inspect") if o else None


def failed(racers: list[RacerOutcome]) -> str | None:
    """Why a phase's racer did not finish normally (crash, timeout, harness error), or None."""
    for r in racers:
        if r.status != "ok":
            err = r.harness_error
            detail = f": {err.get('type')}: {err.get('message')}" if err else ""
            return f"racer {r.racer_id} {r.status}{detail}"
    return None
