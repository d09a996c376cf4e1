"""Scenarios: YAML files that say what to measure, loaded strictly and expanded into cells.

A scenario names a kind (one of ``chaos.kinds.kind_names()``), a target (framework, backend,
durability mode), a workload, the racers (k, placement), trials per cell, a root seed and
an optional matrix of axes. ``expand`` turns it into cells: one fully-specified scenario per point
of the matrix, each with a stable id such as ``backend=sqlite,k=4,jitter_ms=0``.

Loading is strict: unknown keys, duplicate keys, empty axes and values of the wrong type are
errors, and every error names the file, the line and the field and says what is allowed.
"""

from __future__ import annotations

import ast
import importlib.machinery
import itertools
import json
import math
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NoReturn, cast

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from chaos.inputfile import MAX_NODES
from chaos.inputfile import expanded_size as _expanded_size
from chaos.kinds import get_kind, kind_names
from chaos.racer.errors import ScenarioError
from chaos.targets import BRANCH_WORKLOADS, BRANCHES, DEFAULT_FRAMEWORK, MOVED, TARGETS, OwnsOptions, ValidatesScenario, hooks_of

if TYPE_CHECKING:
    from chaos.targets import OptionsModel

RESUME_RE = re.compile(r"^(none|input|command:.+|app:[A-Za-z_][\w.]*:[A-Za-z_][\w.]*)$", re.DOTALL)
BARE_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")

# caps: a scenario is a short file; past these, loading would take minutes and copy the excess
# into run.json and every report (each message says the limit)
MAX_FILE_BYTES = 1_000_000
MAX_CELLS = 10_000
MAX_NAME = 100
MAX_TEXT = 10_000
MAX_SEED = 2**63 - 1


def command_value(text: str) -> object:
    """The value of ``resume: command:<value>``: JSON (``command:true``, ``command:{"ok": 1}``),
    or a bare word that is not JSON (``command:approve``), which is that string. Anything else
    (malformed JSON, NaN or Infinity) is a ValueError saying so."""

    def no_constant(name: str) -> NoReturn:
        raise ValueError(f"{name} is not a finite JSON value")

    try:
        value = json.loads(text, parse_constant=no_constant)
        finite(value, "the value")  # 1e999 parses as infinity
        return value
    except ValueError as exc:
        if BARE_WORD.match(text):
            return text
        raise ValueError(
            f"the value after 'command:' must be JSON (e.g. command:true, command:{{\"ok\": 1}}) or a bare word "
            f"(letters, digits, _ . -): {exc}"
        ) from None


def finite(v: object, where: str) -> None:
    """Refuse NaN and infinities anywhere in ``v`` (JSON has no such numbers)."""
    if isinstance(v, float) and not math.isfinite(v):
        raise ValueError(f"{where}: {v} is not a finite number")
    if isinstance(v, dict):
        for k, x in v.items():
            finite(x, f"{where}.{k}")
    elif isinstance(v, list):
        for i, x in enumerate(v):
            finite(x, f"{where}[{i}]")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def target_option_models() -> list[OptionsModel]:
    """Every framework's own options model (``chaos.targets.hooks.OwnsOptions``), once each, in the registry's order."""
    return list(dict.fromkeys(h.Options for fw in TARGETS if isinstance(h := hooks_of(fw), OwnsOptions)))


def target_option_owner(key: str) -> OptionsModel | None:
    """The options model of a framework that declares the ``target:`` key ``key``; None when none does."""
    return next((m for m in target_option_models() if key in m.model_fields), None)


