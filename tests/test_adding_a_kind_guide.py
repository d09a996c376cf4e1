"""A contributor copies docs/adding-a-kind.md's worked example and it runs: the kind module loads
as ``chaos.kinds.done_rerun``, registers, its scenario validates and runs on LangGraph with the
verdict the guide prints, and the guide's own test file passes as written (its imports are the
kits' real paths). The code blocks are read from the guide, so the guide cannot drift from this."""

from __future__ import annotations

import dataclasses
import re
import sys
import types
from pathlib import Path

import pytest
import yaml
from kits.runs import run_text

import chaos.kinds
import chaos.targets
from chaos.api import load_scenario

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "adding-a-kind.md"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def _blocks(lang: str) -> list[str]:
    return [code for tag, code in BLOCK.findall(GUIDE.read_text()) if tag == lang]


def _block(lang: str, starts: str) -> str:
    (code,) = [c for c in _blocks(lang) if c.startswith(starts)]
    return code


@pytest.fixture
def done_rerun(monkeypatch):
    """The guide's module loaded as ``chaos.kinds.done_rerun``, registered, and declared by LangGraph
    (steps 1, 2 and 4 of the guide), for this test only."""
    module = types.ModuleType("chaos.kinds.done_rerun")
    module.__file__ = str(GUIDE)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(_block("python", '"""``done_rerun``'), str(GUIDE), "exec"), module.__dict__)
    monkeypatch.setitem(chaos.kinds.KINDS, "done_rerun", module.__name__)
    lg = chaos.targets.TARGETS["langgraph"]
    monkeypatch.setitem(
        chaos.targets.TARGETS,
        "langgraph",
        dataclasses.replace(lg, kinds=(*lg.kinds, "done_rerun"), properties=(*lg.properties, "DI")),
    )
    return module


def test_every_python_block_of_the_guide_is_python_or_a_marked_fragment():
    for code in _blocks("python"):
        if "    ...\n" in code:  # an excerpt of a registry or table: the rest of the entry stays
            continue
        compile(code, str(GUIDE), "exec")


def test_the_guide_kind_registers_and_its_scenario_validates(done_rerun, tmp_path):
    kind = chaos.kinds.get_kind("done_rerun")
    assert kind is done_rerun.KIND and kind.properties == ("DI",)
    (scenario_text,) = [c for c in _blocks("yaml") if "kind: done_rerun" in c]
    path = tmp_path / "done.yaml"
    path.write_text(scenario_text)
    scenario = load_scenario(path)
    assert scenario.kind == "done_rerun" and yaml.safe_load(scenario_text)["matrix"] == {"backend": ["sqlite", "memory"]}


def test_the_guide_test_file_passes_as_written(done_rerun, tmp_path):
    """Step 6's file, run as pytest would: both of its tests, the real LangGraph run included."""
    code = _block("python", '"""A user continues a finished thread')
    tests: dict = {"__name__": "test_done_rerun"}
    exec(compile(code, str(GUIDE), "exec"), tests)
    tests["test_a_second_call_that_fires_an_effect_violates_di"]()
    tests["test_langgraph_leaves_a_finished_thread_alone"](tmp_path)


def test_the_guide_scenario_prints_what_the_guide_says(done_rerun, tmp_path):
    (scenario_text,) = [c for c in _blocks("yaml") if "kind: done_rerun" in c]
    cells = run_text(tmp_path, scenario_text).results.cells
    assert [c.cell_id for c in cells] and len(cells) == 2
    for cell in cells:
        (di,) = cell.verdicts
        assert (di.property, di.status) == ("DI", "holds"), di.reason
        assert cell.summary == {"again_status": {"done": 2}, "invalid": {}}
        assert di.reason == "all 2 trials: continuing the finished thread was a no-op (done)"
