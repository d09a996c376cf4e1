"""Blame: whose fault a racer's failure is, so only the framework's can become a verdict.

Why: a racer that ends in an error is not evidence against the framework by itself. A verdict
(LIVENESS violated, a trial counted valid) may rest only on what the framework did. This module is
the one place that decides, from data the racer recorded (``ErrorInfo``: exception type, chain,
errno, the module of each traceback frame) and from the racer's exit status, which of four parties
a failure belongs to:

* ``framework``: the framework refused or raised its own error. A verdict: the trial stays valid.
* ``app``: an exception raised in the user's code (a node, a tool, the factory). The innermost
  traceback frame outside the standard library, neutral third-party libraries, the framework's
  packages and chaos's machinery is the user's; a framework's own exception class is still the
  framework's. The trial is ``unknown`` ("app error: TypeError in mygraph.py:42 (node): ...").
* ``environment``: the database connection was lost or terminated (psycopg ``OperationalError``,
  ``AdminShutdown``; a MySQL/MariaDB driver's error with a code of a server unreachable or gone,
  ``2003`` connection refused, ``2013`` lost, ``1927`` killed, not its deadlocks; or a call that left its workflow unfinished while the framework logged and
  retried failed connections, ``blame_stalled``: DBOS raises nothing when its database goes away), SQLite's disk errors, ``ENOSPC``/``EDQUOT``/``EIO``/``ENOMEM``,
  ``MemoryError``, or a racer killed by a signal chaos did not send (the OOM killer, an operator).
  The trial is ``unknown`` and is retried within the scenario's ``env_retries``; a full disk
  (``disk_full``: ``ENOSPC``/``EDQUOT``, SQLite's "database or disk is full", a racer with no room
  for its result) is no transient fault: it stops the run (exit 3) before the trial is journaled.
* ``harness``: a fault of chaos itself (its adapter or racer code raised). The trial is errored.
* ``injected``: the fault chaos injected on purpose (``chaos.workloads.EffectFault``: an effect that
  failed after doing its work), raised through the framework because nothing caught or retried it.
  Like chaos's own SIGKILL it is the trial's premise, not a fault: the trial stays valid.

A racer that fails without an error of its own to show (it exited without a result, or chaos's own
code raised) after one of its threads died of an unhandled exception (``background_errors``: a
framework's background saver, a thread the user's node started) is blamed on whoever owned that
thread, with its error as the evidence (``blame_after_background``); only when every such thread
was chaos's own does the failure stay the harness's.

What it promises: pure functions of recorded data (``chaos analyze`` re-blames a stored journal the
same way); a record without frames (an older journal) is blamed on the framework, as it was before.
"""

from __future__ import annotations

import errno as errno_codes
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from chaos.racer.protocol import ActionOutcome, ErrorInfo, FrameInfo
from chaos.targets import TARGETS

Party = Literal["framework", "app", "environment", "harness", "injected"]
Fault = Literal["app", "environment", "harness"]
"""A party whose failure makes a trial invalid (everything but the framework)."""


def framework_packages(framework: str) -> tuple[str, ...]:
    """The top-level modules whose frames are ``framework``'s own code: its ``TargetInfo.packages``
    (an unknown framework: its name)."""
    info = TARGETS.get(framework)
    return info.top_packages() if info is not None else (framework,)


_DB_MODULES = ("psycopg", "psycopg2", "psycopg_pool", "asyncpg")
_DB_ENV_TYPES = {
    "OperationalError",
    "AdminShutdown",
    "CrashShutdown",
    "CannotConnectNow",
    "ConnectionTimeout",
    "PoolTimeout",
    "DiskFull",
    "OutOfMemory",
    "InsufficientResources",
    "TooManyConnections",
}
# MySQL/MariaDB drivers (PyMySQL, aiomysql on it, mysqlclient, asyncmy): their OperationalError
# also carries refusals that are outcomes (1213 deadlock, 1205 lock wait timeout), so only the codes
# of a server that cannot be reached or went away are environment faults, as a lost Postgres is
_MYSQL_MODULES = ("pymysql", "aiomysql", "MySQLdb", "asyncmy")
_MYSQL_LOST = {
    1040: "too many connections",
    1053: "server shutdown in progress",
    1927: "connection was killed",
    2002: "can't connect through the socket",
    2003: "can't connect to the server",
    2006: "server has gone away",
    2013: "lost connection during query",
    2055: "lost connection",
    4031: "disconnected by the server",
}
_MYSQL_CODE = re.compile(r"\((\d{4}), ")
_SQLITE_ENV_MESSAGES = ("disk i/o error", "database or disk is full", "out of memory")
_ENV_ERRNOS = {errno_codes.ENOSPC, errno_codes.EDQUOT, errno_codes.EIO, errno_codes.ENOMEM}
_CHAOS_MACHINERY = ("chaos.racer", "chaos.targets", "chaos.forkserver")


