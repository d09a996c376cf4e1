"""``race``: k racers resume one parked interrupt at once -> CO (consume-once), liveness, saturation.

Per trial: a parking racer runs the workload to its ``interrupt()`` (durable checkpoint); then k
racers build the workload against the same thread and stop at the start gate; when all k stand
there, the gate opens for all with one signal; each sleeps its seeded jitter and resumes. The
gated effect's ledger rows for the thread, counted per effect identity (the most any identity of
the gated label fired: ``fires_by_effect``), are the trial's ``fires``. A trial is valid only when
all k racers passed the gate.

The check folds the cell's records in one pass that keeps numbers and trial ids, never the
records (a cell of 1,000 trials at k=64 is analysed in the memory of its results): saturation =
mean(fires over valid trials) / k, the {fires: trials} distribution, max fires, racer errors,
release spread; CO is violated by a trial where the gated effect fired more than once, liveness
by one where it never fired.

The race window (``chaos.kinds.race.window_of``): per racer that fired, the time from its resume's
first read of the thread (the adapter's ``read`` mark, else the start of its resume action) to the
commit of its resumed checkpoint (its first checkpoint write after the read: ``put(...)`` in
LangGraph, the first save of other adapters); a racer reading inside another's window sees the
interrupt still pending. The cell reports the window's median and spread, and the saturation it
predicts for a jitter (``predict_saturation``) beside the measured one: saturation at a jitter
depends on the harness (how fast racers start), the window does not.

What it needs from an adapter: ``run``, ``resume`` with ``form: command``; ``gated_task`` (the
task whose effect the interrupt gates). Scenario fields: ``k`` (racers), ``jitter_ms``,
``distinct_values``; ``resume`` must be ``command:<value>``, or ``none`` on a framework with static
breakpoints (LangGraph): the k racers then approve the breakpoint the parking racer stopped at, each
with ``invoke(None)``. The parking racer stops at an ``interrupt()`` or at a static breakpoint alike.
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TypedDict

from pydantic import Field

from chaos.kinds.aim import AimOptions, aimed_at, answer_map, approach
from chaos.kinds.base import Checker, Kind, Property, approval_action, needs_approval_resume
from chaos.kinds.baseline import asked_again_words, baseline_of, with_baseline
from chaos.kinds.chain import LC, TREE_READ, ChainTally, read_chain, reads_chain
from chaos.kinds.checking import Tally, base_fields, times, verdict
from chaos.kinds.phases import each_trial
from chaos.kinds.sweep import LIVENESS
from chaos.launchers import RacerHandle
from chaos.racer.barrier import AFTERWARDS
from chaos.racer.ledger_rows import declared, effect_key, of_task
from chaos.racer.protocol import ActionOutcome, ActionSpec, InspectResult, RacerResult
from chaos.records import CellResult, RacerOutcome, RaceWindow, TrialRecord, Verdict, error_field
from chaos.running.trial import RunContext, TrialRun
from chaos.scenario.model import Cell, Scenario


class RaceOptions(AimOptions):
    """What a race reads beyond k and the jitter: whether each racer answers with its own value,
    and the pause it aims at (``at_pause``, ``chaos.kinds.aim``)."""

    distinct_values: bool = Field(False, description="racers at one interrupt: each resumes with its own value")


CO = Property("CO", "consume-once", "race-saturation-co-and-liveness-kind-race")


class Race(Kind):
    name = "race"
    about = "k racers resume one parked interrupt at once: does exactly one consume it?"
    properties = ("CO", "LIVENESS")
    checks = (
        Checker(CO, lambda cell, facts: check_co(cell, facts)),
        Checker(LIVENESS, lambda cell, facts: check_liveness(cell, facts)),
        Checker(LC, lambda cell, facts: check_lc(cell, facts)),
    )
    fields = ("racers", "jitter_ms", "distinct_values", "at_pause")
    counts_gated = True
    keeps_windows = True
    section = "saturation"
    title = "Race"
    Options = RaceOptions

    def validate(self, scenario: Scenario) -> None:
        needs_approval_resume(self.name, scenario)
        if scenario.resume == "none":  # every racer sends invoke(None): no value travels
            if RaceOptions.of(scenario).distinct_values:
                raise ValueError(
                    "distinct_values gives each racer its own answer, but resume: none approves with invoke(None), which carries none"
                )
            if scenario.answers is not None:
                raise ValueError("answers: the racers approve with invoke(None) under resume: none, so no answer of the plan is sent")

    def run_cell(self, ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
        return with_baseline(ctx, cell, each_trial(ctx, cell, skip, race_trial))

    def summary(self, cell: Cell, records: Iterable[TrialRecord]) -> tuple[CellResult, RaceFacts]:
        return race_summary(cell, records)

    def checkers(self, cell: Cell, facts: RaceFacts) -> tuple[Checker[RaceFacts], ...]:
        """CO and LIVENESS; LC too where the adapter lists a thread's checkpoints (``chaos.kinds.chain``)."""
        return self.checks if reads_chain(cell.scenario) else self.checks[:2]

    def explain(self, rec: TrialRecord) -> list[str]:
        return explain_race(rec)


