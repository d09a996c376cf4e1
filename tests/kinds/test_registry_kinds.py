"""A contributor adds a kind as one module; a user whose checker breaks still gets an analysis.

The registry (``chaos.kinds``) is the one list of kind names: scenario validation, the schema,
analysis and the reports ask it. A checker that raises (a bug, or a journal from an older chaos
whose records lack a field) gives every property of its kind ``unknown`` with the error, never a
crashed analysis (Jepsen's check-safe).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from kits.runkit import race_cell, race_record

import chaos.kinds
from chaos.kinds import KINDS, all_kinds, get_kind, kind_names, property_names
from chaos.kinds.base import Checker, Explains, Kind
from chaos.kinds.checking import analyze_cell
from chaos.racer.errors import ScenarioError
from chaos.reports.explain import explain_duplicates
from chaos.running.analysis import analyse_run
from chaos.scenario.model import Scenario, expand, json_schema, parse_scenario

REPO = Path(__file__).resolve().parents[2]


def test_every_registered_kind_is_one_module_that_declares_itself():
    for name, module in KINDS.items():
        kind = get_kind(name)
        assert isinstance(kind, Kind) and kind.name == name and module == f"chaos.kinds.{name}"
        assert kind.properties and set(kind.properties) <= set(property_names()), name
        assert set(kind.fields) <= set(Scenario.model_fields), name
        assert set(kind.Options.model_fields) <= set(kind.fields), name  # its options are fields it reads
        assert kind.section in ("saturation", "sweep", "contract") and kind.title and kind.about
    assert [k.name for k in all_kinds()] == list(kind_names())


def test_the_schema_and_the_error_for_an_unknown_kind_list_the_registry():
    assert json_schema()["properties"]["kind"]["enum"] == list(kind_names())
    *first, last = kind_names()
    listed = ", ".join(repr(k) for k in first) + f" or {last!r}"
    with pytest.raises(ScenarioError) as err:
        parse_scenario("name: t\nkind: sweep\nworkload: three_step\n")
    assert f"kind: Input should be {listed} (got 'sweep')" in str(err.value)
    with pytest.raises(KeyError, match="unknown kind 'sweep'; known: race, "):
        get_kind("sweep")


def test_a_kind_checks_its_own_scenario_rules():
    with pytest.raises(ScenarioError, match=r"t.yaml:1: \(top level\): a stray_resume resumes a pending interrupt"):
        parse_scenario("name: t\nkind: stray_resume\nworkload: gate_after_interrupt\n", "t.yaml")


def test_no_module_outside_a_kind_names_it_in_code():
    """A kind's name, quoted, appears only in its module, the registry and the adapters that declare it."""
    files = [p.relative_to(REPO).as_posix() for p in sorted((REPO / "chaos").rglob("*")) if p.suffix in (".py", ".j2")]
    for name in kind_names():
        quoted = re.compile(rf"[\"']{name}[\"']")
        named = [f for f in files if quoted.search((REPO / f).read_text(errors="replace"))]
        allowed = {f"chaos/kinds/{name}.py", "chaos/kinds/__init__.py"}
        if name == "fork":  # the racer protocol's action op "fork" (what an adapter does), not the kind
            allowed.add("chaos/racer/protocol.py")
        assert [f for f in named if f not in allowed and not f.startswith("chaos/targets/")] == [], name


# ------------------------------------------------------------------------------ check-safe


def _fork_cell():
    s = Scenario(name="fork_demo", kind="fork", workload="gate_after_interrupt", resume="command:approve", trials=2)
    return expand(s, check=False)[0]


def _old_fork_record(trial_id: str):
    """A fork trial as an older chaos journaled it: no ``sent`` values in its observations."""
    return race_record(trial_id, fired_by=["first", "fork"]).model_copy(
        update={"kind": "fork", "observations": {"gated_task": "gate", "fork": {"status": "done", "observed": "approve"}}}
    )


