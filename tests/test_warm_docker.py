"""Warm racers in Docker: one fork-server container per framework, racers forked inside it.

What the user sees: the same trials as with cold containers (valid races, confirmed kills, equal
per-boundary sweep results), one container instead of one per racer, and nothing left behind:
not after a run, and not after the orchestrator itself was SIGKILLed mid-trial.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from kits.racekit import new_run_id
from kits.warmkit import assert_same_race, race_records, sweep_results

from chaos.launchers import make_launcher
from chaos.launchers.docker import DockerLauncher, run_containers
from chaos.launchers.warm.docker import DockerWarmLauncher
from chaos.running.trial import wait_until

# the racer image: built on first use, and two builds at once would race to tag it; Docker's files run on one worker
pytestmark = pytest.mark.xdist_group("docker")

SWEEP_POINTS = (0, 9, 16)  # the input checkpoint, a checkpoint write, the last effect (cold containers are slow)


def test_docker_placement_starts_warm_unless_asked_cold(docker_client, racer_image):
    warm = make_launcher("docker", None, new_run_id(), image=racer_image)
    cold = make_launcher("docker", None, new_run_id(), image=racer_image, start="cold")
    assert isinstance(warm, DockerWarmLauncher) and isinstance(cold, DockerLauncher)
    warm.reap()
    cold.reap()


def test_a_warm_race_in_docker_runs_in_one_container_and_leaves_none(docker_client, racer_image, tmp_path):
    run_id = new_run_id()
    launcher = DockerWarmLauncher(run_id, image=racer_image)
    seen: list[int] = []
    start_group = launcher.start_group

    def counting(specs, workdir):
        handles = start_group(specs, workdir)
        seen.append(len(run_containers(run_id, docker_client)))
        return handles

    launcher.start_group = counting  # type: ignore[method-assign]
    recs = race_records(tmp_path, launcher, k=3, trials=3, placement="docker", run_id=run_id)
    for rec in recs:
        assert rec.valid, rec.invalid_reason
        assert 1 <= rec.observations["fires"] <= 3
        assert {row["host"] for row in rec.ledger} == {"c-warm-langgraph"}  # inside the container
        assert all(o.result["pid"] < 100 for o in rec.racers)  # the container's pid namespace
    assert set(seen) == {1}  # every group of every trial: forks in the one server container
    assert run_containers(run_id, docker_client) == []  # reaped: the server container is gone


def test_a_warm_kill_sweep_in_docker_equals_the_cold_one(docker_client, racer_image, tmp_path):
    cold = sweep_results(tmp_path / "cold", DockerLauncher(new_run_id(), image=racer_image), SWEEP_POINTS)
    warm_id = new_run_id()
    warm = sweep_results(tmp_path / "warm", DockerWarmLauncher(warm_id, image=racer_image), SWEEP_POINTS, run_id=warm_id)
    assert warm == cold  # every kill confirmed by its exit status (asserted in sweep_results)
    assert run_containers(warm_id, docker_client) == []


def test_a_warm_race_in_docker_saturates_like_a_cold_one(docker_client, racer_image, tmp_path):
    k = 3
    cold = race_records(tmp_path / "cold", DockerLauncher(new_run_id(), image=racer_image), k, 3, placement="docker")
    warm = race_records(tmp_path / "warm", DockerWarmLauncher(new_run_id(), image=racer_image), k, 8, placement="docker")
    assert_same_race(cold, warm, k)
    assert {r.observations["launcher"] for r in warm} == {"docker-warm"}


def test_a_killed_orchestrator_leaves_no_container_and_no_racer(docker_client, racer_image, tmp_path):
    """The orchestrator dies with SIGKILL while a racer stands at its gate: the engine drops the
    attach stream, the server sees end of input, kills and reaps its racer and exits, and the
    container removes itself."""
    run_id = new_run_id()
    script = textwrap.dedent(f"""
        import json, sys
        from chaos.launchers.warm.docker import DockerWarmLauncher
        from chaos.running.trial import TrialRun
        from kits.warmkit import cells, context, scenario
        launcher = DockerWarmLauncher({run_id!r}, image={racer_image!r})
        cell = cells(scenario(kind="race", workload="gate_after_interrupt", resume="command:true",
                              racers={{"k": 1, "placement": "docker"}}))[0]
        ctx, _ = context(__import__("pathlib").Path({str(tmp_path)!r}), launcher, {run_id!r})
        run = TrialRun(ctx, cell, "c000-t0000")
        (h,) = run.start([run.spec("r0", actions=[{{"op": "run"}}], gate=True)])
        assert run.wait_arrival(h, "gate"), h.log_tail()
        print(json.dumps({{"pid": h.pid}}), flush=True)
        sys.stdin.read()
    """)
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([tests_dir, os.path.dirname(tests_dir)]))
    orch = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    try:
        line = orch.stdout.readline()
        assert line, "the orchestrator did not get its racer to the gate"
        assert json.loads(line)["pid"] > 1
        (ct,) = run_containers(run_id, docker_client)
        top = docker_client.containers.get(ct.id).top()["Processes"]
        # the server, its racer and the racers it keeps pre-forked (chaos.racer.forkserver's pool)
        assert sum("chaos.racer.forkserver" in " ".join(p) for p in top) >= 2
        orch.kill()
        orch.wait()
        assert wait_until(lambda: run_containers(run_id, docker_client) == [], 60)
    finally:
        if orch.poll() is None:
            orch.kill()
            orch.wait()
        from chaos.launchers.docker import reap_run

        reap_run(run_id, docker_client)
