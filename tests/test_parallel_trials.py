"""A sweep's kill points run several at a time (``--jobs``), and nothing a run promises changes (issue 41).

Each kill point of a sweep has its own work folder, store, thread and ledger rows, so ``--jobs 2``
runs two at once, each job slot with a fork server of its own. What must not change: every
deterministic point's outcome and every verdict is the one ``--jobs 1`` gives; a run stopped by
SIGTERM mid-way leaves no racer and a journal that ``--resume`` completes to the same results; and
a count that is no count is refused before anything runs. The sweep is LangGraph's ``three_step``
on SQLite (21 kill points, each deterministic: one thread, one write at a time).
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from kits.robustkit import ROOT, chaos, chaos_bg, journal_lines, one_line, wait_for
from kits.runs import racers_alive, write_scenario

import chaos as chaos_api
from chaos import lazyfs
from chaos.racer.errors import ChaosError
from chaos.records import RunResults
from chaos.running import jobs
from chaos.targets import TARGETS, register_target

SWEEP = """\
name: jobs_sweep
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
trials: TRIALS
seed: 41
"""


def plugin_args() -> list[str]:
    installed = any(ep.value == "chaos.pytest_plugin" for ep in metadata.entry_points(group="pytest11"))
    return [] if installed else ["-p", "chaos.pytest_plugin"]


def points(results: RunResults) -> dict[str, object]:
    """Each kill point's outcome as results.json states it: effects, durable checkpoints, resume outcome, verdicts."""
    return {
        f"{c.cell_id} @ {p.point}": (
            p.effect_counts,
            p.durable_checkpoints,
            p.resume_outcomes,
            [(v.property, v.status) for v in p.verdicts],
        )
        for c in results.cells
        for p in c.points
    }


def verdicts(results: RunResults) -> list[tuple[str, str]]:
    return [(v.property, v.status) for c in results.cells for v in c.verdicts]


def overlapping(journal: Path) -> int:
    """How many pairs of kill trials ran at the same time (their [start, end] intervals meet)."""
    spans = sorted(
        (r["t_start_wall"], r["t_start_wall"] + r["wall_s"]) for r in map(json.loads, journal.read_text().splitlines()) if r.get("point")
    )
    return sum(1 for (_, end), (start, _) in zip(spans, spans[1:], strict=False) if start < end)


def test_a_sweep_with_two_jobs_has_every_point_and_verdict_of_one_job(tmp_path):
    scenario = write_scenario(tmp_path, SWEEP.replace("TRIALS", "1"))
    one = chaos_api.run(scenario, out=tmp_path / "one", jobs=1)
    two = chaos_api.run(scenario, out=tmp_path / "two", jobs=2)

    assert len(points(one)) == 21 and all(c.valid_trials == c.trials for c in one.cells)
    assert points(two) == points(one)  # every point: same effects, same durable state, same resume, same verdicts
    assert verdicts(two) == verdicts(one)
    assert two.exit_code == one.exit_code
    # two jobs did run at once (one job never overlaps: its trials follow one another)
    assert overlapping(one.run_dir / "journal.jsonl") == 0
    assert overlapping(two.run_dir / "journal.jsonl") >= 1
    # one record per trial, as with one job: the journal's lines are in the order the trials ended
    ids = [json.loads(line)["trial_id"] for line in (two.run_dir / "journal.jsonl").read_text().splitlines()]
    assert sorted(ids) == sorted(json.loads(line)["trial_id"] for line in (one.run_dir / "journal.jsonl").read_text().splitlines())
    assert len(ids) == len(set(ids))


def test_the_second_slots_fork_server_starts_with_the_dry_run_and_ends_with_the_run_even_when_unused(tmp_path):
    # one kill point, one trial: the second slot's server, started while the dry run ran, serves nobody
    one_point = SWEEP.replace("TRIALS", "1") + 'kill_points: ["effect(task=b):after"]\n'
    res = chaos_api.run(write_scenario(tmp_path, one_point), out=tmp_path / "r", jobs=2, keep_work=True)

    assert [p.point for c in res.cells for p in c.points] == ["effect(task=b):after#1"] and res.cells[
        0
    ].valid_trials == 1  # the kill trial (the dry run is not counted)
    work = res.run_dir / "work"
    # it was started (its log is there, its import done or cut short) before any trial needed it ...
    assert (work / "job1" / "forkserver-langgraph.log").exists()
    assert [json.loads(line)["trial_id"] for line in (res.run_dir / "journal.jsonl").read_text().splitlines()] == [
        "c000-dry",
        "c000-p000-r000",
    ]
    # ... and stopped with the run: no server or racer of the run is left
    assert racers_alive(str(res.run_dir)) == []