KIND = Race()


class ParkObs(TypedDict):
    """``observations["park"]``: the parking racer's status, its last outcome and what it left durable."""

    status: str
    outcome: ActionOutcome | None
    inspect: InspectResult | None


def _observed(o: ActionOutcome, gated: str | None) -> object:
    """What the gated node saw during the call of ``o`` (None if nothing, or no task is gated)."""
    return o.get("observed", {}).get(gated) if gated else None


def _last(r: RacerOutcome) -> ActionOutcome:
    """The racer's last outcome (``{}`` if it performed none)."""
    return r.last_outcome or ActionOutcome()


def race_trial(run: TrialRun) -> TrialRecord:
    s = run.cell.scenario
    k = s.racers.k
    # 1. park: run to the aimed pause (the pauses before it answered by the plan), durably
    park_spec = run.spec("park", actions=[{"op": "run"}, *approach(s)], inspect_after=True)
    (parker,) = run.start([park_spec])
    park = run.collect(parker, "park", "run", hung=bool(run.wait_exit([parker])))
    parked_o = park.last_outcome
    parked = parked_o is not None and parked_o.get("status") == "interrupted"
    park_obs: ParkObs = {"status": park.status, "outcome": parked_o, "inspect": park.inspect_after}
    run.observations["park"] = park_obs
    if not parked:
        why = "the parking racer did not reach an interrupt or a static breakpoint"
        if parked_o and (err := parked_o.get("error")):
            why += f": {err.get('type')}: {err.get('message')}"
        elif park.status != "ok":
            why += f" ({park.status}: {run.history[-1].detail})"
        return run.record(valid=False, invalid_reason=why, fault_fired=False)
    gated = park.gated_task

    # 2. k racers, all stopped at the gate, then released at once
    # the plan's answer at the aimed pause (after every interrupt the approach answered), else resume's command value
    value = aimed_at(s, [o for o in park.outcomes if str((o.get("action") or {}).get("label", "")).startswith("approach")])
    parked_ids = list(parked_o.get("interrupt_ids") or []) if parked_o else []
    chain = reads_chain(s)
    specs = []
    sent: list[object] = []  # what each racer answers with (None: an approval with no value, or the team's driver's own)
    for i in range(k):
        v = f"{value}#r{i}" if RaceOptions.of(s).distinct_values else value
        # resume: none (a static breakpoint's approval, LangGraph): every racer sends invoke(None);
        # resume: app: every racer runs the team's own driver, answering with v
        act: ActionSpec = approval_action(s, v)
        if act.get("form") == "command" and (by_id := answer_map(parked_ids, v)) is not None:
            act["answer_map"] = by_id  # parallel interrupts pending at once: every one answered, by its id
        sent.append(act.get("value", (act.get("plan") or [None])[0]))
        # LC: the first racer reads the thread's checkpoint tree once every other racer has ended (chaos.kinds.chain)
        specs.append(run.spec(f"r{i}", actions=[act], gate=True, afterwards=TREE_READ if chain and i == 0 else None))
    handles = run.start(specs)
    all_ready = run.wait_until(
        lambda: all(h.state() != "running" for h in handles) and all(h.state() == "exited" or h.arrivals() for h in handles)
    )
    ready = [h for h in handles if h.state() == "stopped" and h.arrivals()]
    for h in ready:
        run.wait_arrival(h, "gate")
    hung: list[RacerHandle] = []  # racers killed for not ending within the timeout
    if len(ready) == k:
        run.ctx.launcher.open_gate(handles)
        # the tree's reader stops at its afterwards barrier: it reads once every other racer has ended
        hung = run.wait_exit_or_at(handles, AFTERWARDS)
        for h in handles:
            if h not in hung and h.state() != "exited":
                run.release(h, AFTERWARDS)
        hung += run.wait_exit([h for h in handles if h not in hung])
    for h in handles:
        if len(ready) != k and h.state() != "exited":
            run.kill(h)
    results = []
    for i, h in enumerate(handles):
        out = run.collect(h, "resume", "resume", sent[i], hung=h in hung)
        results.append(out)

    # 3. what fired
    ledger = run.ctx.read_ledger(run.trial_id)
    fires_rows = [r for r in ledger if gated and r["task"] == gated]
    tags = {str(specs[i]["actions"][0].get("value")): str(value) for i in range(k)} if RaceOptions.of(s).distinct_values else {}
    by_effect = fires_by_effect(fires_rows, tags)
    released: list[int] = [t for r in results if (t := r.racer_result.get("t_released_mono_ns"))]
    run.observations.update(
        gated_task=gated,
        fires=max((len(seqs) for seqs in by_effect.values()), default=0),
        fires_by_effect=by_effect,
        fired_by=[r["racer_id"] for r in fires_rows],
        fire_values=[r["value"] for r in fires_rows],
        per_racer=[
            {
                "racer_id": r.racer_id,
                "sent": sent[i],
                "observed": _observed(_last(r), gated) if r.result else None,
                "fired": any(of_task(f["effect_key"], gated) for f in r.fired),
                "status": r.status,
                "outcome": _last(r).get("status"),
                "refused_by": error_field(_last(r).get("error"), "refused_by"),
                # what the adapter counted in the racer (DBOS: recoveries it made, workflow runs it admitted)
                "facts": _last(r).get("facts"),
                **window_of(r.racer_result, gated),
                **_http_of(_last(r)),
            }
            for i, r in enumerate(results)
        ],
        release_spread_ms=(
            ((max(released) - min(released)) / 1e6) if len(released) == k and k > 1 else (0.0 if len(released) == k else None)
        ),
        start_spread_ms=_spread([r.racer_result.get("t_start_mono_ns") for r in results if r.result]),
    )
    if all_ready and len(ready) == k and not hung and chain:  # 4. the thread's checkpoint tree: LC
        run.observations["chain"] = read_chain(run, results[0])
    if not all_ready or len(ready) != k:
        why = f"only {len(ready)}/{k} racers reached the start gate"
        if run.errors:
            why += f": {run.errors[0]}"
        return run.record(valid=False, invalid_reason=why, fault_fired=False)
    if hung:
        return run.record(valid=False, invalid_reason=f"{len(hung)} racer(s) hung after the gate and were killed", fault_fired=True)
    return run.record(valid=True, fault_fired=True)


