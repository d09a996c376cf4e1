"""``chaos selftest``: does the injector tell the truth on this machine, today?

The self-test scenario (``scenarios/selftest.yaml``) sweeps kill points of two workloads that
differ only in one thing: ``three_step_idempotent`` fires its effects with an idempotency key, so a
step re-run after a crash adds nothing; ``three_step`` does not, so a kill right after an effect
(``effect(task=X):after``, before LangGraph records the step) duplicates X on resume, every time
under durability ``sync``. The harness passes when

* every trial of both cells is valid, with its fault fired and its kill confirmed by the exit status;
* the idempotent cell has no violated verdict and EO holds (no false duplicate);
* the plain cell's EO is violated, and at every ``effect(task=X):after`` point every repeat counted
  X exactly twice (the known duplicate, caught every time).

Anything else means the harness, not the framework, is broken here: exit 3.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from chaos.racer.errors import ChaosError

if TYPE_CHECKING:
    from chaos.records import RunResults, TrialRecord

CLEAN = "three_step_idempotent"
DUPLICATING = "three_step"


@dataclass
class SelftestReport:
    ok: bool
    run_dir: Path
    lines: list[str] = field(default_factory=list)


def default_scenario() -> Path:
    from chaos.envs import chaos_root

    return Path(chaos_root()) / "scenarios" / "selftest.yaml"


def check(results: RunResults, records: Iterable[TrialRecord]) -> tuple[bool, list[str]]:
    """Judge a self-test run from its results and trial records; returns (ok, one line per check)."""
    lines: list[str] = []
    ok = True

    def judge(cond: bool, text: str) -> None:
        nonlocal ok
        ok = ok and cond
        lines.append(("ok    " if cond else "FAIL  ") + text)

    by_workload = {c.workload: c for c in results.cells}
    judge(CLEAN in by_workload and DUPLICATING in by_workload, f"the scenario has a {CLEAN} cell and a {DUPLICATING} cell")
    sweep = [r for r in records if not r.trial_id.endswith("-dry")]
    sm = results.summary
    judge(
        bool(sweep) and all(r.valid and r.fault_fired for r in sweep),
        f"every trial valid with its fault fired ({sum(r.valid for r in sweep)}/{len(sweep)} valid)",
    )
    judge(
        sm.kills_unconfirmed == 0 and sm.kills_confirmed == len(sweep),
        f"every kill confirmed by the exit status ({sm.kills_confirmed}/{len(sweep)})",
    )
    clean = by_workload.get(CLEAN)
    if clean is not None:
        eo = next((v for v in clean.verdicts if v.property == "EO"), None)
        bad = [v.property for v in clean.verdicts if v.status == "violated"]
        judge(
            eo is not None and eo.status == "holds" and not bad,
            f"{CLEAN}: EO {eo.status if eo else 'missing'}, violated: {', '.join(bad) or 'none'} (no false duplicate)",
        )
    dup = by_workload.get(DUPLICATING)
    if dup is not None:
        eo = next((v for v in dup.verdicts if v.property == "EO"), None)
        judge(
            eo is not None and eo.status == "violated",
            f"{DUPLICATING}: EO {eo.status if eo else 'missing'} (the known duplicate is caught)",
        )
        effect_points = [p for p in dup.points if p.point.startswith("effect(task=")]
        judge(bool(effect_points), f"{DUPLICATING}: {len(effect_points)} effect boundaries swept")
        for p in effect_points:
            task = p.point[len("effect(task=") :].split(")")[0]
            recs = [r for r in sweep if r.cell_index == dup.cell_index and r.point == p.point]
            counts = [Counter(row["task"] for row in r.ledger).get(task, 0) for r in recs]
            judge(
                bool(counts) and all(n == 2 for n in counts),
                f"{DUPLICATING} killed at {p.point}: {task} fired {counts} times per repeat (2 every time)",
            )
    return ok, lines


def run_selftest(scenario: str | Path | None = None, *, out: Path = Path("reports"), trials: int | None = None) -> SelftestReport:
    from chaos.running.options import RunOptions
    from chaos.running.orchestrator import run_scenario
    from chaos.running.runfolder import load_run

    path = Path(scenario) if scenario is not None else default_scenario()
    if not path.exists():
        raise ChaosError(f"{path}: no self-test scenario there", hint="pass the path of scenarios/selftest.yaml")
    outcome = run_scenario(path, RunOptions(out=out, trials=trials))
    if outcome.interrupted:
        raise ChaosError(f"{outcome.run_dir}: the self-test was interrupted", hint="run it again")
    _, _, _, records, _ = load_run(outcome.run_dir)
    ok, lines = check(outcome.results, records)
    return SelftestReport(ok=ok, run_dir=outcome.run_dir, lines=lines)
