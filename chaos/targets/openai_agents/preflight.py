"""The Agents SDK target's own checks before any trial, run in the racers' Python
(``python -m chaos.targets.openai_agents.preflight SPEC``, ``TargetInfo.preflight``).

Why: an environment that cannot import the SDK, or a blob store that cannot be reached, would
otherwise surface as every trial's racer failing the same way. This module exits 0 when racers can
start, else prints one line saying what to change and exits 2 (the orchestrator refuses the run,
exit 3, before any trial):

* the environment imports ``agents`` and its test double ``agents.testing`` (the scripted model the
  built-in workloads run on), else the command that builds the environment again;
* backend ``postgres``: the run's Postgres (``CHAOS_PG_DSN``) opens with psycopg and answers ``SELECT 1``;
* ``workload_params.store`` (a team's own state store): a ``package.module:factory`` that imports,
  builds without raising over a temporary folder and returns an object with ``save`` and ``load``.

``SPEC`` is JSON: ``{"target": {...}, "workload_params": {...}}``. Standard library only until the
SDK is imported.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from chaos.targets.preflight import database_problem, environment_problem, run, store_check


def import_problem(target: dict[str, object]) -> str | None:
    try:
        import agents
        import agents.testing  # noqa: F401  (the SDK's ScriptedModel the workloads run on)
    except Exception as exc:
        return environment_problem("openai_agents", target, "the Agents SDK", exc)
    return None


def postgres_problem(dsn: str) -> str | None:
    """The blob store's Postgres opens (a connection and ``SELECT 1``)."""
    try:
        import psycopg

        with psycopg.connect(dsn, connect_timeout=10) as conn:
            conn.execute("SELECT 1")
    except Exception as exc:
        return database_problem("the postgres blob store cannot be reached", dsn, exc)
    return None


def team_store_problem(params: dict[str, object]) -> str | None:
    """The team's store named by ``workload_params.store`` builds and has ``save`` and ``load``."""
    if "store" not in params:
        return None
    from chaos.targets.openai_agents.team_store import StoreError, load_store, shape_problem

    ref = params["store"]
    problem = shape_problem(ref)
    if problem is not None:
        return problem
    with tempfile.TemporaryDirectory(prefix="chaos-oa-store-") as folder:
        try:
            load_store(str(ref), Path(folder), thread_id="preflight")
        except StoreError as exc:
            return str(exc)
    return None


_builtin = store_check(import_problem, postgres_problem)


def check(spec: dict[str, object], target: dict[str, object]) -> str | None:
    """The environment and the database first (a team's store module may import the SDK), then the team's store."""
    raw = spec.get("workload_params")
    return _builtin(spec, target) or team_store_problem(dict(raw) if isinstance(raw, dict) else {})


def main(argv: list[str]) -> int:
    return run(argv, check)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