def _http_of(last: ActionOutcome) -> dict[str, object]:
    """A server client's HTTP outcome (``langgraph_server``: create status, run status), if its last outcome has one."""
    http = last.get("http")
    return {"http": http} if http else {}


# the boundaries that commit a checkpoint: LangGraph's put (not put_writes), every other adapter's save
COMMIT_PREFIXES = ("put(", "save", "checkpoint(", "clear_pending")


def window_of(result: RacerResult | None, gated: str | None) -> dict[str, object]:
    """When one racer read the pending interrupt and when its resumed checkpoint committed.

    ``read_offset_ms``: from the gate opening to its first read after it invoked the resume, its
    jitter left out (how long a racer takes to reach the store); ``window_ms``: from that read to
    its first checkpoint commit after it (``None`` when it fired nothing or committed nothing);
    ``read_source``: ``read`` (the adapter's mark) or ``invoke`` (no mark: the resume's start, so
    the window is an upper bound); ``commit_source``: ``checkpoint``, or ``writes`` when its resume
    wrote no checkpoint (the resumed node stopped at a later interrupt: the first write after its
    gated effect, its task's pending writes, ends the window). Times are the racer's own monotonic
    clock."""
    if not result or not result.get("t_invoke_mono_ns") or not result.get("t_released_mono_ns"):
        return {}
    t_invoke, t_released = int(result["t_invoke_mono_ns"]), int(result["t_released_mono_ns"])
    # what it read and wrote for its ``afterwards`` actions (the LC tree read) is no part of its resume
    t_own_end = int(result.get("t_afterwards_mono_ns") or 0) or None

    def own(t: int) -> bool:
        return t_own_end is None or t < t_own_end

    marks = [int(m["t_mono_ns"]) for m in result.get("marks") or [] if m.get("mark") == "read"]
    reads = [t for t in marks if t >= t_invoke and own(t)]
    t_read, source = (reads[0], "read") if reads else (t_invoke, "invoke")
    trace = [e for e in result.get("trace") or [] if own(int(e["t_mono_ns"]))]
    fired = any(of_task(f["effect_key"], gated) for f in result.get("fired") or [])
    after = [(int(e["t_mono_ns"]), e["barrier"].split("#", 1)[0]) for e in trace if int(e["t_mono_ns"]) >= t_read]
    after = [(t, name) for t, name in after if name.endswith(":after")]
    commits = [t for t, name in after if name.startswith(COMMIT_PREFIXES)]
    out: dict[str, object] = {
        "t_read_mono_ns": t_read,
        "read_source": source,
        "read_offset_ms": (t_read - t_released) / 1e6 - float(result.get("jitter_s") or 0) * 1000,
        "window_ms": None,
    }
    if not (fired and gated):
        return out
    commit_source = "checkpoint"
    if not commits:  # the resumed node stopped at a later interrupt: its task's writes are what commits
        effect = next((t for t, name in after if name == f"effect(task={gated}):after"), None)
        commits = [t for t, name in after if effect is not None and t >= effect and not name.startswith("effect(")]
        commit_source = "writes"
    if commits:
        out.update(t_commit_mono_ns=commits[0], commit_source=commit_source, window_ms=(commits[0] - t_read) / 1e6)
    return out


