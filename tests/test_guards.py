"""A team adopts a guard (REMIT, the paper's reference guard, or its own) and asks chaos, in one run,
whether it holds where stock fails: guarded and stock side by side, refusals counted as outcomes,
chaos's own reads never taking what the guard keys on."""

from __future__ import annotations

import subprocess
import sys

import pytest
from kits.runs import run_text, write_scenario

from chaos.racer.errors import EnvironmentProblem, ScenarioError
from chaos.reports.guards import guard_pairs
from chaos.running.blame import blame_error
from chaos.running.journal import read_journal
from chaos.scenario.model import load_scenario
from chaos.targets.langgraph.guards import Guard, Reads, refused_by

REMIT = "remit-contract==0.1.2"

RACE = """\
name: guard_race
kind: race
target: {{framework: langgraph, backend: {backend}, durability: sync, requirements: ["remit-contract==0.1.2"]}}
workload: gate_after_interrupt
resume: "command:true"
racers: {{k: 4}}
jitter_ms: 0
trials: {trials}
seed: 165
matrix:
  guard: [{guards}]
"""


def _remit_env() -> None:
    from chaos.envs import python_for

    try:
        python_for("langgraph", None, [REMIT])
    except EnvironmentProblem as exc:
        pytest.skip(f"{REMIT} cannot be installed here: {exc}")


def _cell(run, guard):
    return next(c for c in run.results.cells if c.guard == guard)


def _gate_held_its_checkpoint(run, cell) -> None:
    """LC under REMIT's gate is the race's open outcome, and where a fork can be is not. The gate
    claims the parked checkpoint (the one with the pending interrupt), so no two racers ever write
    from it. It gates nothing after: a racer whose read comes after the winner's checkpoint past the
    interrupt finds no interrupt to claim, finishes the thread from there beside the winner and forks
    it one step later (measured: 4 of 40 trials on an idle machine). So LC holds, or it is violated
    by forks whose parent is always a later checkpoint than the parked one, never the parked one."""
    records, _ = read_journal(run.run_dir / "journal.jsonl")
    lc = next(v.status for v in cell.verdicts if v.property == "LC")
    forks = [
        (r["observations"]["park"]["outcome"]["checkpoint"], f)
        for r in records
        if r.get("cell_index") == cell.cell_index and r.get("valid")
        for f in r["observations"]["chain"].get("forks") or []
    ]
    assert lc in ("holds", "violated") and (lc == "violated") == bool(forks), (lc, forks)
    assert all(f["parent"] != parked for parked, f in forks), forks


def test_remits_gate_serves_one_racer_and_refuses_the_others_beside_stock(tmp_path):
    """The issue's Done-when: on main every trial of the gate was invalid (chaos's own read of the
    parked thread took REMIT's claim, so all four resumers were refused, each a harness error)."""
    _remit_env()
    run = run_text(tmp_path, RACE.format(backend="sqlite", trials=4, guards="none, remit_gate"))
    gate, stock = _cell(run, "remit_gate"), _cell(run, "none")
    assert gate.valid_trials == gate.trials == 4
    assert gate.fires == {"1": 4}
    verdicts = {v.property: v.status for v in gate.verdicts}
    assert verdicts["CO"] == verdicts["LIVENESS"] == "holds"
    _gate_held_its_checkpoint(run, gate)
    # the three that were not served were refused before any effect, or found nothing left to do
    assert sum(int(n) * t for n, t in gate.summary["refused"].items()) >= 1
    assert gate.summary["refused_after_effect"] == []
    assert gate.racer_errors == 0 and not gate.app_errors
    assert "refused before any effect" in next(v.reason for v in gate.verdicts if v.property == "CO")
    # stock in the same run: every trial valid; how many fire is the race's (open) outcome
    assert stock.valid_trials == stock.trials == 4
    (pair,) = guard_pairs(run.results)
    assert pair.guarded is gate and pair.stock is stock and pair.overhead is not None and pair.overhead > 0


def test_without_the_inspection_key_chaos_own_read_would_take_the_claim(tmp_path):
    """What chaos did before: the parking racer's read of its own parked thread consumes the claim,
    so every resumer is refused. With the refusal an outcome, the trials stay valid and say so."""
    _remit_env()
    run = run_text(tmp_path, RACE.format(backend="sqlite", trials=2, guards="'tests.kits.guards:remit_gate_blind'"))
    (cell,) = run.results.cells
    assert cell.valid_trials == 2
    assert cell.fires == {"0": 2} and cell.summary["refused"] == {"4": 2}
    verdicts = {v.property: v.status for v in cell.verdicts}
    assert verdicts["LIVENESS"] == "violated" and verdicts["CO"] == "unknown"


def test_chaos_reads_carry_the_guards_inspection_key_and_the_apps_calls_do_not():
    reads = Reads({"remit_inspect": True})
    config = {"configurable": {"thread_id": "t"}}
    assert reads.config(config) == {"configurable": {"thread_id": "t", "remit_inspect": True}}
    with reads.app_call():
        assert reads.config(config) is config
    assert Reads().config(config) is config  # no guard: chaos's reads are the app's reads


def test_a_refusal_is_the_guards_only_when_it_raised_its_own_error():
    class Refusal(Exception):
        pass

    guard = Guard(name="claim", refuses=(Refusal,))
    try:
        try:
            raise Refusal("already claimed")
        except Refusal as inner:
            raise RuntimeError("wrapped by the framework") from inner
    except RuntimeError as exc:
        assert refused_by(guard, exc) == "claim"
    assert refused_by(guard, ValueError("bad")) is None
    assert refused_by(None, Refusal()) is None
    # a refusal after an effect stays an error, blamed on no fault of chaos: a verdict, the trial valid
    err = {"type": "Refusal", "module": "x", "message": "already claimed", "where": "", "refused_by": "claim"}
    assert blame_error(err, "langgraph").party == "framework"


