"""Helpers for the framework adapter tests: find cells, verdicts and kill points in results.

Each framework's racers run in its own environment (``chaos.envs.python_for``; ``.ci/envs.sh``
builds them before the tests, a first local run builds them on demand). Scenarios in these tests
are cut down with ``kill_points`` to the points that tell the story, so the set stays lean.
"""

from __future__ import annotations

from chaos.records import CellResult, PointResult, RunResults, Verdict


def cell(results: RunResults, cell_id: str = "default") -> CellResult:
    return next(c for c in results.cells if c.cell_id == cell_id)


def verdict(c: CellResult, prop: str) -> Verdict:
    return next(v for v in c.verdicts if v.property == prop)


def point(c: CellResult, prefix: str) -> PointResult:
    return next(p for p in c.points if p.point.startswith(prefix))


def point_verdict(c: CellResult, prefix: str, prop: str) -> Verdict:
    return next(v for v in point(c, prefix).verdicts if v.property == prop)


def pause_answers(framework: str, kind: str, *, seed: int, trials: int = 1, k: int | None = None) -> str:
    """A scenario in which a paused run (``gate_after_interrupt``, file-backed) is answered ``true``:
    by ``k`` racers at once (``race``) or once more after it completed (``stray_resume``)."""
    racers = f"racers: {{k: {k}}}\n" if k else ""
    return (
        f"name: {framework}_{kind}\nkind: {kind}\ntarget: {{framework: {framework}, backend: file}}\n"
        f'workload: gate_after_interrupt\nresume: "command:true"\n{racers}trials: {trials}\nseed: {seed}\ntimeout_s: 60\n'
    )


def tampered_state(framework: str) -> str:
    """A scenario in which a step writes a value its state's schema forbids (``invalid_type``,
    file-backed, run once and continued in a fresh process): ``invalid_state`` asks whether the
    framework refuses it loudly or saves it."""
    return (
        f"name: {framework}_invalid\nkind: invalid_state\ntarget: {{framework: {framework}, backend: file}}\n"
        "workload: invalid_type\nresume: none\ntrials: 1\nseed: 3\ntimeout_s: 60\n"
    )
