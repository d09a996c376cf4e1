"""A user races k racers on one pending interrupt and reads saturation off the report."""

from __future__ import annotations

import json
import os

import pytest
from kits.runs import racers_alive, run_text

from chaos.running.journal import read_journal

RACE = """\
name: race_small
kind: race
target: {framework: langgraph, backend: sqlite}
workload: gate_after_interrupt
resume: "command:true"
racers: {k: 3}
trials: 3
seed: 7
"""


@pytest.fixture(scope="module")
def race_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("race")
    return run_text(tmp, RACE)


def test_results_carry_saturation_computed_from_the_journaled_fires(race_run):
    results = json.loads((race_run.run_dir / "results.json").read_text())
    (cell,) = results["cells"]
    records, torn = read_journal(race_run.run_dir / "journal.jsonl")
    assert not torn and len(records) == 3
    fires = [r["observations"]["fires"] for r in records if r["valid"]]
    assert cell["valid_trials"] == len(fires) == 3, [r["invalid_reason"] for r in records]
    assert cell["fires_per_trial"] == fires
    assert cell["saturation"] == pytest.approx(sum(fires) / len(fires) / 3)
    assert sum(cell["fires"].values()) == 3
    assert cell["max_fires"] == max(fires)


def test_fires_are_the_gated_rows_in_the_ledger_one_per_racer_that_fired(race_run):
    records, _ = read_journal(race_run.run_dir / "journal.jsonl")
    for r in records:
        gate_rows = [row for row in r["ledger"] if row["task"] == "gate"]
        assert len(gate_rows) == r["observations"]["fires"]
        assert all(row["effect_key"] == "gate:True" for row in gate_rows)
        # the parking racer fired "pre" exactly once and never the gate
        assert [row["racer_id"] for row in r["ledger"] if row["task"] == "pre"] == ["park"]
        fired_by = sorted(row["racer_id"] for row in gate_rows)
        said_fired = sorted(p["racer_id"] for p in r["observations"]["per_racer"] if p["fired"])
        assert fired_by == said_fired


def test_all_racers_passed_the_gate_and_the_history_is_jepsen_shaped(race_run):
    records, _ = read_journal(race_run.run_dir / "journal.jsonl")
    for r in records:
        gate_arrivals = {b["racer_id"] for b in r["barriers"] if b["barrier"] == "gate" and b["action"] == "arrived"}
        assert gate_arrivals == {"r0", "r1", "r2"}
        invokes = [op for op in r["history"] if op["type"] == "invoke"]
        completions = [op for op in r["history"] if op["type"] != "invoke"]
        assert len(invokes) == len(completions) == 5  # park + 3 racers + the read of the checkpoint tree (LC)
        # the tree is read by r0, in the session it had open, once r1 and r2 had ended: no racer of its own
        assert [(op["racer_id"], op["f"]) for op in invokes][-1] == ("r0", "tree")
        assert [o["racer_id"] for o in r["racers"]] == ["park", "r0", "r1", "r2"]
        (reader,) = [o for o in r["racers"] if o["result"].get("afterwards")]
        others_end = max(o["result"]["t_end_mono_ns"] for o in r["racers"] if o["racer_id"] in ("r1", "r2"))
        assert reader["racer_id"] == "r0" and reader["result"]["t_afterwards_mono_ns"] > others_end
        assert [b["action"] for b in r["barriers"] if b["barrier"] == "afterwards"] == ["arrived", "released"]
        assert r["observations"]["release_spread_ms"] is not None


def test_consume_once_verdict_follows_the_fires(race_run):
    results = json.loads((race_run.run_dir / "results.json").read_text())
    (cell,) = results["cells"]
    co = next(v for v in cell["verdicts"] if v["property"] == "CO")
    if cell["max_fires"] > 1:
        assert co["status"] == "violated"
        assert co["evidence"]["trial_ids"] and co["evidence"]["ledger_seqs"]
        assert race_run.results.exit_code == 1
    else:
        assert co["status"] == "holds"


def test_report_and_run_metadata_are_written(race_run):
    meta = json.loads((race_run.run_dir / "run.json").read_text())
    assert meta["seed"] == 7 and meta["versions"]["langgraph"] == "1.2.24"
    assert meta["versions"]["langgraph-checkpoint-sqlite"]
    report = (race_run.run_dir / "report.md").read_text()
    assert "Saturation" in report and "race_small" in report
    # saturation moves with the machine's load: the run says what load it ran under
    assert meta["load"]["cpus"] == os.cpu_count() and isinstance(meta["load"]["start"], float) and isinstance(meta["load"]["end"], float)
    assert f"{os.cpu_count()} CPUs, load average {meta['load']['start']} at the start, {meta['load']['end']} at the end" in report
    assert (race_run.run_dir.parent / "latest").resolve() == race_run.run_dir.resolve()


def test_each_firing_racer_says_how_long_the_interrupt_stayed_pending_for_others(race_run):
    records, _ = read_journal(race_run.run_dir / "journal.jsonl")
    windows = []
    for r in records:
        for p in r["observations"]["per_racer"]:
            # every racer read the thread after the gate (the saver's get_tuple), jitter left out
            assert p["read_source"] == "read" and p["read_offset_ms"] >= 0
            if p["fired"]:
                # its resumed checkpoint committed after its read: the window is that span
                assert p["t_commit_mono_ns"] > p["t_read_mono_ns"]
                assert p["window_ms"] == pytest.approx((p["t_commit_mono_ns"] - p["t_read_mono_ns"]) / 1e6)
                windows.append(p["window_ms"])
            else:
                assert p["window_ms"] is None
    (cell,) = race_run.results.cells
    w = cell.window
    assert w is not None and w.n == len(windows) == sum(r["observations"]["fires"] for r in records)
    assert w.min_ms <= w.p10_ms <= w.median_ms <= w.p90_ms <= w.max_ms
    # the prediction is a saturation (1/k .. 1), for the cell's jitter and the usual ones
    assert 1 / 3 <= w.predicted_saturation <= 1 and set(w.predicted_by_jitter_ms) == {"0", "5", "25"}
    report = (race_run.run_dir / "report.md").read_text()
    assert "| predicted | window ms |" in report and f"n={w.n}" in report
    assert "race window" in (race_run.run_dir / "report.html").read_text()


def test_no_racer_survives_the_run_and_work_folders_are_gone(race_run):
    assert racers_alive(str(race_run.run_dir)) == []
    assert not (race_run.run_dir / "work").exists()


def test_a_single_racer_consumes_once(tmp_path):
    out = run_text(tmp_path, RACE.replace("k: 3", "k: 1").replace("trials: 3", "trials: 2"))
    (cell,) = out.results.cells
    assert cell.fires == {"1": 2}
    # one writer: the thread's chain stays linear (LC, chaos.kinds.chain)
    assert {v.property: v.status for v in cell.verdicts} == {"CO": "holds", "LIVENESS": "holds", "LC": "holds"}
    # nobody was refused, and with k=1 there are no others: the reason says neither
    co = next(v.reason for v in cell.verdicts if v.property == "CO")
    assert co == "at most one fire in each of 2 valid trials", co
    assert out.results.exit_code == 0
