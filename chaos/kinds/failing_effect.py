"""``failing_effect``: an effect that fails after doing its work -> EO, liveness.

Why: a provider that charges the card and then times out is the common outage, not the exotic
one. The charge happened; the caller saw an error. Whatever the framework does next (a node's
``RetryPolicy`` retries it, an ``error_handler`` compensates, a resume re-runs the step) decides
whether the card is charged once.

Per trial: racer ``run`` runs the workload with the scenario's ``effect_fault`` armed: the first
``times`` firings of effect ``task`` in the trial commit their ledger row, pass their barrier and
then raise ``chaos.workloads.EffectFault``. When that run did not complete (the fault propagated,
or the run waits at an interrupt), a fresh racer ``resume`` continues the thread with the scenario's
resume form: it answers each interrupt in turn (``command:``) and retries a call that failed, as a
client retries a failed request (``continue_actions``, at most 8 calls). The fault is counted per trial, so
the resume sees it as spent. A trial whose fault never fired is invalid ("the effect fault never
fired"), never a holding one. The cell's baseline is the workload run once with no fault at all.

- **EO**, per trial, against the fault-free baseline: violated when an effect key fired more often
  than in the baseline (at least twice): the reason names the call that fired each row, so the
  framework running the node again within one call (a ``RetryPolicy``) reads apart from a later
  call of the same process and from the resume in a fresh process; or when
  the trial completed and an effect of the baseline never fired (lost). Holds otherwise.
- **LIVENESS**, per trial: violated when the trial ended with the framework's error (after the
  resume, if there was one), or stopped with next tasks and no pending interrupt; holds when it
  completed or waits for a human.

Over trials: any violated trial makes the property violated, else holds; no valid trial: unknown.

What it needs from an adapter: ``run``, ``resume`` (none | input | command), ``inspect``, and the
workload built with ``WorkloadContext`` (``ctx.effect`` raises the injected fault).
Scenario fields: ``effect_fault`` (required), ``resume``, ``answers``, ``trials``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import TypedDict

from pydantic import BaseModel, ConfigDict, Field

from chaos.kinds.base import Checker, Kind, KindOptions
from chaos.kinds.baseline import MAX_ANSWERS, answer_action, baseline_of, effect_counts, with_baseline
from chaos.kinds.checking import base_fields, times, verdict
from chaos.kinds.phases import each_trial, failed
from chaos.kinds.sweep import EO, LIVENESS
from chaos.racer.protocol import ActionOutcome, ActionSpec, EffectFaultSpec, OutcomeStatus
from chaos.records import CellResult, TrialRecord, Verdict, status_of
from chaos.running.trial import RunContext, TrialRun
from chaos.scenario.model import MAX_NAME, Cell, Scenario
from chaos.targets import TARGETS


class EffectFault(BaseModel):
    """An effect that fails after doing its work: the trial's first ``times`` firings of effect
    ``task`` commit their ledger row, pass their barrier, then raise (``chaos.workloads.EffectFault``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: str = Field(min_length=1, max_length=MAX_NAME, description="the effect label the workload passes to ctx.effect")
    times: int = Field(1, ge=1, le=100, strict=True, description="how many of its first firings in a trial fail")


class FailingEffectOptions(KindOptions):
    """What a failing effect reads: which effect fails, how often."""

    refused_elsewhere = frozenset({"effect_fault"})

    effect_fault: EffectFault | None = Field(
        None,
        description="an effect that fails after doing its work ({task, times}): its first `times` firings in a trial "
        "are performed and committed, then raise, as a provider that charges the card and then times out",
    )


def check_eo(cell: Cell, records: list[TrialRecord]) -> Verdict:
    """EO over the cell's trials (``trial_eo`` of each, combined)."""
    return _combine("EO", [r for r in records if r.valid], len(records), trial_eo)


def check_liveness(cell: Cell, records: list[TrialRecord]) -> Verdict:
    """LIVENESS over the cell's trials (``trial_liveness`` of each, combined)."""
    return _combine("LIVENESS", [r for r in records if r.valid], len(records), trial_liveness)


class FailingEffect(Kind):
    name = "failing_effect"
    about = "an effect fails after doing its work (charged, then timed out): does a retry, a handler or a resume do it twice?"
    properties = ("EO", "LIVENESS")
    checks = (Checker(EO, check_eo), Checker(LIVENESS, check_liveness))
    fields = ("effect_fault", "resume", "answers", "trials")
    clean_run = True
    section = "contract"
    title = "Effects that fail after doing their work"
    Options = FailingEffectOptions

    def validate(self, scenario: Scenario) -> None:
        if FailingEffectOptions.of(scenario).effect_fault is None:
            raise ValueError(f"a {self.name} trial injects a fault on an effect: set effect_fault: {{task: <the effect's label>}}")
        info = TARGETS.get(scenario.target.framework)
        if info is not None and scenario.target.backend in info.in_process_backends:
            raise ValueError(
                f"a {self.name} trial resumes in a fresh process, and backend {scenario.target.backend!r} keeps nothing "
                "across processes: use a durable backend (e.g. sqlite)"
            )

    def run_cell(self, ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
        return with_baseline(ctx, cell, each_trial(ctx, cell, skip, failing_trial))

    def summary(self, cell: Cell, records: Iterable[TrialRecord]) -> tuple[CellResult, list[TrialRecord]]:
        recs = list(records)
        return failing_summary(cell, recs), recs

    def explain(self, rec: TrialRecord) -> list[str]:
        return [why for status, why in (trial_eo(rec), trial_liveness(rec)) if status == "violated"]


KIND = FailingEffect()


def continue_actions(s: Scenario, after: str | None) -> list[ActionSpec]:
    """How the fresh process continues a run that did not complete (its last status ``after``):
    answer a pending interrupt (``command:``, every interrupt in turn), and retry a call that
    failed as a client retries a failed request (``resume: none`` or ``input``; ``none`` for a
    ``command:`` scenario), each only when the previous call ended that way, at most 8 calls."""
    retry: ActionSpec = {"op": "resume", "form": "input" if s.resume_form == "input" else "none", "keep_going": True}
    if s.resume_form != "command":
        return [retry] + [{**retry, "if": "error"} for _ in range(MAX_ANSWERS - 1)]
    answer: ActionSpec = {**answer_action(s), "keep_going": True}
    acts: list[ActionSpec] = [answer if after == "interrupted" else retry]
    while len(acts) < MAX_ANSWERS:
        acts += [{**answer, "if": "interrupted"}, {**retry, "if": "error"}]
    return acts


class CallSummary(TypedDict, total=False):
    """``observations["run"]`` / ``["resume"]``: how the last call of a process ended (its error as ``Type: message``)."""

    status: OutcomeStatus | None
    fired: list[str]
    error: str | None


def _faults(outcomes: list[ActionOutcome]) -> list[object]:
    return [f["value"] for o in outcomes for f in o.get("facts") or [] if f.get("name") == "effect_fault"]


def _summary(o: ActionOutcome | None) -> CallSummary | None:
    if o is None:
        return None
    err = o.get("error")
    return {"status": o.get("status"), "fired": o.get("fired") or [], "error": f"{err.get('type')}: {err.get('message')}" if err else None}


def failing_trial(run: TrialRun) -> TrialRecord:
    s = run.cell.scenario
    (h,) = run.start([run.spec("run", actions=[{"op": "run"}], effect_fault=True)])
    hung = run.wait_exit([h])
    first = run.collect(h, "run", "run", hung=bool(hung))
    racers = [first]
    outs = list(first.outcomes)
    run_o = outs[-1] if outs else None
    resume_o = None
    resumed = first.status == "ok" and run_o is not None and run_o.get("status") != "done"
    if resumed:
        (r,) = run.start(
            [
                run.spec(
                    "resume",
                    actions=continue_actions(s, status_of(run_o)),
                    inspect_before=True,
                    inspect_after=True,
                    effect_fault=True,
                )
            ]
        )
        hung = run.wait_exit([r])
        second = run.collect(r, "resume", f"resume {s.resume}", hung=bool(hung))
        racers.append(second)
        routs = list(second.outcomes)
        outs += routs
        resume_o = routs[-1] if routs else None
        run.observations.update(at_resume=second.inspect_before, after_resume=second.inspect_after)
    fault = FailingEffectOptions.of(s).effect_fault
    fired = _faults(outs)
    # what each call fired, in order (the racer's result is not kept whole in the journal)
    run.observations["calls"] = [[o.racer_id, _call_name(x.get("action")), list(x.get("fired") or [])] for o in racers for x in o.outcomes]
    run.observations.update(
        effect_fault={"task": fault.task, "times": fault.times} if fault else None,
        faults_fired=fired,
        run=_summary(run_o),
        resume=_summary(resume_o),
        resumed=resumed,
    )
    why = failed(racers)
    if why:
        return run.record(valid=False, invalid_reason=why, fault_fired=bool(fired))
    if not fired:
        task = fault.task if fault else "?"
        return run.record(
            valid=False,
            invalid_reason=f"the effect fault never fired: effect {task!r} was not fired in this trial (ended {status_of(run_o)})",
            fault_fired=False,
        )
    return run.record(valid=True, fault_fired=True)


# ------------------------------------------------------------------------------------ check


def _final(rec: TrialRecord) -> CallSummary:
    return rec.observed("resume" if rec.observations.get("resumed") else "run", CallSummary)


def _call_name(action: ActionSpec | None) -> str:
    action = action or ActionSpec()
    if action.get("op") == "run":
        return "run"
    if action.get("form") == "command":
        return f"answer {action.get('value')!r}"
    return f"retry (resume {action.get('form')})"


def _calls(rec: TrialRecord, key: str) -> list[tuple[str, str, int]]:
    """(racer, call, rows of ``key`` it fired) for every call that fired ``key``, in order."""
    out = []
    for racer, call, fired in rec.observations.get("calls") or []:
        n = fired.count(key)
        if n:
            out.append((racer, call, n))
    return out


def _how(rec: TrialRecord, key: str) -> str:
    """Where the extra rows of ``key`` came from: within one call (the framework ran the node again,
    e.g. its RetryPolicy), a later call of the same process, or the resume in a fresh process."""
    calls = _calls(rec, key)
    seqs = ", ".join(f"{r['racer_id']} seq {r['seq']}" for r in rec.ledger if r["effect_key"] == key)
    if not calls:
        return f"({seqs})"
    ways = []
    if any(n > 1 for _, _, n in calls):
        ways.append("again within one call (the framework ran the node again, e.g. a RetryPolicy)")
    if len({(r, c) for r, c, _ in calls}) > 1 and len({r for r, _, _ in calls}) == 1:
        ways.append("again by a later call in the same process")
    if len({r for r, _, _ in calls}) > 1:
        ways.append("again by the resume in a fresh process")
    where = "; ".join(f"{r}: {c} x{n}" for r, c, n in calls)
    return f"fired {' and '.join(ways) or 'again'} ({where}; {seqs})"


def trial_eo(rec: TrialRecord) -> tuple[str, str]:
    """(status, reason) of EO in one valid trial, judged against the fault-free baseline."""
    base = rec.observations.get("baseline_effects")
    if base is None:
        return "unknown", f"no fault-free baseline to judge against ({rec.observations.get('baseline_error') or 'not run'})"
    counts = effect_counts(rec.ledger)
    fault = rec.observed("effect_fault", EffectFaultSpec).get("task", "?")
    dups = {k: n for k, n in counts.items() if n > max(base.get(k, 1), 1)}
    parts = []
    for k, n in sorted(dups.items()):
        extra = "" if k in base else f" (an uninterrupted run never fires it: {k} is the failure path's own effect)"
        parts.append(f"{k!r} fired {times(n)}, {_how(rec, k)}{extra}")
    lost = sorted(k for k in base if not counts.get(k)) if _final(rec).get("status") == "done" else []
    if lost:
        parts.append(f"lost {', '.join(repr(k) for k in lost)}: the run completed without it")
    if parts:
        return "violated", f"after effect {fault!r} failed having done its work: " + "; ".join(parts)
    fired = ", ".join(f"{k} x{n}" for k, n in sorted(counts.items())) or "nothing"
    return "holds", f"after effect {fault!r} failed having done its work, every effect at most as often as without the fault ({fired})"


def trial_liveness(rec: TrialRecord) -> tuple[str, str]:
    final = _final(rec)
    after = rec.observed_inspect("after_resume")
    when = "after the resume" if rec.observations.get("resumed") else "in the run"
    if final.get("status") in ("error", "refused"):  # refused: by a guard (target.guard)
        return (
            "violated",
            f"the trial ended {'refused' if final.get('status') == 'refused' else 'with an error'} {when}: {final.get('error')}",
        )
    if after.get("next") and not after.get("pending_interrupts"):
        return "violated", f"the resume stopped with next={after.get('next')} and nothing to answer"
    return "holds", f"the trial ended {final.get('status')} {when}"


def _combine(prop: str, valid: list[TrialRecord], n: int, judge: Callable[[TrialRecord], tuple[str, str]]) -> Verdict:
    if not valid:
        return verdict(prop, "unknown", f"no valid trial of {n}")
    per = [(r, *judge(r)) for r in valid]
    bad = [(r, why) for r, st, why in per if st == "violated"]
    if bad:
        seqs = []
        if prop == "EO":
            base = bad[0][0].observations.get("baseline_effects") or {}
            for r, _ in bad:
                counts = effect_counts(r.ledger)
                seqs += [row["seq"] for row in r.ledger if counts[row["effect_key"]] > max(base.get(row["effect_key"], 1), 1)]
        return verdict(
            prop, "violated", f"{len(bad)}/{len(valid)} trials: {bad[0][1]}", trial_ids=[r.trial_id for r, _ in bad], ledger_seqs=seqs
        )
    unknown = [(r, why) for r, st, why in per if st == "unknown"]
    if unknown:
        return verdict(prop, "unknown", unknown[0][1], trial_ids=[r.trial_id for r, _ in unknown])
    return verdict(prop, "holds", f"all {len(valid)} trials: {per[0][2]}", trial_ids=[r.trial_id for r in valid])


def failing_summary(cell: Cell, records: list[TrialRecord]) -> CellResult:
    """The cell's numbers: the run's and the resume's statuses, the faults that fired, the baseline."""
    valid = [r for r in records if r.valid]
    result = CellResult(**base_fields(cell, records))
    base = next((r.observations["baseline_effects"] for r in records if r.observations.get("baseline_effects") is not None), None)
    if base is not None:
        result.baseline = baseline_of(next(r.observations.get("baseline_trial") or "?" for r in records), base)
    result.summary = {
        "run_status": dict(Counter(str(r.observed("run", CallSummary).get("status")) for r in valid)),
        "resume_status": dict(
            Counter(str(r.observed("resume", CallSummary).get("status")) for r in valid if r.observations.get("resumed"))
        ),
        "faults_fired": sum(len(r.observations.get("faults_fired") or []) for r in valid),
        "invalid": dict(Counter(r.invalid_reason for r in records if not r.valid)),
    }
    return result