PREDICT_JITTERS_MS = (0.0, 5.0, 25.0)
PREDICT_TRIALS = 2000


def predict_saturation(offsets: list[float], windows: list[float], k: int, jitter_ms: float, seed: int = 0) -> float | None:
    """The saturation the measured window predicts at ``jitter_ms``, by simulation (seeded, so a
    pure function of its inputs): per simulated trial each of k racers reads at an offset drawn from
    the measured ``offsets`` plus a uniform jitter in [0, jitter_ms], and commits a window drawn from
    ``windows`` later; every racer that reads before the first commit fires."""
    if not offsets or not windows or k < 1:
        return None
    rng = random.Random(seed)
    total = 0
    for _ in range(PREDICT_TRIALS):
        reads = [rng.choice(offsets) + rng.uniform(0.0, jitter_ms) for _ in range(k)]
        first_commit = min(r + rng.choice(windows) for r in reads)
        total += sum(1 for r in reads if r <= first_commit)
    return total / PREDICT_TRIALS / k


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def race_window(offsets: list[float], windows: list[float], sources: Counter, k: int, jitter_ms: float) -> RaceWindow | None:
    if not windows:
        return None
    jitters = sorted({*PREDICT_JITTERS_MS, float(jitter_ms)})
    return RaceWindow(
        n=len(windows),
        median_ms=statistics.median(windows),
        p10_ms=_pct(windows, 0.1),
        p90_ms=_pct(windows, 0.9),
        min_ms=min(windows),
        max_ms=max(windows),
        read_offset_median_ms=statistics.median(offsets) if offsets else None,
        read_offset_p90_ms=_pct(offsets, 0.9) if offsets else None,
        read_source=",".join(sorted(sources)),
        predicted_saturation=predict_saturation(offsets, windows, k, float(jitter_ms)),
        predicted_by_jitter_ms={f"{j:g}": predict_saturation(offsets, windows, k, j) for j in jitters},
    )


