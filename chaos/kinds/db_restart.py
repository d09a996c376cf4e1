"""A database restart during the recovery of a kill, at a sweep's chains of kill points: the fault and its words (names no kind).

Why: dbos-transact-py 716: a Postgres restart while a fresh process recovers the PENDING workflows
of a crashed one left some of them PENDING forever (the recovery logged the failed call and dropped
the workflow; DBOS's queue dequeues only ENQUEUED rows, so no one ran it again). A database lost
by accident is an environment fault (the trial is repeated, never evidence); with ``fault:
db_restart`` the scenario plans it, and what the framework makes of it is judged.

How: a chain of kill points (``crash_depth: 2``: ``P >> B``) whose last point is a restart, not a
kill. The victim is killed at ``P`` as in any sweep; the recovering racer reaches Postgres through
a relay of its own (``chaos.running.outage``); standing stopped at its own boundary ``B`` (e.g.
``recover(enqueue):before``: DBOS handing the workflow back to its queue), the relay goes down:
every connection of the racer is cut and its backends terminated (``pg_terminate_backend`` by its
``application_name``), and every reconnection is refused. The racer is released into the outage;
the database comes back after ``OUTAGE_S`` (2 s, the restart of 716) and once the relay has refused
a connection attempt of the racer, or when the racer has exited. The racer's thread that stood at
``B`` is the one about to call the database, so its call meets the outage (unless it is not
scheduled within those seconds). The racer then runs on under the framework's
own retries, and is judged as the last recovery of a chain is: EO, PC, and LIVENESS, whose words
here say the restart was planned, where it happened, and the workflow's status in the store after
the racer ran on (a workflow left PENDING: LIVENESS violated, naming it). Its lost connections are
the measurement, not an environment fault (``TrialRun.measures_env``).

Only the framework is restarted under: chaos's own reads of the racer's store (an adapter's
inspection before and after, its version check after DBOS's launch) reach the server directly
(``StoreSpec.observe_dsn``). Through the relay, such a read on the racer's main thread met the
outage while DBOS's recovery thread stood released into it, and DBOS 3.4.0's ``DBOSClient`` does
not retry its connection check: the instrument's error was reported as the recovery's (2026-12-02,
at load 1.6 to 5.7: 4 of 4 runs).

Honest limits: the server itself is not restarted (other trials and runs share it); the racer sees
what a restart shows a client (connections cut, reconnects refused, then accepted), but the cut is
a TCP reset from the relay, not the server's ``FATAL: terminating connection due to administrator
command`` (57P01), and a refusal is a connection accepted and closed, not ``Connection refused``.
DBOS 3.4.0's ``db_retry`` classifies all four the same (a lost connection, retried: each run
through ``retriable_postgres_exception``, 2026-12-02), so its verdicts do not rest on the difference;
its other threads (a queue poller, a notification listener) meet the outage too.
Racers run on this machine (``placement: local``): the relay listens on loopback.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, TypedDict, cast

from chaos.kinds.db_disconnect import terminate
from chaos.running.outage import Relay
from chaos.running.trial import application_name

if TYPE_CHECKING:
    from chaos.launchers import RacerHandle
    from chaos.racer.protocol import ActionOutcome, RacerSpec, StoreSpec
    from chaos.records import TrialRecord
    from chaos.running.trial import TrialRun

FAULT = "db_restart"
OUTAGE_S = 2.0  # how long the database is down (dbos-transact-py 716: a restart of about 2 s)


class Restart(TypedDict):
    """``observations["restart"]`` of a ``db_restart`` trial: where the database was restarted under
    which racer, the connections cut and backends terminated, and how the outage ended."""

    fault: str
    point: str
    racer: str
    application_name: str
    cut: int  # relayed connections cut
    terminated: list[int]  # backends of the racer terminated (those the cut had not ended yet)
    refused: int  # reconnect attempts refused while the database was down
    down_s: float  # how long it was down
    ended: str  # "back after the outage" | "the racer exited" | "timeout"


def through_relay(run: TrialRun, spec: RacerSpec) -> tuple[Relay, RacerSpec]:
    """``spec`` reaching the run's Postgres through a relay of its own (opened here; the caller closes it)."""
    relay, dsn = Relay.for_dsn(str(run.store["dsn"]))
    # the framework reaches the database through the relay; chaos's own reads of the durable state
    # (an adapter's inspection) go straight to it: the restart is the framework's, not the instrument's
    name = application_name(run.thread_id, spec["racer_id"])
    store: StoreSpec = {**spec["store"], "dsn": dsn, "observe_dsn": str(run.store["dsn"]), "application_name": name}
    return relay, {**spec, "store": store}


