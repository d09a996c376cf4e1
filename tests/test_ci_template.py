"""The CI template a team copies (examples/ci/chaos.yml) is valid YAML and runs only commands chaos has.

Every ``chaos ...`` line in its steps must name a command and options the CLI accepts, and every
``pytest`` option it passes must be one the plugin registers: a template that drifts from the
command line fails here, not in a team's first CI run.
"""

from __future__ import annotations

import shlex

import yaml
from typer.main import get_command

from chaos.cli.app import app

TEMPLATE = __import__("pathlib").Path(__file__).resolve().parent.parent / "examples" / "ci" / "chaos.yml"


def _run_lines() -> list[str]:
    doc = yaml.safe_load(TEMPLATE.read_text())
    lines = []
    for job in doc["jobs"].values():
        for step in job["steps"]:
            for line in str(step.get("run", "")).splitlines():
                lines.append(line.strip())
    return lines


def test_the_template_has_a_pull_request_job_and_a_nightly_job():
    doc = yaml.safe_load(TEMPLATE.read_text())
    triggers = doc[True] if True in doc else doc["on"]  # YAML 1.1 reads the key `on` as true
    assert {"pull_request", "schedule"} <= set(triggers)
    assert set(doc["jobs"]) == {"pull-request", "nightly"}
    assert any("--baseline" in line for line in _run_lines())
    uploads = [s for j in doc["jobs"].values() for s in j["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert len(uploads) == 2


def test_every_chaos_command_in_the_template_is_one_the_cli_accepts():
    cli = get_command(app)
    seen = []
    for line in _run_lines():
        if not line.startswith("chaos "):
            continue
        argv = shlex.split(line)[1:]
        sub = cli.commands[argv[0]]  # type: ignore[attr-defined]
        options = {o for p in sub.params for o in (*p.opts, *p.secondary_opts)}
        used = [a for a in argv[1:] if a.startswith("-")]
        assert set(used) <= options, (line, set(used) - options)
        seen.append(argv[0])
    assert {"run", "nightly", "validate", "selftest"} <= set(seen)


def test_the_pytest_options_in_the_template_are_the_plugins():
    import os
    import subprocess
    import sys
    from importlib import metadata

    installed = any(ep.value == "chaos.pytest_plugin" for ep in metadata.entry_points(group="pytest11"))
    args = [] if installed else ["-p", "chaos.pytest_plugin"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TEMPLATE.parents[2]), os.environ.get("PYTHONPATH", "")])}
    help_text = subprocess.run(
        [sys.executable, "-m", "pytest", *args, "--help"], capture_output=True, text=True, timeout=120, env=env, cwd=TEMPLATE.parent
    ).stdout
    checked = 0
    for line in _run_lines():
        if line.startswith("python -m pytest"):
            for opt in (a for a in shlex.split(line) if a.startswith("--")):
                assert opt in help_text, (line, opt)
                checked += 1
    assert checked
