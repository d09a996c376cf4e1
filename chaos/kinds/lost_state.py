"""LS, lost state: does a thread the server acknowledged survive the server's crash and restart?

Why: behind a server (the LangGraph Agent Server, target ``langgraph_server``) the client does not
own the state; the server created the thread (HTTP 200) and answered for it, so a thread that is
gone after a SIGKILL and a restart is state the server lost, whatever a retry then does. EO counts
what the loss costs in effects (a client that re-creates the thread runs the work again), LIVENESS
says whether the re-created run finished; neither says *that* the thread vanished, nor which one.
LS does, as a measured verdict with the thread ids lost or kept. It is its own property rather
than LIVENESS violated: the recovery did finish (on a new thread), and a reader who sees LIVENESS
violated looks for a hung run, not for a server that forgot one.

What it promises: judged at each kill point of a sweep, only on a target that declares ``LS`` in
its ``properties`` (every other target's sweeps are unchanged). It reads what the recovery found
before it did anything (the ``at_kill`` inspect): ``thread_found: false`` with ``lost_thread`` (the
server's id) is a lost thread; ``thread_found: true`` with ``server_thread`` a kept one. Violated
when any repeat lost its thread (the ids in the reason and ``evidence.note``), holds when every
repeat found its thread (the ids kept), unknown when the inspect could not tell (the reason says why).
Over the cell (``combined``) as every sweep property (violated beats unknown beats holds), the
evidence keeping every point's ids lost or kept, so a cell that holds still names its threads.
"""

from __future__ import annotations

from chaos.kinds.base import Property
from chaos.kinds.checking import combine, verdict
from chaos.kinds.sweep_addon import AtPoint, SweepAddOn
from chaos.records import TrialRecord, Verdict
from chaos.scenario.model import Cell

PROPERTY = "LS"
LS = Property(PROPERTY, "no lost state", "lost-state-ls-sweeps-behind-a-server")


def properties_of(cell: Cell, dry: TrialRecord | None = None, trials: list[TrialRecord] | None = None) -> tuple[str, ...]:
    """``("LS",)`` when the cell's target declares it (a server that owns the threads), else nothing."""
    from chaos.targets import TARGETS

    info = TARGETS.get(cell.scenario.target.framework)
    return (PROPERTY,) if info is not None and PROPERTY in info.properties else ()


def point_verdicts(at: AtPoint) -> list[Verdict]:
    """LS at one kill point, from what each valid repeat's recovery found at the restart."""
    point, recs = at.point, at.recs
    valid = [r for r in recs if r.valid]
    if not valid:
        why = recs[0].invalid_reason if recs else "no trial"
        return [verdict(PROPERTY, "unknown", f"{point}: {why}", points=[point], trial_ids=[r.trial_id for r in recs])]
    lost: list[tuple[str, str]] = []
    kept: list[tuple[str, str]] = []
    untold: list[TrialRecord] = []
    for r in valid:
        at_kill = r.observed_inspect("at_kill")
        found = at_kill.get("thread_found")
        if found is False:
            lost.append((r.trial_id, str(at_kill.get("lost_thread") or "?")))
        elif found is True:
            kept.append((r.trial_id, str(at_kill.get("server_thread") or "?")))
        else:
            untold.append(r)
    note = "; ".join([*(f"lost {t} ({tr})" for tr, t in lost), *(f"kept {t} ({tr})" for tr, t in kept)])
    if lost:
        repeats = f" in {len(lost)} of {len(valid)} repeats" if len(valid) > 1 else ""
        return [
            verdict(
                PROPERTY,
                "violated",
                f"{point}: the restarted server no longer knows thread {', '.join(t for _, t in lost)}{repeats} "
                "(created by the client before the kill; Thread not found after the restart)",
                points=[point],
                trial_ids=[tr for tr, _ in lost],
                note=note,
            )
        ]
    if untold:
        err = untold[0].observed_inspect("at_kill").get("error")
        why = f"the thread could not be read after the restart ({err})" if err else "the recovery did not say whether the thread survived"
        return [verdict(PROPERTY, "unknown", f"{point}: {why}", points=[point], trial_ids=[r.trial_id for r in untold])]
    return [
        verdict(
            PROPERTY,
            "holds",
            f"{point}: thread {', '.join(t for _, t in kept)} found after the restart",
            points=[point],
            trial_ids=[tr for tr, _ in kept],
            note=note,
        )
    ]


def combined(parts: list[Verdict]) -> Verdict:
    """LS over the kill points (``combine``), with every point's thread ids (lost or kept) in the note."""
    out = combine(PROPERTY, parts)
    entries = [e for v in parts if v.evidence.note for e in v.evidence.note.split("; ")]
    if entries:
        out.evidence.note = "; ".join(entries)[:2000]
        if out.status == "holds":  # the ids from every entry, not from the cut note (an id past the cut would go)
            out.reason += f" (threads kept: {', '.join(sorted({e.split()[1] for e in entries if e.startswith('kept ')}))})"
    return out


def _check(cell: Cell, code: str, dry: TrialRecord | None, parts: list[Verdict]) -> Verdict:
    return combined(parts)


# the sweep's add-on (``chaos.kinds.sweep_addon``): LS at each point, over the cell with every thread's id
ADD_ON = SweepAddOn(properties=(LS,), properties_of=properties_of, judge=point_verdicts, check=_check)
