"""Choosing how racers start: warm by default (local, docker and SSH placements), cold on request."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chaos.launchers import make_launcher
from chaos.launchers.local import LocalLauncher
from chaos.launchers.warm.client import WarmLauncher
from chaos.racer.errors import ChaosError
from chaos.scenario.model import expand, parse_scenario

ROOT = Path(__file__).resolve().parent.parent

RACE = """\
name: tiny_race
kind: race
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: gate_after_interrupt
resume: "command:true"
racers: {k: 2, placement: local%s}
trials: 1
seed: 5
"""


def test_local_racers_start_warm_unless_the_scenario_or_the_command_line_says_cold():
    assert isinstance(make_launcher("local", sys.executable, "r"), WarmLauncher)
    assert isinstance(make_launcher("local", sys.executable, "r", start="warm"), WarmLauncher)
    assert isinstance(make_launcher("local", sys.executable, "r", start="cold"), LocalLauncher)
    # (docker and SSH placements: test_warm_docker.py, test_warm_ssh.py)


def test_start_is_a_scenario_field_and_a_matrix_axis():
    s = parse_scenario(RACE % ", start: cold")
    assert s.racers.start == "cold"
    m = parse_scenario(RACE % "" + "matrix: {start: [cold, warm]}\n")
    assert [c.id for c in expand(m)] == ["start=cold", "start=warm"]
    with pytest.raises(ChaosError, match=r"<scenario>:6: racers.start"):
        parse_scenario(RACE % ", start: lukewarm")
    docker = parse_scenario((RACE % ", start: warm").replace("placement: local", "placement: docker"))
    assert (docker.racers.placement, docker.racers.start) == ("docker", "warm")


def test_the_command_line_runs_warm_by_default_and_cold_with_racers_cold(tmp_path):
    path = tmp_path / "tiny_race.yaml"
    path.write_text(RACE % "")
    for flag, launcher in (([], "warm"), (["--racers", "cold"], "local")):
        proc = subprocess.run(
            [sys.executable, "-m", "chaos", "run", str(path), "--out", str(tmp_path / "out"), "-q", *flag],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=300,
        )
        assert proc.returncode in (0, 1), proc.stderr  # 1: consume-once violated, as SQLite does
        journal = (tmp_path / "out" / "tiny_race" / "latest" / "journal.jsonl").read_text().splitlines()
        (rec,) = [json.loads(line) for line in journal]
        assert rec["valid"], rec["invalid_reason"]
        assert rec["observations"]["launcher"] == launcher
    bad = subprocess.run(
        [sys.executable, "-m", "chaos", "run", str(path), "--racers", "tepid"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert bad.returncode == 3 and "--racers 'tepid': expected warm or cold" in bad.stderr
    assert "Traceback" not in bad.stderr