class TargetSpec(Strict):
    """The framework, its backend and release; beside them, flat in the file as ever, the framework's
    own options (``chaos.targets.hooks.OwnsOptions``: LangGraph's ``durability``, ``saver``, ``guard``),
    each validated by the model that declares it and filled with its default when left out; read
    typed through that model (``Options.of(scenario)``). A key no model declares is an unknown key."""

    model_config = ConfigDict(extra="allow", frozen=True)

    framework: str = DEFAULT_FRAMEWORK
    backend: str = "sqlite"
    version: str | None = Field(None, description="framework release to run racers with (default: installed)")
    requirements: list[Annotated[str, Field(max_length=MAX_NAME * 3)]] = Field(
        default_factory=list,
        max_length=32,
        description="extra pip requirements for the racers' environment (e.g. the saver's package): "
        "racers then run in a venv of the framework's pins plus these",
    )

    @field_validator("requirements")
    @classmethod
    def _package_specifiers(cls, v: list[str]) -> list[str]:
        from chaos.envs import requirement_error

        for r in v:
            why = requirement_error(r)
            if why:
                raise ValueError(f"{r!r}: {why}")
        return v

    @model_validator(mode="wrap")
    @classmethod
    def _own_options(cls, data: Any, handler: ModelWrapValidatorHandler[TargetSpec]) -> TargetSpec:
        """The shared fields through the model; each framework option through its model, the
        defaults of those left out filled in (a dump is every option, as racers read it)."""
        if not isinstance(data, dict):
            return handler(data)
        models = target_option_models()
        for model in models:
            data = model.before(data)
        given = {k: v for k, v in data.items() if k not in cls.model_fields and any(k in m.model_fields for m in models)}
        # a key neither the target nor any framework declares (extra="allow" admits the options only)
        errors: list[Any] = [
            {"type": "extra_forbidden", "loc": (k,), "input": v} for k, v in data.items() if k not in cls.model_fields and k not in given
        ]
        options: dict[str, object] = {}
        for key, value in given.items():
            model = next(m for m in models if key in m.model_fields)
            try:
                options[key] = model.validate_key(key, value)
            except ValidationError as exc:
                errors += [{**e, "loc": (key, *e["loc"])} for e in exc.errors()]
            except ValueError as exc:
                errors.append({"type": "value_error", "loc": (key,), "input": value, "ctx": {"error": exc}})
        try:
            target = handler({k: v for k, v in data.items() if k in cls.model_fields})
        except ValidationError as exc:
            errors = [*exc.errors(), *errors]
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        extra = target.__pydantic_extra__
        assert extra is not None  # extra="allow"
        extra.update({key: m.default_of(key) for m in models for key in m.model_fields if key not in given})
        extra.update(options)
        target.__pydantic_fields_set__.update(given)
        return target

    def option(self, key: str) -> Any:
        """The value of a framework's own option ``key`` (its default when left out); None when no
        framework declares it. Readers of one framework's options read them typed: ``Options.of(scenario)``."""
        return (self.__pydantic_extra__ or {}).get(key)


class HostsPlacement(Strict):
    hosts: list[str] = Field(min_length=1)
    inventory: str | None = None


Placement = Literal["local", "docker"] | HostsPlacement


class Racers(Strict):
    k: int = Field(1, ge=1, le=256, strict=True)
    placement: Placement = "local"
    start: Literal["warm", "cold"] | None = Field(
        None,
        description="how racer processes start: warm = forked from a pre-imported parent (the default; "
        "in Docker one server container, over SSH one server per host), cold = a fresh Python per racer",
    )


class _Unset:
    """A kind option the file left out: its validator puts the option model's default there."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


def _unset() -> Any:
    return UNSET


def kind_option() -> Any:
    """The field of a kind option on ``Scenario``: validated even when left out (to its default)."""
    return Field(default_factory=_unset, validate_default=True)


def _validated_option(v: Any, info: ValidationInfo) -> Any:
    """A kind option, validated through the options model that declares it; one a scenario's
    kind would silently ignore is refused when the model says so (``refused_elsewhere``)."""
    from chaos.kinds import option_owner, option_readers

    key = str(info.field_name)
    owner = option_owner(key)
    if v is UNSET:
        return owner.default_of(key)
    kind = info.data.get("kind")

    def reads(value: object) -> None:
        if key in owner.refused_elsewhere and kind in kind_names() and value != owner.default_of(key):
            if key not in get_kind(kind).Options.model_fields:
                raise ValueError(f"kind {kind} does not read it; kinds that do: {', '.join(option_readers(key)) or 'none'}")

    return owner.validate_key(key, v, reads)


# The type of a kind option's place on ``Scenario``: any value, validated by the option's model.
KindOption = Annotated[Any, AfterValidator(_validated_option)]


def kill_point_filters(v: list[str]) -> list[str]:
    """The rule of a list of kill point filters (``kill_points``, ``recovery_kill_points``)."""
    if any(len(p) > MAX_NAME * 3 for p in v):
        raise ValueError(f"a kill point filter is at most {MAX_NAME * 3} characters")
    return v


def field_default(model: type[BaseModel], name: str) -> Any:
    """The default of ``model``'s field ``name``: a kind option's is its options model's, a
    framework option's its framework's."""
    if model is Scenario and name in KIND_OPTIONS:
        from chaos.kinds import option_owner

        return option_owner(name).default_of(name)
    if model is TargetSpec and (owner := target_option_owner(name)) is not None:
        return owner.default_of(name)
    return model.model_fields[name].get_default(call_default_factory=True)


def field_annotation(model: type[BaseModel], name: str) -> Any:
    """The type of ``model``'s field ``name``: a kind option's is its options model's, a framework
    option's its framework's."""
    if model is Scenario and name in KIND_OPTIONS:
        from chaos.kinds import option_owner

        return option_owner(name).model_fields[name].annotation
    if model is TargetSpec and (owner := target_option_owner(name)) is not None:
        return owner.model_fields[name].annotation
    return model.model_fields[name].annotation


def field_names(model: type[BaseModel]) -> list[str]:
    """The keys a scenario may write in ``model``'s place: its fields, and for ``target:`` every
    framework's own options (``chaos.targets.hooks.OwnsOptions``)."""
    own = [k for m in target_option_models() for k in m.model_fields] if model is TargetSpec else []
    return [*model.model_fields, *own]


