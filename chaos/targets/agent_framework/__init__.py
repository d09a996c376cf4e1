"""Microsoft Agent Framework workflows as a target: the light half (standard library only).

What the adapter offers, readable without importing the framework: a ``Workflow`` of executors
whose checkpoints (``WorkflowCheckpoint``: on entry, on delivered responses, after every
superstep) go to ``FileCheckpointStorage`` in the trial's folder, or to a team's own
``CheckpointStorage`` (``workload_params.storage: package.module:factory``). The racer half is
``chaos.targets.agent_framework.session``; bad input is refused before any trial by
``chaos.targets.agent_framework.preflight``.
"""

from __future__ import annotations

from chaos.targets import BRANCHES, TargetInfo

INFO = TargetInfo(
    framework="agent_framework",
    module="chaos.targets.agent_framework.session",
    about=(
        "Microsoft Agent Framework workflows (agent-framework-core): executors over FileCheckpointStorage "
        "(or a team's own CheckpointStorage); request_info pauses answered by run(checkpoint_id=, responses=)"
    ),
    backends=("file",),
    # the whole durable state is the storage folder in the trial's folder (JSON files, renamed into place)
    capturable_backends=("file",),
    workloads={
        "three_step": "executors a -> b -> c (one per superstep), one effect each; c yields the output",
        "gate_after_interrupt": "pre -> gate (ctx.request_info; @response_handler fires gate:<answer>) -> end (output)",
        "two_gates": "pre -> gate (request) -> gate2 (request) -> end: a run answered once is consumed, not complete",
    },
    kinds=("kill_sweep", "race", "stray_resume", "fork", "recovery_determinism", "upgrade"),
    properties=("EO", "PC", "CO", "LIVENESS", "AA", "AR", "FD", "RD", "LC", "DU", "CV", "UP"),
    distributions=("agent-framework-core",),
    boundaries=(
        "save(entry=X|responses=X|superstep=N,next=X|superstep=N,pending=X|superstep=N,idle):before/tmp/after "
        "(tmp: FileCheckpointStorage's temporary file written, not renamed; a team's storage: before/after), effect(task):after"
    ),
    unsupported={
        BRANCHES: "no parallel-branch workload for the Agent Framework yet (fan-out edges exist; the built-ins are chains)",
        "first_checkpoint": "since 1.13.0 the run's entry checkpoint (its first message, before any executor runs) is its first "
        "write: a run not yet recorded has fired nothing, so there is no accepted-but-unrecorded window beyond the sweep's "
        "save(entry=...):before point",
        "FCL": "needs first_checkpoint",
        "invalid_state": "no invalid-state workload yet: checkpoint values are pickled as they are (no schema checks them)",
        "shared_state": "no shared-state agent workloads for the Agent Framework yet",
        "failing_effect": "not measured yet: no workload with a retry around an effect",
        "FI": "the framework's API does not tell a retry from a fork: run(checkpoint_id=, responses=) is the same call for both",
        "durability": "no durability modes: FileCheckpointStorage writes each checkpoint once (temporary file, rename, no fsync)",
    },
    reads=("resume_by:interrupt", "resume_by:unknown_id"),
    unread_fields={
        "resume:app": "the adapter has no team recovery hook yet: point it at your workflow with a workload factory",
        "answers": "answer plans are not read by the Agent Framework adapter yet: each resume answers the pending request with the value",
    },
    packages=("agent_framework",),
    trial_s=2.5,
    recovery_calls={
        "none": "run(checkpoint_id=head)",
        "input": "a new run(message)",
        "command": "run(checkpoint_id=head), continuing the run",
    },
    # 1.12.1: the last release before 1.13.0's entry checkpoint, for the upgrade case (CI builds it)
    ci_versions=("", "1.12.1"),
    import_name="agent_framework",
    default_version="1.23.0",
    pins=("agent-framework-core=={version}",),
    preflight="chaos.targets.agent_framework.preflight",
    hooks="chaos.targets.agent_framework.hooks",
)
