"""LlamaIndex Workflows: a Context saved with to_dict at every step boundary.

``INFO`` is the light half (standard library only); ``session``, run in racers, saves the Context.
"""

from __future__ import annotations

from chaos.targets import BRANCHES, OWN_APP_READS, TargetInfo

INFO = TargetInfo(
    framework="llamaindex",
    module="chaos.targets.llamaindex.session",
    about="LlamaIndex Workflows; Context.to_dict saved to a JSON file at every step boundary, from_dict to resume",
    backends=("file",),
    capturable_backends=("file",),
    workloads={
        "three_step": "StartEvent -> a -> b -> c -> StopEvent, one effect per step",
        "gate_after_interrupt": "pre -> InputRequiredEvent (pause) | HumanResponseEvent -> gate (effect keyed by the response) -> end",
        "invalid_type": "a -> bad -> c over a typed state (Context[CountState]); bad assigns a str to count: int in edit_state",
    },
    kinds=("race", "kill_sweep", "stray_resume", "recovery_determinism", "invalid_state"),
    properties=("EO", "PC", "CO", "RD", "LIVENESS", "DU", "CV", "AA"),
    distributions=("llama-index-workflows",),
    boundaries="save(after=<step>):before/after, save(input_required):before/after, effect(task):after",
    unsupported={
        BRANCHES: "no parallel-branch workload for LlamaIndex yet: the adapter saves the Context after each step of a sequential workflow (no steps with num_workers > 1)",
        "fork": "the application keeps only the latest Context.to_dict; the framework has no checkpoint ids or fork operation",
        "FI": "Context.from_dict has no notion of retry vs fork: every restore is a new run of the saved dict",
        "FD": "needs fork",
        "shared_state": "no shared-state agent workloads for LlamaIndex yet",
        "upgrade": "no v1/v2 workload pairs for LlamaIndex yet (its factories do not read ctx.version)",
        "UP": "needs upgrade",
        "failing_effect": "not measured yet: no LlamaIndex workload with a retry or an error handler around an effect",
        "first_checkpoint": "the framework persists nothing itself; the first save is the application's, after the first step",
        "durability": "no durability modes: the application chooses when to save the context",
        # one backend, "file": core llama-index-workflows has no store; the server extra's SqliteWorkflowStore
        # needs llama-agents-server (not pinned)
    },
    pause_saves=("save(input_required)",),
    reads=OWN_APP_READS,
    packages=("llama_index", "workflows"),
    trial_s=1.5,
    recovery_calls={"none": "Context.from_dict + run", "input": "a new run", "command": "Context.from_dict + run, continuing the run"},
    hooks="chaos.targets.llamaindex.hooks",
    restores=True,  # resumed by restoring the saved state into objects built afresh: baselines answer in a fresh process
    import_name="workflows",
    default_version="2.26.1",
    pins=("llama-index-workflows=={version}",),
)
