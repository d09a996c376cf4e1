"""Analysis: from journaled trial records to per-cell numbers and contract verdicts.

Pure functions of the records (no racers, no databases), so ``chaos analyze`` can re-score a
stored journal with the current checkers and get what the run got. Records arrive as an iterable
(read back from the journal by ``chaos.running.stored``); race cells, the ones that grow with k, are
analysed in one pass that keeps numbers and trial ids, not records.

* race: saturation = mean(fires over valid trials) / k, the {fires: trials} distribution,
  max fires, racer errors, release spread; CO (consume-once) and liveness.
* kill_sweep / first_checkpoint: per kill point, effect counts per task, durable checkpoints at
  the kill, the resume outcome; EO (exactly-once), PC (prefix continuation), liveness, and for
  first_checkpoint FCL (the accepted run survives a crash before its first checkpoint).

* fork / stray_resume / invalid_state / recovery_determinism: FD+FI, CO, CV, RD in
  ``chaos.verdicts.<kind>``.

A property with no valid trial behind it is ``unknown`` with the reason, never ``holds``; a
property that holds only because nothing ever ran (no fire at all) is ``unknown`` too. A kind or
property the target does not support is ``unknown`` with the adapter's reason.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from typing import Iterable

from chaos.records import CellResult, Evidence, PointResult, TrialRecord, TrialSummary, Verdict
from chaos.scenario.model import Cell

PROPERTY_NAMES = {
    "EO": "effect exactly-once",
    "PC": "prefix continuation",
    "CO": "consume-once",
    "FD": "fork determinism",
    "CV": "checkpoint validity",
    "RD": "recovery determinism",
    "FI": "fork intent",
    "LIVENESS": "liveness",
    "FCL": "first checkpoint survives a crash",
}


def verdict(prop: str, status: str, reason: str, **ev) -> Verdict:
    return Verdict(property=prop, status=status, reason=reason, evidence=Evidence(**ev))


def combine(prop: str, parts: list[Verdict]) -> Verdict:
    """One verdict from many (points of a sweep): violated beats unknown beats holds."""
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
        return Verdict(property=prop, status="violated", reason=f"violated at {len(bad)}/{len(parts)} kill points: " + "; ".join(v.reason for v in bad[:3]) + (" ..." if len(bad) > 3 else ""), evidence=ev)
    unknown = [v for v in parts if v.status == "unknown"]
    if unknown:
        return Verdict(property=prop, status="unknown", reason=f"unknown at {len(unknown)}/{len(parts)} kill points: " + "; ".join(v.reason for v in unknown[:3]),
                       evidence=Evidence(points=[p for v in unknown for p in v.evidence.points]))
    return verdict(prop, "holds", f"holds at all {len(parts)} kill points", trial_ids=sorted({t for v in parts for t in v.evidence.trial_ids}))


class Tally:
    """Counts every cell result reports, gathered one record at a time (no record is kept)."""

    def __init__(self, records: Iterable[TrialRecord] = ()):
        self.trials = self.valid = self.unknown = self.errored = 0
        self._versions: dict[str, set] = defaultdict(set)
        for r in records:
            self.add(r)

    def add(self, r: TrialRecord) -> None:
        self.trials += 1
        self.valid += r.valid
        self.unknown += not r.valid
        self.errored += bool(r.errors)
        for o in r.racers:
            for dist, v in ((o.result or {}).get("versions") or {}).items():
                self._versions[dist].add(v)

    def versions(self) -> dict[str, str | None]:
        """The framework distributions the racers actually ran (``a|b`` if racers disagreed)."""
        return {d: "|".join(sorted(str(v) for v in vs)) if len(vs) > 1 else next(iter(vs))
                for d, vs in sorted(self._versions.items())}


def versions_of(records: Iterable[TrialRecord]) -> dict[str, str | None]:
    return Tally(records).versions()


def base_fields(cell: Cell, records: Iterable[TrialRecord] | Tally) -> dict:
    s = cell.scenario
    t = records if isinstance(records, Tally) else Tally(records)
    return dict(
        version=s.target.version,
        versions=t.versions(),
        cell_index=cell.index,
        cell_id=cell.id,
        axes=cell.axes,
        kind=s.kind,
        framework=s.target.framework,
        backend=s.target.backend,
        durability=s.target.durability,
        k=s.racers.k,
        jitter_ms=s.jitter_ms,
        resume=s.resume,
        workload=s.workload,
        trials=t.trials,
        valid_trials=t.valid,
        unknown_trials=t.unknown,
        errored_trials=t.errored,
        racer_errors=0,
    )


# ------------------------------------------------------------------------------------ race


def analyze_race(cell: Cell, records: Iterable[TrialRecord]) -> CellResult:
    """One pass over the cell's records, keeping numbers and trial ids, never the records: a race
    cell of 1,000 trials at k=64 is analysed in the memory of its results."""
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
    racer_errors = 0
    for r in records:
        tally.add(r)
        racer_errors += sum(1 for op in r.history if op.type in ("fail", "info"))
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
        if n > 1:
            dup_ids.append(r.trial_id)
            dup_seqs += [row["seq"] for row in r.ledger if row["task"] == r.observations.get("gated_task")]
        elif n == 0:
            none_fired.append(r.trial_id)
    dist = Counter(fires)
    result = CellResult(
        **base_fields(cell, tally),
        saturation=(statistics.mean(fires) / k) if fires else None,
        fires={str(f): n for f, n in sorted(dist.items())},
        fires_per_trial=fires_per_trial,
        max_fires=max(fires) if fires else None,
        release_spread_ms=(
            {"median": statistics.median(spreads), "max": max(spreads)} if spreads else None
        ),
    )
    result.racer_errors = racer_errors
    verdicts = []
    if not fires:
        why = "; ".join(f"{n}x {w}" for w, n in invalid_reasons.most_common(3)) or "no trial ran"
        verdicts.append(verdict("CO", "unknown", f"no valid trial (all {k} racers past the gate): {why}"))
        verdicts.append(verdict("LIVENESS", "unknown", "no valid trial"))
    else:
        if dup_ids:
            verdicts.append(verdict(
                "CO", "violated",
                f"the gated effect fired more than once in {len(dup_ids)}/{len(fires)} valid trials (max {max(fires)} of k={k})",
                trial_ids=dup_ids, ledger_seqs=dup_seqs,
            ))
        elif all(f == 0 for f in fires):
            verdicts.append(verdict("CO", "unknown", "vacuous: no racer fired the gated effect in any valid trial"))
        else:
            verdicts.append(verdict("CO", "holds", f"at most one fire in each of {len(fires)} valid trials",
                                     trial_ids=valid_ids))
        if none_fired:
            verdicts.append(verdict("LIVENESS", "violated", f"no racer fired the gated effect in {len(none_fired)}/{len(fires)} valid trials",
                                     trial_ids=none_fired))
        else:
            verdicts.append(verdict("LIVENESS", "holds", f"the gated effect fired in every one of {len(fires)} valid trials"))
    result.verdicts = verdicts
    return result


# ----------------------------------------------------------------------------------- sweep


def _counts(rec: TrialRecord) -> dict[str, int]:
    return dict(Counter(row["task"] for row in rec.ledger))


def _point_verdicts(point: str, recs: list[TrialRecord], first_checkpoint: bool) -> list[Verdict]:
    valid = [r for r in recs if r.valid]
    if not valid:
        why = recs[0].invalid_reason if recs else "no trial"
        props = ["EO", "PC", "LIVENESS"] + (["FCL"] if first_checkpoint else [])
        return [verdict(p, "unknown", f"{point}: {why}", points=[point], trial_ids=[r.trial_id for r in recs]) for p in props]
    out = []
    # EO: no task's effect more than once across kill + resume
    dups = [(r, t, n) for r in valid for t, n in _counts(r).items() if n > 1]
    if dups:
        r0, t0, n0 = dups[0]
        out.append(verdict("EO", "violated", f"{point}: effect {t0!r} fired {n0}x (trial {r0.trial_id})", points=[point],
                            trial_ids=sorted({r.trial_id for r, _, _ in dups}),
                            ledger_seqs=[row["seq"] for r, t, _ in dups for row in r.ledger if row["task"] == t]))
    elif not any(r.ledger for r in valid):
        out.append(verdict("EO", "unknown", f"{point}: vacuous, no effect fired at all", points=[point]))
    else:
        out.append(verdict("EO", "holds", f"{point}: every effect at most once", points=[point], trial_ids=[r.trial_id for r in valid]))
    # PC: nothing recorded complete at the kill runs again
    pc_bad, pc_unknown = [], []
    for r in valid:
        at_kill = r.observations.get("at_kill") or {}
        if at_kill.get("error") or at_kill.get("completed_tasks") is None:
            pc_unknown.append(r)
            continue
        durable = set(at_kill.get("completed_tasks") or [])
        again = {row["task"] for row in r.ledger if row["racer_id"] == "resume"} & durable
        if again:
            pc_bad.append((r, sorted(again)))
    if pc_bad:
        r0, again = pc_bad[0]
        out.append(verdict("PC", "violated", f"{point}: {', '.join(again)} recorded complete at the kill, ran again on resume",
                            points=[point], trial_ids=[r.trial_id for r, _ in pc_bad],
                            ledger_seqs=[row["seq"] for r, a in pc_bad for row in r.ledger if row["task"] in a and row["racer_id"] == "resume"]))
    elif len(pc_unknown) == len(valid):
        err = (valid[0].observations.get("at_kill") or {}).get("error") or {}
        out.append(verdict("PC", "unknown", f"{point}: durable state unreadable ({err.get('type')})", points=[point]))
    else:
        out.append(verdict("PC", "holds", f"{point}: no task recorded complete ran again", points=[point], trial_ids=[r.trial_id for r in valid]))
    # liveness: the resume finishes the run or leaves it waiting for a human
    dead = []
    for r in valid:
        o = r.observations.get("resume_outcome") or {}
        after = r.observations.get("after_resume") or {}
        if o.get("status") == "error":
            dead.append((r, f"{o.get('error', {}).get('type')}: {o.get('error', {}).get('message', '')[:120]}"))
        elif after.get("next") and not after.get("pending_interrupts"):
            dead.append((r, f"stopped with next={after.get('next')}"))
    if dead:
        out.append(verdict("LIVENESS", "violated", f"{point}: resume did not finish the run ({dead[0][1]})", points=[point],
                            trial_ids=[r.trial_id for r, _ in dead]))
    else:
        out.append(verdict("LIVENESS", "holds", f"{point}: resume finished the run", points=[point], trial_ids=[r.trial_id for r in valid]))
    if first_checkpoint:
        lost = [r for r in valid if ((r.observations.get("at_kill") or {}).get("checkpoints") or 0) == 0
                and (r.observations.get("resume_outcome") or {}).get("status") != "done"]
        if lost:
            fired = sum(len(r.ledger) for r in lost)
            note = f"; yet {fired} effect(s) had already fired" if fired else ""
            err = ((lost[0].observations.get("resume_outcome") or {}).get("error") or {}).get("type")
            out.append(verdict("FCL", "violated", f"{point}: no checkpoint survived and the resume could not continue ({err}): the accepted run is known nowhere{note}",
                                points=[point], trial_ids=[r.trial_id for r in lost], ledger_seqs=[row["seq"] for r in lost for row in r.ledger]))
        else:
            out.append(verdict("FCL", "holds", f"{point}: the run was recovered", points=[point], trial_ids=[r.trial_id for r in valid]))
    return out


def analyze_sweep(cell: Cell, records: list[TrialRecord]) -> CellResult:
    dry = next((r for r in records if r.trial_id.endswith("-dry")), None)
    trials = [r for r in records if not r.trial_id.endswith("-dry")]
    result = CellResult(**base_fields(cell, trials))
    result.racer_errors = sum(1 for r in trials for o in r.racers if o.status in ("harness_error", "crashed", "timeout"))
    fc = cell.scenario.kind == "first_checkpoint"
    if dry is None or not dry.valid:
        why = dry.invalid_reason if dry else "the dry run did not run"
        result.failure = why
        props = ["EO", "PC", "LIVENESS"] + (["FCL"] if fc else [])
        result.verdicts = [verdict(p, "unknown", why) for p in props]
        return result
    by_point: dict[str, list[TrialRecord]] = defaultdict(list)
    for r in trials:
        by_point[r.point or "?"].append(r)
    from chaos.kinds.sweep import points_of

    points = points_of(cell, dry.observations.get("boundaries", []))
    all_verdicts: dict[str, list[Verdict]] = defaultdict(list)
    for point in points:
        recs = by_point.get(point, [])
        valid = [r for r in recs if r.valid]
        tasks = sorted({t for r in valid for t in _counts(r)})
        pv = _point_verdicts(point, recs, fc)
        for v in pv:
            all_verdicts[v.property].append(v)
        outcomes = []
        for r in recs:
            if not r.valid:
                outcomes.append(f"unknown: {r.invalid_reason}")
                continue
            o = r.observations.get("resume_outcome") or {}
            outcomes.append(o.get("status") if o.get("status") != "error" else f"error: {o.get('error', {}).get('type')}")
        result.points.append(PointResult(
            point=point,
            trials=len(recs),
            reached=len(valid),
            effect_counts={t: [_counts(r).get(t, 0) for r in valid] for t in tasks},
            durable_checkpoints=[(r.observations.get("at_kill") or {}).get("checkpoints") for r in valid],
            resume_outcomes=outcomes,
            duplicates=sorted({t for r in valid for t, n in _counts(r).items() if n > 1}),
            verdicts=pv,
        ))
    result.verdicts = [combine(p, all_verdicts[p]) for p in (["EO", "PC", "LIVENESS"] + (["FCL"] if fc else []))]
    return result


def analyze_cell(cell: Cell, records: Iterable[TrialRecord]) -> CellResult:
    from chaos.targets import get_target
    from chaos.verdicts import KIND_PROPERTIES

    kind = cell.scenario.kind
    info = get_target(cell.scenario.target.framework)
    why = info.supports(kind)
    if why is not None:
        result = CellResult(**base_fields(cell, records))
        result.failure = f"kind {kind} is not supported by the {info.framework} adapter: {why}"
        result.verdicts = [verdict(p, "unknown", f"unsupported: {why}") for p in KIND_PROPERTIES.get(kind, ())]
        return result
    if kind == "race":
        result = analyze_race(cell, records)  # folds: the cell's records are never all in memory
    elif kind in ("kill_sweep", "first_checkpoint"):
        result = analyze_sweep(cell, list(records))
    else:
        import importlib

        module = {"fork": "fork", "stray_resume": "stray", "invalid_state": "invalid", "recovery_determinism": "recovery"}[kind]
        result = importlib.import_module(f"chaos.verdicts.{module}").analyze(cell, list(records))
    for v in result.verdicts:  # a property the adapter cannot judge is never reported as judged
        reason = info.supports(v.property)
        if reason is not None:
            v.status, v.reason = "unknown", f"unsupported: {reason}"
    return result


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
    """valid | hung | errored | unknown: the one bucket a trial counts in for the run summary."""
    if rec.valid:
        return "valid"
    if any(o.status == "timeout" for o in rec.racers):
        return "hung"
    if rec.errors or any(o.status in ("harness_error", "crashed") for o in rec.racers):
        return "errored"
    return "unknown"


def count_trial(s: TrialSummary, r: TrialRecord) -> None:
    """Count one trial into ``s`` by its trust class and the injector's evidence that its fault fired."""
    s.trials += 1
    setattr(s, trial_class(r), getattr(s, trial_class(r)) + 1)
    if r.fault_fired is True:
        s.fault_fired += 1
    elif r.fault_fired is False:
        s.fault_not_fired += 1
    kill = r.observations.get("kill")
    if isinstance(kill, dict):
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
