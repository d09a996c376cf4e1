"""The race window predicts saturation: a user reads, beside the measured saturation, the one the
window predicts at each jitter. The prediction is a pure function of the measured offsets and
windows (seeded), so ``chaos analyze`` gets the same numbers; these stories pin its arithmetic."""

from __future__ import annotations

import pytest

from chaos.kinds.race import predict_saturation, window_of


def test_racers_that_all_read_before_anyone_commits_all_fire():
    # every racer reads within 1 ms of the gate and commits 10 ms later: nobody sees a commit
    assert predict_saturation([0.0, 0.5, 1.0], [10.0], k=3, jitter_ms=0) == 1.0


def test_a_jitter_much_wider_than_the_window_leaves_about_one_fire():
    # reads spread over 1 s, windows of 1 ms: the first reader commits before almost anyone reads
    s = predict_saturation([0.0], [1.0], k=4, jitter_ms=1000)
    assert s is not None and 0.25 <= s < 0.3


def test_the_prediction_falls_as_the_jitter_grows_past_the_window():
    offsets, windows = [10.0, 12.0, 15.0], [20.0, 25.0, 30.0]
    by_jitter = [predict_saturation(offsets, windows, k=3, jitter_ms=j) for j in (0, 25, 100, 400)]
    assert by_jitter[0] == 1.0
    assert by_jitter == sorted(by_jitter, reverse=True) and by_jitter[-1] < 0.6
    # seeded: the same inputs give the same number (a re-analysis agrees with the run)
    assert predict_saturation(offsets, windows, k=3, jitter_ms=25) == by_jitter[1]


def test_nothing_measured_predicts_nothing():
    assert predict_saturation([], [5.0], k=3, jitter_ms=0) is None
    assert predict_saturation([1.0], [], k=3, jitter_ms=0) is None


def _result(marks, trace, fired=("gate:True",), jitter_s=0.002):
    return {
        "t_released_mono_ns": 1_000_000,
        "t_invoke_mono_ns": 3_000_000,
        "jitter_s": jitter_s,
        "marks": [{"mark": "read", "t_mono_ns": t, "t_wall_ns": 0} for t in marks],
        "trace": [{"barrier": b, "thread": "MainThread", "t_mono_ns": t} for b, t in trace],
        "fired": [{"seq": 1, "effect_key": k} for k in fired],
    }


def test_the_window_runs_from_the_first_read_after_the_resume_began_to_its_checkpoint_commit():
    res = _result(
        marks=[500_000, 4_000_000, 9_000_000],  # an inspect before the gate, then the resume's reads
        trace=[
            ("put_writes(node=-,channels=__resume__):after#1", 6_000_000),  # a pending write is no checkpoint
            ("effect(task=gate):after#1", 7_000_000),
            ("put(step=2,source=loop):after#1", 8_000_000),
        ],
    )
    w = window_of(res, "gate")
    assert w["read_source"] == "read" and w["t_read_mono_ns"] == 4_000_000
    assert w["window_ms"] == pytest.approx(4.0) and w["t_commit_mono_ns"] == 8_000_000
    assert w["read_offset_ms"] == pytest.approx(1.0)  # 3 ms after the gate, 2 ms of it jitter


def test_an_adapter_without_a_read_mark_measures_from_the_resume_start_an_upper_bound():
    w = window_of(_result(marks=[], trace=[("save(node=Ask,status=pending):after#1", 5_000_000)]), "gate")
    assert w["read_source"] == "invoke" and w["window_ms"] == pytest.approx(2.0)


def test_a_racer_that_fired_nothing_has_no_window():
    w = window_of(_result(marks=[4_000_000], trace=[("put(step=2,source=loop):after#1", 8_000_000)], fired=()), "gate")
    assert w["window_ms"] is None and w["read_offset_ms"] == pytest.approx(1.0)


def test_a_resume_that_stops_at_a_later_interrupt_ends_its_window_at_its_tasks_writes():
    # the resumed node fired, then asked again: no checkpoint, only the task's pending writes
    res = _result(
        marks=[4_000_000],
        trace=[
            ("put_writes(node=-,channels=__resume__):after#1", 5_000_000),
            ("effect(task=gate):after#1", 6_000_000),
            ("put_writes(node=handler,channels=__interrupt__+__resume__):after#1", 9_000_000),
        ],
    )
    w = window_of(res, "gate")
    assert w["commit_source"] == "writes" and w["window_ms"] == pytest.approx(5.0)