def fires_by_effect(rows: list[dict], tags: dict[str, str]) -> dict[str, list[int]]:
    """The gated label's rows of a trial by effect identity (``effect_key``), their ledger seqs in
    order: a tool that writes an audit row and a payment under one label fired two effects, each
    once, not one effect twice. ``tags``: each racer's tagged answer (``distinct_values``: ``v#r1``)
    -> the answer itself, so the racers' copies of one effect count as that effect."""
    out: dict[str, list[int]] = {}
    for row in sorted(rows, key=lambda r: r["seq"]):
        key = row["effect_key"] if declared(row) else effect_key(row["task"], tags.get(row["value"] or "", row["value"]))
        out.setdefault(key, []).append(row["seq"])
    return out


def _gated_fires(effects: dict[str, int], gated: str | None) -> int:
    """How often the gated effect fired in a run: the most any one identity of the gated label
    (``gate``, ``gate:<value>``, ``gate@<key>``) fired among a run's effect counts."""
    return max((n for key, n in effects.items() if of_task(key, gated)), default=0)


def _spread(ts: list) -> float | None:
    ts = [t for t in ts if t]
    return (max(ts) - min(ts)) / 1e6 if len(ts) > 1 else None


# ------------------------------------------------------------------------------------ check


class GuardTally:
    """Per cell: racers a guard refused before any effect (a distribution over valid trials), and
    trials where it refused a racer only after its effect fired."""

    def __init__(self) -> None:
        self.refusals: Counter = Counter()
        self.late: list[str] = []
        self.late_once: list[str] = []  # refused after its effect, yet the effect fired no more than once in all
        self.by: set[str] = set()

    def fired_once(self, trial_id: str) -> None:
        """The trial's gated effect fired no more often than an uninterrupted run's: a late refusal
        there is no duplicate (the other racers' attempts were no-ops: the effect's idempotency key)."""
        if trial_id in self.late:
            self.late.remove(trial_id)
            self.late_once.append(trial_id)

    @staticmethod
    def refused_in(r: TrialRecord) -> int:
        return sum(1 for p in r.observations.get("per_racer") or [] if p.get("outcome") == "refused")

    def add(self, r: TrialRecord) -> None:
        if not r.valid:
            return
        per = r.observations.get("per_racer") or []
        self.refusals[self.refused_in(r)] += 1
        self.by |= {p["refused_by"] for p in per if p.get("refused_by")}
        if any(p.get("refused_by") and p.get("fired") and p.get("outcome") != "refused" for p in per):
            self.late.append(r.trial_id)

    def refused_any(self) -> bool:
        """Some racer of some valid trial was refused (every valid trial is tallied, 0 refused too)."""
        return any(n > 0 for n in self.refusals)

    def refused_words(self) -> str:
        dist = ", ".join(f"{n} refused: {t}" for n, t in sorted(self.refusals.items()))
        return f"({dist} trials; by {', '.join(sorted(self.by)) or 'the framework'})"

    def summary(self) -> dict[str, object]:
        return {
            "refused": {str(n): t for n, t in sorted(self.refusals.items())},
            "refused_after_effect": self.late + self.late_once,
        }


@dataclass
class RaceFacts:
    """What the race's checkers judge, folded from the records in one pass (no record kept)."""

    k: int
    fires: list[int]  # per valid trial
    own: int  # fires of the gated effect in the uninterrupted run
    base_trial: str
    # the pause the uninterrupted run stopped at unanswered (resume: app: without a plan): it cannot
    # say how often one answer fires the gated effect, so only a duplicate by two racers is known
    base_stopped: str | None
    dup_ids: list[str]
    open_dup_ids: list[str]  # base_stopped: trials whose extra fire was one racer's (the workflow's own, or not)
    dup_seqs: list[int]
    valid_ids: list[str]
    none_fired: list[str]
    reasked: list[str]  # valid trials where none fired and every racer's answer left the run at a pause again
    invalid_reasons: Counter
    guard: GuardTally
    chain: ChainTally
    # the pause the uninterrupted run, answered after a restore, was asked again at (chaos.kinds.baseline)
    asked_again: str | None = None


