"""``invalid_state``: a node returns a value that breaks the declared state schema -> CV.

Per trial: phase ``write`` runs the workload (its node ``meta["invalid"]["task"]`` writes
``meta["invalid"]["value"]`` into ``field``); phase ``read`` looks at the thread from a fresh
process (durable state, read below the framework if the framework cannot read it), tries to
continue it, and looks again.

CV (checkpoint validity): a schema-breaking value is refused loudly, never persisted silently. Per
trial, from the durable state a fresh process read after the write:

* the value is in the checkpointed state and the run raised nothing: persisted silently (violated,
  LangGraph issue 6491);
* it is in the checkpointed state and an error came only later, when a step read it: persisted,
  refused too late (violated);
* the run raised and the state does not hold it: refused loudly (holds; a pending write that still
  carries it is named);
* the run raised nothing and the state does not hold it: the write vanished silently (violated).

A framework with no application state a node writes (AutoGen AgentChat: a team's state is the
framework's own models) gets the value **below** it instead: the workload's store writes it into the
saved state (``meta["invalid"]["via"] == "tamper"``, ``field`` a dotted path), as a tampered or
corrupted store would hold it. Nothing can refuse that write, so CV asks the read: it holds when
the fresh process's load refused the state loudly (the framework's error), and is violated when it
continued from it silently. A tamper the store does not hold is ``unknown`` (nothing was measured).

The reason also says whether the thread stayed readable and what continuing it did. No effect is
duplicated by design, so the kind has no explanation beyond CV's reason.

What it needs from an adapter: ``run``; ``inspect`` with ``values`` and ``error`` (when the
framework cannot read its own thread, what the store holds, read below the framework: ``values``
with ``"values_source": "saver"`` and ``pending_writes``); a workload whose ``meta["invalid"]``
names the ``task``, ``field`` and ``value`` of the invalid write.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import TypedDict

from chaos.kinds.base import Checker, Kind
from chaos.kinds.checking import base_fields, verdict
from chaos.kinds.faults import CV
from chaos.kinds.phases import failed, independent_trials, inspected, run_phases
from chaos.racer.ledger_rows import of_task
from chaos.racer.protocol import ErrorInfo, OutcomeStatus
from chaos.records import CellResult, TrialRecord, Verdict, error_field
from chaos.running.trial import RunContext, TrialRun
from chaos.scenario.model import Cell


def check_cv(cell: Cell, records: list[TrialRecord]) -> Verdict:
    """CV over the cell's trials (``cv_verdict``)."""
    return cv_verdict([r for r in records if r.valid], len(records))