def test_sigterm_to_a_two_job_run_reaps_every_racer_and_resume_completes_it(tmp_path):
    scenario = write_scenario(tmp_path, SWEEP.replace("TRIALS", "3"))  # 63 kill trials: the signal lands mid-way
    state, out = tmp_path / "state", tmp_path / "reports"
    proc = chaos_bg(["run", str(scenario), "--out", str(out), "--jobs", "2", "-q"], state)
    journal = lambda: next(out.glob("jobs_sweep/2*/journal.jsonl"), None)  # noqa: E731
    try:
        wait_for(lambda: journal() is not None and journal_lines(journal()) >= 6, 300, "six journaled trials")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err
    run_dir = journal().parent
    assert racers_alive(str(run_dir)) == []  # both slots' fork servers and their racers
    assert not (run_dir / "work").exists()
    assert json.loads((run_dir / "run.json").read_text())["interrupted"] is True
    cut = journal_lines(run_dir / "journal.jsonl")
    assert 6 <= cut < 64

    resumed = chaos(["run", "--resume", str(run_dir), "--jobs", "2", "-q"], state, timeout=900)
    assert resumed.returncode in (0, 1), resumed.stderr
    assert racers_alive(str(run_dir)) == []
    ids = [json.loads(line)["trial_id"] for line in (run_dir / "journal.jsonl").read_text().splitlines()]
    assert len(ids) == 64 and len(set(ids)) == 64  # the dry run and 63 kill trials, each once
    done = RunResults.model_validate_json((run_dir / "results.json").read_text())
    fresh = chaos_api.run(scenario, out=tmp_path / "fresh", jobs=1)
    assert points(done) == points(fresh) and verdicts(done) == verdicts(fresh)


@pytest.mark.parametrize("value", ["0", "-2", "1.5", "two"])
def test_a_jobs_count_that_is_no_count_is_refused_in_one_line_before_anything_runs(tmp_path, value):
    scenario = write_scenario(tmp_path, SWEEP.replace("TRIALS", "1"))
    r = chaos(["run", str(scenario), "--out", str(tmp_path / "reports"), f"--jobs={value}"], tmp_path / "state")
    assert r.returncode == 3 and "Traceback" not in r.stderr
    line = one_line(r.stderr)
    assert line.startswith("chaos: error: --jobs ") and value in line
    assert ("between 1 and 256" in line) if value.lstrip("-").isdigit() else ("not a whole number" in line)
    assert not (tmp_path / "reports").exists()
    night = chaos(
        ["nightly", str(ROOT / "scenarios" / "nightly.yaml"), "--out", str(tmp_path / "n"), f"--jobs={value}"], tmp_path / "state"
    )
    assert night.returncode == 3 and "--jobs" in one_line(night.stderr) and not (tmp_path / "n").exists()


def test_chaos_jobs_in_the_environment_takes_the_place_of_the_default_and_a_bad_one_is_refused_by_name(tmp_path):
    # a CI step that runs several runs at once (or a test suite on xdist workers) gives each run one job
    scenario = write_scenario(tmp_path, SWEEP.replace("TRIALS", "1") + 'kill_points: ["effect(task=b)"]\n')
    r = chaos(["run", str(scenario), "--out", str(tmp_path / "one"), "--keep-work", "-q"], tmp_path / "state", env={"CHAOS_JOBS": "1"})
    assert r.returncode in (0, 1), r.stderr
    (work,) = (tmp_path / "one").glob("jobs_sweep/2*/work")
    assert (work / "forkserver-langgraph.log").exists() and not (work / "job1").exists()  # one slot, one fork server
    # --jobs still wins over it
    r = chaos(
        ["run", str(scenario), "--out", str(tmp_path / "two"), "--keep-work", "-q", "--jobs", "2"],
        tmp_path / "state",
        env={"CHAOS_JOBS": "1"},
    )
    assert r.returncode in (0, 1), r.stderr
    (work,) = (tmp_path / "two").glob("jobs_sweep/2*/work")
    assert (work / "job1" / "forkserver-langgraph.log").exists()
    # a value that is no count is refused in one line naming the variable, before anything runs
    bad = chaos(["run", str(scenario), "--out", str(tmp_path / "bad"), "-q"], tmp_path / "state", env={"CHAOS_JOBS": "many"})
    assert bad.returncode == 3 and "Traceback" not in bad.stderr
    assert one_line(bad.stderr).startswith("chaos: error: CHAOS_JOBS 'many': not a whole number")
    assert not (tmp_path / "bad").exists()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CHAOS_JOBS", "0")
        with pytest.raises(ChaosError, match="CHAOS_JOBS 0: trials at once must be between 1 and"):
            chaos_api.run(scenario, out=tmp_path / "api")
    assert not (tmp_path / "api").exists()