def is_user_workload(ref: str) -> bool:
    """A team's own workload (``package.module:factory``), not a built-in name."""
    return ":" in ref


class Scenario(Strict):
    _implicit_options: tuple[str, ...] = PrivateAttr(default=())
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=MAX_NAME)
    about: str = Field("", max_length=MAX_TEXT)
    kind: str = Field(json_schema_extra={"enum": list(kind_names())}, description="what to measure (chaos.kinds)")
    target: TargetSpec = Field(default_factory=TargetSpec)
    workload: str = Field(max_length=MAX_NAME * 3)
    workload_params: dict[str, object] = Field(default_factory=dict)
    racers: Racers = Racers()
    jitter_ms: float = Field(0, ge=0, le=60_000, allow_inf_nan=False)
    trials: int = Field(10, ge=1, le=100_000, strict=True)
    seed: int = Field(0, ge=0, le=MAX_SEED, strict=True)
    resume: str = Field(
        "none",
        max_length=MAX_TEXT,
        description="none | input | command:<value> (value: JSON, or a bare word) | app:<package.module:recover> (the team's own "
        "recovery, recover(ctx, thread), called in the fresh process)",
    )
    # kind options: fields only one kind (or its engine, the sweep) reads, flat in the file as ever.
    # Each is declared by its kind's options model (``chaos.kinds.base.KindOptions``: its type,
    # default, description and rules) and validated through it (``KindOption``); here only its
    # place in the file, one line (``KIND_OPTIONS`` is read from these lines).
    distinct_values: KindOption = kind_option()
    fork_via: KindOption = kind_option()
    resume_by: KindOption = kind_option()
    at_pause: KindOption = kind_option()
    answers: list[object] | Literal["workload"] | None = Field(
        None,
        description="an answer plan for several interrupts: values in order (the n-th answers the n-th interrupt), "
        "or 'workload' for the workload's answer(interrupt) callable; the first answer replaces resume's command value",
    )
    fork_value: KindOption = kind_option()
    fork_fires: KindOption = kind_option()
    kill_points: list[str] = Field(
        default_factory=list,
        description="sweeps: only kill points whose boundary name contains one of these (empty: all); a deploy between "
        "pause and resume: kill v1 at each of these instead of parking it at the interrupt",
    )
    upgrade_to: KindOption = kind_option()
    effect_fault: KindOption = kind_option()
    crash_depth: KindOption = kind_option()
    recovery_kill_points: KindOption = kind_option()
    fault: KindOption = kind_option()
    crash_states: KindOption = kind_option()
    bounds: KindOption = kind_option()
    timeout_s: float = Field(120, gt=0, le=7 * 86_400, allow_inf_nan=False, description="cap on any single wait for a racer")
    env_retries: int = Field(
        2,
        ge=0,
        le=20,
        description="repeats of a trial that an environment fault spoiled (database lost, disk full, racer killed by "
        "someone else); the spoiled attempts count as environment trials, never as valid",
    )
    matrix: dict[str, list[Any]] = Field(default_factory=dict)

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, v: str) -> str:
        if v not in kind_names():
            *first, last = (repr(k) for k in kind_names())
            raise ValueError(f"Input should be {', '.join(first)} or {last}")
        return v

    @field_validator("resume")
    @classmethod
    def _resume_form(cls, v: str) -> str:
        if not RESUME_RE.match(v):
            raise ValueError("resume must be 'none', 'input', 'command:<value>' or 'app:<package.module:recover>'")
        if v.startswith("command:"):
            command_value(v.split(":", 1)[1])  # malformed JSON is refused now, not when a racer resumes
        return v

    @field_validator("workload_params")
    @classmethod
    def _params_finite(cls, v: dict[str, object]) -> dict[str, object]:
        finite(v, "workload_params")
        return v

    @field_validator("kill_points")
    @classmethod
    def _kill_points_short(cls, v: list[str]) -> list[str]:
        return kill_point_filters(v)

    @field_validator("matrix")
    @classmethod
    def _matrix_axes(cls, m: dict[str, list[Any]]) -> dict[str, list[Any]]:
        cells = 1
        for axis, values in m.items():
            cells *= max(len(values), 1)
            if axis not in AXES:
                raise ValueError(f"unknown matrix axis {axis!r}; allowed axes: {', '.join(AXES)}")
            if len(values) == 0:
                raise ValueError(f"matrix axis {axis!r} has no values; give at least one")
            if len({repr(v) for v in values}) != len(values):
                raise ValueError(f"matrix axis {axis!r} repeats a value")
            if axis == "case":
                for v in values:
                    if not isinstance(v, dict) or not v:
                        raise ValueError("each matrix case is a mapping of axes to values, e.g. {name: exit, durability: exit}")
                    bad = [k for k in v if k != "name" and (k not in AXES or k == "case")]
                    if bad:
                        raise ValueError(
                            f"matrix case key {bad[0]!r} is not an axis; allowed: name, " + ", ".join(a for a in AXES if a != "case")
                        )
        if cells > MAX_CELLS:
            raise ValueError(f"the matrix expands to {cells} cells; the limit is {MAX_CELLS}: split it into several scenarios")
        return m

    @model_validator(mode="after")
    def _implied_options(self) -> Scenario:
        """The framework's options left out take what the rest of the scenario implies
        (``TargetOptions.implied``: LangGraph's durability of a team's own workload), else their
        defaults; each cell of a matrix works them out again (``expand``)."""
        left_out = {k for m in target_option_models() for k in m.model_fields if k not in self.target.model_fields_set}
        self._implicit_options = tuple(sorted(left_out))
        own = hooks_of(self.target.framework)
        implied = own.Options.implied(self, left_out & set(own.Options.model_fields)) if isinstance(own, OwnsOptions) else {}
        if implied:
            object.__setattr__(self, "target", self.target.model_copy(update=implied))
        return self

    @model_validator(mode="after")
    def _kind_options(self) -> Scenario:
        """The rules between each kind's options and the rest of the scenario (``KindOptions.check``),
        in the registry's order: every scenario is held to them, whatever its kind."""
        from chaos.kinds import option_models

        for model in option_models():
            model.of(self).check(self)  # raises ValueError: reported with the file and line
        return self

    @model_validator(mode="after")
    def _kind_rules(self) -> Scenario:
        get_kind(self.kind).validate(self)  # raises ValueError: reported with the file and line
        return self

    @property
    def resume_form(self) -> Literal["none", "input", "command", "app"]:
        form = self.resume.split(":", 1)[0]
        if form not in ("none", "input", "command", "app"):  # the resume validator admits no other
            raise AssertionError(f"resume form {form!r}")
        return cast(Literal["none", "input", "command", "app"], form)

    @property
    def recover_ref(self) -> str | None:
        """``package.module:recover`` of an ``app:`` resume, else None."""
        return self.resume.split(":", 1)[1] if self.resume.startswith("app:") else None

    @property
    def first_answer(self) -> object:
        """The value of the first answer: the plan's first value, else resume's command value."""
        if isinstance(self.answers, list) and self.answers:
            return self.answers[0]
        return self.resume_value

    @property
    def deployed(self) -> tuple[str, dict[str, object]]:
        """The workload and params a resume after a deploy runs (``upgrade_to``, defaulting to v1's)."""
        nxt = self.upgrade_to
        params = self.workload_params if nxt.workload_params is None else nxt.workload_params
        return nxt.workload or self.workload, dict(params)

    @property
    def deployed_target(self) -> TargetSpec:
        """The target v2's racers run (``upgrade_to.target`` over v1's): the same unless the deploy
        is also a library release."""
        nxt = self.upgrade_to.target
        if nxt is None:
            return self.target
        update: dict[str, object] = {"version": nxt.version or self.target.version}
        if nxt.requirements is not None:
            update["requirements"] = list(nxt.requirements)
        try:  # through the target's own validation (what v1's release is held to, v2's is)
            return TargetSpec.model_validate({**self.target.model_dump(), **update})
        except ValidationError as exc:
            e = exc.errors()[0]
            raise ValueError(f"upgrade_to.target.{'.'.join(map(str, e['loc']))}: {e['msg']}") from None

    @property
    def resume_value(self) -> object:
        if not self.resume.startswith("command:"):
            return None
        return command_value(self.resume.split(":", 1)[1])


