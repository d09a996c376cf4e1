"""Running a scenario from the repository's root, as a team runs its own app (so that
``examples.<example>.app`` and ``tests.workloads.*`` import), and picking one cell, point or
verdict out of its results: what the example and own-app stories share.

Each picker unpacks exactly one match, so a story that finds none or two fails there, naming it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import chaos

REPO = Path(__file__).resolve().parents[2]


def run_from_repo(scenario: dict, out: Path) -> chaos.RunResults:
    """``chaos.run(scenario)`` with the repository's root as the working folder."""
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        return chaos.run(scenario, out=out)


def case_cell(results: chaos.RunResults, case: str):
    """The one cell of the matrix case named ``case``."""
    (cell,) = [c for c in results.cells if c.axes["case"]["name"] == case]
    return cell


def only_point(cell, name: str):
    """The one boundary of ``cell`` named exactly ``name`` (with its ``#n``)."""
    (p,) = [p for p in cell.points if p.point == name]
    return p


def point_with(cell, fragment: str):
    """The one boundary of ``cell`` whose name contains ``fragment``."""
    (p,) = [p for p in cell.points if fragment in p.point]
    return p


def only_verdict(cell_or_point, prop: str):
    """The one verdict on ``prop`` of a cell or a boundary."""
    (v,) = [v for v in cell_or_point.verdicts if v.property == prop]
    return v
