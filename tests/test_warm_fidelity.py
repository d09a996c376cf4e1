"""Warm racers measure what cold racers measure.

A warm racer is a fork of a pre-imported parent; a cold one is a fresh Python. The harness may
only be faster, never different: the same cells must give the same numbers. The kill sweep in
durability ``sync`` is deterministic, so per-boundary results must be *equal*; a race's fire
counts vary from trial to trial, so they must agree within that noise.
(The same comparisons in containers and on SSH hosts: test_warm_docker.py, test_warm_ssh.py.)
"""

from __future__ import annotations

from kits.warmkit import assert_same_race, race_records, sweep_results

from chaos.launchers.local import LocalLauncher
from chaos.launchers.warm.client import WarmLauncher


def test_a_kill_sweep_gives_equal_per_boundary_results_cold_and_warm(tmp_path):
    cold = sweep_results(tmp_path / "cold", LocalLauncher())
    warm = sweep_results(tmp_path / "warm", WarmLauncher())
    assert warm == cold
    # and the sweep measured something: the kill right after a's effect makes a fire twice
    after_a = next(p for p in cold if p.startswith("effect(task=a)"))
    assert cold[after_a]["effects"] == {"a": 2, "b": 1, "c": 1}


def test_a_race_saturates_the_same_cold_and_warm(tmp_path):
    k, trials = 3, 3
    cold = race_records(tmp_path / "cold", LocalLauncher(), k, trials)
    warm = race_records(tmp_path / "warm", WarmLauncher(), k, trials + 3)
    assert_same_race(cold, warm, k)
    assert {r.observations["launcher"] for r in cold} == {"local"}
    assert {r.observations["launcher"] for r in warm} == {"warm"}
