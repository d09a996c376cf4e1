"""pydantic-graph: a Graph over FileStatePersistence.

``INFO`` is the light half (standard library only); ``session``, run in racers, wraps the persistence.
"""

from __future__ import annotations

from chaos.targets import BRANCHES, OWN_APP_READS, TargetInfo

INFO = TargetInfo(
    framework="pydantic_graph",
    module="chaos.targets.pydantic_graph.session",
    about="pydantic-graph (1.x line) Graph over FileStatePersistence (a JSON snapshot list per run)",
    backends=("file",),
    capturable_backends=("file",),
    workloads={
        "three_step": "A -> B -> C -> End, one effect each",
        "gate_after_interrupt": "Pre -> Ask (the run stops before it) | Gate(answer) effect keyed by the answer -> Finish",
        "invalid_type": "IA -> Bad -> IC over a dataclass state; Bad assigns a str to count: int",
    },
    kinds=("race", "kill_sweep", "stray_resume", "recovery_determinism", "invalid_state"),
    properties=("EO", "PC", "CO", "RD", "LIVENESS", "DU", "CV"),
    distributions=("pydantic-graph",),
    boundaries="save(node=X,status=created|pending|running|success):before/after, save(end):before/after, effect(task):after",
    unsupported={
        "AA": "a recovery cannot be told from an approval: pydantic-graph has no pause of its own (the app stops iterating before "
        "the node that needs the answer) and records no approval; the call that runs that node (iter_from_persistence with the "
        "answer in deps, or load_next and a node built from the answer, as its docs' question graph does) is the same call "
        "whether a human answered or a recovery passed None",
        BRANCHES: "a pydantic-graph run is one node after another (each node returns the next): there are no parallel branches",
        "fork": "pydantic-graph resumes only the next 'created' snapshot (load_next); no API addresses a past snapshot, so a fork cannot be expressed",
        "FI": "no API distinguishes retry from fork: iter_from_persistence takes no snapshot id",
        "FD": "needs fork",
        "shared_state": "no shared-state agent workloads for pydantic-graph yet",
        "upgrade": "no v1/v2 workload pairs for pydantic-graph yet (its factories do not read ctx.version)",
        "UP": "needs upgrade",
        "failing_effect": "not measured yet: no pydantic-graph workload with a retry or an error handler around an effect",
        "first_checkpoint": "the start node's snapshot is the first write of a run; there is no accepted-but-unrecorded window to sweep",
        "durability": "FileStatePersistence rewrites its file synchronously; there is no durability mode to vary",
    },
    reads=OWN_APP_READS,
    packages=("pydantic_graph", "pydantic_ai"),
    trial_s=1.0,
    restores=True,  # resumed by restoring the saved state into objects built afresh: baselines answer in a fresh process
    import_name="pydantic_graph",
    default_version="1.107.10",
    # 1.107.10 is the last release that ships pydantic_graph.persistence (the 2.x line dropped it)
    pins=("pydantic-graph=={version}",),
)
