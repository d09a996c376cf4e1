"""A user drives chaos from Python: ``import chaos``, run a scenario, read the verdicts as values.

``import chaos`` costs nothing (the racer side ships the same ``chaos/__init__.py`` to containers
and hosts), the names in ``chaos.__all__`` are the API, and a run returns ``RunResults`` whose
helpers answer "which cells violated what, and why" without parsing results.json.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import chaos
from chaos.racer.errors import ScenarioError

STRAY = {
    "name": "api_stray",
    "kind": "stray_resume",
    "target": {"framework": "langgraph", "backend": "sqlite", "durability": "sync"},
    "workload": "gate_after_interrupt",
    "resume": "command:approve",
    "trials": 2,
    "seed": 5,
    "matrix": {
        "case": [
            {"name": "completed", "workload": "gate_after_interrupt"},
            {"name": "waiting", "workload": "two_gates", "backend": "memory"},
        ]
    },
}


def test_import_chaos_pulls_in_no_third_party_package():
    code = (
        "import json, sys; before = set(sys.modules); import chaos; "
        "new = {m.partition('.')[0] for m in set(sys.modules) - before}; "
        "print(json.dumps(sorted(new - set(sys.stdlib_module_names) - {'chaos'})))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == []


def test_every_public_name_resolves_and_nothing_else_is_offered():
    for name in chaos.__all__:
        assert getattr(chaos, name) is not None, name
    assert set(chaos.__all__) <= set(dir(chaos))
    assert chaos.RunResults.__name__ == "RunResults" and callable(chaos.run)
    with pytest.raises(AttributeError, match="no attribute 'orchestrator_run'"):
        chaos.orchestrator_run  # noqa: B018


def test_a_scenario_dict_with_a_bad_field_is_refused_naming_the_field(tmp_path):
    with pytest.raises(ScenarioError, match=r"racers\.k"):
        chaos.run({**STRAY, "racers": {"k": 0}}, out=tmp_path)
    with pytest.raises(TypeError, match="unknown option 'trails'"):
        chaos.run(STRAY, out=tmp_path, trails=3)
    assert not any(tmp_path.iterdir())  # refused before anything was written


def test_load_scenario_reads_a_shipped_file(repo):
    s = chaos.load_scenario(repo / "scenarios" / "consume_once_k4.yaml")
    assert (s.name, s.kind, s.racers.k) == ("consume_once_k4", "race", 4)


@pytest.fixture(scope="module")
def stray_results(tmp_path_factory):
    return chaos.run(STRAY, out=tmp_path_factory.mktemp("api") / "reports")


def test_a_run_returns_results_that_name_their_folder(stray_results):
    res = stray_results
    assert res.run_dir is not None and (res.run_dir / "results.json").is_file()
    stored = json.loads((res.run_dir / "results.json").read_text())
    assert stored == json.loads(res.model_dump_json())  # the helpers add nothing to the JSON
    assert "run_dir" not in stored
    # the waiting case violates CO and AR (the repeated answer lands on the later pause), the completed one holds CO
    assert res.exit_code == 1 and res.verdict_counts == {"holds": 1, "violated": 2, "unknown": 0}


def test_the_helpers_say_which_cells_violated_what(stray_results):
    res = stray_results
    assert [(cell, v.property, v.status) for cell, v in res.verdicts("CO")] == [
        ("case=completed", "CO", "holds"),
        ("case=waiting", "CO", "violated"),
    ]
    assert res.verdicts("EO") == []
    assert [(cell, v.property) for cell, v in res.violations()] == [("case=waiting", "CO"), ("case=waiting", "AR")]
    ((cell, v),) = res.violations("CO")
    assert cell == "case=waiting" and v.evidence.trial_ids == ["c001-t0000", "c001-t0001"]
    assert res.unknowns() == []


def test_assert_holds_names_the_property_the_cells_the_reasons_and_the_folder(stray_results):
    res = stray_results
    with pytest.raises(AssertionError) as err:
        res.assert_holds("CO")
    msg = str(err.value)
    assert msg.startswith("CO does not hold in 1 of 2 verdict(s)")
    assert "cell case=waiting: CO violated: 2/2 trials: the stray answer" in msg
    assert "c001-t0000" in msg and str(res.run_dir) in msg
    assert "case=completed" not in msg
    with pytest.raises(AssertionError, match="FD: no cell judged it"):
        res.assert_holds("FD")


def test_analyze_rescores_the_stored_run_without_writing(stray_results):
    folder = stray_results.run_dir
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    again = chaos.analyze(folder)
    assert again.model_dump() == stray_results.model_dump()
    assert again.run_dir == folder
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before


def test_rerun_of_one_violating_trial_violates_again(stray_results, tmp_path):
    again = chaos.rerun(stray_results.run_dir, "c001-t0001", chaos.RunOptions(out=tmp_path))
    folder = again.run_dir
    assert folder is not None and folder.parent.parent == tmp_path and folder.name.endswith("-rerun")
    ((cell, v),) = again.violations("CO")
    assert cell == "case=waiting" and v.evidence.trial_ids == ["c001-t0001"]
    meta = json.loads((folder / "run.json").read_text())
    assert [(c["property"], c["was"], c["now"]) for c in meta["comparison"]] == [
        ("CO", "violated", "violated"),
        ("AR", "violated", "violated"),
    ]


def test_a_rerun_beside_its_run_leaves_latest_on_the_run(stray_results):
    """``latest`` names the scenario's last full run: re-running one trial into the same folder
    writes a ``-rerun`` run beside it and leaves ``latest`` where it was."""
    out = stray_results.run_dir.parent.parent
    latest = stray_results.run_dir.parent / "latest"
    assert latest.resolve() == stray_results.run_dir.resolve()
    again = chaos.rerun(stray_results.run_dir, "c001-t0001", chaos.RunOptions(out=out))
    assert again.run_dir is not None and again.run_dir.parent == stray_results.run_dir.parent
    assert latest.resolve() == stray_results.run_dir.resolve()