def test_a_checker_that_raises_gives_its_property_unknown_with_the_error_not_a_crashed_analysis():
    records = [_old_fork_record("c000-t0000"), _old_fork_record("c000-t0001")]
    result = analyze_cell(_fork_cell(), records)
    (fd, fi) = result.verdicts
    assert (fd.property, fd.status, fd.reason) == ("FD", "unknown", "the FD checker of fork failed: KeyError: 'sent'")
    # FI's checker did not raise: it judged the same records on its own (they read no API surface)
    assert (fi.property, fi.status) == ("FI", "unknown") and fi.reason.startswith("the adapter could not say what its API expresses")
    assert result.failure is None and result.summary["invalid"] == {}
    assert (result.trials, result.valid_trials) == (2, 2)
    # the report of such a run still renders: the trial is simply not explained
    assert explain_duplicates(records[0]) == []


def test_one_raising_checker_costs_its_property_only_the_others_keep_their_verdicts(monkeypatch):
    """Jepsen's compose, check-safe per property: race's LIVENESS checker has a bug; CO is still
    judged from the same records, and LIVENESS says which checker failed and how."""
    race = get_kind("race")
    co, liveness, lc = race.checks

    def buggy(cell, facts):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(race, "checks", (co, Checker(liveness.property, buggy), lc))
    cell = race_cell()
    records = [race_record(f"c000-t000{i}", fired_by=["r0"]) for i in range(3)]
    result = analyze_cell(cell, records)
    got = {v.property: v for v in result.verdicts}
    assert [v.property for v in result.verdicts] == ["CO", "LIVENESS", "LC"]  # the order the checkers are declared in
    assert got["CO"].status == "holds" and got["CO"].reason.startswith("at most one fire in each of 3 valid trials")
    assert (got["LIVENESS"].status, got["LIVENESS"].reason) == (
        "unknown",
        "the LIVENESS checker of race failed: ZeroDivisionError: division by zero",
    )
    assert "checker" not in got["LC"].reason  # LC judged on its own (these hand-built records list no checkpoints)
    assert result.failure is None and result.trials == 3 and result.fires == {"1": 3}
    # without the bug, LIVENESS holds on these records: the bug cost exactly that verdict
    monkeypatch.undo()
    again = {v.property: v for v in analyze_cell(cell, records).verdicts}
    assert again["LIVENESS"].status == "holds" and again["CO"] == got["CO"] and again["LC"] == got["LC"]


def test_a_summary_that_raises_midway_still_counts_every_trial(monkeypatch):
    race = get_kind("race")

    def check_one_then_fail(cell, records):
        next(iter(records))
        raise RuntimeError("bug in the race checker")

    monkeypatch.setattr(race, "summary", check_one_then_fail)
    cell = race_cell()
    results = analyse_run(
        [cell], [race_record(f"c000-t000{i}", fired_by=["r0"]) for i in range(3)], {}, run_id="demo", scenario=cell.scenario, seed=1
    )
    (res,) = results.cells
    assert [(v.property, v.status, v.reason) for v in res.verdicts] == [
        ("CO", "unknown", "the race checker failed: RuntimeError: bug in the race checker"),
        ("LIVENESS", "unknown", "the race checker failed: RuntimeError: bug in the race checker"),
    ]
    assert res.trials == 3 and results.summary.trials == 3 and results.exit_code == 2


def test_explaining_is_an_optional_capability():
    explaining = {k.name for k in all_kinds() if isinstance(k, Explains)}
    assert "invalid_state" not in explaining and {"race", "fork", "stray_resume"} <= explaining


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading of docs/contract.md."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_property_is_declared_once_with_its_name_and_its_place_in_the_contract():
    """The names reports print come from the properties the kinds' checkers declare (no central
    list); each names the section of docs/contract.md that defines it."""
    contract = Path(__file__).resolve().parents[2] / "docs" / "contract.md"
    anchors = {_slug(line.lstrip("#")) for line in contract.read_text().splitlines() if line.startswith("#")}
    props = chaos.kinds.properties()
    for kind in all_kinds():
        assert set(kind.properties) <= {c.property.code for c in kind.checks}, kind.name  # every reported code has a checker
    for p in props.values():
        assert p.name and p.anchor in anchors, p
    assert property_names()["EO"] == "effect exactly-once" and property_names()["DU"] == "durability of acknowledged state"
