"""Explanations a person can read, generated from trial records: timelines and duplicate effects.

``timeline(record)`` turns one trial's history, barrier events, racer results and ledger rows into
lanes of timed events (one lane per racer). All ``t_mono_ns`` come from one machine's monotonic
clock, so they are comparable within a trial run locally; times are shown relative to the trial's
first event. ``explain_duplicates(record)`` says, in plain words and with ledger sequence numbers,
which racer fired which effect a second time and why that is a duplicate. Pure functions of the
records: the report of a stored run reads exactly what the run wrote.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from chaos.records import TrialRecord


@dataclass
class Event:
    t_ns: int
    kind: str  # start | ready | released | invoke | return | arrived | killed | effect | end
    label: str
    duplicate: bool = False
    failed: bool = False
    tag: str = ""  # short label drawn next to the mark (effects: key and ledger seq)
    t_ms: float = 0.0
    x: float = 0.0


@dataclass
class Lane:
    racer_id: str
    role: str
    status: str
    events: list[Event] = field(default_factory=list)
    x0: float = 0.0
    x1: float = 0.0


@dataclass
class Timeline:
    trial_id: str
    lanes: list[Lane]
    events: list[tuple[str, Event]]  # (racer_id, event) in time order
    span_ms: float
    breaks: list[tuple[float, float]]  # (x, skipped ms): a compressed gap on the axis
    width: float
    hosts: list[str] = field(default_factory=list)  # more than one: times compare only within a host


def _dup_seqs(rec: TrialRecord) -> set[int]:
    """Ledger seqs of every fire of an effect after its first one in the trial."""
    seen: set[str] = set()
    out: set[int] = set()
    for row in sorted(rec.ledger, key=lambda r: r["seq"]):
        if row["task"] in seen:
            out.add(row["seq"])
        seen.add(row["task"])
    return out


def timeline(rec: TrialRecord, width: float = 860.0) -> Timeline | None:
    """The trial's events per racer on a gap-compressed time axis; None when nothing was timed."""
    lanes: dict[str, Lane] = {}

    def lane(rid: str) -> Lane:
        if rid not in lanes:
            lanes[rid] = Lane(racer_id=rid, role="", status="")
        return lanes[rid]

    for o in rec.racers:
        ln = lane(o.racer_id)
        ln.role, ln.status = o.role, o.status
        res = o.result or {}
        for key, kind, label in (("t_start_mono_ns", "start", "process started"),
                                 ("t_ready_mono_ns", "ready", "workload built, ready"),
                                 ("t_released_mono_ns", "released", "released by the gate"),
                                 ("t_end_mono_ns", "end", "result written, exiting")):
            if res.get(key):
                ln.events.append(Event(res[key], kind, label))
    for op in rec.history:
        if op.t_mono_ns is None:
            continue
        if op.type == "invoke":
            val = "" if op.value is None else f" {op.value!r}"
            lane(op.racer_id).events.append(Event(op.t_mono_ns, "invoke", f"call {op.f}{val}"))
        else:
            lane(op.racer_id).events.append(Event(op.t_mono_ns, "return", f"{op.f} returned {op.type}: {op.detail or ''}".strip(),
                                                  failed=op.type != "ok"))
    for b in rec.barriers:
        if b.action == "arrived":
            lane(b.racer_id).events.append(Event(b.t_mono_ns, "arrived", f"stopped at barrier {b.barrier}"))
        elif b.action == "killed":
            lane(b.racer_id).events.append(Event(b.t_mono_ns, "killed", f"SIGKILL at {b.barrier}", failed=True))
        else:
            lane(b.racer_id).events.append(Event(b.t_mono_ns, "released", f"released from {b.barrier}"))
    dups = _dup_seqs(rec)
    for row in rec.ledger:
        dup = row["seq"] in dups
        lane(row["racer_id"]).events.append(Event(
            int(row["t_mono_ns"]), "effect",
            f"effect {row['effect_key']} (ledger seq {row['seq']})" + (" DUPLICATE" if dup else ""), duplicate=dup,
            tag=f"{row['effect_key']} #{row['seq']}"))
    all_events = sorted(((rid, e) for rid, ln in lanes.items() for e in ln.events), key=lambda p: p[1].t_ns)
    if not all_events:
        return None
    t0 = all_events[0][1].t_ns
    # gap-compressed axis: a gap of d ms takes log1p(10 d) units, so ordering is kept, microsecond
    # races stay visible next to multi-second waits, and long waits are marked as breaks
    units, prev, breaks_u = 0.0, t0, []
    pos: dict[int, float] = {}
    for _, e in all_events:
        d_ms = (e.t_ns - prev) / 1e6
        if d_ms > 250:
            breaks_u.append((units + math.log1p(10 * d_ms) / 2, d_ms))
        units += math.log1p(10 * max(d_ms, 0.0))
        pos[e.t_ns] = units
        prev = e.t_ns
    scale = (width - 20) / units if units > 0 else 0.0
    for _, e in all_events:
        e.t_ms = (e.t_ns - t0) / 1e6
        e.x = 10 + pos[e.t_ns] * scale
    order = {rid: i for i, rid in enumerate(dict.fromkeys(rid for rid, _ in all_events))}
    out_lanes = sorted(lanes.values(), key=lambda ln: order.get(ln.racer_id, 999))
    for ln in out_lanes:
        ln.events.sort(key=lambda e: e.t_ns)
        if ln.events:
            ln.x0, ln.x1 = ln.events[0].x, ln.events[-1].x
    hosts = sorted({o.host for o in rec.racers if o.host} | {str(r["host"]) for r in rec.ledger if r.get("host")})
    return Timeline(trial_id=rec.trial_id, lanes=[ln for ln in out_lanes if ln.events], events=all_events,
                    span_ms=(all_events[-1][1].t_ns - t0) / 1e6,
                    breaks=[(10 + u * scale, ms) for u, ms in breaks_u], width=width, hosts=hosts)