class InvalidState(Kind):
    name = "invalid_state"
    about = "a node writes a value that breaks the state schema: is it refused loudly, never persisted?"
    properties = ("CV",)
    checks = (Checker(CV, check_cv),)
    clean_run = False  # its workload writes a value the schema forbids: the error is what it measures
    section = "contract"
    title = "Invalid state"

    def run_cell(self, ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
        return independent_trials(ctx, cell, skip, invalid_trial)

    def summary(self, cell: Cell, records: Iterable[TrialRecord]) -> tuple[CellResult, list[TrialRecord]]:
        recs = list(records)
        return invalid_summary(cell, recs), recs


KIND = InvalidState()


class InvalidWrite(TypedDict, total=False):
    """``observations["invalid"]``: the invalid write the workload declares (``meta["invalid"]``):
    the node (``task``) that writes ``value`` to ``field``, or ``via: tamper`` (written below the framework)."""

    task: str
    field: str
    value: object
    via: str


class CallObs(TypedDict, total=False):
    """``observations["write"]`` / ``["resume"]``: how the writing run and the fresh process's continue ended."""

    status: OutcomeStatus | None
    error: ErrorInfo | None
    fired: list[str]


def invalid_trial(run: TrialRun) -> TrialRecord:
    labelled, racers = run_phases(
        run,
        [
            ("write", [{"op": "run", "label": "run", "keep_going": True}]),
            (
                "read",
                [
                    {"op": "inspect", "label": "durable"},
                    {"op": "resume", "form": "none", "label": "continue", "keep_going": True},
                    {"op": "inspect", "label": "after"},
                ],
            ),
        ],
    )
    meta = next((r.workload_meta for r in racers if r.result), {})
    run_o, cont_o = labelled.get("run") or {}, labelled.get("continue") or {}
    write: CallObs = {"status": run_o.get("status"), "error": run_o.get("error"), "fired": run_o.get("fired", [])}
    resume: CallObs = {"status": cont_o.get("status"), "error": cont_o.get("error"), "fired": cont_o.get("fired", [])}
    run.observations.update(
        invalid=meta.get("invalid"),
        write=write,
        durable=inspected(labelled, "durable"),
        resume=resume,
        after=inspected(labelled, "after"),
    )
    why = failed(racers)
    if why:
        return run.record(valid=False, invalid_reason=why, fault_fired=False)
    if not meta.get("invalid"):
        return run.record(
            valid=False,
            invalid_reason=f"workload {run.cell.scenario.workload} declares no invalid write (meta['invalid'])",
            fault_fired=False,
        )
    task = meta["invalid"].get("task")
    if task and not any(of_task(k, task) for k in run_o.get("fired", [])):  # task, task:value or task@key
        return run.record(
            valid=False,
            invalid_reason=f"the node {task} that writes the invalid value never ran (run status {run_o.get('status')})",
            fault_fired=False,
        )
    return run.record(valid=True, fault_fired=True)


# ------------------------------------------------------------------------------------ check


def _holds_value(state_value: object, value: object) -> bool:
    return state_value == value or (isinstance(state_value, list) and not isinstance(value, list) and value in state_value)


_MISSING = object()


def at_path(values: object, path: str) -> object:
    """The value at a dotted ``path`` (list items by index) of a JSON document, else ``_MISSING``."""
    for part in str(path).split("."):
        if isinstance(values, dict) and part in values:
            values = values[part]
        elif isinstance(values, list) and part.isdigit() and int(part) < len(values):
            values = values[int(part)]
        else:
            return _MISSING
    return values


def tamper_cv(rec: TrialRecord) -> tuple[str, str]:
    """CV of a value written below the framework: judged by what a fresh process's load did."""
    inv = rec.observed("invalid", InvalidWrite)
    field, value = inv.get("field"), inv.get("value")
    durable = rec.observed_inspect("durable")
    shown = f"{field}={value!r}"
    if at_path(durable.get("values"), str(field)) != value:
        return "unknown", f"the store does not hold the tampered value {shown}: nothing was measured"
    resumed = rec.observed("resume", CallObs)
    err = resumed.get("error") if resumed.get("status") == "error" else durable.get("error")
    if err:
        cause = (err.get("chain") or [])[1:2]
        by = f" (raised from {cause[0].rsplit('.', 1)[-1]})" if cause else ""
        return "holds", (
            f"refused loudly when a fresh process loaded the state: {err.get('type')}{by}: "
            f"{str(err.get('message'))[:100]}; the store held {shown}, written below the framework"
        )
    return "violated", (
        f"loaded silently: the store held {shown}, written below the framework, and a fresh process "
        f"continued from it (status {resumed.get('status')}) without an error"
    )


def trial_cv(rec: TrialRecord) -> tuple[str, str]:
    inv = rec.observed("invalid", InvalidWrite)
    if inv.get("via") == "tamper":
        return tamper_cv(rec)
    field, value = inv.get("field"), inv.get("value")
    durable = rec.observed_inspect("durable")
    write = rec.observed("write", CallObs)
    values = durable.get("values") or {}
    in_state = isinstance(values, dict) and field in values and _holds_value(values[field], value)
    pending = any(w[0] == field and _holds_value(w[1], value) for w in durable.get("pending_writes") or [])
    err = write.get("error")
    loud = write.get("status") == "error"
    read_err = durable.get("error")
    readable = "readable" if not read_err else f"unreadable ({read_err.get('type')})"
    resumed = rec.observed("resume", CallObs)
    tail = f"; thread {readable}; continuing it: {resumed.get('status')}" + (
        f" ({error_field(resumed.get('error'), 'type')})" if resumed.get("status") == "error" else ""
    )
    shown = f"{field}={value!r}"
    if in_state and not loud:
        return "violated", f"persisted silently: the checkpoint holds {shown} and the run raised nothing{tail}"
    if in_state and any(f.get("func") in ("put", "aput") for f in (err.get("frames") if err else None) or []):
        # refused at the checkpoint commit (a validating saver), after the node's writes were saved (put_writes)
        return "violated", (
            f"persisted, refused too late: {error_field(err, 'type')} came at the checkpoint commit, after the node's writes were "
            f"durable, and the state a fresh process reads holds {shown}{tail}"
        )
    if in_state:
        return "violated", (
            f"persisted, refused too late: the checkpoint holds {shown}; {error_field(err, 'type')} came only when a later step read it{tail}"
        )
    if loud:
        extra = "; the write is still durable as a pending write" if pending else ""
        return "holds", (
            f"refused loudly ({error_field(err, 'type')}: {str(error_field(err, 'message'))[:100]}); the checkpoint does not hold {shown}{extra}{tail}"
        )
    return "violated", f"the invalid write {shown} vanished: no error and not in the state{tail}"


def cv_verdict(valid: list[TrialRecord], n: int) -> Verdict:
    if not valid:
        return verdict("CV", "unknown", f"no valid trial of {n}")
    per = [(r, *trial_cv(r)) for r in valid]
    bad = [(r, why) for r, st, why in per if st == "violated"]
    if bad:
        return verdict("CV", "violated", f"{len(bad)}/{len(valid)} trials: {bad[0][1]}", trial_ids=[r.trial_id for r, _ in bad])
    unknown = [(r, why) for r, st, why in per if st == "unknown"]
    if unknown:
        return verdict("CV", "unknown", f"{len(unknown)}/{len(valid)} trials: {unknown[0][1]}", trial_ids=[r.trial_id for r, _ in unknown])
    return verdict("CV", "holds", f"all {len(valid)} trials: {per[0][2]}", trial_ids=[r.trial_id for r in valid])


def invalid_summary(cell: Cell, records: list[TrialRecord]) -> CellResult:
    """The cell's numbers: how the invalid write went, whether the state stayed readable, the continue."""
    valid = [r for r in records if r.valid]
    result = CellResult(**base_fields(cell, records))
    result.summary = {
        "write_status": dict(Counter(str(r.observed("write", CallObs).get("status")) for r in valid)),
        "readable_after": dict(Counter(not r.observed_inspect("durable").get("error") for r in valid)),
        "continue_status": dict(Counter(str(r.observed("resume", CallObs).get("status")) for r in valid)),
        "invalid": dict(Counter(r.invalid_reason for r in records if not r.valid)),
    }
    return result
