"""A run survives its orchestrator being SIGKILLed: its racers die with it, `chaos clean` reaps
what it left, and `chaos run --resume` finishes it with the results an uninterrupted run gets.

The scenario is a kill sweep of three_step under durability sync (deterministic per boundary), so
the resumed run must show exactly the verdicts and per-trial effect counts of a run that was never
interrupted, trial by trial, seed by seed.
"""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path

from kits.robustkit import chaos, chaos_bg, docker_containers, journal_lines, wait_for

from chaos.running import registry
from chaos.running.journal import read_journal
from chaos.running.resume import comparable

SCENARIO = """\
name: resume_probe
about: kill sweep of three_step at four boundaries around step b
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
kill_points: ["effect(task=b):after", "put_writes(node=b,", "put(step=2,source=loop):after"]
trials: 1
seed: 424242
timeout_s: 60
"""


def _racers_of(state: Path, run_id: str) -> list[int]:
    return [pid for pid, _, _ in registry.racer_processes(run_id)]


def test_sigkilled_run_resumes_to_the_uninterrupted_results(tmp_path):
    scenario = tmp_path / "resume_probe.yaml"
    scenario.write_text(SCENARIO)
    state = tmp_path / "state"

    # the reference: the same scenario, never interrupted
    base = chaos(["run", str(scenario), "--out", str(tmp_path / "base"), "-q"], state)
    assert base.returncode == 1, base.stderr  # the duplicate of b is a violation
    base_dir = (tmp_path / "base" / "resume_probe" / "latest").resolve()
    base_results = json.loads((base_dir / "results.json").read_text())

    # the victim: SIGKILL the orchestrator once its journal holds two trials and a racer is out
    proc = chaos_bg(["run", str(scenario), "--out", str(tmp_path / "victim"), "-q"], state)
    try:
        journal = wait_for(lambda: next(iter((tmp_path / "victim").glob("resume_probe/*/journal.jsonl")), None), 120, "the journal")
        run_dir = journal.parent
        run_id = json.loads((run_dir / "run.json").read_text())["run_id"]
        wait_for(lambda: journal_lines(journal) >= 2 and _racers_of(state, run_id), 180, "two journaled trials and a racer in flight")
        in_flight = _racers_of(state, run_id)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    n_before = journal_lines(journal)
    assert 2 <= n_before < 5

    # its racers die with it (parent-death signal), without anyone cleaning up
    assert in_flight
    wait_for(lambda: not _racers_of(state, run_id), 15, f"racers {in_flight} to die with their orchestrator")
    # the registry knows the run is dead; its work folder is still there
    entry = state / "active" / f"{run_id}.json"
    assert entry.exists() and not registry.run_is_alive(run_id)
    assert (run_dir / "work").exists()
    # a write torn by the kill would look like this: it must be dropped, never parsed
    with open(journal, "ab") as f:
        f.write(b'{"run_id": "' + run_id.encode() + b'", "cell_index": 0, "trial_id": "c000-p0')

    # chaos clean reaps the dead run and says what it removed
    cleaned = chaos(["clean"], state)
    assert cleaned.returncode == 0, cleaned.stderr
    assert run_id in cleaned.stdout and "work" in cleaned.stdout
    assert not entry.exists() and not (run_dir / "work").exists()
    assert json.loads((run_dir / "run.json").read_text())["interrupted"] is True
    again = chaos(["clean"], state)
    assert again.returncode == 0 and run_id not in again.stdout  # all of it went the first time (another run's strays may be named)

    # resume: only the unfinished trials run, with the run's own seeds
    resumed = chaos(["run", "--resume", str(run_dir), "-q"], state)
    assert resumed.returncode == base.returncode, resumed.stderr

    res_results = json.loads((run_dir / "results.json").read_text())
    assert comparable(res_results) == comparable(base_results)
    assert res_results["summary"] == base_results["summary"]

    base_recs, _ = read_journal(base_dir / "journal.jsonl")
    res_recs, torn = read_journal(journal)
    assert not torn
    ids = [r["trial_id"] for r in res_recs]
    assert len(ids) == len(set(ids)) == len(base_recs)  # nothing run twice, nothing missing
    base_by_id = {r["trial_id"]: r for r in base_recs}
    for r in res_recs:
        b = base_by_id[r["trial_id"]]
        assert r["seed"] == b["seed"] and r["point"] == b["point"]
        assert Counter(x["task"] for x in r["ledger"]) == Counter(x["task"] for x in b["ledger"]), r["trial_id"]
        assert r["valid"] == b["valid"] and r["fault_fired"] == b["fault_fired"]
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["interrupted"] is False and meta["finished"]
    assert meta["resumes"][0]["torn_line_dropped"] is True
    assert meta["resumes"][0]["journaled_trials"] == n_before
    assert (run_dir / "journal.jsonl.torn").exists()

    # afterwards nothing of the run exists: no racer, no container, no work folder, no registry entry
    assert not _racers_of(state, run_id)
    assert not (run_dir / "work").exists()
    assert not list((state / "active").glob("*.json"))
    containers = docker_containers(run_id)
    assert containers in (None, [])


def test_resume_refuses_a_run_that_is_still_alive(tmp_path, monkeypatch):
    monkeypatch.setenv("CHAOS_STATE_DIR", str(tmp_path / "state"))
    from chaos.racer.errors import ChaosError
    from chaos.running.resume import resume_run

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "run.json").write_text(
        json.dumps({"run_id": "alive-1", "scenario": {"name": "x", "kind": "kill_sweep", "workload": "three_step"}})
    )
    with registry.ActiveRun("alive-1", run_dir, run_dir / "work"):
        try:
            resume_run(run_dir)
        except ChaosError as exc:
            assert "still being executed" in str(exc)
        else:
            raise AssertionError("a live run was resumed a second time")
    # the entry went away with the run: nothing of it to reap (another run on the machine may have strays)
    assert [r for r in registry.reap_stale() if r.run_id == "alive-1"] == []
