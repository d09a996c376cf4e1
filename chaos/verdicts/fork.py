"""FD and FI from ``fork`` trials.

FD (fork determinism) per trial: the resume with v2 sent to the interrupt's checkpoint must yield
v2's outcome: the gated node sees v2 and fires with v2. It is violated when the node sees or fires
v1 again (LangGraph issue 6663) or when the fork returns without running the gated node at all
(v2's outcome never happens). A fork the framework refuses or cannot express is ``unknown``.

FI (fork intent) is read from the API surface the racer inspected (``intent`` op): without a
parameter that tells a retry from a fork, FI is violated; the evidence note is that surface.
"""

from __future__ import annotations

from collections import Counter

from chaos.kinds.checking import base_fields, verdict
from chaos.records import CellResult, TrialRecord, Verdict
from chaos.scenario.model import Cell


def trial_fd(rec: TrialRecord) -> tuple[str, str]:
    """(status, reason) of FD in one valid trial."""
    o = rec.observations
    gated, v1, v2 = o.get("gated_task"), o["sent"]["resume"], o["sent"]["fork"]
    f = o.get("fork") or {}
    fired = f.get("fired") or []
    saw = f.get("observed")
    keys_v1, keys_v2 = f"{gated}:{v1}", f"{gated}:{v2}"
    if f.get("status") == "unsupported":
        return "unknown", f"fork via {o.get('via')} is not expressible: {(f.get('error') or {}).get('message')}"
    if saw == v1 or keys_v1 in fired:
        again = f" and fired {keys_v1} again" if keys_v1 in fired else ""
        return "violated", f"the fork with {v2!r} saw {v1!r} again{again} (via {o.get('via')})"
    if saw == v2 or keys_v2 in fired:
        return "holds", f"the fork saw {v2!r} and fired {', '.join(fired) or 'nothing'}"
    if f.get("status") == "error":
        err = f.get("error") or {}
        return "unknown", f"the fork was refused: {err.get('type')}: {str(err.get('message'))[:160]}"
    return "violated", (f"the fork with {v2!r} returned {f.get('status')} without running {gated}: v2's outcome "
                        f"never happened (fired {', '.join(f.get('all_fired') or []) or 'nothing'}, via {o.get('via')})")


def fd_verdict(valid: list[TrialRecord]) -> Verdict:
    if not valid:
        return verdict("FD", "unknown", "no valid trial (the first resume never fired with v1)")
    per = [(r, *trial_fd(r)) for r in valid]
    bad = [(r, why) for r, st, why in per if st == "violated"]
    if bad:
        seqs = []
        for r, _ in bad:
            gated = r.observations.get("gated_task")
            rows = [row for row in r.ledger if row["task"] == gated]
            seqs += [row["seq"] for row in rows[1:]]  # every fire after the first resume's
        return verdict("FD", "violated", f"{len(bad)}/{len(valid)} trials: {bad[0][1]}",
                       trial_ids=[r.trial_id for r, _ in bad], ledger_seqs=seqs)
    unknown = [(r, why) for r, st, why in per if st == "unknown"]
    if unknown:
        return verdict("FD", "unknown", f"{len(unknown)}/{len(valid)} trials: {unknown[0][1]}",
                       trial_ids=[r.trial_id for r, _ in unknown])
    return verdict("FD", "holds", f"in all {len(valid)} trials the fork yielded v2's outcome: {per[0][2]}",
                   trial_ids=[r.trial_id for r in valid])


def fi_verdict(records: list[TrialRecord]) -> Verdict:
    seen = [r for r in records if r.observations.get("intent")]
    if not seen:
        errs = [r.observations.get("intent_error") for r in records if r.observations.get("intent_error")]
        why = (errs[0] or {}).get("message") if errs else "no trial read the API surface"
        return verdict("FI", "unknown", f"the adapter could not say what its API expresses: {why}")
    intent = seen[0].observations["intent"]
    surface = "; ".join(f"{k} {v}" for k, v in (intent.get("surface") or {}).items())[:1500]
    if intent.get("discriminator"):
        return verdict("FI", "holds", f"the API tells a retry from a fork by {intent['discriminator']}",
                       trial_ids=[r.trial_id for r in seen], note=surface)
    return verdict("FI", "violated", f"no retry/fork discriminator in the API: {intent.get('note', '')}",
                   trial_ids=[r.trial_id for r in seen], note=surface)


def analyze(cell: Cell, records: list[TrialRecord]) -> CellResult:
    valid = [r for r in records if r.valid]
    result = CellResult(**base_fields(cell, records))
    result.summary = {
        "via": cell.scenario.fork_via,
        "fork_observed": dict(Counter(repr(r.observations["fork"].get("observed")) for r in valid)),
        "fork_fired": dict(Counter(",".join(r.observations["fork"].get("all_fired") or []) or "-" for r in valid)),
        "invalid": dict(Counter(r.invalid_reason for r in records if not r.valid)),
    }
    result.verdicts = [fd_verdict(valid), fi_verdict(records)]
    return result
