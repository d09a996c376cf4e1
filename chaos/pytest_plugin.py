"""chaos inside a team's pytest suite: the ``chaos_run`` fixture and assertion helpers.

Why: putting chaos in a test suite should take a fixture, not forty lines of ``subprocess`` and
JSON reading. Installed with chaos, pytest loads this module in every session (entry point
``pytest11``), so importing it costs nothing: chaos's orchestrator is imported on first use.

What it promises::

    def my_graph(ctx): ...            # a workload factory, as in `workload: package.module:my_graph`

    def test_charge_survives_a_crash(chaos_run):
        results = chaos_run("tests/chaos/sweep.yaml", workload=my_graph)   # or a dict, built in the test
        results.assert_holds("EO")    # the message names the cells, reasons, trials and run folder

* ``chaos_run(scenario, *, workload=None, baseline=None, **overrides)`` runs a scenario (a YAML
  path or a dict with the fields of a scenario file) as ``chaos.run`` does and returns its
  ``RunResults``; the run folder is kept under the test's ``tmp_path`` (``tmp_path/chaos``).
  ``workload`` may be the factory itself (a module-level function); its module's folder is put on
  the racers' path.
* A baseline (``baseline=``, or ``--chaos-baseline FILE`` / the ini option ``chaos_baseline``)
  makes the violations it accepts count as holding in ``assert_holds``; the run folder gets
  ``baseline.json``, and the end of the session lists stale and expired entries.
* A cell whose framework environment is not built here (``chaos.envs``) skips the test, saying
  which and how to build it, unless ``--chaos-build-envs`` lets the run build it.
* ``assert_violated(results, prop)``: for a test that pins a known framework bug.
* A run that did not finish fails its test (exit code 3: interrupted, or a cell that could not
  run), naming the run folder. Ctrl-C or SIGTERM during a run reaches pytest once the run has
  cleaned up (``chaos.run`` delivers the signal again): the session stops, non-zero.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from chaos.accepted import BaselineReport
    from chaos.records import RunResults

__all__ = ["assert_violated", "chaos_run"]

_NOTES = pytest.StashKey[list[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("chaos", "chaos crash-injection runs")
    group.addoption("--chaos-baseline", metavar="FILE", default=None, help="accepted violations (YAML) for every chaos_run")
    group.addoption(
        "--chaos-build-envs",
        action="store_true",
        default=False,
        help="build a missing framework environment (pip, minutes) instead of skipping the test",
    )
    group.addoption(
        "--chaos-jobs",
        metavar="N",
        default=None,
        help="independent trials of a sweep cell at once in every chaos_run (default: $CHAOS_JOBS, else the cores this process may use, capped by memory)",
    )
    parser.addini("chaos_baseline", "accepted violations (YAML, relative to the rootdir) for every chaos_run", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_NOTES] = []
    jobs = config.getoption("--chaos-jobs", None)
    if jobs is not None:  # refused at the start of the session, with the reason, as `chaos run --jobs` refuses it
        from chaos.racer.errors import ChaosError
        from chaos.running.jobs import parse_jobs

        try:
            parse_jobs(jobs, "--chaos-jobs")
        except ChaosError as exc:
            raise pytest.UsageError(exc.message) from None


def _default_baseline(config: pytest.Config) -> Path | None:
    opt = config.getoption("--chaos-baseline", None)
    if opt:
        return Path(opt)
    ini = config.getini("chaos_baseline")
    return (config.rootpath / ini) if ini else None


def _factory_ref(factory: Any) -> tuple[str, str]:
    """``package.module:name`` for a module-level factory, and the folder its top package is in."""
    module = sys.modules.get(getattr(factory, "__module__", "") or "")
    name = getattr(factory, "__qualname__", "")
    if module is None or not name or "<" in name or getattr(module, "__file__", None) is None:
        raise TypeError(f"chaos_run: workload={factory!r} is not a module-level function; name it as 'package.module:factory'")
    root = Path(str(module.__file__)).resolve().parent
    for _ in range(module.__name__.count(".")):
        root = root.parent
    return f"{module.__name__}:{name}", str(root)


def _missing_envs(scenario: Any) -> list[str]:
    """Why the cells' framework environments cannot run here without a pip install (empty: they can)."""
    from chaos.envs import missing_env
    from chaos.scenario.model import expand

    reasons = []
    for cell in expand(scenario, check=False):
        for t in (cell.scenario.target, cell.scenario.deployed_target):  # a deploy may be a release of its own
            why = missing_env(t.framework, t.version, t.requirements)
            if why and why not in reasons:
                reasons.append(why)
    return reasons


