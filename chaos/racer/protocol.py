"""The racer protocol as types: what the orchestrator sends a racer, and what a racer sends back.

Why: a racer is a separate process, often in another interpreter, container or host, so the
protocol is plain JSON. These ``TypedDict`` shapes name every key that either side writes or
reads, with its meaning, so an adapter author, a kind author and a type checker read the same
contract (``chaos.targets.base`` is the adapter's side of it). They are standard library only:
the racer side imports this module, and it ships to containers and hosts.

What it promises: the shapes are descriptions of JSON that already exists, not a new format. A
key marked ``NotRequired`` may be absent; ``total=False`` records (an outcome, an inspect result)
are open: an adapter may add keys the kinds do not read (framework detail for the reports), and
readers use ``.get`` for those.

* ``RacerSpec``: the racer's spec file (``chaos.running.trial.TrialRun.spec``).
* ``Action``: one step of the spec's ``actions`` (``op`` run, resume, fork, checkpoints, tree, inspect, intent, message, join).
* ``ActionOutcome``: what ``Session.perform`` returns, plus what the racer adds.
* ``InspectResult``: the durable state of the thread as the framework reports it (``Session.inspect``).
* ``RacerResult``: the result file a racer writes (``result-<racer_id>.json``).
* ``ErrorInfo``: how an exception travels as data.
"""

from typing import Any, Literal, NotRequired, TypedDict

Op = Literal["run", "resume", "fork", "checkpoints", "tree", "inspect", "intent", "message", "join"]
OPS: tuple[Op, ...] = ("run", "resume", "fork", "checkpoints", "tree", "inspect", "intent", "message", "join")

OutcomeStatus = Literal["done", "interrupted", "error", "unsupported", "nothing_saved", "refused"]
"""``done``: the call returned; ``interrupted``: it stopped at a pending interrupt (human input);
``error``: the framework raised (``error`` says how); ``unsupported``: the adapter raised
``Unsupported`` (the framework cannot express the action; the kind turns it into ``unknown``);
``nothing_saved``: a resume found no record of the run in a framework that keeps none of its own
(the application saves, and had not yet): there was nothing to continue, which is neither the
framework's failure nor chaos's (``NothingSaved``; a sweep's point is then vacuous);
``refused``: a guard (``target.guard``) turned the call away loudly before any effect fired (its
error names the guard in ``refused_by``): an outcome, not an error."""

ResultStatus = Literal["ok", "harness_error"]
"""``ok``: the racer performed its actions (each action's own status is in its outcome);
``harness_error``: the racer itself could not run (e.g. the workload raised while being built)."""

ResumeForm = Literal["none", "input", "command", "app"]
ForkVia = Literal["checkpoint", "explicit"]


class FrameInfo(TypedDict):
    """One frame of an exception's traceback: the module (``__name__`` of its globals), file, line, function."""

    module: str
    file: str
    line: int
    func: str


class ErrorInfo(TypedDict):
    """A JSON-safe exception (``chaos.targets.base.error_of``): class name, its module, message
    (at most 2000 characters) and ``file:line`` of the innermost frame (``""`` if unknown).

    What the orchestrator blames it by (``chaos.running.blame``): ``frames`` (innermost last),
    ``chain`` (``module.Type`` of the exception and those it was raised from or during),
    ``errno`` (of an ``OSError`` in the chain) and ``traceback`` (formatted, for the reports).
    Adapters may add detail (CrewAI's persistence errors add ``boundary`` and ``sqlite_version``)."""

    type: str
    module: str
    message: str
    where: str
    frames: NotRequired[list[FrameInfo]]
    chain: NotRequired[list[str]]
    errno: NotRequired[int]
    traceback: NotRequired[str]
    refused_by: NotRequired[str]  # the guard (target.guard) whose loud refusal this is


BACKGROUND_SUFFIX = ".background.json"
# A racer that could not write its result file for lack of space (ENOSPC, EDQUOT) exits with this
# code, since it has no other way left to say so: the orchestrator blames the environment (a full
# disk), never chaos (EX_TEMPFAIL of sysexits.h: try again once there is room).
NO_SPACE_EXIT = 75
"""A racer's ``background_errors``, also written as they happen to its ``result_path`` + this suffix."""


