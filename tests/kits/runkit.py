"""Hand-built trial records shaped like the real ones (see a journal.jsonl), for the pure tests.

The reporting code is a pure function of records; these let its tests run in milliseconds and put
hostile strings where a run's strings go. The nightly tests use records from real racers.
"""

from __future__ import annotations

from typing import Any

from chaos.kinds.checking import analyze_cell, exit_code, verdict_counts
from chaos.records import BarrierEvent, CellResult, Op, RacerOutcome, RunResults, TrialRecord, Verdict
from chaos.scenario.model import Scenario, expand


def race_cell(k: int = 2, jitter_ms: float = 0, name: str = "race_demo", index: int = 0):
    s = Scenario(
        name=name,
        kind="race",
        workload="gate_after_interrupt",
        resume="command:true",
        racers={"k": k},
        jitter_ms=jitter_ms,
        trials=2,
        seed=1,
    )
    cell = expand(s, check=False)[0]
    return cell.model_copy(update={"index": index, "id": f"k={k},jitter_ms={jitter_ms:g}", "axes": {"k": k, "jitter_ms": jitter_ms}})


def _row(seq: int, racer: str, key: str, t: int, trial_id: str) -> dict:
    task = key.split(":", 1)[0]
    return {
        "seq": seq,
        "run_id": "demo",
        "cell_id": "default",
        "trial_id": trial_id,
        "thread_id": f"demo-{trial_id}",
        "effect_key": key,
        "task": task,
        "value": key.split(":", 1)[1] if ":" in key else None,
        "racer_id": racer,
        "host": "vm",
        "pid": 100 + seq,
        "t_wall": 1.0,
        "t_mono_ns": t,
    }


def race_record(
    trial_id: str,
    fired_by: list[str],
    *,
    value: str = "True",
    cell_index: int = 0,
    cell_id: str = "default",
    valid: bool = True,
    invalid_reason: str | None = None,
    k: int = 2,
) -> TrialRecord:
    """A race trial: park fired ``pre`` and parked at step 1; then each racer in ``fired_by`` fired the gate."""
    t0 = 1_000_000_000
    ledger = [_row(1, "park", "pre", t0 + 5_000_000, trial_id)]
    history = [
        Op(racer_id="park", type="invoke", f="run", t_mono_ns=t0 + 1_000_000),
        Op(racer_id="park", type="ok", f="run", detail="interrupted", t_mono_ns=t0 + 9_000_000),
    ]
    barriers, racers = [], [RacerOutcome(racer_id="park", role="park", status="ok", result={"t_start_mono_ns": t0})]
    gate_open = t0 + 2_000_000_000
    for i in range(k):
        rid = f"r{i}"
        barriers.append(BarrierEvent(racer_id=rid, barrier="gate", action="arrived", t_mono_ns=gate_open - 1_000_000 * (i + 1)))
        history += [
            Op(racer_id=rid, type="invoke", f="resume", value=True, t_mono_ns=gate_open + 10_000 * i),
            Op(racer_id=rid, type="ok", f="resume", value=True, detail="done", t_mono_ns=gate_open + 40_000_000 + i),
        ]
        racers.append(
            RacerOutcome(
                racer_id=rid,
                role="resume",
                status="ok",
                result={"t_start_mono_ns": t0 + 500_000_000, "t_released_mono_ns": gate_open + 5_000 * i},
            )
        )
    for n, rid in enumerate(fired_by):
        ledger.append(_row(2 + n, rid, f"gate:{value}", gate_open + 3_000_000 * (n + 1), trial_id))
    obs = {
        "park": {"status": "ok", "inspect": {"checkpoints": 3, "head_step": 1, "pending_interrupts": 1}},
        "gated_task": "gate",
        "fires": len(fired_by),
        "fired_by": fired_by,
        "per_racer": [{"racer_id": f"r{i}", "sent": True, "fired": f"r{i}" in fired_by} for i in range(k)],
        "release_spread_ms": 0.01,
    }
    return TrialRecord(
        run_id="demo",
        cell_index=cell_index,
        cell_id=cell_id,
        trial_id=trial_id,
        seed=7,
        kind="race",
        thread_id=f"demo-{trial_id}",
        valid=valid,
        invalid_reason=invalid_reason,
        fault_fired=valid,
        history=history,
        barriers=barriers,
        racers=racers,
        ledger=ledger,
        observations=obs,
        t_start_wall=1.0,
        wall_s=2.1,
    )


def results_of(cells_and_records: list[tuple], name: str = "race_demo") -> RunResults:
    cells = [analyze_cell(c, recs) for c, recs in cells_and_records]
    return RunResults(run_id="demo", scenario=name, seed=1, exit_code=exit_code(cells), verdict_counts=verdict_counts(cells), cells=cells)


def verdict_cell(verdicts: list[Verdict], *, index: int = 0, cell_id: str = "default", framework: str = "langgraph") -> CellResult:
    """A finished kill-sweep cell (one valid trial of ``three_step`` on SQLite) with ``verdicts``,
    for the tests of what is done with verdicts (baselines, reports)."""
    return CellResult(
        cell_index=index,
        cell_id=cell_id,
        axes={},
        kind="kill_sweep",
        framework=framework,
        backend="sqlite",
        durability="sync",
        k=1,
        jitter_ms=0,
        resume="none",
        workload="three_step",
        trials=1,
        valid_trials=1,
        unknown_trials=0,
        errored_trials=0,
        verdicts=verdicts,
    )


def one_point_sweep(at_kill: dict[str, Any]) -> list[TrialRecord]:
    """A sweep's records at their smallest: the dry run (one boundary, ``p``) and one trial killed at
    ``p`` whose recovery finished the run, having found ``at_kill`` (checkpoints, completed tasks,
    what a target reports of the thread) when it looked."""
    rec = race_record("c000-p000-r000", fired_by=[])
    trial = rec.model_copy(
        update={
            "kind": "kill_sweep",
            "point": "p",
            "ledger": [],
            "observations": {
                "kill": {"point": "p"},
                "at_kill": {"checkpoints": 1, "completed_tasks": [], **at_kill},
                "resume_outcome": {"status": "done", "action": {"op": "resume", "form": "none"}},
            },
        }
    )
    dry = rec.model_copy(update={"trial_id": "c000-dry", "point": None, "ledger": [], "observations": {"boundaries": ["p"]}})
    return [dry, trial]
