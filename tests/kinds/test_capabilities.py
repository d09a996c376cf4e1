"""A kind or property the adapter does not support is reported unknown with the adapter's reason."""

from __future__ import annotations

import dataclasses

import pytest
from kits.runs import racers_alive, run_text

from chaos import targets

FORK = """\
name: fork_unsupported
kind: fork
target: {framework: langgraph, backend: sqlite}
workload: gate_after_interrupt
resume: "command:yes"
trials: 1
"""


@pytest.fixture
def langgraph_without(monkeypatch):
    def declare(**changes):
        info = dataclasses.replace(targets.TARGETS["langgraph"], **changes)
        monkeypatch.setitem(targets.TARGETS, "langgraph", info)

    return declare


def test_an_unsupported_kind_runs_nothing_and_every_property_is_unknown_with_the_reason(tmp_path, langgraph_without):
    langgraph_without(kinds=("race",), unsupported={"fork": "no fork address in this release"})
    out = run_text(tmp_path, FORK)
    (cell,) = out.results.cells
    assert cell.trials == 0
    assert {v.property: v.status for v in cell.verdicts} == {"FD": "unknown", "FI": "unknown"}
    assert all("no fork address in this release" in v.reason for v in cell.verdicts)
    assert out.results.exit_code == 2
    assert not racers_alive(str(out.run_dir))


def test_a_property_the_adapter_cannot_judge_is_never_reported_as_judged(tmp_path, langgraph_without):
    props = tuple(p for p in targets.TARGETS["langgraph"].properties if p != "FI")
    langgraph_without(properties=props, unsupported={"FI": "intent not readable here"})
    out = run_text(tmp_path, FORK)
    verdicts = {v.property: v for v in out.results.cells[0].verdicts}
    assert verdicts["FD"].status == "violated"
    assert verdicts["FI"].status == "unknown" and "intent not readable here" in verdicts["FI"].reason
