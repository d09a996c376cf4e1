"""A database connection lost under the saver, at a sweep's kill points: the fault and CL (names no kind).

Why: LangGraph 5675, 7304 and 8419: a pooled connection behind PgBouncer, or one to a restarted
Postgres, fails on the saver's next ``put``. A database lost by accident is an environment fault
(the trial is repeated, never evidence); with ``fault: db_disconnect`` the scenario asks for it.
At each kill point the victim is not killed: standing stopped at the boundary, its own saver
connection is terminated (``pg_terminate_backend`` of the backends whose ``application_name`` is
the racer's, ``chaos.running.trial.application_name``: no other session is touched, since other
runs share this Postgres; on a server of the framework's own, ``TargetInfo.cut_backends``, the
framework finds that racer's connections and kills them, ``chaos.targets.hooks.CutsConnections``),
then the victim is released and runs on. Its failure on that
connection is what the trial measures, not an environment fault (``TrialRun.measures_env``). A
fresh racer then reads what is durable and resumes with the scenario's resume form (EO, PC and
LIVENESS are judged as after a kill).

**CL** (a lost connection is survived or refused, never silent), per kill point:

* holds, *reconnected*: the victim finished (done, or waiting for a human) and the store holds
  what the uninterrupted run left there (as many checkpoints, the same next tasks, every task
  complete): the saver reconnected or never needed the lost connection again;
* holds, *failed loudly*: the victim's call raised (the error is named);
* violated, *lost silently*: the victim finished with no error, yet the store lacks what it
  reported done (fewer checkpoints, tasks not recorded complete, a different next), or it hung
  (neither reconnected nor failed within ``timeout_s``);
* unknown: no connection of the racer was found to terminate (the fault never fired), or the
  durable state is unreadable; vacuous when the racer finished without another saver call (the
  disconnect came after the run's last save: nothing was at stake).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NotRequired, TypedDict

from chaos.kinds.base import Property
from chaos.kinds.checking import verdict
from chaos.kinds.sweep_addon import AtPoint, SweepAddOn, TrialSteps
from chaos.kinds.sweep_options import SweepOptions
from chaos.records import TrialRecord, Verdict, error_of
from chaos.running.trial import application_name
from chaos.targets import CutsConnections, get_target, hooks_of

if TYPE_CHECKING:
    from chaos.running.trial import TrialRun
    from chaos.scenario.model import Cell


CL = Property(
    "CL", "a lost connection is survived or refused, never silent", "a-connection-lost-under-the-saver-cl-sweeps-with-fault-db_disconnect"
)
PROPERTY = CL.code
TERMINATE_WAIT_MS = 10_000  # pg_terminate_backend waits (at most this) until the backend has exited


def properties_of(cell: Cell, dry: TrialRecord | None = None, trials: list[TrialRecord] | None = None) -> tuple[str, ...]:
    return (PROPERTY,) if SweepOptions.of(cell.scenario).fault == "db_disconnect" else ()


class Disconnect(TypedDict):
    """``observations["fault"]`` of a ``db_disconnect`` trial: the backends of the racer's saver
    connection (by ``application_name``) found, and those terminated; ``how`` they were found on a
    server of the framework's own (``cut``)."""

    fault: str
    application_name: str
    pids: list[int]
    terminated: list[int]
    how: NotRequired[str]


