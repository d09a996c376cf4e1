"""A sweep's add-on: a property judged in every sweep beside EO, PC and LIVENESS when a cell asks for it.

Why: the sweep (``chaos.kinds.sweep``) named each of them (the faults' DU and CV, a lost
connection's CL, LS behind a server, the store bound SB, approval authority AA) at each place it
runs a trial, judges a point, checks a cell or explains a trial, so a new property judged in sweeps
touched it in six places. Now each is one value of one shape, ``SweepAddOn``, in its own module,
and the sweep iterates ``add_ons()`` (the registry below, loaded on first use as ``chaos.kinds.KINDS``
is) without naming any. A new property judged in sweeps costs one module and one line in ``ADD_ONS``.

What an add-on says, in the order things happen (each but the first two has a default that does
nothing, so an add-on states only what it does):

* ``properties``: every property it can add (the kinds' checkers list them, ``chaos.kinds.sweep.sweep_checks``);
* ``properties_of(cell, dry, trials)``: those this cell judges, in order (none: the add-on is silent here);
* the running half: ``measures_store(cell)`` (the dry run inspects and measures its store after the
  run), ``dry_observations(result)`` (what it records of the dry run's racer result),
  ``before_kill(dry, point)`` (what a kill trial at ``point`` records before it runs),
  ``instead_of_kill(run, point, dry, steps)`` (a trial that replaces the kill at a point, or None),
  ``after_kill(run)`` (a fault applied once the kill is confirmed: None, or why it could not be);
* ``judge(at)``: its verdicts at one kill point (``AtPoint``), only when the cell judges its properties;
* ``summarize(result, dry)``: what it adds to the cell's numbers (``CellResult``);
* ``check(cell, code, dry, parts)``: one property over the cell from its verdicts at the points
  (default: ``combine``); the sweep answers ``unknown`` itself when the dry run failed;
* ``explain(rec)``: plain words for a trial it had a hand in.

This module imports no add-on: each add-on module imports it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chaos.kinds.checking import combine
from chaos.records import CellResult, TrialRecord, Verdict

if TYPE_CHECKING:
    from chaos.kinds.base import Property
    from chaos.launchers import RacerHandle
    from chaos.racer.protocol import ActionSpec, RacerResult
    from chaos.running.trial import TrialRun
    from chaos.scenario.model import Cell

# name -> module holding ``ADD_ON``, in the order their verdicts come (at a point and over the cell)
ADD_ONS: dict[str, str] = {
    "faults": "chaos.kinds.faults",
    "db_disconnect": "chaos.kinds.db_disconnect",
    "lost_state": "chaos.kinds.lost_state",
    "growth": "chaos.kinds.growth",
    "approval": "chaos.kinds.approval",
}


@dataclass(frozen=True)
class AtPoint:
    """What a judge reads at one kill point: the cell, the point, its trials (valid or not) and, per
    valid trial id, the effects its recovery skipped (``chaos.kinds.sweep.lost_effects``)."""

    cell: Cell
    point: str
    recs: list[TrialRecord]
    lost: dict[str, list[str]]


@dataclass(frozen=True)
class TrialSteps:
    """What a trial run in place of the kill borrows from the sweep that runs it: the workload's
    actions, the resume, and how the sweep collects the resume (so the add-on does not import the
    sweep that imports it)."""

    actions: list[ActionSpec]
    resume: ActionSpec
    last_resume: Callable[[TrialRun, RacerHandle, ActionSpec], tuple[RacerResult, TrialRecord | None]]


def _never(cell: Cell) -> bool:
    return False


def _nothing_seen(result: RacerResult) -> dict[str, object]:
    return {}


def _nothing_before(dry: TrialRecord, point: str) -> dict[str, int]:
    return {}


def _kill_as_usual(run: TrialRun, point: str, dry: TrialRecord, steps: TrialSteps) -> TrialRecord | None:
    return None


def _nothing_after(run: TrialRun) -> str | None:
    return None


def _no_numbers(result: CellResult, dry: TrialRecord | None) -> None:
    return None


def combined(cell: Cell, code: str, dry: TrialRecord | None, parts: list[Verdict]) -> Verdict:
    """The default cell check: ``code``'s verdicts combined over the kill points (``combine``)."""
    return combine(code, parts)


def _no_words(rec: TrialRecord) -> list[str]:
    return []


@dataclass(frozen=True)
class SweepAddOn:
    """One add-on (the module docstring says each part, in the order things happen)."""

    properties: tuple[Property, ...]
    properties_of: Callable[[Cell, TrialRecord | None, list[TrialRecord]], tuple[str, ...]]
    measures_store: Callable[[Cell], bool] = _never
    dry_observations: Callable[[RacerResult], dict[str, object]] = _nothing_seen
    before_kill: Callable[[TrialRecord, str], dict[str, int]] = _nothing_before
    instead_of_kill: Callable[[TrialRun, str, TrialRecord, TrialSteps], TrialRecord | None] = _kill_as_usual
    after_kill: Callable[[TrialRun], str | None] = _nothing_after
    judge: Callable[[AtPoint], list[Verdict]] | None = None  # None: judged over the cell only
    summarize: Callable[[CellResult, TrialRecord | None], None] = _no_numbers
    check: Callable[[Cell, str, TrialRecord | None, list[Verdict]], Verdict] = combined
    explain: Callable[[TrialRecord], list[str]] = _no_words


def add_ons() -> tuple[SweepAddOn, ...]:
    """Every add-on, in ``ADD_ONS``' order (imported on first use; read each time, so a test may
    replace a module's ``ADD_ON``)."""
    found: list[SweepAddOn] = [importlib.import_module(m).ADD_ON for m in ADD_ONS.values()]
    return tuple(found)
