"""A property judged in sweeps is one module: the sweep names none of them, and the kinds name no framework.

A contributor who adds a property judged at every kill point (as DU, CV, CL, LS, SB and AA are) writes
one module that gives an ``ADD_ON`` (``chaos.kinds.sweep_addon.SweepAddOn``) and one line in
``ADD_ONS``; the sweep (``chaos.kinds.sweep``) iterates them. What a framework does differently (its
first durable write, whether it measures its store, what its recovery call is called) is a fact on
its ``TargetInfo``, so a kind module never spells a framework's name.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from chaos.kinds import property_names
from chaos.kinds.first_checkpoint import before_first_checkpoint
from chaos.kinds.growth import measures
from chaos.kinds.sweep import Sweep, sweep_checks
from chaos.kinds.sweep_addon import ADD_ONS, SweepAddOn, add_ons
from chaos.scenario.model import expand, parse_scenario
from chaos.targets import TARGETS

REPO = Path(__file__).resolve().parents[2]


def _imported_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            names |= {f"{node.module}.{a.name}" for a in node.names} | {node.module or ""}
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
    return names


def test_the_sweep_imports_no_add_on_and_judges_every_one():
    imported = _imported_names(REPO / "chaos" / "kinds" / "sweep.py")
    assert not {m for m in ADD_ONS.values() if m in imported}, "chaos/kinds/sweep.py imports an add-on: iterate add_ons()"
    checked = {c.property.code for c in sweep_checks(Sweep())}
    for name, add_on in zip(ADD_ONS, add_ons(), strict=True):
        assert isinstance(add_on, SweepAddOn) and add_on.properties, name
        for p in add_on.properties:  # each has a checker, a name the reports show and a contract section
            assert p.code in checked and p.code in property_names() and p.anchor, (name, p.code)


def test_no_kind_module_spells_a_framework_name():
    """The facts live on the targets (``first_writes``, the ``store_size`` feature, ``recovery_calls``,
    ``pause_name``). ``double_texting`` is the one kind that still does (its own issue decides it)."""
    quoted = re.compile(r"[\"'](" + "|".join(map(re.escape, TARGETS)) + r")[\"']")
    named = [p.name for p in sorted((REPO / "chaos" / "kinds").glob("*.py")) if quoted.search(p.read_text())]
    assert [n for n in named if n != "double_texting.py"] == []


def _cell(framework: str, kind: str = "first_checkpoint"):
    (cell,) = expand(parse_scenario(f"name: t\nkind: {kind}\ntarget: {{framework: {framework}}}\nworkload: three_step\n"), check=False)
    return cell


def test_first_checkpoint_stops_at_the_targets_own_first_write():
    run = ["effect(task=a):after#1", "save_state(method=a):before#1", "put(step=1,source=loop):before#1", "effect(task=b):after#1"]
    # CrewAI's first durable write is @persist's save; LangGraph's is the checkpoint put
    assert before_first_checkpoint(_cell("crewai"), run) == run[:2]
    assert before_first_checkpoint(_cell("langgraph"), run) == run[:3]
    assert TARGETS["langgraph"].first_writes == ("put(",)
    # a target that declares no first write has every boundary swept
    assert TARGETS["dbos"].first_writes == ()
    assert before_first_checkpoint(_cell("dbos", "kill_sweep"), run) == run


def test_the_store_is_measured_where_the_target_declares_it():
    assert measures(_cell("langgraph", "kill_sweep"))
    assert not measures(_cell("crewai", "kill_sweep"))
    assert [f for f, info in TARGETS.items() if "store_size" in info.features] == ["langgraph"]
