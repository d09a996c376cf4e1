"""``fork``: answer an interrupt with v1, then resume again from the interrupt's checkpoint with v2 -> FD, FI.

Per trial: phase ``first`` runs the workload to its interrupt and answers it with v1 (the
scenario's ``resume: command:<v1>``); phase ``fork`` asks the framework what its API can say about
retry vs fork (``intent``), lists the checkpoints, and resumes from the checkpoint where the
interrupt was pending with v2 (``<v1>#fork``), addressed as the scenario's ``fork_via`` says: the
plain checkpoint address or the framework's explicit fork. The trial records what the gated node
saw and fired in each phase.

FD (fork determinism) per trial: the resume with v2 sent to the interrupt's checkpoint must yield
v2's outcome: the gated node sees v2 and fires with v2. It is violated when the node sees or fires
v1 again (LangGraph issue 6663) or when the fork returns without running the gated node at all
(v2's outcome never happens). A fork the framework refuses or cannot express is ``unknown``.

Approve vs reject (``fork_fires``): a fork whose second decision is a rejection must not fire the
gated task at all, so "v2's outcome" is not a fire to look for. The scenario says what each branch
must do: the first answer (v1) must fire the gated task (else the trial is invalid, as always), and
with ``fork_fires: false`` the fork's branch (v2) must run to its end without firing it: FD holds
when the fork fired no gated effect and ended without an error, and is violated when it fired one
(the rejection was not honoured, or v1's approval leaked into the branch) or when it raised (the
branch never reached its end). ``fork_fires: true`` is the default rule made explicit.

FI (fork intent) is read from the API surface the racer inspected (``intent`` op): without a
parameter that tells a retry from a fork, FI is violated; the evidence note is that surface.

What it needs from an adapter: ``run``, ``resume`` (command), ``fork`` (checkpoint="interrupt",
via=checkpoint, and via=explicit where the framework has one, else ``Unsupported``), ``intent``;
``gated_task`` and ``observed[gated_task]`` in outcomes. Scenario fields: ``fork_via``; ``resume``
must be ``command:<value>``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any, Literal, TypedDict

from pydantic import Field

from chaos.kinds.base import Checker, Kind, KindOptions, Property, needs_command_resume
from chaos.kinds.checking import base_fields, verdict
from chaos.kinds.phases import failed, independent_trials, run_phases
from chaos.racer.ledger_rows import of_task
from chaos.racer.protocol import ActionOutcome, ErrorInfo, ForkIntent, OutcomeStatus
from chaos.records import CellResult, TrialRecord, Verdict, error_field, error_of, status_of
from chaos.running.trial import RunContext, TrialRun
from chaos.scenario.model import Cell, Scenario


class ForkOptions(KindOptions):
    """What a fork reads: how it addresses the past checkpoint, and the second value."""

    fork_via: Literal["checkpoint", "explicit"] = Field(
        "checkpoint", description="resuming a past checkpoint: address it directly, or through the framework's explicit fork"
    )
    fork_value: Any = Field(
        None, description="fork: the second value to resume the first interrupt's checkpoint with (default '<v1>#fork')"
    )
    fork_fires: bool | None = Field(
        None,
        description="what the fork's branch must do with the gated task: true, fire it (an approval); false, not fire it and "
        "end without an error (a rejection: fork_value is the app's reject); default: show v2's outcome",
    )


FD = Property("FD", "fork determinism", "fork-fd-and-fi-kind-fork")
FI = Property("FI", "fork intent", "fork-fd-and-fi-kind-fork")


def check_fd(cell: Cell, records: list[TrialRecord]) -> Verdict:
    """FD over the cell's trials (``fd_verdict``)."""
    return fd_verdict([r for r in records if r.valid], [r for r in records if not r.valid])


def check_fi(cell: Cell, records: list[TrialRecord]) -> Verdict:
    """FI over the cell's trials (``fi_verdict``)."""
    return fi_verdict(records)


