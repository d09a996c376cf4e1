"""Helpers for the warm-racer tests: racer specs and small scenario runs without run folders."""

from __future__ import annotations

import math
import os
import statistics
from collections import Counter
from pathlib import Path

from chaos.kinds.sweep import dry_run, kill_trial
from chaos.running.trial import TrialRun
from chaos.scenario.model import Cell, Scenario, expand

from .racekit import context, race_trials


def spec(
    base: Path,
    racer_id: str,
    *,
    workload: str = "three_step",
    thread: str = "th",
    armed: tuple[str, ...] = (),
    gate: bool = False,
    actions: list[dict] | None = None,
    run_id: str = "t-run",
    trial_id: str = "t0",
) -> dict:
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
    base = {
        "name": "warm_test",
        "target": {"framework": "langgraph", "backend": "sqlite", "durability": "sync"},
        "seed": 11,
        "timeout_s": 120,
    }
    base.update(data)
    return Scenario.model_validate(base)


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


# Kill points of three_step (21 boundaries) spread over its life: the input checkpoint, the
# first effect before its checkpoint, a checkpoint write, the middle and last effects, the end.
SWEEP_POINTS = (0, 6, 9, 11, 16, 20)


def sweep_results(base: Path, launcher, points=SWEEP_POINTS, backend: str = "sqlite", **ctx_over) -> dict[str, dict]:
    """Kill trials of ``three_step`` (sync, resume none) at ``points``: what each boundary gave.

    Every kill must be confirmed by the racer's exit status; the launcher is reaped at the end."""
    s = scenario(
        kind="kill_sweep",
        workload="three_step",
        resume="none",
        trials=1,
        target={"framework": "langgraph", "backend": backend, "durability": "sync"},
    )
    (cell,) = cells(s)
    ctx, ledger = context(base, launcher, **ctx_over)
    try:
        dry = dry_run(ctx, cell)
        assert dry.valid, dry.invalid_reason
        boundaries = dry.observations["boundaries"]
        assert len(boundaries) == 21 or backend != "sqlite"
        out = {}
        for i in points:
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


def race_records(base: Path, launcher, k: int, trials: int, backend: str = "sqlite", placement="local", **ctx_over) -> list:
    """``trials`` race trials of ``gate_after_interrupt`` at ``k``; the launcher is reaped at the end."""
    s = scenario(
        kind="race",
        workload="gate_after_interrupt",
        resume="command:true",
        trials=trials,
        racers={"k": k, "placement": placement},
        target={"framework": "langgraph", "backend": backend, "durability": "sync"},
    )
    (cell,) = cells(s)
    ctx, ledger = context(base, launcher, **ctx_over)
    try:
        return race_trials(ctx, cell, trials)
    finally:
        launcher.reap()
        ledger.close()


def assert_same_race(cold: list, warm: list, k: int) -> None:
    """Both modes gave valid races whose mean fires agree within the trial-to-trial noise: the
    difference is within three standard errors of that difference (pooled variance), never held
    tighter than one fire."""
    for rec in cold + warm:
        assert rec.valid, (rec.observations.get("launcher"), rec.trial_id, rec.invalid_reason, round(rec.wall_s, 1))
        assert rec.observations["release_spread_ms"] is not None
    fc = [r.observations["fires"] for r in cold]
    fw = [r.observations["fires"] for r in warm]
    assert all(1 <= f <= k for f in fc + fw)
    # per-boundary effect counts outside the gated task are fixed by the workload: pre once, end per fire
    for r in cold + warm:
        counts = Counter(row["task"] for row in r.ledger)
        assert counts["pre"] == 1 and counts["gate"] == r.observations["fires"]
    # the pooled sample variance: a handful of cold trials that happen to agree (variance 0) must
    # not make the bound as tight as if the noise were known to be zero
    pooled = (
        ((len(fc) - 1) * statistics.variance(fc) + (len(fw) - 1) * statistics.variance(fw)) / (len(fc) + len(fw) - 2)
        if len(fc) > 1 and len(fw) > 1
        else 0.0
    )
    se = math.sqrt(pooled * (1 / len(fc) + 1 / len(fw)))
    assert abs(statistics.mean(fw) - statistics.mean(fc)) <= max(3 * se, 1.0), (fc, fw)
