"""The first table a reader sees in report.md: frameworks x properties, each entry linked to its evidence."""

from __future__ import annotations

from kits.runkit import verdict_cell

from chaos.records import Evidence, RunResults, TrialSummary, Verdict
from chaos.reports.markdown import render_markdown


def _cell(i, framework, verdicts):
    verdicts = [Verdict(property=p, status=s, reason=f"{p} is {s}", evidence=Evidence(trial_ids=[f"c{i:03d}-t0"])) for p, s in verdicts]
    return verdict_cell(verdicts, index=i, cell_id=f"case={i}", framework=framework)


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
