"""ADK's own tool-confirmation sample (examples/adk_time_off) through chaos, as a team would put it in CI.

Stock: a booking killed before the tool's response event is booked again on resume (EO), and three
answers to one confirmation on DatabaseSessionService over SQLite can book more than once (CO, a
refused racer's booking). Fixed: an idempotency key and the confirmation declared on the tool come
out clean on Postgres. Cut down: two kill points, the race in 4 trials (stock's CO is judged only when a trial
duplicated, so the test asserts EO, which every run finds).
"""

from __future__ import annotations

import os

import pytest
import yaml
from kits.appruns import REPO, case_cell, run_from_repo

import chaos

KILL_POINTS = ["effect(task=book_time_off)", "append(author=time_off_agent,kind=response:request_time_off)"]


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("adk")


def _run(variant: str, out) -> chaos.RunResults:
    data = yaml.safe_load((REPO / "examples" / "adk_time_off" / "scenarios" / f"{variant}.yaml").read_text())
    data["kill_points"] = KILL_POINTS
    for case in data["matrix"]["case"]:
        if case["kind"] == "race":
            case["trials"] = 4
    return run_from_repo(data, out)


def _verdict(cell, prop: str):
    return next(v for v in cell.verdicts if v.property == prop)


def test_stock_books_again_when_the_resumed_invocation_runs_the_confirmed_tool_again(tmp_path):
    results = _run("stock", tmp_path)
    sweep = case_cell(results, "sweep")
    eo = _verdict(sweep, "EO")
    assert eo.status == "violated" and "effect(task=book_time_off):after#1" in eo.evidence.points
    assert results.exit_code == 1


@pytest.mark.skipif(
    not os.environ.get("CHAOS_PG_DSN"), reason="fixed keeps its sessions on Postgres: needs CHAOS_PG_DSN (scripts/postgres.sh)"
)
def test_fixed_books_once_however_it_is_crashed_raced_or_answered_twice(tmp_path):
    results = _run("fixed", tmp_path)
    for name in ("sweep", "race-k3", "stray"):
        cell = case_cell(results, name)
        assert all(v.status == "holds" for v in cell.verdicts), (name, [(v.property, v.status) for v in cell.verdicts])
    assert results.exit_code == 0