def test_the_api_and_the_pytest_plugin_refuse_a_bad_jobs_count_too(tmp_path):
    with pytest.raises(ChaosError, match="jobs 0: trials at once must be between 1 and"):
        chaos_api.run(write_scenario(tmp_path, SWEEP.replace("TRIALS", "1")), out=tmp_path / "r", jobs=0)
    assert not (tmp_path / "r").exists()
    (tmp_path / "test_x.py").write_text("def test_x(chaos_run):\n    pass\n")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *plugin_args(), "--chaos-jobs", "zero", str(tmp_path / "test_x.py")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert r.returncode == 4, r.stdout + r.stderr  # pytest's usage error: no test ran
    assert "--chaos-jobs 'zero': not a whole number" in r.stdout + r.stderr


def cgroup_tree(root: Path, files: dict[str, str]) -> Path:
    """A cgroup mount as a container sees it (its own cgroup at the root), holding ``files``."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text + "\n")
    return root


def test_the_default_jobs_is_the_machines_cores_and_memory_whatever_its_load(tmp_path, monkeypatch):
    cores = len(os.sched_getaffinity(0))
    unlimited = cgroup_tree(tmp_path / "none", {"cpu.max": "max 100000"})
    assert jobs.machine_cpus(unlimited) == cores
    # a CI container given 1.5 cores (v2) runs 2 jobs, one given half a core (v1) runs 1
    assert jobs.machine_cpus(cgroup_tree(tmp_path / "v2", {"cpu.max": "150000 100000"})) == min(cores, 2)
    half = cgroup_tree(tmp_path / "v1", {"cpu/cpu.cfs_quota_us": "50000", "cpu/cpu.cfs_period_us": "100000"})
    assert jobs.machine_cpus(half) == 1 and jobs.default_jobs(half) == 1
    # capped by memory: a container limited to 800 MB holds two slots of 400 MB
    small = cgroup_tree(tmp_path / "mem", {"cpu.max": "max 100000", "memory.max": str(800 << 20)})
    assert jobs.machine_mb(small) == 800 and jobs.default_jobs(small) == min(cores, 2)

    # the load average is never asked: two runs on one machine get the same default, busy or not
    def no_load() -> tuple[float, float, float]:
        raise AssertionError("default_jobs read the load average")

    monkeypatch.setattr(os, "getloadavg", no_load)
    assert jobs.default_jobs(unlimited) == min(cores, max(1, (jobs.machine_mb(unlimited) or 400) // jobs.JOB_MEMORY_MB))


def test_where_jobs_is_left_out_a_framework_whose_trials_wait_runs_twice_the_machines_jobs(tmp_path, monkeypatch):
    """The Agent Server's trials mostly wait on the server (its queue takes a run up 0.5-1 s after it
    was created), so with ``--jobs`` left out its cells run twice what the machine has; a number the
    user gave (``--jobs``, ``CHAOS_JOBS``) is kept as given. Shown on a one-core machine (no job at
    once) with LangGraph's sweep, told that its trials wait."""
    monkeypatch.delenv(jobs.JOBS_ENV, raising=False)
    monkeypatch.setattr(jobs, "machine_cpus", lambda cgroup=jobs.CGROUP: 1)
    scenario = write_scenario(tmp_path, SWEEP.replace("TRIALS", "1"))
    assert TARGETS["langgraph_server"].trials_wait and not TARGETS["langgraph"].trials_wait
    plain = chaos_api.run(scenario, out=tmp_path / "plain")
    undo = register_target(dataclasses.replace(TARGETS["langgraph"], trials_wait=True))
    try:
        waiting = chaos_api.run(scenario, out=tmp_path / "waiting")
        asked = chaos_api.run(scenario, out=tmp_path / "asked", jobs=1)
    finally:
        undo()

    assert overlapping(plain.run_dir / "journal.jsonl") == 0  # one core: one trial at a time
    assert overlapping(waiting.run_dir / "journal.jsonl") >= 1  # two at once
    assert overlapping(asked.run_dir / "journal.jsonl") == 0  # --jobs 1 is one
    assert points(waiting) == points(plain) == points(asked) and len(points(plain)) == 21


MORE_KINDS = """\
name: jobs_kinds
kind: fork
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: gate_after_interrupt
resume: "command:true"
trials: 4
seed: 41
matrix:
  case:
    - {name: fork, kind: fork, fork_via: checkpoint}
    - {name: invalid-type, kind: invalid_state, workload: invalid_type}
    - {name: upgrade, kind: upgrade, workload: upgrade_field_renamed}
    - {name: upgrade-killed, kind: upgrade, workload: upgrade_node_added, trials: 1, kill_points: ["effect(task=pre)", "effect(task=gate)"]}
    - {name: stray, kind: stray_resume}
    - {name: shared, kind: shared_state, workload: shared_lost_update, k: 2}
"""


