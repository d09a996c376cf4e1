"""Ctrl-C and SIGTERM while a run (or a night of runs) executes: stop once, cleanly.

Why: a signal that lands between journaling a trial and counting it, or in the middle of reaping
racers, would leave a run folder that says less than it measured, or racers behind. So a run
arms the handler only where stopping is safe (between trials, ``chaos.running.execution``) and
disarms it while it appends to the journal and while it cleans up.

What it promises: inside ``stop_on_signals()`` the first SIGTERM or SIGINT that arrives while
``SignalState.armed`` raises ``Interrupted`` (and disarms); every signal, armed or not, is noted in
``SignalState.received`` (run.json records them) and otherwise ignored. The previous handlers are
restored on exit. ``chaos.running.nightly`` uses the same between the runs of a night.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import FrameType


class Interrupted(Exception):
    """SIGTERM or SIGINT reached the orchestrator."""


@dataclass
class SignalState:
    """The signals received so far (their names), and whether the next one may raise."""

    received: list[str] = field(default_factory=list)
    armed: bool = True


@contextlib.contextmanager
def stop_on_signals() -> Iterator[SignalState]:
    """SIGTERM/SIGINT raise ``Interrupted`` once, while trials run; later ones (and any after the
    trials ended) are noted and ignored, so the cleanup the first one starts (reaping racers,
    writing results) is not itself cut short."""
    state = SignalState()

    def handler(signum: int, frame: FrameType | None) -> None:
        state.received.append(signal.Signals(signum).name)
        if state.armed and len(state.received) == 1:
            state.armed = False
            raise Interrupted(state.received[0])

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield state
    finally:
        for s, h in old.items():
            signal.signal(s, h)
