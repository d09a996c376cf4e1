"""A user forks an answered interrupt with a new value and learns whether the fork means it (FD, FI).

LangGraph issue 6663: a second ``Command(resume=v2)`` sent to the interrupt's checkpoint is stored
and not read; the node sees v1 again and fires again. The explicit fork (``update_state`` on that
checkpoint, then resume) yields v2. The API has no retry/fork discriminator (FI).
"""

from __future__ import annotations

import json

import pytest
from kits.runs import racers_alive, run_text

from chaos.running.options import RunOptions
from chaos.running.resume import rerun

FORK = """\
name: fork_small
kind: fork
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: gate_after_interrupt
resume: "command:approve"
trials: 1
seed: 6663
matrix:
  fork_via: [checkpoint, explicit]
"""


@pytest.fixture(scope="module")
def fork_run(tmp_path_factory):
    return run_text(tmp_path_factory.mktemp("fork"), FORK)


def _cell(run, via):
    return next(c for c in run.results.cells if c.axes["fork_via"] == via)


def _v(cell, prop):
    return next(v for v in cell.verdicts if v.property == prop)


def test_resuming_the_interrupt_checkpoint_again_replays_the_first_answer(fork_run):
    fd = _v(_cell(fork_run, "checkpoint"), "FD")
    assert fd.status == "violated"
    assert "saw 'approve' again" in fd.reason and "fired gate:approve again" in fd.reason
    assert fd.evidence.trial_ids == ["c000-t0000"]
    assert len(fd.evidence.ledger_seqs) == 1  # the second fire of the gated effect, by the fork racer


def test_the_explicit_fork_yields_the_new_answer(fork_run):
    fd = _v(_cell(fork_run, "explicit"), "FD")
    assert fd.status == "holds", fd.reason
    assert "approve#fork" in fd.reason
    assert _cell(fork_run, "explicit").summary["fork_fired"] == {"gate:approve#fork,end": 1}


def test_fork_intent_is_read_from_the_api_surface_and_recorded(fork_run):
    fi = _v(_cell(fork_run, "checkpoint"), "FI")
    assert fi.status == "violated"
    assert "resume" in fi.evidence.note and "Command" in fi.evidence.note and "checkpoint_id" in fi.evidence.note
    journal = [json.loads(line) for line in (fork_run.run_dir / "journal.jsonl").read_text().splitlines()]
    intent = journal[0]["observations"]["intent"]
    assert intent["discriminator"] is None and "Pregel.invoke" in intent["surface"]


def test_cells_name_the_framework_versions_the_racers_ran(fork_run):
    from importlib import metadata

    cell = _cell(fork_run, "checkpoint")
    assert cell.versions["langgraph"] == metadata.version("langgraph")
    meta = json.loads((fork_run.run_dir / "run.json").read_text())
    assert meta["cell_versions"][cell.cell_id]["ran"]["langgraph"] == metadata.version("langgraph")


def test_a_violated_verdict_reruns_alone_to_the_same_verdict(fork_run, tmp_path):
    stored = next(
        json.loads(line)
        for line in (fork_run.run_dir / "journal.jsonl").read_text().splitlines()
        if json.loads(line)["trial_id"] == "c000-t0000"
    )
    outcome, comparison = rerun(fork_run.run_dir, ["c000-t0000"], RunOptions(out=tmp_path))
    assert [c.cell_id for c in outcome.results.cells] == ["fork_via=checkpoint"]
    assert {(row["property"], row["was"], row["now"]) for row in comparison} == {
        ("FD", "violated", "violated"),
        ("FI", "violated", "violated"),
    }
    again = json.loads((outcome.run_dir / "journal.jsonl").read_text().splitlines()[0])
    assert again["trial_id"] == "c000-t0000" and again["seed"] == stored["seed"]
    assert json.loads((outcome.run_dir / "run.json").read_text())["rerun_of"]["trial_ids"] == ["c000-t0000"]
    assert outcome.results.exit_code == 1
    assert not racers_alive(str(outcome.run_dir))


def test_rerun_of_an_unknown_trial_says_which_ids_exist(fork_run, tmp_path):
    from chaos.racer.errors import ChaosError

    with pytest.raises(ChaosError) as err:
        rerun(fork_run.run_dir, ["c009-t0000"], RunOptions(out=tmp_path))
    assert "no trial 'c009-t0000'" in str(err.value) and "c000-t0000" in str(err.value)


def test_run_only_runs_just_the_named_trial(tmp_path):
    out = run_text(tmp_path, FORK, only={"c001-t0000"})
    assert [(c.cell_id, c.trials) for c in out.results.cells] == [("fork_via=checkpoint", 0), ("fork_via=explicit", 1)]
    assert next(v for v in out.results.cells[1].verdicts if v.property == "FD").status == "holds"


def test_chaos_rerun_at_the_terminal_shows_was_and_now_and_exits_with_the_verdict(fork_run, tmp_path):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    r = subprocess.run(
        [sys.executable, "-m", "chaos", "rerun", str(fork_run.run_dir), "c000-t0000", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert r.returncode == 1, r.stderr
    rows = [line for line in r.stdout.splitlines() if "fork_via=checkpoint" in line and "c000-t0000" in line]
    assert len(rows) == 2 and all(line.count("violated") == 2 for line in rows)
    bad = subprocess.run(
        [sys.executable, "-m", "chaos", "rerun", str(fork_run.run_dir), "nope"], capture_output=True, text=True, timeout=600, env=env
    )
    assert bad.returncode == 3 and "no trial 'nope'" in bad.stderr and "Traceback" not in bad.stderr
