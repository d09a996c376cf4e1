"""A database that loses its connections is the environment's fault, never the framework's.

A background thread terminates the run's Postgres backends (``pg_terminate_backend``, in a bounded
loop) while a real LangGraph race and a real kill sweep run on the postgres backend. The trials the
lost connections spoiled are counted as environment faults, repeated within ``env_retries``, and
the verdicts are those of the same scenario without the fault. The run's racers connect with their
own ``application_name`` and the thread terminates only backends whose client is one of this
machine's racers (by TCP port), so the orchestrator's own connections and other runs are left alone.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psutil
import psycopg
import pytest
from kits.runs import run_text

from chaos.running import registry

APP = "chaos_env_fault_test"


def _with_app_name(dsn: str) -> str:
    return dsn + ("&" if "?" in dsn else "?") + f"application_name={APP}"


def _racer_ports() -> list[int]:
    """The local TCP ports of every racer's connections: only racers lose their database here (the
    orchestrator's own connections are another issue's fault)."""
    ports = []
    for pid, _, _ in registry.racer_processes():
        try:
            ports += [c.laddr.port for c in psutil.Process(pid).net_connections(kind="tcp") if c.raddr]
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return ports


@contextmanager
def terminating_backends(
    dsn: str, enough: threading.Event, pace: float = 0.02, begin: threading.Event | None = None
) -> Iterator[list[int]]:
    """Terminate every backend of the run, round after round (every ``pace`` seconds, from when
    ``begin`` is set if given), until ``enough`` is set (the run saw spoiled trials) or the run is
    over (the block ends); yields the list of terminated backend pids. Never a number of rounds: that
    is a time window, and a run whose trials come late (a loaded machine) outlives it: a fresh
    clone's suite saw one backend terminated and no trial spoiled, and 60 rounds here leave none
    or two of the four spoiled trials the story asks for."""
    killed: list[int] = []
    stop = threading.Event()

    def loop() -> None:
        while begin is not None and not begin.is_set() and not stop.is_set():
            stop.wait(pace)  # not yet: the fault's start, not synchronisation
        with psycopg.connect(dsn, autocommit=True) as conn:
            while not (stop.is_set() or enough.is_set()):
                ports = _racer_ports()
                if ports:
                    rows = conn.execute(
                        "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE application_name = %s AND client_port = ANY(%s) AND pid <> pg_backend_pid()",
                        (APP, ports),
                    ).fetchall()
                    killed.extend(pid for pid, ok in rows if ok)
                stop.wait(pace)  # the fault's pace, not synchronisation: the run never waits for it

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    try:
        yield killed
    finally:
        stop.set()
        t.join(timeout=30)


def _statuses(results) -> dict[str, str]:
    return {f"{c.cell_id}/{v.property}": v.status for c in results.cells for v in c.verdicts}


def _point_statuses(results) -> dict[str, str]:
    return {f"{p.point}/{v.property}": v.status for c in results.cells for p in c.points for v in p.verdicts}


def _run(tmp_path, name: str, text: str, enough: threading.Event | None = None):
    seen: list[str] = []

    def on_trial(rec) -> None:
        if rec.fault == "environment":
            seen.append(rec.trial_id)
            if enough is not None and len(seen) >= 4:
                enough.set()  # enough faults seen: the rest of the run goes unfaulted

    d = tmp_path / name
    d.mkdir()
    return run_text(d, text, on_trial=on_trial), seen


RACE = """\
    name: pg_race
    kind: race
    target: {framework: langgraph, backend: postgres}
    workload: gate_after_interrupt
    resume: "command:true"
    racers: {k: 2, placement: local}
    trials: 4
    env_retries: 6
    seed: 11
"""

SWEEP = """\
    name: pg_sweep
    kind: kill_sweep
    target: {framework: langgraph, backend: postgres, durability: sync}
    workload: three_step
    resume: none
    trials: 1
    env_retries: 6
    seed: 11
