"""A user writes a scenario file: good ones expand into cells, bad ones are refused precisely."""

from __future__ import annotations

import pytest

from chaos.racer.errors import ScenarioError
from chaos.scenario.model import expand, load_scenario, parse_scenario
from chaos.targets import TARGETS

BASE = """\
name: t
kind: race
workload: gate_after_interrupt
resume: "command:true"
"""


def test_matrix_expands_into_cells_with_stable_ids():
    s = parse_scenario(BASE + "racers: {k: 4}\nmatrix:\n  k: [2, 3]\n  jitter_ms: [0, 5]\n")
    cells = expand(s)
    assert [c.id for c in cells] == ["k=2,jitter_ms=0", "k=2,jitter_ms=5", "k=3,jitter_ms=0", "k=3,jitter_ms=5"]
    assert [(c.scenario.racers.k, c.scenario.jitter_ms) for c in cells] == [(2, 0), (2, 5), (3, 0), (3, 5)]
    assert cells[0].scenario.resume_value is True


def test_a_scenario_without_matrix_is_one_cell():
    (cell,) = expand(parse_scenario(BASE))
    assert cell.id == "default" and cell.axes == {}


@pytest.mark.parametrize(
    "text, expected",
    [
        (BASE + "foo: 1\n", "t.yaml:5: foo: unknown key; allowed here: name, about, kind"),
        (BASE + "racers:\n  k: 0\n", "t.yaml:6: racers.k: Input should be greater than or equal to 1"),
        (BASE + "racers: {k: 2, bogus: 1}\n", "racers.bogus: unknown key; allowed here: k, placement"),
        (BASE + "matrix:\n  k: []\n", "matrix axis 'k' has no values"),
        (BASE + "matrix:\n  k: [2, 0]\n", "racers.k: Input should be greater than or equal to 1"),
        (BASE + "matrix:\n  colour: [red]\n", "unknown matrix axis 'colour'"),
        (BASE.replace("gate_after_interrupt", "nope.module:factory"), "module 'nope.module' does not import"),
        (BASE.replace("gate_after_interrupt", "not a factory"), "unknown workload 'not a factory'"),
        (
            BASE + "target: {framework: crew}\n",
            "unknown framework 'crew'; known: " + ", ".join(sorted(TARGETS)),  # every registered framework, whoever adds one
        ),
        (BASE + "target: {backend: mongo}\n", "langgraph has no backend 'mongo'"),
        # (an explicit ``none`` is accepted: a race of static-breakpoint approvals, invoke(None))
        (BASE.replace('"command:true"', "input"), "a race resumes a pending interrupt"),
        (BASE + "resume: now\n", "duplicate key 'resume'"),
        ("name: t\nkind: [\n", "not valid YAML"),
        ("", "the file is empty"),
        ("- a\n- b\n", "a scenario is a mapping of keys"),
        (
            "name: t\nkind: sweep\nworkload: three_step\n",
            "kind: Input should be 'race', 'kill_sweep', 'first_checkpoint', 'fork', 'invalid_state', 'stray_resume', 'recovery_determinism', 'shared_state', 'upgrade', 'failing_effect' or 'double_texting'",
        ),
    ],
)
def test_bad_scenarios_name_file_line_and_field(tmp_path, text, expected):
    path = tmp_path / "t.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert expected in str(err.value)
    assert str(path) in str(err.value)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(ScenarioError, match="no such scenario file"):
        load_scenario(tmp_path / "absent.yaml")


def test_every_shipped_scenario_is_valid(repo):
    files = sorted((repo / "scenarios").glob("*.yaml"))
    assert files, "no shipped scenarios"
    from chaos.scenario.suite import is_suite_file, load_suite

    for f in files:
        if is_suite_file(f):  # scenarios/nightly*.yaml: suites of the scenarios beside them
            assert load_suite(f).items
            continue
        cells = expand(load_scenario(f), path=str(f))
        assert cells


RACE = "name: x\nkind: race\nworkload: gate_after_interrupt\nresume: '{}'\n"


@pytest.mark.parametrize(
    "value,expected",
    [("true", True), ("1", 1), ('{"ok": 1}', {"ok": 1}), ('"two words"', "two words"), ("approve", "approve"), ("yes", "yes")],
)
def test_a_command_value_is_json_or_a_bare_word(value, expected):
    assert parse_scenario(RACE.format(f"command:{value}")).resume_value == expected


@pytest.mark.parametrize("value", ['{"ok": 1', "two words", "1e999", "[1,"])
def test_a_command_value_that_is_neither_is_refused_at_load(value):
    with pytest.raises(ScenarioError, match="the value after 'command:' must be JSON"):
        parse_scenario(RACE.format(f"command:{value}"))
