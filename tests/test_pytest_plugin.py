"""A team puts chaos in its own pytest suite: the ``chaos_run`` fixture on its own graph.

The user's test suite runs in a pytest of its own (pytester, in a subprocess, as ``pytest`` would
run in their repository): a crash test of their graph fails with a message naming the violated
property and the run folder, and passes once the team's baseline accepts that violation; an
entry of the baseline that accepts nothing is reported as stale at the end of the session.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

# the user's graph: charge -> email, one effect each (a kill between an effect and its checkpoint
# fires it twice on resume: LangGraph's at-least-once, the EO violation chaos reports)
GRAPH = """
import operator
from typing import Annotated, TypedDict


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]


def two_step(ctx):
    from langgraph.graph import END, START, StateGraph

    def charge(state):
        ctx.effect("charge")
        return {"log": ["charge"]}

    def email(state):
        ctx.effect("email")
        return {"log": ["email"]}

    g = StateGraph(S)
    g.add_node("charge", charge)
    g.add_node("email", email)
    g.add_edge(START, "charge")
    g.add_edge("charge", "email")
    g.add_edge("email", END)
    return g.compile(checkpointer=ctx.checkpointer)
"""

USER_TEST = """
from my_graph import two_step

# pinned to sync: a user's workload runs with LangGraph's default durability unless the scenario says otherwise
SCENARIO = {"name": "mine", "kind": "kill_sweep", "target": {"durability": "sync"}, "resume": "none", "trials": 1, "seed": 5}


def test_a_crash_never_charges_twice(chaos_run):
    results = chaos_run(SCENARIO, workload=two_step)
    results.assert_holds("EO")
"""

BASELINE = """\
accepted:
  - property: EO
    framework: langgraph
    reason: LangGraph re-runs a node killed before its checkpoint; our PSP dedupes charges
  - property: PC
    framework: langgraph
    reason: once seen in 2025, fixed since
"""


def _plugin_args() -> list[str]:
    """Load the plugin by name unless the installed distribution already registers it (pytest11)."""
    installed = any(ep.value == "chaos.pytest_plugin" for ep in metadata.entry_points(group="pytest11"))
    return [] if installed else ["-p", "chaos.pytest_plugin"]


def test_the_plugin_loads_without_importing_chaos_machinery():
    code = (
        "import json, sys, pytest; before = set(sys.modules); import chaos.pytest_plugin; "  # pytest is loaded already
        "new = {m.partition('.')[0] for m in set(sys.modules) - before}; "
        "print(json.dumps(sorted(new - set(sys.stdlib_module_names) - {'chaos'})))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, chaos.pytest_plugin; print(sorted(m for m in sys.modules if m.startswith('chaos')))"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert loaded.stdout.strip() == "['chaos', 'chaos.pytest_plugin']"


def test_a_violation_fails_the_users_test_until_the_baseline_accepts_it(pytester: pytest.Pytester):
    pytester.makepyfile(my_graph=GRAPH, test_user=USER_TEST)

    failed = pytester.runpytest_subprocess(*_plugin_args(), "-q", timeout=600)
    failed.assert_outcomes(failed=1)
    text = failed.stdout.str()
    assert "EO does not hold" in text and "cell default: EO violated" in text
    run_dir = re.search(r"EO does not hold in .* of run \S+ \((\S+)\)", text)
    assert run_dir, text
    folder = Path(run_dir.group(1))
    assert (folder / "results.json").is_file() and "chaos" in folder.parts  # kept under the test's tmp_path

    (pytester.path / "chaos-baseline.yaml").write_text(BASELINE)
    passed = pytester.runpytest_subprocess(*_plugin_args(), "-q", "--chaos-baseline", "chaos-baseline.yaml", timeout=600)
    passed.assert_outcomes(passed=1)
    summary = passed.stdout.str()
    assert "chaos baseline" in summary
    assert "stale baseline entry 1 PC (framework=langgraph)" in summary  # PC holds: the entry accepts nothing


def test_a_broken_baseline_fails_the_test_naming_the_file_and_field(pytester: pytest.Pytester):
    pytester.makepyfile(my_graph=GRAPH, test_user=USER_TEST)
    (pytester.path / "base.yaml").write_text("accepted:\n  - property: EO\n    framwork: langgraph\n    reason: r\n")
    r = pytester.runpytest_subprocess(*_plugin_args(), "-q", "--chaos-baseline", "base.yaml", timeout=300)
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*BaselineError: base.yaml: accepted[[]0[]].framwork: unknown key*"])
    assert not (pytester.path / "chaos").exists()


def test_a_framework_whose_environment_is_not_built_skips_saying_how_to_build_it(pytester: pytest.Pytester, tmp_path, monkeypatch):
    pytester.makepyfile(
        test_user=textwrap.dedent(
            """
            def test_crewai_flow(chaos_run):
                chaos_run({"name": "c", "kind": "stray_resume", "target": {"framework": "crewai", "version": "1.15.30"},
                           "workload": "gate_after_interrupt", "resume": "command:yes", "trials": 1})
            """
        )
    )
    monkeypatch.setenv("CHAOS_ENV_DIR", str(tmp_path / "no-envs"))  # nothing built there
    r = pytester.runpytest_subprocess(*_plugin_args(), "-rs", timeout=300)
    r.assert_outcomes(skipped=1)
    r.stdout.fnmatch_lines(["*the crewai 1.15.30 environment is not built*--chaos-build-envs*"])