@dataclass(frozen=True)
class Blame:
    """Who failed (``party``) and one line saying how, for the journal, the console and the report."""

    party: Party
    reason: str
    disk_full: bool = False  # an environment fault that is a full disk (ENOSPC, EDQUOT, SQLite's "full"): the run stops

    @property
    def fault(self) -> Fault | None:
        """The fault that makes the trial invalid, or None when the failure is the framework's (a verdict)
        or the fault chaos injected on purpose (the trial's premise)."""
        if self.party == "framework" or self.party == "injected":
            return None
        return self.party


def _top(module: str) -> str:
    return module.split(".", 1)[0]


def environment_cause(err: ErrorInfo) -> str | None:
    """Why ``err`` is an environment fault (lost database, full disk, no memory), or None."""
    types = list(err.get("chain") or [f"{err.get('module', '')}.{err.get('type', '')}"])
    for qual in types:
        module, _, name = qual.rpartition(".")
        if _top(module) in _DB_MODULES and name in _DB_ENV_TYPES:
            return f"database connection lost ({name})"
        if name == "MemoryError" and module == "builtins":
            return "out of memory (MemoryError)"
        if _top(module) in _MYSQL_MODULES and name in ("OperationalError", "InterfaceError"):
            lost = _mysql_lost(err)
            if lost is not None:
                return f"MySQL/MariaDB server connection lost ({lost})"
    message = (err.get("message") or "").lower()
    if err.get("type") in ("OperationalError", "DatabaseError") and err.get("module") == "sqlite3":
        hit = next((m for m in _SQLITE_ENV_MESSAGES if m in message), None)
        if hit:
            return f"SQLite: {hit}"
    code = err.get("errno")
    if code in _ENV_ERRNOS:
        return f"{errno_codes.errorcode.get(code or 0, code)} ({err.get('type')})"
    return None


def _mysql_lost(err: ErrorInfo) -> str | None:
    """The lost-server code of a MySQL driver's error (``(2003, "Can't connect ...")``, also inside
    SQLAlchemy's wrapper's message or the traceback), in words; None for any other code."""
    for text in (err.get("message") or "", err.get("traceback") or ""):
        for m in _MYSQL_CODE.finditer(text):
            code = int(m.group(1))
            if code in _MYSQL_LOST:
                return f"{code}: {_MYSQL_LOST[code]}"
    return None


_FULL_ERRNOS = {errno_codes.ENOSPC, errno_codes.EDQUOT}


def disk_full(err: ErrorInfo) -> bool:
    """Is ``err`` a full disk (``ENOSPC``/``EDQUOT``, SQLite's "database or disk is full")? Such a
    fault does not pass with a repeat: the run stops (exit 3) and a resume re-runs the trial."""
    if err.get("errno") in _FULL_ERRNOS:
        return True
    return err.get("module") == "sqlite3" and "database or disk is full" in (err.get("message") or "").lower()


def _is_neutral(frame: FrameInfo, framework: tuple[str, ...], user_tops: set[str]) -> bool:
    """A frame that blames no one: the standard library, or a third-party library that is neither
    the framework nor the user's (requests, pydantic, a database driver)."""
    module = frame.get("module") or ""
    top = _top(module)
    if not module or top in sys.stdlib_module_names or top == "builtins":
        return True
    if top in framework or top == "chaos" or top in user_tops:
        return False
    path = frame.get("file") or ""
    return "site-packages" in path or "dist-packages" in path or path.startswith("<")


def _side(frame: FrameInfo, framework: tuple[str, ...]) -> Literal["framework", "chaos", "context", "user"]:
    module = frame.get("module") or ""
    if _top(module) in framework:
        return "framework"
    if module.startswith(_CHAOS_MACHINERY) or module in ("chaos", "chaos.workloads", "__main__"):
        return "context" if module == "chaos.workloads" else "chaos"
    return "user"  # the user's modules, and chaos's built-in workloads (chaos.workloads.<framework>)


def _where(frame: FrameInfo) -> str:
    path = frame.get("file") or "?"
    short = path.rsplit("/", 1)[-1]
    return f"{short}:{frame.get('line')} ({frame.get('func')})"


INJECTED = ("chaos.workloads.EffectFault",)


