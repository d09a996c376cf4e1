"""A user sweeps with ``crash_states: recorded`` and gets what a kill sweep gives, from one victim run.

The shipped ``scenarios/kill_point_sweep.yaml`` (LangGraph, SQLite, durability sync, three_step, every
resume form) runs once per mode; each kill point must come to the same outcome in both: the same
effects per task, checkpoints durable at the crash, resume outcome and verdicts. LangGraph under sync
durability writes every checkpoint on the calling thread before the next step, so each point's
outcome is deterministic and equal means equal, not "equal this time".
"""

from __future__ import annotations

import pytest
import yaml
from conftest import REPO
from kits.modes import assert_same_points, journal_records
from kits.runs import racers_alive, run_text

import chaos
from chaos.kinds import crash_states
from chaos.kinds.sweep import dry_baseline, repeat_outcome
from chaos.records import TrialRecord
from chaos.running.journal import read_journal
from chaos.scenario.model import expand, parse_scenario

MODES = ("kill", "recorded")


@pytest.fixture(scope="module")
def both_modes(tmp_path_factory):
    data = yaml.safe_load((REPO / "scenarios" / "kill_point_sweep.yaml").read_text())
    data["matrix"]["crash_states"] = list(MODES)
    return run_text(tmp_path_factory.mktemp("crash-states"), yaml.safe_dump(data, sort_keys=False))


def _records(run) -> list[TrialRecord]:
    return journal_records(run)


def _pairs(run):
    """Each resume form's (kill cell, recorded cell)."""
    by = {(c.axes["resume"], c.axes["crash_states"]): c for c in run.results.cells}
    return [(by[r, "kill"], by[r, "recorded"]) for r in sorted({r for r, _ in by})]


def _outcomes(run, cell) -> dict[str, list[str]]:
    """Per kill point, what each repeat came to (``repeat_outcome``), from the journal."""
    recs = [r for r in _records(run) if r.cell_index == cell.cell_index]
    dry = next(r for r in recs if r.trial_id.endswith("-dry"))
    base = dry_baseline(dry)
    out: dict[str, list[str]] = {}
    for r in recs:
        if r.point is not None:
            out.setdefault(r.point, []).append(repeat_outcome(r, base))
    return out


def test_a_recorded_sweep_of_three_step_gives_the_same_per_point_outcomes_as_a_kill_sweep(both_modes):
    pairs = _pairs(both_modes)
    assert len(pairs) == 3  # none, input, command:true
    for kill, rec in pairs:
        assert_same_points(kill, rec)
        assert _outcomes(both_modes, rec) == _outcomes(both_modes, kill)
    # the sweep still finds what it is for: a kill after b's effect, before its writes, duplicates b
    for _, rec in pairs:
        after_b = next(p for p in rec.points if p.point == "effect(task=b):after#1")
        assert "b" in after_b.duplicates  # (resume input starts over: a again too)


def test_results_say_how_each_cell_made_its_crash_states(both_modes):
    for kill, rec in _pairs(both_modes):
        assert kill.crash_states is None  # kill mode's results are as they always were
        cs = rec.crash_states
        assert cs is not None and (cs.asked, cs.used, cs.reason) == ("recorded", "recorded", None)
        assert (cs.recorded, cs.killed) == (len(rec.points), 0)


def test_one_victim_ran_the_workload_and_each_point_only_a_fresh_resumer(both_modes):
    records = _records(both_modes)
    for kill, rec in _pairs(both_modes):
        mine = [r for r in records if r.cell_index == rec.cell_index]
        (recording,) = [r for r in mine if crash_states.is_recording(r.trial_id)]
        assert recording.trial_id == f"c{rec.cell_index:03d}-rec000" and recording.valid
        assert [o.role for o in recording.racers] == ["victim"] and recording.racers[0].status == "ok"
        points = [p.point for p in rec.points]
        assert recording.observations["points"] == points  # frozen at each, in order, then ran to its end
        arrived = [b.barrier for b in recording.barriers if b.action == "arrived"]
        released = [b.barrier for b in recording.barriers if b.action == "released"]
        assert arrived == released == points
        trials = [r for r in mine if r.point is not None]
        kill_ids = sorted(
            r.trial_id.replace(f"c{kill.cell_index:03d}-", "") for r in records if r.cell_index == kill.cell_index and r.point
        )
        assert sorted(r.trial_id.replace(f"c{rec.cell_index:03d}-", "") for r in trials) == kill_ids  # same ids as kill mode
        for t in trials:
            assert [o.role for o in t.racers] == ["resume"]  # nobody ran the prefix again, nobody was killed
            assert t.thread_id == recording.thread_id  # the recovery resumed the recording's thread, from a copy
            assert t.observations["crash_state"]["recorded_by"] == recording.trial_id
            # the effects fired before the crash are the point trial's own rows, as a killed victim's are
            before = [row for row in t.ledger if row["racer_id"] == "victim"]
            assert all(row["trial_id"] == t.trial_id for row in t.ledger)
            assert [row["effect_key"] for row in before] == [row["effect_key"] for row in recording.ledger[: len(before)]]
    assert both_modes.results.summary.recorded_states == sum(len(rec.points) for _, rec in _pairs(both_modes))
    assert not racers_alive(str(both_modes.run_dir))