# axis name -> path in the scenario mapping. ``case`` is special: each of its values is a mapping
# of other axes to values (plus an optional ``name`` for the cell id), so one file can hold cells
# that differ in several axes at once (e.g. a kind with the workload it needs).
AXES: dict[str, tuple[str, ...]] = {
    "case": (),
    "kind": ("kind",),
    "framework": ("target", "framework"),
    "backend": ("target", "backend"),
    "durability": ("target", "durability"),
    "version": ("target", "version"),
    "saver": ("target", "saver"),
    "guard": ("target", "guard"),
    "requirements": ("target", "requirements"),
    "k": ("racers", "k"),
    "placement": ("racers", "placement"),
    "start": ("racers", "start"),
    "jitter_ms": ("jitter_ms",),
    "resume": ("resume",),
    "fork_via": ("fork_via",),
    "fork_value": ("fork_value",),
    "fork_fires": ("fork_fires",),
    "resume_by": ("resume_by",),
    "at_pause": ("at_pause",),
    "kill_points": ("kill_points",),
    "effect_fault": ("effect_fault",),
    "crash_depth": ("crash_depth",),
    "recovery_kill_points": ("recovery_kill_points",),
    "fault": ("fault",),
    "crash_states": ("crash_states",),
    "bounds": ("bounds",),
    "workload": ("workload",),
    "workload_params": ("workload_params",),
    "answers": ("answers",),
    "upgrade_to": ("upgrade_to",),
    "trials": ("trials",),
}