def restart_at(run: TrialRun, h: RacerHandle, point: str, relay: Relay, role: str) -> TrialRecord | None:
    """With ``h`` released from its hold: wait until it stands at ``point``, restart the database
    under it, release it into the outage and bring the database back once it was refused (or it
    exited). None when done; else the trial's (invalid) record."""
    if not run.wait_arrival(h, point):
        hung = run.wait_exit([h])
        out = run.collect(h, role, f"resume {run.cell.scenario.resume}", hung=bool(hung))
        return run.record(
            valid=False,
            invalid_reason=f"the recovery never reached {point}: no restart ({out.status}: {run.history[-1].detail})",
            fault_fired=True,
        )
    cut = relay.down()
    name = application_name(run.thread_id, h.racer_id)
    try:
        report = terminate(str(run.store.get("dsn") or ""), name)  # backends the cut left (ended by then, usually)
    except Exception as exc:  # the orchestrator could not reach Postgres: not the framework's doing
        relay.up()
        run.kill(h)
        run.collect(h, role, f"resume {run.cell.scenario.resume}", killed_on_purpose=True)
        return run.record(
            valid=False, invalid_reason=f"harness error: could not restart the racer's database ({type(exc).__name__}: {exc})"
        )
    run.measures_env.add(h.racer_id)  # its lost database is the measurement, not the environment's fault
    run.release(h, point)
    down_at = time.monotonic()
    # the outage is the fault itself (a restart's seconds), not a wait for something to happen: it
    # lasts OUTAGE_S and at least until a reconnect was refused, or until the racer has exited
    over = run.wait_until(lambda: h.state() == "exited" or (relay.refused > 0 and time.monotonic() - down_at >= OUTAGE_S))
    ended = "the racer exited" if h.state() == "exited" else ("back after the outage" if over else "timeout")
    relay.up()
    run.observations["restart"] = Restart(
        fault=FAULT,
        point=point,
        racer=h.racer_id,
        application_name=name,
        cut=cut,
        terminated=report["terminated"],
        refused=relay.refused,
        down_s=round(time.monotonic() - down_at, 3),
        ended=ended,
    )
    return None


def _restart(rec: TrialRecord) -> dict[str, object]:
    return dict(rec.observations.get("restart") or {})


class EngineFacts(TypedDict, total=False):
    """An adapter's own counts in an outcome's ``facts`` (DBOS's)."""

    connection_failures: int
    recovery_errors: list[str]


def _facts(o: ActionOutcome) -> EngineFacts:
    """An adapter's own counts in an outcome (DBOS's: ``connection_failures``, ``recovery_errors``)."""
    facts: object = o.get("facts")
    return cast(EngineFacts, facts) if isinstance(facts, dict) else EngineFacts()


def planned(rec: TrialRecord) -> str | None:
    """The words for a trial whose database chaos restarted during the recovery (None: it did not)."""
    r = _restart(rec)
    if not r:
        return None
    return (
        f"a planned database restart during the recovery (at {r.get('point')}: {r.get('cut', 0)} connection(s) cut, "
        f"{r.get('refused', 0)} reconnect(s) refused in {r.get('down_s', '?')} s down, then the database was back)"
    )


def stuck_words(rec: TrialRecord) -> str | None:
    """LIVENESS's words for a restarted trial whose workflow was not finished: the workflow's id and
    status in the store after the racer ran on, and the framework's retries and logged errors."""
    why = planned(rec)
    if why is None:
        return None
    after = rec.observed_inspect("after_resume")
    o = rec.observed_outcome("resume_outcome")
    status = after.get("workflow_status")
    # an engine's workflow (DBOS) by its id and status in the engine's tables; a thread by what it has next
    where = (
        f"workflow {after.get('workflow_id') or rec.thread_id} is {status} in the system database"
        if status
        else f"thread {rec.thread_id} stopped with next={after.get('next')}"
    )
    facts = _facts(o)
    said = []
    if facts.get("connection_failures"):
        said.append(f"the framework retried {facts['connection_failures']} failed connection(s)")
    if facts.get("recovery_errors"):
        said.append(f"the framework logged its recovery's error and went on: {' '.join(str(facts['recovery_errors'][0]).split())[:200]}")
    waited = o.get("waited_s")
    ran_on = f" after the recovering process ran on for {waited} s" if waited else ""
    return f"after {why}, {where}{ran_on}, with no process recovering it" + (f" ({'; '.join(said)})" if said else "")


def survived_words(rec: TrialRecord) -> str | None:
    """LIVENESS's words for a restarted trial whose workflow finished."""
    why = planned(rec)
    if why is None:
        return None
    n = _facts(rec.observed_outcome("resume_outcome")).get("connection_failures")
    return f"the recovery finished the run after {why}" + (f"; the framework retried {n} failed connection(s)" if n else "")


def explain(rec: TrialRecord) -> list[str]:
    """Plain words for a restarted trial whose workflow was left unfinished (empty for any other)."""
    after = rec.observed_inspect("after_resume")
    if not _restart(rec) or not after.get("next"):
        return []
    words = stuck_words(rec)
    return [f"{words}: the framework did not retry the recovery it lost to the restart"] if words else []
