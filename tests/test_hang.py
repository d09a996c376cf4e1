"""A racer that hangs is killed after timeout_s and its trial is recorded as hung (``info``),
never waited on forever; and nothing a run writes carries a secret from its scenario."""

from __future__ import annotations

import json

from kits.robustkit import chaos

from chaos.running import registry
from chaos.running.journal import read_journal

SCENARIO = """\
name: hang_probe
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: tests.workloads.user_workloads:hang_forever
workload_params:
  dsn: "postgresql://chaos:hunter2-secret@db.example:5432/app"
  note: "api_key=sk-live-abcdefghijklmnopqrstuvwxyz"
resume: none
trials: 1
seed: 9
timeout_s: 8
"""


def test_a_hung_racer_is_killed_and_its_trial_recorded_as_hung(tmp_path):
    scenario = tmp_path / "hang_probe.yaml"
    scenario.write_text(SCENARIO)
    state = tmp_path / "state"
    out = chaos(["run", str(scenario), "--out", str(tmp_path / "out"), "-q"], state)
    assert out.returncode == 2, out.stdout + out.stderr  # unknown: nothing could be measured
    assert "1 hung" in out.stdout
    run_dir = (tmp_path / "out" / "hang_probe" / "latest").resolve()
    (dry,), torn = read_journal(run_dir / "journal.jsonl")
    assert not torn and dry["trial_id"] == "c000-dry" and dry["valid"] is False
    (racer,) = dry["racers"]
    assert racer["status"] == "timeout" and racer["signal"] == 9
    assert [op["type"] for op in dry["history"]] == ["invoke", "info"]
    assert "no exit within 8.0s" in dry["history"][1]["detail"]
    # it fired a, then hung in the node (on a machine too loaded to start the racer within the
    # timeout it hangs in start-up instead: the same verdict, killed and recorded as hung)
    assert [row["task"] for row in dry["ledger"]] in (["a"], [])
    results = json.loads((run_dir / "results.json").read_text())
    assert results["summary"]["hung"] == 1 and results["summary"]["valid"] == 0
    assert "1 hung" in (run_dir / "report.md").read_text()
    run_id = results["run_id"]
    assert not registry.racer_processes(run_id)
    assert not (run_dir / "work").exists()

    # secrets given in the scenario appear in no file the run wrote
    for f in run_dir.iterdir():
        if f.is_file() and f.suffix in (".json", ".jsonl", ".md", ".html", ".xml"):
            text = f.read_text()
            assert "hunter2-secret" not in text, f.name
            assert "sk-live-abcdefghijklmnopqrstuvwxyz" not in text, f.name
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["scenario"]["workload_params"]["dsn"] == "postgresql://chaos:***@db.example:5432/app"
