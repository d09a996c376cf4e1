"""CO from ``stray_resume`` trials: a repeated answer to a consumed interrupt must be inert.

Inert means: it fires no effect and the thread's state (values, next tasks, pending interrupts)
does not move. A refusal (an error) is inert too. A stray answer that lands on a later interrupt
and answers it is the violation a retry/fork discriminator would prevent.
"""

from __future__ import annotations

from collections import Counter

from chaos.kinds.checking import base_fields, verdict
from chaos.records import CellResult, TrialRecord, Verdict

MOVED_KEYS = ("values", "next", "pending_interrupts")


def trial_co(rec: TrialRecord) -> tuple[str, str]:
    o = rec.observations
    stray, before, after = o.get("stray") or {}, o.get("thread_before") or {}, o.get("thread_after") or {}
    where = "a thread waiting at a later interrupt" if (o.get("consumed") or {}).get("waiting_at") else "a completed thread"
    if o.get("resume_by") == "interrupt":
        where += " (addressed to the first interrupt's id)"
    if stray.get("fired"):
        return "violated", f"the stray answer {o.get('sent')!r} to {where} fired {', '.join(stray['fired'])}"
    moved = [k for k in MOVED_KEYS if before.get(k) != after.get(k)]
    if moved:
        return "violated", f"the stray answer to {where} moved the thread ({', '.join(f'{k}: {before.get(k)!r} -> {after.get(k)!r}' for k in moved)})"
    how = f"refused ({(stray.get('error') or {}).get('type')})" if stray.get("status") == "error" else f"accepted as a no-op ({stray.get('status')})"
    extra = ""
    if before.get("checkpoints") != after.get("checkpoints"):
        extra = f"; it wrote {((after.get('checkpoints') or 0) - (before.get('checkpoints') or 0))} checkpoint(s) with the same state"
    return "holds", f"the stray answer to {where} was inert: {how}{extra}"


def analyze(cell, records: list[TrialRecord]) -> CellResult:
    valid = [r for r in records if r.valid]
    result = CellResult(**base_fields(cell, records))
    per = [(r, *trial_co(r)) for r in valid]
    result.summary = {
        "resume_by": cell.scenario.resume_by,
        "thread_after_first_answer": dict(Counter("waiting at a later interrupt" if (r.observations.get("consumed") or {}).get("waiting_at")
                                                  else "completed" for r in valid)),
        "stray_status": dict(Counter(str((r.observations.get("stray") or {}).get("status")) for r in valid)),
        "stray_fired": dict(Counter(",".join((r.observations.get("stray") or {}).get("fired") or []) or "-" for r in valid)),
        "invalid": dict(Counter(r.invalid_reason for r in records if not r.valid)),
    }
    result.verdicts = [co_verdict(per, len(records))]
    return result


def co_verdict(per: list[tuple[TrialRecord, str, str]], n: int) -> Verdict:
    if not per:
        return verdict("CO", "unknown", f"no valid trial of {n} (the first answer never consumed the interrupt)")
    bad = [(r, why) for r, st, why in per if st == "violated"]
    if bad:
        seqs = []
        for r, _ in bad:
            n_fired = len((r.observations.get("stray") or {}).get("fired") or [])
            rows = [row["seq"] for row in r.ledger if row["racer_id"] in ("stray", "solo")]
            seqs += rows[len(rows) - n_fired:] if n_fired else []  # the stray call fires last
        return verdict("CO", "violated", f"{len(bad)}/{len(per)} trials: {bad[0][1]}", trial_ids=[r.trial_id for r, _ in bad],
                       ledger_seqs=seqs)
    return verdict("CO", "holds", f"all {len(per)} trials: {per[0][2]}", trial_ids=[r.trial_id for r, _, _ in per])
