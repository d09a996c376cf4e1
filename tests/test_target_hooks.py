"""What a framework does for the orchestrator beyond running racers is its package's, asked through
small protocols (``chaos.targets.hooks``), never by the framework's name (issue 35).

A made-up framework registered with an orchestrator half of its own (``tests/kits/fake_hooks.py``)
gets its own ``target:`` option validated, read typed and refused on the other frameworks, and its
service started before the cell's trials and stopped after, its URL handed to each racer; a kind that
kills its racers is never hosted. The shipped packages offer what their docstrings say.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from chaos.kinds import get_kind
from chaos.kinds.base import _hosted, runner_for
from chaos.racer.errors import ScenarioError
from chaos.running.trial import RunContext
from chaos.scenario.model import Cell, parse_scenario
from chaos.targets import (
    TARGETS,
    ChecksDryRun,
    ChecksModules,
    HostContext,
    HostsCells,
    OwnsOptions,
    PreparesStore,
    ValidatesScenario,
    WritesRepro,
    hooks_of,
    register_target,
)
from tests.kits import fake_hooks

FAKE = dataclasses.replace(
    TARGETS["llamaindex"], framework="fakeflow", module="fakeflow_adapter", hooks="tests.kits.fake_hooks", kinds=("race", "kill_sweep")
)


@pytest.fixture
def fake():
    undo = register_target(FAKE)
    fake_hooks.EVENTS.clear()
    try:
        yield
    finally:
        undo()


def scenario(target: str, kind: str = "race") -> str:
    return f"name: x\nkind: {kind}\nworkload: gate_after_interrupt\nresume: 'command:true'\ntarget: {{{target}}}\n"


def test_the_shipped_packages_offer_what_they_say():
    langgraph, server = hooks_of("langgraph"), hooks_of("langgraph_server")
    for cap in (ValidatesScenario, ChecksDryRun, ChecksModules, WritesRepro, OwnsOptions, PreparesStore):
        assert isinstance(langgraph, cap), cap
    assert isinstance(server, ValidatesScenario) and isinstance(server, HostsCells) and not isinstance(server, OwnsOptions)
    crewai = hooks_of("crewai")  # one capability: its dry-run check (a flow that ended outside its ends)
    assert isinstance(crewai, ChecksDryRun) and not isinstance(crewai, (ValidatesScenario, HostsCells, OwnsOptions, WritesRepro))
    assert hooks_of("pydantic_graph") is None and hooks_of("nosuch") is None


def test_a_frameworks_own_option_is_validated_read_typed_and_refused_elsewhere(fake):
    s = parse_scenario(scenario("framework: fakeflow, backend: file, colour: blue"), "f.yaml")
    assert fake_hooks.Options.of(s).colour == "blue"
    assert fake_hooks.Options.of(parse_scenario(scenario("framework: fakeflow, backend: file"))).colour == "red"
    with pytest.raises(ScenarioError, match=r"f.yaml:5: target.colour: Input should be 'red' or 'blue'"):
        parse_scenario(scenario("framework: fakeflow, backend: file, colour: green"), "f.yaml")
    with pytest.raises(ScenarioError) as err:
        parse_scenario(scenario("framework: langgraph, backend: sqlite, colour: blue"), "f.yaml")
    assert "target.colour: langgraph does not read it: it is an option of fakeflow" in str(err.value)
    with pytest.raises(ScenarioError, match="target.colours: unknown key; allowed here: .*durability, saver, guard, colour"):
        parse_scenario(scenario("framework: fakeflow, backend: file, colours: blue"), "f.yaml")


def test_the_engine_hosts_the_cell_and_hands_each_racer_the_url(fake, tmp_path, monkeypatch):
    cell = Cell(index=0, id="default", axes={}, scenario=parse_scenario(scenario("framework: fakeflow, backend: file")))
    assert runner_for("kill_sweep", "fakeflow") == get_kind("kill_sweep").run_cell  # it kills racers: each one runs the service
    assert runner_for("race", "fakeflow") != get_kind("race").run_cell
    seen: list[str | None] = []

    def run_cell(ctx: RunContext, c: Cell, skip: set[str]) -> Any:
        fake_hooks.EVENTS.append("trials")
        seen.append(ctx.service_url)
        yield from ()

    handed = HostContext("/the/racers/python", tmp_path, {"CHAOS_RUN_ID": "r1"}, [str(tmp_path)], {"kind": "sqlite", "path": "l"})
    monkeypatch.setattr(RunContext, "host_context", lambda self, c: handed)
    ctx: Any = RunContext("r1", tmp_path, tmp_path, 0, None, {"kind": "sqlite", "path": "l"}, list, lambda *a: {})
    assert list(_hosted(fake_hooks, run_cell)(ctx, cell, set())) == []
    assert fake_hooks.EVENTS == ["host /the/racers/python", "start", "trials", "stop"]
    assert seen == ["http://127.0.0.1:1"] and ctx.service_url is None
    assert Path(handed.work_dir) == tmp_path
