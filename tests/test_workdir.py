"""``chaos run --work-in DIR``: a work folder that does not exist is refused before anything runs.

That the sweep's results are the same on tmpfs as on disk is told in ``test_sweep.py``
(``test_the_kill_sweep_gives_the_same_result_at_every_boundary_on_disk_and_on_tmpfs``), beside the
run on disk it compares with.
"""

from __future__ import annotations

from typer.testing import CliRunner

from chaos.cli.app import app

SCENARIO = """\
name: sweep_workdir
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
trials: 1
seed: 7
"""


def test_a_work_folder_that_does_not_exist_is_refused_before_anything_runs(tmp_path):
    scenario = tmp_path / "sweep.yaml"
    scenario.write_text(SCENARIO)
    res = CliRunner().invoke(app, ["run", str(scenario), "--out", str(tmp_path / "out"), "--work-in", str(tmp_path / "nope"), "-q"])
    assert res.exit_code != 0
    assert "--work-in" in res.output and "no such folder" in res.output
    assert not (tmp_path / "out").exists()