def test_each_point_is_recovered_from_its_copy_while_the_recording_runs_on(both_modes):
    """A point's state is copied straight into its trial's folder and its resumer may start at once:
    the first point's trial begins before the recording ends (its record still comes after the
    recording's, in kill mode's order), and each trial keeps the state of its own point."""
    records = _records(both_modes)
    for _, rec in _pairs(both_modes):
        mine = [r for r in records if r.cell_index == rec.cell_index]
        (recording,) = [r for r in mine if crash_states.is_recording(r.trial_id)]
        trials = [r for r in mine if r.point is not None]
        assert trials[0].t_start_wall < recording.t_start_wall + recording.wall_s
        assert mine.index(recording) < min(mine.index(t) for t in trials)
        assert [t.trial_id for t in trials] == sorted(t.trial_id for t in trials)
        assert all(t.observations["crash_state"]["point"] == t.point for t in trials)


def test_a_rerun_of_a_recorded_point_records_again_and_comes_to_the_same(both_modes, tmp_path):
    _, rec = _pairs(both_modes)[0]
    point = next(p for p in rec.points if p.point == "effect(task=b):after#1")
    (tid,) = point.verdicts[0].evidence.trial_ids
    again = chaos.rerun(both_modes.run_dir, tid, chaos.RunOptions(out=tmp_path))
    (cell,) = again.cells
    p = next(p for p in cell.points if p.point == point.point)  # the only one re-run
    assert (p.effect_counts, p.distribution) == (point.effect_counts, point.distribution)
    assert cell.crash_states is not None and cell.crash_states.used == "recorded"
    recs, _ = read_journal(again.run_dir / "journal.jsonl")
    assert [r["trial_id"] for r in recs if crash_states.is_recording(r["trial_id"])] == [f"c{rec.cell_index:03d}-rec000"]


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ("target: {framework: langgraph, backend: postgres}", "does not declare backend 'postgres' capturable"),
        ("target: {framework: langgraph, backend: postgres}\nfault: db_disconnect", "fault db_disconnect"),
        ("target: {framework: crewai, backend: sqlite}", "does not declare backend 'sqlite' capturable"),
    ],
)
def test_a_sweep_whose_crash_state_a_copy_would_not_equal_runs_in_kill_mode_and_says_why(fields, why):
    text = f"name: x\nkind: kill_sweep\n{fields}\nworkload: three_step\ncrash_states: recorded\n"
    (cell,) = expand(parse_scenario(text))
    assert why in (crash_states.not_recorded(cell) or "")
    cs = crash_states.summary(cell, [])
    assert cs is not None and cs.used == "kill" and why in (cs.reason or "")


def test_auto_records_where_exact_and_kills_elsewhere():
    text = "name: x\nkind: kill_sweep\nworkload: three_step\ncrash_states: auto\nmatrix: {backend: [sqlite, postgres]}\n"
    sqlite, postgres = expand(parse_scenario(text))
    assert crash_states.not_recorded(sqlite) is None
    cs = crash_states.summary(postgres, [])
    assert cs is not None and (cs.asked, cs.used) == ("auto", "kill") and "postgres" in (cs.reason or "")


