"""Power loss and torn writes, as a user runs them: `fault:` on a sweep.

The store of every trial lives on chaos's lazy filesystem (a real FUSE mount); after the real
SIGKILL the filesystem drops what was never fsynced. The self-test pair tells whether that works
here: a LangGraph SQLite saver that fsyncs every commit comes out clean right after each
checkpoint, one that never fsyncs loses its acknowledged checkpoints (DU violated, with the lost
writes as evidence). No mount and no filesystem process outlives a run, a SIGKILLed orchestrator
(after `chaos clean`), or a machine without FUSE (one line, exit 3, before any trial).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from pathlib import Path

import pytest
from kits.robustkit import chaos, chaos_bg, journal_lines, one_line, wait_for

from chaos.lazyfs import lazy_mounts, missing

needs_fuse = pytest.mark.skipif(missing() is not None, reason=f"no lazy filesystem here: {missing()}")

SELFTEST = """
name: {name}
kind: kill_sweep
target: {{framework: langgraph, backend: sqlite, durability: sync}}
workload: three_step_fsync
resume: none
kill_points: ["source=loop):after"]
trials: 1
seed: 7
timeout_s: 60
fault: power_loss
matrix:
  workload: [three_step_fsync, three_step_nosync]
"""


def _mounts_of(tmp_path: Path) -> list[str]:
    return [m for _, m in lazy_mounts() if m.startswith(str(tmp_path))]


def _cells(run_dir: Path) -> dict[str, dict]:
    return {c["cell_id"]: c for c in json.loads((run_dir / "results.json").read_text())["cells"]}


def _verdict(cell: dict, prop: str) -> dict:
    return next(v for v in cell["verdicts"] if v["property"] == prop)


@needs_fuse
@pytest.mark.slow
def test_the_fsyncing_saver_survives_a_power_loss_and_the_lazy_one_is_caught(tmp_path: Path):
    f = tmp_path / "s.yaml"
    f.write_text(SELFTEST.format(name="pl_selftest"))
    p = chaos(["run", str(f), "--out", str(tmp_path / "out")], tmp_path / "state")
    assert p.returncode in (0, 1), p.stdout + p.stderr
    cells = _cells((tmp_path / "out" / "pl_selftest" / "latest").resolve())

    clean = cells["workload=three_step_fsync"]
    assert [v["status"] for v in clean["verdicts"] if v["status"] == "violated"] == []
    assert _verdict(clean, "DU")["status"] == "holds"

    caught = cells["workload=three_step_nosync"]
    du = _verdict(caught, "DU")
    assert du["status"] == "violated"
    assert "had been checkpointed and the run went on" in du["reason"] and "checkpoints.sqlite-wal" in du["reason"]
    assert _mounts_of(tmp_path) == []  # unmounted at the end of the run


def test_a_fault_other_than_kill_is_refused_where_it_cannot_run(tmp_path: Path):
    docker = tmp_path / "d.yaml"
    docker.write_text(SELFTEST.format(name="pl_docker").replace("fault: power_loss", "fault: torn\nracers: {placement: docker}"))
    p = chaos(["validate", str(docker)], tmp_path / "state")
    assert p.returncode == 3
    assert "d.yaml" in p.stderr and "fault 'torn'" in p.stderr and "placement: local" in p.stderr
    deep = tmp_path / "c.yaml"
    deep.write_text(SELFTEST.format(name="pl_deep").replace("fault: power_loss", "fault: power_loss\ncrash_depth: 2"))
    p = chaos(["validate", str(deep)], tmp_path / "state")
    assert p.returncode == 3 and "crash_depth 2" in p.stderr
    race = tmp_path / "r.yaml"
    race.write_text("name: r\nkind: race\nworkload: gate_after_interrupt\nresume: 'command:true'\nfault: power_loss\n")
    p = chaos(["validate", str(race)], tmp_path / "state")
    assert p.returncode == 3 and "applies to sweeps" in p.stderr


def test_a_machine_without_fusermount3_gets_one_line_and_no_trial(tmp_path: Path, monkeypatch):
    f = tmp_path / "s.yaml"
    f.write_text(SELFTEST.format(name="pl_nofuse"))
    bare = tmp_path / "bin"
    bare.mkdir()
    os.symlink(sys.executable, bare / "python")
    monkeypatch.setenv("PATH", str(bare))  # no fusermount3 on it
    p = chaos(["run", str(f), "--out", str(tmp_path / "out")], tmp_path / "state")
    assert p.returncode == 3, p.stdout + p.stderr
    line = one_line(p.stderr)
    assert "fusermount3 is not installed" in line and "apt-get install fuse3" in line
    assert not (tmp_path / "out" / "pl_nofuse").exists() or not list((tmp_path / "out" / "pl_nofuse").glob("*/journal.jsonl"))


@needs_fuse
@pytest.mark.slow
@pytest.mark.exclusive  # an orphan mount on purpose: any other run's start on this machine would unmount it first
def test_chaos_clean_unmounts_the_filesystem_of_a_sigkilled_orchestrator(tmp_path: Path):
    f = tmp_path / "s.yaml"
    f.write_text(SELFTEST.format(name="pl_killed").replace("trials: 1", "trials: 20"))
    orch = chaos_bg(["run", str(f), "--out", str(tmp_path / "out")], tmp_path / "state")
    try:
        journal = lambda: next((tmp_path / "out" / "pl_killed").glob("*/journal.jsonl"), None)  # noqa: E731
        wait_for(lambda: journal() is not None and journal_lines(journal()) >= 2, 120, "two journaled trials")
        assert _mounts_of(tmp_path), "the run mounts its lazy filesystem"
        orch.send_signal(signal.SIGKILL)
        orch.wait()
    finally:
        if orch.poll() is None:
            orch.kill()
            orch.wait()
    assert _mounts_of(tmp_path), "a SIGKILLed orchestrator unmounts nothing: the mount is left for chaos clean"
    p = chaos(["clean"], tmp_path / "state")
    assert p.returncode == 0, p.stdout + p.stderr
    assert _mounts_of(tmp_path) == []
    assert "lazy filesystem mount" in p.stdout
    assert shutil.which("fusermount3")
