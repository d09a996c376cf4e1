"""``double_texting``: a second message while the first run is in flight, judged against the strategy's documented promise -> DT.

Why: behind LangGraph's Agent Server, what a second request on a busy thread does is the
server's ``multitask_strategy``; LangGraph documents each one ("Double texting"): ``reject``
rejects the follow-up run, ``enqueue`` lets the current run finish and then runs the new input,
``interrupt`` halts the current run preserving its progress and continues with the new input,
``rollback`` reverts the current run and runs the new input as if it had followed the original.

Per trial, on the cell's service (a framework that hosts one per cell, ``HostsCells``: the Agent
Server), through racer actions, one racer each (``message``, ``message``, ``join``: the adapter
speaks to the server, the kind never does): run 1 with message ``m1`` on the deployed
``slow_reply`` graph (``draft`` fires ``draft:m1``, ``hold`` waits for a release file the trial
controls, ``send`` fires ``send:m1``); once ``draft:m1`` is in the ledger, run 2 with ``m2`` and
the cell's strategy (``workload_params.multitask_strategy``), its outcome saying run 1's status
just before; then run 1 is released, both are joined and read (gone = ``deleted``), and the
thread's state and the ledger are read. A trial where run 1 was not running when run 2 was sent
is invalid (nothing was double-texted).

DT per trial, the promise of the strategy:

* ``reject``: run 2 refused (HTTP 409); run 1 ends ``success``; the effects are m1's only.
* ``enqueue``: run 2 accepted; both end ``success``; m2's first effect comes after m1's last.
* ``interrupt``: run 1 ends ``interrupted``, run 2 ``success``; the state keeps run 1's work up to
  the interruption (``draft:m1``) and m2's reply (``send:m2``); ``send:m1`` never fires.
* ``rollback``: run 1 is gone (``deleted``; read before the deletion, ``interrupted``), run 2
  ``success``; the state holds nothing of m1. The effect ``draft:m1`` fired before the rollback is
  reported (a rollback reverts state, not the world), never counted as a broken promise.

The cell's DT holds when every valid trial kept the promise, is violated with the trial ids of
those that did not, unknown without a valid trial.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any, TypedDict, cast

from chaos.kinds.base import Checker, Kind, Property
from chaos.kinds.checking import base_fields, verdict
from chaos.kinds.phases import each_trial
from chaos.racer.protocol import ActionOutcome, ActionSpec, MessageSent
from chaos.records import CellResult, TrialRecord, Verdict
from chaos.running.trial import RunContext, TrialRun
from chaos.scenario.model import Cell, Scenario

GRAPH = "slow_reply"
STRATEGIES = ("reject", "enqueue", "interrupt", "rollback")
DT = Property("DT", "a second message keeps the multitask strategy's promise", "behind-the-langgraph-agent-server-target-langgraph_server")


class RunSeen(TypedDict, total=False):
    """One of the trial's two runs as the client saw it: its id, HTTP status of its creation, final status."""

    run_id: str
    create: int
    error: str
    status: str
    status_when_second_sent: str


class Observed(TypedDict, total=False):
    """What a double-texting trial records in ``TrialRecord.observations``."""

    strategy: str
    first: RunSeen
    second: RunSeen
    log: list[str]
    effects: list[str]


def strategy_of(scenario: Scenario) -> str:
    """The cell's ``multitask_strategy`` (``workload_params``; the server's default, ``enqueue``)."""
    params: dict[str, Any] = scenario.workload_params or {}
    return str(params.get("multitask_strategy", "enqueue"))


def observed(rec: TrialRecord) -> Observed:
    return cast(Observed, rec.observations)


def check_dt(cell: Cell, records: list[TrialRecord]) -> Verdict:
    judged = [(r, *promise_kept(observed(r))) for r in records if r.valid]
    return dt_verdict(judged, len(records))