class ChaosRunner:
    """The ``chaos_run`` fixture's value: call it to run a scenario for this test."""

    def __init__(self, request: pytest.FixtureRequest, out: Path, monkeypatch: pytest.MonkeyPatch):
        self._request = request
        self._out = out
        self._monkeypatch = monkeypatch
        self.reports: list[BaselineReport] = []

    def __call__(
        self,
        scenario: str | os.PathLike | dict[str, Any],
        *,
        workload: Any = None,
        baseline: str | os.PathLike | None = None,
        **overrides: Any,
    ) -> RunResults:
        import chaos
        from chaos.api import _scenario

        if workload is not None:
            if isinstance(scenario, dict):
                scenario = dict(scenario)
            else:
                scenario = chaos.load_scenario(scenario).model_dump(exclude_unset=True)
            if callable(workload):
                ref, folder = _factory_ref(workload)
                self._monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (folder, os.environ.get("PYTHONPATH", "")) if p))
                workload = ref
            scenario["workload"] = workload
        config = self._request.config
        accepted = Path(baseline) if baseline is not None else _default_baseline(config)
        if accepted is not None:
            from chaos.accepted import load_baseline

            load_baseline(accepted)  # a broken baseline fails the test before any racer runs
        loaded, _path = _scenario(scenario)
        if not config.getoption("--chaos-build-envs", False):
            missing = _missing_envs(loaded)
            if missing:
                pytest.skip("; ".join(missing))
        overrides.setdefault("out", self._out)
        jobs = config.getoption("--chaos-jobs", None)
        if jobs is not None:  # a test's own jobs= wins; a bad value is refused as `chaos run --jobs` refuses it
            from chaos.running.jobs import parse_jobs

            overrides.setdefault("jobs", parse_jobs(jobs, "--chaos-jobs"))
        results = chaos.run(scenario, **overrides)
        if results.exit_code == 3:  # interrupted (a signal the caller ignores) or a cell could not run
            pytest.fail(f"chaos run {results.run_id} did not finish (exit code 3): see {results.run_dir}", pytrace=False)
        if accepted is not None:
            from chaos.accepted import accept

            report = accept(results, accepted)
            self.reports.append(report)
            config.stash[_NOTES].extend(
                f"{self._request.node.nodeid}: {line}" for line in report.lines() if not line.startswith("accepted")
            )
        return results


@pytest.fixture
def chaos_run(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ChaosRunner:
    """Run a chaos scenario in this test; the run folder is kept under ``tmp_path/chaos``."""
    return ChaosRunner(request, tmp_path / "chaos", monkeypatch)


def assert_violated(results: RunResults, prop: str) -> None:
    """Raise ``AssertionError`` unless some cell found ``prop`` violated: a test that pins a known bug
    fails when the bug is gone (or when the run could not tell), naming the run folder."""
    if results.violations(prop):
        return
    seen = ", ".join(f"{cv.cell_id}: {cv.verdict.status} ({cv.verdict.reason})" for cv in results.verdicts(prop)) or "no cell judged it"
    raise AssertionError(f"{prop} is not violated in run {results.run_id} ({results.run_dir}): {seen}")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    notes = config.stash.get(_NOTES, [])
    if notes:
        terminalreporter.section("chaos baseline")
        for line in notes:
            terminalreporter.write_line(line)
