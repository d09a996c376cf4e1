"""AutoGen AgentChat: a team's save_state after every turn, load_state to resume.

``INFO`` is the light half (standard library only); ``session``, run in racers, saves the team state.
"""

from __future__ import annotations

from chaos.targets import BRANCHES, OWN_APP_READS, TargetInfo

INFO = TargetInfo(
    framework="autogen",
    module="chaos.targets.autogen.session",
    about="AutoGen AgentChat team (round-robin, or the workload's own: Swarm, selector), save_state after every turn to a JSON file, load_state to resume; replayed model replies (no LLM)",
    backends=("file",),
    capturable_backends=("file",),
    workloads={
        "three_step": "agents a -> b -> c, each calling one tool that fires its effect",
        "gate_after_interrupt": "pre (tool) -> ask (the team stops for a human) | answer as the next task -> gate (effect keyed by it) -> end (tool)",
        "invalid_type": "a -> bad -> c (tool agents); from bad's turn on the store saves a first message whose content is an int (tampered below the framework)",
    },
    kinds=("race", "kill_sweep", "stray_resume", "recovery_determinism", "invalid_state"),
    properties=("EO", "PC", "CO", "RD", "LIVENESS", "DU", "CV", "AA"),
    distributions=("autogen-agentchat", "autogen-core", "autogen-ext"),
    boundaries="save(turn=<agent>):before/after, effect(task):after",
    unsupported={
        BRANCHES: "a round-robin team takes one turn at a time: there are no parallel branches (the adapter runs no parallel tool calls either)",
        "fork": "save_state returns the latest state only; AgentChat has no checkpoint ids or fork operation",
        "FI": "load_state has no notion of retry vs fork",
        "FD": "needs fork",
        "shared_state": "no shared-state agent workloads for AutoGen yet",
        "upgrade": "no v1/v2 workload pairs for AutoGen yet (its factories do not read ctx.version)",
        "UP": "needs upgrade",
        "failing_effect": "not measured yet: no AutoGen workload with a retry or an error handler around an effect",
        "first_checkpoint": "AgentChat persists nothing itself; the first save is the application's, after the first turn",
        "durability": "no durability modes: the application chooses when to save the team state",
        # one backend, "file": AgentChat has no store of its own; state is a dict the application keeps (here a JSON file)
    },
    reads=OWN_APP_READS,
    packages=("autogen_core", "autogen_agentchat", "autogen_ext"),
    trial_s=2.0,
    recovery_calls={"none": "load_state + run()", "input": "a new team run", "command": "load_state + run(), continuing the team"},
    restores=True,  # resumed by restoring the saved state into objects built afresh: baselines answer in a fresh process
    import_name="autogen_agentchat",
    default_version="0.7.5",
    pins=("autogen-agentchat=={version}", "autogen-core=={version}", "autogen-ext=={version}"),
)
