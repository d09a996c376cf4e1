"""A thread's checkpoint chain after a trial -> LC (linear chain): no fork without a fork intent, no
committed checkpoint left unreachable from the latest (issue 26, LangGraph issue 8796).

Two writers that resume one thread at once can both succeed: each writes a checkpoint whose parent
is the one both read, the chain forks, and the writer that committed first has a checkpoint no
later read of the thread will reach. Counting effects does not see this (an idempotent workflow
fires nothing twice); the tree does. After a race the trial reads the thread's checkpoints as the
saver lists them (``saver.list``, the racer's ``tree`` op: id, namespace, parent, step, source; no
claiming read) and ``chain_of`` reports, per namespace. The race's first racer reads it, in the
session it has open, once every other racer has ended (it waits at its ``afterwards`` barrier for
that), so the read costs no racer of its own:

* ``forks``: a parent with more than one child. A race has no fork intent (every racer resumes the
  thread's head, none names a checkpoint), so every fork in it is one without intent.
* ``unreachable``: checkpoints of a namespace not on the parent path from that namespace's latest
  (the greatest id: LangGraph's ids are time-ordered).

A saver that lists no parent at all (several checkpoints, none with a parent) has no tree to
judge: the summary is an ``error`` and the trial counts as not read (LC ``unknown``), never as
every checkpoint unreachable.

``ChainTally`` folds a cell's records into the LC verdict without keeping them: violated by a valid
trial with a fork or an unreachable checkpoint (its trial ids, the fork's parent and children in
the reason), holds over the valid trials whose tree was read, ``unknown`` when no tree was read.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from chaos.kinds.base import Property
from chaos.kinds.checking import verdict
from chaos.racer.protocol import ActionOutcome, ActionSpec
from chaos.records import Op, RacerOutcome, TrialRecord, Verdict, error_field, error_of
from chaos.running.trial import TrialRun
from chaos.scenario.model import Scenario


def chain_of(tree: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Forks and unreachable checkpoints of a thread's checkpoint tree (``TreeCheckpoint``s), per namespace."""
    by_ns: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for c in tree:
        by_ns[c.get("ns") or ""].append(c)
    forks: list[dict[str, Any]] = []
    unreachable: list[dict[str, Any]] = []
    latest: dict[str, str] = {}
    for ns, cps in sorted(by_ns.items()):
        parent_of = {c["id"]: c.get("parent") for c in cps}
        if len(cps) > 1 and not any(parent_of.values()):  # a saver that lists no parents: no tree to judge
            return {"error": f"the saver lists no parent for any of the {len(cps)} checkpoints of namespace {ns!r}: no chain to read"}
        step_of = {c["id"]: c.get("step") for c in cps}
        children: dict[str, list[str]] = defaultdict(list)
        for c in cps:
            if c.get("parent"):
                children[c["parent"]].append(c["id"])
        for parent, kids in sorted(children.items()):
            if len(kids) > 1:
                forks.append({"ns": ns, "parent": parent, "step": step_of.get(parent), "children": sorted(kids)})
        head = max(parent_of)
        latest[ns] = head
        reach: set[str] = set()
        at: str | None = head
        while at is not None and at not in reach:
            reach.add(at)
            at = parent_of.get(at)
        unreachable += [{"ns": ns, "id": i, "step": step_of.get(i)} for i in sorted(parent_of) if i not in reach]
    return {"checkpoints": len(tree), "namespaces": len(by_ns), "latest": latest, "forks": forks, "unreachable": unreachable}


def describe(chain: dict[str, Any]) -> str:
    """One sentence of a trial's chain: its first fork and the checkpoints left unreachable."""
    parts = []
    if chain.get("forks"):
        f = chain["forks"][0]
        where = f" in namespace {f['ns']!r}" if f["ns"] else ""
        parts.append(
            f"checkpoint {f['parent']} (step {f['step']}){where} has {len(f['children'])} children {', '.join(f['children'])} "
            f"and no writer asked for a fork ({len(chain['forks'])} fork(s) in all)"
        )
    if chain.get("unreachable"):
        ids = ", ".join(f"{u['id']} (step {u['step']})" for u in chain["unreachable"][:4])
        parts.append(f"{len(chain['unreachable'])} committed checkpoint(s) unreachable from the latest: {ids}")
    return "; ".join(parts)


