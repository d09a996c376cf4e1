"""Warm racers on SSH hosts: one fork server per host over one SSH channel, racers forked there.

What the user sees: the same trials as with cold SSH racers (valid races across hosts, confirmed
kills, equal per-boundary sweep results) and no process of the run left on any host: not after
the run, not when the connection drops mid-trial, not when the host's sshd session is killed.
Real sshd in network namespaces (tests/kits/lab.py), a real Postgres ledger and checkpoint store.
"""

from __future__ import annotations

import os
import signal

import pytest
from kits.racekit import new_run_id, race_scenario
from kits.warmkit import assert_same_race, race_records, sweep_results

from chaos.launchers import make_launcher
from chaos.launchers.ssh import SshLauncher
from chaos.launchers.warm.ssh import SshWarmLauncher
from chaos.running import pgstore
from chaos.running.trial import RunContext, TrialRun, wait_until
from chaos.scenario.model import expand

# the SSH lab: one per machine (fixed addresses, a lock); its files run on one worker, one after another
pytestmark = pytest.mark.xdist_group("lab")

SWEEP_POINTS = (0, 9, 16)


def _run_processes(lab) -> list[int]:
    """Racers (cold or warm) and fork servers anywhere in the lab hosts' namespaces."""
    return lab.chaos_processes(b"chaos.racer.main", b"chaos.racer.forkserver")


@pytest.fixture
def pg(lab, pg_dsn):
    """A run id with its Postgres schema, the DSN as the lab hosts see it, and the store/ledger config."""
    dsn = lab.pg_dsn(pg_dsn)
    made = []

    def new_run() -> dict:
        run_id = new_run_id()
        pgstore.create_run_schema(dsn, run_id)
        made.append(run_id)
        return {
            "run_id": run_id,
            "ledger_config": {"kind": "postgres", "dsn": dsn, "table": "chaos_effects"},
            "store_for": pgstore.store_for(dsn, run_id),
        }

    yield new_run
    for run_id in made:
        pgstore.drop_run_schema(dsn, run_id)


def _launcher(lab, run_id, hosts=("lab1", "lab2"), cls=SshWarmLauncher):
    return cls(run_id, hosts=list(hosts), inventory=str(lab.inventory()))


def test_hosts_placement_starts_warm_unless_asked_cold(lab):
    placement = {"hosts": ["lab1"], "inventory": str(lab.inventory())}
    warm = make_launcher(placement, None, new_run_id())
    cold = make_launcher(placement, None, new_run_id(), start="cold")
    try:
        assert isinstance(warm, SshWarmLauncher) and type(cold) is SshLauncher
    finally:
        warm.reap()
        cold.reap()


def test_a_warm_race_across_two_hosts_is_valid_and_leaves_nothing(lab, pg, tmp_path):
    run = pg()
    launcher = _launcher(lab, run["run_id"])
    servers: list[dict] = []
    start_group = launcher.start_group

    def noting(specs, workdir):
        handles = start_group(specs, workdir)
        servers.append({name: c.pid for name, c in launcher.servers.items()})
        return handles

    launcher.start_group = noting  # type: ignore[method-assign]
    recs = race_records(tmp_path, launcher, k=3, trials=3, backend="postgres", **run)
    for rec in recs:
        assert rec.valid, rec.invalid_reason
        assert {row["host"] for row in rec.ledger} == {"lab1", "lab2"}  # the hosts' own hostnames
        assert {o.host for o in rec.racers[1:]} == {"lab1", "lab2"}
        assert 1 <= rec.observations["fires"] <= 3
    per_host = {name: {s[name] for s in servers if name in s} for name in ("lab1", "lab2")}
    assert all(len(pids) == 1 for pids in per_host.values()), per_host  # one server per host, every trial
    assert launcher.sessions == {}  # reaped and disconnected
    assert _run_processes(lab) == []


def test_a_warm_kill_sweep_on_a_host_equals_the_cold_one(lab, pg, tmp_path):
    cold_run, warm_run = pg(), pg()
    cold = sweep_results(
        tmp_path / "cold", _launcher(lab, cold_run["run_id"], ["lab1"], SshLauncher), SWEEP_POINTS, backend="postgres", **cold_run
    )
    warm = sweep_results(tmp_path / "warm", _launcher(lab, warm_run["run_id"], ["lab1"]), SWEEP_POINTS, backend="postgres", **warm_run)
    assert warm == cold  # each kill confirmed by the exit status the server reported (sweep_results)
    assert _run_processes(lab) == []