# the kind options' keys, in file order: the fields of ``Scenario`` placed by ``kind_option()`` (the
# kind's options model declares each: ``chaos.kinds.option_owner``)
KIND_OPTIONS: tuple[str, ...] = tuple(n for n, f in Scenario.model_fields.items() if f.default_factory is _unset)


class Cell(Strict):
    """One point of the matrix: a fully specified scenario and its stable id."""

    index: int
    id: str
    axes: dict[str, object]
    scenario: Scenario


# ----------------------------------------------------------------------------------- loading


def _line_of(node: yaml.Node | None, loc: tuple) -> int | None:
    """The 1-based line of the YAML node at ``loc`` (the deepest one that exists)."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = None
            for k, v in node.value:
                if k.value == str(part):
                    nxt = v
                    line = k.start_mark.line + 1
                    break
            if nxt is None:
                break
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _check_duplicates(node: yaml.Node, path: str) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for k, v in node.value:
            key = str(k.value)
            if key in seen:
                raise ScenarioError(f"{path}:{k.start_mark.line + 1}: duplicate key {key!r} (first at line {seen[key]})")
            seen[key] = k.start_mark.line + 1
            _check_duplicates(v, path)
    elif isinstance(node, yaml.SequenceNode):
        for v in node.value:
            _check_duplicates(v, path)


def _allowed_keys(model: type[BaseModel]) -> str:
    return ", ".join(field_names(model))


def _model_at(loc: tuple) -> type[BaseModel]:
    model: type[BaseModel] = Scenario
    for part in loc:
        ann = field_annotation(model, str(part)) if str(part) in model.model_fields else None
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            model = ann
        else:
            break
    return model


def _describe(err: Mapping[str, Any]) -> str:
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith(("function-", "literal["))))
    field = ".".join(str(p) for p in loc) or "(top level)"
    if err["type"] == "extra_forbidden":
        parent = _model_at(loc[:-1])
        return f"{field}: unknown key; allowed here: {_allowed_keys(parent)}"
    if err["type"] == "missing":
        return f"{field}: required field is missing"
    msg = err["msg"].removeprefix("Value error, ")
    if not loc:
        return f"{field}: {msg}"  # a rule about the whole scenario: quoting all of it helps no one
    got = repr(err.get("input"))
    return f"{field}: {msg} (got {got if len(got) <= 200 else got[:200] + '...'})"


def parse_scenario(text: str, path: str = "<scenario>") -> Scenario:
    """Parse and validate scenario text; raises ScenarioError naming file, line and field."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        if node is not None and _expanded_size(node) > MAX_NODES:
            raise ScenarioError(
                f"{path}: the scenario expands to more than {MAX_NODES} YAML nodes (aliases?); a scenario is a short file: write values out"
            )
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else path
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScenarioError(f"{where}: not valid YAML: {problem}") from None
    except RecursionError:
        raise ScenarioError(f"{path}: nested too deeply to be a scenario") from None
    except (ValueError, OverflowError) as exc:  # a scalar YAML cannot build, e.g. an int of 5000 digits
        raise ScenarioError(f"{path}: not valid YAML: {str(exc)[:200]}") from None
    if node is None or data is None:
        raise ScenarioError(f"{path}: the file is empty; a scenario needs at least name, kind and workload")
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}:1: a scenario is a mapping of keys (name, kind, workload, ...), not {type(data).__name__}")
    _check_duplicates(node, path)
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        line = _line_of(node, tuple(first["loc"]))
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise ScenarioError(f"{path}:{line or 1}: {_describe(first)}{more}") from None
    check_semantics(scenario, path, node)
    return scenario


