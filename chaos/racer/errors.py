"""Errors the user can act on.

Every error chaos raises on purpose is a ``ChaosError``: one line that names the file, field, host
or service at fault and says what to do. The CLI prints it without a traceback and exits 3
(the run itself failed). Anything else escaping is a bug in chaos.
"""

from __future__ import annotations


class ChaosError(Exception):
    """A failure of the run itself (bad input, environment): exit code 3."""

    exit_code = 3

    def __init__(self, message: str, *, hint: str | None = None):
        # one line, always: a message may quote user input that spans lines
        message = " ".join(message.splitlines()) if "\n" in message or "\r" in message else message
        self.message = message
        self.hint = hint
        super().__init__(message if not hint else f"{message} ({hint})")


class ScenarioError(ChaosError):
    """A scenario file that cannot be loaded: names the file, line and field."""


class TargetError(ChaosError):
    """An unknown framework or workload, or a workload factory that does not import."""


class EnvironmentProblem(ChaosError):
    """Something the run needs from the machine is missing (a folder, a service, a host)."""
