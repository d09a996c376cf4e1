"""Verdicts of the resume-contract kinds: pure functions from trial records to a ``CellResult``.

One module per kind (fork, stray, invalid, recovery), each ``analyze(cell, records)``. They share
``chaos.kinds.checking``'s helpers (``base_fields``, ``verdict``, ``combine``) and its rules: a property
with no valid trial behind it is ``unknown`` with the reason, never ``holds``.

``KIND_PROPERTIES`` says which properties a kind judges, so a cell whose target cannot run the
kind (or cannot judge a property) reports exactly those as ``unknown`` with the adapter's reason.
"""

from __future__ import annotations

KIND_PROPERTIES: dict[str, tuple[str, ...]] = {
    "race": ("CO", "LIVENESS"),
    "kill_sweep": ("EO", "PC", "LIVENESS"),
    "first_checkpoint": ("EO", "PC", "LIVENESS", "FCL"),
    "recovery_determinism": ("RD", "EO", "PC", "LIVENESS"),
    "fork": ("FD", "FI"),
    "invalid_state": ("CV",),
    "stray_resume": ("CO",),
}
