"""Racers on SSH hosts (network-namespace lab with real sshd) sharing one Postgres ledger."""

from __future__ import annotations

import paramiko
import pytest
import yaml
from kits.racekit import new_run_id, race_scenario, run_races

from chaos.launchers import make_launcher
from chaos.launchers.ssh import HostError, SshLauncher, fingerprint
from chaos.remote.inventory import InventoryError, load_inventory
from chaos.running import pgstore
from chaos.running.trial import RunContext, TrialRun
from chaos.scenario.model import expand

# the SSH lab: one per machine (fixed addresses, a lock); its files run on one worker, one after another
pytestmark = pytest.mark.xdist_group("lab")


def _racer_pids(lab) -> list[int]:
    """Racer/wrapper processes anywhere in the lab hosts' namespaces."""
    return lab.chaos_processes(b"chaos.racer.main")


def test_two_hosts_share_one_postgres_ledger(lab, pg_dsn, tmp_path):
    dsn = lab.pg_dsn(pg_dsn)  # the server as the lab hosts reach it
    run_id = new_run_id()
    pgstore.create_run_schema(dsn, run_id)
    launcher = make_launcher({"hosts": ["lab1", "lab2"], "inventory": str(lab.inventory())}, None, run_id, start="cold")
    try:
        recs = run_races(
            race_scenario(k=2, trials=1, backend="postgres"),
            launcher,
            tmp_path,
            run_id=run_id,
            ledger_config={"kind": "postgres", "dsn": dsn, "table": "chaos_effects"},
            store_for=pgstore.store_for(dsn, run_id),
        )
        assert all(r.valid for r in recs), [r.invalid_reason for r in recs]
        for r in recs:
            assert {o.host for o in r.racers[1:]} == {"lab1", "lab2"}  # one racer per host
            assert {row["host"] for row in r.ledger} == {"lab1", "lab2"}  # the hosts' own hostnames
            assert r.observations["fires"] >= 1
        before_reap = launcher.remote_racers()
    finally:
        launcher.reap()
        pgstore.drop_run_schema(dsn, run_id)
    assert before_reap == {"lab1": [], "lab2": []}  # every racer had exited and been collected
    assert launcher.sessions == {}  # reap disconnects
    assert _racer_pids(lab) == []


def _gate_trial(tmp_path, launcher, dsn, run_id):
    s = race_scenario(k=1, trials=1, backend="memory")
    cell = expand(s, check=False)[0]
    ctx = RunContext(
        run_id=run_id,
        run_dir=tmp_path,
        work_dir=tmp_path / "work",
        root_seed=1,
        launcher=launcher,
        ledger_config={"kind": "postgres", "dsn": dsn, "table": "chaos_effects"},
        read_ledger=lambda t: [],
        store_for=lambda c, t, d: {},
        keep_work=True,
    )
    run = TrialRun(ctx, cell, "c000-t0000")
    (h,) = run.start([run.spec("r0", actions=[{"op": "run"}], gate=True)])
    assert run.wait_arrival(h, "gate"), h.log_tail()
    return h


def test_remote_kill_is_confirmed_and_leaves_nothing(lab, pg_dsn, tmp_path):
    run_id = new_run_id()
    launcher = make_launcher({"hosts": ["lab1"], "inventory": str(lab.inventory())}, None, run_id, start="cold")
    try:
        h = _gate_trial(tmp_path, launcher, lab.pg_dsn(pg_dsn), run_id)
        assert h.state() == "stopped" and h.arrivals()[0]["barrier"] == "gate"
        status = h.kill()
        assert status is not None and status.killed  # reported by the remote wrapper
        assert h.channel_exit == 137
    finally:
        launcher.reap()
        launcher.close()
    assert _racer_pids(lab) == []


def test_reap_kills_a_racer_left_stopped(lab, pg_dsn, tmp_path):
    run_id = new_run_id()
    launcher = make_launcher({"hosts": ["lab1"], "inventory": str(lab.inventory())}, None, run_id, start="cold")
    h = _gate_trial(tmp_path, launcher, lab.pg_dsn(pg_dsn), run_id)
    assert h.state() == "stopped" and _racer_pids(lab)
    launcher.reap()
    assert h.exit_status() is not None and h.exit_status().killed
    assert _racer_pids(lab) == []


