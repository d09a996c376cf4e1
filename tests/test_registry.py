"""The run registry: a dead orchestrator's leftovers are found and reaped, a live run never is.

The dead orchestrator here is a real process SIGKILLed mid-run. Its stand-in racer is a plain
`sleep` carrying the run's labels and *no* parent-death signal, so only the reaper can end it:
what a racer on a host without prctl, or one whose signal was lost, would leave.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from kits.robustkit import chaos, chaos_env, pid_alive, wait_for

from chaos.running import registry

# Deliberate strays, and what `chaos clean` says of the machine's strays: the start of any other
# run on this machine would reap them first, or be named here (tests/kits/parallel.py).
pytestmark = pytest.mark.exclusive

DEAD_ORCHESTRATOR = textwrap.dedent("""
    import os, subprocess, sys
    from pathlib import Path
    from chaos.running.registry import ActiveRun
    run_dir = Path(sys.argv[1]); (run_dir / "work" / "t0").mkdir(parents=True)
    (run_dir / "run.json").write_text('{"run_id": "dead-run-1", "finished": null}')
    with ActiveRun("dead-run-1", run_dir, run_dir / "work") as active:
        env = dict(os.environ, **active.env())
        child = subprocess.Popen(["sleep", "600"], env=env, start_new_session=True)
        print(child.pid, flush=True)
        sys.stdin.read()   # until killed
""")


def test_chaos_clean_reaps_a_sigkilled_runs_racers_and_folders(tmp_path):
    state = tmp_path / "state"
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    orch = subprocess.Popen(
        [sys.executable, "-c", DEAD_ORCHESTRATOR, str(run_dir)],
        env=chaos_env(state),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        racer = int(orch.stdout.readline())
        # Popen returns once exec has closed its error pipe, a moment before the kernel sets up the new
        # image's environment: until then /proc/<pid>/environ reads empty. Observe until it is there.
        found = wait_for(lambda: registry.racer_processes("dead-run-1"), 30, "the racer to carry the run's labels")
        assert found == [(racer, "dead-run-1", str((state / "active" / "dead-run-1.json").resolve()))]
        os.environ["CHAOS_STATE_DIR"] = str(state)
        try:
            assert registry.run_is_alive("dead-run-1")
            assert registry.reap_stale() == []  # alive: untouched
            assert pid_alive(racer)
        finally:
            del os.environ["CHAOS_STATE_DIR"]
        orch.send_signal(signal.SIGKILL)
        orch.wait(timeout=30)
    finally:
        if orch.poll() is None:
            orch.kill()
    assert pid_alive(racer)  # orphaned: nothing ended it

    out = chaos(["clean"], state)
    assert out.returncode == 0, out.stderr
    assert "dead-run-1" in out.stdout and str(racer) in out.stdout and "work" in out.stdout
    wait_for(lambda: not pid_alive(racer), 10, "the orphan racer to be gone")
    assert not (run_dir / "work").exists()
    assert not (state / "active" / "dead-run-1.json").exists()
    assert json.loads((run_dir / "run.json").read_text())["interrupted"] is True


def test_a_racer_whose_registry_entry_vanished_is_still_found(tmp_path):
    state = tmp_path / "state"
    gone = tmp_path / "nowhere.json"  # the entry was deleted by hand: its racer is a stray
    env = dict(chaos_env(state), CHAOS_RUN_ID="lost-run-7", CHAOS_RUN_REGISTRY=str(gone))
    stray = subprocess.Popen(["sleep", "600"], env=env)
    try:
        wait_for(lambda: registry.racer_processes("lost-run-7"), 30, "the stray to carry its labels (see above)")
        out = chaos(["clean"], state)
        assert out.returncode == 0, out.stderr
        assert "lost-run-7" in out.stdout and str(stray.pid) in out.stdout
        assert stray.wait(timeout=10) == -signal.SIGKILL
    finally:
        if stray.poll() is None:
            stray.kill()
            stray.wait()


LIVE_ORCHESTRATOR = textwrap.dedent("""
    import os, subprocess, sys
    from pathlib import Path
    from chaos.running.registry import ActiveRun
    run_id, run_dir = sys.argv[1], Path(sys.argv[2]); (run_dir / "work").mkdir(parents=True)
    with ActiveRun(run_id, run_dir, run_dir / "work") as active:
        if len(sys.argv) > 3:
            active.note(pg_schema=sys.argv[3])
        env = dict(os.environ, **active.env())
        child = subprocess.Popen(["sleep", "600"], env=env, start_new_session=True)
        print(child.pid, flush=True)
        sys.stdin.read()   # alive until its stdin closes, or killed
        child.kill(); child.wait()
