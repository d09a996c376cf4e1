"""LangGraph: a StateGraph (or functional-API entrypoint) over a checkpoint saver.

Its helpers: ``custom_saver``, ``guards``, ``savers``, ``saver_boundaries``, ``store_size``; its
orchestrator half, ``hooks`` (with ``options`` and ``repro``).
"""

from __future__ import annotations

from chaos.targets import BRANCHES, BREAKPOINTS, STORE_SIZE, TargetInfo

INFO = TargetInfo(
    framework="langgraph",
    module="chaos.targets.langgraph.session",
    about="LangGraph StateGraph over a checkpoint saver (durability sync/async/exit)",
    backends=("sqlite", "memory", "postgres", "sqlite_async", "postgres_async", "saver", "postgres_pool"),
    capturable_backends=("sqlite", "sqlite_async"),
    workloads={
        "gate_after_interrupt": "pre -> gate (interrupt(), effect keyed by the resume value) -> end",
        "approval_idempotent": "pre (no effect) -> gate (interrupt(), idempotent effect) -> end (idempotent): the fixed approval flow",
        "three_step": "a -> b -> c, one effect each",
        "three_step_idempotent": "three_step with idempotency-keyed effects (self-test: never duplicates)",
        "three_step_fsync": "three_step, SQLite synchronous=FULL (power-loss self-test: every checkpoint durable)",
        "three_step_nosync": "three_step, SQLite synchronous=OFF (power-loss self-test: checkpoints lost)",
        "two_gates": "pre -> gate (interrupt) -> gate2 (interrupt) -> end: a thread consumed but not complete",
        "two_asks": "pre -> gate (interrupt() twice in one node; gate, then gate2 fire) -> end: LangGraph issue 8837's shape",
        "three_step_retry": "three_step with a RetryPolicy (3 attempts) on b",
        "three_step_retry_idempotent": "three_step_retry with idempotency-keyed effects",
        "charge_with_handler": "charge (error_handler: refund) beside approve (interrupt, then ship): LangGraph issue 9002",
        "charge_with_handler_idempotent": "charge_with_handler with an idempotent refund",
        "invalid_type": "a -> bad -> c, pydantic state; bad writes a str into count: int",
        "invalid_reducer": "a -> bad -> c, pydantic state; bad writes an int into a list-reduced channel",
        "functional_gate": "functional API: @entrypoint calling @task pre, interrupt(), @task gate(value), @task end",
        "functional_three_step": "functional API: @entrypoint calling @task a, b, c, one effect each",
        # agents sharing a SqliteStore (chaos.workloads.shared_langgraph); _cas / _lock: the guarded twins
        **{
            f"shared_{a}{g}": f"shared_state agents: {a.replace('_', ' ')}"
            + {"": "", "_cas": ", validated at commit", "_lock": ", pessimistic lock"}[g]
            for a in ("lost_update", "stale_generation", "phantom_tool", "causal_cascade")
            for g in ("", "_cas", "_lock")
        },
        "shared_tool_reorder": "shared_state agents: a model plans two tool calls, ToolNode runs them in parallel",
        "shared_tool_reorder_seq": "shared_state agents: the same, effects committed in plan order (a sequencer)",
        # parallel branches at LangGraph's default concurrency (chaos.workloads.parallel_langgraph)
        "parallel_send": "plan -> Send(worker, i) for 3 workers (effect worker:<i> each) -> join",
        "parallel_send_idempotent": "parallel_send with idempotency-keyed effects (control: never duplicates)",
        "parallel_tools": "agent (fake chat model) plans 3 tool calls in one AIMessage -> ToolNode runs them at once -> agent",
        "parallel_gate": "w0, w1, w2 and gate (interrupt()) in one step -> join: a step that stops with finished branches (issue 8115)",
        # pairs for the upgrade kind (chaos.workloads.upgrade_langgraph): v1 and v2 from ctx.version
        "upgrade_field_added": "upgrade pair: v2 adds a state field that pre sets and end reads",
        "upgrade_field_renamed": "upgrade pair: v2 renames the state field end reads (amount -> total)",
        "upgrade_field_removed": "upgrade pair: v2 drops a state field v1 wrote before the pause",
        "upgrade_field_type": "upgrade pair: v2 changes a field's type (str '3' -> int 3); end doubles it",
        "upgrade_node_added": "upgrade pair: v2 adds a node before the paused gate",
        "upgrade_node_renamed": "upgrade pair: v2 renames the paused node (gate -> approve)",
        "upgrade_node_removed": "upgrade pair: v2 drops a node after the paused gate",
        "upgrade_reducer_changed": "upgrade pair: v2 changes log's reducer (append -> last value)",
        "upgrade_defer_single": "upgrade pair: v2 marks the paused single-predecessor node defer=True (LangGraph 8629)",
        "upgrade_defer_single_dropped": "upgrade pair: v1 defers the paused node, v2 does not",
        "upgrade_defer_fanin": "upgrade pair: v2 marks a half-seen fan-in node defer=True (LangGraph 8618)",
        "upgrade_defer_fanin_dropped": "upgrade pair: v1 defers the half-seen fan-in node, v2 does not (LangGraph 8618)",
        # a state that grows every step (chaos.workloads.growing_langgraph): checkpoint sizes and bounds
        "growing_messages": "s1 -> ... -> sN (steps), each appending a message of message_bytes to a list: checkpoints grow",
        "upgrade_messages": "upgrade, a library release: the same graph at v1 and v2; messages, a dataclass and a pydantic model in state",
    },
    kinds=(
        "race",
        "kill_sweep",
        "first_checkpoint",
        "fork",
        "invalid_state",
        "stray_resume",
        "recovery_determinism",
        "shared_state",
        "upgrade",
        "failing_effect",
    ),
    properties=(
        "EO",
        "PC",
        "FD",
        "CV",
        "CO",
        "RD",
        "FI",
        "LIVENESS",
        "FCL",
        "LU",
        "SG",
        "PT",
        "CC",
        "TR",
        "UP",
        "DU",
        "AA",
        "AR",
        "LC",
        "SB",  # store bounds (issue 26: chaos.kinds.growth)
        "CL",  # lost connections (chaos.kinds.db_disconnect)
    ),
    distributions=(
        "langgraph",
        "langgraph-checkpoint",
        "langgraph-checkpoint-sqlite",
        "langgraph-checkpoint-postgres",
    ),
    # Postgres backends: psycopg with its C build, and the pool of ``postgres_pool``
    drivers=("psycopg", "psycopg-binary", "psycopg-pool"),
    boundaries="put(step,source):before/after, put_writes(node,channels):before/after, effect(task):after",
    features=(BRANCHES, BREAKPOINTS, STORE_SIZE),
    first_writes=("put(",),
    pause_name="interrupt",
    reads=(
        "target.durability",
        "target.saver",
        "target.guard",
        "answers",
        "resume:app",
        "resume_by:interrupt",
        "resume_by:answered_id",
        "resume_by:none_after_answer",
        "resume_by:unknown_id",
    ),
    packages=("langgraph", "langchain_core", "langchain", "langsmith"),
    trial_s=1.0,
    recovery_calls={"none": "invoke(None)", "input": "invoke(input)", "command": "invoke(None), continuing the thread"},
    open_cases={
        "fork-functional": "a functional-API task's write is saved on a background thread within one step",
        "recovery-async": "RD under async durability is open (LangGraph issue 8039)",
    },
    # the default release is installed in the orchestrator's own environment; CI builds the old one
    ci_versions=("1.0.10",),
    import_name="langgraph",
    default_version="1.2.24",
    hooks="chaos.targets.langgraph.hooks",
    pins=(
        "langgraph=={version}",
        "langgraph-checkpoint-sqlite==3.1.2",
        "langgraph-checkpoint-postgres==3.2.0",
        "psycopg[binary]>=3.2,<4",
    ),
)
