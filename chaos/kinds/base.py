"""The ``Kind`` interface: what one scenario kind declares and does, so a kind is one module.

A kind module (``chaos/kinds/<kind>.py``) defines one class that subclasses ``Kind`` and one
instance of it, ``KIND``; the registry (``chaos.kinds``) maps the kind's name to that module. The
class says:

* ``name``, ``about`` (one line), ``properties`` (the property codes its checker judges, in the
  order its verdicts come) and ``fields`` (the scenario fields it reads beyond the common ones);
* ``Options``: its options model (a ``KindOptions``), the scenario fields only it (or its engine,
  the sweep) reads, with their types, defaults and rules; the scenario model validates each of
  them through it, and the kind reads them typed (``ForkOptions.of(cell.scenario).fork_via``);
* ``clean_run``: False when its workloads raise by design (``invalid_state``), so the preflight
  does not refuse a user's workload for the error the kind measures;
* ``deploys``: True when its trials also build the workload at version v2 (``Scenario.deployed``),
  so the preflight builds and runs v2 too before any trial;
* ``section`` and ``title``: where report.md puts its cells (``saturation`` table, one ``sweep``
  table per cell, or the ``contract`` table) and what it calls them;
* ``validate(scenario)``: rules a scenario of this kind must follow; raise ``ValueError`` (the
  scenario loader turns it into a ``ScenarioError`` naming file, line and field);
* ``run_cell(ctx, cell, skip)``: the cell's trials as ``TrialRecord``s, yielded one by one so the
  orchestrator journals each as it ends (trials in ``skip`` are journaled already);
* ``checks``: its ``Checker`` s, one per property it can judge: the ``Property`` (code, name, the
  contract's anchor) and ``judge(cell, facts)``, that property's ``Verdict``; the registry gathers
  the properties' names from them (``chaos.kinds.property_names``);
* ``summary(cell, records)``: the cell's numbers (a ``CellResult`` without verdicts) and what its
  checkers judge (``facts``: the records as a list, or what a one-pass kind folds them into);
* ``checkers(cell, facts)``: the checkers this cell is judged by, in the order its verdicts come
  (default: ``checks``; a sweep adds a fault's properties, a stray resume AR by its form).
  Checkers are pure functions of the records (``chaos analyze`` re-scores a stored journal with
  them); ``chaos.kinds.checking.compose`` calls each in isolation (Jepsen's ``compose``,
  check-safe per property): a judge that raises costs its own property (``unknown`` with the
  error), never the others.

Optional capabilities are small protocols a kind class also implements: ``Explains`` (plain words
for a violating trial, shown in report.html).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Generic, Literal, Protocol, TypeVar, cast, runtime_checkable

from pydantic import AfterValidator, BaseModel, ConfigDict, TypeAdapter

if TYPE_CHECKING:
    from chaos.racer.protocol import ActionSpec
    from chaos.records import CellResult, TrialRecord, Verdict
    from chaos.running.trial import RunContext
    from chaos.scenario.model import Cell, Scenario
    from chaos.targets import HostsCells

Section = Literal["saturation", "sweep", "contract"]


@dataclass(frozen=True)
class Property:
    """A property a checker judges: its code (``EO``), its name (shown beside the code in every
    report) and where docs/contract.md defines it (``#<anchor>``)."""

    code: str
    name: str
    anchor: str = ""  # docs/contract.md#<anchor> (tests/kinds/test_registry_kinds.py checks the section exists)


F = TypeVar("F")


@dataclass(frozen=True)
class Checker(Generic[F]):
    """One property's checker: ``judge(cell, facts)`` is that property's ``Verdict`` (``facts``:
    what the kind's ``summary`` gathered from the records, by default the records as a list)."""

    property: Property
    judge: Callable[[Cell, F], Verdict]


class KindOptions(BaseModel):
    """A kind's options: the scenario fields only it (or its engine) reads, declared where the kind
    is. Each field's name is its YAML key, flat in the scenario file as ever; its type, default,
    description and constraints are the rule, and a rule of one value is an ``AfterValidator`` in
    its annotation (it runs after the check that the scenario's kind reads the field). The scenario
    model (``chaos.scenario.model``) validates each key through ``validate_key`` and the rules
    between the options and the rest of the scenario through ``check``; a ``ValueError`` becomes a
    ``ScenarioError`` naming the file, line and field. A kind reads its options typed with ``of``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # keys a scenario of another kind may not set (it would silently ignore them)
    refused_elsewhere: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def of(cls: type[OptionsT], scenario: Scenario) -> OptionsT:
        """The scenario's values of these options (already validated when it loaded)."""
        return cast(OptionsT, cls.model_construct(**{key: getattr(scenario, key) for key in cls.model_fields}))

    @classmethod
    def default_of(cls, key: str) -> Any:
        return cls.model_fields[key].get_default(call_default_factory=True)

    @classmethod
    def validate_key(cls, key: str, value: Any, reads: Callable[[Any], None] = lambda v: None) -> Any:
        """``value`` of ``key`` validated: its type and constraints, then ``reads(value)`` (which
        raises when the scenario's kind would ignore it), then the key's own rules."""
        typed, rules = _adapters(cls, key)
        value = typed.validate_python(value)
        reads(value)
        for rule in rules:
            value = rule(value)
        return value

    def check(self, scenario: Scenario) -> None:
        """Rules between these options and the rest of ``scenario``: raise ``ValueError``. Run on
        every scenario, whatever its kind (an option set on a kind that has none of it is refused here)."""
        return None


OptionsT = TypeVar("OptionsT", bound=KindOptions)


class TargetOptions(KindOptions):
    """A framework's own options (``chaos.targets.hooks.OwnsOptions``): fields of the scenario's
    ``target:`` only its adapter reads (LangGraph's ``durability``, ``saver``, ``guard``), flat there as
    ever, declared in the framework's package. The scenario model validates each key through the model
    that declares it (whatever the framework: one it does not read is refused at load by the
    framework's ``unread_fields``) and fills in the defaults; ``implied`` is where a default follows
    from the rest of the scenario. Read typed with ``of``, as a kind's options are."""

    @classmethod
    def of(cls: type[TargetOptionsT], scenario: Scenario) -> TargetOptionsT:
        """The scenario's values of these options (already validated when it loaded)."""
        return cast(TargetOptionsT, cls.model_construct(**{key: scenario.target.option(key) for key in cls.model_fields}))

    @classmethod
    def before(cls, target: dict[str, Any]) -> dict[str, Any]:
        """The target as written, completed before it is validated (a field these options imply). Default: as written."""
        return target

    @classmethod
    def implied(cls, scenario: Scenario, left_out: set[str]) -> dict[str, Any]:
        """The values of the options in ``left_out`` (not written) that follow from the rest of
        ``scenario``, rather than the model's defaults. Default: none."""
        return {}


TargetOptionsT = TypeVar("TargetOptionsT", bound=TargetOptions)


class NoOptions(KindOptions):
    """A kind that reads no field of its own."""


@functools.cache
def _adapters(model: type[KindOptions], key: str) -> tuple[TypeAdapter[Any], list[Callable[[Any], Any]]]:
    """The validator of ``key``'s type and constraints, and its rules (its ``AfterValidator`` s) apart."""
    f = model.model_fields[key]
    # a kind's rules take the value alone (pydantic's form with a ValidationInfo is not used here)
    rules = [cast("Callable[[Any], Any]", m.func) for m in f.metadata if isinstance(m, AfterValidator)]
    kept = [m for m in f.metadata if not isinstance(m, AfterValidator)]
    annotation: Any = f.annotation
    typed: TypeAdapter[Any] = TypeAdapter(Annotated[(annotation, *kept)] if kept else annotation)
    return typed, rules


@runtime_checkable
class Kind(Protocol):
    """One scenario kind. Subclass it (for the default ``validate``) and export ``KIND = YourKind()``."""

    name: ClassVar[str]
    about: ClassVar[str]
    properties: ClassVar[tuple[str, ...]]
    fields: ClassVar[tuple[str, ...]] = ()
    clean_run: ClassVar[bool] = True  # its workload's uninterrupted run ends without an error (the preflight checks it)
    deploys: ClassVar[bool] = False  # its racers also build v2 of the workload (the preflight checks v2 too)
    counts_gated: ClassVar[bool] = False  # its verdict counts fires of the gated effect (the preflight checks the answer fires it)
    # its trials SIGKILL the system under test: a framework that hosts a service per cell
    # (``chaos.targets.hooks.HostsCells``) runs it inside each racer then (the victim), not once per cell
    kills_racers: ClassVar[bool] = False
    # its trials' outcome depends on their racers' timing (a race's window): nothing chaos runs in
    # the background (a nightly's next preflight, ``chaos.running.preflight.Ahead``) runs beside its cells
    keeps_windows: ClassVar[bool] = False
    section: ClassVar[Section]
    title: ClassVar[str]
    Options: ClassVar[type[KindOptions]] = NoOptions
    checks: ClassVar[tuple[Checker[Any], ...]] = ()  # every checker it has (the registry gathers their properties)

    def validate(self, scenario: Scenario) -> None:
        """Raise ``ValueError`` when ``scenario`` cannot be run as this kind. Default: no extra rule."""
        return None

    def run_cell(self, ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
        """The cell's trials, one ``TrialRecord`` at a time (``ctx.wants(trial_id, skip)`` filters)."""
        ...

    def summary(self, cell: Cell, records: Iterable[TrialRecord]) -> tuple[CellResult, Any]:
        """The cell's numbers (a ``CellResult`` without verdicts) and the facts its checkers judge
        (the records as a list, or what a kind that keeps no record folds them into)."""
        ...

    def checkers(self, cell: Cell, facts: Any) -> tuple[Checker[Any], ...]:
        """The checkers this cell is judged by, in the order its verdicts come. Default: ``checks``."""
        return self.checks


@runtime_checkable
class Explains(Protocol):
    """A kind that can say in words why one valid trial violated its contract."""

    def explain(self, rec: TrialRecord) -> list[str]:
        """One sentence per violation in ``rec`` (empty when it violated nothing)."""
        ...


def needs_command_resume(kind: str, scenario: Scenario) -> None:
    """The rule of kinds that answer a pending interrupt: the scenario must say with what."""
    if not scenario.resume.startswith("command:"):
        raise ValueError(f"a {kind} resumes a pending interrupt: set resume to 'command:<value>'")


def approves_breakpoints(scenario: Scenario) -> bool:
    """Does the scenario's framework pause at static breakpoints (``BREAKPOINTS``), approved by ``invoke(None)``?"""
    from chaos.targets import BREAKPOINTS, get_target

    return BREAKPOINTS in get_target(scenario.target.framework).features


def needs_approval_resume(kind: str, scenario: Scenario) -> None:
    """The rule of kinds that approve a pause (race, stray_resume): ``command:<value>`` answers an
    ``interrupt()`` (and approves a static breakpoint); ``app:<package.module:recover>`` is the
    team's own driver answering it (with the plan's first answer, ``answers:``, when there is one);
    where the framework has static breakpoints, ``none`` is their approval (``invoke(None)``),
    which answers no ``interrupt()``."""
    if scenario.resume.startswith("command:") or scenario.resume_form == "app":
        return
    if scenario.resume == "none" and "resume" in scenario.model_fields_set and approves_breakpoints(scenario):
        return  # said, not defaulted: the approval of a static breakpoint
    also = " (or 'none': the invoke(None) that approves a static breakpoint)" if approves_breakpoints(scenario) else ""
    raise ValueError(
        f"a {kind} resumes a pending interrupt: set resume to 'command:<value>'{also}, or 'app:<package.module:recover>' (your own driver)"
    )


def approval_action(scenario: Scenario, value: object) -> ActionSpec:
    """One approval of the pending pause, as a race's racer or a stray resume sends it: ``value``
    as a command; the team's own driver (``resume: app:``) answering that pause with ``value`` (its
    plan is that one answer: the driver stops at the next pause); or, with ``resume: none``, the
    ``invoke(None)`` that approves a static breakpoint."""
    if scenario.resume == "none":
        return {"op": "resume", "form": "none"}
    if scenario.resume_form == "app":
        plan = [value] if isinstance(scenario.answers, list) else []  # no plan: the driver answers by itself
        return {"op": "resume", "form": "app", "recover": scenario.recover_ref or "", "plan": plan}
    return {"op": "resume", "form": "command", "value": value}


def runner_for(kind: str, framework: str | None = None) -> Callable[[RunContext, Cell, set[str]], Iterator[TrialRecord]]:
    """``run_cell`` of ``kind``, or a runner of no trial when ``framework``'s adapter does not
    support the kind (its cell's analysis then reports every property ``unknown`` with the reason).
    Where the framework hosts a service per cell (``chaos.targets.hooks.HostsCells``: a server its
    racers are clients of), the runner runs the cell's trials with that service up, unless the
    kind kills its racers (``Kind.kills_racers``: each racer then runs the service, its victim).

    Here, beside the interface, and not in the registry (``chaos.kinds``): the registry, which the
    scenario model reads, then names no type of the run path, even for mypy (issue 23's import loop
    kinds -> running.trial -> scenario.model -> kinds)."""
    from chaos.kinds import get_kind
    from chaos.targets import HostsCells, get_target, hooks_of

    if framework is not None and get_target(framework).supports(kind) is not None:
        return _nothing
    k = get_kind(kind)
    hosts = hooks_of(framework) if framework is not None else None
    if isinstance(hosts, HostsCells) and not k.kills_racers:
        return _hosted(hosts, k.run_cell)
    return k.run_cell


def _hosted(
    hosts: HostsCells, run_cell: Callable[[RunContext, Cell, set[str]], Iterator[TrialRecord]]
) -> Callable[[RunContext, Cell, set[str]], Iterator[TrialRecord]]:
    """``run_cell`` with the framework's service running for the cell; each racer gets its ``url``."""

    def run(ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
        service = hosts.host(cell, ctx.host_context(cell))
        if ctx.services is not None:  # the run's: an idle one that is the same (SharedService) serves this cell too
            service = ctx.services.serve(service)
            try:
                yield from run_cell(dataclasses.replace(ctx, service_url=service.url), cell, skip)
            finally:
                ctx.services.done(service)
            return
        try:
            service.start()
            yield from run_cell(dataclasses.replace(ctx, service_url=service.url), cell, skip)
        finally:
            service.stop()

    return run


def _nothing(ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
    return iter(())