def background_path(result_path: str) -> str:
    """Where a racer writes its background threads' errors as they happen (beside its result)."""
    return result_path + BACKGROUND_SUFFIX


class BackgroundError(ErrorInfo):
    """An exception that ended a thread of the racer (``threading.excepthook``): the error and ``thread``, its name."""

    thread: str


class Action(TypedDict, total=False):
    """One action of a racer (``op`` defaults to ``run``).

    * ``run``: start the workload with its input.
    * ``resume``: ``form`` ``none`` continues from the last checkpoint, ``input`` runs again with
      the input, ``command`` answers the pending interrupt with ``value``. ``answers`` (a list, or
      ``"workload"`` for the workload's ``answer(interrupt)``) is an answer plan: answer every
      pending interrupt in turn until the run completes or the plan is used up (LangGraph: the
      n-th value answers the n-th interrupt the thread consumes, counted from its durable state).
      ``app`` runs the team's own recovery: ``recover`` names ``package.module:recover``, called
      as ``recover(ctx, thread)`` (LangGraph: ``chaos.workloads.langgraph.Thread``; pydantic-graph:
      ``chaos.workloads.pydantic_graph.PGRun``; CrewAI: ``chaos.workloads.crewai.CrewRun``), with
      the scenario's answer plan in ``plan``; pydantic-graph and CrewAI also read ``answers``. ``interrupt``
      (``"first"`` or an id) addresses the answer to one interrupt by its id, as a client
      replaying its request would (``first``: the thread's first interrupt); an adapter whose
      framework has no interrupt ids raises ``Unsupported``.
    * ``fork``: resume from a *past* checkpoint of the same thread with ``value``. ``checkpoint``
      ``"interrupt"`` names the checkpoint at which the thread's first interrupt was pending
      (before any resume), else a checkpoint id. ``via: checkpoint`` uses the framework's plain
      addressing (LangGraph: ``checkpoint_id`` in the config + ``Command(resume=v)``); ``via:
      explicit`` its explicit fork operation (LangGraph: ``update_state`` at that checkpoint, then
      resume the new branch). The outcome adds ``forked_from`` and ``via``.
    * ``checkpoints``: outcome ``done`` with ``checkpoints`` (``CheckpointInfo``, newest first).
    * ``tree``: outcome ``done`` with ``tree`` (``TreeCheckpoint``: every checkpoint of the thread as
      the store lists it, with its parent), and nothing else read: what ``chaos.kinds.chain`` judges
      LC by. Only adapters that judge LC answer it; others raise ``Unsupported``.
    * ``inspect``: handled by the racer itself (calls ``Session.inspect``); outcome ``done`` with
      ``inspect``. Lets one process look at the thread between actions.
    * ``intent``: what the framework's API can say about retry vs fork, read from the API itself;
      outcome ``done`` with ``intent`` (``ForkIntent``).
    * ``message``: send ``value`` into the thread as a new user message while its runs may still be
      in flight (a second message: "double texting"), without waiting for the run it starts; where
      the workload holds its run until a file exists, ``release`` names it. Outcome ``done`` with
      ``message`` (``MessageSent``: the run it started or the refusal, and the thread's runs as they
      stood just before). An adapter whose framework has no runs in flight raises ``Unsupported``.
    * ``join``: wait until each run of the thread named in ``runs`` has ended; outcome ``done`` with
      ``runs`` (run id -> its final status, ``deleted`` when it no longer exists) and ``values``.

    ``if``: perform the action only if the previous outcome had that status (e.g. answer an
    interrupt only if the run stopped at one). ``keep_going``: later actions run even if this one
    ends in ``error`` (by default the racer stops at the first ``error`` / ``unsupported``).
    """

    op: Op
    form: ResumeForm
    value: object
    answers: list[object] | Literal["workload", "breakpoints"]  # breakpoints: approve static breakpoints only
    recover: str  # form ``app``: the team's ``package.module:recover``, called as ``recover(ctx, thread)``
    # form ``app``: the scenario's answer plan, handed to the team's recovery (``answers``); with
    # ``by_id``: the plan each pending interrupt's answer is read from, at its place (LangGraph)
    plan: list[object]
    interrupt: str
    # several interrupts pending at once (parallel tool calls): the answer to each, by its id, in one
    # call (LangGraph: ``Command(resume={id: value, ...})``), as a client that read the pause sends it
    answer_map: dict[str, object]
    # answer whatever the thread waits at when the action runs (a race's or a stray's approach to a
    # later pause): several interrupts pending at once each get ``value`` by its id (an
    # ``answer_map`` read then), one gets the plain value, as a client that read the pause sends it
    by_id: bool
    checkpoint: str
    via: ForkVia
    keep_going: bool
    label: str  # the name a kind reads this action's outcome by (not read by the racer)
    release: str  # ``message``: the file the run waits for before it goes on (the workload's hold)
    runs: list[str]  # ``join``: the run ids to wait for
    # perform only if the racer's ``inspect_before`` found something durable (a checkpoint): a human
    # cannot answer an interrupt that was never durably asked; skipped otherwise (no outcome)
    only_if_durable: bool
    # a recovery's answer (form ``command``, the sweep's resume): sent only to a pause the thread
    # durably waits at when it is sent; with none pending the adapter continues the thread first
    # (LangGraph: ``invoke(None)``) and answers the pause it stops at. A racer or a stray answer
    # sends without it: it is the answer a client sends on purpose, pending or not
    asked_only: bool
    # perform the action again while it ends ``interrupted``, at most this many times in all, as one
    # action (one outcome: the last call's, with every call's answers and approvals): the sweep's
    # answer with one command value, which answers every pause the run stops at with it, as the
    # team's own driver (``while result.interruptions: approve``) does
    repeat: int


