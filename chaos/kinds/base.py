"""The ``Kind`` interface: what one scenario kind declares and does, so a kind is one module.

A kind module (``chaos/kinds/<kind>.py``) defines one class that subclasses ``Kind`` and one
instance of it, ``KIND``; the registry (``chaos.kinds``) maps the kind's name to that module. The
class says:

* ``name``, ``about`` (one line), ``properties`` (the property codes its checker judges, in the
  order its verdicts come) and ``fields`` (the scenario fields it reads beyond the common ones);
* ``clean_run``: False when its workloads raise by design (``invalid_state``), so the preflight
  does not refuse a user's workload for the error the kind measures;
* ``deploys``: True when its trials also build the workload at version v2 (``Scenario.deployed``),
  so the preflight builds and runs v2 too before any trial;
* ``section`` and ``title``: where report.md puts its cells (``saturation`` table, one ``sweep``
  table per cell, or the ``contract`` table) and what it calls them;
* ``validate(scenario)``: rules a scenario of this kind must follow; raise ``ValueError`` (the
  scenario loader turns it into a ``ScenarioError`` naming file, line and field);
* ``run_cell(ctx, cell, skip)``: the cell's trials as ``TrialRecord``s, yielded one by one so the
  orchestrator journals each as it ends (trials in ``skip`` are journaled already);
* ``check(cell, records)``: a ``CellResult`` with the kind's verdicts, a pure function of the
  records (``chaos analyze`` re-scores a stored journal with it). ``chaos.kinds.checking`` holds
  the shared rules and helpers, and calls it check-safe: a checker that raises gives every
  property ``unknown`` with the error.

Optional capabilities are small protocols a kind class also implements: ``Explains`` (plain words
for a violating trial, shown in report.html).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from chaos.records import CellResult, TrialRecord
    from chaos.running.trial import RunContext
    from chaos.scenario.model import Cell, Scenario

Section = Literal["saturation", "sweep", "contract"]


@runtime_checkable
class Kind(Protocol):
    """One scenario kind. Subclass it (for the default ``validate``) and export ``KIND = YourKind()``."""

    name: ClassVar[str]
    about: ClassVar[str]
    properties: ClassVar[tuple[str, ...]]
    fields: ClassVar[tuple[str, ...]] = ()
    clean_run: ClassVar[bool] = True  # its workload's uninterrupted run ends without an error (the preflight checks it)
    deploys: ClassVar[bool] = False  # its racers also build v2 of the workload (the preflight checks v2 too)
    counts_gated: ClassVar[bool] = False  # its verdict counts fires of the gated effect (the preflight checks the answer fires it)
    section: ClassVar[Section]
    title: ClassVar[str]

    def validate(self, scenario: Scenario) -> None:
        """Raise ``ValueError`` when ``scenario`` cannot be run as this kind. Default: no extra rule."""
        return None

    def run_cell(self, ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
        """The cell's trials, one ``TrialRecord`` at a time (``ctx.wants(trial_id, skip)`` filters)."""
        ...

    def check(self, cell: Cell, records: Iterable[TrialRecord]) -> CellResult:
        """The cell's numbers and verdicts, one per code in ``properties``, from its trial records."""
        ...


@runtime_checkable
class Explains(Protocol):
    """A kind that can say in words why one valid trial violated its contract."""

    def explain(self, rec: TrialRecord) -> list[str]:
        """One sentence per violation in ``rec`` (empty when it violated nothing)."""
        ...


def needs_command_resume(kind: str, scenario: Scenario) -> None:
    """The rule of kinds that answer a pending interrupt: the scenario must say with what."""
    if not scenario.resume.startswith("command:"):
        raise ValueError(f"a {kind} resumes a pending interrupt: set resume to 'command:<value>'")


def approves_breakpoints(scenario: Scenario) -> bool:
    """Does the scenario's framework pause at static breakpoints (``BREAKPOINTS``), approved by ``invoke(None)``?"""
    from chaos.targets import BREAKPOINTS, get_target

    return BREAKPOINTS in get_target(scenario.target.framework).features


def needs_approval_resume(kind: str, scenario: Scenario) -> None:
    """The rule of kinds that approve a pause (race, stray_resume): ``command:<value>`` answers an
    ``interrupt()`` (and approves a static breakpoint); where the framework has static breakpoints,
    ``none`` is their approval (``invoke(None)``), which answers no ``interrupt()``."""
    if scenario.resume.startswith("command:"):
        return
    if scenario.resume == "none" and "resume" in scenario.model_fields_set and approves_breakpoints(scenario):
        return  # said, not defaulted: the approval of a static breakpoint
    also = " (or 'none': the invoke(None) that approves a static breakpoint)" if approves_breakpoints(scenario) else ""
    raise ValueError(f"a {kind} resumes a pending interrupt: set resume to 'command:<value>'{also}")


def runner_for(kind: str, framework: str | None = None) -> Callable[[RunContext, Cell, set[str]], Iterator[TrialRecord]]:
    """``run_cell`` of ``kind``, or a runner of no trial when ``framework``'s adapter does not
    support the kind (its cell's analysis then reports every property ``unknown`` with the reason).

    Here, beside the interface, and not in the registry (``chaos.kinds``): the registry, which the
    scenario model reads, then names no type of the run path, even for mypy (issue 23's import loop
    kinds -> running.trial -> scenario.model -> kinds)."""
    from chaos.kinds import get_kind
    from chaos.targets import get_target

    if framework is not None and get_target(framework).supports(kind) is not None:
        return _nothing
    return get_kind(kind).run_cell


def _nothing(ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
    return iter(())
