"""A user crashes the recovery too: kill, resume, kill the resume at its own boundary, resume again.

``crash_depth: 2`` kills the first recovery at each of its boundaries (discovered per first kill
point, as the dry run discovers the workload's); each nested trial has a stable id that
``chaos rerun`` reproduces.
"""

from __future__ import annotations

import pytest
from kits.runs import run_text

from chaos.kinds import get_kind
from chaos.kinds.checking import compose
from chaos.racer.errors import ScenarioError
from chaos.records import TrialRecord
from chaos.running.options import RunOptions
from chaos.running.resume import rerun
from chaos.scenario.model import expand, parse_scenario

NESTED = """\
name: nested_small
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
trials: 1
seed: 20261201
crash_depth: 2
kill_points: ["effect(task=b)"]
recovery_kill_points: ["effect(task=b)"]
"""

CHAIN = "effect(task=b):after#1 >> effect(task=b):after#1"


@pytest.fixture(scope="module")
def nested_run(tmp_path_factory):
    return run_text(tmp_path_factory.mktemp("nested"), NESTED)


def test_a_crash_inside_the_recovery_fires_the_effect_a_third_time(nested_run):
    (cell,) = nested_run.results.cells
    (point,) = cell.points
    assert point.point == CHAIN and point.reached == 1
    assert point.effect_counts == {"a": [1], "b": [3], "c": [1]}
    eo, pc, live = cell.verdicts
    assert (eo.property, eo.status) == ("EO", "violated"), eo.reason
    assert eo.evidence.trial_ids == ["c000-p000-q000-r000"] and len(eo.evidence.ledger_seqs) == 3
    assert (pc.status, live.status) == ("holds", "holds")
    # the recovery's boundaries were discovered once, and that trial is never judged
    assert cell.trials == 1 and nested_run.results.summary.trials == 3


def test_rerun_reproduces_a_nested_trial_by_its_id(nested_run, tmp_path):
    outcome, comparison = rerun(nested_run.run_dir, ["c000-p000-q000-r000"], RunOptions(out=tmp_path))
    (cell,) = outcome.results.cells
    (point,) = cell.points
    assert point.point == CHAIN and point.effect_counts == {"a": [1], "b": [3], "c": [1]}
    assert {(c["property"], c["was"], c["now"]) for c in comparison} >= {("EO", "violated", "violated")}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("crash_depth: 0", "t.yaml:4: crash_depth: crash_depth must be at least 1"),
        ("crash_depth: -1", "t.yaml:4: crash_depth: crash_depth must be at least 1"),
    ],
)
def test_a_depth_below_one_is_refused_with_file_line_and_field(line, expected):
    with pytest.raises(ScenarioError, match=expected):
        parse_scenario(f"name: t\nkind: kill_sweep\nworkload: three_step\n{line}\n", "t.yaml")


def test_a_depth_on_a_kind_that_does_not_crash_twice_is_refused():
    with pytest.raises(ScenarioError, match=r"t.yaml:4: crash_depth: kind race does not read it; kinds that do: kill_sweep"):
        parse_scenario("name: t\nkind: race\nworkload: gate_after_interrupt\ncrash_depth: 2\nresume: command:true\n", "t.yaml")


def _rec(trial_id: str, *, valid: bool, point: str | None = None, reason: str | None = None, **obs) -> TrialRecord:
    return TrialRecord(
        run_id="r", cell_index=0, cell_id="default", trial_id=trial_id, point=point, seed=1, kind="kill_sweep", thread_id="t",
        valid=valid, invalid_reason=reason, observations=obs, t_start_wall=0.0, wall_s=0.0,
    )  # fmt: skip


def test_a_recovery_whose_boundaries_could_not_be_found_is_unknown_with_the_reason():
    (cell,) = expand(parse_scenario(NESTED, "nested.yaml"), check=False)
    records = [
        _rec("c000-dry", valid=True, boundaries=["effect(task=b):after#1"]),
        _rec("c000-p000-dry", valid=False, point="effect(task=b):after#1", reason="resume racer never reached its hold (timeout)"),
    ]
    result = compose(get_kind("kill_sweep"), cell, records)
    (point,) = result.points
    assert point.point == "effect(task=b):after#1 >> (recovery)"
    assert all(v.status == "unknown" for v in result.verdicts)
    assert "resume racer never reached its hold (timeout)" in result.verdicts[0].reason
