"""A violation found by chaos becomes a script an upstream maintainer runs without chaos.

``chaos repro RUN_DIR TRIAL_ID`` writes repro_<trial>.py (+ .md); the test runs it in a virtual
environment that holds only LangGraph and its SQLite saver, pinned as in pyproject.toml (built
once and cached under ~/.cache/chaos/envs, like a framework environment; ``import chaos`` fails
there), and sees the violation the trial recorded: an EO duplicate of a kill sweep, and the FD
replay of LangGraph issue 6663. A trial that violated nothing is one line naming it, exit 3.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from kits.runs import write_scenario

import chaos
from chaos.envs import ensure_env

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> str:
    """A Python with LangGraph and its SQLite saver only (no chaos, no PYTHONPATH to it)."""
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["langgraph"]
    python = ensure_env("langgraph-repro", None, list(extra))
    probe = subprocess.run(
        [python, "-c", "import chaos"],
        capture_output=True,
        text=True,
        env=_bare_env(tmp_path_factory.mktemp("probe")),
        cwd="/",
        timeout=120,
    )
    assert probe.returncode != 0 and "No module named 'chaos'" in probe.stderr
    return python


def _bare_env(tmp: Path) -> dict[str, str]:
    """A maintainer's shell: no chaos, no PYTHONPATH; its own temp folder, so a test can see what a
    script leaves behind."""
    tmp.mkdir(exist_ok=True)
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp"), "TMPDIR": str(tmp)}


def _chaos(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "chaos", *args], capture_output=True, text=True, env=env, timeout=300)


def _evidence(results, prop: str) -> list[str]:
    (cv,) = results.violations(prop)
    return cv.verdict.evidence.trial_ids


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    d = tmp_path_factory.mktemp("repro_sweep")
    path = write_scenario(
        d,
        """\
        name: repro_sweep
        kind: kill_sweep
        target: {framework: langgraph, backend: sqlite, durability: sync}
        workload: three_step
        resume: none
        kill_points: ["effect(task=b)", "put_writes(node=b"]
        trials: 1
        seed: 3
        """,
    )
    return chaos.run(path, out=d / "reports")


def test_an_eo_duplicate_of_a_sweep_reproduces_without_chaos(sweep, bare_python, tmp_path):
    trials = _evidence(sweep, "EO")
    assert trials, "the sweep found no duplicate to reproduce"
    for trial in trials:
        made = _chaos("repro", str(sweep.run_dir), trial, "--out", str(tmp_path))
        assert made.returncode == 0, made.stderr
        script = tmp_path / f"repro_{trial}.py"
        ran = subprocess.run(
            [bare_python, script.name], cwd=tmp_path, capture_output=True, text=True, env=_bare_env(tmp_path / "tmp"), timeout=300
        )
        assert ran.returncode == 1, ran.stdout + ran.stderr
        assert not list((tmp_path / "tmp").iterdir()), "the script left its work folder behind"
        assert "REPRODUCED: effect(s) fired more than once" in ran.stdout and "'b': 2" in ran.stdout
        md = (tmp_path / f"repro_{trial}.md").read_text()
        assert "langgraph 1.2.24" in md and "kill point" in md


def test_the_fork_replay_of_issue_6663_reproduces_without_chaos(bare_python, tmp_path):
    res = chaos.run(
        {
            "name": "repro_fork",
            "kind": "fork",
            "target": {"framework": "langgraph", "backend": "sqlite", "durability": "sync"},
            "workload": "gate_after_interrupt",
            "resume": "command:v1",
            "trials": 1,
            "seed": 3,
        },
        out=tmp_path / "reports",
    )
    (trial,) = _evidence(res, "FD")
    made = _chaos("repro", str(res.run_dir), trial, "--out", str(tmp_path))
    assert made.returncode == 0, made.stderr
    ran = subprocess.run(
        [bare_python, f"repro_{trial}.py"], cwd=tmp_path, capture_output=True, text=True, env=_bare_env(tmp_path / "tmp"), timeout=300
    )
    assert not list((tmp_path / "tmp").iterdir()), "the script left its work folder behind"
    assert ran.returncode == 1 and "REPRODUCED: the fork answered 'v2' but the gate fired with 'v1'" in ran.stdout, ran.stdout + ran.stderr


def test_a_trial_that_violated_nothing_is_refused_naming_it(sweep, tmp_path):
    journal = [json.loads(line) for line in (sweep.run_dir / "journal.jsonl").read_text().splitlines()]
    clean = [r["trial_id"] for r in journal if r["trial_id"] not in {t for cv in sweep.violations() for t in cv.verdict.evidence.trial_ids}]
    assert clean  # the dry run, at least
    r = _chaos("repro", str(sweep.run_dir), clean[0], "--out", str(tmp_path / "out"))
    assert r.returncode == 3 and f"trial {clean[0]} violated nothing a repro can show" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()
    r = _chaos("repro", str(sweep.run_dir), "c999-t0000")
    assert r.returncode == 3 and "no trial 'c999-t0000' in its journal" in r.stderr