class DoubleTexting(Kind):
    name = "double_texting"
    about = "a second message while the first run is in flight: does the server's multitask_strategy keep its documented promise?"
    properties = ("DT",)
    fields = ()
    checks = (Checker(DT, check_dt),)
    keeps_windows = True  # the second message's moment against the first run is the measurement
    section = "contract"
    title = "Double texting"

    def validate(self, scenario: Scenario) -> None:
        strategy = strategy_of(scenario)
        if strategy not in STRATEGIES:
            raise ValueError(f"workload_params.multitask_strategy {strategy!r}: one of {', '.join(STRATEGIES)}")
        if scenario.workload != GRAPH:
            raise ValueError(f"double_texting runs the deployed {GRAPH!r} graph (a run that waits in flight): set workload: {GRAPH}")

    def run_cell(self, ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
        return each_trial(ctx, cell, skip, double_text_trial)

    def summary(self, cell: Cell, records: Iterable[TrialRecord]) -> tuple[CellResult, list[TrialRecord]]:
        recs = list(records)
        return dt_summary(cell, recs), recs


KIND = DoubleTexting()


def double_text_trial(run: TrialRun) -> TrialRecord:
    """Three racers, clients of the cell's service, one after the other: the first sends ``m1``;
    once ``draft:m1`` is in the ledger the second sends ``m2`` (the thread's runs as they stood then
    come back with it); run 1 is released; the third joins both runs and reads the thread."""
    s = run.cell.scenario
    if run.ctx.service_url is None:
        return run.record(valid=False, invalid_reason="no service for this cell: double_texting needs a framework that hosts one per cell")
    release1, release2 = run.dir / "release-1", run.dir / "release-2"
    release2.touch()  # the second message's run is never held
    obs: dict[str, Any] = {"strategy": strategy_of(s)}

    def phase(racer_id: str, action: ActionSpec) -> ActionOutcome | str:
        """The one action's outcome, or why the racer or the call failed."""
        (h,) = run.start([run.spec(racer_id, actions=[action])])
        out = run.collect(h, racer_id, racer_id, hung=bool(run.wait_exit([h])))
        got = out.labelled.get(racer_id)
        if got is None or out.status != "ok":
            err = out.harness_error
            return f"racer {racer_id} {out.status}" + (f": {err.get('type')}: {err.get('message')}" if err else "")
        if got.get("status") != "done":
            failure = got.get("error")
            return f"{failure['type']}: {failure['message'][:200]}" if failure else f"the {racer_id} action ended {got.get('status')}"
        return got

    def failed(why: str) -> TrialRecord:  # a call chaos made failed: no promise can be judged
        release1.touch()
        run.errors.append(why)
        run.observations.update(obs)
        return run.record(valid=False, invalid_reason=f"a call to the Agent Server failed: {why}")

    first = phase("first", {"op": "message", "value": "m1", "release": str(release1), "label": "first"})
    if isinstance(first, str):
        return failed(first)
    sent1 = first.get("message") or MessageSent()
    if "run_id" not in sent1:
        return failed(f"the first message was refused: {sent1.get('error')}")
    id1 = sent1["run_id"]
    drafted = run.wait_until(lambda: any(r["task"] == "draft" for r in run.ctx.read_ledger(run.trial_id)))
    second = phase("second", {"op": "message", "value": "m2", "release": str(release2), "label": "second"})
    if isinstance(second, str):
        return failed(second)
    sent2 = second.get("message") or MessageSent()
    obs["first"] = {"run_id": id1, "status_when_second_sent": (sent2.get("before") or {}).get(id1, "deleted")}
    seen2: dict[str, Any] = {"create": sent2.get("create")}
    if "run_id" in sent2:
        seen2["run_id"] = sent2["run_id"]
    if "error" in sent2:
        seen2["error"] = sent2["error"]
    release1.touch()
    joined = phase("join", {"op": "join", "runs": [r for r in (id1, seen2.get("run_id")) if r], "label": "join"})
    if isinstance(joined, str):
        return failed(joined)
    ended = joined.get("runs") or {}
    for r in (obs["first"], seen2):
        if r.get("run_id"):
            r["status"] = ended.get(r["run_id"], "deleted")
    obs["second"] = seen2
    values = joined.get("values")
    obs["log"] = list((values.get("log") if isinstance(values, dict) else None) or [])
    obs["effects"] = [f"{r['task']}:{r['value']}" for r in sorted(run.ctx.read_ledger(run.trial_id), key=lambda r: r["seq"])]
    run.observations.update(obs)
    if not drafted or obs["first"]["status_when_second_sent"] != "running":
        why = f"run 1 was {obs['first']['status_when_second_sent']} when run 2 was sent: nothing was double-texted"
        return run.record(valid=False, invalid_reason=why, fault_fired=False)
    return run.record(valid=True, fault_fired=True)


def promise_kept(o: Observed) -> tuple[bool, str]:
    """Did one trial's outcome keep its strategy's documented promise; and what happened, in words."""
    strategy, first, second = o.get("strategy"), o.get("first", RunSeen()), o.get("second", RunSeen())
    effects, log = list(o.get("effects") or []), list(o.get("log") or [])
    s1, s2, c2 = first.get("status"), second.get("status"), second.get("create")
    said = f"run 1 {s1}, run 2 {'HTTP ' + str(c2) if c2 != 200 else s2}; effects {effects}; state log {log}"
    if strategy == "reject":
        return c2 == 409 and s1 == "success" and effects == ["draft:m1", "send:m1"], said
    if strategy == "enqueue":
        ok = c2 == 200 and s1 == s2 == "success" and effects == ["draft:m1", "send:m1", "draft:m2", "send:m2"]
        return ok, said
    if strategy == "interrupt":
        ok = s1 == "interrupted" and s2 == "success" and "draft:m1" in log and "send:m2" in log and "send:m1" not in effects
        return ok, said
    if strategy == "rollback":
        ok = s1 in ("deleted", "interrupted") and s2 == "success" and not any(e.endswith(":m1") for e in log) and "send:m1" not in effects
        if ok and "draft:m1" in effects:
            said += " (draft:m1 fired before the rollback: the state was reverted, the effect was not)"
        return ok, said
    return False, f"unknown strategy {strategy!r}"


def dt_summary(cell: Cell, records: list[TrialRecord]) -> CellResult:
    """The cell's numbers: each run's final status, the effects in order, why trials were invalid."""
    valid = [observed(r) for r in records if r.valid]
    result = CellResult(**base_fields(cell, records))
    result.summary = {
        "strategy": strategy_of(cell.scenario),
        "first_status": dict(Counter(str(o.get("first", RunSeen()).get("status")) for o in valid)),
        "second": dict(Counter(_second_said(o.get("second", RunSeen())) for o in valid)),
        "effects": dict(Counter(" ".join(o.get("effects", [])) for o in valid)),
        "invalid": dict(Counter(r.invalid_reason for r in records if not r.valid)),
    }
    return result


def _second_said(second: RunSeen) -> str:
    return str(second.get("status") or f"HTTP {second.get('create')}")


def dt_verdict(judged: list[tuple[TrialRecord, bool, str]], n: int) -> Verdict:
    if not judged:
        return verdict("DT", "unknown", f"no valid trial of {n}: run 1 was never in flight when run 2 was sent")
    broken = [(r, said) for r, ok, said in judged if not ok]
    strategy = judged[0][0].observations.get("strategy")
    if broken:
        return verdict(
            "DT",
            "violated",
            f"{len(broken)}/{len(judged)} trials: multitask_strategy={strategy} did not keep its documented promise: {broken[0][1]}",
            trial_ids=[r.trial_id for r, _ in broken],
        )
    return verdict(
        "DT",
        "holds",
        f"all {len(judged)} trials: multitask_strategy={strategy} kept its documented promise: {judged[0][2]}",
        trial_ids=[r.trial_id for r, _, _ in judged],
    )
