"""The first table a reader sees in report.md: frameworks x properties, each entry linked to its evidence."""

from __future__ import annotations

from chaos.records import CellResult, Evidence, RunResults, TrialSummary, Verdict
from chaos.reports.markdown import render_markdown


def _cell(i, framework, verdicts):
    return CellResult(
        cell_index=i,
        cell_id=f"case={i}",
        axes={},
        kind="kill_sweep",
        framework=framework,
        backend="sqlite",
        durability="sync",
        k=1,
        jitter_ms=0,
        resume="none",
        workload="three_step",
        trials=1,
        valid_trials=1,
        unknown_trials=0,
        errored_trials=0,
        verdicts=[Verdict(property=p, status=s, reason=f"{p} is {s}", evidence=Evidence(trial_ids=[f"c{i:03d}-t0"])) for p, s in verdicts],
    )


def test_matrix_shows_the_worst_verdict_per_framework_and_links_to_its_row():
    cells = [
        _cell(0, "langgraph", [("EO", "holds"), ("CO", "holds")]),
        _cell(1, "langgraph", [("EO", "violated"), ("CO", "unknown")]),
        _cell(2, "crewai", [("EO", "holds")]),
    ]
    res = RunResults(
        run_id="r",
        scenario="s",
        seed=1,
        exit_code=1,
        verdict_counts={"holds": 3, "violated": 1, "unknown": 1},
        cells=cells,
        summary=TrialSummary(),
    )
    md = render_markdown(res, {})
    head = md[: md.index("## Verdicts")]
    assert "## Contract matrix" in head
    assert "| langgraph | [**VIOLATED**](#v-1-EO) 1/2 | [unknown](#v-1-CO) 1/2 |" in head
    assert "| crewai | [holds](#v-2-EO) 1/1 | - |" in head
    # every link lands on a verdict row that carries the reason and the trial ids
    assert '<a id="v-1-EO"></a>case=1 | EO' in md and "c001-t0" in md