def test_dropped_connection_kills_the_remote_racer(lab, pg_dsn, tmp_path):
    run_id = new_run_id()
    launcher = make_launcher({"hosts": ["lab2"], "inventory": str(lab.inventory())}, None, run_id, start="cold")
    h = _gate_trial(tmp_path, launcher, lab.pg_dsn(pg_dsn), run_id)
    assert _racer_pids(lab)
    launcher.sessions["lab2"].client.get_transport().close()  # the orchestrator's side vanishes
    assert h._done.wait(30)
    from chaos.running.trial import wait_until

    assert wait_until(lambda: _racer_pids(lab) == [], 15)
    launcher.close()


def _inventory(lab, tmp_path, **host_over):
    inv = yaml.safe_load(lab.inventory().read_text())
    inv["hosts"] = [dict(inv["hosts"][0], **host_over)]
    inv["retries"] = 0
    inv["connect_timeout_s"] = 3
    p = tmp_path / "inv.yaml"
    p.write_text(yaml.safe_dump(inv))
    return p


def test_changed_host_key_is_refused(lab, tmp_path):
    kh = tmp_path / "known_hosts"
    impostor = paramiko.Ed25519Key.from_private_key_file(str(lab.client_key))  # some other ed25519 key
    kh.write_text(f"{lab.hosts[0].address} ssh-ed25519 {impostor.get_base64()}\n")
    inv = yaml.safe_load(_inventory(lab, tmp_path).read_text())
    inv["known_hosts"] = str(kh)
    inv["trust_on_first_use"] = True  # even so: a changed key is never trusted
    (tmp_path / "inv.yaml").write_text(yaml.safe_dump(inv))
    with pytest.raises(HostError) as ei:
        SshLauncher(new_run_id(), hosts=["lab1"], inventory=tmp_path / "inv.yaml")
    msg = ei.value.message
    assert "host lab1 (root@10.77.0.11:22)" in msg and "host key CHANGED" in msg
    assert fingerprint(impostor) in msg


def test_unknown_host_key_rejected_unless_trusted_on_first_use(lab, tmp_path, capsys):
    inv = yaml.safe_load(_inventory(lab, tmp_path).read_text())
    inv["known_hosts"] = str(tmp_path / "empty_known_hosts")
    (tmp_path / "inv.yaml").write_text(yaml.safe_dump(inv))
    with pytest.raises(HostError, match=r"host lab1 .*unknown host key SHA256:"):
        SshLauncher(new_run_id(), hosts=["lab1"], inventory=tmp_path / "inv.yaml")
    launcher = SshLauncher(new_run_id(), hosts=["lab1"], inventory=tmp_path / "inv.yaml", trust_on_first_use=True)
    launcher.close()
    assert "trusting host key on first use" in capsys.readouterr().out
    assert lab.hosts[0].host_pub[1] in (tmp_path / "empty_known_hosts").read_text()


def test_unreachable_host_is_named(lab, tmp_path):
    p = _inventory(lab, tmp_path, name="ghost", address="10.77.0.1", port=2)  # nothing listens there
    with pytest.raises(HostError, match=r"^host ghost \(root@10\.77\.0\.1:2\): unreachable"):
        SshLauncher(new_run_id(), hosts=["ghost"], inventory=p)


def test_refused_key_and_missing_python_are_named(lab, tmp_path):
    import subprocess

    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    with pytest.raises(HostError, match=r"host lab1 .*authentication refused"):
        SshLauncher(new_run_id(), hosts=["lab1"], inventory=_inventory(lab, tmp_path, key=str(other)))
    with pytest.raises(HostError, match=r"host lab1 .*python '/opt/nowhere/python' does not run there"):
        SshLauncher(new_run_id(), hosts=["lab1"], inventory=_inventory(lab, tmp_path, python="/opt/nowhere/python"))