# ------------------------------------------------------------------------------ duplicates


def _times(n: int) -> str:
    return {2: "twice", 3: "three times"}.get(n, f"{n} times")


def _fmt_val(v) -> str:
    return "None" if v is None else str(v)


def explain_race(rec: TrialRecord) -> list[str]:
    obs = rec.observations
    gated = obs.get("gated_task")
    rows = sorted((r for r in rec.ledger if gated and r["task"] == gated), key=lambda r: r["seq"])
    if len(rows) < 2:
        return []
    park = (obs.get("park") or {}).get("inspect") or {}
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
            f"(seq {first['seq']}): the interrupt was consumed {_times(len(rows))}"
        )
    return out


def explain_sweep(rec: TrialRecord) -> list[str]:
    counts = Counter(r["task"] for r in rec.ledger)
    at_kill = rec.observations.get("at_kill") or {}
    outcome = rec.observations.get("resume_outcome") or {}
    kill = rec.observations.get("kill") or {}
    point = kill.get("point") or rec.point or "?"
    durable = set(at_kill.get("completed_tasks") or [])
    ck = at_kill.get("checkpoints")
    form = ((outcome.get("action") or {}).get("form")) or "?"
    out = []
    for task, n in counts.items():
        if n < 2:
            continue
        rows = sorted((r for r in rec.ledger if r["task"] == task), key=lambda r: r["seq"])
        first, again = rows[0], rows[1:]
        by = ", ".join(f"racer {r['racer_id']} (seq {r['seq']})" for r in again)
        if task in durable:
            why = (f"the durable state at the kill already recorded {task} complete, yet the resume ran it again: "
                   "the checkpoint was not honoured")
        else:
            why = (f"{task} had fired but the durable state at the kill ({ck if ck is not None else '?'} checkpoint(s), "
                   f"completed: {', '.join(sorted(durable)) or 'none'}) did not record it, so the resume ran it again: "
                   "the effect happened before its checkpoint was written")
        out.append(
            f"racer {first['racer_id']} fired {first['effect_key']} (ledger seq {first['seq']}) and was SIGKILLed at "
            f"{point}; resuming with '{form}', {by} fired {task} again: effect {task} happened {_times(n)}; {why}"
        )
    return out


def explain_duplicates(rec: TrialRecord) -> list[str]:
    """One sentence per duplicated effect of the trial (empty when every effect fired at most once)."""
    if not rec.valid:
        return []
    if rec.kind == "race":
        return explain_race(rec)
    if rec.kind in ("fork", "stray_resume"):
        return explain_contract(rec)
    if rec.kind == "invalid_state":
        return []  # no effect is duplicated by design; CV's reason says what happened
    return explain_sweep(rec)


def explain_contract(rec: TrialRecord) -> list[str]:
    """fork / stray_resume: a second fire is the point of a fork, so explain only the violating ones."""
    if rec.kind == "fork":
        from chaos.verdicts.fork import trial_fd as judge
    else:
        from chaos.verdicts.stray import trial_co as judge
    status, why = judge(rec)
    if status != "violated":
        return []
    seqs = ", ".join(f"{r['effect_key']} (seq {r['seq']}, racer {r['racer_id']})" for r in sorted(rec.ledger, key=lambda r: r["seq"]))
    return [f"{why}; the ledger of this trial: {seqs}"]
