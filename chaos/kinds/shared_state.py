"""``shared_state``: k agents read shared state, generate, then write or act -> LU, SG, PT, CC, TR.

Per trial: k racers (agents ``a0`` .. ``a<k-1>``, each its own process and graph thread) open the
same shared store (LangGraph's ``SqliteStore`` on one file of the trial) and stop at the start
gate. Every read of the shared state is followed by the agent's generation, held at the barrier
``effect(task=ss.read):after#n``: the agent stands there, stopped, until the orchestrator continues
it. The orchestrator follows the trial's **schedule**, a sequence of agent ids: each entry
continues that agent until its next stop (or its end). Agent i appears ``steps(workload, i)``
times (its start, and one continuation per generation), so for k=2 the schedules are all orders of
r0, r1, c0, c1 with each read before its commit. A guard may stop an agent more often (a retry
reads again; a lock wait stops at ``effect(task=ss.wait):after#n``): after the schedule the
agents still running are continued in turn, in agent order, until all have ended.

A workload whose model plans n tool calls in one message (``tool_calls``) also gets the order in
which their external services answer: a permutation of the plan (``workload_params["responses"]``),
so a trial's interleaving is (schedule, responses).

Schedules: when their number (a multinomial, times n! response orders) is at most ``trials``, the
cell runs every one, trial t the t-th in lexicographic order (exhaustive, as a model checker
would); otherwise each trial draws one uniformly with its own seed (``derive(root, cell, trial)``). Either way the schedule
derives from the trial id, is recorded in the trial's observations, and ``chaos rerun`` replays it.

The history is the trial's ledger rows ``ss.*`` (``chaos.kinds.shared_history``): reads, writes
and effects with the versions they saw and were computed from, in commit order. Per property: a
valid trial whose history shows the anomaly violates it (evidence: the trial, the ledger seqs and
the operations in words); ``holds`` when the cell's valid trials exposed it (its premise happened,
``exposure``) and none showed it; ``unknown`` when no valid trial exposed it (vacuous for this
workload) or no trial was valid. The cell's summary has the schedules explored, how many trials
showed each anomaly, and what the workload's guard cost (retries, lock waits, wall time).

What it needs from an adapter: ``run`` of a workload whose agents record their operations through
``ctx.effect("ss.<op>", json)`` (``chaos.workloads.shared_langgraph``); racers on one machine
(the shared store is a file of the trial). Scenario fields: ``racers.k`` (agents, at least 2),
``trials`` (the cap on schedules), ``workload`` (one of the ``shared_*`` built-ins or a factory
recording the same rows), ``workload_params`` (passed on; ``agent``, ``shared_store`` and
``responses`` are set per racer). Backend ``sqlite`` (each agent its own checkpoint file) and
placement ``local`` only: Postgres checkpoints and agents in containers or on hosts are not wired.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import permutations

from chaos.kinds.base import Checker, Kind, Property
from chaos.kinds.checking import Tally, base_fields, verdict
from chaos.kinds.phases import failed, repeat_tasks
from chaos.kinds.shared_history import CODES, classify, exposure, guard_cost, history_of
from chaos.launchers import RacerHandle
from chaos.records import CellResult, TrialRecord, Verdict, error_field, error_of, status_of
from chaos.running.trial import RunContext, TrialRun
from chaos.scenario.model import Cell, Scenario
from chaos.workloads.shared_langgraph import steps, tool_calls

# every stop an agent may make: generations after reads, and lock waits (a guard may retry)
MAX_STOPS = 32
ARMED = tuple(f"effect(task=ss.{op}):after#{n}" for op in ("read", "wait") for n in range(1, MAX_STOPS + 1))


ANCHOR = "shared-state-lu-sg-pt-cc-tr-kind-shared_state"
PROPERTIES = {
    p.code: p
    for p in (
        Property("LU", "no lost update", ANCHOR),
        Property("SG", "no stale generation (A1)", ANCHOR),
        Property("PT", "no phantom tool call (A2)", ANCHOR),
        Property("CC", "no causal cascade (A3)", ANCHOR),
        Property("TR", "no tool effect reordering (A6)", ANCHOR),
    )
}


def _checker(code: str) -> Checker[SharedFacts]:
    """The checker of anomaly ``code`` (``_verdict`` on the trials that showed it)."""

    def judge(cell: Cell, f: SharedFacts) -> Verdict:
        return _verdict(code, f.found[code], f.exposed.get(code, 0), f.valid, f.trials, f.invalid)

    return Checker(PROPERTIES[code], judge)


class SharedState(Kind):
    name = "shared_state"
    about = "k agents read shared state, generate, then write or act: lost updates, stale generations, phantom tools, cascades, reordered tool effects?"
    properties = CODES
    checks = tuple(_checker(c) for c in CODES)
    fields = ("racers", "workload_params")
    section = "contract"
    title = "Shared state"

    def validate(self, scenario: Scenario) -> None:
        if scenario.racers.k < 2:
            raise ValueError("shared_state needs at least 2 agents: set racers.k to 2 or more")
        if scenario.target.backend != "sqlite":
            raise ValueError("shared_state gives each agent its own checkpoint file beside the shared store: use backend sqlite")
        if scenario.racers.placement != "local":
            raise ValueError("shared_state agents share a store file of the trial: use racers.placement local")

    def run_cell(self, ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
        """Every schedule (or ``trials`` sampled ones), ``--jobs`` at a time: a trial's interleaving is
        the orchestrator's, one agent continued at a time to its next stop, so it derives from the trial
        id alone and not from timing (each trial its own store, checkpoint files, threads and rows)."""
        total, exhaustive = schedules_of(cell)
        return ctx.independent(repeat_tasks(cell, skip, scheduled_trial, total if exhaustive else cell.scenario.trials))

    def summary(self, cell: Cell, records: Iterable[TrialRecord]) -> tuple[CellResult, SharedFacts]:
        return shared_summary(cell, records)

    def explain(self, rec: TrialRecord) -> list[str]:
        return [a.text for a in classify(history_of(rec.ledger))] if rec.valid else []


KIND = SharedState()


# ------------------------------------------------------------------------------ schedules


def schedule_count(counts: list[int]) -> int:
    """How many distinct schedules: the multinomial (sum counts)! / prod(count!)."""
    n = math.factorial(sum(counts))
    for c in counts:
        n //= math.factorial(c)
    return n


def nth_schedule(counts: list[int], n: int) -> list[int]:
    """The n-th schedule in lexicographic order, built without listing the others."""
    left = list(counts)
    out: list[int] = []
    for _ in range(sum(counts)):
        for agent in range(len(left)):
            if not left[agent]:
                continue
            left[agent] -= 1
            here = schedule_count(left)
            if n < here:
                out.append(agent)
                break
            n -= here
            left[agent] += 1
    return out


def all_schedules(counts: list[int]) -> list[list[int]]:
    """Every schedule, lexicographic (for tests and small counts)."""
    base = [a for a, c in enumerate(counts) for _ in range(c)]
    return [list(p) for p in sorted(set(permutations(base)))]


def sampled_schedule(counts: list[int], seed: int) -> list[int]:
    """One schedule drawn uniformly (a shuffle of the multiset) with the trial's seed."""
    order = [a for a, c in enumerate(counts) for _ in range(c)]
    random.Random(seed).shuffle(order)
    return order


