"""What a framework's preflight module shares (racer side, standard library only).

A framework's ``TargetInfo.preflight`` module runs as ``python -m <module> SPEC`` in the racers'
Python before any trial (``chaos.running.preflight``): one stderr line and a non-zero exit refuse
the run, exit 3. Three things every such module says the same way live here, so the sentences a
user reads are one: an environment that cannot import its framework (and the command that builds it
again), a database that cannot be reached (its DSN's password never printed), and the ``main`` that
turns a check into that exit.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping


def environment_problem(framework: str, target: Mapping[str, object], what: str, exc: BaseException) -> str:
    """The racers' environment cannot import ``what``: say so, and how to build it again."""
    spec = f"{framework}:{target['version']}" if target.get("version") else framework
    return (
        f"the {framework} environment ({sys.prefix}) cannot import {what} ({type(exc).__name__}: {exc}): build it again with "
        f"`bash .ci/envs.sh {spec}` (or delete that folder: the next run builds it)"
    )


def database_problem(who: str, dsn: str, exc: BaseException) -> str:
    """``who`` (e.g. "DBOS cannot open its Postgres system database") failed on ``dsn``: its first
    line, the DSN without its credentials, and what to set."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    safe = dsn.split("@", 1)[-1]
    return f"{who} at {safe}: {first}: set CHAOS_PG_DSN to a database that accepts it"


def run(argv: list[str], check: Callable[[dict[str, object], dict[str, object]], str | None]) -> int:
    """A preflight's ``main``: ``check(spec, target)`` on the SPEC argument; its problem on stderr, exit 2."""
    spec = json.loads(argv[1])
    problem = check(spec, dict(spec.get("target") or {}))
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    return 0


def store_check(
    imports: Callable[[dict[str, object]], str | None],
    postgres: Callable[[str], str | None],
    params: Callable[[dict[str, object]], str | None] | None = None,
) -> Callable[[dict[str, object], dict[str, object]], str | None]:
    """The check most preflights make, in order: the workload's parameters (``params``), the
    environment imports the framework (``imports(target)``), and, for ``backend: postgres`` with a
    ``CHAOS_PG_DSN``, the database opens (``postgres(dsn)``); the first problem, else None."""

    def check(spec: dict[str, object], target: dict[str, object]) -> str | None:
        raw = spec.get("workload_params")
        problem = (params(dict(raw) if isinstance(raw, dict) else {}) if params is not None else None) or imports(target)
        dsn = os.environ.get("CHAOS_PG_DSN")
        if problem is None and target.get("backend") == "postgres" and dsn:
            problem = postgres(dsn)
        return problem

    return check
