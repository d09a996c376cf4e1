"""Histories of agents sharing state, and the pure classifier of their anomalies (Elle-style).

Why: the ``shared_state`` kind needs to say, from a trial's history alone, which isolation-like
anomalies it contains and which operations prove each, in words a person can check ("agent 2 read
trip v0 at #3; agent 1 wrote trip v1@a1 at #5; agent 2 booked with v0 at #6"). Kept apart from the
kind so it can be tested on hand-written histories, with no racer and no framework.

What it promises: ``history_of(ledger_rows)`` turns the trial's ``ss.*`` ledger rows into ``Op``
records in commit order (the ledger's ``seq``); ``classify(ops)`` returns every ``Anomaly`` in it,
and ``exposure(ops)`` which anomalies the history could have shown at all (a history in which only
one agent writes cannot lose an update: a clean verdict on it would be vacuous). The rules:

* **LU** (lost update): a write computed from version v of a key, committed when the key was no
  longer at v; the writes by other agents in between are overwritten, silently.
* **SG** (stale generation, A1): an external effect computed from version v of a key, fired when
  the key was no longer at v (and not a phantom tool call, below).
* **PT** (phantom tool, A2): a tool call planned from a read of the registry, fired when the
  registry no longer lists that tool.
* **CC** (causal cascade, A3): an effect (or another agent's write) computed from a version that a
  later write compensates (rolls back).
* **TR** (tool effect reordering, A6): the effects of one step's tool calls committed in an order
  other than the plan's (the model's tool-call list).

A version is the writer's label (``v1@a0``: agent 0's first write); ``v0`` is the initial value.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

CODES = ("LU", "SG", "PT", "CC", "TR")


@dataclass(frozen=True)
class Op:
    """One operation on the shared state, as the agent recorded it (JSON in the ledger row)."""

    seq: int
    op: str  # read | write | effect | retry | wait
    agent: int
    key: str | None = None
    version: str | None = None  # read: the version seen; write: the version written
    from_: str | None = None  # write: the version it was computed from
    value: object = None
    name: str | None = None  # effect: what was done (book_flight, tool:refund)
    based_on: dict[str, str] = field(default_factory=dict)  # effect: the versions it was computed from
    tool: str | None = None
    compensates: str | None = None  # write: the version it rolls back
    detail: object = None
    plan: int | None = None  # effect of a tool call: its index in the model's tool-call list
    step: int | None = None  # effect of a tool call: the agent's step that planned it

    def said(self) -> str:
        """The operation in words, with its place in the commit order."""
        who = f"agent {self.agent}"
        if self.op == "read":
            return f"{who} read {self.key} {self.version}{_show(self.value)} at #{self.seq}"
        if self.op == "write":
            verb = f"rolled {self.compensates} back, writing" if self.compensates else "wrote"
            return f"{who} {verb} {self.key} {self.version}{_show(self.value)} (computed from {self.from_}) at #{self.seq}"
        if self.op == "effect":
            basis = ", ".join(f"{k} {v}" for k, v in sorted(self.based_on.items()))
            return f"{who} fired {self.name}{' (' + str(self.detail) + ')' if self.detail else ''} with {basis} at #{self.seq}"
        return f"{who} {self.op} at #{self.seq}"


@dataclass(frozen=True)
class Anomaly:
    code: str
    agent: int
    seqs: tuple[int, ...]
    text: str

    def to_json(self) -> dict:
        return asdict(self)


def _show(value: object) -> str:
    if not isinstance(value, dict) or not value:
        return ""
    return " (" + ", ".join(f"{k}={v}" for k, v in value.items()) + ")"


def history_of(ledger: Iterable[dict]) -> list[Op]:
    """The ``ss.*`` rows of a trial's ledger as operations, in commit order."""
    ops = []
    for row in sorted(ledger, key=lambda r: r["seq"]):
        if not str(row.get("task", "")).startswith("ss."):
            continue
        d = json.loads(row["value"])
        ops.append(
            Op(
                seq=int(row["seq"]),
                op=d["op"],
                agent=int(d["agent"]),
                key=d.get("key"),
                version=d.get("version"),
                from_=d.get("from"),
                value=d.get("value"),
                name=d.get("name"),
                based_on=dict(d.get("based_on") or {}),
                tool=d.get("tool"),
                compensates=d.get("compensates"),
                detail=d.get("detail") or d.get("reason"),
                plan=d.get("plan"),
                step=d.get("step"),
            )
        )
    return ops


