"""A team upgrades LangGraph while threads wait at an approval, and learns what the resume does (UP).

Users filed threads that failed or silently changed after a library release (LangGraph 7498:
MESSAGE_COERCION_FAILURE for threads saved before 1.0.1; 6970 and 7066: an unknown type back as
``None`` or a raw dict; langchain-mongodb 287: a saver's metadata format). Here v1 parks the thread
under LangGraph 1.0.10 in that release's own environment, v2 resumes it under 1.2.24 (another
environment, the same app code), and 1.2.24 alone is the expected result. The outcome asserted is
what these two releases do, every time (no race is involved): both use langgraph-checkpoint 4.3.2,
so messages, a dataclass and a pydantic model come back as they were saved.
"""

from __future__ import annotations

import json

import pytest
from kits.robustkit import ROOT, one_line
from kits.runs import run_text
from typer.testing import CliRunner

from chaos.cli.app import app
from chaos.envs import env_root, python_for
from chaos.kinds.upgrade import trial_up
from chaos.records import TrialRecord

RELEASE = """\
name: upgrade_release_small
kind: upgrade
target: {framework: langgraph, backend: sqlite, durability: sync, version: "1.0.10"}
workload: upgrade_messages
upgrade_to: {target: {version: "1.2.24"}}
resume: "command:true"
trials: 1
"""

READ_BACK = "end:HumanMessage+AIMessage+ToolMessage|Order(qty=2,sku=A-7)|Customer(name=Ada,tier=2)"


@pytest.mark.slow  # two releases, each in its own environment (the 1.0.10 one built by .ci/envs.sh)
def test_a_thread_parked_under_1_0_10_resumes_under_1_2_24_with_its_messages_and_custom_types(tmp_path):
    assert python_for("langgraph", "1.0.10").startswith(str(env_root()))
    out = run_text(tmp_path, RELEASE)
    (cell,) = out.results.cells
    (up,) = cell.verdicts
    assert (up.status, cell.summary["outcome"]) == ("holds", {"resumed as v2": 1}), up.reason
    assert READ_BACK in up.reason
    assert up.reason.endswith("[langgraph 1.0.10 -> 1.2.24]"), up.reason  # the verdict names the release change
    (rec,) = [r for r in map(json.loads, (out.run_dir / "journal.jsonl").read_text().splitlines()) if r["valid"]]
    obs = rec["observations"]
    versions = obs["versions"]
    # each side ran the release it was asked for (the racers' own report, not the scenario's word)
    assert versions["v1"]["release"]["langgraph"] == "1.0.10"
    assert versions["v2"]["release"]["langgraph"] == "1.2.24"
    assert obs["v1"]["fired"] == ["pre"]
    assert obs["v2"]["fired"] == ["gate:True", READ_BACK]


def test_a_custom_type_back_as_a_raw_dict_after_the_upgrade_is_resumed_wrong():
    """The shape of LangGraph 7066 as this kind judges it: the resumed end read a dict where v2
    alone reads the dataclass, so its effect fired with another value."""
    wrong = READ_BACK.replace("Order(", "dict(")
    rec = TrialRecord(
        run_id="r",
        cell_index=0,
        cell_id="default",
        trial_id="c000-t0000",
        seed=1,
        kind="upgrade",
        thread_id="t",
        valid=True,
        observations={
            "v1": {"fired": ["pre"]},
            "v2": {"status": "done", "fired": ["gate:True", wrong]},
            "scratch": {"status": "done", "fired": ["pre", "gate:True", READ_BACK]},
        },
        t_start_wall=0.0,
        wall_s=1.0,
    )
    outcome, why = trial_up(rec)
    assert outcome == "resumed wrong"
    assert f"end acted on another value: fired {wrong} where v2 alone fires {READ_BACK}" in why


def test_a_release_that_does_not_install_is_one_line_before_any_trial(tmp_path, monkeypatch):
    monkeypatch.setenv("CHAOS_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CHAOS_ENV_DIR", str(tmp_path / "envs"))  # a fresh cache: pip really runs
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # no network in tests: pip finds no such release, as PyPI would not
    monkeypatch.chdir(ROOT)
    path = tmp_path / "release.yaml"
    path.write_text(RELEASE.replace('version: "1.0.10"', "").replace('"1.2.24"', '"9.9.9"').replace(", }", "}"))
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output
    line = one_line(result.stderr)
    assert line.startswith("chaos: error: ") and str(path) in line, line
    assert "upgrade_to.target (langgraph 9.9.9) does not install" in line and "langgraph==9.9.9" in line, line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("run.json"))  # refused before anything ran


def test_a_second_release_on_a_kind_that_deploys_none_is_refused_naming_the_field(tmp_path):
    path = tmp_path / "race.yaml"
    path.write_text(RELEASE.replace("kind: upgrade", "kind: race").replace("workload: upgrade_messages", "workload: gate_after_interrupt"))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 3, result.output
    line = one_line(result.stderr)
    assert str(path) in line and "upgrade_to.target: kind race deploys no second release; kinds that do: upgrade" in line, line