# ``if`` is a Python keyword: the functional form is the only way to declare it.
_ActionIf = TypedDict("_ActionIf", {"if": OutcomeStatus}, total=False)


class ActionSpec(Action, _ActionIf, total=False):
    """An ``Action`` as it sits in a spec, with its optional ``if`` condition."""


class MessageSent(TypedDict, total=False):
    """What a ``message`` did: the run it started (``run_id``) or the framework's refusal (``error``),
    ``create`` the status of the request (HTTP: 200, 409, ...), and ``before``: the thread's runs
    (run id -> status) just before it was sent."""

    run_id: str
    create: int
    error: str
    before: dict[str, str]


class CheckpointInfo(TypedDict, total=False):
    """One checkpoint of the thread (``checkpoints`` op), newest first."""

    id: str | None
    step: int | None
    source: str | None
    next: list[str]
    interrupts: int


class TreeCheckpoint(TypedDict, total=False):
    """One checkpoint of the thread's whole tree (``tree`` op, and ``checkpoints``' ``tree``: every
    namespace, no claiming read), with its parent: what ``chaos.kinds.chain`` judges LC by."""

    id: str | None
    ns: str
    parent: str | None
    step: int | None
    source: str | None


class ForkIntent(TypedDict):
    """What the framework's API says about retry vs fork (``intent`` op): ``discriminator`` names
    the parameter that tells a retry from a fork (``None`` if there is none), ``surface`` the
    signatures it was read from, ``note`` a sentence for the report."""

    discriminator: str | None
    surface: dict[str, object]
    note: str


class StoreSize(TypedDict, total=False):
    """What the store holds for the thread (a framework package's ``store_size.measure``; read by
    ``chaos.kinds.growth``): each root checkpoint's serialised size (oldest first) and their count,
    the thread's and the whole store's bytes, per table, and where they were read (``source``:
    ``sqlite`` / ``postgres``, with its ``schema``). ``error`` alone when the measurement failed."""

    checkpoint_bytes: list[int]
    checkpoints: int
    source: str
    store_bytes: int
    thread_bytes: int
    tables: dict[str, int]
    schema: str
    error: str


