"""Targets: one adapter per framework under test.

This module is the registry and the shape of a framework's light half: what each target offers
(``TargetInfo``: backends, built-in workloads, the scenario kinds and contract properties it
supports), readable by the orchestrator without importing the framework. Each framework is a
package ``chaos.targets.<framework>`` (``PACKAGES``) whose ``INFO`` is its ``TargetInfo``; its racer
half, ``TargetInfo.module`` (the package's ``session``), runs inside racers: it builds the workload
over an instrumented persistence layer and performs one action.

The racer half is a ``chaos.targets.base.RacerHalf`` (``open_session(spec, barrier, ledger) ->
Session``, ``PRELOAD``, ``PRELOAD_OPTIONAL``, ``prewarm``) where a Session has ``perform(action) ->
dict``, ``inspect() -> dict`` and ``close()``. See ``chaos.targets.base``: it is the one contract
for adapters (actions, outcome shapes, and what each scenario kind needs).

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

import importlib
import sys
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from dataclasses import dataclass, field

# the optional capabilities (the package's table of contents: shared code names them from here)
from chaos.targets.hooks import (  # noqa: F401
    CellService,
    ChecksDryRun,
    ChecksModules,
    Cut,
    CutsConnections,
    HostContext,
    HostsCells,
    ModuleCheck,
    OptionsModel,
    OwnsOptions,
    PreparesStore,
    ReapsStore,
    Refusal,
    ReproScript,
    SharedService,
    ValidatesScenario,
    WritesRepro,
)

# the feature a parallel-branch workload needs: several tasks of one step at once (LangGraph's Send
# fan-out, parallel tool calls, branches from one node). ``BRANCH_WORKLOADS``: the built-ins that need it.
BRANCHES = "branches"
BRANCH_WORKLOADS = ("parallel_send", "parallel_send_idempotent", "parallel_tools", "parallel_gate")
# static breakpoints (LangGraph's interrupt_before / interrupt_after): pauses with no answer value,
# approved by continuing the run (``invoke(None)``); a target with them approves them in baselines
# and accepts ``resume: none`` as the approval in races and stray resumes
BREAKPOINTS = "breakpoints"
# the store's size measured after a run (the inspect answers ``measure_store``): a sweep's dry run
# reports its checkpoints' sizes and judges SB against ``bounds`` (``chaos.kinds.growth``)
STORE_SIZE = "store_size"
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
    # boundaries (prefixes) of a run's first durable write (LangGraph's checkpoint ``put``): the
    # ``first_checkpoint`` kind sweeps the boundaries up to the first one's ``:before`` (none: every boundary)
    first_writes: tuple[str, ...] = ()
    # what the framework calls a pause for a human, in AA's reasons ("waited at a pending interrupt")
    pause_name: str = "pause"
    # the framework resumes a paused run by restoring what the application saved into objects built
    # afresh (a team's load_state, a context from its dict, a flow from its pending state, a graph from
    # its snapshot): the process that paused still holds live objects a restarted app has not (a replayed
    # model's place in its replies, an agent's memory), so an uninterrupted run answers each pause in a
    # fresh process, as a restarted app does (``chaos.kinds.baseline.run_uninterrupted``)
    restores: bool = False
    # the framework's top-level modules (empty: ``import_name``'s). Blame reads them: a failure raised
    # inside one is the framework's (a verdict), not the app's (an invalid trial)
    packages: tuple[str, ...] = ()
    # rough seconds one trial takes (racer start, framework import, run): sharding's estimate of a cell
    # no night has measured yet
    trial_s: float = 1.5
    # a trial mostly waits on the framework itself, not on a core (the Agent Server's queue takes a run
    # up 0.5-1 s after it was created, and a server-kill trial makes two or three): where ``--jobs`` is
    # left out, its cells run twice what the machine has at once (``Execution.jobs_for``)
    trials_wait: bool = False
    # the call a recovery of each resume form (``none``, ``input``, ``command``) makes on this framework:
    # AA's violation reasons name it (empty: ``chaos.kinds.approval``'s neutral words)
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
    # backends on a server other than the run's Postgres whose racer connections the framework finds
    # and cuts itself (``fault: db_disconnect``, through ``chaos.targets.hooks.CutsConnections``); the
    # run's Postgres backends are cut by chaos (by ``application_name``) for every framework
    cut_backends: tuple[str, ...] = ()
    # distributions a racer of this framework imports besides ``distributions`` (the drivers of its
    # backends): the offline racer image (``chaos.remote.images``) carries them, ``chaos hosts check``
    # reports their versions
    drivers: tuple[str, ...] = ()
    # a module run as ``python -m <module> SPEC`` in the racers' Python before any trial (SPEC: the
    # cell's target and workload_params as JSON): exit 0 when racers can start, else one stderr line
    # saying what to change (refused, exit 3); "" for none
    preflight: str = ""
    # the module of the framework's orchestrator half (``chaos.targets.<framework>.hooks``), imported on
    # first use: the optional capabilities of ``chaos.targets.hooks`` it implements; "" for none
    hooks: str = ""

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


# a ``guard`` value meaning "no guard": the stock arm of a guard axis (a framework's guard option, and
# the reports that pair each guarded cell with its stock twin, read it here)
NO_GUARD = ("none", "stock")


def is_no_guard(ref: str | None) -> bool:
    return ref is None or ref in NO_GUARD


# fields with forms, declared form by form (``resume:app``): the forms a scenario can take
FORMS: dict[str, tuple[str, ...]] = {
    "resume": ("none", "input", "command", "app"),
    "resume_by": ("thread", "interrupt", "answered_id", "none_after_answer", "unknown_id"),
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
    "at_pause": "race, stray_resume (the n-th pause; the pauses before it answered by the plan)",
    "fork_via": "fork (an adapter without fork reports the cell unknown with the reason)",
    "fork_value": "fork",
    "fork_fires": "fork",
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
    "target.guard": "a guard (chaos.targets.langgraph.guards) wraps a LangGraph checkpoint saver; no other adapter applies one yet",
    "answers": "its adapter answers every pause with resume's command value; an answers plan is read by the LangGraph adapter only",
    "resume:app": "its adapter has no recovery hook; resume: app:... is read by the LangGraph adapter only",
    "resume_by:interrupt": "its pauses have no interrupt ids to address an answer to; the repeat goes to the thread",
    "resume_by:none_after_answer": "a continue with no answer after a consumed one is LangGraph's invoke(None); its adapter reads it only there",
    "resume_by:unknown_id": "its pauses have no interrupt ids, so no answer can be addressed to an id that matches none",
    "resume_by:answered_id": "its pauses have no interrupt ids to address the answered one by",
}

# the fields an adapter reads for a team's own app (issue 28): answer plans and the app's own resume driver
OWN_APP_READS = ("answers", "resume:app")


# name -> the framework's package, whose ``INFO`` is its ``TargetInfo``: the one list of framework
# names, in the order users see them. A package is imported on first use (its light half is standard
# library only), so asking for one framework's facts never imports another's.
PACKAGES: dict[str, str] = {
    "langgraph": "chaos.targets.langgraph",
    "crewai": "chaos.targets.crewai",
    "llamaindex": "chaos.targets.llamaindex",
    "pydantic_graph": "chaos.targets.pydantic_graph",
    "autogen": "chaos.targets.autogen",
    "langgraph_server": "chaos.targets.langgraph_server",
    "dbos": "chaos.targets.dbos",
    "agent_framework": "chaos.targets.agent_framework",
    "openai_agents": "chaos.targets.openai_agents",
    "adk": "chaos.targets.adk",
}


# old public module names, kept for the teams that import them -> the module each now is (a framework's
# helper moved into its package). Each old module is a two-line file calling ``alias_moved``.
MOVED: dict[str, str] = {
    "chaos.targets.guards": "chaos.targets.langgraph.guards",
    "chaos.targets.langgraph_server_app": "chaos.targets.langgraph_server.app",
    "chaos.savers": "chaos.targets.langgraph.savers",
}


def alias_moved(old: str) -> None:
    """Make the module named ``old`` the module it moved to (``MOVED``): the same object under both
    names, so a class imported through either is one class."""
    sys.modules[old] = importlib.import_module(MOVED[old])


class TargetRegistry(MutableMapping[str, TargetInfo]):
    """Framework name -> ``TargetInfo``, each read from its package's ``INFO`` on first use.

    ``register_target`` (a team's adapter, or a test's made-up one) sets an entry directly; that
    entry then wins over a package of the same name until it is undone."""

    def __init__(self, packages: dict[str, str]) -> None:
        self._packages = packages
        self._infos: dict[str, TargetInfo] = {}

    def __getitem__(self, name: str) -> TargetInfo:
        info = self._infos.get(name)
        if info is None:
            if name not in self._packages:
                raise KeyError(name)
            info = importlib.import_module(self._packages[name]).INFO
            if not isinstance(info, TargetInfo) or info.framework != name:
                raise TypeError(f"{self._packages[name]}.INFO is not the TargetInfo of framework {name!r}")
            self._infos[name] = info
        return info

    def add_package(self, name: str, module: str) -> Callable[[], None]:
        """Register framework ``name`` as the package ``module`` (its ``INFO`` read on first use);
        returns the undo, which puts back what ``name`` was before."""
        before = (self._packages.get(name), self._infos.get(name))
        self._packages[name] = module
        self._infos.pop(name, None)

        def undo() -> None:
            self._packages.pop(name, None)
            self._infos.pop(name, None)
            if before[0] is not None:
                self._packages[name] = before[0]
            if before[1] is not None:
                self._infos[name] = before[1]

        return undo

    def __setitem__(self, name: str, info: TargetInfo) -> None:
        self._infos[name] = info

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._infos.pop(name, None)
        self._packages.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._packages, *self._infos]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*self._packages, *self._infos]))

    def __contains__(self, name: object) -> bool:
        return name in self._packages or name in self._infos


TARGETS = TargetRegistry(PACKAGES)


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


def racer_distributions(frameworks: Iterable[str] | None = None) -> tuple[str, ...]:
    """The distributions racers of ``frameworks`` (default: every registered one) import: each
    framework's ``distributions`` and ``drivers``, in order, each once."""
    names = TARGETS if frameworks is None else frameworks
    return tuple(dict.fromkeys(d for name in names for d in (*TARGETS[name].distributions, *TARGETS[name].drivers)))


def register_package(name: str, module: str) -> Callable[[], None]:
    """Add framework ``name`` as its package ``module`` (the shape of ``chaos.targets.<framework>``:
    ``INFO`` in its ``__init__``, the racer half in ``INFO.module``), as ``PACKAGES`` lists the shipped
    ones, and return the undo. A framework kept outside chaos, or a test's made-up one, registers so."""
    return TARGETS.add_package(name, module)


def ci_specs() -> list[str]:
    """The environments CI builds (.ci/envs.sh): ``framework`` or ``framework:version``, one per
    entry of each adapter's ``ci_versions``."""
    return [f"{t.framework}:{v}" if v else t.framework for t in TARGETS.values() for v in t.ci_versions]


# the framework that a scenario which names none runs on
DEFAULT_FRAMEWORK = "langgraph"


def hooks_of(framework: str) -> object:
    """``framework``'s orchestrator half (``TargetInfo.hooks``, imported on first use); None for a
    framework without one, or unknown. A caller asks it for a capability of ``chaos.targets.hooks``
    with ``isinstance`` (``isinstance(hooks_of(fw), ValidatesScenario)``), never by attribute name."""
    info = TARGETS.get(framework)
    return importlib.import_module(info.hooks) if info is not None and info.hooks else None