def trial_outcomes(run_dir: Path) -> dict[str, object]:
    """Each trial's validity, the effects its ledger counted (by racer), and its racers' outcomes (status, blame)."""
    out = {}
    for rec in map(json.loads, (run_dir / "journal.jsonl").read_text().splitlines()):
        racers = [(r["racer_id"], r["status"], r["blame"]) for r in rec["racers"]]
        out[rec["trial_id"]] = (rec["valid"], sorted((row["racer_id"], row["effect_key"]) for row in rec["ledger"]), racers)
    return out


def test_forks_invalid_states_upgrades_strays_and_shared_states_with_two_jobs_have_every_trial_and_verdict_of_one_job(tmp_path):
    """Their repeats are independent too (each its own thread, store and rows, no race in them: a
    stray answer follows the first, and a shared-state trial's agents move one at a time in the
    order of its schedule): two jobs run them at once, and each trial ends as it does one job at a
    time, with the same schedule."""
    scenario = write_scenario(tmp_path, MORE_KINDS)
    one = chaos_api.run(scenario, out=tmp_path / "one", jobs=1)
    two = chaos_api.run(scenario, out=tmp_path / "two", jobs=2)

    assert all(c.valid_trials == c.trials > 0 for c in one.cells), [(c.cell_id, c.valid_trials, c.trials) for c in one.cells]
    assert trial_outcomes(two.run_dir) == trial_outcomes(one.run_dir)
    assert verdicts(two) == verdicts(one)
    assert schedules(two.run_dir) == schedules(one.run_dir) and len(schedules(one.run_dir)) == 4
    assert overlapping(one.run_dir / "journal.jsonl") == 0
    assert overlapping_all(two.run_dir / "journal.jsonl") >= 1
    assert overlapping_all(two.run_dir / "journal.jsonl", kinds={"stray_resume", "shared_state"}) >= 1


def schedules(run_dir: Path) -> dict[str, object]:
    """Each shared-state trial's schedule (the agents' order and the tools' responses), by trial id."""
    recs = map(json.loads, (run_dir / "journal.jsonl").read_text().splitlines())
    return {r["trial_id"]: r["observations"]["schedule"] for r in recs if r["kind"] == "shared_state"}


def overlapping_all(journal: Path, kinds: set[str] | None = None) -> int:
    """How many pairs of a cell's consecutive trials ran at the same time (any kind or one of ``kinds``, the dry runs aside)."""
    spans: dict[int, list[tuple[float, float]]] = {}
    for r in map(json.loads, journal.read_text().splitlines()):
        if not r["trial_id"].endswith("-dry") and (kinds is None or r["kind"] in kinds):
            spans.setdefault(r["cell_index"], []).append((r["t_start_wall"], r["t_start_wall"] + r["wall_s"]))
    return sum(1 for s in spans.values() for (_, end), (start, _) in zip(sorted(s), sorted(s)[1:], strict=False) if start < end)


POWER = """\
name: jobs_power
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
trials: 1
seed: 41
matrix:
  fault: [power_loss, torn]
"""


@pytest.mark.skipif(lazyfs.missing() is not None, reason=f"no lazy filesystem here: {lazyfs.missing()}")
def test_power_loss_and_torn_sweeps_with_two_jobs_have_every_point_and_verdict_of_one_job(tmp_path):
    """The run's one lazy filesystem serves both jobs' stores, and each fault acts on its own trial's
    folder: a power loss drops only the killed trial's unsynced writes, never the other job's."""
    scenario = write_scenario(tmp_path, POWER)
    one = chaos_api.run(scenario, out=tmp_path / "one", jobs=1)
    two = chaos_api.run(scenario, out=tmp_path / "two", jobs=2)

    assert len(points(one)) == 2 * 21 and all(c.valid_trials == c.trials for c in one.cells)
    assert points(two) == points(one)  # effects, durable state after the fault, resume, DU and CV at every point
    assert verdicts(two) == verdicts(one) and {"DU", "CV"} <= {p for p, _ in verdicts(one)}
    assert overlapping(one.run_dir / "journal.jsonl") == 0
    assert overlapping(two.run_dir / "journal.jsonl") >= 1
    lost = [
        r["observations"]["fault"]["lost_ops"]
        for r in map(json.loads, (two.run_dir / "journal.jsonl").read_text().splitlines())
        if r.get("point")
    ]
    assert any(lost)  # the faults did drop writes: the points are not vacuous