def terminate(dsn: str, name: str) -> Disconnect:
    """Terminate the backends named ``name`` (one racer's saver connection) and wait for them to exit."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True, connect_timeout=10, application_name="chaos-orchestrator") as conn:
        rows = conn.execute(
            "SELECT pid, pg_terminate_backend(pid, %s) FROM pg_stat_activity WHERE application_name = %s AND pid <> pg_backend_pid()",
            (TERMINATE_WAIT_MS, name),
        ).fetchall()
    return {
        "fault": "db_disconnect",
        "application_name": name,
        "pids": [int(r[0]) for r in rows],
        "terminated": [int(r[0]) for r in rows if r[1]],
    }


def cut(run: TrialRun, name: str) -> Disconnect:
    """Terminate the connections of the racer named ``name``: on the run's Postgres by their
    ``application_name`` (``terminate``), on a server of the framework's own (its
    ``TargetInfo.cut_backends``) by the framework (``chaos.targets.hooks.CutsConnections``)."""
    target = run.cell.scenario.target
    if target.backend not in get_target(target.framework).cut_backends:
        return terminate(str(run.store.get("dsn") or ""), name)
    hooks = hooks_of(target.framework)
    if not isinstance(hooks, CutsConnections):
        raise RuntimeError(
            f"{target.framework} lists backend {target.backend} in cut_backends without cutting connections (CutsConnections)"
        )
    done = hooks.cut_connections(run.ctx.run_id, target.backend, name, run.dir, run.ctx.host_context(run.cell).python)
    return {"fault": "db_disconnect", "application_name": name, "pids": done.found, "terminated": done.terminated, "how": done.how}


def expected_of(after: Mapping[str, object]) -> dict[str, object]:
    """What the uninterrupted run left durable (``after``: its racer's inspection after it finished)."""
    return {k: after.get(k) for k in ("checkpoints", "next", "completed_tasks", "pending_interrupts")}


def instead_of_kill(run: TrialRun, point: str, dry: TrialRecord, steps: TrialSteps) -> TrialRecord | None:
    """With ``fault: db_disconnect`` the point is no kill: the racer's connection is lost there
    (``disconnect_trial``, against what the dry run left durable); None with any other fault."""
    if not properties_of(run.cell):
        return None
    run.observations["expected"] = expected_of(dict(dry.observations.get("after") or {}))
    return disconnect_trial(run, point, steps)


def disconnect_trial(run: TrialRun, point: str, steps: TrialSteps) -> TrialRecord:
    """Stop the victim at ``point``, terminate its saver connection, let it run on; then a fresh racer
    inspects the store and resumes (held until the victim has exited). ``steps``: the sweep's own
    (its actions, its resume and how it collects the resume), passed in by the sweep, so this
    module does not import the sweep that imports it."""
    (victim,) = run.start([run.spec("victim", actions=steps.actions, armed=(point,))])
    action = steps.resume
    (rec,) = run.start([run.spec("resume", actions=[action], inspect_before=True, inspect_after=True, hold=True)])
    if not run.wait_arrival(victim, point):
        hung = run.wait_exit([victim])
        run.collect(victim, "victim", "run", hung=bool(hung))
        return run.record(valid=False, invalid_reason=f"barrier {point} was never reached", fault_fired=False)
    try:
        report = cut(run, application_name(run.thread_id, "victim"))
    except Exception as exc:  # the orchestrator could not reach the server: not the framework's doing
        run.kill(victim)
        run.collect(victim, "victim", "run", killed_on_purpose=True)
        return run.record(valid=False, invalid_reason=f"harness error: could not terminate the connection ({type(exc).__name__}: {exc})")
    run.observations["fault"] = report
    if not report["terminated"]:
        run.kill(victim)
        run.collect(victim, "victim", "run", killed_on_purpose=True)
        return run.record(valid=False, invalid_reason=f"no connection of racer victim to terminate at {point}", fault_fired=False)
    run.measures_env.add("victim")  # its lost connection is the measurement, not the environment's fault
    run.release(victim, point)
    hung = run.wait_exit([victim])
    out = run.collect(victim, "victim", "run", hung=bool(hung))
    outcomes = out.outcomes
    failed = next((o for o in outcomes if o.get("status") == "error"), None)
    run.observations["disconnected"] = {
        "status": "hung" if hung else (out.status if out.status != "ok" else (outcomes[-1].get("status") if outcomes else None)),
        "error": error_of(failed),
        "blame": out.blame,
        "persistence_errors": [e for o in outcomes for e in o.get("persistence_errors") or []],
        "store_calls_after": store_calls_after([t["barrier"] for t in out.trace], point),
    }
    if out.status in ("crashed", "harness_error"):
        return run.record(
            valid=False, invalid_reason=f"victim {out.status} after its connection was terminated: {out.blame_reason}", fault_fired=True
        )
    _, failed_rec = steps.last_resume(run, rec, action)
    return failed_rec if failed_rec is not None else run.record(valid=True, fault_fired=True)


def store_calls_after(trace: list[str], point: str) -> int:
    """Saver calls the racer began at or after ``point`` (the call of a ``:before`` point is one):
    none means the lost connection was never asked for anything again."""
    at = trace.index(point) if point in trace else len(trace)
    return sum(1 for b in trace[at:] if ":before" in b and not b.startswith("effect("))


def _short(err: dict | None) -> str:
    err = err or {}
    return f"{err.get('type')}: {' '.join(str(err.get('message') or '').split())[:120]}"


def _lost(rec: TrialRecord) -> str | None:
    """How the store falls short of what the uninterrupted run left, when the victim finished (None: it does not)."""
    want = rec.observations.get("expected") or {}
    at = rec.observations.get("at_kill") or {}
    if at.get("error") or at.get("checkpoints") is None or want.get("checkpoints") is None:
        return None
    gaps = []
    if at["checkpoints"] < want["checkpoints"]:
        gaps.append(f"{at['checkpoints']} of {want['checkpoints']} checkpoints")
    missing = sorted(set(want.get("completed_tasks") or []) - set(at.get("completed_tasks") or []))
    if missing:
        gaps.append(f"{', '.join(missing)} not recorded complete")
    if list(at.get("next") or []) != list(want.get("next") or []):
        gaps.append(f"next={at.get('next')} (the uninterrupted run: {want.get('next')})")
    return "; ".join(gaps) or None


def point_cl(point: str, valid: list[TrialRecord]) -> Verdict:
    loud, durable, silent, unread, idle = [], [], [], [], []
    for r in valid:
        d = r.observations.get("disconnected") or {}
        at = r.observations.get("at_kill") or {}
        if d.get("status") == "hung":
            silent.append((r, "the racer hung after its connection was terminated: it neither reconnected nor failed"))
        elif d.get("error"):
            loud.append((r, _short(d["error"])))
        elif at.get("error") or at.get("checkpoints") is None:
            unread.append(r)
        elif gap := _lost(r):
            swallowed = d.get("persistence_errors") or []
            also = f" ({len(swallowed)} failed write(s) swallowed: {_short(swallowed[0])})" if swallowed else ""
            silent.append((r, f"the racer finished ({d.get('status')}) with no error, yet the store holds {gap}{also}"))
        elif d.get("store_calls_after") == 0:
            idle.append(r)  # finished without asking the saver for anything again: nothing was at stake
        else:
            durable.append(r)
    if silent:
        r0, why = silent[0]
        return verdict(
            PROPERTY,
            "violated",
            f"{point}: connection terminated; lost silently: {why} (in {len(silent)} of {len(valid)} repeats)",
            points=[point],
            trial_ids=[r.trial_id for r, _ in silent],
        )
    if not loud and not durable:
        if idle:
            return verdict(
                PROPERTY,
                "unknown",
                f"{point}: vacuous, the racer made no saver call after its connection was terminated (the run was saved already)",
                points=[point],
                vacuous=True,
            )
        return verdict(PROPERTY, "unknown", f"{point}: the durable state after the disconnect is unreadable", points=[point])
    parts = []
    if durable:
        parts.append(f"{len(durable)} reconnected (the run finished and every checkpoint is durable)")
    if loud:
        parts.append(f"{len(loud)} failed loudly ({loud[0][1]})")
    return verdict(
        PROPERTY,
        "holds",
        f"{point}: connection terminated; " + "; ".join(parts),
        points=[point],
        trial_ids=[r.trial_id for r in durable] + [r.trial_id for r, _ in loud],
    )


def point_verdicts(at: AtPoint) -> list[Verdict]:
    """CL at one kill point (nothing unless the cell's fault is ``db_disconnect``)."""
    if not properties_of(at.cell):
        return []
    point, recs = at.point, at.recs
    valid = [r for r in recs if r.valid]
    if not valid:
        why = recs[0].invalid_reason if recs else "no trial"
        return [verdict(PROPERTY, "unknown", f"{point}: {why}", points=[point], trial_ids=[r.trial_id for r in recs])]
    return [point_cl(point, valid)]


def explain(rec: TrialRecord) -> list[str]:
    """Plain words for a disconnected trial that lost its writes silently (empty for any other)."""
    d = rec.observations.get("disconnected")
    if not d or d.get("error") or d.get("status") == "hung":
        return []
    gap = _lost(rec)
    if gap is None:
        return []
    return [
        f"at {rec.point}, chaos terminated racer victim's database connection ({len(rec.observed('fault', Disconnect).get('terminated') or [])} "
        f"backend(s)); the racer went on and finished ({d.get('status')}) without an error, yet the store holds {gap}: "
        "the saver lost the write silently"
    ]


# the sweep's add-on (``chaos.kinds.sweep_addon``): the lost connection in place of the kill, CL at each point
ADD_ON = SweepAddOn(properties=(CL,), properties_of=properties_of, instead_of_kill=instead_of_kill, judge=point_verdicts, explain=explain)
