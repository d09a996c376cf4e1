"""Targets: one adapter per framework under test.

This module is the light half: what each target offers (backends, built-in workloads, the scenario
kinds and contract properties it supports), readable by the orchestrator without importing the
framework. The heavy half, ``chaos.targets.<framework>``, runs inside racers: it builds the
workload over an instrumented persistence layer and performs one action.

A racer-side adapter module provides ``open_session(spec, barrier, ledger) -> Session`` where a
Session has ``perform(action) -> dict``, ``inspect() -> dict`` and ``close()``. See
``chaos.targets.base``: it is the one contract for adapters (actions, outcome shapes, and what each
scenario kind needs).

Capabilities are declared here, statically: ``kinds`` the adapter can run, ``properties`` it can
judge, and ``unsupported`` maps every kind or property it cannot (or every framework feature it
lacks, e.g. ``"fork:explicit"``) to the reason. A cell of an unsupported kind still runs nothing and
reports every property ``unknown`` with that reason; a property not in ``properties`` is ``unknown``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class TargetInfo:
    framework: str
    module: str
    about: str
    backends: tuple[str, ...]
    workloads: dict[str, str]
    kinds: tuple[str, ...]
    distributions: tuple[str, ...]
    boundaries: str
    # contract properties the adapter can judge (EO PC FD CV CO RD FI LIVENESS FCL)
    properties: tuple[str, ...] = ()
    # kind / property / feature -> why it is not supported (reported as the ``unknown`` reason)
    unsupported: dict[str, str] = field(default_factory=dict)
    # backends whose state lives in the racer's process: a kind's phases then run in one racer
    in_process_backends: tuple[str, ...] = ("memory",)
    import_name: str = ""
    default_version: str = ""
    # requirement templates; "{version}" is replaced by the asked-for framework version
    pins: tuple[str, ...] = ()

    def supports(self, what: str) -> str | None:
        """None if ``what`` (a kind or property) is supported; else the reason it is not."""
        if what in self.kinds or what in self.properties:
            return None
        return self.unsupported.get(what) or f"the {self.framework} adapter does not declare {what!r}"

    def requirements(self, version: str | None = None) -> list[str]:
        v = version or self.default_version
        return [p.replace("{version}", v) for p in self.pins]


TARGETS: dict[str, TargetInfo] = {
    "langgraph": TargetInfo(
        framework="langgraph",
        module="chaos.targets.langgraph",
        about="LangGraph StateGraph over a checkpoint saver (durability sync/async/exit)",
        backends=("sqlite", "memory", "postgres"),
        workloads={
            "gate_after_interrupt": "pre -> gate (interrupt(), effect keyed by the resume value) -> end",
            "three_step": "a -> b -> c, one effect each",
            "three_step_idempotent": "three_step with idempotency-keyed effects (self-test: never duplicates)",
            "two_gates": "pre -> gate (interrupt) -> gate2 (interrupt) -> end: a thread consumed but not complete",
            "invalid_type": "a -> bad -> c, pydantic state; bad writes a str into count: int",
            "invalid_reducer": "a -> bad -> c, pydantic state; bad writes an int into a list-reduced channel",
            "functional_gate": "functional API: @entrypoint calling @task pre, interrupt(), @task gate(value), @task end",
            "functional_three_step": "functional API: @entrypoint calling @task a, b, c, one effect each",
        },
        kinds=("race", "kill_sweep", "first_checkpoint", "fork", "invalid_state", "stray_resume", "recovery_determinism"),
        properties=("EO", "PC", "FD", "CV", "CO", "RD", "FI", "LIVENESS", "FCL"),
        distributions=(
            "langgraph",
            "langgraph-checkpoint",
            "langgraph-checkpoint-sqlite",
            "langgraph-checkpoint-postgres",
        ),
        boundaries="put(step,source):before/after, put_writes(node,channels):before/after, effect(task):after",
        import_name="langgraph",
        default_version="1.2.24",
        pins=("langgraph=={version}", "langgraph-checkpoint-sqlite==3.1.2", "langgraph-checkpoint-postgres==3.2.0", "psycopg[binary]>=3.2,<4"),
    ),
}


def get_target(framework: str) -> TargetInfo:
    try:
        return TARGETS[framework]
    except KeyError:
        known = ", ".join(sorted(TARGETS))
        from chaos.errors import TargetError

        raise TargetError(f"unknown framework {framework!r}", hint=f"known frameworks: {known}") from None