def read_input_file(path: str | os.PathLike, what: str, hint: str) -> str:
    """The text of a user's input file (a scenario, a suite), or a ScenarioError naming it."""
    from chaos.inputfile import read_text

    # a regular file only (a FIFO or /dev/zero is refused before any read), its size checked first
    return read_text(path, what, MAX_FILE_BYTES, error=ScenarioError, hint=hint)


def load_scenario(path: str | os.PathLike) -> Scenario:
    text = read_input_file(path, "scenario", "`chaos list` shows the shipped scenarios")
    return parse_scenario(text, str(Path(path)))


# --------------------------------------------------------------------------------- semantics


def workload_importable(ref: str, base_dirs: list[str]) -> str | None:
    """None if ``package.module:factory`` can be found; else the reason.

    The check never executes the user's code (no package ``__init__`` runs in the orchestrator):
    it locates the module's source through the path finder, parses it, and looks for a top-level
    definition of the factory. Only a racer imports and runs a workload.
    """
    module, _, attr = ref.partition(":")
    if not module or not attr:
        return "expected a built-in workload name or package.module:factory"
    module = MOVED.get(module, module)  # a moved public module (``chaos.savers``) is read where it lives now
    if not all(p.isidentifier() for p in module.split(".")) or not all(p.isidentifier() for p in attr.split(".")):
        return "package.module:factory must be dotted Python identifiers"
    search: list[str] | None = list(dict.fromkeys(base_dirs + sys.path))
    spec = None
    for i, _part in enumerate(module.split(".")):
        name = ".".join(module.split(".")[: i + 1])
        try:
            spec = importlib.machinery.PathFinder.find_spec(name, search)
        except (ImportError, ValueError, OSError) as exc:
            return f"module {name!r} cannot be located: {exc}"
        if spec is None:
            missing = f"{name!r} was not found" if name == module else f"its package {name!r} was not found"
            return f"module {module!r} does not import: {missing} (looked in the scenario's folder, the current folder and the Python path)"
        search = list(spec.submodule_search_locations or [])
    origin = getattr(spec, "origin", None)
    if not origin or not str(origin).endswith(".py"):
        return None  # an extension or namespace module: the racer will tell
    try:
        tree = ast.parse(Path(origin).read_bytes(), filename=origin)
    except SyntaxError as exc:
        return f"module {module!r} does not import: syntax error at {Path(origin).name}:{exc.lineno}: {exc.msg}"
    except (OSError, ValueError) as exc:
        return f"module {module!r} cannot be read: {exc}"
    top = attr.split(".")[0]
    defined: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.If, ast.Try)):
            defined.add(top)  # conditional definitions: give the benefit of the doubt
    if top not in defined:
        return f"module {module!r} ({origin}) defines no {top!r}"
    return None


