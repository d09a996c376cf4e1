"""``kill_sweep``: crash the run at every persistence boundary, resume in a fresh process -> EO, PC, liveness.

The whole sweep (``chaos.kinds.sweep``) over every boundary the dry run passes (or those naming
one of the scenario's ``kill_points``), ``trials`` repeats per point. At each kill point: EO (no
effect fires twice across the kill and the resume), PC (nothing the durable state recorded
complete at the kill runs again), liveness (the resume finishes the run or leaves it waiting for a
human).

What it needs from an adapter: ``run``, ``resume`` (none | input | command), ``inspect``
(completed_tasks, checkpoints, next, pending_interrupts) and persistence barriers. An adapter that
declares this kind lists EO, PC and LIVENESS in its ``properties``.
"""

from __future__ import annotations

from chaos.kinds.sweep import Sweep, SweepKind, sweep_checks

SWEEP = Sweep()


class KillSweep(SweepKind):
    sweep = SWEEP
    name = "kill_sweep"
    about = "crash at every persistence boundary, resume in a fresh process: does every effect fire once?"
    properties = SWEEP.properties
    checks = sweep_checks(SWEEP)
    title = "Kill-point sweep"


KIND = KillSweep()
