"""A user sweeps kill points over a workflow and learns which crashes duplicate an effect."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from kits.runs import racers_alive, run_text

from chaos.kinds.checking import analyze_cell
from chaos.kinds.sweep import kill_trial
from chaos.records import TrialRecord
from chaos.running.journal import read_journal

SWEEP = """\
name: sweep_small
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
trials: 1
seed: 11
"""


@pytest.fixture(scope="module")
def sweep_run(tmp_path_factory):
    return run_text(tmp_path_factory.mktemp("sweep"), SWEEP)


def _records(run):
    records, _ = read_journal(run.run_dir / "journal.jsonl")
    return [TrialRecord.model_validate(r) for r in records]


def test_every_boundary_of_the_dry_run_is_a_kill_point(sweep_run):
    recs = _records(sweep_run)
    dry = next(r for r in recs if r.trial_id.endswith("-dry"))
    boundaries = dry.observations["boundaries"]
    # three nodes: effect + put_writes before/after each, and the step checkpoints
    for task in "abc":
        assert f"effect(task={task}):after#1" in boundaries
        assert any(b.startswith(f"put_writes(node={task},") and ":before#1" in b for b in boundaries)
    assert boundaries[0] == "put(step=-1,source=input):before#1"
    (cell,) = sweep_run.results.cells
    assert [p.point for p in cell.points] == boundaries
    assert all(p.reached == 1 for p in cell.points)


def test_each_kill_landed_and_was_confirmed_by_the_exit_status(sweep_run):
    for r in _records(sweep_run):
        if r.trial_id.endswith("-dry"):
            continue
        victim = next(o for o in r.racers if o.role == "victim")
        assert victim.status == "killed" and victim.signal == 9 and victim.kill_confirmed
        assert r.fault_fired is True
        assert [b.action for b in r.barriers if b.racer_id == "victim"] == ["arrived", "killed"]


def test_a_kill_after_an_effect_and_before_its_writes_duplicates_the_effect(sweep_run):
    (cell,) = sweep_run.results.cells
    points = {p.point: p for p in cell.points}
    after_effect = points["effect(task=b):after#1"]
    assert after_effect.effect_counts["b"] == [2]
    assert after_effect.duplicates == ["b"]
    status = {v.property: v.status for v in after_effect.verdicts}
    assert status["EO"] == "violated" and status["PC"] == "holds" and status["LIVENESS"] == "holds"
    # once b's writes are durable, resuming does not run b again
    durable = next(p for p in cell.points if p.point.startswith("put_writes(node=b,") and p.point.endswith(":after#1"))
    assert durable.effect_counts == {"a": [1], "b": [1], "c": [1]}
    assert {v.property: v.status for v in durable.verdicts}["EO"] == "holds"
    eo = next(v for v in cell.verdicts if v.property == "EO")
    assert eo.status == "violated" and "effect(task=b):after#1" in eo.evidence.points
    report = (sweep_run.run_dir / "report.md").read_text()
    assert "Boundaries where a kill duplicated an effect" in report and "`effect(task=b):after#1`" in report


def test_the_resume_racer_starts_early_but_touches_the_store_only_after_the_kill(sweep_run):
    """The resume racer is started with the victim and holds; every persistence boundary it passes
    comes after the victim's kill was confirmed, as for a racer started then."""
    kills = [r for r in _records(sweep_run) if r.point]
    assert kills
    passed_boundaries = 0
    for rec in kills:
        ev = {(b.racer_id, b.barrier, b.action): b.t_mono_ns for b in rec.barriers}
        killed = ev[("victim", rec.point, "killed")]
        resume = next(o for o in rec.racers if o.role == "resume").result
        assert ev[("resume", "hold", "released")] >= killed
        assert resume["t_unheld_mono_ns"] >= killed
        assert resume["t_start_mono_ns"] < killed  # it did start early: its start-up overlapped the victim
        assert all(t["t_mono_ns"] > killed for t in resume["trace"])
        passed_boundaries += len(resume["trace"])
    assert passed_boundaries  # most resumes write checkpoints: the check above had something to check


def test_a_crash_before_the_first_checkpoint_cannot_be_resumed(sweep_run):
    (cell,) = sweep_run.results.cells
    first = cell.points[0]
    assert first.durable_checkpoints == [0]
    assert first.resume_outcomes == ["error: EmptyInputError"]
    assert {v.property: v.status for v in first.verdicts}["LIVENESS"] == "violated"


def test_no_racer_survives_a_sweep(sweep_run):
    assert racers_alive(str(sweep_run.run_dir)) == []


SHM = Path("/dev/shm")