def race_summary(cell: Cell, records: Iterable[TrialRecord]) -> tuple[CellResult, RaceFacts]:
    """One pass over the cell's records, keeping numbers and trial ids, never the records: the
    cell's numbers, and what its checkers judge."""
    k = cell.scenario.racers.k
    tally = Tally()
    fires: list[int] = []  # per valid trial
    fires_per_trial: list[int | None] = []
    spreads: list[float] = []
    invalid_reasons: Counter = Counter()
    dup_ids: list[str] = []
    dup_seqs: list[int] = []
    valid_ids: list[str] = []
    none_fired: list[str] = []
    reasked: list[str] = []
    racer_errors = 0
    offsets: list[float] = []  # every racer's read offset (valid trials)
    windows: list[float] = []  # every firing racer's window (valid trials)
    sources: Counter = Counter()
    base_effects: dict[str, int] | None = None  # the crash-free run's effects (chaos.kinds.baseline)
    base_trial = "?"
    asked_again: str | None = None
    base_stopped: str | None = None
    open_dup_ids: list[str] = []
    own = 1  # fires of the gated effect in the uninterrupted run: more than one needs no race
    chain = ChainTally()  # LC (chaos.kinds.chain)
    guard = GuardTally()  # target.guard: refusals, refusals after an effect, wall time per trial
    for r in records:
        tally.add(r)
        chain.add(r)
        guard.add(r)
        if base_effects is None and r.valid and r.observations.get("baseline_effects") is not None:
            base_effects, base_trial = r.observations["baseline_effects"], r.observations.get("baseline_trial") or "?"
            asked_again = r.observations.get("baseline_asked_again")
            base_stopped = r.observations.get("baseline_stopped_at")
            own = max(1, _gated_fires(base_effects, r.observations.get("gated_task")))
        racer_errors += sum(1 for op in r.history if op.type in ("fail", "info")) - guard.refused_in(r)
        if not r.valid:
            fires_per_trial.append(None)
            invalid_reasons[r.invalid_reason or "?"] += 1
            continue
        n = int(r.observations.get("fires", 0))
        fires.append(n)
        fires_per_trial.append(n)
        valid_ids.append(r.trial_id)
        spread = r.observations.get("release_spread_ms")
        if spread is not None:
            spreads.append(spread)
        for p in r.observations.get("per_racer") or []:
            if p.get("read_offset_ms") is not None:
                offsets.append(float(p["read_offset_ms"]))
                sources[p.get("read_source") or "?"] += 1
            if p.get("window_ms") is not None:
                windows.append(float(p["window_ms"]))
        if n > own and base_stopped and not _fired_by_two_racers(r):
            open_dup_ids.append(r.trial_id)  # one racer's answer fired it more than once: its own, or not
        elif n > own:
            dup_ids.append(r.trial_id)
            dup_seqs += _duplicate_seqs(r, own)
        else:
            guard.fired_once(r.trial_id)  # a refusal after the effect made no duplicate here
            if n == 0 and _reasked(r):
                reasked.append(r.trial_id)
            elif n == 0:
                none_fired.append(r.trial_id)
    dist = Counter(fires)
    result = CellResult(
        **base_fields(cell, tally),
        saturation=(statistics.mean(fires) / k) if fires else None,
        fires={str(f): n for f, n in sorted(dist.items())},
        fires_per_trial=fires_per_trial,
        max_fires=max(fires) if fires else None,
        release_spread_ms=({"median": statistics.median(spreads), "max": max(spreads)} if spreads else None),
        window=race_window(offsets, windows, sources, k, cell.scenario.jitter_ms),
    )
    result.racer_errors = racer_errors
    if cell.scenario.target.option("guard") is not None or guard.refusals:
        result.summary.update(guard.summary())
    if base_effects is not None:
        result.baseline = baseline_of(base_trial, base_effects)
        result.baseline.asked_again = asked_again
        result.baseline.stopped_at = base_stopped
    facts = RaceFacts(
        k=k,
        fires=fires,
        own=own,
        base_trial=base_trial,
        base_stopped=base_stopped,
        dup_ids=dup_ids,
        open_dup_ids=open_dup_ids,
        dup_seqs=dup_seqs,
        valid_ids=valid_ids,
        none_fired=none_fired,
        reasked=reasked,
        invalid_reasons=invalid_reasons,
        guard=guard,
        chain=chain,
        asked_again=asked_again,
    )
    return result, facts


