"""Checking: the rules every kind's checker shares, and the check-safe call into it.

Pure functions of trial records (no racers, no databases), so ``chaos analyze`` can re-score a
stored journal with the current checkers and get what the run got. Records arrive as an iterable
(read back from the journal by ``chaos.running.stored``); a kind that keeps no record (the one
that grows with k) folds them in one pass.

* ``analyze_cell`` asks the registry for the cell's kind and ``compose`` s its result: the kind's
  ``summary`` (the cell's numbers), then each of its checkers in isolation (Jepsen's ``compose``,
  check-safe per property): a checker that raises gives its own property ``unknown`` with the
  error, the others keep their verdicts; a summary that raises gives every property of the kind
  ``unknown`` with the error, never a crashed analysis. A kind the target does not support gives
  every property the kind measures ``unknown`` with the adapter's reason; a property the adapter
  cannot judge is turned into ``unknown`` the same way. The properties' names are the registry's
  (``chaos.kinds.property_names``), gathered from the checkers that judge them.
* ``verdict``, ``combine``, ``Tally``, ``base_fields``: what checkers build results from.
* ``verdict_counts``, ``exit_code``, ``trial_class``, ``count_trial``, ``trial_summary``: what a
  run concludes from its cells and trials.

A property with no valid trial behind it is ``unknown`` with the reason, never ``holds``; a
property that holds only because nothing ever ran (no fire at all) is ``unknown`` too, and marked
vacuous: over a sweep's points it holds where it was exercised, the vacuous points counted.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from chaos.records import CellResult, Evidence, Status, TrialRecord, TrialSummary, Verdict
from chaos.scenario.model import Cell

if TYPE_CHECKING:
    from chaos.kinds.base import Checker, Kind


class EvidenceFields(TypedDict, total=False):
    """What a verdict may name as its evidence (``chaos.records.Evidence``)."""

    trial_ids: list[str]
    points: list[str]
    ledger_seqs: list[int]
    note: str


def verdict(prop: str, status: Status, reason: str, *, vacuous: bool = False, **ev: Unpack[EvidenceFields]) -> Verdict:
    return Verdict(property=prop, status=status, reason=reason, evidence=Evidence(**ev), vacuous=vacuous)


def combine(prop: str, parts: list[Verdict]) -> Verdict:
    """One verdict from many (points of a sweep): violated beats unknown beats holds.

    A *vacuous* part (``Verdict.vacuous``: nothing the property speaks of happened there) is no
    unknown: the property holds over the points that exercised it, and the reason says how many
    were vacuous ("holds at 30 of 39 kill points; 9 vacuous: no effect fired"). When every part is
    vacuous the property is ``unknown`` and vacuous itself."""
    if not parts:
        return verdict(prop, "unknown", "no kill point was measured")
    bad = [v for v in parts if v.status == "violated"]
    if bad:
        ev = Evidence(
            trial_ids=sorted({t for v in bad for t in v.evidence.trial_ids}),
            points=[p for v in bad for p in v.evidence.points],
            ledger_seqs=sorted({s for v in bad for s in v.evidence.ledger_seqs}),
            note=" | ".join(v.evidence.note for v in bad if v.evidence.note)[:2000],
        )
        shown = "; ".join(v.reason for v in bad[:3]) + (" ..." if len(bad) > 3 else "")
        reason = f"violated at {len(bad)}/{len(parts)} kill points: {shown}"
        return Verdict(property=prop, status="violated", reason=reason, evidence=ev)
    vacuous = [v for v in parts if v.status == "unknown" and v.vacuous]
    unknown = [v for v in parts if v.status == "unknown" and not v.vacuous]
    if unknown:
        return Verdict(
            property=prop,
            status="unknown",
            reason=f"unknown at {len(unknown)}/{len(parts)} kill points: " + "; ".join(v.reason for v in unknown[:3]),
            evidence=Evidence(points=[p for v in unknown for p in v.evidence.points]),
        )
    if len(vacuous) == len(parts):
        return Verdict(
            property=prop,
            status="unknown",
            reason=f"vacuous at all {len(parts)} kill points: nothing exercised it ({vacuous[0].reason})",
            evidence=Evidence(points=[p for v in vacuous for p in v.evidence.points]),
            vacuous=True,
        )
    exercised = [v for v in parts if v.status == "holds"]
    trial_ids = sorted({t for v in exercised for t in v.evidence.trial_ids})
    if not vacuous:
        return verdict(prop, "holds", f"holds at all {len(parts)} kill points", trial_ids=trial_ids)
    whys = Counter(_after_colon(v.reason) for v in vacuous)
    why = "; ".join(w if len(whys) == 1 else f"{n}: {w}" for w, n in whys.most_common())
    return verdict(
        prop,
        "holds",
        f"holds at {len(exercised)} of {len(parts)} kill points; {len(vacuous)} vacuous ({why})",
        trial_ids=trial_ids,
        note="vacuous points: " + ", ".join(p for v in vacuous for p in v.evidence.points)[:1900],
    )


def _after_colon(reason: str) -> str:
    """``"<point>: vacuous, no effect fired at all"`` -> ``"no effect fired at all"``: the shared why of a vacuous part."""
    why = reason.split(": ", 1)[-1]  # a point's name has no ": " in it
    return why.removeprefix("vacuous, ").removeprefix("vacuous: ")


class Tally:
    """Counts every cell result reports, gathered one record at a time (no record is kept)."""

    def __init__(self, records: Iterable[TrialRecord] = ()):
        self.trials = self.valid = self.unknown = self.errored = 0
        self.wall_s: list[float] = []  # valid trials' wall time (a guard's overhead)
        self.app_errors: list[str] = []  # the first distinct app errors (reason, then traceback)
        self._versions: dict[str, set] = defaultdict(set)
        for r in records:
            self.add(r)

    def add(self, r: TrialRecord) -> None:
        self.trials += 1
        self.valid += r.valid
        self.unknown += not r.valid
        if r.valid:
            self.wall_s.append(r.wall_s)
        self.errored += bool(r.errors)
        for o in r.racers if not r.valid else []:  # a valid trial's app error is its kind's measurement (v2 code on v1 state)
            if o.blame == "app" and len(self.app_errors) < 3 and not any(e.startswith(o.blame_reason or "") for e in self.app_errors):
                self.app_errors.append(f"{o.blame_reason}\n{o.blame_traceback or ''}".rstrip())
        for o in r.racers:
            for dist, v in o.versions.items():
                self._versions[dist].add(v)

    def versions(self) -> dict[str, str | None]:
        """The framework distributions the racers actually ran (``a|b`` if racers disagreed)."""
        return {d: "|".join(sorted(str(v) for v in vs)) if len(vs) > 1 else next(iter(vs)) for d, vs in sorted(self._versions.items())}


def base_fields(cell: Cell, records: Iterable[TrialRecord] | Tally) -> dict:
    s = cell.scenario
    t = records if isinstance(records, Tally) else Tally(records)
    return dict(
        version=s.target.version,
        guard=s.target.option("guard"),  # a framework's own option (LangGraph's), shown beside the others
        wall_s_median=statistics.median(t.wall_s) if t.wall_s else None,
        versions=t.versions(),
        cell_index=cell.index,
        cell_id=cell.id,
        axes=cell.axes,
        kind=s.kind,
        framework=s.target.framework,
        backend=s.target.backend,
        durability=s.target.option("durability"),
        k=s.racers.k,
        jitter_ms=s.jitter_ms,
        resume=s.resume,
        workload=s.workload,
        trials=t.trials,
        valid_trials=t.valid,
        unknown_trials=t.unknown,
        errored_trials=t.errored,
        app_errors=list(t.app_errors),
        racer_errors=0,
    )


def analyze_cell(cell: Cell, records: Iterable[TrialRecord]) -> CellResult:
    """The cell's result as its kind's checker gives it, check-safe, with the adapter's limits applied."""
    from chaos.kinds import get_kind
    from chaos.targets import get_target

    kind = get_kind(cell.scenario.kind)
    info = get_target(cell.scenario.target.framework)
    why = info.supports(kind.name)
    if why is not None:
        result = CellResult(**base_fields(cell, records))
        result.failure = f"kind {kind.name} is not supported by the {info.framework} adapter: {why}"
        result.verdicts = [verdict(p, "unknown", f"unsupported: {why}") for p in kind.properties]
        return result
    seen = Tally()
    outside: list[int] = []
    result = compose(kind, cell, _outside_rows(_tallied(records, seen), outside), seen)
    for v in result.verdicts:  # a property the adapter cannot judge is never reported as judged
        reason = info.supports(v.property)
        if reason is not None:
            v.status, v.reason = "unknown", f"unsupported: {reason}"
    if outside:
        note = outside_task_note(len(outside))
        result.notes.append(note)
        for v in result.verdicts:
            v.reason += f" (note: {note})"
    return result


