"""Explanations a person can read, generated from trial records: timelines and duplicate effects.

``timeline(record)`` turns one trial's history, barrier events, racer results and ledger rows into
lanes of timed events (one lane per racer). All ``t_mono_ns`` come from one machine's monotonic
clock, so they are comparable within a trial run locally; times are shown relative to the trial's
first event. ``explain_duplicates(record)`` asks the trial's kind to say, in plain words and with
ledger sequence numbers, which racer fired which effect a second time and why that is a duplicate
(or, for kinds where a second fire is the point, why the trial violated its contract). Pure
functions of the records: the report of a stored run reads exactly what the run wrote.

``DuplicateGroups`` gathers those sentences by cause and effect, so an owner reads each finding
once with its count (a workflow that pays twice on every run is one line over 27 kill points, not
27 sentences): two sentences are one group when they say the same with their ledger seqs, racer
names, kill point and trial left out (``gist``). Each group keeps one example whole and every
member's trial and kill point, for the detail.
"""

from __future__ import annotations

import math
import re
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
        res = o.racer_result
        for t, kind, label in (
            (res.get("t_start_mono_ns"), "start", "process started"),
            (res.get("t_ready_mono_ns"), "ready", "workload built, ready"),
            (res.get("t_released_mono_ns"), "released", "released by the gate"),
            (res.get("t_end_mono_ns"), "end", "result written, exiting"),
        ):
            if t:
                ln.events.append(Event(t, kind, label))
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


# ------------------------------------------------------------------ duplicates, by cause and effect

_SEQS = re.compile(r" \((?:ledger )?seqs? [\d, ]+(?:, racer [\w.-]+)?\)")
_RACER = re.compile(r"\bracer [\w.-]+")
_RACERS = re.compile(r"a racer(?:, a racer)+")
_DURABLE = re.compile(r" \([\d?]+ checkpoint\(s\), completed: .*?\) did not record it")
MAX_MEMBERS = 500  # per group, the members whose trial and point the report lists (all are counted)


def gist(rec: TrialRecord, text: str) -> str:
    """``text`` with what varies between trials of one finding left out: its kill point, trial and
    thread ids, ledger seqs, racer names, the durable checkpoints counted at the kill."""
    kill = rec.observations.get("kill") or {}
    for literal in {kill.get("point"), rec.point, rec.trial_id, rec.thread_id} - {None, ""}:
        text = text.replace(f" (the workflow's own, not the kill's at {literal})", " (the workflow's own)")
        text = text.replace(f" at {literal}", "").replace(str(literal), "<trial>")
    text = _DURABLE.sub(" did not record it", _SEQS.sub("", text))
    return _RACERS.sub("racers", _RACER.sub("a racer", text))


@dataclass
class DuplicateGroup:
    """One finding of one cell: its gist, an example trial told whole, and every trial showing it."""

    cell_id: str
    gist: str
    example_trial: str
    example: str
    members: list[tuple[str, str, str]] = field(default_factory=list)  # (trial id, kill point or "", its own sentence)
    n_members: int = 0
    points: set[str] = field(default_factory=set)
    trials: set[str] = field(default_factory=set)

    @property
    def count(self) -> str:
        """How often: at N kill points (a sweep), else in N trials (N times, when more than once per trial)."""
        if self.points:
            n = len(self.points)
            named = f": {', '.join(sorted(self.points))}" if n <= 8 else ""
            return f"at {n} kill point{'s' if n != 1 else ''}{named}"
        n = len(self.trials)
        if all(t.endswith("-dry") for t in self.trials):
            return f"in the uninterrupted run ({', '.join(sorted(self.trials))})"
        times = f", {self.n_members} times" if self.n_members > n else ""
        return f"in {n} trial{'s' if n != 1 else ''}{times}"


class DuplicateGroups:
    """The explanations of a run, grouped in the order their first member came (cell by cell)."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str], DuplicateGroup] = {}
        self.n_explanations = 0

    def add(self, rec: TrialRecord, texts: list[str]) -> None:
        for text in texts:
            self.n_explanations += 1
            key = (rec.cell_id, gist(rec, text))
            g = self.groups.get(key)
            if g is None:
                g = self.groups[key] = DuplicateGroup(rec.cell_id, key[1], rec.trial_id, text)
            g.n_members += 1
            point = "" if rec.trial_id.endswith("-dry") else (rec.point or "")
            if point:
                g.points.add(point)
            g.trials.add(rec.trial_id)
            if len(g.members) < MAX_MEMBERS:
                g.members.append((rec.trial_id, point, text))

    def ordered(self) -> list[DuplicateGroup]:
        """Cell by cell (first seen): what the uninterrupted run shows first (a duplicate that needs
        no crash), then the most frequent finding."""
        cells: dict[str, int] = {}
        for cell, _ in self.groups:
            cells.setdefault(cell, len(cells))
        return sorted(
            self.groups.values(),
            key=lambda g: (cells[g.cell_id], not any(t.endswith("-dry") for t in g.trials), -(len(g.points) or len(g.trials))),
        )
