"""Scenario kinds: how a cell is turned into trials.

Each kind module offers ``run_cell(ctx, cell, skip)``, which yields ``TrialRecord``s one by one so
the orchestrator can journal each as it ends (trials in ``skip`` are journaled already; ``ctx.only``
narrows a re-run to some trial ids).

* ``race`` (race.py): k racers resume one parked interrupt at once -> CO, saturation.
* ``kill_sweep``, ``first_checkpoint``, ``recovery_determinism`` (sweep.py): crash at each
  persistence boundary, resume in a fresh process -> EO, PC, FCL, RD.
* ``fork`` (fork.py): resume v1, then resume from the interrupt's checkpoint with v2 -> FD, FI.
* ``invalid_state`` (invalid.py): a node breaks the state schema -> CV.
* ``stray_resume`` (stray.py): the same answer sent again to a consumed thread -> CO.

A cell whose target does not support its kind runs no trial; its analysis reports every property
``unknown`` with the adapter's reason.
"""

from __future__ import annotations

from typing import Callable, Iterator

from chaos.records import TrialRecord
from chaos.scenario.model import Cell
from chaos.targets import get_target
from chaos.running.trial import RunContext

CellRunner = Callable[[RunContext, Cell, set[str]], Iterator[TrialRecord]]


def _nothing(ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
    return iter(())


def runner_for(kind: str, framework: str | None = None) -> CellRunner:
    if framework is not None and get_target(framework).supports(kind) is not None:
        return _nothing
    if kind == "race":
        from chaos.kinds.race import run_cell
    elif kind in ("kill_sweep", "first_checkpoint", "recovery_determinism"):
        from chaos.kinds.sweep import run_cell
    elif kind == "fork":
        from chaos.kinds.fork import run_cell
    elif kind == "invalid_state":
        from chaos.kinds.invalid import run_cell
    elif kind == "stray_resume":
        from chaos.kinds.stray import run_cell
    else:
        raise KeyError(kind)
    return run_cell
