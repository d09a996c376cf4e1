"""Power loss and torn writes at a sweep's kill points: the fault, and DU and CV (names no kind).

Why: a SIGKILL keeps the page cache, so a kill alone never shows what a framework loses when the
machine loses power. With ``fault: power_loss`` or ``torn`` the trial's store lives on chaos's lazy
filesystem (``chaos.lazyfs``); after the kill is confirmed and before the resume racer opens the
store, ``inject`` drops every write never fsynced (``torn``: all but a prefix of the last one) and
records the filesystem's account of what was lost (``observations["fault"]``).

What it judges, per kill point (docs/contract.md, "Power loss and torn writes"):

* **DU** (durability of acknowledged state): a task the workflow went on from (the killed run fired
  an effect in a later task) must still be recorded complete after the fault; violated with the
  tasks missing, the lost writes (files, count, bytes) and what the resume did; holds when all of
  them are (also when the fault found nothing unsynced: every write was fsynced). ``unknown``
  (vacuous) when the run had not yet gone on from any task.
* **CV** (validity on load): the store as the fault left it is refused loudly (the inspection raised,
  or the resume raised before it fired anything: holds) or loaded into a state the resume carries to the same end (holds);
  violated when it loaded silently and the resume then failed (refused too late) or completed
  while skipping an effect (partial or default state taken as progress). ``unknown`` (vacuous) when
  the fault changed nothing on disk.

``fault: kill`` (the default) changes nothing: no verdict is added.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from chaos.kinds.base import Property
from chaos.kinds.checking import verdict
from chaos.kinds.sweep_addon import AtPoint, SweepAddOn
from chaos.kinds.sweep_options import SweepOptions
from chaos.records import TrialRecord, Verdict, error_field

if TYPE_CHECKING:
    from chaos.running.trial import TrialRun
    from chaos.scenario.model import Cell

ANCHOR = "power-loss-and-torn-writes-du-cv-sweeps-with-fault-power_loss--torn"
DU = Property("DU", "durability of acknowledged state", ANCHOR)
CV = Property("CV", "checkpoint validity", ANCHOR)
FAULT_PROPERTIES = (DU.code, CV.code)
LAZY_FAULTS = ("power_loss", "torn")  # the faults whose store lives on the lazy filesystem (db_disconnect: chaos.kinds.db_disconnect)
# faults that act on what every trial of a run shares (the run's database server, restarted): their
# cells' trials run one at a time, whatever ``--jobs`` says (``chaos.running.jobs``). Not the lazy
# faults: the run's one lazy filesystem serialises every operation and control request under one lock,
# and a power loss, a torn write, a durable image and a forget each act on one trial's folder only
# (``chaos.lazyfs.fs``), so one trial's fault never touches another's pending writes
SHARED_FAULTS = ("db_restart",)


def properties_of(cell: Cell, dry: TrialRecord | None = None, trials: list[TrialRecord] | None = None) -> tuple[str, ...]:
    """The properties a cell's fault adds to its sweep (none for ``kill``)."""
    return FAULT_PROPERTIES if SweepOptions.of(cell.scenario).fault in LAZY_FAULTS else ()


def inject(run: TrialRun) -> str | None:
    """Lose power (or tear the last write) under the trial's store, after the kill: None when done
    (or nothing to do), else why it could not be (a harness fault: the trial is invalid)."""
    fault = SweepOptions.of(run.cell.scenario).fault
    if fault not in LAZY_FAULTS:
        return None
    lazy = run.ctx.lazy
    if lazy is None:
        return f"harness error: fault {fault} without a lazy filesystem"
    try:
        report = lazy.torn(run.store_folder) if fault == "torn" else lazy.power_loss(run.store_folder)
    except Exception as exc:  # the filesystem process died: not the framework's fault
        return f"harness error: the lazy filesystem did not answer ({type(exc).__name__}: {exc})"
    run.observations["fault"] = report
    return None


class TornWrite(TypedDict):
    """The write a torn fault cut: its file, ledger of the filesystem (``seq``), offset, length and the bytes kept."""

    path: str
    seq: int
    offset: int
    length: int
    persisted: int


class FaultReport(TypedDict, total=False):
    """``observations["fault"]``: what the lazy filesystem lost (``chaos.lazyfs.fs`` ``drop``)."""

    fault: Literal["power_loss", "torn"]
    prefix: str
    lost_ops: int
    lost_bytes: int
    files: list[str]
    lost: list[dict[str, Any]]  # the latest 50 lost operations
    torn: TornWrite | None


def _report(rec: TrialRecord) -> FaultReport:
    return rec.observed("fault", FaultReport)


def _durable_files(rec: TrialRecord) -> list[str]:
    """Files whose unsynced writes the fault lost, but SQLite's ``-shm`` (a memory index rebuilt after a crash)."""
    return [f for f in _report(rec).get("files") or [] if not f.endswith("-shm")]


