"""The run journal: crash-safe append of trial records, one JSON line each.

Each line is written whole, flushed and fsynced before the next trial starts, so a crash of the
orchestrator loses at most the trial in flight. On reading, a torn last line (no newline, or not
JSON) is detected and dropped, never parsed as a result; a bad line in the middle is an error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

from chaos.errors import ChaosError


class Journal:
    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def append(self, record: dict) -> None:
        line = (json.dumps(record, separators=(",", ":"), default=repr) + "\n").encode()
        os.write(self._fd, line)
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def read_journal(path: str | os.PathLike) -> tuple[list[dict], bool]:
    """The records in ``path`` and whether a torn last line was dropped."""
    data = Path(path).read_bytes() if Path(path).exists() else b""
    records: list[dict] = []
    torn = False
    lines = data.split(b"\n")
    for i, raw in enumerate(lines):
        if not raw.strip():
            continue
        last = i == len(lines) - 1  # no newline after it: the write did not finish
        try:
            obj = json.loads(raw)
            if not isinstance(obj, dict):
                raise ValueError("not an object")
        except ValueError:
            if last:
                torn = True
                continue
            raise ChaosError(f"{path}:{i + 1}: journal line is not a JSON record", hint="the journal is damaged")
        if last:
            torn = True  # complete JSON but never terminated: treat as torn, do not trust it
            continue
        records.append(obj)
    return records, torn


def iter_trials(path: str | os.PathLike) -> Iterator[dict]:
    records, _ = read_journal(path)
    return iter(records)