def field_set(s: Scenario, field_path: str, form: str = "") -> bool:
    """Does ``s`` set ``field_path`` (``target.durability``): to a value other than its default, or,
    with a ``form``, in that form (``resume`` in form ``app``)?"""
    owner: BaseModel = s
    *parents, name = field_path.split(".")
    for part in parents:
        owner = getattr(owner, part)
    value = getattr(owner, name)
    if form:
        return (s.resume_form if field_path == "resume" else str(value)) == form
    return bool(value != field_default(type(owner), name))


def check_semantics(scenario: Scenario, path: str = "<scenario>", node: yaml.Node | None = None) -> None:
    """Checks that need the target registry: run on the scenario and on every cell."""
    for cell in expand(scenario, path=path, node=node, check=False):
        s = cell.scenario

        def fail(loc: tuple, msg: str, cell: Cell = cell) -> None:
            axis = next((a for a, p in AXES.items() if p == loc and a in cell.axes), None)
            line = _line_of(node, ("matrix", axis) if axis else loc) if node is not None else None
            where = f"{path}:{line}" if line else path
            cell_note = f" [cell {cell.id}]" if cell.axes else ""
            raise ScenarioError(f"{where}: {'.'.join(loc)}: {msg}{cell_note}")

        info = TARGETS.get(s.target.framework)
        if info is None:
            fail(("target", "framework"), f"unknown framework {s.target.framework!r}; known: {', '.join(sorted(TARGETS))}")
        assert info is not None
        if s.target.backend not in info.backends:
            fail(("target", "backend"), f"{info.framework} has no backend {s.target.backend!r}; known: {', '.join(info.backends)}")
        search = [os.getcwd(), str(Path(path).parent)]
        rules = hooks_of(info.framework)
        refusal = rules.validate(s, search) if isinstance(rules, ValidatesScenario) else None
        if refusal is not None:  # the framework's own rules (its options, its own workload references)
            fail(refusal.field, refusal.why)
        # a kind the target does not support is not an input error: its cell reports every property
        # unknown with the adapter's reason (so one matrix can span frameworks)
        if s.recover_ref:
            reason = workload_importable(s.recover_ref, search)
            if reason:
                fail(("resume",), f"the recovery {s.recover_ref!r} cannot be found: {reason}")
        if s.answers is not None and (why := info.unsupported.get("answers") or info.unsupported.get(f"answers on {s.target.backend}")):
            fail(("answers",), f"{info.framework} on backend {s.target.backend} cannot follow an answer plan: {why}")
        if s.workload in BRANCH_WORKLOADS and (why := info.supports(BRANCHES)) is not None:
            runs_it = ", ".join(sorted(t.framework for t in TARGETS.values() if s.workload in t.workloads))
            fail(
                ("workload",),
                f"{s.workload!r} runs parallel branches (Send fan-out / parallel tool calls), which {info.framework} cannot: "
                f"{why}; run it with target.framework: {runs_it}, or pick a workload of {info.framework}: {', '.join(info.workloads)}",
            )
        owners = [fw for fw in TARGETS if isinstance(r := hooks_of(fw), ValidatesScenario) and r.owns_workload(s.workload)]
        if owners:  # a reference of a framework's own form, resolved by its validate
            if info.framework not in owners:
                fail(("workload",), f"the workload {s.workload!r} is served by target.framework: {', '.join(owners)} only")
        elif s.workload not in info.workloads:
            reason = workload_importable(s.workload, search)
            if reason:
                fail(("workload",), f"unknown workload {s.workload!r}: {reason}; built-in: {', '.join(info.workloads)}")
        v2 = s.upgrade_to.workload
        if v2 is not None and v2 not in info.workloads:
            reason = workload_importable(v2, search)
            if reason:
                fail(("upgrade_to", "workload"), f"unknown workload {v2!r}: {reason}; built-in: {', '.join(info.workloads)}")
        for key, why in info.unread_fields.items():
            field_path, _, form = key.partition(":")
            if field_set(s, field_path, form):
                readers = ", ".join(t.framework for t in TARGETS.values() if key in t.reads) or "none"
                what = f"the {form} form" if form else "it"
                fail(
                    tuple(field_path.split(".")),
                    f"{info.framework} does not read {what}: {why}; leave it out for {info.framework} (frameworks that read it: {readers})",
                )
        own = hooks_of(info.framework)
        mine = set(own.Options.model_fields) if isinstance(own, OwnsOptions) else set()
        for model in target_option_models():  # another framework's option this one declares nothing of
            for key in model.model_fields:
                if key not in mine and f"target.{key}" not in info.unread_fields and field_set(s, f"target.{key}"):
                    readers = ", ".join(
                        fw for fw in TARGETS if isinstance(h := hooks_of(fw), OwnsOptions) and key in h.Options.model_fields
                    )
                    fail(
                        ("target", key),
                        f"{info.framework} does not read it: it is an option of {readers}; leave it out for {info.framework}",
                    )


