"""`chaos selftest`: the idempotent workload comes out clean, the known duplicate is caught, and
the judge itself fails when either is not so (a self-test that cannot fail would prove nothing)."""

from __future__ import annotations

from kits.robustkit import ROOT, chaos

from chaos.running.analysis import analyse_run
from chaos.running.runfolder import load_run
from chaos.running.selftest import check


def test_selftest_passes_and_its_judge_can_fail(tmp_path):
    p = chaos(["selftest", "--out", str(tmp_path / "out"), "--trials", "1"], tmp_path / "state")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "selftest passed" in p.stdout
    assert "FAIL" not in p.stdout
    assert "three_step killed at effect(task=b):after#1: b fired [2] times" in p.stdout

    run_dir = (tmp_path / "out" / "selftest" / "latest").resolve()
    meta, scenario, cells, records, _ = load_run(run_dir)

    def judge(recs):
        results = analyse_run(cells, recs, {}, run_id=meta["run_id"], scenario=scenario, seed=scenario.seed)
        return check(results, recs)

    ok, _ = judge(records)
    assert ok

    # a false duplicate in the idempotent cell must fail the self-test
    forged = [r.model_copy(deep=True) for r in records]
    victim = next(r for r in forged if r.cell_id == "workload=three_step_idempotent" and r.point and r.ledger)
    victim.ledger.append(dict(victim.ledger[0], seq=10**6))
    ok, lines = judge(forged)
    assert not ok and any(line.startswith("FAIL") and "three_step_idempotent" in line for line in lines)

    # a duplicate the harness missed (the kill did not land) must fail it too
    missed = [r.model_copy(deep=True) for r in records]
    victim = next(r for r in missed if r.cell_id == "workload=three_step" and r.point and r.point.startswith("effect(task=b)"))
    victim.ledger = [row for i, row in enumerate(victim.ledger) if not (row["task"] == "b" and i > 1)]
    ok, lines = judge(missed)
    assert not ok and any(line.startswith("FAIL") and "effect(task=b)" in line for line in lines)


def test_shipped_selftest_scenario_is_valid():
    p = chaos(["validate", str(ROOT / "scenarios" / "selftest.yaml")], ROOT / ".chaos-none")
    assert p.returncode == 0 and "2 cell(s)" in p.stdout
