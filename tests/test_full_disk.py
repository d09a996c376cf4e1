"""A full disk is the environment's fault: the run stops with exit 3, and a resume re-runs what it spoiled.

docs/getting-started.md promises exit 3 for "a full disk" with one line naming what failed and what to do. Each
story mounts a real tmpfs, runs a real sweep on it, and takes the file system's last byte once the
cell's dry run is journaled (``fill``, as another program would): under ``--work-in`` (the racers'
results and stores), under ``--out`` (the journal and the effect ledger), and below the lazy
filesystem of a ``fault: power_loss`` run (where the stores' synced writes land). Whatever write
fails first, a racer's result, a SQLite store, the ledger or the lazy filesystem's flush, no trial
is counted "errored" or valid on the full disk, the run fails in one line naming the full folder,
and ``chaos run --resume`` on a disk with room again runs the rest, to the verdicts of a run that
never saw the fault.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from kits.diskkit import fill, small_tmpfs
from kits.runs import run_text, write_scenario

from chaos.lazyfs import missing
from chaos.running.failure import RunFailed
from chaos.running.options import RunOptions
from chaos.running.orchestrator import run_scenario
from chaos.running.resume import resume_run
from chaos.running.stored import StoredTrials

SWEEP = """\
    name: full_disk
    kind: kill_sweep
    target: {framework: langgraph, backend: sqlite, durability: sync}
    workload: three_step
    resume: none
    kill_points: ["node=b"]
    trials: 2
    seed: 5
"""

POWER = """\
    name: full_below_lazy
    kind: kill_sweep
    target: {framework: langgraph, backend: sqlite, durability: sync}
    workload: three_step_fsync
    resume: none
    kill_points: ["source=loop):after"]
    trials: 1
    seed: 7
    timeout_s: 60
    fault: power_loss
"""


def _statuses(results) -> dict[str, str]:
    return {f"{c.cell_id}/{v.property}": v.status for c in results.cells for v in c.verdicts}


def _journal(run_dir: Path) -> list[dict]:
    """The journaled trials, as every reader of a run folder reads them (a torn last line is no trial)."""
    stored = StoredTrials(run_dir / "journal.jsonl")
    return [stored.raw(t) for t in stored.ids()]


def _run_until_full(scenario: Path, full: Path, **opts) -> tuple[str, Path]:
    """Run ``scenario`` and fill ``full``'s file system once the first trial (the dry run) is
    journaled, then free it again; returns the one line the run failed with and its run folder."""
    fillers: list[Path] = []

    def on_trial(rec) -> None:
        if not fillers:
            fillers.append(fill(full))

    with pytest.raises(RunFailed) as failed:
        run_scenario(scenario, RunOptions(on_trial=on_trial, **opts))
    for f in fillers:
        f.unlink()  # room again, for the resume
    return str(failed.value), _run_dir(str(failed.value))


def _run_dir(line: str) -> Path:
    return Path(line.rsplit("chaos run --resume ", 1)[1].strip("`"))


def _judge(line: str, full: Path, run_dir: Path) -> None:
    assert "\n" not in line
    assert str(full) in line and "no space left on device" in line.lower()
    assert f"chaos run --resume {run_dir}" in line
    meta = json.loads((run_dir / "run.json").read_text())
    if "could not write run.json" not in line:  # a full --out may leave no room for run.json's mark: the line says so
        assert "no space left on device" in meta["failed"].lower()
    for rec in _journal(run_dir):  # what was journaled was measured before the disk filled: valid, never errored
        assert rec["valid"], rec["invalid_reason"]


def _resume_matches_calm(text: str, run_dir: Path, calm_dir: Path) -> None:
    """``chaos run --resume`` with room again ends as a run that never saw the fault."""
    resumed = resume_run(run_dir, RunOptions(out=run_dir.parent.parent)).results
    calm_dir.mkdir()
    calm = run_text(calm_dir, text).results
    assert resumed.summary.errored == 0 and resumed.summary.environment == 0
    assert resumed.summary.trials == calm.summary.trials == resumed.summary.valid
    assert _statuses(resumed) == _statuses(calm)
    assert resumed.exit_code == calm.exit_code


def test_a_full_work_folder_stops_the_run_with_exit_3_and_resume_reruns_the_spoiled_trials(tmp_path: Path):
    scenario = write_scenario(tmp_path, SWEEP)
    with small_tmpfs(tmp_path / "small", "2m") as small:
        line, run_dir = _run_until_full(scenario, small, out=tmp_path / "reports", work_in=small)
        _judge(line, small, run_dir)
        assert len(_journal(run_dir)) == 1  # the dry run; the trial the full disk spoiled is not journaled as done
        _resume_matches_calm(SWEEP, run_dir, tmp_path / "calm")


def test_a_full_out_folder_stops_the_run_with_exit_3_and_resume_reruns_the_spoiled_trials(tmp_path: Path):
    scenario = write_scenario(tmp_path, SWEEP)
    with small_tmpfs(tmp_path / "small", "2m") as small:
        line, run_dir = _run_until_full(scenario, small, out=small / "reports")
        assert run_dir.is_relative_to(small)
        _judge(line, small, run_dir)
        _resume_matches_calm(SWEEP, run_dir, tmp_path / "calm")


@pytest.mark.skipif(missing() is not None, reason=f"no lazy filesystem here: {missing()}")
def test_a_full_disk_below_the_lazy_filesystem_stops_the_run_with_exit_3(tmp_path: Path):
    """Only the lazy filesystem's backing folder is full: the stores' fsyncs fail below it, while the
    racers' results and the journal have room."""
    scenario = write_scenario(tmp_path, POWER)
    work_in = tmp_path / "work"
    work_in.mkdir()
    mounted: list[Path] = []

    def below() -> Path:
        (work_dir,) = work_in.glob("chaos-work-*")
        return work_dir / "lazy.below"

    with small_tmpfs(tmp_path / "small", "1m") as small:

        def on_trial(rec) -> None:
            if not mounted:  # the trials after the dry run keep their stores on the full file system
                target = below()
                subprocess.run(["mount", "--bind", str(small), str(target)], check=True)
                mounted.append(target)
                fill(small)

        try:
            with pytest.raises(RunFailed) as failed:
                run_scenario(scenario, RunOptions(out=tmp_path / "reports", work_in=work_in, on_trial=on_trial))
        finally:
            for m in mounted:
                subprocess.run(["umount", "-l", str(m)], capture_output=True)
        line = str(failed.value)
        _judge(line, mounted[0], _run_dir(line))
