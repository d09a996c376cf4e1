"""``chaos run --work-in /dev/shm``: the trials' files on tmpfs, the same kill-sweep results.

A kill sweep SIGKILLs racers at deterministic barriers; what a killed process wrote is in the
page cache on disk and on tmpfs alike, so every boundary must give the same result whichever
file system holds the checkpoint database (``chaos.running.workdir`` argues it; this checks it on the
full 21-boundary sweep of ``three_step``).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chaos.cli.app import app
from chaos.running.options import RunOptions
from chaos.running.orchestrator import run_scenario

SHM = Path("/dev/shm")

SCENARIO = """\
name: sweep_workdir
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
trials: 1
seed: 7
"""


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
def test_the_kill_sweep_gives_the_same_result_at_every_boundary_on_disk_and_on_tmpfs(tmp_path):
    scenario = tmp_path / "sweep.yaml"
    scenario.write_text(SCENARIO)
    seen_in_shm: list[bool] = []

    def on_trial(rec):  # while the run goes on, its work folder is on tmpfs
        seen_in_shm.append((SHM / f"chaos-work-{rec.run_id}").is_dir())

    disk = run_scenario(scenario, RunOptions(out=tmp_path / "disk"))
    shm = run_scenario(scenario, RunOptions(out=tmp_path / "shm", work_in=SHM, on_trial=on_trial))

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


def test_a_work_folder_that_does_not_exist_is_refused_before_anything_runs(tmp_path):
    scenario = tmp_path / "sweep.yaml"
    scenario.write_text(SCENARIO)
    res = CliRunner().invoke(app, ["run", str(scenario), "--out", str(tmp_path / "out"), "--work-in", str(tmp_path / "nope"), "-q"])
    assert res.exit_code != 0
    assert "--work-in" in res.output and "no such folder" in res.output
    assert not (tmp_path / "out").exists()
