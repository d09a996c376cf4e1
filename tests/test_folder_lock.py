"""A run folder owns its liveness: two orchestrators never execute one run.

The story of issue 24, item 1: a run is executing, started from one state folder; someone resumes
it from another state folder (another CHAOS_STATE_DIR, HOME, sudo, or a cache cleaner emptied the
registry). The resume must refuse in one line (exit 3) and touch nothing: not the racers, not the
ledger, not the journal. The first orchestrator then finishes with exactly its trials.

The first orchestrator is held still with SIGSTOP at a real point (a journaled trial and a racer
in flight), so the second one runs while the first is certainly alive, without any sleep.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

from kits.robustkit import chaos, chaos_bg, chaos_env, journal_lines, one_line, pid_alive, wait_for

from chaos.running import registry
from chaos.running.journal import read_journal

SCENARIO = """\
name: lock_probe
about: kill sweep of three_step, long enough to be caught mid-run
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
kill_points: ["effect(task=b):after", "put_writes(node=b,", "put(step=2,source=loop):after"]
trials: 2
seed: 4242
timeout_s: 60
"""


def _racers(run_id: str) -> list[int]:
    return [pid for pid, _, _ in registry.racer_processes(run_id)]


def test_a_second_orchestrator_from_another_state_folder_refuses_and_the_first_finishes_alone(tmp_path):
    scenario = tmp_path / "lock_probe.yaml"
    scenario.write_text(SCENARIO)
    state_a, state_b = tmp_path / "state-a", tmp_path / "state-b"

    first = chaos_bg(["run", str(scenario), "--out", str(tmp_path / "reports"), "-q"], state_a)
    stopped = False
    try:
        journal = wait_for(lambda: next(iter((tmp_path / "reports").glob("lock_probe/*/journal.jsonl")), None), 120, "the journal")
        run_dir = journal.parent
        run_id = json.loads((run_dir / "run.json").read_text())["run_id"]
        wait_for(lambda: journal_lines(journal) >= 1 and _racers(run_id), 180, "a journaled trial and a racer in flight")
        os.kill(first.pid, signal.SIGSTOP)  # alive, holding its locks, doing nothing
        stopped = True
        in_flight = [p for p in _racers(run_id) if pid_alive(p)]
        lines_then = journal.read_bytes()

        # the user resumes it from another state folder: one line, exit 3, nothing touched
        second = chaos(["run", "--resume", str(run_dir), "-q"], state_b)
        assert second.returncode == 3, second.stdout + second.stderr
        said = one_line(second.stderr)
        assert "still being executed by another chaos process" in said, said
        assert f"pid {first.pid}" in said, said
        assert "Traceback" not in second.stderr
        # every command that would write into the live folder refuses the same way
        for args in (["analyze", str(run_dir)], ["report", str(run_dir)]):
            other = chaos(args, state_b)
            assert other.returncode == 3 and "still being executed" in one_line(other.stderr), (args, other.stderr)
        # and the reaper of the other state folder leaves its racers alone
        cleaned = chaos(["clean"], state_b)
        assert cleaned.returncode == 0, cleaned.stderr
        assert all(pid_alive(p) for p in in_flight), "a racer of a live run was killed"
        assert journal.read_bytes() == lines_then
        assert not (run_dir / "results.json").exists()

        os.kill(first.pid, signal.SIGCONT)
        stopped = False
        _, err = first.communicate(timeout=600)
    finally:
        if stopped:
            os.kill(first.pid, signal.SIGCONT)
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 1, err  # the duplicate of b: a violation, found once

    records, torn = read_journal(journal)
    ids = [r["trial_id"] for r in records]
    assert not torn and len(ids) == len(set(ids)), "a trial ran twice"
    results = json.loads((run_dir / "results.json").read_text())
    assert results["cells"][0]["trials"] == len([t for t in ids if not t.endswith("-dry")])
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["finished"] and not meta.get("resumes") and not meta["interrupted"]
    with sqlite3.connect(run_dir / "ledger.sqlite") as conn:
        aside = conn.execute("SELECT name FROM sqlite_master WHERE name='effects_aborted'").fetchone()
        assert aside is None or conn.execute("SELECT COUNT(*) FROM effects_aborted").fetchone()[0] == 0
    assert not list((state_a / "active").glob("*.json"))

    # once it ended, the folder is free again: a resume has nothing left to do and is allowed
    again = chaos(["run", "--resume", str(run_dir), "-q"], state_b)
    assert again.returncode == 1, again.stderr
    assert [r["trial_id"] for r in read_journal(journal)[0]] == ids


ORCHESTRATOR = textwrap.dedent("""
    import os, subprocess, sys
    from pathlib import Path
    from chaos.running.folderlock import FolderLock
    from chaos.running.registry import ActiveRun
    run_dir, lock = Path(sys.argv[1]), sys.argv[2] == "lock"
    (run_dir / "work").mkdir(parents=True, exist_ok=True)
    (run_dir / "run.json").write_text('{"run_id": "shared-run-1", "finished": null}')
    held = FolderLock(run_dir).acquire() if lock else None
    with ActiveRun("shared-run-1", run_dir, run_dir / "work") as active:
        child = subprocess.Popen(["sleep", "600"], env=dict(os.environ, **active.env()), start_new_session=True)
        print(child.pid, flush=True)
        sys.stdin.read()   # until killed
""")


def _orchestrator(run_dir, state, lock: bool) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(
        [sys.executable, "-c", ORCHESTRATOR, str(run_dir), "lock" if lock else "no"],
        env=chaos_env(state),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    return proc, int(proc.stdout.readline())


def test_the_reaper_of_a_dead_orchestrators_state_folder_leaves_the_racers_of_the_one_that_took_over(tmp_path):
    """A died (its entry stays in state A); B resumed the run from state B and is executing it, with
    the same run id. `chaos clean` in state A must see the folder is live and leave B's racer alone."""
    run_dir, state_a, state_b = tmp_path / "run", tmp_path / "state-a", tmp_path / "state-b"
    dead, dead_racer = _orchestrator(run_dir, state_a, lock=False)
    dead.kill()
    dead.wait()
    with contextlib.suppress(ProcessLookupError):  # a stray: another run's start on this machine may have reaped it first
        os.kill(dead_racer, signal.SIGKILL)  # what the resume reaped
    live, racer = _orchestrator(run_dir, state_b, lock=True)
    try:
        wait_for(lambda: racer in _racers("shared-run-1"), 30, "the live racer to carry the run's labels")
        assert (state_a / "active" / "shared-run-1.json").exists()

        cleaned = chaos(["clean"], state_a)
        assert cleaned.returncode == 0, cleaned.stderr
        assert "left alone" in cleaned.stdout, cleaned.stdout
        assert pid_alive(racer), "the reaper killed a racer of a run that is being executed"
        assert (run_dir / "work").exists()
        assert "interrupted" not in json.loads((run_dir / "run.json").read_text())
        assert not (state_a / "active" / "shared-run-1.json").exists()  # only the stale entry went
        assert (state_b / "active" / "shared-run-1.json").exists()
    finally:
        live.kill()
        live.wait()
        if pid_alive(racer):
            os.kill(racer, signal.SIGKILL)
