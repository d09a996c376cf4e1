"""A user crashes the recovery too (``crash_depth: 2``) with ``crash_states: recorded``, and gets what kill mode gives.

LangGraph's three_step on SQLite under sync durability, narrowed to b's effect and the writes around
it (first points and recovery points alike): every chain ``P1 >> P2`` must come to the same effects,
checkpoints durable at the last crash, resume outcome and verdicts in both modes. Under sync
durability each checkpoint is written on the calling thread before the next step, so each chain's
outcome is deterministic and equal means equal, not "equal this time".

What differs is what ran: kill mode runs a victim and a killed recovery per chain (and a discovery per
first point); recorded mode one recording, one recovering recording per first point (its discovery),
and per chain a fresh resumer alone.
"""

from __future__ import annotations

import pytest
from kits.modes import assert_same_points, journal_records
from kits.runs import racers_alive, run_text

import chaos
from chaos.kinds import crash_states, get_kind
from chaos.kinds.sweep import dry_baseline, recovery_points, repeat_outcome
from chaos.records import TrialRecord
from chaos.running.journal import read_journal
from chaos.scenario.model import expand, parse_scenario

SCENARIO = """\
name: chains_both_modes
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
trials: 1
seed: 20261202
crash_depth: 2
kill_points: ["effect(task=b)", "put_writes(node=b", "put(step=2"]
recovery_kill_points: ["effect(task=b)", "put_writes(node=b", "put(step=2"]
matrix:
  crash_states: [kill, recorded]
"""


@pytest.fixture(scope="module")
def both_modes(tmp_path_factory):
    return run_text(tmp_path_factory.mktemp("crash-chains"), SCENARIO)


def _cells(run):
    by = {c.axes["crash_states"]: c for c in run.results.cells}
    return by["kill"], by["recorded"]


def _mine(run, cell) -> list[TrialRecord]:
    return [r for r in journal_records(run) if r.cell_index == cell.cell_index]


def _short(r: TrialRecord) -> str:
    return r.trial_id.split("-", 1)[1]


def test_every_chain_comes_to_the_same_outcome_and_verdicts_in_both_modes(both_modes):
    kill, rec = _cells(both_modes)
    assert len(kill.points) >= 10 and all(" >> " in p.point for p in kill.points)
    assert_same_points(kill, rec)
    # the sweep still finds what it is for: b's effect done but unrecorded, its recovery crashed there again: b three times
    twice = next(p for p in rec.points if p.point == "effect(task=b):after#1 >> effect(task=b):after#1")
    assert twice.effect_counts == {"a": [1], "b": [3], "c": [1]}
    base = {
        m: dry_baseline(next(r for r in _mine(both_modes, c) if r.trial_id.endswith("-dry") and r.point is None))
        for m, c in (("k", kill), ("r", rec))
    }
    outcomes = {
        m: {_short(r): repeat_outcome(r, base[m]) for r in _mine(both_modes, c) if r.point and " >> " in r.point}
        for m, c in (("k", kill), ("r", rec))
    }
    assert outcomes["r"] == outcomes["k"]


def test_each_chain_was_recovered_from_a_recorded_state_by_a_fresh_resumer(both_modes):
    kill, rec = _cells(both_modes)
    mine = _mine(both_modes, rec)
    (recording,) = [r for r in mine if r.trial_id == f"c{rec.cell_index:03d}-rec000"]
    chains = [r for r in mine if r.point and " >> " in r.point]
    assert sorted(map(_short, chains)) == sorted(_short(r) for r in _mine(both_modes, kill) if r.point and " >> " in r.point)
    for t in chains:
        assert [o.role for o in t.racers] == ["resume"]  # nobody ran the prefix or the first recovery again
        assert "kill" not in t.observations and "kills" not in t.observations
        state = t.observations["crash_state"]
        p1, p2 = state["chain"]
        discovery = f"c{rec.cell_index:03d}-{t.trial_id.split('-')[1]}-dry"
        assert state["recorded_by"] == [recording.trial_id, discovery] and t.point == f"{p1} >> {p2}"
        assert t.thread_id == recording.thread_id  # the recording's thread, from a copy of its store
        # the rows of the victim up to P1 and of the recovery up to P2 are the trial's own, as kill mode's are
        assert all(row["trial_id"] == t.trial_id for row in t.ledger)
        assert [row["racer_id"] for row in t.ledger] == sorted(
            (row["racer_id"] for row in t.ledger), key=["victim", "recovery1", "resume"].index
        )
    killed = [r for r in _mine(both_modes, kill) if r.point and " >> " in r.point]
    assert all(len(r.observations["kills"]) == 2 and r.observations["kill"]["confirmed"] for r in killed)
    cs = rec.crash_states
    assert cs is not None and (cs.used, cs.reason, cs.recorded, cs.killed) == ("recorded", None, len(chains), 0)
    assert kill.crash_states is None
    assert not racers_alive(str(both_modes.run_dir))


