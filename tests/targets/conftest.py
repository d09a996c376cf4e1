"""Helpers for the framework adapter tests: run a small real scenario and read its verdicts.

Each framework runs in its own environment (``chaos.envs.python_for``; ``.ci/envs.sh`` builds
them before the tests, a first local run builds them on demand). Scenarios here are cut down with
``points`` to the kill points that tell the story, so the whole set stays lean.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from chaos.envs import python_for
from chaos.orchestrator import RunOptions, run_scenario
from chaos.records import CellResult, RunResults, Verdict


@pytest.fixture
def run_yaml(tmp_path: Path):
    def run(text: str) -> RunResults:
        path = tmp_path / "scenario.yaml"
        path.write_text(textwrap.dedent(text))
        outcome = run_scenario(path, RunOptions(out=tmp_path / "reports"))
        return outcome.results

    return run


class Look:
    """Find cells, verdicts and kill points in a run's results."""

    @staticmethod
    def cell(results: RunResults, cell_id: str = "default") -> CellResult:
        return next(c for c in results.cells if c.cell_id == cell_id)

    @staticmethod
    def verdict(c: CellResult, prop: str) -> Verdict:
        return next(v for v in c.verdicts if v.property == prop)

    @staticmethod
    def point(c: CellResult, prefix: str):
        return next(p for p in c.points if p.point.startswith(prefix))

    @classmethod
    def point_verdict(cls, c: CellResult, prefix: str, prop: str) -> Verdict:
        return next(v for v in cls.point(c, prefix).verdicts if v.property == prop)


@pytest.fixture
def look() -> type[Look]:
    return Look


@pytest.fixture(scope="session")
def env_of():
    """The racer interpreter of a framework (built once if missing: .ci/envs.sh does it in CI)."""
    return python_for
