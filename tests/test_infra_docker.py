"""Cold racers really run in containers (one per racer): hostnames, barriers, confirmed kills, no leftovers.

Warm racers in Docker (the default placement start): test_warm_docker.py.
"""

from __future__ import annotations

import os
import socket

import pytest
from kits.racekit import new_run_id, race_scenario, run_races

from chaos.launchers import make_launcher
from chaos.launchers.docker import reap_run, run_containers
from chaos.running.trial import RunContext, TrialRun, wait_until
from chaos.scenario.model import expand

# the racer image: built on first use, and two builds at once would race to tag it; Docker's files run on one worker
pytestmark = pytest.mark.xdist_group("docker")


def test_offline_image_is_cached_by_content(docker_client, racer_image):
    from chaos.remote.images import ensure_image, image_tag

    assert racer_image == image_tag() == ensure_image(docker_client)  # second call: no rebuild
    assert docker_client.images.get(racer_image)


def test_race_in_containers_records_container_hostnames(docker_client, racer_image, tmp_path):
    run_id = new_run_id()
    launcher = make_launcher("docker", None, run_id, image=racer_image, start="cold")
    try:
        recs = run_races(
            race_scenario(k=2, trials=1),
            launcher,
            tmp_path,
            run_id=run_id,
            ledger_config={"kind": "sqlite", "path": str(tmp_path / "ledger.sqlite")},
            store_for=lambda cell, trial, d: {"path": str(tmp_path / "checkpoints.sqlite")},
        )
    finally:
        launcher.reap()
    (rec,) = recs
    assert rec.valid, rec.invalid_reason
    hosts = {r["host"] for r in rec.ledger}
    assert socket.gethostname() not in hosts
    assert hosts <= {o.host for o in rec.racers} and all(h.startswith("c-c000-t0000-") for h in hosts)
    assert all(o.result["pid"] < 100 for o in rec.racers)  # pid inside the container's namespace
    assert run_containers(run_id, docker_client) == []


def _one_racer_at_gate(tmp_path, launcher, run_id):
    s = race_scenario(k=1, trials=1, backend="memory")
    cell = expand(s, check=False)[0]
    ctx = RunContext(
        run_id=run_id,
        run_dir=tmp_path,
        work_dir=tmp_path / "work",
        root_seed=1,
        launcher=launcher,
        ledger_config={"kind": "sqlite", "path": str(tmp_path / "ledger.sqlite")},
        read_ledger=lambda t: [],
        store_for=lambda c, t, d: {},
        keep_work=True,
    )
    run = TrialRun(ctx, cell, "c000-t0000")
    (h,) = run.start([run.spec("r0", actions=[{"op": "run"}], gate=True)])
    assert run.wait_arrival(h, "gate"), h.log_tail()
    return h


def test_kill_at_barrier_is_confirmed_by_exit(docker_client, racer_image, tmp_path):
    run_id = new_run_id()
    launcher = make_launcher("docker", None, run_id, image=racer_image, start="cold")
    try:
        h = _one_racer_at_gate(tmp_path, launcher, run_id)
        assert h.state() == "stopped"
        pid = h.pid
        status = h.kill()
        assert status is not None and status.killed  # the wrapper saw the racer die of SIGKILL
        assert h.container_exit == 137  # and the container's exit says the same
        assert not os.path.exists(f"/proc/{pid}")
    finally:
        launcher.reap()
    assert run_containers(run_id, docker_client) == []


def test_reap_run_removes_every_labelled_container(docker_client, racer_image, tmp_path):
    run_id = new_run_id()
    launcher = make_launcher("docker", None, run_id, image=racer_image, start="cold")
    h = _one_racer_at_gate(tmp_path, launcher, run_id)  # left stopped, as after a crashed orchestrator
    pid = h.pid
    assert len(run_containers(run_id, docker_client)) == 1
    assert reap_run(run_id, docker_client) == 1
    assert run_containers(run_id, docker_client) == []
    assert wait_until(lambda: not os.path.exists(f"/proc/{pid}"), 10)
    launcher.reap()  # idempotent after reap_run