"""


@pytest.mark.parametrize("scenario", [RACE, SWEEP], ids=["race", "sweep"])
def test_terminated_backends_are_environment_faults_and_change_no_verdict(scenario, pg_dsn, tmp_path, monkeypatch):
    monkeypatch.setenv("CHAOS_PG_DSN", _with_app_name(pg_dsn))
    calm, calm_faults = _run(tmp_path, "calm", scenario)
    assert calm_faults == [] and calm.results.summary.environment == 0

    enough = threading.Event()
    with terminating_backends(pg_dsn, enough) as killed:
        faulted, faults = _run(tmp_path, "faulted", scenario, enough)
    assert killed, "no backend of the run was terminated"
    res = faulted.results
    # the spoiled trials are counted, never valid, and repeated
    assert len(faults) >= 4 and res.summary.environment == len(faults)
    assert res.summary.retried == len(faults)  # each spoiled attempt was repeated once, within the budget
    # the verdicts are those of the calm run: a lost connection is no evidence against the framework
    assert _statuses(res) == _statuses(calm.results)
    assert _point_statuses(res) == _point_statuses(calm.results)
    assert res.exit_code == calm.results.exit_code
    assert not res.cells[0].failure  # a fault in a cell's first trial no longer abandons the cell


ONE_POINT = """\
    name: pg_one_point
    kind: kill_sweep
    target: {framework: langgraph, backend: postgres, durability: sync}
    workload: three_step
    resume: none
    kill_points: ["put(step=3,source=loop):before"]
    trials: 20
    env_retries: 6
    seed: 11
"""


def test_one_kill_point_repeated_20_times_under_terminated_backends_ends_as_without_them(pg_dsn, tmp_path, monkeypatch):
    """Issue 24: killed at ``put(step=3):before``, the victim has run ``c`` and LangGraph has sent c's
    ``put_writes`` to its background executor. With backends terminated every 0.1 s, that write can
    fail on the terminated connection before the kill, with nobody raising it yet: the store at the
    kill lacks c's writes, the resume runs ``c`` again, and a trial that looked valid showed
    "duplicated c" (EO violated, exit 1, where the calm run holds). The victim's barrier record now
    names the failed store call, so the trial is an environment fault, repeated like the others.
    The fault begins once the dry run is journaled: a dry run spoiled ``env_retries`` times in a row
    leaves the cell unknown (exit 2), which is honest but no comparison."""
    monkeypatch.setenv("CHAOS_PG_DSN", _with_app_name(pg_dsn))
    calm, calm_faults = _run(tmp_path, "calm", ONE_POINT)
    assert calm_faults == [] and calm.results.exit_code == 0

    never, begun = threading.Event(), threading.Event()
    faults: list[str] = []

    def on_trial(rec) -> None:
        begun.set()  # the dry run (the baseline) is journaled: the kill trials meet the fault
        if rec.fault == "environment":
            faults.append(rec.trial_id)

    (tmp_path / "faulted").mkdir()
    with terminating_backends(pg_dsn, never, pace=0.1, begin=begun) as killed:
        faulted = run_text(tmp_path / "faulted", ONE_POINT, on_trial=on_trial)
    assert killed, "no backend of the run was terminated"
    res = faulted.results
    assert faults and res.summary.environment == len(faults) and res.summary.retried >= 1
    assert _statuses(res) == _statuses(calm.results)
    assert _point_statuses(res) == _point_statuses(calm.results)
    assert res.exit_code == calm.results.exit_code
    # no valid repeat whose store at the kill lacks c, which its victim ran before it was killed
    point = res.cells[0].points[0]
    assert set(point.distribution) <= {"exactly once", "invalid"}, point.distribution


def test_a_store_write_that_failed_before_the_kill_is_an_environment_fault(pg_dsn, tmp_path):
    """The evidence itself, with a real PostgresSaver: its backend is terminated, so the instrumented
    put_writes raises; the racer's barrier record keeps the failure, and a kill after it blames the
    environment (the store at the kill lacks a write the framework never got to raise)."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    from chaos.racer.barrier import BarrierClient
    from chaos.running.trial import store_failed_before_kill
    from chaos.targets.langgraph.session import instrument

    barrier = BarrierClient(directory=str(tmp_path), racer_id="victim")
    with psycopg.connect(pg_dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
        saver = instrument(PostgresSaver(conn), barrier)
        with psycopg.connect(pg_dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "1"}}
        with pytest.raises(psycopg.OperationalError):
            saver.put_writes(config, [("log", ["c"])], "task-c", "('__pregel_pull', 'c')")
    assert [e["call"] for e in barrier.store_errors] == ["put_writes(node=c,channels=log)"]
    arrival = {"barrier": "put(step=3,source=loop):before#1", "store_errors": barrier.store_errors}
    blame = store_failed_before_kill([arrival], "langgraph", "three_step")
    assert blame is not None and blame.party == "environment"
    assert "put_writes(node=c,channels=log)" in blame.reason and "before the kill at put(step=3" in blame.reason
    # a kill with no failed store call before it blames no one: the trial is evidence
    assert store_failed_before_kill([{"barrier": "x", "store_errors": []}], "langgraph") is None
