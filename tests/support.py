"""Helpers to run single trials by hand (outside a whole run)."""

from __future__ import annotations

import sys
from pathlib import Path

from chaos.envs import racer_env
from chaos.launchers.local import LocalLauncher
from chaos.ledger import SqliteLedger
from chaos.trial import RunContext


def make_context(tmp_path: Path, run_id: str = "test-run"):
    ledger_path = tmp_path / "ledger.sqlite"
    ledger = SqliteLedger(str(ledger_path))
    launcher = LocalLauncher(python=sys.executable, env=racer_env(sys.executable))
    ctx = RunContext(
        run_id=run_id,
        run_dir=tmp_path,
        work_dir=tmp_path / "work",
        root_seed=1,
        launcher=launcher,
        ledger_config={"kind": "sqlite", "path": str(ledger_path)},
        read_ledger=lambda trial_id: ledger.rows(run_id=run_id, trial_id=trial_id),
        store_for=lambda cell, trial_id, d: {"path": str(d / "checkpoints.sqlite")},
    )

    def close():
        launcher.reap()
        ledger.close()

    return ctx, close