def test_the_recovering_recording_is_the_discovery_kill_mode_runs(both_modes):
    """The first recovery of each first point's recorded state passes the boundaries kill mode's
    discovery finds (``resume_boundaries``, which ``recovery_kill_points`` narrows and the report
    lists), frozen at each kill point among them; the discovery is never judged, and explains nothing."""
    kill, rec = _cells(both_modes)
    kill_disc = {_short(r): r for r in _mine(both_modes, kill) if r.trial_id.endswith("-dry") and r.point}
    rec_disc = {_short(r): r for r in _mine(both_modes, rec) if r.trial_id.endswith("-dry") and r.point}
    assert sorted(rec_disc) == sorted(kill_disc) and rec_disc
    cell = next(c for c in expand(parse_scenario(SCENARIO)) if c.axes["crash_states"] == "recorded")
    sweep = get_kind("kill_sweep")
    for short, d in rec_disc.items():
        boundaries = d.observations["resume_boundaries"]
        assert boundaries == kill_disc[short].observations["resume_boundaries"]
        kept = recovery_points(cell, boundaries)
        assert [o.racer_id for o in d.racers] == ["recovery1"] and d.valid
        assert [b.barrier for b in d.barriers if b.action == "arrived"] == kept
        assert [b.barrier for b in d.barriers if b.action == "released"] == kept
        assert d.observations["points"] == [f"{d.point} >> {b}" for b in kept]
        assert sweep.explain(d) == [] and sweep.explain(kill_disc[short]) == []  # b twice here is a chain's, not the workflow's


def test_a_rerun_of_a_recorded_chain_records_again_and_comes_to_the_same(both_modes, tmp_path):
    _, rec = _cells(both_modes)
    point = next(p for p in rec.points if p.point == "effect(task=b):after#1 >> effect(task=b):after#1")
    (tid,) = point.verdicts[0].evidence.trial_ids
    again = chaos.rerun(both_modes.run_dir, tid, chaos.RunOptions(out=tmp_path))
    (cell,) = again.cells
    p = next(p for p in cell.points if p.point == point.point)
    assert (p.effect_counts, p.distribution) == (point.effect_counts, point.distribution)
    assert cell.crash_states is not None and cell.crash_states.used == "recorded"
    recs, _ = read_journal(again.run_dir / "journal.jsonl")
    c = f"c{rec.cell_index:03d}"
    # the discovery is reused; the first point and the recovery are recorded again, armed at just the chain's points
    assert sorted(r["trial_id"] for r in recs if crash_states.is_recording(r["trial_id"])) == [f"{c}-p000-rec000", f"{c}-rec000"]


def test_a_chain_that_could_not_be_recorded_is_killed_and_results_say_why():
    (cell,) = expand(parse_scenario(SCENARIO.replace("  crash_states: [kill, recorded]", "  crash_states: [recorded]")))

    def trial(tid: str, point: str | None, **obs) -> TrialRecord:
        return TrialRecord(
            run_id="r", cell_index=0, cell_id=cell.id, trial_id=tid, point=point, seed=1, kind="kill_sweep", thread_id="t",
            valid=True, observations=obs, t_start_wall=0.0, wall_s=0.0,
        )  # fmt: skip

    why = "the dry run wrote from two threads at once (...): a recording's stops would reorder them"
    records = [
        trial("c000-rec000", None),
        trial("c000-p000-q000-r000", "P1 >> P2", crash_state={"chain": ["P1", "P2"]}),
        trial("c000-p000-q001-r000", "P1 >> P3", not_recorded=why),
    ]
    cs = crash_states.summary(cell, records)
    assert cs is not None and (cs.used, cs.recorded, cs.killed) == ("mixed", 1, 1) and cs.reason == f"P1 >> P3: {why}"


def test_three_crashes_deep_each_recovery_is_a_recording_and_every_chain_comes_out_as_in_kill_mode(tmp_path):
    """``crash_depth: 3``: below each chain of two crashes, the second recovery of its recorded state is
    a recording too (its discovery, ``c000-p000-q000-dry``); the last resumer of each chain of three
    finds the rows of the victim and both recoveries, as after kill mode's three kills."""
    text = SCENARIO.replace("crash_depth: 2", "crash_depth: 3").replace(
        'kill_points: ["effect(task=b)", "put_writes(node=b", "put(step=2"]', 'kill_points: ["effect(task=b)"]'
    )
    text = text.replace(
        'recovery_kill_points: ["effect(task=b)", "put_writes(node=b", "put(step=2"]',
        'recovery_kill_points: ["effect(task=b)", "put(step=2"]',
    )
    run = run_text(tmp_path, text)
    kill, rec = _cells(run)
    assert all(p.point.count(" >> ") == 2 for p in kill.points)
    assert_same_points(kill, rec, evidence=False)
    cs = rec.crash_states
    assert cs is not None and (cs.used, cs.killed) == ("recorded", 0)
    thrice = next(r for r in _mine(run, rec) if r.point == " >> ".join(["effect(task=b):after#1"] * 3))
    assert [o.role for o in thrice.racers] == ["resume"]
    assert [row["racer_id"] for row in thrice.ledger] == ["victim", "victim", "recovery1", "recovery2", "resume", "resume"]
    c = f"c{rec.cell_index:03d}"
    assert thrice.observations["crash_state"]["recorded_by"] == [f"{c}-rec000", f"{c}-p000-dry", f"{c}-p000-q000-dry"]
