"""Warm racers measure what cold racers measure.

A warm racer is a fork of a pre-imported parent; a cold one is a fresh Python. The harness may
only be faster, never different: the same cells must give the same numbers. The kill sweep in
durability ``sync`` is deterministic, so per-boundary results must be *equal*; a race's fire
counts vary from trial to trial, so they must agree within that noise.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter

import pytest

from chaos.kinds.race import race_trial
from chaos.kinds.sweep import dry_run, kill_trial
from chaos.launchers.local import LocalLauncher
from chaos.launchers.warm import WarmLauncher
from chaos.trial import TrialRun
from warmkit import cells, context, scenario

# Kill points of three_step (21 boundaries) spread over its life: the input checkpoint, the
# first effect before its checkpoint, a checkpoint write, the middle and last effects, the end.
SWEEP_POINTS = (0, 6, 9, 11, 16, 20)


def _sweep(tmp_path, launcher) -> dict[str, dict]:
    s = scenario(kind="kill_sweep", workload="three_step", resume="none", trials=1)
    (cell,) = cells(s)
    ctx, ledger = context(tmp_path, launcher)
    try:
        dry = dry_run(ctx, cell)
        assert dry.valid, dry.invalid_reason
        boundaries = dry.observations["boundaries"]
        assert len(boundaries) == 21
        out = {}
        for i in SWEEP_POINTS:
            point = boundaries[i]
            run = TrialRun(ctx, cell, f"c000-p{i:03d}-r000", point=point)
            try:
                rec = kill_trial(run, point)
            finally:
                run.cleanup()
            assert rec.valid, (point, rec.invalid_reason)
            assert rec.observations["kill"]["confirmed"]
            at_kill = rec.observations["at_kill"] or {}
            out[point] = {
                "effects": dict(sorted(Counter(r["effect_key"] for r in rec.ledger).items())),
                "checkpoints_at_kill": at_kill.get("checkpoints"),
                "completed_at_kill": at_kill.get("completed_tasks"),
                "resume": (rec.observations["resume_outcome"] or {}).get("status"),
                "after_resume": (rec.observations["after_resume"] or {}).get("completed_tasks"),
            }
        return out
    finally:
        launcher.reap()
        ledger.close()


def test_a_kill_sweep_gives_equal_per_boundary_results_cold_and_warm(tmp_path):
    cold = _sweep(tmp_path / "cold", LocalLauncher())
    warm = _sweep(tmp_path / "warm", WarmLauncher())
    assert warm == cold
    # and the sweep measured something: the kill right after a's effect makes a fire twice
    after_a = next(p for p in cold if p.startswith("effect(task=a)"))
    assert cold[after_a]["effects"] == {"a": 2, "b": 1, "c": 1}


def _race(tmp_path, launcher, k: int, trials: int) -> list:
    s = scenario(kind="race", workload="gate_after_interrupt", resume="command:true", trials=trials,
                 racers={"k": k, "placement": "local"})
    (cell,) = cells(s)
    ctx, ledger = context(tmp_path, launcher)
    recs = []
    try:
        for t in range(trials):
            run = TrialRun(ctx, cell, f"c000-t{t:04d}", rep=t)
            try:
                recs.append(race_trial(run))
            finally:
                run.cleanup()
    finally:
        launcher.reap()
        ledger.close()
    return recs


def test_a_race_saturates_the_same_cold_and_warm(tmp_path):
    k, trials = 3, 3
    cold = _race(tmp_path / "cold", LocalLauncher(), k, trials)
    warm = _race(tmp_path / "warm", WarmLauncher(), k, trials + 3)
    for rec in cold + warm:
        assert rec.valid, rec.invalid_reason
        assert rec.observations["release_spread_ms"] is not None
    fc = [r.observations["fires"] for r in cold]
    fw = [r.observations["fires"] for r in warm]
    assert all(1 <= f <= k for f in fc + fw)
    # per-boundary effect counts outside the gated task are fixed by the workload: pre once, end per fire
    for r in cold + warm:
        counts = Counter(row["task"] for row in r.ledger)
        assert counts["pre"] == 1 and counts["gate"] == r.observations["fires"]
    # agreement within the trial-to-trial noise: the difference of the mean fires is within three
    # standard errors of that difference, and never held tighter than one fire
    se = math.sqrt(statistics.pvariance(fc) / len(fc) + statistics.pvariance(fw) / len(fw))
    tolerance = max(3 * se, 1.0)
    assert abs(statistics.mean(fw) - statistics.mean(fc)) <= tolerance, (fc, fw)
    assert {r.observations["launcher"] for r in cold} == {"local"}
    assert {r.observations["launcher"] for r in warm} == {"warm"}