def _set(data: dict, path: tuple[str, ...], value: object) -> None:
    for p in path[:-1]:
        data = data.setdefault(p, {})
    data[path[-1]] = value


def _fmt(v: object) -> str:
    if isinstance(v, dict) and "hosts" not in v:  # a matrix case
        return str(v.get("name") or "/".join(f"{k}:{_fmt(x)}" for k, x in v.items()))
    if isinstance(v, dict):
        return "+".join(str(x) for x in v.get("hosts", [])) or str(v)
    return str(v)


def _plain_copy(value: Any) -> Any:
    """A deep copy of plain data (a model's dump), each mapping's keys in sorted order: what the YAML
    round trip this replaces made of it (``safe_dump`` sorts), at a hundredth of its cost (a night's
    suite spent 7 s of its 10 s load copying cells that way)."""
    if isinstance(value, dict):
        return {k: _plain_copy(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_plain_copy(v) for v in value]
    return value


def expand(scenario: Scenario, *, path: str = "<scenario>", node: yaml.Node | None = None, check: bool = True) -> list[Cell]:
    """Every cell of the scenario's matrix, in a stable order (axes in file order)."""
    axes = list(scenario.matrix.items())
    base = scenario.model_dump(exclude={"matrix"})
    for key in scenario._implicit_options:  # each cell works out its own (by its workload: a case may name another)
        base["target"].pop(key, None)
    cells = []
    combos = itertools.product(*[vals for _, vals in axes]) if axes else [()]
    for i, combo in enumerate(combos):
        data = _plain_copy(base)
        for (axis, _), value in zip(axes, combo, strict=True):
            if axis == "case":
                for k, v in value.items():
                    if k != "name":
                        _set(data, AXES[k], v)
            else:
                _set(data, AXES[axis], value)
        try:
            cell_scenario = Scenario.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            bad_axis = next(
                (a for a, p in AXES.items() if p and p == tuple(first["loc"])[: len(p)] and a in scenario.matrix),
                "case" if "case" in scenario.matrix else None,
            )
            line = _line_of(node, ("matrix", bad_axis)) if (node is not None and bad_axis) else None
            raise ScenarioError(f"{path}:{line or 1}: matrix: {_describe(first)}") from None
        axis_values = {axis: value for (axis, _), value in zip(axes, combo, strict=True)}
        cid = ",".join(f"{a}={_fmt(v)}" for a, v in axis_values.items()) or "default"
        cells.append(Cell(index=i, id=cid, axes=axis_values, scenario=cell_scenario))
    if check:
        for c in cells:
            check_semantics(c.scenario, path)
    return cells


def json_schema() -> dict:
    """The JSON Schema of a scenario file, generated from the models: each kind option's from its
    kind's options model, in its place in the file."""
    from chaos.kinds import option_models

    schema = Scenario.model_json_schema()
    defs = schema.setdefault("$defs", {})
    for model in option_models():
        own = model.model_json_schema()
        defs.update(own.pop("$defs", {}))
        for key, prop in own["properties"].items():
            schema["properties"][key] = prop
    for model in target_option_models():  # a framework's own options, in its place: target
        own = model.model_json_schema()
        defs.update(own.pop("$defs", {}))
        target = defs["TargetSpec"]
        target["properties"].update(own["properties"])
        target["additionalProperties"] = False
    schema["$defs"] = dict(sorted(defs.items()))
    return schema
