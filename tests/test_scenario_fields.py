"""No scenario field is silently ignored by any adapter (issue 28).

A user who writes ``answers: [...]`` for a CrewAI flow, or ``durability: exit`` for pydantic-graph,
must not get a run that looks measured while the field did nothing. Every field of the scenario
model is, for each of the five frameworks, read by chaos for every framework (``COMMON_FIELDS``),
read by that adapter (``reads``), or declared unread with the reason (``unread_fields``); a
scenario that sets an unread one is refused when it loads, with one line naming the field and the
framework. A new field that nobody declares fails here.
"""

from __future__ import annotations

import types
import typing

import pytest
from pydantic import BaseModel

from chaos.kinds import option_models, option_readers
from chaos.kinds.base import KindOptions
from chaos.racer.errors import ScenarioError
from chaos.scenario.model import KIND_OPTIONS, Scenario, field_annotation, field_names, parse_scenario
from chaos.targets import COMMON_FIELDS, FORMS, TARGETS


def _model(annotation: object) -> type[BaseModel] | None:
    """The model a field nests (``EffectFault | None`` too), or None for a leaf."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        annotation = args[0]
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def scenario_fields(model: type[BaseModel] = Scenario, prefix: str = "") -> list[str]:
    """Every leaf field of the scenario, as a dotted path (``target.durability``, a framework's own
    option, declared in its package); a kind option's type is its kind's options model's (``effect_fault.times``)."""
    out = []
    for name in field_names(model):
        nested = _model(field_annotation(model, name))
        out += scenario_fields(nested, f"{prefix}{name}.") if nested else [f"{prefix}{name}"]
    return out


def _keys(field: str) -> list[str]:
    return [f"{field}:{form}" for form in FORMS[field]] if field in FORMS else [field]


def test_every_field_is_read_or_refused_by_every_adapter():
    fields = scenario_fields()
    assert "target.durability" in fields and "effect_fault.times" in fields and "answers" in fields
    assert {"langgraph", "crewai", "dbos", "langgraph_server"} <= set(TARGETS)  # the walk below covers every adapter
    for info in TARGETS.values():
        for field in fields:
            for key in _keys(field):
                said = [
                    where
                    for where, keys in (("common", COMMON_FIELDS), ("reads", info.reads), ("unread", info.unread_fields))
                    if key in keys
                ]
                assert len(said) == 1, (
                    f"scenario field {key!r} on {info.framework}: declare it exactly once, in chaos.targets COMMON_FIELDS, "
                    f"or in the adapter's reads or unread_fields (found in: {said or 'none'})"
                )


def test_every_declared_field_exists():
    keys = {k for f in scenario_fields() for k in _keys(f)}
    declared = set(COMMON_FIELDS) | {k for t in TARGETS.values() for k in (*t.reads, *t.unread_fields)}
    assert declared <= keys, sorted(declared - keys)


def test_the_forms_are_the_models():
    resume_by = typing.get_args(field_annotation(Scenario, "resume_by"))
    assert FORMS["resume_by"] == resume_by
    assert FORMS["resume"] == typing.get_args(typing.get_type_hints(Scenario.resume_form.fget)["return"])


def test_every_kind_option_has_its_place_in_the_file_and_one_kind_model_declares_it():
    """A kind's options model declares its fields; the scenario gives each a place (flat in the
    file, the order its errors and dumps follow): a new option missing there fails here."""
    # by the class that declares each (``at_pause`` once, in ``AimOptions``, the base of race's and stray_resume's)
    owners = dict.fromkeys(c for m in option_models() for c in m.__mro__ if issubclass(c, KindOptions) and c is not KindOptions)
    declared = [key for c in owners for key in vars(c).get("__annotations__", {}) if key in c.model_fields]
    assert len(declared) == len(set(declared)), declared
    assert set(declared) == set(KIND_OPTIONS)
    assert [k for k in Scenario.model_fields if k in KIND_OPTIONS] == list(KIND_OPTIONS)
    for key in KIND_OPTIONS:
        assert option_readers(key), key


def test_a_kind_option_left_out_is_its_models_default():
    """Each place is typed ``KindOption`` (the validator that fills in the model's default and
    validates a given value): a place without it would leave the option unset and unchecked."""
    s = parse_scenario("name: x\nkind: kill_sweep\nworkload: three_step\n")
    for model in option_models():
        for key in model.model_fields:
            assert getattr(s, key) == model.default_of(key), key


# one value per unread field, and the kind that reads it, as a user would write them
SETS = {
    "target.durability": ("kill_sweep", "target: {{framework: {fw}, backend: {backend}, durability: exit}}\n"),
    "target.saver": ("kill_sweep", "target: {{framework: {fw}, backend: {backend}, saver: 'tests.workloads.user_workloads:two_step'}}\n"),
    "target.guard": (
        "kill_sweep",
        "target: {{framework: {fw}, backend: {backend}, guard: remit, requirements: [remit-contract==0.1.2]}}\n",
    ),
    "answers": ("kill_sweep", "target: {{framework: {fw}, backend: {backend}}}\nanswers: [true, true]\n"),
    "resume:app": ("kill_sweep", "target: {{framework: {fw}, backend: {backend}}}\n"),
    "resume_by:interrupt": ("stray_resume", "target: {{framework: {fw}, backend: {backend}}}\nresume_by: interrupt\n"),
    "resume_by:none_after_answer": ("stray_resume", "target: {{framework: {fw}, backend: {backend}}}\nresume_by: none_after_answer\n"),
    "resume_by:unknown_id": ("stray_resume", "target: {{framework: {fw}, backend: {backend}}}\nresume_by: unknown_id\n"),
    "resume_by:answered_id": ("stray_resume", "target: {{framework: {fw}, backend: {backend}}}\nresume_by: answered_id\n"),
}


def _scenario(framework: str, key: str) -> str:
    kind, target = SETS[key]
    info = TARGETS[framework]
    resume = "app:tests.workloads.user_workloads:two_step" if key == "resume:app" else "command:true"
    return f"name: unread\nkind: {kind}\nworkload: gate_after_interrupt\nresume: '{resume}'\n" + target.format(
        fw=framework, backend=info.backends[0]
    )


CASES = [(fw, key) for fw, info in TARGETS.items() for key in info.unread_fields]


def test_every_unread_field_has_a_story_below():
    assert {key for _, key in CASES} <= set(SETS)


@pytest.mark.parametrize(("framework", "key"), CASES)
def test_a_field_the_framework_does_not_read_is_refused_at_load_naming_it(framework, key):
    with pytest.raises(ScenarioError) as err:
        parse_scenario(_scenario(framework, key), "unread.yaml")
    line = str(err.value)
    field = key.partition(":")[0]
    assert line.startswith("unread.yaml:") and f": {field}: " in line and "\n" not in line, line
    if key != "target.saver":  # refused before, by its own rule, in words of its own
        assert f"{framework} does not read" in line and TARGETS[framework].unread_fields[key] in line, line


@pytest.mark.parametrize("key", sorted(SETS))
def test_langgraph_reads_every_one_of_them(key):
    text = _scenario("langgraph", key)
    if key == "target.saver":
        return  # a saver needs a saver factory: tests/test_any_saver.py
    assert parse_scenario(text, "read.yaml").name == "unread"
