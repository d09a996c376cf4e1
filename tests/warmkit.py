"""Helpers for the warm-racer tests: racer specs and small scenario runs without run folders."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from chaos.ledger import SqliteLedger
from chaos.scenario import Cell, Scenario, expand
from chaos.trial import RunContext


def spec(base: Path, racer_id: str, *, workload: str = "three_step", thread: str = "th", armed: tuple[str, ...] = (),
         gate: bool = False, actions: list[dict] | None = None, run_id: str = "t-run", trial_id: str = "t0") -> dict:
    """A racer spec as TrialRun.spec writes it, over SQLite files in ``base``."""
    (base / "barriers").mkdir(parents=True, exist_ok=True)
    return {
        "run_id": run_id,
        "cell_id": "c",
        "trial_id": trial_id,
        "racer_id": racer_id,
        "target": {"framework": "langgraph", "backend": "sqlite", "durability": "sync", "version": None},
        "workload": workload,
        "workload_params": {},
        "thread_id": thread,
        "store": {"path": str(base / "checkpoints.sqlite")},
        "ledger": {"kind": "sqlite", "path": str(base / "ledger.sqlite")},
        "barrier": {"dir": str(base / "barriers"), "armed": list(armed)},
        "gate": gate,
        "jitter_ms": 0,
        "seed": 1,
        "actions": actions if actions is not None else [{"op": "run"}],
        "inspect_before": False,
        "inspect_after": False,
        "result_path": str(base / f"result-{racer_id}.json"),
    }


def scenario(**data) -> Scenario:
    base = {"name": "warm_test", "target": {"framework": "langgraph", "backend": "sqlite", "durability": "sync"},
            "seed": 11, "timeout_s": 120}
    base.update(data)
    return Scenario.model_validate(base)


def context(base: Path, launcher, run_id: str | None = None) -> tuple[RunContext, SqliteLedger]:
    """A RunContext like the orchestrator's, over a ledger in ``base``."""
    run_id = run_id or "t" + secrets.token_hex(4)
    base.mkdir(parents=True, exist_ok=True)
    ledger_path = base / "ledger.sqlite"
    ledger = SqliteLedger(str(ledger_path))
    work = base / "work"
    work.mkdir(parents=True, exist_ok=True)
    ctx = RunContext(
        run_id=run_id,
        run_dir=base,
        work_dir=work,
        root_seed=11,
        launcher=launcher,
        ledger_config={"kind": "sqlite", "path": str(ledger_path)},
        read_ledger=lambda trial_id: ledger.rows(run_id=run_id, trial_id=trial_id),
        store_for=lambda cell, trial_id, d: {"path": str((d / "checkpoints.sqlite").resolve())},
        keep_work=False,
    )
    return ctx, ledger


def cells(s: Scenario) -> list[Cell]:
    return expand(s, check=False)


def gone(pid: int) -> bool:
    """True once ``pid`` no longer runs (absent, or a zombie waiting for its new parent)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return True
    return data[data.rfind(b")") + 2 : data.rfind(b")") + 3] in (b"Z", b"X")


def pgid_of(pid: int) -> int:
    return os.getpgid(pid)