def compose(kind: Kind, cell: Cell, records: Iterable[TrialRecord], seen: Tally | None = None) -> CellResult:
    """The cell's result by ``kind``: its ``summary``, then each of its checkers in isolation. A
    summary that raises costs every property (``unknown`` with the error, the records it did not
    reach still counted into ``seen``); a checker that raises costs its own property only."""
    if seen is None:
        seen = Tally()
        records = _tallied(records, seen)
    records = iter(records)
    try:
        result, facts = kind.summary(cell, records)
        checkers = kind.checkers(cell, facts)
    except Exception as exc:  # check-safe: a summary's bug is every verdict unknown, not a lost run
        for _ in records:  # the records the summary did not reach still count
            pass
        why = f"the {kind.name} checker failed: {type(exc).__name__}: {exc}"[:2000]
        result = CellResult(**base_fields(cell, seen))
        result.failure = why
        result.verdicts = [verdict(p, "unknown", why) for p in kind.properties]
        return result
    result.verdicts = [judged(kind.name, c, cell, facts) for c in checkers]
    return result


def judged(kind: str, checker: Checker[Any], cell: Cell, facts: Any) -> Verdict:
    """``checker``'s verdict on ``facts``, or its property ``unknown`` with the error it raised."""
    code = checker.property.code
    try:
        v = checker.judge(cell, facts)
    except Exception as exc:  # check-safe per property (Jepsen's compose): one bug costs one verdict
        return verdict(code, "unknown", f"the {code} checker of {kind} failed: {type(exc).__name__}: {exc}"[:2000])
    if v.property != code:
        return verdict(code, "unknown", f"the {code} checker of {kind} returned a verdict on {v.property}")
    return v


