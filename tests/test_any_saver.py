"""A checkpointer author points chaos at their own LangGraph saver and sees it crash-tested like
the built-in ones: the scenario names a factory (``target.saver``), chaos wraps what it returns."""

from __future__ import annotations

import subprocess
import sys

import pytest
from kits.runs import run_text, write_scenario

from chaos.racer.errors import EnvironmentProblem, ScenarioError
from chaos.scenario.model import load_scenario

SWEEP = """\
name: any_saver_sweep
kind: kill_sweep
target: {{framework: langgraph, durability: sync, {target}}}
workload: three_step
resume: none
trials: 1
seed: 11
"""


def _points(run):
    (cell,) = run.results.cells
    return {p.point: {v.property: v.status for v in p.verdicts} for p in cell.points}


@pytest.fixture(scope="module")
def factory_and_builtin(tmp_path_factory):
    by_factory = run_text(tmp_path_factory.mktemp("factory"), SWEEP.format(target='saver: "tests.kits.savers:sqlite"'))
    builtin = run_text(tmp_path_factory.mktemp("builtin"), SWEEP.format(target="backend: sqlite"))
    return by_factory, builtin


def test_a_saver_named_by_factory_is_swept_at_the_same_boundaries_with_the_same_verdicts(factory_and_builtin):
    by_factory, builtin = factory_and_builtin
    assert by_factory.results.cells[0].backend == "saver"
    points = _points(by_factory)
    assert len(points) > 10
    assert points == _points(builtin)
    # the effect of b fired, then the kill, then b ran again on resume: LangGraph's at-least-once
    assert points["effect(task=b):after#1"]["EO"] == "violated"
    assert next(v for p, v in points.items() if p.startswith("put_writes(node=b,") and p.endswith(":after#1"))["EO"] == "holds"


def test_a_factory_that_returns_no_saver_is_refused_in_one_line_before_any_trial(tmp_path):
    path = write_scenario(tmp_path, SWEEP.format(target='saver: "tests.kits.savers:not_a_saver"'))
    proc = subprocess.run(
        [sys.executable, "-m", "chaos", "run", str(path), "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 3
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert str(path) in line and "target.saver" in line and "returned Connection, not a langgraph BaseCheckpointSaver" in line
    assert not (tmp_path / "out").exists()


def test_a_factory_that_raises_names_its_exception(tmp_path):
    from chaos.racer.errors import TargetError

    with pytest.raises(
        TargetError, match=r"target.saver 'tests.kits.savers:raises' raised while building the saver: RuntimeError: no credentials"
    ):
        run_text(tmp_path, SWEEP.format(target='saver: "tests.kits.savers:raises"'))


def test_a_factory_that_does_not_exist_is_refused_at_validate_time(tmp_path):
    path = write_scenario(tmp_path, SWEEP.format(target='saver: "tests.kits.nosuch:make"'))
    with pytest.raises(ScenarioError, match=r"scenario.yaml:3: target.saver: the saver factory 'tests.kits.nosuch:make' cannot be found"):
        load_scenario(path)


def test_a_saver_replaces_the_backend(tmp_path):
    path = write_scenario(tmp_path, SWEEP.format(target='backend: sqlite, saver: "tests.kits.savers:sqlite"'))
    with pytest.raises(ScenarioError, match="target.saver: a saver factory is for framework langgraph and replaces backend"):
        load_scenario(path)


THIRD_PARTY = {
    "lmdb": "langgraph-checkpoint-lmdb==0.3.1",
    "objectstorage": "langgraph-checkpoint-objectstorage==0.1.15",
}


@pytest.mark.parametrize("saver", sorted(THIRD_PARTY))
def test_a_third_party_saver_from_pypi_runs_the_sweep_in_its_own_environment(saver, tmp_path):
    from chaos.envs import python_for

    requirement = THIRD_PARTY[saver]
    try:
        python = python_for("langgraph", None, [requirement])
    except EnvironmentProblem as exc:
        pytest.skip(f"{requirement} cannot be installed here: {exc}")
    assert python != sys.executable  # the main interpreter is not changed
    run = run_text(tmp_path, SWEEP.format(target=f'saver: "chaos.savers:{saver}", requirements: ["{requirement}"]'))
    (cell,) = run.results.cells
    assert cell.valid_trials == cell.trials
    assert cell.versions.get(requirement.split("==")[0]) == requirement.split("==")[1]  # the saver's release is recorded
    assert all(p.reached == 1 for p in cell.points)  # every kill point fired: no vacuous point
    points = _points(run)
    assert points["effect(task=b):after#1"]["EO"] == "violated"
    assert next(v for p, v in points.items() if p.startswith("put_writes(node=b,") and p.endswith(":after#1"))["EO"] == "holds"