def test_a_warm_race_on_hosts_saturates_like_a_cold_one(lab, pg, tmp_path):
    k = 3
    cold_run, warm_run = pg(), pg()
    cold = race_records(tmp_path / "cold", _launcher(lab, cold_run["run_id"], cls=SshLauncher), k, 3, backend="postgres", **cold_run)
    warm = race_records(tmp_path / "warm", _launcher(lab, warm_run["run_id"]), k, 5, backend="postgres", **warm_run)
    assert_same_race(cold, warm, k)
    assert {r.observations["launcher"] for r in warm} == {"ssh-warm"}


def _racer_at_gate(launcher, run, tmp_path):
    cell = expand(race_scenario(k=1, trials=1, backend="memory"), check=False)[0]
    ctx = RunContext(
        run_id=run["run_id"],
        run_dir=tmp_path,
        work_dir=tmp_path / "work",
        root_seed=1,
        launcher=launcher,
        ledger_config=run["ledger_config"],
        read_ledger=lambda t: [],
        store_for=lambda c, t, d: {},
        keep_work=True,
    )
    trial = TrialRun(ctx, cell, "c000-t0000")
    (h,) = trial.start([trial.spec("r0", actions=[{"op": "run"}], gate=True)])
    assert trial.wait_arrival(h, "gate"), h.log_tail()
    return h


def test_a_remote_kill_is_confirmed_by_the_exit_status_the_server_reports(lab, pg, tmp_path):
    launcher = _launcher(lab, pg()["run_id"], ["lab1"])
    try:
        h = _racer_at_gate(launcher, {**pg(), "run_id": launcher.run_id}, tmp_path)
        assert h.state() == "stopped" and h.arrivals()[0]["barrier"] == "gate"  # arrival came with "stopped"
        status = h.kill()
        assert status is not None and status.killed
    finally:
        launcher.reap()
    assert _run_processes(lab) == []


def _sshd_session_of(lab, server_pid_on_host: int) -> int:
    """The sshd process that is the parent of the fork server (its exec'd channel command)."""
    for h in lab.hosts:
        for pid in lab.processes_in(h):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"chaos.racer.forkserver" not in f.read():
                        continue
                with open(f"/proc/{pid}/stat", "rb") as f:
                    data = f.read()
            except OSError:
                continue
            ppid = int(data[data.rfind(b")") + 2 :].split()[1])
            with open(f"/proc/{ppid}/cmdline", "rb") as f:
                if b"sshd" in f.read() and pid == server_pid_on_host:
                    return ppid
    raise AssertionError("no sshd session runs the fork server")


@pytest.mark.parametrize("how", ["connection dropped", "sshd session killed"])
def test_losing_the_session_kills_and_reaps_the_remote_racers(lab, pg, tmp_path, how):
    run = pg()
    launcher = _launcher(lab, run["run_id"], ["lab2"])
    try:
        h = _racer_at_gate(launcher, run, tmp_path)
        assert len(_run_processes(lab)) >= 2  # the server, its racer (and the racers it keeps pre-forked)
        if how == "connection dropped":
            launcher.sessions["lab2"].client.get_transport().close()  # the orchestrator's side vanishes
        else:
            # the lab shares this kernel: the server's host pid is found by its command line
            (server,) = _host_pid_of_server(lab)
            os.kill(_sshd_session_of(lab, server), signal.SIGKILL)
        assert wait_until(lambda: h.state() == "exited", 30)
        assert wait_until(lambda: _run_processes(lab) == [], 15)
    finally:
        launcher.close()


def _host_pid_of_server(lab) -> list[int]:
    """The fork server: the one chaos process whose parent is none (its racers, pooled or not, are
    its children and keep its command line)."""
    procs = _run_processes(lab)
    out = []
    for pid in procs:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
        if int(data[data.rfind(b")") + 2 :].split()[1]) not in procs:
            out.append(pid)
    return out