class Fork(Kind):
    name = "fork"
    about = "answer an interrupt, then resume its checkpoint with another value: does the fork yield the new outcome?"
    properties = ("FD", "FI")
    fields = ("fork_via", "fork_value", "fork_fires")
    section = "contract"
    title = "Fork"
    Options = ForkOptions
    checks = (Checker(FD, check_fd), Checker(FI, check_fi))

    def validate(self, scenario: Scenario) -> None:
        needs_command_resume(self.name, scenario)
        opts = ForkOptions.of(scenario)
        if opts.fork_fires is False and opts.fork_value is None:
            raise ValueError("fork_fires: false says the fork's branch is a rejection: set fork_value to the app's reject answer")

    def run_cell(self, ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
        return independent_trials(ctx, cell, skip, fork_trial)

    def summary(self, cell: Cell, records: Iterable[TrialRecord]) -> tuple[CellResult, list[TrialRecord]]:
        recs = list(records)
        return fork_summary(cell, recs), recs

    def explain(self, rec: TrialRecord) -> list[str]:
        """A second fire is the point of a fork: only a violating fork is explained."""
        status, why = trial_fd(rec)
        if status != "violated":
            return []
        seqs = ", ".join(
            f"{r['effect_key']} (seq {r['seq']}, racer {r['racer_id']})"
            for r in sorted(rec.ledger, key=lambda r: r["seq"])
            if r.get("racer_id") != BASELINE  # the v2-alone racer's thread is not the forked one
        )
        return [f"{why}; the ledger of this trial: {seqs}"]


KIND = Fork()


def fork_value(v1: object) -> str:
    return f"{v1}#fork"


class FirstObs(TypedDict, total=False):
    """``observations["first"]``: how the first answer went (the resume's, else the run's status)."""

    status: OutcomeStatus | None
    observed: object  # what the gated node saw
    fired: list[str]  # the gated task's effect keys


class ForkObs(FirstObs, total=False):
    """``observations["fork"]``: how the fork went."""

    all_fired: list[str]  # every effect key the fork fired
    error: ErrorInfo | None
    forked_from: str | None
    values: object


class AloneObs(TypedDict, total=False):
    """``observations["v2_alone"]``: what v2 answered first on a fresh thread fired, or why that did not happen."""

    status: OutcomeStatus | None
    fired: list[str]
    error: str


def _said(err: ErrorInfo | None) -> str:
    """``Type: message`` of an action's error, the message cut to 160 characters."""
    return f"{error_field(err, 'type')}: {str(error_field(err, 'message'))[:160]}"


def _raised(o: ActionOutcome | None) -> str:
    """``: Type: message`` of the error an action ended in ("" if it raised nothing)."""
    err = error_of(o)
    return f": {_said(err)}" if err else ""


def fork_trial(run: TrialRun) -> TrialRecord:
    s = run.cell.scenario
    v1 = s.first_answer  # the answer plan's first value, else resume's command value
    opts = ForkOptions.of(s)
    v2 = opts.fork_value if opts.fork_value is not None else fork_value(v1)
    labelled, racers = run_phases(
        run,
        [
            (
                "first",
                [{"op": "run", "label": "run"}, {"op": "resume", "form": "command", "value": v1, "if": "interrupted", "label": "resume"}],
            ),
            (
                "fork",
                [
                    {"op": "intent", "label": "intent", "keep_going": True},
                    {"op": "checkpoints", "label": "checkpoints", "keep_going": True},
                    {"op": "fork", "checkpoint": "interrupt", "value": v2, "via": opts.fork_via, "label": "fork"},
                ],
            ),
        ],
    )
    gated = next((r.gated_task for r in racers if r.result), None)
    run_o, resume_o, fork_o = labelled.get("run"), labelled.get("resume"), labelled.get("fork")
    intent_o, checkpoints_o = labelled.get("intent"), labelled.get("checkpoints")

    def seen(o: ActionOutcome | None) -> object:
        observed = o.get("observed") if o else None
        return observed.get(gated) if observed and gated else None

    def fired(o: ActionOutcome | None) -> list[str]:
        return o.get("fired", []) if o else []

    def gated_fires(o: ActionOutcome | None) -> list[str]:
        return gated_keys(fired(o), gated)

    first: FirstObs = {"status": status_of(resume_o or run_o), "observed": seen(resume_o), "fired": gated_fires(resume_o)}
    fork: ForkObs = {
        "status": status_of(fork_o),
        "observed": seen(fork_o),
        "fired": gated_fires(fork_o),
        "all_fired": fired(fork_o),
        "error": error_of(fork_o),
        "forked_from": fork_o.get("forked_from") if fork_o else None,
        "values": fork_o.get("values") if fork_o else None,
    }
    run.observations.update(
        gated_task=gated,
        via=opts.fork_via,
        fork_fires=opts.fork_fires,
        sent={"resume": v1, "fork": v2},
        first=first,
        fork=fork,
        intent=intent_o.get("intent") if intent_o and intent_o.get("status") == "done" else None,
        intent_status=status_of(intent_o),
        intent_error=error_of(intent_o),
        checkpoints=len((checkpoints_o.get("checkpoints") if checkpoints_o else None) or []),
    )
    why = failed(racers)
    if why:
        return run.record(valid=False, invalid_reason=why, fault_fired=False)
    if not gated:
        return run.record(valid=False, invalid_reason=f"workload {s.workload} gates no task behind an interrupt", fault_fired=False)
    if not run_o or run_o.get("status") != "interrupted":
        st = status_of(run_o)
        return run.record(
            valid=False, invalid_reason=f"the run did not stop at an interrupt (status {st}{_raised(run_o)})", fault_fired=False
        )
    if not resume_o or not gated_fires(resume_o):
        return run.record(
            valid=False,
            invalid_reason=f"the first resume did not fire {gated} (status {status_of(resume_o)}{_raised(resume_o)}, saw {seen(resume_o)!r})",
            fault_fired=False,
        )
    if seen(resume_o) != v1 and opts.fork_fires is not False:
        # The node's effect does not carry the answer and it does not observe it (a real app: the
        # payment's value is the invoice, not "accept"). v2's outcome is then learnt from the app
        # itself: a fresh thread answered v2 first.
        alone = v2_alone(run, v2)
        run.observations["v2_alone"] = alone
        if alone.get("error"):
            return run.record(valid=False, invalid_reason=alone["error"], fault_fired=False)
        if sorted(alone["fired"]) == sorted(gated_fires(resume_o)):
            return run.record(
                valid=False,
                invalid_reason=f"answered first, {v2!r} fires what {v1!r} fires ({', '.join(alone['fired']) or 'nothing'}): the fork's "
                f"outcome cannot tell them apart; set fork_value to an answer with another outcome",
                fault_fired=False,
            )
    if fork_o is None:
        return run.record(valid=False, invalid_reason="the fork was not performed", fault_fired=False)
    return run.record(valid=True, fault_fired=True)


BASELINE = "v2-alone"  # the racer that answers v2 first on a thread of its own


def gated_keys(fired: list[str], gated: str | None) -> list[str]:
    """The effect keys of ``fired`` that are the gated task's (``task``, ``task:value`` or ``task@key``)."""
    return [k for k in fired if of_task(k, gated)]


def v2_alone(run: TrialRun, v2: object) -> AloneObs:
    """What the app does when v2 is its first answer: a fresh racer on a fresh thread of the trial's
    store runs to the interrupt and answers v2. Returns ``{"fired": [gated effects], "status"}``, or
    ``{"error": why}`` when that did not happen (the app refused v2, no interrupt, a crash)."""
    spec = run.spec(
        BASELINE,
        actions=[
            {"op": "run", "label": "alone-run"},
            {"op": "resume", "form": "command", "value": v2, "if": "interrupted", "label": "alone"},
        ],
    )
    spec["thread_id"] = f"{run.thread_id}-{BASELINE}"
    (h,) = run.start([spec])
    hung = run.wait_exit([h])
    out = run.collect(h, BASELINE, "alone-run+alone", hung=bool(hung))
    why = failed([out])
    alone = out.outcome("alone")
    gated = out.gated_task
    if why:
        return {"error": f"answering {v2!r} first on a fresh thread: {why}"}
    if alone is None:
        return {"error": f"answering {v2!r} first on a fresh thread: the run did not stop at an interrupt"}
    if alone.get("status") == "error":
        return {"error": f"the app refuses {v2!r} as a first answer ({_said(alone.get('error'))}): set fork_value to one it accepts"}
    return {
        "status": alone.get("status"),
        "fired": gated_keys(alone.get("fired", []), gated),
    }


# ------------------------------------------------------------------------------------ check


def _fork_error(err: ErrorInfo | None) -> str:
    """Why a fork that errored measured nothing: the framework refused it, or (``NoSuchCheckpoint``,
    chaos's own finding) the run saved no checkpoint before its pause, so there was nothing to fork."""
    if err and err.get("type") == "NoSuchCheckpoint" and err.get("module") == "chaos":
        return (
            f"nothing to fork from: the run saved no checkpoint before its pause ({err.get('message')}), so there is no "
            "past state to answer again with a second value (the framework refused nothing; a pause in the first step "
            "has no state before it)"
        )
    return f"the fork was refused: {_said(err)}"


def trial_fd(rec: TrialRecord) -> tuple[str, str]:
    """(status, reason) of FD in one valid trial."""
    o = rec.observations
    gated, v1, v2 = o.get("gated_task"), o["sent"]["resume"], o["sent"]["fork"]
    f = rec.observed("fork", ForkObs)
    fired = f.get("fired") or []
    saw = f.get("observed")
    keys_v1, keys_v2 = f"{gated}:{v1}", f"{gated}:{v2}"
    if f.get("status") == "unsupported":
        return "unknown", f"fork via {o.get('via')} is not expressible: {error_field(f.get('error'), 'message')}"
    if o.get("fork_fires") is False:
        return rejected_fd(rec)
    if o.get("v2_alone") is not None:  # the answer is not visible: compare effects with v1's and with v2's alone
        alone = rec.observed("v2_alone", AloneObs)
        first, want = sorted(rec.observed("first", FirstObs).get("fired") or []), sorted(alone.get("fired") or [])
        got = sorted(fired)
        if f.get("status") in ("error", "refused") and not got:  # refused: by a guard (target.guard)
            return "unknown", _fork_error(f.get("error"))
        if got == want:
            return "holds", f"the fork with {v2!r} fired {', '.join(got) or 'nothing'}, as {v2!r} does answered first (via {o.get('via')})"
        if got == first:
            return "violated", (
                f"the fork with {v2!r} fired {', '.join(got)} again, as the first answer {v1!r} did; answered first, {v2!r} "
                f"fires {', '.join(want) or 'nothing'} (via {o.get('via')})"
            )
        return "violated", (
            f"the fork with {v2!r} fired {', '.join(got) or 'nothing'}; answered first, {v2!r} fires {', '.join(want) or 'nothing'} "
            f"(via {o.get('via')})"
        )
    if saw == v1 or keys_v1 in fired:
        again = f" and fired {keys_v1} again" if keys_v1 in fired else ""
        return "violated", f"the fork with {v2!r} saw {v1!r} again{again} (via {o.get('via')})"
    if saw == v2 or keys_v2 in fired:
        return "holds", f"the fork saw {v2!r} and fired {', '.join(fired) or 'nothing'}"
    if f.get("status") in ("error", "refused"):  # refused: by a guard (target.guard)
        return "unknown", _fork_error(f.get("error"))
    return "violated", (
        f"the fork with {v2!r} returned {f.get('status')} without running {gated}: v2's outcome "
        f"never happened (fired {', '.join(f.get('all_fired') or []) or 'nothing'}, via {o.get('via')})"
    )


def rejected_fd(rec: TrialRecord) -> tuple[str, str]:
    """FD of a fork whose branch is a rejection (``fork_fires: false``): it must end without firing the gated task."""
    o = rec.observations
    gated, v1, v2 = o.get("gated_task"), o["sent"]["resume"], o["sent"]["fork"]
    f = rec.observed("fork", ForkObs)
    first = ", ".join(rec.observed("first", FirstObs).get("fired") or [])
    others = ", ".join(f.get("all_fired") or []) or "nothing"
    if f.get("fired"):
        return "violated", (
            f"the fork answered {v2!r} (a rejection) and still fired {', '.join(f['fired'])}; the first branch, answered {v1!r}, "
            f"fired {first} (via {o.get('via')})"
        )
    if f.get("status") in ("error", "refused"):
        return "violated", f"the fork answered {v2!r} (a rejection) and never reached its end: {_said(f.get('error'))} (via {o.get('via')})"
    return "holds", (
        f"one saved state, two decisions: answered {v1!r} the first branch fired {first}; answered {v2!r} the fork fired no {gated} "
        f"and ended {f.get('status')} (it fired {others}; via {o.get('via')})"
    )


def fd_verdict(valid: list[TrialRecord], invalid: Iterable[TrialRecord] = ()) -> Verdict:
    if not valid:
        why = Counter(r.invalid_reason for r in invalid if r.invalid_reason).most_common(1)
        return verdict("FD", "unknown", f"no valid trial: {why[0][0]}" if why else "no valid trial")
    per = [(r, *trial_fd(r)) for r in valid]
    bad = [(r, why) for r, st, why in per if st == "violated"]
    if bad:
        seqs = []
        for r, _ in bad:
            gated = r.observations.get("gated_task")
            rows = [row for row in r.ledger if row["task"] == gated and row.get("racer_id") != BASELINE]
            seqs += [row["seq"] for row in rows[1:]]  # every fire after the first resume's
        return verdict(
            "FD", "violated", f"{len(bad)}/{len(valid)} trials: {bad[0][1]}", trial_ids=[r.trial_id for r, _ in bad], ledger_seqs=seqs
        )
    unknown = [(r, why) for r, st, why in per if st == "unknown"]
    if unknown:
        return verdict("FD", "unknown", f"{len(unknown)}/{len(valid)} trials: {unknown[0][1]}", trial_ids=[r.trial_id for r, _ in unknown])
    return verdict(
        "FD", "holds", f"in all {len(valid)} trials the fork yielded v2's outcome: {per[0][2]}", trial_ids=[r.trial_id for r in valid]
    )


def fi_verdict(records: list[TrialRecord]) -> Verdict:
    seen = [r for r in records if r.observations.get("intent")]
    if not seen:
        errs = [r.observed("intent_error", ErrorInfo) for r in records if r.observations.get("intent_error")]
        why = errs[0].get("message") if errs else "no trial read the API surface"
        return verdict("FI", "unknown", f"the adapter could not say what its API expresses: {why}")
    intent = seen[0].observed("intent", ForkIntent)
    surface = "; ".join(f"{k} {v}" for k, v in (intent.get("surface") or {}).items())[:1500]
    if intent.get("discriminator"):
        return verdict(
            "FI",
            "holds",
            f"the API tells a retry from a fork by {intent['discriminator']}",
            trial_ids=[r.trial_id for r in seen],
            note=surface,
        )
    return verdict(
        "FI",
        "violated",
        f"no retry/fork discriminator in the API: {intent.get('note', '')}",
        trial_ids=[r.trial_id for r in seen],
        note=surface,
    )


def fork_summary(cell: Cell, records: list[TrialRecord]) -> CellResult:
    """The cell's numbers: what the forks observed and fired, and why trials were invalid."""
    valid = [r for r in records if r.valid]
    result = CellResult(**base_fields(cell, records))
    result.summary = {
        "via": ForkOptions.of(cell.scenario).fork_via,
        "fork_observed": dict(Counter(repr(r.observed("fork", ForkObs).get("observed")) for r in valid)),
        "fork_fired": dict(Counter(",".join(r.observed("fork", ForkObs).get("all_fired") or []) or "-" for r in valid)),
        "invalid": dict(Counter(r.invalid_reason for r in records if not r.valid)),
    }
    return result