def _duplicate_seqs(r: TrialRecord, own: int) -> list[int]:
    """The ledger rows of the gated effects a trial fired more often than the uninterrupted run
    (a record written before ``fires_by_effect``: every row of the gated label)."""
    by_effect: dict[str, list[int]] | None = r.observations.get("fires_by_effect")
    if by_effect is None:
        return [row["seq"] for row in r.ledger if row["task"] == r.observations.get("gated_task")]
    return [seq for seqs in by_effect.values() if len(seqs) > own for seq in seqs]


def _fired_by_two_racers(r: TrialRecord) -> bool:
    """Did two racers' answers each fire one identity of the gated effect? A duplicate whatever one
    answer fires by itself (an uninterrupted run answers once); one racer's own repeat is not."""
    by_effect: dict[str, list[int]] = r.observations.get("fires_by_effect") or {}
    racer_of = {row["seq"]: row.get("racer_id") for row in r.ledger}
    return any(len({racer_of.get(seq) for seq in seqs} - {"park", None}) > 1 for seqs in by_effect.values())


def _reasked(r: TrialRecord) -> bool:
    """Did every racer's answer leave the run waiting at a pause again (a validation loop that
    re-asks, a later review), none failing? The run is live: it waits for a human."""
    per = r.observations.get("per_racer") or []
    return bool(per) and all(p.get("outcome") == "interrupted" for p in per)


def _no_valid_trial(f: RaceFacts) -> str:
    return "; ".join(f"{n}x {w}" for w, n in f.invalid_reasons.most_common(3)) or "no trial ran"


def check_co(cell: Cell, f: RaceFacts) -> Verdict:
    """CO: at most one racer fired the gated effect in each valid trial (beyond what an
    uninterrupted run fires itself); a guard's refusal after the effect is too late."""
    k, fires, own, dup_ids, dup_seqs, base_trial, guard = f.k, f.fires, f.own, f.dup_ids, f.dup_seqs, f.base_trial, f.guard
    if not fires:
        return verdict("CO", "unknown", f"no valid trial (all {k} racers past the gate): {_no_valid_trial(f)}")
    if own > 1:
        race_part = (
            f"beyond that, the race fired it more often in {len(dup_ids)}/{len(fires)} valid trials (max {max(fires)} of k={k})"
            if dup_ids
            else "the race added no fire beyond that"
        )
        return verdict(
            "CO",
            "violated",
            f"the gated effect fired {times(own)} in an uninterrupted run ({base_trial}): a duplicate that needs no race; " + race_part,
            trial_ids=[base_trial, *dup_ids],
            ledger_seqs=dup_seqs,
        )
    if guard.late:  # a guard's refusal after the racer's effect fired, in a trial that fired it twice: too late
        return verdict(
            "CO",
            "violated",
            f"a racer's gated effect fired and the guard refused it only after ({', '.join(sorted(guard.by))}), "
            f"in {len(guard.late)}/{len(fires)} valid trials: a duplicate its caller was told had failed",
            trial_ids=guard.late,
            ledger_seqs=dup_seqs,
        )
    stopped = (
        f"the uninterrupted run ({base_trial}) stopped at its pause unanswered ({f.base_stopped}; resume: app: without "
        "answers:), so how often one answer fires the gated effect is not known"
        if f.base_stopped
        else ""
    )
    if dup_ids:
        return verdict(
            "CO",
            "violated",
            f"the gated effect fired more than once in {len(dup_ids)}/{len(fires)} valid trials (max {max(fires)} of k={k})"
            + (", each time by two racers' answers" if f.base_stopped else ""),
            trial_ids=dup_ids,
            ledger_seqs=dup_seqs,
        )
    if f.open_dup_ids:
        return verdict(
            "CO",
            "unknown",
            f"{stopped}: in {len(f.open_dup_ids)}/{len(fires)} valid trials one racer's answer fired it more than once, "
            "which may be what one answer does; give the plan (answers:) so the uninterrupted run answers its pause",
            trial_ids=f.open_dup_ids,
        )
    if all(n == 0 for n in fires):
        return verdict("CO", "unknown", "vacuous: no racer fired the gated effect in any valid trial")
    refused = f"; the others refused before any effect {guard.refused_words()}" if guard.refused_any() else ""
    late = (
        f"; in {len(guard.late_once)} trials a racer's effect fired and {', '.join(sorted(guard.by))} refused its call only "
        "after (its caller was told it failed), yet the effect fired once in all: the others' attempts added none"
        if guard.late_once
        else ""
    )
    alone = f"; judged by the race alone ({stopped})" if stopped else ""
    return verdict("CO", "holds", f"at most one fire in each of {len(fires)} valid trials{refused}{late}{alone}", trial_ids=f.valid_ids)


