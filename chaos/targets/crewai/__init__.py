"""CrewAI Flows: @persist on SQLite, or CheckpointConfig's JSON/SQLite providers.

``INFO`` is the light half (standard library only); ``session`` the racer half.
"""

from __future__ import annotations

from chaos.targets import BRANCHES, OWN_APP_READS, TargetInfo

INFO = TargetInfo(
    framework="crewai",
    module="chaos.targets.crewai.session",
    about="CrewAI Flows with plain methods (no LLM): @persist on SQLite, or CheckpointConfig with the JSON/SQLite provider",
    backends=("sqlite", "checkpoint_json", "checkpoint_sqlite"),
    workloads={
        "three_step": "@start a -> @listen b -> @listen c, one effect per method",
        "gate_after_interrupt": "pre -> ask (@human_feedback, paused as pending feedback) | resume(answer) -> gate (effect keyed by it) -> end",
        "invalid_type": "@start a -> bad -> c over Flow[CountState]; bad assigns a str to count: int",
    },
    kinds=("race", "kill_sweep", "first_checkpoint", "stray_resume", "recovery_determinism", "fork", "invalid_state"),
    properties=("EO", "PC", "CO", "RD", "LIVENESS", "DU", "FD", "FI", "CV", "FCL", "AA"),
    distributions=("crewai",),
    boundaries=(
        "save_state(method=X), save_pending(method=X), clear_pending (sqlite); "
        "checkpoint(provider=json|sqlite,completed=a+b) (checkpoint_*), each :before/:after; effect(task):after"
    ),
    unsupported={
        BRANCHES: "no parallel-branch workload for CrewAI yet: Flow listeners of one method may run concurrently, but the adapter's workloads and barriers are one method after another",
        "shared_state": "no shared-state agent workloads for CrewAI yet",
        "upgrade": "no v1/v2 workload pairs for CrewAI yet (its factories do not read ctx.version)",
        "UP": "needs upgrade",
        "failing_effect": "not measured yet: no CrewAI workload with a retry or an error handler around an effect",
        "durability": "no durability modes: every save is a synchronous write",
        # on the checkpoint_* backends a @human_feedback pause is not persisted (only @persist, backend sqlite,
        # saves it): they run three_step; a race has no pause to race on, and a fork, which answers the pause
        # again, raises Unsupported in the session (NEEDS_CHECKPOINTS)
        "answers on checkpoint_json": "a @human_feedback review is saved as pending only by @persist: use backend sqlite",
        "answers on checkpoint_sqlite": "a @human_feedback review is saved as pending only by @persist: use backend sqlite",
    },
    pause_saves=("save_pending(",),
    first_writes=("save_state(", "save_pending(", "checkpoint("),
    reads=OWN_APP_READS,
    trial_s=1.5,  # a CrewAI racer takes ~0.5 s since the fork server imports its memory (LanceDB): 4-8 s before
    recovery_calls={"none": "kickoff by id", "input": "a new kickoff", "command": "kickoff by id, continuing the flow"},
    open_cases={
        c: "CrewAI writes CheckpointConfig checkpoints from its event bus's thread pool (events/event_bus.py, "
        "_sync_executor): whether a's checkpoint is durable when b's effect fires is open"
        for c in ("checkpoint-json", "checkpoint-sqlite", "checkpoint-json-recovery")
    },
    hooks="chaos.targets.crewai.hooks",
    restores=True,  # resumed by restoring the saved state into objects built afresh: baselines answer in a fresh process
    import_name="crewai",
    default_version="1.15.30",
    pins=("crewai=={version}",),
)
