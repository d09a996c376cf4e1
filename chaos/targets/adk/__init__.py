"""Google ADK (Agent Development Kit) as a target: the light half (standard library only).

What chaos can ask of ADK, readable without importing it: an ``LlmAgent`` driven by a scripted
``BaseLlm`` (no network, no key), in an ``App`` with resumability on, run by a ``Runner`` over a
session service (``SqliteSessionService``, or ``DatabaseSessionService`` on SQLite, PostgreSQL or
MariaDB). The racer half is ``chaos.targets.adk.session``.
"""

from __future__ import annotations

from chaos.targets import BRANCHES, TargetInfo

INFO: TargetInfo = TargetInfo(
    framework="adk",
    module="chaos.targets.adk.session",
    about="Google ADK: an LlmAgent (scripted BaseLlm) in a resumable App, run by a Runner over a session service; a tool with require_confirmation as the pause",
    # mariadb: DatabaseSessionService on the MariaDB (or MySQL) of CHAOS_MYSQL_DSN through aiomysql
    backends=("sqlite", "db_sqlite", "postgres", "mariadb"),
    capturable_backends=("sqlite", "db_sqlite"),
    # fault: db_disconnect on mariadb: the racer's connections are killed by chaos.targets.adk.hooks.cut_connections
    cut_backends=("mariadb",),
    in_process_backends=(),
    workloads={
        "three_step": "one invocation: the model calls tools a, b, c in turn (one effect each), then answers",
        "gate_after_interrupt": "tool pre, then tool gate (require_confirmation: the pause; effect keyed by the confirmation's payload), then tool end",
    },
    kinds=("kill_sweep", "race", "stray_resume", "upgrade", "first_checkpoint", "recovery_determinism"),
    properties=("EO", "PC", "LIVENESS", "CO", "DU", "CV", "CL", "UP", "FCL", "RD", "AA"),
    distributions=("google-adk",),
    boundaries="create_session, append(author=A,kind=K[,delta]), each :before/:after (the session service's writes); effect(task):after",
    unsupported={
        BRANCHES: "no parallel-tool workload for ADK yet",
        "durability": "every session-service write is one committed transaction; ADK has no durability mode to vary",
        # ADK's nearest thing, Runner.rewind_async, drops a session's events after a point; it addresses no saved state to branch from
        "fork": "ADK has no fork: a session's events can be rewound (Runner.rewind_async), not branched into a second run from a past event",
        "FD": "needs fork",
        "FI": "needs fork",
        "invalid_state": "not built yet: no ADK workload writes a state delta that breaks a schema (ADK state is an untyped dict)",
        "shared_state": "no shared-state agent workloads for ADK yet",
        "failing_effect": "not measured yet: no ADK workload with a retry around a tool effect",
    },
    # the invocation's first durable record is its user event: before that append, run_async has
    # accepted the message and nothing of it is in the session (create_session is the app's, not the run's)
    first_writes=("append(",),
    pause_name="adk_request_confirmation",
    recovery_calls={
        "none": "Runner.run_async(invocation_id=...) with no message (ADK's resume of a stopped invocation)",
        "input": "Runner.run_async(new_message=the first message): a new invocation",
        "command": "Runner.run_async(invocation_id=...), the pending confirmation answered with a FunctionResponse",
    },
    packages=("google",),
    trial_s=3.0,
    import_name="google.adk",
    default_version="2.13.0",
    # 2.12.0: the release a paused invocation is deployed from in the upgrade cases
    ci_versions=("", "2.12.0"),
    preflight="chaos.targets.adk.preflight",
    hooks="chaos.targets.adk.hooks",
    pins=("google-adk=={version}", "sqlalchemy[asyncio]==2.1.9", "asyncpg==0.32.0", "aiomysql==0.3.2"),
)