def _changed_disk(rec: TrialRecord) -> bool:
    """Did the fault change what a reader finds (lost a write to a file that holds state, or tore one)?"""
    torn = _report(rec).get("torn")
    return bool(_durable_files(rec)) or bool(torn and torn.get("persisted"))


def _lost_words(rec: TrialRecord) -> str:
    r = _report(rec)
    files = ", ".join(f.split("/", 1)[-1] for f in r.get("files") or []) or "no file"
    out = f"{r.get('lost_ops', 0)} unsynced write(s) ({r.get('lost_bytes', 0)} bytes) to {files} lost"
    t = r.get("torn")
    if t:
        out += f"; torn: {t['persisted']} of {t['length']} bytes of the last write to {t['path'].split('/', 1)[-1]} at offset {t['offset']} kept"
    return out


class KillObs(TypedDict, total=False):
    """``observations["kill"]`` of a sweep trial: the kill point (a chain's name), the signal, confirmed."""

    point: str
    exit_signal: int | None
    confirmed: bool


def _task_key(row: Mapping[str, object], by_id: bool) -> str:
    """What names one task run: its id (a node that runs again in a loop is a new task), else its
    node and (sub)graph namespace, else the label it gave its effect."""
    if by_id and row.get("task_id"):
        return str(row["task_id"])
    if row.get("node"):
        return f"{row['node']} (subgraph {row['namespace']})" if row.get("namespace") else str(row["node"])
    return str(row["task"])


def _by_id(rec: TrialRecord) -> bool:
    return rec.observed_inspect("at_kill").get("completed_task_ids") is not None


def acknowledged(rec: TrialRecord) -> list[str]:
    """Tasks the killed run went on from: every task it fired an effect in, but the last one."""
    by_id = _by_id(rec)
    order: list[str] = []
    for row in sorted((r for r in rec.ledger if r["racer_id"] == "victim"), key=lambda r: r["seq"]):
        key = _task_key(row, by_id)
        if key not in order:
            order.append(key)
    return order[:-1]


def _names(rec: TrialRecord, keys: list[str]) -> list[str]:
    """Readable names of task keys: a task id is shown as its node (or label) and id."""
    out = []
    for k in keys:
        row = next((r for r in rec.ledger if r.get("task_id") == k), None)
        out.append(f"{row.get('node') or row['task']} (task {k[:8]})" if row else k)
    return out


def _missing(rec: TrialRecord) -> list[str] | None:
    """Acknowledged tasks the store no longer records complete after the fault (None: unreadable)."""
    at = rec.observed_inspect("at_kill")
    if at.get("error") or at.get("completed_tasks") is None:
        return None
    if _by_id(rec):
        done = set(at.get("completed_task_ids") or [])
    else:
        done = set(at.get("completed_tasks") or [])
        for ns, nodes in (at.get("completed_by_namespace") or {}).items():
            done |= {f"{n} (subgraph {ns})" for n in nodes} if ns else set(nodes)
    return _names(rec, [t for t in acknowledged(rec) if t not in done])


def _resume_words(rec: TrialRecord) -> str:
    o = rec.observed_outcome("resume_outcome")
    fired = rec.observations.get("resume_fired") or []
    if o.get("status") == "error":
        return f"the resume failed ({error_field(o.get('error'), 'type')})"
    if o.get("status") == "nothing_saved":
        return "the resume found nothing saved"
    return f"the resume {o.get('status') or 'did nothing'}" + (f" and fired {', '.join(fired)} again" if fired else "")


def point_du(point: str, valid: list[TrialRecord]) -> Verdict:
    if not any(acknowledged(r) for r in valid):
        return verdict(
            "DU", "unknown", f"{point}: vacuous, the run had not gone on from any task before the kill", points=[point], vacuous=True
        )
    bad = []
    for r in valid:
        miss = _missing(r)
        if not acknowledged(r) or not _changed_disk(r):
            continue
        if miss is None:
            err = r.observed_inspect("at_kill").get("error")
            bad.append((r, f"the store no longer loads ({error_field(err, 'type')}): the run is lost"))
        elif miss:
            bad.append((r, f"{', '.join(miss)} had been checkpointed and the run went on, but is not recorded complete any more"))
    if bad:
        r0, why = bad[0]
        return verdict(
            "DU",
            "violated",
            f"{point}: {why} ({_lost_words(r0)}); {_resume_words(r0)}",
            points=[point],
            trial_ids=[r.trial_id for r, _ in bad],
        )
    if not any(_changed_disk(r) for r in valid):
        missing = sorted({t for r in valid for t in _missing(r) or []})
        if missing:  # the fault took nothing: what is missing, a kill alone loses too (EO, PC judge it)
            return verdict(
                "DU",
                "unknown",
                f"{point}: the fault lost no state (all of it was fsynced); {', '.join(missing)} is missing after the kill alone",
                points=[point],
            )
        return verdict(
            "DU",
            "holds",
            f"{point}: every task the run went on from is still recorded complete (nothing was left unsynced to lose)",
            points=[point],
            trial_ids=[r.trial_id for r in valid],
        )
    r0 = next(r for r in valid if _changed_disk(r))
    return verdict(
        "DU",
        "holds",
        f"{point}: every task the run went on from is still recorded complete ({_lost_words(r0)}: none of it was acknowledged state)",
        points=[point],
        trial_ids=[r.trial_id for r in valid],
    )


