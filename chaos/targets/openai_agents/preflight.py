"""The Agents SDK target's own checks before any trial, run in the racers' Python
(``python -m chaos.targets.openai_agents.preflight SPEC``, ``TargetInfo.preflight``).

Why: an environment that cannot import the SDK, or a blob store that cannot be reached, would
otherwise surface as every trial's racer failing the same way. This module exits 0 when racers can
start, else prints one line saying what to change and exits 2 (the orchestrator refuses the run,
exit 3, before any trial):

* the environment imports ``agents`` and its test double ``agents.testing`` (the scripted model the
  built-in workloads run on), else the command that builds the environment again;
* backend ``postgres``: the run's Postgres (``CHAOS_PG_DSN``) opens with psycopg and answers ``SELECT 1``.

``SPEC`` is JSON: ``{"target": {...}, "workload_params": {...}}``. Standard library only until the
SDK is imported.
"""

from __future__ import annotations

import json
import os
import sys


def env_spec(target: dict[str, object]) -> str:
    """The ``.ci/envs.sh`` argument that builds this target's environment."""
    return f"openai_agents:{target['version']}" if target.get("version") else "openai_agents"


def import_problem(target: dict[str, object]) -> str | None:
    try:
        import agents
        import agents.testing  # noqa: F401  (the SDK's ScriptedModel the workloads run on)
    except Exception as exc:
        return (
            f"the openai_agents environment ({sys.prefix}) cannot import the Agents SDK ({type(exc).__name__}: {exc}): build it "
            f"again with `bash .ci/envs.sh {env_spec(target)}` (or delete that folder: the next run builds it)"
        )
    return None


def postgres_problem(dsn: str) -> str | None:
    """The blob store's Postgres opens (a connection and ``SELECT 1``)."""
    try:
        import psycopg

        with psycopg.connect(dsn, connect_timeout=10) as conn:
            conn.execute("SELECT 1")
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        safe = dsn.split("@", 1)[-1]
        return f"the postgres blob store cannot be reached at {safe}: {first}: set CHAOS_PG_DSN to a database that accepts it"
    return None


def main(argv: list[str]) -> int:
    spec = json.loads(argv[1])
    target = dict(spec.get("target") or {})
    problem = import_problem(target)
    if problem is None and target.get("backend") == "postgres" and os.environ.get("CHAOS_PG_DSN"):
        problem = postgres_problem(os.environ["CHAOS_PG_DSN"])
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