def classify(ops: list[Op]) -> list[Anomaly]:
    """Every anomaly in the history, each with the operations that prove it."""
    found: list[Anomaly] = []
    last_write: dict[str, Op] = {}  # key -> the write the key is at
    reads: dict[tuple[int, str, str], Op] = {}  # (agent, key, version) -> the read
    dependants: list[tuple[Op, str, str]] = []  # (effect or write, key, version it was computed from)

    def current(key: str) -> str:
        w = last_write.get(key)
        return w.version if w is not None and w.version else "v0"

    def writes_since(key: str, version: str, before: int) -> list[Op]:
        """The writes of ``key`` after the one that produced ``version`` and before ``before``."""
        start = 0 if version == "v0" else next((o.seq for o in ops if o.op == "write" and o.key == key and o.version == version), 0)
        return [o for o in ops if o.op == "write" and o.key == key and start < o.seq < before]

    for o in ops:
        if o.op == "read" and o.key and o.version:
            reads[(o.agent, o.key, o.version)] = o
        elif o.op == "write" and o.key:
            basis = o.from_ or "v0"
            if basis != current(o.key):
                lost = [w for w in writes_since(o.key, basis, o.seq) if w.agent != o.agent]
                if lost:
                    read = reads.get((o.agent, o.key, basis))
                    proof = [read] if read else []
                    proof += [*lost, o]
                    found.append(
                        Anomaly(
                            "LU",
                            o.agent,
                            tuple(p.seq for p in proof),
                            "; ".join(p.said() for p in proof)
                            + f": the write{'s' if len(lost) > 1 else ''} of agent {', '.join(str(w.agent) for w in lost)} "
                            f"{'are' if len(lost) > 1 else 'is'} lost",
                        )
                    )
            if o.compensates:
                for dep, key, version in dependants:
                    if key == o.key and version == o.compensates and dep.agent != o.agent:
                        made = next((w for w in ops if w.op == "write" and w.version == version and w.key == key), None)
                        read = reads.get((dep.agent, key, version))
                        proof = [p for p in (made, read, dep, o) if p is not None]
                        found.append(
                            Anomaly(
                                "CC",
                                dep.agent,
                                tuple(p.seq for p in proof),
                                "; ".join(p.said() for p in proof) + f": agent {dep.agent} built on a write that was rolled back",
                            )
                        )
            dependants.append((o, o.key, basis))
            last_write[o.key] = o
        elif o.op == "effect":
            for key, version in sorted(o.based_on.items()):
                dependants.append((o, key, version))
                now = current(key)
                if version == now:
                    continue
                read = reads.get((o.agent, key, version))
                moved = writes_since(key, version, o.seq)
                proof = [p for p in (read, *moved, o) if p is not None]
                seqs = tuple(p.seq for p in proof)
                written = last_write[key].value if key in last_write else None  # the state value the key is at
                registry = written.get("tools") if isinstance(written, dict) else None
                if o.tool and isinstance(registry, list) and o.tool not in registry:
                    text = "; ".join(p.said() for p in proof) + f": {o.tool} was no longer in the {key}"
                    found.append(Anomaly("PT", o.agent, seqs, text))
                else:
                    text = "; ".join(p.said() for p in proof) + f": {key} was at {now} when agent {o.agent} acted on {version}"
                    found.append(Anomaly("SG", o.agent, seqs, text))
    for calls in _tool_steps(ops).values():
        if [c.plan for c in calls] != sorted(c.plan for c in calls if c.plan is not None):
            planned = ", ".join(c.tool or "?" for c in sorted(calls, key=lambda c: c.plan or 0))
            landed = "; ".join(f"{c.tool} (call {c.plan}) at #{c.seq}" for c in calls)
            text = f"agent {calls[0].agent}'s model planned {planned}, in that order; the effects landed {landed}"
            found.append(Anomaly("TR", calls[0].agent, tuple(c.seq for c in calls), text))
    return found


def _tool_steps(ops: list[Op]) -> dict[tuple[int, int], list[Op]]:
    """The tool-call effects of each (agent, step), in commit order."""
    steps: dict[tuple[int, int], list[Op]] = {}
    for o in ops:
        if o.op == "effect" and o.plan is not None:
            steps.setdefault((o.agent, o.step or 0), []).append(o)
    return steps


def exposure(ops: list[Op]) -> set[str]:
    """The anomalies this history could have shown: the premise of each happened.

    LU: two agents wrote the same key. SG: an agent fired an effect computed from a key another
    agent wrote in the trial. PT: the same for a tool call. CC: a write compensated a version of a
    key on which another agent fired an effect. TR: one step fired two or more planned tool calls."""
    out: set[str] = set()
    writers: dict[str, set[int]] = {}
    for o in ops:
        if o.op == "write" and o.key:
            writers.setdefault(o.key, set()).add(o.agent)
    if any(len(a) > 1 for a in writers.values()):
        out.add("LU")
    for o in ops:
        if o.op != "effect":
            continue
        for key in o.based_on:
            if writers.get(key, set()) - {o.agent}:
                out.add("PT" if o.tool else "SG")
                if any(w.op == "write" and w.key == key and w.compensates and w.agent != o.agent for w in ops):
                    out.add("CC")
    if any(len(calls) > 1 for calls in _tool_steps(ops).values()):
        out.add("TR")
    return out


def guard_cost(ops: list[Op]) -> dict[str, int]:
    """What the guards cost in this history: validation retries, and waits (for a lock, or a tool
    call parked by a sequencer until its turn)."""
    return {"retries": sum(o.op == "retry" for o in ops), "waits": sum(o.op in ("wait", "park") for o in ops)}