def outside_task_note(n: int) -> str:
    """What a cell says when effects fired with no framework task running: they are counted but
    not attributed, so no verdict can say which step fired them."""
    return (
        f"{n} effect(s) fired outside a running task (from a thread the node started?): chaos cannot "
        "attribute them to a step; move ctx.effect into the node"
    )


def _outside_rows(records: Iterable[TrialRecord], seqs: list[int]) -> Iterator[TrialRecord]:
    """Pass ``records`` through, noting the ledger seqs of rows fired outside a running task
    (``outside_task``: the adapter attributes effects and found no task running)."""
    for rec in records:
        seqs.extend(row["seq"] for row in rec.ledger if row.get("outside_task"))
        yield rec


def _tallied(records: Iterable[TrialRecord], tally: Tally) -> Iterator[TrialRecord]:
    """``records``, each also counted into ``tally`` as it passes (no record is kept)."""
    for r in records:
        tally.add(r)
        yield r


def times(n: int) -> str:
    """``twice``, ``three times``, ``4 times``: for explanations."""
    return {2: "twice", 3: "three times"}.get(n, f"{n} times")


def verdict_counts(cells: list[CellResult]) -> dict[str, int]:
    c = Counter(v.status for cell in cells for v in cell.verdicts)
    return {s: c.get(s, 0) for s in ("holds", "violated", "unknown")}


def exit_code(cells: list[CellResult]) -> int:
    counts = verdict_counts(cells)
    if counts["violated"]:
        return 1
    if counts["unknown"] or any(c.failure for c in cells):
        return 2
    return 0


def trial_class(rec: TrialRecord) -> str:
    """valid | hung | environment | app_error | errored | unknown: the one bucket a trial counts in
    for the run summary (its ``fault``, blamed by ``chaos.running.blame``, decides the middle three)."""
    if rec.valid:
        return "valid"
    if any(o.status == "timeout" for o in rec.racers):
        return "hung"
    if rec.fault == "environment":
        return "environment"
    if rec.fault == "app":
        return "app_error"
    if rec.errors or any(o.status in ("harness_error", "crashed") for o in rec.racers):
        return "errored"
    return "unknown"


def count_trial(s: TrialSummary, r: TrialRecord) -> None:
    """Count one trial into ``s`` by its trust class and the injector's evidence that its fault fired."""
    s.trials += 1
    setattr(s, trial_class(r), getattr(s, trial_class(r)) + 1)
    if r.retry_of is not None:
        s.retried += 1
    if r.fault_fired is True:
        s.fault_fired += 1
    elif r.fault_fired is False:
        s.fault_not_fired += 1
    kill = r.observations.get("kill")
    if r.observations.get("crash_state") is not None:  # recorded (chaos.kinds.crash_states): a frozen recording, no kill
        s.recorded_states += 1
    elif isinstance(kill, dict):
        if kill.get("confirmed"):
            s.kills_confirmed += 1
        else:
            s.kills_unconfirmed += 1


def trial_summary(records: Iterable[TrialRecord]) -> TrialSummary:
    """Counts of trials by trust class, and the injector's evidence that faults fired."""
    s = TrialSummary()
    for r in records:
        count_trial(s, r)
    return s