""")


def test_chaos_clean_leaves_a_live_run_alone_when_its_registry_file_was_deleted(tmp_path):
    state = tmp_path / "state"
    run_dir = tmp_path / "run"
    orch = subprocess.Popen(
        [sys.executable, "-c", LIVE_ORCHESTRATOR, "live-run-3", str(run_dir)],
        env=chaos_env(state),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        racer = int(orch.stdout.readline())
        (state / "active" / "live-run-3.json").unlink()  # a tmp or cache cleaner: the run is still alive
        out = chaos(["clean"], state)
        assert out.returncode == 0, out.stderr
        assert "nothing to clean" in out.stdout
        assert pid_alive(racer)  # the live orchestrator's lock says alive, whatever the file system says
        assert (run_dir / "work").exists()
        orch.send_signal(signal.SIGKILL)  # now it is dead: its lock is gone with it
        orch.wait(timeout=30)
        out = chaos(["clean"], state)
        assert out.returncode == 0, out.stderr
        assert "live-run-3" in out.stdout and str(racer) in out.stdout
        wait_for(lambda: not pid_alive(racer), 10, "the orphan racer to be gone")
    finally:
        if orch.poll() is None:
            orch.kill()
            orch.wait()
        if pid_alive(racer):
            os.kill(racer, signal.SIGKILL)


def test_a_dead_runs_postgres_schema_keeps_its_entry_until_clean_pg_drops_it(tmp_path, pg_dsn):
    from chaos.running import pgstore

    state = tmp_path / "state"
    run_id = "pg-run-" + os.urandom(4).hex()
    schema = pgstore.create_run_schema(pg_dsn, run_id, frameworks=())
    orch = subprocess.Popen(
        [sys.executable, "-c", LIVE_ORCHESTRATOR, run_id, str(tmp_path / "run"), schema],
        env={k: v for k, v in chaos_env(state).items() if k != "CHAOS_PG_DSN"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        orch.stdout.readline()
        orch.send_signal(signal.SIGKILL)
        orch.wait(timeout=30)
        entry = state / "active" / f"{run_id}.json"
        env_without_dsn = {k: v for k, v in os.environ.items() if k != "CHAOS_PG_DSN"}
        out = subprocess.run(
            [sys.executable, "-m", "chaos", "clean"],
            env={**env_without_dsn, **{k: v for k, v in chaos_env(state).items() if k != "CHAOS_PG_DSN"}},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        assert f"kept its registry entry: Postgres schema {schema} not dropped: no DSN" in " ".join(out.stdout.split())
        assert entry.exists() and "not dropped" in json.loads(entry.read_text())["pending"]
        assert schema in pgstore.list_run_schemas(pg_dsn)  # nothing forgotten

        out = chaos(["clean", "--pg", pg_dsn], state)
        assert out.returncode == 0, out.stderr
        assert schema in out.stdout
        assert schema not in pgstore.list_run_schemas(pg_dsn)
        assert not entry.exists()  # dropped, so the entry may go
    finally:
        if orch.poll() is None:
            orch.kill()
            orch.wait()
        pgstore.drop_run_schema(pg_dsn, run_id)
