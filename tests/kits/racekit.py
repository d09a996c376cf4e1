"""Run real race trials with any launcher and backend, without the orchestrator's run folders.

The infra tests use it to drive ``chaos.kinds.race.race_trial`` through the docker and SSH
launchers on SQLite or Postgres, exactly as the orchestrator does per trial.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from chaos.kinds.race import race_trial
from chaos.racer.ledger import Ledger, open_ledger
from chaos.running.trial import RunContext, TrialRun
from chaos.scenario.model import Scenario, expand


def race_scenario(**over) -> Scenario:
    data = {
        "name": "infra_race",
        "kind": "race",
        "target": {"framework": "langgraph", "backend": over.pop("backend", "sqlite")},
        "workload": "gate_after_interrupt",
        "racers": {"k": over.pop("k", 2), "placement": "local"},
        "resume": "command:true",
        "trials": over.pop("trials", 1),
        "seed": 7,
        "timeout_s": over.pop("timeout_s", 60),
    }
    data.update(over)
    return Scenario.model_validate(data)


def new_run_id() -> str:
    return "t" + secrets.token_hex(4)


def context(
    base: Path,
    launcher,
    run_id: str | None = None,
    *,
    ledger_config: dict | None = None,
    store_for=None,
    root_seed: int = 11,
    keep_work: bool = False,
) -> tuple[RunContext, Ledger]:
    """A RunContext like the orchestrator's, over a SQLite ledger in ``base`` (or the ledger and
    checkpoint store given: Postgres for racers on other hosts)."""
    run_id = run_id or "t" + secrets.token_hex(4)
    base.mkdir(parents=True, exist_ok=True)
    ledger_config = ledger_config or {"kind": "sqlite", "path": str(base / "ledger.sqlite")}
    ledger = open_ledger(ledger_config)
    work = base / "work"
    work.mkdir(parents=True, exist_ok=True)
    ctx = RunContext(
        run_id=run_id,
        run_dir=base,
        work_dir=work,
        root_seed=root_seed,
        launcher=launcher,
        ledger_config=ledger_config,
        read_ledger=lambda trial_id: ledger.rows(run_id=run_id, trial_id=trial_id),
        store_for=store_for or (lambda cell, trial_id, d: {"path": str((d / "checkpoints.sqlite").resolve())}),
        keep_work=keep_work,
    )
    return ctx, ledger


def run_races(scenario: Scenario, launcher, base: Path, *, run_id: str, ledger_config: dict, store_for) -> list:
    """Every trial of the scenario's first cell; returns the TrialRecords."""
    cell = expand(scenario, check=False)[0]
    ctx, ledger = context(base, launcher, run_id, ledger_config=ledger_config, store_for=store_for, root_seed=scenario.seed, keep_work=True)
    try:
        return race_trials(ctx, cell, scenario.trials)
    finally:
        ledger.close()


def race_trials(ctx: RunContext, cell, trials: int) -> list:
    """``trials`` race trials of ``cell`` in ``ctx`` (ids c000-t0000, ...); each trial's folder goes after it."""
    records = []
    for t in range(trials):
        run = TrialRun(ctx, cell, f"c000-t{t:04d}", rep=t)
        try:
            records.append(race_trial(run))
        finally:
            run.cleanup()
    return records
