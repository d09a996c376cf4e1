"""A team tests its own graph by naming its factory; a factory that cannot load is refused up front."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kits.runs import run_text

from chaos.kinds.sweep import DRY_RUN_FAILED
from chaos.racer.errors import ChaosError

WORKLOADS = Path(__file__).parent / "workloads"


def test_a_users_graph_is_swept_like_a_builtin(tmp_path):
    shutil.copy(WORKLOADS / "user_workloads.py", tmp_path / "user_workloads.py")
    out = run_text(
        tmp_path,
        """\
        name: mine
        kind: kill_sweep
        target: {durability: sync}  # a user's workload runs with LangGraph's default durability unless pinned: these assertions were made under sync
        workload: user_workloads:two_step
        resume: none
        trials: 1
        seed: 5
    """,
    )
    (cell,) = out.results.cells
    points = {p.point: p for p in cell.points}
    assert points["effect(task=charge):after#1"].duplicates == ["charge"]
    assert points["effect(task=email):after#1"].effect_counts["email"] == [2]


def test_a_graph_that_fails_with_no_crash_is_not_swept_and_says_why(tmp_path):
    # LangGraph refuses the email node's return value in the uninterrupted dry run: there is no
    # finished run to compare recoveries with, so no kill point is tried and every verdict is unknown
    # with the framework's error (never a verdict measured against half a run)
    shutil.copy(WORKLOADS / "user_workloads.py", tmp_path / "user_workloads.py")
    out = run_text(
        tmp_path,
        """\
        name: mine
        kind: kill_sweep
        workload: user_workloads:email_returns_text_in_the_dry_run
        resume: none
        trials: 1
        seed: 5
    """,
    )
    (cell,) = out.results.cells
    assert cell.failure and cell.failure.startswith(f"{DRY_RUN_FAILED} (framework: InvalidUpdateError"), cell.failure
    assert cell.verdicts and all(v.status == "unknown" and v.reason == cell.failure for v in cell.verdicts)
    assert not cell.points and cell.valid_trials == 0
    assert out.results.exit_code == 2  # nothing was measured, which is not a pass


def test_a_factory_that_does_not_exist_is_refused_before_anything_runs(tmp_path):
    shutil.copy(WORKLOADS / "user_workloads.py", tmp_path / "user_workloads.py")
    # refused while loading the scenario (the factory is looked up in the module's source, without
    # running it) or, failing that, by the preflight import in the racers' Python
    with pytest.raises(ChaosError, match=r"user_workloads:nope.*(defines no 'nope'|does not import.*AttributeError)"):
        run_text(
            tmp_path,
            """\
            name: mine
            kind: kill_sweep
            workload: user_workloads:nope
            trials: 1
        """,
        )
    assert not (tmp_path / "reports").exists()


def test_a_factory_that_raises_is_refused_before_any_trial_with_its_last_traceback_line(tmp_path):
    shutil.copy(WORKLOADS / "user_workloads.py", tmp_path / "user_workloads.py")
    with pytest.raises(ChaosError) as raised:
        run_text(
            tmp_path,
            """\
            name: mine
            kind: race
            workload: user_workloads:broken_at_build
            resume: "command:1"
            trials: 20
        """,
        )
    said = raised.value.message
    assert "scenario.yaml: workload 'user_workloads:broken_at_build'" in said
    assert "RuntimeError: this workload cannot be built" in said and "user_workloads.py:" in said
    assert raised.value.exit_code == 3
    assert not (tmp_path / "reports").exists()  # nothing was run, nothing counted