# ---------------------------------------------------------------------------------- trial


def schedules_of(cell: Cell) -> tuple[int, bool]:
    """How many interleavings the cell has (schedules times the orders of a step's tool responses),
    and whether its ``trials`` cover them all (exhaustive), else each trial draws one."""
    total = schedule_count(agent_steps(cell)) * math.factorial(tool_calls(cell.scenario.workload))
    return total, total <= cell.scenario.trials


def agent_steps(cell: Cell) -> list[int]:
    """How often each agent of the cell is continued: its start, and once per generation."""
    return [steps(cell.scenario.workload, i) for i in range(cell.scenario.racers.k)]


def scheduled_trial(run: TrialRun) -> TrialRecord:
    """Repeat ``run.rep`` of the cell: the ``rep``-th schedule (and response order) when the cell
    explores them all, else one drawn with the trial's own seed; recorded in its observations, then run."""
    t, counts, tools = run.rep, agent_steps(run.cell), tool_calls(run.cell.scenario.workload)
    total, exhaustive = schedules_of(run.cell)
    orders = math.factorial(tools)
    if exhaustive:
        schedule, responses = nth_schedule(counts, t // orders), nth_schedule([1] * tools, t % orders)
    else:
        schedule, responses = sampled_schedule(counts, run.seed), sampled_schedule([1] * tools, run.seed + 1)
    run.observations["schedule"] = {
        "order": schedule,
        "responses": responses,
        "index": t,
        "of": total,
        "mode": "exhaustive" if exhaustive else "sampled",
    }
    return shared_trial(run, schedule, responses)


def shared_trial(run: TrialRun, schedule: list[int], responses: list[int] | None = None) -> TrialRecord:
    s = run.cell.scenario
    k = s.racers.k
    store_path = str(run.dir / "shared-store.sqlite")
    specs = []
    for i in range(k):
        spec = run.spec(f"a{i}", actions=[{"op": "run"}], armed=ARMED, gate=True)
        spec["thread_id"] = f"{run.thread_id}-a{i}"  # each agent is its own thread
        if "path" in run.store:
            # and has its own checkpoint file: LangGraph writes checkpoints on a background thread, so
            # an agent stopped at its generation may be stopped inside a SQLite write transaction
            # (seen: the other agent's put_writes blocked until the timeout); only the store is shared
            spec["store"] = {**run.store, "path": str(run.dir / f"checkpoints-a{i}.sqlite")}
        spec["workload_params"] = {**s.workload_params, "agent": i, "shared_store": store_path}
        if responses:
            spec["workload_params"]["responses"] = responses
        spec["jitter_ms"] = 0  # the schedule orders the agents; no jitter
        specs.append(spec)
    handles = run.start(specs)
    at_gate = run.wait_until(lambda: all(h.state() == "exited" or (h.state() == "stopped" and h.arrivals()) for h in handles))
    ready = [h for h in handles if h.state() == "stopped" and h.arrivals()]
    for h in ready:
        run.wait_arrival(h, "gate")
    executed: list[int] = []
    why: str | None = None
    if not at_gate or len(ready) != k:
        why = f"only {len(ready)}/{k} agents reached the start gate"
    else:
        why = follow(run, handles, schedule, executed)
    hung = [h for h in handles if h.state() != "exited"]
    for h in hung:
        run.kill(h)
    outs = [run.collect(h, f"agent{i}", "run", hung=h in hung) for i, h in enumerate(handles)]
    ops = history_of(run.ctx.read_ledger(run.trial_id))
    run.observations.update(executed=executed, operations=len(ops), cost=guard_cost(ops))
    if why is None:
        why = failed(outs)
    if why is None:
        bad = [o for o in outs if status_of(o.last_outcome) != "done"]
        if bad:
            err = error_of(bad[0].last_outcome)
            why = f"agent {bad[0].racer_id} did not finish its run: {error_field(err, 'type')}: {error_field(err, 'message')}"
    if why is None and not ops:
        why = "the workload recorded no operation on the shared state (is it a shared_* workload?)"
    if why is not None:
        if run.errors:
            why += f": {run.errors[0]}"
        return run.record(valid=False, invalid_reason=why, fault_fired=bool(executed))
    return run.record(valid=True, fault_fired=True)


def follow(run: TrialRun, handles: list[RacerHandle], schedule: list[int], executed: list[int]) -> str | None:
    """Continue agents in the schedule's order, then the rest in turn until all ended; why not, or None."""

    def step(i: int) -> str | None:
        h = handles[i]
        if h.state() == "exited":
            return None
        arrivals = h.arrivals()
        run.release(h, arrivals[-1]["barrier"] if arrivals else "gate")
        executed.append(i)
        moved = run.wait_until(lambda: h.state() == "exited" or (h.state() == "stopped" and len(h.arrivals()) > len(arrivals)))
        if not moved:
            return f"agent a{i} neither stopped nor ended within {run.timeout}s of step {len(executed)}"
        now = h.arrivals()
        if h.state() == "stopped" and len(now) > len(arrivals):
            run.wait_arrival(h, now[-1]["barrier"])
        return None

    for i in schedule:
        why = step(i)
        if why:
            return why
    budget = MAX_STOPS * len(handles)
    while any(h.state() != "exited" for h in handles):
        for i, h in enumerate(handles):
            if h.state() != "exited":
                why = step(i)
                if why:
                    return why
                budget -= 1
        if budget <= 0:
            return f"the agents did not finish within {MAX_STOPS * len(handles)} steps after the schedule (a guard that never lets go?)"
    return None


# ---------------------------------------------------------------------------------- check


@dataclass
class SharedFacts:
    """What the shared-state checkers judge: per anomaly code, the trials that showed it."""

    found: dict[str, list[tuple[str, list[int], str]]]
    exposed: Counter
    valid: int
    trials: int
    invalid: Counter


def shared_summary(cell: Cell, records: Iterable[TrialRecord]) -> tuple[CellResult, SharedFacts]:
    """Classify each valid trial's history, in one pass: the cell's numbers, and per anomaly code
    what its checker judges (one verdict per code, evidence in words)."""
    tally = Tally()
    found: dict[str, list[tuple[str, list[int], str]]] = {c: [] for c in CODES}
    exposed: Counter = Counter()
    valid = 0
    invalid: Counter = Counter()
    schedules: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    total, mode = None, None
    retries, waits = [], []
    walls = []
    for r in records:
        tally.add(r)
        if not r.valid:
            invalid[r.invalid_reason or "?"] += 1
            continue
        valid += 1
        sched = r.observations.get("schedule") or {}
        schedules.add((tuple(sched.get("order") or ()), tuple(sched.get("responses") or ())))
        total, mode = sched.get("of"), sched.get("mode")
        ops = history_of(r.ledger)
        exposed.update(exposure(ops))
        cost = guard_cost(ops)
        retries.append(cost["retries"])
        waits.append(cost["waits"])
        walls.append(r.wall_s)
        seen: set[str] = set()
        for a in classify(ops):
            if a.code not in seen:  # one anomaly of a code per trial as its evidence
                seen.add(a.code)
                found[a.code].append((r.trial_id, list(a.seqs), a.text))
    result = CellResult(**base_fields(cell, tally))
    result.summary = {
        "schedules": {"explored": len(schedules), "of": total, "mode": mode},
        "anomalies": {c: len(found[c]) for c in CODES},
        "exposed": {c: exposed.get(c, 0) for c in CODES},
        "cost": {
            "retries": sum(retries),
            "waits": sum(waits),
            "retries_per_trial": round(statistics.mean(retries), 3) if retries else None,
            "wall_s_mean": round(statistics.mean(walls), 3) if walls else None,
        },
        "invalid": dict(invalid),
    }
    return result, SharedFacts(found=found, exposed=exposed, valid=valid, trials=tally.trials, invalid=invalid)


def _verdict(code: str, bad: list[tuple[str, list[int], str]], exposed: int, valid: int, n: int, invalid: Counter) -> Verdict:
    if not valid:
        why = "; ".join(f"{c}x {w}" for w, c in invalid.most_common(2)) or "no trial ran"
        return verdict(code, "unknown", f"no valid trial of {n}: {why}")
    if bad:
        return verdict(
            code,
            "violated",
            f"in {len(bad)}/{valid} schedules: {bad[0][2]}",
            trial_ids=[t for t, _, _ in bad],
            ledger_seqs=sorted({s for _, seqs, _ in bad[:1] for s in seqs}),
            note=" | ".join(text for _, _, text in bad[:3])[:2000],
        )
    if not exposed:
        return verdict(code, "unknown", f"vacuous: no valid trial of {valid} exposed it (this workload never sets up its premise)")
    return verdict(code, "holds", f"none in {valid} schedules ({exposed} exposed it)")