BAD = """\
name: bad_guard
kind: race
target: {{framework: langgraph, backend: {backend}, durability: sync, guard: "{guard}"{extra}}}
workload: gate_after_interrupt
resume: "command:true"
"""
WITH_REMIT = ', requirements: ["remit-contract==0.1.2"]'


@pytest.mark.parametrize(
    ("backend", "guard", "extra", "said"),
    [
        (
            "sqlite",
            "remit_lock",
            WITH_REMIT,
            "unknown guard 'remit_lock': a built-in (remit, remit_gate, remit_validator, remit_fork_flag)",
        ),
        ("sqlite", "mylock", WITH_REMIT, "unknown guard 'mylock'"),
        ("sqlite_async", "remit", WITH_REMIT, "guard 'remit' cannot wrap backend 'sqlite_async' (REMIT's shim refuses async savers)"),
        ("memory", "remit_gate", WITH_REMIT, "cannot wrap backend 'memory' (REMIT's gate takes its claim in the saver's own database"),
        ("sqlite", "remit_gate", "", "guard 'remit_gate' is REMIT: add remit-contract==0.1.2 to target.requirements"),
        ("sqlite", "tests.kits.nosuch:guard", "", "the guard factory 'tests.kits.nosuch:guard' cannot be found"),
    ],
)
def test_a_guard_chaos_cannot_apply_is_refused_at_load_in_one_line(tmp_path, backend, guard, extra, said):
    path = write_scenario(tmp_path, BAD.format(backend=backend, guard=guard, extra=extra))
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    line = str(err.value)
    assert "\n" not in line and line.startswith(f"{path}:3: target.guard: ") and said in line, line


def test_the_cli_exits_3_on_a_bad_guard_and_writes_nothing(tmp_path):
    path = write_scenario(tmp_path, BAD.format(backend="sqlite_async", guard="remit_gate", extra=WITH_REMIT))
    proc = subprocess.run(
        [sys.executable, "-m", "chaos", "run", str(path), "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 3
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert "target.guard" in line and "sqlite_async" in line
    assert not (tmp_path / "out").exists()


def test_a_teams_own_remit_saver_holds_once_chaos_knows_its_inspection_key(tmp_path):
    """The issue's scenario: the team wraps its SqliteSaver with REMIT in its own factory
    (target.saver); the guard wraps nothing and tells chaos REMIT's inspection key and refusals."""
    _remit_env()
    text = RACE.format(backend="saver", trials=3, guards="'tests.kits.guards:remit_keys'").replace(
        "backend: saver,", 'saver: "tests.kits.savers:remit_gate_sqlite",'
    )
    run = run_text(tmp_path, text)
    (cell,) = run.results.cells
    assert cell.valid_trials == 3 and cell.fires == {"1": 3}
    verdicts = {v.property: v.status for v in cell.verdicts}
    assert verdicts["CO"] == verdicts["LIVENESS"] == "holds"
    _gate_held_its_checkpoint(run, cell)


def test_a_guard_factory_that_returns_no_guard_is_refused_before_any_trial(tmp_path):
    path = write_scenario(tmp_path, BAD.format(backend="sqlite", guard="tests.kits.guards:not_a_guard", extra=""))
    proc = subprocess.run(
        [sys.executable, "-m", "chaos", "run", str(path), "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 3
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert (
        str(path) in line
        and "target.guard 'tests.kits.guards:not_a_guard' returned object, not a chaos.targets.langgraph.guards.Guard" in line
    )
    assert not (tmp_path / "out").exists()


def test_remits_fork_repair_serves_the_fork_its_own_value_and_adds_the_fork_flag(tmp_path):
    """LangGraph issue 6663 (probe 134): a fork of the interrupt checkpoint with a second answer is
    served the first answer on stock; REMIT, keyed on its explicit fork flag, serves the fork's own."""
    _remit_env()
    text = (
        RACE.format(backend="sqlite", trials=1, guards="none, remit_fork_flag")
        .replace("kind: race", "kind: fork\nfork_via: checkpoint")
        .replace('resume: "command:true"', 'resume: "command:approve"')
        .replace("racers: {k: 4}\n", "")
    )
    run = run_text(tmp_path, text)
    guarded, stock = _cell(run, "remit_fork_flag"), _cell(run, "none")
    assert {v.property: v.status for v in guarded.verdicts} == {"FD": "holds", "FI": "holds"}
    assert "remit_fork" in next(v.reason for v in guarded.verdicts if v.property == "FI")
    assert {v.property: v.status for v in stock.verdicts} == {"FD": "violated", "FI": "violated"}


def test_a_guard_that_refuses_only_after_the_effect_is_no_pass(tmp_path):
    """A claim row placed after the gated effect: the racers it refuses had already fired, so the
    refusal is an error naming the guard (the trial stays valid) and CO is violated, saying why."""
    text = (
        RACE.format(backend="sqlite", trials=2, guards="'tests.kits.guards:late_claim'")
        .replace('requirements: ["remit-contract==0.1.2"]', "requirements: []")
        .replace("workload: gate_after_interrupt", "workload: tests.kits.guards:gate_then_claim")
    )
    run = run_text(tmp_path, text)
    (cell,) = run.results.cells
    assert cell.valid_trials == 2
    assert cell.summary["refused_after_effect"]  # at least one trial: every racer fires before any claim
    co = next(v for v in cell.verdicts if v.property == "CO")
    assert co.status == "violated" and "the guard refused it only after" in co.reason
