"""The one-line reason a run (or any chaos command) failed, from the exception that ended it.

Why: a run that stops on a full disk, a lost database or a bug in chaos must say so in one line,
the same line on the terminal (``chaos.cli.failures``) and in run.json's ``failed`` field
(``chaos.running.execution``), and never as a traceback or a verdict. ``describe`` words it:
what failed (the file, the database, the internal error) and what to do, secrets masked;
``RunFailed`` is the error a run that stopped that way raises (public as ``chaos.errors.RunFailed``).
"""

from __future__ import annotations

import errno
import sqlite3

from chaos.racer.errors import ChaosError
from chaos.racer.redact import redact


class RunFailed(ChaosError):
    """The run stopped on a fault outside the framework (disk, database, a bug in chaos); the
    message names it, what the run folder kept, and how to continue."""


_OS_HINTS = {
    errno.ENOSPC: "free space on that file system (or pass --out / --work-in elsewhere)",
    errno.EDQUOT: "free space within your quota (or pass --out / --work-in elsewhere)",
    errno.EROFS: "that file system is read-only: pass --out / --work-in to a writable folder",
    errno.EACCES: "check the folder's permissions, or pass --out / --work-in elsewhere",
    errno.EPERM: "check the folder's permissions, or pass --out / --work-in elsewhere",
    errno.ENOTDIR: "a path component is a file, not a folder",
    errno.ENOENT: "the folder disappeared while chaos was using it",
    errno.EMFILE: "too many open files: raise `ulimit -n`",
    errno.ENOMEM: "the machine ran out of memory",
}


def _is_database_error(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.Error):
        return True
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a dependency of the postgres backend only
        return False
    return isinstance(exc, psycopg.Error)


def describe(exc: BaseException) -> str:
    """One line naming what failed and what to do, secrets masked (never a traceback)."""
    if isinstance(exc, ChaosError):
        text = str(exc)
    elif isinstance(exc, OSError):
        what = exc.strerror or str(exc) or type(exc).__name__
        where = f"{exc.filename}: " if exc.filename else ""
        hint = _OS_HINTS.get(exc.errno or -1)
        text = f"{where}{what}" + (f" ({hint})" if hint else "")
    elif _is_database_error(exc):
        first = (str(exc).strip().splitlines() or [""])[0]
        text = f"database error ({type(exc).__name__}): {first}; check that the database is up and reachable, then resume the run"
    elif isinstance(exc, MemoryError):
        text = "out of memory (the machine ran out of memory; free some or run fewer racers)"
    else:
        first = (str(exc).strip().splitlines() or [""])[0]
        text = f"internal error ({type(exc).__name__}: {first}): a bug in chaos; rerun with --debug and report the traceback"
    return redact(" ".join(text.split()))
