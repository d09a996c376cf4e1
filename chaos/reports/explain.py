"""Explanations a person can read, generated from trial records: timelines and duplicate effects.

``timeline(record)`` turns one trial's history, barrier events, racer results and ledger rows into
lanes of timed events (one lane per racer). All ``t_mono_ns`` come from one machine's monotonic
clock, so they are comparable within a trial run locally; times are shown relative to the trial's
first event. ``explain_duplicates(record)`` asks the trial's kind to say, in plain words and with
ledger sequence numbers, which racer fired which effect a second time and why that is a duplicate
(or, for kinds where a second fire is the point, why the trial violated its contract). Pure
functions of the records: the report of a stored run reads exactly what the run wrote.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from chaos.kinds import get_kind
from chaos.kinds.base import Explains
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
        for key, kind, label in (
            ("t_start_mono_ns", "start", "process started"),
            ("t_ready_mono_ns", "ready", "workload built, ready"),
            ("t_released_mono_ns", "released", "released by the gate"),
            ("t_end_mono_ns", "end", "result written, exiting"),
        ):
            if res.get(key):
                ln.events.append(Event(res[key], kind, label))
    for op in rec.history:
        if op.t_mono_ns is None:
            continue
        if op.type == "invoke":
            val = "" if op.value is None else f" {op.value!r}"
            lane(op.racer_id).events.append(Event(op.t_mono_ns, "invoke", f"call {op.f}{val}"))
        else:
            lane(op.racer_id).events.append(
                Event(op.t_mono_ns, "return", f"{op.f} returned {op.type}: {op.detail or ''}".strip(), failed=op.type != "ok")
            )
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
        lane(row["racer_id"]).events.append(
            Event(
                int(row["t_mono_ns"]),
                "effect",
                f"effect {row['effect_key']} (ledger seq {row['seq']})" + (" DUPLICATE" if dup else ""),
                duplicate=dup,
                tag=f"{row['effect_key']} #{row['seq']}",
            )
        )
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
    return Timeline(
        trial_id=rec.trial_id,
        lanes=[ln for ln in out_lanes if ln.events],
        events=all_events,
        span_ms=(all_events[-1][1].t_ns - t0) / 1e6,
        breaks=[(10 + u * scale, ms) for u, ms in breaks_u],
        width=width,
        hosts=hosts,
    )


# ------------------------------------------------------------------------------ duplicates


def explain_duplicates(rec: TrialRecord) -> list[str]:
    """One sentence per violation of the trial, as its kind explains it (``chaos.kinds.base.Explains``):
    empty when the trial is not valid, violated nothing, or its kind explains nothing. An explainer
    that raises explains nothing: the trial's verdict (check-safe) already carries what went wrong."""
    if not rec.valid:
        return []
    kind = get_kind(rec.kind)
    if not isinstance(kind, Explains):
        return []
    try:
        return kind.explain(rec)
    except Exception:
        return []
