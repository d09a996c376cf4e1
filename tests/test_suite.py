"""Story: a team lists scenario files in a suite; every mistake is one line naming file, line, field."""

from pathlib import Path

import pytest
import yaml

from chaos.racer.errors import ScenarioError
from chaos.scenario.suite import is_suite_file, load_suite

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"

RACE = """name: tiny_race
kind: race
workload: gate_after_interrupt
resume: "command:true"
racers: {k: 2, placement: local}
trials: 2
"""


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "race.yaml").write_text(RACE)
    return tmp_path


def write(folder, text):
    p = folder / "suite.yaml"
    p.write_text(text)
    return p


def test_the_shipped_suites_cover_every_shipped_scenario_and_load():
    examples = SCENARIOS.parent / "examples"  # the worked examples' scenarios run nightly too
    files = [*SCENARIOS.glob("*.yaml"), *examples.glob("*/scenarios/*.yaml")]
    shipped = {p.resolve() for p in files if not is_suite_file(p)}
    small, full = load_suite(SCENARIOS / "nightly.yaml"), load_suite(SCENARIOS / "nightly_full.yaml")
    assert {it.file.resolve() for it in small.items} == shipped, "add the new scenario to scenarios/nightly.yaml"
    assert {it.file.resolve() for it in full.items} == shipped, "add the new scenario to scenarios/nightly_full.yaml"
    assert all(it.overrides for it in small.items), "every entry is cut down for a nightly on a small machine"
    assert not any(it.overrides for it in full.items)


def test_overrides_merge_into_mappings_and_replace_other_fields(folder):
    s = load_suite(
        write(
            folder,
            "name: n\nscenarios:\n  - file: race.yaml\n    overrides: {racers: {k: 1}, trials: 1}\n"
            "  - file: race.yaml\n    overrides: {name: other, matrix: {jitter_ms: [0, 5]}}\n",
        )
    )
    a, b = (it.scenario for it in s.items)
    assert (a.racers.k, a.racers.placement, a.trials, a.name) == (1, "local", 1, "tiny_race")
    assert (b.name, b.racers.k, b.matrix) == ("other", 2, {"jitter_ms": [0, 5]})


def test_a_bare_list_is_a_suite_named_after_its_file(folder):
    s = load_suite(write(folder, "- file: race.yaml\n"))
    assert s.suite.name == "suite" and s.items[0].scenario.trials == 2


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "name: n\nscenarios:\n  - file: race.yaml\n  - file: gone.yaml\n",
            "suite.yaml:4: scenarios[1].file: no such scenario file 'gone.yaml'",
        ),
        (
            "name: n\nscenarios:\n  - file: race.yaml\n    overrides:\n      racers: {k: 0}\n",
            "suite.yaml:5: scenarios[0] (race.yaml) overrides.racers.k: Input should be greater than or equal to 1",
        ),
        (
            "name: n\nscenarios:\n  - file: race.yaml\n    overrides:\n      trails: 3\n",
            "suite.yaml:5: scenarios[0] (race.yaml) overrides.trails: unknown key; allowed here: name, about, kind",
        ),
        (
            "name: n\nscenarios:\n  - file: race.yaml\n    overides: {trials: 1}\n",
            "suite.yaml:4: scenarios.0.overides: unknown key; allowed in an entry: file, overrides",
        ),
        (
            "name: n\nscenarios:\n  - file: race.yaml\n  - file: race.yaml\n",
            "suite.yaml:4: scenarios[1] (race.yaml): scenario name 'tiny_race' is already used by scenarios[0]",
        ),
        (
            "name: n\nscenarios:\n  - file: race.yaml\n    overrides: {target: {backend: oracle}}\n",
            "suite.yaml:4: scenarios[0] (race.yaml) with its overrides:",
        ),
        ("name: n\nscenarios: []\n", "suite.yaml:2: scenarios: List should have at least 1 item"),
    ],
)
def test_mistakes_are_one_line_errors_naming_the_line_and_field(folder, text, message):
    with pytest.raises(ScenarioError) as e:
        load_suite(write(folder, text))
    assert message in str(e.value), str(e.value)
    assert "\n" not in str(e.value)


def test_a_scenario_file_is_not_mistaken_for_a_suite(folder):
    with pytest.raises(ScenarioError, match="looks like a scenario"):
        load_suite(folder / "race.yaml")
    assert not is_suite_file(folder / "race.yaml") and yaml.safe_load(RACE)["kind"] == "race"
