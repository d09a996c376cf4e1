"""What a framework's package may also do for the orchestrator: small optional capabilities.

Why: a framework's light half (``INFO``, standard library only) is data; what the orchestrator
needs a framework to *do* beyond running racers is optional, and shared code used to ask for it by
name (``if framework == "langgraph"``) or by a ``module:function`` string. Each capability is a
``runtime_checkable`` Protocol here, as Jepsen's ``DB`` plus ``Kill``: a package's orchestrator
half (the module ``TargetInfo.hooks`` names, imported on first use) implements the ones it has, and
shared code asks ``isinstance(chaos.targets.hooks_of(framework), Protocol)``. No attribute is
probed by name.

* ``ValidatesScenario``: the framework's own rules of a scenario, checked when it loads (a refusal
  names the field and what to do), and the workload references of its own form it resolves.
* ``ChecksDryRun``: what the preflight's uninterrupted run of a team's workload shows is wired wrong;
  ``ChecksModules``: what the scenario names that must load in the racers' Python first.
* ``PreparesStore``: the framework's tables set up once in the run's Postgres schema;
* ``ReapsStore``: what its racers made for a run on a shared server outside that schema (a
  database of its own) removed at the run's cleanup, also of an interrupted run;
* ``CutsConnections``: one racer's connections to such a server found and cut (``fault:
  db_disconnect`` on a backend of ``TargetInfo.cut_backends``), as chaos cuts a racer's Postgres
  connections by their ``application_name``;
* ``HostsCells``: a service per cell the racers are clients of (``CellService``: start, kill,
  restart, stop, url), started from what the engine hands it (``HostContext``); a service that is
  also ``SharedService`` serves every later cell of the run that would start the same one, while
  it is idle between cells (``chaos.running.services``).
* ``WritesRepro``: a violating trial as a standalone script (``chaos repro``).
* ``OwnsOptions``: the framework's own scenario options (``Options``, read typed with ``of``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    from chaos.kinds.base import TargetOptions
    from chaos.racer.protocol import LedgerSpec, RacerResult
    from chaos.scenario.model import Cell, Scenario


@dataclass(frozen=True)
class Refusal:
    """Why a scenario cannot run on the framework: the field (``("target", "saver")``) and what to do."""

    field: tuple[str, ...]
    why: str


@runtime_checkable
class ValidatesScenario(Protocol):
    def validate(self, scenario: Scenario, search: list[str]) -> Refusal | None:
        """The first of the framework's rules ``scenario`` breaks, else None. ``search``: where a
        team's modules and files are looked up (the working folder, the scenario's)."""
        ...

    def owns_workload(self, ref: str) -> bool:
        """Is ``ref`` a workload reference of the framework's own form (not ``package.module:factory``),
        which ``validate`` resolves and its racers load?"""
        ...


@runtime_checkable
class ChecksDryRun(Protocol):
    def dry_run_problem(self, cell: Cell, result: RacerResult) -> str | None:
        """What the uninterrupted run of the cell's workload (``result``) shows wired wrong, as one
        sentence saying what to change; None when nothing."""
        ...


@dataclass(frozen=True)
class ModuleCheck:
    """A check run before any trial as ``python -m <module> <ref>`` in the racers' Python: exit 0
    when ``ref`` loads there, else one stderr line saying why (refused, exit 3, with ``hint``)."""

    what: str  # what is checked ("saver", "guard"): once per interpreter and ref
    module: str
    ref: str
    hint: str


@runtime_checkable
class ChecksModules(Protocol):
    def module_checks(self, cell: Cell) -> list[ModuleCheck]:
        """What of the cell's scenario must load in the racers' Python before any trial (a team's saver, a guard)."""
        ...


@runtime_checkable
class PreparesStore(Protocol):
    def prepare_store(self, dsn: str, schema: str) -> None:
        """Set the framework's tables up once in the run's Postgres ``schema``, before any racer
        (racers sharing the schema would race on setting them up)."""
        ...


@runtime_checkable
class ReapsStore(Protocol):
    def reap_store(self, run_id: str, python: str, backends: list[str]) -> list[str]:
        """Remove what the framework's racers made for run ``run_id`` on the ``backends`` its cells
        ran on, outside the run's folders and Postgres schema (a database on a shared server), once
        every racer is dead; ``python`` is the racers' interpreter (the orchestrator's may have no
        client for that server). Idempotent; returns the names removed."""
        ...

    def store_names(self, run_id: str, backends: list[str]) -> list[str]:
        """What ``reap_store`` would remove for run ``run_id`` (no server asked): what a kept record
        names and ``chaos clean`` lists."""
        ...


@dataclass(frozen=True)
class Cut:
    """One racer's connections to a server as ``CutsConnections.cut_connections`` found them (the
    server's ids of them) and those it terminated; ``how`` says by what they were found."""

    found: list[int]
    terminated: list[int]
    how: str


@runtime_checkable
class CutsConnections(Protocol):
    def cut_connections(self, run_id: str, backend: str, name: str, trial_dir: Path, python: str) -> Cut:
        """Terminate the connections of the racer named ``name`` (``RacerSpec.store.application_name``)
        of run ``run_id``'s trial in ``trial_dir`` to the server of ``backend``, and no other, and return once they
        are gone; ``python`` is the racers' interpreter (the orchestrator's may have no client for that
        server). A server that cannot be reached raises."""
        ...


@dataclass(frozen=True)
class HostContext:
    """What the engine hands a host: nothing is read from the run folder or the registry."""

    python: str  # the interpreter of the framework's environment (the racers')
    work_dir: Path  # the run's work folder: the service's own folder goes under it
    labels: Mapping[str, str]  # the run's labels: in the service's environment, so a dead run's service is found and killed
    search: list[str]  # where a team's modules and files are looked up, as its racers look them up
    ledger: LedgerSpec  # the run's effect ledger
    keep: bool = False  # keep the service's folder after it stops (``--keep-work``)


@runtime_checkable
class CellService(Protocol):
    """A service the cell's racers are clients of; ``url`` is handed to each racer (``service_url``)."""

    @property
    def url(self) -> str: ...

    def start(self) -> object: ...

    def kill(self) -> None: ...

    def restart(self) -> object: ...

    def stop(self) -> None: ...


@runtime_checkable
class SharedService(Protocol):
    """A cell service the run may keep for its later cells (``chaos.running.services``)."""

    def share_key(self) -> str:
        """Equal for two services exactly when they would be started the same way (program,
        configuration, environment): a later cell's service with the same key is this one again."""
        ...

    def idle(self) -> bool:
        """Running, and nothing of the cell it served is still in flight in it: a next cell finds it
        as a fresh start would leave it, bar the finished work of earlier cells (other threads)."""
        ...


@runtime_checkable
class HostsCells(Protocol):
    def host(self, cell: Cell, context: HostContext) -> CellService:
        """The (not yet started) service of ``cell``; a cell whose kind kills its racers
        (``Kind.kills_racers``) is never hosted: each racer runs the service, its victim."""
        ...


@dataclass(frozen=True)
class ReproScript:
    """A standalone script reproducing a violation, the bug report beside it, and one line saying what it shows."""

    script: str
    markdown: str
    summary: str


@runtime_checkable
class WritesRepro(Protocol):
    # the properties whose violations it can write (``EO``, ``FD``)
    repro_properties: tuple[str, ...]

    def repro(
        self, cell: Cell, trial: Mapping[str, Any], violated: tuple[str, str], versions: Mapping[str, str], found_in: Mapping[str, str]
    ) -> ReproScript | str:
        """The script for ``trial`` of ``cell``, whose ``violated`` (property, reason) it shows;
        else why it cannot be written (one line). ``versions``: the run's recorded releases."""
        ...


# a framework's options model (a ``chaos.kinds.base.TargetOptions``), named here so the scenario
# model can say it without importing the kinds' interface
OptionsModel: TypeAlias = "type[TargetOptions]"


@runtime_checkable
class OwnsOptions(Protocol):
    # the framework's own scenario options (fields of ``target:``), validated and read through it
    Options: OptionsModel
