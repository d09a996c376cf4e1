"""The tiny suite the shard tests split, and what a night concluded, read back for comparing.

Why it exists: ``tests/test_shard.py`` (shards as local processes) and ``tests/test_shard_lab.py``
(shards on the SSH lab hosts) run the same suite unsharded and in two shards and compare the
merged night with the unsharded one; both must compare the same things the same way.

What it promises: ``write_tiny_suite`` writes a two-scenario suite of real LangGraph racers (a kill
sweep under sync durability and a stray resume, eight trials in all) whose verdicts do not depend
on timing, so a sharded night must say exactly what one machine says. ``verdicts``, ``seeds`` and
``summary`` read a night folder the way ``chaos merge`` and ``chaos nightly`` wrote it.
``tiny_full_night`` (a session fixture: ``tests/conftest.py`` loads this kit as a plugin) is that
suite run once unsharded on this machine, the night every local shard story compares its merged
halves with; ``test_shard.py`` and ``test_shard_queue.py`` share the ``xdist_group`` ``SHARDS``, so
one worker runs both files and the night once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from chaos.kinds.sweep import DRY_RUN_FAILED

ROOT = Path(__file__).resolve().parents[2]

SWEEP = """name: tiny_sweep
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
trials: 1
seed: 5
kill_points: ["effect(task=b)", "effect(task=c)"]
matrix:
  resume: [none, "command:true"]
"""
STRAY = """name: tiny_stray
kind: stray_resume
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: gate_after_interrupt
resume: "command:approve"
trials: 1
seed: 6
matrix:
  workload: [gate_after_interrupt, two_gates]
"""
CELLS = 4  # two scenarios, two cells each
SHARDS = "shards"  # the xdist_group of the files that compare with tiny_full_night
FULL_DATE = "2026-01-01"  # the unsharded night's date (a night's verdicts and seeds do not depend on it)

# kinds whose verdict may differ between two runs of the same cell with the same seeds: the outcome
# of a race (how many racers fire, whether all finish in time) is the scheduler's, not the seed's;
# recovery determinism under async durability or a framework's background checkpoint writes asks
# whether recoveries agree, and that is thread timing too. Measured (bench/README.md): nightly.yaml
# unsharded vs two shards merged, 104 of 105 cells equal (the other a 3-trial race cell);
# nightly_full.yaml, 210 of 212 (the other two recovery_determinism: LangGraph async, CrewAI
# checkpoint_json). shared_state enumerates schedules: exact, so compared.
OPEN_KINDS = frozenset({"race", "recovery_determinism"})


def kill_point_trial(trial_id: str) -> bool:
    """A trial at a kill point a dry run found (``c005-p007-r000``). Which boundaries a run crosses
    can vary where the framework writes in the background (CrewAI's checkpoint_json saves on its own
    thread), so two runs of the same cell may find a point the other did not: such trials may be
    on one side only (measured on nightly_full: 5 of 1,811 trials, all CrewAI checkpoint_json)."""
    return "-p" in trial_id


def framework_failed_dry(cell: dict) -> bool:
    """A night's cell whose dry run the framework failed on its own (CrewAI's checkpoint listener
    panics in pydantic-core in about 1 dry run in 10): unknown in one night, measured in another."""
    return (cell.get("failure") or "").startswith(f"{DRY_RUN_FAILED} (framework:")


def write_tiny_suite(d: Path) -> Path:
    """The suite file (with its two scenario files beside it) in ``d``."""
    (d / "sweep.yaml").write_text(SWEEP)
    (d / "stray.yaml").write_text(STRAY)
    suite = d / "suite.yaml"
    suite.write_text("name: tiny\nscenarios:\n  - file: sweep.yaml\n  - file: stray.yaml\n")
    return suite


def env() -> dict[str, str]:
    """This process's environment with the repository first on PYTHONPATH (no editable install needed)."""
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def chaos(*args: object, wait: bool = True, timeout: float = 600):
    """``python -m chaos ARGS`` on this machine: the finished process, or the running one (``wait=False``)."""
    cmd = [sys.executable, "-m", "chaos", *map(str, args)]
    if wait:
        return subprocess.run(cmd, cwd=ROOT, env=env(), capture_output=True, text=True, timeout=timeout)
    return subprocess.Popen(cmd, cwd=ROOT, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def summary(night: Path) -> dict:
    return json.loads((night / "summary.json").read_text())


def cells(s: dict) -> dict[tuple[str, str], dict]:
    """A night's summary's cells by (scenario, cell id)."""
    return {(r["scenario"], c["cell_id"]): c for r in s["runs"] for c in r["cells"]}


def verdicts(s: dict, open_kinds: frozenset[str] = frozenset()) -> list:
    """What a night concluded: each run's exit code, and each cell's verdicts and trial counts
    (a cell of an ``open_kinds`` kind keeps its trial count only)."""
    return [
        (
            r["scenario"],
            r["exit_code"],
            [
                (c["cell_id"], c["trials"]) if c["kind"] in open_kinds else (c["cell_id"], c["verdicts"], c["valid_trials"], c["trials"])
                for c in r["cells"]
            ],
        )
        for r in s["runs"]
    ]


def seeds(night: Path) -> dict[tuple[str, str], int]:
    """Every trial a night ran, by (run folder's scenario folder, trial id): its seed."""
    out = {}
    for journal in night.glob("*/*/journal.jsonl"):
        for line in journal.read_text().splitlines():
            rec = json.loads(line)
            out[(journal.parent.parent.name, rec["trial_id"])] = rec["seed"]
    return out


@dataclass(frozen=True)
class FullNight:
    """The tiny suite run unsharded: the finished ``chaos nightly`` and its night folder."""

    proc: subprocess.CompletedProcess
    night: Path


@pytest.fixture(scope="session")
def tiny_full_night(tmp_path_factory) -> FullNight:
    d = tmp_path_factory.mktemp("tiny_full")
    write_tiny_suite(d)
    return FullNight(chaos("nightly", d / "suite.yaml", "--out", d / "full", "--date", FULL_DATE, "-q"), d / "full" / FULL_DATE)
