"""Scenario kinds: how a cell is turned into trials.

Each kind module offers ``plan(ctx, cell) -> list[TrialPlan]`` via ``run_cell(ctx, cell, skip)``
which yields ``TrialRecord``s one by one, so the orchestrator can journal each as it ends.
"""

from __future__ import annotations

from typing import Callable, Iterator

from chaos.records import TrialRecord
from chaos.scenario import Cell
from chaos.trial import RunContext

CellRunner = Callable[[RunContext, Cell, set[str]], Iterator[TrialRecord]]


def runner_for(kind: str) -> CellRunner:
    if kind == "race":
        from chaos.kinds.race import run_cell
    elif kind in ("kill_sweep", "first_checkpoint"):
        from chaos.kinds.sweep import run_cell
    else:
        raise KeyError(kind)
    return run_cell