class InspectResult(TypedDict, total=False):
    """The durable state of the thread as the framework reports it (``Session.inspect``).

    ``completed_tasks`` is the durable frontier of the root graph (tasks recorded complete);
    ``completed_by_namespace`` the frontier per (sub)graph namespace, task ids left out (``""``:
    the root, ``response_agent``: a subgraph run by the root's ``response_agent`` node), to compare
    with the ``node`` and ``namespace`` of effect rows; ``durable_checkpoints`` counts every durable
    checkpoint of the thread, subgraphs' included (``checkpoints``: the root's); ``values`` the durable
    state values (JSON-safe); ``checkpoint`` the head checkpoint id. When the framework cannot read
    its own thread, ``error`` says how it failed and ``checkpoints`` is ``None``; an adapter should
    then still report what the store holds, read below the framework: ``values`` with
    ``values_source: "saver"`` and ``pending_writes`` (``[[channel, value], ...]``), so
    a checker can tell persisted from refused (``raw_error``: that read failed too).
    File-backed adapters add ``ended`` (the workload finished) and framework detail
    (``saved_methods``, ``snapshots``, ``persistence_errors``).
    """

    checkpoints: int | None
    head_step: int | None
    next: list[str]
    completed_tasks: list[str]
    completed_by_namespace: dict[str, list[str]]
    completed_task_ids: list[str]  # ids of every completed task, subgraphs' included (LangGraph)
    durable_checkpoints: int
    pending_interrupts: int
    breakpoint: dict[str, Any] | None  # LangGraph: the static breakpoint the thread waits at ({when, nodes})
    values: object
    checkpoint: str | None
    error: ErrorInfo | None
    values_source: Literal["saver"]
    pending_writes: list[list[object]]
    store_size: StoreSize  # when the spec asks (``measure_store``) and the framework measures it (feature "store_size")
    raw_error: ErrorInfo
    ended: bool
    persistence_errors: list[dict[str, object]]
    saved_methods: list[str]
    snapshots: list[dict[str, object]]
    # behind a server that owns the threads (langgraph_server): did the thread survive (LS,
    # chaos.kinds.lost_state), its server id when kept or lost, and the server's thread status
    thread_found: bool
    server_thread: str
    lost_thread: str
    thread_status: str | None
    # a durable-execution engine's workflow (dbos): its id and status in the engine's system tables
    workflow_id: str
    workflow_status: str | None


class ActionOutcome(TypedDict, total=False):
    """What one action did (``chaos.targets.base.outcome`` builds the first six keys).

    ``observed``: the values the workload's nodes saw DURING THIS CALL (resume values), by task;
    ``values``: the thread's state values after the call, if readable; ``checkpoint``: the head
    checkpoint after the call, if the framework has ids; ``interrupts`` / ``interrupt_ids``: the
    pending interrupts after the call and their ids (where the framework has ids).
    The racer adds ``fired`` (the effect keys this action fired) and ``action`` (the action itself).
    """

    status: OutcomeStatus
    error: ErrorInfo | None
    interrupts: list[object]
    observed: dict[str, object]
    values: object
    checkpoint: str | None
    interrupt_ids: list[str | None]
    facts: list[dict[str, object]]  # ctx.observe(name, value) during this call: name, value, node, namespace, ...
    answered: list[list[object]]  # an answer plan's answers: [[interrupt_id, value], ...]
    recovered_by: str  # form ``app``: the recovery that ran
    addressed: str  # the interrupt id a resume with ``interrupt`` was addressed to
    breakpoint: dict[str, object]  # LangGraph: the static breakpoint the thread stopped at ({when, nodes})
    approvals: list[dict[str, Any]]  # approvals this call gave, in order: effects fired before each, t_mono_ns
    # per op
    checkpoints: list[CheckpointInfo]
    tree: list[TreeCheckpoint]  # ``tree`` op (and ``checkpoints``), where the adapter lists every namespace with parents
    intent: ForkIntent
    inspect: InspectResult
    forked_from: str
    via: ForkVia
    fork_id: str  # DBOS: the workflow id a fork started
    fork_config: dict[str, object]
    # adapter detail
    result: str
    persistence_errors: list[dict[str, object]]
    # the state keys the framework left out of the saved document it restored from (a save that
    # skips what it cannot serialise): a restored run that fails reading one failed on the framework's drop
    dropped_state: list[str]
    message: MessageSent  # ``message`` op
    runs: dict[str, str]  # ``join`` op: run id -> final status
    http: dict[str, object]  # langgraph_server: the client's HTTP outcome (strategy, create status, run id, run status)
    lost_thread: str  # langgraph_server: the recovery found its thread gone and re-created it (its server id)
    # dbos: the resuming process runs another application version than the workflow recorded, so DBOS
    # leaves the workflow for an executor of that version (its recorded version; this process's)
    left_for_version: str
    app_version: str
    # dbos: the workflow neither ended nor waited within ``waited_s`` (its status then), and the
    # database connection failures the framework logged and retried meanwhile (an outage chaos did not plan: blame)
    stalled: bool
    workflow_status: str | None
    waited_s: float
    connection_errors: list[str]
    # added by the racer
    fired: list[str]
    action: ActionSpec


