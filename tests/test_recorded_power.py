"""A user sweeps with ``fault: power_loss`` (or ``torn``) and ``crash_states: recorded`` and gets what the kill sweep gives.

The store lives on chaos's lazy filesystem (a real FUSE mount). Kill mode runs a victim to each
point, SIGKILLs it and drops every write never fsynced (torn: all but half of the last); recorded
mode runs one victim through every point and, frozen at each, copies the durable image (the
filesystem's synced folder; torn: with that half write) into a plain folder for a fresh resumer.
Both cells of each fault and workload must come to the same outcome and the same verdicts (DU and
CV among them) at every point: LangGraph's SQLite ``three_step`` under durability sync, with the
saver as shipped and with ``three_step_nosync`` (synchronous=OFF: nothing fsynced, so the power
loss takes acknowledged checkpoints). One writer at a time, so each point's outcome is
deterministic and equal means equal."""

from __future__ import annotations

import pytest
from kits.modes import assert_same_points, journal_records
from kits.runs import racers_alive, run_text

from chaos.kinds import crash_states, faults
from chaos.kinds.sweep import dry_baseline, repeat_outcome
from chaos.lazyfs import lazy_mounts, missing
from chaos.records import TrialRecord
from chaos.scenario.model import expand, parse_scenario

pytestmark = [pytest.mark.skipif(missing() is not None, reason=f"no lazy filesystem here: {missing()}"), pytest.mark.slow]

SCENARIO = """
name: recorded_power
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
trials: 1
seed: 20261202
timeout_s: 120
matrix:
  fault: [power_loss, torn]
  workload: [three_step, three_step_nosync]
  crash_states: [kill, recorded]
"""


@pytest.fixture(scope="module")
def both_modes(tmp_path_factory):
    return run_text(tmp_path_factory.mktemp("recorded-power"), SCENARIO)


def _pairs(run):
    """Each (fault, workload)'s (kill cell, recorded cell)."""
    by = {(c.axes["fault"], c.axes["workload"], c.axes["crash_states"]): c for c in run.results.cells}
    return {(f, w): (by[f, w, "kill"], by[f, w, "recorded"]) for f, w in sorted({(f, w) for f, w, _ in by})}


def _point_trials(records: list[TrialRecord], cell) -> dict[str, TrialRecord]:
    return {r.point: r for r in records if r.cell_index == cell.cell_index and r.point is not None}


def _lost_to_state(rec: TrialRecord) -> list[tuple]:
    """The writes the fault lost to files that hold state (all but SQLite's ``-shm``), as listed (the latest 50)."""
    listed = (rec.observations["fault"] or {}).get("lost") or []
    return [(o["op"], o["path"].split("/", 1)[-1], o.get("offset"), o.get("length")) for o in listed if not o["path"].endswith("-shm")]


def test_a_recorded_power_loss_sweep_gives_the_same_per_point_outcomes_and_verdicts_as_a_kill_sweep(both_modes):
    pairs = _pairs(both_modes)
    assert sorted(pairs) == [(f, w) for f in ("power_loss", "torn") for w in ("three_step", "three_step_nosync")]
    records = journal_records(both_modes)
    for kill, rec in pairs.values():
        assert_same_points(kill, rec)
        kt, rt = _point_trials(records, kill), _point_trials(records, rec)
        base_k = dry_baseline(next(r for r in records if r.cell_index == kill.cell_index and r.trial_id.endswith("-dry")))
        base_r = dry_baseline(next(r for r in records if r.cell_index == rec.cell_index and r.trial_id.endswith("-dry")))
        assert {p: repeat_outcome(r, base_r) for p, r in rt.items()} == {p: repeat_outcome(r, base_k) for p, r in kt.items()}
    # the mode still finds what the fault is for: the saver that never fsyncs loses acknowledged checkpoints
    for fault in ("power_loss", "torn"):
        _, nosync = pairs[fault, "three_step_nosync"]
        du = next(v for v in nosync.verdicts if v.property == "DU")
        assert du.status == "violated" and "checkpoints.sqlite-wal" in du.reason


def test_each_recorded_point_lost_what_the_killed_one_lost(both_modes):
    """The filesystem's account of the loss (what DU and CV read) is the same per point, but for
    SQLite's ``-shm`` (shared memory: a killed process's dirty pages reach the filesystem when the
    kernel closes its files, a frozen one's not yet; it holds no durable state and DU, CV skip it)."""
    records = journal_records(both_modes)
    for kill, rec in _pairs(both_modes).values():
        kt, rt = _point_trials(records, kill), _point_trials(records, rec)
        for point, r in rt.items():
            k = kt[point]
            assert [f.split("/", 1)[-1] for f in faults._durable_files(r)] == [f.split("/", 1)[-1] for f in faults._durable_files(k)]
            assert faults._changed_disk(r) == faults._changed_disk(k) and len(faults.acknowledged(r)) == len(
                faults.acknowledged(k)
            )  # task ids are per run
            lost_r, lost_k = _lost_to_state(r), _lost_to_state(k)
            n = min(len(lost_r), len(lost_k))  # the listed windows hold the latest 50, -shm writes among them
            assert lost_r[len(lost_r) - n :] == lost_k[len(lost_k) - n :], point
            torn_r, torn_k = r.observations["fault"]["torn"], k.observations["fault"]["torn"]  # the write a torn fault cut
            assert (torn_r is None) == (torn_k is None), point
            if torn_r and torn_k:
                keys = ("offset", "length", "persisted")
                assert [torn_r[x] for x in keys] == [torn_k[x] for x in keys], point
                assert torn_r["path"].split("/", 1)[-1] == torn_k["path"].split("/", 1)[-1], point


def test_results_say_these_cells_used_recorded_power_loss_states(both_modes):
    records = journal_records(both_modes)
    for (fault, _), (kill, rec) in _pairs(both_modes).items():
        assert kill.crash_states is None
        cs = rec.crash_states
        assert cs is not None and (cs.asked, cs.used, cs.reason, cs.recorded, cs.killed) == (
            "recorded",
            "recorded",
            None,
            len(rec.points),
            0,
        )
        (recording,) = [r for r in records if r.cell_index == rec.cell_index and crash_states.is_recording(r.trial_id)]
        for t in _point_trials(records, rec).values():
            assert [o.role for o in t.racers] == ["resume"]  # nobody was killed: the state came from the recording
            assert t.observations["crash_state"]["recorded_by"] == recording.trial_id
            assert t.observations["fault"]["fault"] == fault
    assert not racers_alive(str(both_modes.run_dir))
    assert not [m for name, m in lazy_mounts() if name.endswith(both_modes.results.run_id)]  # unmounted at the end


def test_a_fault_that_kills_nothing_stays_in_kill_mode_and_says_why():
    text = "name: x\nkind: kill_sweep\ntarget: {backend: postgres}\nworkload: three_step\nfault: db_disconnect\ncrash_states: recorded\n"
    (cell,) = expand(parse_scenario(text))
    cs = crash_states.summary(cell, [])
    assert cs is not None and cs.used == "kill" and "fault db_disconnect" in (cs.reason or "")
    for fault in ("power_loss", "torn"):
        (lazy,) = expand(
            parse_scenario(text.replace("target: {backend: postgres}", "target: {backend: sqlite}").replace("db_disconnect", fault))
        )
        assert crash_states.not_recorded(lazy) is None