def _per_boundary(run_dir: Path) -> dict[str, dict]:
    out = {}
    for line in (run_dir / "journal.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["point"] is None:
            continue  # the dry run
        assert rec["valid"], (rec["point"], rec["invalid_reason"])
        obs = rec["observations"]
        at_kill = obs.get("at_kill") or {}
        out[rec["point"]] = {
            "effects": dict(sorted(Counter(r["effect_key"] for r in rec["ledger"]).items())),
            "checkpoints_at_kill": at_kill.get("checkpoints"),
            "completed_at_kill": at_kill.get("completed_tasks"),
            "resume": (obs.get("resume_outcome") or {}).get("status"),
            "after_resume": (obs.get("after_resume") or {}).get("completed_tasks"),
        }
    return out


@pytest.mark.skipif(not SHM.is_dir(), reason="no /dev/shm on this machine")
def test_the_kill_sweep_gives_the_same_result_at_every_boundary_on_disk_and_on_tmpfs(sweep_run, tmp_path):
    """``chaos run --work-in /dev/shm``: the trials' files on tmpfs, the same kill-sweep results.

    What a killed process wrote is in the page cache on disk and on tmpfs alike, so every boundary
    must give the same result whichever file system holds the checkpoint database
    (``chaos.running.workdir`` argues it; this checks it on the full 21-boundary sweep). The run on
    disk is this file's ``sweep_run`` (moved here from ``test_workdir.py``, which ran it a second time)."""
    seen_in_shm: list[bool] = []

    def on_trial(rec):  # while the run goes on, its work folder is on tmpfs
        seen_in_shm.append((SHM / f"chaos-work-{rec.run_id}").is_dir())

    disk = sweep_run
    shm = run_text(tmp_path, SWEEP, work_in=SHM, on_trial=on_trial)

    on_disk, on_tmpfs = _per_boundary(disk.run_dir), _per_boundary(shm.run_dir)
    assert len(on_disk) == 21
    assert on_tmpfs == on_disk
    # the sweep measured something: a kill right after a's effect makes a fire twice
    after_a = next(p for p in on_disk if p.startswith("effect(task=a)"))
    assert on_disk[after_a]["effects"] == {"a": 2, "b": 1, "c": 1}
    # and the same verdicts
    verdicts = lambda o: [(c.cell_id, [(v.property, v.status) for v in c.verdicts]) for c in o.results.cells]  # noqa: E731
    assert verdicts(disk) and verdicts(shm) == verdicts(disk)
    # where the trials ran is recorded, and nothing is left behind on tmpfs
    assert seen_in_shm and all(seen_in_shm)
    meta = json.loads((shm.run_dir / "run.json").read_text())
    assert meta["work_dir"].startswith(str(SHM))
    assert not Path(meta["work_dir"]).exists()
    assert "work_dir" not in json.loads((disk.run_dir / "run.json").read_text())


def test_a_barrier_never_reached_is_unknown_not_pass(tmp_path):
    from kits.support import make_context

    from chaos.running.trial import TrialRun
    from chaos.scenario.model import expand, parse_scenario

    (cell,) = expand(parse_scenario(SWEEP))
    ctx, close = make_context(tmp_path)
    try:
        run = TrialRun(ctx, cell, "c000-p000-r000", point="put(step=99,source=loop):before#1")
        rec = kill_trial(run, "put(step=99,source=loop):before#1")
        run.cleanup()
    finally:
        close()
    assert not rec.valid and rec.fault_fired is False
    assert "never reached" in rec.invalid_reason
    dry = TrialRecord(
        run_id=rec.run_id,
        cell_index=0,
        cell_id=cell.id,
        trial_id="c000-dry",
        seed=0,
        kind="kill_sweep",
        thread_id="x",
        valid=True,
        observations={"boundaries": ["put(step=99,source=loop):before#1"]},
        t_start_wall=0,
        wall_s=0,
    )
    result = analyze_cell(cell, [dry, rec])
    assert {v.property: v.status for v in result.verdicts} == {"EO": "unknown", "PC": "unknown", "LIVENESS": "unknown"}
    assert "never reached" in result.verdicts[0].reason
    assert result.points[0].reached == 0


FIRST = """\
name: first_small
kind: first_checkpoint
target: {framework: langgraph, backend: sqlite}
workload: three_step
resume: none
trials: 1
seed: 8764
matrix:
  durability: [sync, exit]
"""


def test_first_checkpoint_crash_loses_the_accepted_run(tmp_path):
    out = run_text(tmp_path, FIRST)
    sync, exit_ = out.results.cells
    # sync: the only point before the first durable checkpoint is the first put itself
    assert [p.point for p in sync.points] == ["put(step=-1,source=input):before#1"]
    fcl = {v.property: v for v in sync.verdicts}["FCL"]
    assert fcl.status == "violated" and "EmptyInputError" in fcl.reason
    # exit: nothing is durable until the end, so every effect fires before any checkpoint
    assert any(p.point == "effect(task=c):after#1" for p in exit_.points)
    lost_after_effects = [
        p for p in exit_.points if p.point.startswith("effect(") and {v.property: v.status for v in p.verdicts}["FCL"] == "violated"
    ]
    assert lost_after_effects, [(p.point, p.resume_outcomes) for p in exit_.points]
    assert "already fired" in {v.property: v for v in lost_after_effects[-1].verdicts}["FCL"].reason
    assert json.loads((out.run_dir / "results.json").read_text())["exit_code"] == 1