def blame_error(err: ErrorInfo, framework: str, workload: str = "") -> Blame:
    """Whose fault a raised error is (see the module's docstring for the rules)."""
    text = f"{err.get('type')}: {(err.get('message') or '')[:300]}"
    if err.get("refused_by"):  # a guard's loud refusal (target.guard) after an effect fired: what the guard did, a verdict
        return Blame("framework", f"refused by guard {err['refused_by']}: {text}")
    if f"{err.get('module')}.{err.get('type')}" in INJECTED:
        return Blame("injected", f"the injected fault propagated: {text}")
    cause = environment_cause(err)
    if cause is not None:
        return Blame("environment", f"environment fault: {cause}: {text}", disk_full=disk_full(err))
    frames = err.get("frames")
    if not frames:
        return Blame("framework", text)
    fw = framework_packages(framework)
    user_tops = {_top(workload.split(":", 1)[0])} if ":" in workload else set()
    sides = [(f, _side(f, fw)) for f in reversed(frames) if not _is_neutral(f, fw, user_tops)]  # innermost first
    if not sides:
        return Blame("framework", text)
    inner, side = sides[0]
    user = next((f for f, s in sides if s == "user"), None)
    if side == "user":
        return Blame("app", f"app error: {err.get('type')} in {_where(inner)}: {(err.get('message') or '')[:300]}")
    if side == "framework":
        own = _top(err.get("module") or "") in fw
        if user is not None and not own:
            return Blame("app", f"app error: {err.get('type')} in {_where(user)}: {(err.get('message') or '')[:300]}")
        return Blame("framework", text)
    if side == "context" and user is not None:  # the user called ctx.* wrongly
        return Blame("app", f"app error: {err.get('type')} in {_where(user)}: {(err.get('message') or '')[:300]}")
    return Blame("harness", f"harness error: {text} at {_where(inner)}")


def blame_build(err: ErrorInfo, framework: str, workload: str = "") -> Blame:
    """Whose fault it is that a racer could not build its workload (``status: harness_error``):
    the environment's, chaos's, or otherwise the app's (the factory, or the graph it built)."""
    b = blame_error(err, framework, workload)
    if b.party == "framework":
        return Blame("app", f"app error: the workload could not be built: {err.get('type')}: {(err.get('message') or '')[:300]}")
    return b


def blame_after_background(errors: Iterable[ErrorInfo], framework: str, workload: str, then: str) -> Blame | None:
    """Whose fault a racer's failure is when threads of it died first (``errors``: its
    ``background_errors``, each with ``thread``; ``then``: how the racer failed after, e.g. "racer r0
    exited (code 1) without a result"). The first death that is not chaos's own names the party;
    None when no thread died or only chaos's own did."""
    for err in errors:
        b = blame_error(err, framework, workload)
        if b.party == "harness":
            continue
        thread = (err.get("thread") if isinstance(err, dict) else None) or "?"
        how = "framework error: " if b.party == "framework" else ""
        return Blame(b.party, f"{how}{b.reason} (it ended background thread {thread!r}); then {then}", disk_full=b.disk_full)
    return None


def blame_no_space(racer_id: str, code: int) -> Blame:
    """A racer that exited ``NO_SPACE_EXIT``: it did its work but had no room to write its result."""
    return Blame(
        "environment",
        f"environment fault: no space left on device: racer {racer_id} could not write its result (exit {code})",
        disk_full=True,
    )


def blame_signal(signal: int) -> Blame:
    """A racer that died of a signal chaos did not send: the OOM killer, an operator, a cleaner."""
    return Blame("environment", f"environment fault: killed by signal {signal}, not by chaos")


def blame_stalled(outcome: ActionOutcome) -> Blame | None:
    """A call that raised nothing yet left its workflow unfinished (``stalled``) while the framework
    logged and retried failed database connections (DBOS's ``db_retry``): the lost database, not
    the framework, is why it did not finish, unless chaos planned the outage (``fault: db_restart``
    puts the racer in ``TrialRun.measures_env``). None for any other outcome."""
    errors = outcome.get("connection_errors") or []
    if not outcome.get("stalled") or not errors:
        return None
    first = " ".join(errors[0].split())[:200]
    return Blame(
        "environment",
        f"environment fault: database connection lost: the framework retried {len(errors)}{'+' if len(errors) >= 20 else ''} "
        f"failed connection(s) and the workflow did not finish (first: {first})",
    )


FAULT_ORDER: tuple[Fault, ...] = ("environment", "harness", "app")


def worst(blames: Iterable[Blame]) -> Blame | None:
    """The fault that decides a trial's validity: an environment fault first (what followed it may be
    its consequence), then a harness fault, then an app error; None if every failure was the framework's."""
    faults = [b for b in blames if b.fault is not None]
    for party in FAULT_ORDER:
        hit = next((b for b in faults if b.party == party), None)
        if hit is not None:
            return hit
    return None