class Fired(TypedDict):
    """One effect a racer fired: its ledger sequence number and key (``task`` or ``task:value``)."""

    seq: int
    effect_key: str


class BarrierSpec(TypedDict):
    """Where the trial's barrier files are, which boundaries stop the racer (``armed``), and
    whether arrivals are echoed on stdout (``echo``: racers on other hosts). ``armed_like``: every
    boundary whose id contains one of these stops it too (``""``: all of them)."""

    dir: str
    armed: list[str]
    armed_like: NotRequired[list[str]]
    echo: NotRequired[bool]
    # occurrences already passed per boundary name: a racer that carries on a life another racer began
    # (an answer given in a fresh process: chaos.kinds.baseline) numbers its boundaries on from there
    counts: NotRequired[dict[str, int]]


class TargetSpec(TypedDict, total=False):
    """The scenario's target (``chaos.scenario.model.Target``, dumped): framework, backend, ..."""

    framework: str
    module: str  # the adapter module racers import (``TargetInfo.module``, filled by the orchestrator)
    backend: str
    version: str | None
    durability: str
    saver: str | None  # LangGraph's option: package.module:factory of a team's own saver (its custom_saver)
    guard: str | None  # LangGraph's option: a guard measured beside stock (its guards)
    requirements: list[str]  # extra pip requirements of the racers' environment


class StoreSpec(TypedDict, total=False):
    """Where the framework keeps this trial's state: a SQLite ``path``, or a Postgres ``dsn`` with
    the run's ``schema`` (``setup: False``: the orchestrator set the tables up once)."""

    path: str
    dsn: str
    schema: str
    setup: bool
    application_name: str  # the saver connection's name in pg_stat_activity (the racer's own)
    observe_dsn: str  # the same server reached directly, for an adapter's reads from outside the framework when ``dsn`` is relayed (``fault: db_restart``)


class LedgerSpec(TypedDict, total=False):
    """The effect ledger: ``kind`` ``sqlite`` with ``path``, or ``postgres`` with ``dsn`` and ``table``."""

    kind: Literal["sqlite", "postgres"]
    path: str
    dsn: str
    table: str


class EffectFaultSpec(TypedDict):
    """An injected fault on an effect: the first ``times`` firings of effect ``task`` in the trial
    (counted across its racers) raise ``chaos.workloads.EffectFault`` after their ledger row is
    committed and their ``effect(task=...):after`` barrier is passed: the work was done, the caller
    was told it failed (a provider that charges the card, then times out)."""

    task: str
    times: int