def test_points_where_two_threads_write_at_once_are_killed_and_the_rest_recorded(both_modes):
    """A recording stops at every point, so its threads fall behind one another as an armed-once
    victim's never do: where the dry run shows two threads inside writes at once (LangGraph's input
    saved beside its first checkpoint under the default executor, the e-mail assistant's subgraph
    writes), the crash state depends on thread scheduling and those points run in kill mode. Both
    ends of the raced writes are among them, and the boundaries before and after, one writer at a
    time, are not."""
    records = _records(both_modes)
    dry = next(r for r in records if r.trial_id.endswith("-dry"))
    assert crash_states.concurrent_writes(dry) is None and crash_states.racing(dry) == {}  # three_step under sync
    trace = [
        {"barrier": "effect(task=a):after#1", "thread": "T1"},
        {"barrier": "put(step=0,source=loop):before#1", "thread": "T1"},
        {"barrier": "put_writes(node=__start__,channels=x):before#1", "thread": "T2"},
        {"barrier": "put(step=0,source=loop):after#1", "thread": "T1"},
        {"barrier": "put_writes(node=__start__,channels=x):after#1", "thread": "T2"},
        {"barrier": "put(step=1,source=loop):before#1", "thread": "T1"},
    ]
    racing = crash_states.racing_points(trace)
    assert set(racing) == {
        "put(step=0,source=loop):before#1",
        "put_writes(node=__start__,channels=x):before#1",
        "put(step=0,source=loop):after#1",
        "put_writes(node=__start__,channels=x):after#1",
    }
    assert "while put(step=0,source=loop):before#1 on T1 was not done" in racing["put_writes(node=__start__,channels=x):before#1"]
    assert all("two writers at once" in why for why in racing.values())
    # the chains alone still need one writer at a time throughout: a cell asking for them says so
    two = dry.model_copy(update={"observations": {**dry.observations, "concurrent_writes": crash_states.writes_at_once(trace)}})
    (chain,) = expand(parse_scenario("name: x\nkind: kill_sweep\nworkload: three_step\ncrash_states: recorded\ncrash_depth: 2\n"))
    cs = crash_states.summary(chain, [two])
    assert cs is not None and cs.used == "kill" and "two threads at once" in (cs.reason or "")


def test_idempotent_effects_stay_once_from_a_recorded_crash_state(tmp_path):
    """The rows a recording fired before a point are copied into the ledger as the point trial's
    own, so ``append_once`` finds them there: the shipped idempotent workflow (resume: input runs
    every step again) still fires each effect exactly once at every point."""
    data = yaml.safe_load((REPO / "scenarios" / "kill_point_sweep_idempotent.yaml").read_text())
    data["matrix"]["case"] = [c for c in data["matrix"]["case"] if c["name"] == "steps"]
    data["crash_states"] = "recorded"
    run = run_text(tmp_path, yaml.safe_dump(data, sort_keys=False))
    (cell,) = run.results.cells
    assert cell.crash_states is not None and cell.crash_states.used == "recorded"
    assert {v.property: v.status for v in cell.verdicts}["EO"] == "holds"
    assert all(set(p.distribution) == {"exactly once"} for p in cell.points if p.reached)
    assert any(row["racer_id"] == "victim" for r in _records(run) if r.point for row in r.ledger)  # rows from the recording


@pytest.fixture(scope="module")
def email_modes(tmp_path_factory):
    """The e-mail assistant's stock sweep (a real LangGraph app under the default executor: subgraph
    and task writes on worker threads beside the next checkpoint), once per mode."""
    data = yaml.safe_load((REPO / "examples" / "email_assistant" / "scenarios" / "stock.yaml").read_text())
    data["matrix"] = {"crash_states": list(MODES)}
    data["answers"] = ["accept", "accept"]
    return run_text(tmp_path_factory.mktemp("email-modes"), yaml.safe_dump(data, sort_keys=False))


def test_a_real_app_with_two_writers_is_recorded_where_one_writes_and_killed_where_two_do(email_modes):
    kill, rec = sorted(email_modes.results.cells, key=lambda c: c.axes["crash_states"] != "kill")
    cs = rec.crash_states
    assert cs is not None and cs.used == "mixed" and cs.recorded >= 1 and cs.killed >= 1
    assert cs.recorded + cs.killed == len(rec.points)
    assert "two writers at once" in (cs.reason or "")
    records = [r for r in journal_records(email_modes) if r.cell_index == rec.cell_index and r.point is not None]
    recorded = {r.point for r in records if r.observations.get("crash_state") is not None}
    assert len(recorded) == cs.recorded
    # where one thread writes, the recorded state comes to what a kill there comes to: the same
    # effects, resume outcome and verdicts (the checkpoints durable at a kill where another write
    # is in flight are the framework's open outcome, and such points are the killed ones)
    by_kill = {p.point: p for p in kill.points}
    for p in rec.points:
        if p.point in recorded:
            k = by_kill[p.point]
            assert (p.effect_counts, p.resume_outcomes) == (k.effect_counts, k.resume_outcomes), p.point
            assert [(v.property, v.status) for v in p.verdicts] == [(v.property, v.status) for v in k.verdicts], p.point
    assert racers_alive(str(email_modes.run_dir)) == []