LC = Property("LC", "linear checkpoint chain", "race-saturation-co-and-liveness-kind-race")


class ChainTally:
    """The LC verdict of a cell, folded one record at a time (numbers and ids, never records)."""

    def __init__(self) -> None:
        self.read: list[str] = []
        self.broken: list[tuple[str, str]] = []
        self.not_read: dict[str, int] = defaultdict(int)
        self.checkpoints = 0

    def add(self, rec: TrialRecord) -> None:
        if not rec.valid:
            return
        chain = rec.observations.get("chain")
        if not isinstance(chain, dict) or chain.get("error"):
            why = chain.get("error") if isinstance(chain, dict) else None
            self.not_read[str(why or "the tree was not read")] += 1
            return
        self.read.append(rec.trial_id)
        self.checkpoints += int(chain.get("checkpoints") or 0)
        if chain.get("forks") or chain.get("unreachable"):
            self.broken.append((rec.trial_id, describe(chain)))

    def verdict(self) -> Verdict:
        if self.broken:
            return verdict(
                "LC",
                "violated",
                f"{len(self.broken)}/{len(self.read)} valid trials forked the thread's chain: {self.broken[0][1]}",
                trial_ids=[t for t, _ in self.broken],
            )
        if not self.read:
            why = "; ".join(f"{n}x {w}" for w, n in self.not_read.items()) or "no valid trial"
            return verdict("LC", "unknown", f"no checkpoint tree read after a valid trial: {why}")
        return verdict(
            "LC",
            "holds",
            f"the chain stayed linear in all {len(self.read)} valid trials ({self.checkpoints} checkpoints read through "
            "saver.list: no two with one parent, every one reachable from the latest)",
            trial_ids=self.read,
        )


def reads_chain(scenario: Scenario) -> bool:
    """Whether the cell's adapter judges LC (it lists a thread's checkpoint tree)."""
    from chaos.targets import get_target

    return get_target(scenario.target.framework).supports("LC") is None


TREE_READ: list[ActionSpec] = [{"op": "tree"}]
"""The ``afterwards`` actions of the racer that reads the tree after a race (``read_chain``)."""


def read_chain(run: TrialRun, reader: RacerOutcome | None = None) -> dict[str, Any]:
    """After the trial's racers ended: the thread's checkpoint tree (``tree`` op), summarised
    (``chain_of``), or why it was not read. ``reader`` is the racer whose spec had ``TREE_READ`` as
    its ``afterwards``: it read the tree in the session it had open once every other racer had
    ended, so no racer starts for it. Without its read (it never got there: its session did not
    open), one more racer lists the tree."""
    got = reader
    last = _tree_outcome(run, reader)
    if last is None:
        (h,) = run.start([run.spec("chain", actions=list(TREE_READ))])
        hung = run.wait_exit([h])
        got = run.collect(h, "chain", "tree", hung=bool(hung))
        last = got.last_outcome
    tree = last.get("tree") if last else None
    if not isinstance(tree, list) or not tree:
        err = error_of(last)
        status = got.status if got is not None else "?"
        return {
            "error": f"the checkpoint tree could not be read ({status}: {error_field(err, 'type') or 'no tree'} {error_field(err, 'message') or ''})".strip()
        }
    return chain_of(tree)


def _tree_outcome(run: TrialRun, reader: RacerOutcome | None) -> ActionOutcome | None:
    """The outcome of the reader's ``afterwards`` tree read (None if it made none), put in the
    trial's history as the reader's second call (it made it after its resume had returned)."""
    result = reader.result if reader is not None else None
    outs = (result or {}).get("afterwards") or []
    if reader is None or result is None or not outs:
        return None
    last: ActionOutcome = outs[-1]
    status = last.get("status")
    err = error_of(last)
    run.history.append(Op(racer_id=reader.racer_id, type="invoke", f="tree", t_mono_ns=result.get("t_afterwards_mono_ns")))
    run.history.append(
        Op(
            racer_id=reader.racer_id,
            type="ok" if status == "done" else "fail",
            f="tree",
            detail=f"{error_field(err, 'type')}: {error_field(err, 'message')}" if err else status,
            t_mono_ns=result.get("t_end_mono_ns"),
        )
    )
    return last