class RacerSpec(TypedDict):
    """A racer's spec file (plain JSON the orchestrator writes; ``python -m chaos.racer SPEC.json``).

    ``gate``: wait at the start gate until every racer of the trial stands there, then sleep a
    seeded ``jitter_ms`` (``seed``); ``hold``: a racer started ahead of its turn prepares what it
    can touching no store, then stops at the ``hold`` barrier; ``inspect_before`` /
    ``inspect_after``: inspect the thread before / after the actions; ``afterwards``: actions the
    racer performs in its open session after its own (and ``inspect_after``), once the orchestrator
    continues it from the ``afterwards`` barrier, where it stops (a race's read of the thread's
    checkpoint tree once every other racer has ended: ``chaos.kinds.chain``); their outcomes are
    ``RacerResult.afterwards``, never its ``outcomes``; ``distributions``: the
    distributions whose versions the racer reports; ``effect_fault``: an effect that fails after
    doing its work (``EffectFaultSpec``). Launchers may add ``host`` (the name to report)
    and ``host_name`` (the SSH host to run on).
    """

    run_id: str
    cell_id: str
    trial_id: str
    racer_id: str
    target: TargetSpec
    distributions: list[str]
    workload: str
    workload_params: dict[str, Any]
    workload_version: NotRequired[str]  # ``WorkloadContext.version``: "v1" unless a kind deploys "v2"
    thread_id: str
    store: StoreSpec
    ledger: LedgerSpec
    barrier: BarrierSpec
    gate: bool
    hold: bool
    jitter_ms: float
    seed: int
    actions: list[ActionSpec]
    inspect_before: bool
    inspect_after: bool
    result_path: str
    afterwards: NotRequired[list[ActionSpec]]
    host: NotRequired[str]
    host_name: NotRequired[str]
    effect_fault: NotRequired[EffectFaultSpec]
    measure_store: NotRequired[bool]  # inspect reports ``store_size`` (bytes per checkpoint, per thread, the store's)
    service_url: NotRequired[str]  # the cell's service the racer is a client of (``chaos.targets.hooks.HostsCells``)


class MarkEntry(TypedDict):
    """A timestamp that is no boundary (``BarrierClient.mark``): ``read`` = the thread's state was
    read. ``t_mono_ns`` is CLOCK_MONOTONIC (comparable across racers of one host), ``t_wall_ns``
    the realtime clock."""

    mark: str
    t_mono_ns: int
    t_wall_ns: int


class TraceEntry(TypedDict):
    """One boundary a racer passed, armed or not: ``name#occurrence``, its thread, when."""

    barrier: str
    thread: str
    t_mono_ns: int


class RacerResult(TypedDict, total=False):
    """The result file a racer writes atomically as it ends (none if it was killed).

    Timestamps are ``time.monotonic_ns()`` of the racer's host: ``t_start`` (process began its
    spec), ``t_ledger`` (ledger open), ``t_unheld`` (a held racer continued), ``t_ready`` (session
    open), ``t_inspected``, ``t_released`` (the start gate opened), ``t_invoke`` (first action),
    ``t_return`` (last action returned), ``t_afterwards`` (continued from the ``afterwards``
    barrier: what it passed and marked from then on is not its own actions'), ``t_end``. ``gated_task``: the task whose effect an
    interrupt gates; ``workload_meta``: the session's ``meta`` (e.g. ``{"invalid": {"field",
    "value"}}``); ``fired``: every effect this racer fired; ``trace``: every boundary it passed;
    ``background_errors``: the threads that died of an unhandled exception meanwhile.
    ``late_imports``: a forked (warm) racer's modules its server had not imported, in the order
    imported: each is read and compiled again by every racer (they write no bytecode), so a
    built-in workload's should be none of chaos's own (``PRELOAD``).
    """

    racer_id: str
    trial_id: str | None
    pid: int
    host: str | None
    status: ResultStatus
    error: ErrorInfo
    versions: dict[str, str | None]
    gated_task: str | None
    workload_meta: dict[str, object]
    inspect_before: InspectResult
    inspect_after: InspectResult
    inspect_after_ms: float
    jitter_s: float
    outcomes: list[ActionOutcome]
    afterwards: list[ActionOutcome]  # the spec's ``afterwards`` actions' outcomes
    fired: list[Fired]
    trace: list[TraceEntry]
    marks: list[MarkEntry]
    close_ms: float
    background_errors: list[BackgroundError]
    late_imports: list[str]
    t_start_mono_ns: int
    t_start_wall: float
    t_ledger_mono_ns: int
    t_unheld_mono_ns: int
    t_ready_mono_ns: int
    t_inspected_mono_ns: int
    t_released_mono_ns: int
    t_invoke_mono_ns: int
    t_return_mono_ns: int
    t_afterwards_mono_ns: int
    t_end_mono_ns: int
