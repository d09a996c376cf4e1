"""LangGraph's orchestrator half: its options, its scenario rules, its dry-run check, its repro.

Why: what the orchestrator needs LangGraph to do beyond running racers used to be written in shared
code as ``if framework == "langgraph"`` (the scenario model, the preflight, ``chaos repro``). Here it
is LangGraph's, behind the capabilities of ``chaos.targets.hooks`` (``INFO.hooks`` names this
module; shared code asks ``chaos.targets.capability``):

* ``Options`` (``OwnsOptions``, ``chaos.targets.langgraph.options``): ``durability``, ``saver``, ``guard``;
* ``validate`` (``ValidatesScenario``): a saver replaces the backend and can be found, a guard
  exists, wraps the backend, can be found and has its package;
* ``dry_run_problem`` (``ChecksDryRun``): a team's graph writes its checkpoints through
  ``ctx.checkpointer``; ``module_checks`` (``ChecksModules``): its saver and guard load in the racers' Python;
* ``prepare_store`` (``PreparesStore``): its checkpoint tables in the run's Postgres schema, once;
* ``repro`` (``WritesRepro``): ``chaos.targets.langgraph.repro``'s standalone scripts.

Orchestrator side: never imported by a racer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from chaos.targets.hooks import ModuleCheck, Refusal, ReproScript
from chaos.targets.langgraph import guards
from chaos.targets.langgraph.options import Options

if TYPE_CHECKING:
    from chaos.racer.protocol import RacerResult
    from chaos.scenario.model import Cell, Scenario

__all__ = ["Options", "dry_run_problem", "module_checks", "owns_workload", "prepare_store", "repro", "repro_properties", "validate"]


def validate(scenario: Scenario, search: list[str]) -> Refusal | None:
    """LangGraph's rules of a scenario (``ValidatesScenario``): its saver and its guard."""
    from chaos.scenario.model import workload_importable

    target, opts = scenario.target, Options.of(scenario)
    if opts.saver and target.backend != "saver":
        return Refusal(("target", "saver"), "a saver factory is for framework langgraph and replaces backend: leave backend out")
    if target.backend == "saver" and not opts.saver:
        return Refusal(("target", "backend"), "backend 'saver' needs target.saver: package.module:factory")
    if opts.saver and (reason := workload_importable(opts.saver, search)):
        return Refusal(("target", "saver"), f"the saver factory {opts.saver!r} cannot be found: {reason}")
    if opts.guard is None or guards.is_none(opts.guard):
        return None
    # an unknown guard, one that cannot wrap the backend, or REMIT without its package
    why = guards.check_guard(opts.guard, target.backend)
    if why is None and ":" in opts.guard and (reason := workload_importable(opts.guard, search)):
        why = f"the guard factory {opts.guard!r} cannot be found: {reason}"
    if (
        why is None
        and opts.guard in guards.BUILTIN
        and not any(r.strip().lower().replace("_", "-").startswith(guards.REMIT_DIST) for r in target.requirements)
    ):
        why = f"guard {opts.guard!r} is REMIT: add {guards.REMIT_DIST}==0.1.2 to target.requirements (the racers' venv)"
    return Refusal(("target", "guard"), why) if why is not None else None


def owns_workload(ref: str) -> bool:
    """LangGraph's workloads are built-ins and ``package.module:factory``: no form of its own."""
    return False


def prepare_store(dsn: str, schema: str) -> None:
    """LangGraph's checkpoint tables in the run's schema, once (``PreparesStore``): k racers running
    ``PostgresSaver.setup()`` at once race on its migrations table."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    with psycopg.connect(dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
        conn.execute(f'SET search_path TO "{schema}"')
        PostgresSaver(conn).setup()


def dry_run_problem(cell: Cell, result: RacerResult) -> str | None:
    """A team's graph must write its checkpoints through ``ctx.checkpointer`` (``ChecksDryRun``): a
    run that passed no ``put`` of the instrumented saver kept its state where chaos cannot see it."""
    if any(t.get("barrier", "").startswith("put(") for t in result.get("trace") or []):
        return None
    err = next((o.get("error") for o in result.get("outcomes") or [] if o.get("error")), None)
    seen = f" (the run ended with {err.get('type')}: {err.get('message', '')[:200]})" if err else ""
    return (
        "wrote no checkpoint through ctx.checkpointer" + seen + ": compile the graph with checkpointer=ctx.checkpointer "
        "(not its own saver such as InMemorySaver, and not without a checkpointer), so chaos sees what is durable"
    )


def module_checks(cell: Cell) -> list[ModuleCheck]:
    """A team's saver must build and a guard load in the racers' Python (``ChecksModules``)."""
    opts = Options.of(cell.scenario)
    checks = []
    if opts.saver:  # built once over a temporary folder
        hint = "target.saver names package.module:factory; the factory takes a SaverContext and returns a BaseCheckpointSaver"
        checks.append(ModuleCheck("saver", "chaos.targets.langgraph.custom_saver", opts.saver, hint))
    if opts.guard and not guards.is_none(opts.guard):  # REMIT imports, a factory returns a Guard
        hint = "target.guard names a built-in (remit, remit_gate, remit_validator, remit_fork_flag) or package.module:factory returning a Guard"
        checks.append(ModuleCheck("guard", "chaos.targets.langgraph.guards", opts.guard, hint))
    return checks


# the properties whose violations ``repro`` writes as scripts
repro_properties = ("EO", "FD")


def repro(
    cell: Cell, trial: Mapping[str, Any], violated: tuple[str, str], versions: Mapping[str, str], found_in: Mapping[str, str]
) -> ReproScript | str:
    """A violating trial as a standalone LangGraph script (``WritesRepro``: ``chaos.targets.langgraph.repro``)."""
    from chaos.targets.langgraph.repro import write

    return write(cell, trial, violated, versions, found_in)
