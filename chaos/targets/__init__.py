"""Targets: one adapter per framework under test.

This module is the light half: what each target offers (backends, built-in workloads, the scenario
kinds and contract properties it supports), readable by the orchestrator without importing the
framework. The heavy half, ``chaos.targets.<framework>``, runs inside racers: it builds the
workload over an instrumented persistence layer and performs one action.

A racer-side adapter module provides ``open_session(spec, barrier, ledger) -> Session`` where a
Session has ``perform(action) -> dict``, ``inspect() -> dict`` and ``close()``. See
``chaos.targets.base``: it is the one contract for adapters (actions, outcome shapes, and what each
scenario kind needs).

Capabilities are declared here, statically: ``kinds`` the adapter can run, ``properties`` it can
judge, and ``unsupported`` maps every kind or property it cannot (or every framework feature it
lacks, e.g. ``"fork:explicit"``) to the reason. ``features`` names what some workloads need (``BRANCHES``:
parallel tasks in one step); a scenario that runs such a workload on a target without it is refused
when it loads. A cell of an unsupported kind still runs nothing and
reports every property ``unknown`` with that reason; a property not in ``properties`` is ``unknown``.

Scenario fields: every field is read by chaos the same way for every framework (``COMMON_FIELDS``:
the orchestrator, the kinds, the workload's context), read by the adapter (``reads``), or not read
by it (``unread_fields``, with the reason): a scenario that sets such a field for that framework is
refused when it loads, with one line naming the field and the framework, never silently ignored.
A field with forms (``FORMS``: ``resume: app:...``, ``resume_by: interrupt``) is declared form by
form as ``field:form``; any other is "set" when it differs from its default.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

# the feature a parallel-branch workload needs: several tasks of one step at once (LangGraph's Send
# fan-out, parallel tool calls, branches from one node). ``BRANCH_WORKLOADS``: the built-ins that need it.
BRANCHES = "branches"
BRANCH_WORKLOADS = ("parallel_send", "parallel_send_idempotent", "parallel_tools", "parallel_gate")
# static breakpoints (LangGraph's interrupt_before / interrupt_after): pauses with no answer value,
# approved by continuing the run (``invoke(None)``); a target with them approves them in baselines
# and accepts ``resume: none`` as the approval in races and stray resumes
BREAKPOINTS = "breakpoints"
# approval authority: a recovery call can be told from an approval (why not, per adapter, in ``unsupported``)


@dataclass(frozen=True)
class TargetInfo:
    framework: str
    module: str
    about: str
    backends: tuple[str, ...]
    workloads: dict[str, str]
    kinds: tuple[str, ...]
    distributions: tuple[str, ...]
    boundaries: str
    # contract properties the adapter can judge (EO PC FD CV CO RD FI LIVENESS FCL)
    properties: tuple[str, ...] = ()
    # kind / property / feature -> why it is not supported (reported as the ``unknown`` reason)
    unsupported: dict[str, str] = field(default_factory=dict)
    # backends whose state lives in the racer's process: a kind's phases then run in one racer
    in_process_backends: tuple[str, ...] = ("memory",)
    import_name: str = ""
    default_version: str = ""
    # requirement templates; "{version}" is replaced by the asked-for framework version
    pins: tuple[str, ...] = ()
    # framework features a workload may need (``BRANCHES``); one it lacks is in ``unsupported`` with the reason
    features: tuple[str, ...] = ()
    # scenario fields (or ``field:form``) the adapter reads beyond ``COMMON_FIELDS``, and those it does
    # not read (why): setting one of those for this framework is refused at load
    reads: tuple[str, ...] = ()
    unread_fields: dict[str, str] = field(default_factory=dict)
    # boundaries (prefixes) that save a pause the workflow has already announced: killed at one's
    # ``:before`` with nothing saved, the approver was asked about a run that is gone
    pause_saves: tuple[str, ...] = ()
    # the framework's top-level modules (empty: ``import_name``'s). Blame reads them: a failure raised
    # inside one is the framework's (a verdict), not the app's (an invalid trial)
    packages: tuple[str, ...] = ()
    # rough seconds one trial takes (racer start, framework import, run): sharding's estimate of a cell
    # no night has measured yet
    trial_s: float = 1.5
    # the call a recovery of each resume form (``none``, ``input``, ``command``) makes on this framework:
    # AA's violation reasons name it (empty: LangGraph's calls, as before)
    recovery_calls: dict[str, str] = field(default_factory=dict)
    # cases of ``scenarios/contract_<framework>.yaml`` (not races) whose outcome the framework leaves
    # open, with why: scripts/compare_results.py compares every other case before and after a change
    open_cases: dict[str, str] = field(default_factory=dict)
    # the releases CI builds an environment for (.ci/envs.sh; "" is ``default_version``)
    ci_versions: tuple[str, ...] = ("",)
    # backends whose whole durable state is files in the trial's folder (a SQLite file with its -wal
    # and -shm, the adapter's own files): a racer frozen at a barrier leaves there the bytes a SIGKILL
    # would, so a sweep may take its crash states from one recording (``crash_states: recorded``,
    # ``chaos.kinds.crash_states``). Empty: every backend is swept in kill mode. A store behind a
    # socket (Postgres, a server) or a saver chaos cannot see the files of is never listed
    capturable_backends: tuple[str, ...] = ()
    # a module run as ``python -m <module> SPEC`` in the racers' Python before any trial (SPEC: the
    # cell's target and workload_params as JSON): exit 0 when racers can start, else one stderr line
    # saying what to change (refused, exit 3); "" for none
    preflight: str = ""
    # a module whose ``script(facts) -> (summary, script text, pip install line)`` writes a violating
    # trial as a standalone script (``chaos repro``; ``ValueError`` when it cannot); "" for none
    # (LangGraph's is chaos.repro's own)
    repro: str = ""

    def __post_init__(self) -> None:
        # one rule for every adapter's unread fields (issue 23): what LangGraph's adapter alone reads,
        # less what this one ``reads``, and ``target.durability`` when it has no durability modes (the
        # reason it gives in ``unsupported``); what an adapter lists in ``unread_fields`` is added to
        # that, or overrides its reason
        unread = {k: v for k, v in _NOT_LANGGRAPH.items() if k not in self.reads}
        if "durability" in self.unsupported:
            unread["target.durability"] = self.unsupported["durability"]
        object.__setattr__(self, "unread_fields", {**unread, **self.unread_fields})

    def top_packages(self) -> tuple[str, ...]:
        """The framework's top-level modules: ``packages``, else ``import_name``'s top level."""
        return self.packages or (self.import_name.split(".")[0] or self.framework,)

    # ``module:function`` wrapping each cell's runner (a server the cell's racers are clients of:
    # ``chaos.targets.langgraph_server_host:serving``); "" for a framework whose racers run the app
    cell_host: str = ""

    def supports(self, what: str) -> str | None:
        """None if ``what`` (a kind or property) is supported; else the reason it is not."""
        if what in self.kinds or what in self.properties or what in self.features:
            return None
        return self.unsupported.get(what) or f"the {self.framework} adapter does not declare {what!r}"

    def first_save_unjudged(self) -> str | None:
        """None where a run lost before its first save is judged (FCL, by the ``first_checkpoint`` kind);
        else why it is not judged on this framework."""
        return self.supports("first_checkpoint")

    def requirements(self, version: str | None = None) -> list[str]:
        v = version or self.default_version
        return [p.replace("{version}", v) for p in self.pins]


# fields with forms, declared form by form (``resume:app``): the forms a scenario can take
FORMS: dict[str, tuple[str, ...]] = {
    "resume": ("none", "input", "command", "app"),
    "resume_by": ("thread", "interrupt", "none_after_answer", "unknown_id"),
}

# scenario fields chaos reads the same way whatever the framework, and who reads them
COMMON_FIELDS: dict[str, str] = {
    "name": "the run folder and reports",
    "about": "the reports",
    "kind": "the orchestrator (a kind the adapter cannot run reports its cells unknown with the reason)",
    "target.framework": "the orchestrator",
    "target.backend": "checked against the adapter's backends at load",
    "target.version": "the racers' environment",
    "target.requirements": "the racers' environment",
    "workload": "the adapter's build_workload (a built-in, or package.module:factory; langgraph_server also path/langgraph.json#graph_id)",
    "workload_params": "the workload's ctx.params",
    "racers.k": "the kinds that start k racers",
    "racers.placement": "the launchers",
    "racers.start": "the launchers (warm fork server or cold racers)",
    "jitter_ms": "the racers' start gate",
    "trials": "the kinds",
    "seed": "the kinds and the racers' ctx.seed",
    "resume:none": "the kinds; every adapter continues from its persistence",
    "resume:input": "the kinds; every adapter starts a new run on the same thread",
    "resume:command": "the kinds; every adapter answers its pause with the value",
    "resume_by:thread": "stray_resume (the default)",
    "distinct_values": "race (each racer's value)",
    "fork_via": "fork (an adapter without fork reports the cell unknown with the reason)",
    "fork_value": "fork",
    "kill_points": "the sweeps and the deploy kinds (boundaries every adapter passes)",
    "upgrade_to.workload": "upgrade (an adapter without it reports the cell unknown with the reason)",
    "upgrade_to.workload_params": "upgrade",
    "upgrade_to.target.version": "upgrade (v2's racers run in the environment of that release)",
    "upgrade_to.target.requirements": "upgrade (v2's racers run in the environment of these requirements)",
    "effect_fault.task": "the workload's ctx.effect, in every adapter",
    "effect_fault.times": "the workload's ctx.effect, in every adapter",
    "crash_depth": "the sweeps",
    "recovery_kill_points": "the sweeps",
    "fault": "the sweeps (the store's folder on chaos's lazy filesystem; db_disconnect, db_restart: the run's Postgres)",
    "crash_states": "the sweeps (recorded: where the adapter declares the backend's store capturable, else kill)",
    "bounds.bytes_per_checkpoint": "the sweeps (SB: unknown where the adapter measures no store size)",
    "bounds.bytes_per_thread": "the sweeps (SB: unknown where the adapter measures no store size)",
    "timeout_s": "the orchestrator",
    "env_retries": "the orchestrator",
    "matrix": "the scenario's expansion into cells",
}

# what an adapter other than LangGraph's does not read, unless it says otherwise (``_reading``)
_NOT_LANGGRAPH = {
    "target.saver": "a saver factory is a LangGraph checkpoint saver",
    "target.guard": "a guard (chaos.targets.guards) wraps a LangGraph checkpoint saver; no other adapter applies one yet",
    "answers": "its adapter answers every pause with resume's command value; an answers plan is read by the LangGraph adapter only",
    "resume:app": "its adapter has no recovery hook; resume: app:... is read by the LangGraph adapter only",
    "resume_by:interrupt": "its pauses have no interrupt ids to address an answer to; the repeat goes to the thread",
    "resume_by:none_after_answer": "a continue with no answer after a consumed one is LangGraph's invoke(None); its adapter reads it only there",
    "resume_by:unknown_id": "its pauses have no interrupt ids, so no answer can be addressed to an id that matches none",
}

# the fields an adapter reads for a team's own app (issue 28): answer plans and the app's own resume driver
_OWN_APP_READS = ("answers", "resume:app")


TARGETS: dict[str, TargetInfo] = {
    "langgraph": TargetInfo(
        framework="langgraph",
        module="chaos.targets.langgraph",
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
        boundaries="put(step,source):before/after, put_writes(node,channels):before/after, effect(task):after",
        features=(BRANCHES, BREAKPOINTS),
        reads=(
            "target.durability",
            "target.saver",
            "target.guard",
            "answers",
            "resume:app",
            "resume_by:interrupt",
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
        pins=(
            "langgraph=={version}",
            "langgraph-checkpoint-sqlite==3.1.2",
            "langgraph-checkpoint-postgres==3.2.0",
            "psycopg[binary]>=3.2,<4",
        ),
    ),
    "crewai": TargetInfo(
        framework="crewai",
        module="chaos.targets.crewai",
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
            "fork on checkpoint_*": "a fork answers the pause again, and only @persist (backend sqlite) saves a pending pause",
            "durability": "no durability modes: every save is a synchronous write",
            "gate_after_interrupt on checkpoint_*": "a @human_feedback pause is persisted through @persist only; checkpoint backends run three_step",
            "race on checkpoint_*": "no pause to race on without @persist",
            "answers on checkpoint_json": "a @human_feedback review is saved as pending only by @persist: use backend sqlite",
            "answers on checkpoint_sqlite": "a @human_feedback review is saved as pending only by @persist: use backend sqlite",
        },
        pause_saves=("save_pending(",),
        reads=_OWN_APP_READS,
        trial_s=8.0,  # CrewAI racers take ~8 s each to start and run
        recovery_calls={"none": "kickoff by id", "input": "a new kickoff", "command": "kickoff by id, continuing the flow"},
        open_cases={
            c: "CrewAI writes CheckpointConfig checkpoints from its event bus's thread pool (events/event_bus.py, "
            "_sync_executor): whether a's checkpoint is durable when b's effect fires is open"
            for c in ("checkpoint-json", "checkpoint-sqlite", "checkpoint-json-recovery")
        },
        import_name="crewai",
        default_version="1.15.30",
        pins=("crewai=={version}",),
    ),
    "llamaindex": TargetInfo(
        framework="llamaindex",
        module="chaos.targets.llamaindex",
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
            "backend": "core llama-index-workflows has no store; the server extra's SqliteWorkflowStore needs llama-agents-server (not pinned)",
        },
        pause_saves=("save(input_required)",),
        reads=_OWN_APP_READS,
        packages=("llama_index", "workflows"),
        trial_s=1.5,
        recovery_calls={"none": "Context.from_dict + run", "input": "a new run", "command": "Context.from_dict + run, continuing the run"},
        import_name="workflows",
        default_version="2.26.1",
        pins=("llama-index-workflows=={version}",),
    ),
    "pydantic_graph": TargetInfo(
        framework="pydantic_graph",
        module="chaos.targets.pydantic_graph",
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
        reads=_OWN_APP_READS,
        packages=("pydantic_graph", "pydantic_ai"),
        trial_s=1.0,
        import_name="pydantic_graph",
        default_version="1.107.10",
        # 1.107.10 is the last release that ships pydantic_graph.persistence (the 2.x line dropped it)
        pins=("pydantic-graph=={version}",),
    ),
    "autogen": TargetInfo(
        framework="autogen",
        module="chaos.targets.autogen",
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
            "backend": "AgentChat has no store of its own; state is a dict the application keeps (here a JSON file)",
        },
        reads=_OWN_APP_READS,
        packages=("autogen_core", "autogen_agentchat", "autogen_ext"),
        trial_s=2.0,
        recovery_calls={"none": "load_state + run()", "input": "a new team run", "command": "load_state + run(), continuing the team"},
        import_name="autogen_agentchat",
        default_version="0.7.5",
        pins=("autogen-agentchat=={version}", "autogen-core=={version}", "autogen-ext=={version}"),
    ),
    "langgraph_server": TargetInfo(
        framework="langgraph_server",
        module="chaos.targets.langgraph_server",
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
        # blamed as the framework's own code: the server, its runtime, the client and the graph library
        packages=("langgraph_api", "langgraph_runtime_inmem", "langgraph_sdk", "langgraph", "httpx"),
        trial_s=7.0,
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
        cell_host="chaos.targets.langgraph_server_host:serving",
    ),
    "dbos": TargetInfo(
        framework="dbos",
        module="chaos.targets.dbos",
        about="DBOS Transact: @DBOS.workflow with @DBOS.step steps, durable in its system database (SQLite in the trial's folder, or Postgres); DBOS.recv as the approval pause",
        backends=("sqlite", "postgres"),
        workloads={
            "three_step": "@DBOS.workflow running @DBOS.step a, b, c, one effect each",
            "gate_after_interrupt": "step pre -> DBOS.recv('approve') (the pause) | DBOS.send(id, answer, 'approve') -> step gate (effect keyed by the answer) -> step end",
            "two_gates": "step pre -> recv | send -> step gate (keyed by the 1st answer) -> recv | send -> step gate2 (keyed by the 2nd) -> step end: two pauses, for answers plans",
            "upgrade_step_added": "upgrade pair: gate_after_interrupt as v1; v2 adds step audit after the approval (one source: the version is workload_params.application_version)",
            "upgrade_step_inserted": "upgrade pair: gate_after_interrupt as v1; v2 adds step check before the approval, where v1 recorded its recv",
        },
        kinds=("kill_sweep", "race", "stray_resume", "fork", "recovery_determinism", "upgrade"),
        properties=("EO", "PC", "LIVENESS", "CO", "AA", "DU", "CV", "FD", "FI", "RD", "CL", "UP"),
        distributions=("dbos",),
        boundaries=(
            "status(PENDING|SUCCESS|ERROR), step(name=X,n=N), recv_wait(topic=T), recv(topic=T), send(topic=T), set_event(key=K), "
            "recover(enqueue), resume_workflow, fork, each :before/:after (SystemDatabase writes, read from dbos 3.4.0); effect(task):after"
        ),
        unsupported={
            BRANCHES: "no parallel-branch workload for DBOS yet (steps of one workflow run one after another here)",
            "shared_state": "no shared-state agent workloads for DBOS yet",
            "first_checkpoint": "DBOS records a workflow before it accepts it: start_workflow commits its first row (PENDING, "
            "with its inputs: SystemDatabase.init_workflow, from _init_workflow in dbos/_core.py) before it runs the workflow or "
            "returns a handle, and DBOSClient.enqueue returns only after its ENQUEUED row committed (dbos/_client.py): there is "
            "no accepted-but-unrecorded window; the one point before it, status(PENDING):before, is in every sweep (vacuous: "
            "nothing accepted, nothing fired)",
            "FCL": "needs first_checkpoint",
            "invalid_state": "DBOS keeps no typed state to break: a step's output is stored as the step returned it (serialized), "
            "and recovery hands it back as recorded; DBOS validates only workflow inputs (pydantic, its validation extra), which "
            "these workloads do not declare",
            "failing_effect": "not measured yet: no DBOS workload with a step retry (retries_allowed) around an effect",
            "fork:checkpoint": "DBOS addresses a past step only through its explicit fork, DBOS.fork_workflow(id, start_step): use fork_via: explicit",
            "durability": "every DBOS write is a committed transaction; there is no durability mode to vary",
        },
        reads=_OWN_APP_READS,
        packages=("dbos", "pydantic_ai"),
        trial_s=2.0,
        # AA's reasons name the call a recovery of each resume form makes here
        recovery_calls={
            "none": "DBOS.launch() recovery",
            "input": "start_workflow with the same id",
            "command": "DBOS.launch() recovery, continuing the workflow",
        },
        import_name="dbos",
        default_version="3.4.0",
        pins=("dbos=={version}", "pydantic-ai-slim[dbos]==2.68.0"),
        preflight="chaos.targets.dbos_preflight",
    ),
}


def get_target(framework: str) -> TargetInfo:
    try:
        return TARGETS[framework]
    except KeyError:
        known = ", ".join(sorted(TARGETS))
        from chaos.racer.errors import TargetError

        raise TargetError(f"unknown framework {framework!r}", hint=f"known frameworks: {known}") from None


def register_target(info: TargetInfo) -> Callable[[], None]:
    """Add ``info`` to ``TARGETS`` (replacing one of the same framework) and return the undo.

    An adapter is declared by its ``TargetInfo`` alone: everything chaos does per framework (scenario
    checks, blame, shard estimates, AA's reasons, compare_results, CI's environments) reads it from
    ``TARGETS``, so a team's adapter, or a test's made-up one, registers here and nothing else."""
    before = TARGETS.get(info.framework)
    TARGETS[info.framework] = info

    def undo() -> None:
        if before is None:
            TARGETS.pop(info.framework, None)
        else:
            TARGETS[info.framework] = before

    return undo


def ci_specs() -> list[str]:
    """The environments CI builds (.ci/envs.sh): ``framework`` or ``framework:version``, one per
    entry of each adapter's ``ci_versions``."""
    return [f"{t.framework}:{v}" if v else t.framework for t in TARGETS.values() for v in t.ci_versions]


from chaos.targets.adk import INFO as _adk  # noqa: E402  (one line per framework package)

TARGETS[_adk.framework] = _adk
