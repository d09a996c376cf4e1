"""Night folders on disk: which folders under an output folder are nights, in what order.

Why: a nightly compares tonight with the previous night, and a sharded nightly balances its cells
by the timings an earlier night measured (``chaos.running.shard``); both must agree on what a
night folder is. It is named ``<date>`` or ``<date>-<n>`` (a second night on one day), it has a
summary.json once it finished, and a shard's part of a night (it holds ``shard.json``,
``PLAN``) is never a night of its own.
"""

from __future__ import annotations

import re
from pathlib import Path

NIGHT_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:-(\d+))?$")
PLAN = "shard.json"  # a shard's plan (``chaos.running.shard.ShardPlan``), in its part of a night


def night_key(name: str) -> tuple[str, int] | None:
    """(date, n) of a night folder's name; None for a name that is not a night's."""
    m = NIGHT_RE.match(name)
    return (m.group(1), int(m.group(2) or 1)) if m else None


def night_order(name: str) -> tuple[str, int]:
    """Where a folder sorts among nights (a name that is not a night's sorts first)."""
    return night_key(name) or ("", 0)


def nights(out: Path) -> list[Path]:
    """Night folders under ``out`` that hold a summary, oldest first (a shard's folder is part of a
    night, not one: it is never the previous night)."""
    if not Path(out).is_dir():
        return []
    found = [
        d for d in Path(out).iterdir() if d.is_dir() and night_key(d.name) and (d / "summary.json").exists() and not (d / PLAN).exists()
    ]
    return sorted(found, key=lambda d: night_order(d.name))


def earlier_nights(night_dir: Path) -> list[Path]:
    """The finished nights before ``night_dir`` beside it, oldest first."""
    key = night_order(night_dir.name)
    return [d for d in nights(night_dir.parent) if d != night_dir and night_order(d.name) < key]


def previous_night(night_dir: Path) -> Path | None:
    """The newest finished night before ``night_dir`` beside it (None: it is the first)."""
    earlier = earlier_nights(night_dir)
    return earlier[-1] if earlier else None
