"""Leftovers of crashed runs on the infrastructure side, for ``chaos clean``.

A run that was SIGKILLed cannot reap what it started elsewhere: racer containers (labelled
``chaos.run``) and Postgres run schemas (``chaos_run_*``). ``clean_infra`` removes them; each part
is skipped, with the reason, when its service is not there. Remote SSH racers need no cleaning:
they die with their SSH session (the wrapper kills them at end of stdin).
"""

from __future__ import annotations

import os


def clean_infra(run_id: str | None = None, dsn: str | None = None) -> dict:
    """Remove chaos containers and run schemas (of one run, or all); returns what was done."""
    done: dict = {}
    try:
        from chaos.launchers.docker import DockerError, reap_run

        done["containers_removed"] = reap_run(run_id)
    except (DockerError, ImportError) as exc:
        done["containers_skipped"] = str(exc)
    dsn = dsn or os.environ.get("CHAOS_PG_DSN")
    if dsn:
        from chaos.running import pgstore

        try:
            names = pgstore.list_run_schemas(dsn) if run_id is None else [pgstore.schema_name(run_id)]
            done["schemas_dropped"] = [d for n in names for d in pgstore.drop_schema(dsn, n)]
        except ConnectionError as exc:
            done["schemas_skipped"] = str(exc)
    else:
        done["schemas_skipped"] = "CHAOS_PG_DSN is not set"
    return done
