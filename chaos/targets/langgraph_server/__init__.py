"""The LangGraph Agent Server: a real server per cell; racers are its SDK's clients.

Its helpers: ``host`` (the server per cell), ``inproc``, ``app``, ``config``, ``offline``; ``hooks``
hosts it through ``chaos.targets.hooks.HostsCells``.
"""

from __future__ import annotations

from chaos.targets import BRANCHES, TargetInfo

INFO = TargetInfo(
    framework="langgraph_server",
    module="chaos.targets.langgraph_server.session",
    about="LangGraph Agent Server (langgraph dev, in-memory runtime) started by chaos per cell; racers are langgraph-sdk clients",
    backends=("inmem",),
    workloads={
        "gate_after_interrupt": "deployed: pre -> gate (interrupt(), effect keyed by the resume value) -> end",
        "approval_idempotent": "deployed: gate_after_interrupt with idempotent effects",
        "three_step": "deployed: a -> b -> c, one effect each",
        "three_step_idempotent": "deployed: three_step with idempotent effects",
        "two_gates": "deployed: pre -> gate -> gate2 -> end",
        "slow_reply": "deployed: draft (effect) -> hold (waits until the trial releases it) -> send (effect): a run in flight, for double_texting",
    },
    kinds=("race", "kill_sweep", "double_texting"),
    properties=("CO", "LIVENESS", "EO", "PC", "DT", "LS"),  # LS: the server owns the threads (chaos.kinds.lost_state)
    distributions=("langgraph-api", "langgraph-runtime-inmem", "langgraph-sdk", "langgraph"),
    boundaries="in the server's worker: put(step,source):before/after, put_writes(node,channels):before/after (the in-memory runtime's saver), effect(task):after",
    unsupported={
        "first_checkpoint": "not built yet: the run is accepted by the API before the worker writes; that window is not swept yet",
        "fork": "not driven through the runs API yet",
        "stray_resume": "not driven through the runs API yet",
        "recovery_determinism": "not built yet through the API",
        "invalid_state": "not driven through the runs API yet",
        "shared_state": "no shared-state workloads are deployed behind the server",
        "upgrade": "a deploy between pause and resume is a server restart on new code: not built yet",
        "failing_effect": "not driven through the runs API yet",
        "AA": "the server decides what a resume approves; chaos sees no approval apart from a recovery call",
        BRANCHES: "no parallel-branch workload is deployed behind the server yet",
        "durability": "the server chooses its checkpointer's durability; a client cannot set it",
    },
    reads=(),
    unread_fields={
        "answers": "a client answers every pause with resume's command value; answer plans are not sent through the API yet",
        "resume:app": "the runs API has no recovery hook for an app's own resume",
    },
    # blamed as the framework's own code: the server, its runtime, the client, the graph library and
    # what the server is built on with it (LangChain's core, LangSmith: its racers preload them)
    packages=("langgraph_api", "langgraph_runtime_inmem", "langgraph_sdk", "langgraph", "httpx", "langchain_core", "langsmith"),
    trial_s=7.0,
    # each run waits 0.5-1 s for the in-memory runtime's queue (it sleeps 0.5 s between looks, and takes only
    # runs created before the look began); a server-kill trial on 2 cores: 3.7 s of wall, 0.5 core busy
    trials_wait=True,
    in_process_backends=(),
    import_name="langgraph_api",
    default_version="0.16.7",
    pins=(
        "langgraph-api=={version}",
        "langgraph-cli[inmem]==0.4.40",
        "langgraph-runtime-inmem==0.36.7",
        "langgraph-sdk==0.4.14",
        "langgraph==1.2.24",
    ),
    hooks="chaos.targets.langgraph_server.hooks",
)
