"""OpenAI Agents SDK target, the light half (standard library only).

What the adapter offers, readable without the SDK: a ``Runner`` over an agent whose tool needs a
human's approval (``@function_tool(needs_approval=True)``). The run stops with
``result.interruptions``; the app saves ``result.to_state().to_json()`` in its own store (a file, a
SQLite row, a Postgres row, the team's own through ``workload_params.store``) and later, in any process, ``RunState.from_json(agent, blob)``,
``state.approve(item)`` or ``state.reject(item)``, ``Runner.run(agent, state)``. Conversation items
may also live in the SDK's own ``SQLiteSession`` (backend ``sqlite_session``) or ``SQLAlchemySession`` (backend
``postgres`` with ``workload_params: {session: sqlalchemy}``). The racer half is
``chaos.targets.openai_agents.session``; the stores are ``chaos.targets.openai_agents.stores``.
"""

from __future__ import annotations

from chaos.targets import BRANCHES, TargetInfo

INFO: TargetInfo = TargetInfo(
    framework="openai_agents",
    module="chaos.targets.openai_agents.session",
    about="OpenAI Agents SDK: Runner with an approval-gated function tool (the SDK's ScriptedModel, no network); "
    "RunState.to_json saved in the app's store (file, SQLite row, Postgres row, or the team's own: workload_params.store), the conversation optionally in SQLiteSession",
    backends=("file", "sqlite", "postgres", "sqlite_session"),
    # the file store and a SQLite file (the row store, or the SDK's session beside the file store) are
    # all files in the trial's folder; Postgres is behind a socket
    capturable_backends=("file", "sqlite", "sqlite_session"),
    in_process_backends=(),
    workloads={
        "three_step": "the scripted model calls tools a, b, c (one per turn), each firing its effect, then answers 'done'",
        "gate_after_interrupt": "pre (effect) -> gate (needs_approval: the run stops with interruptions; approved, "
        "its effect keyed by the answer) -> end (effect) -> 'done'",
        "tampered_gate": "gate_after_interrupt whose blob the store alters below the SDK at the approval "
        "(workload_params.tamper: foreign_agent | newer_schema | emptied_history)",
    },
    # upgrade: a deploy of an SDK release between pause and resume (upgrade_to.target.version); the
    # blob's $schemaVersion (0.23.1 writes 1.18, 0.24.0 writes 1.21) is what its policy reads
    kinds=("kill_sweep", "race", "stray_resume", "fork", "recovery_determinism", "first_checkpoint", "upgrade", "invalid_state"),
    # LC: the durable history (the session's items, else the blob's) read as a tree of tool outputs after a race
    properties=("EO", "PC", "CO", "LIVENESS", "RD", "FD", "FI", "FCL", "AA", "AR", "LC", "DU", "CV", "UP"),
    distributions=("openai-agents", "openai"),
    boundaries=(
        "save_state(interruptions=N|final_output):before/after (the app's store), "
        "session.add_items(n=N,kind=K):before/after, session.pop_item, session.clear_session (sqlite_session); effect(task):after"
    ),
    unsupported={
        BRANCHES: "no parallel-branch workload for the Agents SDK yet (the scripted model makes one tool call per turn)",
        "fork:explicit": "the SDK has no fork operation: a second branch is RunState.from_json of the same saved blob (fork_via: checkpoint)",
        "shared_state": "no shared-state agent workloads for the Agents SDK yet",
        "failing_effect": "not measured yet: no workload with a tool error handler around an effect",
        "durability": "no durability modes: the app chooses when to save the state blob; the SDK's session writes each turn",
    },
    pause_saves=("save_state(interruptions=",),
    # an approval addressed by call id: the first call, the answered one, one no interruption has
    reads=("resume_by:interrupt", "resume_by:answered_id", "resume_by:unknown_id"),
    packages=("agents", "openai"),
    trial_s=2.0,
    recovery_calls={
        "none": "leave the saved state waiting (or Runner.run(agent, [], session) from the SDK's session)",
        "input": "Runner.run(agent, input): a new run",
        "command": "RunState.from_json + approve + Runner.run",
    },
    ci_versions=("", "0.23.1"),  # the older release the upgrade cases pause on
    preflight="chaos.targets.openai_agents.preflight",
    hooks="chaos.targets.openai_agents.hooks",
    import_name="agents",
    default_version="0.24.0",
    # SQLAlchemy: the SDK's SQLAlchemySession on the run's Postgres (backend postgres, workload_params.session: sqlalchemy)
    pins=("openai-agents=={version}", "psycopg[binary]>=3.2,<4", "sqlalchemy[asyncio]>=2.0,<3"),
)