def test_inventory_is_strict(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("hosts:\n  - {name: a, address: 10.77.0.11, user: root, key: k, workdir: /w, colour: red}\n")
    with pytest.raises(InventoryError, match=r"bad\.yaml: hosts\.0\.colour: Extra inputs"):
        load_inventory(p)
    p.write_text("hosts:\n  - {name: a, address: 10.77.0.11, port: 70000, user: root, key: k, workdir: /w}\n")
    with pytest.raises(InventoryError, match=r"hosts\.0\.port"):
        load_inventory(p)
    p.write_text("hosts:\n  - {name: a, address: 'x;rm -rf', user: root, key: k, workdir: /w}\n")
    with pytest.raises(InventoryError, match=r"hosts\.0\.address"):
        load_inventory(p)
    inv = load_inventory("hosts/lab.yaml")
    assert [h.name for h in inv.hosts] == ["lab1", "lab2"]


def test_hosts_check_cli_reports_each_host(lab, tmp_path):
    import json
    import subprocess
    import sys

    inv = yaml.safe_load(lab.inventory().read_text())
    inv["retries"] = 0
    inv["hosts"].append(dict(inv["hosts"][0], name="ghost", address="10.77.0.1", port=2))
    p = tmp_path / "inv.yaml"
    p.write_text(yaml.safe_dump(inv))
    out = subprocess.run([sys.executable, "-m", "chaos", "hosts", "check", str(p), "--json"], capture_output=True, text=True)
    assert out.returncode == 3, out.stderr  # one host unusable
    res = {r["host"]: r for r in json.loads(out.stdout)}
    for name in ("lab1", "lab2"):
        r = res[name]
        assert r["ok"] and r["reachable"] and r["authenticated"] and r["hostname"] == name
        assert r["host_key"].startswith("ssh-ed25519 SHA256:")
        assert r["python"].startswith("3.") and r["versions"]["langgraph"]
        # same kernel clock, so the true offset is 0: the remote reading falls inside its round trip and
        # the midpoint estimate is off by at most half the best round trip (a fixed bound such as 50 ms
        # fails when a loaded machine stretches every round trip past 100 ms)
        assert abs(r["clock_offset_ms"]) <= r["rtt_ms"] / 2 + 0.01
    assert not res["ghost"]["ok"] and res["ghost"]["error"].startswith("host ghost (root@10.77.0.1:2): unreachable")


def test_scenario_runs_across_hosts_through_the_orchestrator(lab, pg_dsn, tmp_path, monkeypatch):
    """The crosshost scenario's shape, one trial, end to end: CLI-level run, Postgres everywhere."""
    from kits.runs import run_text

    monkeypatch.setenv("CHAOS_PG_DSN", lab.pg_dsn(pg_dsn))
    inv = lab.inventory()
    outcome = run_text(
        tmp_path,
        f"""
        name: crosshost_probe
        kind: race
        target: {{framework: langgraph, backend: postgres}}
        workload: gate_after_interrupt
        resume: "command:true"
        racers: {{k: 2, placement: {{hosts: [lab1, lab2], inventory: {inv}}}}}
        trials: 1
        seed: 5
        """,
    )
    run_dir = outcome.run_dir
    journal = [__import__("json").loads(line) for line in (run_dir / "journal.jsonl").read_text().splitlines()]
    (rec,) = journal
    assert rec["valid"], rec["invalid_reason"]
    assert {r["host"] for r in rec["ledger"]} == {"lab1", "lab2"}
    meta = (run_dir / "run.json").read_text()
    assert ":***@10.77.0.1" in meta and pg_dsn.split("@")[0] not in meta  # recorded, password redacted
    assert _racer_pids(lab) == []
    assert pgstore.schema_name(rec["run_id"]) not in pgstore.list_run_schemas(pg_dsn)


def test_lab_hosts_run_the_interpreter_chaos_runs_under(lab):
    """In a virtual environment (what a new user has) the hosts' `python3` was the machine's, without
    the venv's packages: every SSH test failed with "No module named 'langgraph'". The inventory's
    interpreter, run on a host over SSH, is this one: same prefix, same packages."""
    import subprocess
    import sys

    inv = yaml.safe_load(lab.inventory().read_text())
    for h, entry in zip(lab.hosts, inv["hosts"], strict=True):
        probe = f"{entry['python']} -c 'import sys, langgraph; print(sys.prefix)'"
        out = subprocess.run(lab.ssh_argv(h, probe), capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == sys.prefix
