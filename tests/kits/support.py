"""Helpers to run single trials by hand (outside a whole run)."""

from __future__ import annotations

import sys
from pathlib import Path

from chaos.envs import racer_env
from chaos.launchers.local import LocalLauncher

from .racekit import context


def make_context(tmp_path: Path, run_id: str = "test-run"):
    """A RunContext over cold local racers and a SQLite ledger in ``tmp_path``, and its closer."""
    launcher = LocalLauncher(python=sys.executable, env=racer_env(sys.executable))
    ctx, ledger = context(tmp_path, launcher, run_id, root_seed=1)

    def close():
        launcher.reap()
        ledger.close()

    return ctx, close