def check_liveness(cell: Cell, f: RaceFacts) -> Verdict:
    """LIVENESS: some racer fired the gated effect in every valid trial."""
    fires, none_fired, reasked = f.fires, f.none_fired, f.reasked
    if not fires:
        return verdict("LIVENESS", "unknown", f"no valid trial: {_no_valid_trial(f)}")
    if f.asked_again is not None:  # the uninterrupted run, answered after a restore, was asked again: no racer gets further
        racers = f"the gated effect fired in {len(fires) - len(none_fired) - len(reasked)} of {len(fires)} valid trials"
        again = f", every racer's answer asked for again in {len(reasked)}" if reasked else ""
        return verdict(
            "LIVENESS",
            "violated",
            f"{asked_again_words(f.asked_again, f.base_trial)}: a stall that needs no race; the race: {racers}{again}",
            trial_ids=[f.base_trial, *reasked, *none_fired],
        )
    if none_fired:
        return verdict(
            "LIVENESS",
            "violated",
            f"no racer fired the gated effect in {len(none_fired)}/{len(fires)} valid trials",
            trial_ids=none_fired,
        )
    asked = (
        f"; in {len(reasked)} the answer was asked for again (every racer's answer left the run waiting at a pause: "
        "a validation loop that re-asks, or a later review), which is waiting, not a stall"
        if reasked
        else ""
    )
    if len(reasked) == len(fires):
        return verdict(
            "LIVENESS",
            "unknown",
            f"in every one of {len(fires)} valid trials the racers' answer was asked for again and the gated effect never "
            "fired: the race aimed at a pause whose planned answer does not fire it; aim at the one that does (at_pause: n)",
            trial_ids=reasked,
        )
    return verdict("LIVENESS", "holds", f"the gated effect fired in {len(fires) - len(reasked)} of {len(fires)} valid trials{asked}")


def check_lc(cell: Cell, f: RaceFacts) -> Verdict:
    """LC over the cell's trials (``chaos.kinds.chain``), where the adapter lists a thread's checkpoints."""
    return f.chain.verdict()


# ---------------------------------------------------------------------------------- explain


def _fmt_val(v: object) -> str:
    return "None" if v is None else str(v)


def explain_race(rec: TrialRecord) -> list[str]:
    obs = rec.observations
    gated = obs.get("gated_task")
    rows = sorted((r for r in rec.ledger if gated and r["task"] == gated), key=lambda r: r["seq"])
    by_effect: dict[str, list[int]] | None = obs.get("fires_by_effect")
    if by_effect:  # the most-fired identity of the gated label: two different writes are no duplicate
        most = set(sorted(by_effect.values(), key=len)[-1])
        rows = [r for r in rows if r["seq"] in most]
    if len(rows) < 2:
        return []
    own = _gated_fires(obs.get("baseline_effects") or {}, gated)
    if own > 1 and len(rows) <= own:
        seqs = ", ".join(str(r["seq"]) for r in rows)
        return [
            f"the gated effect {gated} fired {times(len(rows))} (ledger seqs {seqs}), as it does in an uninterrupted run "
            f"({obs.get('baseline_trial') or 'the baseline'}): a duplicate that needs no race"
        ]
    park = rec.observed("park", ParkObs).get("inspect") or {}
    step = park.get("head_step")
    where = f"checkpoint step {step}" if step is not None else "the parked checkpoint"
    sent = {p.get("racer_id"): p.get("sent") for p in obs.get("per_racer") or []}
    first = rows[0]
    out = []
    for row in rows[1:]:
        rid = row["racer_id"]
        out.append(
            f"racer {rid} resumed the interrupt parked at {where} with value {_fmt_val(sent.get(rid, row['value']))} "
            f"and fired {row['effect_key']} (ledger seq {row['seq']}); racer {first['racer_id']} had already fired it "
            f"(seq {first['seq']}): the interrupt was consumed {times(len(rows))}"
        )
    return out
