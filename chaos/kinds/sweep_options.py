"""The options of every sweep kind: how many crashes a trial holds, which recoveries are killed,
what a kill point does, and the bounds of the store (``kill_sweep``, ``first_checkpoint``,
``recovery_determinism``; ``chaos.kinds.sweep`` is their engine).

One options model for the sweep kinds, declared here so the sweep's helpers (``faults``,
``db_disconnect``, ``growth``, ``approval``) read it without importing the engine. The keys stay
flat in a scenario file (``crash_depth: 2``); the scenario model validates them through this model
and the rules of ``check`` (what a fault needs of the target and the placement), whatever the kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from chaos.kinds.base import KindOptions

if TYPE_CHECKING:
    from chaos.scenario.model import Scenario


class Bounds(BaseModel):
    """Limits on the store a sweep's uninterrupted run may reach (``SB``, ``chaos.kinds.growth``):
    a checkpoint or the thread bigger than its bound is a violation, with the sizes as evidence."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bytes_per_checkpoint: int | None = Field(
        None, ge=1, strict=True, description="the largest checkpoint of the thread (serialized, with its channel values)"
    )
    bytes_per_thread: int | None = Field(
        None, ge=1, strict=True, description="the thread's bytes in the store (its rows, where the saver exposes them)"
    )


def _depth(v: int) -> int:
    if v < 1:
        raise ValueError("crash_depth must be at least 1 (1: one kill and a resume; 2: the resume is killed too)")
    if v > 4:
        raise ValueError("crash_depth is at most 4 (points multiply with every level): narrow with recovery_kill_points")
    return v


def _filters(v: list[str]) -> list[str]:
    from chaos.scenario.model import kill_point_filters

    return kill_point_filters(v)


class SweepOptions(KindOptions):
    """What a sweep reads beyond the common fields (``kill_points`` and ``trials`` are common)."""

    refused_elsewhere: ClassVar[frozenset[str]] = frozenset({"crash_depth", "recovery_kill_points", "bounds", "crash_states"})

    crash_depth: Annotated[int, AfterValidator(_depth)] = Field(
        1,
        strict=True,
        description="sweeps: crashes per trial. 1: kill once, resume; 2: kill, then kill the resume at each of its own "
        "boundaries, resume again; n: n kills, each in the recovery of the one before",
    )
    recovery_kill_points: Annotated[list[str], AfterValidator(_filters)] = Field(
        default_factory=list,
        description="sweeps with crash_depth >= 2: only kill a recovery at boundaries whose name contains one of these (empty: all)",
    )
    fault: Literal["kill", "power_loss", "torn", "db_disconnect", "db_restart"] = Field(
        "kill",
        description="sweeps: what a kill point does. kill = SIGKILL (the page cache survives); power_loss = SIGKILL, then "
        "every write never fsynced is lost (the store lives on chaos's lazy filesystem); torn = the same, but a prefix of "
        "the last unsynced write persists; db_disconnect = no kill: the racer's own database connection is terminated "
        "there (pg_terminate_backend), then the racer continues (postgres, postgres_async); db_restart = with crash_depth: 2, "
        "the victim is killed at the first point, and the database is restarted under the recovery at its own boundary "
        "(its connections cut, reconnects refused until its first attempt), which then runs on and is judged (postgres)",
    )
    crash_states: Literal["kill", "recorded", "auto"] = Field(
        "kill",
        description="sweeps: how each kill point's crash state is made. kill = a victim runs to the point and is SIGKILLed "
        "there (one victim per point); recorded = one victim runs through every point, frozen at each while chaos copies "
        "the store's files and the ledger rows a SIGKILL there would leave (chaos.kinds.crash_states; with fault: power_loss or torn "
        "the lazy filesystem's durable image, chaos.kinds.durable_states); where that copy "
        "is not exact (a store behind a socket, a fault that kills nothing) the cell runs in kill mode, and points where two "
        "threads write at once run in kill mode (the rest recorded); results.json says why; auto = recorded where exact, else "
        "kill (results.json says which)",
    )
    bounds: Bounds | None = Field(
        None,
        description="sweeps: limits on the store the uninterrupted run may reach ({bytes_per_checkpoint, bytes_per_thread}); "
        "a checkpoint or thread above its bound is SB violated",
    )

    def check(self, scenario: Scenario) -> None:
        """What a fault other than a kill needs: a sweep, and a store it can reach."""
        from chaos.kinds import get_kind

        if self.fault == "kill":
            return
        if "fault" not in get_kind(scenario.kind).Options.model_fields:
            raise ValueError(f"fault {self.fault!r} applies to sweeps (a kill point then loses power); kind {scenario.kind!r} has none")
        target = scenario.target
        if self.fault == "db_restart":  # chaos.kinds.db_restart
            if target.backend not in ("postgres", "postgres_async", "postgres_pool"):  # a team's saver: backend 'saver'
                backend = target.backend
                raise ValueError(
                    f"fault 'db_restart' restarts the database under a recovering racer: backend {backend!r} has none; use backend postgres"
                )
            if self.crash_depth < 2:
                raise ValueError(
                    "fault 'db_restart' restarts the database during the recovery of a kill: set crash_depth: 2 (the kill at each "
                    "point, then the restart at each of the recovery's own boundaries; narrow them with recovery_kill_points)"
                )
            if scenario.racers.placement != "local":
                raise ValueError("fault 'db_restart' relays the recovering racer's connections on this machine: use placement: local")
            return
        if self.fault == "db_disconnect":  # chaos.kinds.db_disconnect
            from chaos.targets import get_target

            own = get_target(target.framework).cut_backends  # a server of the framework's own: it cuts them
            if target.backend not in ("postgres", "postgres_async", "postgres_pool", *own):  # a team's saver: backend 'saver'
                backend = target.backend
                raise ValueError(
                    f"fault 'db_disconnect' terminates the saver's database connection: backend {backend!r} has none; "
                    f"use backend {', '.join(('postgres', 'postgres_async', 'postgres_pool', *own))}"
                )
            if self.crash_depth > 1:
                raise ValueError("fault 'db_disconnect' is not supported with crash_depth > 1: use crash_depth: 1")
            return
        if scenario.racers.placement != "local":
            where = scenario.racers.placement if isinstance(scenario.racers.placement, str) else "hosts"
            raise ValueError(
                f"fault {self.fault!r} needs the store on chaos's lazy filesystem on this machine: placement {where!r} is "
                "not supported; use placement: local"
            )
        if self.crash_depth > 1:
            raise ValueError(f"fault {self.fault!r} is not supported with crash_depth {self.crash_depth} yet: use crash_depth: 1")
        if target.backend in ("postgres", "postgres_async", "postgres_pool"):
            raise ValueError(f"fault {self.fault!r} loses a local folder's unsynced writes: backend {target.backend!r} keeps none there")