def point_cv(point: str, valid: list[TrialRecord], lost_at: dict[str, list[str]]) -> Verdict:
    changed = [r for r in valid if _changed_disk(r)]
    if not changed:
        return verdict("CV", "unknown", f"{point}: vacuous, the fault changed no file that holds state", points=[point], vacuous=True)
    loud, late, partial, fine = [], [], [], []
    for r in changed:
        at = r.observed_inspect("at_kill")
        o = r.observed_outcome("resume_outcome")
        at_err, err = at.get("error"), o.get("error")
        if at_err:
            loud.append((r, f"{at_err.get('type')}: {str(at_err.get('message'))[:100]}"))
        elif not at.get("checkpoints") and not at.get("completed_tasks"):
            fine.append(r)  # nothing loaded: the run is lost (DU's matter), no state was misread
        elif o.get("status") == "error" and not r.observations.get("resume_fired"):
            # the resume raised before it did anything: it refused the store as it loaded it
            loud.append((r, f"on resume: {error_field(err, 'type')}: {str(error_field(err, 'message'))[:100]}"))
        elif o.get("status") == "error":
            late.append((r, f"{error_field(err, 'type')}: {str(error_field(err, 'message'))[:100]}"))
        elif lost_at.get(r.trial_id):
            partial.append((r, ", ".join(lost_at[r.trial_id])))
        else:
            fine.append(r)
    if late or partial:
        parts = []
        if late:
            r0, why = late[0]
            parts.append(f"the store loaded silently, and the resume failed later ({why}): refused too late")
        if partial:
            r0, keys = partial[0]
            parts.append(f"the store loaded silently, and the resume completed without {keys}: partial state taken as progress")
        r0 = (late or partial)[0][0]
        return verdict(
            "CV",
            "violated",
            f"{point}: " + "; ".join(parts) + f" ({_lost_words(r0)})",
            points=[point],
            trial_ids=[r.trial_id for r, _ in late + partial],
        )
    if loud:
        r0, why = loud[0]
        extra = f"; {len(fine)} other trial(s) loaded a consistent state" if fine else ""
        return verdict(
            "CV",
            "holds",
            f"{point}: refused loudly on load ({why}; {_lost_words(r0)}){extra}",
            points=[point],
            trial_ids=[r.trial_id for r in changed],
        )
    return verdict(
        "CV",
        "holds",
        f"{point}: loaded a consistent earlier state, which the resume carried to the end ({_lost_words(changed[0])})",
        points=[point],
        trial_ids=[r.trial_id for r in changed],
    )


def point_verdicts(at: AtPoint) -> list[Verdict]:
    """DU and CV at one kill point (nothing for ``fault: kill``); ``at.lost``: trial id -> effects the recovery skipped."""
    props = properties_of(at.cell)
    if not props:
        return []
    point, recs = at.point, at.recs
    valid = [r for r in recs if r.valid]
    if not valid:
        why = recs[0].invalid_reason if recs else "no trial"
        return [verdict(p, "unknown", f"{point}: {why}", points=[point], trial_ids=[r.trial_id for r in recs]) for p in props]
    return [point_du(point, valid), point_cv(point, valid, at.lost)]


def explain(rec: TrialRecord) -> list[str]:
    """Plain words for a faulted trial that lost acknowledged state (empty for any other trial)."""
    if not rec.observations.get("fault") or not _changed_disk(rec) or not acknowledged(rec):
        return []
    miss = _missing(rec)
    if miss == []:
        return []
    what = "the store no longer loads" if miss is None else f"{', '.join(miss)} is no longer recorded complete"
    point = rec.observed("kill", KillObs).get("point") or rec.point or "?"
    fault = "a power loss" if _report(rec).get("fault") == "power_loss" else "a torn write"
    return [
        f"killed at {point}, then {fault}: {_lost_words(rec)}; the run had gone on from {', '.join(_names(rec, acknowledged(rec)))}, "
        f"yet {what}; {_resume_words(rec)}: the framework acknowledged state it had not fsynced"
    ]


# the sweep's add-on (``chaos.kinds.sweep_addon``): the fault after the kill, DU and CV at each point
ADD_ON = SweepAddOn(properties=(DU, CV), properties_of=properties_of, after_kill=inject, judge=point_verdicts, explain=explain)
