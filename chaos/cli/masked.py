"""The terminal as chaos writes to it: every line masked (``chaos.racer.redact``) on its way out.

Why: a run prints what it found (cell ids, reasons, app errors, the baseline, dead runs it cleaned),
and any of it can quote a secret the user's workload or scenario carried. Masking each message
where it is printed missed some; the CLI's consoles write through ``MaskedStream`` instead, so a
new message is masked without asking for it. The stream is looked up at each write (``sys.stdout``
or ``sys.stderr``), so a caller that swaps them (pytest's capture) still gets the output.
"""

from __future__ import annotations

import io
import sys
from typing import IO, TextIO, cast

from chaos.racer.redact import redact


class MaskedStream(io.TextIOBase):
    """``sys.stdout`` (or ``sys.stderr``) with secrets masked in everything written to it."""

    def __init__(self, stderr: bool = False):
        super().__init__()
        self._stderr = stderr

    @property
    def stream(self) -> TextIO:
        return sys.stderr if self._stderr else sys.stdout

    def write(self, text: str) -> int:
        self.stream.write(redact(text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    # io.TextIOBase declares encoding a plain attribute; here it is the wrapped stream's, read each time
    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", None) or "utf-8"


def masked(stderr: bool = False) -> IO[str]:
    """A masked ``sys.stdout`` (or ``sys.stderr``), typed as the file a ``rich`` console writes to."""
    return cast(IO[str], MaskedStream(stderr))
